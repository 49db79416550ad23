/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * MPA connection setup (RFC 5044 section 7, RFC 6581): request, reply and
 * reject frames, revisions 1 and 2, up to 512 bytes of private data, the
 * RFC 6581 IRD/ORD header and peer-to-peer RTR negotiation.
 *
 * Message sequence (initiator I, responder R, over an established TCP
 * stream):
 *   I: rnic_mpa_build_request() -> send
 *   R: rnic_mpa_rx_input() until 0 -> rnic_mpa_accept()
 *      -> rnic_mpa_build_reply(accept or reject) -> send; R enters RDMA
 *      mode and, in peer-to-peer mode, waits for the RTR FPDU first
 *   I: rnic_mpa_rx_input() until 0 -> rnic_mpa_connected(); I enters RDMA
 *      mode and sends the RTR FPDU if negotiated
 * rnic_mpa_rx_input() reports how many bytes the frame took: bytes behind
 * the frame in the same segment belong to the FPDU parser, untouched.
 * Timeouts are the caller's.
 */
#ifndef RNIC_IWARP_MPA_H
#define RNIC_IWARP_MPA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "iwarp/iwarp_wire.h"
#include "iwarp/terminate.h"

/* RTR message types (RFC 6581 section 9), as a bit set. */
#define RNIC_MPA_RTR_NONE  0x0
#define RNIC_MPA_RTR_SEND  0x1  /* zero-length Send */
#define RNIC_MPA_RTR_WRITE 0x2  /* zero-length RDMA Write */
#define RNIC_MPA_RTR_READ  0x4  /* zero-length RDMA Read */
#define RNIC_MPA_RTR_ALL   0x7

/* Local policy and offer of one end. */
struct rnic_mpa_params {
	uint8_t rev;            /* 1, or 2 for the RFC 6581 IRD/ORD header */
	bool crc;               /* ask for CRC32c (rnic default: on) */
	bool markers_rx;        /* ask the peer to send markers (default off) */
	bool markers_tx_ok;     /* agree to send markers when the peer asks */
	uint16_t ird;           /* inbound RDMA Read queue depth offered */
	uint16_t ord;           /* outbound RDMA Read depth wanted */
	bool p2p;               /* initiator: ask for peer-to-peer (RTR) mode */
	uint8_t rtr_types;      /* RNIC_MPA_RTR_* this end can use */
	const void *pdata;      /* ULP private data */
	uint16_t pd_len;
};

/* Outcome of the negotiation for one end. */
struct rnic_mpa_result {    /* 24 B: kept by every iWARP endpoint */
	const uint8_t *pdata;   /* the peer's ULP private data (in the rx) */
	uint16_t pd_len;
	uint16_t ird;
	uint16_t ord;
	uint8_t rev;
	bool enhanced;          /* the RFC 6581 header was exchanged */
	bool crc;
	bool markers_tx;        /* the peer asked for markers: insert them */
	bool markers_rx;        /* we asked: expect and remove them */
	bool p2p;
	uint8_t rtr;            /* the one RTR type in use, or NONE */
	uint8_t err;            /* enum rnic_term_cause after -EPROTO */
};

/* Resumable receiver of one request or reply frame. */
struct rnic_mpa_rx {
	bool want_reply;        /* expect "MPA ID Rep Frame" */
	bool done;
	bool failed;            /* a bad frame was seen; see err */
	uint16_t got;           /* frame bytes collected */
	uint16_t pd_len;
	uint8_t err;            /* enum rnic_term_cause after -EPROTO */
	union {
		struct rnic_mpa_rr_hdr hdr;
		uint8_t raw[sizeof(struct rnic_mpa_rr_hdr)];
	};
	uint8_t pd[RNIC_MPA_PD_MAX];
};

/* rnic's defaults: rev 2, CRC on, markers off but accepted, all RTRs. */
void rnic_mpa_params_default(struct rnic_mpa_params *p);

/** Build a request. @return bytes, -EINVAL (rev), -EMSGSIZE (private
 * data over 512 with the header), -ENOSPC (@p cap). */
int rnic_mpa_build_request(const struct rnic_mpa_params *p, uint8_t *out,
			   size_t cap);

/** Build a reply from the responder's result, or a reject frame (R set)
 * when @p reject. Same returns as rnic_mpa_build_request(). */
int rnic_mpa_build_reply(const struct rnic_mpa_result *res, bool reject,
			 const void *pdata, uint16_t pd_len, uint8_t *out,
			 size_t cap);

void rnic_mpa_rx_init(struct rnic_mpa_rx *rx, bool want_reply);

/**
 * Feed stream bytes. Stops right after the frame. @return 0 when the
 * frame is complete, -EAGAIN when more bytes are needed, -EPROTO on a bad
 * key, revision or PD_Length (rx->err = RNIC_TERM_MPA_INVALID_RR). In all
 * cases *@p consumed is the number of bytes taken from @p buf.
 */
int rnic_mpa_rx_input(struct rnic_mpa_rx *rx, const void *buf, size_t len,
		      size_t *consumed);

/**
 * Responder: negotiate against a received request. @return 0 (send an
 * accepting reply), -ECONNREFUSED (send a reject: the peer asked for what
 * local policy refuses), -EPROTO (res->err says why; reject too).
 */
int rnic_mpa_accept(const struct rnic_mpa_params *local,
		    const struct rnic_mpa_rx *req, struct rnic_mpa_result *res);

/**
 * Initiator: check a received reply against what was requested. @return
 * 0, -ECONNREFUSED (R set: res holds the peer's private data), -EPROTO
 * (res->err: invalid reply, insufficient IRD, no matching RTR; send a
 * Terminate with that cause).
 */
int rnic_mpa_connected(const struct rnic_mpa_params *local,
		       const struct rnic_mpa_rx *rep,
		       struct rnic_mpa_result *res);

#endif
