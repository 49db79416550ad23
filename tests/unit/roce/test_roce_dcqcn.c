/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * DCQCN reaction point (lib/roce/dcqcn.c) driven with explicit time: the
 * cut on a CNP, alpha's decay without CNPs, fast recovery then additive
 * then hyper increase, the byte counter, the clamps, long idle gaps.
 * Expected rates follow from the formulas in dcqcn.h by hand (kb/s,
 * halving rounds down); the steps are written out beside each table.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "roce/dcqcn.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))
#define ONE RNIC_DCQCN_ALPHA_ONE

/* 100 Gb/s line, 10 Mb/s floor, Rai 40 Mb/s, Rhai 400 Mb/s, the paper's
 * 55 us alpha period, F = 5, g = 1/256; 300 us rate timer, 10 MiB bytes */
static const struct rnic_dcqcn_params P = {
	.max_kbps = 100000000, .min_kbps = 10000, .ai_kbps = 40000, .hai_kbps = 400000,
	.alpha_us = 55, .rate_us = 300, .byte_reset = 10u << 20, .f = 5, .g_shift = 8,
};

static void test_params(void **state)
{
	(void)state;
	assert_true(rnic_dcqcn_params_ok(&P));
	struct rnic_dcqcn_params q = P;
	q.min_kbps = P.max_kbps + 1;
	assert_false(rnic_dcqcn_params_ok(&q));
	q = P;
	q.rate_us = 0;
	assert_false(rnic_dcqcn_params_ok(&q));
	q = P;
	q.g_shift = 0;
	assert_false(rnic_dcqcn_params_ok(&q));
}

/* alpha starts at 1: each CNP halves the rate and keeps alpha at 1
 * ((1 - g) * 1 + g); the target is the rate before the cut. */
static void test_cut(void **state)
{
	static const struct { uint64_t t, rc, rt; } t[] = {
		{ 0, 50000000, 100000000 },
		{ 10, 25000000, 50000000 },
		{ 20, 12500000, 25000000 },
	};
	struct rnic_dcqcn d;
	(void)state;
	rnic_dcqcn_init(&d, &P, 0);
	assert_int_equal(d.rc_kbps, P.max_kbps);
	assert_int_equal(d.rt_kbps, P.max_kbps);
	assert_int_equal(d.alpha, ONE);
	for (size_t i = 0; i < N(t); i++) {
		rnic_dcqcn_cnp(&d, &P, t[i].t);
		assert_int_equal(d.rc_kbps, t[i].rc);
		assert_int_equal(d.rt_kbps, t[i].rt);
		assert_int_equal(d.alpha, ONE);
		assert_int_equal(d.cuts, i + 1);
	}
	assert_int_equal(d.increases, 0);
}

/* Without CNPs alpha loses 1/256 of itself every 55 us; a CNP after 1000
 * periods (alpha ~ 0.0201) cuts only ~1 %, and lifts alpha by g. */
static void test_alpha_decay(void **state)
{
	struct rnic_dcqcn d;
	(void)state;
	rnic_dcqcn_init(&d, &P, 0);
	rnic_dcqcn_cnp(&d, &P, 0);
	rnic_dcqcn_advance(&d, &P, 54);
	assert_int_equal(d.alpha, ONE);                  /* not a full period yet */
	rnic_dcqcn_advance(&d, &P, 55);
	assert_int_equal(d.alpha, ONE - ONE / 256);   /* exact: ONE is a power of 2 */
	static const unsigned k[] = { 2, 10, 100, 1000 };
	double want = 1.0;   /* (255/256)^k in floating point */
	unsigned done = 0;
	for (size_t i = 0; i < N(k); i++) {
		for (; done < k[i]; done++)
			want *= 255.0 / 256.0;
		rnic_dcqcn_advance(&d, &P, 55ull * k[i]);
		double got = (double)d.alpha / ONE;
		double diff = got > want ? got - want : want - got;
		assert_true(diff <= want * 0.002 + 1e-6);   /* rounding, 1000 steps */
	}
	/* the rate timer ran meanwhile: back at the line rate */
	assert_int_equal(d.rc_kbps, P.max_kbps);
	uint32_t a = d.alpha;
	rnic_dcqcn_cnp(&d, &P, 55000);
	uint64_t cut = P.max_kbps - d.rc_kbps;
	assert_int_equal(cut, (P.max_kbps * a) / (2ull * ONE));
	assert_true(cut > P.max_kbps / 200 && cut < P.max_kbps / 50);   /* ~1 % */
	assert_int_equal(d.alpha, a - ((a + 128) >> 8) + (ONE >> 8));
	/* long enough, alpha reaches 0 (and the loop does not walk 10^6
	 * periods one by one to get there) */
	rnic_dcqcn_advance(&d, &P, 60000000);
	assert_int_equal(d.alpha, 0);
}

/*
 * Fast recovery, additive, hyper. Two CNPs: Rc 25 Gb/s, Rt 50 Gb/s.
 * Then 6 byte-counter events (BC 1..6, T 0): five fast recovery steps
 * Rc = (Rt + Rc) / 2, then max(T, BC) = 6 > F: additive (Rt + 40 Mb/s).
 * Then rate-timer events T = 1..5: min(T, BC) <= F, max > F: additive;
 * T = 6, 7: min = 6 > F: hyper, Rt + (6 - 5) * 400 Mb/s.
 */
