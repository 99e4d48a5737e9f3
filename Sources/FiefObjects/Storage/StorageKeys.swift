import Engine
import Foundation

/// The engine tables the object layer keeps, all under the reserved prefix `fief/`, and the
/// byte encodings of their keys. Keys sort in the engine's byte order, so every encoding here
/// preserves the order of what it encodes.
enum Tables {
    static let schema = "fief/schema"
    static let meta = "fief/meta"
    /// Format 1's rows, one per object (read only, to convert them).
    static func objects(_ cid: UInt32) -> String { "fief/o/\(cid)" }
    /// Format 2's clusters (`ClusterView`), keyed by cluster number.
    static func clusters(_ cid: UInt32) -> String { "fief/c/\(cid)" }
    static func index(_ cid: UInt32, _ pid: UInt32) -> String { "fief/x/\(cid)/\(pid)" }
    static func lists(_ cid: UInt32) -> String { "fief/l/\(cid)" }
    static func backlinks(_ cid: UInt32) -> String { "fief/b/\(cid)" }
    static func outOfRow(_ cid: UInt32) -> String { "fief/v/\(cid)" }
    static func all(_ c: ClassSchema) -> [String] {
        [objects(c.cid), clusters(c.cid), lists(c.cid), backlinks(c.cid), outOfRow(c.cid)]
            + c.properties.filter(\.hasIndex).map { index(c.cid, $0.pid) }
    }
}

