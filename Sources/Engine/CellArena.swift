/// The bytes of a dirty node's cells, in one heap block: copying a node out of its page is one
/// allocation and one memcpy, not an array per key. Cells are only ever appended; a replaced
/// or removed cell stays behind as garbage until the block is full, when the node copies its
/// live cells into a fresh block (see `DirtyNode.reserve`).
final class CellArena {
    let bytes: UnsafeMutableRawBufferPointer
    /// Bytes in use, garbage included; the next cell goes here.
    @exclusivity(unchecked) var used = 0

    init(capacity: Int) {
        bytes = UnsafeMutableRawBufferPointer.allocate(byteCount: capacity, alignment: 8)
    }

    deinit { bytes.deallocate() }

    var capacity: Int { bytes.count }
    var free: Int { bytes.count - used }

    /// Space for one cell of `length` bytes at the end; returns its offset.
    func claim(_ length: Int) -> Int {
        precondition(length <= free, "cell arena overrun")
        let o = used
        used += length
        return o
    }

    func slice(_ offset: Int, _ length: Int) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(bytes)[offset..<(offset + length)])
    }
}
