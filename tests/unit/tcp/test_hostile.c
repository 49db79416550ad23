/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Hostile peers (issue 27, docs/tcp.md "Hostile peers"), on the TCB
 * harness (harness.h): the peer's MSS and window scale clamped, bogus SACK
 * blocks ignored, segments without timestamps dropped, out-of-window and
 * challenge ACKs rate limited, the out-of-order queue bounded in mbufs and
 * pruned when the pool runs short, SYN-ACK floods against an active open.
 * Each case crafts the peer's segments by hand and checks the state, what
 * was sent, the counter, and that no mbuf is left behind (teardown).
 */
#include <errno.h>
#include <string.h>

#include <rte_ip.h>

#include "cases.h"

/*
 * An active open from A answered by a hand-made SYN-ACK with options
 * @p o (the peer's ISN @p isn). @return A's connection, established.
 */
static struct rnic_tcp_conn *open_to_crafted(struct h_app *ca, const struct tcp_opts *o,
					     uint32_t isn)
{
	struct h_seg s;
	struct rnic_tcp_conn *c = h_open_active(ca, 0, 7000);
	rte_pktmbuf_free(h_next_seg(&h_a, &s));
	h_input(&h_a, h_craft_to(c, isn, c->iss + 1, SYN | ACK, o, NULL, 0));
	assert_int_equal(c->state, TCP_ESTABLISHED);
	rte_pktmbuf_free(h_next_seg(&h_a, &s));   /* the handshake's ACK */
	return c;
}

/* Queue @p len bytes on @p c and check every data segment it sends
 * carries between 1 and @p max bytes. @return segments seen. */
static unsigned sends_segments_of(struct rnic_tcp_conn *c, size_t len, uint32_t max)
{
	struct h_seg s;
	unsigned n = 0;
	assert_int_equal(h_send(c, 0, len), 0);
	assert_true(h_a.n_out > 0);
	while (h_a.n_out > 0) {
		rte_pktmbuf_free(h_next_seg(&h_a, &s));
		assert_true(s.len > 0);
		assert_true(s.len <= max);
		n++;
	}
	return n;
}

/* MSS 0 in the SYN-ACK: the active open used to spin in rnic_tcp_send()
 * (no send space with a 0-byte MSS); now it sends 536-byte segments. */
static void mss_zero_active_open_sends(void **state)
{
	(void)state;
	struct h_app ca;
	h_app_init(&ca, 0);
	struct tcp_opts o = { .mss_ok = true, .mss = 0 };
	struct rnic_tcp_conn *c = open_to_crafted(&ca, &o, 1000);
	/* it used to have no send space at all (h_send: -EAGAIN for ever) */
	assert_true(sends_segments_of(c, 5000, TCP_MSS_MIN_V4) >= 2);
	assert_int_equal(c->mss, TCP_MSS_MIN_V4);
	assert_int_equal(h_stats(&h_a).mss_clamped, 1);
	rnic_tcp_abort(c);
	h_flush(&h_a);
	h_app_fini(&ca);
}

/* MSS 1..11 with timestamps wrapped the payload to about 65,530 bytes. */
static void mss_tiny_with_timestamps_sends(void **state)
{
	(void)state;
	for (uint16_t mss = 1; mss <= 11; mss += 5) {
		struct h_app ca;
		h_app_init(&ca, 0);
		struct tcp_opts o = { .mss_ok = true, .mss = mss, .ts_ok = true, .tsval = 7 };
		struct rnic_tcp_conn *c = open_to_crafted(&ca, &o, 5000);
		assert_true(c->ts_ok);
		assert_int_equal(c->mss, TCP_MSS_MIN_V4 - 12);
		sends_segments_of(c, 3000, TCP_MSS_MIN_V4 - 12);
		rnic_tcp_abort(c);
		h_flush(&h_a);
		h_app_fini(&ca);
	}
	assert_int_equal(h_stats(&h_a).mss_clamped, 3);
}

/* Passive opens: a SYN with MSS 1 to the cookie stage; the TCB born from
 * the final ACK uses 536 (less timestamps), and the clamp is counted. A
 * simultaneous open's SYN is clamped as well. */
