/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * iWARP connection management: MPA startup on an rnic TCP stream and the
 * TCP callbacks of an endpoint.
 *
 *   active:  TCP connect -> MPA request -> MPA reply -> (delay) -> RTS
 *   passive: TCP accept  -> MPA request -> request() -> MPA reply -> RTS
 *
 * Bytes that follow an MPA frame in the same TCP segment go straight to
 * the FPDU parser (the hand-off siw once got wrong). A peer-to-peer
 * connection (RFC 6581) exchanges the RTR message before RTS.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_mbuf.h>

#include "iwarp/iw_int.h"
#include "rnic/rnic_cm.h"
#include "rnic/rnic_tcp.h"
#include "tcp/tcp_internal.h"

/*
 * A listener's backlog: passive endpoints past the TCP handshake whose MPA
 * request is awaited, or delivered and not yet accepted (RNIC_IW_DEFER).
 * A connection beyond it is reset at TCP accept, before any endpoint is
 * made (mpa_backlog_full). Endpoints live on any worker and may outlive
 * the listener: the count is shared, freed with its last reference.
 */
struct iw_backlog {
	uint32_t limit;
	uint32_t pending;    /* atomic */
	uint32_t refs;       /* atomic: the listener and each counted endpoint */
	/* embryonic endpoints (MPA request not yet whole), oldest first, one
	 * list per worker: only that worker touches it, so no lock; the
	 * endpoint's links are in its startup state */
	struct iw_embryos {
		struct rnic_iw_ep *head, *tail;
	} emb[RNIC_MAX_WORKERS];
};

struct iw_listener {
	const struct rnic_iw_ops *ops;
	struct iw_backlog *backlog;
	void *ctx;
	struct rnic_iw_params p;
	struct rnic_stack *st;
	uint16_t port;
	struct iw_listener *next;
};


/* --- MPA startup -------------------------------------------------------- */

static void backlog_put(struct iw_backlog *b)
{
	if (__atomic_sub_fetch(&b->refs, 1, __ATOMIC_ACQ_REL) == 0)
		free(b);
}

/* Count a new passive connection against @p b. @return false when full. */
static bool backlog_take(struct iw_backlog *b)
{
	if (__atomic_add_fetch(&b->pending, 1, __ATOMIC_RELAXED) > b->limit) {
		__atomic_sub_fetch(&b->pending, 1, __ATOMIC_RELAXED);
		return false;
	}
	__atomic_add_fetch(&b->refs, 1, __ATOMIC_RELAXED);
	return true;
}

/* Append the passive endpoint @p ep, just accepted, to its worker's
 * embryonic list: the oldest is evicted first (tcp_accept). */
static void embryo_add(struct rnic_iw_ep *ep)
{
	struct iw_embryos *e = &ep->su->backlog->emb[ep->w->id];
	ep->su->emb_prev = e->tail;
	ep->su->emb_next = NULL;
	if (e->tail != NULL)
		e->tail->su->emb_next = ep;
	else
		e->head = ep;
	e->tail = ep;
	ep->su->embryonic = true;
}

/* @p ep's MPA request is whole (or it goes): no longer embryonic. */
static void embryo_del(struct rnic_iw_ep *ep)
{
	struct iw_startup *su = ep->su;
	if (su == NULL || !su->embryonic)
		return;
	struct iw_embryos *e = &su->backlog->emb[ep->w->id];
	if (su->emb_prev != NULL)
		su->emb_prev->su->emb_next = su->emb_next;
	else
		e->head = su->emb_next;
	if (su->emb_next != NULL)
		su->emb_next->su->emb_prev = su->emb_prev;
	else
		e->tail = su->emb_prev;
	su->emb_prev = su->emb_next = NULL;
	su->embryonic = false;
}

/*
 * The backlog is full and a new connection arrived on worker @p w: reset
 * the oldest embryonic endpoint of this worker (its MPA request has not
 * fully arrived) to make room, as Linux prunes its SYN queue. A peer that
 * holds connections without sending its request must then out-race every
 * legitimate client's one-RTT request. Endpoints whose request arrived
 * and waits for the application are never evicted. Endpoints of other
 * workers are not touched (they are theirs): with RSS an attacker's
 * connections spread over all workers alike. @return true when one went.
 */
