import XCTest
@testable import Engine

/// In-process commit observation: deliveries tile the version line, cancel stops them.
final class CommitWatcherTests: XCTestCase {
    final class Deliveries: @unchecked Sendable {
        private let lock = NSLock()
        private var ranges: [CommitRange] = []
        func add(_ r: CommitRange) { lock.lock(); ranges.append(r); lock.unlock() }
        var all: [CommitRange] { lock.lock(); defer { lock.unlock() }; return ranges }
        /// Waits until a delivery reaches `version` (at most `seconds`).
        func wait(until version: UInt64, seconds: Double = 10) -> Bool {
            let deadline = Date().addingTimeInterval(seconds)
            while Date() < deadline {
                if (all.last?.to ?? 0) >= version { return true }
                usleep(2_000)
            }
            return false
        }
    }

    func testDeliveriesTileEveryCommitAfterRegistration() throws {
        let dir = TempDir()
        let db = try Database(path: dir.file("db.fief"), options: DatabaseOptions(durability: .none))
        try db.write { _ = try $0.createTable("t", key: [UInt8].self, value: [UInt8].self) }
        let start = try db.latestVersion()
        let seen = Deliveries()
        let observation = try db.observeCommits { seen.add($0) }
        for i in 1...40 {
            try db.write { try $0.put(table: "t", key: [UInt8(i)], value: [UInt8(i)]) }
            if i % 10 == 0 { usleep(20_000) }
        }
        let end = try db.latestVersion()
        XCTAssertTrue(seen.wait(until: end), "deliveries so far: \(seen.all)")
        let ranges = seen.all
        XCTAssertEqual(ranges.first?.from, start)
        for (a, b) in zip(ranges, ranges.dropFirst()) { XCTAssertEqual(b.from, a.to, "ranges must tile: \(ranges)") }
        XCTAssertTrue(ranges.allSatisfy { $0.to > $0.from })
        XCTAssertEqual(ranges.last?.to, end)
        XCTAssertGreaterThan(
            try XCTUnwrap(db.commitWatcherWakeCounts).doorbell, 0, "commits in this process ring the doorbell too")
        observation.cancel()
        let before = seen.all.count
        try db.write { try $0.put(table: "t", key: [99], value: [99]) }
        usleep(UInt32(CommitWatcher.pollMilliseconds * 2 * 1000))
        XCTAssertEqual(seen.all.count, before, "nothing after cancel")
    }

    func testCloseEndsObservation() throws {
        let dir = TempDir()
        let db = try Database(path: dir.file("db.fief"), options: DatabaseOptions(durability: .none))
        try db.write { _ = try $0.createTable("t", key: [UInt8].self, value: [UInt8].self) }
        let seen = Deliveries()
        let observation = try db.observeCommits { seen.add($0) }
        let other = try Database(path: dir.file("db.fief"), options: DatabaseOptions(durability: .none))
        db.close()
        try other.write { try $0.put(table: "t", key: [1], value: [1]) }
        usleep(UInt32(CommitWatcher.pollMilliseconds * 2 * 1000))
        XCTAssertEqual(seen.all, [], "a closed handle delivers nothing")
        XCTAssertThrowsError(try db.observeCommits { _ in }) {
            XCTAssertEqual($0 as? EngineError, .closed(path: dir.file("db.fief")))
        }
        _ = observation
    }

    func testTwoObserversEachGetTheirOwnRanges() throws {
        let dir = TempDir()
        let db = try Database(path: dir.file("db.fief"), options: DatabaseOptions(durability: .none))
        try db.write { _ = try $0.createTable("t", key: [UInt8].self, value: [UInt8].self) }
        let a = Deliveries(), b = Deliveries()
        let oa = try db.observeCommits { a.add($0) }
        try db.write { try $0.put(table: "t", key: [1], value: [1]) }
        XCTAssertTrue(a.wait(until: try db.latestVersion()))
        let ob = try db.observeCommits { b.add($0) }
        let mid = try db.latestVersion()
        try db.write { try $0.put(table: "t", key: [2], value: [2]) }
        let end = try db.latestVersion()
        XCTAssertTrue(a.wait(until: end) && b.wait(until: end))
        XCTAssertEqual(b.all.first?.from, mid, "a late observer starts at its registration")
        XCTAssertEqual(a.all.last?.to, end)
        _ = (oa, ob)
    }
}
