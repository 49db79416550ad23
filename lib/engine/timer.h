/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Per-worker hashed timer wheel. Timers are intrusive (embedded in the TCB,
 * QP, ...), armed and cancelled in O(1), and fire from the worker's timer
 * poller. Resolution is one tick (RNIC_TIMER_TICK_US); a timer never fires
 * early. Only the owning worker touches its wheel.
 */
#ifndef RNIC_ENGINE_TIMER_H
#define RNIC_ENGINE_TIMER_H

#include <stdbool.h>
#include <stdint.h>

#define RNIC_TIMER_TICK_US 16u
#define RNIC_TIMER_SLOTS   4096u /* power of two; ~65 ms per revolution */

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
	uint64_t cur_tick;      /* next tick to process */
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
