import CFuse3
import Foundation

/// The state behind one mount: the backing directory, what of it is durable, the fault
/// rules, open handles and the trace. FUSE's threads call in through `FUSEBridge`; every
/// operation returns 0, a byte count, or a negated errno, as FUSE wants.
public final class FaultFileSystem: @unchecked Sendable {
    /// A virtual file at the mount's root through which `fief faultfs ctl` talks to the mount.
    public static let controlName = ".faultfs-ctl"

    final class Handle {
        let fd: Int32
        let ino: UInt64
        let generation: Int
        var path: String
        let isControl: Bool
        var response: [UInt8] = []
        init(fd: Int32, generation: Int, path: String, isControl: Bool = false) {
            self.fd = fd; self.generation = generation; self.path = path; self.isControl = isControl
            var st = stat()
            ino = fd >= 0 && fstat(fd, &st) == 0 ? UInt64(st.st_ino) : 0
        }
    }

    public let backing: String
    public let seed: UInt64
    /// What a sync makes durable beyond what it names.
    public let model: PersistenceModel
    let trace: Trace?
    var traceOperations: Bool

    /// Operations hold it shared; a power cut holds it alone, so it sees no half-done write.
    var cutLock = pthread_rwlock_t()
    /// Guards everything below. What every operation touches is exempt from Swift's dynamic
    /// exclusivity checks (a runtime call per access): the lock serialises it, and no access
    /// overlaps another.
    let lock = NSLock()
    @exclusivity(unchecked) var plan: FaultPlan
    @exclusivity(unchecked) var files: [UInt64: DurableFile] = [:]
    @exclusivity(unchecked) var handles: [UInt64: Handle] = [:]
    var nextHandle: UInt64 = 1
    /// Bumped by a power cut: handles opened before it fail with EIO.
    @exclusivity(unchecked) var generation = 0
    @exclusivity(unchecked) var seq: UInt64 = 0
    var powerCuts = 0
    let namespace: Namespace

    public init(
        backing: String, seed: UInt64, model: PersistenceModel = .posix, rules: [FaultRule] = [],
        tracePath: String? = nil, traceOperations: Bool = false
    ) throws {
        self.backing = backing
        self.seed = seed
        self.model = model
        plan = FaultPlan(seed: seed)
        for r in rules { plan.add(r) }
        trace = try tracePath.map { try Trace(path: $0) }
        self.traceOperations = traceOperations
        namespace = Namespace(root: backing)
        pthread_rwlock_init(&cutLock, nil)
    }

    /// Whether any fault rule is armed: then requests are handled concurrently (`RequestLoop`).
    var hasRules: Bool {
        lock.lock(); defer { lock.unlock() }
        return !plan.armed.isEmpty
    }

    func backingPath(_ path: String) -> String { path == "/" ? backing : backing + path }

    static func isHidden(_ path: String) -> Bool {
        path == "/" + Namespace.stashName || path.hasPrefix("/" + Namespace.stashName + "/")
    }

    // MARK: Handles

    func register(_ h: Handle) -> UInt64 {
        lock.lock(); defer { lock.unlock() }
        let id = nextHandle
        nextHandle += 1
        handles[id] = h
        return id
    }

    /// The handle `fh`, or nil when it was opened before a power cut (the caller answers EIO).
    func handle(_ fh: UInt64) -> Handle? {
        lock.lock(); defer { lock.unlock() }
        guard let h = handles[fh], h.isControl || h.generation == generation else { return nil }
        return h
    }

    func release(_ fh: UInt64) {
        lock.lock()
        let h = handles.removeValue(forKey: fh)
        lock.unlock()
        if let h, h.fd >= 0 { close(h.fd) }
    }

    // MARK: Durable state

    /// The durable-state tracker of the inode behind `fd`, made on first change after a sync.
    func durableFile(_ h: Handle) throws -> DurableFile {
        let fd = h.fd, ino = h.ino, path = h.path
        lock.lock(); defer { lock.unlock() }
        if let f = files[ino] { f.path = path; return f }
        let f = try DurableFile(reopening: fd, ino: ino, path: path)
        files[ino] = f
        return f
    }

