/// A 64-bit non-cryptographic checksum (an xxHash64-style single lane) over node and header
/// bytes. It detects torn, zeroed and garbage pages; it does not defend against an attacker.
enum Checksum {
    private static let p1: UInt64 = 0x9E37_79B1_85EB_CA87
    private static let p2: UInt64 = 0xC2B2_AE3D_27D4_EB4F
    private static let p3: UInt64 = 0x1656_67B1_9E37_79F9
    private static let p5: UInt64 = 0x27D4_EB2F_1656_67C5

    @inline(__always) private static func rotl(_ x: UInt64, _ r: UInt64) -> UInt64 {
        (x << r) | (x >> (64 - r))
    }

    static func of(_ buf: UnsafeRawBufferPointer) -> UInt64 {
        let n = buf.count
        var h = p5 &+ UInt64(n)
        var i = 0
        if let base = buf.baseAddress {
            while i + 8 <= n {
                let w = base.loadUnaligned(fromByteOffset: i, as: UInt64.self)
                h ^= rotl(w &* p2, 31) &* p1
                h = rotl(h, 27) &* p1 &+ 0x85EB_CA77_C2B2_AE63
                i += 8
            }
            while i < n {
                h ^= UInt64(base.load(fromByteOffset: i, as: UInt8.self)) &* p5
                h = rotl(h, 11) &* p1
                i += 1
            }
        }
        h ^= h >> 33
        h = h &* p2
        h ^= h >> 29
        h = h &* p3
        h ^= h >> 32
        return h
    }

    static func of(_ bytes: [UInt8]) -> UInt64 { bytes.withUnsafeBytes { of($0) } }
}
