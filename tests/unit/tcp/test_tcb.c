/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * TCB behaviour without a network (harness.h): two rnic TCP instances
 * exchange captured segments; the tests drop, inspect and inject segments
 * and drive the clock. Covers the SYN stage (cookies, no state per SYN,
 * backlog), both handshake roles, simultaneous open and close, data with
 * delayed ACKs, out-of-order data and SACK, fast retransmit, RTO, zero-window
 * probes, FIN to TIME_WAIT, RFC 5961 RST/SYN checks, PAWS, malformed input
 * and the stream hand-off. Every test ends with no mbuf left in use.
 */
#include <errno.h>
#include <string.h>

#include "net/net.h"
#include "cases.h"

static struct rnic_tcp_conn *only_conn(struct h_node *n)
{
	const void *key;
	void *data;
	uint32_t it = 0;
	if (rte_hash_iterate(tcp_w(&n->w)->tcbs, &key, &data, &it) < 0)
		return NULL;
	return data;
}

/* --- SYN stage and handshakes --------------------------------------------- */

static void handshake_passive_cookie(void **state)
{
	(void)state;
	struct h_app ca, sb;
	struct h_seg s;
	struct rnic_tcp_conn *c;
	h_app_init(&ca, 0);
	h_app_init(&sb, 0);
	assert_int_equal(rnic_tcp_listen(&h_b.st, 5001, &h_app_ops, &sb, 8), 0);
	assert_int_equal(rnic_tcp_connect(&h_a.w, H_IP_B, 5001, &h_app_ops, &ca, &c), 0);
	assert_int_equal(c->state, TCP_SYN_SENT);

	/* SYN: MSS from the port MTU, WS, SACK-permitted, timestamps */
	struct rte_mbuf *m = h_next_seg(&h_a, &s);
	assert_int_equal(s.flags, SYN);
	assert_int_equal(s.seq, c->iss);
	assert_true(s.o.mss_ok && s.o.mss == 1460);
	assert_true(s.o.ws_ok && s.o.ws == 7 && s.o.sack_ok && s.o.ts_ok);
	h_input(&h_b, m);

	/* SYN-ACK from the cookie stage: nothing allocated */
	struct rnic_tcp_stats st = h_stats(&h_b);
	assert_int_equal(st.syns, 1);
	assert_int_equal(st.cookies_sent, 1);
	assert_int_equal(st.tcbs, 0);
	assert_null(only_conn(&h_b));
	m = h_next_seg(&h_b, &s);
	assert_int_equal(s.flags, SYN | ACK);
	assert_int_equal(s.ack, c->iss + 1);
	assert_true(s.o.mss_ok && s.o.ws_ok && s.o.sack_ok && s.o.ts_ok);
	uint32_t cookie = s.seq;
	h_input(&h_a, m);
	assert_int_equal(c->state, TCP_ESTABLISHED);
	assert_int_equal(ca.connects, 1);

	/* final ACK: the TCB is born established on B */
	m = h_next_seg(&h_a, &s);
	assert_int_equal(s.flags, ACK);
	assert_int_equal(s.ack, cookie + 1);
	h_input(&h_b, m);
	st = h_stats(&h_b);
	assert_int_equal(st.cookie_valid, 1);
	assert_int_equal(st.cookie_invalid, 0);
	assert_int_equal(st.tcbs, 1);
	assert_int_equal(st.passive_opens, 1);
	assert_int_equal(sb.accepts, 1);
	struct rnic_tcp_conn *cb = only_conn(&h_b);
	assert_ptr_equal(cb, sb.c);
	assert_int_equal(cb->state, TCP_ESTABLISHED);
	/* what the cookie and the timestamp carried */
	assert_true(cb->sack_ok && cb->ts_ok);
	assert_int_equal(cb->snd_wscale, 7);
	assert_int_equal(cb->rcv_wscale, 7);
	assert_int_equal(cb->mss, 1460 - 12);
	assert_int_equal(c->mss, 1460 - 12);
	assert_int_equal(cb->irs, c->iss);
	assert_int_equal(c->irs, cb->iss);
	/* the active side timed its SYN: RTO near the floor, not 200 ms */
	assert_true(c->rtt.have_sample);
	assert_int_equal(tcp_rtt_rto(&c->rtt, 5000), 5000);
	assert_int_equal(h_a.n_out + h_b.n_out, 0);
	h_app_fini(&ca);
	h_app_fini(&sb);
}

static void handshake_refused(void **state)
{
	(void)state;
	struct h_app ca;
	struct h_seg s;
	/* nobody listens on B:7: RST+ACK, the active side sees -ECONNREFUSED */
	h_open_active(&ca, 0, 7);
	h_input(&h_b, h_take(&h_a));
	struct rte_mbuf *m = h_next_seg(&h_b, &s);
	assert_int_equal(s.flags, RST | ACK);
	assert_int_equal(h_stats(&h_b).no_listener, 1);
	h_input(&h_a, m);
	assert_int_equal(ca.closes, 1);
	assert_int_equal(ca.closed_err, -ECONNREFUSED);
	assert_int_equal(h_stats(&h_a).tcbs, 0);
	h_app_fini(&ca);
}

static void syn_retry_and_timeout(void **state)
{
	(void)state;
	struct h_app ca;
	struct h_seg s;
	struct rnic_tcp_conn *c;
	c = h_open_active(&ca, 0, 5001);
	uint32_t iss = c->iss;
	rte_pktmbuf_free(h_next_seg(&h_a, &s));
	/* the SYN is retransmitted with backoff (200, 400, 800 ms ...) */
	h_advance(150 * 1000);
	assert_int_equal(h_a.n_out, 0);
	h_advance(100 * 1000);
	rte_pktmbuf_free(h_next_seg(&h_a, &s));
	assert_int_equal(s.flags, SYN);
	assert_int_equal(s.seq, iss);
	h_advance(300 * 1000);
	assert_int_equal(h_a.n_out, 0);
	h_advance(150 * 1000);
	assert_int_equal(h_a.n_out, 1);
	h_flush(&h_a);
	for (int i = 0; i < 12 && ca.closes == 0; i++) {
		h_advance(60u * 1000 * 1000);
		h_flush(&h_a);
	}
	assert_int_equal(ca.closes, 1);
	assert_int_equal(ca.closed_err, -ETIMEDOUT);
	assert_int_equal(h_stats(&h_a).tcbs, 0);
	h_app_fini(&ca);
}

/* Active opens choose a source port whose replies steer to the caller. */
static void active_open_port_steers_home(void **state)
{
	(void)state;
	struct h_app ca[8];
	struct rnic_tcp_conn *c[8];
	h_owner_mod = 5;
	h_a.w.id = 3;
	for (int i = 0; i < 8; i++) {
		h_app_init(&ca[i], 0);
		assert_int_equal(rnic_tcp_connect(&h_a.w, H_IP_B, 80, &h_app_ops, &ca[i], &c[i]), 0);
		uint16_t lport = rte_be_to_cpu_16(c[i]->key.lport);
		assert_int_equal(lport % 5, 3);
		assert_true(lport >= 32768 && lport <= 60999);
		for (int j = 0; j < i; j++)
			assert_int_not_equal(c[j]->key.lport, c[i]->key.lport);
	}
	h_flush(&h_a);
	for (int i = 0; i < 8; i++) {
		rnic_tcp_abort(c[i]);
		h_app_fini(&ca[i]);
	}
	h_flush(&h_a);
	h_a.w.id = 0;
}

static void simultaneous_open(void **state)
{
	(void)state;
	struct h_app ca;
	struct h_seg s;
	struct rnic_tcp_conn *c;
	const uint32_t peer_isn = 0xfffffff0;   /* wraps during the test */
	c = h_open_active(&ca, 1024, 6000);
	rte_pktmbuf_free(h_next_seg(&h_a, &s));

	/* the peer's own SYN crosses ours */
	struct tcp_opts o = { .mss_ok = true, .mss = 1460, .ws_ok = true, .ws = 2,
			      .sack_ok = true, .ts_ok = true, .tsval = 1000 };
	h_input(&h_a, h_craft_to(c, peer_isn, 0, SYN, &o, NULL, 0));
	assert_int_equal(c->state, TCP_SYN_RECEIVED);
	rte_pktmbuf_free(h_next_seg(&h_a, &s));
	assert_int_equal(s.flags, SYN | ACK);
	assert_int_equal(s.seq, c->iss);
	assert_int_equal(s.ack, peer_isn + 1);
	assert_true(s.o.ws_ok && s.o.sack_ok && s.o.ts_ok);

	/* the peer's SYN-ACK (RFC 9293 figure 8, line 6) completes the open */
	o.tsval = 1001;
	o.tsecr = s.o.tsval;
	h_input(&h_a, h_craft_to(c, peer_isn, c->iss + 1, SYN | ACK, &o, NULL, 0));
	assert_int_equal(c->state, TCP_ESTABLISHED);
	assert_int_equal(ca.connects, 1);
	assert_int_equal(c->snd_wscale, 2);
	h_flush(&h_a);

	/* data from the peer across the sequence wrap is delivered */
	struct tcp_opts d = { .ts_ok = true, .tsval = 1002, .tsecr = s.o.tsval };
	uint8_t buf[100];
	h_pattern(buf, 0, sizeof(buf));
	h_input(&h_a, h_craft_to(c, peer_isn + 1, c->iss + 1, ACK | PSH, &d, buf, 100));
	assert_int_equal(ca.got, 100);
	assert_true(h_pattern_ok(ca.buf, 0, 100));
	assert_int_equal(c->rcv_nxt, peer_isn + 101);
	rnic_tcp_abort(c);
	h_app_fini(&ca);
}

static void syn_flood_keeps_no_state(void **state)
{
	(void)state;
	struct h_app sb;
	h_app_init(&sb, 0);
	assert_int_equal(rnic_tcp_listen(&h_b.st, 80, &h_app_ops, &sb, 4), 0);
	unsigned before = rte_mempool_in_use_count(h_pool);
	struct tcp_opts o = { .mss_ok = true, .mss = 1460, .ws_ok = true, .ws = 7,
			      .sack_ok = true, .ts_ok = true, .tsval = 5 };
	uint8_t ob[40];
	size_t olen = tcp_opts_build(ob, &o, true);
	for (unsigned i = 0; i < 2000; i++) {
		h_input(&h_b, h_craft(0xc6120000u + i, H_IP_B, (uint16_t)(1024 + i), 80,
				      i * 7919u, 0, SYN, 65535, ob, olen, NULL, 0));
		assert_int_equal(h_b.n_out, 1);
		h_flush(&h_b);
	}
	struct rnic_tcp_stats st = h_stats(&h_b);
	assert_int_equal(st.syns, 2000);
	assert_int_equal(st.cookies_sent, 2000);
	assert_int_equal(st.tcbs, 0);
	assert_int_equal(rte_mempool_in_use_count(h_pool), before);

	/* an ACK with a forged cookie: reset, counted, no state */
	h_input(&h_b, h_craft(0xc6120001u, H_IP_B, 1025, 80, 7919u + 1, 0x12345678,
			      ACK, 65535, NULL, 0, NULL, 0));
	struct h_seg s;
	rte_pktmbuf_free(h_next_seg(&h_b, &s));
	assert_int_equal(s.flags, RST);
	assert_int_equal(s.seq, 0x12345678);
	assert_int_equal(h_stats(&h_b).cookie_invalid, 1);
	assert_int_equal(h_stats(&h_b).tcbs, 0);
	h_app_fini(&sb);
}

/* Connect A to B:@p port through the cookie stage and lose the final ACK:
 * A is established, B holds nothing. @return A's connection. */
static struct rnic_tcp_conn *handshake_lose_final_ack(struct h_app *ca, struct h_app *sb,
						     uint16_t port, uint32_t *cookie)
{
	struct rnic_tcp_conn *c;
	struct h_seg s;
	assert_int_equal(rnic_tcp_listen(&h_b.st, port, &h_app_ops, sb, 8), 0);
	assert_int_equal(rnic_tcp_connect(&h_a.w, H_IP_B, port, &h_app_ops, ca, &c), 0);
	h_input(&h_b, h_take(&h_a));                   /* SYN */
	struct rte_mbuf *m = h_next_seg(&h_b, &s);       /* cookie SYN-ACK */
	*cookie = s.seq;
	h_input(&h_a, m);
	assert_int_equal(c->state, TCP_ESTABLISHED);
	rte_pktmbuf_free(h_next_seg(&h_a, &s));          /* the final ACK, lost */
	assert_int_equal(s.flags, ACK);
	assert_int_equal(s.len, 0);
	return c;
}

/* The final ACK of a cookie handshake is lost: the client's first data
 * segment carries the same acknowledgment (cookie + 1) and completes it.
 * The TCB is born from it, its data is delivered, nothing is counted as
 * invalid. A FIN as the first segment completes it too. */
static void lost_final_ack_completed_by_data(void **state)
{
	(void)state;
	struct h_app ca, sb;
	struct h_seg s;
	uint32_t cookie;
	const size_t n = 3 * 1448 + 100;
	h_app_init(&ca, 0);
	h_app_init(&sb, n);
	struct rnic_tcp_conn *c = handshake_lose_final_ack(&ca, &sb, 5001, &cookie);
	assert_int_equal(h_stats(&h_b).tcbs, 0);
	assert_int_equal(h_send(c, 0, n), 0);
	assert_int_equal(h_a.n_out, 4);
	struct rte_mbuf *m = h_next_seg(&h_a, &s);       /* the first data segment */
	assert_int_equal(s.flags & (SYN | ACK | RST | FIN), ACK);
	assert_int_equal(s.ack, cookie + 1);
	assert_int_equal(s.seq, c->iss + 1);
	assert_int_equal(s.len, 1448);
	h_input(&h_b, m);
	struct rnic_tcp_stats st = h_stats(&h_b);
	assert_int_equal(st.syns, 1);
	assert_int_equal(st.cookies_sent, 1);
	assert_int_equal(st.cookie_valid, 1);
	assert_int_equal(st.cookie_invalid, 0);
	assert_int_equal(st.passive_opens, 1);
	assert_int_equal(st.established, 1);
	assert_int_equal(st.tcbs, 1);
	assert_int_equal(st.resets_out, 0);
	assert_int_equal(sb.accepts, 1);
	assert_int_equal(sb.got, 1448);                /* its data, not dropped */
	struct rnic_tcp_conn *cb = only_conn(&h_b);
	assert_int_equal(cb->state, TCP_ESTABLISHED);
	assert_int_equal(cb->irs, c->iss);
	assert_int_equal(cb->iss, cookie);
	assert_true(cb->sack_ok && cb->ts_ok);         /* the TSecr still echoes the cookie's */
	assert_int_equal(cb->snd_wscale, 7);
	h_pump(NULL, NULL, NULL, 100);
	assert_int_equal(sb.got, n);
	assert_true(h_pattern_ok(sb.buf, 0, n));
	assert_int_equal(c->snd_una, c->snd_max);
	assert_int_equal(h_stats(&h_a).retransmits, 0);
	assert_int_equal(h_stats(&h_b).cookie_invalid, 0);
	assert_int_equal(h_stats(&h_b).out_of_window, 0);
	h_app_fini(&ca);
	h_app_fini(&sb);

	/* a client that closes at once: its FIN completes the handshake */
	struct h_app ca2, sb2;
	h_app_init(&ca2, 0);
	h_app_init(&sb2, 0);
	c = handshake_lose_final_ack(&ca2, &sb2, 5002, &cookie);
	assert_int_equal(rnic_tcp_close(c), 0);
	m = h_next_seg(&h_a, &s);
	assert_int_equal(s.flags & (SYN | ACK | RST | FIN), ACK | FIN);
	h_input(&h_b, m);
	assert_int_equal(h_stats(&h_b).cookie_valid, 2);
	assert_int_equal(sb2.accepts, 1);
	assert_int_equal(sb2.eofs, 1);
	assert_int_equal(sb2.c->state, TCP_CLOSE_WAIT);
	h_pump(NULL, NULL, NULL, 50);
	assert_int_equal(c->state, TCP_FIN_WAIT_2);
	assert_int_equal(h_stats(&h_b).cookie_invalid, 0);
	h_app_fini(&ca2);
	h_app_fini(&sb2);
}

/* What remains (docs/tcp.md, as with Linux's cookies): the cookie names
 * the client's ISN through the segment's sequence number, so only a
 * segment that starts the stream (seq = ISN + 1) can complete the
 * handshake. If the first data segment is lost with the final ACK and a
 * later one arrives first, the cookie cannot be checked: it is counted
 * invalid and reset. */
