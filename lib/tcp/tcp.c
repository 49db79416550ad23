/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lib/tcp: connection objects, per-worker TCB tables, timers, the stream
 * API and the hooks into the stack.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_hash.h>
#include <rte_hash_crc.h>
#include <rte_malloc.h>
#include <rte_random.h>
#include <rte_tcp.h>

#include "common/objalloc.h"
#include "net/net.h"
#include "port/port.h"
#include "tcp/tcp_internal.h"

#define TCBS_PER_WORKER (1u << 17)   /* 100,000 connections a worker, and room */
#define EPHEMERAL_LO 32768
#define EPHEMERAL_HI 60999
#define SYN_RETRIES 6
#define RTO_RETRIES 15
#define KEEPALIVE_PROBES 9
#define KEEPALIVE_INTVL_S 10
#define QUICKACKS 16
#define ORPHAN_FIN_WAIT_2_S 60   /* as Linux's tcp_fin_timeout */
/* The default user timeout (docs/tcp.md "User timeout"): long enough for a
 * failover, a migration or a descheduled peer, short enough that a QP on a
 * dead peer fails in seconds rather than after minutes of retries. */
#define USER_TIMEOUT_MS 30000

void rnic_tcp_params_default(struct rnic_tcp_params *p)
{
	memset(p, 0, sizeof(*p));
	p->cc = RNIC_TCP_CC_NEWRENO;
	p->rcvbuf = 4u << 20;
	p->sndbuf = 2u << 20;
	p->rto_min_us = 5000;
	p->rto_init_us = 200000;
	p->delack_us = 500;
	p->time_wait_ms = 2000;
	p->tw_reuse_ms = 1000;
	p->keepalive_s = 0;
	p->user_timeout_ms = USER_TIMEOUT_MS;
	p->nagle = false;
	p->sack = true;
	p->timestamps = true;
	p->wscale = 7;
}

int rnic_tcp_config(struct rnic_stack *st, const struct rnic_tcp_params *p)
{
	if (p->wscale > TCP_MAX_WSCALE || p->rcvbuf < 4096 ||
	    p->rcvbuf > (65535u << p->wscale) || p->sndbuf < 4096 ||
	    p->rto_min_us == 0 || (unsigned)p->cc > RNIC_TCP_CC_CUBIC)
		return -EINVAL;
	tcp_s(st)->params = *p;
	return 0;
}

/* --- connections --------------------------------------------------------- */

/* RFC 7323 section 7.1: a per-connection timestamp offset, derived from the
 * 4-tuple so that the stateless SYN-ACK and the TCB born later agree. */
uint32_t tcp_ts_offset(const struct tcp_cookie_keys *k, const struct tcp_key *key)
{
	return (uint32_t)(rnic_siphash24(k->isn_key, key, sizeof(*key)) >> 32);
}

/*
 * Whether a lazy allocation of @p c (the out-of-order queue, the Eifel
 * undo state) is to fail as if the heap were out: a test asked for it
 * with rnic_tcp_fail_allocs().
 */
bool tcp_alloc_fails(const struct rnic_tcp_conn *c)
{
	return rnic_obj_fail_take(&tcp_s(c->w->st)->fail_allocs) > 0;
}

void rnic_tcp_fail_allocs(struct rnic_stack *st, uint32_t n)
{
	struct tcp_stack *ts = tcp_s(st);
	if (ts != NULL)
		__atomic_store_n(&ts->fail_allocs, n, __ATOMIC_RELAXED);
}

/*
 * The Eifel undo state of @p c, allocated by the first RTO that arms it
 * and kept (a connection that had one timeout is likely to have more).
 * NULL when there is no memory: that RTO cannot be undone, and
 * undo_nomem counts it; the connection goes on as without timestamps.
 */
struct tcp_undo *tcp_undo_state(struct rnic_tcp_conn *c)
{
	if (c->undo == NULL) {
		c->undo = tcp_alloc_fails(c) ? NULL : rnic_obj_alloc(sizeof(*c->undo));
		if (c->undo == NULL)
			tcp_w(c->w)->st.undo_nomem++;
	}
	return c->undo;
}

static void rtx_timer_cb(struct rnic_timer *t, void *arg);
static void dack_timer_cb(struct rnic_timer *t, void *arg);
static void misc_timer_cb(struct rnic_timer *t, void *arg);

static uint64_t ms_to_tsc(uint32_t ms)
{
	return (uint64_t)ms * (rte_get_tsc_hz() / 1000);
}

/*
 * A blank TCB with its unit ring of TCP_UNITS_MIN inside (units0): from
 * the worker's cache when it has one (only the part before ooo[] is
 * cleared), else from the C heap (common/objalloc.h: no rte_malloc
 * element header, 128 B a TCB, issue 21). NULL when the heap is out.
 */
static struct rnic_tcp_conn *tcb_get(struct tcp_worker *tw)
{
	struct rnic_tcp_conn *c = tw->tcb_cache;
	if (c != NULL) {
		tw->tcb_cache = c->cache_next;
		tw->st.tcbs_cached--;
		tw->st.tcb_reuses++;
		memset(c, 0, offsetof(struct rnic_tcp_conn, ooo));
	} else {
		c = rnic_obj_zalloc(sizeof(*c));
		if (c == NULL)
			return NULL;
	}
	c->units = c->units0;
	c->units_cap = TCP_UNITS_MIN;   /* grows with the send queue */
	return c;
}

/*
 * Give a dead TCB (nothing queued any more) back: a grown unit ring goes
 * to the heap, the TCB into the cache while it has room, else to the
 * heap. The cached TCB is poisoned up to ooo[] (the harness of the unit
 * tests poisons freed memory too): a use after free reads nonsense, not a
 * live state.
 */
static void tcb_put(struct tcp_worker *tw, struct rnic_tcp_conn *c)
{
	if (c->units != c->units0)
		rte_free(c->units);
	c->units = NULL;
	if (tw->st.tcbs_cached < TCP_TCB_CACHE) {
		memset(c, 0xa5, offsetof(struct rnic_tcp_conn, ooo));
		c->cache_next = tw->tcb_cache;
		tw->tcb_cache = c;
		tw->st.tcbs_cached++;
		return;
	}
	rte_free(c->ooo);
	rnic_obj_free(c->undo);
	rnic_obj_free(c);
}

