/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer harness: the receive path of a whole stack (lib/net Ethernet,
 * ARP, IPv4, ICMP, UDP demux, IPv6 with its extension headers, ICMPv6,
 * neighbour discovery; lib/tcp segment input behind a listener, over both
 * families).
 *
 * Set-up (once): EAL with --no-huge, a net_ring pair, a one-worker stack on
 * end "a" (192.0.2.1/24, 2001:db8::1/64) driven in run-to-completion mode, the stack's own
 * RoCEv2 handler on 4791 (no device is open: every packet that parses ends
 * as an unknown QP), a UDP handler on 9999, a TCP listener on port 80 whose
 * connections drop what they receive. The harness owns end "b".
 *
 * Input: flags byte, then frames as [length (2)][bytes]. Flags bit 0: fix
 * up the IPv4 header checksum and the UDP/TCP checksum of frames that hold
 * a well-formed IPv4 header, and the TCP/ICMPv6 checksum of IPv6 frames
 * without extension headers, so mutations reach the layers above; bit 1:
 * also point Ethernet and IP destinations at the stack (an IPv6 one at
 * its global address, or its solicited-node group for a solicitation). Each frame is
 * sent on "b", the worker is polled, and what the stack sends is drained.
 *
 * Properties: no crash, no sanitizer report, and every frame the stack
 * transmits is at least an Ethernet header and no longer than the MTU
 * allows. (mbuf accounting is not asserted per input: ARP legitimately
 * holds frames for unresolved neighbours and TCP holds its queues.)
 */
#include <errno.h>
#include <stdlib.h>
#include <rte_ethdev.h>
#include <rte_ip.h>
#include <rte_tcp.h>
#include <rte_udp.h>

#include "engine/stack.h"
#include "net/ipv6.h"
#include "net/net.h"
#include "port/port.h"
#include "rnic/rnic.h"
#include "rnic/rnic_tcp.h"
#include "fuzz_util.h"

#define NET_US_IP 0xc0000201u   /* 192.0.2.1 */
static const uint8_t net_us6[16] = { 0x20, 0x01, 0x0d, 0xb8, [15] = 1 };

static struct rnic_stack *net_st;
static struct rnic_port *net_sp;
static uint16_t net_peer;
static struct rte_mempool *net_pool;

static void
net_udp_in(struct rnic_worker *w, struct rnic_port *p, struct rte_mbuf *m)
{
	(void)w;
	(void)p;
	rte_pktmbuf_free(m);
}

static void *
net_accept(struct rnic_tcp_conn *c, void *ctx)
{
	(void)c;
	return ctx;
}

static void
net_recv(struct rnic_tcp_conn *c, void *ctx, struct rte_mbuf *m)
{
	(void)c;
	(void)ctx;
	rte_pktmbuf_free(m);
}

static const struct rnic_tcp_ops net_tcp_ops = {
	.accept = net_accept,
	.recv = net_recv,
};

/* Drain what the stack sent and check each frame. */
static void
net_drain(void)
{
	struct rte_mbuf *m[32];
	uint16_t n, i;

	for (i = 0; i < 4; i++)
		rnic_worker_poll(net_st, 0);
	while ((n = rte_eth_rx_burst(net_peer, 0, m, 32)) > 0) {
		for (i = 0; i < n; i++) {
			FUZZ_CHECK(rte_pktmbuf_pkt_len(m[i]) >=
				   sizeof(struct rte_ether_hdr));
			FUZZ_CHECK(rte_pktmbuf_pkt_len(m[i]) <=
				   net_sp->mtu + sizeof(struct rte_ether_hdr) +
				   4u);
		}
		rte_pktmbuf_free_bulk(m, n);
	}
}

int LLVMFuzzerInitialize(int *argc, char ***argv);

/* At exit (before LeakSanitizer looks, whose handler was registered first):
 * the stack goes, so what its protocols allocated is freed. */
