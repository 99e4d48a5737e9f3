import Foundation

/// Where a managed object lives: its context, class and key. A value kept inside the object,
/// so an accessor is one allocation.
public struct ManagedRef {
    @usableFromInline let ctx: ObjectContext
    let className: String
    var key: Int64

    init(ctx: ObjectContext, className: String, key: Int64) {
        self.ctx = ctx
        self.className = className
        self.key = key
    }
}

/// The base class of every model: `final class Person: Object { @Persisted var name = "" }`.
/// Unmanaged until added to a context (values live in the object); managed afterwards (every
/// read and write goes to the context's version of the row).
open class Object: _PersistableWrapped {
    // An accessor belongs to one context, used by one thread: no run-time exclusivity checks.
    // Final, as the methods below that touch them: read through the class's table, every
    // access of an open class's property was a call (a getter's, a repoint's).
    // Set through `manage(_:)`, which keeps `_ctx` in step: an observer here made every
    // `repoint` of an iteration copy the whole reference (retaining its context and class name).
    @exclusivity(unchecked) @usableFromInline final private(set) var _ref: ManagedRef?
    /// `_ref`'s context, unretained (`_ref` keeps it alive): a getter borrows it, where a copy
    /// of `_ref` retained and released the context on every property read.
    @exclusivity(unchecked) @usableFromInline final var _ctx: Unmanaged<ObjectContext>?
    @usableFromInline final var _tracer: KeyPathTracer?
    /// The object's row bytes, valid while its context's stamp is `_rowStamp`: kept only when
    /// the context's transaction lends stable bytes (a read), so a property read after the
    /// first is a load, not a descent. Any move of the context changes its stamp.
    @exclusivity(unchecked) private final var _row = UnsafeRawBufferPointer(start: nil, count: 0)
    @exclusivity(unchecked) private final var _rowStamp = -1

    /// Makes the object an accessor of `ref`'s object.
    /// Taken, not copied: an object added made its reference, copied it in, then let the
    /// made one go (two retains and two releases of its context and class name).
    final func manage(_ ref: consuming ManagedRef) {
        _ctx = Unmanaged.passUnretained(ref.ctx)
        _ref = ref
    }

    final func remember(row: UnsafeRawBufferPointer, at stamp: Int) {
        _row = row
        _rowStamp = stamp
    }

    /// Makes this accessor one of another object of its class and context (its row, if any,
    /// valid at `stamp`): for an iteration that knows nobody else holds it.
    @usableFromInline final func repoint(key: Int64, row: UnsafeRawBufferPointer?, at stamp: Int) {
        _ref?.key = key
        _row = row ?? UnsafeRawBufferPointer(start: nil, count: 0)
        _rowStamp = row == nil ? -1 : stamp
    }

    /// The remembered row, when it is still valid at `stamp`.
    final func row(at stamp: Int) -> UnsafeRawBufferPointer? { _rowStamp == stamp ? _row : nil }

    public required init() {}

    /// Whether the object is stored (added to a context, or read from one).
    public var isManaged: Bool { _ref != nil }

    /// Whether the object was deleted (or its context cannot read it any more).
    public var isInvalidated: Bool {
        guard let r = _ref else { return false }
        return !r.ctx.exists(self, r)
    }

    /// The context the object belongs to, if it is managed.
    public var context: ObjectContext? { _ref?.ctx }

    /// Same stored object (same context, class and key), or the same instance when unmanaged.
    public func isSameObject(as other: Object?) -> Bool {
        guard let other else { return false }
        if self === other { return true }
        guard let a = _ref, let b = other._ref else { return false }
        return a.ctx === b.ctx && a.className == b.className && a.key == b.key
    }

    /// The object's key in its class (its integer primary key, when it has one).
    public var objectKey: Int64? { _ref?.key }

    /// A managed object's key, read in place (no copy of `_ref`, so no retain of its context).
    var objectKeyOfManaged: Int64 { _ref.unsafelyUnwrapped.key }

    // MARK: _Persistable (an Object is only ever stored behind an Optional link)

    public class var _fieldType: _FieldType { _FieldType(kind: .object, target: self, typeName: "\(self)") }
    public class func _defaultValue() -> Self { self.init() }
    public class func _fromStored(_ v: ObjectValue, _ ctx: ObjectContext) -> Self {
        guard case .link(let k) = v else { return self.init() }
        return ctx.accessor(self, key: k)
    }
    public class func _fromStored(
        _ v: ObjectValue, _ ctx: ObjectContext, className: String, row: UnsafeRawBufferPointer?
    ) -> Self {
        guard case .link(let k) = v else { return self.init() }
        return ctx.accessor(self, key: k, className: className, row: row)
    }
    public var _unmanaged: _UnmanagedValue { .object(self) }

