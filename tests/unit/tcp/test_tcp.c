/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * TCP pure pieces, table-driven: sequence arithmetic across wraparound,
 * option parsing (including malformed lists) and building, SYN cookies
 * (encode/validate, expiry, secret rotation), the state table, RTO and
 * congestion control. No EAL beyond what rte_rand needs.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <cmocka.h>

#include <rte_eal.h>

#include "tcp/cookie.h"
#include "tcp/seq.h"
#include "tcp/tcp_internal.h"
#include "tcp/tcp_opts.h"

static void seq_table(void **state)
{
	static const struct { uint32_t a, b; bool lt, le, gt, ge; } t[] = {
		{ 1, 2, true, true, false, false },
		{ 2, 2, false, true, false, true },
		{ 0xffffffff, 0, true, true, false, false },     /* wraps */
		{ 0, 0xffffffff, false, false, true, true },
		{ 0xfffffff0, 0x10, true, true, false, false },
		{ 0x7fffffff, 0, false, false, true, true },
		{ 0x80000001, 0, true, true, false, false },     /* > 2^31 apart */
	};
	(void)state;
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		assert_int_equal(seq_lt(t[i].a, t[i].b), t[i].lt);
		assert_int_equal(seq_le(t[i].a, t[i].b), t[i].le);
		assert_int_equal(seq_gt(t[i].a, t[i].b), t[i].gt);
		assert_int_equal(seq_ge(t[i].a, t[i].b), t[i].ge);
	}
	assert_true(seq_in(0xfffffffe, 0xfffffff0, 0x10));
	assert_true(seq_in(0x5, 0xfffffff0, 0x10));
	assert_false(seq_in(0x10, 0xfffffff0, 0x10));
	assert_false(seq_in(0xffffffef, 0xfffffff0, 0x10));
	assert_int_equal(seq_max(0xfffffff0, 0x10), 0x10);
	assert_int_equal(seq_min(0xfffffff0, 0x10), 0xfffffff0);
}

static void opts_roundtrip(void **state)
{
	uint8_t buf[40];
	struct tcp_opts o = { .mss_ok = true, .mss = 1460, .ws_ok = true, .ws = 7,
			      .sack_ok = true, .ts_ok = true, .tsval = 0x11223344,
			      .tsecr = 0x55667788 }, p;
	(void)state;
	size_t n = tcp_opts_build(buf, &o, true);
	assert_int_equal(n % 4, 0);
	assert_true(n <= 40);
	assert_int_equal(tcp_opts_parse(buf, n, true, &p), 0);
	assert_true(p.mss_ok && p.mss == 1460 && p.ws_ok && p.ws == 7 && p.sack_ok);
	assert_true(p.ts_ok && p.tsval == 0x11223344 && p.tsecr == 0x55667788);
	/* data segment: TS + 3 SACK blocks fit in 40 bytes */
	struct tcp_opts d = { .ts_ok = true, .tsval = 1, .tsecr = 2, .n_sack = 4,
			      .sack = { { 10, 20 }, { 30, 40 }, { 50, 60 }, { 70, 80 } } };
	n = tcp_opts_build(buf, &d, false);
	assert_true(n <= 40);
	assert_int_equal(tcp_opts_parse(buf, n, false, &p), 0);
	assert_int_equal(p.n_sack, 3);
	assert_int_equal(p.sack[2].start, 50);
	assert_false(p.mss_ok);   /* MSS is ignored outside SYNs */
	/* a window scale above 14 is used as 14 (RFC 7323 2.3) */
	uint8_t ws[] = { TCPOPT_WS, 3, 20 };
	assert_int_equal(tcp_opts_parse(ws, 3, true, &p), 0);
	assert_int_equal(p.ws, 14);
}