enum KeyBytes {
    /// Object keys sort numerically (sign bit flipped, big-endian), as the engine's Int64 keys.
    static func obj(_ k: Int64) -> [UInt8] { k.keyBytes }
    static func u32(_ v: UInt32) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: v >> (24 - 8 * UInt32($0))) } }
    static func readObj(_ b: UnsafeRawBufferPointer, at o: Int) -> Int64 {
        var u: UInt64 = 0
        if o >= 0 && o + 8 <= b.count {
            u = UInt64(bigEndian: b.loadUnaligned(fromByteOffset: o, as: UInt64.self))
        } else {
            // A key cut short (only a damaged file has one): the bytes it lacks read as zeros,
            // and the checks that compare it with the rest of the graph report it.
            for i in 0..<8 { u = (u << 8) | UInt64(o + i >= 0 && o + i < b.count ? b[o + i] : 0) }
        }
        return Int64(keyBits: u)
    }
    /// As `readObj`: bytes a damaged key lacks read as zeros, never past its end.
    static func readU32(_ b: UnsafeRawBufferPointer, at o: Int) -> UInt32 {
        var u: UInt32 = 0
        for i in 0..<4 { u = (u << 8) | UInt32(o + i >= 0 && o + i < b.count ? b[o + i] : 0) }
        return u
    }

    /// `fief/v/<cid>` and list chunks: object ‖ pid (‖ chunk number).
    static func property(_ key: Int64, _ pid: UInt32) -> [UInt8] { obj(key) + u32(pid) }
    static func listChunk(_ key: Int64, _ pid: UInt32, _ chunk: UInt32) -> [UInt8] { obj(key) + u32(pid) + u32(chunk) }

    /// `fief/b/<target cid>`: target ‖ origin class ‖ origin property ‖ origin → multiplicity.
    static func backlink(target: Int64, originClass: UInt32, pid: UInt32, origin: Int64) -> [UInt8] {
        obj(target) + u32(originClass) + u32(pid) + obj(origin)
    }

    /// An order-preserving encoding of a value, for index keys: a kind byte, then the value.
    /// Strings and data escape 0x00 as 00 01 and end with 00 00, so a prefix of the escaped
    /// bytes (without the end mark) finds every key that starts with it.
    /// An index entry: the value's index encoding, then the object key. Format 3 (`compact`)
    /// writes the key's big-endian bytes without leading zeros, then their count (a key below
    /// 2^24 in 4 bytes); formats 1 and 2 wrote its 8-byte table key. Equal values keep one
    /// entry per object either way; the scans that read them sort the keys they find.
    static func indexEntry(_ value: consuming [UInt8], _ key: Int64, compact: Bool) -> [UInt8] {
        var out = value
        appendEntryKey(key, compact: compact, to: &out)
        return out
    }

    /// The object key an index entry ends with, appended to `out` (see `indexEntry`).
    static func appendEntryKey(_ key: Int64, compact: Bool, to out: inout [UInt8]) {
        guard compact else { return appendBigEndian(key.keyBits, to: &out) }
        let u = UInt64(bitPattern: key)
        let n = (64 - u.leadingZeroBitCount + 7) / 8
        for i in stride(from: n - 1, through: 0, by: -1) { out.append(UInt8(truncatingIfNeeded: u >> (8 * UInt64(i)))) }
        out.append(UInt8(n))
    }

    /// The object key at the end of an index entry. A damaged entry reads as the key its bytes
    /// give, which the checks then find missing or stale.
    static func indexEntryKey(_ e: UnsafeRawBufferPointer, compact: Bool) -> Int64 {
        guard compact else { return readObj(e, at: e.count - 8) }
        guard let last = e.last else { return 0 }
        let n = min(Int(last), 8, e.count - 1)
        var u: UInt64 = 0
        for i in (e.count - 1 - n)..<(e.count - 1) { u = u << 8 | UInt64(e[i]) }
        return Int64(bitPattern: u)
    }

    /// An entry without its object key: what a unique index holds once.
    static func indexEntryValue<E: BidirectionalCollection<UInt8>>(_ e: E, compact: Bool) -> E.SubSequence {
        compact ? e.dropLast(min(e.count, Int(e.last ?? 0) + 1)) : e.dropLast(8)
    }

    static func indexValue(_ v: ObjectValue) -> [UInt8] {
        var out: [UInt8] = []
        appendIndexValue(v, to: &out)
        return out
    }

    /// `indexValue(v)` appended to `out`: an insert writes its index entries straight into the
    /// buffer they wait in (`PendingIndexEntries`), with no array of their own (two
    /// allocations per indexed value stored).
    static func appendIndexValue(_ v: ObjectValue, to out: inout [UInt8]) {
        switch v {
        case .null: out.append(0)
        case .bool(let b): out.append(1); out.append(b ? 1 : 0)
        case .int(let i), .link(let i): out.append(2); appendBigEndian(i.keyBits, to: &out)
        case .float(let f): out.append(3); appendBigEndian(orderedBits(Double(f)), to: &out)
        case .double(let d): out.append(3); appendBigEndian(orderedBits(d), to: &out)
        case .date(let d): out.append(4); appendBigEndian(orderedBits(d.timeIntervalSinceReferenceDate), to: &out)
        case .string(let s): appendEscaped(s.utf8, count: s.utf8.count, to: &out)
        case .data(let d): appendEscaped(d, count: d.count, to: &out)
        case .uuid(let u):
            out.append(6)
            withUnsafeBytes(of: u.uuid) { out.append(contentsOf: $0) }
        }
    }

    private static func appendBigEndian(_ u: UInt64, to out: inout [UInt8]) {
        for i in stride(from: 56, through: 0, by: -8) { out.append(UInt8(truncatingIfNeeded: u >> UInt64(i))) }
    }

    /// A string's or data's index value, with room reserved for the object key an entry
    /// appends (built from pieces, it took five allocations per indexed string stored).
    private static func appendEscaped<C: Collection<UInt8>>(_ bytes: C, count: Int, to out: inout [UInt8]) {
        // Reserved only in a new array: reserving in a buffer that grows (`PendingIndexEntries`)
        // reallocated it to the exact size, copying every key before, for each key.
        if out.isEmpty { out.reserveCapacity(count + 3 + 9) }
        out.append(5)
        // Most values hold no zero byte: copied whole from their contiguous bytes, not
        // appended byte by byte (nor searched through a generic collection's iterator).
        let copied =
            bytes.withContiguousStorageIfAvailable { b in
                guard !b.contains(0) else { return false }
                out.append(contentsOf: b)
                return true
            } ?? false
        if !copied {
            for x in bytes {
                out.append(x)
                if x == 0 { out.append(1) }
            }
        }
        out.append(0)
        out.append(0)
    }

    /// The prefix every index key of a string starting with `prefix` has.
    static func indexStringPrefix(_ prefix: String) -> [UInt8] { [5] + escaped(Array(prefix.utf8)) }

    static func escaped(_ b: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(b.count + 2)
        for x in b {
            out.append(x)
            if x == 0 { out.append(1) }
        }
        return out
    }

    static func orderedDouble(_ d: Double) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(8)
        appendBigEndian(orderedBits(d), to: &out)
        return out
    }

    /// A double's bits, flipped so they sort as unsigned integers in the double's order.
    private static func orderedBits(_ d: Double) -> UInt64 {
        let bits = d.bitPattern
        return bits & (1 << 63) != 0 ? ~bits : bits | (1 << 63)
    }

    /// The smallest key greater than every key starting with `prefix`.
    static func successor(_ prefix: [UInt8]) -> [UInt8]? {
        var p = prefix
        while let last = p.last {
            if last < 0xFF { p[p.count - 1] = last + 1; return p }
            p.removeLast()
        }
        return nil
    }
}

