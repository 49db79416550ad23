/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rnic-tcp: bulk transfers over rnic's userspace TCP.
 *
 *   rnic-tcp sink   --listen PORT  [--bytes N] [--conns N] [--json] PORT-OPTIONS
 *   rnic-tcp source --connect A:P  --bytes N [--conns N] [--cc newreno|cubic] [--json] PORT-OPTIONS
 *   rnic-tcp echo   --listen PORT  PORT-OPTIONS
 *   rnic-tcp source --loopback [--ipv6] --bytes N [--drop P --dup P --reorder P --corrupt P --seed S]
 *
 * The source sends a deterministic pseudo-random stream; both ends print
 * the SHA-256 of the bytes they sent or received; with --conns above 1
 * the JSON object also lists every connection (its worker, ports, bytes,
 * SHA-256) and the frames redirected between workers, so a test can check
 * that each flow lives on the worker its hash names (a sink then waits for
 * N connections of --bytes each). --loopback runs a sink
 * and a source stack in one process over a net_ring pair (one worker each)
 * and fails unless the digests match. It runs to completion: once the
 * connections are open the source stack's lcore stops and the main thread
 * runs its worker loop, so the process has one busy thread per CPU of a
 * two-CPU machine instead of three threads waiting for the scheduler
 * (--drive inline, the default). --drive one stops the sink's lcore too
 * and runs both stacks on the main thread: both ends' cost on one CPU,
 * little disturbed by other load. --drive threaded (or --threaded) keeps
 * the old layout: both stacks on lcores, the main thread sleeping.
 * Exit status: 0 done, 1 transfer failed or digests differ, 2 usage.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_mbuf.h>

#include "rnic_sha256.h"
#include "rnic/rnic.h"
#include "rnic/rnic_tcp.h"

enum mode { MODE_SINK, MODE_SOURCE, MODE_ECHO };

struct flow {                   /* one connection's state */
	struct rnic_sha256 sha;
	uint64_t bytes, target;
	uint64_t rng;
	bool fin_sent;
	volatile bool starved;      /* the pool was short: retry (no sent() comes) */
	volatile bool connected;
	bool finished;
	struct rnic_tcp_conn *c;
	struct rnic_worker *w;      /* the worker that owns the connection */
	uint16_t lport, rport;      /* its ports (host order) */
	char hex[65];               /* SHA-256 when finished */
};

struct app {
	enum mode mode;
	uint64_t bytes;             /* per connection */
	unsigned conns;
	uint16_t listen_port;
	struct rnic_addr dst;       /* --connect: IPv4 or IPv6 */
	uint16_t dst_port;
	enum rnic_tcp_cc cc;
	bool json;
	bool no_verify;             /* skip SHA-256 (transport speed only) */
	enum { DRIVE_INLINE, DRIVE_ONE, DRIVE_THREADED } drive;  /* --loopback layout */
	bool drive_set;
	/* progress, written by workers */
	volatile unsigned done, failed, accepted;
	volatile unsigned connected;  /* source: active opens completed */
	volatile bool hold;         /* source, several connections: no data until
				       all are up (start_flows()) */
	volatile uint64_t total;
	volatile double t_accept;   /* first passive open, for rates */
	struct flow flows[64];      /* active opens (source) */
	unsigned n_flows;
	struct flow sink_flows[64]; /* passive opens */
	struct rnic_stack *sink_st;
	uint64_t redirect_base;     /* redirects before the first connection was up */
	int last_err;
};

static struct app *g_app;
static double now_s(void);

/* Deterministic payload: xorshift64 bytes. */
static void fill(struct flow *f, uint8_t *p, unsigned n)
{
	for (unsigned i = 0; i < n; i += 8) {
		f->rng ^= f->rng << 13; f->rng ^= f->rng >> 7; f->rng ^= f->rng << 17;
		uint64_t v = f->rng;
		memcpy(p + i, &v, n - i < 8 ? n - i : 8);
	}
}

