/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * IPv6 receive and send (RFC 8200). Receive: header validation in wire
 * order, each failure dropped with its own cause; the extension headers
 * walked (at most 8 of them and 256 bytes of chain with the fixed header;
 * hop-by-hop and destination options whose options may be skipped,
 * a routing header with no segments left, an atomic fragment, RFC 6946)
 * and everything else rnic does not take dropped with a counted cause
 * (fragments: RDMA transports never send them, as for IPv4); then the
 * upper-layer demux: ICMPv6 here, TCP by the stack's handler. Send: the
 * header, the on-link route, the next hop by neighbour discovery (nd.c).
 */
#include <errno.h>
#include <netinet/in.h>

#include <rte_ether.h>
#include <rte_ip.h>

#include "engine/stack.h"
#include "net/ipv6.h"
#include "net/nd.h"
#include "net/net.h"
#include "net/net_internal.h"
#include "port/port.h"

#define IP6_EXT_MAX 8    /* extension headers walked before giving up */
/*
 * The most bytes of IPv6 header chain (the fixed header and every extension
 * header before the upper-layer header) rnic takes; a longer chain is
 * dropped as ip6_ext_chain_long (RFC 8504 5.3 lets a host limit both the
 * number and the size of extension headers). The chain's length goes into
 * m->l3_len, a 9-bit field: a 512-byte chain would wrap there and a
 * transport would read its header from inside an options header.
 */
#define IP6_CHAIN_MAX 256
_Static_assert(IP6_CHAIN_MAX < (1u << RTE_MBUF_L3_LEN_BITS),
	       "the IPv6 header chain length must fit m->l3_len");

void rnic_ip6_solicited_node(const uint8_t a[16], uint8_t out[16])
{
	static const uint8_t pfx[13] = { 0xff, 0x02, [11] = 0x01, [12] = 0xff };
	memcpy(out, pfx, 13);
	memcpy(out + 13, a + 13, 3);
}

void rnic_ip6_mcast_mac(const uint8_t a[16], struct rte_ether_addr *mac)
{
	mac->addr_bytes[0] = 0x33;
	mac->addr_bytes[1] = 0x33;
	memcpy(&mac->addr_bytes[2], a + 12, 4);
}

/* The port that serves @p p's addresses now (itself unless taken over). */
static const struct rnic_port *ip6_server(const struct rnic_port *p)
{
	uint8_t by = __atomic_load_n(&p->taken_by, __ATOMIC_ACQUIRE);
	if (by != 0 && p->st != NULL && by <= p->st->n_ports)
		return p->st->ports[by - 1];
	return p;
}

/* Own address index of @p a on @p p (duplicates excluded), or -1. */
static int ip6_own_index(const struct rnic_port *p, const uint8_t a[16])
{
	for (unsigned i = 0; i < p->n_ip6; i++)
		if (p->ip6_state[i] != RNIC_IP6_DUPLICATE && !memcmp(p->ip6[i], a, 16))
			return (int)i;
	return -1;
}

bool rnic_port_has_ip6(const struct rnic_port *p, const uint8_t a[16])
{
	if (ip6_own_index(p, a) >= 0 && ip6_server(p) == p)
		return true;
	/* failover: the global addresses of ports this one took over (a
	 * link-local address stays with its link) */
	if (p->st == NULL || rnic_ip6_is_link_local(a))
		return false;
	for (unsigned i = 0; i < p->st->n_ports; i++) {
		const struct rnic_port *q = p->st->ports[i];
		if (q != p && q != NULL && ip6_server(q) == p && ip6_own_index(q, a) > 0)
			return true;
	}
	return false;
}

static unsigned common_prefix(const uint8_t a[16], const uint8_t b[16])
{
	unsigned n = 0;
	for (unsigned i = 0; i < 16; i++) {
		uint8_t x = a[i] ^ b[i];
		if (x == 0) {
			n += 8;
			continue;
		}
		while (!(x & 0x80)) {
			n++;
			x = (uint8_t)(x << 1);
		}
		break;
	}
	return n;
}

