import XCTest
@testable import Engine

/// The checksum is XXH64; the expected values come from libxxhash 0.8.1 (seeded: the `xxhash`
/// Python package, which wraps it).
final class ChecksumTests: XCTestCase {
    func testMatchesReferenceXXH64() {
        XCTAssertEqual(Checksum.of([UInt8]()), 0xEF46_DB37_51D8_E999)
        XCTAssertEqual(Checksum.of(Array("a".utf8)), 0xD24E_C4F1_A98C_6E5B)
        XCTAssertEqual(Checksum.of((0..<100).map { UInt8($0) }), 0x6AC1_E580_3216_6597)
        XCTAssertEqual(
            Checksum.of(Array(repeating: (0..<256).map { UInt8($0) }, count: 16).flatMap { $0 }), 0x0F6E_64BE_186A_F6A4)
    }

    func testMatchesReferenceSeededXXH64() {
        func of(_ b: [UInt8], seed: UInt64) -> UInt64 { b.withUnsafeBytes { Checksum.of($0, seed: seed) } }
        XCTAssertEqual(of([], seed: 0x9E37_79B1_85EB_CA87), 0x6EC6_D05F_61C7_E7A7)
        XCTAssertEqual(of((0..<100).map { UInt8($0) }, seed: 12345), 0x028B_A1AE_2DE4_DE27)
        XCTAssertEqual(
            of(Array(repeating: (0..<256).map { UInt8($0) }, count: 16).flatMap { $0 }, seed: .max),
            0x7D26_A544_053E_6933)
    }
}
