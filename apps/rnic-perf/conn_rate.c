/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rnic-perf conn_rate: connection setup rate (issue 21, Deliver 2).
 *
 *   rnic-perf conn_rate --loopback [--transport iwarp|roce] [--conns N]
 *                       [--window W] [--drive one|threaded] [--rts-delay]
 *                       [--json]
 *
 * Two stacks in this process over a net_ring pair, one worker each: A
 * (192.0.2.1) listens, B (192.0.2.2) connects. Each connection, start to
 * end, as an application would do it:
 *
 *   B: create QP -> connect (private data: the slot)
 *        iWARP: TCP handshake, MPA request;  RoCE: IB CM REQ
 *   A: CONNECT_REQUEST -> create QP, INIT, post one receive -> accept
 *        iWARP: MPA reply, RTS;              RoCE: REP (A in RTR)
 *   B: ESTABLISHED (RoCE: RTU goes out, A reaches RTS) -> post an 8-byte Send
 *   A: the receive completes;  B: the Send completes -> B disconnects
 *        iWARP: FIN both ways;               RoCE: DREQ / DREP
 *   both: DISCONNECTED -> destroy the CM id and the QP
 *
 * Up to --window connections are under way at once. --drive one (the
 * default) runs both stacks' workers on this thread, between the CM and
 * verbs calls (which then run inline, without waiting for a worker): the
 * figure is connections per second for one CPU doing both ends' work.
 * --drive threaded leaves each worker on its own lcore; this thread only
 * makes the calls. iWARP connects skip the pause before RTS that is kept
 * for siw as the responder (rnic_cm_conn_param.rts_delay_us): the peer here
 * is rnic, whose QP is ready before its MPA reply leaves; --rts-delay keeps
 * the default pause to show what it costs.
 *
 * One connection runs first, untimed, so that the stacks know each other's
 * MAC (a window's first packets overflow ARP's held frames otherwise, and
 * a lost REQ waits a whole CM response timeout). The run is timed by the
 * clock and by the process's CPU time (cpu_s, conns_per_cpu_s: what the
 * rate would be with the CPU to itself, as it is not on a shared machine).
 * B closes, so B's TIME_WAITs (2 s) hold its source ports to A's one
 * port: more than 28,232 connections (the ephemeral range) within
 * tw_reuse_ms (TCP may take a TIME_WAIT's 4-tuple over after that long;
 * --tw-reuse-ms, default the stack's 1000 ms) fail with EADDRNOTAVAIL.
 *
 * At the end every connection must have exchanged its message and closed
 * on both sides, and the stacks must hold no connected QP and (once
 * TIME_WAIT has passed, waited for up to 10 s) no TCB. The JSON line
 * reports conns, seconds, conns_per_s, where this thread's time went
 * (time_*_pct) and the leftovers (qps_after, tcbs_after). Exit 0 when
 * every connection completed and nothing was left.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rte_cycles.h>

#include "rnic/rnic.h"
#include "rnic/rnic_cm.h"
#include "rnic/rnic_tcp.h"
#include "rnic/rnic_verbs.h"

#include "conn_rate.h"

#define CR_RING "crate"
#define CR_A_IP 0xc0000201u
#define CR_B_IP 0xc0000202u
#define CR_PORT 18530
#define CR_MSG 8
#define CR_MAX_WINDOW 4096
#define CR_WAIT_S 10           /* no progress for this long: fail */

/* What a connection has done; complete at CR_DONE. */
enum {
	CR_A_UP = 1 << 0,      /* A: ESTABLISHED */
	CR_B_UP = 1 << 1,      /* B: ESTABLISHED */
	CR_RECVD = 1 << 2,     /* A: the message arrived, all of it */
	CR_SENT = 1 << 3,      /* B: the Send completed */
	CR_A_DOWN = 1 << 4,    /* A: DISCONNECTED */
	CR_B_DOWN = 1 << 5,    /* B: DISCONNECTED */
	CR_DONE = (1 << 6) - 1,
};

struct cr_conn {
	bool busy;
	unsigned flags;
	uint32_t idx;                  /* slot number, the connect's private data */
	struct ibv_qp *qa, *qb;
	struct rnic_cm_id *ia, *ib;
	uint64_t t_start;              /* TSC: B's QP is created */
};

/* Stages of a connection, summed over all (TSC cycles from its start). */
enum cr_stage { ST_REQUEST, ST_B_UP, ST_RECVD, ST_SENT, ST_A_DOWN, ST_B_DOWN, ST_N };
static const char *const stage_names[ST_N] = {
	"request", "established", "received", "sent", "a_down", "b_down",
};
static uint64_t stage_cyc[ST_N];

static void stage(const struct cr_conn *c, enum cr_stage s)
{
	stage_cyc[s] += rte_rdtsc() - c->t_start;
}

/* Where this thread's time goes, in TSC cycles. */
enum cr_phase { PH_CREATE, PH_CONNECT, PH_ACCEPT, PH_POST, PH_CLOSE, PH_DESTROY,
		PH_EVENTS /* the rest: CM events, CQ polls, this loop */, PH_WORKERS, PH_N };
static const char *const phase_names[PH_N] = {
	"create_qp", "connect", "accept", "post", "disconnect", "destroy", "loop", "workers",
};

static struct {
	enum rnic_transport tr;
	unsigned conns, window;
	bool threaded, rts_delay, json;
	long tw_reuse_ms;   /* -1: the stack's default */
} o = { .tr = RNIC_TRANSPORT_IWARP, .conns = 10000, .window = 64, .tw_reuse_ms = -1 };

struct cr_side {
	struct rnic_stack *st;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	struct rnic_cm_channel *ch;
	uint8_t buf[CR_MAX_WINDOW * CR_MSG];
};

static struct cr_side A, B;
static struct cr_conn *slots;
static uint64_t phase_cyc[PH_N];
static unsigned done, failed;

static double clock_s(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static double now_s(void)
{
	return clock_s(CLOCK_MONOTONIC);
}

/* This thread's time is charged to one phase at a time: enter() switches
 * and returns the phase to go back to. */
static enum cr_phase cur_phase = PH_EVENTS;
static uint64_t phase_t0;

static enum cr_phase enter(enum cr_phase p)
{
	uint64_t t = rte_rdtsc();
	enum cr_phase was = cur_phase;
	phase_cyc[cur_phase] += t - phase_t0;
	phase_t0 = t;
	cur_phase = p;
	return was;
}

static void drive(void)
{
	if (o.threaded)
		return;
	enum cr_phase was = enter(PH_WORKERS);
	rnic_stack_poll(A.st);
	rnic_stack_poll(B.st);
	enter(was);
}

static int fail(const char *what, int rc)
{
	fprintf(stderr, "rnic-perf conn_rate: %s: %s\n", what, strerror(rc < 0 ? -rc : rc));
	failed++;
	return -1;
}

static struct ibv_qp *new_qp(struct cr_side *s)
{
	struct ibv_qp_init_attr qa = {
		.send_cq = s->cq, .recv_cq = s->cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 2, .max_recv_wr = 2, .max_send_sge = 1,
			 .max_recv_sge = 1 } };
	enum cr_phase was = enter(PH_CREATE);
	struct ibv_qp *qp = rnic_create_qp_transport(s->pd, &qa, o.tr);
	enter(was);
	return qp;
}

/* B: a new QP connects for slot @p c. */
static int cr_start(struct cr_conn *c)
{
	memset(c, 0, sizeof(*c));
	c->busy = true;
	c->idx = (uint32_t)(c - slots);
	c->t_start = rte_rdtsc();
	c->qb = new_qp(&B);
	if (c->qb == NULL)
		return fail("create B's QP", errno);
	struct rnic_cm_conn_param cp = { .private_data = &c->idx,
					 .private_data_len = sizeof(c->idx),
					 .rts_delay_us = o.rts_delay ? 0 : RNIC_CM_RTS_NO_DELAY };
	enum cr_phase was = enter(PH_CONNECT);
	int rc = rnic_cm_create_id(B.ch, c, &c->ib);
	if (rc == 0)
		rc = rnic_cm_connect(c->ib, c->qb, CR_A_IP, CR_PORT, &cp);
	enter(was);
	if (rc == -EADDRNOTAVAIL)   /* B's TIME_WAITs hold every source port to A */
		return fail("connect (no source port free: the TIME_WAITs hold them)", rc);
	return rc == 0 ? 0 : fail("connect", rc);
}

/* A: a CONNECT_REQUEST for the slot its private data names. */
static int cr_accept(const struct rnic_cm_event *ev)
{
	uint32_t idx;
	if (ev->private_data_len < sizeof(idx))
		return fail("a request without its slot", EPROTO);
	memcpy(&idx, ev->private_data, sizeof(idx));
	if (idx >= o.window || !slots[idx].busy || slots[idx].ia != NULL)
		return fail("a request for no waiting slot", EPROTO);
	struct cr_conn *c = &slots[idx];
	stage(c, ST_REQUEST);
	c->ia = ev->id;
	rnic_cm_id_set_context(c->ia, c);
	c->qa = new_qp(&A);
	if (c->qa == NULL)
		return fail("create A's QP", errno);
	enum cr_phase was = enter(PH_POST);
	struct ibv_qp_attr at = { .qp_state = IBV_QPS_INIT, .pkey_index = 0, .port_num = 1,
				  .qp_access_flags = IBV_ACCESS_LOCAL_WRITE };
	int mask = IBV_QP_STATE;
	if (o.tr == RNIC_TRANSPORT_ROCE)
		mask |= IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS;
	int rc = rnic_modify_qp(c->qa, &at, mask);
	struct ibv_sge sge = { (uintptr_t)&A.buf[idx * CR_MSG], CR_MSG, A.mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = idx, .sg_list = &sge, .num_sge = 1 }, *bad;
	if (rc == 0)
		rc = -ibv_post_recv(c->qa, &wr, &bad);
	enter(was);
	if (rc != 0)
		return fail("A's QP to INIT with a receive", rc);
	was = enter(PH_ACCEPT);
	rc = rnic_cm_accept(c->ia, c->qa, NULL);
	enter(was);
	return rc == 0 ? 0 : fail("accept", rc);
}

/* B is connected: send the message. */
static int cr_send(struct cr_conn *c)
{
	uint8_t *m = &B.buf[c->idx * CR_MSG];
	memcpy(m, &c->idx, sizeof(c->idx));
	memset(m + sizeof(c->idx), 0xa5, CR_MSG - sizeof(c->idx));
	struct ibv_sge sge = { (uintptr_t)m, CR_MSG, B.mr->lkey };
	struct ibv_send_wr wr = { .wr_id = c->idx, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED }, *bad;
	enum cr_phase was = enter(PH_POST);
	int rc = ibv_post_send(c->qb, &wr, &bad);
	enter(was);
	return rc == 0 ? 0 : fail("post the Send", rc);
}

/* Both ends closed: free the slot. */
static int cr_finish(struct cr_conn *c)
{
	enum cr_phase was = enter(PH_DESTROY);
	int rc = rnic_cm_destroy_id(c->ib);
	rc |= rnic_cm_destroy_id(c->ia);
	rc |= rnic_destroy_qp(c->qb);
	rc |= rnic_destroy_qp(c->qa);
	enter(was);
	c->busy = false;
	done++;
	return rc == 0 ? 0 : fail("destroy a closed connection", EBUSY);
}

static int cr_mark(struct cr_conn *c, unsigned flag)
{
	if (c == NULL || !c->busy || (c->flags & flag))
		return fail("an event for no connection, or twice", EPROTO);
	c->flags |= flag;
	static const enum cr_stage of[] = { ST_N, ST_B_UP, ST_RECVD, ST_SENT, ST_A_DOWN, ST_B_DOWN };
	for (unsigned b = 1; b < 6; b++)
		if (flag == 1u << b)
			stage(c, of[b]);
	return c->flags == CR_DONE ? cr_finish(c) : 0;
}

static int cr_events(struct cr_side *s, bool passive)
{
	struct rnic_cm_event ev;
	int rc = 0;
	while (rc == 0 && rnic_cm_get_event(s->ch, &ev, 0) == 0) {
		struct cr_conn *c = rnic_cm_id_context(ev.id);
		if (passive && ev.type == RNIC_CM_EVENT_CONNECT_REQUEST) {
			rc = cr_accept(&ev);
		} else if (ev.type == RNIC_CM_EVENT_ESTABLISHED) {
			rc = cr_mark(c, passive ? CR_A_UP : CR_B_UP);
			if (rc == 0 && !passive)
				rc = cr_send(c);
		} else if (ev.type == RNIC_CM_EVENT_DISCONNECTED) {
			rc = cr_mark(c, passive ? CR_A_DOWN : CR_B_DOWN);
		} else {
			fprintf(stderr, "rnic-perf conn_rate: %s: %s (status %d)\n",
				passive ? "A" : "B", rnic_cm_event_str(ev.type), ev.status);
			rc = fail("connection failed", ev.status);
		}
	}
	return rc;
}

static int cr_completions(void)
{
	struct ibv_wc wc[32];
	int n, rc = 0;
	n = ibv_poll_cq(A.cq, 32, wc);
	for (int k = 0; k < n && rc == 0; k++) {
		struct cr_conn *c = wc[k].wr_id < o.window ? &slots[wc[k].wr_id] : NULL;
		uint32_t idx;
		if (c != NULL)
			memcpy(&idx, &A.buf[c->idx * CR_MSG], sizeof(idx));
		if (c == NULL || wc[k].status != IBV_WC_SUCCESS || wc[k].byte_len != CR_MSG ||
		    idx != c->idx)
			rc = fail("A's receive", wc[k].status == IBV_WC_SUCCESS ? EPROTO : EIO);
		else
			rc = cr_mark(c, CR_RECVD);
	}
	n = ibv_poll_cq(B.cq, 32, wc);
	for (int k = 0; k < n && rc == 0; k++) {
		struct cr_conn *c = wc[k].wr_id < o.window ? &slots[wc[k].wr_id] : NULL;
		if (c == NULL || wc[k].status != IBV_WC_SUCCESS)
			return fail("B's Send", EIO);
		rc = cr_mark(c, CR_SENT);
		enum cr_phase was = enter(PH_CLOSE);
		int drc = rc == 0 ? rnic_cm_disconnect(c->ib) : 0;
		enter(was);
		if (drc != 0)
			rc = fail("disconnect", drc);
	}
	return rc;
}

static int cr_side_open(struct cr_side *s, struct rnic_stack *st)
{
	s->st = st;
	s->ctx = rnic_open_device(st);
	s->pd = s->ctx ? rnic_alloc_pd(s->ctx) : NULL;
	s->cq = s->ctx ? rnic_create_cq(s->ctx, (int)(4 * o.window), NULL, NULL, 0) : NULL;
	s->mr = s->pd ? rnic_reg_mr(s->pd, s->buf, sizeof(s->buf), IBV_ACCESS_LOCAL_WRITE) : NULL;
	s->ch = s->ctx ? rnic_cm_create_channel(s->ctx) : NULL;
	return s->mr && s->cq && s->ch ? 0 : -1;
}

static void cr_side_close(struct cr_side *s)
{
	rnic_cm_destroy_channel(s->ch);
	rnic_dereg_mr(s->mr);
	rnic_destroy_cq(s->cq);
	rnic_dealloc_pd(s->pd);
	rnic_close_device(s->ctx);
}

static int usage(FILE *f, int rc)
{
	fprintf(f, "usage: rnic-perf conn_rate --loopback [--transport iwarp|roce] [--conns N]\n"
		   "                           [--window W (1..%d)] [--drive one|threaded]\n"
		   "                           [--rts-delay] [--tw-reuse-ms MS] [--json]\n",
		CR_MAX_WINDOW);
	return rc;
}

static int parse(int argc, char **argv)
{
	bool loopback = false;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(a, "--loopback")) {
			loopback = true;
		} else if (!strcmp(a, "--json")) {
			o.json = true;
		} else if (!strcmp(a, "--rts-delay")) {
			o.rts_delay = true;
		} else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			return usage(stdout, 1);
		} else if (v == NULL) {
			fprintf(stderr, "rnic-perf conn_rate: %s: unknown, or no value\n", a);
			return -1;
		} else if (!strcmp(a, "--transport")) {
			if (strcmp(v, "iwarp") && strcmp(v, "roce"))
				return usage(stderr, -1);
			o.tr = strcmp(v, "roce") ? RNIC_TRANSPORT_IWARP : RNIC_TRANSPORT_ROCE;
			i++;
		} else if (!strcmp(a, "--drive")) {
			if (strcmp(v, "one") && strcmp(v, "threaded"))
				return usage(stderr, -1);
			o.threaded = !strcmp(v, "threaded");
			i++;
		} else if (!strcmp(a, "--tw-reuse-ms")) {
			char *end;
			unsigned long n = strtoul(v, &end, 10);
			if (*end || *v == '\0' || n > 60000) {
				fprintf(stderr, "rnic-perf conn_rate: bad --tw-reuse-ms %s (0..60000)\n", v);
				return -1;
			}
			o.tw_reuse_ms = (long)n;
			i++;
		} else if (!strcmp(a, "--conns") || !strcmp(a, "--window")) {
			char *end;
			unsigned long n = strtoul(v, &end, 10);
			bool win = !strcmp(a, "--window");
			if (*end || n == 0 || n > (win ? CR_MAX_WINDOW : 100000000ul)) {
				fprintf(stderr, "rnic-perf conn_rate: bad %s %s\n", a, v);
				return -1;
			}
			*(win ? &o.window : &o.conns) = (unsigned)n;
			i++;
		} else {
			fprintf(stderr, "rnic-perf conn_rate: unknown option %s\n", a);
			return -1;
		}
	}
	if (!loopback) {
		fprintf(stderr, "rnic-perf conn_rate: only --loopback is implemented\n");
		return -1;
	}
	return 0;
}

