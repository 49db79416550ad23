/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * FPDU framing: MULPDU sizing, golden FPDU bytes, markers at every start
 * offset modulo 512, round trips with random sizes and random split
 * points, and CRC / marker / header / truncation errors.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "iwarp/crc32c.h"
#include "iwarp/fpdu.h"

#define MAXF 8
#define WIRE_MAX (MAXF * 4096)

/* What the receive upcalls saw. */
struct sink {
	int hdrs, dones, skip_next, fail_payload;
	uint32_t expect_off;
	uint8_t hdr[MAXF][RNIC_IWARP_HDR_MAX];
	uint16_t hdr_len[MAXF];
	uint8_t pay[MAXF][4096];
	uint32_t pay_len[MAXF];
	uint32_t fpdu_pos[MAXF];
};

static int
sink_hdr(void *arg, const struct rnic_fpdu_info *fi)
{
	struct sink *s = arg;

	assert_true(s->hdrs < MAXF);
	memcpy(s->hdr[s->hdrs], fi->hdr, fi->hdr_len);
	s->hdr_len[s->hdrs] = fi->hdr_len;
	s->pay_len[s->hdrs] = 0;
	s->fpdu_pos[s->hdrs] = fi->fpdu_pos;
	s->hdrs++;
	if (s->skip_next) {
		s->skip_next = 0;
		return RNIC_FPDU_SKIP;
	}
	return 0;
}

static int
sink_payload(void *arg, const struct rnic_fpdu_info *fi, uint32_t off,
	     const uint8_t *data, uint32_t len)
{
	struct sink *s = arg;
	int i = s->hdrs - 1;

	if (s->fail_payload)
		return -ENOBUFS;
	/* Runs arrive in order and never beyond the announced length. */
	assert_int_equal(off, s->pay_len[i]);
	assert_true(off + len <= fi->payload_len);
	memcpy(s->pay[i] + off, data, len);
	s->pay_len[i] += len;
	return 0;
}

static int
sink_done(void *arg, const struct rnic_fpdu_info *fi)
{
	struct sink *s = arg;

	assert_int_equal(s->pay_len[s->hdrs - 1] +
			 (s->skip_next ? 0 : 0), s->pay_len[s->hdrs - 1]);
	(void)fi;
	s->dones++;
	return 0;
}

static const struct rnic_fpdu_rx_ops sink_ops = {
	.hdr = sink_hdr, .payload = sink_payload, .done = sink_done,
};

/* Build a tagged Write header (14 bytes). */
static void
mk_write_hdr(uint8_t *h, uint32_t stag, uint64_t to, bool last)
{
	struct rnic_ddp_tagged_hdr t;

	t.ddp_ctrl = rnic_ddp_ctrl(true, last);
	t.rdmap_ctrl = rnic_rdmap_ctrl(RNIC_RDMAP_OP_WRITE);
	t.stag = rte_cpu_to_be_32(stag);
	t.to = rte_cpu_to_be_64(to);
	memcpy(h, &t, sizeof(t));
}

/* Build an untagged Send header (18 bytes). */
static void
mk_send_hdr(uint8_t *h, uint32_t msn)
{
	struct rnic_ddp_untagged_hdr u;

	memset(&u, 0, sizeof(u));
	u.ddp_ctrl = rnic_ddp_ctrl(false, true);
	u.rdmap_ctrl = rnic_rdmap_ctrl(RNIC_RDMAP_OP_SEND);
	u.msn = rte_cpu_to_be_32(msn);
	memcpy(h, &u, sizeof(u));
}

static void
rx_setup(struct rnic_fpdu_rx *rx, struct sink *s, bool crc, bool markers,
	 uint32_t base, uint32_t start)
{
	memset(s, 0, sizeof(*s));
	rnic_fpdu_rx_init(rx, crc, markers, base, &sink_ops, s);
	rx->pos = start;
	rx->fpdu_start = start;
}

