/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * RoCEv2 ICRC against reference vectors that rnic did not compute:
 * vectors/icrc_vectors.h comes from scripts/gen_icrc_vectors.py (scapy's
 * contrib RoCE module, cross-checked by a bitwise CRC-32 in the script).
 * Checks: the exact wire bytes, verification, a 1-bit corruption anywhere
 * the ICRC covers is rejected, changes in the masked (variant) fields are
 * not, and the mbuf-chain variants agree for every split point.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include <rte_mbuf.h>

#include "roce/icrc.h"
#include "vectors/icrc_vectors.h"
#include "vectors/icrc6_vectors.h"

#define NVEC (sizeof(icrc_vectors) / sizeof(icrc_vectors[0]))
#define MAXPKT 4200

static void
test_vectors_exact(void **state)
{
	(void)state;
	for (size_t i = 0; i < NVEC; i++) {
		const struct icrc_vector *v = &icrc_vectors[i];
		uint8_t wire[4];
		uint32_t icrc = 0;

		assert_int_equal(rnic_roce_icrc_compute(v->pkt, v->len, &icrc), 0);
		rnic_roce_icrc_put(wire, icrc);
		if (memcmp(wire, v->icrc, 4) != 0)
			fail_msg("%s: got %02x%02x%02x%02x", v->name, wire[0],
				 wire[1], wire[2], wire[3]);
		assert_memory_equal(v->pkt + v->len - 4, v->icrc, 4);
		assert_int_equal(rnic_roce_icrc_get(v->icrc), icrc);
		assert_int_equal(rnic_roce_icrc_verify(v->pkt, v->len), 0);
	}
}

/* generate() writes the same 4 bytes into a packet whose ICRC was zeroed,
 * and ignores bytes beyond the IPv4 total length (Ethernet padding). */
static void
test_generate(void **state)
{
	static uint8_t buf[MAXPKT + 16];

	(void)state;
	for (size_t i = 0; i < NVEC; i++) {
		const struct icrc_vector *v = &icrc_vectors[i];

		memcpy(buf, v->pkt, v->len);
		memset(buf + v->len - 4, 0, 4);
		memset(buf + v->len, 0xa5, 16);
		assert_int_equal(rnic_roce_icrc_verify(buf, v->len + 16),
				 -EBADMSG);
		assert_int_equal(rnic_roce_icrc_generate(buf, v->len + 16), 0);
		assert_memory_equal(buf, v->pkt, v->len);
		assert_int_equal(rnic_roce_icrc_verify(buf, v->len + 16), 0);
	}
}

/* True for bits the ICRC masks: IPv4 TOS, TTL, checksum; UDP checksum;
 * BTH byte 4 (FECN, BECN, resv6). */
static int
masked_byte(size_t off)
{
	return off == 1 || off == 8 || off == 10 || off == 11 ||
	       off == 20 + 6 || off == 20 + 7 || off == 20 + 8 + 4;
}

/*
 * Flip every bit of every vector. Outside the masked fields verification
 * must fail (a length bit may make the packet unparseable: -EINVAL is a
 * rejection too); inside them it must still pass.
 */
static void
test_bit_flips(void **state)
{
	static uint8_t buf[MAXPKT];
	unsigned long rejected = 0, tolerated = 0, bits = 0;

	(void)state;
	for (size_t i = 0; i < NVEC; i++) {
		const struct icrc_vector *v = &icrc_vectors[i];

		/* every vector has a 20-byte IPv4 header: masked_byte() needs it */
		assert_int_equal(v->pkt[0], 0x45);
		bits += 8ul * v->len;
		memcpy(buf, v->pkt, v->len);
		for (size_t off = 0; off < v->len; off++) {
			for (int bit = 0; bit < 8; bit++) {
				int rc;

				buf[off] ^= (uint8_t)(1u << bit);
				rc = rnic_roce_icrc_verify(buf, v->len);
				buf[off] ^= (uint8_t)(1u << bit);
				if (masked_byte(off)) {
					if (rc != 0)
						fail_msg("%s: masked byte %zu bit %d "
							 "rejected", v->name, off, bit);
					tolerated++;
				} else {
					if (rc == 0)
						fail_msg("%s: flip at byte %zu bit %d "
							 "accepted", v->name, off, bit);
					assert_true(rc == -EBADMSG || rc == -EINVAL);
					rejected++;
				}
			}
		}
	}
	assert_int_equal(tolerated, NVEC * 7 * 8);
	assert_int_equal(rejected + tolerated, bits);
}

