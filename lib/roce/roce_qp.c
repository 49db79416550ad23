/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * RoCEv2 RC and UD queue pairs behind the transport interface of
 * rdma/qp.h (struct rnic_qp_tops, with the IB CM's calls and address
 * handle resolution), registered with each stack by the RoCE module:
 * modify_qp (RTR, RTS and their attributes), the UDP 4791 receive handler
 * (steering by destination QP, ICRC check, dispatch to the responder or
 * the completer), packet building and transmit, the per-worker poller that
 * emits owed packets, and the /rnic/roce counters.
 *
 * Ownership: a QP is owned by the worker of its send CQ's completion
 * handler from RTR on (the policy of docs/verbs.md, as for iWARP); the
 * RoCE handler's owner() steers every packet for the QP there, whatever
 * queue it arrived on.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_malloc.h>
#include <rte_telemetry.h>
#include <rte_udp.h>

#include "common/objalloc.h"
#include "engine/engine_internal.h"
#include "engine/stack.h"
#include "engine/worker.h"
#include "net/ipv6.h"
#include "net/net.h"
#include "port/port.h"
#include "rnic/rnic_roce.h"
#include "roce/ibcm.h"
#include "roce/ibcm_wire.h"
#include "roce/icrc.h"
#include "roce/psn.h"
#include "roce/roce.h"


/* --- scatter/gather ------------------------------------------------------- */

void roce_sgl_copy_out(const struct ibv_sge *sge, uint32_t nsge, uint32_t off,
		       uint8_t *dst, uint32_t len)
{
	for (uint32_t i = 0; i < nsge && len > 0; i++) {
		if (off >= sge[i].length) {
			off -= sge[i].length;
			continue;
		}
		uint32_t take = RTE_MIN(sge[i].length - off, len);
		memcpy(dst, (const uint8_t *)(uintptr_t)sge[i].addr + off, take);
		dst += take;
		len -= take;
		off = 0;
	}
}

void roce_mbuf_copy(const struct rte_mbuf *m, uint32_t moff, uint8_t *dst, uint32_t len)
{
	const void *p = rte_pktmbuf_read(m, moff, len, dst);
	if (p != NULL && p != dst)
		memcpy(dst, p, len);
}

void roce_sgl_copy_in(const struct ibv_sge *sge, uint32_t nsge, uint32_t off,
		      const struct rte_mbuf *m, uint32_t moff, uint32_t len)
{
	for (uint32_t i = 0; i < nsge && len > 0; i++) {
		if (off >= sge[i].length) {
			off -= sge[i].length;
			continue;
		}
		uint32_t take = RTE_MIN(sge[i].length - off, len);
		roce_mbuf_copy(m, moff, (uint8_t *)(uintptr_t)sge[i].addr + off, take);
		moff += take;
		len -= take;
		off = 0;
	}
}

/* --- packets ---------------------------------------------------------------- */

struct rte_mbuf *roce_pkt_new(struct roce_qp *rq, uint8_t opcode, uint32_t psn,
			      bool ackreq, bool se, uint32_t paylen, uint8_t **hdr,
			      uint8_t **pay)
{
	const struct rnic_roce_opinfo *op = rnic_roce_op(opcode);
	uint32_t pad = (4 - (paylen & 3)) & 3;
	uint32_t len = op->length + paylen + pad + RNIC_ROCE_ICRC_LEN;
	struct rte_mbuf *m = rte_pktmbuf_alloc(rq->port->pool);
	if (m == NULL || len > rte_pktmbuf_tailroom(m) || len > UINT16_MAX) {
		rte_pktmbuf_free(m);
		rq->rw->c.no_mbuf++;
		return NULL;
	}
	uint8_t *b = (uint8_t *)rte_pktmbuf_append(m, (uint16_t)len);
	memset(b, 0, op->length);
	struct rnic_roce_bth *bth = (struct rnic_roce_bth *)b;
	rnic_roce_bth_set_opcode(bth, opcode);
	rnic_roce_bth_set_se(bth, se);
	rnic_roce_bth_set_pad(bth, pad);
	rnic_roce_bth_set_tver(bth, RNIC_ROCE_TVER);
	rnic_roce_bth_set_pkey(bth, RNIC_ROCE_PKEY_DEFAULT);
	rnic_roce_bth_set_dqpn(bth, rq->dest_qpn);
	rnic_roce_bth_set_ackreq(bth, ackreq);
	rnic_roce_bth_set_psn(bth, psn);
	/* the pad is zero on the wire; the ICRC is written when the frame
	 * goes out (icrc_fin): no libc call for a few bytes */
	for (uint32_t i = 0; i < pad; i++)
		b[op->length + paylen + i] = 0;
	*hdr = b + RNIC_ROCE_BTH_LEN;
	*pay = b + op->length;
	return m;
}

static void icrc_fin(struct rte_mbuf *m)
{
	rnic_roce_icrc_generate_mbuf(m, m->l2_len);
}

void roce_pkt_send_av(struct roce_qp *rq, struct rte_mbuf *m, const struct rnic_addr *src,
		      const struct rnic_addr *dst, uint8_t tos, uint32_t flow, uint8_t hops)
{
	rq->rw->c.tx_pkts++;
	/* from the QP's own address (its GID), also after a failover moved
	 * it to another port; over IPv6 the flow label is the AV's, or one
	 * that names the QP pair (IPv4 has no flow label: nothing to compute
	 * per packet there) */
	if (dst->family == RNIC_AF_INET6 && flow == 0)
		flow = rnic_roce_flow_label(rq->qp->qp.qp_num,
					    rnic_roce_bth_dqpn(rte_pktmbuf_mtod(m,
						const struct rnic_roce_bth *)));
	rnic_roce_output_hops(rq->w, rq->port, m, src != NULL ? src : &rq->src, dst, rq->sport,
			      tos, dst->family == RNIC_AF_INET6 ? flow : 0, hops, icrc_fin,
			      &rq->arp_hint);
}

