/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * IB connection manager for RoCE RC QPs (ibcm.h): IBTA vol. 1 chapter 12
 * over MADs on QP1, as librdmacm and the Linux IB CM speak it on rxe.
 *
 *   active                               passive
 *   connect: QP INIT, REQ   ------->     listener by service ID: new
 *            (retried)                   connection, CONNECT_REQUEST
 *                           <-------     (MRA, if the REQ comes again
 *                                        before the application decides)
 *                           <-------     accept: QP RTR, REP (retried)
 *   REP: QP RTR, RTS, RTU   ------->     RTU: QP RTS, ESTABLISHED
 *        ESTABLISHED                     (a duplicate REP is answered
 *                                        with the RTU again)
 *   disconnect: QP ERR, DREQ ------->    QP ERR, DREP, DISCONNECTED
 *   DREP: DISCONNECTED      <-------
 *
 * A connection then stays in TIMEWAIT for a while, so a late duplicate
 * REQ (same peer, same comm ID) is answered (REJ stale connection, or the
 * REJ it got before) instead of making a second connection, and a
 * duplicate DREQ gets its DREP again.
 *
 * Everything here runs on worker 0 of the stack: the MADs are steered
 * there (roce_qp.c) and the application's calls are made there with
 * rnic_worker_call_sync(). QP transitions use rnic_qp_modify() (the verbs modify), which
 * waits for the QP's worker: workers never wait for worker 0, so this
 * cannot deadlock. Control path only: connections are on a list (for the
 * stack's end) and in two hash tables (ibcm_hash.h), by local comm ID and,
 * for passive ones, by the REQ's identity, so a MAD finds its connection
 * without a walk of every connection (TIMEWAIT ones included) it once
 * took. A connection leaves the tables when its timewait ends (CM_DONE).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_random.h>
#include <rte_udp.h>

#include "engine/stack.h"
#include "engine/worker.h"
#include "net/ipv6.h"
#include "net/net.h"
#include "port/port.h"
#include "rnic/rnic_roce.h"
#include "roce/ibcm.h"
#include "roce/ibcm_hash.h"
#include "roce/ibcm_wire.h"
#include "roce/icrc.h"
#include "roce/psn.h"
#include "roce/roce.h"

/* Defaults: 2^18 x 4.096 us = 1.07 s per try (Linux rdma_cm uses 2^20
 * and 15 retries; rnic answers within microseconds, the slack is for a
 * peer that is slow to accept, which can also send an MRA). */
#define CM_RESP_EXP       18u
#define CM_RETRIES        8u
#define CM_TIMEWAIT_TRIES 2u     /* timewait: this many response timeouts */
#define CM_MRA_EXP        20u    /* service timeout we ask for in an MRA (4.3 s):
				  * at least CM_DECIDE_MAX_US, we answer by then */
#define CM_ACK_TIMEOUT    14u    /* the QPs' local ACK timeout (67 ms) */
#define CM_RETRY_CNT      7u
#define CM_RNR_RETRY      7u
#define CM_MIN_RNR_TIMER  12u
#define CM_MAX_LISTEN     64u
/* A REQ the application has not accepted or rejected after this long is
 * rejected (REJ, reason timeout) and forgotten: the REQ's own budget
 * (its remote CM response timeout times its retries plus one, what the
 * active side waits without an MRA), kept within these bounds so neither
 * a tiny nor a huge REQ value holds state long. */
#define CM_DECIDE_MIN_US  1000000u
/* An accepted connection without its RTU this long may be pushed out of a
 * full backlog by a newer REQ (half_open_evict()). */
#define CM_HALF_OPEN_MIN_US 100000u
#define CM_DECIDE_MAX_US  4000000u
/* Passive connections a remote made and the application never accepted
 * (deciding, or in timewait after a REJ or a timeout), per port: a REQ
 * beyond them is rejected without allocating (cm_port_limit). Above
 * every listener's backlog together in practice (RNIC_CM_BACKLOG_MAX is
 * 4096), so it bites on a flood over many listeners or a timewait pile. */
#define CM_PORT_UNACCEPTED_MAX 16384u
#define CM_QP_ACCESS (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC)

enum cm_state {
	CM_REQ_SENT,      /* active: waiting for REP (or MRA, REJ) */
	CM_REQ_RCVD,      /* passive: the application decides */
	CM_REP_SENT,      /* passive: waiting for RTU */
	CM_ESTABLISHED,
	CM_DREQ_SENT,     /* waiting for DREP */
	CM_TIMEWAIT,      /* closed: answers duplicates for a while */
	CM_DONE,          /* timewait over: kept only for its context */
};

struct ibcm_listener {
	uint16_t port;           /* 0: free slot */
	const struct rnic_ibcm_ops *ops;
	void *lctx;
	uint32_t backlog;        /* requests delivered, not yet established
				  * (undecided, or accepted and waiting for
				  * the RTU): at most */
	uint32_t pending;        /* ... and now */
	uint32_t gen;            /* bumped per listen/unlisten of the slot */
	/* accepted, REP sent, no RTU yet: oldest first (counted in pending) */
	TAILQ_HEAD(, rnic_ibcm_conn) half_open;
};

struct roce_cm {
	struct rnic_stack *st;
	TAILQ_HEAD(, rnic_ibcm_conn) conns;
	struct ibcm_hash by_lid;     /* every connection but CM_DONE ones */
	struct ibcm_hash by_req;     /* passive ones but CM_DONE */
	struct ibcm_listener listen[CM_MAX_LISTEN];
	uint32_t unaccepted[RNIC_MAX_PORTS];   /* see CM_PORT_UNACCEPTED_MAX */
	uint32_t n_conns;        /* on conns (read by rnic_ibcm_conn_count) */
	uint32_t next_id;        /* local comm IDs */
	uint64_t next_tid;
	uint32_t gsi_psn;
	uint8_t resp_exp, retries;
};

struct rnic_ibcm_conn {
	TAILQ_ENTRY(rnic_ibcm_conn) link;
	struct ibcm_hnode lid_node, req_node;
	bool in_lid, in_req;     /* in cm->by_lid, cm->by_req */
	struct roce_cm *cm;
	enum cm_state state;
	bool active;
	bool detached;           /* the context is gone: free after timewait */
	bool rejected;           /* mad holds the REJ we sent */
	bool unaccepted;         /* passive, counted in cm->unaccepted */
	struct ibcm_listener *lst;   /* REQ_RCVD: counted in lst->pending */
	TAILQ_ENTRY(rnic_ibcm_conn) half_link;   /* on lst->half_open */
	bool in_half;            /* on lst->half_open */
	uint64_t rep_tsc;        /* when the REP was first sent */
	uint32_t lgen;           /* lst->gen then */
	const struct rnic_ibcm_ops *ops;
	void *ctx;
	struct rnic_qp *qp;
	struct rnic_port *port;
	struct rnic_addr local, peer;   /* IPv4 or IPv6 (the GIDs' addresses) */
	uint16_t peer_port;      /* active: the service port; passive: the CMA source port */
	uint32_t lid, rid;       /* local and remote comm IDs */
	uint64_t tid;
	uint64_t peer_guid;
	uint32_t rqpn;
	uint32_t lpsn;           /* our Starting PSN: what our QP expects to receive */
	uint32_t rpsn;           /* the peer's: what our QP sends first */
	uint8_t mtu;             /* enum ibv_mtu of the path */
	uint8_t ird, ord;        /* ours, negotiated */
	uint8_t retry_cnt, rnr_retry, ack_timeout, tclass;
	uint8_t retries_left;
	uint32_t timeout_us;
	struct rnic_timer timer;
	uint8_t mad[RNIC_MAD_LEN];   /* the last message sent, for retries and duplicates */
};

static struct roce_cm *cm_of(struct rnic_stack *st)
{
	return st->proto[RNIC_PROTO_ROCE];
}

static struct rnic_worker *cm_worker(const struct roce_cm *cm)
{
	return cm->st->workers[0];
}

static struct roce_counters *ctr(const struct roce_cm *cm)
{
	struct roce_worker *rw = cm_worker(cm)->proto[RNIC_PROTO_ROCE];
	return &rw->c;
}

/* 4.096 us x 2^exp, in microseconds. */
static uint32_t exp_us(unsigned exp)
{
	return (uint32_t)((4096ull << RTE_MIN(exp, 31u)) / 1000u);
}

/* EUI-64 of the port's MAC: the "CA GUID" the CM messages carry. */
static uint64_t port_guid(const struct rnic_port *p)
{
	const uint8_t *a = p->mac.addr_bytes;
	return ((uint64_t)(a[0] ^ 2u) << 56) | ((uint64_t)a[1] << 48) | ((uint64_t)a[2] << 40) |
	       (0xfffeull << 24) | ((uint64_t)a[3] << 16) | ((uint64_t)a[4] << 8) | a[5];
}

/* The largest path MTU (enum ibv_mtu) the port carries for RoCE to
 * @p peer: IPv6's header is 20 bytes longer than the IPv4 one that
 * RNIC_ROCE_OVERHEAD counts (the QP checks the same at RTR). */
static uint8_t port_mtu(const struct rnic_port *p, const struct rnic_addr *peer)
{
	uint32_t over = RNIC_ROCE_OVERHEAD + (peer->family == RNIC_AF_INET6 ? 20u : 0u);
	uint8_t m = IBV_MTU_256;
	while (m < IBV_MTU_4096 && (128u << (m + 1)) + over <= p->mtu)
		m++;
	return m;
}

/* --- MAD transmit --------------------------------------------------------------- */

static void gsi_icrc(struct rte_mbuf *m)
{
	rnic_roce_icrc_generate_mbuf(m, m->l2_len);
}

/* Send a 256-byte MAD from QP1 of @p c's port to the peer's QP1. */
static void mad_send(struct roce_cm *cm, struct rnic_port *p, const struct rnic_addr *src,
		     const struct rnic_addr *dst, const uint8_t *mad)
{
	const struct rnic_roce_opinfo *op = rnic_roce_op(RNIC_ROCE_OP_UD_SEND_ONLY);
	uint32_t len = op->length + RNIC_MAD_LEN + RNIC_ROCE_ICRC_LEN;
	struct rte_mbuf *m = rte_pktmbuf_alloc(p->pool);
	if (m == NULL || len > rte_pktmbuf_tailroom(m)) {
		rte_pktmbuf_free(m);
		ctr(cm)->no_mbuf++;   /* the retry timer sends it again */
		return;
	}
	uint8_t *b = (uint8_t *)rte_pktmbuf_append(m, (uint16_t)len);
	memset(b, 0, len);
	struct rnic_roce_bth *bth = (struct rnic_roce_bth *)b;
	rnic_roce_bth_set_opcode(bth, RNIC_ROCE_OP_UD_SEND_ONLY);
	rnic_roce_bth_set_tver(bth, RNIC_ROCE_TVER);
	rnic_roce_bth_set_pkey(bth, RNIC_ROCE_PKEY_DEFAULT);
	rnic_roce_bth_set_dqpn(bth, RNIC_GSI_QPN);
	rnic_roce_bth_set_psn(bth, cm->gsi_psn++);
	struct rnic_roce_deth *deth = (struct rnic_roce_deth *)(b + RNIC_ROCE_BTH_LEN);
	rnic_roce_deth_set_qkey(deth, RNIC_GSI_QKEY);
	rnic_roce_deth_set_sqp(deth, RNIC_GSI_QPN);
	memcpy(b + op->length, mad, RNIC_MAD_LEN);
	ctr(cm)->cm_mads_out++;
	ctr(cm)->tx_pkts++;
	rnic_roce_output(cm_worker(cm), p, m, src, dst, 0xc000u | 0x0001u, 0, 0, gsi_icrc, NULL);
}

static void conn_send_mad(struct rnic_ibcm_conn *c)
{
	mad_send(c->cm, c->port, &c->local, &c->peer, c->mad);
}

/* Encode @p m into the connection's MAD (kept for retries) and send it. */
static void conn_send(struct rnic_ibcm_conn *c, struct rnic_ibcm_msg *m)
{
	m->tid = c->tid;
	if (rnic_ibcm_encode(m, c->mad) != 0)
		return;   /* lengths are checked by the callers: cannot happen */
	c->rejected = m->attr == RNIC_IBCM_REJ;
	if (c->rejected)
		ctr(c->cm)->cm_rej_out++;
	conn_send_mad(c);
}

/* A stateless REJ answering @p in (no connection, or one we will not
 * keep): comm IDs swapped from the message. */
static void rej_reply(struct roce_cm *cm, struct rnic_port *p, const struct rnic_addr *src,
		      const struct rnic_addr *dst, const struct rnic_ibcm_msg *in, uint8_t msg,
		      uint16_t reason)
{
	struct rnic_ibcm_msg r = { .attr = RNIC_IBCM_REJ, .tid = in->tid,
				   .local_id = in->remote_id, .remote_id = in->local_id,
				   .msg = msg, .reason = reason };
	uint8_t mad[RNIC_MAD_LEN];
	if (rnic_ibcm_encode(&r, mad) == 0) {
		ctr(cm)->cm_rej_out++;
		mad_send(cm, p, src, dst, mad);
	}
}

/* --- connection objects ----------------------------------------------------------- */

static void conn_timer_cb(struct rnic_timer *t, void *arg);

static struct rnic_ibcm_conn *conn_new(struct roce_cm *cm, struct rnic_port *p)
{
	struct rnic_ibcm_conn *c = calloc(1, sizeof(*c));
	if (c == NULL)
		return NULL;
	c->cm = cm;
	c->port = p;
	c->local = rnic_addr_v4(p->ip);
	do {
		c->lid = cm->next_id++;
	} while (c->lid == 0);
	rnic_timer_init(&c->timer, conn_timer_cb, c);
	TAILQ_INSERT_TAIL(&cm->conns, c, link);
	__atomic_store_n(&cm->n_conns, cm->n_conns + 1, __ATOMIC_RELAXED);
	ibcm_hash_add(&cm->by_lid, &c->lid_node, ibcm_hash_lid(c->lid));
	c->in_lid = true;
	return c;
}

/* A passive connection's REQ identity is known: duplicates find it. */
static void conn_hash_req(struct rnic_ibcm_conn *c)
{
	ibcm_hash_add(&c->cm->by_req, &c->req_node, ibcm_hash_req(&c->peer, c->rid, c->peer_guid));
	c->in_req = true;
}

/* Out of the lookup tables: its timewait is over, or it goes. */
static void conn_unhash(struct rnic_ibcm_conn *c)
{
	if (c->in_lid)
		ibcm_hash_del(&c->cm->by_lid, &c->lid_node);
	if (c->in_req)
		ibcm_hash_del(&c->cm->by_req, &c->req_node);
	c->in_lid = c->in_req = false;
}

/* The REQ is decided (accepted, rejected, timed out, gone): it no longer
 * counts against its listener's backlog. */
static void conn_unpend(struct rnic_ibcm_conn *c)
{
	struct ibcm_listener *l = c->lst;
	if (c->in_half) {
		TAILQ_REMOVE(&l->half_open, c, half_link);
		c->in_half = false;
	}
	if (l != NULL && l->gen == c->lgen && l->pending > 0)
		l->pending--;
	c->lst = NULL;
}

/* Established by the peer's RTU or traffic (or freed): no longer one a
 * remote holds without having shown it can answer. An accepted REQ counts
 * until then, so that spoofed REQs an auto-accepting server takes (each a
 * QP and the application's state for the REP's whole retry budget) stay
 * within the backlog, as TCP's half-open connections within its SYN
 * stage. */
static void conn_consented(struct rnic_ibcm_conn *c)
{
	conn_unpend(c);
	if (c->unaccepted) {
		c->cm->unaccepted[c->port->idx]--;
		c->unaccepted = false;
	}
}

static void conn_free(struct rnic_ibcm_conn *c)
{
	struct rnic_worker *w = cm_worker(c->cm);
	conn_consented(c);
	rnic_timer_cancel(&w->timers, &c->timer);
	conn_unhash(c);
	TAILQ_REMOVE(&c->cm->conns, c, link);
	__atomic_store_n(&c->cm->n_conns, c->cm->n_conns - 1, __ATOMIC_RELAXED);
	free(c);
}

static void conn_arm(struct rnic_ibcm_conn *c, uint32_t us)
{
	struct rnic_worker *w = cm_worker(c->cm);
	rnic_timer_arm(&w->timers, &c->timer, w->now_tsc ? w->now_tsc : rte_get_tsc_cycles(), us);
}

/* Start retrying the message in c->mad every response timeout. */
static void conn_retry_start(struct rnic_ibcm_conn *c, uint8_t retries)
{
	c->retries_left = retries;
	c->timeout_us = exp_us(c->cm->resp_exp);
	conn_arm(c, c->timeout_us);
}

static void conn_event(struct rnic_ibcm_conn *c, enum rnic_cm_event_type t, int status,
		       uint16_t reason, const void *pdata, uint16_t len)
{
	if (!c->detached && c->ops != NULL)
		c->ops->event(c->ctx, t, status, reason, pdata, len, false);
}

/* The connection is over: answer duplicates for a while, then forget. */
static void conn_timewait(struct rnic_ibcm_conn *c)
{
	conn_unpend(c);
	c->state = CM_TIMEWAIT;
	c->qp = NULL;
	conn_arm(c, CM_TIMEWAIT_TRIES * exp_us(c->cm->resp_exp));
}

/* Move the connection's QP to ERR (its work flushed), once. */
static void conn_qp_error(struct rnic_ibcm_conn *c)
{
	if (c->qp == NULL)
		return;
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_ERR };
	enum ibv_qp_state s = __atomic_load_n(&c->qp->qp.state, __ATOMIC_ACQUIRE);
	if (s != IBV_QPS_ERR && s != IBV_QPS_RESET)
		rnic_qp_modify(c->qp, &a, IBV_QP_STATE);
}

