/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * rnic verbs: libibverbs-shaped objects on an rnic stack.
 *
 * Every object embeds its libibverbs struct as its first member and the
 * context's ops are filled in, so the inline data-path calls of
 * <infiniband/verbs.h> work on rnic objects unchanged:
 * ibv_post_send(), ibv_post_recv(), ibv_post_srq_recv(), ibv_poll_cq(),
 * ibv_req_notify_cq(), ibv_alloc_mw(), ibv_bind_mw() and ibv_dealloc_mw().
 * The control-path calls (which libibverbs implements out of line, through
 * the kernel) are the rnic_* functions below; rnic never links libibverbs.
 *
 * Threads. Every call here may be made from any application thread, and
 * the data-path calls also from a worker's callbacks. Posting copies the
 * work request into the QP's send or receive queue (a lock-free ring per
 * queue; concurrent posters to one queue serialise on a per-queue spinlock)
 * and rings a doorbell on the worker that owns the QP; polling takes
 * completions from the CQ's lock-free ring. A QP, its connection and the
 * work it generates live on exactly one worker: the one its connection's
 * flow is steered to (docs/verbs.md).
 *
 * Errors. The rnic_* functions here follow rnic.h: those returning int
 * return 0 (or a documented count) on success and a negative errno on
 * failure; those returning a pointer return NULL and set errno. The
 * data-path calls reached through ctx->ops (ibv_post_send(),
 * ibv_post_recv(), ibv_post_srq_recv(), ibv_req_notify_cq(), ibv_bind_mw(),
 * ibv_dealloc_mw()) keep libibverbs' own convention: 0 or a positive errno,
 * with *bad_wr set to the first work request not posted; ibv_poll_cq()
 * returns the completions taken or a negative value. A work request that
 * fails validation (opcode, SGE count, lkey, rights, length, QP state)
 * never reaches the wire.
 *
 * RoCE-only calls (congestion control, RoCE counters, the masks of an
 * out-of-band connect) are in rnic_roce.h.
 *
 * STags. An STag (lkey = rkey) is a 24-bit index and an 8-bit key. MRs and
 * memory windows share one STag space per device. Tagged offsets are the
 * virtual addresses of the registration.
 */
#ifndef RNIC_VERBS_H
#define RNIC_VERBS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <infiniband/verbs.h>

#include "rnic/rnic.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Limits of an rnic device (also reported by rnic_query_device()). */
#define RNIC_MAX_SGE          8      /**< SGEs per work request */
#define RNIC_MAX_INLINE       128    /**< bytes of inline data per send WR */
#define RNIC_MAX_QP_WR        4096   /**< entries per send or receive queue */
#define RNIC_MAX_CQE          1048576 /**< entries per CQ */
#define RNIC_MAX_QP           131072 /**< QPs per device (numbers 2 and up) */
#define RNIC_MAX_RD_ATOMIC    64     /**< IRD/ORD per QP */
#define RNIC_MAX_MR_SIZE      (1ull << 40)

/** Transport of a QP. */
enum rnic_transport {
	RNIC_TRANSPORT_DEFAULT = 0,  /**< the device's (from the port config) */
	RNIC_TRANSPORT_IWARP,        /**< MPA/DDP/RDMAP over rnic TCP */
	RNIC_TRANSPORT_ROCE,         /**< RoCEv2 over UDP 4791 */
};

/* --- device -------------------------------------------------------------- */

/**
 * Open the verbs device of a created stack. One device per stack; opening
 * again returns the same context with its reference count raised.
 * ctx->num_comp_vectors is the number of completion handlers (one per
 * worker; see rnic_query_handlers()).
 * @return the context, or NULL with errno EINVAL (no stack) or ENOMEM.
 */
struct ibv_context *rnic_open_device(struct rnic_stack *st);

