/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Golden bytes for the iWARP wire structs, CRC32c vectors (RFC 3720 B.4),
 * and the Terminate cause table and builder. Every expected byte is derived
 * by hand from the RFC figures; the derivation is in the comments.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include <rte_mbuf.h>

#include "iwarp/crc32c.h"
#include "iwarp/fpdu.h"
#include "iwarp/iwarp_wire.h"
#include "iwarp/rdmap_op.h"
#include "iwarp/terminate.h"

/* ------------------------------------------------------------ CRC32c -- */

/* RFC 3720 B.4 lists each CRC in wire order, least significant byte
 * first; rnic_crc32c_put must reproduce those bytes exactly. */
static void
check_vec(const uint8_t *buf, size_t len, const uint8_t wire[4])
{
	uint8_t got[4];
	uint32_t crc = rnic_crc32c(0, buf, len);

	rnic_crc32c_put(got, crc);
	assert_memory_equal(got, wire, 4);
	assert_int_equal(rnic_crc32c_get(wire), crc);
}

static void
test_crc_rfc3720(void **state)
{
	static const uint8_t zeros_crc[4] = { 0xaa, 0x36, 0x91, 0x8a };
	static const uint8_t ones_crc[4] = { 0x43, 0xab, 0xa8, 0x62 };
	static const uint8_t inc_crc[4] = { 0x4e, 0x79, 0xdd, 0x46 };
	static const uint8_t dec_crc[4] = { 0x5c, 0xdb, 0x3f, 0x11 };
	static const uint8_t pdu_crc[4] = { 0x56, 0x3a, 0x96, 0xd9 };
	/* iSCSI SCSI Read (10) command PDU of RFC 3720 B.4. */
	static const uint8_t pdu[48] = {
		0x01, 0xc0, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
		0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
		0x14, 0x00, 0x00, 0x00, 0x00, 0x00, 0x04, 0x00,
		0x00, 0x00, 0x00, 0x14, 0x00, 0x00, 0x00, 0x18,
		0x28, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
		0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	};
	uint8_t buf[32];
	int i;

	(void)state;
	memset(buf, 0, sizeof(buf));
	check_vec(buf, 32, zeros_crc);
	assert_int_equal(rnic_crc32c(0, buf, 32), 0x8a9136aa);
	memset(buf, 0xff, sizeof(buf));
	check_vec(buf, 32, ones_crc);
	for (i = 0; i < 32; i++)
		buf[i] = (uint8_t)i;
	check_vec(buf, 32, inc_crc);
	for (i = 0; i < 32; i++)
		buf[i] = (uint8_t)(31 - i);
	check_vec(buf, 32, dec_crc);
	check_vec(pdu, sizeof(pdu), pdu_crc);
	/* The classic check value of CRC-32C. */
	assert_int_equal(rnic_crc32c(0, "123456789", 9), 0xe3069283);
}

static void
test_crc_chaining(void **state)
{
	uint8_t buf[100];
	uint32_t whole;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t)(i * 7 + 3);
	whole = rnic_crc32c(0, buf, sizeof(buf));
	for (i = 0; i <= sizeof(buf); i++)
		assert_int_equal(rnic_crc32c(rnic_crc32c(0, buf, i), buf + i,
					     sizeof(buf) - i), whole);
	assert_int_equal(rnic_crc32c(0, buf, 0), 0);
}

/* Bit-at-a-time CRC32c (reflected polynomial 0x82f63b78), the reference
 * for both of rnic_crc32c()'s paths. */
static uint32_t
crc32c_bitwise(uint32_t crc, const uint8_t *p, size_t n)
{
	crc = ~crc;
	while (n--) {
		crc ^= *p++;
		for (int k = 0; k < 8; k++)
			crc = (crc >> 1) ^ (0x82f63b78u & (0u - (crc & 1)));
	}
	return ~crc;
}

/* Every length across the switch between the CRC32 instruction (small
 * pieces) and ISA-L, at every alignment, alone and continued, and the
 * copying variant the FPDU builder uses. */
static void
test_crc_paths_agree(void **state)
{
	static uint8_t buf[700];
	(void)state;
	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t)(i * 131 + 17);
	for (size_t off = 0; off < 8; off++)
		for (size_t n = 0; n + off <= 600; n++) {
			uint32_t want = crc32c_bitwise(0, buf + off, n);
			assert_int_equal(rnic_crc32c(0, buf + off, n), want);
			assert_int_equal(rnic_crc32c(0x12345678, buf + off, n),
					 crc32c_bitwise(0x12345678, buf + off, n));
			/* the copying variant: the same CRC, the bytes copied,
			 * nothing written past them */
			uint8_t dst[610];
			memset(dst, 0xa5, sizeof(dst));
			assert_int_equal(rnic_crc32c_copy(0x12345678, dst + 1, buf + off, n),
					 crc32c_bitwise(0x12345678, buf + off, n));
			assert_memory_equal(dst + 1, buf + off, n);
			assert_int_equal(dst[0], 0xa5);
			assert_int_equal(dst[n + 1], 0xa5);
		}
}