static void
test_bad_headers(void **state)
{
	const struct icrc_vector *v = &icrc_vectors[0];
	uint8_t buf[64];
	uint32_t icrc;

	(void)state;
	memcpy(buf, v->pkt, v->len);
	/* shorter than the IPv4 total length */
	assert_int_equal(rnic_roce_icrc_compute(buf, v->len - 1, &icrc), -EINVAL);
	assert_int_equal(rnic_roce_icrc_compute(buf, 10, &icrc), -EINVAL);
	/* total length too small for IPv4 + UDP + BTH + ICRC */
	buf[2] = 0;
	buf[3] = 20 + 8 + 12 + 3;
	assert_int_equal(rnic_roce_icrc_compute(buf, v->len, &icrc), -EINVAL);
	memcpy(buf, v->pkt, v->len);
	buf[0] = 0x44;                          /* IHL 4 */
	assert_int_equal(rnic_roce_icrc_verify(buf, v->len), -EINVAL);
	buf[0] = 0x65;                          /* version 6, no UDP next header */
	assert_int_equal(rnic_roce_icrc_verify(buf, v->len), -EINVAL);
}

/* An mbuf over caller memory: enough for mtod and rte_pktmbuf_read. */
static void
fake_seg(struct rte_mbuf *m, uint8_t *mem, uint16_t headroom, uint16_t len)
{
	memset(m, 0, sizeof(*m));
	m->buf_addr = mem;
	m->buf_len = (uint16_t)(headroom + len);
	m->data_off = headroom;
	m->data_len = len;
	m->pkt_len = len;
	m->nb_segs = 1;
}

/* Chain of up to 3 segments holding @pkt (@len bytes) after @lead bytes
 * of Ethernet-like lead-in, cut at @cut1 and @cut2 (offsets in the whole). */
struct chain {
	struct rte_mbuf seg[3];
	uint8_t mem[3][MAXPKT + 64];
};

static struct rte_mbuf *
make_chain(struct chain *c, const uint8_t *pkt, uint32_t len, uint32_t lead,
	   uint32_t cut1, uint32_t cut2)
{
	static uint8_t whole[MAXPKT + 64];
	uint32_t total = lead + len;
	uint32_t cuts[4] = { 0, cut1, cut2, total };
	int n = 0;

	memset(whole, 0xee, lead);
	memcpy(whole + lead, pkt, len);
	for (int s = 0; s < 3; s++) {
		uint32_t from = cuts[s], to = cuts[s + 1];

		if (to <= from)
			continue;
		fake_seg(&c->seg[n], c->mem[n], 8, (uint16_t)(to - from));
		memcpy(c->mem[n] + 8, whole + from, to - from);
		if (n > 0)
			c->seg[n - 1].next = &c->seg[n];
		n++;
	}
	c->seg[0].pkt_len = total;
	c->seg[0].nb_segs = (uint16_t)n;
	return &c->seg[0];
}

/* Copy a chain's bytes out, for comparing after generate_mbuf(). */
static void
chain_bytes(const struct rte_mbuf *m, uint8_t *out)
{
	for (; m != NULL; m = m->next) {
		memcpy(out, rte_pktmbuf_mtod(m, const uint8_t *), m->data_len);
		out += m->data_len;
	}
}

static void
test_mbuf_splits(void **state)
{
	static struct chain c;
	static uint8_t flat[MAXPKT + 64];
	static uint8_t zeroed[MAXPKT];
	const uint32_t lead = 14;
	unsigned long runs = 0;

	(void)state;
	for (size_t i = 0; i < NVEC; i++) {
		const struct icrc_vector *v = &icrc_vectors[i];
		uint32_t total = lead + v->len;
		/* every single cut for small packets, a stride for large ones */
		uint32_t step = v->len > 400 ? 37 : 1;

		for (uint32_t cut = 1; cut < total; cut += step) {
			uint32_t cut2 = cut + (total - cut) / 2;
			struct rte_mbuf *m;
			uint32_t icrc = 0;

			m = make_chain(&c, v->pkt, v->len, lead, cut, cut2);
			assert_int_equal(rnic_roce_icrc_compute_mbuf(m, lead,
								     &icrc), 0);
			assert_int_equal(icrc, rnic_roce_icrc_get(v->icrc));
			assert_int_equal(rnic_roce_icrc_verify_mbuf(m, lead), 0);

			/* zero the ICRC, wherever the cuts put it, then let
			 * generate_mbuf() put it back byte for byte */
			memcpy(zeroed, v->pkt, v->len);
			memset(zeroed + v->len - 4, 0, 4);
			m = make_chain(&c, zeroed, v->len, lead, cut, cut2);
			assert_int_equal(rnic_roce_icrc_verify_mbuf(m, lead),
					 -EBADMSG);
			assert_int_equal(rnic_roce_icrc_generate_mbuf(m, lead), 0);
			chain_bytes(m, flat);
			assert_memory_equal(flat + lead, v->pkt, v->len);
			runs++;
		}
	}
	assert_true(runs > 500);
}

