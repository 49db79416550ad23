/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * RoCEv2 opcode table (IBTA vol. 1 sections 9.2 and 9.3, annex A17).
 *
 * One table, indexed by the 8-bit BTH opcode, says everything the transport
 * needs to know about a packet before looking at it: which extended headers
 * follow the BTH and at which offsets, whether the packet is a request or a
 * response, its place in a message (first/middle/last/only), whether it may
 * carry payload, and what kind of operation it belongs to. Code tests flags
 * instead of switching on opcodes, so a new opcode is one line in the list
 * below. Opcodes that are not in the list have an all-zero entry, which
 * rnic_roce_pkt_parse() rejects.
 *
 * The header lengths are plain numbers here so that this file needs no wire
 * structs; roce_wire.h checks each struct's size against them.
 */
#ifndef RNIC_ROCE_OPCODE_H
#define RNIC_ROCE_OPCODE_H

#include <stdbool.h>
#include <stdint.h>

/* Header lengths in bytes (IBTA 9.2 and 9.3). */
#define RNIC_ROCE_BTH_LEN     12u
#define RNIC_ROCE_RETH_LEN    16u
#define RNIC_ROCE_AETH_LEN     4u
#define RNIC_ROCE_ATMETH_LEN  28u
#define RNIC_ROCE_ATMACK_LEN   8u
#define RNIC_ROCE_IMMDT_LEN    4u
#define RNIC_ROCE_IETH_LEN     4u
#define RNIC_ROCE_DETH_LEN     8u
#define RNIC_ROCE_CNP_RSVD_LEN 16u /* reserved bytes that follow a CNP's BTH */
#define RNIC_ROCE_ICRC_LEN     4u
#define RNIC_ROCE_GRH_LEN     40u

/* The 3 most significant opcode bits name the transport service. */
#define RNIC_ROCE_TRANSPORT_MASK 0xe0u
#define RNIC_ROCE_TRANSPORT_RC   0x00u
#define RNIC_ROCE_TRANSPORT_UC   0x20u
#define RNIC_ROCE_TRANSPORT_UD   0x60u
#define RNIC_ROCE_TRANSPORT_CNP  0x80u

/*
 * Opcode flags. The first group names the extended headers present, in the
 * order IBTA 9.2 places them after the BTH: DETH, RETH, AtomicETH, AETH,
 * AtomicAckETH, ImmDt, IETH.
 */
enum rnic_roce_opflag {
	RNIC_ROCE_OPF_DETH     = 1u << 0,
	RNIC_ROCE_OPF_RETH     = 1u << 1,
	RNIC_ROCE_OPF_ATMETH   = 1u << 2,
	RNIC_ROCE_OPF_AETH     = 1u << 3,
	RNIC_ROCE_OPF_ATMACK   = 1u << 4,
	RNIC_ROCE_OPF_IMMDT    = 1u << 5,
	RNIC_ROCE_OPF_IETH     = 1u << 6,
	RNIC_ROCE_OPF_CNPRSVD  = 1u << 7,  /* the 16 reserved bytes of a CNP */

	RNIC_ROCE_OPF_REQ      = 1u << 8,  /* requester to responder */
	RNIC_ROCE_OPF_RESP     = 1u << 9,  /* responder to requester */

	RNIC_ROCE_OPF_FIRST    = 1u << 10,
	RNIC_ROCE_OPF_MIDDLE   = 1u << 11,
	RNIC_ROCE_OPF_LAST     = 1u << 12,
	RNIC_ROCE_OPF_ONLY     = 1u << 13,

	RNIC_ROCE_OPF_PAYLOAD  = 1u << 14, /* may carry payload (and a pad) */
	RNIC_ROCE_OPF_SEND     = 1u << 15,
	RNIC_ROCE_OPF_WRITE    = 1u << 16,
	RNIC_ROCE_OPF_READ     = 1u << 17, /* read request and read responses */
	RNIC_ROCE_OPF_ATOMIC   = 1u << 18, /* atomic requests and atomic ack */
	RNIC_ROCE_OPF_ACK      = 1u << 19, /* ACKNOWLEDGE, ATOMIC ACKNOWLEDGE */
	RNIC_ROCE_OPF_RECV_WQE = 1u << 20, /* its message consumes a receive WQE */
	RNIC_ROCE_OPF_CNP      = 1u << 21, /* congestion notification packet */

