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
    /// Readers in this process see the new version; watchers in other processes have not
    /// been woken yet (they see it at their next poll).
    case afterPublishBeforeDoorbell = "after-publish-before-doorbell"
    /// Readers see the new version and watchers were woken; the caller has not been told yet.
    case afterPublish = "after-publish"

    // Creating a file (`Database(path:)` on a missing path): built in a temporary file beside it.
    /// The new file's header and top node written to the temporary file, not synced.
    case createTempWritten = "create-temp-written"
    /// The temporary file synced, not yet linked to the path.
    case createTempSynced = "create-temp-synced"
    /// Linked to the path; the directory not yet synced.
    case createLinked = "create-linked"

    // `compact()` and `writeCopy(to:)`: a compacted copy built in a temporary file.
    /// The copy's pages and header written, not synced.
    case copyWritten = "copy-written"
    /// The copy synced; not yet renamed over the file (compact) or linked (writeCopy).
    case copySynced = "copy-synced"
    /// compact: renamed over the original; the directory not yet synced.
    case compactRenamed = "compact-renamed"
    /// compact: the directory synced; this handle not yet moved to the new file.
    case compactDirSynced = "compact-dir-synced"
    /// writeCopy: linked to the destination; the directory not yet synced.
    case copyLinked = "copy-linked"

    public static let environmentVariable = "FIEF_CRASH_AT"

    /// The points of the commit path, in the order a commit reaches them.
    public static let commitPoints: [CrashPoint] = [
        .afterNodesWritten, .afterTopWritten, .afterDataSync, .afterSelectFlip, .afterSelectSync,
        .afterPublishBeforeDoorbell, .afterPublish
    ]
    public static let createPoints: [CrashPoint] = [.createTempWritten, .createTempSynced, .createLinked]
    public static let compactPoints: [CrashPoint] = [.copyWritten, .copySynced, .compactRenamed, .compactDirSynced]
    public static let writeCopyPoints: [CrashPoint] = [.copyWritten, .copySynced, .copyLinked]

    /// A commit that died here had written its select-bit flip (it may survive a power cut).
    public var selectFlipWritten: Bool {
        [.afterSelectFlip, .afterSelectSync, .afterPublishBeforeDoorbell, .afterPublish].contains(self)
    }
    /// A commit that died here had made its flip durable (it must survive a power cut).
    public var selectFlipDurable: Bool { [.afterSelectSync, .afterPublishBeforeDoorbell, .afterPublish].contains(self) }

    /// Whether what died at this point must be visible after restart (process crash: the
    /// kernel keeps every write made before the kill): the new version of a commit once its
    /// select bit is flipped, a created or copied file once it is linked, a compacted file
    /// once it is renamed in.
    public var newVersionSurvivesProcessKill: Bool {
        switch self {
        case .afterNodesWritten, .afterTopWritten, .afterDataSync, .createTempWritten, .createTempSynced, .copyWritten,
            .copySynced:
            return false
        case .afterSelectFlip, .afterSelectSync, .afterPublishBeforeDoorbell, .afterPublish, .createLinked,
            .compactRenamed, .compactDirSynced, .copyLinked:
            return true
        }
    }
}

/// The armed crash point of this process, read once from the environment.
enum CrashArming {
    struct Armed {
        let point: CrashPoint
        let nth: Int
    }

    static let parsed: Result<Armed?, EngineError> = parse(
        getenv(CrashPoint.environmentVariable).map { String(cString: $0) })

    static let armed: Armed? = (try? parsed.get()) ?? nil
    private static let counterLock = Lock()
    nonisolated(unsafe) private static var hits = 0

    static func parse(_ s: String?) -> Result<Armed?, EngineError> {
        guard let s, !s.isEmpty else { return .success(nil) }
        let parts = s.split(separator: ":", omittingEmptySubsequences: false)
        let names = CrashPoint.allCases.map(\.rawValue).joined(separator: ", ")
        guard let point = CrashPoint(rawValue: String(parts[0])) else {
            return .failure(
                .invalidArgument(
                    "\(CrashPoint.environmentVariable)=\(s): unknown crash point '\(parts[0])'; known: \(names)"))
        }
        var nth = 1
        if parts.count == 2 {
            guard let n = Int(parts[1]), n >= 1 else {
                return .failure(
                    .invalidArgument(
                        "\(CrashPoint.environmentVariable)=\(s): the count after ':' must be a positive integer"))
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
        let n = counterLock.withLock { () -> Int in
            hits += 1; return hits
        }
        if n == a.nth { kill(getpid(), SIGKILL) }
    }
}