static int cr_stacks(struct rnic_config *common, struct rnic_stack *st[2])
{
	struct rnic_config c[2];
	c[0] = *common;
	c[0].workers = 1;
	snprintf(c[0].eal_args[c[0].n_eal_args++], 128, "--no-huge");
	snprintf(c[0].eal_args[c[0].n_eal_args++], 128, "-m");
	snprintf(c[0].eal_args[c[0].n_eal_args++], 128, "1024");
	if (rnic_eal_init("rnic-perf", &c[0], 2) != 0 || rnic_ring_pair(CR_RING, 1) != 0)
		return -1;
	c[0].n_eal_args = 0;
	c[1] = c[0];
	for (int i = 0; i < 2; i++) {
		c[i].n_ports = 1;
		rnic_port_cfg_init(&c[i].ports[0]);
		snprintf(c[i].ports[0].ring, sizeof(c[i].ports[0].ring), "%s.%c", CR_RING,
			 i ? 'b' : 'a');
		c[i].ports[0].ip = i ? CR_B_IP : CR_A_IP;
		c[i].ports[0].prefix_len = 24;
		c[i].ports[0].mbufs = 16383;
		st[i] = rnic_stack_create(&c[i]);
		if (st[i] != NULL && o.tw_reuse_ms >= 0) {
			struct rnic_tcp_params tp;
			rnic_tcp_params_default(&tp);
			tp.tw_reuse_ms = (uint32_t)o.tw_reuse_ms;
			if (rnic_tcp_config(st[i], &tp) != 0) {
				fprintf(stderr, "rnic-perf conn_rate: TCP parameters refused\n");
				return -1;
			}
		}
		if (st[i] == NULL || rnic_stack_start(st[i]) != 0) {
			fprintf(stderr, "rnic-perf conn_rate: stack %c: %s\n", 'A' + i,
				strerror(errno));
			return -1;
		}
	}
	return 0;
}

