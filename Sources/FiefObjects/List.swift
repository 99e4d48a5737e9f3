import Foundation

/// Marks `List` for `@Persisted(onDelete:)`.
public protocol _ListProtocol: _Persistable {}

/// Type-erased view of a list's elements, for dynamic creation.
protocol ListBase { var anyElements: [Any] { get } }

/// An ordered to-many property: `@Persisted var dogs: List<Dog>` or `List<Int>`. Unmanaged, it
/// holds its elements; managed, every read and change goes to the stored list.
public final class List<Element: _Persistable>: _ListProtocol, RandomAccessCollection, ListBase {
    /// An unmanaged list's elements. Inlinable code reads it (`append`).
    @exclusivity(unchecked) @usableFromInline var items: [Element]
    @exclusivity(unchecked) @usableFromInline private(set) var ref: ManagedRef?
    /// The property as the context read it: a reference, where a `Property` was copied (its
    /// strings retained) at every read of the list.
    private var access: PropertyAccess?
    var property: Property? { access?.property }
    private var cache: (stamp: Int, values: [ObjectValue])?
    /// The owner's row and the context's row stamp when the list was read from the owner: a
    /// read at that stamp needs no lookup of the owner, nor of a list kept in its row.
    private var ownerRow: UnsafeRawBufferPointer?
    private var ownerRowStamp = -1

    public init() { items = [] }
    public init<S: Sequence>(_ s: S) where S.Element == Element { items = Array(s) }

    private init(ref: ManagedRef, access: PropertyAccess) {
        items = []
        self.ref = ref
        self.access = access
    }

    private var stored: [ObjectValue] {
        guard let ref else { return [] }
        // The cache first: binding the property copied its strings on every read (each step
        // of a for-in asks for the count).
        if let c = cache, c.stamp == ref.ctx.stamp { return c.values }
        guard let access else { return [] }
        let v = ref.ctx.readList(
            ref, pid: access.property.pid, name: access.property.name,
            ownerRow: ownerRowStamp == ref.ctx.rowStamp ? ownerRow : nil)
        // A placeholder from a failed read (inside `throwingReads`) is never kept as the list.
        if ref.ctx.failedRead == nil { cache = (ref.ctx.stamp, v) }
        return v
    }

    public var startIndex: Int { 0 }
    public var endIndex: Int { ref == nil ? items.count : stored.count }
    public var isManaged: Bool { ref != nil }

    public subscript(i: Int) -> Element {
        get {
            guard let ref else { return items[i] }
            let s = stored
            precondition(i >= 0 && i < s.count, "List index \(i) out of range (count \(s.count))")
            // Through the list's target class: no lookup of the element type's model name.
            guard let target = access?.property.target else { return Element._fromStored(s[i], ref.ctx) }
            return Element._fromStored(s[i], ref.ctx, className: target, row: nil)
        }
        set { replace(index: i, with: newValue) }
    }

    var anyElements: [Any] { Array(self) }

    /// A managed list's elements as they were when the iteration began. A list of links hands
    /// out accessors that hold their rows, found in one pass, so the first read of each
    /// object (a dog's name) needs no descent; Collection's iterator asked for the count and
    /// made a rowless accessor at every step.
    public struct Iterator: IteratorProtocol {
        private var items: IndexingIterator<[Element]>
        private let values: [ObjectValue]
        private let ctx: ObjectContext?
        private let target: String?
        private let rows: [UnsafeRawBufferPointer]?
        private let stamp: Int
        private var i = 0

        fileprivate init(items: [Element]) {
            self.items = items.makeIterator()
            values = []
            ctx = nil
            target = nil
            rows = nil
            stamp = 0
        }

        fileprivate init(values: [ObjectValue], ctx: ObjectContext, target: String?) {
            items = [].makeIterator()
            self.values = values
            self.ctx = ctx
            self.target = target
            rows = target.flatMap { ctx.stableRows(links: values, className: $0) }
            stamp = ctx.stamp
        }

        public mutating func next() -> Element? {
            guard let ctx else { return items.next() }
            guard i < values.count else { return nil }
            defer { i += 1 }
            guard let target else { return Element._fromStored(values[i], ctx) }
            // Rows only while the context has not moved since the iteration began.
            let row = stamp == ctx.stamp ? rows?[i] : nil
            return Element._fromStored(values[i], ctx, className: target, row: row)
        }
    }

    public func makeIterator() -> Iterator {
        guard let ref, let access else { return Iterator(items: items) }
        return Iterator(values: stored, ctx: ref.ctx, target: access.property.target)
    }

    private func change(_ what: String, _ body: (inout [ObjectValue], ObjectContext) throws -> Void) {
        guard let ref, let property else { return }
        ref.ctx.guardedWrite(ref, property.name) {
            let t = try ref.ctx.writer(what)
            let c = try t.cls(ref.className)
            var v = try t.list(c, ref.key, property)
            try body(&v, ref.ctx)
            try t.setList(c, ref.key, property, v)
        }
    }

