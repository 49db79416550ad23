/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Private to the iWARP endpoint files: the endpoint, its work queue of
 * jobs, and the calls they make to each other.
 *
 *   iw_ep.c  endpoint lifecycle: create, bind, close, flush, free, the
 *            Terminate we send, STag checks, stack-wide state, dump
 *   iw_tx.c  transmit: work requests to jobs, jobs to FPDUs, FPDUs packed
 *            into TCP segments, completion of sent work
 *   iw_rx.c  receive and placement: the FPDU parser's callbacks (tagged
 *            and untagged placement, Read and Atomic service, receive
 *            completions), the peer-to-peer RTR, STag migration parking
 *   iw_cm.c  MPA startup and connection management: TCP callbacks, MPA
 *            request/reply, listen/connect/accept/reject
 *
 * Every function runs on the endpoint's worker.
 */
#ifndef RNIC_IWARP_IW_INT_H
#define RNIC_IWARP_IW_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include <infiniband/verbs.h>

#include "engine/engine_internal.h"
#include "engine/stack.h"
#include "iwarp/fpdu.h"
#include "iwarp/iwarp.h"
#include "iwarp/iwarp_wire.h"
#include "iwarp/iw_ep.h"
#include "iwarp/mpa.h"
#include "iwarp/terminate.h"
#include "rdma/qp.h"
#include "rdma/stag.h"
#include "rdma/wq.h"

/* EP_RTR_WAIT: a peer-to-peer responder between its reply and the
 * initiator's RTR; it receives FPDUs but sends none (RFC 6581 s9.2). */
enum ep_state { EP_CONNECTING, EP_MPA_REQ, EP_DECIDING, EP_MPA_REP, EP_RTS_WAIT,
		EP_RTR_WAIT, EP_RTS, EP_CLOSING, EP_CLOSED };

enum job_kind { JOB_SEND, JOB_WRITE, JOB_READ_REQ, JOB_READ_RESP, JOB_ATOMIC_REQ,
		JOB_ATOMIC_RESP, JOB_TERM };

struct job {
	enum job_kind kind;
	uint64_t wr_id;
	bool signaled;
	bool rtr;                  /* the p2p RTR message: no completion, ever */
	uint8_t rdmap_op;          /* Send: SEND, SEND_SE, SEND_INV, SEND_SE_INV */
	uint32_t inv_stag;         /* Send with Invalidate */
	const struct ibv_sge *sge; /* gather list (host addresses) */
	uint32_t num_sge;
	struct ibv_sge one;        /* the list when the poster's is not kept */
	uint32_t len, off;
	uint32_t stag;             /* remote STag (write, read resp), sink (read) */
	uint64_t to;
	uint32_t src_stag;         /* read request: the source */
	uint64_t src_to;
	/* RFC 7306: Write/Send with Immediate send an Immediate Data message
	 * behind their data (data_done: the data part went out) */
	bool imm, data_done;
	uint8_t imm_op;            /* IMM_DATA or IMM_DATA_SE */
	uint32_t imm_data;         /* network order, as libibverbs has it */
	/* atomic request (stag/to: the remote word) and atomic response */
	uint8_t atomic_op;
	uint32_t req_id;
	uint64_t add_swap, add_swap_mask, compare, compare_mask;
	uint64_t orig;             /* response: the word before the operation */
	/* zero-copy transmit (iw_tx.c): the mbufs attached to this job's
	 * memory; it retires only once they are all freed */
	struct iw_zc *zc;
};

/* Receives of an endpoint without a verbs QP (rnic_iw_post_recv): the
 * ring is allocated by the first post. */
#define RQ_MAX  256
/* Jobs of an endpoint without a verbs QP, and the most any endpoint has;
 * a verbs QP's ring holds its send queue, its IRD and two more (the RTR
 * and a Terminate), rounded up to a power of two. */
#define JOB_MAX 512
#define ORD_MAX RNIC_MAX_RD_ATOMIC
/* An MPA request, reply or reject frame with the most private data. */
#define MPA_FRAME_MAX (sizeof(struct rnic_mpa_rr_hdr) + 16 + RNIC_MPA_PD_MAX)
/* A transmit that found no free mbuf tries again this much later: TCP's
 * sent() callback only comes when an ACK frees room, and a connection
 * with nothing in flight gets no ACK. */
