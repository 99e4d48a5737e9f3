import XCTest
@_exported import FiefTestSupport
import Engine
@testable import Torture
import SeededRandomness

/// Real writer processes die at every crash point and at seeded random times; each time the
/// file must recover to exactly one committed version that includes every acknowledged commit.
final class CrashRecoveryTests: XCTestCase {
    func seed(_ name: String, _ d: UInt64) -> UInt64 {
        let s = ProcessInfo.processInfo.environment["FIEF_TEST_SEED"].flatMap(UInt64.init) ?? d
        print("\(name): seed \(s) (rerun with FIEF_TEST_SEED=\(s))")
        return s
    }

    func testEveryCrashPointLeavesExactlyTheExpectedVersion() throws {
        let s = seed("crash-points", 7001)
        let dir = TempDir()
        let cycle = CrashCycle(
            dbPath: dir.file("db.fief"), oraclePath: dir.file("oracle.log"), seed: s, logPath: dir.file("writer.out"))
        var rng = SeededRandom(seed: s)
        var cycles = 0
        for round in 0..<2 {
            for point in CrashPoint.commitPoints {
                let nth = round == 0 ? 1 : Int.random(in: 2...6, using: &rng)
                let outcome = try cycle.crash(at: point, nth: nth)
                cycles += 1
                XCTAssertTrue(outcome.verdict.passed, "\(outcome.description): \(outcome.violations)")
            }
        }
        print("crash-points: \(cycles) cycles, file at commit \(cycle.committedNow())")
        XCTAssertGreaterThan(cycle.committedNow(), 10)
    }

    func testRandomKillsNeverLoseAcknowledgedCommits() throws {
        let s = seed("random-kill", 7002)
        let dir = TempDir()
        var rng = SeededRandom(seed: s)
        for threads in [1, 3] {
            let cycle = CrashCycle(
                dbPath: dir.file("db\(threads).fief"), oraclePath: dir.file("oracle\(threads).log"), seed: s,
                threads: threads, logPath: dir.file("writer.out"))
            for _ in 0..<12 {
                let delay = UInt32.random(in: 30_000...400_000, using: &rng)
                let outcome = try cycle.kill(afterMicros: delay)
                XCTAssertTrue(outcome.verdict.passed, "\(outcome.description): \(outcome.violations)")
            }
            let commits = cycle.committedNow()
            print("random-kill: \(threads) writer threads, file at commit \(commits)")
            XCTAssertGreaterThan(commits, 0, "no writer ever committed: the kills came too early to test anything")
        }
    }

    /// A writer killed inside its commit dies holding the shared writer mutex while this
    /// process keeps the database open (so no opener resets the mutex): the next writer must
    /// still get it, recovered from the dead owner.
    func testAWriterKilledHoldingTheWriterMutexDoesNotStopTheNext() throws {
        let dir = TempDir()
        let cycle = CrashCycle(
            dbPath: dir.file("db.fief"), oraclePath: dir.file("oracle.log"), seed: 7003, logPath: dir.file("writer.out")
        )
        _ = try cycle.crash(at: .afterSelectFlip, nth: 2)
        let keeper = try Database(path: dir.file("db.fief"))
        for point in [CrashPoint.afterNodesWritten, .afterDataSync] {
            let outcome = try cycle.crash(at: point, nth: 2)
            XCTAssertTrue(outcome.verdict.passed, "\(outcome.description): \(outcome.violations)")
        }
        let run = runWithWatchdog(seconds: 60) {
            try keeper.write { tx in try tx.createTable("after", key: Int64.self, value: Int64.self).put(1, 1) }
        }
        XCTAssertNotEqual(run, .timedOut, "the write still waits for the killed writer's mutex")
        if case .threw(let e) = run { XCTFail(e) }
    }
}