static void mss_clamped_passive_and_simultaneous(void **state)
{
	(void)state;
	struct h_app sb, ca;
	struct h_seg s;
	h_app_init(&sb, 0);
	h_app_init(&ca, 0);
	assert_int_equal(rnic_tcp_listen(&h_b.st, 80, &h_app_ops, &sb, 4), 0);
	struct tcp_opts o = { .mss_ok = true, .mss = 1, .ts_ok = true, .tsval = 100 };
	uint8_t ob[40];
	size_t olen = tcp_opts_build(ob, &o, true);
	h_input(&h_b, h_craft(H_IP_A, H_IP_B, 4000, 80, 77, 0, SYN, 65535, ob, olen, NULL, 0));
	assert_int_equal(h_stats(&h_b).mss_clamped, 1);
	rte_pktmbuf_free(h_next_seg(&h_b, &s));
	assert_int_equal(s.flags, SYN | ACK);
	struct tcp_opts a = { .ts_ok = true, .tsval = 101, .tsecr = s.o.tsval };
	olen = tcp_opts_build(ob, &a, false);
	h_input(&h_b, h_craft(H_IP_A, H_IP_B, 4000, 80, 78, s.seq + 1, ACK, 65535,
			      ob, olen, NULL, 0));
	assert_non_null(sb.c);
	assert_int_equal(sb.c->mss, TCP_MSS_MIN_V4 - 12);
	rnic_tcp_abort(sb.c);
	h_flush(&h_b);

	/* simultaneous open: the peer's SYN (MSS 0) crosses ours */
	struct rnic_tcp_conn *c;
	assert_int_equal(rnic_tcp_connect(&h_a.w, H_IP_B, 6000, &h_app_ops, &ca, &c), 0);
	h_flush(&h_a);
	struct tcp_opts so = { .mss_ok = true, .mss = 0 };
	h_input(&h_a, h_craft_to(c, 9000, 0, SYN, &so, NULL, 0));
	assert_int_equal(c->state, TCP_SYN_RECEIVED);
	assert_int_equal(c->mss, TCP_MSS_MIN_V4);
	assert_int_equal(h_stats(&h_a).mss_clamped, 1);
	rnic_tcp_abort(c);
	h_flush(&h_a);
	h_app_fini(&sb);
	h_app_fini(&ca);
}

/* A SYN to B:80 over IPv6 (2001:db8::66 -> 2001:db8::10) with MSS @p mss;
 * the harness's IPv6 output drops the cookie SYN-ACK. */
static void syn6_to_b(uint16_t mss)
{
	static const uint8_t src[16] = { 0x20, 0x01, 0x0d, 0xb8, [15] = 0x66 };
	static const uint8_t dst[16] = { 0x20, 0x01, 0x0d, 0xb8, [15] = 0x10 };
	/* an IPv4 frame of the same TCP segment, its IPv4 header (20 bytes)
	 * and 20 more in front rewritten as the IPv6 header */
	uint8_t ob[4] = { TCPOPT_MSS, 4, (uint8_t)(mss >> 8), (uint8_t)mss };
	struct rte_mbuf *m = h_craft(H_IP_A, H_IP_B, 4000, 80, 1234, 0, SYN, 65535,
				     ob, sizeof(ob), NULL, 0);
	assert_non_null(m);
	assert_non_null(rte_pktmbuf_prepend(m, 20));
	struct rte_ipv6_hdr *ip6 = rte_pktmbuf_mtod(m, struct rte_ipv6_hdr *);
	memset(ip6, 0, sizeof(*ip6));
	ip6->vtc_flow = rte_cpu_to_be_32(6u << 28);
	ip6->payload_len = rte_cpu_to_be_16(24);
	ip6->proto = IPPROTO_TCP;
	ip6->hop_limits = 64;
	memcpy(ip6->src_addr, src, 16);
	memcpy(ip6->dst_addr, dst, 16);
	m->l2_len = 0;
	m->l3_len = 40;
	m->ol_flags = RTE_MBUF_F_RX_L4_CKSUM_GOOD;   /* no checksum to compute */
	h_input(&h_b, m);
}

/* The floor is the family's: an MSS of 1000 is raised over IPv6 (RFC 8200's
 * 1280-byte minimum MTU: 1220), not over IPv4 (536). */
