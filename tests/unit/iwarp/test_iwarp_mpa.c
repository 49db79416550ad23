/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * MPA startup: golden request bytes, frames split at every byte, the
 * reply/FPDU hand-off in one chunk, negotiation of CRC, markers, IRD/ORD
 * and RTR, and every reject path.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "iwarp/fpdu.h"
#include "iwarp/mpa.h"

static void
params(struct rnic_mpa_params *p, uint16_t ird, uint16_t ord, bool p2p,
       uint8_t rtr, const char *pd)
{
	rnic_mpa_params_default(p);
	p->ird = ird;
	p->ord = ord;
	p->p2p = p2p;
	p->rtr_types = rtr;
	p->pdata = pd;
	p->pd_len = pd != NULL ? (uint16_t)strlen(pd) : 0;
}

static void
test_golden_request(void **state)
{
	struct rnic_mpa_params p;
	uint8_t out[64];
	/* Key "MPA ID Req Frame"; flags C (0x40) | enhanced (0x10) = 0x50;
	 * Rev 2; PD_Length 4 + 3 = 7. RFC 6581 header: IRD 16 | M (0x8000)
	 * = 0x8010, ORD 8 | W (0x8000) | R (0x4000) = 0xc008 (Z not offered).
	 * Then "abc". */
	static const uint8_t want[] = {
		0x4d, 0x50, 0x41, 0x20, 0x49, 0x44, 0x20, 0x52,
		0x65, 0x71, 0x20, 0x46, 0x72, 0x61, 0x6d, 0x65,
		0x50, 0x02, 0x00, 0x07,
		0x80, 0x10, 0xc0, 0x08,
		0x61, 0x62, 0x63,
	};
	int n;

	(void)state;
	params(&p, 16, 8, true, RNIC_MPA_RTR_WRITE | RNIC_MPA_RTR_READ, "abc");
	n = rnic_mpa_build_request(&p, out, sizeof(out));
	assert_int_equal(n, sizeof(want));
	assert_memory_equal(out, want, sizeof(want));

	/* Rev 1, markers wanted, no CRC, no private data: M = 0x80. */
	p.rev = RNIC_MPA_REV1;
	p.crc = false;
	p.markers_rx = true;
	p.pd_len = 0;
	n = rnic_mpa_build_request(&p, out, sizeof(out));
	assert_int_equal(n, 20);
	assert_int_equal(out[16], 0x80);
	assert_int_equal(out[17], 1);
	assert_int_equal(out[18] | out[19], 0);
}

static void
test_build_limits(void **state)
{
	static uint8_t pd[600], out[700];
	struct rnic_mpa_params p;

	(void)state;
	params(&p, 1, 1, false, 0, NULL);
	p.pdata = pd;
	p.pd_len = 508;            /* + 4 header bytes = 512 */
	assert_int_equal(rnic_mpa_build_request(&p, out, sizeof(out)), 532);
	p.pd_len = 509;
	assert_int_equal(rnic_mpa_build_request(&p, out, sizeof(out)),
			 -EMSGSIZE);
	p.rev = RNIC_MPA_REV1;
	p.pd_len = 512;
	assert_int_equal(rnic_mpa_build_request(&p, out, sizeof(out)), 532);
	assert_int_equal(rnic_mpa_build_request(&p, out, 531), -ENOSPC);
	p.rev = 3;
	assert_int_equal(rnic_mpa_build_request(&p, out, sizeof(out)),
			 -EINVAL);
}

/* Full exchange: I builds, R parses/accepts/replies, I parses/checks. */
static int
exchange(const struct rnic_mpa_params *ip, const struct rnic_mpa_params *rp,
	 struct rnic_mpa_result *ires, struct rnic_mpa_result *rres,
	 struct rnic_mpa_rx *req, struct rnic_mpa_rx *rep, int *racc)
{
	uint8_t buf[600];
	size_t used;
	int n;

	n = rnic_mpa_build_request(ip, buf, sizeof(buf));
	assert_true(n > 0);
	rnic_mpa_rx_init(req, false);
	assert_int_equal(rnic_mpa_rx_input(req, buf, (size_t)n, &used), 0);
	assert_int_equal(used, (size_t)n);
	*racc = rnic_mpa_accept(rp, req, rres);
	n = rnic_mpa_build_reply(rres, *racc != 0, rp->pdata, rp->pd_len,
				 buf, sizeof(buf));
	assert_true(n > 0);
	rnic_mpa_rx_init(rep, true);
	assert_int_equal(rnic_mpa_rx_input(rep, buf, (size_t)n, &used), 0);
	return rnic_mpa_connected(ip, rep, ires);
}