void roce_pkt_send_to(struct roce_qp *rq, struct rte_mbuf *m, const struct rnic_addr *src,
		      const struct rnic_addr *dst, uint8_t tos)
{
	roce_pkt_send_av(rq, m, src, dst, tos, rq->flow_label, rq->hop_limit);
}

void roce_pkt_send(struct roce_qp *rq, struct rte_mbuf *m)
{
	roce_pkt_send_to(rq, m, NULL, &rq->dst, roce_cc_tos(rq));
}

bool roce_next_hop_ready(struct roce_qp *rq)
{
	uint64_t until;

	if (likely(rq->w->now_tsc < rq->hop_until) || rq->dst.family != RNIC_AF_INET)
		return true;
	if (rnic_net_next_hop_ready(rq->w, rq->port, rq->src.v4, rq->dst.v4, &until) != 0)
		return false;
	rq->hop_until = until;
	rq->req.hop_wait_sent = false;
	return true;
}

/* Frames this worker lost on their way out: refused by a full transmit
 * queue (a tail drop) or with no room to wait for ARP. */
static uint64_t tx_losses(const struct rnic_worker *w)
{
	return w->drops[RNIC_DROP_TX_FULL] + w->drops[RNIC_DROP_ARP_PENDING_FULL];
}

/* A full queue drops the tail of what a flush hands it, and @p m is the
 * last frame of its port's buffer: if this flush lost anything, it lost
 * @p m (a loss on another port only makes the caller send it again). */
int roce_pkt_send_now(struct roce_qp *rq, struct rte_mbuf *m)
{
	uint64_t before = tx_losses(rq->w);
	roce_pkt_send(rq, m);
	rnic_worker_flush(rq->w);
	return tx_losses(rq->w) == before ? 0 : -EAGAIN;
}

/* --- the worker's poller ------------------------------------------------------- */

void roce_qp_activate(struct roce_qp *rq)
{
	if (rq->active || rq->state == ROCE_ERR || rq->state == ROCE_RESET)
		return;
	rq->active = true;
	TAILQ_INSERT_TAIL(&rq->rw->active, rq, link);
}

static void qp_deactivate(struct roce_qp *rq)
{
	if (!rq->active)
		return;
	rq->active = false;
	TAILQ_REMOVE(&rq->rw->active, rq, link);
}

/* Emit what the active QPs owe: responses first (they acknowledge), then
 * requests. A QP that used less than its budget has nothing more now. */
static unsigned roce_poll(struct rnic_worker *w, void *arg)
{
	struct roce_worker *rw = arg;
	struct roce_qp *rq, *tmp;
	unsigned work = 0;
	if (rw->last_poll_tsc != 0 && w->now_tsc > rw->last_poll_tsc) {
		uint64_t gap = rnic_tsc_to_us(w->now_tsc - rw->last_poll_tsc);
		if (gap > rw->gap_max_us) {
			rw->gap_max_us = gap;
			rw->gap_at_us = rnic_tsc_to_us(w->now_tsc);
		}
		rw->gaps_over_20ms += gap > 20000;
	}
	rw->last_poll_tsc = w->now_tsc;
	/* the port could not take what we sent: our own TX_FULL drops, or
	 * frames its PMD refused behind the fault injector (held there, and
	 * dropped once the hold is full) */
	uint64_t full = w->drops[RNIC_DROP_TX_FULL];
	for (unsigned i = 0; i < w->st->n_ports; i++)
		full += rnic_port_tx_refused(w->st->ports[i], (uint16_t)w->id);
	/* and while it cannot, no new requests at all this poll: the pace
	 * floor per poll, times thousands of polls a second, still poured
	 * go-back-N windows into a full queue, and the one probe after a
	 * timeout was lost behind them (responses, which acknowledge, go on) */
	bool full_now = full != rw->tx_full_seen;
	if (full_now) {
		rw->tx_full_seen = full;
		rw->pace = RTE_MAX(rw->pace / 2, ROCE_PACE_MIN);
		rw->c.tx_held_back++;
	}
	unsigned left = rw->pace;
	for (rq = TAILQ_FIRST(&rw->active); rq != NULL && left > 0; rq = tmp) {
		tmp = TAILQ_NEXT(rq, link);
		unsigned budget = RTE_MIN(ROCE_TX_BUDGET, left);
		unsigned n = roce_resp_pump(rq, budget);
		bool req = n < budget && rq->state == ROCE_RTS;
		if (req && !full_now)
			n += roce_req_pump(rq, budget - n);
		work += n;
		left -= RTE_MIN(n, left);
		if (n < budget && !(req && full_now))
			qp_deactivate(rq);
	}
	if (left == 0)
		rw->c.tx_paced++;   /* QPs still owe packets: the next poll */
	if (work > 0 && rw->pace < ROCE_PACE_MAX)
		rw->pace++;
	return work;
}

/* --- errors -------------------------------------------------------------------- */

static void qp_stop(struct roce_qp *rq)
{
	qp_deactivate(rq);
	rnic_timer_cancel(&rq->w->timers, &rq->req.timer);
	roce_cc_qp_stop(rq);
	rq->state = ROCE_ERR;
}

/* The non-zero RoCE counters and drop causes of @p rq's worker, ending
 * the line. */
