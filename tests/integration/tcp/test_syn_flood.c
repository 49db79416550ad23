/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * SYN flood (seed 004): stack B floods stack A with spoofed SYNs over a
 * net_ring link, as fast as its worker can build them, each from a 4-tuple
 * of its own (half on the link, which A must ARP for, half off it).
 *
 *   phase 1  the flood alone until at least 10^5 SYNs (10^5 half-open
 *            connections): every one answered with a cookie, no TCB, the
 *            heap and the mbuf use flat
 *   phase 2  1000 final ACKs with forged cookies, each from a 4-tuple of
 *            its own: every one counted invalid and reset, no TCB
 *   phase 3  the flood goes on while a legitimate connection from B moves
 *            64 MiB to A: it completes with every byte right
 *
 * Prints one JSON line with the counts and rates.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rte_errno.h>
#include <rte_malloc.h>
#include <rte_ring.h>
#include <rte_ip.h>
#include <rte_tcp.h>

#include "engine/stack.h"
#include "engine/worker.h"
#include "port/port.h"
#include "rnic/rnic.h"
#include "rnic/rnic_tcp.h"

#define CHECK(c, ...) do { if (!(c)) { fprintf(stderr, "FAIL %s:%d: ", __FILE__, \
	__LINE__); fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); exit(1); } } while (0)

#define BYTES (64u << 20)
#define HALF_OPEN 100000u        /* phase 1: SYNs at least */
#define BAD_ACKS 1000u           /* phase 2 */
#define A_IP 0xc0000201u
#define B_IP 0xc0000202u

static struct rnic_stack *A, *B;
static volatile uint64_t received, sent, bad_bytes, flood_sent;
static volatile int src_done, sink_done, src_err;
enum { FLOOD_SYN, FLOOD_ACK, FLOOD_OFF };
static volatile int mode = FLOOD_OFF;   /* main() starts it */
static volatile uint64_t acks_sent;
static uint64_t syn_idx;           /* the next SYN's 4-tuple */
static bool no_flood;
static uint64_t rng = 0x1234567;

static uint8_t pattern(uint64_t i) { return (uint8_t)(i * 7 + (i >> 9)); }

static int sink_token;
static void *sink_accept(struct rnic_tcp_conn *c, void *ctx) { (void)c; (void)ctx; return &sink_token; }
static void sink_recv(struct rnic_tcp_conn *c, void *ctx, struct rte_mbuf *m)
{
	(void)c; (void)ctx;
	for (struct rte_mbuf *s = m; s; s = s->next) {
		const uint8_t *p = rte_pktmbuf_mtod(s, const uint8_t *);
		for (unsigned i = 0; i < s->data_len; i++)
			bad_bytes += p[i] != pattern(received + i);
		received += s->data_len;
	}
	rte_pktmbuf_free(m);
}
static void sink_eof(struct rnic_tcp_conn *c, void *ctx) { (void)ctx; rnic_tcp_close(c); }
static void sink_closed(struct rnic_tcp_conn *c, void *ctx, int e) { (void)c; (void)ctx; (void)e; sink_done = 1; }

static void src_push(struct rnic_tcp_conn *c, void *ctx)
{
	(void)ctx;
	uint16_t mss = rnic_tcp_mss(c);
	while (sent < BYTES && rnic_tcp_send_space(c) >= mss) {
		struct rte_mbuf *m = rte_pktmbuf_alloc(rnic_tcp_pool(c));
		if (!m)
			break;
		unsigned n = BYTES - sent < mss ? BYTES - sent : mss;
		uint8_t *p = (uint8_t *)rte_pktmbuf_append(m, (uint16_t)n);
		for (unsigned i = 0; i < n; i++)
			p[i] = pattern(sent + i);
		if (rnic_tcp_send(c, m) != 0) {
			rte_pktmbuf_free(m);
			break;
		}
		sent += n;
	}
	if (sent == BYTES)
		rnic_tcp_close(c);
}
static void src_closed(struct rnic_tcp_conn *c, void *ctx, int e) { (void)c; (void)ctx; src_err = e; src_done = 1; }

static const struct rnic_tcp_ops sink_ops = { .accept = sink_accept, .recv = sink_recv,
	.eof = sink_eof, .closed = sink_closed };
static const struct rnic_tcp_ops src_ops = { .connected = src_push, .sent = src_push,
	.eof = sink_eof, .closed = src_closed };