static void
test_mulpdu(void **state)
{
	(void)state;
	/* 1460: 1460 - 6 = 1454 (FPDU 2 + 1454 + 0 + 4 = 1460). With markers
	 * 3 more words (ceil(1460/512) = 3): 1442. */
	assert_int_equal(rnic_mpa_mulpdu(1460, false), 1454);
	assert_int_equal(rnic_mpa_mulpdu(1460, true), 1442);
	/* 1461: an odd byte cannot be used (FPDUs are 4-byte multiples). */
	assert_int_equal(rnic_mpa_mulpdu(1461, false), 1454);
	assert_int_equal(rnic_mpa_mulpdu(8960, false), 8954);
	assert_int_equal(rnic_mpa_mulpdu(6, false), 0);
	assert_int_equal(rnic_mpa_mulpdu(200000, false), 0xffff);
	assert_int_equal(rnic_ddp_max_payload(1460, false, 14), 1440);
	assert_int_equal(rnic_ddp_max_payload(1460, false, 18), 1436);
	assert_int_equal(rnic_ddp_max_payload(20, false, 18), 0);
}

/* A MULPDU-sized FPDU fits the EMSS wherever it starts. */
static void
test_mulpdu_fits(void **state)
{
	static const uint32_t emss[] = { 64, 536, 1000, 1220, 1448, 1460,
					 1461, 1462, 1463, 4000, 8960 };
	struct rnic_fpdu_tx tx;
	size_t i;
	uint32_t k;

	(void)state;
	for (i = 0; i < RTE_DIM(emss); i++) {
		for (k = 0; k < 512; k += 4) {
			rnic_fpdu_tx_init(&tx, true, true, 0);
			tx.pos = k;
			assert_true(rnic_fpdu_tx_len(&tx,
				rnic_mpa_mulpdu(emss[i], true)) <= emss[i]);
		}
		rnic_fpdu_tx_init(&tx, true, false, 0);
		assert_true(rnic_fpdu_tx_len(&tx,
			rnic_mpa_mulpdu(emss[i], false)) <= emss[i]);
		/* ...and one more byte would not (no markers, aligned). */
		if (emss[i] % 4 == 0)
			assert_true(rnic_fpdu_tx_len(&tx,
				rnic_mpa_mulpdu(emss[i], false) + 1) > emss[i]);
	}
}

static void
test_golden_fpdu(void **state)
{
	struct rnic_fpdu_tx tx;
	uint8_t hdr[18], out[64];
	struct iovec iov = { (void *)"xyz", 3 };
	int n;

	(void)state;
	mk_send_hdr(hdr, 1);
	/* ULPDU 18 + 3 = 21 = 0x0015; 2 + 21 = 23 needs 1 pad byte; CRC over
	 * the 24 bytes before it, least significant byte first. */
	rnic_fpdu_tx_init(&tx, true, false, 1000);
	n = rnic_fpdu_build(&tx, hdr, 18, &iov, 1, out, sizeof(out));
	assert_int_equal(n, 28);
	assert_int_equal(out[0], 0x00);
	assert_int_equal(out[1], 0x15);
	assert_memory_equal(out + 2, hdr, 18);
	assert_memory_equal(out + 20, "xyz", 3);
	assert_int_equal(out[23], 0);
	assert_int_equal(rnic_crc32c_get(out + 24), rnic_crc32c(0, out, 24));
	assert_int_equal(tx.pos, 1028);

	/* CRC off: the field is still there, zero. */
	rnic_fpdu_tx_init(&tx, false, false, 0);
	n = rnic_fpdu_build(&tx, hdr, 18, &iov, 1, out, sizeof(out));
	assert_int_equal(n, 28);
	assert_int_equal(rnic_crc32c_get(out + 24), 0);

	/* Markers, FPDU at the marker base: marker first, FPDUPTR 0, then
	 * the same FPDU; the CRC covers the marker. */
	rnic_fpdu_tx_init(&tx, true, true, 512 * 3);
	n = rnic_fpdu_build(&tx, hdr, 18, &iov, 1, out, sizeof(out));
	assert_int_equal(n, 32);
	assert_int_equal(out[0] | out[1] | out[2] | out[3], 0);
	assert_int_equal(out[5], 0x15);
	assert_int_equal(rnic_crc32c_get(out + 28), rnic_crc32c(0, out, 28));

	/* FPDU starting 12 bytes before a marker position: the marker lands
	 * after 12 logical bytes with FPDUPTR 12 (0x000c). */
	rnic_fpdu_tx_init(&tx, true, true, 0);
	tx.pos = 500;
	n = rnic_fpdu_build(&tx, hdr, 18, &iov, 1, out, sizeof(out));
	assert_int_equal(n, 32);
	assert_memory_equal(out + 2, hdr, 10);
	assert_int_equal(out[12], 0);
	assert_int_equal(out[13], 0);
	assert_int_equal(out[14], 0x00);
	assert_int_equal(out[15], 0x0c);
	assert_memory_equal(out + 16, hdr + 10, 8);

	assert_int_equal(rnic_fpdu_build(&tx, hdr, 18, &iov, 1, out, 20),
			 -ENOSPC);
	assert_int_equal(tx.pos, 532);
}

