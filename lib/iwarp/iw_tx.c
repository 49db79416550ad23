/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * iWARP transmit: work requests become jobs (queue_wr), jobs become
 * FPDUs (job_run) packed back to back into a stage of at most one MSS,
 * and the stage goes to TCP as one segment (stage_flush). A job completes
 * once its last FPDU left the stage for TCP (retire_jobs). Our MPA
 * request or reply goes first (mpa_tx_flush); no FPDU may pass it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_common.h>
#include <rte_eal.h>
#include <rte_mbuf.h>

#include "iwarp/crc32c.h"
#include "iwarp/iw_int.h"
#include "iwarp/rdmap_op.h"
#include "rnic/rnic_tcp.h"

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

void iw_tx_timer_cb(struct rnic_timer *t, void *arg)
{
	(void)t;
	struct rnic_iw_ep *ep = arg;
	ep->busy++;   /* a completion may close the endpoint under us */
	iw_pump(ep);
	if (--ep->busy == 0 && ep->state == EP_CLOSED)
		iw_ep_free(ep);
}

/*
 * Hand the pending MPA frame (our request or reply) to TCP; FPDUs may
 * only follow it. @return 0 when it is out (or none is pending), -ENOBUFS
 * when it waits for the tx timer, another -errno when the connection
 * cannot take it any more (it is dropped then).
 */
static int mpa_tx_flush(struct rnic_iw_ep *ep)
{
	struct iw_startup *su = ep->su;
	if (su == NULL || su->mpa_tx_len == 0)
		return 0;
	if (ep->c == NULL) {
		su->mpa_tx_len = 0;
		return -ENOTCONN;
	}
	struct rte_mbuf *m = rte_pktmbuf_alloc(rnic_tcp_pool(ep->c));
	if (m == NULL)
		return tx_stalled(ep);
	if (su->mpa_tx_len > rte_pktmbuf_tailroom(m)) {
		rte_pktmbuf_free(m);
		su->mpa_tx_len = 0;
		return -EMSGSIZE;
	}
	memcpy(rte_pktmbuf_append(m, su->mpa_tx_len), su->mpa_tx, su->mpa_tx_len);
	int rc = rnic_tcp_send(ep->c, m);
	if (rc != 0) {
		rte_pktmbuf_free(m);
		/* nothing is in flight yet: no ACK would bring a sent() */
		if (rc == -EAGAIN || rc == -ENOBUFS)
			return tx_stalled(ep);
		su->mpa_tx_len = 0;
		return rc;
	}
	su->mpa_tx_len = 0;
	/* a reply that waited for an mbuf while the endpoint went to RTS:
	 * the startup state is no longer needed */
	iw_startup_done(ep);
	return 0;
}

/* Queue @p n bytes of MPA frame in ep->mpa_tx for TCP and try to send it.
 * Its stream bytes count from now on (markers), sent or still waiting. */
int iw_mpa_tx_queue(struct rnic_iw_ep *ep, uint16_t n)
{
	ep->su->mpa_tx_len = n;
	ep->tx_pos += n;
	int rc = mpa_tx_flush(ep);
	return rc == -ENOBUFS ? 0 : rc;
}

/* ------------------------------------------------------- zero-copy transmit */

/* A data FPDU of at least this much payload lends the memory instead of
 * copying it (docs/iwarp.md, Zero-copy transmit: below it the three
 * mbufs of the chain cost more than the copy saves). */
#define ZC_MIN_PAYLOAD 4096
/* header, payload pieces and trailer must fit one TCP unit's chain */
#define ZC_MAX_PIECES 6
/* how soon a job waiting for its memory back looks again */
#define ZC_POLL_US 20

enum { ZC_WIRE_DONE = 1, ZC_JOB_GONE = 2 };

/*
 * The zero-copy state of one job. Its shared info counts the mbufs
 * attached to the job's memory (TCP's queued units, their clones on the
 * wire and at the receiver) plus one build guard the job holds until its
 * last data FPDU went to TCP; DPDK calls zc_wire_done() when the count
 * reaches zero, on whichever thread freed the last mbuf. The job and the
 * wire side each drop their claim in @p state; the last one frees.
 */
struct iw_zc {
	struct rte_mbuf_ext_shared_info shinfo;
	uint32_t state;   /* ZC_WIRE_DONE | ZC_JOB_GONE */
	bool guard;       /* the build guard is still counted (owner only) */
};

