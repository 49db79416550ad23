/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lib/net unit tests: a one-worker stack on one end of a net_ring pair is
 * driven in run-to-completion mode; the test injects hand-made frames on the
 * other end and reads back what the stack sends. Every malformed frame must
 * be dropped with its exact cause, answered frames must be byte-correct, and
 * no mbuf may stay out of the pool.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include <rte_arp.h>
#include <rte_ethdev.h>
#include <rte_icmp.h>
#include <rte_ip.h>
#include <rte_udp.h>

#include "engine/stack.h"
#include "net/net.h"
#include "port/port.h"
#include "rnic/rnic.h"

#define US_IP   0xc0000201u   /* 192.0.2.1: the stack */
#define PEER_IP 0xc0000202u   /* 192.0.2.2: the test */

static struct rnic_stack *st;
static struct rnic_port *sp;
static uint16_t peer_port;
static struct rte_mempool *pool;
static const struct rte_ether_addr peer_mac = {{0x02, 0, 0, 0, 0, 0x22}};
static unsigned udp_calls;
static unsigned baseline_mbufs;

static uint64_t drops(enum rnic_drop_cause c)
{
	return st->workers[0]->drops[c];
}

static void poll_stack(void)
{
	for (int i = 0; i < 8; i++)
		rnic_worker_poll(st, 0);
}

/* Send @p len bytes as one frame to the stack. */
static void inject(const void *frame, size_t len)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(pool);
	assert_non_null(m);
	if (len)
		memcpy(rte_pktmbuf_append(m, (uint16_t)len), frame, len);
	assert_int_equal(rte_eth_tx_burst(peer_port, 0, &m, 1), 1);
	poll_stack();
}

/* Frames the stack sent; caller frees. */
static unsigned collect(struct rte_mbuf **out, unsigned max)
{
	poll_stack();
	return rte_eth_rx_burst(peer_port, 0, out, (uint16_t)max);
}

static void drain(void)
{
	struct rte_mbuf *m[32];
	unsigned n;
	while ((n = collect(m, 32)) > 0)
		rte_pktmbuf_free_bulk(m, n);
}

static void check_no_leak(void)
{
	drain();
	assert_true(rnic_port_mbufs_in_use(sp) <= baseline_mbufs);
}

/* Ethernet + IPv4 header with a valid checksum; returns the IPv4 header. */
static struct rte_ipv4_hdr *build_ip(uint8_t *f, uint8_t proto, uint16_t l4len)
{
	struct rte_ether_hdr *eh = (struct rte_ether_hdr *)f;
	eh->dst_addr = sp->mac;
	eh->src_addr = peer_mac;
	eh->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
	struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)(eh + 1);
	memset(ip, 0, sizeof(*ip));
	ip->version_ihl = 0x45;
	ip->total_length = rte_cpu_to_be_16(20 + l4len);
	ip->time_to_live = 64;
	ip->next_proto_id = proto;
	ip->src_addr = rte_cpu_to_be_32(PEER_IP);
	ip->dst_addr = rte_cpu_to_be_32(US_IP);
	ip->hdr_checksum = rte_ipv4_cksum(ip);
	return ip;
}

static size_t build_echo(uint8_t *f, uint16_t payload)
{
	struct rte_ipv4_hdr *ip = build_ip(f, IPPROTO_ICMP, 8 + payload);
	struct rte_icmp_hdr *ic = (struct rte_icmp_hdr *)(ip + 1);
	ic->icmp_type = RTE_IP_ICMP_ECHO_REQUEST;
	ic->icmp_code = 0;
	ic->icmp_ident = rte_cpu_to_be_16(0x1234);
	ic->icmp_seq_nb = rte_cpu_to_be_16(7);
	for (unsigned i = 0; i < payload; i++)
		((uint8_t *)(ic + 1))[i] = (uint8_t)(i * 7);
	ic->icmp_cksum = 0;
	ic->icmp_cksum = ~rte_raw_cksum(ic, 8 + payload);
	return 14 + 20 + 8 + payload;
}

