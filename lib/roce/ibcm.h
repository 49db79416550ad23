/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The IB connection manager for RoCE QPs (roce_cm.c): the IB CM protocol
 * (IBTA vol. 1 chapter 12) as MADs on QP1 over UDP 4791, behind the
 * transport-agnostic rnic_cm API (roce_qp.c puts these in RoCE's
 * struct rnic_cm_tops; the callbacks are the CM's struct rnic_cm_upcalls).
 *
 * All protocol state lives on worker 0 of the stack: QP1 MADs are steered
 * there, its timers retransmit REQ, REP and DREQ. The calls below may be
 * made from any application thread (they run on worker 0 and wait), not
 * from a worker. The callbacks run on worker 0.
 */
#ifndef RNIC_ROCE_IBCM_H
#define RNIC_ROCE_IBCM_H

#include <stdbool.h>
#include <stdint.h>

#include "rdma/qp.h"
#include "rnic/rnic_cm.h"

struct rnic_stack;
struct rnic_qp;
struct rnic_worker;
struct rnic_port;
struct rte_mbuf;
struct roce_l3;
struct rnic_roce_pkt;
struct rnic_ibcm_conn;

/* Callbacks: struct rnic_cm_upcalls (rdma/qp.h). request() gets the
 * user's private data (the CMA header stripped); a connection is never
 * "gone" in an event: it lives until rnic_ibcm_detach(). */
#define rnic_ibcm_ops rnic_cm_upcalls

/* Connection parameters (connect, accept). */
struct rnic_ibcm_params {
	const void *pdata;
	uint16_t pdata_len;
	uint8_t ird, ord;           /* responder resources, initiator depth */
};

/** Take REQs for service ID 0x01060000 | @p port, at most @p backlog (> 0)
 *  of them delivered and not yet accepted or rejected; REQs beyond get a
 *  REJ (no resources). @return 0, -EINVAL, -EADDRINUSE, -ENOSPC. */
int rnic_ibcm_listen(struct rnic_stack *st, uint16_t port, int backlog,
		     const struct rnic_ibcm_ops *ops, void *lctx);
void rnic_ibcm_unlisten(struct rnic_stack *st, uint16_t port);

/**
 * Send a REQ for @p qp (RoCE RC, RESET or INIT) to @p ip (IPv4 or IPv6)
 * :@p port. The outcome comes as an event. @return 0, -EINVAL, -ENOMEM,
 * -EADDRNOTAVAIL (no IPv6 source on the QP's port for @p ip).
 */
int rnic_ibcm_connect(struct rnic_stack *st, struct rnic_qp *qp, const struct rnic_addr *ip,
		      uint16_t port,
		      const struct rnic_ibcm_params *p, const struct rnic_ibcm_ops *ops,
		      void *ctx, struct rnic_ibcm_conn **out);
/** Accept a REQ with @p qp: the QP goes to RTR, a REP goes out; RTU
 *  brings RTS and ESTABLISHED. @return 0, -EINVAL, -ENOTCONN. */
int rnic_ibcm_accept(struct rnic_ibcm_conn *c, struct rnic_qp *qp,
		     const struct rnic_ibcm_params *p);
/** Reject a REQ (REJ, reason Consumer Reject, with @p pdata). */
int rnic_ibcm_reject(struct rnic_ibcm_conn *c, const void *pdata, uint16_t len);
/** DREQ: the QP to ERR (flushed), DISCONNECTED on DREP or after the
 *  bounded retries. @return 0 or -ENOTCONN. */
int rnic_ibcm_disconnect(struct rnic_ibcm_conn *c);
/** The context goes away: no more callbacks; a live connection is closed
 *  (REJ or DREQ) and the QP forgotten. */
void rnic_ibcm_detach(struct rnic_ibcm_conn *c);
/** Negotiated (or, before, asked) IRD/ORD and the peer's address. */
void rnic_ibcm_conn_info(const struct rnic_ibcm_conn *c, uint16_t *ird, uint16_t *ord,
			 struct rnic_addr *ip, uint16_t *port);

/** Connections the CM holds now, in any state (tests, diagnostics). */
unsigned rnic_ibcm_conn_count(struct rnic_stack *st);

/* Response timeout (exponent of 4.096 us) and retries of REQ, REP and
 * DREQ for connections made from now on; 0 keeps a value. Tests shorten
 * them. */
void rnic_ibcm_set_timeouts(struct rnic_stack *st, uint8_t resp_exp, uint8_t retries);

/* roce_qp.c -> roce_cm.c: a UD packet for QP1 (ICRC checked), on worker 0. */
void roce_cm_input(struct rnic_worker *w, struct rnic_port *p, const struct rnic_roce_pkt *pkt,
		   const struct rte_mbuf *m, uint32_t pay_off, const struct roce_l3 *l3);
/* Stack life cycle (roce_qp.c's protocol hooks). */
int roce_cm_stack_init(struct rnic_stack *st);
void roce_cm_stack_fini(struct rnic_stack *st);

#endif
