/// Object-layer format 3's row: SQLite's record, fitted to Fief's layouts. Each slot of the
/// row's layout is a serial (LEB128) followed by the bytes the serial says:
///
///     tag u8 (3) | layout id (LEB128) | per slot of the layout, in order: serial, value bytes
///
/// Serial 0 is a null in every kind. Otherwise, by the slot's `RowLayout.Width`:
/// - integers and links: 1 + n, then the value in n ∈ 0…8 bytes, little-endian two's
///   complement (an age takes 1 byte, a key below 2^23 takes 3, a zero none); 10, no bytes:
///   the value is the object's own key (an integer primary key always is);
/// - bool: 1 false, 2 true, no bytes;
/// - float, double, date, UUID: 1, then 4, 8, 8 or 16 bytes;
/// - string and data: 2·len + 1, then the len bytes; 2·len + 2 when they are in `fief/v/<cid>`;
/// - list: 2·count + 1 when the elements are in `fief/l/<cid>`; 2·len + 2 when the row keeps
///   them: len bytes, the count (LEB128) then the elements (`TaggedValue`).
///
/// After the last slot, a row may keep the links that point at its object (its backlinks):
///
///     … last slot | byte length (LEB128) | per entry: origin cid, origin pid, origin key
///                                           (zigzag), times it links here (all LEB128)
///
/// entries sorted by (cid, pid, key), each once, counts ≥ 1, at most `maxBacklinkBytes` of
/// them: a dog keeps its owner in 7 bytes where `fief/b` spent a 42-byte cell. A target with
/// more incoming links keeps the rest in `fief/b/<cid>` (the entries of old files stay there
/// too); an entry is in one place or the other, never both.
///
/// A read walks the serials up to its slot, most of them one byte. Format 2's row spent 8 bytes
/// on every integer and string, whatever its value; a bench person took 60 bytes, and takes 20.
enum CompactRow {
    static let tag: UInt8 = 3

    /// The serial of an integer equal to the object's key, which the row does not repeat.
    static let ownKey = 10

    /// Where one slot's value lies in a row: its serial (which starts at `serialAt`), and its
    /// bytes' offset and count.
    struct Field {
        let serial: Int
        let offset: Int
        let count: Int
        let serialAt: Int
    }

    /// The layout id of a compact row and the offset of its first serial; nil when the row is
    /// not one (a format-2 row, or damage).
    @inline(__always)
    static func header(_ row: UnsafeRawBufferPointer) -> (id: Int, start: Int)? {
        guard row.count >= 2, row[0] == tag else { return nil }
        if row[1] < 0x80 { return (Int(row[1]), 2) }
        var at = 1
        let id = leb(row, &at)
        return id < 0 ? nil : (id, at)
    }

    /// The LEB128 number at `at` (advanced past it); -1 when it runs past the row or past 35
    /// bits (no serial or layout id is that large: damage).
    @inline(__always)
    static func leb(_ row: UnsafeRawBufferPointer, _ at: inout Int) -> Int {
        var v = 0, shift = 0
        while at < row.count {
            let b = Int(row[at])
            at += 1
            v |= (b & 0x7F) << shift
            if b < 0x80 { return v }
            shift += 7
            if shift > 28 { return -1 }
        }
        return -1
    }

    /// A LEB128 number of up to 64 bits (an object key); nil when it runs past the row or
    /// past 10 bytes.
    static func leb64(_ row: UnsafeRawBufferPointer, _ at: inout Int) -> UInt64? {
        var v: UInt64 = 0, shift: UInt64 = 0
        while at < row.count, shift < 64 {
            let b = row[at]
            at += 1
            v |= UInt64(b & 0x7F) << shift
            if b < 0x80 { return v }
            shift += 7
        }
        return nil
    }

    /// `v` as a LEB128 number at the end of `bytes`.
    static func appendLeb(_ v: UInt64, to bytes: inout [UInt8]) { lebBytes(v) { bytes.append($0) } }

    /// The bytes of `v` as a LEB128 number, low group first, each handed to `emit`: the one
    /// encoder for rows appended to an array and rows written into room (`Writer`).
    @inline(__always)
    static func lebBytes(_ v: UInt64, _ emit: (UInt8) -> Void) {
        var v = v
        while v >= 0x80 {
            emit(UInt8(v & 0x7F) | 0x80)
            v >>= 7
        }
        emit(UInt8(v))
    }

