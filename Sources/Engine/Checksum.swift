/// XXH64 over node and header bytes: a 64-bit non-cryptographic checksum. It
/// detects torn, zeroed and garbage pages; it does not defend against an attacker. Four
/// independent lanes keep a page's hash off the critical path of a commit (format 2; format 1
/// used a single-lane variant, several times slower per page).
enum Checksum {
    private static let p1: UInt64 = 0x9E37_79B1_85EB_CA87
    private static let p2: UInt64 = 0xC2B2_AE3D_27D4_EB4F
    private static let p3: UInt64 = 0x1656_67B1_9E37_79F9
    private static let p4: UInt64 = 0x85EB_CA77_C2B2_AE63
    private static let p5: UInt64 = 0x27D4_EB2F_1656_67C5

    @inline(__always) private static func rotl(_ x: UInt64, _ r: UInt64) -> UInt64 {
        (x << r) | (x >> (64 - r))
    }

    @inline(__always) private static func round(_ acc: UInt64, _ input: UInt64) -> UInt64 {
        rotl(acc &+ input &* p2, 31) &* p1
    }

    @inline(__always) private static func merge(_ h: UInt64, _ lane: UInt64) -> UInt64 {
        (h ^ round(0, lane)) &* p1 &+ p4
    }

    /// XXH64 of `buf` with `seed` (0 unless a page's checksum chains its two parts).
    static func of(_ buf: UnsafeRawBufferPointer, seed: UInt64 = 0) -> UInt64 {
        let n = buf.count
        guard let base = buf.baseAddress else { return avalanche(seed &+ p5) }
        @inline(__always) func u64(_ o: Int) -> UInt64 {
            UInt64(littleEndian: base.loadUnaligned(fromByteOffset: o, as: UInt64.self))
        }
        var i = 0
        var h: UInt64
        if n >= 32 {
            var v1 = seed &+ p1 &+ p2, v2 = seed &+ p2, v3 = seed, v4 = seed &- p1
            // A pointer walk over whole stripes, no overflow checks: the loop a page hash
            // spends nearly all its time in.
            var p = base
            let end = base + (n & ~31)
            while p < end {
                v1 = round(v1, UInt64(littleEndian: p.loadUnaligned(as: UInt64.self)))
                v2 = round(v2, UInt64(littleEndian: p.loadUnaligned(fromByteOffset: 8, as: UInt64.self)))
                v3 = round(v3, UInt64(littleEndian: p.loadUnaligned(fromByteOffset: 16, as: UInt64.self)))
                v4 = round(v4, UInt64(littleEndian: p.loadUnaligned(fromByteOffset: 24, as: UInt64.self)))
                p += 32
            }
            i = n & ~31
            h = rotl(v1, 1) &+ rotl(v2, 7) &+ rotl(v3, 12) &+ rotl(v4, 18)
            h = merge(h, v1); h = merge(h, v2); h = merge(h, v3); h = merge(h, v4)
        } else {
            h = seed &+ p5
        }
        h &+= UInt64(n)
        while i + 8 <= n {
            h ^= round(0, u64(i))
            h = rotl(h, 27) &* p1 &+ p4
            i += 8
        }
        if i + 4 <= n {
            h ^= UInt64(UInt32(littleEndian: base.loadUnaligned(fromByteOffset: i, as: UInt32.self))) &* p1
            h = rotl(h, 23) &* p2 &+ p3
            i += 4
        }
        while i < n {
            h ^= UInt64(base.load(fromByteOffset: i, as: UInt8.self)) &* p5
            h = rotl(h, 11) &* p1
            i += 1
        }
        return avalanche(h)
    }

    @inline(__always) private static func avalanche(_ x: UInt64) -> UInt64 {
        var h = x
        h ^= h >> 33
        h = h &* p2
        h ^= h >> 29
        h = h &* p3
        h ^= h >> 32
        return h
    }

    static func of(_ bytes: [UInt8]) -> UInt64 { bytes.withUnsafeBytes { of($0) } }
}
