import XCTest
import Foundation
import Engine
@testable import FiefObjects

/// In-memory stores: one tmpfs file per identifier, shared by handles, threads and processes,
/// removed by the last close anywhere, and started afresh over what dead processes left.
final class InMemoryTests: XCTestCase {
    private func uniqueID(_ name: String) -> String { "test-\(name)-\(getpid())-\(UInt32.random(in: 0...UInt32.max))" }

    private func exists(_ path: String) -> Bool { access(path, F_OK) == 0 }

    func testTwoHandlesShareOneStoreAndTheLastCloseRemovesIt() throws {
        let id = uniqueID("two")
        var a: ObjectStore? = try ObjectStore(Configuration(inMemoryIdentifier: id, types: zooTypes))
        let path = a!.configuration.path
        XCTAssertEqual(path, "\(try InMemoryFiles.userDirectory())/\(id).fief")
        if access("/dev/shm", W_OK) == 0 { XCTAssertTrue(path.hasPrefix("/dev/shm/fief-\(getuid())/"), path) }
        XCTAssertEqual(a!.database.options.durability, .none)
        var b: ObjectStore? = try ObjectStore(Configuration(inMemoryIdentifier: id, types: zooTypes))
        do {
            let ca = a!.context(), cb = b!.context()
            try ca.write { try ca.create(Person.self, value: ["id": 1, "name": "Ann"]) }
            XCTAssertEqual(cb.objects(Person.self).first?.name, "Ann")
            // Another thread, its own context on the second handle.
            let seen = Locked<String?>(nil)
            // The thread gets the store through a box it empties, so that when this test drops
            // the store nothing on a finishing thread still holds it.
            let lent = Locked<ObjectStore?>(b)
            let done = DispatchSemaphore(value: 0)
            Thread {
                let name = lent.withLock { $0 }?.context().objects(Person.self).first?.name
                lent.withLock { $0 = nil }
                seen.withLock { $0 = name }
                done.signal()
            }.start()
            done.wait()
            XCTAssertEqual(seen.withLock { $0 }, "Ann")
            // The configuration a store hands out opens the same store.
            let again = try ObjectStore(a!.configuration)
            XCTAssertEqual(again.context().objects(Person.self).count, 1)
        }
        a = nil
        XCTAssertTrue(exists(path), "another handle still has it open")
        XCTAssertEqual(b!.context().objects(Person.self).count, 1)
        let kept = b!.database
        b = nil
        XCTAssertFalse(exists(path), "the last close removes the file")
        XCTAssertFalse(exists(path + ".lock"), "and its lock file")
        XCTAssertThrowsError(try kept.write { _ in }) { XCTAssertEqual($0 as? EngineError, .closed(path: path)) }
        let fresh = try ObjectStore(Configuration(inMemoryIdentifier: id, types: zooTypes))
        XCTAssertEqual(fresh.context().objects(Person.self).count, 0)
    }

    func testBadConfigurationsAreTypedErrors() throws {
        func refused(_ c: Configuration, _ e: ConfigurationError, line: UInt = #line) {
            XCTAssertThrowsError(try ObjectStore(c), line: line) {
                XCTAssertEqual($0 as? ConfigurationError, e, line: line)
            }
        }
        refused(Configuration(inMemoryIdentifier: "", types: zooTypes), .emptyInMemoryIdentifier)
        let long = String(repeating: "é", count: 101)  // 202 bytes
        refused(
            Configuration(inMemoryIdentifier: long, types: zooTypes),
            .inMemoryIdentifierTooLong(identifier: long, bytes: 202))
        XCTAssertNoThrow(
            try ObjectStore(
                Configuration(
                    inMemoryIdentifier: uniqueID("x").padding(toLength: 200, withPad: "y", startingAt: 0),
                    types: zooTypes)))
        refused(
            Configuration(inMemoryIdentifier: "a/b", types: zooTypes),
            .inMemoryIdentifierNotAFileName(identifier: "a/b"))
        refused(
            Configuration(inMemoryIdentifier: "..", types: zooTypes), .inMemoryIdentifierNotAFileName(identifier: ".."))
        var both = Configuration(inMemoryIdentifier: "x", types: zooTypes)
        both.path = "/tmp/elsewhere.fief"
        refused(both, .inMemoryIdentifierWithPath(identifier: "x", path: "/tmp/elsewhere.fief"))
        var ro = Configuration(inMemoryIdentifier: "x", types: zooTypes)
        ro.readOnly = true
        refused(ro, .inMemoryReadOnly(identifier: "x"))
    }

    // MARK: Other processes: this test binary, run again as a child for one role.

