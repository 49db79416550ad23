/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * RoCEv2 completer (IBTA 9.7.5.1 and the completer of rxe): responses
 * arriving at the requester become send-queue completions, in order.
 *
 * Named states, each a small function returning the next:
 *   CHECK_PSN    the response names a PSN we transmitted and still wait for
 *   CHECK_KIND   ACKNOWLEDGE, Read Response or Atomic ACK
 *   ACK          AETH syndrome: ACK, RNR NAK or NAK (by code)
 *   READ         a Read Response: in order, right length, placed
 *   ATOMIC       an Atomic ACK: the original value stored
 *   DONE
 * An ACK, and any response, acknowledges every request before its PSN
 * (implicit ACK, IBA 9.7.5.1.1); Sends and Writes complete then. Reads and
 * atomics complete only with their own responses: when an ACK passes one
 * that has none, its responses were lost and it is requested again.
 */
#include <string.h>

#include "roce/psn.h"
#include "roce/roce.h"

enum comp_state { COMP_CHECK_PSN, COMP_CHECK_KIND, COMP_ACK, COMP_READ, COMP_ATOMIC, COMP_DONE };

struct comp_ctx {
	struct roce_qp *rq;
	const struct rnic_roce_pkt *pkt;
	const struct rte_mbuf *m;
	uint32_t pay_off;
	uint32_t psn;
};

static inline struct roce_wqe *head_wqe(struct roce_qp *rq)
{
	return &rq->req.wq[rq->req.head & rq->qp->sq_mask];
}

static void complete_head(struct roce_qp *rq, enum ibv_wc_status st, uint32_t len)
{
	struct roce_req *r = &rq->req;
	struct roce_wqe *e = head_wqe(rq);
	struct ibv_wc wc = { .wr_id = e->wr.wr_id, .status = st, .byte_len = len };
	if (e->rd_atomic && e->issued)   /* atomics; Read chunks count in do_read() */
		r->rd_out--;
	r->head++;
	r->gap_retried = false;   /* a gap retry is per missing PSN of the head */
	if ((int32_t)(r->next - r->head) < 0) {
		r->next = r->head;
		r->next_pkt = 0;
	}
	rnic_qp_complete(rq->qp, &wc, false);
}

/* The responder made progress: retry budgets restored, timer restarted,
 * transmission may go on (window, ORD). */
static void progress(struct roce_qp *rq)
{
	if (rq->req.retry_left != rq->retry_cnt)
		roce_trace(rq, TR_RESTORE, rq->req.acked);
	rq->req.retry_left = rq->retry_cnt;
	rq->req.backoff = 0;
	rq->req.probing = false;
	rq->req.excused_left = ROCE_EXCUSED_MAX;
	rq->req.rnr_left = rq->rnr_retry;
	roce_req_timer_update(rq);
	roce_qp_activate(rq);
}

/* Everything up to @p psn is acknowledged: complete Sends and Writes from
 * the head. @return true when that acknowledged a PSN not acknowledged
 * before (progress: the retry budgets start again). */
