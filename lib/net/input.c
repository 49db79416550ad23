/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Receive path: Ethernet -> ARP | IPv4 -> ICMP echo | UDP by port | other
 * protocols by number, with the owning worker's check before L4. Every
 * malformed frame is dropped with its cause.
 */
#include <string.h>

#include <rte_ether.h>
#include <rte_icmp.h>
#include <rte_ip.h>
#include <rte_udp.h>

#include "engine/stack.h"
#include "net/arp.h"
#include "net/net.h"
#include "port/port.h"

/* Is @p ip (host order) one of our IPv4 destinations on @p p? */
static bool ip_for_us(const struct rnic_port *p, uint32_t ip)
{
	return ip == p->ip || ip == UINT32_MAX ||
	       (p->netmask != UINT32_MAX && ip == (p->ip | ~p->netmask));
}

static bool ip_bad_source(const struct rnic_port *p, uint32_t ip)
{
	return ip == 0 || ip == UINT32_MAX || (ip >> 28) == 0xe ||
	       (p->netmask != UINT32_MAX && ip == (p->ip | ~p->netmask)) ||
	       (ip >> 24) == 127;
}

/* ICMP: answer echo requests in place. */
static void icmp_input(struct rnic_worker *w, struct rnic_port *p,
		       struct rte_mbuf *m)
{
	struct rte_ipv4_hdr *ip = rte_pktmbuf_mtod_offset(m, struct rte_ipv4_hdr *,
							  m->l2_len);
	uint32_t len = rte_pktmbuf_pkt_len(m) - m->l2_len - m->l3_len;

	if (len < sizeof(struct rte_icmp_hdr) ||
	    rte_pktmbuf_data_len(m) != rte_pktmbuf_pkt_len(m)) {
		rnic_worker_drop(w, RNIC_DROP_ICMP_SHORT, m);
		return;
	}
	struct rte_icmp_hdr *ic = rte_pktmbuf_mtod_offset(m, struct rte_icmp_hdr *,
							  m->l2_len + m->l3_len);
	if (rte_raw_cksum(ic, len) != 0xffff) {
		rnic_worker_drop(w, RNIC_DROP_ICMP_CHECKSUM, m);
		return;
	}
	if (ic->icmp_type == RTE_IP_ICMP_ECHO_REPLY && ic->icmp_code == 0) {
		rnic_ping_reply_in(w->st, rte_be_to_cpu_16(ic->icmp_ident),
				   rte_be_to_cpu_16(ic->icmp_seq_nb));
		rte_pktmbuf_free(m);
		return;
	}
	if (ic->icmp_type != RTE_IP_ICMP_ECHO_REQUEST || ic->icmp_code != 0 ||
	    rte_be_to_cpu_32(ip->dst_addr) != p->ip) {
		rnic_worker_drop(w, RNIC_DROP_ICMP_TYPE, m);
		return;
	}
	uint32_t peer = rte_be_to_cpu_32(ip->src_addr);
	ic->icmp_type = RTE_IP_ICMP_ECHO_REPLY;
	ic->icmp_cksum = 0;
	ic->icmp_cksum = ~rte_raw_cksum(ic, len);
	rte_pktmbuf_adj(m, m->l2_len + m->l3_len);
	w->stats.icmp_echo_replies++;
	rnic_net_output_ipv4(w, p, m, peer, IPPROTO_ICMP);
}

/* The handler for the frame's L4 protocol, or NULL (counted). */
static const struct rnic_l4_handler *l4_handler(struct rnic_worker *w,
						struct rte_mbuf *m, uint8_t proto)
{
	struct rnic_stack *st = w->st;

	if (proto != IPPROTO_UDP)
		return st->ip_proto[proto].input ? &st->ip_proto[proto] : NULL;
	struct rte_udp_hdr *uh = rte_pktmbuf_mtod_offset(m, struct rte_udp_hdr *,
							 m->l2_len + m->l3_len);
	uint16_t port = rte_be_to_cpu_16(uh->dst_port);
	for (unsigned i = 0; i < RNIC_MAX_UDP_HANDLERS; i++)
		if (st->udp[i].port == port)
			return &st->udp[i].h;
	return NULL;
}

/* UDP length and checksum checks; false = dropped. */
static bool udp_valid(struct rnic_worker *w, struct rte_mbuf *m)
{
	uint32_t avail = rte_pktmbuf_pkt_len(m) - m->l2_len - m->l3_len;
	if (avail < sizeof(struct rte_udp_hdr) ||
	    rte_pktmbuf_data_len(m) < m->l2_len + m->l3_len + sizeof(struct rte_udp_hdr)) {
		rnic_worker_drop(w, RNIC_DROP_UDP_SHORT, m);
		return false;
	}
	struct rte_ipv4_hdr *ip = rte_pktmbuf_mtod_offset(m, struct rte_ipv4_hdr *,
							  m->l2_len);
	struct rte_udp_hdr *uh = (struct rte_udp_hdr *)((uint8_t *)ip + m->l3_len);
	uint16_t ulen = rte_be_to_cpu_16(uh->dgram_len);
	if (ulen < sizeof(*uh) || ulen > avail) {
		rnic_worker_drop(w, RNIC_DROP_UDP_LEN, m);
		return false;
	}
	if (uh->dgram_cksum != 0 &&
	    (m->ol_flags & RTE_MBUF_F_RX_L4_CKSUM_MASK) != RTE_MBUF_F_RX_L4_CKSUM_GOOD &&
	    rte_ipv4_udptcp_cksum_mbuf_verify(m, ip, m->l2_len + m->l3_len) != 0) {
		rnic_worker_drop(w, RNIC_DROP_UDP_CHECKSUM, m);
		return false;
	}
	return true;
}

