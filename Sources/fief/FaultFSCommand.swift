import ArgumentParser
import FaultFS
import Foundation
import ProcFS

extension PersistenceModel: ExpressibleByArgument {}

struct FaultFSCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "faultfs",
        abstract: "A FUSE filesystem that injects storage faults.",
        discussion: """
            FaultFS passes a backing directory through a mountpoint and keeps, per file, what \
            is durable (synced) apart from what was only written. `ctl` cuts the power, adds \
            and removes faults, and reports what is unsynced. Every random choice comes from \
            the mount's seed; every injected fault goes to the trace (JSON lines).
            """,
        subcommands: [FaultFSMountCommand.self, FaultFSUnmount.self, FaultFSControl.self, FaultFSServeCommand.self]
    )
}

struct FaultFSMountCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mount",
        abstract: "Mount BACKING_DIR at MOUNTPOINT through FaultFS.",
        discussion: """
            Returns once the mount is up; the filesystem runs as a daemon until \
            `fief faultfs unmount`. Faults come from --config (JSON or TOML) and from \
            `fief faultfs ctl MOUNTPOINT inject ...`.
            """
    )

    @Argument(help: "The directory whose files the mount shows.") var backing: String
    @Argument(help: "An empty directory to mount on.") var mountpoint: String
    @Option(help: "Seed for every random choice (default: from the config, else random; printed).") var seed: UInt64?
    @Option(help: "Config file (JSON or TOML) with faults to arm at mount time.") var config: String?
    @Option(help: "Append every injected fault to this JSON-lines file.") var trace: String?
    @Option(help: "Where the daemon writes its messages.") var log: String?
    @Option(
        help:
            "What a sync makes durable beyond what it names: posix (default, strictest), ext4-ordered, ext4-writeback.")
    var model: PersistenceModel?
    @Flag(help: "Trace every operation, not only faults.") var traceOperations = false
    @Flag(help: "Serve in this process instead of starting a daemon.") var foreground = false

    func run() throws {
        try reportingErrors {
            let cfg = try config.map { try FaultConfig.load(path: $0) } ?? FaultConfig()
            let chosenSeed = seed ?? cfg.seed ?? UInt64.random(in: 0...UInt64(Int64.max))
            let tracePath = (trace ?? cfg.trace).map { Mounter.absolutePath($0) }
            if foreground {
                try FaultFSServe(
                    backing: backing, mountpoint: mountpoint, seed: chosenSeed, config: config, trace: tracePath,
                    model: model, traceOperations: traceOperations
                ).run()
                return
            }
            let (b, m) = try Mounter.validate(backing: backing, mountpoint: mountpoint)
            let daemon = FaultFSServe(
                backing: b, mountpoint: m, seed: chosenSeed, config: config.map { Mounter.absolutePath($0) },
                trace: tracePath, model: model, traceOperations: traceOperations)
            let logPath =
                log.map { Mounter.absolutePath($0) }
                ?? "/tmp/fief-faultfs-\(m.replacingOccurrences(of: "/", with: "_")).log"
            let pid = try Mounter.startDaemon(
                executable: try executablePath(), arguments: daemon.arguments, mountpoint: m, log: logPath)
            print(
                "mounted \(b) at \(m) (seed \(chosenSeed), model \(model ?? cfg.model ?? .posix), "
                    + "daemon pid \(pid), log \(logPath)\(tracePath.map { ", trace \($0)" } ?? ""))"
            )
        }
    }
}

func executablePath() throws -> String {
    guard let p = ownExecutablePath() else {
        throw FaultFSError.mountFailed("cannot find this executable through /proc/self/exe")
    }
    return p
}

struct FaultFSUnmount: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "unmount",
        abstract: "Unmount a FaultFS mount (lazily if it is busy or its daemon died) and wait for its daemon to exit."
    )

    @Argument(help: "The mountpoint.") var mountpoint: String

    func run() throws {
        try reportingErrors { print(try Mounter.unmount(mountpoint)) }
    }
}

struct FaultFSControl: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ctl",
        abstract: "Talk to a mounted FaultFS.",
        discussion: """
            Commands:
              status [--json]                      unsynced ranges and bytes per file, faults injected, rules
              power-cut --mode MODE [--sector N]   MODE: drop-all, drop-random, prefix, torn (--sector 512|4096)
              inject KIND [key=value ...] [once]   KIND: \(FaultKind.allCases.map(\.rawValue).joined(separator: ", "))
                                                   keys: \(FaultRule.keys.joined(separator: ", "))
              clear [RULE]                         remove every rule, or rule number RULE
              trace-ops on|off                     trace every operation, or only faults
            Examples:
              fief faultfs ctl /mnt/f inject eio op=write path=db.fief nth=3 once
              fief faultfs ctl /mnt/f inject enospc quota=10M
              fief faultfs ctl /mnt/f inject latency op=fsync min-ms=1 max-ms=20 probability=0.5
              fief faultfs ctl /mnt/f inject kill-caller op=fsync nth=2 when=before
              fief faultfs ctl /mnt/f power-cut --mode torn --sector 4096
            """
    )

    @Argument(help: "The mountpoint.") var mountpoint: String
    @Argument(parsing: .captureForPassthrough, help: "The command and its arguments.") var words: [String] = []

    func run() throws {
        try reportingErrors {
            if let kind = words.first, kind == "inject", words.count > 1 {
                // Refuse a bad rule here, with the same message the daemon would give.
                do { _ = try FaultRule(words: Array(words.dropFirst())) } catch let e as FaultSpecError {
                    throw FaultFSError.badSpec(e.description)
                }
            }
            print(try Mounter.control(mountpoint, words), terminator: "")
        }
    }
}
