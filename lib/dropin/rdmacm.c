/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * librdmacm's entry points over rnic's connection manager (rnic_cm.h).
 *
 * An rdma_cm_id of ours (struct rv_id) wraps an rnic_cm_id; an event
 * channel of ours (struct rv_chan) is a queue of translated events and an
 * eventfd in semaphore mode that counts them, so ch->fd is readable
 * exactly while an event waits, a read() blocks like librdmacm's unless
 * the program made the fd O_NONBLOCK, and poll()/rpoll() on it work.
 *
 * rnic's ids all report on one rnic channel per process. A dispatcher
 * thread waits on it and moves each event, translated, to the channel its
 * rdma_cm_id is on now (ids migrate between channels; a CONNECT_REQUEST
 * gets its new rdma_cm_id here). Address and route resolution complete
 * at once: the stack's port on the destination's subnet is the source,
 * and rnic resolves the next hop itself when the connection is made.
 *
 *   active:  create_id -> resolve_addr (ADDR_RESOLVED) -> resolve_route
 *            (ROUTE_RESOLVED) -> create_qp -> connect -> ESTABLISHED
 *   passive: create_id -> bind_addr -> listen -> CONNECT_REQUEST (new id,
 *            on the face of the request's transport) -> create_qp ->
 *            accept -> ESTABLISHED
 *
 * A synchronous id (rdma_create_id() or rdma_create_ep() without a
 * channel) has a channel of its own, and the calls that wait for an event
 * in librdmacm (resolve, connect, accept, disconnect, get_request) wait
 * for it here too, with the event left in id->event.
 *
 * Locks: cm_lock guards the id list and is held while rnic's events are
 * taken and while rnic ids are destroyed; each channel's queue has its
 * own mutex, taken inside cm_lock. cm_lock is taken before the drive
 * lock (rv_lock()), never after; no blocking wait holds either. Results
 * follow librdmacm: 0, or -1 with errno.
 */
#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include <rdma/rdma_cma.h>
#include <rdma/rdma_verbs.h>
#include <rdma/rsocket.h>

#include "dropin/dropin.h"
#include "engine/stack.h"
#include "port/port.h"
#include "rdma/gid.h"
#include "rnic/rnic_cm.h"
#include "verbs/verbs.h"

/* A translated event; ev goes to the program, the rest is ours. */
struct rv_event {
	struct rdma_cm_event ev;
	struct rv_event *next;
	struct rv_id *child;     /* CONNECT_REQUEST: its new id, until delivered */
	bool dead;               /* its id was destroyed before delivery */
	/* until delivered or dead, on the event list of each id it names:
	 * slot 0 ev.id's, slot 1 ev.listen_id's (ev_lock) */
	struct rv_id *on[2];
	struct rv_event *on_prev[2], *on_next[2];
	uint8_t pdata[RNIC_CM_PDATA_MAX];
};

struct rv_chan {
	struct rdma_event_channel ch;   /* ch.fd: eventfd, one count per event */
	pthread_mutex_t lock;
	struct rv_event *head, *tail;
};

struct rv_id {
	struct rdma_cm_id id;
	struct rnic_cm_id *rid;        /* its context is this id */
	struct rv_id *next, *prev;     /* the live ids */
	struct rv_event *evs;          /* undelivered events naming it, as id or
					* listener, on any channel (ev_lock) */
	bool sync;                     /* id.channel is its own */
	bool addr_resolved;
	bool listening;
	bool established;              /* ESTABLISHED was reported */
	bool disc_queued;              /* DISCONNECTED was queued, not yet waited for */
	bool disc_seen;                /* DISCONNECTED was queued */
	bool own_cqs;                  /* rdma_create_qp made id's CQs */
	struct ibv_qp *self_qp;        /* the program's own QP (conn_param.qp_num) */
	int dpd_face;                  /* face whose default PD id holds, or -1 */
	struct ibv_qp_init_attr *ep_attr;   /* rdma_create_ep (passive): for requests */
};

static pthread_mutex_t cm_lock = PTHREAD_MUTEX_INITIALIZER;
/* The ids' event lists (a leaf: taken under a channel's lock or cm_lock). */
static pthread_mutex_t ev_lock = PTHREAD_MUTEX_INITIALIZER;
static struct rnic_cm_channel *rch;    /* every rnic id reports here */
static struct rv_id *ids;
static pthread_once_t cm_once = PTHREAD_ONCE_INIT;
static int cm_errno;                   /* why cm_start failed */

/* The default PD of each face (librdmacm's per-device PD), and its users. */
static struct ibv_pd *dpd[2];
static unsigned dpd_refs[2];

static int face_of_ctx(const struct ibv_context *ctx)
{
	struct rv_proc *p = rv_proc_if_started();
	if (p == NULL || ctx == NULL)
		return -1;
	return ctx == p->ctx[0] ? 0 : ctx == p->ctx[1] ? 1 : -1;
}

static enum rnic_transport face_transport(int face)
{
	return face == 1 ? RNIC_TRANSPORT_ROCE : RNIC_TRANSPORT_IWARP;
}

static struct rv_id *rv_of(struct rdma_cm_id *id)
{
	return (struct rv_id *)id;
}

static struct rv_chan *chan_of(struct rdma_event_channel *ch)
{
	return (struct rv_chan *)ch;
}

static int fail(int err)
{
	errno = err;
	return -1;
}

/* --- channels --------------------------------------------------------------- */

static struct rv_chan *chan_new(void)
{
	struct rv_chan *c = calloc(1, sizeof(*c));
	if (c == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	c->ch.fd = eventfd(0, EFD_CLOEXEC | EFD_SEMAPHORE);
	if (c->ch.fd < 0) {
		free(c);
		return NULL;
	}
	pthread_mutex_init(&c->lock, NULL);
	return c;
}

static struct rv_id *rv_id_of(struct rdma_cm_id *id)
{
	return (struct rv_id *)id;   /* the first member */
}

/* Which of @p e's two list slots is on @p id's list. */
static unsigned ev_slot(const struct rv_event *e, const struct rv_id *id)
{
	return e->on[0] == id ? 0 : 1;
}

/* Put @p e on the lists of the ids it names (ev_lock held). */
static void ev_link(struct rv_event *e)
{
	struct rv_id *want[2] = {
		e->ev.id != NULL ? rv_id_of(e->ev.id) : NULL,
		e->ev.listen_id != NULL ? rv_id_of(e->ev.listen_id) : NULL,
	};
	if (want[1] == want[0])
		want[1] = NULL;   /* one id, one place on its list */
	for (unsigned k = 0; k < 2; k++) {
		struct rv_id *id = want[k];
		if (id == NULL)
			continue;
		e->on[k] = id;
		e->on_prev[k] = NULL;
		e->on_next[k] = id->evs;
		if (id->evs != NULL)
			id->evs->on_prev[ev_slot(id->evs, id)] = e;
		id->evs = e;
	}
}

/* Take @p e off its ids' lists, if it is on them (ev_lock held). */
static void ev_unlink(struct rv_event *e)
{
	for (unsigned k = 0; k < 2; k++) {
		struct rv_id *id = e->on[k];
		if (id == NULL)
			continue;
		struct rv_event *pv = e->on_prev[k], *nx = e->on_next[k];
		if (pv != NULL)
			pv->on_next[ev_slot(pv, id)] = nx;
		else
			id->evs = nx;
		if (nx != NULL)
			nx->on_prev[ev_slot(nx, id)] = pv;
		e->on[k] = NULL;
	}
}

/* Queue @p e and count it on the fd (any thread). */
static void chan_push(struct rv_chan *c, struct rv_event *e)
{
	uint64_t one = 1;

	pthread_mutex_lock(&c->lock);
	pthread_mutex_lock(&ev_lock);
	ev_link(e);
	pthread_mutex_unlock(&ev_lock);
	if (c->tail != NULL)
		c->tail->next = e;
	else
		c->head = e;
	c->tail = e;
	pthread_mutex_unlock(&c->lock);
	ssize_t w = write(c->ch.fd, &one, sizeof(one));
	(void)w;
}

static uint64_t forget_walked;   /* queued events id destroys looked at */

uint64_t rv_cm_forget_walked(void)
{
	return __atomic_load_n(&forget_walked, __ATOMIC_RELAXED);
}

/*
 * Mark the undelivered events of @p id (or whose listener is @p id) dead,
 * on whatever channel they wait (an id may have moved since). Its own
 * list: destroying many ids of one channel with their events still queued
 * walked the channel's whole queue for each (quadratic), and missed the
 * events left on a channel the id had moved from.
 */
static void id_forget_events(struct rv_id *id)
{
	uint64_t n = 0;
	pthread_mutex_lock(&ev_lock);
	while (id->evs != NULL) {
		struct rv_event *e = id->evs;
		e->dead = true;
		ev_unlink(e);   /* off the other id's list too: it is dead */
		n++;
	}
	pthread_mutex_unlock(&ev_lock);
	__atomic_add_fetch(&forget_walked, n, __ATOMIC_RELAXED);
}

static void id_free(struct rv_id *id);

/* An event that will not be delivered: its undelivered new id goes too. */
static void event_drop(struct rv_event *e)
{
	pthread_mutex_lock(&ev_lock);
	ev_unlink(e);   /* a live id it names stays */
	pthread_mutex_unlock(&ev_lock);
	if (e->child != NULL)
		id_free(e->child);
	free(e);
}

static void chan_free(struct rv_chan *c)
{
	/* off the channel first: dropping a request frees its new id, which
	 * looks through its channel's queue (this one, for an async id) */
	pthread_mutex_lock(&c->lock);
	struct rv_event *e = c->head;
	c->head = c->tail = NULL;
	pthread_mutex_unlock(&c->lock);
	for (struct rv_event *nx; e != NULL; e = nx) {
		nx = e->next;
		event_drop(e);
	}
	close(c->ch.fd);
	pthread_mutex_destroy(&c->lock);
	free(c);
}

/* --- ids ---------------------------------------------------------------------- */

/* Take a reference on @p face's default PD for @p id (cm_lock held). */
static void dpd_get(struct rv_id *id, int face)
{
	struct rv_proc *p = rv_proc_if_started();
	if (id->dpd_face >= 0 || p == NULL)
		return;
	if (dpd[face] == NULL)
		dpd[face] = ibv_alloc_pd(p->ctx[face]);
	if (dpd[face] == NULL)
		return;
	dpd_refs[face]++;
	id->dpd_face = face;
	if (id->id.pd == NULL)
		id->id.pd = dpd[face];
}

static void dpd_put(struct rv_id *id)
{
	int f = id->dpd_face;
	if (f < 0)
		return;
	id->dpd_face = -1;
	/* a PD that still has users stays for the next id of this face */
	if (--dpd_refs[f] == 0 && ibv_dealloc_pd(dpd[f]) == 0)
		dpd[f] = NULL;
}

/* Give @p id the device face @p face and the port @p port_idx. */
static void id_set_face(struct rv_id *id, int face, unsigned port_idx)
{
	id->id.verbs = rv_proc_if_started()->ctx[face];
	id->id.port_num = (uint8_t)(port_idx + 1);
	dpd_get(id, face);
}

/* On and off the live ids (cm_lock held). */
static void id_link(struct rv_id *id)
{
	id->prev = NULL;
	id->next = ids;
	if (ids != NULL)
		ids->prev = id;
	ids = id;
}

static void id_unlink(struct rv_id *id)
{
	if (id->prev != NULL)
		id->prev->next = id->next;
	else if (ids == id)
		ids = id->next;
	if (id->next != NULL)
		id->next->prev = id->prev;
	id->next = id->prev = NULL;
}

/* A new id (cm_lock held): @p ch NULL makes it synchronous. */
static struct rv_id *id_new(struct rv_chan *ch, void *context, enum rdma_port_space ps)
{
	struct rv_id *id = calloc(1, sizeof(*id));
	if (id == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	id->dpd_face = -1;
	if (ch == NULL) {
		ch = chan_new();
		if (ch == NULL) {
			free(id);
			return NULL;
		}
		id->sync = true;
	}
	int rc = rnic_cm_create_id(rch, id, &id->rid);
	if (rc != 0) {
		if (id->sync)
			chan_free(ch);
		free(id);
		errno = rv_err(rc);
		return NULL;
	}
	id->id.channel = &ch->ch;
	id->id.context = context;
	id->id.ps = ps;
	id->id.qp_type = IBV_QPT_RC;
	id_link(id);
	return id;
}

/* Free an id (cm_lock held): rnic's id, its events, its own channel. */
static void id_free(struct rv_id *id)
{
	id_unlink(id);
	id_forget_events(id);
	if (id->rid != NULL) {
		rv_lock();
		rnic_cm_destroy_id(id->rid);
		rv_unlock();
	}
	if (id->id.event != NULL) {
		free(id->id.event);
		id->id.event = NULL;
	}
	if (id->sync)
		chan_free(chan_of(id->id.channel));
	dpd_put(id);
	free(id->ep_attr);
	free(id);
}

/* The id of rnic's id @p rid (its context), or NULL (a request's new id
 * before request_id()). rnic delivers no event of an id destroyed, and ids
 * are destroyed and events taken under cm_lock, so the context is live. */
static struct rv_id *id_by_rid(const struct rnic_cm_id *rid)
{
	return rid != NULL ? rnic_cm_id_context(rid) : NULL;
}

/* --- the dispatcher: rnic's events to the ids' channels --------------------- */

/* Addresses as the program sees them (sockaddr_in or sockaddr_in6) and as
 * rnic takes them (struct rnic_addr; family 0: the any address). */
static void sa_set(struct sockaddr *sa, const struct rnic_addr *a, uint16_t port)
{
	if (a->family == RNIC_AF_INET6) {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)sa;
		memset(s6, 0, sizeof(*s6));
		s6->sin6_family = AF_INET6;
		memcpy(s6->sin6_addr.s6_addr, a->v6, 16);
		s6->sin6_port = htons(port);
		return;
	}
	struct sockaddr_in *s = (struct sockaddr_in *)sa;
	memset(s, 0, sizeof(*s));
	s->sin_family = AF_INET;
	s->sin_addr.s_addr = htonl(a->family == RNIC_AF_INET ? a->v4 : INADDR_ANY);
	s->sin_port = htons(port);
}

static uint16_t sa_port(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET6)
		return ntohs(((const struct sockaddr_in6 *)sa)->sin6_port);
	return ntohs(((const struct sockaddr_in *)sa)->sin_port);
}

static struct rnic_addr addr4(uint32_t ip)
{
	struct rnic_addr a = { .family = ip != INADDR_ANY ? RNIC_AF_INET : 0 };
	a.v4 = ip;
	return a;
}

/* The stack's port that reaches @p a directly (its IPv4 subnet, or an
 * IPv6 prefix of its; a link-local address: the first port with IPv6),
 * else the first one. */
static unsigned port_for(const struct rnic_addr *a)
{
	struct rnic_stack *st = rv_proc_if_started()->st;
	int any6 = -1;
	for (unsigned i = 0; i < st->n_ports; i++) {
		const struct rnic_port *p = st->ports[i];
		if (a->family == RNIC_AF_INET && rnic_port_on_link(p, a->v4))
			return i;
		if (a->family != RNIC_AF_INET6 || p->n_ip6 == 0)
			continue;
		if (any6 < 0)
			any6 = (int)i;
		for (unsigned k = 1; k < p->n_ip6; k++)
			if (rnic_ip6_prefix_equal(a->v6, p->ip6[k], p->ip6_prefix[k]))
				return i;
	}
	return any6 >= 0 ? (unsigned)any6 : 0;
}

/* The stack's port whose address is @p a, or -1. */
static int port_with_addr(const struct rnic_addr *a)
{
	struct rnic_stack *st = rv_proc_if_started()->st;
	for (unsigned i = 0; i < st->n_ports; i++) {
		const struct rnic_port *p = st->ports[i];
		/* IPv4: its own address or one taken over in failover; IPv6:
		 * an entry of its GID table (link-local and global ones) */
		if (a->family == RNIC_AF_INET ? rnic_port_has_ip(p, a->v4)
					      : rnic_gid_find(p, a) >= 0)
			return (int)i;
	}
	return -1;
}

/* Port @p pi's address toward @p dst: its IPv4 one, or for IPv6 the
 * link-local one toward a link-local peer, else the global one on the
 * peer's prefix (the first global one if none is). */
static struct rnic_addr port_src(unsigned pi, const struct rnic_addr *dst)
{
	const struct rnic_port *p = rv_proc_if_started()->st->ports[pi];
	struct rnic_addr a = { .family = RNIC_AF_INET6 };
	if (dst->family != RNIC_AF_INET6 || p->n_ip6 == 0)
		return addr4(p->ip);
	unsigned pick = p->n_ip6 > 1 ? 1 : 0;
	if (rnic_ip6_is_link_local(dst->v6))
		pick = 0;
	else
		for (unsigned k = 1; k < p->n_ip6; k++)
			if (rnic_ip6_prefix_equal(dst->v6, p->ip6[k], p->ip6_prefix[k])) {
				pick = k;
				break;
			}
	memcpy(a.v6, p->ip6[pick], 16);
	return a;
}

/* A CONNECT_REQUEST's new id, on the face of the request's transport. */
static struct rv_id *request_id(struct rv_id *l, const struct rnic_cm_event *r)
{
	struct rv_chan *ch = l->sync ? NULL : chan_of(l->id.channel);
	struct rv_id *id = calloc(1, sizeof(*id));
	if (id == NULL)
		return NULL;
	id->dpd_face = -1;
	if (ch == NULL && (ch = chan_new()) == NULL) {
		free(id);
		return NULL;
	}
	id->sync = l->sync;
	id->rid = r->id;
	rnic_cm_id_set_context(r->id, id);
	id->id.channel = &ch->ch;
	id->id.context = l->id.context;
	id->id.ps = l->id.ps;
	id->id.qp_type = IBV_QPT_RC;
	unsigned port = port_for(&r->peer);
	id_set_face(id, r->transport == RNIC_TRANSPORT_ROCE ? 1 : 0, port);
	struct rnic_addr src = port_src(port, &r->peer);
	sa_set(&id->id.route.addr.src_addr, &src, sa_port(&l->id.route.addr.src_addr));
	sa_set(&id->id.route.addr.dst_addr, &r->peer, r->peer_port);
	id_link(id);
	return id;
}

/* rnic's event type and status as librdmacm reports them. A RoCE REJ
 * is REJECTED with its IBTA reason (28 consumer reject, 8 no listener),
 * as Linux rdma_cm has it; an iWARP connection refused or reset before
 * it was up is REJECTED too (iw_cm's -ECONNREFUSED). */
static void event_kind(const struct rnic_cm_event *r, struct rdma_cm_event *ev)
{
	ev->status = r->status;
	switch (r->type) {
	case RNIC_CM_EVENT_CONNECT_REQUEST:
		ev->event = RDMA_CM_EVENT_CONNECT_REQUEST;
		ev->status = 0;
		break;
	case RNIC_CM_EVENT_ESTABLISHED:
		ev->event = RDMA_CM_EVENT_ESTABLISHED;
		ev->status = 0;
		break;
	case RNIC_CM_EVENT_REJECTED:
	case RNIC_CM_EVENT_UNREACHABLE:
		ev->event = r->type == RNIC_CM_EVENT_REJECTED ? RDMA_CM_EVENT_REJECTED :
			    RDMA_CM_EVENT_UNREACHABLE;
		if (r->transport == RNIC_TRANSPORT_ROCE && r->rej_reason != 0) {
			ev->event = RDMA_CM_EVENT_REJECTED;
			ev->status = r->rej_reason;
		} else if (r->status == -ECONNREFUSED || r->status == -ECONNRESET) {
			ev->event = RDMA_CM_EVENT_REJECTED;
			ev->status = -ECONNREFUSED;
		}
		break;
	case RNIC_CM_EVENT_CONNECT_ERROR:
		ev->event = RDMA_CM_EVENT_CONNECT_ERROR;
		ev->status = r->status ? r->status : -EPROTO;
		break;
	case RNIC_CM_EVENT_DISCONNECTED:
	default:
		ev->event = RDMA_CM_EVENT_DISCONNECTED;
		ev->status = 0;   /* as rdma_cm: the reason is not reported */
		break;
	}
}

/* Translate and route one rnic event (cm_lock held). */
static void dispatch(const struct rnic_cm_event *r)
{
	struct rv_event *e = calloc(1, sizeof(*e));
	struct rv_id *id, *l = NULL;

	if (e == NULL)
		return;   /* the id waits for ever: nothing better to do */
	if (r->type == RNIC_CM_EVENT_CONNECT_REQUEST) {
		l = r->listen_id != NULL ? id_by_rid(r->listen_id) : NULL;
		id = l != NULL ? request_id(l, r) : NULL;
		if (id == NULL) {   /* listener gone, or no memory: refuse it */
			rv_lock();
			rnic_cm_reject(r->id, NULL, 0);
			rnic_cm_destroy_id(r->id);
			rv_unlock();
			free(e);
			return;
		}
		e->child = id;
	} else {
		id = id_by_rid(r->id);
		if (id == NULL) {
			free(e);
			return;
		}
	}
	event_kind(r, &e->ev);
	id->established |= e->ev.event == RDMA_CM_EVENT_ESTABLISHED;
	/* an active id without a QP of rdma_create_qp is told CONNECT_RESPONSE,
	 * and confirms with rdma_establish(), as librdmacm has it */
	if (e->ev.event == RDMA_CM_EVENT_ESTABLISHED && id->self_qp != NULL && id->addr_resolved)
		e->ev.event = RDMA_CM_EVENT_CONNECT_RESPONSE;
	id->disc_queued |= e->ev.event == RDMA_CM_EVENT_DISCONNECTED;
	id->disc_seen |= e->ev.event == RDMA_CM_EVENT_DISCONNECTED;
	e->ev.id = &id->id;
	e->ev.listen_id = l != NULL ? &l->id : NULL;
	struct rdma_conn_param *cp = &e->ev.param.conn;
	uint16_t len = r->private_data_len;
	if (len > sizeof(e->pdata))
		len = sizeof(e->pdata);
	memcpy(e->pdata, r->private_data, len);
	cp->private_data = len ? e->pdata : NULL;
	cp->private_data_len = (uint8_t)(len > UINT8_MAX ? UINT8_MAX : len);
	cp->responder_resources = r->ird;
	cp->initiator_depth = r->ord;
	cp->rnr_retry_count = 7;
	cp->retry_count = 7;
	cp->qp_num = id->id.qp != NULL ? id->id.qp->qp_num : 0;
	/* a request goes to the listener's channel; its id may be on another */
	chan_push(chan_of(l != NULL ? l->id.channel : id->id.channel), e);
}

/* rnic's events are taken only under cm_lock, as rnic ids are destroyed
 * (which drops their queued events): no event of a destroyed rnic id is
 * ever in hand here, to be taken for a new id at the same address. */
static void *dispatcher_main(void *arg)
{
	struct pollfd p = { .fd = rnic_cm_channel_fd(rch), .events = POLLIN };
	struct rnic_cm_event r;

	(void)arg;
	for (;;) {
		if (poll(&p, 1, -1) < 0 && errno != EINTR) {
			usleep(1000);   /* do not spin */
			continue;
		}
		pthread_mutex_lock(&cm_lock);
		while (rnic_cm_get_event(rch, &r, 0) == 0)
			dispatch(&r);
		pthread_mutex_unlock(&cm_lock);
	}
	return NULL;
}

/*
 * The program exits: the stack goes with it, so it closes the connections
 * the program left as the kernel would for a process that exits, with an
 * abort (RST, or a DREQ on RoCE) that leaves before the stack stops, else
 * a peer waits for a FIN answer or a DISCONNECTED that never comes (a
 * perftest server exits right after its rdma_disconnect()). Runs before
 * proc.c's exit handler (registered after it), while the progress thread
 * still drives the stack; the ids stay, without their rnic ids, for
 * threads of the program that may still touch them.
 */
static void cm_at_exit(void)
{
	const struct timespec ms = { 0, 1000 * 1000 };
	unsigned n = 0;

	if (rv_proc_if_started() == NULL)
		return;
	pthread_mutex_lock(&cm_lock);
	for (struct rv_id *id = ids; id != NULL; id = id->next) {
		if (id->rid == NULL)
			continue;
		rv_lock();
		rnic_cm_destroy_id(id->rid);
		rv_unlock();
		id->rid = NULL;
		n++;
	}
	pthread_mutex_unlock(&cm_lock);
	/* 20 ms for the frames to leave, sent by the progress thread: not
	 * driven from here, where a program that calls exit() from two
	 * threads at once (rping when it fails) has the other run proc.c's
	 * handler, which stops and frees the stack */
	for (unsigned i = 0; n > 0 && i < 20; i++)
		nanosleep(&ms, NULL);
}

static void cm_start(void)
{
	struct rv_proc *p = rv_proc();
	pthread_t tid;

	if (p == NULL) {
		cm_errno = errno;
		return;
	}
	rch = rnic_cm_create_channel(p->ctx[0]);
	if (rch == NULL) {
		cm_errno = errno ? errno : ENOMEM;
		return;
	}
	int rc = rv_thread_create(&tid, dispatcher_main, NULL);
	if (rc != 0) {
		rnic_cm_destroy_channel(rch);
		rch = NULL;
		cm_errno = rc;
		return;
	}
	pthread_setname_np(tid, "rnic-rdmacm");
	pthread_detach(tid);
	atexit(cm_at_exit);
}

/* The stack and the dispatcher, started on first use. @return 0 or -1. */
static int cm_ready(void)
{
	pthread_once(&cm_once, cm_start);
	if (rch != NULL && rv_proc() != NULL)
		return 0;
	return fail(cm_errno ? cm_errno : ENODEV);
}

/* --- events ---------------------------------------------------------------------- */

struct rdma_event_channel *rdma_create_event_channel(void)
{
	if (cm_ready() != 0)
		return NULL;
	struct rv_chan *c = chan_new();
	return c != NULL ? &c->ch : NULL;
}

/*
 * The queue goes, the fd and the channel stay open for good: a program
 * thread may still be on its way into rdma_get_cm_event() on it (rping's
 * event thread when its main thread tears down), and with the kernel's
 * rdma_cm that call blocks for ever on the closed channel; here it blocks
 * on an eventfd nobody writes again, instead of failing with EBADF (rping
 * exits 255) or reading freed memory. One fd per channel a program
 * destroys; a synchronous id's own channel is freed with the id.
 */
void rdma_destroy_event_channel(struct rdma_event_channel *channel)
{
	struct rv_chan *c = chan_of(channel);

	if (channel == NULL)
		return;
	pthread_mutex_lock(&cm_lock);
	pthread_mutex_lock(&c->lock);
	struct rv_event *e = c->head;
	c->head = c->tail = NULL;
	pthread_mutex_unlock(&c->lock);
	for (struct rv_event *nx; e != NULL; e = nx) {
		nx = e->next;
		event_drop(e);
	}
	pthread_mutex_unlock(&cm_lock);
}

int rdma_get_cm_event(struct rdma_event_channel *channel, struct rdma_cm_event **event)
{
	struct rv_chan *c = chan_of(channel);
	uint64_t one;

	if (channel == NULL || event == NULL)
		return fail(EINVAL);
	for (;;) {
		/* blocks (no lock held) unless the program made the fd O_NONBLOCK;
		 * a signal handled without SA_RESTART ends it with EINTR, as
		 * librdmacm's read() of its channel */
		rv_block_begin();
		ssize_t got = read(c->ch.fd, &one, sizeof(one));
		rv_block_end();
		if (got != sizeof(one))
			return -1;
		pthread_mutex_lock(&cm_lock);
		pthread_mutex_lock(&c->lock);
		struct rv_event *e = c->head;
		if (e != NULL && (c->head = e->next) == NULL)
			c->tail = NULL;
		pthread_mutex_unlock(&c->lock);
		if (e != NULL && e->dead) {
			event_drop(e);
		} else if (e != NULL) {
			e->child = NULL;   /* the program owns the new id now */
			pthread_mutex_lock(&ev_lock);
			ev_unlink(e);
			pthread_mutex_unlock(&ev_lock);
		}
		pthread_mutex_unlock(&cm_lock);
		if (e != NULL && !e->dead) {
			e->next = NULL;
			*event = &e->ev;
			return 0;
		}
	}
}

int rdma_ack_cm_event(struct rdma_cm_event *event)
{
	if (event == NULL)
		return fail(EINVAL);
	free(event);   /* ev is the first member of struct rv_event */
	return 0;
}

const char *rdma_event_str(enum rdma_cm_event_type event)
{
	static const char *const names[] = {
		[RDMA_CM_EVENT_ADDR_RESOLVED] = "RDMA_CM_EVENT_ADDR_RESOLVED",
		[RDMA_CM_EVENT_ADDR_ERROR] = "RDMA_CM_EVENT_ADDR_ERROR",
		[RDMA_CM_EVENT_ROUTE_RESOLVED] = "RDMA_CM_EVENT_ROUTE_RESOLVED",
		[RDMA_CM_EVENT_ROUTE_ERROR] = "RDMA_CM_EVENT_ROUTE_ERROR",
		[RDMA_CM_EVENT_CONNECT_REQUEST] = "RDMA_CM_EVENT_CONNECT_REQUEST",
		[RDMA_CM_EVENT_CONNECT_RESPONSE] = "RDMA_CM_EVENT_CONNECT_RESPONSE",
		[RDMA_CM_EVENT_CONNECT_ERROR] = "RDMA_CM_EVENT_CONNECT_ERROR",
		[RDMA_CM_EVENT_UNREACHABLE] = "RDMA_CM_EVENT_UNREACHABLE",
		[RDMA_CM_EVENT_REJECTED] = "RDMA_CM_EVENT_REJECTED",
		[RDMA_CM_EVENT_ESTABLISHED] = "RDMA_CM_EVENT_ESTABLISHED",
		[RDMA_CM_EVENT_DISCONNECTED] = "RDMA_CM_EVENT_DISCONNECTED",
		[RDMA_CM_EVENT_DEVICE_REMOVAL] = "RDMA_CM_EVENT_DEVICE_REMOVAL",
		[RDMA_CM_EVENT_MULTICAST_JOIN] = "RDMA_CM_EVENT_MULTICAST_JOIN",
		[RDMA_CM_EVENT_MULTICAST_ERROR] = "RDMA_CM_EVENT_MULTICAST_ERROR",
		[RDMA_CM_EVENT_ADDR_CHANGE] = "RDMA_CM_EVENT_ADDR_CHANGE",
		[RDMA_CM_EVENT_TIMEWAIT_EXIT] = "RDMA_CM_EVENT_TIMEWAIT_EXIT",
	};
	return (unsigned)event < sizeof(names) / sizeof(names[0]) ? names[event] :
	       "UNKNOWN EVENT";
}

/* An event made here (address and route resolution), on @p id's channel. */
static int post_local(struct rv_id *id, enum rdma_cm_event_type type)
{
	struct rv_event *e = calloc(1, sizeof(*e));
	if (e == NULL)
		return fail(ENOMEM);
	e->ev.id = &id->id;
	e->ev.event = type;
	chan_push(chan_of(id->id.channel), e);
	return 0;
}

/* A synchronous id's wait for the event its call caused (librdmacm's
 * "complete"): the event stays in id->event until the next one. */
static int sync_wait(struct rv_id *id)
{
	if (!id->sync)
		return 0;
	if (id->id.event != NULL) {
		rdma_ack_cm_event(id->id.event);
		id->id.event = NULL;
	}
	if (rdma_get_cm_event(id->id.channel, &id->id.event) != 0)
		return -1;
	if (id->id.event->event == RDMA_CM_EVENT_DISCONNECTED) {
		pthread_mutex_lock(&cm_lock);
		id->disc_queued = false;
		pthread_mutex_unlock(&cm_lock);
	}
	int st = id->id.event->status;
	if (st == 0)
		return 0;
	if (id->id.event->event == RDMA_CM_EVENT_REJECTED)
		return fail(ECONNREFUSED);
	return fail(st < 0 ? -st : st);
}

/* --- ids -------------------------------------------------------------------------- */

int rdma_create_id(struct rdma_event_channel *channel, struct rdma_cm_id **id, void *context,
		   enum rdma_port_space ps)
{
	if (id == NULL)
		return fail(EINVAL);
	if (ps != RDMA_PS_TCP) {
		rv_unsupported("rdma_create_id (a port space other than RDMA_PS_TCP)");
		return -1;
	}
	if (cm_ready() != 0)
		return -1;
	pthread_mutex_lock(&cm_lock);
	struct rv_id *n = id_new(channel ? chan_of(channel) : NULL, context, ps);
	pthread_mutex_unlock(&cm_lock);
	if (n == NULL)
		return -1;
	*id = &n->id;
	return 0;
}

int rdma_destroy_id(struct rdma_cm_id *id)
{
	if (id == NULL)
		return fail(EINVAL);
	pthread_mutex_lock(&cm_lock);
	id_free(rv_of(id));
	pthread_mutex_unlock(&cm_lock);
	return 0;
}

int rdma_migrate_id(struct rdma_cm_id *cid, struct rdma_event_channel *channel)
{
	struct rv_id *id = rv_of(cid);

	if (cid == NULL || (channel == NULL && id->sync))
		return fail(EINVAL);
	pthread_mutex_lock(&cm_lock);
	struct rv_chan *old = chan_of(cid->channel), *c = channel ? chan_of(channel) : chan_new();
	if (c == NULL) {
		pthread_mutex_unlock(&cm_lock);
		return -1;
	}
	if (id->sync) {   /* its own channel goes, with what waited there */
		if (cid->event != NULL)
			free(cid->event);
		cid->event = NULL;
		chan_free(old);
	}
	id->sync = channel == NULL;
	cid->channel = &c->ch;
	pthread_mutex_unlock(&cm_lock);
	return 0;
}

int rdma_set_option(struct rdma_cm_id *id, int level, int optname, void *optval,
		    size_t optlen)
{
	(void)optval;
	(void)optlen;
	if (id == NULL)
		return fail(EINVAL);
	/* the type of service, address reuse, v6-only and the ack timeout
	 * change nothing rnic does */
	if (level == RDMA_OPTION_ID &&
	    (optname == RDMA_OPTION_ID_TOS || optname == RDMA_OPTION_ID_REUSEADDR ||
	     optname == RDMA_OPTION_ID_AFONLY || optname == RDMA_OPTION_ID_ACK_TIMEOUT))
		return 0;
	rv_unsupported(level == RDMA_OPTION_IB ? "rdma_set_option (RDMA_OPTION_IB_PATH)" :
		       "rdma_set_option (an unknown option)");
	return -1;
}

/* --- addresses -------------------------------------------------------------------- */

/* An address a program gives: IPv4, IPv6, an IPv4-mapped IPv6 one
 * (::ffff:a.b.c.d, what getaddrinfo() gives with AI_V4MAPPED) as IPv4, or
 * the any address of either (family 0). @return 0 or -1 (EAFNOSUPPORT). */
static int sa_addr(const struct sockaddr *sa, struct rnic_addr *a, uint16_t *port)
{
	if (sa == NULL)
		return fail(EINVAL);
	if (sa->sa_family == AF_INET) {
		*a = addr4(ntohl(((const struct sockaddr_in *)sa)->sin_addr.s_addr));
		*port = sa_port(sa);
		return 0;
	}
	if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)sa;
		*port = ntohs(s6->sin6_port);
		if (IN6_IS_ADDR_V4MAPPED(&s6->sin6_addr) || IN6_IS_ADDR_UNSPECIFIED(&s6->sin6_addr)) {
			uint32_t v;
			memcpy(&v, &s6->sin6_addr.s6_addr[12], sizeof(v));
			*a = addr4(ntohl(v));
			return 0;
		}
		a->family = RNIC_AF_INET6;
		memcpy(a->v6, s6->sin6_addr.s6_addr, 16);
		return 0;
	}
	return fail(EAFNOSUPPORT);
}

