import Foundation

/// One layout of a class's rows: the pids its slots hold, in order, and how each is stored.
/// Rows come in two encodings, told apart by their first byte:
///
/// - tag 3, format 3's compact row (`CompactRow`): a serial and the bytes it says per slot,
///   written by every write;
/// - tag 1, format 1's and 2's fixed row, read in files not yet converted (a read-only open)
///   and by the conversion:
///
///     tag u8 (1) | layout id u32 | presence bits (one per property) | fixed area | var area
///
///   The fixed area holds each property at a fixed offset (integers, doubles, dates 8 bytes,
///   floats 4, bools 1, UUIDs 16, links the target key or -1, lists their element count, and
///   strings and data an offset u32 and length u32 into the var area, or offset `outOfRow` when
///   the bytes live in `fief/v/<cid>`). All little-endian.
///
/// A class: a scan hands the row's layout to every test of every row, and copying a struct of
/// five arrays cost five retains and releases each time.
final class RowLayout {
    /// The fixed row's tag (`CompactRow.tag` is the compact row's).
    static let tag: UInt8 = 1
    static let headerSize = 5
    static let outOfRow = UInt32.max
    /// Rows stay at most this long; the largest strings and data (≥ `minOutOfRow`) move out.
    static let maxRowSize = 1900
    static let minOutOfRow = 64

    let id: UInt32
    let pids: [UInt32]
    let kinds: [PropertyKind]
    let lists: [Bool]
    let offsets: [Int]
    let fixedEnd: Int
    /// How a compact row keeps each slot (which serials it may have), in memory the layout owns:
    /// the walk to a slot reads it without a retain of an array.
    let widths: UnsafeMutableBufferPointer<Width>
    /// Slot of each pid, indexed by pid (-1: not in this layout). Pids are small and dense
    /// (handed out in order per class), so an array beats hashing on every read; a pid past
    /// `denseLimit` (only a damaged or foreign schema has one) is looked up in `farSlots`.
    private let slotOfPid: [Int32]
    private let farSlots: [UInt32: Int]
    private static let denseLimit: UInt32 = 4096

    init(id: UInt32, pids: [UInt32], schema: ClassSchema) {
        self.id = id
        self.pids = pids
        var kinds: [PropertyKind] = [], lists: [Bool] = [], offsets: [Int] = []
        var o = RowLayout.headerSize + (pids.count + 7) / 8
        for pid in pids {
            let p = schema.anyProperty(pid: pid)
            let k = p?.kind ?? .int
            let isList = p?.list ?? false
            kinds.append(k); lists.append(isList)
            offsets.append(o)
            o += isList ? 8 : k.fixedSize
        }
        self.kinds = kinds; self.lists = lists; self.offsets = offsets
        fixedEnd = o
        widths = .allocate(capacity: max(1, pids.count))
        for (i, k) in kinds.enumerated() { widths[i] = lists[i] ? .list : Width(k) }
        var m = [Int32](repeating: -1, count: Int(min(pids.max() ?? 0, RowLayout.denseLimit)) + 1)
        var far: [UInt32: Int] = [:]
        for (i, p) in pids.enumerated() {
            if p < RowLayout.denseLimit { m[Int(p)] = Int32(i) } else { far[p] = i }
        }
        slotOfPid = m
        farSlots = far
    }

    deinit { widths.deallocate() }

    /// What serials a slot of a compact row may have, and how many bytes each takes
    /// (`CompactRow.size`).
    enum Width: UInt8 {
        case int, bool, fixed4, fixed8, fixed16, bytes, list

        init(_ k: PropertyKind) {
            switch k {
            case .bool: self = .bool
            case .float: self = .fixed4
            case .double, .date: self = .fixed8
            case .uuid: self = .fixed16
            case .string, .data, .bytes: self = .bytes
            case .int, .int8, .int16, .int32, .int64, .object, .linkingObjects: self = .int
            }
        }
    }

    func slot(of pid: UInt32) -> Int? {
        let i = Int(pid)
        guard i < slotOfPid.count else { return farSlots[pid] }
        let s = slotOfPid[i]
        return s < 0 ? nil : Int(s)
    }
}