    /// Dynamic access by property name (migrations, tools): nil for a null value.
    public subscript(name: String) -> Any? {
        get {
            guard let r = _ref else { return ModelInfo.of(type(of: self)).unmanagedValue(self, name) }
            return r.ctx.dynamicGet(r, name)
        }
        set {
            guard let r = _ref else { preconditionFailure("dynamic set on an unmanaged object; use its properties") }
            r.ctx.dynamicSet(r, name, newValue)
        }
    }
}

/// The options of one `@Persisted` property, as written at its declaration.
public struct PropertyOptions: Sendable {
    var primaryKey: Bool
    var indexed: Bool
    var onDelete: DeleteRule
    var originProperty: String?

    init(
        primaryKey: Bool = false, indexed: Bool = false, onDelete: DeleteRule = .nullify, originProperty: String? = nil
    ) {
        self.primaryKey = primaryKey
        self.indexed = indexed
        self.onDelete = onDelete
        self.originProperty = originProperty
    }
}

/// A wrapper's primary-key, index and delete-rule options in one byte: every object carries
/// one per property, accessors included, so they take a spare byte beside the value, where
/// the options as a struct (with the origin property only a `LinkingObjects` has) took 24
/// bytes per property (an object of 5 properties: 280 bytes against 177).
@usableFromInline
struct PropertyFlags: Sendable {
    @usableFromInline let rawValue: UInt8

    @inlinable
    init(primaryKey: Bool = false, indexed: Bool = false, onDelete: DeleteRule = .nullify) {
        // A switch, so a new delete rule cannot compile without its own bits.
        let rule: UInt8
        switch onDelete {
        case .nullify: rule = 0
        case .cascade: rule = 4
        }
        rawValue = (primaryKey ? 1 : 0) | (indexed ? 2 : 0) | rule
    }

    var primaryKey: Bool { rawValue & 1 != 0 }
    var indexed: Bool { rawValue & 2 != 0 }
    var onDelete: DeleteRule { rawValue & 4 != 0 ? .cascade : .nullify }
}

/// Reads and writes of a property go through here: to the stored row when the object is
/// managed, to the wrapper's own value when it is not.
@propertyWrapper
public struct Persisted<Value: _Persistable> {
    // The initializers are inlinable: every accessor runs one per property, and unspecialized
    // they looked up `Persisted<Value>`'s metadata in the runtime's cache each time.
    @usableFromInline
    enum Storage {
        case unmanaged(Value)
        /// The type's default, not made yet: an accessor of a stored object never reads its
        /// wrappers' own values, so a `List` or `LinkingObjects` default is allocated only
        /// when an unmanaged object reads it (then it is kept, so appends to it stay).
        case unmanagedDefault
        /// Set on a scratch instance to learn which declared property a key path names.
        case probe
    }
    @usableFromInline var storage: Storage
    @usableFromInline let flags: PropertyFlags
    /// What the declaration gave beyond the flags: a `LinkingObjects`' origin property; for
    /// every other type nothing, which takes no bytes. A field of its own, not a payload of
    /// `unmanagedDefault`: a second payload case made `Storage` a multi-payload enum, a tag
    /// byte longer (a list's wrapper no longer the one word `PersistedListWord` reads).
    @usableFromInline let declared: Value._Declared

    @inlinable public init() {
        (storage, flags, declared) = (.unmanagedDefault, PropertyFlags(), Value._nothingDeclared)
    }
    @inlinable public init(wrappedValue: Value) {
        (storage, flags, declared) = (.unmanaged(wrappedValue), PropertyFlags(), Value._nothingDeclared)
    }
    @inlinable public init(wrappedValue: Value, primaryKey: Bool = false, indexed: Bool = false) {
        storage = .unmanaged(wrappedValue)
        flags = PropertyFlags(primaryKey: primaryKey, indexed: indexed)
        declared = Value._nothingDeclared
    }
    @inlinable public init(primaryKey: Bool, indexed: Bool = false) {
        storage = .unmanagedDefault
        flags = PropertyFlags(primaryKey: primaryKey, indexed: indexed)
        declared = Value._nothingDeclared
    }
    @inlinable public init(indexed: Bool) {
        (storage, flags, declared) = (.unmanagedDefault, PropertyFlags(indexed: indexed), Value._nothingDeclared)
    }

    @available(*, unavailable, message: "@Persisted works only on properties of Object subclasses")
    public var wrappedValue: Value {
        get { fatalError() }
        set { fatalError() }
    }