bool rnic_port_on_link6(const struct rnic_port *p, const uint8_t a[16])
{
	if (p->n_ip6 == 0)
		return false;
	if (rnic_ip6_is_link_local(a))
		return true;
	for (unsigned i = 1; i < p->n_ip6; i++)
		if (rnic_ip6_prefix_equal(a, p->ip6[i], p->ip6_prefix[i]))
			return true;
	return false;
}

int rnic_port_ip6_src(const struct rnic_port *p, const uint8_t dst[16], uint8_t src[16])
{
	int best = -1;
	unsigned best_len = 0;

	if (p->n_ip6 == 0)
		return -EADDRNOTAVAIL;
	if (rnic_ip6_is_link_local(dst) || rnic_ip6_is_multicast(dst)) {
		if (p->ip6_state[0] == RNIC_IP6_DUPLICATE)
			return -EADDRNOTAVAIL;
		memcpy(src, p->ip6[0], 16);
		return 0;
	}
	for (unsigned i = 1; i < p->n_ip6; i++) {
		if (p->ip6_state[i] == RNIC_IP6_DUPLICATE)
			continue;
		unsigned n = common_prefix(dst, p->ip6[i]);
		if (best < 0 || n > best_len) {
			best = (int)i;
			best_len = n;
		}
	}
	if (best < 0)
		return -EADDRNOTAVAIL;
	memcpy(src, p->ip6[best], 16);
	return 0;
}

struct rnic_port *rnic_net_route6(struct rnic_stack *st, const uint8_t dst[16])
{
	for (int pass = 0; pass < 2; pass++)
		for (unsigned i = 0; i < st->n_ports; i++) {
			struct rnic_port *p = st->ports[i];
			if ((pass == 1 || p->link_up) && rnic_port_on_link6(p, dst))
				return p;
		}
	return NULL;
}

/* ---------------------------------------------------------------- receive */

/* Is @p dst one of our destinations on @p p: a unicast address we answer
 * for, all-nodes, or the solicited-node group of one of our addresses? */
static bool ip6_for_us(const struct rnic_port *p, const uint8_t dst[16])
{
	static const uint8_t all_nodes[16] = { 0xff, 0x02, [15] = 0x01 };

	if (!rnic_ip6_is_multicast(dst))
		return rnic_port_has_ip6(p, dst);
	if (!memcmp(dst, all_nodes, 16))
		return true;
	uint8_t sn[16];
	for (unsigned i = 0; i < p->n_ip6; i++) {
		rnic_ip6_solicited_node(p->ip6[i], sn);
		if (!memcmp(dst, sn, 16))
			return true;
	}
	/* the groups of addresses taken over */
	if (p->st != NULL)
		for (unsigned k = 0; k < p->st->n_ports; k++) {
			const struct rnic_port *q = p->st->ports[k];
			if (q == p || q == NULL || ip6_server(q) != p)
				continue;
			for (unsigned i = 1; i < q->n_ip6; i++) {
				rnic_ip6_solicited_node(q->ip6[i], sn);
				if (!memcmp(dst, sn, 16))
					return true;
			}
		}
	return false;
}

/*
 * Options of a hop-by-hop or destination options header (RFC 8200 4.2):
 * Pad1 and PadN, and any option whose type says "skip if unrecognised"
 * (highest two bits 00); any other is one rnic must not ignore.
 * @return 0, or -EINVAL.
 */
static int ip6_options(const uint8_t *o, uint32_t len)
{
	uint32_t i = 0;
	while (i < len) {
		if (o[i] == 0) {             /* Pad1 */
			i++;
			continue;
		}
		if (i + 2 > len || i + 2u + o[i + 1] > len)
			return -EINVAL;
		if (o[i] != 1 && (o[i] & 0xc0) != 0)
			return -EINVAL;
		i += 2u + o[i + 1];
	}
	return 0;
}