static bool embryo_evict(struct iw_backlog *b, struct rnic_worker *w)
{
	struct rnic_iw_ep *ep = b->emb[w->id].head;
	while (ep != NULL && (ep->state != EP_MPA_REQ || ep->busy != 0))
		ep = ep->su->emb_next;
	if (ep == NULL)
		return false;
	iw_debug("backlog full: evicting an embryonic connection (%u MPA bytes in)",
		 ep->rx_pos);
	iw_count(&iw_stack(ep->st)->mpa_embryonic_evicted);
	/* a reset; freeing the endpoint releases its backlog slot */
	iw_ep_close(ep, -ECONNRESET);
	return true;
}

void iw_backlog_release(struct rnic_iw_ep *ep)
{
	struct iw_backlog *b = ep->su != NULL ? ep->su->backlog : NULL;
	if (b == NULL)
		return;
	embryo_del(ep);
	ep->su->backlog = NULL;
	__atomic_sub_fetch(&b->pending, 1, __ATOMIC_RELAXED);
	backlog_put(b);
}

/* The connections a listener holds at once, for their whole life (TCP
 * counts a passive connection against its listener until it closes): 1024
 * stopped a server at 1024 connected QPs (issue 21). A SYN makes no state
 * (cookies) and MPA startup is bounded by its timeout, so this bounds the
 * QPs, as the worker's TCB table does. */
#define IW_LISTEN_BACKLOG (1u << 20)

/*
 * The MPA startup limit: a peer that accepts TCP but never answers our
 * request, never sends (all of) its request, or never sends the RTR it
 * agreed to would hold the endpoint for ever. The timer runs once per
 * phase (it is not restarted by partial progress); on expiry the
 * connection is reset and the endpoint closes with -ETIMEDOUT.
 */
void iw_mpa_timer_start(struct rnic_iw_ep *ep)
{
	if (ep->su == NULL)   /* never: startup state lives until RTS */
		return;
	uint32_t ms = ep->su->p.mpa_timeout_ms;
	if (ms == 0)
		ms = __atomic_load_n(&iw_stack(ep->st)->mpa_timeout_ms, __ATOMIC_RELAXED);
	if (ms == 0)
		ms = RNIC_IW_MPA_TIMEOUT_MS;
	rnic_timer_arm(&ep->w->timers, &ep->su->mpa_timer, ep->w->now_tsc,
		       (uint64_t)ms * 1000);
}

void iw_mpa_timer_stop(struct rnic_iw_ep *ep)
{
	if (ep->su != NULL)
		rnic_timer_cancel(&ep->w->timers, &ep->su->mpa_timer);
}

void iw_mpa_timer_cb(struct rnic_timer *t, void *arg)
{
	(void)t;
	struct rnic_iw_ep *ep = arg;
	struct iw_stack_state *s = iw_stack(ep->st);
	if (ep->state == EP_CLOSED || ep->state == EP_RTS || ep->state == EP_CLOSING ||
	    ep->state == EP_DECIDING)
		return;
	iw_debug("MPA timeout in state %d (%s)", ep->state, ep->active ? "initiator" : "responder");
	iw_count(ep->active ? &s->mpa_timeouts_active : &s->mpa_timeouts_passive);
	ep->busy++;
	iw_ep_close(ep, -ETIMEDOUT);
	if (--ep->busy == 0 && ep->state == EP_CLOSED)
		iw_ep_free(ep);
}

/* Initiator in peer-to-peer mode: the RTR message the reply chose goes
 * out as our first FPDU (RFC 6581 section 9.2), ahead of any work the ULP
 * posts from established(). It never completes; a Read RTR holds an ORD
 * slot until its zero-length response is back. */
static void queue_rtr(struct rnic_iw_ep *ep)
{
	struct job *j = iw_job_next(ep);
	j->rtr = true;
	if (ep->res.rtr == RNIC_MPA_RTR_SEND) {
		j->kind = JOB_SEND;
		j->rdmap_op = RNIC_RDMAP_OP_SEND;
	} else if (ep->res.rtr == RNIC_MPA_RTR_WRITE) {
		j->kind = JOB_WRITE;
		j->stag = RTR_STAG;
	} else {
		unsigned o = ep->ord_tail++ % ORD_MAX;   /* iw_enter_rts made the table */
		memset(&ep->ord[o], 0, sizeof(ep->ord[o]));
		ep->ord[o].rtr = true;
		ep->ord[o].wc_op = IBV_WC_RDMA_READ;
		j->kind = JOB_READ_REQ;
		j->stag = RTR_STAG;        /* sink: nothing is placed */
		j->src_stag = RTR_STAG;
	}
	ep->job_tail++;
}

