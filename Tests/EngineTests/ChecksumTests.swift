import XCTest
@testable import Engine

/// The checksum is XXH64 with seed 0; the expected values come from libxxhash 0.8.1.
final class ChecksumTests: XCTestCase {
    func testMatchesReferenceXXH64() {
        XCTAssertEqual(Checksum.of([UInt8]()), 0xEF46_DB37_51D8_E999)
        XCTAssertEqual(Checksum.of(Array("a".utf8)), 0xD24E_C4F1_A98C_6E5B)
        XCTAssertEqual(Checksum.of((0..<100).map { UInt8($0) }), 0x6AC1_E580_3216_6597)
        XCTAssertEqual(Checksum.of(Array(repeating: (0..<256).map { UInt8($0) }, count: 16).flatMap { $0 }), 0x0F6E_64BE_186A_F6A4)
    }
}
