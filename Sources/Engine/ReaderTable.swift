import ProcFS
import CFiefSys
#if canImport(Glibc)
    import Glibc
#endif

/// Versions pinned by readers, shared by every process through the lock file (one
/// `ReaderSlot` per pinned version per handle). As in LMDB, a slot belongs to its handle for
/// the handle's life: it is claimed under the table lock once (with pid and process start
/// time), and from then on pinning a version is one atomic store into it and one fence, and
/// unpinning a store of 0 — no system call on either path. Transactions and PinnedVersions of
/// one handle that pin the same version share its slot, counted in memory, so a thread may
/// hold any number of them at once (nested pins); each other version takes another slot from
/// the handle's pool of idle ones. A slot whose process is gone (or whose pid now names a
/// different process) is reclaimed by the next writer that meets it, or by the next claim
/// that finds the table full.
///
/// Why a pin made without a lock is safe (with `Database.currentSnapshot` and
/// `oldestPinned`). A reader R pins in three steps: (1) it reads the header: version v is
/// current; (2) it stores v into its slot, then executes a sequentially consistent fence
/// F_R; (3) it reads the header again, and uses v only if the header still names it —
/// otherwise it unpins and starts over. A writer W, before choosing which freed pages it may
/// reuse, executes a fence F_W and then reads every slot (`oldestPinned`). Pages that only
/// versions older than W's base c (the current version while W holds the writer lock) can
/// reach are reused only if no slot shows such a version. Suppose R uses v < c. The header
/// store that made c current (W's own previous commit, or another writer's, which released
/// the writer lock before W took it) happens before F_W. The fences are totally ordered:
///  - if F_W came before F_R, that header store happens before R's read in (3), so R sees c
///    (or later), not v, and starts over without using v;
///  - if F_R came before F_W, R's store in (2) is visible to W's reads after F_W: W sees v
///    in R's slot and keeps v's pages.
/// So W never reuses a page of a version a reader uses. If R uses v = c, W keeps c's pages
/// anyway. A pin shared in memory (the version already in this handle's slot) is the same
/// argument with the first pinner's store, made visible to R through the handle's mutex.
/// Unpinning needs no fence: a writer that still sees the old version only keeps pages longer.
final class ReaderTable {
    /// nil: a read-only handle without a lock file (no writer can run); pins are counted
    /// in memory only.
    private let lockFile: LockFile?
    private let lock = Lock()
    /// The versions this handle pins now, each in a slot, with how many transactions and
    /// PinnedVersions hold it. Rarely more than one or two, so a list beats a dictionary.
    /// (Under `lock`, which makes the dynamic exclusivity checks redundant on this path.)
    @exclusivity(unchecked) private var pins: [(version: UInt64, slot: Int, refs: Int)] = []
    /// Slots this handle owns that hold no version, ready for the next pin.
    @exclusivity(unchecked) private var idle: [Int] = []
    /// How many idle slots a handle keeps; more go back to the table (a burst of pins of
    /// many different versions must not hold slots that other processes need).
    static let idleKept = 4
    /// How many slots this handle has claimed under the table lock, ever (for tests).
    private(set) var claims = 0
    private let pid = UInt32(getpid())
    private let startTime = ProcessIdentity.startTime(of: getpid()) ?? 0

    init(lockFile: LockFile?) { self.lockFile = lockFile }

    deinit {
        // Every transaction and PinnedVersion holds the Database, so none is left: give the
        // slots back. If the lock fails they stay ours until the table fills and this
        // process is gone, when a claim reclaims them.
        let mine = idle + pins.map(\.slot).filter { $0 >= 0 }
        guard let lockFile, !mine.isEmpty else { return }
        _ = try? lockFile.withTableLock { for i in mine { lockFile.slot(i).free() } }
    }

    /// Pins `version` for this handle and makes the pin visible to every writer before the
    /// caller reads the header again (see the proof above). A system call only when the
    /// handle needs a slot it has never had.
    func pin(_ version: UInt64) throws {
        try lock.withLock {
            if let i = pinIndex(version) {
                pins[i].refs += 1
                return
            }
            guard let lockFile else {
                pins.append((version, -1, 1))
                return
            }
            let slot = try idle.popLast() ?? claimSlot(lockFile)
            lockFile.slot(slot).publish(version)
            pins.append((version, slot, 1))
        }
        fief_fence()  // F_R: the store above before the caller's next read of the header
    }

