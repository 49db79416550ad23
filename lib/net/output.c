/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Transmit path: route, IPv4 header, next-hop resolution, TX buffer.
 */
#include <errno.h>

#include <rte_ether.h>
#include <rte_ip.h>

#include "engine/stack.h"
#include "net/arp.h"
#include "net/net.h"
#include "port/port.h"

/*
 * On-link first (ports whose link is up, then any), then the first port
 * with a default gateway, whose address becomes the next hop.
 */
struct rnic_port *rnic_net_route(struct rnic_stack *st, uint32_t dst_ip,
				 uint32_t *next_hop)
{
	/* the limited broadcast leaves by the first port (by the given one
	 * in rnic_net_output_ipv4()) */
	if (dst_ip == UINT32_MAX && st->n_ports > 0) {
		*next_hop = dst_ip;
		return st->ports[0];
	}
	for (unsigned i = 0; i < st->n_ports; i++) {
		struct rnic_port *p = st->ports[i];
		if (p->link_up && rnic_port_on_link(p, dst_ip)) {
			*next_hop = dst_ip;
			return p;
		}
	}
	/* a port whose link is down still routes its own subnet when no
	 * other port can (frames queue and the peer retransmits) */
	for (unsigned i = 0; i < st->n_ports; i++)
		if (rnic_port_on_link(st->ports[i], dst_ip)) {
			*next_hop = dst_ip;
			return st->ports[i];
		}
	for (unsigned i = 0; i < st->n_ports; i++)
		if (st->ports[i]->cfg.gateway) {
			*next_hop = st->ports[i]->cfg.gateway;
			return st->ports[i];
		}
	return NULL;
}

int rnic_net_out_select(struct rnic_worker *w, struct rnic_port **pp,
			uint32_t dst_ip, uint32_t *src_ip, uint32_t *next_hop)
{
	struct rnic_port *p = *pp;
	uint32_t src = *src_ip ? *src_ip : w->tx_src_ip;
	uint32_t nh = dst_ip;

	/* a port whose address another port took over (failover) sends
	 * through that port, from its own address */
	if (p != NULL && p->taken_by != 0 && p->st != NULL &&
	    p->taken_by <= p->st->n_ports) {
		if (src == 0)
			src = p->ip;
		p = p->st->ports[p->taken_by - 1];
	}
	if (p == NULL || (!rnic_port_on_link(p, dst_ip) && dst_ip != UINT32_MAX)) {
		struct rnic_port *rp = rnic_net_route(w->st, dst_ip, &nh);
		if (rp == NULL || (p != NULL && rp != p && !rnic_port_on_link(p, nh)))
			return -EHOSTUNREACH;
		if (p == NULL)
			p = rp;
	}
	*pp = p;
	*src_ip = src ? src : p->ip;
	*next_hop = nh;
	return 0;
}

int rnic_net_next_hop_ready(struct rnic_worker *w, struct rnic_port *p, uint32_t src_ip,
			    uint32_t dst_ip, uint64_t *until_tsc)
{
	uint32_t nh;

	if (rnic_net_out_select(w, &p, dst_ip, &src_ip, &nh) != 0)
		return -EHOSTUNREACH;
	return rnic_arp_ready(p, nh, until_tsc);
}

/*
 * Prepend Ethernet + IPv4 (no options, DF, TTL 64, software checksum: rnic
 * enables no TX offloads on its ports) and hand the frame to ARP, which
 * sends it or holds it until the next hop resolves. A given port @p p is
 * kept when the next hop is reachable through it.
 */
struct rte_ether_hdr *rnic_net_prepend_l2l3(const struct rnic_port *p, struct rte_mbuf *m,
					    uint32_t payload, uint32_t l3_hdr)
{
	if (payload + l3_hdr > p->mtu)
		return NULL;
	return (struct rte_ether_hdr *)rte_pktmbuf_prepend(m,
			(uint16_t)(sizeof(struct rte_ether_hdr) + l3_hdr));
}

/* Prepend Ethernet (source: the port) and IPv4 to the L4 bytes of @p m.
 * @return the Ethernet header, or NULL (no headroom, or over the MTU). */
