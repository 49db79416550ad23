/* SPDX-License-Identifier: BSD-3-Clause */
/* CRC32c: ISA-L, and the CPU's instruction for small pieces; see crc32c.h
 * for the value and byte order. */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <string.h>

#include <isa-l/crc.h>
#include <rte_mbuf.h>

#include "common/mbuf_crc.h"
#include "iwarp/crc32c.h"

/*
 * Below this many bytes the CPU's CRC32 instruction (SSE4.2, which the
 * build's baseline has) beats ISA-L: crc32_iscsi costs 20 to 50 cycles for
 * 4 to 128 bytes (its setup dominates), the instruction 6 to 37; from 256
 * bytes on ISA-L's folding wins by far (123 against 1196 cycles at 4 KiB).
 * Small pieces are the common case: every FPDU's header, a 64-byte Write's
 * payload, the pad and the MPA length.
 */
#define CRC32C_INSN_MAX 192

#if defined(__SSE4_2__)
#include <nmmintrin.h>

/* Raw (not inverted) CRC32c of @p len bytes at @p src, 8 at a time; with
 * @p copy they are also copied to @p dst. Inlined with a constant @p copy,
 * so each caller gets a loop without the test. Without @p copy, @p dst is
 * NULL and never moved: even NULL + 0 is undefined (UBSan reports it). */
static inline __attribute__((always_inline)) uint32_t
crc32c_insn_run(uint32_t c, uint8_t *dst, const uint8_t *src, size_t len, bool copy)
{
	uint64_t c64 = c;
	while (len >= 8) {
		uint64_t v;
		memcpy(&v, src, 8);
		if (copy)
			memcpy(dst, &v, 8);
		c64 = _mm_crc32_u64(c64, v);
		src += 8;
		if (copy)
			dst += 8;
		len -= 8;
	}
	c = (uint32_t)c64;
	if (len & 4) {
		uint32_t v;
		memcpy(&v, src, 4);
		if (copy)
			memcpy(dst, &v, 4);
		c = _mm_crc32_u32(c, v);
		src += 4;
		if (copy)
			dst += 4;
	}
	for (size_t i = 0; i < (len & 3); i++) {   /* at most three bytes */
		if (copy)
			dst[i] = src[i];
		c = _mm_crc32_u8(c, src[i]);
	}
	return c;
}

static uint32_t crc32c_insn(uint32_t c, const uint8_t *p, size_t len)
{
	return crc32c_insn_run(c, NULL, p, len, false);
}

static uint32_t crc32c_insn_copy(uint32_t c, uint8_t *dst, const uint8_t *src, size_t len)
{
	return crc32c_insn_run(c, dst, src, len, true);
}
#endif

uint32_t
rnic_crc32c(uint32_t crc, const void *buf, size_t len)
{
	/* crc32_iscsi neither inverts in nor out: do both here so the
	 * running value is always a finished CRC. It takes an int length. */
	uint32_t c = ~crc;
	const uint8_t *p = buf;

#if defined(__SSE4_2__)
	if (len < CRC32C_INSN_MAX)
		return ~crc32c_insn(c, p, len);
#endif
	while (len > 0) {
		int n = len > (size_t)INT_MAX ? INT_MAX : (int)len;

		c = crc32_iscsi((unsigned char *)(uintptr_t)p, n, c);
		p += n;
		len -= (size_t)n;
	}
	return ~c;
}

uint32_t
rnic_crc32c_copy(uint32_t crc, void *dst, const void *src, size_t len)
{
#if defined(__SSE4_2__)
	if (len < CRC32C_INSN_MAX)
		return ~crc32c_insn_copy(~crc, dst, src, len);
#endif
	memcpy(dst, src, len);
	return rnic_crc32c(crc, dst, len);
}

static uint32_t
crc32c_step(uint32_t crc, const uint8_t *p, uint32_t len)
{
	return rnic_crc32c(crc, p, len);
}

int
rnic_crc32c_mbuf(uint32_t crc, const struct rte_mbuf *m, uint32_t off,
		 uint32_t len, uint32_t *out)
{
	int rc = rnic_mbuf_crc(m, off, len, &crc, crc32c_step);
	if (rc == 0)
		*out = crc;
	return rc;
}

void
rnic_crc32c_put(uint8_t out[4], uint32_t crc)
{
	out[0] = (uint8_t)crc;
	out[1] = (uint8_t)(crc >> 8);
	out[2] = (uint8_t)(crc >> 16);
	out[3] = (uint8_t)(crc >> 24);
}

uint32_t
rnic_crc32c_get(const uint8_t in[4])
{
	return (uint32_t)in[0] | ((uint32_t)in[1] << 8) |
	       ((uint32_t)in[2] << 16) | ((uint32_t)in[3] << 24);
}