/*
 * Walk the extension headers after the fixed header (all in the first
 * segment). @return 0 with the upper-layer protocol in *proto and the
 * length of the whole IPv6 header chain in *l3, or a drop cause.
 */
static int ip6_walk(const struct rte_mbuf *m, uint32_t l2, uint8_t *proto, uint32_t *l3,
		    bool *frag)
{
	const uint8_t *base = rte_pktmbuf_mtod_offset(m, const uint8_t *, l2);
	uint32_t avail = rte_pktmbuf_data_len(m) - l2;
	uint32_t tot = rte_pktmbuf_pkt_len(m) - l2;
	uint32_t off = sizeof(struct rte_ipv6_hdr);
	uint8_t nh = ((const struct rte_ipv6_hdr *)base)->proto;

	for (unsigned n = 0; n < IP6_EXT_MAX; n++) {
		switch (nh) {
		case IPPROTO_HOPOPTS:
			if (n != 0)   /* only right after the fixed header */
				return RNIC_DROP_IP6_EXT_HDR;
			/* fallthrough */
		case IPPROTO_DSTOPTS:
		case IPPROTO_ROUTING: {
			if (off + 8 > avail || off + 8 > tot)
				return RNIC_DROP_IP6_EXT_HDR;
			uint32_t len = (base[off + 1] + 1u) * 8;
			if (off + len > IP6_CHAIN_MAX)
				return RNIC_DROP_IP6_EXT_CHAIN;
			if (off + len > avail || off + len > tot)
				return RNIC_DROP_IP6_EXT_HDR;
			if (nh == IPPROTO_ROUTING) {
				if (base[off + 3] != 0)   /* segments left: we are no router */
					return RNIC_DROP_IP6_EXT_HDR;
			} else if (ip6_options(base + off + 2, len - 2) != 0) {
				return RNIC_DROP_IP6_EXT_HDR;
			}
			nh = base[off];
			off += len;
			break;
		}
		case IPPROTO_FRAGMENT: {
			if (off + 8 > IP6_CHAIN_MAX)
				return RNIC_DROP_IP6_EXT_CHAIN;
			if (off + 8 > avail || off + 8 > tot)
				return RNIC_DROP_IP6_EXT_HDR;
			uint16_t fo = (uint16_t)(base[off + 2] << 8 | base[off + 3]);
			if ((fo & 0xfff9) != 0)   /* offset or M set: a real fragment */
				return RNIC_DROP_IP6_FRAGMENT;
			nh = base[off];           /* an atomic fragment (RFC 6946) */
			off += 8;
			*frag = true;
			break;
		}
		case IPPROTO_NONE:
			return RNIC_DROP_IP6_PROTO;
		case IPPROTO_ICMPV6:
		case IPPROTO_TCP:
		case IPPROTO_UDP:
			*proto = nh;
			*l3 = off;
			return 0;
		default:
			/* AH, ESP, mobility and the unknown: not taken */
			return RNIC_DROP_IP6_PROTO;
		}
	}
	return RNIC_DROP_IP6_EXT_CHAIN;   /* more than IP6_EXT_MAX headers */
}

int rnic_ip6_walk(const struct rte_mbuf *m, uint32_t l2, uint8_t *proto, uint32_t *l3)
{
	bool frag = false;
	return ip6_walk(m, l2, proto, l3, &frag);
}

bool rnic_ip6_in_fragment(const struct rte_mbuf *m)
{
	uint8_t proto;
	uint32_t l3;
	bool frag = false;
	/* no extension header: no fragment header (the common case) */
	if (m->l3_len <= sizeof(struct rte_ipv6_hdr))
		return false;
	return ip6_walk(m, m->l2_len, &proto, &l3, &frag) != 0 || frag;
}

