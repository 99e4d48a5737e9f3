import ProcFS
import Foundation

/// The `fief` executable, to run writers and readers as real processes that can be killed.
public enum FiefExecutable {
    public static func path() throws -> String {
        if let p = ProcessInfo.processInfo.environment["FIEF_BIN"], access(p, X_OK) == 0 { return p }
        let me = ownExecutablePath() ?? CommandLine.arguments[0]
        if (me as NSString).lastPathComponent == "fief" { return me }
        // Under `swift test`, the test runner sits in the same build folder as `fief`.
        var dir = (me as NSString).deletingLastPathComponent
        for _ in 0..<4 {
            let candidate = dir + "/fief"
            if access(candidate, X_OK) == 0 { return candidate }
            dir = (dir as NSString).deletingLastPathComponent
        }
        throw TortureError.spawn("cannot find the fief executable near \(me); build it (swift build) or set FIEF_BIN")
    }
}

/// A child process of ours, with a way to kill it hard and learn how it ended.
public final class ChildProcess {
    public let process = Process()
    public let label: String

    public enum Ending: Equatable, CustomStringConvertible {
        case exited(Int32)
        case signaled(Int32)
        public var description: String {
            switch self {
            case .exited(let c): return "exited with status \(c)"
            case .signaled(let s): return "killed by signal \(s)"
            }
        }
    }

    /// A `fief` child of the suite doing `role`, with the run's encryption key (`ChildRequest`).
    /// `environment` is for what the engine reads from it: a crash point to die at, a broken
    /// variant to run.
    public convenience init(
        _ role: ChildRole, environment extra: [String: String] = [:], output: String? = nil, label: String
    ) throws {
        try self.init(arguments: ChildRequest(role).arguments, environment: extra, output: output, label: label)
    }

    /// `fief` with a command a person would type (`db put`, `faultfs ctl`); the suite's own
    /// children are started by role (above).
    public convenience init(
        arguments: [String], environment extra: [String: String] = [:], output: String? = nil, label: String
    ) throws {
        try self.init(
            executable: try FiefExecutable.path(), arguments: arguments, environment: extra, output: output,
            label: label)
    }

    /// Any program (the others are `fief` itself).
    public init(
        executable: String, arguments: [String], environment extra: [String: String] = [:], output: String? = nil,
        label: String
    ) throws {
        self.label = label
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        var env = ProcessInfo.processInfo.environment
        env[CrashPointEnvironment.name] = nil
        // Children here are meant to die (SIGKILL, or SIGBUS from a mapping FaultFS cut the
        // power under). Swift's backtracer would hold a dying child, and with it the pipe
        // Foundation watches for the exit, for as long as it takes.
        if env["SWIFT_BACKTRACE"] == nil { env["SWIFT_BACKTRACE"] = "enable=no" }
        for (k, v) in extra { env[k] = v }
        process.environment = env
        if let output {
            _ = FileManager.default.createFile(atPath: output, contents: nil)
            let h = try FileHandle(forWritingTo: URL(fileURLWithPath: output))
            process.standardOutput = h
            process.standardError = h
        }
        do { try process.run() } catch { throw TortureError.spawn("\(label): \(error)") }
    }

    public var pid: Int32 { process.processIdentifier }

    public func kill9() { _ = Glibc.kill(process.processIdentifier, SIGKILL) }

    public func wait() -> Ending {
        process.waitUntilExit()
        return process.terminationReason == .uncaughtSignal
            ? .signaled(process.terminationStatus) : .exited(process.terminationStatus)
    }

    public var isRunning: Bool { process.isRunning }

    /// Waits, at most 10 s and only while the child runs, for the file it makes once it is
    /// ready (a child that died or hangs is judged by what follows, not here).
    public func awaitFile(_ path: String, pollMicros: UInt32) {
        let deadline = Date().addingTimeInterval(10)
        while !FileManager.default.fileExists(atPath: path) && Date() < deadline && isRunning { usleep(pollMicros) }
    }

    /// Waits at most `timeoutSeconds`; past that the child is SIGKILLed and nil returned.
    public func wait(timeoutSeconds: Double) -> Ending? {
        let deadline = Date().addingTimeInterval(timeoutSeconds)
        while process.isRunning && Date() < deadline { usleep(5_000) }
        if process.isRunning {
            kill9Tree()
            _ = wait()
            return nil
        }
        return wait()
    }

    /// SIGSTOPs the child and every process under it: frozen, none of them can write again
    /// (not even through a file it opens after a power cut); SIGKILL them afterwards.
    public func stopTree() {
        _ = Glibc.kill(process.processIdentifier, SIGSTOP)
        for pid in ChildProcess.descendants(of: pid) { _ = Glibc.kill(pid, SIGSTOP) }
    }

    /// SIGKILLs the child and every process under it (an `exec` target's adapter runs under
    /// the writer), deepest first, so no orphan keeps writing to the store.
    public func kill9Tree() {
        for pid in ChildProcess.descendants(of: pid).reversed() { _ = Glibc.kill(pid, SIGKILL) }
        kill9()
    }

    /// Every process under `pid`, parents before children, from /proc.
    static func descendants(of pid: Int32) -> [Int32] {
        var children: [Int32: [Int32]] = [:]
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] {
            guard let p = Int32(entry), let stat = ProcStat(pid: p) else { continue }
            children[stat.parent, default: []].append(p)
        }
        var out: [Int32] = []
        var queue = children[pid] ?? []
        while !queue.isEmpty {
            let p = queue.removeFirst()
            out.append(p)
            queue += children[p] ?? []
        }
        return out
    }
}

enum CrashPointEnvironment {
    static let name = "FIEF_CRASH_AT"
}