static struct rnic_mpa_rx g_req, g_rep;

static void
test_negotiate_p2p(void **state)
{
	struct rnic_mpa_params ip, rp;
	struct rnic_mpa_result ir, rr;
	int racc;

	(void)state;
	params(&ip, 8, 4, true, RNIC_MPA_RTR_READ | RNIC_MPA_RTR_WRITE, "hi");
	params(&rp, 2, 16, false, RNIC_MPA_RTR_ALL, "there");
	assert_int_equal(exchange(&ip, &rp, &ir, &rr, &g_req, &g_rep, &racc),
			 0);
	assert_int_equal(racc, 0);
	/* Responder: IRD min(2, peer ORD 4) = 2; ORD min(16, peer IRD 8). */
	assert_true(rr.enhanced);
	assert_int_equal(rr.ird, 2);
	assert_int_equal(rr.ord, 8);
	assert_true(rr.p2p);
	assert_int_equal(rr.rtr, RNIC_MPA_RTR_WRITE);   /* preferred */
	assert_int_equal(rr.pd_len, 2);
	assert_memory_equal(rr.pdata, "hi", 2);
	assert_true(rr.crc);
	assert_false(rr.markers_tx);
	/* Initiator: ORD min(4, responder IRD 2) = 2; RTR echoed. */
	assert_int_equal(ir.rev, 2);
	assert_int_equal(ir.ord, 2);
	assert_int_equal(ir.ird, 8);
	assert_true(ir.p2p);
	assert_int_equal(ir.rtr, RNIC_MPA_RTR_WRITE);
	assert_int_equal(ir.pd_len, 5);
	assert_memory_equal(ir.pdata, "there", 5);
	/* The reply on the wire: P2P echoed in IRD, W alone in ORD. */
	assert_int_equal(g_rep.hdr.flags, RNIC_MPA_FLAG_C |
			 RNIC_MPA_FLAG_ENHANCED);
	assert_int_equal(g_rep.pd[0], 0x80);
	assert_int_equal(g_rep.pd[1], 0x02);
	assert_int_equal(g_rep.pd[2], 0x80);
	assert_int_equal(g_rep.pd[3], 0x08);

	/* Only Read offered and accepted; Send when only Send matches. */
	ip.rtr_types = RNIC_MPA_RTR_READ;
	assert_int_equal(exchange(&ip, &rp, &ir, &rr, &g_req, &g_rep, &racc),
			 0);
	assert_int_equal(ir.rtr, RNIC_MPA_RTR_READ);
	ip.rtr_types = RNIC_MPA_RTR_SEND;
	assert_int_equal(exchange(&ip, &rp, &ir, &rr, &g_req, &g_rep, &racc),
			 0);
	assert_int_equal(ir.rtr, RNIC_MPA_RTR_SEND);
	assert_int_equal(g_rep.pd[0], 0xc0);     /* M | Z */
}

static void
test_negotiate_flags(void **state)
{
	struct rnic_mpa_params ip, rp;
	struct rnic_mpa_result ir, rr;
	int racc;

	(void)state;
	/* Initiator without CRC, responder wants it: both use CRC. */
	params(&ip, 4, 4, false, 0, NULL);
	params(&rp, 4, 4, false, RNIC_MPA_RTR_ALL, NULL);
	ip.crc = false;
	assert_int_equal(exchange(&ip, &rp, &ir, &rr, &g_req, &g_rep, &racc),
			 0);
	assert_true(ir.crc && rr.crc);
	/* Neither: no CRC. */
	rp.crc = false;
	assert_int_equal(exchange(&ip, &rp, &ir, &rr, &g_req, &g_rep, &racc),
			 0);
	assert_false(ir.crc || rr.crc);
	/* Markers are per direction: I asks to receive them. */
	ip.markers_rx = true;
	assert_int_equal(exchange(&ip, &rp, &ir, &rr, &g_req, &g_rep, &racc),
			 0);
	assert_true(rr.markers_tx);
	assert_false(rr.markers_rx);
	assert_true(ir.markers_rx);
	assert_false(ir.markers_tx);
	/* ...and a responder that cannot send markers rejects (R bit). */
	rp.markers_tx_ok = false;
	rp.pdata = "no markers";
	rp.pd_len = 10;
	assert_int_equal(exchange(&ip, &rp, &ir, &rr, &g_req, &g_rep, &racc),
			 -ECONNREFUSED);
	assert_int_equal(racc, -ECONNREFUSED);
	assert_true(g_rep.hdr.flags & RNIC_MPA_FLAG_R);
	assert_int_equal(ir.pd_len, 10);
	assert_memory_equal(ir.pdata, "no markers", 10);
}

