/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Connection manager (rnic_cm.h) for iWARP QPs, on the endpoint engine,
 * and for RoCE QPs, on the IB CM of lib/roce (roce/ibcm.h): an id holds an
 * endpoint (ep) or an IB CM connection (ib), never both; a listener
 * listens on both.
 * Ids are touched by application threads only through calls that run on
 * the endpoint's worker (rnic_worker_call_sync), and by the endpoint's
 * callbacks there; events cross back through the channel's mutex-guarded
 * list and its eventfd. Control path only.
 */
#include <errno.h>
#include <stdbool.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "engine/stack.h"
#include "engine/worker.h"
#include "iwarp/iw_ep.h"
#include "roce/ibcm.h"
#include "rnic/rnic_cm.h"
#include "rnic/rnic_roce.h"
#include "verbs/verbs.h"

struct ev_node {
	struct rnic_cm_event ev;
	struct ev_node *next;
};

struct rnic_cm_channel {
	struct rnic_device *dev;
	int fd;
	pthread_mutex_t lock;
	struct ev_node *head, *tail;
	unsigned users;
};

enum id_state { ID_IDLE, ID_LISTEN, ID_STREAM_WAIT, ID_REQ, ID_CONNECTING, ID_CONNECTED, ID_CLOSING,
		ID_CLOSED, ID_REJECTED };

struct rnic_cm_id {
	struct rnic_cm_channel *ch;
	void *context;
	struct rnic_qp *qp;
	struct rnic_iw_ep *ep;          /* owned by the worker */
	struct rnic_ibcm_conn *ib;      /* RoCE: owned by worker 0 */
	enum rnic_transport transport;
	bool ib_listen;                 /* listener: RoCE REQs too */
	struct rnic_worker *w;
	enum id_state state;
	uint16_t port;
	struct rnic_cm_id *listen_id;
	struct rnic_iw_params params;   /* listener: for requests */
};

static const char *const ev_names[] = {
	[RNIC_CM_EVENT_CONNECT_REQUEST] = "CONNECT_REQUEST",
	[RNIC_CM_EVENT_ESTABLISHED] = "ESTABLISHED",
	[RNIC_CM_EVENT_REJECTED] = "REJECTED",
	[RNIC_CM_EVENT_UNREACHABLE] = "UNREACHABLE",
	[RNIC_CM_EVENT_CONNECT_ERROR] = "CONNECT_ERROR",
	[RNIC_CM_EVENT_DISCONNECTED] = "DISCONNECTED",
};

const char *rnic_cm_event_str(enum rnic_cm_event_type t)
{
	return (unsigned)t < RTE_DIM(ev_names) && ev_names[t] ? ev_names[t] : "UNKNOWN";
}

static struct rnic_stack *id_stack(const struct rnic_cm_id *id)
{
	return id->ch->dev->st;
}

/* Queue an event (any thread); @p reason: an IB CM REJ's, or 0. */
static void post_event_r(struct rnic_cm_id *id, enum rnic_cm_event_type t, int status,
			 uint16_t reason, const void *pdata, uint16_t pd_len)
{
	struct ev_node *n = calloc(1, sizeof(*n));
	if (n == NULL)
		return;
	n->ev.type = t;
	n->ev.rej_reason = reason;
	n->ev.id = id;
	n->ev.listen_id = id->listen_id;
	n->ev.status = status;
	n->ev.transport = id->transport;
	if (id->ep != NULL || id->ib != NULL) {
		uint16_t ird, ord;
		if (id->ep != NULL) {
			rnic_iw_conn_info(id->ep, &ird, &ord, &n->ev.peer_ip, &n->ev.peer_port);
			rnic_iw_conn_peer(id->ep, &n->ev.peer);
		} else {
			rnic_ibcm_conn_info(id->ib, &ird, &ord, &n->ev.peer_ip, &n->ev.peer_port);
			n->ev.peer = rnic_addr_v4(n->ev.peer_ip);
		}
		n->ev.ird = (uint8_t)ird;
		n->ev.ord = (uint8_t)ord;
	}
	if (pd_len > sizeof(n->ev.private_data))
		pd_len = sizeof(n->ev.private_data);
	if (pd_len && pdata)
		memcpy(n->ev.private_data, pdata, pd_len);
	n->ev.private_data_len = pdata ? pd_len : 0;
	struct rnic_cm_channel *ch = id->ch;
	pthread_mutex_lock(&ch->lock);
	if (ch->tail)
		ch->tail->next = n;
	else
		ch->head = n;
	ch->tail = n;
	pthread_mutex_unlock(&ch->lock);
	uint64_t one = 1;
	ssize_t w = write(ch->fd, &one, sizeof(one));
	(void)w;
}

