/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rnic-perf: the test loops.
 *
 * One thread drives every local end: it polls each CQ, hands completions
 * to their ends (wr_id = end index << 40 | receive bit 39 | sequence), and
 * lets each end take its next step.
 *
 * Bandwidth (write_bw, read_bw, send_bw, atomic_bw): a requester keeps up
 * to tx_depth operations in flight, posted in chains; one in cq_mod is
 * signaled, and the last one always, so the sequence of a completion says
 * how many finished (completions leave the send queue in posting order).
 * A Send is posted only against a receive the peer has posted. --verify
 * signals every one and accounts for each completion (verify.c); it also
 * keeps the CQs armed, their events counted by a handler callback.
 *
 * CQ re-binding (--rebind-ms) runs on a thread of its own (rebind.c).
 *
 * Latency, one exchange at a time, every operation signaled:
 *   write_lat  requester Writes byte value v into the peer's second region;
 *              the peer polls the last byte of that region, sees v and
 *              Writes v back; the requester polls for it (perftest's
 *              ping-pong). Reported: half the round trip.
 *   send_lat   the same with Send/Receive; a receive completion is the
 *              arrival. Reported: half the round trip.
 *   read_lat   a Read of the peer's second region, from post to its
 *              completion. Reported: the round trip.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rte_cycles.h>
#include <rte_launch.h>
#include <rte_lcore.h>

#include "perf.h"

#define POLL_BATCH 32
#define WRID_RECV (1ull << 39)
#define WRID_SEQ_MASK (WRID_RECV - 1)

struct run {
	const struct perf_opts *o;
	struct perf_side *sides;
	unsigned nsides;
	struct perf_end *ends;
	unsigned nends;
	struct perf_result *r;
	unsigned cq_mod;            /* one signaled send WR in cq_mod */
	double t_end;               /* --duration: when to stop issuing */
	double t_progress;          /* last completion or exchange */
	double next_watch;          /* --server: next look at the CM channel */
	double next_idle;           /* o->idle_s: next look at the QPs' counters */
	uint64_t idle_moved;        /* ... what they had moved then */
	bool local_requesters;      /* false on a --server: no stall check */
	double t_fail;              /* --fail-port: when the link went down */
	bool moved;                 /* ... and both stacks have failed over */
	const int *until;           /* split, stack A's runner: the main runner's
				     * end (1 done, -1 failed); NULL otherwise */
	uint64_t placed_at_fail;    /* the responders' bytes then */
	/* sparse passes (write_bw, read_bw, atomic_bw over many QPs, run to a
	 * count): a pass steps only the requesters that had a completion,
	 * instead of every end (200,000 of them at --qps 100000, most waiting,
	 * which cost more than the stacks' work) */
	bool sparse;
	unsigned *ready, nready;    /* ends to step, each once (e->ready) */
	unsigned left;              /* requesters that have not completed all */
};

/* Seconds on the TSC: the loop reads the time on every pass, and rdtsc
 * costs less than half of clock_gettime() here (17 against 43 ns). */
double perf_now(void)
{
	static double per_s;
	if (per_s == 0)
		per_s = (double)rte_get_tsc_hz();
	if (per_s == 0) {   /* before rte_eal_init() */
		struct timespec ts;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
	}
	return (double)rte_get_tsc_cycles() / per_s;
}


static const char *end_name(const struct perf_end *e)
{
	return e->requester ? "requester" : "responder";
}

/* Is @p e driven by this runner (one of its sides)? Under --drive split
 * each thread steps and polls only its own stack's ends. */
static bool end_mine(const struct run *R, const struct perf_end *e)
{
	return e->side >= R->sides && e->side < R->sides + R->nsides;
}

/* --- completions --------------------------------------------------------- */

/* A receive: check its length, post another. @return 0 or -1. */
static int on_recv(struct run *R, struct perf_end *e, const struct ibv_wc *wc)
{
	if (wc->byte_len != R->o->size) {
		fprintf(stderr, "rnic-perf: %s QP %u received %u bytes, expected %u\n",
			end_name(e), e->qp->qp_num, wc->byte_len, R->o->size);
		return -1;
	}
	e->recv_done++;
	return perf_post_recvs(e, 1);
}

