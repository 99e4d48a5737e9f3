@_spi(Reflection) import Swift
import Foundation

/// What the library learns once per model class: its schema (from `Mirror` on a fresh
/// instance), and which property each key path names (learned on first use by probing).
final class ModelInfo: @unchecked Sendable {
    let type: Object.Type
    let name: String
    /// Properties in declaration order; pids are assigned by the store.
    let properties: [Property]
    let fieldTypes: [String: _FieldType]
    /// Where each `@Persisted` wrapper sits inside an instance, so `add` reads an unmanaged
    /// object's values without `Mirror` (nil where the runtime cannot list the fields).
    private let fields: [(name: String, offset: Int, type: any _Persistable.Type)]?
    private let names = Locked<[AnyKeyPath: String]>([:])
    private let probed = Locked<[Int: String]>([:])
    /// Whether an instance holds nothing but `@Persisted` wrappers (and `Object`'s own
    /// fields): then an accessor nobody kept can be pointed at the next object of an
    /// iteration, as no state of the app's rides along (`Results.Iterator`).
    let accessorsReusable: Bool

    private static let registry = Locked<[ObjectIdentifier: ModelInfo]>([:])

    static func of(_ type: Object.Type) -> ModelInfo {
        if let m = registry.withLock({ $0[ObjectIdentifier(type)] }) { return m }
        let m = ModelInfo(type)
        registry.withLock { $0[ObjectIdentifier(type)] = m }
        return m
    }

    private init(_ type: Object.Type) {
        self.type = type
        name = "\(type)"
        var props: [Property] = [], fields: [String: _FieldType] = [:]
        for (label, p) in ModelInfo.persistedChildren(of: type.init()) {
            let f = p.fieldType
            let o = p.options
            fields[label] = f
            props.append(
                Property(
                    name: label, kind: f.kind, optional: f.optional, list: f.list, primaryKey: o.primaryKey,
                    indexed: o.indexed, target: f.target.map { "\($0)" }, originProperty: o.originProperty,
                    onDelete: o.onDelete))
        }
        properties = props
        fieldTypes = fields
        var found: [(String, Int, any _Persistable.Type)] = []
        var others = 0
        let listed = ModelInfo.forEachField(of: type) { name, offset, ty in
            if let p = ty as? any AnyPersisted.Type {
                let n = String(cString: name)
                found.append((n.hasPrefix("_") ? String(n.dropFirst()) : n, offset, p.valueType))
            } else {
                others += 1
            }
        }
        self.fields = listed && found.map(\.0) == props.map(\.name) ? found : nil
        accessorsReusable = self.fields != nil && others == ModelInfo.objectFieldCount
    }

    /// The stored fields of a class, its bases' first (false where the runtime cannot list them).
    private static func forEachField(
        of type: AnyClass, _ body: (UnsafePointer<CChar>, Int, Any.Type) -> Void
    ) -> Bool {
        // `.classType` (bit 0) is declared as a mutable static, which Swift 6 will not read.
        _forEachField(of: type, options: _EachFieldOptions(rawValue: 1 << 0)) { name, offset, ty, _ in
            body(name, offset, ty)
            return true
        }
    }

    /// How many fields `Object` itself keeps (its reference, row and tracer).
    private static let objectFieldCount: Int = {
        var n = 0
        return forEachField(of: Object.self) { _, _, _ in n += 1 } ? n : -1
    }()

    /// Whether `add` reads values at field offsets (else through `Mirror`).
    var readsFieldsInPlace: Bool { fields != nil }

    /// The unmanaged values of an object's properties, in `properties`' order, read one at a
    /// time from the object's wrappers (the object must outlive the view): an array of them
    /// cost an allocation and a destroy of every value per object added.
    struct UnmanagedValues {
        private let base: UnsafeRawPointer
        private let fields: [(name: String, offset: Int, type: any _Persistable.Type)]
        /// Through `Mirror`, where the runtime cannot list the fields.
        private let mirrored: [_UnmanagedValue]?

