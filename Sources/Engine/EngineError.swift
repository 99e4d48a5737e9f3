#if canImport(Glibc)
    import Glibc
#endif

/// Every way the engine refuses a request. Each message names the file (when there is one)
/// and what is wrong, so a user can act on one line.
public enum EngineError: Error, Equatable, CustomStringConvertible {
    case fileNotFound(path: String)
    case notARegularFile(path: String)
    case emptyFile(path: String)
    case truncated(path: String, detail: String)
    case notAFiefFile(path: String)
    case unsupportedFormat(path: String, found: UInt32, supported: [UInt32])
    case corrupt(path: String, detail: String)
    case io(path: String, operation: String, errno: Int32)
    case diskFull(path: String, operation: String)
    case nestedWrite
    case transactionClosed
    case tableNotFound(String)
    case tableExists(String)
    case tableTypeMismatch(table: String, expected: String, found: String)
    case invalidTableName(String)
    case keyTooLarge(size: Int, max: Int)
    case valueTooLarge(size: Int, max: Int)
    case databaseInUse(path: String, detail: String)
    case readerTableFull(path: String, slots: Int)
    case lockFileCorrupt(path: String, detail: String)
    case alreadyExists(path: String)
    case invalidArgument(String)
    /// `append` with a key not above every key of the table.
    case keyOutOfOrder(table: String)
    case readOnly(path: String)
    case closed(path: String)

    public var description: String {
        switch self {
        case .fileNotFound(let p): return "\(p): no such database file"
        case .notARegularFile(let p): return "\(p): not a regular file"
        case .emptyFile(let p): return "\(p): file is empty (zero bytes), not a Fief database"
        case .truncated(let p, let d): return "\(p): file is truncated: \(d)"
        case .notAFiefFile(let p): return "\(p): not a Fief database (bad magic)"
        case .unsupportedFormat(let p, let f, let s):
            return
                "\(p): format version \(f) is not supported "
                + "(this engine reads versions \(s.map(String.init).joined(separator: ", ")))"
        case .corrupt(let p, let d): return "\(p): database is corrupt: \(d)"
        case .readOnly(let p): return "\(p): opened read-only; writes are refused"
        case .closed(let p): return "\(p): the database handle is closed"
        case .io(let p, let op, let e): return "\(p): \(op) failed: \(errnoText(e))"
        case .diskFull(let p, let op): return "\(p): \(op) failed: no space left on device"
        case .nestedWrite: return "a write transaction is already open on this thread; nested writes are not allowed"
        case .transactionClosed: return "the transaction has already ended"
        case .tableNotFound(let t): return "no table named '\(t)'"
        case .keyOutOfOrder(let t): return "append to table '\(t)': the key is not above every key the table holds"
        case .tableExists(let t): return "table '\(t)' already exists"
        case .tableTypeMismatch(let t, let e, let f):
            return "table '\(t)' holds \(f), but was opened as \(e)"
        case .invalidTableName(let t): return "invalid table name '\(t)': use 1 to 255 bytes"
        case .keyTooLarge(let s, let m): return "key of \(s) bytes exceeds the maximum of \(m) bytes"
        case .valueTooLarge(let s, let m): return "value of \(s) bytes exceeds the maximum of \(m) bytes (16 MiB)"
        case .databaseInUse(let p, let d): return "\(p): database is in use: \(d)"
        case .readerTableFull(let p, let n): return "\(p): all \(n) reader slots are taken"
        case .lockFileCorrupt(let p, let d): return "\(p): lock file is not usable: \(d)"
        case .alreadyExists(let p): return "\(p): already exists"
        case .invalidArgument(let s): return s
        }
    }
}

func errnoText(_ code: Int32) -> String {
    if let c = strerror(code) { return "\(String(cString: c)) (errno \(code))" }
    return "errno \(code)"
}
