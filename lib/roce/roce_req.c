/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * RoCEv2 requester (IBTA 9.7.4, 9.7.6): send work requests become request
 * packets with consecutive PSNs, assigned when the request is posted.
 *
 * States of the send ring (free-running indices into req.wq):
 *   [head, next)   transmitted, waiting for an ACK or a response
 *   next           being transmitted (next_pkt packets already out)
 *   (next, tail)   posted, not yet transmitted
 *
 * Recovery is go-back-N: a sequence NAK, a gap in Read Responses or the
 * local ACK timeout moves next back to the first PSN the responder lacks,
 * and transmission resumes from there with the same PSNs. A Read resumes
 * with a new Read Request for the remaining bytes (IBTA 9.7.4.1.5). The
 * retry count is spent by timeouts and sequence NAKs, the RNR retry count
 * by RNR NAKs; both are restored when the responder makes progress.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_malloc.h>

#include "engine/worker.h"
#include "roce/psn.h"
#include "roce/roce.h"
#include "rnic/rnic_roce.h"

/* RNR timer codes in microseconds (IBTA table 45); 0 means 655.36 ms. */
static const uint32_t rnr_table_us[32] = {
	655360, 10, 20, 30, 40, 60, 80, 120, 160, 240, 320, 480, 640, 960,
	1280, 1920, 2560, 3840, 5120, 7680, 10240, 15360, 20480, 30720,
	40960, 61440, 81920, 122880, 163840, 245760, 327680, 491520,
};

uint32_t roce_rnr_us(unsigned code)
{
	return rnr_table_us[code & 31];
}

static inline struct roce_wqe *wqe_at(struct roce_qp *rq, uint32_t i)
{
	return &rq->req.wq[i & rq->qp->sq_mask];
}

static uint32_t npkts_of(uint32_t len, uint32_t pmtu)
{
	return len == 0 ? 1 : (len + pmtu - 1) / pmtu;
}

static void timer_cb(struct rnic_timer *t, void *arg);

static int trace_on = -1;

void roce_trace(struct roce_qp *rq, enum roce_trace_kind kind, uint32_t psn)
{
	if (trace_on < 0)
		trace_on = getenv("RNIC_ROCE_DEBUG") != NULL;
	if (!trace_on)
		return;
	if (rq->trace == NULL) {
		rq->trace = rte_zmalloc("roce_trace", sizeof(*rq->trace), 0);
		if (rq->trace == NULL)
			return;   /* a debugging aid: the event goes unrecorded */
	}
	const struct roce_req *r = &rq->req;
	struct roce_trace_ev *ev = &rq->trace->ev[rq->trace->n++ % ROCE_TRACE];
	*ev = (struct roce_trace_ev){ .us = rnic_tsc_to_us(rq->w->now_tsc), .kind = (uint8_t)kind,
				      .retry_left = r->retry_left, .psn = psn };
	if (kind >= TR_RESP_NAK && kind <= TR_RESP_DUP) {
		ev->a = rq->resp.epsn;
		return;
	}
	ev->a = r->acked;
	if (r->next != r->tail)
		ev->b = rnic_psn_add(r->wq[r->next & rq->qp->sq_mask].first_psn, r->next_pkt);
	else
		ev->b = r->psn;
	if (r->head != r->tail) {
		const struct roce_wqe *e = &r->wq[r->head & rq->qp->sq_mask];
		ev->c = e->first_psn;
		ev->d = e->resp_next;
	}
}

void roce_trace_print(const struct roce_qp *rq, FILE *f)
{
	static const char *const names[TR_KINDS] = {
		"timeout", "nak_seq", "nak_copy", "read_gap", "ack_gap", "restore", "rnr",
		"resp_nak", "resp_silent", "resp_dup", "excused" };
	if (rq->trace == NULL)
		return;
	uint32_t n = rq->trace->n, from = n > ROCE_TRACE ? n - ROCE_TRACE : 0;
	for (uint32_t i = from; i != n; i++) {
		const struct roce_trace_ev *ev = &rq->trace->ev[i % ROCE_TRACE];
		if (ev->kind >= TR_RESP_NAK && ev->kind <= TR_RESP_DUP)
			fprintf(f, "  qp %u %12" PRIu64 " us %-11s psn %#x epsn %#x\n",
				rq->qp->qp.qp_num, ev->us, names[ev->kind], ev->psn, ev->a);
		else
			fprintf(f, "  qp %u %12" PRIu64 " us %-11s psn %#x retry %u acked %#x "
				"next %#x head %#x+%u\n", rq->qp->qp.qp_num, ev->us,
				names[ev->kind], ev->psn, ev->retry_left, ev->a, ev->b, ev->c,
				ev->d);
	}
}

