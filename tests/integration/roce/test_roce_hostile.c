/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * RoCE against a hostile peer (issue 27: "a hostile network gets nothing"):
 * a tap between two stacks rewrites or forges single frames, and each case
 * checks that rnic drops, NAKs or fails the QP as the IBA says, counts it,
 * and never completes work with IBV_WC_SUCCESS that the peer cut short.
 *
 * As in test_roce_recovery.c, stacks A (requester) and B (responder) are
 * never started: this thread runs one loop of each worker in turn and the
 * tap moves the frames between their rings, so every case is the same
 * sequence of packets each run. A rewritten frame gets a new ICRC: what is
 * tested is the transport's checks, not the ICRC's.
 *
 *   A: rho0.a (transmits into rho0's 'a' ring, receives from its 'b' ring)
 *   B: rho1.b (transmits into rho1's 'b' ring, receives from its 'a' ring)
 *
 * Completer (A), Read Responses and ACKs that B sends, rewritten:
 *   read_middle_no_first  FIRST -> MIDDLE: BAD_RESP_ERR, bad_resps
 *   read_cut_short        the first MIDDLE -> LAST: BAD_RESP_ERR
 *   read_only_for_first   FIRST -> ONLY: BAD_RESP_ERR
 *   read_restart_ok       one MIDDLE of a 2-chunk Read lost: the Read is
 *                         asked again from inside its chunk and completes
 *   nak_reserved_code     B's ACK -> NAK code 7 (reserved): BAD_RESP_ERR,
 *                         bad_nak_codes
 *   ack_never_sent        B's ACK moved 10 PSNs past anything A sent:
 *                         dropped (stale_responses), nothing completes
 *                         until the real ACK
 * Responder (B), requests that A sends, rewritten or replayed:
 *   dup_read_ghost        a replayed Read Request at a PSN of no Read, and
 *                         one asking more than the Read had: no response,
 *                         dup_read_rejects; the true duplicate is answered
 *   write_huge_dma_len    WRITE FIRST's RETH DMA length 2^31 + 2048: NAK
 *                         invalid request (not an R_Key check), bad_dma_len
 *   psn_far_ahead         8 Writes 1000 PSNs ahead: one sequence NAK
 *   write_zero_len,       WRITE ONLY of 8 bytes whose RETH says 0, or whose
 *   write_bad_pad         PadCount says 3: NAK invalid request, nothing
 *                         written
 *   atomic_ack_psn        B's Atomic ACK moved one PSN on: dropped
 *                         (stale_responses), the atomic answered again from
 *                         B's replay cache, the add done once
 *   ud_op_to_rc           a UD SEND ONLY to the RC QP: rx_wrong_service
 *   inv_type1             Send with Invalidate of a type 1 window: NAK
 *                         invalid request, inv_refused
 *   inv_other_qp          ... of a type 2 window bound to another QP of the
 *                         PD: refused, the window still works
 * Verbs (lib/verbs/qp.c, both transports):
 *   reset_live            RoCE RTS -> RESET with work outstanding: no
 *                         completion, the QP connects again and works
 *   reset_live_iwarp      the same for an iWARP QP through the CM
 * Address vector (also in IPv6, RNIC_TEST_IPV6=1):
 *   av_rc, av_ud          the AV's / AH's hop limit (IPv4: TTL) and flow
 *                         label on the frames, hop limit 0 meaning 64
 *
 * Exit 0 when every check passed, 1 otherwise.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rte_ip.h>
#include <rte_mbuf.h>
#include <rte_udp.h>
#include <rte_ring.h>

#include "rnic/rnic.h"
#include "rnic/rnic_roce.h"
#include "rnic/rnic_verbs.h"
#include "roce/icrc.h"
#include "roce/opcode.h"
#include "roce/roce_wire.h"

#define L2_LEN 14
#define PMTU 1024u
#define KiB 1024u

#include "tap.h"

static struct tpair R = { .ring = { "rho0", "rho1" }, .tapped = true, .inline_drive = true,
			  .workers = 1, .mbufs = 8191,
			  .ip = { { 0xc0000301u }, { 0xc0000302u } } };

static bool ipv6;   /* RNIC_TEST_IPV6=1: IPv6-only stacks, the av_ cases only */

/* What the tap does to one frame. */
enum mut {
	MUT_NONE,
	MUT_FIRST_TO_MIDDLE,    /* B's first READ RESPONSE FIRST */
	MUT_MIDDLE_TO_LAST,     /* B's first READ RESPONSE MIDDLE */
	MUT_FIRST_TO_ONLY,      /* B's first READ RESPONSE FIRST */
	MUT_DROP_MIDDLE,        /* B's READ RESPONSE MIDDLE of PSN drop_psn: dropped once */
	MUT_ACK_RESERVED_NAK,   /* B's first ACKNOWLEDGE: syndrome NAK code 7 */
	MUT_ACK_FUTURE_PSN,     /* B's first ACKNOWLEDGE: PSN + 10 */
	MUT_WRITE_HUGE_LEN,     /* A's first RDMA WRITE FIRST: DMA length 2^31 + 2048 */
	MUT_DROP_A,             /* every IPv4 frame A sends: dropped */
	MUT_ATMACK_PSN,         /* B's first ATOMIC ACKNOWLEDGE: PSN + 1 */
	MUT_WRITE_ZERO_LEN,     /* A's first WRITE ONLY: RETH DMA length 0, payload kept */
	MUT_WRITE_PAD,          /* A's first WRITE ONLY (8 bytes): PadCount 3 */
};

static struct {
	enum mut mut;
	bool done;                  /* the mutation happened */
	uint32_t drop_psn;
	struct rte_mbuf *read_req;  /* a copy of A's first Read Request */
	struct rte_mbuf *write_only;   /* a copy of A's first WRITE ONLY */
	unsigned b_read_resps;      /* Read Responses B sent */
	unsigned b_seq_naks;        /* sequence NAKs B sent */
	unsigned b_naks;            /* NAKs of any code B sent */
	uint8_t b_nak_code;         /* the code of B's last NAK */
	unsigned a_frames;          /* RoCEv2 frames A sent (IPv4 or IPv6) */
	uint8_t a_hops;             /* the TTL / hop limit of A's last one */
	uint32_t a_flow;            /* the IPv6 flow label of A's last one */
	bool a_cksum_ok;            /* its IPv4 header checksum was right */
} tap;

static uint8_t *frame(struct rte_mbuf *m) { return rte_pktmbuf_mtod(m, uint8_t *); }

static uint32_t bth_psn(struct rte_mbuf *m)
{
	const uint8_t *b = frame(m) + BTH_OFF;
	return (uint32_t)b[9] << 16 | (uint32_t)b[10] << 8 | b[11];
}

static void set_bth_psn(struct rte_mbuf *m, uint32_t psn)
{
	uint8_t *b = frame(m) + BTH_OFF;
	b[9] = (uint8_t)(psn >> 16);
	b[10] = (uint8_t)(psn >> 8);
	b[11] = (uint8_t)psn;
}

static void put_be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

/* Insert (@p delta 4) or remove (-4) an AETH's 4 bytes right after the
 * BTH, the payload kept: IPv4 and UDP lengths and the IPv4 checksum
 * follow. */
static void resize_aeth(struct rte_mbuf *m, int delta)
{
	uint8_t *f = frame(m);
	uint32_t len = rte_pktmbuf_data_len(m), at = BTH_OFF + 12;
	if (delta > 0) {
		CHECK(rte_pktmbuf_append(m, 4) != NULL, "no room to grow a frame");
		f = frame(m);
		memmove(f + at + 4, f + at, len - at);
		f[at] = 0x1f;   /* ACK, credits invalid */
		f[at + 1] = f[at + 2] = f[at + 3] = 0;
	} else {
		memmove(f + at, f + at + 4, len - at - 4);
		rte_pktmbuf_trim(m, 4);
	}
	struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)(f + L2_LEN);
	ip->total_length = rte_cpu_to_be_16((uint16_t)(rte_be_to_cpu_16(ip->total_length) + delta));
	ip->hdr_checksum = 0;
	ip->hdr_checksum = rte_ipv4_cksum(ip);
	struct rte_udp_hdr *u = (struct rte_udp_hdr *)(f + L2_LEN + 20);
	u->dgram_len = rte_cpu_to_be_16((uint16_t)(rte_be_to_cpu_16(u->dgram_len) + delta));
}

/* The frame was rewritten: a valid ICRC again. */
static void resign(struct rte_mbuf *m)
{
	rnic_roce_icrc_generate_mbuf(m, L2_LEN);
}

/* Note the IP header of A's RoCEv2 frame @p m (IPv4 or IPv6). */
static void tap_l3(const struct rte_mbuf *m)
{
	const uint8_t *f = rte_pktmbuf_mtod(m, const uint8_t *);
	uint32_t len = rte_pktmbuf_data_len(m);
	if (len >= L2_LEN + 40 + 8 + 12 && f[12] == 0x86 && f[13] == 0xdd && f[L2_LEN + 6] == 17 &&
	    ((unsigned)f[L2_LEN + 42] << 8 | f[L2_LEN + 43]) == RNIC_ROCE_UDP_PORT) {
		tap.a_frames++;
		tap.a_hops = f[L2_LEN + 7];
		tap.a_flow = (uint32_t)(f[L2_LEN + 1] & 0xf) << 16 | (uint32_t)f[L2_LEN + 2] << 8 |
			     f[L2_LEN + 3];
		return;
	}
	if (roce_opcode(m) < 0)
		return;
	tap.a_frames++;
	tap.a_hops = f[L2_LEN + 8];
	struct rte_ipv4_hdr ip;
	memcpy(&ip, f + L2_LEN, sizeof(ip));
	ip.hdr_checksum = 0;
	tap.a_cksum_ok = rte_ipv4_cksum(&ip) ==
			 ((const struct rte_ipv4_hdr *)(const void *)(f + L2_LEN))->hdr_checksum;
}

/* Apply the case's mutation to a frame of A (@p from_a) or B. @return
 * false when the frame is to be dropped. */
static bool tap_frame(struct rte_mbuf *m, bool from_a)
{
	const uint8_t *f = rte_pktmbuf_mtod(m, const uint8_t *);
	if (from_a && tap.mut == MUT_DROP_A && f[12] == 0x08 && f[13] == 0x00)
		return false;   /* RoCE and TCP alike; ARP passes */
	if (from_a)
		tap_l3(m);
	int op = roce_opcode(m);
	if (op < 0)
		return true;
	uint8_t *b = frame(m) + BTH_OFF;
	if (from_a) {
		if (op == RNIC_ROCE_OP_RC_READ_REQUEST && tap.read_req == NULL)
			tap.read_req = rte_pktmbuf_copy(m, m->pool, 0, UINT32_MAX);
		if (op == RNIC_ROCE_OP_RC_WRITE_ONLY && tap.write_only == NULL)
			tap.write_only = rte_pktmbuf_copy(m, m->pool, 0, UINT32_MAX);
		if ((tap.mut == MUT_WRITE_ZERO_LEN || tap.mut == MUT_WRITE_PAD) && !tap.done &&
		    op == RNIC_ROCE_OP_RC_WRITE_ONLY) {
			if (tap.mut == MUT_WRITE_ZERO_LEN)
				put_be32(b + 12 + 12, 0);
			else
				b[1] = (uint8_t)((b[1] & ~0x30) | 3 << 4);   /* PadCount */
			tap.done = true;
			resign(m);
		}
		if (tap.mut == MUT_WRITE_HUGE_LEN && !tap.done && op == RNIC_ROCE_OP_RC_WRITE_FIRST) {
			put_be32(b + 12 + 12, 0x80000000u + 2048u);   /* RETH DMA length */
			tap.done = true;
			resign(m);
		}
		return true;
	}
	if (op >= RNIC_ROCE_OP_RC_READ_RESPONSE_FIRST && op <= RNIC_ROCE_OP_RC_READ_RESPONSE_ONLY)
		tap.b_read_resps++;
	if (op == RNIC_ROCE_OP_RC_ACKNOWLEDGE && (b[12] & 0x60) == 0x60) {
		tap.b_naks++;
		tap.b_nak_code = b[12] & 0x1f;
		tap.b_seq_naks += (b[12] & 0x1f) == RNIC_ROCE_NAK_PSN_SEQ_ERR;
	}
	if (tap.done)
		return true;
	switch (tap.mut) {
	case MUT_FIRST_TO_MIDDLE:
	case MUT_FIRST_TO_ONLY:
		if (op != RNIC_ROCE_OP_RC_READ_RESPONSE_FIRST)
			return true;
		b[0] = tap.mut == MUT_FIRST_TO_ONLY ? RNIC_ROCE_OP_RC_READ_RESPONSE_ONLY
						     : RNIC_ROCE_OP_RC_READ_RESPONSE_MIDDLE;
		if (tap.mut == MUT_FIRST_TO_MIDDLE)
			resize_aeth(m, -4);   /* a MIDDLE has no AETH: the payload stays */
		break;
	case MUT_MIDDLE_TO_LAST:
		if (op != RNIC_ROCE_OP_RC_READ_RESPONSE_MIDDLE)
			return true;
		b[0] = RNIC_ROCE_OP_RC_READ_RESPONSE_LAST;
		resize_aeth(m, 4);   /* a LAST carries an AETH */
		break;
	case MUT_DROP_MIDDLE:
		if (op == RNIC_ROCE_OP_RC_READ_RESPONSE_MIDDLE && bth_psn(m) == tap.drop_psn) {
			tap.done = true;
			return false;
		}
		return true;
	case MUT_ACK_RESERVED_NAK:
		if (op != RNIC_ROCE_OP_RC_ACKNOWLEDGE)
			return true;
		b[12] = 0x60 | 7;   /* NAK, code 7: reserved */
		break;
	case MUT_ATMACK_PSN:
		if (op != RNIC_ROCE_OP_RC_ATOMIC_ACKNOWLEDGE)
			return true;
		set_bth_psn(m, (bth_psn(m) + 1) & 0xffffffu);
		break;
	case MUT_ACK_FUTURE_PSN:
		if (op != RNIC_ROCE_OP_RC_ACKNOWLEDGE)
			return true;
		set_bth_psn(m, (bth_psn(m) + 10) & 0xffffffu);
		break;
	default:
		return true;
	}
	tap.done = true;
	resign(m);
	return true;
}

/* Move every frame from @p from to @p to. @return frames moved or dropped. */
static unsigned tap_move(struct rte_ring *from, struct rte_ring *to, bool from_a)
{
	struct rte_mbuf *m[64], *keep[64];
	unsigned n = rte_ring_dequeue_burst(from, (void **)m, 64, NULL), k = 0;
	for (unsigned i = 0; i < n; i++) {
		/* ring ports have MAC 0 at both ends, and neighbour discovery
		 * takes a frame from its own MAC for its own, looped back: the
		 * "wire" gives each side a source MAC of its own (ND learns the
		 * link-layer address from its options, still 0) */
		if (ipv6)
			frame(m[i])[11] = from_a ? 0xa : 0xb;
		if (tap_frame(m[i], from_a))
			keep[k++] = m[i];
		else
			rte_pktmbuf_free(m[i]);
	}
	unsigned done = rte_ring_enqueue_burst(to, (void **)keep, k, NULL);
	for (unsigned i = done; i < k; i++)
		rte_pktmbuf_free(keep[i]);
	return n;
}

/* Put a forged frame on B's receive ring (from A). */
static void inject_b(struct rte_mbuf *m)
{
	resign(m);
	if (rte_ring_enqueue(R.b_rx, m) != 0)
		rte_pktmbuf_free(m);
}

static uint64_t ctr(int s, const char *name)
{
	uint64_t v = 0;
	if (rnic_roce_counter(R.st[s], name, &v) != 0)
		return UINT64_MAX;   /* no such counter: every check of it fails */
	return v;
}

#define BUF_LEN (256u * 1024u)

static void print_drop(const char *cause, uint64_t n, void *arg)
{
	if (n)
		printf("    %s drop %s %llu\n", (const char *)arg, cause, (unsigned long long)n);
}

static bool case_cleanup(void)
{
	if (getenv("HOSTILE_DEBUG")) {
		rnic_stack_drops_each(R.st[0], print_drop, "A");
		rnic_stack_drops_each(R.st[1], print_drop, "B");
		printf("    A frames %u\n", tap.a_frames);
	}
	bool ok = objs_free();
	rte_pktmbuf_free(tap.read_req);
	rte_pktmbuf_free(tap.write_only);
	memset(&tap, 0, sizeof(tap));
	/* what a failed QP left on the rings */
	steps(4);
	return ok;
}

static const uint32_t psn0[2] = { 0x1000, 0x2000 };

/* Two connected RC QPs, A's send PSNs from 0x1000, B's from 0x2000; B's
 * buffer a known pattern, A's zero. */
static void setup(void)
{
	int acc = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
		  IBV_ACCESS_REMOTE_ATOMIC;
	objs_make(64, BUF_LEN, acc, 16);
	memset(O.buf[0], 0, BUF_LEN);
	for (uint32_t i = 0; i < BUF_LEN; i++)
		O.buf[1][i] = (uint8_t)(i * 7 + i / 251);
	/* local ACK timeout 12 (16.8 ms): a dropped frame is asked again soon */
	tpair_roce_connect(O.qp, R.ctx, psn0, 1, IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
			   IBV_ACCESS_REMOTE_ATOMIC, 12, 7);
}

/* Post on A one RDMA Read (@p read) or Write of @p len bytes at @p off
 * of both buffers. */
static void post_a(bool read, uint32_t len, uint32_t off, uint64_t wr_id)
{
	struct ibv_sge s = { (uintptr_t)O.buf[0] + off, len, O.mr[0]->lkey };
	struct ibv_send_wr w = { .wr_id = wr_id, .sg_list = &s, .num_sge = 1,
				 .opcode = read ? IBV_WR_RDMA_READ : IBV_WR_RDMA_WRITE,
				 .send_flags = IBV_SEND_SIGNALED };
	w.wr.rdma.remote_addr = (uintptr_t)O.buf[1] + off;
	w.wr.rdma.rkey = O.mr[1]->rkey;
	struct ibv_send_wr *bad = NULL;
	CHECK_RC(ibv_post_send(O.qp[0], &w, &bad), 0);
}

/* A's one completion, its status @p want. */
static void expect_a_wc(enum ibv_wc_status want, const char *what)
{
	struct ibv_wc wc = { 0 };
	int n = wait_wc(O.cq[0], &wc, 1);
	CHECK(n == 1, "%s: no completion (hang guard %d s)", what, HANG_S);
	CHECK(wc.status == want, "%s: completion status %s, expected %s", what,
	      rnic_wc_status_str(wc.status), rnic_wc_status_str(want));
}

/* A Read whose responses the tap rewrote with @p mut must fail. */
static void read_must_fail(enum mut mut, const char *what)
{
	setup();
	uint64_t bad0 = ctr(0, "bad_resps");
	tap.mut = mut;
	post_a(true, 4 * PMTU, 0, 1);
	expect_a_wc(IBV_WC_BAD_RESP_ERR, what);
	CHECK(tap.done, "%s: the tap never met the frame to rewrite", what);
	CHECK(ctr(0, "bad_resps") == bad0 + 1, "%s: bad_resps %llu, expected %llu", what,
	      (unsigned long long)ctr(0, "bad_resps"), (unsigned long long)bad0 + 1);
	CHECK(O.qp[0]->state == IBV_QPS_ERR, "%s: A's QP in state %d, not ERR", what,
	      O.qp[0]->state);
}

static void t_read_middle_no_first(void)
{
	read_must_fail(MUT_FIRST_TO_MIDDLE, "FIRST rewritten as MIDDLE");
}

static void t_read_cut_short(void)
{
	read_must_fail(MUT_MIDDLE_TO_LAST, "MIDDLE rewritten as LAST");
}

static void t_read_only_for_first(void)
{
	read_must_fail(MUT_FIRST_TO_ONLY, "FIRST rewritten as ONLY");
}

/* The sequence check must not fail a Read that recovers: a MIDDLE of the
 * second chunk lost, the Read asked again from inside that chunk (its
 * answer a FIRST there), completes with the right bytes. */
static void t_read_restart_ok(void)
{
	setup();
	const uint32_t len = 128 * PMTU;   /* two chunks of 64 responses */
	tap.mut = MUT_DROP_MIDDLE;
	tap.drop_psn = psn0[0] + 64 + 5;
	uint64_t bad0 = ctr(0, "bad_resps");
	post_a(true, len, 0, 1);
	expect_a_wc(IBV_WC_SUCCESS, "Read with a lost MIDDLE");
	CHECK(tap.done, "the MIDDLE to lose never came");
	CHECK(memcmp(O.buf[0], O.buf[1], len) == 0, "the Read's sink differs from the source");
	CHECK(ctr(0, "bad_resps") == bad0, "bad_resps moved on a clean recovery");
	/* and a clean Read after it */
	memset(O.buf[0], 0, len);
	post_a(true, len, 0, 2);
	expect_a_wc(IBV_WC_SUCCESS, "a second Read");
	CHECK(memcmp(O.buf[0], O.buf[1], len) == 0, "the second Read's sink differs");
}

static void t_nak_reserved_code(void)
{
	setup();
	uint64_t n0 = ctr(0, "bad_nak_codes");
	tap.mut = MUT_ACK_RESERVED_NAK;
	post_a(false, 8, 0, 1);
	expect_a_wc(IBV_WC_BAD_RESP_ERR, "Write ACKed with a reserved NAK code");
	CHECK(tap.done, "no ACK was rewritten");
	CHECK(ctr(0, "bad_nak_codes") == n0 + 1, "bad_nak_codes %llu, expected %llu",
	      (unsigned long long)ctr(0, "bad_nak_codes"), (unsigned long long)n0 + 1);
}

static void t_ack_never_sent(void)
{
	setup();
	uint64_t s0 = ctr(0, "stale_responses");
	tap.mut = MUT_ACK_FUTURE_PSN;
	post_a(false, 8, 0, 1);
	struct ibv_wc wc;
	for (int i = 0; i < 200 && !tap.done; i++)
		step();
	CHECK(tap.done, "no ACK was rewritten");
	step();   /* A reads it (its timer, 16.8 ms, has not fired yet) */
	CHECK(ibv_poll_cq(O.cq[0], 1, &wc) == 0, "a completion from an ACK of a PSN never sent");
	CHECK(ctr(0, "stale_responses") == s0 + 1, "stale_responses %llu, expected %llu",
	      (unsigned long long)ctr(0, "stale_responses"), (unsigned long long)s0 + 1);
	/* the timer asks again and the true ACK completes it */
	expect_a_wc(IBV_WC_SUCCESS, "Write after the forged ACK");
}

/* An Atomic ACK moved off its atomic's PSN is dropped (counted); the
 * atomic, asked again, is answered from B's replay cache: the right
 * original value, the add done once. */
static void t_atomic_ack_psn(void)
{
	setup();
	uint64_t *word = (uint64_t *)(void *)(O.buf[1] + 64 * KiB);
	*word = 1000;
	uint64_t s0 = ctr(0, "stale_responses"), d0 = ctr(1, "dup_atomics");
	tap.mut = MUT_ATMACK_PSN;
	struct ibv_sge s = { (uintptr_t)O.buf[0], 8, O.mr[0]->lkey };
	struct ibv_send_wr w = { .wr_id = 1, .sg_list = &s, .num_sge = 1,
				 .opcode = IBV_WR_ATOMIC_FETCH_AND_ADD,
				 .send_flags = IBV_SEND_SIGNALED }, *bad;
	w.wr.atomic.remote_addr = (uintptr_t)word;
	w.wr.atomic.rkey = O.mr[1]->rkey;
	w.wr.atomic.compare_add = 5;
	CHECK_RC(ibv_post_send(O.qp[0], &w, &bad), 0);
	expect_a_wc(IBV_WC_SUCCESS, "fetch-and-add whose first Atomic ACK was moved");
	uint64_t orig;
	memcpy(&orig, O.buf[0], 8);
	CHECK(tap.done, "no Atomic ACK was rewritten");
	CHECK(orig == 1000 && *word == 1005, "original %llu (expected 1000), word %llu "
	      "(expected 1005)", (unsigned long long)orig, (unsigned long long)*word);
	CHECK(ctr(0, "stale_responses") == s0 + 1, "stale_responses %llu, expected %llu",
	      (unsigned long long)ctr(0, "stale_responses"), (unsigned long long)s0 + 1);
	CHECK(ctr(1, "dup_atomics") == d0 + 1, "dup_atomics %llu, expected %llu",
	      (unsigned long long)ctr(1, "dup_atomics"), (unsigned long long)d0 + 1);
}

/* A UD SEND ONLY to an RC QP: dropped, counted, the QP unharmed. */
static void t_ud_op_to_rc(void)
{
	setup();
	post_a(false, 8, 0, 1);
	expect_a_wc(IBV_WC_SUCCESS, "Write");
	uint64_t w0 = ctr(1, "rx_wrong_service");
	struct rte_mbuf *m = rte_pktmbuf_copy(tap.write_only, tap.write_only->pool, 0, UINT32_MAX);
	CHECK(m != NULL, "no mbuf");
	/* WRITE ONLY: RETH 16 + 8 bytes; as UD SEND ONLY: DETH 8 + 16 bytes */
	frame(m)[BTH_OFF] = RNIC_ROCE_OP_UD_SEND_ONLY;
	set_bth_psn(m, psn0[0] + 1);
	inject_b(m);
	steps(10);
	CHECK(ctr(1, "rx_wrong_service") == w0 + 1, "rx_wrong_service %llu, expected %llu",
	      (unsigned long long)ctr(1, "rx_wrong_service"), (unsigned long long)w0 + 1);
	post_a(false, 8, 0, 2);
	expect_a_wc(IBV_WC_SUCCESS, "Write after the UD packet");
}

/* The copy of A's Read Request with PSN @p psn and DMA length @p len. */
static struct rte_mbuf *read_req_copy(uint32_t psn, uint32_t len)
{
	struct rte_mbuf *m = rte_pktmbuf_copy(tap.read_req, tap.read_req->pool, 0, UINT32_MAX);
	CHECK(m != NULL, "no mbuf");
	set_bth_psn(m, psn);
	put_be32(frame(m) + BTH_OFF + 12 + 12, len);
	return m;
}

static void t_dup_read_ghost(void)
{
	setup();
	post_a(false, 8, 8 * PMTU, 1);          /* PSN 0x1000: a Write */
	expect_a_wc(IBV_WC_SUCCESS, "Write");
	post_a(true, 4 * PMTU, 0, 2);           /* PSN 0x1001..0x1004: a Read */
	expect_a_wc(IBV_WC_SUCCESS, "Read");
	CHECK(tap.read_req != NULL, "the tap kept no Read Request");
	uint64_t rej0 = ctr(1, "dup_read_rejects");
	/* a "duplicate" at the Write's PSN: no Read was ever there */
	unsigned r0 = tap.b_read_resps;
	inject_b(read_req_copy(psn0[0], 4 * PMTU));
	steps(50);
	CHECK(tap.b_read_resps == r0, "B answered a duplicate Read at a Write's PSN with %u "
	      "responses", tap.b_read_resps - r0);
	/* at the Read's PSN but asking twice its length */
	inject_b(read_req_copy(psn0[0] + 1, 8 * PMTU));
	steps(50);
	CHECK(tap.b_read_resps == r0, "B answered a duplicate Read longer than the Read with "
	      "%u responses", tap.b_read_resps - r0);
	CHECK(ctr(1, "dup_read_rejects") == rej0 + 2, "dup_read_rejects %llu, expected %llu",
	      (unsigned long long)ctr(1, "dup_read_rejects"), (unsigned long long)rej0 + 2);
	/* the true duplicate is answered again (A drops the answers) */
	inject_b(read_req_copy(psn0[0] + 1, 4 * PMTU));
	steps(50);
	CHECK(tap.b_read_resps == r0 + 4, "B answered a true duplicate Read with %u responses, "
	      "expected 4", tap.b_read_resps - r0);
	CHECK(O.qp[0]->state == IBV_QPS_RTS && O.qp[1]->state == IBV_QPS_RTS,
	      "QP states %d %d after the duplicates", O.qp[0]->state, O.qp[1]->state);
}

static void t_write_huge_dma_len(void)
{
	setup();
	uint64_t b0 = ctr(1, "bad_dma_len");
	tap.mut = MUT_WRITE_HUGE_LEN;
	post_a(false, 2 * PMTU, 0, 1);
	expect_a_wc(IBV_WC_REM_INV_REQ_ERR, "Write with a DMA length over 2^31");
	CHECK(tap.done, "no WRITE FIRST was rewritten");
	CHECK(tap.b_naks == 1 && tap.b_nak_code == RNIC_ROCE_NAK_INVALID_REQUEST,
	      "B sent %u NAKs, the last code %u: expected one NAK invalid request", tap.b_naks,
	      tap.b_nak_code);
	CHECK(ctr(1, "bad_dma_len") == b0 + 1, "bad_dma_len %llu, expected %llu",
	      (unsigned long long)ctr(1, "bad_dma_len"), (unsigned long long)b0 + 1);
}

/* A WRITE ONLY whose RETH says 0 bytes but carries 8, or whose PadCount
 * makes its payload 5 bytes against a DMA length of 8: NAK invalid request,
 * nothing written. */
static void write_incoherent(enum mut mut, const char *what)
{
	setup();
	memset(O.buf[1], 0x77, 64);
	memset(O.buf[0], 0x11, 8);
	tap.mut = mut;
	post_a(false, 8, 0, 1);
	expect_a_wc(IBV_WC_REM_INV_REQ_ERR, what);
	CHECK(tap.done, "%s: no WRITE ONLY was rewritten", what);
	CHECK(tap.b_naks == 1 && tap.b_nak_code == RNIC_ROCE_NAK_INVALID_REQUEST,
	      "%s: B sent %u NAKs, the last code %u", what, tap.b_naks, tap.b_nak_code);
	for (int i = 0; i < 64; i++)
		CHECK(O.buf[1][i] == 0x77, "%s: byte %d written", what, i);
}

static void t_write_zero_len(void)
{
	write_incoherent(MUT_WRITE_ZERO_LEN, "WRITE ONLY with DMA length 0 and 8 bytes");
}

static void t_write_bad_pad(void)
{
	write_incoherent(MUT_WRITE_PAD, "WRITE ONLY with PadCount 3 on 8 bytes");
}

static void t_psn_far_ahead(void)
{
	setup();
	post_a(false, 8, 0, 1);
	expect_a_wc(IBV_WC_SUCCESS, "Write");
	CHECK(tap.write_only != NULL, "the tap kept no WRITE ONLY");
	unsigned n0 = tap.b_seq_naks;
	for (int i = 0; i < 8; i++) {
		struct rte_mbuf *m = rte_pktmbuf_copy(tap.write_only, tap.write_only->pool, 0,
						      UINT32_MAX);
		CHECK(m != NULL, "no mbuf");
		set_bth_psn(m, psn0[0] + 1000 + (uint32_t)i);
		inject_b(m);
		steps(2);
	}
	steps(20);
	CHECK(tap.b_seq_naks == n0 + 1, "B sent %u sequence NAKs for 8 packets far ahead, "
	      "expected 1", tap.b_seq_naks - n0);
	CHECK(O.qp[1]->state == IBV_QPS_RTS, "B's QP in state %d", O.qp[1]->state);
}

/* A's QP (in RESET) to RTS again towards B's, its first PSN @p sq_psn,
 * B's next PSN @p rq_psn, the AV's hop limit @p hop. */
static void a_connect(uint32_t sq_psn, uint32_t rq_psn, uint8_t hop, uint32_t flow)
{
	struct ibv_qp_attr at = { .qp_state = IBV_QPS_INIT, .port_num = 1,
				  .qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ };
	CHECK_RC(rnic_modify_qp(O.qp[0], &at, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
				IBV_QP_ACCESS_FLAGS), 0);
	union ibv_gid gid;
	CHECK_RC(rnic_query_gid(R.ctx[1], 1, 1, &gid), 0);
	at = (struct ibv_qp_attr){
		.qp_state = IBV_QPS_RTR, .path_mtu = IBV_MTU_1024,
		.dest_qp_num = O.qp[1]->qp_num, .rq_psn = rq_psn,
		.max_dest_rd_atomic = 16, .min_rnr_timer = 12,
		.ah_attr = { .is_global = 1, .port_num = 1,
			     .grh = { .dgid = gid, .sgid_index = 1, .hop_limit = hop,
				      .flow_label = flow } },
	};
	CHECK_RC(rnic_modify_qp(O.qp[0], &at, RNIC_QP_RTR_MASK), 0);
	at = (struct ibv_qp_attr){ .qp_state = IBV_QPS_RTS, .timeout = 12, .retry_cnt = 7,
				   .rnr_retry = 7, .sq_psn = sq_psn, .max_rd_atomic = 16 };
	CHECK_RC(rnic_modify_qp(O.qp[0], &at, RNIC_QP_RTS_MASK), 0);
}

/* RTS -> RESET with work outstanding both ways: allowed, no completion at
 * all, both queues emptied; the QP connects again and works. */
static void t_reset_live(void)
{
	setup();
	tap.mut = MUT_DROP_A;
	for (int i = 0; i < 4; i++) {
		struct ibv_sge s = { (uintptr_t)O.buf[0] + 64 * KiB, 64, O.mr[0]->lkey };
		struct ibv_recv_wr r = { .wr_id = 100 + (uint64_t)i, .sg_list = &s, .num_sge = 1 };
		struct ibv_recv_wr *bad = NULL;
		CHECK_RC(ibv_post_recv(O.qp[0], &r, &bad), 0);
	}
	post_a(false, 8, 0, 1);
	post_a(true, PMTU, PMTU, 2);
	post_a(false, 3 * PMTU, 4 * PMTU, 3);
	steps(10);
	struct ibv_qp_attr at = { .qp_state = IBV_QPS_RESET };
	CHECK_RC(rnic_modify_qp(O.qp[0], &at, IBV_QP_STATE), 0);
	steps(10);
	struct ibv_wc wc[8];
	int n = ibv_poll_cq(O.cq[0], 8, wc);
	CHECK(n == 0, "%d completions after RESET (the first wr_id %llu, %s)", n,
	      n > 0 ? (unsigned long long)wc[0].wr_id : 0ull,
	      n > 0 ? rnic_wc_status_str(wc[0].status) : "");
	CHECK(O.qp[0]->state == IBV_QPS_RESET, "A's QP in state %d, not RESET", O.qp[0]->state);
	/* again from RESET: B saw nothing of A, so A starts at the same PSN */
	tap.mut = MUT_NONE;
	a_connect(psn0[0], psn0[1], 64, 0);
	post_a(false, 8, 0, 4);
	n = wait_wc(O.cq[0], wc, 1);
	CHECK(n == 1 && wc[0].wr_id == 4 && wc[0].status == IBV_WC_SUCCESS,
	      "Write after RESET: %d completions, wr_id %llu, %s", n,
	      (unsigned long long)wc[0].wr_id, rnic_wc_status_str(wc[0].status));
	/* the receives posted before RESET are gone: a new one takes B's Send */
	struct ibv_sge s = { (uintptr_t)O.buf[0] + 64 * KiB, 64, O.mr[0]->lkey };
	struct ibv_recv_wr r = { .wr_id = 77, .sg_list = &s, .num_sge = 1 };
	struct ibv_recv_wr *rbad = NULL;
	CHECK_RC(ibv_post_recv(O.qp[0], &r, &rbad), 0);
	struct ibv_sge bs = { (uintptr_t)O.buf[1], 16, O.mr[1]->lkey };
	struct ibv_send_wr sw = { .wr_id = 9, .sg_list = &bs, .num_sge = 1,
				  .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED };
	struct ibv_send_wr *sbad = NULL;
	CHECK_RC(ibv_post_send(O.qp[1], &sw, &sbad), 0);
	n = wait_wc(O.cq[0], wc, 1);
	CHECK(n == 1 && wc[0].wr_id == 77 && wc[0].status == IBV_WC_SUCCESS,
	      "Send after RESET: %d receive completions, wr_id %llu, %s", n,
	      (unsigned long long)wc[0].wr_id, rnic_wc_status_str(wc[0].status));
}


/* The next CM event on @p ch, both stacks driven meanwhile. */
static void cm_next(struct rnic_cm_channel *ch, struct rnic_cm_event *ev, const char *who)
{
	double t0 = now_s();
	int rc;
	while ((rc = rnic_cm_get_event(ch, ev, 0)) == -EAGAIN && now_s() - t0 < HANG_S)
		step();
	CHECK(rc == 0, "%s: no CM event (rc %d, hang guard %d s)", who, rc, HANG_S);
}

/* iWARP through the CM: A's @p qa connects to B's listener on @p port and
 * B accepts with @p qb; both see ESTABLISHED. @return A's id. */
static struct rnic_cm_id *iw_connect(struct rnic_cm_channel *ca, struct rnic_cm_channel *cb,
				     struct ibv_qp *qa, struct ibv_qp *qb, uint16_t port,
				     struct rnic_cm_id **idb)
{
	struct rnic_cm_id *ida = NULL;
	struct rnic_cm_event ev;
	struct rnic_cm_conn_param cp = { .responder_resources = 4, .initiator_depth = 4 };
	CHECK_RC(rnic_cm_create_id(ca, NULL, &ida), 0);
	CHECK_RC(rnic_cm_connect(ida, qa, R.ip[1][0], port, &cp), 0);
	cm_next(cb, &ev, "B");
	CHECK(ev.type == RNIC_CM_EVENT_CONNECT_REQUEST, "B: CM event %s, expected a request",
	      rnic_cm_event_str(ev.type));
	*idb = ev.id;
	CHECK_RC(rnic_cm_accept(ev.id, qb, &cp), 0);
	cm_next(cb, &ev, "B");
	CHECK(ev.type == RNIC_CM_EVENT_ESTABLISHED, "B: CM event %s", rnic_cm_event_str(ev.type));
	cm_next(ca, &ev, "A");
	CHECK(ev.type == RNIC_CM_EVENT_ESTABLISHED, "A: CM event %s", rnic_cm_event_str(ev.type));
	return ida;
}

static struct {
	struct rnic_cm_channel *ch[2];
	struct rnic_cm_id *listener, *id[4];
	struct ibv_qp *qp[3];
} IW;

static bool iw_cleanup(void)
{
	for (int i = 0; i < 4; i++)
		if (IW.id[i])
			rnic_cm_destroy_id(IW.id[i]);
	if (IW.listener)
		rnic_cm_destroy_id(IW.listener);
	steps(20);
	for (int i = 0; i < 3; i++)
		if (IW.qp[i])
			rnic_destroy_qp(IW.qp[i]);
	for (int i = 0; i < 2; i++)
		if (IW.ch[i])
			rnic_cm_destroy_channel(IW.ch[i]);
	memset(&IW, 0, sizeof(IW));
	return case_cleanup();
}

/* The same for an iWARP QP (lib/verbs/qp.c is shared): RTS with work
 * outstanding -> RESET gives no completion, and the QP connects again
 * through the CM and works. */
static void t_reset_live_iwarp(void)
{
	setup();
	for (int i = 0; i < 2; i++) {
		IW.ch[i] = rnic_cm_create_channel(R.ctx[i]);
		CHECK(IW.ch[i] != NULL, "CM channel");
	}
	for (int i = 0; i < 3; i++) {
		int s = i ? 1 : 0;
		struct ibv_qp_init_attr qa = { .qp_type = IBV_QPT_RC, .send_cq = O.cq[s],
			.recv_cq = O.cq[s], .cap = { .max_send_wr = 8, .max_recv_wr = 8,
						     .max_send_sge = 1, .max_recv_sge = 1 } };
		IW.qp[i] = rnic_create_qp_transport(O.pd[s], &qa, RNIC_TRANSPORT_IWARP);
		CHECK(IW.qp[i] != NULL, "iWARP QP: %s", strerror(errno));
	}
	CHECK_RC(rnic_cm_create_id(IW.ch[1], NULL, &IW.listener), 0);
	CHECK_RC(rnic_cm_listen(IW.listener, 9527, 4), 0);
	IW.id[0] = iw_connect(IW.ch[0], IW.ch[1], IW.qp[0], IW.qp[1], 9527, &IW.id[1]);
	tap.mut = MUT_DROP_A;
	for (int i = 0; i < 3; i++) {
		struct ibv_sge s = { (uintptr_t)O.buf[0] + 64 * KiB, 64, O.mr[0]->lkey };
		struct ibv_recv_wr r = { .wr_id = 100 + (uint64_t)i, .sg_list = &s, .num_sge = 1 };
		struct ibv_recv_wr *bad = NULL;
		CHECK_RC(ibv_post_recv(IW.qp[0], &r, &bad), 0);
	}
	/* a Read (its answer can never come) between two Writes (an iWARP
	 * Write completes once TCP has it) */
	for (int i = 0; i < 3; i++) {
		struct ibv_sge s = { (uintptr_t)O.buf[0] + (uint64_t)i * PMTU, PMTU, O.mr[0]->lkey };
		struct ibv_send_wr w = { .wr_id = 1 + (uint64_t)i, .sg_list = &s, .num_sge = 1,
					 .opcode = i == 1 ? IBV_WR_RDMA_READ : IBV_WR_RDMA_WRITE,
					 .send_flags = IBV_SEND_SIGNALED }, *bad;
		w.wr.rdma.remote_addr = (uintptr_t)O.buf[1];
		w.wr.rdma.rkey = O.mr[1]->rkey;
		CHECK_RC(ibv_post_send(IW.qp[0], &w, &bad), 0);
	}
	steps(10);
	struct ibv_wc wc[8];
	int n = ibv_poll_cq(O.cq[0], 8, wc);
	for (int i = 0; i < n; i++)
		CHECK(wc[i].wr_id != 2, "the Read completed (%s) before RESET",
		      rnic_wc_status_str(wc[i].status));
	struct ibv_qp_attr at = { .qp_state = IBV_QPS_RESET };
	CHECK_RC(rnic_modify_qp(IW.qp[0], &at, IBV_QP_STATE), 0);
	steps(20);
	n = ibv_poll_cq(O.cq[0], 8, wc);
	CHECK(n == 0, "%d completions after RESET (the first wr_id %llu, %s)", n,
	      n > 0 ? (unsigned long long)wc[0].wr_id : 0ull,
	      n > 0 ? rnic_wc_status_str(wc[0].status) : "");
	CHECK(IW.qp[0]->state == IBV_QPS_RESET, "A's QP in state %d, not RESET",
	      IW.qp[0]->state);
	/* connected again, to a new QP of B */
	tap.mut = MUT_NONE;
	rnic_cm_destroy_id(IW.id[0]);
	IW.id[0] = NULL;
	struct rnic_cm_event ev;
	while (rnic_cm_get_event(IW.ch[0], &ev, 0) == 0)
		;   /* what A's old id said before it went */
	IW.id[2] = iw_connect(IW.ch[0], IW.ch[1], IW.qp[0], IW.qp[2], 9527, &IW.id[3]);
	struct ibv_sge s = { (uintptr_t)O.buf[0], 64, O.mr[0]->lkey };
	struct ibv_send_wr w = { .wr_id = 9, .sg_list = &s, .num_sge = 1,
				 .opcode = IBV_WR_RDMA_WRITE, .send_flags = IBV_SEND_SIGNALED }, *bad;
	w.wr.rdma.remote_addr = (uintptr_t)O.buf[1] + 128 * KiB;
	w.wr.rdma.rkey = O.mr[1]->rkey;
	CHECK_RC(ibv_post_send(IW.qp[0], &w, &bad), 0);
	n = wait_wc(O.cq[0], wc, 1);
	CHECK(n == 1 && wc[0].wr_id == 9 && wc[0].status == IBV_WC_SUCCESS,
	      "iWARP Write after RESET: %d completions, wr_id %llu, %s", n,
	      (unsigned long long)wc[0].wr_id, rnic_wc_status_str(wc[0].status));
}

/* A type 1 (@p type 1) or type 2 window on B over its first 4 KiB, bound
 * through B's QP @p qp. @return its rkey. */
static uint32_t b_window(struct ibv_qp *qp, struct ibv_mr *mr, enum ibv_mw_type type,
			 struct ibv_mw **mwp)
{
	struct ibv_mw *mw = ibv_alloc_mw(O.pd[1], type);
	CHECK(mw != NULL, "ibv_alloc_mw(type %d): %s", type, strerror(errno));
	*mwp = mw;
	uint32_t rkey = 0;
	struct ibv_mw_bind_info bi = { .mr = mr, .addr = (uintptr_t)O.buf[1], .length = 4096,
				       .mw_access_flags = IBV_ACCESS_REMOTE_WRITE };
	if (type == IBV_MW_TYPE_1) {
		struct ibv_mw_bind b1 = { .wr_id = 50, .send_flags = IBV_SEND_SIGNALED,
					  .bind_info = bi };
		CHECK_RC(ibv_bind_mw(qp, mw, &b1), 0);
		rkey = mw->rkey;   /* ibv_bind_mw() sets it */
	} else {
		struct ibv_send_wr bw = { .wr_id = 50, .opcode = IBV_WR_BIND_MW,
					  .send_flags = IBV_SEND_SIGNALED }, *bad;
		bw.bind_mw.mw = mw;
		bw.bind_mw.rkey = rkey = ibv_inc_rkey(mw->rkey);
		bw.bind_mw.bind_info = bi;
		CHECK_RC(ibv_post_send(qp, &bw, &bad), 0);
	}
	struct ibv_wc wc;
	int n = wait_wc(O.cq[1], &wc, 1);
	CHECK(n == 1 && wc.status == IBV_WC_SUCCESS && wc.wr_id == 50, "bind: %d, %s", n,
	      n ? rnic_wc_status_str(wc.status) : "-");
	return rkey;
}

/* A Send with Invalidate from A to B naming @p rkey must fail: NAK invalid
 * request, REM_INV_REQ_ERR at A, counted in B's inv_refused. */
static void inv_refused(uint32_t rkey, const char *what)
{
	uint64_t r0 = ctr(1, "inv_refused");
	struct ibv_sge rs = { (uintptr_t)O.buf[1] + 8192, 64, O.mr[1]->lkey };
	struct ibv_recv_wr rw = { .wr_id = 60, .sg_list = &rs, .num_sge = 1 }, *rbad;
	CHECK_RC(ibv_post_recv(O.qp[1], &rw, &rbad), 0);
	struct ibv_sge s = { (uintptr_t)O.buf[0], 8, O.mr[0]->lkey };
	struct ibv_send_wr sw = { .wr_id = 61, .sg_list = &s, .num_sge = 1,
				  .opcode = IBV_WR_SEND_WITH_INV, .send_flags = IBV_SEND_SIGNALED,
				  .invalidate_rkey = rkey }, *bad;
	CHECK_RC(ibv_post_send(O.qp[0], &sw, &bad), 0);
	expect_a_wc(IBV_WC_REM_INV_REQ_ERR, what);
	CHECK(ctr(1, "inv_refused") == r0 + 1, "%s: inv_refused %llu, expected %llu", what,
	      (unsigned long long)ctr(1, "inv_refused"), (unsigned long long)r0 + 1);
}

static void t_inv_type1(void)
{
	setup();
	struct ibv_mr *mr = rnic_reg_mr(O.pd[1], O.buf[1], 4096,
					IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND);
	struct ibv_mw *mw = NULL;
	CHECK(mr != NULL, "reg_mr: %s", strerror(errno));
	uint32_t rkey = b_window(O.qp[1], mr, IBV_MW_TYPE_1, &mw);
	inv_refused(rkey, "Send with Invalidate of a type 1 window");
	CHECK_RC(ibv_dealloc_mw(mw), 0);
	CHECK_RC(rnic_dereg_mr(mr), 0);
}

/* A type 2 window bound to B's second QP: a Send with Invalidate that
 * arrives on B's first QP (same PD) may not kill it (IBA 10.6.7.2.2); the
 * window still takes a Write through the second QP. */
static void t_inv_other_qp(void)
{
	setup();
	struct ibv_qp *q2[2] = { 0 };
	for (int i = 0; i < 2; i++) {
		struct ibv_qp_init_attr qa = { .qp_type = IBV_QPT_RC, .send_cq = O.cq[i],
			.recv_cq = O.cq[i], .cap = { .max_send_wr = 4, .max_recv_wr = 4,
						     .max_send_sge = 1, .max_recv_sge = 1 } };
		q2[i] = rnic_create_qp_transport(O.pd[i], &qa, RNIC_TRANSPORT_ROCE);
		CHECK(q2[i] != NULL, "second QPs: %s", strerror(errno));
	}
	const uint32_t psn2[2] = { 0x5000, 0x6000 };
	tpair_roce_connect(q2, R.ctx, psn2, 1, IBV_ACCESS_REMOTE_WRITE, 12, 7);
	struct ibv_mr *mr = rnic_reg_mr(O.pd[1], O.buf[1], 4096, IBV_ACCESS_LOCAL_WRITE |
					IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_MW_BIND);
	struct ibv_mw *mw = NULL;
	CHECK(mr != NULL, "reg_mr: %s", strerror(errno));
	uint32_t rkey = b_window(q2[1], mr, IBV_MW_TYPE_2, &mw);
	inv_refused(rkey, "Send with Invalidate of another QP's type 2 window");
	memset(O.buf[1], 0, 64);
	memset(O.buf[0] + 4096, 0x3c, 64);
	struct ibv_sge s = { (uintptr_t)O.buf[0] + 4096, 64, O.mr[0]->lkey };
	struct ibv_send_wr w = { .wr_id = 70, .sg_list = &s, .num_sge = 1,
				 .opcode = IBV_WR_RDMA_WRITE, .send_flags = IBV_SEND_SIGNALED }, *bad;
	w.wr.rdma.remote_addr = (uintptr_t)O.buf[1];
	w.wr.rdma.rkey = rkey;
	CHECK_RC(ibv_post_send(q2[0], &w, &bad), 0);
	expect_a_wc(IBV_WC_SUCCESS, "Write through the window after the refused invalidate");
	CHECK(memcmp(O.buf[1], O.buf[0] + 4096, 64) == 0, "the Write did not land");
	CHECK_RC(rnic_destroy_qp(q2[0]), 0);
	CHECK_RC(rnic_destroy_qp(q2[1]), 0);
	CHECK_RC(ibv_dealloc_mw(mw), 0);
	CHECK_RC(rnic_dereg_mr(mr), 0);
}

/* RC: the AV's hop limit (TTL over IPv4) and flow label (IPv6) are on
 * every frame the QP sends, hop limit 0 meaning 64; query_qp says them. */
static void t_av_rc(void)
{
	setup();
	static const struct { uint8_t hop, want; uint32_t flow; } av[] = {
		{ 9, 9, 0x12345 }, { 0, 64, 0 }, { 255, 255, 0xfffff },
	};
	for (unsigned k = 0; k < sizeof(av) / sizeof(av[0]); k++) {
		struct ibv_qp_attr at = { .qp_state = IBV_QPS_RESET };
		CHECK_RC(rnic_modify_qp(O.qp[0], &at, IBV_QP_STATE), 0);
		/* B acknowledged everything before: A starts where it ended */
		uint32_t sq = (psn0[0] + k) & 0xffffffu;
		a_connect(sq, psn0[1], av[k].hop, av[k].flow);
		tap.a_frames = 0;
		post_a(false, 8, 0, 10 + k);
		expect_a_wc(IBV_WC_SUCCESS, "Write");
		CHECK(tap.a_frames > 0, "no frame of A seen");
		CHECK(tap.a_hops == av[k].want, "AV hop limit %u: the frame's %s is %u, expected %u",
		      av[k].hop, ipv6 ? "hop limit" : "TTL", tap.a_hops, av[k].want);
		if (!ipv6)
			CHECK(tap.a_cksum_ok, "the IPv4 header checksum is wrong (TTL %u)",
			      tap.a_hops);
		else if (av[k].flow != 0)
			CHECK(tap.a_flow == av[k].flow, "AV flow label %#x: the frame's is %#x",
			      av[k].flow, tap.a_flow);
		else
			CHECK(tap.a_flow != 0, "flow label 0: the frame's must name the QP pair");
		struct ibv_qp_init_attr ia;
		CHECK_RC(rnic_query_qp(O.qp[0], &at, IBV_QP_AV, &ia), 0);
		CHECK(at.ah_attr.grh.hop_limit == av[k].want, "query_qp: hop limit %u, expected %u",
		      at.ah_attr.grh.hop_limit, av[k].want);
		if (ipv6 && av[k].flow != 0)
			CHECK(at.ah_attr.grh.flow_label == av[k].flow,
			      "query_qp: flow label %#x, expected %#x", at.ah_attr.grh.flow_label,
			      av[k].flow);
	}
}

/* UD: the AH's hop limit and flow label are on the datagram. */
static void t_av_ud(void)
{
	struct ibv_qp *q[2] = { 0 };
	struct ibv_ah *ah = NULL;
	setup();
	const uint32_t qkey = 0x11111111u;
	for (int i = 0; i < 2; i++) {
		struct ibv_qp_init_attr qa = { .qp_type = IBV_QPT_UD, .send_cq = O.cq[i],
			.recv_cq = O.cq[i], .cap = { .max_send_wr = 4, .max_recv_wr = 4,
						     .max_send_sge = 1, .max_recv_sge = 1 } };
		q[i] = rnic_create_qp_transport(O.pd[i], &qa, RNIC_TRANSPORT_ROCE);
		if (q[i] == NULL)
			goto out;
		struct ibv_qp_attr at = { .qp_state = IBV_QPS_INIT, .port_num = 1, .qkey = qkey };
		CHECK_RC(rnic_modify_qp(q[i], &at, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
					IBV_QP_QKEY), 0);
		at = (struct ibv_qp_attr){ .qp_state = IBV_QPS_RTR };
		CHECK_RC(rnic_modify_qp(q[i], &at, IBV_QP_STATE), 0);
		at = (struct ibv_qp_attr){ .qp_state = IBV_QPS_RTS, .sq_psn = 1 };
		CHECK_RC(rnic_modify_qp(q[i], &at, IBV_QP_STATE | IBV_QP_SQ_PSN), 0);
	}
	union ibv_gid gid;
	CHECK_RC(rnic_query_gid(R.ctx[1], 1, 1, &gid), 0);
	struct ibv_ah_attr aa = { .is_global = 1, .port_num = 1,
				  .grh = { .dgid = gid, .sgid_index = 1, .hop_limit = 5,
					   .flow_label = 0xabcde } };
	ah = rnic_create_ah(O.pd[0], &aa);
	CHECK(ah != NULL, "create_ah: %s", strerror(errno));
	struct ibv_sge rs = { (uintptr_t)O.buf[1], 64 + 40, O.mr[1]->lkey };
	struct ibv_recv_wr rw = { .wr_id = 5, .sg_list = &rs, .num_sge = 1 };
	struct ibv_recv_wr *rbad = NULL;
	CHECK_RC(ibv_post_recv(q[1], &rw, &rbad), 0);
	struct ibv_sge ss = { (uintptr_t)O.buf[0], 64, O.mr[0]->lkey };
	struct ibv_send_wr sw = { .wr_id = 6, .sg_list = &ss, .num_sge = 1,
				  .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED };
	sw.wr.ud.ah = ah;
	sw.wr.ud.remote_qpn = q[1]->qp_num;
	sw.wr.ud.remote_qkey = qkey;
	struct ibv_send_wr *sbad = NULL;
	tap.a_frames = 0;
	CHECK_RC(ibv_post_send(q[0], &sw, &sbad), 0);
	struct ibv_wc wc;
	int n = wait_wc(O.cq[1], &wc, 1);
	CHECK(n == 1 && wc.status == IBV_WC_SUCCESS && wc.wr_id == 5,
	      "the datagram's receive: %d completions, %s", n,
	      n ? rnic_wc_status_str(wc.status) : "-");
	CHECK(tap.a_frames > 0, "no frame of A seen");
	CHECK(tap.a_hops == 5, "AH hop limit 5: the datagram's %s is %u", ipv6 ? "hop limit" : "TTL",
	      tap.a_hops);
	if (ipv6)
		CHECK(tap.a_flow == 0xabcde, "AH flow label 0xabcde: the datagram's is %#x",
		      tap.a_flow);
	else
		CHECK(tap.a_cksum_ok, "the IPv4 header checksum is wrong");
out:
	if (ah != NULL)
		rnic_destroy_ah(ah);
	for (int i = 0; i < 2; i++)
		if (q[i] != NULL)
			CHECK_RC(rnic_destroy_qp(q[i]), 0);
	CHECK(q[0] && q[1], "UD QPs not made: %s", strerror(errno));
}

/* tpair_up() for IPv6-only ports: 2001:db8:27::1 and ::2 (/64). */
static int up6(struct tpair *p, const struct rnic_config *base)
{
	char n[4][64];
	snprintf(n[0], sizeof(n[0]), "%s.a", p->ring[0]);
	snprintf(n[1], sizeof(n[1]), "%s.b", p->ring[0]);
	snprintf(n[2], sizeof(n[2]), "%s.b", p->ring[1]);
	snprintf(n[3], sizeof(n[3]), "%s.a", p->ring[1]);
	p->a_tx = rnic_ring_pair_tx(n[0], 0);
	p->a_rx = rnic_ring_pair_tx(n[1], 0);
	p->b_tx = rnic_ring_pair_tx(n[2], 0);
	p->b_rx = rnic_ring_pair_tx(n[3], 0);
	if (!p->a_tx || !p->a_rx || !p->b_tx || !p->b_rx)
		return -1;
	for (int s = 0; s < 2; s++) {
		struct rnic_config c = *base;
		c.n_eal_args = 0;
		c.n_ports = 1;
		c.workers = p->workers;
		struct rnic_port_cfg *pc = &c.ports[0];
		rnic_port_cfg_init(pc);
		snprintf(pc->ring, sizeof(pc->ring), "%s.%c", p->ring[s], s ? 'b' : 'a');
		pc->ip = 0;
		static const uint8_t a6[16] = { 0x20, 0x01, 0x0d, 0xb8, 0, 0x27 };
		memcpy(pc->ip6[0].addr, a6, 16);
		pc->ip6[0].addr[15] = (uint8_t)(s + 1);
		pc->ip6[0].prefix_len = 64;
		pc->n_ip6 = 1;
		pc->mbufs = p->mbufs;
		p->st[s] = rnic_stack_create(&c);
		if (p->st[s] == NULL)
			return -1;
	}
	for (int s = 0; s < 2; s++) {
		p->ctx[s] = rnic_open_device(p->st[s]);
		if (p->ctx[s] == NULL)
			return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	const char *filter = argc > 1 ? argv[1] : NULL;
	struct rnic_config c;
	struct tpair *pairs[] = { &R };
	if (tpair_init(argv[0], &c, 2, pairs, 1) != 0)
		return 1;
	ipv6 = getenv("RNIC_TEST_IPV6") && strcmp(getenv("RNIC_TEST_IPV6"), "0") != 0;
	if (ipv6 ? up6(&R, &c) != 0 : tpair_up(&R, &c) != 0) {
		fprintf(stderr, "stacks: %s\n", R.why);
		return 1;
	}
	static const struct {
		const char *name;
		void (*fn)(void);
		bool (*cleanup)(void);
	} cases[] = {
		{ "read_middle_no_first", t_read_middle_no_first },
		{ "read_cut_short", t_read_cut_short },
		{ "read_only_for_first", t_read_only_for_first },
		{ "read_restart_ok", t_read_restart_ok },
		{ "nak_reserved_code", t_nak_reserved_code },
		{ "ack_never_sent", t_ack_never_sent },
		{ "dup_read_ghost", t_dup_read_ghost },
		{ "write_huge_dma_len", t_write_huge_dma_len },
		{ "psn_far_ahead", t_psn_far_ahead },
		{ "write_zero_len", t_write_zero_len },
		{ "write_bad_pad", t_write_bad_pad },
		{ "atomic_ack_psn", t_atomic_ack_psn },
		{ "ud_op_to_rc", t_ud_op_to_rc },
		{ "reset_live", t_reset_live },
		{ "reset_live_iwarp", t_reset_live_iwarp, iw_cleanup },
		{ "inv_type1", t_inv_type1 },
		{ "inv_other_qp", t_inv_other_qp },
		{ "av_rc", t_av_rc },
		{ "av_ud", t_av_ud },
	};
	double t0 = now_s();
	/* IPv6: duplicate address detection of the global addresses first
	 * (RFC 4862: one second), or the first packets wait on tentative ones */
	while (ipv6 && now_s() - t0 < 1.5)
		step();
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		if (case_selected(cases[i].name, ipv6 ? "av_" : filter))
			case_run(cases[i].name, cases[i].fn,
				 cases[i].cleanup ? cases[i].cleanup : case_cleanup);
	tpair_down(&R);
	rte_eal_cleanup();
	return case_summary("roce_hostile", now_s() - t0);
}
