/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * EAL initialisation with rnic's defaults, the process-wide stack registry
 * and the worker-lcore allocator.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_spinlock.h>

#include "engine/engine_internal.h"

static bool eal_ready;
static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static struct rnic_stack *registry[RNIC_MAX_STACKS];
static bool registry_live[RNIC_MAX_STACKS];
static rte_spinlock_t lcore_lock = RTE_SPINLOCK_INITIALIZER;
static bool lcore_used[RTE_MAX_LCORE];

static bool has_arg(const struct rnic_config *cfg, const char *prefix)
{
	for (unsigned i = 0; i < cfg->n_eal_args; i++)
		if (strncmp(cfg->eal_args[i], prefix, strlen(prefix)) == 0)
			return true;
	return false;
}

uint64_t rnic_hugepages_free_bytes(void)
{
	FILE *f = fopen("/proc/meminfo", "r");
	char line[128];
	long n = 0, kb = 0;

	if (f == NULL)
		return 0;
	while (fgets(line, sizeof(line), f))
		(void)(sscanf(line, "HugePages_Free: %ld", &n) == 1 ||
		       sscanf(line, "Hugepagesize: %ld kB", &kb) == 1);
	fclose(f);
	return n > 0 && kb > 0 ? (uint64_t)n * (uint64_t)kb * 1024 : 0;
}

/* Append the CPUs of @p set to @p buf as "a-b,c,...". @return chars written. */
static size_t cpu_list(char *buf, size_t len, const int *cpus, int ncpu)
{
	size_t o = 0;

	for (int i = 0; i < ncpu && o < len; ) {
		int j = i;
		while (j + 1 < ncpu && cpus[j + 1] == cpus[j] + 1)
			j++;
		o += (size_t)snprintf(buf + o, len - o, "%s%d", i ? "," : "", cpus[i]);
		if (j > i && o < len)
			o += (size_t)snprintf(buf + o, len - o, "-%d", cpus[j]);
		i = j + 1;
	}
	return o;
}

/*
 * "--lcores" value: the main lcore 0 may float over every CPU of the
 * affinity set; when the set has a CPU for every lcore (the main one and
 * each worker), worker lcore i+1 is pinned to the set's CPU i (3 CPUs, 2
 * workers: "0@(0-2),1@0,2@1"). With fewer CPUs than lcores every lcore
 * floats over the whole set (2 CPUs, 2 workers: "0@(0-1),1@(0-1),
 * 2@(0-1)"): the CPUs are shared anyway, and a worker pinned to a shared
 * CPU waits there for as long as the CPU is busy, while a floating one is
 * moved to the other. On a shared 2-CPU host a thread pinned to CPU 0 was
 * off it for up to 24 s at a time (1.4 s on CPU 1, 0.7 s floating), and a
 * RoCE responder's worker pinned there lost its QPs to the requester's
 * retry limit (docs/roce.md, "Retries, stalls and congestion").
 */
int rnic_eal_lcore_map(char *buf, size_t len, const cpu_set_t *set,
		       unsigned n_workers)
{
	int cpus[CPU_SETSIZE], ncpu = 0;
	size_t o;

	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, set))
			cpus[ncpu++] = c;
	if (ncpu == 0)
		cpus[ncpu++] = 0;
	o = (size_t)snprintf(buf, len, "0@(");
	if (o < len)
		o += cpu_list(buf + o, len - o, cpus, ncpu);
	if (o < len)
		o += (size_t)snprintf(buf + o, len - o, ")");
	bool pin = (unsigned)ncpu >= n_workers + 1;
	for (unsigned w = 0; w < n_workers && o < len; w++) {
		if (pin) {
			o += (size_t)snprintf(buf + o, len - o, ",%u@%d", w + 1, cpus[w]);
			continue;
		}
		o += (size_t)snprintf(buf + o, len - o, ",%u@(", w + 1);
		if (o < len)
			o += cpu_list(buf + o, len - o, cpus, ncpu);
		if (o < len)
			o += (size_t)snprintf(buf + o, len - o, ")");
	}
	return o < len ? 0 : -ENAMETOOLONG;
}