static void lost_final_ack_and_first_segment(void **state)
{
	(void)state;
	struct h_app ca, sb;
	struct h_seg s;
	uint32_t cookie;
	h_app_init(&ca, 0);
	h_app_init(&sb, 0);
	struct rnic_tcp_conn *c = handshake_lose_final_ack(&ca, &sb, 5001, &cookie);
	assert_int_equal(h_send(c, 0, 2 * 1448), 0);
	rte_pktmbuf_free(h_next_seg(&h_a, &s));          /* the first, lost */
	h_input(&h_b, h_next_seg(&h_a, &s));             /* the second */
	assert_int_equal(s.ack, cookie + 1);
	struct rnic_tcp_stats st = h_stats(&h_b);
	assert_int_equal(st.cookie_invalid, 1);
	assert_int_equal(st.tcbs, 0);
	h_input(&h_a, h_next_seg(&h_b, &s));
	assert_int_equal(s.flags, RST);
	assert_int_equal(ca.closes, 1);
	assert_int_equal(ca.closed_err, -ECONNRESET);
	h_app_fini(&ca);
	h_app_fini(&sb);
}

/* The final ACK is lost, so is the first data segment (an MPA request),
 * and then a second SYN-ACK reaches the client (a duplicate, or the answer
 * to a repeated SYN). The client's answer repeats the handshake's ACK:
 * seq = ISN + 1, as the lost one had. Sent from snd_nxt it could not
 * carry the cookie (the listener recovers the client's ISN from seq - 1)
 * and the listener would reset a connection whose first data is still to
 * come: in iwarp_verbs_faults the passive side then never saw the MPA
 * request and waited for a CONNECT_REQUEST for ever. */
static void lost_final_ack_then_dup_syn_ack(void **state)
{
	(void)state;
	struct h_app ca, sb;
	struct h_seg s;
	const size_t n = 100;
	h_app_init(&ca, 0);
	h_app_init(&sb, n);
	struct rnic_tcp_conn *c;
	assert_int_equal(rnic_tcp_listen(&h_b.st, 5003, &h_app_ops, &sb, 8), 0);
	assert_int_equal(rnic_tcp_connect(&h_a.w, H_IP_B, 5003, &h_app_ops, &ca, &c), 0);
	h_input(&h_b, h_take(&h_a));                   /* SYN */
	struct rte_mbuf *m = h_next_seg(&h_b, &s);       /* cookie SYN-ACK */
	uint32_t cookie = s.seq;
	struct rte_mbuf *dup = rte_pktmbuf_copy(m, h_pool, 0, UINT32_MAX);
	assert_non_null(dup);
	h_input(&h_a, m);
	assert_int_equal(c->state, TCP_ESTABLISHED);
	rte_pktmbuf_free(h_next_seg(&h_a, &s));          /* the final ACK, lost */
	assert_int_equal(h_send(c, 0, n), 0);
	rte_pktmbuf_free(h_next_seg(&h_a, &s));          /* the first data, lost */
	assert_int_equal(s.seq, c->iss + 1);
	assert_int_equal(s.len, n);
	h_input(&h_a, dup);                            /* the SYN-ACK again */
	m = h_next_seg(&h_a, &s);
	assert_int_equal(s.flags & (SYN | ACK | RST | FIN), ACK);
	assert_int_equal(s.len, 0);
	assert_int_equal(s.seq, c->iss + 1);           /* not snd_nxt */
	assert_int_equal(s.ack, cookie + 1);
	assert_true(s.o.ts_ok);
	assert_int_equal(h_stats(&h_a).handshake_acks, 1);
	h_input(&h_b, m);
	struct rnic_tcp_stats st = h_stats(&h_b);
	assert_int_equal(st.cookie_valid, 1);
	assert_int_equal(st.cookie_invalid, 0);
	assert_int_equal(st.resets_out, 0);
	assert_int_equal(st.tcbs, 1);
	assert_int_equal(sb.accepts, 1);
	assert_int_equal(ca.closes, 0);
	struct rnic_tcp_conn *cb = only_conn(&h_b);
	assert_true(cb->sack_ok && cb->ts_ok);         /* the TSecr still echoes the cookie's */
	/* the lost data goes again at the RTO and completes */
	for (int i = 0; i < 100 && sb.got < n; i++) {
		h_advance(10000);
		h_pump(NULL, NULL, NULL, 20);
	}
	assert_int_equal(sb.got, n);
	assert_true(h_pattern_ok(sb.buf, 0, n));
	assert_int_equal(c->snd_una, c->snd_max);
	assert_int_equal(ca.closes, 0);
	h_app_fini(&ca);
	h_app_fini(&sb);
}

/* Cost of the SYN stage alone (TCB_BENCH=1): SYNs in, SYN-ACKs captured
 * and freed. Prints per-SYN nanoseconds; asserts only the counters. */
static void syn_stage_bench(void **state)
{
	(void)state;
	struct h_app sb;
	h_app_init(&sb, 0);
	assert_int_equal(rnic_tcp_listen(&h_b.st, 80, &h_app_ops, &sb, 4), 0);
	unsigned n = getenv("TCB_BENCH") ? 1000000 : 1000;
	struct tcp_opts o = { .mss_ok = true, .mss = 1460, .ws_ok = true, .ws = 7,
			      .sack_ok = true, .ts_ok = true, .tsval = 5 };
	uint8_t ob[40];
	size_t olen = tcp_opts_build(ob, &o, true);
	struct rte_mbuf *tmpl = h_craft(0xc6120000u, H_IP_B, 1024, 80, 1, 0, SYN, 65535,
					ob, olen, NULL, 0);
	uint64_t cycles = 0;
	for (unsigned i = 0; i < n; i++) {
		struct rte_mbuf *m = rte_pktmbuf_copy(tmpl, h_pool, 0, UINT32_MAX);
		assert_non_null(m);
		m->l2_len = 0;
		m->l3_len = 20;
		uint64_t t0 = rte_rdtsc();
		h_input(&h_b, m);
		cycles += rte_rdtsc() - t0;
		h_flush(&h_b);
	}
	rte_pktmbuf_free(tmpl);
	assert_int_equal(h_stats(&h_b).cookies_sent, n);
	assert_int_equal(h_stats(&h_b).tcbs, 0);
	if (getenv("TCB_BENCH"))
		fprintf(stderr, "syn stage: %.1f ns per SYN (input, cookie, SYN-ACK built)\n",
			(double)cycles / n * 1e9 / (double)rte_get_tsc_hz());
	h_app_fini(&sb);
}

/* Cost of whole handshakes in lib/tcp, both ends (TCB_BENCH=1): connect,
 * SYN, cookie SYN-ACK, final ACK creating the passive TCB, then both
 * aborted. Prints per-handshake nanoseconds. */
static void handshake_bench(void **state)
{
	(void)state;
	struct h_app ca, sb;
	h_app_init(&ca, 0);
	h_app_init(&sb, 0);
	assert_int_equal(rnic_tcp_listen(&h_b.st, 80, &h_app_ops, &sb, 1u << 20), 0);
	unsigned n = getenv("TCB_BENCH") ? 100000 : 1000;
	uint64_t cycles = 0;
	for (unsigned i = 0; i < n; i++) {
		struct rnic_tcp_conn *c;
		uint64_t t0 = rte_rdtsc();
		assert_int_equal(rnic_tcp_connect(&h_a.w, H_IP_B, 80, &h_app_ops, &ca, &c), 0);
		h_input(&h_b, h_take(&h_a));       /* SYN */
		h_input(&h_a, h_take(&h_b));       /* SYN-ACK */
		h_input(&h_b, h_take(&h_a));       /* ACK: the TCB is born */
		cycles += rte_rdtsc() - t0;
		assert_int_equal(c->state, TCP_ESTABLISHED);
		assert_non_null(sb.c);
		rnic_tcp_abort(c);
		rnic_tcp_abort(sb.c);
		sb.c = NULL;
		h_flush(&h_a);
		h_flush(&h_b);
	}
	assert_int_equal(sb.accepts, n);
	assert_int_equal(h_stats(&h_a).tcbs + h_stats(&h_b).tcbs, 0);
	if (getenv("TCB_BENCH"))
		fprintf(stderr, "handshake: %.1f ns per connection, both ends\n",
			(double)cycles / n * 1e9 / (double)rte_get_tsc_hz());
	h_app_fini(&ca);
	h_app_fini(&sb);
}

/* Freed TCBs are kept for reuse, at most TCP_TCB_CACHE per worker: 300
 * connections at once, then all reset, leave exactly that many cached on
 * each side; the next handshake takes one from the cache on each side. */
static void tcb_cache_bounded(void **state)
{
	(void)state;
	enum { N = TCP_TCB_CACHE + 44 };
	static struct rnic_tcp_conn *cs[N];
	struct h_app ca, sb;
	h_app_init(&ca, 0);
	h_app_init(&sb, 0);
	assert_int_equal(rnic_tcp_listen(&h_b.st, 80, &h_app_ops, &sb, N + 1), 0);
	for (unsigned i = 0; i < N; i++) {
		assert_int_equal(rnic_tcp_connect(&h_a.w, H_IP_B, 80, &h_app_ops, &ca, &cs[i]), 0);
		h_input(&h_b, h_take(&h_a));       /* SYN */
		h_input(&h_a, h_take(&h_b));       /* SYN-ACK */
		h_input(&h_b, h_take(&h_a));       /* ACK: B's TCB */
		assert_int_equal(cs[i]->state, TCP_ESTABLISHED);
	}
	assert_int_equal(h_stats(&h_b).tcbs, N);
	for (unsigned i = 0; i < N; i++) {
		rnic_tcp_abort(cs[i]);
		h_input(&h_b, h_take(&h_a));       /* RST: B frees its TCB */
	}
	struct rnic_tcp_stats a = h_stats(&h_a), b = h_stats(&h_b);
	assert_int_equal(a.tcbs + b.tcbs, 0);
	assert_int_equal(a.tcbs_cached, TCP_TCB_CACHE);
	assert_int_equal(b.tcbs_cached, TCP_TCB_CACHE);
	uint64_t reuse_a = a.tcb_reuses, reuse_b = b.tcb_reuses;
	struct rnic_tcp_conn *c;
	assert_int_equal(rnic_tcp_connect(&h_a.w, H_IP_B, 80, &h_app_ops, &ca, &c), 0);
	h_input(&h_b, h_take(&h_a));
	h_input(&h_a, h_take(&h_b));
	h_input(&h_b, h_take(&h_a));
	assert_int_equal(c->state, TCP_ESTABLISHED);
	assert_int_equal(c->n_ooo, 0);
	assert_int_equal(c->units_cap, TCP_UNITS_MIN);
	a = h_stats(&h_a);
	b = h_stats(&h_b);
	assert_int_equal(a.tcb_reuses - reuse_a, 1);
	assert_int_equal(b.tcb_reuses - reuse_b, 1);
	assert_int_equal(a.tcbs_cached, TCP_TCB_CACHE - 1);
	assert_int_equal(b.tcbs_cached, TCP_TCB_CACHE - 1);
	h_close(c, &ca, &sb);
}

/* A valid cookie with the backlog full creates nothing; a later ACK does. */
static void backlog_full_no_state(void **state)
{
	(void)state;
	struct h_app ca1, ca2, sb;
	struct rnic_tcp_conn *c1, *c2;
	struct h_seg s;
	h_app_init(&ca1, 0);
	h_app_init(&ca2, 0);
	h_app_init(&sb, 0);
	assert_int_equal(rnic_tcp_listen(&h_b.st, 81, &h_app_ops, &sb, 1), 0);
	assert_int_equal(rnic_tcp_connect(&h_a.w, H_IP_B, 81, &h_app_ops, &ca1, &c1), 0);
	h_pump(NULL, NULL, NULL, 50);
	assert_int_equal(sb.accepts, 1);
	assert_int_equal(rnic_tcp_connect(&h_a.w, H_IP_B, 81, &h_app_ops, &ca2, &c2), 0);
	h_input(&h_b, h_take(&h_a));              /* SYN */
	h_input(&h_a, h_take(&h_b));              /* SYN-ACK */
	assert_int_equal(c2->state, TCP_ESTABLISHED);
	h_input(&h_b, h_next_seg(&h_a, &s));        /* final ACK */
	struct rnic_tcp_stats st = h_stats(&h_b);
	assert_int_equal(st.backlog_full, 1);
	assert_int_equal(st.tcbs, 1);
	assert_int_equal(h_b.n_out, 0);           /* silence, the client retries */
	/* the first connection goes; the client's data then creates the TCB */
	rnic_tcp_abort(sb.c);
	h_flush(&h_b);
	h_pump(NULL, NULL, NULL, 20);
	assert_int_equal(h_send(c2, 0, 10), 0);
	h_pump(NULL, NULL, NULL, 50);
	assert_int_equal(sb.accepts, 2);
	assert_int_equal(h_stats(&h_b).tcbs, 1);
	h_app_fini(&ca1);
	h_app_fini(&ca2);
	h_app_fini(&sb);
}

/* A listener slot freed by unlisten while its connection lives is not
 * reused: the connection gives its count back to its own slot when it
 * goes, and a new listener's backlog never looks full because of it. It
 * used to be reused with the count reset to 0, which then wrapped below 0
 * and refused every later final ACK as backlog_full. */
static void listener_slot_reuse(void **state)
{
	(void)state;
	struct h_app ca1, ca2, sb1, sb2;
	struct rnic_tcp_conn *c1, *c2;
	h_app_init(&ca1, 0);
	h_app_init(&ca2, 0);
	h_app_init(&sb1, 0);
	h_app_init(&sb2, 0);
	assert_int_equal(rnic_tcp_listen(&h_b.st, 82, &h_app_ops, &sb1, 4), 0);
	assert_int_equal(rnic_tcp_connect(&h_a.w, H_IP_B, 82, &h_app_ops, &ca1, &c1), 0);
	h_pump(NULL, NULL, NULL, 50);
	assert_int_equal(sb1.accepts, 1);
	assert_int_equal(rnic_tcp_unlisten(&h_b.st, 82), 0);
	assert_int_equal(rnic_tcp_listen(&h_b.st, 83, &h_app_ops, &sb2, 4), 0);
	/* the old connection goes after the new listener came */
	rnic_tcp_abort(c1);
	h_pump(NULL, NULL, NULL, 20);
	assert_int_equal(sb1.closes, 1);
	uint64_t full = h_stats(&h_b).backlog_full;
	assert_int_equal(rnic_tcp_connect(&h_a.w, H_IP_B, 83, &h_app_ops, &ca2, &c2), 0);
	h_pump(NULL, NULL, NULL, 50);
	assert_int_equal(h_stats(&h_b).backlog_full, full);
	assert_int_equal(sb2.accepts, 1);
	assert_int_equal(c2->state, TCP_ESTABLISHED);
	rnic_tcp_abort(c2);
	h_pump(NULL, NULL, NULL, 20);
	assert_int_equal(rnic_tcp_unlisten(&h_b.st, 83), 0);
	/* nothing is held any more: every count is back to 0 */
	for (unsigned i = 0; i < TCP_MAX_LISTENERS; i++)
		assert_int_equal(tcp_s(&h_b.st)->listeners[i].count, 0);
	h_app_fini(&ca1);
	h_app_fini(&ca2);
	h_app_fini(&sb1);
	h_app_fini(&sb2);
}

/* --- data ------------------------------------------------------------------ */

struct count_arg {
	unsigned data_a2b, acks_b2a, drop_idx, dropped;
	uint32_t drop_seq;      /* drop the first data segment with this seq */
	bool drop_all_data;
};

static bool count_a2b(const struct h_seg *s, unsigned idx, void *arg)
{
	(void)idx;
	struct count_arg *a = arg;
	if (s->len == 0)
		return false;
	a->data_a2b++;
	if (a->drop_all_data || (a->drop_seq && s->seq == a->drop_seq && !a->dropped)) {
		a->dropped++;
		return true;
	}
	return false;
}

static bool count_b2a(const struct h_seg *s, unsigned idx, void *arg)
{
	(void)idx;
	struct count_arg *a = arg;
	if (s->len == 0 && s->flags == ACK)
		a->acks_b2a++;
	return false;
}

static void data_and_delayed_ack(void **state)
{
	(void)state;
	struct h_app ca, sb;
	const size_t n = 1 << 20;
	struct rnic_tcp_conn *c = h_open(&ca, &sb, n, 5001);
	struct count_arg arg = { 0 };
	for (size_t off = 0; off < n; off += 64 * 1024) {
		assert_int_equal(h_send(c, off, 64 * 1024), 0);
		h_pump(count_a2b, count_b2a, &arg, 10000);
	}
	assert_int_equal(sb.got, n);
	assert_true(h_pattern_ok(sb.buf, 0, n));
	assert_int_equal(c->snd_una, c->snd_max);
	assert_int_equal(c->queued_bytes, 0);
	assert_int_equal(c->u_head, c->u_tail);
	/* full-sized segments but the last of each send; about one ACK per two
	 * after the quick-acks */
	assert_int_equal(arg.data_a2b, (n / (64 * 1024)) * ((64 * 1024 + c->mss - 1) / c->mss));
	assert_true(arg.acks_b2a < arg.data_a2b * 2 / 3);
	assert_true(arg.acks_b2a >= arg.data_a2b / 2);
	assert_true(ca.sent_calls > 0);
	assert_int_equal(h_stats(&h_a).retransmits, 0);
	h_app_fini(&ca);
	h_app_fini(&sb);
}