void rnic_net_input_l4(struct rnic_worker *w, struct rnic_port *p,
		       struct rte_mbuf *m)
{
	struct rte_ipv4_hdr *ip = rte_pktmbuf_mtod_offset(m, struct rte_ipv4_hdr *,
							  m->l2_len);
	const struct rnic_l4_handler *h = l4_handler(w, m, ip->next_proto_id);
	if (h == NULL) {
		rnic_worker_drop(w, ip->next_proto_id == IPPROTO_UDP ?
				 RNIC_DROP_UDP_NO_LISTENER : RNIC_DROP_IP_PROTO, m);
		return;
	}
	h->input(w, p, m);
}

static void ipv4_input(struct rnic_worker *w, struct rnic_port *p,
		       struct rte_mbuf *m)
{
	const uint32_t l2 = sizeof(struct rte_ether_hdr);
	uint32_t avail = rte_pktmbuf_pkt_len(m) - l2;

	if (avail < sizeof(struct rte_ipv4_hdr) ||
	    rte_pktmbuf_data_len(m) < l2 + sizeof(struct rte_ipv4_hdr)) {
		rnic_worker_drop(w, RNIC_DROP_IP_SHORT, m);
		return;
	}
	struct rte_ipv4_hdr *ip = rte_pktmbuf_mtod_offset(m, struct rte_ipv4_hdr *, l2);
	if ((ip->version_ihl >> 4) != 4) {
		rnic_worker_drop(w, RNIC_DROP_IP_VERSION, m);
		return;
	}
	uint32_t ihl = (ip->version_ihl & 0xf) * 4u;
	if (ihl < sizeof(*ip) || ihl > avail || l2 + ihl > rte_pktmbuf_data_len(m)) {
		rnic_worker_drop(w, RNIC_DROP_IP_HDR_LEN, m);
		return;
	}
	uint32_t tot = rte_be_to_cpu_16(ip->total_length);
	if (tot < ihl || tot > avail) {
		rnic_worker_drop(w, RNIC_DROP_IP_TOTAL_LEN, m);
		return;
	}
	if ((m->ol_flags & RTE_MBUF_F_RX_IP_CKSUM_MASK) != RTE_MBUF_F_RX_IP_CKSUM_GOOD &&
	    rte_raw_cksum(ip, ihl) != 0xffff) {
		rnic_worker_drop(w, RNIC_DROP_IP_CHECKSUM, m);
		return;
	}
	/* MF set or a non-zero offset: a fragment (no reassembly, by design) */
	if (ip->fragment_offset & rte_cpu_to_be_16(RTE_IPV4_HDR_MF_FLAG |
						   RTE_IPV4_HDR_OFFSET_MASK)) {
		rnic_worker_drop(w, RNIC_DROP_IP_FRAGMENT, m);
		return;
	}
	if (ip->time_to_live == 0) {
		rnic_worker_drop(w, RNIC_DROP_IP_TTL, m);
		return;
	}
	uint32_t src = rte_be_to_cpu_32(ip->src_addr);
	uint32_t dst = rte_be_to_cpu_32(ip->dst_addr);
	if (ip_bad_source(p, src)) {
		rnic_worker_drop(w, RNIC_DROP_IP_BAD_SRC, m);
		return;
	}
	if (!ip_for_us(p, dst)) {
		rnic_worker_drop(w, RNIC_DROP_IP_NOT_FOR_US, m);
		return;
	}
	/* drop Ethernet padding: L4 lengths come from the IP header */
	if (avail > tot)
		rte_pktmbuf_trim(m, avail - tot);
	m->l2_len = l2;
	m->l3_len = ihl;
	if (ip->next_proto_id == IPPROTO_ICMP) {
		icmp_input(w, p, m);
		return;
	}
	if (ip->next_proto_id == IPPROTO_UDP && !udp_valid(w, m))
		return;
	const struct rnic_l4_handler *h = l4_handler(w, m, ip->next_proto_id);
	if (h == NULL) {
		rnic_worker_drop(w, ip->next_proto_id == IPPROTO_UDP ?
				 RNIC_DROP_UDP_NO_LISTENER : RNIC_DROP_IP_PROTO, m);
		return;
	}
	if (h->owner != NULL) {
		unsigned owner = h->owner(w->st, p, m);
		if (owner != UINT32_MAX && owner != w->id) {
			m->port = (uint16_t)p->idx;  /* the owner finds the port */
			rnic_worker_redirect(w, owner, m);
			return;
		}
	}
	h->input(w, p, m);
}

void rnic_net_input(struct rnic_worker *w, struct rnic_port *p,
		    struct rte_mbuf *m)
{
	if (rte_pktmbuf_data_len(m) < sizeof(struct rte_ether_hdr)) {
		rnic_worker_drop(w, RNIC_DROP_ETH_SHORT, m);
		return;
	}
	struct rte_ether_hdr *eh = rte_pktmbuf_mtod(m, struct rte_ether_hdr *);
	if (!rte_is_same_ether_addr(&eh->dst_addr, &p->mac) &&
	    !rte_is_broadcast_ether_addr(&eh->dst_addr)) {
		rnic_worker_drop(w, RNIC_DROP_ETH_NOT_FOR_US, m);
		return;
	}
	switch (eh->ether_type) {
	case RTE_BE16(RTE_ETHER_TYPE_IPV4):
		ipv4_input(w, p, m);
		return;
	case RTE_BE16(RTE_ETHER_TYPE_ARP):
		rnic_arp_input(w, p, m);
		return;
	default:
		rnic_worker_drop(w, RNIC_DROP_ETH_TYPE, m);
	}
}
