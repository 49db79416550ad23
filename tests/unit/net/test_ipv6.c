/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lib/net's IPv6, ICMPv6 and neighbour discovery on their own (net_sources
 * against the engine doubles of stubs.c), on a hand-built stack:
 * port 0 has 2001:db8::1/64 (and its link-local fe80::ff:fe00:1 from MAC
 * 02:00:00:00:00:01), port 1 is IPv4-only. Frames are built here byte by
 * byte with an independent RFC 1071 checksum; every malformation has its
 * drop cause; truncation at every length drops exactly one frame and
 * answers nothing; the neighbour cache walks through its RFC 4861 states;
 * DAD withdraws a duplicate; every test returns every mbuf.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_ip.h>

#include "engine/stack.h"
#include "net/arp.h"
#include "net/ipv6.h"
#include "net/nd.h"
#include "net/neigh.h"
#include "net/net.h"
#include "port/port.h"
#include "stubs.h"

static const uint8_t US6[16] = { 0x20, 0x01, 0x0d, 0xb8, [15] = 0x01 };
static const uint8_t PEER6[16] = { 0x20, 0x01, 0x0d, 0xb8, [15] = 0x02 };
static const uint8_t OTHER6[16] = { 0x20, 0x01, 0x0d, 0xb8, [15] = 0x77 };
static const uint8_t ALL_NODES[16] = { 0xff, 0x02, [15] = 0x01 };
static const uint8_t US_LL[16] = { 0xfe, 0x80, [11] = 0xff, [12] = 0xfe, [15] = 0x01 };
static const struct rte_ether_addr us_mac = {{0x02, 0, 0, 0, 0, 0x01}};
static const struct rte_ether_addr p1_mac = {{0x02, 0, 0, 0, 1, 0x01}};
static const struct rte_ether_addr peer_mac = {{0x02, 0, 0, 0, 0, 0x22}};

static struct rnic_stack st;
static struct rnic_port P[2];
static struct rnic_worker W[1];
static struct rte_mempool *pool;
static unsigned pool_baseline;
static unsigned h_calls;
static uint32_t h_l3_len;       /* m->l3_len of the last frame the handler took */
static unsigned ptb_calls;
static uint32_t ptb_mtu;
static uint8_t ptb_local[16], ptb_remote[16], ptb_l4[8];

static void h_pmtu6(struct rnic_worker *w, const uint8_t local[16], const uint8_t remote[16],
		    const uint8_t *l4, uint32_t mtu)
{
	(void)w;
	ptb_calls++;
	ptb_mtu = mtu;
	memcpy(ptb_local, local, 16);
	memcpy(ptb_remote, remote, 16);
	memcpy(ptb_l4, l4, 8);
}

static void h_input(struct rnic_worker *w, struct rnic_port *p, struct rte_mbuf *m)
{
	(void)w; (void)p;
	h_calls++;
	h_l3_len = m->l3_len;
	rte_pktmbuf_free(m);
}

/* ---- frames ---- */

static uint64_t total_drops(void)
{
	uint64_t t = 0;
	for (int c = 0; c < RNIC_DROP_MAX; c++)
		t += W[0].drops[c];
	return t;
}

static void rx(struct rnic_port *p, const void *f, size_t len)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(pool);
	assert_non_null(m);
	if (len)
		memcpy(rte_pktmbuf_append(m, (uint16_t)len), f, len);
	rnic_net_input(&W[0], p, m);
}

/* Exactly one new drop of cause @p c, nothing sent, no handler called. */
static void rx_expect_drop(const void *f, size_t len, enum rnic_drop_cause c)
{
	uint64_t before = W[0].drops[c], tot = total_drops();
	unsigned ntx = stub_n_tx, calls = h_calls;
	rx(&P[0], f, len);
	if (W[0].drops[c] - before != 1 || total_drops() - tot != 1)
		fail_msg("len %zu: expected one %s drop (got %lu, total %lu)", len,
			 rnic_drop_name(c), (unsigned long)(W[0].drops[c] - before),
			 (unsigned long)(total_drops() - tot));
	assert_int_equal(stub_n_tx, ntx);
	assert_int_equal(h_calls, calls);
}

/* RFC 1071 over the IPv6 pseudo header and @p n bytes of @p l4, computed
 * here byte by byte (independent of lib/net). */
static uint16_t ref_cksum6(const uint8_t *src, const uint8_t *dst, uint8_t nh,
			   const uint8_t *l4, size_t n)
{
	uint32_t s = 0;
	for (int i = 0; i < 16; i += 2)
		s += (uint32_t)(src[i] << 8 | src[i + 1]) + (uint32_t)(dst[i] << 8 | dst[i + 1]);
	s += (uint32_t)(n >> 16) + (uint32_t)(n & 0xffff) + nh;
	for (size_t i = 0; i + 1 < n; i += 2)
		s += (uint32_t)l4[i] << 8 | l4[i + 1];
	if (n & 1)
		s += (uint32_t)l4[n - 1] << 8;
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)~s;
}

/* Ethernet + IPv6 (+ @p ext extension bytes, whose first byte's next
 * header the caller set) + @p l4 of @p n bytes. @return the frame length. */
static size_t build6(uint8_t *f, const struct rte_ether_addr *edst, const uint8_t *src,
		     const uint8_t *dst, uint8_t nh, uint8_t hops, const uint8_t *ext,
		     size_t elen, const uint8_t *l4, size_t n)
{
	memcpy(f, edst, 6);
	memcpy(f + 6, &peer_mac, 6);
	f[12] = 0x86;
	f[13] = 0xdd;
	uint8_t *ip = f + 14;
	memset(ip, 0, 40);
	ip[0] = 0x60;
	ip[4] = (uint8_t)((elen + n) >> 8);
	ip[5] = (uint8_t)(elen + n);
	ip[6] = nh;
	ip[7] = hops;
	memcpy(ip + 8, src, 16);
	memcpy(ip + 24, dst, 16);
	/* memcpy's source may not be NULL, even for 0 bytes */
	if (elen > 0)
		memcpy(ip + 40, ext, elen);
	if (n > 0)
		memcpy(ip + 40 + elen, l4, n);
	return 54 + elen + n;
}

/* An ICMPv6 message (checksum filled in) in a frame. */
static size_t build_icmp6(uint8_t *f, const struct rte_ether_addr *edst, const uint8_t *src,
			  const uint8_t *dst, uint8_t hops, uint8_t *msg, size_t n)
{
	msg[2] = msg[3] = 0;
	uint16_t c = ref_cksum6(src, dst, 58, msg, n);
	msg[2] = (uint8_t)(c >> 8);
	msg[3] = (uint8_t)c;
	return build6(f, edst, src, dst, 58, hops, NULL, 0, msg, n);
}

static size_t build_echo6(uint8_t *f, const uint8_t *dst, size_t data)
{
	uint8_t msg[128] = { 128, 0, 0, 0, 0x12, 0x34, 0x00, 0x07 };
	for (size_t i = 0; i < data; i++)
		msg[8 + i] = (uint8_t)(i * 7);
	return build_icmp6(f, &us_mac, PEER6, dst, 64, msg, 8 + data);
}

