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
        if l.lists[s] { return .int(row.loadUnaligned(fromByteOffset: o, as: Int64.self).littleEndian) }
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

    /// The integer stored for `pid` in a row, read on its 8 bytes; nil for a null, a row whose
    /// layout predates the property or stores it as another kind (the caller then takes the
    /// general path).
    func storedInt(_ row: UnsafeRawBufferPointer, pid: UInt32) throws -> Int64? {
        try withLayout(of: row) { l in
            guard let s = l.slot(of: pid), l.kinds[s].isInteger, !l.lists[s], l.isPresent(row, s) else { return nil }
            return row.loadUnaligned(fromByteOffset: l.offsets[s], as: Int64.self).littleEndian
        }
    }

    /// The bytes of a present, in-row string or data value, borrowed from the row; nil for a
    /// null, an out-of-row value, or another kind.
    static func inRowBytes(_ row: UnsafeRawBufferPointer, layout l: RowLayout, slot s: Int) -> UnsafeRawBufferPointer? {
        guard l.kinds[s].isVariableLength, !l.lists[s], row[RowLayout.headerSize + s / 8] & (1 << UInt8(s % 8)) != 0 else { return nil }
        let o = l.offsets[s]
        let off = Int(row.loadUnaligned(fromByteOffset: o, as: UInt32.self).littleEndian)
        let len = Int(row.loadUnaligned(fromByteOffset: o + 4, as: UInt32.self).littleEndian)
        guard off != Int(RowLayout.outOfRow), off >= l.fixedEnd, off + len <= row.count else { return nil }
        return UnsafeRawBufferPointer(rebasing: row[off..<(off + len)])
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
    func encode(_ values: [UInt32: ObjectValue]) -> (row: [UInt8], outOfRow: [UInt32: [UInt8]]) {
        let l = current
        var row = [UInt8](repeating: 0, count: l.fixedEnd)
        row[0] = RowLayout.tag
        put32(&row, 1, l.id)
        var varValues: [(slot: Int, bytes: [UInt8])] = []
        for (s, pid) in l.pids.enumerated() {
            let v = values[pid] ?? .null
            if v.isNull { continue }
            row[RowLayout.headerSize + s / 8] |= 1 << UInt8(s % 8)
            switch v {
            case .string(let str): varValues.append((s, Array(str.utf8)))
            case .data(let d): varValues.append((s, d))
            default: RowCodec.putFixed(v, into: &row, at: l.offsets[s])
            }
        }
        // Move the largest values out until the row fits.
        var outSlots = Set<Int>()
        var total = l.fixedEnd + varValues.reduce(0) { $0 + $1.bytes.count }
        for v in varValues.sorted(by: { $0.bytes.count > $1.bytes.count }) where total > RowLayout.maxRowSize && v.bytes.count >= RowLayout.minOutOfRow {
            outSlots.insert(v.slot)
            total -= v.bytes.count
        }
        var moved: [UInt32: [UInt8]] = [:]
        for v in varValues {
            let o = l.offsets[v.slot]
            if outSlots.contains(v.slot) {
                put32(&row, o, RowLayout.outOfRow)
                moved[l.pids[v.slot]] = v.bytes
            } else {
                put32(&row, o, UInt32(row.count))
                row.append(contentsOf: v.bytes)
            }
            put32(&row, o + 4, UInt32(v.bytes.count))
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
