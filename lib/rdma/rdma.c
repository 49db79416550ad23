/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The RDMA core's protocol module (per-stack STag tables, QP table,
 * transport registry) and the one memory registration path.
 */
#include <errno.h>
#include <stdlib.h>

#include "engine/stack.h"
#include "engine/worker.h"
#include "rdma/rdma.h"
#include "rdma/stag.h"

static int rdma_stack_init(struct rnic_stack *st)
{
	struct rnic_rdma_stack *rs = calloc(1, sizeof(*rs));
	if (rs == NULL)
		return -ENOMEM;
	st->proto[RNIC_PROTO_RDMA] = rs;
	int rc = rnic_stag_table_create(st);
	if (rc != 0) {
		free(rs);
		st->proto[RNIC_PROTO_RDMA] = NULL;
	}
	return rc;
}

static void rdma_stack_fini(struct rnic_stack *st)
{
	struct rnic_rdma_stack *rs = rnic_rdma_st(st);
	if (rs == NULL)
		return;
	rnic_stag_table_free(st);
	free(rs);
	st->proto[RNIC_PROTO_RDMA] = NULL;
}

static int rdma_worker_init(struct rnic_worker *w)
{
	if (w->id != 0)
		return 0;
	/* the STag migration control component */
	return rnic_worker_add_poller(w, "stag_mig", rnic_stag_mig_poll, NULL);
}

const struct rnic_proto_ops rnic_rdma_proto = {
	.name = "rdma",
	.stack_init = rdma_stack_init,
	.stack_fini = rdma_stack_fini,
	.worker_init = rdma_worker_init,
};

int rnic_transport_register(struct rnic_stack *st, enum rnic_transport t,
			    const struct rnic_qp_tops *ops)
{
	struct rnic_rdma_stack *rs = rnic_rdma_st(st);
	if (rs == NULL || ops == NULL || t < RNIC_TRANSPORT_IWARP || t >= RNIC_TRANSPORT_COUNT)
		return -EINVAL;
	if (rs->tops[t] != NULL && rs->tops[t] != ops)
		return -EEXIST;
	rs->tops[t] = ops;
	return 0;
}

const struct rnic_qp_tops *rnic_transport(const struct rnic_stack *st, enum rnic_transport t)
{
	const struct rnic_rdma_stack *rs = rnic_rdma_st(st);
	if (rs == NULL || t < RNIC_TRANSPORT_IWARP || t >= RNIC_TRANSPORT_COUNT)
		return NULL;
	return rs->tops[t];
}

int rnic_mr_register(struct rnic_stack *st, struct rnic_mem *m, void *addr, uint64_t len,
		     uint64_t va, int access, unsigned port, const void *pd, void *owner)
{
	m->kind = RNIC_MEM_MR;
	m->port = (uint8_t)port;
	m->pd = pd;
	m->access = access;
	m->va = va;
	m->len = len;
	m->addr = addr;
	m->owner = owner;
	int rc = rnic_stag_insert(st, m);
	if (rc != 0)
		return rc == -EINVAL ? -EINVAL : -ENOSPC;
	__atomic_store_n(&m->valid, 1, __ATOMIC_RELEASE);
	return 0;
}

void rnic_mr_deregister(struct rnic_stack *st, struct rnic_mem *m)
{
	rnic_stag_remove(st, m);
}