/* A neighbour solicitation for @p target from @p src (:: for DAD), with
 * the source link-layer option when @p slla. */
static size_t build_ns(uint8_t *f, const uint8_t *src, const uint8_t *target, bool slla,
		       uint8_t hops)
{
	uint8_t msg[32] = { 135 };
	uint8_t dst[16] = { 0xff, 0x02, [11] = 0x01, [12] = 0xff };
	memcpy(dst + 13, target + 13, 3);
	memcpy(msg + 8, target, 16);
	msg[24] = 1;
	msg[25] = 1;
	memcpy(msg + 26, &peer_mac, 6);
	struct rte_ether_addr e = {{ 0x33, 0x33, 0xff, target[13], target[14], target[15] }};
	return build_icmp6(f, &e, src, dst, hops, msg, slla ? 32 : 24);
}

static size_t build_na(uint8_t *f, const uint8_t *dst, const uint8_t *target, uint8_t flags,
		       const struct rte_ether_addr *tlla)
{
	uint8_t msg[32] = { 136, 0, 0, 0, flags };
	memcpy(msg + 8, target, 16);
	msg[24] = 2;
	msg[25] = 1;
	if (tlla != NULL)
		memcpy(msg + 26, tlla, 6);
	return build_icmp6(f, rnic_ip6_is_multicast(dst) ? &(struct rte_ether_addr){{0x33, 0x33,
			   0, 0, 0, 1}} : &us_mac, PEER6, dst, 255, msg, tlla ? 32 : 24);
}

static const uint8_t *tx_bytes(unsigned i)
{
	assert_true(i < stub_n_tx);
	assert_int_equal(stub_tx[i].m->nb_segs, 1);
	return rte_pktmbuf_mtod(stub_tx[i].m, const uint8_t *);
}

/* The ICMPv6 checksum of captured frame @p i is right (recomputed here). */
static void assert_icmp6_ok(unsigned i)
{
	const uint8_t *b = tx_bytes(i);
	size_t len = rte_pktmbuf_pkt_len(stub_tx[i].m);
	assert_int_equal(b[12] << 8 | b[13], 0x86dd);
	size_t plen = (size_t)(b[18] << 8 | b[19]);
	assert_int_equal(len, 54 + plen);
	assert_int_equal(b[20], 58);
	assert_int_equal(ref_cksum6(b + 22, b + 38, 58, b + 54, plen), 0);
}

static struct nd_entry *nd_entry_of(const uint8_t *ip)
{
	for (unsigned i = 0; i < RNIC_ND_ENTRIES; i++)
		if (P[0].nd->e[i].state != ND_FREE && !memcmp(P[0].nd->e[i].ip, ip, 16))
			return &P[0].nd->e[i];
	return NULL;
}

static uint64_t sec_tsc(double s)
{
	return (uint64_t)(s * (double)rte_get_tsc_hz());
}

/* ---- tests ---- */

/* The port's addresses: the link-local one from the MAC, then the configured. */
static void addresses(void **state)
{
	(void)state;
	assert_int_equal(P[0].n_ip6, 2);
	assert_memory_equal(P[0].ip6[0], US_LL, 16);
	assert_memory_equal(P[0].ip6[1], US6, 16);
	assert_true(rnic_port_has_ip6(&P[0], US6));
	assert_true(rnic_port_has_ip6(&P[0], US_LL));
	assert_false(rnic_port_has_ip6(&P[0], PEER6));
	assert_int_equal(P[1].n_ip6, 0);
	assert_true(rnic_port_on_link6(&P[0], PEER6));
	assert_false(rnic_port_on_link6(&P[0], (const uint8_t[16]){ 0x20, 0x02 }));
	uint8_t src[16];
	assert_int_equal(rnic_port_ip6_src(&P[0], PEER6, src), 0);
	assert_memory_equal(src, US6, 16);
	assert_int_equal(rnic_port_ip6_src(&P[0], (const uint8_t[16]){ 0xfe, 0x80, [15] = 9 },
					   src), 0);
	assert_memory_equal(src, US_LL, 16);
	assert_true(rnic_net_route6(&st, PEER6) == &P[0]);
	assert_null(rnic_net_route6(&st, (const uint8_t[16]){ 0x20, 0x02 }));
}

/* NS for our address: an NA with S and O, our MAC, hop limit 255, back to
 * the soliciting node; its address is learnt STALE (RFC 4861 7.2.3). While
 * the address is optimistic (DAD running) O is clear (RFC 4429 3.3). */
static void ns_gets_na_bytes(void **state)
{
	uint8_t f[128];
	(void)state;
	rx(&P[0], f, build_ns(f, PEER6, US6, true, 255));
	assert_int_equal(stub_n_tx, 1);
	assert_int_equal(tx_bytes(0)[58], 0x40);    /* solicited, optimistic: no O */
	stub_reset();
	P[0].ip6_state[1] = RNIC_IP6_PREFERRED;
	rx(&P[0], f, build_ns(f, PEER6, US6, true, 255));
	assert_int_equal(stub_n_tx, 1);
	const uint8_t *b = tx_bytes(0);
	assert_memory_equal(b, &peer_mac, 6);
	assert_memory_equal(b + 6, &us_mac, 6);
	assert_int_equal(b[21], 255);
	assert_memory_equal(b + 22, US6, 16);
	assert_memory_equal(b + 38, PEER6, 16);
	assert_int_equal(b[54], 136);
	assert_int_equal(b[58], 0x60);               /* solicited, override */
	assert_memory_equal(b + 62, US6, 16);
	assert_int_equal(b[78], 2);                  /* target link-layer address */
	assert_memory_equal(b + 80, &us_mac, 6);
	assert_icmp6_ok(0);
	struct nd_entry *e = nd_entry_of(PEER6);
	assert_non_null(e);
	assert_int_equal(e->state, ND_STALE);
	assert_memory_equal(&e->mac, &peer_mac, 6);
	/* for the link-local address too */
	rx(&P[0], f, build_ns(f, PEER6, US_LL, true, 255));
	assert_int_equal(stub_n_tx, 2);
	assert_memory_equal(tx_bytes(1) + 62, US_LL, 16);
}

/* Echo request to our address (and to all-nodes): the reply bytes. */
static void echo_reply_bytes(void **state)
{
	uint8_t f[256];
	(void)state;
	rx(&P[0], f, build_ns(f, PEER6, US6, true, 255));   /* learn the peer */
	stub_reset();
	size_t n = build_echo6(f, US6, 41);
	rx(&P[0], f, n);
	assert_int_equal(stub_n_tx, 1);
	const uint8_t *b = tx_bytes(0);
	assert_int_equal(rte_pktmbuf_pkt_len(stub_tx[0].m), n);
	assert_memory_equal(b, &peer_mac, 6);
	assert_int_equal(b[21], RNIC_IP6_HOP_LIMIT);
	assert_memory_equal(b + 22, US6, 16);
	assert_memory_equal(b + 38, PEER6, 16);
	assert_int_equal(b[54], 129);
	assert_memory_equal(b + 58, f + 58, n - 58);        /* ident, seq, data */
	assert_icmp6_ok(0);
	assert_int_equal(W[0].stats.icmp_echo_replies, 1);
	/* to all-nodes: answered from our address for the peer */
	uint8_t msg[16] = { 128, 0, 0, 0, 0, 1, 0, 1 };
	rx(&P[0], f, build_icmp6(f, &(struct rte_ether_addr){{0x33, 0x33, 0, 0, 0, 1}}, PEER6,
				 ALL_NODES, 64, msg, 16));
	assert_int_equal(stub_n_tx, 2);
	assert_memory_equal(tx_bytes(1) + 22, US6, 16);
}

