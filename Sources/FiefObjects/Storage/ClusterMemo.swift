/// The clusters of one class found so far in a version whose bytes stay put (a read), by
/// cluster number. A query's index hits, a walk's links and a lookup by primary key each
/// found their cluster by a descent of the class's tree and a check of its header, about a
/// thousand instructions, and most of them found a cluster found before in the same version.
/// Cluster numbers are dense (keys are handed out in order), so an array serves; a number
/// from `limit` up is not kept and is found by a descent each time.
struct ClusterMemo: ~Copyable {
    /// 2^17 clusters: 2M objects of a class whose rows take clusters of 16 (a person of the
    /// benchmark's), 32M in clusters of 256; at most 9 MB, 72 bytes per cluster found. At 2^15,
    /// half of a million persons' clusters were past it, and each of their reads descended.
    static let limit: Int64 = 1 << 17
    /// Its own allocation, not an array: an element read out of an array that a class holds
    /// retained and released the array's buffer, an atomic pair for every row a query tested.
    private var views: UnsafeMutablePointer<ClusterView?>?
    private var count = 0

    init() {}

    deinit {
        guard let views else { return }
        views.deinitialize(count: count)
        views.deallocate()
    }

    @inline(__always)
    func view(_ number: Int64) -> ClusterView? {
        guard number >= 0, number < count, let views else { return nil }
        return views[Int(number)]
    }

    mutating func remember(_ number: Int64, _ view: ClusterView) {
        guard number >= 0, number < ClusterMemo.limit else { return }
        let n = Int(number)
        if n >= count {
            // Doubling, so a walk upward through the clusters grows the memo a few times.
            let size = min(max(n + 1, 2 * count), Int(ClusterMemo.limit))
            let grown = UnsafeMutablePointer<ClusterView?>.allocate(capacity: size)
            if let views {
                grown.moveInitialize(from: views, count: count)
                views.deallocate()
            }
            (grown + count).initialize(repeating: nil, count: size - count)
            (views, count) = (grown, size)
        }
        views.unsafelyUnwrapped[n] = view
    }
}
