/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Terminate causes and the Terminate message builder.
 *
 * Every error the iWARP receive path can detect is one cause below, with the
 * exact Layer / Error Type / Error Code the RFCs assign:
 *   RDMAP: RFC 5040 section 7 (layer 0)
 *   DDP:   RFC 5041 section 7 (layer 1; EType 1 tagged, 2 untagged)
 *   MPA:   RFC 5044 section 8 and RFC 6581 section 9 (layer 2, EType 0)
 * and which offending headers the Terminate carries (hdrct bits).
 */
#ifndef RNIC_IWARP_TERMINATE_H
#define RNIC_IWARP_TERMINATE_H

#include <stddef.h>
#include <stdint.h>
#include "rdma/stag.h"

#define RNIC_TERM_LAYER_RDMAP 0x0
#define RNIC_TERM_LAYER_DDP   0x1
#define RNIC_TERM_LAYER_LLP   0x2  /* MPA */

#define RNIC_TERM_ETYPE_RDMAP_CATASTROPHIC 0x0
#define RNIC_TERM_ETYPE_RDMAP_PROTECTION   0x1
#define RNIC_TERM_ETYPE_RDMAP_OPERATION    0x2
#define RNIC_TERM_ETYPE_DDP_CATASTROPHIC   0x0
#define RNIC_TERM_ETYPE_DDP_TAGGED         0x1
#define RNIC_TERM_ETYPE_DDP_UNTAGGED       0x2
#define RNIC_TERM_ETYPE_MPA                0x0

/* Which offending headers a Terminate of this cause carries. */
#define RNIC_TERM_HDRS_NONE 0   /* nothing trustworthy to quote */
#define RNIC_TERM_HDRS_DDP  1   /* DDP Segment Length + DDP header (M, D) */
#define RNIC_TERM_HDRS_ALL  2   /* ... + RDMA Read Request header (R) */

/*   symbol, layer, etype, ecode, headers, telemetry name */
#define RNIC_TERM_CAUSES(X)                                                   \
	X(RDMAP_CATASTROPHIC,   RDMAP, RDMAP_CATASTROPHIC, 0x00, NONE,        \
	  "rdmap_local_catastrophic")                                         \
	X(RDMAP_INVALID_STAG,   RDMAP, RDMAP_PROTECTION, 0x00, ALL,           \
	  "rdmap_invalid_stag")                                               \
	X(RDMAP_BASE_BOUNDS,    RDMAP, RDMAP_PROTECTION, 0x01, ALL,           \
	  "rdmap_base_or_bounds")                                             \
	X(RDMAP_ACCESS_RIGHTS,  RDMAP, RDMAP_PROTECTION, 0x02, ALL,           \
	  "rdmap_access_rights")                                              \
	X(RDMAP_STAG_NOT_ASSOC, RDMAP, RDMAP_PROTECTION, 0x03, ALL,           \
	  "rdmap_stag_not_assoc_pd_mismatch")                                 \
	X(RDMAP_TO_WRAP,        RDMAP, RDMAP_PROTECTION, 0x04, ALL,           \
	  "rdmap_to_wrap")                                                    \
	X(RDMAP_INV_PROTECTION, RDMAP, RDMAP_PROTECTION, 0x09, ALL,           \
	  "rdmap_stag_cannot_be_invalidated_access")                          \
	X(RDMAP_PROT_UNSPEC,    RDMAP, RDMAP_PROTECTION, 0xff, ALL,           \
	  "rdmap_protection_unspecified")                                     \
	X(RDMAP_VERSION,        RDMAP, RDMAP_OPERATION, 0x05, ALL,            \
	  "rdmap_invalid_version")                                            \
	X(RDMAP_OPCODE,         RDMAP, RDMAP_OPERATION, 0x06, ALL,            \
	  "rdmap_unexpected_opcode")                                          \
	X(RDMAP_CATASTROPHIC_STREAM, RDMAP, RDMAP_OPERATION, 0x07, ALL,       \
	  "rdmap_catastrophic_stream")                                        \
	X(RDMAP_CATASTROPHIC_GLOBAL, RDMAP, RDMAP_OPERATION, 0x08, ALL,       \
	  "rdmap_catastrophic_global")                                        \
	X(RDMAP_CANNOT_INVALIDATE, RDMAP, RDMAP_OPERATION, 0x09, ALL,         \
	  "rdmap_stag_cannot_be_invalidated")                                 \
	X(RDMAP_OP_UNSPEC,      RDMAP, RDMAP_OPERATION, 0xff, ALL,            \
	  "rdmap_operation_unspecified")                                      \
	X(DDP_CATASTROPHIC,     DDP, DDP_CATASTROPHIC, 0x00, NONE,            \
	  "ddp_local_catastrophic")                                           \
	X(DDP_T_INVALID_STAG,   DDP, DDP_TAGGED, 0x00, DDP,                   \
	  "ddp_invalid_stag")                                                 \
	X(DDP_T_BASE_BOUNDS,    DDP, DDP_TAGGED, 0x01, DDP,                   \
	  "ddp_base_or_bounds")                                               \
	X(DDP_T_STAG_NOT_ASSOC, DDP, DDP_TAGGED, 0x02, DDP,                   \
	  "ddp_stag_not_assoc_pd_mismatch")                                   \
	X(DDP_T_TO_WRAP,        DDP, DDP_TAGGED, 0x03, DDP,                   \
	  "ddp_to_wrap")                                                      \
	X(DDP_T_VERSION,        DDP, DDP_TAGGED, 0x04, DDP,                   \
	  "ddp_tagged_invalid_version")                                       \
	X(DDP_U_INVALID_QN,     DDP, DDP_UNTAGGED, 0x01, DDP,                 \
	  "ddp_invalid_qn")                                                   \
	X(DDP_U_NO_BUFFER,      DDP, DDP_UNTAGGED, 0x02, DDP,                 \
	  "ddp_msn_no_buffer")                                                \
	X(DDP_U_MSN_RANGE,      DDP, DDP_UNTAGGED, 0x03, DDP,                 \
	  "ddp_msn_range")                                                    \
	X(DDP_U_INVALID_MO,     DDP, DDP_UNTAGGED, 0x04, DDP,                 \
	  "ddp_invalid_mo")                                                   \
	X(DDP_U_TOO_LONG,       DDP, DDP_UNTAGGED, 0x05, DDP,                 \
	  "ddp_message_too_long")                                             \
	X(DDP_U_VERSION,        DDP, DDP_UNTAGGED, 0x06, DDP,                 \
	  "ddp_untagged_invalid_version")                                     \
	X(MPA_TCP_LOST,         LLP, MPA, 0x01, NONE,                         \
	  "mpa_tcp_connection_lost")                                          \
	X(MPA_CRC,              LLP, MPA, 0x02, DDP,                          \
	  "mpa_crc_error")                                                    \
	X(MPA_MARKER,           LLP, MPA, 0x03, DDP,                          \
	  "mpa_marker_ulpdu_length_mismatch")                                 \
	X(MPA_INVALID_RR,       LLP, MPA, 0x04, NONE,                         \
	  "mpa_invalid_request_reply")                                        \
	X(MPA_CATASTROPHIC,     LLP, MPA, 0x05, NONE,                         \
	  "mpa_local_catastrophic")                                           \
	X(MPA_INSUFFICIENT_IRD, LLP, MPA, 0x06, NONE,                         \
	  "mpa_insufficient_ird")                                             \
	X(MPA_NO_MATCHING_RTR,  LLP, MPA, 0x07, NONE,                         \
	  "mpa_no_matching_rtr")