/// Encodes and decodes rows of one class; reads one property in place from borrowed bytes.
/// A class: every property read reaches it, and copying its array of layouts cost a retain.
final class RowCodec {
    let layouts: [RowLayout]
    /// The last layout, which new rows take. Kept, not read from `layouts`: copied out of the
    /// array, it was retained and released for every row encoded.
    let current: RowLayout

    init(_ schema: ClassSchema) {
        layouts = schema.layouts.enumerated().map { RowLayout(id: UInt32($0.offset), pids: $0.element, schema: schema) }
        // A damaged schema may list none: then no row it names decodes (a typed error), and
        // none written here decodes either.
        current = layouts.last ?? RowLayout(id: UInt32(layouts.count), pids: [], schema: schema)
    }

    func layout(of row: UnsafeRawBufferPointer) throws -> RowLayout {
        if let (id, _) = CompactRow.header(row) {
            guard id < layouts.count else { throw RowError("row names layout \(id); the class has \(layouts.count)") }
            return layouts[id]
        }
        guard row.count >= RowLayout.headerSize, row[0] == RowLayout.tag else {
            throw RowError("row has no object tag")
        }
        let id = Int(row.u32(1))
        guard id < layouts.count else { throw RowError("row names layout \(id); the class has \(layouts.count)") }
        let l = layouts[id]
        guard row.count >= l.fixedEnd else {
            throw RowError("row of \(row.count) bytes is shorter than its layout's \(l.fixedEnd)")
        }
        return l
    }

    /// The row's layout, lent to `body` without a retain: a scan or a read touches it once per
    /// row, and a retain and release each time was a third of a count.
    @inline(__always)
    func withLayout<T>(of row: UnsafeRawBufferPointer, _ body: (RowLayout) throws -> T) throws -> T {
        try Unmanaged.passUnretained(try layout(of: row))._withUnsafeGuaranteedRef(body)
    }

    /// The value of `pid` in a row, or nil when the row's layout predates the property
    /// (the caller then uses the property's default). Out-of-row bytes come from `outOfRow`.
    /// `key` is the object's (a compact row does not repeat a value equal to it).
    func value(_ row: UnsafeRawBufferPointer, pid: UInt32, key: Int64, outOfRow: () throws -> [UInt8]?) throws
        -> ObjectValue?
    {
        let l = try layout(of: row)
        guard let s = l.slot(of: pid) else { return nil }
        return try value(row, layout: l, slot: s, key: key, outOfRow: outOfRow)
    }

    func value(
        _ row: UnsafeRawBufferPointer, layout l: RowLayout, slot s: Int, key: Int64,
        outOfRow: () throws -> [UInt8]?
    ) throws -> ObjectValue {
        try value(of: try field(row, layout: l, slot: s, key: key), kind: l.kinds[s], outOfRow: outOfRow)
    }

    /// The value a field holds, for a property of kind `kind`.
    func value(of field: Field, kind: PropertyKind, outOfRow: () throws -> [UInt8]?) throws -> ObjectValue {
        switch field {
        case .null: return .null
        case .int(let i): return kind == .object ? .link(i) : .int(i)
        case .bool(let b): return .bool(b)
        case .listCount(let n), .inlineList(let n, _): return .int(n)
        case .raw(let b):
            switch kind {
            case .float: return .float(Float(bitPattern: b.u32(0)))
            case .double: return .double(Double(bitPattern: b.u64(0)))
            case .date:
                return .date(
                    Date(
                        timeIntervalSinceReferenceDate: Double(
                            bitPattern: b.u64(0))))
            default:
                var u = UUID().uuid
                withUnsafeMutableBytes(of: &u) { $0.copyMemory(from: b) }
                return .uuid(UUID(uuid: u))
            }
        case .bytes(let b):
            return kind == .string ? .string(String(decoding: b, as: UTF8.self)) : .data(Array(b))
        case .outOfRow(let n):
            guard let b = try outOfRow(), b.count == n else {
                throw RowError("out-of-row value missing or of the wrong length")
            }
            return kind == .string ? .string(String(decoding: b, as: UTF8.self)) : .data(b)
        }
    }