/*
 * Spoofed source @p k of a SYN (or, with @p ack, of a forged final ACK):
 * distinct for every k below 15 million. Even k: on A's link, 250
 * addresses x 60000 ports; odd k: off it, 10.0.0.0/8 (acks: 11.0.0.0/8).
 */
static void spoof(uint64_t k, bool ack, uint32_t *ip, uint16_t *port)
{
	uint64_t j = k / 2;
	if (!ack && k % 2 == 0) {
		*ip = 0xc0000200u | (uint32_t)(3 + j % 250);
		*port = (uint16_t)(1024 + (j / 250) % 60000);
	} else {
		*ip = (ack ? 0x0b000000u : 0x0a000000u) | (uint32_t)(j & 0xffffff);
		*port = (uint16_t)(1024 + j % 60000);
	}
}

/* B's flood poller: 32 spoofed SYNs (or forged ACKs) per loop straight
 * onto B's port. */
static unsigned flood(struct rnic_worker *w, void *arg)
{
	struct rnic_port *p = w->st->ports[0], *a = arg;
	struct rte_mbuf *pk[32];
	unsigned n = 0;
	static struct rte_ring *link;
	static bool looked;
	int md = mode;
	if (md == FLOOD_OFF || no_flood || (md == FLOOD_ACK && acks_sent >= BAD_ACKS))
		return 0;
	/* flood as fast as A drains, but leave half the link to real traffic:
	 * a link that is always full tests the link, not the SYN stage */
	if (!looked) {
		link = rnic_ring_pair_tx("flood.b", 0);
		looked = true;
		if (link == NULL) {
			fprintf(stderr, "FAIL: no ring behind flood.b\n");
			exit(1);
		}
	}
	if (rte_ring_free_count(link) < 2048)
		return 0;
	unsigned want = md == FLOOD_ACK && BAD_ACKS - acks_sent < 32 ?
			(unsigned)(BAD_ACKS - acks_sent) : 32;
	for (; n < want; n++) {
		struct rte_mbuf *m = rte_pktmbuf_alloc(p->pool);
		if (!m)
			break;
		rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17;
		uint8_t *f = (uint8_t *)rte_pktmbuf_append(m, 14 + 20 + 40);
		struct rte_ether_hdr *eh = (void *)f;
		eh->dst_addr = a->mac;
		eh->src_addr = p->mac;
		eh->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
		struct rte_ipv4_hdr *ip = (void *)(eh + 1);
		memset(ip, 0, 20);
		ip->version_ihl = 0x45;
		ip->total_length = rte_cpu_to_be_16(60);
		ip->time_to_live = 64;
		ip->next_proto_id = IPPROTO_TCP;
		/* half on the link (A resolves them by ARP, bounded), half off it */
		uint32_t src;
		uint16_t sport;
		spoof(md == FLOOD_ACK ? acks_sent + n : syn_idx + n, md == FLOOD_ACK, &src, &sport);
		ip->src_addr = rte_cpu_to_be_32(src);
		ip->dst_addr = rte_cpu_to_be_32(A_IP);
		ip->hdr_checksum = rte_ipv4_cksum(ip);
		struct rte_tcp_hdr *th = (void *)(ip + 1);
		memset(th, 0, 40);
		th->src_port = rte_cpu_to_be_16(sport);
		th->dst_port = rte_cpu_to_be_16(5001);
		th->sent_seq = rte_cpu_to_be_32((uint32_t)(rng >> 32));
		th->data_off = 10 << 4;
		th->tcp_flags = RTE_TCP_SYN_FLAG;
		if (md == FLOOD_ACK) {   /* a final ACK guessing a cookie */
			th->recv_ack = rte_cpu_to_be_32((uint32_t)rng);
			th->tcp_flags = RTE_TCP_ACK_FLAG;
		}
		th->rx_win = rte_cpu_to_be_16(65535);
		uint8_t *o = (uint8_t *)(th + 1);
		static const uint8_t syn_opts[20] = { 2, 4, 0x05, 0xb4, 4, 2, 8, 10, 0, 0, 0, 1,
						      0, 0, 0, 0, 1, 3, 3, 7 };
		static const uint8_t ack_opts[20] = { 1, 1, 8, 10, 0, 0, 0, 1, 0, 0, 0, 0,
						      1, 1, 1, 1, 1, 1, 1, 1 };
		memcpy(o, md == FLOOD_ACK ? ack_opts : syn_opts, 20);
		th->cksum = rte_ipv4_udptcp_cksum(ip, th);
		pk[n] = m;
	}
	uint16_t k = rnic_port_tx(p, (uint16_t)w->id, pk, (uint16_t)n);
	if (k < n)
		rte_pktmbuf_free_bulk(&pk[k], n - k);
	if (md == FLOOD_ACK) {
		acks_sent += k;
	} else {
		flood_sent += k;
		syn_idx += k;
	}
	return n;
}

