/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Helpers shared by the libFuzzer harnesses: a byte reader over the input
 * (running out yields zeros, never a read past the end), a small PRNG seeded
 * from input bytes to pick chunk boundaries, and FUZZ_CHECK, which aborts
 * so that both libFuzzer and the replay driver report a finding.
 */
#ifndef RNIC_FUZZ_UTIL_H
#define RNIC_FUZZ_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A property the code under test must hold; abort() is a finding. */
#define FUZZ_CHECK(cond)                                                      \
	do {                                                                  \
		if (!(cond)) {                                                \
			fprintf(stderr, "%s:%d: property failed: %s\n",      \
				__FILE__, __LINE__, #cond);                   \
			abort();                                              \
		}                                                             \
	} while (0)

/* Cursor over the fuzz input. */
struct fuzz_in {
	const uint8_t *p;
	size_t len;
	size_t off;
};

static inline void
fuzz_in_init(struct fuzz_in *in, const uint8_t *p, size_t len)
{
	in->p = p;
	in->len = len;
	in->off = 0;
}

static inline size_t
fuzz_in_left(const struct fuzz_in *in)
{
	return in->len - in->off;
}

static inline uint8_t
fuzz_u8(struct fuzz_in *in)
{
	return in->off < in->len ? in->p[in->off++] : 0;
}

static inline uint16_t
fuzz_u16(struct fuzz_in *in)
{
	uint16_t hi = fuzz_u8(in);

	return (uint16_t)((hi << 8) | fuzz_u8(in));
}

static inline uint32_t
fuzz_u32(struct fuzz_in *in)
{
	uint32_t hi = fuzz_u16(in);

	return (hi << 16) | fuzz_u16(in);
}

/* Take up to @p want bytes; *@p got says how many there were. */
static inline const uint8_t *
fuzz_bytes(struct fuzz_in *in, size_t want, size_t *got)
{
	const uint8_t *p = in->p + in->off;

	if (want > fuzz_in_left(in))
		want = fuzz_in_left(in);
	in->off += want;
	*got = want;
	return p;
}

/* xorshift32: deterministic chunk sizes from a seed the input chose. */
struct fuzz_rng {
	uint32_t s;
};

static inline void
fuzz_rng_init(struct fuzz_rng *r, uint32_t seed)
{
	r->s = seed != 0 ? seed : 0x9e3779b9u;
}

static inline uint32_t
fuzz_rng_next(struct fuzz_rng *r)
{
	uint32_t x = r->s;

	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	r->s = x;
	return x;
}

/*
 * Length of the next chunk of a stream with @p left bytes to go: mostly
 * tiny (1-7 bytes, so every field gets split), sometimes up to 600 bytes
 * (across a marker interval), sometimes all that is left. 0 only when
 * @p left is 0.
 */
static inline size_t
fuzz_chunk(struct fuzz_rng *r, size_t left)
{
	uint32_t x = fuzz_rng_next(r);
	size_t n;

	if (left == 0)
		return 0;
	switch (x & 3) {
	case 0:
	case 1:
		n = 1 + ((x >> 2) & 7);
		break;
	case 2:
		n = 1 + ((x >> 2) % 600);
		break;
	default:
		n = left;
		break;
	}
	return n < left ? n : left;
}

/* Fold bytes into a running FNV-1a digest (chunking-invariant). */
static inline uint64_t
fuzz_digest(uint64_t h, const void *p, size_t len)
{
	const uint8_t *b = p;
	size_t i;

	for (i = 0; i < len; i++) {
		h ^= b[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

#define FUZZ_DIGEST_INIT 0xcbf29ce484222325ull

#endif
