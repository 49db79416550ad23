/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A worker: one poll-mode loop on one lcore owning a shard of the stack
 * (its RX/TX queue on every port, the flows steered to it, their TCBs, QPs,
 * CQs and timers). The loop runs a fixed sequence of bounded pollers, each
 * returning the work it did; idle detection and per-poller profiling follow.
 *
 * Fields are grouped: read-only after creation, then owner-modified. Other
 * threads reach a worker only through its rings (redirect, cmd).
 */
#ifndef RNIC_ENGINE_WORKER_H
#define RNIC_ENGINE_WORKER_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_cycles.h>
#include <rte_mbuf.h>
#include <rte_ring.h>
#include <rte_spinlock.h>

#include "rnic/rnic.h"
#include "common/burst.h"
#include "common/drops.h"
#include "engine/timer.h"

struct rnic_stack;
struct rnic_port;
struct rnic_worker;

#define RNIC_MAX_POLLERS 16

/** A poller returns the work it did (packets, events); 0 = idle. */
typedef unsigned (*rnic_poll_fn)(struct rnic_worker *w, void *arg);

struct rnic_poller {
	const char *name;
	rnic_poll_fn fn;
	void *arg;
	uint64_t calls, work, cycles;
};

/** A command run on the worker: posted by any thread through w->cmd. */
struct rnic_cmd {
	void (*fn)(struct rnic_worker *w, void *arg);
	void *arg;
	volatile int done;  /* set to 1 after fn returns (for sync calls) */
};

struct rnic_txbuf {
	uint16_t n;
	struct rte_mbuf *pkts[RNIC_TXBUF];
};

struct rnic_worker_stats {
	uint64_t loops, busy_loops;
	uint64_t idle_sleeps;        /* adaptive mode: idle loops that slept */
	uint64_t rx_pkts, tx_pkts;
	uint64_t rx_bytes, tx_bytes;
	uint64_t tx_flushes;         /* buffers handed to a port: tx_pkts over
				      * this is the mean transmit burst */
	uint64_t redirected_out, redirected_in;
	uint64_t cmds;
	uint64_t icmp_echo_replies;
	uint64_t timers_deferred;    /* loops whose timers waited for RX */
	uint64_t stuck_loops;        /* loops that ran RNIC_STUCK_LOOP_MS or
				      * longer (a poller that spins instead of
				      * returning); stuck_poller names the last */
};

/* Per-protocol slots in a worker and in a stack. */
enum rnic_proto_slot {
	RNIC_PROTO_TCP,
	RNIC_PROTO_RDMA,
	RNIC_PROTO_IWARP,
	RNIC_PROTO_ROCE,
	RNIC_PROTO_VERBS,
	RNIC_PROTO_MAX
};

struct rnic_worker {
	/* read-only after creation */
	unsigned id;                 /* index in st->workers, = queue id */
	unsigned lcore;
	struct rnic_stack *st;
	struct rte_ring *redirect;   /* mbufs from other workers (MP/SC) */
	struct rte_ring *cmd;        /* struct rnic_cmd * (MP/SC) */
	rte_spinlock_t orphan_lock;  /* callers that run commands a stopped
				      * worker left (one consumer at a time) */

