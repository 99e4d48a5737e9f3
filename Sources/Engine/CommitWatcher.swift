#if canImport(Glibc)
    import Glibc
#endif

/// The versions a delivery covers: everything committed after `from`, up to `to`. Successive
/// deliveries to one observer tile the version line: each starts where the last ended.
public struct CommitRange: Sendable, Equatable, CustomStringConvertible {
    public let from: UInt64
    public let to: UInt64
    public var description: String { "(\(from), \(to)]" }
}

/// Keeps `observeCommits` alive; delivery stops when it is cancelled or released.
public final class CommitObservation: @unchecked Sendable {
    let watcher: CommitWatcher
    let id: Int
    /// The newest version at registration: the first delivery starts here.
    public let from: UInt64

    init(watcher: CommitWatcher, id: Int, from: UInt64) { self.watcher = watcher; self.id = id; self.from = from }

    public func cancel() { watcher.remove(id) }
    deinit { cancel() }
}

/// One thread per database handle that learns of commits from any process and tells the
/// handle's observers. It sleeps on the `.lock` file's doorbell (a shared futex every commit
/// rings), and wakes at least every `pollMilliseconds` anyway, so commits from engines that
/// never ring (or from a writer that died between publishing and ringing) are still seen.
/// Nothing is written per commit beyond the doorbell, and a handle without observers runs
/// no thread.
final class CommitWatcher: @unchecked Sendable {
    static let pollMilliseconds = 200

    private struct Observer {
        var last: UInt64
        let deliver: @Sendable (CommitRange) -> Void
    }

    private weak var db: Database?
    /// Weak, so an observation outliving its handle does not keep the handle's open lock
    /// (which `compact` waits on); the thread holds it only across one wait.
    private weak var lockFile: LockFile?
    private let hasLockFile: Bool
    private let lock = Lock()
    private var observers: [Int: Observer] = [:]
    private var nextID = 0
    private var running = false
    private var closed = false
    private var deliveries = 0
    /// How the thread woke, for tests and diagnostics: by a doorbell or by the poll timeout.
    private(set) var wokenByDoorbell = 0
    private(set) var wokenByTimeout = 0

    init(db: Database, lockFile: LockFile?) {
        self.db = db
        self.lockFile = lockFile
        hasLockFile = lockFile != nil
    }

    func add(from version: UInt64, _ deliver: @escaping @Sendable (CommitRange) -> Void) throws -> CommitObservation {
        let (id, start) = try lock.withLock { () throws -> (Int, Bool) in
            if closed { throw EngineError.closed(path: db?.path ?? "") }
            nextID += 1
            observers[nextID] = Observer(last: version, deliver: deliver)
            defer { running = true }
            return (nextID, !running)
        }
        if start {
            do { try startThread() } catch { remove(id); throw error }
        }
        return CommitObservation(watcher: self, id: id, from: version)
    }

    func remove(_ id: Int) { lock.withLock { _ = observers.removeValue(forKey: id) } }

    /// The handle closed: no observer stays, none can be added.
    func close() {
        lock.withLock {
            closed = true; observers.removeAll()
        }
    }

    var wakeCounts: (doorbell: Int, timeout: Int) { lock.withLock { (wokenByDoorbell, wokenByTimeout) } }

    private func startThread() throws {
        let box = Unmanaged.passRetained(self)
        var thread = pthread_t()
        let r = pthread_create(
            &thread, nil,
            { raw in
                let watcher = Unmanaged<CommitWatcher>.fromOpaque(raw!).takeRetainedValue()
                watcher.run()
                return nil
            }, box.toOpaque())
        guard r == 0 else {
            box.release()
            lock.withLock { running = false }
            throw EngineError.io(path: db?.path ?? "", operation: "start the commit watcher thread", errno: r)
        }
        pthread_detach(thread)
    }

    private func run() {
        while true {
            // The counter is read before the version, so a commit that lands in between
            // changes it and the wait below returns at once.
            let lockFile = self.lockFile
            if hasLockFile && lockFile == nil { lock.withLock { running = false }; break }
            // Registered before reading the counter, until the wait below ends (on every way
            // out of this iteration), so a commit that rings in between wakes us (I22).
            lockFile?.addWaiter()
            defer { lockFile?.removeWaiter() }
            let seq = lockFile?.commitSeq ?? 0
            guard let db = self.db else { lock.withLock { running = false }; break }
            let latest = try? db.latestVersion()
            // Whether to stop is decided under the same lock that `add` checks, so an
            // observer added as the last one leaves is never left without a thread (or
            // served by two).
            let due: [(CommitRange, @Sendable (CommitRange) -> Void)]? = lock.withLock {
                guard !observers.isEmpty else { running = false; return nil }
                guard let latest else { return [] }
                var out: [(CommitRange, @Sendable (CommitRange) -> Void)] = []
                for (id, o) in observers {
                    // A version seen before its select-bit sync failed and was undone: the
                    // next commit reuses its number, so start again from what is current.
                    if latest < o.last { observers[id]!.last = latest; continue }
                    guard latest > o.last else { continue }
                    deliveries += 1
                    let from = BrokenVariant.on(.notifyOffByOne) ? o.last + 1 : o.last
                    if !(BrokenVariant.on(.notifySkip) && deliveries % 3 == 0) {
                        out.append((CommitRange(from: from, to: latest), o.deliver))
                    }
                    if BrokenVariant.on(.notifyDup) && deliveries % 3 == 0 {
                        out.append((CommitRange(from: from, to: latest), o.deliver))
                    }
                    observers[id]!.last = latest
                }
                return out
            }
            guard let due else { break }
            for (range, deliver) in due { deliver(range) }
            if let lockFile {
                let rung = lockFile.waitForDoorbell(after: seq, timeoutMs: CommitWatcher.pollMilliseconds)
                lock.withLock { if rung { wokenByDoorbell += 1 } else { wokenByTimeout += 1 } }
            } else {
                usleep(useconds_t(CommitWatcher.pollMilliseconds * 1000))
                lock.withLock { wokenByTimeout += 1 }
            }
        }
    }
}
