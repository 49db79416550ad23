/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer harness: an iWARP conversation between a whole rnic stack (net,
 * lib/tcp, MPA, DDP/RDMAP placement and completions, the CM, verbs) and a
 * scripted peer whose segments come from the input (issue 27, Deliver 5).
 *
 * The world (conv_peer.h): one stack on a net_ring port driven by this
 * thread; the peer at 192.0.2.2 answers ARP. The application listens on
 * TCP port 9300 (rnic_cm_listen) and registers, in one buffer with canary
 * gaps between them:
 *   RW    8 KiB  LOCAL_WRITE | REMOTE_WRITE | REMOTE_READ: the peer's to use
 *   LOCAL 4 KiB  LOCAL_WRITE only, never advertised
 *   SINK  4 KiB  LOCAL_WRITE: the sink of the application's RDMA Read
 *   RECV  8 KiB  four posted 2 KiB receives
 *   SRC   1 KiB  the source of the application's Writes
 *
 * One input, one connection. The peer opens it as an initiator would: SYN
 * (MSS, window scale, SACK-permitted, timestamps as the input's first
 * byte chooses, the MSS value from the input), the ACK with an MPA v2
 * request (CRC, no markers, no RTR); the application accepts the
 * CONNECT_REQUEST with a fresh QP, posts the receives and an RDMA Read of
 * the peer's memory (1..4096 bytes), optionally a Write. The peer follows
 * the stack's sequence numbers, timestamps and its FPDU stream (MPA reply,
 * Read Request: sink STag, TO and size) and acknowledges what it gets.
 * Then the input is a list of actions, each relative to what a correct
 * peer would send (the next sequence number and MSN, the Read's sink STag
 * and TO, the region's STag and address):
 *   0 tagged RDMA Write           5 raw ULPDU (any DDP/RDMAP bytes), framed
 *   1 RDMA Read Request           6 ACK: fuzzed ack number, window, SACK
 *   2 Read Response to our Read   7 FIN or RST
 *   3 Send (SE, Invalidate)       8 let the stack run
 *   4 Terminate                   9 the application posts a Write
 * ("run": worker loops, or up to 6 ms of real time, 20 ms per input)
 * A message action frames one ULPDU into an FPDU (CRC made good unless
 * the input breaks it or its length) and delivers it whole, split in two,
 * split and reordered, duplicated, or at a sequence number off by an input
 * delta (the peer then does not count it as sent).
 *
 * Oracles (abort), besides the sanitizers: no byte outside RW, RECV and the
 * Read's [0, length) of SINK changes (LOCAL, SRC, the rest of SINK and the
 * canary gaps); a Read that completes successfully holds exactly the peer's
 * source bytes; after the peer's reset and the application's teardown both
 * mbuf pools are back at their baselines; the loop settles (bounded worker
 * loops per input); every frame the stack sends fits the MTU.
 */
#include <sys/uio.h>
#include <rte_byteorder.h>

#include "iwarp/crc32c.h"
#include "iwarp/fpdu.h"
#include "iwarp/iwarp_wire.h"
#include "iwarp/mpa.h"
#include "rnic/rnic_cm.h"
#include "conv_peer.h"

#define LISTEN_PORT 9300
#define PEER_VA     0x7f0000100000ull   /* the peer's memory, for our Read */
#define PEER_STAG   0x00123400u
#define MAX_ACTIONS 48
#define CHUNK       1024u               /* the peer's Read Response segments */
#define RX_MAX      (64u * 1024u)       /* the stack's stream the peer keeps */

static const int reg_acc[R_N] = {
	IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ,
	IBV_ACCESS_LOCAL_WRITE, IBV_ACCESS_LOCAL_WRITE, IBV_ACCESS_LOCAL_WRITE,
	IBV_ACCESS_LOCAL_WRITE,
};

static struct rnic_cm_channel *ch;
static struct rnic_cm_id *lid;
static uint16_t next_port = 1024;