/* Packet too big (RFC 8201): the MSS drops to what the path carries, every
 * queued unit (sent or not) is split to fit, the dropped segment is sent
 * again at once, and the stream completes in segments that fit. The hook
 * ignores a quoted sequence number outside the flight (RFC 5927) and a
 * larger MTU. */
struct pmtu_arg {
	uint32_t mss;
	unsigned too_big;   /* data segments A->B above mss */
};

static bool pmtu_a2b(const struct h_seg *s, unsigned idx, void *arg)
{
	(void)idx;
	struct pmtu_arg *a = arg;
	a->too_big += s->len > a->mss;
	return false;
}

static bool pass_b2a(const struct h_seg *s, unsigned idx, void *arg)
{
	(void)s; (void)idx; (void)arg;
	return false;
}

static void pmtu_reduce(void **state)
{
	(void)state;
	struct h_app ca, sb;
	const size_t n = 256 * 1024;
	struct rnic_tcp_conn *c = h_open(&ca, &sb, n, 5001);
	uint16_t mss0 = c->mss;
	assert_int_equal(h_send(c, 0, n), 0);
	unsigned lost = h_flush(&h_a);      /* the first flight dies on the path */
	assert_true(lost > 1);
	/* the hook, as lib/net calls it for an ICMPv6 packet too big: the
	 * four-tuple from our side, the quoted TCP header's ports and sequence */
	uint8_t l[16], r[16], l4[8];
	rnic_ip6_v4mapped(tcp_key_l4(&c->key), l);
	rnic_ip6_v4mapped(tcp_key_r4(&c->key), r);
	memcpy(l4, &c->key.lport, 2);
	memcpy(l4 + 2, &c->key.rport, 2);
	uint32_t seq = rte_cpu_to_be_32(c->snd_max);   /* not in flight */
	memcpy(l4 + 4, &seq, 4);
	tcp_pmtu6(&h_a.w, l, r, l4, 1280);
	assert_int_equal(c->mss, mss0);
	seq = rte_cpu_to_be_32(c->snd_una + 1);
	memcpy(l4 + 4, &seq, 4);
	tcp_pmtu6(&h_a.w, l, r, l4, 9000);    /* larger: ignored */
	assert_int_equal(c->mss, mss0);
	tcp_pmtu6(&h_a.w, l, r, l4, 1280);
	uint32_t want = 1280 - 40 - (c->ts_ok ? 12 : 0);
	assert_int_equal(c->mss, want);
	assert_int_equal(h_stats(&h_a).pmtu_reductions, 1);
	for (uint32_t i = c->u_head; i != c->u_tail; i++)
		assert_true(c->units[i & (c->units_cap - 1)].len <= want);
	assert_int_equal(h_a.n_out, 1);       /* the first segment, again, at once */
	struct h_seg s;
	h_parse(h_a.out[0], &s);
	assert_int_equal(s.seq, c->snd_una);
	assert_true(s.len == want);
	struct pmtu_arg a = { .mss = want };
	h_pump(pmtu_a2b, pass_b2a, &a, 100000);
	assert_int_equal(sb.got, n);
	assert_true(h_pattern_ok(sb.buf, 0, n));
	assert_int_equal(a.too_big, 0);
	assert_int_equal(c->snd_una, c->snd_max);
	h_app_fini(&ca);
	h_app_fini(&sb);
}

/* The unit ring of a new TCB is small (an idle connection holds at most
 * its last segment or two: issue 21's memory of an idle iWARP QP) and
 * doubles as the send queue grows: 40 records queued behind the initial
 * window are 40 units, all delivered in order. */
static void unit_ring_grows(void **state)
{
	(void)state;
	struct h_app ca, sb;
	const unsigned n = 40;
	struct rnic_tcp_conn *c = h_open(&ca, &sb, n * 100, 5003);
	assert_int_equal(c->units_cap, TCP_UNITS_MIN);
	assert_true(TCP_UNITS_MIN * sizeof(struct tcp_unit) <= 128);
	assert_ptr_equal(c->units, c->units0);   /* inside the TCB: one allocation */
	rnic_tcp_set_records(c, true);
	for (unsigned i = 0; i < n; i++)
		assert_int_equal(h_send(c, i * 100, 100), 0);
	assert_true(c->u_tail - c->u_head >= n);
	assert_true(c->units_cap >= n);
	assert_ptr_not_equal(c->units, c->units0);
	h_pump(pass_b2a, pass_b2a, NULL, 10000);
	assert_int_equal(sb.got, n * 100);
	assert_true(h_pattern_ok(sb.buf, 0, n * 100));
	assert_int_equal(c->u_head, c->u_tail);
	h_app_fini(&ca);
	h_app_fini(&sb);
}

/* Small sends queued behind a full congestion window: by default they
 * fill one segment; in record mode (iWARP's FPDU alignment) each send is a
 * segment of its own, never split or merged. */
struct rec_arg {
	unsigned len100;  /* data segments of exactly 100 bytes */
};

static bool rec_a2b(const struct h_seg *s, unsigned idx, void *arg)
{
	(void)idx;
	struct rec_arg *a = arg;
	a->len100 += s->len == 100;
	return false;
}

static bool rec_b2a(const struct h_seg *s, unsigned idx, void *arg)
{
	(void)s;
	(void)idx;
	(void)arg;
	return false;
}

static unsigned record_mode(bool on, uint16_t port)
{
	struct h_app ca, sb;
	const size_t big = 64 * 1024, n = big + 3 * 100;
	h_app_init(&ca, 0);
	h_app_init(&sb, n);
	struct rnic_tcp_conn *c = h_connect(&ca, &sb, port);
	assert_non_null(c);
	rnic_tcp_set_records(c, on);
	/* 64 KiB is more than the initial window: its tail stays unsent */
	assert_int_equal(h_send(c, 0, big), 0);
	assert_true(c->u_next != c->u_tail);
	for (unsigned i = 0; i < 3; i++)
		assert_int_equal(h_send(c, big + i * 100, 100), 0);
	struct rec_arg a = { 0 };
	h_pump(rec_a2b, rec_b2a, &a, 10000);
	assert_int_equal(sb.got, n);
	assert_true(h_pattern_ok(sb.buf, 0, n));
	h_app_fini(&ca);
	h_app_fini(&sb);
	return a.len100;
}

static void records_not_merged(void **state)
{
	(void)state;
	/* 64 KiB leaves a short last segment, which the 300 bytes fill */
	assert_int_equal(record_mode(false, 5001), 0);
	assert_int_equal(record_mode(true, 5002), 3);
}

static void ooo_sack_fast_retransmit(void **state)
{
	(void)state;
	struct h_app ca, sb;
	const size_t n = 200 * 1024;
	struct rnic_tcp_conn *c = h_open(&ca, &sb, n, 5001);
	struct rnic_tcp_conn *cb = sb.c;
	uint32_t hole = c->snd_nxt + 3 * c->mss;
	assert_int_equal(h_send(c, 0, n), 0);

	/* move the first window by hand: drop the 4th segment */
	struct rte_mbuf *m;
	struct h_seg s;
	unsigned k = h_a.n_out;
	assert_true(k >= 10);
	for (unsigned i = 0; i < k; i++) {
		m = h_take(&h_a);
		h_parse(m, &s);
		if (s.seq == hole)
			rte_pktmbuf_free(m);
		else
			h_input(&h_b, m);
	}
	/* contiguous arrivals behind the hole are one chained range */
	assert_int_equal(cb->n_ooo, 1);
	assert_int_equal(cb->ooo_bytes, (k - 4) * c->mss);
	assert_true(cb->ooo[0].m->nb_segs >= k - 4);
	assert_int_equal(cb->ooo[0].m->pkt_len, (k - 4) * c->mss);
	/* every segment after the hole is ACKed at once with a SACK block
	 * (the first ACK of the hole's sequence number is the in-order one) */
	unsigned dups = 0, acks = 0;
	while ((m = h_take(&h_b)) != NULL) {
		h_parse(m, &s);
		acks++;
		if (s.ack == hole && s.o.n_sack > 0) {
			dups++;
			if (s.o.sack[0].start != hole + c->mss) {
				rte_pktmbuf_free(m);
				fail_msg("SACK block starts at %u", s.o.sack[0].start - c->iss);
			}
		}
		h_input(&h_a, m);
	}
	assert_int_equal(dups, k - 4);
	assert_int_equal(acks, k - 1);
	/* A retransmitted the hole on the dup ACKs, not on a timeout */
	assert_int_equal(h_stats(&h_a).fast_retransmits, 1);
	bool retx = false;
	for (unsigned i = 0; i < h_a.n_out; i++) {
		h_parse(h_a.out[i], &s);
		retx |= s.seq == hole && s.len > 0;
	}
	assert_true(retx);
	h_pump(NULL, NULL, NULL, 10000);
	assert_int_equal(sb.got, n);
	assert_true(h_pattern_ok(sb.buf, 0, n));
	assert_int_equal(h_stats(&h_a).rtos, 0);
	assert_int_equal(c->lost_bytes, 0);
	assert_int_equal(c->sacked_bytes, 0);
	assert_int_equal(cb->n_ooo, 0);
	assert_false(c->in_recovery);
	h_app_fini(&ca);
	h_app_fini(&sb);
}

/* Three holes: each ACK names the range of the latest arrival first
 * (RFC 2018 section 4), then the lowest others. */
static void sack_blocks_most_recent_first(void **state)
{
	(void)state;
	struct h_app ca, sb;
	struct rnic_tcp_conn *c = h_open(&ca, &sb, 64 * 1024, 5001);
	uint32_t base = c->snd_nxt, mss = c->mss;
	assert_int_equal(h_send(c, 0, 10 * mss), 0);
	assert_int_equal(h_a.n_out, 10);
	struct h_seg s;
	struct rte_mbuf *m;
	for (unsigned i = 0; i < 10; i++) {
		m = h_take(&h_a);
		if (i == 1 || i == 4 || i == 7) {   /* holes */
			rte_pktmbuf_free(m);
			continue;
		}
		h_input(&h_b, m);
		m = h_take(&h_b);
		assert_non_null(m);
		h_parse(m, &s);
		rte_pktmbuf_free(m);
		if (i == 0)
			continue;
		/* the latest segment's range comes first */
		uint32_t lo = i < 4 ? 2 : i < 7 ? 5 : 8;
		assert_true(s.o.n_sack >= 1);
		assert_int_equal(s.o.sack[0].start, base + lo * mss);
		assert_int_equal(s.o.sack[0].end, base + (i + 1) * mss);
	}
	/* after segment 9: [8,10) first, then [2,4) and [5,7) */
	assert_int_equal(s.o.n_sack, 3);
	assert_int_equal(s.o.sack[1].start, base + 2 * mss);
	assert_int_equal(s.o.sack[1].end, base + 4 * mss);
	assert_int_equal(s.o.sack[2].start, base + 5 * mss);
	assert_int_equal(s.o.sack[2].end, base + 7 * mss);
	rnic_tcp_abort(c);
	h_flush(&h_a);
	h_app_fini(&ca);
	h_app_fini(&sb);
}

/* Inject peer bytes [from, to) of the stream into @p cb. */
static void inject_range(struct rnic_tcp_conn *cb, uint32_t base, uint32_t from, uint32_t to)
{
	uint8_t buf[1024];
	h_pattern(buf, from, to - from);
	struct tcp_opts o = { .ts_ok = true, .tsval = cb->ts_recent + 1,
			      .tsecr = tcp_ts_now(cb) };
	h_input(&h_b, h_craft_to(cb, base + from, cb->snd_nxt, ACK, &o, buf, to - from));
	h_flush(&h_b);
}

static void ooo_check(const struct rnic_tcp_conn *cb, uint32_t base,
		      const uint32_t (*r)[2], unsigned n)
{
	uint32_t bytes = 0;
	assert_int_equal(cb->n_ooo, n);
	for (unsigned i = 0; i < n; i++) {
		assert_int_equal(cb->ooo[i].seq, base + r[i][0]);
		assert_int_equal(cb->ooo[i].len, r[i][1] - r[i][0]);
		assert_int_equal(cb->ooo[i].m->pkt_len, r[i][1] - r[i][0]);
		assert_ptr_equal(cb->ooo[i].tail, rte_pktmbuf_lastseg(cb->ooo[i].m));
		bytes += cb->ooo[i].len;
	}
	assert_int_equal(cb->ooo_bytes, bytes);
}

/* Out-of-order ranges are trimmed, merged and replaced so that they never
 * overlap; the stream comes out whole. A connection has no out-of-order
 * queue (6 KiB) until its first segment out of order. */
static void ooo_overlaps_merge(void **state)
{
	(void)state;
	struct h_app ca, sb;
	struct rnic_tcp_conn *c = h_open(&ca, &sb, 1000, 5001);
	struct rnic_tcp_conn *cb = sb.c;
	uint32_t base = cb->rcv_nxt;

	assert_null(c->ooo);
	assert_null(cb->ooo);
	inject_range(cb, base, 100, 200);
	assert_non_null(cb->ooo);
	inject_range(cb, base, 300, 400);
	ooo_check(cb, base, (const uint32_t[][2]){ { 100, 200 }, { 300, 400 } }, 2);
	inject_range(cb, base, 150, 250);   /* front already held */
	ooo_check(cb, base, (const uint32_t[][2]){ { 100, 250 }, { 300, 400 } }, 2);
	inject_range(cb, base, 250, 300);   /* closes the gap */
	ooo_check(cb, base, (const uint32_t[][2]){ { 100, 400 } }, 1);
	inject_range(cb, base, 120, 380);   /* nothing new */
	ooo_check(cb, base, (const uint32_t[][2]){ { 100, 400 } }, 1);
	inject_range(cb, base, 500, 600);
	inject_range(cb, base, 700, 800);
	inject_range(cb, base, 450, 850);   /* covers two entries */
	ooo_check(cb, base, (const uint32_t[][2]){ { 100, 400 }, { 450, 850 } }, 2);
	inject_range(cb, base, 420, 460);   /* tail trimmed, joins the next */
	ooo_check(cb, base, (const uint32_t[][2]){ { 100, 400 }, { 420, 850 } }, 2);
	inject_range(cb, base, 390, 430);   /* joins both */
	ooo_check(cb, base, (const uint32_t[][2]){ { 100, 850 } }, 1);
	inject_range(cb, base, 90, 95);
	inject_range(cb, base, 95, 100);
	ooo_check(cb, base, (const uint32_t[][2]){ { 90, 850 } }, 1);
	assert_int_equal(sb.got, 0);
	inject_range(cb, base, 0, 90);      /* the hole: all of it in order */
	assert_int_equal(cb->n_ooo, 0);
	assert_int_equal(cb->ooo_bytes, 0);
	assert_int_equal(sb.got, 850);
	assert_true(h_pattern_ok(sb.buf, 0, 850));
	assert_int_equal(cb->rcv_nxt, base + 850);
	rnic_tcp_abort(c);
	h_flush(&h_a);
	h_app_fini(&ca);
	h_app_fini(&sb);
}

/* Duplicates are reported once, first, as D-SACK blocks (RFC 2883). */
static void dsack_reports_duplicates(void **state)
{
	(void)state;
	struct h_app ca, sb;
	struct rnic_tcp_conn *c = h_open(&ca, &sb, 1000, 5001);
	struct rnic_tcp_conn *cb = sb.c;
	uint32_t base = cb->rcv_nxt;
	struct h_seg s;
	struct rte_mbuf *m;

	inject_range(cb, base, 0, 300);
	/* an old duplicate: not acceptable, answered with its D-SACK */
	uint8_t buf[300];
	h_pattern(buf, 0, 300);
	struct tcp_opts o = { .ts_ok = true, .tsval = cb->ts_recent + 1,
			      .tsecr = tcp_ts_now(cb) };
	h_input(&h_b, h_craft_to(cb, base + 100, cb->snd_nxt, ACK, &o, buf + 100, 100));
	m = h_next_seg(&h_b, &s);
	rte_pktmbuf_free(m);
	assert_int_equal(s.ack, base + 300);
	assert_int_equal(s.o.n_sack, 1);
	assert_int_equal(s.o.sack[0].start, base + 100);
	assert_int_equal(s.o.sack[0].end, base + 200);
	/* a segment half old, half new: the old half is reported */
	h_pattern(buf, 250, 100);
	h_input(&h_b, h_craft_to(cb, base + 250, cb->snd_nxt, ACK, &o, buf, 100));
	m = h_next_seg(&h_b, &s);
	rte_pktmbuf_free(m);
	assert_int_equal(s.ack, base + 350);
	assert_int_equal(s.o.n_sack, 1);
	assert_int_equal(s.o.sack[0].start, base + 250);
	assert_int_equal(s.o.sack[0].end, base + 300);
	/* a duplicate of out-of-order data: D-SACK first, then the range */
	inject_range(cb, base, 500, 600);
	h_pattern(buf, 500, 100);
	h_input(&h_b, h_craft_to(cb, base + 500, cb->snd_nxt, ACK, &o, buf, 100));
	m = h_next_seg(&h_b, &s);
	rte_pktmbuf_free(m);
	assert_int_equal(s.o.n_sack, 2);
	assert_int_equal(s.o.sack[0].start, base + 500);
	assert_int_equal(s.o.sack[0].end, base + 600);
	assert_int_equal(s.o.sack[1].start, base + 500);
	/* only once */
	inject_range(cb, base, 700, 800);
	h_flush(&h_b);
	tcp_send_ack(cb);
	m = h_next_seg(&h_b, &s);
	rte_pktmbuf_free(m);
	assert_int_equal(s.o.n_sack, 2);
	assert_int_equal(s.o.sack[0].start, base + 700);
	assert_int_equal(s.o.sack[1].start, base + 500);
	assert_int_equal(sb.got, 350);
	assert_true(h_pattern_ok(sb.buf, 0, 350));
	rnic_tcp_abort(c);
	h_flush(&h_a);
	h_app_fini(&ca);
	h_app_fini(&sb);
}

