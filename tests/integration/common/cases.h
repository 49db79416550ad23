/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The named-case harness of the CM integration tests (iwarp/test_iw_cm_bounds.c,
 * roce/test_roce_cm_flood.c, roce/test_roce_cm.c): the state check.h wants,
 * check.h itself, run_case(), which runs one case, catches its failure
 * (check.h longjmps to case_jmp), prints PASS/FAIL with its time and counts it,
 * and cases_stacks_up(), the two-stack ring pair the first two start with.
 *
 * The includer defines, before including this file:
 *   #define CHECK_FILE, #define GUARD     as check.h wants them
 *   #define CASE_AFTER fn   (optional)  fn(name, r) runs after each case and
 *                                       returns its outcome (it may turn
 *                                       R_PASS into R_FAIL); the includer
 *                                       defines fn later in the file
 */
#ifndef RNIC_TESTS_INTEGRATION_CASES_H
#define RNIC_TESTS_INTEGRATION_CASES_H

#include <setjmp.h>
#include <stdio.h>

#include <rte_errno.h>

static jmp_buf case_jmp;
static const char *case_name;
static int n_pass, n_fail;
enum { R_PASS = 0, R_FAIL = 1, R_SKIP = 2 };

/* the shared checks carry helpers not every test uses */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#include "check.h"
#pragma GCC diagnostic pop

#ifdef CASE_AFTER
static int CASE_AFTER(const char *name, int r);
#endif

static void run_case(const char *name, void (*fn)(void))
{
	volatile int r;
	double t0 = now_s();
	case_name = name;
	r = setjmp(case_jmp);
	if (r == 0)
		fn();
#ifdef CASE_AFTER
	r = CASE_AFTER(name, r);
#endif
	printf("  %s %s (%.2f s)\n", r == R_PASS ? "PASS" : "FAIL", name, now_s() - t0);
	if (r == R_PASS)
		n_pass++;
	else
		n_fail++;
}

/* Two stacks, A (@p ip_a) and B (@p ip_b), on the ring pair "<ring>.a"/
 * "<ring>.b" (created here), started, each with a device context.
 * Prints what failed and returns -1. */
static inline int cases_stacks_up(const char *ring, uint32_t ip_a, uint32_t ip_b,
				  struct rnic_stack *st[2], struct ibv_context *ctx[2])
{
	struct rnic_config c;
	if (rnic_ring_pair(ring, 1) != 0) {
		fprintf(stderr, "ring pair failed\n");
		return -1;
	}
	for (int i = 0; i < 2; i++) {
		rnic_config_init(&c);
		c.n_ports = 1;
		rnic_port_cfg_init(&c.ports[0]);
		snprintf(c.ports[0].ring, sizeof(c.ports[0].ring), "%s.%c", ring, i ? 'b' : 'a');
		c.ports[0].ip = i ? ip_b : ip_a;
		c.ports[0].prefix_len = 24;
		st[i] = rnic_stack_create(&c);
		if (st[i] == NULL || rnic_stack_start(st[i]) != 0 ||
		    (ctx[i] = rnic_open_device(st[i])) == NULL) {
			fprintf(stderr, "stacks: %s\n", rte_strerror(rte_errno));
			return -1;
		}
	}
	return 0;
}

#endif