/* Output to an unknown neighbour: a multicast NS, the frame held; the
 * solicited NA releases it (REACHABLE). Unanswered: three NS a second
 * apart, then the held frames are dropped as nd_unresolved. */
static void resolution_and_timeout(void **state)
{
	uint8_t f[128];
	(void)state;
	P[0].ip6_state[1] = RNIC_IP6_PREFERRED;     /* DAD over: the NS carries our MAC */
	struct rte_mbuf *m = rte_pktmbuf_alloc(pool);
	memset(rte_pktmbuf_append(m, 20), 0xab, 20);
	assert_int_equal(rnic_net_output_ipv6(&W[0], NULL, m, NULL, PEER6, 253, 0), 0);
	assert_int_equal(stub_n_tx, 1);
	const uint8_t *b = tx_bytes(0);
	static const uint8_t sn_mac[6] = { 0x33, 0x33, 0xff, 0, 0, 0x02 };
	assert_memory_equal(b, sn_mac, 6);
	assert_int_equal(b[54], 135);
	assert_int_equal(b[21], 255);
	assert_memory_equal(b + 62, PEER6, 16);
	assert_int_equal(b[78], 1);                   /* our link-layer address */
	assert_memory_equal(b + 80, &us_mac, 6);
	assert_icmp6_ok(0);
	assert_int_equal(nd_entry_of(PEER6)->state, ND_INCOMPLETE);
	assert_int_equal(nd_entry_of(PEER6)->n_pending, 1);
	rx(&P[0], f, build_na(f, US6, PEER6, 0x60, &peer_mac));
	assert_int_equal(stub_n_tx, 2);
	b = tx_bytes(1);
	assert_memory_equal(b, &peer_mac, 6);
	assert_int_equal(b[20], 253);
	assert_int_equal(b[21], RNIC_IP6_HOP_LIMIT);
	assert_int_equal(nd_entry_of(PEER6)->state, ND_REACHABLE);

	/* another neighbour never answers */
	stub_reset();
	m = rte_pktmbuf_alloc(pool);
	rte_pktmbuf_append(m, 20);
	assert_int_equal(rnic_net_output_ipv6(&W[0], &P[0], m, NULL, OTHER6, 253, 0), 0);
	struct nd_entry *e = nd_entry_of(OTHER6);
	for (int k = 0; k < 2; k++) {
		e->last_ns_tsc -= sec_tsc(1.1);
		rnic_nd_poll(&W[0], &P[0]);
	}
	assert_int_equal(stub_n_tx, 3);               /* ND_MAX_MULTICAST_SOLICIT */
	uint64_t before = W[0].drops[RNIC_DROP_ND_UNRESOLVED];
	e->last_ns_tsc -= sec_tsc(1.1);
	rnic_nd_poll(&W[0], &P[0]);
	assert_null(nd_entry_of(OTHER6));
	assert_int_equal(W[0].drops[RNIC_DROP_ND_UNRESOLVED] - before, 1);
	assert_int_equal(stub_n_tx, 3);
}

/* REACHABLE -> STALE (time) -> DELAY (used) -> PROBE (5 s: unicast NS) ->
 * REACHABLE (solicited NA); unanswered probes free the entry. */
static void reachability_states(void **state)
{
	uint8_t f[128];
	(void)state;
	rx(&P[0], f, build_ns(f, PEER6, US6, true, 255));
	rx(&P[0], f, build_na(f, US6, PEER6, 0x60, &peer_mac));
	struct nd_entry *e = nd_entry_of(PEER6);
	assert_int_equal(e->state, ND_REACHABLE);
	e->state_tsc -= sec_tsc(31);
	rnic_nd_poll(&W[0], &P[0]);
	assert_int_equal(e->state, ND_STALE);
	stub_reset();
	struct rte_mbuf *m = rte_pktmbuf_alloc(pool);
	rte_pktmbuf_append(m, 8);
	rnic_net_output_ipv6(&W[0], &P[0], m, NULL, PEER6, 253, 0);
	assert_int_equal(stub_n_tx, 1);               /* sent at once, no NS */
	assert_int_equal(e->state, ND_DELAY);
	e->state_tsc -= sec_tsc(5.1);
	rnic_nd_poll(&W[0], &P[0]);
	assert_int_equal(e->state, ND_PROBE);
	assert_int_equal(stub_n_tx, 2);
	const uint8_t *b = tx_bytes(1);
	assert_memory_equal(b, &peer_mac, 6);         /* unicast probe */
	assert_memory_equal(b + 38, PEER6, 16);
	assert_int_equal(b[54], 135);
	rx(&P[0], f, build_na(f, US6, PEER6, 0x40, NULL));   /* S without the option */
	assert_int_equal(e->state, ND_REACHABLE);
	/* probes unanswered */
	e->state = ND_PROBE;
	e->probes = 0;
	for (int k = 0; k < 4; k++) {
		e->last_ns_tsc -= sec_tsc(1.1);
		rnic_nd_poll(&W[0], &P[0]);
	}
	assert_null(nd_entry_of(PEER6));
	assert_int_equal(P[0].nd->timeouts, 1);
}

/* A non-override NA with another address leaves a REACHABLE entry's MAC
 * and makes it STALE; an override one replaces it (7.2.5). */
static void na_override_rules(void **state)
{
	uint8_t f[128];
	static const struct rte_ether_addr other = {{0x02, 0, 0, 0, 0, 0x99}};
	(void)state;
	rx(&P[0], f, build_ns(f, PEER6, US6, true, 255));
	rx(&P[0], f, build_na(f, US6, PEER6, 0x40, &peer_mac));
	struct nd_entry *e = nd_entry_of(PEER6);
	rx(&P[0], f, build_na(f, US6, PEER6, 0x40, &other));
	assert_int_equal(e->state, ND_STALE);
	assert_memory_equal(&e->mac, &peer_mac, 6);
	rx(&P[0], f, build_na(f, ALL_NODES, PEER6, 0x20, &other));
	assert_memory_equal(&e->mac, &other, 6);
	assert_int_equal(e->state, ND_STALE);
}

/* DAD: probes from :: for each address, unsolicited NAs; an NA for our
 * address from another node marks it duplicate: no longer answered, not
 * used as a source. Without a conflict the address becomes preferred. */
