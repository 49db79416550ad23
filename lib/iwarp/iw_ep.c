/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * iWARP endpoints: an MPA connection on an rnic TCP stream and the RDMAP
 * message engine on top of it. This file holds the endpoint's lifecycle
 * (create, bind, close, flush, free), the Terminate it sends, the STag
 * checks of remote requests, the stack-wide state and the diagnostics;
 * iw_int.h says where the rest lives.
 *
 *   active:  TCP connect -> MPA request -> MPA reply -> (delay) -> RTS
 *   passive: TCP accept  -> MPA request -> request() -> MPA reply -> RTS
 *
 * Every protection error ends in a Terminate with its layer/type/code.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_mbuf.h>
#include <rte_telemetry.h>

#include "common/objalloc.h"
#include "iwarp/iw_int.h"
#include "rdma/rdma.h"
#include "rnic/rnic_tcp.h"
#include "tcp/tcp_internal.h"
#include "port/port.h"

_Static_assert(RNIC_IW_RTR_SEND == RNIC_MPA_RTR_SEND && RNIC_IW_RTR_WRITE == RNIC_MPA_RTR_WRITE &&
	       RNIC_IW_RTR_READ == RNIC_MPA_RTR_READ, "RTR type bits differ");

void rnic_iw_params_default(struct rnic_iw_params *p)
{
	memset(p, 0, sizeof(*p));
	p->crc = true;
	p->ird = 16;
	p->ord = 16;
	p->p2p = false;
	p->rtr_types = RNIC_IW_RTR_ALL;
	p->rts_delay_us = 50000;
	p->mpa_timeout_ms = 0;   /* the stack's */
}

/* --- stack-wide state ------------------------------------------------------ */

/* /rnic/iwarp: one dict per stack with rnic_iw_stats' counters and the
 * Terminates sent by cause (by their telemetry names), nonzero ones only. */
static void tel_one(struct rnic_stack *st, void *arg)
{
	struct rte_tel_data *d = arg, *c;
	const struct iw_stack_state *t = iw_stack(st);
	struct rnic_iw_stats s;
	char key[32];
	if (t == NULL || (c = rte_tel_data_alloc()) == NULL)
		return;
	rnic_iw_stats(st, &s);
	rte_tel_data_start_dict(c);
	rte_tel_data_add_dict_u64(c, "mpa_timeouts_active", s.mpa_timeouts_active);
	rte_tel_data_add_dict_u64(c, "mpa_timeouts_passive", s.mpa_timeouts_passive);
	rte_tel_data_add_dict_u64(c, "mpa_backlog_full", s.mpa_backlog_full);
	rte_tel_data_add_dict_u64(c, "mpa_embryonic_evicted", s.mpa_embryonic_evicted);
	rte_tel_data_add_dict_u64(c, "mpa_req_refused", s.mpa_req_refused);
	rte_tel_data_add_dict_u64(c, "mpa_req_bad", s.mpa_req_bad);
	rte_tel_data_add_dict_u64(c, "mpa_req_unacceptable", s.mpa_req_unacceptable);
	rte_tel_data_add_dict_u64(c, "mpa_req_rejected", s.mpa_req_rejected);
	rte_tel_data_add_dict_u64(c, "rtr_sent", s.rtr_sent);
	rte_tel_data_add_dict_u64(c, "rtr_received", s.rtr_received);
	rte_tel_data_add_dict_u64(c, "alloc_failures", s.alloc_failures);
	rte_tel_data_add_dict_u64(c, "startup_live", s.startup_live);
	rte_tel_data_add_dict_u64(c, "zc_fpdus_out", s.zc_fpdus_out);
	rte_tel_data_add_dict_u64(c, "rresp_refused", s.rresp_refused);
	rte_tel_data_add_dict_u64(c, "inv_refused", s.inv_refused);
	rte_tel_data_add_dict_u64(c, "terms_in", s.terms_in);
	rte_tel_data_add_dict_u64(c, "terms_out", s.terms_out);
	for (unsigned i = 0; i < RNIC_TERM_MAX; i++) {
		uint64_t n = __atomic_load_n(&t->terms_out[i], __ATOMIC_RELAXED);
		char name[64];
		if (n == 0)
			continue;
		snprintf(name, sizeof(name), "term_%s", rnic_term_name((enum rnic_term_cause)i));
		rte_tel_data_add_dict_u64(c, name, n);
	}
	snprintf(key, sizeof(key), "stack%u", st->id);
	rte_tel_data_add_dict_container(d, key, c, 0);
}