/**
 * Open the device of a created stack through its @p t face: the context's
 * device says that transport (RNIC_TRANSPORT_IWARP: "rnicN", node type
 * RNIC and transport iWARP, as siw; RNIC_TRANSPORT_ROCE: "rnicN_roce", a CA
 * on the InfiniBand transport, as rxe), and QPs created on it without a
 * transport get it. Both faces are one device: objects of one may be used
 * with objects of the other, and each open takes a reference that
 * rnic_close_device() drops. rnic_open_device() is the iWARP face.
 * NULL and errno EINVAL (no stack, bad @p t) or ENOMEM.
 */
struct ibv_context *rnic_open_device_transport(struct rnic_stack *st,
					       enum rnic_transport t);

/** Drop a reference; the last one frees the device.
 *  @return 0, or -EBUSY while PDs, CQs, QPs, SRQs or completion channels
 *  of the device still exist. */
int rnic_close_device(struct ibv_context *ctx);

/** The stack a device runs on. */
struct rnic_stack *rnic_device_stack(struct ibv_context *ctx);

/** Fill @p attr: limits above, node GUID from the first port's MAC,
 *  atomic capability IBV_ATOMIC_HCA. @return 0. */
int rnic_query_device(struct ibv_context *ctx, struct ibv_device_attr *attr);

/** Port attributes of port @p port_num (1-based): state, MTU, link.
 *  @return 0, or -EINVAL for a port the stack does not have. */
int rnic_query_port(struct ibv_context *ctx, uint8_t port_num,
		    struct ibv_port_attr *attr);

/** GID @p index (0 or 1) of a port, numbered as on Linux RoCE devices:
 *  index 0 is the IPv6 link-local address from the MAC (fe80::EUI-64; no
 *  RoCEv2 path uses it, IPv6 is not supported), index 1 the port's IPv4
 *  address as an IPv4-mapped IPv6 address (::ffff:a.b.c.d), the GID RoCEv2
 *  QPs use (ah_attr.grh.sgid_index = 1). @return 0, or -EINVAL (no such
 *  port or index). */
int rnic_query_gid(struct ibv_context *ctx, uint8_t port_num, int index,
		   union ibv_gid *gid);

/**
 * Address handle for UD QPs (which exist on RoCE only): @p attr names the
 * destination with a GRH (is_global, grh.dgid ::ffff:a.b.c.d,
 * grh.sgid_index 1) and a port.
 * @return the handle, or NULL with errno EINVAL (no GRH, a GID that is not
 *   an IPv4 address, a bad port) or ENOMEM.
 */
struct ibv_ah *rnic_create_ah(struct ibv_pd *pd, struct ibv_ah_attr *attr);
/** Free an address handle. @return 0. */
int rnic_destroy_ah(struct ibv_ah *ah);

/** The device's default transport (RNIC_TRANSPORT_IWARP unless the config
 *  says roce). */
enum rnic_transport rnic_device_transport(struct ibv_context *ctx);

/* --- protection domains and memory ------------------------------------- */

/** A protection domain. @return the PD, or NULL with errno ENOMEM. */
struct ibv_pd *rnic_alloc_pd(struct ibv_context *ctx);
/** Free a PD. @return 0, or -EBUSY while MRs, MWs, QPs or SRQs use it. */
int rnic_dealloc_pd(struct ibv_pd *pd);

/**
 * Register @p length bytes at @p addr with IBV_ACCESS_* rights. Remote
 * write or atomic access requires IBV_ACCESS_LOCAL_WRITE, as in
 * libibverbs. mr->lkey == mr->rkey is the STag.
 * @return the MR, or NULL with errno EINVAL (bad rights, IBV_ACCESS_ZERO_BASED,
 *   a NULL address with a length, more than RNIC_MAX_MR_SIZE bytes) or
 *   ENOMEM (no memory, no free STag).
 */
struct ibv_mr *rnic_reg_mr(struct ibv_pd *pd, void *addr, size_t length,
			   int access);

