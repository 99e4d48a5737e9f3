import Foundation

/// Where each stored property of one layout sits in a row:
///
///     tag u8 (1) | layout id u32 | presence bits (one per property) | fixed area | var area
///
/// The fixed area holds each property at a fixed offset (integers, doubles, dates 8 bytes,
/// floats 4, bools 1, UUIDs 16, links the target key or -1, lists their element count, and
/// strings and data an offset u32 and length u32 into the var area, or offset `outOfRow` when
/// the bytes live in `fief/v/<cid>`). All little-endian.
///
/// A class: a scan hands the row's layout to every test of every row, and copying a struct of
/// five arrays cost five retains and releases each time.
final class RowLayout {
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
        var m = [Int32](repeating: -1, count: Int(min(pids.max() ?? 0, RowLayout.denseLimit)) + 1)
        var far: [UInt32: Int] = [:]
        for (i, p) in pids.enumerated() {
            if p < RowLayout.denseLimit { m[Int(p)] = Int32(i) } else { far[p] = i }
        }
        slotOfPid = m
        farSlots = far
    }

    func slot(of pid: UInt32) -> Int? {
        let i = Int(pid)
        guard i < slotOfPid.count else { return farSlots[pid] }
        let s = slotOfPid[i]
        return s < 0 ? nil : Int(s)
    }

    /// Where slot `s` lies in a row of this layout: its fixed-area offset and its presence bit
    /// (what a read that skips the slot lookup keeps per layout).
    struct Place {
        let offset: Int
        let presenceByte: Int
        let presenceMask: UInt8

        @inline(__always)
        func isPresent(_ row: UnsafeRawPointer) -> Bool { row.load(fromByteOffset: presenceByte, as: UInt8.self) & presenceMask != 0 }
    }

    func place(ofSlot s: Int) -> Place {
        Place(offset: offsets[s], presenceByte: RowLayout.headerSize + s / 8, presenceMask: 1 << UInt8(s % 8))
    }

    /// Whether slot `s` holds a value (its presence bit), in a row of this layout.
    @inline(__always)
    func isPresent(_ row: UnsafeRawBufferPointer, _ s: Int) -> Bool {
        row[RowLayout.headerSize + s / 8] & (1 << UInt8(s % 8)) != 0
    }
}

/// Encodes and decodes rows of one class; reads one property in place from borrowed bytes.
/// A class: every property read reaches it, and copying its array of layouts cost a retain.
final class RowCodec {
    let layouts: [RowLayout]
    var current: RowLayout { layouts[layouts.count - 1] }

    init(_ schema: ClassSchema) {
        layouts = schema.layouts.enumerated().map { RowLayout(id: UInt32($0.offset), pids: $0.element, schema: schema) }
    }

    func layout(of row: UnsafeRawBufferPointer) throws -> RowLayout {
        guard row.count >= RowLayout.headerSize, row[0] == RowLayout.tag else { throw RowError("row has no object tag") }
        let id = Int(row.loadUnaligned(fromByteOffset: 1, as: UInt32.self).littleEndian)
        guard id < layouts.count else { throw RowError("row names layout \(id); the class has \(layouts.count)") }
        let l = layouts[id]
        guard row.count >= l.fixedEnd else { throw RowError("row of \(row.count) bytes is shorter than its layout's \(l.fixedEnd)") }
        return l
    }

    /// The value of `pid` in a row, or nil when the row's layout predates the property
    /// (the caller then uses the property's default). Out-of-row bytes come from `outOfRow`.
    func value(_ row: UnsafeRawBufferPointer, pid: UInt32, outOfRow: () throws -> [UInt8]?) throws -> ObjectValue? {
        let l = try layout(of: row)
        guard let s = l.slot(of: pid) else { return nil }
        return try value(row, layout: l, slot: s, outOfRow: outOfRow)
    }