/* fuzz_ddp's first finding (issue 19, input in tests/fuzz/crashes/ddp/):
 * the non-copying CRC32-instruction loop advanced its NULL destination by
 * zero, undefined behaviour that clang's UBSan reports ("applying zero
 * offset to null pointer") for any piece of 8 to 191 bytes. Every piece
 * the loop handles, 8 and 4 bytes at a time, plus NULL with length 0 for
 * both functions; run under clang -fsanitize=undefined to see the check. */
static void
test_crc_insn_no_dst(void **state)
{
	static const uint8_t in[12] = { 0x5d, 0xe6, 0x0a, 0x0a, 0x0a, 0x5b,
					 1, 2, 3, 4, 5, 6 };
	(void)state;
	for (size_t n = 0; n <= sizeof(in); n++)
		assert_int_equal(rnic_crc32c(0, in, n), crc32c_bitwise(0, in, n));
	assert_int_equal(rnic_crc32c(0x1234, NULL, 0), 0x1234);
	assert_int_equal(rnic_crc32c_copy(0x1234, NULL, NULL, 0), 0x1234);
}

/* mbuf chain built by hand: no EAL or mempool needed for pointer math. */
static void
test_crc_mbuf(void **state)
{
	static uint8_t store[3][64];
	struct rte_mbuf m[3];
	uint8_t flat[48];
	uint32_t got;
	int i;

	(void)state;
	memset(m, 0, sizeof(m));
	for (i = 0; i < 3; i++) {
		m[i].buf_addr = store[i];
		m[i].data_off = 8;
		m[i].data_len = 16;
		m[i].next = i < 2 ? &m[i + 1] : NULL;
		memset(store[i] + 8, 0x30 + i, 16);
		memset(flat + 16 * i, 0x30 + i, 16);
	}
	assert_int_equal(rnic_crc32c_mbuf(0, m, 0, 48, &got), 0);
	assert_int_equal(got, rnic_crc32c(0, flat, 48));
	assert_int_equal(rnic_crc32c_mbuf(0, m, 5, 30, &got), 0);
	assert_int_equal(got, rnic_crc32c(0, flat + 5, 30));
	assert_int_equal(rnic_crc32c_mbuf(0, m, 16, 32, &got), 0);
	assert_int_equal(got, rnic_crc32c(0, flat + 16, 32));
	assert_int_equal(rnic_crc32c_mbuf(0, m, 20, 29, &got), -EINVAL);
}

/* ------------------------------------------------------- golden bytes -- */

static void
test_golden_mpa_rr(void **state)
{
	struct rnic_mpa_rr_hdr h;
	struct rnic_mpa_v2_hdr v2 = { 0, 0 };
	/* "MPA ID Rep Frame" in ASCII; flags M|C = 0x80|0x40 = 0xc0;
	 * Rev 1; PD_Length 0x0104 = 260, big endian. */
	static const uint8_t want[20] = {
		0x4d, 0x50, 0x41, 0x20, 0x49, 0x44, 0x20, 0x52,
		0x65, 0x70, 0x20, 0x46, 0x72, 0x61, 0x6d, 0x65,
		0xc0, 0x01, 0x01, 0x04,
	};
	/* IRD 0x3fff | M (0x8000) | Z (0x4000) = 0xffff;
	 * ORD 5 | W (0x8000) = 0x8005. */
	static const uint8_t want_v2[4] = { 0xff, 0xff, 0x80, 0x05 };

	(void)state;
	memcpy(h.key, RNIC_MPA_KEY_REP, RNIC_MPA_KEY_LEN);
	h.flags = RNIC_MPA_FLAG_M | RNIC_MPA_FLAG_C;
	h.rev = RNIC_MPA_REV1;
	h.pd_length = rte_cpu_to_be_16(260);
	assert_memory_equal(&h, want, sizeof(want));

	v2.ird = RNIC_MPA_V2_P2P | RNIC_MPA_V2_RTR_SEND;
	v2.ord = RNIC_MPA_V2_RTR_WRITE;
	rnic_mpa_v2_set_ird(&v2, 0xffff); /* clamps to 14 bits */
	rnic_mpa_v2_set_ord(&v2, 5);
	assert_memory_equal(&v2, want_v2, 4);
	assert_int_equal(rnic_mpa_v2_ird(&v2), 0x3fff);
	assert_int_equal(rnic_mpa_v2_ord(&v2), 5);
	assert_true(v2.ord & RNIC_MPA_V2_RTR_WRITE);
	assert_false(v2.ord & RNIC_MPA_V2_RTR_READ);
}

static void
test_golden_mpa_fpdu_marker(void **state)
{
	struct rnic_mpa_fpdu_hdr f = { rte_cpu_to_be_16(0x0123) };
	struct rnic_mpa_marker mk = { 0, rte_cpu_to_be_16(0x01fc) };
	static const uint8_t want_f[2] = { 0x01, 0x23 };
	/* Reserved 0000, FPDUPTR 0x01fc = 508. */
	static const uint8_t want_mk[4] = { 0x00, 0x00, 0x01, 0xfc };

	(void)state;
	assert_memory_equal(&f, want_f, 2);
	assert_memory_equal(&mk, want_mk, 4);
	/* Pad makes 2 + ULPDU a multiple of 4. */
	assert_int_equal(rnic_mpa_pad_len(14), 0);
	assert_int_equal(rnic_mpa_pad_len(15), 3);
	assert_int_equal(rnic_mpa_pad_len(16), 2);
	assert_int_equal(rnic_mpa_pad_len(17), 1);
	assert_int_equal(rnic_mpa_pad_len(0), 2);
}