static void print_worker(const struct roce_qp *rq, FILE *f)
{
	if (rq->rw == NULL || rq->w == NULL) {   /* before RTR */
		fprintf(f, " (no worker yet)\n");
		return;
	}
	const struct roce_counters *c = &rq->rw->c;
#define ROCE_CTR_PRINT(n) if (c->n) fprintf(f, " " #n " %" PRIu64, c->n);
	ROCE_COUNTERS(ROCE_CTR_PRINT)
#undef ROCE_CTR_PRINT
	fprintf(f, " gap_max_us %" PRIu64 " at %" PRIu64 " gaps>20ms %" PRIu64,
		rq->rw->gap_max_us, rq->rw->gap_at_us, rq->rw->gaps_over_20ms);
	for (unsigned i = 0; i < RNIC_DROP_MAX; i++)
		if (rq->w->drops[i])
			fprintf(f, " drop%u %" PRIu64, i, rq->w->drops[i]);
	fprintf(f, "\n");
}

/* RNIC_ROCE_DEBUG: the responder side of every other RoCE QP in this
 * process (a loopback peer), read racily: debugging only. */
static void dump_peer(struct rnic_stack *st, void *arg)
{
	const struct roce_qp *self = arg;
	for (unsigned i = 0; i < RNIC_MAX_QP; i++) {
		struct rnic_qp *qp = rnic_qp_by_num(st, i);
		if (qp == NULL || qp->transport != RNIC_TRANSPORT_ROCE || qp->tp == NULL ||
		    qp->tp == self)
			continue;
		const struct roce_qp *rq = qp->tp;
		fprintf(stderr, "  stack%u qp %u: state %u resp epsn %#x nak_sent %d ack_due %d "
			"since_ack %u jobs %u mig_wait %d park %u; req acked %#x;", st->id,
			qp->qp.qp_num, rq->state, rq->resp.epsn, rq->resp.nak_sent,
			rq->resp.ack_due, rq->resp.since_ack,
			rq->resp.job_tail - rq->resp.job_head, rq->mig_wait, rq->park_n,
			rq->req.acked);
		print_worker(rq, stderr);
		roce_trace_print(rq, stderr);
	}
}

/* RNIC_ROCE_DEBUG=1: one line of requester and responder state when a QP
 * fails (tests print it next to their failure), then the other QPs'. */
static void qp_print(const struct roce_qp *rq, enum ibv_wc_status status, FILE *f);

static void qp_dump(const struct roce_qp *rq, enum ibv_wc_status status)
{
	static int on = -1;
	if (on < 0)
		on = getenv("RNIC_ROCE_DEBUG") != NULL;
	if (!on)
		return;
	qp_print(rq, status, stderr);
	rnic_registry_foreach(dump_peer, (void *)(uintptr_t)rq);
}

/* rnic_qp_tops.dump: requester and responder state, the worker's
 * counters and the recovery trace. */
static void roce_dump(struct rnic_qp *qp, FILE *f)
{
	if (qp->tp != NULL)
		qp_print(qp->tp, IBV_WC_SUCCESS, f);
}

static void qp_print(const struct roce_qp *rq, enum ibv_wc_status status, FILE *f)
{
	const struct roce_req *r = &rq->req;
	fprintf(f, "roce qp %u: fatal status %d; req psn %#x acked %#x sent_end %#x "
		"head %u next %u+%u tail %u rd_out %u retry %u rnr %u; resp epsn %#x jobs %u; "
		"timer %d worker:", rq->qp->qp.qp_num, (int)status, r->psn, r->acked, r->sent_end, r->head,
		r->next, r->next_pkt, r->tail, r->rd_out, r->retry_left, r->rnr_left,
		rq->resp.epsn, rq->resp.job_tail - rq->resp.job_head,
		rnic_timer_pending(&r->timer));
	if (r->head != r->tail) {
		const struct roce_wqe *e = &r->wq[r->head & rq->qp->sq_mask];
		fprintf(f, " head wr: opcode %d first_psn %#x npkts %u len %u resp_next %u "
			"issued %u/%u;", (int)e->wr.opcode, e->first_psn, e->npkts, e->len,
			e->resp_next, e->issued_pkts, (unsigned)e->issued);
	}
	print_worker(rq, f);
	roce_trace_print(rq, f);
}

void roce_qp_fatal(struct roce_qp *rq, enum ibv_wc_status status)
{
	if (rq->state == ROCE_ERR)
		return;
	qp_dump(rq, status);
	qp_stop(rq);
	roce_req_flush(rq, status);
	roce_resp_flush(rq);
	rnic_qp_conn_lost(rq->qp);
}

/* --- receive ----------------------------------------------------------------- */

static struct rnic_qp *qp_by_num(const struct rnic_stack *st, uint32_t qpn)
{
	struct rnic_qp *qp = rnic_qp_by_num(st, qpn);
	return qp != NULL && qp->transport == RNIC_TRANSPORT_ROCE ? qp : NULL;
}

static unsigned roce_owner(struct rnic_stack *st, struct rnic_port *p, struct rte_mbuf *m)
{
	(void)p;
	uint32_t off = m->l2_len + m->l3_len + sizeof(struct rte_udp_hdr);
	if (rte_pktmbuf_data_len(m) < off + RNIC_ROCE_BTH_LEN)
		return UINT32_MAX;
	const struct rnic_roce_bth *bth = rte_pktmbuf_mtod_offset(m,
						const struct rnic_roce_bth *, off);
	if (rnic_roce_bth_dqpn(bth) == RNIC_GSI_QPN)
		return st->workers[0]->id;   /* QP1: the IB CM lives on worker 0 */
	struct rnic_qp *qp = qp_by_num(st, rnic_roce_bth_dqpn(bth));
	struct rnic_worker *w = qp ? __atomic_load_n(&qp->w, __ATOMIC_ACQUIRE) : NULL;
	return w != NULL ? w->id : UINT32_MAX;
}

static void qp_enter_rts(struct roce_qp *rq, const struct ibv_qp_attr *a, int mask);

