import FaultFS
import Foundation

/// The files and directories of a FaultFS backing folder as a disk holds them after a drop-all
/// power cut (every unsynced operation undone): what every crash state starts from. Paths are
/// as inside the mount ("/db.fief"). A crash state is this tree with the operations it names
/// replayed over it, in their order, then written out as a folder the store's verifier opens.
/// Files are known by their backing inode too: a write goes to the file it was made to, where
/// that file is in the state (its create or rename may not have persisted), not to whatever
/// holds its name.
struct DurableTree: Equatable, Sendable {
    var files: [String: Data]
    var directories: Set<String>
    var inodes: [String: UInt64] = [:]

    /// Reads every file and directory under `backing` (FaultFS's stash excluded).
    static func read(_ backing: String) throws -> DurableTree {
        var tree = DurableTree(files: [:], directories: [], inodes: [:])
        guard let walk = FileManager.default.enumerator(atPath: backing) else {
            throw TortureError.invalid("\(backing): cannot list the backing folder")
        }
        while let relative = walk.nextObject() as? String {
            if relative == ".faultfs-stash" || relative.hasPrefix(".faultfs-stash/") { continue }
            let full = backing + "/" + relative
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: full, isDirectory: &isDirectory) else { continue }
            if isDirectory.boolValue {
                tree.directories.insert("/" + relative)
            } else {
                tree.files["/" + relative] = try Data(contentsOf: URL(fileURLWithPath: full))
                var st = stat()
                if lstat(full, &st) == 0 { tree.inodes["/" + relative] = UInt64(st.st_ino) }
            }
        }
        return tree
    }

    /// The tree after the operations `state` keeps reached the disk, in their order.
    func applying(_ state: OperationState, of operations: [PendingOperations.Operation]) -> DurableTree {
        var tree = self
        for (i, op) in operations.enumerated() {
            if state.torn?.operation == i, let tear = state.torn {
                let (offset, bytes) = op.kept(by: tear)
                if let path = tree.path(of: op) { tree.write(bytes, at: offset, to: path) }
            } else if state.persisted[i] {
                tree.apply(op)
            }
        }
        return tree
    }

    mutating func apply(_ op: PendingOperations.Operation) {
        switch op.kind {
        case .write:
            guard let path = path(of: op) else { return }
            write(op.bytes ?? Data(), at: op.offset ?? 0, to: path)
        case .resize:
            guard let path = path(of: op), var bytes = files[path] else { return }
            let size = Int(op.size ?? 0)
            if size < bytes.count { bytes = bytes.prefix(size) } else { bytes.append(Data(count: size - bytes.count)) }
            files[path] = bytes
        case .create:
            files[op.path] = files[op.path] ?? Data()
            inodes[op.path] = op.ino
        case .mkdir: directories.insert(op.path)
        case .unlink:
            files[op.path] = nil
            inodes[op.path] = nil
        case .rmdir: directories.remove(op.path)
        case .rename:
            guard let to = op.to else { return }
            if let bytes = files.removeValue(forKey: op.path) {
                files[to] = bytes
                inodes[to] = inodes.removeValue(forKey: op.path)
            } else if directories.remove(op.path) != nil {
                directories.insert(to)
                for (p, b) in files where p.hasPrefix(op.path + "/") {
                    files[p] = nil
                    files[to + p.dropFirst(op.path.count)] = b
                    inodes[to + p.dropFirst(op.path.count)] = inodes.removeValue(forKey: p)
                }
            }
        }
    }

    /// Where the file a write or resize changed is in this state: the path holding its inode,
    /// or nil when none does (its create was lost, or it is gone).
    func path(of op: PendingOperations.Operation) -> String? {
        guard let ino = op.ino, ino != 0 else { return files[op.path] == nil ? nil : op.path }
        if inodes[op.path] == ino { return op.path }
        return inodes.first { $0.value == ino }?.key
    }

    mutating func write(_ bytes: Data, at offset: Int64, to path: String) {
        guard var file = files[path] else { return }
        let start = Int(offset), end = start + bytes.count
        if file.count < end { file.append(Data(count: end - file.count)) }
        file.replaceSubrange(start..<end, with: bytes)
        files[path] = file
    }

    /// Writes the tree into `dir`, which is emptied first.
    func write(into dir: String) throws {
        try? FileManager.default.removeItem(atPath: dir)
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        for d in directories.sorted() {
            try FileManager.default.createDirectory(atPath: dir + d, withIntermediateDirectories: true)
        }
        for (p, bytes) in files { try DurableTree.writeSparse(bytes, to: dir + p) }
    }

    /// Writes `bytes` skipping 4 KiB blocks of zeros, so a store's sparse file (LMDB's
    /// `writemap` map) stays sparse in each of the many states written.
    static func writeSparse(_ bytes: Data, to path: String) throws {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw TortureError.io("create \(path)", errno) }
        defer { close(fd) }
        guard ftruncate(fd, off_t(bytes.count)) == 0 else { throw TortureError.io("size \(path)", errno) }
        let block = 4096
        let zeros = [UInt8](repeating: 0, count: block)
        try bytes.withUnsafeBytes { all in
            var at = 0
            while at < all.count {
                let n = min(block, all.count - at)
                let piece = UnsafeRawBufferPointer(rebasing: all[at..<(at + n)])
                if memcmp(piece.baseAddress!, zeros, n) != 0 {
                    guard pwrite(fd, piece.baseAddress, n, off_t(at)) == n else {
                        throw TortureError.io("write \(path)", errno)
                    }
                }
                at += n
            }
        }
    }
}