int rdma_bind_addr(struct rdma_cm_id *cid, struct sockaddr *addr)
{
	struct rv_id *id = rv_of(cid);
	struct rnic_addr a;
	uint16_t port;

	if (cid == NULL || sa_addr(addr, &a, &port) != 0)
		return -1;
	int pi = a.family != 0 ? port_with_addr(&a) : 0;
	if (pi < 0)
		return fail(EADDRNOTAVAIL);
	pthread_mutex_lock(&cm_lock);
	sa_set(&cid->route.addr.src_addr, &a, port);
	/* bound to an address of ours, the id has its device; to any, not */
	if (a.family != 0)
		id_set_face(id, rv_proc_if_started()->transport == RNIC_TRANSPORT_ROCE, (unsigned)pi);
	pthread_mutex_unlock(&cm_lock);
	return 0;
}

int rdma_resolve_addr(struct rdma_cm_id *cid, struct sockaddr *src_addr, struct sockaddr *dst_addr,
		      int timeout_ms)
{
	struct rv_id *id = rv_of(cid);
	struct rnic_addr dst, src = { 0 };
	uint16_t dport, sport = 0;
	(void)timeout_ms;

	if (cid == NULL || sa_addr(dst_addr, &dst, &dport) != 0 ||
	    (src_addr != NULL && sa_addr(src_addr, &src, &sport) != 0))
		return -1;
	if (dst.family == 0)
		return fail(EADDRNOTAVAIL);   /* no peer at the any address */
	if (src.family == 0 && (cid->route.addr.src_addr.sa_family == AF_INET ||
				cid->route.addr.src_addr.sa_family == AF_INET6))
		(void)sa_addr(&cid->route.addr.src_addr, &src, &sport);   /* bound before */
	if (src.family != 0 && src.family != dst.family)
		return fail(EAFNOSUPPORT);
	int pi = src.family != 0 ? port_with_addr(&src) : (int)port_for(&dst);
	if (pi < 0)
		return fail(EADDRNOTAVAIL);
	if (src.family == 0)
		src = port_src((unsigned)pi, &dst);
	if (src.family != dst.family)
		return fail(EADDRNOTAVAIL);   /* the port has no address of that family */
	pthread_mutex_lock(&cm_lock);
	sa_set(&cid->route.addr.src_addr, &src, sport);
	sa_set(&cid->route.addr.dst_addr, &dst, dport);
	id_set_face(id, rv_proc_if_started()->transport == RNIC_TRANSPORT_ROCE, (unsigned)pi);
	id->addr_resolved = true;
	int rc = post_local(id, RDMA_CM_EVENT_ADDR_RESOLVED);
	pthread_mutex_unlock(&cm_lock);
	return rc != 0 ? rc : sync_wait(id);
}

