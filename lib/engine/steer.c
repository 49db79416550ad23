/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Flow steering: the Toeplitz hash with rnic's key, as RSS-capable NICs
 * compute it, so software steering and hardware RSS name the same worker.
 */
#include <string.h>

#include <rte_byteorder.h>
#include <rte_thash.h>

#include "engine/stack.h"
#include "port/port.h"

unsigned rnic_flow_owner(const struct rnic_stack *st, uint32_t src_ip,
			 uint32_t dst_ip, uint16_t src_port, uint16_t dst_port)
{
	uint32_t tuple[3];

	if (st->n_workers <= 1)
		return 0;
	/* rte_softrss takes host-order words of the tuple */
	tuple[0] = rte_be_to_cpu_32(src_ip);
	tuple[1] = rte_be_to_cpu_32(dst_ip);
	tuple[2] = ((uint32_t)rte_be_to_cpu_16(src_port) << 16) |
		   rte_be_to_cpu_16(dst_port);
	uint32_t h = rte_softrss(tuple, 3, rnic_rss_key);
	return rnic_reta_entry_worker(h & 127, st->n_workers);
}

unsigned rnic_flow_owner6(const struct rnic_stack *st, const uint8_t src[16],
			  const uint8_t dst[16], uint16_t src_port, uint16_t dst_port)
{
	uint32_t tuple[9];

	if (st->n_workers <= 1)
		return 0;
	for (unsigned i = 0; i < 4; i++) {
		uint32_t a, b;
		memcpy(&a, src + 4 * i, 4);
		memcpy(&b, dst + 4 * i, 4);
		tuple[i] = rte_be_to_cpu_32(a);
		tuple[4 + i] = rte_be_to_cpu_32(b);
	}
	tuple[8] = ((uint32_t)rte_be_to_cpu_16(src_port) << 16) | rte_be_to_cpu_16(dst_port);
	uint32_t h = rte_softrss(tuple, 9, rnic_rss_key);
	return rnic_reta_entry_worker(h & 127, st->n_workers);
}
