/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ICMP (RFC 792): echo requests to our address are answered from the
 * receiving worker by turning the frame around; echo replies feed
 * rnic_ping(); every other type is counted and dropped (rnic sends no ICMP
 * errors and acts on none: RDMA transports have their own error paths).
 */
#include <rte_icmp.h>
#include <rte_ip.h>

#include "engine/stack.h"
#include "net/net.h"
#include "net/net_internal.h"
#include "port/port.h"

/* One's-complement sum of the whole ICMP message (chains and odd lengths
 * included), folded, not inverted. */
static uint16_t icmp_sum(const struct rte_mbuf *m, uint32_t off, uint32_t len)
{
	uint16_t sum = 0;
	if (rnic_net_cksum_mbuf(m, off, len, &sum) != 0)
		return 0;  /* cannot happen: off + len <= pkt_len */
	return sum;
}

/* Answer an echo request: same identifier, sequence and data, type 0,
 * straight back to the frame's Ethernet source (the peer, or the router it
 * came through): a ping makes no ARP entry, so pings from spoofed senders
 * cannot push resolved neighbours out of the cache (issue 27). */
static void icmp_echo_reply(struct rnic_worker *w, struct rnic_port *p,
			    struct rte_mbuf *m, struct rte_icmp_hdr *ic,
			    uint32_t off, uint32_t len, uint32_t peer,
			    uint32_t local)
{
	struct rte_ether_addr l2 = rte_pktmbuf_mtod(m, struct rte_ether_hdr *)->src_addr;
	ic->icmp_type = RTE_IP_ICMP_ECHO_REPLY;
	ic->icmp_cksum = 0;
	ic->icmp_cksum = (uint16_t)~icmp_sum(m, off, len);
	rte_pktmbuf_adj(m, (uint16_t)off);
	if (rnic_net_reply_ipv4(w, p, m, local, peer, IPPROTO_ICMP, &l2) == 0)
		w->stats.icmp_echo_replies++;
}

void rnic_icmp_input(struct rnic_worker *w, struct rnic_port *p,
		     struct rte_mbuf *m)
{
	uint32_t off = m->l2_len + m->l3_len;
	uint32_t len = rte_pktmbuf_pkt_len(m) - off;

	if (len < sizeof(struct rte_icmp_hdr) ||
	    rte_pktmbuf_data_len(m) < off + sizeof(struct rte_icmp_hdr)) {
		rnic_worker_drop(w, RNIC_DROP_ICMP_SHORT, m);
		return;
	}
	if (icmp_sum(m, off, len) != 0xffff) {
		rnic_worker_drop(w, RNIC_DROP_ICMP_CHECKSUM, m);
		return;
	}
	const struct rte_ipv4_hdr *ip =
		rte_pktmbuf_mtod_offset(m, const struct rte_ipv4_hdr *, m->l2_len);
	struct rte_icmp_hdr *ic = rte_pktmbuf_mtod_offset(m, struct rte_icmp_hdr *,
							  off);
	if (ic->icmp_type == RTE_IP_ICMP_ECHO_REPLY && ic->icmp_code == 0) {
		rnic_ping_reply_in(w->st, rte_be_to_cpu_16(ic->icmp_ident),
				   rte_be_to_cpu_16(ic->icmp_seq_nb));
		rte_pktmbuf_free(m);
		return;
	}
	/* echo to a broadcast address is not answered (RFC 1122 3.2.2.6
	 * allows silence, and it keeps rnic out of smurf amplification) */
	if (ic->icmp_type != RTE_IP_ICMP_ECHO_REQUEST || ic->icmp_code != 0 ||
	    !rnic_port_has_ip(p, rte_be_to_cpu_32(ip->dst_addr))) {
		rnic_worker_drop(w, RNIC_DROP_ICMP_TYPE, m);
		return;
	}
	/* answer from the address asked (a taken-over one after failover) */
	icmp_echo_reply(w, p, m, ic, off, len, rte_be_to_cpu_32(ip->src_addr),
			rte_be_to_cpu_32(ip->dst_addr));
}
