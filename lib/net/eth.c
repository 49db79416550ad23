/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Receive path entry: Ethernet. Accepts frames to our MAC, to broadcast,
 * and on a port with IPv6 to IPv6 multicast groups (ipv6.c keeps those of
 * its groups), and dispatches by EtherType to ARP, IPv4 or IPv6. A VLAN tag is not stripped:
 * rnic configures no VLANs, so tagged frames are someone else's.
 */
#include <rte_ether.h>

#include "engine/worker.h"
#include "net/arp.h"
#include "net/ipv6.h"
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
	/* IPv6 multicast (33:33:..., RFC 2464) goes to the IPv6 layer, which
	 * takes only its groups (all-nodes, our solicited-node ones) */
	bool mc6 = p->n_ip6 != 0 && eh->dst_addr.addr_bytes[0] == 0x33 &&
		   eh->dst_addr.addr_bytes[1] == 0x33 &&
		   eh->ether_type == RTE_BE16(RTE_ETHER_TYPE_IPV6);
	if (!rte_is_same_ether_addr(&eh->dst_addr, &p->mac) &&
	    !rte_is_broadcast_ether_addr(&eh->dst_addr) && !mc6) {
		rnic_worker_drop(w, RNIC_DROP_ETH_NOT_FOR_US, m);
		return;
	}
	switch (eh->ether_type) {
	case RTE_BE16(RTE_ETHER_TYPE_IPV4):
		rnic_ipv4_input(w, p, m);
		return;
	case RTE_BE16(RTE_ETHER_TYPE_IPV6):
		if (p->n_ip6 == 0)   /* an IPv4-only port */
			break;
		rnic_ipv6_input(w, p, m);
		return;
	case RTE_BE16(RTE_ETHER_TYPE_ARP):
		rnic_arp_input(w, p, m);
		return;
	default:
		break;
	}
	rnic_worker_drop(w, RNIC_DROP_ETH_TYPE, m);
}