static void roce_input(struct rnic_worker *w, struct rnic_port *p, struct rte_mbuf *m)
{
	struct roce_worker *rw = w->proto[RNIC_PROTO_ROCE];
	rw->c.rx_pkts++;
	uint32_t ip_off = m->l2_len;
	uint32_t bth_off = ip_off + m->l3_len + sizeof(struct rte_udp_hdr);
	uint32_t len = rte_pktmbuf_pkt_len(m) - bth_off;
	uint32_t first = rte_pktmbuf_data_len(m) > bth_off ? rte_pktmbuf_data_len(m) - bth_off : 0;
	struct rnic_roce_pkt pkt;
	uint8_t *bth = rte_pktmbuf_mtod_offset(m, uint8_t *, bth_off);
	/* the transport headers must sit in the first segment */
	if (first < RNIC_ROCE_BTH_LEN || first < rnic_roce_op(bth[0])->length ||
	    rnic_roce_pkt_parse(&pkt, bth, len, NULL) != 0) {
		rw->c.rx_parse_errors++;
		goto drop;
	}
	if (rnic_roce_icrc_verify_mbuf(m, ip_off) != 0) {
		rw->c.rx_bad_icrc++;
		goto drop;
	}
	struct roce_l3 l3;
	roce_l3_parse(m, &l3);
	/* congestion experienced on the way (the ICRC masks the TOS byte and
	 * the traffic class) */
	bool ce = (l3.tos & RNIC_ECN_MASK) == RNIC_ECN_CE;
	rw->c.rx_ce_marked += ce;
	bool cnp = (pkt.flags & RNIC_ROCE_OPF_CNP) != 0;
	rw->c.rx_cnp += cnp;
	uint32_t pay_off = bth_off + rnic_roce_op(pkt.opcode)->length;
	if (!cnp && rnic_roce_pkt_dqpn(&pkt) == RNIC_GSI_QPN) {
		roce_cm_input(w, p, &pkt, m, pay_off, &l3);   /* counts its own drops */
		goto drop;
	}
	/* RC, UD and CNPs must carry a P_Key that matches ours, the default
	 * (rxe's check_keys() drops and counts the rest the same way) */
	if (!rnic_roce_pkey_match(rnic_roce_bth_pkey(rnic_roce_pkt_bth(&pkt)),
				  RNIC_ROCE_PKEY_DEFAULT)) {
		rw->c.rx_bad_pkey++;
		goto drop;
	}
	struct rnic_qp *qp = qp_by_num(w->st, rnic_roce_pkt_dqpn(&pkt));
	struct roce_qp *rq = qp ? rq_of(qp) : NULL;
	if (rq == NULL || rq->w != w) {
		rw->c.rx_unknown_qp++;
		rw->c.ce_no_qp += ce;   /* no QP to notify: no CNP */
		goto drop;
	}
	bool ud = qp->qp.qp_type == IBV_QPT_UD;
	/* a CNP is neither RC nor UD: it notifies an RC QP */
	if (cnp ? ud : ud != ((pkt.flags & RNIC_ROCE_OPF_UD) != 0)) {
		rw->c.rx_wrong_service++;   /* an RC packet for a UD QP, or the reverse */
		goto drop;
	}
	if (ud) {
		if (rq->state == ROCE_RTR || rq->state == ROCE_RTS)
			roce_ud_input(rq, &pkt, m, pay_off, &l3);
		else
			rw->c.rx_bad_state++;
		goto drop;
	}
	if (!rnic_addr_eq(&l3.src, &rq->dst)) {
		rw->c.rx_wrong_source++;
		goto drop;
	}
	if (unlikely(cnp)) {
		roce_cc_cnp_in(rq);   /* reaction point */
		goto drop;
	}
	if (unlikely(ce))
		roce_cc_ce(rq);       /* notification point */
	if (pkt.flags & RNIC_ROCE_OPF_REQ) {
		if (rq->state != ROCE_RTR && rq->state != ROCE_RTS) {
			rw->c.rx_bad_state++;
			goto drop;
		}
		if (rq->state == ROCE_RTR && rq->comm_est_armed) {
			/* the peer sends: the RTU is lost or late, go to RTS now */
			rw->c.cm_comm_est++;
			struct ibv_qp_attr a = {
				.qp_state = IBV_QPS_RTS,
				.sq_psn = rq->comm_est.sq_psn,
				.timeout = rq->comm_est.timeout,
				.retry_cnt = rq->comm_est.retry_cnt,
				.rnr_retry = rq->comm_est.rnr_retry,
				.max_rd_atomic = rq->comm_est.max_rd_atomic,
			};
			qp_enter_rts(rq, &a, rq->comm_est_mask);
		}
		rw->c.resp_pkts_in++;
		roce_resp_input(rq, p->idx, &pkt, m, pay_off);
	} else {
		if (rq->state != ROCE_RTS) {
			rw->c.rx_bad_state++;
			goto drop;
		}
		roce_comp_input(rq, &pkt, m, pay_off);
	}
drop:
	rte_pktmbuf_free(m);
}

/* --- verbs transport ops ------------------------------------------------------ */

static int roce_create(struct rnic_qp *qp)
{
	struct roce_qp *rq = rnic_obj_zalloc(sizeof(*rq));
	if (rq == NULL)
		return -ENOMEM;
	rq->req.wq = rnic_obj_zalloc((size_t)qp->sq_size * sizeof(rq->req.wq[0]));
	if (rq->req.wq == NULL) {
		rnic_obj_free(rq);
		return -ENOMEM;
	}
	rq->qp = qp;
	rq->port_num = 1;
	rq->state = ROCE_RESET;
	qp->tp = rq;
	return 0;
}

