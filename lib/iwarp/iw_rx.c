/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * iWARP receive and placement: the callbacks of the FPDU parser. Received
 * FPDUs are placed directly from the mbuf into their target: the posted
 * receive buffer (untagged, QN 0) or the registered memory an STag names
 * (tagged). RDMA Read Requests (QN 1) are served as a stream of tagged
 * Read Responses from the source MR into the requester's sink STag (seed
 * 001); the last carries L and completes the read at the requester, in
 * order. What each opcode is comes from the RDMAP opcode table
 * (rdmap_op.h). A tagged segment for an STag of another port waits for the
 * control component (STag migration, seed 000) with the rest of the
 * received chunk parked.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_mbuf.h>

#include "iwarp/iw_int.h"
#include "iwarp/rdmap_op.h"
#include "rnic/rnic_tcp.h"

static void ep_mig_done(struct rnic_stag_mig *q);

/* Ask the control component about @p stag; the FPDU waits (hdr runs again
 * with the answer, from ep_mig_done()). The first query allocates the
 * migration state: without memory (counted) the stream ends with a
 * reset, -ENOMEM, as the peer's request can be neither served nor
 * refused with a Terminate. */
static int ep_migrate(struct rnic_iw_ep *ep, uint32_t stag)
{
	if (ep->mig == NULL) {
		ep->mig = iw_alloc(ep->st, "rnic_iw_mig", sizeof(*ep->mig));
		if (ep->mig == NULL) {
			iw_ep_close(ep, -ENOMEM);
			return -ENOMEM;
		}
		ep->mig->ep = ep;
	}
	struct rnic_stag_mig *q = &ep->mig->q;
	q->st = ep->st;
	q->w = ep->w;
	q->stag = stag;
	q->port = (uint8_t)iw_ep_port(ep);
	q->done = ep_mig_done;
	ep->mig_wait = true;
	ep->mig->queries++;
	ep->busy++;   /* alive until the answer */
	rnic_stag_migrate(q);
	return RNIC_FPDU_WAIT;
}

/*
 * Responder in peer-to-peer mode: the first FPDU must be the RTR message
 * its reply chose (RFC 6581 section 9.2), zero bytes in one segment. It
 * belongs to the connection, not to the ULP: it takes no receive, makes
 * no completion and needs no STag. Anything else ends the connection with
 * a Terminate, "no matching RTR option". Its MSN counts like any other
 * (a Send RTR is message 1 of queue 0, a Read RTR message 1 of queue 1).
 */
static int rtr_hdr(struct rnic_iw_ep *ep, const struct rnic_fpdu_info *fi)
{
	uint8_t want = ep->res.rtr == RNIC_MPA_RTR_SEND ? RNIC_RDMAP_OP_SEND :
		       ep->res.rtr == RNIC_MPA_RTR_WRITE ? RNIC_RDMAP_OP_WRITE :
		       RNIC_RDMAP_OP_READ_REQ;
	bool ok = fi->opcode == want && fi->last && fi->payload_len == 0;
	if (ok && !fi->tagged) {
		const struct rnic_ddp_untagged_hdr *u = (const void *)fi->hdr;
		uint32_t qn = rnic_rdmap_op(want)->qn;
		ok = rte_be_to_cpu_32(u->qn) == qn && rte_be_to_cpu_32(u->mo) == 0 &&
		     rte_be_to_cpu_32(u->msn) == ep->rx_msn[qn];
		if (ok && want == RNIC_RDMAP_OP_READ_REQ)
			ok = fi->hdr_len == RNIC_DDP_UNTAGGED_HDR_LEN + sizeof(ep->rreq);
		if (ok && want == RNIC_RDMAP_OP_READ_REQ)
			memcpy(ep->rreq, fi->hdr + RNIC_DDP_UNTAGGED_HDR_LEN, sizeof(ep->rreq));
	}
	if (!ok) {
		iw_debug("RTR expected (type %u): opcode %u len %u", ep->res.rtr, fi->opcode,
			 fi->payload_len);
		iw_terminate(ep, RNIC_TERM_MPA_NO_MATCHING_RTR, NULL, 0);
		return RNIC_FPDU_SKIP;
	}
	ep->rtr_in = true;
	ep->place = ep->rreq;   /* nothing is placed: zero bytes */
	return 0;
}

/* The RTR is in: a Read RTR gets its zero-length Read Response (our first
 * FPDU), then RDMA mode starts for the ULP. */
static void rtr_done(struct rnic_iw_ep *ep)
{
	ep->rtr_in = false;
	iw_mpa_timer_stop(ep);
	iw_count(&iw_stack(ep->st)->rtr_received);
	iw_debug("RTR received (type %u)", ep->res.rtr);
	if (ep->res.rtr == RNIC_MPA_RTR_SEND)
		ep->rx_msn[RNIC_DDP_QN_SEND]++;
	if (ep->res.rtr == RNIC_MPA_RTR_READ) {
		const struct rnic_rdmap_read_req_hdr *r = (const void *)ep->rreq;
		if (!iw_job_room(ep, 1)) {   /* the ring could not be allocated */
			iw_ep_close(ep, -ENOMEM);
			return;
		}
		struct job *j = iw_job_next(ep);
		ep->rx_msn[RNIC_DDP_QN_READ_REQ]++;
				j->kind = JOB_READ_RESP;
		j->rtr = true;
		j->stag = rte_be_to_cpu_32(r->sink_stag);
		j->to = rte_be_to_cpu_64(r->sink_to);
		ep->job_tail++;
		ep->inreads++;   /* outside the IRD check: IRD may be 0 */
	}
	iw_enter_rts(ep);
}

