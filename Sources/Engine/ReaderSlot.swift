import CFiefSys

/// One slot of the reader table in the `.lock` file, shared by every process that has the
/// database open. 64 bytes, one cache line, so readers pinning on different cores never write
/// the same line (LMDB pads `MDB_reader` for the same reason). Little-endian (the machine's
/// order: the fields are read and written as native atomics, and Linux on x86-64 and arm64
/// is little-endian):
///
///     0  pid         u32  the owning process; 0: the slot is free
///     8  start time  u64  when the owner started (clock ticks since boot), so a reused pid
///                         is not mistaken for the owner
///    16  version     u64  the version the owner pins now; 0: owned and idle
///    24  (unused, 40 bytes)
///
/// A slot is claimed and freed (pid written) only under the table lock; its version is
/// written by its owner alone, without any lock, and read by writers without any lock (see
/// `ReaderTable`). Every field is read and written whole, atomically.
struct ReaderSlot {
    static let size = 64
    let base: UnsafeMutableRawPointer

    var pid: UInt32 { fief_load_u32_acquire(base) }
    var startTime: UInt64 { fief_load_u64_acquire(base + 8) }
    var version: UInt64 { fief_load_u64_acquire(base + 16) }

    /// Under the table lock: makes the slot this process's, idle.
    func claim(pid: UInt32, startTime: UInt64) {
        fief_store_u64_release(base + 8, startTime)
        fief_store_u64_release(base + 16, 0)
        fief_store_u32_release(base, pid)
    }

    /// Under the table lock: frees the slot (its owner is gone, or done with it).
    func free() {
        fief_store_u64_release(base + 16, 0)
        fief_store_u32_release(base, 0)
    }

    /// By the owner only: pins `version` (0: unpins). The caller orders it before its next
    /// read of the header with `fief_fence()`.
    func publish(_ version: UInt64) { fief_store_u64_release(base + 16, version) }
}