static void mss_floor_by_family(void **state)
{
	(void)state;
	struct h_app sb;
	h_app_init(&sb, 0);
	assert_int_equal(rnic_tcp_listen(&h_b.st, 80, &h_app_ops, &sb, 4), 0);
	syn6_to_b(1000);
	assert_int_equal(h_stats(&h_b).syns, 1);
	assert_int_equal(h_stats(&h_b).mss_clamped, 1);
	syn6_to_b(1220);
	assert_int_equal(h_stats(&h_b).syns, 2);
	assert_int_equal(h_stats(&h_b).mss_clamped, 1);
	struct tcp_opts o = { .mss_ok = true, .mss = 1000 };
	uint8_t ob[40];
	size_t olen = tcp_opts_build(ob, &o, true);
	h_input(&h_b, h_craft(H_IP_A, H_IP_B, 4000, 80, 77, 0, SYN, 65535, ob, olen, NULL, 0));
	assert_int_equal(h_stats(&h_b).syns, 3);
	assert_int_equal(h_stats(&h_b).mss_clamped, 1);
	h_flush(&h_b);
	h_app_fini(&sb);
}

/* Window scale 200 from the peer is used as 14 (RFC 7323 2.3), counted. */
static void wscale_clamped(void **state)
{
	(void)state;
	struct h_app ca;
	uint8_t ob[8] = { TCPOPT_NOP, TCPOPT_WS, 3, 200, TCPOPT_NOP, TCPOPT_NOP,
			  TCPOPT_NOP, TCPOPT_NOP };
	struct h_seg s;
	struct rnic_tcp_conn *c = h_open_active(&ca, 0, 7000);
	rte_pktmbuf_free(h_next_seg(&h_a, &s));
	h_input(&h_a, h_craft(H_IP_B, H_IP_A, 7000, rte_be_to_cpu_16(c->key.lport), 1,
			      c->iss + 1, SYN | ACK, 1000, ob, sizeof(ob), NULL, 0));
	assert_int_equal(c->state, TCP_ESTABLISHED);
	assert_int_equal(c->snd_wscale, TCP_MAX_WSCALE);
	assert_int_equal(h_stats(&h_a).wscale_clamped, 1);
	h_flush(&h_a);
	/* the next window field is scaled by 14, not shifted out of range */
	h_input(&h_a, h_craft_to(c, 2, c->snd_nxt, ACK, NULL, NULL, 0));
	assert_int_equal(c->snd_wnd, 65535u << TCP_MAX_WSCALE);
	rnic_tcp_abort(c);
	h_flush(&h_a);
	h_app_fini(&ca);
}

/* A connection A -> B with @p n bytes sent by A and not delivered. */
static struct rnic_tcp_conn *with_data_out(struct h_app *ca, struct h_app *sb, size_t n)
{
	struct rnic_tcp_conn *c = h_connect(ca, sb, 5001);
	assert_non_null(c);
	assert_true(c->sack_ok && c->ts_ok);
	assert_int_equal(h_send(c, 0, n), 0);
	h_flush(&h_a);
	assert_true(c->snd_max - c->snd_una >= 4 * (uint32_t)c->mss);
	return c;
}

/* An ACK from B to A's @p c (acknowledging SND.UNA) with SACK blocks. */
static void ack_with_sack(struct rnic_tcp_conn *c, const struct tcp_sack_block *b,
			  unsigned n)
{
	struct tcp_opts o = { .ts_ok = true, .tsval = c->ts_recent, .n_sack = n };
	memcpy(o.sack, b, n * sizeof(*b));
	h_input(&h_a, h_craft_to(c, c->rcv_nxt, c->snd_una, ACK, &o, NULL, 0));
}

/* SACK blocks outside [SND.UNA, SND.MAX], empty or reversed mark nothing
 * and are counted; a D-SACK below SND.UNA is not an error; a good block
 * still marks. */