#define TX_RETRY_US 200

/*
 * STag migration (seed 000), allocated by the first query (ep_migrate)
 * and kept: a tagged segment (or a Read Request) for an STag of another
 * port waits for the control component; the rest of the received chunk
 * is parked here, later bytes wait in TCP (hold). Most endpoints never
 * ask, so an idle QP does not carry it (issue 21).
 */
struct iw_mig {
	struct rnic_stag_mig q;        /* the query; its answer finds ep */
	struct rnic_iw_ep *ep;
	struct rte_mbuf *park;         /* the chunk being parsed, from park_seg */
	struct rte_mbuf *park_seg;
	uint32_t park_off;
	size_t park_left;              /* bytes of the segment not parsed */
	uint64_t queries;              /* queries sent (ep_migrate) */
};

/* One outstanding Read or Atomic Request (ORD). A Read's responses must
 * name its sink STag and fill [sink_to, sink_to + len) in order, exactly
 * (iw_rx.c rresp_check): placed is how far they got. */
struct iw_ord {
	uint64_t wr_id;
	uint32_t len;
	uint32_t sink_stag;    /* Read: the STag of our sink, as we sent it */
	uint64_t sink_to;      /* Read: the TO of its first byte */
	uint32_t placed;       /* Read: bytes its responses placed so far */
	bool signaled;
	bool atomic;
	bool rtr;              /* the zero-length Read RTR: answered silently */
	uint8_t wc_op;         /* enum ibv_wc_opcode of the completion */
	uint32_t req_id;       /* atomic: the Request Identifier */
	uint64_t res_addr;     /* atomic: where the original value goes */
};

/*
 * What only MPA startup needs (about 1.7 KiB): allocated with the
 * endpoint at connect, accept or stream attach, freed when it enters RDMA
 * mode (iw_startup_done), so that an idle connected QP does not carry it
 * (issue 21). The peer's private data (rx.pd) is readable until then:
 * established() is the last callback that sees it.
 */
struct iw_startup {
	struct rnic_iw_params p;       /* the caller's (MPA offer, timers) */
	void *listen_ctx;              /* responder: the listener's context */
	struct rnic_mpa_params mp;     /* our offer */
	struct rnic_mpa_rx mrx;        /* the peer's request or reply */
	uint8_t pdata[RNIC_MPA_PD_MAX];/* our private data (initiator) */
	uint16_t pd_len;
	uint16_t mpa_tx_len;
	uint8_t mpa_tx[MPA_FRAME_MAX]; /* our MPA request/reply TCP has not taken */
	struct rnic_timer rts_timer;   /* initiator: the pause before RTS */
	struct rnic_timer mpa_timer;   /* MPA startup limit (iw_mpa_timer_start) */
	struct iw_backlog *backlog;    /* responder: counted in its listener's
					  backlog until accepted (iw_cm.c) */
	/* responder: its MPA request is not whole yet, and it is on its
	 * worker's list of such endpoints in the backlog, oldest first: the
	 * one evicted when the backlog is full (iw_cm.c embryo_evict) */
	bool embryonic;
	struct rnic_iw_ep *emb_prev, *emb_next;
};

struct rnic_iw_ep {
	struct rnic_tcp_conn *c;
	struct rnic_worker *w;
	struct rnic_stack *st;
	const struct rnic_iw_ops *ops;
	void *ctx;
	enum ep_state state;
	bool active;
	bool tcp_up;                   /* the TCP connection was established */
	bool rdma_mode;                /* reached RDMA mode (iw_verbs.c) */
	bool in_msg;                   /* a Send is being placed into cur */
	uint16_t peer_port;
	bool scatter;                  /* placement: into cur's SGEs at place_mo */
	bool rtr_in;                   /* the FPDU being parsed is the peer's RTR */
	struct rnic_addr peer;         /* the peer's address, either family */

	/* verbs binding (NULL/0 for rnic_iw_* users) */
	const struct rnic_iw_qp_hooks *hooks;
	void *qp;
	const void *pd;
	uint32_t qpn;
	uint32_t inreads;              /* Read and Atomic Requests being served (IRD) */

