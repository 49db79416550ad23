/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Calls between the files of lib/net (not for other modules):
 * eth.c -> ipv4.c | arp.c, ipv4.c -> icmp.c | udp.c | handlers.
 * On entry to an L4 function m->l2_len and m->l3_len are set and the frame
 * is trimmed to the IPv4 total length.
 */
#ifndef RNIC_NET_INTERNAL_H
#define RNIC_NET_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_ether.h>
#include <rte_mbuf.h>

struct rnic_worker;
struct rnic_port;
struct rnic_stack;
struct rnic_l4_handler;

/** Validate an IPv4 frame (Ethernet header at data start) and deliver it. */
/* Room for Ethernet and an IP header of @p l3_hdr bytes in front of the
 * @p payload upper-layer bytes of @p m, within @p p's MTU (output.c).
 * @return the Ethernet header (to be filled), or NULL (no headroom, or
 * above the MTU). */
struct rte_ether_hdr *rnic_net_prepend_l2l3(const struct rnic_port *p, struct rte_mbuf *m,
					    uint32_t payload, uint32_t l3_hdr);

void rnic_ipv4_input(struct rnic_worker *w, struct rnic_port *p,
		     struct rte_mbuf *m);

/** ICMP: answer echo requests, note echo replies, drop the rest. */
void rnic_icmp_input(struct rnic_worker *w, struct rnic_port *p,
		     struct rte_mbuf *m);

/** UDP header, length and checksum checks. @return 0, or -EINVAL when the
 *  frame was dropped (counted). */
int rnic_udp_check(struct rnic_worker *w, struct rte_mbuf *m);

/** The handler bound to the frame's UDP destination port, or NULL. The
 *  frame must have passed rnic_udp_check(). */
const struct rnic_l4_handler *rnic_udp_lookup(const struct rnic_stack *st,
					      const struct rte_mbuf *m);

/* IPv6 (ipv6.c): validate a frame (Ethernet header at data start), walk
 * its extension headers, deliver it; a redirected frame resumes at its
 * transport. */
void rnic_ipv6_input(struct rnic_worker *w, struct rnic_port *p, struct rte_mbuf *m);
void rnic_ipv6_input_l4(struct rnic_worker *w, struct rnic_port *p, struct rte_mbuf *m);

/* The extension headers after the IPv6 header at @p l2: @return 0 with the
 * transport protocol and the whole IPv6 header length, or a drop cause. */
int rnic_ip6_walk(const struct rte_mbuf *m, uint32_t l2, uint8_t *proto, uint32_t *l3);

/* Did the datagram at m->l2_len (walked already) come in a fragment header,
 * an atomic one included (neighbour discovery refuses those, RFC 6980)? */
bool rnic_ip6_in_fragment(const struct rte_mbuf *m);

/* rnic_net_output_ipv6() with hop limit @p hops (neighbour discovery: 255). */
int rnic_ipv6_output_hops(struct rnic_worker *w, struct rnic_port *p, struct rte_mbuf *m,
			  const uint8_t *src, const uint8_t dst[16], uint8_t proto,
			  uint8_t tclass, uint8_t hops);

/* Prepend Ethernet and IPv6 and queue, to @p l2_dst (NULL: the group of
 * multicast @p dst), with no neighbour lookup (nd.c's own messages). */
int rnic_ipv6_xmit(struct rnic_worker *w, struct rnic_port *p, struct rte_mbuf *m,
		   const uint8_t src[16], const uint8_t dst[16], uint8_t proto, uint8_t hops,
		   const struct rte_ether_addr *l2_dst);

/* Prepend Ethernet (source and type filled) and IPv6 to the upper-layer
 * bytes of @p m, traffic class and flow label 0. @return the Ethernet
 * header, or NULL (no headroom, or above the MTU). */
struct rte_ether_hdr *rnic_ipv6_prepend(struct rnic_port *p, struct rte_mbuf *m,
					const uint8_t src[16], const uint8_t dst[16],
					uint8_t proto, uint8_t hops);

/* ICMPv6 (icmpv6.c): echo, neighbour discovery, packet too big. */
void rnic_icmp6_input(struct rnic_worker *w, struct rnic_port *p, struct rte_mbuf *m);

#endif
