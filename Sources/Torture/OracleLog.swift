#if canImport(Glibc)
    import Glibc
#endif

/// The record, kept outside the database under test (on a filesystem without faults), of what
/// each writer attempted and what it was told had committed. Each line is synced before the
/// writer goes on, so the log outlives the crash it witnesses.
///
/// Lines: `intent <commit>` before a commit starts, `ack <commit> <version>` after it returned.
public final class OracleLog {
    let fd: Int32
    public let path: String

    public init(path: String) throws {
        self.path = path
        fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw TortureError.io("open oracle log \(path)", errno) }
    }

    deinit { close(fd) }

    public func intent(_ commit: UInt64) throws { try append("intent \(commit)\n") }
    public func ack(_ commit: UInt64, version: UInt64) throws { try append("ack \(commit) \(version)\n") }
    /// For targets without version numbers: `ack <commit>`.
    public func ack(_ commit: UInt64) throws { try append("ack \(commit)\n") }

    private func append(_ line: String) throws {
        let bytes = Array(line.utf8)
        let n = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        guard n == bytes.count else { throw TortureError.io("write oracle log \(path)", errno) }
        guard fdatasync(fd) == 0 else { throw TortureError.io("sync oracle log \(path)", errno) }
    }

    /// What the log says: the highest commit attempted and the highest acknowledged.
    public struct Summary: Equatable, Sendable {
        public var lastIntent: UInt64 = 0
        public var lastAck: UInt64 = 0
        public var ackedVersions: [UInt64: UInt64] = [:]
    }

    public static func read(_ path: String) throws -> Summary {
        guard let f = fopen(path, "r") else {
            if errno == ENOENT { return Summary() }
            throw TortureError.io("read oracle log \(path)", errno)
        }
        defer { fclose(f) }
        var s = Summary()
        var line: UnsafeMutablePointer<CChar>? = nil
        var cap = 0
        while getline(&line, &cap, f) > 0 {
            let parts = String(cString: line!).split(separator: " ").map { $0.trimmingCharacters() }
            if parts.count >= 2, let n = UInt64(parts[1]) {
                if parts[0] == "intent" { s.lastIntent = max(s.lastIntent, n) }
                if parts[0] == "ack" {
                    s.lastAck = max(s.lastAck, n)
                    if parts.count >= 3, let v = UInt64(parts[2]) { s.ackedVersions[n] = v }
                }
            }
        }
        free(line)
        return s
    }
}

extension Substring {
    func trimmingCharacters() -> String {
        String(self.filter { $0 != "\n" && $0 != "\r" })
    }
}

public enum TortureError: Error, CustomStringConvertible {
    case io(String, Int32)
    case spawn(String)
    case invalid(String)

    public var description: String {
        switch self {
        case .io(let what, let e): return "\(what): \(String(cString: strerror(e)))"
        case .spawn(let s): return "could not start a child process: \(s)"
        case .invalid(let s): return s
        }
    }
}
