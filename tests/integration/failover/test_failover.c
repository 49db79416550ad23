/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Port failover by address takeover (issue 9 item 3).
 *
 * stream: stacks A and B, two ports each, wired port to port by two
 * net_ring pairs, all four addresses in 192.0.2.0/24:
 *
 *   A port0 192.0.2.1  ==== ring fo0 ====  B port0 192.0.2.2
 *   A port1 192.0.2.3  ==== ring fo1 ====  B port1 192.0.2.4
 *
 * A streams a pattern to B over TCP from 192.0.2.1 to 192.0.2.2 (so through
 * the ports 0). In the middle the cable between the ports 0 is pulled
 * (rnic_port_set_link(false) on both ends). Each stack's port 1 takes over
 * its port 0's address and the connection's TCBs; the connection must stay
 * up and deliver every byte in order and intact, the rest of the stream
 * through the ports 1. Prints the time from the link-down to the first
 * byte delivered after both takeovers finished, and each stack's takeover
 * time (link-down to every worker done). net_ring counts packets, not
 * bytes, so the port checks count packets.
 *
 * stream ipv6 (argument "ipv6"): the same with IPv6-only ports,
 * 2001:db8::1 to ::4 on 2001:db8::/64; the survivor is found by the IPv6
 * prefix (before, by the IPv4 subnet only: an IPv6-only port had none).
 *
 * single: a one-port stack has no survivor: rnic_port_failover() says
 * -ENODEV, a link-down is counted as such, nothing breaks.
 *
 * Both check that every pool is back to its in-use count from before.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_ring.h>

#include "engine/stack.h"
#include "port/port.h"
#include "rnic/rnic.h"
#include "rnic/rnic_tcp.h"

#define CHECK(c, ...) do { if (!(c)) { fprintf(stderr, "FAIL %s:%d: ", __FILE__, \
	__LINE__); fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); exit(1); } } while (0)

#define IP(d)      (0xc0000200u | (d))
#define BYTES      (48u << 20)
#define PULL_AT    (12u << 20)   /* bytes received when the cable goes */
#define WORKERS    2
#define TCP_PORT   5001

static struct rnic_stack *A, *B;
static bool v6;   /* the stream over IPv6-only ports */

/* --- the stream --------------------------------------------------------- */

static uint8_t pattern(uint64_t i) { return (uint8_t)(i * 131 + (i >> 11) + (i >> 19)); }

static volatile uint64_t received, sent, bad_bytes;
static volatile int src_done, sink_done, src_err = 1, sink_err = 1, src_closed_early;
static volatile uint64_t down_tsc, first_new_tsc, new_bytes_mark;
static struct rnic_tcp_conn *volatile src_conn;

static int sink_token;
static void *sink_accept(struct rnic_tcp_conn *c, void *ctx) { (void)c; (void)ctx; return &sink_token; }
static void sink_recv(struct rnic_tcp_conn *c, void *ctx, struct rte_mbuf *m)
{
	(void)c; (void)ctx;
	/* new: delivered once both stacks finished their takeover (the
	 * ports 0 are down by then, so it came through the ports 1) */
	uint64_t d = __atomic_load_n(&down_tsc, __ATOMIC_ACQUIRE);
	if (d != 0 && first_new_tsc == 0 &&
	    __atomic_load_n(&A->fo.completed, __ATOMIC_ACQUIRE) != 0 &&
	    __atomic_load_n(&B->fo.completed, __ATOMIC_ACQUIRE) != 0) {
		first_new_tsc = rte_rdtsc();
		new_bytes_mark = received;
	}
	uint64_t r = received, bad = 0;
	for (struct rte_mbuf *s = m; s; s = s->next) {
		const uint8_t *p = rte_pktmbuf_mtod(s, const uint8_t *);
		for (unsigned i = 0; i < s->data_len; i++)
			bad += p[i] != pattern(r + i);
		r += s->data_len;
	}
	bad_bytes += bad;
	received = r;
	rte_pktmbuf_free(m);
}
static void sink_eof(struct rnic_tcp_conn *c, void *ctx) { (void)ctx; rnic_tcp_close(c); }
static void sink_closed(struct rnic_tcp_conn *c, void *ctx, int e)
{
	(void)c; (void)ctx;
	sink_err = e;
	sink_done = 1;
}