static void net_fini(void)
{
	rnic_stack_destroy(net_st);
	net_st = NULL;
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	static const struct rnic_l4_handler udp_h = { .input = net_udp_in };
	struct rte_eth_conf conf = { 0 };
	struct rnic_config c;

	(void)argc;
	(void)argv;
	rnic_config_init(&c);
	snprintf(c.eal_args[c.n_eal_args++], 128, "--no-huge");
	snprintf(c.eal_args[c.n_eal_args++], 128, "-m");
	snprintf(c.eal_args[c.n_eal_args++], 128, "256");
	snprintf(c.eal_args[c.n_eal_args++], 128, "--log-level=*:error");
	FUZZ_CHECK(rnic_eal_init("fuzz_net", &c, 1) == 0);
	FUZZ_CHECK(rnic_ring_pair("fnet", 1) == 0);
	c.n_ports = 1;
	rnic_port_cfg_init(&c.ports[0]);
	snprintf(c.ports[0].ring, sizeof(c.ports[0].ring), "fnet.a");
	c.ports[0].ip = NET_US_IP;
	c.ports[0].prefix_len = 24;
	memcpy(c.ports[0].ip6[0].addr, net_us6, 16);
	c.ports[0].ip6[0].prefix_len = 64;
	c.ports[0].n_ip6 = 1;
	net_st = rnic_stack_create(&c);
	FUZZ_CHECK(net_st != NULL);
	atexit(net_fini);
	net_sp = net_st->ports[0];
	FUZZ_CHECK(rnic_stack_register_udp(net_st, 9999, &udp_h) == 0);
	/* 4791 belongs to lib/roce: a second binding is refused */
	FUZZ_CHECK(rnic_stack_register_udp(net_st, 4791, &udp_h) == -EEXIST);
	FUZZ_CHECK(rnic_tcp_listen(net_st, 80, &net_tcp_ops, NULL, 64) == 0);
	FUZZ_CHECK(rte_eth_dev_get_port_by_name("net_ring_fnet.b",
						&net_peer) == 0);
	net_pool = rte_pktmbuf_pool_create("fuzz_net", 4095, 0, 0, 2048,
					   SOCKET_ID_ANY);
	FUZZ_CHECK(net_pool != NULL);
	FUZZ_CHECK(rte_eth_dev_configure(net_peer, 1, 1, &conf) == 0);
	FUZZ_CHECK(rte_eth_rx_queue_setup(net_peer, 0, 512, SOCKET_ID_ANY,
					  NULL, net_pool) == 0);
	FUZZ_CHECK(rte_eth_tx_queue_setup(net_peer, 0, 512, SOCKET_ID_ANY,
					  NULL) == 0);
	FUZZ_CHECK(rte_eth_dev_start(net_peer) == 0);
	net_drain();
	return 0;
}

/* The same for IPv6 without extension headers: TCP and ICMPv6 checksums. */
static void
net_fixup6(uint8_t *f, size_t len, bool aim)
{
	struct rte_ether_hdr *eh = (struct rte_ether_hdr *)f;
	struct rte_ipv6_hdr *ip = (struct rte_ipv6_hdr *)(eh + 1);
	size_t plen;

	if (len < sizeof(*eh) + sizeof(*ip))
		return;
	if (aim) {
		bool ns = ip->proto == IPPROTO_ICMPV6 && len >= sizeof(*eh) + sizeof(*ip) + 1 &&
			  f[sizeof(*eh) + sizeof(*ip)] == 135;
		if (ns) {
			static const uint8_t sn[13] = { 0xff, 0x02, [11] = 1, [12] = 0xff };
			memcpy(ip->dst_addr, sn, 13);
			memcpy(ip->dst_addr + 13, net_us6 + 13, 3);
			rnic_ip6_mcast_mac(ip->dst_addr, &eh->dst_addr);
		} else {
			memcpy(ip->dst_addr, net_us6, 16);
			eh->dst_addr = net_sp->mac;
		}
	}
	plen = rte_be_to_cpu_16(ip->payload_len);
	if (sizeof(*eh) + sizeof(*ip) + plen > len)
		return;
	if (ip->proto == IPPROTO_TCP && plen >= 20) {
		struct rte_tcp_hdr *th = (struct rte_tcp_hdr *)(ip + 1);
		th->cksum = 0;
		th->cksum = rte_ipv6_udptcp_cksum(ip, th);
	} else if (ip->proto == IPPROTO_ICMPV6 && plen >= 4) {
		uint8_t *ic = (uint8_t *)(ip + 1);
		ic[2] = ic[3] = 0;
		/* the pseudo header takes the next header from ip->proto */
		uint16_t c = rte_ipv6_udptcp_cksum(ip, ic);
		memcpy(ic + 2, &c, 2);
	}
}