static int tel_iwarp(const char *cmd, const char *params, struct rte_tel_data *d)
{
	(void)cmd;
	(void)params;
	rte_tel_data_start_dict(d);
	rnic_registry_foreach(tel_one, d);
	return 0;
}

/* The iWARP protocol module: per-stack state, and iWARP's transport
 * table registered with the RDMA core (which comes first). */
static int iwarp_stack_init(struct rnic_stack *st)
{
	static bool tel_done;
	if (!tel_done) {
		tel_done = true;
		rte_telemetry_register_cmd("/rnic/iwarp", tel_iwarp,
			"iWARP: MPA setup, refused peer input, Terminates by cause");
	}
	struct iw_stack_state *s = calloc(1, sizeof(*s));
	if (s == NULL)
		return -ENOMEM;
	pthread_mutex_init(&s->listeners_lock, NULL);
	for (unsigned i = 0; i < st->n_ports; i++)   /* the ports are open */
		s->port_dma |= st->ports[i]->cfg.pci[0] != '\0';
	st->proto[RNIC_PROTO_IWARP] = s;
	int rc = rnic_transport_register(st, RNIC_TRANSPORT_IWARP, &iw_tops);
	if (rc != 0) {
		pthread_mutex_destroy(&s->listeners_lock);
		free(s);
		st->proto[RNIC_PROTO_IWARP] = NULL;
	}
	return rc;
}

/* The workers are stopped: no endpoint runs any more. */
static void iwarp_stack_fini(struct rnic_stack *st)
{
	struct iw_stack_state *s = iw_stack(st);
	if (s == NULL)
		return;
	iw_listeners_free(s);
	pthread_mutex_destroy(&s->listeners_lock);
	free(s);
	st->proto[RNIC_PROTO_IWARP] = NULL;
}

const struct rnic_proto_ops rnic_iwarp_proto = {
	.name = "iwarp",
	.stack_init = iwarp_stack_init,
	.stack_fini = iwarp_stack_fini,
};

void rnic_iw_set_mpa_timeout(struct rnic_stack *st, uint32_t ms)
{
	struct iw_stack_state *t = iw_stack(st);
	if (t != NULL)
		__atomic_store_n(&t->mpa_timeout_ms, ms, __ATOMIC_RELAXED);
}

void rnic_iw_stats(const struct rnic_stack *st, struct rnic_iw_stats *s)
{
	struct iw_stack_state *t = iw_stack(st);
	if (t == NULL) {
		memset(s, 0, sizeof(*s));
		return;
	}
	s->mpa_timeouts_active = __atomic_load_n(&t->mpa_timeouts_active, __ATOMIC_RELAXED);
	s->mpa_timeouts_passive = __atomic_load_n(&t->mpa_timeouts_passive, __ATOMIC_RELAXED);
	s->mpa_backlog_full = __atomic_load_n(&t->mpa_backlog_full, __ATOMIC_RELAXED);
	s->mpa_embryonic_evicted = __atomic_load_n(&t->mpa_embryonic_evicted, __ATOMIC_RELAXED);
	s->mpa_req_bad = __atomic_load_n(&t->mpa_req_bad, __ATOMIC_RELAXED);
	s->mpa_req_unacceptable = __atomic_load_n(&t->mpa_req_unacceptable, __ATOMIC_RELAXED);
	s->mpa_req_rejected = __atomic_load_n(&t->mpa_req_rejected, __ATOMIC_RELAXED);
	s->mpa_req_refused = s->mpa_req_bad + s->mpa_req_unacceptable + s->mpa_req_rejected;
	s->rtr_sent = __atomic_load_n(&t->rtr_sent, __ATOMIC_RELAXED);
	s->rtr_received = __atomic_load_n(&t->rtr_received, __ATOMIC_RELAXED);
	s->alloc_failures = __atomic_load_n(&t->alloc_failures, __ATOMIC_RELAXED);
	s->zc_fpdus_out = __atomic_load_n(&t->zc_fpdus_out, __ATOMIC_RELAXED);
	int64_t live = __atomic_load_n(&t->startup_live, __ATOMIC_RELAXED);
	s->startup_live = live > 0 ? (uint64_t)live : 0;
	s->rresp_refused = __atomic_load_n(&t->rresp_refused, __ATOMIC_RELAXED);
	s->inv_refused = __atomic_load_n(&t->inv_refused, __ATOMIC_RELAXED);
	s->terms_in = __atomic_load_n(&t->terms_in, __ATOMIC_RELAXED);
	s->terms_out = 0;
	for (unsigned c = 0; c < RNIC_TERM_MAX; c++)
		s->terms_out += __atomic_load_n(&t->terms_out[c], __ATOMIC_RELAXED);
}

