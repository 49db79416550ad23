/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * RoCEv2 Invariant CRC (IBTA annex A17.3.3).
 *
 * The ICRC is the Ethernet CRC-32 (reflected polynomial 0xEDB88320, initial
 * value and final xor all ones; ISA-L's crc32_gzip_refl, not crc32_ieee,
 * which is the non-reflected variant) over, in order:
 *   - 8 bytes of 0xff standing in for the InfiniBand LRH;
 *   - the IPv4 header with TOS (DSCP and ECN), TTL and the header checksum
 *     set to all ones, because routers may change them;
 *   - the UDP header with its checksum set to all ones;
 *   - the BTH with byte 4 (FECN, BECN, resv6) set to all ones, because
 *     switches mark FECN/BECN;
 *   - the extended headers, payload and pad as sent.
 * The 4 ICRC bytes follow the pad. The wire carries the CRC least
 * significant byte first, like the Ethernet FCS: a uint32_t ICRC value V is
 * sent as V & 0xff, V >> 8 & 0xff, ... (rxe stores the CRC as a
 * little-endian word; scapy and the vectors in tests/unit/roce agree).
 *
 * Over IPv6 (annex A17.4) the IPv6 header takes the IPv4 one's place, with
 * the traffic class, the flow label and the hop limit set to all ones (the
 * version nibble and everything else as sent); RoCEv2 packets carry no
 * extension headers, so UDP must follow the fixed header.
 *
 * Every function here starts at the first byte of the IP header (IPv4 or
 * IPv6, by its version) and takes the packet's length from it (the IPv4
 * total length, or 40 + the IPv6 payload length), so the ICRC is found
 * without help.
 */
#ifndef RNIC_ROCE_ICRC_H
#define RNIC_ROCE_ICRC_H

#include <stdint.h>

struct rte_mbuf;

/**
 * ICRC of a contiguous RoCEv2 packet.
 *
 * @param ip    first byte of the IPv4 header
 * @param len   bytes available at @ip (at least the IPv4 total length)
 * @param icrc  the CRC value (wire order: least significant byte first)
 * @return 0; -EINVAL when the IPv4 header is not version 4 with IHL >= 5,
 *         or its total length does not cover IPv4 + UDP + BTH + ICRC or
 *         exceeds @len.
 */
int rnic_roce_icrc_compute(const void *ip, uint32_t len, uint32_t *icrc);

/**
 * Compute the ICRC and store it in the packet's last 4 bytes (the IPv4
 * total length says where those are).
 * @return 0 or -EINVAL as for rnic_roce_icrc_compute().
 */
int rnic_roce_icrc_generate(void *ip, uint32_t len);

/**
 * Check a contiguous packet's ICRC.
 * @return 0 when it matches; -EBADMSG when it does not; -EINVAL for
 *         headers as in rnic_roce_icrc_compute().
 */
int rnic_roce_icrc_verify(const void *ip, uint32_t len);

/**
 * The same over an mbuf chain: the packet starts @ip_off bytes into @m and
 * may span any number of segments (headers included).
 */
int rnic_roce_icrc_compute_mbuf(const struct rte_mbuf *m, uint32_t ip_off,
				uint32_t *icrc);
int rnic_roce_icrc_generate_mbuf(struct rte_mbuf *m, uint32_t ip_off);
int rnic_roce_icrc_verify_mbuf(const struct rte_mbuf *m, uint32_t ip_off);

/** Store @icrc in wire order at @out. */
static inline void
rnic_roce_icrc_put(uint8_t out[4], uint32_t icrc)
{
	out[0] = (uint8_t)icrc;
	out[1] = (uint8_t)(icrc >> 8);
	out[2] = (uint8_t)(icrc >> 16);
	out[3] = (uint8_t)(icrc >> 24);
}

/** Read a wire-order ICRC. */
static inline uint32_t
rnic_roce_icrc_get(const uint8_t in[4])
{
	return (uint32_t)in[0] | ((uint32_t)in[1] << 8) |
	       ((uint32_t)in[2] << 16) | ((uint32_t)in[3] << 24);
}

#endif
