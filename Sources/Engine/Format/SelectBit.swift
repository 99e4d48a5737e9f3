/// Which top slot is current (docs/FORMAT.md §1.1): one byte of the header, flipped by a
/// single one-byte write.
public enum SelectBit: UInt8, Sendable {
    case slot0 = 0
    case slot1 = 1

    var index: Int { Int(rawValue) }
    var other: SelectBit { self == .slot0 ? .slot1 : .slot0 }

    /// The bit a header page holds; nil when its byte is neither 0 nor 1.
    init?(header: UnsafeRawBufferPointer) {
        guard header.count > Layout.selectOffset else { return nil }
        self.init(rawValue: header.u8(Layout.selectOffset))
    }

    /// The byte to write at `Layout.selectOffset` to select this slot.
    var byte: [UInt8] { [rawValue] }
}
