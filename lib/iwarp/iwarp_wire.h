/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * iWARP wire formats: MPA (RFC 5044, RFC 6581), DDP (RFC 5041), RDMAP
 * (RFC 5040) and the RDMAP extensions of RFC 7306. Only layouts, flag
 * constants and accessors live here; behaviour is in mpa.c, fpdu.c and
 * terminate.c.
 *
 * Conventions: structs are packed, built from uint8_t and rte_be types, and
 * carry a _Static_assert on their size. Multi-byte flag constants are kept in
 * network byte order (RTE_BE16/RTE_BE32) so they can be tested against the
 * raw field without a swap. Sub-byte fields go through the inline accessors
 * below. Field names follow the RFC figures.
 */
#ifndef RNIC_IWARP_WIRE_H
#define RNIC_IWARP_WIRE_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_byteorder.h>
#include <rte_common.h>

/* ------------------------------------------------------------------------
 * MPA connection setup frames (RFC 5044 section 7.1)
 *
 *   0..15   Key: "MPA ID Req Frame" or "MPA ID Rep Frame" (no NUL)
 *   16      |M|C|R| Res (5) |
 *   17      Rev
 *   18..19  PD_Length
 *   20..    Private Data (PD_Length bytes, at most 512)
 */
#define RNIC_MPA_KEY_LEN     16
#define RNIC_MPA_KEY_REQ     "MPA ID Req Frame"
#define RNIC_MPA_KEY_REP     "MPA ID Rep Frame"
#define RNIC_MPA_PD_MAX      512u
#define RNIC_MPA_REV1        1
#define RNIC_MPA_REV2        2

/* Flag byte (offset 16). One byte, so network order is the identity. */
#define RNIC_MPA_FLAG_M      0x80 /* sender wants to receive Markers */
#define RNIC_MPA_FLAG_C      0x40 /* CRC32c in use */
#define RNIC_MPA_FLAG_R      0x20 /* Reject (reply only) */
/*
 * First Res bit. RFC 5044 leaves it reserved; Linux siw and cxgb4 set it in
 * rev 2 frames whose private data starts with the RFC 6581 IRD/ORD header
 * ("enhanced connection establishment"). siw refuses a rev 2 reply to an
 * enhanced request unless it is set, so rnic sends it and honours it.
 */
#define RNIC_MPA_FLAG_ENHANCED 0x10
#define RNIC_MPA_FLAG_RES    0x0f

struct rnic_mpa_rr_hdr {
	uint8_t key[RNIC_MPA_KEY_LEN];
	uint8_t flags;        /* M C R Res */
	uint8_t rev;
	rte_be16_t pd_length;
} __rte_packed;
_Static_assert(sizeof(struct rnic_mpa_rr_hdr) == 20, "MPA req/rep header");

/*
 * RFC 6581 enhanced connection setup: the first 4 bytes of the private data
 * of a rev 2 request/reply.
 *
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  |M|Z|         IRD (14)          |W|R|         ORD (14)          |
 *
 * M: peer-to-peer model (the initiator asks for an RTR message; the
 *    responder echoes it, RFC 6581 section 9.2).
 * Z: RTR as a zero-length Send (FPDU).  W: RTR as a zero-length RDMA Write.
 * R: RTR as a zero-length RDMA Read.
 * The initiator sets every RTR type it can receive; the responder sets
 * exactly the one it will send. Bit positions match Linux siw/cxgb4.
 */
struct rnic_mpa_v2_hdr {
	rte_be16_t ird;       /* M, Z, IRD */
	rte_be16_t ord;       /* W, R, ORD */
} __rte_packed;
_Static_assert(sizeof(struct rnic_mpa_v2_hdr) == 4, "RFC 6581 header");

#define RNIC_MPA_V2_P2P      RTE_BE16(0x8000) /* in ird */
#define RNIC_MPA_V2_RTR_SEND RTE_BE16(0x4000) /* in ird */
#define RNIC_MPA_V2_RTR_WRITE RTE_BE16(0x8000) /* in ord */
#define RNIC_MPA_V2_RTR_READ RTE_BE16(0x4000) /* in ord */
#define RNIC_MPA_V2_IRD_ORD_MASK 0x3fffu      /* host order */

