/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rdma-gateway: the rnic daemon on bound ports.
 *
 *   rdma-gateway --config FILE
 *   rdma-gateway --vdev SPEC --ip CIDR [--vdev SPEC --ip CIDR ...] [options]
 *
 * Sequence: parse the command line and the file (any error: one line on
 * stderr, exit 2); EAL, stack create, start; serve the [target.NAME]
 * sections (serve.c); start the [responder.KIND] sections' servers on
 * threads of their own (respond.c); connection events and a status line
 * every status_ms until SIGINT/SIGTERM; the responders end their runs;
 * stop accepting, disconnect clients gracefully, msync file targets; stop,
 * destroy (every mbuf back), one summary line, exit 0. Runtime failures
 * (EAL, ports, targets, responders) exit 1.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rte_errno.h>

#include "rnic/rnic.h"
#include "responder.h"
#include "serve.h"
#include "target.h"

#define EXIT_USAGE 2

static struct gw_target targets[GW_MAX_TARGETS];
static unsigned n_targets;
static struct gw_responder responders[GW_RESP_KINDS];

static void usage(FILE *f)
{
	fprintf(f, "usage: rdma-gateway --config FILE [options]\n"
		   "       rdma-gateway --vdev SPEC --ip A.B.C.D/LEN [--vdev SPEC --ip ...] [options]\n"
		   "       rdma-gateway --help\n\n"
		   "Brings up rnic on the configured ports, answers ARP and ping, serves the\n"
		   "[target.NAME] memory regions to RDMA clients (rnic-cp), runs the\n"
		   "[responder.perf|ping|pingpong] servers (rnic-perf --client, rping -c,\n"
		   "ibv_rc_pingpong), prints a status line every [gateway] status_ms, and\n"
		   "exits on SIGINT or SIGTERM.\n"
		   "The file is loaded before the other options, which add to it.\n\n%s",
		rnic_config_usage());
}

static int fail(const char *msg)
{
	fprintf(stderr, "rdma-gateway: %s\n", msg);
	return EXIT_USAGE;
}

/* The sections the gateway adds to rnic's: [target.NAME], [responder.KIND]. */
static bool gw_section(const char *name)
{
	return gw_target_section(name) || gw_responder_section(name);
}

/*
 * Take every --config FILE / --config=FILE out of argv and load it, with the
 * gateway's [target.NAME] and [responder.KIND] sections allowed
 * (rnic_config_parse_args() loads files without them). @return 0 or
 * -EINVAL with the error in @p err.
 */
static int load_config_args(struct rnic_config *cfg, int *argc, char **argv,
			    char *err, size_t errlen)
{
	int out = 1;

	for (int i = 1; i < *argc; i++) {
		const char *path = NULL;
		if (!strcmp(argv[i], "--")) {
			while (i < *argc)
				argv[out++] = argv[i++];
			break;
		}
		if (!strncmp(argv[i], "--config=", 9)) {
			path = argv[i] + 9;
		} else if (!strcmp(argv[i], "--config")) {
			if (i + 1 == *argc) {
				snprintf(err, errlen, "--config: needs a value");
				return -EINVAL;
			}
			path = argv[++i];
		} else {
			argv[out++] = argv[i];
			continue;
		}
		if (rnic_config_load(cfg, path, gw_section, err, errlen) != 0 ||
		    gw_responders_load(path, responders, err, errlen) != 0)
			return -EINVAL;
		int n = gw_targets_load(path, targets + n_targets, GW_MAX_TARGETS - n_targets,
					err, errlen);
		if (n < 0)
			return -EINVAL;
		n_targets += (unsigned)n;
	}
	*argc = out;
	argv[out] = NULL;
	return gw_responders_check(responders, targets, n_targets, err, errlen);
}

