import Engine

/// Up to 2^shift objects of one class whose keys share `key >> shift` (the cluster's number),
/// stored as ONE value of `fief/c/<cid>` under that number (object-layer format 2):
///
///     tag u8 (2) | flags u8 (bit 0: row ends are u32; bit 1: a summary follows the rows) |
///     shift u8 | 0 u8 | count u16 | 0 u16 |
///     presence: max(1, 2^shift / 8) bytes, bit i set when object (number << shift) + i exists |
///     row ends: count × u16 (u32 with flag bit 0), from the start of the rows |
///     rows: the objects' rows (`RowLayout`) in key order, back to back |
///     summary (flag bit 1): the bounds of the integer properties (`ClusterSummary`)
///
/// A key finds its cluster by an exact lookup (no floor search, no splits, no rebasing), and
/// its row by the rank of its presence bit. Keys are implicit, so a class loaded in key order
/// stores no key at all, and a cluster costs the engine one cell instead of one per object.
/// The reader throws `RowError` on damaged bytes and never reads outside the value.
struct ClusterView {
    static let tag: UInt8 = 2
    static let headerSize = 8
    static let maxShift = 8

    let bytes: UnsafeRawBufferPointer
    let shift: Int
    let count: Int
    private let wideEnds: Bool
    private let endsAt: Int
    private let rowsAt: Int
    /// Where the rows end: the summary's start when the cluster keeps one, else the end.
    let rowsEnd: Int
    let hasSummary: Bool

    static func presenceSize(_ shift: Int) -> Int { max(1, (1 << shift) / 8) }

    init(_ b: UnsafeRawBufferPointer, shift expected: Int) throws {
        guard b.count >= ClusterView.headerSize, b[0] == ClusterView.tag else {
            throw RowError("cluster has no cluster tag")
        }
        shift = Int(b[2])
        guard shift == expected else {
            throw RowError("cluster holds 2^\(shift) objects; its class's clusters hold 2^\(expected)")
        }
        count = Int(b.u16(4))
        guard count >= 1, count <= 1 << shift else {
            throw RowError("cluster counts \(count) objects, outside 1...\(1 << shift)")
        }
        wideEnds = b[1] & 1 != 0
        endsAt = ClusterView.headerSize + ClusterView.presenceSize(shift)
        rowsAt = endsAt + count * (wideEnds ? 4 : 2)
        guard rowsAt <= b.count else {
            throw RowError("cluster of \(b.count) bytes is shorter than its \(count) row ends")
        }
        hasSummary = b[1] & ClusterSummary.flag != 0
        if hasSummary {
            let last =
                wideEnds
                ? Int(b.u32(rowsAt - 4))
                : Int(b.u16(rowsAt - 2))
            guard rowsAt + last <= b.count else {
                throw RowError("cluster rows end past its \(b.count) bytes")
            }
            rowsEnd = rowsAt + last
        } else {
            rowsEnd = b.count
        }
        // The presence bits agree with the count, so a count from the headers alone (a class's
        // object count) and a walk of the keys agree too: 32 bytes for 256 objects.
        // Eight bytes at a time (a cluster of 256 has 32): every cluster found is counted.
        var present = 0, i = 0
        let size = ClusterView.presenceSize(shift)
        while i + 8 <= size {
            present += b.loadUnaligned(fromByteOffset: ClusterView.headerSize + i, as: UInt64.self).nonzeroBitCount
            i += 8
        }
        while i < size {
            present += b[ClusterView.headerSize + i].nonzeroBitCount
            i += 1
        }
        if shift < 3 { present = (Int(b[ClusterView.headerSize]) & ((1 << (1 << shift)) - 1)).nonzeroBitCount }
        guard present == count else {
            throw RowError("cluster counts \(count) objects and has \(present) presence bits")
        }
        bytes = b
    }

    /// The bounds the cluster keeps for integer property `pid` (see `ClusterSummary`); nil
    /// when it keeps none.
    @inline(__always)
    func bounds(of pid: UInt32) -> ClusterSummary.Bounds? {
        guard hasSummary else { return nil }
        return ClusterSummary.bounds(in: UnsafeRawBufferPointer(rebasing: bytes[rowsEnd...]), of: pid)
    }

    /// The cluster's summary, read whole (for the check); throws when it is damaged.
    func summary() throws -> ClusterSummary? {
        guard hasSummary else { return nil }
        return try ClusterSummary(UnsafeRawBufferPointer(rebasing: bytes[rowsEnd...]))
    }

