#if canImport(Glibc)
import Glibc
#endif

/// Named places on the commit path where a process can be made to die, so tests can prove
/// what survives a crash exactly there. Armed from outside with
/// `FIEF_CRASH_AT=<point>[:<n>]`: the n-th time (default 1) the point is reached, the
/// process sends itself SIGKILL. Unarmed, reaching a point is one load and a branch.
public enum CrashPoint: String, CaseIterable, Sendable {
    /// New nodes, free list and top node written; the slot not yet.
    case afterNodesWritten = "after-nodes-written"
    /// The new top ref written into the inactive slot.
    case afterTopWritten = "after-top-written"
    /// First sync returned: nodes and slot durable, select bit still old.
    case afterDataSync = "after-data-sync"
    /// Select bit flipped (written, not yet synced).
    case afterSelectFlip = "after-select-flip"
    /// Second sync returned: the commit is durable.
    case afterSelectSync = "after-select-sync"
    /// Readers in this process see the new version; the caller has not been told yet.
    case afterPublish = "after-publish"

    public static let environmentVariable = "FIEF_CRASH_AT"

    /// Whether a commit that died at this point must be visible after restart (process
    /// crash: the kernel keeps every write made before the kill).
    public var newVersionSurvivesProcessKill: Bool {
        switch self {
        case .afterNodesWritten, .afterTopWritten, .afterDataSync: return false
        case .afterSelectFlip, .afterSelectSync, .afterPublish: return true
        }
    }
}

/// The armed crash point of this process, read once from the environment.
enum CrashArming {
    struct Armed {
        let point: CrashPoint
        let nth: Int
    }

    static let parsed: Result<Armed?, EngineError> = parse(getenv(CrashPoint.environmentVariable).map { String(cString: $0) })

    static let armed: Armed? = (try? parsed.get()) ?? nil
    private static let counterLock = Lock()
    nonisolated(unsafe) private static var hits = 0

    static func parse(_ s: String?) -> Result<Armed?, EngineError> {
        guard let s, !s.isEmpty else { return .success(nil) }
        let parts = s.split(separator: ":", omittingEmptySubsequences: false)
        let names = CrashPoint.allCases.map(\.rawValue).joined(separator: ", ")
        guard let point = CrashPoint(rawValue: String(parts[0])) else {
            return .failure(.invalidArgument("\(CrashPoint.environmentVariable)=\(s): unknown crash point '\(parts[0])'; known: \(names)"))
        }
        var nth = 1
        if parts.count == 2 {
            guard let n = Int(parts[1]), n >= 1 else {
                return .failure(.invalidArgument("\(CrashPoint.environmentVariable)=\(s): the count after ':' must be a positive integer"))
            }
            nth = n
        } else if parts.count > 2 {
            return .failure(.invalidArgument("\(CrashPoint.environmentVariable)=\(s): expected <point>[:<n>]"))
        }
        return .success(Armed(point: point, nth: nth))
    }

    /// Throws when the variable is set but malformed, so a test never runs unarmed by mistake.
    static func validate() throws {
        if case .failure(let e) = parsed { throw e }
    }

    @inline(__always) static func reach(_ p: CrashPoint) {
        guard let a = armed, a.point == p else { return }
        let n = counterLock.withLock { () -> Int in hits += 1; return hits }
        if n == a.nth { kill(getpid(), SIGKILL) }
    }
}
