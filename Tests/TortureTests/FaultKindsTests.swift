import XCTest
import Engine
import FaultFS
@testable import Torture
import TortureSchema

/// The faults no other scenario injects: short writes, latency, bit flips on reads, FaultFS
/// killing the writer at a write or sync, and a lying fsync before a power cut.
final class FaultKindsTests: XCTestCase {
    func run(seed: UInt64, cycles: Int, broken: BrokenVariant? = nil) throws -> ScenarioResult {
        try runScenario("faults", seed: seed, cycles: cycles, broken: broken)
    }

    func testCorrectEngineUnderEveryFaultKind() throws {
        for seed: UInt64 in [5, 7] {
            let r = try run(seed: seed, cycles: 10)
            XCTAssertTrue(r.passed, "seed \(seed): \(r.failures.map(\.violations))")
            XCTAssertEqual(Set(r.modes.map(\.name)), Set(FaultKindsScenario.kinds))
            XCTAssertTrue(
                r.notes.contains { $0.contains("as expected, the lying fsync lost acknowledged commits") },
                "a lying fsync must be reported as the cause of lost commits: \(r.notes)")
        }
    }

    func testBrokenVariantsForTheNewChecksAreCaught() throws {
        guard BrokenVariant.available else { return XCTFail("broken variants exist only in debug builds") }
        let expected: [(BrokenVariant, String)] = [
            (.ignoreShortWrite, "after short-write"),
            (.noChecksumVerify, "bit flips with checksums verified"),
            (.gapOverCells, "stray bytes in its free gap")
        ]
        for (variant, words) in expected {
            let r = try run(seed: 5, cycles: 10, broken: variant)
            let all = r.failures.flatMap(\.violations).map(\.text)
            XCTAssertTrue(
                all.contains { $0.contains(words) }, "\(variant.rawValue): expected '\(words)', found \(all.prefix(3))")
            print("\(variant.rawValue) caught: \(all.first ?? "")")
        }
    }
}
