import Engine

/// The keys and rows of a `Results` over a whole class (unsorted, filtered in place or not),
/// a batch of clusters at a time, for `for … in`: an iteration makes no array of every key,
/// and one that stops early reads no further.
///
/// It reads the version its context read when it began. When that takes more than one batch
/// the version is pinned, so that if the loop body moves the context (a refresh), the rest of
/// the keys come from that version, without rows: an iteration walks the keys taken when it
/// starts, as one over keys made up front did. Only in a read transaction, whose rows stay put.
@usableFromInline final class ResultsStream {
    private let ctx: ObjectContext
    private let className: String
    private let predicate: Predicate?
    private let stamp: Int
    private let tables: ObjectTables
    private let c: ClassSchema
    private let test: QueryEvaluator.RowTest
    /// The cluster the next batch starts at; nil past the last.
    private var from: Int64? = .min
    private var pinned: PinnedVersion?
    /// Objects per batch, at least: ~16 KiB of keys and 32 KiB of rows, kept from batch to batch.
    static let batch = 1024

    /// Nil when the results cannot stream (inside a write or a migration, a file not yet
    /// converted, a predicate that does not test rows in place or that an index answers).
    init?(ctx: ObjectContext, className: String, predicate: Predicate?) {
        guard (try? ctx.readTransaction()) != nil, let t = try? ctx.tables(), t.tx.lendsStableBytes,
            let c = try? t.cls(className), !t.plan(c).legacyRows
        else { return nil }
        let ev = QueryEvaluator(t: t)
        if let predicate, ev.usesIndex(predicate, c) { return nil }
        let test = QueryEvaluator.RowTest(ev, c, predicate)
        guard predicate == nil || test.compiled?.flat != nil else { return nil }
        self.ctx = ctx
        self.className = className
        self.predicate = predicate
        stamp = ctx.stamp
        tables = t
        self.c = c
        self.test = test
    }

    /// The next batch into `keys` and `rows` (emptied first); false when none is left.
    func fill(_ keys: inout [Int64], _ rows: inout [UnsafeRawBufferPointer]?) -> Bool {
        guard let start = from else { return false }
        keys.removeAll(keepingCapacity: true)
        do {
            if ctx.stamp == stamp {
                if rows == nil { rows = [] } else { rows!.removeAll(keepingCapacity: true) }
                from = try QueryEvaluator(t: tables).matches(
                    c, test, from: start, atLeast: ResultsStream.batch, keys: &keys, rows: &rows)
                if from != nil, pinned == nil { pinned = try ctx.readTransaction()?.pinVersion() }
            } else {
                // The context moved on: every key left, from the version the iteration began on.
                rows = nil
                guard let pinned else { throw ObjectError.invalidated }
                defer { self.pinned = nil }
                let store = ctx.store, className = className, predicate = predicate, path = ctx.path
                from = try store.database.read(pinned) { tx in
                    let t = ObjectTables(tx: tx, schema: try store.schema(tx), path: path)
                    let ev = QueryEvaluator(t: t), c = try t.cls(className)
                    var none: [UnsafeRawBufferPointer]?
                    return try ev.matches(
                        c, QueryEvaluator.RowTest(ev, c, predicate), from: start, atLeast: .max, keys: &keys,
                        rows: &none)
                }
            }
        } catch {
            from = nil
            pinned = nil
            keys = ctx.unreadable([], "query on \(className)", error)
        }
        if from == nil { pinned = nil }
        return !keys.isEmpty
    }
}