    /// A child's part, run in another process by the tests below (and a no-op in the suite):
    /// open the store, add `FIEF_CHILD_ADD` people, say "ready", then either wait for "go",
    /// report the count it sees and close, or hang until killed.
    func testChildProcessRole() throws {
        let env = ProcessInfo.processInfo.environment
        guard let id = env["FIEF_CHILD_STORE"], let dir = env["FIEF_CHILD_DIR"] else { return }
        if let rounds = env["FIEF_CHILD_CHURN"].flatMap(Int.init) {
            // Open, write, close, again: races the other processes' opens and closes.
            for i in 0..<rounds {
                let store = try ObjectStore(Configuration(inMemoryIdentifier: id, types: zooTypes))
                let ctx = store.context()
                try ctx.write { try ctx.create(Person.self, value: ["id": Int64(getpid()) * 1000 + Int64(i)]) }
            }
            return
        }
        let store = try ObjectStore(Configuration(inMemoryIdentifier: id, types: zooTypes))
        let ctx = store.context()
        let add = Int(env["FIEF_CHILD_ADD"] ?? "0") ?? 0
        try ctx.write { for i in 0..<add { try ctx.create(Person.self, value: ["id": 100 + i, "name": "child"]) } }
        XCTAssertTrue(FileManager.default.createFile(atPath: dir + "/ready", contents: nil))
        guard env["FIEF_CHILD_HANG"] == nil else { while true { sleep(1) } }
        try waitFor(dir + "/go")
        try ctx.refresh()
        XCTAssertTrue(
            FileManager.default.createFile(
                atPath: dir + "/count", contents: Data("\(ctx.objects(Person.self).count)".utf8)))
    }

    /// A child process that never got as far as `path`: it crashed or hung, and the test fails.
    private struct TimedOut: Error, CustomStringConvertible {
        let path: String
        let seconds: Double
        var description: String { "timed out after \(seconds) s waiting for \(path)" }
    }

    private func waitFor(_ path: String, seconds: Double = 20) throws {
        let deadline = Date().addingTimeInterval(seconds)
        while !exists(path) {
            guard Date() < deadline else { throw TimedOut(path: path, seconds: seconds) }
            usleep(5_000)
        }
    }