static void finish(struct app *a, struct flow *f, bool ok)
{
	uint8_t d[32];
	rnic_sha256_final(&f->sha, d);
	rnic_sha256_hex(d, f->hex);
	f->finished = true;
	if (!ok)
		__atomic_fetch_add(&a->failed, 1, __ATOMIC_RELEASE);
	__atomic_fetch_add(&a->done, 1, __ATOMIC_RELEASE);
}

/* Source: fill the send buffer with MSS-sized segments. */
static void source_push(struct rnic_tcp_conn *c, void *ctx)
{
	struct flow *f = ctx;
	uint16_t mss = rnic_tcp_mss(c);
	f->starved = false;
	while (f->bytes < f->target && rnic_tcp_send_space(c) >= mss) {
		unsigned n = (unsigned)(f->target - f->bytes < mss ? f->target - f->bytes : mss);
		struct rte_mbuf *m = rte_pktmbuf_alloc(rnic_tcp_pool(c));
		if (m == NULL) {
			f->starved = true;   /* retry_starved() calls us again */
			break;
		}
		uint8_t *p = (uint8_t *)rte_pktmbuf_append(m, (uint16_t)n);
		if (p == NULL) {
			rte_pktmbuf_free(m);
			break;
		}
		/* --no-verify measures the transport: the bytes are whatever
		 * the buffer held. A refused segment is undone: the stream
		 * and its digest go on from where they were. */
		struct rnic_sha256 sha0 = f->sha;
		uint64_t rng0 = f->rng;
		if (!g_app->no_verify) {
			fill(f, p, n);
			rnic_sha256_update(&f->sha, p, n);
		}
		int rc = rnic_tcp_send(c, m);
		if (rc != 0) {
			/* -ENOBUFS promises no sent(): with nothing in flight
			 * none would come, so retry_starved() retries */
			f->starved = rc == -ENOBUFS;
			f->sha = sha0;
			f->rng = rng0;
			rte_pktmbuf_free(m);
			break;
		}
		f->bytes += n;
	}
	if (f->bytes >= f->target && !f->fin_sent) {
		f->fin_sent = true;
		rnic_tcp_close(c);
	}
}


/* Note which worker owns @p c and its ports (on that worker). */
static void note_owner(struct flow *f, struct rnic_tcp_conn *c)
{
	struct rnic_tcp_info ti;
	rnic_tcp_info(c, &ti);
	f->w = rnic_tcp_worker(c);
	f->lport = ti.lport;
	f->rport = ti.rport;
}

static void on_connected(struct rnic_tcp_conn *c, void *ctx)
{
	struct flow *f = ctx;
	note_owner(f, c);
	f->connected = true;
	__atomic_fetch_add(&g_app->connected, 1, __ATOMIC_RELEASE);
	if (!g_app->hold)
		source_push(c, ctx);
}

/* On the flow's worker: its first data, once every connection is up. */
static void start_push(struct rnic_worker *w, void *arg)
{
	struct flow *f = arg;
	(void)w;
	if (f->connected && !f->finished && !f->fin_sent)
		source_push(f->c, f);
}

/*
 * Several connections start their data together, once all are
 * established (or 10 s passed). rnic's listener answers SYNs with cookies
 * and keeps no state until the handshake's last ACK; when the first
 * connections' data fill the link's queue, a later connection's last ACK
 * can be lost with the data behind it, and its first data segment then
 * fails the cookie check and is reset (the known limit BUG_COOKIE_ACK of
 * tests/integration/iwarp/test_verbs.c).
 */
static void start_flows(struct app *a)
{
	for (unsigned k = 0; k < 5000 &&
	     __atomic_load_n(&a->connected, __ATOMIC_ACQUIRE) < a->n_flows; k++)
		usleep(2000);
	a->hold = false;
	for (unsigned i = 0; i < a->n_flows; i++)
		if (a->flows[i].connected && a->flows[i].w != NULL)
			rnic_worker_call_sync(a->flows[i].w, start_push, &a->flows[i]);
}