static void post_event(struct rnic_cm_id *id, enum rnic_cm_event_type t, int status,
		       const void *pdata, uint16_t pd_len)
{
	post_event_r(id, t, status, 0, pdata, pd_len);
}

/* --- endpoint callbacks (on the worker) --------------------------------------- */

static void *cb_request(struct rnic_iw_ep *ep, void *lctx, const void *pdata, uint16_t len)
{
	struct rnic_cm_id *l = lctx;
	if (l->state == ID_STREAM_WAIT) {   /* a stream switched to RDMA mode */
		l->state = ID_REQ;
		l->ep = ep;
		l->w = rnic_iw_worker(ep);
		rnic_iw_set_ctx(ep, l);
		post_event(l, RNIC_CM_EVENT_CONNECT_REQUEST, 0, pdata, len);
		return RNIC_IW_DEFER;
	}
	struct rnic_cm_id *id = calloc(1, sizeof(*id));
	if (id == NULL)
		return NULL;   /* rejected */
	id->ch = l->ch;
	id->ep = ep;
	id->w = rnic_iw_worker(ep);
	id->listen_id = l;
	id->state = ID_REQ;
	__atomic_fetch_add(&id->ch->users, 1, __ATOMIC_RELAXED);
	id->transport = RNIC_TRANSPORT_IWARP;
	rnic_iw_set_ctx(ep, id);
	post_event(id, RNIC_CM_EVENT_CONNECT_REQUEST, 0, pdata, len);
	return RNIC_IW_DEFER;
}

static void cb_established(struct rnic_iw_ep *ep, void *ctx)
{
	struct rnic_cm_id *id = ctx;
	bool active = id->state == ID_CONNECTING;
	id->state = ID_CONNECTED;
	if (id->qp != NULL)
		rnic_qp_established(id->qp);
	/* the active side learns the accept's private data here */
	const void *pd = NULL;
	uint16_t len = 0;
	if (active)
		rnic_iw_peer_pdata(ep, &pd, &len);
	post_event(id, RNIC_CM_EVENT_ESTABLISHED, 0, pd, len);
}

static void cb_disconnected(struct rnic_iw_ep *ep, void *ctx, int err)
{
	struct rnic_cm_id *id = ctx;
	if (id == NULL)
		return;
	enum id_state was = id->state;
	bool tcp_up = rnic_iw_tcp_up(ep);
	if (id->qp != NULL)
		rnic_qp_conn_lost(id->qp);
	/* conn_info is still readable: the endpoint is freed after we return */
	if (was == ID_CONNECTING) {
		/* an MPA timeout is UNREACHABLE/-ETIMEDOUT, as rdma_cm has it */
		enum rnic_cm_event_type t = !tcp_up || err == -ETIMEDOUT ?
			RNIC_CM_EVENT_UNREACHABLE :
			err == -ECONNREFUSED ? RNIC_CM_EVENT_REJECTED : RNIC_CM_EVENT_CONNECT_ERROR;
		const void *pd = NULL;
		uint16_t len = 0;
		if (t == RNIC_CM_EVENT_REJECTED)   /* the reject's private data */
			rnic_iw_peer_pdata(ep, &pd, &len);
		post_event(id, t, err, pd, len);
	} else if (was == ID_CONNECTED || was == ID_CLOSING || was == ID_REQ ||
		   was == ID_STREAM_WAIT) {
		post_event(id, RNIC_CM_EVENT_DISCONNECTED, err, NULL, 0);
	}
	id->ep = NULL;
	id->state = was == ID_REJECTED ? ID_REJECTED : ID_CLOSED;
}

