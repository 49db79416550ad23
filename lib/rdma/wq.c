/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <stdlib.h>

#include <rte_common.h>
#include <rte_malloc.h>

#include "common/objalloc.h"
#include "rdma/wq.h"

int rnic_rq_init(struct rnic_rq *rq, uint32_t entries, bool shared)
{
	uint32_t size = rte_align32pow2(entries ? entries : 1);
	rq->e = rnic_obj_zalloc((size_t)size * sizeof(rq->e[0]));
	if (rq->e == NULL)
		return -ENOMEM;
	rq->size = size;
	rq->mask = size - 1;
	rq->prod = rq->cons = 0;
	rte_spinlock_init(&rq->plock);
	rte_spinlock_init(&rq->clock);
	rq->shared = shared;
	rq->limit = 0;
	return 0;
}

void rnic_rq_fini(struct rnic_rq *rq)
{
	rnic_obj_free(rq->e);
	rq->e = NULL;
}
