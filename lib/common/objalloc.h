/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Memory for objects made and freed once per QP or connection (the verbs
 * QP, its queues, RoCE's QP state, the iWARP endpoint and its jobs): from the C heap, cache-line aligned
 * and zeroed. They came from rte_zmalloc, whose heap finds a free element
 * by walking a free list: with tens of thousands of objects alive and
 * freed in between (connections in timewait), that walk, a cache miss per
 * element, was the top cost of setting up a connection (rnic-perf
 * conn_rate, docs/benchmarks.md), and rte_free zeroes what it frees.
 * glibc's bins take and give such sizes in constant time. Pages are placed
 * by first touch (the creating thread's NUMA node), not by socket id.
 * Free with rnic_obj_free() only.
 */
#ifndef RNIC_COMMON_OBJALLOC_H
#define RNIC_COMMON_OBJALLOC_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define RNIC_OBJ_ALIGN 64   /* a cache line, as RTE_CACHE_LINE_SIZE here */

/** @p size bytes, 64-byte aligned, not cleared, or NULL. */
static inline void *rnic_obj_alloc(size_t size)
{
	void *p = NULL;
	return posix_memalign(&p, RNIC_OBJ_ALIGN, size ? size : 1) == 0 ? p : NULL;
}

/** @p size zeroed bytes, 64-byte aligned, or NULL. */
static inline void *rnic_obj_zalloc(size_t size)
{
	void *p = rnic_obj_alloc(size);
	if (p != NULL)
		memset(p, 0, size);
	return p;
}

/**
 * Tests make lazy allocations fail as if the heap were out, counting them
 * down (rnic_iw_fail_allocs, rnic_tcp_fail_allocs): take one from the
 * countdown at @p n unless it is 0, from any worker. @return its value
 * before (0: nothing taken, the allocation goes ahead).
 */
static inline uint32_t rnic_obj_fail_take(uint32_t *n)
{
	uint32_t v = __atomic_load_n(n, __ATOMIC_RELAXED);
	while (v > 0 && !__atomic_compare_exchange_n(n, &v, v - 1, false, __ATOMIC_RELAXED,
						     __ATOMIC_RELAXED))
		;
	return v;
}

/** Free what rnic_obj_zalloc() gave (NULL: nothing). */
static inline void rnic_obj_free(void *p)
{
	free(p);
}

#endif
