/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Fault injector: determinism for a seed, rates within tolerance, what each
 * fault does to the frames, and no mbuf left behind.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <cmocka.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_ether.h>
#include <rte_ip.h>
#include <rte_mbuf.h>

#include "port/fault.h"

static struct rte_mempool *pool;

static struct rte_mbuf *frame(uint32_t seq)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(pool);
	assert_non_null(m);
	assert_non_null(rte_pktmbuf_append(m, 64));
	uint8_t *p = rte_pktmbuf_mtod(m, uint8_t *);
	memset(p, 0, 64);
	memcpy(p, &seq, sizeof(seq));
	return m;
}

static uint32_t seq_of(struct rte_mbuf *m)
{
	uint32_t s;
	memcpy(&s, rte_pktmbuf_mtod(m, void *), sizeof(s));
	return s;
}

/* Push n frames through, one at a time; record output sequence numbers. */
static unsigned run(struct rnic_fault *f, unsigned n, uint32_t *seen, unsigned max)
{
	struct rte_mbuf *out[8];
	unsigned k = 0;
	uint64_t now = rte_rdtsc();
	for (unsigned i = 0; i < n; i++) {
		struct rte_mbuf *m = frame(i);
		unsigned got = rnic_fault_apply(f, &m, 1, out, 8, now);
		for (unsigned j = 0; j < got; j++) {
			if (k < max)
				seen[k++] = seq_of(out[j]);
			rte_pktmbuf_free(out[j]);
		}
	}
	/* release everything held: far in the future */
	unsigned got;
	while ((got = rnic_fault_release(f, out, 8, UINT64_MAX)) > 0)
		for (unsigned j = 0; j < got; j++) {
			if (k < max)
				seen[k++] = seq_of(out[j]);
			rte_pktmbuf_free(out[j]);
		}
	return k;
}

static void off_by_default(void **state)
{
	struct rnic_fault f;
	struct rnic_fault_cfg cfg = {0};
	static uint32_t seen[1000];
	(void)state;
	rnic_fault_init(&f, &cfg, 1);
	assert_false(f.enabled);
	assert_int_equal(run(&f, 1000, seen, 1000), 1000);
	for (unsigned i = 0; i < 1000; i++)
		assert_int_equal(seen[i], i);
	assert_int_equal(rte_mempool_in_use_count(pool), 0);
}

static void deterministic(void **state)
{
	struct rnic_fault a, b;
	struct rnic_fault_cfg cfg = { .drop = 5, .dup = 3, .reorder = 4, .corrupt = 2 };
	static uint32_t sa[20000], sb[20000];
	(void)state;
	rnic_fault_init(&a, &cfg, 1234);
	rnic_fault_init(&b, &cfg, 1234);
	unsigned na = run(&a, 10000, sa, 20000);
	unsigned nb = run(&b, 10000, sb, 20000);
	assert_int_equal(na, nb);
	assert_memory_equal(sa, sb, na * sizeof(uint32_t));
	assert_memory_equal(&a.stats, &b.stats, sizeof(a.stats));
	/* another seed, other decisions */
	rnic_fault_init(&b, &cfg, 999);
	nb = run(&b, 10000, sb, 20000);
	assert_true(na != nb || memcmp(sa, sb, na * sizeof(uint32_t)) != 0);
	assert_int_equal(rte_mempool_in_use_count(pool), 0);
}

static void rates(void **state)
{
	struct rnic_fault f;
	struct rnic_fault_cfg cfg = { .drop = 2, .dup = 1, .reorder = 2, .corrupt = 0.5 };
	static uint32_t seen[300000];
	const unsigned n = 100000;
	(void)state;
	rnic_fault_init(&f, &cfg, 42);
	unsigned k = run(&f, n, seen, 300000);
	assert_int_equal(f.stats.seen, n);
	assert_in_range(f.stats.dropped, 1500, 2500);
	assert_in_range(f.stats.duplicated, 700, 1300);
	assert_in_range(f.stats.reordered, 1500, 2500);
	assert_in_range(f.stats.corrupted, 300, 700);
	/* conservation: out = in - dropped + duplicated */
	assert_int_equal(k, n - f.stats.dropped + f.stats.duplicated);
	/* reordering moved frames behind later ones */
	unsigned inversions = 0;
	for (unsigned i = 1; i < k; i++)
		inversions += seen[i] < seen[i - 1];
	assert_true(inversions > 1000);
	assert_int_equal(rte_mempool_in_use_count(pool), 0);
}

