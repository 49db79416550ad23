/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * rnic connection manager: an rdma_cm-shaped API for connecting QPs.
 *
 * A CM id is one end of a connection, or a listener. Events arrive on a
 * channel (fd-pollable: rnic_cm_channel_fd() is an eventfd, readable when
 * an event waits) and are taken with rnic_cm_get_event(), which copies them
 * out: there is nothing to acknowledge.
 *
 *   active:  create_id -> connect(qp) -> ESTABLISHED | REJECTED |
 *            UNREACHABLE | CONNECT_ERROR
 *   passive: create_id -> listen -> CONNECT_REQUEST (a new id) ->
 *            accept(qp) -> ESTABLISHED, or reject()
 *   both:    disconnect() or the peer's close -> DISCONNECTED
 *
 * Close semantics (docs/verbs.md):
 * - graceful: rnic_cm_disconnect() moves the QP to CLOSING (IBV_QPS_SQD is
 *   not used: ibv state ERR once flushed): work requests not yet
 *   transmitted and posted receives complete with IBV_WC_WR_FLUSH_ERR, then
 *   TCP sends its FIN. DISCONNECTED follows on both ends.
 * - abortive: an RST, a Terminate received or sent, or a fatal error moves
 *   the QP to IBV_QPS_ERR at once, flushing everything; DISCONNECTED
 *   carries status -ECONNRESET or -EPROTO.
 *
 * RoCE QPs (rnic_create_qp_transport(..., RNIC_TRANSPORT_ROCE)) are
 * connected by the IB CM over QP1 MADs, as librdmacm does on Linux rxe
 * (docs/roce.md): the same calls and events; disconnect sends a DREQ with
 * the QP in ERR (flushed), and DISCONNECTED follows the DREP. The IB CM's
 * private-data limits and timers are in rnic_roce.h.
 *
 * All calls may be made from any application thread; none may be made from
 * a worker's callbacks (they wait for the worker), except
 * rnic_cm_attach_stream() as documented there.
 *
 * Errors follow rnic.h: functions returning int return 0 on success and a
 * negative errno on failure; those returning a pointer return NULL and set
 * errno. Failures of a connection itself arrive as events whose status is a
 * negative errno.
 */
#ifndef RNIC_CM_H
#define RNIC_CM_H

#include <stdbool.h>
#include <stdint.h>

#include <infiniband/verbs.h>

#include "rnic/rnic_verbs.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Private data bytes (iWARP): MPA's 512 less the 8 of the RFC 6581
 *  header that carries IRD/ORD in front of them. The largest any
 *  transport takes; RoCE's smaller limits are RNIC_CM_ROCE_*_PDATA_MAX
 *  (rnic_roce.h). */
#define RNIC_CM_PDATA_MAX 504

/** What a CM event reports. */
enum rnic_cm_event_type {
	RNIC_CM_EVENT_CONNECT_REQUEST,  /**< on a listener: ev.id is new */
	RNIC_CM_EVENT_ESTABLISHED,      /**< the QP is in RTS */
	RNIC_CM_EVENT_REJECTED,         /**< the peer rejected (MPA reject, or
					     an IB CM REJ: status -ECONNREFUSED
					     for a consumer reject, -EPROTO
					     for others, see rej_reason) */
	RNIC_CM_EVENT_UNREACHABLE,      /**< no TCP connection (RST, timeout), or
					     no MPA reply within the MPA timeout
					     (status -ETIMEDOUT, as rdma_cm
					     reports an iWARP MPA timeout) */
	RNIC_CM_EVENT_CONNECT_ERROR,    /**< MPA negotiation failed (-EPROTO) */
	RNIC_CM_EVENT_DISCONNECTED,     /**< the connection is gone */
};

/** Name of an event type ("CONNECT_REQUEST", ...), or "unknown". */
const char *rnic_cm_event_str(enum rnic_cm_event_type t);

struct rnic_cm_channel;
struct rnic_cm_id;

/** Connection parameters (connect and accept). */
struct rnic_cm_conn_param {
	const void *private_data;       /**< bytes for the peer, or NULL */
	uint16_t private_data_len;      /**< up to RNIC_CM_PDATA_MAX */
	uint8_t responder_resources;    /**< IRD: reads we serve at once */
	uint8_t initiator_depth;        /**< ORD: reads we issue at once */
	bool no_crc;                    /**< iWARP: ask for no MPA CRC (default:
					     CRC) */
	bool p2p;                       /**< connect: ask for MPA v2 peer-to-peer
					     mode (RFC 6581): an RTR message goes
					     first (default off, as siw) */
	uint8_t rtr_types;              /**< connect with p2p: the RNIC_CM_RTR_*
					     types offered, 0 = all. A listener
					     accepts any type (its reply picks
					     Write, then Read, then Send) */
	uint32_t mpa_timeout_ms;        /**< iWARP connect: MPA reply limit,
					     0 = the default (10 s). Listeners
					     wait for a request, and for the RTR
					     after an accept, as long as the
					     default */
	uint32_t rts_delay_us;          /**< iWARP connect: pause between the
					     MPA reply and RTS (the first
					     FPDU), 0 = the default, 50 ms:
					     siw as the responder reads from
					     its socket only after its reply
					     has gone out, and an FPDU that
					     comes first can wait there
					     unread. RNIC_CM_RTS_NO_DELAY:
					     none; safe when the responder
					     is rnic (ready before its reply
					     leaves) or hardware */
};