    static func lebCount(_ v: Int) -> Int { lebCount(UInt64(max(v, 0))) }

    static func lebCount(_ v: UInt64) -> Int {
        var n = 1, v = v
        while v >= 0x80 { v >>= 7; n += 1 }
        return n
    }

    /// The bytes a value of serial `s` takes in a slot of width `w`; -1 when `s` is not a serial
    /// of that width.
    @inline(__always)
    static func size(_ w: RowLayout.Width, _ s: Int) -> Int {
        switch w {
        case .int: return s <= 9 ? max(0, s - 1) : s == ownKey ? 0 : -1
        case .bool: return s <= 2 ? 0 : -1
        case .fixed4: return s == 0 ? 0 : s == 1 ? 4 : -1
        case .fixed8: return s == 0 ? 0 : s == 1 ? 8 : -1
        case .fixed16: return s == 0 ? 0 : s == 1 ? 16 : -1
        case .bytes: return s & 1 == 1 ? s >> 1 : 0
        case .list: return s & 1 == 1 || s == 0 ? 0 : (s - 2) >> 1
        }
    }

    /// For each width (`rawValue << 7`) and one-byte serial `s` (< 0x80): how far the serial
    /// and its value reach, 1 + `size(w, s)`; 0 where `s` is not a serial of the width. A walk
    /// steps over a slot with one load instead of a decode and a switch. Made once, never freed,
    /// never written after: shared by every thread without a lock.
    nonisolated(unsafe) static let steps: UnsafePointer<UInt8> = {
        let t = UnsafeMutablePointer<UInt8>.allocate(capacity: 8 << 7)
        t.initialize(repeating: 0, count: 8 << 7)
        for w in 0..<8 {
            guard let width = RowLayout.Width(rawValue: UInt8(w)) else { continue }
            for s in 0..<0x80 {
                let n = size(width, s)
                if n >= 0 { t[w << 7 | s] = UInt8(1 + n) }
            }
        }
        return UnsafePointer(t)
    }()

    /// Moves `at` past the slot of width `w` whose serial is at `at`: one load from `steps` for
    /// a one-byte serial, `field` for the rest. False when the serial is not one `w` has, or
    /// lies past the row (damage). The value's bytes are not checked against the row's end
    /// here: the next serial's read, or the caller's read of its slot, checks that.
    @inline(__always)
    static func skip(
        _ row: UnsafeRawBufferPointer, _ at: inout Int, _ w: RowLayout.Width, _ steps: UnsafePointer<UInt8>
    )
        -> Bool
    {
        guard at < row.count else { return false }
        let b = row[at]
        let step = Int(steps[Int(w.rawValue) << 7 | Int(b & 0x7F)])
        if b < 0x80 && step != 0 {
            at += step
            return true
        }
        guard let f = field(row, at: &at, w) else { return false }
        at = f.offset + f.count
        return true
    }

    /// Slot `slot` of a row whose first serial is at `start`, the slots' widths at `widths`;
    /// nil when the row ends before the slot or inside a value, or a serial is not one its
    /// width has (damage: the caller reports it, or reads through the checked path).
    @inline(__always)
    static func locate(
        _ row: UnsafeRawBufferPointer, from start: Int, widths: UnsafePointer<RowLayout.Width>, slot: Int,
        steps: UnsafePointer<UInt8> = CompactRow.steps
    ) -> Field? {
        var at = start
        for i in 0..<slot where !skip(row, &at, widths[i], steps) { return nil }
        return field(row, at: &at, widths[slot])
    }

    /// The integer in slot `slot` (of width `.int`) of a row whose first serial is at `start`:
    /// `locate`, `field` and `int` in one pass that decodes only the serials a one-byte
    /// integer can have. Nil for a null, and wherever `locate` gives nil.
    @inline(__always)
    static func int(
        _ row: UnsafeRawBufferPointer, from start: Int, widths: UnsafePointer<RowLayout.Width>, slot: Int, key: Int64,
        steps: UnsafePointer<UInt8>
    ) -> Int64? {
        var at = start
        for i in 0..<slot where !skip(row, &at, widths[i], steps) { return nil }
        guard at < row.count else { return nil }
        let s = Int(row[at])
        if s == ownKey { return key }
        guard s >= 1, s <= 9, s - 1 <= row.count - at - 1 else { return nil }
        return int(row, at: at + 1, bytes: s - 1)
    }

