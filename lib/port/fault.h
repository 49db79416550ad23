/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Seeded fault injector for one direction of one queue: drop, duplicate,
 * reorder, corrupt (one bit flip), delay and CE marking (the ECN field of
 * an ECN-capable IPv4 frame set to Congestion Experienced, as a congested
 * switch would), each a percentage. Off by
 * default (all zero). Deterministic for a given seed and input sequence, so
 * a failing test can be replayed with the same seed.
 */
#ifndef RNIC_PORT_FAULT_H
#define RNIC_PORT_FAULT_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_mbuf.h>

#include "rnic/rnic.h"

#define RNIC_FAULT_HOLD 256 /* frames held back at once (delay/reorder) */

struct rnic_fault_stats {
	uint64_t seen, dropped, duplicated, reordered, corrupted, delayed, ce_marked;
	/* frames lost because the hold was full: not an injected fault (the
	 * TX path's refused frames wait there; see rnic_port_tx()) */
	uint64_t hold_full;
};

struct rnic_fault {
	struct rnic_fault_cfg cfg;
	bool enabled;               /* any probability non-zero */
	uint64_t rng;               /* xorshift64* state, never 0 */
	uint32_t p_drop, p_dup, p_reorder, p_corrupt, p_delay; /* of 2^32 */
	uint32_t p_ce;              /* of 2^32; changed at run time by rnic_fault_set_ce() */
	/* held frames: a FIFO ordered by release time */
	struct rte_mbuf *held[RNIC_FAULT_HOLD];
	uint64_t release_tsc[RNIC_FAULT_HOLD];
	unsigned head, count;
	/* one reordered frame, sent right behind the next frame that passes */
	struct rte_mbuf *reorder;
	uint64_t reorder_deadline;
	struct rnic_fault_stats stats;
};

/** Set up an injector from @p cfg with @p seed (0 picks a fixed seed). */
void rnic_fault_init(struct rnic_fault *f, const struct rnic_fault_cfg *cfg,
		     uint64_t seed);

/**
 * Pass @p n frames through the injector at time @p now_tsc.
 * Frames come out in @p out (at most @p max_out); dropped frames are freed;
 * duplicated frames are copied (rte_pktmbuf_copy from their own pool);
 * reordered or delayed frames are held and come out of a later call (or
 * rnic_fault_release()). @return frames in @p out.
 */
unsigned rnic_fault_apply(struct rnic_fault *f, struct rte_mbuf **in,
			  unsigned n, struct rte_mbuf **out, unsigned max_out,
			  uint64_t now_tsc);

/** Move held frames whose time has come to @p out. @return count. */
unsigned rnic_fault_release(struct rnic_fault *f, struct rte_mbuf **out,
			    unsigned max_out, uint64_t now_tsc);

/**
 * Hold again @p n frames that could not be sent (the PMD refused them),
 * due at @p now_tsc, so the next rnic_fault_release() hands them out again
 * after frames already due. @return frames taken, in order; the caller
 * still owns m[ret..n-1] (the hold FIFO was full).
 */
unsigned rnic_fault_requeue(struct rnic_fault *f, struct rte_mbuf **m,
			    unsigned n, uint64_t now_tsc);

/**
 * Set CE in the IPv4 header of Ethernet frame @p m (one 802.1Q tag allowed)
 * when its ECN field is ECT(0) or ECT(1), and fix the header checksum
 * (RFC 1624). A frame whose first segment is shared (refcount, clone or
 * external buffer) is left alone. The RoCEv2 ICRC masks the TOS byte, so
 * it stays valid. @return true when the frame was marked.
 */
bool rnic_fault_mark_ce(struct rte_mbuf *m);

/**
 * Change the CE-marking percentage of a running injector (the only knob
 * that may change after init: marking holds no frame). Called from any
 * thread; the owning worker sees it on its next burst. Turning it on
 * enables an injector that was off.
 */
void rnic_fault_set_ce(struct rnic_fault *f, double pct);

/** Free every held frame (port close). */
void rnic_fault_flush(struct rnic_fault *f);

#endif
