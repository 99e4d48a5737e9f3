import Synchronization
#if canImport(Glibc)
    import Glibc
#endif

/// How hard a commit works to survive power loss.
public enum Durability: String, Codable, Sendable, CaseIterable {
    /// Two syncs per commit: a commit acknowledged to the caller survives power loss.
    case full
    /// No syncs. Survives a process crash (the kernel keeps the writes) but NOT power loss:
    /// the file may come back as an older version, or, if the OS wrote pages out of order,
    /// with a selected version whose nodes never reached the disk. For benchmarks only.
    case none
}

public struct DatabaseOptions: Sendable {
    public var durability: Durability
    /// Create the file when it does not exist.
    public var create: Bool
    /// Open the file O_RDONLY and refuse every write; when no writer can exist (a read-only
    /// filesystem, or a file no one may write) and the `.lock` file cannot be made, read
    /// without one.
    package var readOnly = false
    /// Check each node's checksum whenever it is read, not only in `check()`: storage that
    /// returns damaged bytes (a bit flip on the way) gives a `corrupt` error instead of wrong
    /// data. Costs a hash of every page a transaction touches (LMDB and SQLite do not do this).
    public var verifyChecksums = false
    /// 64 bytes (32 for AES-256, then 32 for HMAC-SHA256): the file is encrypted (format 3),
    /// every page authenticated as it is read. A new file is created encrypted with it; an
    /// existing file must have been made with it (`EncryptionError`).
    public var encryptionKey: [UInt8]?

    public init(durability: Durability = .full, create: Bool = true, encryptionKey: [UInt8]? = nil) {
        self.durability = durability
        self.create = create
        self.encryptionKey = encryptionKey
    }
}

/// One committed version as a reader sees it. Immutable, and a class so that handing it
/// to a transaction is one retain, not a copy of every field (the handle keeps the last one
/// built and gives it to every read transaction of that version).
final class Snapshot: @unchecked Sendable {
    let select: SelectBit
    let slot: TopSlot
    let meta: Meta
    let pages: PageSource
    /// The version's decoded table records, shared by the handle's read transactions.
    let catalog: CatalogCache
    /// The file (device and inode) its refs point into: `compact` swaps files, and refs of
    /// versions in two different files cannot be compared.
    let fileID: String
    var version: UInt64 { meta.version }

    init(select: SelectBit, slot: TopSlot, meta: Meta, pages: PageSource, catalog: CatalogCache, fileID: String) {
        self.select = select
        self.slot = slot
        self.meta = meta
        self.pages = pages.embedding(catalog: meta.embeddedCatalogOffset == nil ? 0 : meta.catalogRoot)
        self.catalog = catalog
        self.fileID = fileID
    }
}

/// An open database file. Share one handle between threads; open more handles (or more
/// processes) on the same file freely. Readers see snapshots; one writer at a time across
/// all threads and processes.
public final class Database: @unchecked Sendable {
    public let path: String
    public let options: DatabaseOptions
    private var openFile: DatabaseFile
    /// nil only for a read-only handle whose directory cannot hold the lock file: no writer
    /// can be running on such a file, so its readers need no pins.
    let lockFile: LockFile?
    let readers: ReaderTable
    private var fileID: String
    /// Which file (device and inode) the handle has open now; `compact` changes it.
    var currentFileID: String { state.withLock { fileID } }

    private let state = Lock()
    private var mapping: Mapping
    /// Seals and opens the pages of an encrypted file (nil when plain). `compact` changes it
    /// with the file: a new file has a new salt.
    private var pageCipher: PageCipher?
    /// The open file's format (`compact` may change it: it writes the current one).
    private var fileFormat: FileFormat
    private var knownSize: UInt64
    private var poisoned: String?
    private var closed = false
    /// The last top node validated, so a read transaction on an unchanged version does not
    /// hash the top node again, with that version's catalog cache.
    private var validatedTop: (slot: TopSlot, meta: Meta, catalog: CatalogCache)? { didSet { lastSnapshot = nil } }
    /// The snapshot `cachedSnapshot` built last (of `validatedTop`), handed out again while
    /// the header names the same slot. Cleared with `validatedTop` and by `reopenFile`.
    private var lastSnapshot: Snapshot?
    /// One ended read transaction for the next `read` (see `beginRecycledRead`); it holds no
    /// pin and no reference to the handle.
    private let spareRead = Atomic<Unmanaged<ReadTransaction>?>(nil)
    private let writeLock = Lock()
    /// The writer's free list between commits (see `FreeListCache`).
    let freeListCache = FreeListCache()
    private var watcher: CommitWatcher?
    /// The `batch` calls waiting to share the next write transaction.
    let batches = BatchQueue()
    /// Commits this handle made and the pages they wrote (benchmark counters).
    private let commits = Mutex(CommitCounts())