static void sack_bogus_blocks_ignored(void **state)
{
	(void)state;
	struct h_app ca, sb;
	h_app_init(&ca, 0);
	h_app_init(&sb, 0);
	struct rnic_tcp_conn *c = with_data_out(&ca, &sb, 8 * 1448);
	uint32_t una = c->snd_una, max = c->snd_max, mss = c->mss;
	const struct tcp_sack_block bad[] = {
		{ una - 5000, una + 2 * mss },   /* starts below SND.UNA */
		{ max - mss, max + 1000 },       /* ends beyond SND.MAX */
		{ una + mss, una + mss },        /* empty */
		{ una + 3 * mss, una + mss },    /* reversed */
	};
	for (unsigned i = 0; i < 4; i++)
		ack_with_sack(c, &bad[i], 1);
	assert_int_equal(c->sacked_bytes, 0);
	assert_int_equal(h_stats(&h_a).sack_bogus, 4);
	/* a whole bad set at once, beyond everything sent */
	const struct tcp_sack_block far[] = {
		{ max, max + 100000 }, { max + 200000, max + 300000 }, { una - 100, una + 100 },
	};
	ack_with_sack(c, far, 3);
	assert_int_equal(c->sacked_bytes, 0);
	assert_int_equal(h_stats(&h_a).sack_bogus, 7);
	for (uint32_t i = c->u_head; i != c->u_tail; i++)
		assert_false(c->units[i & (c->units_cap - 1)].sacked);
	/* a D-SACK first block below SND.UNA: ignored, not counted */
	const struct tcp_sack_block dsack[] = { { una - 100, una } };
	ack_with_sack(c, dsack, 1);
	assert_int_equal(h_stats(&h_a).sack_bogus, 7);
	/* a good block marks exactly its units */
	const struct tcp_sack_block good[] = { { una + 2 * mss, una + 4 * mss } };
	ack_with_sack(c, good, 1);
	assert_int_equal(c->sacked_bytes, 2 * mss);
	assert_int_equal(h_stats(&h_a).sack_bogus, 7);
	h_close(c, &ca, &sb);
}

/* RFC 7323 3.2: on a connection with timestamps, a segment without one is
 * dropped (not delivered, not answered), a RST without one still counts. */
static void ts_missing_dropped(void **state)
{
	(void)state;
	struct h_app ca, sb;
	struct rnic_tcp_conn *c = h_open(&ca, &sb, 100, 5001);
	struct rnic_tcp_conn *cb = sb.c;
	assert_true(cb->ts_ok);
	uint8_t data[10] = { 1, 2, 3 };
	h_input(&h_b, h_craft_to(cb, cb->rcv_nxt, cb->snd_nxt, ACK, NULL, data, 10));
	assert_int_equal(sb.got, 0);
	assert_int_equal(h_b.n_out, 0);
	assert_int_equal(h_stats(&h_b).ts_missing, 1);
	/* the same with a timestamp is taken */
	struct tcp_opts o = { .ts_ok = true, .tsval = cb->ts_recent };
	h_input(&h_b, h_craft_to(cb, cb->rcv_nxt, cb->snd_nxt, ACK, &o, data, 10));
	assert_int_equal(sb.got, 10);
	/* a RST needs none */
	h_input(&h_b, h_craft_to(cb, cb->rcv_nxt, 0, RST, NULL, NULL, 0));
	assert_int_equal(sb.closes, 1);
	assert_int_equal(h_stats(&h_b).ts_missing, 1);
	h_flush(&h_b);
	rnic_tcp_abort(c);
	h_flush(&h_a);
	h_app_fini(&ca);
	h_app_fini(&sb);
}

/* Our own probes (window, keepalive) and a lone FIN again carry
 * timestamps, or a peer applying RFC 7323 3.2 would drop them. */
static void probes_carry_timestamps(void **state)
{
	(void)state;
	struct h_app ca, sb;
	struct h_seg s;
	struct rnic_tcp_conn *c = h_open(&ca, &sb, 0, 5001);
	struct rnic_tcp_conn *cb = sb.c;
	/* B closes its window; A has data: the persist timer probes */
	struct tcp_opts o = { .ts_ok = true, .tsval = c->ts_recent };
	struct rte_mbuf *m = h_craft_to(c, c->rcv_nxt, c->snd_una, ACK, &o, NULL, 0);
	struct rte_tcp_hdr *th = rte_pktmbuf_mtod_offset(m, struct rte_tcp_hdr *, 20);
	th->rx_win = 0;
	th->cksum = 0;
	th->cksum = rte_ipv4_udptcp_cksum(rte_pktmbuf_mtod(m, struct rte_ipv4_hdr *), th);
	h_input(&h_a, m);
	assert_int_equal(c->snd_wnd, 0);
	assert_int_equal(h_send(c, 0, 100), 0);
	assert_int_equal(h_a.n_out, 0);
	unsigned probes = 0;
	for (int i = 0; i < 50 && probes == 0; i++) {
		h_advance(10000);
		while (h_a.n_out > 0) {
			rte_pktmbuf_free(h_next_seg(&h_a, &s));
			assert_true(s.o.ts_ok);
			probes++;
		}
	}
	assert_true(probes > 0);
	(void)cb;
	h_close(c, &ca, &sb);
}

