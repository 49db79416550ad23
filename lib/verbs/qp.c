/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Queue pairs and shared receive queues: creation, state, posting from
 * any thread, and the worker side (doorbells, hand-off to the transport,
 * in-order retirement into the CQs, flushing).
 *
 * Send queue indices (free-running): retired <= cons <= prod.
 *   [retired, cons)  handed to the transport (or executed locally), may be
 *                    done out of order (a Send completes before an earlier
 *                    Read); completions leave in posting order
 *   [cons, prod)     posted, not yet handed over
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>
#include <rte_malloc.h>

#include "common/objalloc.h"
#include "engine/stack.h"
#include "engine/worker.h"
#include "rdma/qp.h"
#include "rdma/rdma.h"
#include "verbs/verbs.h"

/* --- worker side ----------------------------------------------------------- */

static enum ibv_wc_opcode wc_opcode(enum ibv_wr_opcode op)
{
	switch (op) {
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
		return IBV_WC_RDMA_WRITE;
	case IBV_WR_RDMA_READ:
		return IBV_WC_RDMA_READ;
	case IBV_WR_ATOMIC_CMP_AND_SWP:
		return IBV_WC_COMP_SWAP;
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		return IBV_WC_FETCH_ADD;
	case IBV_WR_LOCAL_INV:
		return IBV_WC_LOCAL_INV;
	case IBV_WR_BIND_MW:
		return IBV_WC_BIND_MW;
	default:
		return IBV_WC_SEND;
	}
}

/* Bound to a connection, or getting one (a transport holds it). */
static bool qp_attached(const struct rnic_qp *qp)
{
	return qp->conn == QP_CONNECTING || qp->conn == QP_CONNECTED;
}

static void qp_error_state(struct rnic_qp *qp)
{
	qp->in_error = true;
	__atomic_store_n(&qp->qp.state, IBV_QPS_ERR, __ATOMIC_RELEASE);
}

static void ring_doorbell(struct rnic_qp *qp);
static void abort_on_worker(struct rnic_worker *w, void *arg);

/* A completion of @p qp found its CQ full (the CQ raised IBV_EVENT_CQ_ERR,
 * rnic_cq_overrun): the QP is fatally in error. It is in ERR at once (the
 * worker hands it no more work, posters see ERR), IBV_EVENT_QP_FATAL is
 * raised once, and its transport is stopped from the verbs poller of its
 * worker: not here, inside the transport's own completion path. */
static void qp_overrun(struct rnic_qp *qp)
{
	qp_error_state(qp);
	if (__atomic_exchange_n(&qp->fatal, true, __ATOMIC_ACQ_REL))
		return;
	struct ibv_async_event ev = { .event_type = IBV_EVENT_QP_FATAL };
	ev.element.qp = &qp->qp;
	rnic_async_raise(qp->dev, &ev);
	if (__atomic_load_n(&qp->w, __ATOMIC_ACQUIRE) != NULL && qp->conn != QP_CLOSED) {
		__atomic_store_n(&qp->fatal_pending, 1, __ATOMIC_RELEASE);
		ring_doorbell(qp);
	}
}

/* Push completions of finished entries at the head, in posting order. The
 * slot is released before its completion is visible: an application that
 * polled a completion may post again at once (IBA 10.8.3). */
static void sq_retire(struct rnic_qp *qp)
{
	struct rnic_cq *cq = cq_of(qp->qp.send_cq);
	uint32_t r = qp->sq_retired;
	while (r != qp->sq_cons) {
		struct rnic_swqe *e = &qp->sq[r & qp->sq_mask];
		if (!e->done)
			break;
		bool report = (e->wr.send_flags & IBV_SEND_SIGNALED) || e->status != IBV_WC_SUCCESS;
		if (e->status != IBV_WC_SUCCESS && e->status != IBV_WC_WR_FLUSH_ERR)
			qp->in_error = true;
		e->done = 0;
		r++;
		if (!report) {   /* unsignaled and fine: nothing to build */
			__atomic_store_n(&qp->sq_retired, r, __ATOMIC_RELEASE);
			continue;
		}
		/* read before the slot is released to the application */
		struct ibv_wc wc = { .wr_id = e->wr_id, .status = e->status,
				     .opcode = e->opcode, .byte_len = e->byte_len,
				     .qp_num = qp->qp.qp_num };
		__atomic_store_n(&qp->sq_retired, r, __ATOMIC_RELEASE);
		if (rnic_cq_push(cq, &wc, false) != 0)
			qp_overrun(qp);
		qp->completions++;
		if (wc.status == IBV_WC_WR_FLUSH_ERR)
			qp->flushed++;
	}
}

static void sq_mark(struct rnic_qp *qp, uint32_t idx, enum ibv_wc_status st, uint32_t len)
{
	struct rnic_swqe *e = &qp->sq[idx & qp->sq_mask];
	e->status = (uint8_t)st;
	e->byte_len = len;
	e->done = 1;
}

