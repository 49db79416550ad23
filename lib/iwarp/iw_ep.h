/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Internal endpoint interface for iw_verbs.c (the transport operations and
 * the CM's): binding an endpoint to a verbs QP (its PD, QP number, receive queue and completion
 * hooks), posting work requests whose SGE lists stay valid until they
 * complete, and deciding on a connection request later than the request()
 * callback. Every function runs on the endpoint's worker.
 */
#ifndef RNIC_IWARP_IW_EP_H
#define RNIC_IWARP_IW_EP_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <infiniband/verbs.h>

#include "iwarp/iwarp.h"
#include "rdma/wq.h"

/* request() may return this to decide later with rnic_iw_accept/reject. */
#define RNIC_IW_DEFER ((void *)(uintptr_t)1)

struct rnic_iw_qp_hooks {
	/* One completion: send-queue work carries the ordinal the verbs
	 * layer gave as wr_id; receives carry the rwqe's wr_id. @p solicited:
	 * the message asked for a solicited event (SE). */
	void (*completion)(void *qp, const struct ibv_wc *wc, bool solicited);
	/* The endpoint can take more work (its job queue drained). */
	void (*tx_room)(void *qp);
};

/* Bind a verbs QP: PD and QP number for STag checks, @p rq for Sends;
 * the job ring (allocated when the first job is queued) holds
 * @p sq_depth work requests besides the responses and control messages. */
void rnic_iw_bind_qp(struct rnic_iw_ep *ep, const struct rnic_iw_qp_hooks *h,
		     void *qp, const void *pd, uint32_t qpn, struct rnic_rq *rq,
		     struct rnic_qp_xfer *xfer, uint32_t sq_depth);

/* Queue a work request the verbs layer validated; wr->sg_list must stay
 * valid until the work completes. Nothing goes out before rnic_iw_kick(),
 * so that the small FPDUs of a batch share TCP segments. @return 0,
 * -ENOMEM (full: retry after tx_room), -ENOTCONN, -EINVAL. */
int rnic_iw_post_wr(struct rnic_iw_ep *ep, const struct ibv_send_wr *wr);

/* Frame and send what rnic_iw_post_wr() queued. */
void rnic_iw_kick(struct rnic_iw_ep *ep);

/* Space for more work requests now. */
bool rnic_iw_has_room(const struct rnic_iw_ep *ep);

/* Decide on a deferred request: accept with context @p ctx (the reply
 * carries @p pdata, and the given IRD/ORD), or reject. @return 0 (a reply
 * that found no mbuf goes from the tx timer), -EINVAL, -EPROTO, or the
 * error of a connection that cannot send any more. */
int rnic_iw_accept(struct rnic_iw_ep *ep, void *ctx, const void *pdata,
		   uint16_t pd_len, uint16_t ird, uint16_t ord);
int rnic_iw_reject(struct rnic_iw_ep *ep, const void *pdata, uint16_t pd_len);

/* Replace the endpoint's callback context (e.g. while a request waits). */
void rnic_iw_set_ctx(struct rnic_iw_ep *ep, void *ctx);

/* Abortive close (RST): outstanding work is flushed. */
void rnic_iw_abort(struct rnic_iw_ep *ep);

/* Negotiated IRD/ORD, peer address (host order). */
void rnic_iw_conn_info(const struct rnic_iw_ep *ep, uint16_t *ird, uint16_t *ord,
		       uint32_t *peer_ip, uint16_t *peer_port);

/* The peer's address, IPv4 or IPv6. */
void rnic_iw_conn_peer(const struct rnic_iw_ep *ep, struct rnic_addr *peer);

/* Whether the TCP connection under the endpoint was ever established
 * (tells a refused or unreachable peer from an MPA reject). */
bool rnic_iw_tcp_up(const struct rnic_iw_ep *ep);

/* The private data of the peer's last MPA frame (request or reply). */
void rnic_iw_peer_pdata(const struct rnic_iw_ep *ep, const void **pd, uint16_t *len);

/* One line of state for diagnostics (any thread; racy by nature). */
void rnic_iw_dump(const struct rnic_iw_ep *ep, FILE *f);

/* The endpoint's figures for telemetry's /rnic/qp: its state, MSNs,
 * queues and the TCP connection's sequence numbers, into dict @p d. */
struct rte_tel_data;
void rnic_iw_telemetry(const struct rnic_iw_ep *ep, struct rte_tel_data *d);

/* Counters. */
void rnic_iw_ep_counters(const struct rnic_iw_ep *ep, uint64_t *fpdus_in,
			 uint64_t *fpdus_out, uint64_t *terms_in, uint64_t *terms_out);

#endif