	RNIC_ROCE_OPF_RC       = 1u << 22, /* reliable connection service */
	RNIC_ROCE_OPF_UD       = 1u << 23, /* unreliable datagram service */
};

/* Shorthands for the list below. */
#define RNIC_ROCE_OPF_START (RNIC_ROCE_OPF_FIRST | RNIC_ROCE_OPF_ONLY)
#define RNIC_ROCE_OPF_END   (RNIC_ROCE_OPF_LAST | RNIC_ROCE_OPF_ONLY)
#define RNIC_ROCE_OPF_HDRS  (RNIC_ROCE_OPF_DETH | RNIC_ROCE_OPF_RETH |     \
			     RNIC_ROCE_OPF_ATMETH | RNIC_ROCE_OPF_AETH |   \
			     RNIC_ROCE_OPF_ATMACK | RNIC_ROCE_OPF_IMMDT |  \
			     RNIC_ROCE_OPF_IETH | RNIC_ROCE_OPF_CNPRSVD)

#define RNIC_ROCE_RC_SEND_ (RNIC_ROCE_OPF_RC | RNIC_ROCE_OPF_REQ |          \
			    RNIC_ROCE_OPF_SEND | RNIC_ROCE_OPF_PAYLOAD |    \
			    RNIC_ROCE_OPF_RECV_WQE)
#define RNIC_ROCE_RC_WRITE_ (RNIC_ROCE_OPF_RC | RNIC_ROCE_OPF_REQ |         \
			     RNIC_ROCE_OPF_WRITE | RNIC_ROCE_OPF_PAYLOAD)
#define RNIC_ROCE_RC_RRESP_ (RNIC_ROCE_OPF_RC | RNIC_ROCE_OPF_RESP |        \
			     RNIC_ROCE_OPF_READ | RNIC_ROCE_OPF_PAYLOAD)
#define RNIC_ROCE_RC_ATOMIC_ (RNIC_ROCE_OPF_RC | RNIC_ROCE_OPF_REQ |        \
			      RNIC_ROCE_OPF_ATOMIC | RNIC_ROCE_OPF_ATMETH | \
			      RNIC_ROCE_OPF_ONLY)
#define RNIC_ROCE_UD_SEND_ (RNIC_ROCE_OPF_UD | RNIC_ROCE_OPF_REQ |          \
			    RNIC_ROCE_OPF_SEND | RNIC_ROCE_OPF_PAYLOAD |    \
			    RNIC_ROCE_OPF_RECV_WQE | RNIC_ROCE_OPF_DETH |   \
			    RNIC_ROCE_OPF_ONLY)

/*
 * The opcode list: X(symbol, value, flags). The enum, the names and the
 * table are all generated from it, so no name is typed twice.
 */