void iw_enter_rts(struct rnic_iw_ep *ep)
{
	if (ep->active && ep->res.p2p) {
		/* the ring (and for a Read RTR the ORD table) could not be
		 * allocated: counted in alloc_failures */
		if (!iw_job_room(ep, 1) ||
		    (ep->res.rtr == RNIC_MPA_RTR_READ && iw_ord_table(ep) == NULL)) {
			iw_ep_close(ep, -ENOMEM);
			return;
		}
		queue_rtr(ep);
	}
	ep->state = EP_RTS;
	if (ep->ops && ep->ops->established)
		ep->ops->established(ep, ep->ctx);
	if (ep->state != EP_RTS)
		return;
	iw_pump(ep);
	/* the peer's private data went with established(): startup is over */
	iw_startup_done(ep);
}

void iw_rts_timer_cb(struct rnic_timer *t, void *arg)
{
	(void)t;
	struct rnic_iw_ep *ep = arg;
	if (ep->state == EP_RTS_WAIT)
		iw_enter_rts(ep);
}

/* Responder, reply sent: RDMA mode now, or in peer-to-peer mode once the
 * initiator's RTR is in (the MPA timer guards the wait). */
static void enter_rdma_mode(struct rnic_iw_ep *ep)
{
	if (!ep->res.p2p) {
		iw_enter_rts(ep);
		return;
	}
	ep->state = EP_RTR_WAIT;
	iw_mpa_timer_start(ep);
}

/* Set up the FPDU machinery from the negotiation result. */
static void start_fpdus(struct rnic_iw_ep *ep)
{
	/* each stage (whole FPDUs, at most one MSS) is one TCP segment */
	if (ep->c != NULL)
		rnic_tcp_set_records(ep->c, true);
	rnic_fpdu_tx_init(&ep->ftx, ep->res.crc, ep->res.markers_tx, ep->tx_pos);
	rnic_fpdu_rx_init(&ep->frx, ep->res.crc, ep->res.markers_rx, ep->rx_pos,
			  &iw_frx_ops, ep);
}

/* Send the MPA reply (accept or reject) of the passive side. An accept
 * that finds no mbuf goes from the tx timer, ahead of every FPDU; a reject
 * is sent once, the connection closes behind it. @return 0 or -errno. */
static int send_reply(struct rnic_iw_ep *ep, bool reject, const void *pdata, uint16_t pd_len)
{
	int n = rnic_mpa_build_reply(&ep->res, reject, pdata, pd_len, ep->su->mpa_tx,
				     sizeof(ep->su->mpa_tx));
	if (n <= 0)
		return n < 0 ? n : -EINVAL;
	return iw_mpa_tx_queue(ep, (uint16_t)n);
}

/* Feed received stream bytes to the MPA or FPDU parser. */
static void ep_input_run(struct rnic_iw_ep *ep, const uint8_t *p, size_t len);

void iw_ep_input(struct rnic_iw_ep *ep, const uint8_t *p, size_t len)
{
	ep->busy++;
	ep_input_run(ep, p, len);
	if (--ep->busy == 0 && ep->state == EP_CLOSED)
		iw_ep_free(ep);
}

/* Initiator: the MPA reply is in. RDMA mode after the RTS delay; a reply
 * we cannot live with closes, or is answered with a Terminate. @return
 * true when the bytes behind it are FPDUs to parse. */