/* Free every cached TCB (worker teardown); their rings are inside. */
static void tcb_cache_drain(struct tcp_worker *tw)
{
	while (tw->tcb_cache != NULL) {
		struct rnic_tcp_conn *c = tw->tcb_cache;
		tw->tcb_cache = c->cache_next;
		tw->st.tcbs_cached--;
		rte_free(c->ooo);
		rnic_obj_free(c->undo);
		rnic_obj_free(c);
	}
}

struct rnic_tcp_conn *tcp_conn_new(struct rnic_worker *w, struct rnic_port *p,
				   const struct tcp_key *k)
{
	struct tcp_stack *ts = tcp_s(w->st);
	struct rnic_tcp_conn *c = tcb_get(tcp_w(w));
	if (c == NULL)
		return NULL;
	c->key = *k;
	c->w = w;
	c->port = p;
	c->state = TCP_CLOSED;
	c->cc_ops = ts->params.cc == RNIC_TCP_CC_CUBIC ? &tcp_cc_cubic : &tcp_cc_newreno;
	c->rcvbuf = ts->params.rcvbuf;
	c->sndbuf = ts->params.sndbuf;
	c->rcv_wscale = ts->params.wscale;
	c->snd_wscale = 0;
	c->mss = tcp_mss_for(p, k);
	c->quickacks = QUICKACKS;
	c->ts_offset = tcp_ts_offset(&ts->keys, k);
	tcp_rtt_init(&c->rtt, ts->params.rto_init_us);
	c->cc_ops->init(&c->cc, c->mss);
	rnic_timer_init(&c->rtx_timer, rtx_timer_cb, c);
	rnic_timer_init(&c->dack_timer, dack_timer_cb, c);
	rnic_timer_init(&c->misc_timer, misc_timer_cb, c);
	c->last_rx_tsc = w->now_tsc;
	c->user_timeout_tsc = ms_to_tsc(ts->params.user_timeout_ms);
	return c;
}

int tcp_conn_insert(struct rnic_tcp_conn *c)
{
	int rc = rte_hash_add_key_data(tcp_w(c->w)->tcbs, &c->key, c);
	if (rc == 0) {
		c->in_table = true;
		tcp_w(c->w)->st.tcbs++;
	}
	return rc;
}

struct rnic_tcp_conn *tcp_lookup(struct rnic_worker *w, const struct tcp_key *k)
{
	void *data;
	if (rte_hash_lookup_data(tcp_w(w)->tcbs, k, &data) < 0)
		return NULL;
	return data;
}

void tcp_set_state(struct rnic_tcp_conn *c, enum tcp_state s)
{
	c->state = s;
}

/* The connection stops counting against its listener's backlog (once). */
static void listener_release(struct rnic_tcp_conn *c)
{
	if (c->listener != NULL) {
		__atomic_fetch_sub(&c->listener->count, 1, __ATOMIC_RELEASE);
		c->listener = NULL;
	}
}

/*
 * Free a TCB. While lib/tcp code up the stack still uses it (c->busy: an
 * application callback closed or aborted the connection), only unhook it
 * (timers, table) and leave the free to the outermost tcp_conn_put().
 */
static void tcp_conn_free(struct rnic_tcp_conn *c)
{
	struct rnic_timer_wheel *tw = &c->w->timers;
	rnic_timer_cancel(tw, &c->rtx_timer);
	rnic_timer_cancel(tw, &c->dack_timer);
	rnic_timer_cancel(tw, &c->misc_timer);
	if (c->in_table) {
		rte_hash_del_key(tcp_w(c->w)->tcbs, &c->key);
		c->in_table = false;
		tcp_w(c->w)->st.tcbs--;
	}
	if (c->busy) {
		c->free_pending = true;
		return;
	}
	for (uint32_t i = c->u_head; i != c->u_tail; i++)
		rte_pktmbuf_free(c->units[i & (c->units_cap - 1)].m);
	tcp_ooo_purge(c);
	rte_pktmbuf_free(c->held);
	listener_release(c);
	tcb_put(tcp_w(c->w), c);
}

/* End of a stretch of code that may call the application. */
void tcp_conn_put(struct rnic_tcp_conn *c)
{
	if (--c->busy == 0 && c->free_pending)
		tcp_conn_free(c);
}

/* The connection is finished for the application; the TCB goes now, or
 * after TIME_WAIT. */
void tcp_conn_done(struct rnic_tcp_conn *c, int err)
{
	if (!c->notified_closed) {
		c->notified_closed = true;
		if (c->ops && c->ops->closed)
			c->ops->closed(c, c->ctx, err);
		c->ops = NULL;
	}
	/* the listener no longer holds it (a TIME_WAIT is nobody's backlog) */
	listener_release(c);
	if (err == 0 && c->state == TCP_TIME_WAIT)
		return;   /* the misc timer frees it */
	if (c->state == TCP_ESTABLISHED || c->state == TCP_CLOSE_WAIT ||
	    c->state == TCP_FIN_WAIT_1 || c->state == TCP_FIN_WAIT_2)
		tcp_w(c->w)->st.established--;
	tcp_set_state(c, TCP_CLOSED);
	tcp_conn_free(c);
}

void tcp_established(struct rnic_tcp_conn *c)
{
	tcp_w(c->w)->st.established++;
	c->wait_tsc = 0;   /* the handshake was answered */
	c->write_seq = c->iss + 1;
	c->cc_ops->init(&c->cc, c->mss);
	if (c->listener) {
		void *ctx = c->ops && c->ops->accept ?
			c->ops->accept(c, c->listener->ctx) : NULL;
		if (ctx == NULL) {
			/* refused by the application */
			tcp_send_ctl(c->w, c->port, &c->key, c->snd_nxt, 0,
				     RTE_TCP_RST_FLAG, NULL, 0);
			c->ops = NULL;
			c->notified_closed = true;
			tcp_conn_done(c, -ECONNREFUSED);
			return;
		}
		c->ctx = ctx;
	} else if (c->ops && c->ops->connected) {
		c->ops->connected(c, c->ctx);
	}
	struct tcp_stack *ts = tcp_s(c->w->st);
	if (ts->params.keepalive_s)
		rnic_timer_arm(&c->w->timers, &c->misc_timer, c->w->now_tsc,
			       (uint64_t)ts->params.keepalive_s * 1000000);
}

