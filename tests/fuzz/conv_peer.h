/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The world of the conversation harnesses (fuzz_conv_iwarp.c,
 * fuzz_conv_roce.c): one rnic stack with one net_ring port, never started
 * (the harness runs its worker loop itself, rnic_worker_poll(), so an input
 * is one sequence of frames), and the other end of the ring, where the
 * harness's scripted peer sends and reads frames. The peer lives at
 * CONV_PEER_IP with CONV_PEER_MAC and answers the stack's ARP requests.
 *
 * Also here, the application's memory and the oracles the harnesses share:
 * one buffer cut into regions (conv_mem), each byte either "granted" (the
 * peer may change it) or canary; the canary must hold its fill pattern after
 * every input. The mbuf accounting check: after an input's teardown the
 * stack's pool and the peer's pool are back to their baselines.
 *
 * Everything is static: each harness includes this once.
 */
#ifndef RNIC_FUZZ_CONV_PEER_H
#define RNIC_FUZZ_CONV_PEER_H

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <rte_arp.h>
#include <rte_ethdev.h>
#include <rte_ip.h>
#include <rte_mbuf.h>
#include <rte_tcp.h>
#include <rte_udp.h>

#include "engine/stack.h"
#include "port/port.h"
#include "rnic/rnic.h"
#include "rnic/rnic_verbs.h"
#include "fuzz_util.h"

#define CONV_US_IP   0xc0000201u   /* 192.0.2.1, the stack */
#define CONV_PEER_IP 0xc0000202u   /* 192.0.2.2, the scripted peer */
static const struct rte_ether_addr conv_peer_mac = {
	{ 0x02, 0x00, 0x00, 0x00, 0x00, 0x02 } };

/* Worker loops one input may run in all: a stack that keeps producing
 * work past this without the peer sending anything is a livelock. */
#define CONV_LOOP_BOUND 20000u

/* Called with each frame the stack sends that is not ARP (the frame is
 * freed by the caller). */
typedef void (*conv_frame_fn)(const uint8_t *f, size_t len);

struct conv {
	struct rnic_stack *st;
	struct rnic_port *sp;
	struct ibv_context *ctx;
	uint16_t peer;                  /* the peer's ethdev */
	struct rte_mempool *pool;       /* the peer's mbufs */
	conv_frame_fn on_frame;
	unsigned loops;                 /* worker loops in this input */
	unsigned waited;                /* microseconds of conv_wait_us() in it */
	unsigned stack_base, peer_base; /* mbufs in use between inputs */
	uint16_t ip_id;
};

static struct conv C;

/* CONV_DEBUG set in the environment: the harnesses say what each input did. */
static bool conv_debug;

/* What the stack sent: answer ARP, hand the rest to the transport. */
static void
conv_arp_reply(const uint8_t *f, size_t len)
{
	const struct rte_arp_hdr *rq = (const void *)(f + sizeof(struct rte_ether_hdr));
	struct rte_mbuf *m;
	struct rte_ether_hdr *eh;
	struct rte_arp_hdr *a;

	if (len < sizeof(*eh) + sizeof(*a) ||
	    rq->arp_opcode != rte_cpu_to_be_16(RTE_ARP_OP_REQUEST) ||
	    rq->arp_data.arp_tip != rte_cpu_to_be_32(CONV_PEER_IP))
		return;
	m = rte_pktmbuf_alloc(C.pool);
	FUZZ_CHECK(m != NULL);
	eh = (void *)rte_pktmbuf_append(m, sizeof(*eh) + sizeof(*a));
	a = (void *)(eh + 1);
	eh->dst_addr = rq->arp_data.arp_sha;
	eh->src_addr = conv_peer_mac;
	eh->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_ARP);
	*a = *rq;
	a->arp_opcode = rte_cpu_to_be_16(RTE_ARP_OP_REPLY);
	a->arp_data.arp_sha = conv_peer_mac;
	a->arp_data.arp_sip = rte_cpu_to_be_32(CONV_PEER_IP);
	a->arp_data.arp_tha = rq->arp_data.arp_sha;
	a->arp_data.arp_tip = rq->arp_data.arp_sip;
	if (rte_eth_tx_burst(C.peer, 0, &m, 1) != 1)
		rte_pktmbuf_free(m);
}