static void ooo_invariants(const struct rnic_tcp_conn *cb)
{
	uint32_t bytes = 0;
	assert_true(cb->n_ooo <= TCP_OOO_MAX);
	for (unsigned i = 0; i < cb->n_ooo; i++) {
		const struct tcp_ooo *o = &cb->ooo[i];
		assert_true(o->len > 0);
		assert_int_equal(o->m->pkt_len, o->len);
		assert_ptr_equal(o->tail, rte_pktmbuf_lastseg(o->m));
		assert_true(seq_gt(o->seq, cb->rcv_nxt));
		if (i > 0)   /* sorted, disjoint, not touching (else merged) */
			assert_true(seq_gt(o->seq, cb->ooo[i - 1].seq + cb->ooo[i - 1].len) ||
				    cb->ooo[i - 1].m->nb_segs + o->m->nb_segs > TCP_CHAIN_MAX);
		bytes += o->len;
	}
	assert_int_equal(cb->ooo_bytes, bytes);
}

/* Property test of the receive path: 20000 random segments (overlapping,
 * duplicate, out of order, some with old timestamps, bad options, stray
 * SYNs and RSTs) carry the pattern at their stream offsets; the queue keeps
 * its invariants, and once every hole is filled the application has read
 * exactly the pattern. */
static void random_segments_reassemble(void **state)
{
	(void)state;
	struct h_app ca, sb;
	const uint32_t span = 8u << 20;
	struct rnic_tcp_conn *c = h_open(&ca, &sb, span, 5001);
	struct rnic_tcp_conn *cb = sb.c;
	uint32_t base = cb->rcv_nxt, tsval = cb->ts_recent;
	uint64_t x = 0x853c49e6748fea9bull;
	static uint8_t buf[2048];
	for (unsigned it = 0; it < 20000; it++) {
		x ^= x << 13; x ^= x >> 7; x ^= x << 17;
		/* around the left edge a quarter of the time (progress, partly
		 * old data), else anywhere in the next 64 KiB */
		uint32_t got = (uint32_t)sb.got, len = (uint32_t)((x >> 20) % 1500);
		uint32_t off = (x >> 8) % 4 == 0 ?
			(got > (x >> 33) % 2000 ? got - (uint32_t)((x >> 33) % 2000) : 0) :
			got + (uint32_t)((x >> 33) % 65536);
		if (off >= span)
			off = span - 1;
		unsigned kind = (unsigned)((x >> 40) % 100);
		if (off + len > span)
			len = span - off;
		h_pattern(buf, off, len);
		struct tcp_opts o = { .ts_ok = true, .tsval = ++tsval, .tsecr = tcp_ts_now(cb) };
		uint8_t flags = ACK | ((x >> 50) & 1 ? PSH : 0);
		if (kind < 3)
			o.tsval = tsval - 100000;                 /* PAWS */
		struct rte_mbuf *m;
		if (kind >= 3 && kind < 5) {                      /* malformed options */
			uint8_t bad[4] = { 8, (uint8_t)(x >> 24), 1, 1 };
			m = h_craft(rte_be_to_cpu_32(tcp_key_r4(&cb->key)), H_IP_B,
				    rte_be_to_cpu_16(cb->key.rport), 5001, base + off,
				    cb->snd_nxt, flags, 65535, bad, 4, buf, len);
		} else if (kind == 5) {                           /* stray SYN */
			m = h_craft_to(cb, base + off, 0, SYN, &o, NULL, 0);
		} else if (kind == 6 && base + off != cb->rcv_nxt) {   /* inexact RST */
			m = h_craft_to(cb, base + off, 0, RST, NULL, NULL, 0);
		} else {
			m = h_craft_to(cb, base + off, cb->snd_nxt, flags, &o, buf, len);
		}
		assert_non_null(m);
		h_input(&h_b, m);
		h_flush(&h_b);
		assert_int_equal(cb->state, TCP_ESTABLISHED);
		assert_int_equal(cb->rcv_nxt - base, (uint32_t)sb.got);
		ooo_invariants(cb);
		if (it % 1000 == 0)
			h_advance(2000);   /* timers: delayed ACKs, challenge ACK window */
	}
	if (getenv("TCB_VERBOSE")) {
		struct rnic_tcp_stats x2 = h_stats(&h_b);
		fprintf(stderr, "random: delivered %zu, %u ranges (%u bytes) held; paws %lu "
			"bad_opts %lu challenge %lu oow %lu dup %lu\n", sb.got, cb->n_ooo,
			cb->ooo_bytes, x2.paws_drops, x2.bad_opts, x2.challenge_acks,
			x2.out_of_window, x2.dup_segs);
	}
	/* fill every hole in order */
	for (uint32_t off = 0; off < span; off += 1024) {
		h_pattern(buf, off, 1024);
		struct tcp_opts o = { .ts_ok = true, .tsval = ++tsval, .tsecr = tcp_ts_now(cb) };
		h_input(&h_b, h_craft_to(cb, base + off, cb->snd_nxt, ACK, &o, buf, 1024));
		h_flush(&h_b);
		ooo_invariants(cb);
	}
	assert_int_equal(sb.got, span);
	assert_true(h_pattern_ok(sb.buf, 0, span));
	assert_int_equal(cb->n_ooo, 0);
	assert_true(h_stats(&h_b).paws_drops > 0);
	assert_true(h_stats(&h_b).bad_opts > 0);
	assert_true(h_stats(&h_b).challenge_acks > 0);
	rnic_tcp_abort(c);
	h_flush(&h_a);
	h_app_fini(&ca);
	h_app_fini(&sb);
}

static void rto_retransmit(void **state)
{
	(void)state;
	struct h_app ca, sb;
	struct rnic_tcp_conn *c = h_open(&ca, &sb, 4096, 5001);
	uint32_t cwnd0 = c->cc.cwnd;
	assert_int_equal(h_send(c, 0, 1000), 0);
	struct h_seg s;
	rte_pktmbuf_free(h_next_seg(&h_a, &s));     /* lost */
	assert_int_equal(s.len, 1000);
	uint32_t rto = tcp_rtt_rto(&c->rtt, 5000);
	h_advance(rto / 2);
	assert_int_equal(h_a.n_out, 0);
	h_advance(rto / 2 + 100);
	rte_pktmbuf_free(h_next_seg(&h_a, &s));     /* lost again */
	assert_int_equal(s.seq, c->snd_una);
	assert_int_equal(s.len, 1000);
	assert_int_equal(h_stats(&h_a).rtos, 1);
	assert_int_equal(c->cc.cwnd, c->mss);
	assert_true(c->cc.cwnd < cwnd0);
	/* backoff: the next one comes after twice the RTO */
	h_advance(rto + 100);
	assert_int_equal(h_a.n_out, 0);
	h_advance(rto + 100);
	assert_int_equal(h_a.n_out, 1);
	h_pump(NULL, NULL, NULL, 100);
	assert_int_equal(sb.got, 1000);
	assert_true(h_pattern_ok(sb.buf, 0, 1000));
	assert_int_equal(h_stats(&h_a).rtos, 2);
	assert_int_equal(c->rtt.backoff, 0);
	h_app_fini(&ca);
	h_app_fini(&sb);
}

/* The receiver SACKs the first unacknowledged segment (reneging, or a
 * block meant otherwise) and its ACK of everything is lost: the timeout
 * drops the SACK marks (RFC 2018 section 8) and resends that segment. It
 * used to resend nothing, at every timeout, until the user timeout ended
 * the connection. */
static void rto_after_sacked_head(void **state)
{
	(void)state;
	struct h_app ca, sb;
	struct rnic_tcp_conn *c = h_open(&ca, &sb, 8192, 5001);
	assert_true(c->sack_ok && c->ts_ok);
	assert_int_equal(h_send(c, 0, 3000), 0);
	h_flush(&h_a);                            /* every segment lost */
	uint32_t una = c->snd_una;
	uint32_t first = c->units[c->u_head & (c->units_cap - 1)].len;
	struct tcp_opts o = { .ts_ok = true, .tsval = c->ts_recent + 1, .tsecr = tcp_ts_now(c),
			      .n_sack = 1 };
	o.sack[0] = (struct tcp_sack_block){ una, una + first };
	h_input(&h_a, h_craft_to(c, c->rcv_nxt, una, ACK, &o, NULL, 0));
	assert_true(c->units[c->u_head & (c->units_cap - 1)].sacked);
	h_flush(&h_a);
	uint64_t ren = h_stats(&h_a).sack_reneging;
	/* a tail loss probe (the last segment) may come first; the timeouts
	 * that follow, each lost, must resend the first segment */
	bool resent = false;
	for (int round = 0; round < 6 && !resent; round++) {
		h_advance(tcp_rtt_rto(&c->rtt, 5000) + 1000);
		while (h_a.n_out > 0) {
			struct h_seg s;
			rte_pktmbuf_free(h_next_seg(&h_a, &s));
			if (s.seq == una && s.len == first)
				resent = true;
		}
	}
	assert_true(resent);                      /* the "SACKed" first segment again */
	assert_true(h_stats(&h_a).sack_reneging > ren);
	assert_int_equal(c->sacked_bytes, 0);
	/* and the transfer completes (the next timeouts are backed off) */
	for (int round = 0; round < 20 && sb.got < 3000; round++) {
		h_pump(NULL, NULL, NULL, 200);
		if (sb.got < 3000)
			h_advance(tcp_rtt_rto(&c->rtt, 5000) + 1000);
	}
	assert_int_equal(sb.got, 3000);
	assert_true(h_pattern_ok(sb.buf, 0, 3000));
	h_app_fini(&ca);
	h_app_fini(&sb);
}

/* The last two segments are lost: a tail loss probe two RTTs later (not
 * the RTO) resends the last one, its SACK shows the other missing, and
 * recovery repairs it, all well before the RTO. */
static void tail_loss_probe(void **state)
{
	(void)state;
	struct h_app ca, sb;
	struct rnic_tcp_conn *c = h_open(&ca, &sb, 64 * 1024, 5001);
	assert_int_equal(h_send(c, 0, 2000), 0);   /* an RTT sample */
	h_pump(NULL, NULL, NULL, 100);
	assert_true(c->rtt.have_sample);
	assert_int_equal(h_send(c, 2000, 6 * c->mss), 0);
	assert_int_equal(h_a.n_out, 6);
	for (unsigned i = 0; i < 6; i++) {
		struct rte_mbuf *m = h_take(&h_a);
		if (i < 4)
			h_input(&h_b, m);
		else
			rte_pktmbuf_free(m);               /* the tail is lost */
	}
	while (h_b.n_out)                          /* ACKs of the first four */
		h_input(&h_a, h_take(&h_b));
	assert_int_equal(h_a.n_out, 0);
	assert_true(c->tlp_armed);
	uint32_t rto = tcp_rtt_rto(&c->rtt, 5000);
	uint32_t pto = 2 * c->rtt.srtt_us > 200 ? 2 * c->rtt.srtt_us : 200;
	assert_true(pto < rto);
	h_advance(pto + 50);
	assert_int_equal(h_stats(&h_a).tail_probes, 1);
	struct h_seg s;
	struct rte_mbuf *m = h_next_seg(&h_a, &s);
	assert_int_equal(s.seq, c->snd_max - c->mss);   /* the last unit */
	h_input(&h_b, m);
	h_pump(NULL, NULL, NULL, 100);
	assert_int_equal(sb.got, 2000 + 6 * c->mss);
	assert_true(h_pattern_ok(sb.buf, 0, sb.got));
	assert_int_equal(h_stats(&h_a).rtos, 0);
	assert_int_equal(h_stats(&h_a).fast_retransmits, 1);
	assert_int_equal(c->snd_una, c->snd_max);
	h_app_fini(&ca);
	h_app_fini(&sb);
}

/* An RTO whose original segment did arrive (the ACK was only late): the
 * first ACK echoes the original's timestamp, and the RTO is undone. */
/* A connection from A (without SACK: no tail loss probe before the RTO
 * itself) to B with room for 64 KiB. */
static struct rnic_tcp_conn *rto_pair(struct h_app *ca, struct h_app *sb)
{
	struct rnic_tcp_params p;
	rnic_tcp_params_default(&p);
	p.sack = false;
	assert_int_equal(rnic_tcp_config(&h_a.st, &p), 0);
	h_app_init(ca, 0);
	h_app_init(sb, 64 * 1024);
	struct rnic_tcp_conn *c = h_connect(ca, sb, 5001);
	assert_non_null(c);
	return c;
}

/* Send 8 segments from stream offset @p off and hand them all to B: its
 * ACKs wait in the link. */
static void rto_send_acks_held(struct rnic_tcp_conn *c, size_t off)
{
	assert_int_equal(h_send(c, off, 8 * 1448), 0);
	while (h_a.n_out)
		h_input(&h_b, h_take(&h_a));
}

static void spurious_rto_undone(void **state)
{
	(void)state;
	struct h_app ca, sb;
	struct rnic_tcp_conn *c = rto_pair(&ca, &sb);
	/* B gets the data, its ACK waits in the link past the RTO */
	rto_send_acks_held(c, 0);
	assert_int_equal(sb.got, 8 * 1448);
	struct tcp_cc_state before = c->cc;
	h_advance(tcp_rtt_rto(&c->rtt, 5000) + 2000);   /* >= 1 ms: a new TSval */
	assert_int_equal(h_stats(&h_a).rtos, 1);
	assert_int_equal(c->cc.cwnd, c->mss);
	assert_int_equal(h_a.n_out, 1);                   /* the first unit again */
	h_flush(&h_a);
	/* the late ACKs arrive: spurious, the congestion state comes back */
	while (h_b.n_out)
		h_input(&h_a, h_take(&h_b));
	assert_int_equal(h_stats(&h_a).spurious_rtos, 1);
	assert_true(c->cc.cwnd >= before.cwnd);
	assert_int_equal(c->lost_bytes, 0);
	assert_int_equal(c->snd_una, c->snd_max);
	/* a real loss is not undone: the ACK echoes the retransmission */
	assert_int_equal(h_send(c, 0, 1448), 0);
	h_flush(&h_a);
	h_advance(tcp_rtt_rto(&c->rtt, 5000) + 2000);
	assert_int_equal(h_stats(&h_a).rtos, 2);
	h_pump(NULL, NULL, NULL, 100);
	assert_int_equal(h_stats(&h_a).spurious_rtos, 1);
	assert_int_equal(c->snd_una, c->snd_max);
	h_app_fini(&ca);
	h_app_fini(&sb);
}

/* The Eifel undo state is allocated by the first RTO that can be undone
 * (issue 21): when there is no memory for it, that RTO is counted in
 * undo_nomem and stays (nothing is undone, no crash), and the connection
 * delivers everything; the next RTO finds memory and is undone again. */
static void spurious_rto_no_memory(void **state)
{
	(void)state;
	struct h_app ca, sb;
	struct rnic_tcp_conn *c = rto_pair(&ca, &sb);
	assert_null(c->undo);
	for (int round = 0; round < 2; round++) {
		rnic_tcp_fail_allocs(&h_a.st, round == 0 ? 1 : 0);
		rto_send_acks_held(c, (size_t)round * 8 * 1448);   /* ACKs wait past the RTO */
		h_advance(tcp_rtt_rto(&c->rtt, 5000) + 2000);
		assert_int_equal(h_stats(&h_a).rtos, round + 1);
		assert_int_equal(c->undo_armed, round == 1);
		h_flush(&h_a);
		while (h_b.n_out)
			h_input(&h_a, h_take(&h_b));
		h_pump(NULL, NULL, NULL, 100);
		assert_int_equal(c->snd_una, c->snd_max);
		assert_int_equal(h_stats(&h_a).undo_nomem, 1);
		assert_int_equal(h_stats(&h_a).spurious_rtos, round);
		if (round == 0)
			assert_null(c->undo);
		else
			assert_non_null(c->undo);
	}
	assert_int_equal(sb.got, 2 * 8 * 1448);
	assert_true(h_pattern_ok(sb.buf, 0, sb.got));
	h_app_fini(&ca);
	h_app_fini(&sb);
}