static struct rte_ether_hdr *ipv4_prepend(struct rnic_worker *w, struct rnic_port *p,
					  struct rte_mbuf *m, uint32_t src_ip,
					  uint32_t dst_ip, uint8_t proto, uint8_t tos)
{
	uint32_t l4len = rte_pktmbuf_pkt_len(m);
	struct rte_ether_hdr *eh = rnic_net_prepend_l2l3(p, m, l4len, sizeof(struct rte_ipv4_hdr));
	if (eh == NULL)
		return NULL;
	struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)(eh + 1);
	ip->version_ihl = RTE_IPV4_VHL_DEF;
	ip->type_of_service = tos;
	ip->total_length = rte_cpu_to_be_16((uint16_t)(l4len + sizeof(*ip)));
	ip->packet_id = rte_cpu_to_be_16((uint16_t)w->ip_id++);
	ip->fragment_offset = rte_cpu_to_be_16(RTE_IPV4_HDR_DF_FLAG);
	ip->time_to_live = 64;
	ip->next_proto_id = proto;
	ip->hdr_checksum = 0;
	ip->src_addr = rte_cpu_to_be_32(src_ip);
	ip->dst_addr = rte_cpu_to_be_32(dst_ip);
	ip->hdr_checksum = rnic_ipv4_hdr_cksum(ip);
	eh->src_addr = p->mac;
	eh->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
	m->l2_len = sizeof(*eh);
	m->l3_len = sizeof(*ip);
	return eh;
}

int rnic_net_output_ipv4_src(struct rnic_worker *w, struct rnic_port *p,
			     struct rte_mbuf *m, uint32_t src_ip, uint32_t dst_ip,
			     uint8_t proto, uint8_t tos, rnic_net_fin_fn fin)
{
	return rnic_net_output_ipv4_hint(w, p, m, src_ip, dst_ip, proto, tos, fin, NULL);
}

int rnic_net_output_ipv4_hint(struct rnic_worker *w, struct rnic_port *p,
			      struct rte_mbuf *m, uint32_t src_ip, uint32_t dst_ip,
			      uint8_t proto, uint8_t tos, rnic_net_fin_fn fin,
			      struct rnic_arp_hint *hint)
{
	uint32_t nh;

	if (rnic_net_out_select(w, &p, dst_ip, &src_ip, &nh) != 0) {
		rnic_worker_drop(w, RNIC_DROP_IP_NO_ROUTE, m);
		return -EHOSTUNREACH;
	}
	if (ipv4_prepend(w, p, m, src_ip, dst_ip, proto, tos) == NULL) {
		rnic_worker_drop(w, RNIC_DROP_NO_MBUF, m);
		return -ENOBUFS;
	}
	if (fin != NULL)
		fin(m);
	rnic_arp_resolve_hint(w, p, m, nh, hint);
	return 0;
}

int rnic_net_reply_ipv4(struct rnic_worker *w, struct rnic_port *p, struct rte_mbuf *m,
			uint32_t src_ip, uint32_t dst_ip, uint8_t proto,
			const struct rte_ether_addr *l2_dst)
{
	if (p->taken_by != 0 || !rte_is_unicast_ether_addr(l2_dst))
		return rnic_net_output_ipv4_src(w, p, m, src_ip, dst_ip, proto, 0, NULL);
	struct rte_ether_hdr *eh = ipv4_prepend(w, p, m, src_ip ? src_ip : p->ip, dst_ip,
						proto, 0);
	if (eh == NULL) {
		rnic_worker_drop(w, RNIC_DROP_NO_MBUF, m);
		return -ENOBUFS;
	}
	eh->dst_addr = *l2_dst;
	rnic_worker_tx(w, p, m);
	return 0;
}

int rnic_net_output_ipv4_fin(struct rnic_worker *w, struct rnic_port *p,
			     struct rte_mbuf *m, uint32_t dst_ip, uint8_t proto,
			     uint8_t tos, rnic_net_fin_fn fin)
{
	return rnic_net_output_ipv4_src(w, p, m, 0, dst_ip, proto, tos, fin);
}

int rnic_net_output_ipv4_tos(struct rnic_worker *w, struct rnic_port *p,
			     struct rte_mbuf *m, uint32_t dst_ip, uint8_t proto,
			     uint8_t tos)
{
	return rnic_net_output_ipv4_fin(w, p, m, dst_ip, proto, tos, NULL);
}

int rnic_net_output_ipv4(struct rnic_worker *w, struct rnic_port *p,
			 struct rte_mbuf *m, uint32_t dst_ip, uint8_t proto)
{
	return rnic_net_output_ipv4_tos(w, p, m, dst_ip, proto, 0);
}