        fileprivate init(_ obj: Object, _ fields: [(name: String, offset: Int, type: any _Persistable.Type)]?) {
            base = UnsafeRawPointer(Unmanaged.passUnretained(obj).toOpaque())
            self.fields = fields ?? []
            mirrored = fields == nil ? ModelInfo.persistedChildren(of: obj).map(\.1.unmanagedValue) : nil
        }

        var count: Int { mirrored?.count ?? fields.count }

        subscript(i: Int) -> _UnmanagedValue {
            if let mirrored { return mirrored[i] }
            return fields[i].type._unmanaged(inWrapperAt: base + fields[i].offset)
        }
    }

    func unmanagedValues(_ obj: Object) -> UnmanagedValues { UnmanagedValues(obj, fields) }

    /// The `@Persisted` wrappers of an instance, base classes first, in declaration order.
    static func persistedChildren(of obj: Object) -> [(String, AnyPersisted)] {
        var mirrors: [Mirror] = []
        var m: Mirror? = Mirror(reflecting: obj)
        while let cur = m, cur.subjectType != Object.self {
            mirrors.insert(cur, at: 0)
            m = cur.superclassMirror
        }
        var out: [(String, AnyPersisted)] = []
        for mirror in mirrors {
            for child in mirror.children {
                guard let label = child.label, let p = child.value as? AnyPersisted else { continue }
                out.append((label.hasPrefix("_") ? String(label.dropFirst()) : label, p))
            }
        }
        return out
    }

    /// The property whose wrapper sits at `offset` in an instance (`PropertyKey`): from the
    /// listed fields, or, where the runtime cannot list them, by setting the wrapper there to
    /// `.probe` on a scratch instance and seeing which child changed (once per offset).
    func propertyName<V>(wrapperAt offset: Int, _ wrapper: Persisted<V>.Type) -> String {
        if let fields, let f = fields.first(where: { $0.offset == offset }) { return f.name }
        return probedName(wrapperAt: offset, wrapper)
    }

    /// Where each wrapper sits, by property name (nil where the runtime cannot list the fields).
    var wrapperOffsets: [(name: String, offset: Int)]? { fields?.map { ($0.name, $0.offset) } }

    func probedName<V>(wrapperAt offset: Int, _: Persisted<V>.Type) -> String {
        if let n = probed.withLock({ $0[offset] }) { return n }
        let scratch = type.init()
        let base = UnsafeMutableRawPointer(Unmanaged.passUnretained(scratch).toOpaque())
        (base + offset).assumingMemoryBound(to: Persisted<V>.self).pointee.storage = .probe
        guard let hit = ModelInfo.persistedChildren(of: scratch).first(where: { $0.1.isProbe }) else {
            preconditionFailure("\(name): no declared @Persisted property at offset \(offset)")
        }
        probed.withLock { $0[offset] = hit.0 }
        return hit.0
    }

    /// The name of the property a key path reads (`\Person.name` → "name"), by tracing one read.
    func propertyName(reading kp: AnyKeyPath) -> String? {
        if let n = names.withLock({ $0[kp] }) { return n }
        let scratch = type.init()
        let tracer = KeyPathTracer()
        scratch._tracer = tracer
        _ = scratch[keyPath: kp]
        scratch._tracer = nil
        guard tracer.names.count == 1, let n = tracer.names.first else { return nil }
        names.withLock { $0[kp] = n }
        return n
    }

    func unmanagedValue(_ obj: Object, _ name: String) -> Any? {
        for (label, p) in ModelInfo.persistedChildren(of: obj) where label == name {
            return DynamicValue.unwrap(p.anyValue)
        }
        return nil
    }
}

/// Records which properties a key path reads.
@usableFromInline
final class KeyPathTracer {
    var names: [String] = []
    func record(_ n: String) { names.append(n) }
}
