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

void rv_linger_reaped(struct rv_linger *l, unsigned calls, uint64_t now)
{
	/* atomic: the progress thread reads reap_tsc without the lock */
	__atomic_store_n(&l->reap_tsc, now, __ATOMIC_RELAXED);
	__atomic_store_n(&l->reap_calls, calls, __ATOMIC_RELAXED);
}

void rv_linger_hit(struct rv_linger *l, unsigned calls, uint64_t now)
{
	/* a count that only this program's polling threads move: a lost
	 * increment between two of them is a statistic off by one */
	__atomic_store_n(&l->lingers, __atomic_load_n(&l->lingers, __ATOMIC_RELAXED) + 1,
			 __ATOMIC_RELAXED);
	rv_linger_reaped(l, calls, now);
}

void rv_linger_progress_rx(struct rv_linger *l, unsigned calls, bool blocked, uint64_t now)
{
	/* the program took completions, then made no call and is not
	 * waiting in one: it spins (or computes) while its peer's frames
	 * come in */
	if (l->cycles != 0 && !l->on && !blocked && l->reap_tsc != 0 &&
	    calls == l->reap_calls && now - l->reap_tsc < l->window) {
		l->on = true;
		l->strikes = 0;
	}
}

void rv_linger_posted(struct rv_linger *l, unsigned calls, bool placed, uint64_t now)
{
	if (l->cycles != 0 && !l->on && placed && l->reap_tsc != 0 &&
	    calls == l->reap_calls + 1 && now - l->reap_tsc < l->window) {
		l->on = true;
		l->strikes = 0;
	}
}

void rv_linger_done(struct rv_linger *l, bool got_rx)
{
	l->lingers++;
	if (got_rx) {
		l->strikes = 0;
		return;
	}
	l->timeouts++;
	if (++l->strikes >= RV_LINGER_STRIKES)
		l->on = false;
}