static void
test_golden_ddp(void **state)
{
	struct rnic_ddp_tagged_hdr t;
	struct rnic_ddp_untagged_hdr u;
	/* DDP ctrl: T(0x80)|L(0x40)|DV 1 = 0xc1. RDMAP ctrl: RV 1 << 6 |
	 * opcode 0 (Write) = 0x40. STag, then the 64-bit TO, big endian. */
	static const uint8_t want_t[14] = {
		0xc1, 0x40, 0x12, 0x34, 0x56, 0x78,
		0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08,
	};
	/* DDP ctrl: untagged, not last, DV 1 = 0x01. RDMAP: RV 1, opcode 4
	 * (Send with Invalidate) = 0x44. Invalidate STag, QN 0, MSN 1,
	 * MO 0x1000. */
	static const uint8_t want_u[18] = {
		0x01, 0x44, 0xaa, 0xbb, 0xcc, 0xdd,
		0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01,
		0x00, 0x00, 0x10, 0x00,
	};

	(void)state;
	t.ddp_ctrl = rnic_ddp_ctrl(true, true);
	t.rdmap_ctrl = rnic_rdmap_ctrl(RNIC_RDMAP_OP_WRITE);
	t.stag = rte_cpu_to_be_32(0x12345678);
	t.to = rte_cpu_to_be_64(0x0102030405060708ull);
	assert_memory_equal(&t, want_t, 14);
	assert_true(rnic_ddp_tagged(t.ddp_ctrl));
	assert_true(rnic_ddp_last(t.ddp_ctrl));
	assert_int_equal(rnic_ddp_dv(t.ddp_ctrl), 1);
	assert_int_equal(rnic_rdmap_rv(t.rdmap_ctrl), 1);
	assert_int_equal(rnic_rdmap_opcode(t.rdmap_ctrl), 0);

	u.ddp_ctrl = rnic_ddp_ctrl(false, false);
	u.rdmap_ctrl = rnic_rdmap_ctrl(RNIC_RDMAP_OP_SEND_INV);
	u.inv_stag = rte_cpu_to_be_32(0xaabbccdd);
	u.qn = rte_cpu_to_be_32(RNIC_DDP_QN_SEND);
	u.msn = rte_cpu_to_be_32(1);
	u.mo = rte_cpu_to_be_32(0x1000);
	assert_memory_equal(&u, want_u, 18);
	assert_false(rnic_ddp_tagged(u.ddp_ctrl));
	assert_false(rnic_ddp_last(u.ddp_ctrl));
	assert_int_equal(rnic_rdmap_opcode(u.rdmap_ctrl), 4);
}

static void
test_golden_rdmap(void **state)
{
	struct rnic_rdmap_read_req_hdr rr;
	struct rnic_rdmap_term_hdr th;
	struct rnic_rdmap_atomic_req_hdr ar;
	struct rnic_rdmap_atomic_resp_hdr as;
	/* Sink STag, Sink TO (8), RDMA Read Message Size, Source STag,
	 * Source TO (8), all big endian. */
	static const uint8_t want_rr[28] = {
		0x11, 0x22, 0x33, 0x44,
		0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x10, 0x00,
		0x00, 0x00, 0x20, 0x00,
		0x55, 0x66, 0x77, 0x88,
		0xde, 0xad, 0xbe, 0xef, 0x00, 0x00, 0x00, 0x01,
	};
	/* Layer 1 (DDP) << 28 | EType 2 << 24 | ecode 3 << 16 | M 0x8000 |
	 * D 0x4000 = 0x1203c000. */
	static const uint8_t want_th[4] = { 0x12, 0x03, 0xc0, 0x00 };
	/* Reserved + AtomicOperation 2 (CmpSwap), Request Identifier 7,
	 * Remote STag, Remote TO, Swap Data, Swap Mask, Compare Data,
	 * Compare Mask. */
	static const uint8_t want_ar[52] = {
		0x00, 0x00, 0x00, 0x02,  0x00, 0x00, 0x00, 0x07,
		0xa0, 0xb0, 0xc0, 0xd0,
		0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x40,
		0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x09,
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
		0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03,
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
	};
	/* Original Request Identifier 7, Original Remote Data Value 3. */
	static const uint8_t want_as[12] = {
		0x00, 0x00, 0x00, 0x07,
		0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03,
	};

	(void)state;
	rr.sink_stag = rte_cpu_to_be_32(0x11223344);
	rr.sink_to = rte_cpu_to_be_64(0x1000);
	rr.rdma_rd_sz = rte_cpu_to_be_32(0x2000);
	rr.src_stag = rte_cpu_to_be_32(0x55667788);
	rr.src_to = rte_cpu_to_be_64(0xdeadbeef00000001ull);
	assert_memory_equal(&rr, want_rr, 28);

	rnic_term_set(&th, 1, 2, 3, true, true, false);
	assert_memory_equal(&th, want_th, 4);
	assert_int_equal(rnic_term_layer(&th), 1);
	assert_int_equal(rnic_term_etype(&th), 2);
	assert_int_equal(rnic_term_ecode(&th), 3);
	assert_true(th.term_ctrl & RNIC_TERM_HDRCT_M);
	assert_true(th.term_ctrl & RNIC_TERM_HDRCT_D);
	assert_false(th.term_ctrl & RNIC_TERM_HDRCT_R);

	ar.atomic_op = rte_cpu_to_be_32(RNIC_ATOMIC_CMP_SWAP);
	ar.req_id = rte_cpu_to_be_32(7);
	ar.remote_stag = rte_cpu_to_be_32(0xa0b0c0d0);
	ar.remote_to = rte_cpu_to_be_64(0x40);
	ar.add_swap_data = rte_cpu_to_be_64(9);
	ar.add_swap_mask = rte_cpu_to_be_64(UINT64_MAX);
	ar.compare_data = rte_cpu_to_be_64(3);
	ar.compare_mask = rte_cpu_to_be_64(UINT64_MAX);
	assert_memory_equal(&ar, want_ar, 52);
	assert_int_equal(rnic_atomic_op(&ar), RNIC_ATOMIC_CMP_SWAP);

	as.orig_req_id = rte_cpu_to_be_32(7);
	as.orig_remote_data = rte_cpu_to_be_64(3);
	assert_memory_equal(&as, want_as, 12);
}