static size_t build_arp(uint8_t *f, uint16_t op, uint32_t sip, uint32_t tip)
{
	struct rte_ether_hdr *eh = (struct rte_ether_hdr *)f;
	memset(eh->dst_addr.addr_bytes, 0xff, 6);
	eh->src_addr = peer_mac;
	eh->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_ARP);
	struct rte_arp_hdr *ah = (struct rte_arp_hdr *)(eh + 1);
	ah->arp_hardware = rte_cpu_to_be_16(RTE_ARP_HRD_ETHER);
	ah->arp_protocol = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
	ah->arp_hlen = 6;
	ah->arp_plen = 4;
	ah->arp_opcode = rte_cpu_to_be_16(op);
	ah->arp_data.arp_sha = peer_mac;
	ah->arp_data.arp_sip = rte_cpu_to_be_32(sip);
	memset(&ah->arp_data.arp_tha, 0, 6);
	ah->arp_data.arp_tip = rte_cpu_to_be_32(tip);
	return 14 + sizeof(*ah);
}

static void arp_request_gets_reply(void **state)
{
	uint8_t f[64];
	struct rte_mbuf *out[8];
	(void)state;

	drain();
	inject(f, build_arp(f, RTE_ARP_OP_REQUEST, PEER_IP, US_IP));
	unsigned n = collect(out, 8);
	assert_int_equal(n, 1);
	struct rte_ether_hdr *eh = rte_pktmbuf_mtod(out[0], struct rte_ether_hdr *);
	struct rte_arp_hdr *ah = (struct rte_arp_hdr *)(eh + 1);
	assert_memory_equal(&eh->dst_addr, &peer_mac, 6);
	assert_memory_equal(&eh->src_addr, &sp->mac, 6);
	assert_int_equal(rte_be_to_cpu_16(ah->arp_opcode), RTE_ARP_OP_REPLY);
	assert_memory_equal(&ah->arp_data.arp_sha, &sp->mac, 6);
	assert_int_equal(rte_be_to_cpu_32(ah->arp_data.arp_sip), US_IP);
	assert_memory_equal(&ah->arp_data.arp_tha, &peer_mac, 6);
	assert_int_equal(rte_be_to_cpu_32(ah->arp_data.arp_tip), PEER_IP);
	rte_pktmbuf_free_bulk(out, n);
	check_no_leak();
}

static void arp_malformed_counted(void **state)
{
	uint8_t f[64];
	size_t len;
	(void)state;

	uint64_t before = drops(RNIC_DROP_ARP_MALFORMED);
	for (int c = 0; c < 5; c++) {
		len = build_arp(f, RTE_ARP_OP_REQUEST, PEER_IP, US_IP);
		struct rte_arp_hdr *ah = (struct rte_arp_hdr *)(f + 14);
		switch (c) {
		case 0: ah->arp_hlen = 5; break;
		case 1: ah->arp_protocol = rte_cpu_to_be_16(0x86dd); break;
		case 2: ah->arp_opcode = rte_cpu_to_be_16(3); break;
		case 3: ah->arp_hardware = rte_cpu_to_be_16(6); break;
		case 4: len -= 1; break; /* truncated */
		}
		inject(f, len);
	}
	assert_int_equal(drops(RNIC_DROP_ARP_MALFORMED) - before, 5);
	before = drops(RNIC_DROP_ARP_NOT_FOR_US);
	inject(f, build_arp(f, RTE_ARP_OP_REQUEST, PEER_IP, US_IP + 5));
	assert_int_equal(drops(RNIC_DROP_ARP_NOT_FOR_US) - before, 1);
	struct rte_mbuf *out[4];
	assert_int_equal(collect(out, 4), 0);
	check_no_leak();
}

/* A sender hardware address that is not the frame's source (one flipped
 * bit on either side): dropped and counted, neither answered nor learned. */