static bool mpa_reply_in(struct rnic_iw_ep *ep)
{
	struct iw_startup *su = ep->su;
	int rc = rnic_mpa_connected(&su->mp, &su->mrx, &ep->res);
	iw_debug("MPA reply: rc %d rev %u crc %d ird %u ord %u p2p %d rtr %u err %u",
		 rc, ep->res.rev, ep->res.crc, ep->res.ird, ep->res.ord,
		 ep->res.p2p, ep->res.rtr, ep->res.err);
	if (rc == -EPROTO && (ep->res.err == RNIC_TERM_MPA_NO_MATCHING_RTR ||
			      ep->res.err == RNIC_TERM_MPA_INSUFFICIENT_IRD)) {
		/* RFC 6581 s9: a valid reply we cannot live with is answered
		 * in RDMA mode, with a Terminate */
		/* RFC 5044 s7.1.2: CRC when either end set C; our request's
		 * C counts as much as the reply's (the Terminate went out
		 * without CRC after our C=1 request and a C=0 reply) */
		ep->res.crc = su->mp.crc || (su->mrx.hdr.flags & RNIC_MPA_FLAG_C) != 0;
		ep->res.markers_tx = (su->mrx.hdr.flags & RNIC_MPA_FLAG_M) != 0;
		ep->res.markers_rx = su->mp.markers_rx;
		start_fpdus(ep);
		ep->state = EP_RTS_WAIT;
		iw_terminate(ep, ep->res.err, NULL, 0);
		return false;
	}
	if (rc < 0) {
		iw_ep_close(ep, rc == -ECONNREFUSED ? -ECONNREFUSED : -EPROTO);
		return false;
	}
	start_fpdus(ep);
	ep->state = EP_RTS_WAIT;
	/* siw 6.1 attaches its socket to the QP only after sending the
	 * reply: give it time before our first FPDU */
	rnic_timer_arm(&ep->w->timers, &su->rts_timer, ep->w->now_tsc, su->p.rts_delay_us);
	return true;
}

/* Responder: the MPA request is in, @p left bytes behind it. The
 * application accepts, rejects or decides later (RNIC_IW_DEFER). @return
 * true when the bytes behind it are FPDUs to parse. */
static bool mpa_request_in(struct rnic_iw_ep *ep, size_t left)
{
	int arc = rnic_mpa_accept(&ep->su->mp, &ep->su->mrx, &ep->res);
	iw_debug("MPA request: rc %d rev %u crc %d ird %u ord %u p2p %d rtr %u err %u",
		 arc, ep->res.rev, ep->res.crc, ep->res.ird, ep->res.ord,
		 ep->res.p2p, ep->res.rtr, ep->res.err);
	void *ctx = NULL;
	if (arc == 0 && ep->ops && ep->ops->request)
		ctx = ep->ops->request(ep, ep->su->listen_ctx, ep->res.pdata, ep->res.pd_len);
	if (ctx == RNIC_IW_DEFER && arc == 0) {
		/* the application decides later; FPDUs cannot come before
		 * our reply, so nothing more should arrive */
		ep->state = EP_DECIDING;
		rnic_tcp_hold(ep->c, true);
		if (left > 0)
			iw_ep_close(ep, -EPROTO);
		return false;
	}
	if (arc != 0)
		iw_count(&iw_stack(ep->st)->mpa_req_unacceptable);
	else if (ctx == NULL)
		iw_count(&iw_stack(ep->st)->mpa_req_rejected);
	int src = send_reply(ep, ctx == NULL, NULL, 0);
	if (ctx == NULL || src != 0) {
		iw_ep_close(ep, ctx == NULL ? -ECONNREFUSED : src);
		return false;
	}
	ep->ctx = ctx;
	iw_backlog_release(ep);   /* accepted */
	start_fpdus(ep);
	enter_rdma_mode(ep);
	return true;
}

/* MPA startup bytes: parse the request or reply frame, act on it once
 * complete. @return true to go on with the bytes left in *p and *len. */
static bool mpa_input(struct rnic_iw_ep *ep, const uint8_t **p, size_t *len)
{
	size_t used = 0;
	int rc = rnic_mpa_rx_input(&ep->su->mrx, *p, *len, &used);
	ep->rx_pos += (uint32_t)used;
	*p += used;
	*len -= used;
	if (rc == -EAGAIN)
		return false;
	if (rc < 0) {
		iw_debug("bad MPA frame: rc %d err %d", rc, ep->su->mrx.err);
		if (ep->state == EP_MPA_REQ)   /* key, revision or PD_Length */
			iw_count(&iw_stack(ep->st)->mpa_req_bad);
		iw_ep_close(ep, -EPROTO);
		return false;
	}
	iw_mpa_timer_stop(ep);   /* the frame is complete */
	embryo_del(ep);          /* (a responder's request) */
	if (ep->state == EP_MPA_REP)
		return mpa_reply_in(ep);
	return mpa_request_in(ep, *len);
}