static void
test_rev1_peer(void **state)
{
	struct rnic_mpa_params ip, rp;
	struct rnic_mpa_result ir, rr;
	int racc;

	(void)state;
	/* A rev 1 responder: no RFC 6581 header, private data untouched. */
	params(&ip, 4, 4, false, 0, "abcdef");
	params(&rp, 4, 4, false, 0, "xy");
	rp.rev = RNIC_MPA_REV1;
	assert_int_equal(exchange(&ip, &rp, &ir, &rr, &g_req, &g_rep, &racc),
			 0);
	assert_int_equal(rr.rev, 1);
	assert_false(rr.enhanced);
	/* The responder saw our rev 2 frame; our header is in its PD as
	 * ULP data because it speaks rev 1. */
	assert_int_equal(rr.pd_len, 10);
	assert_int_equal(ir.rev, 1);
	assert_false(ir.enhanced);
	assert_int_equal(ir.pd_len, 2);
	/* Asking for P2P from a rev 1 peer cannot be met. */
	ip.p2p = true;
	ip.rtr_types = RNIC_MPA_RTR_WRITE;
	assert_int_equal(exchange(&ip, &rp, &ir, &rr, &g_req, &g_rep, &racc),
			 -EPROTO);
	assert_int_equal(ir.err, RNIC_TERM_MPA_NO_MATCHING_RTR);
}

/* Craft a reply with the given flags, rev and RFC 6581 words. */
static void
craft_reply(struct rnic_mpa_rx *rx, uint8_t flags, uint8_t rev, uint16_t ird,
	    uint16_t ord)
{
	uint8_t buf[32];
	struct rnic_mpa_rr_hdr h;
	size_t used;

	memcpy(h.key, RNIC_MPA_KEY_REP, 16);
	h.flags = flags;
	h.rev = rev;
	h.pd_length = rte_cpu_to_be_16(4);
	memcpy(buf, &h, 20);
	buf[20] = (uint8_t)(ird >> 8);
	buf[21] = (uint8_t)ird;
	buf[22] = (uint8_t)(ord >> 8);
	buf[23] = (uint8_t)ord;
	rnic_mpa_rx_init(rx, true);
	assert_int_equal(rnic_mpa_rx_input(rx, buf, 24, &used), 0);
}

static void
test_reply_errors(void **state)
{
	struct rnic_mpa_params ip, rp;
	struct rnic_mpa_result ir, rr;
	const uint8_t e = RNIC_MPA_FLAG_C | RNIC_MPA_FLAG_ENHANCED;
	int racc;

	(void)state;
	params(&ip, 4, 4, true, RNIC_MPA_RTR_WRITE | RNIC_MPA_RTR_READ, NULL);
	/* Good: P2P echoed, W alone. */
	craft_reply(&g_rep, e, 2, 0x8004, 0x8002);
	assert_int_equal(rnic_mpa_connected(&ip, &g_rep, &ir), 0);
	assert_int_equal(ir.ord, 4);
	assert_int_equal(ir.rtr, RNIC_MPA_RTR_WRITE);
	/* P2P not echoed (the hardware interop bug). */
	craft_reply(&g_rep, e, 2, 0x0004, 0x8002);
	assert_int_equal(rnic_mpa_connected(&ip, &g_rep, &ir), -EPROTO);
	assert_int_equal(ir.err, RNIC_TERM_MPA_NO_MATCHING_RTR);
	/* Two RTR types chosen, none chosen, one we did not offer (Z). */
	craft_reply(&g_rep, e, 2, 0x8004, 0xc002);
	assert_int_equal(rnic_mpa_connected(&ip, &g_rep, &ir), -EPROTO);
	craft_reply(&g_rep, e, 2, 0x8004, 0x0002);
	assert_int_equal(rnic_mpa_connected(&ip, &g_rep, &ir), -EPROTO);
	craft_reply(&g_rep, e, 2, 0xc004, 0x0002);
	assert_int_equal(rnic_mpa_connected(&ip, &g_rep, &ir), -EPROTO);
	assert_int_equal(ir.err, RNIC_TERM_MPA_NO_MATCHING_RTR);
	/* Responder ORD 5 > our IRD 4. */
	craft_reply(&g_rep, e, 2, 0x8004, 0x8005);
	assert_int_equal(rnic_mpa_connected(&ip, &g_rep, &ir), -EPROTO);
	assert_int_equal(ir.err, RNIC_TERM_MPA_INSUFFICIENT_IRD);
	/* We asked for CRC and the reply has C=0: RFC 5044 s7.1 uses CRC
	 * when either side sets C, so the connection goes on with CRC
	 * (issue 19; rnic used to close here). */
	craft_reply(&g_rep, RNIC_MPA_FLAG_ENHANCED, 2, 0x8004, 0x8002);
	assert_int_equal(rnic_mpa_connected(&ip, &g_rep, &ir), 0);
	assert_true(ir.crc);
	/* Neither side asks: no CRC. */
	ip.crc = false;
	assert_int_equal(rnic_mpa_connected(&ip, &g_rep, &ir), 0);
	assert_false(ir.crc);
	ip.crc = true;
	/* Reply revision above ours. */
	ip.rev = 1;
	craft_reply(&g_rep, e, 2, 0x8004, 0x8002);
	assert_int_equal(rnic_mpa_connected(&ip, &g_rep, &ir), -EPROTO);

	/* Responder: P2P request whose RTR types it has none of. */
	params(&ip, 4, 4, true, RNIC_MPA_RTR_READ, NULL);
	params(&rp, 4, 4, false, RNIC_MPA_RTR_WRITE, NULL);
	exchange(&ip, &rp, &ir, &rr, &g_req, &g_rep, &racc);
	assert_int_equal(racc, -EPROTO);
	assert_int_equal(rr.err, RNIC_TERM_MPA_NO_MATCHING_RTR);
	assert_true(g_rep.hdr.flags & RNIC_MPA_FLAG_R);
}