    /// Whether slot `s` (key & (2^shift − 1)) holds an object.
    @inline(__always)
    func isPresent(_ s: Int) -> Bool { bytes[ClusterView.headerSize + s >> 3] & (1 << UInt8(s & 7)) != 0 }

    /// The row index of slot `s`: the present slots below it.
    func index(ofSlot s: Int) -> Int? {
        guard s >= 0, s < 1 << shift, isPresent(s) else { return nil }
        var rank = 0
        if shift >= 6 {
            // Whole 64-bit words (a cluster of 256 has 4): the words below slot s's, then
            // its own masked below it (the presence bytes are little-endian bit order).
            let word = s >> 6
            for w in 0..<word {
                rank +=
                    bytes.loadUnaligned(fromByteOffset: ClusterView.headerSize + 8 * w, as: UInt64.self)
                    .nonzeroBitCount
            }
            let own = UInt64(
                littleEndian: bytes.loadUnaligned(fromByteOffset: ClusterView.headerSize + 8 * word, as: UInt64.self))
            rank += (own & ((1 << UInt64(s & 63)) - 1)).nonzeroBitCount
            return rank < count ? rank : nil
        }
        // Fewer than 64 slots: a byte at a time.
        var byte = 0
        while byte < s >> 3 {
            rank += bytes[ClusterView.headerSize + byte].nonzeroBitCount
            byte += 1
        }
        rank += (bytes[ClusterView.headerSize + byte] & ((1 << UInt8(s & 7)) - 1)).nonzeroBitCount
        return rank < count ? rank : nil
    }

    @inline(__always)
    private func end(_ i: Int) -> Int {
        wideEnds
            ? Int(bytes.u32(endsAt + 4 * i))
            : Int(bytes.u16(endsAt + 2 * i))
    }

    /// Where the row at index `i` (< count) lies in the cluster's bytes.
    @inline(__always)
    func rowRange(at i: Int) throws -> Range<Int> { try rowRange(at: i, from: i == 0 ? 0 : end(i - 1)) }

    /// As `rowRange(at:)`, where the row's start (the row before's end, from the start of the
    /// rows) is known: a walk of the rows reads each end once.
    @inline(__always)
    func rowRange(at i: Int, from start: Int) throws -> Range<Int> {
        let stop = end(i)
        guard start <= stop, rowsAt + stop <= rowsEnd else {
            throw RowError("cluster row \(i) lies outside the cluster")
        }
        return (rowsAt + start)..<(rowsAt + stop)
    }

    /// Throws unless every row lies inside the cluster, in order: what a walk of the cluster's
    /// rows checks, for a count that reads no row (a count and a walk of a damaged file then
    /// fail alike, and a caller never sees a count its keys lack).
    func checkRowEnds() throws {
        var last = 0
        for i in 0..<count {
            let e = end(i)
            guard e >= last, rowsAt + e <= rowsEnd else {
                throw RowError("cluster row \(i) lies outside the cluster")
            }
            last = e
        }
    }

