/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer harness: a RoCEv2 conversation between a whole rnic stack (net,
 * UDP, lib/roce requester, responder and completer, verbs) and a scripted
 * peer whose packets come from the input (issue 27, Deliver 5).
 *
 * The world (conv_peer.h): one stack on a net_ring port driven by this
 * thread; the peer at 192.0.2.2 answers ARP. The application registers, in
 * one buffer with canary gaps between them:
 *   RW    8 KiB  LOCAL_WRITE | REMOTE_WRITE | REMOTE_READ | REMOTE_ATOMIC,
 *                its rkey and address are the peer's to use
 *   LOCAL 4 KiB  LOCAL_WRITE only, never advertised
 *   SINK  4 KiB  LOCAL_WRITE: the sink of the application's RDMA Read
 *   RECV  8 KiB  LOCAL_WRITE: four posted 2 KiB receives
 *   SRC   1 KiB  the source of the application's Writes and Sends
 *
 * One input, one connection (direct QP setup, as the integration pairs do):
 * a QP is made and moved INIT -> RTR (the peer's QPN, the input's first
 * PSN, path MTU 1024) -> RTS (the input's send PSN); the receives and an
 * RDMA Read of the peer's memory (1..4096 bytes, the input's length) are
 * posted, and a Write when flags bit 0 is set. Then the input is a list of
 * actions (first byte the kind, fields after it, each relative to what a
 * correct peer would send: the PSN it expects, the Read's PSN and chunk,
 * the region's address and rkey):
 *   0 Write (first/middle/last/only, with immediate)   5 ACK / NAK / RNR NAK
 *   1 Send (with immediate, with invalidate)            6 Atomic ACK
 *   2 RDMA Read Request                                 7 let the stack run
 *   3 Atomic (compare-swap, fetch-add)                  8 the app posts a Write
 *   4 Read Response to the outstanding Read             9 a raw BTH opcode
 * ("run": worker loops, or up to 6 ms of real time, 20 ms per input, so
 * the 1 ms local ACK timeout that flags bit 1 chooses fires)
 * any of which may have one header byte flipped (the ICRC is made good
 * after). The peer follows the stack: its expected PSN from the stack's
 * ACKs and sequence NAKs, the Read Request's PSN and length.
 *
 * Oracles (abort), besides the sanitizers: no byte of the buffer outside
 * RW, RECV and the Read's [0, length) of SINK changes (LOCAL, SRC, the rest
 * of SINK and every canary gap); a Read that completes successfully holds
 * exactly the peer's source bytes; after the QP is destroyed both mbuf
 * pools are back at their baselines; the worker loop settles (bounded
 * loops per input). Every frame the stack sends fits the MTU.
 */
#include <rte_byteorder.h>

#include "rnic/rnic_roce.h"
#include "roce/icrc.h"
#include "roce/roce.h"
#include "roce/roce_wire.h"
#include "conv_peer.h"

#define PEER_QPN   0x00abcdu
#define PEER_VA    0x7f0000100000ull   /* the peer's memory, for our Read */
#define PEER_RKEY  0x1234u
#define MTU        1024u
#define MAX_ACTIONS 64

static const int reg_acc[R_N] = {
	IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
		IBV_ACCESS_REMOTE_ATOMIC,
	IBV_ACCESS_LOCAL_WRITE, IBV_ACCESS_LOCAL_WRITE, IBV_ACCESS_LOCAL_WRITE,
	IBV_ACCESS_LOCAL_WRITE,
};

/* IBA RC opcodes the peer uses (Table 38). */
enum {
	OP_SEND_FIRST = 0x00, OP_SEND_MIDDLE = 0x01, OP_SEND_LAST = 0x02,
	OP_SEND_LAST_IMM = 0x03, OP_SEND_ONLY = 0x04, OP_SEND_ONLY_IMM = 0x05,
	OP_WRITE_FIRST = 0x06, OP_WRITE_MIDDLE = 0x07, OP_WRITE_LAST = 0x08,
	OP_WRITE_LAST_IMM = 0x09, OP_WRITE_ONLY = 0x0a, OP_WRITE_ONLY_IMM = 0x0b,
	OP_READ_REQ = 0x0c, OP_READ_FIRST = 0x0d, OP_READ_MIDDLE = 0x0e,
	OP_READ_LAST = 0x0f, OP_READ_ONLY = 0x10, OP_ACK = 0x11, OP_ATOMIC_ACK = 0x12,
	OP_CMP_SWAP = 0x13, OP_FETCH_ADD = 0x14, OP_SEND_LAST_INV = 0x16,
	OP_SEND_ONLY_INV = 0x17,
};


