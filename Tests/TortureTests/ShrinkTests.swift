import XCTest
import Engine
import FaultFS
import FiefTestSupport
@testable import Torture

/// Shrinking and replaying: a spelled-out schedule is the seeded workload exactly, a shrunk
/// case still fails on its broken engine and passes on the correct one, and every replay kept
/// under Tests/Replays does the same.
final class ShrinkTests: XCTestCase {
    func testSpelledOutCommitsAreTheSeededOnes() {
        let seeded = CommitWorkload(seed: 9)
        let spelled = CommitWorkload(seed: 9, schedule: (1...30).map { PlannedCommit.derived(seed: 9, commit: $0) })
        for i in UInt64(1)...30 {
            XCTAssertEqual(seeded.changes(forCommit: i).map(\.key), spelled.changes(forCommit: i).map(\.key))
            XCTAssertEqual(seeded.changes(forCommit: i).map(\.value), spelled.changes(forCommit: i).map(\.value))
        }
        XCTAssertEqual(seeded.expectedState(afterCommit: 30), spelled.expectedState(afterCommit: 30))
        XCTAssertEqual(seeded.bank.expectedBalances(afterCommit: 30), spelled.bank.expectedBalances(afterCommit: 30))
        XCTAssertTrue(spelled.changes(forCommit: 31).isEmpty, "a commit past the schedule changes nothing")
    }

    /// A schedule whose first commits make no transfer opens the accounts at the first that does,
    /// and the bank checker holds it to exactly those transfers.
    func testTransfersOnlyWhereTheScheduleSays() throws {
        let dir = TempDir()
        let db = try Database(path: dir.file("bank.fief"), options: DatabaseOptions(durability: .none))
        var plan = (1...6).map { PlannedCommit.derived(seed: 4, commit: $0) }
        plan[0].transfer = false
        plan[3].transfer = false
        let w = CommitWorkload(seed: 4, schedule: plan)
        for i in UInt64(1)...6 { try db.write { try w.apply(commit: i, in: $0) } }
        XCTAssertEqual(try db.read { try w.bank.verify(in: $0, afterCommit: 6) }, [])
        // A checker that expects every commit's transfer must see the difference.
        XCTAssertFalse(try db.read { try BankTransfers(seed: 4).verify(in: $0, afterCommit: 6) }.isEmpty)
        let empty = CommitWorkload(seed: 4, schedule: [PlannedCommit(changes: [], transfer: false)])
        let db2 = try Database(path: dir.file("none.fief"), options: DatabaseOptions(durability: .none))
        try db2.write { try empty.apply(commit: 1, in: $0) }
        XCTAssertEqual(
            try db2.read { try empty.bank.verify(in: $0, afterCommit: 1) }, [],
            "no transfer: no accounts, and none expected")
    }

    func testAFlipBeforeTopCycleShrinksToAReplayThatFailsOnlyOnItsEngine() throws {
        try requireBrokenVariants()
        let dir = TempDir()
        let seed: UInt64 = 77
        let original = TortureReplay(
            seed: seed, deaths: CrashPointsScenario.deaths(cycle: 0, seed: seed), broken: "flip-before-top")
        let r = try Shrinker(budgetSeconds: 120, workDir: dir.file("work")).shrink(original)
        XCTAssertEqual(r.replay.expected?.kind, .atomicity)
        XCTAssertLessThanOrEqual(r.after.commits, 3, "\(r.before) -> \(r.after)")
        XCTAssertLessThan(r.after.commits, r.before.commits)
        XCTAssertEqual(r.after.deaths, 1)
        XCTAssertEqual(r.passesOnCorrectEngine, true)
        // Written and read back, it still fails on its engine, and passes on the correct one.
        try r.replay.write(to: dir.file("replay.json"))
        let back = try TortureReplay.read(dir.file("replay.json"))
        XCTAssertEqual(back, r.replay)
        XCTAssertTrue(try back.run(in: dir.file("again")).reproduces)
        XCTAssertTrue(try back.run(in: dir.file("correct"), broken: .some(nil)).passed)
    }

    func testACaseThatDoesNotFailIsNotShrunk() throws {
        let dir = TempDir()
        let fine = TortureReplay(seed: 3, deaths: [.at(.afterTopWritten, nth: 2)])
        XCTAssertThrowsError(try Shrinker(budgetSeconds: 30, workDir: dir.file("work")).shrink(fine)) {
            XCTAssertTrue("\($0)".contains("did not fail"), "\($0)")
        }
    }