static void do_connect(struct rnic_worker *w, void *arg)
{
	struct rnic_tcp_conn *c;
	*(int *)arg = rnic_tcp_connect(w, A_IP, 5001, &src_ops, NULL, &c);
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	struct rnic_config ca, cb;
	(void)argc;
	no_flood = getenv("NO_FLOOD") != NULL;
	rnic_config_init(&ca);
	snprintf(ca.eal_args[ca.n_eal_args++], 128, "--no-huge");
	snprintf(ca.eal_args[ca.n_eal_args++], 128, "-m");
	snprintf(ca.eal_args[ca.n_eal_args++], 128, "1024");
	CHECK(rnic_eal_init(argv[0], &ca, 2) == 0, "EAL");
	CHECK(rnic_ring_pair("flood", 1) == 0, "ring pair");
	ca.n_eal_args = 0;
	cb = ca;
	ca.poll_mode = cb.poll_mode = RNIC_POLL_BUSY;
	for (int i = 0; i < 2; i++) {
		struct rnic_config *c = i ? &cb : &ca;
		c->n_ports = 1;
		rnic_port_cfg_init(&c->ports[0]);
		snprintf(c->ports[0].ring, sizeof(c->ports[0].ring), "flood.%c", i ? 'b' : 'a');
		c->ports[0].ip = i ? B_IP : A_IP;
		c->ports[0].prefix_len = 24;
		c->ports[0].mbufs = 65535;
	}
	A = rnic_stack_create(&ca);
	B = rnic_stack_create(&cb);
	CHECK(A && B, "stacks: %s", rte_strerror(rte_errno));
	CHECK(rnic_tcp_listen(A, 5001, &sink_ops, NULL, 16) == 0, "listen");
	CHECK(rnic_worker_add_poller(B->workers[0], "flood", flood, A->ports[0]) == 0, "poller");
	CHECK(rnic_stack_start(A) == 0 && rnic_stack_start(B) == 0, "start");

	/* phase 1: the flood alone until 10^5 SYNs (at most 20 s: ASan, a
	 * loaded machine), the cookie rate of one worker; no state */
	struct rnic_tcp_stats p0, p1;
	struct rnic_stack_stats ss0;
	struct rte_malloc_socket_stats h0, h1;
	rnic_tcp_stats(A, &p0);
	rnic_stack_stats(A, &ss0);
	CHECK(rte_malloc_get_socket_stats(rte_socket_id(), &h0) == 0, "heap stats");
	mode = FLOOD_SYN;
	double f0 = now_s();
	uint64_t max_tcbs1 = 0, max_mbufs1 = 0;
	do {
		struct rnic_stack_stats ss;
		usleep(2000);
		rnic_tcp_stats(A, &p1);
		rnic_stack_stats(A, &ss);
		max_tcbs1 = p1.tcbs > max_tcbs1 ? p1.tcbs : max_tcbs1;
		max_mbufs1 = ss.mbufs_in_use > max_mbufs1 ? ss.mbufs_in_use : max_mbufs1;
	} while (p1.cookies_sent - p0.cookies_sent < HALF_OPEN && now_s() - f0 < 20);
	double flood_s = now_s() - f0;
	mode = FLOOD_OFF;
	double d0 = now_s();
	do {   /* the ring drains (B's poller may finish one more batch) */
		usleep(5000);
		rnic_tcp_stats(A, &p1);
	} while (p1.syns - p0.syns != flood_sent && now_s() - d0 < 2);
	CHECK(rte_malloc_get_socket_stats(rte_socket_id(), &h1) == 0, "heap stats");
	double flood_rate = (p1.cookies_sent - p0.cookies_sent) / flood_s;
	uint64_t half_open = p1.syns - p0.syns;
	CHECK(half_open >= HALF_OPEN, "only %lu SYNs in %.1f s", (unsigned long)half_open, flood_s);
	CHECK(p1.cookies_sent - p0.cookies_sent == half_open, "%lu SYNs, %lu cookies",
	      (unsigned long)half_open, (unsigned long)(p1.cookies_sent - p0.cookies_sent));
	CHECK(half_open == flood_sent, "B sent %lu SYNs, A saw %lu", (unsigned long)flood_sent,
	      (unsigned long)half_open);
	CHECK(max_tcbs1 == 0 && p1.tcbs == 0, "%lu TCBs under the flood", (unsigned long)max_tcbs1);
	CHECK(p1.cookie_valid == 0 && p1.passive_opens == 0, "connections from nowhere");
	/* no state per SYN: a TCB is 10 KiB of heap, a held frame an mbuf;
	 * the mbufs are bounded by the ARP holds (256 addresses x 16) and the
	 * frames in flight, not by the 10^5 SYNs */
	int64_t heap_growth = (int64_t)h1.heap_allocsz_bytes - (int64_t)h0.heap_allocsz_bytes;
	CHECK(heap_growth < (1 << 20), "the heap grew by %ld bytes", (long)heap_growth);
	CHECK(max_mbufs1 <= ss0.mbufs_in_use + 4096 + 1024, "mbuf use grew from %lu to %lu",
	      (unsigned long)ss0.mbufs_in_use, (unsigned long)max_mbufs1);

	/* phase 2: final ACKs with forged cookies, each from its own 4-tuple */
	mode = FLOOD_ACK;
	struct rnic_tcp_stats p2;
	double a0 = now_s();
	do {
		usleep(1000);
		rnic_tcp_stats(A, &p2);
	} while (p2.cookie_invalid - p1.cookie_invalid < BAD_ACKS && now_s() - a0 < 5);
	usleep(20000);
	rnic_tcp_stats(A, &p2);
	CHECK(acks_sent == BAD_ACKS, "B sent %lu forged ACKs", (unsigned long)acks_sent);
	CHECK(p2.cookie_invalid - p1.cookie_invalid == BAD_ACKS, "%lu of %u forged ACKs counted "
	      "invalid in %.1f s (A: %lu segments in, %lu bad options, %lu SYNs)",
	      (unsigned long)(p2.cookie_invalid - p1.cookie_invalid), BAD_ACKS, now_s() - a0,
	      (unsigned long)(p2.segs_in - p1.segs_in), (unsigned long)(p2.bad_opts - p1.bad_opts),
	      (unsigned long)(p2.syns - p1.syns));
	CHECK(p2.resets_out - p1.resets_out == BAD_ACKS, "%lu resets for %u forged ACKs",
	      (unsigned long)(p2.resets_out - p1.resets_out), BAD_ACKS);
	CHECK(p2.cookie_valid == 0 && p2.tcbs == 0 && p2.passive_opens == 0,
	      "a forged ACK made a connection");

	/* phase 3: the flood goes on while a real connection moves 64 MiB */
	mode = FLOOD_SYN;
	int rc = -1;
	rnic_worker_call_sync(B->workers[0], do_connect, &rc);
	CHECK(rc == 0, "connect: %d", rc);
	double t0 = now_s();
	uint64_t max_tcbs = 0, max_mbufs = 0;
	unsigned tick = 0;
	bool debug = getenv("FLOOD_DEBUG") != NULL;
	struct rnic_tcp_stats ts0;
	rnic_tcp_stats(A, &ts0);
	while (!(src_done && sink_done) && now_s() - t0 < 120) {
		struct rnic_tcp_stats ts;
		struct rnic_stack_stats ss;
		rnic_tcp_stats(A, &ts);
		rnic_stack_stats(A, &ss);
		max_tcbs = ts.tcbs > max_tcbs ? ts.tcbs : max_tcbs;
		max_mbufs = ss.mbufs_in_use > max_mbufs ? ss.mbufs_in_use : max_mbufs;
		usleep(5000);
		if (debug && ++tick % 200 == 0) {
			struct rnic_tcp_stats tb;
			struct rnic_stack_stats sb;
			rnic_tcp_stats(B, &tb);
			rnic_stack_stats(B, &sb);
			fprintf(stderr, "t=%.0f rx=%lu A: segs %lu/%lu rtx %lu rto %lu oow %lu dup %lu drops %lu | "
				"B: segs %lu/%lu rtx %lu rto %lu tlp %lu oow %lu drops %lu arp %lu/%lu\n",
				now_s() - t0, (unsigned long)received, (unsigned long)ts.segs_in,
				(unsigned long)ts.segs_out, (unsigned long)ts.retransmits,
				(unsigned long)ts.rtos, (unsigned long)ts.out_of_window,
				(unsigned long)ts.dup_segs, (unsigned long)ss.drops,
				(unsigned long)tb.segs_in, (unsigned long)tb.segs_out,
				(unsigned long)tb.retransmits, (unsigned long)tb.rtos,
				(unsigned long)tb.tail_probes, (unsigned long)tb.out_of_window,
				(unsigned long)sb.drops, (unsigned long)sb.arp_requests,
				(unsigned long)sb.arp_replies);
			for (int k = 0; k < RNIC_DROP_MAX; k++)
				if (A->workers[0]->drops[k] || B->workers[0]->drops[k])
					fprintf(stderr, "  drop %d A %lu B %lu\n", k,
						(unsigned long)A->workers[0]->drops[k],
						(unsigned long)B->workers[0]->drops[k]);
		}
	}
	double secs = now_s() - t0;
	mode = FLOOD_OFF;
	rnic_stack_stop(B);
	rnic_stack_stop(A);
	struct rnic_tcp_stats ts;
	rnic_tcp_stats(A, &ts);
	printf("{\"test\": \"syn_flood\", \"half_open\": %lu, \"half_open_seconds\": %.2f, "
	       "\"heap_growth_bytes\": %ld, \"mbufs_before\": %lu, \"max_mbufs_half_open\": %lu, "
	       "\"forged_acks_invalid\": %lu, "
	       "\"flood_syns\": %lu, \"syns_seen\": %lu, "
	       "\"cookies_sent\": %lu, \"cookie_rate_flood_only_per_s\": %.0f, "
	       "\"cookie_rate_during_transfer_per_s\": %.0f, \"max_tcbs\": %lu, "
	       "\"max_mbufs_in_use\": %lu, \"transfer_bytes\": %lu, \"bad_bytes\": %lu, "
	       "\"seconds\": %.2f}\n", (unsigned long)half_open, flood_s, (long)heap_growth,
	       (unsigned long)ss0.mbufs_in_use, (unsigned long)max_mbufs1,
	       (unsigned long)(p2.cookie_invalid - p1.cookie_invalid),
	       (unsigned long)flood_sent, (unsigned long)ts.syns,
	       (unsigned long)ts.cookies_sent, flood_rate,
	       (ts.cookies_sent - ts0.cookies_sent) / secs,
	       (unsigned long)max_tcbs, (unsigned long)max_mbufs, (unsigned long)received,
	       (unsigned long)bad_bytes, secs);
	CHECK(src_done && sink_done, "transfer did not finish (received %lu)", (unsigned long)received);
	CHECK(src_err == 0, "source closed with %d", src_err);
	CHECK(received == BYTES && bad_bytes == 0, "data wrong");
	CHECK(ts.syns > HALF_OPEN, "flood too weak to mean anything: %lu SYNs",
	      (unsigned long)ts.syns);
	CHECK(ts.cookies_sent == ts.syns, "a SYN went unanswered");
	CHECK(ts.cookie_valid == 1 && ts.passive_opens == 1, "cookie_valid %lu, passive opens %lu: "
	      "only the legitimate connection", (unsigned long)ts.cookie_valid,
	      (unsigned long)ts.passive_opens);
	CHECK(ts.cookie_invalid == BAD_ACKS, "cookie_invalid %lu", (unsigned long)ts.cookie_invalid);
	/* the legitimate connection, maybe in TIME_WAIT: never one per SYN */
	CHECK(max_tcbs <= 2, "TCBs grew to %lu under the flood", (unsigned long)max_tcbs);
	/* bounded: RX descriptors plus the window plus ARP holds, not per SYN */
	CHECK(max_mbufs < 1024 + 8192, "mbuf use grew to %lu", (unsigned long)max_mbufs);
	rnic_stack_destroy(B);
	rnic_stack_destroy(A);
	printf("1 passed, 0 failed\n");
	return 0;
}