/* Checks in header order. @return 0 or the drop cause. */
static int ipv6_check(const struct rnic_port *p, struct rte_mbuf *m)
{
	const uint32_t l2 = sizeof(struct rte_ether_hdr);

	if (rte_pktmbuf_data_len(m) < l2 + sizeof(struct rte_ipv6_hdr))
		return RNIC_DROP_IP6_SHORT;
	const struct rte_ipv6_hdr *ip = rte_pktmbuf_mtod_offset(m, const struct rte_ipv6_hdr *,
							        l2);
	if ((rte_be_to_cpu_32(ip->vtc_flow) >> 28) != 6)
		return RNIC_DROP_IP6_VERSION;
	uint32_t plen = rte_be_to_cpu_16(ip->payload_len);
	uint32_t avail = rte_pktmbuf_pkt_len(m) - l2 - (uint32_t)sizeof(*ip);
	/* 0 would announce a jumbogram (RFC 2675), which Ethernet never carries */
	if (plen == 0 && ip->proto != IPPROTO_NONE)
		return RNIC_DROP_IP6_PAYLOAD_LEN;
	if (plen > avail)
		return RNIC_DROP_IP6_PAYLOAD_LEN;
	static const uint8_t loopback[16] = { [15] = 1 };
	/* multicast, loopback, IPv4-mapped (RFC 4291 2.5.5.2: not on the
	 * wire) and our own addresses (a looped or spoofed frame) */
	if (rnic_ip6_is_multicast(ip->src_addr) || !memcmp(ip->src_addr, loopback, 16) ||
	    rnic_ip6_is_v4mapped(ip->src_addr) || rnic_port_has_ip6(p, ip->src_addr))
		return RNIC_DROP_IP6_BAD_SRC;
	if (!ip6_for_us(p, ip->dst_addr))
		return RNIC_DROP_IP6_NOT_FOR_US;
	/* Ethernet pads short frames: lengths come from the header */
	if (avail > plen && rte_pktmbuf_trim(m, (uint16_t)(avail - plen)) != 0)
		return RNIC_DROP_IP6_PAYLOAD_LEN;
	return 0;
}

static const struct rnic_l4_handler *ipv6_handler(struct rnic_worker *w, struct rte_mbuf *m,
						  uint8_t proto)
{
	if (proto == IPPROTO_UDP) {   /* RoCEv2 on 4791 */
		const struct rnic_l4_handler *u = rnic_udp_lookup(w->st, m);
		if (u == NULL)
			rnic_worker_drop(w, RNIC_DROP_UDP_NO_LISTENER, m);
		return u;
	}
	const struct rnic_l4_handler *h = &w->st->ip_proto[proto];
	if (proto == IPPROTO_TCP && h->input != NULL)
		return h;
	rnic_worker_drop(w, RNIC_DROP_IP6_PROTO, m);
	return NULL;
}

void rnic_ipv6_input(struct rnic_worker *w, struct rnic_port *p, struct rte_mbuf *m)
{
	int cause = ipv6_check(p, m);
	uint8_t proto = 0;
	uint32_t l3 = 0;

	if (cause == 0)
		cause = rnic_ip6_walk(m, sizeof(struct rte_ether_hdr), &proto, &l3);
	if (cause != 0) {
		rnic_worker_drop(w, (enum rnic_drop_cause)cause, m);
		return;
	}
	const struct rte_ipv6_hdr *ip = rte_pktmbuf_mtod_offset(m, const struct rte_ipv6_hdr *,
							        sizeof(struct rte_ether_hdr));
	m->l2_len = sizeof(struct rte_ether_hdr);
	m->l3_len = l3;
	if (proto == IPPROTO_ICMPV6) {
		rnic_icmp6_input(w, p, m);
		return;
	}
	/* transports take unicast only, from a real source */
	if (rnic_ip6_is_multicast(ip->dst_addr) || rnic_ip6_is_unspecified(ip->src_addr)) {
		rnic_worker_drop(w, RNIC_DROP_IP6_NOT_FOR_US, m);
		return;
	}
	if (proto == IPPROTO_UDP && rnic_udp_check(w, m) != 0)
		return;
	const struct rnic_l4_handler *h = ipv6_handler(w, m, proto);
	if (h == NULL)
		return;
	if (h->owner != NULL) {
		unsigned owner = h->owner(w->st, p, m);
		if (owner != UINT32_MAX && owner != w->id) {
			m->port = (uint16_t)p->idx;
			rnic_worker_redirect(w, owner, m);
			return;
		}
	}
	h->input(w, p, m);
}

