/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * iWARP endpoints over rnic's TCP (internal: iw_verbs.c puts them behind
 * the transport interface of rdma/qp.h, and tests use them; applications
 * connect QPs through rnic_cm.h; memory is registered through the RDMA
 * core, rnic_mr_register()): MPA startup
 * (RFC 5044/6581), DDP placement (RFC 5041) and RDMAP Send, Write, Read and
 * Terminate (RFC 5040), with RDMA Read served as tagged writes into the
 * requester's sink (seed 001).
 *
 * Endpoints (connection + queue pair) report completions as struct ibv_wc
 * through a callback. Every function runs on the endpoint's worker (from a
 * callback, or through rnic_worker_call_sync()); callbacks run there too.
 * Functions return 0 or -errno; constructors NULL and errno.
 */
#ifndef RNIC_IWARP_IWARP_H
#define RNIC_IWARP_IWARP_H

#include <stdbool.h>
#include <stdint.h>

#include <infiniband/verbs.h>

#include "rnic/rnic.h"
#include "rnic/rnic_tcp.h"

struct rnic_iw_ep;

/** Endpoint callbacks (run on the endpoint's worker). */
struct rnic_iw_ops {
	/** Passive side: an MPA request arrived. Return the endpoint's context
	 *  to accept, NULL to reject. */
	void *(*request)(struct rnic_iw_ep *ep, void *listen_ctx,
			 const void *pdata, uint16_t pd_len);
	/** RDMA mode reached (RTS); post work from here on. */
	void (*established)(struct rnic_iw_ep *ep, void *ctx);
	/** One completion. */
	void (*completion)(struct rnic_iw_ep *ep, void *ctx, const struct ibv_wc *wc);
	/** The connection is gone (0: graceful; -ECONNRESET; -ECONNREFUSED
	 *  after an MPA reject; -EPROTO after a Terminate). Outstanding work
	 *  was completed with IBV_WC_WR_FLUSH_ERR before. Last callback. */
	void (*disconnected)(struct rnic_iw_ep *ep, void *ctx, int err);
};

/** Default MPA startup timeout (siw waits 10 s for a reply, 5 s for a
 *  request). */
#define RNIC_IW_MPA_TIMEOUT_MS 10000

/** RTR message types of peer-to-peer mode (RFC 6581 section 9), a bit set. */
#define RNIC_IW_RTR_SEND  0x1   /**< zero-length Send */
#define RNIC_IW_RTR_WRITE 0x2   /**< zero-length RDMA Write */
#define RNIC_IW_RTR_READ  0x4   /**< zero-length RDMA Read */
#define RNIC_IW_RTR_ALL   0x7

/** Endpoint options. */
struct rnic_iw_params {
	bool crc;            /**< ask for CRC32c (default on) */
	uint16_t ird, ord;   /**< inbound/outbound RDMA Read depth (default 16) */
	bool p2p;            /**< initiator: ask for peer-to-peer mode with an
				  RTR (default off; a responder follows the
				  initiator's request) */
	uint8_t rtr_types;   /**< RNIC_IW_RTR_* this end can use in p2p mode
				  (initiator: offered; responder: accepted);
				  0 = all (default) */
	uint32_t rts_delay_us; /**< active side: wait after the MPA reply before
				    the first FPDU (default 50000, siw 6.1) */
	uint32_t mpa_timeout_ms; /**< MPA startup limit: initiator from the
				      request sent to the reply; responder from
				      the TCP accept to the whole request and,
				      in p2p mode, from the reply to the RTR.
				      0 = the stack's (rnic_iw_set_mpa_timeout) */
	uint32_t backlog;    /**< listener: passive connections past the TCP
				  handshake whose MPA request is awaited or
				  not yet accepted/rejected, at most; more
				  are reset (0 = RNIC_CM_BACKLOG_DEFAULT) */
};
void rnic_iw_params_default(struct rnic_iw_params *p);

/**
 * Stack default of rnic_iw_params.mpa_timeout_ms (listeners of the CM use
 * it). @p ms 0 restores RNIC_IW_MPA_TIMEOUT_MS. Any thread; endpoints read
 * it when their timer starts.
 */
void rnic_iw_set_mpa_timeout(struct rnic_stack *st, uint32_t ms);

/** Stack-wide iWARP connection-setup counters. */
struct rnic_iw_stats {
	uint64_t mpa_timeouts_active;  /**< no MPA reply in time: aborted */
	uint64_t mpa_timeouts_passive; /**< no (whole) MPA request, or no RTR,
					    in time: aborted, never reported */
	uint64_t mpa_backlog_full;     /**< TCP connections reset at accept:
					    the listener held its backlog of
					    undecided ones (MPA request awaited
					    or not yet accepted) */
	uint64_t mpa_embryonic_evicted;/**< connections whose MPA request had
					    not fully arrived, reset to make
					    room for a new one in a full
					    backlog (oldest of the worker) */
	uint64_t mpa_req_refused;      /**< MPA requests refused, all causes
					    (the three below) */
	uint64_t mpa_req_bad;          /**< malformed: key, revision or
					    PD_Length: reset */
	uint64_t mpa_req_unacceptable; /**< well-formed, refused by the
					    negotiation (RFC 6581 header, CRC,
					    markers, RTR): reject reply */
	uint64_t mpa_req_rejected;     /**< refused by the application: reject
					    reply */
	uint64_t rtr_sent;             /**< p2p: RTR messages sent */
	uint64_t rtr_received;         /**< p2p: RTR messages consumed */
	uint64_t alloc_failures;       /**< lazy allocations (MPA startup state,
					    job ring, ORD table) that found no
					    memory: the connect, accept or work
					    request failed instead */
	uint64_t startup_live;         /**< endpoints holding MPA startup state
					    (not yet in RDMA mode) */
	uint64_t zc_fpdus_out;         /**< data FPDUs whose payload was lent
					    to TCP, not copied (zero copy) */
	/* refused peer input (issue 27; docs/iwarp.md) */
	uint64_t rresp_refused;        /**< Read Responses that did not continue
					    the oldest outstanding Read (STag,
					    TO, length) or came with none:
					    Terminate, the Read failed */
	uint64_t inv_refused;          /**< Sends with Invalidate naming an MR,
					    a type 1 window, another PD's or
					    QP's STag, or none: Terminate */
	uint64_t terms_in;             /**< Terminates the peers sent us */
	uint64_t terms_out;            /**< Terminates we sent, all causes
					    (rnic_iw_terms_out: by cause) */
};

