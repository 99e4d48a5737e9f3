import XCTest
import Engine
import FaultFS
@testable import Torture
import TortureSchema

/// Create, compact and writeCopy under a death at each of their crash points and under power
/// cuts after they returned. The correct engine shows no violation; an engine that skips the
/// directory sync after compact's rename, or the sync of the copy, is caught by power cuts.
final class FileOperationsTests: XCTestCase {
    func run(seed: UInt64, cycles: Int, broken: BrokenVariant? = nil) throws -> ScenarioResult {
        try runScenario("file-ops", seed: seed, cycles: cycles, broken: broken)
    }

    func testCorrectEngineSurvivesEveryFileOperationCrashPoint() throws {
        for seed: UInt64 in [3, 4] {
            let r = try run(seed: seed, cycles: 36)
            XCTAssertTrue(r.passed, "seed \(seed): \(r.failures.map(\.violations))")
            let every = Set(
                (CrashPoint.createPoints + CrashPoint.compactPoints + CrashPoint.writeCopyPoints).map(\.rawValue))
            XCTAssertTrue(
                every.isSubset(of: Set(r.crashPointsCovered)), "uncovered: \(every.subtracting(r.crashPointsCovered))")
        }
    }

    func testBrokenFileOperationsAreCaughtByPowerCuts() throws {
        guard BrokenVariant.available else { return XCTFail("broken variants exist only in debug builds") }
        let expected: [(BrokenVariant, String)] = [
            (.compactNoDirSync, "durability: commit"),
            (.copyNoSync, "copy: ")
        ]
        for (variant, words) in expected {
            let r = try run(seed: 3, cycles: 36, broken: variant)
            let all = r.failures.flatMap(\.violations).map(\.text)
            XCTAssertTrue(
                all.contains { $0.contains(words) && $0.contains("power cut") },
                "\(variant.rawValue): expected a power-cut violation with '\(words)', found \(all.prefix(3))")
            print("\(variant.rawValue) caught: \(all.first ?? "")")
        }
    }
}