    func testAForeignFileIsRefusedAsAReplay() throws {
        let dir = TempDir()
        try Data("{\"hello\": 1}".utf8).write(to: URL(fileURLWithPath: dir.file("x.json")))
        XCTAssertThrowsError(try TortureReplay.read(dir.file("x.json"))) {
            XCTAssertTrue("\($0)".contains("not a torture replay file"), "\($0)")
        }
        XCTAssertThrowsError(try TortureReplay.read(dir.file("missing.json"))) {
            XCTAssertTrue("\($0)".contains("no such replay file"), "\($0)")
        }
    }

    /// The replays kept as regression tests: each still fails on the broken variant it was
    /// recorded on and passes on the correct engine. Crash-states and power-cut replays run on
    /// FaultFS.
    func testKeptReplays() throws {
        try runKeptReplays { !$0.needsFUSE }
    }

    func testKeptFaultFSReplays() throws {
        try requireFUSE(for: "CRASH-STATES AND POWER-CUT REPLAYS")
        try runKeptReplays { $0.needsFUSE }
    }

    func runKeptReplays(_ which: (TortureReplay) -> Bool) throws {
        try requireBrokenVariants()
        let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Replays").path
        let files = try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.hasSuffix(".json") }
            .sorted()
        let dir = TempDir()
        var ran = 0
        for f in files {
            let replay = try TortureReplay.read(folder + "/" + f)
            guard which(replay) else { continue }
            ran += 1
            if replay.broken != nil {
                let r = try replay.run(in: dir.file(f + ".broken"))
                XCTAssertTrue(r.reproduces, "\(f) no longer fails on \(replay.broken!): \(r.violations)")
            }
            let correct = try replay.run(in: dir.file(f + ".correct"), broken: .some(nil))
            XCTAssertTrue(correct.passed, "\(f) fails on the correct engine: \(correct.violations)")
        }
        XCTAssertGreaterThan(ran, 0, "no such replay files under \(folder)")
    }

    /// An encrypt-in-place power-cut cycle (encrypted files) shrinks to one cut after few commits.
    func testAnEncryptInPlacePowerCutShrinks() throws {
        try requireBrokenVariants()
        try requireFUSE(for: "POWER-CUT SHRINK")
        let dir = TempDir()
        // The first of ten cycles that fails.
        var failing: TortureReplay?
        for cycle in 0..<10 where failing == nil {
            var r = TortureReplay(seed: 1000 + UInt64(cycle), deaths: [], broken: "encrypt-in-place")
            r.scenario = PowerCutScenario().name
            // Without the cut taken while threads run: its moment is a matter of timing, and
            // the shrinker must first see the case fail again.
            r.cuts = PowerCutScenario.cuts(cycle: cycle, seed: r.seed).filter(\.isDeterministic)
            r.encryptionSeed = 4
            if try !r.run(in: dir.file("probe")).passed { failing = r }
        }
        let original = try XCTUnwrap(failing, "encrypt-in-place survived ten power-cut cycles")
        let r = try Shrinker(budgetSeconds: 120, workDir: dir.file("work")).shrink(original)
        XCTAssertLessThanOrEqual(r.after.commits, 3, "\(r.before) -> \(r.after)")
        XCTAssertEqual(r.replay.cuts?.count, 1)
        XCTAssertEqual(r.passesOnCorrectEngine, true)
        // Within three runs, as the shrinker asks of a case first: which unsynced writes the cut
        // drops follows the order pages reached FaultFS, and one run in ten or so hid the damage.
        var again = false
        for run in 0..<3 where !again { again = try r.replay.run(in: dir.file("again-\(run)")).reproduces }
        XCTAssertTrue(again, "the shrunk case did not fail in three runs")
    }

    /// A no-base-sync crash-states cycle shrinks to few commits and few lost sectors, and the
    /// state it keeps fails only on its engine.
    func testANoBaseSyncCrashStateShrinksToItsLostSectors() throws {
        try requireBrokenVariants()
        try requireFUSE(for: "CRASH-STATES SHRINK")
        let dir = TempDir()
        var original = TortureReplay(
            seed: 21, deaths: CrashStatesScenario.deaths(cycle: 1).map { .at($0, nth: 1) }, broken: "no-base-sync")
        original.scenario = CrashStatesScenario().name
        original.cleanCommits = 6
        original.stateBound = 256
        let r = try Shrinker(budgetSeconds: 120, workDir: dir.file("work")).shrink(original)
        XCTAssertLessThanOrEqual(r.after.commits, 3, "\(r.before) -> \(r.after)")
        XCTAssertLessThan(r.after.lostSectors ?? .max, r.before.lostSectors ?? 0, "\(r.before) -> \(r.after)")
        XCTAssertNotNil(r.replay.state)
        XCTAssertEqual(r.passesOnCorrectEngine, true)
        XCTAssertTrue(try r.replay.run(in: dir.file("again")).reproduces)
    }
}