static void ep_input_run(struct rnic_iw_ep *ep, const uint8_t *p, size_t len)
{
	bool more = true;
	while (more && len > 0 && ep->state != EP_CLOSED) {
		switch (ep->state) {
		case EP_MPA_REQ:
		case EP_MPA_REP:
			more = mpa_input(ep, &p, &len);
			break;
		case EP_RTS:
		case EP_RTS_WAIT:
		case EP_RTR_WAIT:
		case EP_CLOSING:
			more = iw_rx_input(ep, &p, &len);
			break;
		case EP_DECIDING:   /* bytes before our reply */
			iw_ep_close(ep, -EPROTO);
			return;
		default:
			return;
		}
	}
}

int rnic_iw_accept(struct rnic_iw_ep *ep, void *ctx, const void *pdata,
		   uint16_t pd_len, uint16_t ird, uint16_t ord)
{
	if (ep->state != EP_DECIDING || ctx == NULL || ctx == RNIC_IW_DEFER ||
	    pd_len > RNIC_MPA_PD_MAX - 8)
		return -EINVAL;
	/* negotiate again with the accepting side's IRD/ORD */
	struct iw_startup *su = ep->su;
	su->mp.ird = ird ? ird : su->mp.ird;
	su->mp.ord = ord ? ord : su->mp.ord;
	if (rnic_mpa_accept(&su->mp, &su->mrx, &ep->res) != 0)
		return -EPROTO;
	ep->ctx = ctx;
	int rc = send_reply(ep, false, pdata, pd_len);
	if (rc != 0)
		return rc;
	iw_backlog_release(ep);   /* accepted */
	start_fpdus(ep);
	enter_rdma_mode(ep);
	if (ep->state != EP_CLOSED)
		rnic_tcp_hold(ep->c, false);   /* bytes that came meanwhile, in order */
	return 0;
}

int rnic_iw_reject(struct rnic_iw_ep *ep, const void *pdata, uint16_t pd_len)
{
	if (ep->state != EP_DECIDING || pd_len > RNIC_MPA_PD_MAX - 8)
		return -EINVAL;
	iw_count(&iw_stack(ep->st)->mpa_req_rejected);
	send_reply(ep, true, pdata, pd_len);
	/* RFC 5044 startup: the reject goes out, then the connection
	 * closes. A FIN behind it, not a reset: a reset would discard the
	 * reject from TCP's retransmission queue, and a peer whose copy was
	 * lost would see a reset instead of the reject. */
	iw_ep_close_how(ep, -ECONNREFUSED, true);
	return 0;
}

static void tcp_recv(struct rnic_tcp_conn *c, void *ctx, struct rte_mbuf *m)
{
	(void)c;
	struct rnic_iw_ep *ep = ctx;
	ep->busy++;
	if (ep->mig_wait && ep->mig->park != NULL) {
		/* TCP holds the stream while parked; should bytes come anyway,
		 * they go behind the parked ones, in order */
		if (rte_pktmbuf_chain(ep->mig->park, m) != 0) {
			rte_pktmbuf_free(m);
			iw_ep_close(ep, -ENOBUFS);
		}
	} else if (ep->mig_wait) {
		rte_pktmbuf_free(m);   /* closed meanwhile */
	} else
		iw_ep_feed(ep, m, m, 0);
	if (--ep->busy == 0 && ep->state == EP_CLOSED)
		iw_ep_free(ep);
}

static void tcp_sent(struct rnic_tcp_conn *c, void *ctx)
{
	(void)c;
	iw_pump(ctx);
}

static void tcp_eof(struct rnic_tcp_conn *c, void *ctx)
{
	struct rnic_iw_ep *ep = ctx;
	if (ep->state != EP_CLOSING)
		ep->state = EP_CLOSING;
	rnic_tcp_close(c);
}

static void tcp_closed(struct rnic_tcp_conn *c, void *ctx, int err)
{
	(void)c;
	struct rnic_iw_ep *ep = ctx;
	ep->c = NULL;
	iw_ep_close(ep, err);
}

/* The TCP connection is up (or a stream is being switched): send the MPA
 * request; one that finds no mbuf goes from the tx timer. */
