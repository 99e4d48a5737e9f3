import XCTest
import Engine
import FaultFS
@testable import Torture
import TortureSchema

/// Crash states enumerated from FaultFS's record of what a dying commit left unsynced.
final class CrashStatesTests: XCTestCase {
    func run(seed: UInt64, cycles: Int, broken: BrokenVariant? = nil) throws -> ScenarioResult {
        try runScenario("crash-states", seed: seed, cycles: cycles, broken: broken)
    }

    func testEveryEnumeratedStateOfTheCorrectEngineRecovers() throws {
        let r = try run(seed: 3, cycles: 4)
        XCTAssertTrue(r.passed, "\(r.failures.map(\.violations))")
        XCTAssertEqual(
            r.notes.filter { $0.contains("killed at") }.count, 4, "coverage is reported per commit: \(r.notes)")
        XCTAssertTrue(r.notes.contains { $0.contains("of 4 crashed commits") }, "the share is noted: \(r.notes)")
        XCTAssertTrue(
            r.notes.contains {
                $0.contains("after-select-flip: 1 unsynced operations") && $0.contains("explored 2 of 2 states")
            },
            "\(r.notes)")
        // Every state within the bound, a sample of exactly the bound past it.
        let bound = CrashStatesScenario.bound(.quick)
        for c in r.crashStates {
            let possible = c.operationStatesPossible ?? .infinity
            XCTAssertEqual(c.exhaustive, possible <= Double(bound), "\(c)")
            XCTAssertEqual(c.statesExplored, c.exhaustive ? Int(possible) : bound, "\(c)")
            XCTAssertGreaterThan(c.operations ?? 0, 0, "\(c)")
        }
        XCTAssertGreaterThanOrEqual(r.crashStates.operationLevelExhaustiveShare ?? 0, 0.75, "\(r.crashStates)")
    }

    /// A writer dies after its flip (never synced), the next before its data sync: the next
    /// must sync the flip before overwriting the other slot and the pages it freed.
    func testACommitOnAnUnsyncedFlipIsCaughtWithoutTheBaseSync() throws {
        let ok = try run(seed: 3, cycles: 3)
        XCTAssertTrue(ok.passed, "\(ok.failures.map(\.violations))")
        XCTAssertEqual(
            ok.crashStates.map(\.crashPoint), ["after-select-flip", "unsynced-flip-then-next", "after-top-written"])
        guard BrokenVariant.available else { return XCTFail("broken variants exist only in debug builds") }
        let r = try run(seed: 3, cycles: 3, broken: .noBaseSync)
        let all = r.failures.flatMap(\.violations).map(\.text)
        XCTAssertTrue(
            all.contains { $0.contains("unsynced-flip-then-next") }, "no-base-sync went unnoticed: \(all.prefix(2))")
        print("no-base-sync caught: \(all.first ?? "")")
    }

    func testAMissingDataSyncIsFoundAmongTheStates() throws {
        guard BrokenVariant.available else { return XCTFail("broken variants exist only in debug builds") }
        let r = try run(seed: 3, cycles: 4, broken: .noDataSync)
        let all = r.failures.flatMap(\.violations).map(\.text)
        XCTAssertTrue(
            all.contains { $0.contains("after-select-flip") && $0.contains("crash states") },
            "no-data-sync went unnoticed: \(all.prefix(2))")
        XCTAssertTrue(
            all.contains { $0.contains("persisted: ") && $0.contains("lost: ") && $0.contains(" of /db.fief [") },
            "a failing state is stated as operations: \(all.prefix(2))")
        print("no-data-sync caught: \(all.first ?? "")")
    }
}
