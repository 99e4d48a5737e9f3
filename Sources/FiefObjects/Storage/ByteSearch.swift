/// Where a short byte string first occurs in memory: 16 positions at a time, each tested on its
/// first and last byte with two vector compares, and only those where both agree compared
/// whole (Wojciech Muła's "SIMD-friendly" substring search). glibc's `memmem` spends more per
/// byte than a scan of the rows it would spare costs; a needle's first and last bytes are
/// rarely both right, so almost every 16 positions cost two loads and two compares.
struct ByteSearch {
    private let needle: UnsafeRawBufferPointer
    private let first: SIMD16<UInt8>
    private let last: SIMD16<UInt8>

    /// `needle` is borrowed: it must outlive the search.
    init(_ needle: UnsafeRawBufferPointer) {
        precondition(!needle.isEmpty)
        self.needle = needle
        first = SIMD16(repeating: needle[0])
        last = SIMD16(repeating: needle[needle.count - 1])
    }

    /// The offset of the first occurrence in `haystack` at or after `from`, nil when none.
    func firstOffset(in haystack: UnsafeRawBufferPointer, from: Int) -> Int? {
        guard let h = haystack.baseAddress, let n = needle.baseAddress else { return nil }
        let k = needle.count, end = haystack.count
        var p = max(0, from)
        while p + k - 1 + 16 <= end {
            let a = h.loadUnaligned(fromByteOffset: p, as: SIMD16<UInt8>.self)
            let b = h.loadUnaligned(fromByteOffset: p + k - 1, as: SIMD16<UInt8>.self)
            let both = (a .== first) .& (b .== last)
            if any(both) {
                for i in 0..<16 where both[i] && RowConjunction.sameBytes(h + p + i, n, k) { return p + i }
            }
            p += 16
        }
        while p + k <= end {
            if RowConjunction.sameBytes(h + p, n, k) { return p }
            p += 1
        }
        return nil
    }
}