static struct rnic_ibcm_conn *conn_by_lid(struct roce_cm *cm, uint32_t lid)
{
	uint64_t h = ibcm_hash_lid(lid);
	for (struct ibcm_hnode *n = ibcm_hash_first(&cm->by_lid, h); n; n = ibcm_hash_next(n)) {
		struct rnic_ibcm_conn *c = container_of(n, struct rnic_ibcm_conn, lid_node);
		if (c->lid == lid && c->state != CM_DONE)
			return c;
	}
	return NULL;
}

/* A REQ seen before: same peer, same comm ID, same CA GUID. */
static struct rnic_ibcm_conn *conn_by_req(struct roce_cm *cm, const struct rnic_addr *peer,
					  const struct rnic_ibcm_msg *m)
{
	uint64_t h = ibcm_hash_req(peer, m->local_id, m->ca_guid);
	for (struct ibcm_hnode *n = ibcm_hash_first(&cm->by_req, h); n; n = ibcm_hash_next(n)) {
		struct rnic_ibcm_conn *c = container_of(n, struct rnic_ibcm_conn, req_node);
		if (!c->active && c->state != CM_DONE && rnic_addr_eq(&c->peer, peer) &&
		    c->rid == m->local_id && c->peer_guid == m->ca_guid)
			return c;
	}
	return NULL;
}

