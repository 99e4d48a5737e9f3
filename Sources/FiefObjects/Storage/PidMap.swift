/// An object's values (or list elements, or row bytes) by property id. A dictionary hashed
/// every pid with SipHash on each read and write, several times per property of every object
/// an insert stores (hashing and probing took a tenth of an object load's instructions,
/// `valgrind --tool=cachegrind`); an object has a handful of properties, kept here sorted by
/// pid in two short arrays, which took 4 % off the load.
/// Spelled and used as a dictionary: a literal, `map[pid]`, `for (pid, value) in map`.
struct PidMap<Value> {
    private(set) var keys: [UInt32] = []
    private var stored: [Value] = []

    init() {}

    var isEmpty: Bool { keys.isEmpty }
    var count: Int { keys.count }

    mutating func reserveCapacity(_ n: Int) {
        keys.reserveCapacity(n)
        stored.reserveCapacity(n)
    }

    subscript(pid: UInt32) -> Value? {
        get {
            let i = position(of: pid)
            return i < keys.count && keys[i] == pid ? stored[i] : nil
        }
        set {
            let i = position(of: pid)
            if i < keys.count && keys[i] == pid {
                if let newValue {
                    stored[i] = newValue
                } else {
                    keys.remove(at: i)
                    stored.remove(at: i)
                }
            } else if let newValue {
                if i == keys.count {
                    keys.append(pid)
                    stored.append(newValue)
                } else {
                    keys.insert(pid, at: i)
                    stored.insert(newValue, at: i)
                }
            }
        }
    }

    /// Where `pid` is or would go. Values mostly arrive in pid order, so an insert appends.
    @inline(__always)
    private func position(of pid: UInt32) -> Int {
        if let last = keys.last, last < pid { return keys.count }
        var lo = 0, hi = keys.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if keys[mid] < pid { lo = mid + 1 } else { hi = mid }
        }
        return lo
    }
}

extension PidMap: Sequence {
    func makeIterator() -> some IteratorProtocol<(key: UInt32, value: Value)> {
        zip(keys, stored).lazy.map { (key: $0, value: $1) }.makeIterator()
    }
}

extension PidMap: ExpressibleByDictionaryLiteral {
    init(dictionaryLiteral elements: (UInt32, Value)...) {
        for (k, v) in elements { self[k] = v }
    }
}

extension PidMap: Equatable where Value: Equatable {}
