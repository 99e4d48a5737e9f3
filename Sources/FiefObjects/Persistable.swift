import Foundation

/// The shape of a Swift property type as the schema sees it.
public struct _FieldType {
    var kind: PropertyKind
    var optional = false
    var list = false
    var target: Object.Type?
    var originProperty: String?
    var typeName: String
}

/// What `add` finds in an unmanaged property: a value, an object (to add first), or a list.
public enum _UnmanagedValue {
    case value(ObjectValue)
    case object(Object?)
    case list([_UnmanagedValue])
    /// A list of objects, as the list holds them: wrapped one by one in `.object`, each object
    /// was retained and released (a cache miss apiece when a bulk load reaches it).
    case objects([Object])
    case computed
}

/// Types a `@Persisted` property can hold. Conformances come with the library (scalars,
/// optionals, `Object` subclasses as optional links, `List`, `LinkingObjects`).
public protocol _Persistable {
    static var _fieldType: _FieldType { get }
    static func _defaultValue() -> Self
    /// The Swift value of a stored one (for links, an accessor from `ctx`).
    static func _fromStored(_ v: ObjectValue, _ ctx: ObjectContext) -> Self
    /// As above, for an element of a list whose target class, and the element's row valid
    /// now, the caller knows (`List.Iterator`): a link's accessor then holds its row.
    static func _fromStored(_ v: ObjectValue, _ ctx: ObjectContext, className: String, row: UnsafeRawBufferPointer?)
        -> Self
    /// A managed read of the whole property (lists and linking objects return accessors).
    static func _managedRead(_ obj: Object, _ ref: ManagedRef, _ p: PropertyAccess) -> Self
    /// As above, for a getter that holds the object's context borrowed (scalars read their
    /// row without a copy of the object's `ManagedRef`).
    static func _managedRead(_ obj: Object, _ ctx: ObjectContext, _ p: PropertyAccess) -> Self
    /// A managed write of the whole property.
    static func _managedWrite(_ value: Self, _ ref: ManagedRef, _ p: PropertyAccess) throws
    var _unmanaged: _UnmanagedValue { get }
    /// The unmanaged value of the `@Persisted<Self>` wrapper at `wrapper` (inside a live
    /// object). A requirement so each conformance's witness is compiled for its own type:
    /// called through the wrapper's generic code instead, every call looked up the metadata of
    /// `Persisted<Self>.Storage` at run time (a tenth of a bulk insert).
    static func _unmanaged(inWrapperAt wrapper: UnsafeRawPointer) -> _UnmanagedValue
    /// What `add` stores for a property left at its default: without making the default (a
    /// `List` allocated for every unset list of every object added).
    static var _unmanagedDefault: _UnmanagedValue { get }
    /// What a `@Persisted` declaration of this type gives beyond its options, kept in every
    /// wrapper: nothing for most types (so no bytes); a `LinkingObjects` its origin property.
    associatedtype _Declared = Void
    /// What a wrapper declared without it keeps.
    static var _nothingDeclared: _Declared { get }
    /// The origin property a declaration names (`LinkingObjects`); nil for every other type.
    static func _originProperty(_ declared: _Declared) -> String?
}

extension _Persistable where _Declared == Void {
    @inlinable public static var _nothingDeclared: Void { () }
}

extension _Persistable {
    public static func _originProperty(_ declared: _Declared) -> String? { nil }
    // Always inlined, so each conformance's witness holds a copy compiled for its own type.
    @inline(__always)
    public static func _unmanaged(inWrapperAt wrapper: UnsafeRawPointer) -> _UnmanagedValue {
        wrapper.assumingMemoryBound(to: Persisted<Self>.self).pointee.unmanagedValue
    }
    public static func _managedRead(_ obj: Object, _ ref: ManagedRef, _ p: PropertyAccess) -> Self {
        _fromStored(ref.ctx.readValue(obj, ref, p), ref.ctx)
    }
    public static func _managedRead(_ obj: Object, _ ctx: ObjectContext, _ p: PropertyAccess) -> Self {
        _managedRead(obj, obj._ref.unsafelyUnwrapped, p)
    }
    public static var _unmanagedDefault: _UnmanagedValue { _defaultValue()._unmanaged }
    public static func _fromStored(
        _ v: ObjectValue, _ ctx: ObjectContext, className: String, row: UnsafeRawBufferPointer?
    ) -> Self {
        _fromStored(v, ctx)
    }
    public static func _managedWrite(_ value: Self, _ ref: ManagedRef, _ p: PropertyAccess) throws {
        try ref.ctx.writeProperty(ref, p.property, value._unmanaged)
    }
}

/// Scalars: a Swift value that converts to and from one `ObjectValue`.
public protocol _PersistableScalar: _Persistable {
    static var _kind: PropertyKind { get }
    init?(_stored v: ObjectValue)
    var _stored: ObjectValue { get }
    static var _zero: Self { get }
}

extension _PersistableScalar {
    public static var _fieldType: _FieldType { _FieldType(kind: _kind, typeName: "\(Self.self)") }
    public static func _defaultValue() -> Self { _zero }
    public static func _fromStored(_ v: ObjectValue, _ ctx: ObjectContext) -> Self { Self(_stored: v) ?? _zero }
    public var _unmanaged: _UnmanagedValue { .value(_stored) }
}

extension Bool: _PersistableScalar {
    public static var _kind: PropertyKind { .bool }
    public init?(_stored v: ObjectValue) { guard case .bool(let b) = v else { return nil }; self = b }
    public var _stored: ObjectValue { .bool(self) }
    public static var _zero: Bool { false }
}

