/// A model or a stored schema the object layer refuses, naming the class and property.
public enum SchemaError: Error, Equatable, CustomStringConvertible {
    case invalidName(className: String, property: String?, detail: String)
    case badOption(className: String, property: String, detail: String)
    case multiplePrimaryKeys(className: String, properties: [String])
    case primaryKeyType(className: String, property: String, type: String)
    case unsupportedType(className: String, property: String, type: String)
    case badOriginProperty(className: String, property: String, detail: String)
    case linkTargetNotInTypes(className: String, property: String, target: String)
    case duplicateClass(String)
    case migrationRequired(path: String, changes: [String])
    case schemaVersionDowngrade(path: String, stored: UInt64, code: UInt64)
    case newerObjectFormat(path: String, found: Int64, supported: Int64)
    case migrationFailed(path: String, detail: String)
    case readOnlyNeedsMigration(path: String)

    public var description: String {
        switch self {
        case .invalidName(let c, let p, let d):
            return p.map { "\(c).\($0): invalid property name: \(d)" } ?? "\(c): invalid class name: \(d)"
        case .badOption(let c, let p, let d): return "\(c).\(p): \(d)"
        case .multiplePrimaryKeys(let c, let ps):
            return "\(c): more than one primary key (\(ps.joined(separator: ", ")))"
        case .primaryKeyType(let c, let p, let t):
            return "\(c).\(p): a primary key must be Int, Int8-64, String or UUID (optional or not), not \(t)"
        case .unsupportedType(let c, let p, let t): return "\(c).\(p): type \(t) cannot be persisted"
        case .badOriginProperty(let c, let p, let d): return "\(c).\(p): bad originProperty: \(d)"
        case .linkTargetNotInTypes(let c, let p, let t):
            return "\(c).\(p): links to \(t), which is not in the configuration's types"
        case .duplicateClass(let c): return "class \(c) is listed twice in the configuration's types"
        case .migrationRequired(let path, let changes):
            return "\(path): the schema changed without a new schemaVersion; changes:\n  "
                + changes.joined(separator: "\n  ")
        case .schemaVersionDowngrade(let p, let s, let c):
            return "\(p): the file's schema version \(s) is newer than the code's \(c)"
        case .newerObjectFormat(let p, let f, let s):
            return "\(p): object layer format \(f) is newer than this library's \(s)"
        case .migrationFailed(let p, let d): return "\(p): migration failed, file left as it was: \(d)"
        case .readOnlyNeedsMigration(let p): return "\(p): opened read-only, but its schema differs from the code's"
        }
    }
}

/// A rule of the object model broken at run time.
public enum ObjectError: Error, Equatable, CustomStringConvertible {
    case notInWriteTransaction(String)
    case duplicatePrimaryKey(className: String, value: String)
    case primaryKeyChange(className: String, property: String)
    case missingPrimaryKey(className: String)
    case objectDeleted(className: String)
    case objectFromAnotherStore(className: String)
    case valueTooLarge(className: String, property: String, size: Int)
    case typeMismatch(className: String, property: String, expected: String, found: String)
    case unknownProperty(className: String, property: String)
    case unknownClass(String)
    case referenceAlreadyResolved
    case nestedWrite
    case invalidated
    case readOnly(String)
    case unmanagedObject(className: String)
    case tooManyLiveVersions(path: String, live: Int, maximum: Int)

    public var description: String {
        switch self {
        case .notInWriteTransaction(let what): return "\(what) needs a write transaction (ctx.write { })"
        case .duplicatePrimaryKey(let c, let v): return "\(c): an object with primary key \(v) exists already"
        case .primaryKeyChange(let c, let p): return "\(c).\(p): the primary key of a stored object cannot change"
        case .missingPrimaryKey(let c): return "\(c): update needs a primary key"
        case .objectDeleted(let c):
            return "\(c): the object was deleted or belongs to a version this context no longer reads"
        case .objectFromAnotherStore(let c): return "\(c): the object belongs to another store or context"
        case .valueTooLarge(let c, let p, let n): return "\(c).\(p): value of \(n) bytes is larger than 16 MiB"
        case .typeMismatch(let c, let p, let e, let f): return "\(c).\(p): expected \(e), found \(f)"
        case .unknownProperty(let c, let p): return "\(c): no property named '\(p)'"
        case .unknownClass(let c): return "no class named '\(c)' in this store"
        case .referenceAlreadyResolved: return "a ThreadSafeReference resolves once"
        case .nestedWrite: return "write { } inside write { } on the same context"
        case .invalidated: return "the context was invalidated; call refresh() before reading"
        case .readOnly(let p): return "\(p): the store was opened read-only"
        case .unmanagedObject(let c): return "\(c): an unmanaged object cannot be observed; add it to a context first"
        case .tooManyLiveVersions(let p, let live, let m):
            return
                "\(p): \(live) versions are live (maximumLiveVersions \(m)); "
                + "a reader holds an old version: refresh or invalidate it"
        }
    }
}

/// A query string (or typed query) that cannot run, with the 1-based character position.
public enum QueryError: Error, Equatable, CustomStringConvertible {
    case syntax(position: Int, detail: String)
    case unknownProperty(position: Int, className: String, property: String)
    case typeMismatch(position: Int, detail: String)
    case unsupportedOperator(position: Int, detail: String)
    case argumentCount(position: Int, expected: Int, given: Int)

    public var position: Int {
        switch self {
        case .syntax(let p, _), .unknownProperty(let p, _, _), .typeMismatch(let p, _),
            .unsupportedOperator(let p, _), .argumentCount(let p, _, _):
            return p
        }
    }

    public var description: String {
        switch self {
        case .syntax(let p, let d): return "query: syntax error at position \(p): \(d)"
        case .unknownProperty(let p, let c, let prop): return "query: position \(p): \(c) has no property '\(prop)'"
        case .typeMismatch(let p, let d): return "query: position \(p): type mismatch: \(d)"
        case .unsupportedOperator(let p, let d): return "query: position \(p): unsupported: \(d)"
        case .argumentCount(let p, let e, let g): return "query: position \(p): needs \(e) argument(s), \(g) given"
        }
    }
}