/* One past the last response of the Read chunk that packet @p i is in. */
static uint32_t read_chunk_end(const struct roce_wqe *e, uint32_t i)
{
	return RTE_MIN((i / ROCE_READ_CHUNK + 1) * ROCE_READ_CHUNK, e->npkts);
}

void roce_req_init(struct roce_qp *rq, uint32_t sq_psn)
{
	struct roce_req *r = &rq->req;
	struct roce_wqe *wq = r->wq;
	memset(r, 0, sizeof(*r));
	r->wq = wq;
	r->psn = sq_psn & RNIC_PSN_MASK;
	r->sent_end = r->psn;
	r->acked = rnic_psn_sub(r->psn, 1);
	r->retry_left = rq->retry_cnt;
	r->rnr_left = rq->rnr_retry;
	r->excused_left = ROCE_EXCUSED_MAX;
	rnic_timer_init(&r->timer, timer_cb, rq);
}

bool roce_req_has_room(struct roce_qp *rq)
{
	return rq->req.tail - rq->req.head < rq->qp->sq_size;
}

int roce_req_post(struct roce_qp *rq, const struct ibv_send_wr *wr)
{
	struct roce_req *r = &rq->req;
	if (!roce_req_has_room(rq))
		return -ENOMEM;
	struct roce_wqe *e = wqe_at(rq, r->tail);
	uint64_t len = 0;
	for (int i = 0; i < wr->num_sge; i++)
		len += wr->sg_list[i].length;
	if (len > (1u << 31))
		return -EINVAL;   /* IBA: a message is at most 2^31 bytes */
	memset(e, 0, sizeof(*e));
	e->wr = *wr;
	e->len = (uint32_t)len;
	switch (wr->opcode) {
	case IBV_WR_RDMA_READ:
		e->rd_atomic = true;
		e->npkts = npkts_of(e->len, rq->pmtu);
		break;
	case IBV_WR_ATOMIC_CMP_AND_SWP:
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		e->rd_atomic = true;
		e->npkts = 1;
		break;
	default:
		e->npkts = npkts_of(e->len, rq->pmtu);
		break;
	}
	e->first_psn = r->psn;
	r->psn = rnic_psn_add(r->psn, e->npkts);
	r->tail++;
	return 0;
}

/* The request opcode of packet @p i of @p n of a Send or Write. */
static uint8_t req_opcode(enum ibv_wr_opcode op, uint32_t i, uint32_t n)
{
	bool first = i == 0, last = i == n - 1;
	bool write = op == IBV_WR_RDMA_WRITE || op == IBV_WR_RDMA_WRITE_WITH_IMM;
	bool imm = op == IBV_WR_RDMA_WRITE_WITH_IMM || op == IBV_WR_SEND_WITH_IMM;
	bool inv = op == IBV_WR_SEND_WITH_INV;
	if (first && last) {
		if (write)
			return imm ? RNIC_ROCE_OP_RC_WRITE_ONLY_IMM : RNIC_ROCE_OP_RC_WRITE_ONLY;
		return imm ? RNIC_ROCE_OP_RC_SEND_ONLY_IMM :
		       inv ? RNIC_ROCE_OP_RC_SEND_ONLY_INV : RNIC_ROCE_OP_RC_SEND_ONLY;
	}
	if (first)
		return write ? RNIC_ROCE_OP_RC_WRITE_FIRST : RNIC_ROCE_OP_RC_SEND_FIRST;
	if (!last)
		return write ? RNIC_ROCE_OP_RC_WRITE_MIDDLE : RNIC_ROCE_OP_RC_SEND_MIDDLE;
	if (write)
		return imm ? RNIC_ROCE_OP_RC_WRITE_LAST_IMM : RNIC_ROCE_OP_RC_WRITE_LAST;
	return imm ? RNIC_ROCE_OP_RC_SEND_LAST_IMM :
	       inv ? RNIC_ROCE_OP_RC_SEND_LAST_INV : RNIC_ROCE_OP_RC_SEND_LAST;
}

/* Fill the extended headers of @p opcode for @p e; a RETH names the DMA
 * range [@p off, @p off + @p dma_len) of the message. */