/* --- QP transitions ------------------------------------------------------------------ */

static void qp_av(struct rnic_ibcm_conn *c, struct ibv_qp_attr *a)
{
	a->ah_attr.is_global = 1;
	a->ah_attr.port_num = (uint8_t)(c->port->idx + 1);
	/* the local address's GID: 1 for IPv4, an IPv6 one's index else */
	int sgid = rnic_gid_find(c->port, &c->local);
	a->ah_attr.grh.sgid_index = (uint8_t)(sgid >= 0 ? sgid : 1);
	a->ah_attr.grh.hop_limit = 64;
	a->ah_attr.grh.traffic_class = c->tclass;
	rnic_addr_gid(&c->peer, a->ah_attr.grh.dgid.raw);
}

/* RESET -> INIT as rdma_cm does it (remote Write, Read and atomics). */
static int qp_init(struct rnic_qp *qp, unsigned port_num)
{
	if (__atomic_load_n(&qp->qp.state, __ATOMIC_ACQUIRE) != IBV_QPS_RESET)
		return 0;
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .pkey_index = 0,
				 .port_num = (uint8_t)port_num, .qp_access_flags = CM_QP_ACCESS };
	return rnic_qp_modify(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
			      IBV_QP_ACCESS_FLAGS);
}

static int qp_rtr(struct rnic_ibcm_conn *c)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_RTR,
		.path_mtu = (enum ibv_mtu)c->mtu,
		.dest_qp_num = c->rqpn,
		/* a message's Starting PSN is the one its sender expects to
		 * receive first (Linux cm.c: the REQ's becomes the active
		 * side's rq_psn and the passive side's sq_psn; the REP's the
		 * other way round) */
		.rq_psn = c->lpsn,
		.max_dest_rd_atomic = c->ird,
		.min_rnr_timer = CM_MIN_RNR_TIMER,
	};
	qp_av(c, &a);
	return rnic_qp_modify(c->qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			      IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
			      IBV_QP_MIN_RNR_TIMER);
}

/* all of it kept by roce_qp_arm_comm_est() */
#define CM_RTS_MASK ROCE_COMM_EST_MASK

static void rts_attr(const struct rnic_ibcm_conn *c, struct ibv_qp_attr *a)
{
	*a = (struct ibv_qp_attr){
		.qp_state = IBV_QPS_RTS,
		.sq_psn = c->rpsn,   /* the peer's Starting PSN: what it expects */
		.timeout = c->ack_timeout,
		.retry_cnt = c->retry_cnt,
		.rnr_retry = c->rnr_retry,
		.max_rd_atomic = c->ord ? c->ord : 1,
	};
}

static bool qp_is_rts(const struct rnic_ibcm_conn *c)
{
	return c->qp != NULL &&
	       __atomic_load_n(&c->qp->qp.state, __ATOMIC_ACQUIRE) == IBV_QPS_RTS;
}

/* RTS, unless the first request packet already took the QP there. */
static int qp_rts(struct rnic_ibcm_conn *c)
{
	struct ibv_qp_attr a;
	if (qp_is_rts(c))
		return 0;
	rts_attr(c, &a);
	return rnic_qp_modify(c->qp, &a, CM_RTS_MASK);
}

/* --- timers ---------------------------------------------------------------------------- */

/* The retry budget of the message in flight is spent. */
static void conn_give_up(struct rnic_ibcm_conn *c)
{
	struct rnic_ibcm_msg rej = { .attr = RNIC_IBCM_REJ, .local_id = c->lid,
				     .remote_id = c->rid, .reason = RNIC_IBCM_REJ_TIMEOUT };
	switch (c->state) {
	case CM_REQ_SENT:
	case CM_REP_SENT:
		rej.msg = c->state == CM_REQ_SENT ? RNIC_IBCM_MSG_REQ : RNIC_IBCM_MSG_REP;
		conn_send(c, &rej);
		conn_qp_error(c);
		conn_timewait(c);
		conn_event(c, RNIC_CM_EVENT_UNREACHABLE, -ETIMEDOUT, 0, NULL, 0);
		break;
	case CM_DREQ_SENT:
		conn_timewait(c);
		conn_event(c, RNIC_CM_EVENT_DISCONNECTED, -ETIMEDOUT, 0, NULL, 0);
		break;
	default:
		break;
	}
}

/*
 * The application did not decide on a REQ in time: REJ (timeout), and the
 * connection is given up for the CM: CONNECT_ERROR -ETIMEDOUT with the
 * connection gone, so an id whose request was never taken is freed and
 * one that was gets the event (IBA 12.6.6: a passive side that cannot
 * answer in the promised time rejects).
 */
