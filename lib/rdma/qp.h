/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The queue pair as the transports see it, and the transport interface.
 *
 * Layering (docs/design.md): lib/verbs sits above the transports
 * (lib/iwarp, lib/roce), which sit above this RDMA core (lib/rdma). So
 * the QP object, the transport operations table and the calls a
 * transport makes back into the QP's consumer are defined here, and
 * nothing here names a transport or the verbs layer:
 *
 *   verbs -> rnic_transport(st, t)->op(qp, ...)      (down, through the table)
 *   transport -> rnic_qp_complete(qp, ...)           (up, through qp->up,
 *                                                     filled by the consumer)
 *
 * Each transport fills its table once per stack (rnic_transport_register,
 * from its protocol module's stack_init).
 */
#ifndef RNIC_RDMA_QP_H
#define RNIC_RDMA_QP_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <infiniband/verbs.h>
#include <rte_spinlock.h>

#include "rdma/stag.h"
#include "rdma/wq.h"
#include "rnic/rnic_cm.h"
#include "rnic/rnic_verbs.h"

struct rnic_stack;
struct rnic_worker;
struct rnic_device;
struct rnic_tcp_conn;
struct rte_tel_data;

/* Transports have numbers RNIC_TRANSPORT_IWARP .. RNIC_TRANSPORT_ROCE. */
#define RNIC_TRANSPORT_COUNT (RNIC_TRANSPORT_ROCE + 1)

struct rnic_mr {
	struct ibv_mr mr;
	struct rnic_mem m;
};

struct rnic_mw {
	struct ibv_mw mw;
	struct rnic_mem m;
};

/* An address handle (UD): where datagrams to it go. */
struct rnic_ah {
	struct ibv_ah ah;             /* first */
	struct rnic_addr src, dst;    /* RoCE: the source GID's and the DGID's */
	uint8_t tos;
	uint8_t port_num;
	uint8_t hop_limit;            /* RoCE: IPv6 hop limit / IPv4 TTL (0: 64) */
	uint32_t flow_label;          /* RoCE over IPv6 (0: the QP pair's) */
};

/* A send work request as the worker sees it. */
struct rnic_swqe {
	uint64_t wr_id;
	struct ibv_send_wr wr;        /* wr.sg_list -> sge; wr.next unused */
	struct ibv_sge sge[RNIC_MAX_SGE];
	uint8_t inl[RNIC_MAX_INLINE];
	struct rnic_mw *mw;           /* BIND_MW */
	struct ibv_mw_bind_info bind;
	uint32_t mw_rkey;
	uint32_t byte_len;
	volatile uint8_t done;
	uint8_t status;               /* enum ibv_wc_status */
	uint8_t opcode;               /* enum ibv_wc_opcode */
};

enum rnic_qp_conn { QP_IDLE, QP_CONNECTING, QP_CONNECTED, QP_CLOSED };

struct rnic_qp;
struct rnic_qp_tops;

/*
 * What a transport calls on a QP's consumer (lib/verbs fills it). All on
 * the QP's worker but modify (any thread but a worker).
 */
struct rnic_qp_upcalls {
	/* one completion: send-queue work carries its SQ ordinal in wr_id */
	void (*complete)(struct rnic_qp *qp, const struct ibv_wc *wc, bool solicited);
	/* the transport can take more work */
	void (*tx_room)(struct rnic_qp *qp);
	/* the connection reached RDMA mode: RTS, queued work starts */
	void (*established)(struct rnic_qp *qp);
	/* the connection is gone: QP to ERR, everything flushed */
	void (*conn_lost)(struct rnic_qp *qp);
	/* a state change as ibv_modify_qp makes it (the IB CM). @return 0 or -errno */
	int (*modify)(struct rnic_qp *qp, struct ibv_qp_attr *attr, int mask);
	/* any thread: the worker the consumer wants the QP's work on (that of
	 * its send CQ's completion handler, docs/verbs.md) */
	struct rnic_worker *(*home)(struct rnic_qp *qp);
};

struct rnic_qp {
	struct ibv_qp qp;             /* first */
	struct rnic_device *dev;      /* the consumer's device (opaque here) */
	struct rnic_stack *st;
	/* struct ibv_qp_cap without max_inline_data (RNIC_MAX_INLINE for
	 * every QP), in the fewest bytes its limits allow (RNIC_MAX_QP_WR,
	 * RNIC_MAX_SGE); then the flags: no padding between members (480 ->
	 * 472 -> 456 bytes, issue 21; pahole shows none) */
	uint32_t max_send_wr, max_recv_wr;
	uint16_t max_send_sge, max_recv_sge;
	uint8_t transport;            /* enum rnic_transport */
	bool sq_sig_all;
	bool draining;
	bool drain_again;          /* room came while draining: go round again */
	bool in_error;
	/* a completion found its CQ full: IBV_EVENT_QP_FATAL raised, the
	 * transport is stopped from the verbs poller (fatal_pending) */
	bool fatal;

	/* send queue: app threads produce under sq_lock; the worker hands
	 * entries to the transport (sq_cons) and retires them in order */
	uint32_t sq_size;
	struct rnic_swqe *sq;
	uint32_t sq_mask;
	volatile uint32_t sq_prod, sq_cons, sq_retired;
	rte_spinlock_t sq_lock;
	unsigned async_got;           /* async events taken (async_acked: acked) */

	struct rnic_rq rq;            /* unused when an SRQ is attached */
	struct rnic_rq *rqp;          /* &rq or the SRQ's */

	/* worker side */
	struct rnic_worker *w;        /* owner once connected */
	const struct rnic_qp_tops *tops;      /* its transport */
	const struct rnic_qp_upcalls *up;     /* its consumer */
	void *tp;                     /* the transport's per-QP state (iWARP:
				       * the bound endpoint, NULL when none) */
	volatile int db_pending;
	volatile int conn;            /* enum rnic_qp_conn */
	volatile int fatal_pending;   /* see fatal */
	unsigned async_acked;
	void *cm_id;

	struct rnic_qp_xfer xfer;     /* written by the transport */
	uint64_t send_wrs, recv_wrs, completions, flushed;
	uint64_t fpdus_in, fpdus_out;
	uint64_t sq_full, rq_full;    /* posts refused with ENOMEM (queue full) */
};

/* The QP whose libibverbs face is @p q (the first member). */
static inline struct rnic_qp *rnic_qp_of(struct ibv_qp *q)
{
	return (struct rnic_qp *)q;
}

/* --- the connection manager's side of a transport ------------------------------ */

/* A transport's connection (an iWARP endpoint, an IB CM connection):
 * opaque to the CM. */
struct rnic_tp_conn;

/* What a transport's connection manager calls on the CM (lib/verbs/cm.c),
 * on the connection's worker. */
struct rnic_cm_upcalls {
	/* A connection request on the listener @p lctx, the connection on
	 * worker @p w. @return the connection's context from now on, or NULL
	 * to reject it. @p pdata: the user's private data. */
	void *(*request)(struct rnic_tp_conn *c, void *lctx, enum rnic_transport t,
			 struct rnic_worker *w, const void *pdata, uint16_t len);
	/* ESTABLISHED (with the peer's accept data on the active side),
	 * REJECTED, UNREACHABLE, CONNECT_ERROR (while connecting) or
	 * DISCONNECTED. @p gone: the connection object is freed when this
	 * returns (forget it). */
	void (*event)(void *ctx, enum rnic_cm_event_type t, int status, uint16_t rej_reason,
		      const void *pdata, uint16_t len, bool gone);
};

/*
 * Connection management calls of a transport. All are made from an
 * application thread (never a worker); a transport that keeps its
 * connections on a worker makes the call there. @p connp is the CM's slot
 * for the connection: the transport reads and fills it where the
 * connection lives, since the connection may end there at any time.
 * Return 0 or -errno.
 */
struct rnic_cm_tops {
	/* @p backlog (1..RNIC_CM_BACKLOG_MAX): requests delivered to the
	 * listener and not yet accepted or rejected, at most */
	int (*listen)(struct rnic_stack *st, uint16_t port, int backlog,
		      const struct rnic_cm_upcalls *up, void *lctx);
	void (*unlisten)(struct rnic_stack *st, uint16_t port);
	/* connect @p qp (RC, RESET or INIT) to @p dst:@p port (host order);
	 * @p w: the worker the QP's completions are handled on;
	 * -EAFNOSUPPORT for an address family the transport does not take */
	int (*connect)(struct rnic_worker *w, struct rnic_qp *qp, const struct rnic_addr *dst,
		       uint16_t port,
		       const struct rnic_cm_conn_param *param, const struct rnic_cm_upcalls *up,
		       void *ctx, struct rnic_tp_conn **connp);
	/* accept a request with @p qp; events for @p ctx follow */
	int (*accept)(struct rnic_worker *w, struct rnic_tp_conn **connp, struct rnic_qp *qp,
		      const struct rnic_cm_conn_param *param, void *ctx);
	int (*reject)(struct rnic_worker *w, struct rnic_tp_conn **connp, const void *pdata,
		      uint16_t len);
	/* graceful close; -ENOTCONN when there is no connection */
	int (*disconnect)(struct rnic_worker *w, struct rnic_tp_conn **connp);
	/* the CM forgets the connection: abort it if live, no more events
	 * after this returns unless the transport says @p gone in one */
	void (*detach)(struct rnic_worker *w, struct rnic_tp_conn **connp);
	/* on the connection's worker: negotiated IRD/ORD, the peer (port in
	 * host order) */
	void (*conn_info)(const struct rnic_tp_conn *c, uint16_t *ird, uint16_t *ord,
			  struct rnic_addr *peer, uint16_t *port);
	/* optional: take over a TCP stream (iWARP, seed 002). @p w_out: the
	 * connection's worker. */
	int (*attach_stream)(struct rnic_tcp_conn *c, bool active, struct rnic_qp *qp,
			     const struct rnic_cm_conn_param *param, const void *early,
			     size_t early_len, const struct rnic_cm_upcalls *up, void *ctx,
			     struct rnic_tp_conn **connp, struct rnic_worker **w_out);
	/* optional: connection-setup timeouts (0 keeps a value) */
	void (*set_timeouts)(struct rnic_stack *st, uint8_t resp_exp, uint8_t retries);
};

/* --- the transport operations table ----------------------------------------------- */

/* rnic_qp_tops.modify: the generic path handles this transition. */
#define RNIC_TOPS_GENERIC 1

/* rnic_qp_tops.caps */
#define RNIC_TP_CAP_UD           0x1   /* datagram (UD) QPs */
#define RNIC_TP_CAP_READ_SCATTER 0x2   /* an RDMA Read may scatter over SGEs */
#define RNIC_TP_CAP_ATOMIC_ALIGN 0x4   /* atomics' remote address checked at post */

/*
 * A transport behind verbs QPs (iWARP: lib/iwarp/iw_verbs.c, RoCE:
 * lib/roce/roce_qp.c). The verbs layer owns the queues, the validation,
 * the doorbells and in-order retirement; the transport moves work and
 * reports completions with rnic_qp_complete(). Optional entries may be NULL.
 */
struct rnic_qp_tops {
	const char *name;
	unsigned caps;                /* RNIC_TP_CAP_* */
	/* any thread, from create_qp: set up qp->tp. @return 0 or -errno. */
	int (*create)(struct rnic_qp *qp);
	/* any thread: free qp->tp (the QP is out of the QP table, flushed). */
	void (*destroy)(struct rnic_qp *qp);
	/* optional, any thread: a modify_qp the transport handles (RTR/RTS
	 * and their attributes). @return 0 or -errno; RNIC_TOPS_GENERIC: not
	 * the transport's, the generic path handles it (INIT, ERR, RESET). */
	int (*modify)(struct rnic_qp *qp, struct ibv_qp_attr *attr, int mask);
	/* on the QP's worker, connected: room for one more work request now */
	bool (*has_room)(struct rnic_qp *qp);
	/* on the QP's worker: take one validated work request; wr->wr_id is
	 * the SQ ordinal to complete with, wr->sg_list stays valid until then.
	 * @return 0, -ENOMEM (full: call rnic_qp_tx_room() later), -errno */
	int (*post)(struct rnic_qp *qp, const struct ibv_send_wr *wr);
	/* optional, on the QP's worker: send what post() queued (a batch) */
	void (*kick)(struct rnic_qp *qp);
	/* on the QP's worker: stop, complete what the transport holds with
	 * IBV_WC_WR_FLUSH_ERR through rnic_qp_complete(); the QP may be
	 * disconnected (rnic_qp_conn_lost) from inside */
	void (*abort)(struct rnic_qp *qp);
	/* optional, any thread: the transport's attributes into @p attr */
	void (*query)(struct rnic_qp *qp, struct ibv_qp_attr *attr);
	/* on the QP's worker: the transport's state as text (diagnostics) */
	void (*dump)(struct rnic_qp *qp, FILE *f);
	/* optional, on the QP's worker: the transport's per-QP figures
	 * (sequence numbers, its own queues) into the telemetry dict @p d
	 * (/rnic/qp, lib/verbs/telemetry.c) */
	void (*telemetry)(struct rnic_qp *qp, struct rte_tel_data *d);
	/* optional (datagram transports): the address of an address handle
	 * from @p attr into @p ah. @return 0 or -EINVAL */
	int (*ah_resolve)(const struct rnic_stack *st, const struct ibv_ah_attr *attr,
			  struct rnic_ah *ah);
	/* connection management */
	struct rnic_cm_tops cm;
};

/* --- calls for transports -------------------------------------------------------------- */

static inline void rnic_qp_complete(struct rnic_qp *qp, const struct ibv_wc *wc, bool solicited)
{
	qp->up->complete(qp, wc, solicited);
}
static inline void rnic_qp_tx_room(struct rnic_qp *qp) { qp->up->tx_room(qp); }
static inline void rnic_qp_established(struct rnic_qp *qp) { qp->up->established(qp); }
static inline void rnic_qp_conn_lost(struct rnic_qp *qp) { qp->up->conn_lost(qp); }
static inline struct rnic_worker *rnic_qp_home(struct rnic_qp *qp) { return qp->up->home(qp); }
static inline int rnic_qp_modify(struct rnic_qp *qp, struct ibv_qp_attr *attr, int mask)
{
	return qp->up->modify(qp, attr, mask);
}
/* Any thread: the worker that owns @p qp from now on (doorbells go there). */
static inline void rnic_qp_set_worker(struct rnic_qp *qp, struct rnic_worker *w)
{
	__atomic_store_n(&qp->w, w, __ATOMIC_RELEASE);
}

#endif