    /// The row at index `i` (< count), borrowed from the cluster.
    @inline(__always)
    func row(at i: Int) throws -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(rebasing: bytes[try rowRange(at: i)])
    }

    /// The row of slot `s`, nil when the slot is empty.
    func row(slot s: Int) throws -> UnsafeRawBufferPointer? {
        guard let i = index(ofSlot: s) else { return nil }
        return try row(at: i)
    }

    /// Each present slot with its row, in key order; `body` returns false to stop. Throws
    /// when the presence bits and the count disagree (see `RowCursor`).
    @inline(__always)
    func forEach(_ body: (Int, UnsafeRawBufferPointer) throws -> Bool) throws -> Bool {
        var rows = RowCursor(self)
        while let (s, row) = try rows.next() {
            if try !body(s, row) { return false }
        }
        return true
    }

    /// The present slots and their rows, in key order, one at a time: a scan loops over a
    /// cluster's rows in its own body. Through a closure per row, every row retained and
    /// released what the closure captured (the query, its codec, its source).
    struct RowCursor {
        private let v: ClusterView
        private var byte = -1
        private var bits: UInt8 = 0
        private var i = 0
        /// Where the previous row ended (from the start of the rows): the next one starts there,
        /// so each row costs one read of its end.
        private var previousEnd = 0
        private let presenceBytes: Int

        init(_ v: ClusterView) {
            self.v = v
            presenceBytes = ClusterView.presenceSize(v.shift)
        }

        /// The next slot and its row; nil past the last. Throws when the presence bits and the
        /// count disagree, or a row lies outside the cluster.
        @inline(__always)
        mutating func next() throws -> (slot: Int, row: UnsafeRawBufferPointer)? {
            while bits == 0 {
                byte += 1
                guard byte < presenceBytes else {
                    guard i == v.count else {
                        throw RowError("cluster counts \(v.count) objects and has \(i) presence bits")
                    }
                    return nil
                }
                bits = v.bytes[ClusterView.headerSize + byte]
                if v.shift < 3 { bits &= UInt8(truncatingIfNeeded: (1 << (1 << v.shift)) - 1) }
            }
            let s = byte << 3 | bits.trailingZeroBitCount
            bits &= bits &- 1
            guard i < v.count else { throw RowError("cluster has more presence bits than its count \(v.count)") }
            let r = try v.rowRange(at: i, from: previousEnd)
            i += 1
            previousEnd = r.upperBound - v.rowsAt
            return (s, UnsafeRawBufferPointer(rebasing: v.bytes[r]))
        }
    }

    /// Every object's key (`base | slot`) and row, in key order, into `keys` and `rows` (room
    /// for `count` each): `RowCursor`'s walk and checks in one loop over locals, for a batch
    /// of an iteration, where the cursor kept its state in memory between rows.
    func writeRows(
        base: Int64, keys: UnsafeMutablePointer<Int64>, rows: UnsafeMutablePointer<UnsafeRawBufferPointer>
    ) throws {
        guard let b = bytes.baseAddress else { return }
        let n = count, wide = wideEnds, endsAt = endsAt, rowsAt = rowsAt, rowsEnd = rowsEnd
        let mask: UInt8 = shift < 3 ? UInt8(truncatingIfNeeded: (1 << (1 << shift)) - 1) : 0xFF
        var i = 0
        var previous = 0
        for byte in 0..<ClusterView.presenceSize(shift) {
            var bits = b.load(fromByteOffset: ClusterView.headerSize + byte, as: UInt8.self) & mask
            while bits != 0 {
                guard i < n else { throw RowError("cluster has more presence bits than its count \(n)") }
                let stop =
                    wide
                    ? Int(UInt32(littleEndian: b.loadUnaligned(fromByteOffset: endsAt + 4 * i, as: UInt32.self)))
                    : Int(UInt16(littleEndian: b.loadUnaligned(fromByteOffset: endsAt + 2 * i, as: UInt16.self)))
                guard previous <= stop, rowsAt + stop <= rowsEnd else {
                    throw RowError("cluster row \(i) lies outside the cluster")
                }
                keys[i] = base | Int64(byte << 3 | bits.trailingZeroBitCount)
                rows[i] = UnsafeRawBufferPointer(start: b + rowsAt + previous, count: stop - previous)
                previous = stop
                bits &= bits &- 1
                i += 1
            }
        }
        guard i == n else { throw RowError("cluster counts \(n) objects and has \(i) presence bits") }
    }

    /// Where the rows begin in the cluster's bytes.
    var rowsStart: Int { rowsAt }

    /// The first row index at or after `from` whose row ends past byte `offset` of the cluster:
    /// the row holding that byte (a binary search over the row ends; `count` when none).
    func rowIndex(holding offset: Int, from: Int) -> Int {
        var lo = from, hi = count
        while lo < hi {
            let mid = (lo + hi) / 2
            if rowsAt + end(mid) <= offset { lo = mid + 1 } else { hi = mid }
        }
        return lo
    }

    /// The slot of the row at index `i` (< count): the position of the (i+1)-th presence bit.
    func slot(atIndex i: Int) -> Int {
        var rest = i
        for byte in 0..<ClusterView.presenceSize(shift) {
            var bits = bytes[ClusterView.headerSize + byte]
            let n = bits.nonzeroBitCount
            if rest >= n {
                rest -= n
                continue
            }
            for _ in 0..<rest { bits &= bits &- 1 }
            return byte << 3 | bits.trailingZeroBitCount
        }
        return -1
    }

    /// Each object of cluster `number` with its key and row, in key order (see `forEach`).
    @inline(__always)
    func forEachObject(number: Int64, _ body: (Int64, UnsafeRawBufferPointer) throws -> Bool) throws -> Bool {
        let base = number << shift
        return try forEach { s, row in try body(base | Int64(s), row) }
    }

    /// The slots present, in order (for change sets and checks).
    func slots() throws -> [Int] {
        var out: [Int] = []
        _ = try forEach { s, _ in
            out.append(s); return true
        }
        return out
    }
}

