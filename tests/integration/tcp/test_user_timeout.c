/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * TCP user timeout (RFC 9293 section 3.8.3, RFC 5482) over a net_ring
 * pair: stack A connects to stack B, then B's link goes down (B neither
 * sends nor receives: a peer that vanished).
 *
 *   data         A streams to B; B vanishes with data in flight. A must
 *                abort with -ETIMEDOUT one user timeout (500 ms, the
 *                stack's setting) after B's last ACK, count user_timeouts
 *                and send a RST, instead of retrying for minutes.
 *   zero_window  B reads nothing, its window closes, A probes it. B
 *                answers the probes for 2 s, six times A's per-connection
 *                user timeout (300 ms): A must keep the connection. Then B
 *                vanishes: A aborts within two user timeouts (the probe
 *                interval is never longer than the user timeout).
 *
 * Prints one JSON line with the measured times.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rte_errno.h>

#include "engine/stack.h"
#include "engine/worker.h"
#include "rnic/rnic.h"
#include "rnic/rnic_tcp.h"

#define CHECK(c, ...) do { if (!(c)) { fprintf(stderr, "FAIL %s:%d: ", __FILE__, \
	__LINE__); fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); exit(1); } } while (0)

#define A_IP 0xc0000201u
#define B_IP 0xc0000202u
#define STACK_UT_MS 500     /* A's stack-wide user timeout */
#define CONN_UT_MS 300      /* the zero-window connection's own */
#define MARGIN_S 0.5        /* scheduling on a loaded 2-core machine, ASan */

static struct rnic_stack *A, *B;

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* --- B: a sink that reads (or holds) everything --------------------------- */

struct sink {
	struct rnic_tcp_conn *c;
	bool hold;
	volatile uint64_t got;
};
static struct sink sinks[2];

static void *sink_accept(struct rnic_tcp_conn *c, void *lctx)
{
	struct sink *s = lctx;
	s->c = c;
	if (s->hold)
		rnic_tcp_hold(c, true);   /* read nothing: the window closes */
	return s;
}
static void sink_recv(struct rnic_tcp_conn *c, void *ctx, struct rte_mbuf *m)
{
	(void)c;
	struct sink *s = ctx;
	s->got += rte_pktmbuf_pkt_len(m);
	rte_pktmbuf_free(m);
}
static void sink_closed(struct rnic_tcp_conn *c, void *ctx, int err)
{
	(void)c; (void)err;
	((struct sink *)ctx)->c = NULL;
}
static const struct rnic_tcp_ops sink_ops = { .accept = sink_accept, .recv = sink_recv,
	.closed = sink_closed };

/* --- A: a source that keeps its send buffer full ---------------------------- */

struct source {
	struct rnic_tcp_conn *c;
	uint32_t ut_ms;            /* per-connection user timeout, 0 = the stack's */
	volatile uint64_t sent;
	volatile int closed, err;
	volatile double t_closed;
};
static struct source srcs[2];

static void src_push(struct rnic_tcp_conn *c, void *ctx)
{
	struct source *s = ctx;
	uint16_t mss = rnic_tcp_mss(c);
	while (rnic_tcp_send_space(c) >= mss) {
		struct rte_mbuf *m = rte_pktmbuf_alloc(rnic_tcp_pool(c));
		if (m == NULL)
			break;
		uint8_t *p = (uint8_t *)rte_pktmbuf_append(m, mss);
		memset(p, 0x5a, mss);
		if (rnic_tcp_send(c, m) != 0) {
			rte_pktmbuf_free(m);
			break;
		}
		s->sent += mss;
	}
}
static void src_connected(struct rnic_tcp_conn *c, void *ctx)
{
	struct source *s = ctx;
	s->c = c;
	if (s->ut_ms)
		rnic_tcp_set_user_timeout(c, s->ut_ms);
	src_push(c, ctx);
}
static void src_closed(struct rnic_tcp_conn *c, void *ctx, int err)
{
	(void)c;
	struct source *s = ctx;
	s->t_closed = now_s();
	s->err = err;
	s->c = NULL;
	__atomic_store_n(&s->closed, 1, __ATOMIC_RELEASE);
}
static const struct rnic_tcp_ops src_ops = { .connected = src_connected, .sent = src_push,
	.closed = src_closed };