static void fill_hdrs(struct rte_mbuf *m, uint8_t opcode, const struct roce_wqe *e,
		      uint32_t off, uint32_t dma_len)
{
	struct rnic_roce_pkt p = { .bth = rte_pktmbuf_mtod(m, uint8_t *), .opcode = opcode };
	struct rnic_roce_reth *reth = rnic_roce_pkt_reth(&p);
	struct rnic_roce_atmeth *atm = rnic_roce_pkt_atmeth(&p);
	struct rnic_roce_immdt *imm = rnic_roce_pkt_immdt(&p);
	struct rnic_roce_ieth *ieth = rnic_roce_pkt_ieth(&p);
	if (reth != NULL) {
		rnic_roce_reth_set_va(reth, e->wr.wr.rdma.remote_addr + off);
		rnic_roce_reth_set_rkey(reth, e->wr.wr.rdma.rkey);
		rnic_roce_reth_set_len(reth, dma_len);
	}
	if (atm != NULL) {
		bool cas = e->wr.opcode == IBV_WR_ATOMIC_CMP_AND_SWP;
		rnic_roce_atmeth_set(atm, e->wr.wr.atomic.remote_addr, e->wr.wr.atomic.rkey,
				     cas ? e->wr.wr.atomic.swap : e->wr.wr.atomic.compare_add,
				     cas ? e->wr.wr.atomic.compare_add : 0);
	}
	if (imm != NULL)
		rnic_roce_immdt_set_imm(imm, e->wr.imm_data);
	if (ieth != NULL)
		rnic_roce_ieth_set_rkey(ieth, e->wr.invalidate_rkey);
}

/* Bytes packet next_pkt of @p e puts on the wire (DCQCN pacing): its
 * payload and at most the headers a request carries. */
static uint32_t wire_bytes(const struct roce_qp *rq, const struct roce_wqe *e)
{
	uint32_t off = rq->req.next_pkt * rq->pmtu;
	bool data = e->wr.opcode != IBV_WR_RDMA_READ &&
		    e->wr.opcode != IBV_WR_ATOMIC_CMP_AND_SWP &&
		    e->wr.opcode != IBV_WR_ATOMIC_FETCH_AND_ADD;
	uint32_t plen = data && e->len > off ? RTE_MIN(rq->pmtu, e->len - off) : 0;
	return plen + 14u + RNIC_ROCE_OVERHEAD;
}

/* Emit packet next_pkt of @p e. @return 0, -ENOBUFS (no mbuf) or -EAGAIN
 * (a probe the port refused); on an error nothing was sent. */
static int emit(struct roce_qp *rq, struct roce_wqe *e)
{
	struct roce_req *r = &rq->req;
	uint32_t i = r->next_pkt, psn = rnic_psn_add(e->first_psn, i);
	uint32_t off = i * rq->pmtu, plen = 0;
	uint8_t opcode;
	bool last;
	switch (e->wr.opcode) {
	case IBV_WR_RDMA_READ:
		opcode = RNIC_ROCE_OP_RC_READ_REQUEST;
		last = read_chunk_end(e, i) == e->npkts;
		break;
	case IBV_WR_ATOMIC_CMP_AND_SWP:
		opcode = RNIC_ROCE_OP_RC_CMP_SWAP;
		last = true;
		break;
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		opcode = RNIC_ROCE_OP_RC_FETCH_ADD;
		last = true;
		break;
	default:
		opcode = req_opcode(e->wr.opcode, i, e->npkts);
		last = i == e->npkts - 1;
		plen = RTE_MIN(rq->pmtu, e->len - off);
		break;
	}
	bool ackreq = last || ++r->since_ackreq >= ROCE_ACKREQ_EVERY || r->probing;
	bool se = last && (e->wr.send_flags & IBV_SEND_SOLICITED) &&
		  (rnic_roce_op(opcode)->flags & RNIC_ROCE_OPF_RECV_WQE);
	uint8_t *hdr, *pay;
	struct rte_mbuf *m = roce_pkt_new(rq, opcode, psn, ackreq, se, plen, &hdr, &pay);
	if (m == NULL)
		return -ENOBUFS;
	if (ackreq)
		r->since_ackreq = 0;
	if (opcode == RNIC_ROCE_OP_RC_READ_REQUEST)   /* this chunk's bytes only */
		fill_hdrs(m, opcode, e, off,
			  RTE_MIN(e->len - off, (read_chunk_end(e, i) - i) * rq->pmtu));
	else   /* a Write's RETH (FIRST/ONLY) names the whole message */
		fill_hdrs(m, opcode, e, 0, e->len);
	if (plen > 0)
		roce_sgl_copy_out(e->wr.sg_list, (uint32_t)e->wr.num_sge, off, pay, plen);
	if (r->probing) {
		/* the probe is the only packet until the responder answers: lost
		 * at our own full transmit queue, nothing would ask again before
		 * the next timeout, a retry spent on a frame never sent. Send it
		 * now and, when the port refused it, roll back (nothing of the
		 * send state has moved yet) and try again on the next poll, as
		 * rxe's requester does when its transmit fails. */
		if (roce_pkt_send_now(rq, m) != 0) {
			rq->rw->c.probe_refused++;
			return -EAGAIN;
		}
	} else {
		roce_pkt_send(rq, m);
	}
	rq->rw->c.req_pkts_out++;
	__atomic_store_n(&rq->qp->xfer.bytes_out, rq->qp->xfer.bytes_out + plen,
			 __ATOMIC_RELAXED);
	if (last)
		__atomic_store_n(&rq->qp->xfer.ops_out, rq->qp->xfer.ops_out + 1,
				 __ATOMIC_RELAXED);
	return 0;
}