static inline uint16_t
rnic_mpa_v2_ird(const struct rnic_mpa_v2_hdr *h)
{
	return rte_be_to_cpu_16(h->ird) & RNIC_MPA_V2_IRD_ORD_MASK;
}

static inline uint16_t
rnic_mpa_v2_ord(const struct rnic_mpa_v2_hdr *h)
{
	return rte_be_to_cpu_16(h->ord) & RNIC_MPA_V2_IRD_ORD_MASK;
}

/* Set IRD/ORD values keeping the flag bits. Values are clamped to 14 bits. */
static inline void
rnic_mpa_v2_set_ird(struct rnic_mpa_v2_hdr *h, uint16_t ird)
{
	uint16_t v = rte_be_to_cpu_16(h->ird) & ~RNIC_MPA_V2_IRD_ORD_MASK;

	if (ird > RNIC_MPA_V2_IRD_ORD_MASK)
		ird = RNIC_MPA_V2_IRD_ORD_MASK;
	h->ird = rte_cpu_to_be_16(v | ird);
}

static inline void
rnic_mpa_v2_set_ord(struct rnic_mpa_v2_hdr *h, uint16_t ord)
{
	uint16_t v = rte_be_to_cpu_16(h->ord) & ~RNIC_MPA_V2_IRD_ORD_MASK;

	if (ord > RNIC_MPA_V2_IRD_ORD_MASK)
		ord = RNIC_MPA_V2_IRD_ORD_MASK;
	h->ord = rte_cpu_to_be_16(v | ord);
}

/* ------------------------------------------------------------------------
 * MPA FPDU (RFC 5044 section 4):
 *   ULPDU_Length (16) | ULPDU | PAD (0-3, to 4 bytes) | CRC (32)
 * with Markers inserted every 512 bytes of TCP sequence space when
 * negotiated. The CRC field is always present; it is zero and ignored when
 * CRC is not in use.
 */
#define RNIC_MPA_HDR_LEN     2u
#define RNIC_MPA_CRC_LEN     4u
#define RNIC_MPA_ALIGN       4u
#define RNIC_MPA_MARKER_LEN  4u
#define RNIC_MPA_MARKER_INTERVAL 512u
#define RNIC_MPA_ULPDU_MAX   0xffffu

struct rnic_mpa_fpdu_hdr {
	rte_be16_t ulpdu_length;
} __rte_packed;
_Static_assert(sizeof(struct rnic_mpa_fpdu_hdr) == 2, "MPA FPDU header");

/* Marker (RFC 5044 sections 4.3, 5): FPDUPTR = bytes from the ULPDU_Length
 * field of the FPDU that holds the marker to the marker itself (0 when the
 * marker sits at the FPDU start, in front of ULPDU_Length). */
struct rnic_mpa_marker {
	rte_be16_t reserved;
	rte_be16_t fpduptr;
} __rte_packed;
_Static_assert(sizeof(struct rnic_mpa_marker) == 4, "MPA marker");

/* Pad bytes after an ULPDU of @p ulpdu_len bytes. */
static inline uint32_t
rnic_mpa_pad_len(uint32_t ulpdu_len)
{
	return (RNIC_MPA_ALIGN - ((ulpdu_len + RNIC_MPA_HDR_LEN) &
				  (RNIC_MPA_ALIGN - 1))) & (RNIC_MPA_ALIGN - 1);
}

/* ------------------------------------------------------------------------
 * DDP (RFC 5041 section 4) and RDMAP (RFC 5040 section 4) control bytes.
 *
 *   DDP control:   |T|L| Rsvd (4) | DV (2) |
 *   RDMAP control: | RV (2) | Rsvd (2) | Opcode (4) |
 *
 * RDMAP uses the first byte of DDP's RsvdULP field for its control byte;
 * for untagged segments the next 32 bits of RsvdULP are RDMAP's Invalidate
 * STag (Send with Invalidate) and reserved otherwise.
 */