/* Independent marker check: walk the wire image of FPDUs that started at
 * @p starts[] and check a marker sits at every marker position, its
 * FPDUPTR counted from the FPDU's ULPDU_Length field (RFC 5044 s5): 4
 * bytes after the start when a marker leads the FPDU, which has 0. */
static void
check_markers(const uint8_t *wire, size_t len, uint32_t base, uint32_t pos0,
	      const uint32_t *starts, int nf)
{
	size_t i;
	int f = 0;

	for (i = 0; i < len; i++) {
		uint32_t pos = pos0 + (uint32_t)i;

		/* Compare offsets from pos0: positions wrap at 2^32. */
		while (f + 1 < nf && starts[f + 1] - pos0 <= pos - pos0)
			f++;
		if (((pos - base) & 511) == 0) {
			uint16_t ptr = (uint16_t)((wire[i + 2] << 8) |
						  wire[i + 3]);

			assert_true(i + 4 <= len);
			assert_int_equal(wire[i] | wire[i + 1], 0);
			uint32_t len_pos = starts[f] +
				(((starts[f] - base) & 511) == 0 ? 4 : 0);

			assert_int_equal(ptr, pos == starts[f] ? 0 : pos - len_pos);
		}
	}
}

/* Build @p nf random FPDUs at stream position @p start. */
static size_t
build_stream(struct rnic_fpdu_tx *tx, uint8_t *wire, int nf,
	     uint8_t hdrs[][RNIC_IWARP_HDR_MAX], uint8_t pays[][4096],
	     uint32_t *plen, uint32_t *starts)
{
	size_t n = 0;
	int f;

	for (f = 0; f < nf; f++) {
		struct iovec iov[3];
		uint32_t len = (uint32_t)(rand() % 1500), a, b, j;
		int rc;

		for (j = 0; j < len; j++)
			pays[f][j] = (uint8_t)rand();
		plen[f] = len;
		a = len ? (uint32_t)rand() % (len + 1) : 0;
		b = a + (len - a ? (uint32_t)rand() % (len - a + 1) : 0);
		iov[0] = (struct iovec){ pays[f], a };
		iov[1] = (struct iovec){ pays[f] + a, b - a };
		iov[2] = (struct iovec){ pays[f] + b, len - b };
		if (f & 1)
			mk_send_hdr(hdrs[f], (uint32_t)f);
		else
			mk_write_hdr(hdrs[f], 0x100u + (uint32_t)f,
				     (uint64_t)f << 32, true);
		starts[f] = tx->pos;
		rc = rnic_fpdu_build(tx, hdrs[f], (f & 1) ? 18 : 14, iov, 3,
				     wire + n, WIRE_MAX - n);
		assert_true(rc > 0);
		assert_int_equal((size_t)rc,
				 (size_t)(tx->pos - starts[f]));
		n += (size_t)rc;
	}
	return n;
}

/* Feed @p wire in chunks cut at random points (or at every byte). */
static void
feed(struct rnic_fpdu_rx *rx, const uint8_t *wire, size_t len, int mode)
{
	size_t off = 0;

	while (off < len) {
		size_t run = len - off, used = 0;

		if (mode == 1)
			run = 1;
		else if (mode == 2)
			run = 1 + (size_t)rand() % (run < 700 ? run : 700);
		assert_int_equal(rnic_fpdu_rx_input(rx, wire + off, run, &used),
				 -EAGAIN);
		assert_int_equal(used, run);
		off += run;
	}
}

static struct sink g_sink;
static uint8_t g_wire[WIRE_MAX];
static uint8_t g_hdrs[MAXF][RNIC_IWARP_HDR_MAX];
static uint8_t g_pays[MAXF][4096];