/**
 * Invalidate and free. Tagged access that arrives afterwards is refused
 * with a Terminate (iWARP) or a NAK (RoCE); a placement already under way
 * on a worker finishes first (the call waits for every worker to pass a
 * quiescent point). @return 0, or -EBUSY while memory windows are bound
 * to it.
 */
int rnic_dereg_mr(struct ibv_mr *mr);

/**
 * rnic_reg_mr() with the tagged range starting at @p iova instead of
 * @p addr (ibv_reg_mr_iova()): local SGEs and remote offsets name
 * [iova, iova + length), which is the memory at @p addr. NULL and errno
 * as rnic_reg_mr().
 */
struct ibv_mr *rnic_reg_mr_iova(struct ibv_pd *pd, void *addr, size_t length,
				uint64_t iova, int access);

/**
 * rnic_reg_mr() whose STag is generated by port @p port_num (1-based, as in
 * verbs; rnic_reg_mr() uses port 1). Tagged traffic for it may still arrive
 * through any port of the stack: the first segment on another port migrates
 * the STag there (docs/migration.md).
 * @return as rnic_reg_mr(); port 0 is errno EINVAL.
 */
struct ibv_mr *rnic_reg_mr_port(struct ibv_pd *pd, void *addr, size_t length,
				int access, uint8_t port_num);

/** STag migration counters of one port (docs/migration.md). */
struct rnic_stag_port_stats {
	uint64_t generated;       /**< STags this port handed out */
	uint64_t imported;        /**< imports installed on this port */
	uint64_t imports_live;    /**< imports held now */
	uint64_t queries;         /**< migration queries this port asked */
	uint64_t rejects_unknown; /**< no such STag at its owner */
	uint64_t rejects_invalid; /**< the owner's invalid bit was set */
	uint64_t rejects_bad_port;/**< the STag names no port of this stack */
	uint64_t revoked;         /**< copies revoked (invalidation, rebind, free) */
	uint64_t query_us_max;    /**< the slowest query, asked to answered */
};

/** Counters of port @p port_num (1-based). @return 0, or -EINVAL (NULL
 *  arguments, no such port). */
int rnic_query_stag_stats(struct ibv_context *ctx, uint8_t port_num,
			  struct rnic_stag_port_stats *s);

/** Tests and diagnostics: with @p hold non-zero, STag migration queries
 *  wait unanswered until it is released (@p hold 0). @return 0, or
 *  -EINVAL (no device). */
int rnic_migration_hold(struct ibv_context *ctx, int hold);

/* Memory windows: ibv_alloc_mw(pd, IBV_MW_TYPE_1 or IBV_MW_TYPE_2),
 * ibv_bind_mw() for type 1, IBV_WR_BIND_MW work requests for type 2,
 * IBV_WR_LOCAL_INV and remote invalidation (IBV_WR_SEND_WITH_INV) for
 * both, ibv_dealloc_mw(). */

/* --- completion queues ----------------------------------------------------- */

/** A completion channel: ch->fd is an eventfd, readable (epoll-able) when
 *  an armed CQ has an event for rnic_get_cq_event().
 *  @return the channel, or NULL with errno ENOMEM. */
struct ibv_comp_channel *rnic_create_comp_channel(struct ibv_context *ctx);
/** Free a completion channel. @return 0, or -EBUSY while CQs use it. */
int rnic_destroy_comp_channel(struct ibv_comp_channel *ch);

/**
 * Create a CQ of at least @p cqe entries. @p comp_vector selects the
 * completion handler (0 .. num_comp_vectors-1) whose worker delivers its
 * events. ibv_req_notify_cq() arms it for the next completion or the next
 * solicited one; the event then goes to @p channel.
 * @return the CQ, or NULL with errno EINVAL (@p cqe not in 1 ..
 *   RNIC_MAX_CQE, no such handler), ENOMEM or ENOSPC (too many CQs).
 */
struct ibv_cq *rnic_create_cq(struct ibv_context *ctx, int cqe,
			      void *cq_context, struct ibv_comp_channel *channel,
			      int comp_vector);