static void arp_sha_mismatch_dropped(void **state)
{
	uint8_t f[64];
	struct rte_mbuf *out[4];
	(void)state;

	drain();
	uint64_t before = drops(RNIC_DROP_ARP_SHA_MISMATCH);
	size_t len = build_arp(f, RTE_ARP_OP_REQUEST, PEER_IP, US_IP);
	struct rte_arp_hdr *ah = (struct rte_arp_hdr *)(f + 14);
	ah->arp_data.arp_sha.addr_bytes[5] ^= 0x04;
	inject(f, len);
	len = build_arp(f, RTE_ARP_OP_REPLY, PEER_IP, US_IP);
	((struct rte_ether_hdr *)f)->src_addr.addr_bytes[3] ^= 0x80;
	inject(f, len);
	assert_int_equal(drops(RNIC_DROP_ARP_SHA_MISMATCH) - before, 2);
	assert_int_equal(collect(out, 4), 0);
	/* the same request unharmed is answered, to the true address */
	inject(f, build_arp(f, RTE_ARP_OP_REQUEST, PEER_IP, US_IP));
	assert_int_equal(collect(out, 4), 1);
	struct rte_ether_hdr *eh = rte_pktmbuf_mtod(out[0], struct rte_ether_hdr *);
	assert_memory_equal(&eh->dst_addr, &peer_mac, 6);
	rte_pktmbuf_free(out[0]);
	assert_int_equal(drops(RNIC_DROP_ARP_SHA_MISMATCH) - before, 2);
	check_no_leak();
}

static void ethernet_drops(void **state)
{
	uint8_t f[128];
	(void)state;
	uint64_t b_short = drops(RNIC_DROP_ETH_SHORT);
	uint64_t b_other = drops(RNIC_DROP_ETH_NOT_FOR_US);
	uint64_t b_type = drops(RNIC_DROP_ETH_TYPE);
	size_t len = build_echo(f, 8);
	inject(f, 10);
	f[0] ^= 0x02;           /* another unicast MAC */
	inject(f, len);
	f[0] ^= 0x02;
	f[12] = 0x86; f[13] = 0xdd;
	inject(f, len);
	assert_int_equal(drops(RNIC_DROP_ETH_SHORT) - b_short, 1);
	assert_int_equal(drops(RNIC_DROP_ETH_NOT_FOR_US) - b_other, 1);
	assert_int_equal(drops(RNIC_DROP_ETH_TYPE) - b_type, 1);
	check_no_leak();
}

static void icmp_echo_reply(void **state)
{
	uint8_t f[256];
	struct rte_mbuf *out[4];
	(void)state;

	drain();
	for (uint16_t payload = 56; payload <= 57; payload++) {   /* odd length too */
		size_t len = build_echo(f, payload);
		inject(f, len);
		unsigned n = collect(out, 4);
		assert_int_equal(n, 1);
		assert_int_equal(rte_pktmbuf_pkt_len(out[0]), len);
		uint8_t *r = rte_pktmbuf_mtod(out[0], uint8_t *);
		struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)(r + 14);
		assert_int_equal(rte_raw_cksum(ip, 20), 0xffff);
		assert_int_equal(rte_be_to_cpu_32(ip->dst_addr), PEER_IP);
		struct rte_icmp_hdr *ic = (struct rte_icmp_hdr *)(ip + 1);
		assert_int_equal(ic->icmp_type, RTE_IP_ICMP_ECHO_REPLY);
		assert_int_equal(rte_raw_cksum(ic, 8 + payload), 0xffff);
		assert_int_equal(rte_be_to_cpu_16(ic->icmp_ident), 0x1234);
		assert_memory_equal(ic + 1, f + 14 + 20 + 8, payload);
		rte_pktmbuf_free_bulk(out, n);
	}
	check_no_leak();
}

static void icmp_drops(void **state)
{
	uint8_t f[256];
	(void)state;
	uint64_t b_ck = drops(RNIC_DROP_ICMP_CHECKSUM);
	uint64_t b_ty = drops(RNIC_DROP_ICMP_TYPE);
	uint64_t b_sh = drops(RNIC_DROP_ICMP_SHORT);
	size_t len = build_echo(f, 16);
	f[14 + 20 + 8] ^= 1;           /* payload flip: checksum wrong */
	inject(f, len);
	len = build_echo(f, 16);
	struct rte_icmp_hdr *ic = (struct rte_icmp_hdr *)(f + 34);
	ic->icmp_type = 13;            /* timestamp request */
	ic->icmp_cksum = 0;
	ic->icmp_cksum = ~rte_raw_cksum(ic, 24);
	inject(f, len);
	build_ip(f, IPPROTO_ICMP, 4);  /* 4 bytes of ICMP: too short */
	inject(f, 14 + 20 + 4);
	assert_int_equal(drops(RNIC_DROP_ICMP_CHECKSUM) - b_ck, 1);
	assert_int_equal(drops(RNIC_DROP_ICMP_TYPE) - b_ty, 1);
	assert_int_equal(drops(RNIC_DROP_ICMP_SHORT) - b_sh, 1);
	check_no_leak();
}