static void src_push(struct rnic_tcp_conn *c, void *ctx)
{
	(void)ctx;
	uint16_t mss = rnic_tcp_mss(c);
	while (sent < BYTES && rnic_tcp_send_space(c) >= mss) {
		struct rte_mbuf *m = rte_pktmbuf_alloc(rnic_tcp_pool(c));
		if (m == NULL)
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
	if (sent == BYTES && !src_done)
		rnic_tcp_close(c);
}
static void src_connected(struct rnic_tcp_conn *c, void *ctx)
{
	src_conn = c;
	src_push(c, ctx);
}
static void src_closed(struct rnic_tcp_conn *c, void *ctx, int e)
{
	(void)c; (void)ctx;
	src_err = e;
	src_done = 1;
	if (received < BYTES)
		src_closed_early = 1;
}

static const struct rnic_tcp_ops sink_ops = { .accept = sink_accept, .recv = sink_recv,
	.eof = sink_eof, .closed = sink_closed };
static const struct rnic_tcp_ops src_ops = { .connected = src_connected, .sent = src_push,
	.eof = sink_eof, .closed = src_closed };

/* 2001:db8::d */
static struct rnic_addr ip6(uint8_t d)
{
	struct rnic_addr a = { .family = RNIC_AF_INET6 };
	static const uint8_t net[8] = { 0x20, 0x01, 0x0d, 0xb8 };
	memcpy(a.v6, net, 8);
	a.v6[15] = d;
	return a;
}

static void do_connect(struct rnic_worker *w, void *arg)
{
	struct rnic_tcp_conn *c;
	struct rnic_addr dst = ip6(2);
	*(int *)arg = v6 ? rnic_tcp_connect_addr(w, &dst, TCP_PORT, &src_ops, NULL, &c)
			 : rnic_tcp_connect(w, IP(2), TCP_PORT, &src_ops, NULL, &c);
}

/* --- helpers ---------------------------------------------------------------- */

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* a port on @p ring: 192.0.2.d/24, or with v6 2001:db8::d/64 only */
static void port_on_ring(struct rnic_config *c, const char *ring, uint8_t d)
{
	struct rnic_port_cfg *pc = &c->ports[c->n_ports++];
	rnic_port_cfg_init(pc);
	snprintf(pc->ring, sizeof(pc->ring), "%s", ring);
	if (v6) {
		struct rnic_addr a = ip6(d);
		memcpy(pc->ip6[0].addr, a.v6, 16);
		pc->ip6[0].prefix_len = 64;
		pc->n_ip6 = 1;
		pc->ip = 0;
	} else {
		pc->ip = IP(d);
		pc->prefix_len = 24;
	}
}

/* the port of @p st that serves its address 192.0.2.d or 2001:db8::d */
static struct rnic_port *serving(const struct rnic_stack *st, uint8_t d)
{
	if (!v6)
		return rnic_port_serving(st, IP(d));
	struct rnic_addr a = ip6(d);
	for (unsigned i = 0; i < st->n_ports; i++) {
		const struct rnic_port *p = st->ports[i];
		if (p->cfg.n_ip6 == 0 || memcmp(p->cfg.ip6[0].addr, a.v6, 16) != 0)
			continue;
		uint8_t by = __atomic_load_n(&p->taken_by, __ATOMIC_ACQUIRE);
		return by == 0 ? st->ports[i] : st->ports[by - 1];
	}
	return NULL;
}

static struct rte_eth_stats port_stats(const struct rnic_stack *st, unsigned i)
{
	struct rte_eth_stats s;
	CHECK(rte_eth_stats_get(st->ports[i]->port_id, &s) == 0, "eth stats");
	return s;
}

/* Wait (the workers run) until every pool of @p st is back to @p base. */
static void check_pools(const struct rnic_stack *st, const char *name,
			const unsigned *base)
{
	double t0 = now_s();
	for (;;) {
		bool same = true;
		for (unsigned i = 0; i < st->n_ports; i++)
			same &= rnic_port_mbufs_in_use(st->ports[i]) == base[i];
		if (same)
			return;
		if (now_s() - t0 > 5) {
			for (unsigned i = 0; i < st->n_ports; i++)
				fprintf(stderr, "%s port%u: %u mbufs in use, %u before\n", name, i,
					rnic_port_mbufs_in_use(st->ports[i]), base[i]);
			CHECK(false, "%s: mbufs not back to the baseline", name);
		}
		usleep(10000);
	}
}

static unsigned subs_called[2][RNIC_MAX_WORKERS];
static unsigned sub_failed = 99, sub_survivor = 99;

static void on_failover(struct rnic_worker *w, unsigned failed, unsigned survivor, void *arg)
{
	unsigned which = (unsigned)(uintptr_t)arg;
	__atomic_fetch_add(&subs_called[which][w->id], 1, __ATOMIC_RELAXED);
	sub_failed = failed;
	sub_survivor = survivor;
}

/* --- the cases ------------------------------------------------------------- */

static void case_stream(void)
{
	struct rnic_config ca, cb;
	unsigned base_a[2], base_b[2];

	CHECK(rnic_ring_pair("fo0", WORKERS) == 0 && rnic_ring_pair("fo1", WORKERS) == 0,
	      "ring pairs");
	rnic_config_init(&ca);
	rnic_config_init(&cb);
	ca.workers = cb.workers = WORKERS;
	port_on_ring(&ca, "fo0.a", 1);
	port_on_ring(&ca, "fo1.a", 3);
	port_on_ring(&cb, "fo0.b", 2);
	port_on_ring(&cb, "fo1.b", 4);
	A = rnic_stack_create(&ca);
	CHECK(A != NULL, "stack A: %s", rte_strerror(rte_errno));
	B = rnic_stack_create(&cb);
	CHECK(B != NULL, "stack B: %s", rte_strerror(rte_errno));
	for (unsigned i = 0; i < 2; i++) {
		base_a[i] = rnic_port_mbufs_in_use(A->ports[i]);
		base_b[i] = rnic_port_mbufs_in_use(B->ports[i]);
	}
	CHECK(rnic_failover_subscribe(A, on_failover, (void *)0) == 0, "subscribe A");
	CHECK(rnic_failover_subscribe(B, on_failover, (void *)1) == 0, "subscribe B");
	CHECK(serving(A, 1) == A->ports[0], "A serves .1 on port 0");
	CHECK(serving(A, 3) == A->ports[1], "A serves .3 on port 1");
	CHECK(serving(A, 2) == NULL, ".2 is not A's");
	CHECK(rnic_tcp_listen(B, TCP_PORT, &sink_ops, NULL, 4) == 0, "listen");
	CHECK(rnic_stack_start(A) == 0 && rnic_stack_start(B) == 0, "start");

	int rc = -1;
	CHECK(rnic_worker_call_sync(A->workers[0], do_connect, &rc) == 0 && rc == 0,
	      "connect: %d", rc);
	double t0 = now_s();
	while (received < PULL_AT && !src_done && now_s() - t0 < 10)
		usleep(200);
	CHECK(received >= PULL_AT, "only %lu bytes before the pull", (unsigned long)received);
	struct rte_eth_stats a1_before = port_stats(A, 1), b1_before = port_stats(B, 1);
	CHECK(src_conn != NULL, "no connection");
	uint64_t received_at_pull = received;

	/* pull the cable between the ports 0 */
	__atomic_store_n(&down_tsc, rte_rdtsc(), __ATOMIC_RELEASE);
	double t_down = now_s();
	CHECK(rnic_port_set_link(A->ports[0], false) == 0, "A port0 down");
	CHECK(rnic_port_set_link(B->ports[0], false) == 0, "B port0 down");
	struct rte_eth_stats a0_down = port_stats(A, 0), b0_down = port_stats(B, 0);

	while (!(src_done && sink_done) && now_s() - t0 < 15)
		usleep(1000);
	double secs = now_s() - t0;
	struct rnic_failover_stats fa, fb;
	rnic_failover_stats(A, &fa);
	rnic_failover_stats(B, &fb);
	struct rte_eth_stats a0 = port_stats(A, 0), b0 = port_stats(B, 0);
	struct rte_eth_stats a1 = port_stats(A, 1), b1 = port_stats(B, 1);
	struct rnic_tcp_stats ta, tb;
	rnic_tcp_stats(A, &ta);
	rnic_tcp_stats(B, &tb);
	double first_new_ms = first_new_tsc ?
		(double)(first_new_tsc - down_tsc) * 1e3 / (double)rte_get_tsc_hz() : -1;
	printf("{\"test\": \"failover_stream%s\", \"bytes\": %lu, \"received\": %lu, "
	       "\"received_at_pull\": %lu, \"seconds\": %.2f, "
	       "\"link_down_to_first_new_byte_ms\": %.3f, \"first_new_byte_after\": %lu, "
	       "\"a_takeover_us\": %lu, \"b_takeover_us\": %lu, "
	       "\"a_conns_moved\": %lu, \"b_conns_moved\": %lu, "
	       "\"a_rtos\": %lu, \"a_retransmits\": %lu, "
	       "\"a_port1_opackets\": %lu, \"b_port1_ipackets\": %lu, "
	       "\"a_port0_opackets_after_down\": %lu, \"b_port0_ipackets_after_down\": %lu}\n",
	       v6 ? "_ipv6" : "", (unsigned long)BYTES, (unsigned long)received,
	       (unsigned long)received_at_pull,
	       secs, first_new_ms, (unsigned long)new_bytes_mark,
	       (unsigned long)fa.last_us, (unsigned long)fb.last_us,
	       (unsigned long)fa.conns_moved, (unsigned long)fb.conns_moved,
	       (unsigned long)ta.rtos, (unsigned long)ta.retransmits,
	       (unsigned long)(a1.opackets - a1_before.opackets),
	       (unsigned long)(b1.ipackets - b1_before.ipackets),
	       (unsigned long)(a0.opackets - a0_down.opackets),
	       (unsigned long)(b0.ipackets - b0_down.ipackets));
	(void)t_down;

	/* the connection lived through it, every byte in order and intact */
	CHECK(!src_closed_early, "the connection closed before the end (%d)", src_err);
	CHECK(src_done && sink_done, "stream did not finish: %lu of %lu bytes",
	      (unsigned long)received, (unsigned long)BYTES);
	CHECK(src_err == 0 && sink_err == 0, "closed with errors %d / %d", src_err, sink_err);
	CHECK(received == BYTES, "received %lu of %lu", (unsigned long)received,
	      (unsigned long)BYTES);
	CHECK(bad_bytes == 0, "%lu bytes differ from the pattern", (unsigned long)bad_bytes);
	CHECK(first_new_tsc != 0, "nothing delivered after the pull");

	/* the failover counters moved: one takeover each, port 1 serving .1/.2 */
	CHECK(fa.failovers == 1 && fa.completed == 1, "A: %lu failovers, %lu completed",
	      (unsigned long)fa.failovers, (unsigned long)fa.completed);
	CHECK(fb.failovers == 1 && fb.completed == 1, "B: %lu failovers, %lu completed",
	      (unsigned long)fb.failovers, (unsigned long)fb.completed);
	CHECK(fa.conns_moved >= 1 && fb.conns_moved >= 1, "connections moved: A %lu B %lu",
	      (unsigned long)fa.conns_moved, (unsigned long)fb.conns_moved);
	CHECK(ta.failover_moves >= 1 && tb.failover_moves >= 1, "tcp failover_moves");
	CHECK(fa.last_failed == 0 && fa.last_survivor == 1 && fb.last_failed == 0 &&
	      fb.last_survivor == 1, "failed/survivor ports");
	CHECK(fa.served_by[0] == 1 && fa.taken[1] == 1 && fb.served_by[0] == 1 &&
	      fb.taken[1] == 1, "port 1 serves port 0's address");
	CHECK(serving(A, 1) == A->ports[1] && serving(B, 2) == B->ports[1],
	      "port 1 serves port 0's address after failover");
	for (unsigned w = 0; w < WORKERS; w++)
		CHECK(subs_called[0][w] == 1 && subs_called[1][w] == 1,
		      "subscriber on worker %u: A %u B %u times", w, subs_called[0][w],
		      subs_called[1][w]);
	CHECK(sub_failed == 0 && sub_survivor == 1, "subscriber arguments");

	/* the rest of the stream went through the ports 1, nothing through 0 */
	/* what was not delivered at the pull crossed the ports 1, but for
	 * what B held out of order then: at most its receive buffer (4 MiB
	 * by default); at most 1460 bytes a segment */
	uint64_t rest_segs = (BYTES - received_at_pull - (4u << 20)) / 1460;
	CHECK(a1.opackets - a1_before.opackets >= rest_segs,
	      "A port1 sent only %lu frames", (unsigned long)(a1.opackets - a1_before.opackets));
	CHECK(b1.ipackets - b1_before.ipackets >= rest_segs,
	      "B port1 received only %lu frames", (unsigned long)(b1.ipackets - b1_before.ipackets));
	CHECK(a0.opackets == a0_down.opackets && b0.opackets == b0_down.opackets,
	      "a port whose link is down sent");
	CHECK(!A->ports[0]->link_up && !B->ports[0]->link_up, "links 0 still down");

	/* no failback when the cable returns */
	CHECK(rnic_port_set_link(A->ports[0], true) == 0, "A port0 up");
	CHECK(rnic_port_set_link(B->ports[0], true) == 0, "B port0 up");
	usleep(250000);   /* two link polls */
	CHECK(serving(A, 1) == A->ports[1], "A failed back");
	rnic_failover_stats(A, &fa);
	CHECK(fa.failovers == 1, "A: a link-up made a failover");

	check_pools(A, "A", base_a);
	check_pools(B, "B", base_b);
	rnic_stack_stop(A);
	rnic_stack_stop(B);
	rnic_stack_destroy(A);
	rnic_stack_destroy(B);
	printf("stream: ok\n");
}

static void case_single(void)
{
	struct rnic_config cc;
	CHECK(rnic_ring_pair("fo2", 1) == 0, "ring pair");
	rnic_config_init(&cc);
	port_on_ring(&cc, "fo2.a", 5);
	struct rnic_stack *C = rnic_stack_create(&cc);
	CHECK(C != NULL, "stack C: %s", rte_strerror(rte_errno));
	/* not started: the application drives worker 0 (its first pass
	 * announces the port; that frame stays in the unread ring) */
	for (int i = 0; i < 10; i++)
		rnic_worker_poll(C, 0);
	unsigned base = rnic_port_mbufs_in_use(C->ports[0]);
	CHECK(rnic_port_failover(C, 0) == -ENODEV, "a one-port stack has no survivor");
	CHECK(rnic_port_failover(C, 1) == -EINVAL, "no port 1");
	CHECK(rnic_port_set_link(C->ports[0], false) == 0, "link down");
	for (int i = 0; i < 10; i++)
		rnic_worker_poll(C, 0);
	struct rnic_failover_stats fs;
	rnic_failover_stats(C, &fs);
	CHECK(fs.failovers == 0 && fs.completed == 0, "C failed over to nothing");
	CHECK(fs.no_survivor == 2, "no_survivor = %lu, expected 2", (unsigned long)fs.no_survivor);
	CHECK(fs.last_failed == -1 && fs.served_by[0] == 0 && fs.taken[0] == 0, "C stats");
	CHECK(serving(C, 5) == C->ports[0], "C still serves its address");
	/* a down link sends nothing (to the broadcast address: no ARP hold) */
	CHECK(rnic_ping(C, IP(255), 1, 1, 50) == 0, "a ping got out of a down link");
	CHECK(rnic_port_link_down_drops(C->ports[0]) >= 1, "drop not counted");
	struct rnic_stack_stats ss;
	rnic_stack_stats(C, &ss);
	CHECK(ss.drops >= 1, "stack drops");
	CHECK(rnic_port_set_link(C->ports[0], true) == 0, "link up");
	for (int i = 0; i < 10; i++)
		rnic_worker_poll(C, 0);
	CHECK(rnic_port_mbufs_in_use(C->ports[0]) == base, "C: %u mbufs in use, %u before",
	      rnic_port_mbufs_in_use(C->ports[0]), base);
	/* nobody reads the other end: empty the link (the announcement) */
	struct rte_ring *link = rnic_ring_pair_tx("fo2.a", 0);
	struct rte_mbuf *m = NULL;
	CHECK(link != NULL, "ring behind fo2.a");
	while (rte_ring_dequeue(link, (void **)&m) == 0)
		rte_pktmbuf_free(m);
	CHECK(rnic_port_mbufs_in_use(C->ports[0]) == 0, "C: %u mbufs left",
	      rnic_port_mbufs_in_use(C->ports[0]));
	rnic_stack_destroy(C);
	printf("single: ok\n");
}

int main(int argc, char **argv)
{
	struct rnic_config ce;
	v6 = argc > 1 && strcmp(argv[1], "ipv6") == 0;
	rnic_config_init(&ce);
	CHECK(rnic_eal_init(argv[0], &ce, 2 * WORKERS + 1) == 0, "EAL");
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!v6)
		case_single();
	case_stream();
	printf("%d passed, 0 failed\n", v6 ? 1 : 2);
	return 0;
}