static const struct rnic_iw_ops cm_ops = {
	.request = cb_request,
	.established = cb_established,
	.disconnected = cb_disconnected,
};

/* --- IB CM callbacks (RoCE, on worker 0) ------------------------------------------ */

static void *ib_request(struct rnic_ibcm_conn *c, void *lctx, const void *pdata, uint16_t len)
{
	struct rnic_cm_id *l = lctx;
	struct rnic_cm_id *id = calloc(1, sizeof(*id));
	if (id == NULL)
		return NULL;   /* the IB CM rejects it */
	id->ch = l->ch;
	id->ib = c;
	id->w = l->ch->dev->st->workers[0];
	id->listen_id = l;
	id->state = ID_REQ;
	id->transport = RNIC_TRANSPORT_ROCE;
	__atomic_fetch_add(&id->ch->users, 1, __ATOMIC_RELAXED);
	post_event(id, RNIC_CM_EVENT_CONNECT_REQUEST, 0, pdata, len);
	return id;
}

/* Everything after the request: the id's state follows the event. */
static void ib_event(void *ctx, enum rnic_cm_event_type t, int status, uint16_t reason,
		     const void *pdata, uint16_t len)
{
	struct rnic_cm_id *id = ctx;
	if (t == RNIC_CM_EVENT_ESTABLISHED)
		id->state = ID_CONNECTED;
	else
		id->state = t == RNIC_CM_EVENT_REJECTED ? ID_REJECTED : ID_CLOSED;
	post_event_r(id, t, status, reason, pdata, len);
}

static const struct rnic_ibcm_ops ib_ops = {
	.request = ib_request,
	.event = ib_event,
};

/* --- channel ------------------------------------------------------------------ */

struct rnic_cm_channel *rnic_cm_create_channel(struct ibv_context *ctx)
{
	struct rnic_cm_channel *ch = calloc(1, sizeof(*ch));
	if (ch == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	ch->dev = dev_of(ctx);
	ch->fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (ch->fd < 0) {
		free(ch);
		return NULL;
	}
	pthread_mutex_init(&ch->lock, NULL);
	return ch;
}

int rnic_cm_destroy_channel(struct rnic_cm_channel *ch)
{
	if (__atomic_load_n(&ch->users, __ATOMIC_ACQUIRE) != 0)
		return -EBUSY;
	for (struct ev_node *n = ch->head, *nx; n; n = nx) {
		nx = n->next;
		free(n);
	}
	close(ch->fd);
	pthread_mutex_destroy(&ch->lock);
	free(ch);
	return 0;
}

int rnic_cm_channel_fd(const struct rnic_cm_channel *ch)
{
	return ch->fd;
}

int rnic_cm_get_event(struct rnic_cm_channel *ch, struct rnic_cm_event *ev, int timeout_ms)
{
	bool last_look = false;   /* timeout 0: one more look after a wake-up */
	for (;;) {
		pthread_mutex_lock(&ch->lock);
		struct ev_node *n = ch->head;
		if (n != NULL) {
			ch->head = n->next;
			if (ch->head == NULL)
				ch->tail = NULL;
		}
		pthread_mutex_unlock(&ch->lock);
		if (n != NULL) {
			*ev = n->ev;
			free(n);
			return 0;
		}
		if (last_look)
			return -EAGAIN;
		struct pollfd p = { .fd = ch->fd, .events = POLLIN };
		int r = poll(&p, 1, timeout_ms);
		if (r == 0)
			return -EAGAIN;
		if (r < 0 && errno != EINTR)
			return -errno;
		uint64_t v;
		ssize_t k = read(ch->fd, &v, sizeof(v));
		(void)k;
		last_look = timeout_ms == 0;
	}
}

/* --- ids ------------------------------------------------------------------------ */

int rnic_cm_create_id(struct rnic_cm_channel *ch, void *context, struct rnic_cm_id **out)
{
	if (ch == NULL || out == NULL)
		return -EINVAL;
	struct rnic_cm_id *id = calloc(1, sizeof(*id));
	if (id == NULL)
		return -ENOMEM;
	id->ch = ch;
	id->context = context;
	__atomic_fetch_add(&ch->users, 1, __ATOMIC_RELAXED);
	*out = id;
	return 0;
}

void *rnic_cm_id_context(const struct rnic_cm_id *id) { return id->context; }
void rnic_cm_id_set_context(struct rnic_cm_id *id, void *context) { id->context = context; }
struct ibv_qp *rnic_cm_id_qp(const struct rnic_cm_id *id) { return id->qp ? &id->qp->qp : NULL; }
enum rnic_transport rnic_cm_id_transport(const struct rnic_cm_id *id) { return id->transport; }

static void do_unlisten_iw(struct rnic_worker *w, void *arg)
{
	struct rnic_cm_id *id = arg;
	rnic_iw_unlisten(w->st, id->port);
}

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
}

