/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lib/net: Ethernet, ARP (requests, replies, cache with timeouts, gratuitous
 * ARP), IPv4 (validation, checksum, lengths, fragments counted and dropped,
 * TTL), ICMP echo, and the demux to L4 handlers registered on the stack.
 * Every malformed frame is dropped with a cause counter
 * (common/drops.h); nothing here crashes or leaks an mbuf.
 */
#ifndef RNIC_NET_H
#define RNIC_NET_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <rte_ether.h>
#include <rte_mbuf.h>

struct rnic_worker;
struct rnic_port;
struct rnic_stack;

#define RNIC_ARP_ENTRIES  256     /* per port */
#define RNIC_ARP_TTL_US   (60u * 1000 * 1000)
#define RNIC_ARP_PENDING  16      /* frames held per unresolved address */

/**
 * A sender's memory of its last next hop (a RoCE QP keeps one): the port
 * and IPv4 next hop a frame left by, the MAC ARP gave for it, the ARP
 * table's generation then and the entry's expiry. While the frame's port
 * and next hop are the same, the generation unchanged (every change of the
 * table bumps it: an entry added, its MAC changed, an entry freed or
 * evicted, a failed refresh) and the worker's clock before the expiry, the
 * frame takes that MAC without the table's lock and probe. A route or
 * failover change gives another port or next hop, so a miss. Zeroed: empty.
 */
struct rnic_arp_hint {
	const struct rnic_port *port;
	uint32_t ip;                  /* next hop, host order */
	uint32_t gen;
	uint64_t until_tsc;           /* the entry's expiry */
	struct rte_ether_addr mac;
};

/** Set up / free a port's ARP table (called by lib/port). */
int rnic_arp_table_create(struct rnic_port *p);
void rnic_arp_table_free(struct rnic_port *p);

/** Age the port's ARP cache and drop pending frames that waited too long;
 *  re-send requests for unresolved addresses. @return work done. */
unsigned rnic_arp_poll(struct rnic_worker *w, struct rnic_port *p);

/** Called by ICMP input for every echo reply (rnic_ping bookkeeping). */
void rnic_ping_reply_in(struct rnic_stack *st, uint16_t ident, uint16_t seq);

/** Send a gratuitous ARP for each address the port answers for: its own
 *  and those it took over from failed ports (start, failover). */
void rnic_arp_announce(struct rnic_worker *w, struct rnic_port *p);

/** Send one gratuitous ARP for address @p ip (host order) from port @p p. */
void rnic_arp_announce_ip(struct rnic_worker *w, struct rnic_port *p, uint32_t ip);

/**
 * Receive one frame on worker @p w from port @p p. Consumes @p m: delivers,
 * answers, redirects to the owning worker, or drops with a counted cause.
 */
void rnic_net_input(struct rnic_worker *w, struct rnic_port *p,
		    struct rte_mbuf *m);

/**
 * Resume a frame that another worker redirected here: m->l2_len and
 * m->l3_len point past the validated IPv4 header.
 */
void rnic_net_input_l4(struct rnic_worker *w, struct rnic_port *p,
		       struct rte_mbuf *m);

/**
 * Send an IPv4 datagram. @p m holds the L4 header and payload from its data
 * start, with headroom for IPv4 and Ethernet headers. Picks the port by
 * route when @p p is NULL, fills the IPv4 header (checksum in software or
 * offloaded), resolves the next hop by ARP (holding the frame until the
 * reply, bounded), and queues it on @p w's TX buffer. L4 checksums are the
 * caller's. Consumes @p m. @return 0, -EHOSTUNREACH, -ENOBUFS.
 */
int rnic_net_output_ipv4(struct rnic_worker *w, struct rnic_port *p,
			 struct rte_mbuf *m, uint32_t dst_ip, uint8_t proto);

/** rnic_net_output_ipv4() with a TOS byte (DSCP and ECN, for RoCE). */
int rnic_net_output_ipv4_tos(struct rnic_worker *w, struct rnic_port *p,
			     struct rte_mbuf *m, uint32_t dst_ip, uint8_t proto,
			     uint8_t tos);

