/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Per-worker hashed timer wheel. Timers are intrusive (embedded in the TCB,
 * QP, ...), armed and cancelled in O(1), and fire from the worker's timer
 * poller. Resolution is one tick (RNIC_TIMER_TICK_US); a timer never fires
 * early. Only the owning worker touches its wheel.
 *
 * Two tiers, so that a loop costs the same with 100,000 idle connections as
 * with one: a timer due within one revolution of the near wheel (4096 ticks,
 * ~65 ms) sits in the near slot of its tick; a later one sits in one of
 * RNIC_TIMER_FAR_SLOTS far slots, one per revolution, and moves to the
 * near wheel when its revolution begins. A loop visits only the current
 * near slot, which then holds only timers due at that tick; a far timer
 * (a keepalive, TIME_WAIT) is looked at once per far revolution (~17 s).
 */
#ifndef RNIC_ENGINE_TIMER_H
#define RNIC_ENGINE_TIMER_H

#include <stdbool.h>
#include <stdint.h>

#define RNIC_TIMER_TICK_US 16u
#define RNIC_TIMER_SLOTS   4096u /* power of two; ~65 ms per revolution */
#define RNIC_TIMER_FAR_SLOTS 256u /* power of two; a near revolution each */

struct rnic_timer;
typedef void (*rnic_timer_cb)(struct rnic_timer *t, void *arg);

struct rnic_timer {
	struct rnic_timer *next, **pprev; /* slot list; pprev NULL = idle */
	uint64_t expire_tick;
	rnic_timer_cb cb;
	void *arg;
};

struct rnic_timer_wheel {
	struct rnic_timer *slot[RNIC_TIMER_SLOTS];
	struct rnic_timer *far[RNIC_TIMER_FAR_SLOTS];
	uint64_t cur_tick;      /* next tick to process */
	uint64_t cascaded;      /* the last revolution start moved in, + 1 */
	uint64_t looked;        /* timers looked at and not fired (cost) */
	uint64_t tsc_per_tick;
	uint64_t armed;         /* timers pending */
	uint64_t fired;         /* timers run */
};

/** Prepare an idle timer. */
void rnic_timer_init(struct rnic_timer *t, rnic_timer_cb cb, void *arg);

/** Set up a wheel whose time starts at @p now_tsc. */
void rnic_timer_wheel_init(struct rnic_timer_wheel *tw, uint64_t now_tsc);

/** (Re)arm @p t to fire @p us microseconds from @p now_tsc. */
void rnic_timer_arm(struct rnic_timer_wheel *tw, struct rnic_timer *t,
		    uint64_t now_tsc, uint64_t us);

/** Cancel @p t if pending; safe on an idle timer. */
void rnic_timer_cancel(struct rnic_timer_wheel *tw, struct rnic_timer *t);

static inline bool rnic_timer_pending(const struct rnic_timer *t)
{
	return t->pprev != NULL;
}

/** Fire every timer due at @p now_tsc. @return timers fired. */
unsigned rnic_timer_run(struct rnic_timer_wheel *tw, uint64_t now_tsc);

#endif