/** Free a CQ; completions not polled are lost. @return 0, or -EBUSY while
 *  QPs use it or events taken from it are not acknowledged
 *  (rnic_ack_cq_events(), rnic_ack_async_event()). */
int rnic_destroy_cq(struct ibv_cq *cq);

/**
 * Wait for the next CQ event on @p ch, as ibv_get_cq_event(): blocks
 * unless ch->fd was made O_NONBLOCK. Every event must be acknowledged with
 * rnic_ack_cq_events() before the CQ is destroyed.
 * @return 0 with *@p cq and *@p cq_context set, -EAGAIN (O_NONBLOCK and
 *   no event waits), or the -errno of reading ch->fd.
 */
int rnic_get_cq_event(struct ibv_comp_channel *ch, struct ibv_cq **cq,
		      void **cq_context);
/** Acknowledge @p nevents events taken from @p cq by rnic_get_cq_event(). */
void rnic_ack_cq_events(struct ibv_cq *cq, unsigned int nevents);

/** Counters of a CQ (overruns: completions that found it full; the QP that
 *  produced one goes to the error state). */
struct rnic_cq_stats {
	uint64_t completions; /**< completions pushed into it */
	uint64_t events;      /**< events delivered (channel or callback) */
	uint64_t overruns;    /**< completions that found it full */
	uint64_t rebinds;     /**< rnic_modify_cq_handler() calls */
	unsigned handler;     /**< the handler it is bound to now */
};
/** Read the counters of @p cq (any thread, lock-free). */
void rnic_cq_stats(struct ibv_cq *cq, struct rnic_cq_stats *s);

/* --- completion handlers ---------------------------------------------------- */

/**
 * Completion handlers: where a CQ's events are delivered. There is one per
 * worker by default (ctx->num_comp_vectors, also returned here); handler h
 * runs on worker h. A CQ is created on a handler (comp_vector) and may be
 * re-bound while live. Completions themselves go straight from the QP's
 * worker into the CQ's ring and are polled from any thread, so a re-bind
 * moves only the delivery of events: no completion can be lost,
 * duplicated or reordered by it (an event on its way to the old handler
 * is passed on, once, to the new one). New connections place their QPs on
 * the worker of their send CQ's handler; a live QP stays on the worker its
 * TCP flow is steered to (docs/verbs.md).
 * @return the number of handlers (handler ids are 0 .. n-1).
 */
int rnic_query_handlers(struct ibv_context *ctx);

/** Re-bind a live CQ to handler @p handler. @return 0, or -EINVAL (no such
 *  handler). */
int rnic_modify_cq_handler(struct ibv_cq *cq, int handler);

/**
 * Register @p fn to run on the CQ's handler's worker for each event the
 * arm (ibv_req_notify_cq) produces, instead of the completion channel.
 * It must not block; it may poll the CQ and re-arm it. Set it before
 * arming. @return 0, or -EBUSY (armed now).
 */
int rnic_set_comp_handler(struct ibv_cq *cq, void (*fn)(struct ibv_cq *cq, void *arg),
			  void *arg);

/** Add a handler on worker @p worker with priority @p prio (several
 *  handlers may share a worker; priorities order them there).
 *  @return the new handler's id, or -EINVAL / -ENOSPC. */
int rnic_add_handler(struct ibv_context *ctx, unsigned worker, int prio);

/** Set the priority of handler @p handler: when several events are due on
 *  a worker, those of higher-priority handlers are delivered first
 *  (default 0 for all). @return 0, or -EINVAL (no such handler). */
int rnic_set_handler_priority(struct ibv_context *ctx, int handler, int prio);

/* --- asynchronous events ----------------------------------------------------- */

