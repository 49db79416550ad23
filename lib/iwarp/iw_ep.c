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

#include "engine/stack.h"
#include "iwarp/fpdu.h"
#include "iwarp/iwarp_wire.h"
#include "iwarp/mpa.h"
#include "iwarp/terminate.h"
#include "rnic/rnic_iwarp.h"
#include "rnic/rnic_tcp.h"

/* --- memory regions ------------------------------------------------------- */

#define MR_MAX 4096
struct rnic_iw_mr {
	uint8_t *addr;
	uint64_t len;
	int access;
	uint32_t stag;
	volatile bool valid;
};
static struct rnic_iw_mr *mr_table[MR_MAX];
static unsigned mr_next = 1;   /* STag index 0 is never used */

struct rnic_iw_mr *rnic_iw_reg_mr(struct rnic_stack *st, void *addr, size_t len, int access)
{
	(void)st;
	struct rnic_iw_mr *mr = calloc(1, sizeof(*mr));
	if (mr == NULL || len == 0) {
		free(mr);
		errno = ENOMEM;
		return NULL;
	}
	unsigned idx = __atomic_fetch_add(&mr_next, 1, __ATOMIC_RELAXED);
	if (idx >= MR_MAX) {
		free(mr);
		errno = ENOSPC;
		return NULL;
	}
	mr->addr = addr;
	mr->len = len;
	mr->access = access;
	mr->stag = idx << 8 | (uint8_t)(rte_rand() | 1);
	mr->valid = true;
	__atomic_store_n(&mr_table[idx], mr, __ATOMIC_RELEASE);
	return mr;
}

uint32_t rnic_iw_mr_stag(const struct rnic_iw_mr *mr) { return mr->stag; }

void rnic_iw_dereg_mr(struct rnic_iw_mr *mr)
{
	if (mr == NULL)
		return;
	/* the slot stays empty: later use of the STag is refused. A worker
	 * that looked the MR up a moment ago may still be placing into it:
	 * callers deregister only after their endpoints are gone (the verbs
	 * layer will defer the free to a quiescent point) */
	mr->valid = false;
	__atomic_store_n(&mr_table[mr->stag >> 8], NULL, __ATOMIC_RELEASE);
	free(mr);
}

/* The MR an STag names, checked for key, validity, access and bounds.
 * @return the address or NULL with *cause set. */
static uint8_t *mr_check(uint32_t stag, uint64_t to, uint64_t len, int need,
			 enum rnic_term_cause *cause, bool tagged_ddp)
{
	unsigned idx = stag >> 8;
	struct rnic_iw_mr *mr = idx < MR_MAX ?
		__atomic_load_n(&mr_table[idx], __ATOMIC_ACQUIRE) : NULL;
	if (mr == NULL || mr->stag != stag || !mr->valid) {
		*cause = tagged_ddp ? RNIC_TERM_DDP_T_INVALID_STAG : RNIC_TERM_RDMAP_INVALID_STAG;
		return NULL;
	}
	if ((mr->access & need) != need) {
		*cause = RNIC_TERM_RDMAP_ACCESS_RIGHTS;
		return NULL;
	}
	uint64_t base = (uint64_t)(uintptr_t)mr->addr;
	if (to < base || to + len < to || to + len > base + mr->len) {
		*cause = tagged_ddp ? RNIC_TERM_DDP_T_BASE_BOUNDS : RNIC_TERM_RDMAP_BASE_BOUNDS;
		return NULL;
	}
	return mr->addr + (to - base);
}

/* --- endpoints ------------------------------------------------------------- */

enum ep_state { EP_CONNECTING, EP_MPA_REQ, EP_MPA_REP, EP_RTS_WAIT, EP_RTS,
		EP_CLOSING, EP_CLOSED };

enum job_kind { JOB_SEND, JOB_WRITE, JOB_READ_REQ, JOB_READ_RESP, JOB_TERM };

struct job {
	enum job_kind kind;
	uint64_t wr_id;
	bool signaled;
	const uint8_t *src;
	uint32_t len, off;
	uint32_t stag;             /* remote STag (write, read resp), sink (read) */
	uint64_t to;
	uint32_t src_stag;         /* read request: the source */
	uint64_t src_to;
	uint8_t term[RNIC_TERM_ULPDU_MAX];
};

