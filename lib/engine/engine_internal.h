/* SPDX-License-Identifier: BSD-3-Clause */
/* Process-wide engine state: the stack registry and the lcore allocator. */
#ifndef RNIC_ENGINE_INTERNAL_H
#define RNIC_ENGINE_INTERNAL_H

#include <sched.h>

#include "engine/stack.h"

#define RNIC_MAX_STACKS 8

/** Give @p st a process-wide id and list it for telemetry. */
int rnic_registry_add(struct rnic_stack *st);
/** Make a fully built stack visible to telemetry. */
void rnic_registry_publish(struct rnic_stack *st);
/** Hide @p st from telemetry and free its id; waits for running readers. */
void rnic_registry_remove(struct rnic_stack *st);
/** Call @p fn on every published stack under the registry lock.
 *  @return the number of stacks visited. */
unsigned rnic_registry_foreach(void (*fn)(struct rnic_stack *st, void *arg),
			       void *arg);

/** A worker lcore no stack uses yet, or RTE_MAX_LCORE. */
unsigned rnic_lcore_alloc(void);
void rnic_lcore_release(unsigned lcore);

/** Sum of the protocols' connection counts. */
uint64_t rnic_stack_connections(const struct rnic_stack *st);

/** The EAL command line rnic_eal_init() builds (storage for its strings). */
struct rnic_eal_args {
	int argc;
	char *argv[RNIC_MAX_EAL_ARGS + 16];
	char prefix[64];     /* file prefix in use, "" for --in-memory */
	char lcores[1024];   /* our --lcores value */
	bool in_memory_dropped; /* --in-memory given, but no hugepages */
	char zc_mem[24];     /* -m value preallocated for a zero-copy memif */
};

/**
 * Build the EAL arguments for @p cfg: @p huge_free is the free hugepage
 * memory in MiB (rnic_hugepages_free_bytes()), @p cpus the process's
 * affinity set. @return 0, -ENAMETOOLONG, or -ENOMEM (a zero-copy memif
 * port without hugepages).
 */
int rnic_eal_build_args(struct rnic_eal_args *a, const char *prog,
			const struct rnic_config *cfg, unsigned n_workers,
			long huge_free, const cpu_set_t *cpus);

/**
 * Remove the runtime directories under @p base named rnic-PID whose
 * process no longer exists, except @p own (may be NULL). @return how many.
 */
unsigned rnic_eal_sweep_runtime_dirs(const char *base, const char *own);

/** Format the --lcores map for @p n_workers over @p set. @return 0 or -errno. */
int rnic_eal_lcore_map(char *buf, size_t len, const cpu_set_t *set,
		       unsigned n_workers);

/** Register the /rnic/ telemetry commands (once per process). */
void rnic_telemetry_init(void);

#endif
