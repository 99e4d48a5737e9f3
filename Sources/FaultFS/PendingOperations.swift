import Foundation

/// What `ctl pending --json` prints: every operation since the last durable point that a power
/// cut could still undo, in the order the program made them, with the bytes each write wrote.
/// A crash-state enumeration replays any subset of them over the durable files (ALICE's and
/// CrashMonkey's unit of persistence), where `status` gives only the byte ranges they touched.
/// The persistence model has already been applied: an operation that a sync made durable (its
/// own, its directory's, or a journal commit) is not here.
public struct PendingOperations: Codable, Sendable, Equatable {
    /// One file with unsynced writes or resizes: its size as a cut would leave it with none.
    public struct File: Codable, Sendable, Equatable {
        public var path: String
        public var durableSize: Int64
        public init(path: String, durableSize: Int64) {
            self.path = path
            self.durableSize = durableSize
        }
    }

    public struct Operation: Codable, Sendable, Equatable {
        public enum Kind: String, Codable, Sendable {
            case write, resize, create, mkdir, unlink, rmdir, rename
        }
        /// FaultFS's sequence number: the order of every operation on the mount.
        public var seq: UInt64
        public var kind: Kind
        /// The file created or removed; a rename's source; the file written or resized, by the
        /// name it had when it was (a later rename that a cut may undo does not move it).
        public var path: String
        /// A write's offset and bytes.
        public var offset: Int64?
        public var bytes: Data?
        /// A resize's new size.
        public var size: Int64?
        /// A rename's destination.
        public var to: String?
        /// The backing inode a write or resize changed, or a create made: which file an
        /// operation touches when the names around it did not all persist.
        public var ino: UInt64?

        public init(
            seq: UInt64, kind: Kind, path: String, offset: Int64? = nil, bytes: Data? = nil, size: Int64? = nil,
            to: String? = nil, ino: UInt64? = nil
        ) {
            self.ino = ino
            self.seq = seq
            self.kind = kind
            self.path = path
            self.offset = offset
            self.bytes = bytes
            self.size = size
            self.to = to
        }

        /// Whether it changes a directory entry rather than a file's bytes: such changes reach
        /// the disk as a prefix in every model (a journal never reorders them).
        public var isNameChange: Bool { kind != .write && kind != .resize }
    }

    public var files: [File]
    /// Ascending by `seq`.
    public var operations: [Operation]

    public init(files: [File], operations: [Operation]) {
        self.files = files
        self.operations = operations
    }
}

extension FaultFileSystem {
    public func pendingOperations() -> PendingOperations {
        lock.lock()
        defer { lock.unlock() }
        let changed = files.values.filter { !$0.isClean }.sorted { $0.path < $1.path }
        let renames = namespace.pending.compactMap { e -> (seq: UInt64, from: String, to: String)? in
            if case .renamed(let from, let to, _) = e.change { return (e.seq, from, to) }
            return nil
        }
        /// The name `path` had at `seq`: pending renames after it undone, newest first.
        func name(_ path: String, at seq: UInt64) -> String {
            renames.reversed().reduce(path) { p, r in r.seq > seq && p == r.to ? r.from : p }
        }
        var ops: [PendingOperations.Operation] = []
        for f in changed {
            for p in f.pending {
                switch p {
                case .write(let seq, let offset, let bytes):
                    ops.append(
                        .init(
                            seq: seq, kind: .write, path: name(f.path, at: seq), offset: offset, bytes: Data(bytes),
                            ino: f.ino))
                case .resize(let seq, let size):
                    ops.append(.init(seq: seq, kind: .resize, path: name(f.path, at: seq), size: size, ino: f.ino))
                }
            }
        }
        for entry in namespace.pending {
            switch entry.change {
            case .created(let p, let isDirectory, let ino):
                ops.append(.init(seq: entry.seq, kind: isDirectory ? .mkdir : .create, path: p, ino: ino))
            case .removed(let p, _): ops.append(.init(seq: entry.seq, kind: .unlink, path: p))
            case .removedDirectory(let p, _): ops.append(.init(seq: entry.seq, kind: .rmdir, path: p))
            case .renamed(let from, let to, _): ops.append(.init(seq: entry.seq, kind: .rename, path: from, to: to))
            }
        }
        return PendingOperations(
            files: changed.map { .init(path: $0.path, durableSize: $0.durableSize) },
            operations: ops.sorted { $0.seq < $1.seq })
    }
}