static void
roundtrip(bool crc, bool markers, uint32_t base, uint32_t k, int mode)
{
	struct rnic_fpdu_tx tx;
	struct rnic_fpdu_rx rx;
	uint32_t plen[MAXF], starts[MAXF];
	int nf = 3, f;
	size_t n;

	rnic_fpdu_tx_init(&tx, crc, markers, base);
	tx.pos = base + k;
	n = build_stream(&tx, g_wire, nf, g_hdrs, g_pays, plen, starts);
	if (markers)
		check_markers(g_wire, n, base, base + k, starts, nf);
	rx_setup(&rx, &g_sink, crc, markers, base, base + k);
	feed(&rx, g_wire, n, mode);
	assert_int_equal(g_sink.dones, nf);
	assert_int_equal(rx.stage, RNIC_FPDU_ST_LEN);
	for (f = 0; f < nf; f++) {
		assert_int_equal(g_sink.hdr_len[f], (f & 1) ? 18 : 14);
		assert_memory_equal(g_sink.hdr[f], g_hdrs[f],
				    g_sink.hdr_len[f]);
		assert_int_equal(g_sink.pay_len[f], plen[f]);
		assert_memory_equal(g_sink.pay[f], g_pays[f], plen[f]);
		assert_int_equal(g_sink.fpdu_pos[f], starts[f]);
	}
	assert_int_equal(rx.pos, tx.pos);
}

/* Markers inserted and removed at every FPDU start offset modulo 512. */
static void
test_markers_every_offset(void **state)
{
	uint32_t k;

	(void)state;
	srand(1);
	for (k = 0; k < 512; k++) {
		roundtrip(true, true, 0xfffff000u, k, 2);
		roundtrip(false, true, 77, k, 0);
	}
}

/* Random sizes and random split points, all CRC/marker combinations,
 * including a stream position that wraps 2^32. */
static void
test_roundtrip_random(void **state)
{
	int i;

	(void)state;
	srand(2);
	for (i = 0; i < 200; i++) {
		uint32_t base = (uint32_t)rand() * 7919u;
		uint32_t k = (uint32_t)rand() % 4096;

		roundtrip(i & 1, i & 2, base, k, 2);
	}
	roundtrip(true, true, 0xffffff00u, 0, 2);
}

/* One FPDU split at every byte boundary, and fed one byte at a time. */
static void
test_every_split(void **state)
{
	struct rnic_fpdu_tx tx;
	struct rnic_fpdu_rx rx;
	uint8_t hdr[14], pay[700], wire[800];
	struct iovec iov = { pay, sizeof(pay) };
	size_t i, used;
	int n, m;

	(void)state;
	for (i = 0; i < sizeof(pay); i++)
		pay[i] = (uint8_t)(i * 13);
	mk_write_hdr(hdr, 0xabcd, 0x10, true);
	for (m = 0; m < 2; m++) {
		rnic_fpdu_tx_init(&tx, true, m, 0);
		tx.pos = 300;
		n = rnic_fpdu_build(&tx, hdr, 14, &iov, 1, wire, sizeof(wire));
		assert_true(n > 0);
		for (i = 0; i <= (size_t)n; i++) {
			rx_setup(&rx, &g_sink, true, m, 0, 300);
			assert_int_equal(rnic_fpdu_rx_input(&rx, wire, i, &used),
					 -EAGAIN);
			assert_int_equal(used, i);
			assert_int_equal(g_sink.dones, i == (size_t)n);
			assert_int_equal(rnic_fpdu_rx_input(&rx, wire + i,
							    (size_t)n - i,
							    &used), -EAGAIN);
			assert_int_equal(g_sink.dones, 1);
			assert_memory_equal(g_sink.pay[0], pay, sizeof(pay));
		}
		rx_setup(&rx, &g_sink, true, m, 0, 300);
		feed(&rx, wire, (size_t)n, 1);
		assert_int_equal(g_sink.dones, 1);
		assert_memory_equal(g_sink.pay[0], pay, sizeof(pay));
	}
}

