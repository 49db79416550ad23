/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * RoCEv2 responder (IBTA 9.7.5, 9.7.7 and the responder of rxe): request
 * packets are checked in a fixed order of named states, each a small
 * function returning the next state; every failure maps to its NAK in one
 * place (resp_error()).
 *
 *   CHECK_PSN       expected, duplicate (DUPLICATE) or ahead (NAK_SEQ)
 *   CHECK_OP_SEQ    FIRST/MIDDLE/LAST order inside a message
 *   CHECK_OP_VALID  the QP's access flags allow the operation
 *   CHECK_RESOURCE  a receive WQE for a Send or Write with Immediate (RNR
 *                   NAK when none); room for a Read or atomic (IRD)
 *   CHECK_LENGTH    payload against the path MTU, the receive, the RETH
 *   CHECK_RKEY      R_Key, PD, rights and bounds of a RETH or AtomicETH,
 *                   at the port the packet arrived on (MIGRATE: the R_Key
 *                   is another port's; the control component is asked and
 *                   the packet, with every request behind it, is parked)
 *   EXECUTE         place, queue the Read Responses, do the atomic
 *   COMPLETE        receive completion at the end of a message, PSN/MSN
 *   ACK             AckReq: an ACK is owed (sent once per poll: coalesced)
 *
 * Read Responses and Atomic ACKs are queued as jobs and leave, in PSN
 * order, from the worker's poller (roce_resp_pump()); an owed ACK waits
 * behind them, since an ACK acknowledges every PSN before it.
 */
#include <string.h>

#include <rte_malloc.h>

#include "engine/stack.h"
#include "roce/psn.h"
#include "roce/roce.h"

enum resp_state {
	RESP_CHECK_PSN,
	RESP_CHECK_OP_SEQ,
	RESP_CHECK_OP_VALID,
	RESP_CHECK_RESOURCE,
	RESP_CHECK_LENGTH,
	RESP_CHECK_RKEY,
	RESP_EXECUTE,
	RESP_COMPLETE,
	RESP_ACK,
	RESP_DUPLICATE,
	RESP_NAK_SEQ,
	RESP_RNR,
	RESP_ERR_INV_REQ,      /* NAK invalid request, QP to ERR */
	RESP_ERR_LENGTH,       /* the same, the receive fails with LOC_LEN_ERR */
	RESP_ERR_ACCESS,       /* NAK remote access error, QP to ERR */
	RESP_ERR_OP,           /* NAK remote operational error, QP to ERR */
	RESP_MIGRATE,          /* the R_Key is another port's: ask, park */
	RESP_DONE,
};

struct resp_ctx {
	struct roce_qp *rq;
	const struct rnic_roce_pkt *pkt;
	const struct rte_mbuf *m;
	uint32_t pay_off;
	unsigned port;         /* where the packet arrived */
	uint32_t rkey;         /* CHECK_RKEY: the R_Key checked */
	uint32_t psn;
	uint8_t *dst;          /* CHECK_RKEY: host address of the RETH/AtomicETH VA */
	uint32_t dma_len;
};

void roce_resp_init(struct roce_qp *rq, uint32_t rq_psn)
{
	struct roce_resp *s = &rq->resp;
	struct roce_job *jobs = s->jobs;
	struct roce_atomic_rec *atomics = s->atomics;
	struct roce_read_rec *reads = s->reads;
	memset(s, 0, sizeof(*s));
	s->jobs = jobs;
	s->atomics = atomics;
	s->reads = reads;
	if (atomics != NULL)
		memset(atomics, 0, ROCE_ATOMIC_CACHE * sizeof(atomics[0]));
	if (reads != NULL)
		memset(reads, 0, ROCE_READ_CACHE * sizeof(reads[0]));
	s->epsn = rq_psn & RNIC_PSN_MASK;
	s->prev_op = RNIC_ROCE_OP_NONE;
}

/* The jobs and the atomic cache, allocated on first use: most QPs never
 * serve a Read or an atomic. @return false when there is no memory
 * (counted; the request is dropped and the requester asks again). */
static bool roce_resp_res(struct roce_qp *rq)
{
	struct roce_resp *s = &rq->resp;
	if (s->jobs != NULL)
		return true;
	size_t jb = ROCE_JOBS * sizeof(s->jobs[0]);
	size_t ab = ROCE_ATOMIC_CACHE * sizeof(s->atomics[0]);
	uint8_t *b = rte_zmalloc("roce_resp_jobs", jb + ab + ROCE_READ_CACHE * sizeof(s->reads[0]),
				 RTE_CACHE_LINE_SIZE);
	if (b == NULL) {
		rq->rw->c.resp_no_mem++;
		return false;
	}
	s->jobs = (struct roce_job *)b;
	s->atomics = (struct roce_atomic_rec *)(b + jb);
	s->reads = (struct roce_read_rec *)(b + jb + ab);
	return true;
}