/* Take every frame the stack transmitted. @return frames taken. */
static unsigned
conv_drain(void)
{
	struct rte_mbuf *m[32];
	uint16_t n, i;
	unsigned got = 0;

	while ((n = rte_eth_rx_burst(C.peer, 0, m, 32)) > 0) {
		for (i = 0; i < n; i++) {
			uint8_t buf[9216];
			uint32_t len = rte_pktmbuf_pkt_len(m[i]);
			const uint8_t *f;
			const struct rte_ether_hdr *eh;

			FUZZ_CHECK(len >= sizeof(struct rte_ether_hdr));
			FUZZ_CHECK(len <= C.sp->mtu + sizeof(struct rte_ether_hdr) + 4u);
			f = rte_pktmbuf_read(m[i], 0, len, buf);
			FUZZ_CHECK(f != NULL);
			eh = (const void *)f;
			if (eh->ether_type == rte_cpu_to_be_16(RTE_ETHER_TYPE_ARP))
				conv_arp_reply(f, len);
			else if (C.on_frame != NULL)
				C.on_frame(f, len);
		}
		got += n;
		rte_pktmbuf_free_bulk(m, n);
	}
	return got;
}

/* Let the stack run until it is quiet (two loops without work and nothing
 * sent), at most @p max loops. Asserts the per-input loop bound. */
static void
conv_run(unsigned max)
{
	unsigned quiet = 0;

	while (max-- > 0 && quiet < 2) {
		unsigned work = rnic_worker_poll(C.st, 0);

		work += conv_drain();
		quiet = work == 0 ? quiet + 1 : 0;
		C.loops++;
		/* a stack that does not settle: livelock */
		FUZZ_CHECK(C.loops < CONV_LOOP_BOUND);
	}
}

/* Real time one input may spend waiting for the stack's timers. */
#define CONV_WAIT_MAX_US 20000u

/*
 * Let @p us microseconds of real time pass with the stack running (the
 * engine's timers read the TSC: there is no test clock), so a short
 * retransmission or ACK timeout fires. Not counted in the loop bound: the
 * peer is idle, the stack may poll as often as it likes. At most
 * CONV_WAIT_MAX_US per input (C.waited).
 */
static void
conv_wait_us(unsigned us)
{
	uint64_t t0 = rte_get_tsc_cycles(), hz = rte_get_tsc_hz(), end;

	if (C.waited + us > CONV_WAIT_MAX_US)
		us = CONV_WAIT_MAX_US - C.waited;
	C.waited += us;
	end = t0 + hz * us / 1000000u;
	while (rte_get_tsc_cycles() < end) {
		rnic_worker_poll(C.st, 0);
		conv_drain();
	}
}

/* Send @p len bytes of frame @p f to the stack. */
static void
conv_send(const void *f, size_t len)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(C.pool);
	void *d;

	FUZZ_CHECK(m != NULL);
	FUZZ_CHECK(len <= 2048);
	d = rte_pktmbuf_append(m, (uint16_t)len);
	FUZZ_CHECK(d != NULL);
	memcpy(d, f, len);
	if (rte_eth_tx_burst(C.peer, 0, &m, 1) != 1)
		rte_pktmbuf_free(m);
}

/* Ethernet + IPv4 (no options) headers from the peer to the stack, at
 * @p f, for an IP payload of @p l4_len bytes. @return the IPv4 header. */
static struct rte_ipv4_hdr *
conv_ipv4(uint8_t *f, uint8_t proto, size_t l4_len)
{
	struct rte_ether_hdr *eh = (void *)f;
	struct rte_ipv4_hdr *ip = (void *)(eh + 1);

	eh->dst_addr = C.sp->mac;
	eh->src_addr = conv_peer_mac;
	eh->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
	memset(ip, 0, sizeof(*ip));
	ip->version_ihl = 0x45;
	ip->total_length = rte_cpu_to_be_16((uint16_t)(sizeof(*ip) + l4_len));
	ip->packet_id = rte_cpu_to_be_16(C.ip_id++);
	ip->fragment_offset = rte_cpu_to_be_16(RTE_IPV4_HDR_DF_FLAG);
	ip->time_to_live = 64;
	ip->next_proto_id = proto;
	ip->src_addr = rte_cpu_to_be_32(CONV_PEER_IP);
	ip->dst_addr = rte_cpu_to_be_32(CONV_US_IP);
	ip->hdr_checksum = rte_ipv4_cksum(ip);
	return ip;
}

#define CONV_L2L3 (sizeof(struct rte_ether_hdr) + sizeof(struct rte_ipv4_hdr))