static void dad_and_announce(void **state)
{
	uint8_t f[128];
	(void)state;
	rnic_nd_announce(&W[0], &P[0]);
	assert_int_equal(stub_n_tx, 3);               /* 2 DAD probes, 1 NA */
	const uint8_t *b = tx_bytes(0);
	static const uint8_t unspec[16];
	assert_memory_equal(b + 22, unspec, 16);
	assert_int_equal(b[54], 135);
	/* no link-layer option; a nonce option (RFC 7527) */
	assert_int_equal(rte_pktmbuf_pkt_len(stub_tx[0].m), 54 + 24 + 8);
	assert_int_equal(b[78], 14);
	assert_int_equal(b[79], 1);
	assert_memory_equal(b + 80, P[0].nd->dad_nonce, 6);
	assert_icmp6_ok(0);
	b = tx_bytes(2);
	assert_int_equal(b[54], 136);
	assert_int_equal(b[58], 0x00);                /* unsolicited; optimistic: no O */
	assert_memory_equal(b + 38, ALL_NODES, 16);
	assert_memory_equal(b + 62, US6, 16);
	/* another node has our global address */
	rx(&P[0], f, build_na(f, ALL_NODES, US6, 0x20, &peer_mac));
	assert_int_equal(P[0].ip6_state[1], RNIC_IP6_DUPLICATE);
	assert_int_equal(P[0].nd->dad_conflicts, 1);
	assert_false(rnic_port_has_ip6(&P[0], US6));
	uint8_t src[16];
	assert_int_not_equal(rnic_port_ip6_src(&P[0], PEER6, src), 0);
	stub_reset();
	rx_expect_drop(f, build_ns(f, PEER6, US6, true, 255), RNIC_DROP_ND_NOT_FOR_US);
	/* the link-local address passes DAD */
	P[0].nd->dad_start_tsc -= sec_tsc(1.1);
	rnic_nd_poll(&W[0], &P[0]);
	assert_int_equal(P[0].ip6_state[0], RNIC_IP6_PREFERRED);
	/* a DAD probe of another node for an address we still probe */
	P[0].ip6_state[0] = RNIC_IP6_OPTIMISTIC;
	static const uint8_t zero[16];
	rx(&P[0], f, build_ns(f, zero, US_LL, false, 255));
	assert_int_equal(P[0].ip6_state[0], RNIC_IP6_DUPLICATE);
}

/* Every header malformation has its cause. */
static void ipv6_each_malformation(void **state)
{
	uint8_t f[256], g[256];
	(void)state;
	size_t n = build_echo6(f, US6, 8);

	memcpy(g, f, n);
	g[14] = 0x40;
	rx_expect_drop(g, n, RNIC_DROP_IP6_VERSION);
	memcpy(g, f, n);
	g[19] += 1;                                   /* payload longer than the frame */
	rx_expect_drop(g, n, RNIC_DROP_IP6_PAYLOAD_LEN);
	static const uint8_t loopback[16] = { [15] = 1 };
	static const uint8_t mapped[16] = { [10] = 0xff, [11] = 0xff, 10, 0, 0, 1 };
	const uint8_t *bad_src[] = { ALL_NODES, US6, loopback, mapped };
	for (size_t i = 0; i < RTE_DIM(bad_src); i++) {
		memcpy(g, f, n);
		memcpy(g + 22, bad_src[i], 16);
		rx_expect_drop(g, n, RNIC_DROP_IP6_BAD_SRC);
	}
	static const uint8_t other_sn[16] = { 0xff, 0x02, [11] = 1, 0xff, 0, 0, 0x77 };
	static const uint8_t all_routers[16] = { 0xff, 0x02, [15] = 2 };
	const uint8_t *not_ours[] = { OTHER6, other_sn, all_routers };
	for (size_t i = 0; i < RTE_DIM(not_ours); i++) {
		memcpy(g, f, n);
		memcpy(g + 38, not_ours[i], 16);
		rx_expect_drop(g, n, RNIC_DROP_IP6_NOT_FOR_US);
	}
	/* extension headers */
	uint8_t l4[8] = { 128, 0, 0, 0 };
	static const struct { uint8_t nh; uint8_t ext[16]; size_t elen; enum rnic_drop_cause c; }
	ext[] = {
		/* hop-by-hop with an option that must not be skipped (type 0x80) */
		{ 0, { 58, 0, 0x80, 2, 0, 0, 1, 0 }, 8, RNIC_DROP_IP6_EXT_HDR },
		/* a routing header with segments left */
		{ 43, { 58, 0, 0, 1, 0, 0, 0, 0 }, 8, RNIC_DROP_IP6_EXT_HDR },
		/* hop-by-hop after a destination options header */
		{ 60, { 0, 0, 1, 4, 0, 0, 0, 0, 58, 0, 1, 4, 0, 0, 0, 0 }, 16,
		  RNIC_DROP_IP6_EXT_HDR },
		/* an option running past its header */
		{ 60, { 58, 0, 1, 9, 0, 0, 0, 0 }, 8, RNIC_DROP_IP6_EXT_HDR },
		/* a real fragment (offset 8) */
		{ 44, { 58, 0, 0, 8, 0, 0, 0, 1 }, 8, RNIC_DROP_IP6_FRAGMENT },
		/* ESP, no next header */
		{ 50, { 0 }, 0, RNIC_DROP_IP6_PROTO },
		{ 59, { 0 }, 0, RNIC_DROP_IP6_PROTO },
		/* UDP is taken (RoCEv2): these 8 bytes say length 0 */
		{ 17, { 0 }, 0, RNIC_DROP_UDP_LEN },
	};
	for (size_t i = 0; i < RTE_DIM(ext); i++) {
		size_t m = build6(g, &us_mac, PEER6, US6, ext[i].nh, 64, ext[i].ext, ext[i].elen,
				  l4, sizeof(l4));
		rx_expect_drop(g, m, ext[i].c);
	}
	/* a header length running past the datagram */
	size_t m = build6(g, &us_mac, PEER6, US6, 60, 64, (const uint8_t[8]){ 58, 1, 1, 4 }, 8,
			  NULL, 0);
	rx_expect_drop(g, m, RNIC_DROP_IP6_EXT_HDR);
	/* ICMPv6 */
	memcpy(g, f, n);
	g[60] ^= 0x01;
	rx_expect_drop(g, n, RNIC_DROP_ICMP6_CHECKSUM);
	uint8_t msg[8] = { 1, 4, 0, 0 };              /* destination unreachable */
	rx_expect_drop(g, build_icmp6(g, &us_mac, PEER6, US6, 64, msg, 8), RNIC_DROP_ICMP6_TYPE);
	rx_expect_drop(g, build_icmp6(g, &us_mac, PEER6, US6, 64, msg, 3), RNIC_DROP_ICMP6_SHORT);
	/* ND */
	rx_expect_drop(g, build_ns(g, PEER6, US6, true, 254), RNIC_DROP_ND_MALFORMED);
	rx_expect_drop(g, build_ns(g, (const uint8_t[16]){ 0 }, US6, true, 255),
		       RNIC_DROP_ND_MALFORMED);       /* DAD probe with an option */
	rx_expect_drop(g, build_ns(g, PEER6, OTHER6, true, 255), RNIC_DROP_IP6_NOT_FOR_US);
	size_t k = build_ns(g, PEER6, US6, true, 255);
	g[54 + 25] = 0;                                /* option length 0 */
	g[56] = g[57] = 0;
	uint16_t c = ref_cksum6(PEER6, g + 38, 58, g + 54, k - 54);
	g[56] = (uint8_t)(c >> 8);
	g[57] = (uint8_t)c;
	rx_expect_drop(g, k, RNIC_DROP_ND_MALFORMED);
	rx_expect_drop(g, build_na(g, ALL_NODES, PEER6, 0x40, &peer_mac), RNIC_DROP_ND_MALFORMED);
}