/* Zero-length Write (RTR-like), SKIP from the hdr upcall, callback abort. */
static void
test_zero_len_skip_abort(void **state)
{
	struct rnic_fpdu_tx tx;
	struct rnic_fpdu_rx rx;
	uint8_t hdr[14], wire[200], pay[40];
	struct iovec iov = { pay, sizeof(pay) };
	size_t used;
	int n, n2;

	(void)state;
	memset(pay, 0x5a, sizeof(pay));
	mk_write_hdr(hdr, 1, 0, true);
	rnic_fpdu_tx_init(&tx, true, false, 0);
	n = rnic_fpdu_build(&tx, hdr, 14, NULL, 0, wire, sizeof(wire));
	/* 2 + 14 = 16: no pad, + CRC = 20. */
	assert_int_equal(n, 20);
	n2 = rnic_fpdu_build(&tx, hdr, 14, &iov, 1, wire + n,
			     sizeof(wire) - (size_t)n);
	rx_setup(&rx, &g_sink, true, false, 0, 0);
	g_sink.skip_next = 0;
	assert_int_equal(rnic_fpdu_rx_input(&rx, wire, (size_t)n, &used),
			 -EAGAIN);
	assert_int_equal(g_sink.dones, 1);
	assert_int_equal(g_sink.pay_len[0], 0);
	g_sink.skip_next = 1;
	assert_int_equal(rnic_fpdu_rx_input(&rx, wire + n, (size_t)n2, &used),
			 -EAGAIN);
	assert_int_equal(g_sink.dones, 2);
	assert_int_equal(g_sink.pay_len[1], 0); /* skipped, not delivered */

	rx_setup(&rx, &g_sink, true, false, 0, 0);
	g_sink.fail_payload = 1;
	assert_int_equal(rnic_fpdu_rx_input(&rx, wire, (size_t)(n + n2),
					    &used), -ENOBUFS);
	assert_true(used < (size_t)(n + n2));
	assert_int_equal(rx.stage, RNIC_FPDU_ST_ERROR);
	assert_int_equal(rnic_fpdu_rx_input(&rx, wire, 4, &used), -EPROTO);
	assert_int_equal(used, 0);
}

/* Feed a whole stream, expect -EPROTO with @p cause. */
static void
expect_error(const uint8_t *wire, size_t n, bool crc, bool markers,
	     enum rnic_term_cause cause)
{
	struct rnic_fpdu_rx rx;
	size_t used;

	rx_setup(&rx, &g_sink, crc, markers, 0, 0);
	assert_int_equal(rnic_fpdu_rx_input(&rx, wire, n, &used), -EPROTO);
	assert_int_equal(rx.err, cause);
	assert_int_equal(g_sink.dones, 0);
	assert_true(used <= n);
}

/* Feed a whole stream with markers (no CRC): one FPDU completes. */
static void
expect_ok_markers(const uint8_t *wire, size_t n)
{
	struct rnic_fpdu_rx rx;
	size_t used;

	rx_setup(&rx, &g_sink, false, true, 0, 0);
	assert_int_equal(rnic_fpdu_rx_input(&rx, wire, n, &used), -EAGAIN);
	assert_int_equal(used, n);
	assert_int_equal(g_sink.dones, 1);
	assert_int_not_equal(rx.stage, RNIC_FPDU_ST_ERROR);
}

static void
test_crc_errors(void **state)
{
	struct rnic_fpdu_tx tx;
	struct rnic_fpdu_rx rx;
	uint8_t hdr[18], wire[300], pay[100];
	struct iovec iov = { pay, sizeof(pay) };
	size_t used;
	int n, i;

	(void)state;
	memset(pay, 7, sizeof(pay));
	mk_send_hdr(hdr, 1);
	rnic_fpdu_tx_init(&tx, true, false, 0);
	n = rnic_fpdu_build(&tx, hdr, 18, &iov, 1, wire, sizeof(wire));
	/* Any flipped bit in length-covered bytes or the CRC is caught. */
	for (i = 2; i < n; i++) {
		wire[i] ^= 0x10;
		expect_error(wire, (size_t)n, true, false, RNIC_TERM_MPA_CRC);
		wire[i] ^= 0x10;
	}
	/* CRC not negotiated: payload corruption goes through, unchecked. */
	rnic_fpdu_tx_init(&tx, false, false, 0);
	n = rnic_fpdu_build(&tx, hdr, 18, &iov, 1, wire, sizeof(wire));
	wire[50] ^= 1;
	rx_setup(&rx, &g_sink, false, false, 0, 0);
	assert_int_equal(rnic_fpdu_rx_input(&rx, wire, (size_t)n, &used),
			 -EAGAIN);
	assert_int_equal(g_sink.dones, 1);
	assert_int_not_equal(rx.stage, RNIC_FPDU_ST_ERROR);
}

