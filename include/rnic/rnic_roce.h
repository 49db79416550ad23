/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * RoCEv2-only calls: what a RoCE QP needs beyond the transport-neutral
 * verbs (rnic_verbs.h) and connection manager (rnic_cm.h). RoCE QPs are
 * created with rnic_create_qp_transport(..., RNIC_TRANSPORT_ROCE), or with
 * rnic_create_qp() on a device whose configuration says roce
 * (docs/roce.md).
 *
 * Errors follow rnic.h: functions returning int return 0 or a negative
 * errno.
 */
#ifndef RNIC_ROCE_H
#define RNIC_ROCE_H

#include <stdbool.h>
#include <stdint.h>

#include <infiniband/verbs.h>

#include "rnic/rnic.h"
#include "rnic/rnic_verbs.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Bytes a RoCEv2 packet adds to its payload inside the IP MTU: IPv4 20,
 *  UDP 8, BTH 12, RETH + ImmDt 20, ICRC 4. The path MTU of a RoCE QP must
 *  fit: path MTU + RNIC_ROCE_OVERHEAD <= port MTU. */
#define RNIC_ROCE_OVERHEAD 64

/** The attribute masks of the two steps that connect a RoCE RC QP out of
 *  band with rnic_modify_qp(), as libibverbs RC programs (rc_pingpong) use
 *  them: RTR takes the path and the peer (ah_attr, path_mtu, dest_qp_num,
 *  rq_psn, max_dest_rd_atomic, min_rnr_timer), RTS the requester's side
 *  (timeout, retry_cnt, rnr_retry, sq_psn, max_rd_atomic). iWARP QPs reach
 *  RTR and RTS only through the connection manager. */
#define RNIC_QP_RTR_MASK (IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | \
			  IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER)
/** See RNIC_QP_RTR_MASK. */
#define RNIC_QP_RTS_MASK (IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | \
			  IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC)

/**
 * Private data limits of the IB CM, which connects RoCE QPs: its messages
 * have fixed rooms (IBTA tables 106-113), and a REQ carries librdmacm's
 * 36-byte CMA header (addresses and port) in front of the user's bytes.
 * Received private data fills the whole room, zero-padded (the IB CM has no
 * length field): CONNECT_REQUEST reports 56 bytes, ESTABLISHED (active)
 * 196, REJECTED 148. Longer private data is refused with -EINVAL.
 */
#define RNIC_CM_ROCE_REQ_PDATA_MAX 56   /**< rnic_cm_connect(): 92 less the CMA header */
#define RNIC_CM_ROCE_REP_PDATA_MAX 196  /**< rnic_cm_accept() */
#define RNIC_CM_ROCE_REJ_PDATA_MAX 148  /**< rnic_cm_reject() */

/**
 * Set the IB CM's timers for connections made from now on on @p ctx's
 * stack: the response timeout (4.096 us x 2^@p resp_timeout_exp, default
 * 18: 1.07 s), which the REQ also asks the peer to wait for us, and how
 * often an unanswered REQ, REP or DREQ is sent again (@p retries, default
 * 8; a vanished peer is DISCONNECTED with -ETIMEDOUT after retries + 1
 * tries). 0 keeps a value. Any application thread.
 */
void rnic_cm_roce_timeouts(struct ibv_context *ctx, uint8_t resp_timeout_exp, uint8_t retries);

/**
 * Read a RoCE counter of @p st, summed over its workers, by its /rnic/roce
 * telemetry name (e.g. "retransmits", "rx_bad_icrc"; docs/roce.md lists
 * them). Any thread, lock-free.
 * @return 0 and *@p value, or -ENOENT for an unknown name.
 */
int rnic_roce_counter(const struct rnic_stack *st, const char *name, uint64_t *value);

/** Congestion-control state of a RoCE RC QP (rnic_roce_qp_cc()). */
struct rnic_roce_cc_info {
	bool ecn;                 /**< its packets leave ECT(0) ([roce] ecn) */
	bool dcqcn;               /**< its transmit is paced by DCQCN ([roce] dcqcn) */
	uint64_t rate_kbps;       /**< current rate Rc (the line rate when DCQCN is off) */
	uint64_t target_kbps;     /**< target rate Rt */
	uint32_t alpha;           /**< DCQCN alpha in units of 2^-24 */
	uint64_t cuts;            /**< CNPs that cut its rate */
	uint64_t increases;       /**< timer and byte-counter events that raised it */
};

/**
 * Read the DCQCN state of RoCE RC QP @p qp (in RTR or RTS), its timers
 * brought up to now, on the QP's worker (debugging, tests). Any
 * application thread.
 * @return 0, -EINVAL (NULL arguments, or not a RoCE RC QP), -ENOTCONN (not
 *   in RTR or RTS).
 */
int rnic_roce_qp_cc(struct ibv_qp *qp, struct rnic_roce_cc_info *info);

#ifdef __cplusplus
}
#endif
#endif