/**
 * Whether large data FPDUs without markers go zero-copy: the payload is
 * attached to the mbufs from registered memory and the work request
 * completes once the last of them is freed (docs/iwarp.md). Read once from
 * RNIC_IW_ZERO_COPY_TX: on when it is "1". Large FPDUs still copy where
 * IOVA is PA or a port is a PCI device.
 */
bool rnic_iw_zero_copy_tx(void);

/**
 * Jobs of the whole process whose memory is lent to mbufs now, or whose
 * zero-copy state waits for the last such mbuf (tests: 0 once everything
 * is freed).
 */
uint64_t rnic_iw_zc_live(void);

/** Read the counters of @p st (lock-free, any thread). */
void rnic_iw_stats(const struct rnic_stack *st, struct rnic_iw_stats *s);

/** Terminates @p st sent for @p cause (enum rnic_term_cause,
 *  iwarp/terminate.h), counted as they are queued. Any thread. */
uint64_t rnic_iw_terms_out(const struct rnic_stack *st, unsigned cause);

/** Tests: make the next @p n lazy allocations of @p st's endpoints fail
 *  as if memory were out (counted in alloc_failures). Any thread. */
void rnic_iw_fail_allocs(struct rnic_stack *st, uint32_t n);
/** Tests: the same, after @p skip more allocations have succeeded (an
 *  endpoint is made of three: itself, its startup state, its counters). */
void rnic_iw_fail_allocs_after(struct rnic_stack *st, uint32_t skip, uint32_t n);

/** Listen for MPA requests on TCP @p port. Any thread. */
int rnic_iw_listen(struct rnic_stack *st, uint16_t port,
		   const struct rnic_iw_ops *ops, void *ctx,
		   const struct rnic_iw_params *p);

/** Stop listening on @p port and free the listener. Call while the stack
 *  is stopped, or from a worker. @return 0 or -ENOENT. */
int rnic_iw_unlisten(struct rnic_stack *st, uint16_t port);

/** Connect from worker @p w (run on it). @return 0 or -errno. */
int rnic_iw_connect(struct rnic_worker *w, uint32_t dst_ip, uint16_t port,
		    const struct rnic_iw_ops *ops, void *ctx,
		    const struct rnic_iw_params *p, const void *pdata,
		    uint16_t pd_len, struct rnic_iw_ep **out);

/** rnic_iw_connect() to an address of either family (IPv4 or IPv6). */
int rnic_iw_connect_addr(struct rnic_worker *w, const struct rnic_addr *dst, uint16_t port,
			 const struct rnic_iw_ops *ops, void *ctx,
			 const struct rnic_iw_params *p, const void *pdata,
			 uint16_t pd_len, struct rnic_iw_ep **out);

/** Post a receive buffer (must lie in a registered MR, or any memory: the
 *  receive path places by address). @return 0, -ENOMEM (queue full). */
int rnic_iw_post_recv(struct rnic_iw_ep *ep, uint64_t wr_id, void *buf,
		      uint32_t len);

/**
 * Post one work request: IBV_WR_SEND, IBV_WR_RDMA_WRITE or IBV_WR_RDMA_READ
 * with one SGE (addr, length, lkey = a local STag) and, for RDMA, the remote
 * address and rkey. @return 0, -EINVAL (bad opcode/SGE), -ENOTCONN, -ENOMEM.
 */
int rnic_iw_post_send(struct rnic_iw_ep *ep, const struct ibv_send_wr *wr);

/**
 * Seed 002, streaming to RDMA mode: take over an established rnic TCP
 * connection that an application used as a byte stream. Run on the
 * connection's worker (typically from its recv() callback, right after
 * the application's last streaming message). From this call on, received
 * bytes are held in order and fed to the MPA parser; nothing is lost or
 * reordered whatever the timing of the peer's MPA frames.
 *
 * @p active: this end sends the MPA request (with @p pdata); else it waits
 * for the peer's, and @p ops->request() decides as for a listener (@p ctx
 * is then passed to it as the listener context). @p early: stream bytes
 * the application already received that follow its last message (the
 * start of the peer's MPA request; passive side only).
 * @return 0 (callbacks follow as for rnic_iw_connect/rnic_iw_listen) or
 * -EINVAL.
 */
int rnic_iw_attach_stream(struct rnic_tcp_conn *c, bool active,
			  const struct rnic_iw_ops *ops, void *ctx,
			  const struct rnic_iw_params *p, const void *pdata,
			  uint16_t pd_len, const void *early, size_t early_len,
			  struct rnic_iw_ep **out);

/** Graceful close: flush, then FIN. */
int rnic_iw_disconnect(struct rnic_iw_ep *ep);

/** The worker that owns @p ep. */
struct rnic_worker *rnic_iw_worker(const struct rnic_iw_ep *ep);

#endif
