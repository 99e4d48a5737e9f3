#if canImport(Glibc)
    import Glibc
#endif

/// Directory entries as a disk would see them: a create, unlink, rename or link is durable
/// once its directory has been fsynced (POSIX's rule), or under an ext4 model once any sync
/// commits the journal (`PersistenceModel`). Until then a power cut may undo it. The changes apply to
/// the backing directory at once; an unlinked or replaced file is kept alive through a hard
/// link in a stash folder, so its entry can be put back.
final class Namespace {
    enum Change {
        /// `ino`: the backing inode the name now holds (0 for a directory), so a replay of the
        /// pending operations can tell which writes went to this file.
        case created(path: String, isDirectory: Bool, ino: UInt64)
        case removed(path: String, stash: String?)
        case removedDirectory(path: String, mode: mode_t)
        case renamed(from: String, to: String, replaced: String?)
    }

    struct Entry {
        let seq: UInt64
        let change: Change
        /// Directories (paths inside the mount, "/" for the root) whose fsync makes it durable.
        let directories: Set<String>
    }

    static let stashName = ".faultfs-stash"
    let root: String
    private(set) var pending: [Entry] = []
    private var stashed = 0

    init(root: String) { self.root = root }

    var stashDirectory: String { root + "/" + Namespace.stashName }

    static func parent(_ path: String) -> String {
        guard let slash = path.lastIndex(of: "/"), slash != path.startIndex else { return "/" }
        return String(path[..<slash])
    }

    func record(_ seq: UInt64, _ change: Change) {
        var dirs: Set<String>
        switch change {
        case .created(let p, _, _), .removed(let p, _), .removedDirectory(let p, _): dirs = [Namespace.parent(p)]
        case .renamed(let from, let to, _): dirs = [Namespace.parent(from), Namespace.parent(to)]
        }
        pending.append(Entry(seq: seq, change: change, directories: dirs))
    }

    /// Keeps the file at `path` (inside the mount) reachable before it is unlinked or
    /// replaced. Returns the stash path, or nil when there is nothing to keep.
    func stash(_ path: String) -> String? {
        var st = stat()
        guard lstat(root + path, &st) == 0, (st.st_mode & S_IFMT) != S_IFDIR else { return nil }
        mkdir(stashDirectory, 0o700)
        stashed += 1
        let name = "\(stashDirectory)/\(getpid())-\(stashed)"
        return link(root + path, name) == 0 ? name : nil
    }

    /// The directory at `path` was fsynced.
    func synced(directory path: String) {
        pending.removeAll { entry in
            guard entry.directories.contains(path) else { return false }
            Namespace.forgetStash(entry.change)
            return true
        }
    }

    /// A journal commit: every pending change is durable.
    func syncedAll() {
        for entry in pending { Namespace.forgetStash(entry.change) }
        pending.removeAll()
    }

    private static func forgetStash(_ change: Change) {
        switch change {
        case .removed(_, let s?), .renamed(_, _, let s?): unlink(s)
        default: break
        }
    }

    /// Undoes every pending change after the first `keep`, newest first, then treats what is
    /// left as durable. Returns the number undone.
    @discardableResult
    func powerCut(keep: Int) -> Int {
        let undo = pending.dropFirst(keep).reversed()
        for entry in undo {
            switch entry.change {
            case .created(let p, let isDirectory, _):
                if isDirectory { rmdir(root + p) } else { unlink(root + p) }
            case .removed(let p, let s):
                if let s { link(s, root + p) }
            case .removedDirectory(let p, let mode):
                mkdir(root + p, mode)
            case .renamed(let from, let to, let replaced):
                rename(root + to, root + from)
                if let replaced { link(replaced, root + to) }
            }
        }
        let count = undo.count
        forgetAll()
        return count
    }

    /// Drops the pending list and the stash (on a power cut's end, or a clean unmount).
    func forgetAll() {
        syncedAll()
        rmdir(stashDirectory)
    }
}