/*
 * Move next past the packets of Send or Write @p e (at next) that the
 * responder has acknowledged: a rewind to a Read (its responses lost) or
 * an atomic goes back over requests behind it that were acknowledged
 * since, and an ACK means they were executed; sending them again only
 * loads a lossy link with duplicates.
 */
static void skip_acked(struct roce_qp *rq, const struct roce_wqe *e)
{
	struct roce_req *r = &rq->req;
	uint32_t acked_in = (uint32_t)rnic_psn_diff(r->acked, e->first_psn) + 1;
	if (acked_in >= e->npkts) {
		r->next++;
		r->next_pkt = 0;
	} else {
		r->next_pkt = acked_in;
	}
	rq->rw->c.acked_skipped++;
}

unsigned roce_req_pump(struct roce_qp *rq, unsigned budget)
{
	struct roce_req *r = &rq->req;
	unsigned sent = 0;
	bool hold = false;
	if (r->rnr_wait)
		return 0;
	while (sent < budget && r->next != r->tail) {
		struct roce_wqe *e = wqe_at(rq, r->next);
		uint32_t psn = rnic_psn_add(e->first_psn, r->next_pkt);
		if (!e->rd_atomic && rnic_psn_le(psn, r->acked)) {
			skip_acked(rq, e);
			continue;
		}
		/* the window counts from the first PSN not acknowledged */
		if (rnic_psn_diff(psn, rnic_psn_next(r->acked)) >= (int32_t)ROCE_TX_WINDOW)
			break;
		bool is_read = e->wr.opcode == IBV_WR_RDMA_READ;
		if (is_read && r->next_pkt < e->resp_next)
			r->next_pkt = e->resp_next;   /* never ask for responses we have */
		if (is_read && r->next_pkt % ROCE_READ_CHUNK != 0)
			e->restarted = true;   /* its answer starts inside a chunk */
		/* a request never asked before counts against ORD */
		bool fresh = is_read ? r->next_pkt >= e->issued_pkts : e->rd_atomic && !e->issued;
		if (fresh && r->rd_out >= rq->max_rd_atomic)
			break;   /* ORD: wait for a Read chunk or atomic to finish */
		/* fenced behind outstanding Reads and atomics: any opcode, the
		 * first time it goes out (a rewind resends what already waited) */
		bool first_time = fresh || rnic_psn_ge(psn, r->sent_end);
		if (e->wr.send_flags & IBV_SEND_FENCE && r->next_pkt == 0 && first_time &&
		    r->rd_out > 0)
			break;
		/* after a timeout one packet (AckReq) asks whether the responder
		 * is there before the window is poured out again */
		if (r->probing && r->probe_sent)
			break;
		/* a next hop ARP has not resolved holds RNIC_ARP_PENDING frames
		 * and drops the rest: a whole window lost at the start of a
		 * connection, found again only by the ACK timeout (268 ms in
		 * rnic-perf, a quarter of a 2 M Write run). One packet goes and
		 * starts ARP; the rest wait, the QP staying active, for the reply */
		if (unlikely(!roce_next_hop_ready(rq))) {
			if (r->hop_wait_sent) {
				rq->rw->c.arp_waits++;
				hold = true;
				break;
			}
			r->hop_wait_sent = true;
		}
		/* DCQCN: paced to the QP's rate (the pacing timer wakes it) */
		uint32_t wire = 0;
		if (unlikely(rq->rw->cc.dcqcn)) {
			wire = wire_bytes(rq, e);
			if (roce_cc_tx_wait(rq, wire))
				break;
		}
		if (emit(rq, e) != 0)
			return budget;   /* no mbuf, or the probe refused: stay
					  * active, retry next loop */
		if (unlikely(wire != 0))
			roce_cc_tx_sent(rq, wire);
		sent++;
		r->sent_since_timeout++;
		r->probe_sent = r->probing;
		if (fresh)
			r->rd_out++;
		if (is_read) {
			uint32_t end = read_chunk_end(e, r->next_pkt);
			if (fresh)
				e->issued_pkts = end;
			psn = rnic_psn_add(e->first_psn, end - 1);
			r->next_pkt = end;
			if (end == e->npkts) {
				r->next++;
				r->next_pkt = 0;
			}
		} else if (e->rd_atomic) {
			e->issued = true;
			r->next++;
			r->next_pkt = 0;
		} else if (++r->next_pkt == e->npkts) {
			r->next++;
			r->next_pkt = 0;
		}
		if (rnic_psn_ge(psn, r->sent_end))
			r->sent_end = rnic_psn_next(psn);
	}
	if (sent > 0 && !rnic_timer_pending(&r->timer))
		roce_req_timer_update(rq);
	return hold ? budget : sent;   /* held: stay active, ask again next poll */
}