    private func stored(_ e: Element) throws -> ObjectValue {
        guard let ref else { return .null }
        return try ref.ctx.resolve(e._unmanaged, .error, try ref.ctx.writer("changing a list"))
    }

    /// Inlinable, so appending to an unmanaged list (building objects to add) is an array
    /// append specialized for the element type: through this generic class's own code, each
    /// element went through the value witnesses of an unknown type (about a thousand
    /// instructions per append).
    @inlinable
    public func append(_ e: Element) {
        guard ref != nil else { items.append(e); return }
        appendManaged(e)
    }

    @usableFromInline func appendManaged(_ e: Element) {
        change("List.append") { v, _ in v.append(try stored(e)) }
    }

    public func append<S: Sequence>(contentsOf s: S) where S.Element == Element {
        for e in s { append(e) }
    }

    /// Realm's spelling of `append(contentsOf:)`.
    public func append<S: Sequence>(objectsIn s: S) where S.Element == Element { append(contentsOf: s) }

    public func insert(_ e: Element, at i: Int) {
        guard ref != nil else { items.insert(e, at: i); return }
        change("List.insert") { v, _ in
            precondition(i >= 0 && i <= v.count, "List insert index \(i) out of range (count \(v.count))")
            v.insert(try stored(e), at: i)
        }
    }

    public func remove(at i: Int) {
        guard ref != nil else { items.remove(at: i); return }
        change("List.remove") { v, _ in
            precondition(i >= 0 && i < v.count, "List index \(i) out of range (count \(v.count))")
            v.remove(at: i)
        }
    }

    public func removeAll() {
        guard ref != nil else { items.removeAll(); return }
        change("List.removeAll") { v, _ in v.removeAll() }
    }

    public func move(from: Int, to: Int) {
        guard ref != nil else { let e = items.remove(at: from); items.insert(e, at: to); return }
        change("List.move") { v, _ in
            precondition(
                from >= 0 && from < v.count && to >= 0 && to < v.count,
                "List move \(from)->\(to) out of range (count \(v.count))")
            let e = v.remove(at: from)
            v.insert(e, at: to)
        }
    }

    public func replace(index i: Int, with e: Element) {
        guard ref != nil else { items[i] = e; return }
        change("List.replace") { v, _ in
            precondition(i >= 0 && i < v.count, "List index \(i) out of range (count \(v.count))")
            v[i] = try stored(e)
        }
    }

    public func swapAt(_ i: Int, _ j: Int) {
        guard ref != nil else { items.swapAt(i, j); return }
        change("List.swapAt") { v, _ in v.swapAt(i, j) }
    }

    // MARK: _Persistable

    public static var _fieldType: _FieldType {
        var t = Element._fieldType
        t.list = true
        t.typeName = "List<\(t.typeName)>"
        return t
    }
    public static func _defaultValue() -> List<Element> { List() }
    public static var _unmanagedDefault: _UnmanagedValue { .list([]) }
    /// The wrapper read as a word (`PersistedListWord`), not through `Persisted<Self>`.
    public static func _unmanaged(inWrapperAt wrapper: UnsafeRawPointer) -> _UnmanagedValue {
        switch PersistedListWord.content(at: wrapper) {
        case .list(let p): return Unmanaged<List<Element>>.fromOpaque(p).takeUnretainedValue()._unmanaged
        case .unmanagedDefault: return _unmanagedDefault
        case .probe: return .computed
        case nil: return wrapper.assumingMemoryBound(to: Persisted<Self>.self).pointee.unmanagedValue
        }
    }
    public static func _fromStored(_ v: ObjectValue, _ ctx: ObjectContext) -> List<Element> { List() }
    public static func _managedRead(_ obj: Object, _ ref: ManagedRef, _ p: PropertyAccess) -> List<Element> {
        let l = List(ref: ref, access: p)
        if let row = obj.row(at: ref.ctx.rowStamp) {
            l.ownerRow = row
            l.ownerRowStamp = ref.ctx.rowStamp
        }
        return l
    }
    /// A loop, not `map`: this code is generic over `Element`, and `map` instantiated the
    /// metadata of its arrays at run time for each list of each object added.
    public var _unmanaged: _UnmanagedValue {
        guard ref == nil else { return .list(map { $0._unmanaged }) }
        // A list of objects (the common list) is read as the class references it holds: each
        // element through the generic witnesses was a value-witness copy and a witness call,
        // with a retain and release apiece, for every link of every object added.
        if Element.self is Object.Type { return .objects(unsafeBitCast(items, to: [Object].self)) }
        let items = items, n = items.count
        var out: [_UnmanagedValue] = []
        out.reserveCapacity(n)
        var i = 0
        while i < n {
            out.append(items[i]._unmanaged)
            i += 1
        }
        return .list(out)
    }
}

extension List where Element: Object {
    /// The list's objects matching a typed query, in list order.
    public func `where`(_ q: (Query<Element>) -> Query<Bool>) -> Results<Element> { asResults().where(q) }
    public func filter(_ format: String, _ args: Any...) throws -> Results<Element> {
        try asResults().filter(format, arguments: args)
    }
    public func sorted(byKeyPath k: String, ascending: Bool = true) -> Results<Element> {
        asResults().sorted(byKeyPath: k, ascending: ascending)
    }

