import XCTest
@testable import Engine

/// The writer reads the reader table without its lock unless some pin is older than the
/// newest version; pins that matter are still honoured, and dead ones still reclaimed.
final class ReaderTableTests: XCTestCase {
    /// A pid no process has (above the kernel's pid_max limit of 2^22).
    let deadPid: UInt32 = 0x7FFF_FFF0

    /// Writes a slot as another process would have left it.
    @discardableResult
    private func plantPin(_ db: Database, pid: UInt32, version: UInt64, startTime: UInt64 = 1) -> Int {
        let i = (0..<db.lockFile!.slotCount).first { db.lockFile!.slot($0).pid == 0 }!
        let s = db.lockFile!.slot(i)
        s.claim(pid: pid, startTime: startTime)
        db.lockFile!.raiseSlotHighWater(toCover: i)
        s.publish(version)
        return i
    }

    /// The slots this process owns, and the versions in them (0: idle).
    private func mySlots(_ db: Database) -> [Int: UInt64] {
        var out: [Int: UInt64] = [:]
        for i in 0..<db.lockFile!.slotCount where db.lockFile!.slot(i).pid == UInt32(getpid()) {
            out[i] = db.lockFile!.slot(i).version
        }
        return out
    }

    private func churn(_ db: Database, _ n: Int) throws {
        for k in 0..<n {
            try db.write { tx in try tx.openTable("t", key: Int64.self, value: Int64.self).put(Int64(k % 50), Int64(k))
            }
        }
    }

    func testOldPinOfAnotherHandleHoldsPages() throws {
        let dir = TempDir()
        let path = dir.file("r.fief")
        let writer = try Database(path: path, options: DatabaseOptions(durability: .none))
        let reader = try Database(path: path, options: DatabaseOptions(durability: .none))
        try churn(writer, 20)
        let pinned = try reader.pin()
        let before = try reader.read(pinned) { try $0.table("t", key: Int64.self, value: Int64.self).get(3) }
        try churn(writer, 100)
        XCTAssertGreaterThan(try writer.stats().bytesPinned, 0)
        XCTAssertEqual(try reader.read(pinned) { try $0.table("t", key: Int64.self, value: Int64.self).get(3) }, before)
        pinned.release()
        try churn(writer, 2)
        XCTAssertEqual(try writer.stats().bytesPinned, 0)
        XCTAssertTrue(try writer.check().isSound)
    }

    func testDeadPinOfAnOldVersionIsReclaimedByTheNextCommit() throws {
        let dir = TempDir()
        let db = try Database(path: dir.file("d.fief"), options: DatabaseOptions(durability: .none))
        try churn(db, 10)
        let old = try db.latestVersion() - 3
        let slot = plantPin(db, pid: deadPid, version: old)
        try churn(db, 1)
        XCTAssertEqual(db.lockFile!.slot(slot).pid, 0, "the dead pin was not reclaimed")
        try churn(db, 1)
        XCTAssertEqual(try db.stats().bytesPinned, 0)
    }

    func testDeadPinOfTheNewestVersionIsReclaimedOnceItIsOld() throws {
        let dir = TempDir()
        let db = try Database(path: dir.file("n.fief"), options: DatabaseOptions(durability: .none))
        try churn(db, 10)
        let slot = plantPin(db, pid: deadPid, version: try db.latestVersion())
        try churn(db, 1)  // the pin names the base: live anyway, the table lock is not needed
        try churn(db, 1)  // now it is older than the base: checked, found dead, cleared
        XCTAssertEqual(db.lockFile!.slot(slot).pid, 0)
        try churn(db, 1)
        XCTAssertEqual(try db.stats().bytesPinned, 0)
        XCTAssertTrue(try db.check().isSound)
    }

    // MARK: Slots owned by a handle

    func testReadTransactionsReuseOneSlot() throws {
        let dir = TempDir()
        let db = try Database(path: dir.file("s.fief"), options: DatabaseOptions(durability: .none))
        try churn(db, 5)
        for i in 0..<1_000 {
            let v = try db.read { tx -> Int64? in
                // While the transaction runs its version is in the slot, for every writer to see.
                XCTAssertEqual(Array(mySlots(db).values), [tx.version])
                return try tx.table("t", key: Int64.self, value: Int64.self).get(Int64(i % 5))
            }
            XCTAssertNotNil(v)
            if i % 100 == 0 { try churn(db, 1) }  // new versions do not need new slots either
        }
        XCTAssertEqual(db.readers.claims, 1, "one slot claimed under the table lock, then reused")
        XCTAssertEqual(Array(mySlots(db).values), [0], "owned and idle between transactions")
    }