	/* MPA startup: NULL once the endpoint is in RDMA mode (iw_startup_done) */
	struct iw_startup *su;
	/* the negotiation's outcome; its pdata points into su, NULL after */
	struct rnic_mpa_result res;

	struct rnic_fpdu_tx ftx;
	uint32_t tx_pos;               /* MPA stream positions (markers) */
	struct rnic_fpdu_rx frx;
	uint32_t rx_pos;

	uint32_t msn[RNIC_DDP_QN_COUNT];    /* next MSN to send per queue number */
	uint32_t rx_msn[RNIC_DDP_QN_COUNT]; /* next MSN expected per queue number */
	uint32_t last_write_len;       /* (after_write, below) */
	struct rnic_rq *rq;            /* receives: the QP's, an SRQ, or own_rq */
	struct rnic_rq own_rq;         /* no entries until rnic_iw_post_recv() */
	/* the receive a Send is placed into: allocated by the first
	 * message that takes one (iw_rx.c rx_take), 144 B an idle QP
	 * does not carry */
	struct rnic_rwqe *cur;

	/* a ring of job_cap (a power of two) jobs, allocated when the first
	 * job is queued (iw_job_room): an endpoint that never sends has none.
	 * jobs [job_head, sent_head) are in TCP, to be retired (completed);
	 * [sent_head, built_head) are built, their FPDUs at least partly in
	 * the stage; built_head is the one being framed, up to job_tail */
	struct job *jobs;
	unsigned job_cap;
	unsigned job_head, sent_head, built_head, job_tail;
	uint32_t next_req_id;          /* Atomic Request Identifiers */
	/* the Terminate we send (one per endpoint: it closes the stream),
	 * RNIC_TERM_ULPDU_MAX bytes allocated when it is built */
	uint8_t *term_out;

	/* outstanding Reads and Atomics (ORD), answered in this order: a
	 * table of ORD_MAX, allocated by the first Read or Atomic Request
	 * (iw_ord_table); [ord_head, ord_tail) are outstanding */
	struct iw_ord *ord;
	unsigned ord_head, ord_tail;

	/* placement of the FPDU being parsed */
	uint8_t *place;                /* contiguous target, or NULL */
	uint32_t place_mo;             /* (and scatter, rtr_in above) */
	/* the RDMAP header (or Terminate) of the FPDU being parsed, copied
	 * by its hdr callback and read by its done callback: one FPDU is
	 * parsed at a time, so they share the bytes */
	union {
		uint8_t rreq[28];
		uint8_t areq[sizeof(struct rnic_rdmap_atomic_req_hdr)];
		uint8_t aresp[sizeof(struct rnic_rdmap_atomic_resp_hdr)];
		uint8_t imm_in[sizeof(struct rnic_rdmap_imm_hdr)];
		uint8_t term_in[64];
	};
	/* the last complete message was an RDMA Write of this many bytes: an
	 * Immediate Data message right behind it completes as
	 * IBV_WC_RECV_RDMA_WITH_IMM with that byte_len */
	bool after_write;
	/* STag migration (mig, below): a query is out (mig is there); hdr
	 * runs again with the answer (bools here, where there is room) */
	bool mig_wait;
	bool mig_answered;
	int term_err;                  /* we sent a Terminate: close with -EPROTO */
	/* our Terminate is job term_job; TCP is closed (FIN) only once it is
	 * with TCP, not while work queued before it still waits for room
	 * (term_close: that close is still to come, iw_pump does it) */
	unsigned term_job;
	bool term_close;
	unsigned busy;                 /* inside iw_ep_input: free later */
	uint64_t write_acc;            /* bytes of the Write being received */
	struct rnic_timer tx_timer;    /* retries a transmit that found no mbuf */
	/* FPDUs built but not yet handed to TCP, packed back to back into
	 * one mbuf of at most one MSS: the next TCP segment (stage_flush) */
	struct rte_mbuf *stage;
	uint64_t stats_fpdus_in, stats_fpdus_out;
	/* bytes, messages, Terminates: the bound QP's, else own_xfer's */
	struct rnic_qp_xfer *xfer;
	/* the counters of an endpoint without a verbs QP: allocated with
	 * the endpoint, freed when a QP is bound (a verbs QP counts in its
	 * own; issue 21: 56 B an idle QP does not carry) */
	struct rnic_qp_xfer *own_xfer;

