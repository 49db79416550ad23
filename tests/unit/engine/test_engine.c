/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Engine: the timer wheel (order, never early, cancel, re-arm from the
 * callback, cancel from a callback, timers of many revolutions, a long
 * stall, 10^5 random timers) and flow steering (agreement with
 * rte_softrss and a published Toeplitz vector, spread over 2 and 4
 * workers, determinism, one owner for both directions of a flow).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_thash.h>

#include "engine/stack.h"
#include "port/port.h"
#include "engine/timer.h"

static uint64_t us_tsc;
static uint64_t fired_at[100000];
static uint64_t due_at[100000];
static unsigned n_fired;
static uint64_t now;

static void record(struct rnic_timer *t, void *arg)
{
	(void)t;
	uintptr_t i = (uintptr_t)arg;
	fired_at[i] = now;
	n_fired++;
}

/* Advance the wheel in steps of @p step_us up to @p until_us. */
static void advance(struct rnic_timer_wheel *tw, uint64_t until_us, uint64_t step_us)
{
	while (now < until_us * us_tsc) {
		now += step_us * us_tsc;
		rnic_timer_run(tw, now);
	}
}

static void never_early_in_order(void **state)
{
	struct rnic_timer_wheel tw;
	static struct rnic_timer t[5];
	static const uint64_t delay[5] = { 500, 16, 100000, 20, 70000 }; /* us */
	(void)state;
	now = 1000 * us_tsc;
	n_fired = 0;
	rnic_timer_wheel_init(&tw, now);
	for (uintptr_t i = 0; i < 5; i++) {
		rnic_timer_init(&t[i], record, (void *)i);
		due_at[i] = now + delay[i] * us_tsc;
		rnic_timer_arm(&tw, &t[i], now, delay[i]);
		assert_true(rnic_timer_pending(&t[i]));
	}
	advance(&tw, 1000 + 200000, 5);
	assert_int_equal(n_fired, 5);
	for (int i = 0; i < 5; i++) {
		assert_true(fired_at[i] >= due_at[i]);            /* never early */
		assert_true(fired_at[i] <= due_at[i] + 3 * RNIC_TIMER_TICK_US * us_tsc);
		assert_false(rnic_timer_pending(&t[i]));
	}
	assert_int_equal(tw.armed, 0);
}

static void cancel_and_rearm(void **state)
{
	struct rnic_timer_wheel tw;
	struct rnic_timer a, b;
	(void)state;
	now = 0;
	n_fired = 0;
	rnic_timer_wheel_init(&tw, now);
	rnic_timer_init(&a, record, (void *)0);
	rnic_timer_init(&b, record, (void *)1);
	rnic_timer_arm(&tw, &a, now, 100);
	rnic_timer_arm(&tw, &b, now, 100);
	rnic_timer_cancel(&tw, &a);
	rnic_timer_cancel(&tw, &a);   /* twice is fine */
	rnic_timer_arm(&tw, &b, now, 5000);  /* re-arm moves it */
	advance(&tw, 1000, 10);
	assert_int_equal(n_fired, 0);
	advance(&tw, 6000, 10);
	assert_int_equal(n_fired, 1);
	assert_true(fired_at[1] >= 5000 * us_tsc);
}

static struct rnic_timer_wheel *periodic_tw;
static unsigned periodic_count;

static void periodic(struct rnic_timer *t, void *arg)
{
	(void)arg;
	if (++periodic_count < 10)
		rnic_timer_arm(periodic_tw, t, now, 1000);
}

static void rearm_from_callback(void **state)
{
	struct rnic_timer_wheel tw;
	struct rnic_timer t;
	(void)state;
	now = 0;
	periodic_count = 0;
	periodic_tw = &tw;
	rnic_timer_wheel_init(&tw, now);
	rnic_timer_init(&t, periodic, NULL);
	rnic_timer_arm(&tw, &t, now, 1000);
	advance(&tw, 20000, 7);
	assert_int_equal(periodic_count, 10);
	assert_false(rnic_timer_pending(&t));
}

