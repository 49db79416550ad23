/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rnic-pingpong: rdma-core's ibv_rc_pingpong over rnic's RoCEv2, in either
 * role, so it runs against the real tool (rxe, hardware) or against itself.
 *
 * Sequence (the client is the side given the server's address):
 *   both: RC QP to INIT, RX_DEPTH receives of SIZE bytes posted
 *   both: LID:QPN:PSN:GID exchange over rnic TCP (exch.h), QP to RTR, RTS
 *   C:    SEND of SIZE bytes
 *   S:    its receive completes, SEND back;  C: receive completes, SEND ...
 * A side posts its next Send once its previous Send and a receive have both
 * completed (rc_pingpong's pending mask), until ITERS of each completed;
 * then it prints rc_pingpong's two result lines.
 *
 *   rnic-pingpong [-p PORT] [-d DEV] [-i IBPORT] [-s SIZE] [-m MTU] [-r RX_DEPTH]
 *                 [-n ITERS] [-l SL] [-e] [-g GIDIDX] PORT-OPTIONS [SERVER]
 * SERVER is an IPv4 or IPv6 address.
 * Exit 0 when every iteration completed, 1 on a failure, 2 on bad arguments.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rte_errno.h>

#include "rnic/rnic.h"
#include "rnic/rnic_verbs.h"

#include "session.h"

#define EXIT_FAIL PP_EXIT_FAIL
#define EXIT_USAGE 2

/* What the command line asked for (rc_pingpong's defaults). */
static struct pp_opts o;

/* --- arguments -------------------------------------------------------------- */

static void usage(FILE *f)
{
	fprintf(f,
		"usage: rnic-pingpong [options] PORT-OPTIONS            start a server and wait\n"
		"       rnic-pingpong [options] PORT-OPTIONS A.B.C.D    connect to the server\n"
		"ibv_rc_pingpong's protocol over rnic's RoCEv2; the address exchange uses\n"
		"rnic's own TCP on the port's address.\n"
		"  -p, --port=PORT       TCP port of the exchange (default 18515)\n"
		"  -d, --ib-dev=DEV      the device's name (rnic0); checked, nothing to choose\n"
		"  -i, --ib-port=N       rnic port, 1-based (default 1)\n"
		"  -s, --size=SIZE       bytes per message (default 4096)\n"
		"  -m MTU                path MTU: 256, 512, 1024, 2048, 4096 (default 1024);\n"
		"                        --mtu is the port's IP MTU (a port option)\n"
		"  -r, --rx-depth=N      receives kept posted (default 500)\n"
		"  -n, --iters=N         exchanges (default 1000)\n"
		"  -l, --sl=SL           service level (default 0)\n"
		"  -e, --events          sleep on CQ events (default: poll)\n"
		"  -g, --gid-idx=IDX     local GID index; RoCE peers need it: 0 fe80:: link-local,\n"
		"                        1 ::ffff:IPv4 (IPv4 ports), then the global IPv6\n"
		"                        addresses (docs/roce.md, \"GID table\")\n"
		"  --exchange-only       exchange addresses and stop, without a QP (checks the\n"
		"                        TCP path to a peer; the peer then fails)\n\n%s",
		rnic_config_usage());
}

/* A number of rc_pingpong's (strtoul base 0) in lo..hi, or a one-line error. */
static int num_arg(const char *opt, const char *s, unsigned long lo, unsigned long hi,
		   unsigned long *v)
{
	char *end;
	errno = 0;
	*v = strtoul(s, &end, 0);
	if (*s == '\0' || *end != '\0' || *s == '-' || errno || *v < lo || *v > hi) {
		fprintf(stderr, "rnic-pingpong: %s: '%s' is not a number %lu..%lu\n",
			opt, s, lo, hi);
		return -EINVAL;
	}
	return 0;
}

static int mtu_arg(const char *s)
{
	unsigned long v;
	char *end;
	errno = 0;
	v = strtoul(s, &end, 0);
	for (int m = IBV_MTU_256; m <= IBV_MTU_4096; m++)
		if (*s != '\0' && *end == '\0' && errno == 0 && v == 128ul << m) {
			o.mtu = (enum ibv_mtu)m;
			return 0;
		}
	fprintf(stderr, "rnic-pingpong: -m: '%s' is not 256, 512, 1024, 2048 or 4096\n", s);
	return -EINVAL;
}

/* rc_pingpong's options after rnic's port options are gone. @return 0,
 * 1 (help printed) or -EINVAL (message printed). */
static int parse_opts(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "port", required_argument, NULL, 'p' },
		{ "ib-dev", required_argument, NULL, 'd' },
		{ "ib-port", required_argument, NULL, 'i' },
		{ "size", required_argument, NULL, 's' },
		{ "rx-depth", required_argument, NULL, 'r' },
		{ "iters", required_argument, NULL, 'n' },
		{ "sl", required_argument, NULL, 'l' },
		{ "events", no_argument, NULL, 'e' },
		{ "gid-idx", required_argument, NULL, 'g' },
		{ "odp", no_argument, NULL, 'o' },
		{ "ts", no_argument, NULL, 't' },
		{ "exchange-only", no_argument, NULL, 'X' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	unsigned long v;
	int c, rc = 0;

	opterr = 0;
	while (rc == 0 && (c = getopt_long(argc, argv, ":p:d:i:s:m:r:n:l:eg:oth", lo, NULL)) != -1) {
		switch (c) {
		case 'p': rc = num_arg("-p", optarg, 1, 65535, &v); o.tcp_port = (uint16_t)v; break;
		case 'd': o.dev = optarg; break;
		case 'i': rc = num_arg("-i", optarg, 1, RNIC_MAX_PORTS, &v); o.ib_port = (unsigned)v; break;
		case 's': rc = num_arg("-s", optarg, 1, 1u << 30, &v); o.size = (unsigned)v; break;
		case 'm': rc = mtu_arg(optarg); break;
		case 'r': rc = num_arg("-r", optarg, 1, RNIC_MAX_QP_WR, &v); o.rx_depth = (unsigned)v; break;
		case 'n': rc = num_arg("-n", optarg, 1, 1u << 30, &v); o.iters = (unsigned)v; break;
		case 'l': rc = num_arg("-l", optarg, 0, 15, &v); o.sl = (unsigned)v; break;
		case 'e': o.events = true; break;
		case 'g': rc = num_arg("-g", optarg, 0, 255, &v); o.gidx = (int)v; break;
		case 'X': o.exchange_only = true; break;
		case 'o': case 't':
			fprintf(stderr, "rnic-pingpong: -%c (%s) is not supported\n", c,
				c == 'o' ? "on-demand paging" : "completion timestamps");
			return -EINVAL;
		case 'h': usage(stdout); return 1;
		case ':':
			fprintf(stderr, "rnic-pingpong: %s needs a value\n", argv[optind - 1]);
			return -EINVAL;
		default:
			if (optopt != 0)
				fprintf(stderr, "rnic-pingpong: unknown option -%c (try --help)\n",
					optopt);
			else
				fprintf(stderr, "rnic-pingpong: unknown argument '%s' (try --help)\n",
					argv[optind - 1]);
			return -EINVAL;
		}
	}
	if (rc != 0)
		return rc;
	if (optind < argc - 1) {
		fprintf(stderr, "rnic-pingpong: one server address at most: '%s' '%s'\n",
			argv[optind], argv[optind + 1]);
		return -EINVAL;
	}
	if (optind == argc - 1) {
		uint8_t plen = 0;
		if (rnic_addr_parse(argv[optind], &o.server, &plen) != 0 ||
		    strchr(argv[optind], '/') != NULL) {
			fprintf(stderr, "rnic-pingpong: '%s' is not an IPv4 or IPv6 address "
				"(A.B.C.D, 2001:db8::2; names are not resolved)\n", argv[optind]);
			return -EINVAL;
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct rnic_config cfg;
	struct pp_ctx pp = { .o = &o };
	char err[RNIC_ERRLEN];

	pp_opts_default(&o);
	rnic_config_init(&cfg);
	if (rnic_config_parse_args(&cfg, &argc, argv, err, sizeof(err)) != 0) {
		fprintf(stderr, "rnic-pingpong: %s\n", err);
		return EXIT_USAGE;
	}
	int rc = parse_opts(argc, argv);
	if (rc != 0)
		return rc > 0 ? 0 : EXIT_USAGE;
	if (cfg.n_ports == 0) {
		fprintf(stderr, "rnic-pingpong: no port: give --vdev SPEC --ip A.B.C.D/LEN "
			"(or --config FILE; try --help)\n");
		return EXIT_USAGE;
	}
	if (o.ib_port > cfg.n_ports) {
		fprintf(stderr, "rnic-pingpong: -i %u: there are %u port(s)\n", o.ib_port,
			cfg.n_ports);
		return EXIT_USAGE;
	}
	srand48((long)getpid() * (long)time(NULL));
	rnic_stop_on_signals(RNIC_STOP_GRACE_MS);
	if (rnic_eal_init(argv[0], &cfg, cfg.workers) != 0)
		return EXIT_FAIL;
	pp.st = rnic_stack_create(&cfg);
	if (pp.st == NULL) {
		fprintf(stderr, "rnic-pingpong: stack: %s\n", rte_strerror(rte_errno));
		return EXIT_FAIL;
	}
	if (rnic_stack_start(pp.st) != 0) {
		rnic_stack_destroy(pp.st);
		return EXIT_FAIL;
	}
	rc = pp_session(&pp);
	pp_ctx_close(&pp);
	rnic_stack_stop(pp.st);
	rnic_stack_destroy(pp.st);
	return rc;
}