/* ------------------------------------------------------------ RFC 7306 -- */

/* The three RFC 7306 messages as rnic sends them, whole ULPDUs (DDP header
 * included), typed in from the RFC 7306 layouts; and the parser takes each
 * as one header with no payload. */
struct r7306_ulpdu {
	struct rnic_ddp_untagged_hdr d;
	union {
		struct rnic_rdmap_imm_hdr i;
		struct rnic_rdmap_atomic_req_hdr q;
		struct rnic_rdmap_atomic_resp_hdr r;
	};
} __rte_packed;

static struct rnic_fpdu_info r7306_seen;
static int r7306_nhdr, r7306_ndone;

static int r7306_hdr(void *arg, const struct rnic_fpdu_info *fi)
{
	(void)arg;
	r7306_seen = *fi;
	r7306_nhdr++;
	return 0;
}

static int r7306_done(void *arg, const struct rnic_fpdu_info *fi)
{
	(void)arg;
	(void)fi;
	r7306_ndone++;
	return 0;
}

/* Frame @p u (@p len bytes) and parse it: one header of @p len bytes. */
static void r7306_parse(const void *u, size_t len, uint8_t opcode)
{
	static const struct rnic_fpdu_rx_ops ops = { .hdr = r7306_hdr, .done = r7306_done };
	struct rnic_fpdu_tx tx;
	struct rnic_fpdu_rx rx;
	uint8_t wire[256];
	size_t used;
	int n;

	rnic_fpdu_tx_init(&tx, true, false, 1000);
	n = rnic_fpdu_build(&tx, u, len, NULL, 0, wire, sizeof(wire));
	assert_true(n > 0);
	rnic_fpdu_rx_init(&rx, true, false, 1000, &ops, NULL);
	r7306_nhdr = r7306_ndone = 0;
	assert_int_equal(rnic_fpdu_rx_input(&rx, wire, (size_t)n, &used), -EAGAIN);
	assert_int_equal(used, n);
	assert_int_equal(r7306_nhdr, 1);
	assert_int_equal(r7306_ndone, 1);
	assert_int_equal(r7306_seen.opcode, opcode);
	assert_int_equal(r7306_seen.hdr_len, len);
	assert_int_equal(r7306_seen.payload_len, 0);
	assert_false(r7306_seen.tagged);
	assert_true(r7306_seen.last);
}

