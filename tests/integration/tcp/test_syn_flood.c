/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * SYN flood (seed 004): stack B floods stack A with spoofed SYNs over a
 * net_ring link, as fast as its worker can build them, while a legitimate
 * connection from B moves 64 MiB to A. A must answer every SYN with a
 * cookie and allocate nothing for them: its TCB count and mbuf use stay
 * flat, and the transfer completes with every byte right.
 * Prints one JSON line with the flood and cookie rates.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rte_errno.h>
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
#define A_IP 0xc0000201u
#define B_IP 0xc0000202u

static struct rnic_stack *A, *B;
static volatile uint64_t received, sent, bad_bytes, flood_sent;
static volatile int src_done, sink_done, src_err;
static volatile bool flooding = true;
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

/* B's flood poller: 32 spoofed SYNs per loop straight onto B's port. */
static unsigned flood(struct rnic_worker *w, void *arg)
{
	struct rnic_port *p = w->st->ports[0], *a = arg;
	struct rte_mbuf *pk[32];
	unsigned n = 0;
	static struct rte_ring *link;
	static bool looked;
	if (!flooding || no_flood)
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
	for (; n < 32; n++) {
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
		uint32_t src = (rng & 1) ? (0xc0000200u | (uint32_t)(3 + (rng >> 8) % 250))
					 : (0x0a000000u | (uint32_t)(rng >> 40));
		ip->src_addr = rte_cpu_to_be_32(src);
		ip->dst_addr = rte_cpu_to_be_32(A_IP);
		ip->hdr_checksum = rte_ipv4_cksum(ip);
		struct rte_tcp_hdr *th = (void *)(ip + 1);
		memset(th, 0, 40);
		th->src_port = rte_cpu_to_be_16((uint16_t)(1024 + (rng >> 20) % 60000));
		th->dst_port = rte_cpu_to_be_16(5001);
		th->sent_seq = rte_cpu_to_be_32((uint32_t)(rng >> 32));
		th->data_off = 10 << 4;
		th->tcp_flags = RTE_TCP_SYN_FLAG;
		th->rx_win = rte_cpu_to_be_16(65535);
		uint8_t *o = (uint8_t *)(th + 1);
		uint8_t opts[20] = { 2, 4, 0x05, 0xb4, 4, 2, 8, 10, 0, 0, 0, 1, 0, 0, 0, 0, 1, 3, 3, 7 };
		memcpy(o, opts, 20);
		th->cksum = rte_ipv4_udptcp_cksum(ip, th);
		pk[n] = m;
	}
	uint16_t k = rnic_port_tx(p, (uint16_t)w->id, pk, (uint16_t)n);
	if (k < n)
		rte_pktmbuf_free_bulk(&pk[k], n - k);
	flood_sent += k;
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

	/* phase 1: flood alone for 2 s, the cookie rate of one worker */
	struct rnic_tcp_stats p0, p1;
	rnic_tcp_stats(A, &p0);
	double f0 = now_s();
	usleep(2000000);
	rnic_tcp_stats(A, &p1);
	double flood_rate = (p1.cookies_sent - p0.cookies_sent) / (now_s() - f0);
	/* phase 2: the flood goes on while a real connection moves 64 MiB */
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
	flooding = false;
	rnic_stack_stop(B);
	rnic_stack_stop(A);
	struct rnic_tcp_stats ts;
	rnic_tcp_stats(A, &ts);
	printf("{\"test\": \"syn_flood\", \"flood_syns\": %lu, \"syns_seen\": %lu, "
	       "\"cookies_sent\": %lu, \"cookie_rate_flood_only_per_s\": %.0f, "
	       "\"cookie_rate_during_transfer_per_s\": %.0f, \"max_tcbs\": %lu, "
	       "\"max_mbufs_in_use\": %lu, \"transfer_bytes\": %lu, \"bad_bytes\": %lu, "
	       "\"seconds\": %.2f}\n", (unsigned long)flood_sent, (unsigned long)ts.syns,
	       (unsigned long)ts.cookies_sent, flood_rate,
	       (ts.cookies_sent - ts0.cookies_sent) / secs,
	       (unsigned long)max_tcbs, (unsigned long)max_mbufs, (unsigned long)received,
	       (unsigned long)bad_bytes, secs);
	CHECK(src_done && sink_done, "transfer did not finish (received %lu)", (unsigned long)received);
	CHECK(src_err == 0, "source closed with %d", src_err);
	CHECK(received == BYTES && bad_bytes == 0, "data wrong");
	CHECK(ts.syns > 10000, "flood too weak to mean anything: %lu SYNs", (unsigned long)ts.syns);
	CHECK(ts.cookies_sent == ts.syns, "a SYN went unanswered");
	/* the legitimate connection, maybe in TIME_WAIT: never one per SYN */
	CHECK(max_tcbs <= 2, "TCBs grew to %lu under the flood", (unsigned long)max_tcbs);
	/* bounded: RX descriptors plus the window plus ARP holds, not per SYN */
	CHECK(max_mbufs < 1024 + 8192, "mbuf use grew to %lu", (unsigned long)max_mbufs);
	rnic_stack_destroy(B);
	rnic_stack_destroy(A);
	printf("1 passed, 0 failed\n");
	return 0;
}