    /// Always inlined into the model's accessors: only there is each key path a literal, which
    /// the compiler folds into the wrapper's address, so neither accessor forms a key path.
    /// A copy left out of line took them as arguments, wrote through the runtime's key path
    /// projection (`swift_modifyAtReferenceWritableKeyPath`, about 1,300 instructions a set),
    /// and a key path formed anywhere made every access to the wrapper a dynamic exclusivity
    /// check. The property is known by where its wrapper sits (`PropertyKey`).
    @inlinable
    public static subscript<Owner: Object>(
        _enclosingInstance obj: Owner,
        wrapped wrappedKeyPath: ReferenceWritableKeyPath<Owner, Value>,
        storage storageKeyPath: ReferenceWritableKeyPath<Owner, Persisted<Value>>
    ) -> Value {
        @inline(__always) get {
            let key = PropertyKey(Owner.self, offset: offset(of: &obj[keyPath: storageKeyPath], in: obj))
            if let c = obj._ctx {
                return c._withUnsafeGuaranteedRef { ctx in
                    ctx.withProperty(obj, key, wrapper: Persisted<Value>.self) { Value._managedRead(obj, ctx, $0) }
                }
            }
            if obj._tracer != nil { trace(obj, key) }
            return unmanagedValue(&obj[keyPath: storageKeyPath])
        }
        @inline(__always) set {
            if let r = obj._ref {
                let key = PropertyKey(Owner.self, offset: offset(of: &obj[keyPath: storageKeyPath], in: obj))
                return managedSet(r, key, newValue)
            }
            obj[keyPath: storageKeyPath].storage = .unmanaged(newValue)
        }
    }

    /// Where `wrapper` (a field of `obj`) sits in `obj`: a constant once the key path is folded.
    @inlinable @inline(__always)
    static func offset(of wrapper: inout Persisted<Value>, in obj: Object) -> Int {
        let base = UnsafeRawPointer(Unmanaged.passUnretained(obj).toOpaque())
        return withUnsafeMutablePointer(to: &wrapper) { UnsafeRawPointer($0) - base }
    }

    /// The unmanaged value, the wrapper lent by address: the key path folded into that address
    /// in the accessor, and the switch kept out of the managed reads' inlined code.
    @inlinable
    static func unmanagedValue(_ wrapper: inout Persisted<Value>) -> Value {
        switch wrapper.storage {
        case .unmanaged(let v): return v
        case .unmanagedDefault:
            let v = Value._defaultValue()
            wrapper.storage = .unmanaged(v)
            return v
        case .probe: return Value._defaultValue()
        }
    }

    @usableFromInline
    static func trace(_ obj: Object, _ key: PropertyKey) {
        obj._tracer?.record(ModelInfo.of(key.owner).propertyName(wrapperAt: key.offset, Persisted<Value>.self))
    }

    @usableFromInline
    static func managedSet(_ r: ManagedRef, _ key: PropertyKey, _ newValue: Value) {
        let p = r.ctx.property(r, key, wrapper: Persisted<Value>.self)
        r.ctx.guardedWrite(r, p.property.name) { try Value._managedWrite(newValue, r, p) }
    }
}

extension Persisted where Value: _ListProtocol {
    @inlinable public init(onDelete: DeleteRule) {
        (storage, flags, declared) = (.unmanagedDefault, PropertyFlags(onDelete: onDelete), Value._nothingDeclared)
    }
}

extension Persisted where Value: _LinkingObjectsProtocol, Value._Declared == String {
    @inlinable public init(originProperty: String) {
        (storage, flags, declared) = (.unmanagedDefault, PropertyFlags(), originProperty)
    }
}

/// A `@Persisted` wrapper seen through `Mirror`, whatever its value type.
protocol AnyPersisted {
    /// The wrapped value's type, whose `_unmanaged(inWrapperAt:)` reads a wrapper in place.
    static var valueType: any _Persistable.Type { get }
    var isProbe: Bool { get }
    var options: PropertyOptions { get }
    var fieldType: _FieldType { get }
    var unmanagedValue: _UnmanagedValue { get }
    var anyValue: Any { get }
}

extension Persisted: AnyPersisted {
    static var valueType: any _Persistable.Type { Value.self }

    var isProbe: Bool { if case .probe = storage { return true } else { return false } }
    var options: PropertyOptions {
        PropertyOptions(
            primaryKey: flags.primaryKey, indexed: flags.indexed, onDelete: flags.onDelete,
            originProperty: Value._originProperty(declared))
    }
    var fieldType: _FieldType { Value._fieldType }
    var unmanagedValue: _UnmanagedValue {
        switch storage {
        case .unmanaged(let v): return v._unmanaged
        case .unmanagedDefault: return Value._unmanagedDefault
        case .probe: return .computed
        }
    }
    var anyValue: Any {
        if case .unmanaged(let v) = storage { return v }
        return Value._defaultValue()
    }
}