/// A cluster a write changes: its slots, row ends and rows in three arrays (not an array per
/// row, so a one-object write into a full cluster costs three allocations, not one per row),
/// encoded again once (one engine put) when the write flushes it. A class, held by its
/// `ClusterState`: changed in place, without a dictionary lookup per change.
final class ClusterRows {
    let shift: Int
    // Owned by one write transaction, used by one thread, no access overlapping another:
    // without these, run-time exclusivity checks took a twentieth of a bulk insert's
    // instructions (`valgrind --tool=cachegrind`).
    @exclusivity(unchecked) private(set) var slots: [Int] = []
    /// End of each row in `heap`.
    @exclusivity(unchecked) private var ends: [Int] = []
    @exclusivity(unchecked) private var heap: [UInt8] = []

    init(shift: Int) { self.shift = shift }

    /// A cluster no version holds yet, with room for its slots and a cluster's typical bytes:
    /// grown from empty, a bulk load's every cluster reallocated each of its three arrays
    /// about five times.
    static func empty(shift: Int) -> ClusterRows {
        let rows = ClusterRows(shift: shift)
        rows.slots.reserveCapacity(1 << shift)
        rows.ends.reserveCapacity(1 << shift)
        rows.heap.reserveCapacity(ClusterShift.targetBytes + ClusterShift.targetBytes / 4)
        return rows
    }

    convenience init(_ v: ClusterView) throws {
        self.init(shift: v.shift)
        try load(v)
    }

    private func load(_ v: ClusterView) throws {
        slots.reserveCapacity(v.count)
        ends.reserveCapacity(v.count)
        var first: Int?
        var last = 0
        _ = try v.forEach { s, r in
            let range =
                r.isEmpty
                ? last..<last
                : (r.baseAddress! - v.bytes.baseAddress!)..<(r.baseAddress! - v.bytes.baseAddress! + r.count)
            if first == nil { first = range.lowerBound }
            slots.append(s)
            ends.append(range.upperBound - first!)
            last = range.upperBound
            return true
        }
        heap = Array(v.bytes[(first ?? 0)..<last])
    }

    var count: Int { slots.count }
    var isFull: Bool { slots.count == 1 << shift }

    private func position(_ s: Int) -> (Int, Bool) {
        // Loads come in key order: the new slot is usually past the last.
        if let last = slots.last, s > last { return (slots.count, false) }
        var lo = 0, hi = slots.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if slots[mid] < s { lo = mid + 1 } else { hi = mid }
        }
        return (lo, lo < slots.count && slots[lo] == s)
    }

    private func range(_ i: Int) -> Range<Int> { (i == 0 ? 0 : ends[i - 1])..<ends[i] }

    func withRow<T>(slot s: Int, _ body: (UnsafeRawBufferPointer?) throws -> T) rethrows -> T {
        let (i, found) = position(s)
        guard found else { return try body(nil) }
        let r = range(i)
        return try heap.withUnsafeBytes { try body(UnsafeRawBufferPointer(rebasing: $0[r])) }
    }

    /// Runs `body` on the row of slot `s` in place; false when the slot is empty.
    func mutateRow(slot s: Int, _ body: (UnsafeMutableRawBufferPointer) throws -> Void) rethrows -> Bool {
        let (i, found) = position(s)
        guard found else { return false }
        let r = range(i)
        try heap.withUnsafeMutableBytes { try body(UnsafeMutableRawBufferPointer(rebasing: $0[r])) }
        return true
    }

    /// Each slot and its row, in key order.
    func forEachRow(_ body: (Int, UnsafeRawBufferPointer) -> Void) {
        heap.withUnsafeBytes { h in
            for i in 0..<slots.count { body(slots[i], UnsafeRawBufferPointer(rebasing: h[range(i)])) }
        }
    }

    /// Puts the row of slot `s`; true when the slot was empty.
    @discardableResult
    func put(slot s: Int, _ row: [UInt8]) -> Bool { row.withUnsafeBytes { put(slot: s, $0) } }

    /// As above, the row lent by address.
    @discardableResult
    func put(slot s: Int, _ row: UnsafeRawBufferPointer) -> Bool {
        let (i, found) = position(s)
        if !found && i == slots.count {
            // After every row (a load in key order): three appends, no generic insert; the
            // bytes as typed ones, so the append is one copy.
            row.withMemoryRebound(to: UInt8.self) { heap.append(contentsOf: $0) }
            slots.append(s)
            ends.append(heap.count)
            return true
        }
        let r = found ? range(i) : (i == 0 ? 0 : ends[i - 1])..<(i == 0 ? 0 : ends[i - 1])
        row.withMemoryRebound(to: UInt8.self) { heap.replaceSubrange(r, with: $0) }
        let delta = row.count - r.count
        if found {
            for j in i..<ends.count { ends[j] += delta }
        } else {
            slots.insert(s, at: i)
            ends.insert(r.lowerBound, at: i)
            for j in i..<ends.count { ends[j] += delta }
        }
        return !found
    }

    /// Removes the row of slot `s`; false when it was empty.
    @discardableResult
    func remove(slot s: Int) -> Bool {
        let (i, found) = position(s)
        guard found else { return false }
        let r = range(i)
        heap.removeSubrange(r)
        slots.remove(at: i)
        ends.remove(at: i)
        for j in i..<ends.count { ends[j] -= r.count }
        return true
    }

    /// The cluster's bytes (see `ClusterView`), with `summary` after the rows; nil when it
    /// holds nothing.
    func encoded(summary: ClusterSummary? = nil) -> [UInt8]? {
        guard !slots.isEmpty else { return nil }
        let wide = heap.count > Int(UInt16.max)
        let presence = ClusterView.presenceSize(shift)
        var out = [UInt8](repeating: 0, count: ClusterView.headerSize + presence + slots.count * (wide ? 4 : 2))
        out.reserveCapacity(out.count + heap.count)
        out[0] = ClusterView.tag
        out[1] = (wide ? 1 : 0) | (summary == nil ? 0 : ClusterSummary.flag)
        out[2] = UInt8(shift)
        out[4] = UInt8(truncatingIfNeeded: slots.count)
        out[5] = UInt8(truncatingIfNeeded: slots.count >> 8)
        for (i, s) in slots.enumerated() {
            out[ClusterView.headerSize + s >> 3] |= 1 << UInt8(s & 7)
            let at = ClusterView.headerSize + presence + i * (wide ? 4 : 2)
            for b in 0..<(wide ? 4 : 2) { out[at + b] = UInt8(truncatingIfNeeded: ends[i] >> (8 * b)) }
        }
        out.append(contentsOf: heap)
        if let summary { out.append(contentsOf: summary.encoded()) }
        return out
    }
}

