/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * FPDU parser observer shared by the iWARP harnesses: upcalls that check the
 * parser's contract on every call (header consistent with its control
 * bytes, payload offsets contiguous and inside the FPDU, payload pointers
 * inside the chunk being fed, done() only after a full payload) and fold
 * what they see into a digest, so two parses of the same stream can be
 * compared however it was split. Also a feeder that checks the
 * consumed-bytes contract of rnic_fpdu_rx_input().
 */
#ifndef RNIC_FUZZ_FPDU_OBS_H
#define RNIC_FUZZ_FPDU_OBS_H

#include <errno.h>
#include <stdbool.h>

#include "iwarp/fpdu.h"
#include "fuzz_util.h"

struct fpdu_obs {
	uint64_t digest;
	uint64_t hdrs;
	uint64_t dones;
	bool skip_odd;          /* return SKIP for headers with hdr[2] odd */
	bool in_fpdu;
	bool skipped;
	uint32_t next_off;
	const uint8_t *chunk;   /* the chunk being fed */
	size_t chunk_len;
};

static inline void
fpdu_obs_init(struct fpdu_obs *o, bool skip_odd)
{
	memset(o, 0, sizeof(*o));
	o->digest = FUZZ_DIGEST_INIT;
	o->skip_odd = skip_odd;
}

/* Whether the observer skips the payload behind header @p hdr. */
static inline bool
fpdu_obs_skips(const struct fpdu_obs *o, const uint8_t *hdr)
{
	return o->skip_odd && (hdr[2] & 1);
}

/* What the observer folds in for one header: the expected-value builder in
 * the round-trip harness does the same. */
static inline uint64_t
fpdu_obs_fold_hdr(uint64_t h, const uint8_t *hdr, uint16_t hdr_len,
		  uint16_t ulpdu_len, uint32_t pos)
{
	h = fuzz_digest(h, hdr, hdr_len);
	h = fuzz_digest(h, &ulpdu_len, sizeof(ulpdu_len));
	return fuzz_digest(h, &pos, sizeof(pos));
}

static int
fpdu_obs_hdr(void *arg, const struct rnic_fpdu_info *fi)
{
	struct fpdu_obs *o = arg;

	FUZZ_CHECK(!o->in_fpdu);
	FUZZ_CHECK(fi->hdr_len >= RNIC_DDP_TAGGED_HDR_LEN &&
		   fi->hdr_len <= RNIC_IWARP_HDR_MAX);
	FUZZ_CHECK((uint32_t)fi->ulpdu_len == fi->hdr_len + fi->payload_len);
	FUZZ_CHECK(rnic_ddp_dv(fi->hdr[0]) == RNIC_DDP_VERSION);
	FUZZ_CHECK(rnic_rdmap_rv(fi->hdr[1]) == RNIC_RDMAP_VERSION);
	FUZZ_CHECK(fi->opcode == rnic_rdmap_opcode(fi->hdr[1]));
	FUZZ_CHECK(fi->tagged == rnic_ddp_tagged(fi->hdr[0]));
	FUZZ_CHECK(fi->last == rnic_ddp_last(fi->hdr[0]));
	if (fi->tagged)
		FUZZ_CHECK(fi->hdr_len == RNIC_DDP_TAGGED_HDR_LEN);
	else
		FUZZ_CHECK(fi->hdr_len >= RNIC_DDP_UNTAGGED_HDR_LEN);
	o->digest = fpdu_obs_fold_hdr(o->digest, fi->hdr, fi->hdr_len,
				      fi->ulpdu_len, fi->fpdu_pos);
	o->hdrs++;
	o->in_fpdu = true;
	o->next_off = 0;
	o->skipped = fpdu_obs_skips(o, fi->hdr);
	return o->skipped ? RNIC_FPDU_SKIP : 0;
}

static int
fpdu_obs_payload(void *arg, const struct rnic_fpdu_info *fi, uint32_t off,
		 const uint8_t *data, uint32_t len)
{
	struct fpdu_obs *o = arg;

	FUZZ_CHECK(o->in_fpdu && !o->skipped);
	FUZZ_CHECK(len > 0);
	FUZZ_CHECK(off == o->next_off);
	FUZZ_CHECK(off + len <= fi->payload_len);
	FUZZ_CHECK(data >= o->chunk && data + len <= o->chunk + o->chunk_len);
	o->digest = fuzz_digest(o->digest, data, len);
	o->next_off += len;
	return 0;
}

static int
fpdu_obs_done(void *arg, const struct rnic_fpdu_info *fi)
{
	struct fpdu_obs *o = arg;

	FUZZ_CHECK(o->in_fpdu);
	FUZZ_CHECK(o->skipped || o->next_off == fi->payload_len);
	o->digest = fuzz_digest(o->digest, "D", 1);
	o->dones++;
	o->in_fpdu = false;
	return 0;
}

static const struct rnic_fpdu_rx_ops fpdu_obs_ops = {
	.hdr = fpdu_obs_hdr,
	.payload = fpdu_obs_payload,
	.done = fpdu_obs_done,
};

/*
 * Feed one chunk from a private heap copy (so a read past the chunk is an
 * ASan report) and check the consumed contract. @return the parser's rc.
 */
static inline int
fpdu_obs_feed(struct rnic_fpdu_rx *rx, struct fpdu_obs *o, const uint8_t *p,
	      size_t len, size_t *consumed)
{
	uint8_t *copy = malloc(len > 0 ? len : 1);
	bool dead = rx->stage == RNIC_FPDU_ST_ERROR;
	int rc;

	FUZZ_CHECK(copy != NULL);
	memcpy(copy, p, len);
	o->chunk = copy;
	o->chunk_len = len;
	*consumed = (size_t)-1;
	rc = rnic_fpdu_rx_input(rx, copy, len, consumed);
	free(copy);
	o->chunk = NULL;
	FUZZ_CHECK(*consumed <= len);
	FUZZ_CHECK(rc == -EAGAIN || rc == -EPROTO);
	if (rc == -EAGAIN) {
		/* Not an error: everything given was taken. */
		FUZZ_CHECK(*consumed == len);
		FUZZ_CHECK(rx->stage != RNIC_FPDU_ST_ERROR);
	} else {
		FUZZ_CHECK(rx->stage == RNIC_FPDU_ST_ERROR);
		FUZZ_CHECK(rx->err < RNIC_TERM_MAX);
		if (dead)
			FUZZ_CHECK(*consumed == 0);
	}
	return rc;
}

/* Parse @p len bytes split by @p rng (NULL: in one call). @return the
 * total consumed; *@p rc the last return value. */
static inline size_t
fpdu_obs_run(struct rnic_fpdu_rx *rx, struct fpdu_obs *o, const uint8_t *p,
	     size_t len, struct fuzz_rng *rng, int *rc)
{
	size_t off = 0, used;

	*rc = -EAGAIN;
	if (rng == NULL) {
		*rc = fpdu_obs_feed(rx, o, p, len, &used);
		return used;
	}
	while (off < len) {
		size_t n = fuzz_chunk(rng, len - off);

		*rc = fpdu_obs_feed(rx, o, p + off, n, &used);
		off += used;
		if (*rc != -EAGAIN) {
			/* A dead stream takes nothing more. */
			size_t again;

			FUZZ_CHECK(fpdu_obs_feed(rx, o, p + off, len - off,
						 &again) == -EPROTO);
			FUZZ_CHECK(again == 0);
			break;
		}
	}
	return off;
}

#endif