int rdma_resolve_route(struct rdma_cm_id *cid, int timeout_ms)
{
	struct rv_id *id = rv_of(cid);
	(void)timeout_ms;

	if (cid == NULL || !id->addr_resolved)
		return fail(EINVAL);
	/* the next hop is resolved by the stack when the connection is made */
	pthread_mutex_lock(&cm_lock);
	int rc = post_local(id, RDMA_CM_EVENT_ROUTE_RESOLVED);
	pthread_mutex_unlock(&cm_lock);
	return rc != 0 ? rc : sync_wait(id);
}

__be16 rdma_get_src_port(struct rdma_cm_id *id)
{
	if (id == NULL)
		return 0;
	if (id->route.addr.src_addr.sa_family == AF_INET6)
		return id->route.addr.src_sin6.sin6_port;
	return id->route.addr.src_addr.sa_family == AF_INET ? id->route.addr.src_sin.sin_port : 0;
}

__be16 rdma_get_dst_port(struct rdma_cm_id *id)
{
	if (id == NULL)
		return 0;
	if (id->route.addr.dst_addr.sa_family == AF_INET6)
		return id->route.addr.dst_sin6.sin6_port;
	return id->route.addr.dst_addr.sa_family == AF_INET ? id->route.addr.dst_sin.sin_port : 0;
}