static void
test_marker_error(void **state)
{
	struct rnic_fpdu_tx tx;
	uint8_t hdr[18], wire[1200], pay[1000];
	struct iovec iov = { pay, sizeof(pay) };
	int n;

	(void)state;
	memset(pay, 1, sizeof(pay));
	mk_send_hdr(hdr, 1);
	rnic_fpdu_tx_init(&tx, false, true, 0);
	n = rnic_fpdu_build(&tx, hdr, 18, &iov, 1, wire, sizeof(wire));
	/* Markers at 0 (FPDUPTR 0, in front of ULPDU_Length at 4) and 512:
	 * FPDUPTR counts from the ULPDU_Length field (RFC 5044 s5), so 508
	 * (0x01fc), not 512 from the leading marker (issue 19). */
	assert_int_equal(wire[514], 0x01);
	assert_int_equal(wire[515], 0xfc);
	expect_ok_markers(wire, (size_t)n);
	wire[514] = 0x02;   /* the old, wrong 512 */
	wire[515] = 0x00;
	expect_error(wire, (size_t)n, false, true, RNIC_TERM_MPA_MARKER);
	wire[514] = 0x01;
	wire[515] = 0xfc;
	wire[3] = 1;
	expect_error(wire, (size_t)n, false, true, RNIC_TERM_MPA_MARKER);
}

/* Markers negotiated (we asked, M=1) but the peer sends none: the bytes
 * where the first marker is due (ULPDU_Length and the control bytes) are
 * read as a marker whose FPDUPTR is not 0, a Terminate MPA 0x03, and
 * nothing is delivered, with or without CRC (issue 27). */
static void
test_markers_missing(void **state)
{
	struct rnic_fpdu_tx tx;
	uint8_t hdr[18], wire[1200], pay[1000];
	struct iovec iov = { pay, sizeof(pay) };
	int n;

	(void)state;
	memset(pay, 0, sizeof(pay));
	mk_send_hdr(hdr, 1);
	for (int crc = 0; crc < 2; crc++) {
		rnic_fpdu_tx_init(&tx, crc != 0, false, 0);
		n = rnic_fpdu_build(&tx, hdr, 18, &iov, 1, wire, sizeof(wire));
		assert_true(n > 0);
		expect_error(wire, (size_t)n, crc != 0, true, RNIC_TERM_MPA_MARKER);
		assert_int_equal(g_sink.hdrs, 0);
	}
}

/* Build an FPDU with a raw (possibly invalid) ULPDU, valid CRC. */
static int
raw_fpdu(const uint8_t *ulpdu, size_t len, uint8_t *wire, size_t cap)
{
	struct rnic_fpdu_tx tx;

	rnic_fpdu_tx_init(&tx, true, false, 0);
	return rnic_fpdu_build(&tx, ulpdu, len, NULL, 0, wire, cap);
}