/* The peer's side of the TCP connection and of the MPA stream. */
static struct {
	uint16_t sport;
	uint32_t snd_nxt;        /* next sequence number the peer sends */
	uint32_t rcv_nxt;        /* next one it expects from the stack */
	uint32_t stack_ack;      /* the stack's last acknowledgment */
	bool synack, ts, reset, ack_due;
	uint32_t ts_recent, ts_val;
	/* the stack's byte stream, from its first data byte */
	uint8_t rx[RX_MAX];
	uint32_t rx_len, rx_parsed;
	bool mpa_reply;          /* the MPA reply has been taken */
	bool rd_seen;            /* the stack's Read Request */
	uint32_t rd_sink_stag, rd_size, rd_src_stag;
	uint64_t rd_sink_to, rd_src_to;
	unsigned terms;          /* Terminates the stack sent */
	/* the peer's framing */
	struct rnic_fpdu_tx tx;
	uint32_t msn[3];         /* next MSN of queues 0..2 */
} P;

static void peer_ack(void);

/* One FPDU of the stack's stream (CRC on, no markers): follow its Read
 * Requests and Terminates. */
static void
rx_fpdu(const uint8_t *u, size_t len)
{
	if (len < 2)
		return;
	uint8_t op = rnic_rdmap_opcode(u[1]);
	if (rnic_ddp_tagged(u[0]))
		return;
	if (op == RNIC_RDMAP_OP_READ_REQ &&
	    len >= RNIC_DDP_UNTAGGED_HDR_LEN + sizeof(struct rnic_rdmap_read_req_hdr)) {
		const struct rnic_rdmap_read_req_hdr *r =
			(const void *)(u + RNIC_DDP_UNTAGGED_HDR_LEN);

		P.rd_seen = true;
		P.rd_sink_stag = rte_be_to_cpu_32(r->sink_stag);
		P.rd_sink_to = rte_be_to_cpu_64(r->sink_to);
		P.rd_size = rte_be_to_cpu_32(r->rdma_rd_sz);
		P.rd_src_stag = rte_be_to_cpu_32(r->src_stag);
		P.rd_src_to = rte_be_to_cpu_64(r->src_to);
	} else if (op == RNIC_RDMAP_OP_TERMINATE) {
		P.terms++;
	}
}

/* Take what is new in the stack's stream: the MPA reply, then FPDUs. */
static void
rx_parse(void)
{
	for (;;) {
		uint32_t left = P.rx_len - P.rx_parsed;
		const uint8_t *p = P.rx + P.rx_parsed;

		if (!P.mpa_reply) {
			uint32_t need;

			if (left < 20)
				return;
			need = 20u + ((uint32_t)p[18] << 8 | p[19]);
			if (left < need)
				return;
			P.rx_parsed += need;
			P.mpa_reply = true;
			rnic_fpdu_tx_init(&P.tx, true, false, 0);
			continue;
		}
		if (left < 2)
			return;
		uint32_t ul = (uint32_t)p[0] << 8 | p[1];
		uint32_t tot = 2 + ul + rnic_mpa_pad_len(ul) + RNIC_MPA_CRC_LEN;
		if (left < tot)
			return;
		rx_fpdu(p + 2, ul);
		P.rx_parsed += tot;
	}
}

