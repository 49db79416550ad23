/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * UDP (RFC 768): header and checksum checks, the demux by destination port
 * to handlers bound on the stack (RoCEv2 on 4791), and output. No ICMP
 * port-unreachable is sent for unbound ports: a silent drop (counted) gives
 * scanners nothing and costs nothing.
 */
#include <errno.h>
#include <rte_ip.h>
#include <rte_udp.h>

#include "engine/stack.h"
#include "net/ipv6.h"
#include "net/net.h"
#include "net/net_internal.h"
#include "port/port.h"

/* RoCEv2's port: over IPv6 its datagrams may carry checksum 0 (rxe sends
 * 0; RFC 6936's per-port exception for tunnels, the ICRC covering them). */
#define UDP_PORT_ROCEV2 4791

/* Verify the checksum over exactly @p ulen bytes from @p off, the length
 * the pseudo header carries (IPv4 or IPv6, by the header at m->l2_len). */
static bool udp_cksum_ok(const struct rte_mbuf *m, uint32_t off, uint16_t ulen)
{
	if (rnic_mbuf_is_ipv6(m)) {
		const struct rte_ipv6_hdr *ip6 =
			rte_pktmbuf_mtod_offset(m, const struct rte_ipv6_hdr *, m->l2_len);
		return rnic_net_l4_cksum6(m, off, ip6->src_addr, ip6->dst_addr,
					  IPPROTO_UDP, ulen) == 0xffff;
	}
	const struct rte_ipv4_hdr *ip =
		rte_pktmbuf_mtod_offset(m, const struct rte_ipv4_hdr *, m->l2_len);
	return rnic_net_l4_cksum(m, off, ip->src_addr, ip->dst_addr,
				 IPPROTO_UDP, ulen) == 0xffff;
}

int rnic_udp_check(struct rnic_worker *w, struct rte_mbuf *m)
{
	uint32_t off = m->l2_len + m->l3_len;
	uint32_t avail = rte_pktmbuf_pkt_len(m) - off;

	if (avail < sizeof(struct rte_udp_hdr) ||
	    rte_pktmbuf_data_len(m) < off + sizeof(struct rte_udp_hdr)) {
		rnic_worker_drop(w, RNIC_DROP_UDP_SHORT, m);
		return -EINVAL;
	}
	const struct rte_udp_hdr *uh =
		rte_pktmbuf_mtod_offset(m, const struct rte_udp_hdr *, off);
	uint16_t ulen = rte_be_to_cpu_16(uh->dgram_len);
	/* bytes past the UDP length (allowed, RFC 768) are not the datagram's;
	 * they sit at the tail, so trimming them can only fail on a chain
	 * whose last segment is shorter than the excess */
	if (ulen < sizeof(*uh) || ulen > avail ||
	    (ulen < avail && rte_pktmbuf_trim(m, (uint16_t)(avail - ulen)) != 0)) {
		rnic_worker_drop(w, RNIC_DROP_UDP_LEN, m);
		return -EINVAL;
	}
	/* checksum 0: the sender computed none (allowed over IPv4; over IPv6
	 * only for RoCEv2, RFC 8200 8.1 wants one otherwise) */
	if (uh->dgram_cksum == 0 && rnic_mbuf_is_ipv6(m) &&
	    rte_be_to_cpu_16(uh->dst_port) != UDP_PORT_ROCEV2) {
		rnic_worker_drop(w, RNIC_DROP_UDP_CHECKSUM, m);
		return -EINVAL;
	}
	if (uh->dgram_cksum != 0 &&
	    (m->ol_flags & RTE_MBUF_F_RX_L4_CKSUM_MASK) != RTE_MBUF_F_RX_L4_CKSUM_GOOD &&
	    !udp_cksum_ok(m, off, ulen)) {
		rnic_worker_drop(w, RNIC_DROP_UDP_CHECKSUM, m);
		return -EINVAL;
	}
	return 0;
}

const struct rnic_l4_handler *rnic_udp_lookup(const struct rnic_stack *st,
					      const struct rte_mbuf *m)
{
	const struct rte_udp_hdr *uh = rte_pktmbuf_mtod_offset(m,
			const struct rte_udp_hdr *, m->l2_len + m->l3_len);
	uint16_t port = rte_be_to_cpu_16(uh->dst_port);

	if (port == 0)   /* 0 marks a free binding slot */
		return NULL;
	for (unsigned i = 0; i < RNIC_MAX_UDP_HANDLERS; i++)
		if (st->udp[i].port == port && st->udp[i].h.input != NULL)
			return &st->udp[i].h;
	return NULL;
}

/*
 * Prepend the UDP header and, when asked, the checksum over the pseudo
 * header with the source address the IPv4 layer will use (the given one,
 * else the port's, or the routed one's). Works on chained mbufs.
 */