#define RNIC_DDP_FLAG_T      0x80 /* tagged buffer model */
#define RNIC_DDP_FLAG_L      0x40 /* last segment of the message */
#define RNIC_DDP_RSVD_MASK   0x3c
#define RNIC_DDP_DV_MASK     0x03
#define RNIC_DDP_VERSION     1

#define RNIC_RDMAP_RV_MASK   0xc0
#define RNIC_RDMAP_RV_SHIFT  6
#define RNIC_RDMAP_RSVD_MASK 0x30
#define RNIC_RDMAP_OPCODE_MASK 0x0f
#define RNIC_RDMAP_VERSION   1

/*
 * RDMAP opcodes: RFC 5040 section 4.3, and the four RFC 7306 adds (its
 * section 4.1 table and the IANA "RDMAP Message Operation Codes" entries):
 * 1000b Immediate Data, 1001b Immediate Data with SE, 1010b Atomic Request,
 * 1011b Atomic Response. All four are untagged.
 */
#define RNIC_RDMAP_OPCODES(X)                                 \
	X(WRITE,        0x0, "rdma_write")                    \
	X(READ_REQ,     0x1, "rdma_read_request")             \
	X(READ_RESP,    0x2, "rdma_read_response")            \
	X(SEND,         0x3, "send")                          \
	X(SEND_INV,     0x4, "send_with_invalidate")          \
	X(SEND_SE,      0x5, "send_with_se")                  \
	X(SEND_SE_INV,  0x6, "send_with_se_and_invalidate")   \
	X(TERMINATE,    0x7, "terminate")                     \
	X(IMM_DATA,     0x8, "immediate_data")                \
	X(IMM_DATA_SE,  0x9, "immediate_data_with_se")        \
	X(ATOMIC_REQ,   0xa, "atomic_request")                \
	X(ATOMIC_RESP,  0xb, "atomic_response")

enum rnic_rdmap_opcode {
#define RNIC_RDMAP_OP_ENUM(sym, val, name) RNIC_RDMAP_OP_##sym = val,
	RNIC_RDMAP_OPCODES(RNIC_RDMAP_OP_ENUM)
#undef RNIC_RDMAP_OP_ENUM
};

/*
 * Untagged queue numbers (RFC 5040 section 5.1; RFC 7306 section 4.1 and
 * its IANA "RDMAP DDP Untagged Queue Numbers" entry). Atomic Requests share
 * queue 1 (and its MSN sequence and the IRD/ORD budget) with RDMA Read
 * Requests, so the responder takes both in one order; Atomic Responses are
 * untagged and need a queue of their own at the requester: queue 3.
 */
enum rnic_ddp_qn {
	RNIC_DDP_QN_SEND = 0,       /* Send variants, Immediate Data */
	RNIC_DDP_QN_READ_REQ = 1,   /* RDMA Read Request, Atomic Request */
	RNIC_DDP_QN_TERMINATE = 2,
	RNIC_DDP_QN_ATOMIC_RESP = 3, /* Atomic Response (RFC 7306) */
	RNIC_DDP_QN_COUNT = 4,
};

static inline bool rnic_ddp_tagged(uint8_t ddp_ctrl)
{
	return (ddp_ctrl & RNIC_DDP_FLAG_T) != 0;
}

static inline bool rnic_ddp_last(uint8_t ddp_ctrl)
{
	return (ddp_ctrl & RNIC_DDP_FLAG_L) != 0;
}

static inline uint8_t rnic_ddp_dv(uint8_t ddp_ctrl)
{
	return ddp_ctrl & RNIC_DDP_DV_MASK;
}

static inline uint8_t rnic_ddp_ctrl(bool tagged, bool last)
{
	return (tagged ? RNIC_DDP_FLAG_T : 0) | (last ? RNIC_DDP_FLAG_L : 0) |
	       RNIC_DDP_VERSION;
}

static inline uint8_t rnic_rdmap_rv(uint8_t rdmap_ctrl)
{
	return (rdmap_ctrl & RNIC_RDMAP_RV_MASK) >> RNIC_RDMAP_RV_SHIFT;
}