    /// One slot of a row as either encoding keeps it, borrowed from the row's bytes: what a
    /// value is read from, and what a row is written again from in the other encoding.
    enum Field {
        case null
        /// An integer of any width, or a link's target key.
        case int(Int64)
        case bool(Bool)
        /// A float's 4, a double's or date's 8, or a UUID's 16 little-endian bytes.
        case raw(UnsafeRawBufferPointer)
        /// A string's UTF-8 or data's bytes, kept in the row.
        case bytes(UnsafeRawBufferPointer)
        /// A string or data of this many bytes, kept in `fief/v/<cid>`.
        case outOfRow(Int)
        /// A list's element count, its elements in `fief/l/<cid>`.
        case listCount(Int64)
        /// A list kept in the row: its count and its elements (`TaggedValue`).
        case inlineList(Int64, UnsafeRawBufferPointer)
    }

    func field(_ row: UnsafeRawBufferPointer, layout l: RowLayout, slot s: Int, key: Int64) throws -> Field {
        if let (_, start) = CompactRow.header(row) {
            return try field(row, try located(row, from: start, layout: l, slot: s), l.widths[s], key: key)
        }
        return try fixedField(row, layout: l, slot: s)
    }

    private func located(_ row: UnsafeRawBufferPointer, from start: Int, layout l: RowLayout, slot s: Int) throws
        -> CompactRow.Field
    {
        guard let f = CompactRow.locate(row, from: start, widths: l.widths.baseAddress!, slot: s) else {
            throw RowError("row ends inside slot \(s), or the slot's serial is not one of its kind")
        }
        return f
    }

    private func field(_ row: UnsafeRawBufferPointer, _ f: CompactRow.Field, _ w: RowLayout.Width, key: Int64) throws
        -> Field
    {
        if f.serial == 0 { return .null }
        let bytes = UnsafeRawBufferPointer(rebasing: row[f.offset..<(f.offset + f.count)])
        switch w {
        case .int: return .int(CompactRow.int(row, f, key: key))
        case .bool: return .bool(f.serial == 2)
        case .fixed4, .fixed8, .fixed16: return .raw(bytes)
        case .bytes: return f.serial & 1 == 1 ? .bytes(bytes) : .outOfRow((f.serial - 2) >> 1)
        case .list:
            guard f.serial & 1 == 0 else { return .listCount(Int64((f.serial - 1) >> 1)) }
            var at = 0
            let n = CompactRow.leb(bytes, &at)
            guard n >= 0 else { throw RowError("list kept in the row has no count") }
            return .inlineList(Int64(n), UnsafeRawBufferPointer(rebasing: bytes[at...]))
        }
    }

    /// Slot `s` of a fixed row (format 1 and 2), already checked to hold its fixed area.
    private func fixedField(_ row: UnsafeRawBufferPointer, layout l: RowLayout, slot s: Int) throws -> Field {
        if row[RowLayout.headerSize + s / 8] & (1 << UInt8(s % 8)) == 0 { return .null }
        let o = l.offsets[s]
        if l.lists[s] {
            let raw = row.u64(o)
            guard raw & RowCodec.inlineList != 0 else {
                // No list has 2^31 elements: a count past that is damage (and would overflow
                // the compact row's serial when the conversion writes it).
                guard raw <= UInt64(Int32.max) else { throw RowError("list count \(raw) in the row") }
                return .listCount(Int64(raw))
            }
            let off = Int(raw & 0xFFFF_FFFF), len = Int((raw >> 32) & 0xFFFF)
            guard off >= l.fixedEnd, off + len <= row.count else {
                throw RowError("list kept in the row lies outside it")
            }
            return .inlineList(Int64((raw >> 48) & 0x7FFF), UnsafeRawBufferPointer(rebasing: row[off..<(off + len)]))
        }
        switch l.kinds[s] {
        case .bool: return .bool(row[o] != 0)
        case .int, .int8, .int16, .int32, .int64, .object:
            return .int(Int64(bitPattern: row.u64(o)))
        case .float, .double, .date, .uuid:
            return .raw(UnsafeRawBufferPointer(rebasing: row[o..<(o + l.kinds[s].fixedSize)]))
        case .string, .data, .bytes:
            let off = row.u32(o)
            let len = Int(row.u32(o + 4))
            if off == RowLayout.outOfRow { return .outOfRow(len) }
            guard Int(off) + len <= row.count, Int(off) >= l.fixedEnd else {
                throw RowError("var-area slice out of the row")
            }
            return .bytes(UnsafeRawBufferPointer(rebasing: row[Int(off)..<(Int(off) + len)]))
        case .linkingObjects: return .null
        }
    }