static void corrupt_flips_one_bit(void **state)
{
	struct rnic_fault f;
	struct rnic_fault_cfg cfg = { .corrupt = 100 };
	struct rte_mbuf *out[2];
	(void)state;
	rnic_fault_init(&f, &cfg, 7);
	for (int i = 0; i < 100; i++) {
		struct rte_mbuf *m = frame(0);
		uint8_t orig[64];
		memcpy(orig, rte_pktmbuf_mtod(m, void *), 64);
		assert_int_equal(rnic_fault_apply(&f, &m, 1, out, 2, 0), 1);
		uint8_t *p = rte_pktmbuf_mtod(out[0], uint8_t *);
		unsigned bits = 0;
		for (int b = 0; b < 64; b++)
			bits += __builtin_popcount(p[b] ^ orig[b]);
		assert_int_equal(bits, 1);
		rte_pktmbuf_free(out[0]);
	}
	/* a shared frame is copied, never modified under its other owner */
	struct rte_mbuf *m = frame(5);
	rte_mbuf_refcnt_update(m, 1);
	assert_int_equal(rnic_fault_apply(&f, &m, 1, out, 2, 0), 1);
	assert_ptr_not_equal(out[0], m);
	assert_int_equal(seq_of(m), 5);
	rte_pktmbuf_free(out[0]);
	rte_pktmbuf_free(m);
	assert_int_equal(rte_mempool_in_use_count(pool), 0);
}

static void delay_holds_until_due(void **state)
{
	struct rnic_fault f;
	struct rnic_fault_cfg cfg = { .delay = 100, .delay_us = 1000 };
	struct rte_mbuf *out[4];
	uint64_t us = rte_get_tsc_hz() / 1000000;
	(void)state;
	rnic_fault_init(&f, &cfg, 3);
	struct rte_mbuf *m = frame(1);
	assert_int_equal(rnic_fault_apply(&f, &m, 1, out, 4, 1000 * us), 0);
	assert_int_equal(rnic_fault_release(&f, out, 4, 1999 * us), 0);
	assert_int_equal(rnic_fault_release(&f, out, 4, 2000 * us), 1);
	rte_pktmbuf_free(out[0]);
	/* flush frees what is still held */
	m = frame(2);
	rnic_fault_apply(&f, &m, 1, out, 4, 0);
	assert_int_equal(rte_mempool_in_use_count(pool), 1);
	rnic_fault_flush(&f);
	assert_int_equal(rte_mempool_in_use_count(pool), 0);
}

/* Copy a chain's bytes out (up to @p max). */
static uint32_t flatten(struct rte_mbuf *m, uint8_t *buf, uint32_t max)
{
	uint32_t len = rte_pktmbuf_pkt_len(m);
	assert_true(len <= max);
	const void *p = rte_pktmbuf_read(m, 0, len, buf);
	assert_non_null(p);
	if (p != buf)
		memcpy(buf, p, len); /* contiguous: read points into the mbuf */
	return len;
}

/* A TCP-like frame: a private header mbuf chained to a clone of payload
 * the sender keeps (its retransmission queue). Bits flip anywhere in the
 * frame, the payload too, but never in the sender's copy. */
static void corrupt_chain_spares_shared_payload(void **state)
{
	struct rnic_fault f;
	struct rnic_fault_cfg cfg = { .corrupt = 100 };
	struct rte_mbuf *out[2];
	uint8_t orig[256], got[256], keep[100];
	unsigned in_payload = 0;
	(void)state;
	rnic_fault_init(&f, &cfg, 11);
	struct rte_mbuf *src = rte_pktmbuf_alloc(pool);
	assert_non_null(src);
	assert_non_null(rte_pktmbuf_append(src, 100));
	for (int i = 0; i < 100; i++)
		rte_pktmbuf_mtod(src, uint8_t *)[i] = (uint8_t)(i * 7 + 1);
	memcpy(keep, rte_pktmbuf_mtod(src, void *), 100);
	for (int i = 0; i < 200; i++) {
		struct rte_mbuf *h = frame((uint32_t)i);
		struct rte_mbuf *c = rte_pktmbuf_clone(src, pool);
		assert_non_null(c);
		assert_int_equal(rte_pktmbuf_chain(h, c), 0);
		uint32_t len = flatten(h, orig, sizeof(orig));
		assert_int_equal(rnic_fault_apply(&f, &h, 1, out, 2, 0), 1);
		assert_int_equal(flatten(out[0], got, sizeof(got)), len);
		unsigned bits = 0, where = 0;
		for (uint32_t b = 0; b < len; b++) {
			bits += __builtin_popcount(got[b] ^ orig[b]);
			if (got[b] != orig[b])
				where = b;
		}
		assert_int_equal(bits, 1);
		in_payload += where >= 64;
		assert_memory_equal(rte_pktmbuf_mtod(src, void *), keep, 100);
		rte_pktmbuf_free(out[0]);
	}
	/* 100 of 164 bytes are payload: about 120 of 200 flips land there */
	assert_in_range(in_payload, 80, 160);
	assert_int_equal(f.stats.corrupted, 200);
	rte_pktmbuf_free(src);
	assert_int_equal(rte_mempool_in_use_count(pool), 0);
}

