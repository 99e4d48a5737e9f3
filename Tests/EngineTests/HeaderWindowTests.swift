import XCTest
import FiefTestSupport
@testable import Engine

/// Commits without sync store their top slot and select bit through a writable mapping of the
/// header page (`HeaderWindow`): the file, read with `pread` as recovery reads it, and other
/// handles see each such commit at once, and a durable commit after them leaves a file that
/// reopens whole.
final class HeaderWindowTests: XCTestCase {
    private func header(_ path: String) throws -> [UInt8] {
        let h = try XCTUnwrap(FileHandle(forReadingAtPath: path))
        defer { try? h.close() }
        return [UInt8](try XCTUnwrap(try h.read(upToCount: Layout.pageSize)))
    }

    private func t(_ tx: WriteTransaction) throws -> Table<Int64, Int64> {
        try tx.table("t", key: Int64.self, value: Int64.self)
    }

    func testCommitsWithoutSyncReachTheFileAndOtherHandlesAtOnce() throws {
        let dir = TempDir()
        let path = dir.file("w.fief")
        let a = try Database(path: path, options: DatabaseOptions(durability: .none))
        let b = try Database(path: path, options: DatabaseOptions(durability: .none))
        try a.write { try $0.createTable("t", key: Int64.self, value: Int64.self).put(0, 0) }
        for i in Int64(1)...20 {
            let before = try header(path)[Layout.selectOffset]
            try a.write { try t($0).put(i, i * 10) }
            let head = try header(path)
            let select = try XCTUnwrap(SelectBit(rawValue: head[Layout.selectOffset]))
            XCTAssertNotEqual(select.rawValue, before, "commit \(i) did not flip the select bit in the file")
            let o = Layout.slotOffsets[select.index]
            let slot = head.withUnsafeBytes {
                TopSlot(raw: UnsafeRawBufferPointer(rebasing: $0[o..<(o + Layout.slotSize)]))
            }
            XCTAssertTrue(slot.isSelfConsistent, "commit \(i): the selected slot in the file is damaged")
            XCTAssertEqual(slot.version, try a.latestVersion())
            XCTAssertEqual(try b.read { try $0.table("t", key: Int64.self, value: Int64.self).get(i) }, i * 10)
        }
        let durable = try Database(path: path, options: DatabaseOptions(durability: .full))
        try durable.write { try t($0).put(100, 1000) }
        try a.write { try t($0).put(101, 1010) }
        a.close()
        b.close()
        durable.close()
        let reopened = try Database(path: path)
        XCTAssertEqual(try reopened.read { try $0.table("t", key: Int64.self, value: Int64.self).count() }, 23)
        XCTAssertEqual(try reopened.check().problems, [])
    }
}