#define RQ_MAX  256
#define JOB_MAX 512
#define ORD_MAX 64

struct rnic_iw_ep {
	struct rnic_tcp_conn *c;
	struct rnic_worker *w;
	const struct rnic_iw_ops *ops;
	void *ctx;
	void *listen_ctx;
	struct rnic_iw_params p;
	enum ep_state state;
	bool active;

	struct rnic_mpa_params mp;
	struct rnic_mpa_rx mrx;
	struct rnic_mpa_result res;
	uint8_t pdata[RNIC_MPA_PD_MAX];
	uint16_t pd_len;

	struct rnic_fpdu_tx ftx;
	struct rnic_fpdu_rx frx;
	uint32_t tx_pos, rx_pos;       /* MPA stream positions (markers) */

	uint32_t msn[3];               /* next MSN to send per queue number */
	struct { uint64_t wr_id; uint8_t *buf; uint32_t len; } rq[RQ_MAX];
	unsigned rq_head, rq_tail;
	bool in_msg;                   /* a Send is being placed into rq_head */

	struct job jobs[JOB_MAX];
	unsigned job_head, job_tail;

	struct { uint64_t wr_id; uint32_t len; bool signaled; } ord[ORD_MAX];
	unsigned ord_head, ord_tail;

	/* placement of the FPDU being parsed */
	uint8_t *place;
	uint8_t rreq[28];
	uint8_t term_in[64];
	struct rnic_timer rts_timer;
	uint64_t stats_fpdus_in, stats_fpdus_out, terms_out;
	unsigned busy;                 /* inside ep_input: free later */
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
	p->crc = true;
	p->ird = 16;
	p->ord = 16;
	p->p2p = false;
	p->rts_delay_us = 50000;
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
static const struct rnic_fpdu_rx_ops frx_ops;

static void complete(struct rnic_iw_ep *ep, uint64_t wr_id, enum ibv_wc_opcode op,
		     enum ibv_wc_status status, uint32_t len)
{
	struct ibv_wc wc = { .wr_id = wr_id, .status = status, .opcode = op,
			     .byte_len = len };
	if (ep->ops && ep->ops->completion)
		ep->ops->completion(ep, ep->ctx, &wc);
}

/* Queue a Terminate for @p cause and close after it is sent. */
static void ep_terminate(struct rnic_iw_ep *ep, enum rnic_term_cause cause,
			 const uint8_t *ddp_hdr, uint16_t seg_len)
{
	if (ep->state != EP_RTS || (ep->job_tail - ep->job_head) >= JOB_MAX)
		return;
	struct job *j = &ep->jobs[ep->job_tail % JOB_MAX];
	memset(j, 0, sizeof(*j));
	struct rnic_term_offender off = { .ddp_hdr = ddp_hdr, .ddp_seg_len = seg_len };
	iw_debug("terminate: cause %d (%s)", cause, rnic_term_name(cause));
	int n = rnic_term_build(cause, ep->msn[RNIC_DDP_QN_TERMINATE]++, &off, j->term,
				sizeof(j->term));
	if (n < 0)
		return;
	j->kind = JOB_TERM;
	j->len = (uint32_t)n;
	ep->job_tail++;
	ep->terms_out++;
	ep_pump(ep);
	ep->state = EP_CLOSING;
	rnic_tcp_close(ep->c);
}

/* --- transmit --------------------------------------------------------------- */

/* Frame one ULPDU (header + payload) and hand it to TCP. @return 0,
 * -EAGAIN when TCP has no room now. */
static int send_fpdu(struct rnic_iw_ep *ep, const void *hdr, size_t hdr_len,
		     const void *payload, uint32_t len)
{
	size_t flen = rnic_fpdu_tx_len(&ep->ftx, (uint32_t)(hdr_len + len));
	if (rnic_tcp_send_space(ep->c) < flen)
		return -EAGAIN;
	struct rte_mbuf *m = rte_pktmbuf_alloc(rnic_tcp_pool(ep->c));
	if (m == NULL)
		return -EAGAIN;
	if (flen > rte_pktmbuf_tailroom(m)) {
		rte_pktmbuf_free(m);
		return -EMSGSIZE;
	}
	struct iovec iov = { (void *)(uintptr_t)payload, len };
	uint8_t *out = (uint8_t *)rte_pktmbuf_append(m, (uint16_t)flen);
	int n = rnic_fpdu_build(&ep->ftx, hdr, hdr_len, &iov, len ? 1 : 0, out, flen);
	if (n < 0) {
		rte_pktmbuf_free(m);
		return n;
	}
	if (rnic_tcp_send(ep->c, m) != 0) {
		rte_pktmbuf_free(m);
		return -EAGAIN;
	}
	ep->stats_fpdus_out++;
	return 0;
}

/* Largest DDP payload for a header of @p hdr_len bytes. */
static uint32_t seg_max(struct rnic_iw_ep *ep, uint32_t hdr_len)
{
	return rnic_ddp_max_payload(rnic_tcp_mss(ep->c), ep->res.markers_tx, hdr_len);
}

/* Send as much of @p j as TCP takes. @return true when it is all sent. */
static bool job_run(struct rnic_iw_ep *ep, struct job *j)
{
	if (j->kind == JOB_TERM) {
		/* the Terminate ULPDU already holds its DDP header */
		return send_fpdu(ep, j->term, j->len, NULL, 0) == 0;
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
		if (send_fpdu(ep, &h, sizeof(h), NULL, 0) != 0)
			return false;
		ep->msn[RNIC_DDP_QN_READ_REQ]++;
		return true;
	}
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
				rnic_rdmap_ctrl(RNIC_RDMAP_OP_SEND), 0,
				RTE_BE32(RNIC_DDP_QN_SEND),
				rte_cpu_to_be_32(ep->msn[RNIC_DDP_QN_SEND]),
				rte_cpu_to_be_32(j->off) };
		}
		if (send_fpdu(ep, &h, hl, j->src ? j->src + j->off : NULL, n) != 0)
			return false;
		j->off += n;
	} while (j->off < j->len);
	if (!tagged)
		ep->msn[RNIC_DDP_QN_SEND]++;
	return true;
}