/* The reordered frame's 1 ms deadline takes its place among delayed frames:
 * everything comes out in release-time order. */
static void release_in_time_order(void **state)
{
	struct rnic_fault f;
	struct rnic_fault_cfg cfg = { .delay = 100, .delay_us = 500, .reorder = 100 };
	struct rte_mbuf *out[4], *m;
	(void)state;
	rnic_fault_init(&f, &cfg, 5);
	m = frame(1);                          /* held until 0.5 ms */
	assert_int_equal(rnic_fault_apply(&f, &m, 1, out, 4, 0), 0);
	uint32_t p_delay = f.p_delay;
	f.p_delay = 0;
	m = frame(2);                          /* reordered: 1 ms deadline */
	assert_int_equal(rnic_fault_apply(&f, &m, 1, out, 4, 0), 0);
	f.p_delay = p_delay;
	f.cfg.delay_us = 2000;
	m = frame(3);                          /* held until 2 ms */
	assert_int_equal(rnic_fault_apply(&f, &m, 1, out, 4, 0), 0);
	assert_int_equal(rnic_fault_release(&f, out, 4, UINT64_MAX), 3);
	assert_int_equal(seq_of(out[0]), 1);
	assert_int_equal(seq_of(out[1]), 2);
	assert_int_equal(seq_of(out[2]), 3);
	for (int i = 0; i < 3; i++)
		rte_pktmbuf_free(out[i]);
	assert_int_equal(rte_mempool_in_use_count(pool), 0);
}

/* Frames the PMD refused go back in the hold, due at once, behind frames
 * already due and ahead of later ones; a full hold gives the rest back. */
static void requeue_keeps_order(void **state)
{
	struct rnic_fault f;
	struct rnic_fault_cfg cfg = { .delay = 100, .delay_us = 10 };
	struct rte_mbuf *out[RNIC_FAULT_HOLD + 2], *m[3];
	uint64_t us = rte_get_tsc_hz() / 1000000;
	(void)state;
	rnic_fault_init(&f, &cfg, 9);
	struct rte_mbuf *d = frame(0);          /* due at 10 us */
	assert_int_equal(rnic_fault_apply(&f, &d, 1, out, 4, 0), 0);
	for (uint32_t i = 0; i < 3; i++)
		m[i] = frame(10 + i);
	assert_int_equal(rnic_fault_requeue(&f, m, 3, 5 * us), 3);
	assert_int_equal(rnic_fault_release(&f, out, 8, 6 * us), 3);
	for (uint32_t i = 0; i < 3; i++)
		assert_int_equal(seq_of(out[i]), 10 + i);
	assert_int_equal(rnic_fault_release(&f, out, 8, 10 * us), 1);
	assert_ptr_equal(out[0], d);
	rte_pktmbuf_free(d);
	for (uint32_t i = 0; i < 3; i++)
		rte_pktmbuf_free(m[i]);
	/* fill the hold: the overflow stays the caller's */
	unsigned taken = 0;
	for (unsigned i = 0; i < RNIC_FAULT_HOLD + 2; i++) {
		struct rte_mbuf *x = frame(i);
		if (rnic_fault_requeue(&f, &x, 1, 0) == 1)
			taken++;
		else
			rte_pktmbuf_free(x);
	}
	assert_int_equal(taken, RNIC_FAULT_HOLD);
	rnic_fault_flush(&f);
	assert_int_equal(rte_mempool_in_use_count(pool), 0);
}

/* An Ethernet/IPv4/UDP frame (optionally 802.1Q-tagged) with TOS @p tos
 * and a valid header checksum. */