/* The stacks hold nothing of the run: no connected QP, no TCB (waiting
 * out TIME_WAIT). */
static void cr_leftovers(uint64_t *qps, uint64_t *tcbs)
{
	double t0 = now_s();
	for (;;) {
		struct rnic_stack_stats sa, sb;
		struct rnic_tcp_stats ta, tb;
		rnic_stack_stats(A.st, &sa);
		rnic_stack_stats(B.st, &sb);
		rnic_tcp_stats(A.st, &ta);
		rnic_tcp_stats(B.st, &tb);
		*qps = sa.connections + sb.connections;
		*tcbs = ta.tcbs + tb.tcbs;
		if ((*qps == 0 && *tcbs == 0) || now_s() - t0 > CR_WAIT_S)
			return;
		drive();
		/* TIME_WAIT lasts 2 s: no need to spin (the stats take locks) */
		struct timespec ts = { 0, o.threaded ? 1000000 : 100000 };
		nanosleep(&ts, NULL);
	}
}

/* Run connections until @p target have completed (or one failed, or none
 * completed for CR_WAIT_S). */
static void cr_run(unsigned target)
{
	unsigned started = done, last_done = done;
	double seen = now_s();
	while (done < target && failed == 0) {
		for (unsigned i = 0; i < o.window && started < target && failed == 0; i++)
			if (!slots[i].busy && cr_start(&slots[i]) == 0)
				started++;
		drive();
		cr_events(&A, true);
		cr_events(&B, false);
		cr_completions();
		double t = now_s();
		if (done != last_done) {
			last_done = done;
			seen = t;
		} else if (t - seen > CR_WAIT_S) {
			fprintf(stderr, "rnic-perf conn_rate: no connection completed for %d s "
				"(%u of %u)\n", CR_WAIT_S, done, target);
			failed++;
		}
	}
}