/* Many random timers, several revolutions, with stalls between runs. */
static void random_timers(void **state)
{
	struct rnic_timer_wheel tw;
	static struct rnic_timer t[100000];
	(void)state;
	srand(7);
	now = 0;
	n_fired = 0;
	rnic_timer_wheel_init(&tw, now);
	for (uintptr_t i = 0; i < 100000; i++) {
		/* up to ~4.6 revolutions; one in ten up to 20 s (far timers,
		 * some past the far wheel's ~17 s) */
		uint64_t d = i % 10 ? (uint64_t)(rand() % 300000) :
				      (uint64_t)rand() % 20000000;
		rnic_timer_init(&t[i], record, (void *)i);
		due_at[i] = d * us_tsc;
		rnic_timer_arm(&tw, &t[i], now, d);
	}
	while (n_fired < 100000 && now < 21000000 * us_tsc) {
		/* irregular stalls, some longer than a revolution */
		now += (uint64_t)(rand() % 100 ? rand() % 3000 : rand() % 200000) * us_tsc;
		rnic_timer_run(&tw, now);
	}
	assert_int_equal(n_fired, 100000);
	for (unsigned i = 0; i < 100000; i++)
		assert_true(fired_at[i] >= due_at[i]);
}

/* Timers of seconds: dozens of revolutions in their slot, never early. */
static void long_timers(void **state)
{
	struct rnic_timer_wheel tw;
	static struct rnic_timer t[4];
	static const uint64_t delay[4] = { 65536, 1500000, 5000000, 4000017 };
	(void)state;
	now = 12345 * us_tsc;
	n_fired = 0;
	rnic_timer_wheel_init(&tw, now);
	for (uintptr_t i = 0; i < 4; i++) {
		rnic_timer_init(&t[i], record, (void *)i);
		due_at[i] = now + delay[i] * us_tsc;
		rnic_timer_arm(&tw, &t[i], now, delay[i]);
	}
	uint64_t end = now + 5100000 * us_tsc;
	while (now < end) {
		now += 997 * us_tsc;             /* ~1 ms steps, off the tick grid */
		unsigned before = n_fired;
		rnic_timer_run(&tw, now);
		for (unsigned i = 0; i < 4 && n_fired != before; i++)
			if (fired_at[i] == now)
				assert_true(now >= due_at[i]);
	}
	assert_int_equal(n_fired, 4);
	for (int i = 0; i < 4; i++) {
		assert_true(fired_at[i] >= due_at[i]);
		assert_true(fired_at[i] <= due_at[i] + (997 + 3 * RNIC_TIMER_TICK_US) * us_tsc);
	}
	assert_int_equal(tw.fired, 4);
	assert_int_equal(tw.armed, 0);
}

static struct rnic_timer_wheel *cb_tw;
static struct rnic_timer *victims[3];
static unsigned killer_runs;

/* Cancels other timers (same slot and another), itself, and arms one. */
static void killer(struct rnic_timer *t, void *arg)
{
	(void)arg;
	killer_runs++;
	rnic_timer_cancel(cb_tw, victims[0]);   /* due in the same slot */
	rnic_timer_cancel(cb_tw, victims[1]);   /* a later slot */
	rnic_timer_cancel(cb_tw, t);            /* already idle: no-op */
	rnic_timer_arm(cb_tw, victims[2], now, 0);
}

static void cancel_inside_callback(void **state)
{
	struct rnic_timer_wheel tw;
	struct rnic_timer k, v0, v1, v2;
	(void)state;
	now = 0;
	n_fired = 0;
	killer_runs = 0;
	cb_tw = &tw;
	rnic_timer_wheel_init(&tw, now);
	rnic_timer_init(&k, killer, NULL);
	rnic_timer_init(&v0, record, (void *)0);
	rnic_timer_init(&v1, record, (void *)1);
	rnic_timer_init(&v2, record, (void *)2);
	victims[0] = &v0;
	victims[1] = &v1;
	victims[2] = &v2;
	/* v0 armed first, k second: k is ahead of v0 in the slot list */
	rnic_timer_arm(&tw, &v0, now, 100);
	rnic_timer_arm(&tw, &k, now, 100);
	rnic_timer_arm(&tw, &v1, now, 300);
	assert_int_equal(tw.armed, 3);
	now += 200 * us_tsc;
	assert_int_equal(rnic_timer_run(&tw, now), 1);  /* k only; v2 not yet */
	assert_int_equal(killer_runs, 1);
	assert_false(rnic_timer_pending(&v0));
	assert_false(rnic_timer_pending(&v1));
	assert_true(rnic_timer_pending(&v2));
	assert_int_equal(tw.armed, 1);
	/* a 0 us timer fires on a later tick, never in the run that armed it */
	now += RNIC_TIMER_TICK_US * us_tsc;
	rnic_timer_run(&tw, now);
	assert_false(rnic_timer_pending(&v2));
	now += 2 * RNIC_TIMER_TICK_US * us_tsc;
	rnic_timer_run(&tw, now);
	assert_int_equal(n_fired, 1);
	assert_int_equal(tw.armed, 0);
}