static void conn_decide_timeout(struct rnic_ibcm_conn *c)
{
	struct rnic_ibcm_msg rej = { .attr = RNIC_IBCM_REJ, .local_id = c->lid,
				     .remote_id = c->rid, .msg = RNIC_IBCM_MSG_REQ,
				     .reason = RNIC_IBCM_REJ_TIMEOUT };
	ctr(c->cm)->cm_req_timeouts++;
	conn_send(c, &rej);
	conn_timewait(c);
	if (!c->detached && c->ops != NULL)
		c->ops->event(c->ctx, RNIC_CM_EVENT_CONNECT_ERROR, -ETIMEDOUT,
			      RNIC_IBCM_REJ_TIMEOUT, NULL, 0, true);
	c->detached = true;   /* the CM forgot it: freed when timewait ends */
	c->ctx = NULL;
}

/*
 * The backlog is full and a new REQ came: make room by giving up the
 * oldest accepted connection whose RTU has not come in CM_HALF_OPEN_MIN_US
 * (a real client answers a REP within a round trip; a spoofed REQ's REP
 * goes nowhere), as TCP stacks prune their oldest half-open connections:
 * REJ (timeout), QP to error, UNREACHABLE to the application. @return
 * whether one was given up.
 */
static bool half_open_evict(struct ibcm_listener *l)
{
	struct rnic_ibcm_conn *c = TAILQ_FIRST(&l->half_open);
	if (c == NULL || c->state != CM_REP_SENT ||
	    rte_get_tsc_cycles() - c->rep_tsc < rte_get_tsc_hz() / 1000000 * CM_HALF_OPEN_MIN_US)
		return false;
	struct rnic_ibcm_msg rej = { .attr = RNIC_IBCM_REJ, .local_id = c->lid,
				     .remote_id = c->rid, .msg = RNIC_IBCM_MSG_REP,
				     .reason = RNIC_IBCM_REJ_TIMEOUT };
	ctr(c->cm)->cm_half_open_evicted++;
	rnic_timer_cancel(&cm_worker(c->cm)->timers, &c->timer);
	conn_send(c, &rej);
	conn_qp_error(c);
	conn_timewait(c);   /* leaves the backlog */
	conn_event(c, RNIC_CM_EVENT_UNREACHABLE, -ETIMEDOUT, 0, NULL, 0);
	return true;
}

static void conn_timer_cb(struct rnic_timer *t, void *arg)
{
	(void)t;
	struct rnic_ibcm_conn *c = arg;
	if (c->state == CM_TIMEWAIT) {
		c->state = CM_DONE;
		conn_unhash(c);
		if (c->detached)
			conn_free(c);
		return;
	}
	if (c->state == CM_REQ_RCVD) {
		conn_decide_timeout(c);
		return;
	}
	if (c->state != CM_REQ_SENT && c->state != CM_REP_SENT && c->state != CM_DREQ_SENT)
		return;
	if (c->state == CM_REP_SENT && qp_is_rts(c)) {
		/* no RTU, but the peer's traffic established the QP: as an RTU */
		conn_consented(c);
		c->state = CM_ESTABLISHED;
		conn_event(c, RNIC_CM_EVENT_ESTABLISHED, 0, 0, NULL, 0);
		return;
	}
	if (c->retries_left == 0) {
		conn_give_up(c);
		return;
	}
	c->retries_left--;
	struct roce_counters *k = ctr(c->cm);
	if (c->state == CM_REQ_SENT)
		k->cm_req_resent++;
	else if (c->state == CM_REP_SENT)
		k->cm_rep_resent++;
	else
		k->cm_dreq_resent++;
	conn_send_mad(c);
	conn_arm(c, c->timeout_us);
}

/* --- receive: one handler per message --------------------------------------------------- */

struct rx_ctx {
	struct roce_cm *cm;
	struct rnic_port *p;
	struct rnic_addr src, dst;    /* of the packet */
	const struct rnic_ibcm_msg *m;
};

/* A listener for the REQ's service ID, or NULL. */
static struct ibcm_listener *listener_of(struct roce_cm *cm, uint64_t sid)
{
	uint16_t port;
	if (!rnic_ibcm_service_port(sid, &port) || port == 0)
		return NULL;
	for (unsigned i = 0; i < CM_MAX_LISTEN; i++)
		if (cm->listen[i].port == port)
			return &cm->listen[i];
	return NULL;
}

/* A duplicate REQ: answer from the connection's state (IBA 12.9.5). */
static void req_dup(struct rx_ctx *x, struct rnic_ibcm_conn *c)
{
	ctr(x->cm)->cm_dup_req++;
	switch (c->state) {
	case CM_REQ_RCVD: {
		/* the application has not decided yet: ask for patience */
		struct rnic_ibcm_msg mra = { .attr = RNIC_IBCM_MRA, .tid = c->tid,
					     .local_id = c->lid, .remote_id = c->rid,
					     .msg = RNIC_IBCM_MSG_REQ,
					     .service_timeout = CM_MRA_EXP };
		uint8_t mad[RNIC_MAD_LEN];
		if (rnic_ibcm_encode(&mra, mad) == 0) {
			ctr(x->cm)->cm_mra_out++;
			mad_send(x->cm, c->port, &c->local, &c->peer, mad);
		}
		break;
	}
	case CM_REP_SENT:
		conn_send_mad(c);     /* the REP again */
		break;
	case CM_TIMEWAIT:
		if (c->rejected)
			conn_send_mad(c);   /* the REJ it got */
		else
			rej_reply(x->cm, x->p, &x->dst, &x->src, x->m, RNIC_IBCM_MSG_REQ,
				  RNIC_IBCM_REJ_STALE_CONN);
		break;
	default:
		break;   /* established: the RTU is on its way or came */
	}
}

/* Check a new REQ: @return 0 or the REJ reason, with the CMA header read. */
static uint16_t req_check(struct rx_ctx *x, struct rnic_addr *peer, uint16_t *peer_port)
{
	const struct rnic_ibcm_msg *m = x->m;
	struct rnic_addr dst;
	if (m->ts_type != RNIC_IBCM_TS_RC)
		return RNIC_IBCM_REJ_INVALID_TRANSPORT;
	if (m->path_mtu < IBV_MTU_256 || m->path_mtu > IBV_MTU_4096)
		return RNIC_IBCM_REJ_INVALID_MTU;
	if (rnic_cma_hdr_get((const struct rnic_cma_hdr *)m->pdata, peer, &dst, peer_port) != 0)
		return RNIC_IBCM_REJ_INVALID_SERVICE;   /* the service's format needs the header */
	/* the CMA header's addresses are the packet's */
	if (!rnic_addr_eq(peer, &x->src) || !rnic_addr_eq(&dst, &x->dst) || m->qpn == 0)
		return RNIC_IBCM_REJ_INVALID_SERVICE;
	return 0;
}

/* How long the application may take to decide on @p m (CM_DECIDE_*). */
static uint32_t req_decide_us(const struct rnic_ibcm_msg *m)
{
	uint64_t us = (uint64_t)exp_us(m->remote_cm_timeout) * (m->max_cm_retries + 1u);
	return (uint32_t)RTE_MAX((uint64_t)CM_DECIDE_MIN_US, RTE_MIN(us, (uint64_t)CM_DECIDE_MAX_US));
}