static bool ack_upto(struct roce_qp *rq, uint32_t psn)
{
	struct roce_req *r = &rq->req;
	bool done = false;
	if (rnic_psn_gt(psn, r->acked)) {
		r->acked = psn;
		r->nak_seen = false;
		done = true;
	}
	while (r->head != r->tail) {
		struct roce_wqe *e = head_wqe(rq);
		uint32_t last = rnic_psn_add(e->first_psn, e->npkts - 1);
		if (rnic_psn_gt(last, r->acked))
			break;
		if (e->rd_atomic) {
			/* acknowledged past a Read or atomic still unanswered:
			 * its responses were lost; ask again, once per PSN, and
			 * only when this acknowledgement is news. A Read's own
			 * response acknowledges up to its PSN, below acked: it
			 * proves the responder is answering, and asking again
			 * there restarted the Read at every response (and resent
			 * every request behind it), a storm that buried the
			 * probes of lossy links in their own transmit queues */
			uint32_t want = rnic_psn_add(e->first_psn, e->resp_next);
			if (done && (!r->gap_retried || r->gap_retry_psn != want)) {
				r->gap_retried = true;
				r->gap_retry_psn = want;
				rq->rw->c.read_resp_gaps++;
				rq->rw->c.retransmits++;
				roce_trace(rq, TR_ACK_GAP, want);
				roce_req_rewind(rq, want);
			}
			break;
		}
		complete_head(rq, IBV_WC_SUCCESS, e->len);
	}
	/* a rewound transmission never resends what is acknowledged */
	if (r->next == r->head && r->head != r->tail) {
		struct roce_wqe *e = head_wqe(rq);
		int32_t acked_in = rnic_psn_diff(r->acked, e->first_psn) + 1;
		if (!e->rd_atomic && acked_in > (int32_t)r->next_pkt)
			r->next_pkt = (uint32_t)acked_in;
	}
	return done;
}

static enum comp_state check_psn(struct comp_ctx *c)
{
	struct roce_req *r = &c->rq->req;
	if (r->head == r->tail || rnic_psn_lt(c->psn, head_wqe(c->rq)->first_psn) ||
	    rnic_psn_ge(c->psn, r->sent_end)) {
		c->rq->rw->c.stale_responses++;
		return COMP_DONE;
	}
	return COMP_CHECK_KIND;
}

static enum comp_state check_kind(struct comp_ctx *c)
{
	uint32_t f = c->pkt->flags;
	if (f & RNIC_ROCE_OPF_READ)
		return COMP_READ;
	if (f & RNIC_ROCE_OPF_ATOMIC)
		return COMP_ATOMIC;
	return COMP_ACK;
}

static enum ibv_wc_status nak_status(unsigned code)
{
	switch (code) {
	case RNIC_ROCE_NAK_INVALID_REQUEST:
		return IBV_WC_REM_INV_REQ_ERR;
	case RNIC_ROCE_NAK_REMOTE_ACCESS_ERR:
		return IBV_WC_REM_ACCESS_ERR;
	case RNIC_ROCE_NAK_REMOTE_OP_ERR:
		return IBV_WC_REM_OP_ERR;
	case RNIC_ROCE_NAK_INVALID_RD_REQ:
		return IBV_WC_REM_INV_RD_REQ_ERR;
	default:
		return IBV_WC_BAD_RESP_ERR;
	}
}

static enum comp_state do_ack(struct comp_ctx *c)
{
	struct roce_qp *rq = c->rq;
	const struct rnic_roce_aeth *a = rnic_roce_pkt_aeth(c->pkt);
	uint32_t before = rnic_psn_sub(c->psn, 1);
	switch (rnic_roce_aeth_type(a)) {
	case RNIC_ROCE_AETH_TYPE_ACK:
		rq->rw->c.acks_in++;
		if (ack_upto(rq, c->psn))
			progress(rq);
		break;
	case RNIC_ROCE_AETH_TYPE_RNR_NAK:
		rq->rw->c.rnr_naks_in++;
		if (ack_upto(rq, before))
			progress(rq);
		roce_req_rnr_wait(rq, c->psn, rnic_roce_aeth_value(a));
		break;
	case RNIC_ROCE_AETH_TYPE_NAK:
		rq->rw->c.naks_in++;
		if (ack_upto(rq, before))
			progress(rq);
		if (rnic_roce_aeth_value(a) == RNIC_ROCE_NAK_PSN_SEQ_ERR) {
			/* a NAK older than an ACK already received (a late copy, or
			 * reordered): the responder has had its PSN since */
			if (rnic_psn_le(c->psn, rq->req.acked)) {
				rq->rw->c.stale_responses++;
				roce_trace(rq, TR_NAK_COPY, c->psn);
				break;
			}
			/* a copy of a NAK already acted on changes nothing */
			if (rq->req.nak_seen && rq->req.nak_psn == c->psn) {
				roce_trace(rq, TR_NAK_COPY, c->psn);
				break;
			}
			roce_trace(rq, TR_NAK_SEQ, c->psn);
			rq->req.nak_seen = true;
			rq->req.nak_psn = c->psn;
			if (rq->req.retry_left == 0) {
				rq->rw->c.retry_exceeded++;
				roce_qp_fatal(rq, IBV_WC_RETRY_EXC_ERR);
				break;
			}
			rq->req.retry_left--;
			rq->rw->c.retransmits++;
			roce_req_rewind(rq, c->psn);
			break;
		}
		if (nak_status(rnic_roce_aeth_value(a)) == IBV_WC_BAD_RESP_ERR)
			rq->rw->c.bad_nak_codes++;   /* a reserved code (IBA table 44) */
		roce_qp_fatal(rq, nak_status(rnic_roce_aeth_value(a)));
		break;
	default:
		/* a reserved type (10b, or bit 7 set): not a response this
		 * requester can act on; rxe ends the QP in error the same way */
		rq->rw->c.bad_syndromes++;
		roce_qp_fatal(rq, IBV_WC_BAD_RESP_ERR);
		break;
	}
	return COMP_DONE;
}