/* Each IPv4 malformation raises exactly its own counter. */
static void ipv4_drops(void **state)
{
	static const struct { enum rnic_drop_cause cause; int kind; } cases[] = {
		{ RNIC_DROP_IP_VERSION, 0 }, { RNIC_DROP_IP_HDR_LEN, 1 },
		{ RNIC_DROP_IP_TOTAL_LEN, 2 }, { RNIC_DROP_IP_CHECKSUM, 3 },
		{ RNIC_DROP_IP_FRAGMENT, 4 }, { RNIC_DROP_IP_FRAGMENT, 5 },
		{ RNIC_DROP_IP_TTL, 6 }, { RNIC_DROP_IP_NOT_FOR_US, 7 },
		{ RNIC_DROP_IP_BAD_SRC, 8 }, { RNIC_DROP_IP_PROTO, 9 },
		{ RNIC_DROP_IP_SHORT, 10 }, { RNIC_DROP_IP_BAD_SRC, 11 },
	};
	uint8_t f[256];
	(void)state;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		size_t len = build_echo(f, 16);
		struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)(f + 14);
		switch (cases[i].kind) {
		case 0: ip->version_ihl = 0x65; break;
		case 1: ip->version_ihl = 0x44; break;
		case 2: ip->total_length = rte_cpu_to_be_16(200); break;
		case 3: ip->hdr_checksum ^= 0x0100; break;
		case 4: ip->fragment_offset = rte_cpu_to_be_16(RTE_IPV4_HDR_MF_FLAG); break;
		case 5: ip->fragment_offset = rte_cpu_to_be_16(10); break;
		case 6: ip->time_to_live = 0; break;
		case 7: ip->dst_addr = rte_cpu_to_be_32(US_IP + 9); break;
		case 8: ip->src_addr = rte_cpu_to_be_32(0xffffffff); break;
		case 9: ip->next_proto_id = 99; break;
		case 10: len = 14 + 19; break;
		case 11: ip->src_addr = rte_cpu_to_be_32(0xe0000001); break;
		}
		if (cases[i].kind != 3 && cases[i].kind != 10) {
			ip->hdr_checksum = 0;
			ip->hdr_checksum = rte_ipv4_cksum(ip);
		}
		uint64_t before = drops(cases[i].cause);
		uint64_t total = 0;
		for (int c = 0; c < RNIC_DROP_MAX; c++)
			total += drops(c);
		inject(f, len);
		assert_int_equal(drops(cases[i].cause) - before, 1);
		uint64_t after = 0;
		for (int c = 0; c < RNIC_DROP_MAX; c++)
			after += drops(c);
		assert_int_equal(after - total, 1);  /* and nothing else */
	}
	struct rte_mbuf *out[4];
	assert_int_equal(collect(out, 4), 0);
	check_no_leak();
}

static void udp_input_cb(struct rnic_worker *w, struct rnic_port *p,
			 struct rte_mbuf *m)
{
	(void)w;
	(void)p;
	udp_calls++;
	rte_pktmbuf_free(m);
}

static size_t build_udp(uint8_t *f, uint16_t dport, uint16_t payload, bool csum)
{
	struct rte_ipv4_hdr *ip = build_ip(f, IPPROTO_UDP, 8 + payload);
	struct rte_udp_hdr *uh = (struct rte_udp_hdr *)(ip + 1);
	uh->src_port = rte_cpu_to_be_16(5555);
	uh->dst_port = rte_cpu_to_be_16(dport);
	uh->dgram_len = rte_cpu_to_be_16(8 + payload);
	uh->dgram_cksum = 0;
	memset(uh + 1, 0xab, payload);
	if (csum)
		uh->dgram_cksum = rte_ipv4_udptcp_cksum(ip, uh);
	return 14 + 20 + 8 + payload;
}