int rnic_cm_listen(struct rnic_cm_id *id, uint16_t port, int backlog)
{
	(void)backlog;   /* the SYN stage has no per-SYN state; accept queue is the TCP's */
	if (id->state != ID_IDLE || port == 0)
		return -EINVAL;
	params_from(&id->params, NULL);
	int rc = rnic_iw_listen(id_stack(id), port, &cm_ops, id, &id->params);
	if (rc != 0)
		return rc;
	rc = rnic_ibcm_listen(id_stack(id), port, &ib_ops, id);
	if (rc != 0) {
		rnic_worker_call_sync(id_stack(id)->workers[0], do_unlisten_iw, id);
		return rc;
	}
	id->ib_listen = true;
	id->port = port;
	id->state = ID_LISTEN;
	return 0;
}

struct connect_args {
	struct rnic_cm_id *id;
	struct rnic_addr dst;
	uint16_t port;
	struct rnic_iw_params p;
	const struct rnic_cm_conn_param *param;
	int rc;
};

static void do_connect(struct rnic_worker *w, void *arg)
{
	struct connect_args *a = arg;
	struct rnic_iw_ep *ep;
	const struct rnic_cm_conn_param *c = a->param;
	a->id->state = ID_CONNECTING;
	a->id->w = w;
	a->rc = rnic_iw_connect_addr(w, &a->dst, a->port, &cm_ops, a->id, &a->p,
				c ? c->private_data : NULL, c ? c->private_data_len : 0, &ep);
	if (a->rc != 0) {
		a->id->state = ID_IDLE;
		a->id->w = NULL;
		return;
	}
	a->id->ep = ep;
	rnic_qp_attach_iw(a->id->qp, ep, w);
}

static bool qp_free_for_cm(const struct rnic_qp *qp)
{
	enum ibv_qp_state s = __atomic_load_n(&qp->qp.state, __ATOMIC_ACQUIRE);
	return qp->transport == RNIC_TRANSPORT_IWARP && qp->cm_id == NULL && qp->ep == NULL &&
	       (s == IBV_QPS_RESET || s == IBV_QPS_INIT);
}

/* A RoCE QP the CM may take: RC, not attached, RESET or INIT. */
static bool roce_qp_free(const struct rnic_qp *qp)
{
	enum ibv_qp_state s = __atomic_load_n(&qp->qp.state, __ATOMIC_ACQUIRE);
	return qp->transport == RNIC_TRANSPORT_ROCE && qp->qp.qp_type == IBV_QPT_RC &&
	       qp->cm_id == NULL && (s == IBV_QPS_RESET || s == IBV_QPS_INIT);
}

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

static int roce_connect(struct rnic_cm_id *id, struct rnic_qp *qp, uint32_t ip, uint16_t port,
			const struct rnic_cm_conn_param *param)
{
	struct rnic_ibcm_params p;
	ib_params(&p, param);
	if (p.pdata_len > RNIC_CM_ROCE_REQ_PDATA_MAX)
		return -EINVAL;
	if (!roce_qp_free(qp))
		return -EBUSY;
	id->qp = qp;
	qp->cm_id = id;
	id->transport = RNIC_TRANSPORT_ROCE;
	id->state = ID_CONNECTING;
	id->w = id_stack(id)->workers[0];
	int rc = rnic_ibcm_connect(id_stack(id), qp, ip, port, &p, &ib_ops, id, &id->ib);
	if (rc != 0) {
		id->qp = NULL;
		qp->cm_id = NULL;
		id->state = ID_IDLE;
		id->w = NULL;
		id->transport = RNIC_TRANSPORT_DEFAULT;
		return rc;
	}
	return 0;
}