/* Flush everything posted and not handed over, and the receive queue. */
static void qp_flush(struct rnic_qp *qp)
{
	uint32_t prod = __atomic_load_n(&qp->sq_prod, __ATOMIC_ACQUIRE);
	for (; qp->sq_cons != prod; qp->sq_cons++)
		sq_mark(qp, qp->sq_cons, IBV_WC_WR_FLUSH_ERR, 0);
	sq_retire(qp);
	if (qp->rqp == &qp->rq) {
		struct rnic_rwqe r;
		struct rnic_cq *cq = cq_of(qp->qp.recv_cq);
		while (rnic_rq_take(&qp->rq, &r)) {
			struct ibv_wc wc = { .wr_id = r.wr_id, .status = IBV_WC_WR_FLUSH_ERR,
					     .opcode = IBV_WC_RECV, .qp_num = qp->qp.qp_num };
			if (rnic_cq_push(cq, &wc, false) != 0)
				qp_overrun(qp);
			qp->completions++;
			qp->flushed++;
		}
	}
}

/* Hand posted work to the transport while it takes it (a connected QP). */
static void sq_post(struct rnic_qp *qp)
{
	uint32_t prod = __atomic_load_n(&qp->sq_prod, __ATOMIC_ACQUIRE);
	while (qp->sq_cons != prod) {
		if (qp->conn != QP_CONNECTED || qp->in_error) {
			if (qp->conn == QP_CLOSED || qp->in_error)
				qp_flush(qp);
			break;   /* not connected yet: wait */
		}
		struct rnic_swqe *e = &qp->sq[qp->sq_cons & qp->sq_mask];
		uint32_t idx = qp->sq_cons;
		e->opcode = (uint8_t)wc_opcode(e->wr.opcode);
		if (e->wr.opcode == IBV_WR_LOCAL_INV) {
			enum rnic_stag_fault se = rnic_stag_invalidate(qp->dev->st,
						e->wr.invalidate_rkey, qp->qp.pd);
			qp->sq_cons++;
			sq_mark(qp, idx, se == RNIC_STAG_OK ? IBV_WC_SUCCESS : IBV_WC_MW_BIND_ERR, 0);
			continue;
		}
		if (e->wr.opcode == IBV_WR_BIND_MW) {
			int st = rnic_mw_bind_exec(qp, e->mw, e->mw_rkey, &e->bind);
			qp->sq_cons++;
			sq_mark(qp, idx, (enum ibv_wc_status)st, 0);
			continue;
		}
		if (!qp->tops->has_room(qp))
			break;   /* tx_room() calls again */
		struct ibv_send_wr wr = e->wr;
		wr.wr_id = idx;
		wr.next = NULL;
		wr.sg_list = e->sge;
		wr.send_flags |= IBV_SEND_SIGNALED;
		qp->sq_cons++;
		int rc = qp->tops->post(qp, &wr);
		if (rc == -ENOMEM) {   /* ORD full: a read completes first */
			qp->sq_cons--;
			break;
		}
		if (rc != 0)   /* closing under us: flushed, as IBA 10.8.3.1 says */
			sq_mark(qp, idx, rc == -ENOTCONN ? IBV_WC_WR_FLUSH_ERR : IBV_WC_GENERAL_ERR, 0);
		if (qp->conn != QP_CONNECTED)
			break;
	}
}

/*
 * Hand posted work to the transport while it takes it. A transport with a
 * kick() (iWARP) queues the whole batch and sends it in one kick (small
 * FPDUs share segments); room that frees up meanwhile (tx_room, which may
 * come from inside the kick) makes the loop go round again instead of
 * recursing.
 */
static void sq_drain(struct rnic_qp *qp)
{
	if (qp->draining) {
		qp->drain_again = true;
		return;
	}
	qp->draining = true;
	do {
		qp->drain_again = false;
		if (qp->conn == QP_CLOSED) {
			/* the connection is gone: whatever was posted since (send
			 * or receive) completes with IBV_WC_WR_FLUSH_ERR, in order */
			qp_flush(qp);
			break;
		}
		sq_post(qp);
		if (qp->tops->kick != NULL && qp->conn == QP_CONNECTED)
			qp->tops->kick(qp);
		sq_retire(qp);
	} while (qp->drain_again);
	qp->draining = false;
}

/* --- what the transports call (rdma/qp.h, through rnic_verbs_qp_upcalls) ---------- */

static void qp_complete(struct rnic_qp *qp, const struct ibv_wc *wc, bool solicited)
{
	if (wc->opcode & IBV_WC_RECV) {
		struct ibv_wc w = *wc;
		w.qp_num = qp->qp.qp_num;
		if (rnic_cq_push(cq_of(qp->qp.recv_cq), &w, solicited) != 0)
			qp_overrun(qp);
		qp->completions++;
		if (wc->status == IBV_WC_WR_FLUSH_ERR)
			qp->flushed++;
		return;
	}
	uint32_t idx = (uint32_t)wc->wr_id;
	struct rnic_swqe *e = &qp->sq[idx & qp->sq_mask];
	e->byte_len = wc->status == IBV_WC_SUCCESS ? wc->byte_len : 0;
	e->status = (uint8_t)wc->status;
	e->done = 1;
	sq_retire(qp);
}

static void qp_tx_room(struct rnic_qp *qp)
{
	sq_drain(qp);
}

/* On the worker: the connection reached RDMA mode. */
static void qp_established(struct rnic_qp *qp)
{
	qp->conn = QP_CONNECTED;
	__atomic_store_n(&qp->qp.state, IBV_QPS_RTS, __ATOMIC_RELEASE);
	sq_drain(qp);
}

static void qp_conn_lost(struct rnic_qp *qp)
{
	qp->conn = QP_CLOSED;
	/* in ERR before the flushed completions, so a consumer that polls one
	 * finds the QP in ERR (IBA 10.3.1: the QP enters Error, then its work
	 * requests complete flushed) */
	qp_error_state(qp);
	qp_flush(qp);
}