/* The peer's view of the conversation. */
static struct {
	uint32_t stack_qpn;
	uint32_t epsn;           /* the PSN the stack's responder expects next */
	uint32_t req_psn;        /* the stack's last request packet */
	bool req_seen;
	bool rd_seen;            /* the stack's Read Request, as seen */
	uint32_t rd_psn, rd_len;
	uint64_t rd_va;
	uint32_t msn;
} P;

static inline uint32_t
psn_add(uint32_t psn, int32_t d)
{
	return (uint32_t)((int64_t)psn + d) & 0xffffffu;
}

/* The headers after the BTH an opcode carries. */
static size_t
ext_len(uint8_t op)
{
	switch (op) {
	case OP_WRITE_FIRST: case OP_WRITE_ONLY: case OP_READ_REQ:
		return 16;
	case OP_WRITE_ONLY_IMM:
		return 20;
	case OP_SEND_LAST_IMM: case OP_SEND_ONLY_IMM: case OP_WRITE_LAST_IMM:
	case OP_SEND_LAST_INV: case OP_SEND_ONLY_INV:
		return 4;
	case OP_READ_FIRST: case OP_READ_LAST: case OP_READ_ONLY: case OP_ACK:
		return 4;
	case OP_ATOMIC_ACK:
		return 12;
	case OP_CMP_SWAP: case OP_FETCH_ADD:
		return 28;
	default:
		return 0;
	}
}

/* What the stack sends to the peer's QP: follow its requests (Read
 * Request PSN and length, last request PSN) and its ACKs of ours. */
static void
roce_frame(const uint8_t *f, size_t len)
{
	const size_t bth_off = CONV_L2L3 + sizeof(struct rte_udp_hdr);
	const struct rte_ipv4_hdr *ip = (const void *)(f + sizeof(struct rte_ether_hdr));
	const struct rnic_roce_bth *bth = (const void *)(f + bth_off);
	uint8_t op;
	uint32_t psn;

	if (len < bth_off + RNIC_ROCE_BTH_LEN + 4 || ip->next_proto_id != IPPROTO_UDP ||
	    (ip->version_ihl & 0x0f) != 5)
		return;
	if (rnic_roce_bth_dqpn(bth) != PEER_QPN)
		return;
	op = rnic_roce_bth_opcode(bth);
	psn = rnic_roce_bth_psn(bth);
	if (op == OP_READ_REQ && len >= bth_off + RNIC_ROCE_BTH_LEN + 16) {
		const struct rnic_roce_reth *r = (const void *)(bth + 1);

		P.rd_seen = true;
		P.rd_psn = psn;
		P.rd_va = rnic_roce_reth_va(r);
		P.rd_len = rnic_roce_reth_len(r);
		P.req_psn = psn;
		P.req_seen = true;
	} else if (op <= OP_WRITE_ONLY_IMM || op == OP_CMP_SWAP || op == OP_FETCH_ADD) {
		P.req_psn = psn;
		P.req_seen = true;
	} else if (op == OP_ACK && len >= bth_off + RNIC_ROCE_BTH_LEN + 4) {
		const struct rnic_roce_aeth *a = (const void *)(bth + 1);
		uint8_t syn = rnic_roce_aeth_syndrome(a);

		if ((syn & RNIC_ROCE_AETH_TYPE_MASK) == RNIC_ROCE_AETH_TYPE_ACK)
			P.epsn = psn_add(psn, 1);
		else if (syn == rnic_roce_syndrome_nak(RNIC_ROCE_NAK_PSN_SEQ_ERR))
			P.epsn = psn;
	}
}

/*
 * Build and send one packet: BTH (@p op, @p psn, AckReq), @p ext bytes of
 * extension headers, @p plen payload bytes from @p pay (NULL: the
 * pattern), pad, ICRC. @p mut: bit 7 set flips header byte (mut & 0x3f)
 * of UDP..ext by @p x.
 */
