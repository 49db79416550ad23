/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * RoCEv2 congestion control end to end over net_ring: two stacks, A sends
 * RDMA Writes to B, and A's transmit fault injector marks CE on a share of
 * its ECN-capable frames, as a congested switch would.
 *
 *   dcqcn_loop        ECN and DCQCN on: B answers the marks with CNPs, A
 *                     cuts its QP's rate and paces its Writes to it; the
 *                     data arrives intact; once marking stops the rate
 *                     climbs back
 *   dcqcn_off         ECN on, DCQCN off: B still sends CNPs (the
 *                     notification point does not depend on DCQCN), A
 *                     counts and ignores them, its rate stays the line rate
 *   ce_unknown_qp     CE-marked packets for a QP B does not have: counted,
 *                     no CNP
 *   ecn_off_no_marks  ECN off: rnic's packets leave Not-ECT, so the
 *                     injector (like a switch) never marks them
 *
 * Every case prints PASS, FAIL (line, what was seen) or SKIP. Waits have
 * hang guards only; nothing is asserted on time or throughput (the rates
 * printed are information).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rte_common.h>
#include <rte_errno.h>

#include "rnic/rnic.h"
#include "rnic/rnic_roce.h"
#include "rnic/rnic_verbs.h"

#define A_IP 0xc0000201u    /* 192.0.2.1 */
#define B_IP 0xc0000202u
#define MiB (1024u * 1024u)
#define BUF_LEN (4 * MiB)
#define CHUNK (64u * 1024u) /* one Write */
#define HANG_S 60

static jmp_buf case_jmp;
static const char *case_name;
static int n_pass, n_fail, n_skip;
enum { R_PASS = 0, R_FAIL = 1, R_SKIP = 2 };

#define CHECK_FILE "test_roce_cc.c"
#define GUARD 0xee

/* the shared helpers include scatter/gather ones this file has no use for */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#include "../common/check.h"
#pragma GCC diagnostic pop

/* --- stacks and QPs ---------------------------------------------------------- */

/* One ring pair and one pair of addresses per case: a stack pair is made
 * and destroyed per case. */
static const char *const rings[] = { "rcc0", "rcc1", "rcc2", "rcc3" };

struct net {
	const char *ring;
	struct rnic_stack *st[2];
	struct ibv_context *ctx[2];
	struct ibv_pd *pd[2];
	struct ibv_cq *cq[2];
	struct ibv_mr *mr[2];
	struct ibv_qp *qp[2];
	uint8_t *buf[2];
};

static void net_down(struct net *n)
{
	for (int i = 0; i < 2; i++) {
		if (n->qp[i] && rnic_destroy_qp(n->qp[i]) != 0)
			fprintf(stderr, "  cleanup: destroy_qp %d\n", i);
		if (n->mr[i] && rnic_dereg_mr(n->mr[i]) != 0)
			fprintf(stderr, "  cleanup: dereg_mr %d\n", i);
		if (n->cq[i]) {
			struct ibv_wc wc[16];
			while (ibv_poll_cq(n->cq[i], 16, wc) > 0)
				;
			if (rnic_destroy_cq(n->cq[i]) != 0)
				fprintf(stderr, "  cleanup: destroy_cq %d\n", i);
		}
		if (n->pd[i] && rnic_dealloc_pd(n->pd[i]) != 0)
			fprintf(stderr, "  cleanup: dealloc_pd %d\n", i);
		if (n->ctx[i] && rnic_close_device(n->ctx[i]) != 0)
			fprintf(stderr, "  cleanup: close_device %d\n", i);
	}
	for (int i = 1; i >= 0; i--)
		if (n->st[i])
			rnic_stack_stop(n->st[i]);
	for (int i = 1; i >= 0; i--)
		if (n->st[i])
			rnic_stack_destroy(n->st[i]);
	for (int i = 0; i < 2; i++)
		free(n->buf[i]);
	memset(n, 0, sizeof(*n));
}

/* Stacks A and B with congestion control @p cc, each with a PD, a CQ, a
 * registered buffer and an RC QP in INIT. */