/* Send queued work while TCP has room; complete what went out. */
static void ep_pump(struct rnic_iw_ep *ep)
{
	while (ep->job_head != ep->job_tail) {
		struct job *j = &ep->jobs[ep->job_head % JOB_MAX];
		if (!job_run(ep, j))
			return;   /* resumed from the TCP sent() callback */
		ep->job_head++;
		if (!j->signaled)
			continue;
		if (j->kind == JOB_SEND)
			complete(ep, j->wr_id, IBV_WC_SEND, IBV_WC_SUCCESS, j->len);
		else if (j->kind == JOB_WRITE)
			complete(ep, j->wr_id, IBV_WC_RDMA_WRITE, IBV_WC_SUCCESS, j->len);
	}
}

int rnic_iw_post_send(struct rnic_iw_ep *ep, const struct ibv_send_wr *wr)
{
	if (ep->state != EP_RTS)
		return -ENOTCONN;
	if (wr->num_sge > 1 || (wr->num_sge == 1 && wr->sg_list == NULL))
		return -EINVAL;
	if (ep->job_tail - ep->job_head >= JOB_MAX)
		return -ENOMEM;
	const struct ibv_sge *sg = wr->num_sge ? wr->sg_list : NULL;
	struct job j = { .wr_id = wr->wr_id,
			 .signaled = wr->send_flags & IBV_SEND_SIGNALED,
			 .src = sg ? (const uint8_t *)(uintptr_t)sg->addr : NULL,
			 .len = sg ? sg->length : 0 };
	enum rnic_term_cause cause;
	switch (wr->opcode) {
	case IBV_WR_SEND:
		j.kind = JOB_SEND;
		break;
	case IBV_WR_RDMA_WRITE:
		j.kind = JOB_WRITE;
		j.stag = wr->wr.rdma.rkey;
		j.to = wr->wr.rdma.remote_addr;
		break;
	case IBV_WR_RDMA_READ:
		if (sg == NULL || ep->ord_tail - ep->ord_head >= ep->res.ord ||
		    ep->ord_tail - ep->ord_head >= ORD_MAX)
			return -ENOMEM;
		/* the sink is our own MR: its STag goes in the request */
		if (mr_check(sg->lkey, sg->addr, sg->length, IBV_ACCESS_LOCAL_WRITE,
			     &cause, false) == NULL)
			return -EINVAL;
		j.kind = JOB_READ_REQ;
		j.stag = sg->lkey;
		j.to = sg->addr;
		j.src_stag = wr->wr.rdma.rkey;
		j.src_to = wr->wr.rdma.remote_addr;
		ep->ord[ep->ord_tail % ORD_MAX].wr_id = wr->wr_id;
		ep->ord[ep->ord_tail % ORD_MAX].len = sg->length;
		ep->ord[ep->ord_tail % ORD_MAX].signaled = j.signaled;
		ep->ord_tail++;
		break;
	default:
		return -EINVAL;
	}
	if (sg && wr->opcode != IBV_WR_RDMA_READ && sg->length &&
	    (wr->send_flags & IBV_SEND_INLINE) == 0 &&
	    mr_check(sg->lkey, sg->addr, sg->length, 0, &cause, false) == NULL)
		return -EINVAL;   /* a bad lkey never reaches the wire */
	ep->jobs[ep->job_tail % JOB_MAX] = j;
	ep->job_tail++;
	ep_pump(ep);
	return 0;
}

