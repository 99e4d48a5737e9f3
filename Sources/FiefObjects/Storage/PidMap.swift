/// An object's values (or list elements, or row bytes) by property id. A dictionary hashed
/// every pid with SipHash on each read and write, several times per property of every object
/// an insert stores (hashing and probing took a tenth of an object load's instructions,
/// `valgrind --tool=cachegrind`); an object has a handful of properties, kept here sorted by
/// pid in one short array (two, keys apart from values, cost two allocations per map, and an
/// insert makes two maps per object).
/// Spelled and used as a dictionary: a literal, `map[pid]`, `for (pid, value) in map`.
struct PidMap<Value> {
    struct Entry {
        let pid: UInt32
        var value: Value
    }
    private var entries: [Entry] = []

    init() {}

    var isEmpty: Bool { entries.isEmpty }
    var count: Int { entries.count }

    mutating func reserveCapacity(_ n: Int) { entries.reserveCapacity(n) }

    /// Empties the map, keeping its storage for the next object's values. One by one from the
    /// end: `removeAll(keepingCapacity:)` went through the generic `replaceSubrange`, about
    /// 300 instructions for an object's few values.
    mutating func removeAll() {
        while !entries.isEmpty { entries.removeLast() }
    }

    /// Whether `pid` has a value, which is not copied out to tell (an array's retain and
    /// release).
    func contains(_ pid: UInt32) -> Bool {
        let i = position(of: pid)
        return i < entries.count && entries[i].pid == pid
    }

    subscript(pid: UInt32) -> Value? {
        get {
            let i = position(of: pid)
            return i < entries.count && entries[i].pid == pid ? entries[i].value : nil
        }
        set {
            let i = position(of: pid)
            if i < entries.count && entries[i].pid == pid {
                if let newValue {
                    entries[i].value = newValue
                } else {
                    entries.remove(at: i)
                }
            } else if let newValue {
                if i == entries.count {
                    entries.append(Entry(pid: pid, value: newValue))
                } else {
                    entries.insert(Entry(pid: pid, value: newValue), at: i)
                }
            }
        }
    }

    /// Sets `pid` to `value`, moved in: values set in pid order (an object's, read from its
    /// wrappers) are appended without the copy the subscript's setter made.
    mutating func set(_ pid: UInt32, _ value: consuming Value) {
        if let last = entries.last, last.pid >= pid {
            self[pid] = value
            return
        }
        entries.append(Entry(pid: pid, value: value))
    }

    /// The value of `pid` lent to `body` in place, not copied out (a string's retain and
    /// release for each value read); nil, not calling `body`, when there is none. For lookups
    /// that come in pid order: `hint` is where the last one ended, so a value in step is one
    /// comparison, not a binary search. The value is lent as it is, not as an optional: made
    /// optional for `body`, it was copied.
    @inline(__always)
    func lend<R>(_ pid: UInt32, hint: inout Int, _ body: (Value) throws -> R) rethrows -> R? {
        var i = hint
        if !(i < entries.count && entries[i].pid == pid) {
            i = position(of: pid)
            guard i < entries.count, entries[i].pid == pid else { return nil }
        }
        hint = i + 1
        return try entries.withUnsafeBufferPointer { try body($0[i].value) }
    }

    /// The pid of the first value, in pid order, for which `test` holds; each value is lent,
    /// not copied (a string's retain and release per value).
    func firstPid(where test: (UInt32, Value) -> Bool) -> UInt32? {
        for i in entries.indices where test(entries[i].pid, entries[i].value) { return entries[i].pid }
        return nil
    }

    /// Where `pid` is or would go. Values mostly arrive in pid order, so an insert appends.
    @inline(__always)
    private func position(of pid: UInt32) -> Int {
        if let last = entries.last, last.pid < pid { return entries.count }
        var lo = 0, hi = entries.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if entries[mid].pid < pid { lo = mid + 1 } else { hi = mid }
        }
        return lo
    }
}

extension PidMap: Sequence {
    func makeIterator() -> some IteratorProtocol<(key: UInt32, value: Value)> {
        entries.lazy.map { (key: $0.pid, value: $0.value) }.makeIterator()
    }
}

extension PidMap: ExpressibleByDictionaryLiteral {
    init(dictionaryLiteral elements: (UInt32, Value)...) {
        for (k, v) in elements { self[k] = v }
    }
}

extension PidMap.Entry: Equatable where Value: Equatable {}
extension PidMap: Equatable where Value: Equatable {}
