/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * RoCEv2 ICRC over the reflected CRC-32; see icrc.h for what is covered.
 * Short packets (at most ICRC_SHORT_MAX bytes of CRC input, a 64-byte Write
 * is 128) are folded in place with the CPU's carry-less multiply, the
 * masks applied in registers; longer ones, IPv4 headers with options and
 * CPUs without the instruction use ISA-L over a masked copy of the pseudo
 * header and then the rest: two calls and a copy read back at once (its
 * stores not yet forwarded), about 40 ns for a 64-byte Write.
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include <isa-l/crc.h>
#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "common/mbuf_crc.h"
#include <rte_mbuf.h>

#include "roce/icrc.h"
#include "roce/opcode.h"

#define ICRC_LRH_LEN     8u        /* 0xff bytes standing in for the LRH */
#define ICRC_IP_MIN      20u
#define ICRC_IP_MAX      60u
#define ICRC_UDP_LEN     8u
/* Masked pseudo header: LRH stand-in, IPv4 (with options), UDP, BTH. */
#define ICRC_PSEUDO_MAX  (ICRC_LRH_LEN + ICRC_IP_MAX + ICRC_UDP_LEN + \
			  RNIC_ROCE_BTH_LEN)

#define ICRC_IP6_LEN     40u       /* IPv6 header; RoCEv2 uses no extension headers */

/* Byte offsets of the variant fields. */
#define ICRC_IP6_HLIM    7u
#define ICRC_IP_TOS      1u
#define ICRC_IP_TTL      8u
#define ICRC_IP_CSUM     10u
#define ICRC_UDP_CSUM    6u
#define ICRC_BTH_FECN    4u

/* CRC input bytes (LRH stand-in, headers, payload, pad) up to which the
 * carry-less fold runs; above, ISA-L's wider folding wins. */
#define ICRC_SHORT_MAX   256u

/* The packet's length from its IP header's first 8 bytes: the IPv4 total
 * length, or 40 + the IPv6 payload length. */
static uint32_t
icrc_total(const uint8_t *ip)
{
	if ((ip[0] >> 4) == 6)
		return ICRC_IP6_LEN + (((uint32_t)ip[4] << 8) | ip[5]);
	return ((uint32_t)ip[2] << 8) | ip[3];
}

/*
 * Read the IP header length and the packet's length from the first 20
 * bytes at @ip (IPv4, or IPv6 whose next header is UDP), given @avail
 * bytes of packet. Returns 0 or -EINVAL when they cannot describe a RoCEv2
 * packet that fits.
 */
static int
icrc_lengths(const uint8_t *ip, uint32_t avail, uint32_t *ihl, uint32_t *tot)
{
	if (avail < ICRC_IP_MIN)
		return -EINVAL;
	if ((ip[0] >> 4) == 6) {
		if (ip[6] != 17)   /* UDP right after the fixed header */
			return -EINVAL;
		*ihl = ICRC_IP6_LEN;
	} else if ((ip[0] >> 4) == 4) {
		*ihl = (uint32_t)(ip[0] & 0x0f) * 4u;
	} else {
		return -EINVAL;
	}
	*tot = icrc_total(ip);
	if (*ihl < ICRC_IP_MIN)
		return -EINVAL;
	if (*tot < *ihl + ICRC_UDP_LEN + RNIC_ROCE_BTH_LEN + RNIC_ROCE_ICRC_LEN ||
	    *tot > avail)
		return -EINVAL;
	return 0;
}

/*
 * Mask the variant fields of the pseudo header at @ps (LRH stand-in
 * already there, then IP, UDP and BTH as sent; @ihl bytes of IP header).
 */
static void
icrc_mask(uint8_t *ps, uint32_t ihl)
{
	uint8_t *ip = ps + ICRC_LRH_LEN;
	uint8_t *udp = ip + ihl;
	uint8_t *bth = udp + ICRC_UDP_LEN;

	if ((ip[0] >> 4) == 6) {
		/* annex A17.4: traffic class, flow label, hop limit */
		ip[0] |= 0x0f;
		ip[1] = ip[2] = ip[3] = 0xff;
		ip[ICRC_IP6_HLIM] = 0xff;
	} else {
		ip[ICRC_IP_TOS] = 0xff;
		ip[ICRC_IP_TTL] = 0xff;
		ip[ICRC_IP_CSUM] = 0xff;
		ip[ICRC_IP_CSUM + 1] = 0xff;
	}
	udp[ICRC_UDP_CSUM] = 0xff;
	udp[ICRC_UDP_CSUM + 1] = 0xff;
	bth[ICRC_BTH_FECN] = 0xff;
}