static int on_wc(struct run *R, const struct ibv_wc *wc)
{
	unsigned idx = (unsigned)(wc->wr_id >> 40);
	uint64_t seq = wc->wr_id & WRID_SEQ_MASK;

	if (idx >= R->nends) {
		fprintf(stderr, "rnic-perf: completion for an unknown work request %#lx\n",
			(unsigned long)wc->wr_id);
		return -1;
	}
	struct perf_end *e = &R->ends[idx];
	/* --server: the client's close flushes our receives */
	if (wc->status == IBV_WC_WR_FLUSH_ERR && (wc->wr_id & WRID_RECV) &&
	    e->peer == NULL && !e->requester) {
		e->side->peer_gone = true;
		return 0;
	}
	if (wc->status != IBV_WC_SUCCESS) {
		fprintf(stderr, "rnic-perf: %s: %s QP %u: %s %lu completed with %s (%d)\n",
			perf_test_names[R->o->test], end_name(e), wc->qp_num,
			(wc->wr_id & WRID_RECV) ? "receive" : "work request",
			(unsigned long)seq, rnic_wc_status_str(wc->status), wc->status);
		return -1;
	}
	if (wc->wr_id & WRID_RECV) {
		if (R->o->verify && perf_verify_recv(R->r, e, seq, wc, R->o->size) != 0)
			return -1;
		return on_recv(R, e, wc);
	}
	if (R->o->verify) {
		/* duplicates and reordering are counted, not fatal: the
		 * report says what went wrong */
		if (seq >= e->posted) {
			fprintf(stderr, "rnic-perf: %s QP %u: completion %lu was never posted\n",
				end_name(e), wc->qp_num, (unsigned long)seq);
			return -1;
		}
		if (perf_verify_send(R->r, e, seq) != 0)
			return -1;
		if (seq >= e->completed)
			e->completed = seq + 1;
		return 0;
	}
	if (seq < e->completed || seq >= e->posted) {
		fprintf(stderr, "rnic-perf: %s QP %u: completion %lu out of order (%lu "
			"completed, %lu posted)\n", end_name(e), wc->qp_num, (unsigned long)seq,
			(unsigned long)e->completed, (unsigned long)e->posted);
		return -1;
	}
	e->completed = seq + 1;
	if (R->sparse) {
		if (e->completed == e->total)
			R->left--;
		else if (!e->ready) {
			e->ready = true;
			R->ready[R->nready++] = idx;
		}
	}
	return 0;
}

/* Poll every CQ once. @return completions taken, or -1. */
static __thread struct rnic_stack *inline_stack[2];

void perf_set_inline(struct rnic_stack *a, struct rnic_stack *b)
{
	inline_stack[0] = a;
	inline_stack[1] = b;
}

bool perf_drive(void)
{
	rnic_stack_poll(inline_stack[0]);
	rnic_stack_poll(inline_stack[1]);
	return inline_stack[0] != NULL || inline_stack[1] != NULL;
}

static int poll_all(struct run *R)
{
	struct ibv_wc wc[POLL_BATCH];
	int total = 0;

	perf_drive();

	for (unsigned s = 0; s < R->nsides; s++)
		for (unsigned k = 0; k < R->sides[s].ncq; k++) {
			int n = ibv_poll_cq(R->sides[s].cq[k], POLL_BATCH, wc);
			if (n < 0) {
				fprintf(stderr, "rnic-perf: poll CQ failed (%d)\n", n);
				return -1;
			}
			for (int i = 0; i < n; i++)
				if (on_wc(R, &wc[i]) != 0)
					return -1;
			total += n;
		}
	return total;
}

/* --- posting ---------------------------------------------------------------- */

/* Fill @p wr / @p sge for operation @p seq of @p e. */
static void fill_wr(struct run *R, struct perf_end *e, uint64_t seq,
		    struct ibv_send_wr *wr, struct ibv_sge *sge)
{
	const struct perf_opts *o = R->o;

