/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What each RDMAP opcode means, in one table (RFC 5040 sections 4.3, 5.1
 * and 6, RFC 7306 section 4.1 as rnic implements it): the header the FPDU
 * parser collects, the buffer model and untagged queue it travels on, how
 * the receiver places it, whether it makes a work completion there, and
 * which side of an operation may send it. The framing code and the
 * endpoint's receive path read this table instead of switching on opcodes.
 */
#ifndef RNIC_IWARP_RDMAP_OP_H
#define RNIC_IWARP_RDMAP_OP_H

#include <stdbool.h>
#include <stdint.h>

#include "iwarp/iwarp_wire.h"

/* Where the receiver puts what an FPDU of the opcode carries. */
enum rnic_rdmap_place {
	RNIC_PLACE_INVALID = 0,   /* not an opcode rnic knows */
	RNIC_PLACE_TAGGED,        /* payload into the memory its STag names */
	RNIC_PLACE_RECV,          /* payload into the posted receive, at MO */
	RNIC_PLACE_HDR,           /* no payload: the fixed RDMAP header is all */
	RNIC_PLACE_TERM,          /* the Terminate header and what it quotes */
};

/* Which end of an operation may send the opcode (RFC 5040 s6: a Read
 * Request goes from the requester to the responder, its Read Responses
 * back; Terminate goes either way). */
enum rnic_rdmap_dir {
	RNIC_DIR_REQUEST = 1,     /* from the data source or requester */
	RNIC_DIR_RESPONSE = 2,    /* the answer to a Read or Atomic Request */
	RNIC_DIR_BOTH = RNIC_DIR_REQUEST | RNIC_DIR_RESPONSE,
};

struct rnic_rdmap_op_info {
	uint8_t hdr_len;      /* DDP header + fixed RDMAP header; 0: invalid */
	bool tagged;          /* DDP T flag (tagged buffer model) */
	uint8_t qn;           /* enum rnic_ddp_qn (untagged only) */
	uint8_t place;        /* enum rnic_rdmap_place */
	uint8_t dir;          /* enum rnic_rdmap_dir */
	bool completes;       /* its last segment makes a completion at the receiver */
	bool new_op;          /* starts an operation of the peer's (ops_in counts it);
			       * Immediate Data belongs to the Write or Send before it */
	bool solicited;       /* carries the SE flag */
	bool invalidates;     /* carries an STag to invalidate */
};

extern const struct rnic_rdmap_op_info rnic_rdmap_ops[RNIC_RDMAP_OPCODE_MASK + 1];

/* The entry of @p op (any 4-bit value; an unknown one has hdr_len 0). */
static inline const struct rnic_rdmap_op_info *rnic_rdmap_op(uint8_t op)
{
	return &rnic_rdmap_ops[op & RNIC_RDMAP_OPCODE_MASK];
}

#endif