static void roce_destroy(struct rnic_qp *qp)
{
	struct roce_qp *rq = rq_of(qp);
	if (rq == NULL)
		return;
	/* a migration query out names this QP: its answer must come first */
	for (unsigned i = 0; __atomic_load_n(&rq->mig_wait, __ATOMIC_ACQUIRE) && i < 20000; i++)
		rte_delay_us_sleep(100);
	if (__atomic_load_n(&rq->mig_wait, __ATOMIC_ACQUIRE)) {
		qp->tp = NULL;   /* never answered (stack stopped): leak, never reuse */
		return;
	}
	roce_resp_unpark(rq);
	roce_resp_fini(rq);
	rte_free(rq->trace);   /* roce_req.c's, from rte_zmalloc */
	rnic_obj_free(rq->req.wq);
	rnic_obj_free(rq);
	qp->tp = NULL;
}

static bool roce_has_room(struct rnic_qp *qp)
{
	return roce_req_has_room(rq_of(qp));
}

static int roce_post(struct rnic_qp *qp, const struct ibv_send_wr *wr)
{
	struct roce_qp *rq = rq_of(qp);
	if (rq->state != ROCE_RTS)
		return -ENOTCONN;
	if (qp->qp.qp_type == IBV_QPT_UD)
		return roce_ud_post(rq, wr);
	int rc = roce_req_post(rq, wr);
	if (rc == 0)
		roce_qp_activate(rq);
	return rc;
}

static void roce_abort(struct rnic_qp *qp)
{
	struct roce_qp *rq = rq_of(qp);
	if (rq->state == ROCE_ERR || rq->w == NULL)
		return;
	qp_stop(rq);
	roce_req_flush(rq, IBV_WC_WR_FLUSH_ERR);
	roce_resp_flush(rq);
}

/* Bytes of an enum ibv_mtu, or 0. */
static uint32_t mtu_bytes(enum ibv_mtu m)
{
	return m >= IBV_MTU_256 && m <= IBV_MTU_4096 ? 128u << m : 0;
}

struct modify_ctx {
	struct roce_qp *rq;
	struct ibv_qp_attr *attr;
	int mask;
	enum ibv_qp_state to;
};

/* Timer-free attributes any state may change. */
static void apply_attrs(struct roce_qp *rq, const struct ibv_qp_attr *a, int mask)
{
	if (mask & IBV_QP_ACCESS_FLAGS)
		rq->access = a->qp_access_flags;
	if (mask & IBV_QP_MIN_RNR_TIMER)
		rq->min_rnr_timer = a->min_rnr_timer & 0x1f;
	if (mask & IBV_QP_TIMEOUT)
		rq->timeout = a->timeout & 0x1f;
	if (mask & IBV_QP_RETRY_CNT)
		rq->retry_cnt = a->retry_cnt & 7;
	if (mask & IBV_QP_RNR_RETRY)
		rq->rnr_retry = a->rnr_retry & 7;
	if (mask & IBV_QP_MAX_QP_RD_ATOMIC)
		rq->max_rd_atomic = a->max_rd_atomic ? a->max_rd_atomic : 1;
	if (mask & IBV_QP_MAX_DEST_RD_ATOMIC)
		rq->max_dest_rd_atomic = a->max_dest_rd_atomic;
}

/* On the QP's worker: RTR -> RTS with @p a. */
static void qp_enter_rts(struct roce_qp *rq, const struct ibv_qp_attr *a, int mask)
{
	apply_attrs(rq, a, mask);
	roce_req_init(rq, a->sq_psn);
	rq->ud_psn = a->sq_psn & RNIC_PSN_MASK;
	rq->state = ROCE_RTS;
	rq->comm_est_armed = false;
	rnic_qp_established(rq->qp);
}

struct comm_est_ctx {
	struct roce_qp *rq;
	const struct ibv_qp_attr *a;
	int mask;
};

static void arm_on_worker(struct rnic_worker *w, void *arg)
{
	(void)w;
	struct comm_est_ctx *c = arg;
	if (c->rq->state != ROCE_RTR)
		return;
	c->rq->comm_est.sq_psn = c->a->sq_psn;
	c->rq->comm_est.timeout = c->a->timeout;
	c->rq->comm_est.retry_cnt = c->a->retry_cnt;
	c->rq->comm_est.rnr_retry = c->a->rnr_retry;
	c->rq->comm_est.max_rd_atomic = c->a->max_rd_atomic;
	c->rq->comm_est_mask = c->mask & ROCE_COMM_EST_MASK;
	c->rq->comm_est_armed = true;
}

void roce_qp_arm_comm_est(struct rnic_qp *qp, const struct ibv_qp_attr *a, int mask)
{
	struct comm_est_ctx c = { rq_of(qp), a, mask };
	if (c.rq != NULL && c.rq->w != NULL)
		rnic_worker_call_sync(c.rq->w, arm_on_worker, &c);
}

/* On the QP's worker: enter RTR or RTS. */
static void modify_on_worker(struct rnic_worker *w, void *arg)
{
	struct modify_ctx *c = arg;
	struct roce_qp *rq = c->rq;
	apply_attrs(rq, c->attr, c->mask);
	if (c->to == IBV_QPS_RTR) {
		rq->w = w;
		rq->rw = w->proto[RNIC_PROTO_ROCE];
		rq->active = false;
		rnic_timer_init(&rq->req.timer, NULL, NULL);
		roce_cc_qp_init(rq);
		roce_resp_init(rq, c->attr->rq_psn);
		rq->state = ROCE_RTR;
		rq->qp->conn = QP_CONNECTED;
		__atomic_store_n(&rq->qp->qp.state, IBV_QPS_RTR, __ATOMIC_RELEASE);
	} else if (c->to == IBV_QPS_RTS && rq->state == ROCE_RTR) {
		qp_enter_rts(rq, c->attr, c->mask);
	}
}

/* IP, UDP, BTH, RETH + ImmDt and ICRC of the largest packet to @p dst:
 * RNIC_ROCE_OVERHEAD counts an IPv4 header, IPv6's is 20 bytes longer. */
