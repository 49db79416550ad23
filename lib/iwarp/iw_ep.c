/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * iWARP endpoints: an MPA connection on an rnic TCP stream and the RDMAP
 * message engine on top of it.
 *
 *   active:  TCP connect -> MPA request -> MPA reply -> (delay) -> RTS
 *   passive: TCP accept  -> MPA request -> request() -> MPA reply -> RTS
 *
 * Bytes that follow an MPA frame in the same TCP segment go straight to
 * the FPDU parser (the hand-off siw once got wrong). In RTS, received
 * FPDUs are placed directly from the mbuf into their target: the posted
 * receive buffer (untagged, QN 0) or the registered memory an STag names
 * (tagged). RDMA Read Requests (QN 1) are served as a stream of tagged Read
 * Responses from the source MR into the requester's sink STag (seed 001);
 * the last carries L and completes the read at the requester, in order.
 * Every protection error ends in a Terminate with its layer/type/code.
 */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_random.h>

#include "engine/engine_internal.h"
#include "engine/stack.h"
#include "iwarp/fpdu.h"
#include "iwarp/iwarp_wire.h"
#include "iwarp/mpa.h"
#include "iwarp/rdmap_op.h"
#include "iwarp/terminate.h"
#include "iwarp/iwarp.h"
#include "rnic/rnic_tcp.h"
#include "verbs/stag.h"
#include "verbs/wq.h"
#include "iwarp/iw_ep.h"
#include "tcp/tcp_internal.h"
#include "port/port.h"

_Static_assert(RNIC_IW_RTR_SEND == RNIC_MPA_RTR_SEND && RNIC_IW_RTR_WRITE == RNIC_MPA_RTR_WRITE &&
	       RNIC_IW_RTR_READ == RNIC_MPA_RTR_READ, "RTR type bits differ");

/* --- memory regions ------------------------------------------------------- */

/* rnic_iw_reg_mr(): an STag table entry with no PD (verbs MRs have one). */
struct rnic_iw_mr {
	struct rnic_mem m;
	struct rnic_stack *st;
};

struct rnic_iw_mr *rnic_iw_reg_mr(struct rnic_stack *st, void *addr, size_t len, int access)
{
	struct rnic_iw_mr *mr = calloc(1, sizeof(*mr));
	if (mr == NULL || len == 0) {
		free(mr);
		errno = len == 0 ? EINVAL : ENOMEM;
		return NULL;
	}
	mr->st = st;
	mr->m.kind = RNIC_MEM_MR;
	mr->m.addr = addr;
	mr->m.va = (uint64_t)(uintptr_t)addr;
	mr->m.len = len;
	mr->m.access = access;
	mr->m.owner = mr;
	if (rnic_stag_insert(st, &mr->m) != 0) {
		free(mr);
		errno = ENOSPC;
		return NULL;
	}
	mr->m.valid = 1;
	return mr;
}

uint32_t rnic_iw_mr_stag(const struct rnic_iw_mr *mr) { return mr->m.stag; }

void rnic_iw_dereg_mr(struct rnic_iw_mr *mr)
{
	if (mr == NULL)
		return;
	rnic_stag_remove(mr->st, &mr->m);   /* waits out placements under way */
	free(mr);
}

/* --- endpoints ------------------------------------------------------------- */

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
	uint8_t term[RNIC_TERM_ULPDU_MAX];
};

#define RQ_MAX  256
#define JOB_MAX 512
#define ORD_MAX RNIC_MAX_RD_ATOMIC
/* An MPA request, reply or reject frame with the most private data. */
#define MPA_FRAME_MAX (sizeof(struct rnic_mpa_rr_hdr) + 16 + RNIC_MPA_PD_MAX)
/* A transmit that found no free mbuf tries again this much later: TCP's
 * sent() callback only comes when an ACK frees room, and a connection
 * with nothing in flight gets no ACK. */
#define TX_RETRY_US 200

struct rnic_iw_ep {
	struct rnic_tcp_conn *c;
	struct rnic_worker *w;
	struct rnic_stack *st;
	const struct rnic_iw_ops *ops;
	void *ctx;
	void *listen_ctx;
	struct rnic_iw_params p;
	enum ep_state state;
	bool active;
	bool tcp_up;                   /* the TCP connection was established */
	uint32_t peer_ip;
	uint16_t peer_port;

	/* verbs binding (NULL/0 for rnic_iw_* users) */
	const struct rnic_iw_qp_hooks *hooks;
	void *qp;
	const void *pd;
	uint32_t qpn;

	struct rnic_mpa_params mp;
	struct rnic_mpa_rx mrx;
	struct rnic_mpa_result res;
	uint8_t pdata[RNIC_MPA_PD_MAX];
	uint16_t pd_len;

	struct rnic_fpdu_tx ftx;
	struct rnic_fpdu_rx frx;
	uint32_t tx_pos, rx_pos;       /* MPA stream positions (markers) */

	uint32_t msn[RNIC_DDP_QN_COUNT];    /* next MSN to send per queue number */
	uint32_t rx_msn[RNIC_DDP_QN_COUNT]; /* next MSN expected per queue number */
	struct rnic_rq *rq;            /* receives: the QP's, an SRQ, or own_rq */
	struct rnic_rq own_rq;
	struct rnic_rwqe cur;          /* the receive a Send is placed into */
	bool in_msg;
	uint32_t inreads;              /* Read and Atomic Requests being served (IRD) */

	struct job jobs[JOB_MAX];
	/* jobs [job_head, sent_head) are in TCP, to be retired (completed);
	 * [sent_head, built_head) are built, their FPDUs at least partly in
	 * the stage; built_head is the one being framed, up to job_tail */
	unsigned job_head, sent_head, built_head, job_tail;

	/* outstanding Reads and Atomics (ORD), answered in this order */
	struct {
		uint64_t wr_id;
		uint32_t len;
		bool signaled;
		bool atomic;
		bool rtr;              /* the zero-length Read RTR: answered silently */
		uint8_t wc_op;         /* enum ibv_wc_opcode of the completion */
		uint32_t req_id;       /* atomic: the Request Identifier */
		uint64_t res_addr;     /* atomic: where the original value goes */
	} ord[ORD_MAX];
	unsigned ord_head, ord_tail;
	uint32_t next_req_id;          /* Atomic Request Identifiers */

	/* placement of the FPDU being parsed */
	uint8_t *place;                /* contiguous target, or NULL */
	bool scatter;                  /* into cur's SGEs at place_mo */
	uint32_t place_mo;
	uint8_t rreq[28];
	uint8_t areq[sizeof(struct rnic_rdmap_atomic_req_hdr)];
	uint8_t aresp[sizeof(struct rnic_rdmap_atomic_resp_hdr)];
	uint8_t imm_in[sizeof(struct rnic_rdmap_imm_hdr)];
	/* the last complete message was an RDMA Write of this many bytes: an
	 * Immediate Data message right behind it completes as
	 * IBV_WC_RECV_RDMA_WITH_IMM with that byte_len */
	bool after_write;
	uint32_t last_write_len;
	uint64_t write_acc;            /* bytes of the Write being received */
	uint8_t term_in[64];
	bool rtr_in;                   /* the FPDU being parsed is the peer's RTR */
	struct rnic_timer rts_timer;
	struct rnic_timer tx_timer;    /* retries a transmit that found no mbuf */
	struct rnic_timer mpa_timer;   /* MPA startup limit (mpa_timer_start) */
	uint8_t mpa_tx[MPA_FRAME_MAX]; /* our MPA request/reply TCP has not taken */
	uint16_t mpa_tx_len;
	/* FPDUs built but not yet handed to TCP, packed back to back into
	 * one mbuf of at most one MSS: the next TCP segment (stage_flush) */
	struct rte_mbuf *stage;
	uint64_t stats_fpdus_in, stats_fpdus_out, terms_out, terms_in;
	struct rnic_qp_xfer own_xfer;
	struct rnic_qp_xfer *xfer;     /* the bound QP's, or own_xfer */
	int term_err;                  /* we sent a Terminate: close with -EPROTO */
	unsigned busy;                 /* inside ep_input: free later */

	/* STag migration (seed 000): a tagged segment (or a Read Request) for
	 * an STag of another port waits for the control component; the rest
	 * of the received chunk is parked, later bytes wait in TCP (hold) */
	struct rnic_stag_mig mig;
	bool mig_wait;                 /* a query is out */
	bool mig_answered;             /* hdr runs again with the answer */
	struct rte_mbuf *park;         /* the chunk being parsed, from park_seg */
	struct rte_mbuf *park_seg;
	uint32_t park_off;
	size_t park_left;              /* bytes of the segment not parsed */
	uint64_t migrations;
};

struct iw_listener {
	const struct rnic_iw_ops *ops;
	void *ctx;
	struct rnic_iw_params p;
	struct rnic_stack *st;
	uint16_t port;
	struct iw_listener *next;
};

/* Listeners by stack and port, so that rnic_iw_unlisten() can free them. */
static struct iw_listener *listeners;
static pthread_mutex_t listeners_lock = PTHREAD_MUTEX_INITIALIZER;

void rnic_iw_params_default(struct rnic_iw_params *p)
{
	memset(p, 0, sizeof(*p));
	p->crc = true;
	p->ird = 16;
	p->ord = 16;
	p->p2p = false;
	p->rtr_types = RNIC_IW_RTR_ALL;
	p->rts_delay_us = 50000;
	p->mpa_timeout_ms = 0;   /* the stack's */
}

/* --- stack-wide state ------------------------------------------------------ */

/* By the stack's process-wide index: the MPA timeout default and the
 * counters of connection setup. An endpoint that never reached RDMA mode
 * leaves no other trace once it is freed. Touched from any worker. */
struct iw_stack_state {
	uint32_t mpa_timeout_ms;       /* 0: RNIC_IW_MPA_TIMEOUT_MS */
	uint64_t mpa_timeouts_active, mpa_timeouts_passive;
	uint64_t rtr_sent, rtr_received;
};
static struct iw_stack_state iw_stacks[RNIC_MAX_STACKS];

static struct iw_stack_state *iw_stack(const struct rnic_stack *st)
{
	return &iw_stacks[st->id < RNIC_MAX_STACKS ? st->id : 0];
}

static void iw_count(uint64_t *c)
{
	__atomic_fetch_add(c, 1, __ATOMIC_RELAXED);
}

void rnic_iw_set_mpa_timeout(struct rnic_stack *st, uint32_t ms)
{
	__atomic_store_n(&iw_stack(st)->mpa_timeout_ms, ms, __ATOMIC_RELAXED);
}

void rnic_iw_stats(const struct rnic_stack *st, struct rnic_iw_stats *s)
{
	struct iw_stack_state *t = iw_stack(st);
	s->mpa_timeouts_active = __atomic_load_n(&t->mpa_timeouts_active, __ATOMIC_RELAXED);
	s->mpa_timeouts_passive = __atomic_load_n(&t->mpa_timeouts_passive, __ATOMIC_RELAXED);
	s->rtr_sent = __atomic_load_n(&t->rtr_sent, __ATOMIC_RELAXED);
	s->rtr_received = __atomic_load_n(&t->rtr_received, __ATOMIC_RELAXED);
}

struct rnic_worker *rnic_iw_worker(const struct rnic_iw_ep *ep) { return ep->w; }

static void ep_pump(struct rnic_iw_ep *ep);

/* RNIC_IW_DEBUG=1: one line per protocol event worth knowing about. */
static void iw_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void iw_debug(const char *fmt, ...)
{
	static int on = -1;
	if (on < 0)
		on = getenv("RNIC_IW_DEBUG") != NULL;
	if (!on)
		return;
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "rnic-iw: ");
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}
static void ep_close(struct rnic_iw_ep *ep, int err);
static void ep_close_how(struct rnic_iw_ep *ep, int err, bool fin);
static void ep_free(struct rnic_iw_ep *ep);
static const struct rnic_fpdu_rx_ops frx_ops;

static void complete_wc(struct rnic_iw_ep *ep, const struct ibv_wc *wc, bool solicited)
{
	if (ep->hooks != NULL)
		ep->hooks->completion(ep->qp, wc, solicited);
	else if (ep->ops && ep->ops->completion)
		ep->ops->completion(ep, ep->ctx, wc);
}

static void complete(struct rnic_iw_ep *ep, uint64_t wr_id, enum ibv_wc_opcode op,
		     enum ibv_wc_status status, uint32_t len)
{
	struct ibv_wc wc = { .wr_id = wr_id, .status = status, .opcode = op,
			     .byte_len = len, .qp_num = ep->qpn };
	complete_wc(ep, &wc, false);
}

