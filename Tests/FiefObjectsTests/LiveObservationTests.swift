import XCTest
import Foundation
import Engine
@testable import FiefObjects

/// Observers that stay live without `refresh()` calls: `results.changes` (an async sequence
/// that refreshes its context when a commit arrives) and `autoRefreshingContext` (a context
/// bound to an actor that refreshes itself there). Commits come from another handle on the
/// same file and from a child process.
final class LiveObservationTests: XCTestCase {
    /// Polls `done` every 5 ms for at most `seconds`.
    private func eventually(_ seconds: Double = 10, _ done: () async -> Bool) async -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if await done() { return true }
            try? await Task.sleep(nanoseconds: 5_000_000)
        }
        return await done()
    }

    private func addPerson(_ store: ObjectStore, _ id: Int64, age: Int) throws {
        let w = store.context()
        try w.write { try w.create(Person.self, value: ["id": id, "name": "p\(id)", "age": age]) }
    }

    // MARK: results.changes

    func testChangesSequenceFollowsAnotherHandlesCommits() async throws {
        let dir = TempDir()
        let store = try openZoo(dir)
        let writer = try openZoo(dir)
        try addPerson(writer, 1, age: 10)
        let log = Locked<[String]>([])
        let consumer = Task { () throws -> Int in
            let ctx = store.context()
            for try await change in ctx.objects(Person.self).sorted(byKeyPath: "age").changes {
                switch change {
                case .initial(let r): log.withLock { $0.append("initial \(try! r.keys())") }
                case .update(let r, let d, let i, let m):
                    let c = change.changeSet!
                    log.withLock { $0.append("update \(d) \(i) \(m) \(c.modificationsNew) \(try! r.keys())") }
                case .error(let e): XCTFail("\(e)")
                }
                if log.withLock({ $0.count }) == 3 { break }
            }
            return ctx.observations.count
        }
        let initial = await eventually { log.withLock { $0.count } == 1 }
        XCTAssertTrue(initial, "the initial event")
        try addPerson(writer, 2, age: 5)
        let first = await eventually { log.withLock { $0.count } == 2 }
        XCTAssertTrue(first, "the first commit arrived without a refresh() call")
        let w = writer.context()
        try w.write {
            try w.object(ofType: Person.self, forPrimaryKey: Int64(1))!.name = "renamed";
            try w.create(Person.self, value: ["id": Int64(3), "age": 1])
        }
        let remaining = try await consumer.value
        XCTAssertEqual(
            log.withLock { $0 }, ["initial [1]", "update [] [0] [] [] [2, 1]", "update [] [0] [1] [2] [3, 2, 1]"])
        XCTAssertEqual(remaining, 0, "leaving the loop released the observation")
    }

    func testCancellingTheConsumingTaskReleasesTheObservation() async throws {
        let dir = TempDir()
        let store = try openZoo(dir)
        let started = Locked(false)
        let consumer = Task { () throws -> (Int, Int) in
            let ctx = store.context()
            var events = 0
            for try await _ in ctx.objects(Person.self).changes {
                events += 1
                started.withLock { $0 = true }
            }
            return (events, ctx.observations.count)
        }
        let running = await eventually { started.withLock { $0 } }
        XCTAssertTrue(running)
        consumer.cancel()
        let (events, remaining) = try await consumer.value
        XCTAssertEqual(events, 1, "only the initial event: nothing was committed")
        XCTAssertEqual(remaining, 0, "cancelling ended the loop and released the observation")
    }

    // MARK: autoRefreshingContext

    func testAnActorBoundContextDeliversAnotherHandlesCommitWithoutRefresh() async throws {
        let dir = TempDir()
        let store = try openZoo(dir)
        let watcher = PersonWatcher()
        try await watcher.start(store)
        // A plain context beside it: it must still wait for refresh().
        let plain = store.context()
        let plainSeen = Locked(0)
        let plainToken = plain.objects(Person.self).observe { if case .update = $0 { plainSeen.withLock { $0 += 1 } } }
        let writer = try openZoo(dir)
        try addPerson(writer, 1, age: 30)
        let one = await eventually { await watcher.updates.count == 1 }
        XCTAssertTrue(one, "delivered on the actor with no refresh() call")
        try addPerson(writer, 2, age: 20)
        let two = await eventually { await watcher.updates.last?.keys == [2, 1] }
        XCTAssertTrue(two)
        let updates = await watcher.updates
        XCTAssertEqual(updates.first?.keys, [1])
        XCTAssertEqual(updates.last?.set, CollectionChangeSet(deletions: [], insertions: [0], modifications: []))
        XCTAssertEqual(plainSeen.withLock { $0 }, 0, "a context not bound to an actor delivers only on refresh()")
        try plain.refresh()
        XCTAssertEqual(plainSeen.withLock { $0 }, 1, "both commits in one delivery")
        // Its own write: delivered once, after the commit, not again by the commit watcher.
        try await watcher.write(3, age: 10)
        let own = await eventually { await watcher.updates.count >= 3 }
        XCTAssertTrue(own)
        try await Task.sleep(nanoseconds: 300_000_000)  // longer than the watcher's poll
        let afterOwn = await watcher.updates
        XCTAssertEqual(afterOwn.count, 3, "\(afterOwn)")
        XCTAssertEqual(afterOwn.last?.keys, [3, 2, 1])
        _ = plainToken
        await watcher.stop()
    }

    func testAnActorBoundContextDeliversAChildProcessCommit() async throws {
        let dir = TempDir()
        let store = try openZoo(dir)
        let watcher = PersonWatcher()
        try await watcher.start(store)
        let p = Process()
        p.executableURL = URL(
            fileURLWithPath: try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
        p.arguments = ["FiefObjectsTests.LiveObservationTests/testChildWriterRole"]
        var env = ProcessInfo.processInfo.environment
        env["FIEF_LIVE_CHILD_STORE"] = dir.file("zoo.fief")
        env["SWIFT_BACKTRACE"] = "enable=no"
        p.environment = env
        p.standardOutput = FileHandle(forWritingAtPath: "/dev/null")
        p.standardError = FileHandle(forWritingAtPath: "/dev/null")
        try p.run()
        p.waitUntilExit()
        XCTAssertEqual(p.terminationStatus, 0, "the child wrote")
        let seen = await eventually { await watcher.updates.last?.keys == [41, 42] }
        let updates = await watcher.updates
        XCTAssertTrue(seen, "the child's commit reached the actor-bound observer: \(updates.map(\.keys))")
        await watcher.stop()
    }

    /// The child process's part in `testAnActorBoundContextDeliversAChildProcessCommit`.
    func testChildWriterRole() throws {
        guard let path = ProcessInfo.processInfo.environment["FIEF_LIVE_CHILD_STORE"] else { return }
        let store = try ObjectStore(Configuration(path: path, types: zooTypes))
        let ctx = store.context()
        try ctx.write {
            try ctx.create(Person.self, value: ["id": Int64(41), "age": 1])
            try ctx.create(Person.self, value: ["id": Int64(42), "age": 2])
        }
    }
}

/// An actor owning an auto-refreshing context and one sorted results observer.
actor PersonWatcher {
    struct Update: Sendable {
        let set: CollectionChangeSet
        let keys: [Int64]
    }

    private var ctx: ObjectContext?
    private var token: NotificationToken?
    private(set) var updates: [Update] = []

    func start(_ store: ObjectStore) throws {
        let ctx = try store.autoRefreshingContext()
        token = ctx.objects(Person.self).sorted(byKeyPath: "age").observe { change in
            // Where it runs is checked, not assumed: the closure is formed here, but the
            // refresh that calls it could run anywhere (off the actor this traps).
            self.preconditionIsolated("a results callback ran off the context's actor")
            if let set = change.changeSet, case .update(let r, _, _, _) = change {
                self.updates.append(Update(set: set, keys: try! r.keys()))
            }
        }
        self.ctx = ctx
    }

    func write(_ id: Int64, age: Int) throws {
        guard let ctx else { return }
        try ctx.write { try ctx.create(Person.self, value: ["id": id, "age": age]) }
    }

    func stop() {
        token?.invalidate()
        token = nil
        ctx = nil
    }
}
