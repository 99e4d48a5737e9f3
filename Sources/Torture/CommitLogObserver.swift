import Engine
import Foundation

/// What an observer process of the `notify` scenario is given: the database, its log, the
/// stop file the scenario writes the final version into, and how long to wait for it after.
public struct ObserverFiles: Sendable {
    public let dbPath: String
    public let logPath: String
    public let stopPath: String
    public let graceSeconds: Double

    /// The final version, once the scenario has written it.
    func finalVersion() -> UInt64? {
        (try? String(contentsOfFile: stopPath, encoding: .utf8)).flatMap {
            UInt64($0.trimmingCharacters(in: .whitespacesAndNewlines))
        }
    }
}

/// Either kind of `notify` observer process: what it was given, by name.
protocol ObserverProcess {
    var files: ObserverFiles { get }
}

extension ObserverProcess {
    var dbPath: String { files.dbPath }
    var logPath: String { files.logPath }
    var graceSeconds: Double { files.graceSeconds }
}

/// An observer process of the `notify` scenario: logs every range `observeCommits` delivers,
/// then, once the scenario writes the final version into the stop file, waits for a delivery
/// that reaches it (at most `graceSeconds`) and logs how its watcher woke.
///
/// Log lines: `start V`, `range FROM TO` per delivery, `reached V MS` or `missed V`, and
/// `wakes DOORBELL TIMEOUT`.
public struct CommitLogObserver: ObserverProcess {
    public let files: ObserverFiles

    public init(_ files: ObserverFiles) { self.files = files }

    final class Log: @unchecked Sendable {
        private let lock = NSLock()
        private let handle: FileHandle
        private(set) var reached: UInt64 = 0
        init(_ path: String) throws {
            _ = FileManager.default.createFile(atPath: path, contents: nil)
            guard let h = FileHandle(forWritingAtPath: path) else { throw TortureError.invalid("cannot write \(path)") }
            handle = h
        }
        func line(_ s: String, reaching v: UInt64? = nil) {
            lock.lock(); defer { lock.unlock() }
            handle.write(Data((s + "\n").utf8))
            if let v { reached = max(reached, v) }
        }
        var latest: UInt64 { lock.lock(); defer { lock.unlock() }; return reached }
    }

    /// Returns false when the final version was not delivered in time.
    public func run() throws -> Bool {
        let db = try Database(path: dbPath, options: TortureEncryption.options(create: false))
        let log = try Log(logPath + ".partial")
        let observation = try db.observeCommits { r in log.line("range \(r.from) \(r.to)", reaching: r.to) }
        defer { observation.cancel() }
        // The version registration started from, written before any range can be (the file
        // is renamed into place only now, so the scenario starts writers after this point).
        log.line("start \(observation.from)", reaching: observation.from)
        rename(logPath + ".partial", logPath)
        var final: UInt64?
        while final == nil {
            final = files.finalVersion()
            if final == nil { usleep(5_000) }
        }
        let asked = Date()
        var ok = false
        while Date().timeIntervalSince(asked) < graceSeconds {
            if log.latest >= final! { ok = true; break }
            usleep(2_000)
        }
        log.line(ok ? "reached \(final!) \(Int(Date().timeIntervalSince(asked) * 1000))" : "missed \(final!)")
        let wakes = db.commitWatcherWakeCounts ?? (0, 0)
        log.line("wakes \(wakes.doorbell) \(wakes.timeout)")
        return ok
    }
}
