/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Flow steering: the Toeplitz hash with rnic's key, as RSS-capable NICs
 * compute it, so software steering and hardware RSS name the same worker.
 */
#include <rte_byteorder.h>
#include <rte_thash.h>

#include "engine/stack.h"

/*
 * The symmetric key of Woo and Park ("Scalable TCP session monitoring with
 * symmetric receive-side scaling", 2012): 0x6d5a repeated. Its 16-bit
 * period makes the Toeplitz hash of (a, b, pa, pb) equal that of (b, a,
 * pb, pa), so both directions of a flow name the same indirection entry.
 * Two rnic processes with the same worker count then agree on a flow's
 * owner: the worker that owns it on one end sends it on its own TX queue,
 * which a link that maps a TX queue to the peer's RX queue of the same
 * index (net_memif, veth) delivers to the owner on the other end, and an
 * active open's source port chosen for its own worker is right for the
 * peer too. The paper reports an even spread over real traces;
 * tests/unit/engine checks the spread over 2 and 4 workers.
 */
const uint8_t rnic_rss_key[40] = {
	0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a,
	0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a,
	0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a,
	0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a,
	0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a,
};

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