/* What the stack sends on the peer's connection. */
static void
iw_frame(const uint8_t *f, size_t len)
{
	const struct rte_ipv4_hdr *ip = (const void *)(f + sizeof(struct rte_ether_hdr));
	const struct rte_tcp_hdr *th;
	size_t ihl, hl, plen;
	uint32_t seq;

	if (len < CONV_L2L3 + sizeof(*th) || ip->next_proto_id != IPPROTO_TCP)
		return;
	ihl = (size_t)(ip->version_ihl & 0x0f) * 4;
	th = (const void *)((const uint8_t *)ip + ihl);
	if (th->dst_port != rte_cpu_to_be_16(P.sport) ||
	    th->src_port != rte_cpu_to_be_16(LISTEN_PORT))
		return;
	hl = (size_t)(th->data_off >> 4) * 4;
	if (sizeof(struct rte_ether_hdr) + rte_be_to_cpu_16(ip->total_length) > len ||
	    ihl + hl > rte_be_to_cpu_16(ip->total_length))
		return;
	plen = rte_be_to_cpu_16(ip->total_length) - ihl - hl;
	seq = rte_be_to_cpu_32(th->sent_seq);
	/* timestamps: remember the stack's TSval for our TSecr */
	for (size_t o = sizeof(*th); o + 1 < hl;) {
		const uint8_t *opt = (const uint8_t *)th + o;

		if (opt[0] == 0)
			break;
		if (opt[0] == 1) {
			o++;
			continue;
		}
		if (opt[1] < 2 || o + opt[1] > hl)
			break;
		if (opt[0] == 8 && opt[1] == 10)
			P.ts_recent = (uint32_t)opt[2] << 24 | (uint32_t)opt[3] << 16 |
				      (uint32_t)opt[4] << 8 | opt[5];
		o += opt[1];
	}
	if (th->tcp_flags & RTE_TCP_RST_FLAG) {
		P.reset = true;
		return;
	}
	if (th->tcp_flags & RTE_TCP_ACK_FLAG)
		P.stack_ack = rte_be_to_cpu_32(th->recv_ack);
	if (th->tcp_flags & RTE_TCP_SYN_FLAG) {
		if (!P.synack) {
			P.synack = true;
			P.rcv_nxt = seq + 1;
		}
		P.ack_due = true;
		return;
	}
	if (plen > 0 || (th->tcp_flags & RTE_TCP_FIN_FLAG))
		P.ack_due = true;
	/* in order (or overlapping what we have): append the new part */
	if (plen > 0 && (int32_t)(seq - P.rcv_nxt) <= 0 &&
	    (int32_t)(seq + (uint32_t)plen - P.rcv_nxt) > 0) {
		uint32_t skip = P.rcv_nxt - seq, n = (uint32_t)plen - skip;
		const uint8_t *d = (const uint8_t *)th + hl + skip;

		if (P.rx_len + n <= RX_MAX) {
			memcpy(P.rx + P.rx_len, d, n);
			P.rx_len += n;
		}
		P.rcv_nxt += n;
		rx_parse();
	}
	if ((th->tcp_flags & RTE_TCP_FIN_FLAG) && seq + (uint32_t)plen == P.rcv_nxt)
		P.rcv_nxt++;
}

/*
 * Send one TCP segment from the peer: @p flags, sequence @p seq, ack
 * P.rcv_nxt (or @p ack when @p own_ack), window @p wnd, the timestamp
 * option when in use plus @p xopt (@p xlen bytes, padded to 4), @p plen
 * payload bytes.
 */
static void
tcp_send(uint8_t flags, uint32_t seq, bool own_ack, uint32_t ack, uint16_t wnd,
	 const uint8_t *xopt, size_t xlen, const uint8_t *pay, size_t plen)
{
	uint8_t f[2048], opt[60];
	size_t ol = 0;
	struct rte_ipv4_hdr *ip;
	struct rte_tcp_hdr *th;

	if (P.ts) {
		uint32_t v = rte_cpu_to_be_32(P.ts_val++), e = rte_cpu_to_be_32(P.ts_recent);

		opt[0] = 1;
		opt[1] = 1;
		opt[2] = 8;
		opt[3] = 10;
		memcpy(opt + 4, &v, 4);
		memcpy(opt + 8, &e, 4);
		ol = 12;
	}
	if (xlen > sizeof(opt) - ol)
		xlen = sizeof(opt) - ol;
	if (xlen > 0)
		memcpy(opt + ol, xopt, xlen);
	ol += xlen;
	while (ol & 3)
		opt[ol++] = 0;
	if (CONV_L2L3 + sizeof(*th) + ol + plen > sizeof(f))
		return;
	ip = conv_ipv4(f, IPPROTO_TCP, sizeof(*th) + ol + plen);
	th = (void *)(ip + 1);
	th->src_port = rte_cpu_to_be_16(P.sport);
	th->dst_port = rte_cpu_to_be_16(LISTEN_PORT);
	th->sent_seq = rte_cpu_to_be_32(seq);
	th->recv_ack = rte_cpu_to_be_32(own_ack ? ack : P.rcv_nxt);
	th->data_off = (uint8_t)(((sizeof(*th) + ol) / 4) << 4);
	th->tcp_flags = flags;
	th->rx_win = rte_cpu_to_be_16(wnd);
	th->cksum = 0;
	th->tcp_urp = 0;
	memcpy(th + 1, opt, ol);
	if (plen > 0)
		memcpy((uint8_t *)(th + 1) + ol, pay, plen);
	th->cksum = rte_ipv4_udptcp_cksum(ip, th);
	conv_send(f, CONV_L2L3 + sizeof(*th) + ol + plen);
}