/* The MR or window an STag names, checked for this stream's PD/QP, rights
 * and bounds. @return the host address or NULL with *cause set. */
static unsigned ep_port(const struct rnic_iw_ep *ep)
{
	return ep->c != NULL && ep->c->port != NULL ? ep->c->port->idx : 0;
}

/* The access check of a remote request that arrived through the stream's
 * port. With @p may_wait, an STag of another port that this port has not
 * imported yet returns NULL with *cause = 0 and *wait set: ask (ep_migrate). */
static uint8_t *mr_check_wait(struct rnic_iw_ep *ep, uint32_t stag, uint64_t to,
			      uint64_t len, int need, enum rnic_term_cause *cause,
			      bool tagged_ddp, bool *wait)
{
	enum rnic_stag_fault e;
	uint8_t *a = rnic_stag_check_at(ep->st, ep_port(ep), stag, ep->pd, ep->qpn, to, len,
					need, &e);
	if (wait != NULL)
		*wait = false;
	if (a == NULL && e == RNIC_STAG_MIGRATE) {
		if (wait != NULL && !ep->mig_answered) {
			*wait = true;
			return NULL;
		}
		e = RNIC_STAG_INVALID;   /* the owner refused it (or revoked it since) */
	}
	if (a == NULL)
		*cause = tagged_ddp ? rnic_term_tagged_fault(e) : rnic_term_read_src_fault(e);
	return a;
}

static uint8_t *mr_check(struct rnic_iw_ep *ep, uint32_t stag, uint64_t to,
			 uint64_t len, int need, enum rnic_term_cause *cause,
			 bool tagged_ddp)
{
	return mr_check_wait(ep, stag, to, len, need, cause, tagged_ddp, NULL);
}

static void ep_mig_done(struct rnic_stag_mig *q);

/* Ask the control component about @p stag; the FPDU waits (hdr runs again
 * with the answer, from ep_mig_done()). */
static int ep_migrate(struct rnic_iw_ep *ep, uint32_t stag)
{
	ep->mig.st = ep->st;
	ep->mig.w = ep->w;
	ep->mig.stag = stag;
	ep->mig.port = (uint8_t)ep_port(ep);
	ep->mig.done = ep_mig_done;
	ep->mig_wait = true;
	ep->migrations++;
	ep->busy++;   /* alive until the answer */
	rnic_stag_migrate(&ep->mig);
	return RNIC_FPDU_WAIT;
}

/* Queue a Terminate for @p cause, quoting what @p off holds of the
 * offending segment (the Read Request header too, for an error on a Read
 * Request: RFC 5040 section 7.4), and close after it is sent. */
static void ep_terminate_off(struct rnic_iw_ep *ep, enum rnic_term_cause cause,
			     const struct rnic_term_offender *off)
{
	bool rdma_mode = ep->state == EP_RTS || ep->state == EP_RTS_WAIT ||
			 ep->state == EP_RTR_WAIT;
	if (!rdma_mode || (ep->job_tail - ep->job_head) >= JOB_MAX) {
		if (ep->state != EP_CLOSED)
			ep_close(ep, -EPROTO);
		return;
	}
	struct job *j = &ep->jobs[ep->job_tail % JOB_MAX];
	memset(j, 0, sizeof(*j));
	iw_debug("terminate: cause %d (%s)", cause, rnic_term_name(cause));
	int n = rnic_term_build(cause, ep->msn[RNIC_DDP_QN_TERMINATE]++, off, j->term,
				sizeof(j->term));
	if (n < 0)
		return;
	j->kind = JOB_TERM;
	j->len = (uint32_t)n;
	ep->job_tail++;
	ep->terms_out++;
	__atomic_store_n(&ep->xfer->terms_out, ep->xfer->terms_out + 1, __ATOMIC_RELAXED);
	ep->term_err = -EPROTO;
	ep_pump(ep);
	ep->state = EP_CLOSING;
	rnic_tcp_close(ep->c);
}

/* ep_terminate_off() quoting the DDP header @p ddp_hdr (NULL: none) of a
 * segment of ULPDU_Length @p seg_len. */
static void ep_terminate(struct rnic_iw_ep *ep, enum rnic_term_cause cause,
			 const uint8_t *ddp_hdr, uint16_t seg_len)
{
	struct rnic_term_offender off = { .ddp_hdr = ddp_hdr, .ddp_seg_len = seg_len };
	ep_terminate_off(ep, cause, &off);
}

/* --- transmit --------------------------------------------------------------- */

/* The pieces of [off, off + len) of a gather list. @return iovec count. */
static unsigned gather(const struct ibv_sge *sge, uint32_t nsge, uint32_t off,
		       uint32_t len, struct iovec *iov)
{
	unsigned n = 0;
	for (uint32_t i = 0; i < nsge && len > 0; i++) {
		if (off >= sge[i].length) {
			off -= sge[i].length;
			continue;
		}
		uint32_t take = sge[i].length - off < len ? sge[i].length - off : len;
		iov[n].iov_base = (void *)(uintptr_t)(sge[i].addr + off);
		iov[n].iov_len = take;
		n++;
		len -= take;
		off = 0;
	}
	return n;
}

/* A transmit found no free mbuf: try again from the tx timer, since
 * nothing else may wake this endpoint. @return -ENOBUFS. */
static int tx_stalled(struct rnic_iw_ep *ep)
{
	if (!rnic_timer_pending(&ep->tx_timer))
		rnic_timer_arm(&ep->w->timers, &ep->tx_timer, ep->w->now_tsc, TX_RETRY_US);
	return -ENOBUFS;
}

static void tx_timer_cb(struct rnic_timer *t, void *arg)
{
	(void)t;
	struct rnic_iw_ep *ep = arg;
	ep->busy++;   /* a completion may close the endpoint under us */
	ep_pump(ep);
	if (--ep->busy == 0 && ep->state == EP_CLOSED)
		ep_free(ep);
}

/*
 * Hand the pending MPA frame (our request or reply) to TCP; FPDUs may
 * only follow it. @return 0 when it is out (or none is pending), -ENOBUFS
 * when it waits for the tx timer, another -errno when the connection
 * cannot take it any more (it is dropped then).
 */
static int mpa_tx_flush(struct rnic_iw_ep *ep)
{
	if (ep->mpa_tx_len == 0)
		return 0;
	if (ep->c == NULL) {
		ep->mpa_tx_len = 0;
		return -ENOTCONN;
	}
	struct rte_mbuf *m = rte_pktmbuf_alloc(rnic_tcp_pool(ep->c));
	if (m == NULL)
		return tx_stalled(ep);
	if (ep->mpa_tx_len > rte_pktmbuf_tailroom(m)) {
		rte_pktmbuf_free(m);
		ep->mpa_tx_len = 0;
		return -EMSGSIZE;
	}
	memcpy(rte_pktmbuf_append(m, ep->mpa_tx_len), ep->mpa_tx, ep->mpa_tx_len);
	int rc = rnic_tcp_send(ep->c, m);
	if (rc != 0) {
		rte_pktmbuf_free(m);
		/* nothing is in flight yet: no ACK would bring a sent() */
		if (rc == -EAGAIN || rc == -ENOBUFS)
			return tx_stalled(ep);
		ep->mpa_tx_len = 0;
		return rc;
	}
	ep->mpa_tx_len = 0;
	return 0;
}

/* Queue @p n bytes of MPA frame in ep->mpa_tx for TCP and try to send it.
 * Its stream bytes count from now on (markers), sent or still waiting. */
static int mpa_tx_queue(struct rnic_iw_ep *ep, uint16_t n)
{
	ep->mpa_tx_len = n;
	ep->tx_pos += n;
	int rc = mpa_tx_flush(ep);
	return rc == -ENOBUFS ? 0 : rc;
}

/*
 * Hand the stage (FPDUs built back to back) to TCP as one segment.
 * @return 0 when it went (or there was none), -EAGAIN when TCP has no
 * room (its sent() callback resumes us), -ENOBUFS when it waits for the
 * tx timer, another -errno when the connection takes nothing more (the
 * stage is dropped then).
 */
static int stage_flush(struct rnic_iw_ep *ep)
{
	struct rte_mbuf *m = ep->stage;
	if (m == NULL)
		return 0;
	if (ep->c == NULL) {
		rte_pktmbuf_free(m);
		ep->stage = NULL;
		return -ENOTCONN;
	}
	int rc = rnic_tcp_send(ep->c, m);
	if (rc == 0) {
		/* every job framed before the one being framed went with it */
		ep->stage = NULL;
		ep->sent_head = ep->built_head;
		return 0;
	}
	if (rc == -ENOBUFS)
		return tx_stalled(ep);
	if (rc != -EAGAIN) {
		rte_pktmbuf_free(m);
		ep->stage = NULL;
	}
	return rc;
}

/*
 * Frame one ULPDU (header + payload pieces) into the stage. Small FPDUs
 * share a segment: the stage takes FPDUs until the next one would pass the
 * MSS, and goes to TCP then or when ep_pump() has run out of work (every
 * segment still begins with an FPDU and holds whole FPDUs, RFC 5044 §8).
 * 64-byte Writes thus cost one segment per MSS, not one per Write.
 * @return 0, -EAGAIN when TCP has no room now (its sent() callback resumes
 * us), -ENOBUFS when no mbuf was free (the tx timer does), another -errno
 * when the connection takes nothing more.
 */
static int send_fpdu(struct rnic_iw_ep *ep, const void *hdr, size_t hdr_len,
		     const struct iovec *iov, unsigned niov, uint32_t len)
{
	size_t flen = rnic_fpdu_tx_len(&ep->ftx, (uint32_t)(hdr_len + len));
	uint32_t staged = ep->stage != NULL ? rte_pktmbuf_pkt_len(ep->stage) : 0;
	int rc;

	if (staged != 0 && (staged + flen > rnic_tcp_mss(ep->c) ||
			    flen > rte_pktmbuf_tailroom(ep->stage) ||
			    rnic_tcp_send_space(ep->c) < staged + flen)) {
		if ((rc = stage_flush(ep)) != 0)
			return rc;
		staged = 0;
	}
	if (rnic_tcp_send_space(ep->c) < flen)
		return -EAGAIN;
	if (ep->stage == NULL) {
		ep->stage = rte_pktmbuf_alloc(rnic_tcp_pool(ep->c));
		if (ep->stage == NULL)
			return tx_stalled(ep);
		if (flen > rte_pktmbuf_tailroom(ep->stage)) {
			rte_pktmbuf_free(ep->stage);
			ep->stage = NULL;
			return -EMSGSIZE;
		}
	}
	uint8_t *out = (uint8_t *)rte_pktmbuf_append(ep->stage, (uint16_t)flen);
	/* the builder advances the marker position: undone on failure */
	struct rnic_fpdu_tx ftx = ep->ftx;
	int n = rnic_fpdu_build(&ep->ftx, hdr, hdr_len, iov, len ? niov : 0, out, flen);
	if (n < 0) {
		ep->ftx = ftx;
		rte_pktmbuf_trim(ep->stage, (uint16_t)flen);
		if (staged == 0) {
			rte_pktmbuf_free(ep->stage);
			ep->stage = NULL;
		}
		return n;
	}
	if (staged != 0)   /* behind another FPDU in the segment */
		__atomic_store_n(&ep->xfer->fpdus_packed, ep->xfer->fpdus_packed + 1,
				 __ATOMIC_RELAXED);
	ep->stats_fpdus_out++;
	__atomic_store_n(&ep->xfer->bytes_out, ep->xfer->bytes_out + len, __ATOMIC_RELAXED);
	return 0;
}

/* Largest DDP payload for a header of @p hdr_len bytes. */
static uint32_t seg_max(struct rnic_iw_ep *ep, uint32_t hdr_len)
{
	return rnic_ddp_max_payload(rnic_tcp_mss(ep->c), ep->res.markers_tx, hdr_len);
}

/* The Immediate Data message behind a Write or Send with Immediate (RFC
 * 7306): untagged, QN 0, one segment, the 8 bytes of data as its ULPDU. */
static int send_imm(struct rnic_iw_ep *ep, struct job *j)
{
	struct {
		struct rnic_ddp_untagged_hdr d;
		struct rnic_rdmap_imm_hdr i;
	} __rte_packed h;
	memset(&h, 0, sizeof(h));
	h.d.ddp_ctrl = rnic_ddp_ctrl(false, true);
	h.d.rdmap_ctrl = rnic_rdmap_ctrl(j->imm_op);
	h.d.qn = RTE_BE32(RNIC_DDP_QN_SEND);
	h.d.msn = rte_cpu_to_be_32(ep->msn[RNIC_DDP_QN_SEND]);
	memcpy(h.i.immediate_data, &j->imm_data, sizeof(j->imm_data));
	int rc = send_fpdu(ep, &h, sizeof(h), NULL, 0, 0);
	if (rc == 0)
		ep->msn[RNIC_DDP_QN_SEND]++;
	return rc;
}