/* A chain that ends before the IPv4 total length is refused, not read past. */
static void
test_mbuf_short(void **state)
{
	static struct chain c;
	const struct icrc_vector *v = &icrc_vectors[1];
	struct rte_mbuf *m;
	uint32_t icrc;

	(void)state;
	m = make_chain(&c, v->pkt, v->len - 1, 0, 30, 40);
	assert_int_equal(rnic_roce_icrc_compute_mbuf(m, 0, &icrc), -EINVAL);
	assert_int_equal(rnic_roce_icrc_verify_mbuf(m, 0), -EINVAL);
	assert_int_equal(rnic_roce_icrc_compute_mbuf(m, 1000, &icrc), -EINVAL);
	assert_int_equal(rnic_roce_icrc_compute_mbuf(NULL, 0, &icrc), -EINVAL);
}

/* ---- RoCEv2 over IPv6 (vectors/icrc6_vectors.h) ---- */

#define NVEC6 (sizeof(icrc6_vectors) / sizeof(icrc6_vectors[0]))

/* The bits the ICRC masks over IPv6: traffic class (bits 4..11), flow
 * label (12..31), hop limit (byte 7); UDP checksum; BTH byte 4. */
static int
masked_bit6(size_t off, int bit)
{
	if (off == 0)
		return bit < 4;          /* the traffic class's high nibble */
	return off == 1 || off == 2 || off == 3 || off == 7 ||
	       off == 40 + 6 || off == 40 + 7 || off == 40 + 8 + 4;
}

/* The two independent references (scapy-field masking + zlib, byte
 * masking + bitwise CRC) and rnic agree; generate() restores the ICRC;
 * every bit outside the masked fields is caught, every masked one is not. */
static void
test_ipv6(void **state)
{
	static uint8_t buf[MAXPKT];
	unsigned long tolerated = 0;

	(void)state;
	for (size_t i = 0; i < NVEC6; i++) {
		const struct icrc6_vector *v = &icrc6_vectors[i];
		uint32_t icrc = 0;
		uint8_t wire[4];

		assert_int_equal(rnic_roce_icrc_compute(v->pkt, v->len, &icrc), 0);
		rnic_roce_icrc_put(wire, icrc);
		if (memcmp(wire, v->icrc, 4) != 0)
			fail_msg("%s: got %02x%02x%02x%02x", v->name, wire[0], wire[1],
				 wire[2], wire[3]);
		assert_int_equal(rnic_roce_icrc_verify(v->pkt, v->len), 0);
		memcpy(buf, v->pkt, v->len);
		memset(buf + v->len - 4, 0, 4);
		assert_int_equal(rnic_roce_icrc_generate(buf, v->len), 0);
		assert_memory_equal(buf, v->pkt, v->len);
		for (size_t off = 0; off < v->len; off++)
			for (int bit = 0; bit < 8; bit++) {
				buf[off] ^= (uint8_t)(1u << bit);
				int rc = rnic_roce_icrc_verify(buf, v->len);
				buf[off] ^= (uint8_t)(1u << bit);
				if (masked_bit6(off, bit)) {
					if (rc != 0)
						fail_msg("%s: masked byte %zu bit %d rejected",
							 v->name, off, bit);
					tolerated++;
				} else if (rc == 0) {
					fail_msg("%s: flip at byte %zu bit %d accepted", v->name,
						 off, bit);
				}
			}
	}
	/* 4 + 3 * 8 + 8 + 16 + 8 bits per packet */
	assert_int_equal(tolerated, NVEC6 * 60);
}

/* IPv6 headers that cannot carry RoCEv2, and a split chain. */
static void
test_ipv6_headers_and_chain(void **state)
{
	static struct chain c;
	const struct icrc6_vector *v = &icrc6_vectors[2];
	uint8_t buf[MAXPKT];
	uint32_t icrc;

	(void)state;
	memcpy(buf, v->pkt, v->len);
	buf[6] = 6;                              /* next header TCP */
	assert_int_equal(rnic_roce_icrc_compute(buf, v->len, &icrc), -EINVAL);
	memcpy(buf, v->pkt, v->len);
	buf[5]++;                                /* payload longer than the buffer */
	assert_int_equal(rnic_roce_icrc_compute(buf, v->len, &icrc), -EINVAL);
	buf[4] = 0;
	buf[5] = 8 + 12 + 3;                     /* too short for UDP + BTH + ICRC */
	assert_int_equal(rnic_roce_icrc_compute(buf, v->len, &icrc), -EINVAL);
	for (uint32_t cut = 1; cut < 14u + v->len; cut += 3) {
		struct rte_mbuf *m = make_chain(&c, v->pkt, v->len, 14, cut,
						cut + (14u + v->len - cut) / 2);
		assert_int_equal(rnic_roce_icrc_compute_mbuf(m, 14, &icrc), 0);
		assert_int_equal(icrc, rnic_roce_icrc_get(v->icrc));
		assert_int_equal(rnic_roce_icrc_verify_mbuf(m, 14), 0);
	}
}