/* What rnic takes: an atomic fragment and skippable options are walked; a
 * TCP segment reaches the handler with l3_len past the extension headers. */
static void ipv6_accepts(void **state)
{
	uint8_t g[256];
	(void)state;
	uint8_t tcp[20] = { 0 };
	static const uint8_t ext[24] = { 44, 0, 1, 4, 0, 0, 0, 0,   /* hop-by-hop: PadN */
					 60, 0, 0, 0, 0, 0, 0, 0,   /* atomic fragment */
					 6, 0, 0x1e, 4, 0, 0, 0, 0 }; /* dest. opts: type 0x1e */
	size_t n = build6(g, &us_mac, PEER6, US6, 0, 64, ext, 24, tcp, 20);
	uint64_t tot = total_drops();
	rx(&P[0], g, n + 4);                           /* Ethernet padding too */
	assert_int_equal(h_calls, 1);
	assert_int_equal(total_drops(), tot);
	/* to an IPv4-only port: an unknown EtherType there, as before */
	memcpy(g, &p1_mac, 6);
	rx(&P[1], g, n);
	assert_int_equal(W[0].drops[RNIC_DROP_ETH_TYPE], 1);
	/* to the multicast group of an IPv4-only port: not for us */
	uint8_t f[128];
	size_t k = build_ns(f, PEER6, US6, true, 255);
	rx(&P[1], f, k);
	assert_int_equal(W[0].drops[RNIC_DROP_ETH_NOT_FOR_US], 1);
}

/* A destination options header of @p len bytes (a multiple of 8) before
 * TCP, filled with PadN options, in @p ext. */
static size_t dstopts_of(uint8_t *ext, size_t len)
{
	memset(ext, 0, len);
	ext[0] = 6;
	ext[1] = (uint8_t)(len / 8 - 1);
	for (size_t i = 2; i < len;) {
		size_t pad = len - i < 257 ? len - i : 255;
		if (len - i - pad == 1)   /* never leave a lone byte */
			pad--;
		ext[i] = 1;
		ext[i + 1] = (uint8_t)(pad - 2);
		i += pad;
	}
	return len;
}

/* The header chain is bounded (256 bytes with the fixed header): a
 * 512-byte options header wrapped the 9-bit m->l3_len to 40 and the
 * transport read its header from inside the options; now it is dropped as
 * ip6_ext_chain_long, and a chain at the bound reaches the transport with
 * its true length. */
static void ipv6_long_chain(void **state)
{
	static uint8_t g[1024], ext[600];
	uint8_t tcp[20] = { 0x13, 0x89, 0x9c, 0x40 };
	(void)state;
	size_t e = dstopts_of(ext, 512);
	rx_expect_drop(g, build6(g, &us_mac, PEER6, US6, 60, 64, ext, e, tcp, 20),
		       RNIC_DROP_IP6_EXT_CHAIN);
	e = dstopts_of(ext, 216 + 8);   /* one 8-byte unit over */
	rx_expect_drop(g, build6(g, &us_mac, PEER6, US6, 60, 64, ext, e, tcp, 20),
		       RNIC_DROP_IP6_EXT_CHAIN);
	e = dstopts_of(ext, 216);
	uint64_t tot = total_drops();
	rx(&P[0], g, build6(g, &us_mac, PEER6, US6, 60, 64, ext, e, tcp, 20));
	assert_int_equal(total_drops(), tot);
	assert_int_equal(h_calls, 1);
	assert_int_equal(h_l3_len, 256);
	/* nine headers: more than the walk takes */
	uint8_t nine[72];
	for (int i = 0; i < 9; i++) {
		memset(nine + 8 * i, 0, 8);
		nine[8 * i] = i < 8 ? 60 : 6;
		nine[8 * i + 2] = 1;
		nine[8 * i + 3] = 4;
	}
	rx_expect_drop(g, build6(g, &us_mac, PEER6, US6, 60, 64, nine, 72, tcp, 20),
		       RNIC_DROP_IP6_EXT_CHAIN);
}

/* Every prefix of a valid frame is dropped with exactly one cause and
 * answered with nothing; the whole frame is answered. */
static void truncation_every_length(void **state)
{
	uint8_t f[2][256];
	size_t len[2];
	(void)state;
	len[0] = build_ns(f[0], PEER6, US6, true, 255);
	len[1] = build_echo6(f[1], US6, 33);
	for (int k = 0; k < 2; k++) {
		for (size_t l = 0; l < len[k]; l++) {
			uint64_t tot = total_drops();
			unsigned ntx = stub_n_tx;
			rx(&P[0], f[k], l);
			if (total_drops() - tot != 1 || stub_n_tx != ntx)
				fail_msg("frame %d cut at %zu: %lu drops, %u sent", k, l,
					 (unsigned long)(total_drops() - tot), stub_n_tx - ntx);
		}
		rx(&P[0], f[k], len[k]);
	}
	assert_int_equal(stub_n_tx, 2);
}

/* A packet too big quoting a TCP segment of ours reaches the transport's
 * hook with the path MTU, on the flow's worker (steered there first); a
 * short one, one quoting someone else's datagram or a protocol without
 * the hook is dropped with its cause. */
static size_t build_ptb(uint8_t *f, const uint8_t *qsrc, uint8_t qproto, uint32_t mtu,
			size_t quote)
{
	uint8_t msg[8 + 40 + 20] = { 2, 0, 0, 0, (uint8_t)(mtu >> 24), (uint8_t)(mtu >> 16),
				     (uint8_t)(mtu >> 8), (uint8_t)mtu };
	uint8_t *q = msg + 8;
	q[0] = 0x60;
	q[5] = 20;
	q[6] = qproto;
	q[7] = 64;
	memcpy(q + 8, qsrc, 16);
	memcpy(q + 24, PEER6, 16);
	static const uint8_t tcp[20] = { 0x13, 0x89, 0x9c, 0x40, 0, 0, 0x10, 0 };
	memcpy(q + 40, tcp, 20);
	return build_icmp6(f, &us_mac, PEER6, US6, 64, msg, 8 + 40 + quote);
}

static void packet_too_big(void **state)
{
	uint8_t f[256];
	(void)state;
	rx(&P[0], f, build_ptb(f, US6, IPPROTO_TCP, 1280, 20));
	assert_int_equal(ptb_calls, 1);
	assert_int_equal(ptb_mtu, 1280);
	assert_memory_equal(ptb_local, US6, 16);
	assert_memory_equal(ptb_remote, PEER6, 16);
	assert_int_equal(ptb_l4[0] << 8 | ptb_l4[1], 5001);
	assert_int_equal(P[0].nd->ptb_in, 1);
	assert_int_equal(stub_n_tx, 0);
	/* another worker owns the flow: the message goes there */
	stub_flow_owner6 = 1;
	rx(&P[0], f, build_ptb(f, US6, IPPROTO_TCP, 1400, 20));
	assert_int_equal(stub_n_redirects, 1);
	assert_int_equal(stub_redirect_owner, 1);
	assert_int_equal(ptb_calls, 1);
	stub_flow_owner6 = 0;
	rx_expect_drop(f, build_ptb(f, US6, IPPROTO_TCP, 1280, 7), RNIC_DROP_ICMP6_SHORT);
	rx_expect_drop(f, build_ptb(f, OTHER6, IPPROTO_TCP, 1280, 20), RNIC_DROP_ICMP6_TYPE);
	rx_expect_drop(f, build_ptb(f, US6, IPPROTO_UDP, 1280, 20), RNIC_DROP_ICMP6_TYPE);
	assert_int_equal(ptb_calls, 1);
}