/* The value of EAL option @p opt in cfg (as "--opt V" or "--opt=V"). */
static const char *arg_value(const struct rnic_config *cfg, const char *opt)
{
	size_t n = strlen(opt);

	for (unsigned i = 0; i < cfg->n_eal_args; i++) {
		if (strncmp(cfg->eal_args[i], opt, n) != 0)
			continue;
		if (cfg->eal_args[i][n] == '=')
			return cfg->eal_args[i] + n + 1;
		if (cfg->eal_args[i][n] == '\0' && i + 1 < cfg->n_eal_args)
			return cfg->eal_args[i + 1];
	}
	return NULL;
}

/* Does vdev spec @p spec (net_memifN,key=value,...) ask for zero copy? */
static bool memif_zero_copy(const char *spec)
{
	if (strncmp(spec, "net_memif", 9) != 0)
		return false;
	for (const char *p = strchr(spec, ','); p != NULL; p = strchr(p + 1, ','))
		if (strncmp(p + 1, "zero-copy=yes", 13) == 0 &&
		    (p[14] == ',' || p[14] == '\0'))
			return true;
	return false;
}

/*
 * A zero-copy memif client hands the server its own mbufs: at connect the
 * PMD (DPDK 22.11) walks the memory segments it has then, shares each
 * segment list's file with the server, and closes that file descriptor,
 * which is the EAL's own. From then on the heap can neither grow (growing a
 * single-file segment list needs the descriptor: "RING: Cannot reserve
 * memory" for whatever is allocated after the connection) nor would memory
 * added later be in the regions the server mapped. So the memory is taken
 * at start: one file per segment list (--single-file-segments, which the
 * PMD needs to share it) and RNIC_MEMIF_ZC_MB preallocated, unless the
 * user sized it (-m/--socket-mem).
 */
#define RNIC_MEMIF_ZC_MB 256

int rnic_eal_build_args(struct rnic_eal_args *a, const char *prog,
			const struct rnic_config *cfg, unsigned n_workers,
			long huge_free, const cpu_set_t *cpus)
{
	unsigned n = 0;
	bool zc = false;

	memset(a, 0, sizeof(*a));
	if (n_workers == 0)
		n_workers = 1;
	a->argv[n++] = (char *)(uintptr_t)prog;
	bool no_huge = !has_arg(cfg, "--no-huge") && !has_arg(cfg, "-m") &&
		       !has_arg(cfg, "--socket-mem") && huge_free == 0;
	/* DPDK 22.11 refuses --in-memory with --no-huge (legacy memory): without
	 * hugepages, run from a private file prefix instead */
	a->in_memory_dropped = no_huge && has_arg(cfg, "--in-memory");
	bool in_memory = has_arg(cfg, "--in-memory") && !a->in_memory_dropped;
	if (!has_arg(cfg, "--file-prefix") && !in_memory) {
		snprintf(a->prefix, sizeof(a->prefix), "rnic-%d", (int)getpid());
		a->argv[n++] = "--file-prefix";
		a->argv[n++] = a->prefix;
	} else if (arg_value(cfg, "--file-prefix") != NULL) {
		snprintf(a->prefix, sizeof(a->prefix), "%s",
			 arg_value(cfg, "--file-prefix"));
	}
	bool pci = false;
	for (unsigned i = 0; i < cfg->n_ports; i++)
		pci |= cfg->ports[i].pci[0] != '\0';
	if (!pci && !has_arg(cfg, "-a") && !has_arg(cfg, "--allow"))
		a->argv[n++] = "--no-pci";
	for (unsigned i = 0; i < cfg->n_ports; i++)
		zc |= memif_zero_copy(cfg->ports[i].vdev);
	if (zc && (no_huge || has_arg(cfg, "--no-huge")))
		return -ENOMEM;   /* the shared segments must be hugepage files */
	if (no_huge) {
		a->argv[n++] = "--no-huge";
		a->argv[n++] = "-m";
		a->argv[n++] = "1024";
	}
	if (zc && !has_arg(cfg, "--single-file-segments"))
		a->argv[n++] = "--single-file-segments";
	if (zc && !has_arg(cfg, "-m") && !has_arg(cfg, "--socket-mem")) {
		long mb = huge_free < RNIC_MEMIF_ZC_MB ? huge_free : RNIC_MEMIF_ZC_MB;
		snprintf(a->zc_mem, sizeof(a->zc_mem), "%ld", mb);
		a->argv[n++] = "-m";
		a->argv[n++] = a->zc_mem;
	}
	if (!has_arg(cfg, "-l") && !has_arg(cfg, "--lcores") && !has_arg(cfg, "-c")) {
		if (rnic_eal_lcore_map(a->lcores, sizeof(a->lcores), cpus,
				       n_workers) != 0)
			return -ENAMETOOLONG;
		a->argv[n++] = "--lcores";
		a->argv[n++] = a->lcores;
	}
	if (!has_arg(cfg, "--log-level"))
		a->argv[n++] = "--log-level=*:warning";
	for (unsigned i = 0; i < cfg->n_eal_args; i++)
		if (!a->in_memory_dropped ||
		    strcmp(cfg->eal_args[i], "--in-memory") != 0)
			a->argv[n++] = (char *)(uintptr_t)cfg->eal_args[i];
	a->argv[n] = NULL;
	a->argc = (int)n;
	return 0;
}

