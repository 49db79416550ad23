/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Verbs objects. Each embeds its libibverbs struct first, so a pointer to
 * one is a pointer to the other (container_of is a cast).
 *
 * Ownership (docs/verbs.md): a QP belongs to the worker its connection is
 * steered to; it learns that worker when it is connected. Application
 * threads post into the QP's queues and ring the worker's doorbell (a ring
 * of QP numbers); the worker hands the work to the transport and, as work
 * completes in order, pushes ibv_wc entries into the CQs' lock-free rings.
 */
#ifndef RNIC_VERBS_VERBS_H
#define RNIC_VERBS_VERBS_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include <infiniband/verbs.h>
#include <rte_ring.h>
#include <rte_spinlock.h>

#include "rnic/rnic_verbs.h"
#include "verbs/stag.h"
#include "verbs/wq.h"

struct rnic_worker;
struct rnic_iw_ep;

/* Per-stack verbs state: st->proto[RNIC_PROTO_VERBS]. */
struct rnic_verbs_stack {
	struct rnic_stag_table *stags;
	struct rnic_device *dev;      /* the open device, or NULL */
	pthread_mutex_t lock;
};

/* Per-worker verbs state: w->proto[RNIC_PROTO_VERBS]. */
struct rnic_verbs_worker {
	struct rte_ring *db;          /* QP numbers with new work (MP/SC) */
	struct rte_ring *evq;         /* CQ handles with an event due (MP/SC) */
	uint64_t doorbells, wrs, events, forwarded;
};

#define RNIC_MAX_CQ 4096
#define RNIC_MAX_HANDLERS 64

/* A completion handler (seed 003): runs on one worker, has a priority. */
struct rnic_handler {
	unsigned worker;
	int prio;
};

/*
 * A device's face to applications: its own ibv_context and ibv_device, so
 * that ctx->device tells a program the transport (iWARP like siw, RoCE like
 * rxe), and QPs created without a transport get this one. Both views of a
 * device share everything else (QP numbers, CQs, STags, async events).
 */
struct rnic_device_view {
	struct ibv_context ctx;       /* first */
	struct ibv_device dev;
	struct rnic_device *d;
	enum rnic_transport transport;
};

struct rnic_device {
	struct rnic_device_view view[2];   /* [0] iWARP, [1] RoCE */
	struct rnic_stack *st;
	pthread_mutex_t lock;
	int refs;
	unsigned n_pd, n_cq, n_qp, n_srq, n_chan, n_mw, n_mr;
	uint32_t next_qpn;
	struct rnic_qp *qps[RNIC_MAX_QP];   /* by QP number (0, 1 unused) */
	struct rnic_cq *cqs[RNIC_MAX_CQ];   /* by handle (0 unused) */
	unsigned n_handlers;
	struct rnic_handler handlers[RNIC_MAX_HANDLERS];

	/* asynchronous events (device.c): a FIFO under alock; ctx.async_fd is
	 * an eventfd holding 1 exactly while the FIFO is not empty */
	pthread_mutex_t alock;
	struct ibv_async_event aq[RNIC_ASYNC_DEPTH];
	unsigned aq_head, aq_count;
	struct rnic_async_stats astats;   /* under alock */
};

struct rnic_pd {
	struct ibv_pd pd;
	unsigned users;               /* atomic: MRs, MWs, QPs, SRQs */
};

struct rnic_mr {
	struct ibv_mr mr;
	struct rnic_mem m;
};

struct rnic_mw {
	struct ibv_mw mw;
	struct rnic_mem m;
};

struct rnic_comp_channel {
	struct ibv_comp_channel ch;   /* ch.fd is an eventfd */
	struct rte_ring *events;      /* struct rnic_cq * (MP/MC) */
	unsigned users;
};

