import CHeapCount

/// Heap allocations made by the calling thread: Swift's (class instances, array and string
/// buffers, closure contexts, boxes) and C libraries' (SQLite's) alike, counted where the
/// process calls `malloc` (see CHeapCount). The objects suite's "heap allocations per object
/// read".
enum HeapAllocations {
    /// False where another allocator comes first (a sanitizer, valgrind): nothing is reported then.
    static let available = fief_heap_count_available() != 0

    /// Allocations by this thread so far.
    static var count: UInt64 { fief_heap_count() }
}

/// What one measured stretch of a workload cost beyond time: tree descents (Fief's reading
/// context) and heap allocations (this thread), per operation.
struct ReadCounters {
    private let descents: Int?
    private let allocations: UInt64
    private let sys: any ObjectBenchSystem

    init(_ sys: any ObjectBenchSystem) {
        self.sys = sys
        descents = sys.treeDescents
        allocations = HeapAllocations.count
    }

    /// Adds the counts since `init`, divided by `operations`, to `m`'s extras.
    func record(into m: inout Measurement, operations: Int) {
        let n = Double(max(1, operations))
        if HeapAllocations.available {
            m.extra["heapAllocationsPerOp"] = Double(HeapAllocations.count - allocations) / n
        }
        if let before = descents, let after = sys.treeDescents {
            m.extra["treeDescentsPerOp"] = Double(after - before) / n
        }
    }
}
