/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * SYN-cookie replies per second of one worker (issue 3's benchmark):
 *
 *   stack A  listens on one worker, on its own lcore: every SYN gets a
 *            SYN-ACK whose ISS is a cookie (seed 004), nothing is kept.
 *   stack B  floods A over a net_ring link with SYNs from spoofed sources
 *            off A's link (10.0.0.0/8, distinct 4-tuples), routed back
 *            through A's gateway, which is B: A resolves one neighbour, B
 *            drops the SYN-ACKs (not its address). B's worker is run by
 *            the main thread (run to completion: one busy thread per CPU
 *            of a two-CPU machine); with --one A's as well (both on one
 *            CPU: A's capacity, less disturbed by load on the other).
 *
 * B keeps A's receive ring filled to --depth frames, so A never waits for
 * work while B runs. Two figures: replies per second of the run (wall
 * clock), and replies per second of A's busy time (the cycles its pollers
 * spent in calls that did work): the worker's capacity, which is what the
 * wall figure shows when A has a CPU to itself and B keeps up. On a shared
 * machine the two differ by the time A spun idle, waiting for B's thread
 * to be scheduled. The SYNs come from a template with
 * the source address, port and sequence number patched in and both
 * checksums adjusted incrementally, so B spends less per SYN than A.
 *
 * Prints one JSON object. Not a test: it asserts nothing about speed; it
 * fails only when the SYN stage misbehaves (a SYN unanswered, a TCB made).
 *
 *   tcp_syn_cookies [--seconds S] [--depth N] [--one]
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_ip.h>
#include <rte_ring.h>
#include <rte_tcp.h>

#include "engine/stack.h"
#include "engine/worker.h"
#include "port/port.h"
#include "rnic/rnic.h"
#include "rnic/rnic_tcp.h"

#define PORT 5003
#define SYN_LEN (14 + 20 + 40)   /* Ethernet, IPv4, TCP with 20 option bytes */
#define BURST 32

#define FAIL(...) do { fprintf(stderr, "tcp_syn_cookies: " __VA_ARGS__); \
	fputc('\n', stderr); exit(1); } while (0)

#include "bench_pair.h"


/* The flood: a template SYN and the sums of its fixed parts. */
struct flood {
	struct rte_ring *link;        /* A's receive ring (B transmits into it) */
	unsigned depth;               /* frames kept queued on it */
	uint8_t tmpl[SYN_LEN];
	uint32_t ip_sum, tcp_sum;     /* unfolded sums without the varied fields */
	uint64_t next;                /* the next SYN's 4-tuple number */
	uint64_t sent, link_full;
	volatile int on;
};

static uint32_t sum16(const void *p, size_t n)
{
	const uint8_t *b = p;
	uint32_t s = 0;
	for (size_t i = 0; i + 1 < n; i += 2)
		s += (uint32_t)b[i] << 8 | b[i + 1];
	return s;
}

static uint16_t fold(uint32_t s)
{
	s = (s & 0xffff) + (s >> 16);
	s = (s & 0xffff) + (s >> 16);
	return (uint16_t)s;
}

/* Build the template: A's and B's MACs, a SYN to A:PORT with MSS, SACK-
 * permitted, timestamps and window scale; varied fields left zero. */
static void flood_init(struct flood *f, const struct rnic_port *a, const struct rnic_port *b)
{
	struct rte_ether_hdr *eh = (void *)f->tmpl;
	struct rte_ipv4_hdr *ip = (void *)(eh + 1);
	struct rte_tcp_hdr *th = (void *)(ip + 1);
	static const uint8_t opts[20] = { 2, 4, 0x05, 0xb4, 4, 2, 8, 10, 0, 0, 0, 1,
					  0, 0, 0, 0, 1, 3, 3, 7 };
	memset(f->tmpl, 0, sizeof(f->tmpl));
	eh->dst_addr = a->mac;
	eh->src_addr = b->mac;
	eh->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
	ip->version_ihl = 0x45;
	ip->total_length = rte_cpu_to_be_16(60);
	ip->time_to_live = 64;
	ip->next_proto_id = IPPROTO_TCP;
	ip->dst_addr = rte_cpu_to_be_32(A_IP);
	th->dst_port = rte_cpu_to_be_16(PORT);
	th->data_off = 10 << 4;
	th->tcp_flags = RTE_TCP_SYN_FLAG;
	th->rx_win = rte_cpu_to_be_16(65535);
	memcpy(th + 1, opts, sizeof(opts));
	f->ip_sum = sum16(ip, 20);
	/* pseudo header: destination, protocol, TCP length (source varies) */
	f->tcp_sum = sum16(th, 40) + (A_IP >> 16) + (A_IP & 0xffff) + IPPROTO_TCP + 40;
}