/* Idle connections' far timers (a keepalive, TIME_WAIT) cost a loop
 * nothing: 10,000 timers 10 to 20 s away (past the far wheel's ~17 s, so
 * some wrap) are looked at only when their revolution begins, not on every
 * visit of a near slot (the one-tier wheel looked at ~15,000 in these
 * 100 ms); then each fires on time. */
static void far_timers_cost(void **state)
{
	struct rnic_timer_wheel tw;
	static struct rnic_timer t[10000];
	(void)state;
	now = 777 * us_tsc;
	n_fired = 0;
	rnic_timer_wheel_init(&tw, now);
	for (uintptr_t i = 0; i < 10000; i++) {
		uint64_t d = 10000000 + i * 1000;
		rnic_timer_init(&t[i], record, (void *)i);
		due_at[i] = now + d * us_tsc;
		rnic_timer_arm(&tw, &t[i], now, d);
	}
	advance(&tw, 777 + 100000, RNIC_TIMER_TICK_US);
	assert_int_equal(n_fired, 0);
	assert_true(tw.looked < 500);
	advance(&tw, 777 + 21000000, 1000);
	assert_int_equal(n_fired, 10000);
	assert_int_equal(tw.armed, 0);
	for (unsigned i = 0; i < 10000; i++) {
		assert_true(fired_at[i] >= due_at[i]);
		assert_true(fired_at[i] - due_at[i] <= 1000 * us_tsc + 2 * RNIC_TIMER_TICK_US * us_tsc);
	}
}

/* A stall of several revolutions fires everything due, exactly once. */
static void stall(void **state)
{
	struct rnic_timer_wheel tw;
	static struct rnic_timer t[1000];
	(void)state;
	now = 0;
	n_fired = 0;
	rnic_timer_wheel_init(&tw, now);
	for (uintptr_t i = 0; i < 1000; i++) {
		rnic_timer_init(&t[i], record, (void *)i);
		rnic_timer_arm(&tw, &t[i], now, i * 300);   /* 0 .. ~4.6 revolutions */
	}
	now = 150000 * us_tsc;          /* 0..499 due; 500 (150000 us) is not:
					 * armed at tick 0, it fires after tick 9375 */
	unsigned n = rnic_timer_run(&tw, now);
	assert_int_equal(n, 500);
	assert_int_equal(n_fired, 500);
	for (unsigned i = 0; i < 1000; i++)
		assert_int_equal(rnic_timer_pending(&t[i]), i >= 500);
	now = 10000000 * us_tsc;
	assert_int_equal(rnic_timer_run(&tw, now), 500);
	assert_int_equal(rnic_timer_run(&tw, now), 0);
	assert_int_equal(tw.armed, 0);
}

static void steering(void **state)
{
	struct rnic_stack st;
	unsigned count[4] = {0};
	(void)state;
	memset(&st, 0, sizeof(st));
	st.n_workers = 1;
	assert_int_equal(rnic_flow_owner(&st, 1, 2, 3, 4), 0);
	st.n_workers = 4;
	for (uint32_t i = 0; i < 40000; i++) {
		uint32_t src = rte_cpu_to_be_32(0xc0000200 | (i & 255));
		uint32_t dst = rte_cpu_to_be_32(0xc000020a);
		uint16_t sp = rte_cpu_to_be_16((uint16_t)(10000 + i));
		uint16_t dp = rte_cpu_to_be_16(5001);
		unsigned w = rnic_flow_owner(&st, src, dst, sp, dp);
		assert_true(w < 4);
		count[w]++;
		/* what an RSS NIC with rnic's key and table would pick */
		uint32_t tuple[3] = { rte_be_to_cpu_32(src), rte_be_to_cpu_32(dst),
				      (uint32_t)(10000 + i) << 16 | 5001 };
		uint32_t h = rte_softrss(tuple, 3, rnic_rss_key);
		assert_int_equal(w, rnic_reta_entry_worker(h & 127, 4));
		assert_int_equal(w, rnic_flow_owner(&st, src, dst, sp, dp));
	}
	for (int w = 0; w < 4; w++)
		assert_in_range(count[w], 8000, 12000);

	/* two workers: an even split, and the RSS table rule agrees */
	st.n_workers = 2;
	unsigned two[2] = { 0, 0 };
	for (uint32_t i = 0; i < 20000; i++) {
		uint32_t src = rte_cpu_to_be_32(0x0a000001 + i * 7919);
		uint16_t sp = rte_cpu_to_be_16((uint16_t)(1024 + i));
		unsigned w = rnic_flow_owner(&st, src, rte_cpu_to_be_32(0x0a0000fe),
					     sp, rte_cpu_to_be_16(4791));
		assert_true(w < 2);
		two[w]++;
	}
	assert_in_range(two[0], 9000, 11000);
	for (unsigned e = 0; e < 128; e++)
		assert_int_equal(rnic_reta_entry_worker(e, 2), e & 1);
	assert_int_equal(rnic_reta_entry_worker(5, 0), 0);
	/* deterministic: a fixed tuple always lands on the same worker */
	st.n_workers = 4;
	unsigned w0 = rnic_flow_owner(&st, rte_cpu_to_be_32(0xc0000201),
				      rte_cpu_to_be_32(0xc000020a),
				      rte_cpu_to_be_16(40000), rte_cpu_to_be_16(5001));
	for (int i = 0; i < 100; i++)
		assert_int_equal(w0, rnic_flow_owner(&st, rte_cpu_to_be_32(0xc0000201),
				 rte_cpu_to_be_32(0xc000020a),
				 rte_cpu_to_be_16(40000), rte_cpu_to_be_16(5001)));
	/* the key is the one lib/port programs: 40 bytes, first bytes known */
	assert_int_equal(sizeof(rnic_rss_key), 40);
	assert_int_equal(rnic_rss_key[0], 0x6d);
}