/* --- connections --------------------------------------------------------------------- */

static int listen_on(struct rv_id *id, uint16_t port, int backlog)
{
	if (id->rid == NULL)
		return EINVAL;
	rv_lock();
	int rc = rnic_cm_listen(id->rid, port, backlog);
	rv_unlock();
	return rv_err(rc);
}

/* rnic listens on every address of the stack, for both transports; the
 * port bound (or one of the dynamic range, as the kernel picks for 0). */
int rdma_listen(struct rdma_cm_id *cid, int backlog)
{
	struct rv_id *id = rv_of(cid);
	int rc;

	if (cid == NULL || id->listening)
		return fail(EINVAL);
	if (cid->route.addr.src_addr.sa_family != AF_INET &&
	    cid->route.addr.src_addr.sa_family != AF_INET6) {
		struct rnic_addr any = { 0 };
		sa_set(&cid->route.addr.src_addr, &any, 0);
	}
	uint16_t port = sa_port(&cid->route.addr.src_addr);
	if (port != 0) {
		rc = listen_on(id, port, backlog);
	} else {
		rc = EADDRINUSE;
		for (int tries = 0; rc != 0 && tries < 64; tries++) {
			port = (uint16_t)(49152 + (unsigned)rand() % 16384);
			rc = listen_on(id, port, backlog);
		}
	}
	if (rc != 0)
		return fail(rc);
	if (cid->route.addr.src_addr.sa_family == AF_INET6)
		cid->route.addr.src_sin6.sin6_port = htons(port);
	else
		cid->route.addr.src_sin.sin_port = htons(port);
	id->listening = true;
	return 0;
}

