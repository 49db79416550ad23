/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rnic-perf --rebind-ms M: a thread of its own re-binds one CQ, chosen at
 * random, to a random completion handler every M ms while the main thread
 * polls, posts and (under --verify) re-arms. Re-binding from another
 * thread is what an application balancing its handlers would do, and it
 * races the re-bind with the workers that produce completions and deliver
 * events. Each rnic_modify_cq_handler() call is timed.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "perf.h"

static uint64_t rebind_rand(struct perf_rebinder *rb)
{
	rb->rng ^= rb->rng << 13;
	rb->rng ^= rb->rng >> 7;
	rb->rng ^= rb->rng << 17;
	return rb->rng;
}

/* Sleep @p ms, or less when told to stop. @return true to go on. */
static bool rebind_wait(struct perf_rebinder *rb)
{
	double until = perf_now() + rb->ms / 1e3;
	struct timespec step = { .tv_nsec = 1000000 };   /* 1 ms */

	while (!__atomic_load_n(&rb->stop, __ATOMIC_ACQUIRE)) {
		double left = until - perf_now();
		if (left <= 0)
			return true;
		if (left < 1e-3)
			step.tv_nsec = (long)(left * 1e9);
		nanosleep(&step, NULL);
	}
	return false;
}

/* Move one CQ; on a failure, keep the errno and end the thread. */
static bool rebind_one(struct perf_rebinder *rb)
{
	struct perf_side *s = &rb->sides[rebind_rand(rb) % rb->nsides];
	struct ibv_cq *cq = s->cq[rebind_rand(rb) % s->ncq];
	int handlers = rnic_query_handlers(s->ctx);
	int h = (int)(rebind_rand(rb) % (uint64_t)(handlers > 0 ? handlers : 1));

	double t0 = perf_now();
	int rc = rnic_modify_cq_handler(cq, h);
	double us = (perf_now() - t0) * 1e6;
	if (rc != 0) {
		rb->err = -rc;
		fprintf(stderr, "rnic-perf: re-binding a CQ to handler %d: %s\n", h, strerror(-rc));
		return false;
	}
	rb->count++;
	rb->us_sum += us;
	if (us > rb->us_max)
		rb->us_max = us;
	return true;
}

static void *rebind_main(void *arg)
{
	struct perf_rebinder *rb = arg;

	while (rebind_wait(rb) && rebind_one(rb))
		;
	return NULL;
}

/* @return 0 or -1 (message printed). */
int perf_rebind_start(struct perf_rebinder *rb, struct perf_side *sides, unsigned nsides,
		      unsigned ms)
{
	*rb = (struct perf_rebinder){
		.sides = sides, .nsides = nsides, .ms = ms,
		.rng = 0x9e3779b97f4a7c15ull ^ (uint64_t)time(NULL),
	};
	int rc = pthread_create(&rb->thread, NULL, rebind_main, rb);
	if (rc != 0) {
		fprintf(stderr, "rnic-perf: cannot start the re-bind thread: %s\n", strerror(rc));
		return -1;
	}
	return 0;
}

/* Stop and join the thread; its figures go into @p r. */
void perf_rebind_stop(struct perf_rebinder *rb, struct perf_result *r)
{
	__atomic_store_n(&rb->stop, 1, __ATOMIC_RELEASE);
	pthread_join(rb->thread, NULL);
	r->rebinds = rb->count;
	r->rebind_us_sum = rb->us_sum;
	r->rebind_us_max = rb->us_max;
}
