/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The drop-in's pacing decisions (pace.h): pure functions of what the
 * caller observed, no clock or thread of their own.
 */
#include "dropin/pace.h"

uint64_t rv_nap_next(uint64_t nap_ns, bool app_drives)
{
	if (!app_drives || nap_ns < RV_NAP_MIN_NS)
		return RV_NAP_MIN_NS;
	return nap_ns * 2 > RV_NAP_MAX_NS ? RV_NAP_MAX_NS : nap_ns * 2;
}

void rv_linger_init(struct rv_linger *l, uint64_t cycles, uint64_t window)
{
	*l = (struct rv_linger){ .cycles = cycles, .window = window };
}

/*
 * The fields that a program thread's reap reads or writes without the lock
 * (on, strikes, lingers, reap_tsc, reap_calls: rv_linger_hit,
 * rv_linger_reaped) are read and written as relaxed atomics everywhere;
 * the lock still orders the decisions taken under it.
 */
#define LD(f) __atomic_load_n(&(f), __ATOMIC_RELAXED)
#define ST(f, v) __atomic_store_n(&(f), (v), __ATOMIC_RELAXED)

void rv_linger_reaped(struct rv_linger *l, unsigned calls, uint64_t now)
{
	ST(l->reap_tsc, now);
	ST(l->reap_calls, calls);
}

void rv_linger_hit(struct rv_linger *l)
{
	/* a count that only this program's polling threads move: a lost
	 * increment between two of them is a statistic off by one */
	ST(l->lingers, LD(l->lingers) + 1);
}

/* The pattern: a reap less than the window before @p now, and the
 * program's call count @p calls exactly @p after calls past it. */
static void pattern_seen(struct rv_linger *l, unsigned calls, unsigned after, uint64_t now)
{
	uint64_t reap = LD(l->reap_tsc);

	if (l->cycles != 0 && !LD(l->on) && reap != 0 && calls == LD(l->reap_calls) + after &&
	    now - reap < l->window) {
		ST(l->on, true);
		ST(l->strikes, 0);
	}
}

void rv_linger_progress_rx(struct rv_linger *l, unsigned calls, bool blocked, uint64_t now)
{
	/* the program took completions, then made no call and is not
	 * waiting in one: it spins (or computes) while its peer's frames
	 * come in */
	if (!blocked)
		pattern_seen(l, calls, 0, now);
}

void rv_linger_posted(struct rv_linger *l, unsigned calls, bool placed, uint64_t now)
{
	/* this post is the program's one call since the reap */
	if (placed)
		pattern_seen(l, calls, 1, now);
}

void rv_linger_done(struct rv_linger *l, bool got_rx)
{
	rv_linger_hit(l);
	if (got_rx) {
		ST(l->strikes, 0);
		return;
	}
	l->timeouts++;
	ST(l->strikes, LD(l->strikes) + 1);
	if (LD(l->strikes) >= RV_LINGER_STRIKES)
		ST(l->on, false);
}
