import Foundation

/// Byte strings kept end to end in one buffer, for a check that holds one per object (an index
/// entry each): an array per string, in a set, was most of a large check's time and memory.
struct ByteStrings {
    private var bytes: [UInt8] = []
    /// Where each string ends in `bytes`; string `i` starts where string `i - 1` ends.
    private var ends: [Int] = []
    /// No string so far sorts before the one before it: an index scanned in its order needs
    /// no sort.
    private var inOrder = true

    var count: Int { ends.count }

    mutating func append(_ s: UnsafeRawBufferPointer) {
        bytes.append(contentsOf: s)
        appended()
    }

    /// Appends the string `build` writes at the end of the buffer.
    mutating func append(_ build: (inout [UInt8]) -> Void) {
        build(&bytes)
        appended()
    }

    private mutating func appended() {
        ends.append(bytes.count)
        let n = ends.count
        guard inOrder, n >= 2 else { return }
        inOrder = bytes.withUnsafeBytes { r in ByteStrings.compare(r, range(n - 2), r, range(n - 1)) <= 0 }
    }

    /// Each string as `transform` cuts it (to a part of itself).
    func mapped(_ transform: (UnsafeRawBufferPointer) -> UnsafeRawBufferPointer) -> ByteStrings {
        var out = ByteStrings()
        bytes.withUnsafeBytes { r in
            for i in 0..<count { out.append(transform(UnsafeRawBufferPointer(rebasing: r[range(i)]))) }
        }
        return out
    }

    /// How many strings of `a` and of `b` the other lacks, counting repeats (a multiset
    /// difference each way).
    static func differences(_ a: ByteStrings, _ b: ByteStrings) -> (onlyInA: Int, onlyInB: Int) {
        a.bytes.withUnsafeBytes { ra in
            b.bytes.withUnsafeBytes { rb in
                let oa = a.sortedOrder(ra), ob = b.sortedOrder(rb)
                var i = 0, j = 0, onlyA = 0, onlyB = 0
                while i < oa.count && j < ob.count {
                    let c = compare(ra, a.range(oa[i]), rb, b.range(ob[j]))
                    if c < 0 {
                        onlyA += 1
                        i += 1
                    } else if c > 0 {
                        onlyB += 1
                        j += 1
                    } else {
                        i += 1
                        j += 1
                    }
                }
                return (onlyA + oa.count - i, onlyB + ob.count - j)
            }
        }
    }

    /// How many strings equal another one before them.
    var repeats: Int {
        bytes.withUnsafeBytes { r in
            let o = sortedOrder(r)
            return o.indices.dropFirst().filter { ByteStrings.compare(r, range(o[$0 - 1]), r, range(o[$0])) == 0 }.count
        }
    }

    private func range(_ i: Int) -> Range<Int> { (i == 0 ? 0 : ends[i - 1])..<ends[i] }

    /// The strings' positions in byte order (a string before any longer one it begins).
    private func sortedOrder(_ r: UnsafeRawBufferPointer) -> [Int] {
        var order = Array(0..<count)
        if inOrder { return order }
        order.sort { ByteStrings.compare(r, range($0), r, range($1)) < 0 }
        return order
    }

    private static func compare(
        _ ra: UnsafeRawBufferPointer, _ a: Range<Int>, _ rb: UnsafeRawBufferPointer, _ b: Range<Int>
    ) -> Int {
        let n = min(a.count, b.count)
        if n > 0 {
            let c = memcmp(ra.baseAddress! + a.lowerBound, rb.baseAddress! + b.lowerBound, n)
            if c != 0 { return Int(c) }
        }
        return a.count - b.count
    }
}

/// One backlink as a check counts it: `origin`'s property `pid` of class `cid` links to
/// `target` (of the class whose facts these are), as many times as its count says.
struct BacklinkFact: Comparable {
    let target: Int64
    let cid: UInt32
    let pid: UInt32
    let origin: Int64

    static func < (a: BacklinkFact, b: BacklinkFact) -> Bool {
        (a.target, a.cid, a.pid, a.origin) < (b.target, b.cid, b.pid, b.origin)
    }
}

/// Backlinks with their multiplicities, sorted, each once: what a class's links imply, or what
/// its rows and `fief/b` keep. Flat values, not a dictionary keyed by byte arrays.
struct BacklinkCounts {
    private(set) var facts: [(fact: BacklinkFact, count: Int64)] = []
    private var sorted = true

    mutating func add(_ f: BacklinkFact, _ count: Int64) {
        if let last = facts.last, !(last.fact < f) { sorted = false }
        facts.append((f, count))
    }

    /// Sorted, with the counts of a fact added more than once summed.
    mutating func settle() {
        guard !sorted else { return }
        facts.sort { $0.fact < $1.fact }
        var out: [(fact: BacklinkFact, count: Int64)] = []
        out.reserveCapacity(facts.count)
        for e in facts {
            if let last = out.last, last.fact == e.fact {
                out[out.count - 1].count &+= e.count
            } else {
                out.append(e)
            }
        }
        facts = out
        sorted = true
    }

    /// `rows` and `table` kept together: where both keep a fact, the table's count stands (both
    /// say it; `both` counts them, a problem of its own).
    static func union(_ rows: BacklinkCounts, _ table: BacklinkCounts) -> (BacklinkCounts, both: Int) {
        var r = rows, t = table
        r.settle()
        t.settle()
        var out = BacklinkCounts()
        var i = 0, j = 0, both = 0
        while i < r.facts.count || j < t.facts.count {
            if j == t.facts.count || (i < r.facts.count && r.facts[i].fact < t.facts[j].fact) {
                out.facts.append(r.facts[i])
                i += 1
            } else if i == r.facts.count || t.facts[j].fact < r.facts[i].fact {
                out.facts.append(t.facts[j])
                j += 1
            } else {
                both += 1
                out.facts.append(t.facts[j])
                i += 1
                j += 1
            }
        }
        return (out, both)
    }

    /// Facts of `found` that `want` lacks or counts otherwise (stale), and the reverse
    /// (missing). Both must be settled.
    static func differences(found: BacklinkCounts, want: BacklinkCounts) -> (stale: Int, missing: Int) {
        assert(found.sorted && want.sorted, "differences of unsettled backlink counts")
        let f = found.facts, w = want.facts
        var i = 0, j = 0, stale = 0, missing = 0
        while i < f.count && j < w.count {
            if f[i].fact < w[j].fact {
                stale += 1
                i += 1
            } else if w[j].fact < f[i].fact {
                missing += 1
                j += 1
            } else {
                if f[i].count != w[j].count {
                    stale += 1
                    missing += 1
                }
                i += 1
                j += 1
            }
        }
        return (stale + f.count - i, missing + w.count - j)
    }
}
