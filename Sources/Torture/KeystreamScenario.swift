import Engine
import Foundation
import TortureSchema

/// Encryption's one rule a crash check cannot see: no two writes of a page share a keystream
/// (AES-CTR with a reused counter block gives away the XOR of the two plaintexts). Writer
/// processes commit to an encrypted file in six steps; after each, every page's envelope is
/// read from the file, and a page offset found twice with one salt but different tags —
/// two ciphertexts under one counter block — is a violation. Always encrypted.
public struct KeystreamScenario: Scenario {
    public var name: String { "keystream" }
    public var alwaysEncrypted: Bool { true }
    public init() {}

    public func plannedCycles(_ profile: TortureProfile) -> Int { 2 * profile.scale }

    public func runCycle(_ index: Int, seed: UInt64, dir: String, context: ScenarioContext) throws -> CycleOutcome {
        try run(
            KeystreamScenario.plan(cycle: index), dir: dir, workload: CommitWorkload(seed: seed),
            environment: context.writerEnvironment)
    }

    /// A cycle's writers: how many threads, and the commit each of its processes stops at.
    public struct Plan: Codable, Sendable, Equatable {
        public var threads: Int
        public var stepsEndAt: [UInt64]
    }

    public static func plan(cycle index: Int) -> Plan {
        Plan(threads: 1 + index % 3, stepsEndAt: (1...6).map { UInt64($0 * 12) })
    }

    func run(_ plan: Plan, dir: String, workload: CommitWorkload, environment: [String: String]) throws -> CycleOutcome
    {
        var outcome = CycleOutcome()
        let db = dir + "/db.fief"
        var writer = CrashCycle(
            dbPath: db, oraclePath: dir + "/oracle.log", workload: workload, threads: plan.threads,
            logPath: dir + "/writer.out")
        writer.environment = environment
        try writer.writeSchedule()
        var seen: [PageSalt: [UInt8]] = [:]
        var reused: [Violation] = []
        var writes = 0
        for (n, end) in plan.stepsEndAt.enumerated() {
            let step = n + 1
            let child = try ChildProcess(
                writer.writer(maxCommit: end), environment: writer.environment,
                output: writer.logPath, label: "writer")
            if child.wait() != .exited(0) {
                outcome.events.append(
                    CycleEvent(
                        "keystream", [.harness("writer step \(step) failed; see \(writer.logPath ?? "its log")")],
                        "writer step \(step)"
                    ))
                return outcome
            }
            guard let bytes = FileManager.default.contents(atPath: db).map({ [UInt8]($0) }) else {
                outcome.events.append(
                    CycleEvent(
                        "keystream", [.harness("\(db) cannot be read after step \(step)")], "writer step \(step)"))
                return outcome
            }
            let ps = 4096
            for offset in stride(from: ps, to: bytes.count - ps + 1, by: ps) {
                // Pages inside a multi-page extent carry no envelope: their "salt" is ciphertext,
                // random, and matches nothing.
                let tag = Array(bytes[offset..<(offset + PageEnvelope.tagSize)])
                let salt = bytes[(offset + PageEnvelope.saltOffset)..<(offset + PageEnvelope.saltOffset + 8)]
                    .enumerated()
                    .reduce(UInt64(0)) { $0 | UInt64($1.element) << (8 * UInt64($1.offset)) }
                let key = PageSalt(offset: UInt64(offset), salt: salt)
                if let before = seen[key] {
                    if before != tag && reused.count < 5 {
                        reused.append(
                            .harness(
                                "page at offset \(offset) written twice with salt \(salt) "
                                    + "(after step \(step)): two ciphertexts share one keystream"))
                    }
                } else {
                    seen[key] = tag
                    writes += 1
                }
            }
        }
        var violations = reused
        violations += writer.verify().violations
        outcome.events.append(
            CycleEvent(
                "keystream", violations,
                "\(writes) page writes seen over \(plan.stepsEndAt.count) writer processes (\(writer.threads) threads)"
            ))
        return outcome
    }

    private struct PageSalt: Hashable {
        let offset: UInt64
        let salt: UInt64
    }
}
