/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rnic-perf: a perftest-like benchmark of rnic's verbs, over iWARP or
 * RoCEv2.
 *
 *   rnic-perf [TEST] --loopback --transport iwarp|roce [--test TEST] [options]
 *   rnic-perf [TEST] --server --transport T [options] PORT-OPTIONS
 *   rnic-perf [TEST] --client ADDR --transport T [options] PORT-OPTIONS
 *   rnic-perf conn_rate --loopback [options]   (connection setup rate:
 *             conn_rate.c, with options of its own)
 *
 * The test is named once, as the argument or with --test. TEST is write_bw, write_lat, read_bw, read_lat, send_bw, send_lat or
 * atomic_bw (what each measures: run.c). Bandwidth tests report Gbit/s and
 * million messages per second; latency tests the average, median and 99th
 * percentile in microseconds. --json prints one JSON object instead.
 * Every completion's status is checked: a failed one ends the run with
 * exit status 1 and names the work request. Exit status 2: a bad command
 * line; 3: the transport refuses the test's operation (atomics on iWARP).
 * --verify (bandwidth tests) accounts for every completion and checks each
 * Send's payload (--loopback) and the last Writes in their slots at the
 * peer (between processes: read back by the client); a run that does not
 * verify exits 1 after its report.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "conn_rate.h"
#include "iwarp/iwarp.h"
#include "perf.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: rnic-perf TEST --loopback --transport iwarp|roce [options]\n"
		"       rnic-perf TEST --server --transport T [options] PORT-OPTIONS\n"
		"       rnic-perf TEST --client ADDR --transport T [options] PORT-OPTIONS\n"
		"       rnic-perf conn_rate --loopback [--transport T] [--conns N] ...\n"
		"         (connection setup rate; rnic-perf conn_rate --help)\n"
		"TEST: write_bw write_lat read_bw read_lat send_bw send_lat atomic_bw\n"
		"(the argument, or --test TEST)\n"
		"  --loopback          two stacks in this process, joined by net_ring; the\n"
		"                      main thread runs the requesting stack's worker loop\n"
		"  --drive MODE        (--loopback) inline (the default), one: the main thread\n"
		"                      runs both stacks (one CPU), threaded: every worker\n"
		"                      on its own lcore, split: a thread per stack runs\n"
		"                      its worker loop and its own QPs (two hosts);\n"
		"                      (--server/--client) one: the main thread runs the\n"
		"                      stack's workers during the run (run to completion)\n"
		"  --server            wait for one client on the port(s) given\n"
		"  --client ADDR       run against the server at ADDR (A.B.C.D)\n"
		"  --transport T       iwarp or roce (default iwarp)\n"
		"  --test TEST         what to measure, instead of the argument\n"
		"  -s, --size N        bytes per message (bw: 65536, lat: 8; atomic_bw: 8 only)\n"
		"  -n, --iters N       operations per QP (bw: 5000, lat: 1000; bw with more\n"
		"                      than 100 QPs: 500000 in all, split over the QPs)\n"
		"  --duration S        run for S seconds instead of -n\n"
		"  --qps N             QP pairs (bw tests; 1..%d, default 1)\n"
		"  --tx-depth D        operations in flight per QP (1..%d, default 128;\n"
		"                      --loopback: at most -n, as perftest)\n"
		"  --cq-mod N          (bw) one signaled operation in N (default: half\n"
		"                      the depth, at most 64; perftest's -Q: 100)\n"
		"  --post-list N       (bw) operations per ibv_post_send, 1..32 (default\n"
		"                      32; perftest's -l: 1); posts follow one another\n"
		"                      until the window is full, then completions are\n"
		"                      polled, as perftest's loop\n"
		"  --cqs N             CQs per side on different completion handlers; QP i\n"
		"                      uses CQ i %% N (1..%d, at most --qps, default 1)\n"
		"  --rebind-ms M       re-bind a random CQ to a random handler every M ms\n"
		"  --tcp-port P        CM listener (iWARP) or address exchange (RoCE) port\n"
		"                      for --server/--client (default %d)\n"
		"  --json              one JSON object on stdout\n"
		"  --verify            (bandwidth) count every completion per QP\n"
		"                      and queue: duplicates, missing, out of order; every\n"
		"                      Send is signaled and its payload checked; each\n"
		"                      Write's slot checked (between processes: read back\n"
		"                      by the client; give --verify and the same\n"
		"                      --tx-depth to both ends); exit 1 unless all is well\n"
		"  --ports N           (--loopback) ring pairs between the stacks, 1 or 2;\n"
		"                      QPs connect through port 0, MRs are port 0's\n"
		"  --lo-mtu N          (--loopback) the ring ports' IP MTU, 576..9000\n"
		"                      (default 9000, the largest: Linux's lo has 65536)\n"
		"  --lo-sw-csum        (--loopback) TCP checksums in software on the ring\n"
		"                      ports too (by default the in-memory link needs none)\n"
		"  --fail-port N       take port N down on both stacks mid-run (the cable);\n"
		"  --fail-at PERCENT   ... once PERCENT of the operations completed (50)\n"
		"  --workers N         workers per stack; --busy-poll: workers never sleep\n"
		"Exit status: 0 done, 1 failed, 2 bad arguments, 3 operation not supported\n"
		"by the transport.\n\n%s",
		PERF_MAX_QPS, RNIC_MAX_QP_WR, PERF_MAX_CQS, PERF_DEFAULT_PORT, rnic_config_usage());
}

