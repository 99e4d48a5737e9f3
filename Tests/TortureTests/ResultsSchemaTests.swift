import XCTest
import Reports
@testable import Torture
import TortureSchema

/// Torture writes results.json and detection.json and Reports reads them, through the one schema
/// in TortureSchema; this round trip goes through the files, and pins the keys readers outside
/// Fief may rely on (the derived `passed`, `verdict`, `choices`).
final class ResultsSchemaTests: XCTestCase {
    func testReportsReadsWhatTortureWrites() throws {
        var r = TortureResults(seed: 42, profile: "quick", shard: "1/2", started: "2026-11-23T00:00:00Z")
        r.durationSeconds = 12.5
        var s = ScenarioResult(name: "objects")
        s.cycles = 9
        s.violations = 2
        s.durationSeconds = 3.25
        s.modes = [
            ModeResult(name: "objects-crash-point", cycles: 6, violations: 2),
            ModeResult(name: "objects-drop-all", cycles: 3)
        ]
        var states = ScenarioResult(name: "crash-states")
        states.crashStates = [
            CrashStateCoverage(
                cycle: 0, commit: 7, crashPoint: "after-select-flip-write", unsyncedSectors: 5, sizeChoice: true,
                statesExplored: 64, exhaustive: true),
            CrashStateCoverage(
                cycle: 1, commit: 9, crashPoint: "before-data-sync", unsyncedSectors: 60, sizeChoice: false,
                statesExplored: 256, exhaustive: false)
        ]
        r.scenarios = [s, ScenarioResult(name: "growth"), states]
        r.fsModel = "ext4-ordered"
        var g = GrowthCurve()
        g.sizes = [4096, 8192, 8192]
        g.liveBytes = [4096, 4096, 4096]
        g.pinnedAtCommit = 1
        g.releasedAtCommit = 2
        g.boundBytes = 16384
        g.compactedSize = 8192
        r.growth = g
        let dir = TempDir()
        let detection = [
            Detection.Row(
                variant: "no-data-sync", scenario: "crash-states", caught: true, cyclesToDetection: 2, cyclesRun: 2,
                firstViolation: Violation(.durability, "lost | commit 3")),
            Detection.Row(
                variant: "no-reclaim", scenario: "readers", caught: false, cyclesToDetection: nil, cyclesRun: 4,
                firstViolation: nil)
        ]
        try Detection(seed: 1, cycles: 4, out: dir.path).write(detection)
        let lost = Violation(.durability, "commit 3 was acknowledged but the file holds only commit 2")
        let torn = Violation(kind: .atomicity, text: "bank: the balances add up to 990, not 1000")
        r.scenarios[0].failures = [
            CycleFailure(
                cycle: 4, seed: 99, description: "crash at after-data-sync:1 from commit 2",
                violations: [lost.prefixed("crash at after-data-sync:1 from commit 2"), torn],
                artifacts: nil, reproduce: "fief torture run --scenario objects --seed 42 --only-cycle 4")
        ]
        try ResultFiles.write(r, to: dir.path)

        let read = try ResultIO.load(TortureResults.self, from: dir.file("results.json"))
        let json = try JSONSerialization.jsonObject(
            with: Data(contentsOf: URL(fileURLWithPath: dir.file("results.json"))))
        let top = try XCTUnwrap(json as? [String: Any])
        XCTAssertEqual(top["passed"] as? Bool, false)
        let written = try XCTUnwrap(top["scenarios"] as? [[String: Any]])
        XCTAssertEqual(written[0]["verdict"] as? String, "other violations")
        XCTAssertEqual((written[0]["modes"] as? [[String: Any]])?.map { $0["passed"] as? Bool }, [false, true])
        let coverage = try XCTUnwrap(written[2]["crashStates"] as? [[String: Any]])
        XCTAssertEqual(coverage.map { $0["choices"] as? Int }, [6, 60])
        XCTAssertEqual(coverage[0]["statesPossible"] as? Double, 64)
        XCTAssertEqual(read.seed, 42)
        XCTAssertEqual(read.profile, "quick")
        XCTAssertEqual(read.shard, "1/2")
        XCTAssertEqual(read.durationSeconds, 12.5)
        XCTAssertFalse(read.passed)
        XCTAssertEqual(read.scenarios.map(\.name), ["objects", "growth", "crash-states"])
        XCTAssertEqual(read.fsModel, "ext4-ordered")
        XCTAssertEqual(read.scenarios[2].crashStates.map(\.choices), [6, 60])
        XCTAssertEqual(read.scenarios[2].crashStates.map(\.statesExplored), [64, 256])
        XCTAssertEqual(read.scenarios[2].crashStates.map(\.exhaustive), [true, false])
        XCTAssertEqual(read.scenarios[2].crashStates.map(\.crashPoint), ["after-select-flip-write", "before-data-sync"])
        // Violations reach Reports typed: kind and text as the checker made them.
        let failure = try XCTUnwrap(read.scenarios[0].failures.first)
        XCTAssertEqual(failure.violations.map(\.kind), [.durability, .atomicity])
        XCTAssertEqual(
            failure.violations.map(\.text),
            [
                "crash at after-data-sync:1 from commit 2: durability: commit 3 was acknowledged but the file holds "
                    + "only commit 2",
                "bank: the balances add up to 990, not 1000"
            ])
        let rows = try ResultIO.load([DetectionRow].self, from: dir.file("detection.json"))
        XCTAssertEqual(rows[0].firstViolation, Violation(.durability, "lost | commit 3"))
        XCTAssertEqual(rows.map(\.variant), ["no-data-sync", "no-reclaim"])
        XCTAssertEqual(rows.map(\.cyclesToDetection), [2, nil])
        XCTAssertEqual(rows.map(\.caught), [true, false])

        let summary = try String(contentsOfFile: dir.file("summary.md"), encoding: .utf8)
        XCTAssertTrue(summary.contains("FaultFS model `ext4-ordered`"), summary)
        XCTAssertTrue(summary.contains("## Crash states explored (crash-states)"), summary)
        XCTAssertTrue(summary.contains("| 6 | 1 | 64 | 64 | yes |"), summary)
        XCTAssertTrue(summary.contains("| 60 | 1 | 256 | 1 × 2^60 | sampled |"), summary)
        XCTAssertTrue(summary.contains("| `no-reclaim` | readers | **NO** | - |"), summary)
        XCTAssertTrue(summary.contains("durability: lost \\| commit 3 |"), summary)
        XCTAssertTrue(
            summary.contains("  - crash at after-data-sync:1 from commit 2: durability: commit 3 was acknowledged"),
            summary)
        XCTAssertTrue(summary.contains("  - bank: the balances add up to 990, not 1000\n"), summary)
        let html = HTMLReport.page(bench: nil, torture: read, detection: rows)
        XCTAssertTrue(html.contains("Detection: 1 of 2 broken variants caught"), html)
        XCTAssertTrue(html.contains("Crash states explored (crash-states)"))
        XCTAssertTrue(html.contains("<td>64</td><td>64</td>"))
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

    /// A file from before most fields existed reads with their defaults; another tool's is refused.
    func testOlderFilesReadWithDefaultsAndOtherToolsAreRefused() throws {
        let old = #"{"seed": 7, "scenarios": [{"name": "crash-points", "modes": [{"name": "random-kill"}]}]}"#
        let r = try JSONDecoder().decode(TortureResults.self, from: Data(old.utf8))
        XCTAssertEqual(r.tool, "fief torture")
        XCTAssertEqual(r.shard, "1/1")
        XCTAssertEqual(r.profile, "")
        XCTAssertEqual(r.engineFormatVersion, 1)
        XCTAssertEqual(r.target, .fief)
        XCTAssertEqual(r.fsModel, "posix")
        XCTAssertFalse(r.encrypted)
        XCTAssertNil(r.growth)
        XCTAssertEqual(r.scenarios[0].cycles, 0)
        XCTAssertEqual(r.scenarios[0].crashStates, [])
        XCTAssertEqual(r.scenarios[0].modes, [ModeResult(name: "random-kill")])
        XCTAssertTrue(r.passed)
        let other = #"{"tool": "fief bench", "seed": 7, "scenarios": []}"#
        XCTAssertThrowsError(try JSONDecoder().decode(TortureResults.self, from: Data(other.utf8))) {
            XCTAssertTrue("\($0)".contains("written by 'fief bench', not fief torture"), "\($0)")
        }
    }
}
