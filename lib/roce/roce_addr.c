/* SPDX-License-Identifier: BSD-3-Clause */
/* RoCEv2 addressing (roce_addr.h): the GID table, paths, received IP
 * headers, output to either family. */
#include <errno.h>
#include <string.h>

#include <rte_ip.h>

#include "engine/worker.h"
#include "net/ipv6.h"
#include "net/net.h"
#include "port/port.h"
#include "roce/roce_addr.h"
#include "roce/roce_wire.h"

int rnic_roce_path(const struct rnic_port *p, int sgid_index, const uint8_t dgid[16],
		   struct rnic_addr *src, struct rnic_addr *dst)
{
	uint8_t sgid[16];
	if (rnic_gid_get(p, sgid_index, sgid) != 0)
		return -EINVAL;
	*src = rnic_gid_addr(sgid);
	*dst = rnic_gid_addr(dgid);
	if (src->family != dst->family)
		return -EINVAL;
	if (dst->family == RNIC_AF_INET)
		return dst->v4 != 0 && src->v4 != 0 ? 0 : -EINVAL;
	/* IPv6: an address the port has (the link-local one only once the
	 * port runs IPv6), a unicast destination of the same scope */
	if (p->n_ip6 == 0 || !rnic_port_has_ip6(p, src->v6) ||
	    rnic_ip6_is_unspecified(dst->v6) || rnic_ip6_is_multicast(dst->v6) ||
	    rnic_ip6_is_link_local(src->v6) != rnic_ip6_is_link_local(dst->v6))
		return -EINVAL;
	return 0;
}

void roce_l3_parse(const struct rte_mbuf *m, struct roce_l3 *l3)
{
	const uint8_t *h = rte_pktmbuf_mtod_offset(m, const uint8_t *, m->l2_len);
	l3->hdr = h;
	if ((h[0] >> 4) == 6) {
		const struct rte_ipv6_hdr *ip = (const struct rte_ipv6_hdr *)h;
		l3->src = rnic_addr_v6(ip->src_addr);
		l3->dst = rnic_addr_v6(ip->dst_addr);
		l3->tos = (uint8_t)(rte_be_to_cpu_32(ip->vtc_flow) >> 20);
		return;
	}
	/* built in place, not by rnic_addr_v4() (a call returning a struct
	 * through memory, twice per received packet: 3 % of a 64-byte Write
	 * run's main thread) */
	const struct rte_ipv4_hdr *ip = (const struct rte_ipv4_hdr *)h;
	*l3 = (struct roce_l3){
		.src = { .family = RNIC_AF_INET, .v4 = rte_be_to_cpu_32(ip->src_addr) },
		.dst = { .family = RNIC_AF_INET, .v4 = rte_be_to_cpu_32(ip->dst_addr) },
		.tos = ip->type_of_service,
		.hdr = h,
	};
}

uint32_t rnic_roce_flow_label(uint32_t lqpn, uint32_t rqpn)
{
	uint64_t v = (uint64_t)lqpn * rqpn;
	v ^= v >> 20;
	v ^= v >> 40;
	uint32_t fl = (uint32_t)v & RNIC_IP6_FLOW_MASK;
	return fl != 0 ? fl : 1;   /* 0 would say "no flow" (RFC 6437) */
}

/* The hop limit of the frame being sent and the finishing step it had
 * (the ICRC): lib/net writes hop limit and TTL 64, and calls the finishing
 * step synchronously once the IP header is final, on this thread; the
 * ICRC does not cover either field. */
static __thread uint8_t out_hops;
static __thread void (*out_fin)(struct rte_mbuf *);

static void hops_fin(struct rte_mbuf *m)
{
	uint8_t *h = rte_pktmbuf_mtod_offset(m, uint8_t *, m->l2_len);
	if ((h[0] >> 4) == 6) {
		((struct rte_ipv6_hdr *)h)->hop_limits = out_hops;
	} else {
		struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)h;
		ip->time_to_live = out_hops;
		ip->hdr_checksum = 0;
		ip->hdr_checksum = rte_ipv4_cksum(ip);
	}
	if (out_fin != NULL)
		out_fin(m);
}

int rnic_roce_output_hops(struct rnic_worker *w, struct rnic_port *p, struct rte_mbuf *m,
			  const struct rnic_addr *src, const struct rnic_addr *dst,
			  uint16_t sport, uint8_t tos, uint32_t flow, uint8_t hops,
			  void (*fin)(struct rte_mbuf *), struct rnic_arp_hint *hint)
{
	if (hops != 0 && hops != RNIC_IP6_HOP_LIMIT) {   /* lib/net's default, also its TTL */
		out_hops = hops;
		out_fin = fin;
		fin = hops_fin;
	}
	if (dst->family == RNIC_AF_INET6)
		return rnic_net_output_udp6(w, p, m,
					    src != NULL && src->family == RNIC_AF_INET6 ? src->v6
										     : NULL,
					    dst->v6, sport, RNIC_ROCE_UDP_PORT, false, tos, flow, fin);
	uint32_t s = src != NULL && src->family == RNIC_AF_INET ? src->v4 : 0;
	return rnic_net_output_udp_fin_src(w, p, m, s != 0 || p == NULL ? s : p->ip, dst->v4, sport,
					   RNIC_ROCE_UDP_PORT, false, tos, fin, hint);
}

int rnic_roce_output(struct rnic_worker *w, struct rnic_port *p, struct rte_mbuf *m,
		     const struct rnic_addr *src, const struct rnic_addr *dst, uint16_t sport,
		     uint8_t tos, uint32_t flow, void (*fin)(struct rte_mbuf *),
		     struct rnic_arp_hint *hint)
{
	return rnic_roce_output_hops(w, p, m, src, dst, sport, tos, flow, 0, fin, hint);
}