	perf_stamp(e, seq);
	*sge = (struct ibv_sge){
		.addr = (uintptr_t)perf_send_buf(e, seq),
		.length = o->size,
		.lkey = e->mr->lkey,
	};
	*wr = (struct ibv_send_wr){
		.wr_id = ((uint64_t)e->idx << 40) | seq,
		.sg_list = sge,
		.num_sge = 1,
	};
	if ((seq + 1) % R->cq_mod == 0 || seq + 1 == e->total)
		wr->send_flags |= IBV_SEND_SIGNALED;
	switch (o->test) {
	case PERF_WRITE_BW:
	case PERF_WRITE_LAT:
		wr->opcode = IBV_WR_RDMA_WRITE;
		break;
	case PERF_READ_BW:
	case PERF_READ_LAT:
		wr->opcode = IBV_WR_RDMA_READ;
		break;
	case PERF_SEND_BW:
	case PERF_SEND_LAT:
		wr->opcode = IBV_WR_SEND;
		break;
	case PERF_ATOMIC_BW:
	default:
		wr->opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
		wr->wr.atomic.remote_addr = e->raddr;
		wr->wr.atomic.rkey = e->rkey;
		wr->wr.atomic.compare_add = 1;
		return;
	}
	if (e->inline_ok)
		wr->send_flags |= IBV_SEND_INLINE;
	wr->wr.rdma.remote_addr = e->raddr;
	wr->wr.rdma.rkey = e->rkey;
	if (o->verify && o->test == PERF_WRITE_BW) {
		/* every Write carries its own pattern into its own slot */
		perf_write_pattern((uint8_t *)(uintptr_t)sge->addr, o->size, e->idx, seq);
		wr->wr.rdma.remote_addr = e->peer != NULL ?
			(uintptr_t)perf_write_target(e, seq) : perf_write_remote_target(e, seq);
	}
}

/* Post @p n operations of @p e as one chain. @return 0 or -1. */
static int post_ops(struct run *R, struct perf_end *e, unsigned n)
{
	struct ibv_send_wr wr[PERF_POST_LIST_MAX], *bad = NULL;
	struct ibv_sge sge[PERF_POST_LIST_MAX];

	for (unsigned k = 0; k < n; k++) {
		fill_wr(R, e, e->posted + k, &wr[k], &sge[k]);
		wr[k].next = k + 1 < n ? &wr[k + 1] : NULL;
	}
	int rc = ibv_post_send(e->qp, wr, &bad);
	if (rc == 0) {
		e->posted += n;
		return 0;
	}
	if (rc == EOPNOTSUPP) {
		fprintf(stderr, "rnic-perf: %s: the %s transport refuses this operation "
			"(EOPNOTSUPP)\n", perf_test_names[R->o->test],
			R->o->transport == RNIC_TRANSPORT_ROCE ? "RoCE" : "iWARP");
		R->r->unsupported = true;
		return -1;
	}
	fprintf(stderr, "rnic-perf: %s: post send on QP %u: %s\n", perf_test_names[R->o->test],
		e->qp->qp_num, strerror(rc));
	return -1;
}

static bool sq_room(const struct run *R, const struct perf_end *e)
{
	return e->posted - e->completed < R->o->tx_depth;
}

/* --- bandwidth ------------------------------------------------------------- */

/* Post what the window, the operation count and (Sends) the peer's
 * receives allow. @return 0 or -1. */
static int bw_step(struct run *R, struct perf_end *e)
{
	uint64_t n = R->o->tx_depth - (e->posted - e->completed);

	if (!e->requester)
		return 0;
	if (e->total - e->posted < n)
		n = e->total - e->posted;
	if (R->o->test == PERF_SEND_BW && e->peer != NULL) {
		uint64_t credit = e->peer->recv_posted - e->posted;
		if (credit < n)
			n = credit;
	}
	/* one post of up to post_list operations at a time until the window
	 * is full, then back to polling, as perftest's loop does */
	while (n > 0) {
		unsigned k = n > R->o->post_list ? R->o->post_list : (unsigned)n;
		if (post_ops(R, e, k) != 0)
			return -1;
		n -= k;
	}
	return 0;
}

/* --duration is over: issue nothing new, but finish with a signaled one
 * when the last posted was not. */
