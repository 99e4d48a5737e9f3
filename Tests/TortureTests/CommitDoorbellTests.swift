import XCTest
@testable import Engine
import Torture

/// Commits from other processes wake a handle's watcher through the `.lock` file's doorbell;
/// commits that never ring (a broken engine, a writer killed before ringing) are still seen
/// by the poll, and the doorbell count shows which path delivered them.
final class CommitDoorbellTests: XCTestCase {
    final class Last: @unchecked Sendable {
        private let lock = NSLock()
        private var to: UInt64 = 0
        private(set) var ranges: [CommitRange] = []
        func add(_ r: CommitRange) { lock.lock(); to = r.to; ranges.append(r); lock.unlock() }
        func wait(until version: UInt64, seconds: Double = 10) -> Bool {
            let deadline = Date().addingTimeInterval(seconds)
            while Date() < deadline {
                lock.lock(); let v = to; lock.unlock()
                if v >= version { return true }
                usleep(2_000)
            }
            return false
        }
    }

    func put(_ db: String, _ key: String, environment: [String: String] = [:]) throws -> ChildProcess.Ending {
        let child = try ChildProcess(
            arguments: ["db", "put", db, "t", key, "v-\(key)"], environment: environment, label: "put \(key)")
        return child.wait()
    }

    /// A file with one commit, and a handle observing it.
    func observed(_ path: String) throws -> (Database, Last, CommitObservation) {
        XCTAssertEqual(try put(path, "k0"), .exited(0))
        let db = try Database(path: path)
        let last = Last()
        return (db, last, try db.observeCommits { last.add($0) })
    }

    func testCommitsOfOtherProcessesRingTheDoorbell() throws {
        let dir = TempDir()
        let path = dir.file("db.fief")
        let (db, last, observation) = try observed(path)
        for i in 1...4 {
            XCTAssertEqual(try put(path, "k\(i)"), .exited(0))
            XCTAssertTrue(last.wait(until: try db.latestVersion()), "commit \(i) was not delivered")
        }
        XCTAssertGreaterThanOrEqual(
            try XCTUnwrap(db.commitWatcherWakeCounts).doorbell, 4, "each commit of another process rings")
        for (a, b) in zip(last.ranges, last.ranges.dropFirst()) { XCTAssertEqual(b.from, a.to) }
        observation.cancel()
    }

    func testAWriterKilledBeforeRingingIsSeenByThePoll() throws {
        let dir = TempDir()
        let path = dir.file("db.fief")
        let (db, last, observation) = try observed(path)
        let ending = try put(
            path, "k1", environment: [CrashPoint.environmentVariable: CrashPoint.afterPublishBeforeDoorbell.rawValue])
        XCTAssertEqual(ending, .signaled(SIGKILL))
        XCTAssertTrue(
            last.wait(until: try db.latestVersion(), seconds: 5),
            "the durable commit of a writer that died before ringing must still be delivered")
        XCTAssertEqual(try XCTUnwrap(db.commitWatcherWakeCounts).doorbell, 0, "nobody rang")
        XCTAssertGreaterThan(try XCTUnwrap(db.commitWatcherWakeCounts).timeout, 0)
        observation.cancel()
    }

    /// The doorbell count is a checker: the broken engine that never rings must show zero.
    func testAnEngineThatNeverRingsIsCaught() throws {
        try requireBrokenVariants()
        let dir = TempDir()
        let path = dir.file("db.fief")
        let (db, last, observation) = try observed(path)
        for i in 1...3 {
            XCTAssertEqual(
                try put(
                    path, "k\(i)", environment: [BrokenVariant.environmentVariable: BrokenVariant.noDoorbell.rawValue]),
                .exited(0))
        }
        XCTAssertTrue(last.wait(until: try db.latestVersion(), seconds: 5), "the poll must still deliver")
        XCTAssertEqual(try XCTUnwrap(db.commitWatcherWakeCounts).doorbell, 0)
        observation.cancel()
    }
}
