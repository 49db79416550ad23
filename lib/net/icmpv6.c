/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ICMPv6 (RFC 4443): echo requests to our addresses (unicast or all-nodes)
 * answered from the receiving worker, echo replies fed to rnic_ping(),
 * neighbour discovery handed to nd.c, packet too big counted; every other
 * message counted and dropped (router discovery and redirects are for
 * hosts that route beyond the link, which rnic does not).
 */
#include <netinet/icmp6.h>
#include <netinet/in.h>

#include <rte_ip.h>

#include "engine/stack.h"
#include "net/ipv6.h"
#include "net/nd.h"
#include "net/net.h"
#include "net/net_internal.h"
#include "port/port.h"

struct icmp6_echo {
	uint8_t type, code;
	rte_be16_t cksum;
	rte_be16_t ident, seq;
} __attribute__((packed));

/* Turn an echo request around: type 129, same identifier, sequence and
 * data, from the address asked (our source for the group when it went to
 * all-nodes), straight back to the frame's Ethernet source: a ping makes no
 * neighbour entry (issue 27: spoofed pings cannot flush the cache). */
static void icmp6_echo_reply(struct rnic_worker *w, struct rnic_port *p, struct rte_mbuf *m,
			     uint32_t off, uint32_t len)
{
	const struct rte_ipv6_hdr *ip = rte_pktmbuf_mtod_offset(m, const struct rte_ipv6_hdr *,
							        m->l2_len);
	uint8_t src[16], dst[16];

	memcpy(dst, ip->src_addr, 16);
	if (!rnic_ip6_is_multicast(ip->dst_addr))
		memcpy(src, ip->dst_addr, 16);
	else if (rnic_port_ip6_src(p, dst, src) != 0) {
		rnic_worker_drop(w, RNIC_DROP_ICMP6_TYPE, m);
		return;
	}
	struct rte_ether_addr l2 = rte_pktmbuf_mtod(m, struct rte_ether_hdr *)->src_addr;
	struct icmp6_echo *e = rte_pktmbuf_mtod_offset(m, struct icmp6_echo *, off);
	e->type = ICMP6_ECHO_REPLY;
	e->cksum = 0;
	e->cksum = (uint16_t)~rnic_net_l4_cksum6(m, off, src, dst, IPPROTO_ICMPV6, len);
	rte_pktmbuf_adj(m, (uint16_t)off);
	if (rnic_net_reply_ipv6(w, p, m, src, dst, IPPROTO_ICMPV6, &l2) == 0)
		w->stats.icmp_echo_replies++;
}

/*
 * Packet too big (RFC 8201): the path to the quoted destination carries at
 * most the given MTU. Counted; a quoted datagram of ours whose transport
 * takes it (TCP: the MSS) goes to that transport on the worker owning the
 * flow (the message is steered there first, as a segment would be).
 */
static void icmp6_ptb(struct rnic_worker *w, struct rnic_port *p, struct rte_mbuf *m,
		      uint32_t off, uint32_t len)
{
	/* type, code, checksum, MTU; the quoted IPv6 header; 8 bytes of the
	 * transport header (ports and TCP's sequence number) */
	const uint32_t need = 8 + sizeof(struct rte_ipv6_hdr) + 8;
	if (len < need || rte_pktmbuf_data_len(m) < off + need) {
		rnic_worker_drop(w, RNIC_DROP_ICMP6_SHORT, m);
		return;
	}
	const uint8_t *b = rte_pktmbuf_mtod_offset(m, const uint8_t *, off);
	const struct rte_ipv6_hdr *q = (const struct rte_ipv6_hdr *)(b + 8);
	uint32_t mtu = (uint32_t)b[4] << 24 | (uint32_t)b[5] << 16 | (uint32_t)b[6] << 8 | b[7];
	const uint8_t *l4 = (const uint8_t *)(q + 1);
	const struct rnic_l4_handler *h = &w->st->ip_proto[q->proto];
	if (b[1] != 0 || (rte_be_to_cpu_32(q->vtc_flow) >> 28) != 6 ||
	    !rnic_port_has_ip6(p, q->src_addr) || h->pmtu6 == NULL) {
		rnic_worker_drop(w, RNIC_DROP_ICMP6_TYPE, m);
		return;
	}
	rte_be16_t sport, dport;
	memcpy(&sport, l4, 2);
	memcpy(&dport, l4 + 2, 2);
	unsigned owner = rnic_flow_owner6(w->st, q->dst_addr, q->src_addr, dport, sport);
	if (owner != w->id) {
		m->port = (uint16_t)p->idx;
		rnic_worker_redirect(w, owner, m);   /* resumes in rnic_ipv6_input_l4 */
		return;
	}
	__atomic_fetch_add(&p->nd->ptb_in, 1, __ATOMIC_RELAXED);
	h->pmtu6(w, q->src_addr, q->dst_addr, l4, mtu);
	rte_pktmbuf_free(m);
}

void rnic_icmp6_input(struct rnic_worker *w, struct rnic_port *p, struct rte_mbuf *m)
{
	uint32_t off = m->l2_len + m->l3_len;
	uint32_t len = rte_pktmbuf_pkt_len(m) - off;
	const struct rte_ipv6_hdr *ip = rte_pktmbuf_mtod_offset(m, const struct rte_ipv6_hdr *,
							        m->l2_len);

	if (len < sizeof(struct icmp6_echo) ||
	    rte_pktmbuf_data_len(m) < off + sizeof(struct icmp6_echo)) {
		rnic_worker_drop(w, RNIC_DROP_ICMP6_SHORT, m);
		return;
	}
	if (rnic_net_l4_cksum6(m, off, ip->src_addr, ip->dst_addr, IPPROTO_ICMPV6, len) !=
	    0xffff) {
		rnic_worker_drop(w, RNIC_DROP_ICMP6_CHECKSUM, m);
		return;
	}
	const struct icmp6_echo *e = rte_pktmbuf_mtod_offset(m, const struct icmp6_echo *, off);
	switch (e->type) {
	case ND_NEIGHBOR_SOLICIT:
	case ND_NEIGHBOR_ADVERT:
		rnic_nd_input(w, p, m, e->type);
		return;
	case ICMP6_ECHO_REQUEST:
		if (e->code == 0 && !rnic_ip6_is_unspecified(ip->src_addr)) {
			icmp6_echo_reply(w, p, m, off, len);
			return;
		}
		break;
	case ICMP6_ECHO_REPLY:
		if (e->code == 0) {
			rnic_ping_reply_in(w->st, rte_be_to_cpu_16(e->ident),
					   rte_be_to_cpu_16(e->seq));
			rte_pktmbuf_free(m);
			return;
		}
		break;
	case ICMP6_PACKET_TOO_BIG:
		icmp6_ptb(w, p, m, off, len);
		return;
	default:
		break;
	}
	rnic_worker_drop(w, RNIC_DROP_ICMP6_TYPE, m);
}