static int qp_modify(struct rnic_qp *qp, struct ibv_qp_attr *attr, int mask)
{
	return rnic_modify_qp(&qp->qp, attr, mask);
}

/* The worker of the QP's send CQ's completion handler (docs/verbs.md). */
static struct rnic_worker *qp_home(struct rnic_qp *qp)
{
	struct rnic_device *d = qp->dev;
	return d->st->workers[d->handlers[cq_of(qp->qp.send_cq)->handler].worker];
}

const struct rnic_qp_upcalls rnic_verbs_qp_upcalls = {
	.complete = qp_complete,
	.tx_room = qp_tx_room,
	.established = qp_established,
	.conn_lost = qp_conn_lost,
	.modify = qp_modify,
	.home = qp_home,
};

unsigned rnic_verbs_poll(struct rnic_worker *w, void *arg)
{
	struct rnic_verbs_worker *vw = arg;
	void *q[32];
	unsigned n = rte_ring_sc_dequeue_burst(vw->db, q, RTE_DIM(q), NULL);
	for (unsigned i = 0; i < n; i++) {
		uint32_t qpn = (uint32_t)(uintptr_t)q[i];
		struct rnic_qp *qp = rnic_qp_by_num(w->st, qpn);
		if (qp == NULL || qp->w != w)
			continue;   /* destroyed, or moved */
		/* a full barrier between clearing the doorbell and reading the
		 * SQ (sq_drain): a poster writes the SQ then reads the
		 * doorbell (ring_doorbell); were our clear still unseen when it
		 * reads, and its SQ entry unseen by our read, neither side would
		 * act and the entry would wait for the next post */
		__atomic_exchange_n(&qp->db_pending, 0, __ATOMIC_SEQ_CST);
		if (__atomic_exchange_n(&qp->fatal_pending, 0, __ATOMIC_ACQ_REL) &&
		    qp->conn != QP_CLOSED)
			abort_on_worker(w, qp);   /* its CQ overran: stop the transport */
		sq_drain(qp);
	}
	vw->doorbells += n;
	return n;
}

static void ring_doorbell(struct rnic_qp *qp)
{
	struct rnic_worker *w = __atomic_load_n(&qp->w, __ATOMIC_ACQUIRE);
	if (w == NULL)
		return;   /* not connected: the work waits in the queue */
	if (__atomic_exchange_n(&qp->db_pending, 1, __ATOMIC_ACQ_REL))
		return;   /* already rung */
	struct rnic_verbs_worker *vw = w->proto[RNIC_PROTO_VERBS];
	if (rte_ring_mp_enqueue(vw->db, (void *)(uintptr_t)qp->qp.qp_num) != 0)
		__atomic_store_n(&qp->db_pending, 0, __ATOMIC_RELEASE);
}

/* --- posting ----------------------------------------------------------------- */

/* The QP's limits as libibverbs has them. */
static struct ibv_qp_cap qp_cap(const struct rnic_qp *qp)
{
	return (struct ibv_qp_cap){
		.max_send_wr = qp->max_send_wr,
		.max_recv_wr = qp->max_recv_wr,
		.max_send_sge = qp->max_send_sge,
		.max_recv_sge = qp->max_recv_sge,
		.max_inline_data = RNIC_MAX_INLINE,
	};
}

static int check_send_wr(struct rnic_qp *qp, const struct ibv_send_wr *wr, uint32_t *total)
{
	struct rnic_device *d = qp->dev;
	if (wr->num_sge < 0 || (uint32_t)wr->num_sge > qp->max_send_sge ||
	    (wr->num_sge > 0 && wr->sg_list == NULL))
		return EINVAL;
	*total = 0;
	if (qp->qp.qp_type == IBV_QPT_UD) {
		/* datagrams: Sends (with Immediate) to an address handle */
		if ((wr->opcode != IBV_WR_SEND && wr->opcode != IBV_WR_SEND_WITH_IMM) ||
		    wr->wr.ud.ah == NULL || dev_of(wr->wr.ud.ah->context) != qp->dev ||
		    wr->wr.ud.remote_qpn > 0xffffff)
			return EINVAL;
	}
	switch (wr->opcode) {
	case IBV_WR_SEND:
	case IBV_WR_SEND_WITH_INV:
	case IBV_WR_RDMA_WRITE:
		break;
	case IBV_WR_RDMA_READ:
		/* iWARP Reads land in one sink STag (RFC 5040); RoCE scatters */
		if ((!(qp->tops->caps & RNIC_TP_CAP_READ_SCATTER) && wr->num_sge != 1) ||
		    (wr->send_flags & IBV_SEND_INLINE))
			return EINVAL;
		return rnic_sge_check(d, qp->qp.pd, wr->sg_list, wr->num_sge,
				      IBV_ACCESS_LOCAL_WRITE, total);
	case IBV_WR_LOCAL_INV:
		return wr->num_sge == 0 ? 0 : EINVAL;
	case IBV_WR_BIND_MW:
		return 0;   /* checked by the caller */
	case IBV_WR_SEND_WITH_IMM:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
		break;   /* iWARP: RFC 7306 Immediate Data (docs/iwarp.md) */
	case IBV_WR_ATOMIC_CMP_AND_SWP:
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		/* one 8-byte local buffer; RoCE wants an 8-byte aligned remote
		 * address here, iWARP leaves that check to the responder, which
		 * answers a misaligned one with a Terminate (docs/iwarp.md) */
		if (wr->num_sge != 1 || wr->sg_list[0].length != 8 ||
		    ((qp->tops->caps & RNIC_TP_CAP_ATOMIC_ALIGN) &&
		     (wr->wr.atomic.remote_addr & 7) != 0) ||
		    (wr->send_flags & IBV_SEND_INLINE))
			return EINVAL;
		return rnic_sge_check(d, qp->qp.pd, wr->sg_list, 1, IBV_ACCESS_LOCAL_WRITE, total);
	default:
		return EOPNOTSUPP;
	}
	if (wr->send_flags & IBV_SEND_INLINE) {
		uint64_t sum = 0;
		for (int i = 0; i < wr->num_sge; i++)
			sum += wr->sg_list[i].length;
		if (sum > RNIC_MAX_INLINE)
			return EINVAL;
		*total = (uint32_t)sum;
		return 0;
	}
	return rnic_sge_check(d, qp->qp.pd, wr->sg_list, wr->num_sge, 0, total);
}

