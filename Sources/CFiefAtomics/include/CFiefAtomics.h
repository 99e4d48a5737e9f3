// C11 atomics on memory Swift does not own: the reader slots in the `.lock` file's shared
// mapping, which other processes read and write at the same time. Swift has no atomics in
// its standard library for raw shared memory, so the engine's one place that needs them goes
// through these few inline functions (each compiles to a plain load or store, or one fence).
#ifndef CFIEF_ATOMICS_H
#define CFIEF_ATOMICS_H

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

#endif