/* An Atomic Request (QN 1, shared with Read Requests) or an Atomic
 * Response (QN 3): one untagged segment each, no payload. */
static int send_atomic(struct rnic_iw_ep *ep, struct job *j)
{
	struct {
		struct rnic_ddp_untagged_hdr d;
		union {
			struct rnic_rdmap_atomic_req_hdr q;
			struct rnic_rdmap_atomic_resp_hdr r;
		};
	} __rte_packed h;
	size_t n = sizeof(h.d);
	uint32_t qn = j->kind == JOB_ATOMIC_REQ ? RNIC_DDP_QN_READ_REQ : RNIC_DDP_QN_ATOMIC_RESP;
	memset(&h, 0, sizeof(h));
	h.d.ddp_ctrl = rnic_ddp_ctrl(false, true);
	h.d.qn = rte_cpu_to_be_32(qn);
	h.d.msn = rte_cpu_to_be_32(ep->msn[qn]);
	if (j->kind == JOB_ATOMIC_REQ) {
		h.d.rdmap_ctrl = rnic_rdmap_ctrl(RNIC_RDMAP_OP_ATOMIC_REQ);
		h.q.atomic_op = rte_cpu_to_be_32(j->atomic_op);
		h.q.req_id = rte_cpu_to_be_32(j->req_id);
		h.q.remote_stag = rte_cpu_to_be_32(j->stag);
		h.q.remote_to = rte_cpu_to_be_64(j->to);
		h.q.add_swap_data = rte_cpu_to_be_64(j->add_swap);
		h.q.add_swap_mask = rte_cpu_to_be_64(j->add_swap_mask);
		h.q.compare_data = rte_cpu_to_be_64(j->compare);
		h.q.compare_mask = rte_cpu_to_be_64(j->compare_mask);
		n += sizeof(h.q);
	} else {
		h.d.rdmap_ctrl = rnic_rdmap_ctrl(RNIC_RDMAP_OP_ATOMIC_RESP);
		h.r.orig_req_id = rte_cpu_to_be_32(j->req_id);
		h.r.orig_remote_data = rte_cpu_to_be_64(j->orig);
		n += sizeof(h.r);
	}
	int rc = send_fpdu(ep, &h, n, NULL, 0, 0);
	if (rc == 0)
		ep->msn[qn]++;
	return rc;
}

/* Send as much of @p j as TCP takes. @return 0 when it is all sent, else
 * send_fpdu()'s error. */
static int job_run(struct rnic_iw_ep *ep, struct job *j)
{
	if (j->kind == JOB_TERM) {
		/* the Terminate ULPDU already holds its DDP header */
		return send_fpdu(ep, j->term, j->len, NULL, 0, 0);
	}
	if (j->kind == JOB_READ_REQ) {
		struct {
			struct rnic_ddp_untagged_hdr d;
			struct rnic_rdmap_read_req_hdr r;
		} __rte_packed h = {
			.d = { rnic_ddp_ctrl(false, true), rnic_rdmap_ctrl(RNIC_RDMAP_OP_READ_REQ),
			       0, RTE_BE32(RNIC_DDP_QN_READ_REQ),
			       rte_cpu_to_be_32(ep->msn[RNIC_DDP_QN_READ_REQ]), 0 },
			.r = { rte_cpu_to_be_32(j->stag), rte_cpu_to_be_64(j->to),
			       rte_cpu_to_be_32(j->len), rte_cpu_to_be_32(j->src_stag),
			       rte_cpu_to_be_64(j->src_to) },
		};
		int rc = send_fpdu(ep, &h, sizeof(h), NULL, 0, 0);
		if (rc != 0)
			return rc;
		ep->msn[RNIC_DDP_QN_READ_REQ]++;
		return 0;
	}
	if (j->kind == JOB_ATOMIC_REQ || j->kind == JOB_ATOMIC_RESP)
		return send_atomic(ep, j);
	if (j->data_done)
		return send_imm(ep, j);   /* only the Immediate Data was left */
	bool tagged = j->kind != JOB_SEND;
	uint32_t hl = tagged ? RNIC_DDP_TAGGED_HDR_LEN : RNIC_DDP_UNTAGGED_HDR_LEN;
	uint32_t max = seg_max(ep, hl);
	do {
		uint32_t n = j->len - j->off < max ? j->len - j->off : max;
		bool last = j->off + n == j->len;
		union {
			struct rnic_ddp_tagged_hdr t;
			struct rnic_ddp_untagged_hdr u;
		} h;
		if (tagged) {
			uint8_t op = j->kind == JOB_WRITE ? RNIC_RDMAP_OP_WRITE : RNIC_RDMAP_OP_READ_RESP;
			h.t = (struct rnic_ddp_tagged_hdr){ rnic_ddp_ctrl(true, last),
				rnic_rdmap_ctrl(op), rte_cpu_to_be_32(j->stag),
				rte_cpu_to_be_64(j->to + j->off) };
		} else {
			h.u = (struct rnic_ddp_untagged_hdr){ rnic_ddp_ctrl(false, last),
				rnic_rdmap_ctrl(j->rdmap_op), rte_cpu_to_be_32(j->inv_stag),
				RTE_BE32(RNIC_DDP_QN_SEND),
				rte_cpu_to_be_32(ep->msn[RNIC_DDP_QN_SEND]),
				rte_cpu_to_be_32(j->off) };
		}
		struct iovec iov[RNIC_MAX_SGE];
		unsigned niov = gather(j->sge, j->num_sge, j->off, n, iov);
		int rc = send_fpdu(ep, &h, hl, iov, niov, n);
		if (rc != 0)
			return rc;
		j->off += n;
	} while (j->off < j->len);
	if (!tagged)
		ep->msn[RNIC_DDP_QN_SEND]++;
	j->data_done = true;
	return j->imm ? send_imm(ep, j) : 0;
}

/* Retire the jobs whose FPDUs TCP took: counters, IRD, completions.
 * @return false when a completion closed the endpoint. */
static bool retire_jobs(struct rnic_iw_ep *ep)
{
	while (ep->job_head != ep->sent_head) {
		struct job *j = &ep->jobs[ep->job_head % JOB_MAX];
		ep->job_head++;
		if (j->rtr) {   /* the connection's, not the ULP's */
			if (j->kind == JOB_READ_RESP)
				ep->inreads--;   /* the answer to a Read RTR */
			else
				iw_count(&iw_stack(ep->st)->rtr_sent);
			continue;
		}
		if (j->kind != JOB_TERM)
			__atomic_store_n(&ep->xfer->ops_out, ep->xfer->ops_out + 1, __ATOMIC_RELAXED);
		if (j->kind == JOB_READ_RESP || j->kind == JOB_ATOMIC_RESP) {
			ep->inreads--;
			continue;
		}
		if (!j->signaled)
			continue;
		if (j->kind == JOB_SEND)
			complete(ep, j->wr_id, IBV_WC_SEND, IBV_WC_SUCCESS, j->len);
		else if (j->kind == JOB_WRITE)
			complete(ep, j->wr_id, IBV_WC_RDMA_WRITE, IBV_WC_SUCCESS, j->len);
		if (ep->state == EP_CLOSED)
			return false;
	}
	return true;
}

/*
 * Frame queued work while TCP has room, then hand the stage to TCP and
 * retire what went. A job completes only once its last FPDU left the
 * stage for TCP, so a completion never stands for bytes that could still
 * be dropped here; the verbs layer queues a whole SQ batch before it pumps
 * (rnic_iw_post_wr(), rnic_iw_kick()), so small FPDUs of many work
 * requests share segments.
 */
static void ep_pump(struct rnic_iw_ep *ep)
{
	bool was_full = ep->job_tail - ep->job_head >= JOB_MAX / 2;
	if (ep->c == NULL || mpa_tx_flush(ep) != 0)
		return;   /* FPDUs go only behind our MPA frame */
	int rc = 0;
	while (ep->built_head != ep->job_tail) {
		struct job *j = &ep->jobs[ep->built_head % JOB_MAX];
		rc = job_run(ep, j);
		if (rc != 0)
			break;   /* resumed by TCP's sent() callback or the tx timer */
		ep->built_head++;
	}
	/* out of work (or of room): what is staged goes now; on failure,
	 * sent() or the tx timer brings us back here */
	if (rc == 0)
		stage_flush(ep);
	if (!retire_jobs(ep) || rc != 0)
		return;
	if (was_full && ep->hooks != NULL && ep->hooks->tx_room != NULL &&
	    ep->state == EP_RTS)
		ep->hooks->tx_room(ep->qp);
}

void rnic_iw_kick(struct rnic_iw_ep *ep)
{
	ep_pump(ep);
}

bool rnic_iw_has_room(const struct rnic_iw_ep *ep)
{
	return ep->job_tail - ep->job_head < JOB_MAX - 1;
}

/* Queue one work request; the caller validated it. */
static int queue_wr(struct rnic_iw_ep *ep, const struct ibv_send_wr *wr, bool keep_sge)
{
	if (ep->state != EP_RTS)
		return -ENOTCONN;
	/* one slot stays free for a Terminate */
	if (ep->job_tail - ep->job_head >= JOB_MAX - 1)
		return -ENOMEM;
	struct job *j = &ep->jobs[ep->job_tail % JOB_MAX];
	memset(j, 0, offsetof(struct job, term));
	j->wr_id = wr->wr_id;
	j->signaled = wr->send_flags & IBV_SEND_SIGNALED;
	if (keep_sge) {
		j->sge = wr->sg_list;
		j->num_sge = (uint32_t)wr->num_sge;
	} else if (wr->num_sge == 1) {
		j->one = wr->sg_list[0];
		j->sge = &j->one;
		j->num_sge = 1;
	}
	for (uint32_t i = 0; i < j->num_sge; i++)
		j->len += j->sge[i].length;
	switch (wr->opcode) {
	case IBV_WR_SEND_WITH_IMM:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
		/* RFC 7306: the data message, then an Immediate Data message;
		 * a solicited event rides on the latter */
		j->imm = true;
		j->imm_data = wr->imm_data;
		j->imm_op = (wr->send_flags & IBV_SEND_SOLICITED) ? RNIC_RDMAP_OP_IMM_DATA_SE :
								      RNIC_RDMAP_OP_IMM_DATA;
		if (wr->opcode == IBV_WR_SEND_WITH_IMM) {
			j->kind = JOB_SEND;
			j->rdmap_op = RNIC_RDMAP_OP_SEND;
		} else {
			j->kind = JOB_WRITE;
			j->stag = wr->wr.rdma.rkey;
			j->to = wr->wr.rdma.remote_addr;
		}
		break;
	case IBV_WR_ATOMIC_CMP_AND_SWP:
	case IBV_WR_ATOMIC_FETCH_AND_ADD: {
		/* one 8-byte result buffer; Atomic Requests count against ORD
		 * like Reads and are answered in order with them (RFC 7306) */
		if (j->num_sge != 1 || j->len != 8)
			return -EINVAL;
		if (ep->ord_tail - ep->ord_head >= ep->res.ord ||
		    ep->ord_tail - ep->ord_head >= ORD_MAX)
			return -ENOMEM;
		bool cas = wr->opcode == IBV_WR_ATOMIC_CMP_AND_SWP;
		j->kind = JOB_ATOMIC_REQ;
		j->stag = wr->wr.atomic.rkey;
		j->to = wr->wr.atomic.remote_addr;
		j->req_id = ep->next_req_id++;
		if (cas) {
			j->atomic_op = RNIC_ATOMIC_CMP_SWAP;
			j->add_swap = wr->wr.atomic.swap;
			j->add_swap_mask = UINT64_MAX;     /* swap every bit */
			j->compare = wr->wr.atomic.compare_add;
			j->compare_mask = UINT64_MAX;      /* compare every bit */
		} else {
			j->atomic_op = RNIC_ATOMIC_FETCH_ADD;
			j->add_swap = wr->wr.atomic.compare_add;
			j->add_swap_mask = 0;              /* one 64-bit field */
		}
		unsigned o = ep->ord_tail % ORD_MAX;
		ep->ord[o].wr_id = wr->wr_id;
		ep->ord[o].len = 8;
		ep->ord[o].signaled = j->signaled;
		ep->ord[o].atomic = true;
		ep->ord[o].rtr = false;
		ep->ord[o].wc_op = cas ? IBV_WC_COMP_SWAP : IBV_WC_FETCH_ADD;
		ep->ord[o].req_id = j->req_id;
		ep->ord[o].res_addr = j->sge[0].addr;
		ep->ord_tail++;
		break;
	}
	case IBV_WR_SEND:
	case IBV_WR_SEND_WITH_INV:
		j->kind = JOB_SEND;
		if (wr->opcode == IBV_WR_SEND_WITH_INV) {
			j->inv_stag = wr->invalidate_rkey;
			j->rdmap_op = (wr->send_flags & IBV_SEND_SOLICITED) ?
				RNIC_RDMAP_OP_SEND_SE_INV : RNIC_RDMAP_OP_SEND_INV;
		} else {
			j->rdmap_op = (wr->send_flags & IBV_SEND_SOLICITED) ?
				RNIC_RDMAP_OP_SEND_SE : RNIC_RDMAP_OP_SEND;
		}
		break;
	case IBV_WR_RDMA_WRITE:
		j->kind = JOB_WRITE;
		j->stag = wr->wr.rdma.rkey;
		j->to = wr->wr.rdma.remote_addr;
		break;
	case IBV_WR_RDMA_READ:
		if (j->num_sge != 1 || ep->ord_tail - ep->ord_head >= ep->res.ord ||
		    ep->ord_tail - ep->ord_head >= ORD_MAX)
			return j->num_sge != 1 ? -EINVAL : -ENOMEM;
		/* the sink is our own MR: its STag and TO go in the request */
		j->kind = JOB_READ_REQ;
		j->stag = j->sge[0].lkey;
		j->to = j->sge[0].addr;
		j->src_stag = wr->wr.rdma.rkey;
		j->src_to = wr->wr.rdma.remote_addr;
		ep->ord[ep->ord_tail % ORD_MAX].wr_id = wr->wr_id;
		ep->ord[ep->ord_tail % ORD_MAX].len = j->len;
		ep->ord[ep->ord_tail % ORD_MAX].signaled = j->signaled;
		ep->ord[ep->ord_tail % ORD_MAX].atomic = false;
		ep->ord[ep->ord_tail % ORD_MAX].rtr = false;
		ep->ord[ep->ord_tail % ORD_MAX].wc_op = IBV_WC_RDMA_READ;
		ep->ord_tail++;
		break;
	default:
		return -EINVAL;
	}
	ep->job_tail++;
	if (!keep_sge)
		ep_pump(ep);   /* rnic_iw_post_send(): one at a time */
	return 0;
}