#if defined(__x86_64__)
/*
 * The reflected CRC-32 by carry-less multiplication. A 16-byte block read
 * little-endian is the bit reversal of a polynomial of degree 127 (bit 0 of
 * byte 0 is the highest coefficient), and the carry-less product of two
 * 64-bit reversed values is the reversed product shifted by one bit, hence
 * the exponents one below the textbook ones. With P the CRC polynomial and
 * rev64(c) the 64-bit bit reversal of c (degree < 32, so the upper half):
 *   fold 128 bits: high half times x^191 mod P, low half times x^127 mod P;
 *   fold 256 bits (two blocks at once): x^319 and x^255 mod P;
 *   to 96 bits:    x^95 mod P;  to 64 bits: x^63 mod P;
 *   Barrett:       mu = x^64 div P and P itself, reversed to 33 bits.
 * Computed (and the algorithm checked against zlib's crc32) with a
 * polynomial model in Python; tests/unit/roce/test_roce_icrc.c compares
 * every length against a bitwise CRC.
 */
#define CLMUL_K319  (0x9570d495ull << 32)
#define CLMUL_K255  (0x01b5fd1dull << 32)
#define CLMUL_K191  (0x65673b46ull << 32)
#define CLMUL_K127  (0x9ba54c6full << 32)
#define CLMUL_K95   (0xccaa009eull << 32)
#define CLMUL_K63   (0xb8bc6765ull << 32)
#define CLMUL_MU    0xfb808b2080000000ull
#define CLMUL_POLY  0xedb8832080000000ull

/*
 * What is OR'ed into the first four 16-byte blocks of the CRC input (the
 * LRH stand-in and the packet from its IP header on, the LRH's first 4
 * bytes already zero: all ones meeting the inverted initial value): the
 * stand-in's other 4 bytes, and all ones over the variant fields (icrc.h).
 * IPv4 without options: TOS 9, TTL 16, checksum 18-19, UDP checksum 34-35,
 * BTH byte 4 at 40; IPv6: traffic class and flow label 8 (low nibble) to
 * 11, hop limit 15, UDP checksum 54-55, BTH byte 4 at 60.
 */
static const uint8_t icrc_or4[4][16] __attribute__((aligned(16))) = {
	{ [4] = 0xff, [5] = 0xff, [6] = 0xff, [7] = 0xff, [9] = 0xff },
	{ [0] = 0xff, [2] = 0xff, [3] = 0xff },
	{ [2] = 0xff, [3] = 0xff, [8] = 0xff },
	{ 0 },
};
static const uint8_t icrc_or6[4][16] __attribute__((aligned(16))) = {
	{ [4] = 0xff, [5] = 0xff, [6] = 0xff, [7] = 0xff, [8] = 0x0f, [9] = 0xff,
	  [10] = 0xff, [11] = 0xff, [15] = 0xff },
	{ 0 },
	{ 0 },
	{ [6] = 0xff, [7] = 0xff, [12] = 0xff },
};

__attribute__((target("pclmul,sse4.1")))
static inline __m128i
fold128(__m128i v, __m128i k)
{
	return _mm_xor_si128(_mm_clmulepi64_si128(v, k, 0x00), _mm_clmulepi64_si128(v, k, 0x11));
}

/* Block @k of the CRC input of the packet at @ip: the first is the LRH
 * stand-in and the IP header's first 8 bytes, block k the packet's bytes
 * from 16 k - 8; the first four with @or applied. */
__attribute__((target("pclmul,sse4.1")))
static inline __m128i
icrc_block(const uint8_t *ip, uint32_t k, const uint8_t (*or)[16])
{
	__m128i b = k == 0 ? _mm_slli_si128(_mm_loadl_epi64((const __m128i *)ip), 8) :
		    _mm_loadu_si128((const __m128i *)(ip + 16 * k - 8));
	return k < 4 ? _mm_or_si128(b, _mm_load_si128((const __m128i *)or[k])) : b;
}

