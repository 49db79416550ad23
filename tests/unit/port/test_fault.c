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
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
