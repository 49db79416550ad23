/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer harness: DDP/RDMAP header validation and the Terminate builder
 * (lib/iwarp/fpdu.c header stage, lib/iwarp/terminate.c).
 *
 * Input: cause byte, MSN (4), option byte, DDP Segment Length (2),
 * capacity byte, 18 offending-header bytes, 28 Read Request bytes, then one
 * ULPDU.
 *  - rnic_term_build() gets the cause (also out of range), offending
 *    headers in buffers of exactly the length it may read, and an output
 *    buffer of exactly the capacity; its result is decoded and compared
 *    with rnic_term_info().
 *  - The ULPDU is framed with a valid CRC (and markers when option bit 3 is
 *    set) and parsed, so every input reaches the DDP/RDMAP checks; whether
 *    it is accepted, and with which Terminate cause it is refused, must
 *    match an independent table of RFC 5040/5041/7306 rules. The refusal's
 *    offender must produce a Terminate that quotes the segment's header.
 */
#include <rte_common.h>

#include "fpdu_obs.h"

/* Fixed header length per opcode (0: invalid) and the buffer model, from
 * RFC 5040 section 4 and RFC 7306 section 8, typed in independently of
 * fpdu.c. */
static const struct {
	uint8_t len;
	bool tagged;
} ddp_oracle[16] = {
	[0x0] = { 14, true },        /* RDMA Write */
	[0x1] = { 18 + 28, false },  /* Read Request */
	[0x2] = { 14, true },        /* Read Response */
	[0x3] = { 18, false },       /* Send */
	[0x4] = { 18, false },       /* Send with Invalidate */
	[0x5] = { 18, false },       /* Send with SE */
	[0x6] = { 18, false },       /* Send with SE and Invalidate */
	[0x7] = { 18 + 4, false },   /* Terminate */
	[0x8] = { 18 + 8, false },   /* Immediate Data (RFC 7306) */
	[0x9] = { 18 + 8, false },   /* Immediate Data with SE */
	[0xa] = { 18 + 52, false },  /* Atomic Request */
	[0xb] = { 18 + 12, false },  /* Atomic Response */
};

/* The cause a ULPDU must be refused with, or RNIC_TERM_MAX if valid. */
static enum rnic_term_cause
ddp_expect(const uint8_t *u, size_t len)
{
	uint8_t op;

	if (len < 2)
		return RNIC_TERM_DDP_CATASTROPHIC;
	if ((u[0] & 0x03) != 1)
		return (u[0] & 0x80) ? RNIC_TERM_DDP_T_VERSION :
				       RNIC_TERM_DDP_U_VERSION;
	if ((u[1] >> 6) != 1)
		return RNIC_TERM_RDMAP_VERSION;
	op = u[1] & 0x0f;
	if (ddp_oracle[op].len == 0 ||
	    ddp_oracle[op].tagged != ((u[0] & 0x80) != 0))
		return RNIC_TERM_RDMAP_OPCODE;
	if (len < ddp_oracle[op].len)
		return RNIC_TERM_DDP_CATASTROPHIC;
	return RNIC_TERM_MAX;
}

/* Build a Terminate and decode it. */
static void
ddp_terminate(unsigned cause, uint32_t msn, uint8_t opt, uint16_t seg_len,
	      size_t cap, const uint8_t *ddp_src, const uint8_t *rr_src)
{
	const struct rnic_term_info *ti = rnic_term_info(cause);
	struct rnic_term_offender off = { .ddp_seg_len = seg_len };
	size_t ddp_len = (ddp_src[0] & 0x80) ? 14 : 18, need;
	uint8_t *ddp = NULL, *rr = NULL, *out = malloc(cap > 0 ? cap : 1);
	bool with_ddp, with_rr;
	int rc;

	FUZZ_CHECK(out != NULL);
	FUZZ_CHECK(rnic_term_name(cause) != NULL);
	if (opt & 1) {
		ddp = malloc(ddp_len);
		FUZZ_CHECK(ddp != NULL);
		memcpy(ddp, ddp_src, ddp_len);
		off.ddp_hdr = ddp;
	}
	if (opt & 2) {
		rr = malloc(28);
		FUZZ_CHECK(rr != NULL);
		memcpy(rr, rr_src, 28);
		off.read_req = rr;
	}
	rc = rnic_term_build(cause, msn, (opt & 4) ? NULL : &off, out, cap);
	if (cause >= RNIC_TERM_MAX) {
		FUZZ_CHECK(ti == NULL && rc == -EINVAL);
		goto out;
	}
	FUZZ_CHECK(ti != NULL && ti->name != NULL);
	with_ddp = ti->hdrs != RNIC_TERM_HDRS_NONE && ddp != NULL && !(opt & 4);
	with_rr = ti->hdrs == RNIC_TERM_HDRS_ALL && rr != NULL && !(opt & 4);
	need = 18 + 4 + (with_ddp ? 2 + ddp_len : 0) + (with_rr ? 28 : 0);
	FUZZ_CHECK(need <= RNIC_TERM_ULPDU_MAX);
	if (cap < need) {
		FUZZ_CHECK(rc == -ENOSPC);
		goto out;
	}
	FUZZ_CHECK(rc == (int)need);
	{
		struct rnic_ddp_untagged_hdr h;
		struct rnic_rdmap_term_hdr t;
		size_t n = 22;

		memcpy(&h, out, sizeof(h));
		memcpy(&t, out + 18, sizeof(t));
		FUZZ_CHECK(h.ddp_ctrl == rnic_ddp_ctrl(false, true));
		FUZZ_CHECK(h.rdmap_ctrl ==
			   rnic_rdmap_ctrl(RNIC_RDMAP_OP_TERMINATE));
		FUZZ_CHECK(rte_be_to_cpu_32(h.qn) == RNIC_DDP_QN_TERMINATE);
		FUZZ_CHECK(rte_be_to_cpu_32(h.msn) == msn && h.mo == 0);
		FUZZ_CHECK(rnic_term_layer(&t) == ti->layer &&
			   rnic_term_etype(&t) == ti->etype &&
			   rnic_term_ecode(&t) == ti->ecode);
		FUZZ_CHECK(!!(t.term_ctrl & RNIC_TERM_HDRCT_M) == with_ddp);
		FUZZ_CHECK(!!(t.term_ctrl & RNIC_TERM_HDRCT_D) == with_ddp);
		FUZZ_CHECK(!!(t.term_ctrl & RNIC_TERM_HDRCT_R) == with_rr);
		FUZZ_CHECK((t.term_ctrl & RNIC_TERM_RSVD_MASK) == 0);
		if (with_ddp) {
			FUZZ_CHECK(out[n] == (seg_len >> 8) &&
				   out[n + 1] == (uint8_t)seg_len);
			FUZZ_CHECK(memcmp(out + n + 2, ddp, ddp_len) == 0);
			n += 2 + ddp_len;
		}
		if (with_rr)
			FUZZ_CHECK(memcmp(out + n, rr, 28) == 0);
	}
out:
	free(out);
	free(ddp);
	free(rr);
}