void rnic_ipv6_input_l4(struct rnic_worker *w, struct rnic_port *p, struct rte_mbuf *m)
{
	uint8_t proto = 0;
	uint32_t l3 = 0;
	if (rnic_ip6_walk(m, m->l2_len, &proto, &l3) != 0) {
		rnic_worker_drop(w, RNIC_DROP_IP6_EXT_HDR, m);
		return;
	}
	if (proto == IPPROTO_ICMPV6) {   /* a packet too big for a flow of ours */
		rnic_icmp6_input(w, p, m);
		return;
	}
	const struct rnic_l4_handler *h = ipv6_handler(w, m, proto);
	if (h != NULL)
		h->input(w, p, m);
}

/* ------------------------------------------------------------------- send */

/* Prepend Ethernet and IPv6 to the upper-layer bytes of @p m. @return the
 * Ethernet header, or NULL (no headroom, or above the MTU). */
static struct rte_ether_hdr *ipv6_prepend(struct rnic_port *p, struct rte_mbuf *m,
					  const uint8_t src[16], const uint8_t dst[16],
					  uint8_t proto, uint8_t tclass, uint32_t flow,
					  uint8_t hops)
{
	uint32_t plen = rte_pktmbuf_pkt_len(m);
	struct rte_ether_hdr *eh = rnic_net_prepend_l2l3(p, m, plen, sizeof(struct rte_ipv6_hdr));
	if (eh == NULL)
		return NULL;
	struct rte_ipv6_hdr *ip = (struct rte_ipv6_hdr *)(eh + 1);
	ip->vtc_flow = rte_cpu_to_be_32(6u << 28 | (uint32_t)tclass << 20 |
				       (flow & RNIC_IP6_FLOW_MASK));
	ip->payload_len = rte_cpu_to_be_16((uint16_t)plen);
	ip->proto = proto;
	ip->hop_limits = hops;
	memcpy(ip->src_addr, src, 16);
	memcpy(ip->dst_addr, dst, 16);
	eh->src_addr = p->mac;
	eh->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV6);
	m->l2_len = sizeof(*eh);
	m->l3_len = sizeof(*ip);
	return eh;
}

/* Send with hop limit @p hops (nd.c sends with 255), flow label @p flow
 * and the finishing step @p fin (NULL: none). */
static int ipv6_output(struct rnic_worker *w, struct rnic_port *p, struct rte_mbuf *m,
		       const uint8_t *src, const uint8_t dst[16], uint8_t proto,
		       uint8_t tclass, uint32_t flow, uint8_t hops, rnic_net_fin_fn fin)
{
	uint8_t s[16];

	/* a port whose addresses were taken over sends through the survivor */
	if (p != NULL && !rnic_ip6_is_link_local(dst)) {
		const struct rnic_port *sv = ip6_server(p);
		if (sv != p) {
			if (src == NULL && rnic_port_ip6_src(p, dst, s) == 0)
				src = s;
			p = (struct rnic_port *)(uintptr_t)sv;
		}
	}
	if (p == NULL)
		p = rnic_net_route6(w->st, dst);
	if (p == NULL || (!rnic_ip6_is_multicast(dst) && !rnic_port_on_link6(p, dst))) {
		rnic_worker_drop(w, RNIC_DROP_IP6_NO_ROUTE, m);
		return -EHOSTUNREACH;
	}
	if (src == NULL) {
		if (rnic_port_ip6_src(p, dst, s) != 0) {
			rnic_worker_drop(w, RNIC_DROP_IP6_NO_ROUTE, m);
			return -EADDRNOTAVAIL;
		}
		src = s;
	}
	struct rte_ether_hdr *eh = ipv6_prepend(p, m, src, dst, proto, tclass, flow, hops);
	if (eh == NULL) {
		rnic_worker_drop(w, RNIC_DROP_NO_MBUF, m);
		return -ENOBUFS;
	}
	if (fin != NULL)
		fin(m);   /* the header is final: RoCEv2's ICRC covers it */
	if (rnic_ip6_is_multicast(dst)) {
		rnic_ip6_mcast_mac(dst, &eh->dst_addr);
		rnic_worker_tx(w, p, m);
		return 0;
	}
	rnic_nd_resolve_and_send(w, p, m, dst);
	return 0;
}

