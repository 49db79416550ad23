/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Receive path entry: Ethernet. Accepts frames to our MAC or to broadcast
 * (no multicast group is joined, so any other group address is not ours)
 * and dispatches by EtherType to ARP or IPv4. A VLAN tag is not stripped:
 * rnic configures no VLANs, so tagged frames are someone else's.
 */
#include <rte_ether.h>

#include "engine/worker.h"
#include "net/arp.h"
#include "net/net.h"
#include "net/net_internal.h"
#include "port/port.h"

void rnic_net_input(struct rnic_worker *w, struct rnic_port *p,
		    struct rte_mbuf *m)
{
	if (rte_pktmbuf_data_len(m) < sizeof(struct rte_ether_hdr)) {
		rnic_worker_drop(w, RNIC_DROP_ETH_SHORT, m);
		return;
	}
	const struct rte_ether_hdr *eh = rte_pktmbuf_mtod(m, struct rte_ether_hdr *);
	if (!rte_is_same_ether_addr(&eh->dst_addr, &p->mac) &&
	    !rte_is_broadcast_ether_addr(&eh->dst_addr)) {
		rnic_worker_drop(w, RNIC_DROP_ETH_NOT_FOR_US, m);
		return;
	}
	switch (eh->ether_type) {
	case RTE_BE16(RTE_ETHER_TYPE_IPV4):
		rnic_ipv4_input(w, p, m);
		return;
	case RTE_BE16(RTE_ETHER_TYPE_ARP):
		rnic_arp_input(w, p, m);
		return;
	default:
		rnic_worker_drop(w, RNIC_DROP_ETH_TYPE, m);
	}
}
