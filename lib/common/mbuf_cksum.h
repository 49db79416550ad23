/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The Internet checksum's sum (RFC 1071) over a byte range of an mbuf
 * chain. DPDK 22.11's rte_raw_cksum_mbuf() (and the UDP/TCP helpers built
 * on it) truncates a segment's partial sum to 16 bits before byte-swapping
 * the sum of a segment that starts at an odd offset, losing its carries: a
 * chain with an odd-length segment got a wrong checksum. Here each
 * segment's sum is folded first. Shared by lib/net (rnic_net_cksum_mbuf)
 * and lib/port (the ring link's TCP checksums).
 */
#ifndef RNIC_COMMON_MBUF_CKSUM_H
#define RNIC_COMMON_MBUF_CKSUM_H

#include <stdint.h>

#include <rte_byteorder.h>
#include <rte_ip.h>
#include <rte_mbuf.h>

/**
 * The folded, not inverted, 16-bit sum of @p len bytes of @p m from
 * @p off bytes into the chain, plus @p sum (a partial sum, e.g. a pseudo
 * header's). The range must lie within the chain (the caller checks).
 */
static inline uint16_t rnic_mbuf_cksum(const struct rte_mbuf *m, uint32_t off, uint32_t len,
				       uint32_t sum)
{
	uint32_t done = 0;
	while (m != NULL && off >= rte_pktmbuf_data_len(m)) {
		off -= rte_pktmbuf_data_len(m);
		m = m->next;
	}
	for (; m != NULL && done < len; m = m->next, off = 0) {
		uint32_t n = RTE_MIN((uint32_t)rte_pktmbuf_data_len(m) - off, len - done);
		uint16_t part = rte_raw_cksum(rte_pktmbuf_mtod_offset(m, const void *, off), n);
		/* a part starting at an odd position has its bytes swapped */
		sum += (done & 1) ? rte_bswap16(part) : part;
		done += n;
	}
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)sum;
}

#endif
