/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * TCP sequence-number arithmetic modulo 2^32 (RFC 9293 section 3.4):
 * comparisons are made on the signed 32-bit difference, so they stay right
 * across wraparound as long as the numbers are within 2^31 of each other.
 */
#ifndef RNIC_TCP_SEQ_H
#define RNIC_TCP_SEQ_H

#include <stdbool.h>
#include <stdint.h>

static inline bool seq_lt(uint32_t a, uint32_t b) { return (int32_t)(a - b) < 0; }
static inline bool seq_le(uint32_t a, uint32_t b) { return (int32_t)(a - b) <= 0; }
static inline bool seq_gt(uint32_t a, uint32_t b) { return (int32_t)(a - b) > 0; }
static inline bool seq_ge(uint32_t a, uint32_t b) { return (int32_t)(a - b) >= 0; }

/** lo <= x < hi, modulo 2^32. */
static inline bool seq_in(uint32_t x, uint32_t lo, uint32_t hi)
{
	return x - lo < hi - lo;
}

static inline uint32_t seq_max(uint32_t a, uint32_t b) { return seq_gt(a, b) ? a : b; }
static inline uint32_t seq_min(uint32_t a, uint32_t b) { return seq_lt(a, b) ? a : b; }

#endif