static void
test_golden_rfc7306(void **state)
{
	struct r7306_ulpdu u;
	/* Immediate Data: DDP untagged, L, DV 1 = 0x41; RDMAP RV 1 | 1000b =
	 * 0x48; RsvdULP 0; QN 0; MSN 5; MO 0; 8 bytes of Immediate Data:
	 * imm_data 0xabcd1234 (network order) first, then zeros. */
	static const uint8_t want_imm[26] = {
		0x41, 0x48, 0x00, 0x00, 0x00, 0x00,
		0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x05,
		0x00, 0x00, 0x00, 0x00,
		0xab, 0xcd, 0x12, 0x34, 0x00, 0x00, 0x00, 0x00,
	};
	/* Atomic Request, FetchAdd (0000b): 0x41, RV 1 | 1010b = 0x4a; QN 1
	 * (with the Read Requests), MSN 2, MO 0; Reserved | op 0, Request
	 * Identifier 9, Remote STag 0x00012345, Remote TO 0x7f0000001008,
	 * Add Data 5, Add Mask 0, Compare Data 0, Compare Mask 0. */
	static const uint8_t want_faa[70] = {
		0x41, 0x4a, 0x00, 0x00, 0x00, 0x00,
		0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x02,
		0x00, 0x00, 0x00, 0x00,
		0x00, 0x00, 0x00, 0x00,  0x00, 0x00, 0x00, 0x09,
		0x00, 0x01, 0x23, 0x45,
		0x00, 0x00, 0x7f, 0x00, 0x00, 0x00, 0x10, 0x08,
		0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x05,
		0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
		0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
		0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	};
	/* Atomic Response: 0x41, RV 1 | 1011b = 0x4b; QN 3, MSN 7, MO 0;
	 * Original Request Identifier 9, Original Remote Data 1000. */
	static const uint8_t want_resp[30] = {
		0x41, 0x4b, 0x00, 0x00, 0x00, 0x00,
		0x00, 0x00, 0x00, 0x03, 0x00, 0x00, 0x00, 0x07,
		0x00, 0x00, 0x00, 0x00,
		0x00, 0x00, 0x00, 0x09,
		0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03, 0xe8,
	};
	uint32_t imm = rte_cpu_to_be_32(0xabcd1234);

	(void)state;
	/* the opcode and queue numbers RFC 7306 assigns */
	assert_int_equal(RNIC_RDMAP_OP_IMM_DATA, 0x8);
	assert_int_equal(RNIC_RDMAP_OP_IMM_DATA_SE, 0x9);
	assert_int_equal(RNIC_RDMAP_OP_ATOMIC_REQ, 0xa);
	assert_int_equal(RNIC_RDMAP_OP_ATOMIC_RESP, 0xb);
	assert_int_equal(RNIC_DDP_QN_READ_REQ, 1);
	assert_int_equal(RNIC_DDP_QN_ATOMIC_RESP, 3);
	assert_int_equal(RNIC_ATOMIC_FETCH_ADD, 0);
	assert_int_equal(RNIC_ATOMIC_SWAP, 1);
	assert_int_equal(RNIC_ATOMIC_CMP_SWAP, 2);

	memset(&u, 0, sizeof(u));
	u.d.ddp_ctrl = rnic_ddp_ctrl(false, true);
	u.d.rdmap_ctrl = rnic_rdmap_ctrl(RNIC_RDMAP_OP_IMM_DATA);
	u.d.qn = rte_cpu_to_be_32(RNIC_DDP_QN_SEND);
	u.d.msn = rte_cpu_to_be_32(5);
	memcpy(u.i.immediate_data, &imm, 4);
	assert_memory_equal(&u, want_imm, sizeof(want_imm));
	r7306_parse(&u, sizeof(want_imm), RNIC_RDMAP_OP_IMM_DATA);
	u.d.rdmap_ctrl = rnic_rdmap_ctrl(RNIC_RDMAP_OP_IMM_DATA_SE);
	assert_int_equal(((const uint8_t *)&u)[1], 0x49);
	r7306_parse(&u, sizeof(want_imm), RNIC_RDMAP_OP_IMM_DATA_SE);

	memset(&u, 0, sizeof(u));
	u.d.ddp_ctrl = rnic_ddp_ctrl(false, true);
	u.d.rdmap_ctrl = rnic_rdmap_ctrl(RNIC_RDMAP_OP_ATOMIC_REQ);
	u.d.qn = rte_cpu_to_be_32(RNIC_DDP_QN_READ_REQ);
	u.d.msn = rte_cpu_to_be_32(2);
	u.q.atomic_op = rte_cpu_to_be_32(RNIC_ATOMIC_FETCH_ADD);
	u.q.req_id = rte_cpu_to_be_32(9);
	u.q.remote_stag = rte_cpu_to_be_32(0x12345);
	u.q.remote_to = rte_cpu_to_be_64(0x7f0000001008ull);
	u.q.add_swap_data = rte_cpu_to_be_64(5);
	assert_memory_equal(&u, want_faa, sizeof(want_faa));
	assert_int_equal(rnic_atomic_op(&u.q), RNIC_ATOMIC_FETCH_ADD);
	r7306_parse(&u, sizeof(want_faa), RNIC_RDMAP_OP_ATOMIC_REQ);

	memset(&u, 0, sizeof(u));
	u.d.ddp_ctrl = rnic_ddp_ctrl(false, true);
	u.d.rdmap_ctrl = rnic_rdmap_ctrl(RNIC_RDMAP_OP_ATOMIC_RESP);
	u.d.qn = rte_cpu_to_be_32(RNIC_DDP_QN_ATOMIC_RESP);
	u.d.msn = rte_cpu_to_be_32(7);
	u.r.orig_req_id = rte_cpu_to_be_32(9);
	u.r.orig_remote_data = rte_cpu_to_be_64(1000);
	assert_memory_equal(&u, want_resp, sizeof(want_resp));
	r7306_parse(&u, sizeof(want_resp), RNIC_RDMAP_OP_ATOMIC_RESP);

	/* the opcodes RFC 7306 leaves unassigned stay invalid */
	memset(&u, 0, sizeof(u));
	u.d.ddp_ctrl = rnic_ddp_ctrl(false, true);
	for (uint8_t op = 0xc; op <= 0xf; op++) {
		static const struct rnic_fpdu_rx_ops ops = { .hdr = r7306_hdr };
		struct rnic_fpdu_tx tx;
		struct rnic_fpdu_rx rx;
		uint8_t wire[128];
		size_t used;
		u.d.rdmap_ctrl = rnic_rdmap_ctrl(op);
		rnic_fpdu_tx_init(&tx, true, false, 0);
		int n = rnic_fpdu_build(&tx, &u, 26, NULL, 0, wire, sizeof(wire));
		rnic_fpdu_rx_init(&rx, true, false, 0, &ops, NULL);
		assert_int_equal(rnic_fpdu_rx_input(&rx, wire, (size_t)n, &used), -EPROTO);
		assert_int_equal(rx.err, RNIC_TERM_RDMAP_OPCODE);
	}
}

