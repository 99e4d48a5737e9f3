/// A leaf's cell (docs/FORMAT.md §1.3): keyLen u16 | flags u8 | pad u8 | valueLen u32 |
/// [overflow ref u64] | key | [inline value]. Defined here only: `PageView` (mapped pages),
/// `DirtyNode` (its arena holds cells in the same layout) and their hot loops all read and
/// write cells through these.
enum LeafCell {
    enum Offset {
        static let keyLength = 0
        static let flags = 2
        static let pad = 3
        static let valueLength = 4
        /// Only in a cell whose value is in an overflow extent.
        static let overflowRef = 8
    }
    /// A cell's header: where the key starts when the value is inline.
    static let headerSize = 8
    /// With the overflow ref: where the key starts when the value is in an overflow extent.
    static let overflowHeaderSize = 16
    /// Flags bit: the value is in an overflow extent.
    static let overflowFlag: UInt8 = 1
    /// Flags bit, in memory only, never on a page: a large value not yet written to an
    /// overflow extent (its bytes are inline in the arena until the commit).
    static let pendingLargeFlag: UInt8 = 2

    @inline(__always) static func keyLength(_ raw: UnsafeRawBufferPointer, at o: Int) -> Int {
        Int(raw.u16(o + Offset.keyLength))
    }
    @inline(__always) static func valueLength(_ raw: UnsafeRawBufferPointer, at o: Int) -> Int {
        Int(raw.u32(o + Offset.valueLength))
    }
    @inline(__always) static func flags(_ raw: UnsafeRawBufferPointer, at o: Int) -> UInt8 {
        raw.u8(o + Offset.flags)
    }
    @inline(__always) static func isOverflow(_ raw: UnsafeRawBufferPointer, at o: Int) -> Bool {
        flags(raw, at: o) & overflowFlag != 0
    }
    /// Where the key of the cell at `o` starts.
    @inline(__always) static func keyStart(_ raw: UnsafeRawBufferPointer, at o: Int) -> Int {
        o + (isOverflow(raw, at: o) ? overflowHeaderSize : headerSize)
    }
    /// Bytes of the cell at `o`, whose header must lie inside `raw`.
    @inline(__always) static func length(_ raw: UnsafeRawBufferPointer, at o: Int) -> Int {
        let k = keyLength(raw, at: o)
        return isOverflow(raw, at: o) ? overflowHeaderSize + k : headerSize + k + valueLength(raw, at: o)
    }

    /// The header of a cell at `o` (and, with `overflowRef`, the ref after it); the key goes at
    /// `o + headerSize` (inline) or `o + overflowHeaderSize` (overflow).
    @inline(__always)
    static func writeHeader(
        _ p: UnsafeMutableRawBufferPointer, at o: Int, keyLength: Int, flags: UInt8, valueLength: Int,
        overflowRef: UInt64? = nil
    ) {
        p.setU16(UInt16(keyLength), at: o + Offset.keyLength)
        p.setU8(flags, at: o + Offset.flags)
        p.setU8(0, at: o + Offset.pad)
        p.setU32(UInt32(valueLength), at: o + Offset.valueLength)
        if let overflowRef { p.setU64(overflowRef, at: o + Offset.overflowRef) }
    }
}

/// A branch's cell (docs/FORMAT.md §1.3): child ref u64 | keyLen u16 | key. Key 0 is a lower
/// bound only.
enum BranchCell {
    enum Offset {
        static let child = 0
        static let keyLength = 8
    }
    static let headerSize = 10

    @inline(__always) static func child(_ raw: UnsafeRawBufferPointer, at o: Int) -> UInt64 {
        raw.u64(o + Offset.child)
    }
    @inline(__always) static func keyLength(_ raw: UnsafeRawBufferPointer, at o: Int) -> Int {
        Int(raw.u16(o + Offset.keyLength))
    }
    @inline(__always) static func length(_ raw: UnsafeRawBufferPointer, at o: Int) -> Int {
        headerSize + keyLength(raw, at: o)
    }

    @inline(__always)
    static func writeHeader(_ p: UnsafeMutableRawBufferPointer, at o: Int, child: UInt64, keyLength: Int) {
        p.setU64(child, at: o + Offset.child)
        p.setU16(UInt16(keyLength), at: o + Offset.keyLength)
    }
}

/// A node's cell offset array (docs/FORMAT.md §1.3): one u16 per cell, in key order, right
/// after the page header; the cells it points to are packed from the end of the node, the
/// last cell lowest.
enum CellOffsets {
    /// Where entry `i` of the array sits.
    @inline(__always) static func position(_ i: Int) -> Int { Layout.pageHeaderSize + 2 * i }
    /// Where the array of `count` entries ends: the lowest a cell may start.
    @inline(__always) static func end(count: Int) -> Int { position(count) }
    @inline(__always) static func offset(_ raw: UnsafeRawBufferPointer, _ i: Int) -> Int {
        Int(raw.u16(position(i)))
    }
    @inline(__always) static func set(_ p: UnsafeMutableRawBufferPointer, _ i: Int, to o: Int) {
        p.setU16(UInt16(o), at: position(i))
    }
}