/* Terminate for @p cause, quoting the segment @p fi; its payload is not
 * placed. @return RNIC_FPDU_SKIP for the parser. */
static int rx_fault(struct rnic_iw_ep *ep, const struct rnic_fpdu_info *fi,
		    enum rnic_term_cause cause)
{
	iw_terminate(ep, cause, fi->hdr, fi->ulpdu_len);
	return RNIC_FPDU_SKIP;
}

/* A source or target STag of another port migrates before it is used:
 * start the query (the FPDU waits) or go on. The real check comes when
 * the request is served. */
static int rx_migrate_first(struct rnic_iw_ep *ep, uint32_t stag, uint64_t to, uint64_t len)
{
	enum rnic_term_cause cause;
	bool wait;
	iw_mr_check_wait(ep, stag, to, len, 0, &cause, false, &wait);
	if (wait)
		return ep_migrate(ep, stag);
	ep->mig_answered = false;
	return 0;
}

/* The answer to our Read RTR: zero bytes, one segment, its STag is the
 * dummy we sent; nothing to check. */
static int rx_hdr_rtr_resp(struct rnic_iw_ep *ep, const struct rnic_fpdu_info *fi)
{
	if (fi->payload_len != 0 || !fi->last)
		return rx_fault(ep, fi, RNIC_TERM_DDP_T_BASE_BOUNDS);
	ep->place = ep->rreq;
	return 0;
}

/*
 * A Read Response segment must continue the oldest outstanding Read
 * (responses come in request order, RFC 5040 sections 5.2 and 6.4): name
 * its sink STag, start at the next TO it expects (no hole, no overlap),
 * stay within its length, and its last segment (DDP L) must end exactly
 * there. The codes are RFC 5041 section 7.2's tagged buffer errors, as siw
 * uses them: another STag is Invalid STag, a wrong TO or length Base or
 * Bounds. @return true when it matches, else false with *cause set.
 */
static bool rresp_check(const struct iw_ord *o, const struct rnic_fpdu_info *fi,
			enum rnic_term_cause *cause)
{
	const struct rnic_ddp_tagged_hdr *t = (const void *)fi->hdr;
	uint64_t end = (uint64_t)o->placed + fi->payload_len;
	if (rte_be_to_cpu_32(t->stag) != o->sink_stag) {
		*cause = RNIC_TERM_DDP_T_INVALID_STAG;
		return false;
	}
	if (rte_be_to_cpu_64(t->to) != o->sink_to + o->placed || end > o->len ||
	    (fi->last && end != o->len)) {
		*cause = RNIC_TERM_DDP_T_BASE_BOUNDS;
		return false;
	}
	return true;
}

/* A Read Response we refuse: counted, nothing placed, the Read it claimed
 * to answer (the oldest outstanding request, unless that is the RTR's)
 * completes in error now, the rest are flushed when the Terminate closes
 * the stream. @return RNIC_FPDU_SKIP. */
static int rresp_refuse(struct rnic_iw_ep *ep, const struct rnic_fpdu_info *fi,
			enum rnic_term_cause cause)
{
	iw_count(&iw_stack(ep->st)->rresp_refused);
	if (ep->ord_head != ep->ord_tail && !ep->ord[ep->ord_head % ORD_MAX].rtr) {
		const struct iw_ord *o = &ep->ord[ep->ord_head++ % ORD_MAX];
		iw_complete(ep, o->wr_id, (enum ibv_wc_opcode)o->wc_op, IBV_WC_BAD_RESP_ERR, 0);
	}
	return rx_fault(ep, fi, cause);
}

/* RDMA Write or Read Response: placed into the memory its STag names
 * (remote write rights for a Write, local write for the sink of a Read we
 * asked for). A response must answer our oldest outstanding request, and
 * that must be a Read whose sink it continues (rresp_check). */
