import XCTest
import FaultFS
import SeededRandomness
@testable import Torture
import TortureSchema

/// Crash states at the operation level: FaultFS's record of the unsynced operations on a real
/// mount, replayed over the durable folder a drop-all cut leaves.
final class OperationStatesTests: XCTestCase {
    /// A mount with a durable file `/a` (1000 bytes of "d"), then unsynced: three writes to
    /// `/a` (the third inside the first), a create of `/b`, a write to it and its rename to
    /// `/c`. Returns the folder before the cut, the pending operations, and the durable folder.
    func unsyncedFolder() throws -> (now: DurableTree, pending: PendingOperations, durable: DurableTree, dir: TempDir) {
        guard FaultFSMount.unavailableReason() == nil else {
            throw TortureError.invalid("operation states need FUSE: \(FaultFSMount.unavailableReason()!)")
        }
        let dir = TempDir()
        let fs = FaultFSMount(
            backing: dir.file("backing"), mountpoint: dir.file("mnt"), seed: 5, tracePath: dir.file("trace.jsonl"))
        try fs.mount()
        defer { fs.unmount() }
        func write(_ fd: Int32, _ byte: Character, _ count: Int, at offset: Int) {
            let bytes = [UInt8](repeating: byte.asciiValue!, count: count)
            XCTAssertEqual(bytes.withUnsafeBytes { pwrite(fd, $0.baseAddress, count, off_t(offset)) }, count)
        }
        let a = open(fs.mountpoint + "/a", O_RDWR | O_CREAT, 0o644)
        XCTAssertGreaterThanOrEqual(a, 0)
        write(a, "d", 1000, at: 0)
        XCTAssertEqual(fsync(a), 0)
        let root = open(fs.mountpoint, O_RDONLY | O_DIRECTORY)
        XCTAssertEqual(fsync(root), 0)
        close(root)
        write(a, "x", 600, at: 0)
        write(a, "y", 100, at: 4096)
        write(a, "z", 10, at: 100)
        close(a)
        let b = open(fs.mountpoint + "/b", O_RDWR | O_CREAT, 0o644)
        write(b, "b", 20, at: 0)
        close(b)
        XCTAssertEqual(rename(fs.mountpoint + "/b", fs.mountpoint + "/c"), 0)
        let now = try DurableTree.read(fs.backing)
        let pending = try CrashImage.decodePending(fs)
        try fs.ctl(["power-cut", "--mode", "drop-all"])
        return (now, pending, try DurableTree.read(fs.backing), dir)
    }

    func testReplayingEveryPendingOperationGivesTheFolderBeforeTheCutAndNoneTheDurableOne() throws {
        let (now, pending, durable, _) = try unsyncedFolder()
        let ops = pending.operations
        XCTAssertEqual(ops.map(\.kind), [.write, .write, .write, .create, .write, .rename])
        XCTAssertEqual(ops.map(\.path), ["/a", "/a", "/a", "/b", "/b", "/b"], "a write is named as it was made")
        XCTAssertEqual(ops[1].offset, 4096)
        XCTAssertEqual(ops[1].bytes, Data(repeating: UInt8(ascii: "y"), count: 100))
        XCTAssertEqual(durable.files, ["/a": Data(repeating: UInt8(ascii: "d"), count: 1000)])
        let all = OperationState(persisted: Array(repeating: true, count: ops.count))
        XCTAssertEqual(durable.applying(all, of: ops), now, "every operation kept is the folder as written")
        let none = OperationState(persisted: Array(repeating: false, count: ops.count))
        XCTAssertEqual(durable.applying(none, of: ops), durable)
        // The inner write without the outer one: its own 10 bytes over the durable ones.
        var inner = none
        inner.persisted[2] = true
        let a = durable.applying(inner, of: ops).files["/a"]!
        XCTAssertEqual(a.count, 1000)
        XCTAssertEqual(a[99...110], Data("dzzzzzzzzzzd".utf8))
        // The create kept, the rename lost: the write to the new file is found under its first name.
        var created = none
        created.persisted[3] = true
        created.persisted[4] = true
        XCTAssertEqual(durable.applying(created, of: ops).files["/b"], Data(repeating: UInt8(ascii: "b"), count: 20))
        // The first write torn after its first sector: new bytes up to 512, durable after.
        let torn = OperationState(persisted: none.persisted, torn: .init(operation: 0, boundary: 1))
        let t = durable.applying(torn, of: ops).files["/a"]!
        XCTAssertEqual(t[511], UInt8(ascii: "x"))
        XCTAssertEqual(t[512], UInt8(ascii: "d"))
        XCTAssertTrue(
            torn.describe(ops).contains("torn: write 1 of /a [0, 600) after 1 sector"),
            torn.describe(ops))
    }

    func testTheSpaceHoldsEverySubsetNamesAsAPrefixAndOneTearAtATime() throws {
        let (_, pending, durable, _) = try unsyncedFolder()
        let space = OperationStateSpace(pending.operations)
        // Four writes (the first over two sectors: one tear), two name changes (three prefixes).
        XCTAssertEqual(space.data.count, 4)
        XCTAssertEqual(space.tears, 1)
        XCTAssertEqual(space.count, 3 * (16 + 8 * 1))
        var rng = SeededRandom(seed: 1)
        let (states, exhaustive) = space.states(bound: 72, using: &rng)
        XCTAssertTrue(exhaustive)
        XCTAssertEqual(Set(states.map { "\($0.persisted) \(String(describing: $0.torn))" }).count, 72)
        XCTAssertFalse(
            states.contains { $0.persisted[5] && !$0.persisted[3] }, "a rename kept without the create before it")
        XCTAssertFalse(states.contains { s in s.torn.map { s.persisted[$0.operation] } ?? false }, "torn and kept")
        // A lost create takes its file's writes with it; a kept rename moves the file.
        let trees = Set(states.map { durable.applying($0, of: pending.operations).files.keys.sorted() })
        XCTAssertEqual(trees, [["/a"], ["/a", "/b"], ["/a", "/c"]])
        let sampled = space.states(bound: 40, using: &rng)
        XCTAssertFalse(sampled.exhaustive)
        XCTAssertEqual(sampled.states.count, 40)
        XCTAssertEqual(sampled.states[1].persisted, Array(repeating: true, count: 6), "the sample keeps both ends")
    }

    func testTheSummaryGivesTheShareExploredExhaustively() throws {
        var r = ScenarioResult(name: "crash-states")
        r.crashStates = [
            CrashStateCoverage(
                cycle: 0, commit: 3, crashPoint: "after-select-flip", unsyncedSectors: 1, sizeChoice: false,
                statesExplored: 2, exhaustive: true, operations: 1, operationStatesPossible: 2),
            CrashStateCoverage(
                cycle: 1, commit: 9, crashPoint: "unsynced-flip-then-next", unsyncedSectors: 113, sizeChoice: true,
                statesExplored: 1024, exhaustive: false, operations: 5, operationStatesPossible: 1760)
        ]
        XCTAssertEqual(r.crashStates.operationLevelExhaustiveShare, 0.5)
        let md = CrashStatesSummary.markdown(r)
        XCTAssertTrue(md.contains("1 of 2 crashed commits (50.0 %) explored exhaustively"), md)
        XCTAssertTrue(md.contains("| 5 | 1 | 1024 | 1760 | sampled |"), md)
        let json = try JSONSerialization.jsonObject(with: JSONEncoder().encode(r)) as? [String: Any]
        XCTAssertEqual(json?["crashStatesExhaustiveShare"] as? Double, 0.5)
    }
}