/* Read chunks from packet @p from on that were asked for and are not
 * answered are asked again under ORD, not all at once: a rewind must not
 * pour a whole long Read's responses onto a link that is losing them. */
static void unissue_reads(struct roce_qp *rq, uint32_t i, uint32_t from)
{
	struct roce_req *r = &rq->req;
	for (; i != r->tail; i++, from = 0) {
		struct roce_wqe *e = wqe_at(rq, i);
		if (e->wr.opcode != IBV_WR_RDMA_READ)
			continue;
		uint32_t start = RTE_MAX(from, e->resp_next) / ROCE_READ_CHUNK * ROCE_READ_CHUNK;
		if (e->issued_pkts <= start)
			continue;
		uint32_t chunks = (e->issued_pkts - start + ROCE_READ_CHUNK - 1) / ROCE_READ_CHUNK;
		r->rd_out -= RTE_MIN(chunks, r->rd_out);
		e->issued_pkts = start;
	}
}

void roce_req_rewind(struct roce_qp *rq, uint32_t psn)
{
	struct roce_req *r = &rq->req;
	for (uint32_t i = r->head; i != r->tail; i++) {
		struct roce_wqe *e = wqe_at(rq, i);
		if (rnic_psn_in_window(psn, e->first_psn, e->npkts)) {
			r->next = i;
			r->next_pkt = (uint32_t)rnic_psn_diff(psn, e->first_psn);
			unissue_reads(rq, i, r->next_pkt);
			break;
		}
	}
	r->since_ackreq = 0;
	r->probe_sent = false;   /* probing: one packet from each new start */
	r->hop_wait_sent = false;   /* and one to a next hop still unresolved:
				     * it asks ARP again (the frame held before
				     * may have been given up) */
	roce_qp_activate(rq);
}

/* Anything transmitted and not yet acknowledged. */
static bool outstanding(const struct roce_req *r)
{
	return r->head != r->next || r->next_pkt != 0;
}

void roce_req_timer_update(struct roce_qp *rq)
{
	struct roce_req *r = &rq->req;
	if (r->rnr_wait)
		return;
	if (!outstanding(r) || rq->timeout == 0) {
		rnic_timer_cancel(&rq->w->timers, &r->timer);
		return;
	}
	/* 4.096 us * 2^timeout (IBA 9.7.6.1.3), doubled per timeout in a row */
	uint64_t us = ((uint64_t)4096 << rq->timeout << RTE_MIN(r->backoff, ROCE_BACKOFF_MAX)) /
		      1000;
	r->timer_armed_tsc = rq->w->now_tsc;
	r->timer_us = us ? us : 1;
	rnic_timer_arm(&rq->w->timers, &r->timer, rq->w->now_tsc, r->timer_us);
}