static int rx_hdr_tagged(struct rnic_iw_ep *ep, const struct rnic_fpdu_info *fi, uint32_t mo)
{
	(void)mo;
	const struct rnic_ddp_tagged_hdr *t = (const void *)fi->hdr;
	bool response = rnic_rdmap_op(fi->opcode)->dir == RNIC_DIR_RESPONSE;
	enum rnic_term_cause cause;
	if (response) {
		if (ep->ord_head == ep->ord_tail || ep->ord[ep->ord_head % ORD_MAX].atomic)
			return rresp_refuse(ep, fi, RNIC_TERM_RDMAP_OPCODE);
		const struct iw_ord *o = &ep->ord[ep->ord_head % ORD_MAX];
		if (o->rtr)
			return rx_hdr_rtr_resp(ep, fi);
		if (!rresp_check(o, fi, &cause))
			return rresp_refuse(ep, fi, cause);
	}
	uint32_t stag = rte_be_to_cpu_32(t->stag);
	int need = response ? IBV_ACCESS_LOCAL_WRITE : IBV_ACCESS_REMOTE_WRITE;
	bool wait;
	ep->place = iw_mr_check_wait(ep, stag, rte_be_to_cpu_64(t->to), fi->payload_len, need,
				     &cause, true, &wait);
	if (wait)
		return ep_migrate(ep, stag);
	ep->mig_answered = false;
	if (ep->place == NULL)   /* never placed: Terminate */
		return response ? rresp_refuse(ep, fi, cause) : rx_fault(ep, fi, cause);
	return 0;
}

/*
 * The first segment of a Send (or an Immediate Data message) takes a
 * receive into ep->cur, which the first such message allocates. @return
 * 0, or what the parser's hdr callback returns: RNIC_FPDU_SKIP after the
 * Terminate of an empty queue, -ENOMEM when ep->cur found no memory
 * (counted): the stream ends with a reset, the receive stays queued (and
 * is flushed with the QP).
 */
static int rx_take(struct rnic_iw_ep *ep, const struct rnic_fpdu_info *fi)
{
	if (ep->cur == NULL) {
		ep->cur = iw_alloc(ep->st, "rnic_iw_cur", sizeof(*ep->cur));
		if (ep->cur == NULL) {
			iw_ep_close(ep, -ENOMEM);
			return -ENOMEM;
		}
	}
	if (ep->rq == NULL || !rnic_rq_take(ep->rq, ep->cur))
		return rx_fault(ep, fi, RNIC_TERM_DDP_U_NO_BUFFER);
	ep->in_msg = true;
	return 0;
}

/* A Send segment: the first takes a receive, each is scattered into it
 * at its MO. */
static int rx_hdr_send(struct rnic_iw_ep *ep, const struct rnic_fpdu_info *fi, uint32_t mo)
{
	if (!ep->in_msg) {
		if (mo != 0)
			return rx_fault(ep, fi, RNIC_TERM_DDP_U_INVALID_MO);
		int rc = rx_take(ep, fi);
		if (rc != 0)
			return rc;
	}
	if ((uint64_t)mo + fi->payload_len > ep->cur->total)
		return rx_fault(ep, fi, RNIC_TERM_DDP_U_TOO_LONG);
	ep->scatter = true;
	ep->place_mo = mo;
	return 0;
}

/* RFC 7306 Immediate Data: a message of one segment that takes a receive
 * of its own. */
static int rx_hdr_imm(struct rnic_iw_ep *ep, const struct rnic_fpdu_info *fi, uint32_t mo)
{
	/* in the middle of a Send (same queue, same MSN): taking a receive
	 * now would lose the one the Send is placed into */
	if (ep->in_msg)
		return rx_fault(ep, fi, RNIC_TERM_RDMAP_OPCODE);
	if (mo != 0)
		return rx_fault(ep, fi, RNIC_TERM_DDP_U_INVALID_MO);
	if (!fi->last || fi->payload_len != 0)
		return rx_fault(ep, fi, RNIC_TERM_DDP_U_TOO_LONG);
	int rc = rx_take(ep, fi);
	if (rc != 0)
		return rc;
	memcpy(ep->imm_in, fi->hdr + RNIC_DDP_UNTAGGED_HDR_LEN, sizeof(ep->imm_in));
	ep->place = ep->imm_in;
	return 0;
}

/* RDMA Read Request: the parser counts its header as part of the DDP
 * header; it carries no payload. serve_read() checks the source for real. */
static int rx_hdr_read_req(struct rnic_iw_ep *ep, const struct rnic_fpdu_info *fi, uint32_t mo)
{
	if (fi->hdr_len != RNIC_DDP_UNTAGGED_HDR_LEN + sizeof(ep->rreq) ||
	    fi->payload_len != 0 || mo != 0)
		return rx_fault(ep, fi, RNIC_TERM_DDP_U_INVALID_MO);
	memcpy(ep->rreq, fi->hdr + RNIC_DDP_UNTAGGED_HDR_LEN, sizeof(ep->rreq));
	ep->place = ep->rreq;
	const struct rnic_rdmap_read_req_hdr *r = (const void *)ep->rreq;
	return rx_migrate_first(ep, rte_be_to_cpu_32(r->src_stag),
				rte_be_to_cpu_64(r->src_to), 0);
}

/* Atomic Request: one segment, no payload, the 52-byte header is all;
 * serve_atomic() checks the target for real. */