	/* STag migration: NULL until the first query (struct iw_mig) */
	struct iw_mig *mig;
};

/* STag of the RTR's Write or Read: never placed (zero bytes), not 0
 * because some hardware gives STag 0 a meaning; siw sends 1 as well. */
#define RTR_STAG 1

struct iw_listener;

/* Per-stack iWARP state, st->proto[RNIC_PROTO_IWARP] (created and freed
 * with the stack by the iWARP protocol module, iw_ep.c): the listeners,
 * the MPA timeout default and the counters of connection setup (an
 * endpoint that never reached RDMA mode leaves no other trace once it is
 * freed). The counters are touched from any worker. */
struct iw_stack_state {
	const struct rnic_cm_upcalls *cm_up;   /* the CM's (iw_verbs.c) */
	pthread_mutex_t listeners_lock;
	struct iw_listener *listeners;         /* by port (iw_cm.c) */
	uint32_t mpa_timeout_ms;       /* 0: RNIC_IW_MPA_TIMEOUT_MS */
	uint64_t mpa_timeouts_active, mpa_timeouts_passive;
	uint64_t mpa_backlog_full;     /* TCP accepts reset: listener backlog full */
	uint64_t mpa_embryonic_evicted;/* reset to make room in a full backlog */
	/* MPA requests refused (issue 27): malformed (key, revision,
	 * PD_Length), not acceptable (rnic_mpa_accept), rejected by the
	 * application */
	uint64_t mpa_req_bad, mpa_req_unacceptable, mpa_req_rejected;
	uint64_t rtr_sent, rtr_received;
	uint64_t zc_fpdus_out;         /* data FPDUs sent zero-copy */
	/* a port is a PCI device, which would DMA from memory never mapped
	 * for it: no zero copy on this stack (docs/iwarp.md) */
	bool port_dma;
	/* lazy allocations (startup state, job ring, ORD table, Terminate
	 * buffer, migration state, current receive) that found
	 * no memory; endpoints holding startup state now */
	uint64_t alloc_failures;
	int64_t startup_live;
	/* hostile input refused (issue 27, docs/iwarp.md): Read Responses
	 * that did not match the oldest outstanding Read (or came with none
	 * outstanding), Sends with Invalidate naming an STag that may not be
	 * invalidated remotely, Terminates received; and the Terminates we
	 * sent, by cause */
	uint64_t rresp_refused, inv_refused, terms_in;
	uint64_t terms_out[RNIC_TERM_MAX];
	/* tests: fail this many lazy allocations once fail_skip more have
	 * been made (rnic_iw_fail_allocs_after) */
	uint32_t fail_allocs, fail_skip;
};

static inline struct iw_stack_state *iw_stack(const struct rnic_stack *st)
{
	return st->proto[RNIC_PROTO_IWARP];
}

/* iw_verbs.c: iWARP's transport operations (rdma/qp.h). */
extern const struct rnic_qp_tops iw_tops;
/* iw_cm.c: free the listeners of a stack being torn down. */
void iw_listeners_free(struct iw_stack_state *s);
/* iw_cm.c: the endpoint no longer counts against its listener's backlog
 * (accepted, or its startup state goes). */
void iw_backlog_release(struct rnic_iw_ep *ep);

static inline void iw_count(uint64_t *c)
{
	__atomic_fetch_add(c, 1, __ATOMIC_RELAXED);
}

/* RNIC_IW_DEBUG=1: one line per protocol event worth knowing about. */
void iw_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* One completion to the bound QP, or to the rnic_iw_ops user. */
static inline void iw_complete_wc(struct rnic_iw_ep *ep, const struct ibv_wc *wc, bool solicited)
{
	if (ep->hooks != NULL)
		ep->hooks->completion(ep->qp, wc, solicited);
	else if (ep->ops && ep->ops->completion)
		ep->ops->completion(ep, ep->ctx, wc);
}