/*
 * DPDK 22.11 leaves a process's runtime directory behind when it exits
 * (/var/run/dpdk/PREFIX as root: config, hugepage_info, mp_socket and the
 * memseg fbarray files, about 3 MB on disk). rnic gives each process a
 * prefix of its own (rnic-PID), so every run would leave one: a machine
 * that ran the test suites had 5,238 of them, 16 GB. rnic removes its own
 * directory at exit, and at start the rnic-PID directories of processes
 * that no longer exist (one killed before its exit handler ran).
 */
static char runtime_dir[PATH_MAX];
static pid_t runtime_owner;

static void remove_dir_files(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char path[PATH_MAX];

	if (d == NULL)
		return;
	while ((e = readdir(d)) != NULL) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		if (snprintf(path, sizeof(path), "%s/%s", dir, e->d_name) < (int)sizeof(path))
			unlink(path);
	}
	closedir(d);
	rmdir(dir);
}

/* at exit: only in the process that initialised the EAL (not a fork child) */
static void remove_own_runtime_dir(void)
{
	if (runtime_dir[0] != '\0' && getpid() == runtime_owner)
		remove_dir_files(runtime_dir);
}

/* rnic-PID directories beside @p own whose process is gone. @return how many */
unsigned rnic_eal_sweep_runtime_dirs(const char *base, const char *own)
{
	DIR *d = opendir(base);
	struct dirent *e;
	char path[PATH_MAX];
	unsigned n = 0;

	if (d == NULL)
		return 0;
	while ((e = readdir(d)) != NULL) {
		char *end;
		if (strncmp(e->d_name, "rnic-", 5) != 0)
			continue;
		long pid = strtol(e->d_name + 5, &end, 10);
		if (*end != '\0' || end == e->d_name + 5 || pid <= 0 || pid > INT_MAX)
			continue;
		if (snprintf(path, sizeof(path), "%s/%s", base, e->d_name) >= (int)sizeof(path) ||
		    (own != NULL && strcmp(path, own) == 0))
			continue;
		/* alive, or another user's (EPERM): not ours to touch */
		if (kill((pid_t)pid, 0) == 0 || errno != ESRCH)
			continue;
		remove_dir_files(path);
		n++;
	}
	closedir(d);
	return n;
}

static void runtime_dir_cleanup_init(const char *prefix)
{
	const char *dir = rte_eal_get_runtime_dir();
	char want[32], base[PATH_MAX];

	snprintf(want, sizeof(want), "rnic-%d", (int)getpid());
	if (dir == NULL || strcmp(prefix, want) != 0)
		return;   /* a prefix the user chose: theirs to keep */
	const char *slash = strrchr(dir, '/');
	if (slash == NULL || strcmp(slash + 1, prefix) != 0 ||
	    (size_t)(slash - dir) >= sizeof(base))
		return;
	snprintf(runtime_dir, sizeof(runtime_dir), "%s", dir);
	memcpy(base, dir, (size_t)(slash - dir));
	base[slash - dir] = '\0';
	runtime_owner = getpid();
	atexit(remove_own_runtime_dir);
	rnic_eal_sweep_runtime_dirs(base, runtime_dir);
}

