import FaultFS
import Foundation

/// One crash state at the operation level: which of the pending operations reached the disk,
/// and at most one write that reached it only in part, torn at a sector boundary (the
/// assumption of ALICE and CrashMonkey: a disk loses or tears writes, it does not scramble the
/// sectors of a page written whole). A torn write kept its first sectors: the power failed
/// while the request was being written, in order.
struct OperationState: Codable, Sendable, Equatable {
    /// A write that reached the disk up to a sector boundary.
    struct Tear: Codable, Sendable, Equatable {
        /// Index into the pending operations.
        var operation: Int
        /// Sectors kept, counted from the write's first sector: at least 1, fewer than all.
        var boundary: Int
    }

    /// Operations named per list in a description; the rest are counted.
    static let listed = 12

    /// One flag per pending operation, in their order.
    var persisted: [Bool]
    var torn: Tear?

    /// The state as a reader can check it: "persisted: write 2 of /db.fief [8192, 12288); lost:
    /// write 3 of /db.fief [0, 512); torn: write 1 of /db.fief [4096, 8192) after 5 sectors".
    func describe(_ operations: [PendingOperations.Operation]) -> String {
        let names = OperationState.names(operations)
        var kept: [String] = [], lost: [String] = []
        for (i, name) in names.enumerated() where torn?.operation != i {
            if persisted[i] { kept.append(name) } else { lost.append(name) }
        }
        // Name changes first: with a hundred small writes around them, they are what a reader
        // looks for ("unlink of /db.sqlite-journal lost").
        func list(_ l: [String]) -> String {
            let ordered = l.filter { !$0.hasPrefix("write ") } + l.filter { $0.hasPrefix("write ") }
            let shown = ordered.prefix(OperationState.listed).joined(separator: ", ")
            return l.isEmpty
                ? "none"
                : shown + (l.count > OperationState.listed ? " and \(l.count - OperationState.listed) more" : "")
        }
        var text = "persisted: \(list(kept)); lost: \(list(lost))"
        if let t = torn {
            text += "; torn: \(names[t.operation]) after \(t.boundary) sector\(t.boundary == 1 ? "" : "s")"
        }
        return text
    }

    /// Each operation named by its kind, its number among the file's pending writes, and what
    /// it touched.
    static func names(_ operations: [PendingOperations.Operation]) -> [String] {
        var writes: [String: Int] = [:]
        return operations.map { op in
            switch op.kind {
            case .write:
                writes[op.path, default: 0] += 1
                let start = op.offset ?? 0, end = start + Int64(op.bytes?.count ?? 0)
                return "write \(writes[op.path]!) of \(op.path) [\(start), \(end))"
            case .resize: return "resize of \(op.path) to \(op.size ?? 0)"
            case .rename: return "rename of \(op.path) to \(op.to ?? "?")"
            case .create, .mkdir, .unlink, .rmdir: return "\(op.kind.rawValue) of \(op.path)"
            }
        }
    }
}

extension PendingOperations.Operation {
    /// Sectors a write touches (0 for any other operation).
    var sectors: Int {
        guard kind == .write, let offset, let bytes, !bytes.isEmpty else { return 0 }
        let s = Int64(CrashImage.sector)
        return Int((offset + Int64(bytes.count) - 1) / s - offset / s + 1)
    }

    /// The part of a write that a tear keeps: its bytes up to `boundary` sectors past the
    /// write's first sector.
    func kept(by tear: OperationState.Tear) -> (offset: Int64, bytes: Data) {
        let offset = self.offset ?? 0, bytes = self.bytes ?? Data()
        let s = Int64(CrashImage.sector)
        let cut = Int((offset / s + Int64(tear.boundary)) * s - offset)
        return (offset, Data(bytes.prefix(cut)))
    }
}