/* In-order payload to the consumer, or to the hold queue. */
void tcp_deliver(struct rnic_tcp_conn *c, struct rte_mbuf *m, uint32_t len)
{
	if (len == 0) {
		rte_pktmbuf_free(m);
		return;
	}
	if (c->ops == NULL && !c->hold) {
		/* orphaned (the consumer let go, nobody will read): drop */
		rte_pktmbuf_free(m);
		return;
	}
	if (c->hold || c->ops == NULL || c->ops->recv == NULL) {
		/* the input path checked tcp_hold_full() before taking the
		 * bytes, so the chain stays bounded */
		struct rte_mbuf *t = c->held_tail;
		if (c->held == NULL) {
			c->held = m;
		} else if (m->next == NULL && RTE_MBUF_DIRECT(t) &&
			   rte_mbuf_refcnt_read(t) == 1 && m->data_len == len &&
			   rte_pktmbuf_tailroom(t) >= len) {
			/* small bytes are copied behind the last ones (as
			 * the out-of-order queue does): a stream of tiny
			 * segments fills a few buffers, not one each */
			memcpy(rte_pktmbuf_mtod_offset(t, uint8_t *, t->data_len),
			       rte_pktmbuf_mtod(m, const void *), len);
			t->data_len = (uint16_t)(t->data_len + len);
			c->held->pkt_len += len;
			c->held_bytes += len;
			rte_pktmbuf_free(m);
			return;
		} else {
			c->held_tail->next = m;
			c->held->nb_segs = (uint16_t)(c->held->nb_segs + m->nb_segs);
			c->held->pkt_len += m->pkt_len;
		}
		c->held_tail = rte_pktmbuf_lastseg(m);
		c->held_bytes += len;
		return;
	}
	c->ops->recv(c, c->ctx, m);
}

/* --- timers -------------------------------------------------------------- */

static void dack_timer_cb(struct rnic_timer *t, void *arg)
{
	(void)t;
	struct rnic_tcp_conn *c = arg;
	if (c->unacked_segs)
		tcp_send_ack(c);
}

/*
 * Give up on a peer that stopped answering (the user timeout, keepalive,
 * a retry limit): a synchronized connection is reset, in case only our
 * direction of the path failed, and the consumer hears -ETIMEDOUT, as for
 * a RST but with the cause. @p why is the counter of the cause.
 */
static void tcp_timeout_abort(struct rnic_tcp_conn *c, uint64_t *why)
{
	(*why)++;
	if (c->state != TCP_SYN_SENT) {
		tcp_send_ctl(c->w, c->port, &c->key, c->snd_nxt, 0, RTE_TCP_RST_FLAG, NULL, 0);
		tcp_w(c->w)->st.resets_out++;
	}
	tcp_conn_done(c, -ETIMEDOUT);
}

static void rtx_timer_cb(struct rnic_timer *t, void *arg)
{
	struct rnic_tcp_conn *c = arg;
	struct tcp_worker *tw = tcp_w(c->w);
	uint64_t due = t->expire_tick * c->w->timers.tsc_per_tick;

	/* a timer that runs long after its deadline: this worker was not
	 * running (a descheduled thread, a paused VM). The peer could not
	 * answer what we did not send, and its answers may wait in our own
	 * queue: the stall does not count against the user timeout */
	if (c->wait_tsc && c->w->now_tsc > due && tcp_stalled(c->w->now_tsc - due))
		c->wait_tsc += c->w->now_tsc - due;
	if (tcp_user_timed_out(c)) {
		tcp_timeout_abort(c, &tw->st.user_timeouts);
		return;
	}
	if (c->state == TCP_SYN_SENT || c->state == TCP_SYN_RECEIVED) {
		if (++c->syn_retries > SYN_RETRIES) {
			tcp_timeout_abort(c, &tw->st.retry_timeouts);
			return;
		}
		tcp_rtt_backoff(&c->rtt);
		tcp_send_syn(c, c->state == TCP_SYN_RECEIVED);
		tcp_arm_rto(c);
		return;
	}
	if (c->snd_una == c->snd_max) {
		if (c->u_next != c->u_tail)
			tcp_persist(c);
		else
			c->wait_tsc = 0;   /* nothing is owed any more */
		return;
	}
	if (c->tlp_armed) {
		tcp_tail_probe(c);
		return;
	}
	if (++c->rto_retries > RTO_RETRIES) {
		tcp_timeout_abort(c, &tw->st.retry_timeouts);
		return;
	}
	tw->st.rtos++;
	c->rtt_fence_tsc = c->w->now_tsc;
	if (c->ts_ok && c->rto_retries == 1 && tcp_undo_state(c) != NULL) {
		/* the first ACK will tell whether the original arrived */
		c->undo_armed = true;
		c->undo->tsval = tcp_ts_now(c);
		c->undo->cc = c->cc;
	}
	c->cc_ops->on_rto(&c->cc, c->mss, c->snd_max - c->snd_una);
	c->in_recovery = false;
	c->recover = c->snd_max;
	c->dupacks = 0;
	/*
	 * The first unit SACKed but not acknowledged: the receiver reneged,
	 * or our scoreboard is wrong (a SACK block it meant otherwise). RFC
	 * 2018 section 8: after a timeout the SACK information is ignored.
	 * Kept, it would make this timeout resend nothing (it resends the
	 * first unit, which is "SACKed"), and every later one too, until the
	 * user timeout ended a connection whose peer had everything but one
	 * lost ACK (seen in the lossy iWARP soak).
	 */
	struct tcp_unit *head = &c->units[c->u_head & (c->units_cap - 1)];
	bool reneged = c->u_head != c->u_next && head->sacked;
	if (reneged) {
		tw->st.sack_reneging++;
		c->sacked_bytes = 0;
		c->high_sacked = c->snd_una;
	}
	/* everything outstanding and not SACKed is presumed lost */
	for (uint32_t i = c->u_head; i != c->u_next; i++) {
		struct tcp_unit *u = &c->units[i & (c->units_cap - 1)];
		if (reneged)
			u->sacked = false;
		if (!u->sacked && !u->lost) {
			u->lost = true;
			c->lost_bytes += u->len;
		}
	}
	tcp_rtt_backoff(&c->rtt);
	if (c->u_head == c->u_next && c->fin_sent) {   /* only the FIN is out */
		tcp_send_bare(c, c->fin_seq, RTE_TCP_FIN_FLAG | RTE_TCP_ACK_FLAG);
	}
	/* the window of one segment: send the first lost unit now */
	struct tcp_unit *u = &c->units[c->u_head & (c->units_cap - 1)];
	if (c->u_head != c->u_next && u->lost) {
		u->lost = false;
		c->lost_bytes -= u->len;
		tcp_retransmit_unit(c, u);
	}
	tcp_arm_rto(c);
}