#define RNIC_ROCE_OPCODES(X)                                                   \
	X(RC_SEND_FIRST,           0x00, RNIC_ROCE_RC_SEND_ | RNIC_ROCE_OPF_FIRST) \
	X(RC_SEND_MIDDLE,          0x01, RNIC_ROCE_RC_SEND_ | RNIC_ROCE_OPF_MIDDLE) \
	X(RC_SEND_LAST,            0x02, RNIC_ROCE_RC_SEND_ | RNIC_ROCE_OPF_LAST) \
	X(RC_SEND_LAST_IMM,        0x03, RNIC_ROCE_RC_SEND_ | RNIC_ROCE_OPF_LAST | \
					 RNIC_ROCE_OPF_IMMDT)                 \
	X(RC_SEND_ONLY,            0x04, RNIC_ROCE_RC_SEND_ | RNIC_ROCE_OPF_ONLY) \
	X(RC_SEND_ONLY_IMM,        0x05, RNIC_ROCE_RC_SEND_ | RNIC_ROCE_OPF_ONLY | \
					 RNIC_ROCE_OPF_IMMDT)                 \
	X(RC_WRITE_FIRST,          0x06, RNIC_ROCE_RC_WRITE_ | RNIC_ROCE_OPF_FIRST | \
					 RNIC_ROCE_OPF_RETH)                  \
	X(RC_WRITE_MIDDLE,         0x07, RNIC_ROCE_RC_WRITE_ | RNIC_ROCE_OPF_MIDDLE) \
	X(RC_WRITE_LAST,           0x08, RNIC_ROCE_RC_WRITE_ | RNIC_ROCE_OPF_LAST) \
	X(RC_WRITE_LAST_IMM,       0x09, RNIC_ROCE_RC_WRITE_ | RNIC_ROCE_OPF_LAST | \
					 RNIC_ROCE_OPF_IMMDT |                \
					 RNIC_ROCE_OPF_RECV_WQE)              \
	X(RC_WRITE_ONLY,           0x0a, RNIC_ROCE_RC_WRITE_ | RNIC_ROCE_OPF_ONLY | \
					 RNIC_ROCE_OPF_RETH)                  \
	X(RC_WRITE_ONLY_IMM,       0x0b, RNIC_ROCE_RC_WRITE_ | RNIC_ROCE_OPF_ONLY | \
					 RNIC_ROCE_OPF_RETH | RNIC_ROCE_OPF_IMMDT | \
					 RNIC_ROCE_OPF_RECV_WQE)              \
	X(RC_READ_REQUEST,         0x0c, RNIC_ROCE_OPF_RC | RNIC_ROCE_OPF_REQ | \
					 RNIC_ROCE_OPF_READ | RNIC_ROCE_OPF_ONLY | \
					 RNIC_ROCE_OPF_RETH)                  \
	X(RC_READ_RESPONSE_FIRST,  0x0d, RNIC_ROCE_RC_RRESP_ | RNIC_ROCE_OPF_FIRST | \
					 RNIC_ROCE_OPF_AETH)                  \
	X(RC_READ_RESPONSE_MIDDLE, 0x0e, RNIC_ROCE_RC_RRESP_ | RNIC_ROCE_OPF_MIDDLE) \
	X(RC_READ_RESPONSE_LAST,   0x0f, RNIC_ROCE_RC_RRESP_ | RNIC_ROCE_OPF_LAST | \
					 RNIC_ROCE_OPF_AETH)                  \
	X(RC_READ_RESPONSE_ONLY,   0x10, RNIC_ROCE_RC_RRESP_ | RNIC_ROCE_OPF_ONLY | \
					 RNIC_ROCE_OPF_AETH)                  \
	X(RC_ACKNOWLEDGE,          0x11, RNIC_ROCE_OPF_RC | RNIC_ROCE_OPF_RESP | \
					 RNIC_ROCE_OPF_ACK | RNIC_ROCE_OPF_ONLY | \
					 RNIC_ROCE_OPF_AETH)                  \
	X(RC_ATOMIC_ACKNOWLEDGE,   0x12, RNIC_ROCE_OPF_RC | RNIC_ROCE_OPF_RESP | \
					 RNIC_ROCE_OPF_ACK | RNIC_ROCE_OPF_ATOMIC | \
					 RNIC_ROCE_OPF_ONLY | RNIC_ROCE_OPF_AETH | \
					 RNIC_ROCE_OPF_ATMACK)                \
	X(RC_CMP_SWAP,             0x13, RNIC_ROCE_RC_ATOMIC_)                \
	X(RC_FETCH_ADD,            0x14, RNIC_ROCE_RC_ATOMIC_)                \
	X(RC_SEND_LAST_INV,        0x16, RNIC_ROCE_RC_SEND_ | RNIC_ROCE_OPF_LAST | \
					 RNIC_ROCE_OPF_IETH)                  \
	X(RC_SEND_ONLY_INV,        0x17, RNIC_ROCE_RC_SEND_ | RNIC_ROCE_OPF_ONLY | \
					 RNIC_ROCE_OPF_IETH)                  \
	X(UD_SEND_ONLY,            0x64, RNIC_ROCE_UD_SEND_)                  \
	X(UD_SEND_ONLY_IMM,        0x65, RNIC_ROCE_UD_SEND_ | RNIC_ROCE_OPF_IMMDT) \
	X(CNP,                     0x81, RNIC_ROCE_OPF_CNP | RNIC_ROCE_OPF_CNPRSVD | \
					 RNIC_ROCE_OPF_ONLY)