    /// Every slot of a row, checked whole: a compact row must end where its last slot does, or
    /// where the backlinks after it do (they are checked to decode too).
    func fields(_ row: UnsafeRawBufferPointer, key: Int64) throws -> (RowLayout, [Field]) {
        let l = try layout(of: row)
        if let (_, start) = CompactRow.header(row) {
            let found = try CompactRow.fields(row, from: start, widths: l.widths.baseAddress!, count: l.pids.count)
            _ = try CompactRow.backlinks(UnsafeRawBufferPointer(rebasing: row[found.backlinks]))
            return (l, try found.slots.enumerated().map { try field(row, $0.element, l.widths[$0.offset], key: key) })
        }
        return (l, try (0..<l.pids.count).map { try fixedField(row, layout: l, slot: $0) })
    }

    /// Where a compact row's slots end and its backlinks' entries lie (a fixed row keeps none).
    private func backlinkRange(_ row: UnsafeRawBufferPointer) throws -> (slotsEnd: Int, entries: Range<Int>) {
        let l = try layout(of: row)
        guard let (_, start) = CompactRow.header(row) else { return (row.count, row.count..<row.count) }
        guard let r = CompactRow.backlinks(row, from: start, widths: l.widths.baseAddress!, count: l.pids.count) else {
            throw RowError("row's slots or backlinks do not decode")
        }
        return r
    }

    /// The backlinks a row keeps (`CompactRow`), in order.
    func backlinks(_ row: UnsafeRawBufferPointer) throws -> [CompactRow.Backlink] {
        let r = try backlinkRange(row).entries
        return r.isEmpty ? [] : try CompactRow.backlinks(UnsafeRawBufferPointer(rebasing: row[r]))
    }

    /// The origins of the backlinks a row keeps from property `pid` of class `cid`, appended
    /// to `out` in order: an object's linking objects without an array of every entry.
    func backlinkOrigins(_ row: UnsafeRawBufferPointer, cid: UInt32, pid: UInt32, into out: inout [Int64]) throws {
        let r = try backlinkRange(row).entries
        guard !r.isEmpty else { return }
        try CompactRow.forEachBacklink(UnsafeRawBufferPointer(rebasing: row[r])) { e in
            if e.cid == cid && e.pid == pid { out.append(e.origin) }
        }
    }

