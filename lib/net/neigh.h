/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The policy the two neighbour caches share (ARP, arp.c; IPv6 neighbour
 * discovery, nd.c): how an entry is found, which slot a new one may take,
 * how many frames may wait for resolution, how fast requests are answered.
 * The caches keep their own entries and states; this file only decides.
 *
 * Layout: RNIC_NEIGH_SETS sets of RNIC_NEIGH_WAYS entries. An address
 * hashes (with a per-table random seed, so a peer cannot aim at one set)
 * to one set; finding it looks at that set's ways only, not the table.
 *
 * Replacement (docs/design.md, "Neighbour caches"): a new entry takes, in
 * its set, the first class its cause allows, the oldest of that class:
 *  - from unsolicited traffic (a solicitation's or request's sender, RFC
 *    4861 7.2.3, RFC 826): a free slot, or an entry made the same way that
 *    nobody has sent to since (LEARNT); nothing else. Refused creations
 *    are counted; the message itself is still answered.
 *  - for this host's own traffic (a frame to send): also its oldest
 *    resolution in progress (RESOLVING), then the oldest resolved entry
 *    not in use (IDLE). An entry in use (BUSY: frames held, being probed)
 *    is never replaced.
 */
#ifndef RNIC_NET_NEIGH_H
#define RNIC_NET_NEIGH_H

#include <stdbool.h>
#include <stdint.h>

#define RNIC_NEIGH_WAYS 8u
#define RNIC_NEIGH_SETS 32u            /* x 8 ways = 256 entries per table */
/* frames held for resolution per table (per port and family), over all
 * its entries: each entry holds at most RNIC_ARP_PENDING/RNIC_ND_PENDING */
#define RNIC_NEIGH_HELD_MAX 512u
/* answers (ARP replies, solicited advertisements) per table: at most
 * RNIC_NEIGH_ANSWERS_PER_WINDOW per RNIC_NEIGH_WINDOW_US (1000 a second) */
#define RNIC_NEIGH_WINDOW_US 100000u
#define RNIC_NEIGH_ANSWERS_PER_WINDOW 100u

/* What an entry is to the replacement policy, cheapest to replace first. */
enum rnic_neigh_class {
	RNIC_NEIGH_FREE = 0,
	RNIC_NEIGH_LEARNT,      /* made by unsolicited traffic, unused since */
	RNIC_NEIGH_RESOLVING,   /* our own resolution in progress */
	RNIC_NEIGH_IDLE,        /* resolved, not in use now */
	RNIC_NEIGH_BUSY,        /* in use: never replaced */
};

/* Why a new entry is wanted. */
enum rnic_neigh_cause {
	RNIC_NEIGH_UNSOLICITED,  /* a peer's message: FREE or LEARNT only */
	RNIC_NEIGH_OWN,          /* a frame of ours: up to IDLE */
};

/* The set of an address whose hash is @p h. */
static inline unsigned rnic_neigh_set(uint32_t h)
{
	return (h * 2654435761u) >> 27;   /* 5 bits: RNIC_NEIGH_SETS */
}

/* Fold @p key (@p n bytes, n a multiple of 4) with the table's @p seed. */
static inline uint32_t rnic_neigh_hash(const uint8_t *key, unsigned n, uint32_t seed)
{
	uint32_t h = seed;
	for (unsigned i = 0; i < n; i += 4) {
		uint32_t w = (uint32_t)key[i] << 24 | (uint32_t)key[i + 1] << 16 |
			     (uint32_t)key[i + 2] << 8 | key[i + 3];
		h = (h ^ w) * 0x9e3779b1u;
		h ^= h >> 15;
	}
	return h;
}

/*
 * The way a new entry for @p cause takes among the @p n ways of a set,
 * given each way's class and age stamp (smaller is older).
 * @return the way, or -1 when the policy allows none (refuse).
 */
static inline int rnic_neigh_pick(const enum rnic_neigh_class cls[], const uint64_t stamp[],
				  unsigned n, enum rnic_neigh_cause cause)
{
	enum rnic_neigh_class worst = cause == RNIC_NEIGH_OWN ? RNIC_NEIGH_IDLE
							       : RNIC_NEIGH_LEARNT;
	int best = -1;
	for (unsigned i = 0; i < n; i++) {
		if (cls[i] > worst)
			continue;
		if (cls[i] == RNIC_NEIGH_FREE)
			return (int)i;
		if (best < 0 || cls[i] < cls[best] ||
		    (cls[i] == cls[best] && stamp[i] < stamp[best]))
			best = (int)i;
	}
	return best;
}

/*
 * A per-table budget of answers: at most RNIC_NEIGH_ANSWERS_PER_WINDOW in
 * each window of @p window_tsc cycles. Lock-free and approximate (workers
 * racing at a window's start may let a few more through); no memory grows.
 */
struct rnic_neigh_limit {
	uint64_t window;     /* index of the current window */
	uint32_t used;       /* answers given in it */
};

/* May one more answer go at @p now? Counts it when it may. */
static inline bool rnic_neigh_answer_ok(struct rnic_neigh_limit *l, uint64_t now,
					uint64_t window_tsc)
{
	uint64_t win = window_tsc ? now / window_tsc : 0;
	uint64_t cur = __atomic_load_n(&l->window, __ATOMIC_RELAXED);
	if (cur != win &&
	    __atomic_compare_exchange_n(&l->window, &cur, win, false, __ATOMIC_RELAXED,
					__ATOMIC_RELAXED))
		__atomic_store_n(&l->used, 0, __ATOMIC_RELAXED);
	return __atomic_fetch_add(&l->used, 1, __ATOMIC_RELAXED) <
	       RNIC_NEIGH_ANSWERS_PER_WINDOW;
}

#endif