static void opts_malformed(void **state)
{
	static const struct { uint8_t b[12]; size_t len; } bad[] = {
		{ { TCPOPT_MSS }, 1 },                       /* kind without length */
		{ { TCPOPT_MSS, 4, 5 }, 3 },                 /* past the end */
		{ { TCPOPT_MSS, 3, 5 }, 3 },                 /* wrong fixed length */
		{ { TCPOPT_TS, 9, 0, 0, 0, 0, 0, 0, 0 }, 9 },
		{ { TCPOPT_SACK, 9, 0, 0, 0, 0, 0, 0, 0 }, 9 }, /* not 2 + 8n */
		{ { 99, 1 }, 2 },                            /* length < 2 */
		{ { 99, 0 }, 2 },                            /* zero length: no loop */
		{ { TCPOPT_NOP, TCPOPT_WS, 4, 1, 1 }, 5 },
		{ { TCPOPT_SACK_OK, 3, 0 }, 3 },
	};
	struct tcp_opts o;
	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (tcp_opts_parse(bad[i].b, bad[i].len, true, &o) != -EINVAL)
			fail_msg("malformed option list %zu accepted", i);
	/* unknown kinds are skipped by length; EOL ends the list */
	uint8_t ok[] = { 30, 4, 1, 2, TCPOPT_EOL, 0xff };
	assert_int_equal(tcp_opts_parse(ok, sizeof(ok), true, &o), 0);
	/* every truncation of a valid list: never a crash, never out of bounds */
	uint8_t full[40];
	struct tcp_opts f = { .mss_ok = true, .mss = 9000, .ws_ok = true, .sack_ok = true,
			      .ts_ok = true };
	size_t n = tcp_opts_build(full, &f, true);
	for (size_t l = 0; l < n; l++)
		tcp_opts_parse(full, l, true, &o);
}

static void siphash_vector(void **state)
{
	/* reference vector from the SipHash paper: key 00..0f, message 00..0e */
	uint64_t key[2] = { 0x0706050403020100ULL, 0x0f0e0d0c0b0a0908ULL };
	uint8_t msg[15];
	(void)state;
	for (int i = 0; i < 15; i++)
		msg[i] = (uint8_t)i;
	assert_true(rnic_siphash24(key, msg, 15) == 0xa129ca6149be45e5ULL);
}

/* SipHash-2-4 written from the paper, byte by byte: the reference for the
 * word-loading rnic_siphash24() on every length 0..64 and random keys. */
static uint64_t sip_ref(const uint64_t key[2], const uint8_t *p, size_t len)
{
#define R(x, b) (((x) << (b)) | ((x) >> (64 - (b))))
#define ROUND() do { v0 += v1; v1 = R(v1, 13); v1 ^= v0; v0 = R(v0, 32); \
	v2 += v3; v3 = R(v3, 16); v3 ^= v2; v0 += v3; v3 = R(v3, 21); v3 ^= v0; \
	v2 += v1; v1 = R(v1, 17); v1 ^= v2; v2 = R(v2, 32); } while (0)
	uint64_t v0 = key[0] ^ 0x736f6d6570736575ULL, v1 = key[1] ^ 0x646f72616e646f6dULL;
	uint64_t v2 = key[0] ^ 0x6c7967656e657261ULL, v3 = key[1] ^ 0x7465646279746573ULL;
	size_t blocks = len / 8 + 1;   /* the last block holds the tail and the length */
	for (size_t blk = 0; blk < blocks; blk++) {
		uint64_t m = 0;
		for (size_t k = 0; k < 8; k++) {
			size_t at = blk * 8 + k;
			uint64_t byte = at < len ? p[at] : 0;
			if (blk == blocks - 1 && k == 7)
				byte = len & 0xff;
			m |= byte << (8 * k);
		}
		v3 ^= m;
		ROUND();
		ROUND();
		v0 ^= m;
	}
	v2 ^= 0xff;
	ROUND(); ROUND(); ROUND(); ROUND();
	return v0 ^ v1 ^ v2 ^ v3;
#undef ROUND
#undef R
}

static void siphash_matches_reference(void **state)
{
	(void)state;
	uint8_t msg[64];
	uint64_t x = 0x9e3779b97f4a7c15ULL;
	for (unsigned round = 0; round < 50; round++) {
		uint64_t key[2];
		x ^= x << 13; x ^= x >> 7; x ^= x << 17;
		key[0] = x;
		x ^= x << 13; x ^= x >> 7; x ^= x << 17;
		key[1] = x;
		for (unsigned b = 0; b < sizeof(msg); b++)
			msg[b] = (uint8_t)(x >> (b % 57)) ^ (uint8_t)(b * 31);
		for (size_t len = 0; len <= sizeof(msg); len++)
			assert_true(rnic_siphash24(key, msg, len) == sip_ref(key, msg, len));
		/* unaligned input too */
		assert_true(rnic_siphash24(key, msg + 1, 20) == sip_ref(key, msg + 1, 20));
	}
	/* the reference itself against the paper's vector (key 00..0f,
	 * message 00..0e) */
	uint64_t k0[2] = { 0x0706050403020100ULL, 0x0f0e0d0c0b0a0908ULL };
	uint8_t m0[15];
	for (unsigned b = 0; b < 15; b++)
		m0[b] = (uint8_t)b;
	assert_true(sip_ref(k0, m0, 15) == 0xa129ca6149be45e5ULL);
}