/* Failover: once port 1 serves port 0's addresses (taken_by), port 1
 * answers solicitations for port 0's global address (not its link-local
 * one, which stays with its link), announces it with an unsolicited
 * advertisement carrying port 1's MAC, and port 0 answers for it no more. */
static void failover_takeover(void **state)
{
	uint8_t f[128];
	static const uint8_t P1_6[16] = { 0x20, 0x01, 0x0d, 0xb8, [15] = 0x11 };
	(void)state;
	/* port 1 with an IPv6 address on the same prefix */
	rnic_arp_table_free(&P[1]);
	memcpy(P[1].cfg.ip6[0].addr, P1_6, 16);
	P[1].cfg.ip6[0].prefix_len = 64;
	P[1].cfg.n_ip6 = 1;
	assert_int_equal(rnic_arp_table_create(&P[1]), 0);
	assert_false(rnic_port_has_ip6(&P[1], US6));
	P[0].ip6_state[1] = RNIC_IP6_PREFERRED;   /* DAD passed long ago */
	P[0].taken_by = 2;      /* port 1 (index 1) serves port 0's addresses */
	assert_false(rnic_port_has_ip6(&P[0], US6));
	assert_true(rnic_port_has_ip6(&P[1], US6));
	assert_false(rnic_port_has_ip6(&P[1], US_LL));
	rnic_nd_announce(&W[0], &P[1]);
	bool announced = false;
	for (unsigned i = 0; i < stub_n_tx; i++) {
		const uint8_t *b = tx_bytes(i);
		if (b[54] == 136 && !memcmp(b + 62, US6, 16)) {
			assert_int_equal(stub_tx[i].port, 1);
			assert_int_equal(b[58], 0x20);               /* override */
			assert_memory_equal(b + 80, &p1_mac, 6);     /* the survivor's MAC */
			assert_memory_equal(b + 38, ALL_NODES, 16);
			assert_icmp6_ok(i);
			announced = true;
		}
	}
	assert_true(announced);
	stub_reset();
	/* a solicitation for it on port 1 is answered with port 1's MAC */
	size_t n = build_ns(f, PEER6, US6, true, 255);
	rx(&P[1], f, n);
	assert_int_equal(stub_n_tx, 1);
	assert_memory_equal(tx_bytes(0) + 80, &p1_mac, 6);
	/* and no longer on port 0 (its solicited-node group is still its own) */
	rx_expect_drop(f, n, RNIC_DROP_ND_NOT_FOR_US);
	P[0].taken_by = 0;
}

/* ---- issue 27: hostile neighbours ---- */

/* @p n addresses of 2001:db8::/64 in the set of @p ip in port 0's
 * neighbour cache (neigh.h's hash with the table's seed). */
static void nd_same_set(const uint8_t *ip, uint8_t (*out)[16], unsigned n)
{
	uint32_t seed = P[0].nd->seed;
	unsigned want = rnic_neigh_set(rnic_neigh_hash(ip, 16, seed)), got = 0;
	uint8_t c[16];
	memcpy(c, US6, 16);
	for (uint32_t k = 0x100; got < n && k < 0x1000000; k++) {
		c[13] = (uint8_t)(k >> 16);
		c[14] = (uint8_t)(k >> 8);
		c[15] = (uint8_t)k;
		if (memcmp(c, ip, 16) != 0 && rnic_neigh_set(rnic_neigh_hash(c, 16, seed)) == want)
			memcpy(out[got++], c, 16);
	}
	assert_int_equal(got, n);
}

/* Resolve @p ip ourselves: a frame to it, a solicited NA from @p mac. */
static void nd_resolve(const uint8_t *ip, const struct rte_ether_addr *mac)
{
	uint8_t f[128], msg[32] = { 136, 0, 0, 0, 0x60 };
	struct rte_mbuf *m = rte_pktmbuf_alloc(pool);
	rte_pktmbuf_append(m, 8);
	rnic_net_output_ipv6(&W[0], &P[0], m, NULL, ip, 253, 0);
	memcpy(msg + 8, ip, 16);
	msg[24] = 2;
	msg[25] = 1;
	memcpy(msg + 26, mac, 6);
	rx(&P[0], f, build_icmp6(f, &us_mac, ip, US6, 255, msg, 32));
	assert_int_equal(nd_entry_of(ip)->state, ND_REACHABLE);
}

/*
 * Spoofed solicitations cannot flush the cache: eight neighbours this host
 * resolved fill a set; an NS from a ninth address of that set is answered
 * but its sender not cached (create_refused), and the eight stay (the old
 * cache evicted the oldest). A flood of NSs from 1000 spoofed sources
 * keeps every resolved neighbour, is answered at most
 * RNIC_NEIGH_ANSWERS_PER_WINDOW times a window (nd_rate_limited) and
 * never holds more than RNIC_ND_ENTRIES entries.
 */
static void nd_spoofed_ns_keep_neighbours(void **state)
{
	uint8_t f[128], ip[9][16];
	(void)state;
	P[0].ip6_state[1] = RNIC_IP6_PREFERRED;
	nd_same_set(PEER6, ip, 9);
	for (unsigned i = 0; i < 8; i++) {
		struct rte_ether_addr mac = {{0x02, 7, 0, 0, 0, (uint8_t)i}};
		nd_resolve(ip[i], &mac);
	}
	stub_reset();
	rx(&P[0], f, build_ns(f, ip[8], US6, true, 255));
	assert_int_equal(stub_n_tx, 1);                       /* answered */
	assert_int_equal(tx_bytes(0)[54], 136);
	assert_null(nd_entry_of(ip[8]));
	assert_int_equal(P[0].nd->create_refused, 1);
	for (unsigned i = 0; i < 8; i++)
		assert_non_null(nd_entry_of(ip[i]));
	stub_reset();

	uint8_t src[16];
	memcpy(src, US6, 16);
	const unsigned n = 1000;
	for (unsigned k = 0; k < n; k++) {
		src[8] = 0x5a;
		src[14] = (uint8_t)(k >> 8);
		src[15] = (uint8_t)k;
		rx(&P[0], f, build_ns(f, src, US6, true, 255));
	}
	for (unsigned i = 0; i < 8; i++) {
		struct rte_ether_addr mac = {{0x02, 7, 0, 0, 0, (uint8_t)i}};
		struct nd_entry *e = nd_entry_of(ip[i]);
		assert_non_null(e);
		assert_memory_equal(&e->mac, &mac, 6);
	}
	assert_true(stub_n_tx <= 2 * RNIC_NEIGH_ANSWERS_PER_WINDOW);
	assert_int_equal(W[0].drops[RNIC_DROP_ND_RATE_LIMITED], n - stub_n_tx);
	unsigned used = 0;
	for (unsigned i = 0; i < RNIC_ND_ENTRIES; i++)
		used += P[0].nd->e[i].state != ND_FREE;
	assert_true(used <= RNIC_ND_ENTRIES);
	assert_true(P[0].nd->create_refused > 1);   /* the resolved set is full */
}

