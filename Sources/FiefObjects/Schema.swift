/// What a property holds. Integers keep their declared width so they read back as the
/// Swift type they were written from; rows store all of them in 8 bytes.
public enum PropertyKind: String, Codable, Sendable {
    case bool, int, int8, int16, int32, int64, float, double, string, data, bytes, date, uuid
    /// A to-one link (or, in a list, a link) to `Property.target`.
    case object
    /// Computed from the backlinks of `Property.target`'s `originProperty`; never stored in rows.
    case linkingObjects

    var isInteger: Bool {
        switch self {
        case .int, .int8, .int16, .int32, .int64: return true
        default: return false
        }
    }
    var isNumeric: Bool { isInteger || self == .float || self == .double }
    /// Bytes in a row's fixed area (strings and data: offset and length of the var area).
    var fixedSize: Int {
        switch self {
        case .bool: return 1
        case .float: return 4
        case .uuid: return 16
        case .linkingObjects: return 0
        default: return 8
        }
    }
    var isVariableLength: Bool {
        switch self {
        case .string, .data, .bytes: return true
        default: return false
        }
    }
    var canBePrimaryKey: Bool { isInteger || self == .string || self == .uuid }
    var canBeIndexed: Bool { isInteger || [.bool, .string, .date, .uuid].contains(self) }
}

public enum DeleteRule: String, Codable, Sendable { case nullify, cascade }

/// One property as stored in `fief/schema`. `pid` is never reused within a class.
public struct Property: Codable, Equatable, Sendable {
    public var name: String
    public var pid: UInt32
    public var kind: PropertyKind
    public var optional: Bool
    public var list: Bool
    public var primaryKey: Bool
    public var indexed: Bool
    public var target: String?
    public var originProperty: String?
    public var onDelete: DeleteRule

    public init(
        name: String, pid: UInt32 = 0, kind: PropertyKind, optional: Bool = false, list: Bool = false,
        primaryKey: Bool = false, indexed: Bool = false, target: String? = nil,
        originProperty: String? = nil, onDelete: DeleteRule = .nullify
    ) {
        self.name = name; self.pid = pid; self.kind = kind; self.optional = optional; self.list = list
        self.primaryKey = primaryKey; self.indexed = indexed; self.target = target
        self.originProperty = originProperty; self.onDelete = onDelete
    }

    /// Stored in the row (linking objects are not).
    var isStored: Bool { kind != .linkingObjects }
    /// Has entries in `fief/x/<cid>/<pid>` (a primary key of string or UUID type is a unique index).
    var hasIndex: Bool { !list && (indexed || (primaryKey && !kind.isInteger)) }
    var isLink: Bool { kind == .object }

    /// How the property reads in a schema listing and a migration's change list.
    public var typeName: String {
        var t: String
        switch kind {
        case .object: t = target ?? "?"
        case .linkingObjects: return "LinkingObjects<\(target ?? "?")>(\(originProperty ?? "?"))"
        default: t = kind.rawValue
        }
        if optional { t += "?" }
        if list { t = "List<\(t)>" }
        return t
    }

    /// Same stored shape: values written under one can be read under the other.
    func sameShape(_ o: Property) -> Bool {
        kind == o.kind && optional == o.optional && list == o.list && target == o.target
            && originProperty == o.originProperty
    }
}

/// One class as stored in `fief/schema`: its properties and every row layout it ever had.
public struct ClassSchema: Codable, Equatable, Sendable {
    public var name: String
    public var cid: UInt32
    public var properties: [Property]
    /// Row layouts by id: the stored pids in row order. Rows carry their layout id, so a
    /// property added or dropped needs a new layout, not a rewrite of every row.
    public var layouts: [[UInt32]]
    public var nextPid: UInt32
    /// Properties dropped by migrations whose values old rows still hold (their layouts name them).
    public var retired: [Property] = []

    /// True when `other` is a copy of this value, its arrays the same storage: equal without
    /// comparing each property (every write's first plan of a class compared the whole schema,
    /// a few thousand instructions of a one-object write). False says nothing either way.
    func sharesStorage(with other: ClassSchema) -> Bool {
        func same<E>(_ a: [E], _ b: [E]) -> Bool {
            a.withUnsafeBufferPointer { x in
                b.withUnsafeBufferPointer { y in x.baseAddress == y.baseAddress && x.count == y.count }
            }
        }
        return cid == other.cid && nextPid == other.nextPid && name == other.name && same(properties, other.properties)
            && same(layouts, other.layouts) && same(retired, other.retired)
    }

    public var primaryKey: Property? { properties.first { $0.primaryKey } }
    public func property(_ name: String) -> Property? { properties.first { $0.name == name } }
    func property(pid: UInt32) -> Property? { properties.first { $0.pid == pid } }
    func anyProperty(pid: UInt32) -> Property? { property(pid: pid) ?? retired.first { $0.pid == pid } }
    var currentLayout: UInt32 { UInt32(layouts.count - 1) }
    var storedProperties: [Property] { properties.filter { $0.isStored } }

    /// Gives new properties pids and adds a layout when the stored set changed.
    mutating func assignPids() {
        for i in properties.indices where properties[i].pid == 0 {
            properties[i].pid = nextPid
            nextPid += 1
        }
        let pids = storedProperties.map(\.pid)
        if layouts.last != pids { layouts.append(pids) }
    }
}

/// The whole stored schema of one version, by class name.
struct StoredSchema: Equatable {
    var classes: [String: ClassSchema] = [:] { didSet { layouts = ClassLayouts() } }
    var version: UInt64 = 0
    var nextCid: UInt32 = 1
    /// The object layer's format the file's objects are stored in (`SchemaStore.format`).
    var format: Int64 = SchemaStore.format { didSet { layouts = ClassLayouts() } }
    /// Each class's layout, built once for this schema (not part of its value).
    private(set) var layouts = ClassLayouts()

    static func == (a: StoredSchema, b: StoredSchema) -> Bool {
        a.classes == b.classes && a.version == b.version && a.nextCid == b.nextCid && a.format == b.format
    }

    func byCid(_ cid: UInt32) -> ClassSchema? { classes.values.first { $0.cid == cid } }
}