/* After the stack ran: acknowledge what it sent. */
static void
peer_ack(void)
{
	if (!P.ack_due || P.reset)
		return;
	P.ack_due = false;
	tcp_send(RTE_TCP_ACK_FLAG, P.snd_nxt, false, 0, 65535, NULL, 0, NULL, 0);
}

/* Run the stack, acknowledging as the peer goes. */
static void
run(unsigned loops)
{
	while (loops-- > 0) {
		conv_run(1);
		peer_ack();
	}
	conv_run(2);
	peer_ack();
}

/* Deliver @p len stream bytes at the peer's next sequence number as the
 * input's mode says. */
static void
deliver(struct fuzz_in *in, uint8_t mode, const uint8_t *b, size_t len)
{
	const uint8_t fl = RTE_TCP_ACK_FLAG | RTE_TCP_PSH_FLAG;
	size_t cut;

	switch (mode & 7) {
	case 1: /* split */
	case 2: /* split, second part first */
		cut = len > 1 ? 1 + fuzz_u8(in) % (len - 1) : len;
		if ((mode & 7) == 2) {
			tcp_send(fl, P.snd_nxt + (uint32_t)cut, false, 0, 65535, NULL, 0, b + cut,
				 len - cut);
			run(1);
			tcp_send(fl, P.snd_nxt, false, 0, 65535, NULL, 0, b, cut);
		} else {
			tcp_send(fl, P.snd_nxt, false, 0, 65535, NULL, 0, b, cut);
			tcp_send(fl, P.snd_nxt + (uint32_t)cut, false, 0, 65535, NULL, 0, b + cut,
				 len - cut);
		}
		P.snd_nxt += (uint32_t)len;
		break;
	case 3: /* duplicated */
		tcp_send(fl, P.snd_nxt, false, 0, 65535, NULL, 0, b, len);
		tcp_send(fl, P.snd_nxt, false, 0, 65535, NULL, 0, b, len);
		P.snd_nxt += (uint32_t)len;
		break;
	case 4: /* off the expected sequence number: not counted as sent */
		tcp_send(fl, P.snd_nxt + (uint32_t)(int32_t)(int16_t)fuzz_u16(in), false, 0, 65535,
			 NULL, 0, b, len);
		break;
	default:
		tcp_send(fl, P.snd_nxt, false, 0, 65535, NULL, 0, b, len);
		P.snd_nxt += (uint32_t)len;
		break;
	}
}

/*
 * Frame one ULPDU (@p hdr then @p plen payload bytes) and deliver it.
 * @p mut: bit 7 breaks the CRC, bit 6 the ULPDU length (by @p x).
 */
static void
send_ulpdu(struct fuzz_in *in, uint8_t mode, uint8_t mut, uint8_t x, const void *hdr,
	   size_t hlen, const uint8_t *pay, size_t plen)
{
	uint8_t out[2048];
	struct iovec iov = { (void *)(uintptr_t)pay, plen };
	struct rnic_fpdu_tx save = P.tx;
	int n;

	if (!P.mpa_reply)
		return;
	n = rnic_fpdu_build(&P.tx, hdr, hlen, &iov, plen > 0 ? 1 : 0, out, sizeof(out));
	if (n <= 0)
		return;
	if (mut & 0x80)
		out[n - 1 - (x & 3)] ^= (uint8_t)(x | 1);
	if (mut & 0x40)
		out[1 - (x & 1)] ^= (uint8_t)(x | 1);
	deliver(in, mode, out, (size_t)n);
	if ((mode & 7) == 4)
		P.tx = save;
}

static void
tagged_hdr(struct rnic_ddp_tagged_hdr *h, bool last, uint8_t op, uint32_t stag, uint64_t to)
{
	h->ddp_ctrl = rnic_ddp_ctrl(true, last);
	h->rdmap_ctrl = rnic_rdmap_ctrl(op);
	h->stag = rte_cpu_to_be_32(stag);
	h->to = rte_cpu_to_be_64(to);
}