static void rx_req(struct rx_ctx *x)
{
	const struct rnic_ibcm_msg *m = x->m;
	struct roce_cm *cm = x->cm;
	struct rnic_ibcm_conn *c = conn_by_req(cm, &x->src, m);
	if (c != NULL) {
		req_dup(x, c);
		return;
	}
	struct ibcm_listener *l = listener_of(cm, m->service_id);
	if (l == NULL) {
		ctr(cm)->cm_no_listener++;
		rej_reply(cm, x->p, &x->dst, &x->src, m, RNIC_IBCM_MSG_REQ,
			  RNIC_IBCM_REJ_INVALID_SERVICE);
		return;
	}
	struct rnic_addr peer;
	uint16_t peer_port;
	uint16_t why = req_check(x, &peer, &peer_port);
	if (why != 0) {
		ctr(cm)->cm_bad_req++;
		rej_reply(cm, x->p, &x->dst, &x->src, m, RNIC_IBCM_MSG_REQ, why);
		return;
	}
	/* a REQ costs a connection, an id and an event until the application
	 * decides: no more than the listener's backlog, nor more than the
	 * port's bound of unaccepted ones (REJ no resources, as for a failed
	 * allocation, without allocating) */
	bool full = l->pending >= l->backlog;
	if (full && half_open_evict(l))
		full = false;
	if (full || cm->unaccepted[x->p->idx] >= CM_PORT_UNACCEPTED_MAX) {
		if (full)
			ctr(cm)->cm_backlog_full++;
		else
			ctr(cm)->cm_port_limit++;
		rej_reply(cm, x->p, &x->dst, &x->src, m, RNIC_IBCM_MSG_REQ,
			  RNIC_IBCM_REJ_NO_RESOURCES);
		return;
	}
	c = conn_new(cm, x->p);
	if (c == NULL) {
		rej_reply(cm, x->p, &x->dst, &x->src, m, RNIC_IBCM_MSG_REQ,
			  RNIC_IBCM_REJ_NO_RESOURCES);
		return;
	}
	c->state = CM_REQ_RCVD;
	c->unaccepted = true;
	cm->unaccepted[x->p->idx]++;
	c->lst = l;
	c->lgen = l->gen;
	l->pending++;
	c->local = x->dst;
	c->peer = peer;
	c->peer_port = peer_port;
	c->rid = m->local_id;
	c->tid = m->tid;
	c->peer_guid = m->ca_guid;
	conn_hash_req(c);
	c->rqpn = m->qpn;
	c->rpsn = m->psn;
	c->mtu = RTE_MIN(m->path_mtu, port_mtu(x->p, &c->peer));
	/* the REQ's responder resources are what it may read from us at once:
	 * our ORD is bounded by them, our IRD by its initiator depth */
	c->ird = m->idepth;
	c->ord = m->rres;
	c->retry_cnt = m->retry_cnt;
	c->rnr_retry = m->rnr_retry;
	c->ack_timeout = m->ack_timeout ? m->ack_timeout : CM_ACK_TIMEOUT;
	c->tclass = m->tclass;
	c->ops = l->ops;
	c->ctx = l->ops->request((struct rnic_tp_conn *)c, l->lctx, RNIC_TRANSPORT_ROCE,
				 cm->st->workers[0], m->pdata + RNIC_CMA_HDR_LEN,
				 RNIC_IBCM_REQ_USER_PDATA);
	if (c->ctx == NULL) {
		struct rnic_ibcm_msg rej = { .attr = RNIC_IBCM_REJ, .local_id = c->lid,
					     .remote_id = c->rid, .msg = RNIC_IBCM_MSG_REQ,
					     .reason = RNIC_IBCM_REJ_NO_RESOURCES };
		c->detached = true;
		conn_send(c, &rej);
		conn_timewait(c);
		return;
	}
	conn_arm(c, req_decide_us(m));
}

/* A message for one of our connections: by its remote comm ID (ours),
 * with the sender's comm ID checked once we know it. */
static struct rnic_ibcm_conn *conn_of_msg(struct rx_ctx *x)
{
	const struct rnic_ibcm_msg *m = x->m;
	struct rnic_ibcm_conn *c = conn_by_lid(x->cm, m->remote_id);
	if (c == NULL) {
		ctr(x->cm)->cm_unknown_comm_id++;
		return NULL;
	}
	bool rid_known = c->state != CM_REQ_SENT;
	if (!rnic_addr_eq(&c->peer, &x->src) || (rid_known && c->rid != m->local_id)) {
		ctr(x->cm)->cm_stale++;   /* an older connection's, or forged */
		return NULL;
	}
	return c;
}

static void rx_rep(struct rx_ctx *x)
{
	const struct rnic_ibcm_msg *m = x->m;
	struct rnic_ibcm_conn *c = conn_by_lid(x->cm, m->remote_id);
	if (c == NULL || !c->active) {
		ctr(x->cm)->cm_unknown_comm_id++;
		rej_reply(x->cm, x->p, &x->dst, &x->src, m, RNIC_IBCM_MSG_REP,
			  RNIC_IBCM_REJ_INVALID_COMM_ID);
		return;
	}
	if ((c = conn_of_msg(x)) == NULL)
		return;
	if (c->state == CM_ESTABLISHED) {   /* our RTU was lost */
		ctr(x->cm)->cm_dup_rep++;
		conn_send_mad(c);
		return;
	}
	if (c->state != CM_REQ_SENT) {
		ctr(x->cm)->cm_stale++;
		return;
	}
	rnic_timer_cancel(&cm_worker(x->cm)->timers, &c->timer);
	c->rid = m->local_id;
	c->rqpn = m->qpn;
	c->rpsn = m->psn;
	c->peer_guid = m->ca_guid;
	c->rnr_retry = m->rnr_retry;
	c->ird = RTE_MIN(c->ird, m->idepth);
	c->ord = RTE_MIN(c->ord, m->rres);
	if (c->qp == NULL || m->qpn == 0 || qp_rtr(c) != 0 || qp_rts(c) != 0) {
		struct rnic_ibcm_msg rej = { .attr = RNIC_IBCM_REJ, .local_id = c->lid,
					     .remote_id = c->rid, .msg = RNIC_IBCM_MSG_REP,
					     .reason = RNIC_IBCM_REJ_NO_RESOURCES };
		ctr(x->cm)->cm_qp_errors++;
		conn_send(c, &rej);
		conn_qp_error(c);
		conn_timewait(c);
		conn_event(c, RNIC_CM_EVENT_CONNECT_ERROR, -EPROTO, 0, NULL, 0);
		return;
	}
	struct rnic_ibcm_msg rtu = { .attr = RNIC_IBCM_RTU, .local_id = c->lid, .remote_id = c->rid };
	conn_send(c, &rtu);
	c->state = CM_ESTABLISHED;
	conn_event(c, RNIC_CM_EVENT_ESTABLISHED, 0, 0, m->pdata, RNIC_IBCM_REP_PDATA);
}

static void rx_rtu(struct rx_ctx *x)
{
	struct rnic_ibcm_conn *c = conn_of_msg(x);
	if (c == NULL)
		return;
	if (c->state != CM_REP_SENT) {
		ctr(x->cm)->cm_dups++;
		return;
	}
	rnic_timer_cancel(&cm_worker(x->cm)->timers, &c->timer);
	conn_consented(c);   /* the peer answered our REP */
	if (c->qp == NULL || qp_rts(c) != 0) {
		struct rnic_ibcm_msg dreq = { .attr = RNIC_IBCM_DREQ, .local_id = c->lid,
					      .remote_id = c->rid, .qpn = c->rqpn };
		ctr(x->cm)->cm_qp_errors++;
		conn_qp_error(c);
		conn_send(c, &dreq);
		c->state = CM_DREQ_SENT;
		conn_retry_start(c, c->cm->retries);
		conn_event(c, RNIC_CM_EVENT_CONNECT_ERROR, -EPROTO, 0, NULL, 0);
		return;
	}
	c->state = CM_ESTABLISHED;
	conn_event(c, RNIC_CM_EVENT_ESTABLISHED, 0, 0, NULL, 0);
}