bool rnic_iw_zero_copy_tx(void)
{
	static int on = -1;
	if (on < 0) {   /* off unless switched on (docs/iwarp.md, the decision) */
		const char *e = getenv("RNIC_IW_ZERO_COPY_TX");
		on = e != NULL && strcmp(e, "1") == 0;
	}
	return on;
}

static uint64_t zc_live;   /* struct iw_zc allocated, process-wide */

uint64_t rnic_iw_zc_live(void)
{
	return __atomic_load_n(&zc_live, __ATOMIC_RELAXED);
}

static void zc_free(struct iw_zc *zc)
{
	free(zc);
	__atomic_fetch_sub(&zc_live, 1, __ATOMIC_RELAXED);
}

static void zc_wire_done(void *addr, void *opaque)
{
	(void)addr;
	struct iw_zc *zc = opaque;
	if (__atomic_fetch_or(&zc->state, ZC_WIRE_DONE, __ATOMIC_ACQ_REL) & ZC_JOB_GONE)
		zc_free(zc);
}

static struct iw_zc *zc_new(void)
{
	struct iw_zc *zc = calloc(1, sizeof(*zc));
	if (zc == NULL)
		return NULL;
	zc->shinfo.free_cb = zc_wire_done;
	zc->shinfo.fcb_opaque = zc;
	rte_mbuf_ext_refcnt_set(&zc->shinfo, 1);   /* the build guard */
	zc->guard = true;
	__atomic_fetch_add(&zc_live, 1, __ATOMIC_RELAXED);
	return zc;
}

/* The job's data is all with TCP: no more mbufs will be attached. */
static void zc_drop_guard(struct iw_zc *zc)
{
	if (!zc->guard)
		return;
	zc->guard = false;
	if (rte_mbuf_ext_refcnt_update(&zc->shinfo, -1) == 0)
		zc_wire_done(NULL, zc);
}

void iw_zc_forget(struct job *j)
{
	struct iw_zc *zc = j->zc;
	if (zc == NULL)
		return;
	j->zc = NULL;
	zc_drop_guard(zc);
	if (__atomic_fetch_or(&zc->state, ZC_JOB_GONE, __ATOMIC_ACQ_REL) & ZC_WIRE_DONE)
		zc_free(zc);
}

/* Whether no mbuf refers to @p j's memory any more (its zero-copy state
 * is freed then). */
static bool zc_released(struct job *j)
{
	struct iw_zc *zc = j->zc;
	if (zc == NULL)
		return true;
	if (!(__atomic_load_n(&zc->state, __ATOMIC_ACQUIRE) & ZC_WIRE_DONE))
		return false;
	j->zc = NULL;
	zc_free(zc);   /* the wire side is done with it */
	return true;
}

/* Whether the data FPDU of @p len payload bytes in @p niov pieces goes
 * zero-copy: the switch is on, no markers interleave the payload, it is
 * large enough, it fills more than half a segment (a smaller one shares
 * its segment with the next when copied: sent zero-copy it took a segment
 * of its own, and 4 KiB Writes and Sends at MTU 9000 went 10 to 20%
 * slower), the ports see the memory by its virtual address and none of
 * them is a PCI device (whose DMA would need the MR mapped for it). */
