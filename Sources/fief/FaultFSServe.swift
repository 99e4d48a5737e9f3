import ArgumentParser
import FaultFS
import Foundation
import TortureSchema

/// One FaultFS mount served in this process: what `fief faultfs mount` hands the daemon it
/// starts (`faultfs serve --request`), and what `--foreground` serves in place. This type
/// builds the daemon's command line and reads it back, so no code spells it by hand.
struct FaultFSServe: ProcessRequest {
    static let subcommand = ["faultfs", "serve"]

    var backing: String
    var mountpoint: String
    var seed: UInt64
    /// A fault configuration (JSON or TOML) armed from the start.
    var config: String?
    var trace: String?
    /// Overrides the configuration's model.
    var model: PersistenceModel?
    var traceOperations: Bool

    /// Serves until the mount is unmounted.
    func run() throws {
        var cfg = try config.map { try FaultConfig.load(path: $0) } ?? FaultConfig()
        if traceOperations { cfg.traceOperations = true }
        if let model { cfg.model = model }
        // A daemon gets a session of its own: a signal to the process group that mounted it
        // (Ctrl-C) must not take the filesystem away.
        if ProcessInfo.processInfo.environment["FIEF_FAULTFS_DAEMON"] != nil { setsid() }
        print(
            "faultfs: serving \(backing) at \(mountpoint), "
                + "seed \(seed), model \(cfg.model ?? .posix), pid \(getpid())"
        )
        fflush(stdout)
        try Mounter.serve(backing: backing, mountpoint: mountpoint, seed: seed, config: cfg, tracePath: trace)
    }
}

/// The daemon `fief faultfs mount` starts. Not for direct use.
struct FaultFSServeCommand: RequestCommand {
    static let commandName = "serve"
    static let abstract = "(internal) Serve one FaultFS mount (started by fief faultfs mount)."
    @Option(help: "The request: its JSON, a file holding it, or - for standard input.") var request: String

    func perform(_ r: FaultFSServe) throws { try r.run() }
}
