/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Handshakes per second (issue 3's benchmark), side by side in one run:
 *
 *   rnic    stack B (client) opens connections to stack A (server) over a
 *           net_ring link, one worker each, busy polling. A's worker runs
 *           on its lcore; B's worker is run by the main thread (run to
 *           completion: one busy thread per CPU of a two-CPU machine;
 *           --threaded puts B on an lcore of its own, as before, and the
 *           main thread sleeps; --one runs A on the main thread too, so
 *           both ends share one CPU and the other CPU's load matters
 *           less). B's poller keeps
 *           up to --window connects outstanding; each connection is reset
 *           by B as soon as it is established (no TIME_WAIT to fill the
 *           table), so what is measured is SYN -> SYN-ACK (cookie) -> ACK
 *           -> TCB on A's worker, plus the RST that frees it.
 *   kernel  the same over the kernel's loopback: a thread accepts and
 *           closes, --window threads connect and close with SO_LINGER 0
 *           (a RST, no TIME_WAIT), as many handshakes as they can.
 *
 * The figure is A's passive opens (TCBs born from valid cookies) per
 * second of the run, and per second of A's busy time (cycles its pollers
 * spent in calls that did work: the worker's capacity, which the first
 * figure reaches when A has a CPU to itself and B keeps up). Prints one
 * JSON object. Not a test: it asserts nothing about speed; it fails only
 * when the stack misbehaves (a refused or failed connection, a TCB left
 * behind).
 *
 *   tcp_handshake [--seconds S] [--window N] [--no-kernel] [--threaded | --one]
 */
#include <errno.h>
#include <getopt.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_errno.h>

#include "engine/stack.h"
#include "engine/worker.h"
#include "rnic/rnic.h"
#include "rnic/rnic_tcp.h"

#define PORT 5002

#define FAIL(...) do { fprintf(stderr, "tcp_handshake: " __VA_ARGS__); \
	fputc('\n', stderr); exit(1); } while (0)

#include "bench_pair.h"


/* ---- rnic: B's side runs only on B's worker, A's only on A's ---- */

static unsigned window = 64;
static bool threaded;                 /* B on its own lcore */
static bool one;                      /* --one: A on the main thread too */
static struct rnic_stack *one_A;      /* then A, which pass_time() runs */
static volatile int running;          /* B opens new connections while set */
static unsigned outstanding;          /* B's worker only */
static volatile int connect_err;
static volatile uint64_t connected, failed, accepted;

static int token;
static void *srv_accept(struct rnic_tcp_conn *c, void *ctx)
{
	(void)c; (void)ctx;
	accepted++;
	return &token;
}
static void srv_closed(struct rnic_tcp_conn *c, void *ctx, int err)
{
	(void)c; (void)ctx; (void)err;   /* B's RST: -ECONNRESET, expected */
}
static void srv_eof(struct rnic_tcp_conn *c, void *ctx) { (void)ctx; rnic_tcp_close(c); }

static void cli_connected(struct rnic_tcp_conn *c, void *ctx)
{
	(void)ctx;
	connected++;
	rnic_tcp_abort(c);               /* no closed() follows a local abort */
	outstanding--;
}
static void cli_closed(struct rnic_tcp_conn *c, void *ctx, int err)
{
	(void)c; (void)ctx;
	/* an aborted established connection reports -ECONNRESET or 0; a
	 * connection that never got there (refused, timed out) is a failure */
	if (err != 0 && err != -ECONNRESET)
		failed++;
	outstanding--;
}

static const struct rnic_tcp_ops srv_ops = { .accept = srv_accept, .eof = srv_eof,
					     .closed = srv_closed };
static const struct rnic_tcp_ops cli_ops = { .connected = cli_connected, .eof = srv_eof,
					     .closed = cli_closed };

/* B's poller: top the window up with new active opens. */
static unsigned opener(struct rnic_worker *w, void *arg)
{
	unsigned n = 0;
	(void)arg;
	while (running && outstanding < window && n < 32) {
		struct rnic_tcp_conn *c;
		int rc = rnic_tcp_connect(w, A_IP, PORT, &cli_ops, NULL, &c);
		if (rc != 0) {
			connect_err = rc;
			break;
		}           /* -EADDRINUSE etc.: try again next loop */
		outstanding++;
		n++;
	}
	return n;
}