/* ---------------------------------------------------------- Terminate -- */

static void
test_term_table(void **state)
{
	/* Every cause, spelled out from RFC 5040 s7, RFC 5041 s7, RFC 5044
	 * s8 and RFC 6581: { cause, layer, etype, ecode }. */
	static const uint8_t want[][4] = {
		{ RNIC_TERM_RDMAP_CATASTROPHIC, 0, 0, 0x00 },
		{ RNIC_TERM_RDMAP_INVALID_STAG, 0, 1, 0x00 },
		{ RNIC_TERM_RDMAP_BASE_BOUNDS, 0, 1, 0x01 },
		{ RNIC_TERM_RDMAP_ACCESS_RIGHTS, 0, 1, 0x02 },
		{ RNIC_TERM_RDMAP_STAG_NOT_ASSOC, 0, 1, 0x03 },
		{ RNIC_TERM_RDMAP_TO_WRAP, 0, 1, 0x04 },
		{ RNIC_TERM_RDMAP_INV_PROTECTION, 0, 1, 0x09 },
		{ RNIC_TERM_RDMAP_PROT_UNSPEC, 0, 1, 0xff },
		{ RNIC_TERM_RDMAP_VERSION, 0, 2, 0x05 },
		{ RNIC_TERM_RDMAP_OPCODE, 0, 2, 0x06 },
		{ RNIC_TERM_RDMAP_CATASTROPHIC_STREAM, 0, 2, 0x07 },
		{ RNIC_TERM_RDMAP_CATASTROPHIC_GLOBAL, 0, 2, 0x08 },
		{ RNIC_TERM_RDMAP_CANNOT_INVALIDATE, 0, 2, 0x09 },
		{ RNIC_TERM_RDMAP_OP_UNSPEC, 0, 2, 0xff },
		{ RNIC_TERM_DDP_CATASTROPHIC, 1, 0, 0x00 },
		{ RNIC_TERM_DDP_T_INVALID_STAG, 1, 1, 0x00 },
		{ RNIC_TERM_DDP_T_BASE_BOUNDS, 1, 1, 0x01 },
		{ RNIC_TERM_DDP_T_STAG_NOT_ASSOC, 1, 1, 0x02 },
		{ RNIC_TERM_DDP_T_TO_WRAP, 1, 1, 0x03 },
		{ RNIC_TERM_DDP_T_VERSION, 1, 1, 0x04 },
		{ RNIC_TERM_DDP_U_INVALID_QN, 1, 2, 0x01 },
		{ RNIC_TERM_DDP_U_NO_BUFFER, 1, 2, 0x02 },
		{ RNIC_TERM_DDP_U_MSN_RANGE, 1, 2, 0x03 },
		{ RNIC_TERM_DDP_U_INVALID_MO, 1, 2, 0x04 },
		{ RNIC_TERM_DDP_U_TOO_LONG, 1, 2, 0x05 },
		{ RNIC_TERM_DDP_U_VERSION, 1, 2, 0x06 },
		{ RNIC_TERM_MPA_TCP_LOST, 2, 0, 0x01 },
		{ RNIC_TERM_MPA_CRC, 2, 0, 0x02 },
		{ RNIC_TERM_MPA_MARKER, 2, 0, 0x03 },
		{ RNIC_TERM_MPA_INVALID_RR, 2, 0, 0x04 },
		{ RNIC_TERM_MPA_CATASTROPHIC, 2, 0, 0x05 },
		{ RNIC_TERM_MPA_INSUFFICIENT_IRD, 2, 0, 0x06 },
		{ RNIC_TERM_MPA_NO_MATCHING_RTR, 2, 0, 0x07 },
	};
	size_t i;

	(void)state;
	assert_int_equal(RTE_DIM(want), RNIC_TERM_MAX);
	for (i = 0; i < RTE_DIM(want); i++) {
		const struct rnic_term_info *ti = rnic_term_info(want[i][0]);

		assert_non_null(ti);
		assert_int_equal(ti->layer, want[i][1]);
		assert_int_equal(ti->etype, want[i][2]);
		assert_int_equal(ti->ecode, want[i][3]);
		assert_non_null(ti->name);
		assert_string_not_equal(ti->name, "?");
	}
	assert_null(rnic_term_info(RNIC_TERM_MAX));
	assert_string_equal(rnic_term_name(RNIC_TERM_MAX), "?");
	assert_string_equal(rnic_term_name(RNIC_TERM_MPA_CRC), "mpa_crc_error");

	assert_int_equal(rnic_term_tagged_fault(RNIC_STAG_INVALID),
			 RNIC_TERM_DDP_T_INVALID_STAG);
	assert_int_equal(rnic_term_tagged_fault(RNIC_STAG_BOUNDS),
			 RNIC_TERM_DDP_T_BASE_BOUNDS);
	assert_int_equal(rnic_term_tagged_fault(RNIC_STAG_PD),
			 RNIC_TERM_DDP_T_STAG_NOT_ASSOC);
	assert_int_equal(rnic_term_tagged_fault(RNIC_STAG_ACCESS),
			 RNIC_TERM_RDMAP_ACCESS_RIGHTS);
	assert_int_equal(rnic_term_tagged_fault(RNIC_STAG_TO_WRAP),
			 RNIC_TERM_DDP_T_TO_WRAP);
	assert_int_equal(rnic_term_read_src_fault(RNIC_STAG_INVALID),
			 RNIC_TERM_RDMAP_INVALID_STAG);
	assert_int_equal(rnic_term_read_src_fault(RNIC_STAG_BOUNDS),
			 RNIC_TERM_RDMAP_BASE_BOUNDS);
	assert_int_equal(rnic_term_read_src_fault(RNIC_STAG_PD),
			 RNIC_TERM_RDMAP_STAG_NOT_ASSOC);
	assert_int_equal(rnic_term_read_src_fault(RNIC_STAG_ACCESS),
			 RNIC_TERM_RDMAP_ACCESS_RIGHTS);
	/* Send with Invalidate refused: Remote Protection 0x09 for rights
	 * or PD, Remote Operation 0x09 for an unknown STag (Linux siw) */
	assert_int_equal(rnic_term_inv_fault(RNIC_STAG_ACCESS),
			 RNIC_TERM_RDMAP_INV_PROTECTION);
	assert_int_equal(rnic_term_inv_fault(RNIC_STAG_PD),
			 RNIC_TERM_RDMAP_INV_PROTECTION);
	assert_int_equal(rnic_term_inv_fault(RNIC_STAG_INVALID),
			 RNIC_TERM_RDMAP_CANNOT_INVALIDATE);
	assert_int_equal(rnic_term_info(RNIC_TERM_RDMAP_INV_PROTECTION)->etype,
			 RNIC_TERM_ETYPE_RDMAP_PROTECTION);
	assert_int_equal(rnic_term_info(RNIC_TERM_RDMAP_INV_PROTECTION)->ecode, 0x09);
}