static void zero_window_probe(void **state)
{
	(void)state;
	struct h_app ca, sb;
	const size_t n = 64 * 1024;
	struct rnic_tcp_params p;
	rnic_tcp_params_default(&p);
	p.rcvbuf = 16384;
	assert_int_equal(rnic_tcp_config(&h_b.st, &p), 0);
	h_app_init(&ca, 0);
	h_app_init(&sb, n);
	sb.hold_on_accept = true;   /* the application reads nothing yet */
	struct rnic_tcp_conn *c = h_connect(&ca, &sb, 5001);
	assert_non_null(c);
	struct rnic_tcp_conn *cb = sb.c;
	assert_int_equal(h_send(c, 0, n), 0);
	h_pump(NULL, NULL, NULL, 1000);
	/* full segments while they fit; the rest of the window is below one
	 * MSS and under half the largest window: sender SWS avoidance waits */
	uint32_t full = 16384 / c->mss * c->mss;
	assert_int_equal(cb->held_bytes, full);
	assert_int_equal(c->snd_una, c->snd_max);
	uint32_t small = c->snd_wnd;
	/* the promise, rounded up to the scale unit (2^7) */
	assert_int_equal(small, (16384 - full + 127) & ~127u);
	assert_true(rnic_timer_pending(&c->rtx_timer));   /* persist */

	/* the persist timer overrides: the small window is used */
	uint32_t rto = tcp_rtt_rto(&c->rtt, 5000);
	h_advance(rto + 100);
	struct h_seg s;
	struct rte_mbuf *m = h_next_seg(&h_a, &s);
	assert_int_equal(s.len, small);
	assert_true(h_a.n_out == 0);
	h_input(&h_b, m);
	h_pump(NULL, NULL, NULL, 100);
	assert_int_equal(cb->held_bytes, full + small);
	assert_int_equal(c->snd_wnd, 0);
	assert_int_equal(c->snd_una, c->snd_max);

	/* zero window: an ACK-only probe below snd_una draws B's ACK */
	h_advance(tcp_rtt_rto(&c->rtt, 5000) + 100);
	m = h_next_seg(&h_a, &s);
	assert_int_equal(s.len, 0);
	assert_int_equal(s.seq, c->snd_una - 1);
	h_input(&h_b, m);
	m = h_next_seg(&h_b, &s);
	assert_int_equal(s.wnd, 0);
	assert_int_equal(s.ack, c->snd_una);
	h_input(&h_a, m);
	assert_true(rnic_timer_pending(&c->rtx_timer));
	assert_int_equal(c->rtt.backoff, 1);
	assert_int_equal(h_stats(&h_b).paws_drops, 0);
	/* probes back off */
	h_advance(tcp_rtt_rto(&c->rtt, 5000) - 200);
	assert_int_equal(h_a.n_out, 0);
	h_advance(300);
	assert_int_equal(h_a.n_out, 1);
	h_flush(&h_a);

	/* the application drains: held bytes first, then the rest */
	rnic_tcp_hold(cb, false);
	assert_int_equal(sb.got, full + small);
	h_pump(NULL, NULL, NULL, 10000);
	assert_int_equal(sb.got, n);
	assert_true(h_pattern_ok(sb.buf, 0, n));
	h_app_fini(&ca);
	h_app_fini(&sb);
}

/* A->B filter: count data beyond the right edge B has advertised. */
static bool beyond_window(const struct h_seg *s, unsigned idx, void *arg)
{
	(void)idx;
	static unsigned *count;
	if (s == NULL) {   /* set up: arg is the counter */
		count = arg;
		return false;
	}
	struct rnic_tcp_conn *cb = ((struct h_app *)arg)->c;
	if (s->len && seq_gt(s->seq + s->len, cb->rcv_wedge))
		(*count)++;
	return false;
}

/* The application refills from sent() while the receiver's window stops
 * sliding (it reads nothing): what it queues must go out within the window
 * this very ACK gives, not the old window slid up to the new SND.UNA. */
static void sent_callback_respects_window(void **state)
{
	(void)state;
	struct h_app ca, sb;
	struct rnic_tcp_params p;
	rnic_tcp_params_default(&p);
	p.rcvbuf = 32768;
	assert_int_equal(rnic_tcp_config(&h_b.st, &p), 0);
	h_app_init(&ca, 0);
	h_app_init(&sb, 64 * 1024);
	sb.hold_on_accept = true;
	struct rnic_tcp_conn *c = h_connect(&ca, &sb, 5001);
	assert_non_null(c);
	unsigned over = 0;
	beyond_window(NULL, 0, &over);
	ca.refill = 1000;
	ca.refill_off = 8000;
	assert_int_equal(h_send(c, 0, 8000), 0);
	h_pump(beyond_window, NULL, &sb, 1000);
	assert_true(ca.sent_calls > 0);
	assert_true(sb.c->held_bytes >= 32768u - c->mss);
	assert_int_equal(over, 0);
	assert_int_equal(h_stats(&h_b).out_of_window, 0);
	assert_int_equal(c->snd_una, c->snd_max);   /* nothing B refused */
	h_app_fini(&ca);
	h_app_fini(&sb);
}

/* --- close ----------------------------------------------------------------- */

static void fin_to_time_wait(void **state)
{
	(void)state;
	struct h_app ca, sb;
	struct rnic_tcp_conn *c = h_open(&ca, &sb, 100, 5001);
	struct rnic_tcp_conn *cb = sb.c;
	assert_int_equal(h_send(c, 0, 100), 0);
	assert_int_equal(rnic_tcp_close(c), 0);
	assert_int_equal(c->state, TCP_FIN_WAIT_1);
	assert_int_equal(rnic_tcp_send(c, NULL), -EPIPE);
	h_pump(NULL, NULL, NULL, 100);
	assert_int_equal(sb.got, 100);
	assert_int_equal(sb.eofs, 1);
	assert_int_equal(cb->state, TCP_CLOSE_WAIT);
	assert_int_equal(c->state, TCP_FIN_WAIT_2);
	assert_int_equal(rnic_tcp_close(cb), 0);
	assert_int_equal(cb->state, TCP_LAST_ACK);
	h_pump(NULL, NULL, NULL, 100);
	assert_int_equal(sb.closes, 1);
	assert_int_equal(sb.closed_err, 0);
	assert_int_equal(h_stats(&h_b).tcbs, 0);
	assert_int_equal(ca.eofs, 1);
	assert_int_equal(ca.closes, 1);
	assert_int_equal(ca.closed_err, 0);
	/* A holds the TCB in TIME_WAIT and answers a retransmitted FIN */
	assert_int_equal(h_stats(&h_a).tcbs, 1);
	c = only_conn(&h_a);
	assert_int_equal(c->state, TCP_TIME_WAIT);
	struct tcp_opts o = { .ts_ok = true, .tsval = c->ts_recent + 1, .tsecr = 0 };
	h_input(&h_a, h_craft_to(c, c->rcv_nxt - 1, c->snd_nxt, FIN | ACK, &o, NULL, 0));
	struct h_seg s;
	rte_pktmbuf_free(h_next_seg(&h_a, &s));
	assert_int_equal(s.flags, ACK);
	assert_int_equal(s.ack, c->rcv_nxt);
	/* 2 MSL later it is gone */
	h_advance(2100 * 1000);
	assert_int_equal(h_stats(&h_a).tcbs, 0);
	h_app_fini(&ca);
	h_app_fini(&sb);
}

/* Close the connection of A (client, closes first) and B: A holds it in
 * TIME_WAIT. @return A's TCB, in TIME_WAIT. */
static struct rnic_tcp_conn *a_time_wait(struct h_app *ca, struct h_app *sb, uint16_t port)
{
	struct rnic_tcp_conn *c = h_connect(ca, sb, port);
	assert_non_null(c);
	assert_int_equal(rnic_tcp_close(c), 0);
	h_pump(NULL, NULL, NULL, 100);
	assert_int_equal(rnic_tcp_close(sb->c), 0);
	h_pump(NULL, NULL, NULL, 100);
	c = only_conn(&h_a);
	assert_int_equal(c->state, TCP_TIME_WAIT);
	return c;
}

/* Active open onto a 4-tuple A holds in TIME_WAIT (Linux's tcp_tw_reuse):
 * not before tw_reuse_ms (1 s) of it, then yes, with sequence numbers past
 * the old connection's and the handshake completing with B; never when
 * the old connection had no timestamps. */
static void time_wait_reuse(void **state)
{
	(void)state;
	struct h_app ca, sb, ca2, sb2;
	h_app_init(&ca, 0);
	h_app_init(&sb, 100);
	h_app_init(&ca2, 0);
	h_app_init(&sb2, 100);
	struct rnic_tcp_conn *old = a_time_wait(&ca, &sb, 5003);
	uint16_t lport = rte_be_to_cpu_16(old->key.lport);
	uint32_t old_nxt = old->snd_nxt;
	struct tcp_worker *tw = tcp_w(&h_a.w);
	uint64_t reused0 = h_stats(&h_a).tw_reused;

	/* 0.5 s into TIME_WAIT: the port stays taken, the next one is used */
	h_advance(500 * 1000);
	struct rnic_tcp_conn *c;
	tw->next_port = (uint16_t)(lport - 32768);
	assert_int_equal(rnic_tcp_connect(&h_a.w, H_IP_B, 5003, &h_app_ops, &ca2, &c), 0);
	assert_int_not_equal(rte_be_to_cpu_16(c->key.lport), lport);
	assert_int_equal(h_stats(&h_a).tw_reused, reused0);
	rnic_tcp_abort(c);
	h_pump(NULL, NULL, NULL, 100);

	/* 1.1 s into it (of 2 s): the 4-tuple is taken over */
	h_advance(600 * 1000);
	assert_int_equal(old->state, TCP_TIME_WAIT);
	tw->next_port = (uint16_t)(lport - 32768);
	assert_int_equal(rnic_tcp_connect(&h_a.w, H_IP_B, 5003, &h_app_ops, &ca2, &c), 0);
	assert_int_equal(rte_be_to_cpu_16(c->key.lport), lport);
	assert_int_equal(h_stats(&h_a).tw_reused, reused0 + 1);
	assert_true(seq_ge(c->iss, old_nxt + 65537));
	h_pump(NULL, NULL, NULL, 100);
	assert_int_equal(c->state, TCP_ESTABLISHED);
	assert_non_null(sb.c);   /* B accepted the new connection */
	assert_int_equal(h_send(c, 0, 100), 0);
	h_pump(NULL, NULL, NULL, 100);
	assert_int_equal(sb.got, 100);
	rnic_tcp_abort(c);
	h_pump(NULL, NULL, NULL, 100);
	h_advance(3000 * 1000);

	/* without timestamps on the old connection: never */
	struct tcp_stack *ts = tcp_s(&h_a.st);
	ts->params.timestamps = false;
	old = a_time_wait(&ca2, &sb2, 5004);
	ts->params.timestamps = true;
	assert_false(old->ts_ok);
	lport = rte_be_to_cpu_16(old->key.lport);
	h_advance(1500 * 1000);
	tw->next_port = (uint16_t)(lport - 32768);
	assert_int_equal(rnic_tcp_connect(&h_a.w, H_IP_B, 5004, &h_app_ops, &ca2, &c), 0);
	assert_int_not_equal(rte_be_to_cpu_16(c->key.lport), lport);
	assert_int_equal(h_stats(&h_a).tw_reused, reused0 + 1);
	rnic_tcp_abort(c);
	h_pump(NULL, NULL, NULL, 100);
	h_advance(3000 * 1000);
	h_app_fini(&ca);
	h_app_fini(&sb);
	h_app_fini(&ca2);
	h_app_fini(&sb2);
}

static void simultaneous_close(void **state)
{
	(void)state;
	struct h_app ca, sb;
	struct rnic_tcp_conn *c = h_open(&ca, &sb, 0, 5001);
	struct rnic_tcp_conn *cb = sb.c;
	assert_int_equal(rnic_tcp_close(c), 0);
	assert_int_equal(rnic_tcp_close(cb), 0);
	/* the FINs cross: both go FIN_WAIT_1 -> CLOSING -> TIME_WAIT */
	struct rte_mbuf *fa = h_take(&h_a), *fb = h_take(&h_b);
	assert_non_null(fa);
	assert_non_null(fb);
	h_input(&h_b, fa);
	h_input(&h_a, fb);
	assert_int_equal(c->state, TCP_CLOSING);
	assert_int_equal(cb->state, TCP_CLOSING);
	h_pump(NULL, NULL, NULL, 50);
	assert_int_equal(c->state, TCP_TIME_WAIT);
	assert_int_equal(cb->state, TCP_TIME_WAIT);
	assert_int_equal(ca.closes + sb.closes, 2);
	assert_int_equal(ca.eofs + sb.eofs, 2);
	h_advance(2100 * 1000);
	assert_int_equal(h_stats(&h_a).tcbs + h_stats(&h_b).tcbs, 0);
	h_app_fini(&ca);
	h_app_fini(&sb);
}

/* The consumer lets go and closes (as iWARP does on teardown): bytes that
 * still arrive are dropped, not held, and FIN_WAIT_2 ends after 60 s even
 * if the peer never closes. */
static void orphan_close(void **state)
{
	(void)state;
	struct h_app ca, sb;
	struct rnic_tcp_conn *c = h_open(&ca, &sb, 0, 5001);
	struct rnic_tcp_conn *cb = sb.c;
	rnic_tcp_set_ops(c, NULL, NULL);
	assert_int_equal(rnic_tcp_close(c), 0);
	h_pump(NULL, NULL, NULL, 100);
	assert_int_equal(c->state, TCP_FIN_WAIT_2);
	assert_int_equal(cb->state, TCP_CLOSE_WAIT);
	/* B keeps sending: acknowledged, dropped */
	assert_int_equal(h_send(cb, 0, 5000), 0);
	h_pump(NULL, NULL, NULL, 100);
	assert_int_equal(c->held_bytes, 0);
	assert_null(c->held);
	assert_int_equal(cb->snd_una, cb->snd_max);
	assert_int_equal(h_stats(&h_a).tcbs, 1);
	h_advance(59u * 1000 * 1000);
	assert_int_equal(h_stats(&h_a).tcbs, 1);
	h_advance(2u * 1000 * 1000);
	assert_int_equal(h_stats(&h_a).tcbs, 0);
	assert_int_equal(ca.closes, 0);   /* nobody to tell */
	rnic_tcp_abort(cb);
	h_flush(&h_a);
	h_flush(&h_b);
	h_app_fini(&ca);
	h_app_fini(&sb);
}

/* --- RFC 5961 and PAWS ------------------------------------------------------ */

static void rst_validation(void **state)
{
	(void)state;
	struct h_app ca, sb;
	struct h_seg s;
	struct rnic_tcp_conn *c = h_open(&ca, &sb, 0, 5001);
	struct rnic_tcp_conn *cb = sb.c;

	/* in the window but not exact: challenge ACK, connection stays */
	h_input(&h_b, h_craft_to(cb, cb->rcv_nxt + 1000, 0, RST, NULL, NULL, 0));
	rte_pktmbuf_free(h_next_seg(&h_b, &s));
	assert_int_equal(s.flags, ACK);
	assert_int_equal(s.ack, cb->rcv_nxt);
	assert_int_equal(cb->state, TCP_ESTABLISHED);
	assert_int_equal(h_stats(&h_b).challenge_acks, 1);

	/* outside the window: dropped silently */
	h_input(&h_b, h_craft_to(cb, cb->rcv_nxt + (64u << 20), 0, RST, NULL, NULL, 0));
	assert_int_equal(h_b.n_out, 0);
	assert_int_equal(h_stats(&h_b).out_of_window, 1);

	/* a SYN on an established connection: challenge ACK (RFC 5961 4);
	 * with a timestamp, as every segment but a RST of a connection that
	 * uses them must carry (RFC 7323 3.2) */
	struct tcp_opts ts = { .ts_ok = true, .tsval = cb->ts_recent };
	h_input(&h_b, h_craft_to(cb, cb->rcv_nxt + 5, 0, SYN, &ts, NULL, 0));
	rte_pktmbuf_free(h_next_seg(&h_b, &s));
	assert_int_equal(s.flags, ACK);
	assert_int_equal(cb->state, TCP_ESTABLISHED);
	assert_int_equal(h_stats(&h_b).challenge_acks, 2);

	/* an ACK for data never sent is answered and dropped */
	h_input(&h_b, h_craft_to(cb, cb->rcv_nxt, cb->snd_max + 100000, ACK, &ts, NULL, 0));
	rte_pktmbuf_free(h_next_seg(&h_b, &s));
	assert_int_equal(s.flags, ACK);
	assert_int_equal(cb->snd_una, cb->snd_max);

	/* the exact sequence number resets */
	h_input(&h_b, h_craft_to(cb, cb->rcv_nxt, 0, RST, NULL, NULL, 0));
	assert_int_equal(sb.closes, 1);
	assert_int_equal(sb.closed_err, -ECONNRESET);
	assert_int_equal(h_stats(&h_b).resets_in, 1);
	assert_int_equal(h_stats(&h_b).tcbs, 0);
	h_flush(&h_b);
	rnic_tcp_abort(c);
	h_app_fini(&ca);
	h_app_fini(&sb);
}