static void udp_demux(void **state)
{
	uint8_t f[256];
	(void)state;
	unsigned calls = udp_calls;
	uint64_t b_len = drops(RNIC_DROP_UDP_LEN), b_ck = drops(RNIC_DROP_UDP_CHECKSUM),
		 b_nl = drops(RNIC_DROP_UDP_NO_LISTENER), b_sh = drops(RNIC_DROP_UDP_SHORT);

	inject(f, build_udp(f, 9999, 20, true));
	inject(f, build_udp(f, 9999, 21, false));       /* checksum 0: none */
	assert_int_equal(udp_calls - calls, 2);
	size_t len = build_udp(f, 9999, 20, true);
	f[14 + 20 + 8] ^= 0x10;
	inject(f, len);
	len = build_udp(f, 9999, 20, true);
	((struct rte_udp_hdr *)(f + 34))->dgram_len = rte_cpu_to_be_16(100);
	inject(f, len);
	inject(f, build_udp(f, 1234, 8, true));
	build_ip(f, IPPROTO_UDP, 6);
	inject(f, 14 + 20 + 6);
	assert_int_equal(udp_calls - calls, 2);
	assert_int_equal(drops(RNIC_DROP_UDP_CHECKSUM) - b_ck, 1);
	assert_int_equal(drops(RNIC_DROP_UDP_LEN) - b_len, 1);
	assert_int_equal(drops(RNIC_DROP_UDP_NO_LISTENER) - b_nl, 1);
	assert_int_equal(drops(RNIC_DROP_UDP_SHORT) - b_sh, 1);
	check_no_leak();
}

/* Every prefix of valid ARP, ICMP and UDP frames: nothing answered, no crash,
 * no leak (a truncated IPv4 frame fails the total-length check). */
static void truncation_sweep(void **state)
{
	uint8_t f[256];
	struct rte_mbuf *out[32];
	(void)state;
	unsigned calls = udp_calls;

	drain();
	size_t lens[3];
	uint8_t frames[3][256];
	lens[0] = build_arp(frames[0], RTE_ARP_OP_REQUEST, PEER_IP, US_IP);
	lens[1] = build_echo(frames[1], 40);
	lens[2] = build_udp(frames[2], 9999, 30, true);
	for (int k = 0; k < 3; k++) {
		for (size_t l = 0; l < lens[k]; l++) {
			memcpy(f, frames[k], l);
			inject(f, l);
			unsigned n = collect(out, 32);
			assert_int_equal(n, 0);
		}
	}
	assert_int_equal(udp_calls, calls);
	check_no_leak();
}

/* 10^5 random and mutated frames: still alive, still answering, no leak. */
static void random_storm(void **state)
{
	uint8_t f[256];
	uint64_t x = 88172645463325252ULL;
	(void)state;

	for (int i = 0; i < 100000; i++) {
		size_t len;
		x ^= x << 13; x ^= x >> 7; x ^= x << 17;
		switch (x % 4) {
		case 0: len = build_echo(f, x % 64); break;
		case 1: len = build_arp(f, RTE_ARP_OP_REQUEST, PEER_IP, US_IP); break;
		case 2: len = build_udp(f, 9999, x % 64, true); break;
		default: len = 14 + x % 200; memcpy(f, &sp->mac, 6); break;
		}
		for (int b = 0; b < 3; b++) {
			x ^= x << 13; x ^= x >> 7; x ^= x << 17;
			f[6 + x % (len > 6 ? len - 6 : 1)] ^= (uint8_t)(1u << (x >> 60 & 7));
		}
		struct rte_mbuf *m = rte_pktmbuf_alloc(pool);
		assert_non_null(m);
		memcpy(rte_pktmbuf_append(m, (uint16_t)len), f, len);
		while (rte_eth_tx_burst(peer_port, 0, &m, 1) == 0)
			poll_stack();
		if (i % 16 == 0)
			drain();
	}
	drain();
	check_no_leak();
	/* still answering */
	struct rte_mbuf *out[4];
	inject(f, build_echo(f, 8));
	unsigned n = collect(out, 4);
	assert_int_equal(n, 1);
	rte_pktmbuf_free_bulk(out, n);
}