/* Make a frame with a plausible IPv4 header pass the checksum tests. */
static void
net_fixup(uint8_t *f, size_t len, bool aim)
{
	struct rte_ether_hdr *eh = (struct rte_ether_hdr *)f;
	struct rte_ipv4_hdr *ip;
	size_t ihl, tot;

	if (len >= sizeof(*eh) && eh->ether_type == rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV6)) {
		net_fixup6(f, len, aim);
		return;
	}
	if (len < sizeof(*eh) + sizeof(*ip) ||
	    eh->ether_type != rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4))
		return;
	ip = (struct rte_ipv4_hdr *)(eh + 1);
	if (aim) {
		eh->dst_addr = net_sp->mac;
		ip->dst_addr = rte_cpu_to_be_32(NET_US_IP);
	}
	ihl = (size_t)(ip->version_ihl & 0x0f) * 4;
	tot = rte_be_to_cpu_16(ip->total_length);
	if ((ip->version_ihl >> 4) != 4 || ihl < 20 || tot < ihl ||
	    sizeof(*eh) + tot > len)
		return;
	if (ip->next_proto_id == IPPROTO_UDP && tot >= ihl + 8) {
		struct rte_udp_hdr *uh = (struct rte_udp_hdr *)((uint8_t *)ip +
								 ihl);

		uh->dgram_len = rte_cpu_to_be_16((uint16_t)(tot - ihl));
		uh->dgram_cksum = 0;
		if (ihl == 20)
			uh->dgram_cksum = rte_ipv4_udptcp_cksum(ip, uh);
	} else if (ip->next_proto_id == IPPROTO_TCP && tot >= ihl + 20 &&
		   ihl == 20) {
		struct rte_tcp_hdr *th = (struct rte_tcp_hdr *)((uint8_t *)ip +
								 ihl);

		th->cksum = 0;
		th->cksum = rte_ipv4_udptcp_cksum(ip, th);
	}
	ip->hdr_checksum = 0;
	ip->hdr_checksum = rte_ipv4_cksum(ip);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_in in;
	uint8_t flags;
	unsigned frames = 0;

	fuzz_in_init(&in, data, size);
	flags = fuzz_u8(&in);
	while (fuzz_in_left(&in) > 0 && frames < 32) {
		size_t want = fuzz_u16(&in) % 1600, got;
		const uint8_t *p = fuzz_bytes(&in, want, &got);
		struct rte_mbuf *m = rte_pktmbuf_alloc(net_pool);
		uint8_t *f;

		FUZZ_CHECK(m != NULL);
		f = (uint8_t *)rte_pktmbuf_append(m, (uint16_t)got);
		FUZZ_CHECK(got == 0 || f != NULL);
		if (got > 0)
			memcpy(f, p, got);
		if (flags & 1)
			net_fixup(f, got, flags & 2);
		if (rte_eth_tx_burst(net_peer, 0, &m, 1) != 1)
			rte_pktmbuf_free(m);
		net_drain();
		frames++;
	}
	return 0;
}