static int rx_hdr_atomic_req(struct rnic_iw_ep *ep, const struct rnic_fpdu_info *fi,
			     uint32_t mo)
{
	if (fi->payload_len != 0 || mo != 0 || !fi->last)
		return rx_fault(ep, fi, RNIC_TERM_DDP_U_INVALID_MO);
	memcpy(ep->areq, fi->hdr + RNIC_DDP_UNTAGGED_HDR_LEN, sizeof(ep->areq));
	ep->place = ep->areq;
	const struct rnic_rdmap_atomic_req_hdr *r = (const void *)ep->areq;
	return rx_migrate_first(ep, rte_be_to_cpu_32(r->remote_stag),
				rte_be_to_cpu_64(r->remote_to), 8);
}

/* Atomic Response: responses come in request order, so it must answer
 * the oldest outstanding request, and that must be this Atomic. */
static int rx_hdr_atomic_resp(struct rnic_iw_ep *ep, const struct rnic_fpdu_info *fi,
			      uint32_t mo)
{
	const struct rnic_rdmap_atomic_resp_hdr *r =
		(const void *)(fi->hdr + RNIC_DDP_UNTAGGED_HDR_LEN);
	unsigned h = ep->ord_head % ORD_MAX;
	if (fi->payload_len != 0 || mo != 0 || !fi->last)
		return rx_fault(ep, fi, RNIC_TERM_DDP_U_INVALID_MO);
	if (ep->ord_head == ep->ord_tail || !ep->ord[h].atomic ||
	    rte_be_to_cpu_32(r->orig_req_id) != ep->ord[h].req_id)
		return rx_fault(ep, fi, RNIC_TERM_RDMAP_OPCODE);
	memcpy(ep->aresp, r, sizeof(ep->aresp));
	ep->place = ep->aresp;
	return 0;
}

/* Terminate: its control word and what it quotes, as far as they fit. */
static int rx_hdr_term(struct rnic_iw_ep *ep, const struct rnic_fpdu_info *fi, uint32_t mo)
{
	(void)mo;
	uint32_t fixed = fi->hdr_len - RNIC_DDP_UNTAGGED_HDR_LEN;
	if (fixed > sizeof(ep->term_in) || fixed + fi->payload_len > sizeof(ep->term_in))
		return RNIC_FPDU_SKIP;
	memcpy(ep->term_in, fi->hdr + RNIC_DDP_UNTAGGED_HDR_LEN, fixed);
	ep->place = ep->term_in + fixed;
	return 0;
}

/* The untagged checks every opcode shares: its queue (RFC 5040 4.3,
 * RFC 7306) and, TCP delivering in order, exactly the next MSN of it.
 * @return 0 with *mo set, or RNIC_FPDU_SKIP. */
static int rx_untagged(struct rnic_iw_ep *ep, const struct rnic_fpdu_info *fi, uint32_t *mo)
{
	const struct rnic_ddp_untagged_hdr *u = (const void *)fi->hdr;
	uint32_t qn = rte_be_to_cpu_32(u->qn);
	if (qn != rnic_rdmap_op(fi->opcode)->qn)
		return rx_fault(ep, fi, RNIC_TERM_DDP_U_INVALID_QN);
	if (rte_be_to_cpu_32(u->msn) != ep->rx_msn[qn])
		return rx_fault(ep, fi, RNIC_TERM_DDP_U_MSN_RANGE);
	*mo = rte_be_to_cpu_32(u->mo);
	return 0;
}

/* Copy @p len bytes to offset @p off of the receive's scatter list. */
static void scatter(const struct rnic_rwqe *r, uint32_t off, const uint8_t *data,
		    uint32_t len)
{
	for (uint32_t i = 0; i < r->num_sge && len > 0; i++) {
		if (off >= r->sge[i].length) {
			off -= r->sge[i].length;
			continue;
		}
		uint32_t take = r->sge[i].length - off < len ? r->sge[i].length - off : len;
		memcpy((uint8_t *)(uintptr_t)r->sge[i].addr + off, data, take);
		data += take;
		len -= take;
		off = 0;
	}
}

static int frx_payload(void *arg, const struct rnic_fpdu_info *fi, uint32_t off,
		       const uint8_t *data, uint32_t len)
{
	struct rnic_iw_ep *ep = arg;
	(void)fi;
	if (ep->scatter || ep->place)
		__atomic_store_n(&ep->xfer->bytes_in, ep->xfer->bytes_in + len, __ATOMIC_RELAXED);
	if (ep->scatter)
		scatter(ep->cur, ep->place_mo + off, data, len);
	else if (ep->place)
		memcpy(ep->place + off, data, len);
	return 0;
}

