import XCTest
import Engine
@testable import Torture
import TortureSchema

/// Reader processes killed while holding pins, and short readers racing a fast writer.
final class ReadersTests: XCTestCase {
    func run(seed: UInt64, cycles: Int, broken: BrokenVariant? = nil) throws -> ScenarioResult {
        try runScenario("readers", seed: seed, cycles: cycles, broken: broken, needsFUSE: false)
    }

    func testDeadReadersAreReclaimedAndRacingReadsAreExact() throws {
        let r = try run(seed: 3, cycles: 4)
        XCTAssertTrue(r.passed, "\(r.failures.map(\.violations))")
        XCTAssertEqual(Set(r.modes.map(\.name)), ["reader-deaths", "reader-churn"])
    }

    func testPinsOfDeadReadersThatAreNeverReclaimedAreCaught() throws {
        guard BrokenVariant.available else { return XCTFail("broken variants exist only in debug builds") }
        let r = try run(seed: 3, cycles: 2, broken: .noReclaim)
        let all = r.failures.flatMap(\.violations).map(\.text)
        XCTAssertTrue(
            all.contains { $0.contains("their pins still hold pages") }, "no-reclaim went unnoticed: \(all.prefix(3))")
        print("no-reclaim caught: \(all.first ?? "")")
    }

    func testAScanThatStopsShortOfNewSlotsIsCaught() throws {
        guard BrokenVariant.available else { return XCTFail("broken variants exist only in debug builds") }
        let r = try run(seed: 3, cycles: 2, broken: .noHighWater)
        let all = r.failures.flatMap(\.violations).map(\.text)
        XCTAssertFalse(all.isEmpty, "no-high-water went unnoticed")
        print("no-high-water caught: \(all.first ?? "")")
    }
}