int rnic_cm_connect(struct rnic_cm_id *id, struct ibv_qp *iqp, uint32_t ip, uint16_t port,
		    const struct rnic_cm_conn_param *param)
{
	struct rnic_addr dst = rnic_addr_v4(ip);
	return rnic_cm_connect_addr(id, iqp, &dst, port, param);
}

int rnic_cm_connect_addr(struct rnic_cm_id *id, struct ibv_qp *iqp,
			 const struct rnic_addr *dst, uint16_t port,
			 const struct rnic_cm_conn_param *param)
{
	if (id == NULL || iqp == NULL || dst == NULL || id->state != ID_IDLE || port == 0 ||
	    (dst->family != RNIC_AF_INET && dst->family != RNIC_AF_INET6) ||
	    (param && param->private_data_len > RNIC_CM_PDATA_MAX))
		return -EINVAL;
	struct rnic_qp *qp = qp_of(iqp);
	if (qp->transport == RNIC_TRANSPORT_ROCE) {
		if (dst->family != RNIC_AF_INET)
			return -EAFNOSUPPORT;
		return roce_connect(id, qp, dst->v4, port, param);
	}
	if (!qp_free_for_cm(qp))
		return -EBUSY;
	struct rnic_stack *st = id_stack(id);
	/* the QP lives on the worker of its send CQ's completion handler */
	struct rnic_device *d = id->ch->dev;
	struct rnic_worker *w = st->workers[d->handlers[cq_of(iqp->send_cq)->handler].worker];
	struct connect_args a = { .id = id, .dst = *dst, .port = port, .param = param };
	params_from(&a.p, param);
	id->transport = RNIC_TRANSPORT_IWARP;
	id->qp = qp;
	qp->cm_id = id;
	__atomic_store_n(&iqp->state, IBV_QPS_RTR, __ATOMIC_RELEASE);
	int rc = rnic_worker_call_sync(w, do_connect, &a);
	if (rc == 0)
		rc = a.rc;
	if (rc != 0) {
		id->qp = NULL;
		qp->cm_id = NULL;
		id->transport = RNIC_TRANSPORT_DEFAULT;
		__atomic_store_n(&iqp->state, IBV_QPS_INIT, __ATOMIC_RELEASE);
		return rc;
	}
	return 0;
}

struct stream_args {
	struct rnic_cm_id *id;
	struct rnic_tcp_conn *c;
	bool active;
	struct rnic_iw_params p;
	const struct rnic_cm_conn_param *param;
	const void *early;
	size_t early_len;
	int rc;
};

static void do_attach_stream(struct rnic_worker *w, void *arg)
{
	struct stream_args *a = arg;
	struct rnic_cm_id *id = a->id;
	const struct rnic_cm_conn_param *c = a->param;
	struct rnic_iw_ep *ep;
	id->w = w;
	id->state = a->active ? ID_CONNECTING : ID_STREAM_WAIT;
	if (a->active) {
		/* the QP is bound before the MPA request can be answered */
		a->rc = rnic_iw_attach_stream(a->c, true, &cm_ops, id, &a->p,
					      c ? c->private_data : NULL,
					      c ? c->private_data_len : 0, NULL, 0, &ep);
		if (a->rc == 0) {
			id->ep = ep;
			rnic_qp_attach_iw(id->qp, ep, w);
		}
	} else {
		a->rc = rnic_iw_attach_stream(a->c, false, &cm_ops, id, &a->p, NULL, 0,
					      a->early, a->early_len, &ep);
		if (a->rc == 0 && id->state == ID_STREAM_WAIT)
			id->ep = ep;   /* the request has not come yet */
	}
	if (a->rc != 0) {
		id->state = ID_IDLE;
		id->w = NULL;
	}
}

