/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * MPA FPDU framing (RFC 5044 sections 4-6): building on transmit and a
 * resumable parser on receive, with CRC32c and Markers when negotiated.
 *
 * Stream positions are 32-bit TCP sequence offsets (any origin, wrapping).
 * Markers sit at every position p with (p - marker_base) % 512 == 0, where
 * marker_base is the position of the first FPDU of that direction (the byte
 * after the MPA request or reply). A marker belongs to the FPDU that covers
 * its position; one due exactly where an FPDU starts precedes that FPDU's
 * ULPDU_Length and has FPDUPTR 0. Every other marker's FPDUPTR is its
 * distance from the ULPDU_Length field (RFC 5044 section 5), so 508, not
 * 512, for the next marker of an FPDU that a marker leads. The CRC covers the whole FPDU as sent,
 * markers included, up to the first CRC byte.
 */
#ifndef RNIC_IWARP_FPDU_H
#define RNIC_IWARP_FPDU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "iwarp/iwarp_wire.h"
#include "iwarp/terminate.h"

/**
 * Largest ULPDU (MULPDU) that fits one TCP segment of @p emss payload bytes
 * (RFC 5044 section 5.1): EMSS - (6 + EMSS % 4), less 4 bytes per possible
 * marker (ceil(EMSS / 512)) when markers are on. 0 when nothing fits.
 */
uint32_t rnic_mpa_mulpdu(uint32_t emss, bool markers);

/** Largest DDP payload per segment behind a @p hdr_len byte DDP/RDMAP
 * header (14 tagged, 18 untagged). 0 when nothing fits. */
uint32_t rnic_ddp_max_payload(uint32_t emss, bool markers, uint32_t hdr_len);

/* ---------------------------------------------------------------- TX -- */

/* Per-connection transmit framing state. Every byte built must be sent, in
 * build order: the marker positions depend on it. */
struct rnic_fpdu_tx {
	bool crc;             /* CRC32c negotiated */
	bool markers;         /* the peer asked for markers (its M flag) */
	uint32_t marker_base; /* stream position of the first FPDU */
	uint32_t pos;         /* stream position of the next FPDU */
};

void rnic_fpdu_tx_init(struct rnic_fpdu_tx *tx, bool crc, bool markers,
		       uint32_t start_pos);

/** Bytes on the wire of an FPDU with @p ulpdu_len, starting at tx->pos. */
size_t rnic_fpdu_tx_len(const struct rnic_fpdu_tx *tx, uint32_t ulpdu_len);

/**
 * Frame one ULPDU (@p hdr_len header bytes then the @p iovcnt payload
 * iovecs) into @p out: ULPDU_Length, ULPDU, pad, markers, CRC. Advances
 * tx->pos. @return bytes written, -EMSGSIZE when the ULPDU exceeds 65535
 * bytes (or the FPDU outgrows a 16-bit FPDUPTR with markers), -ENOSPC when
 * @p cap is too small (nothing is changed then).
 */
int rnic_fpdu_build(struct rnic_fpdu_tx *tx, const void *hdr, size_t hdr_len,
		    const struct iovec *iov, int iovcnt, uint8_t *out,
		    size_t cap);

/* ---------------------------------------------------------------- RX -- */

/* What the parser knows of the FPDU being received. */
struct rnic_fpdu_info {
	const uint8_t *hdr;     /* DDP (+ fixed RDMAP) header, hdr_len bytes */
	uint16_t hdr_len;
	uint16_t ulpdu_len;
	uint32_t payload_len;   /* ulpdu_len - hdr_len */
	uint8_t opcode;         /* RDMAP opcode */
	bool tagged;            /* DDP T flag */
	bool last;              /* DDP L flag */
	uint32_t fpdu_pos;      /* stream position of the FPDU start */
};

/* Return value of the hdr callback: do not deliver the payload (the DDP
 * layer found an error it will report after the CRC check, in done()). */
