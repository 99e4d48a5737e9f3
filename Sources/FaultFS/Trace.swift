import Foundation

/// One line of the JSON-lines trace: every injected fault, power cut and (when asked) every
/// operation, with enough to replay the same faults on the same workload. No times or pids,
/// so two runs of the same workload under the same seed give the same file.
public struct TraceEvent: Codable, Equatable, Sendable {
    public var seq: UInt64
    public var seed: UInt64
    public var op: String
    public var path: String
    public var offset: Int64?
    public var length: Int?
    public var fault: String?
    public var rule: Int?
    public var outcome: String
}

/// Appends trace events to a file, one JSON object a line.
final class Trace: @unchecked Sendable {
    private let fd: Int32
    private let lock = NSLock()
    private let encoder: JSONEncoder = {
        let e = JSONEncoder()
        e.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return e
    }()
    let path: String

    init(path: String) throws {
        self.path = path
        fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw FaultFSError.io(path: path, what: "open the trace file", errno: errno) }
    }

    deinit { close(fd) }

    func append(_ event: TraceEvent) {
        guard var data = try? encoder.encode(event) else { return }
        data.append(0x0A)
        lock.lock()
        defer { lock.unlock() }
        _ = data.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
    }
}
