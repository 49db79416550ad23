/* SPDX-License-Identifier: BSD-3-Clause */
/* Transport header parsing and the RoCE drop cause names. */
#include <errno.h>

#include "roce/roce_wire.h"

static const char *const roce_drop_names[RNIC_ROCE_DROP_MAX] = {
#define RNIC_ROCE_DROP_NAME(sym, name) [RNIC_ROCE_DROP_##sym] = name,
	RNIC_ROCE_DROP_CAUSES(RNIC_ROCE_DROP_NAME)
#undef RNIC_ROCE_DROP_NAME
};

const char *
rnic_roce_drop_name(enum rnic_roce_drop c)
{
	if ((unsigned int)c >= RNIC_ROCE_DROP_MAX)
		return "roce_unknown";
	return roce_drop_names[c];
}

/* Record the cause (if wanted) and return @err. */
static int
roce_reject(enum rnic_roce_drop *cause, enum rnic_roce_drop c, int err)
{
	if (cause != NULL)
		*cause = c;
	return err;
}

int
rnic_roce_pkt_parse(struct rnic_roce_pkt *pkt, void *bth, uint32_t len,
		    enum rnic_roce_drop *cause)
{
	const struct rnic_roce_bth *h = bth;
	const struct rnic_roce_opinfo *op;
	uint32_t body;
	unsigned int pad;

	if (len < RNIC_ROCE_BTH_LEN + RNIC_ROCE_ICRC_LEN)
		return roce_reject(cause, RNIC_ROCE_DROP_SHORT, -EINVAL);
	op = rnic_roce_op(rnic_roce_bth_opcode(h));
	if (op->flags == 0)
		return roce_reject(cause, RNIC_ROCE_DROP_OPCODE,
				   -EPROTONOSUPPORT);
	if (rnic_roce_bth_tver(h) != RNIC_ROCE_TVER)
		return roce_reject(cause, RNIC_ROCE_DROP_TVER, -EPROTONOSUPPORT);
	if (len < (uint32_t)op->length + RNIC_ROCE_ICRC_LEN)
		return roce_reject(cause, RNIC_ROCE_DROP_HDR_LEN, -EINVAL);

	/* What follows the headers: payload, then pad, then the ICRC. */
	body = len - op->length - RNIC_ROCE_ICRC_LEN;
	pad = rnic_roce_bth_pad(h);
	if (!(op->flags & RNIC_ROCE_OPF_PAYLOAD) && (body != 0 || pad != 0))
		return roce_reject(cause, RNIC_ROCE_DROP_PAYLOAD, -EINVAL);
	/* The pad rounds the payload up to a multiple of 4 (IBTA 9.2.3):
	 * it must fit, and header + payload + pad must end 4-aligned. */
	if (pad > body || (body & 3u) != 0)
		return roce_reject(cause, RNIC_ROCE_DROP_PAD, -EINVAL);

	pkt->bth = bth;
	pkt->flags = op->flags;
	pkt->opcode = rnic_roce_bth_opcode(h);
	pkt->pad = (uint8_t)pad;
	pkt->paylen = body - pad;
	return 0;
}
