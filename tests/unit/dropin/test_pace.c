/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The drop-in's pacing decisions (lib/dropin/pace.h): which posts run to
 * completion at once, how the progress thread's nap grows while the
 * program drives, and when ibv_poll_cq() lingers for the peer's next
 * frame (on only after the progress thread, or the program's own next
 * post, saw the program wait for frames without a call, off again after RV_LINGER_STRIKES lingers that
 * ran out).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "dropin/pace.h"

static void post_now_only_into_an_idle_queue(void **state)
{
	(void)state;
	assert_true(rv_post_now(0));
	assert_false(rv_post_now(1));
	assert_false(rv_post_now(127));
}

/* Behind work in flight, every 16th unsent entry drives the stack once. */
static void post_burst_every_16(void **state)
{
	(void)state;
	assert_false(rv_post_burst(0));
	assert_false(rv_post_burst(RV_POST_BURST - 2));
	assert_true(rv_post_burst(RV_POST_BURST - 1));   /* this post makes 32 */
	assert_true(rv_post_burst(100));   /* the lock was busy before: try again */
}

static void nap_grows_while_the_program_drives(void **state)
{
	(void)state;
	uint64_t nap = rv_nap_next(0, true);
	assert_int_equal(nap, RV_NAP_MIN_NS);
	nap = rv_nap_next(nap, true);
	assert_int_equal(nap, 2 * RV_NAP_MIN_NS);
	for (int i = 0; i < 20; i++)
		nap = rv_nap_next(nap, true);
	assert_int_equal(nap, RV_NAP_MAX_NS);
	assert_int_equal(rv_nap_next(nap, false), RV_NAP_MIN_NS);
}

/* The program took completions at 1000 (its 5th call), then spun. */
static void seen(struct rv_linger *l)
{
	rv_linger_init(l, 500, 2000);
	rv_linger_reaped(l, 5, 1000);
	assert_false(rv_linger_wanted(l, false));
}

/* ... and the progress thread received frames at @p t, no call since. */
static void seen_then_frames_at(struct rv_linger *l, uint64_t t)
{
	seen(l);
	rv_linger_progress_rx(l, 5, false, t);
}

static void linger_on_when_frames_come_while_the_program_spins(void **state)
{
	struct rv_linger l;

	(void)state;
	seen_then_frames_at(&l, 1200);
	assert_true(rv_linger_wanted(&l, false));
}

/* The progress thread may take the peer's frame only after a nap longer
 * than the linger time: still the pattern (the window, not the linger
 * time, bounds it; with the linger time the pattern was lost for good
 * once the naps had grown). */
static void pattern_seen_after_a_long_nap(void **state)
{
	struct rv_linger l;

	(void)state;
	seen_then_frames_at(&l, 1000 + 1500);
	assert_true(rv_linger_wanted(&l, false));
}

static void no_linger_while_sends_are_in_flight(void **state)
{
	struct rv_linger l;

	(void)state;
	seen_then_frames_at(&l, 1200);
	assert_true(rv_linger_wanted(&l, false));    /* its last send done: it waits */
	assert_false(rv_linger_wanted(&l, true));    /* it reaps as it pipelines */
}

static void no_linger_for_a_program_that_calls_blocks_or_waits_long(void **state)
{
	struct rv_linger l;

	(void)state;
	seen(&l);
	rv_linger_progress_rx(&l, 6, false, 1200);   /* it called again: it drives */
	assert_false(rv_linger_wanted(&l, false));
	rv_linger_progress_rx(&l, 5, true, 1200);    /* it waits in a verbs call */
	assert_false(rv_linger_wanted(&l, false));
	rv_linger_progress_rx(&l, 5, false, 3000);   /* a window later */
	assert_false(rv_linger_wanted(&l, false));

	rv_linger_init(&l, 500, 2000);               /* never reaped */
	rv_linger_progress_rx(&l, 0, false, 100);
	assert_false(rv_linger_wanted(&l, false));

	rv_linger_init(&l, 0, 2000);                 /* RNIC_POLL_LINGER_US=0 */
	rv_linger_reaped(&l, 5, 1000);
	rv_linger_progress_rx(&l, 5, false, 1000);
	assert_false(rv_linger_wanted(&l, false));
}