/* Out-of-window segments without payload and challenge ACKs: at most a
 * burst of 8 answers, then one per 50 ms, per connection; data that is
 * all old is always acknowledged. */
static void oow_and_challenge_acks_limited(void **state)
{
	(void)state;
	struct h_app ca, sb;
	struct rnic_tcp_conn *c = h_open(&ca, &sb, 0, 5001);
	struct rnic_tcp_conn *cb = sb.c;
	struct tcp_opts o = { .ts_ok = true, .tsval = cb->ts_recent };
	for (int i = 0; i < 100; i++)
		h_input(&h_b, h_craft_to(cb, cb->rcv_nxt + (64u << 20), cb->snd_nxt, ACK,
					 &o, NULL, 0));
	assert_int_equal(h_flush(&h_b), 8);
	assert_int_equal(h_stats(&h_b).oow_acks_limited, 92);
	/* challenge ACKs share the connection's allowance: none left */
	h_input(&h_b, h_craft_to(cb, cb->rcv_nxt + 5, 0, SYN, &o, NULL, 0));
	assert_int_equal(h_flush(&h_b), 0);
	assert_int_equal(h_stats(&h_b).challenge_acks_limited, 1);
	/* old data is acknowledged whatever the limit (its ACK was lost) */
	uint8_t d[4] = { 0 };
	h_input(&h_b, h_craft_to(cb, cb->rcv_nxt - 4, cb->snd_nxt, ACK, &o, d, 4));
	assert_int_equal(h_flush(&h_b), 1);
	/* 50 ms later one more challenge ACK may go, then none */
	h_advance(51000);
	h_flush(&h_b);
	for (int i = 0; i < 20; i++)
		h_input(&h_b, h_craft_to(cb, cb->rcv_nxt + 5, 0, RST, NULL, NULL, 0));
	assert_int_equal(h_flush(&h_b), 1);
	assert_int_equal(h_stats(&h_b).challenge_acks_limited, 20);
	assert_int_equal(cb->state, TCP_ESTABLISHED);
	/* after a quiet second the full burst is back */
	h_advance(1000000);
	h_flush(&h_b);
	for (int i = 0; i < 20; i++)
		h_input(&h_b, h_craft_to(cb, cb->rcv_nxt + 5, 0, RST, NULL, NULL, 0));
	assert_int_equal(h_flush(&h_b), 8);
	h_close(c, &ca, &sb);
}

/* @p n one-byte segments to @p cb at rcv_nxt + off(i), with timestamps;
 * B's answers are dropped as they come. */
static void one_byte_flood(struct rnic_tcp_conn *cb, unsigned n,
			   uint32_t (*off)(unsigned i))
{
	struct tcp_opts o = { .ts_ok = true, .tsval = cb->ts_recent };
	for (unsigned i = 0; i < n; i++) {
		uint8_t b = (uint8_t)(off(i) * 7);
		h_input(&h_b, h_craft_to(cb, cb->rcv_nxt + off(i), cb->snd_nxt, ACK, &o, &b, 1));
		if (h_b.n_out > 1000)
			h_flush(&h_b);
	}
	h_flush(&h_b);
}

static uint32_t off_ascending(unsigned i) { return 1 + i; }
static uint32_t off_descending(unsigned i) { return 20000 - i; }
static uint32_t off_sparse(unsigned i) { return 30000 + 2 * i; }

/*
 * The out-of-order flood: 8,000 one-byte segments above a hole used to
 * hold 8,000 mbufs (the port's pool is 8,191). Contiguous ones now share a
 * few buffers (copied in), ones that cannot be coalesced stop at the
 * per-connection cap, scattered ones at the 256 ranges; the bytes kept are
 * delivered in order once the hole is filled.
 */