/* SYN number @p k: source 10.x.y.z:port, distinct for k below 2^24 * 60000. */
static void flood_fill(const struct flood *f, uint8_t *p, uint64_t k, uint32_t isn)
{
	uint32_t src = 0x0a000000u | (uint32_t)(k & 0xffffff);
	uint16_t sport = (uint16_t)(1024 + (k >> 24) % 60000);
	memcpy(p, f->tmpl, SYN_LEN);
	struct rte_ipv4_hdr *ip = (void *)(p + 14);
	struct rte_tcp_hdr *th = (void *)(ip + 1);
	uint32_t s_src = (src >> 16) + (src & 0xffff);
	ip->src_addr = rte_cpu_to_be_32(src);
	ip->hdr_checksum = rte_cpu_to_be_16((uint16_t)~fold(f->ip_sum + s_src));
	th->src_port = rte_cpu_to_be_16(sport);
	th->sent_seq = rte_cpu_to_be_32(isn);
	th->cksum = rte_cpu_to_be_16((uint16_t)~fold(f->tcp_sum + s_src + sport +
						     (isn >> 16) + (isn & 0xffff)));
}

/* B's poller: top A's receive ring up to the depth, a burst at a time. */
static unsigned flooder(struct rnic_worker *w, void *arg)
{
	struct flood *f = arg;
	struct rnic_port *p = w->st->ports[0];
	struct rte_mbuf *pk[BURST];

	if (!f->on || rte_ring_count(f->link) + BURST > f->depth)
		return 0;
	if (rte_pktmbuf_alloc_bulk(p->pool, pk, BURST) != 0)
		return 0;
	for (unsigned i = 0; i < BURST; i++) {
		uint8_t *d = (uint8_t *)rte_pktmbuf_append(pk[i], SYN_LEN);
		flood_fill(f, d, f->next + i, (uint32_t)((f->next + i) * 0x9e3779b9u));
	}
	uint16_t n = rnic_port_tx(p, (uint16_t)w->id, pk, BURST);
	if (n < BURST) {
		f->link_full++;
		rte_pktmbuf_free_bulk(&pk[n], BURST - n);
	}
	f->next += n;
	f->sent += n;
	return BURST;
}

static struct rnic_stack *one_A;   /* --one: A, run by drive() too */

static void drive(struct rnic_stack *B, double seconds)
{
	bench_drive(B, one_A, seconds);
}


static int token;
static void *srv_accept(struct rnic_tcp_conn *c, void *ctx)
{
	(void)c; (void)ctx;
	return &token;
}
static const struct rnic_tcp_ops srv_ops = { .accept = srv_accept };