/* Frames refused at the first bad byte, consuming no more. */
static void
test_bad_frames(void **state)
{
	struct rnic_mpa_params p;
	struct rnic_mpa_rx rx;
	struct rnic_mpa_result res;
	uint8_t buf[64];
	size_t used;
	int n;

	(void)state;
	params(&p, 4, 4, false, 0, "abc");
	n = rnic_mpa_build_request(&p, buf, sizeof(buf));
	/* A request where a reply is expected: bad at byte 9 ('q' vs 'p'). */
	rnic_mpa_rx_init(&rx, true);
	assert_int_equal(rnic_mpa_rx_input(&rx, buf, (size_t)n, &used),
			 -EPROTO);
	assert_int_equal(rx.err, RNIC_TERM_MPA_INVALID_RR);
	assert_int_equal(rnic_mpa_rx_input(&rx, buf, 1, &used), -EPROTO);
	assert_int_equal(used, 0);
	/* Bad key fed byte by byte fails at that byte. */
	rnic_mpa_rx_init(&rx, true);
	for (used = 0; used < 9; used++) {
		size_t u;

		assert_int_equal(rnic_mpa_rx_input(&rx, buf + used, 1, &u),
				 -EAGAIN);
	}
	assert_int_equal(rnic_mpa_rx_input(&rx, buf + 9, 1, &used), -EPROTO);
	/* Rev 0 and 3. */
	buf[17] = 0;
	rnic_mpa_rx_init(&rx, false);
	assert_int_equal(rnic_mpa_rx_input(&rx, buf, (size_t)n, &used),
			 -EPROTO);
	assert_int_equal(used, 20);
	buf[17] = 3;
	rnic_mpa_rx_init(&rx, false);
	assert_int_equal(rnic_mpa_rx_input(&rx, buf, (size_t)n, &used),
			 -EPROTO);
	buf[17] = 2;
	/* PD_Length 513. */
	buf[18] = 0x02;
	buf[19] = 0x01;
	rnic_mpa_rx_init(&rx, false);
	assert_int_equal(rnic_mpa_rx_input(&rx, buf, (size_t)n, &used),
			 -EPROTO);
	/* Enhanced flag with fewer than 4 bytes of private data. */
	buf[18] = 0;
	buf[19] = 3;
	rnic_mpa_rx_init(&rx, false);
	assert_int_equal(rnic_mpa_rx_input(&rx, buf, 23, &used), 0);
	assert_int_equal(rnic_mpa_accept(&p, &rx, &res), -EPROTO);
	assert_int_equal(res.err, RNIC_TERM_MPA_INVALID_RR);
}

/* Every split point of a reply, and a reply followed by an FPDU in the same
 * chunk: the parser stops at the frame end and the FPDU parser gets the
 * rest, byte for byte. */
static int fpdu_done;
static uint8_t fpdu_pay[64];

static int
on_payload(void *arg, const struct rnic_fpdu_info *fi, uint32_t off,
	   const uint8_t *d, uint32_t len)
{
	(void)arg;
	(void)fi;
	memcpy(fpdu_pay + off, d, len);
	return 0;
}