static void paws_drop(void **state)
{
	(void)state;
	struct h_app ca, sb;
	struct h_seg s;
	struct rnic_tcp_conn *c = h_open(&ca, &sb, 100, 5001);
	struct rnic_tcp_conn *cb = sb.c;
	assert_true(cb->ts_ok);
	uint8_t data[10] = { 0 };
	struct tcp_opts o = { .ts_ok = true, .tsval = cb->ts_recent - 1000,
			      .tsecr = tcp_ts_now(cb) };
	h_input(&h_b, h_craft_to(cb, cb->rcv_nxt, cb->snd_nxt, ACK, &o, data, 10));
	assert_int_equal(h_stats(&h_b).paws_drops, 1);
	assert_int_equal(sb.got, 0);
	rte_pktmbuf_free(h_next_seg(&h_b, &s));    /* the ACK PAWS requires */
	assert_int_equal(s.flags, ACK);
	assert_int_equal(s.ack, cb->rcv_nxt);
	/* a fresh timestamp is accepted */
	o.tsval = cb->ts_recent + 1;
	h_input(&h_b, h_craft_to(cb, cb->rcv_nxt, cb->snd_nxt, ACK, &o, data, 10));
	assert_int_equal(sb.got, 10);
	assert_int_equal(cb->ts_recent, o.tsval);
	/* one tick below TS.Recent is tolerated (Linux's PAWS window): two
	 * in-order segments whose sender's clock ticked between them arrive
	 * swapped in TSval only; TS.Recent does not go back */
	uint32_t recent = cb->ts_recent;
	o.tsval = recent - 1;
	for (int i = 0; i < 2; i++)
		h_input(&h_b, h_craft_to(cb, cb->rcv_nxt, cb->snd_nxt, ACK, &o, data, 10));
	assert_int_equal(sb.got, 30);
	assert_int_equal(h_stats(&h_b).paws_drops, 1);
	assert_int_equal(cb->ts_recent, recent);
	/* two ticks below is not */
	o.tsval = recent - 2;
	h_input(&h_b, h_craft_to(cb, cb->rcv_nxt, cb->snd_nxt, ACK, &o, data, 10));
	assert_int_equal(sb.got, 30);
	assert_int_equal(h_stats(&h_b).paws_drops, 2);
	h_flush(&h_b);
	rnic_tcp_abort(c);
	h_app_fini(&ca);
	h_app_fini(&sb);
}

static void malformed_dropped_and_counted(void **state)
{
	(void)state;
	struct h_app ca, sb;
	struct rnic_tcp_conn *c = h_open(&ca, &sb, 100, 5001);
	struct rnic_tcp_conn *cb = sb.c;
	uint32_t raddr = rte_be_to_cpu_32(tcp_key_r4(&cb->key)), laddr = H_IP_B;
	uint16_t rp = rte_be_to_cpu_16(cb->key.rport), lp = 5001;
	uint8_t data[10] = { 1 };
	static const struct { uint8_t o[8]; size_t len; } bad[] = {
		{ { 2, 0 }, 2 },                      /* length 0 */
		{ { 2, 1 }, 2 },                      /* length 1 */
		{ { 1, 1, 8, 12, 0, 0 }, 6 },         /* timestamp past the header */
		{ { 1, 1, 1, 8 }, 4 },                /* kind without its length */
		{ { 5, 7, 0, 0, 0, 0, 0, 0 }, 8 },    /* SACK, not 2 + 8n */
		{ { 8, 6, 0, 0, 0, 0, 1, 1 }, 8 },    /* timestamp of the wrong size */
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		h_input(&h_b, h_craft(raddr, laddr, rp, lp, cb->rcv_nxt, cb->snd_nxt, ACK,
				      65535, bad[i].o, bad[i].len, data, 10));
	assert_int_equal(h_stats(&h_b).bad_opts, sizeof(bad) / sizeof(bad[0]));

	/* a bad checksum */
	struct rte_mbuf *m = h_craft(raddr, laddr, rp, lp, cb->rcv_nxt, cb->snd_nxt, ACK,
				     65535, NULL, 0, data, 10);
	rte_pktmbuf_mtod_offset(m, uint8_t *, 45)[0] ^= 0x40;
	h_input(&h_b, m);
	assert_int_equal(h_stats(&h_b).bad_csum, 1);

	/* data offset beyond the segment, and below 5 words */
	for (int off = 0; off < 2; off++) {
		m = h_craft(raddr, laddr, rp, lp, cb->rcv_nxt, cb->snd_nxt, ACK, 65535,
			    NULL, 0, data, 4);
		struct rte_tcp_hdr *th = rte_pktmbuf_mtod_offset(m, struct rte_tcp_hdr *, 20);
		th->data_off = off ? 0x40 : 0xf0;
		h_input(&h_b, m);
	}
	/* truncated: the IP length says less than a TCP header */
	m = h_craft(raddr, laddr, rp, lp, cb->rcv_nxt, cb->snd_nxt, ACK, 65535,
		    NULL, 0, NULL, 0);
	rte_pktmbuf_mtod(m, struct rte_ipv4_hdr *)->total_length = rte_cpu_to_be_16(30);
	h_input(&h_b, m);
	assert_int_equal(h_stats(&h_b).bad_hdr, 3);
	/* none of it reached the application or drew an answer */
	assert_int_equal(sb.got, 0);
	assert_int_equal(h_b.n_out, 0);
	assert_int_equal(cb->state, TCP_ESTABLISHED);
	rnic_tcp_abort(c);
	h_flush(&h_a);
	h_app_fini(&ca);
	h_app_fini(&sb);
}

/* --- hand-off --------------------------------------------------------------- */

static void handoff_in_order(void **state)
{
	(void)state;
	struct h_app ca, sb, mpa;
	h_app_init(&ca, 0);
	h_app_init(&sb, 4096);
	h_app_init(&mpa, 8192);
	struct rnic_tcp_conn *c = h_connect(&ca, &sb, 5001);
	assert_non_null(c);
	struct rnic_tcp_conn *cb = sb.c;
	assert_int_equal(h_send(c, 0, 1000), 0);
	h_pump(NULL, NULL, NULL, 100);
	assert_int_equal(sb.got, 1000);
	/* switch: hold, more bytes arrive, then the new consumer takes over */
	rnic_tcp_hold(cb, true);
	assert_int_equal(h_send(c, 1000, 3000), 0);
	h_pump(NULL, NULL, NULL, 100);
	assert_int_equal(sb.got, 1000);
	assert_int_equal(cb->held_bytes, 3000);
	rnic_tcp_set_ops(cb, &h_app_ops, &mpa);
	rnic_tcp_hold(cb, false);
	assert_int_equal(mpa.got, 3000);
	assert_int_equal(mpa.recv_calls, 1);
	assert_int_equal(h_send(c, 4000, 4000), 0);
	h_pump(NULL, NULL, NULL, 100);
	assert_int_equal(mpa.got, 7000);
	assert_true(h_pattern_ok(mpa.buf, 1000, 7000));
	assert_int_equal(sb.got, 1000);
	rnic_tcp_abort(c);
	h_pump(NULL, NULL, NULL, 10);
	assert_int_equal(mpa.closes, 1);
	h_app_fini(&ca);
	h_app_fini(&sb);
	h_app_fini(&mpa);
}

struct full_arg {
	unsigned mss, segs, full;
};

static bool count_full(const struct h_seg *s, unsigned idx, void *arg)
{
	(void)idx;
	struct full_arg *a = arg;
	if (s->len) {
		a->segs++;
		a->full += s->len == a->mss;
	}
	return false;
}

/* Writes of odd sizes: units are chains whose pieces have odd lengths;
 * every segment but the last of a burst is full, every checksum right
 * (DPDK 22.11's chain checksum loses carries on odd offsets). */
static void odd_sized_writes(void **state)
{
	(void)state;
	struct h_app ca, sb;
	const size_t n = 300 * 1000;
	struct rnic_tcp_conn *c = h_open(&ca, &sb, n, 5001);
	size_t off = 0;
	unsigned full = 0, segs = 0;
	while (off < n) {
		/* one chain of 777-, 1- and 333-byte mbufs per write */
		struct rte_mbuf *head = NULL, *tail = NULL;
		static const uint16_t sizes[] = { 777, 1, 333, 777, 777, 1, 1 };
		for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]) && off < n; i++) {
			uint16_t k = (uint16_t)RTE_MIN((size_t)sizes[i], n - off);
			struct rte_mbuf *m = rte_pktmbuf_alloc(h_pool);
			assert_non_null(m);
			h_pattern((uint8_t *)rte_pktmbuf_append(m, k), off, k);
			off += k;
			if (head == NULL) {
				head = tail = m;
			} else {
				tail->next = m;
				tail = m;
				head->nb_segs++;
				head->pkt_len += k;
			}
		}
		assert_int_equal(rnic_tcp_send(c, head), 0);
	}
	/* the first window left at once; the rest coalesced while queued */
	struct full_arg fa = { .mss = c->mss };
	h_pump(count_full, NULL, &fa, 10000);
	segs = fa.segs;
	full = fa.full;
	assert_int_equal(sb.got, n);
	assert_true(h_pattern_ok(sb.buf, 0, n));
	assert_int_equal(h_stats(&h_b).bad_csum, 0);
	assert_int_equal(h_stats(&h_a).bad_csum, 0);
	assert_true(segs > 100);
	/* the window opens in bursts: most segments are full */
	assert_true(full * 10 >= segs * 8);
	h_app_fini(&ca);
	h_app_fini(&sb);
}

/* A short pool refuses new data with -ENOBUFS (so a sender cannot take the
 * mbufs the ACKs need to come in) and queues nothing; data goes once the
 * pool has its reserve again. */
static void pool_reserve_refuses_sends(void **state)
{
	(void)state;
	struct h_app ca, sb;
	struct rnic_tcp_conn *c = h_open(&ca, &sb, 8000, 5030);
	h_a.port.tx_reserve = rte_mempool_avail_count(h_pool) + 1;
	assert_int_equal(h_send(c, 0, 3000), -ENOBUFS);
	assert_int_equal(h_stats(&h_a).pool_short, 1);
	assert_int_equal(c->queued_bytes, 0);
	assert_int_equal(h_pump(NULL, NULL, NULL, 100), 0);
	assert_int_equal(sb.got, 0);
	/* the reserve is there again: the same bytes go */
	h_a.port.tx_reserve = 1;
	assert_int_equal(h_send(c, 0, 3000), 0);
	h_pump(NULL, NULL, NULL, 100);
	assert_int_equal(sb.got, 3000);
	assert_true(h_pattern_ok(sb.buf, 0, 3000));
	assert_int_equal(h_stats(&h_a).pool_short, 1);
	h_a.port.tx_reserve = 0;
	h_app_fini(&ca);
	h_app_fini(&sb);
}

/* The checksum the slow way: the pseudo header and the stream as
 * big-endian 16-bit words from bytes, one at a time, folded at the end. */
static uint16_t csum_bytewise(const struct rte_mbuf *m, uint32_t off, uint32_t len,
			      uint32_t src_be, uint32_t dst_be)
{
	uint8_t ph[12];
	uint64_t sum = 0;
	memcpy(ph, &src_be, 4);
	memcpy(ph + 4, &dst_be, 4);
	ph[8] = 0;
	ph[9] = IPPROTO_TCP;
	ph[10] = (uint8_t)(len >> 8);
	ph[11] = (uint8_t)len;
	for (unsigned i = 0; i < 12; i += 2)
		sum += (uint32_t)ph[i] << 8 | ph[i + 1];
	uint32_t pos = 0;   /* stream position, for the byte's half of a word */
	for (; m != NULL && len > 0; m = m->next) {
		const uint8_t *p = rte_pktmbuf_mtod(m, const uint8_t *);
		for (uint32_t i = 0; i < m->data_len && len > 0; i++) {
			if (off > 0) {
				off--;
				continue;
			}
			sum += (pos & 1) ? p[i] : (uint32_t)p[i] << 8;
			pos++;
			len--;
		}
	}
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return rte_cpu_to_be_16((uint16_t)sum);   /* tcp_l4_sum's word order */
}

static void csum_ext_free(void *addr, void *opaque)
{
	(void)opaque;
	free(addr);
}

/* lib/tcp's fast checksum, in each variant this CPU has (scalar, SSE2,
 * AVX2), equals a byte-wise reference and lib/net's sum on random chains:
 * pieces of random length (odd ones too) starting at random alignments,
 * random offsets and pseudo headers, and one piece of nearly 64 KiB (an
 * external buffer) per round. */
static void csum_matches_reference(void **state)
{
	(void)state;
	static const int impls[] = { TCP_CSUM_SCALAR, TCP_CSUM_SSE2, TCP_CSUM_AVX2 };
	unsigned tried = 0;
	for (unsigned v = 0; v < RTE_DIM(impls); v++) {
		int rc = tcp_csum_set_impl(impls[v]);
		if (rc == -ENOTSUP)
			continue;
		assert_int_equal(rc, 0);
		tried++;
		uint64_t x = 0x243f6a8885a308d3ull + v;
		for (unsigned it = 0; it < 2000; it++) {
			struct rte_mbuf *head = NULL, *tail = NULL;
			unsigned nseg = 1 + (unsigned)(x % 5);
			uint32_t total = 0;
			for (unsigned k = 0; k < nseg; k++) {
				x ^= x << 13; x ^= x >> 7; x ^= x << 17;
				uint16_t n = (uint16_t)(x % 1900);
				struct rte_mbuf *m = rte_pktmbuf_alloc(h_pool);
				assert_non_null(m);
				/* a start at any alignment: some headroom becomes data */
				assert_non_null(rte_pktmbuf_prepend(m, (uint16_t)((x >> 20) % 128)));
				assert_non_null(rte_pktmbuf_append(m, n));
				uint8_t *p = rte_pktmbuf_mtod(m, uint8_t *);
				for (uint16_t b = 0; b < m->data_len; b++)
					p[b] = (uint8_t)(x >> (b % 56)) ^ (uint8_t)b;
				total += m->data_len;
				if (head == NULL) {
					head = tail = m;
				} else {
					tail->next = m;
					tail = m;
					head->nb_segs++;
					head->pkt_len += m->data_len;
				}
			}
			x ^= x << 13; x ^= x >> 7; x ^= x << 17;
			uint32_t off = total ? (uint32_t)(x % (total + 1)) : 0;
			uint32_t len = total - off;
			uint32_t src = (uint32_t)x, dst = (uint32_t)(x >> 32);
			uint16_t got = tcp_l4_sum(head, off, len, src, dst);
			assert_int_equal(got, csum_bytewise(head, off, len, src, dst));
			assert_int_equal(got, rnic_net_l4_cksum(head, off, src, dst, IPPROTO_TCP,
								(uint16_t)len));
			rte_pktmbuf_free(head);
		}
		/* a big piece: the vector loop's long run, all-ones words (the
		 * largest lane sums) then random bytes */
		for (unsigned round = 0; round < 2; round++) {
			uint16_t shlen = sizeof(struct rte_mbuf_ext_shared_info);
			uint16_t n = (uint16_t)(65000 + round);
			uint8_t *buf = malloc(n + shlen + 16);
			assert_non_null(buf);
			for (uint32_t b = 0; b < n; b++) {
				x ^= x << 13; x ^= x >> 7; x ^= x << 17;
				buf[b] = round ? (uint8_t)x : 0xff;
			}
			uint16_t blen = (uint16_t)(n + shlen + 16);
			struct rte_mbuf_ext_shared_info *sh = rte_pktmbuf_ext_shinfo_init_helper(
				buf, &blen, csum_ext_free, NULL);
			assert_non_null(sh);
			struct rte_mbuf *m = rte_pktmbuf_alloc(h_pool);
			assert_non_null(m);
			rte_pktmbuf_attach_extbuf(m, buf, RTE_BAD_IOVA, blen, sh);
			m->data_off = 0;
			m->data_len = n;
			m->pkt_len = n;
			uint32_t off = round;   /* odd: the other halves of the words */
			uint16_t got = tcp_l4_sum(m, off, n - off, 0x0100000a, 0x0200000a);
			assert_int_equal(got, csum_bytewise(m, off, n - off, 0x0100000a, 0x0200000a));
			rte_pktmbuf_free(m);
		}
	}
	assert_int_equal(tcp_csum_set_impl(TCP_CSUM_BEST), 0);
	assert_true(tried >= 1);
	assert_int_equal(tcp_csum_set_impl(7), -EINVAL);
	if (getenv("TCB_BENCH")) {   /* one MSS (hot), each variant and lib/net */
		static const char *const names[] = { "scalar", "sse2", "avx2" };
		struct rte_mbuf *m = rte_pktmbuf_alloc(h_pool);
		memset(rte_pktmbuf_append(m, 1448), 0x5a, 1448);
		double ns = 1e9 / (double)rte_get_tsc_hz() / 100000;
		uint64_t acc = 0;
		for (unsigned v = 0; v < RTE_DIM(impls); v++) {
			if (tcp_csum_set_impl(impls[v]) != 0)
				continue;
			uint64_t t0 = rte_rdtsc();
			for (int i = 0; i < 100000; i++)
				acc += tcp_l4_sum(m, 0, 1448, (uint32_t)i, 2);
			fprintf(stderr, "checksum of 1448 bytes: lib/tcp %s %.0f ns\n", names[v],
				(double)(rte_rdtsc() - t0) * ns);
		}
		tcp_csum_set_impl(TCP_CSUM_BEST);
		uint64_t t1 = rte_rdtsc();
		for (int i = 0; i < 100000; i++)
			acc += rnic_net_l4_cksum(m, 0, (uint32_t)i, 2, IPPROTO_TCP, 1448);
		fprintf(stderr, "checksum of 1448 bytes: lib/net %.0f ns (%lu)\n",
			(double)(rte_rdtsc() - t1) * ns, (unsigned long)(acc & 1));
		rte_pktmbuf_free(m);
	}
}

