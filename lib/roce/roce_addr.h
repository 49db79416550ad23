/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * RoCEv2 addressing: the path between two GIDs (the GID table itself is
 * rdma/gid.h), the IP header of a received packet, and sending a RoCEv2
 * datagram to an address of either family.
 */
#ifndef RNIC_ROCE_ROCE_ADDR_H
#define RNIC_ROCE_ROCE_ADDR_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_mbuf.h>

#include "rdma/gid.h"
#include "rnic/rnic.h"

struct rnic_port;
struct rnic_worker;
struct rnic_arp_hint;

/*
 * The source address of a path from GID @p sgid_index of @p p to @p dgid:
 * both of one family, the source usable (index as rdma/gid.h numbers them) (IPv6: the port has it and it is
 * not a duplicate; a link-local destination needs the link-local source
 * and the reverse). @return 0 with *src, *dst, or -EINVAL.
 */
int rnic_roce_path(const struct rnic_port *p, int sgid_index, const uint8_t dgid[16],
		   struct rnic_addr *src, struct rnic_addr *dst);

/* The IP header of a received RoCEv2 packet (at m->l2_len). */
struct roce_l3 {
	struct rnic_addr src, dst;
	uint8_t tos;              /* IPv4 TOS or IPv6 traffic class (ECN in bits 1:0) */
	const uint8_t *hdr;       /* the IPv4 or IPv6 header */
};
void roce_l3_parse(const struct rte_mbuf *m, struct roce_l3 *l3);

/* The IPv6 flow label of a connection between two QPs (20 bits, never 0):
 * the mix Linux's rdma_calc_flow_label() makes of the two QP numbers, so a
 * flow keeps one label and ECMP on the label spreads QPs. */
uint32_t rnic_roce_flow_label(uint32_t lqpn, uint32_t rqpn);

/*
 * Send the RoCEv2 packet in @p m (BTH to ICRC) in UDP to port 4791 of
 * @p dst from @p src (IPv4: 0 = the port's address), UDP checksum 0 as
 * rxe sends it, @p tos the IPv4 TOS / IPv6 traffic class, @p flow the IPv6
 * flow label; @p fin computes the ICRC once the IP header is final.
 * Consumes @p m. @return as rnic_net_output_ipv4() / _ipv6().
 */
int rnic_roce_output(struct rnic_worker *w, struct rnic_port *p, struct rte_mbuf *m,
		     const struct rnic_addr *src, const struct rnic_addr *dst, uint16_t sport,
		     uint8_t tos, uint32_t flow, void (*fin)(struct rte_mbuf *),
		     struct rnic_arp_hint *hint);
/* rnic_roce_output() with the address vector's hop limit @p hops: the
 * IPv6 hop limit or the IPv4 TTL (0: the default, 64). */
int rnic_roce_output_hops(struct rnic_worker *w, struct rnic_port *p, struct rte_mbuf *m,
			  const struct rnic_addr *src, const struct rnic_addr *dst,
			  uint16_t sport, uint8_t tos, uint32_t flow, uint8_t hops,
			  void (*fin)(struct rte_mbuf *), struct rnic_arp_hint *hint);

#endif
