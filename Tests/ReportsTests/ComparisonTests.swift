import XCTest
@testable import Reports

final class ComparisonTests: XCTestCase {
    func row(_ c: Comparison, _ id: String, _ s: SystemName, metric: String? = nil) -> Comparison.Row? {
        c.rows.first { $0.benchmark == id && $0.system == s && (metric == nil || $0.metric == metric) }
    }

    func testUnchangedIsWithinNoiseAndExitsZero() {
        let c = Comparison.compare(base: Fixtures.results(), new: Fixtures.results(label: "new"), threshold: 0.05)
        XCTAssertTrue(c.rows.allSatisfy { $0.verdict == .withinNoise }, "\(c.rows)")
        XCTAssertTrue(c.rows.filter { $0.metric != "size" }.allSatisfy { ($0.test?.pValue ?? 0) > 0.5 }, "\(c.rows)")
        XCTAssertEqual(c.exitCode, 0)
        XCTAssertEqual(c.baseLabel, "base")
        XCTAssertEqual(c.newLabel, "new")
    }

    func testRegressionBeyondThresholdExitsTwo() throws {
        // Reads drop 20% with 1% spread each side: every new sample is below every base one.
        let c = Comparison.compare(base: Fixtures.results(), new: Fixtures.results(reads: 800_000), threshold: 0.05)
        let r = try XCTUnwrap(row(c, "point-reads", .fief))
        let t = try XCTUnwrap(r.test)
        XCTAssertEqual(r.ratio, 0.8, accuracy: 1e-12)
        XCTAssertEqual(r.change, -0.2, accuracy: 1e-9)
        XCTAssertEqual(
            t.pValue, 2.0 / 252, accuracy: 1e-12, "5 against 5, fully separated: the exact test's smallest p")
        XCTAssertLessThan(t.low, -0.2)
        XCTAssertGreaterThan(t.high, -0.2)
        XCTAssertLessThan(t.high, 0)
        // Every system moved alike in each repetition, so Fief's ratio to its peers fell 20% too.
        XCTAssertEqual(r.relative.map(\.against), ["SQLite", "LMDB", "peers"])
        XCTAssertEqual(try XCTUnwrap(r.control).test.change, -0.2, accuracy: 1e-9)
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
        XCTAssertEqual(
            Comparison.compare(base: Fixtures.results(), new: Fixtures.results(reads: 970_000), threshold: 0.02)
                .exitCode, 2)
    }

    func testChangeInsideNoiseIsWithinNoiseEvenPastThreshold() throws {
        // Fief's samples wander ±10%: a 10% drop overlaps the base and is not significant.
        let c = Comparison.compare(
            base: Fixtures.results(readsSpread: 0.1), new: Fixtures.results(reads: 900_000, readsSpread: 0.1),
            threshold: 0.05)
        let r = try XCTUnwrap(row(c, "point-reads", .fief))
        XCTAssertGreaterThan(try XCTUnwrap(r.test).pValue, 0.05)
        XCTAssertEqual(r.verdict, .withinNoise)
        XCTAssertEqual(c.exitCode, 0)
    }

    func testDriftOfEverySystemDoesNotFail() throws {
        // The machine got 20% slower for every system: Fief's own samples fell significantly,
        // its ratio to the peers did not move.
        let base = Fixtures.results()
        var new = Fixtures.results(label: "new")
        for b in new.benchmarks.indices where new.benchmarks[b].unit == "ops/s" {
            for s in new.benchmarks[b].systems.indices {
                new.benchmarks[b].systems[s].value = SampleStats(
                    new.benchmarks[b].systems[s].value.samples.map { $0 * 0.8 })
            }
        }
        let c = Comparison.compare(base: base, new: new, threshold: 0.05)
        let r = try XCTUnwrap(row(c, "point-reads", .fief))
        XCTAssertLessThan(try XCTUnwrap(r.test).pValue, 0.05)
        XCTAssertEqual(try XCTUnwrap(r.control).test.change, 0, accuracy: 1e-9)
        XCTAssertEqual(r.verdict, .drift)
        XCTAssertFalse(r.failsGate)
        XCTAssertEqual(c.exitCode, 0)
        // The peers' rows show the drift.
        XCTAssertEqual(row(c, "point-reads", .lmdb)?.verdict, .regression)
    }

    func testWithoutPeersFiefsOwnSamplesDecide() throws {
        var base = Fixtures.results(), new = Fixtures.results(reads: 800_000)
        for i in base.benchmarks.indices { base.benchmarks[i].systems.removeAll { $0.system != .fief } }
        for i in new.benchmarks.indices { new.benchmarks[i].systems.removeAll { $0.system != .fief } }
        let c = Comparison.compare(base: base, new: new, threshold: 0.05)
        XCTAssertEqual(row(c, "point-reads", .fief)?.failsGate, true)
        XCTAssertTrue(c.warnings.contains { $0.contains("no peers") }, "\(c.warnings)")
    }

