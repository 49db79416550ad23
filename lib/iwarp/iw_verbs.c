/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * iWARP behind the transport interface of rdma/qp.h: the QP operations
 * (an endpoint bound to the QP does the work: qp->tp is the endpoint while
 * one is bound) and the CM operations (MPA startup on rnic TCP). The
 * iWARP protocol module (iw_ep.c) registers them with each stack.
 *
 * An endpoint lives on one worker: every call that touches it runs there
 * (rnic_worker_call_sync from the CM's application thread), and the CM's
 * slot for it (connp) is read there, because the endpoint may end at any
 * moment (its disconnected callback clears the slot through cm_event).
 */
#include <errno.h>
#include <stdio.h>

#include "engine/stack.h"
#include "engine/worker.h"
#include "iwarp/iw_ep.h"
#include "iwarp/iw_int.h"
#include "rdma/qp.h"
#include "rdma/rdma.h"
#include "rnic/rnic_tcp.h"

/* --- binding an endpoint to a QP --------------------------------------------------- */

static void hook_completion(void *arg, const struct ibv_wc *wc, bool solicited)
{
	rnic_qp_complete(arg, wc, solicited);
}

static void hook_tx_room(void *arg)
{
	rnic_qp_tx_room(arg);
}

static const struct rnic_iw_qp_hooks qp_hooks = {
	.completion = hook_completion,
	.tx_room = hook_tx_room,
};

/* On the endpoint's worker: @p ep does @p qp's work from now on. */
static void iw_qp_attach(struct rnic_qp *qp, struct rnic_iw_ep *ep)
{
	qp->tp = ep;
	qp->w = ep->w;
	qp->conn = QP_CONNECTING;
	rnic_iw_bind_qp(ep, &qp_hooks, qp, qp->qp.pd, qp->qp.qp_num, qp->rqp, &qp->xfer,
			qp->sq_size);
}

/* On the worker: @p qp's endpoint is gone (or going): keep its counters,
 * and the QP loses its connection. */
static void iw_qp_detach(struct rnic_qp *qp)
{
	struct rnic_iw_ep *ep = qp->tp;
	if (ep == NULL)
		return;
	uint64_t fin, fout, tin, tout;
	rnic_iw_ep_counters(ep, &fin, &fout, &tin, &tout);
	qp->fpdus_in += fin;
	qp->fpdus_out += fout;   /* Terminates: counted live in qp->xfer */
	qp->tp = NULL;
	rnic_qp_conn_lost(qp);
}

/* Undo iw_qp_attach before the connection started (a refused accept). */
static void iw_qp_unattach(struct rnic_qp *qp)
{
	qp->tp = NULL;
	qp->w = NULL;
	qp->conn = QP_IDLE;
	__atomic_store_n(&qp->qp.state, IBV_QPS_INIT, __ATOMIC_RELEASE);
}

/* --- QP operations (on the QP's worker) ----------------------------------------------- */

static bool iw_has_room(struct rnic_qp *qp)
{
	return rnic_iw_has_room(qp->tp);
}

static int iw_post(struct rnic_qp *qp, const struct ibv_send_wr *wr)
{
	return rnic_iw_post_wr(qp->tp, wr);
}

static void iw_kick(struct rnic_qp *qp)
{
	if (qp->tp != NULL)
		rnic_iw_kick(qp->tp);
}

static void iw_abort(struct rnic_qp *qp)
{
	struct rnic_iw_ep *ep = qp->tp;
	if (ep == NULL)
		return;
	rnic_iw_abort(ep);   /* the disconnected callback detaches the QP */
	if (qp->tp == ep)    /* it did not: detach here */
		iw_qp_detach(qp);
}

static void iw_telemetry(struct rnic_qp *qp, struct rte_tel_data *d)
{
	if (qp->tp != NULL)
		rnic_iw_telemetry(qp->tp, d);
}

static void iw_dump(struct rnic_qp *qp, FILE *f)
{
	if (qp->tp != NULL)
		rnic_iw_dump(qp->tp, f);
	else
		fprintf(f, "  (no endpoint)\n");
}

/* --- CM: endpoint callbacks into the CM's upcalls (on the worker) ---------------------- */

static const struct rnic_cm_upcalls *cm_up(const struct rnic_iw_ep *ep)
{
	return iw_stack(ep->st)->cm_up;
}

static void *cb_request(struct rnic_iw_ep *ep, void *lctx, const void *pdata, uint16_t len)
{
	void *ctx = cm_up(ep)->request((struct rnic_tp_conn *)ep, lctx, RNIC_TRANSPORT_IWARP,
				       ep->w, pdata, len);
	if (ctx == NULL)
		return NULL;   /* rejected */
	rnic_iw_set_ctx(ep, ctx);
	return RNIC_IW_DEFER;   /* the application accepts or rejects */
}

static void cb_established(struct rnic_iw_ep *ep, void *ctx)
{
	ep->rdma_mode = true;
	if (ep->qp != NULL)
		rnic_qp_established(ep->qp);
	/* the active side learns the accept's private data here */
	const void *pd = NULL;
	uint16_t len = 0;
	if (ep->active)
		rnic_iw_peer_pdata(ep, &pd, &len);
	cm_up(ep)->event(ctx, RNIC_CM_EVENT_ESTABLISHED, 0, 0, pd, len, false);
}

static void cb_disconnected(struct rnic_iw_ep *ep, void *ctx, int err)
{
	if (ep->qp != NULL && ((struct rnic_qp *)ep->qp)->tp == ep)
		iw_qp_detach(ep->qp);
	if (ctx == NULL)
		return;
	enum rnic_cm_event_type t = RNIC_CM_EVENT_DISCONNECTED;
	const void *pd = NULL;
	uint16_t len = 0;
	if (ep->active && !ep->rdma_mode) {
		/* a failed connect; an MPA timeout is UNREACHABLE/-ETIMEDOUT,
		 * as rdma_cm has it */
		t = !rnic_iw_tcp_up(ep) || err == -ETIMEDOUT ? RNIC_CM_EVENT_UNREACHABLE :
		    err == -ECONNREFUSED ? RNIC_CM_EVENT_REJECTED : RNIC_CM_EVENT_CONNECT_ERROR;
		if (t == RNIC_CM_EVENT_REJECTED)   /* the reject's private data */
			rnic_iw_peer_pdata(ep, &pd, &len);
	}
	/* conn_info is still readable: the endpoint is freed after we return */
	cm_up(ep)->event(ctx, t, err, 0, pd, len, true);
}

static const struct rnic_iw_ops cm_ops = {
	.request = cb_request,
	.established = cb_established,
	.disconnected = cb_disconnected,
};

static void params_from(struct rnic_iw_params *p, const struct rnic_cm_conn_param *c)
{
	rnic_iw_params_default(p);
	if (c == NULL)
		return;
	if (c->responder_resources)
		p->ird = c->responder_resources;
	if (c->initiator_depth)
		p->ord = c->initiator_depth;
	p->crc = !c->no_crc;
	p->p2p = c->p2p;
	if (c->rtr_types)
		p->rtr_types = c->rtr_types;
	p->mpa_timeout_ms = c->mpa_timeout_ms;
	if (c->rts_delay_us == RNIC_CM_RTS_NO_DELAY)
		p->rts_delay_us = 0;
	else if (c->rts_delay_us != 0)
		p->rts_delay_us = c->rts_delay_us;
}

/* --- CM operations (from an application thread) ------------------------------------------ */

static int iw_cm_listen(struct rnic_stack *st, uint16_t port, int backlog,
			const struct rnic_cm_upcalls *up, void *lctx)
{
	struct rnic_iw_params p;
	rnic_iw_params_default(&p);
	p.backlog = (uint32_t)backlog;
	iw_stack(st)->cm_up = up;
	return rnic_iw_listen(st, port, &cm_ops, lctx, &p);
}

static void do_unlisten(struct rnic_worker *w, void *arg)
{
	rnic_iw_unlisten(w->st, (uint16_t)(uintptr_t)arg);
}

static void iw_cm_unlisten(struct rnic_stack *st, uint16_t port)
{
	rnic_worker_call_sync(st->workers[0], do_unlisten, (void *)(uintptr_t)port);
}

/* One CM call on the endpoint's worker. */
struct cm_call {
	struct rnic_tp_conn **connp;
	struct rnic_qp *qp;
	const struct rnic_cm_conn_param *param;
	void *ctx;
	struct rnic_addr dst;
	uint16_t port;
	bool flag;   /* connect/attach: active; disconnect: abort */
	struct rnic_tcp_conn *c;
	const void *early;
	size_t early_len;
	int rc;
};

static int call_on(struct rnic_worker *w, void (*fn)(struct rnic_worker *, void *),
		   struct cm_call *a)
{
	int rc = rnic_worker_call_sync(w, fn, a);
	return rc != 0 ? rc : a->rc;
}

static const void *pdata_of(const struct rnic_cm_conn_param *c) { return c ? c->private_data : NULL; }
static uint16_t pdlen_of(const struct rnic_cm_conn_param *c) { return c ? c->private_data_len : 0; }

static void do_connect(struct rnic_worker *w, void *arg)
{
	struct cm_call *a = arg;
	struct rnic_iw_params p;
	struct rnic_iw_ep *ep;
	params_from(&p, a->param);
	a->rc = rnic_iw_connect_addr(w, &a->dst, a->port, &cm_ops, a->ctx, &p,
				     pdata_of(a->param), pdlen_of(a->param), &ep);
	if (a->rc != 0)
		return;
	*a->connp = (struct rnic_tp_conn *)ep;
	iw_qp_attach(a->qp, ep);
}

static int iw_cm_connect(struct rnic_worker *w, struct rnic_qp *qp, const struct rnic_addr *dst,
			 uint16_t port, const struct rnic_cm_conn_param *param,
			 const struct rnic_cm_upcalls *up, void *ctx, struct rnic_tp_conn **connp)
{
	struct cm_call a = { .connp = connp, .qp = qp, .param = param, .ctx = ctx,
			     .dst = *dst, .port = port };
	iw_stack(w->st)->cm_up = up;
	__atomic_store_n(&qp->qp.state, IBV_QPS_RTR, __ATOMIC_RELEASE);
	int rc = call_on(w, do_connect, &a);
	if (rc != 0)
		__atomic_store_n(&qp->qp.state, IBV_QPS_INIT, __ATOMIC_RELEASE);
	return rc;
}

static void do_attach_stream(struct rnic_worker *w, void *arg)
{
	(void)w;
	struct cm_call *a = arg;
	struct rnic_iw_params p;
	struct rnic_iw_ep *ep;
	params_from(&p, a->param);
	/* active: the QP is bound before the MPA request can be answered */
	a->rc = rnic_iw_attach_stream(a->c, a->flag, &cm_ops, a->ctx, &p,
				      a->flag ? pdata_of(a->param) : NULL,
				      a->flag ? pdlen_of(a->param) : 0, a->early, a->early_len, &ep);
	if (a->rc != 0)
		return;
	*a->connp = (struct rnic_tp_conn *)ep;
	if (a->flag)
		iw_qp_attach(a->qp, ep);
}

static int iw_cm_attach_stream(struct rnic_tcp_conn *c, bool active, struct rnic_qp *qp,
			       const struct rnic_cm_conn_param *param, const void *early,
			       size_t early_len, const struct rnic_cm_upcalls *up, void *ctx,
			       struct rnic_tp_conn **connp, struct rnic_worker **w_out)
{
	struct rnic_worker *w = rnic_tcp_worker(c);
	struct cm_call a = { .connp = connp, .qp = qp, .param = param, .ctx = ctx, .flag = active,
			     .c = c, .early = early, .early_len = early_len };
	iw_stack(w->st)->cm_up = up;
	if (qp != NULL)
		__atomic_store_n(&qp->qp.state, IBV_QPS_RTR, __ATOMIC_RELEASE);
	int rc = call_on(w, do_attach_stream, &a);
	if (rc != 0 && qp != NULL)
		__atomic_store_n(&qp->qp.state, IBV_QPS_INIT, __ATOMIC_RELEASE);
	*w_out = w;
	return rc;
}

static void do_accept(struct rnic_worker *w, void *arg)
{
	(void)w;
	struct cm_call *a = arg;
	const struct rnic_cm_conn_param *c = a->param;
	struct rnic_iw_ep *ep = (struct rnic_iw_ep *)*a->connp;
	if (ep == NULL) {
		a->rc = -ENOTCONN;
		return;
	}
	iw_qp_attach(a->qp, ep);
	a->rc = rnic_iw_accept(ep, a->ctx, pdata_of(c), pdlen_of(c),
			       c ? c->responder_resources : 0, c ? c->initiator_depth : 0);
	if (a->rc != 0 && a->qp->tp == ep)
		iw_qp_unattach(a->qp);
}

static int iw_cm_accept(struct rnic_worker *w, struct rnic_tp_conn **connp, struct rnic_qp *qp,
			const struct rnic_cm_conn_param *param, void *ctx)
{
	struct cm_call a = { .connp = connp, .qp = qp, .param = param, .ctx = ctx };
	__atomic_store_n(&qp->qp.state, IBV_QPS_RTR, __ATOMIC_RELEASE);
	int rc = call_on(w, do_accept, &a);
	if (rc != 0)
		iw_qp_unattach(qp);
	return rc;
}

static void do_reject(struct rnic_worker *w, void *arg)
{
	(void)w;
	struct cm_call *a = arg;
	struct rnic_iw_ep *ep = (struct rnic_iw_ep *)*a->connp;
	a->rc = ep == NULL ? -ENOTCONN :
		rnic_iw_reject(ep, pdata_of(a->param), pdlen_of(a->param));
}

static int iw_cm_reject(struct rnic_worker *w, struct rnic_tp_conn **connp, const void *pdata,
			uint16_t len)
{
	struct rnic_cm_conn_param c = { .private_data = pdata, .private_data_len = len };
	struct cm_call a = { .connp = connp, .param = &c };
	return call_on(w, do_reject, &a);
}

static void do_disconnect(struct rnic_worker *w, void *arg)
{
	(void)w;
	struct cm_call *a = arg;
	struct rnic_iw_ep *ep = (struct rnic_iw_ep *)*a->connp;
	if (ep == NULL) {
		a->rc = -ENOTCONN;
		return;
	}
	if (a->flag) {   /* abort */
		rnic_iw_abort(ep);
		a->rc = 0;
		return;
	}
	a->rc = rnic_iw_disconnect(ep);
	if (a->rc == -EALREADY)
		a->rc = 0;
}

static int iw_cm_disconnect(struct rnic_worker *w, struct rnic_tp_conn **connp)
{
	struct cm_call a = { .connp = connp };
	return call_on(w, do_disconnect, &a);
}

static void iw_cm_detach(struct rnic_worker *w, struct rnic_tp_conn **connp)
{
	/* an aborted request or connection runs its disconnected callback:
	 * the slot is NULL after this */
	struct cm_call a = { .connp = connp, .flag = true };
	(void)call_on(w, do_disconnect, &a);
}

static void iw_cm_conn_info(const struct rnic_tp_conn *c, uint16_t *ird, uint16_t *ord,
			    struct rnic_addr *peer, uint16_t *port)
{
	uint32_t ip;
	rnic_iw_conn_info((const struct rnic_iw_ep *)c, ird, ord, &ip, port);
	rnic_iw_conn_peer((const struct rnic_iw_ep *)c, peer);
}

const struct rnic_qp_tops iw_tops = {
	.name = "iwarp",
	.caps = 0,
	.has_room = iw_has_room,
	.post = iw_post,
	.kick = iw_kick,
	.abort = iw_abort,
	.dump = iw_dump,
	.telemetry = iw_telemetry,
	.cm = {
		.listen = iw_cm_listen,
		.unlisten = iw_cm_unlisten,
		.connect = iw_cm_connect,
		.accept = iw_cm_accept,
		.reject = iw_cm_reject,
		.disconnect = iw_cm_disconnect,
		.detach = iw_cm_detach,
		.conn_info = iw_cm_conn_info,
		.attach_stream = iw_cm_attach_stream,
	},
};