static void net_up(struct net *n, unsigned idx, const struct rnic_roce_cc_cfg *cc)
{
	n->ring = rings[idx];
	for (int i = 0; i < 2; i++) {
		struct rnic_config c;
		rnic_config_init(&c);
		c.roce_cc = *cc;
		c.n_ports = 1;
		rnic_port_cfg_init(&c.ports[0]);
		snprintf(c.ports[0].ring, sizeof(c.ports[0].ring), "%s.%c", n->ring, i ? 'b' : 'a');
		/* addresses of their own per case: see rings[] */
		c.ports[0].ip = (i ? B_IP : A_IP) + 0x10 * idx;
		c.ports[0].prefix_len = 24;
		c.ports[0].mbufs = 16383;
		n->st[i] = rnic_stack_create(&c);
		CHECK(n->st[i] != NULL, "rnic_stack_create: %s", rte_strerror(rte_errno));
	}
	for (int i = 0; i < 2; i++) {
		CHECK_RC(rnic_stack_start(n->st[i]), 0);
		n->ctx[i] = rnic_open_device(n->st[i]);
		CHECK(n->ctx[i] != NULL, "open_device: %s", strerror(errno));
		n->pd[i] = rnic_alloc_pd(n->ctx[i]);
		CHECK(n->pd[i] != NULL, "alloc_pd: %s", strerror(errno));
		n->cq[i] = rnic_create_cq(n->ctx[i], 1024, NULL, NULL, 0);
		CHECK(n->cq[i] != NULL, "create_cq: %s", strerror(errno));
		n->buf[i] = aligned_alloc(4096, BUF_LEN);
		CHECK(n->buf[i] != NULL, "buffer");
		n->mr[i] = rnic_reg_mr(n->pd[i], n->buf[i], BUF_LEN, IBV_ACCESS_LOCAL_WRITE |
				       IBV_ACCESS_REMOTE_WRITE);
		CHECK(n->mr[i] != NULL, "reg_mr: %s", strerror(errno));
		struct ibv_qp_init_attr qa = {
			.send_cq = n->cq[i], .recv_cq = n->cq[i], .qp_type = IBV_QPT_RC,
			.cap = { .max_send_wr = 256, .max_recv_wr = 16, .max_send_sge = 1,
				 .max_recv_sge = 1 } };
		n->qp[i] = rnic_create_qp_transport(n->pd[i], &qa, RNIC_TRANSPORT_ROCE);
		if (n->qp[i] == NULL && errno == EOPNOTSUPP)
			skip_case("RoCE QPs are not supported by this build");
		CHECK(n->qp[i] != NULL, "create_qp(ROCE): %s", strerror(errno));
		struct ibv_qp_attr at = { .qp_state = IBV_QPS_INIT, .port_num = 1,
					  .qp_access_flags = IBV_ACCESS_REMOTE_WRITE };
		CHECK_RC(rnic_modify_qp(n->qp[i], &at, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
					IBV_QP_PORT | IBV_QP_ACCESS_FLAGS), 0);
	}
}

static void connect_pair(struct net *n)
{
	static const uint32_t psn[2] = { 0xfff000, 0x123 };
	check_roce_rtr_rts(n->qp, n->ctx, psn, 1);
}

/* A RoCE counter of stack @p st. */
static uint64_t ctr(struct rnic_stack *st, const char *name)
{
	uint64_t v = 0;
	CHECK_RC(rnic_roce_counter(st, name, &v), 0);
	return v;
}

static struct rnic_roce_cc_info cc_of(struct ibv_qp *qp)
{
	struct rnic_roce_cc_info info;
	CHECK_RC(rnic_roce_qp_cc(qp, &info), 0);
	return info;
}

/* Write @p len bytes of A's buffer (filled from @p seed) into B's at the
 * same offsets, CHUNK per Write with up to 64 outstanding; wait for every
 * completion and compare B's bytes. @return the seconds it took. */
