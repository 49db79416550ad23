/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * 24-bit packet sequence number arithmetic (IBTA 9.7.1).
 *
 * PSNs wrap modulo 2^24. Two PSNs are ordered by their signed 24-bit
 * distance, which is meaningful while they are less than 2^23 apart: the
 * IBA keeps the outstanding window far below that (at most 2^23 - 1 PSNs,
 * C9-85), so "a is before b" is diff(a, b) < 0. A distance of exactly 2^23
 * is ambiguous and reads as negative (a is before b); callers never
 * produce it from a valid window.
 *
 * Every function takes PSNs that may carry junk above bit 23 (for example
 * a raw 32-bit value) and ignores it, and returns a clean 24-bit PSN.
 */
#ifndef RNIC_ROCE_PSN_H
#define RNIC_ROCE_PSN_H

#include <stdbool.h>
#include <stdint.h>

#define RNIC_PSN_BITS   24
#define RNIC_PSN_MASK   0x00ffffffu
#define RNIC_PSN_HALF   0x00800000u  /* 2^23: the ordering horizon */

/** @psn + @n modulo 2^24; @n may be any unsigned count. */
static inline uint32_t
rnic_psn_add(uint32_t psn, uint32_t n)
{
	return (psn + n) & RNIC_PSN_MASK;
}

/** @psn - @n modulo 2^24. */
static inline uint32_t
rnic_psn_sub(uint32_t psn, uint32_t n)
{
	return (psn - n) & RNIC_PSN_MASK;
}

/** Next PSN. */
static inline uint32_t
rnic_psn_next(uint32_t psn)
{
	return rnic_psn_add(psn, 1);
}

/**
 * Signed distance @a - @b as a 24-bit two's complement value, in
 * [-2^23, 2^23 - 1]. Positive when @a is after @b.
 */
static inline int32_t
rnic_psn_diff(uint32_t a, uint32_t b)
{
	uint32_t d = (a - b) & RNIC_PSN_MASK;

	/* Sign-extend bit 23 without relying on arithmetic right shifts. */
	return d & RNIC_PSN_HALF ? (int32_t)d - (int32_t)(1u << RNIC_PSN_BITS)
				 : (int32_t)d;
}

/** @a before @b. */
static inline bool
rnic_psn_lt(uint32_t a, uint32_t b)
{
	return rnic_psn_diff(a, b) < 0;
}

/** @a before or equal to @b. */
static inline bool
rnic_psn_le(uint32_t a, uint32_t b)
{
	return rnic_psn_diff(a, b) <= 0;
}

/** @a after @b. */
static inline bool
rnic_psn_gt(uint32_t a, uint32_t b)
{
	return rnic_psn_diff(a, b) > 0;
}

/** @a after or equal to @b. */
static inline bool
rnic_psn_ge(uint32_t a, uint32_t b)
{
	return rnic_psn_diff(a, b) >= 0;
}

/**
 * True when @psn lies in the window of @n PSNs starting at @start, that is
 * one of start, start + 1, ..., start + n - 1 (mod 2^24). An empty window
 * (@n == 0) holds nothing; @n above 2^24 is treated as the whole space.
 */
static inline bool
rnic_psn_in_window(uint32_t psn, uint32_t start, uint32_t n)
{
	return ((psn - start) & RNIC_PSN_MASK) < n;
}

#endif