/* An integer option in lo..hi. @return 0 or -1 with the message printed. */
static int num_arg(const char *opt, const char *s, unsigned long long lo,
		   unsigned long long hi, unsigned long long *v)
{
	char *end;

	errno = 0;
	*v = strtoull(s, &end, 0);
	if (*s == '\0' || *s == '-' || *end != '\0' || errno != 0 || *v < lo || *v > hi) {
		fprintf(stderr, "rnic-perf: %s: '%s' is not a number %llu..%llu\n", opt, s, lo, hi);
		return -1;
	}
	return 0;
}

static int test_arg(const char *s, enum perf_test *t)
{
	for (int i = 0; i < PERF_NTESTS; i++)
		if (strcmp(s, perf_test_names[i]) == 0) {
			*t = (enum perf_test)i;
			return 0;
		}
	fprintf(stderr, "rnic-perf: test '%s' is not one of write_bw, write_lat, read_bw, "
		"read_lat, send_bw, send_lat, atomic_bw\n", s);
	return -1;
}

enum {
	OPT_LOOPBACK = 256, OPT_SERVER, OPT_CLIENT, OPT_TRANSPORT, OPT_TEST, OPT_DURATION,
	OPT_QPS, OPT_TX_DEPTH, OPT_CQ_MOD, OPT_POST_LIST, OPT_CQS, OPT_REBIND, OPT_JSON, OPT_TCP_PORT, OPT_VERIFY,
	OPT_PORTS, OPT_LO_MTU, OPT_LO_SW_CSUM, OPT_FAIL_PORT, OPT_FAIL_AT, OPT_DRIVE,
};

