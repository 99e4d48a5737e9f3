/// Object keys in ascending order without duplicates, sorted by radix: an index range hands
/// back thousands of keys in value order, and a comparison sort of them cost a tenth of a
/// query. Keys are offset by their minimum, so only the bytes the range needs are passed over
/// (two passes for a class of up to 65,536 keys). A few dozen keys are sorted in place: the
/// radix passes' 256 counts cost more than the comparisons. Over pointers, a query's few
/// hundred index hits sort in half the instructions a comparison sort takes.
enum KeySort {
    static func ascendingUnique(_ keys: [Int64]) -> [Int64] {
        if keys.count <= 64 { return smallAscendingUnique(keys) }
        var lo = keys[0], hi = keys[0]
        for k in keys {
            lo = Swift.min(lo, k)
            hi = Swift.max(hi, k)
        }
        let span = UInt64(bitPattern: hi &- lo), n = keys.count
        // Through pointers into one scratch allocation: on arrays, every store checked the
        // array's uniqueness and bounds, and the passes cost ~130 instructions a key.
        return withUnsafeTemporaryAllocation(of: UInt64.self, capacity: 2 * n + 256) { scratch in
            var a = scratch.baseAddress!, b = a + n
            let counts = b + n
            keys.withUnsafeBufferPointer { k in
                for i in 0..<n { a[i] = UInt64(bitPattern: k[i] &- lo) }
            }
            var shift: UInt64 = 0
            while shift < 64 && span >> shift != 0 {
                counts.update(repeating: 0, count: 256)
                for i in 0..<n { counts[Int((a[i] >> shift) & 0xFF)] &+= 1 }
                var start: UInt64 = 0
                for d in 0..<256 { (counts[d], start) = (start, start &+ counts[d]) }
                for i in 0..<n {
                    let x = a[i], d = Int((x >> shift) & 0xFF)
                    b[Int(counts[d])] = x
                    counts[d] &+= 1
                }
                swap(&a, &b)
                shift += 8
            }
            let sorted = a
            return [Int64](unsafeUninitializedCapacity: n) { out, count in
                var m = 0
                for i in 0..<n {
                    let k = Int64(bitPattern: sorted[i]) &+ lo
                    if m == 0 || out[m - 1] != k {
                        out[m] = k
                        m += 1
                    }
                }
                count = m
            }
        }
    }

    private static func smallAscendingUnique(_ keys: [Int64]) -> [Int64] {
        var a = keys
        a.sort()
        var n = 0
        for i in a.indices where n == 0 || a[i] != a[n - 1] {
            a[n] = a[i]
            n += 1
        }
        a.removeLast(a.count - n)
        return a
    }
}
