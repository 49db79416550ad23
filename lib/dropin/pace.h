/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The drop-in's pacing decisions (docs/dropin.md, "Who runs the stack"),
 * kept apart from the threads and the stack so that they can be tested on
 * their own: when a post goes out at once, how long the progress thread
 * naps while the program drives, and when a program's ibv_poll_cq() keeps
 * driving after it found completions ("linger").
 *
 * Times are in TSC cycles; the caller gives the clock and the rate.
 */
#ifndef RNIC_DROPIN_PACE_H
#define RNIC_DROPIN_PACE_H

#include <stdbool.h>
#include <stdint.h>

/*
 * Does a post run to completion on the posting thread? Only when the send
 * queue had nothing in flight (@p in_flight: entries posted and not yet
 * retired, before this post). Behind entries still in flight, the program
 * is pipelining and will poll for their completions: the post only rings
 * the doorbell, and the next ibv_poll_cq() that drives sends everything
 * posted since in bursts, as one post of a chain of work requests would.
 * A latency program (one operation at a time) always finds the queue empty.
 */
static inline bool rv_post_now(uint32_t in_flight)
{
	return in_flight == 0;
}

/*
 * Behind work in flight, does a post also drive the stack once? When
 * @p unsent entries (posted, not yet taken by the transport, before this
 * post) make a burst of RV_POST_BURST with it. A program that posts many
 * single work requests between two polls (perftest's default: a hundred
 * Writes, one signaled, per reap) would otherwise leave the link idle
 * while it posts and send everything at its next poll, then wait there
 * for the acknowledgement of its one signaled Write; a loop of the stack
 * every burst sends while it posts and takes the acknowledgements in.
 * Only when the drive lock is free at once: a post never waits for it.
 * 16: perftest's 64 B default, quiet machine, three alternating runs each:
 * 4 entries 2.43-2.56 M/s, 8 3.24-3.56, 16 3.94-4.04, 32 3.72-3.95, 64
 * 3.29-3.58 (64 KiB Writes the same with 16 or 32).
 */
#define RV_POST_BURST 16u

static inline bool rv_post_burst(uint32_t unsent)
{
	return unsent + 1 >= RV_POST_BURST;
}

/* The progress thread's nap while the program drives: it starts at
 * RV_NAP_MIN_NS and doubles while the program keeps driving, up to
 * RV_NAP_MAX_NS (every wakeup takes a CPU from a busy thread where there
 * are few: 64 KiB ib_write_bw, quiet machine, four alternating pairs with
 * the post burst: 2.21-2.31 GB/s with 0.8 ms, 2.29-2.50 with 4 ms);
 * back to the start once the program stopped (rv_app_drives). */
#define RV_NAP_MIN_NS 50000ull
#define RV_NAP_MAX_NS 4000000ull

uint64_t rv_nap_next(uint64_t nap_ns, bool app_drives);

/*
 * Does the program drive? A program thread drove the stack @p since ago
 * and none waits in a verbs call (@p blocked): while it drove less than
 * RV_APP_POLLING_NS ago the progress thread naps (rv_nap_next), once it
 * has been away longer, or blocks, the progress thread drives in its
 * place. Where CPUs are few a polling program is kept off its CPU now and
 * then for tens or hundreds of µs (a context switch, the peer process's
 * threads, the kernel after another process exits): with a window of
 * 20 µs each such moment was taken for an absence, and the progress
 * thread's naps started over from RV_NAP_MIN_NS. That made trains of
 * short naps, whose wakeups took the CPU from spinning threads and made
 * the next such moment, and the progress thread then drove, and held the
 * drive lock, while it was kept off its CPU itself: ib_write_lat between
 * two processes on two CPUs ran either with about 30 naps and a p99 of
 * 5 µs or with 110-200 naps and 14-16 µs, and right after a 64 KiB
 * ib_write_bw run its p99 was 15-21 µs in 5 runs of 10 (5.1-6.3 µs in 10
 * of 10 with 1 ms).
 */
#define RV_APP_POLLING_NS 1000000ull