int rnic_iw_post_wr(struct rnic_iw_ep *ep, const struct ibv_send_wr *wr)
{
	return queue_wr(ep, wr, true);
}

int rnic_iw_post_send(struct rnic_iw_ep *ep, const struct ibv_send_wr *wr)
{
	if (ep->state != EP_RTS)
		return -ENOTCONN;
	if (wr->num_sge > 1 || (wr->num_sge == 1 && wr->sg_list == NULL))
		return -EINVAL;
	const struct ibv_sge *sg = wr->num_sge ? wr->sg_list : NULL;
	enum rnic_term_cause cause;
	if (wr->opcode == IBV_WR_RDMA_READ) {
		if (sg == NULL || mr_check(ep, sg->lkey, sg->addr, sg->length,
					   IBV_ACCESS_LOCAL_WRITE, &cause, false) == NULL)
			return -EINVAL;
	} else if (wr->opcode != IBV_WR_SEND && wr->opcode != IBV_WR_RDMA_WRITE) {
		return -EINVAL;
	} else if (sg && sg->length && (wr->send_flags & IBV_SEND_INLINE) == 0 &&
		   mr_check(ep, sg->lkey, sg->addr, sg->length, 0, &cause, false) == NULL) {
		return -EINVAL;   /* a bad lkey never reaches the wire */
	}
	return queue_wr(ep, wr, false);
}

int rnic_iw_post_recv(struct rnic_iw_ep *ep, uint64_t wr_id, void *buf, uint32_t len)
{
	struct rnic_rq *rq = &ep->own_rq;
	if (ep->state == EP_CLOSED)
		return -ENOTCONN;
	if (ep->rq != rq || rq->prod - rq->cons >= rq->size)
		return ep->rq != rq ? -EINVAL : -ENOMEM;
	struct rnic_rwqe *e = &rq->e[rq->prod & rq->mask];
	e->wr_id = wr_id;
	e->num_sge = 1;
	e->total = len;
	e->sge[0] = (struct ibv_sge){ (uint64_t)(uintptr_t)buf, len, 0 };
	__atomic_store_n(&rq->prod, rq->prod + 1, __ATOMIC_RELEASE);
	return 0;
}

/* --- receive: FPDU callbacks ---------------------------------------------- */

/* STag of the RTR's Write or Read: never placed (zero bytes), not 0
 * because some hardware gives STag 0 a meaning; siw sends 1 as well. */
#define RTR_STAG 1

/*
 * Responder in peer-to-peer mode: the first FPDU must be the RTR message
 * its reply chose (RFC 6581 section 9.2), zero bytes in one segment. It
 * belongs to the connection, not to the ULP: it takes no receive, makes
 * no completion and needs no STag. Anything else ends the connection with
 * a Terminate, "no matching RTR option". Its MSN counts like any other
 * (a Send RTR is message 1 of queue 0, a Read RTR message 1 of queue 1).
 */
static int rtr_hdr(struct rnic_iw_ep *ep, const struct rnic_fpdu_info *fi)
{
	uint8_t want = ep->res.rtr == RNIC_MPA_RTR_SEND ? RNIC_RDMAP_OP_SEND :
		       ep->res.rtr == RNIC_MPA_RTR_WRITE ? RNIC_RDMAP_OP_WRITE :
		       RNIC_RDMAP_OP_READ_REQ;
	bool ok = fi->opcode == want && fi->last && fi->payload_len == 0;
	if (ok && !fi->tagged) {
		const struct rnic_ddp_untagged_hdr *u = (const void *)fi->hdr;
		uint32_t qn = rnic_rdmap_op(want)->qn;
		ok = rte_be_to_cpu_32(u->qn) == qn && rte_be_to_cpu_32(u->mo) == 0 &&
		     rte_be_to_cpu_32(u->msn) == ep->rx_msn[qn];
		if (ok && want == RNIC_RDMAP_OP_READ_REQ)
			ok = fi->hdr_len == RNIC_DDP_UNTAGGED_HDR_LEN + sizeof(ep->rreq);
		if (ok && want == RNIC_RDMAP_OP_READ_REQ)
			memcpy(ep->rreq, fi->hdr + RNIC_DDP_UNTAGGED_HDR_LEN, sizeof(ep->rreq));
	}
	if (!ok) {
		iw_debug("RTR expected (type %u): opcode %u len %u", ep->res.rtr, fi->opcode,
			 fi->payload_len);
		ep_terminate(ep, RNIC_TERM_MPA_NO_MATCHING_RTR, NULL, 0);
		return RNIC_FPDU_SKIP;
	}
	ep->rtr_in = true;
	ep->place = ep->rreq;   /* nothing is placed: zero bytes */
	return 0;
}

static void enter_rts(struct rnic_iw_ep *ep);
static void mpa_timer_stop(struct rnic_iw_ep *ep);

/* The RTR is in: a Read RTR gets its zero-length Read Response (our first
 * FPDU), then RDMA mode starts for the ULP. */
static void rtr_done(struct rnic_iw_ep *ep)
{
	ep->rtr_in = false;
	mpa_timer_stop(ep);
	iw_count(&iw_stack(ep->st)->rtr_received);
	iw_debug("RTR received (type %u)", ep->res.rtr);
	if (ep->res.rtr == RNIC_MPA_RTR_SEND)
		ep->rx_msn[RNIC_DDP_QN_SEND]++;
	if (ep->res.rtr == RNIC_MPA_RTR_READ) {
		const struct rnic_rdmap_read_req_hdr *r = (const void *)ep->rreq;
		struct job *j = &ep->jobs[ep->job_tail % JOB_MAX];
		ep->rx_msn[RNIC_DDP_QN_READ_REQ]++;
		memset(j, 0, offsetof(struct job, term));
		j->kind = JOB_READ_RESP;
		j->rtr = true;
		j->stag = rte_be_to_cpu_32(r->sink_stag);
		j->to = rte_be_to_cpu_64(r->sink_to);
		ep->job_tail++;
		ep->inreads++;   /* outside the IRD check: IRD may be 0 */
	}
	enter_rts(ep);
}

