/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * IPv6 (RFC 8200) beside IPv4: a port's IPv6 addresses, source selection,
 * the on-link route, the output path (header build, next hop resolved by
 * neighbour discovery, nd.c) and the pseudo-header sum transports need.
 * Addresses are 16 bytes in network order, as on the wire.
 *
 * Routing is on-link only: a destination is reachable when it is
 * link-local or inside the prefix of one of a port's addresses. rnic does
 * no router discovery and takes no IPv6 default gateway.
 */
#ifndef RNIC_NET_IPV6_H
#define RNIC_NET_IPV6_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <rte_ether.h>
#include <rte_mbuf.h>

struct rnic_worker;
struct rnic_port;
struct rnic_stack;

#define RNIC_IP6_HOP_LIMIT 64    /* of the datagrams rnic sends (ND: 255) */
#define RNIC_IP6_FLOW_MASK 0x000fffffu   /* the 20-bit flow label */

/* enum rnic_ip6_state: port/port.h (the port holds the states) */

static inline bool rnic_ip6_is_multicast(const uint8_t a[16])
{
	return a[0] == 0xff;
}

/* rnic_ip6_is_link_local and rnic_ip6_prefix_equal: port/port.h */

static inline bool rnic_ip6_is_unspecified(const uint8_t a[16])
{
	static const uint8_t zero[16];
	return memcmp(a, zero, 16) == 0;
}

/* ::ffff:a.b.c.d, the form IPv4 addresses take in 16-byte fields (the TCP
 * four-tuple). */
static inline bool rnic_ip6_is_v4mapped(const uint8_t a[16])
{
	static const uint8_t pfx[12] = { [10] = 0xff, [11] = 0xff };
	return memcmp(a, pfx, 12) == 0;
}

static inline void rnic_ip6_v4mapped(uint32_t ip_be, uint8_t out[16])
{
	memset(out, 0, 10);
	out[10] = out[11] = 0xff;
	memcpy(out + 12, &ip_be, 4);
}

/* The solicited-node multicast group of @p a: ff02::1:ffXX:XXXX. */
void rnic_ip6_solicited_node(const uint8_t a[16], uint8_t out[16]);

/* The Ethernet group of IPv6 multicast address @p a: 33:33 + its last 4
 * bytes (RFC 2464 section 7). */
void rnic_ip6_mcast_mac(const uint8_t a[16], struct rte_ether_addr *mac);

/* Is the frame at m->l2_len an IPv6 one (version nibble 6)? */
static inline bool rnic_mbuf_is_ipv6(const struct rte_mbuf *m)
{
	return (*rte_pktmbuf_mtod_offset(m, const uint8_t *, m->l2_len) >> 4) == 6;
}

/* Is @p a (unicast) one of the addresses @p p answers for: its own (not
 * found duplicate) or one of a port whose address it took over (failover).
 * Lock-free. */
bool rnic_port_has_ip6(const struct rnic_port *p, const uint8_t a[16]);

/* Is @p a on @p p's link: link-local, or inside one of its prefixes? */
bool rnic_port_on_link6(const struct rnic_port *p, const uint8_t a[16]);

/* The source address for a datagram from @p p to @p dst (RFC 6724, the
 * rules that matter here: same scope, then the longest matching prefix).
 * @return 0, or -EADDRNOTAVAIL (no usable address). */
int rnic_port_ip6_src(const struct rnic_port *p, const uint8_t dst[16], uint8_t src[16]);

/* The port that reaches @p dst: on-link on a port that is up first. NULL
 * when none (no IPv6 routes beyond the link). Link-local destinations
 * leave by the first port with IPv6. */
struct rnic_port *rnic_net_route6(struct rnic_stack *st, const uint8_t dst[16]);

/*
 * Send an IPv6 datagram: @p m holds the upper-layer header and payload from
 * its data start, with headroom for IPv6 and Ethernet. @p p NULL: route.
 * @p src NULL: the port's source for @p dst. Hop limit 64 (255 for
 * neighbour discovery is nd.c's own), traffic class @p tclass, flow label
 * 0. The next hop is resolved by neighbour discovery (the frame is held
 * until then, bounded). Transport checksums are the caller's. A port whose
 * address was taken over sends through the port serving it. Consumes @p m.
 * @return 0, -EHOSTUNREACH, -EADDRNOTAVAIL, -ENOBUFS (no headroom or above
 * the MTU).
 */
int rnic_net_output_ipv6(struct rnic_worker *w, struct rnic_port *p, struct rte_mbuf *m,
			 const uint8_t *src, const uint8_t dst[16], uint8_t proto,
			 uint8_t tclass);

/* rnic_net_output_ipv6() with flow label @p flow (low 20 bits) and a
 * finishing step called once the IPv6 header is final, before the frame is
 * queued or held for neighbour discovery (RoCEv2's ICRC; NULL: none). */
#ifndef RNIC_NET_FIN_FN
#define RNIC_NET_FIN_FN
typedef void (*rnic_net_fin_fn)(struct rte_mbuf *m);
#endif
int rnic_net_output_ipv6_fin(struct rnic_worker *w, struct rnic_port *p, struct rte_mbuf *m,
			     const uint8_t *src, const uint8_t dst[16], uint8_t proto,
			     uint8_t tclass, uint32_t flow, rnic_net_fin_fn fin);

/*
 * Send a UDP datagram over IPv6: @p m holds the payload from its data
 * start. Prepends the UDP header; @p csum computes the checksum (RFC 8200
 * 8.1 wants one; RoCEv2 sends 0 as rxe does, RFC 6935/6936's exception for
 * tunnel protocols, its ICRC protecting the payload). @p src NULL: the
 * port's source for @p dst. Consumes @p m. @return as rnic_net_output_ipv6().
 */
int rnic_net_output_udp6(struct rnic_worker *w, struct rnic_port *p, struct rte_mbuf *m,
			 const uint8_t *src, const uint8_t dst[16], uint16_t sport,
			 uint16_t dport, bool csum, uint8_t tclass, uint32_t flow,
			 rnic_net_fin_fn fin);

/* rnic_net_output_ipv6() straight to Ethernet address @p l2_dst, with no
 * neighbour lookup (the stateless SYN-stage replies, as
 * rnic_net_reply_ipv4()). @p src: our address the peer used. */
int rnic_net_reply_ipv6(struct rnic_worker *w, struct rnic_port *p, struct rte_mbuf *m,
			const uint8_t src[16], const uint8_t dst[16], uint8_t proto,
			const struct rte_ether_addr *l2_dst);

/* The IPv6 pseudo header's address words (RFC 8200 section 8.1), summed
 * in native order and folded to 16 bits: add the length and next header
 * to it. */
uint16_t rnic_ip6_addr_sum(const uint8_t src[16], const uint8_t dst[16]);

/* Folded, not inverted, sum of @p len bytes at @p off plus the IPv6 pseudo
 * header; 0xffff over a message carrying its checksum means valid. */
uint16_t rnic_net_l4_cksum6(const struct rte_mbuf *m, uint32_t off, const uint8_t src[16],
			    const uint8_t dst[16], uint8_t proto, uint32_t len);

/* Neighbour discovery counters summed over the stack's ports. */
struct rnic_nd_stats {
	uint64_t ns_in, na_in, ns_out, na_out, unsolicited_na_out, dad_ns_out,
		 dad_conflicts, entries, timeouts, probes_out, ptb_in;
	uint64_t create_refused;   /* senders not cached (neigh.h's policy) */
};
void rnic_nd_stats(const struct rnic_stack *st, struct rnic_nd_stats *s);

#endif