struct rnic_cq {
	struct ibv_cq cq;
	struct rte_ring *ring;        /* struct ibv_wc (MP/MC) */
	struct rnic_comp_channel *chan;
	volatile unsigned handler;    /* completion handler (comp_vector) */
	volatile int armed;           /* 0, 1 = next, 2 = solicited only */
	void (*cb)(struct ibv_cq *, void *);   /* handler callback, or NULL */
	void *cb_arg;
	uint64_t rebinds;
	unsigned users;               /* QPs */
	unsigned events_got, events_acked;
	uint64_t completions, events, overruns;
	int err;                      /* overran: IBV_EVENT_CQ_ERR raised (once) */
	unsigned async_got, async_acked;   /* async events taken / acked */
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

/*
 * A transport behind verbs QPs other than the built-in iWARP endpoint
 * (RoCE: lib/roce/roce_qp.c). The verbs layer owns the queues, the
 * validation, the doorbells and in-order retirement; the transport moves
 * work and reports completions with rnic_qp_complete().
 */
/* rnic_qp_tops.modify: the generic path handles this transition. */
#define RNIC_TOPS_GENERIC 1

struct rnic_qp_tops {
	/* any thread, from create_qp: set up qp->tp. @return 0 or -errno. */
	int (*create)(struct rnic_qp *qp);
	/* any thread: free qp->tp (the QP is out of the device table, flushed). */
	void (*destroy)(struct rnic_qp *qp);
	/* any thread: a modify_qp the transport handles (RTR/RTS and their
	 * attributes). @return 0 or -errno; RNIC_TOPS_GENERIC: not the
	 * transport's, the generic path handles it (INIT, ERR, RESET). */
	int (*modify)(struct rnic_qp *qp, struct ibv_qp_attr *attr, int mask);
	/* on the QP's worker: room for one more work request now */
	bool (*has_room)(struct rnic_qp *qp);
	/* on the QP's worker: take one validated work request; wr->wr_id is
	 * the SQ ordinal to complete with, wr->sg_list stays valid until then.
	 * @return 0, -ENOMEM (full: call rnic_qp_tx_room() later), -errno */
	int (*post)(struct rnic_qp *qp, const struct ibv_send_wr *wr);
	/* on the QP's worker: stop, complete what the transport holds with
	 * IBV_WC_WR_FLUSH_ERR through rnic_qp_complete() */
	void (*abort)(struct rnic_qp *qp);
	/* any thread: the transport's attributes into @p attr (query_qp) */
	void (*query)(struct rnic_qp *qp, struct ibv_qp_attr *attr);
};

extern const struct rnic_qp_tops rnic_roce_tops;

struct rnic_qp {
	struct ibv_qp qp;             /* first */
	struct rnic_device *dev;
	enum rnic_transport transport;
	struct ibv_qp_cap cap;
	bool sq_sig_all;

	/* send queue: app threads produce under sq_lock; the worker hands
	 * entries to the transport (sq_cons) and retires them in order */
	struct rnic_swqe *sq;
	uint32_t sq_size, sq_mask;
	volatile uint32_t sq_prod, sq_cons, sq_retired;
	rte_spinlock_t sq_lock;

	struct rnic_rq rq;            /* unused when an SRQ is attached */
	struct rnic_rq *rqp;          /* &rq or the SRQ's */

	/* worker side */
	struct rnic_worker *w;        /* owner once connected */
	struct rnic_iw_ep *ep;        /* iWARP */
	const struct rnic_qp_tops *tops;   /* other transports */
	void *tp;                     /* their per-QP state */
	volatile int db_pending;
	volatile int conn;            /* enum rnic_qp_conn */
	bool draining;
	bool drain_again;          /* room came while draining: go round again */
	bool in_error;
	void *cm_id;
	/* a completion found its CQ full: IBV_EVENT_QP_FATAL raised, the
	 * transport is stopped from the verbs poller (fatal_pending) */
	bool fatal;
	volatile int fatal_pending;
	unsigned async_got, async_acked;   /* async events taken / acked */