/* A Read Request: check the source, queue the Read Responses. */
static void serve_read(struct rnic_iw_ep *ep, const uint8_t *hdr, uint16_t seg_len)
{
	const struct rnic_rdmap_read_req_hdr *r = (const void *)ep->rreq;
	enum rnic_term_cause cause;
	uint32_t len = rte_be_to_cpu_32(r->rdma_rd_sz);
	uint64_t src_to = rte_be_to_cpu_64(r->src_to);
	const uint8_t *src = iw_mr_check(ep, rte_be_to_cpu_32(r->src_stag), src_to, len,
					 IBV_ACCESS_REMOTE_READ, &cause, false);
	/* the Terminate of an error here quotes the Read Request header */
	struct rnic_term_offender off = { .ddp_hdr = hdr, .ddp_seg_len = seg_len,
					  .read_req = ep->rreq };
	if (src == NULL) {
		iw_terminate_off(ep, cause, &off);
		return;
	}
	/* more reads in service than we advertised (IRD): the peer broke
	 * the negotiated limit (RFC 5040 section 6.8) */
	if (ep->inreads >= ep->res.ird || !iw_job_room(ep, 2)) {
		iw_terminate_off(ep, RNIC_TERM_RDMAP_CATASTROPHIC_STREAM, &off);
		return;
	}
	struct job *j = iw_job_next(ep);
	j->kind = JOB_READ_RESP;
	j->one = (struct ibv_sge){ (uint64_t)(uintptr_t)src, len, 0 };
	j->sge = &j->one;
	j->num_sge = 1;
	j->len = len;
	j->stag = rte_be_to_cpu_32(r->sink_stag);
	j->to = rte_be_to_cpu_64(r->sink_to);
	ep->job_tail++;
	ep->inreads++;
	iw_pump(ep);
}

/* FetchAdd with an Add Mask: a set bit ends a field, the carry out of it
 * is dropped (0: one 64-bit addition). */
static uint64_t masked_add(uint64_t a, uint64_t b, uint64_t mask)
{
	if (mask == 0)
		return a + b;
	uint64_t r = 0, c = 0;
	for (unsigned i = 0; i < 64; i++) {
		uint64_t x = (a >> i) & 1, y = (b >> i) & 1;
		r |= (x ^ y ^ c) << i;
		c = (x & y) | (c & (x ^ y));
		if ((mask >> i) & 1)
			c = 0;
	}
	return r;
}

/* An Atomic Request (RFC 7306): check the target, run the operation on
 * the host word, queue the Atomic Response behind whatever Read Responses
 * are queued (responses leave in request order). */
static void serve_atomic(struct rnic_iw_ep *ep, const uint8_t *hdr, uint16_t seg_len)
{
	const struct rnic_rdmap_atomic_req_hdr *r = (const void *)ep->areq;
	enum rnic_term_cause cause;
	uint8_t op = rnic_atomic_op(r);
	uint64_t to = rte_be_to_cpu_64(r->remote_to);
	if (op != RNIC_ATOMIC_FETCH_ADD && op != RNIC_ATOMIC_SWAP && op != RNIC_ATOMIC_CMP_SWAP) {
		iw_terminate(ep, RNIC_TERM_RDMAP_OP_UNSPEC, hdr, seg_len);
		return;
	}
	uint8_t *p = iw_mr_check(ep, rte_be_to_cpu_32(r->remote_stag), to, 8,
				 IBV_ACCESS_REMOTE_ATOMIC, &cause, false);
	if (p == NULL) {
		iw_terminate(ep, cause, hdr, seg_len);
		return;
	}
	/* the word must be 8-byte aligned: a misaligned one is outside
	 * anything an atomic may address */
	if ((to & 7) != 0 || ((uintptr_t)p & 7) != 0) {
		iw_terminate(ep, RNIC_TERM_RDMAP_BASE_BOUNDS, hdr, seg_len);
		return;
	}
	/* IRD covers Reads and Atomics together */
	if (ep->inreads >= ep->res.ird || !iw_job_room(ep, 2)) {
		iw_terminate(ep, RNIC_TERM_RDMAP_CATASTROPHIC_STREAM, hdr, seg_len);
		return;
	}
	uint64_t data = rte_be_to_cpu_64(r->add_swap_data);
	uint64_t dmask = rte_be_to_cpu_64(r->add_swap_mask);
	uint64_t cmp = rte_be_to_cpu_64(r->compare_data);
	uint64_t cmask = rte_be_to_cpu_64(r->compare_mask);
	uint64_t *w = (uint64_t *)(void *)p;
	uint64_t old = __atomic_load_n(w, __ATOMIC_RELAXED), nv;
	/* other QPs, on other workers, and the host may touch the word */
	do {
		if (op == RNIC_ATOMIC_FETCH_ADD)
			nv = masked_add(old, data, dmask);
		else if (op == RNIC_ATOMIC_SWAP || ((old ^ cmp) & cmask) == 0)
			nv = (old & ~dmask) | (data & dmask);
		else
			nv = old;   /* compare failed: the word stays */
	} while (!__atomic_compare_exchange_n(w, &old, nv, false, __ATOMIC_SEQ_CST,
					      __ATOMIC_RELAXED));
	__atomic_store_n(&ep->xfer->bytes_in, ep->xfer->bytes_in + 8, __ATOMIC_RELAXED);
	struct job *j = iw_job_next(ep);
	j->kind = JOB_ATOMIC_RESP;
	j->req_id = rte_be_to_cpu_32(r->req_id);
	j->orig = old;
	ep->job_tail++;
	ep->inreads++;
	iw_pump(ep);
}

/* An answer completed our oldest Read or Atomic: its ORD slot is free,
 * so work the QP held back may go. */