static uint32_t roce_overhead(const struct rnic_addr *dst)
{
	return RNIC_ROCE_OVERHEAD + (dst->family == RNIC_AF_INET6 ? 20u : 0u);
}

/* Check and take the RTR address vector and path attributes. */
static int rtr_check(struct rnic_qp *qp, struct roce_qp *rq, const struct ibv_qp_attr *a,
		     int mask)
{
	const int need = IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN;
	struct rnic_stack *st = qp->st;
	if ((mask & need) != need)
		return -EINVAL;
	const struct ibv_ah_attr *ah = &a->ah_attr;
	uint8_t port = ah->port_num ? ah->port_num : rq->port_num;
	struct rnic_addr src, dst;
	/* the source GID picks the family: IPv4-mapped (index 1 with IPv4)
	 * or one of the port's IPv6 addresses (roce_addr.h) */
	if (!ah->is_global || port < 1 || port > st->n_ports ||
	    rnic_roce_path(st->ports[port - 1], ah->grh.sgid_index, ah->grh.dgid.raw, &src,
			   &dst) != 0 ||
	    a->dest_qp_num > RNIC_ROCE_QPN_MASK || a->dest_qp_num < 1 ||
	    ((mask & IBV_QP_MAX_DEST_RD_ATOMIC) && a->max_dest_rd_atomic > RNIC_MAX_RD_ATOMIC))
		return -EINVAL;
	struct rnic_port *p = st->ports[port - 1];
	uint32_t pmtu = mtu_bytes(a->path_mtu);
	/* the largest packet: IP, UDP, BTH, RETH + ImmDt, payload, ICRC */
	if (pmtu == 0 || pmtu + roce_overhead(&dst) > p->mtu)
		return -EINVAL;
	rq->port = p;
	rq->port_num = port;
	rq->src = src;
	rq->dst = dst;
	rq->dest_qpn = a->dest_qp_num;
	rq->pmtu = pmtu;
	rq->tos = ah->grh.traffic_class;
	rq->hop_limit = ah->grh.hop_limit;
	rq->flow_label = ah->grh.flow_label & RNIC_IP6_FLOW_MASK;
	/* entropy in the UDP source port (annex A17.5.1.1): from both QPNs,
	 * in the dynamic range 0xc000-0xffff as rxe uses */
	uint32_t h = (qp->qp.qp_num * 0x9e3779b1u) ^ (a->dest_qp_num * 0x85ebca6bu);
	rq->sport = (uint16_t)(0xc000u | ((h >> 16) & 0x3fffu));
	return 0;
}

/* RTR of a UD QP: the port from INIT, the largest path MTU it carries. */
static int ud_rtr_check(struct rnic_qp *qp, struct roce_qp *rq)
{
	struct rnic_stack *st = qp->st;
	if (rq->port_num < 1 || rq->port_num > st->n_ports)
		return -EINVAL;
	rq->port = st->ports[rq->port_num - 1];
	rq->src = rnic_addr_v4(rq->port->ip);   /* each datagram: its AH's source */
	rq->pmtu = 256;
	while (rq->pmtu < 4096 && 2 * rq->pmtu + RNIC_ROCE_OVERHEAD <= rq->port->mtu)
		rq->pmtu *= 2;
	uint32_t h = qp->qp.qp_num * 0x9e3779b1u;
	rq->sport = (uint16_t)(0xc000u | ((h >> 16) & 0x3fffu));
	return 0;
}

static int roce_modify(struct rnic_qp *qp, struct ibv_qp_attr *attr, int mask)
{
	struct roce_qp *rq = rq_of(qp);
	enum ibv_qp_state cur = __atomic_load_n(&qp->qp.state, __ATOMIC_ACQUIRE);
	enum ibv_qp_state to = (mask & IBV_QP_STATE) ? attr->qp_state : cur;
	struct modify_ctx c = { rq, attr, mask, to };

	if (to == IBV_QPS_RESET || to == IBV_QPS_ERR || to == IBV_QPS_SQD ||
	    to == IBV_QPS_SQE) {
		if (to == IBV_QPS_RESET && (cur == IBV_QPS_ERR || cur == IBV_QPS_INIT ||
					    cur == IBV_QPS_RESET)) {
			rq->state = ROCE_RESET;
			rq->w = NULL;
		}
		return to == IBV_QPS_SQD || to == IBV_QPS_SQE ? -EINVAL : RNIC_TOPS_GENERIC;
	}
	if (to == IBV_QPS_INIT) {
		if (cur != IBV_QPS_RESET && cur != IBV_QPS_INIT)
			return -EINVAL;
		if (mask & IBV_QP_PORT) {
			if (attr->port_num < 1 || attr->port_num > qp->st->n_ports)
				return -EINVAL;
			rq->port_num = attr->port_num;
		}
		apply_attrs(rq, attr, mask & IBV_QP_ACCESS_FLAGS);
		if (mask & IBV_QP_QKEY)
			rq->qkey = attr->qkey;
		return RNIC_TOPS_GENERIC;   /* the generic path moves the state */
	}
	if (to == IBV_QPS_RTR) {
		if (cur != IBV_QPS_INIT)
			return cur == IBV_QPS_RTR && !(mask & IBV_QP_STATE) ? 0 : -EINVAL;
		int rc = qp->qp.qp_type == IBV_QPT_UD ? ud_rtr_check(qp, rq)
						       : rtr_check(qp, rq, attr, mask);
		if (rc != 0)
			return rc;
		struct rnic_worker *w = rnic_qp_home(qp);
		rnic_qp_set_worker(qp, w);
		rnic_worker_call_sync(w, modify_on_worker, &c);
		return 0;
	}
	if (to == IBV_QPS_RTS) {
		if (cur == IBV_QPS_RTS) {
			if (mask & (IBV_QP_SQ_PSN | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
				    IBV_QP_RQ_PSN))
				return -EINVAL;
			rnic_worker_call_sync(rq->w, modify_on_worker, &c);
			return 0;
		}
		if (cur != IBV_QPS_RTR || !(mask & IBV_QP_SQ_PSN))
			return -EINVAL;
		rnic_worker_call_sync(rq->w, modify_on_worker, &c);
		return 0;
	}
	return -EINVAL;
}

