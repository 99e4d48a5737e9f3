import XCTest
import Foundation
import Engine
@testable import FiefObjects

/// A read-only store opens the file O_RDONLY, refuses writes with a typed error, and reads a
/// file on a read-only filesystem, where no `.lock` file can be made.
final class ReadOnlyTests: XCTestCase {
    func makeZoo(_ dir: TempDir) throws {
        let store = try openZoo(dir)
        let ctx = store.context()
        try ctx.write { try ctx.create(Person.self, value: ["id": 1, "name": "Ann", "dogs": [["name": "Rex"]]]) }
    }

    func testReadOnlyStoreReadsAndRefusesWrites() throws {
        let dir = TempDir()
        try makeZoo(dir)
        let store = try ObjectStore(Configuration(path: dir.file("zoo.fief"), types: zooTypes, readOnly: true))
        let ctx = store.context()
        XCTAssertEqual(ctx.objects(Person.self).first?.dogs.first?.name, "Rex")
        XCTAssertThrowsError(try ctx.write {}) { XCTAssertEqual($0 as? ObjectError, .readOnly(dir.file("zoo.fief"))) }
        XCTAssertThrowsError(try store.database.write { _ in }) {
            XCTAssertEqual($0 as? EngineError, .readOnly(path: dir.file("zoo.fief")))
        }
        XCTAssertThrowsError(
            try ObjectStore(Configuration(path: dir.file("none.fief"), types: zooTypes, readOnly: true))
        ) {
            XCTAssertEqual($0 as? EngineError, .fileNotFound(path: dir.file("none.fief")))
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir.file("none.fief")), "read-only never creates")
    }

    func testReadOnlyFilesystemNeedsNoLockFile() throws {
        let dir = TempDir()
        try makeZoo(dir)
        try? FileManager.default.removeItem(atPath: dir.file("zoo.fief.lock"))
        let ro = TempDir()
        guard mountReadOnly(dir.path, at: ro.path) else {
            throw XCTSkip(
                skipping("READ-ONLY BIND MOUNT UNAVAILABLE (needs root): cannot test a file on a read-only filesystem"))
        }
        defer { _ = run("/bin/umount", [ro.path]) }
        XCTAssertThrowsError(
            try ObjectStore(Configuration(path: ro.file("zoo.fief"), types: zooTypes)),
            "a writable open fails on a read-only filesystem")
        let store = try ObjectStore(Configuration(path: ro.file("zoo.fief"), types: zooTypes, readOnly: true))
        XCTAssertEqual(store.context().objects(Person.self).first?.name, "Ann")
        XCTAssertTrue(try store.check().isSound)
        XCTAssertFalse(FileManager.default.fileExists(atPath: ro.file("zoo.fief.lock")))
    }

    func mountReadOnly(_ source: String, at target: String) -> Bool {
        guard getuid() == 0, run("/bin/mount", ["--bind", source, target]) == 0 else { return false }
        if run("/bin/mount", ["-o", "remount,ro,bind", target]) != 0 { _ = run("/bin/umount", [target]); return false }
        return true
    }

    func run(_ tool: String, _ args: [String]) -> Int32 {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: tool)
        p.arguments = args
        do { try p.run() } catch { return -1 }
        p.waitUntilExit()
        return p.terminationStatus
    }
}
