import XCTest
import Engine
import FaultFS
@testable import Torture

/// Create, compact and writeCopy under a death at each of their crash points and under power
/// cuts after they returned. The correct engine shows no violation; an engine that skips the
/// directory sync after compact's rename, or the sync of the copy, is caught by power cuts.
final class FileOperationsTests: XCTestCase {
    func run(seed: UInt64, cycles: Int, broken: BrokenVariant? = nil) throws -> ScenarioResult {
        if let why = Mounter.fuseUnavailableReason() {
            FileHandle.standardError.write(Data("\n*** file-ops (its power-cut cycles) NEEDS FUSE AND CANNOT RUN HERE: \(why) ***\n".utf8))
            throw XCTSkip("file-ops needs FUSE for its power-cut cycles: \(why)")
        }
        let dir = TempDir()
        var o = TortureOptions(seed: seed)
        o.scenarios = ["file-ops"]
        o.cycles = cycles
        o.out = dir.file("out")
        o.broken = broken
        return try TortureRun(options: o).run().scenarios[0]
    }

    func testCorrectEngineSurvivesEveryFileOperationCrashPoint() throws {
        for seed: UInt64 in [3, 4] {
            let r = try run(seed: seed, cycles: 36)
            XCTAssertTrue(r.passed, "seed \(seed): \(r.failures.map(\.violations))")
            let every = Set((CrashPoint.createPoints + CrashPoint.compactPoints + CrashPoint.writeCopyPoints).map(\.rawValue))
            XCTAssertTrue(every.isSubset(of: Set(r.crashPointsCovered)), "uncovered: \(every.subtracting(r.crashPointsCovered))")
        }
    }

    func testBrokenFileOperationsAreCaughtByPowerCuts() throws {
        guard BrokenVariant.available else { return XCTFail("broken variants exist only in debug builds") }
        let expected: [(BrokenVariant, String)] = [
            (.compactNoDirSync, "durability: commit"),
            (.copyNoSync, "copy: "),
        ]
        for (variant, words) in expected {
            let r = try run(seed: 3, cycles: 36, broken: variant)
            let all = r.failures.flatMap(\.violations)
            XCTAssertTrue(all.contains { $0.contains(words) && $0.contains("power cut") }, "\(variant.rawValue): expected a power-cut violation with '\(words)', found \(all.prefix(3))")
            print("\(variant.rawValue) caught: \(all.first ?? "")")
        }
    }
}
