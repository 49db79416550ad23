/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer harness: the MPA FPDU receive parser (lib/iwarp/fpdu.c).
 *
 * Input: mode byte, 4-byte start position (marker base), 4-byte split seed,
 * then the body. Mode bit 0: CRC on; bit 1: markers on; bit 3: the observer
 * skips some payloads. Bit 2 selects the property:
 *   0  the body is a raw byte stream. It is parsed in one call and again in
 *      chunks cut at pseudo-random boundaries; both parses must see the same
 *      headers, payload bytes, completions and final state, and every call
 *      must honour the consumed-bytes contract (fpdu_obs.h).
 *   1  round trip: the body chooses a run of FPDUs (opcode, L flag, header
 *      bytes, payload); they are framed with rnic_fpdu_build() and the
 *      chunked parse must return exactly what was framed, with no error.
 */
#include <rte_common.h>

#include "fpdu_obs.h"

#define RT_MAX_FPDUS 48

/* Opcodes the parser accepts, with their buffer model. */
static const struct {
	uint8_t op;
	bool tagged;
	uint16_t hdr_len;
} rt_ops[] = {
	{ RNIC_RDMAP_OP_WRITE, true, 14 },
	{ RNIC_RDMAP_OP_READ_REQ, false, 18 + 28 },
	{ RNIC_RDMAP_OP_READ_RESP, true, 14 },
	{ RNIC_RDMAP_OP_SEND, false, 18 },
	{ RNIC_RDMAP_OP_SEND_INV, false, 18 },
	{ RNIC_RDMAP_OP_SEND_SE, false, 18 },
	{ RNIC_RDMAP_OP_SEND_SE_INV, false, 18 },
	{ RNIC_RDMAP_OP_TERMINATE, false, 18 + 4 },
	{ RNIC_RDMAP_OP_ATOMIC_REQ, false, 18 + 52 },
	{ RNIC_RDMAP_OP_ATOMIC_RESP, false, 18 + 12 },
	{ RNIC_RDMAP_OP_IMM_DATA, false, 18 + 8 },
	{ RNIC_RDMAP_OP_IMM_DATA_SE, false, 18 + 8 },
};

/* Parse the raw stream whole and chunked; compare. */
static void
fpdu_split_invariance(bool crc, bool markers, bool skip, uint32_t start,
		      uint32_t seed, const uint8_t *p, size_t len)
{
	struct rnic_fpdu_rx *a = malloc(sizeof(*a)), *b = malloc(sizeof(*b));
	struct fpdu_obs oa, ob;
	struct fuzz_rng rng;
	size_t ua, ub;
	int rca, rcb;

	FUZZ_CHECK(a != NULL && b != NULL);
	fpdu_obs_init(&oa, skip);
	fpdu_obs_init(&ob, skip);
	rnic_fpdu_rx_init(a, crc, markers, start, &fpdu_obs_ops, &oa);
	rnic_fpdu_rx_init(b, crc, markers, start, &fpdu_obs_ops, &ob);
	fuzz_rng_init(&rng, seed);
	ua = fpdu_obs_run(a, &oa, p, len, NULL, &rca);
	ub = fpdu_obs_run(b, &ob, p, len, &rng, &rcb);

	FUZZ_CHECK(ua == ub);
	FUZZ_CHECK(rca == rcb);
	FUZZ_CHECK(oa.digest == ob.digest);
	FUZZ_CHECK(oa.hdrs == ob.hdrs && oa.dones == ob.dones);
	FUZZ_CHECK(a->stage == b->stage && a->pos == b->pos);
	FUZZ_CHECK(a->pos == start + (uint32_t)ua);
	FUZZ_CHECK(a->err == b->err);
	if (rca == -EPROTO) {
		struct rnic_term_offender off;
		uint8_t term[RNIC_TERM_ULPDU_MAX];

		FUZZ_CHECK(a->err == b->err);
		/* The error path: the offender feeds a Terminate. */
		rnic_fpdu_rx_offender(a, &off);
		if (off.ddp_hdr != NULL)
			FUZZ_CHECK(off.ddp_hdr >= a->hdr &&
				   off.ddp_hdr + RNIC_DDP_UNTAGGED_HDR_LEN <=
				   a->hdr + sizeof(a->hdr));
		FUZZ_CHECK(rnic_term_build((enum rnic_term_cause)a->err, 0, &off,
					   term, sizeof(term)) > 0);
	}
	free(a);
	free(b);
}