static void roce_query(struct rnic_qp *qp, struct ibv_qp_attr *a)
{
	const struct roce_qp *rq = rq_of(qp);
	a->qp_access_flags = (unsigned)rq->access;
	a->port_num = rq->port_num;
	a->timeout = rq->timeout;
	a->retry_cnt = rq->retry_cnt;
	a->rnr_retry = rq->rnr_retry;
	a->min_rnr_timer = rq->min_rnr_timer;
	a->max_rd_atomic = (uint8_t)rq->max_rd_atomic;
	a->max_dest_rd_atomic = (uint8_t)rq->max_dest_rd_atomic;
	a->qkey = rq->qkey;
	if (rq->state == ROCE_RESET || qp->qp.qp_type == IBV_QPT_UD)
		return;
	a->path_mtu = (enum ibv_mtu)(rte_bsf32(rq->pmtu) - 7);
	a->dest_qp_num = rq->dest_qpn;
	a->rq_psn = rq->resp.epsn;
	a->sq_psn = rq->req.psn;
	a->ah_attr.is_global = 1;
	a->ah_attr.port_num = rq->port_num;
	int sgid = rq->port != NULL ? rnic_gid_find(rq->port, &rq->src) : -1;
	a->ah_attr.grh.sgid_index = (uint8_t)(sgid >= 0 ? sgid : 1);
	a->ah_attr.grh.traffic_class = rq->tos;
	a->ah_attr.grh.hop_limit = rq->hop_limit ? rq->hop_limit : 64;
	if (rq->dst.family == RNIC_AF_INET6)
		a->ah_attr.grh.flow_label = rq->flow_label ? rq->flow_label :
					    rnic_roce_flow_label(qp->qp.qp_num, rq->dest_qpn);
	rnic_addr_gid(&rq->dst, a->ah_attr.grh.dgid.raw);
}

/* --- the IB CM behind the transport's CM calls (ibcm.h) ------------------------------- */

static void ib_params(struct rnic_ibcm_params *p, const struct rnic_cm_conn_param *c)
{
	*p = (struct rnic_ibcm_params){ .ird = 1, .ord = 1 };
	if (c == NULL)
		return;
	p->pdata = c->private_data;
	p->pdata_len = c->private_data ? c->private_data_len : 0;
	if (c->responder_resources)
		p->ird = RTE_MIN(c->responder_resources, (uint8_t)RNIC_MAX_RD_ATOMIC);
	if (c->initiator_depth)
		p->ord = RTE_MIN(c->initiator_depth, (uint8_t)RNIC_MAX_RD_ATOMIC);
}

static int roce_cm_connect(struct rnic_worker *w, struct rnic_qp *qp,
			   const struct rnic_addr *dst, uint16_t port,
			   const struct rnic_cm_conn_param *param,
			   const struct rnic_cm_upcalls *up, void *ctx, struct rnic_tp_conn **connp)
{
	(void)w;   /* the IB CM lives on worker 0 */
	struct rnic_ibcm_params p;
	struct rnic_ibcm_conn *c = NULL;
	if (dst->family != RNIC_AF_INET && dst->family != RNIC_AF_INET6)
		return -EAFNOSUPPORT;
	ib_params(&p, param);
	if (p.pdata_len > RNIC_CM_ROCE_REQ_PDATA_MAX)
		return -EINVAL;
	int rc = rnic_ibcm_connect(qp->st, qp, dst, port, &p, up, ctx, &c);
	if (rc == 0)
		*connp = (struct rnic_tp_conn *)c;
	return rc;
}

static int roce_cm_accept(struct rnic_worker *w, struct rnic_tp_conn **connp,
			  struct rnic_qp *qp, const struct rnic_cm_conn_param *param, void *ctx)
{
	(void)w;
	(void)ctx;   /* the connection's context since the request */
	struct rnic_ibcm_params p;
	ib_params(&p, param);
	if (p.pdata_len > RNIC_CM_ROCE_REP_PDATA_MAX)
		return -EINVAL;
	if (*connp == NULL)
		return -ENOTCONN;
	return rnic_ibcm_accept((struct rnic_ibcm_conn *)*connp, qp, &p);
}

static int roce_cm_reject(struct rnic_worker *w, struct rnic_tp_conn **connp, const void *pdata,
			  uint16_t len)
{
	(void)w;
	if (len > RNIC_CM_ROCE_REJ_PDATA_MAX)
		return -EINVAL;
	if (*connp == NULL)
		return -ENOTCONN;
	return rnic_ibcm_reject((struct rnic_ibcm_conn *)*connp, pdata, len);
}

static int roce_cm_disconnect(struct rnic_worker *w, struct rnic_tp_conn **connp)
{
	(void)w;
	if (*connp == NULL)
		return -ENOTCONN;
	return rnic_ibcm_disconnect((struct rnic_ibcm_conn *)*connp);
}

static void roce_cm_detach(struct rnic_worker *w, struct rnic_tp_conn **connp)
{
	(void)w;
	if (*connp != NULL)
		rnic_ibcm_detach((struct rnic_ibcm_conn *)*connp);   /* REJ or DREQ if live */
	*connp = NULL;
}

static void roce_cm_conn_info(const struct rnic_tp_conn *c, uint16_t *ird, uint16_t *ord,
			      struct rnic_addr *peer, uint16_t *port)
{
	rnic_ibcm_conn_info((const struct rnic_ibcm_conn *)c, ird, ord, peer, port);
}

