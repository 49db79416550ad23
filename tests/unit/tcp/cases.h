/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What the cmocka cases on the TCB harness (harness.h) share: test_tcb.c
 * and test_hostile.c. Unlike harness.c these helpers assert, so they live
 * in a header the test files include after <cmocka.h>.
 */
#ifndef RNIC_TEST_TCP_CASES_H
#define RNIC_TEST_TCP_CASES_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <cmocka.h>

#include <rte_eal.h>
#include <rte_tcp.h>

#include "harness.h"

#define SYN RTE_TCP_SYN_FLAG
#define ACK RTE_TCP_ACK_FLAG
#define RST RTE_TCP_RST_FLAG
#define FIN RTE_TCP_FIN_FLAG
#define PSH RTE_TCP_PSH_FLAG

/* Take the oldest captured segment of @p n, parse it and keep the mbuf. */
static inline struct rte_mbuf *h_next_seg(struct h_node *n, struct h_seg *s)
{
	struct rte_mbuf *m = h_take(n);
	assert_non_null(m);
	h_parse(m, s);
	assert_int_equal(s->opts_rc, 0);
	return m;
}

/* @p ca (receive buffer 0) on A opens to B's @p port, where @p sb
 * (receive buffer @p sb_cap) accepts; @return A's end, established (B's
 * is sb->c). */
static inline struct rnic_tcp_conn *h_open(struct h_app *ca, struct h_app *sb, size_t sb_cap,
					   uint16_t port)
{
	h_app_init(ca, 0);
	h_app_init(sb, sb_cap);
	struct rnic_tcp_conn *c = h_connect(ca, sb, port);
	assert_non_null(c);
	return c;
}

/* Abort A's @p c, drop what either side still has to send, free both
 * applications. */
static inline void h_close(struct rnic_tcp_conn *c, struct h_app *ca, struct h_app *sb)
{
	rnic_tcp_abort(c);
	h_flush(&h_a);
	h_flush(&h_b);
	h_app_fini(ca);
	h_app_fini(sb);
}

/* An active open from @p ca (receive buffer @p cap) on A to B's @p port;
 * @return A's connection, its SYN captured and not yet sent. */
static inline struct rnic_tcp_conn *h_open_active(struct h_app *ca, size_t cap, uint16_t port)
{
	struct rnic_tcp_conn *c;
	h_app_init(ca, cap);
	assert_int_equal(rnic_tcp_connect(&h_a.w, H_IP_B, port, &h_app_ops, ca, &c), 0);
	return c;
}

/*
 * main() of a test program: EAL without hugepages or PCI (file prefix
 * @p prefix), the harness, then @p tests, or the one named in TCB_FILTER
 * (run one test: TCB_FILTER=name).
 */
static inline int h_run(const char *prog, const char *prefix, const struct CMUnitTest *tests,
			size_t n)
{
	char *argv[] = { (char *)prog, "--no-huge", "-m", "256", "--no-pci",
			 "--file-prefix", (char *)prefix, "--log-level=*:error", NULL };
	if (rte_eal_init(8, argv) < 0 || h_global_init() != 0)
		return 1;
	if (getenv("TCB_FILTER"))
		cmocka_set_test_filter(getenv("TCB_FILTER"));
	int rc = _cmocka_run_group_tests("tests", tests, n, NULL, NULL);
	rte_eal_cleanup();
	return rc;
}

/* A case with fresh A and B (h_setup) and the leak check of h_teardown. */
#define H_TEST(f) cmocka_unit_test_setup_teardown(f, h_setup, h_teardown)

#endif