    /// The slot of width `w` whose serial is at `at` (moved past the serial, to the value's
    /// bytes); nil when the serial or its bytes run past the row, or it is not one `w` has.
    @inline(__always)
    static func field(_ row: UnsafeRawBufferPointer, at: inout Int, _ w: RowLayout.Width) -> Field? {
        let serialAt = at
        let s: Int
        if at < row.count, row[at] < 0x80 {
            s = Int(row[at])
            at += 1
        } else {
            s = leb(row, &at)
        }
        let n = s < 0 ? -1 : size(w, s)
        guard n >= 0, n <= row.count - at else { return nil }
        return Field(serial: s, offset: at, count: n, serialAt: serialAt)
    }

    /// Every slot of a row of `count` slots, and where its backlinks' entries lie (empty when
    /// it keeps none), checked to end exactly where the row does.
    static func fields(
        _ row: UnsafeRawBufferPointer, from start: Int, widths: UnsafePointer<RowLayout.Width>,
        count: Int
    ) throws -> (slots: [Field], backlinks: Range<Int>) {
        var out: [Field]? = []
        out!.reserveCapacity(count)
        guard let t = walk(row, from: start, widths: widths, count: count, into: &out) else {
            throw RowError("row's \(count) slots or its backlinks do not end where it does")
        }
        return (out!, t.entries)
    }

    /// Where a row's slots end and its backlinks' entries lie (empty when it keeps none); nil
    /// when its slots or their length do not decode.
    static func backlinks(
        _ row: UnsafeRawBufferPointer, from start: Int, widths: UnsafePointer<RowLayout.Width>,
        count: Int
    ) -> (slotsEnd: Int, entries: Range<Int>)? {
        var none: [Field]?
        return walk(row, from: start, widths: widths, count: count, into: &none)
    }

    /// Past every slot (each appended to `out`, when there is one) to the backlinks.
    private static func walk(
        _ row: UnsafeRawBufferPointer, from start: Int, widths: UnsafePointer<RowLayout.Width>,
        count: Int, into out: inout [Field]?
    ) -> (slotsEnd: Int, entries: Range<Int>)? {
        var at = start
        for i in 0..<count {
            guard let f = field(row, at: &at, widths[i]) else { return nil }
            out?.append(f)
            at += f.count
        }
        let slotsEnd = at
        guard at < row.count else { return (slotsEnd, at..<at) }
        let n = leb(row, &at)
        guard n > 0, n == row.count - at else { return nil }
        return (slotsEnd, at..<row.count)
    }

    /// One backlink a row keeps: `count` links from property `pid` of object `origin` of
    /// class `cid`.
    struct Backlink: Equatable {
        let cid: UInt32
        let pid: UInt32
        let origin: Int64
        var count: Int64

        func precedes(_ b: Backlink) -> Bool { (cid, pid, origin) < (b.cid, b.pid, b.origin) }
        func sameSource(_ b: Backlink) -> Bool { cid == b.cid && pid == b.pid && origin == b.origin }
    }

    /// A row's backlinks keep at most this many bytes of entries; the rest go to `fief/b`.
    static let maxBacklinkBytes = 240

    static func backlinks(_ b: UnsafeRawBufferPointer) throws -> [Backlink] {
        var out: [Backlink] = []
        try forEachBacklink(b) { out.append($0) }
        return out
    }

    /// Each entry of `b` in order, checked as `backlinks` checks them, without an array.
    static func forEachBacklink(_ b: UnsafeRawBufferPointer, _ body: (Backlink) -> Void) throws {
        var at = 0, seen = 0
        var last: Backlink?
        while at < b.count {
            let cid = leb(b, &at), pid = leb(b, &at)
            let z = leb64(b, &at)
            let n = leb(b, &at)
            guard cid >= 0, cid <= UInt32.max, pid >= 0, pid <= UInt32.max, let z, n >= 1 else {
                throw RowError("row's backlink entry \(seen) does not decode")
            }
            let e = Backlink(
                cid: UInt32(cid), pid: UInt32(pid), origin: Int64(bitPattern: z >> 1) ^ -Int64(bitPattern: z & 1),
                count: Int64(n))
            if let last, !last.precedes(e) { throw RowError("row's backlinks are out of order") }
            body(e)
            last = e
            seen += 1
        }
    }

