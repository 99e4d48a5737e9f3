import XCTest
@testable import Reports

final class ComparisonTests: XCTestCase {
    func row(_ c: Comparison, _ id: String, _ s: SystemName, metric: String? = nil) -> Comparison.Row? {
        c.rows.first { $0.benchmark == id && $0.system == s && (metric == nil || $0.metric == metric) }
    }

    func testUnchangedIsWithinNoiseAndExitsZero() {
        let c = Comparison.compare(base: Fixtures.results(), new: Fixtures.results(label: "new"), threshold: 0.05)
        XCTAssertTrue(c.rows.allSatisfy { $0.verdict == .withinNoise }, "\(c.rows)")
        XCTAssertEqual(c.exitCode, 0)
        XCTAssertEqual(c.baseLabel, "base")
        XCTAssertEqual(c.newLabel, "new")
    }

    func testRegressionBeyondThresholdExitsTwo() throws {
        // Reads drop 20% with 1% spread each side: noise = sqrt(2) * 1% ≈ 1.41%.
        let c = Comparison.compare(base: Fixtures.results(), new: Fixtures.results(reads: 800_000), threshold: 0.05)
        let r = try XCTUnwrap(row(c, "point-reads", .fief))
        XCTAssertEqual(r.ratio, 0.8, accuracy: 1e-12)
        XCTAssertEqual(r.change, -0.2, accuracy: 1e-12)
        XCTAssertEqual(r.noise, (2 * 0.01 * 0.01).squareRoot(), accuracy: 1e-9)
        XCTAssertEqual(r.verdict, .regression)
        XCTAssertTrue(r.failsGate)
        XCTAssertEqual(c.exitCode, 2)
        XCTAssertTrue(ComparisonReport.terminal(c).contains("REGRESSION"))
    }

    func testRegressionBelowThresholdIsReportedButDoesNotFail() throws {
        let c = Comparison.compare(base: Fixtures.results(), new: Fixtures.results(reads: 970_000), threshold: 0.05)
        let r = try XCTUnwrap(row(c, "point-reads", .fief))
        XCTAssertEqual(r.verdict, .regression)
        XCTAssertFalse(r.failsGate)
        XCTAssertEqual(c.exitCode, 0)
        // The same drop fails a 2% gate.
        XCTAssertEqual(Comparison.compare(base: Fixtures.results(), new: Fixtures.results(reads: 970_000), threshold: 0.02).exitCode, 2)
    }

    func testChangeInsideNoiseIsWithinNoiseEvenPastThreshold() throws {
        // 10% spread on both sides: noise ≈ 14.1%, so a 10% drop is noise, not a regression.
        let c = Comparison.compare(base: Fixtures.results(readsSpread: 0.1), new: Fixtures.results(reads: 900_000, readsSpread: 0.1), threshold: 0.05)
        XCTAssertEqual(row(c, "point-reads", .fief)?.verdict, .withinNoise)
        XCTAssertEqual(c.exitCode, 0)
    }

    func testImprovement() throws {
        let c = Comparison.compare(base: Fixtures.results(), new: Fixtures.results(reads: 1_300_000), threshold: 0.05)
        let r = try XCTUnwrap(row(c, "point-reads", .fief))
        XCTAssertEqual(r.verdict, .improvement)
        XCTAssertEqual(r.change, 0.3, accuracy: 1e-12)
        XCTAssertEqual(c.exitCode, 0)
    }

    func testSmallerIsBetterForSizes() throws {
        // The file grows from 4 MB to 5 MB: change = 4/5 - 1 = -20%.
        let c = Comparison.compare(base: Fixtures.results(), new: Fixtures.results(size: 5_000_000), threshold: 0.05)
        let r = try XCTUnwrap(row(c, "churn", .fief))
        XCTAssertEqual(r.metric, "size")
        XCTAssertEqual(r.change, -0.2, accuracy: 1e-12)
        XCTAssertEqual(r.verdict, .regression)
        XCTAssertEqual(c.exitCode, 2)
        let better = Comparison.compare(base: Fixtures.results(), new: Fixtures.results(size: 2_000_000), threshold: 0.05)
        XCTAssertEqual(row(better, "churn", .fief)?.verdict, .improvement)
    }

