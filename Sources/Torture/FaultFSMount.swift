import FaultFS
import Foundation
import TortureSchema

/// A FaultFS mount for a cycle: the filesystem runs as its own daemon (a `faultFSDaemon`
/// child, as `fief faultfs mount` starts one), and torture talks to it only through its
/// control file (`Mounter.control`, what `fief faultfs ctl` sends).
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
        o.events.append(
            CycleEvent(mode, [.harness("\(scenario) cannot run on this machine: \(why)")], "\(scenario) cycle \(cycle)")
        )
        return o
    }

    /// A mount of `dir/backing` at `dir/mnt` for one cycle, tracing to `dir/faultfs-trace<suffix>.jsonl`.
    static func forCycle(_ dir: String, seed: UInt64, suffix: String = "", context: ScenarioContext) -> FaultFSMount {
        FaultFSMount(
            backing: dir + "/backing", mountpoint: dir + "/mnt", seed: seed,
            tracePath: dir + "/faultfs-trace\(suffix).jsonl",
            model: context.options.fsModel)
    }

    /// Mounts and returns once the mount is up; the daemon writes to `<mountpoint>.daemon.log`.
    public func mount() throws {
        try FileManager.default.createDirectory(atPath: backing, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: mountpoint, withIntermediateDirectories: true)
        do {
            let (b, m) = try Mounter.validate(backing: backing, mountpoint: mountpoint)
            let daemon = ChildRequest(
                .faultFSDaemon(
                    backing: b, mountpoint: m, seed: seed, model: model,
                    config: configPath.map(Mounter.absolutePath), trace: Mounter.absolutePath(tracePath)))
            _ = try Mounter.startDaemon(
                executable: try FiefExecutable.path(), arguments: daemon.arguments, mountpoint: m,
                log: mountpoint + ".daemon.log")
        } catch {
            throw TortureError.invalid("faultfs mount failed: \(error)")
        }
        mounted = true
    }

    /// Cuts the power under one of `PowerCutScenario.modes`.
    public func cutPower(_ mode: PowerCutMode) throws {
        try ctl(["power-cut"] + mode.args)
    }

    /// Sends one control command (the words of `fief faultfs ctl`) and returns the answer.
    @discardableResult
    public func ctl(_ words: [String]) throws -> String {
        do {
            return try Mounter.control(mountpoint, words)
        } catch {
            throw TortureError.invalid("faultfs ctl \(words.joined(separator: " ")) failed: \(error)")
        }
    }

    public func unmount() {
        guard mounted else { return }
        _ = try? Mounter.unmount(mountpoint)
        mounted = false
    }

    deinit { unmount() }
}
