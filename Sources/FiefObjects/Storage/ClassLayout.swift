/// What the row operations of one class need that follows from its stored schema alone: the
/// stored, indexed and link properties, the row codec and the table names. Built once per
/// class and stored schema (`ClassLayouts`), not once per transaction: a one-object write
/// spent a tenth of its time building these again.
final class ClassLayout: @unchecked Sendable {
    let schema: ClassSchema
    let format: Int64
    let name: String
    let cid: UInt32
    let stored: [Property]
    let indexed: [Property]
    let links: [Property]
    let lists: [Property]
    /// Whether any list holds values, not links (their elements go in `fief/l`, or in the row).
    let hasValueLists: Bool
    let varLength: [Property]
    /// The integer properties a cluster summary bounds (`ClusterSummary`).
    let summarized: [Property]
    /// What a deletion reads of the row: indexed properties (their entries go) and to-one
    /// links (their targets' backlinks go), not every value (strings made, out-of-row
    /// values fetched, for nothing).
    let deletionReads: [Property]
    let byName: [String: Property]
    let primaryKey: Property?
    /// Whether the class's primary key is an integer (the object's key itself).
    let primaryKeyIsInteger: Bool
    let codec: RowCodec
    /// `fief/c/<cid>`, or `fief/o/<cid>` in a format-1 file (read only, until converted).
    let objectsTable: String
    let outOfRowTable: String
    let backlinksTable: String
    let listsTable: String
    let legacyRows: Bool
    /// Index entries end in the compact key (format 3, `KeyBytes.indexEntry`).
    let compactIndexKeys: Bool
    /// `fief/x/<cid>/<pid>` of each property in `indexed`, in its order.
    let indexTables: [String]
    /// Each stored property's pid, kind and listness, in `stored`'s order: what a row's
    /// values are checked against, without a copy of a `Property` (its strings retained).
    let storedKinds: [StoredKind]

    struct StoredKind {
        let pid: UInt32
        let kind: PropertyKind
        let list: Bool
    }

    init(_ c: ClassSchema, format: Int64) {
        schema = c
        self.format = format
        name = c.name
        cid = c.cid
        stored = c.storedProperties
        indexed = c.properties.filter(\.hasIndex)
        links = stored.filter(\.isLink)
        lists = stored.filter(\.list)
        hasValueLists = lists.contains { !$0.isLink }
        varLength = stored.filter { $0.kind.isVariableLength && !$0.list }
        summarized = stored.filter { $0.kind.isInteger && !$0.list }
        deletionReads = stored.filter { $0.hasIndex || ($0.isLink && !$0.list) }
        byName = Dictionary(uniqueKeysWithValues: c.properties.map { ($0.name, $0) })
        primaryKey = c.primaryKey
        primaryKeyIsInteger = c.primaryKey?.kind.isInteger == true
        codec = RowCodec(c)
        legacyRows = format < 2
        compactIndexKeys = format >= 3
        objectsTable = legacyRows ? Tables.objects(c.cid) : Tables.clusters(c.cid)
        outOfRowTable = Tables.outOfRow(c.cid)
        backlinksTable = Tables.backlinks(c.cid)
        listsTable = Tables.lists(c.cid)
        indexTables = indexed.map { Tables.index(c.cid, $0.pid) }
        storedKinds = stored.map { StoredKind(pid: $0.pid, kind: $0.kind, list: $0.list) }
    }

    /// A model's fields in declaration order (as `ModelInfo.unmanagedValues` gives them),
    /// each as the stored property it fills (nil: not stored, as linking objects), and
    /// which field is the primary key.
    struct Fields {
        let model: ModelInfo
        let properties: [Property?]
        /// `properties`' pids: what an insert reads of each, without copying a `Property`.
        let pids: [UInt32?]
        let primaryKey: Int?
    }
    /// Kept for the model last asked about (held, so its identity is not reused).
    private let lastFields = Locked<Fields?>(nil)

    func fields(of info: ModelInfo) -> Fields {
        if let f = lastFields.withLock({ $0 }), f.model === info { return f }
        let byName = Dictionary(stored.map { ($0.name, $0) }, uniquingKeysWith: { a, _ in a })
        let props = info.properties.map { byName[$0.name] }
        let f = Fields(
            model: info, properties: props, pids: props.map { $0?.pid },
            primaryKey: props.firstIndex { $0?.primaryKey == true })
        lastFields.withLock { $0 = f }
        return f
    }
}

/// The layouts of one stored schema's classes, shared by the transactions that read under
/// it (the store caches the schema of the newest stamp). A `StoredSchema` that changes gets
/// a new, empty set.
final class ClassLayouts: Sendable {
    private let byCid = Locked<[UInt32: ClassLayout]>([:])

    /// The layout of `c`, built on first use. A class schema other than the one the layout
    /// was built from (a migration's, not yet stored) gets a layout of its own, not kept.
    func layout(of c: ClassSchema, format: Int64) -> ClassLayout {
        if let l = byCid.withLock({ $0[c.cid] }), l.format == format, l.schema.sharesStorage(with: c) || l.schema == c {
            return l
        }
        let l = ClassLayout(c, format: format)
        byCid.withLock { $0[c.cid] = l }
        return l
    }
}