static inline void iw_complete(struct rnic_iw_ep *ep, uint64_t wr_id, enum ibv_wc_opcode op,
			       enum ibv_wc_status status, uint32_t len)
{
	struct ibv_wc wc = { .wr_id = wr_id, .status = status, .opcode = op,
			     .byte_len = len, .qp_num = ep->qpn };
	iw_complete_wc(ep, &wc, false);
}

/* Job number @p i (free-running) of the ring. */
static inline struct job *iw_job_at(const struct rnic_iw_ep *ep, unsigned i)
{
	return &ep->jobs[i & (ep->job_cap - 1)];
}

/* Whether @p n more jobs fit; the first call allocates the ring (false
 * when that fails: the caller treats it as full). iw_ep.c */
bool iw_job_room(struct rnic_iw_ep *ep, unsigned n);

/* The next job slot, cleared: the caller checked iw_job_room(), fills it
 * and takes it with job_tail++. */
static inline struct job *iw_job_next(struct rnic_iw_ep *ep)
{
	struct job *j = iw_job_at(ep, ep->job_tail);
	memset(j, 0, sizeof(*j));
	return j;
}

/* --- iw_tx.c: zero-copy transmit --- */
/* A flushed job lets go of its zero-copy state; mbufs still in flight
 * free it when the last one goes. */
void iw_zc_forget(struct job *j);

/* --- iw_ep.c: lifecycle --- */
void *iw_alloc(struct rnic_stack *st, const char *what, size_t size);
void iw_startup_done(struct rnic_iw_ep *ep);
struct iw_ord *iw_ord_table(struct rnic_iw_ep *ep);
struct rnic_iw_ep *iw_ep_new(struct rnic_worker *w, const struct rnic_iw_ops *ops,
			     const struct rnic_iw_params *p);
void iw_ep_free(struct rnic_iw_ep *ep);
void iw_ep_close(struct rnic_iw_ep *ep, int err);
void iw_ep_close_how(struct rnic_iw_ep *ep, int err, bool fin);
void iw_ep_flush(struct rnic_iw_ep *ep);
unsigned iw_ep_port(const struct rnic_iw_ep *ep);
uint8_t *iw_mr_check_wait(struct rnic_iw_ep *ep, uint32_t stag, uint64_t to,
			  uint64_t len, int need, enum rnic_term_cause *cause,
			  bool tagged_ddp, bool *wait);
uint8_t *iw_mr_check(struct rnic_iw_ep *ep, uint32_t stag, uint64_t to,
		     uint64_t len, int need, enum rnic_term_cause *cause, bool tagged_ddp);
void iw_terminate_off(struct rnic_iw_ep *ep, enum rnic_term_cause cause,
		      const struct rnic_term_offender *off);
void iw_terminate(struct rnic_iw_ep *ep, enum rnic_term_cause cause,
		  const uint8_t *ddp_hdr, uint16_t seg_len);

/* --- iw_tx.c: transmit --- */
void iw_pump(struct rnic_iw_ep *ep);
void iw_term_close(struct rnic_iw_ep *ep);
int iw_mpa_tx_queue(struct rnic_iw_ep *ep, uint16_t n);
void iw_tx_timer_cb(struct rnic_timer *t, void *arg);

/* --- iw_rx.c: receive and placement --- */
extern const struct rnic_fpdu_rx_ops iw_frx_ops;
void iw_ep_feed(struct rnic_iw_ep *ep, struct rte_mbuf *head, struct rte_mbuf *s,
		uint32_t off);
bool iw_rx_input(struct rnic_iw_ep *ep, const uint8_t **p, size_t *len);

/* --- iw_cm.c: MPA startup and connection management --- */
void iw_ep_input(struct rnic_iw_ep *ep, const uint8_t *p, size_t len);
void iw_enter_rts(struct rnic_iw_ep *ep);
void iw_mpa_timer_start(struct rnic_iw_ep *ep);
void iw_mpa_timer_stop(struct rnic_iw_ep *ep);
void iw_mpa_timer_cb(struct rnic_timer *t, void *arg);
void iw_rts_timer_cb(struct rnic_timer *t, void *arg);

#endif