    /// How many commits this handle made, how many pages they wrote in all (nodes, free list,
    /// top node), and how many syncs they waited for and how long: `fief bench` reports each
    /// per commit from the difference of two, so a write workload shows how much of its time
    /// the disk's flushes took.
    package struct CommitCounts: Sendable { package var commits = 0, pages = 0, syncs = 0, syncNanos: UInt64 = 0 }
    package var commitCounts: CommitCounts { commits.withLock { $0 } }
    func countCommit(pages: Int) {
        commits.withLock {
            $0.commits += 1; $0.pages += pages
        }
    }
    func countSync(nanos: UInt64) {
        commits.withLock {
            $0.syncs += 1; $0.syncNanos += nanos
        }
    }

    public init(path: String, options: DatabaseOptions = DatabaseOptions()) throws {
        try CrashArming.validate()
        try EncryptionError.validate(options.encryptionKey)
        self.path = path
        self.options = options
        if options.create && !options.readOnly && access(path, F_OK) != 0 && errno == ENOENT {
            try Database.createFile(at: path, key: options.encryptionKey)
        }
        let file = try DatabaseFile.open(path: path, writable: !options.readOnly)
        do {
            guard try file.isRegularFile() else { throw EngineError.notARegularFile(path: path) }
            let opened = try Recovery.validate(file, key: options.encryptionKey)
            let size = opened.size
            pageCipher = opened.cipher
            fileFormat = opened.header.format
            var st = stat()
            fstat(file.fd.rawValue, &st)
            fileID = "\(st.st_dev):\(st.st_ino)"
            lockFile = try LockFile.openIfPossible(
                path: path + ".lock", databasePath: path, required: !options.readOnly)
            readers = ReaderTable(lockFile: lockFile)
            mapping = try Mapping(fd: file.fd.rawValue, path: path, covering: size)
            knownSize = size
            openFile = file
        } catch {
            file.close()
            throw error
        }
    }

    deinit {
        dropSpareRead()
        openFile.close()
    }

    /// The descriptor of the database file (it changes only when `compact` swaps files).
    var file: DatabaseFile { state.withLock { openFile } }

    /// After `compact` renamed a new file over the path: use it from now on. Snapshots taken
    /// before keep the old mapping, and with it the old file, alive until they end.
    func reopenFile() throws {
        let f = try DatabaseFile.open(path: path, writable: true)
        let opened = try Recovery.validate(f, key: options.encryptionKey)
        let size = opened.size
        let m = try Mapping(fd: f.fd.rawValue, path: path, covering: size)
        var st = stat()
        fstat(f.fd.rawValue, &st)
        let old: DatabaseFile = state.withLock {
            let old = openFile
            openFile = f
            mapping = m
            pageCipher = opened.cipher
            fileFormat = opened.header.format
            knownSize = size
            validatedTop = nil
            lastSnapshot = nil
            freeListCache.clear()
            fileID = "\(st.st_dev):\(st.st_ino)"
            return old
        }
        dropSpareRead()
        old.close()
    }