void roce_resp_fini(struct roce_qp *rq)
{
	rte_free(rq->resp.jobs);   /* the atomic cache is in the same block */
	rq->resp.jobs = NULL;
	rq->resp.atomics = NULL;
	rq->resp.reads = NULL;
	rte_free(rq->park);
	rq->park = NULL;
}

static uint32_t npkts_of(uint32_t len, uint32_t pmtu)
{
	return len == 0 ? 1 : (len + pmtu - 1) / pmtu;
}

/* --- ACK and NAK ------------------------------------------------------------- */

/* Send an ACKNOWLEDGE with @p syndrome for @p psn at once. @return false
 * when no mbuf was free. */
static bool send_ack(struct roce_qp *rq, uint8_t syndrome, uint32_t psn)
{
	uint8_t *hdr, *pay;
	struct rte_mbuf *m = roce_pkt_new(rq, RNIC_ROCE_OP_RC_ACKNOWLEDGE, psn, false, false,
					  0, &hdr, &pay);
	if (m == NULL)
		return false;
	rnic_roce_aeth_set((struct rnic_roce_aeth *)hdr, syndrome, rq->resp.msn);
	roce_pkt_send(rq, m);
	return true;
}

static void send_nak(struct roce_qp *rq, enum rnic_roce_nak_code code, uint32_t psn)
{
	send_ack(rq, rnic_roce_syndrome_nak(code), psn);
}

/* --- the checks -------------------------------------------------------------- */

static enum resp_state check_psn(struct resp_ctx *c)
{
	struct roce_resp *s = &c->rq->resp;
	int32_t d = rnic_psn_diff(c->psn, s->epsn);
	if (d == 0)
		return RESP_CHECK_OP_SEQ;
	if (d < 0) {
		c->rq->rw->c.duplicates++;
		roce_trace(c->rq, TR_RESP_DUP, c->psn);
		return RESP_DUPLICATE;
	}
	c->rq->rw->c.out_of_window++;
	if (s->nak_sent)
		roce_trace(c->rq, TR_RESP_SILENT, c->psn);
	return s->nak_sent ? RESP_DONE : RESP_NAK_SEQ;
}

static enum resp_state check_op_seq(struct resp_ctx *c)
{
	return rnic_roce_op_seq_ok((enum rnic_roce_opcode)c->rq->resp.prev_op, c->pkt->opcode)
		? RESP_CHECK_OP_VALID : RESP_ERR_INV_REQ;
}

/* The access right a request needs on the QP and on its R_Key. */
static int needed_access(uint32_t flags)
{
	if (flags & RNIC_ROCE_OPF_WRITE)
		return IBV_ACCESS_REMOTE_WRITE;
	if (flags & RNIC_ROCE_OPF_READ)
		return IBV_ACCESS_REMOTE_READ;
	if (flags & RNIC_ROCE_OPF_ATOMIC)
		return IBV_ACCESS_REMOTE_ATOMIC;
	return 0;
}

static enum resp_state check_op_valid(struct resp_ctx *c)
{
	int need = needed_access(c->pkt->flags);
	return (c->rq->access & need) == need ? RESP_CHECK_RESOURCE : RESP_ERR_INV_REQ;
}

static enum resp_state check_resource(struct resp_ctx *c)
{
	struct roce_qp *rq = c->rq;
	struct roce_resp *s = &rq->resp;
	uint32_t f = c->pkt->flags;
	bool takes_wqe = (f & RNIC_ROCE_OPF_RECV_WQE) &&
			 ((f & RNIC_ROCE_OPF_SEND) ? (f & RNIC_ROCE_OPF_START) : (f & RNIC_ROCE_OPF_END));
	if (takes_wqe && !s->have_rwqe) {
		if (!rnic_rq_take(rq->qp->rqp, &s->rwqe))
			return RESP_RNR;
		s->have_rwqe = true;
		s->recv_off = 0;
	}
	if (f & (RNIC_ROCE_OPF_READ | RNIC_ROCE_OPF_ATOMIC)) {
		uint32_t ird = rq->max_dest_rd_atomic ? rq->max_dest_rd_atomic : 1;
		if (s->jobs_new >= ird)
			return RESP_ERR_INV_REQ;   /* more than IRD outstanding */
		if (!roce_resp_res(rq))
			return RESP_DONE;
	}
	return RESP_CHECK_LENGTH;
}