static void ooo_flood_bounded(void **state)
{
	(void)state;
	struct h_app ca, sb;
	struct rnic_tcp_conn *c = h_open(&ca, &sb, 64 * 1024, 5001);
	struct rnic_tcp_conn *cb = sb.c;
	unsigned base = rte_mempool_in_use_count(h_pool);

	one_byte_flood(cb, 8000, off_ascending);
	assert_int_equal(cb->ooo_bytes, 8000);
	assert_true(cb->ooo_mbufs <= 16);
	assert_true(rte_mempool_in_use_count(h_pool) - base <= 16);
	assert_int_equal(h_stats(&h_b).ooo_mbufs, cb->ooo_mbufs);

	one_byte_flood(cb, 8000, off_descending);
	assert_true(cb->ooo_mbufs <= TCP_OOO_MBUFS_MAX);
	assert_true(h_stats(&h_b).ooo_refused >= 8000 - TCP_OOO_MBUFS_MAX);
	one_byte_flood(cb, 8000, off_sparse);
	assert_true(cb->n_ooo <= TCP_OOO_MAX);
	assert_true(cb->ooo_mbufs <= TCP_OOO_MBUFS_MAX);
	assert_true(cb->ooo_truesize <= cb->rcvbuf);
	assert_true(rte_mempool_in_use_count(h_pool) - base <= TCP_OOO_MBUFS_MAX + 16);
	assert_int_equal(h_stats(&h_b).ooo_mbufs, cb->ooo_mbufs);

	/* the hole: the first 8,001 bytes go up in order */
	struct tcp_opts o = { .ts_ok = true, .tsval = cb->ts_recent };
	uint8_t z = 0;
	h_input(&h_b, h_craft_to(cb, cb->rcv_nxt, cb->snd_nxt, ACK, &o, &z, 1));
	assert_true(sb.got >= 8001);
	for (unsigned i = 1; i <= 8000; i++)
		assert_int_equal(sb.buf[i], (uint8_t)(i * 7));
	rnic_tcp_abort(cb);   /* its queue goes with it */
	assert_int_equal(h_stats(&h_b).ooo_mbufs, 0);
	assert_null(tcp_w(&h_b.w)->ooo_hog);
	h_close(c, &ca, &sb);
}

/* @p n in-order segments of @p len bytes to @p cb, with timestamps (the
 * byte at stream offset k is k * 7); B's answers are dropped. */
static void in_order_flood(struct rnic_tcp_conn *cb, unsigned n, uint32_t len, uint32_t *off)
{
	struct tcp_opts o = { .ts_ok = true, .tsval = cb->ts_recent };
	uint8_t buf[2048];
	for (unsigned i = 0; i < n; i++) {
		for (uint32_t k = 0; k < len; k++)
			buf[k] = (uint8_t)((*off + k) * 7);
		h_input(&h_b, h_craft_to(cb, cb->rcv_nxt, cb->snd_nxt, ACK, &o, buf, len));
		*off = (uint32_t)(cb->rcv_nxt - cb->irs - 1);
		if (h_b.n_out > 1000)
			h_flush(&h_b);
	}
	h_flush(&h_b);
}

/*
 * A held stream (an iWARP endpoint whose application defers its accept)
 * used to queue up to 60,000 mbufs: 8,000 one-byte segments held 8,000.
 * Small ones are now copied together; segments that cannot be stop at
 * 2,048 mbufs, and the rest is refused (not acknowledged) until the hold
 * is released. Everything taken is delivered in order.
 */
static void hold_flood_bounded(void **state)
{
	(void)state;
	struct h_app ca, sb;
	struct rnic_tcp_conn *c = h_open(&ca, &sb, 4u << 20, 5001);
	struct rnic_tcp_conn *cb = sb.c;
	unsigned base = rte_mempool_in_use_count(h_pool);
	uint32_t off = 0;
	rnic_tcp_hold(cb, true);
	in_order_flood(cb, 8000, 1, &off);
	assert_int_equal(cb->held_bytes, 8000);
	assert_true(cb->held->nb_segs <= 16);
	assert_true(rte_mempool_in_use_count(h_pool) - base <= 16);
	/* 1,100 bytes: never two in one buffer */
	in_order_flood(cb, 3000, 1100, &off);
	assert_true(cb->held->nb_segs <= TCP_HOLD_SEGS_MAX);
	assert_true(rte_mempool_in_use_count(h_pool) - base <= TCP_HOLD_SEGS_MAX);
	assert_true(h_stats(&h_b).hold_refused > 0);
	uint32_t held = cb->held_bytes;
	assert_int_equal(held, off);
	assert_int_equal(sb.got, 0);
	rnic_tcp_hold(cb, false);
	assert_int_equal(sb.got, held);
	for (uint32_t k = 0; k < held; k++)
		if (sb.buf[k] != (uint8_t)(k * 7))
			fail_msg("byte %u", k);
	h_flush(&h_b);
	h_close(c, &ca, &sb);
}

