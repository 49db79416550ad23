/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Connection manager (rnic_cm.h) over the transports' connection
 * managers (struct rnic_cm_tops in rdma/qp.h: iWARP's MPA startup on
 * rnic TCP, RoCE's IB CM): an id holds one transport connection (conn)
 * of its transport; a listener listens on every transport.
 * Ids are touched by application threads through the transports' calls
 * (which run where the connection lives) and by the transports' upcalls
 * (cm_request, cm_event) on the connection's worker; events cross back
 * through the channel's mutex-guarded list and its eventfd. Control path
 * only.
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
#include "rdma/qp.h"
#include "rdma/rdma.h"
#include "rnic/rnic_cm.h"
#include "rnic/rnic_roce.h"
#include "verbs/cm_evq.h"
#include "verbs/verbs.h"

struct rnic_cm_channel {
	struct rnic_device *dev;
	int fd;
	struct cm_evq evq;
	unsigned users;
};

enum id_state { ID_IDLE, ID_LISTEN, ID_STREAM_WAIT, ID_REQ, ID_CONNECTING, ID_CONNECTED, ID_CLOSING,
		ID_CLOSED, ID_REJECTED };

/* 88 bytes, a 96-byte heap chunk: one per connection (issue 21), so the
 * enums are kept in a byte each. */
struct rnic_cm_id {
	struct rnic_cm_channel *ch;
	void *context;
	struct rnic_qp *qp;
	struct rnic_tp_conn *conn;      /* the transport's; read where it lives */
	struct rnic_worker *w;          /* where the connection lives */
	struct rnic_cm_id *listen_id;
	uint16_t port;
	uint8_t transport;              /* enum rnic_transport */
	uint8_t listening;              /* listener: bit t = transport t listens */
	uint8_t state;                  /* enum id_state */
	struct cm_evq_owner events;     /* its queued events, for destroy */
};
_Static_assert(RNIC_TRANSPORT_COUNT <= 8, "listening holds a bit per transport");

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

/* The CM calls of @p id's transport (never NULL once it has one). */
static const struct rnic_cm_tops *id_cm(const struct rnic_cm_id *id)
{
	return &rnic_transport(id_stack(id), id->transport)->cm;
}

/* Queue an event (any thread); @p reason: an IB CM REJ's, or 0. */
static void post_event_r(struct rnic_cm_id *id, enum rnic_cm_event_type t, int status,
			 uint16_t reason, const void *pdata, uint16_t pd_len)
{
	struct cm_evq_node *n = calloc(1, sizeof(*n));
	if (n == NULL)
		return;
	n->ev.type = t;
	n->ev.rej_reason = reason;
	n->ev.id = id;
	/* the listener only on the request: a listener may go before its
	 * children, and the queue links the event to it until then */
	struct rnic_cm_id *l = t == RNIC_CM_EVENT_CONNECT_REQUEST ? id->listen_id : NULL;
	n->ev.listen_id = l;
	n->ev.status = status;
	n->ev.transport = id->transport;
	if (id->conn != NULL) {
		uint16_t ird, ord;
		struct rnic_addr peer = { 0 };
		id_cm(id)->conn_info(id->conn, &ird, &ord, &peer, &n->ev.peer_port);
		n->ev.peer = peer;
		n->ev.peer_ip = peer.family == RNIC_AF_INET ? peer.v4 : 0;
		n->ev.ird = (uint8_t)ird;
		n->ev.ord = (uint8_t)ord;
	}
	if (pd_len > sizeof(n->ev.private_data))
		pd_len = sizeof(n->ev.private_data);
	if (pd_len && pdata)
		memcpy(n->ev.private_data, pdata, pd_len);
	n->ev.private_data_len = pdata ? pd_len : 0;
	struct rnic_cm_channel *ch = id->ch;
	cm_evq_push(&ch->evq, n, &id->events, l != NULL ? &l->events : NULL);
	uint64_t one = 1;
	ssize_t w = write(ch->fd, &one, sizeof(one));
	(void)w;
}

/* --- the transports' upcalls (on the connection's worker) ------------------------ */

static void *cm_request(struct rnic_tp_conn *c, void *lctx, enum rnic_transport t,
			struct rnic_worker *w, const void *pdata, uint16_t len)
{
	struct rnic_cm_id *l = lctx;
	if (l->state == ID_STREAM_WAIT) {   /* a stream switched to RDMA mode */
		l->state = ID_REQ;
		l->conn = c;
		l->w = w;
		post_event_r(l, RNIC_CM_EVENT_CONNECT_REQUEST, 0, 0, pdata, len);
		return l;
	}
	struct rnic_cm_id *id = calloc(1, sizeof(*id));
	if (id == NULL)
		return NULL;   /* rejected */
	id->ch = l->ch;
	id->conn = c;
	id->w = w;
	id->listen_id = l;
	id->state = ID_REQ;
	id->transport = t;
	cm_evq_owner_init(&id->events);
	__atomic_fetch_add(&id->ch->users, 1, __ATOMIC_RELAXED);
	post_event_r(id, RNIC_CM_EVENT_CONNECT_REQUEST, 0, 0, pdata, len);
	return id;
}

/*
 * Everything after the request. ESTABLISHED connects the id. Any other
 * event ends the connection: reported as the transport says while the id
 * was connecting, as DISCONNECTED when it had a connection or a request,
 * not at all when the id had already given it up (rejected, destroyed).
 */
static void cm_event(void *ctx, enum rnic_cm_event_type t, int status, uint16_t reason,
		     const void *pdata, uint16_t len, bool gone)
{
	struct rnic_cm_id *id = ctx;
	if (id == NULL)
		return;
	if (gone && id->state == ID_REQ && id->listen_id != NULL &&
	    cm_evq_withdraw(&id->ch->evq, &id->events)) {
		/* a request that ended before the application took it (a REQ
		 * left undecided, reset): nobody knows the id, it goes */
		__atomic_fetch_sub(&id->ch->users, 1, __ATOMIC_RELAXED);
		free(id);
		return;
	}
	if (t == RNIC_CM_EVENT_ESTABLISHED) {
		id->state = ID_CONNECTED;
		post_event_r(id, t, status, reason, pdata, len);
		return;
	}
	enum id_state was = id->state;
	if (was == ID_CONNECTING || (was == ID_REQ && t == RNIC_CM_EVENT_CONNECT_ERROR))
		post_event_r(id, t, status, reason, pdata, len);
	else if (was == ID_CONNECTED || was == ID_CLOSING || was == ID_REQ ||
		 was == ID_STREAM_WAIT)
		post_event_r(id, RNIC_CM_EVENT_DISCONNECTED, status, 0, NULL, 0);
	if (gone)
		id->conn = NULL;
	id->state = was == ID_REJECTED || t == RNIC_CM_EVENT_REJECTED ? ID_REJECTED : ID_CLOSED;
}

static const struct rnic_cm_upcalls cm_up = {
	.request = cm_request,
	.event = cm_event,
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
	cm_evq_init(&ch->evq);
	return ch;
}

int rnic_cm_destroy_channel(struct rnic_cm_channel *ch)
{
	if (__atomic_load_n(&ch->users, __ATOMIC_ACQUIRE) != 0)
		return -EBUSY;
	cm_evq_fini(&ch->evq);
	close(ch->fd);
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
		struct cm_evq_node *n = cm_evq_pop(&ch->evq);
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
	cm_evq_owner_init(&id->events);
	__atomic_fetch_add(&ch->users, 1, __ATOMIC_RELAXED);
	*out = id;
	return 0;
}

void *rnic_cm_id_context(const struct rnic_cm_id *id) { return id->context; }
void rnic_cm_id_set_context(struct rnic_cm_id *id, void *context) { id->context = context; }
struct ibv_qp *rnic_cm_id_qp(const struct rnic_cm_id *id) { return id->qp ? &id->qp->qp : NULL; }
enum rnic_transport rnic_cm_id_transport(const struct rnic_cm_id *id) { return id->transport; }

static void unlisten_all(struct rnic_stack *st, uint16_t port, unsigned mask)
{
	for (int t = RNIC_TRANSPORT_IWARP; t < RNIC_TRANSPORT_COUNT; t++)
		if (mask & (1u << t))
			rnic_transport(st, t)->cm.unlisten(st, port);
}

int rnic_cm_listen(struct rnic_cm_id *id, uint16_t port, int backlog)
{
	if (id->state != ID_IDLE || port == 0)
		return -EINVAL;
	if (backlog <= 0)
		backlog = RNIC_CM_BACKLOG_DEFAULT;
	backlog = RTE_MIN(backlog, RNIC_CM_BACKLOG_MAX);
	struct rnic_stack *st = id_stack(id);
	unsigned mask = 0;
	for (int t = RNIC_TRANSPORT_IWARP; t < RNIC_TRANSPORT_COUNT; t++) {
		const struct rnic_qp_tops *tp = rnic_transport(st, t);
		if (tp == NULL)
			continue;
		int rc = tp->cm.listen(st, port, backlog, &cm_up, id);
		if (rc != 0) {
			unlisten_all(st, port, mask);
			return rc;
		}
		mask |= 1u << t;
	}
	id->listening = mask;
	id->port = port;
	id->state = ID_LISTEN;
	return 0;
}

/* A QP the CM may take for @p t: RC, not connected nor connecting, no
 * id, RESET or INIT. */
static bool qp_free_for_cm(const struct rnic_qp *qp, enum rnic_transport t)
{
	enum ibv_qp_state s = __atomic_load_n(&qp->qp.state, __ATOMIC_ACQUIRE);
	return qp->transport == t && qp->qp.qp_type == IBV_QPT_RC && qp->cm_id == NULL &&
	       qp->conn == QP_IDLE && (s == IBV_QPS_RESET || s == IBV_QPS_INIT);
}

/* Bind @p qp to @p id for a connection of @p qp's transport, or undo it
 * (@p qp NULL). */
static void id_bind(struct rnic_cm_id *id, struct rnic_qp *qp)
{
	if (qp != NULL) {
		id->qp = qp;
		id->transport = qp->transport;
		qp->cm_id = id;
	} else if (id->qp != NULL) {
		id->qp->cm_id = NULL;
		id->qp = NULL;
	}
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
	if (!qp_free_for_cm(qp, qp->transport))
		return -EBUSY;
	/* the QP lives on the worker of its send CQ's completion handler */
	struct rnic_worker *w = rnic_qp_home(qp);
	id_bind(id, qp);
	id->state = ID_CONNECTING;
	id->w = w;
	int rc = id_cm(id)->connect(w, qp, dst, port, param, &cm_up, id, &id->conn);
	if (rc != 0) {
		id_bind(id, NULL);
		id->state = ID_IDLE;
		id->w = NULL;
		id->transport = RNIC_TRANSPORT_DEFAULT;
	}
	return rc;
}

int rnic_cm_attach_stream(struct rnic_cm_id *id, struct rnic_tcp_conn *c, bool active,
			  struct ibv_qp *iqp, const struct rnic_cm_conn_param *param,
			  const void *early, size_t early_len)
{
	if (id == NULL || c == NULL || id->state != ID_IDLE || (active && iqp == NULL) ||
	    (!active && iqp != NULL) || (active && early_len) ||
	    (param && param->private_data_len > RNIC_CM_PDATA_MAX))
		return -EINVAL;
	/* a TCP stream can carry iWARP only */
	const struct rnic_qp_tops *tp = rnic_transport(id_stack(id), RNIC_TRANSPORT_IWARP);
	if (tp == NULL || tp->cm.attach_stream == NULL)
		return -EOPNOTSUPP;
	struct rnic_qp *qp = active ? qp_of(iqp) : NULL;
	if (qp != NULL && !qp_free_for_cm(qp, RNIC_TRANSPORT_IWARP))
		return -EBUSY;
	id->transport = RNIC_TRANSPORT_IWARP;
	if (qp != NULL)
		id_bind(id, qp);
	id->state = active ? ID_CONNECTING : ID_STREAM_WAIT;
	struct rnic_worker *w = NULL;
	int rc = tp->cm.attach_stream(c, active, qp, param, early, early_len, &cm_up, id,
				      &id->conn, &w);
	if (rc != 0) {
		id_bind(id, NULL);
		id->state = ID_IDLE;
		return rc;
	}
	id->w = w;
	return 0;
}

int rnic_cm_accept(struct rnic_cm_id *id, struct ibv_qp *iqp,
		   const struct rnic_cm_conn_param *param)
{
	if (id == NULL || iqp == NULL || id->state != ID_REQ ||
	    (param && param->private_data_len > RNIC_CM_PDATA_MAX))
		return -EINVAL;
	struct rnic_qp *qp = qp_of(iqp);
	if (!qp_free_for_cm(qp, id->transport))
		return -EBUSY;
	id_bind(id, qp);
	id->state = ID_CONNECTING;
	int rc = id_cm(id)->accept(id->w, &id->conn, qp, param, id);
	if (rc != 0) {
		id_bind(id, NULL);
		if (id->state == ID_CONNECTING)
			id->state = ID_REQ;
	}
	return rc;
}

int rnic_cm_reject(struct rnic_cm_id *id, const void *pdata, uint16_t len)
{
	if (id == NULL || id->state != ID_REQ || len > RNIC_CM_PDATA_MAX)
		return -EINVAL;
	/* rejected before the transport acts: the connection's end that
	 * follows is no event of the application's */
	id->state = ID_REJECTED;
	int rc = id_cm(id)->reject(id->w, &id->conn, pdata, len);
	if (rc == -EINVAL)
		id->state = ID_REQ;   /* refused: decide again */
	return rc;
}

int rnic_cm_disconnect(struct rnic_cm_id *id)
{
	if (id == NULL || id->w == NULL || id->state == ID_LISTEN)
		return -ENOTCONN;
	/* closing before the transport acts: its end of the connection may
	 * come from inside the call */
	bool was_connected = id->state == ID_CONNECTED;
	if (was_connected)
		id->state = ID_CLOSING;
	int rc = id_cm(id)->disconnect(id->w, &id->conn);
	if (rc != 0 && was_connected && id->state == ID_CLOSING)
		id->state = ID_CONNECTED;
	return rc;
}

int rnic_cm_destroy_id(struct rnic_cm_id *id)
{
	if (id == NULL)
		return -EINVAL;
	struct rnic_stack *st = id_stack(id);
	if (id->state == ID_LISTEN)
		unlisten_all(st, id->port, id->listening);
	else if (id->w != NULL)   /* a live connection is aborted, no more events */
		id_cm(id)->detach(id->w, &id->conn);
	id->conn = NULL;
	id_bind(id, NULL);
	/* forget its queued events (its own lists: no walk of the channel's) */
	struct rnic_cm_channel *ch = id->ch;
	cm_evq_forget(&ch->evq, &id->events);
	__atomic_fetch_sub(&ch->users, 1, __ATOMIC_RELAXED);
	free(id);
	return 0;
}

void rnic_cm_roce_timeouts(struct ibv_context *ctx, uint8_t resp_timeout_exp, uint8_t retries)
{
	if (ctx == NULL)
		return;   /* no device: nothing to set (was a NULL dereference) */
	struct rnic_stack *st = dev_of(ctx)->st;
	const struct rnic_qp_tops *tp = rnic_transport(st, RNIC_TRANSPORT_ROCE);
	if (tp != NULL && tp->cm.set_timeouts != NULL)
		tp->cm.set_timeouts(st, resp_timeout_exp, retries);
}