static void rx_ord_freed(struct rnic_iw_ep *ep)
{
	if (ep->hooks && ep->hooks->tx_room && ep->state == EP_RTS)
		ep->hooks->tx_room(ep->qp);
}

/* An RDMA Write segment: what an Immediate Data message right behind the
 * Write completes with (RFC 7306 Write with Immediate). */
static int rx_done_write(struct rnic_iw_ep *ep, const struct rnic_fpdu_info *fi)
{
	ep->write_acc += fi->payload_len;
	if (fi->last) {
		ep->after_write = true;
		ep->last_write_len = (uint32_t)ep->write_acc;
		ep->write_acc = 0;
	}
	return 0;
}

/* Immediate Data: behind a Write it is the Write's completion at the data
 * sink (libibverbs RECV_RDMA_WITH_IMM, byte_len the Write's length);
 * otherwise (Send with Immediate) a receive of 0 bytes. */
static int rx_done_imm(struct rnic_iw_ep *ep, const struct rnic_fpdu_info *fi)
{
	struct ibv_wc wc = { .wr_id = ep->cur->wr_id, .status = IBV_WC_SUCCESS,
			     .opcode = IBV_WC_RECV, .qp_num = ep->qpn,
			     .wc_flags = IBV_WC_WITH_IMM };
	memcpy(&wc.imm_data, ep->imm_in, sizeof(wc.imm_data));
	if (ep->after_write) {
		wc.opcode = IBV_WC_RECV_RDMA_WITH_IMM;
		wc.byte_len = ep->last_write_len;
	}
	ep->after_write = false;
	ep->in_msg = false;
	ep->rx_msn[RNIC_DDP_QN_SEND]++;
	iw_complete_wc(ep, &wc, rnic_rdmap_op(fi->opcode)->solicited);
	return 0;
}

/* The last segment of a Send completes its receive; a Send with
 * Invalidate first invalidates the STag it names (a type 2 window of our
 * PD bound to this QP: never an MR or a type 1 window), and one that may
 * not completes in error, is counted (inv_refused) and ends the stream
 * with a Terminate; the STag stays valid. */
static int rx_done_send(struct rnic_iw_ep *ep, const struct rnic_fpdu_info *fi)
{
	if (!fi->last)
		return 0;
	const struct rnic_rdmap_op_info *oi = rnic_rdmap_op(fi->opcode);
	const struct rnic_ddp_untagged_hdr *u = (const void *)fi->hdr;
	struct ibv_wc wc = { .wr_id = ep->cur->wr_id, .status = IBV_WC_SUCCESS,
			     .opcode = IBV_WC_RECV, .qp_num = ep->qpn,
			     .byte_len = rte_be_to_cpu_32(u->mo) + fi->payload_len };
	enum rnic_stag_fault f = RNIC_STAG_OK;
	if (oi->invalidates) {
		uint32_t stag = rte_be_to_cpu_32(u->inv_stag);
		f = rnic_stag_invalidate_remote(ep->st, stag, ep->pd, ep->qpn);
		if (f != RNIC_STAG_OK) {
			iw_count(&iw_stack(ep->st)->inv_refused);
			wc.status = IBV_WC_REM_INV_REQ_ERR;
		} else {
			wc.wc_flags |= IBV_WC_WITH_INV;
			wc.invalidated_rkey = stag;
		}
	}
	ep->in_msg = false;
	ep->rx_msn[RNIC_DDP_QN_SEND]++;
	iw_complete_wc(ep, &wc, oi->solicited);
	if (f != RNIC_STAG_OK)
		iw_terminate(ep, rnic_term_inv_fault(f), fi->hdr, fi->ulpdu_len);
	return 0;
}

/* A Read Response segment is placed (rx_hdr_tagged checked it against
 * the oldest Read): the last completes that Read, which it filled. */
static int rx_done_read_resp(struct rnic_iw_ep *ep, const struct rnic_fpdu_info *fi)
{
	if (ep->ord_head == ep->ord_tail)
		return 0;
	unsigned i = ep->ord_head % ORD_MAX;
	ep->ord[i].placed += fi->payload_len;
	if (!fi->last)
		return 0;
	ep->ord_head++;
	if (ep->ord[i].signaled)
		iw_complete(ep, ep->ord[i].wr_id, IBV_WC_RDMA_READ, IBV_WC_SUCCESS, ep->ord[i].len);
	rx_ord_freed(ep);
	return 0;
}

static int rx_done_read_req(struct rnic_iw_ep *ep, const struct rnic_fpdu_info *fi)
{
	ep->rx_msn[RNIC_DDP_QN_READ_REQ]++;
	serve_read(ep, fi->hdr, fi->ulpdu_len);
	return 0;
}

static int rx_done_atomic_req(struct rnic_iw_ep *ep, const struct rnic_fpdu_info *fi)
{
	ep->rx_msn[RNIC_DDP_QN_READ_REQ]++;
	serve_atomic(ep, fi->hdr, fi->ulpdu_len);
	return 0;
}

