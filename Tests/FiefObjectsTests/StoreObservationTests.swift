import XCTest
import Foundation
import Engine
@testable import FiefObjects

/// Commits made through another handle (the `.lock` doorbell is shared by every process on
/// the file, so another handle exercises the same path) wake `store.commits()`, and a context
/// refreshed from it delivers its results notifications.
final class StoreObservationTests: XCTestCase {
    func testAnotherHandlesCommitsReachAContextThroughTheStream() async throws {
        let dir = TempDir()
        let store = try openZoo(dir)
        let writer = try openZoo(dir)  // a second handle on the same file, as another process would open
        let ctx = store.context()
        let seen = Locked<[[Int64]]>([])
        let token = ctx.objects(Person.self).sorted(byKeyPath: "age").observe { change in
            if case .update(let r, _, _, _) = change { seen.withLock { $0.append(try! r.keys()) } }
        }
        let stream = try store.commits()
        let w = writer.context()
        try w.write { try w.create(Person.self, value: ["id": Int64(7), "name": "p7", "age": 70]) }
        let target = try writer.database.latestVersion()
        var reached: UInt64 = 0
        for await version in stream {
            reached = version
            try ctx.refresh()
            if version >= target { break }
        }
        XCTAssertEqual(reached, target)
        XCTAssertEqual(seen.withLock { $0 }.last, [7], "the refresh delivered the other handle's insert")
        token.invalidate()
    }

    func testObserveTilesVersionsAndStopsOnCancel() throws {
        let dir = TempDir()
        let store = try openZoo(dir)
        let writer = try openZoo(dir)
        let versions = Locked<[UInt64]>([])
        let observation = try store.observe { v in versions.withLock { $0.append(v) } }
        let w = writer.context()
        for i in 1...5 { try w.write { try w.create(Person.self, value: ["id": Int64(i), "name": "p\(i)", "age": i]) } }
        let target = try writer.database.latestVersion()
        let deadline = Date().addingTimeInterval(10)
        while (versions.withLock { $0.last } ?? 0) < target && Date() < deadline { usleep(2_000) }
        let got = versions.withLock { $0 }
        XCTAssertEqual(got.last, target)
        XCTAssertEqual(got, got.sorted(), "versions only grow")
        XCTAssertEqual(Set(got).count, got.count, "none repeated")
        observation.cancel()
    }
}