    func value(_ row: UnsafeRawBufferPointer, layout l: RowLayout, slot s: Int, outOfRow: () throws -> [UInt8]?) throws -> ObjectValue {
        if row[RowLayout.headerSize + s / 8] & (1 << UInt8(s % 8)) == 0 { return .null }
        let o = l.offsets[s]
        if l.lists[s] { return .int(RowCodec.listCount(row.loadUnaligned(fromByteOffset: o, as: UInt64.self).littleEndian)) }
        switch l.kinds[s] {
        case .bool: return .bool(row[o] != 0)
        case .int, .int8, .int16, .int32, .int64: return .int(row.loadUnaligned(fromByteOffset: o, as: Int64.self).littleEndian)
        case .float: return .float(Float(bitPattern: row.loadUnaligned(fromByteOffset: o, as: UInt32.self).littleEndian))
        case .double: return .double(Double(bitPattern: row.loadUnaligned(fromByteOffset: o, as: UInt64.self).littleEndian))
        case .date: return .date(Date(timeIntervalSinceReferenceDate: Double(bitPattern: row.loadUnaligned(fromByteOffset: o, as: UInt64.self).littleEndian)))
        case .uuid:
            var u = UUID().uuid
            withUnsafeMutableBytes(of: &u) { $0.copyMemory(from: UnsafeRawBufferPointer(rebasing: row[o..<(o + 16)])) }
            return .uuid(UUID(uuid: u))
        case .object: return .link(row.loadUnaligned(fromByteOffset: o, as: Int64.self).littleEndian)
        case .string, .data, .bytes:
            let off = row.loadUnaligned(fromByteOffset: o, as: UInt32.self).littleEndian
            let len = Int(row.loadUnaligned(fromByteOffset: o + 4, as: UInt32.self).littleEndian)
            let bytes: [UInt8]
            if off == RowLayout.outOfRow {
                guard let b = try outOfRow(), b.count == len else { throw RowError("out-of-row value missing or of the wrong length") }
                bytes = b
            } else {
                guard Int(off) + len <= row.count, Int(off) >= l.fixedEnd else { throw RowError("var-area slice out of the row") }
                if l.kinds[s] == .string {
                    return .string(String(decoding: UnsafeRawBufferPointer(rebasing: row[Int(off)..<(Int(off) + len)]), as: UTF8.self))
                }
                bytes = Array(row[Int(off)..<(Int(off) + len)])
            }
            return l.kinds[s] == .string ? .string(String(decoding: bytes, as: UTF8.self)) : .data(bytes)
        case .linkingObjects: return .null
        }
    }

    /// The row's layout, lent to `body` without a retain: a scan or a read touches it once per
    /// row, and a retain and release each time was a third of a count.
    @inline(__always)
    func withLayout<T>(of row: UnsafeRawBufferPointer, _ body: (RowLayout) throws -> T) throws -> T {
        try Unmanaged.passUnretained(try layout(of: row))._withUnsafeGuaranteedRef(body)
    }

    /// A list slot's 8 bytes hold its element count (the elements are in `fief/l`), or, with
    /// bit 63 set, say where the list itself lies in the row's var area: offset (bits 0–31),
    /// byte length (32–47) and element count (48–62). A short list kept in its owner's row
    /// costs no cell of its own and no descent to read.
    static let inlineList: UInt64 = 1 << 63
    static let maxInlineListCount = 32
    static let maxInlineListBytes = 192

    static func listCount(_ raw: UInt64) -> Int64 {
        raw & inlineList != 0 ? Int64((raw >> 48) & 0x7FFF) : Int64(bitPattern: raw)
    }

    /// A list's elements as a row keeps them (tagged values), nil when the list is too long for
    /// its row (its elements then go to `fief/l`) or empty.
    static func inlineBytes(_ items: [ObjectValue]) -> [UInt8]? {
        guard !items.isEmpty, items.count <= maxInlineListCount, !BrokenObjectLayer.on(.listChunkFromOne) else { return nil }
        var out: [UInt8] = []
        for v in items {
            TaggedValue.encode(v, into: &out)
            if out.count > maxInlineListBytes { return nil }
        }
        return out
    }