/*
 * ICRC of the contiguous packet at @ip (IPv4 without options or IPv6,
 * @tot bytes with the ICRC) read in place: the CRC input, 8 + @tot - 4
 * bytes, is folded two blocks at a time, its last 4, 8 or 12 bytes joined
 * to the last whole block, and reduced to 32 bits.
 */
__attribute__((target("pclmul,sse4.1")))
static uint32_t
icrc_clmul(const uint8_t *ip, uint32_t tot, const uint8_t (*or)[16])
{
	const __m128i k1 = _mm_set_epi64x((long long)(CLMUL_K127), (long long)(CLMUL_K191));
	const __m128i k2 = _mm_set_epi64x((long long)(CLMUL_K255), (long long)(CLMUL_K319));
	const __m128i k_red = _mm_set_epi64x((long long)(CLMUL_K63), (long long)(CLMUL_K95));
	const __m128i k_bar = _mm_set_epi64x((long long)CLMUL_POLY, (long long)CLMUL_MU);
	uint32_t n = ICRC_LRH_LEN + tot - RNIC_ROCE_ICRC_LEN, nb = n / 16, k;
	/* two running blocks (even and odd), each folded over two blocks per
	 * step: half the chain of dependent multiplies */
	__m128i a = icrc_block(ip, 0, or), b = icrc_block(ip, 1, or);

	for (k = 2; k + 1 < nb; k += 2) {
		a = _mm_xor_si128(fold128(a, k2), icrc_block(ip, k, or));
		b = _mm_xor_si128(fold128(b, k2), icrc_block(ip, k + 1, or));
	}
	__m128i v = _mm_xor_si128(fold128(a, k1), b);
	if (k < nb)   /* an odd count: the last whole block */
		v = _mm_xor_si128(fold128(v, k1), icrc_block(ip, k, or));
	/* the tail: v's first t bytes become a block of their own (behind
	 * zeros), its other 16 - t and the tail the next one */
	uint32_t t = n & 15u;
	if (t != 0) {
		__m128i last = _mm_loadu_si128((const __m128i *)(ip + tot - RNIC_ROCE_ICRC_LEN - 16));
		__m128i head, rest;
		if (t == 4) {
			head = _mm_slli_si128(v, 12);
			rest = _mm_or_si128(_mm_srli_si128(v, 4), _mm_slli_si128(_mm_srli_si128(last, 12), 12));
		} else if (t == 8) {
			head = _mm_slli_si128(v, 8);
			rest = _mm_or_si128(_mm_srli_si128(v, 8), _mm_slli_si128(_mm_srli_si128(last, 8), 8));
		} else {
			head = _mm_slli_si128(v, 4);
			rest = _mm_or_si128(_mm_srli_si128(v, 12), _mm_slli_si128(_mm_srli_si128(last, 4), 4));
		}
		v = _mm_xor_si128(fold128(head, k1), rest);
	}
	/* 128 -> 96 bits: the low half's product, and the rest moved down by
	 * 32 bits (times x^32) with the 32 bits that fall off cleared */
	__m128i r = _mm_xor_si128(_mm_clmulepi64_si128(v, k_red, 0x00),
				  _mm_blend_epi16(_mm_srli_si128(v, 4), _mm_setzero_si128(), 0x03));
	/* 96 -> 64 bits, in the upper half */
	r = _mm_xor_si128(_mm_clmulepi64_si128(r, k_red, 0x10), r);
	uint64_t u = (uint64_t)_mm_extract_epi64(r, 1);
	/* Barrett: quotient from the upper 32 coefficients times mu, then the
	 * remainder is the lower 32 plus the low part of quotient times P */
	__m128i q = _mm_clmulepi64_si128(_mm_cvtsi64_si128((long long)(u << 32)), k_bar, 0x00);
	uint64_t qr = ((uint64_t)_mm_cvtsi128_si64(q) >> 31) |
		      ((uint64_t)_mm_extract_epi64(q, 1) << 33);
	__m128i qp = _mm_clmulepi64_si128(_mm_cvtsi64_si128((long long)qr), k_bar, 0x10);
	uint64_t low = ((uint64_t)_mm_cvtsi128_si64(qp) >> 63) |
		       ((uint64_t)_mm_extract_epi64(qp, 1) << 1);
	return ~(uint32_t)((u ^ low) >> 32);
}

static bool
icrc_have_clmul(void)
{
	static int have = -1;

	if (have < 0)
		have = __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse4.1");
	return have;
}

