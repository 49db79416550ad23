/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * CNPs: the bytes rnic_roce_cnp_fill() writes, inside an IPv4/UDP packet
 * whose ICRC rnic's code generates, against a golden packet computed
 * without rnic (vectors/cnp_vector.py); the parser's view of it; the ICRC
 * surviving a CE mark; and the per-QP CNP pacing.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "roce/cnp.h"
#include "roce/icrc.h"
#include "roce/roce_wire.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* vectors/cnp_vector.py */
static const uint8_t golden[60] = {
	0x45, 0xc0, 0x00, 0x3c, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11, 0xb5, 0xed,
	0xc0, 0x00, 0x02, 0x02, 0xc0, 0x00, 0x02, 0x01, 0xc1, 0x23, 0x12, 0xb7,
	0x00, 0x28, 0x00, 0x00, 0x81, 0x00, 0xff, 0xff, 0x40, 0x00, 0x00, 0xd2,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x90, 0xf3, 0x6e, 0x30,
};

#define IP_LEN  20u
#define UDP_LEN 8u

/* The golden packet's IPv4 and UDP headers (as lib/net would write them
 * for a CNP), the CNP from rnic_roce_cnp_fill(), the ICRC from icrc.c. */
static void build(uint8_t *p, uint32_t dqpn)
{
	memset(p, 0xa5, 60);   /* whatever the fill leaves must show */
	memcpy(p, golden, IP_LEN + UDP_LEN);
	rnic_roce_cnp_fill(p + IP_LEN + UDP_LEN, dqpn);
	assert_int_equal(rnic_roce_icrc_generate(p, 60), 0);
}

static void test_golden(void **state)
{
	uint8_t p[60];
	(void)state;
	build(p, 0xd2);
	assert_memory_equal(p, golden, sizeof(golden));
	assert_int_equal(rnic_roce_icrc_verify(golden, sizeof(golden)), 0);
	assert_int_equal(golden[1], RNIC_ROCE_CNP_TOS);
	/* DestQP wider than one byte, and the mask at 24 bits */
	build(p, 0x12345678);
	const struct rnic_roce_bth *bth = (const struct rnic_roce_bth *)(p + IP_LEN + UDP_LEN);
	assert_int_equal(rnic_roce_bth_dqpn(bth), 0x345678);
	assert_true(rnic_roce_bth_becn(bth));
	assert_false(rnic_roce_bth_fecn(bth));
	assert_int_equal(rnic_roce_icrc_verify(p, sizeof(p)), 0);
}

static void test_parse(void **state)
{
	uint8_t p[60];
	struct rnic_roce_pkt pkt;
	(void)state;
	memcpy(p, golden, sizeof(p));
	assert_int_equal(rnic_roce_pkt_parse(&pkt, p + IP_LEN + UDP_LEN,
					     sizeof(p) - IP_LEN - UDP_LEN, NULL), 0);
	assert_int_equal(pkt.opcode, RNIC_ROCE_OP_CNP);
	assert_true(pkt.flags & RNIC_ROCE_OPF_CNP);
	assert_false(pkt.flags & (RNIC_ROCE_OPF_RC | RNIC_ROCE_OPF_UD));
	assert_int_equal(rnic_roce_pkt_dqpn(&pkt), 0xd2);
	assert_int_equal(rnic_roce_op(RNIC_ROCE_OP_CNP)->length, RNIC_ROCE_CNP_LEN);
}

/* A switch marking the packet CE (or rewriting DSCP) changes only the
 * masked TOS byte and the IPv4 checksum: the ICRC still holds. A changed
 * DestQP does not. */
static void test_icrc_masks_ecn(void **state)
{
	uint8_t p[60];
	(void)state;
	memcpy(p, golden, sizeof(p));
	p[1] = 0x03;
	p[10] ^= 0x55;
	assert_int_equal(rnic_roce_icrc_verify(p, sizeof(p)), 0);
	p[IP_LEN + UDP_LEN + 7] ^= 1;
	assert_int_equal(rnic_roce_icrc_verify(p, sizeof(p)), -EBADMSG);
}

static void test_limiter(void **state)
{
	static const struct { uint32_t interval; uint64_t now; bool allow; } t[] = {
		{ 50, 0, true },      /* the first mark always answers */
		{ 50, 10, false },
		{ 50, 49, false },
		{ 50, 50, true },     /* 50 us after the last CNP */
		{ 50, 60, false },
		{ 50, 99, false },
		{ 50, 1000, true },   /* long quiet: at once */
		{ 50, 1049, false },
	};
	struct rnic_cnp_limiter l = { 0 };
	(void)state;
	for (size_t i = 0; i < N(t); i++)
		assert_int_equal(rnic_cnp_allow(&l, t[i].now, t[i].interval), t[i].allow);
	/* interval 0: one CNP per mark */
	struct rnic_cnp_limiter z = { 0 };
	for (uint64_t now = 5; now < 10; now++) {
		assert_true(rnic_cnp_allow(&z, now, 0));
		assert_true(rnic_cnp_allow(&z, now, 0));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_golden),
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_icrc_masks_ecn),
		cmocka_unit_test(test_limiter),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