/* An NS/NA in an atomic fragment is dropped (RFC 6980 5); our own frames
 * looped back (our MAC, our DAD nonce) are dropped, not taken as another
 * node's duplicate; another node's probe with another nonce still is. */
static void nd_fragment_and_loop(void **state)
{
	uint8_t f[160], msg[32] = { 135 };
	static const uint8_t frag[8] = { 58, 0, 0, 0, 0, 0, 0, 7 };   /* offset 0, M 0 */
	uint8_t sn[16] = { 0xff, 0x02, [11] = 0x01, [12] = 0xff, 0, 0, 0x01 };
	(void)state;
	memcpy(msg + 8, US6, 16);
	msg[24] = 1;
	msg[25] = 1;
	memcpy(msg + 26, &peer_mac, 6);
	uint16_t c = ref_cksum6(PEER6, sn, 58, msg, 32);
	msg[2] = (uint8_t)(c >> 8);
	msg[3] = (uint8_t)c;
	size_t n = build6(f, &(struct rte_ether_addr){{0x33, 0x33, 0xff, 0, 0, 0x01}}, PEER6, sn,
			  44, 255, frag, 8, msg, 32);
	rx_expect_drop(f, n, RNIC_DROP_ND_FRAGMENT);
	/* our own MAC as the source */
	n = build_ns(f, PEER6, US6, true, 255);
	memcpy(f + 6, &us_mac, 6);
	rx_expect_drop(f, n, RNIC_DROP_ND_LOOPED);
	/* our DAD probe comes back: the address stays ours */
	rnic_nd_announce(&W[0], &P[0]);
	assert_int_equal(tx_bytes(1)[54], 135);
	size_t k = rte_pktmbuf_pkt_len(stub_tx[1].m);
	memcpy(f, tx_bytes(1), k);
	memcpy(f + 6, &peer_mac, 6);                    /* as a switch may reflect it */
	rx_expect_drop(f, k, RNIC_DROP_ND_LOOPED);
	assert_int_equal(P[0].ip6_state[1], RNIC_IP6_OPTIMISTIC);
	/* another node's probe, another nonce: a duplicate */
	f[80] ^= 0xff;
	f[56] = f[57] = 0;
	c = ref_cksum6(f + 22, f + 38, 58, f + 54, k - 54);
	f[56] = (uint8_t)(c >> 8);
	f[57] = (uint8_t)c;
	rx(&P[0], f, k);
	assert_int_equal(P[0].ip6_state[1], RNIC_IP6_DUPLICATE);
}

/* A unicast NS without the source option from a neighbour we do not know
 * is answered once we resolved it (RFC 4861 7.2.4): our multicast NS, then
 * the held NA goes to the address its NA gave (the old code sent nothing).
 * From an optimistic address our NS carries no source option (RFC 4429). */
static void nd_unicast_ns_unknown(void **state)
{
	uint8_t f[128], msg[24] = { 135 };
	(void)state;
	memcpy(msg + 8, US6, 16);
	rx(&P[0], f, build_icmp6(f, &us_mac, PEER6, US6, 255, msg, 24));
	assert_int_equal(stub_n_tx, 1);
	const uint8_t *b = tx_bytes(0);
	assert_int_equal(b[54], 135);                    /* resolving the asker */
	assert_memory_equal(b + 62, PEER6, 16);
	assert_int_equal(rte_pktmbuf_pkt_len(stub_tx[0].m), 54 + 24);   /* optimistic: no SLLA */
	assert_icmp6_ok(0);
	assert_int_equal(nd_entry_of(PEER6)->n_pending, 1);
	rx(&P[0], f, build_na(f, US6, PEER6, 0x60, &peer_mac));
	assert_int_equal(stub_n_tx, 2);
	b = tx_bytes(1);
	assert_memory_equal(b, &peer_mac, 6);
	assert_int_equal(b[21], 255);
	assert_int_equal(b[54], 136);
	assert_int_equal(b[58] & 0x40, 0x40);            /* solicited */
	assert_memory_equal(b + 62, US6, 16);
	assert_icmp6_ok(1);
}

/* A ping from a neighbour we do not know is answered straight to the
 * frame's Ethernet source and makes no entry; a unicast NS without the
 * source option from an unknown sender resolves it in an entry unsolicited
 * traffic may take: refused (and counted) in a set of our own neighbours,
 * which all stay. The old code made an entry for both, evicting ours. */
static void nd_spoofed_ping_and_probe(void **state)
{
	uint8_t f[256], ip[9][16], msg[24] = { 135 };
	(void)state;
	rx(&P[0], f, build_echo6(f, US6, 8));
	assert_int_equal(stub_n_tx, 1);
	assert_memory_equal(tx_bytes(0), &peer_mac, 6);
	assert_int_equal(tx_bytes(0)[54], 129);
	assert_null(nd_entry_of(PEER6));
	stub_reset();
	P[0].ip6_state[1] = RNIC_IP6_PREFERRED;
	nd_same_set(OTHER6, ip, 9);
	for (unsigned i = 0; i < 8; i++) {
		struct rte_ether_addr mac = {{0x02, 7, 0, 0, 0, (uint8_t)i}};
		nd_resolve(ip[i], &mac);
	}
	stub_reset();
	memcpy(msg + 8, US6, 16);
	uint64_t before = W[0].drops[RNIC_DROP_ND_PENDING_FULL];
	rx(&P[0], f, build_icmp6(f, &us_mac, ip[8], US6, 255, msg, 24));
	assert_null(nd_entry_of(ip[8]));
	assert_int_equal(P[0].nd->create_refused, 1);
	assert_int_equal(W[0].drops[RNIC_DROP_ND_PENDING_FULL] - before, 1);
	for (unsigned i = 0; i < 8; i++)
		assert_int_equal(nd_entry_of(ip[i])->state, ND_REACHABLE);
}

/* A flood of IPv6 fragments (first, middle, last, of many datagrams) is
 * dropped frame by frame as ip6_fragment: nothing answered, no mbuf kept
 * (rnic does no reassembly). */
static void ipv6_fragment_flood(void **state)
{
	uint8_t f[256], frag[8] = { 58 };
	uint8_t l4[64] = { 128 };
	(void)state;
	const unsigned n = 3000;
	for (unsigned i = 0; i < n; i++) {
		uint16_t fo = (uint16_t)((i % 3) * 8 << 3 | (i % 3 != 2));   /* offset, M */
		frag[2] = (uint8_t)(fo >> 8);
		frag[3] = (uint8_t)fo;
		frag[4] = (uint8_t)(i >> 8);                                  /* identification */
		frag[7] = (uint8_t)i;
		rx(&P[0], f, build6(f, &us_mac, PEER6, US6, 44, 64, frag, 8, l4, sizeof(l4)));
	}
	assert_int_equal(W[0].drops[RNIC_DROP_IP6_FRAGMENT], n);
	assert_int_equal(total_drops(), n);
	assert_int_equal(stub_n_tx, 0);
	assert_int_equal(rte_mempool_in_use_count(pool), pool_baseline);
}