/*
 * The pool runs short: the next out-of-order segment is refused, and the
 * worker's biggest holder gives back from its highest sequence down until
 * the pool has its reserve again; its lowest ranges stay.
 */
static void ooo_pool_short_prunes_hog(void **state)
{
	(void)state;
	struct h_app ca1, sb1, ca2, sb2;
	h_app_init(&ca1, 0);
	h_app_init(&sb1, 0);
	h_app_init(&ca2, 0);
	h_app_init(&sb2, 0);
	struct rnic_tcp_conn *c1 = h_connect(&ca1, &sb1, 5001);
	struct rnic_tcp_conn *c2 = h_connect(&ca2, &sb2, 5002);
	assert_non_null(c1);
	assert_non_null(c2);
	struct rnic_tcp_conn *hog = sb1.c, *other = sb2.c;
	one_byte_flood(hog, 200, off_sparse);
	assert_int_equal(hog->n_ooo, 200);
	uint32_t first = hog->ooo[0].seq;
	assert_ptr_equal(tcp_w(&h_b.w)->ooo_hog, hog);

	/* short by 50 mbufs */
	h_b.port.tx_reserve = rte_mempool_avail_count(h_pool) + 50;
	assert_true(rnic_port_pool_short(&h_b.port));
	struct tcp_opts o = { .ts_ok = true, .tsval = other->ts_recent };
	uint8_t b = 1;
	h_input(&h_b, h_craft_to(other, other->rcv_nxt + 10, other->snd_nxt, ACK, &o, &b, 1));
	assert_int_equal(other->n_ooo, 0);
	assert_int_equal(h_stats(&h_b).ooo_refused, 1);
	h_flush(&h_b);   /* B's ACK took an mbuf after the pruning */
	assert_false(rnic_port_pool_short(&h_b.port));
	assert_true(h_stats(&h_b).ooo_pruned >= 49);
	assert_true(hog->n_ooo < 200 && hog->n_ooo >= 140);
	assert_int_equal(hog->ooo[0].seq, first);
	assert_int_equal(h_stats(&h_b).ooo_mbufs, hog->ooo_mbufs);
	h_b.port.tx_reserve = 0;

	rnic_tcp_abort(c1);
	rnic_tcp_abort(c2);
	h_flush(&h_a);
	h_flush(&h_b);
	h_app_fini(&ca1);
	h_app_fini(&sb1);
	h_app_fini(&ca2);
	h_app_fini(&sb2);
}

/*
 * A flood of SYN-ACKs with wrong ACK numbers and bogus options toward a
 * SYN_SENT connection: each is reset (RFC 9293 3.10.7.3), nothing of ours
 * changes, nothing is kept; the real SYN-ACK then completes the open.
 */