/* An orphan (no consumer: the application closed and let go) waiting in
 * FIN_WAIT_2 for a FIN the peer may never send gets a deadline. */
void tcp_orphan_check(struct rnic_tcp_conn *c)
{
	if (c->ops == NULL && !c->hold &&
	    (c->state == TCP_FIN_WAIT_1 || c->state == TCP_FIN_WAIT_2))
		rnic_timer_arm(&c->w->timers, &c->misc_timer, c->w->now_tsc,
			       ORPHAN_FIN_WAIT_2_S * 1000000ull);
}

/*
 * Keepalive has given up: with a user timeout, once the peer has been
 * silent that long with a probe out (as Linux's TCP_USER_TIMEOUT overrides
 * the probe count); without one, after KEEPALIVE_PROBES probes.
 */
static bool keepalive_dead(const struct rnic_tcp_conn *c)
{
	if (c->user_timeout_tsc)
		return c->probes > 0 &&
		       c->w->now_tsc - c->last_rx_tsc >= c->user_timeout_tsc;
	return c->probes >= KEEPALIVE_PROBES;
}

static void misc_timer_cb(struct rnic_timer *t, void *arg)
{
	(void)t;
	struct rnic_tcp_conn *c = arg;
	struct tcp_stack *ts = tcp_s(c->w->st);

	if (c->state == TCP_TIME_WAIT) {
		tcp_set_state(c, TCP_CLOSED);
		tcp_conn_free(c);
		return;
	}
	if (c->ops == NULL && !c->hold &&
	    (c->state == TCP_FIN_WAIT_1 || c->state == TCP_FIN_WAIT_2)) {
		if (c->state == TCP_FIN_WAIT_2) {
			tcp_conn_done(c, -ETIMEDOUT);
			return;
		}
		tcp_orphan_check(c);   /* the FIN is still being retransmitted */
		return;
	}
	if (!ts->params.keepalive_s)
		return;
	uint64_t idle_us = (c->w->now_tsc - c->last_rx_tsc) / (rte_get_tsc_hz() / 1000000);
	if (idle_us >= (uint64_t)ts->params.keepalive_s * 1000000) {
		if (keepalive_dead(c)) {
			tcp_timeout_abort(c, &tcp_w(c->w)->st.keepalive_timeouts);
			return;
		}
		c->probes++;
		tcp_send_bare(c, c->snd_una - 1, RTE_TCP_ACK_FLAG);
		rnic_timer_arm(&c->w->timers, &c->misc_timer, c->w->now_tsc,
			       KEEPALIVE_INTVL_S * 1000000ull);
		return;
	}
	rnic_timer_arm(&c->w->timers, &c->misc_timer, c->w->now_tsc,
		       (uint64_t)ts->params.keepalive_s * 1000000 - idle_us);
}

static void rotate_timer_cb(struct rnic_timer *t, void *arg)
{
	struct rnic_worker *w = arg;
	struct tcp_stack *ts = tcp_s(w->st);
	tcp_cookie_rotate(&ts->keys, tcp_cookie_epoch(w));
	rnic_timer_arm(&w->timers, t, w->now_tsc, 1000000);
}

/* --- listeners ----------------------------------------------------------- */

struct tcp_listener *tcp_find_listener(struct rnic_stack *st, uint16_t port)
{
	struct tcp_stack *ts = tcp_s(st);
	for (unsigned i = 0; i < TCP_MAX_LISTENERS; i++)
		if (__atomic_load_n(&ts->listeners[i].port, __ATOMIC_ACQUIRE) == port)
			return &ts->listeners[i];
	return NULL;
}

int rnic_tcp_listen(struct rnic_stack *st, uint16_t port,
		    const struct rnic_tcp_ops *ops, void *ctx, unsigned backlog)
{
	struct tcp_stack *ts = tcp_s(st);
	if (port == 0 || ops == NULL || ops->accept == NULL)
		return -EINVAL;
	if (tcp_find_listener(st, port))
		return -EADDRINUSE;
	for (unsigned i = 0; i < TCP_MAX_LISTENERS; i++) {
		struct tcp_listener *l = &ts->listeners[i];
		/* A slot whose connections still live stays theirs: they give
		 * their count back to it when they close, and a new listener
		 * there would start from a count that then drops below zero
		 * (an unsigned wrap: its backlog would look full for ever). So
		 * the count is never written here, only taken and given back. */
		if (l->port != 0 || __atomic_load_n(&l->count, __ATOMIC_ACQUIRE) != 0)
			continue;
		l->ops = ops;
		l->ctx = ctx;
		l->backlog = backlog ? backlog : 128;
		/* publish last: workers look the port up without locks */
		__atomic_store_n(&l->port, port, __ATOMIC_RELEASE);
		return 0;
	}
	return -ENOSPC;
}

int rnic_tcp_unlisten(struct rnic_stack *st, uint16_t port)
{
	struct tcp_listener *l = tcp_find_listener(st, port);
	if (l == NULL)
		return -ENOENT;
	__atomic_store_n(&l->port, 0, __ATOMIC_RELEASE);
	return 0;
}

/* --- active open --------------------------------------------------------- */

int rnic_tcp_connect(struct rnic_worker *w, uint32_t dst_ip, uint16_t dst_port,
		     const struct rnic_tcp_ops *ops, void *ctx,
		     struct rnic_tcp_conn **out)
{
	struct rnic_addr dst = rnic_addr_v4(dst_ip);
	return rnic_tcp_connect_addr(w, &dst, dst_port, ops, ctx, out);
}

/* The port and the four-tuple (source port 0) of an active open to @p dst.
 * @return the port, or NULL (no route, no source address). */