/* The stack's and the peer's mbufs in use now. */
static void
conv_mbufs(unsigned *stack, unsigned *peer)
{
	*stack = rnic_port_mbufs_in_use(C.sp);
	*peer = rte_mempool_in_use_count(C.pool);
}

/*
 * Leak oracle, after an input's teardown: let the stack settle and compare
 * both pools with their baselines. ARP's held frames, TCP queues and
 * retransmissions of a torn-down connection must all be gone.
 */
static void
conv_check_mbufs(void)
{
	unsigned s, p;

	conv_run(64);
	conv_mbufs(&s, &p);
	if (s != C.stack_base || p != C.peer_base)
		fprintf(stderr, "mbufs in use: stack %u (baseline %u), peer %u (baseline %u)\n",
			s, C.stack_base, p, C.peer_base);
	FUZZ_CHECK(s == C.stack_base);
	FUZZ_CHECK(p == C.peer_base);
}

static void
conv_fini(void)
{
	/* the harness's own objects are gone by now; a device that still
	 * holds some keeps its reference (close fails) */
	if (C.ctx != NULL)
		(void)rnic_close_device(C.ctx);
	if (C.st != NULL)
		rnic_stack_destroy(C.st);
	C.st = NULL;
}

/*
 * The EAL (--no-huge, file prefix from @p name), the ring pair, the stack
 * on end "a" driven by this thread, its device opened through face @p t,
 * and the peer on end "b".
 */
static void
conv_init(const char *name, enum rnic_transport t)
{
	struct rte_eth_conf conf = { 0 };
	struct rnic_config c;
	char ring[24], port[64], pool[64];   /* @p name: a few characters */

	conv_debug = getenv("CONV_DEBUG") != NULL;
	rnic_config_init(&c);
	snprintf(c.eal_args[c.n_eal_args++], 128, "--no-huge");
	snprintf(c.eal_args[c.n_eal_args++], 128, "--no-pci");
	snprintf(c.eal_args[c.n_eal_args++], 128, "-m");
	snprintf(c.eal_args[c.n_eal_args++], 128, "512");
	snprintf(c.eal_args[c.n_eal_args++], 128, "--log-level=*:error");
	FUZZ_CHECK(rnic_eal_init(name, &c, 1) == 0);
	c.n_eal_args = 0;
	snprintf(ring, sizeof(ring), "%s", name);
	FUZZ_CHECK(rnic_ring_pair(ring, 1) == 0);
	c.n_ports = 1;
	c.workers = 1;
	rnic_port_cfg_init(&c.ports[0]);
	snprintf(c.ports[0].ring, sizeof(c.ports[0].ring), "%s.a", ring);
	c.ports[0].ip = CONV_US_IP;
	c.ports[0].prefix_len = 24;
	c.ports[0].mbufs = 4095;
	C.st = rnic_stack_create(&c);
	FUZZ_CHECK(C.st != NULL);
	C.sp = C.st->ports[0];
	atexit(conv_fini);
	C.ctx = rnic_open_device_transport(C.st, t);
	FUZZ_CHECK(C.ctx != NULL);
	snprintf(port, sizeof(port), "net_ring_%s.b", ring);
	FUZZ_CHECK(rte_eth_dev_get_port_by_name(port, &C.peer) == 0);
	snprintf(pool, sizeof(pool), "%s_peer", name);
	C.pool = rte_pktmbuf_pool_create(pool, 4095, 0, 0, 2048 + RTE_PKTMBUF_HEADROOM,
					 SOCKET_ID_ANY);
	FUZZ_CHECK(C.pool != NULL);
	FUZZ_CHECK(rte_eth_dev_configure(C.peer, 1, 1, &conf) == 0);
	FUZZ_CHECK(rte_eth_rx_queue_setup(C.peer, 0, 1024, SOCKET_ID_ANY, NULL, C.pool) == 0);
	FUZZ_CHECK(rte_eth_tx_queue_setup(C.peer, 0, 1024, SOCKET_ID_ANY, NULL) == 0);
	FUZZ_CHECK(rte_eth_dev_start(C.peer) == 0);
	conv_run(64);
}

/* --- the application's memory and its oracle ------------------------------ */

/* One region of the application's buffer. */
struct conv_region {
	size_t off, len;
	bool granted;          /* the peer may write all of it */
};

#define CONV_REGIONS_MAX 8
#define CONV_GAP 256u           /* canary between regions */

