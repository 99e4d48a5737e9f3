import XCTest
import Reports
@testable import Torture

/// The torture results Torture writes and Reports reads are two sets of types (Reports does
/// not depend on Torture); this round trip keeps them from drifting apart.
final class ResultsSchemaTests: XCTestCase {
    func testReportsReadsWhatTortureWrites() throws {
        var r = TortureResults(seed: 42, profile: "quick", shard: "1/2", started: "2026-11-23T00:00:00Z")
        r.durationSeconds = 12.5
        var s = ScenarioResult(name: "objects")
        s.cycles = 9
        s.violations = 2
        s.durationSeconds = 3.25
        s.modes = [ModeResult(name: "objects-crash-point", cycles: 6, violations: 2), ModeResult(name: "objects-drop-all", cycles: 3)]
        r.scenarios = [s, ScenarioResult(name: "growth")]
        var g = GrowthCurve()
        g.sizes = [4096, 8192, 8192]
        g.liveBytes = [4096, 4096, 4096]
        g.pinnedAtCommit = 1
        g.releasedAtCommit = 2
        g.boundBytes = 16384
        g.compactedSize = 8192
        r.growth = g
        let dir = TempDir()
        try ResultFiles.write(r, to: dir.path)

        let read = try ResultIO.load(TortureSummary.self, from: dir.file("results.json"))
        XCTAssertEqual(read.seed, 42)
        XCTAssertEqual(read.profile, "quick")
        XCTAssertEqual(read.shard, "1/2")
        XCTAssertEqual(read.durationSeconds, 12.5)
        XCTAssertFalse(read.passed)
        XCTAssertEqual(read.scenarios.map(\.name), ["objects", "growth"])
        XCTAssertEqual(read.scenarios[0].cycles, 9)
        XCTAssertEqual(read.scenarios[0].violations, 2)
        XCTAssertEqual(read.scenarios[0].durationSeconds, 3.25)
        XCTAssertEqual(read.scenarios[0].modes.map(\.name), ["objects-crash-point", "objects-drop-all"])
        XCTAssertEqual(read.scenarios[0].modes.map(\.violations), [2, 0])
        XCTAssertEqual(read.growth?.sizes, g.sizes)
        XCTAssertEqual(read.growth?.liveBytes, g.liveBytes)
        XCTAssertEqual(read.growth?.pinnedAtCommit, 1)
        XCTAssertEqual(read.growth?.releasedAtCommit, 2)
        XCTAssertEqual(read.growth?.boundBytes, 16384)
        XCTAssertEqual(read.growth?.compactedSize, 8192)
    }
}