    /// The entries' bytes (without their length), nil when they pass `maxBacklinkBytes`.
    static func encode(_ entries: [Backlink]) -> [UInt8]? {
        var out: [UInt8] = []
        out.reserveCapacity(8 * entries.count)
        for e in entries {
            append(e, to: &out)
            if out.count > maxBacklinkBytes { return nil }
        }
        return out
    }

    /// One entry's bytes (of `encode`) appended to `out`.
    static func append(_ e: Backlink, to out: inout [UInt8]) {
        appendLeb(UInt64(e.cid), to: &out)
        appendLeb(UInt64(e.pid), to: &out)
        appendLeb(zigzag(e.origin), to: &out)
        appendLeb(UInt64(e.count), to: &out)
    }

    /// The bytes `append(e, to:)` writes.
    static func size(of e: Backlink) -> Int {
        lebCount(UInt64(e.cid)) + lebCount(UInt64(e.pid)) + lebCount(zigzag(e.origin)) + lebCount(UInt64(e.count))
    }

    private static func zigzag(_ v: Int64) -> UInt64 { UInt64(bitPattern: (v << 1) ^ (v >> 63)) }

    /// The integer of an `int` slot's field: its bytes, or the object's `key`.
    @inline(__always)
    static func int(_ row: UnsafeRawBufferPointer, _ f: Field, key: Int64) -> Int64 {
        f.serial == ownKey ? key : int(row, at: f.offset, bytes: f.count)
    }

    /// The integer of `n` bytes at `o` (two's complement, sign-extended).
    @inline(__always)
    static func int(_ row: UnsafeRawBufferPointer, at o: Int, bytes n: Int) -> Int64 {
        if n == 1 { return Int64(Int8(bitPattern: row[o])) }
        var v: UInt64 = 0
        for i in 0..<n { v |= UInt64(row[o + i]) << UInt64(8 * i) }
        guard n > 0, n < 8 else { return Int64(bitPattern: v) }
        let unused = UInt64(64 - 8 * n)
        return Int64(bitPattern: v << unused) >> Int64(unused)
    }

    /// The fewest bytes that hold `v` in two's complement (0 for zero).
    static func width(_ v: Int64) -> Int {
        if v == 0 { return 0 }
        let magnitude = v < 0 ? ~v : v
        return (64 - magnitude.leadingZeroBitCount + 1 + 7) / 8
    }

    /// The most bytes `encodeScalar` writes: a UUID's serial and its 16 bytes.
    static let maxScalarSize = 17

    /// The serial and bytes of a fixed-width value (or a null) at the start of `out` (room for
    /// `maxScalarSize`); how many it wrote, or nil for a string or data. One encoding for a row
    /// being built and for a value set in a row's own bytes (`RowCodec.patch`).
    static func encodeScalar(_ v: ObjectValue, key: Int64, into out: UnsafeMutableRawBufferPointer) -> Int? {
        func put(_ serial: Int, _ bits: UInt64 = 0, bytes n: Int = 0) -> Int {
            out[0] = UInt8(serial)
            for i in 0..<n { out[1 + i] = UInt8(truncatingIfNeeded: bits >> UInt64(8 * i)) }
            return 1 + n
        }
        switch v {
        case .null: return put(0)
        case .int(let i), .link(let i):
            if i == key { return put(ownKey) }
            let n = width(i)
            return put(1 + n, UInt64(bitPattern: i), bytes: n)
        case .bool(let b): return put(b ? 2 : 1)
        case .float(let f): return put(1, UInt64(f.bitPattern), bytes: 4)
        case .double(let d): return put(1, d.bitPattern, bytes: 8)
        case .date(let d): return put(1, d.timeIntervalSinceReferenceDate.bitPattern, bytes: 8)
        case .uuid(let u):
            out[0] = 1
            withUnsafeBytes(of: u.uuid) {
                out.baseAddress!.advanced(by: 1).copyMemory(from: $0.baseAddress!, byteCount: 16)
            }
            return 17
        case .string, .data: return nil
        }
    }

    /// Builds a compact row slot by slot, in the layout's order, through a pointer into room
    /// on the stack (`build`): appended to an array, every byte was a uniqueness and a
    /// capacity check, and each string's room an append of zeros. A field that does not fit
    /// is not stored, but counted, so `at` ends at the row's whole size, and `build` writes
    /// the row again into that much room.
    struct Writer {
        private let base: UnsafeMutablePointer<UInt8>
        private let room: Int
        /// Bytes the row takes so far (past `room` once a field did not fit).
        private(set) var at = 0