static void
roce_send(uint8_t op, uint32_t psn, bool ackreq, const uint8_t *ext, size_t elen,
	  const uint8_t *pay, size_t plen, uint8_t mut, uint8_t x)
{
	uint8_t f[2048];
	size_t pad = (4 - (plen & 3)) & 3;
	size_t l4 = sizeof(struct rte_udp_hdr) + RNIC_ROCE_BTH_LEN + elen + plen + pad + 4;
	struct rte_ipv4_hdr *ip;
	struct rte_udp_hdr *uh;
	struct rnic_roce_bth *bth;
	uint8_t *p;

	if (CONV_L2L3 + l4 > sizeof(f))
		return;
	ip = conv_ipv4(f, IPPROTO_UDP, l4);
	uh = (void *)(ip + 1);
	uh->src_port = rte_cpu_to_be_16(0xc000);
	uh->dst_port = rte_cpu_to_be_16(RNIC_ROCE_UDP_PORT);
	uh->dgram_len = rte_cpu_to_be_16((uint16_t)l4);
	uh->dgram_cksum = 0;
	bth = (void *)(uh + 1);
	memset(bth, 0, sizeof(*bth));
	rnic_roce_bth_set_opcode(bth, op);
	rnic_roce_bth_set_pad(bth, (unsigned)pad);
	rnic_roce_bth_set_pkey(bth, RNIC_ROCE_PKEY_DEFAULT);
	rnic_roce_bth_set_dqpn(bth, P.stack_qpn);
	rnic_roce_bth_set_ackreq(bth, ackreq);
	rnic_roce_bth_set_psn(bth, psn);
	p = (uint8_t *)(bth + 1);
	memcpy(p, ext, elen);
	p += elen;
	for (size_t i = 0; i < plen; i++)
		p[i] = pay != NULL ? pay[i] : (uint8_t)(i * 13 + op);
	memset(p + plen, 0, pad);
	if (mut & 0x80) {
		size_t at = (mut & 0x3f) % (sizeof(*uh) + RNIC_ROCE_BTH_LEN + elen);
		((uint8_t *)uh)[at] ^= x;
	}
	FUZZ_CHECK(rnic_roce_icrc_generate(ip, (uint32_t)l4 + sizeof(*ip)) == 0);
	conv_send(f, CONV_L2L3 + l4);
}

static void
put32(uint8_t *p, uint32_t v)
{
	v = rte_cpu_to_be_32(v);
	memcpy(p, &v, 4);
}

static void
put64(uint8_t *p, uint64_t v)
{
	v = rte_cpu_to_be_64(v);
	memcpy(p, &v, 8);
}

/* The PSN of a request: the expected one, or one off by an input delta. */
static uint32_t
pick_psn(struct fuzz_in *in, uint8_t sub, bool *in_seq)
{
	if (sub & 0x80) {
		*in_seq = false;
		return psn_add(P.epsn, (int8_t)fuzz_u8(in));
	}
	*in_seq = true;
	return P.epsn;
}

static void
act_write(struct fuzz_in *in)
{
	static const uint8_t ops[] = { OP_WRITE_ONLY, OP_WRITE_FIRST, OP_WRITE_MIDDLE,
				       OP_WRITE_LAST, OP_WRITE_ONLY_IMM, OP_WRITE_LAST_IMM };
	uint8_t sub = fuzz_u8(in), mut = fuzz_u8(in), x = fuzz_u8(in);
	uint8_t op = ops[(sub & 7) % sizeof(ops)];
	uint8_t ext[20] = { 0 };
	unsigned reg;
	uint32_t rkey = conv_pick_key(in, &reg);
	uint64_t va = conv_pick_addr(in, reg);
	size_t plen = fuzz_u16(in) % (MTU + 64);
	uint32_t dlen = (sub & 0x40) ? fuzz_u32(in) : (uint32_t)plen;
	bool seq;
	uint32_t psn = pick_psn(in, sub, &seq);
	size_t el = ext_len(op);

	put64(ext, va);
	put32(ext + 8, rkey);
	put32(ext + 12, dlen);
	if (op == OP_WRITE_ONLY_IMM)
		put32(ext + 16, 0xfeedf00d);
	else if (op == OP_WRITE_LAST_IMM)
		put32(ext, 0xfeedf00d);
	roce_send(op, psn, sub & 0x20, ext, el, NULL, plen, mut, x);
	if (seq)
		P.epsn = psn_add(P.epsn, 1);
}