static void bw_stop(struct run *R, struct perf_end *e)
{
	if (e->total != UINT64_MAX)
		return;
	e->total = e->posted % R->cq_mod == 0 ? e->posted : e->posted + 1;
}

static bool bw_done(const struct run *R, const struct perf_end *e)
{
	if (e->requester)
		return e->completed == e->total;
	if (e->peer == NULL)
		return e->side->peer_gone;
	/* a Send's completion may come before the receive's */
	if (R->o->test == PERF_SEND_BW && e->peer != NULL)
		return e->peer->completed == e->peer->total && e->recv_done == e->peer->total;
	return true;
}

/* --- latency ----------------------------------------------------------------- */

static int lat_record(struct run *R, struct perf_end *e)
{
	struct perf_result *r = R->r;
	double us = (perf_now() - e->t_post) * 1e6;

	if (R->o->test != PERF_READ_LAT)
		us /= 2;
	if (r->nlat == r->lat_cap) {
		uint64_t cap = r->lat_cap ? 2 * r->lat_cap : 4096;
		double *p = realloc(r->lat_us, cap * sizeof(*p));
		if (p == NULL) {
			fprintf(stderr, "rnic-perf: out of memory for latency samples\n");
			return -1;
		}
		r->lat_us = p;
		r->lat_cap = cap;
	}
	r->lat_us[r->nlat++] = us;
	e->iter++;
	e->waiting = false;
	return 0;
}

/* Has the exchange @p e waits for arrived? */
static bool lat_arrived(const struct run *R, const struct perf_end *e)
{
	const volatile uint8_t *last = e->buf + e->region + R->o->size - 1;

	switch (R->o->test) {
	case PERF_WRITE_LAT:
		return *last == (uint8_t)(e->iter % 255 + 1);
	case PERF_SEND_LAT:
		return e->recv_done > e->iter;
	default:
		return e->completed > e->iter;
	}
}

/* One step of a latency end. @return 0 or -1. */
static int lat_step(struct run *R, struct perf_end *e)
{
	if (e->requester && e->waiting)
		return lat_arrived(R, e) ? lat_record(R, e) : 0;
	if (e->iter >= e->total || !sq_room(R, e))
		return 0;
	if (!e->requester) {
		/* read_lat: nothing to answer; the others answer each arrival */
		if (R->o->test == PERF_READ_LAT || !lat_arrived(R, e))
			return 0;
		e->buf[R->o->size - 1] = (uint8_t)(e->iter % 255 + 1);
		e->iter++;
		R->t_progress = perf_now();
		return post_ops(R, e, 1);
	}
	e->buf[R->o->size - 1] = (uint8_t)(e->iter % 255 + 1);
	e->waiting = true;
	e->t_post = perf_now();
	return post_ops(R, e, 1);
}

static bool lat_done(const struct perf_end *e)
{
	if (!e->requester && e->peer == NULL)
		return e->side->peer_gone;
	return (!e->requester || e->iter >= e->total) && e->completed == e->posted;
}

/* --- the loop ------------------------------------------------------------------- */

/* --verify: a CQ event, on the worker of the CQ's handler. */
static void on_event(struct ibv_cq *cq, void *arg)
{
	struct perf_arm *a = arg;

	(void)cq;
	__atomic_fetch_add(&a->events, 1, __ATOMIC_RELAXED);
	__atomic_store_n(&a->pending, 0, __ATOMIC_RELEASE);
}

/* --verify: register on_event on every CQ. @return 0 or -1. */
static int arm_init(struct run *R)
{
	for (unsigned s = 0; s < R->nsides; s++) {
		struct perf_side *sd = &R->sides[s];
		sd->arm = calloc(sd->ncq, sizeof(*sd->arm));
		if (sd->arm == NULL) {
			fprintf(stderr, "rnic-perf: out of memory\n");
			return -1;
		}
		for (unsigned k = 0; k < sd->ncq; k++) {
			int rc = rnic_set_comp_handler(sd->cq[k], on_event, &sd->arm[k]);
			if (rc != 0) {
				fprintf(stderr, "rnic-perf: CQ handler callback: %s\n", strerror(-rc));
				return -1;
			}
		}
	}
	return 0;
}

