import XCTest
@testable import Engine

/// The `.lock` file's header: the shared writer mutex and the reader slots' high-water mark,
/// reset by the only opener, and the upgrade from the previous layout.
final class LockFileTests: XCTestCase {
    private let legacySize = 64 + 512 * 32

    private func makeDatabase(_ path: String) throws {
        let db = try Database(path: path, options: DatabaseOptions(durability: .none))
        try db.write { tx in try tx.createTable("t", key: Int64.self, value: Int64.self).put(1, 1) }
    }

    private func writeLegacyLockFile(_ path: String) {
        var bytes = [UInt8](repeating: 0, count: legacySize)
        bytes.replaceSubrange(0..<8, with: Array("FIEFLCK1".utf8))
        bytes[8] = 0x00; bytes[9] = 0x02  // 512 slots, little-endian
        XCTAssertTrue(FileManager.default.createFile(atPath: path, contents: Data(bytes)))
    }

    func testALegacyLockFileNobodyHoldsIsUpgraded() throws {
        let dir = TempDir()
        let path = dir.file("u.fief")
        try makeDatabase(path)
        writeLegacyLockFile(path + ".lock")
        let db = try Database(path: path, options: DatabaseOptions(durability: .none))
        try db.write { tx in try tx.table("t", key: Int64.self, value: Int64.self).put(2, 2) }
        let head = try XCTUnwrap(FileManager.default.contents(atPath: path + ".lock"))
        XCTAssertEqual(Array(head.prefix(8)), Array("FIEFLCK2".utf8))
        XCTAssertEqual(try db.read { try $0.table("t", key: Int64.self, value: Int64.self).count() }, 2)
    }

    func testALegacyLockFileInUseIsRefusedAndNothingIsWritten() throws {
        let dir = TempDir()
        let path = dir.file("o.fief")
        try makeDatabase(path)
        writeLegacyLockFile(path + ".lock")
        let dataBefore = FileManager.default.contents(atPath: path)
        // An older engine's handle: a shared lock on the open byte, held by another descriptor.
        let fd = open(path + ".lock", O_RDWR | O_CLOEXEC)
        XCTAssertGreaterThanOrEqual(fd, 0)
        defer { close(fd) }
        var fl = flock()
        fl.l_type = Int16(F_RDLCK)
        fl.l_whence = Int16(SEEK_SET)
        fl.l_start = (1 << 20) + 2
        fl.l_len = 1
        XCTAssertEqual(fcntl(fd, 37 /* F_OFD_SETLK */, &fl), 0)
        XCTAssertThrowsError(try Database(path: path)) { e in
            guard case .lockFileCorrupt(_, let detail)? = e as? EngineError else { return XCTFail("\(e)") }
            XCTAssertTrue(detail.contains("older Fief engine"), detail)
        }
        XCTAssertEqual(
            Array((FileManager.default.contents(atPath: path + ".lock") ?? Data()).prefix(8)), Array("FIEFLCK1".utf8))
        XCTAssertEqual(FileManager.default.contents(atPath: path), dataBefore)
    }

    /// After a power cut, or when every process died, the mutex may name a thread no robust
    /// list will release: the first opener starts it afresh.
    func testAWriterMutexLeftLockedIsResetByTheOnlyOpener() throws {
        let dir = TempDir()
        let path = dir.file("m.fief")
        try makeDatabase(path)
        // glibc's mutex word (offset 0 of pthread_mutex_t, at header offset 64): the owner's
        // thread id, here one that cannot exist.
        let h = try FileHandle(forUpdating: URL(fileURLWithPath: path + ".lock"))
        try h.seek(toOffset: 64)
        h.write(Data([0xF0, 0xFF, 0xFF, 0x3F]))
        try h.close()
        let run = runWithWatchdog(seconds: 30) {
            let db = try Database(path: path, options: DatabaseOptions(durability: .none))
            try db.write { tx in try tx.table("t", key: Int64.self, value: Int64.self).put(3, 3) }
        }
        XCTAssertNotEqual(run, .timedOut, "the write waited on a mutex whose owner is gone")
        if case .threw(let e) = run { XCTFail(e) }
    }

    /// The writer's scan stops at the high-water mark; the mark the only opener recomputes
    /// still covers a pin another process left (and may still hold).
    func testTheHighWaterMarkCoversEveryClaimedSlot() throws {
        let dir = TempDir()
        let path = dir.file("h.fief")
        try makeDatabase(path)
        var db = try Database(path: path, options: DatabaseOptions(durability: .none))
        for k in 0..<20 {
            try db.write { tx in try tx.table("t", key: Int64.self, value: Int64.self).put(Int64(k), Int64(k)) }
        }
        let old = try db.latestVersion() - 5
        // pid 1 is alive on every Linux system: its pin is never reclaimed.
        let live = try XCTUnwrap(ProcessIdentity.startTime(of: 1))
        let slot = db.lockFile!.slot(7)
        slot.claim(pid: 1, startTime: live)
        db.lockFile!.raiseSlotHighWater(toCover: 7)
        slot.publish(old)
        db = try Database(path: dir.file("other.fief"))  // the only handle on h.fief goes away
        db = try Database(path: path, options: DatabaseOptions(durability: .none))
        XCTAssertEqual(db.lockFile!.slotHighWater, 8)
        try db.write { tx in try tx.table("t", key: Int64.self, value: Int64.self).put(99, 99) }
        XCTAssertEqual(
            try db.readers.oldestPinned(olderThan: try db.latestVersion()), old,
            "the writer's scan did not reach the pin")
        db.lockFile!.slot(7).free()
    }

    /// A header wiped under a running handle (a truncated or reverted `.lock` file) is refused
    /// by the next opener, rather than answered with a fresh mutex beside the one in use.
    func testAHeaderWipedUnderAnOpenHandleIsRefused() throws {
        let dir = TempDir()
        let path = dir.file("w.fief")
        try makeDatabase(path)
        let keeper = try Database(path: path, options: DatabaseOptions(durability: .none))
        let h = try FileHandle(forUpdating: URL(fileURLWithPath: path + ".lock"))
        h.write(Data(repeating: 0, count: 8))
        try h.close()
        XCTAssertThrowsError(try Database(path: path)) { e in
            guard case .lockFileCorrupt(_, let detail)? = e as? EngineError else { return XCTFail("\(e)") }
            XCTAssertTrue(detail.contains("reset while other handles"), detail)
        }
        try keeper.write { tx in try tx.table("t", key: Int64.self, value: Int64.self).put(4, 4) }
    }
}