/// A self-describing value encoding (kind byte, then payload), for list elements.
enum TaggedValue {
    static func encode(_ v: ObjectValue, into out: inout [UInt8]) {
        switch v {
        case .null: out.append(0)
        case .bool(let b): out.append(b ? 2 : 1)
        case .int(let i): appendInteger(&out, i, tag: 3, short: 11)
        case .float(let f): out.append(4); append64(&out, UInt64(f.bitPattern))
        case .double(let d): out.append(5); append64(&out, d.bitPattern)
        case .date(let d): out.append(6); append64(&out, d.timeIntervalSinceReferenceDate.bitPattern)
        case .uuid(let u): out.append(7); withUnsafeBytes(of: u.uuid) { out.append(contentsOf: $0) }
        case .link(let k): appendInteger(&out, k, tag: 8, short: 12)
        case .string(let s): out.append(9); append64(&out, UInt64(s.utf8.count)); out.append(contentsOf: s.utf8)
        case .data(let d): out.append(10); append64(&out, UInt64(d.count)); out.append(contentsOf: d)
        }
    }

    static func decodeAll(_ b: UnsafeRawBufferPointer) throws -> [ObjectValue] {
        var out: [ObjectValue] = []
        var o = 0
        func u64() throws -> UInt64 {
            guard o + 8 <= b.count else { throw RowError("list element truncated") }
            defer { o += 8 }
            return b.u64(o)
        }
        while o < b.count {
            let tag = b[o]; o += 1
            switch tag {
            case 0: out.append(.null)
            case 1, 2: out.append(.bool(tag == 2))
            case 3: out.append(.int(Int64(bitPattern: try u64())))
            case 4: out.append(.float(Float(bitPattern: UInt32(truncatingIfNeeded: try u64()))))
            case 5: out.append(.double(Double(bitPattern: try u64())))
            case 6: out.append(.date(Date(timeIntervalSinceReferenceDate: Double(bitPattern: try u64()))))
            case 7:
                guard o + 16 <= b.count else { throw RowError("list element truncated") }
                var u = UUID().uuid
                withUnsafeMutableBytes(of: &u) {
                    $0.copyMemory(from: UnsafeRawBufferPointer(rebasing: b[o..<(o + 16)]))
                }
                o += 16
                out.append(.uuid(UUID(uuid: u)))
            case 8: out.append(.link(Int64(bitPattern: try u64())))
            case 11, 12:
                guard let z = CompactRow.leb64(b, &o) else { throw RowError("list element truncated") }
                let v = Int64(bitPattern: z >> 1) ^ -Int64(bitPattern: z & 1)
                out.append(tag == 11 ? .int(v) : .link(v))
            case 9, 10:
                let n = Int(try u64())
                guard n >= 0, o + n <= b.count else { throw RowError("list element truncated") }
                let slice = UnsafeRawBufferPointer(rebasing: b[o..<(o + n)])
                out.append(tag == 9 ? .string(String(decoding: slice, as: UTF8.self)) : .data(Array(slice)))
                o += n
            default: throw RowError("unknown list element tag \(tag)")
            }
        }
        return out
    }

    /// An integer or link as `short` and its zigzag LEB128 when that is shorter than `tag`
    /// and 8 bytes (a dog's key in 4 bytes, not 9).
    private static func appendInteger(_ out: inout [UInt8], _ v: Int64, tag: UInt8, short: UInt8) {
        let z = UInt64(bitPattern: (v << 1) ^ (v >> 63))
        guard z < 1 << 49 else {
            out.append(tag)
            append64(&out, UInt64(bitPattern: v))
            return
        }
        out.append(short)
        // Into `out` itself: through a writer of its own, each element allocated an array.
        CompactRow.appendLeb(z, to: &out)
    }

    private static func append64(_ out: inout [UInt8], _ v: UInt64) {
        for i in 0..<8 { out.append(UInt8(truncatingIfNeeded: v >> (8 * UInt64(i)))) }
    }
}