    /// The row's values without its backlinks: what a change set compares (a link to an
    /// object is not a change of the object).
    func withoutBacklinks(_ row: UnsafeRawBufferPointer) throws -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(rebasing: row[..<(try backlinkRange(row).slotsEnd)])
    }

    /// The bytes of a compact row's backlinks' entries (empty when it keeps none).
    func backlinkBytes(_ row: UnsafeRawBufferPointer) throws -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(rebasing: row[try backlinkRange(row).entries])
    }

    /// A compact row with `entries` (`CompactRow.encode`) as its backlinks in place of those it
    /// kept.
    func replacingBacklinks(_ row: UnsafeRawBufferPointer, with entries: some Collection<UInt8>) throws -> [UInt8] {
        RowCodec.appendingBacklinks(Array(try withoutBacklinks(row)), entries)
    }

    /// `row` (without backlinks) followed by `entries` as its backlinks.
    static func appendingBacklinks(_ row: [UInt8], _ entries: some Collection<UInt8>) -> [UInt8] {
        var out = row
        appendBacklinks(entries, to: &out)
        return out
    }

    /// The bytes `appendBacklinks` adds for `count` bytes of entries (none for none).
    static func backlinksSize(_ count: Int) -> Int { count == 0 ? 0 : CompactRow.lebCount(count) + count }

    /// As `appendingBacklinks`, onto `row` itself: a new row's first entries cost no copy of it.
    static func appendBacklinks(_ entries: some Collection<UInt8>, to row: inout [UInt8]) {
        guard !entries.isEmpty else { return }
        CompactRow.appendLeb(UInt64(entries.count), to: &row)
        row.append(contentsOf: entries)
    }

    /// As `appendBacklinks` with the one entry `e` (a new object's first, from the origin
    /// added with it), written in place: encoded first, it was two arrays per object.
    static func appendBacklink(_ e: CompactRow.Backlink, to row: inout [UInt8]) {
        let n = CompactRow.size(of: e)
        CompactRow.appendLeb(UInt64(n), to: &row)
        CompactRow.append(e, to: &row)
    }

    /// A list slot's 8 bytes in a fixed row hold its element count (the elements are in
    /// `fief/l`), or, with bit 63 set, say where the list itself lies in the row's var area:
    /// offset (bits 0–31), byte length (32–47) and element count (48–62).
    static let inlineList: UInt64 = 1 << 63
    /// A short list is kept in its owner's row: no cell of its own, no descent to read.
    static let maxInlineListCount = 32
    static let maxInlineListBytes = 192

    /// A list's elements as a row keeps them (tagged values), nil when the list is too long for
    /// its row (its elements then go to `fief/l`) or empty.
    static func inlineBytes(_ items: [ObjectValue]) -> [UInt8]? {
        guard !items.isEmpty, items.count <= maxInlineListCount, !BrokenObjectLayer.on(.listChunkFromOne) else {
            return nil
        }
        var out: [UInt8] = []
        // Room for short links and integers (a dog's key in four bytes): grown element by
        // element, a list of a few reallocated its bytes as often.
        out.reserveCapacity(items.count * 4)
        for v in items {
            TaggedValue.encode(v, into: &out)
            if out.count > maxInlineListBytes { return nil }
        }
        return out
    }

    /// The elements of list `pid` kept in the row, nil when the row keeps only its count.
    func inlineList(_ row: UnsafeRawBufferPointer, pid: UInt32) throws -> UnsafeRawBufferPointer? {
        try withLayout(of: row) { l in
            guard let s = l.slot(of: pid), l.lists[s],
                case .inlineList(_, let b) = try field(row, layout: l, slot: s, key: 0)
            else { return nil }
            return b
        }
    }

    /// Every list the row keeps in itself, by pid (to keep them when the row is encoded again).
    func inlineLists(_ row: UnsafeRawBufferPointer) throws -> PidMap<[UInt8]> {
        let l = try layout(of: row)
        var out: PidMap<[UInt8]> = [:]
        for (s, pid) in l.pids.enumerated() where l.lists[s] {
            if case .inlineList(_, let b) = try field(row, layout: l, slot: s, key: 0) { out[pid] = Array(b) }
        }
        return out
    }

    /// A compact row in the current layout, and the var-length values that had to move out of
    /// it. `inlineLists`: the elements of lists the row keeps in itself (`inlineBytes`); a
    /// list's value is its count. Every insert and re-encoded row comes here: strings are
    /// copied from their UTF-8 storage without an array between.
    /// `extraCapacity`: bytes the caller appends after (a new row's backlinks), reserved with
    /// the row's own so the row is allocated once.
    func encode(_ values: PidMap<ObjectValue>, inlineLists: PidMap<[UInt8]> = [:], key: Int64, extraCapacity: Int = 0)
        -> (row: [UInt8], outOfRow: PidMap<[UInt8]>)
    {
        var row: [UInt8] = []
        let moved = encode(values, inlineLists: inlineLists, key: key, extraCapacity: extraCapacity, into: &row)
        return (row, moved)
    }

    /// As above, the row appended to `row`: a write encodes the rows it puts end to end in one
    /// buffer.
    func encode(
        _ values: PidMap<ObjectValue>, inlineLists: PidMap<[UInt8]> = [:], key: Int64, extraCapacity: Int = 0,
        into row: inout [UInt8]
    ) -> PidMap<[UInt8]> {
        let l = current
        // Written at once, every value in the row; only a row that may pass the limit is then
        // measured to choose what moves out (measuring every row first was a third of encoding
        // it). A row's measure exceeds its bytes by less than `slack` (a scalar is measured at
        // 18 bytes and takes at least 1, the header at 6 and takes at least 2), so a row that
        // ends that far below the limit is the row the measure would have chosen; a longer
        // one is only counted, never appended.
        let slack = 18 * l.pids.count + 6
        let limit = RowLayout.maxRowSize - slack
        var moved = PidMap<[UInt8]>()
        if write(
            values, inlineLists, key: key, l, outSlots: [], room: 256, limit: limit, extra: extraCapacity,
            into: &row, moved: &moved)
        {
            return moved
        }
        let (size, outSlots) = measure(values, inlineLists, l)
        write(
            values, inlineLists, key: key, l, outSlots: outSlots, room: size, extra: extraCapacity, into: &row,
            moved: &moved)
        return moved
    }

    /// The row's size at most, with every value in it but those of `outSlots`: the largest
    /// strings and data, moved out until the row fits.
    private func measure(_ values: PidMap<ObjectValue>, _ inlineLists: PidMap<[UInt8]>, _ l: RowLayout) -> (
        size: Int, outSlots: Set<Int>
    ) {
        var outSlots = Set<Int>()
        var size = 6
        // The layout's pids come in the order the values are kept: each found by a hint.
        var hint = 0
        for (s, pid) in l.pids.enumerated() {
            size +=
                values.lend(pid, hint: &hint) { v in
                    switch v {
                    case .string(let str): return str.utf8.count + 3
                    case .data(let d): return d.count + 3
                    case .null: return 1
                    default: return 1 + (l.lists[s] ? (inlineLists[pid]?.count ?? 0) + 3 : 17)
                    }
                } ?? 1
        }
        if size > RowLayout.maxRowSize {
            var varSlots: [(slot: Int, count: Int)] = []
            for (s, pid) in l.pids.enumerated() {
                switch values[pid] {
                case .string(let str)?: varSlots.append((s, str.utf8.count))
                case .data(let d)?: varSlots.append((s, d.count))
                default: break
                }
            }
            for v in varSlots.sorted(by: { $0.count > $1.count })
            where size > RowLayout.maxRowSize && v.count >= RowLayout.minOutOfRow {
                outSlots.insert(v.slot)
                size -= v.count
            }
        }
        return (size, outSlots)
    }

    /// The row, appended to `row`, with the values of `outSlots` out of it, put in `moved`;
    /// false, appending nothing, for a row longer than `limit`. `room`: the bytes to try first
    /// (`CompactRow.Writer.build`); `extra`: bytes the caller appends after the row, reserved
    /// with it.
    @discardableResult
    private func write(
        _ values: PidMap<ObjectValue>, _ inlineLists: PidMap<[UInt8]>, key: Int64, _ l: RowLayout,
        outSlots: Set<Int>, room: Int, limit: Int = .max, extra: Int, into row: inout [UInt8],
        moved: inout PidMap<[UInt8]>
    ) -> Bool {
        CompactRow.Writer.build(layoutID: l.id, room: room, limit: limit, extra: extra, into: &row) { w in
            // Written again when the row did not fit the room: the values moved out are found again.
            if !outSlots.isEmpty { moved = PidMap() }
            var hint = 0
            for (s, pid) in l.pids.enumerated() {
                let found: Void? = values.lend(pid, hint: &hint) { value in
                    // Matched as lent, not copied out first (`value ?? .null` retained each string).
                    switch value {
                    case .int(let n) where l.lists[s]:
                        if let e = inlineLists[pid] { w.inlineList(count: n, elements: e) } else { w.listCount(n) }
                    case .null, .int, .link, .bool, .float, .double, .date, .uuid: w.scalar(value, key: key)
                    case .string(let str):
                        if !outSlots.isEmpty && outSlots.contains(s) {
                            moved[pid] = Array(str.utf8)
                            w.outOfRow(count: str.utf8.count)
                        } else {
                            w.string(str)
                        }
                    case .data(let d):
                        if !outSlots.isEmpty && outSlots.contains(s) {
                            moved[pid] = d
                            w.outOfRow(count: d.count)
                        } else {
                            w.bytes(d, count: d.count)
                        }
                    }
                }
                if found == nil { w.scalar(.null, key: key) }
            }
        }
    }

    /// A row written again in the other encoding, slot for slot, its layout kept: values out
    /// of the row stay out, lists kept in it stay in. `compact` false writes the fixed row of
    /// formats 1 and 2 (only the torture suite's write-back of an old format does).
    func transcode(_ row: UnsafeRawBufferPointer, compact: Bool, key: Int64) throws -> [UInt8] {
        let (l, fields) = try fields(row, key: key)
        if compact {
            var out: [UInt8] = []
            CompactRow.Writer.build(layoutID: l.id, room: row.count + 16, into: &out) { w in
                for f in fields {
                    switch f {
                    case .null: w.null()
                    case .int(let i): w.int(i, key: key)
                    case .bool(let b): w.bool(b)
                    case .raw(let b): w.raw(b)
                    case .bytes(let b): w.bytes(b, count: b.count)
                    case .outOfRow(let n): w.outOfRow(count: n)
                    case .listCount(let n): w.listCount(n)
                    case .inlineList(let n, let b): w.inlineList(count: n, elements: b)
                    }
                }
            }
            return out
        }
        var out = [UInt8](repeating: 0, count: l.fixedEnd)
        out[0] = RowLayout.tag
        put32(&out, 1, l.id)
        for (s, f) in fields.enumerated() {
            let o = l.offsets[s]
            if case .null = f { continue }
            out[RowLayout.headerSize + s / 8] |= 1 << UInt8(s % 8)
            switch f {
            case .null: continue
            case .int(let i): put64(&out, o, UInt64(bitPattern: i))
            case .bool(let b): out[o] = b ? 1 : 0
            case .raw(let b): for (i, x) in b.enumerated() { out[o + i] = x }
            case .bytes(let b):
                put32(&out, o, UInt32(out.count))
                put32(&out, o + 4, UInt32(b.count))
                out.append(contentsOf: b)
            case .outOfRow(let n):
                put32(&out, o, RowLayout.outOfRow)
                put32(&out, o + 4, UInt32(n))
            case .listCount(let n): put64(&out, o, UInt64(bitPattern: n))
            case .inlineList(let n, let b):
                put64(
                    &out, o,
                    RowCodec.inlineList | UInt64(n & 0x7FFF) << 48 | UInt64(b.count & 0xFFFF) << 32 | UInt64(out.count))
                out.append(contentsOf: b)
            }
        }
        return out
    }

    /// Sets one fixed-width property to `v` in a compact row's own bytes, when the row is in
    /// the current layout, holds that property, and `v` takes as many bytes as the value there
    /// (an age of 40 for one of 39); returns the value it held. Nil, changing nothing,
    /// otherwise: the caller encodes the row again. The bytes are not touched when `v` is the
    /// value already there.
    func patch(_ row: UnsafeMutableRawBufferPointer, pid: UInt32, _ v: ObjectValue, key: Int64) throws -> ObjectValue? {
        let r = UnsafeRawBufferPointer(row)
        // The layout lent, not handed out (an atomic pair per set).
        return try withLayout(of: r) { l in
            guard l === current, let s = l.slot(of: pid), !l.lists[s], !l.kinds[s].isVariableLength,
                let (_, start) = CompactRow.header(r)
            else { return nil }
            let f = try located(r, from: start, layout: l, slot: s)
            let old = try value(of: try field(r, f, l.widths[s], key: key), kind: l.kinds[s], outOfRow: { nil })
            if old == v, !(old.numeric?.isNaN ?? false) { return old }
            // Encoded beside the row, not in an array: a heap buffer per set was a fifth of it.
            return withUnsafeTemporaryAllocation(byteCount: CompactRow.maxScalarSize, alignment: 1) { out in
                guard let n = CompactRow.encodeScalar(v, key: key, into: out), n == f.offset + f.count - f.serialAt
                else { return nil }
                row.baseAddress!.advanced(by: f.serialAt).copyMemory(from: out.baseAddress!, byteCount: n)
                return old
            }
        }
    }
}

struct RowError: Error, CustomStringConvertible {
    let description: String
    init(_ d: String) { description = d }
}

func put32(_ b: inout [UInt8], _ o: Int, _ v: UInt32) {
    for i in 0..<4 { b[o + i] = UInt8(truncatingIfNeeded: v >> (8 * UInt32(i))) }
}

func put64(_ b: inout [UInt8], _ o: Int, _ v: UInt64) {
    for i in 0..<8 { b[o + i] = UInt8(truncatingIfNeeded: v >> (8 * UInt64(i))) }
}