/*
 * ICRC of a whole contiguous packet at @ip with a plain header (IPv4
 * without options, or IPv6), a length that is a multiple of 4, and at most
 * ICRC_SHORT_MAX bytes of CRC input.
 * @return false otherwise, or when the CPU lacks the instruction: the
 * caller takes the ISA-L path.
 */
static bool
icrc_short(const uint8_t *ip, uint32_t ihl, uint32_t tot, uint32_t *icrc)
{
	/* a length that is not a whole number of words (never sent: the pad
	 * rounds the payload, but a received packet may claim one) has a
	 * tail the fold does not join */
	if (ICRC_LRH_LEN + tot - RNIC_ROCE_ICRC_LEN > ICRC_SHORT_MAX || (tot & 3u) != 0 ||
	    !icrc_have_clmul())
		return false;
	/* by version first: an IPv4 header with 20 bytes of options is as
	 * long as an IPv6 one */
	if ((ip[0] >> 4) == 4 && ihl == ICRC_IP_MIN)
		*icrc = icrc_clmul(ip, tot, icrc_or4);
	else if ((ip[0] >> 4) == 6)
		*icrc = icrc_clmul(ip, tot, icrc_or6);
	else
		return false;
	return true;
}
#else
static bool
icrc_short(const uint8_t *ip, uint32_t ihl, uint32_t tot, uint32_t *icrc)
{
	(void)ip;
	(void)ihl;
	(void)tot;
	(void)icrc;
	return false;
}
#endif

/*
 * CRC of the masked pseudo header. @hdr holds the packet's first
 * @ihl + UDP + BTH bytes; the variant fields are overwritten in a copy.
 */
static uint32_t
icrc_pseudo(const uint8_t *hdr, uint32_t ihl)
{
	uint8_t ps[ICRC_PSEUDO_MAX];
	uint32_t n = ihl + ICRC_UDP_LEN + RNIC_ROCE_BTH_LEN;

	memset(ps, 0xff, ICRC_LRH_LEN);
	memcpy(ps + ICRC_LRH_LEN, hdr, n);
	icrc_mask(ps, ihl);
	/* crc32_gzip_refl inverts on entry and exit, so 0 starts a fresh CRC
	 * and a finished CRC can be passed back in to continue it. */
	return crc32_gzip_refl(0, ps, ICRC_LRH_LEN + n);
}

int
rnic_roce_icrc_compute(const void *ip, uint32_t len, uint32_t *icrc)
{
	const uint8_t *p = ip;
	uint32_t ihl, tot, hdr;
	int rc;

	rc = icrc_lengths(p, len, &ihl, &tot);
	if (rc != 0)
		return rc;
	if (icrc_short(p, ihl, tot, icrc))
		return 0;
	hdr = ihl + ICRC_UDP_LEN + RNIC_ROCE_BTH_LEN;
	*icrc = crc32_gzip_refl(icrc_pseudo(p, ihl), p + hdr,
				tot - hdr - RNIC_ROCE_ICRC_LEN);
	return 0;
}

int
rnic_roce_icrc_generate(void *ip, uint32_t len)
{
	uint8_t *p = ip;
	uint32_t icrc, tot;
	int rc;

	rc = rnic_roce_icrc_compute(p, len, &icrc);
	if (rc != 0)
		return rc;
	tot = icrc_total(p);
	rnic_roce_icrc_put(p + tot - RNIC_ROCE_ICRC_LEN, icrc);
	return 0;
}

int
rnic_roce_icrc_verify(const void *ip, uint32_t len)
{
	const uint8_t *p = ip;
	uint32_t icrc, tot;
	int rc;

	rc = rnic_roce_icrc_compute(p, len, &icrc);
	if (rc != 0)
		return rc;
	tot = icrc_total(p);
	return rnic_roce_icrc_get(p + tot - RNIC_ROCE_ICRC_LEN) == icrc ?
	       0 : -EBADMSG;
}

static uint32_t
icrc_step(uint32_t crc, const uint8_t *p, uint32_t len)
{
	return crc32_gzip_refl(crc, p, len);
}

/* Continue @crc over @len bytes of @m starting @off bytes into the chain. */
static int
icrc_mbuf_run(const struct rte_mbuf *m, uint32_t off, uint32_t len,
	      uint32_t *crc)
{
	return rnic_mbuf_crc(m, off, len, crc, icrc_step);
}

