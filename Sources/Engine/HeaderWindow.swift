#if canImport(Glibc)
    import Glibc
#endif
import CFiefSys

/// A writable shared mapping of the header page, for commits that do not sync
/// (`Durability.none`): their top slot and select bit become stores into the page cache
/// instead of two `pwrite`s, two system calls of the three such a commit made (LMDB's
/// `MDB_WRITEMAP` writes its meta page the same way). Readers see the same page through their
/// own mappings, and they already re-read a slot that fails its checksum. Durable commits
/// keep `pwrite`: each of their header writes reaches the filesystem (and FaultFS) as one
/// write, in protocol order, which the crash-state enumeration relies on.
final class HeaderWindow {
    private let page: UnsafeMutableRawPointer

    /// nil when the file cannot be mapped writable (a filesystem without shared writable
    /// mappings): the caller writes with `pwrite` instead.
    init?(fd: Int32) {
        let p = mmap(nil, Layout.pageSize, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)
        guard let p, p != MAP_FAILED else { return nil }
        page = p
    }

    deinit { munmap(page, Layout.pageSize) }

    /// Copies `bytes` to `offset` in the header page. The fence first makes every earlier
    /// store visible before these (the slot before the flip that selects it).
    func store(_ bytes: [UInt8], at offset: Int) {
        precondition(offset >= 0 && offset + bytes.count <= Layout.pageSize)
        fief_fence()
        bytes.withUnsafeBytes { (page + offset).copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
    }
}