static int
on_done(void *arg, const struct rnic_fpdu_info *fi)
{
	(void)arg;
	(void)fi;
	fpdu_done++;
	return 0;
}

static void
test_split_and_handoff(void **state)
{
	static const struct rnic_fpdu_rx_ops ops = { NULL, on_payload,
						     on_done };
	struct rnic_mpa_params ip, rp;
	struct rnic_mpa_result rr;
	struct rnic_mpa_rx req, rx;
	struct rnic_fpdu_tx tx;
	struct rnic_fpdu_rx frx;
	struct rnic_ddp_tagged_hdr w;
	struct iovec iov = { (void *)"payload!", 8 };
	uint8_t buf[700];
	size_t i, used, used2;
	int n, f;

	(void)state;
	params(&ip, 4, 4, false, 0, "request-pd");
	params(&rp, 4, 4, false, 0, "reply-private-data");
	n = rnic_mpa_build_request(&ip, buf, sizeof(buf));
	rnic_mpa_rx_init(&req, false);
	assert_int_equal(rnic_mpa_rx_input(&req, buf, (size_t)n, &used), 0);
	assert_int_equal(rnic_mpa_accept(&rp, &req, &rr), 0);
	n = rnic_mpa_build_reply(&rr, false, rp.pdata, rp.pd_len, buf,
				 sizeof(buf));
	/* The responder's first FPDU right behind the reply. */
	w.ddp_ctrl = rnic_ddp_ctrl(true, true);
	w.rdmap_ctrl = rnic_rdmap_ctrl(RNIC_RDMAP_OP_WRITE);
	w.stag = rte_cpu_to_be_32(7);
	w.to = 0;
	rnic_fpdu_tx_init(&tx, true, false, 5000 + (uint32_t)n);
	f = rnic_fpdu_build(&tx, &w, sizeof(w), &iov, 1, buf + n,
			    sizeof(buf) - (size_t)n);
	assert_true(f > 0);

	for (i = 0; i <= (size_t)n + (size_t)f; i++) {
		size_t first = i, at;
		int rc;

		rnic_mpa_rx_init(&rx, true);
		rc = rnic_mpa_rx_input(&rx, buf, first, &used);
		if (first < (size_t)n) {
			assert_int_equal(rc, -EAGAIN);
			assert_int_equal(used, first);
			rc = rnic_mpa_rx_input(&rx, buf + first,
					       (size_t)(n + f) - first, &used2);
			used += used2;
		}
		assert_int_equal(rc, 0);
		assert_int_equal(used, (size_t)n); /* not one byte more */
		assert_int_equal(rnic_mpa_connected(&ip, &rx, &rr), 0);
		assert_int_equal(rr.pd_len, 18);
		assert_memory_equal(rr.pdata, "reply-private-data", 18);
		/* Hand the rest (whatever chunking) to the FPDU parser. */
		fpdu_done = 0;
		memset(fpdu_pay, 0, sizeof(fpdu_pay));
		rnic_fpdu_rx_init(&frx, rr.crc, rr.markers_rx,
				  5000 + (uint32_t)n, &ops, NULL);
		at = (size_t)n;
		if (first > at) {
			assert_int_equal(rnic_fpdu_rx_input(&frx, buf + at,
							    first - at,
							    &used2), -EAGAIN);
			at = first;
		}
		assert_int_equal(rnic_fpdu_rx_input(&frx, buf + at,
						    (size_t)(n + f) - at,
						    &used2), -EAGAIN);
		assert_int_equal(fpdu_done, 1);
		assert_memory_equal(fpdu_pay, "payload!", 8);
	}
	/* And the reply fed one byte at a time. */
	rnic_mpa_rx_init(&rx, true);
	for (i = 0; i < (size_t)n; i++)
		assert_int_equal(rnic_mpa_rx_input(&rx, buf + i, 1, &used),
				 i + 1 == (size_t)n ? 0 : -EAGAIN);
	assert_int_equal(rnic_mpa_rx_input(&rx, buf + n, 4, &used), 0);
	assert_int_equal(used, 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_golden_request),
		cmocka_unit_test(test_build_limits),
		cmocka_unit_test(test_negotiate_p2p),
		cmocka_unit_test(test_negotiate_flags),
		cmocka_unit_test(test_rev1_peer),
		cmocka_unit_test(test_reply_errors),
		cmocka_unit_test(test_bad_frames),
		cmocka_unit_test(test_split_and_handoff),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