static enum resp_state check_length(struct resp_ctx *c)
{
	struct roce_qp *rq = c->rq;
	struct roce_resp *s = &rq->resp;
	uint32_t f = c->pkt->flags, len = c->pkt->paylen;
	if (len > rq->pmtu || (!(f & RNIC_ROCE_OPF_END) && len != rq->pmtu))
		return RESP_ERR_INV_REQ;
	if (f & RNIC_ROCE_OPF_SEND)
		return s->recv_off + len > s->rwqe.total ? RESP_ERR_LENGTH : RESP_EXECUTE;
	if (f & RNIC_ROCE_OPF_WRITE) {
		const struct rnic_roce_reth *reth = rnic_roce_pkt_reth(c->pkt);
		if (reth != NULL) {
			c->dma_len = rnic_roce_reth_len(reth);
			if (c->dma_len > (1u << 31)) {   /* IBA: a message is at most 2^31 */
				rq->rw->c.bad_dma_len++;
				return RESP_ERR_INV_REQ;
			}
			bool only = (f & RNIC_ROCE_OPF_ONLY) != 0;
			if (only ? len != c->dma_len : len >= c->dma_len)
				return RESP_ERR_INV_REQ;
			return RESP_CHECK_RKEY;
		}
		if ((f & RNIC_ROCE_OPF_END) ? len != s->wr_left : len >= s->wr_left)
			return RESP_ERR_INV_REQ;
		return RESP_CHECK_RKEY;   /* the region may be gone since FIRST */
	}
	if (f & RNIC_ROCE_OPF_READ) {
		c->dma_len = rnic_roce_reth_len(rnic_roce_pkt_reth(c->pkt));
		if (c->dma_len > (1u << 31)) {
			rq->rw->c.bad_dma_len++;
			return RESP_ERR_INV_REQ;
		}
		return RESP_CHECK_RKEY;
	}
	c->dma_len = sizeof(uint64_t);   /* atomics */
	return RESP_CHECK_RKEY;
}

static enum resp_state check_rkey(struct resp_ctx *c)
{
	struct roce_qp *rq = c->rq;
	uint64_t va = 0;
	uint32_t rkey = 0;
	enum rnic_stag_fault err;
	if (!rnic_roce_pkt_remote(c->pkt, &va, &rkey)) {
		/* WRITE MIDDLE/LAST: the rest of the Write's range, checked again
		 * for this packet's bytes (memory deregistered mid-Write must not
		 * be written) */
		va = rq->resp.wr_va;
		rkey = rq->resp.wr_rkey;
		c->dma_len = c->pkt->paylen;
	}
	if ((c->pkt->flags & RNIC_ROCE_OPF_ATOMIC) && (va & 7) != 0)
		return RESP_ERR_INV_REQ;   /* misaligned atomic (IBA 9.4.5) */
	if (c->dma_len == 0) {
		c->dst = NULL;             /* no R_Key check for 0 bytes (IBA 9.7.5.1.3) */
		return RESP_EXECUTE;
	}
	c->rkey = rkey;
	c->dst = rnic_stag_check_at(rq->qp->st, c->port, rkey, rq->qp->qp.pd,
				    rq->qp->qp.qp_num, va, c->dma_len,
				    needed_access(c->pkt->flags), &err);
	if (c->dst == NULL && err == RNIC_STAG_MIGRATE) {
		if (!rq->mig_answered)
			return RESP_MIGRATE;
		rq->rw->c.mig_rejects++;   /* the owner refused it */
	}
	return c->dst != NULL ? RESP_EXECUTE : RESP_ERR_ACCESS;
}

/* --- execution ------------------------------------------------------------------ */

static void queue_job(struct roce_resp *s, const struct roce_job *j)
{
	s->jobs[s->job_tail++ % ROCE_JOBS] = *j;
	if (!j->dup)
		s->jobs_new++;
}