/* Atomic Response: the original value goes to the result buffer, which
 * was checked (lkey, local write) at post time and stays registered until
 * the work completes. */
static int rx_done_atomic_resp(struct rnic_iw_ep *ep, const struct rnic_fpdu_info *fi)
{
	(void)fi;
	const struct rnic_rdmap_atomic_resp_hdr *r = (const void *)ep->aresp;
	unsigned i = ep->ord_head++ % ORD_MAX;
	uint64_t orig = rte_be_to_cpu_64(r->orig_remote_data);
	ep->rx_msn[RNIC_DDP_QN_ATOMIC_RESP]++;
	memcpy((void *)(uintptr_t)ep->ord[i].res_addr, &orig, sizeof(orig));
	__atomic_store_n(&ep->xfer->bytes_in, ep->xfer->bytes_in + 8, __ATOMIC_RELAXED);
	if (ep->ord[i].signaled)
		iw_complete(ep, ep->ord[i].wr_id, (enum ibv_wc_opcode)ep->ord[i].wc_op,
			    IBV_WC_SUCCESS, 8);
	rx_ord_freed(ep);
	return 0;
}

/* The peer's Terminate ends the stream. */
static int rx_done_term(struct rnic_iw_ep *ep, const struct rnic_fpdu_info *fi)
{
	(void)fi;
	__atomic_store_n(&ep->xfer->terms_in, ep->xfer->terms_in + 1, __ATOMIC_RELAXED);
	iw_count(&iw_stack(ep->st)->terms_in);
	ep->rx_msn[RNIC_DDP_QN_TERMINATE]++;
	iw_debug("Terminate received: %02x %02x %02x %02x", ep->term_in[0],
		 ep->term_in[1], ep->term_in[2], ep->term_in[3]);
	iw_ep_close(ep, -EPROTO);
	return -EPROTO;
}

/*
 * The receive handlers of each opcode: hdr checks an FPDU's header and
 * sets where its payload goes (@p mo: the untagged MO, 0 when tagged);
 * done acts once its CRC is good. What the opcodes are (queue, placement,
 * SE, invalidation) comes from rdmap_op.c; this is the column that table
 * cannot hold, since the framing code builds without the endpoint.
 */
struct rx_handler {
	int (*hdr)(struct rnic_iw_ep *ep, const struct rnic_fpdu_info *fi, uint32_t mo);
	int (*done)(struct rnic_iw_ep *ep, const struct rnic_fpdu_info *fi);
};

static const struct rx_handler rx_handlers[RNIC_RDMAP_OPCODE_MASK + 1] = {
	[RNIC_RDMAP_OP_WRITE] = { rx_hdr_tagged, rx_done_write },
	[RNIC_RDMAP_OP_READ_REQ] = { rx_hdr_read_req, rx_done_read_req },
	[RNIC_RDMAP_OP_READ_RESP] = { rx_hdr_tagged, rx_done_read_resp },
	[RNIC_RDMAP_OP_SEND] = { rx_hdr_send, rx_done_send },
	[RNIC_RDMAP_OP_SEND_INV] = { rx_hdr_send, rx_done_send },
	[RNIC_RDMAP_OP_SEND_SE] = { rx_hdr_send, rx_done_send },
	[RNIC_RDMAP_OP_SEND_SE_INV] = { rx_hdr_send, rx_done_send },
	[RNIC_RDMAP_OP_TERMINATE] = { rx_hdr_term, rx_done_term },
	[RNIC_RDMAP_OP_IMM_DATA] = { rx_hdr_imm, rx_done_imm },
	[RNIC_RDMAP_OP_IMM_DATA_SE] = { rx_hdr_imm, rx_done_imm },
	[RNIC_RDMAP_OP_ATOMIC_REQ] = { rx_hdr_atomic_req, rx_done_atomic_req },
	[RNIC_RDMAP_OP_ATOMIC_RESP] = { rx_hdr_atomic_resp, rx_done_atomic_resp },
};

/* The parser has an FPDU's header: decide where its payload goes. */
static int frx_hdr(void *arg, const struct rnic_fpdu_info *fi)
{
	struct rnic_iw_ep *ep = arg;
	const struct rx_handler *h = &rx_handlers[fi->opcode & RNIC_RDMAP_OPCODE_MASK];
	uint32_t mo = 0;
	ep->place = NULL;
	ep->scatter = false;
	/* after our Terminate the stream is dead (RFC 5040 section 5.4.2):
	 * nothing behind the offending segment is placed or acted on */
	if (ep->term_err)
		return RNIC_FPDU_SKIP;
	if (ep->state == EP_RTR_WAIT)
		return rtr_hdr(ep, fi);
	/* the parser lets only known opcodes in the right buffer model by */
	if (h->hdr == NULL || rnic_rdmap_op(fi->opcode)->tagged != fi->tagged)
		return rx_fault(ep, fi, RNIC_TERM_RDMAP_OPCODE);
	if (!fi->tagged) {
		int rc = rx_untagged(ep, fi, &mo);
		if (rc != 0)
			return rc;
	}
	return h->hdr(ep, fi, mo);
}