int rnic_ipv6_output_hops(struct rnic_worker *w, struct rnic_port *p, struct rte_mbuf *m,
			  const uint8_t *src, const uint8_t dst[16], uint8_t proto,
			  uint8_t tclass, uint8_t hops)
{
	return ipv6_output(w, p, m, src, dst, proto, tclass, 0, hops, NULL);
}

int rnic_net_output_ipv6_fin(struct rnic_worker *w, struct rnic_port *p, struct rte_mbuf *m,
			     const uint8_t *src, const uint8_t dst[16], uint8_t proto,
			     uint8_t tclass, uint32_t flow, rnic_net_fin_fn fin)
{
	return ipv6_output(w, p, m, src, dst, proto, tclass, flow, RNIC_IP6_HOP_LIMIT, fin);
}

struct rte_ether_hdr *rnic_ipv6_prepend(struct rnic_port *p, struct rte_mbuf *m,
					const uint8_t src[16], const uint8_t dst[16],
					uint8_t proto, uint8_t hops)
{
	return ipv6_prepend(p, m, src, dst, proto, 0, 0, hops);
}

int rnic_ipv6_xmit(struct rnic_worker *w, struct rnic_port *p, struct rte_mbuf *m,
		   const uint8_t src[16], const uint8_t dst[16], uint8_t proto, uint8_t hops,
		   const struct rte_ether_addr *l2_dst)
{
	struct rte_ether_hdr *eh = ipv6_prepend(p, m, src, dst, proto, 0, 0, hops);
	if (eh == NULL) {
		rnic_worker_drop(w, RNIC_DROP_NO_MBUF, m);
		return -ENOBUFS;
	}
	if (l2_dst != NULL)
		eh->dst_addr = *l2_dst;
	else
		rnic_ip6_mcast_mac(dst, &eh->dst_addr);
	rnic_worker_tx(w, p, m);
	return 0;
}

int rnic_net_output_ipv6(struct rnic_worker *w, struct rnic_port *p, struct rte_mbuf *m,
			 const uint8_t *src, const uint8_t dst[16], uint8_t proto,
			 uint8_t tclass)
{
	return rnic_ipv6_output_hops(w, p, m, src, dst, proto, tclass, RNIC_IP6_HOP_LIMIT);
}

int rnic_net_reply_ipv6(struct rnic_worker *w, struct rnic_port *p, struct rte_mbuf *m,
			const uint8_t src[16], const uint8_t dst[16], uint8_t proto,
			const struct rte_ether_addr *l2_dst)
{
	if (ip6_server(p) != p || !rte_is_unicast_ether_addr(l2_dst))
		return rnic_net_output_ipv6(w, p, m, src, dst, proto, 0);
	struct rte_ether_hdr *eh = ipv6_prepend(p, m, src, dst, proto, 0, 0, RNIC_IP6_HOP_LIMIT);
	if (eh == NULL) {
		rnic_worker_drop(w, RNIC_DROP_NO_MBUF, m);
		return -ENOBUFS;
	}
	eh->dst_addr = *l2_dst;
	rnic_worker_tx(w, p, m);
	return 0;
}
