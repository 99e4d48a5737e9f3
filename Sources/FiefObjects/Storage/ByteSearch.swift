/// Where a short byte string first occurs in memory: 32 positions at a time, each tested on its
/// first, middle and last byte with vector compares, and only those where all three agree
/// compared whole (Wojciech Muła's "SIMD-friendly" substring search, with a third byte). glibc's
/// `memmem` spends more per byte than a scan of the rows it would spare costs. A needle's first
/// and last bytes alone agree too often on rows: a city's serial and its last digit are shared by
/// one city in ten, and every such row cost a walk over the lanes and a whole compare.
struct ByteSearch {
    private let needle: UnsafeRawBufferPointer
    private let first: SIMD16<UInt8>
    private let middle: SIMD16<UInt8>
    private let last: SIMD16<UInt8>

    /// `needle` is borrowed: it must outlive the search.
    init(_ needle: UnsafeRawBufferPointer) {
        precondition(!needle.isEmpty)
        self.needle = needle
        first = SIMD16(repeating: needle[0])
        middle = SIMD16(repeating: needle[needle.count / 2])
        last = SIMD16(repeating: needle[needle.count - 1])
    }

    /// The 16 positions from `p` whose first, middle and last bytes are the needle's, as two
    /// words of eight lanes (a byte each, 0xFF where all three agree). As words, not a mask:
    /// `any` on a mask became a call in this loop.
    @inline(__always)
    private func candidates(_ p: UnsafeRawPointer, _ k: Int) -> SIMD2<UInt64> {
        let a = p.loadUnaligned(as: SIMD16<UInt8>.self)
        let b = p.loadUnaligned(fromByteOffset: k / 2, as: SIMD16<UInt8>.self)
        let c = p.loadUnaligned(fromByteOffset: k - 1, as: SIMD16<UInt8>.self)
        return unsafeBitCast((a .== first) .& (b .== middle) .& (c .== last), to: SIMD2<UInt64>.self)
    }

    /// The first of word `w`'s lanes (positions from `at`) where the whole needle is.
    @inline(__always)
    private func confirmed(_ w: UInt64, _ at: UnsafeRawPointer, _ n: UnsafeRawPointer, _ k: Int) -> Int? {
        var w = w
        while w != 0 {
            let lane = w.trailingZeroBitCount >> 3
            if RowConjunction.sameBytes(at + lane, n, k) { return lane }
            w &= ~(0xFF << UInt64(lane << 3))
        }
        return nil
    }

    /// The offset of the first occurrence in `haystack` at or after `from`, nil when none.
    func firstOffset(in haystack: UnsafeRawBufferPointer, from: Int) -> Int? {
        guard let h = haystack.baseAddress, let n = needle.baseAddress else { return nil }
        let k = needle.count, end = haystack.count
        var p = max(0, from)
        // Each step's loads end before `end`: the last reads 16 bytes from p + 16 + k - 1.
        while p &+ k &+ 31 <= end {
            let lo = candidates(h + p, k), hi = candidates(h + p + 16, k), either = lo | hi
            if either[0] | either[1] != 0 {
                if let i = confirmed(lo[0], h + p, n, k) { return p + i }
                if let i = confirmed(lo[1], h + p + 8, n, k) { return p + 8 + i }
                if let i = confirmed(hi[0], h + p + 16, n, k) { return p + 16 + i }
                if let i = confirmed(hi[1], h + p + 24, n, k) { return p + 24 + i }
            }
            p &+= 32
        }
        while p &+ k &+ 15 <= end {
            let m = candidates(h + p, k)
            if let i = confirmed(m[0], h + p, n, k) { return p + i }
            if let i = confirmed(m[1], h + p + 8, n, k) { return p + 8 + i }
            p &+= 16
        }
        while p + k <= end {
            if RowConjunction.sameBytes(h + p, n, k) { return p }
            p += 1
        }
        return nil
    }
}