uint64_t rnic_iw_terms_out(const struct rnic_stack *st, unsigned cause)
{
	const struct iw_stack_state *t = iw_stack(st);
	if (t == NULL || cause >= RNIC_TERM_MAX)
		return 0;
	return __atomic_load_n(&t->terms_out[cause], __ATOMIC_RELAXED);
}

void rnic_iw_fail_allocs(struct rnic_stack *st, uint32_t n)
{
	rnic_iw_fail_allocs_after(st, 0, n);
}

void rnic_iw_fail_allocs_after(struct rnic_stack *st, uint32_t skip, uint32_t n)
{
	struct iw_stack_state *t = iw_stack(st);
	if (t == NULL)
		return;
	__atomic_store_n(&t->fail_allocs, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&t->fail_skip, skip, __ATOMIC_RELAXED);
	__atomic_store_n(&t->fail_allocs, n, __ATOMIC_RELAXED);
}

/*
 * The endpoint and its lazy allocations (startup state, job ring, ORD
 * table, Terminate buffer, migration state, current receive), zeroed,
 * from the C heap (common/objalloc.h; free with rnic_obj_free): one that
 * finds no memory (or that a test made fail with rnic_iw_fail_allocs) is
 * counted in alloc_failures. The caller turns
 * NULL into an error of the operation that wanted the memory. Any worker.
 */
void *iw_alloc(struct rnic_stack *st, const char *what, size_t size)
{
	struct iw_stack_state *s = iw_stack(st);
	uint32_t n = 0;   /* > 0: a test's failure */
	if (s != NULL && __atomic_load_n(&s->fail_allocs, __ATOMIC_RELAXED) > 0 &&
	    rnic_obj_fail_take(&s->fail_skip) == 0)
		n = rnic_obj_fail_take(&s->fail_allocs);
	void *m = n == 0 ? rnic_obj_zalloc(size) : NULL;
	if (m == NULL) {
		iw_debug("no memory for %s (%zu bytes)", what, size);
		if (s != NULL)
			iw_count(&s->alloc_failures);
	}
	return m;
}

/* Free the startup state, its timers stopped. */
static void startup_free(struct rnic_iw_ep *ep)
{
	struct iw_startup *su = ep->su;
	if (su == NULL)
		return;
	rnic_timer_cancel(&ep->w->timers, &su->rts_timer);
	rnic_timer_cancel(&ep->w->timers, &su->mpa_timer);
	iw_backlog_release(ep);
	ep->res.pdata = NULL;   /* it pointed into su->mrx */
	ep->res.pd_len = 0;
	ep->su = NULL;
	rnic_obj_free(su);
	struct iw_stack_state *s = iw_stack(ep->st);
	if (s != NULL)
		__atomic_fetch_sub(&s->startup_live, 1, __ATOMIC_RELAXED);
}

/* The endpoint is in RDMA mode (RTS): its MPA startup state goes, unless
 * our reply still waits for an mbuf (mpa_tx_flush calls again once it is
 * out). */
void iw_startup_done(struct rnic_iw_ep *ep)
{
	if (ep->su != NULL && ep->su->mpa_tx_len == 0 && ep->state == EP_RTS)
		startup_free(ep);
}

/* The ORD table, allocated on first use. NULL: no memory (counted). */
struct iw_ord *iw_ord_table(struct rnic_iw_ep *ep)
{
	if (ep->ord == NULL)
		ep->ord = iw_alloc(ep->st, "rnic_iw_ord", ORD_MAX * sizeof(*ep->ord));
	return ep->ord;
}