static void rx_rej(struct rx_ctx *x)
{
	const struct rnic_ibcm_msg *m = x->m;
	struct rnic_ibcm_conn *c = conn_of_msg(x);
	if (c == NULL)
		return;
	enum cm_state was = c->state;
	if (was == CM_TIMEWAIT || was == CM_REQ_RCVD) {
		/* REQ_RCVD: the active side gave up (a REJ timeout) */
		if (was == CM_REQ_RCVD) {
			conn_timewait(c);
			conn_event(c, RNIC_CM_EVENT_DISCONNECTED, -ECONNRESET, m->reason, NULL, 0);
		}
		return;
	}
	rnic_timer_cancel(&cm_worker(x->cm)->timers, &c->timer);
	conn_qp_error(c);
	conn_timewait(c);
	if (was == CM_REQ_SENT || was == CM_REP_SENT) {
		int st = m->reason == RNIC_IBCM_REJ_CONSUMER ? -ECONNREFUSED : -EPROTO;
		if (m->reason == RNIC_IBCM_REJ_INVALID_SERVICE && was == CM_REQ_SENT)
			conn_event(c, RNIC_CM_EVENT_UNREACHABLE, -ECONNREFUSED, m->reason,
				   NULL, 0);   /* nobody listens: as a TCP RST */
		else
			conn_event(c, RNIC_CM_EVENT_REJECTED, st, m->reason, m->pdata,
				   RNIC_IBCM_REJ_PDATA);
	} else {
		conn_event(c, RNIC_CM_EVENT_DISCONNECTED, -ECONNRESET, m->reason, NULL, 0);
	}
}

static void rx_mra(struct rx_ctx *x)
{
	const struct rnic_ibcm_msg *m = x->m;
	struct rnic_ibcm_conn *c = conn_of_msg(x);
	if (c == NULL)
		return;
	ctr(x->cm)->cm_mra_in++;
	bool ours = (m->msg == RNIC_IBCM_MSG_REQ && c->state == CM_REQ_SENT) ||
		    (m->msg == RNIC_IBCM_MSG_REP && c->state == CM_REP_SENT);
	if (!ours)
		return;
	/* the peer is alive but slow: wait its service timeout plus our
	 * response timeout before the next try, without spending a retry */
	conn_arm(c, exp_us(m->service_timeout) + exp_us(x->cm->resp_exp));
}

/* A DREP from the connection's comm IDs (also for one we no longer know). */
static void drep_reply(struct rx_ctx *x)
{
	struct rnic_ibcm_msg r = { .attr = RNIC_IBCM_DREP, .tid = x->m->tid,
				   .local_id = x->m->remote_id, .remote_id = x->m->local_id };
	uint8_t mad[RNIC_MAD_LEN];
	if (rnic_ibcm_encode(&r, mad) == 0)
		mad_send(x->cm, x->p, &x->dst, &x->src, mad);
}

static void rx_dreq(struct rx_ctx *x)
{
	const struct rnic_ibcm_msg *m = x->m;
	struct rnic_ibcm_conn *c = conn_of_msg(x);
	if (c == NULL || (c->qp != NULL && m->qpn != c->qp->qp.qp_num)) {
		drep_reply(x);   /* IBA 12.9.6: answer, so the peer stops */
		return;
	}
	switch (c->state) {
	case CM_REP_SENT:      /* the RTU was lost, the peer is done already */
	case CM_ESTABLISHED:
	case CM_DREQ_SENT: {   /* both closed at once */
		rnic_timer_cancel(&cm_worker(x->cm)->timers, &c->timer);
		conn_qp_error(c);
		struct rnic_ibcm_msg drep = { .attr = RNIC_IBCM_DREP, .local_id = c->lid,
					      .remote_id = c->rid };
		c->tid = m->tid;
		conn_send(c, &drep);
		conn_timewait(c);
		conn_event(c, RNIC_CM_EVENT_DISCONNECTED, 0, 0, NULL, 0);
		break;
	}
	case CM_TIMEWAIT:
		ctr(x->cm)->cm_dup_dreq++;   /* our DREP was lost */
		drep_reply(x);
		break;
	default:
		ctr(x->cm)->cm_stale++;
		break;
	}
}

static void rx_drep(struct rx_ctx *x)
{
	struct rnic_ibcm_conn *c = conn_of_msg(x);
	if (c == NULL)
		return;
	if (c->state != CM_DREQ_SENT) {
		ctr(x->cm)->cm_dups++;
		return;
	}
	rnic_timer_cancel(&cm_worker(x->cm)->timers, &c->timer);
	conn_timewait(c);
	conn_event(c, RNIC_CM_EVENT_DISCONNECTED, 0, 0, NULL, 0);
}

static const struct {
	uint16_t attr;
	void (*fn)(struct rx_ctx *x);
} rx_table[] = {
	{ RNIC_IBCM_REQ, rx_req },
	{ RNIC_IBCM_MRA, rx_mra },
	{ RNIC_IBCM_REJ, rx_rej },
	{ RNIC_IBCM_REP, rx_rep },
	{ RNIC_IBCM_RTU, rx_rtu },
	{ RNIC_IBCM_DREQ, rx_dreq },
	{ RNIC_IBCM_DREP, rx_drep },
};

/* Count a decode refusal under its cause's counter. */
static void count_bad(struct roce_cm *cm, enum rnic_ibcm_bad why)
{
	struct roce_counters *c = ctr(cm);
	switch (why) {
#define CM_BAD_COUNT(n) case RNIC_IBCM_BAD_##n: c->n++; break;
	RNIC_IBCM_BAD_CAUSES(CM_BAD_COUNT)
#undef CM_BAD_COUNT
	default:
		break;
	}
}

void roce_cm_input(struct rnic_worker *w, struct rnic_port *p, const struct rnic_roce_pkt *pkt,
		   const struct rte_mbuf *mb, uint32_t pay_off, const struct roce_l3 *l3)
{
	struct roce_cm *cm = cm_of(w->st);
	struct rnic_ibcm_msg m;
	enum rnic_ibcm_bad why;
	uint8_t mad[RNIC_MAD_LEN];
	if (cm == NULL || w != cm_worker(cm))
		return;
	ctr(cm)->cm_mads_in++;
	/* QP1 takes UD Sends only, with the default P_Key and the GSI Q_Key
	 * (IBA 13.5.3; rxe's check_keys() refuses the same) */
	if (pkt->opcode != RNIC_ROCE_OP_UD_SEND_ONLY) {
		ctr(cm)->cm_bad_opcode++;
		return;
	}
	if ((rnic_roce_bth_pkey(rnic_roce_pkt_bth(pkt)) & RNIC_ROCE_PKEY_MASK) !=
	    (RNIC_ROCE_PKEY_DEFAULT & RNIC_ROCE_PKEY_MASK)) {
		ctr(cm)->cm_bad_pkey++;
		return;
	}
	if (rnic_roce_deth_qkey(rnic_roce_pkt_deth(pkt)) != RNIC_GSI_QKEY) {
		ctr(cm)->cm_bad_qkey++;
		return;
	}
	if (pkt->paylen != RNIC_MAD_LEN) {
		ctr(cm)->cm_mad_len++;
		return;
	}
	roce_mbuf_copy(mb, pay_off, mad, RNIC_MAD_LEN);
	if (rnic_ibcm_decode(&m, mad, RNIC_MAD_LEN, &why) != 0) {
		count_bad(cm, why);
		return;
	}
	struct rx_ctx x = { .cm = cm, .p = p, .src = l3->src, .dst = l3->dst, .m = &m };
	for (unsigned i = 0; i < RTE_DIM(rx_table); i++)
		if (rx_table[i].attr == m.attr) {
			rx_table[i].fn(&x);
			return;
		}
}

/* --- application calls (run on worker 0) -------------------------------------------- */

struct call {
	struct roce_cm *cm;
	struct rnic_ibcm_conn *c;
	struct rnic_qp *qp;
	struct rnic_addr ip;
	uint16_t port;
	const struct rnic_ibcm_params *p;
	const struct rnic_ibcm_ops *ops;
	void *ctx;
	const void *pdata;
	uint16_t len;
	int rc;
};

static struct rnic_worker *st_w0(struct rnic_stack *st)
{
	return st->workers[0];
}

struct listen_args {
	struct roce_cm *cm;
	uint16_t port;
	uint32_t backlog;
	const struct rnic_ibcm_ops *ops;
	void *lctx;
	int rc;
};