	struct rnic_qp_xfer xfer;     /* written by the transport */
	uint64_t send_wrs, recv_wrs, completions, flushed;
	uint64_t fpdus_in, fpdus_out;
	uint64_t sq_full, rq_full;    /* posts refused with ENOMEM (queue full) */
};

struct rnic_srq {
	struct ibv_srq srq;
	struct rnic_rq rq;
	struct ibv_srq_attr attr;
	unsigned users;
};

static inline struct rnic_device_view *view_of(struct ibv_context *c)
{
	return (struct rnic_device_view *)c;
}
static inline struct rnic_device *dev_of(struct ibv_context *c) { return view_of(c)->d; }
static inline struct rnic_qp *qp_of(struct ibv_qp *q) { return (struct rnic_qp *)q; }
static inline struct rnic_cq *cq_of(struct ibv_cq *c) { return (struct rnic_cq *)c; }
static inline struct rnic_pd *pd_of(struct ibv_pd *p) { return (struct rnic_pd *)p; }
static inline struct rnic_srq *srq_of(struct ibv_srq *s) { return (struct rnic_srq *)s; }

static inline struct rnic_verbs_stack *verbs_st(const struct rnic_stack *st);

/* cq.c: push one completion from a worker (order kept per producer);
 * @p solicited: the event counts for a solicited-only arm. @return 0 or
 * -ENOSPC (overrun, counted). */
int rnic_cq_push(struct rnic_cq *cq, const struct ibv_wc *wc, bool solicited);
int rnic_cq_poll(struct ibv_cq *cq, int n, struct ibv_wc *wc);
int rnic_cq_req_notify(struct ibv_cq *cq, int solicited_only);
/* cq.c: a push to @p cq failed (full): the CQ is in error; the first time
 * IBV_EVENT_CQ_ERR is raised. Any thread. */
void rnic_cq_overrun(struct rnic_cq *cq);

/* device.c: queue an asynchronous event (any thread, also workers) and
 * count it; a full queue counts it as lost. Events naming a CQ or QP are
 * dropped from the queue when it is destroyed (rnic_async_purge). */
void rnic_async_raise(struct rnic_device *d, const struct ibv_async_event *ev);
void rnic_async_purge(struct rnic_device *d, const void *obj);

/* qp.c */
int rnic_qp_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad);
int rnic_qp_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad);
int rnic_srq_post_recv(struct ibv_srq *srq, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad);
/* Attach a connected endpoint to @p qp (on the endpoint's worker): the QP
 * moves to RTS and its queued work starts. */
void rnic_qp_attach_iw(struct rnic_qp *qp, struct rnic_iw_ep *ep, struct rnic_worker *w);
/* The connection reached RDMA mode (on the worker): RTS, queued work starts. */
void rnic_qp_established(struct rnic_qp *qp);
/* The connection is gone (on the worker): QP to ERR, everything flushed. */
void rnic_qp_conn_lost(struct rnic_qp *qp);
/* For transports (on the QP's worker): one completion (send-queue work
 * carries its SQ ordinal in wr_id); more room; the QP's worker. */
void rnic_qp_complete(struct rnic_qp *qp, const struct ibv_wc *wc, bool solicited);
void rnic_qp_tx_room(struct rnic_qp *qp);
/* Any thread: the worker that owns @p qp from now on (doorbells go there). */
void rnic_qp_set_worker(struct rnic_qp *qp, struct rnic_worker *w);
/* Worker poller: doorbells. */
unsigned rnic_verbs_poll(struct rnic_worker *w, void *arg);
/* Worker poller: due CQ events of the handlers on this worker. */
unsigned rnic_cq_events_poll(struct rnic_worker *w, void *arg);

/* mw.c */
struct ibv_mw *rnic_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type);
int rnic_dealloc_mw(struct ibv_mw *mw);
int rnic_bind_mw(struct ibv_qp *qp, struct ibv_mw *mw, struct ibv_mw_bind *bind);
/* Execute a bind on the worker: @return an ibv_wc_status. */
int rnic_mw_bind_exec(struct rnic_qp *qp, struct rnic_mw *mw, uint32_t new_rkey,
		      const struct ibv_mw_bind_info *bi);

/* Validate a local SGE list. @return 0 or EINVAL/EACCES. */
int rnic_sge_check(struct rnic_device *dev, struct ibv_pd *pd, const struct ibv_sge *sge,
		   int n, int access, uint32_t *total);

#include "engine/stack.h"
static inline struct rnic_verbs_stack *verbs_st(const struct rnic_stack *st)
{
	return st->proto[RNIC_PROTO_VERBS];
}

#endif