static inline uint8_t rnic_rdmap_opcode(uint8_t rdmap_ctrl)
{
	return rdmap_ctrl & RNIC_RDMAP_OPCODE_MASK;
}

static inline uint8_t rnic_rdmap_ctrl(uint8_t opcode)
{
	return (uint8_t)(RNIC_RDMAP_VERSION << RNIC_RDMAP_RV_SHIFT) |
	       (opcode & RNIC_RDMAP_OPCODE_MASK);
}

/* DDP tagged buffer model header (RFC 5041 section 4.3): 14 bytes. */
struct rnic_ddp_tagged_hdr {
	uint8_t ddp_ctrl;
	uint8_t rdmap_ctrl;
	rte_be32_t stag;
	rte_be64_t to;
} __rte_packed;
_Static_assert(sizeof(struct rnic_ddp_tagged_hdr) == 14, "DDP tagged");

/* DDP untagged buffer model header (RFC 5041 section 4.4): 18 bytes. */
struct rnic_ddp_untagged_hdr {
	uint8_t ddp_ctrl;
	uint8_t rdmap_ctrl;
	rte_be32_t inv_stag;  /* RsvdULP[8:39]: Invalidate STag or 0 */
	rte_be32_t qn;
	rte_be32_t msn;
	rte_be32_t mo;
} __rte_packed;
_Static_assert(sizeof(struct rnic_ddp_untagged_hdr) == 18, "DDP untagged");

#define RNIC_DDP_TAGGED_HDR_LEN   14u
#define RNIC_DDP_UNTAGGED_HDR_LEN 18u

/* RDMA Read Request header (RFC 5040 section 4.4): follows the untagged
 * DDP header, 28 bytes. */
struct rnic_rdmap_read_req_hdr {
	rte_be32_t sink_stag;
	rte_be64_t sink_to;
	rte_be32_t rdma_rd_sz;     /* RDMA Read Message Size */
	rte_be32_t src_stag;
	rte_be64_t src_to;
} __rte_packed;
_Static_assert(sizeof(struct rnic_rdmap_read_req_hdr) == 28, "Read Request");

/*
 * Terminate header (RFC 5040 section 4.8), after the untagged DDP header:
 *
 *   | Layer (4) | EType (4) | Error Code (8) |M|D|R| Reserved (13) |
 *   [ DDP Segment Length (16) ]  [ Terminated DDP Header ]  present if D
 *   [ Terminated RDMA Header (28, RDMA Read Request) ]       present if R
 *
 * M: the DDP Segment Length is valid. D: the offending DDP header is
 * included. R: the offending RDMA Read Request header is included.
 */
struct rnic_rdmap_term_hdr {
	rte_be32_t term_ctrl;
} __rte_packed;
_Static_assert(sizeof(struct rnic_rdmap_term_hdr) == 4, "Terminate control");

#define RNIC_TERM_LAYER_MASK RTE_BE32(0xf0000000)
#define RNIC_TERM_ETYPE_MASK RTE_BE32(0x0f000000)
#define RNIC_TERM_ECODE_MASK RTE_BE32(0x00ff0000)
#define RNIC_TERM_HDRCT_M    RTE_BE32(0x00008000)
#define RNIC_TERM_HDRCT_D    RTE_BE32(0x00004000)
#define RNIC_TERM_HDRCT_R    RTE_BE32(0x00002000)
#define RNIC_TERM_RSVD_MASK  RTE_BE32(0x00001fff)

static inline uint8_t rnic_term_layer(const struct rnic_rdmap_term_hdr *t)
{
	return (uint8_t)(rte_be_to_cpu_32(t->term_ctrl) >> 28);
}

static inline uint8_t rnic_term_etype(const struct rnic_rdmap_term_hdr *t)
{
	return (uint8_t)((rte_be_to_cpu_32(t->term_ctrl) >> 24) & 0x0f);
}

static inline uint8_t rnic_term_ecode(const struct rnic_rdmap_term_hdr *t)
{
	return (uint8_t)(rte_be_to_cpu_32(t->term_ctrl) >> 16);
}