/* --verify: arm again each CQ whose event was delivered. @return 0 or -1. */
static int arm_again(struct run *R)
{
	for (unsigned s = 0; s < R->nsides; s++) {
		struct perf_side *sd = &R->sides[s];
		for (unsigned k = 0; sd->arm != NULL && k < sd->ncq; k++) {
			if (__atomic_load_n(&sd->arm[k].pending, __ATOMIC_ACQUIRE))
				continue;
			__atomic_store_n(&sd->arm[k].pending, 1, __ATOMIC_RELEASE);
			int rc = ibv_req_notify_cq(sd->cq[k], 0);
			if (rc != 0) {
				fprintf(stderr, "rnic-perf: arming a CQ: %s\n", strerror(rc));
				return -1;
			}
		}
	}
	return 0;
}

/* --verify: the events the handlers delivered. The callbacks stay
 * registered (and their perf_arm allocated) as long as the CQs live. */
static void arm_fini(struct run *R)
{
	for (unsigned s = 0; s < R->nsides; s++) {
		struct perf_side *sd = &R->sides[s];
		for (unsigned k = 0; sd->arm != NULL && k < sd->ncq; k++)
			R->r->events += __atomic_load_n(&sd->arm[k].events, __ATOMIC_RELAXED);
	}
}

/* Every end's and stack's counters, for a run that went wrong. */
static void dump_drop(const char *cause, uint64_t n, void *arg)
{
	(void)arg;
	fprintf(stderr, "    drops %s: %lu\n", cause, (unsigned long)n);
}

static void dump_state(const struct run *R)
{
	for (unsigned i = 0; i < R->nends; i++) {
		const struct perf_end *e = &R->ends[i];
		if (!end_mine(R, e))
			continue;
		fprintf(stderr, "  %s QP %u: state %d, posted %lu, completed %lu, receives "
			"%lu posted %lu done, exchanges %lu\n", end_name(e), e->qp->qp_num,
			e->qp->state, (unsigned long)e->posted, (unsigned long)e->completed,
			(unsigned long)e->recv_posted, (unsigned long)e->recv_done,
			(unsigned long)e->iter);
		struct rnic_qp_stats qs;
		rnic_qp_stats(e->qp, &qs);
		fprintf(stderr, "    send WRs %lu, completions %lu, messages out %lu in %lu, "
			"bytes out %lu in %lu\n", (unsigned long)qs.send_wrs,
			(unsigned long)qs.completions, (unsigned long)qs.ops_out,
			(unsigned long)qs.ops_in, (unsigned long)qs.bytes_out,
			(unsigned long)qs.bytes_in);
		rnic_qp_dump(e->qp, stderr);
	}
	for (unsigned s = 0; s < R->nsides; s++) {
		struct rnic_stack_stats ss;
		rnic_stack_stats(R->sides[s].st, &ss);
		fprintf(stderr, "  stack %u: frames rx %lu tx %lu, drops %lu, mbufs in use %lu\n",
			s, (unsigned long)ss.rx_pkts, (unsigned long)ss.tx_pkts,
			(unsigned long)ss.drops, (unsigned long)ss.mbufs_in_use);
		rnic_stack_drops_each(R->sides[s].st, dump_drop, NULL);
	}
}

/* --server: count the client's closes; all closed ends the run. Another
 * client's request is refused. */
static void watch_closes(struct run *R)
{
	struct rnic_cm_event ev;

	for (unsigned s = 0; s < R->nsides; s++) {
		struct perf_side *sd = &R->sides[s];
		if (!sd->watch)
			continue;
		struct pollfd pfd = { .fd = rnic_cm_channel_fd(sd->ch), .events = POLLIN };
		if (poll(&pfd, 1, 0) <= 0)
			continue;
		/* a timeout of 1, not 0: with 0, rnic_cm_get_event() blocks for
		 * ever when the eventfd was readable but the list is empty */
		while (rnic_cm_get_event(sd->ch, &ev, 1) == 0) {
			if (ev.type == RNIC_CM_EVENT_DISCONNECTED &&
			    __atomic_add_fetch(&sd->closed, 1, __ATOMIC_RELAXED) >= sd->conns)
				sd->peer_gone = true;
			/* one run at a time: a second client is told so at once */
			if (ev.type == RNIC_CM_EVENT_CONNECT_REQUEST) {
				static const char busy[] = "busy: another run is under way";
				rnic_cm_reject(ev.id, busy, sizeof(busy));
				rnic_cm_destroy_id(ev.id);
			}
		}
	}
}