/* A Read Response First, Last or Only, or an Atomic Acknowledge, carries
 * an AETH whose type must be ACK (rxe checks the same). @return true when
 * the packet may go on; false when the QP was ended (a bad response). */
static bool resp_aeth_ok(struct comp_ctx *c)
{
	const struct rnic_roce_aeth *a = rnic_roce_pkt_aeth(c->pkt);
	if (a == NULL || rnic_roce_aeth_type(a) == RNIC_ROCE_AETH_TYPE_ACK)
		return true;
	c->rq->rw->c.bad_syndromes++;
	roce_qp_fatal(c->rq, IBV_WC_BAD_RESP_ERR);
	return false;
}

/*
 * Whether a Read Response at index @p i of Read @p e may carry the position
 * bits in @p flags. Each Read Request asks for one chunk (roce_req.c: up to
 * ROCE_READ_CHUNK responses, ending at a multiple of it or at the Read's
 * end), and the responder answers it as one message: FIRST at the chunk's
 * start, LAST at its end, ONLY when it is both, MIDDLE between. The end is
 * always exact: a LAST or ONLY elsewhere would cut the Read short (IBA
 * 9.7.5.1.x: an opcode out of sequence is a bad response). After a rewind
 * the requester asked again from inside a chunk, so a message may also
 * start there (the new request's FIRST) while the old one's MIDDLEs may
 * still arrive: then either start bit is taken, the end still is not.
 */
static bool read_resp_pos_ok(const struct roce_wqe *e, uint32_t i, uint32_t flags)
{
	bool chunk_start = i % ROCE_READ_CHUNK == 0;
	bool chunk_end = (i + 1) % ROCE_READ_CHUNK == 0 || i == e->npkts - 1;
	bool is_start = (flags & RNIC_ROCE_OPF_START) != 0;
	bool is_end = (flags & RNIC_ROCE_OPF_END) != 0;
	if (is_end != chunk_end)
		return false;
	return is_start == chunk_start || (e->restarted && !chunk_start);
}