/* An untagged header on queue @p qn with the next MSN (or an input delta). */
static void
untagged_hdr(struct fuzz_in *in, struct rnic_ddp_untagged_hdr *h, uint8_t sub, bool last,
	     uint8_t op, uint32_t qn, uint32_t mo, uint32_t inv)
{
	uint32_t msn = P.msn[qn];

	if (sub & 0x20)
		msn += (uint32_t)(int32_t)(int8_t)fuzz_u8(in);
	else if (last)
		P.msn[qn]++;
	h->ddp_ctrl = rnic_ddp_ctrl(false, last);
	h->rdmap_ctrl = rnic_rdmap_ctrl(op);
	h->inv_stag = rte_cpu_to_be_32(inv);
	h->qn = rte_cpu_to_be_32(qn);
	h->msn = rte_cpu_to_be_32(msn);
	h->mo = rte_cpu_to_be_32(mo);
}

static uint8_t pay[2048];

static void
fill_pay(size_t n, uint8_t seed)
{
	for (size_t i = 0; i < n; i++)
		pay[i] = (uint8_t)(i * 13 + seed);
}

static void
act_write(struct fuzz_in *in)
{
	uint8_t sub = fuzz_u8(in), mode = fuzz_u8(in), mut = fuzz_u8(in), x = fuzz_u8(in);
	struct rnic_ddp_tagged_hdr h;
	unsigned reg;
	uint32_t stag = conv_pick_key(in, &reg);
	uint64_t to = conv_pick_addr(in, reg);
	size_t plen = fuzz_u16(in) % 1400;

	tagged_hdr(&h, !(sub & 1), RNIC_RDMAP_OP_WRITE, stag, to);
	fill_pay(plen, sub);
	send_ulpdu(in, mode, mut, x, &h, sizeof(h), pay, plen);
}

static void
act_read_req(struct fuzz_in *in)
{
	uint8_t sub = fuzz_u8(in), mode = fuzz_u8(in), mut = fuzz_u8(in), x = fuzz_u8(in);
	struct {
		struct rnic_ddp_untagged_hdr u;
		struct rnic_rdmap_read_req_hdr r;
	} __rte_packed h;
	unsigned reg;
	uint32_t stag = conv_pick_key(in, &reg);
	uint64_t to = conv_pick_addr(in, reg);
	uint32_t size = (sub & 0x40) ? fuzz_u32(in) : fuzz_u16(in) % 10000u;

	untagged_hdr(in, &h.u, sub, true, RNIC_RDMAP_OP_READ_REQ, RNIC_DDP_QN_READ_REQ, 0, 0);
	h.r.sink_stag = rte_cpu_to_be_32(PEER_STAG);
	h.r.sink_to = rte_cpu_to_be_64(PEER_VA);
	h.r.rdma_rd_sz = rte_cpu_to_be_32(size);
	h.r.src_stag = rte_cpu_to_be_32(stag);
	h.r.src_to = rte_cpu_to_be_64(to);
	send_ulpdu(in, mode, mut, x, &h, sizeof(h), NULL, 0);
}

/* A Read Response segment to our Read: at the sink's TO plus the input's
 * chunk (or any offset), carrying the peer's source bytes for that offset. */
static void
act_read_resp(struct fuzz_in *in)
{
	uint8_t sub = fuzz_u8(in), mode = fuzz_u8(in), mut = fuzz_u8(in), x = fuzz_u8(in);
	uint8_t kk = fuzz_u8(in);
	struct rnic_ddp_tagged_hdr h;
	uint32_t n, k, stag;
	uint64_t d, src;
	size_t plen;
	unsigned reg;
	bool last;

	if (!P.rd_seen)
		return;
	n = P.rd_size == 0 ? 1 : (P.rd_size + CHUNK - 1) / CHUNK;
	if (n > 64)
		n = 64;
	k = kk % (n + 1);
	d = (uint64_t)k * CHUNK;
	if (sub & 0x10)
		d = (uint64_t)(int64_t)(int16_t)fuzz_u16(in);
	plen = d < P.rd_size ? RTE_MIN((uint64_t)CHUNK, P.rd_size - d) : 0;
	if (sub & 0x08)
		plen = fuzz_u16(in) % 1400;
	last = (sub & 0x04) ? (sub & 0x02) : d + plen >= P.rd_size;
	stag = (sub & 0x40) ? conv_pick_key(in, &reg) : P.rd_sink_stag;
	src = P.rd_src_to - PEER_VA + d;
	for (size_t i = 0; i < plen; i++)
		pay[i] = conv_src(src + i);
	tagged_hdr(&h, last, RNIC_RDMAP_OP_READ_RESP, stag, P.rd_sink_to + d);
	send_ulpdu(in, mode, mut, x, &h, sizeof(h), pay, plen);
}