/// How many objects a class's clusters hold: as many as keep a cluster of typical rows near
/// a quarter of a 4 KiB leaf, from 1 to 256. Chosen when the class's first cluster is written
/// and kept for the file's life (`fief/meta` `shift/<cid>`). A leaf loaded in order is full
/// but for the room one more cluster would need, so smaller clusters waste less of it
/// (obj.file-size: persons' leaves 93 % full at this size, 89 % at 1,800 bytes).
enum ClusterShift {
    static let targetBytes = 900

    static func choose(_ layout: RowLayout) -> Int {
        let estimate = max(8, rowEstimate(layout) + 2)
        var shift = 0
        while shift < ClusterView.maxShift, estimate << (shift + 1) <= targetBytes { shift += 1 }
        return shift
    }

    /// A compact row's guessed size: integers of 2 bytes, strings and data of 10 (the schema
    /// knows no values), lists kept elsewhere, each with its serial.
    static func rowEstimate(_ layout: RowLayout) -> Int {
        var n = 2
        for i in 0..<layout.pids.count {
            switch layout.widths[i] {
            case .int: n += 3
            case .bool, .list: n += 1
            case .fixed4: n += 5
            case .fixed8: n += 9
            case .fixed16: n += 17
            case .bytes: n += 11
            }
        }
        return n
    }
}

/// One class's clusters that a write changed and keeps decoded until it writes them back
/// (`ObjectTables.writeClusters`).
final class ClusterState {
    // As `ClusterRows`': one write's, one thread's.
    @exclusivity(unchecked) var shift: Int?
    @exclusivity(unchecked) var hot: [Int64: ClusterRows] = [:] {
        didSet {
            last = nil
            hotMask = KeyMask(hot.keys)
        }
    }
    /// The numbers of the clusters in `hot`: most lookups of a write that holds a few clusters
    /// decoded are for another one, and the mask says so without hashing the number into the
    /// dictionary (an update made three such lookups per object).
    @exclusivity(unchecked) private var hotMask = KeyMask()

    /// The rows of cluster `number` when this write holds it decoded.
    @inline(__always)
    func hotRows(_ number: Int64) -> ClusterRows? {
        guard hotMask.mayContain(number) else { return nil }
        return hot[number]
    }
    /// The cluster changed last (a load in key order changes one cluster many times in a row).
    @exclusivity(unchecked) var last: (number: Int64, rows: ClusterRows)?
}
