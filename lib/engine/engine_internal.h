/* SPDX-License-Identifier: BSD-3-Clause */
/* Process-wide engine state: the stack registry and the lcore allocator. */
#ifndef RNIC_ENGINE_INTERNAL_H
#define RNIC_ENGINE_INTERNAL_H

#include "engine/stack.h"

#define RNIC_MAX_STACKS 8

/** Give @p st a process-wide id and list it for telemetry. */
int rnic_registry_add(struct rnic_stack *st);
void rnic_registry_remove(struct rnic_stack *st);
/** Live stacks, for telemetry: fills @p out, returns the count. */
unsigned rnic_registry_list(struct rnic_stack **out, unsigned max);

/** A worker lcore no stack uses yet, or RTE_MAX_LCORE. */
unsigned rnic_lcore_alloc(void);
void rnic_lcore_release(unsigned lcore);

/** Sum of the protocols' connection counts. */
uint64_t rnic_stack_connections(const struct rnic_stack *st);

/** Register the /rnic/ telemetry commands (once per process). */
void rnic_telemetry_init(void);

#endif
