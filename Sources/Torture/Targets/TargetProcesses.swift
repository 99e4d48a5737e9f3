import Foundation

/// The processes of a generic scenario on one store directory: the set-up, writers that can be
/// killed, and the verifier; all are `fief torture target-*` children, so the target's library
/// (or adapter) dies with them.
struct TargetProcesses {
    let spec: TargetSpec
    /// Where the store's files live (a FaultFS mountpoint, or a plain folder).
    let storeDirectory: String
    /// Where the oracle log, outputs and verdicts go (never on the mount).
    let scratch: String
    let seed: UInt64
    var oraclePath: String { scratch + "/oracle.log" }

    /// Creates the store, then syncs its files and its directory, so every scenario starts from
    /// a durable empty store, as after an installer: the scenarios judge commits. (Creation
    /// itself is not always crash-safe: LMDB writes a new environment's two meta pages without
    /// a sync and never syncs the directory, so a power cut before the first commit can leave a
    /// file it refuses to open, MDB_INVALID; see the README.)
    func setUp() throws {
        let child = try writer(maxCommit: 0, tag: "setup")
        guard let ending = child.wait(timeoutSeconds: 120) else {
            throw TortureError.invalid(
                "creating the \(spec) store in \(storeDirectory) hung for 120 s: \(lastLine("setup"))")
        }
        guard ending == .exited(0) else {
            throw TortureError.invalid(
                "creating the \(spec) store in \(storeDirectory) failed (\(ending)): \(lastLine("setup"))")
        }
        for name in try FileManager.default.contentsOfDirectory(atPath: storeDirectory) {
            try syncFile(storeDirectory + "/" + name)
        }
        try syncDirectory(storeDirectory)
    }

    func syncFile(_ path: String) throws {
        let fd = open(path, O_RDONLY)
        guard fd >= 0 else { throw TortureError.io("open \(path)", errno) }
        defer { close(fd) }
        guard fsync(fd) == 0 else { throw TortureError.io("sync \(path)", errno) }
    }

    func writer(maxCommit: UInt64, tag: String, environment: [String: String] = [:]) throws -> ChildProcess {
        try ChildProcess(
            .targetWriter(target: spec, dir: storeDirectory, oracle: oraclePath, seed: seed, maxCommit: maxCommit),
            environment: environment, output: "\(scratch)/writer-\(tag).out", label: "\(spec.kind) writer")
    }

    /// Verifies the store in `directory` (the mount, or the backing folder after a cut).
    func verify(directory: String? = nil, tag: String) throws -> TargetVerdict {
        try TargetRecoveryCheck.verifyInChild(
            spec: spec, directory: directory ?? storeDirectory, oraclePath: oraclePath,
            seed: seed, scratch: "\(scratch)/verify-\(tag)")
    }

    func lastLine(_ tag: String) -> String {
        let text = (try? String(contentsOfFile: "\(scratch)/writer-\(tag).out", encoding: .utf8)) ?? ""
        return String(text.split(separator: "\n").last ?? "")
    }

    /// Copies the folder `from` to `to`, keeping sparse files sparse (LMDB's `writemap` file
    /// is its whole map size).
    func snapshot(_ from: String, to: String) {
        try? FileManager.default.removeItem(atPath: to)
        if let cp = try? ChildProcess(
            executable: "/bin/cp", arguments: ["-a", "--sparse=always", from, to], label: "cp")
        {
            _ = cp.wait()
        }
    }

    func syncDirectory(_ path: String) throws {
        let fd = open(path, O_RDONLY | O_DIRECTORY)
        guard fd >= 0 else { throw TortureError.io("open directory \(path)", errno) }
        defer { close(fd) }
        guard fsync(fd) == 0 else { throw TortureError.io("sync directory \(path)", errno) }
    }
}