struct rnic_result {
	double seconds, rate, busy_s;
	uint64_t handshakes, passive_opens, cookies, failed, tcbs_left;
};

/*
 * Let @p seconds pass: asleep while B runs on its lcore, or running B's
 * worker loop from this thread (run to completion).
 */
static void pass_time(struct rnic_stack *B, double seconds)
{
	if (threaded) {
		usleep((useconds_t)(seconds * 1e6));
		return;
	}
	bench_drive(B, one_A, seconds);
}


static void run_rnic(const char *prog, double seconds, struct rnic_result *r)
{
	struct rnic_config ca, cb;
	bench_pair_configs(prog, "hs", 0, &ca, &cb);
	struct rnic_stack *A = rnic_stack_create(&ca), *B = rnic_stack_create(&cb);
	if (A == NULL || B == NULL)
		FAIL("stacks: %s", rte_strerror(rte_errno));
	if (rnic_tcp_listen(A, PORT, &srv_ops, NULL, 1024) != 0)
		FAIL("listen");
	if (rnic_worker_add_poller(B->workers[0], "opener", opener, NULL) != 0)
		FAIL("poller");
	if (one)
		one_A = A;   /* not started: pass_time() runs it */
	else if (rnic_stack_start(A) != 0)
		FAIL("start");
	if (threaded && rnic_stack_start(B) != 0)
		FAIL("start");

	/* warm up (ARP, caches) for a tenth of the run, then measure */
	running = 1;
	pass_time(B, seconds / 10);
	struct rnic_tcp_stats s0, s1;
	rnic_tcp_stats(A, &s0);
	uint64_t c0 = connected, b0 = bench_busy_cycles(A->workers[0]);
	double t0 = now_s();
	pass_time(B, seconds);
	rnic_tcp_stats(A, &s1);
	r->busy_s = (double)(bench_busy_cycles(A->workers[0]) - b0) / (double)rte_get_tsc_hz();
	r->seconds = now_s() - t0;
	r->handshakes = connected - c0;
	running = 0;
	/* let the last window close, then nothing may be left */
	double d0 = now_s();
	struct rnic_tcp_stats sa, sb;
	do {
		pass_time(B, 0.01);
		rnic_tcp_stats(A, &sa);
		rnic_tcp_stats(B, &sb);
	} while ((sa.tcbs || sb.tcbs) && now_s() - d0 < 5);
	r->passive_opens = s1.passive_opens - s0.passive_opens;
	r->cookies = s1.cookies_sent - s0.cookies_sent;
	r->rate = r->passive_opens / r->seconds;
	r->failed = failed;
	r->tcbs_left = sa.tcbs + sb.tcbs;
	if (getenv("HS_DEBUG"))
		fprintf(stderr, "outstanding %u last connect error %d; A: syns %lu resets_in %lu "
			"no_listener %lu backlog_full %lu cookie_invalid %lu rtos %lu; B: rtos %lu "
			"resets_in %lu segs_out %lu\n", outstanding, connect_err,
			(unsigned long)sa.syns, (unsigned long)sa.resets_in,
			(unsigned long)sa.no_listener, (unsigned long)sa.backlog_full,
			(unsigned long)sa.cookie_invalid, (unsigned long)sa.rtos,
			(unsigned long)sb.rtos, (unsigned long)sb.resets_in, (unsigned long)sb.segs_out);
	rnic_stack_stop(B);
	rnic_stack_stop(A);
	rnic_stack_destroy(B);
	rnic_stack_destroy(A);
}

/* ---- the kernel over loopback ---- */

static volatile int k_running;
static volatile uint64_t k_done, k_failed;
static int k_lfd;

static void *k_acceptor(void *arg)
{
	(void)arg;
	while (k_running) {
		int fd = accept(k_lfd, NULL, NULL);
		if (fd >= 0)
			close(fd);
	}
	return NULL;
}

static void *k_connector(void *arg)
{
	const struct sockaddr_in *sa = arg;
	struct linger lg = { .l_onoff = 1, .l_linger = 0 };
	while (k_running) {
		int fd = socket(AF_INET, SOCK_STREAM, 0);
		if (fd < 0) {
			__atomic_add_fetch(&k_failed, 1, __ATOMIC_RELAXED);
			continue;
		}
		setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
		if (connect(fd, (const struct sockaddr *)sa, sizeof(*sa)) == 0)
			__atomic_add_fetch(&k_done, 1, __ATOMIC_RELAXED);
		else
			__atomic_add_fetch(&k_failed, 1, __ATOMIC_RELAXED);
		close(fd);
	}
	return NULL;
}