static int setup(void **state)
{
	struct rnic_config c;
	static const struct rnic_l4_handler udp_h = { .input = udp_input_cb };
	(void)state;

	rnic_config_init(&c);
	snprintf(c.eal_args[c.n_eal_args++], 128, "--no-huge");
	snprintf(c.eal_args[c.n_eal_args++], 128, "-m");
	snprintf(c.eal_args[c.n_eal_args++], 128, "256");
	snprintf(c.eal_args[c.n_eal_args++], 128, "--log-level=*:error");
	if (rnic_eal_init("test_net", &c, 1) != 0 || rnic_ring_pair("unet", 1) != 0)
		return -1;
	c.n_ports = 1;
	rnic_port_cfg_init(&c.ports[0]);
	snprintf(c.ports[0].ring, sizeof(c.ports[0].ring), "unet.a");
	c.ports[0].ip = US_IP;
	c.ports[0].prefix_len = 24;
	st = rnic_stack_create(&c);
	if (st == NULL)
		return -1;
	sp = st->ports[0];
	if (rnic_stack_register_udp(st, 9999, &udp_h) != 0)
		return -1;
	struct rte_eth_conf conf = {0};
	if (rte_eth_dev_get_port_by_name("net_ring_unet.b", &peer_port) != 0)
		return -1;
	pool = rte_pktmbuf_pool_create("test_net", 4095, 0, 0, 2048, SOCKET_ID_ANY);
	if (pool == NULL || rte_eth_dev_configure(peer_port, 1, 1, &conf) != 0 ||
	    rte_eth_rx_queue_setup(peer_port, 0, 512, SOCKET_ID_ANY, NULL, pool) != 0 ||
	    rte_eth_tx_queue_setup(peer_port, 0, 512, SOCKET_ID_ANY, NULL) != 0 ||
	    rte_eth_dev_start(peer_port) != 0)
		return -1;
	drain();  /* the gratuitous ARP */
	baseline_mbufs = rnic_port_mbufs_in_use(sp);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	drain();
	rnic_stack_destroy(st);
	return 0;
}

/* The 20-byte IPv4 header checksum of lib/net equals DPDK's over random
 * headers, sums that carry many times among them (all-ones words). */
static void ipv4_hdr_cksum_matches_dpdk(void **state)
{
	(void)state;
	uint32_t seed = 77;
	for (int n = 0; n < 200000; n++) {
		struct rte_ipv4_hdr h;
		uint8_t *b = (uint8_t *)&h;
		for (unsigned i = 0; i < sizeof(h); i++) {
			seed = seed * 1103515245u + 12345u;
			b[i] = n % 7 == 0 ? 0xff : (uint8_t)(seed >> 16);
		}
		h.version_ihl = RTE_IPV4_VHL_DEF;
		h.hdr_checksum = 0;
		uint16_t want = rte_ipv4_cksum(&h), got = rnic_ipv4_hdr_cksum(&h);
		if (got != want)
			fail_msg("header %d: %04x, DPDK %04x", n, got, want);
		/* and it verifies: the sum over the header with it is all ones */
		h.hdr_checksum = got;
		assert_int_equal(rte_raw_cksum(&h, sizeof(h)), 0xffff);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(ipv4_hdr_cksum_matches_dpdk),
		cmocka_unit_test(arp_request_gets_reply),
		cmocka_unit_test(arp_malformed_counted),
		cmocka_unit_test(arp_sha_mismatch_dropped),
		cmocka_unit_test(ethernet_drops),
		cmocka_unit_test(icmp_echo_reply),
		cmocka_unit_test(icmp_drops),
		cmocka_unit_test(ipv4_drops),
		cmocka_unit_test(udp_demux),
		cmocka_unit_test(truncation_sweep),
		cmocka_unit_test(random_storm),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