/* --- more recovery, keepalive, hand-off with FIN, faults --------------------- */

struct drop_set {
	uint32_t seq[4];
	unsigned n;
	bool done[4];
};

/* Drop the first transmission of each listed sequence number. */
static bool drop_listed(const struct h_seg *s, unsigned idx, void *arg)
{
	(void)idx;
	struct drop_set *d = arg;
	for (unsigned i = 0; i < d->n; i++) {
		if (s->len && s->seq == d->seq[i] && !d->done[i]) {
			d->done[i] = true;
			return true;
		}
	}
	return false;
}

/* Without SACK: two holes in one window, NewReno partial ACKs (RFC 6582)
 * repair both in one recovery, without a timeout. */
static void newreno_partial_ack(void **state)
{
	(void)state;
	struct h_app ca, sb;
	const size_t n = 256 * 1024;
	struct rnic_tcp_params p;
	rnic_tcp_params_default(&p);
	p.sack = false;
	assert_int_equal(rnic_tcp_config(&h_a.st, &p), 0);
	assert_int_equal(rnic_tcp_config(&h_b.st, &p), 0);
	struct rnic_tcp_conn *c = h_open(&ca, &sb, n, 5001);
	assert_false(c->sack_ok);
	assert_false(sb.c->sack_ok);
	struct drop_set d = { .seq = { c->snd_nxt + 20 * c->mss, c->snd_nxt + 24 * c->mss },
			      .n = 2 };
	assert_int_equal(h_send(c, 0, n), 0);
	h_pump(drop_listed, NULL, &d, 100000);
	assert_true(d.done[0] && d.done[1]);
	assert_int_equal(sb.got, n);
	assert_true(h_pattern_ok(sb.buf, 0, n));
	struct rnic_tcp_stats st = h_stats(&h_a);
	assert_int_equal(st.fast_retransmits, 1);
	assert_int_equal(st.rtos, 0);
	assert_int_equal(st.retransmits, 2);
	assert_false(c->in_recovery);
	h_app_fini(&ca);
	h_app_fini(&sb);
}

/* The out-of-order queue is allocated by the first segment out of order
 * (issue 21): with no memory for it that segment is dropped and counted
 * in ooo_nomem (rnic_tcp_fail_allocs), the next one finds memory, and the
 * sender's recovery delivers every byte. */
static void ooo_no_memory(void **state)
{
	(void)state;
	struct h_app ca, sb;
	const size_t n = 64 * 1024;
	struct rnic_tcp_conn *c = h_open(&ca, &sb, n, 5001);
	assert_null(sb.c->ooo);
	struct drop_set d = { .seq = { c->snd_nxt + 2 * c->mss }, .n = 1 };
	rnic_tcp_fail_allocs(&h_b.st, 1);
	assert_int_equal(h_send(c, 0, n), 0);
	h_pump(drop_listed, NULL, &d, 100000);
	assert_true(d.done[0]);
	assert_int_equal(h_stats(&h_b).ooo_nomem, 1);
	assert_non_null(sb.c->ooo);
	assert_int_equal(sb.got, n);
	assert_true(h_pattern_ok(sb.buf, 0, n));
	h_app_fini(&ca);
	h_app_fini(&sb);
}

static bool drop_all(const struct h_seg *s, unsigned idx, void *arg)
{
	(void)s; (void)idx; (void)arg;
	return true;
}

/* Advance in 1 ms steps, every segment of A lost, until @p a hears closed()
 * or @p limit_ms passed. @return the milliseconds it took. */
static unsigned run_until_closed(struct h_app *a, unsigned limit_ms)
{
	unsigned ms = 0;
	while (a->closes == 0 && ms < limit_ms) {
		h_advance(1000);
		ms++;
		if (a->closes == 0) {   /* keep what the abort sent */
			h_flush(&h_a);
			h_flush(&h_b);
		}
	}
	return ms;
}

/* The last segment @p n captured; the others are freed. */
static void last_seg(struct h_node *n, struct h_seg *s)
{
	struct rte_mbuf *m, *last = NULL;
	while ((m = h_take(n)) != NULL) {
		rte_pktmbuf_free(last);
		last = m;
	}
	assert_non_null(last);
	h_parse(last, s);
	rte_pktmbuf_free(last);
}

static void keepalive_probes_then_timeout(void **state)
{
	(void)state;
	struct h_app ca, sb;
	struct rnic_tcp_params p;
	rnic_tcp_params_default(&p);
	p.keepalive_s = 2;
	assert_int_equal(rnic_tcp_config(&h_a.st, &p), 0);
	struct rnic_tcp_conn *c = h_open(&ca, &sb, 0, 5001);
	/* idle for the keepalive time: a probe below snd_una, B answers */
	h_advance(1900 * 1000);
	assert_int_equal(h_a.n_out, 0);
	h_advance(200 * 1000);
	struct h_seg s;
	struct rte_mbuf *m = h_next_seg(&h_a, &s);
	assert_int_equal(s.flags, ACK);
	assert_int_equal(s.len, 0);
	assert_int_equal(s.seq, c->snd_una - 1);
	h_input(&h_b, m);
	assert_int_equal(h_b.n_out, 1);
	h_input(&h_a, h_take(&h_b));
	assert_int_equal(c->probes, 0);
	/* now the peer is gone: probes every 10 s, then the connection dies */
	for (int i = 0; i < 15 && ca.closes == 0; i++) {
		h_advance(10u * 1000 * 1000);
		if (ca.closes == 0)
			h_pump(drop_all, drop_all, NULL, 10);
	}
	assert_int_equal(ca.closes, 1);
	assert_int_equal(ca.closed_err, -ETIMEDOUT);
	assert_int_equal(h_stats(&h_a).tcbs, 0);
	/* aborted as the user timeout does: a RST, a counter */
	assert_int_equal(h_stats(&h_a).keepalive_timeouts, 1);
	struct h_seg rs;
	last_seg(&h_a, &rs);
	assert_int_equal(rs.flags, RST);
	rnic_tcp_abort(sb.c);
	h_flush(&h_b);
	h_app_fini(&ca);
	h_app_fini(&sb);
}

/* --- user timeout (RFC 9293 3.8.3, RFC 5482) -------------------------------- */

/* Data goes unacknowledged: the connection is reset after the user timeout
 * (long before the 15 backed-off retries would end it), closed() says
 * -ETIMEDOUT, the counter moves. A per-connection value overrides the
 * stack's; a handshake that is never answered ends the same way. */
static void user_timeout_aborts(void **state)
{
	(void)state;
	struct h_app ca, sb;
	struct rnic_tcp_params p;
	rnic_tcp_params_default(&p);
	assert_int_equal(p.user_timeout_ms, 30000);   /* the documented default */
	p.user_timeout_ms = 1000;
	assert_int_equal(rnic_tcp_config(&h_a.st, &p), 0);
	struct rnic_tcp_conn *c = h_open(&ca, &sb, 0, 5001);
	struct rnic_tcp_stats st0 = h_stats(&h_a);
	/* the peer vanishes with 10 KB in flight */
	assert_int_equal(h_send(c, 0, 10000), 0);
	h_flush(&h_a);
	h_flush(&h_b);
	/* the RTO backs off past the deadline, but the timer stops at it */
	unsigned ms = run_until_closed(&ca, 5000);
	assert_int_equal(ca.closes, 1);
	assert_int_equal(ca.closed_err, -ETIMEDOUT);
	assert_in_range(ms, 1000, 1001);
	struct rnic_tcp_stats st = h_stats(&h_a);
	assert_int_equal(st.user_timeouts - st0.user_timeouts, 1);
	assert_int_equal(st.resets_out - st0.resets_out, 1);
	assert_int_equal(st.retry_timeouts, 0);
	assert_true(st.rtos - st0.rtos >= 5 && st.rtos - st0.rtos < 15);
	assert_int_equal(st.tcbs, 0);
	struct h_seg rs;
	last_seg(&h_a, &rs);
	assert_int_equal(rs.flags, RST);
	h_app_fini(&ca);

	/* per connection: 300 ms, set while the wait runs (100 ms in) */
	h_app_init(&ca, 0);
	h_app_init(&sb, 0);
	c = h_connect(&ca, &sb, 5002);
	assert_non_null(c);
	assert_int_equal(h_send(c, 0, 1000), 0);
	h_flush(&h_a);
	h_flush(&h_b);
	for (unsigned ms = 0; ms < 100; ms++) {   /* no stall: 1 ms steps */
		h_advance(1000);
		h_flush(&h_a);
	}
	rnic_tcp_set_user_timeout(c, 300);
	ms = run_until_closed(&ca, 5000);
	assert_int_equal(ca.closed_err, -ETIMEDOUT);
	assert_in_range(ms, 199, 201);
	h_app_fini(&ca);

	/* an unanswered SYN: no RST (nothing synchronized), the same error */
	c = h_open_active(&ca, 0, 5003);
	st0 = h_stats(&h_a);
	ms = run_until_closed(&ca, 30000);
	assert_int_equal(ca.closed_err, -ETIMEDOUT);
	assert_in_range(ms, 1000, 1001);
	st = h_stats(&h_a);
	assert_int_equal(st.user_timeouts - st0.user_timeouts, 1);
	assert_int_equal(st.resets_out, st0.resets_out);
	h_flush(&h_b);
	h_app_fini(&ca);
	h_app_fini(&sb);
}

/* Without a user timeout the retry limit still ends it, as before, and is
 * counted apart; the RST goes out too. */
static void retry_limit_without_user_timeout(void **state)
{
	(void)state;
	struct h_app ca, sb;
	struct rnic_tcp_params p;
	rnic_tcp_params_default(&p);
	p.user_timeout_ms = 0;
	assert_int_equal(rnic_tcp_config(&h_a.st, &p), 0);
	struct rnic_tcp_conn *c = h_open(&ca, &sb, 0, 5001);
	assert_int_equal(h_send(c, 0, 1000), 0);
	h_flush(&h_a);
	unsigned s = 0;
	while (ca.closes == 0 && s < 1000) {   /* 30 minutes at most */
		h_advance(2u * 1000 * 1000);
		s += 2;
		if (ca.closes == 0)
			h_flush(&h_a);
	}
	assert_int_equal(ca.closed_err, -ETIMEDOUT);
	assert_true(s > 120);                  /* minutes: the problem solved above */
	struct h_seg seg;
	last_seg(&h_a, &seg);
	assert_int_equal(seg.flags, RST);
	struct rnic_tcp_stats st = h_stats(&h_a);
	assert_int_equal(st.retry_timeouts, 1);
	assert_int_equal(st.user_timeouts, 0);
	assert_int_equal(st.rtos, 15);
	h_flush(&h_b);
	h_app_fini(&ca);
	h_app_fini(&sb);
}

/* A peer whose window stays closed but that answers every probe is alive:
 * many user timeouts pass and the connection stays. When it stops
 * answering, the user timeout ends it: at most one probe interval (never
 * longer than the user timeout) plus the user timeout after its last
 * answer. */
static void user_timeout_spares_zero_window_peer(void **state)
{
	(void)state;
	struct h_app ca, sb;
	struct rnic_tcp_params p;
	rnic_tcp_params_default(&p);
	p.rcvbuf = 16384;
	assert_int_equal(rnic_tcp_config(&h_b.st, &p), 0);
	rnic_tcp_params_default(&p);
	p.user_timeout_ms = 200;
	assert_int_equal(rnic_tcp_config(&h_a.st, &p), 0);
	h_app_init(&ca, 0);
	h_app_init(&sb, 64 * 1024);
	sb.hold_on_accept = true;   /* B reads nothing: its window closes */
	struct rnic_tcp_conn *c = h_connect(&ca, &sb, 5001);
	assert_non_null(c);
	assert_int_equal(h_send(c, 0, 64 * 1024), 0);
	h_pump(NULL, NULL, NULL, 1000);
	uint64_t answers0 = h_stats(&h_b).segs_out;
	for (unsigned ms = 0; ms < 3000; ms += 10) {   /* 15 user timeouts */
		h_advance(10 * 1000);
		h_pump(NULL, NULL, NULL, 10);
	}
	assert_int_equal(c->state, TCP_ESTABLISHED);
	assert_int_equal(c->snd_wnd, 0);
	assert_int_equal(ca.closes, 0);
	assert_int_equal(h_stats(&h_a).user_timeouts, 0);
	/* it answered probes: at least one per user timeout */
	assert_true(h_stats(&h_b).segs_out - answers0 >= 15);
	/* now B is gone */
	unsigned ms = run_until_closed(&ca, 5000);
	assert_int_equal(ca.closed_err, -ETIMEDOUT);
	assert_true(ms <= 2 * 200 + 10);
	assert_int_equal(h_stats(&h_a).user_timeouts, 1);
	rnic_tcp_abort(sb.c);
	h_flush(&h_b);
	h_app_fini(&ca);
	h_app_fini(&sb);
}


/* --- local and peer stalls ------------------------------------------------- */

/* Both workers stop for @p us (a descheduled process, a paused VM): the
 * clock jumps and no timer runs until the next h_advance(). */
static void stall(uint64_t us)
{
	h_now += us * (rte_get_tsc_hz() / 1000000);
	h_a.w.now_tsc = h_now;
	h_b.w.now_tsc = h_now;
}

/* The soak's 36 s "RTT": the peer acknowledged at once, but this worker
 * did not run for 36 s, so the ACK waited in its own queue. The timer is
 * then overdue: the delay is ours, no sample is taken and the RTO stays
 * what the path gives. (Before: SRTT 4.5 s, RTO at the 60 s ceiling.) */
static void local_stall_gives_no_rtt_sample(void **state)
{
	(void)state;
	struct h_app ca, sb;
	struct rnic_tcp_conn *c = h_open(&ca, &sb, 64 * 1024, 5001);
	assert_int_equal(h_send(c, 0, 2000), 0);   /* an RTT sample */
	h_pump(NULL, NULL, NULL, 100);
	assert_true(c->rtt.have_sample);
	uint32_t srtt = c->rtt.srtt_us, rto = tcp_rtt_rto(&c->rtt, 5000);
	assert_true(rto < 100 * 1000);

	assert_int_equal(h_send(c, 2000, 2 * c->mss), 0);
	assert_int_equal(h_a.n_out, 2);
	while (h_a.n_out)
		h_input(&h_b, h_take(&h_a));
	assert_true(h_b.n_out >= 1);               /* the ACKs */
	stall(36ull * 1000 * 1000);
	while (h_b.n_out)                          /* read after the stall */
		h_input(&h_a, h_take(&h_b));
	assert_int_equal(c->snd_una, c->snd_max);
	assert_int_equal(c->rtt.srtt_us, srtt);
	assert_int_equal(tcp_rtt_rto(&c->rtt, 5000), rto);
	h_advance(1000);
	assert_int_equal(h_stats(&h_a).rtos, 0);

	/* a stall shorter than the RTO still measures (it is an RTT) */
	assert_int_equal(h_send(c, 2000 + 2 * c->mss, 2 * c->mss), 0);
	while (h_a.n_out)
		h_input(&h_b, h_take(&h_a));
	stall(rto / 2);
	while (h_b.n_out)
		h_input(&h_a, h_take(&h_b));
	assert_true(c->rtt.srtt_us > srtt);
	h_pump(NULL, NULL, NULL, 100);
	assert_int_equal(sb.got, 2000 + 4 * c->mss);
	assert_true(h_pattern_ok(sb.buf, 0, sb.got));
	h_app_fini(&ca);
	h_app_fini(&sb);
}