static bool wants_help(int argc, char **argv)
{
	for (int i = 1; i < argc && strcmp(argv[i], "--"); i++)
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h"))
			return true;
	return false;
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* The main thread's job while workers run: a status line every interval
 * (rewritten in place on a terminal, one line each otherwise). */
static void status_loop(const struct rnic_stack *st, unsigned interval_ms)
{
	bool tty = isatty(STDOUT_FILENO);
	/* without status lines the telemetry's figures refresh every second */
	unsigned period = interval_ms ? interval_ms : 1000;
	uint64_t next = now_ms() + period;

	gw_serve_refresh(now_ms());
	while (!rnic_stop_requested()) {
		/* short waits: connection events, and a signal ends them early */
		gw_serve_poll(50);
		if (now_ms() < next)
			continue;
		next += period;
		if (next <= now_ms())
			next = now_ms() + period;   /* we were stalled: no burst */
		gw_serve_refresh(now_ms());
		if (interval_ms == 0)
			continue;
		fputs(tty ? "\r" : "", stdout);
		rnic_stack_status_line(st, stdout);
		gw_serve_status(stdout);
		gw_responders_status(stdout);
		fputs(tty ? "\033[K" : "\n", stdout);
		fflush(stdout);
	}
	if (tty && interval_ms != 0)
		fputc('\n', stdout);
}

int main(int argc, char **argv)
{
	struct rnic_config cfg;
	char err[RNIC_ERRLEN] = "";

	if (wants_help(argc, argv)) {
		usage(stdout);
		return 0;
	}
	rnic_config_init(&cfg);
	if (load_config_args(&cfg, &argc, argv, err, sizeof(err)) != 0 ||
	    rnic_config_parse_args(&cfg, &argc, argv, err, sizeof(err)) != 0)
		return fail(err);
	if (argc > 1) {
		snprintf(err, sizeof(err), "unknown argument '%s' (try --help)", argv[1]);
		return fail(err);
	}
	if (cfg.n_ports == 0)
		return fail("no port configured (--config FILE, or --vdev SPEC --ip CIDR)");
	rnic_stop_on_signals(RNIC_STOP_GRACE_MS);
	if (rnic_eal_init(argv[0], &cfg, cfg.workers) != 0)
		return 1;
	struct rnic_stack *st = rnic_stack_create(&cfg);
	if (st == NULL) {
		fprintf(stderr, "rdma-gateway: cannot create the stack: %s\n",
			rte_strerror(rte_errno));
		return 1;
	}
	int rc = rnic_stack_start(st);
	if (rc != 0) {
		fprintf(stderr, "rdma-gateway: cannot start the workers: %s\n", strerror(-rc));
		rnic_stack_destroy(st);
		return 1;
	}
	printf("rdma-gateway: %u port(s), %u worker(s) up%s%s\n", cfg.n_ports,
	       rnic_stack_workers(st), cfg.path[0] ? ", config " : "", cfg.path);
	fflush(stdout);

	srand48((long)getpid() ^ (long)time(NULL));   /* the responders' first PSNs */
	if (gw_serve_start(st, targets, n_targets, cfg.listen_backlog, err, sizeof(err)) != 0 ||
	    gw_responders_start(st, responders, err, sizeof(err)) != 0) {
		fprintf(stderr, "rdma-gateway: %s\n", err);
		gw_serve_stop();
		rnic_stack_stop(st);
		rnic_stack_destroy(st);
		return 1;
	}
	fflush(stdout);
	uint64_t t0 = now_ms();
	status_loop(st, cfg.status_interval_ms);
	/* the responders end their runs (the stop request); then stop
	 * accepting, let clients go gracefully, sync file targets */
	gw_responders_stop();
	int serve_rc = gw_serve_stop();
	rnic_stack_stop(st);
	struct rnic_stack_stats s;
	rnic_stack_stats(st, &s);
	rnic_stack_destroy(st);
	printf("rdma-gateway: stopped after %.1f s: rx %lu tx %lu drops %lu arp %lu/%lu "
	       "icmp %lu; %lu mbufs were out when the workers stopped\n",
	       (double)(now_ms() - t0) / 1000, (unsigned long)s.rx_pkts,
	       (unsigned long)s.tx_pkts, (unsigned long)s.drops,
	       (unsigned long)s.arp_requests, (unsigned long)s.arp_replies,
	       (unsigned long)s.icmp_echo, (unsigned long)s.mbufs_in_use);
	return serve_rc == 0 ? 0 : 1;
}
