/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * EAL initialisation with rnic's defaults, the process-wide stack registry
 * and the worker-lcore allocator.
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_spinlock.h>

#include "engine/engine_internal.h"

static bool eal_ready;
static rte_spinlock_t reg_lock = RTE_SPINLOCK_INITIALIZER;
static struct rnic_stack *registry[RNIC_MAX_STACKS];
static bool lcore_used[RTE_MAX_LCORE];

static bool has_arg(const struct rnic_config *cfg, const char *prefix)
{
	for (unsigned i = 0; i < cfg->n_eal_args; i++)
		if (strncmp(cfg->eal_args[i], prefix, strlen(prefix)) == 0)
			return true;
	return false;
}

/* Free 2 MiB/1 GiB hugepages according to /proc/meminfo. */
static long hugepages_free(void)
{
	FILE *f = fopen("/proc/meminfo", "r");
	char line[128];
	long n = 0;

	if (f == NULL)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "HugePages_Free: %ld", &n) == 1)
			break;
	fclose(f);
	return n;
}

/* "--lcores" value: main lcore 0 on every CPU we may use, then one lcore
 * per worker, round-robin over those CPUs (oversubscribed when needed). */
static void lcore_map(char *buf, size_t len, unsigned n_workers)
{
	cpu_set_t set;
	int cpus[CPU_SETSIZE], ncpu = 0;

	if (sched_getaffinity(0, sizeof(set), &set) == 0)
		for (int c = 0; c < CPU_SETSIZE; c++)
			if (CPU_ISSET(c, &set))
				cpus[ncpu++] = c;
	if (ncpu == 0)
		cpus[ncpu++] = 0;
	size_t o = snprintf(buf, len, "0@(%d-%d)", cpus[0], cpus[ncpu - 1]);
	for (unsigned w = 0; w < n_workers && o < len; w++)
		o += snprintf(buf + o, len - o, ",%u@%d", w + 1,
			      cpus[(w + 1) % ncpu]);
}

int rnic_eal_init(const char *prog, const struct rnic_config *cfg,
		  unsigned n_workers)
{
	char *argv[RNIC_MAX_EAL_ARGS + 16];
	char prefix[64], lcores[512];
	int argc = 0;

	if (eal_ready)
		return 0;
	if (n_workers == 0)
		n_workers = 1;
	argv[argc++] = (char *)(uintptr_t)prog;
	bool own_prefix = !has_arg(cfg, "--file-prefix") && !has_arg(cfg, "--in-memory");
	if (own_prefix) {
		snprintf(prefix, sizeof(prefix), "rnic-%d", (int)getpid());
		argv[argc++] = "--file-prefix";
		argv[argc++] = prefix;
	}
	bool pci = false;
	for (unsigned i = 0; i < cfg->n_ports; i++)
		pci |= cfg->ports[i].pci[0] != '\0';
	if (!pci && !has_arg(cfg, "-a") && !has_arg(cfg, "--allow"))
		argv[argc++] = "--no-pci";
	if (!has_arg(cfg, "--no-huge") && !has_arg(cfg, "-m") &&
	    !has_arg(cfg, "--socket-mem") && hugepages_free() == 0) {
		argv[argc++] = "--no-huge";
		argv[argc++] = "-m";
		argv[argc++] = "1024";
	}
	if (!has_arg(cfg, "-l") && !has_arg(cfg, "--lcores") && !has_arg(cfg, "-c")) {
		lcore_map(lcores, sizeof(lcores), n_workers);
		argv[argc++] = "--lcores";
		argv[argc++] = lcores;
	}
	if (!has_arg(cfg, "--log-level"))
		argv[argc++] = "--log-level=*:warning";
	for (unsigned i = 0; i < cfg->n_eal_args; i++)
		argv[argc++] = (char *)(uintptr_t)cfg->eal_args[i];
	argv[argc] = NULL;

	if (rte_eal_init(argc, argv) < 0) {
		fprintf(stderr, "rnic: EAL init failed: %s\n", rte_strerror(rte_errno));
		return -rte_errno;
	}
	eal_ready = true;
	if (own_prefix)
		printf("rnic: EAL file-prefix %s (dpdk-telemetry.py -f %s)\n",
		       prefix, prefix);
	fflush(stdout);
	rnic_telemetry_init();
	return 0;
}

int rnic_registry_add(struct rnic_stack *st)
{
	int rc = -ENOSPC;
	rte_spinlock_lock(&reg_lock);
	for (unsigned i = 0; i < RNIC_MAX_STACKS; i++)
		if (registry[i] == NULL) {
			registry[i] = st;
			st->id = i;
			rc = 0;
			break;
		}
	rte_spinlock_unlock(&reg_lock);
	return rc;
}

void rnic_registry_remove(struct rnic_stack *st)
{
	rte_spinlock_lock(&reg_lock);
	if (st->id < RNIC_MAX_STACKS && registry[st->id] == st)
		registry[st->id] = NULL;
	rte_spinlock_unlock(&reg_lock);
}

unsigned rnic_registry_list(struct rnic_stack **out, unsigned max)
{
	unsigned n = 0;
	rte_spinlock_lock(&reg_lock);
	for (unsigned i = 0; i < RNIC_MAX_STACKS && n < max; i++)
		if (registry[i])
			out[n++] = registry[i];
	rte_spinlock_unlock(&reg_lock);
	return n;
}

unsigned rnic_lcore_alloc(void)
{
	unsigned lc, found = RTE_MAX_LCORE;
	rte_spinlock_lock(&reg_lock);
	RTE_LCORE_FOREACH_WORKER(lc) {
		if (!lcore_used[lc]) {
			lcore_used[lc] = true;
			found = lc;
			break;
		}
	}
	rte_spinlock_unlock(&reg_lock);
	return found;
}

void rnic_lcore_release(unsigned lcore)
{
	rte_spinlock_lock(&reg_lock);
	if (lcore < RTE_MAX_LCORE)
		lcore_used[lcore] = false;
	rte_spinlock_unlock(&reg_lock);
}