int rnic_cm_attach_stream(struct rnic_cm_id *id, struct rnic_tcp_conn *c, bool active,
			  struct ibv_qp *iqp, const struct rnic_cm_conn_param *param,
			  const void *early, size_t early_len)
{
	if (id == NULL || c == NULL || id->state != ID_IDLE || (active && iqp == NULL) ||
	    (!active && iqp != NULL) || (active && early_len) ||
	    (param && param->private_data_len > RNIC_CM_PDATA_MAX))
		return -EINVAL;
	struct stream_args a = { .id = id, .c = c, .active = active, .param = param,
				 .early = early, .early_len = early_len };
	id->transport = RNIC_TRANSPORT_IWARP;
	params_from(&a.p, param);
	if (active) {
		struct rnic_qp *qp = qp_of(iqp);
		if (!qp_free_for_cm(qp))
			return -EBUSY;
		id->qp = qp;
		qp->cm_id = id;
		__atomic_store_n(&iqp->state, IBV_QPS_RTR, __ATOMIC_RELEASE);
	}
	int rc = rnic_worker_call_sync(rnic_tcp_worker(c), do_attach_stream, &a);
	if (rc == 0)
		rc = a.rc;
	if (rc != 0 && active) {
		id->qp->cm_id = NULL;
		__atomic_store_n(&iqp->state, IBV_QPS_INIT, __ATOMIC_RELEASE);
		id->qp = NULL;
	}
	return rc;
}

struct accept_args {
	struct rnic_cm_id *id;
	const struct rnic_cm_conn_param *param;
	bool reject;
	int rc;
};

static void do_accept(struct rnic_worker *w, void *arg)
{
	struct accept_args *a = arg;
	struct rnic_cm_id *id = a->id;
	const struct rnic_cm_conn_param *c = a->param;
	if (id->ep == NULL || id->state != ID_REQ) {
		a->rc = -ENOTCONN;
		return;
	}
	if (a->reject) {
		id->state = ID_REJECTED;
		a->rc = rnic_iw_reject(id->ep, c ? c->private_data : NULL,
				       c ? c->private_data_len : 0);
		return;
	}
	rnic_qp_attach_iw(id->qp, id->ep, w);
	a->rc = rnic_iw_accept(id->ep, id, c ? c->private_data : NULL,
			       c ? c->private_data_len : 0,
			       c ? c->responder_resources : 0, c ? c->initiator_depth : 0);
}

static int roce_accept(struct rnic_cm_id *id, struct rnic_qp *qp,
		       const struct rnic_cm_conn_param *param)
{
	struct rnic_ibcm_params p;
	ib_params(&p, param);
	if (p.pdata_len > RNIC_CM_ROCE_REP_PDATA_MAX)
		return -EINVAL;
	if (!roce_qp_free(qp))
		return -EBUSY;
	id->qp = qp;
	qp->cm_id = id;
	id->state = ID_CONNECTING;
	int rc = rnic_ibcm_accept(id->ib, qp, &p);
	if (rc != 0) {
		id->qp = NULL;
		qp->cm_id = NULL;
		if (id->state == ID_CONNECTING)
			id->state = ID_REQ;
		return rc;
	}
	return 0;
}

int rnic_cm_accept(struct rnic_cm_id *id, struct ibv_qp *iqp,
		   const struct rnic_cm_conn_param *param)
{
	if (id == NULL || iqp == NULL || id->state != ID_REQ ||
	    (param && param->private_data_len > RNIC_CM_PDATA_MAX))
		return -EINVAL;
	struct rnic_qp *qp = qp_of(iqp);
	if (id->ib != NULL)
		return roce_accept(id, qp, param);
	if (!qp_free_for_cm(qp))
		return -EBUSY;
	struct accept_args a = { .id = id, .param = param };
	id->qp = qp;
	qp->cm_id = id;
	__atomic_store_n(&iqp->state, IBV_QPS_RTR, __ATOMIC_RELEASE);
	int rc = rnic_worker_call_sync(id->w, do_accept, &a);
	if (rc == 0)
		rc = a.rc;
	if (rc != 0) {
		id->qp = NULL;
		qp->cm_id = NULL;
		qp->ep = NULL;
		qp->w = NULL;
		__atomic_store_n(&iqp->state, IBV_QPS_INIT, __ATOMIC_RELEASE);
		return rc;
	}
	return 0;
}