/* A flow of IPv4 addresses (host order), IPv4-mapped as the SYN stage keeps them. */
static struct tcp_flow flow4(uint32_t l, uint32_t r, uint16_t lport, uint16_t rport)
{
	struct tcp_flow f;
	memset(&f, 0, sizeof(f));
	rnic_ip6_v4mapped(rte_cpu_to_be_32(l), f.laddr);
	rnic_ip6_v4mapped(rte_cpu_to_be_32(r), f.raddr);
	f.lport = lport;
	f.rport = rport;
	return f;
}

static void cookies(void **state)
{
	struct tcp_cookie_keys k;
	struct tcp_flow f = flow4(0x0a000001, 0x0a000002, 5001, 40000);
	uint16_t mss;
	(void)state;
	tcp_cookie_keys_init(&k, 100);
	uint32_t c = tcp_cookie_make(&k, &f, 12345, 1460, 100);
	assert_true(tcp_cookie_check(&k, &f, 12345, c, 100, &mss));
	assert_int_equal(mss, 1460);
	assert_true(tcp_cookie_check(&k, &f, 12345, c, 101, &mss));   /* next epoch */
	assert_false(tcp_cookie_check(&k, &f, 12345, c, 102, &mss));  /* expired */
	assert_false(tcp_cookie_check(&k, &f, 12346, c, 100, &mss));  /* other ISN */
	struct tcp_flow g = f;
	g.rport = 40001;
	assert_false(tcp_cookie_check(&k, &g, 12345, c, 100, &mss));  /* other flow */
	assert_false(tcp_cookie_check(&k, &f, 12345, c ^ 1, 100, &mss));
	/* MSS rounding: the largest table value not above the offer */
	assert_int_equal(tcp_cookie_mss_round(1500), 1460);
	assert_int_equal(tcp_cookie_mss_round(8960), 8960);
	assert_int_equal(tcp_cookie_mss_round(100), 536);
	c = tcp_cookie_make(&k, &f, 1, 8960, 100);
	assert_true(tcp_cookie_check(&k, &f, 1, c, 100, &mss));
	assert_int_equal(mss, 8960);
	/* rotation: after two epochs the secret is gone; a cookie of the
	 * current epoch made before rotation stays valid */
	uint32_t old = tcp_cookie_make(&k, &f, 7, 1460, 100);
	tcp_cookie_rotate(&k, 101);
	assert_true(tcp_cookie_check(&k, &f, 7, old, 101, &mss));
	uint32_t cur = tcp_cookie_make(&k, &f, 7, 1460, 101);
	tcp_cookie_rotate(&k, 102);
	assert_false(tcp_cookie_check(&k, &f, 7, old, 102, &mss));
	assert_true(tcp_cookie_check(&k, &f, 7, cur, 102, &mss));
	/* four epochs later the 2-bit epoch matches again, the secret does not */
	tcp_cookie_rotate(&k, 104);
	assert_false(tcp_cookie_check(&k, &f, 7, old, 104, &mss));
	/* options in the timestamp */
	bool ws_ok, sack;
	uint8_t ws;
	uint32_t ts = tcp_cookie_ts_encode(1000000, true, 9, true);
	tcp_cookie_ts_decode(ts, &ws_ok, &ws, &sack);
	assert_true(ws_ok && ws == 9 && sack);
	/* never ahead of the clock (a peer's PAWS would drop what follows),
	 * whatever the clock's low bits, across the 2^32 wrap too */
	static const uint32_t clocks[] = { 1000000, 0, 31, 0xffffffe0, 0xffffffff };
	for (size_t c = 0; c < sizeof(clocks) / sizeof(clocks[0]); c++) {
		for (uint32_t low = 0; low < 32; low++) {
			uint32_t now = clocks[c] + low;
			for (unsigned opt = 0; opt < 32; opt++) {
				ts = tcp_cookie_ts_encode(now, opt != 31, (uint8_t)(opt >> 1),
							  opt & 1);
				assert_true((int32_t)(now - ts) >= 0);
				assert_true(now - ts < 64);
				tcp_cookie_ts_decode(ts, &ws_ok, &ws, &sack);
				assert_int_equal(sack, opt & 1);
				assert_int_equal(ws_ok, (opt >> 1) != 15);
				if (ws_ok)
					assert_int_equal(ws, (opt >> 1) > 14 ? 14 : opt >> 1);
			}
		}
	}
	ts = tcp_cookie_ts_encode(1000000, false, 0, false);
	tcp_cookie_ts_decode(ts, &ws_ok, &ws, &sack);
	assert_true(!ws_ok && !sack);
}