static struct rnic_port *connect_route(struct rnic_worker *w, const struct rnic_addr *dst,
				       uint16_t dst_port, struct tcp_key *k)
{
	struct rnic_port *p;
	uint32_t nh;

	if (dst->family == RNIC_AF_INET) {
		p = rnic_net_route(w->st, dst->v4, &nh);
		if (p == NULL || p->ip == 0)
			return NULL;
		tcp_key_set4(k, rte_cpu_to_be_32(p->ip), rte_cpu_to_be_32(dst->v4), 0,
			     rte_cpu_to_be_16(dst_port));
		return p;
	}
	if (dst->family != RNIC_AF_INET6 || rnic_ip6_is_multicast(dst->v6) ||
	    rnic_ip6_is_unspecified(dst->v6))
		return NULL;
	p = rnic_net_route6(w->st, dst->v6);
	if (p == NULL || rnic_port_ip6_src(p, dst->v6, k->laddr) != 0)
		return NULL;
	memcpy(k->raddr, dst->v6, 16);
	k->lport = 0;
	k->rport = rte_cpu_to_be_16(dst_port);
	return p;
}

/*
 * May an active open take over @p c's 4-tuple? It is ours, in TIME_WAIT
 * for at least tw_reuse_ms (its timer restarts when the peer's FIN comes
 * again: the peer is still closing), and it used timestamps, so the new
 * connection's (the same offset for the 4-tuple, a clock of 1 ms ticks
 * that has moved on) are newer than any it sent.
 */
static bool tw_reusable(const struct rnic_tcp_conn *c)
{
	const struct tcp_stack *ts = tcp_s(c->w->st);
	const struct rnic_timer_wheel *wh = &c->w->timers;
	if (c->state != TCP_TIME_WAIT || !c->tw_armed || !c->ts_ok ||
	    ts->params.tw_reuse_ms == 0 || !rnic_timer_pending(&c->misc_timer))
		return false;
	uint64_t due = c->misc_timer.expire_tick * wh->tsc_per_tick;
	uint64_t left_us = due > c->w->now_tsc ? rnic_tsc_to_us(due - c->w->now_tsc) : 0;
	uint64_t total_us = (uint64_t)ts->params.time_wait_ms * 1000;
	/* at least 2 ms: two ticks of the timestamp clock */
	uint64_t need_us = (uint64_t)RTE_MAX(ts->params.tw_reuse_ms, 2u) * 1000;
	return total_us > left_us && total_us - left_us >= need_us;
}

/* The worker a flow's replies land on. */
static unsigned connect_owner(struct rnic_worker *w, const struct tcp_key *k)
{
	if (tcp_key_v4(k))
		return rnic_flow_owner(w->st, tcp_key_r4(k), tcp_key_l4(k), k->rport, k->lport);
	return rnic_flow_owner6(w->st, k->raddr, k->laddr, k->rport, k->lport);
}

int rnic_tcp_connect_addr(struct rnic_worker *w, const struct rnic_addr *dst,
			  uint16_t dst_port, const struct rnic_tcp_ops *ops, void *ctx,
			  struct rnic_tcp_conn **out)
{
	struct tcp_worker *tw = tcp_w(w);
	struct tcp_stack *ts = tcp_s(w->st);
	struct tcp_key k;
	if (dst == NULL)
		return -EINVAL;
	struct rnic_port *p = connect_route(w, dst, dst_port, &k);
	if (p == NULL)
		return -EHOSTUNREACH;
	/* a source port whose replies hash to this worker, free or with a
	 * TIME_WAIT that may be taken over (as Linux, the first that will
	 * do: ports go round in order, so the next one's TIME_WAIT is the
	 * oldest; no scan of the whole range for a free one first) */
	unsigned span = EPHEMERAL_HI - EPHEMERAL_LO + 1;
	struct rnic_tcp_conn *old = NULL;
	for (unsigned i = 0; i < span; i++) {
		uint16_t port = (uint16_t)(EPHEMERAL_LO + (tw->next_port++ % span));
		k.lport = rte_cpu_to_be_16(port);
		if (connect_owner(w, &k) == w->id) {
			old = tcp_lookup(w, &k);
			if (old == NULL || tw_reusable(old))
				break;
		}
		old = NULL;
		k.lport = 0;
	}
	if (k.lport == 0)
		return -EADDRNOTAVAIL;
	uint32_t iss_floor = 0;
	bool reused = old != NULL;
	if (reused) {
		/* past anything the old connection sent, as Linux does (its
		 * snd_nxt plus a maximal unscaled window and 2) */
		iss_floor = old->snd_nxt + 65535 + 2;
		tcp_set_state(old, TCP_CLOSED);
		tcp_conn_free(old);
		tw->st.tw_reused++;
	}
	struct rnic_tcp_conn *c = tcp_conn_new(w, p, &k);
	if (c == NULL)
		return -ENOMEM;
	c->iss = tcp_isn(&ts->keys, tcp_key_flow(&k), tcp_now_us());
	if (reused && seq_lt(c->iss, iss_floor))
		c->iss = iss_floor;
	c->snd_una = c->iss;
	c->snd_nxt = c->snd_max = c->iss;
	c->ops = ops;
	c->ctx = ctx;
	if (tcp_conn_insert(c) != 0) {
		tcp_conn_free(c);
		return -ENOMEM;
	}
	tcp_set_state(c, TCP_SYN_SENT);
	tw->st.active_opens++;
	tcp_send_syn(c, false);
	tcp_arm_rto(c);
	*out = c;
	return 0;
}

/* --- data ---------------------------------------------------------------- */

uint32_t rnic_tcp_send_space(const struct rnic_tcp_conn *c)
{
	uint32_t units_free = TCP_UNITS - (c->u_tail - c->u_head);
	uint32_t bytes = c->sndbuf > c->queued_bytes ? c->sndbuf - c->queued_bytes : 0;
	uint32_t by_units = units_free > 1 ? (units_free - 1) * c->mss : 0;
	return bytes < by_units ? bytes : by_units;
}