static double bulk_write(struct net *n, uint32_t len, uint64_t seed)
{
	uint8_t *src = n->buf[0], *dst = n->buf[1];
	fill(src, len, seed);
	memset(dst, 0, len);
	uint32_t posted = 0, done = 0, total = (len + CHUNK - 1) / CHUNK;
	double t0 = now_s();
	while (done < total) {
		while (posted < total && posted - done < 64) {
			uint32_t off = posted * CHUNK, l = RTE_MIN(CHUNK, len - off);
			struct ibv_sge sg = { (uintptr_t)(src + off), l, n->mr[0]->lkey };
			struct ibv_send_wr wr = { .wr_id = posted, .sg_list = &sg, .num_sge = 1,
						  .opcode = IBV_WR_RDMA_WRITE,
						  .send_flags = IBV_SEND_SIGNALED }, *bad;
			wr.wr.rdma.remote_addr = (uintptr_t)(dst + off);
			wr.wr.rdma.rkey = n->mr[1]->rkey;
			CHECK_RC(ibv_post_send(n->qp[0], &wr, &bad), 0);
			posted++;
		}
		struct ibv_wc wc[16];
		int k = ibv_poll_cq(n->cq[0], 16, wc);
		CHECK(k >= 0, "poll_cq %d", k);
		for (int i = 0; i < k; i++) {
			CHECK(wc[i].status == IBV_WC_SUCCESS && wc[i].wr_id == done,
			      "Write %u: status %s wr_id %llu", done,
			      rnic_wc_status_str(wc[i].status), (unsigned long long)wc[i].wr_id);
			done++;
		}
		if (k == 0) {
			CHECK(now_s() - t0 < HANG_S, "%u of %u Writes done in %d s (hang guard)",
			      done, total, HANG_S);
			usleep(50);
		}
	}
	double dt = now_s() - t0;
	CHECK_DATA(dst, src, len, "B's buffer after the Writes");
	return dt;
}

/* The CC configuration of a case: ECN @p ecn, DCQCN @p dcqcn; a 10 Gb/s
 * ceiling and a 100 Mb/s floor keep the cuts visible to the pacing and
 * the transfer short; the rest are the defaults. */
static struct rnic_roce_cc_cfg cc_cfg(bool ecn, bool dcqcn)
{
	struct rnic_config c;
	rnic_config_init(&c);
	c.roce_cc.ecn = ecn;
	c.roce_cc.dcqcn = dcqcn;
	c.roce_cc.max_rate_mbps = 10000;
	c.roce_cc.min_rate_mbps = 100;
	return c.roce_cc;
}



static struct net net_cc;

/* --- cases ------------------------------------------------------------------- */