struct rnic_worker *rnic_iw_worker(const struct rnic_iw_ep *ep) { return ep->w; }

void iw_debug(const char *fmt, ...)
{
	static int on = -1;
	if (on < 0)
		on = getenv("RNIC_IW_DEBUG") != NULL;
	if (!on)
		return;
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "rnic-iw: ");
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

/* The port the stream runs on (0 before it has one). */
unsigned iw_ep_port(const struct rnic_iw_ep *ep)
{
	return ep->c != NULL && ep->c->port != NULL ? ep->c->port->idx : 0;
}

/* The access check of a remote request that arrived through the stream's
 * port: the MR or window an STag names, checked for this stream's PD/QP,
 * rights and bounds. @return the host address or NULL with *cause set.
 * With @p wait, an STag of another port that this port has not
 * imported yet returns NULL with *cause = 0 and *wait set: ask (iw_rx.c's
 * ep_migrate). */
uint8_t *iw_mr_check_wait(struct rnic_iw_ep *ep, uint32_t stag, uint64_t to,
			  uint64_t len, int need, enum rnic_term_cause *cause,
			  bool tagged_ddp, bool *wait)
{
	enum rnic_stag_fault e;
	uint8_t *a = rnic_stag_check_at(ep->st, iw_ep_port(ep), stag, ep->pd, ep->qpn, to, len,
					need, &e);
	if (wait != NULL)
		*wait = false;
	if (a == NULL && e == RNIC_STAG_MIGRATE) {
		if (wait != NULL && !ep->mig_answered) {
			*wait = true;
			return NULL;
		}
		e = RNIC_STAG_INVALID;   /* the owner refused it (or revoked it since) */
	}
	if (a == NULL)
		*cause = tagged_ddp ? rnic_term_tagged_fault(e) : rnic_term_read_src_fault(e);
	return a;
}

uint8_t *iw_mr_check(struct rnic_iw_ep *ep, uint32_t stag, uint64_t to,
		     uint64_t len, int need, enum rnic_term_cause *cause,
		     bool tagged_ddp)
{
	return iw_mr_check_wait(ep, stag, to, len, need, cause, tagged_ddp, NULL);
}

/* Queue a Terminate for @p cause, quoting what @p off holds of the
 * offending segment (the Read Request header too, for an error on a Read
 * Request: RFC 5040 section 7.4), and close after it is sent. */
void iw_terminate_off(struct rnic_iw_ep *ep, enum rnic_term_cause cause,
		      const struct rnic_term_offender *off)
{
	bool rdma_mode = ep->state == EP_RTS || ep->state == EP_RTS_WAIT ||
			 ep->state == EP_RTR_WAIT;
	/* one Terminate per stream: it is dead after the first (a second
	 * error found while it drains queues nothing) */
	if (ep->term_err)
		return;
	if ((unsigned)cause < RNIC_TERM_MAX && iw_stack(ep->st) != NULL)
		iw_count(&iw_stack(ep->st)->terms_out[cause]);
	/* no room, no job ring or no Terminate buffer (counted): the stream
	 * ends with a reset instead, the error the same */
	if (ep->term_out == NULL && rdma_mode)
		ep->term_out = iw_alloc(ep->st, "rnic_iw_term", RNIC_TERM_ULPDU_MAX);
	if (!rdma_mode || ep->term_out == NULL || !iw_job_room(ep, 1)) {
		if (ep->state != EP_CLOSED)
			iw_ep_close(ep, -EPROTO);
		return;
	}
	iw_debug("terminate: cause %d (%s)", cause, rnic_term_name(cause));
	int n = rnic_term_build(cause, ep->msn[RNIC_DDP_QN_TERMINATE]++, off, ep->term_out,
				RNIC_TERM_ULPDU_MAX);
	if (n < 0)
		return;
	struct job *j = iw_job_next(ep);
	j->kind = JOB_TERM;
	j->len = (uint32_t)n;
	ep->term_job = ep->job_tail++;
	__atomic_store_n(&ep->xfer->terms_out, ep->xfer->terms_out + 1, __ATOMIC_RELAXED);
	ep->term_err = -EPROTO;
	ep->term_close = true;
	iw_pump(ep);
	ep->state = EP_CLOSING;
	/* the FIN goes behind the Terminate: were it queued now, behind
	 * Read Responses TCP has no room for yet, the Terminate would never
	 * leave (iw_pump closes once it is out) */
	iw_term_close(ep);
}