    func forgetDurableFile(ino: UInt64) {
        lock.lock(); defer { lock.unlock() }
        files[ino] = nil
    }

    func nextSeq() -> UInt64 {
        lock.lock(); defer { lock.unlock() }
        seq += 1
        return seq
    }

    /// Bytes of file data under the backing directory (what a quota counts).
    func usage() -> Int64 {
        var total: Int64 = 0
        let fm = FileManager.default
        guard let walk = fm.enumerator(atPath: backing) else { return 0 }
        while let rel = walk.nextObject() as? String {
            if rel == Namespace.stashName { walk.skipDescendants(); continue }
            var st = stat()
            if lstat(backing + "/" + rel, &st) == 0 && (st.st_mode & S_IFMT) == S_IFREG { total += Int64(st.st_size) }
        }
        return total
    }

    // MARK: The common path of every operation

    /// Runs one operation: draws its faults, sleeps or fails as they say, runs `body` with
    /// the rest, kills the caller when asked, and traces what happened.
    func perform(
        _ op: Operation, _ path: String, offset: Int64? = nil, length: Int = 0, growth: () -> Int64 = { 0 },
        _ body: ([FaultAction]) -> Int
    ) -> Int {
        pthread_rwlock_rdlock(&cutLock)
        defer { pthread_rwlock_unlock(&cutLock) }
        lock.lock()
        seq += 1
        let mySeq = seq
        // Growth and usage (a walk of the backing directory) are worked out only when a
        // quota rule matches this operation, and at most once.
        var needed: (growth: Int64, usage: Int64)?
        // With no rules armed (a plain mount, the benchmarks) there is nothing to decide, and
        // the path the rules match on need not be made.
        let fired =
            plan.armed.isEmpty
            ? []
            : plan.decide(op, path: String(path.dropFirst()), length: length) { quota in
                if needed == nil {
                    let g = growth()
                    needed = (g, g > 0 ? usage() : 0)
                }
                return needed!.growth > 0 && needed!.usage + needed!.growth > quota
            }
        lock.unlock()
        var actions: [FaultAction] = []
        var result: Int?
        var killAfter = false
        for f in fired {
            switch f.action {
            case .delay(let us): usleep(us)
            case .fail(let e): if result == nil { result = -Int(e) }
            case .killCaller(let after):
                if after { killAfter = true } else { killCaller(); if result == nil { result = -Int(EIO) } }
            default: actions.append(f.action)
            }
        }
        let outcome = result ?? body(actions)
        if killAfter { killCaller() }
        if let trace {
            for f in fired {
                trace.append(
                    TraceEvent(
                        seq: mySeq, seed: seed, op: op.rawValue, path: path, offset: offset, length: length,
                        fault: f.rule.kind.rawValue, rule: f.number, outcome: FaultFileSystem.outcome(outcome)))
            }
            if fired.isEmpty && traceOperations {
                trace.append(
                    TraceEvent(
                        seq: mySeq, seed: seed, op: op.rawValue, path: path, offset: offset, length: length,
                        fault: nil, rule: nil, outcome: FaultFileSystem.outcome(outcome)))
            }
        }
        return outcome
    }

    static func outcome(_ r: Int) -> String {
        guard r < 0 else { return "ok \(r)" }
        switch Int32(-r) {
        case EIO: return "EIO"
        case ENOSPC: return "ENOSPC"
        case EDQUOT: return "EDQUOT"
        case ENOENT: return "ENOENT"
        default: return "errno \(-r)"
        }
    }

    private func killCaller() {
        let pid = fief_fuse_caller_pid()
        if pid > 0 && pid != getpid() { kill(pid, SIGKILL) }
    }

    /// Closes every handle and forgets pending state, at unmount.
    func shutdown() {
        lock.lock(); defer { lock.unlock() }
        for (_, h) in handles where h.fd >= 0 { close(h.fd) }
        handles.removeAll()
        files.removeAll()
        namespace.forgetAll()
    }
}

/// -errno of the last failed call.
@inline(__always) func failed() -> Int { -Int(errno) }