/* Frame FPDUs chosen by the input, parse them back in chunks. */
static void
fpdu_round_trip(bool crc, bool markers, bool skip, uint32_t start,
		uint32_t seed, struct fuzz_in *in)
{
	static uint8_t wire[RT_MAX_FPDUS * 1200 + 70 * 1024];
	uint8_t hdr[RNIC_IWARP_HDR_MAX], *payload = malloc(RNIC_MPA_ULPDU_MAX);
	struct rnic_fpdu_rx *rx = malloc(sizeof(*rx));
	struct rnic_fpdu_tx tx;
	struct fpdu_obs obs, want;
	struct fuzz_rng rng;
	size_t wlen = 0, big_used = 0;
	unsigned n = 0;
	int rc;

	FUZZ_CHECK(payload != NULL && rx != NULL);
	fpdu_obs_init(&want, skip);
	rnic_fpdu_tx_init(&tx, crc, markers, start);
	while (fuzz_in_left(in) > 0 && n < RT_MAX_FPDUS) {
		uint8_t sel = fuzz_u8(in);
		unsigned k = (unsigned)(sel & 0x0f) % RTE_DIM(rt_ops);
		uint16_t hl = rt_ops[k].hdr_len;
		uint32_t plen = fuzz_u16(in);
		struct iovec iov;
		size_t got, i, tl;
		const uint8_t *src;
		uint32_t pos = tx.pos;

		/* One big FPDU per input at most: 64 KiB ULPDUs and the
		 * 16-bit FPDUPTR limit; others stay below 1 KiB. */
		if ((sel & 0x40) && big_used == 0)
			big_used = 1;
		else
			plen %= 1024;
		if (plen > RNIC_MPA_ULPDU_MAX - hl)
			plen = RNIC_MPA_ULPDU_MAX - hl;
		hdr[0] = rnic_ddp_ctrl(rt_ops[k].tagged, (sel & 0x80) != 0);
		hdr[1] = rnic_rdmap_ctrl(rt_ops[k].op);
		src = fuzz_bytes(in, hl - 2u, &got);
		memcpy(hdr + 2, src, got);
		memset(hdr + 2 + got, 0, hl - 2u - got);
		src = fuzz_bytes(in, plen, &got);
		memcpy(payload, src, got);
		for (i = got; i < plen; i++)
			payload[i] = (uint8_t)(i * 31 + n);
		iov.iov_base = payload;
		iov.iov_len = plen;

		tl = rnic_fpdu_tx_len(&tx, hl + plen);
		rc = rnic_fpdu_build(&tx, hdr, hl, &iov, 1, wire + wlen,
				     sizeof(wire) - wlen);
		if (markers && tl > RNIC_MPA_ULPDU_MAX + 1) {
			/* FPDUPTR would overflow: refused, nothing changed. */
			FUZZ_CHECK(rc == -EMSGSIZE && tx.pos == pos);
			continue;
		}
		FUZZ_CHECK(rc > 0 && (size_t)rc == tl);
		FUZZ_CHECK(tl % 4 == 0 || markers);
		FUZZ_CHECK(tx.pos == pos + (uint32_t)tl);
		wlen += tl;
		want.digest = fpdu_obs_fold_hdr(want.digest, hdr, hl,
						(uint16_t)(hl + plen), pos);
		if (!fpdu_obs_skips(&want, hdr))
			want.digest = fuzz_digest(want.digest, payload, plen);
		want.digest = fuzz_digest(want.digest, "D", 1);
		n++;
	}

	/* Small capacity: -ENOSPC and no state change. */
	{
		uint32_t pos = tx.pos;
		struct iovec iov = { .iov_base = payload, .iov_len = 4 };

		hdr[0] = rnic_ddp_ctrl(false, true);
		hdr[1] = rnic_rdmap_ctrl(RNIC_RDMAP_OP_SEND);
		FUZZ_CHECK(rnic_fpdu_build(&tx, hdr, 18, &iov, 1, wire,
					   rnic_fpdu_tx_len(&tx, 22) - 1) ==
			   -ENOSPC);
		FUZZ_CHECK(tx.pos == pos);
	}

	fpdu_obs_init(&obs, skip);
	rnic_fpdu_rx_init(rx, crc, markers, start, &fpdu_obs_ops, &obs);
	fuzz_rng_init(&rng, seed);
	FUZZ_CHECK(fpdu_obs_run(rx, &obs, wire, wlen, &rng, &rc) == wlen);
	FUZZ_CHECK(rc == -EAGAIN);
	FUZZ_CHECK(obs.dones == n && rx->err == 0);
	FUZZ_CHECK(rx->stage == RNIC_FPDU_ST_LEN && rx->got == 0);
	FUZZ_CHECK(obs.digest == want.digest);
	free(rx);
	free(payload);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_in in;
	uint8_t mode;
	uint32_t start, seed;

	fuzz_in_init(&in, data, size);
	mode = fuzz_u8(&in);
	start = fuzz_u32(&in);
	seed = fuzz_u32(&in);
	if (mode & 4)
		fpdu_round_trip(mode & 1, mode & 2, mode & 8, start, seed, &in);
	else
		fpdu_split_invariance(mode & 1, mode & 2, mode & 8, start, seed,
				      data + in.off, fuzz_in_left(&in));
	return 0;
}