/* Opcode values, RNIC_ROCE_OP_<symbol>. */
enum rnic_roce_opcode {
#define RNIC_ROCE_OP_ENUM(sym, val, flags) RNIC_ROCE_OP_##sym = (val),
	RNIC_ROCE_OPCODES(RNIC_ROCE_OP_ENUM)
#undef RNIC_ROCE_OP_ENUM
	/* No message in progress: the "previous opcode" of a fresh QP. */
	RNIC_ROCE_OP_NONE = 0x100,
};

/* Extended headers by position; index into rnic_roce_opinfo.offset[]. */
enum rnic_roce_hdr {
	RNIC_ROCE_HDR_DETH,
	RNIC_ROCE_HDR_RETH,
	RNIC_ROCE_HDR_ATMETH,
	RNIC_ROCE_HDR_AETH,
	RNIC_ROCE_HDR_ATMACK,
	RNIC_ROCE_HDR_IMMDT,
	RNIC_ROCE_HDR_IETH,
	RNIC_ROCE_HDR_PAYLOAD, /* where the payload starts: equals length */
	RNIC_ROCE_HDR_NUM
};

/* What the table knows about one opcode. */
struct rnic_roce_opinfo {
	const char *name;      /* "RC_SEND_FIRST"; NULL for unknown opcodes */
	uint32_t flags;        /* enum rnic_roce_opflag bits; 0 = unknown */
	uint8_t length;        /* BTH plus all extended headers */
	/* Offset from the BTH of each extended header, 0 when absent (the
	 * BTH itself is always at 0, so 0 never names a real extended header). */
	uint8_t offset[RNIC_ROCE_HDR_NUM];
};

/** The table, 256 entries, indexed by the BTH opcode. */
extern const struct rnic_roce_opinfo rnic_roce_optable[256];

/** Table entry of @op. */
static inline const struct rnic_roce_opinfo *
rnic_roce_op(uint8_t op)
{
	return &rnic_roce_optable[op];
}

/** True when @op is a defined opcode. */
static inline bool
rnic_roce_op_known(uint8_t op)
{
	return rnic_roce_optable[op].flags != 0;
}

/** True when @op has every flag in @flags (enum rnic_roce_opflag). */
static inline bool
rnic_roce_op_has(uint8_t op, uint32_t flags)
{
	return (rnic_roce_optable[op].flags & flags) == flags;
}

/** Name of @op for logs and telemetry; "UNKNOWN" for undefined opcodes. */
const char *rnic_roce_op_name(uint8_t op);

/**
 * Responder's opcode sequence check (IBTA 9.8.3.1 / C9-91..C9-93).
 *
 * @param prev  opcode of the last packet accepted on this QP, or
 *              RNIC_ROCE_OP_NONE when none was
 * @param next  opcode of the arriving packet
 * @return true when @next may follow @prev at an RC responder: inside a
 *         multi-packet Send only SEND_MIDDLE or a SEND_LAST form, inside a
 *         Write only WRITE_MIDDLE or a WRITE_LAST form, and between messages
 *         only a FIRST or ONLY request. Responses, unknown and non-RC
 *         opcodes are never valid here.
 */
bool rnic_roce_op_seq_ok(enum rnic_roce_opcode prev, uint8_t next);

/**
 * Requester's (completer's) read response sequence check: a MIDDLE or LAST
 * read response must follow a FIRST or MIDDLE one, and FIRST or ONLY must
 * not. @prev is the last read response opcode accepted for the read in
 * progress, or RNIC_ROCE_OP_NONE at the start of a read.
 */
bool rnic_roce_read_resp_seq_ok(enum rnic_roce_opcode prev, uint8_t next);

#endif