static void
act_send(struct fuzz_in *in)
{
	static const uint8_t ops[] = { OP_SEND_ONLY, OP_SEND_FIRST, OP_SEND_MIDDLE, OP_SEND_LAST,
				       OP_SEND_ONLY_IMM, OP_SEND_LAST_IMM, OP_SEND_ONLY_INV,
				       OP_SEND_LAST_INV };
	uint8_t sub = fuzz_u8(in), mut = fuzz_u8(in), x = fuzz_u8(in);
	uint8_t op = ops[(sub & 7) % sizeof(ops)];
	uint8_t ext[4];
	size_t plen = fuzz_u16(in) % (MTU + 64);
	bool seq;
	uint32_t psn;
	unsigned reg;

	if (op == OP_SEND_ONLY_INV || op == OP_SEND_LAST_INV)
		put32(ext, conv_pick_key(in, &reg));
	else
		put32(ext, 0x600dcafe);
	psn = pick_psn(in, sub, &seq);
	roce_send(op, psn, sub & 0x20, ext, ext_len(op), NULL, plen, mut, x);
	if (seq)
		P.epsn = psn_add(P.epsn, 1);
}

static void
act_read_req(struct fuzz_in *in)
{
	uint8_t sub = fuzz_u8(in), mut = fuzz_u8(in), x = fuzz_u8(in);
	uint8_t ext[16];
	unsigned reg;
	uint32_t rkey = conv_pick_key(in, &reg);
	uint64_t va = conv_pick_addr(in, reg);
	uint32_t len = (sub & 0x40) ? fuzz_u32(in) : fuzz_u16(in) % 10000u;
	bool seq;
	uint32_t psn = pick_psn(in, sub, &seq);

	put64(ext, va);
	put32(ext + 8, rkey);
	put32(ext + 12, len);
	roce_send(OP_READ_REQ, psn, true, ext, 16, NULL, 0, mut, x);
	if (seq)
		P.epsn = psn_add(P.epsn, len == 0 ? 1 : (int32_t)((len + MTU - 1) / MTU));
}

static void
act_atomic(struct fuzz_in *in)
{
	uint8_t sub = fuzz_u8(in), mut = fuzz_u8(in), x = fuzz_u8(in);
	uint8_t ext[28];
	unsigned reg;
	uint32_t rkey = conv_pick_key(in, &reg);
	uint64_t va = conv_pick_addr(in, reg);
	bool seq;
	uint32_t psn;

	if (!(sub & 0x40))
		va &= ~7ull;
	put64(ext, va);
	put32(ext + 8, rkey);
	put64(ext + 12, fuzz_u32(in));
	put64(ext + 20, fuzz_u32(in));
	psn = pick_psn(in, sub, &seq);
	roce_send((sub & 1) ? OP_FETCH_ADD : OP_CMP_SWAP, psn, true, ext, 28, NULL, 0, mut, x);
	if (seq)
		P.epsn = psn_add(P.epsn, 1);
}

/* Read Response chunk k of the stack's Read: the right opcode, length and
 * bytes for k unless the input says otherwise. */
static void
act_read_resp(struct fuzz_in *in)
{
	static const uint8_t ops[] = { OP_READ_FIRST, OP_READ_MIDDLE, OP_READ_LAST,
				       OP_READ_ONLY };
	uint8_t sub = fuzz_u8(in), mut = fuzz_u8(in), x = fuzz_u8(in);
	uint8_t kk = fuzz_u8(in);
	uint32_t n, k, len;
	uint8_t op, ext[4], pay[MTU + 64];
	size_t plen;
	uint64_t src;

	if (!P.rd_seen)
		return;
	len = P.rd_len;
	n = len == 0 ? 1 : (len + MTU - 1) / MTU;
	if (n > 64)
		n = 64;
	k = kk % (n + 1);
	if (n == 1)
		op = OP_READ_ONLY;
	else
		op = k == 0 ? OP_READ_FIRST : k + 1 >= n ? OP_READ_LAST : OP_READ_MIDDLE;
	if (sub & 0x40)
		op = ops[(sub >> 2) % 4];
	plen = (uint64_t)k * MTU < len ? RTE_MIN((uint64_t)MTU, len - (uint64_t)k * MTU) : 0;
	if (sub & 0x10)
		plen = fuzz_u16(in) % (MTU + 64);
	/* the peer's bytes at the offset this chunk stands for */
	src = P.rd_va - PEER_VA + (uint64_t)k * MTU;
	for (size_t i = 0; i < plen; i++)
		pay[i] = conv_src(src + i);
	put32(ext, ((sub & 0x08) ? (uint32_t)fuzz_u8(in) << 24 : 0x1fu << 24) |
		   (P.msn++ & 0xffffffu));
	roce_send(op, psn_add(P.rd_psn, (int32_t)k + ((sub & 0x80) ? (int8_t)fuzz_u8(in) : 0)),
		  false, ext, ext_len(op), pay, plen, mut, x);
}

