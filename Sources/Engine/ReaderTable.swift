#if canImport(Glibc)
import Glibc
#endif

/// Versions pinned by readers, shared by every process through the lock file. A slot holds
/// (pid, process start time, version); threads of one process share a slot per version,
/// counted in memory, so most read transactions take no system call. A slot whose process is
/// gone (or whose pid now names a different process) is reclaimed by the next scan.
final class ReaderTable {
    /// nil: a read-only handle without a lock file; pins are counted here only.
    private let lockFile: LockFile?
    private let lock = Lock()
    private var pins: [UInt64: (slot: Int, refs: Int)] = [:]
    private let pid = UInt32(getpid())
    private let startTime = ProcessIdentity.startTime(of: getpid()) ?? 0

    init(lockFile: LockFile?) { self.lockFile = lockFile }

    func pin(_ version: UInt64) throws {
        try lock.withLock {
            if let e = pins[version] {
                pins[version] = (e.slot, e.refs + 1)
                return
            }
            guard let lockFile else {
                pins[version] = (-1, 1)
                return
            }
            let slot = try lockFile.withTableLock { () throws -> Int in
                func firstFree() -> Int? {
                    (0..<lockFile.slotCount).first { UnsafeRawBufferPointer(lockFile.slot($0)).u32(0) == 0 }
                }
                var found = firstFree()
                if found == nil { reclaimDeadLocked(); found = firstFree() }
                guard let free = found else {
                    throw EngineError.readerTableFull(path: lockFile.path, slots: lockFile.slotCount)
                }
                let s = lockFile.slot(free)
                s.setU64(startTime, at: 8)
                s.setU64(version, at: 16)
                s.setU32(pid, at: 0)
                return free
            }
            pins[version] = (slot, 1)
        }
    }

    func unpin(_ version: UInt64) {
        lock.withLock {
            guard let e = pins[version] else { return }
            if e.refs > 1 {
                pins[version] = (e.slot, e.refs - 1)
                return
            }
            pins[version] = nil
            guard let lockFile else { return }
            _ = try? lockFile.withTableLock {
                let s = lockFile.slot(e.slot)
                s.setU32(0, at: 0)
                s.setU64(0, at: 16)
            }
        }
    }

    /// Pins of live processes, after clearing those of dead ones.
    func livePins() throws -> [(pid: Int32, version: UInt64)] {
        guard let lockFile else { return lock.withLock { pins.keys.sorted().map { (Int32(bitPattern: pid), $0) } } }
        return try lockFile.withTableLock {
            reclaimDeadLocked()
            var out: [(Int32, UInt64)] = []
            for i in 0..<lockFile.slotCount {
                let s = UnsafeRawBufferPointer(lockFile.slot(i))
                let p = s.u32(0)
                if p != 0 { out.append((Int32(bitPattern: p), s.u64(16))) }
            }
            return out
        }
    }

    /// The oldest live pin older than `current` (the newest version, which the writer keeps
    /// live anyway), or nil. The writer's per-commit path: it first reads the table without
    /// the table lock, and takes the lock (and reclaims dead pins) only if some slot holds an
    /// older version. What the unlocked read can miss is a pin being written right now; that
    /// reader read the header before pinning and reads it again after, and while the writer
    /// holds the writer lock the header names `current`, so such a pin is of `current` (live
    /// anyway) or its reader sees the header move and retries. A pin of an older version was
    /// made visible (table lock released) before its reader last saw that version current,
    /// so before the commit that superseded it, so before this writer's lock.
    func oldestPinned(olderThan current: UInt64) throws -> UInt64? {
        guard let lockFile else { return nil }
        var anyOlder = false
        for i in 0..<lockFile.slotCount {
            let s = UnsafeRawBufferPointer(lockFile.slot(i))
            let v = s.u64(16)
            if s.u32(0) != 0 && v != 0 && v < current { anyOlder = true; break }
        }
        guard anyOlder else { return nil }
        return try livePins().map(\.version).filter { $0 < current }.min()
    }

    private func reclaimDeadLocked() {
        guard let lockFile, !BrokenVariant.on(.noReclaim) else { return }
        for i in 0..<lockFile.slotCount {
            let s = lockFile.slot(i)
            let p = UnsafeRawBufferPointer(s).u32(0)
            guard p != 0, p != pid else { continue }
            let recorded = UnsafeRawBufferPointer(s).u64(8)
            if !ProcessIdentity.isAlive(pid: Int32(bitPattern: p), startTime: recorded) {
                s.setU32(0, at: 0)
                s.setU64(0, at: 16)
            }
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

    /// Field 22 of /proc/PID/stat: when the process started, in clock ticks since boot.
    static func startTime(of pid: Int32) -> UInt64? {
        let fd = open("/proc/\(pid)/stat", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var buf = [UInt8](repeating: 0, count: 1024)
        let n = buf.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        guard n > 0 else { return nil }
        let text = buf[0..<n]
        guard let close = text.lastIndex(of: UInt8(ascii: ")")) else { return nil }
        let fields = text[(close + 1)...].split(separator: UInt8(ascii: " "))
        // fields[0] is field 3 (state); field 22 is fields[19].
        guard fields.count > 19 else { return nil }
        return UInt64(String(decoding: fields[19], as: UTF8.self))
    }
}
