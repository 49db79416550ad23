/* SPDX-License-Identifier: BSD-3-Clause */
/* MPA request/reply/reject frames and negotiation (see mpa.h). */
#include <errno.h>
#include <string.h>

#include "iwarp/mpa.h"

#define V2_LEN ((uint16_t)sizeof(struct rnic_mpa_v2_hdr))

void
rnic_mpa_params_default(struct rnic_mpa_params *p)
{
	memset(p, 0, sizeof(*p));
	p->rev = RNIC_MPA_REV2;
	p->crc = true;
	p->markers_rx = false;
	p->markers_tx_ok = true;
	p->ird = 16;
	p->ord = 16;
	p->rtr_types = RNIC_MPA_RTR_ALL;
}

static uint16_t
mpa_min16(uint16_t a, uint16_t b)
{
	return a < b ? a : b;
}

/* RFC 6581 header for @p ird/@p ord with the P2P flag and RTR bit set. */
static struct rnic_mpa_v2_hdr
mpa_v2_make(uint16_t ird, uint16_t ord, bool p2p, uint8_t rtr)
{
	struct rnic_mpa_v2_hdr v = { 0, 0 };

	if (p2p) {
		v.ird |= RNIC_MPA_V2_P2P;
		if (rtr & RNIC_MPA_RTR_SEND)
			v.ird |= RNIC_MPA_V2_RTR_SEND;
		if (rtr & RNIC_MPA_RTR_WRITE)
			v.ord |= RNIC_MPA_V2_RTR_WRITE;
		if (rtr & RNIC_MPA_RTR_READ)
			v.ord |= RNIC_MPA_V2_RTR_READ;
	}
	rnic_mpa_v2_set_ird(&v, ird);
	rnic_mpa_v2_set_ord(&v, ord);
	return v;
}

/* RTR bits of a received RFC 6581 header. */
static uint8_t
mpa_v2_rtr(const struct rnic_mpa_v2_hdr *v)
{
	uint8_t r = 0;

	if (v->ird & RNIC_MPA_V2_RTR_SEND)
		r |= RNIC_MPA_RTR_SEND;
	if (v->ord & RNIC_MPA_V2_RTR_WRITE)
		r |= RNIC_MPA_RTR_WRITE;
	if (v->ord & RNIC_MPA_V2_RTR_READ)
		r |= RNIC_MPA_RTR_READ;
	return r;
}

/* Lay out key, flags, rev, PD_Length, optional v2 header, private data. */
static int
mpa_build(const char *key, uint8_t flags, uint8_t rev,
	  const struct rnic_mpa_v2_hdr *v2, const void *pdata, uint16_t pd_len,
	  uint8_t *out, size_t cap)
{
	struct rnic_mpa_rr_hdr h;
	size_t pd_total = (size_t)pd_len + (v2 != NULL ? V2_LEN : 0);
	size_t n = sizeof(h);

	if (rev != RNIC_MPA_REV1 && rev != RNIC_MPA_REV2)
		return -EINVAL;
	if (pd_total > RNIC_MPA_PD_MAX || (pd_len > 0 && pdata == NULL))
		return -EMSGSIZE;
	if (cap < sizeof(h) + pd_total)
		return -ENOSPC;
	memcpy(h.key, key, RNIC_MPA_KEY_LEN);
	h.flags = flags;
	h.rev = rev;
	h.pd_length = rte_cpu_to_be_16((uint16_t)pd_total);
	memcpy(out, &h, sizeof(h));
	if (v2 != NULL) {
		memcpy(out + n, v2, V2_LEN);
		n += V2_LEN;
	}
	if (pd_len > 0)
		memcpy(out + n, pdata, pd_len);
	return (int)(n + pd_len);
}

int
rnic_mpa_build_request(const struct rnic_mpa_params *p, uint8_t *out,
		       size_t cap)
{
	uint8_t flags = (p->markers_rx ? RNIC_MPA_FLAG_M : 0) |
			(p->crc ? RNIC_MPA_FLAG_C : 0);
	struct rnic_mpa_v2_hdr v2;

	if (p->rev != RNIC_MPA_REV2)
		return mpa_build(RNIC_MPA_KEY_REQ, flags, p->rev, NULL,
				 p->pdata, p->pd_len, out, cap);
	v2 = mpa_v2_make(p->ird, p->ord, p->p2p, p->rtr_types);
	return mpa_build(RNIC_MPA_KEY_REQ, flags | RNIC_MPA_FLAG_ENHANCED,
			 p->rev, &v2, p->pdata, p->pd_len, out, cap);
}

