/* SPDX-License-Identifier: BSD-3-Clause */
/* Terminate cause table and Terminate message builder (see terminate.h). */
#include <errno.h>
#include <string.h>

#include "iwarp/iwarp_wire.h"
#include "iwarp/terminate.h"

static const struct rnic_term_info term_table[RNIC_TERM_MAX] = {
#define RNIC_TERM_ROW(sym, l, t, c, h, nm)                           \
	[RNIC_TERM_##sym] = { .layer = RNIC_TERM_LAYER_##l,          \
			      .etype = RNIC_TERM_ETYPE_##t,          \
			      .ecode = c,                            \
			      .hdrs = RNIC_TERM_HDRS_##h,            \
			      .name = nm },
	RNIC_TERM_CAUSES(RNIC_TERM_ROW)
#undef RNIC_TERM_ROW
};

const struct rnic_term_info *
rnic_term_info(enum rnic_term_cause c)
{
	if ((unsigned int)c >= RNIC_TERM_MAX)
		return NULL;
	return &term_table[c];
}

const char *
rnic_term_name(enum rnic_term_cause c)
{
	const struct rnic_term_info *ti = rnic_term_info(c);

	return ti != NULL ? ti->name : "?";
}

enum rnic_term_cause
rnic_term_tagged_fault(enum rnic_stag_fault f)
{
	switch (f) {
	case RNIC_STAG_BOUNDS:
		return RNIC_TERM_DDP_T_BASE_BOUNDS;
	case RNIC_STAG_ACCESS:
		return RNIC_TERM_RDMAP_ACCESS_RIGHTS;
	case RNIC_STAG_PD:
		return RNIC_TERM_DDP_T_STAG_NOT_ASSOC;
	case RNIC_STAG_TO_WRAP:
		return RNIC_TERM_DDP_T_TO_WRAP;
	case RNIC_STAG_INVALID:
	default:
		return RNIC_TERM_DDP_T_INVALID_STAG;
	}
}

enum rnic_term_cause
rnic_term_read_src_fault(enum rnic_stag_fault f)
{
	switch (f) {
	case RNIC_STAG_BOUNDS:
		return RNIC_TERM_RDMAP_BASE_BOUNDS;
	case RNIC_STAG_ACCESS:
		return RNIC_TERM_RDMAP_ACCESS_RIGHTS;
	case RNIC_STAG_PD:
		return RNIC_TERM_RDMAP_STAG_NOT_ASSOC;
	case RNIC_STAG_TO_WRAP:
		return RNIC_TERM_RDMAP_TO_WRAP;
	case RNIC_STAG_INVALID:
	default:
		return RNIC_TERM_RDMAP_INVALID_STAG;
	}
}

enum rnic_term_cause
rnic_term_inv_fault(enum rnic_stag_fault f)
{
	/* Linux siw: a PD (or rights) refusal is Remote Protection, an STag
	 * it cannot find Remote Operation; code 0x09 either way */
	switch (f) {
	case RNIC_STAG_ACCESS:
	case RNIC_STAG_PD:
		return RNIC_TERM_RDMAP_INV_PROTECTION;
	default:
		return RNIC_TERM_RDMAP_CANNOT_INVALIDATE;
	}
}

/* Length of the DDP header that starts at @p hdr (from its T bit). */
static uint16_t
term_ddp_hdr_len(const uint8_t *hdr)
{
	return rnic_ddp_tagged(hdr[0]) ? RNIC_DDP_TAGGED_HDR_LEN :
					 RNIC_DDP_UNTAGGED_HDR_LEN;
}

int
rnic_term_build(enum rnic_term_cause cause, uint32_t msn,
		const struct rnic_term_offender *off, uint8_t *out, size_t cap)
{
	const struct rnic_term_info *ti = rnic_term_info(cause);
	struct rnic_ddp_untagged_hdr ddp;
	struct rnic_rdmap_term_hdr term;
	bool with_ddp, with_rdma;
	uint16_t ddp_len = 0;
	size_t need, n;

	if (ti == NULL)
		return -EINVAL;
	with_ddp = ti->hdrs != RNIC_TERM_HDRS_NONE && off != NULL &&
		   off->ddp_hdr != NULL;
	with_rdma = ti->hdrs == RNIC_TERM_HDRS_ALL && off != NULL &&
		    off->read_req != NULL;
	if (with_ddp)
		ddp_len = term_ddp_hdr_len(off->ddp_hdr);
	need = sizeof(ddp) + sizeof(term) + (with_ddp ? 2u + ddp_len : 0) +
	       (with_rdma ? sizeof(struct rnic_rdmap_read_req_hdr) : 0);
	if (cap < need)
		return -ENOSPC;

	memset(&ddp, 0, sizeof(ddp));
	ddp.ddp_ctrl = rnic_ddp_ctrl(false, true);
	ddp.rdmap_ctrl = rnic_rdmap_ctrl(RNIC_RDMAP_OP_TERMINATE);
	ddp.qn = rte_cpu_to_be_32(RNIC_DDP_QN_TERMINATE);
	ddp.msn = rte_cpu_to_be_32(msn);
	rnic_term_set(&term, ti->layer, ti->etype, ti->ecode, with_ddp,
		      with_ddp, with_rdma);

	memcpy(out, &ddp, sizeof(ddp));
	n = sizeof(ddp);
	memcpy(out + n, &term, sizeof(term));
	n += sizeof(term);
	if (with_ddp) {
		out[n++] = (uint8_t)(off->ddp_seg_len >> 8);
		out[n++] = (uint8_t)off->ddp_seg_len;
		memcpy(out + n, off->ddp_hdr, ddp_len);
		n += ddp_len;
	}
	if (with_rdma) {
		memcpy(out + n, off->read_req,
		       sizeof(struct rnic_rdmap_read_req_hdr));
		n += sizeof(struct rnic_rdmap_read_req_hdr);
	}
	return (int)n;
}