/* iw_terminate_off() quoting the DDP header @p ddp_hdr (NULL: none) of a
 * segment of ULPDU_Length @p seg_len. */
void iw_terminate(struct rnic_iw_ep *ep, enum rnic_term_cause cause,
		  const uint8_t *ddp_hdr, uint16_t seg_len)
{
	struct rnic_term_offender off = { .ddp_hdr = ddp_hdr, .ddp_seg_len = seg_len };
	iw_terminate_off(ep, cause, &off);
}

/* Flush outstanding work, tell the application, forget the endpoint. */
void iw_ep_flush(struct rnic_iw_ep *ep)
{
	ep->sent_head = ep->built_head = ep->job_tail;
	for (; ep->job_head != ep->job_tail; ep->job_head++) {
		struct job *j = iw_job_at(ep, ep->job_head);
		iw_zc_forget(j);
		if ((j->kind == JOB_SEND || j->kind == JOB_WRITE) && !j->rtr)
			iw_complete(ep, j->wr_id, j->kind == JOB_SEND ? IBV_WC_SEND : IBV_WC_RDMA_WRITE,
				    IBV_WC_WR_FLUSH_ERR, 0);
	}
	for (; ep->ord_head != ep->ord_tail; ep->ord_head++) {
		if (ep->ord[ep->ord_head % ORD_MAX].rtr)
			continue;
		iw_complete(ep, ep->ord[ep->ord_head % ORD_MAX].wr_id,
			    (enum ibv_wc_opcode)ep->ord[ep->ord_head % ORD_MAX].wc_op,
			    IBV_WC_WR_FLUSH_ERR, 0);
	}
	if (ep->in_msg) {   /* the receive a message was being placed into */
		ep->in_msg = false;
		iw_complete(ep, ep->cur->wr_id, IBV_WC_RECV, IBV_WC_WR_FLUSH_ERR, 0);
	}
	/* a verbs QP's receive queue outlives the connection: the verbs
	 * layer flushes it; our own goes here */
	struct rnic_rwqe r;
	while (ep->rq == &ep->own_rq && rnic_rq_take(ep->rq, &r))
		iw_complete(ep, r.wr_id, IBV_WC_RECV, IBV_WC_WR_FLUSH_ERR, 0);
}

void iw_ep_free(struct rnic_iw_ep *ep)
{
	if (ep->mig != NULL)
		rte_pktmbuf_free(ep->mig->park);
	rnic_obj_free(ep->mig);
	ep->mig = NULL;
	rnic_obj_free(ep->term_out);
	ep->term_out = NULL;
	rnic_obj_free(ep->cur);
	ep->cur = NULL;
	rte_pktmbuf_free(ep->stage);
	ep->stage = NULL;
	rnic_rq_fini(&ep->own_rq);
	rnic_obj_free(ep->own_xfer);
	startup_free(ep);
	rnic_obj_free(ep->ord);
	rnic_obj_free(ep->jobs);
	rnic_obj_free(ep);
}

bool iw_job_room(struct rnic_iw_ep *ep, unsigned n)
{
	if (ep->jobs == NULL) {
		ep->jobs = iw_alloc(ep->st, "rnic_iw_jobs", (size_t)ep->job_cap * sizeof(*ep->jobs));
		if (ep->jobs == NULL)
			return false;
	}
	return ep->job_tail - ep->job_head + n <= ep->job_cap;
}

/* Close the endpoint, reporting @p err; the TCP connection goes with a FIN
 * when @p fin (whatever err says: a reject must reach the peer first), else
 * with a reset on an error. */