static struct rte_mbuf *ip_frame(uint8_t tos, bool vlan)
{
	uint32_t l2 = sizeof(struct rte_ether_hdr) + (vlan ? sizeof(struct rte_vlan_hdr) : 0);
	struct rte_mbuf *m = rte_pktmbuf_alloc(pool);
	assert_non_null(m);
	uint8_t *p = (uint8_t *)rte_pktmbuf_append(m, (uint16_t)(l2 + 28 + 36));
	assert_non_null(p);
	memset(p, 0, l2 + 28 + 36);
	struct rte_ether_hdr *eth = (struct rte_ether_hdr *)p;
	eth->ether_type = rte_cpu_to_be_16(vlan ? RTE_ETHER_TYPE_VLAN : RTE_ETHER_TYPE_IPV4);
	if (vlan)
		((struct rte_vlan_hdr *)(eth + 1))->eth_proto = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
	struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)(p + l2);
	ip->version_ihl = 0x45;
	ip->type_of_service = tos;
	ip->total_length = rte_cpu_to_be_16(28 + 36);
	ip->time_to_live = 64;
	ip->next_proto_id = IPPROTO_UDP;
	ip->src_addr = rte_cpu_to_be_32(0xc0000201);
	ip->dst_addr = rte_cpu_to_be_32(0xc0000202);
	ip->hdr_checksum = rte_ipv4_cksum(ip);
	return m;
}

static struct rte_ipv4_hdr *ip_of(struct rte_mbuf *m, bool vlan)
{
	return rte_pktmbuf_mtod_offset(m, struct rte_ipv4_hdr *, sizeof(struct rte_ether_hdr) +
				       (vlan ? sizeof(struct rte_vlan_hdr) : 0));
}

/* CE only on ECN-capable IPv4 (the checksum fixed) and IPv6, DSCP kept;
 * nothing else touched or marked. */
static void ce_marks_ect_only(void **state)
{
	static const struct { uint8_t tos; bool vlan; bool marked; } t[] = {
		{ 0x02, false, true },    /* ECT(0) */
		{ 0x01, false, true },    /* ECT(1) */
		{ 0xba, false, true },    /* DSCP 46 + ECT(0): DSCP kept */
		{ 0x02, true, true },     /* behind an 802.1Q tag */
		{ 0x00, false, false },   /* Not-ECT: a switch would drop, not mark */
		{ 0xc0, false, false },   /* a CNP: DSCP 48, Not-ECT */
		{ 0x03, false, false },   /* CE already */
	};
	(void)state;
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		struct rte_mbuf *m = ip_frame(t[i].tos, t[i].vlan);
		struct rte_ipv4_hdr *ip = ip_of(m, t[i].vlan);
		assert_int_equal(rnic_fault_mark_ce(m), t[i].marked);
		uint8_t want = t[i].marked ? (uint8_t)(t[i].tos | 3) : t[i].tos;
		assert_int_equal(ip->type_of_service, want);
		assert_int_equal(rte_raw_cksum(ip, sizeof(*ip)), 0xffff);   /* still valid */
		rte_pktmbuf_free(m);
	}
	/* IPv6: the traffic class's ECN bits, flow label and DSCP kept */
	static const struct { uint8_t tc; bool marked; } t6[] = {
		{ 0x02, true }, { 0x01, true }, { 0xba, true },
		{ 0x00, false }, { 0x03, false },
	};
	for (size_t i = 0; i < sizeof(t6) / sizeof(t6[0]); i++) {
		struct rte_mbuf *m6 = rte_pktmbuf_alloc(pool);
		assert_non_null(m6);
		uint8_t *p = (uint8_t *)rte_pktmbuf_append(m6, 14 + 40 + 8);
		memset(p, 0, 14 + 40 + 8);
		((struct rte_ether_hdr *)p)->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV6);
		uint8_t *h = p + 14;
		h[0] = (uint8_t)(0x60 | t6[i].tc >> 4);          /* version 6, TC high */
		h[1] = (uint8_t)((t6[i].tc & 0xf) << 4 | 0x0a);  /* TC low, flow label */
		h[2] = 0xbc;
		h[3] = 0xde;
		h[6] = IPPROTO_UDP;
		assert_int_equal(rnic_fault_mark_ce(m6), t6[i].marked);
		uint8_t tc = (uint8_t)((h[0] & 0xf) << 4 | h[1] >> 4);
		assert_int_equal(tc, t6[i].marked ? (uint8_t)(t6[i].tc | 3) : t6[i].tc);
		assert_int_equal(h[1] & 0xf, 0x0a);
		assert_int_equal(h[2], 0xbc);
		assert_int_equal(h[3], 0xde);
		rte_pktmbuf_free(m6);
	}
	/* not IP */
	struct rte_mbuf *m = ip_frame(0x02, false);
	rte_pktmbuf_mtod(m, struct rte_ether_hdr *)->ether_type =
		rte_cpu_to_be_16(RTE_ETHER_TYPE_ARP);
	assert_false(rnic_fault_mark_ce(m));
	assert_int_equal(ip_of(m, false)->type_of_service, 0x02);
	/* shared bytes (a retransmission queue's copy) are never written */
	rte_pktmbuf_refcnt_update(m, 1);
	rte_pktmbuf_mtod(m, struct rte_ether_hdr *)->ether_type =
		rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
	assert_false(rnic_fault_mark_ce(m));
	rte_pktmbuf_free(m);
	rte_pktmbuf_free(m);
	/* too short for an IPv4 header */
	m = rte_pktmbuf_alloc(pool);
	assert_non_null(rte_pktmbuf_append(m, 20));
	memset(rte_pktmbuf_mtod(m, void *), 0, 20);
	rte_pktmbuf_mtod(m, struct rte_ether_hdr *)->ether_type =
		rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
	assert_false(rnic_fault_mark_ce(m));
	rte_pktmbuf_free(m);
	assert_int_equal(rte_mempool_in_use_count(pool), 0);
}