/* A QP's move to INIT on @p cid's port, every remote access allowed. */
static void init_attr(const struct rdma_cm_id *cid, struct ibv_qp_attr *attr, int *mask)
{
	attr->qp_state = IBV_QPS_INIT;
	attr->pkey_index = 0;
	attr->port_num = cid->port_num ? cid->port_num : 1;
	attr->qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
				IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
	*mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS;
}

/* rdma_conn_param in rnic's terms; RDMA_MAX_RESP_RES / RDMA_MAX_INIT_DEPTH
 * (255) and 0 leave the choice to rnic (its maximum, bounded by the
 * peer's). */
static void conn_param(struct rnic_cm_conn_param *c, const struct rdma_conn_param *p)
{
	memset(c, 0, sizeof(*c));
	if (p == NULL)
		return;
	c->private_data = p->private_data;
	c->private_data_len = p->private_data ? p->private_data_len : 0;
	c->responder_resources = p->responder_resources == RDMA_MAX_RESP_RES ? 0 :
				 p->responder_resources;
	c->initiator_depth = p->initiator_depth == RDMA_MAX_INIT_DEPTH ? 0 : p->initiator_depth;
	if (c->responder_resources > RNIC_MAX_RD_ATOMIC)
		c->responder_resources = RNIC_MAX_RD_ATOMIC;
	if (c->initiator_depth > RNIC_MAX_RD_ATOMIC)
		c->initiator_depth = RNIC_MAX_RD_ATOMIC;
}

/*
 * The QP a connection takes: the id's (rdma_create_qp), or the program's
 * own, named by conn_param.qp_num (rping -q creates and moves its QP
 * itself). rnic's CM takes the QP in RESET or INIT and moves it to RTS;
 * rdma_init_qp_attr() keeps a program's own moves from getting ahead of
 * it. @return the QP, or NULL with errno.
 */
static struct ibv_qp *conn_qp(struct rv_id *id, const struct rdma_conn_param *p)
{
	if (id->id.qp != NULL)
		return id->id.qp;
	if (p == NULL || p->qp_num == 0 || p->qp_num >= RNIC_MAX_QP) {
		errno = EINVAL;
		return NULL;
	}
	struct rnic_device *d = dev_of(rv_proc_if_started()->ctx[0]);
	pthread_mutex_lock(&d->lock);
	struct rnic_qp *qp = rnic_qp_by_num(d->st, p->qp_num);
	pthread_mutex_unlock(&d->lock);
	if (qp == NULL) {
		errno = EINVAL;
		return NULL;
	}
	pthread_mutex_lock(&cm_lock);
	id->self_qp = &qp->qp;
	pthread_mutex_unlock(&cm_lock);
	return &qp->qp;
}

/* A program's own QP, in INIT, gets the remote access rdma_cm's INIT step
 * would give it: rping -q made it with none and moves it on only once
 * connected, when rnic's CM has it in RTS already (the drive lock held). */
