import XCTest
import Engine
@testable import Torture
import TortureSchema

/// The isolation checker on hand-made histories: each anomaly it claims to find, it finds.
final class HistoryCheckerTests: XCTestCase {
    func t(_ p: Int, _ i: Int, _ ops: [HistoryOp], committed: Bool = true) -> HistoryTxn {
        HistoryTxn(process: p, thread: 0, index: i, committed: committed, ops: ops)
    }

    func kinds(_ h: [HistoryTxn]) -> Set<String> { Set(HistoryChecker(h).check().map(\.kind.rawValue)) }

    func testSerialHistoryIsClean() {
        let h = [
            t(0, 0, [.read(key: 1, list: []), .append(key: 1, element: 10)]),
            t(1, 0, [.read(key: 1, list: [10]), .append(key: 1, element: 11)]),
            t(2, 0, [.read(key: 1, list: [10, 11])])
        ]
        XCTAssertEqual(kinds(h), [])
    }

    func testAbortedRead() {
        let h = [
            t(0, 0, [.append(key: 1, element: 10)], committed: false),
            t(1, 0, [.read(key: 1, list: [10])])
        ]
        XCTAssertTrue(kinds(h).contains("G1a"))
    }

    func testWriteCycleG0() {
        // T1 appends 1 then T2 appends 2 on key 1; on key 2 the order is reversed.
        let h = [
            t(0, 0, [.append(key: 1, element: 1), .append(key: 2, element: 1)]),
            t(1, 0, [.append(key: 1, element: 2), .append(key: 2, element: 2)]),
            t(2, 0, [.read(key: 1, list: [1, 2]), .read(key: 2, list: [2, 1])])
        ]
        XCTAssertTrue(kinds(h).contains("G0"))
    }

    func testCircularInformationFlowG1c() {
        // T1 reads T2's append and T2 reads T1's append.
        let h = [
            t(0, 0, [.append(key: 1, element: 1), .read(key: 2, list: [2])]),
            t(1, 0, [.append(key: 2, element: 2), .read(key: 1, list: [1])])
        ]
        XCTAssertTrue(kinds(h).contains("G1c"))
    }

    func testReadSkewGSingle() {
        // T3 sees T2's write to key 2 but not T1's earlier write to key 1, while T2 read T1.
        let h = [
            t(0, 0, [.append(key: 1, element: 1)]),
            t(1, 0, [.read(key: 1, list: [1]), .append(key: 2, element: 2)]),
            t(2, 0, [.read(key: 1, list: []), .read(key: 2, list: [2])])
        ]
        XCTAssertTrue(kinds(h).contains("G-single"), "\(HistoryChecker(h).check())")
    }

    func testLostUpdate() {
        let h = [
            t(0, 0, [.read(key: 1, list: []), .append(key: 1, element: 1)]),
            t(1, 0, [.read(key: 1, list: []), .append(key: 1, element: 2)]),
            t(2, 0, [.read(key: 1, list: [1, 2])])
        ]
        XCTAssertTrue(kinds(h).contains("lost-update"))
    }

    func testIncompatibleOrderAndGarbage() {
        let h = [
            t(0, 0, [.append(key: 1, element: 1)]),
            t(1, 0, [.append(key: 1, element: 2)]),
            t(2, 0, [.read(key: 1, list: [1, 2])]),
            t(3, 0, [.read(key: 1, list: [2, 1])]),
            t(4, 0, [.read(key: 3, list: [99])])
        ]
        let k = kinds(h)
        XCTAssertTrue(k.contains("incompatible-order"))
        XCTAssertTrue(k.contains("garbage-read"))
    }

    func testElleExport() {
        let edn = HistoryFile.elle([t(0, 0, [.append(key: 1, element: 5), .read(key: 1, list: [5])])])
        XCTAssertTrue(edn.contains("{:type :invoke, :f :txn, :value [[:append 1 5] [:r 1 nil]]"))
        XCTAssertTrue(edn.contains("{:type :ok, :f :txn, :value [[:append 1 5] [:r 1 [5]]]"))
    }
}

/// The runner end to end: results files, shards, and a failing run keeping its artifacts.
final class TortureRunTests: XCTestCase {
    func testQuickRunWritesResultsAndShardsAreDisjoint() throws {
        let dir = TempDir()
        var o = TortureOptions(seed: 77)
        o.scenarios = ["crash-points"]
        o.cycles = 4
        o.out = dir.file("all")
        let progress = Progress()
        let all = try TortureRun(options: o, progress: progress).run()
        XCTAssertTrue(all.passed)
        XCTAssertEqual(all.scenarios[0].cycles, 4)
        for f in ["results.json", "junit.xml", "summary.md"] {
            XCTAssertTrue(FileManager.default.fileExists(atPath: dir.file("all/\(f)")), f)
        }
        let junit = try String(contentsOfFile: dir.file("all/junit.xml"), encoding: .utf8)
        XCTAssertTrue(junit.contains("<testcase classname=\"torture.crash-points\" name=\"after-select-flip\">"))
        var total = 0
        var shards: [TortureResults] = []
        for k in 1...2 {
            var s = o
            s.shard = (k, 2)
            s.out = dir.file("shard\(k)")
            let r = try TortureRun(options: s, progress: progress).run()
            total += r.scenarios[0].cycles
            shards.append(r)
        }
        XCTAssertEqual(total, 4)
        let merged = try TortureResults.merge(shards)
        XCTAssertEqual(merged.scenarios[0].cycles, 4)
        XCTAssertEqual(merged.shard, "1/2,2/2")
        XCTAssertTrue(merged.passed)
        XCTAssertThrowsError(try TortureResults.merge([shards[0], shards[0]]), "a shard merged twice")
        XCTAssertTrue(try TortureResults.merge([shards[0]]).scenarios[0].notes.contains { $0.contains("missing: 2") })
    }

