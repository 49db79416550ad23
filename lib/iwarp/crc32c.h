/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * CRC32c (Castagnoli) for MPA FPDUs, computed by ISA-L's crc32_iscsi, and
 * below 192 bytes by the CPU's CRC32 instruction (SSE4.2), which is faster
 * there than ISA-L's setup.
 *
 * Value convention: like zlib's crc32(), the value passed in and returned
 * is the finished CRC (initial value and final inversion applied), so
 * rnic_crc32c(rnic_crc32c(0, a, n), b, m) == rnic_crc32c(0, ab, n + m).
 * Start with 0.
 *
 * Wire byte order: MPA inherits the iSCSI CRC32c (RFC 5044 section 6.5
 * refers to RFC 3720 B.4), whose examples list the CRC least significant
 * byte first (32 zero bytes -> aa 36 91 8a, the value 0x8a9136aa). Linux siw
 * writes the crypto API's little-endian digest, and Wireshark's MPA
 * dissector compares against the same bytes, so rnic puts the CRC on the
 * wire least significant byte first (rte_cpu_to_le_32) and reads it back
 * the same way.
 */
#ifndef RNIC_IWARP_CRC32C_H
#define RNIC_IWARP_CRC32C_H

#include <stddef.h>
#include <stdint.h>

struct rte_mbuf;

/** CRC32c of @p len bytes at @p buf, continuing from @p crc (0 to start). */
uint32_t rnic_crc32c(uint32_t crc, const void *buf, size_t len);

/** Copy @p len bytes from @p src to @p dst (not overlapping) and return
 * rnic_crc32c(@p crc, dst, len): in one pass for small pieces. */
uint32_t rnic_crc32c_copy(uint32_t crc, void *dst, const void *src, size_t len);

/**
 * CRC32c over @p len bytes of an mbuf chain starting @p off bytes into the
 * packet data. @return 0 and the CRC in *@p out, or -EINVAL when the chain
 * holds fewer than @p off + @p len bytes.
 */
int rnic_crc32c_mbuf(uint32_t crc, const struct rte_mbuf *m, uint32_t off,
		     uint32_t len, uint32_t *out);

/** Store / load a CRC in MPA wire order (least significant byte first). */
void rnic_crc32c_put(uint8_t out[4], uint32_t crc);
uint32_t rnic_crc32c_get(const uint8_t in[4]);

#endif