void rnic_tcp_set_user_timeout(struct rnic_tcp_conn *c, uint32_t ms)
{
	struct rnic_timer_wheel *tw = &c->w->timers;
	c->user_timeout_tsc = ms_to_tsc(ms);
	if (c->user_timeout_tsc == 0 || c->wait_tsc == 0 || !rnic_timer_pending(&c->rtx_timer))
		return;
	/* a wait is under way: its new deadline may come before the timer */
	uint64_t end = c->wait_tsc + c->user_timeout_tsc, now = c->w->now_tsc;
	if (end / tw->tsc_per_tick < c->rtx_timer.expire_tick) {
		c->tlp_armed = false;
		rnic_timer_arm(tw, &c->rtx_timer, now,
			       end > now ? rnic_tsc_to_us(end - now) + 1 : 1);
	}
}

uint16_t rnic_tcp_mss(const struct rnic_tcp_conn *c) { return c->mss; }
void rnic_tcp_set_records(struct rnic_tcp_conn *c, bool on) { c->records = on; }
struct rte_mempool *rnic_tcp_pool(const struct rnic_tcp_conn *c) { return c->port->pool; }
struct rnic_worker *rnic_tcp_worker(const struct rnic_tcp_conn *c) { return c->w; }

static struct rnic_addr key_addr(const uint8_t a[16])
{
	if (rnic_ip6_is_v4mapped(a)) {
		uint32_t v;
		memcpy(&v, a + 12, 4);
		return rnic_addr_v4(rte_be_to_cpu_32(v));
	}
	return rnic_addr_v6(a);
}

void rnic_tcp_endpoints(const struct rnic_tcp_conn *c, struct rnic_addr *local,
			uint16_t *lport, struct rnic_addr *remote, uint16_t *rport)
{
	if (local != NULL)
		*local = key_addr(c->key.laddr);
	if (remote != NULL)
		*remote = key_addr(c->key.raddr);
	if (lport != NULL)
		*lport = rte_be_to_cpu_16(c->key.lport);
	if (rport != NULL)
		*rport = rte_be_to_cpu_16(c->key.rport);
}

#define UNIT_MAX_PIECES 8   /* mbufs per unit: bounds a segment's chain */

/* A unit that takes more bytes: the last queued one while it is unsent and
 * not full (so segments fill the MSS), else a new one. NULL: ring full. */
static struct tcp_unit *fill_unit(struct rnic_tcp_conn *c, bool fresh)
{
	if (!fresh && c->u_tail != c->u_next) {
		struct tcp_unit *u = &c->units[(c->u_tail - 1) & (c->units_cap - 1)];
		if (u->len < c->mss && u->m->nb_segs < UNIT_MAX_PIECES)
			return u;
	}
	if (c->u_tail - c->u_head >= c->units_cap)
		return NULL;   /* cannot happen: rnic_tcp_send() reserved room */
	struct tcp_unit *u = &c->units[c->u_tail & (c->units_cap - 1)];
	*u = (struct tcp_unit){ .m = NULL, .seq = c->write_seq, .len = 0 };
	c->u_tail++;
	return u;
}

/* Append one single-segment mbuf to unit @p u. */
static void unit_add(struct rnic_tcp_conn *c, struct tcp_unit *u, struct rte_mbuf *piece)
{
	uint16_t len = piece->data_len;
	if (u->m == NULL) {
		u->m = piece;
	} else {
		struct rte_mbuf *last = rte_pktmbuf_lastseg(u->m);
		last->next = piece;
		u->m->nb_segs++;
		u->m->pkt_len += len;
	}
	u->len += len;
	c->write_seq += len;
	c->queued_bytes += len;
}

/* Units @p len bytes in @p nb_segs mbufs may need, at worst. */
static uint32_t units_needed(const struct rnic_tcp_conn *c, uint32_t len, uint32_t nb_segs)
{
	return len / c->mss + nb_segs + 1;
}

/* How many mbufs of @p m straddle a unit boundary (one clone each): the
 * same walk as rnic_tcp_send()'s, without changing anything. */
static unsigned clones_needed(const struct rnic_tcp_conn *c, const struct rte_mbuf *m,
			      bool fresh)
{
	uint32_t room = 0, pieces = UNIT_MAX_PIECES;
	unsigned n = 0;

	if (!fresh && c->u_tail != c->u_next) {
		const struct tcp_unit *u = &c->units[(c->u_tail - 1) & (c->units_cap - 1)];
		if (u->len < c->mss && u->m->nb_segs < UNIT_MAX_PIECES) {
			room = c->mss - u->len;
			pieces = u->m->nb_segs;
		}
	}
	for (; m != NULL; m = m->next) {
		uint32_t left = m->data_len;
		while (left > 0) {
			if (room == 0 || pieces >= UNIT_MAX_PIECES) {
				room = c->mss;
				pieces = 0;
			}
			pieces++;
			if (left <= room) {
				room -= left;
				break;
			}
			n++;
			left -= room;
			room = 0;
		}
	}
	return n;
}

/*
 * Queue a chain: its bytes are cut into units of one MSS (filling the last
 * unsent unit first), each unit a chain of at most UNIT_MAX_PIECES mbufs.
 * A piece that straddles a unit boundary is shared by reference (an
 * attached mbuf), never copied. The attached mbufs are allocated before
 * anything is queued, so a failure leaves the connection as it was.
 */
