#if canImport(Glibc)
    import Glibc
#endif
import FaultFS
import Foundation

/// The files and directories of a FaultFS backing folder as a disk holds them after a drop-all
/// power cut (every unsynced operation undone): what every crash state starts from. Paths are
/// as inside the mount ("/db.fief"). A crash state is this tree with the operations it names
/// replayed over it, in their order, then written out as a folder the store's verifier opens.
struct DurableTree: Equatable, Sendable {
    var files: [String: Data]
    var directories: Set<String>

    /// Reads every file and directory under `backing` (FaultFS's stash excluded).
    static func read(_ backing: String) throws -> DurableTree {
        var tree = DurableTree(files: [:], directories: [])
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
                tree.write(bytes, at: offset, to: op.path)
            } else if state.persisted[i] {
                tree.apply(op)
            }
        }
        return tree
    }

    mutating func apply(_ op: PendingOperations.Operation) {
        switch op.kind {
        case .write: write(op.bytes ?? Data(), at: op.offset ?? 0, to: op.path)
        case .resize:
            guard var bytes = files[op.path] else { return }
            let size = Int(op.size ?? 0)
            if size < bytes.count { bytes = bytes.prefix(size) } else { bytes.append(Data(count: size - bytes.count)) }
            files[op.path] = bytes
        case .create: files[op.path] = files[op.path] ?? Data()
        case .mkdir: directories.insert(op.path)
        case .unlink: files[op.path] = nil
        case .rmdir: directories.remove(op.path)
        case .rename:
            guard let to = op.to else { return }
            if let bytes = files.removeValue(forKey: op.path) {
                files[to] = bytes
            } else if directories.remove(op.path) != nil {
                directories.insert(to)
                for (p, b) in files where p.hasPrefix(op.path + "/") {
                    files[p] = nil
                    files[to + p.dropFirst(op.path.count)] = b
                }
            }
        }
    }

    /// A write to a file this state does not hold (its create was lost) reaches nothing.
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
        for (p, bytes) in files {
            try bytes.write(to: URL(fileURLWithPath: dir + p))
        }
    }
}
