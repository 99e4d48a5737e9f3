#if canImport(Glibc)
import Glibc
#endif
import Engine
import FaultFS
import Foundation
import SeededRandomness

/// Every state a power cut could leave after a commit died, enumerated rather than drawn, in
/// the spirit of ALICE and CrashMonkey but on a real FUSE mount: the file is copied while it
/// is wholly durable, a writer is killed in the next commit at a crash point, and FaultFS
/// says which byte ranges were written since the file's last sync. Each 512-byte sector of
/// those ranges may hold its old bytes (as in the durable copy; exact for an engine whose
/// sync epochs write disjoint sectors, as Fief's do) or its new ones, and a file grown since
/// its last sync may keep its durable size;
/// every combination (sampled from the seed past the bound) is built on a copy, opened,
/// checked and compared with the oracle. Killed after its top was written (before the data
/// sync), a commit may leave only the version before it; after its select-bit flip (data
/// synced), the version before or itself.
public struct CrashStatesScenario: Scenario {
    public var name: String { "crash-states" }
    public init() {}

    static let sector = 512
    static let points: [CrashPoint] = [.afterTopWritten, .afterSelectFlip]

    public func plannedCycles(_ profile: TortureProfile) -> Int { 4 * profile.scale }

    /// States tried per commit: all of them up to this many, a seeded sample past it.
    static func bound(_ profile: TortureProfile) -> Int { profile == .quick ? 256 : 4096 }

