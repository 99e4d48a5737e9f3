/// What the header's format number says about a file: whether its pages are encrypted,
/// whether a commit may keep a small free list inside the top node, and whether a node's
/// checksum leaves out its free gap. Older formats are still opened and written as they are, so
/// an older engine can go on reading them; `compact` and `writeCopy` write the current format.
struct FileFormat: Equatable, Sendable {
    let number: UInt32

    static let current = FileFormat(number: 7)
    static let currentEncrypted = FileFormat(number: 5)
    static let known: [UInt32] = [2, 3, 4, 5, 6, 7]

    static func new(encrypted: Bool) -> FileFormat { encrypted ? currentEncrypted : current }

    /// nil for a number this engine does not know.
    init?(_ number: UInt32) {
        guard FileFormat.known.contains(number) else { return nil }
        self.number = number
    }

    private init(number: UInt32) { self.number = number }

    var isEncrypted: Bool { number == 3 || number == 5 }
    /// Format 4 and later: the top node may hold the free list's extents (`Meta.freeExtents`)
    /// and an embedded catalog leaf.
    var fillsTopNode: Bool { number >= 4 }
    /// Format 6 (plain): node and top-node checksums leave out the free gap (`PageHeader.seal`).
    /// Reading needs no format: each page's header says what its checksum covers.
    var checksumSkipsGap: Bool { number >= 6 && !isEncrypted }
    /// Format 7 (plain): every page's checksum is seeded with its file offset (flagged in the
    /// page, `PageHeader.placedFlag`). Encrypted pages are bound to their offset by the cipher.
    var checksumIsPlaced: Bool { number >= 7 && !isEncrypted }
}

extension Database {
    /// The file format this engine writes (for a plain file), for results that must say which
    /// format they measured.
    public static var formatVersion: Int { Int(FileFormat.current.number) }
}
