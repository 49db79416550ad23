/* SPDX-License-Identifier: BSD-3-Clause */
/* STag tables, internal layout shared by stag.c and migrate.c. */
#ifndef RNIC_RDMA_STAG_TABLE_H
#define RNIC_RDMA_STAG_TABLE_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "rnic/rnic.h"
#include "rdma/stag.h"

#define STAG_SLOTS (1u << 16)

/* One port's table. */
struct stag_port {
	struct rnic_mem *slot[STAG_SLOTS];   /* STags this port generated */
	uint8_t key[STAG_SLOTS];
	uint32_t free[STAG_SLOTS];
	uint32_t n_free;
	struct rnic_mem *imp[STAG_SLOTS];    /* imports, by STag index */
	struct rnic_stag_port_stats stats;
};

struct rte_ring;

struct rnic_stag_table {
	pthread_mutex_t lock;                /* writers: insert, remove, install, revoke */
	struct rnic_stack *st;
	unsigned n_ports;
	struct stag_port *ports[RNIC_MAX_PORTS];
	struct rnic_mem *retired;            /* revoked imports, freed when safe */
	/* the control component's inbox (MP/SC) and its backlog: queries
	 * held (tests), the inbox overflow, answers the asker's command ring
	 * had no room for; under lock */
	struct rte_ring *migq;
	struct rnic_stag_mig *backlog, **backlog_tail;
	volatile bool has_backlog;
	volatile bool hold;
};

static inline uint32_t stag_index(uint32_t stag)
{
	return (stag >> 8) & (STAG_SLOTS - 1);
}

struct rnic_mem *stag_import_find(const struct stag_port *sp, uint32_t stag);
int rnic_stag_mig_init(struct rnic_stack *st, struct rnic_stag_table *t);
void rnic_stag_mig_fini(struct rnic_stag_table *t);
/* Free retired imports every worker has moved past (all: every one, the
 * workers are stopped). */
void stag_reclaim(struct rnic_stag_table *t, bool all);

#endif
