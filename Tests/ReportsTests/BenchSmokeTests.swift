import XCTest
import Engine
@testable import Reports

/// Runs every workload on every system on tiny sizes through the library API: it proves the
/// three stores and the harness work; it asserts no timing.
final class BenchSmokeTests: XCTestCase {
    func testSmokeRunCoversEveryWorkloadAndSystem() throws {
        let dir = NSTemporaryDirectory() + "fief-bench-smoke-\(getpid())"
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var lines: [String] = []
        let runner = BenchRunner(parameters: .smoke(seed: 7), workDirectory: dir, progress: { lines.append($0) })
        let r = try runner.run()
        XCTAssertEqual(
            Set(r.benchmarks.map(\.id)),
            [
                "bulk-insert", "point-reads", "scan", "small-txns.full", "small-txns.none", "small-txns.concurrent.1",
                "small-txns.concurrent.4", "readers-while-writing", "open", "churn"
            ])
        for b in r.benchmarks {
            XCTAssertEqual(b.systems.map(\.system), SystemName.allCases, b.id)
            for s in b.systems {
                XCTAssertGreaterThan(s.value.median, 0, "\(b.id) \(s.system)")
                XCTAssertEqual(s.value.samples.count, b.id == "churn" ? 1 : 2, "\(b.id) \(s.system)")
            }
        }
        XCTAssertEqual(r.benchmark("churn")?.result(.fief)?.curve?.count, 3)
        // Fief's durable one-record commits say what each cost: pages, and time waiting for syncs.
        let full = r.benchmark("small-txns.full")?.result(.fief)?.extra
        XCTAssertGreaterThan(full?["pagesPerCommit"] ?? 0, 0)
        XCTAssertGreaterThan(full?["syncMillisPerCommit"] ?? 0, 0)
        XCTAssertGreaterThan(full?["syncPercent"] ?? 0, 0)
        XCTAssertNil(r.benchmark("small-txns.full")?.result(.lmdb)?.extra?["pagesPerCommit"], "no counters for peers")
        XCTAssertEqual(r.benchmark("small-txns.none")?.result(.fief)?.extra?["syncMillisPerCommit"], 0)
        XCTAssertNotNil(r.benchmark("point-reads")?.result(.lmdb)?.latency)
        XCTAssertEqual(r.context.engineFormatVersion, Database.formatVersion)
        XCTAssertEqual(r.parameters.seed, 7)
        XCTAssertTrue(lines.first?.contains("seed 7") ?? false)
        XCTAssertFalse(r.targets.isEmpty)
    }
}

/// The objects suite on tiny sizes: every workload runs on Fief's object layer and on SQLite
/// with the same schema, and the objects targets are evaluated.
final class ObjectBenchSmokeTests: XCTestCase {
    func testObjectsSuiteCoversEveryWorkloadOnBothSystems() throws {
        let dir = NSTemporaryDirectory() + "fief-objbench-smoke-\(getpid())"
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var p = BenchParameters.smoke(seed: 9)
        p.suite = "objects"
        let r = try BenchRunner(parameters: p, workDirectory: dir).run()
        // No fief executable here for the cross-process observer: skipped, and said so.
        XCTAssertEqual(
            r.benchmarks.map(\.id), BenchRunner.objectWorkloadNames.filter { $0 != "obj.notify.cross-process" })
        XCTAssertTrue(r.notes.contains { $0.hasPrefix("obj.notify.cross-process not run") }, "\(r.notes)")
        for b in r.benchmarks {
            XCTAssertEqual(b.systems.map(\.system), [.fief, .sqlite], b.id)
            for s in b.systems { XCTAssertGreaterThan(s.value.median, 0, "\(b.id) \(s.system)") }
        }
        let small = r.benchmark("obj.small-txns")?.result(.fief)?.extra
        XCTAssertNotNil(small?["rawEngineOpsPerSecond"])
        // Both sides of the ratio say what a commit cost: pages, and time waiting for syncs (none
        // here: the smoke profile does not sync; CommitCountsTests counts a durable commit's).
        for key in ["pagesPerCommit", "rawEnginePagesPerCommit"] { XCTAssertGreaterThan(small?[key] ?? 0, 0, key) }
        for key in ["syncMillisPerCommit", "syncPercent", "rawEngineSyncMillisPerCommit"] {
            XCTAssertEqual(small?[key], 0, key)
        }
        let objectTargets = r.targets.filter { $0.benchmark.hasPrefix("obj.") }
        XCTAssertNotNil(r.benchmark("obj.encrypted.pk-get")?.result(.fief)?.extra?["plainOpsPerSecond"])
        XCTAssertEqual(objectTargets.count, 17)
        // The read workloads' counters: Fief's descents and both systems' allocations, per operation.
        for id in ["obj.count", "obj.query", "obj.pk-get", "obj.enumerate", "obj.sort-limit", "obj.links"] {
            let fief = r.benchmark(id)?.result(.fief)?.extra, sqlite = r.benchmark(id)?.result(.sqlite)?.extra
            XCTAssertNotNil(fief?["treeDescentsPerOp"], id)
            XCTAssertNotNil(fief?["heapAllocationsPerOp"], id)
            XCTAssertNotNil(sqlite?["heapAllocationsPerOp"], id)
            XCTAssertNil(sqlite?["treeDescentsPerOp"], "\(id): SQLite's descents are not Fief's to count")
        }
        // A query walks the name index: a descent at least, each. A get by primary key finds
        // its cluster among those the version's reads found before (`ClusterMemo`): after the
        // first get in each cluster, none.
        XCTAssertGreaterThanOrEqual(
            r.benchmark("obj.query")?.result(.fief)?.extra?["treeDescentsPerOp"] ?? 0, 1,
            "a query's walk of the index is counted")
        XCTAssertLessThan(
            r.benchmark("obj.pk-get")?.result(.fief)?.extra?["treeDescentsPerOp"] ?? 1, 0.5,
            "a get of a random person finds its cluster kept, not by a descent")
        XCTAssertTrue(MarkdownReport.bench(r).contains("## Counters"))
        XCTAssertTrue(
            objectTargets.allSatisfy { $0.ratio != nil }, "\(objectTargets.filter { $0.ratio == nil }.map(\.benchmark))"
        )
    }
}

