import Foundation

/// A lazy, chainable query over one class: nothing runs until it is read, and each read shows
/// the context's current version, including the context's own uncommitted writes. Iteration
/// (`for … in`) walks the keys taken when it starts.
public final class Results<T: Object>: RandomAccessCollection {
    let ctx: ObjectContext
    let className: String
    let source: ResultsSource
    let predicate: Predicate?
    let sorts: [SortDescriptor]
    let limitCount: Int?
    private var cache: (stamp: Int, keys: [Int64])?
    /// Each key's row, when the keys came from one scan of a read transaction's snapshot (valid
    /// while the context's stamp is the cache's): accessors made from them start positioned.
    private var cachedRows: [UnsafeRawBufferPointer]?

    init(
        ctx: ObjectContext, className: String, source: ResultsSource, predicate: Predicate? = nil,
        sorts: [SortDescriptor] = [], limit: Int? = nil
    ) {
        self.ctx = ctx
        self.className = className
        self.source = source
        self.predicate = predicate
        self.sorts = sorts
        self.limitCount = limit
    }

    private func with(predicate: Predicate? = nil, sorts: [SortDescriptor]? = nil, limit: Int? = nil) -> Results<T> {
        var p = self.predicate
        if let predicate { p = p.map { .and([$0, predicate]) } ?? predicate }
        return Results(
            ctx: ctx, className: className, source: source, predicate: p,
            sorts: sorts ?? self.sorts, limit: limit ?? limitCount)
    }

    /// The matching keys, in result order (throws on a damaged file).
    public func keys() throws -> [Int64] {
        if let c = cache, c.stamp == ctx.stamp { return c.keys }
        var rows: [UnsafeRawBufferPointer]?
        let k = try QueryEvaluator(t: try ctx.tables()).keys(
            className, source: source, predicate: predicate, sorts: sorts,
            limit: limitCount, rows: &rows)
        cache = (ctx.stamp, k)
        cachedRows = rows
        return k
    }

    /// The row of result `i`, when the cache holds rows valid now.
    private func row(_ i: Int) -> UnsafeRawBufferPointer? {
        guard let rows = cachedRows, let c = cache, c.stamp == ctx.stamp, i < rows.count else { return nil }
        return rows[i]
    }

    /// The keys after the context moved on, from the keys before and what changed: updated in
    /// place when that is exact (see `QueryEvaluator.updatedKeys`), else by running the query.
    func keys(updating old: [Int64], _ changed: ChangedObjects) throws -> [Int64] {
        let t = try ctx.tables()
        guard
            let k = try QueryEvaluator(t: t).updatedKeys(
                old, className, source: source, predicate: predicate,
                sorts: sorts, limit: limitCount, changed: changed)
        else { return try keys() }
        cache = (ctx.stamp, k)
        cachedRows = nil
        return k
    }

    private var fetched: [Int64] {
        do { return try keys() } catch { return ctx.unreadable([], "query on \(className)", error) }
    }

    public var startIndex: Int { 0 }
    public var endIndex: Int { fetched.count }
    // No range checks against `endIndex` on each step: on a damaged file the keys may fail
    // after the count did, and inside `throwingReads` the scope reports that, not a trap.
    public func index(after i: Int) -> Int { i + 1 }
    public func index(before i: Int) -> Int { i - 1 }

    /// The number of results, counted without making their keys where that is cheaper (a
    /// class's objects, filtered or not; lists and backlinks make, and keep, their keys).
    /// Throws on a damaged file.
    public func countObjects() throws -> Int {
        if let c = cache, c.stamp == ctx.stamp { return c.keys.count }
        guard case .all = source else { return try keys().count }
        return try QueryEvaluator(t: try ctx.tables()).count(
            className, source: source, predicate: predicate, limit: limitCount)
    }

    /// As `countObjects()`; a damaged file traps here, or is thrown by `throwingReads`.
    public var count: Int {
        do { return try countObjects() } catch { return ctx.unreadable(0, "count of \(className)", error) }
    }
    public subscript(i: Int) -> T {
        let k = fetched
        // Inside `throwingReads`, after a failed read, `count` and the keys may disagree (the
        // engine's count of a class survives a damaged leaf): a placeholder object, whose reads
        // fail too, rather than a trap the scope promised not to make.
        if ctx.failedRead != nil && !(i >= 0 && i < k.count) {
            return ctx.accessor(T.self, key: Int64.min, className: className)
        }
        precondition(i >= 0 && i < k.count, "Results index \(i) out of range (count \(k.count))")
        return ctx.accessor(T.self, key: k[i], className: className, row: row(i))
    }