    /// Writes a new, empty database atomically: built in a temporary file, synced, then
    /// linked into place, so no process ever sees a half-made file under `path`.
    static func createFile(at path: String, key: [UInt8]?) throws {
        let tmp = "\(path).creating-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        let f = try DatabaseFile.open(path: tmp, writable: true, create: true, exclusive: true)
        defer { f.close(); unlink(tmp) }
        let cipher = key.map { FileCipher.forNewFile(key: $0) }
        var pages = PageWriter(file: f, cipher: cipher?.0, format: .new(encrypted: key != nil))
        let meta = Meta(version: 1, catalogRoot: 0, tableCount: 0, freeListRef: 0, pageCount: 2)
        let metaPage = meta.encode(pages, page: 1)
        let slot = TopSlot(
            ref: UInt64(Layout.pageSize), version: 1, topChecksum: metaPage.withUnsafeBytes(TopSlot.topChecksum))
        try pages.add(page: 1, metaPage)
        try pages.flush()
        try f.write(FileHeader.initialPage(firstSlot: slot, encryption: cipher?.1), at: 0)
        CrashArming.reach(.createTempWritten)
        try f.fullSync()
        CrashArming.reach(.createTempSynced)
        if link(tmp, path) != 0 {
            let e = errno
            if e == EEXIST { return }  // another process created it first; use theirs
            if e == ENOENT { throw EngineError.fileNotFound(path: DatabaseFile.parentDirectory(of: path)) }
            throw EngineError.io(path: path, operation: "create", errno: e)
        }
        CrashArming.reach(.createLinked)
        try DatabaseFile.syncDirectory(of: path)
    }

    // MARK: Errors