struct connect_arg {
	struct source *s;
	uint16_t port;
	int rc;
};
static void do_connect(struct rnic_worker *w, void *arg)
{
	struct connect_arg *a = arg;
	struct rnic_tcp_conn *c;
	a->rc = rnic_tcp_connect(w, B_IP, a->port, &src_ops, a->s, &c);
}

struct info_arg {
	struct rnic_tcp_conn *c;
	struct rnic_tcp_info i;
};
static void do_info(struct rnic_worker *w, void *arg)
{
	(void)w;
	struct info_arg *a = arg;
	rnic_tcp_info(a->c, &a->i);
}
static void do_abort(struct rnic_worker *w, void *arg)
{
	(void)w;
	struct sink *s = arg;
	if (s->c != NULL)
		rnic_tcp_abort(s->c);
	s->c = NULL;
}

static void wait_for(volatile int *flag, double limit_s)
{
	double t0 = now_s();
	while (!__atomic_load_n(flag, __ATOMIC_ACQUIRE) && now_s() - t0 < limit_s)
		usleep(1000);
}

/* A connection from A to B:@p port with source @p s; data flowing. */
static void open_conn(struct source *s, struct sink *k, uint16_t port)
{
	CHECK(rnic_tcp_listen(B, port, &sink_ops, k, 4) == 0, "listen %u", port);
	struct connect_arg ca = { s, port, -1 };
	rnic_worker_call_sync(A->workers[0], do_connect, &ca);
	CHECK(ca.rc == 0, "connect: %d", ca.rc);
	double t0 = now_s();
	/* sent counts what A queued; B may not have read any of it yet */
	while ((s->c == NULL || k->c == NULL || s->sent < (1u << 20) ||
		(!k->hold && k->got == 0)) && now_s() - t0 < 5)
		usleep(1000);
	CHECK(s->c != NULL && k->c != NULL, "connection %u not established", port);
}

static struct rnic_tcp_stats a_stats(void)
{
	struct rnic_tcp_stats st;
	rnic_tcp_stats(A, &st);
	return st;
}

/* B's link down: @return when. */
static double vanish(void)
{
	CHECK(rnic_stack_set_link(B, 0, false) == 0, "link down");
	return now_s();
}

static void reappear(struct sink *k)
{
	CHECK(rnic_stack_set_link(B, 0, true) == 0, "link up");
	rnic_worker_call_sync(B->workers[0], do_abort, k);
}