/* The FPDU is in and its CRC good: complete, serve or close. */
static int frx_done(void *arg, const struct rnic_fpdu_info *fi)
{
	struct rnic_iw_ep *ep = arg;
	const struct rnic_rdmap_op_info *oi = rnic_rdmap_op(fi->opcode);
	const struct rx_handler *h = &rx_handlers[fi->opcode & RNIC_RDMAP_OPCODE_MASK];
	ep->stats_fpdus_in++;
	if (ep->rtr_in) {
		rtr_done(ep);
		return 0;
	}
	bool placed = ep->place != NULL || ep->scatter;
	if (fi->last && placed && oi->new_op)
		__atomic_store_n(&ep->xfer->ops_in, ep->xfer->ops_in + 1, __ATOMIC_RELAXED);
	if ((!placed && oi->place != RNIC_PLACE_TERM) || h->done == NULL)
		return 0;   /* skipped: a Terminate is on its way */
	/* only an Immediate Data message right behind a Write completes it */
	if (fi->last && h->done != rx_done_imm)
		ep->after_write = false;
	return h->done(ep, fi);
}

const struct rnic_fpdu_rx_ops iw_frx_ops = {
	.hdr = frx_hdr, .payload = frx_payload, .done = frx_done,
};

/* Stream bytes in RDMA mode: run the FPDU parser over them. A migration
 * query parks the rest; a stream error sends its Terminate. @return true
 * to go on with the bytes left in *p and *len. */
bool iw_rx_input(struct rnic_iw_ep *ep, const uint8_t **p, size_t *len)
{
	size_t used = 0;
	int rc = rnic_fpdu_rx_input(&ep->frx, *p, *len, &used);
	*p += used;
	*len -= used;
	if (rc == -EINPROGRESS) {   /* a migration query: park the rest */
		ep->mig->park_left = *len;
		return false;
	}
	if (rc == -EAGAIN || (rc == 0 && used == 0))
		return false;
	if (rc < 0 && ep->state != EP_CLOSED) {
		iw_debug("FPDU stream error: rc %d err %d (%s)", rc, ep->frx.err,
			 rnic_term_name(ep->frx.err));
		struct rnic_term_offender off;
		rnic_fpdu_rx_offender(&ep->frx, &off);
		iw_terminate_off(ep, ep->frx.err, &off);
		return false;
	}
	return true;
}

/* Parse the chain @p head from segment @p s, offset @p off. A migration
 * query parks the rest (the chain is kept) and holds the TCP stream: what
 * arrives meanwhile waits in TCP, in order. Consumes @p head. */
void iw_ep_feed(struct rnic_iw_ep *ep, struct rte_mbuf *head, struct rte_mbuf *s,
		uint32_t off)
{
	for (; s != NULL && ep->state != EP_CLOSED; s = s->next, off = 0) {
		iw_ep_input(ep, rte_pktmbuf_mtod_offset(s, const uint8_t *, off), s->data_len - off);
		if (ep->mig_wait && ep->state != EP_CLOSED) {
			ep->mig->park = head;
			ep->mig->park_seg = s;
			ep->mig->park_off = (uint32_t)(s->data_len - ep->mig->park_left);
			rnic_tcp_hold(ep->c, true);
			return;
		}
	}
	rte_pktmbuf_free(head);
}

/* The control component answered (on this worker): the waiting FPDU's
 * header is checked again, then the parked bytes and what TCP held. */
static void ep_mig_done(struct rnic_stag_mig *q)
{
	struct iw_mig *m = (struct iw_mig *)((char *)q - offsetof(struct iw_mig, q));
	struct rnic_iw_ep *ep = m->ep;
	struct rte_mbuf *head = m->park, *s = m->park_seg;
	uint32_t off = m->park_off;
	ep->mig_wait = false;
	ep->mig_answered = true;
	m->park = NULL;
	m->park_seg = NULL;
	/* the query's busy reference keeps the endpoint until the end here */
	if (ep->state != EP_CLOSED) {
		static const uint8_t none[1];
		size_t used;
		int rc = rnic_fpdu_rx_input(&ep->frx, none, 0, &used);
		ep->mig_answered = false;
		if (rc < 0 && rc != -EAGAIN && rc != -EINPROGRESS && ep->state != EP_CLOSED) {
			struct rnic_term_offender of;
			rnic_fpdu_rx_offender(&ep->frx, &of);
			iw_terminate_off(ep, ep->frx.err, &of);
		}
	}
	/* the header ran with the answer, so nothing waits yet: the parked
	 * bytes go on (and may park again, at a later FPDU) */
	if (head != NULL && ep->state != EP_CLOSED)
		iw_ep_feed(ep, head, s, off);
	else
		rte_pktmbuf_free(head);
	if (!ep->mig_wait && ep->state != EP_CLOSED && ep->c != NULL)
		rnic_tcp_hold(ep->c, false);   /* what came meanwhile, in order */
	if (--ep->busy == 0 && ep->state == EP_CLOSED)
		iw_ep_free(ep);
}