int rnic_tcp_send(struct rnic_tcp_conn *c, struct rte_mbuf *m)
{
	if (c->state == TCP_SYN_SENT || c->state == TCP_SYN_RECEIVED ||
	    c->state == TCP_CLOSED)
		return -ENOTCONN;
	if (c->fin_queued || (c->state != TCP_ESTABLISHED && c->state != TCP_CLOSE_WAIT))
		return -EPIPE;
	uint32_t len = rte_pktmbuf_pkt_len(m);
	if (len == 0) {
		rte_pktmbuf_free(m);
		return 0;
	}
	uint32_t need = units_needed(c, len, m->nb_segs);
	if (len > rnic_tcp_send_space(c) || need > TCP_UNITS - (c->u_tail - c->u_head))
		return -EAGAIN;
	if (rnic_port_pool_short(c->port)) {
		tcp_w(c->w)->st.pool_short++;
		return -ENOBUFS;
	}
	if (tcp_units_reserve(c, need) != 0) {
		c->w->drops[RNIC_DROP_NO_MBUF]++;
		return -ENOBUFS;
	}
	/* record mode: a send of up to one MSS is a segment of its own */
	bool fresh = c->records && len <= c->mss;
	struct rte_mbuf *spare = NULL;
	for (unsigned n = clones_needed(c, m, fresh); n > 0; n--) {
		struct rte_mbuf *x = rte_pktmbuf_alloc(c->port->pool);
		if (x == NULL) {
			rte_pktmbuf_free(spare);
			c->w->drops[RNIC_DROP_NO_MBUF]++;
			return -ENOBUFS;
		}
		x->next = spare;
		spare = x;
	}
	while (m != NULL) {
		struct rte_mbuf *next = m->next;
		m->next = NULL;
		m->nb_segs = 1;
		m->pkt_len = m->data_len;
		while (m != NULL && m->data_len > 0) {
			struct tcp_unit *u = fill_unit(c, fresh);
			fresh = false;
			uint16_t room = (uint16_t)(c->mss - u->len);
			if (m->data_len <= room) {
				unit_add(c, u, m);
				m = NULL;
				break;
			}
			struct rte_mbuf *piece = spare;
			spare = piece->next;
			rte_pktmbuf_attach(piece, m);
			rte_pktmbuf_trim(piece, (uint16_t)(m->data_len - room));
			unit_add(c, u, piece);
			rte_pktmbuf_adj(m, room);
		}
		rte_pktmbuf_free(m);   /* NULL, or an emptied mbuf */
		m = next;
	}
	tcp_output(c);
	return 0;
}

int rnic_tcp_close(struct rnic_tcp_conn *c)
{
	if (c->app_closed)
		return -EALREADY;
	c->app_closed = true;
	enum tcp_state n = tcp_next_state(c->state, TCP_EV_CLOSE);
	if (n == TCP_NSTATES)
		return -ENOTCONN;
	if (n == TCP_CLOSED) {   /* SYN_SENT: nothing to say */
		tcp_conn_done(c, 0);
		return 0;
	}
	tcp_set_state(c, n);
	c->fin_queued = true;
	tcp_output(c);
	return 0;
}

void rnic_tcp_abort(struct rnic_tcp_conn *c)
{
	if (c->state != TCP_SYN_SENT && c->state != TCP_CLOSED)
		tcp_send_ctl(c->w, c->port, &c->key, c->snd_nxt, 0, RTE_TCP_RST_FLAG, NULL, 0);
	tcp_w(c->w)->st.resets_out++;
	c->ops = NULL;
	c->notified_closed = true;
	tcp_conn_done(c, -ECONNRESET);
}

void rnic_tcp_hold(struct rnic_tcp_conn *c, bool hold)
{
	c->hold = hold;
	if (hold)
		return;
	c->busy++;   /* the new consumer may close or abort from recv() */
	struct rte_mbuf *m = c->held;
	bool reopened = m != NULL;
	c->held = NULL;
	c->held_tail = NULL;
	c->held_bytes = 0;
	/* held bytes first, in order, to the (new) consumer; then a FIN that
	 * arrived meanwhile */
	if (m != NULL && c->ops && c->ops->recv)
		c->ops->recv(c, c->ctx, m);
	else
		rte_pktmbuf_free(m);
	if (c->state != TCP_CLOSED)
		tcp_ooo_pull(c);   /* what a full hold left waiting */
	if (c->state == TCP_CLOSE_WAIT || c->state == TCP_LAST_ACK ||
	    c->state == TCP_CLOSING || c->state == TCP_TIME_WAIT) {
		if (!c->eof_sent && c->ops && c->ops->eof) {
			c->eof_sent = true;
			c->ops->eof(c, c->ctx);
		}
	}
	if (reopened && c->state != TCP_CLOSED)
		tcp_send_ack(c);   /* the window reopened */
	tcp_conn_put(c);
}

void rnic_tcp_set_ops(struct rnic_tcp_conn *c, const struct rnic_tcp_ops *ops,
		      void *ctx)
{
	c->ops = ops;
	c->ctx = ctx;
	tcp_orphan_check(c);
}

void rnic_tcp_info(const struct rnic_tcp_conn *c, struct rnic_tcp_info *i)
{
	*i = (struct rnic_tcp_info){
		.bytes_sent = c->stats.bytes_sent,
		.bytes_acked = c->stats.bytes_acked,
		.bytes_received = c->stats.bytes_received,
		.retransmits = c->stats.retransmits,
	};
	i->state = c->state;
	i->mss = c->mss;
	i->cwnd = c->cc.cwnd;
	i->ssthresh = c->cc.ssthresh;
	i->snd_wnd = c->snd_wnd;
	i->rcv_wnd = tcp_rcv_window(c);
	i->srtt_us = c->rtt.srtt_us;
	i->rto_us = c->rtt.rto_us;
	i->lport = rte_be_to_cpu_16(c->key.lport);
	i->rport = rte_be_to_cpu_16(c->key.rport);
}

void rnic_tcp_stats(const struct rnic_stack *st, struct rnic_tcp_stats *s)
{
	memset(s, 0, sizeof(*s));
	if (tcp_s(st) == NULL)
		return;
	for (unsigned i = 0; i < st->n_workers; i++) {
		const struct tcp_worker *tw = st->workers[i]->proto[RNIC_PROTO_TCP];
		if (tw == NULL)
			continue;
		const uint64_t *a = (const uint64_t *)&tw->st;
		uint64_t *b = (uint64_t *)s;
		for (size_t k = 0; k < sizeof(*s) / sizeof(uint64_t); k++)
			b[k] += a[k];
	}
}

/* --- stack hooks ---------------------------------------------------------- */

static int tcp_stack_init(struct rnic_stack *st)
{
	struct tcp_stack *ts = rte_zmalloc("rnic_tcp", sizeof(*ts), RTE_CACHE_LINE_SIZE);
	if (ts == NULL)
		return -ENOMEM;
	rnic_tcp_params_default(&ts->params);
	tcp_telemetry_init();
	ts->tsc_per_epoch = rte_get_tsc_hz() * COOKIE_EPOCH_S;
	tcp_cookie_keys_init(&ts->keys, (uint32_t)(rte_get_tsc_cycles() / ts->tsc_per_epoch));
	st->proto[RNIC_PROTO_TCP] = ts;
	static const struct rnic_l4_handler h = { .owner = tcp_owner, .input = tcp_input,
						  .pmtu6 = tcp_pmtu6 };
	return rnic_stack_register_ip_proto(st, IPPROTO_TCP, &h);
}