/* One option of ours. @return 0 or -1 (message printed). */
static int one_opt(struct perf_opts *o, int c, const char *arg, bool *have_test,
		   bool *have_size, unsigned *modes)
{
	unsigned long long v;
	char *end;

	switch (c) {
	case OPT_LOOPBACK: o->loopback = true; (*modes)++; return 0;
	case OPT_SERVER: o->server = true; (*modes)++; return 0;
	case OPT_CLIENT: {
		(*modes)++;
		if (rnic_addr_parse(arg, &o->server_addr, NULL) != 0) {
			fprintf(stderr, "rnic-perf: --client: '%s' is not an IPv4 or IPv6 address\n",
				arg);
			return -1;
		}
		return 0;
	}
	case OPT_TRANSPORT:
		if (strcmp(arg, "iwarp") == 0)
			o->transport = RNIC_TRANSPORT_IWARP;
		else if (strcmp(arg, "roce") == 0)
			o->transport = RNIC_TRANSPORT_ROCE;
		else {
			fprintf(stderr, "rnic-perf: --transport: '%s' is not iwarp or roce\n", arg);
			return -1;
		}
		return 0;
	case OPT_TEST:
		if (*have_test) {
			fprintf(stderr, "rnic-perf: --test '%s': the test is already named\n", arg);
			return -1;
		}
		*have_test = true;
		return test_arg(arg, &o->test);
	case 's':
		*have_size = true;
		if (num_arg("--size", arg, 1, 1ull << 30, &v) != 0)
			return -1;
		o->size = (uint32_t)v;
		return 0;
	case 'n':
		if (num_arg("--iters", arg, 1, 1ull << 36, &v) != 0)
			return -1;
		o->iters = v;
		return 0;
	case OPT_DURATION:
		errno = 0;
		o->duration = strtod(arg, &end);
		if (*arg == '\0' || *end != '\0' || errno != 0 || !(o->duration > 0) ||
		    o->duration > 86400) {
			fprintf(stderr, "rnic-perf: --duration: '%s' is not a number of seconds "
				"(0 < S <= 86400)\n", arg);
			return -1;
		}
		return 0;
	case OPT_QPS:
		if (num_arg("--qps", arg, 1, PERF_MAX_QPS, &v) != 0)
			return -1;
		o->qps = (unsigned)v;
		return 0;
	case OPT_TX_DEPTH:
		if (num_arg("--tx-depth", arg, 1, RNIC_MAX_QP_WR, &v) != 0)
			return -1;
		o->tx_depth = (unsigned)v;
		o->tx_depth_set = true;
		return 0;
	case OPT_CQ_MOD:
		if (num_arg("--cq-mod", arg, 1, RNIC_MAX_QP_WR, &v) != 0)
			return -1;
		o->cq_mod = (unsigned)v;
		return 0;
	case OPT_POST_LIST:
		if (num_arg("--post-list", arg, 1, PERF_POST_LIST_MAX, &v) != 0)
			return -1;
		o->post_list = (unsigned)v;
		return 0;
	case OPT_CQS:
		if (num_arg("--cqs", arg, 1, PERF_MAX_CQS, &v) != 0)
			return -1;
		o->cqs = (unsigned)v;
		return 0;
	case OPT_REBIND:
		if (num_arg("--rebind-ms", arg, 1, 3600000, &v) != 0)
			return -1;
		o->rebind_ms = (unsigned)v;
		return 0;
	case OPT_TCP_PORT:
		if (num_arg("--tcp-port", arg, 1, 65535, &v) != 0)
			return -1;
		o->tcp_port = (uint16_t)v;
		return 0;
	case OPT_JSON: o->json = true; return 0;
	case OPT_DRIVE:
		for (int d = 0; d <= PERF_DRIVE_SPLIT; d++)
			if (strcmp(arg, perf_drive_names[d]) == 0) {
				o->drive = (enum perf_drive)d;
				return 0;
			}
		fprintf(stderr, "rnic-perf: --drive %s: inline, one, threaded or split\n", arg);
		return -1;
	case OPT_VERIFY: o->verify = true; return 0;
	case OPT_PORTS:
		if (num_arg("--ports", arg, 1, 2, &v) != 0)
			return -1;
		o->ports = (unsigned)v;
		return 0;
	case OPT_LO_SW_CSUM: o->lo_sw_csum = true; return 0;
	case OPT_LO_MTU:
		if (num_arg("--lo-mtu", arg, 576, 9000, &v) != 0)
			return -1;
		o->lo_mtu = (uint16_t)v;
		return 0;
	case OPT_FAIL_PORT:
		if (num_arg("--fail-port", arg, 0, 1, &v) != 0)
			return -1;
		o->fail_port = (int)v;
		return 0;
	case OPT_FAIL_AT:
		if (num_arg("--fail-at", arg, 0, 100, &v) != 0)
			return -1;
		o->fail_at = (unsigned)v;
		return 0;
	default: return -1;
	}
}

/* Checks across options, and the defaults that depend on the test.
 * @return 0 or -1 (message printed). */
