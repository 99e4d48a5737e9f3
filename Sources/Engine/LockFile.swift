#if canImport(Glibc)
    import Glibc
#endif
import CFiefSys

/// The `.lock` file beside a database: a shared-memory header with the writer mutex and the
/// commit doorbell, a table of reader pins (see `ReaderTable`), and byte-range locks that
/// guard the table's claims and mark open handles. The byte locks are Linux
/// open-file-description locks: the kernel drops them when the holder dies, and two handles
/// in one process exclude each other as two processes do.
final class LockFile {
    let path: String
    let fd: Int32
    let table: UnsafeMutableRawPointer
    let slotCount: Int

    static let magic: [UInt8] = Array("FIEFLCK2".utf8)
    /// Engines before the shared writer mutex: same fields, a 64-byte header, an `fcntl`
    /// writer lock. Upgraded in place when no handle has it open.
    static let legacyMagic: [UInt8] = Array("FIEFLCK1".utf8)
    static let headerSize = 128
    static let slotSize = ReaderSlot.size
    static let defaultSlots = 512
    static var fileSize: Int { headerSize + defaultSlots * slotSize }

    // Header fields (docs/FORMAT.md §2.1); the doorbell's are with its functions below.
    private static let slotCountOffset = 8
    private static let slotHighWaterOffset = 12
    private static let writerMutexOffset = 64

    // Lock bytes, far past the table so their meaning never mixes with its contents.
    private static let tableByte: off_t = (1 << 20) + 1
    private static let openByte: off_t = (1 << 20) + 2

    // Linux open-file-description lock commands (fcntl.h, _GNU_SOURCE).
    private static let F_OFD_SETLK: Int32 = 37
    private static let F_OFD_SETLKW: Int32 = 38

    private let writerMutex: WriterMutex