static void self_qp_access(const struct rv_id *id, struct ibv_qp *qp)
{
	struct ibv_qp_attr a;
	int mask;

	if (qp == id->id.qp || __atomic_load_n(&qp->state, __ATOMIC_ACQUIRE) != IBV_QPS_INIT)
		return;
	init_attr(&id->id, &a, &mask);
	rnic_modify_qp(qp, &a, mask);
}

int rdma_connect(struct rdma_cm_id *cid, struct rdma_conn_param *param)
{
	struct rv_id *id = rv_of(cid);
	struct rnic_cm_conn_param c;

	if (cid == NULL || !id->addr_resolved)
		return fail(EINVAL);
	struct ibv_qp *qp = conn_qp(id, param);
	if (qp == NULL)
		return -1;
	conn_param(&c, param);
	rv_lock();
	self_qp_access(id, qp);
	struct rnic_addr dst;
	uint16_t dport;
	(void)sa_addr(&cid->route.addr.dst_addr, &dst, &dport);   /* set by resolve */
	int rc = rnic_cm_connect_addr(id->rid, qp, &dst, dport, &c);
	rv_unlock();
	if (rc != 0)
		return rv_fail(rc);
	return sync_wait(id);
}

int rdma_accept(struct rdma_cm_id *cid, struct rdma_conn_param *param)
{
	struct rv_id *id = rv_of(cid);
	struct rnic_cm_conn_param c;

	if (cid == NULL)
		return fail(EINVAL);
	struct ibv_qp *qp = conn_qp(id, param);
	if (qp == NULL)
		return -1;
	conn_param(&c, param);
	rv_lock();
	self_qp_access(id, qp);
	int rc = rnic_cm_accept(id->rid, qp, &c);
	rv_unlock();
	if (rc != 0)
		return rv_fail(rc);
	return sync_wait(id);
}

int rdma_reject(struct rdma_cm_id *cid, const void *private_data, uint8_t private_data_len)
{
	if (cid == NULL)
		return fail(EINVAL);
	rv_lock();
	int rc = rnic_cm_reject(rv_of(cid)->rid, private_data, private_data ? private_data_len : 0);
	rv_unlock();
	return rv_fail(rc);
}

int rdma_disconnect(struct rdma_cm_id *cid)
{
	if (cid == NULL)
		return fail(EINVAL);
	struct rv_id *id = rv_of(cid);
	rv_lock();
	int rc = rv_err(rnic_cm_disconnect(id->rid));
	rv_unlock();
	/* the peer closed first: done, as rdma_cm has it (a synchronous id
	 * still takes its DISCONNECTED) */
	if (rc == ENOTCONN && id->established) {
		pthread_mutex_lock(&cm_lock);
		bool wait = id->disc_queued;
		pthread_mutex_unlock(&cm_lock);
		return wait ? sync_wait(id) : 0;
	}
	if (rc != 0)
		return fail(rc);
	return sync_wait(id);
}

/* rnic's CM brought the program's own QP to RTS with the connection
 * (CONNECT_RESPONSE): nothing is left to confirm. */
int rdma_establish(struct rdma_cm_id *cid)
{
	if (cid == NULL || cid->qp != NULL)
		return fail(EINVAL);
	return 0;
}

/*
 * The attributes that move a QP to @p attr->qp_state. The INIT step is
 * real (port, access); RTR and RTS are rnic's CM's to make, with the
 * connection: a program that moves its own QP (rping -q) is told to keep
 * it in INIT until then, and, once connected, in the state the CM gave it
 * (a modify to the same state changes nothing).
 */
int rdma_init_qp_attr(struct rdma_cm_id *cid, struct ibv_qp_attr *attr, int *mask)
{
	if (cid == NULL || attr == NULL || mask == NULL || cid->verbs == NULL)
		return fail(EINVAL);
	pthread_mutex_lock(&cm_lock);
	struct ibv_qp *qp = cid->qp != NULL ? cid->qp : rv_of(cid)->self_qp;
	pthread_mutex_unlock(&cm_lock);
	enum ibv_qp_state cur = qp != NULL ? __atomic_load_n(&qp->state, __ATOMIC_ACQUIRE) :
				IBV_QPS_RESET;
	if (cur == IBV_QPS_RTR || cur == IBV_QPS_RTS) {
		attr->qp_state = cur;
		*mask = IBV_QP_STATE;
		return 0;
	}
	if (attr->qp_state == IBV_QPS_RTR || attr->qp_state == IBV_QPS_RTS) {
		attr->qp_state = IBV_QPS_INIT;
		*mask = IBV_QP_STATE;
		return 0;
	}
	if (attr->qp_state != IBV_QPS_INIT)
		return fail(EINVAL);
	init_attr(cid, attr, mask);
	return 0;
}

/* --- QPs and SRQs on an id ----------------------------------------------------------- */

static void destroy_cqs(struct rv_id *id)
{
	struct rdma_cm_id *c = &id->id;
	if (!id->own_cqs)
		return;
	if (c->recv_cq != NULL && c->recv_cq != c->send_cq)
		ibv_destroy_cq(c->recv_cq);
	if (c->send_cq != NULL)
		ibv_destroy_cq(c->send_cq);
	if (c->recv_cq_channel != NULL)
		ibv_destroy_comp_channel(c->recv_cq_channel);
	if (c->send_cq_channel != NULL)
		ibv_destroy_comp_channel(c->send_cq_channel);
	c->recv_cq = c->send_cq = NULL;
	c->recv_cq_channel = c->send_cq_channel = NULL;
	id->own_cqs = false;
}

/* A CQ with a completion channel of its own, for @p n entries. */
static int make_cq(struct rdma_cm_id *c, int n, struct ibv_cq **cq, struct ibv_comp_channel **ch)
{
	*ch = ibv_create_comp_channel(c->verbs);
	if (*ch == NULL)
		return -1;
	*cq = ibv_create_cq(c->verbs, n > 0 ? n : 1, c, *ch, 0);
	return *cq != NULL ? 0 : -1;
}

/* librdmacm makes the CQs a QP or SRQ was given none of. */
static int make_cqs(struct rv_id *id, int send, int recv)
{
	struct rdma_cm_id *c = &id->id;
	int rc = 0;

	if (recv >= 0 && c->recv_cq == NULL) {
		id->own_cqs = true;
		rc = make_cq(c, recv, &c->recv_cq, &c->recv_cq_channel);
	}
	if (rc == 0 && send >= 0 && c->send_cq == NULL) {
		id->own_cqs = true;
		rc = make_cq(c, send, &c->send_cq, &c->send_cq_channel);
	}
	if (rc != 0) {
		int e = errno;
		destroy_cqs(id);
		errno = e;
	}
	return rc;
}

int rdma_create_qp(struct rdma_cm_id *cid, struct ibv_pd *pd, struct ibv_qp_init_attr *attr)
{
	struct rv_id *id = rv_of(cid);

	if (cid == NULL || attr == NULL || cid->qp != NULL || cid->verbs == NULL)
		return fail(EINVAL);
	if (attr->qp_type != IBV_QPT_RC) {
		rv_unsupported("rdma_create_qp (a QP type other than RC)");
		return -1;
	}
	int face = face_of_ctx(cid->verbs);
	pd = pd != NULL ? pd : cid->pd;
	if (pd == NULL || face < 0)
		return fail(EINVAL);
	if (make_cqs(id, attr->send_cq ? -1 : (int)attr->cap.max_send_wr,
		     attr->recv_cq ? -1 : (int)attr->cap.max_recv_wr) != 0)
		return -1;
	if (attr->send_cq == NULL)
		attr->send_cq = cid->send_cq;
	if (attr->recv_cq == NULL)
		attr->recv_cq = cid->recv_cq;
	if (attr->srq == NULL)
		attr->srq = cid->srq;
	rv_lock();
	struct ibv_qp *qp = rnic_create_qp_transport(pd, attr, face_transport(face));
	int e = errno;
	/* receives may be posted from INIT on, before the connection (as
	 * librdmacm's QPs, which start in INIT) */
	struct ibv_qp_attr init;
	int mask, rc = 0;
	init_attr(cid, &init, &mask);
	if (qp != NULL)
		rc = rv_err(rnic_modify_qp(qp, &init, mask));
	if (qp != NULL && rc != 0) {
		e = rc > 0 ? rc : errno;
		rnic_destroy_qp(qp);
		qp = NULL;
	}
	rv_unlock();
	if (qp == NULL) {
		destroy_cqs(id);
		return fail(e ? e : ENOMEM);
	}
	cid->qp = qp;
	cid->pd = qp->pd;
	return 0;
}

int rdma_create_qp_ex(struct rdma_cm_id *cid, struct ibv_qp_init_attr_ex *attr)
{
	if (attr == NULL || (attr->comp_mask & ~(uint32_t)IBV_QP_INIT_ATTR_PD) != 0) {
		rv_unsupported("rdma_create_qp_ex (attributes beyond the PD)");
		return -1;
	}
	struct ibv_qp_init_attr a = {
		.qp_context = attr->qp_context,
		.send_cq = attr->send_cq,
		.recv_cq = attr->recv_cq,
		.srq = attr->srq,
		.cap = attr->cap,
		.qp_type = attr->qp_type,
		.sq_sig_all = attr->sq_sig_all,
	};
	int rc = rdma_create_qp(cid, attr->comp_mask & IBV_QP_INIT_ATTR_PD ? attr->pd : NULL, &a);
	attr->cap = a.cap;
	attr->send_cq = a.send_cq;
	attr->recv_cq = a.recv_cq;
	return rc;
}