/**
 * Asynchronous events, as libibverbs delivers them (ibv_get_async_event):
 * ctx->async_fd is an eventfd that is readable (poll/epoll) exactly while
 * an event waits. Raised today:
 *
 *  - IBV_EVENT_CQ_ERR (element.cq): a completion found the CQ full. Raised
 *    once per CQ (the CQ is in error from then on; further overruns are
 *    only counted in rnic_cq_stats()).
 *  - IBV_EVENT_QP_FATAL (element.qp): that completion was this QP's. The QP
 *    is in IBV_QPS_ERR at once, its transport is stopped on its worker
 *    (RoCE: stops sending and answering; iWARP: the connection is aborted,
 *    the CM reports DISCONNECTED with -ECONNABORTED) and its work is
 *    flushed. Raised once per QP.
 *
 * Every event taken must be acknowledged with rnic_ack_async_event() before
 * its CQ or QP is destroyed (destroy returns -EBUSY otherwise); events still
 * queued, not taken, when their CQ or QP is destroyed are dropped (counted
 * as purged). At most RNIC_ASYNC_DEPTH events wait; more are counted lost.
 */
#define RNIC_ASYNC_DEPTH 1024   /**< events queued per device at most */

/**
 * Take the next event, waiting for one unless ctx->async_fd was made
 * O_NONBLOCK.
 * @return 0, -EAGAIN (O_NONBLOCK and none waits), -EINVAL (no device), or
 *   the -errno of waiting on ctx->async_fd.
 */
int rnic_get_async_event(struct ibv_context *ctx, struct ibv_async_event *event);

/** Same with a bound: @p timeout_ms 0 polls, -1 waits for ever.
 *  @return 0, -EAGAIN (none within the timeout), -EINVAL (NULL
 *  arguments), or the -errno of waiting on ctx->async_fd. */
int rnic_get_async_event_timeout(struct ibv_context *ctx, struct ibv_async_event *event,
				 int timeout_ms);

/** Acknowledge an event taken by rnic_get_async_event(). */
void rnic_ack_async_event(struct ibv_async_event *event);

/** Asynchronous-event counters of a device (any thread). */
struct rnic_async_stats {
	uint64_t raised;      /**< every event raised (queued or lost) */
	uint64_t delivered;   /**< taken by rnic_get_async_event() */
	uint64_t acked;       /**< acknowledged */
	uint64_t lost;        /**< not queued: the queue was full */
	uint64_t purged;      /**< dropped unread: their CQ or QP was destroyed */
	uint64_t cq_err;      /**< IBV_EVENT_CQ_ERR raised */
	uint64_t qp_fatal;    /**< IBV_EVENT_QP_FATAL raised */
	unsigned queued;      /**< waiting now */
};
/** Read the asynchronous-event counters of @p ctx. */
void rnic_async_stats(struct ibv_context *ctx, struct rnic_async_stats *s);

/** The name of an event type ("CQ_ERR", "QP_FATAL", ...), or "unknown":
 *  what ibv_event_type_str() gives, without linking libibverbs. */
const char *rnic_event_type_str(enum ibv_event_type t);

/* --- shared receive queues ----------------------------------------------- */

/** A shared receive queue of at least attr->attr.max_wr entries (written
 *  back). @return the SRQ, or NULL with errno EINVAL (max_wr 0 or over
 *  RNIC_MAX_QP_WR, max_sge over RNIC_MAX_SGE) or ENOMEM. */
struct ibv_srq *rnic_create_srq(struct ibv_pd *pd,
				struct ibv_srq_init_attr *attr);
/** Free an SRQ. @return 0, or -EBUSY while QPs use it. */
int rnic_destroy_srq(struct ibv_srq *srq);

/* --- queue pairs ----------------------------------------------------------- */

/**
 * Create a QP (RC, or UD on RoCE) on the device's default transport. The
 * QP starts in IBV_QPS_RESET; for iWARP the connection manager (rnic_cm.h)
 * moves it through INIT/RTR to RTS when the connection is established;
 * RoCE QPs may also be driven by rnic_modify_qp() with out-of-band
 * parameters (rnic_roce.h). Receives may be posted from INIT on and are
 * kept for the connection. attr->cap is rounded up and written back.
 * @return the QP, or NULL with errno EINVAL (a bad attribute, CQs or SRQ
 *   of another device or PD, a UD QP on iWARP), ENOMEM or ENOSPC (too
 *   many QPs).
 */