/* An ACK, NAK or RNR NAK of the stack's requests. */
static void
act_ack(struct fuzz_in *in)
{
	uint8_t sub = fuzz_u8(in), mut = fuzz_u8(in), x = fuzz_u8(in);
	uint8_t syn, ext[4];
	uint32_t psn;

	switch (sub & 7) {
	case 0: case 1: syn = 0x1f; break;                          /* ACK */
	case 2: syn = rnic_roce_syndrome_nak(RNIC_ROCE_NAK_PSN_SEQ_ERR); break;
	case 3: syn = (uint8_t)(0x20 | (sub >> 3)); break;          /* RNR NAK */
	case 4: syn = (uint8_t)(0x60 | ((sub >> 3) & 3)); break;    /* NAK codes */
	default: syn = fuzz_u8(in); break;
	}
	psn = psn_add(P.req_psn, (sub & 0x80) ? (int8_t)fuzz_u8(in) : 0);
	put32(ext, (uint32_t)syn << 24 | (P.msn++ & 0xffffffu));
	roce_send(OP_ACK, psn, false, ext, 4, NULL, 0, mut, x);
}

static void
act_atomic_ack(struct fuzz_in *in)
{
	uint8_t sub = fuzz_u8(in), mut = fuzz_u8(in), x = fuzz_u8(in);
	uint8_t ext[12];

	put32(ext, 0x1fu << 24 | (P.msn++ & 0xffffffu));
	put64(ext + 4, fuzz_u32(in));
	roce_send(OP_ATOMIC_ACK, psn_add(P.req_psn, (sub & 0x80) ? (int8_t)fuzz_u8(in) : 0),
		  false, ext, 12, NULL, 0, mut, x);
}

/* Any opcode, with extension header and payload bytes from the input. */
static void
act_raw(struct fuzz_in *in)
{
	uint8_t op = fuzz_u8(in), mut = fuzz_u8(in), x = fuzz_u8(in);
	size_t el = fuzz_u8(in) % 32, got, pg;
	uint8_t ext[32] = { 0 };
	const uint8_t *e = fuzz_bytes(in, el, &got);
	const uint8_t *pay;
	bool seq;

	memcpy(ext, e, got);
	pay = fuzz_bytes(in, fuzz_u8(in), &pg);
	roce_send(op, pick_psn(in, mut, &seq), true, ext, el, pay, pg, mut & 0x7f, x);
}

/* The application posts a signaled Write of 64 bytes from SRC to the peer. */
static void
app_write(uint64_t id)
{
	conv_app_write(id, PEER_VA + 0x10000, PEER_RKEY);
}

int LLVMFuzzerInitialize(int *argc, char ***argv);

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	conv_init("fconvroce", RNIC_TRANSPORT_ROCE);
	C.on_frame = roce_frame;
	conv_app_init(reg_acc);
	conv_mbufs(&C.stack_base, &C.peer_base);
	return 0;
}

/* A QP towards the peer, with the input's PSNs and local ACK timeout
 * (14: 67 ms, longer than an input; 8: 1 ms, so waits see it fire). */