static void tcp_connected(struct rnic_tcp_conn *c, void *ctx)
{
	(void)c;
	struct rnic_iw_ep *ep = ctx;
	struct iw_startup *su = ep->su;
	su->mp.pdata = su->pdata;
	su->mp.pd_len = su->pd_len;
	int n = rnic_mpa_build_request(&su->mp, su->mpa_tx, sizeof(su->mpa_tx));
	if (n <= 0) {
		iw_ep_close(ep, -EINVAL);
		return;
	}
	ep->tcp_up = true;
	rnic_mpa_rx_init(&su->mrx, true);
	ep->state = EP_MPA_REP;
	iw_mpa_timer_start(ep);
	int rc = iw_mpa_tx_queue(ep, (uint16_t)n);
	if (rc != 0)
		iw_ep_close(ep, rc);
}

/* The peer of @p c, in both forms the endpoint keeps. */
static void iw_ep_set_peer(struct rnic_iw_ep *ep, const struct rnic_tcp_conn *c)
{
	rnic_tcp_endpoints(c, NULL, NULL, &ep->peer, &ep->peer_port);
}

static void *tcp_accept(struct rnic_tcp_conn *c, void *lctx)
{
	struct iw_listener *l = lctx;
	struct rnic_worker *w = rnic_tcp_worker(c);
	if (!backlog_take(l->backlog) &&
	    (!embryo_evict(l->backlog, w) || !backlog_take(l->backlog))) {
		iw_count(&iw_stack(l->st)->mpa_backlog_full);
		return NULL;   /* TCP resets it */
	}
	struct rnic_iw_ep *ep = iw_ep_new(w, l->ops, &l->p);
	if (ep == NULL) {
		__atomic_sub_fetch(&l->backlog->pending, 1, __ATOMIC_RELAXED);
		backlog_put(l->backlog);
		return NULL;
	}
	ep->su->backlog = l->backlog;
	embryo_add(ep);
	ep->c = c;
	ep->tcp_up = true;
	ep->su->listen_ctx = l->ctx;
	iw_ep_set_peer(ep, c);
	rnic_mpa_rx_init(&ep->su->mrx, false);
	ep->state = EP_MPA_REQ;
	iw_mpa_timer_start(ep);
	return ep;
}

static const struct rnic_tcp_ops ep_tcp_ops = {
	.accept = tcp_accept, .connected = tcp_connected, .recv = tcp_recv,
	.sent = tcp_sent, .eof = tcp_eof, .closed = tcp_closed,
};

int rnic_iw_listen(struct rnic_stack *st, uint16_t port, const struct rnic_iw_ops *ops,
		   void *ctx, const struct rnic_iw_params *p)
{
	struct iw_listener *l = calloc(1, sizeof(*l));
	if (l == NULL)
		return -ENOMEM;
	l->ops = ops;
	l->ctx = ctx;
	if (p)
		l->p = *p;
	else
		rnic_iw_params_default(&l->p);
	l->st = st;
	l->port = port;
	l->backlog = calloc(1, sizeof(*l->backlog));
	if (l->backlog == NULL) {
		free(l);
		return -ENOMEM;
	}
	l->backlog->limit = l->p.backlog ? RTE_MIN(l->p.backlog, (uint32_t)RNIC_CM_BACKLOG_MAX)
					 : RNIC_CM_BACKLOG_DEFAULT;
	l->backlog->refs = 1;
	int rc = rnic_tcp_listen(st, port, &ep_tcp_ops, l, IW_LISTEN_BACKLOG);
	if (rc != 0) {
		backlog_put(l->backlog);
		free(l);
		return rc;
	}
	/* by port, so that rnic_iw_unlisten() can free them */
	struct iw_stack_state *s = iw_stack(st);
	pthread_mutex_lock(&s->listeners_lock);
	l->next = s->listeners;
	s->listeners = l;
	pthread_mutex_unlock(&s->listeners_lock);
	return 0;
}

void iw_listeners_free(struct iw_stack_state *s)
{
	for (struct iw_listener *l = s->listeners, *n; l != NULL; l = n) {
		n = l->next;
		backlog_put(l->backlog);
		free(l);   /* its TCP listener goes with lib/tcp's teardown, later */
	}
	s->listeners = NULL;
}