static bool zc_wanted(const struct rnic_iw_ep *ep, uint32_t len, unsigned niov)
{
	return len >= ZC_MIN_PAYLOAD && 2 * len > rnic_tcp_mss(ep->c) &&
	       niov <= ZC_MAX_PIECES && !ep->res.markers_tx && rnic_iw_zero_copy_tx() &&
	       rte_eal_iova_mode() == RTE_IOVA_VA && !iw_stack(ep->st)->port_dma;
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
	if (m == NULL) {
		/* nothing staged: what was framed went straight to TCP
		 * (zero-copy chains) */
		ep->sent_head = ep->built_head;
		return 0;
	}
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
 * MSS, and goes to TCP then or when iw_pump() has run out of work (every
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

/*
 * Send one data FPDU as a chain of its own, lending the payload: a head
 * mbuf (ULPDU_Length and the DDP/RDMAP header), one mbuf per piece
 * attached to the memory as an external buffer counted in @p zc, and a
 * trailer mbuf (pad and CRC). The CRC is taken over the memory in place.
 * Staged FPDUs go first. @return as send_fpdu().
 */
static int send_fpdu_zc(struct rnic_iw_ep *ep, struct iw_zc *zc, const void *hdr,
			size_t hdr_len, const struct iovec *iov, unsigned niov, uint32_t len)
{
	uint32_t ulpdu = (uint32_t)hdr_len + len;
	uint32_t pad = rnic_mpa_pad_len(ulpdu);
	size_t flen = rnic_fpdu_tx_len(&ep->ftx, ulpdu);
	struct rte_mbuf *m[ZC_MAX_PIECES + 2];
	unsigned n = niov + 2;
	int rc;

	if ((rc = stage_flush(ep)) != 0)
		return rc;
	if (rnic_tcp_send_space(ep->c) < flen)
		return -EAGAIN;
	if (rte_pktmbuf_alloc_bulk(rnic_tcp_pool(ep->c), m, n) != 0)
		return tx_stalled(ep);
	rte_be16_t ulen = rte_cpu_to_be_16((uint16_t)ulpdu);
	uint8_t *h = (uint8_t *)rte_pktmbuf_append(m[0], (uint16_t)(sizeof(ulen) + hdr_len));
	memcpy(h, &ulen, sizeof(ulen));
	memcpy(h + sizeof(ulen), hdr, hdr_len);
	uint32_t crc = ep->ftx.crc ? rnic_crc32c(0, h, sizeof(ulen) + hdr_len) : 0;
	for (unsigned i = 0; i < niov; i++) {
		struct rte_mbuf *p = m[1 + i];
		rte_mbuf_ext_refcnt_update(&zc->shinfo, 1);
		rte_pktmbuf_attach_extbuf(p, iov[i].iov_base,
					  (rte_iova_t)(uintptr_t)iov[i].iov_base,
					  (uint16_t)iov[i].iov_len, &zc->shinfo);
		rte_pktmbuf_append(p, (uint16_t)iov[i].iov_len);
		if (ep->ftx.crc)
			crc = rnic_crc32c(crc, iov[i].iov_base, iov[i].iov_len);
	}
	uint8_t *t = (uint8_t *)rte_pktmbuf_append(m[n - 1], (uint16_t)(pad + RNIC_MPA_CRC_LEN));
	memset(t, 0, pad + RNIC_MPA_CRC_LEN);
	if (ep->ftx.crc)
		rnic_crc32c_put(t + pad, rnic_crc32c(crc, t, pad));
	for (unsigned i = 0; i + 1 < n; i++)
		m[i]->next = m[i + 1];
	m[0]->nb_segs = (uint16_t)n;
	m[0]->pkt_len = (uint32_t)flen;

	rc = rnic_tcp_send(ep->c, m[0]);
	if (rc != 0) {
		rte_pktmbuf_free(m[0]);   /* drops the chain's references */
		return rc == -ENOBUFS ? tx_stalled(ep) : rc;
	}
	ep->ftx.pos += (uint32_t)flen;
	ep->stats_fpdus_out++;
	iw_count(&iw_stack(ep->st)->zc_fpdus_out);
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

/* An RDMA Read Request (QN 1): one untagged segment, the 28-byte header
 * naming our sink and the peer's source. */
static int send_read_req(struct rnic_iw_ep *ep, struct job *j)
{
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

/* The data of a Send, Write or Read Response from where it stopped, in
 * segments that each fit one TCP segment; the opcode table gives the
 * buffer model, header length and queue. Then the Immediate Data message
 * of a work request with Immediate. */
static int send_data(struct rnic_iw_ep *ep, struct job *j)
{
	uint8_t op = j->kind == JOB_SEND ? j->rdmap_op :
		     j->kind == JOB_WRITE ? RNIC_RDMAP_OP_WRITE : RNIC_RDMAP_OP_READ_RESP;
	const struct rnic_rdmap_op_info *oi = rnic_rdmap_op(op);
	uint32_t max = seg_max(ep, oi->hdr_len);
	do {
		uint32_t n = j->len - j->off < max ? j->len - j->off : max;
		bool last = j->off + n == j->len;
		union {
			struct rnic_ddp_tagged_hdr t;
			struct rnic_ddp_untagged_hdr u;
		} h;
		if (oi->tagged)
			h.t = (struct rnic_ddp_tagged_hdr){ rnic_ddp_ctrl(true, last),
				rnic_rdmap_ctrl(op), rte_cpu_to_be_32(j->stag),
				rte_cpu_to_be_64(j->to + j->off) };
		else
			h.u = (struct rnic_ddp_untagged_hdr){ rnic_ddp_ctrl(false, last),
				rnic_rdmap_ctrl(op), rte_cpu_to_be_32(j->inv_stag),
				rte_cpu_to_be_32(oi->qn), rte_cpu_to_be_32(ep->msn[oi->qn]),
				rte_cpu_to_be_32(j->off) };
		struct iovec iov[RNIC_MAX_SGE];
		unsigned niov = gather(j->sge, j->num_sge, j->off, n, iov);
		int rc;
		if (zc_wanted(ep, n, niov) &&
		    (j->zc != NULL || (j->zc = zc_new()) != NULL))
			rc = send_fpdu_zc(ep, j->zc, &h, oi->hdr_len, iov, niov, n);
		else
			rc = send_fpdu(ep, &h, oi->hdr_len, iov, niov, n);
		if (rc != 0)
			return rc;
		j->off += n;
	} while (j->off < j->len);
	if (j->zc != NULL)
		zc_drop_guard(j->zc);   /* the data is all with TCP */
	if (!oi->tagged)
		ep->msn[oi->qn]++;
	j->data_done = true;
	return j->imm ? send_imm(ep, j) : 0;
}

/* Send as much of @p j as TCP takes. @return 0 when it is all sent, else
 * send_fpdu()'s error. */
static int job_run(struct rnic_iw_ep *ep, struct job *j)
{
	switch (j->kind) {
	case JOB_TERM:
		/* the Terminate ULPDU already holds its DDP header */
		return send_fpdu(ep, ep->term_out, j->len, NULL, 0, 0);
	case JOB_READ_REQ:
		return send_read_req(ep, j);
	case JOB_ATOMIC_REQ:
	case JOB_ATOMIC_RESP:
		return send_atomic(ep, j);
	default:
		/* only the Immediate Data may be left */
		return j->data_done ? send_imm(ep, j) : send_data(ep, j);
	}
}

/* Retire the jobs whose FPDUs TCP took: counters, IRD, completions.
 * @return false when a completion closed the endpoint. */
static bool retire_jobs(struct rnic_iw_ep *ep)
{
	while (ep->job_head != ep->sent_head) {
		struct job *j = iw_job_at(ep, ep->job_head);
		/* A Read Response completes nothing: once TCP has all of it,
		 * its IRD slot is free (the requester may ask again as soon as
		 * it has the data) and its zero-copy state goes with the last
		 * mbuf, which only refers to the memory (docs/iwarp.md) */
		if (j->kind == JOB_READ_RESP)
			iw_zc_forget(j);
		if (!zc_released(j)) {
			/* mbufs still lend its memory: ACKs and the tx timer
			 * bring us back (the last free may happen elsewhere) */
			if (!rnic_timer_pending(&ep->tx_timer))
				rnic_timer_arm(&ep->w->timers, &ep->tx_timer, ep->w->now_tsc,
					       ZC_POLL_US);
			break;
		}
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
			iw_complete(ep, j->wr_id, IBV_WC_SEND, IBV_WC_SUCCESS, j->len);
		else if (j->kind == JOB_WRITE)
			iw_complete(ep, j->wr_id, IBV_WC_RDMA_WRITE, IBV_WC_SUCCESS, j->len);
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
/* After our Terminate: close TCP (FIN) once the Terminate is with TCP,
 * behind everything queued before it. */
void iw_term_close(struct rnic_iw_ep *ep)
{
	if (!ep->term_close || ep->c == NULL || (int)(ep->sent_head - ep->term_job) <= 0)
		return;
	ep->term_close = false;
	rnic_tcp_close(ep->c);
}

void iw_pump(struct rnic_iw_ep *ep)
{
	bool was_full = ep->job_tail - ep->job_head >= ep->job_cap / 2;
	unsigned head = ep->job_head;
	if (ep->c == NULL || mpa_tx_flush(ep) != 0)
		return;   /* FPDUs go only behind our MPA frame */
	int rc = 0;
	while (ep->built_head != ep->job_tail) {
		struct job *j = iw_job_at(ep, ep->built_head);
		rc = job_run(ep, j);
		if (rc != 0)
			break;   /* resumed by TCP's sent() callback or the tx timer */
		ep->built_head++;
	}
	/* out of work (or of room): what is staged goes now; on failure,
	 * sent() or the tx timer brings us back here */
	if (rc == 0)
		stage_flush(ep);
	if (ep->term_close && ep->state == EP_CLOSING)
		iw_term_close(ep);
	if (!retire_jobs(ep) || rc != 0)
		return;
	/* room only when a job left the ring: a zero-copy job still waiting
	 * for its memory frees nothing, and the verbs layer, told otherwise,
	 * posts nothing, kicks us and is told again, forever, on the worker
	 * that would take the ACKs that free the memory */
	if (was_full && ep->job_head != head && ep->hooks != NULL && ep->hooks->tx_room != NULL &&
	    ep->state == EP_RTS)
		ep->hooks->tx_room(ep->qp);
}

void rnic_iw_kick(struct rnic_iw_ep *ep)
{
	iw_pump(ep);
}

bool rnic_iw_has_room(const struct rnic_iw_ep *ep)
{
	/* one slot stays free for a Terminate (no ring yet: all free) */
	return ep->jobs == NULL || ep->job_tail - ep->job_head + 2 <= ep->job_cap;
}

/* Room for one more Read or Atomic Request under the negotiated ORD:
 * 0, -ENOMEM (full: a response frees a slot), -ENOBUFS (the table could
 * not be allocated: the request fails, counted in alloc_failures). */
static int ord_room(struct rnic_iw_ep *ep)
{
	if (ep->ord_tail - ep->ord_head >= ep->res.ord || ep->ord_tail - ep->ord_head >= ORD_MAX)
		return -ENOMEM;
	return iw_ord_table(ep) != NULL ? 0 : -ENOBUFS;
}

/* Record an outstanding Read or Atomic Request of @p wr: its answer
 * completes it, in request order. */
static void ord_push(struct rnic_iw_ep *ep, const struct ibv_send_wr *wr, const struct job *j,
		     uint8_t wc_op)
{
	unsigned o = ep->ord_tail++ % ORD_MAX;
	ep->ord[o].wr_id = wr->wr_id;
	ep->ord[o].len = j->len;
	ep->ord[o].signaled = j->signaled;
	ep->ord[o].atomic = j->kind == JOB_ATOMIC_REQ;
	ep->ord[o].rtr = false;
	ep->ord[o].wc_op = wc_op;
	ep->ord[o].req_id = j->req_id;
	ep->ord[o].res_addr = j->kind == JOB_ATOMIC_REQ ? j->sge[0].addr : 0;
	/* a Read's sink: what its responses must match (iw_rx.c) */
	ep->ord[o].sink_stag = j->kind == JOB_READ_REQ ? j->stag : 0;
	ep->ord[o].sink_to = j->kind == JOB_READ_REQ ? j->to : 0;
	ep->ord[o].placed = 0;
}

/* Send, Send with Solicited Event, Send with Invalidate. */
static int wr_send(struct rnic_iw_ep *ep, struct job *j, const struct ibv_send_wr *wr)
{
	(void)ep;
	bool se = (wr->send_flags & IBV_SEND_SOLICITED) != 0;
	j->kind = JOB_SEND;
	if (wr->opcode == IBV_WR_SEND_WITH_INV) {
		j->inv_stag = wr->invalidate_rkey;
		j->rdmap_op = se ? RNIC_RDMAP_OP_SEND_SE_INV : RNIC_RDMAP_OP_SEND_INV;
	} else {
		j->rdmap_op = se ? RNIC_RDMAP_OP_SEND_SE : RNIC_RDMAP_OP_SEND;
	}
	return 0;
}

static int wr_write(struct rnic_iw_ep *ep, struct job *j, const struct ibv_send_wr *wr)
{
	(void)ep;
	j->kind = JOB_WRITE;
	j->stag = wr->wr.rdma.rkey;
	j->to = wr->wr.rdma.remote_addr;
	return 0;
}

/* RFC 7306: the data message, then an Immediate Data message; a
 * solicited event rides on the latter. */
static int wr_imm(struct rnic_iw_ep *ep, struct job *j, const struct ibv_send_wr *wr)
{
	j->imm = true;
	j->imm_data = wr->imm_data;
	j->imm_op = (wr->send_flags & IBV_SEND_SOLICITED) ? RNIC_RDMAP_OP_IMM_DATA_SE :
							      RNIC_RDMAP_OP_IMM_DATA;
	if (wr->opcode == IBV_WR_RDMA_WRITE_WITH_IMM)
		return wr_write(ep, j, wr);
	j->kind = JOB_SEND;
	j->rdmap_op = RNIC_RDMAP_OP_SEND;
	return 0;
}

/* RDMA Read: the sink is our own MR, its STag and TO go in the request. */
static int wr_read(struct rnic_iw_ep *ep, struct job *j, const struct ibv_send_wr *wr)
{
	if (j->num_sge != 1)
		return -EINVAL;
	int orc = ord_room(ep);
	if (orc != 0)
		return orc;
	j->kind = JOB_READ_REQ;
	j->stag = j->sge[0].lkey;
	j->to = j->sge[0].addr;
	j->src_stag = wr->wr.rdma.rkey;
	j->src_to = wr->wr.rdma.remote_addr;
	ord_push(ep, wr, j, IBV_WC_RDMA_READ);
	return 0;
}

/* Compare and Swap, Fetch and Add: one 8-byte result buffer; Atomic
 * Requests count against ORD like Reads and are answered in order with
 * them (RFC 7306). */
static int wr_atomic(struct rnic_iw_ep *ep, struct job *j, const struct ibv_send_wr *wr)
{
	bool cas = wr->opcode == IBV_WR_ATOMIC_CMP_AND_SWP;
	if (j->num_sge != 1 || j->len != 8)
		return -EINVAL;
	int orc = ord_room(ep);
	if (orc != 0)
		return orc;
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
	ord_push(ep, wr, j, cas ? IBV_WC_COMP_SWAP : IBV_WC_FETCH_ADD);
	return 0;
}

/* The job each verbs work request opcode becomes. */
static int (*const wr_build[])(struct rnic_iw_ep *, struct job *, const struct ibv_send_wr *) = {
	[IBV_WR_SEND] = wr_send,
	[IBV_WR_SEND_WITH_INV] = wr_send,
	[IBV_WR_SEND_WITH_IMM] = wr_imm,
	[IBV_WR_RDMA_WRITE] = wr_write,
	[IBV_WR_RDMA_WRITE_WITH_IMM] = wr_imm,
	[IBV_WR_RDMA_READ] = wr_read,
	[IBV_WR_ATOMIC_CMP_AND_SWP] = wr_atomic,
	[IBV_WR_ATOMIC_FETCH_AND_ADD] = wr_atomic,
};

/* Queue one work request; the caller validated it. */
static int queue_wr(struct rnic_iw_ep *ep, const struct ibv_send_wr *wr, bool keep_sge)
{
	if (ep->state != EP_RTS)
		return -ENOTCONN;
	/* one slot stays free for a Terminate; no ring at all: it could not
	 * be allocated (counted), the request fails instead of waiting */
	if (!iw_job_room(ep, 2))
		return ep->jobs == NULL ? -ENOBUFS : -ENOMEM;
	if ((unsigned)wr->opcode >= RTE_DIM(wr_build) || wr_build[wr->opcode] == NULL)
		return -EINVAL;
	struct job *j = iw_job_next(ep);
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
	int rc = wr_build[wr->opcode](ep, j, wr);
	if (rc != 0)
		return rc;
	ep->job_tail++;
	if (!keep_sge)
		iw_pump(ep);   /* rnic_iw_post_send(): one at a time */
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
		if (sg == NULL || iw_mr_check(ep, sg->lkey, sg->addr, sg->length,
					      IBV_ACCESS_LOCAL_WRITE, &cause, false) == NULL)
			return -EINVAL;
	} else if (wr->opcode != IBV_WR_SEND && wr->opcode != IBV_WR_RDMA_WRITE) {
		return -EINVAL;
	} else if (sg && sg->length && (wr->send_flags & IBV_SEND_INLINE) == 0 &&
		   iw_mr_check(ep, sg->lkey, sg->addr, sg->length, 0, &cause, false) == NULL) {
		return -EINVAL;   /* a bad lkey never reaches the wire */
	}
	return queue_wr(ep, wr, false);
}

int rnic_iw_post_recv(struct rnic_iw_ep *ep, uint64_t wr_id, void *buf, uint32_t len)
{
	struct rnic_rq *rq = &ep->own_rq;
	if (ep->state == EP_CLOSED)
		return -ENOTCONN;
	if (ep->rq == rq && rq->e == NULL && rnic_rq_init(rq, RQ_MAX, false) != 0)
		return -ENOMEM;
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

