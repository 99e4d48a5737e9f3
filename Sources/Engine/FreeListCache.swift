/// The free list as this handle's last commit left it, so the next write transaction starts
/// from memory instead of decoding every chunk. Valid only while that commit's version is
/// still the newest of the same file: any other writer (handle or process) commits a new
/// version, and `compact` swaps the file, and either makes the key stop matching.
/// Touched only by the writer (under the writer lock), so it needs no lock of its own.
final class FreeListCache: @unchecked Sendable {
    private var key: (fileID: String, slot: TopSlot)?
    private var list: FreeList?

    /// The list stored by the version `slot` names, if this handle committed it last.
    func list(fileID: String, slot: TopSlot) -> FreeList? {
        guard let key, key.fileID == fileID, key.slot == slot else { return nil }
        return list
    }

    func store(_ list: FreeList, fileID: String, slot: TopSlot) {
        key = (fileID, slot)
        self.list = list
    }

    func clear() {
        key = nil
        list = nil
    }
}