enum rnic_term_cause {
#define RNIC_TERM_ENUM(sym, l, t, c, h, name) RNIC_TERM_##sym,
	RNIC_TERM_CAUSES(RNIC_TERM_ENUM)
#undef RNIC_TERM_ENUM
	RNIC_TERM_MAX
};

struct rnic_term_info {
	uint8_t layer;
	uint8_t etype;
	uint8_t ecode;
	uint8_t hdrs;       /* RNIC_TERM_HDRS_* */
	const char *name;
};

/** Layer/type/code of a cause; NULL for an out-of-range value. */
const struct rnic_term_info *rnic_term_info(enum rnic_term_cause c);

/** Telemetry name of a cause ("?" when out of range). */
const char *rnic_term_name(enum rnic_term_cause c);

/* What an STag lookup found wrong: enum rnic_stag_fault (verbs/stag.h); the
 * helpers below turn it into the right cause for the layer that checked. */

/*
 * Tagged placement (RDMA Write, Read Response) failed: DDP codes, except
 * access rights, which DDP has no code for; RFC 5040 puts that check in
 * RDMAP (siw reports DDP Invalid STag instead).
 */
enum rnic_term_cause rnic_term_tagged_fault(enum rnic_stag_fault f);

/* Validation of an RDMA Read Request's source STag failed: RDMAP codes. */
enum rnic_term_cause rnic_term_read_src_fault(enum rnic_stag_fault f);

/*
 * Send with Invalidate (RFC 5040) whose STag could not be
 * invalidated: code 0x09, Remote Protection when rights or PD forbid it
 * (an MR, another PD's STag), Remote Operation otherwise (no such STag).
 */
enum rnic_term_cause rnic_term_inv_fault(enum rnic_stag_fault f);

/* The offending segment, quoted in the Terminate when the cause allows. */
struct rnic_term_offender {
	const uint8_t *ddp_hdr;     /* DDP header (14 or 18 bytes), or NULL */
	uint16_t ddp_seg_len;       /* its MPA ULPDU_Length */
	const uint8_t *read_req;    /* 28-byte Read Request header, or NULL */
};

/* Largest Terminate ULPDU: DDP hdr + control + seg len + DDP hdr + RDMA. */
#define RNIC_TERM_ULPDU_MAX (18u + 4u + 2u + 18u + 28u)

/**
 * Build the ULPDU of a Terminate message (untagged DDP, QN 2, L=1, MO 0,
 * opcode 7) for @p cause into @p out, to be framed by rnic_fpdu_build().
 * Offending headers are copied when the cause allows them and @p off has
 * them. @return the ULPDU length, -EINVAL for a bad cause, -ENOSPC when
 * @p cap is too small.
 */
int rnic_term_build(enum rnic_term_cause cause, uint32_t msn,
		    const struct rnic_term_offender *off, uint8_t *out,
		    size_t cap);

#endif
