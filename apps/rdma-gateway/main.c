/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rdma-gateway: the rnic daemon on bound ports.
 *
 *   rdma-gateway --config FILE
 *   rdma-gateway --vdev SPEC --ip CIDR [--vdev SPEC --ip CIDR ...]
 *
 * Brings up the configured ports and workers, answers ARP and ping, prints
 * a one-line status every status_ms, and exits 0 on SIGINT/SIGTERM after
 * returning every mbuf. Bad CLI or config: one error line, exit status 2.
 * [target.NAME] sections are parsed strictly; serving them is issue 7.
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

#define EXIT_USAGE 2

static bool target_section(const char *name)
{
	return strncmp(name, "target.", 7) == 0 && name[7] != '\0';
}

static void on_signal(int sig)
{
	(void)sig;
	rnic_request_stop();
}

static void usage(FILE *f)
{
	fprintf(f, "usage: rdma-gateway --config FILE\n"
		   "       rdma-gateway --vdev SPEC --ip A.B.C.D/LEN [...]\n\n%s",
		rnic_config_usage());
}

/* Target sections: check their keys now so a typo fails at start. */
static int check_targets(const char *path, char *err, size_t len)
{
	static const char *const keys[] = { "size", "file", "access", "transport",
					    "listen", "allow" };
	FILE *f = fopen(path, "r");
	char line[512], sec[128] = "";
	int lineno = 0;

	if (f == NULL)
		return 0; /* the loader already reported it */
	while (fgets(line, sizeof(line), f)) {
		lineno++;
		char *s = line + strspn(line, " \t");
		if (*s == '[') {
			snprintf(sec, sizeof(sec), "%.*s", (int)strcspn(s + 1, "]"), s + 1);
			if (target_section(sec))
				printf("target %s: configured, not served yet (issue 7)\n",
				       sec + 7);
			continue;
		}
		if (!target_section(sec) || *s == ';' || *s == '#' || *s == '\n')
			continue;
		size_t kl = strcspn(s, " \t=");
		bool ok = false;
		for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
			ok |= strlen(keys[i]) == kl && !strncmp(s, keys[i], kl);
		if (!ok) {
			snprintf(err, len, "%s: [%s] %.*s: unknown key", path, sec,
				 (int)kl, s);
			fclose(f);
			return -EINVAL;
		}
	}
	fclose(f);
	return 0;
}

int main(int argc, char **argv)
{
	struct rnic_config cfg;
	char err[RNIC_ERRLEN] = "";
	const char *path = NULL;

	rnic_config_init(&cfg);
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			usage(stdout);
			return 0;
		}
		if (!strcmp(argv[i], "--config") && i + 1 < argc)
			path = argv[i + 1];
	}
	if (path != NULL) {
		/* load with the target sections allowed, then the rest of argv */
		if (rnic_config_load(&cfg, path, target_section, err, sizeof(err)) ||
		    check_targets(path, err, sizeof(err))) {
			fprintf(stderr, "rdma-gateway: %s\n", err);
			return EXIT_USAGE;
		}
		for (int i = 1; i + 1 < argc; i++)
			if (!strcmp(argv[i], "--config")) {
				memmove(&argv[i], &argv[i + 2], (argc - i - 1) * sizeof(char *));
				argc -= 2;
				break;
			}
	}
	if (rnic_config_parse_args(&cfg, &argc, argv, err, sizeof(err)) != 0) {
		fprintf(stderr, "rdma-gateway: %s\n", err);
		return EXIT_USAGE;
	}
	if (argc > 1) {
		fprintf(stderr, "rdma-gateway: unknown argument '%s' (try --help)\n",
			argv[1]);
		return EXIT_USAGE;
	}
	if (cfg.n_ports == 0) {
		fprintf(stderr, "rdma-gateway: no port configured (--config FILE, "
			"or --vdev SPEC --ip CIDR)\n");
		return EXIT_USAGE;
	}
	if (rnic_eal_init(argv[0], &cfg, cfg.workers) != 0)
		return 1;
	struct rnic_stack *st = rnic_stack_create(&cfg);
	if (st == NULL) {
		fprintf(stderr, "rdma-gateway: cannot start the stack: %s\n",
			rte_strerror(rte_errno));
		return 1;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	if (rnic_stack_start(st) != 0) {
		rnic_stack_destroy(st);
		return 1;
	}
	printf("rdma-gateway: %u port(s), %u worker(s) up\n", cfg.n_ports,
	       cfg.workers);
	fflush(stdout);

	bool tty = isatty(STDOUT_FILENO);
	unsigned interval = cfg.status_interval_ms;
	struct timespec tick = { 0, 50 * 1000000L };
	unsigned waited = 0;
	while (!rnic_stop_requested()) {
		nanosleep(&tick, NULL);
		waited += 50;
		if (interval && waited >= interval) {
			waited = 0;
			if (tty)
				fputs("\r\033[K", stdout);
			rnic_stack_status_line(st, stdout);
			if (!tty)
				fputc('\n', stdout);
			fflush(stdout);
		}
	}
	if (tty)
		fputc('\n', stdout);
	rnic_stack_stop(st);
	struct rnic_stack_stats s;
	rnic_stack_stats(st, &s);
	printf("rdma-gateway: stopping: rx %lu tx %lu drops %lu, %lu mbufs "
	       "outstanding before close\n", (unsigned long)s.rx_pkts,
	       (unsigned long)s.tx_pkts, (unsigned long)s.drops,
	       (unsigned long)s.mbufs_in_use);
	rnic_stack_destroy(st);
	return 0;
}
