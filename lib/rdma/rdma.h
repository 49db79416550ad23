/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The RDMA core of a stack (lib/rdma): what the verbs layer and both
 * transports share, below the transports. Per stack: the STag tables
 * (rdma/stag.h), the table of QPs by number, and the transports
 * registered for it. Its protocol module (rnic_rdma_proto) comes before
 * the transports' in lib/protocols.c, so a transport registers
 * from its own stack_init.
 */
#ifndef RNIC_RDMA_RDMA_H
#define RNIC_RDMA_RDMA_H

#include <stddef.h>
#include <stdint.h>

#include "engine/stack.h"
#include "rdma/qp.h"
#include "rdma/stag.h"

/* Per-stack state: st->proto[RNIC_PROTO_RDMA]. */
struct rnic_rdma_stack {
	struct rnic_stag_table *stags;
	const struct rnic_qp_tops *tops[RNIC_TRANSPORT_COUNT];   /* by transport */
	/* QPs by number (0, 1 unused), iWARP and RoCE alike: the consumer
	 * publishes and removes them (release stores); receive paths read
	 * them lock-free, and a QP is freed only after every worker passed
	 * a quiescent point */
	struct rnic_qp *qps[RNIC_MAX_QP];
};

static inline struct rnic_rdma_stack *rnic_rdma_st(const struct rnic_stack *st)
{
	return st->proto[RNIC_PROTO_RDMA];
}

/* A transport's table for @p st (from its stack_init). @return 0, -EINVAL, -EEXIST. */
int rnic_transport_register(struct rnic_stack *st, enum rnic_transport t,
			    const struct rnic_qp_tops *ops);
/* The table of transport @p t on @p st, or NULL (none registered). */
const struct rnic_qp_tops *rnic_transport(const struct rnic_stack *st, enum rnic_transport t);

/* The QP numbered @p qpn on @p st, or NULL. Any thread (acquire load). */
static inline struct rnic_qp *rnic_qp_by_num(const struct rnic_stack *st, uint32_t qpn)
{
	const struct rnic_rdma_stack *rs = rnic_rdma_st(st);
	if (rs == NULL || qpn >= RNIC_MAX_QP)
		return NULL;
	return __atomic_load_n(&rs->qps[qpn], __ATOMIC_ACQUIRE);
}

/*
 * Memory registration, the one path for every consumer: fill @p m for
 * [addr, addr + len) tagged as @p va on port @p port (an index), owned by
 * @p owner (the object embedding @p m) in protection domain @p pd, give it
 * an STag and make it valid. @return 0, -EINVAL (no such port), -ENOSPC.
 */
int rnic_mr_register(struct rnic_stack *st, struct rnic_mem *m, void *addr, uint64_t len,
		     uint64_t va, int access, unsigned port, const void *pd, void *owner);
/* Undo rnic_mr_register (waits out placements under way). */
void rnic_mr_deregister(struct rnic_stack *st, struct rnic_mem *m);

extern const struct rnic_proto_ops rnic_rdma_proto;

#endif