/* On the flow's worker: push again if the pool is still what stopped it
 * (the flow may have finished since the main thread looked). */
static void retry_push(struct rnic_worker *w, void *arg)
{
	struct flow *f = arg;
	(void)w;
	if (f->starved && !f->finished && !f->fin_sent)
		source_push(f->c, f);
}

/* The main thread, every few ms: the source flows a short pool stopped
 * get another try on their workers (@p driven: the main thread drives
 * the source stack itself, so it may push directly). */
static void retry_starved(struct app *a, bool driven)
{
	for (unsigned i = 0; i < a->n_flows; i++) {
		struct flow *f = &a->flows[i];
		if (!f->starved || f->w == NULL)
			continue;
		if (driven)
			retry_push(f->w, f);
		else
			rnic_worker_call_sync(f->w, retry_push, f);
	}
}

static void on_sent(struct rnic_tcp_conn *c, void *ctx)
{
	if (g_app->mode == MODE_SOURCE)
		source_push(c, ctx);
}

static void on_recv(struct rnic_tcp_conn *c, void *ctx, struct rte_mbuf *m)
{
	struct flow *f = ctx;
	if (g_app->mode == MODE_ECHO) {
		uint32_t n = rte_pktmbuf_pkt_len(m);
		if (rnic_tcp_send(c, m) != 0)
			rte_pktmbuf_free(m);   /* peer not reading: echo drops */
		f->bytes += n;
		return;
	}
	for (struct rte_mbuf *s = m; s != NULL; s = s->next) {
		if (!g_app->no_verify)
			rnic_sha256_update(&f->sha, rte_pktmbuf_mtod(s, void *), s->data_len);
		f->bytes += s->data_len;
	}
	__atomic_fetch_add(&g_app->total, rte_pktmbuf_pkt_len(m), __ATOMIC_RELAXED);
	rte_pktmbuf_free(m);
}

static void on_eof(struct rnic_tcp_conn *c, void *ctx)
{
	(void)ctx;
	rnic_tcp_close(c);   /* the peer is done: so are we */
}

static void on_closed(struct rnic_tcp_conn *c, void *ctx, int err)
{
	struct flow *f = ctx;
	(void)c;
	if (err)
		g_app->last_err = err;
	bool ok = err == 0 && (g_app->mode != MODE_SINK || f->target == 0 ||
			       f->bytes >= f->target);
	if (g_app->mode == MODE_SOURCE)
		ok = ok && f->bytes >= f->target;
	finish(g_app, f, ok);
}

static void *on_accept(struct rnic_tcp_conn *c, void *lctx)
{
	struct app *a = lctx;
	unsigned i = __atomic_fetch_add(&a->accepted, 1, __ATOMIC_RELAXED);
	if (i >= 64)
		return NULL;
	struct flow *f = &a->sink_flows[i];
	if (i == 0) {
		struct rnic_stack_stats ss;
		a->t_accept = now_s();
		rnic_stack_stats(a->sink_st, &ss);
		a->redirect_base = ss.redirected;
	}
	memset(f, 0, sizeof(*f));
	rnic_sha256_init(&f->sha);
	f->target = a->bytes;
	f->c = c;
	note_owner(f, c);
	return f;
}

static const struct rnic_tcp_ops ops = {
	.accept = on_accept, .connected = on_connected, .recv = on_recv,
	.sent = on_sent, .eof = on_eof, .closed = on_closed,
};

struct connect_req {
	struct app *a;
	struct flow *f;
	int rc;
};

static void do_connect(struct rnic_worker *w, void *arg)
{
	struct connect_req *r = arg;
	r->rc = rnic_tcp_connect_addr(w, &r->a->dst, r->a->dst_port, &ops, r->f, &r->f->c);
}