/*
 * Called once the IPv4 header of @p m is final (m->l2_len and m->l3_len
 * set), before the frame is queued or held for ARP: RoCEv2's ICRC covers
 * the IPv4 header, identification included.
 */
#ifndef RNIC_NET_FIN_FN
#define RNIC_NET_FIN_FN
typedef void (*rnic_net_fin_fn)(struct rte_mbuf *m);
#endif

/** rnic_net_output_ipv4_tos() with a finishing step (NULL: none). */
int rnic_net_output_ipv4_fin(struct rnic_worker *w, struct rnic_port *p,
			     struct rte_mbuf *m, uint32_t dst_ip, uint8_t proto,
			     uint8_t tos, rnic_net_fin_fn fin);

/**
 * rnic_net_output_ipv4_fin() from a given source address @p src_ip (host
 * order; 0: the port's own). Flows of an address a port took over after a
 * failover keep their address. When @p p is a port whose address was taken
 * over (p->taken_by), the frame leaves through the port serving it, from
 * @p p's address unless @p src_ip says otherwise.
 */
int rnic_net_output_ipv4_src(struct rnic_worker *w, struct rnic_port *p,
			     struct rte_mbuf *m, uint32_t src_ip, uint32_t dst_ip,
			     uint8_t proto, uint8_t tos, rnic_net_fin_fn fin);

/** rnic_net_output_ipv4_src() with the sender's next-hop memory @p hint
 *  (struct rnic_arp_hint; NULL: none). */
int rnic_net_output_ipv4_hint(struct rnic_worker *w, struct rnic_port *p,
			      struct rte_mbuf *m, uint32_t src_ip, uint32_t dst_ip,
			      uint8_t proto, uint8_t tos, rnic_net_fin_fn fin,
			      struct rnic_arp_hint *hint);

/**
 * Answer a frame that arrived on @p p straight to its Ethernet source
 * @p l2_dst, with neither a route lookup nor ARP: the stateless replies of
 * the SYN stage (SYN-ACK cookies, resets for segments without a
 * connection), which must cost no neighbour state and no ARP request per
 * spoofed source. The reply goes back the way the segment came, through
 * the same neighbour or gateway. A port whose address was taken over, or a
 * source that is not unicast, falls back to rnic_net_output_ipv4_src().
 * @p src_ip 0: the port's address. Consumes @p m. @return as
 * rnic_net_output_ipv4().
 */
int rnic_net_reply_ipv4(struct rnic_worker *w, struct rnic_port *p, struct rte_mbuf *m,
			uint32_t src_ip, uint32_t dst_ip, uint8_t proto,
			const struct rte_ether_addr *l2_dst);

/**
 * Send a UDP datagram: @p m holds the payload from its data start. Prepends
 * the UDP header; @p csum computes the checksum in software (RoCEv2 sends 0).
 * Consumes @p m. @return as rnic_net_output_ipv4().
 */
int rnic_net_output_udp(struct rnic_worker *w, struct rnic_port *p,
			struct rte_mbuf *m, uint32_t dst_ip, uint16_t sport,
			uint16_t dport, bool csum);

/** rnic_net_output_udp() with a TOS byte and a finishing step (RoCEv2). */
int rnic_net_output_udp_fin(struct rnic_worker *w, struct rnic_port *p,
			    struct rte_mbuf *m, uint32_t dst_ip, uint16_t sport,
			    uint16_t dport, bool csum, uint8_t tos, rnic_net_fin_fn fin);

/** rnic_net_output_udp_fin() from source address @p src_ip (0: the port's).
 *  @p hint: the sender's next-hop memory (struct rnic_arp_hint), or NULL. */
int rnic_net_output_udp_fin_src(struct rnic_worker *w, struct rnic_port *p,
				struct rte_mbuf *m, uint32_t src_ip, uint32_t dst_ip,
				uint16_t sport, uint16_t dport, bool csum,
				uint8_t tos, rnic_net_fin_fn fin,
				struct rnic_arp_hint *hint);

