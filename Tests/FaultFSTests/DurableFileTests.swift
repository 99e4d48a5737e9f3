import XCTest
@testable import FaultFS

/// The durable-state model on a plain file, without FUSE: what a power cut leaves.
final class DurableFileTests: XCTestCase {
    var dir: TempDir!
    override func setUp() { dir = TempDir() }

    func make(_ base: [UInt8]) throws -> (RawFile, DurableFile) {
        let f = try RawFile(dir.file("f"))
        try f.write(base, at: 0)
        let d = try DurableFile(reopening: f.fd, ino: 1, path: "/f")
        return (f, d)
    }

    func write(_ f: RawFile, _ d: DurableFile, _ bytes: [UInt8], at off: Int, seq: UInt64) throws {
        try d.willWrite(offset: Int64(off), count: bytes.count)
        try f.write(bytes, at: off)
        d.didWrite(seq: seq, offset: Int64(off), bytes: bytes)
    }

    func testDropAllRestoresTheDurableBytesAndSize() throws {
        let base = (0..<3000).map { UInt8($0 % 251) }
        let (f, d) = try make(base)
        try write(f, d, [UInt8](repeating: 0xAA, count: 700), at: 100, seq: 1)
        try write(f, d, [UInt8](repeating: 0xBB, count: 5000), at: 2500, seq: 2)
        try d.willResize(to: 10)
        XCTAssertEqual(ftruncate(f.fd, 10), 0)
        d.didResize(seq: 3, to: 10)
        XCTAssertEqual(d.unsyncedBytes, 5700)
        try d.powerCut(.dropAll)
        XCTAssertEqual(contents(dir.file("f")), base)
    }

    func testPrefixReplaysTheFirstWritesInOrder() throws {
        let base = [UInt8](repeating: 1, count: 2048)
        let (f, d) = try make(base)
        try write(f, d, [UInt8](repeating: 2, count: 100), at: 0, seq: 1)
        try write(f, d, [UInt8](repeating: 3, count: 100), at: 50, seq: 2)
        try write(f, d, [UInt8](repeating: 4, count: 600), at: 2000, seq: 3)
        try d.powerCut(.choose { $0.seq < 3 ? .all : .none })
        var expected = base
        expected.replaceSubrange(0..<100, with: [UInt8](repeating: 2, count: 100))
        expected.replaceSubrange(50..<150, with: [UInt8](repeating: 3, count: 100))
        XCTAssertEqual(contents(dir.file("f")), expected)
    }

    func testTornKeepsWholeBlocksOldOrNew() throws {
        let base = [UInt8](repeating: 1, count: 8192)
        let (f, d) = try make(base)
        try write(f, d, [UInt8](repeating: 9, count: 8192), at: 0, seq: 1)
        try d.powerCut(.torn(sectorSize: 4096, newSize: false, keepBlock: { $0 == 1 }))
        XCTAssertEqual(contents(dir.file("f")), [UInt8](repeating: 1, count: 4096) + [UInt8](repeating: 9, count: 4096))
    }

    func testASyncMakesEverythingDurable() throws {
        let (f, d) = try make([1, 2, 3])
        try write(f, d, [7, 7, 7, 7], at: 1, seq: 1)
        try d.synced()
        try d.powerCut(.dropAll)
        XCTAssertEqual(contents(dir.file("f")), [1, 7, 7, 7, 7])
    }
}