    /// Inlinable, so a loop in the app's module runs `next` specialized for its model: generic,
    /// each object's reuse test and hand-over went through the runtime's value witnesses.
    public struct Iterator: IteratorProtocol {
        @usableFromInline let ctx: ObjectContext
        @usableFromInline var keys: [Int64]
        @usableFromInline var rows: [UnsafeRawBufferPointer]?
        @usableFromInline let stamp: Int
        /// The context's row stamp when the iteration began (`ObjectContext.rowStamp`), what
        /// each handed-out row is valid at while `stamp` holds: asked of the context once, not
        /// per object.
        @usableFromInline let rowStamp: Int
        @usableFromInline let className: String
        @usableFromInline var i = 0
        /// Where the next keys come from, when the iteration streams (`ResultsStream`).
        @usableFromInline var stream: ResultsStream?
        /// The accessor handed out last, while the class's accessors may be reused: if the loop
        /// body kept no reference to it, it becomes the next object's (an allocation, an
        /// initialisation and a deinitialisation fewer per object, the bulk of an enumeration).
        @usableFromInline var last: T?
        /// Whether they may (`ModelInfo.accessorsReusable`), learned at the second object, so
        /// an iteration of one object (a link's owner) pays no lookup.
        @usableFromInline var reuses: Bool?

        @inlinable
        init(ctx: ObjectContext, keys: [Int64], rows: [UnsafeRawBufferPointer]?, className: String) {
            self.ctx = ctx
            self.keys = keys
            self.rows = rows
            self.stamp = ctx.stamp
            self.rowStamp = ctx.rowStamp
            self.className = className
        }

        /// An iteration that takes its keys from `stream`, its first batch taken now.
        init(ctx: ObjectContext, stream: ResultsStream, className: String) {
            self.init(ctx: ctx, keys: [], rows: nil, className: className)
            self.stream = stream
            if !stream.fill(&keys, &rows) { self.stream = nil }
        }

        @inlinable
        public mutating func next() -> T? {
            if i >= keys.count {
                guard refill() else { return nil }
            }
            defer { i += 1 }
            // Rows are used only while the context has not moved since the iteration began.
            let row = stamp == ctx.stamp ? rows?[i] : nil
            if last != nil {
                if reuses == nil { reuses = Iterator.accessorsReusable() }
                if reuses == true, isKnownUniquelyReferenced(&last) {
                    last.unsafelyUnwrapped.repoint(key: keys[i], row: row, at: rowStamp)
                    return last
                }
            }
            return fresh(row)
        }

        /// The next batch of keys from the stream; false when it has none left.
        @usableFromInline
        mutating func refill() -> Bool {
            guard let s = stream, s.fill(&keys, &rows) else {
                stream = nil
                return false
            }
            i = 0
            return true
        }

        /// Whether the model's accessors may be reused (`ModelInfo.accessorsReusable`).
        @usableFromInline
        static func accessorsReusable() -> Bool { ModelInfo.of(T.self).accessorsReusable }

        /// A new accessor for the key at `i`, kept for reuse when the class allows it.
        @usableFromInline
        mutating func fresh(_ row: UnsafeRawBufferPointer?) -> T {
            let o = ctx.accessor(T.self, key: keys[i], className: className, row: row)
            last = reuses == false ? nil : o
            return o
        }
    }

    /// Over a whole class, unsorted and unlimited, outside a write, the keys stream a batch of
    /// clusters at a time (`ResultsStream`) unless these results already hold them.
    public func makeIterator() -> Iterator {
        if cache?.stamp != ctx.stamp, case .all = source, sorts.isEmpty, limitCount == nil,
            let stream = ResultsStream(ctx: ctx, className: className, predicate: predicate)
        {
            return Iterator(ctx: ctx, stream: stream, className: className)
        }
        let k = fetched
        var rows = cache?.stamp == ctx.stamp ? cachedRows : nil
        // A list's objects or an object's linking objects: their rows, found one by one here,
        // so each object's first read needs no descent of its own.
        if rows == nil, predicate == nil, sorts.isEmpty, source.isLinked, cache?.stamp == ctx.stamp {
            rows = ctx.stableRows(keys: k, className: className)
            cachedRows = rows
        }
        return Iterator(ctx: ctx, keys: k, rows: rows?.count == k.count ? rows : nil, className: className)
    }

