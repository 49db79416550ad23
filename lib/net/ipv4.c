/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * IPv4 receive (RFC 791, RFC 1122 3.2.1): header validation in wire order,
 * each failure dropped with its own cause, then the L4 demux with the
 * owning worker's check: ICMP here, UDP by port, other protocols by number.
 * No reassembly: RDMA transports never send fragments (DF is set), so a
 * fragment is counted and dropped.
 */
#include <rte_ether.h>
#include <rte_ip.h>

#include "engine/stack.h"
#include "net/ipv6.h"
#include "net/net.h"
#include "net/net_internal.h"
#include "port/port.h"

/* The subnet's directed broadcast address, or 0 for a /32 or /31. */
static uint32_t ipv4_subnet_bcast(const struct rnic_port *p)
{
	return p->netmask >= 0xfffffffeu ? 0 : (p->ip | ~p->netmask);
}

/* Is @p ip (host order) one of our IPv4 destinations on @p p? Its own
 * address, one it took over from a failed port, or a broadcast. */
static bool ipv4_for_us(const struct rnic_port *p, uint32_t ip)
{
	return rnic_port_has_ip(p, ip) || ip == UINT32_MAX ||
	       (ip != 0 && ip == ipv4_subnet_bcast(p));
}

/*
 * Sources no host may use (RFC 1122 3.2.1.3): unspecified, limited or
 * directed broadcast, multicast, loopback, and our own addresses (a looped
 * or spoofed frame).
 */
static bool ipv4_bad_source(const struct rnic_port *p, uint32_t ip)
{
	return ip == 0 || ip == UINT32_MAX || (ip >> 28) == 0xe ||
	       (ip >> 24) == 127 || rnic_port_has_ip(p, ip) ||
	       ip == ipv4_subnet_bcast(p);
}

/*
 * Checks in the order a header is read. @return 0, or the drop cause.
 * On success *ihl is the header length in bytes.
 */
static int ipv4_check(const struct rnic_port *p, const struct rte_mbuf *m,
		      uint32_t *ihl_out)
{
	const uint32_t l2 = sizeof(struct rte_ether_hdr);
	uint32_t avail = rte_pktmbuf_pkt_len(m) - l2;

	/* the header must also sit in the first segment: we read it there */
	if (rte_pktmbuf_pkt_len(m) < l2 + sizeof(struct rte_ipv4_hdr) ||
	    rte_pktmbuf_data_len(m) < l2 + sizeof(struct rte_ipv4_hdr))
		return RNIC_DROP_IP_SHORT;
	const struct rte_ipv4_hdr *ip =
		rte_pktmbuf_mtod_offset(m, const struct rte_ipv4_hdr *, l2);
	if ((ip->version_ihl >> 4) != 4)
		return RNIC_DROP_IP_VERSION;
	uint32_t ihl = (ip->version_ihl & 0xf) * 4u;
	if (ihl < sizeof(*ip) || ihl > avail || l2 + ihl > rte_pktmbuf_data_len(m))
		return RNIC_DROP_IP_HDR_LEN;
	uint32_t tot = rte_be_to_cpu_16(ip->total_length);
	if (tot < ihl || tot > avail)
		return RNIC_DROP_IP_TOTAL_LEN;
	if ((m->ol_flags & RTE_MBUF_F_RX_IP_CKSUM_MASK) != RTE_MBUF_F_RX_IP_CKSUM_GOOD &&
	    rte_raw_cksum(ip, ihl) != 0xffff)
		return RNIC_DROP_IP_CHECKSUM;
	if (ip->fragment_offset & rte_cpu_to_be_16(RTE_IPV4_HDR_MF_FLAG |
						   RTE_IPV4_HDR_OFFSET_MASK))
		return RNIC_DROP_IP_FRAGMENT;
	if (ip->time_to_live == 0)
		return RNIC_DROP_IP_TTL;
	if (ipv4_bad_source(p, rte_be_to_cpu_32(ip->src_addr)))
		return RNIC_DROP_IP_BAD_SRC;
	if (!ipv4_for_us(p, rte_be_to_cpu_32(ip->dst_addr)))
		return RNIC_DROP_IP_NOT_FOR_US;
	*ihl_out = ihl;
	return 0;
}

/* The handler of a validated non-ICMP datagram, or NULL (frame dropped). */
static const struct rnic_l4_handler *ipv4_handler(struct rnic_worker *w,
						  struct rte_mbuf *m,
						  uint8_t proto)
{
	const struct rnic_stack *st = w->st;
	const struct rnic_l4_handler *h;

	if (proto == IPPROTO_UDP) {
		h = rnic_udp_lookup(st, m);
		if (h == NULL)
			rnic_worker_drop(w, RNIC_DROP_UDP_NO_LISTENER, m);
		return h;
	}
	h = &st->ip_proto[proto];
	if (h->input != NULL)
		return h;
	rnic_worker_drop(w, RNIC_DROP_IP_PROTO, m);
	return NULL;
}

static uint8_t ipv4_proto(const struct rte_mbuf *m)
{
	return rte_pktmbuf_mtod_offset(m, const struct rte_ipv4_hdr *,
				       m->l2_len)->next_proto_id;
}

void rnic_ipv4_input(struct rnic_worker *w, struct rnic_port *p,
		     struct rte_mbuf *m)
{
	uint32_t ihl = 0;
	int cause = ipv4_check(p, m, &ihl);
	if (cause != 0) {
		rnic_worker_drop(w, (enum rnic_drop_cause)cause, m);
		return;
	}
	const struct rte_ipv4_hdr *ip =
		rte_pktmbuf_mtod_offset(m, const struct rte_ipv4_hdr *,
					sizeof(struct rte_ether_hdr));
	uint32_t tot = rte_be_to_cpu_16(ip->total_length);
	uint32_t avail = rte_pktmbuf_pkt_len(m) - sizeof(struct rte_ether_hdr);
	/* Ethernet pads short frames: L4 lengths come from the IP header.
	 * Padding sits in the last segment; anything else is malformed. */
	if (avail > tot && (avail - tot > UINT16_MAX ||
			    rte_pktmbuf_trim(m, (uint16_t)(avail - tot)) != 0)) {
		rnic_worker_drop(w, RNIC_DROP_IP_TOTAL_LEN, m);
		return;
	}
	m->l2_len = sizeof(struct rte_ether_hdr);
	m->l3_len = ihl;

	uint8_t proto = ip->next_proto_id;
	if (proto == IPPROTO_ICMP) {
		rnic_icmp_input(w, p, m);
		return;
	}
	if (proto == IPPROTO_UDP && rnic_udp_check(w, m) != 0)
		return;
	const struct rnic_l4_handler *h = ipv4_handler(w, m, proto);
	if (h == NULL)
		return;
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

/*
 * A frame redirected here was validated by the receiving worker (and UDP
 * checked): dispatch straight to the handler, never redirect again.
 */
void rnic_net_input_l4(struct rnic_worker *w, struct rnic_port *p,
		       struct rte_mbuf *m)
{
	if (rnic_mbuf_is_ipv6(m)) {
		rnic_ipv6_input_l4(w, p, m);
		return;
	}
	const struct rnic_l4_handler *h = ipv4_handler(w, m, ipv4_proto(m));
	if (h != NULL)
		h->input(w, p, m);
}
