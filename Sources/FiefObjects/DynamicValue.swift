import Foundation

/// Conversions between Swift values of unknown type (dictionaries for `create`, migration
/// objects, the CLI) and stored values, checked against a property's type.
enum DynamicValue {
    static func toStored(_ any: Any?, _ p: Property, className: String) throws -> ObjectValue {
        func mismatch(_ v: Any) -> ObjectError {
            .typeMismatch(className: className, property: p.name, expected: p.typeName, found: "\(type(of: v))")
        }
        guard let any, !isNil(any) else {
            if p.optional || p.kind == .object { return .null }
            throw ObjectError.typeMismatch(className: className, property: p.name, expected: p.typeName, found: "nil")
        }
        if let v = any as? ObjectValue {
            guard v.fits(p) else { throw mismatch(v) }
            return v
        }
        switch p.kind {
        case .bool:
            guard let b = any as? Bool else { throw mismatch(any) }
            return .bool(b)
        case .int, .int8, .int16, .int32, .int64:
            let i: Int64?
            switch any {
            case let x as Int: i = Int64(x)
            case let x as Int64: i = x
            case let x as Int32: i = Int64(x)
            case let x as Int16: i = Int64(x)
            case let x as Int8: i = Int64(x)
            case let x as Double where x.rounded() == x && abs(x) < 9.2e18: i = Int64(x)
            default: i = nil
            }
            guard let i else { throw mismatch(any) }
            let fits: Bool
            switch p.kind {
            case .int8: fits = Int8(exactly: i) != nil
            case .int16: fits = Int16(exactly: i) != nil
            case .int32: fits = Int32(exactly: i) != nil
            default: fits = true
            }
            guard fits else {
                throw ObjectError.typeMismatch(
                    className: className, property: p.name, expected: p.typeName, found: "\(i), out of range")
            }
            return .int(i)
        case .float:
            guard let x = Float(_stored: number(any)) else { throw mismatch(any) }
            return .float(x)
        case .double:
            guard let x = Double(_stored: number(any)) else { throw mismatch(any) }
            return .double(x)
        case .string:
            guard let s = any as? String else { throw mismatch(any) }
            return .string(s)
        case .data, .bytes:
            if let d = any as? Data { return .data([UInt8](d)) }
            if let d = any as? [UInt8] { return .data(d) }
            throw mismatch(any)
        case .date:
            guard let d = any as? Date else { throw mismatch(any) }
            return .date(d)
        case .uuid:
            if let u = any as? UUID { return .uuid(u) }
            if let s = any as? String, let u = UUID(uuidString: s) { return .uuid(u) }
            throw mismatch(any)
        case .object:
            if let k = any as? Int64 { return .link(k) }
            throw mismatch(any)
        case .linkingObjects:
            throw ObjectError.typeMismatch(
                className: className, property: p.name, expected: "nothing (computed)", found: "\(type(of: any))")
        }
    }

    /// A stored value as the Swift value a dynamic reader expects (Int for every integer width).
    static func toSwift(_ v: ObjectValue, _ p: Property) -> Any? {
        switch v {
        case .null: return nil
        case .bool(let b): return b
        case .int(let i):
            switch p.kind {
            case .int8: return Int8(truncatingIfNeeded: i)
            case .int16: return Int16(truncatingIfNeeded: i)
            case .int32: return Int32(truncatingIfNeeded: i)
            case .int64: return i
            default: return Int(i)
            }
        case .float(let f): return f
        case .double(let d): return d
        case .string(let s): return s
        case .data(let d): return p.kind == .bytes ? d : Data(d)
        case .date(let d): return d
        case .uuid(let u): return u
        case .link(let k): return k
        }
    }

    /// A Swift number as the stored value it would be, for a float or double property to
    /// convert as it converts what it reads (`_PersistableFloatingPoint`); `.null` otherwise.
    static func number(_ any: Any) -> ObjectValue {
        switch any {
        case let x as Float: return .float(x)
        case let x as Double: return .double(x)
        case let x as Int: return .int(Int64(x))
        default: return .null
        }
    }

    static func isNil(_ v: Any) -> Bool {
        // A conformance check, not a Mirror: this runs on every dynamic value and key lookup.
        (v as? AnyOptional)?.isNone ?? false
    }

    /// Unwraps an `Any` that holds an Optional.
    static func unwrap(_ v: Any) -> Any? {
        let m = Mirror(reflecting: v)
        guard m.displayStyle == .optional else { return v }
        return m.children.first?.value
    }
}

/// Lets an `Any` say whether it holds an empty Optional.
private protocol AnyOptional { var isNone: Bool { get } }
extension Optional: AnyOptional {
    fileprivate var isNone: Bool { if case .none = self { return true } else { return false } }
}
