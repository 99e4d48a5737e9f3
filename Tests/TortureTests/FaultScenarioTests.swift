import XCTest
import Engine
import FaultFS
@testable import Torture
import TortureSchema

/// The scenarios that run on FaultFS: power cuts under every mode, and I/O errors during
/// commits. The correct engine shows no violation; an engine that skips the data sync before
/// the select-bit flip (visible only to a power cut) is caught on the same seeds.
final class FaultScenarioTests: XCTestCase {
    func run(_ scenario: String, cycles: Int, seed: UInt64, broken: BrokenVariant? = nil) throws -> ScenarioResult {
        try requireFUSE(for: scenario)
        let dir = TempDir()
        var o = TortureOptions(seed: seed)
        o.scenarios = [scenario]
        o.cycles = cycles
        o.out = dir.file("out")
        o.broken = broken
        return try TortureRun(options: o).run().scenarios[0]
    }

    func testPowerCutsUnderEveryModeLoseNothingAcknowledged() throws {
        let r = try run("power-cut", cycles: 10, seed: 31)
        XCTAssertTrue(r.passed, "\(r.failures.map(\.violations))")
        XCTAssertEqual(r.cycles, 10)
    }

    func testPowerCutCatchesAMissingDataSync() throws {
        guard BrokenVariant.available else { return XCTFail("broken variants exist only in debug builds") }
        let r = try run("power-cut", cycles: 10, seed: 31, broken: .noDataSync)
        XCTAssertFalse(r.passed, "no-data-sync survived 10 power-cut cycles unnoticed")
        print("no-data-sync caught: \(r.failures.first?.violations.first?.text ?? "")")
    }

    func testIOErrorsAreReportedAndLoseNothing() throws {
        let r = try run("io-errors", cycles: 8, seed: 32)
        XCTAssertTrue(r.passed, "\(r.failures.map(\.violations))")
    }
}
