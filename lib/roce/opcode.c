/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The RoCEv2 opcode table and the opcode sequence checks. Offsets and
 * lengths are derived at compile time from each opcode's header flags and
 * the fixed header order of IBTA 9.2, so the flags are the only thing typed
 * per opcode; tests/unit/roce checks the result against an independent list.
 */
#include <stddef.h>

#include "roce/opcode.h"

/* Length contributed by header @f if present in @fl, else 0. */
#define OP_LEN_IF(fl, f, len) (((fl) & RNIC_ROCE_OPF_##f) ? (len) : 0u)

/* Offsets of each header in IBTA order: DETH RETH AtomicETH AETH
 * AtomicAckETH ImmDt IETH, then the payload. */
#define OP_END_DETH(fl)   (RNIC_ROCE_BTH_LEN + OP_LEN_IF(fl, DETH, RNIC_ROCE_DETH_LEN))
#define OP_END_RETH(fl)   (OP_END_DETH(fl) + OP_LEN_IF(fl, RETH, RNIC_ROCE_RETH_LEN))
#define OP_END_ATMETH(fl) (OP_END_RETH(fl) + OP_LEN_IF(fl, ATMETH, RNIC_ROCE_ATMETH_LEN))
#define OP_END_AETH(fl)   (OP_END_ATMETH(fl) + OP_LEN_IF(fl, AETH, RNIC_ROCE_AETH_LEN))
#define OP_END_ATMACK(fl) (OP_END_AETH(fl) + OP_LEN_IF(fl, ATMACK, RNIC_ROCE_ATMACK_LEN))
#define OP_END_IMMDT(fl)  (OP_END_ATMACK(fl) + OP_LEN_IF(fl, IMMDT, RNIC_ROCE_IMMDT_LEN))
#define OP_END_IETH(fl)   (OP_END_IMMDT(fl) + OP_LEN_IF(fl, IETH, RNIC_ROCE_IETH_LEN))
/* A CNP's 16 reserved bytes count as header: it carries no payload. */
#define OP_LENGTH(fl)     (OP_END_IETH(fl) + \
			   OP_LEN_IF(fl, CNPRSVD, RNIC_ROCE_CNP_RSVD_LEN))

/* Offset of header @f (which starts where its predecessor ends), 0 if absent. */
#define OP_OFF(fl, f, prev_end) (((fl) & RNIC_ROCE_OPF_##f) ? (prev_end) : 0u)

#define OP_ENTRY(sym, val, fl)                                                \
	[val] = {                                                             \
		.name = #sym,                                                 \
		.flags = (fl),                                                \
		.length = OP_LENGTH(fl),                                      \
		.offset = {                                                   \
			[RNIC_ROCE_HDR_DETH] = OP_OFF(fl, DETH, RNIC_ROCE_BTH_LEN), \
			[RNIC_ROCE_HDR_RETH] = OP_OFF(fl, RETH, OP_END_DETH(fl)), \
			[RNIC_ROCE_HDR_ATMETH] = OP_OFF(fl, ATMETH, OP_END_RETH(fl)), \
			[RNIC_ROCE_HDR_AETH] = OP_OFF(fl, AETH, OP_END_ATMETH(fl)), \
			[RNIC_ROCE_HDR_ATMACK] = OP_OFF(fl, ATMACK, OP_END_AETH(fl)), \
			[RNIC_ROCE_HDR_IMMDT] = OP_OFF(fl, IMMDT, OP_END_ATMACK(fl)), \
			[RNIC_ROCE_HDR_IETH] = OP_OFF(fl, IETH, OP_END_IMMDT(fl)), \
			[RNIC_ROCE_HDR_PAYLOAD] = OP_LENGTH(fl),              \
		},                                                            \
	},

const struct rnic_roce_opinfo rnic_roce_optable[256] = {
	RNIC_ROCE_OPCODES(OP_ENTRY)
};

const char *
rnic_roce_op_name(uint8_t op)
{
	const char *n = rnic_roce_optable[op].name;

	return n != NULL ? n : "UNKNOWN";
}

bool
rnic_roce_op_seq_ok(enum rnic_roce_opcode prev, uint8_t next)
{
	/* Only RC requests reach an RC responder's sequence check. */
	if (!rnic_roce_op_has(next, RNIC_ROCE_OPF_RC | RNIC_ROCE_OPF_REQ))
		return false;

	switch (prev) {
	case RNIC_ROCE_OP_RC_SEND_FIRST:
	case RNIC_ROCE_OP_RC_SEND_MIDDLE:
		/* A Send is in progress: it must continue or end. */
		return rnic_roce_op_has(next, RNIC_ROCE_OPF_SEND) &&
		       (rnic_roce_op_has(next, RNIC_ROCE_OPF_MIDDLE) ||
			rnic_roce_op_has(next, RNIC_ROCE_OPF_LAST));
	case RNIC_ROCE_OP_RC_WRITE_FIRST:
	case RNIC_ROCE_OP_RC_WRITE_MIDDLE:
		return rnic_roce_op_has(next, RNIC_ROCE_OPF_WRITE) &&
		       (rnic_roce_op_has(next, RNIC_ROCE_OPF_MIDDLE) ||
			rnic_roce_op_has(next, RNIC_ROCE_OPF_LAST));
	default:
		/* Between messages: a message must start here. */
		return (rnic_roce_op(next)->flags & RNIC_ROCE_OPF_START) != 0;
	}
}

bool
rnic_roce_read_resp_seq_ok(enum rnic_roce_opcode prev, uint8_t next)
{
	bool in_progress = prev == RNIC_ROCE_OP_RC_READ_RESPONSE_FIRST ||
			   prev == RNIC_ROCE_OP_RC_READ_RESPONSE_MIDDLE;

	if (!rnic_roce_op_has(next, RNIC_ROCE_OPF_RC | RNIC_ROCE_OPF_RESP |
				    RNIC_ROCE_OPF_READ))
		return false;
	if (in_progress)
		return (rnic_roce_op(next)->flags &
			(RNIC_ROCE_OPF_MIDDLE | RNIC_ROCE_OPF_LAST)) != 0;
	return (rnic_roce_op(next)->flags & RNIC_ROCE_OPF_START) != 0;
}