static void t_dcqcn_loop(void)
{
	struct rnic_roce_cc_cfg cc = cc_cfg(true, true);
	struct net *n = &net_cc;
	net_up(n, 0, &cc);
	connect_pair(n);
	struct rnic_roce_cc_info i0 = cc_of(n->qp[0]);
	CHECK(i0.dcqcn && i0.ecn, "A's QP: dcqcn %d ecn %d", i0.dcqcn, i0.ecn);
	CHECK(i0.rate_kbps == 10000000ull && i0.cuts == 0, "A's QP starts at %llu kb/s, "
	      "%llu cuts", (unsigned long long)i0.rate_kbps, (unsigned long long)i0.cuts);
	/* phase 1: 3 % of A's frames marked on the way */
	CHECK_RC(rnic_stack_fault_set_ce(n->st[0], 0, 0, 3), 0);
	double t1 = bulk_write(n, BUF_LEN, 1);
	struct rnic_roce_cc_info i1 = cc_of(n->qp[0]);
	struct rnic_stack_stats sa;
	rnic_stack_stats(n->st[0], &sa);
	uint64_t ce = ctr(n->st[1], "rx_ce_marked"), cnp = ctr(n->st[1], "tx_cnp"),
		 supp = ctr(n->st[1], "cnp_suppressed"), rx_cnp = ctr(n->st[0], "rx_cnp"),
		 cuts = ctr(n->st[0], "cc_rate_cuts"), waits = ctr(n->st[0], "cc_pace_waits");
	printf("  marked: %.1f MB/s, injector marked %llu, B: rx_ce_marked %llu tx_cnp %llu "
	       "cnp_suppressed %llu; A: rx_cnp %llu cuts %llu pace_waits %llu, rate %llu kb/s "
	       "(target %llu, alpha %.3f)\n", BUF_LEN / t1 / 1e6,
	       (unsigned long long)sa.fault_ce_marked, (unsigned long long)ce,
	       (unsigned long long)cnp, (unsigned long long)supp, (unsigned long long)rx_cnp,
	       (unsigned long long)cuts, (unsigned long long)waits,
	       (unsigned long long)i1.rate_kbps, (unsigned long long)i1.target_kbps,
	       i1.alpha / 16777216.0);
	CHECK(sa.fault_ce_marked > 0, "the injector marked nothing");
	CHECK(ce > 0 && ce <= sa.fault_ce_marked, "B: rx_ce_marked %llu (injector %llu)",
	      (unsigned long long)ce, (unsigned long long)sa.fault_ce_marked);
	/* every mark on a connected QP is answered or suppressed (short of
	 * an mbuf shortage, counted as no_mbuf) */
	CHECK(cnp > 0 && cnp + supp <= ce && cnp + supp + ctr(n->st[1], "no_mbuf") >= ce,
	      "B: tx_cnp %llu + cnp_suppressed %llu vs rx_ce_marked %llu",
	      (unsigned long long)cnp, (unsigned long long)supp, (unsigned long long)ce);
	CHECK(rx_cnp > 0 && rx_cnp <= cnp, "A: rx_cnp %llu, B sent %llu",
	      (unsigned long long)rx_cnp, (unsigned long long)cnp);
	CHECK(cuts == rx_cnp && i1.cuts == cuts, "A: cc_rate_cuts %llu, QP cuts %llu, "
	      "rx_cnp %llu", (unsigned long long)cuts, (unsigned long long)i1.cuts,
	      (unsigned long long)rx_cnp);
	CHECK(ctr(n->st[0], "cnp_ignored") == 0, "A ignored CNPs with DCQCN on");
	CHECK(waits > 0, "A's requester never waited for its rate");
	/* phase 2: no more marks; the rate climbs back (timers and bytes) */
	CHECK_RC(rnic_stack_fault_set_ce(n->st[0], 0, 0, 0), 0);
	double t2 = bulk_write(n, BUF_LEN, 2);
	usleep(20000);
	struct rnic_roce_cc_info i2 = cc_of(n->qp[0]);
	printf("  unmarked: %.1f MB/s, A's rate %llu kb/s (target %llu), increases %llu -> "
	       "%llu, cuts %llu -> %llu\n", BUF_LEN / t2 / 1e6,
	       (unsigned long long)i2.rate_kbps, (unsigned long long)i2.target_kbps,
	       (unsigned long long)i1.increases, (unsigned long long)i2.increases,
	       (unsigned long long)i1.cuts, (unsigned long long)i2.cuts);
	/* CNPs still in flight when the marking stopped may add a cut or two;
	 * after them the rate only rises (timer and byte-counter events) */
	CHECK(i2.increases > i1.increases, "no increase after the marks stopped");
	CHECK(i2.rate_kbps > i1.rate_kbps || i2.rate_kbps == 10000000ull,
	      "rate %llu kb/s after the marks stopped, %llu with them",
	      (unsigned long long)i2.rate_kbps, (unsigned long long)i1.rate_kbps);
	CHECK(i2.cuts - i1.cuts <= 4, "%llu cuts after the marks stopped",
	      (unsigned long long)(i2.cuts - i1.cuts));
	net_down(n);
}