/* Frame one ULPDU with a good CRC and parse it: accept or refuse exactly
 * as the oracle says. */
static void
ddp_validate(const uint8_t *u, size_t len, bool markers, uint32_t start)
{
	static uint8_t wire[RNIC_MPA_ULPDU_MAX + 1024];
	struct rnic_fpdu_rx *rx = malloc(sizeof(*rx));
	struct rnic_fpdu_tx tx;
	struct fpdu_obs obs;
	struct iovec iov = { .iov_base = (void *)(uintptr_t)u, .iov_len = len };
	enum rnic_term_cause want = ddp_expect(u, len);
	size_t used;
	int wlen, rc;

	FUZZ_CHECK(rx != NULL);
	rnic_fpdu_tx_init(&tx, true, markers, start);
	wlen = rnic_fpdu_build(&tx, NULL, 0, &iov, 1, wire, sizeof(wire));
	if (wlen < 0) {
		FUZZ_CHECK(wlen == -EMSGSIZE);
		free(rx);
		return;
	}
	fpdu_obs_init(&obs, false);
	rnic_fpdu_rx_init(rx, true, markers, start, &fpdu_obs_ops, &obs);
	rc = fpdu_obs_feed(rx, &obs, wire, (size_t)wlen, &used);
	if (want == RNIC_TERM_MAX) {
		FUZZ_CHECK(rc == -EAGAIN && obs.dones == 1);
		FUZZ_CHECK(rx->err == 0 && !rx->has_pending);
	} else {
		struct rnic_term_offender off;
		uint8_t term[RNIC_TERM_ULPDU_MAX];
		int tl;

		FUZZ_CHECK(rc == -EPROTO && obs.dones == 0);
		FUZZ_CHECK(rx->err == want);
		FUZZ_CHECK(used == (size_t)wlen);
		rnic_fpdu_rx_offender(rx, &off);
		FUZZ_CHECK(off.ddp_seg_len == len);
		tl = rnic_term_build(want, 0, &off, term, sizeof(term));
		FUZZ_CHECK(tl >= 22);
		if (off.ddp_hdr != NULL) {
			size_t dl = (u[0] & 0x80) ? 14 : 18;

			FUZZ_CHECK(len >= dl);
			FUZZ_CHECK(memcmp(off.ddp_hdr, u, dl) == 0);
		}
	}
	free(rx);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t ddp_src[18] = { 0 }, rr_src[28] = { 0 };
	struct fuzz_in in;
	unsigned cause;
	uint32_t msn;
	uint16_t seg_len;
	uint8_t opt;
	size_t cap, got;
	const uint8_t *p;

	fuzz_in_init(&in, data, size);
	cause = fuzz_u8(&in) % (RNIC_TERM_MAX + 4);
	msn = fuzz_u32(&in);
	opt = fuzz_u8(&in);
	seg_len = fuzz_u16(&in);
	cap = fuzz_u8(&in) % (RNIC_TERM_ULPDU_MAX + 8);
	p = fuzz_bytes(&in, sizeof(ddp_src), &got);
	memcpy(ddp_src, p, got);
	p = fuzz_bytes(&in, sizeof(rr_src), &got);
	memcpy(rr_src, p, got);
	ddp_terminate(cause, msn, opt, seg_len, cap, ddp_src, rr_src);

	/* Fault helpers: any value maps to a defined cause. */
	FUZZ_CHECK(rnic_term_tagged_fault((enum rnic_stag_fault)(opt & 7)) <
		   RNIC_TERM_MAX);
	FUZZ_CHECK(rnic_term_read_src_fault((enum rnic_stag_fault)(opt & 7)) <
		   RNIC_TERM_MAX);

	ddp_validate(data + in.off, fuzz_in_left(&in), opt & 8, msn);
	return 0;
}
