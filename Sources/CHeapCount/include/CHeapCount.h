// Counts the heap allocations made by the calling thread (Swift objects, buffers, and C
// libraries' mallocs alike), for the benchmark counters ("heap allocations per object read").
#ifndef CHEAP_COUNT_H
#define CHEAP_COUNT_H

#include <stdint.h>

// Whether allocations are being counted in this process.
int fief_heap_count_available(void);

// Allocations made by the calling thread since it started.
uint64_t fief_heap_count(void);

#endif
