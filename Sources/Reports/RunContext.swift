import Engine
import Foundation

/// The machine a run measured on.
public struct Machine: Codable, Equatable, Sendable {
    public var hostname: String
    public var cores: Int
    public var memoryBytes: UInt64
    public var kernel: String
    public var cpu: String

    public static func current() -> Machine {
        var u = utsname()
        uname(&u)
        func field<T>(_ t: T) -> String {
            withUnsafeBytes(of: t) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        }
        let cpuinfo = (try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8)) ?? ""
        let model =
            cpuinfo.split(separator: "\n").first { $0.hasPrefix("model name") }
            .map { $0.split(separator: ":", maxSplits: 1).last.map { $0.trimmingCharacters(in: .whitespaces) } ?? "" }
            ?? "unknown"
        return Machine(
            hostname: ProcessInfo.processInfo.hostName, cores: ProcessInfo.processInfo.activeProcessorCount,
            memoryBytes: ProcessInfo.processInfo.physicalMemory,
            kernel: "\(field(u.sysname)) \(field(u.release)) \(field(u.machine))", cpu: model)
    }
}

/// What a result needs to be trusted in a comparison: which engine, built how, where, when.
public struct RunContext: Codable, Equatable, Sendable {
    public var gitCommit: String
    public var gitDirty: Bool?
    /// A free-form name for this build ("base", "new", a revision), from `--label`.
    public var label: String?
    public var engineFormatVersion: Int?
    public var build: String
    public var date: String
    public var machine: Machine
    public var durability: Durability
    public var peerVersions: [String: String]

    public init(
        gitCommit: String, gitDirty: Bool?, label: String?, engineFormatVersion: Int?, build: String, date: String,
        machine: Machine, durability: Durability, peerVersions: [String: String]
    ) {
        self.gitCommit = gitCommit; self.gitDirty = gitDirty; self.label = label;
        self.engineFormatVersion = engineFormatVersion
        self.build = build; self.date = date; self.machine = machine; self.durability = durability;
        self.peerVersions = peerVersions
    }

    /// Debug or release, as this module was compiled (it is built with the engine).
    public static var buildConfiguration: String {
        #if DEBUG
            return "debug"
        #else
            return "release"
        #endif
    }

    /// The commit of the working tree at `directory` (from `FIEF_GIT_COMMIT` when set, as
    /// compare-versions.sh does for its worktrees), and whether it has local changes.
    public static func git(in directory: String) -> (commit: String, dirty: Bool?) {
        if let c = ProcessInfo.processInfo.environment["FIEF_GIT_COMMIT"], !c.isEmpty { return (c, nil) }
        guard let commit = run(["git", "-C", directory, "rev-parse", "HEAD"]) else { return ("unknown", nil) }
        let status = run(["git", "-C", directory, "status", "--porcelain", "--untracked-files=no"])
        return (commit, status.map { !$0.isEmpty })
    }

    static func run(_ argv: [String]) -> String? {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        p.arguments = argv
        let out = Pipe()
        p.standardOutput = out
        p.standardError = FileHandle.nullDevice
        do { try p.run() } catch { return nil }
        let data = out.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        guard p.terminationStatus == 0 else { return nil }
        return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    static func isoNow() -> String {
        let f = ISO8601DateFormatter()
        return f.string(from: Date())
    }
}