    func unpin(_ version: UInt64) {
        let surplus: Int? = lock.withLock {
            guard let i = pinIndex(version) else { return nil }
            if pins[i].refs > 1 {
                pins[i].refs -= 1
                return nil
            }
            let slot = pins[i].slot
            if i == pins.count - 1 { pins.removeLast() } else { pins.remove(at: i) }
            guard let lockFile, slot >= 0 else { return nil }
            lockFile.slot(slot).publish(0)
            guard idle.count < ReaderTable.idleKept else { return slot }
            idle.append(slot)
            return nil
        }
        if let surplus, let lockFile { _ = try? lockFile.withTableLock { lockFile.slot(surplus).free() } }
    }

    /// Under `lock`: where `version` is in `pins` (a plain loop: this runs twice per read).
    @inline(__always)
    private func pinIndex(_ version: UInt64) -> Int? {
        var i = 0
        while i < pins.count {
            if pins[i].version == version { return i }
            i += 1
        }
        return nil
    }

    /// Under `lock`: takes a free slot of the table for this handle, reclaiming dead
    /// processes' slots if there is none.
    private func claimSlot(_ lockFile: LockFile) throws -> Int {
        let slot = try lockFile.withTableLock { () throws -> Int in
            func firstFree() -> Int? { (0..<lockFile.slotCount).first { lockFile.slot($0).pid == 0 } }
            var found = firstFree()
            if found == nil { reclaimDeadLocked(); found = firstFree() }
            guard let free = found else {
                throw EngineError.readerTableFull(path: lockFile.path, slots: lockFile.slotCount)
            }
            lockFile.slot(free).claim(pid: pid, startTime: startTime)
            if !BrokenVariant.on(.noHighWater) { lockFile.raiseSlotHighWater(toCover: free) }
            return free
        }
        claims += 1
        return slot
    }

    /// Pins of live processes, after clearing those of dead ones.
    func livePins() throws -> [(pid: Int32, version: UInt64)] {
        guard let lockFile else { return lock.withLock { pins.map { (Int32(bitPattern: pid), $0.version) } } }
        return try lockFile.withTableLock {
            reclaimDeadLocked()
            var out: [(Int32, UInt64)] = []
            for i in 0..<lockFile.slotCount {
                let s = lockFile.slot(i)
                let p = s.pid, v = s.version
                if p != 0 && v != 0 { out.append((Int32(bitPattern: p), v)) }
            }
            return out
        }
    }

    /// The oldest live pin older than `current` (the newest version, which the writer keeps
    /// live anyway), or nil. The writer's per-commit path: it reads the table without the
    /// table lock (after the fence F_W of the proof above), and takes the lock (and reclaims
    /// dead pins) only if some slot holds an older version.
    func oldestPinned(olderThan current: UInt64) throws -> UInt64? {
        try pinnedVersions(olderThan: current).first
    }

    /// Every version a live reader pins that is older than `current`, ascending, each once;
    /// the writer's per-commit path, as `oldestPinned`.
    func pinnedVersions(olderThan current: UInt64) throws -> [UInt64] {
        guard let lockFile else { return [] }
        fief_fence()  // F_W: the header store that made `current` current, before the reads below
        var anyOlder = false
        // Every claimed slot's version, each an acquire load (as `ReaderSlot.version`), on
        // one pointer walk: this runs on every commit. A slot above the high-water mark has
        // never been claimed; a claim raises the mark before its claimer's first pin, so a
        // pin this scan must see (by the proof above) comes with the mark that covers it.
        let versions = lockFile.slot(0).base + 16
        for i in 0..<min(lockFile.slotHighWater, lockFile.slotCount) {
            let v = fief_load_u64_acquire(versions + i &* ReaderSlot.size)
            if v != 0 && v < current { anyOlder = true; break }
        }
        guard anyOlder else { return [] }
        return Set(try livePins().map(\.version).filter { $0 < current }).sorted()
    }

    private func reclaimDeadLocked() {
        guard let lockFile, !BrokenVariant.on(.noReclaim) else { return }
        for i in 0..<lockFile.slotCount {
            let s = lockFile.slot(i)
            let p = s.pid
            guard p != 0, p != pid else { continue }
            if !ProcessIdentity.isAlive(pid: Int32(bitPattern: p), startTime: s.startTime) { s.free() }
        }
    }
}

/// Telling a live process from a dead one whose pid may have been reused.
enum ProcessIdentity {
    static func isAlive(pid: Int32, startTime: UInt64) -> Bool {
        if kill(pid, 0) != 0 && errno == ESRCH { return false }
        guard startTime != 0, let now = self.startTime(of: pid) else { return true }
        return now == startTime
    }

    /// When the process started (`ProcStat.startTime`), to tell it from a later one with its pid.
    static func startTime(of pid: Int32) -> UInt64? { ProcStat(pid: pid)?.startTime }
}
