/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * One ibv_rc_pingpong session over rnic's RoCEv2 (session.c), shared by
 * rnic-pingpong and rdma-gateway's [responder.pingpong].
 */
#ifndef RNIC_PINGPONG_SESSION_H
#define RNIC_PINGPONG_SESSION_H

#include <stdbool.h>
#include <stdint.h>

#include <infiniband/verbs.h>

#include "rnic/rnic.h"
#include "exch.h"

#define PP_EXIT_FAIL 1
#define PP_DEFAULT_PORT 18515   /* rc_pingpong's -p */

/** A session's parameters: rc_pingpong's options. */
struct pp_opts {
	uint16_t tcp_port;      /**< -p: the exchange's TCP port */
	const char *dev;        /**< -d: must name this device when given */
	unsigned ib_port;       /**< -i: 1-based rnic port */
	unsigned size;          /**< -s: bytes per message */
	enum ibv_mtu mtu;       /**< -m: path MTU */
	unsigned rx_depth;      /**< -r: receives kept posted */
	unsigned iters;         /**< -n: exchanges */
	unsigned sl;            /**< -l: service level */
	bool events;            /**< -e: sleep on CQ events instead of polling */
	int gidx;               /**< -g: GID index, -1 = send a zero GID */
	bool exchange_only;     /**< --exchange-only: no QP, stop after the exchange */
	struct rnic_addr server; /**< client: the server (IPv4 or IPv6); family 0: we serve */
	bool quiet;             /**< print neither addresses nor results (a responder) */
};

/** One session's verbs objects and counters (rc_pingpong's pingpong_context). */
struct pp_ctx {
	const struct pp_opts *o;
	struct rnic_stack *st;
	struct ibv_context *ctx;
	struct ibv_comp_channel *channel;   /**< -e only */
	struct ibv_pd *pd;
	struct ibv_mr *mr;                  /**< covers buf, local write */
	struct ibv_cq *cq;                  /**< send and receive completions */
	struct ibv_qp *qp;
	void *buf;                          /**< sent from and received into */
	int send_flags;                     /**< SIGNALED, INLINE when it fits */
	uint32_t my_psn;                    /**< our first PSN, as advertised */
	int pending;                        /**< PP_*_WRID not completed yet */
	unsigned routs;                     /**< receives posted, not completed */
	unsigned scnt, rcnt;                /**< sends and receives completed */
	unsigned events;                    /**< CQ events taken (-e) */
	double usec;                        /**< the ping-pong's duration, when done */
};

/** rc_pingpong's defaults, server role. */
void pp_opts_default(struct pp_opts *o);

/**
 * One session on a started stack (@p pp zeroed but for o and st): verbs
 * objects, the exchange (a server waits for its client until
 * rnic_request_stop()), ITERS exchanges. pp_ctx_close() frees what it made,
 * whatever happened. @return 0 or PP_EXIT_FAIL (the reason printed).
 */
int pp_session(struct pp_ctx *pp);

/** Free what pp_session() made, in reverse. */
void pp_ctx_close(struct pp_ctx *pp);

#endif