    public func runCycle(_ index: Int, seed: UInt64, dir: String, context: ScenarioContext) throws -> CycleOutcome {
        var outcome = CycleOutcome()
        if let missing = FaultFSMount.missingOutcome(name, mode: "no-fuse", cycle: index) { return missing }
        var rng = SeededRandom(seed: seed)
        let point = CrashStatesScenario.points[index % CrashStatesScenario.points.count]
        let backing = dir + "/backing", mnt = dir + "/mnt", oracle = dir + "/oracle.log"
        let workload = CommitWorkload(seed: seed)
        let fs = FaultFSMount.forCycle(dir, seed: seed, context: context)
        try fs.mount()
        defer { fs.unmount() }
        let cycle = CrashCycle(dbPath: mnt + "/db.fief", oraclePath: oracle, seed: seed)
        let before = UInt64(Int.random(in: 1...12, using: &rng))
        let first = try ChildProcess(arguments: cycle.writerArguments(maxCommit: before), environment: context.writerEnvironment,
                                     output: dir + "/writer-0.out", label: "writer").wait()
        guard first == .exited(0) else {
            outcome.events.append((point.rawValue, ["the writer \(first) before the commit under test"], "crash-states cycle \(index)"))
            return outcome
        }
        var status = try decodeStatus(fs)
        if let pending = status.files.first(where: { $0.path.hasSuffix("db.fief") }), pending.unsyncedBytes > 0 {
            outcome.notes.append("cycle \(index): \(pending.unsyncedBytes) bytes of db.fief were unsynced between commits")
        }
        let old = try Data(contentsOf: URL(fileURLWithPath: backing + "/db.fief"))
        let dying = before + 1
        let killed = try ChildProcess(arguments: cycle.writerArguments(maxCommit: dying + 2),
                                      environment: context.writerEnvironment.merging([CrashPoint.environmentVariable: "\(point.rawValue):1"]) { $1 },
                                      output: dir + "/writer-1.out", label: "writer").wait()
        guard killed == .signaled(SIGKILL) else {
            outcome.events.append((point.rawValue, ["the writer armed at \(point.rawValue) \(killed)"], "crash-states cycle \(index)"))
            return outcome
        }
        status = try decodeStatus(fs)
        let new = try Data(contentsOf: URL(fileURLWithPath: backing + "/db.fief"))
        let file = status.files.first { $0.path.hasSuffix("db.fief") }
        let s = CrashStatesScenario.sector
        var sectors = Set<Int>()
        for r in file?.unsyncedRanges ?? [] where r.count == 2 {
            for i in stride(from: Int(r[0]) / s, to: (Int(r[1]) + s - 1) / s, by: 1) { sectors.insert(i) }
        }
        let unsynced = sectors.sorted()
        // The size is durable as of the last sync; a cut may leave that or the current one.
        let durableSize = Int(file?.durableSize ?? Int64(new.count))
        let sizeChoice = durableSize != new.count
        let choices = unsynced.count + (sizeChoice ? 1 : 0)
        let bound = CrashStatesScenario.bound(context.options.profile)
        let possible = choices >= 62 ? Double.infinity : Double(UInt64(1) << UInt64(choices))
        var masks: [[Bool]] = []
        if possible <= Double(bound) {
            for m in 0..<(1 << choices) { masks.append((0..<choices).map { m & (1 << $0) != 0 }) }
        } else {
            masks.append(Array(repeating: false, count: choices))
            masks.append(Array(repeating: true, count: choices))
            while masks.count < bound { masks.append((0..<choices).map { _ in Bool.random(using: &rng) }) }
        }
        var violations: [String] = []
        let statePath = dir + "/state.fief"
        for (n, mask) in masks.enumerated() {
            // Synced sectors as they are now; each unsynced one new, or as it was when the file
            // was last wholly durable (zeros past that file's end).
            var bytes = new
            for (j, sector) in unsynced.enumerated() where !mask[j] {
                let lo = sector * s, hi = min(lo + s, new.count)
                guard lo < hi else { continue }
                let keep = lo < old.count ? old[lo..<min(hi, old.count)] : Data()
                bytes.replaceSubrange(lo..<hi, with: keep + Data(count: (hi - lo) - keep.count))
            }
            if sizeChoice && !mask[choices - 1] { bytes = bytes.prefix(durableSize) }
            unlink(statePath)
            unlink(statePath + ".lock")
            try bytes.write(to: URL(fileURLWithPath: statePath))
            let v = RecoveryCheck.verify(dbPath: statePath, oraclePath: oracle, workload: workload)
            var found = v.violations
            if found.isEmpty && !point.selectFlipWritten && v.recoveredCommit != before {
                found.append("killed at \(point.rawValue) in commit \(dying), yet the state recovered commit \(v.recoveredCommit)")
            }
            if !found.isEmpty {
                let newSectors = unsynced.enumerated().filter { mask[$0.offset] }.map(\.element)
                violations.append("state \(n + 1) of \(masks.count) (new sectors \(newSectors.prefix(12))\(newSectors.count > 12 ? "..." : "")\(sizeChoice ? ", \(mask[choices - 1] ? "new" : "old") size" : "")): \(found[0])")
                if violations.count >= 5 { break }
            }
        }
        let covered = choices > 20 ? "2^\(choices)" : String(Int(possible))
        outcome.notes.append("commit \(dying) killed at \(point.rawValue): \(unsynced.count) unsynced sectors\(sizeChoice ? " and the size" : ""); explored \(masks.count) of \(covered) states")
        outcome.crashStates.append(CrashStateCoverage(cycle: index, commit: dying, crashPoint: point.rawValue, unsyncedSectors: unsynced.count,
                                                      sizeChoice: sizeChoice, statesExplored: masks.count, exhaustive: possible <= Double(bound)))
        outcome.crashPoints.insert(point.rawValue)
        outcome.faults += masks.count
        outcome.events.append((point.rawValue, violations, "commit \(dying) killed at \(point.rawValue), \(masks.count) of \(covered) crash states"))
        return outcome
    }

    func decodeStatus(_ fs: FaultFSMount) throws -> FaultFSStatus {
        let text = try fs.ctl(["status", "--json"])
        guard let start = text.firstIndex(of: "{") else { throw TortureError.invalid("faultfs status gave no JSON: \(text)") }
        return try JSONDecoder().decode(FaultFSStatus.self, from: Data(text[start...].utf8))
    }
}
