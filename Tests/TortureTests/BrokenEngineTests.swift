import XCTest
import Engine
@testable import Torture

/// The checkers are trusted only because they catch engines broken on purpose. Each variant
/// here is caught by process crashes alone; the power-cut variants need FaultFS.
final class BrokenEngineTests: XCTestCase {
    override func setUpWithError() throws {
        guard BrokenVariant.available else {
            XCTFail(
                "this build has no broken engine variants (they exist only in debug builds); run the tests in debug")
            return
        }
    }

    /// Sweeps every crash point; returns every violation found.
    func sweep(_ variant: BrokenVariant, seed: UInt64) throws -> [String] {
        let dir = TempDir()
        var cycle = CrashCycle(
            dbPath: dir.file("db.fief"), oraclePath: dir.file("oracle.log"), seed: seed, logPath: dir.file("writer.out")
        )
        cycle.environment = [BrokenVariant.environmentVariable: variant.rawValue]
        var found: [String] = []
        for nth in [3, 5] {
            for point in CrashPoint.commitPoints {
                let o = try cycle.crash(at: point, nth: nth)
                found += o.violations.map { "\(o.description): \($0.text)" }
            }
        }
        return found
    }

    func testFlipBeforeTopIsCaught() throws {
        let v = try sweep(.flipBeforeTop, seed: 11)
        XCTAssertFalse(v.isEmpty, "flip-before-top went unnoticed")
        print("flip-before-top caught: \(v.first ?? "")")
    }

    func testTopInActiveSlotIsCaught() throws {
        let v = try sweep(.topInActiveSlot, seed: 14)
        XCTAssertFalse(v.isEmpty, "top-in-active-slot went unnoticed")
        print("top-in-active-slot caught: \(v.first ?? "")")
    }

    func testOverwriteInPlaceIsCaught() throws {
        let v = try sweep(.overwriteInPlace, seed: 12)
        XCTAssertFalse(v.isEmpty, "overwrite-in-place went unnoticed")
        print("overwrite-in-place caught: \(v.first ?? "")")
    }

    func testPatchMappedPageIsCaught() throws {
        let v = try sweep(.patchMappedPage, seed: 12)
        XCTAssertFalse(v.isEmpty, "patch-mapped-page went unnoticed")
        print("patch-mapped-page caught: \(v.first ?? "")")
    }

    func testReadUncommittedIsCaught() throws {
        let v = try sweep(.readUncommitted, seed: 13)
        XCTAssertFalse(v.isEmpty, "read-uncommitted went unnoticed")
        print("read-uncommitted caught: \(v.first ?? "")")
    }

    func testCorrectEngineShowsNoViolationOnTheSameSeeds() throws {
        let dir = TempDir()
        for s: UInt64 in [11, 12, 13, 14] {
            let cycle = CrashCycle(dbPath: dir.file("db\(s).fief"), oraclePath: dir.file("oracle\(s).log"), seed: s)
            for nth in [3, 5] {
                for point in CrashPoint.commitPoints {
                    let o = try cycle.crash(at: point, nth: nth)
                    XCTAssertTrue(o.verdict.passed, "\(o.description): \(o.violations)")
                }
            }
        }
    }
}