struct conv_mem {
	uint8_t *buf;
	size_t len;
	struct conv_region r[CONV_REGIONS_MAX];
	unsigned n;
};

/* The canary's value at offset @p i of the buffer. */
static inline uint8_t
conv_fill(size_t i)
{
	return (uint8_t)(0xa5u ^ (i * 31u) ^ (i >> 8));
}

/* The peer's remote memory, as it answers Reads: byte @p i of the source. */
static inline uint8_t
conv_src(uint64_t i)
{
	return (uint8_t)((i * 7u) + (i >> 9) + 0x3cu);
}

/* Lay out @p n regions of the lengths @p lens with canary gaps around
 * each. @return 0 (asserts). */
static void
conv_mem_init(struct conv_mem *m, const size_t *lens, unsigned n)
{
	size_t off = CONV_GAP;

	FUZZ_CHECK(n <= CONV_REGIONS_MAX);
	for (unsigned i = 0; i < n; i++) {
		m->r[i].off = off;
		m->r[i].len = lens[i];
		off += lens[i] + CONV_GAP;
	}
	m->n = n;
	m->len = off;
	m->buf = aligned_alloc(4096, RTE_ALIGN_CEIL(off, 4096));
	FUZZ_CHECK(m->buf != NULL);
}

static inline uint8_t *
conv_mem_at(const struct conv_mem *m, unsigned r)
{
	return m->buf + m->r[r].off;
}

/* Everything back to the canary pattern. */
static void
conv_mem_reset(struct conv_mem *m)
{
	for (size_t i = 0; i < m->len; i++)
		m->buf[i] = conv_fill(i);
}

/*
 * The memory oracle: every byte outside the granted regions and outside
 * [@p sink_off, @p sink_off + @p sink_len) of region @p sink (the
 * outstanding Read's target; sink_len 0: none) holds the canary.
 */
static void
conv_mem_check(const struct conv_mem *m, unsigned sink, size_t sink_len)
{
	size_t i, lo = 0, hi = 0;

	if (sink_len > 0) {
		lo = m->r[sink].off;
		hi = lo + sink_len;
	}
	for (i = 0; i < m->len; i++) {
		bool ok = false;

		if (i >= lo && i < hi)
			continue;
		for (unsigned r = 0; r < m->n; r++)
			if (m->r[r].granted && i >= m->r[r].off &&
			    i < m->r[r].off + m->r[r].len)
				ok = true;
		if (!ok && m->buf[i] != conv_fill(i)) {
			fprintf(stderr, "memory oracle: byte %zu changed (0x%02x, canary 0x%02x)"
				" outside what the peer was granted\n", i, m->buf[i],
				conv_fill(i));
			FUZZ_CHECK(m->buf[i] == conv_fill(i));
		}
	}
}

/* The Read oracle: a Read that completed successfully holds the peer's
 * source bytes [@p src_off, + @p len) in order. */
static void
conv_read_check(const uint8_t *sink, uint64_t src_off, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (sink[i] != conv_src(src_off + i)) {
			fprintf(stderr, "Read oracle: sink byte %zu of %zu is 0x%02x, the peer's "
				"source 0x%02x\n", i, len, sink[i], conv_src(src_off + i));
			FUZZ_CHECK(sink[i] == conv_src(src_off + i));
		}
}

/* The application's side, the same in both conversations: five memory
 * regions (only RW and RECV granted to the peer), one PD, one CQ, one QP. */
enum { R_RW, R_LOCAL, R_SINK, R_RECV, R_SRC, R_N };
static const size_t reg_len[R_N] = { 8192, 4096, 4096, 8192, 1024 };

static struct ibv_pd *pd;
static struct ibv_cq *cq;
static struct ibv_mr *mr[R_N];
static struct conv_mem mem;
static struct ibv_qp *qp;
static unsigned app_posts;

/* Lay out the regions and register each with its access flags @p acc. */
static void
conv_app_init(const int acc[R_N])
{
	conv_mem_init(&mem, reg_len, R_N);
	mem.r[R_RW].granted = true;
	mem.r[R_RECV].granted = true;
	conv_mem_reset(&mem);
	pd = rnic_alloc_pd(C.ctx);
	cq = rnic_create_cq(C.ctx, 256, NULL, NULL, 0);
	FUZZ_CHECK(pd != NULL && cq != NULL);
	for (unsigned r = 0; r < R_N; r++) {
		mr[r] = rnic_reg_mr(pd, conv_mem_at(&mem, r), reg_len[r], acc[r]);
		FUZZ_CHECK(mr[r] != NULL);
	}
}

