// What the engine needs from C that Swift cannot reach: C11 atomics (and futexes) on memory
// Swift does not own, the reader slots in the `.lock` file's shared mapping, which other
// processes read and write at the same time (Swift has no atomics in its standard library for
// raw shared memory; each function compiles to a plain load or store, or one fence); a cache
// prefetch; and, for the benchmarks, CPU affinity.
#ifndef CFIEF_SYS_H
#define CFIEF_SYS_H

#include <stdatomic.h>
#include <stdint.h>

static inline uint64_t fief_load_u64_acquire(const void *p) {
    return atomic_load_explicit((const _Atomic uint64_t *)p, memory_order_acquire);
}

static inline void fief_store_u64_release(void *p, uint64_t v) {
    atomic_store_explicit((_Atomic uint64_t *)p, v, memory_order_release);
}

static inline uint32_t fief_load_u32_acquire(const void *p) {
    return atomic_load_explicit((const _Atomic uint32_t *)p, memory_order_acquire);
}

static inline void fief_store_u32_release(void *p, uint32_t v) {
    atomic_store_explicit((_Atomic uint32_t *)p, v, memory_order_release);
}

// A full (sequentially consistent) fence: stores before it are visible to every thread and
// process before loads after it are performed. On x86-64 an MFENCE; no system call.
static inline void fief_fence(void) {
    atomic_thread_fence(memory_order_seq_cst);
}

static inline uint32_t fief_fetch_add_u32(void *p, uint32_t v) {
    return atomic_fetch_add_explicit((_Atomic uint32_t *)p, v, memory_order_acq_rel);
}

// Sequentially consistent, for the doorbell's waiter count (LockFile.ringDoorbell): the
// ringer's bump of the counter and its read of the count, and a watcher's registration and
// its read of the counter, are all in one total order.
static inline uint32_t fief_fetch_add_u32_seq_cst(void *p, uint32_t v) {
    return atomic_fetch_add_explicit((_Atomic uint32_t *)p, v, memory_order_seq_cst);
}

static inline uint32_t fief_fetch_sub_u32_seq_cst(void *p, uint32_t v) {
    return atomic_fetch_sub_explicit((_Atomic uint32_t *)p, v, memory_order_seq_cst);
}

static inline uint32_t fief_load_u32_seq_cst(const void *p) {
    return atomic_load_explicit((const _Atomic uint32_t *)p, memory_order_seq_cst);
}

// Futexes on the `.lock` file's shared mapping wake waiters in other processes: the kernel
// keys a shared (not FUTEX_PRIVATE) futex on a file mapping by inode and offset.

#include <errno.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

// Sleeps while *p == expected, at most timeout_ms. Returns 0 when woken (or when *p had
// already changed), ETIMEDOUT when the time ran out, or another errno (EINTR).
static inline int fief_futex_wait(void *p, uint32_t expected, long timeout_ms) {
    struct timespec t = { timeout_ms / 1000, (timeout_ms % 1000) * 1000000L };
    if (syscall(SYS_futex, (uint32_t *)p, FUTEX_WAIT, expected, &t, NULL, 0) == 0) return 0;
    return errno == EAGAIN ? 0 : errno;
}

// Asks the CPU to bring one cache line at `p` in ahead of its use (no fault, no effect on a
// bad address): a scan touches the next leaf of its tree while it reads this one.
static inline void fief_prefetch(const void *p) {
    __builtin_prefetch(p, 0, 3);
}

static inline void fief_futex_wake_all(void *p) {
    syscall(SYS_futex, (uint32_t *)p, FUTEX_WAKE, 0x7fffffff, NULL, NULL, 0);
}

// The benchmarks bind the threads of a concurrent workload to CPUs (Reports' CPUPlacement).
// glibc declares sched_getaffinity and sched_setaffinity only under _GNU_SOURCE, which Swift's
// import of its headers does not define; the system calls take the same one-bit-per-CPU mask.

// The calling thread's allowed CPUs as a bitmask into `mask` (`bytes` long, zeroed first).
// Returns 0, or the errno.
static inline int fief_thread_cpus(uint8_t *mask, size_t bytes) {
    for (size_t i = 0; i < bytes; i++) mask[i] = 0;
    return syscall(SYS_sched_getaffinity, 0, bytes, mask) < 0 ? errno : 0;
}

// Binds the calling thread to CPU `cpu` (below 1024). Returns 0, or the errno.
static inline int fief_pin_thread(int cpu) {
    uint8_t mask[128] = {0};
    if (cpu < 0 || cpu >= 1024) return EINVAL;
    mask[cpu / 8] = (uint8_t)(1u << (cpu % 8));
    return syscall(SYS_sched_setaffinity, 0, sizeof mask, mask) < 0 ? errno : 0;
}

#endif