/*
 * Headers of the packet at @ip_off in @m, gathered into @buf if they span
 * segments. Fills the lengths; returns a pointer to the headers or NULL.
 */
static const uint8_t *
icrc_mbuf_headers(const struct rte_mbuf *m, uint32_t ip_off,
		  uint8_t buf[ICRC_PSEUDO_MAX], uint32_t *ihl, uint32_t *tot)
{
	const uint8_t *p;
	uint32_t avail;

	/* too short for an IPv4 header: never ask rte_pktmbuf_read() for 0
	 * bytes at the end of a chain (it walks past the last segment) */
	if (m == NULL || rte_pktmbuf_pkt_len(m) < ip_off + ICRC_IP_MIN)
		return NULL;
	avail = rte_pktmbuf_pkt_len(m) - ip_off;
	p = rte_pktmbuf_read(m, ip_off, RTE_MIN(avail, ICRC_IP_MIN), buf);
	if (p == NULL || icrc_lengths(p, avail, ihl, tot) != 0)
		return NULL;
	return rte_pktmbuf_read(m, ip_off,
				*ihl + ICRC_UDP_LEN + RNIC_ROCE_BTH_LEN, buf);
}

int
rnic_roce_icrc_compute_mbuf(const struct rte_mbuf *m, uint32_t ip_off,
			    uint32_t *icrc)
{
	uint8_t buf[ICRC_PSEUDO_MAX];
	const uint8_t *h;
	uint32_t ihl, tot, hdr, crc;
	int rc;

	h = icrc_mbuf_headers(m, ip_off, buf, &ihl, &tot);
	if (h == NULL)
		return -EINVAL;
	/* the whole packet in the first segment: one contiguous run */
	if (m->data_len >= ip_off + tot &&
	    icrc_short(rte_pktmbuf_mtod_offset(m, const uint8_t *, ip_off), ihl, tot, icrc))
		return 0;
	hdr = ihl + ICRC_UDP_LEN + RNIC_ROCE_BTH_LEN;
	crc = icrc_pseudo(h, ihl);
	rc = icrc_mbuf_run(m, ip_off + hdr, tot - hdr - RNIC_ROCE_ICRC_LEN, &crc);
	if (rc != 0)
		return rc;
	*icrc = crc;
	return 0;
}

/* Offset of the ICRC in @m, for a packet whose headers were checked. */
static uint32_t
icrc_mbuf_tail(const struct rte_mbuf *m, uint32_t ip_off)
{
	uint8_t b[8];
	const uint8_t *p = rte_pktmbuf_read(m, ip_off, 8, b);

	return ip_off + icrc_total(p) - RNIC_ROCE_ICRC_LEN;
}

int
rnic_roce_icrc_generate_mbuf(struct rte_mbuf *m, uint32_t ip_off)
{
	uint8_t out[RNIC_ROCE_ICRC_LEN];
	uint32_t icrc, off, i;
	int rc;

	rc = rnic_roce_icrc_compute_mbuf(m, ip_off, &icrc);
	if (rc != 0)
		return rc;
	rnic_roce_icrc_put(out, icrc);
	off = icrc_mbuf_tail(m, ip_off);
	/* The 4 bytes may straddle segments: store them one by one. */
	for (i = 0; i < RNIC_ROCE_ICRC_LEN; i++) {
		struct rte_mbuf *s = m;
		uint32_t o = off + i;

		while (s != NULL && o >= s->data_len) {
			o -= s->data_len;
			s = s->next;
		}
		if (s == NULL)
			return -EINVAL; /* pkt_len disagrees with the chain */
		*rte_pktmbuf_mtod_offset(s, uint8_t *, o) = out[i];
	}
	return 0;
}

int
rnic_roce_icrc_verify_mbuf(const struct rte_mbuf *m, uint32_t ip_off)
{
	uint8_t b[RNIC_ROCE_ICRC_LEN];
	const uint8_t *p;
	uint32_t icrc;
	int rc;

	rc = rnic_roce_icrc_compute_mbuf(m, ip_off, &icrc);
	if (rc != 0)
		return rc;
	p = rte_pktmbuf_read(m, icrc_mbuf_tail(m, ip_off), RNIC_ROCE_ICRC_LEN, b);
	if (p == NULL)
		return -EINVAL;
	return rnic_roce_icrc_get(p) == icrc ? 0 : -EBADMSG;
}