int rnic_iw_unlisten(struct rnic_stack *st, uint16_t port)
{
	struct iw_stack_state *s = iw_stack(st);
	struct iw_listener **pp, *l = NULL;
	pthread_mutex_lock(&s->listeners_lock);
	for (pp = &s->listeners; *pp; pp = &(*pp)->next)
		if ((*pp)->port == port) {
			l = *pp;
			*pp = l->next;
			break;
		}
	pthread_mutex_unlock(&s->listeners_lock);
	if (l == NULL)
		return -ENOENT;
	int rc = rnic_tcp_unlisten(st, port);
	/* endpoints accepted earlier copied what they need from the listener,
	 * and hold the backlog count */
	backlog_put(l->backlog);
	free(l);
	return rc;
}

int rnic_iw_connect(struct rnic_worker *w, uint32_t dst_ip, uint16_t port,
		    const struct rnic_iw_ops *ops, void *ctx,
		    const struct rnic_iw_params *p, const void *pdata,
		    uint16_t pd_len, struct rnic_iw_ep **out)
{
	struct rnic_addr dst = rnic_addr_v4(dst_ip);
	return rnic_iw_connect_addr(w, &dst, port, ops, ctx, p, pdata, pd_len, out);
}

int rnic_iw_connect_addr(struct rnic_worker *w, const struct rnic_addr *dst, uint16_t port,
			 const struct rnic_iw_ops *ops, void *ctx,
			 const struct rnic_iw_params *p, const void *pdata,
			 uint16_t pd_len, struct rnic_iw_ep **out)
{
	if (dst == NULL || pd_len > RNIC_MPA_PD_MAX - 8 || (pd_len && pdata == NULL))
		return -EINVAL;
	struct rnic_iw_ep *ep = iw_ep_new(w, ops, p);
	if (ep == NULL)
		return -ENOMEM;
	ep->ctx = ctx;
	ep->active = true;
	ep->peer = *dst;
	ep->peer_port = port;
	if (pd_len)   /* memcpy from NULL is undefined even for 0 bytes */
		memcpy(ep->su->pdata, pdata, pd_len);
	ep->su->pd_len = pd_len;
	ep->state = EP_CONNECTING;
	int rc = rnic_tcp_connect_addr(w, dst, port, &ep_tcp_ops, ep, &ep->c);
	if (rc != 0) {
		iw_ep_free(ep);
		return rc;
	}
	*out = ep;
	return 0;
}

int rnic_iw_attach_stream(struct rnic_tcp_conn *c, bool active,
			  const struct rnic_iw_ops *ops, void *ctx,
			  const struct rnic_iw_params *p, const void *pdata,
			  uint16_t pd_len, const void *early, size_t early_len,
			  struct rnic_iw_ep **out)
{
	if (c == NULL || pd_len > RNIC_MPA_PD_MAX - 8 || (pd_len && pdata == NULL) ||
	    (early_len && early == NULL) || (active && early_len))
		return -EINVAL;
	struct rnic_iw_ep *ep = iw_ep_new(rnic_tcp_worker(c), ops, p);
	if (ep == NULL)
		return -ENOMEM;
	/* hold first: whatever arrives from now on queues, in order, for the
	 * MPA parser; our callbacks replace the streaming application's */
	rnic_tcp_hold(c, true);
	rnic_tcp_set_ops(c, &ep_tcp_ops, ep);
	ep->c = c;
	ep->tcp_up = true;
	iw_ep_set_peer(ep, c);
	*out = ep;
	if (active) {
		ep->ctx = ctx;
		ep->active = true;
		if (pd_len)
			memcpy(ep->su->pdata, pdata, pd_len);
		ep->su->pd_len = pd_len;
		tcp_connected(c, ep);   /* the MPA request goes out */
	} else {
		ep->su->listen_ctx = ctx;
		rnic_mpa_rx_init(&ep->su->mrx, false);
		ep->state = EP_MPA_REQ;
		iw_mpa_timer_start(ep);
		/* bytes the application read past its last streaming message */
		if (early_len)
			iw_ep_input(ep, early, early_len);
	}
	/* the queued bytes now go to the MPA parser, then new ones */
	if (ep->state != EP_CLOSED && ep->state != EP_DECIDING)
		rnic_tcp_hold(c, false);
	return 0;
}

