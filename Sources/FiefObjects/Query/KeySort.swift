/// Object keys in ascending order without duplicates, sorted by radix: an index range hands
/// back thousands of keys in value order, and a comparison sort of them cost a tenth of a
/// query. Keys are offset by their minimum, so only the bytes the range needs are passed over
/// (two passes for a class of up to 65,536 keys). A few hundred keys are sorted in place:
/// the radix passes' buffers and counts cost more than the comparisons.
enum KeySort {
    static func ascendingUnique(_ keys: [Int64]) -> [Int64] {
        if keys.count <= 512 { return smallAscendingUnique(keys) }
        guard let lo = keys.min(), let hi = keys.max() else { return keys }
        let span = UInt64(bitPattern: hi &- lo)
        var a = keys.map { UInt64(bitPattern: $0 &- lo) }
        var b = [UInt64](repeating: 0, count: a.count)
        var shift: UInt64 = 0
        while shift < 64 && span >> shift != 0 {
            var counts = [Int](repeating: 0, count: 257)
            for x in a { counts[Int((x >> shift) & 0xFF) + 1] += 1 }
            for i in 1..<257 { counts[i] += counts[i - 1] }
            for x in a {
                let d = Int((x >> shift) & 0xFF)
                b[counts[d]] = x
                counts[d] += 1
            }
            swap(&a, &b)
            shift += 8
        }
        var out: [Int64] = []
        out.reserveCapacity(a.count)
        for x in a {
            let k = Int64(bitPattern: x) &+ lo
            if out.last != k { out.append(k) }
        }
        return out
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
