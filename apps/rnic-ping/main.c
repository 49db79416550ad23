/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rnic-ping: the protocol of rdma-core's rping over rnic's verbs and
 * connection manager, iWARP or RoCE, as rping runs over libibverbs and
 * librdmacm. The client is cm_ping.c; the server is apps/common/
 * rping_server.c, the one rdma-gateway's [responder.ping] runs, which
 * takes a client over either transport (one listener: TCP port and IB CM
 * service ID) with a QP of its request's transport.
 *
 * Message sequence per ping (client C, server S), as rping does it:
 *   C: SEND {start_buf, rkey, size}        (RDMA_READ_ADV)
 *   S: RDMA READ of start_buf into its rdma_buf, then SEND (go ahead)
 *   C: SEND {rdma_buf, rkey, size}         (RDMA_WRITE_ADV)
 *   S: RDMA WRITE of its rdma_buf into the client's rdma_buf, then SEND
 *   C: compares rdma_buf with start_buf (-V), prints (-v), next ping
 * The info record is struct rping_rdma_info: buf (be64), rkey (be32),
 * size (be32). IRD/ORD 1/1 as rping asks through rdma_cm.
 *
 *   rnic-ping -s [-a ADDR] [-p PORT] [-S SIZE] [-v] [-P] PORT-OPTIONS
 *   rnic-ping -c -a ADDR [-p PORT] [-C N] [-S SIZE] [-v] [-V] PORT-OPTIONS
 * Exit status 0 when every ping completed (and validated with -V); the
 * server, when its client (each client, with -P until a signal) went
 * without a failed work request.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_errno.h>

#include "rnic/rnic.h"
#include "rnic/rnic_verbs.h"

#include "cm_ping.h"
#include "rping_server.h"

/* -s: the shared server, one client (or, -P, one after another). */
static int serve(struct rnic_stack *st, const struct cm_ping_opts *o, bool crc)
{
	struct rping_server_opts so = { .port = o->port, .size = o->size, .iwarp = true,
					.roce = true, .crc = crc, .verbose = o->verbose,
					.once = !o->persistent };
	struct rping_server_stats stats = { 0 };
	struct ibv_context *ctx = rnic_open_device(st);
	if (ctx == NULL) {
		fprintf(stderr, "rnic-ping: cannot open the device\n");
		return 1;
	}
	struct rping_srv *srv = rping_server_open(ctx, &so, &stats);
	if (srv == NULL) {
		rnic_close_device(ctx);
		return 1;
	}
	rping_server_run(srv);
	rping_server_close(srv);
	rnic_close_device(ctx);
	return stats.errors ? 1 : 0;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: rnic-ping -s [-a ADDR] [-p PORT] [-C N] [-S SIZE] [-v] [-V] [-P]\n"
		   "       rnic-ping -c -a ADDR [-p PORT] [-C N] [-S SIZE] [-v] [-V]\n"
		   "  -p PORT  TCP port (default 7174, as rping)\n"
		   "  -C N     pings (default: forever)   -S SIZE  ping size (default 64)\n"
		   "  -v       print the data   -V  validate it   -P  persistent server\n"
		   "  --no-crc do not ask for MPA CRC32c (a peer that asks still gets it)\n"
		   "  --transport iwarp|roce  the client's QP (default iwarp); the server\n"
		   "           takes both (one listener: TCP port and IB CM service ID)\n\n%s",
		rnic_config_usage());
}

int main(int argc, char **argv)
{
	struct rnic_config cfg;
	char err[RNIC_ERRLEN];
	bool c = false, s = false, verbose = false, validate = false, persistent = false;
	bool crc = true;
	uint32_t size = 64;
	struct rnic_addr dst = { 0 };
	uint16_t port = RPING_DEFAULT_PORT;
	unsigned count = 0;
	int o;
	enum rnic_transport transport = RNIC_TRANSPORT_IWARP;
	for (int i = 1; i < argc; i++) {   /* rnic's own flags; not rping ones */
		int take = 0;
		if (!strcmp(argv[i], "--no-crc")) {
			crc = false;
			take = 1;
		} else if (!strcmp(argv[i], "--transport") && i + 1 < argc) {
			if (!strcmp(argv[i + 1], "roce"))
				transport = RNIC_TRANSPORT_ROCE;
			else if (strcmp(argv[i + 1], "iwarp") != 0)
				goto bad;
			take = 2;
		}
		if (take) {
			memmove(&argv[i], &argv[i + take], (size_t)(argc - i - take + 1) *
				sizeof(char *));
			argc -= take;
			i--;
		}
	}
	rnic_config_init(&cfg);
	if (rnic_config_parse_args(&cfg, &argc, argv, err, sizeof(err)) != 0) {
		fprintf(stderr, "rnic-ping: %s\n", err);
		return 2;
	}
	while ((o = getopt(argc, argv, "sca:p:C:S:vVPdqI:h")) != -1) {
		char *end;
		switch (o) {
		case 's': s = true; break;
		case 'c': c = true; break;
		case 'a': {
			if (rnic_addr_parse(optarg, &dst, NULL) != 0) {
				fprintf(stderr, "rnic-ping: -a: '%s' is not an IPv4 or IPv6 address\n",
					optarg);
				return 2;
			}
			break;
		}
		case 'p': {
			unsigned long v = strtoul(optarg, &end, 10);
			if (*end || v == 0 || v > 65535) goto bad;
			port = (uint16_t)v;
			break;
		}
		case 'C': count = (unsigned)strtoul(optarg, &end, 10);
			if (*end) goto bad;
			break;
		case 'S': size = (uint32_t)strtoul(optarg, &end, 10);
			if (*end || size < RPING_SERVER_MIN_SIZE || size > RPING_SERVER_MAX_SIZE)
				goto bad;
			break;
		case 'v': verbose = true; break;
		case 'V': validate = true; break;
		case 'P': persistent = true; break;
		case 'd': case 'q': case 'I': break;   /* rping flags without effect here */
		case 'h': usage(stdout); return 0;
		default: goto bad;
		}
	}
	if (s == c || (c && dst.family == 0) || cfg.n_ports == 0 || optind < argc)
		goto bad;

	rnic_stop_on_signals(RNIC_STOP_GRACE_MS);
	if (rnic_eal_init(argv[0], &cfg, cfg.workers) != 0)
		return 1;
	struct rnic_stack *st = rnic_stack_create(&cfg);
	if (st == NULL) {
		fprintf(stderr, "rnic-ping: stack: %s\n", rte_strerror(rte_errno));
		return 1;
	}
	if (rnic_stack_start(st) != 0) {
		rnic_stack_destroy(st);
		return 1;
	}
	const struct cm_ping_opts po = { .server = s, .verbose = verbose, .validate = validate,
					 .persistent = persistent, .crc = crc,
					 .transport = transport, .dst = dst, .port = port,
					 .count = count, .size = size };
	int rc = s ? serve(st, &po, crc) : cm_ping_run(st, &po);
	rnic_stack_stop(st);
	rnic_stack_destroy(st);
	return rc;
bad:
	usage(stderr);
	return 2;
}