/** rnic_cm_conn_param.rts_delay_us: RTS as soon as the MPA reply is in. */
#define RNIC_CM_RTS_NO_DELAY UINT32_MAX

/** RTR message types for rnic_cm_conn_param.rtr_types. */
#define RNIC_CM_RTR_SEND  0x1   /**< zero-length Send */
#define RNIC_CM_RTR_WRITE 0x2   /**< zero-length RDMA Write */
#define RNIC_CM_RTR_READ  0x4   /**< zero-length RDMA Read */

/** One event, copied out by rnic_cm_get_event(). */
struct rnic_cm_event {
	enum rnic_cm_event_type type;   /**< what happened */
	struct rnic_cm_id *id;          /**< the id the event is about */
	struct rnic_cm_id *listen_id;   /**< CONNECT_REQUEST: the listener */
	int status;                     /**< 0, or -errno for failures */
	enum rnic_transport transport;  /**< RNIC_TRANSPORT_IWARP (MPA over TCP)
					     or RNIC_TRANSPORT_ROCE (IB CM over
					     QP1): on CONNECT_REQUEST, accept
					     with a QP of this transport */
	uint16_t rej_reason;            /**< RoCE REJECTED/UNREACHABLE from a
					     REJ: its IBTA reason (28 consumer
					     reject, 8 no listener), else 0 */
	uint32_t peer_ip;               /**< the peer's IPv4 address, host byte
					     order (0 for an IPv6 peer: see peer) */
	uint16_t peer_port;             /**< the peer's port (iWARP: its TCP port) */
	uint8_t ird, ord;               /**< negotiated (ESTABLISHED) or asked */
	uint16_t private_data_len;      /**< CONNECT_REQUEST: the connect's;
					     ESTABLISHED (active): the accept's;
					     REJECTED: the reject's */
	uint8_t private_data[512];      /**< the private data received */
	struct rnic_addr peer;          /**< the peer's address, IPv4 or IPv6 */
};

/** An event channel of device @p ctx.
 *  @return the channel, or NULL with errno ENOMEM (or eventfd()'s). */
struct rnic_cm_channel *rnic_cm_create_channel(struct ibv_context *ctx);
/** Free a channel; pending events are dropped. @return 0, or -EBUSY while
 *  ids use it. */
int rnic_cm_destroy_channel(struct rnic_cm_channel *ch);
/** The channel's eventfd (non-blocking), readable while an event may
 *  wait. @return the file descriptor. */
int rnic_cm_channel_fd(const struct rnic_cm_channel *ch);

/**
 * Take the next event. @p timeout_ms: 0 polls, -1 waits for ever.
 * @return 0 and *@p ev, -EAGAIN (nothing within the timeout), or the
 *   -errno of waiting on the channel's fd.
 */
int rnic_cm_get_event(struct rnic_cm_channel *ch, struct rnic_cm_event *ev,
		      int timeout_ms);

/** A new id on channel @p ch with the application's @p context.
 *  @return 0 and *@p id, -EINVAL (NULL arguments) or -ENOMEM. */
int rnic_cm_create_id(struct rnic_cm_channel *ch, void *context,
		      struct rnic_cm_id **id);
/** Disconnect (abortively if connected), detach the QP, drop the id's
 *  queued events and free it. @return 0, or -EINVAL (NULL). */
int rnic_cm_destroy_id(struct rnic_cm_id *id);
/** The context given to rnic_cm_create_id() (or set later). */
void *rnic_cm_id_context(const struct rnic_cm_id *id);
/** Replace the id's context (an id from CONNECT_REQUEST starts with NULL). */
void rnic_cm_id_set_context(struct rnic_cm_id *id, void *context);
/** Transport of the id's connection: set by connect (the QP's), or
 *  by a request (the listener hears both); RNIC_TRANSPORT_DEFAULT on a
 *  fresh id or a listener. */
enum rnic_transport rnic_cm_id_transport(const struct rnic_cm_id *id);
/** The QP attached by connect/accept, or NULL when none is (an accessor:
 *  not a failure, errno is left alone). */
struct ibv_qp *rnic_cm_id_qp(const struct rnic_cm_id *id);

/** Listen backlog when rnic_cm_listen() is given 0 or less. */
#define RNIC_CM_BACKLOG_DEFAULT 1024
/** The largest listen backlog (as Linux's somaxconn default); more is cut. */
#define RNIC_CM_BACKLOG_MAX     4096

