/// A few object keys that every key of a large result is checked against (the objects one
/// commit touched): a sorted array searched by halving while small, so a check costs a few
/// compares instead of hashing each of the result's keys. A 64-bit mask of the keys' hashed
/// bits comes first: nearly every key of the result is not among them, and the mask says so
/// in a multiply and a shift (a refresh that one commit changed checks every result key).
struct FewKeys {
    private let sorted: [Int64]
    private let set: Set<Int64>?
    private let mask: UInt64

    init<S: Sequence>(_ keys: S) where S.Element == Int64 {
        let all = Array(Set(keys)).sorted()
        sorted = all
        set = all.count > 64 ? Set(all) : nil
        mask = all.reduce(0) { $0 | FewKeys.bit($1) }
    }

    @inline(__always) private static func bit(_ k: Int64) -> UInt64 {
        1 << ((UInt64(bitPattern: k) &* 0x9E37_79B9_7F4A_7C15) >> 58)
    }

    var isEmpty: Bool { sorted.isEmpty }

    @inline(__always) func contains(_ k: Int64) -> Bool {
        guard mask & FewKeys.bit(k) != 0 else { return false }
        if let set { return set.contains(k) }
        guard let first = sorted.first, k >= first, k <= sorted[sorted.count - 1] else { return false }
        var lo = 0, hi = sorted.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if sorted[mid] < k { lo = mid + 1 } else { hi = mid }
        }
        return sorted[lo] == k
    }
}
