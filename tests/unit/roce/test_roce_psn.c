/* SPDX-License-Identifier: BSD-3-Clause */
/* 24-bit PSN arithmetic, table-driven, with wraparound at 2^24. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "roce/psn.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

static void
test_add_sub(void **state)
{
	static const struct { uint32_t psn, n, sum; } t[] = {
		{ 0, 0, 0 },
		{ 0, 1, 1 },
		{ 0xfffffe, 1, 0xffffff },
		{ 0xffffff, 1, 0 },
		{ 0xffffff, 2, 1 },
		{ 0xfffff0, 0x20, 0x10 },
		{ 0x123456, 0x1000000, 0x123456 },     /* a full turn */
		{ 0x800000, 0x800000, 0 },
		{ 0xff000005, 1, 0x000006 },           /* junk above bit 23 */
		{ 5, 0xffffffff, 4 },                  /* n = -1 mod 2^32 */
	};

	(void)state;
	for (size_t i = 0; i < N(t); i++) {
		assert_int_equal(rnic_psn_add(t[i].psn, t[i].n), t[i].sum);
		assert_int_equal(rnic_psn_sub(t[i].sum, t[i].n),
				 t[i].psn & RNIC_PSN_MASK);
	}
	assert_int_equal(rnic_psn_next(0xffffff), 0);
	assert_int_equal(rnic_psn_next(0x7fffff), 0x800000);
	assert_int_equal(rnic_psn_sub(0, 1), 0xffffff);
}

static void
test_diff_and_order(void **state)
{
	/* diff = a - b as signed 24-bit; lt/le/gt/ge follow from its sign */
	static const struct { uint32_t a, b; int32_t diff; } t[] = {
		{ 0, 0, 0 },
		{ 1, 0, 1 },
		{ 0, 1, -1 },
		{ 0, 0xffffff, 1 },                    /* across the wrap */
		{ 0xffffff, 0, -1 },
		{ 5, 0xfffffb, 10 },
		{ 0xfffffb, 5, -10 },
		{ 0x7fffff, 0, 0x7fffff },             /* largest forward */
		{ 0, 0x7fffff, -0x7fffff },
		{ 0x800000, 0, -0x800000 },            /* the ambiguous half */
		{ 0, 0x800000, -0x800000 },
		{ 0x800001, 0, -0x7fffff },            /* past half: behind */
		{ 0x123456, 0x123400, 0x56 },
		{ 0xab000010, 0x00000008, 8 },         /* junk above bit 23 */
	};

	(void)state;
	for (size_t i = 0; i < N(t); i++) {
		int32_t d = rnic_psn_diff(t[i].a, t[i].b);

		if (d != t[i].diff)
			fail_msg("diff(0x%x, 0x%x) = %d, want %d", t[i].a,
				 t[i].b, d, t[i].diff);
		assert_int_equal(rnic_psn_lt(t[i].a, t[i].b), t[i].diff < 0);
		assert_int_equal(rnic_psn_le(t[i].a, t[i].b), t[i].diff <= 0);
		assert_int_equal(rnic_psn_gt(t[i].a, t[i].b), t[i].diff > 0);
		assert_int_equal(rnic_psn_ge(t[i].a, t[i].b), t[i].diff >= 0);
	}
}

static void
test_in_window(void **state)
{
	static const struct { uint32_t psn, start, n; int in; } t[] = {
		{ 10, 10, 1, 1 },
		{ 10, 10, 0, 0 },                      /* empty window */
		{ 9, 10, 5, 0 },
		{ 14, 10, 5, 1 },
		{ 15, 10, 5, 0 },
		{ 0xfffffe, 0xfffffe, 4, 1 },          /* window spans the wrap */
		{ 0xffffff, 0xfffffe, 4, 1 },
		{ 0, 0xfffffe, 4, 1 },
		{ 1, 0xfffffe, 4, 1 },
		{ 2, 0xfffffe, 4, 0 },
		{ 0xfffffd, 0xfffffe, 4, 0 },
		{ 0x123456, 0, 0x1000000, 1 },         /* whole space */
		{ 0x123456, 0, 0xffffffff, 1 },
	};

	(void)state;
	for (size_t i = 0; i < N(t); i++)
		if (rnic_psn_in_window(t[i].psn, t[i].start, t[i].n) != t[i].in)
			fail_msg("in_window(0x%x, 0x%x, %u) != %d", t[i].psn,
				 t[i].start, t[i].n, t[i].in);
}

/* Walking through the wrap: each next PSN is after its predecessor. */
static void
test_walk_wrap(void **state)
{
	uint32_t p = 0xfffff0;

	(void)state;
	for (int i = 0; i < 64; i++) {
		uint32_t q = rnic_psn_next(p);

		assert_true(q <= RNIC_PSN_MASK);
		assert_true(rnic_psn_lt(p, q));
		assert_int_equal(rnic_psn_diff(q, p), 1);
		assert_int_equal(rnic_psn_diff(rnic_psn_add(p, 1000), p), 1000);
		p = q;
	}
	assert_int_equal(p, 0x000030);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_add_sub),
		cmocka_unit_test(test_diff_and_order),
		cmocka_unit_test(test_in_window),
		cmocka_unit_test(test_walk_wrap),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