void iw_ep_close_how(struct rnic_iw_ep *ep, int err, bool fin)
{
	if (ep->state == EP_CLOSED)
		return;
	if (ep->term_err)
		err = ep->term_err;
	ep->state = EP_CLOSED;
	rnic_timer_cancel(&ep->w->timers, &ep->tx_timer);
	if (ep->su != NULL) {
		rnic_timer_cancel(&ep->w->timers, &ep->su->rts_timer);
		iw_mpa_timer_stop(ep);
	}
	iw_ep_flush(ep);
	if (ep->c != NULL) {
		struct rnic_tcp_conn *c = ep->c;
		ep->c = NULL;
		rnic_tcp_set_ops(c, NULL, NULL);
		rnic_tcp_hold(c, false);
		if (err && !fin)
			rnic_tcp_abort(c);
		else
			rnic_tcp_close(c);
	}
	if (ep->ops && ep->ops->disconnected)
		ep->ops->disconnected(ep, ep->ctx, err);
	ep->ops = NULL;
	ep->hooks = NULL;
	if (ep->busy == 0)
		iw_ep_free(ep);   /* else iw_ep_input frees it on the way out */
}

void iw_ep_close(struct rnic_iw_ep *ep, int err)
{
	iw_ep_close_how(ep, err, false);
}

struct rnic_iw_ep *iw_ep_new(struct rnic_worker *w, const struct rnic_iw_ops *ops,
			     const struct rnic_iw_params *p)
{
	struct rnic_iw_ep *ep = iw_alloc(w->st, "rnic_iw_ep", sizeof(*ep));
	if (ep == NULL)
		return NULL;
	ep->su = iw_alloc(w->st, "rnic_iw_startup", sizeof(*ep->su));
	ep->own_xfer = ep->su != NULL ? iw_alloc(w->st, "rnic_iw_xfer", sizeof(*ep->own_xfer)) : NULL;
	if (ep->own_xfer == NULL) {
		rnic_obj_free(ep->su);
		rnic_obj_free(ep);
		return NULL;
	}
	struct iw_stack_state *s = iw_stack(w->st);
	if (s != NULL)
		__atomic_fetch_add(&s->startup_live, 1, __ATOMIC_RELAXED);
	struct rnic_mpa_params *mp = &ep->su->mp;
	ep->job_cap = JOB_MAX;
	ep->rq = &ep->own_rq;
	ep->xfer = ep->own_xfer;
	ep->w = w;
	ep->st = w->st;
	ep->ops = ops;
	struct rnic_iw_params *ip = &ep->su->p;
	if (p)
		*ip = *p;
	else
		rnic_iw_params_default(ip);
	if (ip->ird > ORD_MAX)
		ip->ird = ORD_MAX;
	if (ip->ord > ORD_MAX)
		ip->ord = ORD_MAX;
	rnic_mpa_params_default(mp);
	mp->crc = ip->crc;
	mp->ird = ip->ird;
	mp->ord = ip->ord;
	mp->p2p = ip->p2p;
	mp->rtr_types = ip->rtr_types ? ip->rtr_types & RNIC_MPA_RTR_ALL : RNIC_MPA_RTR_ALL;
	rnic_timer_init(&ep->su->rts_timer, iw_rts_timer_cb, ep);
	rnic_timer_init(&ep->tx_timer, iw_tx_timer_cb, ep);
	rnic_timer_init(&ep->su->mpa_timer, iw_mpa_timer_cb, ep);
	/* RFC 5041 section 5.1: the first message of each queue has MSN 1 */
	for (int q = 0; q < RNIC_DDP_QN_COUNT; q++)
		ep->msn[q] = ep->rx_msn[q] = 1;
	return ep;
}

void rnic_iw_bind_qp(struct rnic_iw_ep *ep, const struct rnic_iw_qp_hooks *h,
		     void *qp, const void *pd, uint32_t qpn, struct rnic_rq *rq,
		     struct rnic_qp_xfer *xfer, uint32_t sq_depth)
{
	if (ep->jobs == NULL) {   /* no job queued yet: size the ring by the QP */
		uint32_t want = rte_align32pow2(sq_depth + ORD_MAX + 2);
		ep->job_cap = RTE_MIN(want, (uint32_t)JOB_MAX);
	}
	if (xfer != NULL) {
		ep->xfer = xfer;
		rnic_obj_free(ep->own_xfer);
		ep->own_xfer = NULL;
	}
	ep->hooks = h;
	ep->qp = qp;
	ep->pd = pd;
	ep->qpn = qpn;
	if (rq != NULL)
		ep->rq = rq;
}

void rnic_iw_set_ctx(struct rnic_iw_ep *ep, void *ctx)
{
	ep->ctx = ctx;
}

