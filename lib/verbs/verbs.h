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

#include "rdma/qp.h"
#include "rdma/rdma.h"
#include "rdma/stag.h"
#include "rdma/wq.h"
#include "rnic/rnic_verbs.h"

struct rnic_worker;

/* Per-stack verbs state: st->proto[RNIC_PROTO_VERBS]. */
struct rnic_verbs_stack {
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
	/* rdma-core's extended context: vctx.context is the ibv_context a
	 * program holds (verbs_get_ctx() finds vctx in front of it); its
	 * extended ops are NULL unless the drop-in fills them */
	struct verbs_context vctx;
	struct ibv_device dev;
	/* where rdma-core's struct verbs_device keeps its provider ops,
	 * right after the ibv_device: NULL, so no provider (libefa's
	 * is_efa_dev(), libmlx5's is_mlx5_dev()) takes dev for its own */
	const void *provider_ops;
	struct rnic_device *d;
	enum rnic_transport transport;
};

struct rnic_device {
	struct rnic_device_view view[2];   /* [0] iWARP, [1] RoCE */
	struct rnic_stack *st;
	pthread_mutex_t lock;
	int refs;
	unsigned n_pd, n_cq, n_qp, n_srq, n_chan, n_mw, n_mr;
	uint32_t next_qpn;                  /* QPs: the stack's (rnic_qp_by_num) */
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

struct rnic_comp_channel {
	struct ibv_comp_channel ch;   /* ch.fd is an eventfd */
	struct rte_ring *events;      /* struct rnic_cq * (MP/MC) */
	unsigned users;
};

struct rnic_cq {
	union {
		struct ibv_cq cq;
		/* the same head, and the poll API of ibv_create_cq_ex() (the
		 * drop-in's lib/dropin/verbs_ex.c fills it; ex_wc below is
		 * its current entry) */
		struct ibv_cq_ex cq_ex;
	};
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
	struct ibv_wc ex_wc;          /* ibv_cq_ex: the entry start/next_poll took */
};

struct rnic_srq {
	struct ibv_srq srq;
	struct rnic_rq rq;
	struct ibv_srq_attr attr;
	unsigned users;
};

static inline struct rnic_device_view *view_of(struct ibv_context *c)
{
	return (struct rnic_device_view *)((char *)c - offsetof(struct rnic_device_view,
								vctx.context));
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
/* Register /rnic/qp and /rnic/qps once per process (telemetry.c). */
void rnic_verbs_telemetry_init(void);
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
/* What the transports call on verbs QPs (rdma/qp.h: rnic_qp_complete() ...). */
extern const struct rnic_qp_upcalls rnic_verbs_qp_upcalls;
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