static int frx_hdr(void *arg, const struct rnic_fpdu_info *fi)
{
	struct rnic_iw_ep *ep = arg;
	enum rnic_term_cause cause;
	ep->place = NULL;
	ep->scatter = false;
	/* after our Terminate the stream is dead (RFC 5040 section 5.4.2):
	 * nothing behind the offending segment is placed or acted on */
	if (ep->term_err)
		return RNIC_FPDU_SKIP;
	if (ep->state == EP_RTR_WAIT)
		return rtr_hdr(ep, fi);
	if (fi->tagged) {
		const struct rnic_ddp_tagged_hdr *t = (const void *)fi->hdr;
		uint32_t stag = rte_be_to_cpu_32(t->stag);
		uint64_t to = rte_be_to_cpu_64(t->to);
		int need = fi->opcode == RNIC_RDMAP_OP_WRITE ? IBV_ACCESS_REMOTE_WRITE
							       : IBV_ACCESS_LOCAL_WRITE;
		if (fi->opcode != RNIC_RDMAP_OP_WRITE && fi->opcode != RNIC_RDMAP_OP_READ_RESP) {
			ep_terminate(ep, RNIC_TERM_RDMAP_OPCODE, fi->hdr, fi->ulpdu_len);
			return RNIC_FPDU_SKIP;
		}
		if (fi->opcode == RNIC_RDMAP_OP_READ_RESP && (ep->ord_head == ep->ord_tail ||
							      ep->ord[ep->ord_head % ORD_MAX].atomic)) {
			/* a response nobody asked for, or a Read Response
			 * where the oldest outstanding request is an Atomic */
			ep_terminate(ep, RNIC_TERM_RDMAP_OPCODE, fi->hdr, fi->ulpdu_len);
			return RNIC_FPDU_SKIP;
		}
		if (fi->opcode == RNIC_RDMAP_OP_READ_RESP && ep->ord[ep->ord_head % ORD_MAX].rtr) {
			/* the answer to our Read RTR: zero bytes, one segment,
			 * its STag is the dummy we sent; nothing to check */
			if (fi->payload_len != 0 || !fi->last) {
				ep_terminate(ep, RNIC_TERM_DDP_T_BASE_BOUNDS, fi->hdr, fi->ulpdu_len);
				return RNIC_FPDU_SKIP;
			}
			ep->place = ep->rreq;
			return 0;
		}
		bool wait;
		ep->place = mr_check_wait(ep, stag, to, fi->payload_len, need, &cause, true, &wait);
		if (wait)
			return ep_migrate(ep, stag);
		ep->mig_answered = false;
		if (ep->place == NULL) {   /* never placed: Terminate */
			ep_terminate(ep, cause, fi->hdr, fi->ulpdu_len);
			return RNIC_FPDU_SKIP;
		}
		return 0;
	}
	const struct rnic_ddp_untagged_hdr *u = (const void *)fi->hdr;
	uint32_t qn = rte_be_to_cpu_32(u->qn), mo = rte_be_to_cpu_32(u->mo);
	uint32_t msn = rte_be_to_cpu_32(u->msn);
	if (qn < RNIC_DDP_QN_COUNT && rnic_rdmap_op(fi->opcode)->qn != qn) {
		/* every untagged opcode has its queue (RFC 5040 4.3, RFC 7306) */
		ep_terminate(ep, RNIC_TERM_DDP_U_INVALID_QN, fi->hdr, fi->ulpdu_len);
		return RNIC_FPDU_SKIP;
	}
	if (qn < RNIC_DDP_QN_COUNT && msn != ep->rx_msn[qn]) {
		/* TCP delivers in order: any other MSN is out of range */
		ep_terminate(ep, RNIC_TERM_DDP_U_MSN_RANGE, fi->hdr, fi->ulpdu_len);
		return RNIC_FPDU_SKIP;
	}
	switch (qn) {
	case RNIC_DDP_QN_SEND:
		if (fi->opcode == RNIC_RDMAP_OP_IMM_DATA || fi->opcode == RNIC_RDMAP_OP_IMM_DATA_SE) {
			/* RFC 7306 Immediate Data: a message of one segment
			 * that takes a receive of its own */
			if (mo != 0) {
				ep_terminate(ep, RNIC_TERM_DDP_U_INVALID_MO, fi->hdr, fi->ulpdu_len);
				return RNIC_FPDU_SKIP;
			}
			if (!fi->last || fi->payload_len != 0) {
				ep_terminate(ep, RNIC_TERM_DDP_U_TOO_LONG, fi->hdr, fi->ulpdu_len);
				return RNIC_FPDU_SKIP;
			}
			if (ep->rq == NULL || !rnic_rq_take(ep->rq, &ep->cur)) {
				ep_terminate(ep, RNIC_TERM_DDP_U_NO_BUFFER, fi->hdr, fi->ulpdu_len);
				return RNIC_FPDU_SKIP;
			}
			ep->in_msg = true;
			memcpy(ep->imm_in, fi->hdr + RNIC_DDP_UNTAGGED_HDR_LEN, sizeof(ep->imm_in));
			ep->place = ep->imm_in;
			return 0;
		}
		if (!ep->in_msg) {
			if (mo != 0) {
				ep_terminate(ep, RNIC_TERM_DDP_U_INVALID_MO, fi->hdr, fi->ulpdu_len);
				return RNIC_FPDU_SKIP;
			}
			if (ep->rq == NULL || !rnic_rq_take(ep->rq, &ep->cur)) {
				ep_terminate(ep, RNIC_TERM_DDP_U_NO_BUFFER, fi->hdr, fi->ulpdu_len);
				return RNIC_FPDU_SKIP;
			}
			ep->in_msg = true;
		}
		if ((uint64_t)mo + fi->payload_len > ep->cur.total) {
			ep_terminate(ep, RNIC_TERM_DDP_U_TOO_LONG, fi->hdr, fi->ulpdu_len);
			return RNIC_FPDU_SKIP;
		}
		ep->scatter = true;
		ep->place_mo = mo;
		return 0;
	case RNIC_DDP_QN_READ_REQ:
		if (fi->opcode == RNIC_RDMAP_OP_ATOMIC_REQ) {
			/* one segment, no payload: the 52-byte header is all */
			if (fi->payload_len != 0 || mo != 0 || !fi->last) {
				ep_terminate(ep, RNIC_TERM_DDP_U_INVALID_MO, fi->hdr, fi->ulpdu_len);
				return RNIC_FPDU_SKIP;
			}
			memcpy(ep->areq, fi->hdr + RNIC_DDP_UNTAGGED_HDR_LEN, sizeof(ep->areq));
			ep->place = ep->areq;
			/* like a Read's source: an STag of another port
			 * migrates first, serve_atomic() checks it for real */
			const struct rnic_rdmap_atomic_req_hdr *r = (const void *)ep->areq;
			uint32_t stag = rte_be_to_cpu_32(r->remote_stag);
			bool wait;
			mr_check_wait(ep, stag, rte_be_to_cpu_64(r->remote_to), 8, 0, &cause, false,
				      &wait);
			if (wait)
				return ep_migrate(ep, stag);
			ep->mig_answered = false;
			return 0;
		}
		/* the parser counts the Read Request header as part of the header */
		if (fi->hdr_len != RNIC_DDP_UNTAGGED_HDR_LEN + sizeof(ep->rreq) ||
		    fi->payload_len != 0 || mo != 0) {
			ep_terminate(ep, RNIC_TERM_DDP_U_INVALID_MO, fi->hdr, fi->ulpdu_len);
			return RNIC_FPDU_SKIP;
		}
		memcpy(ep->rreq, fi->hdr + RNIC_DDP_UNTAGGED_HDR_LEN, sizeof(ep->rreq));
		ep->place = ep->rreq;
		{
			/* a source STag of another port migrates before the Read
			 * is served; serve_read() then checks it for real */
			const struct rnic_rdmap_read_req_hdr *r = (const void *)ep->rreq;
			uint32_t src = rte_be_to_cpu_32(r->src_stag);
			bool wait;
			mr_check_wait(ep, src, rte_be_to_cpu_64(r->src_to), 0, 0, &cause,
				      false, &wait);
			if (wait)
				return ep_migrate(ep, src);
			ep->mig_answered = false;
		}
		return 0;
	case RNIC_DDP_QN_ATOMIC_RESP: {
		const struct rnic_rdmap_atomic_resp_hdr *r =
			(const void *)(fi->hdr + RNIC_DDP_UNTAGGED_HDR_LEN);
		unsigned h = ep->ord_head % ORD_MAX;
		if (fi->payload_len != 0 || mo != 0 || !fi->last) {
			ep_terminate(ep, RNIC_TERM_DDP_U_INVALID_MO, fi->hdr, fi->ulpdu_len);
			return RNIC_FPDU_SKIP;
		}
		/* responses come in request order: it must answer the oldest
		 * outstanding request, and that must be this Atomic */
		if (ep->ord_head == ep->ord_tail || !ep->ord[h].atomic ||
		    rte_be_to_cpu_32(r->orig_req_id) != ep->ord[h].req_id) {
			ep_terminate(ep, RNIC_TERM_RDMAP_OPCODE, fi->hdr, fi->ulpdu_len);
			return RNIC_FPDU_SKIP;
		}
		memcpy(ep->aresp, r, sizeof(ep->aresp));
		ep->place = ep->aresp;
		return 0;
	}
	case RNIC_DDP_QN_TERMINATE: {
		uint32_t fixed = fi->hdr_len - RNIC_DDP_UNTAGGED_HDR_LEN;
		if (fixed > sizeof(ep->term_in) || fixed + fi->payload_len > sizeof(ep->term_in))
			return RNIC_FPDU_SKIP;
		memcpy(ep->term_in, fi->hdr + RNIC_DDP_UNTAGGED_HDR_LEN, fixed);
		ep->place = ep->term_in + fixed;
		return 0;
	}
	default:
		ep_terminate(ep, RNIC_TERM_DDP_U_INVALID_QN, fi->hdr, fi->ulpdu_len);
		return RNIC_FPDU_SKIP;
	}
}

/* Copy @p len bytes to offset @p off of the receive's scatter list. */
static void scatter(const struct rnic_rwqe *r, uint32_t off, const uint8_t *data,
		    uint32_t len)
{
	for (uint32_t i = 0; i < r->num_sge && len > 0; i++) {
		if (off >= r->sge[i].length) {
			off -= r->sge[i].length;
			continue;
		}
		uint32_t take = r->sge[i].length - off < len ? r->sge[i].length - off : len;
		memcpy((uint8_t *)(uintptr_t)r->sge[i].addr + off, data, take);
		data += take;
		len -= take;
		off = 0;
	}
}

static int frx_payload(void *arg, const struct rnic_fpdu_info *fi, uint32_t off,
		       const uint8_t *data, uint32_t len)
{
	struct rnic_iw_ep *ep = arg;
	(void)fi;
	if (ep->scatter || ep->place)
		__atomic_store_n(&ep->xfer->bytes_in, ep->xfer->bytes_in + len, __ATOMIC_RELAXED);
	if (ep->scatter)
		scatter(&ep->cur, ep->place_mo + off, data, len);
	else if (ep->place)
		memcpy(ep->place + off, data, len);
	return 0;
}

/* A Read Request: check the source, queue the Read Responses. */
static void serve_read(struct rnic_iw_ep *ep, const uint8_t *hdr, uint16_t seg_len)
{
	const struct rnic_rdmap_read_req_hdr *r = (const void *)ep->rreq;
	enum rnic_term_cause cause;
	uint32_t len = rte_be_to_cpu_32(r->rdma_rd_sz);
	uint64_t src_to = rte_be_to_cpu_64(r->src_to);
	const uint8_t *src = mr_check(ep, rte_be_to_cpu_32(r->src_stag), src_to, len,
				      IBV_ACCESS_REMOTE_READ, &cause, false);
	/* the Terminate of an error here quotes the Read Request header */
	struct rnic_term_offender off = { .ddp_hdr = hdr, .ddp_seg_len = seg_len,
					  .read_req = ep->rreq };
	if (src == NULL) {
		ep_terminate_off(ep, cause, &off);
		return;
	}
	/* more reads in service than we advertised (IRD): the peer broke
	 * the negotiated limit (RFC 5040 section 6.8) */
	if (ep->inreads >= ep->res.ird || ep->job_tail - ep->job_head >= JOB_MAX - 1) {
		ep_terminate_off(ep, RNIC_TERM_RDMAP_CATASTROPHIC_STREAM, &off);
		return;
	}
	struct job *j = &ep->jobs[ep->job_tail % JOB_MAX];
	memset(j, 0, offsetof(struct job, term));
	j->kind = JOB_READ_RESP;
	j->one = (struct ibv_sge){ (uint64_t)(uintptr_t)src, len, 0 };
	j->sge = &j->one;
	j->num_sge = 1;
	j->len = len;
	j->stag = rte_be_to_cpu_32(r->sink_stag);
	j->to = rte_be_to_cpu_64(r->sink_to);
	ep->job_tail++;
	ep->inreads++;
	ep_pump(ep);
}

/* FetchAdd with an Add Mask: a set bit ends a field, the carry out of it
 * is dropped (0: one 64-bit addition). */
static uint64_t masked_add(uint64_t a, uint64_t b, uint64_t mask)
{
	if (mask == 0)
		return a + b;
	uint64_t r = 0, c = 0;
	for (unsigned i = 0; i < 64; i++) {
		uint64_t x = (a >> i) & 1, y = (b >> i) & 1;
		r |= (x ^ y ^ c) << i;
		c = (x & y) | (c & (x ^ y));
		if ((mask >> i) & 1)
			c = 0;
	}
	return r;
}

/* An Atomic Request (RFC 7306): check the target, run the operation on
 * the host word, queue the Atomic Response behind whatever Read Responses
 * are queued (responses leave in request order). */
static void serve_atomic(struct rnic_iw_ep *ep, const uint8_t *hdr, uint16_t seg_len)
{
	const struct rnic_rdmap_atomic_req_hdr *r = (const void *)ep->areq;
	enum rnic_term_cause cause;
	uint8_t op = rnic_atomic_op(r);
	uint64_t to = rte_be_to_cpu_64(r->remote_to);
	if (op != RNIC_ATOMIC_FETCH_ADD && op != RNIC_ATOMIC_SWAP && op != RNIC_ATOMIC_CMP_SWAP) {
		ep_terminate(ep, RNIC_TERM_RDMAP_OP_UNSPEC, hdr, seg_len);
		return;
	}
	uint8_t *p = mr_check(ep, rte_be_to_cpu_32(r->remote_stag), to, 8,
			      IBV_ACCESS_REMOTE_ATOMIC, &cause, false);
	if (p == NULL) {
		ep_terminate(ep, cause, hdr, seg_len);
		return;
	}
	/* the word must be 8-byte aligned: a misaligned one is outside
	 * anything an atomic may address */
	if ((to & 7) != 0 || ((uintptr_t)p & 7) != 0) {
		ep_terminate(ep, RNIC_TERM_RDMAP_BASE_BOUNDS, hdr, seg_len);
		return;
	}
	/* IRD covers Reads and Atomics together */
	if (ep->inreads >= ep->res.ird || ep->job_tail - ep->job_head >= JOB_MAX - 1) {
		ep_terminate(ep, RNIC_TERM_RDMAP_CATASTROPHIC_STREAM, hdr, seg_len);
		return;
	}
	uint64_t data = rte_be_to_cpu_64(r->add_swap_data);
	uint64_t dmask = rte_be_to_cpu_64(r->add_swap_mask);
	uint64_t cmp = rte_be_to_cpu_64(r->compare_data);
	uint64_t cmask = rte_be_to_cpu_64(r->compare_mask);
	uint64_t *w = (uint64_t *)(void *)p;
	uint64_t old = __atomic_load_n(w, __ATOMIC_RELAXED), nv;
	/* other QPs, on other workers, and the host may touch the word */
	do {
		if (op == RNIC_ATOMIC_FETCH_ADD)
			nv = masked_add(old, data, dmask);
		else if (op == RNIC_ATOMIC_SWAP || ((old ^ cmp) & cmask) == 0)
			nv = (old & ~dmask) | (data & dmask);
		else
			nv = old;   /* compare failed: the word stays */
	} while (!__atomic_compare_exchange_n(w, &old, nv, false, __ATOMIC_SEQ_CST,
					      __ATOMIC_RELAXED));
	__atomic_store_n(&ep->xfer->bytes_in, ep->xfer->bytes_in + 8, __ATOMIC_RELAXED);
	struct job *j = &ep->jobs[ep->job_tail % JOB_MAX];
	memset(j, 0, offsetof(struct job, term));
	j->kind = JOB_ATOMIC_RESP;
	j->req_id = rte_be_to_cpu_32(r->req_id);
	j->orig = old;
	ep->job_tail++;
	ep->inreads++;
	ep_pump(ep);
}

