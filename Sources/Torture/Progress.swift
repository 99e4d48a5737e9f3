import Foundation

/// Progress of a long run: a line redrawn in place on a terminal, plain lines (at most every
/// few seconds) when output goes to a file or CI log.
public final class Progress: @unchecked Sendable {
    private let lock = NSLock()
    private let isTerminal = isatty(STDERR_FILENO) == 1 && ProcessInfo.processInfo.environment["CI"] == nil
    private var lastPlain = Date.distantPast
    private let start = Date()
    public var quiet = false

    public init() {}

    public func update(
        scenario: String, cycles: Int, total: Int?, faults: Int, violations: Int, remaining: Double? = nil
    ) {
        lock.lock()
        defer { lock.unlock() }
        guard !quiet else { return }
        let elapsed = Date().timeIntervalSince(start)
        let of = total.map { "/\($0)" } ?? ""
        var line =
            "[\(scenario)] cycles \(cycles)\(of)  faults \(faults)  violations \(violations)  elapsed \(Int(elapsed))s"
        if let remaining { line += "  remaining ~\(Int(remaining))s" }
        if isTerminal {
            FileHandle.standardError.write(Data("\r\u{1B}[K\(line)".utf8))
        } else if Date().timeIntervalSince(lastPlain) >= 5 || (total != nil && cycles == total) {
            lastPlain = Date()
            FileHandle.standardError.write(Data("\(line)\n".utf8))
        }
    }

    public func say(_ s: String) {
        lock.lock()
        defer { lock.unlock() }
        if isTerminal { FileHandle.standardError.write(Data("\r\u{1B}[K".utf8)) }
        print(s)
        fflush(stdout)
    }

    public func endLine() {
        lock.lock()
        defer { lock.unlock() }
        if isTerminal { FileHandle.standardError.write(Data("\n".utf8)) }
    }
}
