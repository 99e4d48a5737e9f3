import XCTest
@testable import Torture
import TortureSchema

/// `crash-states` on real stores: every state the operations since the last durable point
/// allow, each opened by the target's own verifier. The verdicts the issue asks for: SQLite's
/// rollback journal at synchronous=full (its unlink never directory-synced) and WAL at
/// synchronous=normal lose acknowledged commits, WAL at full and the journal at extra are
/// clean; LMDB's default is clean and nosync is caught.
extension TargetVerdictTests {
    func crashStates(_ target: String, cycles: Int = 4, in folder: TempDir? = nil) throws -> ScenarioResult {
        try run(target, [("crash-states", cycles)], seed: 7, in: folder)["crash-states"]!
    }

    func testCrashStatesOfSQLiteCatchTheUnsyncedJournalUnlinkAndWALNormal() throws {
        let dir = TempDir()
        let delete = try crashStates("sqlite:journal=delete,synchronous=full", in: dir)
        let texts = delete.failures.flatMap(\.violations).map(\.text)
        XCTAssertGreaterThan(delete.durabilityViolations, 0, "delete,full: \(delete.verdict)")
        XCTAssertEqual(delete.atomicityIntegrityViolations, 0, "\(texts.prefix(2))")
        XCTAssertTrue(
            texts.contains { $0.contains("lost: unlink of /db.sqlite-journal") },
            "the failing state names the lost unlink: \(texts.prefix(1))")
        print("sqlite delete,full caught: \(texts.first ?? "")")
        // The first failing state is kept as it was built, hot journal and all.
        let artifacts = try XCTUnwrap(delete.failures.first?.artifacts)
        XCTAssertTrue(FileManager.default.fileExists(atPath: artifacts + "/first-failing-state/db.sqlite-journal"))
        let normal = try crashStates("sqlite:journal=wal,synchronous=normal")
        XCTAssertGreaterThan(normal.durabilityViolations, 0, "wal,normal: \(normal.verdict)")
        XCTAssertEqual(normal.atomicityIntegrityViolations, 0)
        print("sqlite wal,normal caught: \(normal.failures.first?.violations.first?.text.prefix(400) ?? "")")
    }

    func testCrashStatesOfSQLiteWALFullAndDeleteExtraAreClean() throws {
        for t in ["sqlite:journal=wal,synchronous=full", "sqlite:journal=delete,synchronous=extra"] {
            let r = try crashStates(t)
            assertClean(t, ["crash-states": r])
            XCTAssertGreaterThan(r.faultsInjected, 4 * 2, "\(t): states were verified")
            XCTAssertTrue(r.notes.contains { $0.contains("unsynced operations") }, "\(r.notes)")
        }
    }

    func testCrashStatesOfLMDBPassTheDefaultAndCatchNoSync() throws {
        let safe = try crashStates("lmdb")
        assertClean("lmdb", ["crash-states": safe])
        XCTAssertEqual(safe.crashStates.operationLevelExhaustiveShare, 1, "\(safe.notes)")
        let nosync = try crashStates("lmdb:nosync")
        XCTAssertGreaterThan(nosync.durabilityViolations, 0, "nosync: \(nosync.verdict)")
        print("lmdb nosync caught: \(nosync.failures.first?.violations.first?.text.prefix(400) ?? "")")
    }

    func testCrashStatesOfAnExecAdapterThatNeverSyncsAreCaught() throws {
        let r = try crashStates(TargetVerdictTests.unsafeAdapter, cycles: 1)
        XCTAssertFalse(r.passed, "the unsafe adapter survived every crash state")
    }
}