/* This worker stops for 5 s with a segment lost, under a 1 s user
 * timeout: when it runs again its RTO is 5 s late, but the peer was never
 * asked; it retransmits instead of aborting, and the data arrives. A peer
 * that then stays silent still ends it one user timeout later. */
static void local_stall_spares_user_timeout(void **state)
{
	(void)state;
	struct h_app ca, sb;
	struct rnic_tcp_params p;
	rnic_tcp_params_default(&p);
	p.user_timeout_ms = 1000;
	assert_int_equal(rnic_tcp_config(&h_a.st, &p), 0);
	struct rnic_tcp_conn *c = h_open(&ca, &sb, 64 * 1024, 5001);
	assert_int_equal(h_send(c, 0, 1000), 0);
	h_flush(&h_a);                             /* lost */
	stall(5ull * 1000 * 1000);
	h_advance(20);                             /* the late RTO */
	assert_int_equal(ca.closes, 0);
	assert_int_equal(h_stats(&h_a).user_timeouts, 0);
	assert_int_equal(h_stats(&h_a).rtos, 1);
	assert_int_equal(h_a.n_out, 1);            /* the retransmission */
	h_pump(NULL, NULL, NULL, 100);
	assert_int_equal(sb.got, 1000);
	assert_true(h_pattern_ok(sb.buf, 0, 1000));
	assert_int_equal(ca.closes, 0);

	/* the same stall, then a peer that is gone: one user timeout */
	assert_int_equal(h_send(c, 1000, 1000), 0);
	h_flush(&h_a);
	stall(5ull * 1000 * 1000);
	unsigned ms = run_until_closed(&ca, 5000);
	assert_int_equal(ca.closed_err, -ETIMEDOUT);
	assert_in_range(ms, 990, 1001);
	assert_int_equal(h_stats(&h_a).user_timeouts, 1);
	h_app_fini(&ca);
	h_app_fini(&sb);
}

/* The peer stops for 10 s (its worker does not run) with our four
 * segments in its queue; our RTO fires again and again meanwhile. When it
 * runs, the ACK of the units we never resent arrives 10 s after they were
 * sent: not an RTT of the path (the timeout said so), so no sample. */
static void peer_stall_after_rto_gives_no_rtt_sample(void **state)
{
	(void)state;
	struct h_app ca, sb;
	struct rnic_tcp_conn *c = h_open(&ca, &sb, 64 * 1024, 5001);
	assert_int_equal(h_send(c, 0, 2000), 0);
	h_pump(NULL, NULL, NULL, 100);
	assert_true(c->rtt.have_sample);
	uint32_t srtt = c->rtt.srtt_us;

	assert_int_equal(h_send(c, 2000, 4 * c->mss), 0);
	struct rte_mbuf *queued[4];
	for (unsigned i = 0; i < 4; i++)
		queued[i] = h_take(&h_a);
	for (unsigned ms = 0; ms < 10000; ms++) {  /* the peer sleeps */
		h_a.w.now_tsc = h_now += rte_get_tsc_hz() / 1000;
		rnic_timer_run(&h_a.w.timers, h_now);
		h_flush(&h_a);                         /* retransmissions wait too */
	}
	h_b.w.now_tsc = h_now;
	assert_true(h_stats(&h_a).rtos >= 5);
	for (unsigned i = 0; i < 4; i++)
		h_input(&h_b, queued[i]);
	while (h_b.n_out)
		h_input(&h_a, h_take(&h_b));
	assert_int_equal(c->snd_una, c->snd_max);
	assert_true(c->rtt.srtt_us <= srtt);
	assert_true(tcp_rtt_rto(&c->rtt, 5000) < 100 * 1000);
	h_pump(NULL, NULL, NULL, 100);
	assert_int_equal(sb.got, 2000 + 4 * c->mss);
	assert_true(h_pattern_ok(sb.buf, 0, sb.got));
	h_app_fini(&ca);
	h_app_fini(&sb);
}

/* The FIN arrives while the stream is held: the new consumer gets the
 * bytes, then the end of stream, in that order. */
static void handoff_with_fin(void **state)
{
	(void)state;
	struct h_app ca, sb, mpa;
	h_app_init(&ca, 0);
	h_app_init(&sb, 0);
	h_app_init(&mpa, 4096);
	sb.hold_on_accept = true;
	struct rnic_tcp_conn *c = h_connect(&ca, &sb, 5001);
	assert_non_null(c);
	struct rnic_tcp_conn *cb = sb.c;
	assert_int_equal(h_send(c, 0, 3000), 0);
	assert_int_equal(rnic_tcp_close(c), 0);
	h_pump(NULL, NULL, NULL, 100);
	assert_int_equal(cb->state, TCP_CLOSE_WAIT);
	assert_int_equal(sb.eofs, 0);
	assert_int_equal(sb.recv_calls, 0);
	rnic_tcp_set_ops(cb, &h_app_ops, &mpa);
	rnic_tcp_hold(cb, false);
	assert_int_equal(mpa.got, 3000);
	assert_true(h_pattern_ok(mpa.buf, 0, 3000));
	assert_int_equal(mpa.eofs, 1);
	assert_int_equal(sb.eofs, 0);
	assert_int_equal(rnic_tcp_close(cb), 0);
	h_pump(NULL, NULL, NULL, 100);
	assert_int_equal(mpa.closes, 1);
	assert_int_equal(mpa.closed_err, 0);
	h_app_fini(&ca);
	h_app_fini(&sb);
	h_app_fini(&mpa);
}

/* A lossy, duplicating, reordering link both ways (xorshift, seeded). */
struct lossy {
	uint64_t x;
	unsigned drop, dup, reorder;    /* per mille */
	struct rte_mbuf *held[2];       /* one delayed segment per direction */
	unsigned dropped, duped, reordered;
};

static unsigned lossy_rand(struct lossy *l)
{
	l->x ^= l->x << 13;
	l->x ^= l->x >> 7;
	l->x ^= l->x << 17;
	return (unsigned)(l->x % 1000);
}

static void lossy_move(struct lossy *l, struct h_node *from, struct h_node *to, int dir)
{
	unsigned k = from->n_out;
	struct rte_mbuf *batch[H_OUT_MAX];
	memcpy(batch, from->out, k * sizeof(batch[0]));
	from->n_out = 0;
	for (unsigned i = 0; i < k; i++) {
		struct rte_mbuf *m = batch[i];
		if (lossy_rand(l) < l->drop) {
			l->dropped++;
			rte_pktmbuf_free(m);
			continue;
		}
		if (lossy_rand(l) < l->dup) {
			struct rte_mbuf *d = rte_pktmbuf_copy(m, h_pool, 0, UINT32_MAX);
			if (d != NULL) {
				d->l2_len = 0;
				d->l3_len = 20;
				l->duped++;
				h_input(to, d);
			}
		}
		if (l->held[dir] == NULL && lossy_rand(l) < l->reorder) {
			l->held[dir] = m;   /* overtaken by the next one */
			l->reordered++;
			continue;
		}
		h_input(to, m);
		if (l->held[dir] != NULL) {
			struct rte_mbuf *o = l->held[dir];
			l->held[dir] = NULL;
			h_input(to, o);
		}
	}
}

static void lossy_run(enum rnic_tcp_cc cc, uint64_t seed)
{
	struct h_app ca, sb;
	const size_t n = 4 << 20;
	struct rnic_tcp_params p;
	rnic_tcp_params_default(&p);
	p.cc = cc;
	assert_int_equal(rnic_tcp_config(&h_a.st, &p), 0);
	struct rnic_tcp_conn *c = h_open(&ca, &sb, n, 5001);
	assert_ptr_equal(c->cc_ops, cc == RNIC_TCP_CC_CUBIC ? &tcp_cc_cubic : &tcp_cc_newreno);
	struct lossy l = { .x = seed, .drop = 20, .dup = 10, .reorder = 20 };
	size_t queued = 0;
	bool closed = false;
	for (unsigned r = 0; r < 2000000 && !(closed && ca.closes && sb.closes); r++) {
		while (queued < n && rnic_tcp_send_space(c) >= 16384) {
			assert_int_equal(h_send(c, queued, 16384), 0);
			queued += 16384;
		}
		if (queued == n && !closed && sb.got == n) {
			assert_int_equal(rnic_tcp_close(c), 0);
			assert_int_equal(rnic_tcp_close(sb.c), 0);
			closed = true;
		}
		lossy_move(&l, &h_a, &h_b, 0);
		lossy_move(&l, &h_b, &h_a, 1);
		/* a link of about 100 us: the delayed-ACK and RTO timers run */
		h_advance(h_a.n_out || h_b.n_out ? 20 : 200);
	}
	for (int d = 0; d < 2; d++)
		rte_pktmbuf_free(l.held[d]);
	assert_int_equal(sb.got, n);
	assert_true(h_pattern_ok(sb.buf, 0, n));
	assert_true(closed);
	assert_int_equal(ca.closes, 1);
	assert_int_equal(sb.closes, 1);
	assert_int_equal(sb.closed_err, 0);
	assert_true(l.dropped > 0 && l.duped > 0 && l.reordered > 0);
	assert_true(h_stats(&h_a).retransmits > 0);
	if (getenv("TCB_VERBOSE")) {
		struct rnic_tcp_stats x = h_stats(&h_a), y = h_stats(&h_b);
		fprintf(stderr, "lossy: dropped %u duped %u reordered %u; A rtx %lu rto %lu fr %lu spurious %lu; B oow %lu dup %lu\n",
			l.dropped, l.duped, l.reordered, x.retransmits, x.rtos, x.fast_retransmits,
			x.spurious_rtos, y.out_of_window, y.dup_segs);
	}
	h_advance(3u * 1000 * 1000);   /* TIME_WAIT ends */
	h_flush(&h_a);
	h_flush(&h_b);
	assert_int_equal(h_stats(&h_a).tcbs + h_stats(&h_b).tcbs, 0);
	h_app_fini(&ca);
	h_app_fini(&sb);
}

static void lossy_link_newreno(void **state)
{
	(void)state;
	lossy_run(RNIC_TCP_CC_NEWRENO, 0x9e3779b97f4a7c15ull);
}

static void lossy_link_cubic(void **state)
{
	(void)state;
	lossy_run(RNIC_TCP_CC_CUBIC, 0x2545f4914f6cdd1dull);
}

/* Applications close or abort from inside callbacks; lib/tcp keeps using
 * the TCB up the stack, so it must not be freed under it (freed TCBs are
 * poisoned by the harness). */
static void close_and_abort_from_callbacks(void **state)
{
	(void)state;
	struct h_app ca, sb;
	uint8_t data[100];
	h_pattern(data, 0, sizeof(data));

	/* abort in recv(), on a segment that also carries the FIN */
	h_app_init(&ca, 0);
	h_app_init(&sb, 100);
	sb.abort_in_recv = true;
	struct rnic_tcp_conn *c = h_connect(&ca, &sb, 5001);
	assert_non_null(c);
	struct rnic_tcp_conn *cb = sb.c;
	struct tcp_opts o = { .ts_ok = true, .tsval = cb->ts_recent + 1,
			      .tsecr = tcp_ts_now(cb) };
	h_input(&h_b, h_craft_to(cb, cb->rcv_nxt, cb->snd_nxt, ACK | FIN | PSH, &o, data, 100));
	assert_int_equal(sb.got, 100);
	assert_int_equal(sb.eofs, 0);
	assert_int_equal(h_stats(&h_b).tcbs, 0);
	struct h_seg s;
	rte_pktmbuf_free(h_next_seg(&h_b, &s));
	assert_int_equal(s.flags & RST, RST);
	assert_int_equal(h_b.n_out, 0);
	rnic_tcp_abort(c);
	h_flush(&h_a);
	assert_int_equal(rnic_tcp_unlisten(&h_b.st, 5001), 0);
	h_app_fini(&ca);
	h_app_fini(&sb);

	/* close in recv(): the FIN follows the ACK, both ends finish */
	h_app_init(&ca, 0);
	h_app_init(&sb, 4096);
	sb.close_in_recv = true;
	c = h_connect(&ca, &sb, 5002);
	assert_non_null(c);
	assert_int_equal(h_send(c, 0, 3000), 0);
	h_pump(NULL, NULL, NULL, 100);
	assert_int_equal(sb.got, 3000);
	assert_int_equal(ca.eofs, 1);
	assert_int_equal(rnic_tcp_close(c), 0);
	h_pump(NULL, NULL, NULL, 100);
	assert_int_equal(sb.closes, 1);
	assert_int_equal(sb.closed_err, 0);
	assert_int_equal(rnic_tcp_unlisten(&h_b.st, 5002), 0);
	h_app_fini(&ca);
	h_app_fini(&sb);

	/* abort in sent(), while ACK processing is under way */
	h_app_init(&ca, 0);
	h_app_init(&sb, 64 * 1024);
	ca.abort_in_sent = true;
	c = h_connect(&ca, &sb, 5003);
	assert_non_null(c);
	assert_int_equal(h_send(c, 0, 20000), 0);
	h_pump(NULL, NULL, NULL, 100);
	assert_int_equal(ca.sent_calls, 1);
	assert_int_equal(h_stats(&h_a).tcbs, 0);
	assert_int_equal(sb.closes, 1);
	assert_int_equal(sb.closed_err, -ECONNRESET);
	assert_int_equal(rnic_tcp_unlisten(&h_b.st, 5003), 0);
	h_app_fini(&ca);
	h_app_fini(&sb);

	/* abort in accept(), on a final ACK that carries data */
	h_app_init(&ca, 0);
	h_app_init(&sb, 100);
	sb.abort_in_accept = true;
	uint64_t tcbs0 = h_stats(&h_b).tcbs;   /* B holds a TIME_WAIT from above */
	assert_int_equal(rnic_tcp_listen(&h_b.st, 5004, &h_app_ops, &sb, 8), 0);
	assert_int_equal(rnic_tcp_connect(&h_a.w, H_IP_B, 5004, &h_app_ops, &ca, &c), 0);
	h_input(&h_b, h_take(&h_a));
	h_input(&h_a, h_take(&h_b));
	h_flush(&h_a);   /* the bare ACK: the data segment completes the handshake */
	assert_int_equal(h_send(c, 0, 100), 0);
	h_input(&h_b, h_take(&h_a));
	assert_int_equal(sb.accepts, 1);
	assert_int_equal(sb.got, 0);
	assert_int_equal(h_stats(&h_b).tcbs, tcbs0);
	h_pump(NULL, NULL, NULL, 100);
	assert_int_equal(ca.closes, 1);
	assert_int_equal(ca.closed_err, -ECONNRESET);
	h_app_fini(&ca);
	h_app_fini(&sb);
}

int main(void)
{
#define T(f) H_TEST(f)
	const struct CMUnitTest tests[] = {
		T(handshake_passive_cookie), T(handshake_refused),
		T(syn_retry_and_timeout), T(active_open_port_steers_home),
		T(simultaneous_open),
		T(syn_flood_keeps_no_state), T(syn_stage_bench), T(handshake_bench),
		T(backlog_full_no_state), T(listener_slot_reuse), T(lost_final_ack_completed_by_data),
		T(lost_final_ack_and_first_segment),
		T(lost_final_ack_then_dup_syn_ack),
		T(data_and_delayed_ack), T(pmtu_reduce), T(unit_ring_grows), T(records_not_merged), T(ooo_sack_fast_retransmit),
		T(sack_blocks_most_recent_first), T(ooo_overlaps_merge),
		T(dsack_reports_duplicates), T(random_segments_reassemble),
		T(rto_retransmit), T(rto_after_sacked_head), T(tail_loss_probe), T(spurious_rto_undone), T(spurious_rto_no_memory), T(ooo_no_memory),
		T(zero_window_probe),
		T(sent_callback_respects_window),
		T(fin_to_time_wait), T(time_wait_reuse), T(simultaneous_close), T(orphan_close),
		T(rst_validation), T(paws_drop),
		T(malformed_dropped_and_counted), T(handoff_in_order),
		T(odd_sized_writes), T(pool_reserve_refuses_sends), T(csum_matches_reference), T(tcb_cache_bounded),
		T(close_and_abort_from_callbacks),
		T(newreno_partial_ack), T(keepalive_probes_then_timeout),
		T(user_timeout_aborts), T(retry_limit_without_user_timeout),
		T(user_timeout_spares_zero_window_peer),
		T(local_stall_gives_no_rtt_sample), T(local_stall_spares_user_timeout),
		T(peer_stall_after_rto_gives_no_rtt_sample),
		T(handoff_with_fin), T(lossy_link_newreno), T(lossy_link_cubic),
	};
#undef T
	return h_run("test_tcb", "rnic-test-tcb", tests, sizeof(tests) / sizeof(tests[0]));
}