/* Average microseconds from a connection's start to stage @p k. */
static double stage_avg_us(int k)
{
	return done ? (double)stage_cyc[k] / done * 1e6 / (double)rte_get_tsc_hz() : 0;
}

int perf_conn_rate_main(int argc, char **argv, struct rnic_config *cfg)
{
	int prc = parse(argc, argv);
	if (prc != 0)
		return prc > 0 ? 0 : 2;
	struct rnic_stack *st[2];
	if (cr_stacks(cfg, st) != 0)
		return 1;
	slots = calloc(o.window, sizeof(*slots));
	struct rnic_cm_id *l = NULL;
	if (slots == NULL || cr_side_open(&A, st[0]) != 0 || cr_side_open(&B, st[1]) != 0 ||
	    rnic_cm_create_id(A.ch, NULL, &l) != 0 || rnic_cm_listen(l, CR_PORT, 0) != 0) {
		fprintf(stderr, "rnic-perf conn_rate: setup failed\n");
		return 1;
	}
	if (!o.threaded) {   /* this thread runs both workers from here on */
		rnic_stack_stop(A.st);
		rnic_stack_stop(B.st);
	}
	/* one connection first, untimed: the stacks resolve each other's MAC
	 * (a burst of a window's first packets overflows ARP's held frames,
	 * and a dropped REQ waits a CM response timeout, 1.07 s) */
	cr_run(1);
	done = 0;
	memset(stage_cyc, 0, sizeof(stage_cyc));
	memset(phase_cyc, 0, sizeof(phase_cyc));
	double t0 = now_s(), cpu0 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
	uint64_t tsc0 = rte_rdtsc();
	phase_t0 = tsc0;
	cur_phase = PH_EVENTS;
	if (failed == 0)
		cr_run(o.conns);
	double secs = now_s() - t0, cpu = clock_s(CLOCK_PROCESS_CPUTIME_ID) - cpu0;
	enter(PH_EVENTS);
	uint64_t cyc = rte_rdtsc() - tsc0;
	uint64_t in_run[PH_N];
	memcpy(in_run, phase_cyc, sizeof(in_run));
	uint64_t qps_left = 0, tcbs_left = 0;
	cr_leftovers(&qps_left, &tcbs_left);
	const char *tname = o.tr == RNIC_TRANSPORT_ROCE ? "roce" : "iwarp";
	double rate = done / secs;
	if (o.json) {
		printf("{\"test\": \"conn_rate\", \"transport\": \"%s\", \"drive\": \"%s\", "
		       "\"window\": %u, \"rts_delay\": %s, \"conns\": %u, \"completed\": %u, "
		       "\"seconds\": %.3f, \"conns_per_s\": %.0f, \"cpu_s\": %.3f, "
		       "\"conns_per_cpu_s\": %.0f", tname,
		       o.threaded ? "threaded" : "one", o.window, o.rts_delay ? "true" : "false",
		       o.conns, done, secs, rate, cpu, cpu > 0 ? done / cpu : 0);
		for (int p = 0; p < PH_N; p++)
			printf(", \"time_%s_pct\": %.1f", phase_names[p],
			       100.0 * (double)in_run[p] / (double)cyc);
		for (int k = 0; k < ST_N; k++)
			printf(", \"%s_us\": %.1f", stage_names[k], stage_avg_us(k));
		struct rnic_tcp_stats tb;
		rnic_tcp_stats(B.st, &tb);
		printf(", \"tw_reuse_ms\": %ld, \"tw_reused\": %lu", o.tw_reuse_ms,
		       (unsigned long)tb.tw_reused);
		printf(", \"qps_after\": %lu, \"tcbs_after\": %lu}\n", (unsigned long)qps_left,
		       (unsigned long)tcbs_left);
	} else {
		printf("conn_rate %s (drive %s, window %u%s): %u of %u connections in %.3f s, "
		       "%.0f/s (%.3f s of CPU: %.0f per CPU second)\n", tname,
		       o.threaded ? "threaded" : "one", o.window,
		       o.rts_delay ? ", 50 ms pause before RTS" : "", done, o.conns, secs, rate, cpu,
		       cpu > 0 ? done / cpu : 0);
		for (int p = 0; p < PH_N; p++)
			printf("  %-10s %5.1f %% of this thread\n", phase_names[p],
			       100.0 * (double)in_run[p] / (double)cyc);
		printf("  average time from B's QP creation to:");
		for (int k = 0; k < ST_N; k++)
			printf(" %s %.1f us%s", stage_names[k], stage_avg_us(k), k + 1 < ST_N ? "," : "\n");
		printf("  left: %lu connected QPs, %lu TCBs\n", (unsigned long)qps_left,
		       (unsigned long)tcbs_left);
	}
	if (!o.threaded) {   /* teardown waits for workers on their lcores */
		rnic_stack_start(A.st);
		rnic_stack_start(B.st);
	}
	rnic_cm_destroy_id(l);
	for (unsigned i = 0; i < o.window; i++)
		if (slots[i].busy) {   /* a failed run: what it left */
			struct cr_conn *c = &slots[i];
			if (c->ib)
				rnic_cm_destroy_id(c->ib);
			if (c->ia)
				rnic_cm_destroy_id(c->ia);
			if (c->qb)
				rnic_destroy_qp(c->qb);
			if (c->qa)
				rnic_destroy_qp(c->qa);
		}
	cr_side_close(&A);
	cr_side_close(&B);
	rnic_stack_destroy(A.st);
	rnic_stack_destroy(B.st);
	free(slots);
	bool ok = failed == 0 && done == o.conns && qps_left == 0 && tcbs_left == 0;
	return ok ? 0 : 1;
}
