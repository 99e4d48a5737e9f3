/// A few object keys that every key of a large result is checked against (the objects one
/// commit touched): a sorted array searched by halving while small, so a check costs a few
/// compares instead of hashing each of the result's keys. Their `KeyMask` is asked first: a
/// refresh that one commit changed checks every key of the result, nearly all not among them.
struct FewKeys {
    private let sorted: [Int64]
    private let set: Set<Int64>?
    private let mask: KeyMask

    init<S: Sequence>(_ keys: S) where S.Element == Int64 {
        let all = Array(Set(keys)).sorted()
        sorted = all
        set = all.count > 64 ? Set(all) : nil
        mask = KeyMask(all)
    }

    var isEmpty: Bool { sorted.isEmpty }

    @inline(__always) func contains(_ k: Int64) -> Bool {
        guard mask.mayContain(k) else { return false }
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
