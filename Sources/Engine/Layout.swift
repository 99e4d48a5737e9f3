/// Where things are in a database file. The header is page 0; nodes follow, each starting
/// on a page boundary, addressed by byte offset ("ref"). The select byte and each top slot
/// sit in different 512-byte sectors, so flipping the select bit never rewrites a sector
/// that holds the active slot, and writing the inactive slot never touches the active one.
enum Layout {
    static let pageSize = 4096
    static let magic: [UInt8] = Array("FIEFDB\r\n".utf8)
    // Format numbers (`FileFormat`): 2, the free list as chunk pages under a root chain;
    // 3, format 2 with every page encrypted and authenticated (`PageEnvelope`) and the
    // header's encryption record; 4 and 5, formats 2 and 3 whose top node may hold a small
    // free list itself.

    static let magicOffset = 0
    static let formatOffset = 8
    static let pageSizeOffset = 12
    static let headerChecksumOffset = 16  // over bytes 0..<16
    static let selectOffset = 24  // sector 0
    static let slotOffsets = [512, 1024]  // sectors 1 and 2
    static let slotSize = 32
    /// Encrypted formats only, in sector 0: file salt [16] | key check [16] | checksum u64 of the two.
    static let fileSaltOffset = 32
    static let keyCheckOffset = 48
    static let encryptionChecksumOffset = 64

    static let pageHeaderSize = 32
    static let maxKeySize = 1024
    static let maxValueSize = 16 * 1024 * 1024
    /// A key and value larger than this together go to an overflow extent, which keeps at
    /// least two cells in every leaf.
    static let maxInlineCell = 2000

    static func pages(forBytes n: Int) -> Int { (n + pageSize - 1) / pageSize }
}

/// Page kinds, stored in each page header.
enum PageKind: UInt8 {
    case branch = 1
    case leaf = 2
    case overflow = 3
    case meta = 4
    case freeList = 5
    case freeListChunk = 6

    var name: String {
        switch self {
        case .branch: return "branch"
        case .leaf: return "leaf"
        case .overflow: return "overflow"
        case .meta: return "meta"
        case .freeList: return "free-list"
        case .freeListChunk: return "free-list chunk"
        }
    }
}
