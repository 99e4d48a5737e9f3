#include "CHeapCount.h"

#include <errno.h>
#include <stddef.h>

// Counts every allocation the process asks of the C library, by the thread that asks, by
// defining the allocation entry points in the executable: the Swift runtime (swift_slowAlloc
// under every class instance, array and string buffer) and C libraries such as SQLite call
// these instead of the C library's, and each forwards to the C library's own allocator
// (glibc's __libc_* entry points), so `free` and everything else see one heap.
//
// Not through the Swift runtime's `_swift_allocObject` hook: installing it on the 6.3 Linux
// runtime makes `swift_retain` fault on small strings (swiftlang/swift#88924).

extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t count, size_t size);
extern void *__libc_realloc(void *p, size_t size);
extern void *__libc_memalign(size_t alignment, size_t size);

static __thread uint64_t allocations;

void *malloc(size_t size) {
    allocations++;
    return __libc_malloc(size);
}

void *calloc(size_t count, size_t size) {
    allocations++;
    return __libc_calloc(count, size);
}

void *realloc(void *p, size_t size) {
    allocations++;
    return __libc_realloc(p, size);
}

void *memalign(size_t alignment, size_t size) {
    allocations++;
    return __libc_memalign(alignment, size);
}

void *aligned_alloc(size_t alignment, size_t size) {
    allocations++;
    return __libc_memalign(alignment, size);
}

int posix_memalign(void **out, size_t alignment, size_t size) {
    if (alignment < sizeof(void *) || (alignment & (alignment - 1)) != 0) return EINVAL;
    allocations++;
    void *p = __libc_memalign(alignment, size);
    if (p == NULL) return ENOMEM;
    *out = p;
    return 0;
}

uint64_t fief_heap_count(void) { return allocations; }

// Whether the calls above are the ones the process makes (another library, a sanitizer or
// valgrind may have put its own allocator first): one allocation through the C library's
// public entry point must be counted.
int fief_heap_count_available(void) {
    uint64_t before = allocations;
    void *(*volatile alloc)(size_t) = malloc;
    void *p = alloc(16);
    __builtin_free(p);
    return allocations != before;
}