    /// The objects now, as an array (throws instead of trapping on a damaged file).
    public func objects() throws -> [T] {
        let k = try keys()
        return k.indices.map { ctx.accessor(T.self, key: k[$0], className: className, row: row($0)) }
    }

    // MARK: Chaining

    /// Narrows with an NSPredicate-format query: `filter("age > %@ AND name BEGINSWITH[c] %@", 20, "a")`.
    public func filter(_ format: String, _ args: Any...) throws -> Results<T> { try filter(format, arguments: args) }

    public func filter(_ format: String, arguments: [Any]) throws -> Results<T> {
        let p = try PredicateParser.parse(format, arguments)
        try QueryEvaluator(t: try ctx.tables()).validate(p, try ctx.tables().cls(className))
        return with(predicate: p)
    }

    /// Narrows with a predicate built elsewhere (the CLI, tests).
    public func filter(_ p: Predicate) throws -> Results<T> {
        try QueryEvaluator(t: try ctx.tables()).validate(p, try ctx.tables().cls(className))
        return with(predicate: p)
    }

    /// Narrows with a typed query: `where { $0.age > 5 && $0.name.starts(with: "A") }`.
    public func `where`(_ q: (Query<T>) -> Query<Bool>) -> Results<T> {
        let p = q(Query<T>(path: [])).predicate
        do {
            try QueryEvaluator(t: try ctx.tables()).validate(p, try ctx.tables().cls(className))
        } catch {
            preconditionFailure("typed query on \(className): \(error)")
        }
        return with(predicate: p)
    }

    public func sorted(byKeyPath keyPath: String, ascending: Bool = true) -> Results<T> {
        sorted(by: [SortDescriptor(keyPath: keyPath, ascending: ascending)])
    }

    /// Sorted by several keys; ties keep their previous order (stable).
    public func sorted(by descriptors: [SortDescriptor]) -> Results<T> { with(sorts: descriptors + sorts) }

    public func sorted<V>(by keyPath: KeyPath<T, V>, ascending: Bool = true) -> Results<T> {
        guard let name = ModelInfo.of(T.self).propertyName(reading: keyPath) else {
            preconditionFailure("key path of \(T.self) names no @Persisted property")
        }
        return sorted(byKeyPath: name, ascending: ascending)
    }

    /// At most `n` results (after sorting: the top n); a negative `n` is taken as 0, as SQL's
    /// `LIMIT` takes no rows for it, sorted or not.
    public func limit(_ n: Int) -> Results<T> { with(limit: Swift.min(Swift.max(n, 0), limitCount ?? .max)) }

    // MARK: Aggregates

    /// The non-null values at `property` (a.b follows links) of every result. A property the
    /// class lacks gives none, as Realm's aggregates of an unknown name; a damaged file is a
    /// failed read (a trap, or thrown by `throwingReads`), never a silent zero.
    private func numbers(_ property: String) -> [ObjectValue] {
        do {
            let t = try ctx.tables()
            let c = try t.cls(className)
            let ev = QueryEvaluator(t: t)
            let path = property.split(separator: ".").map(String.init)
            let cached = cache.map { $0.stamp == ctx.stamp } ?? false
            if case .all = source, limitCount == nil, !cached {
                return try ev.values(c, path[...], matching: predicate).filter { !$0.isNull }
            }
            return try keys().flatMap { try ev.walk(c, $0, path[...]) }.filter { !$0.isNull }
        } catch is QueryError {
            return []
        } catch {
            return ctx.unreadable([], "aggregate of \(className).\(property)", error)
        }
    }

    public func min<V: _PersistableScalar>(ofProperty p: String) -> V? {
        numbers(p).min { ObjectValue.order($0, $1) < 0 }.flatMap { V(_stored: $0) }
    }

    public func max<V: _PersistableScalar>(ofProperty p: String) -> V? {
        numbers(p).max { ObjectValue.order($0, $1) < 0 }.flatMap { V(_stored: $0) }
    }

    public func sum(ofProperty p: String) -> Double { numbers(p).reduce(0) { $0 + ($1.numeric ?? 0) } }

    public func average(ofProperty p: String) -> Double? {
        let v = numbers(p)
        return v.isEmpty ? nil : v.reduce(0) { $0 + ($1.numeric ?? 0) } / Double(v.count)
    }
}