int rnic_eal_init(const char *prog, const struct rnic_config *cfg,
		  unsigned n_workers)
{
	/* static: EAL may keep pointers into argv */
	static struct rnic_eal_args a;
	cpu_set_t set;
	int rc;

	if (eal_ready)
		return 0;
	CPU_ZERO(&set);
	if (sched_getaffinity(0, sizeof(set), &set) != 0)
		CPU_SET(0, &set);
	rc = rnic_eal_build_args(&a, prog, cfg, n_workers,
				 (long)(rnic_hugepages_free_bytes() >> 20), &set);
	if (rc == -ENOMEM) {
		fprintf(stderr, "rnic: memif zero-copy needs hugepages (its memory "
			"is shared with the server as hugepage files): reserve some, "
			"or drop zero-copy=yes\n");
		return rc;
	}
	if (rc != 0) {
		fprintf(stderr, "rnic: EAL arguments: %s\n", strerror(-rc));
		return rc;
	}
	if (a.in_memory_dropped)
		fprintf(stderr, "rnic: no free hugepages: --in-memory replaced by "
			"--no-huge and a private file prefix\n");
	if (rte_eal_init(a.argc, a.argv) < 0) {
		fprintf(stderr, "rnic: EAL init failed: %s\n", rte_strerror(rte_errno));
		return -rte_errno;
	}
	eal_ready = true;
	runtime_dir_cleanup_init(a.prefix);
	/* stderr: a program's stdout may be machine-readable (--json) */
	if (a.prefix[0] != '\0')
		fprintf(stderr, "rnic: EAL file-prefix %s (dpdk-telemetry.py -f %s)\n",
			a.prefix, a.prefix);
	rnic_telemetry_init();
	return 0;
}

/* A stack takes its id (slot) at creation and becomes visible to telemetry
 * only once complete; registry_lock is held while telemetry reads a stack,
 * so a stack cannot be freed under a reader. */
int rnic_registry_add(struct rnic_stack *st)
{
	int rc = -ENOSPC;

	pthread_mutex_lock(&registry_lock);
	for (unsigned i = 0; i < RNIC_MAX_STACKS; i++)
		if (registry[i] == NULL) {
			registry[i] = st;
			registry_live[i] = false;
			st->id = i;
			rc = 0;
			break;
		}
	pthread_mutex_unlock(&registry_lock);
	return rc;
}

void rnic_registry_publish(struct rnic_stack *st)
{
	pthread_mutex_lock(&registry_lock);
	if (st->id < RNIC_MAX_STACKS && registry[st->id] == st)
		registry_live[st->id] = true;
	pthread_mutex_unlock(&registry_lock);
}

void rnic_registry_remove(struct rnic_stack *st)
{
	pthread_mutex_lock(&registry_lock);
	if (st->id < RNIC_MAX_STACKS && registry[st->id] == st) {
		registry[st->id] = NULL;
		registry_live[st->id] = false;
	}
	pthread_mutex_unlock(&registry_lock);
}

unsigned rnic_registry_foreach(void (*fn)(struct rnic_stack *st, void *arg),
			       void *arg)
{
	unsigned n = 0;

	pthread_mutex_lock(&registry_lock);
	for (unsigned i = 0; i < RNIC_MAX_STACKS; i++)
		if (registry[i] != NULL && registry_live[i]) {
			fn(registry[i], arg);
			n++;
		}
	pthread_mutex_unlock(&registry_lock);
	return n;
}

unsigned rnic_lcore_alloc(void)
{
	unsigned lc, found = RTE_MAX_LCORE;
	rte_spinlock_lock(&lcore_lock);
	RTE_LCORE_FOREACH_WORKER(lc) {
		if (!lcore_used[lc]) {
			lcore_used[lc] = true;
			found = lc;
			break;
		}
	}
	rte_spinlock_unlock(&lcore_lock);
	return found;
}

void rnic_lcore_release(unsigned lcore)
{
	rte_spinlock_lock(&lcore_lock);
	if (lcore < RTE_MAX_LCORE)
		lcore_used[lcore] = false;
	rte_spinlock_unlock(&lcore_lock);
}
