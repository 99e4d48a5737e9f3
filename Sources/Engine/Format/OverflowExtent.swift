/// An overflow extent (docs/FORMAT.md §1.4): `span` pages, the common header on the first
/// (kind 3, extra = the value's length), then the value, then zeros.
enum OverflowExtent {
    /// Where the value starts in the extent.
    static let valueOffset = Layout.pageHeaderSize
    /// Pages an extent of a `length`-byte value takes (the one span formula).
    static func span(valueLength length: Int, _ g: PageGeometry) -> Int { g.span(forNodeBytes: valueOffset + length) }
}
