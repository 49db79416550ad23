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

#include <rte_mbuf.h>

struct rnic_worker;
struct rnic_port;
struct rnic_stack;
struct rnic_l4_handler;

/** Validate an IPv4 frame (Ethernet header at data start) and deliver it. */
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

#endif