    private func child(_ id: String, _ dir: TempDir, add: Int, hang: Bool = false, churn: Int? = nil) throws -> Process
    {
        let p = Process()
        p.executableURL = URL(
            fileURLWithPath: try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
        p.arguments = ["FiefObjectsTests.InMemoryTests/testChildProcessRole"]
        var env = ProcessInfo.processInfo.environment
        env["FIEF_CHILD_STORE"] = id
        env["FIEF_CHILD_DIR"] = dir.path
        env["FIEF_CHILD_ADD"] = "\(add)"
        if hang { env["FIEF_CHILD_HANG"] = "1" }
        if let churn { env["FIEF_CHILD_CHURN"] = "\(churn)" }
        env["SWIFT_BACKTRACE"] = "enable=no"  // a SIGKILLed child must not linger in a backtracer
        p.environment = env
        p.standardOutput = FileHandle(forWritingAtPath: "/dev/null")
        p.standardError = FileHandle(forWritingAtPath: "/dev/null")
        try p.run()
        return p
    }

    /// Parent and child share one store both ways; the parent closes first, the child's close
    /// (the last) removes the files.
    func testTwoProcessesShareOneStore() throws {
        let id = uniqueID("procs"), dir = TempDir()
        var store: ObjectStore? = try ObjectStore(Configuration(inMemoryIdentifier: id, types: zooTypes))
        let path = store!.configuration.path
        var ctx: ObjectContext? = store!.context()  // holds the store: dropped with it
        try ctx!.write { try ctx!.create(Person.self, value: ["id": 1, "name": "parent"]) }
        let p = try child(id, dir, add: 2)
        try waitFor(dir.file("ready"))
        try ctx!.refresh()
        XCTAssertEqual(ctx!.objects(Person.self).count, 3, "the child's writes are visible here")
        try ctx!.write { try ctx!.create(Person.self, value: ["id": 2, "name": "parent"]) }
        ctx = nil
        store = nil
        XCTAssertTrue(exists(path), "the child still has it open")
        XCTAssertTrue(FileManager.default.createFile(atPath: dir.file("go"), contents: nil))
        p.waitUntilExit()
        XCTAssertEqual(p.terminationStatus, 0)
        XCTAssertEqual(
            try String(contentsOfFile: dir.file("count"), encoding: .utf8), "4", "the parent's writes are visible there"
        )
        XCTAssertFalse(exists(path), "the child closed last and removed the files")
        XCTAssertFalse(exists(path + ".lock"))
    }

    /// A writer in another process: the observer's next refresh delivers its commit.
    func testObserverSeesAChildProcessWriter() throws {
        let id = uniqueID("notify"), dir = TempDir()
        let store = try ObjectStore(Configuration(inMemoryIdentifier: id, types: zooTypes))
        let ctx = store.context()
        try ctx.write { try ctx.create(Person.self, value: ["id": 1]) }
        var seen: [String] = []
        let token = ctx.objects(Person.self).sorted(byKeyPath: "id").observe { change in
            switch change {
            case .initial(let r): seen.append("initial \(r.count)")
            case .update(_, let d, let i, let m): seen.append("update \(d) \(i) \(m)")
            case .error(let e): seen.append("error \(e)")
            }
        }
        // The store's commit watcher hears the other process's commit (the doorbell); the
        // context's refresh then delivers the change set.
        let woken = DispatchSemaphore(value: 0)
        let watch = try store.observe { _ in woken.signal() }
        let p = try child(id, dir, add: 2)
        try waitFor(dir.file("ready"))
        XCTAssertEqual(
            woken.wait(timeout: .now() + 5), .success, "the store observer hears a commit of another process")
        try ctx.refresh()
        XCTAssertEqual(seen, ["initial 1", "update [] [1, 2] []"])
        watch.cancel()
        XCTAssertTrue(FileManager.default.createFile(atPath: dir.file("go"), contents: nil))
        p.waitUntilExit()
        token.invalidate()
    }

    /// Processes opening and closing one identifier at once: every open and close succeeds,
    /// a store held throughout keeps every write, and the last close leaves nothing.
    func testOpensAndClosesRaceAcrossProcesses() throws {
        let id = uniqueID("churn"), dir = TempDir()
        // First, churn with no store held: the files come and go.
        var children = try (0..<3).map { _ in try child(id, dir, add: 0, churn: 20) }
        for _ in 0..<20 {
            _ = try ObjectStore(Configuration(inMemoryIdentifier: id, types: zooTypes)).context().objects(Person.self)
                .count
        }
        for c in children {
            c.waitUntilExit()
            XCTAssertEqual(c.terminationStatus, 0, "a churning child failed")
        }
        // Then with one store held throughout: every child's write lands in the one file.
        var keeper: ObjectStore? = try ObjectStore(Configuration(inMemoryIdentifier: id, types: zooTypes))
        let path = keeper!.configuration.path
        let before = keeper!.context().objects(Person.self).count
        children = try (0..<3).map { _ in try child(id, dir, add: 0, churn: 20) }
        for c in children {
            c.waitUntilExit()
            XCTAssertEqual(c.terminationStatus, 0, "a churning child failed")
        }
        XCTAssertEqual(keeper!.context().objects(Person.self).count - before, 60, "no child opened another file")
        keeper = nil
        XCTAssertFalse(exists(path), "nothing left after the last close")
        XCTAssertFalse(exists(path + ".lock"))
    }

    /// A SIGKILLed child never closes: its lock goes with it, so it is not counted. While the
    /// parent holds the store, the parent's close is then the last; with no one left, the next
    /// open replaces the leftover with an empty store.
    func testSigkilledProcessesLeaveNothingThatCounts() throws {
        let dir = TempDir()
        // 1. A child dies holding the store alone: its files are left over.
        let lonely = uniqueID("kill")
        let p = try child(lonely, dir, add: 5, hang: true)
        try waitFor(dir.file("ready"))
        kill(p.processIdentifier, SIGKILL)
        p.waitUntilExit()
        let path = "\(try InMemoryFiles.userDirectory())/\(lonely).fief"
        XCTAssertTrue(exists(path), "a killed process removes nothing")
        do {
            let store = try ObjectStore(Configuration(inMemoryIdentifier: lonely, types: zooTypes))
            XCTAssertEqual(store.context().objects(Person.self).count, 0, "the leftover was replaced by an empty store")
            XCTAssertTrue(try store.check().isSound)
        }
        XCTAssertFalse(exists(path))

        // 2. A child dies while the parent holds the store too: the parent's close is the last.
        let shared = uniqueID("kill-shared"), dir2 = TempDir()
        var store: ObjectStore? = try ObjectStore(Configuration(inMemoryIdentifier: shared, types: zooTypes))
        let sharedPath = store!.configuration.path
        let q = try child(shared, dir2, add: 3, hang: true)
        try waitFor(dir2.file("ready"))
        kill(q.processIdentifier, SIGKILL)
        q.waitUntilExit()
        var ctx: ObjectContext? = store!.context()
        XCTAssertEqual(ctx!.objects(Person.self).count, 3)
        try ctx!.write { try ctx!.create(Person.self, value: ["id": 1, "name": "after"]) }
        XCTAssertEqual(ctx!.objects(Person.self).count, 4)
        ctx = nil
        XCTAssertTrue(exists(sharedPath))
        store = nil
        XCTAssertFalse(exists(sharedPath), "the dead child does not count: the parent's close was the last")
    }
}