int rnic_qp_post_send(struct ibv_qp *iqp, struct ibv_send_wr *wr, struct ibv_send_wr **bad)
{
	struct rnic_qp *qp = qp_of(iqp);
	int rc = 0;
	bool posted = false;
	enum ibv_qp_state state = __atomic_load_n(&iqp->state, __ATOMIC_ACQUIRE);

	if (state != IBV_QPS_RTS && state != IBV_QPS_ERR) {
		*bad = wr;
		return EINVAL;
	}
	rte_spinlock_lock(&qp->sq_lock);
	for (; wr != NULL; wr = wr->next) {
		uint32_t total;
		rc = check_send_wr(qp, wr, &total);
		if (rc == 0 && wr->opcode == IBV_WR_BIND_MW) {
			const struct ibv_mw_bind_info *bi = &wr->bind_mw.bind_info;
			if (wr->bind_mw.mw == NULL ||
			    (wr->bind_mw.rkey >> 8) != (wr->bind_mw.mw->rkey >> 8) ||
			    wr->bind_mw.mw->pd != iqp->pd ||
			    (bi->mr != NULL && bi->mr->pd != iqp->pd))
				rc = EINVAL;
		}
		if (rc != 0)
			break;
		uint32_t p = qp->sq_prod;
		if (p - __atomic_load_n(&qp->sq_retired, __ATOMIC_ACQUIRE) >= qp->max_send_wr) {
			rc = ENOMEM;   /* full: *bad names the first WR not posted */
			__atomic_fetch_add(&qp->sq_full, 1, __ATOMIC_RELAXED);
			break;
		}
		struct rnic_swqe *e = &qp->sq[p & qp->sq_mask];
		e->wr_id = wr->wr_id;
		e->wr = *wr;
		if (qp->sq_sig_all)
			e->wr.send_flags |= IBV_SEND_SIGNALED;
		e->done = 0;
		e->status = IBV_WC_SUCCESS;
		e->byte_len = total;
		if (wr->opcode == IBV_WR_BIND_MW) {
			e->mw = (struct rnic_mw *)wr->bind_mw.mw;
			e->mw_rkey = wr->bind_mw.rkey;
			e->bind = wr->bind_mw.bind_info;
			e->wr.num_sge = 0;
		} else if ((wr->send_flags & IBV_SEND_INLINE) && total > 0) {
			uint32_t off = 0;
			for (int i = 0; i < wr->num_sge; i++) {
				memcpy(e->inl + off, (const void *)(uintptr_t)wr->sg_list[i].addr,
				       wr->sg_list[i].length);
				off += wr->sg_list[i].length;
			}
			e->sge[0] = (struct ibv_sge){ (uint64_t)(uintptr_t)e->inl, total, 0 };
			e->wr.num_sge = 1;
		} else if (wr->num_sge > 0) {
			memcpy(e->sge, wr->sg_list, (size_t)wr->num_sge * sizeof(e->sge[0]));
		}
		e->wr.sg_list = e->sge;
		e->wr.next = NULL;
		__atomic_store_n(&qp->sq_prod, p + 1, __ATOMIC_RELEASE);
		qp->send_wrs++;
		posted = true;
	}
	rte_spinlock_unlock(&qp->sq_lock);
	if (posted) {
		/* run to completion on this thread: hand the work over now
		 * rather than at the next loop's verbs poller */
		struct rnic_worker *w = __atomic_load_n(&qp->w, __ATOMIC_ACQUIRE);
		if (w != NULL && rnic_worker_driven_here(w)) {
			sq_drain(qp);
			rnic_worker_flush(w);
		} else {
			ring_doorbell(qp);
		}
	}
	if (rc != 0)
		*bad = wr;
	return rc;
}

