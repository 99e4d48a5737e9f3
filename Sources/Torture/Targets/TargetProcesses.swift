#if canImport(Glibc)
import Glibc
#endif
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

    /// Creates the store, then syncs its directory, so the store's files exist durably before
    /// the first commit: as an installer would, and as LMDB itself never does.
    func setUp() throws {
        let child = try writer(maxCommit: 0, tag: "setup")
        guard let ending = child.wait(timeoutSeconds: 120) else {
            throw TortureError.invalid("creating the \(spec) store in \(storeDirectory) hung for 120 s: \(lastLine("setup"))")
        }
        guard ending == .exited(0) else {
            throw TortureError.invalid("creating the \(spec) store in \(storeDirectory) failed (\(ending)): \(lastLine("setup"))")
        }
        try syncDirectory(storeDirectory)
    }

    func writer(maxCommit: UInt64, tag: String, environment: [String: String] = [:]) throws -> ChildProcess {
        try ChildProcess(arguments: ["torture", "target-writer", "--target", spec.description, "--dir", storeDirectory,
                                     "--oracle", oraclePath, "--seed", String(seed), "--max-commit", String(maxCommit)],
                         environment: environment, output: "\(scratch)/writer-\(tag).out", label: "\(spec.kind) writer")
    }

    /// Verifies the store in `directory` (the mount, or the backing folder after a cut).
    func verify(directory: String? = nil, tag: String) throws -> TargetVerdict {
        try TargetRecoveryCheck.verifyInChild(spec: spec, directory: directory ?? storeDirectory, oraclePath: oraclePath,
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
        if let cp = try? ChildProcess(executable: "/bin/cp", arguments: ["-a", "--sparse=always", from, to], label: "cp") { _ = cp.wait() }
    }

    func syncDirectory(_ path: String) throws {
        let fd = open(path, O_RDONLY | O_DIRECTORY)
        guard fd >= 0 else { throw TortureError.io("open directory \(path)", errno) }
        defer { close(fd) }
        guard fsync(fd) == 0 else { throw TortureError.io("sync directory \(path)", errno) }
    }
}