int main(int argc, char **argv)
{
	struct rnic_config ca, cb;
	(void)argc;
	setvbuf(stdout, NULL, _IOLBF, 0);
	rnic_config_init(&ca);
	snprintf(ca.eal_args[ca.n_eal_args++], 128, "--no-huge");
	snprintf(ca.eal_args[ca.n_eal_args++], 128, "-m");
	snprintf(ca.eal_args[ca.n_eal_args++], 128, "512");
	snprintf(ca.eal_args[ca.n_eal_args++], 128, "--log-level=lib.*:warning");
	CHECK(rnic_eal_init(argv[0], &ca, 2) == 0, "EAL");
	CHECK(rnic_ring_pair("uto", 1) == 0, "ring pair");
	ca.n_eal_args = 0;
	cb = ca;
	for (int i = 0; i < 2; i++) {
		struct rnic_config *c = i ? &cb : &ca;
		c->n_ports = 1;
		rnic_port_cfg_init(&c->ports[0]);
		snprintf(c->ports[0].ring, sizeof(c->ports[0].ring), "uto.%c", i ? 'b' : 'a');
		c->ports[0].ip = i ? B_IP : A_IP;
		c->ports[0].prefix_len = 24;
	}
	A = rnic_stack_create(&ca);
	B = rnic_stack_create(&cb);
	CHECK(A && B, "stacks: %s", rte_strerror(rte_errno));
	struct rnic_tcp_params p;
	rnic_tcp_params_default(&p);
	CHECK(p.user_timeout_ms == 30000, "default user timeout %u ms", p.user_timeout_ms);
	p.user_timeout_ms = STACK_UT_MS;
	CHECK(rnic_tcp_config(A, &p) == 0, "tcp config");
	rnic_tcp_params_default(&p);
	p.rcvbuf = 256 * 1024;   /* B's window closes before A's send buffer fills */
	CHECK(rnic_tcp_config(B, &p) == 0, "tcp config");
	CHECK(rnic_stack_start(A) == 0 && rnic_stack_start(B) == 0, "start");

	/* data: B vanishes with data in flight */
	struct rnic_tcp_stats s0 = a_stats();
	open_conn(&srcs[0], &sinks[0], 5001);
	CHECK(sinks[0].got > 0, "no data reached B");
	double t_down = vanish();
	wait_for(&srcs[0].closed, 10);
	struct rnic_tcp_stats s1 = a_stats();
	double t_data = srcs[0].t_closed - t_down;
	CHECK(srcs[0].closed, "A's connection still open 10 s after B vanished");
	CHECK(srcs[0].err == -ETIMEDOUT, "A's connection closed with %d, expected -ETIMEDOUT",
	      srcs[0].err);
	CHECK(t_data > STACK_UT_MS / 1e3 - 0.05 && t_data < STACK_UT_MS / 1e3 + MARGIN_S,
	      "aborted %.0f ms after B vanished, user timeout %u ms", t_data * 1e3, STACK_UT_MS);
	CHECK(s1.user_timeouts - s0.user_timeouts == 1, "user_timeouts %lu",
	      (unsigned long)(s1.user_timeouts - s0.user_timeouts));
	CHECK(s1.resets_out > s0.resets_out, "no RST sent");
	CHECK(s1.retry_timeouts == s0.retry_timeouts, "the retry limit fired");
	unsigned long rtos_data = (unsigned long)(s1.rtos - s0.rtos);
	reappear(&sinks[0]);

	/* zero window: B alive and probed for 2 s, then gone */
	sinks[1].hold = true;
	srcs[1].ut_ms = CONN_UT_MS;
	open_conn(&srcs[1], &sinks[1], 5002);
	s0 = a_stats();
	usleep(2000000);
	struct info_arg ia = { srcs[1].c, { 0 } };
	CHECK(!srcs[1].closed && ia.c != NULL, "A's connection closed (%d) while B answered probes",
	      srcs[1].err);
	rnic_worker_call_sync(A->workers[0], do_info, &ia);
	s1 = a_stats();
	CHECK(ia.i.snd_wnd == 0, "B's window is %u, not closed", ia.i.snd_wnd);
	CHECK(s1.user_timeouts == s0.user_timeouts, "a user timeout while B answered");
	uint64_t held = srcs[1].sent;
	t_down = vanish();
	wait_for(&srcs[1].closed, 10);
	s1 = a_stats();
	double t_zw = srcs[1].t_closed - t_down;
	CHECK(srcs[1].closed && srcs[1].err == -ETIMEDOUT, "zero window: closed %d err %d",
	      srcs[1].closed, srcs[1].err);
	CHECK(t_zw < 2 * CONN_UT_MS / 1e3 + MARGIN_S, "zero window: aborted %.0f ms after B "
	      "vanished, user timeout %u ms", t_zw * 1e3, CONN_UT_MS);
	CHECK(s1.user_timeouts - s0.user_timeouts == 1, "zero window: user_timeouts %lu",
	      (unsigned long)(s1.user_timeouts - s0.user_timeouts));
	reappear(&sinks[1]);

	rnic_stack_stop(B);
	rnic_stack_stop(A);
	struct rnic_tcp_stats sa, sb;
	rnic_tcp_stats(A, &sa);
	rnic_tcp_stats(B, &sb);
	printf("{\"test\": \"tcp_user_timeout\", \"data_user_timeout_ms\": %u, "
	       "\"data_abort_ms\": %.0f, \"data_rtos\": %lu, \"zero_window_user_timeout_ms\": %u, "
	       "\"zero_window_abort_ms\": %.0f, \"zero_window_bytes_queued\": %lu, "
	       "\"user_timeouts\": %lu, \"tcbs_left\": %lu}\n", STACK_UT_MS, t_data * 1e3,
	       rtos_data, CONN_UT_MS, t_zw * 1e3, (unsigned long)held,
	       (unsigned long)sa.user_timeouts, (unsigned long)(sa.tcbs + sb.tcbs));
	CHECK(sa.tcbs == 0 && sb.tcbs == 0, "TCBs left: A %lu B %lu", (unsigned long)sa.tcbs,
	      (unsigned long)sb.tcbs);
	rnic_stack_destroy(B);
	rnic_stack_destroy(A);
	printf("2 passed, 0 failed\n");
	return 0;
}