static int check_opts(struct perf_opts *o, const struct rnic_config *cfg, bool have_test,
		      bool have_size, unsigned modes)
{
	bool lat = perf_is_lat(o->test);

	if (modes != 1) {
		fprintf(stderr, "rnic-perf: give exactly one of --loopback, --server, "
			"--client ADDR\n");
		return -1;
	}
	if (!have_test) {
		fprintf(stderr, "rnic-perf: name the test (write_bw, write_lat, read_bw, "
			"read_lat, send_bw, send_lat, atomic_bw)\n");
		return -1;
	}
	if (o->loopback && cfg->n_ports != 0) {
		fprintf(stderr, "rnic-perf: --loopback makes its own ports: drop the port "
			"options\n");
		return -1;
	}
	if (o->drive != PERF_DRIVE_INLINE && o->drive != PERF_DRIVE_ONE && !o->loopback) {
		fprintf(stderr, "rnic-perf: --server/--client take --drive one (run to "
			"completion) or nothing (workers on their lcores)\n");
		return -1;
	}
	if (!o->loopback && cfg->n_ports == 0) {
		fprintf(stderr, "rnic-perf: --server/--client need a port: --vdev SPEC --ip "
			"A.B.C.D/LEN (or --pci, --config)\n");
		return -1;
	}
	if ((o->lo_mtu != 0 || o->lo_sw_csum) && !o->loopback) {
		fprintf(stderr, "rnic-perf: --lo-mtu and --lo-sw-csum are --loopback options "
			"(a port's MTU is --mtu after --vdev, --ring or --pci)\n");
		return -1;
	}
	if (o->drive == PERF_DRIVE_SPLIT &&
	    (o->verify || o->rebind_ms != 0 || o->fail_port >= 0 || o->ports > 1)) {
		fprintf(stderr, "rnic-perf: --drive split runs each stack on its own thread: "
			"--verify, --rebind-ms, --fail-port and --ports 2 need another layout\n");
		return -1;
	}
	if (o->ports > 1 && !o->loopback) {
		fprintf(stderr, "rnic-perf: --ports 2 is a --loopback option (give --server "
			"and --client their ports with --config)\n");
		return -1;
	}
	if (o->fail_port >= 0 && (unsigned)o->fail_port >= o->ports) {
		fprintf(stderr, "rnic-perf: --fail-port %d: there %s only %u port%s (--ports)\n",
			o->fail_port, o->ports == 1 ? "is" : "are", o->ports,
			o->ports == 1 ? "" : "s");
		return -1;
	}
	if (o->fail_port >= 0 && o->duration > 0) {
		fprintf(stderr, "rnic-perf: --fail-port needs -n (the failure point is a "
			"share of the operations)\n");
		return -1;
	}
	if (o->iters != 0 && o->duration > 0) {
		fprintf(stderr, "rnic-perf: -n and --duration exclude each other\n");
		return -1;
	}
	if (o->test == PERF_ATOMIC_BW) {
		if (have_size && o->size != 8) {
			fprintf(stderr, "rnic-perf: atomic_bw: the size is 8 bytes (-s %u)\n",
				o->size);
			return -1;
		}
		o->size = 8;
	} else if (!have_size) {
		o->size = lat ? 8 : 65536;
	}
	if (lat && o->qps != 1) {
		fprintf(stderr, "rnic-perf: %s: latency tests use one QP (--qps %u)\n",
			perf_test_names[o->test], o->qps);
		return -1;
	}
	if (o->cqs > o->qps) {
		fprintf(stderr, "rnic-perf: --cqs %u: more CQs than QPs (--qps %u)\n", o->cqs,
			o->qps);
		return -1;
	}
	if (o->verify && lat) {
		fprintf(stderr, "rnic-perf: --verify needs a bandwidth test\n");
		return -1;
	}
	if (o->verify && !o->loopback && o->test != PERF_WRITE_BW && o->test != PERF_READ_BW) {
		fprintf(stderr, "rnic-perf: --verify between processes: write_bw and read_bw "
			"(the Sends of send_bw are checked with --loopback)\n");
		return -1;
	}
	if (o->verify && o->test == PERF_SEND_BW && o->size < sizeof(struct perf_stamp)) {
		fprintf(stderr, "rnic-perf: --verify: -s %u cannot hold the %zu-byte stamp of "
			"a Send\n", o->size, sizeof(struct perf_stamp));
		return -1;
	}
	if ((uint64_t)o->qps * 2 * (2 + perf_verify_slots(o)) *
	    (((uint64_t)o->size + 63) & ~63ull) > (2ull << 30)) {
		fprintf(stderr, "rnic-perf: --qps %u x -s %u needs more than 2 GiB of buffers\n",
			o->qps, o->size);
		return -1;
	}
	if (o->loopback && o->transport == RNIC_TRANSPORT_IWARP &&
	    o->tcp_port + (o->qps - 1) / PERF_LO_PORT_CONNS > 65535) {
		fprintf(stderr, "rnic-perf: --qps %u listens on %u TCP ports from --tcp-port %u\n",
			o->qps, (o->qps - 1) / PERF_LO_PORT_CONNS + 1, o->tcp_port);
		return -1;
	}
	if (o->iters == 0 && o->duration == 0) {
		o->iters = lat ? 1000 : PERF_BW_ITERS;
		if (!lat && o->qps > PERF_BW_SPLIT_QPS) {
			o->iters = (uint64_t)PERF_BW_ITERS * PERF_BW_SPLIT_QPS / o->qps;
			if (o->iters == 0)
				o->iters = 1;
		}
	}
	/* perftest's rule: no deeper than the operations a QP runs (memory
	 * for 100,000 QPs); not between processes, whose ends must agree
	 * on the depth for --verify */
	if (o->loopback && !o->tx_depth_set && o->iters != 0 && o->iters < o->tx_depth)
		o->tx_depth = (unsigned)o->iters;
	if (o->cq_mod > o->tx_depth) {
		fprintf(stderr, "rnic-perf: --cq-mod %u is more than --tx-depth %u: no "
			"completion would ever come\n", o->cq_mod, o->tx_depth);
		return -1;
	}
	return 0;
}