/* Kernel handshakes per second with @p threads connecting threads. */
static double run_kernel(double seconds, unsigned threads, uint64_t *n, uint64_t *nfail)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(5399),
				  .sin_addr.s_addr = htonl(0x7f000001) };
	int one = 1;
	k_lfd = socket(AF_INET, SOCK_STREAM, 0);
	setsockopt(k_lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (k_lfd < 0 || bind(k_lfd, (struct sockaddr *)&sa, sizeof(sa)) != 0 ||
	    listen(k_lfd, 4096) != 0)
		FAIL("kernel listener: %s", strerror(errno));
	struct timeval tv = { 0, 100000 };   /* the acceptor notices the end */
	setsockopt(k_lfd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	pthread_t acc, con[16];
	if (threads > 16)
		threads = 16;
	k_running = 1;
	pthread_create(&acc, NULL, k_acceptor, NULL);
	for (unsigned i = 0; i < threads; i++)
		pthread_create(&con[i], NULL, k_connector, &sa);
	usleep((useconds_t)(seconds * 1e5));
	uint64_t d0 = k_done;
	double t0 = now_s();
	usleep((useconds_t)(seconds * 1e6));
	uint64_t d1 = k_done;
	double el = now_s() - t0;
	k_running = 0;
	for (unsigned i = 0; i < threads; i++)
		pthread_join(con[i], NULL);
	pthread_join(acc, NULL);
	close(k_lfd);
	*n = d1 - d0;
	*nfail = k_failed;
	return (double)(d1 - d0) / el;
}

int main(int argc, char **argv)
{
	double seconds = 3;
	bool kernel = true;
	static const struct option opts[] = {
		{ "seconds", required_argument, 0, 's' }, { "window", required_argument, 0, 'w' },
		{ "no-kernel", no_argument, 0, 'k' }, { "threaded", no_argument, 0, 't' },
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
		case 'w': window = (unsigned)strtoul(optarg, &end, 10);
			if (*end || window == 0 || window > 4096)
				FAIL("--window takes 1..4096");
			break;
		case 'k': kernel = false; break;
		case 't': threaded = true; break;
		case 'o': one = true; break;
		default: FAIL("usage: tcp_handshake [--seconds S] [--window N] [--no-kernel] "
			      "[--threaded | --one]");
		}
	}
	if (one && threaded)
		FAIL("--threaded and --one exclude each other");
	uint64_t kn = 0, kf = 0;
	double krate = kernel ? run_kernel(seconds, 2, &kn, &kf) : 0;
	struct rnic_result r;
	run_rnic(argv[0], seconds, &r);
	printf("{\"rnic\": {\"handshakes_per_s_per_worker\": %.0f, "
	       "\"handshakes_per_busy_s\": %.0f, \"a_busy_seconds\": %.3f, \"passive_opens\": %lu, "
	       "\"client_connected\": %lu, \"cookies_sent\": %lu, \"failed\": %lu, "
	       "\"tcbs_left\": %lu, \"seconds\": %.3f, \"window\": %u, \"drive\": \"%s\"}",
	       r.rate, r.busy_s > 0 ? r.passive_opens / r.busy_s : 0, r.busy_s,
	       (unsigned long)r.passive_opens, (unsigned long)r.handshakes,
	       (unsigned long)r.cookies, (unsigned long)r.failed, (unsigned long)r.tcbs_left,
	       r.seconds, window, threaded ? "threaded" : one ? "one" : "inline");
	if (kernel)
		printf(", \"kernel_loopback\": {\"handshakes_per_s\": %.0f, \"handshakes\": %lu, "
		       "\"failed\": %lu, \"connect_threads\": 2}", krate, (unsigned long)kn,
		       (unsigned long)kf);
	printf("}\n");
	if (r.failed || r.tcbs_left) {
		fprintf(stderr, "tcp_handshake: %lu connections failed, %lu TCBs left\n",
			(unsigned long)r.failed, (unsigned long)r.tcbs_left);
		return 1;
	}
	return 0;
}