static void
test_header_errors(void **state)
{
	struct rnic_fpdu_rx rx;
	struct rnic_term_offender off;
	uint8_t u[64], wire[128];
	size_t used;
	int n;

	(void)state;
	memset(u, 0, sizeof(u));
	/* DDP version 2 on a tagged segment. */
	mk_write_hdr(u, 5, 0, true);
	u[0] = (uint8_t)((u[0] & ~RNIC_DDP_DV_MASK) | 2);
	n = raw_fpdu(u, 20, wire, sizeof(wire));
	expect_error(wire, (size_t)n, true, false, RNIC_TERM_DDP_T_VERSION);
	/* The offending DDP header is kept for the Terminate. */
	rx_setup(&rx, &g_sink, true, false, 0, 0);
	assert_int_equal(rnic_fpdu_rx_input(&rx, wire, (size_t)n, &used),
			 -EPROTO);
	rnic_fpdu_rx_offender(&rx, &off);
	assert_non_null(off.ddp_hdr);
	assert_memory_equal(off.ddp_hdr, u, 14);
	assert_int_equal(off.ddp_seg_len, 20);
	/* Same, untagged. */
	mk_send_hdr(u, 1);
	u[0] = 0x40;
	n = raw_fpdu(u, 18, wire, sizeof(wire));
	expect_error(wire, (size_t)n, true, false, RNIC_TERM_DDP_U_VERSION);
	/* RDMAP version 0. */
	mk_send_hdr(u, 1);
	u[1] = RNIC_RDMAP_OP_SEND;
	n = raw_fpdu(u, 18, wire, sizeof(wire));
	expect_error(wire, (size_t)n, true, false, RNIC_TERM_RDMAP_VERSION);
	/* Unassigned opcode 0xc (RFC 7306 took 8 to 0xb), and a Send with
	 * the T bit. */
	mk_send_hdr(u, 1);
	u[1] = rnic_rdmap_ctrl(0xc);
	n = raw_fpdu(u, 18, wire, sizeof(wire));
	expect_error(wire, (size_t)n, true, false, RNIC_TERM_RDMAP_OPCODE);
	mk_send_hdr(u, 1);
	u[0] |= RNIC_DDP_FLAG_T;
	n = raw_fpdu(u, 18, wire, sizeof(wire));
	expect_error(wire, (size_t)n, true, false, RNIC_TERM_RDMAP_OPCODE);
	/* ULPDU shorter than the Send header, and shorter than 2 bytes. */
	mk_send_hdr(u, 1);
	n = raw_fpdu(u, 10, wire, sizeof(wire));
	expect_error(wire, (size_t)n, true, false, RNIC_TERM_DDP_CATASTROPHIC);
	n = raw_fpdu(u, 1, wire, sizeof(wire));
	expect_error(wire, (size_t)n, true, false, RNIC_TERM_DDP_CATASTROPHIC);
	n = raw_fpdu(u, 0, wire, sizeof(wire));
	expect_error(wire, (size_t)n, true, false, RNIC_TERM_DDP_CATASTROPHIC);
	/* A bad header with a bad CRC is a CRC error: CRC is checked first. */
	mk_send_hdr(u, 1);
	u[1] = rnic_rdmap_ctrl(9);
	n = raw_fpdu(u, 30, wire, sizeof(wire));
	wire[25] ^= 0xff;
	expect_error(wire, (size_t)n, true, false, RNIC_TERM_MPA_CRC);
}

static void
test_truncation_and_sizes(void **state)
{
	struct rnic_fpdu_tx tx;
	struct rnic_fpdu_rx rx;
	static uint8_t big[70000], wire[72000];
	struct iovec iov = { big, 0 };
	uint8_t hdr[18];
	size_t used;
	int n;

	(void)state;
	mk_send_hdr(hdr, 1);
	rnic_fpdu_tx_init(&tx, true, false, 0);
	/* ULPDU of exactly 65535 bytes is the largest. */
	iov.iov_len = 65535 - 18;
	n = rnic_fpdu_build(&tx, hdr, 18, &iov, 1, wire, sizeof(wire));
	assert_int_equal(n, 2 + 65535 + 3 + 4);
	iov.iov_len++;
	assert_int_equal(rnic_fpdu_build(&tx, hdr, 18, &iov, 1, wire,
					 sizeof(wire)), -EMSGSIZE);
	/* A truncated stream waits: no upcall for the incomplete FPDU. */
	iov.iov_len = 100;
	rnic_fpdu_tx_init(&tx, true, false, 0);
	n = rnic_fpdu_build(&tx, hdr, 18, &iov, 1, wire, sizeof(wire));
	rx_setup(&rx, &g_sink, true, false, 0, 0);
	assert_int_equal(rnic_fpdu_rx_input(&rx, wire, (size_t)n - 1, &used),
			 -EAGAIN);
	assert_int_equal(used, (size_t)n - 1);
	assert_int_equal(g_sink.dones, 0);
	assert_int_equal(rx.stage, RNIC_FPDU_ST_CRC);
	assert_int_equal(rnic_fpdu_rx_input(&rx, wire + n - 1, 1, &used),
			 -EAGAIN);
	assert_int_equal(g_sink.dones, 1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mulpdu),
		cmocka_unit_test(test_mulpdu_fits),
		cmocka_unit_test(test_golden_fpdu),
		cmocka_unit_test(test_markers_every_offset),
		cmocka_unit_test(test_markers_missing),
		cmocka_unit_test(test_roundtrip_random),
		cmocka_unit_test(test_every_split),
		cmocka_unit_test(test_zero_len_skip_abort),
		cmocka_unit_test(test_crc_errors),
		cmocka_unit_test(test_marker_error),
		cmocka_unit_test(test_header_errors),
		cmocka_unit_test(test_truncation_and_sizes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