static int frx_done(void *arg, const struct rnic_fpdu_info *fi)
{
	struct rnic_iw_ep *ep = arg;
	ep->stats_fpdus_in++;
	if (ep->rtr_in) {
		rtr_done(ep);
		return 0;
	}
	if (fi->last && (ep->place || ep->scatter) && rnic_rdmap_op(fi->opcode)->new_op)
		__atomic_store_n(&ep->xfer->ops_in, ep->xfer->ops_in + 1, __ATOMIC_RELAXED);
	if (ep->place == NULL && !ep->scatter && !(fi->opcode == RNIC_RDMAP_OP_TERMINATE))
		return 0;   /* skipped: a Terminate is on its way */
	/* what an Immediate Data message follows (Write with Immediate) */
	if (fi->opcode == RNIC_RDMAP_OP_WRITE) {
		ep->write_acc += fi->payload_len;
		if (fi->last) {
			ep->after_write = true;
			ep->last_write_len = (uint32_t)ep->write_acc;
			ep->write_acc = 0;
		}
	} else if (fi->last && fi->opcode != RNIC_RDMAP_OP_IMM_DATA &&
		   fi->opcode != RNIC_RDMAP_OP_IMM_DATA_SE) {
		ep->after_write = false;
	}
	switch (fi->opcode) {
	case RNIC_RDMAP_OP_IMM_DATA:
	case RNIC_RDMAP_OP_IMM_DATA_SE: {
		/* behind a Write: the Write's completion at the data sink
		 * (libibverbs RECV_RDMA_WITH_IMM, byte_len the Write's length);
		 * otherwise (Send with Immediate) a receive of 0 bytes */
		struct ibv_wc wc = { .wr_id = ep->cur.wr_id, .status = IBV_WC_SUCCESS,
				     .opcode = IBV_WC_RECV, .qp_num = ep->qpn,
				     .wc_flags = IBV_WC_WITH_IMM };
		memcpy(&wc.imm_data, ep->imm_in, sizeof(wc.imm_data));
		if (ep->after_write) {
			wc.opcode = IBV_WC_RECV_RDMA_WITH_IMM;
			wc.byte_len = ep->last_write_len;
		}
		ep->after_write = false;
		ep->in_msg = false;
		ep->rx_msn[RNIC_DDP_QN_SEND]++;
		complete_wc(ep, &wc, fi->opcode == RNIC_RDMAP_OP_IMM_DATA_SE);
		break;
	}
	case RNIC_RDMAP_OP_ATOMIC_REQ:
		ep->rx_msn[RNIC_DDP_QN_READ_REQ]++;
		serve_atomic(ep, fi->hdr, fi->ulpdu_len);
		break;
	case RNIC_RDMAP_OP_ATOMIC_RESP: {
		const struct rnic_rdmap_atomic_resp_hdr *r = (const void *)ep->aresp;
		unsigned i = ep->ord_head++ % ORD_MAX;
		uint64_t orig = rte_be_to_cpu_64(r->orig_remote_data);
		ep->rx_msn[RNIC_DDP_QN_ATOMIC_RESP]++;
		/* the result buffer was checked (lkey, local write) at post time,
		 * and stays registered until the work completes */
		memcpy((void *)(uintptr_t)ep->ord[i].res_addr, &orig, sizeof(orig));
		__atomic_store_n(&ep->xfer->bytes_in, ep->xfer->bytes_in + 8, __ATOMIC_RELAXED);
		if (ep->ord[i].signaled)
			complete(ep, ep->ord[i].wr_id, (enum ibv_wc_opcode)ep->ord[i].wc_op,
				 IBV_WC_SUCCESS, 8);
		if (ep->hooks && ep->hooks->tx_room && ep->state == EP_RTS)
			ep->hooks->tx_room(ep->qp);
		break;
	}
	case RNIC_RDMAP_OP_SEND:
	case RNIC_RDMAP_OP_SEND_SE:
	case RNIC_RDMAP_OP_SEND_INV:
	case RNIC_RDMAP_OP_SEND_SE_INV:
		if (fi->last) {
			const struct rnic_ddp_untagged_hdr *u = (const void *)fi->hdr;
			struct ibv_wc wc = { .wr_id = ep->cur.wr_id, .status = IBV_WC_SUCCESS,
					     .opcode = IBV_WC_RECV, .qp_num = ep->qpn,
					     .byte_len = rte_be_to_cpu_32(u->mo) + fi->payload_len };
			bool se = fi->opcode == RNIC_RDMAP_OP_SEND_SE ||
				  fi->opcode == RNIC_RDMAP_OP_SEND_SE_INV;
			if (fi->opcode == RNIC_RDMAP_OP_SEND_INV ||
			    fi->opcode == RNIC_RDMAP_OP_SEND_SE_INV) {
				uint32_t stag = rte_be_to_cpu_32(u->inv_stag);
				enum rnic_stag_fault f = rnic_stag_invalidate(ep->st, stag, ep->pd);
				if (f != RNIC_STAG_OK) {
					ep->in_msg = false;
					ep->rx_msn[RNIC_DDP_QN_SEND]++;
					wc.status = IBV_WC_REM_INV_REQ_ERR;
					complete_wc(ep, &wc, se);
					ep_terminate(ep, rnic_term_inv_fault(f), fi->hdr,
						     fi->ulpdu_len);
					return 0;
				}
				wc.wc_flags |= IBV_WC_WITH_INV;
				wc.invalidated_rkey = stag;
			}
			ep->in_msg = false;
			ep->rx_msn[RNIC_DDP_QN_SEND]++;
			complete_wc(ep, &wc, se);
		}
		break;
	case RNIC_RDMAP_OP_READ_RESP:
		if (fi->last && ep->ord_head != ep->ord_tail) {
			unsigned i = ep->ord_head++ % ORD_MAX;
			if (ep->ord[i].signaled)
				complete(ep, ep->ord[i].wr_id, IBV_WC_RDMA_READ,
					 IBV_WC_SUCCESS, ep->ord[i].len);
			/* an ORD slot is free: reads the QP held back may go */
			if (ep->hooks && ep->hooks->tx_room && ep->state == EP_RTS)
				ep->hooks->tx_room(ep->qp);
		}
		break;
	case RNIC_RDMAP_OP_READ_REQ:
		ep->rx_msn[RNIC_DDP_QN_READ_REQ]++;
		serve_read(ep, fi->hdr, fi->ulpdu_len);
		break;
	case RNIC_RDMAP_OP_TERMINATE:
		ep->terms_in++;
		__atomic_store_n(&ep->xfer->terms_in, ep->xfer->terms_in + 1, __ATOMIC_RELAXED);
		ep->rx_msn[RNIC_DDP_QN_TERMINATE]++;
		iw_debug("Terminate received: %02x %02x %02x %02x", ep->term_in[0],
			 ep->term_in[1], ep->term_in[2], ep->term_in[3]);
		ep_close(ep, -EPROTO);
		return -EPROTO;
	default:
		break;
	}
	return 0;
}

static const struct rnic_fpdu_rx_ops frx_ops = {
	.hdr = frx_hdr, .payload = frx_payload, .done = frx_done,
};

/* --- connection management -------------------------------------------------- */

/*
 * The MPA startup limit: a peer that accepts TCP but never answers our
 * request, never sends (all of) its request, or never sends the RTR it
 * agreed to would hold the endpoint for ever. The timer runs once per
 * phase (it is not restarted by partial progress); on expiry the
 * connection is reset and the endpoint closes with -ETIMEDOUT.
 */
static void mpa_timer_start(struct rnic_iw_ep *ep)
{
	uint32_t ms = ep->p.mpa_timeout_ms;
	if (ms == 0)
		ms = __atomic_load_n(&iw_stack(ep->st)->mpa_timeout_ms, __ATOMIC_RELAXED);
	if (ms == 0)
		ms = RNIC_IW_MPA_TIMEOUT_MS;
	rnic_timer_arm(&ep->w->timers, &ep->mpa_timer, ep->w->now_tsc, (uint64_t)ms * 1000);
}

static void mpa_timer_stop(struct rnic_iw_ep *ep)
{
	rnic_timer_cancel(&ep->w->timers, &ep->mpa_timer);
}

static void mpa_timer_cb(struct rnic_timer *t, void *arg)
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
	ep_close(ep, -ETIMEDOUT);
	if (--ep->busy == 0 && ep->state == EP_CLOSED)
		ep_free(ep);
}

/* Initiator in peer-to-peer mode: the RTR message the reply chose goes
 * out as our first FPDU (RFC 6581 section 9.2), ahead of any work the ULP
 * posts from established(). It never completes; a Read RTR holds an ORD
 * slot until its zero-length response is back. */
static void queue_rtr(struct rnic_iw_ep *ep)
{
	struct job *j = &ep->jobs[ep->job_tail % JOB_MAX];
	memset(j, 0, offsetof(struct job, term));
	j->rtr = true;
	if (ep->res.rtr == RNIC_MPA_RTR_SEND) {
		j->kind = JOB_SEND;
		j->rdmap_op = RNIC_RDMAP_OP_SEND;
	} else if (ep->res.rtr == RNIC_MPA_RTR_WRITE) {
		j->kind = JOB_WRITE;
		j->stag = RTR_STAG;
	} else {
		unsigned o = ep->ord_tail++ % ORD_MAX;
		memset(&ep->ord[o], 0, sizeof(ep->ord[o]));
		ep->ord[o].rtr = true;
		ep->ord[o].wc_op = IBV_WC_RDMA_READ;
		j->kind = JOB_READ_REQ;
		j->stag = RTR_STAG;        /* sink: nothing is placed */
		j->src_stag = RTR_STAG;
	}
	ep->job_tail++;
}

static void enter_rts(struct rnic_iw_ep *ep)
{
	if (ep->active && ep->res.p2p)
		queue_rtr(ep);
	ep->state = EP_RTS;
	if (ep->ops && ep->ops->established)
		ep->ops->established(ep, ep->ctx);
	if (ep->state == EP_RTS)
		ep_pump(ep);
}

static void rts_timer_cb(struct rnic_timer *t, void *arg)
{
	(void)t;
	struct rnic_iw_ep *ep = arg;
	if (ep->state == EP_RTS_WAIT)
		enter_rts(ep);
}

/* Responder, reply sent: RDMA mode now, or in peer-to-peer mode once the
 * initiator's RTR is in (the MPA timer guards the wait). */
static void enter_rdma_mode(struct rnic_iw_ep *ep)
{
	if (!ep->res.p2p) {
		enter_rts(ep);
		return;
	}
	ep->state = EP_RTR_WAIT;
	mpa_timer_start(ep);
}

/* Set up the FPDU machinery from the negotiation result. */
static void start_fpdus(struct rnic_iw_ep *ep)
{
	/* each stage (whole FPDUs, at most one MSS) is one TCP segment */
	if (ep->c != NULL)
		rnic_tcp_set_records(ep->c, true);
	rnic_fpdu_tx_init(&ep->ftx, ep->res.crc, ep->res.markers_tx, ep->tx_pos);
	rnic_fpdu_rx_init(&ep->frx, ep->res.crc, ep->res.markers_rx, ep->rx_pos,
			  &frx_ops, ep);
}

/* Send the MPA reply (accept or reject) of the passive side. An accept
 * that finds no mbuf goes from the tx timer, ahead of every FPDU; a reject
 * is sent once, the connection closes behind it. @return 0 or -errno. */
static int send_reply(struct rnic_iw_ep *ep, bool reject, const void *pdata, uint16_t pd_len)
{
	int n = rnic_mpa_build_reply(&ep->res, reject, pdata, pd_len, ep->mpa_tx,
				     sizeof(ep->mpa_tx));
	if (n <= 0)
		return n < 0 ? n : -EINVAL;
	return mpa_tx_queue(ep, (uint16_t)n);
}

/* Feed received stream bytes to the MPA or FPDU parser. */
static void ep_input_run(struct rnic_iw_ep *ep, const uint8_t *p, size_t len);

static void ep_input(struct rnic_iw_ep *ep, const uint8_t *p, size_t len)
{
	ep->busy++;
	ep_input_run(ep, p, len);
	if (--ep->busy == 0 && ep->state == EP_CLOSED)
		ep_free(ep);
}