#define RNIC_FPDU_SKIP 1
/* Return value of the hdr callback: not yet (an STag migration query is
 * under way). The parser stops with the header kept and
 * rnic_fpdu_rx_input() returns -EINPROGRESS; the next call, with or without
 * bytes, runs hdr again for the same FPDU before anything else. */
#define RNIC_FPDU_WAIT 2

/*
 * Upcalls. Each returns 0 to continue; hdr may return RNIC_FPDU_SKIP; a
 * negative value stops the parser and rnic_fpdu_rx_input() returns it.
 * payload() gets pointers into the caller's input chunk (markers removed,
 * possibly split in several calls): place from there, no staging copy.
 * done() runs after the CRC of the FPDU was verified.
 */
struct rnic_fpdu_rx_ops {
	int (*hdr)(void *arg, const struct rnic_fpdu_info *fi);
	int (*payload)(void *arg, const struct rnic_fpdu_info *fi,
		       uint32_t off, const uint8_t *data, uint32_t len);
	int (*done)(void *arg, const struct rnic_fpdu_info *fi);
};

enum rnic_fpdu_stage {
	RNIC_FPDU_ST_LEN,       /* ULPDU_Length */
	RNIC_FPDU_ST_HDR,       /* DDP/RDMAP header */
	RNIC_FPDU_ST_PAYLOAD,   /* DDP payload (or discarded ULPDU rest) */
	RNIC_FPDU_ST_PAD,
	RNIC_FPDU_ST_CRC,
	RNIC_FPDU_ST_ERROR,     /* stream is dead; see err */
};

/* Per-connection receive cursor: everything needed to resume mid-FPDU.
 * It counts nothing: its owner counts the FPDUs its done callback sees,
 * and an error ends the stream (err says which), so per-cursor error
 * counters would hold 0 or 1 (issue 21: 32 B an endpoint carried). */
struct rnic_fpdu_rx {
	const struct rnic_fpdu_rx_ops *ops;
	void *arg;
	bool crc;
	bool markers;           /* we asked for markers (our M flag) */
	uint32_t marker_base;
	uint32_t pos;           /* stream position of the next input byte */
	uint32_t fpdu_start;
	uint8_t stage;          /* enum rnic_fpdu_stage */
	uint8_t mk_got;         /* bytes of the current marker consumed */
	bool mk_crc;            /* the current marker is CRC covered */
	bool skip;              /* payload is not delivered */
	bool has_pending;       /* a header error waits for the CRC check */
	uint8_t pending;        /* enum rnic_term_cause */
	uint8_t err;            /* enum rnic_term_cause, in ST_ERROR */
	uint8_t mk_buf[RNIC_MPA_MARKER_LEN];
	uint8_t len_buf[RNIC_MPA_HDR_LEN];
	uint8_t crc_buf[RNIC_MPA_CRC_LEN];
	uint16_t hdr_got;       /* header bytes collected */
	uint32_t got;           /* bytes of the current stage consumed */
	uint32_t need;          /* bytes of the current stage */
	uint32_t crc_acc;
	struct rnic_fpdu_info info;
	uint8_t hdr[RNIC_IWARP_HDR_MAX];
};

void rnic_fpdu_rx_init(struct rnic_fpdu_rx *rx, bool crc, bool markers,
		       uint32_t start_pos, const struct rnic_fpdu_rx_ops *ops,
		       void *arg);

/**
 * Feed @p len stream bytes. Consumes what it can and reports it in
 * *@p consumed. @return -EAGAIN when all input was consumed (more bytes are
 * needed to progress), -EINPROGRESS when hdr asked to wait (see
 * RNIC_FPDU_WAIT; the bytes after *@p consumed are the caller's to keep),
 * -EPROTO on a protocol error (rx->err is the
 * Terminate cause; the stream is dead), or a callback's negative value.
 */
int rnic_fpdu_rx_input(struct rnic_fpdu_rx *rx, const void *buf, size_t len,
		       size_t *consumed);

/** After -EPROTO: the offending headers for rnic_term_build(). */
void rnic_fpdu_rx_offender(const struct rnic_fpdu_rx *rx,
			   struct rnic_term_offender *off);

#endif
