import XCTest
import Engine
@testable import Torture

/// Readers in other processes: their snapshots hold while this process writes, and a reader
/// killed with SIGKILL does not pin its version forever.
final class ReaderProcessTests: XCTestCase {
    func waitForFile(_ path: String, seconds: Double = 20) -> String? {
        let end = Date().addingTimeInterval(seconds)
        while Date() < end {
            if let d = FileManager.default.contents(atPath: path), !d.isEmpty {
                return String(decoding: d, as: UTF8.self)
            }
            usleep(10_000)
        }
        return nil
    }

    func seedDatabase(_ path: String) throws -> Database {
        let db = try Database(path: path)
        try db.write { tx in
            let t = try tx.createTable("t", key: Int64.self, value: [UInt8].self)
            for k in 0..<500 { try t.put(Int64(k), [UInt8](repeating: 1, count: 64)) }
        }
        return db
    }

    func churn(_ db: Database, _ commits: Int) throws {
        for c in 0..<commits {
            try db.write { tx in
                let t = try tx.table("t", key: Int64.self, value: [UInt8].self)
                for k in 0..<50 { try t.put(Int64((c * 50 + k) % 500), [UInt8](repeating: UInt8(c % 250), count: 64)) }
            }
        }
    }

    func testReaderProcessesKeepTheirSnapshotsWhileWritersCommit() throws {
        let dir = TempDir()
        let db = try seedDatabase(dir.file("db.fief"))
        var readers: [(ChildProcess, String)] = []
        for i in 0..<3 {
            let ready = dir.file("ready\(i)")
            readers.append(
                (
                    try ChildProcess(
                        .holdSnapshot(db: dir.file("db.fief"), ready: ready, seconds: 3),
                        output: dir.file("reader\(i).out"), label: "reader"), ready
                ))
            XCTAssertNotNil(waitForFile(ready), "reader \(i) never became ready")
            try churn(db, 40)
        }
        for (i, (child, _)) in readers.enumerated() {
            let status = child.wait()
            // Read after the reader exited: its whole output.
            let output = FileManager.default.contents(atPath: dir.file("reader\(i).out")) ?? Data()
            XCTAssertEqual(status, .exited(0), "reader \(i): \(String(decoding: output, as: UTF8.self))")
        }
        XCTAssertTrue(try db.check().isSound)
    }

    /// The broken engine that reuses pages under a pinned reader must be caught by the same
    /// reader process.
    func testReusingPinnedPagesIsCaught() throws {
        guard BrokenVariant.available else { return XCTFail("broken variants exist only in debug builds") }
        let dir = TempDir()
        _ = try seedDatabase(dir.file("db.fief"))
        let ready = dir.file("ready")
        let reader = try ChildProcess(
            .holdSnapshot(db: dir.file("db.fief"), ready: ready, seconds: 4),
            output: dir.file("reader.out"), label: "reader")
        XCTAssertNotNil(waitForFile(ready))
        let writer = try ChildProcess(
            .writer(db: dir.file("db.fief"), oracle: dir.file("oracle.log"), seed: 3, maxCommit: 300),
            environment: [BrokenVariant.environmentVariable: BrokenVariant.reusePinned.rawValue],
            output: dir.file("writer.out"), label: "writer")
        _ = writer.wait()
        XCTAssertNotEqual(reader.wait(), .exited(0), "a reader's snapshot was overwritten, and nobody noticed")
    }

    func testPinOfAKilledReaderIsReclaimed() throws {
        let dir = TempDir()
        let db = try seedDatabase(dir.file("db.fief"))
        let ready = dir.file("ready")
        let reader = try ChildProcess(
            .holdSnapshot(db: dir.file("db.fief"), ready: ready, seconds: 60),
            output: dir.file("reader.out"), label: "reader")
        XCTAssertNotNil(waitForFile(ready))
        let pinnedVersion = try db.latestVersion()
        try churn(db, 20)
        XCTAssertEqual(try db.stats().oldestPinnedVersion, pinnedVersion)
        XCTAssertGreaterThan(try db.stats().bytesPinned, 0)
        reader.kill9()
        XCTAssertEqual(reader.wait(), .signaled(SIGKILL))
        try churn(db, 2)
        let after = try db.stats()
        XCTAssertNil(after.oldestPinnedVersion, "the dead reader's pin was not reclaimed")
        XCTAssertEqual(after.bytesPinned, 0)
        // And the space comes back: steady churn stops growing the file.
        try churn(db, 20)
        let size = try db.stats().fileSize
        try churn(db, 40)
        XCTAssertLessThanOrEqual(try db.stats().fileSize, size + 16 * 4096)
    }
}