    /// The bytes of list `pid` kept in the row, nil when the row keeps only its count.
    func inlineList(_ row: UnsafeRawBufferPointer, pid: UInt32) throws -> UnsafeRawBufferPointer? {
        try withLayout(of: row) { l in
            guard let s = l.slot(of: pid), l.lists[s], l.isPresent(row, s) else { return nil }
            let raw = row.loadUnaligned(fromByteOffset: l.offsets[s], as: UInt64.self).littleEndian
            guard raw & RowCodec.inlineList != 0 else { return nil }
            let off = Int(raw & 0xFFFF_FFFF), len = Int((raw >> 32) & 0xFFFF)
            guard off >= l.fixedEnd, off + len <= row.count else { throw RowError("list kept in the row lies outside it") }
            return UnsafeRawBufferPointer(rebasing: row[off..<(off + len)])
        }
    }

    /// Every list the row keeps in itself, by pid (to keep them when the row is encoded again).
    func inlineLists(_ row: UnsafeRawBufferPointer) throws -> [UInt32: [UInt8]] {
        let l = try layout(of: row)
        var out: [UInt32: [UInt8]] = [:]
        for (s, pid) in l.pids.enumerated() where l.lists[s] {
            if let b = try inlineList(row, pid: pid) { out[pid] = Array(b) }
        }
        return out
    }

    /// All stored values of a row by pid (properties the row's layout lacks are absent).
    func decode(_ row: UnsafeRawBufferPointer, outOfRow: (UInt32) throws -> [UInt8]?) throws -> [UInt32: ObjectValue] {
        let l = try layout(of: row)
        var out: [UInt32: ObjectValue] = [:]
        for (s, pid) in l.pids.enumerated() {
            out[pid] = try value(row, layout: l, slot: s, outOfRow: { try outOfRow(pid) })
        }
        return out
    }

    /// A row in the current layout, and the var-length values that had to move out of it.
    /// `inlineLists`: the elements of lists the row keeps in itself (`inlineBytes`).
    /// Every insert and re-encoded row comes here: sizes are worked out first, so the row is
    /// allocated once and strings are copied from their UTF-8 storage without an array between.
    func encode(_ values: [UInt32: ObjectValue], inlineLists: [UInt32: [UInt8]] = [:]) -> (row: [UInt8], outOfRow: [UInt32: [UInt8]]) {
        let l = current
        var row = [UInt8](repeating: 0, count: l.fixedEnd)
        var varSlots: [(slot: Int, value: ObjectValue, count: Int)] = []
        var varTotal = 0
        for (s, pid) in l.pids.enumerated() {
            let v = values[pid] ?? .null
            if v.isNull { continue }
            row[RowLayout.headerSize + s / 8] |= 1 << UInt8(s % 8)
            switch v {
            case .string(let str):
                let n = str.utf8.count
                varSlots.append((s, v, n))
                varTotal += n
            case .data(let d):
                varSlots.append((s, v, d.count))
                varTotal += d.count
            case .int(let n) where l.lists[s]:
                if let b = inlineLists[pid] {
                    varSlots.append((s, .int(n), b.count))
                    varTotal += b.count
                } else {
                    RowCodec.putFixed(v, into: &row, at: l.offsets[s])
                }
            default: RowCodec.putFixed(v, into: &row, at: l.offsets[s])
            }
        }
        row[0] = RowLayout.tag
        put32(&row, 1, l.id)
        // Move the largest strings and data out until the row fits.
        var outSlots = Set<Int>()
        if l.fixedEnd + varTotal > RowLayout.maxRowSize {
            var total = l.fixedEnd + varTotal
            for v in varSlots.sorted(by: { $0.count > $1.count }) where total > RowLayout.maxRowSize && v.count >= RowLayout.minOutOfRow {
                if case .int = v.value { continue }
                outSlots.insert(v.slot)
                total -= v.count
            }
        }
        row.reserveCapacity(l.fixedEnd + varTotal)
        var moved: [UInt32: [UInt8]] = [:]
        for v in varSlots {
            let o = l.offsets[v.slot], pid = l.pids[v.slot]
            switch v.value {
            case .int(let n):
                let raw = RowCodec.inlineList | UInt64(n & 0x7FFF) << 48 | UInt64(v.count & 0xFFFF) << 32 | UInt64(row.count)
                put64(&row, o, raw)
                row.append(contentsOf: inlineLists[pid]!)
                continue
            case .string(let str):
                if outSlots.contains(v.slot) { moved[pid] = Array(str.utf8) } else {
                    put32(&row, o, UInt32(row.count))
                    row.append(contentsOf: str.utf8)
                }
            case .data(let d):
                if outSlots.contains(v.slot) { moved[pid] = d } else {
                    put32(&row, o, UInt32(row.count))
                    row.append(contentsOf: d)
                }
            default: continue
            }
            if outSlots.contains(v.slot) { put32(&row, o, RowLayout.outOfRow) }
            put32(&row, o + 4, UInt32(v.count))
        }
        return (row, moved)
    }