    func testPeersNeverGate() throws {
        let c = Comparison.compare(base: Fixtures.results(), new: Fixtures.results(sqliteReads: 100_000), threshold: 0.05)
        XCTAssertEqual(row(c, "point-reads", .sqlite)?.verdict, .regression)
        XCTAssertEqual(row(c, "point-reads", .sqlite)?.failsGate, false)
        XCTAssertEqual(c.exitCode, 0)
    }

    func testPeakMemoryIsCompared() throws {
        let c = Comparison.compare(base: Fixtures.results(), new: Fixtures.results(), threshold: 0.05)
        XCTAssertEqual(row(c, "bulk-insert", .fief, metric: "peak memory")?.verdict, .withinNoise)
    }

    func testContextWarnings() {
        let c = Comparison.compare(base: Fixtures.results(), new: Fixtures.results(build: "debug"), threshold: 0.05)
        XCTAssertTrue(c.warnings.contains { $0.contains("build configurations") }, "\(c.warnings)")
    }

    func testUnmatchedBenchmarks() {
        var n = Fixtures.results()
        n.benchmarks.removeAll { $0.id == "churn" }
        let c = Comparison.compare(base: Fixtures.results(), new: n, threshold: 0.05)
        XCTAssertEqual(c.unmatched, ["churn (only in base)"])
    }

    func testThresholdParsing() throws {
        XCTAssertEqual(try Comparison.parseThreshold("5%"), 0.05, accuracy: 1e-12)
        XCTAssertEqual(try Comparison.parseThreshold("2.5"), 0.025, accuracy: 1e-12)
        XCTAssertEqual(try Comparison.parseThreshold(" 0% "), 0)
        for bad in ["", "abc", "-1%", "150%", "5%%", "nan"] {
            XCTAssertThrowsError(try Comparison.parseThreshold(bad), bad) { e in
                XCTAssertEqual(e as? BenchError, .badThreshold(bad))
            }
        }
    }

    func testCombinePoolsSamples() throws {
        let a = Fixtures.results(reads: 1_000_000), b = Fixtures.results(reads: 1_100_000)
        let c = try BenchResults.combine([a, b])
        let v = try XCTUnwrap(c.benchmark("point-reads")?.result(.fief)?.value)
        XCTAssertEqual(v.samples.count, 6)
        // Pooled: 990k 1M 1.01M and 1.089M 1.1M 1.111M; the median sits between 1.01M and 1.089M.
        XCTAssertEqual(v.median, (1_010_000 + 1_089_000) / 2, accuracy: 1e-6)
        XCTAssertEqual(c.parameters.repetitions, a.parameters.repetitions + b.parameters.repetitions)
    }

    func testCombineRefusesDifferentParameters() {
        var b = Fixtures.results()
        b.parameters.records = 7
        XCTAssertThrowsError(try BenchResults.combine([Fixtures.results(), b])) { e in
            guard case .badArgument? = e as? BenchError else { return XCTFail("\(e)") }
        }
    }

    func testTargetsAsRatios() throws {
        let r = Fixtures.results()
        let reads = try XCTUnwrap(r.targets.first { $0.benchmark == "point-reads" && $0.peer == .lmdb })
        XCTAssertEqual(reads.ratio ?? 0, 0.5, accuracy: 1e-12)
        XCTAssertEqual(reads.met, true)
        let vsSQLite = try XCTUnwrap(r.targets.first { $0.benchmark == "point-reads" && $0.peer == .sqlite })
        XCTAssertEqual(vsSQLite.ratio ?? 0, 2.0, accuracy: 1e-12)
        let mem = try XCTUnwrap(r.targets.first { $0.metric == "peak memory" })
        XCTAssertEqual(mem.ratio ?? 0, 1.5, accuracy: 1e-12)
        XCTAssertEqual(mem.met, true)
        let insertVsLMDB = try XCTUnwrap(r.targets.first { $0.benchmark == "bulk-insert" && $0.peer == .lmdb && $0.metric == "throughput" })
        XCTAssertEqual(insertVsLMDB.ratio ?? 0, 0.625, accuracy: 1e-12)
        // Targets without their benchmark are simply absent.
        XCTAssertNil(r.targets.first { $0.benchmark == "scan" })
    }
}