void rdma_destroy_qp(struct rdma_cm_id *cid)
{
	if (cid == NULL || cid->qp == NULL)
		return;
	ibv_destroy_qp(cid->qp);   /* lets go of the QP first (rv_cm_release_qp) */
	cid->qp = NULL;
	destroy_cqs(rv_of(cid));
}

/*
 * ibv_destroy_qp() on a QP an rdma_cm_id still holds (rping destroys its
 * QP before its id, cmtime right after rdma_disconnect()): rnic's id lets
 * go of it, and the rdma_cm_id gets a fresh rnic id, so the program may
 * still destroy it. The connection goes with the QP (aborted), and an id
 * that was connected gets its DISCONNECTED here if it had none yet: with
 * rdma_cm the connection outlives the QP and the event comes.
 */
void rv_cm_release_qp(struct ibv_qp *qp)
{
	if (rch == NULL || qp == NULL)
		return;
	pthread_mutex_lock(&cm_lock);
	for (struct rv_id *id = ids; id != NULL; id = id->next) {
		if (id->id.qp != qp && id->self_qp != qp)
			continue;
		id->self_qp = NULL;
		struct rnic_cm_id *fresh = NULL;
		/* what is queued for the id stays: the id does */
		rv_lock();
		rnic_cm_destroy_id(id->rid);
		id->rid = NULL;
		if (rnic_cm_create_id(rch, id, &fresh) == 0)
			id->rid = fresh;
		rv_unlock();
		id->id.qp = NULL;
		if (id->established && !id->disc_seen) {
			struct rv_event *e = calloc(1, sizeof(*e));
			if (e != NULL) {
				e->ev.id = &id->id;
				e->ev.event = RDMA_CM_EVENT_DISCONNECTED;
				id->disc_seen = id->disc_queued = true;
				chan_push(chan_of(id->id.channel), e);
			}
		}
		break;
	}
	pthread_mutex_unlock(&cm_lock);
}

int rdma_create_srq(struct rdma_cm_id *cid, struct ibv_pd *pd, struct ibv_srq_init_attr *attr)
{
	struct rv_id *id = rv_of(cid);

	if (cid == NULL || attr == NULL || cid->srq != NULL || cid->verbs == NULL)
		return fail(EINVAL);
	pd = pd != NULL ? pd : cid->pd;
	if (pd == NULL)
		return fail(EINVAL);
	if (make_cqs(id, -1, (int)attr->attr.max_wr) != 0)
		return -1;
	struct ibv_srq *srq = ibv_create_srq(pd, attr);
	if (srq == NULL) {
		int e = errno;
		destroy_cqs(id);
		return fail(e);
	}
	cid->srq = srq;
	cid->pd = pd;
	return 0;
}

int rdma_create_srq_ex(struct rdma_cm_id *id, struct ibv_srq_init_attr_ex *attr)
{
	(void)id;
	(void)attr;
	rv_unsupported("rdma_create_srq_ex");
	return -1;
}

void rdma_destroy_srq(struct rdma_cm_id *cid)
{
	if (cid == NULL || cid->srq == NULL)
		return;
	ibv_destroy_srq(cid->srq);
	cid->srq = NULL;
	if (cid->qp == NULL)
		destroy_cqs(rv_of(cid));
}

/* --- devices -------------------------------------------------------------------------- */

struct ibv_context **rdma_get_devices(int *num_devices)
{
	struct rv_proc *p = rv_proc();
	int n = p != NULL ? 2 : 0;
	struct ibv_context **list = calloc((size_t)n + 1, sizeof(*list));

	if (list == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	for (int i = 0; i < n; i++)
		list[i] = p->ctx[i];
	if (num_devices != NULL)
		*num_devices = n;
	return list;
}

void rdma_free_devices(struct ibv_context **list)
{
	free(list);
}

/* --- rdma_getaddrinfo ------------------------------------------------------------------ */

void rdma_freeaddrinfo(struct rdma_addrinfo *res)
{
	while (res != NULL) {
		struct rdma_addrinfo *nx = res->ai_next;
		free(res->ai_src_addr);
		free(res->ai_dst_addr);
		free(res->ai_src_canonname);
		free(res->ai_dst_canonname);
		free(res->ai_route);
		free(res->ai_connect);
		free(res);
		res = nx;
	}
}

static struct sockaddr *sa_dup(const struct sockaddr *sa, socklen_t len)
{
	struct sockaddr *d = malloc(len);
	if (d != NULL)
		memcpy(d, sa, len);
	return d;
}

/*
 * IPv4 and IPv6 names and numbers through getaddrinfo(3), for RDMA_PS_TCP
 * RC connections (the family of the hints, else the first getaddrinfo
 * gives). Passive: ai_src_addr (INADDR_ANY without a node). Active:
 * ai_dst_addr, and ai_src_addr from the hints (rdma_resolve_addr picks the
 * port otherwise). @return 0, an EAI_* code (gai_strerror), or -1 and errno.
 */
int rdma_getaddrinfo(const char *node, const char *service, const struct rdma_addrinfo *hints,
		     struct rdma_addrinfo **res)
{
	struct addrinfo h = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM }, *ai;
	int flags = hints ? hints->ai_flags : 0;

	if (res == NULL || (node == NULL && service == NULL))
		return fail(EINVAL);
	if (hints != NULL && ((hints->ai_port_space && hints->ai_port_space != RDMA_PS_TCP) ||
			      (hints->ai_qp_type && hints->ai_qp_type != IBV_QPT_RC) ||
			      (hints->ai_family && hints->ai_family != AF_INET &&
			       hints->ai_family != AF_INET6))) {
		rv_unsupported("rdma_getaddrinfo (other than IPv4/IPv6, RDMA_PS_TCP, RC)");
		return -1;
	}
	if (hints != NULL && hints->ai_family)
		h.ai_family = hints->ai_family;
	h.ai_flags = (flags & RAI_PASSIVE ? AI_PASSIVE : 0) |
		     (flags & RAI_NUMERICHOST ? AI_NUMERICHOST : 0);
	int rc = getaddrinfo(node, service, &h, &ai);
	if (rc != 0)
		return rc;
	struct rdma_addrinfo *r = calloc(1, sizeof(*r));
	if (r == NULL) {
		freeaddrinfo(ai);
		return fail(ENOMEM);
	}
	r->ai_flags = flags;
	r->ai_family = ai->ai_family;
	r->ai_qp_type = IBV_QPT_RC;
	r->ai_port_space = RDMA_PS_TCP;
	struct sockaddr **slot = flags & RAI_PASSIVE ? &r->ai_src_addr : &r->ai_dst_addr;
	*slot = sa_dup(ai->ai_addr, ai->ai_addrlen);
	if (flags & RAI_PASSIVE)
		r->ai_src_len = ai->ai_addrlen;
	else
		r->ai_dst_len = ai->ai_addrlen;
	freeaddrinfo(ai);
	if (!(flags & RAI_PASSIVE) && hints != NULL && hints->ai_src_addr != NULL &&
	    (hints->ai_src_addr->sa_family == AF_INET ||
	     hints->ai_src_addr->sa_family == AF_INET6)) {
		socklen_t len = hints->ai_src_addr->sa_family == AF_INET6 ?
				sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in);
		r->ai_src_addr = sa_dup(hints->ai_src_addr, len);
		r->ai_src_len = len;
		if (r->ai_src_addr == NULL)
			*slot = NULL;   /* reported below */
	}
	if (*slot == NULL) {
		rdma_freeaddrinfo(r);
		return fail(ENOMEM);
	}
	*res = r;
	return 0;
}

/* --- synchronous endpoints ---------------------------------------------------------------- */

int rdma_create_ep(struct rdma_cm_id **out, struct rdma_addrinfo *res, struct ibv_pd *pd,
		   struct ibv_qp_init_attr *qp_init_attr)
{
	struct rdma_cm_id *cid;

	if (out == NULL || res == NULL)
		return fail(EINVAL);
	if (rdma_create_id(NULL, &cid, NULL, res->ai_port_space ? res->ai_port_space :
			   RDMA_PS_TCP) != 0)
		return -1;
	struct rv_id *id = rv_of(cid);
	int rc;
	if (qp_init_attr != NULL)
		qp_init_attr->qp_type = res->ai_qp_type ? res->ai_qp_type : IBV_QPT_RC;
	if (res->ai_flags & RAI_PASSIVE) {
		rc = res->ai_src_addr ? rdma_bind_addr(cid, res->ai_src_addr) : 0;
		if (rc == 0 && pd != NULL)
			cid->pd = pd;
		if (rc == 0 && qp_init_attr != NULL) {
			id->ep_attr = malloc(sizeof(*id->ep_attr));
			if (id->ep_attr == NULL)
				rc = fail(ENOMEM);
			else
				*id->ep_attr = *qp_init_attr;
		}
	} else {
		rc = rdma_resolve_addr(cid, res->ai_src_addr, res->ai_dst_addr, 2000);
		if (rc == 0)
			rc = rdma_resolve_route(cid, 2000);
		if (rc == 0 && qp_init_attr != NULL)
			rc = rdma_create_qp(cid, pd, qp_init_attr);
	}
	if (rc != 0) {
		int e = errno;
		rdma_destroy_ep(cid);
		return fail(e);
	}
	*out = cid;
	return 0;
}