int rnic_iw_post_recv(struct rnic_iw_ep *ep, uint64_t wr_id, void *buf, uint32_t len)
{
	if (ep->rq_tail - ep->rq_head >= RQ_MAX)
		return -ENOMEM;
	if (ep->state == EP_CLOSED)
		return -ENOTCONN;
	ep->rq[ep->rq_tail % RQ_MAX].wr_id = wr_id;
	ep->rq[ep->rq_tail % RQ_MAX].buf = buf;
	ep->rq[ep->rq_tail % RQ_MAX].len = len;
	ep->rq_tail++;
	return 0;
}

/* --- receive: FPDU callbacks ---------------------------------------------- */

static int frx_hdr(void *arg, const struct rnic_fpdu_info *fi)
{
	struct rnic_iw_ep *ep = arg;
	enum rnic_term_cause cause;
	ep->place = NULL;
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
		ep->place = mr_check(stag, to, fi->payload_len, need, &cause, true);
		if (ep->place == NULL) {   /* never placed: Terminate */
			ep_terminate(ep, cause, fi->hdr, fi->ulpdu_len);
			return RNIC_FPDU_SKIP;
		}
		return 0;
	}
	const struct rnic_ddp_untagged_hdr *u = (const void *)fi->hdr;
	uint32_t qn = rte_be_to_cpu_32(u->qn), mo = rte_be_to_cpu_32(u->mo);
	switch (qn) {
	case RNIC_DDP_QN_SEND:
		if (ep->rq_head == ep->rq_tail) {
			ep_terminate(ep, RNIC_TERM_DDP_U_NO_BUFFER, fi->hdr, fi->ulpdu_len);
			return RNIC_FPDU_SKIP;
		}
		if ((uint64_t)mo + fi->payload_len > ep->rq[ep->rq_head % RQ_MAX].len) {
			ep_terminate(ep, RNIC_TERM_DDP_U_TOO_LONG, fi->hdr, fi->ulpdu_len);
			return RNIC_FPDU_SKIP;
		}
		ep->place = ep->rq[ep->rq_head % RQ_MAX].buf + mo;
		return 0;
	case RNIC_DDP_QN_READ_REQ:
		/* the parser counts the Read Request header as part of the header */
		if (fi->hdr_len != RNIC_DDP_UNTAGGED_HDR_LEN + sizeof(ep->rreq) ||
		    fi->payload_len != 0 || mo != 0) {
			ep_terminate(ep, RNIC_TERM_DDP_U_INVALID_MO, fi->hdr, fi->ulpdu_len);
			return RNIC_FPDU_SKIP;
		}
		memcpy(ep->rreq, fi->hdr + RNIC_DDP_UNTAGGED_HDR_LEN, sizeof(ep->rreq));
		ep->place = ep->rreq;
		return 0;
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

static int frx_payload(void *arg, const struct rnic_fpdu_info *fi, uint32_t off,
		       const uint8_t *data, uint32_t len)
{
	struct rnic_iw_ep *ep = arg;
	(void)fi;
	if (ep->place)
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
	const uint8_t *src = len ? mr_check(rte_be_to_cpu_32(r->src_stag), src_to, len,
					    IBV_ACCESS_REMOTE_READ, &cause, false) : NULL;
	if (len && src == NULL) {
		ep_terminate(ep, cause, hdr, seg_len);
		return;
	}
	if (ep->job_tail - ep->job_head >= JOB_MAX) {
		ep_terminate(ep, RNIC_TERM_RDMAP_CATASTROPHIC_STREAM, hdr, seg_len);
		return;
	}
	struct job *j = &ep->jobs[ep->job_tail % JOB_MAX];
	*j = (struct job){ .kind = JOB_READ_RESP, .src = src, .len = len,
			   .stag = rte_be_to_cpu_32(r->sink_stag),
			   .to = rte_be_to_cpu_64(r->sink_to) };
	ep->job_tail++;
	ep_pump(ep);
}

static int frx_done(void *arg, const struct rnic_fpdu_info *fi)
{
	struct rnic_iw_ep *ep = arg;
	ep->stats_fpdus_in++;
	if (ep->place == NULL && !(fi->opcode == RNIC_RDMAP_OP_TERMINATE))
		return 0;   /* skipped: a Terminate is on its way */
	switch (fi->opcode) {
	case RNIC_RDMAP_OP_SEND:
	case RNIC_RDMAP_OP_SEND_SE:
	case RNIC_RDMAP_OP_SEND_INV:
	case RNIC_RDMAP_OP_SEND_SE_INV:
		if (fi->last) {
			const struct rnic_ddp_untagged_hdr *u = (const void *)fi->hdr;
			uint32_t total = rte_be_to_cpu_32(u->mo) + fi->payload_len;
			uint64_t id = ep->rq[ep->rq_head % RQ_MAX].wr_id;
			ep->rq_head++;
			complete(ep, id, IBV_WC_RECV, IBV_WC_SUCCESS, total);
		}
		break;
	case RNIC_RDMAP_OP_READ_RESP:
		if (fi->last && ep->ord_head != ep->ord_tail) {
			unsigned i = ep->ord_head++ % ORD_MAX;
			if (ep->ord[i].signaled)
				complete(ep, ep->ord[i].wr_id, IBV_WC_RDMA_READ,
					 IBV_WC_SUCCESS, ep->ord[i].len);
		}
		break;
	case RNIC_RDMAP_OP_READ_REQ:
		serve_read(ep, fi->hdr, fi->ulpdu_len);
		break;
	case RNIC_RDMAP_OP_TERMINATE:
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

static void enter_rts(struct rnic_iw_ep *ep)
{
	ep->state = EP_RTS;
	if (ep->ops && ep->ops->established)
		ep->ops->established(ep, ep->ctx);
	ep_pump(ep);
}

static void rts_timer_cb(struct rnic_timer *t, void *arg)
{
	(void)t;
	struct rnic_iw_ep *ep = arg;
	if (ep->state == EP_RTS_WAIT)
		enter_rts(ep);
}

/* Set up the FPDU machinery from the negotiation result. */
static void start_fpdus(struct rnic_iw_ep *ep)
{
	rnic_fpdu_tx_init(&ep->ftx, ep->res.crc, ep->res.markers_tx, ep->tx_pos);
	rnic_fpdu_rx_init(&ep->frx, ep->res.crc, ep->res.markers_rx, ep->rx_pos,
			  &frx_ops, ep);
}

/* Feed received stream bytes to the MPA or FPDU parser. */
static void ep_input_run(struct rnic_iw_ep *ep, const uint8_t *p, size_t len);

static void ep_input(struct rnic_iw_ep *ep, const uint8_t *p, size_t len)
{
	ep->busy++;
	ep_input_run(ep, p, len);
	if (--ep->busy == 0 && ep->state == EP_CLOSED)
		rte_free(ep);
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
			if (ep->state == EP_MPA_REP) {
				rc = rnic_mpa_connected(&ep->mp, &ep->mrx, &ep->res);
				iw_debug("MPA reply: rc %d rev %u crc %d ird %u ord %u p2p %d rtr %u err %u",
					 rc, ep->res.rev, ep->res.crc, ep->res.ird, ep->res.ord,
					 ep->res.p2p, ep->res.rtr, ep->res.err);
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
			uint8_t frame[sizeof(struct rnic_mpa_rr_hdr) + 16 + RNIC_MPA_PD_MAX];
			int n = rnic_mpa_build_reply(&ep->res, ctx == NULL, NULL, 0, frame, sizeof(frame));
			if (n > 0) {
				struct rte_mbuf *m = rte_pktmbuf_alloc(rnic_tcp_pool(ep->c));
				if (m != NULL) {
					memcpy(rte_pktmbuf_append(m, (uint16_t)n), frame, (size_t)n);
					if (rnic_tcp_send(ep->c, m) != 0)
						rte_pktmbuf_free(m);
					ep->tx_pos += (uint32_t)n;
				}
			}
			if (ctx == NULL) {
				ep_close(ep, -ECONNREFUSED);
				return;
			}
			ep->ctx = ctx;
			start_fpdus(ep);
			enter_rts(ep);
			continue;
		}
		if (ep->state == EP_RTS || ep->state == EP_RTS_WAIT || ep->state == EP_CLOSING) {
			int rc = rnic_fpdu_rx_input(&ep->frx, p, len, &used);
			p += used;
			len -= used;
			if (rc == -EAGAIN || (rc == 0 && used == 0))
				return;
			if (rc < 0 && ep->state != EP_CLOSED) {
				iw_debug("FPDU stream error: rc %d err %d (%s)", rc, ep->frx.err,
					 rnic_term_name(ep->frx.err));
				struct rnic_term_offender off;
				rnic_fpdu_rx_offender(&ep->frx, &off);
				ep_terminate(ep, ep->frx.err, off.ddp_hdr, off.ddp_seg_len);
				return;
			}
			continue;
		}
		return;
	}
}

static void tcp_recv(struct rnic_tcp_conn *c, void *ctx, struct rte_mbuf *m)
{
	(void)c;
	struct rnic_iw_ep *ep = ctx;
	ep->busy++;
	for (struct rte_mbuf *s = m; s != NULL && ep->state != EP_CLOSED; s = s->next)
		ep_input(ep, rte_pktmbuf_mtod(s, const uint8_t *), s->data_len);
	rte_pktmbuf_free(m);
	if (--ep->busy == 0 && ep->state == EP_CLOSED)
		rte_free(ep);
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
	for (; ep->job_head != ep->job_tail; ep->job_head++) {
		struct job *j = &ep->jobs[ep->job_head % JOB_MAX];
		if (j->kind == JOB_SEND || j->kind == JOB_WRITE)
			complete(ep, j->wr_id, j->kind == JOB_SEND ? IBV_WC_SEND : IBV_WC_RDMA_WRITE,
				 IBV_WC_WR_FLUSH_ERR, 0);
	}
	for (; ep->ord_head != ep->ord_tail; ep->ord_head++)
		complete(ep, ep->ord[ep->ord_head % ORD_MAX].wr_id, IBV_WC_RDMA_READ,
			 IBV_WC_WR_FLUSH_ERR, 0);
	for (; ep->rq_head != ep->rq_tail; ep->rq_head++)
		complete(ep, ep->rq[ep->rq_head % RQ_MAX].wr_id, IBV_WC_RECV,
			 IBV_WC_WR_FLUSH_ERR, 0);
}

static void tcp_closed(struct rnic_tcp_conn *c, void *ctx, int err)
{
	(void)c;
	struct rnic_iw_ep *ep = ctx;
	ep->c = NULL;
	ep_close(ep, err);
}

static void ep_close(struct rnic_iw_ep *ep, int err)
{
	if (ep->state == EP_CLOSED)
		return;
	ep->state = EP_CLOSED;
	rnic_timer_cancel(&ep->w->timers, &ep->rts_timer);
	ep_flush(ep);
	if (ep->c != NULL) {
		struct rnic_tcp_conn *c = ep->c;
		ep->c = NULL;
		rnic_tcp_set_ops(c, NULL, NULL);
		if (err)
			rnic_tcp_abort(c);
		else
			rnic_tcp_close(c);
	}
	if (ep->ops && ep->ops->disconnected)
		ep->ops->disconnected(ep, ep->ctx, err);
	ep->ops = NULL;
	if (ep->busy == 0)
		rte_free(ep);   /* else ep_input frees it on the way out */
}

static const struct rnic_tcp_ops ep_tcp_ops;

static struct rnic_iw_ep *ep_new(struct rnic_worker *w, const struct rnic_iw_ops *ops,
				 const struct rnic_iw_params *p)
{
	struct rnic_iw_ep *ep = rte_zmalloc("rnic_iw_ep", sizeof(*ep), RTE_CACHE_LINE_SIZE);
	if (ep == NULL)
		return NULL;
	ep->w = w;
	ep->ops = ops;
	if (p)
		ep->p = *p;
	else
		rnic_iw_params_default(&ep->p);
	rnic_mpa_params_default(&ep->mp);
	ep->mp.crc = ep->p.crc;
	ep->mp.ird = ep->p.ird;
	ep->mp.ord = ep->p.ord;
	ep->mp.p2p = ep->p.p2p;
	rnic_timer_init(&ep->rts_timer, rts_timer_cb, ep);
	/* RFC 5041 section 5.1: the first message of each queue has MSN 1 */
	ep->msn[0] = ep->msn[1] = ep->msn[2] = 1;
	return ep;
}

static void tcp_connected(struct rnic_tcp_conn *c, void *ctx)
{
	struct rnic_iw_ep *ep = ctx;
	uint8_t frame[sizeof(struct rnic_mpa_rr_hdr) + 16 + RNIC_MPA_PD_MAX];
	ep->mp.pdata = ep->pdata;
	ep->mp.pd_len = ep->pd_len;
	int n = rnic_mpa_build_request(&ep->mp, frame, sizeof(frame));
	struct rte_mbuf *m = n > 0 ? rte_pktmbuf_alloc(rnic_tcp_pool(c)) : NULL;
	if (m == NULL) {
		ep_close(ep, -ENOMEM);
		return;
	}
	memcpy(rte_pktmbuf_append(m, (uint16_t)n), frame, (size_t)n);
	if (rnic_tcp_send(c, m) != 0) {
		rte_pktmbuf_free(m);
		ep_close(ep, -ENOBUFS);
		return;
	}
	ep->tx_pos += (uint32_t)n;
	rnic_mpa_rx_init(&ep->mrx, true);
	ep->state = EP_MPA_REP;
}

static void *tcp_accept(struct rnic_tcp_conn *c, void *lctx)
{
	struct iw_listener *l = lctx;
	struct rnic_iw_ep *ep = ep_new(rnic_tcp_worker(c), l->ops, &l->p);
	if (ep == NULL)
		return NULL;
	ep->c = c;
	ep->listen_ctx = l->ctx;
	rnic_mpa_rx_init(&ep->mrx, false);
	ep->state = EP_MPA_REQ;
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
	if (pd_len > RNIC_MPA_PD_MAX - 8)
		return -EINVAL;
	struct rnic_iw_ep *ep = ep_new(w, ops, p);
	if (ep == NULL)
		return -ENOMEM;
	ep->ctx = ctx;
	ep->active = true;
	if (pd_len)   /* memcpy from NULL is undefined even for 0 bytes */
		memcpy(ep->pdata, pdata, pd_len);
	ep->pd_len = pd_len;
	ep->state = EP_CONNECTING;
	int rc = rnic_tcp_connect(w, dst_ip, port, &ep_tcp_ops, ep, &ep->c);
	if (rc != 0) {
		rte_free(ep);
		return rc;
	}
	*out = ep;
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