/**
 * Whether an IPv4 datagram to @p dst_ip from port @p p and source @p src_ip
 * (as rnic_net_output_ipv4_src() would route it) would leave at once: 0
 * when its next hop is resolved, *@p until_tsc saying until when that may
 * be taken for granted (rnic_arp_ready()); -EAGAIN when ARP would hold it;
 * -EHOSTUNREACH with no route. Sends nothing. A sender with many frames
 * for a new neighbour sends one and waits for this to say 0: ARP holds
 * RNIC_ARP_PENDING frames per address and drops the rest.
 */
int rnic_net_next_hop_ready(struct rnic_worker *w, struct rnic_port *p, uint32_t src_ip,
			    uint32_t dst_ip, uint64_t *until_tsc);

/**
 * The port, source address and next hop a datagram to @p dst_ip takes:
 * *pp is the caller's port (NULL: route), *src_ip the caller's source (0:
 * w->tx_src_ip, else the port's address). A port whose address was taken
 * over hands over to the port serving it. Both are updated.
 * @return 0 or -EHOSTUNREACH.
 */
int rnic_net_out_select(struct rnic_worker *w, struct rnic_port **pp,
			uint32_t dst_ip, uint32_t *src_ip, uint32_t *next_hop);

/** The port that reaches @p dst_ip (host order) and the next hop. */
struct rnic_port *rnic_net_route(struct rnic_stack *st, uint32_t dst_ip,
				 uint32_t *next_hop);

/**
 * Checksums over mbuf chains. DPDK 22.11's rte_raw_cksum_mbuf() and the
 * rte_ipv4_udptcp_cksum_mbuf*() helpers lose carries when a segment starts
 * at an odd offset; use these instead for chained frames.
 *
 * One's-complement sum of @p len bytes from @p off over a chain, folded,
 * not inverted (0xffff over a message that carries its checksum means
 * valid). @return 0, or -EINVAL when the range passes the frame's end.
 */
int rnic_net_cksum_mbuf(const struct rte_mbuf *m, uint32_t off, uint32_t len,
			uint16_t *sum);

/**
 * Folded, not inverted, sum of a UDP/TCP segment of @p l4_len bytes at
 * @p off plus its IPv4 pseudo header (addresses in network order, summed
 * as stored). 0xffff over a segment with its checksum means valid.
 */
uint16_t rnic_net_l4_cksum(const struct rte_mbuf *m, uint32_t off,
			   uint32_t src_be, uint32_t dst_be, uint8_t proto,
			   uint16_t l4_len);

/**
 * Checksum of the 20-byte IPv4 header at @p ip (no options; its checksum
 * field 0), as rte_ipv4_cksum() gives it: five 32-bit words summed and
 * folded, where DPDK 22.11 adds ten 16-bit ones in a loop (its samples in
 * a 64-byte RoCE Write's profile were mostly that loop's).
 */
static inline uint16_t rnic_ipv4_hdr_cksum(const void *ip)
{
	const uint8_t *b = ip;
	uint64_t sum = 0;
	for (unsigned i = 0; i < 5; i++) {
		uint32_t w;
		memcpy(&w, b + 4 * i, sizeof(w));
		sum += w;
	}
	sum = (sum & 0xffffffffu) + (sum >> 32);
	sum = (sum & 0xffffffffu) + (sum >> 32);
	sum = (sum & 0xffffu) + (sum >> 16);
	sum = (sum & 0xffffu) + (sum >> 16);
	return (uint16_t)~sum;
}

/** ARP cache counters summed over the stack's ports. */
struct rnic_arp_stats {
	uint64_t requests_in, replies_in, requests_out, replies_out,
		 gratuitous_out, entries, timeouts;
	uint64_t refreshes;   /* requests_out that refreshed a stale entry */
	uint64_t create_refused, gratuitous_in;   /* arp.h */
	uint64_t override_refused, override_taken; /* arp.h */
};
void rnic_arp_stats(const struct rnic_stack *st, struct rnic_arp_stats *s);

#endif
