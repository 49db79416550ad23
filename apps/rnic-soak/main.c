/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rnic-soak: mixed RDMA traffic through an impaired link, every byte and
 * every completion checked (issue 8).
 *
 *   rnic-soak [--transport iwarp|roce] [--ops N] [--drop P] [--dup P]
 *             [--reorder P] [--corrupt P] [--ce P] [--ecn] [--dcqcn]
 *             [--seed S] [--qps N] [--max-size BYTES]
 *             [--drive inline|one|threaded] [--json]
 *
 * Two stacks in this process are wired by net_ring; the fault injector of
 * the requester's port works on both directions. Once connected, the
 * requester's stack (B) runs to completion: its lcore stops and the main
 * thread runs B's worker loop between its verbs calls, so the process has
 * one busy thread per CPU of a 2-CPU host (A's worker and this one) instead
 * of three, and no worker waits for the scheduler while its peer's timers
 * run (--drive inline, the default). --drive one runs both stacks on the
 * main thread; --drive threaded (or --threaded) keeps every worker on its
 * own lcore, placed as rnic places them (floating over the CPUs when there
 * are fewer CPUs than lcores, docs/design.md). iWARP QPs connect through
 * the CM; RoCE QPs are connected out of band, as both ends live here (INIT,
 * RTR towards the peer's GID 1 = ::ffff:its IPv4, RTS). Requester QPs post a
 * seeded mix of Sends, RDMA Writes and RDMA Reads of 1 B to --max-size
 * (log-uniform, unaligned offsets) with a window of 16 per QP:
 *  - Sends carry a pattern of (QP, sequence); the responder checks every
 *    byte and the length of each receive, in order;
 *  - Writes go to the responder's write zone; a shadow copy follows them in
 *    posting order and the zone must equal it at the end;
 *  - Reads come from the responder's read zone, filled once at start, and
 *    are checked byte by byte at completion.
 * Each work request must complete exactly once, successfully, in posting
 * order. The JSON line has ops, verified, wrong_bytes, lost,
 * dup_completions, seconds. Exit 0 when verified.
 */
#include <errno.h>
#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "rnic/rnic.h"
#include "rnic/rnic_cm.h"
#include "rnic/rnic_roce.h"
#include "rnic/rnic_tcp.h"
#include <rte_ring.h>
#include "rnic/rnic_verbs.h"
#include "engine/stack.h"
#include "engine/worker.h"
#include "port/port.h"
#include "net/net.h"
#include <rte_eal.h>
#include <rte_mempool.h>

#define A_IP 0xc0000201u   /* responder */
#define B_IP 0xc0000202u   /* requester */
#define PORT 7700
#define WIN 16
#define MAX_QPS 16

static struct {
	const char *transport;
	uint64_t ops;
	double drop, dup, reorder, corrupt, ce;
	bool ecn, dcqcn;          /* RoCE: ECT(0) packets, DCQCN pacing (both stacks) */
	uint64_t seed;
	unsigned qps;
	uint32_t max_size;
	int json;
	const char *drive;     /* inline: B on this thread; one: A and B; threaded */
	unsigned qp_timeout;   /* RoCE local ACK timeout exponent: 4.096 us << N */
} o = { .transport = "iwarp", .ops = 10000, .seed = 1, .qps = 4, .max_size = 1 << 20,
	.qp_timeout = 14, .drive = "inline" };

enum op { OP_SEND, OP_WRITE, OP_READ };

struct pending {
	enum op op;
	uint32_t len;
	uint64_t off;        /* read: offset in the read zone; send: its sequence */
	uint8_t *sink;       /* read sink in the requester's buffer */
};

struct qpair {
	struct ibv_qp *a, *b;
	struct rnic_cm_id *aid, *bid;
	struct ibv_mr *amr, *bmr;
	uint8_t *amem, *bmem;        /* responder: recv slots | write zone | read zone */
	uint8_t *shadow;             /* what the write zone must hold */
	uint64_t posted, completed, recvs_posted, recvs_done, sends_posted;
	struct pending win[WIN];     /* by sequence % WIN */
	uint32_t send_len[1 << 16];  /* lengths of Sends by sequence */
	uint64_t rng;
};

static struct qpair qp[MAX_QPS];
static uint64_t wrong_bytes, lost, dups, bad_status, ops_done;
static uint64_t wrong_send, wrong_read, wrong_write, post_failures;
static size_t slot_sz, zone_sz;
static struct rnic_stack *driven[2];   /* stacks this thread runs, or NULL */

/* Run one loop of every worker of the stacks this thread drives (run to
 * completion); nothing for stacks on their own lcores. */
static void drive(void)
{
	rnic_stack_poll(driven[0]);
	rnic_stack_poll(driven[1]);
}

static uint64_t xs(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static uint8_t pat(uint64_t a, uint64_t b, uint64_t i)
{
	uint64_t x = (a * 0x9e3779b97f4a7c15ull) ^ (b * 0xc2b2ae3d27d4eb4full) ^ (i * 0x165667b1);
	return (uint8_t)(x ^ (x >> 29) ^ (x >> 41));
}

/* Responder memory layout. */
static uint8_t *recv_slot(struct qpair *p, unsigned k) { return p->amem + k * slot_sz; }
static uint8_t *write_zone(struct qpair *p) { return p->amem + WIN * slot_sz; }
static uint8_t *read_zone(struct qpair *p) { return p->amem + WIN * slot_sz + zone_sz; }

static void post_recv(struct qpair *p)
{
	unsigned k = (unsigned)(p->recvs_posted % WIN);
	struct ibv_sge s = { (uintptr_t)recv_slot(p, k), (uint32_t)slot_sz, p->amr->lkey };
	struct ibv_recv_wr wr = { .wr_id = p->recvs_posted, .sg_list = &s, .num_sge = 1 }, *bad;
	if (ibv_post_recv(p->a, &wr, &bad) == 0)
		p->recvs_posted++;
}

static uint32_t pick_size(struct qpair *p)
{
	/* log-uniform over [1, max_size] */
	double l = (double)(xs(&p->rng) % 1000000) / 1000000.0 * log((double)o.max_size);
	uint32_t n = (uint32_t)exp(l);
	return n < 1 ? 1 : n > o.max_size ? o.max_size : n;
}

static int post_one(struct qpair *p, unsigned idx)
{
	uint64_t seq = p->posted;
	struct pending *w = &p->win[seq % WIN];
	uint64_t r = xs(&p->rng);
	w->op = (enum op)(r % 3);
	w->len = pick_size(p);
	/* the requester's buffer: WIN slots of max_size + 8 */
	uint8_t *buf = p->bmem + (seq % WIN) * (o.max_size + 8) + (r >> 8) % 8;
	struct ibv_sge s = { (uintptr_t)buf, w->len, p->bmr->lkey };
	struct ibv_send_wr wr = { .wr_id = seq, .sg_list = &s, .num_sge = 1,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	if (w->op == OP_SEND) {
		w->off = p->sends_posted;
		for (uint32_t i = 0; i < w->len; i++)
			buf[i] = pat(idx, w->off, i);
		p->send_len[w->off & 0xffff] = w->len;
		wr.opcode = IBV_WR_SEND;
	} else if (w->op == OP_WRITE) {
		uint64_t off = (r >> 16) % (zone_sz - w->len + 1);
		for (uint32_t i = 0; i < w->len; i++)
			buf[i] = pat(idx + 100, seq, i);
		w->off = off;
		wr.opcode = IBV_WR_RDMA_WRITE;
		wr.wr.rdma.remote_addr = (uintptr_t)write_zone(p) + off;
		wr.wr.rdma.rkey = p->amr->rkey;
	} else {
		w->off = (r >> 16) % (zone_sz - w->len + 1);
		w->sink = buf;
		memset(buf, 0, w->len);
		wr.opcode = IBV_WR_RDMA_READ;
		wr.wr.rdma.remote_addr = (uintptr_t)read_zone(p) + w->off;
		wr.wr.rdma.rkey = p->amr->rkey;
	}
	int rc = ibv_post_send(p->b, &wr, &bad);
	if (rc != 0) {
		post_failures++;
		if (getenv("SOAK_DEBUG"))
			fprintf(stderr, "post refused: %s (op %d len %u)\n", strerror(rc), w->op, w->len);
		return -1;
	}
	if (w->op == OP_WRITE)   /* posting order = placing order */
		memcpy(p->shadow + w->off, buf, w->len);
	if (w->op == OP_SEND)
		p->sends_posted++;
	p->posted++;
	return 0;
}

/* SOAK_DEBUG: both stacks' TCP drop and retransmission counters. */
static void tcp_counters_dump(struct rnic_stack *A, struct rnic_stack *B)
{
	struct rnic_tcp_stats ta, tb;
	rnic_tcp_stats(A, &ta);
	rnic_tcp_stats(B, &tb);
	fprintf(stderr, "paws %lu/%lu dup %lu/%lu csum %lu/%lu hdr %lu/%lu opts %lu/%lu chal %lu/%lu\n",
		(unsigned long)ta.paws_drops, (unsigned long)tb.paws_drops,
		(unsigned long)ta.dup_segs, (unsigned long)tb.dup_segs,
		(unsigned long)ta.bad_csum, (unsigned long)tb.bad_csum,
		(unsigned long)ta.bad_hdr, (unsigned long)tb.bad_hdr,
		(unsigned long)ta.bad_opts, (unsigned long)tb.bad_opts,
		(unsigned long)ta.challenge_acks, (unsigned long)tb.challenge_acks);
	fprintf(stderr, "A tcp: segs %lu/%lu rtx %lu rto %lu oow %lu | B tcp: segs %lu/%lu rtx %lu rto %lu oow %lu\n",
		(unsigned long)ta.segs_in, (unsigned long)ta.segs_out, (unsigned long)ta.retransmits,
		(unsigned long)ta.rtos, (unsigned long)ta.out_of_window,
		(unsigned long)tb.segs_in, (unsigned long)tb.segs_out, (unsigned long)tb.retransmits,
		(unsigned long)tb.rtos, (unsigned long)tb.out_of_window);
}

static void check_send_completion(struct qpair *p, unsigned idx, const struct ibv_wc *wc)
{
	if (wc->wr_id != p->completed) {
		if (wc->wr_id < p->completed)
			dups++;
		else
			lost += wc->wr_id - p->completed;
	}
	if (wc->status != IBV_WC_SUCCESS) {
		if (bad_status == 0 && getenv("SOAK_DEBUG")) {   /* why the QP ended */
			struct rnic_qp_stats sa, sb;
			rnic_qp_stats(p->a, &sa);
			rnic_qp_stats(p->b, &sb);
			fprintf(stderr, "QP %u ended: terminates in/out A %lu/%lu B %lu/%lu, "
				"flushed A %lu B %lu\n", idx, (unsigned long)sa.terminates_in,
				(unsigned long)sa.terminates_out, (unsigned long)sb.terminates_in,
				(unsigned long)sb.terminates_out, (unsigned long)sa.flushed,
				(unsigned long)sb.flushed);
			rnic_qp_dump(p->a, stderr);
			rnic_qp_dump(p->b, stderr);
		}
		if (bad_status++ < 4)
			fprintf(stderr, "rnic-soak: QP %u: work request %lu (op %d) completed with %s "
				"after %lu ops\n", idx, (unsigned long)wc->wr_id,
				p->win[wc->wr_id % WIN].op, rnic_wc_status_str(wc->status),
				(unsigned long)ops_done);
		return;
	}
	struct pending *w = &p->win[wc->wr_id % WIN];
	if (w->op == OP_READ) {
		if (wc->byte_len != w->len)
			bad_status++;
		const uint8_t *src = read_zone(p) + w->off;
		for (uint32_t i = 0; i < w->len; i++)
			wrong_read += w->sink[i] != src[i] || src[i] != pat(idx + 200, 0, w->off + i);
	}
	p->completed = wc->wr_id + 1;
	ops_done++;
}

static void check_recv(struct qpair *p, unsigned idx, const struct ibv_wc *wc)
{
	if (wc->wr_id != p->recvs_done) {
		if (wc->wr_id < p->recvs_done)
			dups++;
		else
			lost += wc->wr_id - p->recvs_done;
	}
	if (wc->status != IBV_WC_SUCCESS) {
		if (bad_status++ < 4)
			fprintf(stderr, "rnic-soak: QP %u: receive %lu completed with %s\n", idx,
				(unsigned long)wc->wr_id, rnic_wc_status_str(wc->status));
		return;
	}
	uint64_t seq = wc->wr_id;   /* receives are consumed in send order */
	uint32_t len = p->send_len[seq & 0xffff];
	if (wc->byte_len != len)
		bad_status++;
	const uint8_t *d = recv_slot(p, (unsigned)(wc->wr_id % WIN));
	for (uint32_t i = 0; i < wc->byte_len && i < slot_sz; i++)
		wrong_send += d[i] != pat(idx, seq, i);
	p->recvs_done = wc->wr_id + 1;
	post_recv(p);
}

/*
 * EAL "--lcores" value with every lcore (main, A's worker, B's) floating
 * over the CPUs this process may use, as "0@(0,1),1@(0,1),2@(0,1)": a
 * worker pinned to one CPU is off the CPU for as long as another process
 * holds that CPU (a SCHED_FIFO benchmark left it 50 ms a second here),
 * while a floating one moves to the other CPU. @return 0 or -1.
 */
static int floating_lcores(char *buf, size_t len)
{
	cpu_set_t set;
	char cpus[256];
	size_t n = 0, o = 0;
	if (sched_getaffinity(0, sizeof(set), &set) != 0)
		return -1;
	for (int c = 0; c < CPU_SETSIZE && n < sizeof(cpus); c++)
		if (CPU_ISSET(c, &set))
			n += (size_t)snprintf(cpus + n, sizeof(cpus) - n, "%s%d", n ? "," : "", c);
	if (n == 0 || n >= sizeof(cpus))
		return -1;
	for (unsigned lc = 0; lc < 3 && o < len; lc++)
		o += (size_t)snprintf(buf + o, len - o, "%s%u@(%s)", lc ? "," : "", lc, cpus);
	return o < len ? 0 : -1;
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int usage(FILE *f, int rc)
{
	fprintf(f, "usage: rnic-soak [--transport iwarp|roce] [--ops N] [--drop P] [--dup P]\n"
		   "                 [--reorder P] [--corrupt P] [--ce P] [--ecn] [--dcqcn]\n"
		   "                 [--seed S] [--qps N (1..16)]\n"
		   "                 [--qp-timeout N (RoCE: 4.096 us << N, default 14)]\n"
		   "                 [--max-size BYTES] [--drive inline|one|threaded] [--json]\n"
		   "Fault rates are percent (0..100), applied both ways on the link; --ce marks\n"
		   "ECN-capable frames CE (RoCE with --ecn; --dcqcn adds the rate limiter).\n"
		   "--drive: inline (default) runs the requester stack's worker on the main\n"
		   "thread, one runs both stacks there, threaded (--threaded) every worker on\n"
		   "its own lcore (three busy threads).\n");
	return rc;
}

static int parse(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		char *end = NULL;
		if (!strcmp(a, "--help"))
			exit(usage(stdout, 0));
		if (!strcmp(a, "--json")) {
			o.json = 1;
			continue;
		}
		if (!strcmp(a, "--threaded")) {
			o.drive = "threaded";
			continue;
		}
		if (!strcmp(a, "--ecn") || !strcmp(a, "--dcqcn")) {
			*(a[2] == 'e' ? &o.ecn : &o.dcqcn) = true;
			continue;
		}
		if (v == NULL)
			goto bad;
		i++;
		errno = 0;
		if (!strcmp(a, "--drive")) {
			if (strcmp(v, "inline") && strcmp(v, "one") && strcmp(v, "threaded"))
				goto bad;
			o.drive = v;
			continue;
		}
		if (!strcmp(a, "--transport")) {
			if (strcmp(v, "iwarp") && strcmp(v, "roce"))
				goto bad;
			o.transport = v;
			continue;
		}
		double d = strtod(v, &end);
		if (errno || end == v || *end || d < 0)
			goto bad;
		if (!strcmp(a, "--ops") && d >= 1 && d <= 1e9)
			o.ops = (uint64_t)d;
		else if (!strcmp(a, "--drop") && d <= 100)
			o.drop = d;
		else if (!strcmp(a, "--dup") && d <= 100)
			o.dup = d;
		else if (!strcmp(a, "--reorder") && d <= 100)
			o.reorder = d;
		else if (!strcmp(a, "--corrupt") && d <= 100)
			o.corrupt = d;
		else if (!strcmp(a, "--ce") && d <= 100)
			o.ce = d;
		else if (!strcmp(a, "--seed"))
			o.seed = (uint64_t)d ? (uint64_t)d : 1;
		else if (!strcmp(a, "--qps") && d >= 1 && d <= MAX_QPS)
			o.qps = (unsigned)d;
		else if (!strcmp(a, "--max-size") && d >= 1 && d <= (16 << 20))
			o.max_size = (uint32_t)d;
		else if (!strcmp(a, "--qp-timeout") && d >= 1 && d <= 31)
			o.qp_timeout = (unsigned)d;
		else
			goto bad;
		continue;
bad:
		fprintf(stderr, "rnic-soak: bad option or value: %s %s\n", a, v ? v : "");
		return -1;
	}
	return 0;
}

static int expect(struct rnic_cm_channel *ch, enum rnic_cm_event_type t, struct rnic_cm_event *ev)
{
	if (rnic_cm_get_event(ch, ev, 20000) != 0 || ev->type != t) {
		fprintf(stderr, "rnic-soak: connection setup: expected %s\n", rnic_cm_event_str(t));
		return -1;
	}
	return 0;
}

/* Connect RoCE QP @p x of this process to @p y, whose device is @p peer:
 * RTR with the peer's GID 1 and QPN, then RTS. Both are in INIT already.
 * @return 0 or the failing modify_qp's errno. */
static int roce_rtr_rts(struct ibv_qp *x, struct ibv_context *peer, struct ibv_qp *y,
			uint32_t rq_psn, uint32_t sq_psn)
{
	union ibv_gid gid;
	int rc = rnic_query_gid(peer, 1, 1, &gid);
	if (rc != 0)
		return rc;
	struct ibv_qp_attr rtr = {
		.qp_state = IBV_QPS_RTR,
		.path_mtu = IBV_MTU_1024,
		.dest_qp_num = y->qp_num,
		.rq_psn = rq_psn,
		.max_dest_rd_atomic = WIN,
		.min_rnr_timer = 12,            /* 0.64 ms */
		.ah_attr = { .is_global = 1, .port_num = 1,
			     .grh = { .dgid = gid, .sgid_index = 1, .hop_limit = 64 } },
	};
	rc = rnic_modify_qp(x, &rtr,
			    RNIC_QP_RTR_MASK);
	if (rc != 0)
		return rc;
	struct ibv_qp_attr rts = {
		.qp_state = IBV_QPS_RTS,
		.timeout = (uint8_t)o.qp_timeout,   /* default 14: 67 ms */
		.retry_cnt = 7,
		.rnr_retry = 7,                 /* for ever */
		.sq_psn = sq_psn,
		.max_rd_atomic = WIN,
	};
	return rnic_modify_qp(x, &rts,
			      RNIC_QP_RTS_MASK);
}

/* Free everything main() made, in reverse, so LeakSanitizer sees a clean
 * exit and the library's own "still in use" refusals are checked.
 * @return 0, or -1 after saying what refused to go. */
static int teardown(struct rnic_stack *A, struct rnic_stack *B, struct rnic_cm_channel *ach,
		    struct rnic_cm_channel *bch, struct rnic_cm_id *l, struct ibv_cq *acq,
		    struct ibv_cq *bcq, struct ibv_pd *apd, struct ibv_pd *bpd)
{
	struct ibv_context *ca = apd->context, *cb = bpd->context;
	int bad = 0;
	for (unsigned i = 0; i < o.qps; i++) {
		struct qpair *p = &qp[i];
		if (p->bid)
			bad |= rnic_cm_destroy_id(p->bid);
		if (p->aid)
			bad |= rnic_cm_destroy_id(p->aid);
		bad |= rnic_destroy_qp(p->a) | rnic_destroy_qp(p->b);
		bad |= rnic_dereg_mr(p->amr) | rnic_dereg_mr(p->bmr);
		free(p->amem);
		free(p->bmem);
		free(p->shadow);
	}
	if (l)
		bad |= rnic_cm_destroy_id(l);
	bad |= rnic_cm_destroy_channel(ach) | rnic_cm_destroy_channel(bch);
	bad |= rnic_destroy_cq(acq) | rnic_destroy_cq(bcq);
	bad |= rnic_dealloc_pd(apd) | rnic_dealloc_pd(bpd);
	bad |= rnic_close_device(ca) | rnic_close_device(cb);
	rnic_stack_destroy(A);
	rnic_stack_destroy(B);
	rte_eal_cleanup();
	if (bad)
		fprintf(stderr, "rnic-soak: teardown: an object was still in use\n");
	return bad ? -1 : 0;
}

int main(int argc, char **argv)
{
	if (parse(argc, argv) != 0)
		return usage(stderr, 2);
	struct rnic_config c[2];
	rnic_config_init(&c[0]);
	snprintf(c[0].eal_args[c[0].n_eal_args++], 128, "--no-huge");
	snprintf(c[0].eal_args[c[0].n_eal_args++], 128, "-m");
	snprintf(c[0].eal_args[c[0].n_eal_args++], 128, "1024");
	if (strcmp(o.drive, "threaded") != 0) {
		char map[128];
		if (floating_lcores(map, sizeof(map)) == 0) {
			snprintf(c[0].eal_args[c[0].n_eal_args++], 128, "--lcores");
			snprintf(c[0].eal_args[c[0].n_eal_args++], 128, "%s", map);
		}
	}
	if (rnic_eal_init(argv[0], &c[0], 2) != 0 || rnic_ring_pair("soak", 1) != 0)
		return 1;
	c[0].n_eal_args = 0;
	c[1] = c[0];
	for (int i = 0; i < 2; i++) {
		c[i].n_ports = 1;
		rnic_port_cfg_init(&c[i].ports[0]);
		snprintf(c[i].ports[0].ring, sizeof(c[i].ports[0].ring), "soak.%c", i ? 'b' : 'a');
		c[i].ports[0].ip = i ? B_IP : A_IP;
		c[i].ports[0].prefix_len = 24;
		c[i].ports[0].mbufs = 32767;
		c[i].roce_cc.ecn = o.ecn;
		c[i].roce_cc.dcqcn = o.dcqcn;
	}
	struct rnic_fault_cfg f = { .drop = o.drop, .dup = o.dup, .reorder = o.reorder,
				    .corrupt = o.corrupt, .ce = o.ce };
	c[1].ports[0].rx_fault = c[1].ports[0].tx_fault = f;
	c[1].ports[0].fault_seed = o.seed;
	struct rnic_stack *A = rnic_stack_create(&c[0]), *B = rnic_stack_create(&c[1]);
	if (!A || !B || rnic_stack_start(A) || rnic_stack_start(B))
		return 1;
	struct ibv_context *ca = rnic_open_device(A), *cb = rnic_open_device(B);
	struct ibv_pd *apd = rnic_alloc_pd(ca), *bpd = rnic_alloc_pd(cb);
	struct ibv_cq *acq = rnic_create_cq(ca, 4096, NULL, NULL, 0);
	struct ibv_cq *bcq = rnic_create_cq(cb, 4096, NULL, NULL, 0);
	enum rnic_transport tr = strcmp(o.transport, "roce") ? RNIC_TRANSPORT_IWARP
							     : RNIC_TRANSPORT_ROCE;
	slot_sz = o.max_size;
	zone_sz = (size_t)o.max_size * 2;
	struct rnic_cm_channel *ach = rnic_cm_create_channel(ca), *bch = rnic_cm_create_channel(cb);
	struct rnic_cm_id *l = NULL;
	struct rnic_cm_event ev;
	if (tr == RNIC_TRANSPORT_IWARP && (rnic_cm_create_id(ach, NULL, &l) ||
					   rnic_cm_listen(l, PORT, 64)))
		return 1;
	for (unsigned i = 0; i < o.qps; i++) {
		struct qpair *p = &qp[i];
		struct ibv_qp_init_attr qa = { .qp_type = IBV_QPT_RC,
			.cap = { .max_send_wr = WIN, .max_recv_wr = WIN, .max_send_sge = 1,
				 .max_recv_sge = 1 } };
		qa.send_cq = qa.recv_cq = acq;
		p->a = rnic_create_qp_transport(apd, &qa, tr);
		qa.send_cq = qa.recv_cq = bcq;
		p->b = rnic_create_qp_transport(bpd, &qa, tr);
		if (!p->a || !p->b) {
			fprintf(stderr, "rnic-soak: cannot create %s QPs: %s\n", o.transport,
				strerror(errno));
			return 2;
		}
		size_t asz = WIN * slot_sz + 2 * zone_sz, bsz = WIN * ((size_t)o.max_size + 8);
		p->amem = aligned_alloc(4096, (asz + 4095) & ~(size_t)4095);
		p->bmem = aligned_alloc(4096, (bsz + 4095) & ~(size_t)4095);
		p->shadow = calloc(1, zone_sz);
		if (!p->amem || !p->bmem || !p->shadow)
			return 1;
		memset(p->amem, 0, asz);
		for (size_t k = 0; k < zone_sz; k++)
			read_zone(p)[k] = pat(i + 200, 0, k);
		p->amr = rnic_reg_mr(apd, p->amem, asz, IBV_ACCESS_LOCAL_WRITE |
				     IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
		p->bmr = rnic_reg_mr(bpd, p->bmem, bsz, IBV_ACCESS_LOCAL_WRITE);
		p->rng = o.seed * 0x9e3779b97f4a7c15ull + i + 1;
		if (tr == RNIC_TRANSPORT_ROCE) {
			struct ibv_qp_attr at = {
				.qp_state = IBV_QPS_INIT, .pkey_index = 0, .port_num = 1,
				.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ };
			int mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS;
			uint32_t psn_ab = (uint32_t)(p->rng >> 8) & 0xffffff;
			uint32_t psn_ba = (uint32_t)(p->rng >> 40) & 0xffffff;
			int rc = rnic_modify_qp(p->a, &at, mask);
			if (rc == 0)
				rc = rnic_modify_qp(p->b, &at, mask);
			for (unsigned k = 0; rc == 0 && k < WIN; k++)
				post_recv(p);
			if (rc == 0)
				rc = roce_rtr_rts(p->a, cb, p->b, psn_ba, psn_ab);
			if (rc == 0)
				rc = roce_rtr_rts(p->b, ca, p->a, psn_ab, psn_ba);
			if (rc != 0) {
				fprintf(stderr, "rnic-soak: connecting roce QPs: %s\n", strerror(-rc));
				return 1;
			}
			continue;
		}
		if (rnic_cm_create_id(bch, p, &p->bid) ||
		    rnic_cm_connect(p->bid, p->b, A_IP, PORT, NULL) ||
		    expect(ach, RNIC_CM_EVENT_CONNECT_REQUEST, &ev))
			return 1;
		p->aid = ev.id;
		struct ibv_qp_attr at = { .qp_state = IBV_QPS_INIT };
		rnic_modify_qp(p->a, &at, IBV_QP_STATE);
		for (unsigned k = 0; k < WIN; k++)
			post_recv(p);
		if (rnic_cm_accept(p->aid, p->a, NULL) || expect(ach, RNIC_CM_EVENT_ESTABLISHED, &ev) ||
		    expect(bch, RNIC_CM_EVENT_ESTABLISHED, &ev))
			return 1;
	}
	if (strcmp(o.drive, "threaded") != 0) {
		/* from here on this thread is stack B's worker lcore (and A's) */
		rnic_stack_stop(B);
		driven[1] = B;
	}
	if (strcmp(o.drive, "one") == 0) {
		rnic_stack_stop(A);
		driven[0] = A;
	}
	double t0 = now_s(), last_progress = t0;
	uint64_t per_qp = o.ops / o.qps, extra = o.ops % o.qps, stuck = 0, last_done = 0;
	for (;;) {
		bool all = true;
		for (unsigned i = 0; i < o.qps; i++) {
			struct qpair *p = &qp[i];
			uint64_t mine = per_qp + (i < extra);
			/* a Send needs a free receive on the other side */
			while (p->posted < mine && p->posted - p->completed < WIN &&
			       p->sends_posted - p->recvs_done < WIN)
				if (post_one(p, i) != 0)
					break;
			if (p->completed < mine || p->recvs_done < p->sends_posted)
				all = false;
		}
		drive();
		struct ibv_wc wc[64];
		int n = ibv_poll_cq(bcq, 64, wc);
		for (int k = 0; k < n; k++)
			for (unsigned i = 0; i < o.qps; i++)
				if (wc[k].qp_num == qp[i].b->qp_num)
					check_send_completion(&qp[i], i, &wc[k]);
		n = ibv_poll_cq(acq, 64, wc);
		for (int k = 0; k < n; k++)
			for (unsigned i = 0; i < o.qps; i++)
				if (wc[k].qp_num == qp[i].a->qp_num)
					check_recv(&qp[i], i, &wc[k]);
		double t = now_s();
		if (getenv("SOAK_DEBUG")) {   /* a worker that stops looping (starved, stuck) */
			static uint64_t loops[2];
			static double seen[2], last_t, worst[2];
			struct rnic_worker *ws[2] = { A->workers[0], B->workers[0] };
			for (int k = 0; k < 2; k++) {
				uint64_t l = __atomic_load_n(&ws[k]->stats.loops, __ATOMIC_RELAXED);
				if (t - last_t > 0.05) {   /* this thread did not look: no verdict */
					loops[k] = l;
					seen[k] = t;
				} else if (l != loops[k]) {
					if (t - seen[k] > 0.2 && t - seen[k] > worst[k] / 2)
						fprintf(stderr, "rnic-soak: worker %c made no loop for %.3f s (at %.3f s)\n",
							"AB"[k], t - seen[k], seen[k] - t0);
					if (t - seen[k] > worst[k])
						worst[k] = t - seen[k];
					loops[k] = l;
					seen[k] = t;
				} else if (bad_status && t - seen[k] > 0.2) {
					/* still stalled as a QP fails: reported now, as
					 * the run ends before it loops again */
					fprintf(stderr, "rnic-soak: worker %c has made no loop for %.3f s "
						"(since %.3f s) as a QP failed\n", "AB"[k], t - seen[k],
						seen[k] - t0);
				}
			}
			last_t = t;
		}
		if (all || bad_status)
			break;
		if (getenv("SOAK_DEBUG")) {   /* one QP stalled while the others go on */
			static uint64_t qp_done[MAX_QPS];
			static double qp_seen[MAX_QPS];
			static int qp_dumped[MAX_QPS];
			for (unsigned i = 0; i < o.qps; i++) {
				uint64_t d = qp[i].completed + qp[i].recvs_done;
				if (d != qp_done[i] || qp[i].posted == qp[i].completed ||
				    qp_seen[i] == 0) {
					qp_done[i] = d;
					qp_seen[i] = t;
				} else if ((t - qp_seen[i] > 10 && !qp_dumped[i]) ||
					   (t - qp_seen[i] > 20 && qp_dumped[i] == 1)) {
					qp_dumped[i]++;
					tcp_counters_dump(A, B);
					fprintf(stderr, "qp %u: no completion for 10 s (posted %lu completed "
						"%lu)\n", i, (unsigned long)qp[i].posted,
						(unsigned long)qp[i].completed);
					rnic_qp_dump(qp[i].a, stderr);
					rnic_qp_dump(qp[i].b, stderr);
				}
			}
		}
		if (t - last_progress > (getenv("SOAK_DEBUG") ? 8 : 30)) {   /* nothing for 30 s: give up, count the loss */
			if (ops_done == last_done) {
				stuck = 1;
				if (getenv("SOAK_DEBUG")) {
					for (unsigned i = 0; i < o.qps; i++)
						fprintf(stderr, "qp %u: posted %lu completed %lu sends %lu recvs %lu state %d/%d\n", i,
							(unsigned long)qp[i].posted, (unsigned long)qp[i].completed,
							(unsigned long)qp[i].sends_posted, (unsigned long)qp[i].recvs_done,
							qp[i].a->state, qp[i].b->state);
					for (unsigned i = 0; i < o.qps; i++) {   /* iWARP or RoCE alike */
						rnic_qp_dump(qp[i].a, stderr);
						rnic_qp_dump(qp[i].b, stderr);
					}
					struct rte_ring *ab = rnic_ring_pair_tx("soak.a", 0), *ba = rnic_ring_pair_tx("soak.b", 0);
					fprintf(stderr, "ring a->b %u, b->a %u\n", ab ? rte_ring_count(ab) : 9999,
						ba ? rte_ring_count(ba) : 9999);
					struct rnic_stack_stats sa, sb;
					rnic_stack_stats(A, &sa);
					rnic_stack_stats(B, &sb);
					fprintf(stderr, "mbufs A %lu B %lu avail A %u B %u\n", (unsigned long)sa.mbufs_in_use, (unsigned long)sb.mbufs_in_use, rte_mempool_avail_count(A->ports[0]->pool), rte_mempool_avail_count(B->ports[0]->pool));
					fprintf(stderr, "A rx %lu tx %lu drops %lu | B rx %lu tx %lu drops %lu faults drop %lu delayed %lu reord %lu\n",
						(unsigned long)sa.rx_pkts, (unsigned long)sa.tx_pkts, (unsigned long)sa.drops,
						(unsigned long)sb.rx_pkts, (unsigned long)sb.tx_pkts, (unsigned long)sb.drops,
						(unsigned long)sb.fault_dropped, (unsigned long)sb.fault_delayed, (unsigned long)sb.fault_reordered);
					for (int k = 0; k < RNIC_DROP_MAX; k++)
						if (A->workers[0]->drops[k] || B->workers[0]->drops[k])
							fprintf(stderr, "  drop %s A %lu B %lu\n", rnic_drop_name(k),
								(unsigned long)A->workers[0]->drops[k],
								(unsigned long)B->workers[0]->drops[k]);
					for (int rep = 0; rep < 2; rep++) {
						if (rep)
							sleep(3);
						tcp_counters_dump(A, B);
					}
				}
				break;
			}
			last_done = ops_done;
			last_progress = t;
		}
	}
	/* a Read after the last Writes: when it completes they are placed */
	for (unsigned i = 0; i < o.qps && !stuck && !bad_status; i++) {
		struct qpair *p = &qp[i];
		struct ibv_sge s = { (uintptr_t)p->bmem, 1, p->bmr->lkey };
		struct ibv_send_wr wr = { .wr_id = UINT64_MAX, .sg_list = &s, .num_sge = 1,
					  .opcode = IBV_WR_RDMA_READ, .send_flags = IBV_SEND_SIGNALED },
				   *bad;
		wr.wr.rdma.remote_addr = (uintptr_t)write_zone(p);
		wr.wr.rdma.rkey = p->amr->rkey;
		struct ibv_wc wc;
		int n = 0;
		double tf = now_s();
		if (ibv_post_send(p->b, &wr, &bad) == 0)
			while ((n = ibv_poll_cq(bcq, 1, &wc)) == 0 && now_s() - tf < 30)
				drive();
		if (n != 1 || wc.status != IBV_WC_SUCCESS || wc.wr_id != UINT64_MAX)
			stuck = 1;
	}
	double secs = now_s() - t0;
	for (int s = 0; s < 2; s++) {
		/* connection teardown needs the workers on their lcores again */
		if (driven[s] != NULL && rnic_stack_start(driven[s]) != 0) {
			fprintf(stderr, "rnic-soak: cannot restart stack %c\n", "AB"[s]);
			stuck = 1;
		}
		driven[s] = NULL;
	}
	uint64_t missing = 0;
	bool zones_unsettled = false;
	for (unsigned i = 0; i < o.qps; i++) {
		struct qpair *p = &qp[i];
		missing += (per_qp + (i < extra)) - p->completed;
		missing += p->sends_posted - p->recvs_done;
		/* the shadow follows every posted Write: with some never
		 * completed (a run that stopped) the zone cannot match it, and
		 * a count of differing bytes would read as corruption */
		if (p->posted != p->completed) {
			zones_unsettled = true;
			continue;
		}
		for (size_t k = 0; k < zone_sz; k++)
			wrong_write += write_zone(p)[k] != p->shadow[k];
	}
	if (zones_unsettled)
		fprintf(stderr, "rnic-soak: the write zones of QPs with operations still "
			"outstanding were not compared\n");
	wrong_bytes = wrong_send + wrong_read + wrong_write;
	if (post_failures)
		fprintf(stderr, "rnic-soak: %lu posts refused\n", (unsigned long)post_failures);
	if (wrong_bytes)
		fprintf(stderr, "rnic-soak: wrong bytes: %lu in receives, %lu in reads, %lu in the write zones\n",
			(unsigned long)wrong_send, (unsigned long)wrong_read, (unsigned long)wrong_write);
	lost += missing;
	if (getenv("SOAK_DEBUG")) {   /* why connections ended, if they did */
		struct rnic_tcp_stats t[2];
		rnic_tcp_stats(A, &t[0]);
		rnic_tcp_stats(B, &t[1]);
		for (int k = 0; k < 2; k++)
			fprintf(stderr, "tcp %c: user_timeouts %lu retry_timeouts %lu keepalive_timeouts %lu "
				"resets in %lu out %lu rtos %lu spurious_rtos %lu retransmits %lu\n", k ? 'B' : 'A',
				(unsigned long)t[k].user_timeouts, (unsigned long)t[k].retry_timeouts,
				(unsigned long)t[k].keepalive_timeouts, (unsigned long)t[k].resets_in,
				(unsigned long)t[k].resets_out, (unsigned long)t[k].rtos,
				(unsigned long)t[k].spurious_rtos, (unsigned long)t[k].retransmits);
	}
	struct rnic_stack_stats ss;
	rnic_stack_stats(B, &ss);
	bool verified = !stuck && !bad_status && !wrong_bytes && !lost && !dups;
	if (o.json)
		printf("{\"transport\": \"%s\", \"ops\": %lu, \"verified\": %s, \"wrong_bytes\": %lu, "
		       "\"lost\": %lu, \"dup_completions\": %lu, \"bad_status\": %lu, "
		       "\"seconds\": %.2f, \"seed\": %lu, \"drive\": \"%s\", \"faults\": {\"dropped\": %lu, "
		       "\"duplicated\": %lu, \"reordered\": %lu, \"corrupted\": %lu, "
		       "\"ce_marked\": %lu}}\n",
		       o.transport, (unsigned long)ops_done, verified ? "true" : "false",
		       (unsigned long)wrong_bytes, (unsigned long)lost, (unsigned long)dups,
		       (unsigned long)bad_status, secs, (unsigned long)o.seed,
		       o.drive,
		       (unsigned long)ss.fault_dropped, (unsigned long)ss.fault_duplicated,
		       (unsigned long)ss.fault_reordered, (unsigned long)ss.fault_corrupted,
		       (unsigned long)ss.fault_ce_marked);
	else
		printf("rnic-soak %s: %lu ops in %.2f s, %s: %lu wrong bytes, %lu lost, %lu duplicated, "
		       "%lu bad status (faults: %lu dropped, %lu dup, %lu reordered, %lu corrupted, "
		       "%lu CE)\n",
		       o.transport, (unsigned long)ops_done, secs, verified ? "verified" : "FAILED",
		       (unsigned long)wrong_bytes, (unsigned long)lost, (unsigned long)dups,
		       (unsigned long)bad_status, (unsigned long)ss.fault_dropped,
		       (unsigned long)ss.fault_duplicated, (unsigned long)ss.fault_reordered,
		       (unsigned long)ss.fault_corrupted, (unsigned long)ss.fault_ce_marked);
	if (getenv("SOAK_DEBUG")) {
		struct rnic_arp_stats aa, ab;
		rnic_arp_stats(A, &aa);
		rnic_arp_stats(B, &ab);
		fprintf(stderr, "arp A: req in/out %lu/%lu replies in/out %lu/%lu timeouts %lu | "
			"B: req in/out %lu/%lu replies in/out %lu/%lu timeouts %lu\n",
			(unsigned long)aa.requests_in, (unsigned long)aa.requests_out,
			(unsigned long)aa.replies_in, (unsigned long)aa.replies_out,
			(unsigned long)aa.timeouts, (unsigned long)ab.requests_in,
			(unsigned long)ab.requests_out, (unsigned long)ab.replies_in,
			(unsigned long)ab.replies_out, (unsigned long)ab.timeouts);
	}
	if (getenv("SOAK_DEBUG")) {   /* frames lost behind the injector, not injected */
		struct rnic_fault_stats fs;
		rnic_port_fault_stats(B->ports[0], &fs);
		struct rte_ring *ab = rnic_ring_pair_tx("soak.a", 0), *ba = rnic_ring_pair_tx("soak.b", 0);
		fprintf(stderr, "B's injector: hold_full %lu delayed %lu; rings now a->b %u b->a %u\n",
			(unsigned long)fs.hold_full, (unsigned long)fs.delayed,
			ab ? rte_ring_count(ab) : 0, ba ? rte_ring_count(ba) : 0);
		sleep(1);   /* a ring its reader drains stays non-empty only when stuck */
		for (int k = 0; k < 2; k++) {
			struct rte_ring *r = k ? ba : ab;
			if (r != NULL)
				fprintf(stderr, "ring %s after 1 s: count %u prod head %u tail %u "
					"cons head %u tail %u\n", k ? "b->a" : "a->b", rte_ring_count(r),
					r->prod.head, r->prod.tail, r->cons.head, r->cons.tail);
		}
	}
	if (getenv("SOAK_DEBUG") && tr == RNIC_TRANSPORT_ROCE) {
		static const char *const names[] = { "req_pkts_out", "retransmits", "timeouts",
			"retry_exceeded", "acks_in", "naks_in", "stale_responses", "read_resp_gaps",
			"duplicates", "naks_seq_out", "out_of_window", "no_mbuf", "rx_bad_icrc" };
		for (unsigned k = 0; k < sizeof(names) / sizeof(names[0]); k++) {
			uint64_t va = 0, vb = 0;
			rnic_roce_counter(A, names[k], &va);
			rnic_roce_counter(B, names[k], &vb);
			fprintf(stderr, "  %-16s A %10lu  B %10lu\n", names[k], (unsigned long)va,
				(unsigned long)vb);
		}
	}
	if (teardown(A, B, ach, bch, l, acq, bcq, apd, bpd) != 0)
		verified = false;
	return verified ? 0 : 1;
}