/* The SYN stage over IPv6: a cookie made for an IPv6 four-tuple checks on
 * it and on nothing else: another address bit, another port, or the IPv4
 * flow with the same low 32 address bits. */
static void cookies_ipv6(void **state)
{
	struct tcp_cookie_keys k;
	struct tcp_flow f;
	uint16_t mss;
	(void)state;

	memset(&f, 0, sizeof(f));
	static const uint8_t l[16] = { 0x20, 0x01, 0x0d, 0xb8, [15] = 0x10 };
	static const uint8_t r[16] = { 0x20, 0x01, 0x0d, 0xb8, [15] = 0x01 };
	memcpy(f.laddr, l, 16);
	memcpy(f.raddr, r, 16);
	f.lport = rte_cpu_to_be_16(5001);
	f.rport = rte_cpu_to_be_16(40000);
	tcp_cookie_keys_init(&k, 7);
	uint32_t c = tcp_cookie_make(&k, &f, 999, 1440, 7);
	assert_true(tcp_cookie_check(&k, &f, 999, c, 7, &mss));
	assert_int_equal(mss, 1440);
	assert_true(tcp_cookie_check(&k, &f, 999, c, 8, &mss));
	for (unsigned byte = 0; byte < 16; byte++) {
		struct tcp_flow g = f;
		g.raddr[byte] ^= 0x01;
		assert_false(tcp_cookie_check(&k, &g, 999, c, 7, &mss));
		g = f;
		g.laddr[byte] ^= 0x80;
		assert_false(tcp_cookie_check(&k, &g, 999, c, 7, &mss));
	}
	struct tcp_flow v4 = flow4(0x10, 0x01, f.lport, f.rport);
	assert_false(tcp_cookie_check(&k, &v4, 999, c, 7, &mss));
	/* the MSS of an IPv6 link (1500 - 60), rounded down to the table */
	assert_int_equal(tcp_cookie_mss_round(1440), 1440);
}

static void isn(void **state)
{
	struct tcp_cookie_keys k;
	struct tcp_flow f = flow4(1, 2, 3, 4), g = flow4(1, 2, 3, 5);
	(void)state;
	tcp_cookie_keys_init(&k, 0);
	uint32_t a = tcp_isn(&k, &f, 1000), b = tcp_isn(&k, &f, 1004);
	assert_int_equal(b - a, 1);   /* the 4 us clock */
	assert_true(tcp_isn(&k, &g, 1000) != a);
}

static void state_table(void **state)
{
	static const struct { enum tcp_state s; enum tcp_event e; enum tcp_state n; } t[] = {
		{ TCP_SYN_SENT, TCP_EV_SYN_ACK, TCP_ESTABLISHED },
		{ TCP_SYN_SENT, TCP_EV_SYN, TCP_SYN_RECEIVED },        /* simultaneous open */
		{ TCP_SYN_RECEIVED, TCP_EV_ACK_OF_SYN, TCP_ESTABLISHED },
		{ TCP_ESTABLISHED, TCP_EV_FIN, TCP_CLOSE_WAIT },
		{ TCP_ESTABLISHED, TCP_EV_CLOSE, TCP_FIN_WAIT_1 },
		{ TCP_FIN_WAIT_1, TCP_EV_ACK_OF_FIN, TCP_FIN_WAIT_2 },
		{ TCP_FIN_WAIT_1, TCP_EV_FIN, TCP_CLOSING },           /* simultaneous close */
		{ TCP_CLOSING, TCP_EV_ACK_OF_FIN, TCP_TIME_WAIT },
		{ TCP_FIN_WAIT_2, TCP_EV_FIN, TCP_TIME_WAIT },
		{ TCP_CLOSE_WAIT, TCP_EV_CLOSE, TCP_LAST_ACK },
		{ TCP_LAST_ACK, TCP_EV_ACK_OF_FIN, TCP_CLOSED },
		{ TCP_TIME_WAIT, TCP_EV_TIMEOUT, TCP_CLOSED },
		{ TCP_ESTABLISHED, TCP_EV_RST, TCP_CLOSED },
		{ TCP_SYN_SENT, TCP_EV_CLOSE, TCP_CLOSED },
		{ TCP_ESTABLISHED, TCP_EV_SYN, TCP_NSTATES },          /* invalid */
		{ TCP_TIME_WAIT, TCP_EV_CLOSE, TCP_NSTATES },
		{ TCP_CLOSED, TCP_EV_FIN, TCP_NSTATES },
		{ TCP_FIN_WAIT_2, TCP_EV_CLOSE, TCP_NSTATES },
	};
	(void)state;
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (tcp_next_state(t[i].s, t[i].e) != t[i].n)
			fail_msg("%s + event %d -> %s, want %s", tcp_state_name(t[i].s),
				 t[i].e, tcp_state_name(tcp_next_state(t[i].s, t[i].e)),
				 tcp_state_name(t[i].n));
	assert_int_equal(tcp_next_state(TCP_NSTATES, TCP_EV_FIN), TCP_NSTATES);
}

