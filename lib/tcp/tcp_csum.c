/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The TCP checksum (RFC 9293 3.1, RFC 1071 arithmetic) over mbuf chains,
 * fast: every payload byte is summed once on send and once on receive
 * (net_ring has no offload), and on the receiving side the payload comes
 * cold from the core that wrote it. So:
 *  - x86-64: 16-bit words summed by PMADDWD (pairs into 32-bit lanes, after
 *    an XOR with 0x8000 that makes them signed; the bias is added back
 *    once), 64 bytes per step in two accumulators, AVX2 when the CPU has
 *    it (checked once at run time: the build's baseline is SSE4.2), SSE2
 *    otherwise; elsewhere 32-bit words into a 64-bit accumulator;
 *  - the piece's cache lines are prefetched ahead of the sum, so the
 *    misses overlap instead of arriving one by one.
 * Every variant is a native-order sum of 16-bit words, folded once at the
 * end; the unit tests compare each with a byte-wise reference on random
 * chains with odd-length pieces at odd offsets.
 */
#include <errno.h>
#include <netinet/in.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_prefetch.h>

#include "tcp/tcp_internal.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#define PREFETCH_AHEAD 512   /* bytes: eight lines in flight before the sum */

/* Portable tail and fallback: @p n bytes as native-order 16-bit words into
 * a 64-bit accumulator; a trailing odd byte counts as the first byte of a
 * word. */
static uint64_t sum_scalar(const uint8_t *p, size_t n, uint64_t acc)
{
	while (n >= 32) {
		uint32_t w[8];
		memcpy(w, p, sizeof(w));
		acc += (uint64_t)w[0] + w[1] + w[2] + w[3];
		acc += (uint64_t)w[4] + w[5] + w[6] + w[7];
		p += 32;
		n -= 32;
	}
	while (n >= 4) {
		uint32_t w;
		memcpy(&w, p, 4);
		acc += w;
		p += 4;
		n -= 4;
	}
	if (n >= 2) {
		uint16_t h;
		memcpy(&h, p, 2);
		acc += h;
		p += 2;
		n -= 2;
	}
	if (n) {
		uint16_t h = 0;
		memcpy(&h, p, 1);   /* the byte's place in a word, in memory order */
		acc += h;
	}
	return acc;
}

/*
 * The vector loops handle whole 64-byte blocks, at most VEC_BLOCKS_MAX per
 * call of the lane reduction: a 32-bit lane gains one PMADDWD pair sum,
 * within [-65536, 65534], per 16 bytes of its accumulator, so 2^14 blocks
 * keep it far from overflow. The bias: each 16-bit word w entered as
 * w - 32768, so a block of 32 words lacks 32 * 32768.
 */
#define VEC_BLOCKS_MAX 16384u
#define VEC_BLOCK_BIAS (32u * 32768u)

#if defined(__x86_64__)
__attribute__((target("avx2")))
static uint64_t sum_blocks_avx2(const uint8_t *p, size_t blocks)
{
	const __m256i flip = _mm256_set1_epi16((short)0x8000);
	const __m256i ones = _mm256_set1_epi16(1);
	__m256i a0 = _mm256_setzero_si256(), a1 = _mm256_setzero_si256();
	for (size_t i = 0; i < blocks; i++, p += 64) {
		rte_prefetch0(p + PREFETCH_AHEAD);
		__m256i v0 = _mm256_loadu_si256((const __m256i *)p);
		__m256i v1 = _mm256_loadu_si256((const __m256i *)(p + 32));
		a0 = _mm256_add_epi32(a0, _mm256_madd_epi16(_mm256_xor_si256(v0, flip), ones));
		a1 = _mm256_add_epi32(a1, _mm256_madd_epi16(_mm256_xor_si256(v1, flip), ones));
	}
	/* eight signed 32-bit lanes each, widened to 64 bits and added */
	__m256i s = _mm256_add_epi64(
		_mm256_add_epi64(_mm256_cvtepi32_epi64(_mm256_castsi256_si128(a0)),
				 _mm256_cvtepi32_epi64(_mm256_extracti128_si256(a0, 1))),
		_mm256_add_epi64(_mm256_cvtepi32_epi64(_mm256_castsi256_si128(a1)),
				 _mm256_cvtepi32_epi64(_mm256_extracti128_si256(a1, 1))));
	int64_t l[4];
	_mm256_storeu_si256((__m256i *)l, s);
	return (uint64_t)(l[0] + l[1] + l[2] + l[3]) + blocks * VEC_BLOCK_BIAS;
}

static uint64_t sum_blocks_sse2(const uint8_t *p, size_t blocks)
{
	const __m128i flip = _mm_set1_epi16((short)0x8000);
	const __m128i ones = _mm_set1_epi16(1);
	__m128i a0 = _mm_setzero_si128(), a1 = _mm_setzero_si128();
	for (size_t i = 0; i < blocks; i++, p += 64) {
		rte_prefetch0(p + PREFETCH_AHEAD);
		__m128i v0 = _mm_loadu_si128((const __m128i *)p);
		__m128i v1 = _mm_loadu_si128((const __m128i *)(p + 16));
		__m128i v2 = _mm_loadu_si128((const __m128i *)(p + 32));
		__m128i v3 = _mm_loadu_si128((const __m128i *)(p + 48));
		a0 = _mm_add_epi32(a0, _mm_madd_epi16(_mm_xor_si128(v0, flip), ones));
		a1 = _mm_add_epi32(a1, _mm_madd_epi16(_mm_xor_si128(v1, flip), ones));
		a0 = _mm_add_epi32(a0, _mm_madd_epi16(_mm_xor_si128(v2, flip), ones));
		a1 = _mm_add_epi32(a1, _mm_madd_epi16(_mm_xor_si128(v3, flip), ones));
	}
	int32_t l[8];
	_mm_storeu_si128((__m128i *)l, a0);
	_mm_storeu_si128((__m128i *)(l + 4), a1);
	int64_t t = 0;
	for (int i = 0; i < 8; i++)
		t += l[i];
	return (uint64_t)t + blocks * VEC_BLOCK_BIAS;
}

#endif

/* The variant in use: the best the CPU has, chosen at the first sum (the
 * unit tests pin each in turn with tcp_csum_set_impl()). */
static int csum_impl = -1;

static int csum_best(void)
{
#if defined(__x86_64__)
	return __builtin_cpu_supports("avx2") ? TCP_CSUM_AVX2 : TCP_CSUM_SSE2;
#else
	return TCP_CSUM_SCALAR;
#endif
}

int tcp_csum_set_impl(int impl)
{
	if (impl == TCP_CSUM_BEST)
		impl = csum_best();
	if (impl < TCP_CSUM_SCALAR || impl > TCP_CSUM_AVX2)
		return -EINVAL;
#if defined(__x86_64__)
	if (impl == TCP_CSUM_AVX2 && !__builtin_cpu_supports("avx2"))
		return -ENOTSUP;
#else
	if (impl != TCP_CSUM_SCALAR)
		return -ENOTSUP;
#endif
	csum_impl = impl;
	return 0;
}

/* Sum of @p n bytes as native-order 16-bit words, added to @p acc. */
static uint64_t sum_bytes(const uint8_t *p, size_t n, uint64_t acc)
{
	/* start the misses of the first lines at once */
	for (size_t o = 0; o < n && o < PREFETCH_AHEAD; o += 64)
		rte_prefetch0(p + o);
	if (csum_impl < 0)
		csum_impl = csum_best();
#if defined(__x86_64__)
	while (n >= 64 && csum_impl != TCP_CSUM_SCALAR) {
		size_t blocks = n / 64 < VEC_BLOCKS_MAX ? n / 64 : VEC_BLOCKS_MAX;
		acc += csum_impl == TCP_CSUM_AVX2 ? sum_blocks_avx2(p, blocks) :
						    sum_blocks_sse2(p, blocks);
		p += blocks * 64;
		n -= blocks * 64;
	}
#endif
	return sum_scalar(p, n, acc);
}

/* Fold a 64-bit sum of 16-bit words to 16 bits (end-around carry). */
static uint16_t fold64(uint64_t s)
{
	s = (s & 0xffffffff) + (s >> 32);
	s = (s & 0xffffffff) + (s >> 32);
	s = (s & 0xffff) + (s >> 16);
	s = (s & 0xffff) + (s >> 16);
	return (uint16_t)s;
}

uint16_t tcp_l4_sum(const struct rte_mbuf *m, uint32_t off, uint32_t len,
		    uint32_t src_be, uint32_t dst_be)
{
	uint64_t total = 0;
	uint32_t done = 0;

	while (m != NULL && off >= m->data_len) {
		off -= m->data_len;
		m = m->next;
	}
	for (; m != NULL && done < len; m = m->next, off = 0) {
		uint32_t n = m->data_len - off;
		if (n > len - done)
			n = len - done;
		uint16_t part = fold64(sum_bytes(rte_pktmbuf_mtod_offset(m, const uint8_t *, off),
						 n, 0));
		/* a part that starts at an odd stream offset has its bytes in
		 * the other halves of the words */
		total += (done & 1) ? rte_bswap16(part) : part;
		done += n;
	}
	/* pseudo header: addresses, protocol, TCP length */
	total += (src_be >> 16) + (src_be & 0xffff) + (dst_be >> 16) + (dst_be & 0xffff);
	total += rte_cpu_to_be_16(IPPROTO_TCP) + rte_cpu_to_be_16((uint16_t)len);
	return fold64(total);
}

uint16_t tcp_l4_sum_key(const struct rte_mbuf *m, uint32_t off, uint32_t len,
			const struct tcp_key *k)
{
	if (tcp_key_v4(k))
		return tcp_l4_sum(m, off, len, tcp_key_l4(k), tcp_key_r4(k));
	/* IPv6: the addresses' words folded to 16 bits stand in for the two
	 * IPv4 addresses; the 32-bit upper-layer length of a segment below
	 * 64 KiB has the same sum as IPv4's 16-bit one */
	return tcp_l4_sum(m, off, len, rnic_ip6_addr_sum(k->laddr, k->raddr), 0);
}