    /// Runs `body`, turning damage found deep in the tree into an error that names the file.
    @usableFromInline
    func guarded<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch {
            throw Database.naming(error, path: path)
        }
    }

    /// Damage found deep in the tree, as the error that names the file; other errors as they are.
    static func naming(_ error: Error, path: String) -> Error {
        switch error {
        case let c as CorruptNode:
            return EngineError.corrupt(
                path: path, detail: c.ref == 0 ? c.detail : "node at offset \(c.ref): \(c.detail)")
        case let d as ValueDecodingError:
            return EngineError.corrupt(path: path, detail: d.detail)
        default:
            return error
        }
    }

    // MARK: Snapshots

    private func headerSlot() -> (SelectBit, TopSlot)? {
        let raw = UnsafeRawBufferPointer(start: mapping.base, count: Layout.pageSize)
        guard var select = SelectBit(header: raw) else { return nil }
        if BrokenVariant.on(.readUncommitted) {
            let other = TopSlot(header: raw, index: select.other.index)
            let mine = TopSlot(header: raw, index: select.index)
            if other.isSelfConsistent && other.version > mine.version { select = select.other }
        }
        return (select, TopSlot(header: raw, index: select.index))
    }

    /// The newest committed version, optionally pinned in the reader table. The slot is read
    /// again after pinning: if a writer committed in between, the pin may have come too late
    /// to protect that version's pages, so start over (the proof is in `ReaderTable`).
    func currentSnapshot(pin: Bool, refuseIfClosed: Bool = false) throws -> Snapshot {
        var lastError: Error?
        for attempt in 0..<200 {
            if attempt > 0 { sched_yield() }
            // A slot equal to the one validated last is self-consistent: skip its checksum.
            // (`ensureOpen` folded into the same lock, for `beginRead`.)
            let (current, validated) = try state.withLock {
                if refuseIfClosed && closed { throw EngineError.closed(path: path) }
                return (headerSlot(), validatedTop?.slot)
            }
            guard let (select, slot) = current, slot == validated || slot.isSelfConsistent else {
                lastError = EngineError.corrupt(path: path, detail: "the selected top slot is damaged")
                continue
            }
            var ready: Snapshot?
            if pin {
                try readers.pin(slot.version)
                // The re-read, and (the common case) the whole snapshot from what this handle
                // already validated and mapped: one lock for both.
                let (again, cached) = state.withLock { (headerSlot(), cachedSnapshot(select: select, slot: slot)) }
                guard let again, again.0 == select, again.1 == slot else {
                    readers.unpin(slot.version)
                    continue
                }
                ready = cached
            } else {
                ready = state.withLock { cachedSnapshot(select: select, slot: slot) }
            }
            if let ready { return ready }
            do {
                return try snapshot(select: select, slot: slot)
            } catch {
                if pin { readers.unpin(slot.version) }
                throw error
            }
        }
        throw lastError ?? EngineError.corrupt(path: path, detail: "could not read a stable top slot")
    }

    /// Under `state`: the snapshot of `slot` when its top node was validated last and the file
    /// and the mapping are known to cover it — no hashing, no system call. nil otherwise.
    private func cachedSnapshot(select: SelectBit, slot: TopSlot) -> Snapshot? {
        // The snapshot built last stays right while the header names its slot: its mapping
        // and the file only grow, and `reopenFile` clears it.
        if let last = lastSnapshot, last.slot == slot, last.select == select, knownSize >= last.pages.limit {
            return last
        }
        guard let top = validatedTop, top.slot == slot else { return nil }
        let limit = top.meta.pageCount * UInt64(Layout.pageSize)
        guard knownSize >= limit, UInt64(mapping.length) >= limit else { return nil }
        let built = Snapshot(
            select: select, slot: slot, meta: top.meta, pages: pageSource(mapping, limit: limit), catalog: top.catalog,
            fileID: fileID)
        // An encrypted snapshot holds every page it decrypted: shared by all later
        // transactions it would hold the whole file. Each transaction gets its own.
        if pageCipher == nil { lastSnapshot = built }
        return built
    }

    /// Under `state`: the pages of `mapping` up to `limit`, as a new snapshot reads them (an
    /// encrypted snapshot holds the pages it decrypts, so each gets its own).
    private func pageSource(_ mapping: Mapping, limit: UInt64) -> PageSource {
        PageSource(
            mapping: mapping, limit: limit,
            verifyChecksums: options.verifyChecksums && !BrokenVariant.on(.noChecksumVerify),
            encrypted: pageCipher.map { EncryptedPages(cipher: $0) })
    }

    /// The cipher of the file the handle has open now (nil when plain).
    var cipher: PageCipher? { state.withLock { pageCipher } }

    /// The format of the file the handle has open now.
    var format: FileFormat { state.withLock { fileFormat } }

    private func snapshot(select: SelectBit, slot: TopSlot) throws -> Snapshot {
        try guarded {
            let ps = UInt64(Layout.pageSize)
            let meta: Meta, catalog: CatalogCache
            if let cached = state.withLock({ validatedTop }), cached.slot == slot {
                meta = cached.meta
                catalog = cached.catalog
            } else {
                try ensureFileCovers(slot.ref + ps)
                let source = state.withLock { pageSource(mapping, limit: slot.ref + ps) }
                meta = try slot.decodeTop(try source.page(slot.ref), index: select.index)
                catalog = CatalogCache()
                state.withLock { validatedTop = (slot, meta, catalog) }
            }
            let limit = meta.pageCount * ps
            try ensureFileCovers(limit)
            let (pages, file): (PageSource, String) = try state.withLock {
                if UInt64(mapping.length) < limit {
                    mapping = try Mapping(fd: openFile.fd.rawValue, path: path, covering: limit)
                }
                return (pageSource(mapping, limit: limit), fileID)
            }
            return Snapshot(select: select, slot: slot, meta: meta, pages: pages, catalog: catalog, fileID: file)
        }
    }

    private func ensureFileCovers(_ bytes: UInt64) throws {
        if state.withLock({ knownSize >= bytes }) { return }
        let size = try file.size()
        state.withLock { knownSize = size }
        guard size >= bytes else {
            throw EngineError.truncated(
                path: path, detail: "a committed version needs \(bytes) bytes, the file has \(size)")
        }
    }

    // MARK: Reading

    /// Runs `body` on a snapshot of the newest version; it sees nothing committed later.
    /// (Inlinable, as the typed table calls below: specialized in the caller, a read pays no
    /// generic dispatch.)
    @inlinable
    public func read<T>(_ body: (ReadTransaction) throws -> T) throws -> T {
        var tx = try beginRecycledRead()
        defer { recycle(&tx) }
        return try guarded { try body(tx) }
    }

    /// A read transaction the caller ends (or drops). `refresh()` moves it to the newest version.
    public func beginRead() throws -> ReadTransaction {
        ReadTransaction(db: self, snapshot: try currentSnapshot(pin: true, refuseIfClosed: true))
    }

    /// As `beginRead`, in the transaction the last `read` on this handle ended when nothing
    /// kept it: a point read then allocates nothing, and on an unchanged version finds its
    /// table again without a lookup.
    @usableFromInline
    func beginRecycledRead() throws -> ReadTransaction {
        let snap = try currentSnapshot(pin: true, refuseIfClosed: true)
        guard let spare = spareRead.exchange(nil, ordering: .acquiring) else {
            return ReadTransaction(db: self, snapshot: snap)
        }
        let tx = spare.takeRetainedValue()
        tx.restart(on: self, snap)
        return tx
    }

    /// Ends a `read`'s transaction and keeps it for the next one, unless the body kept a
    /// reference to it (or the slot is taken: another thread's read got there first). Not in
    /// an encrypted file: there each transaction's snapshot holds the pages it decrypted,
    /// which a parked transaction would keep until the next read.
    @usableFromInline
    func recycle(_ tx: inout ReadTransaction) {
        tx.end()
        guard tx.pages.encrypted == nil, isKnownUniquelyReferenced(&tx) else { return }
        tx.park()
        let parked = Unmanaged.passRetained(tx)
        if !spareRead.compareExchange(expected: nil, desired: parked, ordering: .releasing).exchanged {
            parked.release()
        }
    }

    /// Whether an ended `read` transaction waits for the next one (for tests).
    var hasSpareRead: Bool { spareRead.load(ordering: .acquiring) != nil }

    /// Drops the spare read transaction (with the snapshot, mapping and file it still holds).
    private func dropSpareRead() { spareRead.exchange(nil, ordering: .acquiring)?.release() }

    /// Keeps the newest version alive and readable until released, from any thread.
    public func pin() throws -> PinnedVersion {
        try ensureOpen()
        return PinnedVersion(db: self, snapshot: try currentSnapshot(pin: true))
    }

    /// Reads the version `pinned` holds.
    public func read<T>(_ pinned: PinnedVersion, _ body: (ReadTransaction) throws -> T) throws -> T {
        guard let snap = pinned.snapshot, pinned.db === self else { throw EngineError.transactionClosed }
        try readers.pin(snap.version)
        let tx = ReadTransaction(db: self, snapshot: snap)
        defer { tx.end() }
        return try guarded { try body(tx) }
    }

    /// The newest committed version number.
    public func latestVersion() throws -> UInt64 { try currentSnapshot(pin: false).version }

    /// Calls `body` after commits made by any thread or process, on a thread of the
    /// handle's own, with the versions each call covers: successive calls tile the versions
    /// after the newest one at registration, coalescing commits that land close together,
    /// never skipping or repeating one. A commit wakes watchers through the `.lock` file's
    /// doorbell; commits that do not ring are seen within 200 ms. Keep the returned
    /// observation: releasing it (or `cancel()`) stops delivery.
    public func observeCommits(_ body: @escaping @Sendable (CommitRange) -> Void) throws -> CommitObservation {
        try ensureOpen()
        let from = try latestVersion()
        let w = state.withLock { () -> CommitWatcher in
            if let watcher { return watcher }
            let w = CommitWatcher(db: self, lockFile: lockFile)
            watcher = w
            return w
        }
        return try w.add(from: from, body)
    }

    /// How the handle's commit watcher woke so far (nil before anything was observed).
    package var commitWatcherWakeCounts: (doorbell: Int, timeout: Int)? { state.withLock { watcher }?.wakeCounts }

    // MARK: Writing

    /// Runs `body` as the only writer across all threads and processes. Commits when it
    /// returns (durably, under `.full`, before `write` returns); rolls back if it throws.
    @discardableResult
    public func write<T>(_ body: (WriteTransaction) throws -> T) throws -> T {
        try asWriter {
            try ensureOpen()
            if let reason = state.withLock({ poisoned }) {
                throw EngineError.io(
                    path: path, operation: "write (handle unusable after: \(reason); reopen the database)", errno: EIO)
            }
            let base = try currentSnapshot(pin: false)
            let pins = BrokenVariant.on(.reusePinned) ? [] : try readers.pinnedVersions(olderThan: base.version)
            let tx = try guarded { try WriteTransaction(db: self, base: base, pins: pins) }
            defer { tx.end() }
            let result = try guarded { try body(tx) }
            try guarded { try tx.commit() }
            return result
        }
    }

    /// Holds the writer role (this thread, this handle, every process) while `body` runs.
    func asWriter<T>(_ body: () throws -> T) throws -> T {
        guard !options.readOnly, let lockFile else { throw EngineError.readOnly(path: path) }
        let me = pthread_self()
        let id = currentFileID
        guard !WriterRegistry.isWriting(id, thread: me) else { throw EngineError.nestedWrite }
        writeLock.lock()
        defer { writeLock.unlock() }
        try lockFile.lockWriter()
        defer { lockFile.unlockWriter() }
        WriterRegistry.set(id, thread: me)
        defer { WriterRegistry.clear(id) }
        return try body()
    }

    /// As writer, and as the only open handle on the file.
    func exclusiveWrite<T>(_ body: () throws -> T) throws -> T {
        try asWriter {
            guard let lockFile, try lockFile.tryExclusiveOpen() else {
                throw EngineError.databaseInUse(path: path, detail: "another handle or process has it open")
            }
            defer { try? lockFile.shareOpen() }
            return try body()
        }
    }

    /// Whether any handle, in this process or another, has the database at `path` open.
    /// A database whose handles all died (even by SIGKILL) reports false.
    package static func isOpenAnywhere(path: String) throws -> Bool {
        try LockFile.isHeld(path: path + ".lock")
    }

    /// True when this is the only handle open on the file, in every process; it then stays
    /// the only one until it is dropped (other opens wait), so the caller may remove the
    /// files. False (and nothing changes) while another handle has the file open.
    package func becomeOnlyHandle() throws -> Bool {
        guard let lockFile else { return false }
        return try lockFile.tryExclusiveOpen()
    }

    func poison(_ reason: String) { state.withLock { poisoned = reason } }

    /// Ends the handle's use: waits for a write running on it, then refuses every new
    /// transaction (`write`, `batch`, `beginRead`, `pin`) with `EngineError.closed`.
    /// Transactions already open go on until they end. The file, its mapping and the lock
    /// file are released with the last reference to the handle.
    public func close() {
        // Observers stop with the handle: their watcher thread ends at its next wake.
        state.withLock { watcher }?.close()
        // From inside a write (or a batch body) on this thread, waiting would be for ourselves.
        if WriterRegistry.isWriting(currentFileID, thread: pthread_self()) {
            state.withLock { closed = true }
            return
        }
        writeLock.withLock { state.withLock { closed = true } }
        dropSpareRead()
    }

    func ensureOpen() throws {
        if state.withLock({ closed }) { throw EngineError.closed(path: path) }
    }

    /// Called by a commit once its select bit is durable (under `none`: written), with the
    /// slot it flipped to and the top node it wrote. That top node becomes the handle's
    /// validated one, as if `snapshot` had read and checked it: the writer built it in
    /// memory, and its page is live and so never written again (I1), so reading it back would
    /// only verify the writer's own bytes. (Other handles and processes validate it from the
    /// file; `check()` and every open do too; storage damage to it cannot reach a later
    /// version through this copy, since the next commit writes a new top node from its own
    /// `Meta` anyway.) Saves the next transaction on this handle a page hash and a decode.
    /// `tables`, those the writer opened as this version has them, seed its catalog cache;
    /// `sidecar` is what the writer's layer above knows of the version.
    func published(fileSize: UInt64, top: TopSlot, meta: Meta, tables: [String: TableState], sidecar: AnyObject?) {
        let catalog = CatalogCache(seeded: tables, sidecar: sidecar)
        state.withLock {
            knownSize = max(knownSize, fileSize)
            validatedTop = (top, meta, catalog)
        }
    }
}

/// Which thread is inside a write on which file (one per file per process, as the writer
/// lock allows), so a nested write is refused instead of deadlocking on our own lock.
enum WriterRegistry {
    private static let lock = Lock()
    nonisolated(unsafe) private static var writers: [String: pthread_t] = [:]

    static func isWriting(_ file: String, thread: pthread_t) -> Bool {
        lock.withLock { writers[file].map { pthread_equal($0, thread) != 0 } ?? false }
    }

    static func set(_ file: String, thread: pthread_t) { lock.withLock { writers[file] = thread } }
    static func clear(_ file: String) { lock.withLock { writers[file] = nil } }
}