int
rnic_mpa_build_reply(const struct rnic_mpa_result *res, bool reject,
		     const void *pdata, uint16_t pd_len, uint8_t *out,
		     size_t cap)
{
	uint8_t flags = (res->markers_rx ? RNIC_MPA_FLAG_M : 0) |
			(res->crc ? RNIC_MPA_FLAG_C : 0) |
			(reject ? RNIC_MPA_FLAG_R : 0);
	struct rnic_mpa_v2_hdr v2;

	if (!res->enhanced)
		return mpa_build(RNIC_MPA_KEY_REP, flags, res->rev, NULL,
				 pdata, pd_len, out, cap);
	/* RFC 6581 s9.2: echo the P2P flag with exactly one RTR type. */
	v2 = mpa_v2_make(res->ird, res->ord, res->p2p, res->rtr);
	return mpa_build(RNIC_MPA_KEY_REP, flags | RNIC_MPA_FLAG_ENHANCED,
			 res->rev, &v2, pdata, pd_len, out, cap);
}

/* --------------------------------------------------------------- parse */

void
rnic_mpa_rx_init(struct rnic_mpa_rx *rx, bool want_reply)
{
	memset(rx, 0, sizeof(*rx));
	rx->want_reply = want_reply;
}

static int
mpa_rx_fail(struct rnic_mpa_rx *rx)
{
	rx->failed = true;
	rx->err = RNIC_TERM_MPA_INVALID_RR;
	return -EPROTO;
}

/* Check header bytes [from, rx->got) as soon as they arrive, so garbage is
 * refused at its first wrong byte rather than after 20. */
static int
mpa_rx_check(struct rnic_mpa_rx *rx, uint16_t from)
{
	const char *key = rx->want_reply ? RNIC_MPA_KEY_REP : RNIC_MPA_KEY_REQ;
	uint16_t i;

	for (i = from; i < rx->got && i < RNIC_MPA_KEY_LEN; i++)
		if (rx->raw[i] != (uint8_t)key[i])
			return mpa_rx_fail(rx);
	if (from <= offsetof(struct rnic_mpa_rr_hdr, rev) &&
	    rx->got > offsetof(struct rnic_mpa_rr_hdr, rev) &&
	    rx->hdr.rev != RNIC_MPA_REV1 && rx->hdr.rev != RNIC_MPA_REV2)
		return mpa_rx_fail(rx);
	if (rx->got == sizeof(rx->hdr)) {
		rx->pd_len = rte_be_to_cpu_16(rx->hdr.pd_length);
		if (rx->pd_len > RNIC_MPA_PD_MAX)
			return mpa_rx_fail(rx);
	}
	return 0;
}

int
rnic_mpa_rx_input(struct rnic_mpa_rx *rx, const void *buf, size_t len,
		  size_t *consumed)
{
	const uint8_t *p = buf;
	size_t off = 0;

	*consumed = 0;
	if (rx->failed)
		return -EPROTO;
	if (rx->done)
		return 0;
	if (rx->got < sizeof(rx->hdr)) {
		uint16_t from = rx->got, n = (uint16_t)(sizeof(rx->hdr) - from);
		int rc;

		if (n > len)
			n = (uint16_t)len;
		memcpy(rx->raw + from, p, n);
		rx->got = (uint16_t)(rx->got + n);
		off = n;
		rc = mpa_rx_check(rx, from);
		if (rc != 0) {
			*consumed = off;
			return rc;
		}
		if (rx->got < sizeof(rx->hdr)) {
			*consumed = off;
			return -EAGAIN;
		}
	}
	if (rx->got < sizeof(rx->hdr) + rx->pd_len) {
		size_t have = rx->got - sizeof(rx->hdr);
		size_t n = rx->pd_len - have;

		if (n > len - off)
			n = len - off;
		memcpy(rx->pd + have, p + off, n);
		rx->got = (uint16_t)(rx->got + n);
		off += n;
	}
	*consumed = off;
	if (rx->got < sizeof(rx->hdr) + rx->pd_len)
		return -EAGAIN;
	rx->done = true;
	return 0;
}

/* ----------------------------------------------------------- negotiate */

/* Read the peer's RFC 6581 header if the frame carries one; point the
 * result at the ULP private data behind it. */
static int
mpa_peer_v2(const struct rnic_mpa_rx *rx, uint8_t rev,
	    struct rnic_mpa_v2_hdr *v2, struct rnic_mpa_result *res)
{
	res->pdata = rx->pd;
	res->pd_len = rx->pd_len;
	res->enhanced = rev == RNIC_MPA_REV2 &&
			(rx->hdr.flags & RNIC_MPA_FLAG_ENHANCED) != 0;
	if (!res->enhanced)
		return 0;
	if (rx->pd_len < V2_LEN) {
		res->err = RNIC_TERM_MPA_INVALID_RR;
		return -EPROTO;
	}
	memcpy(v2, rx->pd, V2_LEN);
	res->pdata = rx->pd + V2_LEN;
	res->pd_len = (uint16_t)(rx->pd_len - V2_LEN);
	return 0;
}

/* Responder's pick among the RTR types offered: Write, then Read, then
 * Send (Send needs a posted receive). An offer of none gets Write, as
 * Linux siw does. */
