/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Internet checksums (RFC 1071) over mbuf chains, with pseudo headers:
 * each segment's sum folded before it is swapped (common/mbuf_cksum.h
 * says why DPDK 22.11's rte_raw_cksum_mbuf() is not used).
 */
#include <errno.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_ip.h>

#include "common/mbuf_cksum.h"
#include "net/ipv6.h"
#include "net/net.h"

int rnic_net_cksum_mbuf(const struct rte_mbuf *m, uint32_t off, uint32_t len,
			uint16_t *sum_out)
{
	if ((uint64_t)off + len > rte_pktmbuf_pkt_len(m))
		return -EINVAL;
	*sum_out = rnic_mbuf_cksum(m, off, len, 0);
	return 0;
}

uint16_t rnic_net_l4_cksum(const struct rte_mbuf *m, uint32_t off,
			   uint32_t src_be, uint32_t dst_be, uint8_t proto,
			   uint16_t l4_len)
{
	uint16_t data = 0;
	if (rnic_net_cksum_mbuf(m, off, l4_len, &data) != 0)
		return 0;
	/* pseudo header: addresses, protocol and L4 length (RFC 768) */
	uint32_t sum = data;
	sum += (src_be >> 16) + (src_be & 0xffff) + (dst_be >> 16) + (dst_be & 0xffff);
	sum += rte_cpu_to_be_16(proto) + rte_cpu_to_be_16(l4_len);
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)sum;
}

uint16_t rnic_ip6_addr_sum(const uint8_t src[16], const uint8_t dst[16])
{
	uint32_t sum = 0;
	for (unsigned i = 0; i < 16; i += 2) {
		uint16_t a, b;
		memcpy(&a, src + i, 2);
		memcpy(&b, dst + i, 2);
		sum += (uint32_t)a + b;
	}
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)sum;
}

uint16_t rnic_net_l4_cksum6(const struct rte_mbuf *m, uint32_t off, const uint8_t src[16],
			    const uint8_t dst[16], uint8_t proto, uint32_t len)
{
	uint16_t data = 0;
	if (rnic_net_cksum_mbuf(m, off, len, &data) != 0)
		return 0;
	uint32_t sum = (uint32_t)data + rnic_ip6_addr_sum(src, dst);
	sum += rte_cpu_to_be_16((uint16_t)(len >> 16)) + rte_cpu_to_be_16((uint16_t)len);
	sum += rte_cpu_to_be_16(proto);
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)sum;
}