/* One pass: completions, re-binding, each end's step. @return 1 when every
 * end is done, 0 to go on, -1 on a failure. */
static struct rnic_stack *run_stacks[2];

void perf_set_stacks(struct rnic_stack *a, struct rnic_stack *b)
{
	run_stacks[0] = a;
	run_stacks[1] = b;
}

/* Payload placed at either end (the QPs' counters: Writes and Sends at
 * the responders, Read Responses at the requesters). A down link neither
 * sends nor receives, so what is placed once both stacks moved came through
 * the surviving port. */
static uint64_t placed_bytes(const struct run *R)
{
	uint64_t sum = 0;
	for (unsigned i = 0; i < R->nends; i++) {
		struct rnic_qp_stats qs;
		rnic_qp_stats(R->ends[i].qp, &qs);
		sum += qs.bytes_in;
	}
	return sum;
}

/* --fail-port: once fail_at percent of the operations completed, the link
 * of that port goes down on both stacks (the cable between them). */
static void maybe_fail(struct run *R, double t)
{
	const struct perf_opts *o = R->o;
	uint64_t done = 0, total = 0;
	if (o->fail_port < 0 || R->t_fail > 0 || o->iters == 0)
		return;
	for (unsigned i = 0; i < R->nends; i++)
		if (R->ends[i].requester) {
			done += R->ends[i].completed;
			total += R->ends[i].total;
		}
	if (done * 100 < total * o->fail_at)
		return;
	for (int i = 0; i < 2; i++)
		if (run_stacks[i] != NULL)
			rnic_stack_set_link(run_stacks[i], (unsigned)o->fail_port, false);
	R->t_fail = t;
	if (!o->json)
		printf("  port %d down after %lu of %lu operations\n", o->fail_port,
		       (unsigned long)done, (unsigned long)total);
}

/* A server with o->idle_s: has the client gone without a word? Once a
 * second the QPs' counters are compared; a client that vanished (its
 * process killed, no FIN or RST ever comes) leaves them still, and the
 * run ends instead of holding the server for good. */
static bool idle_client(struct run *R, double t)
{
	if (R->o->idle_s == 0 || R->local_requesters || t < R->next_idle)
		return false;
	R->next_idle = t + 1;
	uint64_t moved = 0;
	for (unsigned i = 0; i < R->nends; i++) {
		struct rnic_qp_stats qs;
		rnic_qp_stats(R->ends[i].qp, &qs);
		moved += qs.bytes_in + qs.bytes_out + qs.ops_in + qs.ops_out;
	}
	if (moved != R->idle_moved) {
		R->idle_moved = moved;
		R->t_progress = t;
		return false;
	}
	if (t - R->t_progress <= R->o->idle_s)
		return false;
	fprintf(stderr, "rnic-perf: the client moved nothing for %u s: ending its run\n",
		R->o->idle_s);
	return true;
}

