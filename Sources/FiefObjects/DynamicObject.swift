import Engine

/// An object of a class known only by name (migrations, tools): read and write its
/// properties with `obj["name"]`.
public final class DynamicObject: Object {
    public required init() { super.init() }

    init(ctx: ObjectContext, className: String, key: Int64) {
        super.init()
        manage(ManagedRef(ctx: ctx, className: className, key: key))
    }

    public var className: String { _ref?.className ?? "" }
    public var key: Int64 { _ref?.key ?? 0 }
}

/// Realm's name for the objects a migration hands out.
public typealias MigrationObject = DynamicObject

/// Moves a value to another thread: it pins the version it was made at, and `resolve` on a
/// context of the same store gives the object there (nil if it was deleted since).
public final class ThreadSafeReference<T: Object>: @unchecked Sendable {
    private let className: String
    private let key: Int64
    private var pinned: PinnedRef?
    private var resolved = false

    final class PinnedRef: @unchecked Sendable {
        let version: Engine.PinnedVersion
        init(_ v: Engine.PinnedVersion) { version = v }
    }

    public init(to obj: T) throws {
        guard let r = obj._ref else { throw ObjectError.objectDeleted(className: "\(T.self) (unmanaged)") }
        className = r.className
        key = r.key
        pinned = PinnedRef(try r.ctx.store.database.pin())
    }

    /// The object in `ctx`'s version, or nil when that version no longer has it. Once only.
    public func resolve(in ctx: ObjectContext) throws -> T? {
        guard !resolved else { throw ObjectError.referenceAlreadyResolved }
        resolved = true
        defer { pinned?.version.release(); pinned = nil }
        // A context behind the reference's version moves up to it first (as Realm does).
        if let v = pinned?.version.version, ctx.version < v { try ctx.refresh() }
        let t = try ctx.tables()
        guard try t.exists(try t.cls(className), key) else { return nil }
        return ctx.accessor(T.self, key: key)
    }
}