int rnic_net_output_udp(struct rnic_worker *w, struct rnic_port *p,
			struct rte_mbuf *m, uint32_t dst_ip, uint16_t sport,
			uint16_t dport, bool csum)
{
	return rnic_net_output_udp_fin(w, p, m, dst_ip, sport, dport, csum, 0, NULL);
}

int rnic_net_output_udp_fin(struct rnic_worker *w, struct rnic_port *p,
			    struct rte_mbuf *m, uint32_t dst_ip, uint16_t sport,
			    uint16_t dport, bool csum, uint8_t tos, rnic_net_fin_fn fin)
{
	return rnic_net_output_udp_fin_src(w, p, m, 0, dst_ip, sport, dport,
					   csum, tos, fin, NULL);
}

/* Prepend the UDP header (checksum 0 for now) to @p m: @p *len is the
 * datagram's length, at most @p max (what the IP layer above can carry).
 * @return the header, or NULL with @p m dropped (counted). */
static struct rte_udp_hdr *udp_push(struct rnic_worker *w, struct rte_mbuf *m, uint16_t sport,
				    uint16_t dport, uint32_t max, uint32_t *len)
{
	*len = rte_pktmbuf_pkt_len(m) + sizeof(struct rte_udp_hdr);
	struct rte_udp_hdr *uh = *len > max ? NULL :
		(struct rte_udp_hdr *)rte_pktmbuf_prepend(m, sizeof(*uh));
	if (uh == NULL) {
		rnic_worker_drop(w, RNIC_DROP_NO_MBUF, m);
		return NULL;
	}
	uh->src_port = rte_cpu_to_be_16(sport);
	uh->dst_port = rte_cpu_to_be_16(dport);
	uh->dgram_len = rte_cpu_to_be_16((uint16_t)*len);
	uh->dgram_cksum = 0;
	return uh;
}

int rnic_net_output_udp_fin_src(struct rnic_worker *w, struct rnic_port *p,
				struct rte_mbuf *m, uint32_t src_ip, uint32_t dst_ip,
				uint16_t sport, uint16_t dport, bool csum,
				uint8_t tos, rnic_net_fin_fn fin,
				struct rnic_arp_hint *hint)
{
	uint32_t len;
	struct rte_udp_hdr *uh = udp_push(w, m, sport, dport,
					  UINT16_MAX - sizeof(struct rte_ipv4_hdr), &len);
	if (uh == NULL)
		return -ENOBUFS;
	if (csum) {
		/* the source the IPv4 layer will write, for the pseudo header
		 * (without a checksum, RoCEv2's case, the IPv4 layer alone
		 * picks the port and source: once per datagram) */
		uint32_t nh;
		if (rnic_net_out_select(w, &p, dst_ip, &src_ip, &nh) != 0) {
			rnic_worker_drop(w, RNIC_DROP_IP_NO_ROUTE, m);
			return -EHOSTUNREACH;
		}
		uint16_t ck = (uint16_t)~rnic_net_l4_cksum(m, 0,
				rte_cpu_to_be_32(src_ip), rte_cpu_to_be_32(dst_ip),
				IPPROTO_UDP, (uint16_t)len);
		/* 0 on the wire means "none": a computed 0 is sent as 0xffff */
		uh->dgram_cksum = ck == 0 ? 0xffff : ck;
	}
	return rnic_net_output_ipv4_hint(w, p, m, src_ip, dst_ip, IPPROTO_UDP, tos, fin, hint);
}

int rnic_net_output_udp6(struct rnic_worker *w, struct rnic_port *p, struct rte_mbuf *m,
			 const uint8_t *src, const uint8_t dst[16], uint16_t sport,
			 uint16_t dport, bool csum, uint8_t tclass, uint32_t flow,
			 rnic_net_fin_fn fin)
{
	uint32_t len;
	struct rte_udp_hdr *uh = udp_push(w, m, sport, dport, UINT16_MAX, &len);
	if (uh == NULL)
		return -ENOBUFS;
	uint8_t s[16];
	if (csum) {
		/* the pseudo header needs the source the IPv6 layer will pick */
		struct rnic_port *rp = p != NULL ? p : rnic_net_route6(w->st, dst);
		if (src == NULL && (rp == NULL || rnic_port_ip6_src(rp, dst, s) != 0)) {
			rnic_worker_drop(w, RNIC_DROP_IP6_NO_ROUTE, m);
			return -EHOSTUNREACH;
		}
		if (src == NULL)
			src = s;
		uint16_t ck = (uint16_t)~rnic_net_l4_cksum6(m, 0, src, dst, IPPROTO_UDP, len);
		uh->dgram_cksum = ck == 0 ? 0xffff : ck;
	}
	return rnic_net_output_ipv6_fin(w, p, m, src, dst, IPPROTO_UDP, tclass, flow, fin);
}