static void
test_term_build(void **state)
{
	/* Offending tagged Write header (14 bytes) in a 114-byte ULPDU. */
	static const uint8_t bad_ddp[14] = {
		0xc1, 0x40, 0xde, 0xad, 0x00, 0x01,
		0, 0, 0, 0, 0, 0, 0x01, 0x00,
	};
	static const uint8_t rreq_ddp[18] = {
		0x41, 0x41, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 9, 0, 0, 0, 0,
	};
	static const uint8_t rreq[28] = { [0] = 0x11, [27] = 0x99 };
	/* Untagged DDP: ctrl L|DV1 = 0x41; RDMAP RV1 | op 7 = 0x47;
	 * RsvdULP 0; QN 2; MSN 1; MO 0. Then Terminate control: layer 1,
	 * etype 1, ecode 0 (DDP invalid STag), M|D = 0x1100c000; DDP
	 * Segment Length 114 = 0x0072; then the quoted DDP header. */
	static const uint8_t want[18 + 4 + 2 + 14] = {
		0x41, 0x47, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 1, 0, 0, 0, 0,
		0x11, 0x00, 0xc0, 0x00, 0x00, 0x72,
		0xc1, 0x40, 0xde, 0xad, 0x00, 0x01,
		0, 0, 0, 0, 0, 0, 0x01, 0x00,
	};
	struct rnic_term_offender off = { bad_ddp, 114, NULL };
	uint8_t out[RNIC_TERM_ULPDU_MAX];
	int n;

	(void)state;
	n = rnic_term_build(RNIC_TERM_DDP_T_INVALID_STAG, 1, &off, out,
			    sizeof(out));
	assert_int_equal(n, sizeof(want));
	assert_memory_equal(out, want, sizeof(want));

	/* RDMAP error on a Read Request: D and R; the 28-byte header last.
	 * Control: layer 0, etype 1, ecode 2, M|D|R = 0x0102e000. */
	off.ddp_hdr = rreq_ddp;
	off.ddp_seg_len = 46;
	off.read_req = rreq;
	n = rnic_term_build(RNIC_TERM_RDMAP_ACCESS_RIGHTS, 1, &off, out,
			    sizeof(out));
	assert_int_equal(n, 18 + 4 + 2 + 18 + 28);
	assert_int_equal(out[18], 0x01);
	assert_int_equal(out[19], 0x02);
	assert_int_equal(out[20], 0xe0);
	assert_int_equal(out[21], 0x00);
	assert_int_equal(out[22], 0x00);
	assert_int_equal(out[23], 46);
	assert_memory_equal(out + 24, rreq_ddp, 18);
	assert_memory_equal(out + 42, rreq, 28);

	/* A DDP cause never quotes the RDMA header; an MPA startup cause
	 * quotes nothing: 22 bytes, control 0x20060000. */
	n = rnic_term_build(RNIC_TERM_DDP_U_MSN_RANGE, 1, &off, out,
			    sizeof(out));
	assert_int_equal(n, 18 + 4 + 2 + 18);
	assert_int_equal(out[20] & 0x20, 0);
	n = rnic_term_build(RNIC_TERM_MPA_INSUFFICIENT_IRD, 1, &off, out,
			    sizeof(out));
	assert_int_equal(n, 22);
	assert_int_equal(out[18], 0x20);
	assert_int_equal(out[19], 0x06);
	assert_int_equal(out[20], 0x00);
	n = rnic_term_build(RNIC_TERM_MPA_CRC, 1, NULL, out, sizeof(out));
	assert_int_equal(n, 22);

	assert_int_equal(rnic_term_build(RNIC_TERM_MAX, 1, NULL, out, 64),
			 -EINVAL);
	assert_int_equal(rnic_term_build(RNIC_TERM_MPA_CRC, 1, NULL, out, 21),
			 -ENOSPC);
}