static inline void
rnic_term_set(struct rnic_rdmap_term_hdr *t, uint8_t layer, uint8_t etype,
	      uint8_t ecode, bool m, bool d, bool r)
{
	uint32_t v = ((uint32_t)(layer & 0x0f) << 28) |
		     ((uint32_t)(etype & 0x0f) << 24) |
		     ((uint32_t)ecode << 16);

	t->term_ctrl = rte_cpu_to_be_32(v);
	if (m)
		t->term_ctrl |= RNIC_TERM_HDRCT_M;
	if (d)
		t->term_ctrl |= RNIC_TERM_HDRCT_D;
	if (r)
		t->term_ctrl |= RNIC_TERM_HDRCT_R;
}

/*
 * RFC 7306 Immediate Data message (opcodes 1000b/1001b, untagged, QN 0,
 * one segment, MO 0): the ULPDU after the DDP header is 8 bytes of
 * Immediate Data and nothing else. It is a message of its own that
 * consumes an untagged buffer (a receive) at the data sink; "Write with
 * Immediate" is an RDMA Write followed by it. libibverbs' 32-bit imm_data
 * (already in network order) goes in bytes 0..3; bytes 4..7 are sent as 0
 * and ignored on receive.
 */
struct rnic_rdmap_imm_hdr {
	uint8_t immediate_data[8];
} __rte_packed;
_Static_assert(sizeof(struct rnic_rdmap_imm_hdr) == 8, "Immediate Data");

/*
 * RFC 7306 Atomic Request header (untagged, QN 1, one segment, MO 0),
 * after the untagged DDP header: 52 bytes.
 *
 *   Reserved (28) | Atomic Operation (4)
 *   Request Identifier (32)
 *   Remote STag (32)
 *   Remote Tagged Offset (64)           8-byte aligned
 *   Add or Swap Data (64)
 *   Add or Swap Mask (64)
 *   Compare Data (64)                   CmpSwap only, else 0
 *   Compare Mask (64)                   CmpSwap only, else 0
 */
struct rnic_rdmap_atomic_req_hdr {
	rte_be32_t atomic_op;       /* Reserved (28) | Atomic Operation (4) */
	rte_be32_t req_id;          /* Request Identifier */
	rte_be32_t remote_stag;
	rte_be64_t remote_to;
	rte_be64_t add_swap_data;   /* Add or Swap Data */
	rte_be64_t add_swap_mask;   /* Add or Swap Mask */
	rte_be64_t compare_data;
	rte_be64_t compare_mask;
} __rte_packed;
_Static_assert(sizeof(struct rnic_rdmap_atomic_req_hdr) == 52, "Atomic Req");

/* Atomic Operation codes (IANA "RDMAP Message Atomic Operation Subcodes"). */
#define RNIC_ATOMIC_OP_MASK     RTE_BE32(0x0000000f)
#define RNIC_ATOMIC_FETCH_ADD   0x0
#define RNIC_ATOMIC_SWAP        0x1
#define RNIC_ATOMIC_CMP_SWAP    0x2

static inline uint8_t
rnic_atomic_op(const struct rnic_rdmap_atomic_req_hdr *h)
{
	return (uint8_t)(rte_be_to_cpu_32(h->atomic_op) & 0x0f);
}

/* RFC 7306 Atomic Response header (untagged, QN 3, one segment, MO 0):
 * 12 bytes. The original value is the 64-bit word as it was before the
 * operation. */
struct rnic_rdmap_atomic_resp_hdr {
	rte_be32_t orig_req_id;         /* Original Request Identifier */
	rte_be64_t orig_remote_data;    /* Original Remote Data Value */
} __rte_packed;
_Static_assert(sizeof(struct rnic_rdmap_atomic_resp_hdr) == 12, "Atomic Resp");

/* Longest DDP+RDMAP header the FPDU parser collects (Atomic Request). */
#define RNIC_IWARP_HDR_MAX \
	(RNIC_DDP_UNTAGGED_HDR_LEN + sizeof(struct rnic_rdmap_atomic_req_hdr))

#endif
