import XCTest
import Engine
import FaultFS
import FiefObjects
@testable import Torture
import TortureSchema

/// The `objects` scenario: crash points, random kills, power cuts and killed migrations on an
/// object graph. The correct object layer shows no violation; each object layer broken on
/// purpose is caught, by the check that should catch it.
final class ObjectsScenarioTests: XCTestCase {
    func run(seed: UInt64, cycles: Int = 9, broken: BrokenObjectLayer? = nil) throws -> ScenarioResult {
        try runScenario("objects", seed: seed, cycles: cycles, brokenObjects: broken)
    }

    func testCorrectObjectLayerShowsNoViolation() throws {
        for seed: UInt64 in [42, 43] {
            let r = try run(seed: seed)
            XCTAssertTrue(r.passed, "seed \(seed): \(r.failures.map(\.violations))")
            XCTAssertEqual(r.cycles, 9)
            XCTAssertTrue(r.crashPointsCovered.contains("after-select-flip"))
            XCTAssertTrue(r.crashPointsCovered.contains { $0.hasPrefix("migration-") })
            XCTAssertTrue(r.crashPointsCovered.contains { $0.hasPrefix("conversion-") })
        }
    }

    func testEveryBrokenObjectLayerIsCaught() throws {
        guard BrokenObjectLayer.available else { return XCTFail("broken object layers exist only in debug builds") }
        // What each variant breaks, and the words of the check that must report it.
        let expected: [(BrokenObjectLayer, String)] = [
            (.skipBacklink, "objects: "),
            (.staleIndex, "index has"),
            (.noCascade, "atomicity: graph is not the graph"),
            (.migrationSplit, "migration to schema 2 killed"),
            (.conversionSplit, "format conversion killed"),
            // Reading such rows trapped in the verifier's getters: now a violation, and the run goes on.
            (.shortRow, "reading the recovered object graph failed"),
            (.keyCounterBehind, "is not above key"),
            (.listChunkFromOne, "starts at chunk 1, not 0"),
            (.indexRangeDropsLast, "queries at commit"),
            (.rewriteDropsBacklinks, "backlinks are not the inverse"),
            (.staleClusterSummary, "that its rows break")
        ]
        for (variant, words) in expected {
            let r = try run(seed: 42, broken: variant)
            XCTAssertFalse(r.passed, "\(variant.rawValue) went unnoticed")
            let all = r.failures.flatMap(\.violations).map(\.text)
            XCTAssertTrue(
                all.contains { $0.contains(words) },
                "\(variant.rawValue): expected a violation with '\(words)', found \(all.prefix(3))")
            // The verifier never dies on what it reads: it reports (a dead verifier would be a
            // violation too, so it must not be the one that catches a variant).
            XCTAssertFalse(
                all.contains { $0.contains("objects verifier killed") || $0.contains("objects verifier hung") },
                "\(variant.rawValue): the verifier died instead of reporting: \(all.prefix(3))")
            if [.shortRow, .keyCounterBehind].contains(variant) {
                // Their writers fail too (reading their own rows, reusing a key); the words above
                // come from the verifier's report.
            } else {
                XCTAssertFalse(
                    all.contains { $0.contains("instead of being killed") || $0.contains("failed on its own") },
                    "\(variant.rawValue): a harness failure is not a catch: \(all.prefix(3))")
            }
            print("\(variant.rawValue) caught: \(all.first ?? "")")
        }
    }
}