void rnic_iw_abort(struct rnic_iw_ep *ep)
{
	if (ep->state != EP_CLOSED)
		iw_ep_close(ep, -ECONNABORTED);
}

void rnic_iw_conn_info(const struct rnic_iw_ep *ep, uint16_t *ird, uint16_t *ord,
		       uint32_t *peer_ip, uint16_t *peer_port)
{
	*ird = ep->res.ird;
	*ord = ep->res.ord;
	*peer_ip = ep->peer.family == RNIC_AF_INET ? ep->peer.v4 : 0;
	*peer_port = ep->peer_port;
}

void rnic_iw_conn_peer(const struct rnic_iw_ep *ep, struct rnic_addr *peer)
{
	*peer = ep->peer;
}

void rnic_iw_peer_pdata(const struct rnic_iw_ep *ep, const void **pd, uint16_t *len)
{
	*pd = ep->res.pdata;
	*len = ep->res.pdata ? ep->res.pd_len : 0;
}

void rnic_iw_dump(const struct rnic_iw_ep *ep, FILE *f)
{
	struct rnic_tcp_info ti = { 0 };
	if (ep->c)
		rnic_tcp_info(ep->c, &ti);
	fprintf(f, "ep state %d jobs %u..%u ord %u..%u inreads %u in_msg %d msn %u/%u/%u rx_msn %u/%u/%u "
		"fpdus %lu/%lu packed %lu staged %u | tcp state %u cwnd %u snd_wnd %u rcv_wnd %u sent %lu acked %lu "
		"recv %lu rtx %lu space %u\n", ep->state, ep->job_head, ep->job_tail, ep->ord_head,
		ep->ord_tail, ep->inreads, ep->in_msg, ep->msn[0], ep->msn[1], ep->msn[2],
		ep->rx_msn[0], ep->rx_msn[1], ep->rx_msn[2], (unsigned long)ep->stats_fpdus_in,
		(unsigned long)ep->stats_fpdus_out, (unsigned long)ep->xfer->fpdus_packed,
		ep->stage != NULL ? rte_pktmbuf_pkt_len(ep->stage) : 0, ti.state, ti.cwnd, ti.snd_wnd, ti.rcv_wnd,
		(unsigned long)ti.bytes_sent, (unsigned long)ti.bytes_acked,
		(unsigned long)ti.bytes_received, (unsigned long)ti.retransmits,
		ep->c ? rnic_tcp_send_space(ep->c) : 0);
	if (ep->c) {
		const struct rnic_tcp_conn *c = ep->c;
		fprintf(f, "  tcp una %u nxt %u max %u units %u/%u/%u rtx pending %d in %ld ticks tlp %d/%d rto_retries %u lost %u recovery %d rcv_nxt %u\n",
			c->snd_una, c->snd_nxt, c->snd_max, c->u_head, c->u_next, c->u_tail,
			rnic_timer_pending(&c->rtx_timer),
			(long)(c->rtx_timer.expire_tick - ep->w->timers.cur_tick), c->tlp_armed,
			c->tlp_out, c->rto_retries, c->lost_bytes, c->in_recovery, c->rcv_nxt);
		fprintf(f, "  tcp rcv: wnd %u ooo %u (%u bytes) hold %d held %u rcv_adv %u snd_wnd %u\n",
			tcp_rcv_window(c), c->n_ooo, c->ooo_bytes, c->hold,
			c->held ? rte_pktmbuf_pkt_len(c->held) : 0, c->rcv_adv, c->snd_wnd);
		for (unsigned i = 0; i < c->n_ooo && i < 8; i++)
			fprintf(f, "    ooo %u seq %u len %u\n", i, c->ooo[i].seq, c->ooo[i].len);
		for (uint32_t i = c->u_head; i != c->u_next && i - c->u_head < 8; i++) {
			const struct tcp_unit *u = &c->units[i & (c->units_cap - 1)];
			fprintf(f, "    unit %u seq %u len %u sacked %d lost %d retx %d\n", i, u->seq,
				u->len, u->sacked, u->lost, u->retx);
		}
	}
}