/// Integers of every width: stored as Int64, read back at their width.
public protocol _PersistableInteger: _PersistableScalar, FixedWidthInteger {}
extension _PersistableInteger {
    public static func _managedRead(_ obj: Object, _ ref: ManagedRef, _ p: PropertyAccess) -> Self {
        if let v = ref.ctx.storedInt(obj, ref.key, p), let x = Self(exactly: v) { return x }
        return _fromStored(ref.ctx.readValue(obj, ref, p), ref.ctx)
    }
    public static func _managedRead(_ obj: Object, _ ctx: ObjectContext, _ p: PropertyAccess) -> Self {
        if let v = ctx.storedInt(obj, obj.objectKeyOfManaged, p), let x = Self(exactly: v) { return x }
        return _managedRead(obj, obj._ref.unsafelyUnwrapped, p)
    }
    public init?(_stored v: ObjectValue) {
        guard case .int(let i) = v, let x = Self(exactly: i) else { return nil }
        self = x
    }
    public var _stored: ObjectValue { .int(Int64(self)) }
    public static var _zero: Self { 0 }
}
extension Int: _PersistableInteger { public static var _kind: PropertyKind { .int } }
extension Int8: _PersistableInteger { public static var _kind: PropertyKind { .int8 } }
extension Int16: _PersistableInteger { public static var _kind: PropertyKind { .int16 } }
extension Int32: _PersistableInteger { public static var _kind: PropertyKind { .int32 } }
extension Int64: _PersistableInteger { public static var _kind: PropertyKind { .int64 } }

/// Floating-point numbers: a float or double property reads any stored number (float, double
/// or integer), rounded to its own width, so a property may change between the two.
public protocol _PersistableFloatingPoint: _PersistableScalar, BinaryFloatingPoint {}
extension _PersistableFloatingPoint {
    public init?(_stored v: ObjectValue) {
        switch v {
        case .float(let f): self.init(f)
        case .double(let d): self.init(d)
        case .int(let i): self.init(i)
        default: return nil
        }
    }
    public static var _zero: Self { 0 }
}
extension Float: _PersistableFloatingPoint {
    public static var _kind: PropertyKind { .float }
    public var _stored: ObjectValue { .float(self) }
}
extension Double: _PersistableFloatingPoint {
    public static var _kind: PropertyKind { .double }
    public var _stored: ObjectValue { .double(self) }
}

extension String: _PersistableScalar {
    public static var _kind: PropertyKind { .string }
    public static func _managedRead(_ obj: Object, _ ref: ManagedRef, _ p: PropertyAccess) -> String {
        if let s = ref.ctx.storedString(obj, p) { return s }
        return _fromStored(ref.ctx.readValue(obj, ref, p), ref.ctx)
    }
    public static func _managedRead(_ obj: Object, _ ctx: ObjectContext, _ p: PropertyAccess) -> String {
        if let s = ctx.storedString(obj, p) { return s }
        return _managedRead(obj, obj._ref.unsafelyUnwrapped, p)
    }
    public init?(_stored v: ObjectValue) { guard case .string(let s) = v else { return nil }; self = s }
    public var _stored: ObjectValue { .string(self) }
    public static var _zero: String { "" }
}

extension Data: _PersistableScalar {
    public static var _kind: PropertyKind { .data }
    public init?(_stored v: ObjectValue) { guard case .data(let d) = v else { return nil }; self = Data(d) }
    public var _stored: ObjectValue { .data([UInt8](self)) }
    public static var _zero: Data { Data() }
}

extension Array: _PersistableScalar, _Persistable where Element == UInt8 {
    public static var _kind: PropertyKind { .bytes }
    public init?(_stored v: ObjectValue) { guard case .data(let d) = v else { return nil }; self = d }
    public var _stored: ObjectValue { .data(self) }
    public static var _zero: [UInt8] { [] }
}

extension Date: _PersistableScalar {
    public static var _kind: PropertyKind { .date }
    public init?(_stored v: ObjectValue) { guard case .date(let d) = v else { return nil }; self = d }
    public var _stored: ObjectValue { .date(self) }
    public static var _zero: Date { Date(timeIntervalSinceReferenceDate: 0) }
}

extension UUID: _PersistableScalar {
    public static var _kind: PropertyKind { .uuid }
    public init?(_stored v: ObjectValue) { guard case .uuid(let u) = v else { return nil }; self = u }
    public var _stored: ObjectValue { .uuid(self) }
    public static var _zero: UUID { UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)) }
}

/// What may stand inside an Optional property: scalars, and objects (an optional link).
public protocol _PersistableWrapped: _Persistable {}
extension Bool: _PersistableWrapped {}
extension Int: _PersistableWrapped {}
extension Int8: _PersistableWrapped {}
extension Int16: _PersistableWrapped {}
extension Int32: _PersistableWrapped {}
extension Int64: _PersistableWrapped {}
extension Float: _PersistableWrapped {}
extension Double: _PersistableWrapped {}
extension String: _PersistableWrapped {}
extension Data: _PersistableWrapped {}
extension Array: _PersistableWrapped where Element == UInt8 {}
extension Date: _PersistableWrapped {}
extension UUID: _PersistableWrapped {}

extension Optional: _Persistable where Wrapped: _PersistableWrapped {
    public static var _fieldType: _FieldType {
        var t = Wrapped._fieldType
        t.optional = true
        t.typeName += "?"
        return t
    }
    public static func _defaultValue() -> Self { nil }
    public static func _fromStored(_ v: ObjectValue, _ ctx: ObjectContext) -> Self {
        v.isNull ? nil : Wrapped._fromStored(v, ctx)
    }
    public var _unmanaged: _UnmanagedValue {
        switch self {
        case .none: return Wrapped._fieldType.kind == .object ? .object(nil) : .value(.null)
        case .some(let w): return w._unmanaged
        }
    }
}
