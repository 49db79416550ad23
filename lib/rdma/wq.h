/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Work queues shared by the verbs layer (producer: application threads)
 * and the transports (consumer: the QP's worker). Fixed arrays of entries
 * with free-running 32-bit indices; size is a power of two.
 *
 *   prod      written by posters (under plock), read by the worker
 *   cons      written by the worker: entries taken by the transport
 *   retired   send queues: entries completed in order (space for posters)
 *
 * A receive queue is consumed whole-entry when a message starts; an SRQ
 * has several consumers (QPs on any worker) and takes clock too.
 */
#ifndef RNIC_RDMA_WQ_H
#define RNIC_RDMA_WQ_H

#include <stdbool.h>
#include <stdint.h>

#include <infiniband/verbs.h>
#include <rte_spinlock.h>

#include "rnic/rnic_verbs.h"

/* A posted receive. */
struct rnic_rwqe {
	uint64_t wr_id;
	uint32_t num_sge;
	uint32_t total;                   /* sum of the SGE lengths */
	struct ibv_sge sge[RNIC_MAX_SGE]; /* validated at post time */
};

struct rnic_rq {
	struct rnic_rwqe *e;
	uint32_t size, mask;
	volatile uint32_t prod;           /* next slot a poster fills */
	volatile uint32_t cons;           /* next slot a message takes */
	rte_spinlock_t plock;             /* posters */
	rte_spinlock_t clock;             /* consumers (SRQ only) */
	bool shared;                      /* an SRQ */
	uint32_t limit;                   /* SRQ limit event threshold (0: off) */
};

/* Take the next posted receive into @p out. @return false when empty. */
static inline bool rnic_rq_take(struct rnic_rq *rq, struct rnic_rwqe *out)
{
	bool ok = false;
	if (rq->shared)
		rte_spinlock_lock(&rq->clock);
	uint32_t c = rq->cons;
	if (c != __atomic_load_n(&rq->prod, __ATOMIC_ACQUIRE)) {
		*out = rq->e[c & rq->mask];
		__atomic_store_n(&rq->cons, c + 1, __ATOMIC_RELEASE);
		ok = true;
	}
	if (rq->shared)
		rte_spinlock_unlock(&rq->clock);
	return ok;
}

/* Entries waiting in @p rq. */
static inline uint32_t rnic_rq_count(const struct rnic_rq *rq)
{
	return __atomic_load_n(&rq->prod, __ATOMIC_ACQUIRE) -
	       __atomic_load_n(&rq->cons, __ATOMIC_ACQUIRE);
}

/* Live transfer counters of a QP: one writer (its worker), read anywhere. */
struct rnic_qp_xfer {
	uint64_t bytes_in;    /* payload placed here (Sends, Writes, Read Responses) */
	uint64_t bytes_out;   /* payload sent (Sends, Writes, Read Responses) */
	uint64_t ops_in;      /* messages completed here: Sends, Writes, Read Requests served */
	uint64_t ops_out;     /* messages sent */
	uint64_t terms_in, terms_out;   /* iWARP Terminates, counted as they happen */
	uint64_t fpdus_packed;          /* iWARP FPDUs sent behind another in a segment */
};

int rnic_rq_init(struct rnic_rq *rq, uint32_t entries, bool shared);
void rnic_rq_fini(struct rnic_rq *rq);

#endif