/* @p since and @p window (RV_APP_POLLING_NS, in the caller's clock units,
 * converted once) in the same unit; a negative @p since (the program drove
 * after the caller's clock was read) is driving. */
static inline bool rv_app_drives(int64_t since, uint64_t window, bool blocked)
{
	return !blocked && since < (int64_t)window;
}

/*
 * Linger: a program that, once it took a completion, waits for the peer by
 * spinning on memory (ib_write_lat, the eager RDMA protocols of MPI
 * libraries) makes no verbs call, so only the progress thread can place
 * the peer's next Write; where CPUs are few, that thread sleeps while the
 * program drives, and the Write waits for its wakeup (tens of µs).
 *
 * The pattern is seen from the progress thread: it received frames while
 * the program, not blocked in a verbs wait, had made no data path call
 * since ibv_poll_cq() last returned completions, and less than the window
 * after that (at least the progress thread's longest nap: the frame may
 * have waited for its wakeup, and a window as short as the linger missed
 * the pattern for good once the naps had grown, leaving every Write to
 * the napping thread). From then on, ibv_poll_cq() that returns completions
 * first keeps driving the stack until a frame arrives, at most the linger
 * time: the peer's Write is placed by the program's own thread before it
 * starts spinning. RV_LINGER_STRIKES lingers in a row that run out
 * (nothing came: the program was not waiting for a peer, or the peer was
 * kept off its CPU) turn lingering off until the pattern is seen again.
 * Linger time 0: never.
 */
#define RV_LINGER_STRIKES 3

struct rv_linger {
	uint64_t cycles;        /* the linger time; 0: off for good */
	uint64_t window;        /* how long after a reap frames tell the pattern */
	bool on;                /* the pattern was seen */
	unsigned strikes;       /* lingers in a row that ran out */
	uint64_t reap_tsc;      /* when ibv_poll_cq() last returned completions */
	unsigned reap_calls;    /* the program's call count then */
	uint64_t lingers, timeouts;   /* counters */
};

/* @p cycles the linger time, @p window the pattern's window (cycles). */
void rv_linger_init(struct rv_linger *l, uint64_t cycles, uint64_t window);

/* ibv_poll_cq() returns completions at @p now; @p calls counts the
 * program's data path calls, this one included. */
void rv_linger_reaped(struct rv_linger *l, unsigned calls, uint64_t now);

/* The progress thread received frames at @p now. @p blocked: a program
 * thread waits in a verbs call (ibv_get_cq_event, rdma_get_cm_event). */
void rv_linger_progress_rx(struct rv_linger *l, unsigned calls, bool blocked, uint64_t now);

/* The program posts (its call @p calls, at @p now) and @p placed: bytes
 * were placed on the QP of its last post since its last reap. With no
 * call between that reap and this post, the program waited for them
 * without a verbs call: the pattern, seen from the program's own thread.
 * The progress thread alone saw it late or never where CPUs are few: it
 * naps while the program drives, then competes for a CPU with two
 * spinning programs, so the first exchanges of ib_write_lat waited
 * milliseconds each for it until its turn came. */
void rv_linger_posted(struct rv_linger *l, unsigned calls, bool placed, uint64_t now);

/* Should ibv_poll_cq(), having found completions, linger? Not while a
 * send queue of those completions still has work in flight
 * (@p sends_in_flight): a program with sends outstanding polls again for
 * them (a bandwidth test reaping every hundredth Write), and the frames it
 * waits for are its own acknowledgements; lingering there would hold back
 * its next posts. A program that spins on memory for its peer has taken
 * its last completion (ib_write_lat: one Write at a time). */
static inline bool rv_linger_wanted(const struct rv_linger *l, bool sends_in_flight)
{
	return __atomic_load_n(&l->on, __ATOMIC_RELAXED) && l->cycles != 0 && !sends_in_flight;
}

/* A linger ended: @p got_rx a frame arrived, else it ran out. */
void rv_linger_done(struct rv_linger *l, bool got_rx);

/* The common case without the lock: a linger got its frame with no strike
 * to clear (strikes 0), so rv_linger_done(l, true) only counts it. */
void rv_linger_hit(struct rv_linger *l);

#endif
