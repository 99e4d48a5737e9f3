import TortureSchema

/// What both `io-errors` scenarios, Fief's and any target's, check once the fault has had its
/// chance: with the fault cleared, the store read through the mount holds every acknowledged
/// commit and takes new ones; after a power cut that drops all unsynced data, the backing
/// folder still holds them.
struct IOErrorAftermath {
    /// What a check of the store in a folder found.
    typealias Verdict = (violations: [Violation], recoveredCommit: UInt64)

    let fault: String
    let fs: FaultFSMount
    /// Checks the store in a folder (the mount, then the backing folder); the tag names its files.
    let verify: (_ directory: String, _ tag: String) throws -> Verdict
    /// Makes new commits after the one recovered; a violation when they fail.
    let resume: (_ recovered: UInt64) throws -> Violation?

    func check() throws -> [Violation] {
        try fs.ctl(["clear"])
        var verdict = try verify(fs.mountpoint, "through-mount")
        var violations = verdict.violations.map { $0.prefixed("after \(fault), through the mount") }
        if let failed = try resume(verdict.recoveredCommit) { violations.append(failed) }
        try fs.ctl(["power-cut", "--mode", "drop-all"])
        fs.unmount()
        verdict = try verify(fs.backing, "after-cut")
        violations += verdict.violations.map { $0.prefixed("after \(fault) and a power cut") }
        return violations
    }
}