static void
act_send(struct fuzz_in *in)
{
	static const uint8_t ops[] = { RNIC_RDMAP_OP_SEND, RNIC_RDMAP_OP_SEND_SE,
				       RNIC_RDMAP_OP_SEND_INV, RNIC_RDMAP_OP_SEND_SE_INV,
				       RNIC_RDMAP_OP_IMM_DATA };
	uint8_t sub = fuzz_u8(in), mode = fuzz_u8(in), mut = fuzz_u8(in), x = fuzz_u8(in);
	struct rnic_ddp_untagged_hdr h;
	uint8_t op = ops[(sub & 7) % sizeof(ops)];
	uint32_t inv = 0, mo = 0;
	size_t plen = fuzz_u16(in) % 1400;
	unsigned reg;

	if (op == RNIC_RDMAP_OP_SEND_INV || op == RNIC_RDMAP_OP_SEND_SE_INV)
		inv = conv_pick_key(in, &reg);
	if (sub & 0x40)
		mo = fuzz_u16(in);
	untagged_hdr(in, &h, sub, !(sub & 0x80), op, RNIC_DDP_QN_SEND, mo, inv);
	fill_pay(plen, x);
	send_ulpdu(in, mode, mut, x, &h, sizeof(h), pay, plen);
}

static void
act_terminate(struct fuzz_in *in)
{
	uint8_t sub = fuzz_u8(in), mode = fuzz_u8(in), mut = fuzz_u8(in), x = fuzz_u8(in);
	struct rnic_ddp_untagged_hdr h;
	size_t got;
	const uint8_t *b = fuzz_bytes(in, 4 + fuzz_u8(in) % 60, &got);

	untagged_hdr(in, &h, sub, true, RNIC_RDMAP_OP_TERMINATE, RNIC_DDP_QN_TERMINATE, 0, 0);
	memcpy(pay, b, got);
	send_ulpdu(in, mode, mut, x, &h, sizeof(h), pay, got);
}

static void
act_raw(struct fuzz_in *in)
{
	uint8_t mode = fuzz_u8(in), mut = fuzz_u8(in), x = fuzz_u8(in);
	size_t got;
	const uint8_t *b = fuzz_bytes(in, fuzz_u16(in) % 1400, &got);

	memcpy(pay, b, got);
	send_ulpdu(in, mode, mut, x, pay, got, NULL, 0);
}

/* A pure ACK: any ack number near ours, any window, SACK blocks relative to
 * the stack's stream. */
static void
act_ack(struct fuzz_in *in)
{
	uint8_t sub = fuzz_u8(in);
	uint8_t opt[40];
	size_t ol = 0;
	uint32_t ack = P.rcv_nxt + (uint32_t)(int32_t)(int16_t)((sub & 1) ? fuzz_u16(in) : 0);
	uint16_t wnd = (sub & 2) ? fuzz_u16(in) : 65535;
	unsigned blocks = (sub >> 2) & 3;

	if (blocks > 0) {
		opt[ol++] = 1;
		opt[ol++] = 1;
		opt[ol++] = 5;
		opt[ol++] = (uint8_t)(2 + 8 * blocks);
		for (unsigned i = 0; i < blocks; i++) {
			uint32_t l = P.rcv_nxt + (uint32_t)(int32_t)(int16_t)fuzz_u16(in);
			uint32_t r = l + fuzz_u16(in);

			l = rte_cpu_to_be_32(l);
			r = rte_cpu_to_be_32(r);
			memcpy(opt + ol, &l, 4);
			memcpy(opt + ol + 4, &r, 4);
			ol += 8;
		}
	}
	if (sub & 0x10) {   /* any option bytes after */
		size_t got;
		const uint8_t *b = fuzz_bytes(in, fuzz_u8(in) % 12, &got);

		memcpy(opt + ol, b, got);
		ol += got;
	}
	tcp_send(RTE_TCP_ACK_FLAG, P.snd_nxt, true, ack, wnd, opt, ol, NULL, 0);
}

