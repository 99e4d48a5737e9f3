#if canImport(Glibc)
    import Glibc
#endif
import FaultFS
import Foundation

/// A FaultFS mount driven through the `fief faultfs` command, as a user would drive it: the
/// filesystem runs as its own daemon, and torture talks to it only through `ctl`.
public final class FaultFSMount {
    public let backing: String
    public let mountpoint: String
    public let seed: UInt64
    public let tracePath: String
    public let configPath: String?
    public let model: PersistenceModel
    public private(set) var mounted = false

    public init(
        backing: String, mountpoint: String, seed: UInt64, tracePath: String, configPath: String? = nil,
        model: PersistenceModel = .posix
    ) {
        self.backing = backing
        self.mountpoint = mountpoint
        self.seed = seed
        self.tracePath = tracePath
        self.configPath = configPath
        self.model = model
    }

    /// Why FaultFS cannot run on this machine, or nil when it can.
    public static func unavailableReason() -> String? { Mounter.fuseUnavailableReason() }

    /// The outcome of a cycle that needs FaultFS on a machine without FUSE: a violation that
    /// says so (such a scenario never passes silently), or nil when FUSE is there.
    static func missingOutcome(_ scenario: String, mode: String, cycle: Int) -> CycleOutcome? {
        guard let why = unavailableReason() else { return nil }
        var o = CycleOutcome()
        o.events.append((mode, ["\(scenario) cannot run on this machine: \(why)"], "\(scenario) cycle \(cycle)"))
        return o
    }

    /// A mount of `dir/backing` at `dir/mnt` for one cycle, tracing to `dir/faultfs-trace<suffix>.jsonl`.
    static func forCycle(_ dir: String, seed: UInt64, suffix: String = "", context: ScenarioContext) -> FaultFSMount {
        FaultFSMount(
            backing: dir + "/backing", mountpoint: dir + "/mnt", seed: seed,
            tracePath: dir + "/faultfs-trace\(suffix).jsonl",
            model: context.options.fsModel)
    }

    static func run(_ args: [String], output: String) throws -> (Int32, String) {
        let child = try ChildProcess(
            arguments: args, output: output, label: "fief \(args.prefix(2).joined(separator: " "))")
        let ending = child.wait()
        let text = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
        switch ending {
        case .exited(let c): return (c, text)
        case .signaled(let s): return (128 + s, text)
        }
    }

    public func mount() throws {
        try FileManager.default.createDirectory(atPath: backing, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: mountpoint, withIntermediateDirectories: true)
        let (code, text) = try FaultFSMount.run(
            [
                "faultfs", "mount", backing, mountpoint, "--seed", String(seed), "--trace", tracePath, "--log",
                mountpoint + ".daemon.log"
            ] + ["--model", model.rawValue] + (configPath.map { ["--config", $0] } ?? []),
            output: mountpoint + ".mount.out")
        guard code == 0 else {
            throw TortureError.invalid(
                "faultfs mount failed (\(code)): \(text.trimmingCharacters(in: .whitespacesAndNewlines))")
        }
        mounted = true
    }

    @discardableResult
    public func ctl(_ words: [String]) throws -> String {
        let (code, text) = try FaultFSMount.run(["faultfs", "ctl", mountpoint] + words, output: mountpoint + ".ctl.out")
        guard code == 0 else {
            throw TortureError.invalid("faultfs ctl \(words.joined(separator: " ")) failed (\(code)): \(text)")
        }
        return text
    }

    public func unmount() {
        guard mounted else { return }
        _ = try? FaultFSMount.run(["faultfs", "unmount", mountpoint], output: mountpoint + ".unmount.out")
        mounted = false
    }

    deinit { unmount() }
}