    init(path: String) throws {
        self.path = path
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw EngineError.io(path: path, operation: "open lock file", errno: errno) }
        self.fd = fd
        slotCount = LockFile.defaultSlots
        var mapped: UnsafeMutableRawPointer?
        do {
            try LockFile.setLock(fd: fd, path: path, byte: LockFile.tableByte, type: F_WRLCK, wait: true)
            defer {
                _ = try? LockFile.setLock(fd: fd, path: path, byte: LockFile.tableByte, type: F_UNLCK, wait: false)
            }
            var st = stat()
            guard fstat(fd, &st) == 0 else { throw EngineError.io(path: path, operation: "fstat", errno: errno) }
            if st.st_size < LockFile.fileSize {
                guard ftruncate(fd, off_t(LockFile.fileSize)) == 0 else {
                    throw EngineError.io(path: path, operation: "grow lock file", errno: errno)
                }
            }
            let p = mmap(nil, LockFile.fileSize, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)
            guard let p, p != MAP_FAILED else {
                throw EngineError.io(path: path, operation: "mmap lock file", errno: errno)
            }
            mapped = p
            // Under the table lock no other opener is between its mapping and its open lock,
            // so winning the open byte exclusively means no other handle has the file open.
            let alone = try LockFile.setLock(fd: fd, path: path, byte: LockFile.openByte, type: F_WRLCK, wait: false)
            try LockFile.prepareHeader(p, path: path, alone: alone)
            try LockFile.setLock(fd: fd, path: path, byte: LockFile.openByte, type: F_RDLCK, wait: true)
        } catch {
            if let mapped { munmap(mapped, LockFile.fileSize) }
            Glibc.close(fd)
            throw error
        }
        table = mapped!
        writerMutex = WriterMutex(at: table + LockFile.writerMutexOffset)
    }

    /// Under the table lock: checks the header, or writes it when the file is new (or of
    /// the previous layout, or left by processes that are all gone) and nobody else has it
    /// open. A writer mutex or high-water mark left by dead processes is reset then.
    private static func prepareHeader(_ p: UnsafeMutableRawPointer, path: String, alone: Bool) throws {
        let head = UnsafeMutableRawBufferPointer(start: p, count: headerSize)
        let found = Array(UnsafeRawBufferPointer(head)[0..<8])
        let fresh = found == [UInt8](repeating: 0, count: 8)
        if found == magic {
            guard UnsafeRawBufferPointer(head).u32(slotCountOffset) == UInt32(defaultSlots) else {
                throw EngineError.lockFileCorrupt(
                    path: path, detail: "unknown slot count; remove it when no process uses the database")
            }
            guard alone else { return }
        } else if fresh && !alone {
            // Someone has the file open, yet its header is gone (truncated, or reverted under
            // running processes): a fresh mutex could let a second writer in beside theirs.
            throw EngineError.lockFileCorrupt(
                path: path,
                detail: "its header was reset while other handles have it open; close every process using the database")
        } else if found == legacyMagic && !alone {
            throw EngineError.lockFileCorrupt(
                path: path, detail: "an older Fief engine has the database open (lock file FIEFLCK1); close it first")
        } else if !fresh && found != legacyMagic {
            throw EngineError.lockFileCorrupt(
                path: path, detail: "unknown contents; remove it when no process uses the database")
        }
        if found != magic {
            // New, or the previous layout (its slots sat at other offsets): start empty.
            UnsafeMutableRawBufferPointer(start: p, count: fileSize).initializeMemory(as: UInt8.self, repeating: 0)
            for (i, b) in magic.enumerated() { head.setU8(b, at: i) }
            head.setU32(UInt32(defaultSlots), at: slotCountOffset)
        }
        try WriterMutex(at: p + writerMutexOffset).initialise(path: path)
        // Slots of dead processes stay (and are reclaimed as usual); the mark covers them.
        let used =
            (0..<defaultSlots).last { ReaderSlot(base: p + headerSize + $0 * slotSize).pid != 0 }.map { $0 + 1 } ?? 0
        fief_store_u32_release(p + slotHighWaterOffset, UInt32(used))
    }

    /// The lock file, or nil when it is not `required` and no writer can exist: the
    /// filesystem is read-only, or the database file is writable by no one. A reader without
    /// the lock file pins nothing, so a writer elsewhere could reuse the pages it reads;
    /// merely lacking permission to create the lock file is therefore an error.
    static func openIfPossible(path: String, databasePath: String, required: Bool) throws -> LockFile? {
        do {
            return try LockFile(path: path)
        } catch EngineError.io(_, _, let e) where !required && [EROFS, EACCES, EPERM].contains(e) {
            var st = stat()
            let nobodyWrites = stat(databasePath, &st) == 0 && st.st_mode & 0o222 == 0
            guard e == EROFS || nobodyWrites else {
                throw EngineError.io(
                    path: path,
                    operation: "open the lock file (without it a reader cannot pin what it reads while others write; "
                        + "make the directory writable, or the database file read-only for everyone)", errno: e)
            }
            return nil
        }
    }

    deinit {
        munmap(table, LockFile.fileSize)
        Glibc.close(fd)
    }

    /// Returns false when `wait` is false and another holder conflicts.
    @discardableResult
    private static func setLock(fd: Int32, path: String, byte: off_t, type: Int32, wait: Bool) throws -> Bool {
        var fl = flock()
        fl.l_type = Int16(type)
        fl.l_whence = Int16(SEEK_SET)
        fl.l_start = byte
        fl.l_len = 1
        fl.l_pid = 0
        while true {
            if fcntl(fd, wait ? F_OFD_SETLKW : F_OFD_SETLK, &fl) == 0 { return true }
            let e = errno
            if e == EINTR { continue }
            if !wait && (e == EAGAIN || e == EACCES) { return false }
            throw EngineError.io(path: path, operation: "lock", errno: e)
        }
    }

    func lockWriter() throws { try writerMutex.lock(path: path) }
    func unlockWriter() { writerMutex.unlock() }

    func withTableLock<T>(_ body: () throws -> T) throws -> T {
        try LockFile.setLock(fd: fd, path: path, byte: LockFile.tableByte, type: F_WRLCK, wait: true)
        defer { _ = try? LockFile.setLock(fd: fd, path: path, byte: LockFile.tableByte, type: F_UNLCK, wait: false) }
        return try body()
    }

    /// Tries to become the only handle on the database (for compact). On success the caller
    /// must call `shareOpen()` when done.
    func tryExclusiveOpen() throws -> Bool {
        try LockFile.setLock(fd: fd, path: path, byte: LockFile.openByte, type: F_WRLCK, wait: false)
    }

    /// Whether any handle, in any process, has the database whose lock file is `path` open:
    /// every handle holds a shared lock on the open byte for its life, and the kernel drops
    /// it when the holder dies, so a lock file left by dead processes reports false. Opens a
    /// descriptor of its own and locks nothing it keeps (OFD locks: closing this descriptor
    /// does not touch the locks of other descriptors in this process, as POSIX locks would).
    static func isHeld(path: String) throws -> Bool {
        let fd = open(path, O_RDWR | O_CLOEXEC)
        if fd < 0 {
            if errno == ENOENT { return false }
            throw EngineError.io(path: path, operation: "open lock file", errno: errno)
        }
        defer { Glibc.close(fd) }
        return !(try setLock(fd: fd, path: path, byte: openByte, type: F_WRLCK, wait: false))
    }

    func shareOpen() throws {
        try LockFile.setLock(fd: fd, path: path, byte: LockFile.openByte, type: F_RDLCK, wait: true)
    }

    // MARK: The commit doorbell

    // Header bytes 16–19: a counter every commit bumps after publishing (the futex word);
    // 20–23: how many watchers are between registering and the end of their wait;
    // 24–31: the version it published. Zero in lock files of engines that never ring.
    private static let commitSeqOffset = 16
    private static let waitersOffset = 20
    private static let publishedVersionOffset = 24
    // Bytes 32–39: the newest version whose select-bit flip a writer saw synced.
    private static let syncedVersionOffset = 32

    /// Bumped by every commit once published; watchers sleep on it.
    var commitSeq: UInt32 { fief_load_u32_acquire(table + LockFile.commitSeqOffset) }
    var publishedVersion: UInt64 { fief_load_u64_acquire(table + LockFile.publishedVersionOffset) }

    /// Tells every process watching the database that `version` is published. The wake (a
    /// system call) is made only when some watcher is registered (I22): a watcher registers
    /// (`addWaiter`) before it reads the counter, and the ringer reads the count after its
    /// bump, all sequentially consistent. So if the count read here is 0, every watcher's
    /// registration, and so its next read of the counter, comes after the bump in that total
    /// order: it reads the new counter (and, after it, the new version) and needs no wake. A
    /// watcher registered before the read is counted and woken.
    func ringDoorbell(version: UInt64) {
        fief_store_u64_release(table + LockFile.publishedVersionOffset, version)
        _ = fief_fetch_add_u32_seq_cst(table + LockFile.commitSeqOffset, 1)
        if fief_load_u32_seq_cst(table + LockFile.waitersOffset) != 0 {
            fief_futex_wake_all(table + LockFile.commitSeqOffset)
        }
    }

    /// A watcher is about to read the counter and wait on it: count it, so a commit rings.
    /// Paired with `removeWaiter` once the wait is over. (A process killed in between leaves
    /// the count high: commits then wake as they did before the count existed.)
    func addWaiter() {
        _ = fief_fetch_add_u32_seq_cst(table + LockFile.waitersOffset, 1)
    }

    func removeWaiter() {
        _ = fief_fetch_sub_u32_seq_cst(table + LockFile.waitersOffset, 1)
    }

    /// The newest version whose flip is known durable: a writer records it once its sync
    /// after the flip returned. A writer that died between its flip and that sync leaves an
    /// older value, so the next one knows to sync before touching the other slot.
    var syncedVersion: UInt64 { fief_load_u64_acquire(table + LockFile.syncedVersionOffset) }

    func recordSynced(version: UInt64) { fief_store_u64_release(table + LockFile.syncedVersionOffset, version) }

    /// Sleeps until a commit rings after `seq` was read, or `timeoutMs` pass. True when rung.
    func waitForDoorbell(after seq: UInt32, timeoutMs: Int) -> Bool {
        fief_futex_wait(table + LockFile.commitSeqOffset, seq, timeoutMs) == 0
    }

    /// One past the highest reader slot claimed since the header was last written: slots are
    /// claimed lowest first, so the writer's per-commit scan stops here. Raised under the
    /// table lock, before the claimer's first pin (see `ReaderTable` for why that suffices).
    var slotHighWater: Int { Int(fief_load_u32_acquire(table + LockFile.slotHighWaterOffset)) }

    func raiseSlotHighWater(toCover slot: Int) {
        if slot + 1 > slotHighWater { fief_store_u32_release(table + LockFile.slotHighWaterOffset, UInt32(slot + 1)) }
    }

    /// Reader slot `i` (see `ReaderSlot` for its layout).
    func slot(_ i: Int) -> ReaderSlot {
        ReaderSlot(base: table + LockFile.headerSize + i * LockFile.slotSize)
    }
}