static void tcp_stack_fini(struct rnic_stack *st)
{
	rte_free(st->proto[RNIC_PROTO_TCP]);
	st->proto[RNIC_PROTO_TCP] = NULL;
}

static int tcp_worker_init(struct rnic_worker *w)
{
	char name[RTE_HASH_NAMESIZE];
	struct tcp_worker *tw = rte_zmalloc("rnic_tcp_w", sizeof(*tw), RTE_CACHE_LINE_SIZE);
	if (tw == NULL)
		return -ENOMEM;
	snprintf(name, sizeof(name), "tcb_%u_%u", w->st->id, w->id);
	/* every segment looks its 4-tuple up (a SYN too: RFC 5961 wants the
	 * TCB if there is one); the CRC32 instruction (SSE4.2, in the build's
	 * baseline) hashes the 12-byte key in two steps, Jenkins in many */
	struct rte_hash_parameters hp = {
		.name = name, .entries = TCBS_PER_WORKER,
		.key_len = sizeof(struct tcp_key), .hash_func = rte_hash_crc,
		.socket_id = SOCKET_ID_ANY,
	};
	tw->tcbs = rte_hash_create(&hp);
	if (tw->tcbs == NULL) {
		rte_free(tw);
		return -ENOMEM;
	}
	tw->next_port = (uint16_t)rte_rand();
	w->proto[RNIC_PROTO_TCP] = tw;
	if (w->id == 0) {
		struct tcp_stack *ts = tcp_s(w->st);
		rnic_timer_init(&ts->rotate_timer, rotate_timer_cb, w);
		rnic_timer_arm(&w->timers, &ts->rotate_timer, w->now_tsc, 1000000);
	}
	return 0;
}

static void tcp_worker_fini(struct rnic_worker *w)
{
	struct tcp_worker *tw = tcp_w(w);
	if (tw == NULL)
		return;
	const void *key;
	void *data;
	uint32_t it = 0;
	/* free every TCB; collect first, the table changes under iteration */
	while (rte_hash_iterate(tw->tcbs, &key, &data, &it) >= 0) {
		struct rnic_tcp_conn *c = data;
		c->ops = NULL;
		c->notified_closed = true;
		c->in_table = false;
		tcp_set_state(c, TCP_CLOSED);
		tcp_conn_free(c);
	}
	tcb_cache_drain(tw);
	if (w->id == 0)
		rnic_timer_cancel(&w->timers, &tcp_s(w->st)->rotate_timer);
	rte_hash_free(tw->tcbs);
	rte_free(tw);
	w->proto[RNIC_PROTO_TCP] = NULL;
}

/* --- port failover -------------------------------------------------------- */

/*
 * Move one TCB to @p s, which answers for its address now. The state is
 * kept. What is in flight was probably lost with the link, and the RTO
 * that would find out has been backing off while the link was down: it
 * fires now instead, on the new port, from an un-backed-off timer (the
 * outage was no congestion signal) and with its retry budget renewed.
 * A receiving side sends an ACK, so a peer that is not failing over
 * itself learns at once where we are.
 */
static void tcp_conn_failover(struct rnic_tcp_conn *c, struct rnic_port *s)
{
	c->port = s;
	tcp_w(c->w)->st.failover_moves++;
	switch (c->state) {
	case TCP_SYN_SENT:
	case TCP_SYN_RECEIVED:
		tcp_send_syn(c, c->state == TCP_SYN_RECEIVED);
		tcp_arm_rto(c);
		return;
	case TCP_ESTABLISHED:
	case TCP_CLOSE_WAIT:
	case TCP_FIN_WAIT_1:
	case TCP_CLOSING:
	case TCP_LAST_ACK:
		break;
	case TCP_FIN_WAIT_2:
	case TCP_TIME_WAIT:
		tcp_send_ack(c);
		return;
	default:
		return;
	}
	if (c->snd_una != c->snd_max) {
		rnic_timer_cancel(&c->w->timers, &c->rtx_timer);
		c->rtt.backoff = 0;
		c->rto_retries = 0;
		c->wait_tsc = 0;   /* the outage was the old port's, not the peer's */
		c->tlp_armed = false;
		rtx_timer_cb(&c->rtx_timer, c);
	} else if (c->u_next != c->u_tail) {
		tcp_output(c);
	} else {
		tcp_send_ack(c);
	}
}

/* The stack's failover hook, on each worker: move the TCBs of @p failed. */
static unsigned tcp_failover(struct rnic_worker *w, struct rnic_port *failed,
			     struct rnic_port *survivor)
{
	struct tcp_worker *tw = tcp_w(w);
	struct rnic_tcp_conn **v = NULL;
	unsigned n = 0, cap = 0;
	const void *key;
	void *data;
	uint32_t it = 0;

	if (tw == NULL)
		return 0;
	/* collect first: moving may close a connection (its RTO budget, an
	 * application callback), and the table must not change under the
	 * iteration */
	while (rte_hash_iterate(tw->tcbs, &key, &data, &it) >= 0) {
		struct rnic_tcp_conn *c = data;
		if (c->port != failed)
			continue;
		if (n == cap) {
			unsigned ncap = cap ? 2 * cap : 64;
			struct rnic_tcp_conn **nv = realloc(v, ncap * sizeof(*v));
			if (nv == NULL)
				break;  /* the rest still leave through the survivor
					 * (lib/net follows taken_by), just later */
			v = nv;
			cap = ncap;
		}
		c->busy++;
		v[n++] = c;
	}
	for (unsigned i = 0; i < n; i++) {
		if (!v[i]->free_pending)
			tcp_conn_failover(v[i], survivor);
		tcp_conn_put(v[i]);
	}
	free(v);
	return n;
}

const struct rnic_proto_ops rnic_tcp_proto = {
	.name = "tcp",
	.stack_init = tcp_stack_init,
	.stack_fini = tcp_stack_fini,
	.worker_init = tcp_worker_init,
	.worker_fini = tcp_worker_fini,
	/* no .connections: the stack counts QPs (verbs), not TCBs, which
	 * stay in TIME_WAIT for 2 MSL after a connection's end; TCP's own
	 * figures are /rnic/tcp's */
	.failover = tcp_failover,
};