    func testTooFewSamplesAreNotGated() throws {
        var base = Fixtures.results(), new = Fixtures.results(reads: 500_000)
        for r in [0, 1] {
            var res = r == 0 ? base : new
            for b in res.benchmarks.indices {
                for s in res.benchmarks[b].systems.indices {
                    res.benchmarks[b].systems[s].value = SampleStats(
                        Array(res.benchmarks[b].systems[s].value.samples.prefix(3)))
                }
            }
            if r == 0 { base = res } else { new = res }
        }
        let c = Comparison.compare(base: base, new: new, threshold: 0.05)
        XCTAssertEqual(row(c, "point-reads", .fief)?.verdict, .tooFewSamples)
        XCTAssertEqual(c.exitCode, 0)
        XCTAssertTrue(c.warnings.contains { $0.contains("fewer than 5 samples") }, "\(c.warnings)")
        // With a lower minimum the same samples decide (3 against 3 fully apart: p = 0.1).
        let loose = Comparison.compare(
            base: base, new: new, policy: GatePolicy(threshold: 0.05, alpha: 0.2, minSamples: 3))
        XCTAssertEqual(loose.exitCode, 2)
    }

    func testImprovement() throws {
        let c = Comparison.compare(base: Fixtures.results(), new: Fixtures.results(reads: 1_300_000), threshold: 0.05)
        let r = try XCTUnwrap(row(c, "point-reads", .fief))
        XCTAssertEqual(r.verdict, .improvement)
        XCTAssertEqual(r.change, 0.3, accuracy: 1e-9)
        XCTAssertEqual(c.exitCode, 0)
    }

    func testSmallerIsBetterForSizes() throws {
        // The file grows from 4 MB to 5 MB: change = 4/5 - 1 = -20%, exactly (sizes are deterministic).
        let c = Comparison.compare(base: Fixtures.results(), new: Fixtures.results(size: 5_000_000), threshold: 0.05)
        let r = try XCTUnwrap(row(c, "churn", .fief))
        XCTAssertEqual(r.metric, "size")
        XCTAssertNil(r.test)
        XCTAssertEqual(r.change, -0.2, accuracy: 1e-12)
        XCTAssertEqual(r.verdict, .regression)
        XCTAssertEqual(c.exitCode, 2)
        let better = Comparison.compare(
            base: Fixtures.results(), new: Fixtures.results(size: 2_000_000), threshold: 0.05)
        XCTAssertEqual(row(better, "churn", .fief)?.verdict, .improvement)
    }

    func testPeersNeverGate() throws {
        let c = Comparison.compare(
            base: Fixtures.results(), new: Fixtures.results(sqliteReads: 100_000), threshold: 0.05)
        XCTAssertEqual(row(c, "point-reads", .sqlite)?.verdict, .regression)
        XCTAssertEqual(row(c, "point-reads", .sqlite)?.failsGate, false)
        // Fief did not move; only a peer did.
        XCTAssertEqual(row(c, "point-reads", .fief)?.verdict, .drift)
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
        XCTAssertEqual(v.samples.count, 10)
        // Pooled: 990k … 1.01M and 1.089M … 1.111M; the median sits between 1.01M and 1.089M.
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
        let reads = try XCTUnwrap(
            r.targets.first { $0.benchmark == "point-reads" && $0.peer == .lmdb && $0.metric == "throughput" })
        XCTAssertEqual(reads.ratio ?? 0, 0.5, accuracy: 1e-12)
        XCTAssertEqual(reads.met, false, "issue 12 asks for at least LMDB's throughput")
        // Fixture latencies: Fief p50 1.0 µs, LMDB 0.5 µs: 2x, above the 1.5x allowed.
        let latency = try XCTUnwrap(r.targets.first { $0.benchmark == "point-reads" && $0.metric == "latency p50" })
        XCTAssertEqual(latency.ratio ?? 0, 2.0, accuracy: 1e-12)
        XCTAssertEqual(latency.met, false)
        XCTAssertEqual(latency.requirement, "<= 1.50x LMDB")
        let vsSQLite = try XCTUnwrap(r.targets.first { $0.benchmark == "point-reads" && $0.peer == .sqlite })
        XCTAssertEqual(vsSQLite.ratio ?? 0, 2.0, accuracy: 1e-12)
        let mem = try XCTUnwrap(r.targets.first { $0.metric == "peak memory" })
        XCTAssertEqual(mem.ratio ?? 0, 1.5, accuracy: 1e-12)
        XCTAssertEqual(mem.met, true)
        let insertVsLMDB = try XCTUnwrap(
            r.targets.first { $0.benchmark == "bulk-insert" && $0.peer == .lmdb && $0.metric == "throughput" })
        XCTAssertEqual(insertVsLMDB.ratio ?? 0, 0.625, accuracy: 1e-12)
        // Targets without their benchmark are simply absent.
        XCTAssertNil(r.targets.first { $0.benchmark == "scan" })
    }
}
