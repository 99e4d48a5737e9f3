import Engine
import FiefTestSupport
import XCTest

@testable import Torture

/// A child's request is built and read by one type: what a scenario asks is what the child
/// does, and the run's key goes with it.
final class ChildRequestTests: XCTestCase {
    static let roles: [ChildRole] = [
        .writer(
            db: "d", oracle: "o", seed: 1, threads: 2, maxCommit: 9, durability: .none, batch: true, schedule: "s"),
        .observer(of: .results, db: "d", log: "l", stop: "s", graceSeconds: 1.5),
        .holdSnapshot(db: "d", ready: "r", seconds: 60),
        .listAppend(
            ListAppendWorker(dbPath: "d", historyPath: "h", process: 2, seed: 3, threads: 3, transactions: 100)),
        .targetWriter(
            target: try! TargetSpec(parsing: "sqlite:journal=wal"), dir: "d", oracle: "o", seed: 1, maxCommit: 5),
        .targetVerify(target: .fief(generic: true), dir: "d", oracle: "o", seed: 1, out: "v.json"),
        .targetListAppend(
            TargetListAppendWorker(
                spec: try! TargetSpec(parsing: "lmdb:nosync"), directory: "d", historyPath: "h", process: 1, seed: 2,
                transactions: 80)),
        .objectsWriter(db: "d", oracle: "o", seed: 1, maxCommit: UInt64.max / 2, schema: 2),
        .objectsCheck(db: "d", oracle: "o", seed: 1, report: "r", cacheReopen: true),
        .objectsCache(db: "d", maxNotes: 4),
        .objectsMigrate(db: "d"),
        .objectsConvert(db: "d"),
        .fileOperation(.copy, db: "d", dest: "c"),
        .checkedRead(db: "d", oracle: "o", seed: 1, verifyChecksums: true),
        .churnReader(db: "d", seed: 1, seconds: 0.5, threads: 2),
        .faultFSDaemon(backing: "b", mountpoint: "m", seed: 4, model: .ext4Ordered, config: nil, trace: "t.jsonl")
    ]

    func testEveryRoleReadsBackAsItWasBuilt() throws {
        for role in ChildRequestTests.roles {
            let request = ChildRequest(role, encryptionKey: [1, 2, 3])
            let args = request.arguments
            XCTAssertEqual(Array(args.prefix(3)), ["torture", "child", "--request"])
            XCTAssertEqual(try ChildRequest(argument: args[3]), request, "\(role)")
        }
    }

    func testARequestReadsFromAFile() throws {
        let dir = TempDir()
        let request = ChildRequest(.objectsMigrate(db: "d"), encryptionKey: nil)
        try Data(request.arguments[3].utf8).write(to: URL(fileURLWithPath: dir.file("request.json")))
        XCTAssertEqual(try ChildRequest(argument: dir.file("request.json")), request)
        XCTAssertThrowsError(try ChildRequest(argument: dir.file("missing.json")))
        XCTAssertThrowsError(try ChildRequest(argument: "{\"role\": {\"unknown\": {}}}"))
    }

    /// The key rides in the request: the child encrypts with the run's key although nothing
    /// in its environment names one.
    func testTheChildUsesTheKeyOfItsRequest() throws {
        let dir = TempDir()
        let path = dir.file("made.fief")
        TortureEncryption.activate(seed: 11)
        defer { TortureEncryption.deactivate() }
        let child = try ChildProcess(.fileOperation(.create, db: path), output: dir.file("child.out"), label: "create")
        XCTAssertEqual(child.wait(), .exited(0), (try? String(contentsOfFile: dir.file("child.out"))) ?? "")
        XCTAssertNoThrow(try Database(path: path, options: TortureEncryption.options(create: false)))
        TortureEncryption.deactivate()
        XCTAssertThrowsError(try Database(path: path, options: DatabaseOptions(create: false)))
    }
}