    func testBrokenEngineRunFailsWithArtifactsAndReproduceCommand() throws {
        guard BrokenVariant.available else { return XCTFail("broken variants exist only in debug builds") }
        let dir = TempDir()
        var o = TortureOptions(seed: 78)
        o.scenarios = ["crash-points"]
        o.cycles = 3
        o.out = dir.file("out")
        o.broken = .overwriteInPlace
        let r = try TortureRun(options: o).run()
        XCTAssertFalse(r.passed)
        let f = try XCTUnwrap(r.scenarios[0].failures.first)
        XCTAssertTrue(f.reproduce.contains("fief torture reproduce"))
        let artifacts = try XCTUnwrap(f.artifacts)
        for name in ["cycle.json", "db.fief", "oracle.log"] {
            XCTAssertTrue(FileManager.default.fileExists(atPath: "\(artifacts)/\(name)"), name)
        }
    }
}

/// The isolation and growth scenarios, once each, on the correct engine; and isolation on an
/// engine that reads uncommitted or reused pages must fail.
final class ScenarioTests: XCTestCase {
    func runOne(_ name: String, broken: BrokenVariant? = nil, seed: UInt64 = 4, cycles: Int = 1) throws
        -> ScenarioResult
    {
        let dir = TempDir()
        var o = TortureOptions(seed: seed)
        o.scenarios = [name]
        o.cycles = cycles
        o.out = dir.file("out")
        o.broken = broken
        return try TortureRun(options: o).run().scenarios[0]
    }

    func testIsolationScenarioPasses() throws {
        let r = try runOne("isolation")
        XCTAssertTrue(r.passed, "\(r.failures)")
    }

    func testGrowthScenarioPasses() throws {
        let r = try runOne("growth")
        XCTAssertTrue(r.passed, "\(r.failures)")
    }

    func testIsolationCatchesOverwriteInPlace() throws {
        guard BrokenVariant.available else { return XCTFail("broken variants exist only in debug builds") }
        let r = try runOne("isolation", broken: .overwriteInPlace)
        XCTAssertFalse(r.passed, "isolation scenario missed in-place overwrites")
    }

    /// A top node naming the catalog embedded in its base's top node is refused at open.
    func testCrashPointsCatchCatalogInOldTop() throws {
        guard BrokenVariant.available else { return XCTFail("broken variants exist only in debug builds") }
        let r = try runOne("crash-points", broken: .catalogInOldTop, seed: 5)
        XCTAssertFalse(r.passed, "crash-points missed a catalog ref into the base's top node")
    }

    /// A free list that moves into the top node and forgets its chunk pages leaks them: the
    /// integrity walk after a readers cycle (pinned readers grow the list past the top node's
    /// room, releases shrink it back) must say so. Only the churn cycles (odd ones) grow the
    /// list, and how far depends on timing: eight cycles give four chances, so a loaded
    /// machine that keeps one short does not hide the leak.
    /// The chunk pages the free list leaves when it moves back into the top node must be
    /// freed. Deterministic, unlike a readers run (whose list outgrows the top node only as
    /// far as the race between its readers and writer lets it): a pin held here while a
    /// writer process commits makes the list spill into chunk pages; once the pin is gone,
    /// the next commits fold it back. `check` finds what the broken variant leaked, and
    /// nothing when the engine is correct.
    func testTheChunkPagesAListLeavesForTheTopNodeAreFreed() throws {
        guard BrokenVariant.available else { return XCTFail("broken variants exist only in debug builds") }
        for broken in [nil, BrokenVariant.inlineListLeak] {
            let dir = TempDir()
            let db = dir.file("db.fief")
            let env = broken.map { [BrokenVariant.environmentVariable: $0.rawValue] } ?? [:]
            func write(until commit: UInt64) throws {
                let c = try ChildProcess(
                    .writer(db: db, oracle: dir.file("oracle.log"), seed: 5, maxCommit: commit),
                    environment: env, output: dir.file("writer.out"), label: "writer")
                XCTAssertEqual(
                    c.wait(), .exited(0),
                    String(
                        decoding: FileManager.default.contents(atPath: dir.file("writer.out")) ?? Data(), as: UTF8.self)
                )
            }
            try write(until: 5)
            let keeper = try Database(path: db)
            let pin = try keeper.pin()
            try write(until: 250)
            pin.release()
            try write(until: 300)
            let problems = try keeper.check().problems
            if broken == nil {
                XCTAssertEqual(problems, [], "the correct engine")
            } else {
                XCTAssertTrue(
                    problems.contains { $0.contains("neither reachable nor free") },
                    "inline-list-leak went unnoticed: \(problems)")
                print("inline-list-leak caught by check: \(problems.first ?? "")")
            }
        }
    }
}
