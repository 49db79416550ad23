/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer harness: MPA startup (lib/iwarp/mpa.c) and the hand-off to the
 * FPDU parser.
 *
 * Input: flags byte, RTR byte, IRD and ORD (16 bits each), 4-byte split
 * seed, 4-byte stream position, then the stream the peer sent. Flags bit 0:
 * we are the initiator (the stream starts with a reply), else the
 * responder (a request); bit 1: local rev 2, else 1; bit 2: CRC; bit 3: we
 * ask for markers; bit 4: we accept sending markers; bit 5: P2P; bit 6:
 * the FPDU observer skips some payloads.
 *
 * Properties:
 *  - rnic_mpa_rx_input(), fed at pseudo-random boundaries, never reports
 *    more bytes than it was given, takes all of a chunk while it wants more,
 *    stops exactly at the end of the frame (20 + PD_Length bytes, the
 *    frame's own bytes), and is inert after done or failed.
 *  - negotiation returns one of its documented values and a consistent
 *    result; a reply built from an accepted request parses back whole and
 *    is accepted by an initiator that sent that request; requests we build
 *    parse back whole.
 *  - the bytes behind the frame, starting inside the chunk that completed
 *    it, go to the FPDU parser (fpdu_obs.h contract).
 */
#include "iwarp/mpa.h"
#include "fpdu_obs.h"

struct mpa_case {
	struct rnic_mpa_params local;
	bool initiator;
	bool skip;
	uint32_t seed;
	uint32_t start;
	const uint8_t *stream;
	size_t len;
};

/* Feed a whole frame we built to a fresh receiver: it must take exactly
 * the frame and be done. */
static void
mpa_parse_back(struct rnic_mpa_rx *rx, bool want_reply, const uint8_t *f,
	       int flen, struct fuzz_rng *rng)
{
	size_t off = 0, used;
	int rc = -EAGAIN;

	FUZZ_CHECK(flen >= (int)sizeof(struct rnic_mpa_rr_hdr));
	rnic_mpa_rx_init(rx, want_reply);
	while (off < (size_t)flen) {
		size_t n = fuzz_chunk(rng, (size_t)flen - off);

		rc = rnic_mpa_rx_input(rx, f + off, n, &used);
		FUZZ_CHECK(used <= n);
		off += used;
		if (rc != -EAGAIN)
			break;
		FUZZ_CHECK(used == n);
	}
	FUZZ_CHECK(rc == 0 && rx->done && off == (size_t)flen);
	FUZZ_CHECK(rx->got == sizeof(rx->hdr) + rx->pd_len);
}

/* The request the peer evidently sent, as that peer's parameters. */
static void
mpa_peer_params(const struct rnic_mpa_rx *req, struct rnic_mpa_params *p)
{
	rnic_mpa_params_default(p);
	p->rev = req->hdr.rev;
	p->crc = (req->hdr.flags & RNIC_MPA_FLAG_C) != 0;
	p->markers_rx = (req->hdr.flags & RNIC_MPA_FLAG_M) != 0;
	p->markers_tx_ok = true;
	p->p2p = false;
	if (p->rev == RNIC_MPA_REV2 && (req->hdr.flags & RNIC_MPA_FLAG_ENHANCED) &&
	    req->pd_len >= sizeof(struct rnic_mpa_v2_hdr)) {
		struct rnic_mpa_v2_hdr v2;

		memcpy(&v2, req->pd, sizeof(v2));
		p->ird = rnic_mpa_v2_ird(&v2);
		p->ord = rnic_mpa_v2_ord(&v2);
		p->p2p = (v2.ird & RNIC_MPA_V2_P2P) != 0;
		p->rtr_types = (uint8_t)(((v2.ird & RNIC_MPA_V2_RTR_SEND) ?
					  RNIC_MPA_RTR_SEND : 0) |
					 ((v2.ord & RNIC_MPA_V2_RTR_WRITE) ?
					  RNIC_MPA_RTR_WRITE : 0) |
					 ((v2.ord & RNIC_MPA_V2_RTR_READ) ?
					  RNIC_MPA_RTR_READ : 0));
	}
}

static void
mpa_check_result(const struct rnic_mpa_rx *rx, const struct rnic_mpa_result *r)
{
	FUZZ_CHECK(r->pdata >= rx->pd &&
		   r->pdata + r->pd_len <= rx->pd + rx->pd_len);
	FUZZ_CHECK((r->rtr & (r->rtr - 1)) == 0 && r->rtr <= RNIC_MPA_RTR_ALL);
	FUZZ_CHECK(!r->p2p || r->rtr != 0);
	FUZZ_CHECK(r->rev == RNIC_MPA_REV1 || r->rev == RNIC_MPA_REV2);
	FUZZ_CHECK(!r->enhanced || r->rev == RNIC_MPA_REV2);
}

/* Responder side: accept the request, answer, and check the initiator
 * that sent it agrees with the answer. */
static void
mpa_respond(const struct mpa_case *c, const struct rnic_mpa_rx *req,
	    struct rnic_mpa_result *res, struct fuzz_rng *rng)
{
	static const uint8_t mine[] = "rnic fuzz responder private data";
	struct rnic_mpa_params peer;
	struct rnic_mpa_result pres;
	struct rnic_mpa_rx *rep = malloc(sizeof(*rep));
	uint8_t out[sizeof(struct rnic_mpa_rr_hdr) + RNIC_MPA_PD_MAX];
	int rc, flen, prc;

	FUZZ_CHECK(rep != NULL);
	rc = rnic_mpa_accept(&c->local, req, res);
	FUZZ_CHECK(rc == 0 || rc == -ECONNREFUSED || rc == -EPROTO);
	if (rc == -EPROTO)
		FUZZ_CHECK(res->err == RNIC_TERM_MPA_INVALID_RR ||
			   res->err == RNIC_TERM_MPA_NO_MATCHING_RTR);
	if (rc != 0) {
		/* A reject frame still parses as a reply with R set. */
		res->rev = req->hdr.rev;
		flen = rnic_mpa_build_reply(res, true, NULL, 0, out,
					    sizeof(out));
		if (flen > 0) {
			mpa_parse_back(rep, true, out, flen, rng);
			FUZZ_CHECK(rep->hdr.flags & RNIC_MPA_FLAG_R);
		}
		free(rep);
		return;
	}
	mpa_check_result(req, res);
	FUZZ_CHECK(res->rev <= c->local.rev && res->rev <= req->hdr.rev);
	FUZZ_CHECK(res->crc == (c->local.crc ||
				(req->hdr.flags & RNIC_MPA_FLAG_C)));
	FUZZ_CHECK(res->ird <= c->local.ird && res->ord <= c->local.ord);

	flen = rnic_mpa_build_reply(res, false, mine, sizeof(mine), out,
				    sizeof(out));
	FUZZ_CHECK(flen > 0 && (size_t)flen <= sizeof(out));
	mpa_parse_back(rep, true, out, flen, rng);
	FUZZ_CHECK(!(rep->hdr.flags & RNIC_MPA_FLAG_R));

	mpa_peer_params(req, &peer);
	prc = rnic_mpa_connected(&peer, rep, &pres);
	if (peer.p2p && peer.rev == RNIC_MPA_REV2 && !res->enhanced) {
		/* We answered rev 1: a P2P initiator finds no RTR. */
		FUZZ_CHECK(prc == -EPROTO);
	} else if (peer.p2p && res->enhanced && peer.rtr_types == 0) {
		/* P2P without an RTR type offered: rnic answers Write, as
		 * Linux siw does; such a peer's verdict is its own. */
		FUZZ_CHECK(res->rtr == RNIC_MPA_RTR_WRITE ||
			   !(c->local.rtr_types & RNIC_MPA_RTR_WRITE));
	} else {
		FUZZ_CHECK(prc == 0);
		mpa_check_result(rep, &pres);
		FUZZ_CHECK(pres.crc == res->crc);
		FUZZ_CHECK(pres.markers_tx == res->markers_rx);
		FUZZ_CHECK(pres.p2p == res->p2p && pres.rtr == res->rtr);
		FUZZ_CHECK(pres.pd_len == sizeof(mine) &&
			   memcmp(pres.pdata, mine, sizeof(mine)) == 0);
	}
	free(rep);
}

/* Initiator side: check the reply against our request. */
static void
mpa_initiate(const struct mpa_case *c, const struct rnic_mpa_rx *rep,
	     struct rnic_mpa_result *res)
{
	int rc = rnic_mpa_connected(&c->local, rep, res);

	FUZZ_CHECK(rc == 0 || rc == -ECONNREFUSED || rc == -EPROTO);
	if (rc == -EPROTO)
		FUZZ_CHECK(res->err == RNIC_TERM_MPA_INVALID_RR ||
			   res->err == RNIC_TERM_MPA_INSUFFICIENT_IRD ||
			   res->err == RNIC_TERM_MPA_NO_MATCHING_RTR);
	if (rc == -EPROTO)
		return;
	mpa_check_result(rep, res);
	if (rc == 0) {
		FUZZ_CHECK(res->rev <= c->local.rev);
		/* RFC 5044 s7.1: CRC when either side sets C */
		FUZZ_CHECK(res->crc == (c->local.crc ||
					(rep->hdr.flags & RNIC_MPA_FLAG_C)));
		FUZZ_CHECK(!c->local.p2p || c->local.rev != RNIC_MPA_REV2 ||
			   res->p2p);
		FUZZ_CHECK(!res->p2p || (res->rtr & c->local.rtr_types));
	}
}

/* Our own request, with private data from the stream, parses back. */
static void
mpa_request_round_trip(const struct mpa_case *c, struct fuzz_rng *rng)
{
	struct rnic_mpa_params p = c->local;
	struct rnic_mpa_rx *rx = malloc(sizeof(*rx));
	struct rnic_mpa_result res;
	uint8_t out[sizeof(struct rnic_mpa_rr_hdr) + RNIC_MPA_PD_MAX];
	int flen, rc;

	FUZZ_CHECK(rx != NULL);
	p.pdata = c->stream;
	p.pd_len = (uint16_t)(c->len > 600 ? 600 : c->len);
	flen = rnic_mpa_build_request(&p, out, sizeof(out));
	if (flen == -EMSGSIZE) {
		FUZZ_CHECK(p.pd_len + (p.rev == RNIC_MPA_REV2 ? 4u : 0u) >
			   RNIC_MPA_PD_MAX);
		free(rx);
		return;
	}
	FUZZ_CHECK(flen > 0);
	mpa_parse_back(rx, false, out, flen, rng);
	FUZZ_CHECK(rx->hdr.rev == p.rev);
	FUZZ_CHECK(!!(rx->hdr.flags & RNIC_MPA_FLAG_C) == p.crc);
	FUZZ_CHECK(!!(rx->hdr.flags & RNIC_MPA_FLAG_M) == p.markers_rx);
	rc = rnic_mpa_accept(&c->local, rx, &res);
	FUZZ_CHECK(rc == 0 || rc == -ECONNREFUSED || rc == -EPROTO);
	if (rc == 0) {
		mpa_check_result(rx, &res);
		FUZZ_CHECK(res.pd_len == p.pd_len &&
			   memcmp(res.pdata, p.pdata, p.pd_len) == 0);
	}
	free(rx);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rnic_mpa_rx *rx = malloc(sizeof(*rx));
	struct rnic_mpa_result res;
	struct rnic_fpdu_rx *frx = malloc(sizeof(*frx));
	struct fpdu_obs obs;
	struct mpa_case c;
	struct fuzz_rng rng;
	struct fuzz_in in;
	size_t off = 0, used = 0, n = 0, first;
	uint8_t flags, rtr;
	int rc = -EAGAIN;
	bool crc, markers;

	FUZZ_CHECK(rx != NULL && frx != NULL);
	fuzz_in_init(&in, data, size);
	flags = fuzz_u8(&in);
	rtr = fuzz_u8(&in);
	memset(&c, 0, sizeof(c));
	rnic_mpa_params_default(&c.local);
	c.initiator = flags & 1;
	c.local.rev = (flags & 2) ? RNIC_MPA_REV2 : RNIC_MPA_REV1;
	c.local.crc = flags & 4;
	c.local.markers_rx = flags & 8;
	c.local.markers_tx_ok = flags & 16;
	c.local.p2p = flags & 32;
	c.skip = flags & 64;
	c.local.rtr_types = rtr & RNIC_MPA_RTR_ALL;
	c.local.ird = fuzz_u16(&in) & RNIC_MPA_V2_IRD_ORD_MASK;
	c.local.ord = fuzz_u16(&in) & RNIC_MPA_V2_IRD_ORD_MASK;
	c.seed = fuzz_u32(&in);
	c.start = fuzz_u32(&in);
	c.stream = data + in.off;
	c.len = fuzz_in_left(&in);
	fuzz_rng_init(&rng, c.seed);

	/* The startup frame, chunk by chunk. */
	rnic_mpa_rx_init(rx, c.initiator);
	while (off < c.len) {
		n = fuzz_chunk(&rng, c.len - off);
		used = (size_t)-1;
		rc = rnic_mpa_rx_input(rx, c.stream + off, n, &used);
		FUZZ_CHECK(used <= n);
		off += used;
		if (rc != -EAGAIN)
			break;
		FUZZ_CHECK(used == n && !rx->done && !rx->failed);
	}
	FUZZ_CHECK(rc == 0 || rc == -EAGAIN || rc == -EPROTO);
	if (rc == -EPROTO) {
		FUZZ_CHECK(rx->failed && !rx->done);
		FUZZ_CHECK(rx->err == RNIC_TERM_MPA_INVALID_RR);
		FUZZ_CHECK(off <= sizeof(struct rnic_mpa_rr_hdr));
		FUZZ_CHECK(rnic_mpa_rx_input(rx, c.stream, c.len, &used) ==
			   -EPROTO && used == 0);
		goto out;
	}
	if (rc == -EAGAIN) {
		FUZZ_CHECK(off == c.len && !rx->done);
		goto out;
	}
	/* Done: exactly the frame was taken, and it is the stream's. The
	 * rest of the completing chunk is the first FPDU input. */
	first = n - used;
	FUZZ_CHECK(rx->done && rx->pd_len <= RNIC_MPA_PD_MAX);
	FUZZ_CHECK(off == sizeof(rx->hdr) + rx->pd_len);
	FUZZ_CHECK(memcmp(rx->raw, c.stream, sizeof(rx->hdr)) == 0);
	FUZZ_CHECK(memcmp(rx->pd, c.stream + sizeof(rx->hdr), rx->pd_len) == 0);
	FUZZ_CHECK(memcmp(rx->hdr.key, c.initiator ? RNIC_MPA_KEY_REP :
				       RNIC_MPA_KEY_REQ, RNIC_MPA_KEY_LEN) == 0);
	FUZZ_CHECK(rnic_mpa_rx_input(rx, c.stream + off, c.len - off, &used) ==
		   0 && used == 0);

	if (c.initiator)
		mpa_initiate(&c, rx, &res);
	else
		mpa_respond(&c, rx, &res, &rng);
	mpa_request_round_trip(&c, &rng);

	/* Hand-off: what follows the frame, from inside the chunk that
	 * completed it, is FPDU stream with the negotiated framing. */
	crc = res.crc;
	markers = res.markers_rx;
	fpdu_obs_init(&obs, c.skip);
	rnic_fpdu_rx_init(frx, crc, markers, c.start, &fpdu_obs_ops, &obs);
	if (off < c.len) {
		size_t total;

		FUZZ_CHECK(first <= c.len - off);
		total = 0;
		rc = -EAGAIN;
		if (first > 0)
			rc = fpdu_obs_feed(frx, &obs, c.stream + off, first,
					   &total);
		if (rc == -EAGAIN)
			total += fpdu_obs_run(frx, &obs, c.stream + off + total,
					      c.len - off - total, &rng, &rc);
		FUZZ_CHECK(total <= c.len - off);
		FUZZ_CHECK(frx->pos == c.start + (uint32_t)total);
	}
out:
	free(frx);
	free(rx);
	return 0;
}