/* The ce knob through the injector: 100 % marks every ECT frame, order
 * and count kept; set at run time it turns an idle injector on, and 0
 * stops the marking. */
static void ce_knob(void **state)
{
	struct rnic_fault f;
	struct rnic_fault_cfg cfg = { .ce = 100 };
	struct rte_mbuf *in[16], *out[16];
	(void)state;
	rnic_fault_init(&f, &cfg, 7);
	assert_true(f.enabled);
	for (unsigned i = 0; i < 16; i++)
		in[i] = ip_frame(i % 2 ? 0x02 : 0x00, false);
	assert_int_equal(rnic_fault_apply(&f, in, 16, out, 16, rte_rdtsc()), 16);
	for (unsigned i = 0; i < 16; i++) {
		assert_ptr_equal(out[i], in[i]);
		assert_int_equal(ip_of(out[i], false)->type_of_service & 3, i % 2 ? 3 : 0);
		rte_pktmbuf_free(out[i]);
	}
	assert_int_equal(f.stats.ce_marked, 8);
	rnic_fault_set_ce(&f, 0);
	for (unsigned i = 0; i < 16; i++)
		in[i] = ip_frame(0x02, false);
	assert_int_equal(rnic_fault_apply(&f, in, 16, out, 16, rte_rdtsc()), 16);
	for (unsigned i = 0; i < 16; i++) {
		assert_int_equal(ip_of(out[i], false)->type_of_service, 0x02);
		rte_pktmbuf_free(out[i]);
	}
	assert_int_equal(f.stats.ce_marked, 8);
	/* about the asked share, at run time on an injector made idle */
	struct rnic_fault_cfg none = { 0 };
	rnic_fault_init(&f, &none, 9);
	assert_false(f.enabled);
	rnic_fault_set_ce(&f, 25);
	assert_true(f.enabled);
	unsigned marked = 0;
	for (unsigned r = 0; r < 250; r++) {
		for (unsigned i = 0; i < 16; i++)
			in[i] = ip_frame(0x01, false);
		unsigned n = rnic_fault_apply(&f, in, 16, out, 16, rte_rdtsc());
		assert_int_equal(n, 16);
		for (unsigned i = 0; i < n; i++) {
			marked += (ip_of(out[i], false)->type_of_service & 3) == 3;
			rte_pktmbuf_free(out[i]);
		}
	}
	assert_int_equal(marked, f.stats.ce_marked);
	assert_in_range(marked, 4000 * 20 / 100, 4000 * 30 / 100);
	assert_int_equal(rte_mempool_in_use_count(pool), 0);
}

int main(void)
{
	char *argv[] = { "test_fault", "--no-huge", "-m", "128", "--no-pci",
			 "--file-prefix", "rnic-test-fault", "--log-level=*:error", NULL };
	if (rte_eal_init(8, argv) < 0)
		return 1;
	pool = rte_pktmbuf_pool_create("tf", 8191, 0, 0, 256, SOCKET_ID_ANY);
	if (pool == NULL)
		return 1;
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(off_by_default),
		cmocka_unit_test(deterministic),
		cmocka_unit_test(rates),
		cmocka_unit_test(corrupt_flips_one_bit),
		cmocka_unit_test(delay_holds_until_due),
		cmocka_unit_test(corrupt_chain_spares_shared_payload),
		cmocka_unit_test(release_in_time_order),
		cmocka_unit_test(requeue_keeps_order),
		cmocka_unit_test(ce_marks_ect_only),
		cmocka_unit_test(ce_knob),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