void roce_req_rnr_wait(struct roce_qp *rq, uint32_t psn, unsigned code)
{
	struct roce_req *r = &rq->req;
	if (rq->rnr_retry != 7) {   /* 7: retry for ever */
		if (r->rnr_left == 0) {
			rq->rw->c.rnr_retry_exceeded++;
			roce_qp_fatal(rq, IBV_WC_RNR_RETRY_EXC_ERR);
			return;
		}
		r->rnr_left--;
	}
	roce_trace(rq, TR_RNR, psn);
	roce_req_rewind(rq, psn);
	r->rnr_wait = true;
	rnic_timer_arm(&rq->w->timers, &r->timer, rq->w->now_tsc, roce_rnr_us(code));
}

/* The first PSN the responder still owes us an answer for. */
static uint32_t first_unacked(struct roce_qp *rq)
{
	struct roce_req *r = &rq->req;
	struct roce_wqe *e = wqe_at(rq, r->head);
	if (e->rd_atomic)   /* a Read's next response, an atomic's ACK */
		return rnic_psn_add(e->first_psn, e->resp_next);
	uint32_t a = rnic_psn_next(r->acked);
	return rnic_psn_lt(a, e->first_psn) ? e->first_psn : a;
}

/*
 * A timeout that says nothing about the responder spends no retry (up to
 * ROCE_EXCUSED_MAX in a row): after a timeout the requester sends one probe
 * and, if the port refused it, tries again every poll (emit()); if nothing
 * left since, the responder was never asked. Nor when the timer fires more
 * than its whole interval late: this worker was off the CPU (a stall of the
 * shared host), and the answers may be waiting in its receive queue.
 */
static bool timeout_excused(struct roce_qp *rq)
{
	struct roce_req *r = &rq->req;
	uint64_t elapsed = rnic_tsc_to_us(rq->w->now_tsc - r->timer_armed_tsc);
	bool never_asked = r->probing && r->sent_since_timeout == 0;
	bool stalled = elapsed > 2 * r->timer_us;
	if (!(never_asked || stalled) || r->excused_left == 0)
		return false;
	r->excused_left--;
	return true;
}

static void timer_cb(struct rnic_timer *t, void *arg)
{
	struct roce_qp *rq = arg;
	struct roce_req *r = &rq->req;
	(void)t;
	if (rq->state != ROCE_RTS)
		return;
	if (r->rnr_wait) {
		r->rnr_wait = false;
		roce_qp_activate(rq);
		return;
	}
	if (!outstanding(r))
		return;
	rq->rw->c.timeouts++;
	if (timeout_excused(rq)) {
		rq->rw->c.timeouts_excused++;
		roce_trace(rq, TR_EXCUSED, first_unacked(rq));
	} else {
		if (r->retry_left == 0) {
			rq->rw->c.retry_exceeded++;
			roce_qp_fatal(rq, IBV_WC_RETRY_EXC_ERR);
			return;
		}
		r->retry_left--;
		if (r->backoff < UINT8_MAX)
			r->backoff++;
		roce_trace(rq, TR_TIMEOUT, first_unacked(rq));
	}
	r->probing = true;
	r->probe_sent = false;
	r->sent_since_timeout = 0;
	rq->rw->c.retransmits++;
	roce_req_rewind(rq, first_unacked(rq));
	roce_req_timer_update(rq);
}

void roce_req_resend_now(struct roce_qp *rq)
{
	struct roce_req *r = &rq->req;
	if (rq->state != ROCE_RTS || r->rnr_wait || !outstanding(r))
		return;
	/* what was in flight on the failed link is gone: go back now, not a
	 * timeout later, and without spending the retry budget */
	rq->rw->c.retransmits++;
	r->probing = false;
	roce_req_rewind(rq, first_unacked(rq));
	roce_req_timer_update(rq);
}

void roce_req_flush(struct roce_qp *rq, enum ibv_wc_status first)
{
	struct roce_req *r = &rq->req;
	for (; r->head != r->tail; r->head++) {
		struct roce_wqe *e = wqe_at(rq, r->head);
		struct ibv_wc wc = { .wr_id = e->wr.wr_id, .status = first };
		rnic_qp_complete(rq->qp, &wc, false);
		first = IBV_WC_WR_FLUSH_ERR;
	}
	r->next = r->head;
	r->next_pkt = 0;
	r->rd_out = 0;
}