        private init(_ base: UnsafeMutablePointer<UInt8>, room: Int, layoutID: UInt32) {
            self.base = base
            self.room = room
            byte(CompactRow.tag)
            leb(UInt64(layoutID))
        }

        var fits: Bool { at <= room }

        /// A row of layout `layoutID` that `body` writes, appended to `row`: written first into
        /// `room` bytes on the stack, then (when it did not fit) into its whole size, so `body`
        /// may run twice and must write the same fields each time. `extra`: bytes the caller
        /// appends after the row, reserved with the row's own. A row longer than `limit` is not
        /// written again nor appended: `build` returns false.
        @discardableResult
        static func build(
            layoutID: UInt32, room first: Int, limit: Int = .max, extra: Int = 0, into row: inout [UInt8],
            _ body: (inout Writer) -> Void
        ) -> Bool {
            var room = first
            while true {
                let size = withUnsafeTemporaryAllocation(of: UInt8.self, capacity: room) { b -> Int in
                    var w = Writer(b.baseAddress!, room: room, layoutID: layoutID)
                    body(&w)
                    guard w.fits, w.at <= limit else { return w.at }
                    // Grown by doubling: reserving the exact size copied the buffer for each row.
                    let needed = row.count + w.at + extra
                    if row.capacity < needed { row.reserveCapacity(Swift.max(needed, 2 * row.capacity)) }
                    row.append(contentsOf: UnsafeBufferPointer(start: b.baseAddress, count: w.at))
                    return w.at
                }
                if size > limit { return false }
                if size <= room { return true }
                room = size
            }
        }

        @inline(__always)
        private mutating func byte(_ b: UInt8) {
            if at < room { base[at] = b }
            at += 1
        }

        @inline(__always)
        mutating func leb(_ v: UInt64) { CompactRow.lebBytes(v) { byte($0) } }

        mutating func null() { byte(0) }

        /// `key`: the object's own key (the value is then not written again).
        mutating func int(_ v: Int64, key: Int64) { scalar(.int(v), key: key) }

        mutating func bool(_ b: Bool) { byte(b ? 2 : 1) }

        /// A float, double, date or UUID: its little-endian bytes.
        mutating func raw(_ b: some Collection<UInt8>) {
            byte(1)
            copy(b, count: b.count)
        }

        /// A fixed-width value (or a null); false, writing nothing, for a string or data.
        @discardableResult
        mutating func scalar(_ v: ObjectValue, key: Int64) -> Bool {
            if at + CompactRow.maxScalarSize <= room {
                let out = UnsafeMutableRawBufferPointer(start: base + at, count: CompactRow.maxScalarSize)
                guard let n = CompactRow.encodeScalar(v, key: key, into: out) else { return false }
                at += n
                return true
            }
            return withUnsafeTemporaryAllocation(byteCount: CompactRow.maxScalarSize, alignment: 1) { out in
                guard let n = CompactRow.encodeScalar(v, key: key, into: out) else { return false }
                for i in 0..<n { byte(out[i]) }
                return true
            }
        }

        /// A string's UTF-8 kept in the row, copied from the string in place.
        mutating func string(_ s: String) {
            let n = s.utf8.count
            leb(UInt64(2 * n + 1))
            if at + n <= room {
                _ = UnsafeMutableBufferPointer(start: base + at, count: n).initialize(from: s.utf8)
            }
            at += n
        }

        /// Data bytes kept in the row.
        mutating func bytes(_ b: some Collection<UInt8>, count n: Int) {
            leb(UInt64(2 * n + 1))
            copy(b, count: n)
        }

        mutating func outOfRow(count: Int) { leb(UInt64(2 * count + 2)) }

        mutating func listCount(_ n: Int64) { leb(UInt64(2 * Int(n) + 1)) }

        mutating func inlineList(count: Int64, elements: some Collection<UInt8>) {
            leb(UInt64(2 * (CompactRow.lebCount(Int(count)) + elements.count) + 2))
            leb(UInt64(count))
            copy(elements, count: elements.count)
        }

        private mutating func copy(_ b: some Collection<UInt8>, count n: Int) {
            if at + n <= room {
                let start = base + at
                let copied: Void? = b.withContiguousStorageIfAvailable {
                    if let p = $0.baseAddress { start.initialize(from: p, count: n) }
                }
                if copied == nil { _ = UnsafeMutableBufferPointer(start: start, count: n).initialize(from: b) }
            }
            at += n
        }
    }
}