    /// Writes a fixed-width value's bytes at `o` (strings and data go to the var area).
    static func putFixed(_ v: ObjectValue, into row: inout [UInt8], at o: Int) {
        row.withUnsafeMutableBytes { putFixed(v, into: $0, at: o) }
    }

    static func putFixed(_ v: ObjectValue, into row: UnsafeMutableRawBufferPointer, at o: Int) {
        switch v {
        case .null, .string, .data: break
        case .bool(let b): row[o] = b ? 1 : 0
        case .int(let i), .link(let i): row.storeBytes(of: UInt64(bitPattern: i).littleEndian, toByteOffset: o, as: UInt64.self)
        case .float(let f): row.storeBytes(of: f.bitPattern.littleEndian, toByteOffset: o, as: UInt32.self)
        case .double(let d): row.storeBytes(of: d.bitPattern.littleEndian, toByteOffset: o, as: UInt64.self)
        case .date(let d): row.storeBytes(of: d.timeIntervalSinceReferenceDate.bitPattern.littleEndian, toByteOffset: o, as: UInt64.self)
        case .uuid(let u): withUnsafeBytes(of: u.uuid) { row.baseAddress!.advanced(by: o).copyMemory(from: $0.baseAddress!, byteCount: 16) }
        }
    }

    /// Sets one fixed-width property to `v` in the row's own bytes, when the row is in the
    /// current layout and holds that property, and returns the value it held; nil, changing
    /// nothing, otherwise (the caller re-encodes). The bytes are not touched when `v` is the
    /// value already there.
    func patch(_ row: UnsafeMutableRawBufferPointer, pid: UInt32, _ v: ObjectValue) throws -> ObjectValue? {
        let r = UnsafeRawBufferPointer(row)
        let l = try layout(of: r)
        guard l === current, let s = l.slot(of: pid), !l.lists[s], !l.kinds[s].isVariableLength else { return nil }
        let old = try value(r, layout: l, slot: s, outOfRow: { nil })
        if old == v, !(old.numeric?.isNaN ?? false) { return old }
        let bit = RowLayout.headerSize + s / 8, mask: UInt8 = 1 << UInt8(s % 8)
        if v.isNull {
            row[bit] &= ~mask
            for i in l.offsets[s]..<(l.offsets[s] + l.kinds[s].fixedSize) { row[i] = 0 }
        } else {
            row[bit] |= mask
            RowCodec.putFixed(v, into: row, at: l.offsets[s])
        }
        return old
    }

    /// The pids whose values a row keeps out of row (to find and delete them).
    func outOfRowPids(_ row: UnsafeRawBufferPointer) throws -> [UInt32] {
        let l = try layout(of: row)
        var out: [UInt32] = []
        for (s, pid) in l.pids.enumerated() where l.kinds[s].isVariableLength && !l.lists[s] {
            if row[RowLayout.headerSize + s / 8] & (1 << UInt8(s % 8)) == 0 { continue }
            if row.loadUnaligned(fromByteOffset: l.offsets[s], as: UInt32.self).littleEndian == RowLayout.outOfRow { out.append(pid) }
        }
        return out
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
