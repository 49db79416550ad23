/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * RoCE requester recovery, one chosen loss at a time (issue 8: the lossy
 * soak ended in IBV_WC_RETRY_EXC_ERR behind storms of its own making).
 *
 * Two stacks, A (requester) and B (responder), are never started: this
 * thread runs one loop of each worker in turn (rnic_worker_poll()), and
 * between them a tap moves the frames from the ring one transmits into to
 * the ring the other receives from, reading every RoCE frame and dropping
 * the ones a case chooses. Nothing else runs, so a case is the same
 * sequence of packets every time.
 *
 *   A: rrc0.a (transmits into rrc0's 'a' ring, receives from its 'b' ring)
 *   B: rrc1.b (transmits into rrc1's 'b' ring, receives from its 'a' ring)
 *
 * Case read_gap: A posts a 128 KiB RDMA Read (128 responses at path MTU
 * 1024, two Read Requests of 64) and behind it a 1-byte RDMA Write. The
 * tap drops every Read Response until B's ACK of the Write has passed, so
 * A learns from an ACK beyond the Read that its responses were lost (IBA
 * 9.7.5.1.1). Expected: both complete successfully, in order, the Read
 * with B's bytes; after that ACK A asks for the Read once per chunk (2 Read
 * Requests), not again at each response it then receives; the Write, which
 * B acknowledged, is on the wire once. Before the fix each response made A
 * ask again from the next PSN and resend the Write behind it.
 *
 * Exit 0 when every check passed, 1 otherwise.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rte_mbuf.h>
#include <rte_ring.h>

#include "rnic/rnic.h"
#include "rnic/rnic_roce.h"
#include "rnic/rnic_verbs.h"
#include "roce/opcode.h"
#include "roce/roce_wire.h"

#define A_IP 0xc0000201u
#define B_IP 0xc0000202u
#define READ_LEN (128u * 1024u)   /* within the 256-packet send window */
#define HANG_S 30               /* hang guard of a wait, not a time check */
#define BTH_OFF (14 + 20 + 8)   /* Ethernet, IPv4 without options, UDP */

static struct rnic_stack *SA, *SB;
static struct rte_ring *a_tx, *a_rx, *b_tx, *b_rx;
static int failures;

#define CHECK(cond, ...)                                                    \
	do {                                                                \
		if (!(cond)) {                                              \
			fprintf(stderr, "FAIL (test_roce_recovery.c:%d): ", __LINE__); \
			fprintf(stderr, __VA_ARGS__);                       \
			fputc('\n', stderr);                                \
			failures++;                                         \
		}                                                           \
	} while (0)

/* What the tap saw and does. */
static struct {
	bool drop_read_resps;       /* drop B's Read Responses ... */
	bool ack_passed;            /* ... until an ACKNOWLEDGE of B passed */
	unsigned read_reqs_after;   /* A's Read Requests after that ACK */
	unsigned writes;            /* A's RDMA WRITE ONLY packets */
	unsigned resps_dropped;
} tap;

/* The BTH opcode of a RoCEv2 frame, or -1 for anything else (ARP). */
static int roce_opcode(const struct rte_mbuf *m)
{
	const uint8_t *f = rte_pktmbuf_mtod(m, const uint8_t *);
	if (rte_pktmbuf_data_len(m) < BTH_OFF + 12 || f[12] != 0x08 || f[13] != 0x00 ||
	    f[14] != 0x45 || f[23] != 17)
		return -1;
	if (((unsigned)f[36] << 8 | f[37]) != RNIC_ROCE_UDP_PORT)
		return -1;
	return f[BTH_OFF];
}

/* Move every frame from @p from to @p to; @p from_a: A is the sender.
 * @return frames moved or dropped. */
static unsigned tap_move(struct rte_ring *from, struct rte_ring *to, bool from_a)
{
	struct rte_mbuf *m[64], *keep[64];
	unsigned n = rte_ring_dequeue_burst(from, (void **)m, 64, NULL), k = 0;
	for (unsigned i = 0; i < n; i++) {
		int op = roce_opcode(m[i]);
		if (from_a) {
			tap.read_reqs_after += tap.ack_passed && op == RNIC_ROCE_OP_RC_READ_REQUEST;
			tap.writes += op == RNIC_ROCE_OP_RC_WRITE_ONLY;
		} else if (op >= RNIC_ROCE_OP_RC_READ_RESPONSE_FIRST &&
			   op <= RNIC_ROCE_OP_RC_READ_RESPONSE_ONLY && tap.drop_read_resps &&
			   !tap.ack_passed) {
			tap.resps_dropped++;
			rte_pktmbuf_free(m[i]);
			continue;
		} else if (op == RNIC_ROCE_OP_RC_ACKNOWLEDGE && tap.drop_read_resps) {
			tap.ack_passed = true;
		}
		keep[k++] = m[i];
	}
	unsigned done = rte_ring_enqueue_burst(to, (void **)keep, k, NULL);
	for (unsigned i = done; i < k; i++)   /* a full ring is a lost frame */
		rte_pktmbuf_free(keep[i]);
	return n;
}

/* One step of the world: A's loop, the tap, B's loop, the tap. */
static void step(void)
{
	rnic_worker_poll(SA, 0);
	tap_move(a_tx, b_rx, true);
	rnic_worker_poll(SB, 0);
	tap_move(b_tx, a_rx, false);
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Drive both stacks until @p cq holds @p n completions (into @p wc).
 * @return the completions taken. */
static int wait_wc(struct ibv_cq *cq, struct ibv_wc *wc, int n)
{
	int got = 0;
	double t0 = now_s();
	while (got < n && now_s() - t0 < HANG_S) {
		step();
		int k = ibv_poll_cq(cq, n - got, wc + got);
		if (k > 0)
			got += k;
	}
	return got;
}

/* RESET -> INIT -> RTR (towards @p peer's GID 1 and QP @p y) -> RTS.
 * @return 0 or the failing call's -errno. */
static int connect_qp(struct ibv_qp *x, struct ibv_context *peer, struct ibv_qp *y,
		      uint32_t rq_psn, uint32_t sq_psn)
{
	struct ibv_qp_attr init = {
		.qp_state = IBV_QPS_INIT, .pkey_index = 0, .port_num = 1,
		.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ };
	int rc = rnic_modify_qp(x, &init, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
				IBV_QP_ACCESS_FLAGS);
	union ibv_gid gid;
	if (rc == 0)
		rc = rnic_query_gid(peer, 1, 1, &gid);
	if (rc != 0)
		return rc;
	struct ibv_qp_attr rtr = {
		.qp_state = IBV_QPS_RTR,
		.path_mtu = IBV_MTU_1024,
		.dest_qp_num = y->qp_num,
		.rq_psn = rq_psn,
		.max_dest_rd_atomic = 16,
		.min_rnr_timer = 12,
		.ah_attr = { .is_global = 1, .port_num = 1,
			     .grh = { .dgid = gid, .sgid_index = 1, .hop_limit = 64 } },
	};
	rc = rnic_modify_qp(x, &rtr, RNIC_QP_RTR_MASK);
	if (rc != 0)
		return rc;
	struct ibv_qp_attr rts = {
		.qp_state = IBV_QPS_RTS,
		.timeout = 20,     /* 4.3 s: no local ACK timeout in a case */
		.retry_cnt = 7,
		.rnr_retry = 7,
		.sq_psn = sq_psn,
		.max_rd_atomic = 16,
	};
	return rnic_modify_qp(x, &rts, RNIC_QP_RTS_MASK);
}

static void case_read_gap(struct ibv_context *ca, struct ibv_context *cb)
{
	struct ibv_pd *apd = rnic_alloc_pd(ca), *bpd = rnic_alloc_pd(cb);
	struct ibv_cq *acq = rnic_create_cq(ca, 64, NULL, NULL, 0);
	struct ibv_cq *bcq = rnic_create_cq(cb, 64, NULL, NULL, 0);
	uint8_t *abuf = aligned_alloc(4096, READ_LEN + 4096);
	uint8_t *bbuf = aligned_alloc(4096, READ_LEN + 4096);
	CHECK(apd && bpd && acq && bcq && abuf && bbuf, "setup failed");
	if (!(apd && bpd && acq && bcq && abuf && bbuf))
		return;
	memset(abuf, 0, READ_LEN + 4096);
	for (uint32_t i = 0; i < READ_LEN + 4096; i++)
		bbuf[i] = (uint8_t)(i * 7 + i / 251);
	int acc = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
	struct ibv_mr *amr = rnic_reg_mr(apd, abuf, READ_LEN + 4096, acc);
	struct ibv_mr *bmr = rnic_reg_mr(bpd, bbuf, READ_LEN + 4096, acc);
	struct ibv_qp_init_attr qa = { .qp_type = IBV_QPT_RC, .send_cq = acq, .recv_cq = acq,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16, .max_send_sge = 1,
			 .max_recv_sge = 1 } };
	struct ibv_qp *aq = rnic_create_qp_transport(apd, &qa, RNIC_TRANSPORT_ROCE);
	qa.send_cq = qa.recv_cq = bcq;
	struct ibv_qp *bq = rnic_create_qp_transport(bpd, &qa, RNIC_TRANSPORT_ROCE);
	CHECK(amr && bmr && aq && bq, "MRs or QPs not made");
	if (!(amr && bmr && aq && bq))
		return;
	/* PSNs near the 24-bit wrap: the Read crosses it */
	int rc = connect_qp(aq, cb, bq, 0x000100, 0xffff80);
	if (rc == 0)
		rc = connect_qp(bq, ca, aq, 0xffff80, 0x000100);
	CHECK(rc == 0, "connecting: %s", strerror(-rc));
	if (rc != 0)
		return;

	tap.drop_read_resps = true;
	struct ibv_sge rs = { (uintptr_t)abuf, READ_LEN, amr->lkey };
	struct ibv_sge ws = { (uintptr_t)abuf + READ_LEN, 1, amr->lkey };
	struct ibv_send_wr w = { .wr_id = 2, .sg_list = &ws, .num_sge = 1,
				 .opcode = IBV_WR_RDMA_WRITE, .send_flags = IBV_SEND_SIGNALED };
	struct ibv_send_wr r = { .wr_id = 1, .next = &w, .sg_list = &rs, .num_sge = 1,
				 .opcode = IBV_WR_RDMA_READ, .send_flags = IBV_SEND_SIGNALED };
	r.wr.rdma.remote_addr = (uintptr_t)bbuf;
	r.wr.rdma.rkey = bmr->rkey;
	w.wr.rdma.remote_addr = (uintptr_t)bbuf + READ_LEN + 100;
	w.wr.rdma.rkey = bmr->rkey;
	abuf[READ_LEN] = 0x5a;
	struct ibv_send_wr *bad = NULL;
	rc = ibv_post_send(aq, &r, &bad);
	CHECK(rc == 0, "post: %s", strerror(rc));
	struct ibv_wc wc[2] = { 0 };
	int n = rc == 0 ? wait_wc(acq, wc, 2) : 0;
	CHECK(n == 2, "%d of 2 completions (hang guard %d s)", n, HANG_S);
	CHECK(n < 1 || (wc[0].wr_id == 1 && wc[0].status == IBV_WC_SUCCESS &&
			wc[0].byte_len == READ_LEN),
	      "Read: wr_id %llu status %s byte_len %u", (unsigned long long)wc[0].wr_id,
	      rnic_wc_status_str(wc[0].status), wc[0].byte_len);
	CHECK(n < 2 || (wc[1].wr_id == 2 && wc[1].status == IBV_WC_SUCCESS),
	      "Write: wr_id %llu status %s", (unsigned long long)wc[1].wr_id,
	      rnic_wc_status_str(wc[1].status));
	CHECK(memcmp(abuf, bbuf, READ_LEN) == 0, "the Read's sink differs from the source");
	CHECK(bbuf[READ_LEN + 100] == 0x5a, "the Write was not placed");
	CHECK(tap.resps_dropped > 0 && tap.ack_passed,
	      "the tap dropped %u Read Responses, ACK passed: %d: the loss never happened",
	      tap.resps_dropped, tap.ack_passed);
	CHECK(tap.read_reqs_after == READ_LEN / 1024 / 64,
	      "%u Read Requests after the ACK beyond the Read, expected %u (one per chunk)",
	      tap.read_reqs_after, READ_LEN / 1024 / 64);
	CHECK(tap.writes == 1, "the acknowledged Write went out %u times", tap.writes);
	uint64_t gaps = 0, skipped = 0;
	rnic_roce_counter(SA, "read_resp_gaps", &gaps);
	rnic_roce_counter(SA, "acked_skipped", &skipped);
	printf("read_gap: %u Read Responses dropped, %u Read Requests after the ACK, "
	       "Write sent %u times, read_resp_gaps %llu, acked_skipped %llu\n",
	       tap.resps_dropped, tap.read_reqs_after, tap.writes, (unsigned long long)gaps,
	       (unsigned long long)skipped);
	CHECK(gaps == 1, "read_resp_gaps %llu, expected 1", (unsigned long long)gaps);
	CHECK(skipped >= 1, "acked_skipped %llu: the rewind never met the acknowledged Write",
	      (unsigned long long)skipped);

	CHECK(rnic_destroy_qp(aq) == 0 && rnic_destroy_qp(bq) == 0, "destroy QPs");
	CHECK(rnic_dereg_mr(amr) == 0 && rnic_dereg_mr(bmr) == 0, "dereg MRs");
	CHECK(rnic_destroy_cq(acq) == 0 && rnic_destroy_cq(bcq) == 0, "destroy CQs");
	CHECK(rnic_dealloc_pd(apd) == 0 && rnic_dealloc_pd(bpd) == 0, "dealloc PDs");
	free(abuf);
	free(bbuf);
}

int main(int argc, char **argv)
{
	(void)argc;
	struct rnic_config c[2];
	rnic_config_init(&c[0]);
	snprintf(c[0].eal_args[c[0].n_eal_args++], 128, "--no-huge");
	snprintf(c[0].eal_args[c[0].n_eal_args++], 128, "-m");
	snprintf(c[0].eal_args[c[0].n_eal_args++], 128, "512");
	snprintf(c[0].eal_args[c[0].n_eal_args++], 128, "--log-level=lib.*:warning");
	if (rnic_eal_init(argv[0], &c[0], 2) != 0 || rnic_ring_pair("rrc0", 1) != 0 ||
	    rnic_ring_pair("rrc1", 1) != 0) {
		fprintf(stderr, "EAL or ring pairs failed\n");
		return 1;
	}
	a_tx = rnic_ring_pair_tx("rrc0.a", 0);
	a_rx = rnic_ring_pair_tx("rrc0.b", 0);   /* what the unused .b end "sends" */
	b_tx = rnic_ring_pair_tx("rrc1.b", 0);
	b_rx = rnic_ring_pair_tx("rrc1.a", 0);
	if (!a_tx || !a_rx || !b_tx || !b_rx) {
		fprintf(stderr, "ring lookup failed\n");
		return 1;
	}
	c[0].n_eal_args = 0;
	c[1] = c[0];
	for (int s = 0; s < 2; s++) {
		c[s].n_ports = 1;
		c[s].workers = 1;
		struct rnic_port_cfg *p = &c[s].ports[0];
		rnic_port_cfg_init(p);
		snprintf(p->ring, sizeof(p->ring), s ? "rrc1.b" : "rrc0.a");
		p->ip = s ? B_IP : A_IP;
		p->prefix_len = 24;
		p->mbufs = 8191;
	}
	SA = rnic_stack_create(&c[0]);
	SB = rnic_stack_create(&c[1]);
	if (!SA || !SB) {
		fprintf(stderr, "stacks not made\n");
		return 1;
	}
	struct ibv_context *ca = rnic_open_device(SA), *cb = rnic_open_device(SB);
	if (!ca || !cb) {
		fprintf(stderr, "devices not opened\n");
		return 1;
	}
	case_read_gap(ca, cb);
	CHECK(rnic_close_device(ca) == 0 && rnic_close_device(cb) == 0, "close devices");
	rnic_stack_destroy(SA);
	rnic_stack_destroy(SB);
	rte_eal_cleanup();
	printf("%s\n", failures ? "FAIL" : "PASS");
	return failures ? 1 : 0;
}