static void t_dcqcn_off(void)
{
	struct rnic_roce_cc_cfg cc = cc_cfg(true, false);
	struct net *n = &net_cc;
	net_up(n, 1, &cc);
	connect_pair(n);
	CHECK_RC(rnic_stack_fault_set_ce(n->st[0], 0, 0, 3), 0);
	bulk_write(n, BUF_LEN, 3);
	struct rnic_roce_cc_info i = cc_of(n->qp[0]);
	uint64_t cnp = ctr(n->st[1], "tx_cnp"), rx_cnp = ctr(n->st[0], "rx_cnp"),
		 ign = ctr(n->st[0], "cnp_ignored");
	printf("  B: rx_ce_marked %llu tx_cnp %llu; A: rx_cnp %llu cnp_ignored %llu\n",
	       (unsigned long long)ctr(n->st[1], "rx_ce_marked"), (unsigned long long)cnp,
	       (unsigned long long)rx_cnp, (unsigned long long)ign);
	CHECK(cnp > 0, "B sent no CNP with DCQCN off (the notification point is independent)");
	CHECK(rx_cnp > 0 && ign == rx_cnp, "A: rx_cnp %llu cnp_ignored %llu",
	      (unsigned long long)rx_cnp, (unsigned long long)ign);
	CHECK(ctr(n->st[0], "cc_rate_cuts") == 0 && ctr(n->st[0], "cc_pace_waits") == 0,
	      "A cut or paced with DCQCN off");
	CHECK(!i.dcqcn && i.rate_kbps == 10000000ull && i.cuts == 0,
	      "A's QP: dcqcn %d rate %llu cuts %llu", i.dcqcn, (unsigned long long)i.rate_kbps,
	      (unsigned long long)i.cuts);
	net_down(n);
}

/* A's QP talks to QP number 0x7777 on B, which does not exist: every
 * Write packet is marked CE, B counts them against no QP and sends no
 * CNP. A keeps retransmitting meanwhile (timeout 14, 7 retries: seconds),
 * so a slow ARP exchange or a descheduled worker only delays the count. */
static void t_ce_unknown_qp(void)
{
	struct rnic_roce_cc_cfg cc = cc_cfg(true, false);
	struct net *n = &net_cc;
	net_up(n, 2, &cc);
	union ibv_gid gid;
	CHECK_RC(rnic_query_gid(n->ctx[1], 1, 1, &gid), 0);
	struct ibv_qp_attr at = {
		.qp_state = IBV_QPS_RTR, .path_mtu = IBV_MTU_1024, .dest_qp_num = 0x7777,
		.rq_psn = 0, .max_dest_rd_atomic = 1, .min_rnr_timer = 12,
		.ah_attr = { .is_global = 1, .port_num = 1,
			     .grh = { .dgid = gid, .sgid_index = 1, .hop_limit = 64 } },
	};
	CHECK_RC(rnic_modify_qp(n->qp[0], &at, RNIC_QP_RTR_MASK), 0);
	at = (struct ibv_qp_attr){ .qp_state = IBV_QPS_RTS, .timeout = 14, .retry_cnt = 7,
				   .rnr_retry = 1, .sq_psn = 0, .max_rd_atomic = 1 };
	CHECK_RC(rnic_modify_qp(n->qp[0], &at, RNIC_QP_RTS_MASK), 0);
	CHECK_RC(rnic_stack_fault_set_ce(n->st[0], 0, 0, 100), 0);
	struct ibv_sge sg = { (uintptr_t)n->buf[0], 8192, n->mr[0]->lkey };
	struct ibv_send_wr wr = { .wr_id = 1, .sg_list = &sg, .num_sge = 1,
				  .opcode = IBV_WR_RDMA_WRITE, .send_flags = IBV_SEND_SIGNALED },
			   *bad;
	wr.wr.rdma.remote_addr = 0x1000;
	wr.wr.rdma.rkey = 0x1234;
	CHECK_RC(ibv_post_send(n->qp[0], &wr, &bad), 0);
	/* the 8 packets of the Write, at least once */
	double t0 = now_s();
	while (ctr(n->st[1], "rx_unknown_qp") < 8 && now_s() - t0 < HANG_S)
		usleep(1000);
	struct ibv_wc wc;
	CHECK(ibv_poll_cq(n->cq[0], 1, &wc) == 0 || wc.status == IBV_WC_RETRY_EXC_ERR,
	      "A's Write to no QP completed with %s", rnic_wc_status_str(wc.status));
	/* stop A's retransmissions, let the last ones land, then count */
	struct ibv_qp_attr err = { .qp_state = IBV_QPS_ERR };
	CHECK_RC(rnic_modify_qp(n->qp[0], &err, IBV_QP_STATE), 0);
	usleep(50000);
	uint64_t ce = ctr(n->st[1], "rx_ce_marked"), noqp = ctr(n->st[1], "ce_no_qp"),
		 unk = ctr(n->st[1], "rx_unknown_qp");
	printf("  B: rx_pkts %llu rx_ce_marked %llu ce_no_qp %llu rx_unknown_qp %llu tx_cnp %llu\n",
	       (unsigned long long)ctr(n->st[1], "rx_pkts"), (unsigned long long)ce,
	       (unsigned long long)noqp, (unsigned long long)unk,
	       (unsigned long long)ctr(n->st[1], "tx_cnp"));
	CHECK(ce >= 8 && noqp == ce && unk >= noqp, "B: rx_ce_marked %llu ce_no_qp %llu "
	      "rx_unknown_qp %llu", (unsigned long long)ce, (unsigned long long)noqp,
	      (unsigned long long)unk);
	CHECK(ctr(n->st[1], "tx_cnp") == 0 && ctr(n->st[0], "rx_cnp") == 0,
	      "a CNP for a CE mark on an unknown QP");
	net_down(n);
}