static void do_listen(struct rnic_worker *w, void *arg)
{
	(void)w;
	struct listen_args *a = arg;
	struct ibcm_listener *free_slot = NULL;
	for (unsigned i = 0; i < CM_MAX_LISTEN; i++) {
		struct ibcm_listener *l = &a->cm->listen[i];
		if (l->port == a->port) {
			a->rc = a->ops ? -EADDRINUSE : 0;
			if (a->ops == NULL) {
				l->port = 0;   /* unlisten: its requests count no more */
				l->pending = 0;
				l->gen++;
				struct rnic_ibcm_conn *h;
				while ((h = TAILQ_FIRST(&l->half_open)) != NULL) {
					TAILQ_REMOVE(&l->half_open, h, half_link);
					h->in_half = false;
				}
			}
			return;
		}
		if (l->port == 0 && free_slot == NULL)
			free_slot = l;
	}
	if (a->ops == NULL) {
		a->rc = 0;
		return;
	}
	if (free_slot == NULL) {
		a->rc = -ENOSPC;
		return;
	}
	*free_slot = (struct ibcm_listener){ .port = a->port, .ops = a->ops, .lctx = a->lctx,
					     .backlog = a->backlog, .gen = free_slot->gen + 1 };
	TAILQ_INIT(&free_slot->half_open);
	a->rc = 0;
}

int rnic_ibcm_listen(struct rnic_stack *st, uint16_t port, int backlog,
		     const struct rnic_ibcm_ops *ops, void *lctx)
{
	struct listen_args a = { .cm = cm_of(st), .port = port, .ops = ops, .lctx = lctx,
				 .backlog = (uint32_t)backlog };
	if (a.cm == NULL || port == 0 || ops == NULL || backlog <= 0)
		return -EINVAL;
	rnic_worker_call_sync(st_w0(st), do_listen, &a);
	return a.rc;
}

void rnic_ibcm_unlisten(struct rnic_stack *st, uint16_t port)
{
	struct listen_args a = { .cm = cm_of(st), .port = port };
	if (a.cm != NULL)
		rnic_worker_call_sync(st_w0(st), do_listen, &a);
}

/* Build and send the REQ of a new active connection. */
static void do_connect(struct rnic_worker *w, void *arg)
{
	(void)w;
	struct call *a = arg;
	struct roce_cm *cm = a->cm;
	struct roce_qp *rq = rq_of(a->qp);
	unsigned pidx = rq->port_num >= 1 && rq->port_num <= cm->st->n_ports ? rq->port_num - 1u : 0;
	struct rnic_port *p = cm->st->ports[pidx];
	struct rnic_ibcm_conn *c = conn_new(cm, p);
	if (c == NULL) {
		a->rc = -ENOMEM;
		return;
	}
	c->active = true;
	c->state = CM_REQ_SENT;
	c->qp = a->qp;
	c->peer = a->ip;
	if (a->ip.family == RNIC_AF_INET6) {
		/* the source for the destination (RFC 6724), as a TCP client */
		c->local.family = RNIC_AF_INET6;
		if (rnic_port_ip6_src(p, a->ip.v6, c->local.v6) != 0) {
			conn_free(c);
			a->rc = -EADDRNOTAVAIL;
			return;
		}
	}
	c->peer_port = a->port;
	c->tid = cm->next_tid++;
	c->lpsn = (uint32_t)rte_rand() & RNIC_PSN_MASK;
	c->mtu = port_mtu(p, &c->peer);
	c->ird = a->p->ird;
	c->ord = a->p->ord;
	c->retry_cnt = CM_RETRY_CNT;
	c->rnr_retry = CM_RNR_RETRY;
	c->ack_timeout = CM_ACK_TIMEOUT;
	c->ops = a->ops;
	c->ctx = a->ctx;
	struct rnic_ibcm_msg m = {
		.attr = RNIC_IBCM_REQ, .local_id = c->lid,
		.service_id = rnic_ibcm_service_id(a->port), .ca_guid = port_guid(p),
		.qpn = a->qp->qp.qp_num, .psn = c->lpsn, .rres = c->ird, .idepth = c->ord,
		.remote_cm_timeout = cm->resp_exp, .local_cm_timeout = cm->resp_exp,
		.ts_type = RNIC_IBCM_TS_RC, .retry_cnt = c->retry_cnt, .rnr_retry = CM_RNR_RETRY,
		.path_mtu = c->mtu, .max_cm_retries = cm->retries, .pkey = RNIC_ROCE_PKEY_DEFAULT,
		/* RoCE has no LIDs: the permissive LID, as Linux sends a routed path */
		.local_lid = 0xffff, .remote_lid = 0xffff, .hop_limit = 64,
		.rate = 3 /* 10 Gb/s */, .ack_timeout = c->ack_timeout,
		.pdata_len = RNIC_IBCM_REQ_PDATA,
	};
	rnic_addr_gid(&c->local, m.local_gid);
	rnic_addr_gid(&c->peer, m.remote_gid);
	/* the CMA header's source port: an ephemeral one, as a TCP client */
	uint16_t sport = (uint16_t)(0xc000u | (rte_rand() & 0x3fffu));
	rnic_cma_hdr_set((struct rnic_cma_hdr *)m.pdata, &c->local, &c->peer, sport);
	if (a->p->pdata_len)
		memcpy(m.pdata + RNIC_CMA_HDR_LEN, a->p->pdata, a->p->pdata_len);
	conn_send(c, &m);
	conn_retry_start(c, cm->retries);
	a->c = c;
	a->rc = 0;
}

int rnic_ibcm_connect(struct rnic_stack *st, struct rnic_qp *qp, const struct rnic_addr *ip,
		      uint16_t port,
		      const struct rnic_ibcm_params *p, const struct rnic_ibcm_ops *ops,
		      void *ctx, struct rnic_ibcm_conn **out)
{
	struct call a = { .cm = cm_of(st), .qp = qp, .ip = *ip, .port = port, .p = p, .ops = ops,
			  .ctx = ctx };
	if (a.cm == NULL || qp == NULL || p == NULL || port == 0 ||
	    (ip->family == RNIC_AF_INET ? ip->v4 == 0
	     : ip->family != RNIC_AF_INET6 || rnic_ip6_is_unspecified(ip->v6)) ||
	    p->pdata_len > RNIC_IBCM_REQ_USER_PDATA || qp->qp.qp_type != IBV_QPT_RC)
		return -EINVAL;
	int rc = qp_init(qp, 1);
	if (rc != 0)
		return -EINVAL;
	rnic_worker_call_sync(st_w0(st), do_connect, &a);
	if (a.rc == 0)
		*out = a.c;
	return a.rc;
}

static void do_accept(struct rnic_worker *w, void *arg)
{
	(void)w;
	struct call *a = arg;
	struct rnic_ibcm_conn *c = a->c;
	if (c->state != CM_REQ_RCVD) {
		a->rc = -ENOTCONN;   /* the peer gave up meanwhile */
		return;
	}
	c->qp = a->qp;
	c->ird = RTE_MIN(c->ird, a->p->ird);
	c->ord = RTE_MIN(c->ord, a->p->ord);
	c->lpsn = (uint32_t)rte_rand() & RNIC_PSN_MASK;
	if (qp_init(a->qp, c->port->idx + 1) != 0 || qp_rtr(c) != 0) {
		c->qp = NULL;
		a->rc = -EINVAL;
		return;
	}
	struct ibv_qp_attr rts;
	rts_attr(c, &rts);
	roce_qp_arm_comm_est(a->qp, &rts, CM_RTS_MASK);
	struct rnic_ibcm_msg m = {
		.attr = RNIC_IBCM_REP, .local_id = c->lid, .remote_id = c->rid,
		.qpn = a->qp->qp.qp_num, .psn = c->lpsn, .rres = c->ird, .idepth = c->ord,
		.target_ack_delay = 15, .rnr_retry = CM_RNR_RETRY,
		.ca_guid = port_guid(c->port), .pdata_len = a->p->pdata_len,
	};
	if (a->p->pdata_len)
		memcpy(m.pdata, a->p->pdata, a->p->pdata_len);
	rnic_timer_cancel(&cm_worker(c->cm)->timers, &c->timer);   /* the decide timer */
	if (c->lst != NULL && c->lst->gen == c->lgen) {
		TAILQ_INSERT_TAIL(&c->lst->half_open, c, half_link);
		c->in_half = true;
		c->rep_tsc = rte_get_tsc_cycles();
	}
	conn_send(c, &m);
	c->state = CM_REP_SENT;
	conn_retry_start(c, c->cm->retries);
	a->rc = 0;
}