static void
act_fin_rst(struct fuzz_in *in)
{
	uint8_t sub = fuzz_u8(in);
	uint32_t seq = P.snd_nxt + ((sub & 2) ? (uint32_t)(int32_t)(int16_t)fuzz_u16(in) : 0);

	if (sub & 1) {
		tcp_send(RTE_TCP_RST_FLAG | RTE_TCP_ACK_FLAG, seq, false, 0, 0, NULL, 0, NULL, 0);
	} else {
		tcp_send(RTE_TCP_FIN_FLAG | RTE_TCP_ACK_FLAG, seq, false, 0, 65535, NULL, 0, NULL,
			 0);
		if (!(sub & 2))
			P.snd_nxt++;
	}
}

static struct rnic_cm_id *cid;

/* The application posts a signaled Write of 64 bytes from SRC to the peer. */
static void
app_write(uint64_t id)
{
	conv_app_write(id, PEER_VA + 0x10000, PEER_STAG);
}

int LLVMFuzzerInitialize(int *argc, char ***argv);

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	conv_init("fconviw", RNIC_TRANSPORT_IWARP);
	C.on_frame = iw_frame;
	conv_app_init(reg_acc);
	ch = rnic_cm_create_channel(C.ctx);
	FUZZ_CHECK(ch != NULL);
	FUZZ_CHECK(rnic_cm_create_id(ch, NULL, &lid) == 0);
	FUZZ_CHECK(rnic_cm_listen(lid, LISTEN_PORT, 16) == 0);
	conv_run(16);
	conv_mbufs(&C.stack_base, &C.peer_base);
	return 0;
}

/* Take the CM events: accept the connection request with our QP. */
static void
cm_events(void)
{
	struct rnic_cm_event ev;

	while (rnic_cm_get_event(ch, &ev, 0) == 0) {
		if (ev.type == RNIC_CM_EVENT_CONNECT_REQUEST) {
			struct rnic_cm_conn_param cp = { .responder_resources = 4,
							 .initiator_depth = 4 };

			if (cid == NULL && rnic_cm_accept(ev.id, qp, &cp) == 0)
				cid = ev.id;
			else
				rnic_cm_destroy_id(ev.id);
		}
	}
}