/** Listen on @p port of every address of the stack, for both transports:
 *  iWARP connections to TCP @p port and RoCE REQs for the RDMA IP CM
 *  service ID 0x0000000001060000 | @p port (RDMA_PS_TCP, as librdmacm).
 *  The CONNECT_REQUEST's transport says which came. @p backlog (<= 0:
 *  RNIC_CM_BACKLOG_DEFAULT, at most RNIC_CM_BACKLOG_MAX) bounds, per
 *  transport, the requests the listener holds that the application has
 *  not accepted or rejected (iWARP: from the TCP handshake on, the MPA
 *  request awaited or delivered; RoCE: REQs delivered). Past it a request
 *  is refused (iWARP: TCP reset; RoCE: REJ no resources) and counted.
 *  A RoCE request left undecided for its CM timeout (1 to 4 s) is
 *  rejected: its id gets CONNECT_ERROR -ETIMEDOUT, or is freed unseen
 *  when its CONNECT_REQUEST is still queued.
 *  @return 0, -EINVAL (the id is in use, port 0), -EADDRINUSE (someone
 *  listens there), -ENOSPC or -ENOMEM. */
int rnic_cm_listen(struct rnic_cm_id *id, uint16_t port, int backlog);

/**
 * Connect @p qp (RESET or INIT) to @p ip:@p port (host byte order), with
 * the QP's transport: an MPA request over TCP (iWARP), or an IB CM REQ on
 * QP1 (RoCE: the QP is moved to INIT if in RESET, to RTR and RTS when the
 * REP comes; private data up to RNIC_CM_ROCE_REQ_PDATA_MAX). The result
 * arrives as an event.
 * @return 0, -EINVAL (the id is in use, port 0, private data too long),
 *   -EBUSY (the QP is not free: not in RESET or INIT, or held by another
 *   id), -EHOSTUNREACH (no route), -ENOMEM.
 */
int rnic_cm_connect(struct rnic_cm_id *id, struct ibv_qp *qp, uint32_t ip,
		    uint16_t port, const struct rnic_cm_conn_param *param);

/**
 * rnic_cm_connect() to an address of either family. IPv6 (@p dst
 * RNIC_AF_INET6) is for iWARP QPs: a RoCE QP gets -EAFNOSUPPORT (RoCEv2
 * over IPv6 is not implemented).
 */
int rnic_cm_connect_addr(struct rnic_cm_id *id, struct ibv_qp *qp,
			 const struct rnic_addr *dst, uint16_t port,
			 const struct rnic_cm_conn_param *param);

/** Accept a CONNECT_REQUEST id with @p qp (of the event's transport):
 *  iWARP: the MPA reply goes out, the QP reaches RTS and ESTABLISHED
 *  follows. RoCE: the QP goes to RTR with the REQ's QPN, PSN and path MTU
 *  (the smaller of both), the REP goes out, and the RTU brings RTS and
 *  ESTABLISHED. IRD/ORD are bounded by the request's ORD/IRD.
 *  @return 0, -EINVAL (not a CONNECT_REQUEST id, private data too long),
 *  -EBUSY (the QP is not free), -ENOTCONN (the request is gone). */
int rnic_cm_accept(struct rnic_cm_id *id, struct ibv_qp *qp,
		   const struct rnic_cm_conn_param *param);

/** Reject a CONNECT_REQUEST id with an MPA reject or an IB CM REJ
 *  (reason 28, consumer reject) carrying @p pdata.
 *  @return 0, -EINVAL (not a CONNECT_REQUEST id, private data too long),
 *  -ENOTCONN (the request is gone). */
int rnic_cm_reject(struct rnic_cm_id *id, const void *pdata, uint16_t len);

struct rnic_tcp_conn;

/**
 * Switch an established rnic TCP connection (rnic_tcp.h) that the
 * application used in streaming mode to iWARP RDMA mode, with no race.
 * From this call on, the connection's received bytes are held in order
 * for the MPA parser.
 * - active: @p qp (RESET/INIT) is connected at once: the MPA request (with
 *   @p param's private data) goes out; ESTABLISHED or a failure follows.
 * - passive (@p qp NULL): the peer's MPA request raises CONNECT_REQUEST on
 *   this same id; answer with rnic_cm_accept() or rnic_cm_reject().
 *   @p early: bytes the application already read past its last streaming
 *   message (they start the peer's MPA request).
 * May be called from the connection's worker (its recv() callback), where
 * it runs inline.
 * @return 0, -EINVAL (bad arguments, the id is in use, private data too
 *   long), -EBUSY (the QP is not free), -ENOMEM.
 */
int rnic_cm_attach_stream(struct rnic_cm_id *id, struct rnic_tcp_conn *c, bool active,
			  struct ibv_qp *qp, const struct rnic_cm_conn_param *param,
			  const void *early, size_t early_len);

/** Graceful close (see above). RoCE: the QP goes to ERR (flushed) and a
 *  DREQ goes out; DISCONNECTED follows the DREP, or -ETIMEDOUT after the
 *  bounded DREQ retries when the peer is gone. @return 0, or -ENOTCONN
 *  (not connected, or already closed). */
int rnic_cm_disconnect(struct rnic_cm_id *id);

#ifdef __cplusplus
}
#endif
#endif