    func testNestedPinsOnOneThread() throws {
        let dir = TempDir()
        let db = try Database(path: dir.file("n.fief"), options: DatabaseOptions(durability: .none))
        try churn(db, 50)
        let tx1 = try db.beginRead()
        let old = try tx1.table("t", key: Int64.self, value: Int64.self).entries()
        try churn(db, 1)
        let tx2 = try db.beginRead()
        let pinned = try db.pin()
        let tx3 = try db.beginRead()
        XCTAssertEqual(pinned.version, tx2.version)
        XCTAssertEqual(tx3.version, tx2.version)
        XCTAssertEqual(
            Set(mySlots(db).values), [tx1.version, tx2.version], "one slot per version, shared by its holders")
        XCTAssertEqual(db.readers.claims, 2)
        // Reading the pinned version inside the others shares its slot again.
        try db.read(pinned) { tx in XCTAssertEqual(tx.version, tx2.version) }

        try churn(db, 200)  // the writer must keep both versions' pages
        XCTAssertEqual(try tx1.table("t", key: Int64.self, value: Int64.self).entries().map(\.value), old.map(\.value))
        tx2.end()
        tx3.end()
        XCTAssertEqual(
            Set(mySlots(db).values), [tx1.version, pinned.version!], "the PinnedVersion still holds its version")
        pinned.release()
        XCTAssertEqual(Set(mySlots(db).values), [tx1.version, 0])
        try churn(db, 100)
        XCTAssertEqual(try tx1.table("t", key: Int64.self, value: Int64.self).entries().map(\.value), old.map(\.value))
        tx1.end()
        XCTAssertEqual(Set(mySlots(db).values), [0])
        try churn(db, 2)
        XCTAssertEqual(try db.stats().bytesPinned, 0)
        XCTAssertTrue(try db.check().isSound)
    }

    func testIdleSlotsAreKeptUpToABound() throws {
        let dir = TempDir()
        let db = try Database(path: dir.file("b.fief"), options: DatabaseOptions(durability: .none))
        var held: [ReadTransaction] = []
        for _ in 0..<(ReaderTable.idleKept + 6) {
            try churn(db, 1)
            held.append(try db.beginRead())
        }
        XCTAssertEqual(mySlots(db).count, ReaderTable.idleKept + 6)
        for tx in held { tx.end() }
        XCTAssertEqual(mySlots(db).count, ReaderTable.idleKept, "the rest went back to the table")
        XCTAssertTrue(mySlots(db).values.allSatisfy { $0 == 0 })
    }

    func testClosingAHandleFreesItsSlots() throws {
        let dir = TempDir()
        let path = dir.file("c.fief")
        let keeper = try Database(path: path, options: DatabaseOptions(durability: .none))
        try churn(keeper, 3)
        var other: Database? = try Database(path: path, options: DatabaseOptions(durability: .none))
        _ = try other!.read { $0.version }
        XCTAssertEqual(mySlots(keeper).count, 1, "the other handle's slot")
        other = nil
        XCTAssertEqual(mySlots(keeper).count, 0)
    }

    func testIdleSlotsOfDeadProcessesAreReclaimedWhenTheTableIsFull() throws {
        let dir = TempDir()
        let path = dir.file("f.fief")
        let writer = try Database(path: path, options: DatabaseOptions(durability: .none))
        try churn(writer, 3)
        // Every slot idle and owned by a process that is gone: only reclaiming makes room.
        for _ in 0..<writer.lockFile!.slotCount { plantPin(writer, pid: deadPid, version: 0) }
        let reader = try Database(path: path, options: DatabaseOptions(durability: .none))
        XCTAssertEqual(try reader.read { try $0.table("t", key: Int64.self, value: Int64.self).count() }, 3)
        XCTAssertEqual(mySlots(reader).count, 1)
        XCTAssertGreaterThan((0..<writer.lockFile!.slotCount).filter { writer.lockFile!.slot($0).pid == 0 }.count, 0)
    }

    func testSlotsOfALiveProcessAreNotReclaimed() throws {
        let dir = TempDir()
        let path = dir.file("l.fief")
        let writer = try Database(path: path, options: DatabaseOptions(durability: .none))
        try churn(writer, 3)
        let live = try XCTUnwrap(ProcessIdentity.startTime(of: 1), "pid 1 runs on every Linux system")
        for _ in 0..<writer.lockFile!.slotCount { plantPin(writer, pid: 1, version: 0, startTime: live) }
        let reader = try Database(path: path, options: DatabaseOptions(durability: .none))
        XCTAssertThrowsError(try reader.read { $0.version }) { e in
            guard case .readerTableFull? = e as? EngineError else { return XCTFail("\(e)") }
        }
    }

    func testAReusedPidIsNotTakenForTheOwner() throws {
        let dir = TempDir()
        let db = try Database(path: dir.file("p.fief"), options: DatabaseOptions(durability: .none))
        try churn(db, 10)
        let live = try XCTUnwrap(ProcessIdentity.startTime(of: 1))
        // pid 1 is alive, but it is not the process that pinned: that one started at another time.
        let slot = plantPin(db, pid: 1, version: try db.latestVersion() - 3, startTime: live + 12_345)
        try churn(db, 1)
        XCTAssertEqual(db.lockFile!.slot(slot).pid, 0, "the pin of the earlier pid-1 process was not reclaimed")
    }
}