/* The handshake: SYN (options from @p flags), ACK with the MPA request. */
static void
handshake(struct fuzz_in *in, uint8_t flags)
{
	uint8_t opt[40], req[64];
	size_t ol = 0;
	uint16_t mss = (flags & 0x10) ? fuzz_u16(in) : 1460;
	struct rnic_mpa_params mp;
	int n;

	opt[ol++] = 2;
	opt[ol++] = 4;
	opt[ol++] = (uint8_t)(mss >> 8);
	opt[ol++] = (uint8_t)mss;
	if (flags & 0x02) {
		opt[ol++] = 1;
		opt[ol++] = 3;
		opt[ol++] = 3;
		opt[ol++] = (uint8_t)(fuzz_u8(in) % 16);
	}
	if (flags & 0x04) {
		opt[ol++] = 1;
		opt[ol++] = 1;
		opt[ol++] = 4;
		opt[ol++] = 2;
	}
	tcp_send(RTE_TCP_SYN_FLAG, P.snd_nxt, true, 0, 65535, opt, ol, NULL, 0);
	P.ts = (flags & 0x08) != 0;   /* from the SYN on, when asked */
	P.snd_nxt++;
	run(4);
	if (!P.synack)
		return;
	rnic_mpa_params_default(&mp);
	mp.rtr_types = 0;
	mp.markers_tx_ok = false;
	n = rnic_mpa_build_request(&mp, req, sizeof(req));
	FUZZ_CHECK(n > 0);
	tcp_send(RTE_TCP_ACK_FLAG | RTE_TCP_PSH_FLAG, P.snd_nxt, false, 0, 65535, NULL, 0, req,
		 (size_t)n);
	P.snd_nxt += (uint32_t)n;
	run(4);
	cm_events();
	run(8);
	cm_events();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_in in;
	uint8_t flags;
	uint32_t rd_len, rd_off;
	bool read_ok = false, read_done = false;
	enum ibv_wc_status read_st = IBV_WC_SUCCESS;
	struct ibv_wc wc[16];

	fuzz_in_init(&in, data, size);
	flags = fuzz_u8(&in);
	memset(&P, 0, sizeof(P));
	P.sport = next_port;
	next_port = next_port == 65000 ? 1024 : next_port + 1;
	P.snd_nxt = fuzz_u32(&in);
	P.ts_val = 1;
	P.msn[0] = P.msn[1] = P.msn[2] = 1;
	rd_len = 1 + fuzz_u16(&in) % (uint32_t)reg_len[R_SINK];
	rd_off = fuzz_u8(&in);
	C.loops = 0;
	C.waited = 0;
	app_posts = 0;
	cid = NULL;
	{
		struct ibv_qp_init_attr qa = { .qp_type = IBV_QPT_RC, .send_cq = cq,
			.recv_cq = cq, .cap = { .max_send_wr = 32, .max_recv_wr = 8,
						.max_send_sge = 1, .max_recv_sge = 1 } };

		qp = rnic_create_qp_transport(pd, &qa, RNIC_TRANSPORT_IWARP);
		FUZZ_CHECK(qp != NULL);
	}
	handshake(&in, flags);
	if (cid != NULL && qp->state == IBV_QPS_RTS)
		conv_post_recvs();
	if (cid != NULL && qp->state == IBV_QPS_RTS) {
		/* the receives above, then the Read */
		conv_post_read(rd_len, PEER_VA + rd_off, PEER_STAG);
		if (flags & 1)
			app_write(2);
		run(4);
	}

	for (unsigned a = 0; a < MAX_ACTIONS && fuzz_in_left(&in) > 0 && cid != NULL; a++) {
		switch (fuzz_u8(&in) % 10) {
		case 0: act_write(&in); break;
		case 1: act_read_req(&in); break;
		case 2: act_read_resp(&in); break;
		case 3: act_send(&in); break;
		case 4: act_terminate(&in); break;
		case 5: act_raw(&in); break;
		case 6: act_ack(&in); break;
		case 7: act_fin_rst(&in); break;
		case 8: {   /* let the stack run: loops, or real time (timers) */
			uint8_t t = fuzz_u8(&in);

			if (t & 0x80) {
				conv_wait_us((t & 0x7fu) * 50u);
				peer_ack();
			} else {
				run(1 + t % 16);
			}
			continue;
		}
		default:
			if (app_posts++ < 8)
				app_write(10 + app_posts);
			break;
		}
		run(2);
		cm_events();
	}
	run(16);
	cm_events();

	conv_read_result(rd_off, rd_len, &read_done, &read_ok, &read_st);
	if (conv_debug)
		fprintf(stderr, "conv_iwarp: %s, MPA reply %s, Read of %u %s (%s), Read Request %s "
			"(sink %08x, size %u), %u Terminates, %u loops\n",
			cid ? "accepted" : "no connection", P.mpa_reply ? "in" : "not in", rd_len,
			read_done ? (read_ok ? "succeeded" : "failed") : "not completed",
			rnic_wc_status_str(read_st), P.rd_seen ? "seen" : "not seen", P.rd_sink_stag, P.rd_size, P.terms,
			C.loops);

	/* teardown: the peer resets (at the sequence number the stack
	 * acknowledged last), the application frees its id and QP */
	if (P.synack && !P.reset)
		tcp_send(RTE_TCP_RST_FLAG, P.stack_ack, false, 0, 0, NULL, 0, NULL, 0);
	conv_run(16);
	cm_events();
	if (cid != NULL)
		rnic_cm_destroy_id(cid);
	cid = NULL;
	conv_run(16);
	FUZZ_CHECK(rnic_destroy_qp(qp) == 0);
	qp = NULL;
	while (ibv_poll_cq(cq, 16, wc) > 0)
		;
	cm_events();
	conv_app_end(rd_len);
	return 0;
}
