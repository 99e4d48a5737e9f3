import Engine

/// Index keys an insert adds, held back until the index is next read or changed (or the write
/// flushes) and then put in key order: a bulk load's random names, sorted, fill the index's
/// leaves left to right. The keys sit end to end in one buffer and are sorted as fixed-size
/// entries (their first 8 bytes, big-endian, then a full compare on a tie), so a sort of 200K
/// keys moves no arrays and retains nothing.
struct PendingIndexEntries {
    private var bytes: [UInt8] = []
    private var entries: [Entry] = []

    var isEmpty: Bool { entries.isEmpty }

    /// Fewer keys than this are put one by one, more are appended when they can be.
    static let appendRun = 8

    mutating func append(_ key: [UInt8]) {
        let start = bytes.count
        bytes.append(contentsOf: key)
        noteEntry(from: start)
    }

    /// The entry of `value` for object `key` (`KeyBytes.indexEntry`), written here directly.
    mutating func append(value: ObjectValue, key: Int64, compact: Bool) {
        let start = bytes.count
        KeyBytes.appendIndexValue(value, to: &bytes)
        KeyBytes.appendEntryKey(key, compact: compact, to: &bytes)
        noteEntry(from: start)
    }

    /// The bytes from `start` to the end are one more entry.
    private mutating func noteEntry(from start: Int) {
        var prefix: UInt64 = 0
        for i in start..<start + 8 { prefix = prefix << 8 | UInt64(i < bytes.count ? bytes[i] : 0) }
        entries.append((prefix, UInt32(start), UInt32(bytes.count - start)))
    }

    /// Puts every key into index table `t` in key order: appended (no search, leaves split at
    /// their ends) when they all sort after the keys the index holds, as in a load. A few keys
    /// are just put: the index's last key costs a descent of its own, as much as a put (a
    /// one-object write paid it on every index).
    func apply(to t: String, in w: WriteTransaction) throws {
        if entries.count < PendingIndexEntries.appendRun {
            return try inKeyOrder { try w.put(table: t, keyBytes: $0, value: []) }
        }
        var last = try w.lastKey(table: t)
        var appending = true
        var previous = UnsafeRawBufferPointer(start: nil, count: 0)
        try inKeyOrder { k in
            // The first key decides: the rest sort after it.
            if let l = last {
                appending = l.withUnsafeBytes { compareBytes(k, $0) > 0 }
                last = nil
            }
            // The same entry twice is one entry (as a second put of it would be).
            if appending, previous.baseAddress != nil, compareBytes(k, previous) == 0 { return }
            if appending {
                try w.append(table: t, keyBytes: k, value: [])
            } else {
                try w.put(table: t, keyBytes: k, value: [])
            }
            previous = k
        }
    }

    /// Hands `body` every key, in `compareBytes` order; each is valid only during its call.
    func inKeyOrder(_ body: (UnsafeRawBufferPointer) throws -> Void) rethrows {
        try bytes.withUnsafeBytes { raw in
            func key(_ e: Entry) -> UnsafeRawBufferPointer {
                UnsafeRawBufferPointer(rebasing: raw[Int(e.offset)..<Int(e.offset + e.length)])
            }
            let byKey = { (a: Entry, b: Entry) in
                a.prefix != b.prefix ? a.prefix < b.prefix : compareBytes(key(a), key(b)) < 0
            }
            for e in PendingIndexEntries.sorted(entries, byKey) { try body(key(e)) }
        }
    }

    private typealias Entry = (prefix: UInt64, offset: UInt32, length: UInt32)

    /// `entries` in key order, stably: a radix sort on the prefixes, a byte at a time from the
    /// last (a byte every prefix shares is passed over), then each run of equal prefixes sorted
    /// by `byKey`. A comparison sort of them all through the closure took 450 instructions a
    /// key for a load's 20K names. A few are just sorted.
    private static func sorted(_ entries: [Entry], _ byKey: (Entry, Entry) -> Bool) -> [Entry] {
        guard entries.count >= 64 else { return entries.sorted(by: byKey) }
        // The bits some prefixes differ in: only their bytes need a pass.
        var all = UInt64.max, any: UInt64 = 0
        for e in entries { (all, any) = (all & e.prefix, any | e.prefix) }
        let differ = all ^ any
        var from = entries
        var to = [Entry](unsafeUninitializedCapacity: entries.count) { $1 = entries.count }
        var counts = [Int](repeating: 0, count: 256)
        for shift in stride(from: UInt64(0), to: 64, by: 8) where (differ >> shift) & 0xFF != 0 {
            from.withUnsafeBufferPointer { src in
                to.withUnsafeMutableBufferPointer { dst in
                    counts.withUnsafeMutableBufferPointer { c in
                        for i in 0..<256 { c[i] = 0 }
                        for e in src { c[Int(truncatingIfNeeded: e.prefix >> shift) & 0xFF] &+= 1 }
                        var sum = 0
                        for i in 0..<256 { (c[i], sum) = (sum, sum &+ c[i]) }
                        for e in src {
                            let d = Int(truncatingIfNeeded: e.prefix >> shift) & 0xFF
                            dst[c[d]] = e
                            c[d] &+= 1
                        }
                    }
                }
            }
            swap(&from, &to)
        }
        from.withUnsafeMutableBufferPointer { b in
            var i = 0
            while i < b.count {
                var j = i + 1
                while j < b.count && b[j].prefix == b[i].prefix { j += 1 }
                if j - i > 16 {
                    b[i..<j].sort(by: byKey)
                } else if j - i > 1 {
                    // A few (a name given twice): by insertion, in place.
                    for k in (i + 1)..<j {
                        let e = b[k]
                        var m = k
                        while m > i && byKey(e, b[m - 1]) {
                            b[m] = b[m - 1]
                            m -= 1
                        }
                        b[m] = e
                    }
                }
                i = j
            }
        }
        return from
    }
}

/// The pending entries of each index table a write inserted into, searched by name: a write
/// touches a few index tables, and hashing the table's name cost more than the comparisons
/// (the names handed in are the plan's own strings, so an equal one matches at once).
struct PendingIndexes {
    private var tables: [(name: String, entries: PendingIndexEntries)] = []

    var isEmpty: Bool { tables.isEmpty }
    var names: [String] { tables.map(\.name) }

    /// The entry of `value` for object `key`, written into the table's buffer (no array of
    /// its own).
    mutating func append(value: ObjectValue, key: Int64, compact: Bool, to table: String) {
        // The position found first: found inside the subscript, it made the access copy the
        // table's entries (every key pending) for each one appended.
        let i = position(of: table)
        tables[i].entries.append(value: value, key: key, compact: compact)
    }

    private mutating func position(of table: String) -> Int {
        if let i = tables.firstIndex(where: { $0.name == table }) { return i }
        tables.append((table, PendingIndexEntries()))
        return tables.count - 1
    }

    /// The entries pending for `table`, no longer pending.
    mutating func take(_ table: String) -> PendingIndexEntries? {
        guard let i = tables.firstIndex(where: { $0.name == table }) else { return nil }
        return tables.remove(at: i).entries
    }
}