static void ep_input_run(struct rnic_iw_ep *ep, const uint8_t *p, size_t len)
{
	while (len > 0 && ep->state != EP_CLOSED) {
		size_t used = 0;
		if (ep->state == EP_MPA_REQ || ep->state == EP_MPA_REP) {
			int rc = rnic_mpa_rx_input(&ep->mrx, p, len, &used);
			ep->rx_pos += (uint32_t)used;
			p += used;
			len -= used;
			if (rc == -EAGAIN)
				return;
			if (rc < 0) {
				iw_debug("bad MPA frame: rc %d err %d", rc, ep->mrx.err);
				ep_close(ep, -EPROTO);
				return;
			}
			mpa_timer_stop(ep);   /* the frame is complete */
			if (ep->state == EP_MPA_REP) {
				rc = rnic_mpa_connected(&ep->mp, &ep->mrx, &ep->res);
				iw_debug("MPA reply: rc %d rev %u crc %d ird %u ord %u p2p %d rtr %u err %u",
					 rc, ep->res.rev, ep->res.crc, ep->res.ird, ep->res.ord,
					 ep->res.p2p, ep->res.rtr, ep->res.err);
				if (rc == -EPROTO && (ep->res.err == RNIC_TERM_MPA_NO_MATCHING_RTR ||
						      ep->res.err == RNIC_TERM_MPA_INSUFFICIENT_IRD)) {
					/* RFC 6581 s9: a valid reply we cannot live with
					 * is answered in RDMA mode, with a Terminate */
					ep->res.crc = (ep->mrx.hdr.flags & RNIC_MPA_FLAG_C) != 0;
					ep->res.markers_tx = (ep->mrx.hdr.flags & RNIC_MPA_FLAG_M) != 0;
					ep->res.markers_rx = ep->mp.markers_rx;
					start_fpdus(ep);
					ep->state = EP_RTS_WAIT;
					ep_terminate(ep, ep->res.err, NULL, 0);
					return;
				}
				if (rc < 0) {
					ep_close(ep, rc == -ECONNREFUSED ? -ECONNREFUSED : -EPROTO);
					return;
				}
				start_fpdus(ep);
				ep->state = EP_RTS_WAIT;
				/* siw 6.1 attaches its socket to the QP only after
				 * sending the reply: give it time before our first FPDU */
				rnic_timer_arm(&ep->w->timers, &ep->rts_timer, ep->w->now_tsc,
					       ep->p.rts_delay_us);
				continue;   /* bytes behind the reply are FPDUs */
			}
			/* passive: a request */
			int arc = rnic_mpa_accept(&ep->mp, &ep->mrx, &ep->res);
			iw_debug("MPA request: rc %d rev %u crc %d ird %u ord %u p2p %d rtr %u err %u",
				 arc, ep->res.rev, ep->res.crc, ep->res.ird, ep->res.ord,
				 ep->res.p2p, ep->res.rtr, ep->res.err);
			void *ctx = NULL;
			if (arc == 0 && ep->ops && ep->ops->request)
				ctx = ep->ops->request(ep, ep->listen_ctx, ep->res.pdata, ep->res.pd_len);
			if (ctx == RNIC_IW_DEFER && arc == 0) {
				/* the application decides later; FPDUs cannot come
				 * before our reply, so nothing more should arrive */
				ep->state = EP_DECIDING;
				rnic_tcp_hold(ep->c, true);
				if (len > 0)
					ep_close(ep, -EPROTO);
				return;
			}
			int src = send_reply(ep, ctx == NULL, NULL, 0);
			if (ctx == NULL || src != 0) {
				ep_close(ep, ctx == NULL ? -ECONNREFUSED : src);
				return;
			}
			ep->ctx = ctx;
			start_fpdus(ep);
			enter_rdma_mode(ep);
			continue;
		}
		if (ep->state == EP_RTS || ep->state == EP_RTS_WAIT || ep->state == EP_RTR_WAIT ||
		    ep->state == EP_CLOSING) {
			int rc = rnic_fpdu_rx_input(&ep->frx, p, len, &used);
			p += used;
			len -= used;
			if (rc == -EINPROGRESS) {   /* a migration query: park the rest */
				ep->park_left = len;
				return;
			}
			if (rc == -EAGAIN || (rc == 0 && used == 0))
				return;
			if (rc < 0 && ep->state != EP_CLOSED) {
				iw_debug("FPDU stream error: rc %d err %d (%s)", rc, ep->frx.err,
					 rnic_term_name(ep->frx.err));
				struct rnic_term_offender off;
				rnic_fpdu_rx_offender(&ep->frx, &off);
				ep_terminate_off(ep, ep->frx.err, &off);
				return;
			}
			continue;
		}
		if (ep->state == EP_DECIDING) {   /* bytes before our reply */
			ep_close(ep, -EPROTO);
			return;
		}
		return;
	}
}

int rnic_iw_accept(struct rnic_iw_ep *ep, void *ctx, const void *pdata,
		   uint16_t pd_len, uint16_t ird, uint16_t ord)
{
	if (ep->state != EP_DECIDING || ctx == NULL || ctx == RNIC_IW_DEFER ||
	    pd_len > RNIC_MPA_PD_MAX - 8)
		return -EINVAL;
	/* negotiate again with the accepting side's IRD/ORD */
	ep->mp.ird = ird ? ird : ep->mp.ird;
	ep->mp.ord = ord ? ord : ep->mp.ord;
	if (rnic_mpa_accept(&ep->mp, &ep->mrx, &ep->res) != 0)
		return -EPROTO;
	ep->ctx = ctx;
	int rc = send_reply(ep, false, pdata, pd_len);
	if (rc != 0)
		return rc;
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
	send_reply(ep, true, pdata, pd_len);
	/* RFC 5044 startup: the reject goes out, then the connection
	 * closes. A FIN behind it, not a reset: a reset would discard the
	 * reject from TCP's retransmission queue, and a peer whose copy was
	 * lost would see a reset instead of the reject. */
	ep_close_how(ep, -ECONNREFUSED, true);
	return 0;
}

/* Parse the chain @p head from segment @p s, offset @p off. A migration
 * query parks the rest (the chain is kept) and holds the TCP stream: what
 * arrives meanwhile waits in TCP, in order. Consumes @p head. */
static void ep_feed(struct rnic_iw_ep *ep, struct rte_mbuf *head, struct rte_mbuf *s,
		    uint32_t off)
{
	for (; s != NULL && ep->state != EP_CLOSED; s = s->next, off = 0) {
		ep_input(ep, rte_pktmbuf_mtod_offset(s, const uint8_t *, off), s->data_len - off);
		if (ep->mig_wait && ep->state != EP_CLOSED) {
			ep->park = head;
			ep->park_seg = s;
			ep->park_off = (uint32_t)(s->data_len - ep->park_left);
			rnic_tcp_hold(ep->c, true);
			return;
		}
	}
	rte_pktmbuf_free(head);
}

/* The control component answered (on this worker): the waiting FPDU's
 * header is checked again, then the parked bytes and what TCP held. */
static void ep_mig_done(struct rnic_stag_mig *q)
{
	struct rnic_iw_ep *ep = (struct rnic_iw_ep *)((char *)q - offsetof(struct rnic_iw_ep, mig));
	struct rte_mbuf *head = ep->park, *s = ep->park_seg;
	uint32_t off = ep->park_off;
	ep->mig_wait = false;
	ep->mig_answered = true;
	ep->park = NULL;
	ep->park_seg = NULL;
	/* the query's busy reference keeps the endpoint until the end here */
	if (ep->state != EP_CLOSED) {
		static const uint8_t none[1];
		size_t used;
		int rc = rnic_fpdu_rx_input(&ep->frx, none, 0, &used);
		ep->mig_answered = false;
		if (rc < 0 && rc != -EAGAIN && rc != -EINPROGRESS && ep->state != EP_CLOSED) {
			struct rnic_term_offender of;
			rnic_fpdu_rx_offender(&ep->frx, &of);
			ep_terminate_off(ep, ep->frx.err, &of);
		}
	}
	/* the header ran with the answer, so nothing waits yet: the parked
	 * bytes go on (and may park again, at a later FPDU) */
	if (head != NULL && ep->state != EP_CLOSED)
		ep_feed(ep, head, s, off);
	else
		rte_pktmbuf_free(head);
	if (!ep->mig_wait && ep->state != EP_CLOSED && ep->c != NULL)
		rnic_tcp_hold(ep->c, false);   /* what came meanwhile, in order */
	if (--ep->busy == 0 && ep->state == EP_CLOSED)
		ep_free(ep);
}

static void tcp_recv(struct rnic_tcp_conn *c, void *ctx, struct rte_mbuf *m)
{
	(void)c;
	struct rnic_iw_ep *ep = ctx;
	ep->busy++;
	if (ep->mig_wait && ep->park != NULL) {
		/* TCP holds the stream while parked; should bytes come anyway,
		 * they go behind the parked ones, in order */
		if (rte_pktmbuf_chain(ep->park, m) != 0) {
			rte_pktmbuf_free(m);
			ep_close(ep, -ENOBUFS);
		}
	} else if (ep->mig_wait) {
		rte_pktmbuf_free(m);   /* closed meanwhile */
	} else
		ep_feed(ep, m, m, 0);
	if (--ep->busy == 0 && ep->state == EP_CLOSED)
		ep_free(ep);
}

static void tcp_sent(struct rnic_tcp_conn *c, void *ctx)
{
	(void)c;
	ep_pump(ctx);
}

static void tcp_eof(struct rnic_tcp_conn *c, void *ctx)
{
	struct rnic_iw_ep *ep = ctx;
	if (ep->state != EP_CLOSING)
		ep->state = EP_CLOSING;
	rnic_tcp_close(c);
}

/* Flush outstanding work, tell the application, forget the endpoint. */
static void ep_flush(struct rnic_iw_ep *ep)
{
	ep->sent_head = ep->built_head = ep->job_tail;
	for (; ep->job_head != ep->job_tail; ep->job_head++) {
		struct job *j = &ep->jobs[ep->job_head % JOB_MAX];
		if ((j->kind == JOB_SEND || j->kind == JOB_WRITE) && !j->rtr)
			complete(ep, j->wr_id, j->kind == JOB_SEND ? IBV_WC_SEND : IBV_WC_RDMA_WRITE,
				 IBV_WC_WR_FLUSH_ERR, 0);
	}
	for (; ep->ord_head != ep->ord_tail; ep->ord_head++) {
		if (ep->ord[ep->ord_head % ORD_MAX].rtr)
			continue;
		complete(ep, ep->ord[ep->ord_head % ORD_MAX].wr_id,
			 (enum ibv_wc_opcode)ep->ord[ep->ord_head % ORD_MAX].wc_op,
			 IBV_WC_WR_FLUSH_ERR, 0);
	}
	if (ep->in_msg) {   /* the receive a message was being placed into */
		ep->in_msg = false;
		complete(ep, ep->cur.wr_id, IBV_WC_RECV, IBV_WC_WR_FLUSH_ERR, 0);
	}
	/* a verbs QP's receive queue outlives the connection: the verbs
	 * layer flushes it; our own goes here */
	struct rnic_rwqe r;
	while (ep->rq == &ep->own_rq && rnic_rq_take(ep->rq, &r))
		complete(ep, r.wr_id, IBV_WC_RECV, IBV_WC_WR_FLUSH_ERR, 0);
}

static void tcp_closed(struct rnic_tcp_conn *c, void *ctx, int err)
{
	(void)c;
	struct rnic_iw_ep *ep = ctx;
	ep->c = NULL;
	ep_close(ep, err);
}

static void ep_free(struct rnic_iw_ep *ep)
{
	rte_pktmbuf_free(ep->park);
	ep->park = NULL;
	rte_pktmbuf_free(ep->stage);
	ep->stage = NULL;
	rnic_rq_fini(&ep->own_rq);
	rte_free(ep);
}

/* Close the endpoint, reporting @p err; the TCP connection goes with a FIN
 * when @p fin (whatever err says: a reject must reach the peer first), else
 * with a reset on an error. */
static void ep_close_how(struct rnic_iw_ep *ep, int err, bool fin)
{
	if (ep->state == EP_CLOSED)
		return;
	if (ep->term_err)
		err = ep->term_err;
	ep->state = EP_CLOSED;
	rnic_timer_cancel(&ep->w->timers, &ep->rts_timer);
	rnic_timer_cancel(&ep->w->timers, &ep->tx_timer);
	mpa_timer_stop(ep);
	ep_flush(ep);
	if (ep->c != NULL) {
		struct rnic_tcp_conn *c = ep->c;
		ep->c = NULL;
		rnic_tcp_set_ops(c, NULL, NULL);
		rnic_tcp_hold(c, false);
		if (err && !fin)
			rnic_tcp_abort(c);
		else
			rnic_tcp_close(c);
	}
	if (ep->ops && ep->ops->disconnected)
		ep->ops->disconnected(ep, ep->ctx, err);
	ep->ops = NULL;
	ep->hooks = NULL;
	if (ep->busy == 0)
		ep_free(ep);   /* else ep_input frees it on the way out */
}