void rdma_destroy_ep(struct rdma_cm_id *cid)
{
	if (cid == NULL)
		return;
	if (cid->qp != NULL)
		rdma_destroy_qp(cid);
	if (cid->srq != NULL)
		rdma_destroy_srq(cid);
	rdma_destroy_id(cid);
}

int rdma_get_request(struct rdma_cm_id *listen, struct rdma_cm_id **out)
{
	struct rv_id *l = rv_of(listen);
	struct rdma_cm_event *ev;

	if (listen == NULL || out == NULL || !l->sync)
		return fail(EINVAL);
	if (listen->event != NULL) {
		rdma_ack_cm_event(listen->event);
		listen->event = NULL;
	}
	if (rdma_get_cm_event(listen->channel, &ev) != 0)
		return -1;
	int err = ev->event == RDMA_CM_EVENT_REJECTED ? ECONNREFUSED :
		  ev->status ? (ev->status < 0 ? -ev->status : ev->status) :
		  ev->event != RDMA_CM_EVENT_CONNECT_REQUEST ? EINVAL : 0;
	if (err == 0 && l->ep_attr != NULL) {
		struct ibv_qp_init_attr a = *l->ep_attr;
		if (rdma_create_qp(ev->id, listen->pd, &a) != 0)
			err = errno;
	}
	if (err != 0) {
		listen->event = ev;
		return fail(err);
	}
	*out = ev->id;
	(*out)->event = ev;
	return 0;
}

/* --- not supported: multicast, ECE, notify ------------------------------------------------ */

int rdma_join_multicast(struct rdma_cm_id *id, struct sockaddr *addr, void *context)
{
	(void)id; (void)addr; (void)context;
	rv_unsupported("rdma_join_multicast");
	return -1;
}

int rdma_join_multicast_ex(struct rdma_cm_id *id, struct rdma_cm_join_mc_attr_ex *mc_join_attr,
			   void *context)
{
	(void)id; (void)mc_join_attr; (void)context;
	rv_unsupported("rdma_join_multicast_ex");
	return -1;
}

int rdma_leave_multicast(struct rdma_cm_id *id, struct sockaddr *addr)
{
	(void)id; (void)addr;
	rv_unsupported("rdma_leave_multicast");
	return -1;
}

int rdma_notify(struct rdma_cm_id *id, enum ibv_event_type event)
{
	(void)id; (void)event;
	rv_unsupported("rdma_notify");
	return -1;
}

int rdma_set_local_ece(struct rdma_cm_id *id, struct ibv_ece *ece)
{
	(void)id; (void)ece;
	rv_unsupported("rdma_set_local_ece");
	return -1;
}

int rdma_get_remote_ece(struct rdma_cm_id *id, struct ibv_ece *ece)
{
	(void)id; (void)ece;
	rv_unsupported("rdma_get_remote_ece");
	return -1;
}

int rdma_reject_ece(struct rdma_cm_id *id, const void *private_data, uint8_t private_data_len)
{
	(void)id; (void)private_data; (void)private_data_len;
	rv_unsupported("rdma_reject_ece");
	return -1;
}

/* --- rsockets: only rpoll, on ordinary fds ------------------------------------------------- */

/* rping polls its rdma_cm channel's fd (an eventfd of ours) and stdin. */
int rpoll(struct pollfd *fds, nfds_t nfds, int timeout)
{
	return poll(fds, nfds, timeout);
}

#define RS_UNSUP(name) do { rv_unsupported(name); return -1; } while (0)

int rsocket(int domain, int type, int protocol)
{
	(void)domain; (void)type; (void)protocol;
	RS_UNSUP("rsocket");
}

int rbind(int socket, const struct sockaddr *addr, socklen_t addrlen)
{
	(void)socket; (void)addr; (void)addrlen;
	RS_UNSUP("rbind");
}

int rlisten(int socket, int backlog)
{
	(void)socket; (void)backlog;
	RS_UNSUP("rlisten");
}

int raccept(int socket, struct sockaddr *addr, socklen_t *addrlen)
{
	(void)socket; (void)addr; (void)addrlen;
	RS_UNSUP("raccept");
}

int rconnect(int socket, const struct sockaddr *addr, socklen_t addrlen)
{
	(void)socket; (void)addr; (void)addrlen;
	RS_UNSUP("rconnect");
}

int rshutdown(int socket, int how)
{
	(void)socket; (void)how;
	RS_UNSUP("rshutdown");
}

int rclose(int socket)
{
	(void)socket;
	RS_UNSUP("rclose");
}

ssize_t rrecv(int socket, void *buf, size_t len, int flags)
{
	(void)socket; (void)buf; (void)len; (void)flags;
	RS_UNSUP("rrecv");
}

ssize_t rrecvfrom(int socket, void *buf, size_t len, int flags, struct sockaddr *src_addr,
		  socklen_t *addrlen)
{
	(void)socket; (void)buf; (void)len; (void)flags; (void)src_addr; (void)addrlen;
	RS_UNSUP("rrecvfrom");
}

ssize_t rrecvmsg(int socket, struct msghdr *msg, int flags)
{
	(void)socket; (void)msg; (void)flags;
	RS_UNSUP("rrecvmsg");
}

ssize_t rsend(int socket, const void *buf, size_t len, int flags)
{
	(void)socket; (void)buf; (void)len; (void)flags;
	RS_UNSUP("rsend");
}

ssize_t rsendto(int socket, const void *buf, size_t len, int flags,
		const struct sockaddr *dest_addr, socklen_t addrlen)
{
	(void)socket; (void)buf; (void)len; (void)flags; (void)dest_addr; (void)addrlen;
	RS_UNSUP("rsendto");
}

ssize_t rsendmsg(int socket, const struct msghdr *msg, int flags)
{
	(void)socket; (void)msg; (void)flags;
	RS_UNSUP("rsendmsg");
}

ssize_t rread(int socket, void *buf, size_t count)
{
	(void)socket; (void)buf; (void)count;
	RS_UNSUP("rread");
}

ssize_t rreadv(int socket, const struct iovec *iov, int iovcnt)
{
	(void)socket; (void)iov; (void)iovcnt;
	RS_UNSUP("rreadv");
}

ssize_t rwrite(int socket, const void *buf, size_t count)
{
	(void)socket; (void)buf; (void)count;
	RS_UNSUP("rwrite");
}

ssize_t rwritev(int socket, const struct iovec *iov, int iovcnt)
{
	(void)socket; (void)iov; (void)iovcnt;
	RS_UNSUP("rwritev");
}

int rselect(int nfds, fd_set *readfds, fd_set *writefds, fd_set *exceptfds,
	    struct timeval *timeout)
{
	(void)nfds; (void)readfds; (void)writefds; (void)exceptfds; (void)timeout;
	RS_UNSUP("rselect");
}

int rgetpeername(int socket, struct sockaddr *addr, socklen_t *addrlen)
{
	(void)socket; (void)addr; (void)addrlen;
	RS_UNSUP("rgetpeername");
}

int rgetsockname(int socket, struct sockaddr *addr, socklen_t *addrlen)
{
	(void)socket; (void)addr; (void)addrlen;
	RS_UNSUP("rgetsockname");
}

int rsetsockopt(int socket, int level, int optname, const void *optval, socklen_t optlen)
{
	(void)socket; (void)level; (void)optname; (void)optval; (void)optlen;
	RS_UNSUP("rsetsockopt");
}

int rgetsockopt(int socket, int level, int optname, void *optval, socklen_t *optlen)
{
	(void)socket; (void)level; (void)optname; (void)optval; (void)optlen;
	RS_UNSUP("rgetsockopt");
}

int rfcntl(int socket, int cmd, ...)
{
	(void)socket; (void)cmd;
	RS_UNSUP("rfcntl");
}

off_t riomap(int socket, void *buf, size_t len, int prot, int flags, off_t offset)
{
	(void)socket; (void)buf; (void)len; (void)prot; (void)flags; (void)offset;
	RS_UNSUP("riomap");
}

int riounmap(int socket, void *buf, size_t len)
{
	(void)socket; (void)buf; (void)len;
	RS_UNSUP("riounmap");
}

size_t riowrite(int socket, const void *buf, size_t count, off_t offset, int flags)
{
	(void)socket; (void)buf; (void)count; (void)offset; (void)flags;
	rv_unsupported("riowrite");
	return 0;   /* no byte written; errno says why */
}