int main(int argc, char **argv)
{
	double seconds = 3;
	bool one = false;
	static struct flood f = { .depth = 1024 };
	static const struct option opts[] = {
		{ "seconds", required_argument, 0, 's' }, { "depth", required_argument, 0, 'd' },
		{ "one", no_argument, 0, 'o' },
		{ 0, 0, 0, 0 } };
	int o;
	while ((o = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		char *end;
		switch (o) {
		case 's': seconds = strtod(optarg, &end);
			if (*end || seconds <= 0 || seconds > 600)
				FAIL("--seconds takes a number of seconds (0..600]");
			break;
		case 'd': f.depth = (unsigned)strtoul(optarg, &end, 10);
			if (*end || f.depth < 2 * BURST || f.depth > 4096)
				FAIL("--depth takes %u..4096", 2 * BURST);
			break;
		case 'o': one = true; break;
		default: FAIL("usage: tcp_syn_cookies [--seconds S] [--depth N] [--one]");
		}
	}

	struct rnic_config ca, cb;
	bench_pair_configs(argv[0], "sc", 16383, &ca, &cb);
	ca.ports[0].gateway = B_IP;   /* the spoofed sources are behind B */
	struct rnic_stack *A = rnic_stack_create(&ca), *B = rnic_stack_create(&cb);
	if (A == NULL || B == NULL)
		FAIL("stacks: %s", rte_strerror(rte_errno));
	f.link = rnic_ring_pair_tx("sc.b", 0);
	if (f.link == NULL)
		FAIL("no ring behind sc.b");
	flood_init(&f, A->ports[0], B->ports[0]);
	if (rnic_tcp_listen(A, PORT, &srv_ops, NULL, 16) != 0)
		FAIL("listen");
	if (rnic_worker_add_poller(B->workers[0], "flood", flooder, &f) != 0)
		FAIL("poller");
	if (one)
		one_A = A;   /* not started: drive() runs it */
	else if (rnic_stack_start(A) != 0)
		FAIL("start");

	/* warm up (ARP for the gateway, caches) for a tenth of the run */
	f.on = 1;
	drive(B, seconds / 10);
	struct rnic_tcp_stats s0, s1;
	struct rnic_worker_stats w0 = A->workers[0]->stats, w1;
	rnic_tcp_stats(A, &s0);
	uint64_t c0 = bench_busy_cycles(A->workers[0]);
	double t0 = now_s();
	drive(B, seconds);
	rnic_tcp_stats(A, &s1);
	w1 = A->workers[0]->stats;
	double busy_s = (double)(bench_busy_cycles(A->workers[0]) - c0) / (double)rte_get_tsc_hz();
	double el = now_s() - t0;
	f.on = 0;
	drive(B, 0.05);   /* A drains the ring */
	struct rnic_tcp_stats se;
	rnic_tcp_stats(A, &se);
	rnic_stack_stop(A);

	uint64_t replies = s1.cookies_sent - s0.cookies_sent;
	double busy = w1.loops > w0.loops ?
		      (double)(w1.busy_loops - w0.busy_loops) / (double)(w1.loops - w0.loops) : 0;
	printf("{\"syn_cookie_replies_per_s_per_worker\": %.0f, "
	       "\"replies_per_busy_s\": %.0f, \"a_busy_seconds\": %.3f, \"replies\": %lu, "
	       "\"seconds\": %.3f, \"syns_sent\": %lu, \"syns_seen\": %lu, "
	       "\"cookies_sent\": %lu, \"a_busy_loop_fraction\": %.3f, \"link_full\": %lu, "
	       "\"tcbs\": %lu, \"depth\": %u, \"drive\": \"%s\"}\n",
	       replies / el, busy_s > 0 ? replies / busy_s : 0, busy_s,
	       (unsigned long)replies, el, (unsigned long)f.sent,
	       (unsigned long)se.syns, (unsigned long)se.cookies_sent, busy,
	       (unsigned long)f.link_full, (unsigned long)se.tcbs, f.depth,
	       one ? "one" : "inline");
	int rc = 0;
	if (se.syns != f.sent || se.cookies_sent != se.syns) {
		fprintf(stderr, "tcp_syn_cookies: B sent %lu SYNs, A saw %lu and answered %lu\n",
			(unsigned long)f.sent, (unsigned long)se.syns,
			(unsigned long)se.cookies_sent);
		rc = 1;
	}
	if (se.tcbs != 0 || se.passive_opens != 0) {
		fprintf(stderr, "tcp_syn_cookies: %lu TCBs from a SYN flood\n",
			(unsigned long)se.tcbs);
		rc = 1;
	}
	rnic_stack_destroy(B);
	rnic_stack_destroy(A);
	return rc;
}