/* ---- every length around the short-packet fold (icrc.c) ---- */

/* A bitwise reflected CRC-32 (0xEDB88320), no tables, no ISA-L. */
static uint32_t
crc32_bitwise(uint32_t crc, const uint8_t *p, size_t len)
{
	crc = ~crc;
	for (size_t i = 0; i < len; i++) {
		crc ^= p[i];
		for (int b = 0; b < 8; b++)
			crc = (crc >> 1) ^ (0xedb88320u & (0u - (crc & 1u)));
	}
	return ~crc;
}

/* The ICRC of the packet at @p (IPv4 with @v6 false, @ihl bytes of IP
 * header), masked byte by byte here and run through the bitwise CRC. */
static uint32_t
icrc_reference(const uint8_t *p, uint32_t tot, int v6, uint32_t ihl)
{
	static uint8_t ps[MAXPKT + 8];

	memset(ps, 0xff, 8);
	memcpy(ps + 8, p, tot - 4);
	if (v6) {
		ps[8] |= 0x0f;
		ps[9] = ps[10] = ps[11] = 0xff;
		ps[8 + 7] = 0xff;
	} else {
		ps[8 + 1] = ps[8 + 8] = ps[8 + 10] = ps[8 + 11] = 0xff;
	}
	ps[8 + ihl + 6] = ps[8 + ihl + 7] = 0xff;
	ps[8 + ihl + 8 + 4] = 0xff;
	return crc32_bitwise(0, ps, 8 + tot - 4);
}

/*
 * Every packet length from the smallest to well past ICRC_SHORT_MAX (the
 * short fold's limit, 256 bytes of CRC input), whole words or not, both
 * families, random
 * bytes: the contiguous and the single-segment mbuf ICRC equal the
 * bitwise reference. The short fold rounds the input up to 16 bytes with
 * leading zeros, so each of the 16 roundings is met many times.
 */
static void
test_every_short_length(void **state)
{
	static uint8_t pkt[MAXPKT], mem[MAXPKT + 64];
	struct rte_mbuf m;
	uint32_t seed = 12345;

	(void)state;
	/* IPv4 with every header length (options: never sent, but a
	 * received packet may carry them; the fuzzer found a 40-byte IPv4
	 * header taken for IPv6 by the short fold), then IPv6 */
	for (uint32_t hl = 5; hl <= 16; hl++) {
		int v6 = hl == 16;
		uint32_t ihl = v6 ? 40 : hl * 4;
		/* every length, also those no sender makes (not a multiple of
		 * 4: a received packet may claim one; the fuzzer found the fold
		 * getting them wrong) */
		for (uint32_t tot = ihl + 8 + 12 + 4; tot <= ihl + 8 + 12 + 4 + 400; tot++) {
			for (uint32_t i = 0; i < tot; i++) {
				seed = seed * 1103515245u + 12345u;
				pkt[i] = (uint8_t)(seed >> 16);
			}
			if (v6) {
				pkt[0] = (uint8_t)(0x60 | (pkt[0] & 0x0f));
				pkt[4] = (uint8_t)((tot - 40) >> 8);
				pkt[5] = (uint8_t)(tot - 40);
				pkt[6] = 17;
			} else {
				pkt[0] = (uint8_t)(0x40 | hl);
				pkt[2] = (uint8_t)(tot >> 8);
				pkt[3] = (uint8_t)tot;
			}
			uint32_t want = icrc_reference(pkt, tot, v6, ihl), got = 0;
			assert_int_equal(rnic_roce_icrc_compute(pkt, tot, &got), 0);
			if (got != want)
				fail_msg("IPv%d, header %u, %u bytes: %08x, want %08x", v6 ? 6 : 4,
					 ihl, tot, got, want);
			fake_seg(&m, mem, 14, (uint16_t)(tot + 14));
			memcpy(mem + 28, pkt, tot);
			got = 0;
			assert_int_equal(rnic_roce_icrc_compute_mbuf(&m, 14, &got), 0);
			assert_int_equal(got, want);
		}
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_vectors_exact),
		cmocka_unit_test(test_generate),
		cmocka_unit_test(test_bit_flips),
		cmocka_unit_test(test_bad_headers),
		cmocka_unit_test(test_mbuf_splits),
		cmocka_unit_test(test_mbuf_short),
		cmocka_unit_test(test_ipv6),
		cmocka_unit_test(test_ipv6_headers_and_chain),
		cmocka_unit_test(test_every_short_length),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