static enum comp_state do_read(struct comp_ctx *c)
{
	struct roce_qp *rq = c->rq;
	struct roce_req *r = &rq->req;
	if (!resp_aeth_ok(c))
		return COMP_DONE;
	if (ack_upto(rq, rnic_psn_sub(c->psn, 1)))
		progress(rq);
	struct roce_wqe *e = head_wqe(rq);
	if (r->head == r->tail || e->wr.opcode != IBV_WR_RDMA_READ ||
	    !rnic_psn_in_window(c->psn, e->first_psn, e->npkts)) {
		rq->rw->c.stale_responses++;
		return COMP_DONE;
	}
	uint32_t i = (uint32_t)rnic_psn_diff(c->psn, e->first_psn);
	if (i < e->resp_next) {
		rq->rw->c.stale_responses++;   /* a duplicate */
		return COMP_DONE;
	}
	if (i > e->resp_next) {
		uint32_t want = rnic_psn_add(e->first_psn, e->resp_next);
		rq->rw->c.read_resp_gaps++;
		if (!r->gap_retried || r->gap_retry_psn != want) {
			r->gap_retried = true;
			r->gap_retry_psn = want;
			rq->rw->c.retransmits++;
			roce_trace(rq, TR_READ_GAP, want);
			roce_req_rewind(rq, want);
		}
		return COMP_DONE;
	}
	bool last = i == e->npkts - 1;
	uint32_t off = i * rq->pmtu;
	uint32_t want_len = last ? e->len - off : rq->pmtu;
	if (c->pkt->paylen != want_len || !read_resp_pos_ok(e, i, c->pkt->flags)) {
		rq->rw->c.bad_resps++;
		roce_qp_fatal(rq, IBV_WC_BAD_RESP_ERR);
		return COMP_DONE;
	}
	roce_sgl_copy_in(e->wr.sg_list, (uint32_t)e->wr.num_sge, off, c->m, c->pay_off,
			 c->pkt->paylen);
	__atomic_store_n(&rq->qp->xfer.bytes_in, rq->qp->xfer.bytes_in + c->pkt->paylen,
			 __ATOMIC_RELAXED);
	e->resp_next++;
	r->gap_retried = false;
	/* a chunk is answered (one asked for and counted, not one a rewind
	 * took back before its old responses arrived) */
	if ((last || e->resp_next % ROCE_READ_CHUNK == 0) && e->resp_next <= e->issued_pkts &&
	    r->rd_out > 0)
		r->rd_out--;
	if (last)
		complete_head(rq, IBV_WC_SUCCESS, e->len);
	ack_upto(rq, c->psn);   /* a response acknowledges itself: the window moves */
	progress(rq);
	return COMP_DONE;
}

static enum comp_state do_atomic(struct comp_ctx *c)
{
	struct roce_qp *rq = c->rq;
	if (!resp_aeth_ok(c))
		return COMP_DONE;
	if (ack_upto(rq, rnic_psn_sub(c->psn, 1)))
		progress(rq);
	struct roce_wqe *e = head_wqe(rq);
	if (rq->req.head == rq->req.tail || !e->rd_atomic ||
	    e->wr.opcode == IBV_WR_RDMA_READ || e->first_psn != c->psn) {
		rq->rw->c.stale_responses++;
		return COMP_DONE;
	}
	uint64_t orig = rnic_roce_atmack_orig(rnic_roce_pkt_atmack(c->pkt));
	memcpy((void *)(uintptr_t)e->wr.sg_list[0].addr, &orig, sizeof(orig));
	complete_head(rq, IBV_WC_SUCCESS, sizeof(orig));
	ack_upto(rq, c->psn);
	progress(rq);
	return COMP_DONE;
}

typedef enum comp_state (*comp_step)(struct comp_ctx *c);

static const comp_step comp_steps[COMP_DONE] = {
	[COMP_CHECK_PSN] = check_psn,
	[COMP_CHECK_KIND] = check_kind,
	[COMP_ACK] = do_ack,
	[COMP_READ] = do_read,
	[COMP_ATOMIC] = do_atomic,
};

void roce_comp_input(struct roce_qp *rq, const struct rnic_roce_pkt *pkt,
		     const struct rte_mbuf *m, uint32_t pay_off)
{
	struct comp_ctx c = { rq, pkt, m, pay_off, rnic_roce_pkt_psn(pkt) };
	enum comp_state s = COMP_CHECK_PSN;
	while (s != COMP_DONE && rq->state == ROCE_RTS)
		s = comp_steps[s](&c);
}