static int pass(struct run *R, bool lat)
{
	int n = poll_all(R);
	double t = perf_now();
	bool done = true;

	if (n < 0)
		return -1;
	if (n > 0)
		R->t_progress = t;
	if (R->t_fail > 0 && R->r->failover_ms < 0) {
		if (!R->moved) {
			/* frames taken in before the link went down may still be
			 * placed: count from when both stacks have moved */
			struct rnic_failover_stats fs[2];
			rnic_failover_stats(run_stacks[0], &fs[0]);
			rnic_failover_stats(run_stacks[1], &fs[1]);
			if (fs[0].completed > 0 && fs[1].completed > 0) {
				R->moved = true;
				R->placed_at_fail = placed_bytes(R);
			}
		} else if (placed_bytes(R) > R->placed_at_fail) {
			R->r->failover_ms = (t - R->t_fail) * 1e3;
		}
	}
	maybe_fail(R, t);
	if (t >= R->next_watch) {
		watch_closes(R);
		R->next_watch = t + 1e-3;
	}
	if (idle_client(R, t))
		return -1;
	if (R->o->verify && arm_again(R) != 0)
		return -1;
	bool stop = (R->t_end > 0 && t >= R->t_end) || rnic_stop_requested();
	if (!R->local_requesters && rnic_stop_requested()) {
		fprintf(stderr, "rnic-perf: interrupted\n");
		dump_state(R);
		return -1;
	}
	if (R->sparse) {
		unsigned n = R->nready;
		R->nready = 0;
		for (unsigned i = 0; i < n; i++) {
			unsigned idx = R->ready[i];
			struct perf_end *e = &R->ends[idx];
			e->ready = false;
			if (bw_step(R, e) != 0)
				return -1;
			/* a step posts at most PERF_POST_LIST_MAX: an end with room left
			 * goes round again, as its next signaled completion may
			 * lie beyond what it posted (depth 128 signals one in 64;
			 * with a batch of 32 such an end waited for ever).
			 * Entries [0, i] were read: the list is reused in place */
			if (sq_room(R, e) && e->posted < e->total) {
				e->ready = true;
				R->ready[R->nready++] = idx;
			}
		}
		done = R->left == 0;
	}
	for (unsigned i = 0; !R->sparse && i < R->nends; i++) {
		struct perf_end *e = &R->ends[i];
		if (!end_mine(R, e))
			continue;
		if (stop && e->requester) {
			if (lat && e->total == UINT64_MAX)
				e->total = e->iter + (e->waiting ? 1 : 0);
			else if (!lat)
				bw_stop(R, e);
		}
		if ((lat ? lat_step(R, e) : bw_step(R, e)) != 0)
			return -1;
		if (R->until != NULL)   /* the peer's runner says when */
			done = done && e->completed == e->posted;
		else
			done = done && (lat ? lat_done(e) : bw_done(R, e));
	}
	if (R->until != NULL) {
		int end = __atomic_load_n(R->until, __ATOMIC_ACQUIRE);
		if (end < 0 || (end > 0 && done))
			return 1;
		if (end > 0 && t - R->t_progress > PERF_STALL_S) {
			fprintf(stderr, "rnic-perf: stack A's operations did not complete\n");
			dump_state(R);
			return -1;
		}
		return 0;
	}
	if (done)
		return 1;
	if (R->local_requesters && t - R->t_progress > PERF_STALL_S) {
		fprintf(stderr, "rnic-perf: %s: no progress for %d s\n",
			perf_test_names[R->o->test], PERF_STALL_S);
		dump_state(R);
		if (!R->o->verify)
			return -1;
		R->r->stalled = true;   /* the report counts what is missing */
		return 1;
	}
	return 0;
}