/* A key the peer might use: right, advertised elsewhere, never advertised,
 * wrong key bits, anything; *@p reg is the region it belongs to. */
static uint32_t
conv_pick_key(struct fuzz_in *in, unsigned *reg)
{
	uint8_t s = fuzz_u8(in);

	*reg = R_RW;
	switch (s % 8) {
	case 0: case 1: case 2:
		return mr[R_RW]->rkey;
	case 3:
		*reg = R_LOCAL;
		return mr[R_LOCAL]->rkey;
	case 4:
		*reg = R_SINK;
		return mr[R_SINK]->rkey;
	case 5:
		*reg = R_RECV;
		return mr[R_RECV]->rkey;
	case 6:
		return mr[R_RW]->rkey ^ (1u << (s >> 3));
	default:
		return fuzz_u32(in);
	}
}

/* An address inside (mostly) or near region @p reg. */
static uint64_t
conv_pick_addr(struct fuzz_in *in, unsigned reg)
{
	uint16_t o = fuzz_u16(in);

	if (o == 0xffff)
		return ((uint64_t)fuzz_u32(in) << 32) | fuzz_u32(in);
	return (uintptr_t)conv_mem_at(&mem, reg) + (int64_t)(int16_t)o;
}

/* The application posts a signaled Write of 64 bytes from SRC to the
 * peer's @p va under @p rkey. */
static void
conv_app_write(uint64_t id, uint64_t va, uint32_t rkey)
{
	struct ibv_sge sge = { (uintptr_t)conv_mem_at(&mem, R_SRC), 64, mr[R_SRC]->lkey };
	struct ibv_send_wr wr = { .wr_id = id, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_RDMA_WRITE, .send_flags = IBV_SEND_SIGNALED };
	struct ibv_send_wr *bad;

	wr.wr.rdma.remote_addr = va;
	wr.wr.rdma.rkey = rkey;
	(void)ibv_post_send(qp, &wr, &bad);
}

/* Four 2 KiB receives in RECV (wr_id 100..103). */
static void
conv_post_recvs(void)
{
	for (unsigned i = 0; i < 4; i++) {
		struct ibv_sge sge = { (uintptr_t)conv_mem_at(&mem, R_RECV) + i * 2048u, 2048,
				       mr[R_RECV]->lkey };
		struct ibv_recv_wr wr = { .wr_id = 100 + i, .sg_list = &sge, .num_sge = 1 };
		struct ibv_recv_wr *bad;

		FUZZ_CHECK(ibv_post_recv(qp, &wr, &bad) == 0);
	}
}

/* The application's Read (wr_id 1) of @p len bytes from the peer's @p va
 * into SINK. */
static void
conv_post_read(uint32_t len, uint64_t va, uint32_t rkey)
{
	struct ibv_sge sge = { (uintptr_t)conv_mem_at(&mem, R_SINK), len, mr[R_SINK]->lkey };
	struct ibv_send_wr wr = { .wr_id = 1, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_RDMA_READ, .send_flags = IBV_SEND_SIGNALED };
	struct ibv_send_wr *bad;

	wr.wr.rdma.remote_addr = va;
	wr.wr.rdma.rkey = rkey;
	FUZZ_CHECK(ibv_post_send(qp, &wr, &bad) == 0);
}

/* Drain the CQ; the Read's (wr_id 1) outcome into *@p done, *@p ok and
 * *@p st. A successful Read must hold the peer's bytes from @p off. */
static void
conv_read_result(uint32_t off, uint32_t len, bool *done, bool *ok, enum ibv_wc_status *st)
{
	struct ibv_wc wc[16];
	int n;

	while ((n = ibv_poll_cq(cq, 16, wc)) > 0)
		for (int i = 0; i < n; i++)
			if (wc[i].wr_id == 1) {
				*done = true;
				*ok = wc[i].status == IBV_WC_SUCCESS;
				*st = wc[i].status;
			}
	if (*ok)
		conv_read_check(conv_mem_at(&mem, R_SINK), off, len);
}

/* After the teardown: nothing written outside what was granted (plus the
 * Read's @p rd_len bytes of SINK), memory reset, mbuf pools at baseline. */
static void
conv_app_end(uint32_t rd_len)
{
	conv_mem_check(&mem, R_SINK, rd_len);
	conv_mem_reset(&mem);
	conv_check_mbufs();
}

#endif
