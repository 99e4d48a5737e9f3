/// The free list's own pages (docs/FORMAT.md §1.6), after the common page header: a chunk page
/// (kind 6) holds `count` free extents of `FreeExtent.size` bytes, a root page (kind 5) `count`
/// chunk refs of 8 bytes. `FreeListStorage` reads and writes both through these.
enum FreeListPages {
    /// Where extent `i` of a chunk page starts.
    @inline(__always) static func chunkEntry(_ i: Int) -> Int { Layout.pageHeaderSize + i * FreeExtent.size }
    /// Where chunk ref `i` of a root page sits.
    @inline(__always) static func rootRef(_ i: Int) -> Int { Layout.pageHeaderSize + 8 * i }
    /// Chunk refs a root page of `g`'s node bytes holds.
    static func refsPerRootPage(_ g: PageGeometry) -> Int { (g.pageBytes - Layout.pageHeaderSize) / 8 }
    /// Extents a chunk page of `g`'s node bytes holds.
    static func extentsPerChunk(_ g: PageGeometry) -> Int { (g.pageBytes - Layout.pageHeaderSize) / FreeExtent.size }
}