/* ECN off: rnic's RoCE packets leave Not-ECT; a switch never marks those
 * (the injector neither), so nothing reaches the notification point. */
static void t_ecn_off_no_marks(void)
{
	struct rnic_roce_cc_cfg cc = cc_cfg(false, true);
	struct net *n = &net_cc;
	net_up(n, 3, &cc);
	connect_pair(n);
	CHECK_RC(rnic_stack_fault_set_ce(n->st[0], 0, 0, 100), 0);
	bulk_write(n, MiB, 4);
	struct rnic_stack_stats sa;
	rnic_stack_stats(n->st[0], &sa);
	CHECK(sa.fault_ce_marked == 0 && ctr(n->st[1], "rx_ce_marked") == 0 &&
	      ctr(n->st[1], "tx_cnp") == 0, "ECN off: injector marked %llu, B saw %llu CE, "
	      "sent %llu CNPs", (unsigned long long)sa.fault_ce_marked,
	      (unsigned long long)ctr(n->st[1], "rx_ce_marked"),
	      (unsigned long long)ctr(n->st[1], "tx_cnp"));
	struct rnic_roce_cc_info i = cc_of(n->qp[0]);
	CHECK(i.dcqcn && !i.ecn && i.cuts == 0 && i.rate_kbps == 10000000ull,
	      "A's QP: dcqcn %d ecn %d cuts %llu rate %llu", i.dcqcn, i.ecn,
	      (unsigned long long)i.cuts, (unsigned long long)i.rate_kbps);
	net_down(n);
}

/* --- main ---------------------------------------------------------------------- */

static const struct { const char *name; void (*fn)(void); } cases[] = {
	{ "dcqcn_loop", t_dcqcn_loop },
	{ "dcqcn_off", t_dcqcn_off },
	{ "ce_unknown_qp", t_ce_unknown_qp },
	{ "ecn_off_no_marks", t_ecn_off_no_marks },
};

int main(int argc, char **argv)
{
	const char *filter = argc > 1 ? argv[1] : NULL;
	setvbuf(stdout, NULL, _IOLBF, 0);
	struct rnic_config c;
	if (check_eal_init(argv[0], &c, 2) != 0)
		return 1;
	for (size_t i = 0; i < RTE_DIM(rings); i++)
		if (rnic_ring_pair(rings[i], 1) != 0) {
			fprintf(stderr, "ring pair %s failed\n", rings[i]);
			return 1;
		}
	for (size_t i = 0; i < RTE_DIM(cases); i++) {
		if (filter != NULL && strstr(cases[i].name, filter) == NULL)
			continue;
		case_name = cases[i].name;
		int r = setjmp(case_jmp);
		if (r == 0) {
			cases[i].fn();
			printf("  PASS %s\n", case_name);
			n_pass++;
			continue;
		}
		net_down(&net_cc);
		if (r == R_SKIP)
			n_skip++;
		else
			n_fail++;
	}
	printf("roce cc: %d passed, %d failed, %d skipped\n", n_pass, n_fail, n_skip);
	if (n_fail)
		return 1;
	return n_pass == 0 && n_skip > 0 ? 77 : 0;
}