/* --------------------------------------------------- RDMAP opcodes -- */

/*
 * The opcode table against the RFC text, every figure typed by hand:
 * header lengths are the DDP header (RFC 5041 s4.3 tagged 14 bytes, s4.4
 * untagged 18) plus the fixed RDMAP header (RFC 5040 s4.4 Read Request
 * 28, s4.8 Terminate control 4; RFC 7306: Immediate Data 8, Atomic
 * Request 52, Atomic Response 12). Queues: RFC 5040 s5.1 (0 Sends, 1 Read
 * Requests, 2 Terminate), RFC 7306 s4.1 and its IANA queue entries
 * (Immediate Data on 0, Atomic Requests on 1, Atomic Responses on 3).
 */
static void
test_rdmap_op_table(void **state)
{
	static const struct {
		uint8_t op, hdr_len, qn, place, dir;
		bool tagged, completes, new_op, se, inv;
	} want[] = {
		{ 0x0, 14, 0, RNIC_PLACE_TAGGED, RNIC_DIR_REQUEST, true, false, true, false, false },
		{ 0x1, 46, 1, RNIC_PLACE_HDR, RNIC_DIR_REQUEST, false, false, true, false, false },
		{ 0x2, 14, 0, RNIC_PLACE_TAGGED, RNIC_DIR_RESPONSE, true, true, false, false, false },
		{ 0x3, 18, 0, RNIC_PLACE_RECV, RNIC_DIR_REQUEST, false, true, true, false, false },
		{ 0x4, 18, 0, RNIC_PLACE_RECV, RNIC_DIR_REQUEST, false, true, true, false, true },
		{ 0x5, 18, 0, RNIC_PLACE_RECV, RNIC_DIR_REQUEST, false, true, true, true, false },
		{ 0x6, 18, 0, RNIC_PLACE_RECV, RNIC_DIR_REQUEST, false, true, true, true, true },
		{ 0x7, 22, 2, RNIC_PLACE_TERM, RNIC_DIR_BOTH, false, false, false, false, false },
		{ 0x8, 26, 0, RNIC_PLACE_HDR, RNIC_DIR_REQUEST, false, true, false, false, false },
		{ 0x9, 26, 0, RNIC_PLACE_HDR, RNIC_DIR_REQUEST, false, true, false, true, false },
		{ 0xa, 70, 1, RNIC_PLACE_HDR, RNIC_DIR_REQUEST, false, false, true, false, false },
		{ 0xb, 30, 3, RNIC_PLACE_HDR, RNIC_DIR_RESPONSE, false, true, false, false, false },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		const struct rnic_rdmap_op_info *o = rnic_rdmap_op(want[i].op);

		print_message("opcode 0x%x\n", want[i].op);
		assert_int_equal(o->hdr_len, want[i].hdr_len);
		assert_int_equal(o->tagged, want[i].tagged);
		if (!want[i].tagged)
			assert_int_equal(o->qn, want[i].qn);
		assert_int_equal(o->place, want[i].place);
		assert_int_equal(o->dir, want[i].dir);
		assert_int_equal(o->completes, want[i].completes);
		assert_int_equal(o->new_op, want[i].new_op);
		assert_int_equal(o->solicited, want[i].se);
		assert_int_equal(o->invalidates, want[i].inv);
	}
	/* 1100b-1111b are reserved (RFC 5040 s4.3, RFC 7306 s4.1): invalid */
	for (i = 0xc; i <= 0xf; i++) {
		assert_int_equal(rnic_rdmap_op((uint8_t)i)->hdr_len, 0);
		assert_int_equal(rnic_rdmap_op((uint8_t)i)->place, RNIC_PLACE_INVALID);
	}
	/* the accessor keeps to the 4-bit field */
	assert_ptr_equal(rnic_rdmap_op(0x13), rnic_rdmap_op(0x3));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_crc_rfc3720),
		cmocka_unit_test(test_crc_chaining),
		cmocka_unit_test(test_crc_paths_agree),
		cmocka_unit_test(test_crc_insn_no_dst),
		cmocka_unit_test(test_crc_mbuf),
		cmocka_unit_test(test_golden_mpa_rr),
		cmocka_unit_test(test_golden_mpa_fpdu_marker),
		cmocka_unit_test(test_golden_ddp),
		cmocka_unit_test(test_golden_rdmap),
		cmocka_unit_test(test_golden_rfc7306),
		cmocka_unit_test(test_rdmap_op_table),
		cmocka_unit_test(test_term_table),
		cmocka_unit_test(test_term_build),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