/* Frames held for resolution: at most RNIC_ND_PENDING per address and
 * RNIC_NEIGH_HELD_MAX over the table, the rest dropped and counted (the
 * old cache could hold 16 for each of its 256 entries). */
static void nd_pending_bounds(void **state)
{
	uint8_t dst[16];
	(void)state;
	memcpy(dst, US6, 16);
	dst[8] = 0x77;
	unsigned sent = 0;
	for (unsigned k = 0; k < 64; k++)
		for (unsigned j = 0; j < RNIC_ND_PENDING; j++, sent++) {
			dst[15] = (uint8_t)k;
			struct rte_mbuf *m = rte_pktmbuf_alloc(pool);
			rte_pktmbuf_append(m, 8);
			rnic_net_output_ipv6(&W[0], &P[0], m, NULL, dst, 253, 0);
		}
	unsigned held = 0;
	for (unsigned i = 0; i < RNIC_ND_ENTRIES; i++)
		held += P[0].nd->e[i].n_pending;
	assert_true(held <= RNIC_NEIGH_HELD_MAX);
	assert_int_equal(held, P[0].nd->n_held);
	assert_int_equal(held + W[0].drops[RNIC_DROP_ND_PENDING_FULL] +
			 W[0].drops[RNIC_DROP_ND_UNRESOLVED], sent);
	assert_true(W[0].drops[RNIC_DROP_ND_PENDING_FULL] > 0);
}

/* ---- fixture ---- */

static void port_init(struct rnic_port *p, unsigned idx, const struct rte_ether_addr *mac,
		      uint32_t ip, bool v6)
{
	memset(p, 0, sizeof(*p));
	p->st = &st;
	p->idx = idx;
	p->port_id = UINT16_MAX;   /* no ethdev: the multicast setup fails quietly */
	p->mac = *mac;
	p->ip = ip;
	p->netmask = 0xffffff00u;
	p->mtu = 1500;
	p->pool = pool;
	p->link_up = true;
	if (v6) {
		memcpy(p->cfg.ip6[0].addr, US6, 16);
		p->cfg.ip6[0].prefix_len = 64;
		p->cfg.n_ip6 = 1;
	}
	st.ports[idx] = p;
}

static int test_setup(void **state)
{
	(void)state;
	memset(&st, 0, sizeof(st));
	port_init(&P[0], 0, &us_mac, 0, true);          /* IPv6 only */
	port_init(&P[1], 1, &p1_mac, 0xc0000201u, false);
	st.n_ports = 2;
	memset(&W[0], 0, sizeof(W[0]));
	W[0].st = &st;
	st.workers[0] = &W[0];
	st.n_workers = 1;
	for (unsigned i = 0; i < 2; i++)
		if (rnic_arp_table_create(&P[i]) != 0)
			return -1;
	static const struct rnic_l4_handler h = { .input = h_input, .pmtu6 = h_pmtu6 };
	st.ip_proto[IPPROTO_TCP] = h;
	h_calls = ptb_calls = 0;
	stub_flow_owner6 = 0;
	pool_baseline = rte_mempool_in_use_count(pool);
	return 0;
}

static int test_teardown(void **state)
{
	(void)state;
	stub_reset();
	rnic_arp_table_free(&P[0]);
	rnic_arp_table_free(&P[1]);
	unsigned in_use = rte_mempool_in_use_count(pool);
	if (in_use != pool_baseline) {
		fprintf(stdout, "LEAK: %u mbufs in use, %u before\n", in_use, pool_baseline);
		return -1;
	}
	return 0;
}

static int group_setup(void **state)
{
	char prefix[64];
	snprintf(prefix, sizeof(prefix), "--file-prefix=tipv6%d", (int)getpid());
	char *argv[] = { "test_ipv6", "--no-huge", "-m", "128", "--no-pci",
			 "--no-shconf", prefix, "--log-level=*:error" };
	(void)state;
	if (rte_eal_init(RTE_DIM(argv), argv) < 0)
		return -1;
	pool = rte_pktmbuf_pool_create("tv6", 4095, 0, 0, RTE_MBUF_DEFAULT_BUF_SIZE,
				       SOCKET_ID_ANY);
	return pool ? 0 : -1;
}

static int group_teardown(void **state)
{
	(void)state;
	rte_mempool_free(pool);
	rte_eal_cleanup();
	return 0;
}

/* UDP over IPv6 (RoCEv2's transport): the checksum over the IPv6 pseudo
 * header, 0 ("none") taken only on port 4791 (RFC 6936's exception that
 * rxe uses), a datagram for a port nobody binds counted. */
static void ipv6_udp(void **state)
{
	uint8_t f[256], u[16];
	(void)state;
	/* src 49152, dst 4791, length 16, checksum 0, 8 bytes of payload */
	static const uint8_t roce0[16] = { 0xc0, 0x00, 0x12, 0xb7, 0, 16, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8 };
	memcpy(u, roce0, sizeof(u));
	rx_expect_drop(f, build6(f, &us_mac, PEER6, US6, 17, 64, NULL, 0, u, sizeof(u)),
		       RNIC_DROP_UDP_NO_LISTENER);
	/* the same to port 4792: 0 is not allowed there (RFC 8200 8.1) */
	u[3] = 0xb8;
	rx_expect_drop(f, build6(f, &us_mac, PEER6, US6, 17, 64, NULL, 0, u, sizeof(u)),
		       RNIC_DROP_UDP_CHECKSUM);
	/* a right checksum passes to the port lookup, a wrong one is dropped */
	uint16_t c = ref_cksum6(PEER6, US6, 17, u, sizeof(u));
	u[6] = (uint8_t)(c >> 8);
	u[7] = (uint8_t)c;
	rx_expect_drop(f, build6(f, &us_mac, PEER6, US6, 17, 64, NULL, 0, u, sizeof(u)),
		       RNIC_DROP_UDP_NO_LISTENER);
	u[15] ^= 1;
	rx_expect_drop(f, build6(f, &us_mac, PEER6, US6, 17, 64, NULL, 0, u, sizeof(u)),
		       RNIC_DROP_UDP_CHECKSUM);
}

#define T(f) cmocka_unit_test_setup_teardown(f, test_setup, test_teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(addresses),
		T(ns_gets_na_bytes),
		T(echo_reply_bytes),
		T(resolution_and_timeout),
		T(reachability_states),
		T(na_override_rules),
		T(dad_and_announce),
		T(ipv6_each_malformation),
		T(ipv6_accepts),
		T(ipv6_long_chain),
		T(ipv6_udp),
		T(truncation_every_length),
		T(packet_too_big),
		T(failover_takeover),
		T(nd_spoofed_ns_keep_neighbours),
		T(nd_fragment_and_loop),
		T(nd_unicast_ns_unknown),
		T(nd_pending_bounds),
		T(nd_spoofed_ping_and_probe),
		T(ipv6_fragment_flood),
	};
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