void rnic_iw_telemetry(const struct rnic_iw_ep *ep, struct rte_tel_data *d)
{
	static const char *const names[] = {
		[EP_CONNECTING] = "connecting", [EP_MPA_REQ] = "mpa_req",
		[EP_DECIDING] = "deciding", [EP_MPA_REP] = "mpa_rep", [EP_RTS_WAIT] = "rts_wait",
		[EP_RTR_WAIT] = "rtr_wait", [EP_RTS] = "rts", [EP_CLOSING] = "closing",
		[EP_CLOSED] = "closed",
	};
	rte_tel_data_add_dict_string(d, "ep_state", ep->state <= EP_CLOSED ? names[ep->state] : "?");
	rte_tel_data_add_dict_int(d, "mpa_startup_held", ep->su != NULL);
	rte_tel_data_add_dict_u64(d, "msn_send", ep->msn[RNIC_DDP_QN_SEND]);
	rte_tel_data_add_dict_u64(d, "msn_read_req", ep->msn[RNIC_DDP_QN_READ_REQ]);
	rte_tel_data_add_dict_u64(d, "rx_msn_send", ep->rx_msn[RNIC_DDP_QN_SEND]);
	rte_tel_data_add_dict_u64(d, "rx_msn_read_req", ep->rx_msn[RNIC_DDP_QN_READ_REQ]);
	rte_tel_data_add_dict_u64(d, "jobs_queued", ep->job_tail - ep->job_head);
	rte_tel_data_add_dict_u64(d, "job_ring", ep->jobs != NULL ? ep->job_cap : 0);
	rte_tel_data_add_dict_u64(d, "ord_outstanding", ep->ord_tail - ep->ord_head);
	rte_tel_data_add_dict_u64(d, "ird_in_use", ep->inreads);
	rte_tel_data_add_dict_u64(d, "ird", ep->res.ird);
	rte_tel_data_add_dict_u64(d, "ord", ep->res.ord);
	rte_tel_data_add_dict_u64(d, "fpdus_in", ep->stats_fpdus_in);
	rte_tel_data_add_dict_u64(d, "fpdus_out", ep->stats_fpdus_out);
	if (ep->c == NULL)
		return;
	const struct rnic_tcp_conn *c = ep->c;
	struct rnic_tcp_info ti;
	rnic_tcp_info(c, &ti);
	rte_tel_data_add_dict_u64(d, "tcp_state", ti.state);
	rte_tel_data_add_dict_u64(d, "tcp_snd_una", c->snd_una);
	rte_tel_data_add_dict_u64(d, "tcp_snd_nxt", c->snd_nxt);
	rte_tel_data_add_dict_u64(d, "tcp_rcv_nxt", c->rcv_nxt);
	rte_tel_data_add_dict_u64(d, "tcp_cwnd", ti.cwnd);
	rte_tel_data_add_dict_u64(d, "tcp_snd_wnd", ti.snd_wnd);
	rte_tel_data_add_dict_u64(d, "tcp_rcv_wnd", ti.rcv_wnd);
	rte_tel_data_add_dict_u64(d, "tcp_srtt_us", ti.srtt_us);
	rte_tel_data_add_dict_u64(d, "tcp_units_queued", c->u_tail - c->u_head);
	rte_tel_data_add_dict_u64(d, "tcp_unit_ring", c->units_cap);
	rte_tel_data_add_dict_u64(d, "tcp_retransmits", ti.retransmits);
}

bool rnic_iw_tcp_up(const struct rnic_iw_ep *ep)
{
	return ep->tcp_up;
}

void rnic_iw_ep_counters(const struct rnic_iw_ep *ep, uint64_t *fpdus_in,
			 uint64_t *fpdus_out, uint64_t *terms_in, uint64_t *terms_out)
{
	*fpdus_in = ep->stats_fpdus_in;
	*fpdus_out = ep->stats_fpdus_out;
	*terms_in = __atomic_load_n(&ep->xfer->terms_in, __ATOMIC_RELAXED);
	*terms_out = __atomic_load_n(&ep->xfer->terms_out, __ATOMIC_RELAXED);
}

int rnic_iw_disconnect(struct rnic_iw_ep *ep)
{
	if (ep->state == EP_CLOSED || ep->state == EP_CLOSING)
		return -EALREADY;
	ep->state = EP_CLOSING;
	iw_pump(ep);
	iw_ep_flush(ep);
	return rnic_tcp_close(ep->c);
}