static void test_increase_stages(void **state)
{
	static const struct { uint64_t rc, rt; } bc[] = {
		{ 37500000, 50000000 }, { 43750000, 50000000 }, { 46875000, 50000000 },
		{ 48437500, 50000000 }, { 49218750, 50000000 },                /* fast recovery */
		{ 49629375, 50040000 },                                        /* additive */
	};
	static const struct { uint64_t rc, rt; } tm[] = {
		{ 49854687, 50080000 }, { 49987343, 50120000 }, { 50073671, 50160000 },
		{ 50136835, 50200000 }, { 50188417, 50240000 },                /* additive */
		{ 50414208, 50640000 }, { 50727104, 51040000 },                /* hyper */
	};
	struct rnic_dcqcn d;
	(void)state;
	rnic_dcqcn_init(&d, &P, 0);
	rnic_dcqcn_cnp(&d, &P, 0);
	rnic_dcqcn_cnp(&d, &P, 1);     /* timers restart at t = 1 */
	assert_int_equal(d.rc_kbps, 25000000);
	assert_int_equal(d.rt_kbps, 50000000);
	/* bytes short of one event change nothing */
	assert_int_equal(rnic_dcqcn_sent(&d, &P, P.byte_reset - 1, 10), 0);
	assert_int_equal(d.rc_kbps, 25000000);
	assert_int_equal(rnic_dcqcn_sent(&d, &P, 1, 10), 1);
	assert_int_equal(d.rc_kbps, bc[0].rc);
	for (size_t i = 1; i < N(bc); i++) {
		assert_int_equal(rnic_dcqcn_sent(&d, &P, P.byte_reset, 10), 1);
		assert_int_equal(d.rc_kbps, bc[i].rc);
		assert_int_equal(d.rt_kbps, bc[i].rt);
	}
	assert_int_equal(d.bc_stage, 6);
	assert_int_equal(d.t_stage, 0);
	for (size_t i = 0; i < N(tm); i++) {
		uint64_t t = 1 + 300 * (i + 1);
		assert_int_equal(rnic_dcqcn_advance(&d, &P, t - 1), 0);   /* not yet */
		assert_int_equal(rnic_dcqcn_advance(&d, &P, t), 1);
		assert_int_equal(d.rc_kbps, tm[i].rc);
		assert_int_equal(d.rt_kbps, tm[i].rt);
	}
	assert_int_equal(d.increases, N(bc) + N(tm));
	/* a CNP resets both stages: fast recovery again */
	rnic_dcqcn_cnp(&d, &P, 2200);   /* before the next timer event (2401) */
	assert_int_equal(d.t_stage, 0);
	assert_int_equal(d.bc_stage, 0);
	assert_int_equal(d.rt_kbps, 50727104);
	uint64_t rc = d.rc_kbps;
	rnic_dcqcn_advance(&d, &P, 2500);
	assert_int_equal(d.rc_kbps, (rc + 50727104) / 2);
	assert_int_equal(d.rt_kbps, 50727104);
}

/* Floor: CNPs back to back stop at min_kbps; ceiling: a long quiet time
 * ends exactly at the line rate, never above, and costs a bounded
 * number of steps. */
static void test_clamps(void **state)
{
	struct rnic_dcqcn d;
	(void)state;
	rnic_dcqcn_init(&d, &P, 0);
	for (uint64_t t = 0; t < 40; t++)
		rnic_dcqcn_cnp(&d, &P, t);
	assert_int_equal(d.rc_kbps, P.min_kbps);
	assert_true(d.rt_kbps >= P.min_kbps && d.rt_kbps <= 20000);
	/* additive only (no bytes: BC stays 0): 40 Mb/s per 300 us, so
	 * ~2500 events to 100 Gb/s; 10 s later it is there */
	unsigned ev = rnic_dcqcn_advance(&d, &P, 10000000);
	assert_true(ev > 2000 && ev <= RNIC_DCQCN_MAX_EVENTS);
	assert_int_equal(d.rc_kbps, P.max_kbps);
	assert_int_equal(d.rt_kbps, P.max_kbps);
	/* hyper increases with many bytes stay at the ceiling */
	assert_int_equal(rnic_dcqcn_sent(&d, &P, 50ull * P.byte_reset, 10000001), 50);
	assert_int_equal(d.rc_kbps, P.max_kbps);
	assert_int_equal(d.rt_kbps, P.max_kbps);
	/* a very long gap at the ceiling: stages saturate, nothing moves */
	rnic_dcqcn_advance(&d, &P, UINT64_C(1) << 50);
	assert_int_equal(d.rc_kbps, P.max_kbps);
	assert_true(d.rate_due > (UINT64_C(1) << 50));
	assert_true(d.alpha_due > (UINT64_C(1) << 50));
	/* the smallest gain decays alpha by ~1e-6 per period: an hour idle
	 * is RNIC_DCQCN_MAX_TICKS updates, then the rest is skipped */
	struct rnic_dcqcn_params q = P;
	q.g_shift = 20;
	rnic_dcqcn_init(&d, &q, 0);
	rnic_dcqcn_cnp(&d, &q, 0);
	rnic_dcqcn_advance(&d, &q, 3600ull * 1000000);
	assert_true(d.alpha < ONE && d.alpha > ONE / 2);
	assert_true(d.alpha_due > 3600ull * 1000000);
	uint32_t a = d.alpha;
	rnic_dcqcn_advance(&d, &q, 3600ull * 1000000 + 55);
	assert_int_equal(d.alpha, a - ((a + (1u << 19)) >> 20));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_params),
		cmocka_unit_test(test_cut),
		cmocka_unit_test(test_alpha_decay),
		cmocka_unit_test(test_increase_stages),
		cmocka_unit_test(test_clamps),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