static void usage(FILE *f)
{
	fprintf(f, "usage: rnic-tcp {sink|source|echo} [--listen PORT | --connect ADDR:PORT]\n"
		   "                (ADDR:PORT: A.B.C.D:PORT or [X:X::X]:PORT)\n"
		   "                [--bytes N] [--conns N] [--cc newreno|cubic] [--json]\n"
		   "                (--conns: connections to open (source) or to take (sink),\n"
		   "                 1..64, --bytes each; above 1 --json lists them)\n"
		   "                [--loopback [--ipv6] [--drop P --dup P --reorder P --corrupt P --seed S]]\n"
		   "                (--ipv6: the loopback stacks have IPv6 addresses only)\n"
		   "                [--no-verify]  (no SHA-256: measures the transport alone)\n"
		   "                [--drive inline|one|threaded]  (--loopback: the main thread runs\n"
		   "                 the source stack (inline), both stacks (one), or neither: both\n"
		   "                 on their own lcores (threaded; --threaded is the same))\n\n%s",
		rnic_config_usage());
}

static uint64_t parse_size(const char *s)
{
	char *end;
	double v = strtod(s, &end);
	if (end == s || v < 0)
		return UINT64_MAX;
	switch (*end) {
	case 'k': case 'K': v *= 1024; end++; break;
	case 'm': case 'M': v *= 1024 * 1024; end++; break;
	case 'g': case 'G': v *= 1024.0 * 1024 * 1024; end++; break;
	}
	return *end ? UINT64_MAX : (uint64_t)v;
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* A few hundred iterations of every worker loop of @p st and, unless
 * NULL, @p st2 (not started), interleaved: the main thread stands in for
 * their lcores between checks of the exit condition. */
static void drive_stacks(struct rnic_stack *st, struct rnic_stack *st2)
{
	for (unsigned k = 0; k < 256; k++) {
		rnic_stack_poll(st);
		rnic_stack_poll(st2);
	}
}

/* Index of worker @p w in @p st, or -1. */
static int worker_index(struct rnic_stack *st, const struct rnic_worker *w)
{
	for (unsigned i = 0; st != NULL && i < rnic_stack_workers(st); i++)
		if (rnic_stack_worker(st, i) == w)
			return (int)i;
	return -1;
}

/* The JSON keys of a run of several connections: the stack's redirect
 * count, in all and since the first connection was up (frames that had
 * waited for ARP may leave on the queue of the worker that got the ARP
 * reply), and per connection [worker, local port, remote port, bytes,
 * SHA-256]. */
static void print_flows(const struct flow *fl, unsigned n, struct rnic_stack *st,
			uint64_t base, int last_err)
{
	struct rnic_stack_stats ss;
	struct rnic_tcp_stats ts;
	rnic_stack_stats(st, &ss);
	rnic_tcp_stats(st, &ts);
	printf(", \"workers\": %u, \"redirected\": %lu, \"redirected_since_first\": %lu, "
	       "\"resets_in\": %lu, \"resets_out\": %lu, \"last_error\": \"%s\", \"flows\": [",
	       rnic_stack_workers(st), (unsigned long)ss.redirected,
	       (unsigned long)(ss.redirected - base), (unsigned long)ts.resets_in,
	       (unsigned long)ts.resets_out, last_err ? strerror(-last_err) : "");
	for (unsigned i = 0; i < n; i++)
		printf("%s[%d, %u, %u, %lu, \"%s\"]", i ? ", " : "",
		       worker_index(st, fl[i].w), fl[i].lport, fl[i].rport,
		       (unsigned long)fl[i].bytes, fl[i].hex);
	printf("]");
}

static int set_cc(struct rnic_stack *st, enum rnic_tcp_cc cc)
{
	struct rnic_tcp_params p;
	rnic_tcp_params_default(&p);
	p.cc = cc;
	return rnic_tcp_config(st, &p);
}

int main(int argc, char **argv)
{
	static struct app app;
	struct app *a = &app;
	struct rnic_config cfg;
	char err[RNIC_ERRLEN];
	bool loopback = false, ipv6 = false;
	struct rnic_fault_cfg lf = {0};
	uint64_t seed = 1;

	g_app = a;
	a->conns = 1;
	rnic_config_init(&cfg);
	if (rnic_config_parse_args(&cfg, &argc, argv, err, sizeof(err)) != 0) {
		fprintf(stderr, "rnic-tcp: %s\n", err);
		return 2;
	}
	if (argc < 2 || (strcmp(argv[1], "sink") && strcmp(argv[1], "source") &&
			 strcmp(argv[1], "echo"))) {
		usage(stderr);
		return 2;
	}
	a->mode = !strcmp(argv[1], "sink") ? MODE_SINK :
		  !strcmp(argv[1], "source") ? MODE_SOURCE : MODE_ECHO;
	static const struct option lo[] = {
		{ "listen", required_argument, 0, 'l' }, { "connect", required_argument, 0, 'c' },
		{ "bytes", required_argument, 0, 'b' }, { "conns", required_argument, 0, 'n' },
		{ "cc", required_argument, 0, 'C' }, { "json", no_argument, 0, 'j' },
		{ "loopback", no_argument, 0, 'L' }, { "drop", required_argument, 0, 'D' },
		{ "dup", required_argument, 0, 'U' }, { "reorder", required_argument, 0, 'R' },
		{ "corrupt", required_argument, 0, 'X' }, { "seed", required_argument, 0, 'S' },
		{ "no-verify", no_argument, 0, 'V' }, { "threaded", no_argument, 0, 'T' },
		{ "drive", required_argument, 0, 'd' }, { "ipv6", no_argument, 0, '6' },
		{ "help", no_argument, 0, 'h' }, { 0, 0, 0, 0 },
	};
	optind = 2;
	int o;
	while ((o = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		char *end;
		switch (o) {
		case 'l': a->listen_port = (uint16_t)strtoul(optarg, &end, 10);
			if (*end || !a->listen_port) goto bad;
			break;
		case 'c': {
			/* A.B.C.D:PORT or [X:X::X]:PORT */
			char *colon = strrchr(optarg, ':');
			if (!colon) goto bad;
			*colon = '\0';
			if (rnic_addr_parse(optarg, &a->dst, NULL) != 0 ||
			    (a->dst.family == RNIC_AF_INET6 && optarg[0] != '['))
				goto bad;
			a->dst_port = (uint16_t)strtoul(colon + 1, &end, 10);
			if (*end || !a->dst_port) goto bad;
			break;
		}
		case 'b': a->bytes = parse_size(optarg);
			if (a->bytes == UINT64_MAX) goto bad;
			break;
		case 'n': a->conns = (unsigned)strtoul(optarg, &end, 10);
			if (*end || a->conns == 0 || a->conns > 64) goto bad;
			break;
		case 'C': if (!strcmp(optarg, "newreno")) a->cc = RNIC_TCP_CC_NEWRENO;
			else if (!strcmp(optarg, "cubic")) a->cc = RNIC_TCP_CC_CUBIC;
			else goto bad;
			break;
		case 'j': a->json = true; break;
		case 'L': loopback = true; break;
		case '6': ipv6 = true; break;
		case 'D': lf.drop = atof(optarg); break;
		case 'U': lf.dup = atof(optarg); break;
		case 'R': lf.reorder = atof(optarg); break;
		case 'X': lf.corrupt = atof(optarg); break;
		case 'S': seed = strtoull(optarg, NULL, 0); break;
		case 'V': a->no_verify = true; break;
		case 'T': a->drive = DRIVE_THREADED; a->drive_set = true; break;
		case 'd': if (!strcmp(optarg, "inline")) a->drive = DRIVE_INLINE;
			else if (!strcmp(optarg, "one")) a->drive = DRIVE_ONE;
			else if (!strcmp(optarg, "threaded")) a->drive = DRIVE_THREADED;
			else goto bad;
			a->drive_set = true;
			break;
		case 'h': usage(stdout); return 0;
		default: goto bad;
		}
	}
	if (optind < argc)
		goto bad;
	if ((a->drive_set || ipv6) && !loopback)
		goto bad;
	if (loopback) {
		if (a->mode != MODE_SOURCE || a->bytes == 0)
			goto bad;
		cfg.n_ports = 0;
	} else if (cfg.n_ports == 0 ||
		   (a->mode == MODE_SOURCE && (!a->dst.family || !a->bytes)) ||
		   (a->mode != MODE_SOURCE && !a->listen_port)) {
		goto bad;
	}

	rnic_stop_on_signals(RNIC_STOP_GRACE_MS);
	if (rnic_eal_init(argv[0], &cfg, loopback ? 2 : cfg.workers) != 0)
		return 1;

	struct rnic_stack *src_st = NULL, *sink_st = NULL;
	if (loopback) {
		struct rnic_config ca, cb;
		if (rnic_ring_pair("tcplo", 1) != 0)
			return 1;
		for (int i = 0; i < 2; i++) {
			struct rnic_config *c = i ? &cb : &ca;
			rnic_config_init(c);
			c->poll_mode = RNIC_POLL_BUSY;
			c->n_ports = 1;
			rnic_port_cfg_init(&c->ports[0]);
			snprintf(c->ports[0].ring, sizeof(c->ports[0].ring), "tcplo.%c", i ? 'b' : 'a');
			if (ipv6) {   /* IPv6 only: 2001:db8::1 and ::2 */
				static const uint8_t a6[16] = { 0x20, 0x01, 0x0d, 0xb8 };
				memcpy(c->ports[0].ip6[0].addr, a6, 16);
				c->ports[0].ip6[0].addr[15] = (uint8_t)(1 + i);
				c->ports[0].ip6[0].prefix_len = 64;
				c->ports[0].n_ip6 = 1;
			} else {
				c->ports[0].ip = 0xc0000201u + (uint32_t)i;
				c->ports[0].prefix_len = 24;
			}
			c->ports[0].rx_fault = lf;
			c->ports[0].fault_seed = seed + (uint64_t)i;
			c->ports[0].mbufs = 65535;
		}
		sink_st = rnic_stack_create(&ca);
		src_st = rnic_stack_create(&cb);
		if (ipv6) {
			uint8_t d6[16] = { 0x20, 0x01, 0x0d, 0xb8, [15] = 1 };
			a->dst = rnic_addr_v6(d6);
		} else {
			a->dst = rnic_addr_v4(0xc0000201u);
		}
		a->dst_port = 5001;
		a->listen_port = 5001;
	} else {
		struct rnic_stack *st = rnic_stack_create(&cfg);
		if (a->mode == MODE_SOURCE)
			src_st = st;
		else
			sink_st = st;
	}
	if ((loopback || a->mode != MODE_SOURCE) && sink_st == NULL) {
		fprintf(stderr, "rnic-tcp: stack: %s\n", rte_strerror(rte_errno));
		return 1;
	}
	if ((loopback || a->mode == MODE_SOURCE) && src_st == NULL) {
		fprintf(stderr, "rnic-tcp: stack: %s\n", rte_strerror(rte_errno));
		return 1;
	}
	a->sink_st = sink_st;
	if (sink_st) {
		set_cc(sink_st, a->cc);
		if (rnic_tcp_listen(sink_st, a->listen_port, &ops, a, 64) != 0) {
			fprintf(stderr, "rnic-tcp: cannot listen on %u\n", a->listen_port);
			return 1;
		}
		if (rnic_stack_start(sink_st) != 0)
			return 1;
	}
	double t0 = now_s();
	if (src_st) {
		set_cc(src_st, a->cc);
		if (rnic_stack_start(src_st) != 0)
			return 1;
		/* The first connection alone, and the others once it is up
		 * (or 3 s passed): so ARP has resolved the peer before the
		 * other SYNs go. A SYN that waited for ARP leaves on the
		 * queue of the worker that got the ARP reply, not its own,
		 * and a burst of them overflows the ARP entry's few pending
		 * slots (arp_pending_full) and waits for a retransmission. */
		a->hold = a->conns > 1 && !loopback;
		for (unsigned i = 0; i < a->conns; i++) {
			for (unsigned k = 0; i == 1 && k < 1500 && !a->flows[0].connected &&
					     !a->flows[0].finished; k++)
				usleep(2000);
			if (i == 1) {
				struct rnic_stack_stats ss;
				rnic_stack_stats(src_st, &ss);
				a->redirect_base = ss.redirected;
			}
			struct flow *f = &a->flows[a->n_flows++];
			memset(f, 0, sizeof(*f));
			rnic_sha256_init(&f->sha);
			f->target = a->bytes;
			f->rng = 0x9E3779B97F4A7C15ULL * (i + 1);
			struct connect_req r = { a, f, 0 };
			rnic_worker_call_sync(rnic_stack_worker(src_st, i % rnic_stack_workers(src_st)), do_connect, &r);
			if (r.rc != 0) {
				fprintf(stderr, "rnic-tcp: connect: %s\n", strerror(-r.rc));
				return 1;
			}
		}
		if (a->hold)
			start_flows(a);
		t0 = now_s();
	}
	/* run to completion: from here the main thread is the source's worker
	 * (and with --drive one the sink's too) */
	bool drive = loopback && a->drive != DRIVE_THREADED;
	if (drive)
		rnic_stack_stop(src_st);
	if (loopback && a->drive == DRIVE_ONE)
		rnic_stack_stop(sink_st);
	unsigned expect = loopback ? 2 * a->conns :
			  (a->mode == MODE_ECHO ? 1 : a->conns);
	double last = now_s();
	while (!rnic_stop_requested() && __atomic_load_n(&a->done, __ATOMIC_ACQUIRE) < expect) {
		if (drive) {
			drive_stacks(src_st, a->drive == DRIVE_ONE ? sink_st : NULL);
			retry_starved(a, true);
			continue;
		}
		usleep(2000);
		retry_starved(a, false);
		if (!a->json && now_s() - last >= 1.0 && a->mode != MODE_SOURCE) {
			last = now_s();
			fprintf(stderr, "rnic-tcp: %lu bytes\r", (unsigned long)a->total);
		}
		if (a->mode == MODE_SINK && a->bytes && a->total >= a->bytes * a->conns) {
			/* --bytes arrived: give the peers' FINs time (a FIN or
			 * its ACK lost behind a full queue waits for an RTO;
			 * stopping sooner resets those connections) */
			for (int i = 0; i < 5000 && a->done < expect; i++)
				usleep(2000);
			break;
		}
	}
	double secs = now_s() - (a->mode != MODE_SOURCE && a->t_accept ? a->t_accept : t0);
	if (src_st)
		rnic_stack_stop(src_st);
	if (sink_st)
		rnic_stack_stop(sink_st);

	/* flows still open when we stopped: their digest covers what arrived */
	for (unsigned i = 0; i < a->accepted && i < 64; i++)
		if (!a->sink_flows[i].finished) {
			struct flow *f = &a->sink_flows[i];
			uint8_t d[32];
			rnic_sha256_final(&f->sha, d);
			rnic_sha256_hex(d, f->hex);
			f->finished = true;
			if (a->mode == MODE_SINK && f->target && f->bytes >= f->target)
				a->done++;
		}
	uint64_t bytes;
	const char *digest, *sent = "";
	struct rnic_tcp_stats ts = {0};
	rnic_tcp_stats(src_st ? src_st : sink_st, &ts);
	bool ok = a->failed == 0 && a->done >= expect;
	if (a->mode == MODE_SOURCE && !loopback) {
		bytes = 0;
		for (unsigned i = 0; i < a->n_flows; i++)
			bytes += a->flows[i].bytes;
		digest = a->flows[0].hex;
	} else {
		bytes = a->total;
		digest = a->sink_flows[0].hex;
	}
	if (loopback) {
		/* every source stream must have arrived whole at some sink flow */
		sent = a->flows[0].hex;
		for (unsigned i = 0; i < a->n_flows; i++) {
			bool found = false;
			for (unsigned k = 0; k < a->accepted && k < 64; k++)
				found |= a->sink_flows[k].finished &&
					 !strcmp(a->sink_flows[k].hex, a->flows[i].hex);
			ok = ok && found;
		}
		ok = ok && a->total == a->bytes * a->conns;
	}
	if (getenv("RNIC_TCP_DEBUG")) {
		struct rnic_stack *sts[2] = { src_st, sink_st };
		for (int i = 0; i < 2; i++) {
			struct rnic_tcp_stats x;
			if (!sts[i]) continue;
			rnic_tcp_stats(sts[i], &x);
			fprintf(stderr, "%s: syns %lu cookies %lu valid %lu invalid %lu est %lu in %lu out %lu csum %lu hdr %lu opts %lu oow %lu paws %lu rst_in %lu rst_out %lu nolisten %lu rtx %lu rto %lu fr %lu\n",
				i ? "sink" : "src", x.syns, x.cookies_sent, x.cookie_valid, x.cookie_invalid, x.established, x.segs_in, x.segs_out, x.bad_csum, x.bad_hdr, x.bad_opts, x.out_of_window, x.paws_drops, x.resets_in, x.resets_out, x.no_listener, x.retransmits, x.rtos, x.fast_retransmits);
			struct rnic_stack_stats ss;
			rnic_stack_stats(sts[i], &ss);
			fprintf(stderr, "   rx %lu tx %lu drops %lu arp %lu/%lu mbufs %lu\n", ss.rx_pkts, ss.tx_pkts, ss.drops, ss.arp_requests, ss.arp_replies, ss.mbufs_in_use);
		}
	}
	if (a->no_verify)
		digest = sent = "not computed (--no-verify)";
	double gbps = secs > 0 ? bytes * 8 / secs / 1e9 : 0;
	if (a->json) {
		printf("{\"mode\": \"%s\", \"bytes\": %lu, \"sha256\": \"%s\", \"gbps\": %.3f, "
		       "\"retransmits\": %lu, \"seconds\": %.3f, \"ok\": %s%s%s%s%s",
		       argv[1], (unsigned long)bytes, digest, gbps,
		       (unsigned long)ts.retransmits, secs,
		       ok ? "true" : "false", loopback ? ", \"sha256_sent\": \"" : "",
		       loopback ? sent : "", loopback ? "\"" : "",
		       !loopback ? "" : a->drive == DRIVE_INLINE ? ", \"drive\": \"inline\"" :
		       a->drive == DRIVE_ONE ? ", \"drive\": \"one\"" : ", \"drive\": \"threaded\"");
		if (a->conns > 1 && !loopback && a->mode == MODE_SOURCE)
			print_flows(a->flows, a->n_flows, src_st, a->redirect_base,
				    a->last_err);
		else if (a->conns > 1 && !loopback && a->mode == MODE_SINK) {
			/* more than 64 accepted: the rest were refused (reset) */
			printf(", \"accepted\": %u", a->accepted);
			print_flows(a->sink_flows, a->accepted < 64 ? a->accepted : 64, sink_st,
				    a->redirect_base, a->last_err);
		}
		printf("}\n");
	} else {
		printf("rnic-tcp %s: %lu bytes in %.3f s, %.3f Gbit/s, %lu retransmits, "
		       "sha256 %s%s\n", argv[1], (unsigned long)bytes, secs, gbps,
		       (unsigned long)ts.retransmits, digest,
		       ok ? "" : " (FAILED)");
	}
	if (src_st)
		rnic_stack_destroy(src_st);
	if (sink_st)
		rnic_stack_destroy(sink_st);
	return ok ? 0 : 1;
bad:
	usage(stderr);
	return 2;
}