static uint64_t do_atomic(const struct rnic_roce_pkt *pkt, uint8_t *dst)
{
	const struct rnic_roce_atmeth *a = rnic_roce_pkt_atmeth(pkt);
	uint64_t *p = (uint64_t *)(void *)dst;
	if (pkt->opcode == RNIC_ROCE_OP_RC_FETCH_ADD)
		return __atomic_fetch_add(p, rnic_roce_atmeth_swap_add(a), __ATOMIC_SEQ_CST);
	uint64_t expect = rnic_roce_atmeth_compare(a);
	__atomic_compare_exchange_n(p, &expect, rnic_roce_atmeth_swap_add(a), false,
				    __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
	return expect;   /* the original value either way */
}

static enum resp_state execute(struct resp_ctx *c)
{
	struct roce_qp *rq = c->rq;
	struct roce_resp *s = &rq->resp;
	uint32_t f = c->pkt->flags, len = c->pkt->paylen;
	if (f & RNIC_ROCE_OPF_SEND) {
		roce_sgl_copy_in(s->rwqe.sge, s->rwqe.num_sge, s->recv_off, c->m, c->pay_off, len);
		s->recv_off += len;
	} else if (f & RNIC_ROCE_OPF_WRITE) {
		const struct rnic_roce_reth *reth = rnic_roce_pkt_reth(c->pkt);
		if (reth != NULL) {
			s->wr_va = rnic_roce_reth_va(reth);
			s->wr_rkey = rnic_roce_reth_rkey(reth);
			s->wr_left = s->wr_len = c->dma_len;
		}
		if (len > 0)
			roce_mbuf_copy(c->m, c->pay_off, c->dst, len);
		s->wr_va += len;
		s->wr_left -= len;
	} else if (f & RNIC_ROCE_OPF_READ) {
		const struct rnic_roce_reth *reth = rnic_roce_pkt_reth(c->pkt);
		struct roce_job j = { .kind = JOB_READ, .psn = c->psn, .msn = s->msn + 1,
				      .src = c->dst, .len = c->dma_len,
				      .root = rnic_stag_root(rq->qp->st, c->rkey),
				      .rkey = rnic_roce_reth_rkey(reth),
				      .va = rnic_roce_reth_va(reth) };
		queue_job(s, &j);
		s->reads[s->read_next++ % ROCE_READ_CACHE] = (struct roce_read_rec){
			.psn = c->psn, .npkts = npkts_of(c->dma_len, rq->pmtu), .va = j.va,
			.rkey = j.rkey, .len = c->dma_len };
	} else if (f & RNIC_ROCE_OPF_ATOMIC) {
		uint64_t orig = do_atomic(c->pkt, c->dst);
		struct roce_atomic_rec *a = &s->atomics[s->atomic_next++ % ROCE_ATOMIC_CACHE];
		*a = (struct roce_atomic_rec){ .psn = c->psn, .valid = true, .orig = orig };
		struct roce_job j = { .kind = JOB_ATOMIC_ACK, .psn = c->psn, .msn = s->msn + 1,
				      .orig = orig };
		queue_job(s, &j);
	}
	__atomic_store_n(&rq->qp->xfer.bytes_in, rq->qp->xfer.bytes_in + len, __ATOMIC_RELAXED);
	return RESP_COMPLETE;
}

static void recv_complete(struct roce_qp *rq, enum ibv_wc_status st, const struct ibv_wc *x,
			  bool solicited)
{
	struct roce_resp *s = &rq->resp;
	struct ibv_wc wc = { .wr_id = s->rwqe.wr_id, .status = st, .opcode = IBV_WC_RECV };
	if (x != NULL) {
		wc.opcode = x->opcode;
		wc.byte_len = x->byte_len;
		wc.wc_flags = x->wc_flags;
		wc.imm_data = x->imm_data;   /* or invalidated_rkey: one union */
	}
	s->have_rwqe = false;
	s->recv_off = 0;
	rnic_qp_complete(rq->qp, &wc, solicited);
}

static enum resp_state complete(struct resp_ctx *c)
{
	struct roce_qp *rq = c->rq;
	struct roce_resp *s = &rq->resp;
	const struct rnic_roce_pkt *p = c->pkt;
	uint32_t f = p->flags;
	if (f & RNIC_ROCE_OPF_END) {
		if (f & RNIC_ROCE_OPF_RECV_WQE) {
			struct ibv_wc x = { .opcode = IBV_WC_RECV, .byte_len = s->recv_off };
			if (f & RNIC_ROCE_OPF_WRITE) {
				x.opcode = IBV_WC_RECV_RDMA_WITH_IMM;
				x.byte_len = s->wr_len;
			}
			if (f & RNIC_ROCE_OPF_IMMDT) {
				x.wc_flags |= IBV_WC_WITH_IMM;
				x.imm_data = rnic_roce_immdt_imm(rnic_roce_pkt_immdt(p));
			}
			enum ibv_wc_status st = IBV_WC_SUCCESS;
			if (f & RNIC_ROCE_OPF_IETH) {
				/* only a type 2 window of the QP's PD bound to this
				 * QP (IBA 10.6.7.2.2), not an MR, not a type 1
				 * window: the same check as iWARP's */
				uint32_t rkey = rnic_roce_ieth_rkey(rnic_roce_pkt_ieth(p));
				if (rnic_stag_invalidate_remote(rq->qp->st, rkey, rq->qp->qp.pd,
								rq->qp->qp.qp_num) ==
				    RNIC_STAG_OK) {
					x.wc_flags |= IBV_WC_WITH_INV;
					x.invalidated_rkey = rkey;
				} else {
					st = IBV_WC_REM_INV_REQ_ERR;
					rq->rw->c.inv_refused++;
				}
			}
			recv_complete(rq, st, &x, rnic_roce_pkt_se(p));
			if (st != IBV_WC_SUCCESS) {
				send_nak(rq, RNIC_ROCE_NAK_INVALID_REQUEST, c->psn);
				rq->rw->c.naks_inv_out++;
				roce_qp_fatal(rq, IBV_WC_WR_FLUSH_ERR);
				return RESP_DONE;
			}
		}
		s->msn = (s->msn + 1) & RNIC_ROCE_MSN_MASK;
		__atomic_store_n(&rq->qp->xfer.ops_in, rq->qp->xfer.ops_in + 1, __ATOMIC_RELAXED);
	}
	uint32_t n = (f & RNIC_ROCE_OPF_READ) ? npkts_of(c->dma_len, rq->pmtu) : 1;
	s->epsn = rnic_psn_add(s->epsn, n);
	s->nak_sent = false;
	s->prev_op = p->opcode;
	return RESP_ACK;
}

static enum resp_state ack(struct resp_ctx *c)
{
	if (c->pkt->flags & (RNIC_ROCE_OPF_READ | RNIC_ROCE_OPF_ATOMIC))
		roce_qp_activate(c->rq);   /* the queued response acknowledges */
	else if (rnic_roce_pkt_ackreq(c->pkt) || ++c->rq->resp.since_ack >= ROCE_ACK_EVERY) {
		c->rq->resp.ack_due = true;
		roce_qp_activate(c->rq);
	}
	return RESP_DONE;
}

/* --- duplicates, NAKs, errors ------------------------------------------------------ */

/* Whether a duplicate Read at @p psn asking @p reth lies inside a Read
 * this responder executed and remembers: the same R_Key, the VA where that
 * Read was at @p psn, at most the bytes it had left from there. Anything
 * else is not a retry of ours to answer (IBA 9.7.5.1.6: re-execution
 * happens only within the responder's resources) and is dropped. */
static bool dup_read_known(struct roce_qp *rq, uint32_t psn, const struct rnic_roce_reth *reth)
{
	const struct roce_resp *s = &rq->resp;
	uint32_t len = rnic_roce_reth_len(reth);
	for (unsigned k = 0; k < ROCE_READ_CACHE; k++) {
		const struct roce_read_rec *r = &s->reads[k];
		if (r->npkts == 0 || !rnic_psn_in_window(psn, r->psn, r->npkts))
			continue;
		uint64_t off = (uint64_t)rnic_psn_diff(psn, r->psn) * rq->pmtu;
		if (rnic_roce_reth_rkey(reth) == r->rkey && rnic_roce_reth_va(reth) == r->va + off &&
		    off <= r->len && len <= r->len - off)
			return true;
	}
	return false;
}

/* A request we executed before (its ACK or response was lost): Sends and
 * Writes are acknowledged again, Reads run again from the new request's
 * RETH, atomics answer from the cache (never executed twice). */
static enum resp_state duplicate(struct resp_ctx *c)
{
	struct roce_qp *rq = c->rq;
	struct roce_resp *s = &rq->resp;
	uint32_t f = c->pkt->flags;
	/* new requests keep room for IRD of them; a duplicate that finds
	 * no room is dropped and asked again */
	if (s->job_tail - s->job_head >= ROCE_JOBS - RNIC_MAX_RD_ATOMIC)
		return RESP_DONE;
	if ((f & (RNIC_ROCE_OPF_READ | RNIC_ROCE_OPF_ATOMIC)) && !roce_resp_res(rq))
		return RESP_DONE;
	if (f & RNIC_ROCE_OPF_READ) {
		const struct rnic_roce_reth *reth = rnic_roce_pkt_reth(c->pkt);
		enum rnic_stag_fault err;
		uint32_t len = rnic_roce_reth_len(reth);
		const uint8_t *src = len == 0 ? NULL :
			rnic_stag_check(rq->qp->st, rnic_roce_reth_rkey(reth), rq->qp->qp.pd,
					rq->qp->qp.qp_num, rnic_roce_reth_va(reth), len,
					IBV_ACCESS_REMOTE_READ, &err);
		if (len > (1u << 31) || (len > 0 && src == NULL))
			return RESP_DONE;
		if (!dup_read_known(rq, c->psn, reth)) {
			rq->rw->c.dup_read_rejects++;
			return RESP_DONE;
		}
		/* a Read still being answered restarts where the requester
		 * now asks (its responses from here on were lost), instead of
		 * streaming on and answering again after (rxe does the same) */
		for (uint32_t k = s->job_head; k != s->job_tail; k++) {
			struct roce_job *q = &s->jobs[k % ROCE_JOBS];
			if (q->kind == JOB_READ && rnic_psn_in_window(c->psn, q->psn,
						npkts_of(q->len, rq->pmtu))) {
				q->psn = c->psn;
				q->src = src;
				q->root = rnic_stag_root(rq->qp->st,
							 rnic_roce_reth_rkey(reth));
				q->len = len;
				q->off = 0;
				q->rkey = rnic_roce_reth_rkey(reth);
				q->va = rnic_roce_reth_va(reth);
				rq->rw->c.dup_reads++;
				roce_qp_activate(rq);
				return RESP_DONE;
			}
		}
		struct roce_job j = { .kind = JOB_READ, .dup = true, .psn = c->psn, .msn = s->msn,
				      .src = src,
				      .root = rnic_stag_root(rq->qp->st,
							     rnic_roce_reth_rkey(reth)),
				      .len = len, .rkey = rnic_roce_reth_rkey(reth),
				      .va = rnic_roce_reth_va(reth) };
		queue_job(s, &j);
		rq->rw->c.dup_reads++;
	} else if (f & RNIC_ROCE_OPF_ATOMIC) {
		for (unsigned i = 0; i < ROCE_ATOMIC_CACHE; i++) {
			const struct roce_atomic_rec *a = &s->atomics[i];
			if (a->valid && a->psn == c->psn) {
				struct roce_job j = { .kind = JOB_ATOMIC_ACK, .dup = true,
						      .psn = c->psn, .msn = s->msn,
						      .orig = a->orig };
				queue_job(s, &j);
				rq->rw->c.dup_atomics++;
				break;
			}
		}
	} else {
		s->ack_due = true;
	}
	roce_qp_activate(rq);
	return RESP_DONE;
}

static enum resp_state nak_seq(struct resp_ctx *c)
{
	struct roce_qp *rq = c->rq;
	send_nak(rq, RNIC_ROCE_NAK_PSN_SEQ_ERR, rq->resp.epsn);
	roce_trace(rq, TR_RESP_NAK, c->psn);
	rq->resp.nak_sent = true;
	rq->rw->c.naks_seq_out++;
	return RESP_DONE;
}

static enum resp_state rnr(struct resp_ctx *c)
{
	struct roce_qp *rq = c->rq;
	send_ack(rq, rnic_roce_syndrome_rnr_nak(rq->min_rnr_timer), c->psn);
	rq->rw->c.rnr_naks_out++;
	return RESP_DONE;
}

static void count_nak(struct roce_qp *rq, enum rnic_roce_nak_code code)
{
	switch (code) {
	case RNIC_ROCE_NAK_REMOTE_ACCESS_ERR:
		rq->rw->c.naks_access_out++;
		break;
	case RNIC_ROCE_NAK_REMOTE_OP_ERR:
		rq->rw->c.naks_op_out++;
		break;
	default:
		rq->rw->c.naks_inv_out++;
		break;
	}
}

/* A fatal request error: the receive in progress fails with @p recv_st,
 * the NAK goes out, the QP enters ERR (IBA 9.9.3.1.3: classes C and D).
 * Responses still owed to earlier Reads and atomics leave first, in PSN
 * order, and the NAK behind them; requests arriving meanwhile are dropped. */
static enum resp_state resp_error(struct resp_ctx *c, enum rnic_roce_nak_code code,
				  enum ibv_wc_status recv_st)
{
	struct roce_qp *rq = c->rq;
	struct roce_resp *s = &rq->resp;
	if (s->have_rwqe)
		recv_complete(rq, recv_st, NULL, false);
	if (s->job_head != s->job_tail) {
		struct roce_job j = { .kind = JOB_NAK, .dup = true, .psn = c->psn,
				      .code = (uint8_t)code };
		queue_job(s, &j);
		s->err_pending = true;
		roce_qp_activate(rq);
		return RESP_DONE;
	}
	send_nak(rq, code, c->psn);
	count_nak(rq, code);
	roce_qp_fatal(rq, IBV_WC_WR_FLUSH_ERR);
	return RESP_DONE;
}

static enum resp_state err_inv_req(struct resp_ctx *c)
{
	return resp_error(c, RNIC_ROCE_NAK_INVALID_REQUEST, IBV_WC_REM_INV_REQ_ERR);
}

static enum resp_state err_length(struct resp_ctx *c)
{
	return resp_error(c, RNIC_ROCE_NAK_INVALID_REQUEST, IBV_WC_LOC_LEN_ERR);
}

static enum resp_state err_access(struct resp_ctx *c)
{
	return resp_error(c, RNIC_ROCE_NAK_REMOTE_ACCESS_ERR, IBV_WC_REM_ACCESS_ERR);
}

static enum resp_state err_op(struct resp_ctx *c)
{
	return resp_error(c, RNIC_ROCE_NAK_REMOTE_OP_ERR, IBV_WC_REM_OP_ERR);
}

/* Keep the packet (a reference) for a run after the migration answer. */
static void park(struct roce_qp *rq, const struct rte_mbuf *m, uint32_t pay_off,
		 unsigned port, const struct rnic_roce_pkt *pkt)
{
	if (rq->park == NULL)
		rq->park = rte_malloc("roce_park", ROCE_PARK * sizeof(rq->park[0]), 0);
	if (rq->park == NULL || rq->park_n >= ROCE_PARK) {
		/* the requester sends it again: a sequence NAK or its timer */
		rq->rw->c.mig_park_drops++;
		return;
	}
	struct rte_mbuf *mm = (struct rte_mbuf *)(uintptr_t)m;
	rte_mbuf_refcnt_update(mm, 1);
	rq->park[rq->park_n++] = (struct roce_parked){
		.m = mm, .pay_off = pay_off, .port = (uint8_t)port,
		.bth_off = (uint32_t)(pkt->bth - rte_pktmbuf_mtod(m, const uint8_t *)) };
	rq->rw->c.mig_parked++;
}

static void mig_done(struct rnic_stag_mig *q);

static enum resp_state migrate(struct resp_ctx *c)
{
	struct roce_qp *rq = c->rq;
	rq->mig.st = rq->qp->st;
	rq->mig.w = rq->w;
	rq->mig.stag = c->rkey;
	rq->mig.port = (uint8_t)c->port;
	rq->mig.done = mig_done;
	rq->mig_wait = true;
	rq->rw->c.mig_queries++;
	park(rq, c->m, c->pay_off, c->port, c->pkt);
	rnic_stag_migrate(&rq->mig);
	return RESP_DONE;
}

typedef enum resp_state (*resp_step)(struct resp_ctx *c);

static const resp_step resp_steps[RESP_DONE] = {
	[RESP_CHECK_PSN] = check_psn,
	[RESP_CHECK_OP_SEQ] = check_op_seq,
	[RESP_CHECK_OP_VALID] = check_op_valid,
	[RESP_CHECK_RESOURCE] = check_resource,
	[RESP_CHECK_LENGTH] = check_length,
	[RESP_CHECK_RKEY] = check_rkey,
	[RESP_EXECUTE] = execute,
	[RESP_COMPLETE] = complete,
	[RESP_ACK] = ack,
	[RESP_DUPLICATE] = duplicate,
	[RESP_NAK_SEQ] = nak_seq,
	[RESP_RNR] = rnr,
	[RESP_ERR_INV_REQ] = err_inv_req,
	[RESP_ERR_LENGTH] = err_length,
	[RESP_ERR_ACCESS] = err_access,
	[RESP_ERR_OP] = err_op,
	[RESP_MIGRATE] = migrate,
};

void roce_resp_input(struct roce_qp *rq, unsigned port, const struct rnic_roce_pkt *pkt,
		     const struct rte_mbuf *m, uint32_t pay_off)
{
	if (rq->mig_wait) {   /* behind a packet that waits: in order */
		park(rq, m, pay_off, port, pkt);
		return;
	}
	if (rq->resp.err_pending) {   /* the QP is failing: nothing more runs */
		rq->rw->c.rx_bad_state++;
		return;
	}
	struct resp_ctx c = { .rq = rq, .pkt = pkt, .m = m, .pay_off = pay_off,
			      .port = port, .psn = rnic_roce_pkt_psn(pkt) };
	enum resp_state s = RESP_CHECK_PSN;
	while (s != RESP_DONE)
		s = resp_steps[s](&c);
}

/* The control component answered (on the QP's worker): the parked
 * packets run again, in order; the first one checks its R_Key with the
 * answer (installed, or refused: a remote access NAK). */
static void mig_done(struct rnic_stag_mig *q)
{
	struct roce_qp *rq = (struct roce_qp *)((char *)q - offsetof(struct roce_qp, mig));
	struct roce_parked p[ROCE_PARK];
	unsigned n = rq->park_n;
	if (n > 0)
		memcpy(p, rq->park, n * sizeof(p[0]));
	rq->park_n = 0;
	rq->mig_answered = true;
	__atomic_store_n(&rq->mig_wait, false, __ATOMIC_RELEASE);
	for (unsigned i = 0; i < n; i++) {
		struct rnic_roce_pkt pkt;
		uint8_t *bth = rte_pktmbuf_mtod_offset(p[i].m, uint8_t *, p[i].bth_off);
		if ((rq->state == ROCE_RTR || rq->state == ROCE_RTS) &&
		    rnic_roce_pkt_parse(&pkt, bth, rte_pktmbuf_pkt_len(p[i].m) - p[i].bth_off,
					NULL) == 0)
			roce_resp_input(rq, p[i].port, &pkt, p[i].m, p[i].pay_off);
		rq->mig_answered = false;
		rte_pktmbuf_free(p[i].m);
	}
	rq->mig_answered = false;
}

void roce_resp_unpark(struct roce_qp *rq)
{
	for (unsigned i = 0; i < rq->park_n; i++)
		rte_pktmbuf_free(rq->park[i].m);
	rq->park_n = 0;
}

/* --- responses ------------------------------------------------------------------ */

/* Emit the next packet of Read job @p j. @return 1 sent, 0 no mbuf, -1
 * the source went away (the QP failed). */
static int read_resp(struct roce_qp *rq, struct roce_job *j)
{
	uint32_t n = npkts_of(j->len, rq->pmtu), i = j->off / rq->pmtu;
	uint32_t plen = RTE_MIN(rq->pmtu, j->len - j->off);
	uint8_t op = n == 1 ? RNIC_ROCE_OP_RC_READ_RESPONSE_ONLY :
		     i == 0 ? RNIC_ROCE_OP_RC_READ_RESPONSE_FIRST :
		     i == n - 1 ? RNIC_ROCE_OP_RC_READ_RESPONSE_LAST :
		     RNIC_ROCE_OP_RC_READ_RESPONSE_MIDDLE;
	/* the memory may have been deregistered since the request: check its
	 * registration again (the STag table keeps entries until workers move
	 * on). Not the window the request named: invalidating it after the
	 * request (a later Send with Invalidate) does not take back a Read the
	 * responder accepted before (IBA: requests execute in PSN order). */
	const struct rnic_mem *reg = plen == 0 ? NULL : rnic_stag_find(rq->qp->st, j->root);
	const uint8_t *src = plen == 0 ? NULL : j->src + j->off;
	if (plen > 0 && (reg == NULL || !__atomic_load_n(&reg->valid, __ATOMIC_ACQUIRE))) {
		send_nak(rq, RNIC_ROCE_NAK_REMOTE_ACCESS_ERR, rnic_psn_add(j->psn, i));
		rq->rw->c.naks_access_out++;
		roce_qp_fatal(rq, IBV_WC_WR_FLUSH_ERR);
		return -1;
	}
	uint8_t *hdr, *pay;
	struct rte_mbuf *m = roce_pkt_new(rq, op, rnic_psn_add(j->psn, i), false, false, plen,
					  &hdr, &pay);
	if (m == NULL)
		return 0;
	if (rnic_roce_op_has(op, RNIC_ROCE_OPF_AETH))
		rnic_roce_aeth_set((struct rnic_roce_aeth *)hdr,
				   rnic_roce_syndrome_ack(RNIC_ROCE_AETH_CREDITS_INVALID), j->msn);
	if (plen > 0)
		memcpy(pay, src, plen);
	roce_pkt_send(rq, m);
	rq->rw->c.read_resps_out++;
	__atomic_store_n(&rq->qp->xfer.bytes_out, rq->qp->xfer.bytes_out + plen, __ATOMIC_RELAXED);
	j->off += plen;
	return 1;
}

static int atomic_ack(struct roce_qp *rq, const struct roce_job *j)
{
	uint8_t *hdr, *pay;
	struct rte_mbuf *m = roce_pkt_new(rq, RNIC_ROCE_OP_RC_ATOMIC_ACKNOWLEDGE, j->psn, false,
					  false, 0, &hdr, &pay);
	if (m == NULL)
		return 0;
	rnic_roce_aeth_set((struct rnic_roce_aeth *)hdr,
			   rnic_roce_syndrome_ack(RNIC_ROCE_AETH_CREDITS_INVALID), j->msn);
	rnic_roce_atmack_set_orig((struct rnic_roce_atmack *)(hdr + RNIC_ROCE_AETH_LEN), j->orig);
	roce_pkt_send(rq, m);
	rq->rw->c.atomic_acks_out++;
	return 1;
}

unsigned roce_resp_pump(struct roce_qp *rq, unsigned budget)
{
	struct roce_resp *s = &rq->resp;
	unsigned n = 0;
	while (n < budget && s->job_head != s->job_tail) {
		struct roce_job *j = &s->jobs[s->job_head % ROCE_JOBS];
		if (j->kind == JOB_NAK) {   /* every earlier response is out */
			if (!send_ack(rq, rnic_roce_syndrome_nak((enum rnic_roce_nak_code)j->code),
				      j->psn))
				return budget;
			count_nak(rq, (enum rnic_roce_nak_code)j->code);
			s->job_head = s->job_tail;
			roce_qp_fatal(rq, IBV_WC_WR_FLUSH_ERR);
			return n + 1;
		}
		int rc = j->kind == JOB_READ ? read_resp(rq, j) : atomic_ack(rq, j);
		if (rc < 0)
			return n;
		if (rc == 0)
			return budget;   /* no mbuf: stay active */
		n++;
		if (j->kind != JOB_READ || j->off >= j->len) {
			if (!j->dup)
				s->jobs_new--;
			s->job_head++;
		}
	}
	if (n < budget && s->ack_due && s->job_head == s->job_tail) {
		if (!send_ack(rq, rnic_roce_syndrome_ack(RNIC_ROCE_AETH_CREDITS_INVALID),
			      rnic_psn_sub(s->epsn, 1)))
			return budget;
		s->ack_due = false;
		s->since_ack = 0;
		rq->rw->c.acks_out++;
		n++;
	}
	return n;
}

void roce_resp_flush(struct roce_qp *rq)
{
	struct roce_resp *s = &rq->resp;
	if (s->have_rwqe)
		recv_complete(rq, IBV_WC_WR_FLUSH_ERR, NULL, false);
	s->job_head = s->job_tail;
	s->jobs_new = 0;
	s->ack_due = false;
}