static void syn_ack_flood_to_syn_sent(void **state)
{
	(void)state;
	struct h_app ca;
	struct h_seg s;
	struct rnic_tcp_conn *c;
	c = h_open_active(&ca, 0, 7000);
	h_flush(&h_a);
	unsigned base = rte_mempool_in_use_count(h_pool);
	uint32_t iss = c->iss;
	struct tcp_opts o = { .mss_ok = true, .mss = 0, .ws_ok = true, .ws = 14,
			      .ts_ok = true, .sack_ok = true };
	for (unsigned i = 0; i < 1000; i++) {
		uint32_t ack = iss + 2 + i * 104729u;   /* never ISS + 1 */
		o.tsval = i;
		h_input(&h_a, h_craft_to(c, 5000 + i, ack, SYN | ACK, &o, NULL, 0));
		rte_pktmbuf_free(h_next_seg(&h_a, &s));
		assert_int_equal(s.flags, RST);
		assert_int_equal(s.seq, ack);
		assert_int_equal(c->state, TCP_SYN_SENT);
	}
	/* malformed options: dropped before any state is looked at */
	uint8_t bad[4] = { TCPOPT_MSS, 0, 0, 0 };
	h_input(&h_a, h_craft(H_IP_B, H_IP_A, 7000, rte_be_to_cpu_16(c->key.lport), 1,
			      iss + 1, SYN | ACK, 100, bad, 4, NULL, 0));
	assert_int_equal(h_a.n_out, 0);
	assert_int_equal(h_stats(&h_a).bad_opts, 1);
	assert_int_equal(c->state, TCP_SYN_SENT);
	assert_int_equal(c->snd_una, iss);
	assert_int_equal(c->irs, 0);
	assert_int_equal(h_stats(&h_a).syn_sent_bad_ack, 1000);
	assert_int_equal(h_stats(&h_a).tcbs, 1);
	assert_int_equal(rte_mempool_in_use_count(h_pool), base);

	/* the real answer still opens it */
	struct tcp_opts good = { .mss_ok = true, .mss = 1460, .ts_ok = true, .tsval = 5 };
	h_input(&h_a, h_craft_to(c, 424242, iss + 1, SYN | ACK, &good, NULL, 0));
	assert_int_equal(c->state, TCP_ESTABLISHED);
	assert_int_equal(c->irs, 424242);
	assert_int_equal(ca.connects, 1);
	rnic_tcp_abort(c);
	h_flush(&h_a);
	h_app_fini(&ca);
}

/* Simultaneous open under a flood of the peer's SYNs: the first takes us
 * to SYN_RECEIVED, the rest get (limited) challenge ACKs and change
 * nothing; the peer's SYN-ACK completes the open. */
static void simultaneous_open_syn_flood(void **state)
{
	(void)state;
	struct h_app ca;
	struct h_seg s;
	struct rnic_tcp_conn *c;
	c = h_open_active(&ca, 0, 6000);
	h_flush(&h_a);
	struct tcp_opts o = { .mss_ok = true, .mss = 1460, .ts_ok = true, .tsval = 50 };
	h_input(&h_a, h_craft_to(c, 7777, 0, SYN, &o, NULL, 0));
	assert_int_equal(c->state, TCP_SYN_RECEIVED);
	rte_pktmbuf_free(h_next_seg(&h_a, &s));
	assert_int_equal(s.flags, SYN | ACK);
	uint32_t tsecr = s.o.tsval;
	for (unsigned i = 0; i < 200; i++) {
		o.tsval = 50 + i;
		h_input(&h_a, h_craft_to(c, 7777 + i * 3, 0, SYN, &o, NULL, 0));
	}
	assert_true(h_flush(&h_a) <= 8);
	assert_int_equal(c->state, TCP_SYN_RECEIVED);
	assert_int_equal(c->irs, 7777);
	o.tsval = 300;
	o.tsecr = tsecr;
	h_input(&h_a, h_craft_to(c, 7777, c->iss + 1, SYN | ACK, &o, NULL, 0));
	assert_int_equal(c->state, TCP_ESTABLISHED);
	assert_int_equal(ca.connects, 1);
	rnic_tcp_abort(c);
	h_flush(&h_a);
	h_app_fini(&ca);
}

int main(void)
{
#define T(f) H_TEST(f)
	const struct CMUnitTest tests[] = {
		T(mss_zero_active_open_sends), T(mss_tiny_with_timestamps_sends),
		T(mss_clamped_passive_and_simultaneous), T(mss_floor_by_family),
		T(wscale_clamped),
		T(sack_bogus_blocks_ignored), T(ts_missing_dropped), T(probes_carry_timestamps),
		T(oow_and_challenge_acks_limited), T(ooo_flood_bounded), T(hold_flood_bounded),
		T(ooo_pool_short_prunes_hog), T(syn_ack_flood_to_syn_sent),
		T(simultaneous_open_syn_flood),
	};
#undef T
	return h_run("test_hostile", "rnic-test-tcp-hostile", tests,
		     sizeof(tests) / sizeof(tests[0]));
}
