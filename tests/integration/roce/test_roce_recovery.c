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
 * Case arp_hold (run first, while neither stack knows the other's MAC): A
 * posts 64 one-packet Writes at once. ARP holds 16 frames per unresolved
 * address and drops the rest; the requester must send one packet, wait for
 * the reply and then send the others. Expected: every Write on the wire
 * once, no frame dropped as arp_pending_full, no ACK timeout and no
 * retransmission, arp_waits counted. Before the fix 48 of the 64 were
 * dropped at ARP and came back only after the ACK timeout (4.3 s here).
 *
 * Exit 0 when every check passed, 1 otherwise.
 */
#include <errno.h>
#include <setjmp.h>
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

#define READ_LEN (128u * 1024u)   /* within the 256-packet send window */

#include "tap.h"

/* A on rrc0.a, B on rrc1.b, joined by the tap below; never started */
static struct tpair R = { .ring = { "rrc0", "rrc1" }, .tapped = true, .inline_drive = true,
			  .workers = 1, .mbufs = 8191,
			  .ip = { { 0xc0000201u }, { 0xc0000202u } } };

/* What the tap saw and does. */
static struct {
	bool drop_read_resps;       /* drop B's Read Responses ... */
	bool ack_passed;            /* ... until an ACKNOWLEDGE of B passed */
	unsigned read_reqs_after;   /* A's Read Requests after that ACK */
	unsigned writes;            /* A's RDMA WRITE ONLY packets */
	unsigned resps_dropped;
} tap;

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

static void count_drop(const char *cause, uint64_t n, void *arg)
{
	if (strcmp(cause, "arp_pending_full") == 0)
		*(uint64_t *)arg += n;
}

#define HOLD_WRITES 64u

static void t_arp_hold(void)
{
	objs_make(2 * HOLD_WRITES, 4096, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE,
		  HOLD_WRITES);
	memset(O.buf[0], 0, 4096);
	memset(O.buf[1], 0, 4096);
	const uint32_t psn[2] = { 0x1000, 0x2000 };
	/* local ACK timeout 20 (4.3 s): a lost packet would show as a timeout */
	tpair_roce_connect(O.qp, R.ctx, psn, 1, IBV_ACCESS_REMOTE_WRITE, 20, 7);
	uint64_t held_before = 0;
	rnic_stack_drops_each(R.st[0], count_drop, &held_before);
	memset(&tap, 0, sizeof(tap));
	struct ibv_sge sge[HOLD_WRITES];
	struct ibv_send_wr wr[HOLD_WRITES];
	for (unsigned i = 0; i < HOLD_WRITES; i++) {
		O.buf[0][i * 8] = (uint8_t)(i + 1);
		sge[i] = (struct ibv_sge){ (uintptr_t)O.buf[0] + i * 8, 8, O.mr[0]->lkey };
		wr[i] = (struct ibv_send_wr){ .wr_id = i, .sg_list = &sge[i], .num_sge = 1,
					      .opcode = IBV_WR_RDMA_WRITE,
					      .send_flags = IBV_SEND_SIGNALED,
					      .next = i + 1 < HOLD_WRITES ? &wr[i + 1] : NULL };
		wr[i].wr.rdma.remote_addr = (uintptr_t)O.buf[1] + i * 8;
		wr[i].wr.rdma.rkey = O.mr[1]->rkey;
	}
	struct ibv_send_wr *bad = NULL;
	CHECK_RC(ibv_post_send(O.qp[0], wr, &bad), 0);
	struct ibv_wc wc[HOLD_WRITES];
	int n = wait_wc(O.cq[0], wc, (int)HOLD_WRITES);
	CHECK(n == (int)HOLD_WRITES, "%d of %u completions (hang guard %d s)", n, HOLD_WRITES,
	      HANG_S);
	for (int i = 0; i < n; i++)
		CHECK(wc[i].status == IBV_WC_SUCCESS && wc[i].wr_id == (uint64_t)i,
		      "completion %d: wr_id %llu status %s", i, (unsigned long long)wc[i].wr_id,
		      rnic_wc_status_str(wc[i].status));
	for (unsigned i = 0; i < HOLD_WRITES; i++)
		CHECK(O.buf[1][i * 8] == (uint8_t)(i + 1), "Write %u not placed", i);
	uint64_t held = 0, timeouts = 0, retrans = 0, waits = 0;
	rnic_stack_drops_each(R.st[0], count_drop, &held);
	rnic_roce_counter(R.st[0], "timeouts", &timeouts);
	rnic_roce_counter(R.st[0], "retransmits", &retrans);
	rnic_roce_counter(R.st[0], "arp_waits", &waits);
	printf("arp_hold: %u Writes on the wire, arp_pending_full %llu, timeouts %llu, "
	       "retransmits %llu, arp_waits %llu\n", tap.writes,
	       (unsigned long long)(held - held_before), (unsigned long long)timeouts,
	       (unsigned long long)retrans, (unsigned long long)waits);
	CHECK(held == held_before, "%llu frames dropped waiting for ARP",
	      (unsigned long long)(held - held_before));
	CHECK(timeouts == 0 && retrans == 0, "%llu ACK timeouts, %llu retransmissions",
	      (unsigned long long)timeouts, (unsigned long long)retrans);
	CHECK(tap.writes == HOLD_WRITES, "%u Writes on the wire, expected %u", tap.writes,
	      HOLD_WRITES);
	CHECK(waits > 0, "arp_waits 0: the requester never waited for ARP");
}

static void t_read_gap(void)
{
	objs_make(64, READ_LEN + 4096,
		  IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ, 16);
	uint8_t *abuf = O.buf[0], *bbuf = O.buf[1];
	memset(abuf, 0, READ_LEN + 4096);
	for (uint32_t i = 0; i < READ_LEN + 4096; i++)
		bbuf[i] = (uint8_t)(i * 7 + i / 251);
	struct ibv_mr *amr = O.mr[0], *bmr = O.mr[1];
	struct ibv_qp *aq = O.qp[0];
	struct ibv_cq *acq = O.cq[0];
	/* PSNs near the 24-bit wrap: the Read crosses it; local ACK timeout
	 * 20 (4.3 s): no timeout in the case */
	const uint32_t psn[2] = { 0xffff80, 0x000100 };
	tpair_roce_connect(O.qp, R.ctx, psn, 1, IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ,
			   20, 7);

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
	CHECK_RC(ibv_post_send(aq, &r, &bad), 0);
	struct ibv_wc wc[2] = { 0 };
	int n = wait_wc(acq, wc, 2);
	CHECK(n == 2, "%d of 2 completions (hang guard %d s)", n, HANG_S);
	CHECK((wc[0].wr_id == 1 && wc[0].status == IBV_WC_SUCCESS &&
			wc[0].byte_len == READ_LEN),
	      "Read: wr_id %llu status %s byte_len %u", (unsigned long long)wc[0].wr_id,
	      rnic_wc_status_str(wc[0].status), wc[0].byte_len);
	CHECK((wc[1].wr_id == 2 && wc[1].status == IBV_WC_SUCCESS),
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
	uint64_t gaps = 0, acked_skipped = 0;
	rnic_roce_counter(R.st[0], "read_resp_gaps", &gaps);
	rnic_roce_counter(R.st[0], "acked_skipped", &acked_skipped);
	printf("read_gap: %u Read Responses dropped, %u Read Requests after the ACK, "
	       "Write sent %u times, read_resp_gaps %llu, acked_skipped %llu\n",
	       tap.resps_dropped, tap.read_reqs_after, tap.writes, (unsigned long long)gaps,
	       (unsigned long long)acked_skipped);
	CHECK(gaps == 1, "read_resp_gaps %llu, expected 1", (unsigned long long)gaps);
	CHECK(acked_skipped >= 1, "acked_skipped %llu: the rewind never met the acknowledged "
	      "Write", (unsigned long long)acked_skipped);

}

int main(int argc, char **argv)
{
	(void)argc;
	setvbuf(stdout, NULL, _IOLBF, 0);
	struct rnic_config c;
	struct tpair *pairs[] = { &R };
	if (tpair_init(argv[0], &c, 2, pairs, 1) != 0)
		return 1;
	if (tpair_up(&R, &c) != 0) {
		fprintf(stderr, "stacks: %s\n", R.why);
		return 1;
	}
	double t0 = now_s();
	case_run("arp_hold", t_arp_hold, objs_free);   /* first: ARP unresolved */
	memset(&tap, 0, sizeof(tap));
	case_run("read_gap", t_read_gap, objs_free);
	tpair_down(&R);
	rte_eal_cleanup();
	return case_summary("roce_recovery", now_s() - t0);
}