static int post_rq(struct rnic_device *d, struct ibv_pd *pd, struct rnic_rq *rq,
		   uint32_t max_sge, uint32_t max_wr, struct ibv_recv_wr *wr,
		   struct ibv_recv_wr **bad, uint64_t *count, uint64_t *full)
{
	int rc = 0;
	rte_spinlock_lock(&rq->plock);
	for (; wr != NULL; wr = wr->next) {
		uint32_t total;
		if (wr->num_sge < 0 || (uint32_t)wr->num_sge > max_sge ||
		    (wr->num_sge > 0 && wr->sg_list == NULL)) {
			rc = EINVAL;
			break;
		}
		rc = rnic_sge_check(d, pd, wr->sg_list, wr->num_sge, IBV_ACCESS_LOCAL_WRITE, &total);
		if (rc != 0)
			break;
		uint32_t p = rq->prod;
		if (p - __atomic_load_n(&rq->cons, __ATOMIC_ACQUIRE) >= max_wr) {
			rc = ENOMEM;   /* full: *bad names the first WR not posted */
			__atomic_fetch_add(full, 1, __ATOMIC_RELAXED);
			break;
		}
		struct rnic_rwqe *e = &rq->e[p & rq->mask];
		e->wr_id = wr->wr_id;
		e->num_sge = (uint32_t)wr->num_sge;
		e->total = total;
		if (wr->num_sge > 0)
			memcpy(e->sge, wr->sg_list, (size_t)wr->num_sge * sizeof(e->sge[0]));
		__atomic_store_n(&rq->prod, p + 1, __ATOMIC_RELEASE);
		(*count)++;
	}
	rte_spinlock_unlock(&rq->plock);
	if (rc != 0)
		*bad = wr;
	return rc;
}

int rnic_qp_post_recv(struct ibv_qp *iqp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad)
{
	struct rnic_qp *qp = qp_of(iqp);
	enum ibv_qp_state state = __atomic_load_n(&iqp->state, __ATOMIC_ACQUIRE);
	if (state == IBV_QPS_RESET || iqp->srq != NULL) {
		*bad = wr;
		return EINVAL;
	}
	if (state == IBV_QPS_ERR) {   /* flushed at once (IBA 10.8.3.1) */
		int rc = post_rq(qp->dev, iqp->pd, &qp->rq, qp->max_recv_sge,
				 qp->max_recv_wr, wr, bad, &qp->recv_wrs, &qp->rq_full);
		if (__atomic_load_n(&qp->conn, __ATOMIC_ACQUIRE) == QP_CLOSED &&
		    qp->w != NULL)
			ring_doorbell(qp);   /* the worker flushes in order */
		else if (qp->w == NULL)
			qp_flush(qp);
		return rc;
	}
	return post_rq(qp->dev, iqp->pd, &qp->rq, qp->max_recv_sge, qp->max_recv_wr,
		       wr, bad, &qp->recv_wrs, &qp->rq_full);
}

int rnic_srq_post_recv(struct ibv_srq *isrq, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad)
{
	struct rnic_srq *s = srq_of(isrq);
	uint64_t n = 0, full = 0;
	return post_rq(dev_of(isrq->context), isrq->pd, &s->rq, s->attr.max_sge,
		       s->attr.max_wr, wr, bad, &n, &full);
}

/* --- creation and state ---------------------------------------------------------- */

struct ibv_qp *rnic_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *attr)
{
	return rnic_create_qp_transport(pd, attr, RNIC_TRANSPORT_DEFAULT);
}

/* The transport of a new QP (@p t, or the device view's), or NULL with
 * errno set: bad attributes, no such transport, or a QP type it lacks. */
static const struct rnic_qp_tops *create_qp_check(struct ibv_pd *pd,
						  const struct ibv_qp_init_attr *a,
						  enum rnic_transport *t)
{
	struct rnic_device *d = pd ? dev_of(pd->context) : NULL;
	if (d == NULL || a == NULL || a->send_cq == NULL || a->recv_cq == NULL ||
	    (a->qp_type != IBV_QPT_RC && a->qp_type != IBV_QPT_UD) ||
	    a->cap.max_send_wr > RNIC_MAX_QP_WR ||
	    a->cap.max_recv_wr > RNIC_MAX_QP_WR || a->cap.max_send_sge > RNIC_MAX_SGE ||
	    a->cap.max_recv_sge > RNIC_MAX_SGE || a->cap.max_inline_data > RNIC_MAX_INLINE ||
	    dev_of(a->send_cq->context) != d || dev_of(a->recv_cq->context) != d ||
	    (a->srq != NULL && a->srq->pd != pd)) {
		errno = EINVAL;
		return NULL;
	}
	if (*t == RNIC_TRANSPORT_DEFAULT)
		*t = view_of(pd->context)->transport;
	const struct rnic_qp_tops *tops = rnic_transport(d->st, *t);
	/* UD QPs exist on datagram transports only (iWARP has none) */
	if (tops == NULL || (a->qp_type == IBV_QPT_UD && !(tops->caps & RNIC_TP_CAP_UD))) {
		errno = EINVAL;
		return NULL;
	}
	return tops;
}

static void qp_free_queues(struct rnic_qp *qp)
{
	if (qp->qp.srq == NULL)
		rnic_rq_fini(&qp->rq);
	rnic_obj_free(qp->sq);
	rnic_obj_free(qp);
}

/* A QP with its queues and libibverbs fields, not yet numbered. @return
 * NULL (ENOMEM). */