/// obj.notify.cross-process through the real `fief` binary built next to these tests: one
/// sample per commit, and its target evaluated in milliseconds.
final class CrossProcessNotifyBenchTests: XCTestCase {
    func testCrossProcessNotifyMeasuresEveryCommitAndEvaluatesItsTarget() throws {
        let exe = try builtFiefExecutable()
        let dir = NSTemporaryDirectory() + "fief-xnotify-\(getpid())"
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var p = BenchParameters.smoke(seed: 13)
        p.suite = "objects"
        p.systems = [.fief]
        let r = try BenchRunner(
            parameters: p, workDirectory: dir, childExecutable: exe, only: ["obj.notify.cross-process"]
        ).run()
        let b = try XCTUnwrap(r.benchmark("obj.notify.cross-process"))
        XCTAssertEqual(b.systems.map(\.system), [.fief])
        let latency = try XCTUnwrap(b.result(.fief)?.latency)
        XCTAssertEqual(
            latency.count, UInt64(p.repetitions * 10), "one delivery per commit (smoke: 10 commits per repetition)")
        XCTAssertGreaterThan(latency.max, 0)
        let target = try XCTUnwrap(r.targets.first { $0.benchmark == "obj.notify.cross-process" })
        XCTAssertEqual(target.unit, "ms")
        XCTAssertEqual(target.requirement, "<= 5 ms")
        XCTAssertEqual(target.ratio ?? -1, latency.p99 / 1000, accuracy: 1e-9)
        XCTAssertNotNil(target.met)
    }
}

/// obj.insert's peak memory: each system's load once more in a `fief bench object-child` of
/// its own, through the real `fief` binary built next to these tests.
final class ObjectLoadMemoryBenchTests: XCTestCase {
    func testEachSystemsLoadReportsItsOwnPeakMemoryOnlyFromAChild() throws {
        let exe = try builtFiefExecutable()
        let dir = NSTemporaryDirectory() + "fief-objmem-\(getpid())"
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var p = BenchParameters.smoke(seed: 13)
        p.suite = "objects"
        p.systems = [.fief, .sqlite]
        p.objectPersons = 5_000
        p.objectDogs = 2_500
        p.memoryInChild = true
        let r = try BenchRunner(parameters: p, workDirectory: dir, childExecutable: exe, only: ["obj.insert"]).run()
        let b = try XCTUnwrap(r.benchmark("obj.insert"))
        for s in [SystemName.fief, .sqlite] {
            let memory = try XCTUnwrap(b.result(s)?.peakMemory, "\(s)")
            XCTAssertEqual(memory.samples.count, 1, "one child per system, whatever the repetitions")
            XCTAssertGreaterThan(memory.median, 0, "\(s): a load of 7,500 objects raises the child's peak")
        }
        XCTAssertFalse(r.notes.contains { $0.contains("no peak memory") }, "\(r.notes)")
        // In this process the systems share one high-water mark: nothing is reported, and the
        // notes say why.
        p.memoryInChild = false
        let shared = try BenchRunner(parameters: p, workDirectory: dir, childExecutable: exe, only: ["obj.insert"])
            .run()
        XCTAssertNil(shared.benchmark("obj.insert")?.result(.fief)?.peakMemory)
        XCTAssertTrue(
            shared.notes.contains { $0.contains("obj.insert: no load in a process of its own") }, "\(shared.notes)")
    }

    /// The engine suite's bulk insert through `fief bench child`, one process per system and
    /// repetition, each reporting the peak of its own window.
    func testEachBulkInsertChildReportsItsOwnPeakMemory() throws {
        let exe = try builtFiefExecutable()
        let dir = NSTemporaryDirectory() + "fief-bulkmem-\(getpid())"
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var p = BenchParameters.smoke(seed: 13)
        p.records = 20_000
        p.valueSize = 100
        p.memoryInChild = true
        let r = try BenchRunner(parameters: p, workDirectory: dir, childExecutable: exe, only: ["bulk-insert"]).run()
        let b = try XCTUnwrap(r.benchmark("bulk-insert"))
        XCTAssertEqual(b.systems.map(\.system), SystemName.allCases)
        for s in b.systems {
            let memory = try XCTUnwrap(s.peakMemory, "\(s.system)")
            XCTAssertEqual(memory.samples.count, p.repetitions, "one child per repetition")
            XCTAssertGreaterThan(memory.median, 0, "\(s.system): 2 MB of records raise the child's peak")
            XCTAssertGreaterThan(s.extra?["peakRSS"] ?? 0, memory.median, "the peak itself, above the baseline")
        }
    }
}