/* @return 0, 1 (help printed) or -1 (message printed). */
static int parse(struct perf_opts *o, const struct rnic_config *cfg, int argc, char **argv)
{
	static const struct option lo[] = {
		{ "loopback", no_argument, NULL, OPT_LOOPBACK },
		{ "server", no_argument, NULL, OPT_SERVER },
		{ "client", required_argument, NULL, OPT_CLIENT },
		{ "transport", required_argument, NULL, OPT_TRANSPORT },
		{ "test", required_argument, NULL, OPT_TEST },
		{ "size", required_argument, NULL, 's' },
		{ "iters", required_argument, NULL, 'n' },
		{ "duration", required_argument, NULL, OPT_DURATION },
		{ "qps", required_argument, NULL, OPT_QPS },
		{ "tx-depth", required_argument, NULL, OPT_TX_DEPTH },
		{ "cq-mod", required_argument, NULL, OPT_CQ_MOD },
		{ "post-list", required_argument, NULL, OPT_POST_LIST },
		{ "cqs", required_argument, NULL, OPT_CQS },
		{ "rebind-ms", required_argument, NULL, OPT_REBIND },
		{ "tcp-port", required_argument, NULL, OPT_TCP_PORT },
		{ "json", no_argument, NULL, OPT_JSON },
		{ "drive", required_argument, NULL, OPT_DRIVE },
		{ "verify", no_argument, NULL, OPT_VERIFY },
		{ "ports", required_argument, NULL, OPT_PORTS },
		{ "lo-mtu", required_argument, NULL, OPT_LO_MTU },
		{ "lo-sw-csum", no_argument, NULL, OPT_LO_SW_CSUM },
		{ "fail-port", required_argument, NULL, OPT_FAIL_PORT },
		{ "fail-at", required_argument, NULL, OPT_FAIL_AT },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	bool have_test = false, have_size = false;
	unsigned modes = 0;
	int c;

	opterr = 0;
	while ((c = getopt_long(argc, argv, ":s:n:h", lo, NULL)) != -1) {
		if (c == 'h') {
			usage(stdout);
			return 1;
		}
		if (c == ':') {
			fprintf(stderr, "rnic-perf: %s needs a value\n", argv[optind - 1]);
			return -1;
		}
		if (c == '?') {
			fprintf(stderr, "rnic-perf: unknown option '%s' (try --help)\n",
				argv[optind - 1]);
			return -1;
		}
		if (one_opt(o, c, optarg, &have_test, &have_size, &modes) != 0)
			return -1;
	}
	/* getopt_long() moved the arguments behind the options */
	if (optind < argc && !have_test) {
		if (test_arg(argv[optind++], &o->test) != 0)
			return -1;
		have_test = true;
	}
	if (optind < argc) {
		fprintf(stderr, "rnic-perf: unexpected argument '%s' (the test is named once; "
			"try --help)\n", argv[optind]);
		return -1;
	}
	return check_opts(o, cfg, have_test, have_size, modes);
}

/* --- report ------------------------------------------------------------------- */

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* Nearest-rank percentile @p p of @p n sorted samples. */
static double percentile(const double *s, uint64_t n, double p)
{
	uint64_t rank = (uint64_t)ceil(p / 100.0 * (double)n);
	return s[rank == 0 ? 0 : rank - 1];
}

static void report(const struct perf_opts *o, const struct rnic_config *cfg,
		   struct perf_result *r)
{
	const char *tr = o->transport == RNIC_TRANSPORT_ROCE ? "roce" : "iwarp";
	const char *mode = o->loopback ? "loopback" : o->server ? "server" : "client";
	double gbps = r->seconds > 0 ? (double)r->ops * o->size * 8 / r->seconds / 1e9 : 0;
	double mops = r->seconds > 0 ? (double)r->ops / r->seconds / 1e6 : 0;
	double avg = 0, p50 = 0, p99 = 0;
	double rebind_avg = r->rebinds ? r->rebind_us_sum / (double)r->rebinds : 0;

	if (o->server) {
		if (o->json)
			printf("{\"test\": \"%s\", \"transport\": \"%s\", \"mode\": \"server\", "
			       "\"size\": %u, \"qps\": %u, \"workers\": %u, \"seconds\": %.6f, "
			       "\"redirected\": %lu, \"redirected_in_run\": %lu}\n",
			       perf_test_names[o->test], tr, o->size, o->qps, cfg->workers,
			       r->seconds, (unsigned long)r->redirected,
			       (unsigned long)r->redirected_in_run);
		else
			printf("rnic-perf %s over %s (server): %u bytes, served %u QP(s) for %.3f s "
			       "until the client closed\n", perf_test_names[o->test], tr, o->size,
			       o->qps, r->seconds);
		return;
	}
	if (r->nlat > 0) {
		qsort(r->lat_us, r->nlat, sizeof(double), cmp_double);
		for (uint64_t i = 0; i < r->nlat; i++)
			avg += r->lat_us[i];
		avg /= (double)r->nlat;
		p50 = percentile(r->lat_us, r->nlat, 50);
		p99 = percentile(r->lat_us, r->nlat, 99);
	}
	if (o->json) {
		printf("{\"test\": \"%s\", \"transport\": \"%s\", \"mode\": \"%s\", "
		       "\"size\": %u, \"qps\": %u, \"tx_depth\": %u, \"workers\": %u, "
		       "\"cqs\": %u, \"iters\": %lu, \"seconds\": %.6f",
		       perf_test_names[o->test], tr, mode, o->size, o->qps, o->tx_depth,
		       cfg->workers, o->cqs, (unsigned long)r->ops, r->seconds);
		printf(", \"completed\": %lu", (unsigned long)r->ops);
		if (!perf_is_lat(o->test))
			printf(", \"cq_mod\": %u, \"post_list\": %u", perf_cq_mod(o),
			       o->post_list);
		if (!o->loopback)
			printf(", \"redirected\": %lu, \"redirected_in_run\": %lu",
			       (unsigned long)r->redirected, (unsigned long)r->redirected_in_run);
		if (o->loopback)
			printf(", \"drive\": \"%s\", \"mtu\": %u, \"hugepages\": %s, "
			       "\"tcp_csum\": \"%s\"", perf_drive_names[o->drive],
			       o->lo_mtu ? o->lo_mtu : PERF_LO_MTU, r->hugepages ? "true" : "false",
			       o->lo_sw_csum ? "software" : "link");
		if (o->transport == RNIC_TRANSPORT_IWARP)
			printf(", \"zero_copy_tx\": %s, \"zc_fpdus\": %lu",
			       rnic_iw_zero_copy_tx() ? "true" : "false", (unsigned long)r->zc_fpdus);
		if (r->mem_valid)
			printf(", \"setup_s\": %.3f, \"qp_mem\": {\"per_qp\": %.0f, \"create\": %.0f, "
			       "\"connect\": %.0f, \"queues\": %.0f, \"beyond_queues\": %.0f}",
			       r->setup_s, r->qp_create_bytes + r->qp_connect_bytes,
			       r->qp_create_bytes, r->qp_connect_bytes, r->qp_queue_bytes,
			       r->qp_create_bytes + r->qp_connect_bytes - r->qp_queue_bytes);
		if (r->idle_loop_ns > 0)
			printf(", \"idle_loop_ns\": %.1f, \"idle_loop_min_ns\": %.1f",
			       r->idle_loop_ns, r->idle_loop_min_ns);
		if (o->ports > 1)
			printf(", \"ports\": %u, \"migrated_stags\": %lu, \"migration_queries\": %lu, "
			       "\"migration_query_us_max\": %lu", o->ports,
			       (unsigned long)r->migrated_stags, (unsigned long)r->mig_queries,
			       (unsigned long)r->mig_query_us_max);
		if (o->fail_port >= 0)
			printf(", \"fail_port\": %d, \"fail_at\": %u, \"failover_ms\": %.3f",
			       o->fail_port, o->fail_at, r->failover_ms);
		if (o->verify && o->test == PERF_WRITE_BW)
			printf(", \"writes_checked\": %lu", (unsigned long)r->written_checked);
		/* every test: gbps and mops (latency tests: exchanges), and
		 * lat_us, which only latency tests have samples for */
		printf(", \"gbps\": %.3f, \"mops\": %.4f", gbps, mops);
		if (perf_is_lat(o->test))
			printf(", \"lat_us\": {\"avg\": %.3f, \"p50\": %.3f, \"p99\": %.3f}",
			       avg, p50, p99);
		else
			printf(", \"lat_us\": null");
		printf(", \"rebinds\": %lu", (unsigned long)r->rebinds);
		if (o->rebind_ms != 0)
			printf(", \"rebind_us_avg\": %.3f, \"rebind_us_max\": %.3f",
			       rebind_avg, r->rebind_us_max);
		if (o->verify)
			printf(", \"completions_seen\": %lu, \"completions_expected\": %lu, \"duplicates\": %lu, "
			       "\"missing\": %lu, \"out_of_order\": %lu, \"bad_payload\": %lu, "
			       "\"events\": %lu, \"stalled\": %s, \"verified\": %s",
			       (unsigned long)r->completions, (unsigned long)r->expected,
			       (unsigned long)r->duplicates, (unsigned long)r->missing,
			       (unsigned long)r->out_of_order, (unsigned long)r->bad_payload,
			       (unsigned long)r->events, r->stalled ? "true" : "false",
			       perf_verified(r) ? "true" : "false");
		printf("}\n");
		return;
	}
	printf("rnic-perf %s over %s (%s): %u bytes, %u QP(s), tx depth %u, %u worker(s) "
	       "per stack, %u CQ(s)\n", perf_test_names[o->test], tr, mode, o->size, o->qps,
	       o->tx_depth, cfg->workers, o->cqs);
	if (o->loopback)
		printf("  --drive %s, ring ports at MTU %u, TCP checksums %s, %s\n",
		       perf_drive_names[o->drive], o->lo_mtu ? o->lo_mtu : PERF_LO_MTU,
		       o->lo_sw_csum ? "in software" : "left to the link",
		       r->hugepages ? "on hugepages" : "without hugepages (too few free)");
	if (perf_is_lat(o->test))
		printf("  %lu exchanges in %.3f s: average %.2f us, p50 %.2f us, p99 %.2f us%s\n",
		       (unsigned long)r->ops, r->seconds, avg, p50, p99,
		       o->test == PERF_READ_LAT ? " (round trip)" : " (half the round trip)");
	else
		printf("  %lu messages in %.3f s: %.3f Gbit/s, %.4f M messages/s\n",
		       (unsigned long)r->ops, r->seconds, gbps, mops);
	if (r->mem_valid)
		printf("  %u QP pairs set up in %.3f s; a connected QP: %.0f bytes (%.0f created, "
		       "%.0f connected), of which %.0f its queue entries: %.0f beyond them\n",
		       o->qps, r->setup_s, r->qp_create_bytes + r->qp_connect_bytes,
		       r->qp_create_bytes, r->qp_connect_bytes, r->qp_queue_bytes,
		       r->qp_create_bytes + r->qp_connect_bytes - r->qp_queue_bytes);
	if (o->rebind_ms != 0)
		printf("  %lu CQ re-binds, %.3f us each on average, %.3f us at most\n",
		       (unsigned long)r->rebinds, rebind_avg, r->rebind_us_max);
	if (o->ports > 1)
		printf("  %u ports: %lu STag(s) migrated, %lu migration queries (slowest %lu us)\n",
		       o->ports, (unsigned long)r->migrated_stags, (unsigned long)r->mig_queries,
		       (unsigned long)r->mig_query_us_max);
	if (o->fail_port >= 0)
		printf("  port %d failed at %u%%: first data placed through the survivor %.3f ms "
		       "after link down\n",
		       o->fail_port, o->fail_at, r->failover_ms);
	if (o->verify && o->test == PERF_WRITE_BW)
		printf("  %lu Write target slots compared\n", (unsigned long)r->written_checked);
	if (o->verify)
		printf("  verify: %lu of %lu completions, %lu duplicate(s), %lu missing, %lu "
		       "out of order, %lu bad payload(s), %lu CQ events%s: %s\n",
		       (unsigned long)r->completions, (unsigned long)r->expected,
		       (unsigned long)r->duplicates, (unsigned long)r->missing,
		       (unsigned long)r->out_of_order, (unsigned long)r->bad_payload,
		       (unsigned long)r->events, r->stalled ? ", stalled" : "",
		       perf_verified(r) ? "verified" : "NOT verified");
}

int main(int argc, char **argv)
{
	struct perf_opts o;
	struct perf_result r = { 0 };
	struct rnic_config cfg;
	char err[RNIC_ERRLEN];

	perf_opts_default(&o);
	rnic_config_init(&cfg);
	if (rnic_config_parse_args(&cfg, &argc, argv, err, sizeof(err)) != 0) {
		fprintf(stderr, "rnic-perf: %s\n", err);
		return PERF_EXIT_USAGE;
	}
	if (argc > 1 && !strcmp(argv[1], "conn_rate"))   /* its own options */
		return perf_conn_rate_main(argc - 1, argv + 1, &cfg);
	int rc = parse(&o, &cfg, argc, argv);
	if (rc != 0)
		return rc > 0 ? 0 : PERF_EXIT_USAGE;
	srand48((long)getpid() ^ (long)time(NULL));
	rnic_stop_on_signals(RNIC_STOP_GRACE_MS);
	rc = o.loopback ? perf_loopback(&o, &cfg, &r) : perf_remote(&o, &cfg, &r);
	if (rc == 0) {
		report(&o, &cfg, &r);
		if (o.verify && !perf_verified(&r))
			rc = PERF_EXIT_FAIL;
	}
	free(r.lat_us);
	rnic_request_stop();
	fflush(stdout);
	return rc;
}