static uint8_t
mpa_pick_rtr(uint8_t offered, uint8_t ours)
{
	uint8_t both = offered & ours;

	if (offered == 0)
		return (ours & RNIC_MPA_RTR_WRITE) ? RNIC_MPA_RTR_WRITE : 0;
	if (both & RNIC_MPA_RTR_WRITE)
		return RNIC_MPA_RTR_WRITE;
	if (both & RNIC_MPA_RTR_READ)
		return RNIC_MPA_RTR_READ;
	if (both & RNIC_MPA_RTR_SEND)
		return RNIC_MPA_RTR_SEND;
	return 0;
}

int
rnic_mpa_accept(const struct rnic_mpa_params *local,
		const struct rnic_mpa_rx *req, struct rnic_mpa_result *res)
{
	struct rnic_mpa_v2_hdr v2;
	int rc;

	memset(res, 0, sizeof(*res));
	if (!req->done || req->want_reply) {
		res->err = RNIC_TERM_MPA_INVALID_RR;
		return -EPROTO;
	}
	res->rev = req->hdr.rev < local->rev ? req->hdr.rev : local->rev;
	/* RFC 5044 s7.1: CRC is used when either side asks for it. */
	res->crc = (req->hdr.flags & RNIC_MPA_FLAG_C) || local->crc;
	res->markers_tx = (req->hdr.flags & RNIC_MPA_FLAG_M) != 0;
	res->markers_rx = local->markers_rx;
	res->ird = local->ird;
	res->ord = local->ord;
	rc = mpa_peer_v2(req, res->rev, &v2, res);
	if (rc != 0)
		return rc;
	if (res->markers_tx && !local->markers_tx_ok)
		return -ECONNREFUSED;
	if (!res->enhanced)
		return 0;
	/* Our IRD serves the peer's ORD and our ORD is bounded by its IRD. */
	res->ird = mpa_min16(local->ird, rnic_mpa_v2_ord(&v2));
	res->ord = mpa_min16(local->ord, rnic_mpa_v2_ird(&v2));
	if (v2.ird & RNIC_MPA_V2_P2P) {
		res->p2p = true;
		res->rtr = mpa_pick_rtr(mpa_v2_rtr(&v2), local->rtr_types);
		if (res->rtr == 0) {
			res->err = RNIC_TERM_MPA_NO_MATCHING_RTR;
			return -EPROTO;
		}
	}
	return 0;
}

/* Initiator: the reply's RFC 6581 header against our request. */
static int
mpa_check_v2_reply(const struct rnic_mpa_params *local,
		   const struct rnic_mpa_v2_hdr *v2,
		   struct rnic_mpa_result *res)
{
	uint8_t rtr = mpa_v2_rtr(v2);

	/* The responder will issue up to its ORD reads against our IRD. */
	if (rnic_mpa_v2_ord(v2) > local->ird) {
		res->err = RNIC_TERM_MPA_INSUFFICIENT_IRD;
		return -EPROTO;
	}
	res->ord = mpa_min16(local->ord, rnic_mpa_v2_ird(v2));
	if (!local->p2p)
		return 0;
	/* s9.2: P2P echoed, exactly one RTR type, one we offered. */
	if (!(v2->ird & RNIC_MPA_V2_P2P) || rtr == 0 || (rtr & (rtr - 1)) ||
	    !(rtr & local->rtr_types)) {
		res->err = RNIC_TERM_MPA_NO_MATCHING_RTR;
		return -EPROTO;
	}
	res->p2p = true;
	res->rtr = rtr;
	return 0;
}

int
rnic_mpa_connected(const struct rnic_mpa_params *local,
		   const struct rnic_mpa_rx *rep, struct rnic_mpa_result *res)
{
	struct rnic_mpa_v2_hdr v2;
	int rc;

	memset(res, 0, sizeof(*res));
	if (!rep->done || !rep->want_reply || rep->hdr.rev > local->rev) {
		res->err = RNIC_TERM_MPA_INVALID_RR;
		return -EPROTO;
	}
	res->rev = rep->hdr.rev;
	/* RFC 5044 s7.1: CRC is used when either side sets C, so a reply
	 * with C=0 to our C=1 request still means CRC both ways (as
	 * iw_cxgb4 does); it is not a reason to close. */
	res->crc = (rep->hdr.flags & RNIC_MPA_FLAG_C) || local->crc;
	res->markers_tx = (rep->hdr.flags & RNIC_MPA_FLAG_M) != 0;
	res->markers_rx = local->markers_rx;
	res->ird = local->ird;
	res->ord = local->ord;
	rc = mpa_peer_v2(rep, res->rev, &v2, res);
	if (rc != 0)
		return rc;
	if (rep->hdr.flags & RNIC_MPA_FLAG_R)
		return -ECONNREFUSED;
	if (res->markers_tx && !local->markers_tx_ok) {
		res->err = RNIC_TERM_MPA_INVALID_RR;
		return -EPROTO;
	}
	if (!res->enhanced) {
		/* A rev 1 peer cannot do P2P; we asked, so no RTR will match. */
		if (local->p2p && local->rev == RNIC_MPA_REV2) {
			res->err = RNIC_TERM_MPA_NO_MATCHING_RTR;
			return -EPROTO;
		}
		return 0;
	}
	return mpa_check_v2_reply(local, &v2, res);
}