static struct ibv_qp *
qp_up(uint32_t rq_psn, uint32_t sq_psn, uint8_t timeout)
{
	struct ibv_qp_init_attr qa = { .qp_type = IBV_QPT_RC, .send_cq = cq, .recv_cq = cq,
		.cap = { .max_send_wr = 32, .max_recv_wr = 8, .max_send_sge = 1,
			 .max_recv_sge = 1 } };
	struct ibv_qp *q = rnic_create_qp_transport(pd, &qa, RNIC_TRANSPORT_ROCE);
	union ibv_gid dgid = { .raw = { [10] = 0xff, [11] = 0xff, 192, 0, 2, 2 } };
	struct ibv_qp_attr at = { .qp_state = IBV_QPS_INIT, .port_num = 1,
				  .qp_access_flags = IBV_ACCESS_REMOTE_WRITE |
						     IBV_ACCESS_REMOTE_READ |
						     IBV_ACCESS_REMOTE_ATOMIC };

	FUZZ_CHECK(q != NULL);
	FUZZ_CHECK(rnic_modify_qp(q, &at, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
				  IBV_QP_ACCESS_FLAGS) == 0);
	at = (struct ibv_qp_attr){
		.qp_state = IBV_QPS_RTR, .path_mtu = IBV_MTU_1024, .dest_qp_num = PEER_QPN,
		.rq_psn = rq_psn, .max_dest_rd_atomic = 4, .min_rnr_timer = 1,
		.ah_attr = { .is_global = 1, .port_num = 1,
			     .grh = { .dgid = dgid, .sgid_index = 1, .hop_limit = 64 } },
	};
	FUZZ_CHECK(rnic_modify_qp(q, &at, RNIC_QP_RTR_MASK) == 0);
	at = (struct ibv_qp_attr){ .qp_state = IBV_QPS_RTS, .timeout = timeout, .retry_cnt = 7,
				   .rnr_retry = 7, .sq_psn = sq_psn, .max_rd_atomic = 4 };
	FUZZ_CHECK(rnic_modify_qp(q, &at, RNIC_QP_RTS_MASK) == 0);
	return q;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_in in;
	uint8_t flags;
	uint32_t rq_psn, sq_psn, rd_len, rd_off;
	bool read_ok = false, read_done = false;
	enum ibv_wc_status read_st = IBV_WC_SUCCESS;
	struct ibv_wc wc[16];

	fuzz_in_init(&in, data, size);
	flags = fuzz_u8(&in);
	rq_psn = fuzz_u32(&in) & 0xffffffu;
	sq_psn = fuzz_u32(&in) & 0xffffffu;
	rd_len = 1 + fuzz_u16(&in) % (uint32_t)reg_len[R_SINK];
	rd_off = fuzz_u8(&in);
	memset(&P, 0, sizeof(P));
	P.epsn = rq_psn;
	C.loops = 0;
	C.waited = 0;
	app_posts = 0;

	qp = qp_up(rq_psn, sq_psn, (flags & 2) ? 8 : 14);
	P.stack_qpn = qp->qp_num;
	conv_post_recvs();
	conv_post_read(rd_len, PEER_VA + rd_off, PEER_RKEY);
	if (flags & 1)
		app_write(2);
	conv_run(64);

	for (unsigned a = 0; a < MAX_ACTIONS && fuzz_in_left(&in) > 0; a++) {
		switch (fuzz_u8(&in) % 10) {
		case 0: act_write(&in); break;
		case 1: act_send(&in); break;
		case 2: act_read_req(&in); break;
		case 3: act_atomic(&in); break;
		case 4: act_read_resp(&in); break;
		case 5: act_ack(&in); break;
		case 6: act_atomic_ack(&in); break;
		case 7: {   /* let the stack run: loops, or real time (timers) */
			uint8_t t = fuzz_u8(&in);

			if (t & 0x80)
				conv_wait_us((t & 0x7fu) * 50u);
			else
				conv_run(1 + t % 16);
			continue;
		}
		case 8:
			if (app_posts++ < 8)
				app_write(10 + app_posts);
			break;
		default: act_raw(&in); break;
		}
		conv_run(4);
	}
	conv_run(256);

	/* What completed before the teardown: the Read's status */
	conv_read_result(rd_off, rd_len, &read_done, &read_ok, &read_st);
	if (conv_debug)
		fprintf(stderr, "conv_roce: Read of %u %s (%s), stack's Read Request %s (PSN %u, "
			"length %u), expected PSN %u, %u loops\n", rd_len,
			read_done ? (read_ok ? "succeeded" : "failed") : "not completed",
			rnic_wc_status_str(read_st), P.rd_seen ? "seen" : "not seen", P.rd_psn,
			P.rd_len, P.epsn, C.loops);
	if (conv_debug) {   /* the counters that moved so far (process totals) */
		uint64_t v;
#define PRINT_CTR(c) \
		if (rnic_roce_counter(C.st, #c, &v) == 0 && v != 0) \
			fprintf(stderr, "  %s %llu\n", #c, (unsigned long long)v);
		ROCE_COUNTERS(PRINT_CTR)
#undef PRINT_CTR
	}

	/* teardown: error, flush, destroy */
	{
		struct ibv_qp_attr at = { .qp_state = IBV_QPS_ERR };

		FUZZ_CHECK(rnic_modify_qp(qp, &at, IBV_QP_STATE) == 0);
	}
	conv_run(64);
	while (ibv_poll_cq(cq, 16, wc) > 0)
		;
	FUZZ_CHECK(rnic_destroy_qp(qp) == 0);
	qp = NULL;
	while (ibv_poll_cq(cq, 16, wc) > 0)
		;
	conv_app_end(rd_len);
	return 0;
}