static void linger_off_after_strikes_in_a_row(void **state)
{
	struct rv_linger l;

	(void)state;
	seen_then_frames_at(&l, 1200);
	for (int i = 0; i < RV_LINGER_STRIKES - 1; i++)
		rv_linger_done(&l, false);
	rv_linger_done(&l, true);                    /* a frame came: count anew */
	for (int i = 0; i < RV_LINGER_STRIKES - 1; i++) {
		rv_linger_done(&l, false);
		assert_true(rv_linger_wanted(&l, false));
	}
	rv_linger_done(&l, false);
	assert_false(rv_linger_wanted(&l, false));
	assert_int_equal(l.lingers, 2 * RV_LINGER_STRIKES);
	assert_int_equal(l.timeouts, 2 * RV_LINGER_STRIKES - 1);
	/* seen again: on again */
	rv_linger_reaped(&l, 9, 5000);
	rv_linger_progress_rx(&l, 9, false, 5100);
	assert_true(rv_linger_wanted(&l, false));
}

/* The program drives while it drove less than RV_APP_POLLING_NS ago and
 * no thread of it is blocked in a verbs wait: a moment off its CPU is not
 * an absence. */
static void program_drives_within_the_window(void **state)
{
	(void)state;
	assert_true(rv_app_drives(0, RV_APP_POLLING_NS, false));
	assert_true(rv_app_drives(20000, RV_APP_POLLING_NS, false));            /* was the window: 20 µs */
	assert_true(rv_app_drives(RV_APP_POLLING_NS - 1, RV_APP_POLLING_NS, false));
	assert_false(rv_app_drives(RV_APP_POLLING_NS, RV_APP_POLLING_NS, false));
	assert_false(rv_app_drives(0, RV_APP_POLLING_NS, true));
	assert_true(rv_app_drives(-5, RV_APP_POLLING_NS, false));   /* drove after the clock */
}

/* The program's own post tells the pattern: its first call after the reap
 * is a post, and bytes were placed on its QP in between. */
static void linger_on_when_the_program_posts_after_placement(void **state)
{
	struct rv_linger l;

	(void)state;
	seen(&l);
	rv_linger_posted(&l, 6, true, 1200);
	assert_true(rv_linger_wanted(&l, false));

	seen(&l);
	rv_linger_posted(&l, 6, false, 1200);        /* nothing placed: it computed */
	assert_false(rv_linger_wanted(&l, false));
	rv_linger_posted(&l, 7, true, 1200);         /* a call between: it drove */
	assert_false(rv_linger_wanted(&l, false));
	rv_linger_posted(&l, 6, true, 3000);         /* a window later */
	assert_false(rv_linger_wanted(&l, false));

	rv_linger_init(&l, 500, 2000);               /* never reaped */
	rv_linger_posted(&l, 1, true, 100);
	assert_false(rv_linger_wanted(&l, false));

	rv_linger_init(&l, 0, 2000);                 /* RNIC_POLL_LINGER_US=0 */
	rv_linger_reaped(&l, 5, 1000);
	rv_linger_posted(&l, 6, true, 1200);
	assert_false(rv_linger_wanted(&l, false));
}

/* The lock-free common case does what a linger that got its frame and
 * the reap after it do under the lock. */
static void linger_hit_as_done_and_reaped(void **state)
{
	struct rv_linger a, b;

	(void)state;
	seen_then_frames_at(&a, 1200);
	seen_then_frames_at(&b, 1200);
	rv_linger_done(&a, true);
	rv_linger_reaped(&a, 9, 4000);
	rv_linger_hit(&b);
	rv_linger_reaped(&b, 9, 4000);
	assert_int_equal(a.lingers, b.lingers);
	assert_int_equal(a.timeouts, b.timeouts);
	assert_int_equal(a.strikes, b.strikes);
	assert_int_equal(a.on, b.on);
	assert_int_equal(a.reap_tsc, b.reap_tsc);
	assert_int_equal(a.reap_calls, b.reap_calls);
	assert_int_equal(b.lingers, 1);
	assert_int_equal(b.reap_calls, 9);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(post_now_only_into_an_idle_queue),
		cmocka_unit_test(post_burst_every_16),
		cmocka_unit_test(nap_grows_while_the_program_drives),
		cmocka_unit_test(linger_on_when_frames_come_while_the_program_spins),
		cmocka_unit_test(pattern_seen_after_a_long_nap),
		cmocka_unit_test(no_linger_while_sends_are_in_flight),
		cmocka_unit_test(no_linger_for_a_program_that_calls_blocks_or_waits_long),
		cmocka_unit_test(linger_off_after_strikes_in_a_row),
		cmocka_unit_test(program_drives_within_the_window),
		cmocka_unit_test(linger_on_when_the_program_posts_after_placement),
		cmocka_unit_test(linger_hit_as_done_and_reaped),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
