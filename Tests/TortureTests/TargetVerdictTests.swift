import XCTest
import FaultFS
import CSQLite
@testable import Torture
import TortureSchema

/// The generic scenarios on real stores: real SQLite and LMDB libraries, Python adapters,
/// FaultFS mounts, SIGKILL. Safe configurations must come out clean; unsafe ones must be
/// caught, and caught for the right reason (durability apart from atomicity and integrity).
/// These need /dev/fuse: without it they fail, loudly, never skip.
final class TargetVerdictTests: XCTestCase {
    static let sqliteAdapter = "exec:python3 \(TargetVerdictTests.repository)/examples/adapters/sqlite_adapter.py"
    static let unsafeAdapter = "exec:python3 \(TargetVerdictTests.repository)/examples/adapters/unsafe_adapter.py"
    static var repository: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().path
    }

    /// Fails (never skips) where FaultFS cannot mount.
    func requireFUSE() throws {
        if let why = FaultFSMount.unavailableReason() {
            FileHandle.standardError.write(
                Data("\n*** TARGET VERDICT TESTS NEED FUSE AND CANNOT RUN HERE: \(why) ***\n".utf8))
            throw TortureError.invalid("the target verdict tests need FUSE and cannot run here: \(why)")
        }
    }

    /// Runs `scenarios` (name, cycles) on `target`; returns the results by scenario name.
    func run(_ target: String, _ scenarios: [(String, Int)], seed: UInt64 = 17, in folder: TempDir? = nil) throws
        -> [String: ScenarioResult]
    {
        try requireFUSE()
        let dir = folder ?? TempDir()
        var out: [String: ScenarioResult] = [:]
        for (scenario, cycles) in scenarios {
            var o = TortureOptions(seed: seed)
            o.target = try TargetSpec(parsing: target)
            o.scenarios = [scenario]
            o.cycles = cycles
            o.out = dir.file(scenario)
            let r = try TortureRun(options: o).run().scenarios[0]
            XCTAssertEqual(r.cycles, cycles, "\(target) \(scenario)")
            out[scenario] = r
        }
        return out
    }

    func assertClean(
        _ target: String, _ results: [String: ScenarioResult], file: StaticString = #filePath, line: UInt = #line
    ) {
        for (name, r) in results.sorted(by: { $0.key < $1.key }) {
            XCTAssertTrue(
                r.passed, "\(target) \(name): \(r.verdict): \(r.failures.prefix(3).map(\.violations))", file: file,
                line: line)
        }
    }

    // MARK: clean

    func testSQLiteWALFullIsClean() throws {
        let t = "sqlite:journal=wal,synchronous=full"
        assertClean(t, try run(t, [("crash-points", 2), ("power-cut", 5), ("io-errors", 3), ("isolation", 1)]))
    }

    func testLMDBDefaultIsClean() throws {
        let t = "lmdb"
        assertClean(t, try run(t, [("crash-points", 2), ("power-cut", 5), ("io-errors", 3), ("isolation", 1)]))
    }

    /// Rollback journal: `synchronous=extra` syncs the directory after deleting the journal,
    /// the commit point, and is clean.
    func testSQLiteDeleteExtraIsClean() throws {
        let t = "sqlite:journal=delete,synchronous=extra"
        assertClean(t, try run(t, [("crash-points", 1), ("power-cut", 5), ("isolation", 1)]))
    }

    func testFiefThroughTheProtocolIsClean() throws {
        let t = "fief:generic"
        assertClean(t, try run(t, [("crash-points", 1), ("power-cut", 5)]))
    }

    /// An adapter that dies before answering `open` is started once more (and says so); one
    /// that dies twice is an error naming both deaths.
    func testAnAdapterThatDiesBeforeOpenIsStartedOnceMore() throws {
        let dir = TempDir()
        let marker = dir.file("started")
        let adapter = "\(TargetVerdictTests.repository)/examples/adapters/sqlite_adapter.py"
        let flaky = "sh -c 'if [ -e \(marker) ]; then exec python3 \(adapter); else touch \(marker); exit 3; fi'"
        let target = try ExecTarget(directory: dir.path, command: flaky)
        try target.write { try $0.put("k", "v") }
        XCTAssertEqual(try target.read { try $0.get("k") }, "v")
        target.close()

        XCTAssertThrowsError(try ExecTarget(directory: dir.path, command: "sh -c 'exit 4'")) { e in
            let text = "\(e)"
            XCTAssertTrue(text.contains("died twice") && text.contains("exited with status 4"), text)
        }
    }

    func testPythonSQLiteAdapterIsClean() throws {
        let t = TargetVerdictTests.sqliteAdapter
        assertClean(t, try run(t, [("crash-points", 1), ("power-cut", 3)]))
    }

    // MARK: caught

    /// Power cuts in drop-all mode (cycle 0) undo everything unsynced: a store that does not
    /// sync at commit loses acknowledged commits.
    func testSQLiteSynchronousOffLosesAcknowledgedCommits() throws {
        let dir = TempDir()
        let r = try run("sqlite:synchronous=off", [("power-cut", 1)], in: dir)["power-cut"]!
        XCTAssertGreaterThan(r.durabilityViolations, 0, "synchronous=off survived a drop-all power cut: \(r.verdict)")
        print("sqlite synchronous=off caught: \(r.failures.first?.violations.first?.text ?? "")")
        // The evidence names the target, so `fief torture reproduce` reruns the same one.
        let failure = try XCTUnwrap(r.failures.first)
        XCTAssertTrue(failure.reproduce.contains("--target sqlite:journal=wal,synchronous=off"), failure.reproduce)
        let artifacts = try XCTUnwrap(failure.artifacts)
        let record = try JSONDecoder().decode(
            ReproductionRecord.self, from: Data(contentsOf: URL(fileURLWithPath: artifacts + "/cycle.json")))
        XCTAssertEqual(record.target, "sqlite:journal=wal,synchronous=off")
        XCTAssertTrue(
            FileManager.default.fileExists(atPath: artifacts + "/store-after-event-0"),
            "the store as the cut left it is kept")
    }

    func testLMDBNoSyncLosesAcknowledgedCommits() throws {
        let r = try run("lmdb:nosync", [("power-cut", 1)])["power-cut"]!
        XCTAssertGreaterThan(r.durabilityViolations, 0, "MDB_NOSYNC survived a drop-all power cut: \(r.verdict)")
        print("lmdb nosync caught: \(r.failures.first?.violations.first?.text ?? "")")
    }

    /// SQLite documents WAL with synchronous=NORMAL as durable only up to the last checkpoint
    /// but never corrupt; rollback journal with synchronous=FULL loses the last commit when the
    /// journal's deletion does not reach the disk. Both: durability only.
    func testWALNormalAndDeleteFullLoseCommitsButNeverCorrupt() throws {
        for t in ["sqlite:journal=wal,synchronous=normal", "sqlite:journal=delete,synchronous=full"] {
            let r = try run(t, [("power-cut", 5)])["power-cut"]!
            XCTAssertGreaterThan(r.durabilityViolations, 0, "\(t) lost nothing in 5 power-cut cycles: \(r.verdict)")
            let notDurability = r.failures.flatMap(\.violations).filter {
                $0.kind.verdictClass != .durability
            }
            XCTAssertEqual(r.atomicityIntegrityViolations, 0, "\(t): \(notDurability.prefix(3))")
            print("\(t): \(r.verdict), \(r.durabilityViolations) durability violations")
        }
    }

    /// The list-append checker on a store that claims transactions it does not have: each
    /// process works on its own copy of the JSON file and overwrites the others'.
    func testIsolationCatchesAnAdapterThatClaimsTransactions() throws {
        let r = try run(TargetVerdictTests.unsafeAdapter + " --claim-transactions", [("isolation", 1)])["isolation"]!
        XCTAssertGreaterThan(r.isolationViolations, 0, "\(r.verdict): \(r.failures.first?.violations.prefix(2) ?? [])")
        XCTAssertEqual(r.verdict, "isolation anomalies")
        print("claimed transactions caught: \(r.failures.first?.violations.first?.text ?? "")")
    }

    /// Found by the `ci` profile: SQLite in WAL mode with synchronous=NORMAL meets a failing
    /// WAL fsync in a checkpoint, reports it to nobody, and FaultFS forgets the unsynced frames
    /// (as Linux after a writeback error): the database reads as malformed. Deterministic.
    func testSQLiteWALNormalCorruptsAfterAFailedCheckpointFsync() throws {
        try requireFUSE()
        let dir = TempDir()
        var o = TortureOptions(seed: 2026)
        o.target = try TargetSpec(parsing: "sqlite:journal=wal,synchronous=normal")
        o.profile = .ci
        o.scenarios = ["io-errors"]
        o.onlyCycle = 3
        o.out = dir.file("out")
        let r = try TortureRun(options: o).run().scenarios[0]
        XCTAssertGreaterThan(
            r.atomicityIntegrityViolations, 0,
            "SQLite \(String(cString: sqlite3_libversion())): \(r.verdict), notes \(r.notes)")
        XCTAssertTrue(r.notes.contains { $0.contains("fired") && $0.contains("saw no error") }, "\(r.notes)")
    }

    func testUnsafeAdapterIsCaught() throws {
        let results = try run(TargetVerdictTests.unsafeAdapter, [("crash-points", 2), ("power-cut", 2)])
        let power = results["power-cut"]!
        XCTAssertGreaterThan(
            power.durabilityViolations + power.atomicityIntegrityViolations, 0, "the unsafe adapter survived power cuts"
        )
        for (name, r) in results {
            print("unsafe adapter, \(name): \(r.verdict): \(r.failures.first?.violations.first?.text ?? "")")
        }
    }
}