	/* owner-modified */
	struct rnic_timer_wheel timers;
	uint64_t now_tsc;            /* sampled once per loop iteration */
	struct rnic_poller pollers[RNIC_MAX_POLLERS];
	unsigned n_pollers;
	struct rnic_txbuf txb[RNIC_MAX_PORTS];
	uint64_t drops[RNIC_DROP_MAX];
	struct rnic_worker_stats stats;
	void *proto[RNIC_PROTO_MAX]; /* per-protocol worker state */
	unsigned idle_loops;
	bool rx_backlog;               /* the last RX poll filled a burst */
	unsigned timers_deferred;      /* loops in a row the timers waited */
	uint16_t ip_id;                /* IPv4 identification counter */
	uint32_t tx_src_ip;            /* source address for the frame being
					* output (host order; 0: the port's):
					* lib/tcp sets it around each segment */
	struct rnic_timer link_timer;  /* worker 0: link polling */
	struct rnic_timer arp_timer;   /* ARP ageing */
	volatile bool stop;
	/* run-to-completion (rnic_worker_poll()): the thread that drives this
	 * worker (rnic_thread_token() of it; NULL once the stack runs on
	 * lcores), and whether that thread is inside the loop right now */
	const void *driver;
	bool in_loop;
	/* stuck-loop detection, read by other threads (telemetry,
	 * rnic_stack_stop()) with relaxed atomics: the poller running now and
	 * the TSC at the start of the loop it runs in (now_tsc above) */
	unsigned cur_poller;
	const char *stuck_poller;      /* the poller of the last stuck loop */
};

/* A loop this long is stuck: no poller should hold a worker that long
 * (a retransmission burst or a 64 KiB copy is microseconds). */
#define RNIC_STUCK_LOOP_MS 200

/**
 * How long @p w has been inside its current loop, in ms, as seen from
 * another thread; 0 when it is between loops. @p poller gets the name of
 * the poller it is in (NULL when 0 is returned).
 */
uint64_t rnic_worker_loop_age_ms(const struct rnic_worker *w, const char **poller);

/** Register a poller; called during stack creation. @return 0 or -ENOSPC. */
int rnic_worker_add_poller(struct rnic_worker *w, const char *name,
			   rnic_poll_fn fn, void *arg);

/** One pass over every poller. @return total work done. */
unsigned rnic_worker_run_once(struct rnic_worker *w);

/** A token unique to the calling thread (the address of a thread-local). */
const void *rnic_thread_token(void);

/**
 * May the calling thread run @p w's work itself, now? True when the stack
 * is driven by the application (not started on lcores), this thread is the
 * one that drives @p w (its last rnic_worker_poll()) and it is not inside
 * the loop (a callback from a poller). A verbs post then hands its work to
 * the transport at once instead of ringing the doorbell for the next loop.
 */
bool rnic_worker_driven_here(const struct rnic_worker *w);

/** Queue a frame for transmission on port @p p (flushed every loop). */
void rnic_worker_tx(struct rnic_worker *w, struct rnic_port *p,
		    struct rte_mbuf *m);

/** Push every buffered frame to its port. @return frames sent. */
unsigned rnic_worker_flush(struct rnic_worker *w);

/** Count a drop and free the frame. */
static inline void rnic_worker_drop(struct rnic_worker *w,
				    enum rnic_drop_cause c, struct rte_mbuf *m)
{
	w->drops[c]++;
	rte_pktmbuf_free(m);
}

/**
 * Hand a received frame to the worker that owns its flow (once: a frame
 * already redirected is processed where it lands). The frame keeps l2_len
 * and l3_len set by lib/net so the owner resumes at L4.
 * @return 0, or -ENOBUFS (frame dropped and counted).
 */
int rnic_worker_redirect(struct rnic_worker *w, unsigned owner,
			 struct rte_mbuf *m);

/**
 * Run @p c->fn on worker @p w. Asynchronous: the caller keeps @p c alive
 * until c->done. @return 0 or -ENOBUFS when the ring is full.
 */
int rnic_worker_call(struct rnic_worker *w, struct rnic_cmd *c);

/**
 * Run @p fn(w, arg) on worker @p w and wait for it. When the calling thread
 * is w's own lcore, or the stack is not running, runs it inline.
 * @return 0 or -errno.
 */
int rnic_worker_call_sync(struct rnic_worker *w,
			  void (*fn)(struct rnic_worker *, void *), void *arg);

/** The current time in microseconds from a TSC value. */
static inline uint64_t rnic_tsc_to_us(uint64_t tsc)
{
	return tsc / (rte_get_tsc_hz() / 1000000);
}

#endif