static void ep_close(struct rnic_iw_ep *ep, int err)
{
	ep_close_how(ep, err, false);
}

static const struct rnic_tcp_ops ep_tcp_ops;

static struct rnic_iw_ep *ep_new(struct rnic_worker *w, const struct rnic_iw_ops *ops,
				 const struct rnic_iw_params *p)
{
	struct rnic_iw_ep *ep = rte_zmalloc("rnic_iw_ep", sizeof(*ep), RTE_CACHE_LINE_SIZE);
	if (ep == NULL)
		return NULL;
	if (rnic_rq_init(&ep->own_rq, RQ_MAX, false) != 0) {
		rte_free(ep);
		return NULL;
	}
	ep->rq = &ep->own_rq;
	ep->xfer = &ep->own_xfer;
	ep->w = w;
	ep->st = w->st;
	ep->ops = ops;
	if (p)
		ep->p = *p;
	else
		rnic_iw_params_default(&ep->p);
	if (ep->p.ird > ORD_MAX)
		ep->p.ird = ORD_MAX;
	if (ep->p.ord > ORD_MAX)
		ep->p.ord = ORD_MAX;
	rnic_mpa_params_default(&ep->mp);
	ep->mp.crc = ep->p.crc;
	ep->mp.ird = ep->p.ird;
	ep->mp.ord = ep->p.ord;
	ep->mp.p2p = ep->p.p2p;
	ep->mp.rtr_types = ep->p.rtr_types ? ep->p.rtr_types & RNIC_MPA_RTR_ALL : RNIC_MPA_RTR_ALL;
	rnic_timer_init(&ep->rts_timer, rts_timer_cb, ep);
	rnic_timer_init(&ep->tx_timer, tx_timer_cb, ep);
	rnic_timer_init(&ep->mpa_timer, mpa_timer_cb, ep);
	/* RFC 5041 section 5.1: the first message of each queue has MSN 1 */
	for (int q = 0; q < RNIC_DDP_QN_COUNT; q++)
		ep->msn[q] = ep->rx_msn[q] = 1;
	return ep;
}

void rnic_iw_bind_qp(struct rnic_iw_ep *ep, const struct rnic_iw_qp_hooks *h,
		     void *qp, const void *pd, uint32_t qpn, struct rnic_rq *rq,
		     struct rnic_qp_xfer *xfer)
{
	if (xfer != NULL)
		ep->xfer = xfer;
	ep->hooks = h;
	ep->qp = qp;
	ep->pd = pd;
	ep->qpn = qpn;
	if (rq != NULL)
		ep->rq = rq;
}

void rnic_iw_set_ctx(struct rnic_iw_ep *ep, void *ctx)
{
	ep->ctx = ctx;
}

void rnic_iw_abort(struct rnic_iw_ep *ep)
{
	if (ep->state != EP_CLOSED)
		ep_close(ep, -ECONNABORTED);
}

void rnic_iw_conn_info(const struct rnic_iw_ep *ep, uint16_t *ird, uint16_t *ord,
		       uint32_t *peer_ip, uint16_t *peer_port)
{
	*ird = ep->res.ird;
	*ord = ep->res.ord;
	*peer_ip = ep->peer_ip;
	*peer_port = ep->peer_port;
}

void rnic_iw_peer_pdata(const struct rnic_iw_ep *ep, const void **pd, uint16_t *len)
{
	*pd = ep->res.pdata;
	*len = ep->res.pdata ? ep->res.pd_len : 0;
}

void rnic_iw_dump(const struct rnic_iw_ep *ep, FILE *f)
{
	struct rnic_tcp_info ti = { 0 };
	if (ep->c)
		rnic_tcp_info(ep->c, &ti);
	fprintf(f, "ep state %d jobs %u..%u ord %u..%u inreads %u in_msg %d msn %u/%u/%u rx_msn %u/%u/%u "
		"fpdus %lu/%lu packed %lu staged %u | tcp state %u cwnd %u snd_wnd %u rcv_wnd %u sent %lu acked %lu "
		"recv %lu rtx %lu space %u\n", ep->state, ep->job_head, ep->job_tail, ep->ord_head,
		ep->ord_tail, ep->inreads, ep->in_msg, ep->msn[0], ep->msn[1], ep->msn[2],
		ep->rx_msn[0], ep->rx_msn[1], ep->rx_msn[2], (unsigned long)ep->stats_fpdus_in,
		(unsigned long)ep->stats_fpdus_out, (unsigned long)ep->xfer->fpdus_packed,
		ep->stage != NULL ? rte_pktmbuf_pkt_len(ep->stage) : 0, ti.state, ti.cwnd, ti.snd_wnd, ti.rcv_wnd,
		(unsigned long)ti.bytes_sent, (unsigned long)ti.bytes_acked,
		(unsigned long)ti.bytes_received, (unsigned long)ti.retransmits,
		ep->c ? rnic_tcp_send_space(ep->c) : 0);
	if (ep->c) {
		const struct rnic_tcp_conn *c = ep->c;
		fprintf(f, "  tcp una %u nxt %u max %u units %u/%u/%u rtx pending %d in %ld ticks tlp %d/%d rto_retries %u lost %u recovery %d rcv_nxt %u\n",
			c->snd_una, c->snd_nxt, c->snd_max, c->u_head, c->u_next, c->u_tail,
			rnic_timer_pending(&c->rtx_timer),
			(long)(c->rtx_timer.expire_tick - ep->w->timers.cur_tick), c->tlp_armed,
			c->tlp_out, c->rto_retries, c->lost_bytes, c->in_recovery, c->rcv_nxt);
		fprintf(f, "  tcp rcv: wnd %u ooo %u (%u bytes) hold %d held %u rcv_adv %u snd_wnd %u\n",
			tcp_rcv_window(c), c->n_ooo, c->ooo_bytes, c->hold,
			c->held ? rte_pktmbuf_pkt_len(c->held) : 0, c->rcv_adv, c->snd_wnd);
		for (unsigned i = 0; i < c->n_ooo && i < 8; i++)
			fprintf(f, "    ooo %u seq %u len %u\n", i, c->ooo[i].seq, c->ooo[i].len);
		for (uint32_t i = c->u_head; i != c->u_next && i - c->u_head < 8; i++) {
			const struct tcp_unit *u = &c->units[i & (c->units_cap - 1)];
			fprintf(f, "    unit %u seq %u len %u sacked %d lost %d retx %d\n", i, u->seq,
				u->len, u->sacked, u->lost, u->retx);
		}
	}
}

bool rnic_iw_tcp_up(const struct rnic_iw_ep *ep)
{
	return ep->tcp_up;
}

void rnic_iw_ep_counters(const struct rnic_iw_ep *ep, uint64_t *fpdus_in,
			 uint64_t *fpdus_out, uint64_t *terms_in, uint64_t *terms_out)
{
	*fpdus_in = ep->stats_fpdus_in;
	*fpdus_out = ep->stats_fpdus_out;
	*terms_in = ep->terms_in;
	*terms_out = ep->terms_out;
}

/* The TCP connection is up (or a stream is being switched): send the MPA
 * request; one that finds no mbuf goes from the tx timer. */
static void tcp_connected(struct rnic_tcp_conn *c, void *ctx)
{
	(void)c;
	struct rnic_iw_ep *ep = ctx;
	ep->mp.pdata = ep->pdata;
	ep->mp.pd_len = ep->pd_len;
	int n = rnic_mpa_build_request(&ep->mp, ep->mpa_tx, sizeof(ep->mpa_tx));
	if (n <= 0) {
		ep_close(ep, -EINVAL);
		return;
	}
	ep->tcp_up = true;
	rnic_mpa_rx_init(&ep->mrx, true);
	ep->state = EP_MPA_REP;
	mpa_timer_start(ep);
	int rc = mpa_tx_queue(ep, (uint16_t)n);
	if (rc != 0)
		ep_close(ep, rc);
}

static void *tcp_accept(struct rnic_tcp_conn *c, void *lctx)
{
	struct iw_listener *l = lctx;
	struct rnic_iw_ep *ep = ep_new(rnic_tcp_worker(c), l->ops, &l->p);
	if (ep == NULL)
		return NULL;
	ep->c = c;
	ep->tcp_up = true;
	ep->listen_ctx = l->ctx;
	ep->peer_ip = rte_be_to_cpu_32(c->key.raddr);
	ep->peer_port = rte_be_to_cpu_16(c->key.rport);
	rnic_mpa_rx_init(&ep->mrx, false);
	ep->state = EP_MPA_REQ;
	mpa_timer_start(ep);
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
	int rc = rnic_tcp_listen(st, port, &ep_tcp_ops, l, 1024);
	if (rc != 0) {
		free(l);
		return rc;
	}
	pthread_mutex_lock(&listeners_lock);
	l->next = listeners;
	listeners = l;
	pthread_mutex_unlock(&listeners_lock);
	return 0;
}

int rnic_iw_unlisten(struct rnic_stack *st, uint16_t port)
{
	struct iw_listener **pp, *l = NULL;
	pthread_mutex_lock(&listeners_lock);
	for (pp = &listeners; *pp; pp = &(*pp)->next)
		if ((*pp)->st == st && (*pp)->port == port) {
			l = *pp;
			*pp = l->next;
			break;
		}
	pthread_mutex_unlock(&listeners_lock);
	if (l == NULL)
		return -ENOENT;
	int rc = rnic_tcp_unlisten(st, port);
	/* endpoints accepted earlier copied what they need from the listener */
	free(l);
	return rc;
}

int rnic_iw_connect(struct rnic_worker *w, uint32_t dst_ip, uint16_t port,
		    const struct rnic_iw_ops *ops, void *ctx,
		    const struct rnic_iw_params *p, const void *pdata,
		    uint16_t pd_len, struct rnic_iw_ep **out)
{
	if (pd_len > RNIC_MPA_PD_MAX - 8 || (pd_len && pdata == NULL))
		return -EINVAL;
	struct rnic_iw_ep *ep = ep_new(w, ops, p);
	if (ep == NULL)
		return -ENOMEM;
	ep->ctx = ctx;
	ep->active = true;
	ep->peer_ip = dst_ip;
	ep->peer_port = port;
	if (pd_len)   /* memcpy from NULL is undefined even for 0 bytes */
		memcpy(ep->pdata, pdata, pd_len);
	ep->pd_len = pd_len;
	ep->state = EP_CONNECTING;
	int rc = rnic_tcp_connect(w, dst_ip, port, &ep_tcp_ops, ep, &ep->c);
	if (rc != 0) {
		ep_free(ep);
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
	struct rnic_iw_ep *ep = ep_new(rnic_tcp_worker(c), ops, p);
	if (ep == NULL)
		return -ENOMEM;
	/* hold first: whatever arrives from now on queues, in order, for the
	 * MPA parser; our callbacks replace the streaming application's */
	rnic_tcp_hold(c, true);
	rnic_tcp_set_ops(c, &ep_tcp_ops, ep);
	ep->c = c;
	ep->tcp_up = true;
	ep->peer_ip = rte_be_to_cpu_32(c->key.raddr);
	ep->peer_port = rte_be_to_cpu_16(c->key.rport);
	*out = ep;
	if (active) {
		ep->ctx = ctx;
		ep->active = true;
		if (pd_len)
			memcpy(ep->pdata, pdata, pd_len);
		ep->pd_len = pd_len;
		tcp_connected(c, ep);   /* the MPA request goes out */
	} else {
		ep->listen_ctx = ctx;
		rnic_mpa_rx_init(&ep->mrx, false);
		ep->state = EP_MPA_REQ;
		mpa_timer_start(ep);
		/* bytes the application read past its last streaming message */
		if (early_len)
			ep_input(ep, early, early_len);
	}
	/* the queued bytes now go to the MPA parser, then new ones */
	if (ep->state != EP_CLOSED && ep->state != EP_DECIDING)
		rnic_tcp_hold(c, false);
	return 0;
}

int rnic_iw_disconnect(struct rnic_iw_ep *ep)
{
	if (ep->state == EP_CLOSED || ep->state == EP_CLOSING)
		return -EALREADY;
	ep->state = EP_CLOSING;
	ep_pump(ep);
	ep_flush(ep);
	return rnic_tcp_close(ep->c);
}
