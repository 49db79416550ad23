/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Memory windows (RFC 5040 section 5.1, IBA 10.6.7): type 1 bound with
 * ibv_bind_mw(), type 2 with IBV_WR_BIND_MW work requests; both are binds
 * queued on the send queue and executed by the QP's worker in order, and
 * invalidated locally (IBV_WR_LOCAL_INV) or by the peer's Send with
 * Invalidate. A window's STag keeps its index; each bind gives it a new key.
 */
#include <errno.h>
#include <stdlib.h>

#include "verbs/verbs.h"

struct ibv_mw *rnic_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type)
{
	if (type != IBV_MW_TYPE_1 && type != IBV_MW_TYPE_2) {
		errno = EINVAL;
		return NULL;
	}
	struct rnic_device *d = dev_of(pd->context);
	struct rnic_mw *mw = calloc(1, sizeof(*mw));
	if (mw == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	mw->m.kind = RNIC_MEM_MW;
	mw->m.mw_type = type == IBV_MW_TYPE_1 ? 1 : 2;
	mw->m.pd = pd;
	mw->m.owner = mw;
	if (rnic_stag_insert(d->st, &mw->m) != 0) {   /* valid stays 0: unbound */
		free(mw);
		errno = ENOMEM;
		return NULL;
	}
	mw->mw.context = pd->context;
	mw->mw.pd = pd;
	mw->mw.rkey = mw->m.stag;
	mw->mw.handle = mw->m.stag;
	mw->mw.type = type;
	__atomic_fetch_add(&pd_of(pd)->users, 1, __ATOMIC_RELAXED);
	return &mw->mw;
}

int rnic_dealloc_mw(struct ibv_mw *imw)
{
	struct rnic_mw *mw = (struct rnic_mw *)imw;
	struct rnic_device *d = dev_of(imw->context);
	mw->m.valid = 0;
	rnic_stag_remove(d->st, &mw->m);
	if (mw->m.parent != NULL)
		__atomic_fetch_sub(&mw->m.parent->binds, 1, __ATOMIC_RELAXED);
	__atomic_fetch_sub(&pd_of(imw->pd)->users, 1, __ATOMIC_RELAXED);
	free(mw);
	return 0;
}

int rnic_bind_mw(struct ibv_qp *qp, struct ibv_mw *mw, struct ibv_mw_bind *b)
{
	if (qp == NULL || mw == NULL || b == NULL || mw->type != IBV_MW_TYPE_1 ||
	    mw->pd != qp->pd)
		return EINVAL;
	uint32_t rkey = ibv_inc_rkey(mw->rkey);
	struct ibv_send_wr wr = { .wr_id = b->wr_id, .opcode = IBV_WR_BIND_MW,
				  .send_flags = b->send_flags }, *bad;
	wr.bind_mw.mw = mw;
	wr.bind_mw.rkey = rkey;
	wr.bind_mw.bind_info = b->bind_info;
	int rc = qp->context->ops.post_send(qp, &wr, &bad);
	if (rc == 0)
		mw->rkey = rkey;   /* the key the bind will give it */
	return rc;
}

int rnic_mw_bind_exec(struct rnic_qp *qp, struct rnic_mw *mw, uint32_t new_rkey,
		      const struct ibv_mw_bind_info *bi)
{
	struct rnic_mem *w = &mw->m;
	if (w->mw_type == 2 && w->valid)
		return IBV_WC_MW_BIND_ERR;   /* a bound type 2 window: invalidate first */
	if (bi->mr == NULL || bi->length == 0) {   /* unbind (type 1) */
		if (w->mw_type == 2)
			return IBV_WC_MW_BIND_ERR;
		w->valid = 0;
		rnic_stag_revoke(qp->dev->st, w, w->stag);
		if (w->parent != NULL)
			__atomic_fetch_sub(&w->parent->binds, 1, __ATOMIC_RELAXED);
		w->parent = NULL;
		w->stag = (w->stag & ~0xffu) | (new_rkey & 0xff);
		return IBV_WC_SUCCESS;
	}
	struct rnic_mr *mr = (struct rnic_mr *)bi->mr;
	struct rnic_mem *m = &mr->m;
	int acc = (int)bi->mw_access_flags;
	if (!m->valid || m->pd != qp->qp.pd || !(m->access & IBV_ACCESS_MW_BIND) ||
	    bi->addr < m->va || bi->addr + bi->length < bi->addr ||
	    bi->addr + bi->length > m->va + m->len ||
	    ((acc & (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC)) &&
	     !(m->access & IBV_ACCESS_LOCAL_WRITE)))
		return IBV_WC_MW_BIND_ERR;
	w->valid = 0;
	rnic_stag_revoke(qp->dev->st, w, w->stag);   /* the old key's copies */
	if (w->parent != NULL)
		__atomic_fetch_sub(&w->parent->binds, 1, __ATOMIC_RELAXED);
	w->parent = m;
	__atomic_fetch_add(&m->binds, 1, __ATOMIC_RELAXED);
	w->va = bi->addr;
	w->len = bi->length;
	w->addr = m->addr + (bi->addr - m->va);
	w->access = acc | IBV_ACCESS_LOCAL_WRITE;
	w->qpn = qp->qp.qp_num;
	w->stag = (w->stag & ~0xffu) | (new_rkey & 0xff);
	__atomic_store_n(&w->valid, 1, __ATOMIC_RELEASE);
	return IBV_WC_SUCCESS;
}
