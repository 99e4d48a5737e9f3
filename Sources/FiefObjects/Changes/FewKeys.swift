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

    /// The indices of the elements of `b` that are among the keys, ascending. Up to four keys,
    /// each block of elements is first asked whether it holds any of them, four elements to a
    /// vector compare: a result of 200K keys that one commit touched is passed over at memory
    /// speed, where a mask test per key took about 5 ns each.
    func positions(in b: UnsafeBufferPointer<Int64>) -> [Int] {
        var out: [Int] = []
        guard let first = sorted.first, let base = b.baseAddress else { return out }
        guard sorted.count <= 4 else {
            for i in 0..<b.count where contains(base[i]) { out.append(i) }
            return out
        }
        let s0 = Lanes(repeating: first)
        if sorted.count == 1 {
            // The usual refresh: one object changed.
            scan { $0 .== s0 }
        } else {
            // Four compares for two to four keys: the missing ones repeat the first.
            let s1 = Lanes(repeating: sorted[1])
            let s2 = Lanes(repeating: sorted.count > 2 ? sorted[2] : first)
            let s3 = Lanes(repeating: sorted.count > 3 ? sorted[3] : first)
            scan { v in (v .== s0) .| (v .== s1) .| (v .== s2) .| (v .== s3) }
        }
        return out

        /// Each block of `b` that `matches` finds a key in, searched key by key.
        @inline(__always) func scan(_ matches: (Lanes) -> SIMDMask<Lanes.MaskStorage>) {
            let raw = UnsafeRawPointer(base)
            var start = 0
            while start < b.count {
                let end = min(start + FewKeys.block, b.count)
                var i = start
                var hit = SIMDMask<Lanes.MaskStorage>(repeating: false)
                while i + Lanes.scalarCount <= end {
                    hit = hit .| matches(raw.loadUnaligned(fromByteOffset: i * 8, as: Lanes.self))
                    i += Lanes.scalarCount
                }
                if any(hit) || i < end {
                    for k in start..<end where contains(base[k]) { out.append(k) }
                }
                start = end
            }
        }
    }

    typealias Lanes = SIMD4<Int64>

    /// Elements asked about at once by `positions` (a multiple of `Lanes.scalarCount`).
    static let block = 64

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