static void roce_cm_timeouts(struct rnic_stack *st, uint8_t resp_exp, uint8_t retries)
{
	rnic_ibcm_set_timeouts(st, resp_exp, retries);
}

static const struct rnic_qp_tops roce_tops = {
	.name = "roce",
	.caps = RNIC_TP_CAP_UD | RNIC_TP_CAP_READ_SCATTER | RNIC_TP_CAP_ATOMIC_ALIGN,
	.query = roce_query,
	.create = roce_create,
	.destroy = roce_destroy,
	.modify = roce_modify,
	.has_room = roce_has_room,
	.post = roce_post,
	.abort = roce_abort,
	.dump = roce_dump,
	.ah_resolve = roce_ah_resolve,
	.cm = {
		.listen = rnic_ibcm_listen,
		.unlisten = rnic_ibcm_unlisten,
		.connect = roce_cm_connect,
		.accept = roce_cm_accept,
		.reject = roce_cm_reject,
		.disconnect = roce_cm_disconnect,
		.detach = roce_cm_detach,
		.conn_info = roce_cm_conn_info,
		.set_timeouts = roce_cm_timeouts,
	},
};

/* --- telemetry ------------------------------------------------------------------- */

static void roce_sum(const struct rnic_stack *st, struct roce_counters *sum)
{
	memset(sum, 0, sizeof(*sum));
	for (unsigned i = 0; i < st->n_workers; i++) {
		const struct roce_worker *rw = st->workers[i]->proto[RNIC_PROTO_ROCE];
		if (rw == NULL)
			continue;
#define ROCE_CTR_ADD(n) sum->n += rw->c.n;
		ROCE_COUNTERS(ROCE_CTR_ADD)
#undef ROCE_CTR_ADD
	}
}

static void tel_one(struct rnic_stack *st, void *arg)
{
	struct rte_tel_data *d = arg;
	struct roce_counters s;
	char key[32];
	roce_sum(st, &s);
	struct rte_tel_data *c = rte_tel_data_alloc();
	if (c == NULL)
		return;
	rte_tel_data_start_dict(c);
#define ROCE_CTR_TEL(n) rte_tel_data_add_dict_u64(c, #n, s.n);
	ROCE_COUNTERS(ROCE_CTR_TEL)
#undef ROCE_CTR_TEL
	snprintf(key, sizeof(key), "stack%u", st->id);
	rte_tel_data_add_dict_container(d, key, c, 0);
}

static int tel_roce(const char *cmd, const char *params, struct rte_tel_data *d)
{
	(void)cmd;
	(void)params;
	rte_tel_data_start_dict(d);
	rnic_registry_foreach(tel_one, d);
	return 0;
}

int rnic_roce_counter(const struct rnic_stack *st, const char *name, uint64_t *value)
{
	struct roce_counters s;
	roce_sum(st, &s);
#define ROCE_CTR_GET(n) if (strcmp(name, #n) == 0) { *value = s.n; return 0; }
	ROCE_COUNTERS(ROCE_CTR_GET)
#undef ROCE_CTR_GET
	return -ENOENT;
}

/* --- protocol module ------------------------------------------------------------- */

static int roce_stack_init(struct rnic_stack *st)
{
	static const struct rnic_l4_handler h = { .owner = roce_owner, .input = roce_input };
	static bool tel_done;
	if (!tel_done) {
		tel_done = true;
		rte_telemetry_register_cmd("/rnic/roce", tel_roce,
			"RoCEv2: packets, ACK/NAK, retransmissions, drops by cause");
	}
	int rc = roce_cm_stack_init(st);
	rc = rc != 0 ? rc : rnic_stack_register_udp(st, RNIC_ROCE_UDP_PORT, &h);
	return rc != 0 ? rc : rnic_transport_register(st, RNIC_TRANSPORT_ROCE, &roce_tops);
}

/* Port failover, on each worker: this worker's RC and UD QPs on the failed
 * port send from the survivor now (it answers for their address). Their
 * STags stay the failed port's: the first request through the survivor
 * migrates them (docs/migration.md). @return QPs moved. */
static unsigned roce_failover(struct rnic_worker *w, struct rnic_port *failed,
			      struct rnic_port *survivor)
{
	unsigned n = 0;
	/* the table is read as the receive path reads it (QP destruction
	 * waits for the workers) */
	for (unsigned i = 0; i < RNIC_MAX_QP; i++) {
		struct rnic_qp *qp = rnic_qp_by_num(w->st, i);
		if (qp == NULL || qp->transport != RNIC_TRANSPORT_ROCE || qp->tp == NULL)
			continue;
		struct roce_qp *rq = rq_of(qp);
		if (rq->w == w && rq->port == failed) {
			rq->port = survivor;
			roce_req_resend_now(rq);
			n++;
		}
	}
	return n;
}

static int roce_worker_init(struct rnic_worker *w)
{
	struct roce_worker *rw = rte_zmalloc("roce_w", sizeof(*rw), RTE_CACHE_LINE_SIZE);
	if (rw == NULL)
		return -ENOMEM;
	TAILQ_INIT(&rw->active);
	rw->pace = ROCE_PACE_MAX;
	roce_cc_worker_init(rw, &w->st->cfg.roce_cc);
	w->proto[RNIC_PROTO_ROCE] = rw;
	return rnic_worker_add_poller(w, "roce", roce_poll, rw);
}

static void roce_worker_fini(struct rnic_worker *w)
{
	rte_free(w->proto[RNIC_PROTO_ROCE]);
	w->proto[RNIC_PROTO_ROCE] = NULL;
}

const struct rnic_proto_ops rnic_roce_proto = {
	.name = "roce",
	.stack_init = roce_stack_init,
	.stack_fini = roce_cm_stack_fini,
	.failover = roce_failover,
	.worker_init = roce_worker_init,
	.worker_fini = roce_worker_fini,
};
