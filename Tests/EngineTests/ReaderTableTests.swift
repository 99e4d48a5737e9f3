import XCTest
@testable import Engine

/// The writer reads the reader table without its lock unless some pin is older than the
/// newest version; pins that matter are still honoured, and dead ones still reclaimed.
final class ReaderTableTests: XCTestCase {
    /// A pid no process has (above the kernel's pid_max limit of 2^22).
    let deadPid: UInt32 = 0x7FFF_FFF0

    private func plantPin(_ db: Database, pid: UInt32, version: UInt64) -> Int {
        let i = (0..<db.lockFile!.slotCount).first { UnsafeRawBufferPointer(db.lockFile!.slot($0)).u32(0) == 0 }!
        let s = db.lockFile!.slot(i)
        s.setU64(1, at: 8)
        s.setU64(version, at: 16)
        s.setU32(pid, at: 0)
        return i
    }

    private func churn(_ db: Database, _ n: Int) throws {
        for k in 0..<n {
            try db.write { tx in try tx.openTable("t", key: Int64.self, value: Int64.self).put(Int64(k % 50), Int64(k)) }
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
        XCTAssertEqual(UnsafeRawBufferPointer(db.lockFile!.slot(slot)).u32(0), 0, "the dead pin was not reclaimed")
        try churn(db, 1)
        XCTAssertEqual(try db.stats().bytesPinned, 0)
    }

    func testDeadPinOfTheNewestVersionIsReclaimedOnceItIsOld() throws {
        let dir = TempDir()
        let db = try Database(path: dir.file("n.fief"), options: DatabaseOptions(durability: .none))
        try churn(db, 10)
        let slot = plantPin(db, pid: deadPid, version: try db.latestVersion())
        try churn(db, 1)   // the pin names the base: live anyway, the table lock is not needed
        try churn(db, 1)   // now it is older than the base: checked, found dead, cleared
        XCTAssertEqual(UnsafeRawBufferPointer(db.lockFile!.slot(slot)).u32(0), 0)
        try churn(db, 1)
        XCTAssertEqual(try db.stats().bytesPinned, 0)
        XCTAssertTrue(try db.check().isSound)
    }
}
