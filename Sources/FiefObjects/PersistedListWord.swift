/// Reads the `@Persisted` wrapper of a `List` in place, without the metadata of
/// `Persisted<List<E>>`: looked up at run time for each list of each object added, in code
/// generic over `E`, it cost two cache lookups of a few hundred instructions.
///
/// Every `Persisted<List<E>>` has one layout: its `Storage` is an enum whose one payload is a
/// class reference, so the enum is that reference's word, and its two other cases are words no
/// object has. Those words, and where the storage lies, are learned from one concrete
/// instantiation. Where the layout is not so (another compiler's), the reader says so and
/// the caller takes the generic path.
enum PersistedListWord {
    /// What a wrapper holds: its list, or one of the cases without one.
    enum Content {
        case list(UnsafeRawPointer)
        case unmanagedDefault
        case probe
    }

    private typealias Sample = Persisted<List<Object>>

    private struct Layout {
        let storageOffset: Int
        let unmanagedDefault: UInt
        let probe: UInt
    }

    private static let layout: Layout? = {
        guard MemoryLayout<Sample.Storage>.size == MemoryLayout<UInt>.size,
            let offset = MemoryLayout<Sample>.offset(of: \Sample.storage)
        else { return nil }
        func word(_ s: Sample.Storage) -> UInt { withUnsafeBytes(of: s) { $0.load(as: UInt.self) } }
        let d = word(.unmanagedDefault), p = word(.probe)
        // An object's address is never below a page: the empty cases must lie there.
        guard d != p, d < 4096, p < 4096 else { return nil }
        return Layout(storageOffset: offset, unmanagedDefault: d, probe: p)
    }()

    /// The content of the `Persisted<List<_>>` at `wrapper`; nil when the layout is unknown.
    static func content(at wrapper: UnsafeRawPointer) -> Content? {
        guard let l = layout else { return nil }
        let w = (wrapper + l.storageOffset).loadUnaligned(as: UInt.self)
        if w == l.unmanagedDefault { return .unmanagedDefault }
        if w == l.probe { return .probe }
        guard let p = UnsafeRawPointer(bitPattern: w) else { return nil }
        return .list(p)
    }
}