/* rte_softrss is the hash RSS NICs compute: the Microsoft RSS
 * verification suite, IPv4 with ports, 66.9.149.187:2794 ->
 * 161.142.100.80:1766 hashes to 0x51ccc178 with the Microsoft key. */
static void toeplitz_vector(void **state)
{
	static const uint8_t ms_key[40] = {
		0x6d, 0x5a, 0x56, 0xda, 0x25, 0x5b, 0x0e, 0xc2,
		0x41, 0x67, 0x25, 0x3d, 0x43, 0xa3, 0x8f, 0xb0,
		0xd0, 0xca, 0x2b, 0xcb, 0xae, 0x7b, 0x30, 0xb4,
		0x77, 0xcb, 0x2d, 0xa3, 0x80, 0x30, 0xf2, 0x0c,
		0x6a, 0x42, 0xb7, 0x3b, 0xbe, 0xac, 0x01, 0xfa,
	};
	(void)state;
	uint32_t tuple[3] = { 0x420995bb, 0xa18e6450, (2794u << 16) | 1766u };
	assert_int_equal(rte_softrss(tuple, 3, ms_key), 0x51ccc178);
	/* and rnic_flow_owner() is that hash with rnic's key and table */
	struct rnic_stack st;
	memset(&st, 0, sizeof(st));
	st.n_workers = 4;
	assert_int_equal(rnic_flow_owner(&st, rte_cpu_to_be_32(0x420995bb),
					 rte_cpu_to_be_32(0xa18e6450),
					 rte_cpu_to_be_16(2794), rte_cpu_to_be_16(1766)),
			 rnic_reta_entry_worker(rte_softrss(tuple, 3, rnic_rss_key) & 127, 4));
}

/* Both directions of a flow have one owner (the key is symmetric), for
 * 2 to 16 workers: what one rnic end sends from a flow's worker arrives,
 * over a link that keeps the queue index (memif, veth), on the queue of
 * the worker that owns the flow on the other end. */
static void steering_symmetric(void **state)
{
	struct rnic_stack st;
	uint64_t x = 88172645463325252ULL;
	(void)state;
	memset(&st, 0, sizeof(st));
	for (unsigned n = 2; n <= 16; n++) {
		st.n_workers = n;
		for (unsigned i = 0; i < 5000; i++) {
			x ^= x << 13; x ^= x >> 7; x ^= x << 17;
			uint32_t a = (uint32_t)x, b = (uint32_t)(x >> 32);
			uint16_t pa = (uint16_t)(x >> 7), pb = (uint16_t)(x >> 29);
			assert_int_equal(rnic_flow_owner(&st, a, b, pa, pb),
					 rnic_flow_owner(&st, b, a, pb, pa));
		}
	}
}

int main(void)
{
	char *argv[] = { "test_engine", "--no-huge", "-m", "64", "--no-pci",
			 "--file-prefix", "rnic-test-engine", "--log-level=*:error", NULL };
	if (rte_eal_init(8, argv) < 0)
		return 1;
	us_tsc = rte_get_tsc_hz() / 1000000;
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(never_early_in_order),
		cmocka_unit_test(cancel_and_rearm),
		cmocka_unit_test(rearm_from_callback),
		cmocka_unit_test(random_timers),
		cmocka_unit_test(long_timers),
		cmocka_unit_test(cancel_inside_callback),
		cmocka_unit_test(stall),
		cmocka_unit_test(far_timers_cost),
		cmocka_unit_test(steering),
		cmocka_unit_test(toeplitz_vector),
		cmocka_unit_test(steering_symmetric),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