int rnic_ibcm_accept(struct rnic_ibcm_conn *c, struct rnic_qp *qp,
		     const struct rnic_ibcm_params *p)
{
	struct call a = { .cm = c ? c->cm : NULL, .c = c, .qp = qp, .p = p };
	if (c == NULL || qp == NULL || p == NULL || p->pdata_len > RNIC_IBCM_REP_PDATA ||
	    qp->qp.qp_type != IBV_QPT_RC)
		return -EINVAL;
	rnic_worker_call_sync(st_w0(c->cm->st), do_accept, &a);
	return a.rc;
}

static void do_reject(struct rnic_worker *w, void *arg)
{
	(void)w;
	struct call *a = arg;
	struct rnic_ibcm_conn *c = a->c;
	if (c->state != CM_REQ_RCVD) {
		a->rc = -ENOTCONN;
		return;
	}
	struct rnic_ibcm_msg m = { .attr = RNIC_IBCM_REJ, .local_id = c->lid, .remote_id = c->rid,
				   .msg = RNIC_IBCM_MSG_REQ, .reason = RNIC_IBCM_REJ_CONSUMER,
				   .pdata_len = a->len };
	if (a->len)
		memcpy(m.pdata, a->pdata, a->len);
	conn_send(c, &m);
	conn_timewait(c);
	a->rc = 0;
}

int rnic_ibcm_reject(struct rnic_ibcm_conn *c, const void *pdata, uint16_t len)
{
	struct call a = { .c = c, .pdata = pdata, .len = len };
	if (c == NULL || len > RNIC_IBCM_REJ_PDATA || (len && pdata == NULL))
		return -EINVAL;
	rnic_worker_call_sync(st_w0(c->cm->st), do_reject, &a);
	return a.rc;
}

/* Close what the connection is doing now; @p quiet: no event (detach). */
static int conn_close(struct rnic_ibcm_conn *c)
{
	struct rnic_ibcm_msg m = { .local_id = c->lid, .remote_id = c->rid };
	switch (c->state) {
	case CM_REQ_SENT:
	case CM_REQ_RCVD:
		m.attr = RNIC_IBCM_REJ;
		m.msg = RNIC_IBCM_MSG_REQ;
		m.reason = c->state == CM_REQ_SENT ? RNIC_IBCM_REJ_TIMEOUT : RNIC_IBCM_REJ_CONSUMER;
		rnic_timer_cancel(&cm_worker(c->cm)->timers, &c->timer);
		conn_send(c, &m);
		conn_qp_error(c);
		conn_timewait(c);
		return 0;
	case CM_REP_SENT:
	case CM_ESTABLISHED:
		rnic_timer_cancel(&cm_worker(c->cm)->timers, &c->timer);
		conn_qp_error(c);
		m.attr = RNIC_IBCM_DREQ;
		m.qpn = c->rqpn;
		c->tid = c->cm->next_tid++;
		conn_send(c, &m);
		c->state = CM_DREQ_SENT;
		conn_retry_start(c, c->cm->retries);
		return 0;
	default:
		return -ENOTCONN;
	}
}

static void do_disconnect(struct rnic_worker *w, void *arg)
{
	(void)w;
	struct call *a = arg;
	if (a->c->state == CM_REQ_SENT || a->c->state == CM_REQ_RCVD) {
		a->rc = -ENOTCONN;   /* not connected: reject or destroy the id */
		return;
	}
	a->rc = conn_close(a->c);
}

int rnic_ibcm_disconnect(struct rnic_ibcm_conn *c)
{
	struct call a = { .c = c };
	if (c == NULL)
		return -ENOTCONN;
	rnic_worker_call_sync(st_w0(c->cm->st), do_disconnect, &a);
	return a.rc;
}

static void do_detach(struct rnic_worker *w, void *arg)
{
	(void)w;
	struct rnic_ibcm_conn *c = ((struct call *)arg)->c;
	c->detached = true;
	(void)conn_close(c);   /* nothing to close in timewait */
	c->qp = NULL;
	if (c->state == CM_DONE)
		conn_free(c);
}

void rnic_ibcm_detach(struct rnic_ibcm_conn *c)
{
	struct call a = { .c = c };
	if (c != NULL)
		rnic_worker_call_sync(st_w0(c->cm->st), do_detach, &a);
}

void rnic_ibcm_conn_info(const struct rnic_ibcm_conn *c, uint16_t *ird, uint16_t *ord,
			 struct rnic_addr *ip, uint16_t *port)
{
	*ird = c->ird;
	*ord = c->ord;
	*ip = c->peer;
	*port = c->peer_port;
}

unsigned rnic_ibcm_conn_count(struct rnic_stack *st)
{
	struct roce_cm *cm = cm_of(st);
	return cm != NULL ? __atomic_load_n(&cm->n_conns, __ATOMIC_RELAXED) : 0;
}

struct tmo_args {
	struct roce_cm *cm;
	uint8_t exp, retries;
};

static void do_timeouts(struct rnic_worker *w, void *arg)
{
	(void)w;
	struct tmo_args *a = arg;
	if (a->exp)
		a->cm->resp_exp = RTE_MIN(a->exp, (uint8_t)31);
	if (a->retries)
		a->cm->retries = RTE_MIN(a->retries, (uint8_t)15);
}

void rnic_ibcm_set_timeouts(struct rnic_stack *st, uint8_t resp_exp, uint8_t retries)
{
	struct tmo_args a = { .cm = cm_of(st), .exp = resp_exp, .retries = retries };
	if (a.cm != NULL)
		rnic_worker_call_sync(st_w0(st), do_timeouts, &a);
}

/* --- stack life cycle ------------------------------------------------------------------ */

int roce_cm_stack_init(struct rnic_stack *st)
{
	struct roce_cm *cm = calloc(1, sizeof(*cm));
	if (cm == NULL)
		return -ENOMEM;
	cm->st = st;
	TAILQ_INIT(&cm->conns);
	if (ibcm_hash_init(&cm->by_lid, 1024) != 0 || ibcm_hash_init(&cm->by_req, 1024) != 0) {
		ibcm_hash_fini(&cm->by_lid);
		free(cm);
		return -ENOMEM;
	}
	/* random first IDs: a peer still holding an earlier process's
	 * connection does not take ours for it */
	cm->next_id = (uint32_t)rte_rand();
	cm->next_tid = rte_rand() & 0xffffffffull;
	cm->resp_exp = CM_RESP_EXP;
	cm->retries = CM_RETRIES;
	st->proto[RNIC_PROTO_ROCE] = cm;
	return 0;
}

void roce_cm_stack_fini(struct rnic_stack *st)
{
	struct roce_cm *cm = cm_of(st);
	if (cm == NULL)
		return;
	/* the workers are stopped: nothing runs the timers any more, but a
	 * connection's timer must leave the wheel before it is freed: the
	 * wheel's lists are shared with the other protocols' timers, whose
	 * own teardown cancels them after this (a freed one still linked was
	 * written to: ASan, roce_cm_ipv6 with a connection in TIMEWAIT) */
	while (!TAILQ_EMPTY(&cm->conns))
		conn_free(TAILQ_FIRST(&cm->conns));
	ibcm_hash_fini(&cm->by_lid);
	ibcm_hash_fini(&cm->by_req);
	free(cm);
	st->proto[RNIC_PROTO_ROCE] = NULL;
}
