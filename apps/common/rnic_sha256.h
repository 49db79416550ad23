/* SPDX-License-Identifier: BSD-3-Clause */
/** @file SHA-256 (FIPS 180-4) for end-to-end data checks in rnic tools. */
#ifndef RNIC_SHA256_H
#define RNIC_SHA256_H

#include <stddef.h>
#include <stdint.h>

struct rnic_sha256 {
	uint32_t h[8];
	uint64_t len;
	uint8_t buf[64];
	unsigned n;
};

void rnic_sha256_init(struct rnic_sha256 *s);
void rnic_sha256_update(struct rnic_sha256 *s, const void *data, size_t len);
void rnic_sha256_final(struct rnic_sha256 *s, uint8_t out[32]);
/** Lower-case hex of @p digest into @p hex (65 bytes). */
void rnic_sha256_hex(const uint8_t digest[32], char hex[65]);

#endif