int rnic_cm_reject(struct rnic_cm_id *id, const void *pdata, uint16_t len)
{
	if (id == NULL || id->state != ID_REQ || len > RNIC_CM_PDATA_MAX)
		return -EINVAL;
	if (id->ib != NULL) {
		if (len > RNIC_CM_ROCE_REJ_PDATA_MAX)
			return -EINVAL;
		int rc = rnic_ibcm_reject(id->ib, pdata, len);
		if (rc == 0)
			id->state = ID_REJECTED;
		return rc;
	}
	struct rnic_cm_conn_param c = { .private_data = pdata, .private_data_len = len };
	struct accept_args a = { .id = id, .param = &c, .reject = true };
	int rc = rnic_worker_call_sync(id->w, do_accept, &a);
	if (rc == 0)
		rc = a.rc;
	return rc;
}

static void do_disconnect(struct rnic_worker *w, void *arg)
{
	(void)w;
	struct accept_args *a = arg;
	struct rnic_cm_id *id = a->id;
	if (id->ep == NULL) {
		a->rc = -ENOTCONN;
		return;
	}
	if (a->reject) {   /* abort */
		rnic_iw_abort(id->ep);
		a->rc = 0;
		return;
	}
	id->state = ID_CLOSING;
	a->rc = rnic_iw_disconnect(id->ep);
	if (a->rc == -EALREADY)
		a->rc = 0;
}

int rnic_cm_disconnect(struct rnic_cm_id *id)
{
	if (id == NULL || id->w == NULL)
		return -ENOTCONN;
	if (id->ib != NULL) {
		int rc = rnic_ibcm_disconnect(id->ib);
		if (rc == 0 && id->state == ID_CONNECTED)
			id->state = ID_CLOSING;
		return rc;
	}
	struct accept_args a = { .id = id };
	int rc = rnic_worker_call_sync(id->w, do_disconnect, &a);
	if (rc == 0)
		rc = a.rc;
	return rc;
}

static void do_unlisten(struct rnic_worker *w, void *arg)
{
	struct rnic_cm_id *id = arg;
	rnic_iw_unlisten(w->st, id->port);
}

int rnic_cm_destroy_id(struct rnic_cm_id *id)
{
	if (id == NULL)
		return -EINVAL;
	struct rnic_stack *st = id_stack(id);
	if (id->state == ID_LISTEN) {
		rnic_worker_call_sync(st->workers[0], do_unlisten, id);
		if (id->ib_listen)
			rnic_ibcm_unlisten(st, id->port);
	} else if (id->ib != NULL) {
		rnic_ibcm_detach(id->ib);   /* REJ or DREQ if live; no more events */
		id->ib = NULL;
	} else if (id->w != NULL) {
		struct accept_args a = { .id = id, .reject = true };
		rnic_worker_call_sync(id->w, do_disconnect, &a);
		/* an aborted request (ID_REQ) or connection ran its
		 * disconnected callback: id->ep is NULL now */
	}
	if (id->qp != NULL) {
		id->qp->cm_id = NULL;
		id->qp = NULL;
	}
	/* forget its queued events */
	struct rnic_cm_channel *ch = id->ch;
	pthread_mutex_lock(&ch->lock);
	struct ev_node **pp = &ch->head, *last = NULL;
	while (*pp) {
		struct ev_node *n = *pp;
		if (n->ev.id == id) {
			*pp = n->next;
			free(n);
		} else {
			n->ev.listen_id = n->ev.listen_id == id ? NULL : n->ev.listen_id;
			last = n;
			pp = &n->next;
		}
	}
	ch->tail = last;
	pthread_mutex_unlock(&ch->lock);
	__atomic_fetch_sub(&ch->users, 1, __ATOMIC_RELAXED);
	free(id);
	return 0;
}

void rnic_cm_roce_timeouts(struct ibv_context *ctx, uint8_t resp_timeout_exp, uint8_t retries)
{
	rnic_ibcm_set_timeouts(dev_of(ctx)->st, resp_timeout_exp, retries);
}