    func asResults() -> Results<Element> {
        guard let ref, let property else { preconditionFailure("queries need a managed list") }
        return Results(
            ctx: ref.ctx, className: property.target ?? "", source: .list(ref.className, ref.key, property.name))
    }
}

/// Marks `LinkingObjects` for `@Persisted(originProperty:)`.
public protocol _LinkingObjectsProtocol: _Persistable {}

/// The object a `LinkingObjects` belongs to and the property its origins link through.
@usableFromInline
struct LinkSource {
    @usableFromInline let ctx: ObjectContext
    /// The origins' class.
    @usableFromInline let origin: String
    let target: String
    let key: Int64
    let property: String
}

/// The objects whose `originProperty` links to this one (computed from backlinks).
public final class LinkingObjects<Origin: Object>: _LinkingObjectsProtocol, RandomAccessCollection {
    @usableFromInline let link: LinkSource?
    /// Made when first asked for (a count, a query): an iteration does without.
    private(set) lazy var results: Results<Origin>? = link.map {
        Results(ctx: $0.ctx, className: $0.origin, source: .backlinks($0.target, $0.key, $0.property))
    }

    init(link: LinkSource?) { self.link = link }

    public var startIndex: Int { 0 }
    public var endIndex: Int { results?.count ?? 0 }
    public subscript(i: Int) -> Origin { results![i] }

    /// The origins found once, each with its row (Collection's iterator asked for the count at
    /// every step and made rowless accessors).
    public struct Iterator: IteratorProtocol {
        @usableFromInline var results: Results<Origin>.Iterator?
        @inlinable init(results: Results<Origin>.Iterator?) { self.results = results }
        @inlinable public mutating func next() -> Origin? { results?.next() }
    }

    /// Inlinable, and without a `Results`: made in code generic over `Origin`, the iterator
    /// looked up its metadata, and was copied and destroyed through it, for each object's
    /// linking objects iterated.
    @inlinable
    public func makeIterator() -> Iterator {
        guard let link else { return Iterator(results: nil) }
        guard let (keys, rows) = link.ctx.linkingIteration(link) else { return Iterator(results: resultsIterator()) }
        return Iterator(
            results: Results<Origin>.Iterator(ctx: link.ctx, keys: keys, rows: rows, className: link.origin))
    }

    /// The results' own iterator, which reports a failed read as every read of them does.
    @usableFromInline
    func resultsIterator() -> Results<Origin>.Iterator? { results?.makeIterator() }

    public func `where`(_ q: (Query<Origin>) -> Query<Bool>) -> Results<Origin> { managed.where(q) }
    public func filter(_ format: String, _ args: Any...) throws -> Results<Origin> {
        try managed.filter(format, arguments: args)
    }
    public func sorted(byKeyPath k: String, ascending: Bool = true) -> Results<Origin> {
        managed.sorted(byKeyPath: k, ascending: ascending)
    }

    private var managed: Results<Origin> {
        guard let results else {
            preconditionFailure("linking objects of an unmanaged object are empty and cannot be queried")
        }
        return results
    }

    public static var _fieldType: _FieldType {
        _FieldType(kind: .linkingObjects, target: Origin.self, typeName: "LinkingObjects<\(Origin.self)>")
    }
    public static func _defaultValue() -> LinkingObjects<Origin> { LinkingObjects(link: nil) }
    public static var _unmanagedDefault: _UnmanagedValue { .computed }
    /// Each wrapper keeps its declaration's origin property (`_Declared`).
    public typealias _Declared = String
    public static var _nothingDeclared: String { "" }
    public static func _originProperty(_ declared: String) -> String? { declared.isEmpty ? nil : declared }
    /// Computed whatever the wrapper holds, so the wrapper is not read: reading it looked up
    /// the metadata of `Persisted<LinkingObjects<Origin>>` per call, a thousand instructions
    /// per object added.
    public static func _unmanaged(inWrapperAt wrapper: UnsafeRawPointer) -> _UnmanagedValue { .computed }
    public static func _fromStored(_ v: ObjectValue, _ ctx: ObjectContext) -> LinkingObjects<Origin> {
        LinkingObjects(link: nil)
    }
    /// Never specialized: a copy specialized for one `Origin` (in the model's module) no longer
    /// had the class's metadata handed in, and looked it up in the runtime's cache to allocate,
    /// about 330 instructions per read.
    @_semantics("optimize.sil.specialize.generic.never")
    public static func _managedRead(_ obj: Object, _ ref: ManagedRef, _ p: PropertyAccess) -> LinkingObjects<Origin> {
        Self(
            link: LinkSource(
                ctx: ref.ctx, origin: p.property.target ?? ref.ctx.modelName(Origin.self), target: ref.className,
                key: ref.key, property: p.property.name))
    }
    public static func _managedWrite(_ value: LinkingObjects<Origin>, _ ref: ManagedRef, _ p: PropertyAccess) throws {}
    public var _unmanaged: _UnmanagedValue { .computed }
}