static void rto(void **state)
{
	struct tcp_rtt r;
	(void)state;
	tcp_rtt_init(&r, 200000);
	assert_int_equal(tcp_rtt_rto(&r, 5000), 200000);
	tcp_rtt_sample(&r, 10000, 5000);           /* SRTT 10 ms, RTTVAR 5 ms */
	assert_int_equal(r.srtt_us, 10000);
	assert_int_equal(r.rto_us, 10000 + 4 * 5000);
	tcp_rtt_sample(&r, 10000, 5000);           /* RTTVAR decays */
	assert_int_equal(r.rttvar_us, 3750);
	tcp_rtt_backoff(&r);
	tcp_rtt_backoff(&r);
	assert_int_equal(tcp_rtt_rto(&r, 5000), 4 * r.rto_us);
	tcp_rtt_sample(&r, 100, 5000);             /* floor, backoff reset */
	assert_true(tcp_rtt_rto(&r, 5000) >= 5000);
	assert_int_equal(r.backoff, 0);
	for (int i = 0; i < 40; i++)
		tcp_rtt_backoff(&r);
	assert_int_equal(tcp_rtt_rto(&r, 5000), 60u * 1000 * 1000);   /* ceiling */
}

static void congestion(void **state)
{
	const struct tcp_cc_ops *ops[2] = { &tcp_cc_newreno, &tcp_cc_cubic };
	(void)state;
	for (int k = 0; k < 2; k++) {
		struct tcp_cc_state s;
		const uint32_t mss = 1000;
		ops[k]->init(&s, mss);
		assert_int_equal(s.cwnd, 10 * mss);
		/* slow start: one MSS per acked MSS */
		for (int i = 0; i < 10; i++)
			ops[k]->on_ack(&s, mss, mss, 1000 * i, 100);
		assert_int_equal(s.cwnd, 20 * mss);
		ops[k]->on_loss(&s, mss, 20 * mss, 2000);
		uint32_t after = s.cwnd;
		assert_int_equal(after, k == 0 ? 10 * mss : 14 * mss);  /* 1/2 vs 0.7 */
		/* congestion avoidance grows, slower than slow start */
		for (int i = 0; i < 100; i++)
			ops[k]->on_ack(&s, mss, mss, 3000 + 1000 * i, 100);
		assert_true(s.cwnd > after);
		assert_true(s.cwnd < after + 100 * mss);
		ops[k]->on_rto(&s, mss, s.cwnd);
		assert_int_equal(s.cwnd, mss);
		assert_true(s.ssthresh >= 2 * mss);
	}
}

int main(void)
{
	char *argv[] = { "test_tcp", "--no-huge", "-m", "64", "--no-pci",
			 "--file-prefix", "rnic-test-tcp", "--log-level=*:error", NULL };
	if (rte_eal_init(8, argv) < 0)
		return 1;
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(seq_table), cmocka_unit_test(opts_roundtrip),
		cmocka_unit_test(opts_malformed), cmocka_unit_test(siphash_vector),
		cmocka_unit_test(siphash_matches_reference),
		cmocka_unit_test(cookies), cmocka_unit_test(cookies_ipv6), cmocka_unit_test(isn),
		cmocka_unit_test(state_table), cmocka_unit_test(rto),
		cmocka_unit_test(congestion),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