struct ibv_qp *rnic_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *attr);

/** The name of a completion status ("RETRY_EXC_ERR"), or "unknown": what
 *  ibv_wc_status_str() gives, without linking libibverbs. */
const char *rnic_wc_status_str(enum ibv_wc_status s);

/** rnic_create_qp() with the transport chosen explicitly
 *  (RNIC_TRANSPORT_DEFAULT: the device's). @return as rnic_create_qp(). */
struct ibv_qp *rnic_create_qp_transport(struct ibv_pd *pd,
					struct ibv_qp_init_attr *attr,
					enum rnic_transport transport);

/**
 * libibverbs state transitions (IBV_QP_STATE with the attributes the IBA
 * table requires for the transition). Moving a connected QP to ERR flushes
 * its outstanding work with IBV_WC_WR_FLUSH_ERR and aborts the connection;
 * to SQD or SQE is not supported. iWARP QPs take RESET, INIT and ERR here;
 * RTR and RTS come with their connection (rnic_cm.h).
 * @return 0, or -EINVAL (a transition the IBA table does not allow, a
 *   missing or bad attribute, IBV_QP_CAP: no resizing).
 */
int rnic_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask);
/** The QP's state, capabilities and (RoCE) path attributes into @p attr,
 *  its creation attributes into @p init_attr (may be NULL); @p attr_mask
 *  is ignored: everything known is filled in. @return 0. */
int rnic_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask,
		  struct ibv_qp_init_attr *init_attr);

/** Abort any connection, flush, free. @return 0, or -EBUSY while a CM id
 *  still holds it or an asynchronous event about it is not acknowledged. */
int rnic_destroy_qp(struct ibv_qp *qp);

/** The transport a QP was created with. */
enum rnic_transport rnic_qp_transport(struct ibv_qp *qp);

/** Counters of a QP (live; any thread). */
struct rnic_qp_stats {
	uint64_t send_wrs;    /**< work requests posted to the SQ */
	uint64_t recv_wrs;    /**< work requests posted to the RQ */
	uint64_t completions; /**< completions generated */
	uint64_t flushed;     /**< of which IBV_WC_WR_FLUSH_ERR */
	uint64_t fpdus_in;    /**< iWARP: FPDUs received */
	uint64_t fpdus_out;   /**< iWARP: FPDUs sent */
	uint64_t terminates_in;  /**< iWARP: Terminate messages received */
	uint64_t terminates_out; /**< iWARP: Terminate messages sent */
	uint64_t bytes_in;    /**< payload placed into this side's memory */
	uint64_t bytes_out;   /**< payload sent (Sends, Writes, Read Responses) */
	uint64_t ops_in;      /**< Sends and Writes received, Read Requests served */
	uint64_t ops_out;     /**< messages sent */
	uint64_t sq_full;     /**< ibv_post_send calls refused with ENOMEM: SQ full */
	uint64_t rq_full;     /**< ibv_post_recv calls refused with ENOMEM: RQ full */
	uint64_t fpdus_packed;/**< iWARP: FPDUs that shared a TCP segment with the
				   one before them (small messages of a batch) */
	bool fatal;           /**< a completion found its CQ full (IBV_EVENT_QP_FATAL) */
};
/** Read the counters of @p qp. */
void rnic_qp_stats(struct ibv_qp *qp, struct rnic_qp_stats *s);

/** Diagnostics: the QP's queues and its transport's state (iWARP:
 *  endpoint, MPA/DDP cursors, TCP sequence state; RoCE: requester and
 *  responder PSNs, the worker's counters, the recovery trace) as text on
 *  @p f, read on the QP's worker. For hang reports; the format is not
 *  stable. */
void rnic_qp_dump(struct ibv_qp *qp, FILE *f);

#ifdef __cplusplus
}
#endif
#endif
