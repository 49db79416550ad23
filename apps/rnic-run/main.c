/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rnic-run: run an unmodified verbs program over rnic.
 *
 *   rnic-run [--config FILE] [--vdev SPEC --ip CIDR ...] [--transport iwarp|roce]
 *            [--drive inline|lcores] [port options] -- PROGRAM [ARGS...]
 *
 * Checks the configuration, then executes PROGRAM with librnic-verbs
 * preloaded and the configuration in the environment (RNIC_CONFIG,
 * RNIC_ARGS, RNIC_TRANSPORT, RNIC_DRIVE: docs/dropin.md). The stack
 * starts inside PROGRAM on its first verbs or rdma_cm call.
 */
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rnic/rnic.h"

#define LIB_NAME "librnic-verbs.so.1"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: rnic-run [--config FILE] [--vdev SPEC --ip CIDR ...] [--transport iwarp|roce]\n"
		"                [--drive inline|lcores] [port options] -- PROGRAM [ARGS...]\n"
		"Runs PROGRAM (a libibverbs / librdmacm program: perftest, rping,\n"
		"ibv_rc_pingpong, ...) over rnic, with librnic-verbs preloaded.\n"
		"  --config FILE      an rnic INI file ([port.N], [workers], [eal]...)\n"
		"  --transport T      the first device's transport and rdma_cm's for\n"
		"                     connections PROGRAM makes: iwarp (default) or roce\n"
		"  --drive inline     (default) PROGRAM's polling calls drive the stack,\n"
		"                     a progress thread while it blocks\n"
		"  --drive lcores     the stack's workers run on lcores of their own\n"
		"  --lib PATH         the drop-in library (default: found beside rnic-run)\n"
		"Port options (passed on as RNIC_ARGS):\n%s\n",
		rnic_config_usage());
}

/* The drop-in library: RNIC_VERBS_LIB, the build tree beside this
 * program, or the installed one. */
static int find_lib(char *out, size_t len)
{
	char exe[PATH_MAX];
	const char *env = getenv("RNIC_VERBS_LIB");

	if (env != NULL && *env != '\0') {
		snprintf(out, len, "%s", env);
		return access(out, R_OK) == 0 ? 0 : -ENOENT;
	}
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n > 0) {
		exe[n] = '\0';
		char *dir = dirname(exe);
		/* build tree: build/apps/rnic-run/rnic-run, build/lib/dropin/ */
		snprintf(out, len, "%s/../../lib/dropin/%s", dir, LIB_NAME);
		if (access(out, R_OK) == 0)
			return 0;
	}
	snprintf(out, len, "%s/%s", RNIC_LIBDIR, LIB_NAME);
	return access(out, R_OK) == 0 ? 0 : -ENOENT;
}

static int append(char *buf, size_t len, const char *word)
{
	size_t o = strlen(buf);
	if (strchr(word, ' ') != NULL || strchr(word, '\t') != NULL) {
		fprintf(stderr, "rnic-run: '%s': port options cannot contain spaces\n", word);
		return -EINVAL;
	}
	int w = snprintf(buf + o, len - o, "%s%s", o ? " " : "", word);
	return w < 0 || (size_t)w >= len - o ? -E2BIG : 0;
}

int main(int argc, char **argv)
{
	static char args[4096];
	char lib[PATH_MAX], err[RNIC_ERRLEN];
	const char *config = NULL, *transport = NULL, *drive = NULL, *libopt = NULL;
	int i, sep = -1;

	for (i = 1; i < argc; i++)
		if (strcmp(argv[i], "--") == 0) {
			sep = i;
			break;
		}
	for (i = 1; i < (sep < 0 ? argc : sep); i++) {
		const char *a = argv[i];
		const char *v = i + 1 < (sep < 0 ? argc : sep) ? argv[i + 1] : NULL;
		if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
			usage(stdout);
			return 0;
		}
		const char **slot = strcmp(a, "--config") == 0 ? &config :
				    strcmp(a, "--transport") == 0 ? &transport :
				    strcmp(a, "--drive") == 0 ? &drive :
				    strcmp(a, "--lib") == 0 ? &libopt : NULL;
		if (slot != NULL) {
			if (v == NULL) {
				fprintf(stderr, "rnic-run: %s needs a value\n", a);
				return 2;
			}
			*slot = v;
			i++;
			continue;
		}
		if (append(args, sizeof(args), a) != 0)
			return 2;
	}
	if (sep < 0 || sep + 1 >= argc) {
		fprintf(stderr, "rnic-run: no program: put it after '--'\n");
		usage(stderr);
		return 2;
	}
	if (transport != NULL && strcmp(transport, "iwarp") != 0 && strcmp(transport, "roce") != 0) {
		fprintf(stderr, "rnic-run: --transport %s: expected iwarp or roce\n", transport);
		return 2;
	}
	if (drive != NULL && strcmp(drive, "inline") != 0 && strcmp(drive, "lcores") != 0) {
		fprintf(stderr, "rnic-run: --drive %s: expected inline or lcores\n", drive);
		return 2;
	}

	/* check the configuration here, where a mistake is a clear exit 2,
	 * not a program that finds no device */
	struct rnic_config cfg;
	rnic_config_init(&cfg);
	if (config != NULL && rnic_config_load(&cfg, config, NULL, err, sizeof(err)) != 0) {
		fprintf(stderr, "rnic-run: %s\n", err);
		return 2;
	}
	if (args[0] != '\0') {
		static char copy[sizeof(args)];
		char *av[64];
		int ac = 0;
		snprintf(copy, sizeof(copy), "%s", args);
		av[ac++] = "rnic-run";
		for (char *t = strtok(copy, " "); t != NULL && ac < 63; t = strtok(NULL, " "))
			av[ac++] = t;
		av[ac] = NULL;
		if (rnic_config_parse_args(&cfg, &ac, av, err, sizeof(err)) != 0) {
			fprintf(stderr, "rnic-run: %s\n", err);
			return 2;
		}
		if (ac > 1) {
			fprintf(stderr, "rnic-run: unknown option '%s'\n", av[1]);
			usage(stderr);
			return 2;
		}
	}
	if (cfg.n_ports == 0) {
		fprintf(stderr, "rnic-run: no port: give --config FILE or --vdev SPEC --ip CIDR\n");
		return 2;
	}
	if (libopt != NULL)
		setenv("RNIC_VERBS_LIB", libopt, 1);
	if (find_lib(lib, sizeof(lib)) != 0) {
		fprintf(stderr, "rnic-run: %s not found (--lib PATH or RNIC_VERBS_LIB)\n", LIB_NAME);
		return 2;
	}

	const char *pre = getenv("LD_PRELOAD");
	char preload[PATH_MAX * 2];
	snprintf(preload, sizeof(preload), "%s%s%s", lib, pre && *pre ? ":" : "", pre ? pre : "");
	setenv("LD_PRELOAD", preload, 1);
	if (config != NULL) {
		char abs[PATH_MAX];
		setenv("RNIC_CONFIG", realpath(config, abs) ? abs : config, 1);
	} else {
		unsetenv("RNIC_CONFIG");
	}
	setenv("RNIC_ARGS", args, 1);
	setenv("RNIC_TRANSPORT", transport ? transport : "iwarp", 1);
	setenv("RNIC_DRIVE", drive ? drive : "inline", 1);
	execvp(argv[sep + 1], &argv[sep + 1]);
	fprintf(stderr, "rnic-run: %s: %s\n", argv[sep + 1], strerror(errno));
	return 127;
}