static struct rnic_qp *qp_alloc(struct ibv_pd *pd, const struct ibv_qp_init_attr *a,
				enum rnic_transport t, const struct rnic_qp_tops *tops)
{
	struct rnic_qp *qp = rnic_obj_zalloc(sizeof(*qp));
	if (qp == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	qp->dev = dev_of(pd->context);
	qp->st = qp->dev->st;
	qp->transport = t;
	qp->tops = tops;
	qp->up = &rnic_verbs_qp_upcalls;
	/* the limits were checked above */
	qp->max_send_wr = RTE_MAX(a->cap.max_send_wr, 1u);
	qp->max_recv_wr = a->cap.max_recv_wr;
	qp->max_send_sge = (uint16_t)RTE_MAX(a->cap.max_send_sge, 1u);
	qp->max_recv_sge = (uint16_t)RTE_MAX(a->cap.max_recv_sge, 1u);
	qp->sq_size = rte_align32pow2(qp->max_send_wr);
	qp->sq_mask = qp->sq_size - 1;
	qp->sq_sig_all = a->sq_sig_all;
	qp->qp.srq = a->srq;
	qp->sq = rnic_obj_zalloc((size_t)qp->sq_size * sizeof(qp->sq[0]));
	int rc = qp->sq ? 0 : -ENOMEM;
	if (rc == 0 && a->srq == NULL)
		rc = rnic_rq_init(&qp->rq, qp->max_recv_wr ? qp->max_recv_wr : 1, false);
	if (rc != 0) {
		rnic_obj_free(qp->sq);
		rnic_obj_free(qp);
		errno = ENOMEM;
		return NULL;
	}
	rte_spinlock_init(&qp->sq_lock);
	qp->rqp = a->srq ? &srq_of(a->srq)->rq : &qp->rq;
	if (a->srq != NULL) {
		qp->max_recv_wr = 0;
		qp->max_recv_sge = 0;
	}
	qp->qp.context = pd->context;
	qp->qp.qp_context = a->qp_context;
	qp->qp.pd = pd;
	qp->qp.send_cq = a->send_cq;
	qp->qp.recv_cq = a->recv_cq;
	qp->qp.qp_type = a->qp_type;
	qp->qp.state = IBV_QPS_RESET;
	pthread_mutex_init(&qp->qp.mutex, NULL);
	pthread_cond_init(&qp->qp.cond, NULL);
	return qp;
}

/* Give @p qp a number, its transport state, and publish it in the
 * stack's QP table. @return 0, -ENOSPC (no number free), or the
 * transport's error. */
static int qp_publish(struct rnic_device *d, struct rnic_qp *qp)
{
	struct rnic_rdma_stack *rs = rnic_rdma_st(d->st);
	pthread_mutex_lock(&d->lock);
	uint32_t qpn = 0;
	for (uint32_t i = 0; i < RNIC_MAX_QP - 2; i++) {
		uint32_t c = 2 + (d->next_qpn - 2 + i) % (RNIC_MAX_QP - 2);
		if (rs->qps[c] == NULL) {
			qpn = c;
			break;
		}
	}
	if (qpn == 0) {
		pthread_mutex_unlock(&d->lock);
		return -ENOSPC;
	}
	qp->qp.qp_num = qpn;
	qp->qp.handle = qpn;
	int rc = qp->tops->create != NULL ? qp->tops->create(qp) : 0;
	if (rc != 0) {
		pthread_mutex_unlock(&d->lock);
		return rc;
	}
	d->next_qpn = qpn + 1;
	__atomic_store_n(&rs->qps[qpn], qp, __ATOMIC_RELEASE);
	d->n_qp++;
	pthread_mutex_unlock(&d->lock);
	return 0;
}

struct ibv_qp *rnic_create_qp_transport(struct ibv_pd *pd, struct ibv_qp_init_attr *a,
					enum rnic_transport t)
{
	const struct rnic_qp_tops *tops = create_qp_check(pd, a, &t);
	if (tops == NULL)
		return NULL;
	struct rnic_qp *qp = qp_alloc(pd, a, t, tops);
	if (qp == NULL)
		return NULL;
	int rc = qp_publish(dev_of(pd->context), qp);
	if (rc != 0) {
		qp_free_queues(qp);
		errno = -rc;
		return NULL;
	}
	__atomic_fetch_add(&pd_of(pd)->users, 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(&cq_of(a->send_cq)->users, 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(&cq_of(a->recv_cq)->users, 1, __ATOMIC_RELAXED);
	if (a->srq)
		__atomic_fetch_add(&srq_of(a->srq)->users, 1, __ATOMIC_RELAXED);
	a->cap = qp_cap(qp);
	return &qp->qp;
}

enum rnic_transport rnic_qp_transport(struct ibv_qp *qp)
{
	return qp_of(qp)->transport;
}

static void abort_on_worker(struct rnic_worker *w, void *arg)
{
	(void)w;
	struct rnic_qp *qp = arg;
	qp->tops->abort(qp);   /* may disconnect the QP from inside (iWARP's CM) */
	if (qp->conn != QP_CLOSED)
		qp_conn_lost(qp);
	qp_flush(qp);
}

/* Move a QP to ERR: abort its connection, flush on its worker. */
static void qp_to_error(struct rnic_qp *qp)
{
	struct rnic_worker *w = __atomic_load_n(&qp->w, __ATOMIC_ACQUIRE);
	if (w != NULL) {
		rnic_worker_call_sync(w, abort_on_worker, qp);
	} else {
		qp->conn = QP_CLOSED;
		qp->in_error = true;
		qp_flush(qp);
	}
	__atomic_store_n(&qp->qp.state, IBV_QPS_ERR, __ATOMIC_RELEASE);
}

/* What the transport's abort may call while its QP goes to RESET from a
 * live state: the work it drops completes nowhere (IBA 10.3.1: a QP moved
 * to Reset generates no completions, flushed or other; its queues are just
 * emptied), and the connection it ends is simply gone. */
static void reset_complete(struct rnic_qp *qp, const struct ibv_wc *wc, bool solicited)
{
	(void)qp;
	(void)wc;
	(void)solicited;
}

static void reset_nop(struct rnic_qp *qp)
{
	(void)qp;
}

static void reset_conn_lost(struct rnic_qp *qp)
{
	qp->conn = QP_CLOSED;
}

static const struct rnic_qp_upcalls reset_upcalls = {
	.complete = reset_complete,
	.tx_room = reset_nop,
	.established = reset_nop,
	.conn_lost = reset_conn_lost,
	.modify = qp_modify,
	.home = qp_home,
};

/* On the QP's worker: stop the transport (timers, its queues, the
 * connection) with every completion it would make discarded. */
static void reset_on_worker(struct rnic_worker *w, void *arg)
{
	(void)w;
	struct rnic_qp *qp = arg;
	qp->up = &reset_upcalls;
	qp->tops->abort(qp);
	qp->up = &rnic_verbs_qp_upcalls;
	qp->conn = QP_CLOSED;
}

/* Any state -> RESET (IBA 10.3.1, as rxe allows): a live QP's transport
 * stops first, without completions; then both queues are emptied. A QP in
 * ERR keeps what it had: the flushed completions of its error (posted
 * since and not yet flushed: flushed now, as before). */
static void qp_reset(struct rnic_qp *qp, enum ibv_qp_state cur)
{
	struct rnic_worker *w = __atomic_load_n(&qp->w, __ATOMIC_ACQUIRE);
	if (cur == IBV_QPS_ERR) {
		qp_flush(qp);
	} else if (w != NULL && cur != IBV_QPS_INIT && cur != IBV_QPS_RESET) {
		rnic_worker_call_sync(w, reset_on_worker, qp);
	}
	if (qp->rqp == &qp->rq) {
		struct rnic_rwqe r;
		while (rnic_rq_take(&qp->rq, &r))
			;   /* receives posted and never used: gone, no completion */
	}
	qp->sq_cons = qp->sq_retired = qp->sq_prod;
	qp->in_error = false;
	qp->conn = QP_IDLE;
	__atomic_store_n(&qp->w, NULL, __ATOMIC_RELEASE);
	__atomic_store_n(&qp->qp.state, IBV_QPS_RESET, __ATOMIC_RELEASE);
}

int rnic_modify_qp(struct ibv_qp *iqp, struct ibv_qp_attr *attr, int mask)
{
	struct rnic_qp *qp = qp_of(iqp);
	enum ibv_qp_state cur = __atomic_load_n(&iqp->state, __ATOMIC_ACQUIRE);
	if (attr == NULL)
		return -EINVAL;
	if ((mask & IBV_QP_CUR_STATE) && attr->cur_qp_state != cur)
		return -EINVAL;
	if (mask & IBV_QP_CAP)
		return -EINVAL;   /* no resizing */
	if (qp->tops->modify != NULL) {
		int trc = qp->tops->modify(qp, attr, mask);
		if (trc != RNIC_TOPS_GENERIC)
			return trc;
	}
	if (!(mask & IBV_QP_STATE))
		return 0;        /* attributes of iWARP QPs come from the CM */
	enum ibv_qp_state to = attr->qp_state;
	switch (to) {
	case IBV_QPS_RESET:
		/* not while a QP short of RTR is still connecting (iWARP's CM
		 * attaches it), nor while an ERR QP's connection is not yet
		 * aborted (a CQ overrun's, until its worker stops the
		 * transport): those wait. A live QP (RTR, RTS) stops here. */
		if (qp_attached(qp) &&
		    (cur == IBV_QPS_ERR || cur == IBV_QPS_INIT || cur == IBV_QPS_RESET))
			return -EINVAL;
		qp_reset(qp, cur);
		return 0;
	case IBV_QPS_INIT:
		if (cur != IBV_QPS_RESET && cur != IBV_QPS_INIT)
			return -EINVAL;
		__atomic_store_n(&iqp->state, IBV_QPS_INIT, __ATOMIC_RELEASE);
		return 0;
	case IBV_QPS_ERR:
		qp_to_error(qp);
		return 0;
	default:
		/* RTR and RTS of an iWARP QP come with its connection (rnic_cm) */
		return cur == to ? 0 : -EINVAL;
	}
}

int rnic_query_qp(struct ibv_qp *iqp, struct ibv_qp_attr *attr, int mask,
		  struct ibv_qp_init_attr *init)
{
	struct rnic_qp *qp = qp_of(iqp);
	(void)mask;
	memset(attr, 0, sizeof(*attr));
	attr->qp_state = attr->cur_qp_state = __atomic_load_n(&iqp->state, __ATOMIC_ACQUIRE);
	attr->cap = qp_cap(qp);
	attr->path_mtu = IBV_MTU_1024;
	if (qp->tops->query != NULL)
		qp->tops->query(qp, attr);
	if (init != NULL) {
		memset(init, 0, sizeof(*init));
		init->qp_context = iqp->qp_context;
		init->send_cq = iqp->send_cq;
		init->recv_cq = iqp->recv_cq;
		init->srq = iqp->srq;
		init->cap = qp_cap(qp);
		init->qp_type = iqp->qp_type;
		init->sq_sig_all = qp->sq_sig_all;
	}
	return 0;
}

static void quiesce(struct rnic_worker *w, void *arg)
{
	(void)w;
	(void)arg;
}

int rnic_destroy_qp(struct ibv_qp *iqp)
{
	struct rnic_qp *qp = qp_of(iqp);
	struct rnic_device *d = qp->dev;
	if (qp->cm_id != NULL ||
	    __atomic_load_n(&qp->async_acked, __ATOMIC_ACQUIRE) != qp->async_got)
		return -EBUSY;
	if (qp->w != NULL && qp_attached(qp))
		qp_to_error(qp);
	pthread_mutex_lock(&d->lock);
	__atomic_store_n(&rnic_rdma_st(d->st)->qps[iqp->qp_num], NULL, __ATOMIC_RELEASE);
	d->n_qp--;
	pthread_mutex_unlock(&d->lock);
	/* a doorbell being served may still hold the pointer */
	if (d->st->running)
		for (unsigned i = 0; i < d->st->n_workers; i++)
			rnic_worker_call_sync(d->st->workers[i], quiesce, NULL);
	rnic_async_purge(d, iqp);   /* its QP_FATAL, if still unread */
	__atomic_fetch_sub(&pd_of(iqp->pd)->users, 1, __ATOMIC_RELAXED);
	__atomic_fetch_sub(&cq_of(iqp->send_cq)->users, 1, __ATOMIC_RELAXED);
	__atomic_fetch_sub(&cq_of(iqp->recv_cq)->users, 1, __ATOMIC_RELAXED);
	if (iqp->srq)
		__atomic_fetch_sub(&srq_of(iqp->srq)->users, 1, __ATOMIC_RELAXED);
	if (qp->tops->destroy != NULL)
		qp->tops->destroy(qp);
	pthread_cond_destroy(&iqp->cond);
	pthread_mutex_destroy(&iqp->mutex);
	qp_free_queues(qp);
	return 0;
}

void rnic_qp_stats(struct ibv_qp *iqp, struct rnic_qp_stats *s)
{
	struct rnic_qp *qp = qp_of(iqp);
	memset(s, 0, sizeof(*s));
	s->send_wrs = qp->send_wrs;
	s->recv_wrs = qp->recv_wrs;
	s->completions = qp->completions;
	s->flushed = qp->flushed;
	s->fpdus_in = qp->fpdus_in;
	s->fpdus_out = qp->fpdus_out;
	s->terminates_in = __atomic_load_n(&qp->xfer.terms_in, __ATOMIC_RELAXED);
	s->terminates_out = __atomic_load_n(&qp->xfer.terms_out, __ATOMIC_RELAXED);
	s->bytes_in = __atomic_load_n(&qp->xfer.bytes_in, __ATOMIC_RELAXED);
	s->bytes_out = __atomic_load_n(&qp->xfer.bytes_out, __ATOMIC_RELAXED);
	s->ops_in = __atomic_load_n(&qp->xfer.ops_in, __ATOMIC_RELAXED);
	s->ops_out = __atomic_load_n(&qp->xfer.ops_out, __ATOMIC_RELAXED);
	s->fpdus_packed = __atomic_load_n(&qp->xfer.fpdus_packed, __ATOMIC_RELAXED);
	s->sq_full = __atomic_load_n(&qp->sq_full, __ATOMIC_RELAXED);
	s->rq_full = __atomic_load_n(&qp->rq_full, __ATOMIC_RELAXED);
	s->fatal = __atomic_load_n(&qp->fatal, __ATOMIC_RELAXED);
}

/* --- shared receive queues --------------------------------------------------------- */

struct ibv_srq *rnic_create_srq(struct ibv_pd *pd, struct ibv_srq_init_attr *a)
{
	if (pd == NULL || a == NULL || a->attr.max_wr == 0 || a->attr.max_wr > RNIC_MAX_QP_WR ||
	    a->attr.max_sge > RNIC_MAX_SGE) {
		errno = EINVAL;
		return NULL;
	}
	struct rnic_srq *s = calloc(1, sizeof(*s));
	if (s == NULL || rnic_rq_init(&s->rq, a->attr.max_wr, true) != 0) {
		free(s);
		errno = ENOMEM;
		return NULL;
	}
	s->attr = a->attr;
	if (s->attr.max_sge == 0)
		s->attr.max_sge = 1;
	s->srq.context = pd->context;
	s->srq.srq_context = a->srq_context;
	s->srq.pd = pd;
	pthread_mutex_init(&s->srq.mutex, NULL);
	pthread_cond_init(&s->srq.cond, NULL);
	struct rnic_device *d = dev_of(pd->context);
	pthread_mutex_lock(&d->lock);
	d->n_srq++;
	pthread_mutex_unlock(&d->lock);
	__atomic_fetch_add(&pd_of(pd)->users, 1, __ATOMIC_RELAXED);
	a->attr = s->attr;
	return &s->srq;
}

int rnic_destroy_srq(struct ibv_srq *isrq)
{
	struct rnic_srq *s = srq_of(isrq);
	if (__atomic_load_n(&s->users, __ATOMIC_ACQUIRE) != 0)
		return -EBUSY;
	struct rnic_device *d = dev_of(isrq->context);
	pthread_mutex_lock(&d->lock);
	d->n_srq--;
	pthread_mutex_unlock(&d->lock);
	__atomic_fetch_sub(&pd_of(isrq->pd)->users, 1, __ATOMIC_RELAXED);
	rnic_rq_fini(&s->rq);
	pthread_cond_destroy(&isrq->cond);
	pthread_mutex_destroy(&isrq->mutex);
	free(s);
	return 0;
}