static int run_until(const struct perf_opts *o, struct perf_side *sides, unsigned nsides,
		     struct perf_end *ends, unsigned nends, struct perf_result *r,
		     const int *until)
{
	bool lat = perf_is_lat(o->test);
	struct run R = {
		.o = o, .sides = sides, .nsides = nsides, .ends = ends, .nends = nends, .r = r,
		.until = until,
	};
	struct perf_rebinder rb;
	int rc;

	r->failover_ms = -1;
	R.cq_mod = perf_cq_mod(o);
	if (o->verify && arm_init(&R) != 0)
		return PERF_EXIT_FAIL;
	for (unsigned i = 0; i < nends; i++) {
		struct perf_end *e = &ends[i];
		if (!end_mine(&R, e))
			continue;
		e->total = o->iters ? o->iters : UINT64_MAX;
		R.local_requesters = R.local_requesters || e->requester;
	}
	R.sparse = !lat && o->loopback && o->qps > PERF_SLAB_QPS && !o->verify && o->iters > 0 &&
		   o->fail_port < 0 && o->test != PERF_SEND_BW && o->drive != PERF_DRIVE_SPLIT &&
		   R.until == NULL;
	if (R.sparse) {
		R.ready = malloc(nends * sizeof(*R.ready));
		if (R.ready == NULL)
			return PERF_EXIT_FAIL;
		for (unsigned i = 0; i < nends; i++)
			if (ends[i].requester && end_mine(&R, &ends[i])) {
				ends[i].ready = true;
				R.ready[R.nready++] = i;
				R.left++;
			}
	}
	double t0 = perf_now();
	R.t_progress = t0;
	if (o->duration > 0)
		R.t_end = t0 + o->duration;
	if (o->rebind_ms != 0 && perf_rebind_start(&rb, sides, nsides, o->rebind_ms) != 0)
		return PERF_EXIT_FAIL;
	while ((rc = pass(&R, lat)) == 0)
		;
	r->seconds = perf_now() - t0;
	free(R.ready);
	if (o->rebind_ms != 0) {
		perf_rebind_stop(&rb, r);
		if (rb.err != 0)
			rc = -1;
	}
	if (o->verify) {
		arm_fini(&R);
		perf_verify_finish(r, o, ends, nends);
		if (o->test == PERF_WRITE_BW)
			perf_verify_writes(r, o, ends, nends);
	}
	for (unsigned i = 0; i < nends; i++)
		if (ends[i].requester && end_mine(&R, &ends[i]))
			r->ops += lat ? ends[i].iter : ends[i].completed;
	if (rc < 0)
		return r->unsupported ? PERF_EXIT_UNSUPPORTED : PERF_EXIT_FAIL;
	return 0;
}

unsigned perf_cq_mod(const struct perf_opts *o)
{
	if (perf_is_lat(o->test) || o->verify)
		return 1;   /* --verify: every Send signaled, every sequence is seen */
	if (o->cq_mod != 0)
		return o->cq_mod;   /* at most tx_depth (checked with the options) */
	return o->tx_depth / 2 < 1 ? 1 : o->tx_depth / 2 > 64 ? 64 : o->tx_depth / 2;
}

int perf_run(const struct perf_opts *o, struct perf_side *sides, unsigned nsides,
	     struct perf_end *ends, unsigned nends, struct perf_result *r)
{
	return run_until(o, sides, nsides, ends, nends, r, NULL);
}

/* --drive split: stack A's runner, on an lcore of its own. */
struct split_a {
	const struct perf_opts *o;
	struct perf_side *side;
	struct perf_end *ends;
	unsigned nends;
	struct rnic_stack *st;
	int until;                  /* set by the main runner: 1 done, -1 failed */
	int rc;
	struct perf_result r;       /* A records no samples; its failures only */
};

static int split_a_main(void *arg)
{
	struct split_a *a = arg;

	perf_set_inline(a->st, NULL);
	a->rc = run_until(a->o, a->side, 1, a->ends, a->nends, &a->r, &a->until);
	perf_set_inline(NULL, NULL);
	return 0;
}

int perf_run_split(const struct perf_opts *o, struct perf_side sides[2],
		   struct perf_end *ends, unsigned nends, struct perf_result *r,
		   struct rnic_stack *a, struct rnic_stack *b)
{
	static struct split_a A;
	unsigned lc;

	A = (struct split_a){ .o = o, .side = &sides[0], .ends = ends, .nends = nends, .st = a };
	RTE_LCORE_FOREACH_WORKER(lc)
		if (rte_eal_get_lcore_state(lc) == WAIT &&
		    rte_eal_remote_launch(split_a_main, &A, lc) == 0)
			break;
	if (lc >= RTE_MAX_LCORE) {
		fprintf(stderr, "rnic-perf: --drive split: no free lcore for stack A\n");
		return PERF_EXIT_FAIL;
	}
	perf_set_inline(NULL, b);
	int rc = run_until(o, &sides[1], 1, ends, nends, r, NULL);
	/* stack A's last operations need stack B's acknowledgements */
	__atomic_store_n(&A.until, rc == 0 ? 1 : -1, __ATOMIC_RELEASE);
	while (rte_eal_get_lcore_state(lc) != WAIT)
		perf_drive();
	rte_eal_wait_lcore(lc);
	perf_set_inline(NULL, NULL);
	r->unsupported = r->unsupported || A.r.unsupported;
	free(A.r.lat_us);
	return rc != 0 ? rc : A.rc;
}
