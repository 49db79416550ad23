/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Golden bytes for the RoCEv2 headers and their accessors, the transport
 * header parser, and the packet-level accessors. Expected bytes are written
 * by hand from the IBTA figures; the parsed packets are the scapy-built
 * vectors, whose field values are those in scripts/gen_icrc_vectors.py.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "roce/roce_wire.h"
#include "vectors/icrc_vectors.h"

/* ----------------------------------------------------------------- BTH -- */

static void
test_bth_build(void **state)
{
	/* WRITE_ONLY, SE, pad 2, P_Key ffff, FECN, QP 123456, AckReq, PSN abcdef */
	static const uint8_t gold[12] = {
		0x0a, 0xa0, 0xff, 0xff, 0x80, 0x12, 0x34, 0x56,
		0x80, 0xab, 0xcd, 0xef,
	};
	struct rnic_roce_bth h;

	(void)state;
	memset(&h, 0, sizeof(h));
	rnic_roce_bth_set_opcode(&h, RNIC_ROCE_OP_RC_WRITE_ONLY);
	rnic_roce_bth_set_se(&h, true);
	rnic_roce_bth_set_pad(&h, 2);
	rnic_roce_bth_set_tver(&h, 0);
	rnic_roce_bth_set_pkey(&h, 0xffff);
	rnic_roce_bth_set_fecn(&h, true);
	rnic_roce_bth_set_dqpn(&h, 0x123456);
	rnic_roce_bth_set_ackreq(&h, true);
	rnic_roce_bth_set_psn(&h, 0xabcdef);
	assert_memory_equal(&h, gold, 12);

	/* setters mask their input and leave neighbours alone */
	rnic_roce_bth_set_dqpn(&h, 0xff000001);
	rnic_roce_bth_set_psn(&h, 0x7f000002);
	rnic_roce_bth_set_pad(&h, 7);
	rnic_roce_bth_set_becn(&h, true);
	rnic_roce_bth_set_fecn(&h, false);
	rnic_roce_bth_set_mig(&h, true);
	{
		static const uint8_t gold2[12] = {
			0x0a, 0xf0, 0xff, 0xff, 0x40, 0x00, 0x00, 0x01,
			0x80, 0x00, 0x00, 0x02,
		};
		assert_memory_equal(&h, gold2, 12);
	}
	rnic_roce_bth_set_se(&h, false);
	rnic_roce_bth_set_ackreq(&h, false);
	rnic_roce_bth_set_becn(&h, false);
	rnic_roce_bth_set_mig(&h, false);
	rnic_roce_bth_set_tver(&h, 0x1f);
	assert_int_equal(((uint8_t *)&h)[1], 0x3f);
	assert_int_equal(((uint8_t *)&h)[4], 0x00);
	assert_int_equal(((uint8_t *)&h)[8], 0x00);
}

static void
test_bth_parse(void **state)
{
	/* every flag and reserved bit set: fields must not bleed */
	static const uint8_t all[12] = {
		0x13, 0xff, 0x80, 0x01, 0xff, 0xfe, 0xdc, 0xba,
		0xff, 0x01, 0x02, 0x03,
	};
	static const uint8_t none[12] = {
		0x64, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01,
		0x00, 0x00, 0x00, 0x00,
	};
	const struct rnic_roce_bth *a = (const void *)all;
	const struct rnic_roce_bth *n = (const void *)none;

	(void)state;
	assert_int_equal(rnic_roce_bth_opcode(a), 0x13);
	assert_true(rnic_roce_bth_se(a));
	assert_true(rnic_roce_bth_mig(a));
	assert_int_equal(rnic_roce_bth_pad(a), 3);
	assert_int_equal(rnic_roce_bth_tver(a), 0xf);
	assert_int_equal(rnic_roce_bth_pkey(a), 0x8001);
	assert_true(rnic_roce_bth_fecn(a));
	assert_true(rnic_roce_bth_becn(a));
	assert_int_equal(rnic_roce_bth_dqpn(a), 0xfedcba);
	assert_true(rnic_roce_bth_ackreq(a));
	assert_int_equal(rnic_roce_bth_psn(a), 0x010203);

	assert_int_equal(rnic_roce_bth_opcode(n), 0x64);
	assert_false(rnic_roce_bth_se(n));
	assert_false(rnic_roce_bth_mig(n));
	assert_int_equal(rnic_roce_bth_pad(n), 0);
	assert_int_equal(rnic_roce_bth_tver(n), 0);
	assert_false(rnic_roce_bth_fecn(n));
	assert_false(rnic_roce_bth_becn(n));
	assert_int_equal(rnic_roce_bth_dqpn(n), 1);
	assert_false(rnic_roce_bth_ackreq(n));
	assert_int_equal(rnic_roce_bth_psn(n), 0);
}

/* ----------------------------------------------------- extended headers -- */

static void
test_reth(void **state)
{
	static const uint8_t gold[16] = {
		0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08,
		0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f, 0x10,
	};
	struct rnic_roce_reth h;

	(void)state;
	rnic_roce_reth_set_va(&h, 0x0102030405060708ull);
	rnic_roce_reth_set_rkey(&h, 0x090a0b0c);
	rnic_roce_reth_set_len(&h, 0x0d0e0f10);
	assert_memory_equal(&h, gold, 16);
	assert_true(rnic_roce_reth_va(&h) == 0x0102030405060708ull);
	assert_int_equal(rnic_roce_reth_rkey(&h), 0x090a0b0c);
	assert_int_equal(rnic_roce_reth_len(&h), 0x0d0e0f10);
}

/* P_Key rule of roce_input (IBA 10.9.3, rxe's pkey_match): partition bits
 * equal and non-zero, at least one full member. Before issue 19 rnic took
 * RC and UD packets whatever their P_Key. */
static void
test_pkey_match(void **state)
{
	static const struct { uint16_t pkt; bool ok; } t[] = {
		{ 0xffff, true },    /* the default, full member */
		{ 0x7fff, true },    /* the default partition, limited member */
		{ 0x8001, false },   /* another partition */
		{ 0x1234, false },
		{ 0x0000, false },   /* partition 0 is invalid */
		{ 0x8000, false },
	};
	(void)state;
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		assert_int_equal(rnic_roce_pkey_match(t[i].pkt, RNIC_ROCE_PKEY_DEFAULT),
				 t[i].ok);
	/* two limited members of one partition may not talk */
	assert_false(rnic_roce_pkey_match(0x7fff, 0x7fff));
	assert_true(rnic_roce_pkey_match(0x1234, 0x9234));
	assert_false(rnic_roce_pkey_match(0x1234, 0x1234));
}

static void
test_aeth(void **state)
{
	struct rnic_roce_aeth h;
	uint8_t b[4];
	/* syndrome bytes from IBTA table 44: type in bits 6..5 */
	static const struct { uint8_t syn; enum rnic_roce_aeth_type type;
			      unsigned int value; } t[] = {
		{ 0x0a, RNIC_ROCE_AETH_TYPE_ACK, 10 },      /* ACK, 10 credits */
		{ 0x1f, RNIC_ROCE_AETH_TYPE_ACK, 0x1f },    /* ACK, no credits */
		{ 0x32, RNIC_ROCE_AETH_TYPE_RNR_NAK, 0x12 },
		{ 0x60, RNIC_ROCE_AETH_TYPE_NAK, 0 },       /* PSN seq error */
		{ 0x61, RNIC_ROCE_AETH_TYPE_NAK, 1 },       /* invalid request */
		{ 0x62, RNIC_ROCE_AETH_TYPE_NAK, 2 },       /* remote access */
		{ 0x63, RNIC_ROCE_AETH_TYPE_NAK, 3 },       /* remote op error */
		{ 0x64, RNIC_ROCE_AETH_TYPE_NAK, 4 },       /* invalid RD request */
		/* reserved bit 7 set: no ACK, RNR NAK or NAK (rxe masks 0xe0;
		 * rnic read 0x9f as an ACK until issue 19) */
		{ 0x9f, (enum rnic_roce_aeth_type)0x80, 0x1f },
		{ 0xa0, (enum rnic_roce_aeth_type)0xa0, 0 },
		{ 0xe3, (enum rnic_roce_aeth_type)0xe0, 3 },
		{ 0x41, RNIC_ROCE_AETH_TYPE_RSVD, 1 },
	};

	(void)state;
	assert_int_equal(rnic_roce_syndrome_ack(10), 0x0a);
	assert_int_equal(rnic_roce_syndrome_ack(RNIC_ROCE_AETH_CREDITS_INVALID),
			 0x1f);
	assert_int_equal(rnic_roce_syndrome_rnr_nak(0x12), 0x32);
	assert_int_equal(rnic_roce_syndrome_rnr_nak(0x3f), 0x3f);
	assert_int_equal(rnic_roce_syndrome_nak(RNIC_ROCE_NAK_PSN_SEQ_ERR), 0x60);
	assert_int_equal(rnic_roce_syndrome_nak(RNIC_ROCE_NAK_INVALID_REQUEST),
			 0x61);
	assert_int_equal(rnic_roce_syndrome_nak(RNIC_ROCE_NAK_REMOTE_ACCESS_ERR),
			 0x62);
	assert_int_equal(rnic_roce_syndrome_nak(RNIC_ROCE_NAK_REMOTE_OP_ERR),
			 0x63);
	assert_int_equal(rnic_roce_syndrome_nak(RNIC_ROCE_NAK_INVALID_RD_REQ),
			 0x64);

	rnic_roce_aeth_set(&h, 0x61, 0xff123456);
	memcpy(b, &h, 4);
	assert_int_equal(b[0], 0x61);
	assert_int_equal(b[1], 0x12);
	assert_int_equal(b[2], 0x34);
	assert_int_equal(b[3], 0x56);
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		uint8_t raw[4] = { t[i].syn, 0xfe, 0xdc, 0xba };
		const struct rnic_roce_aeth *r = (const void *)raw;

		assert_int_equal(rnic_roce_aeth_syndrome(r), t[i].syn);
		assert_int_equal(rnic_roce_aeth_type(r), t[i].type);
		assert_int_equal(rnic_roce_aeth_value(r), t[i].value);
		assert_int_equal(rnic_roce_aeth_msn(r), 0xfedcba);
	}
}

static void
test_atomic_headers(void **state)
{
	static const uint8_t gold[28] = {
		0x00, 0x00, 0x7f, 0xff, 0x00, 0x00, 0x10, 0x08, /* VA */
		0xca, 0xfe, 0xf0, 0x0d,                         /* R_Key */
		0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18, /* swap/add */
		0x21, 0x22, 0x23, 0x24, 0x25, 0x26, 0x27, 0x28, /* compare */
	};
	static const uint8_t ack_gold[8] = {
		0x80, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01,
	};
	struct rnic_roce_atmeth h;
	struct rnic_roce_atmack a;

	(void)state;
	rnic_roce_atmeth_set(&h, 0x00007fff00001008ull, 0xcafef00d,
			     0x1112131415161718ull, 0x2122232425262728ull);
	assert_memory_equal(&h, gold, 28);
	assert_true(rnic_roce_atmeth_va(&h) == 0x00007fff00001008ull);
	assert_int_equal(rnic_roce_atmeth_rkey(&h), 0xcafef00d);
	assert_true(rnic_roce_atmeth_swap_add(&h) == 0x1112131415161718ull);
	assert_true(rnic_roce_atmeth_compare(&h) == 0x2122232425262728ull);

	rnic_roce_atmack_set_orig(&a, 0x8000000000000001ull);
	assert_memory_equal(&a, ack_gold, 8);
	assert_true(rnic_roce_atmack_orig(&a) == 0x8000000000000001ull);
}

static void
test_small_headers(void **state)
{
	static const uint8_t imm_gold[4] = { 0x11, 0x22, 0x33, 0x44 };
	static const uint8_t ieth_gold[4] = { 0x00, 0xab, 0xcd, 0x01 };
	static const uint8_t deth_gold[8] = {
		0x80, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01,
	};
	static const uint8_t deth_junk[8] = {
		0x11, 0x11, 0x11, 0x11, 0xff, 0x00, 0x00, 0xcd,
	};
	struct rnic_roce_immdt i;
	struct rnic_roce_ieth e;
	struct rnic_roce_deth d;

	(void)state;
	/* immediate data travels untouched, in the verbs' network order */
	rnic_roce_immdt_set_imm(&i, RTE_BE32(0x11223344));
	assert_memory_equal(&i, imm_gold, 4);
	assert_true(rnic_roce_immdt_imm(&i) == RTE_BE32(0x11223344));

	rnic_roce_ieth_set_rkey(&e, 0x00abcd01);
	assert_memory_equal(&e, ieth_gold, 4);
	assert_int_equal(rnic_roce_ieth_rkey(&e), 0x00abcd01);

	memset(&d, 0xff, sizeof(d));
	rnic_roce_deth_set_qkey(&d, 0x80010000);
	rnic_roce_deth_set_sqp(&d, 0xff000001);     /* resv8 is cleared */
	assert_memory_equal(&d, deth_gold, 8);
	assert_int_equal(rnic_roce_deth_qkey(&d), 0x80010000);
	assert_true(rnic_roce_deth_qkey(&d) & RNIC_ROCE_QKEY_CONTROLLED);
	assert_int_equal(rnic_roce_deth_sqp((const void *)deth_junk), 0xcd);
}

static void
test_grh_and_gid(void **state)
{
	static const uint8_t grh[40] = {
		0x60, 0x12, 0x34, 0x56, 0x00, 0x20, 0x1b, 0x40,
	};
	struct rnic_roce_grh_ipv4 g;
	struct rte_ipv4_hdr ip;
	uint8_t gid[16];
	static const uint8_t gid_gold[16] = {
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 192, 0, 2, 10,
	};
	rte_be32_t addr = 0;

	(void)state;
	assert_int_equal(rnic_roce_grh_version((const void *)grh), 6);
	assert_int_equal(rnic_roce_grh_tclass((const void *)grh), 0x01);
	assert_int_equal(rnic_roce_grh_flow_label((const void *)grh), 0x23456);

	memset(&g, 0xaa, sizeof(g));
	memset(&ip, 0, sizeof(ip));
	ip.version_ihl = 0x45;
	ip.time_to_live = 64;
	ip.next_proto_id = 17;
	ip.src_addr = RTE_BE32(0xc000020a);
	rnic_roce_grh_fill_ipv4(&g, &ip);
	for (int k = 0; k < 20; k++)
		assert_int_equal(((uint8_t *)&g)[k], 0);
	assert_memory_equal((uint8_t *)&g + 20, &ip, 20);

	rnic_roce_gid_from_ipv4(gid, RTE_BE32(0xc000020a));
	assert_memory_equal(gid, gid_gold, 16);
	assert_true(rnic_roce_gid_to_ipv4(gid, &addr));
	assert_true(addr == RTE_BE32(0xc000020a));
	gid[9] = 1;
	assert_false(rnic_roce_gid_to_ipv4(gid, &addr));
}

/* A UD receive's GRH over IPv6 is the IPv6 header itself (the GRH and
 * IPv6 share their layout: IBA 8.3.1); over IPv4 rxe's 20 zero bytes and
 * the IPv4 header, whatever follows the IPv4 header. */
static void
test_grh_fill_ipv6(void **state)
{
	/* 2001:db8::2 -> 2001:db8::1, traffic class 0x02 (ECT(0)), flow label
	 * 0x12345, UDP, hop limit 64, payload 36 bytes */
	static const uint8_t ip6[48] = {
		0x60, 0x21, 0x23, 0x45, 0x00, 0x24, 0x11, 0x40,
		0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2,
		0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1,
		0x12, 0xb7, 0x12, 0xb7, 0, 0x24, 0, 0,   /* UDP: not part of the GRH */
	};
	uint8_t g[RNIC_ROCE_GRH_LEN + 8];
	(void)state;
	memset(g, 0xaa, sizeof(g));
	rnic_roce_grh_fill(g, ip6);
	assert_memory_equal(g, ip6, RNIC_ROCE_GRH_LEN);
	for (size_t k = RNIC_ROCE_GRH_LEN; k < sizeof(g); k++)
		assert_int_equal(g[k], 0xaa);   /* 40 bytes exactly */
	const struct rnic_roce_grh *h = (const void *)g;
	assert_int_equal(rnic_roce_grh_version(h), 6);
	assert_int_equal(rnic_roce_grh_tclass(h), 0x02);
	assert_int_equal(rnic_roce_grh_flow_label(h), 0x12345);
	assert_memory_equal(h->sgid, ip6 + 8, 16);
	assert_memory_equal(h->dgid, ip6 + 24, 16);

	/* IPv4: the same helper lays it out as rxe does */
	uint8_t ip4[28] = { 0x45, 0, 0, 28, 0, 0, 0x40, 0, 64, 17, 0, 0,
			    192, 0, 2, 2, 192, 0, 2, 1, 0x12, 0xb7 };
	memset(g, 0xaa, sizeof(g));
	rnic_roce_grh_fill(g, ip4);
	for (int k = 0; k < 20; k++)
		assert_int_equal(g[k], 0);
	assert_memory_equal(g + 20, ip4, 20);
	assert_int_equal(g[RNIC_ROCE_GRH_LEN], 0xaa);
}

/* -------------------------------------------------------------- parsing -- */

#define UDP_PAYLOAD_OFF 28  /* every vector: 20-byte IPv4 + 8-byte UDP */

static const struct icrc_vector *
vec(const char *name)
{
	for (size_t i = 0; i < sizeof(icrc_vectors) / sizeof(icrc_vectors[0]); i++)
		if (strcmp(icrc_vectors[i].name, name) == 0)
			return &icrc_vectors[i];
	fail_msg("no vector %s", name);
	return NULL;
}

/* Parse a vector's UDP payload from a writable copy. */
static void
parse_vec(const char *name, uint8_t *buf, struct rnic_roce_pkt *p)
{
	const struct icrc_vector *v = vec(name);
	uint32_t len = v->len - UDP_PAYLOAD_OFF;

	memcpy(buf, v->pkt + UDP_PAYLOAD_OFF, len);
	assert_int_equal(rnic_roce_pkt_parse(p, buf, len, NULL), 0);
	assert_int_equal(p->opcode, v->opcode);
	assert_int_equal(p->pad, v->pad);
	assert_int_equal(p->paylen, len - rnic_roce_op(v->opcode)->length -
			 v->pad - RNIC_ROCE_ICRC_LEN);
	assert_int_equal(p->flags, rnic_roce_op(v->opcode)->flags);
	assert_ptr_equal(rnic_roce_pkt_bth(p), buf);
}

/* Every vector parses; headers it lacks come back NULL. */
static void
test_parse_all_vectors(void **state)
{
	static uint8_t buf[4200];

	(void)state;
	for (size_t i = 0; i < sizeof(icrc_vectors) / sizeof(icrc_vectors[0]); i++) {
		struct rnic_roce_pkt p;
		uint32_t f;

		parse_vec(icrc_vectors[i].name, buf, &p);
		f = p.flags;
		assert_int_equal(rnic_roce_pkt_reth(&p) != NULL,
				 (f & RNIC_ROCE_OPF_RETH) != 0);
		assert_int_equal(rnic_roce_pkt_aeth(&p) != NULL,
				 (f & RNIC_ROCE_OPF_AETH) != 0);
		assert_int_equal(rnic_roce_pkt_atmeth(&p) != NULL,
				 (f & RNIC_ROCE_OPF_ATMETH) != 0);
		assert_int_equal(rnic_roce_pkt_atmack(&p) != NULL,
				 (f & RNIC_ROCE_OPF_ATMACK) != 0);
		assert_int_equal(rnic_roce_pkt_immdt(&p) != NULL,
				 (f & RNIC_ROCE_OPF_IMMDT) != 0);
		assert_int_equal(rnic_roce_pkt_ieth(&p) != NULL,
				 (f & RNIC_ROCE_OPF_IETH) != 0);
		assert_int_equal(rnic_roce_pkt_deth(&p) != NULL,
				 (f & RNIC_ROCE_OPF_DETH) != 0);
	}
}

/* Field values as the generator script set them. */
static void
test_parse_fields(void **state)
{
	static uint8_t buf[4200];
	struct rnic_roce_pkt p;
	uint64_t va = 0;
	uint32_t rkey = 0;

	(void)state;
	parse_vec("rc_write_first_dscp46_udpcsum", buf, &p);
	assert_int_equal(rnic_roce_pkt_dqpn(&p), 0x654321);
	assert_int_equal(rnic_roce_pkt_psn(&p), 0x00abcd);
	assert_true(rnic_roce_reth_va(rnic_roce_pkt_reth(&p)) ==
		    0x00007f0012345678ull);
	assert_int_equal(rnic_roce_reth_rkey(rnic_roce_pkt_reth(&p)), 0x11223344);
	assert_int_equal(rnic_roce_reth_len(rnic_roce_pkt_reth(&p)), 8192);
	assert_int_equal(p.paylen, 256);
	assert_ptr_equal(rnic_roce_pkt_payload(&p), buf + 28);
	assert_true(rnic_roce_pkt_remote(&p, &va, &rkey));
	assert_true(va == 0x00007f0012345678ull);

	parse_vec("rc_write_only_imm_ce_fecn_becn", buf, &p);
	assert_true(rnic_roce_bth_fecn(rnic_roce_pkt_bth(&p)));
	assert_true(rnic_roce_bth_becn(rnic_roce_pkt_bth(&p)));
	assert_true(rnic_roce_pkt_ackreq(&p));
	assert_int_equal(rnic_roce_pkt_psn(&p), 0x800000);
	assert_true(rnic_roce_immdt_imm(rnic_roce_pkt_immdt(&p)) ==
		    RTE_BE32(0x01020304));
	assert_int_equal(rnic_roce_reth_rkey(rnic_roce_pkt_reth(&p)), 0xcafef00d);
	assert_int_equal(p.paylen, 1);
	assert_int_equal(p.pad, 3);

	parse_vec("rc_nak_psn_seq_err", buf, &p);
	assert_int_equal(rnic_roce_aeth_type(rnic_roce_pkt_aeth(&p)),
			 RNIC_ROCE_AETH_TYPE_NAK);
	assert_int_equal(rnic_roce_aeth_value(rnic_roce_pkt_aeth(&p)),
			 RNIC_ROCE_NAK_PSN_SEQ_ERR);
	assert_int_equal(rnic_roce_aeth_msn(rnic_roce_pkt_aeth(&p)), 7);
	assert_false(rnic_roce_pkt_remote(&p, &va, &rkey));

	parse_vec("rc_ack_credits", buf, &p);
	assert_int_equal(rnic_roce_aeth_type(rnic_roce_pkt_aeth(&p)),
			 RNIC_ROCE_AETH_TYPE_ACK);
	assert_int_equal(rnic_roce_aeth_value(rnic_roce_pkt_aeth(&p)), 10);
	assert_int_equal(rnic_roce_aeth_msn(rnic_roce_pkt_aeth(&p)), 0x123456);

	parse_vec("rc_atomic_ack", buf, &p);
	assert_int_equal(rnic_roce_aeth_msn(rnic_roce_pkt_aeth(&p)), 3);
	assert_true(rnic_roce_atmack_orig(rnic_roce_pkt_atmack(&p)) ==
		    0x0123456789abcdefull);

	parse_vec("rc_cmp_swap", buf, &p);
	assert_true(rnic_roce_atmeth_swap_add(rnic_roce_pkt_atmeth(&p)) ==
		    0x1111111111111111ull);
	assert_true(rnic_roce_atmeth_compare(rnic_roce_pkt_atmeth(&p)) ==
		    0x2222222222222222ull);
	assert_true(rnic_roce_pkt_remote(&p, &va, &rkey));
	assert_true(va == 0x2008);
	assert_int_equal(rkey, 0x55aa55aa);

	parse_vec("rc_send_only_inv_pad3", buf, &p);
	assert_int_equal(rnic_roce_ieth_rkey(rnic_roce_pkt_ieth(&p)), 0x00abcd01);
	assert_true(rnic_roce_pkt_se(&p));
	assert_int_equal(p.paylen, 5);

	parse_vec("ud_send_only_imm_pad2", buf, &p);
	assert_int_equal(rnic_roce_deth_qkey(rnic_roce_pkt_deth(&p)), 0x11111111);
	assert_int_equal(rnic_roce_deth_sqp(rnic_roce_pkt_deth(&p)), 0xcd);
	assert_true(rnic_roce_immdt_imm(rnic_roce_pkt_immdt(&p)) == RTE_BE32(7));
	assert_int_equal(p.paylen, 30);
	assert_ptr_equal(rnic_roce_pkt_payload(&p), buf + 24);

	parse_vec("rc_send_middle_pmtu4096_ttl255", buf, &p);
	assert_int_equal(rnic_roce_pkt_psn(&p), 0xffffff);
	assert_int_equal(p.paylen, 4096);
}

/* Parse a zeroed packet with BTH opcode @opcode and flag byte @flags,
 * @body bytes after the opcode's headers, and an ICRC; @len_adj bytes are
 * cut off the end. */
static int
try_parse(uint8_t opcode, uint8_t flags, uint32_t body, uint32_t len_adj,
	  enum rnic_roce_drop *cause)
{
	static uint8_t buf[256];
	struct rnic_roce_pkt p;
	uint32_t len = rnic_roce_op(opcode)->length + body + RNIC_ROCE_ICRC_LEN;

	memset(buf, 0, sizeof(buf));
	buf[0] = opcode;
	buf[1] = flags;
	return rnic_roce_pkt_parse(&p, buf, len - len_adj, cause);
}

static void
test_parse_rejects(void **state)
{
	enum rnic_roce_drop c = RNIC_ROCE_DROP_MAX;
	static uint8_t tiny[16];
	struct rnic_roce_pkt p;

	(void)state;
	assert_int_equal(rnic_roce_pkt_parse(&p, tiny, 15, &c), -EINVAL);
	assert_int_equal(c, RNIC_ROCE_DROP_SHORT);
	/* unknown opcodes: reserved RC value, UC, RD, unknown high values */
	assert_int_equal(try_parse(0x15, 0, 12, 0, &c), -EPROTONOSUPPORT);
	assert_int_equal(c, RNIC_ROCE_DROP_OPCODE);
	assert_int_equal(try_parse(0x24, 0, 12, 0, &c), -EPROTONOSUPPORT);
	assert_int_equal(try_parse(0x44, 0, 12, 0, &c), -EPROTONOSUPPORT);
	assert_int_equal(try_parse(0xff, 0, 12, 0, &c), -EPROTONOSUPPORT);
	/* transport header version 1 */
	assert_int_equal(try_parse(0x04, 0x01, 0, 0, &c), -EPROTONOSUPPORT);
	assert_int_equal(c, RNIC_ROCE_DROP_TVER);
	/* truncated extended headers: READ_REQUEST missing its RETH's tail */
	assert_int_equal(try_parse(0x0c, 0, 0, 4, &c), -EINVAL);
	assert_int_equal(c, RNIC_ROCE_DROP_HDR_LEN);
	assert_int_equal(try_parse(0x13, 0, 0, 1, &c), -EINVAL);
	assert_int_equal(c, RNIC_ROCE_DROP_HDR_LEN);
	/* payload where the opcode carries none */
	assert_int_equal(try_parse(0x0c, 0, 4, 0, &c), -EINVAL);
	assert_int_equal(c, RNIC_ROCE_DROP_PAYLOAD);
	assert_int_equal(try_parse(0x11, 0, 8, 0, &c), -EINVAL);
	assert_int_equal(c, RNIC_ROCE_DROP_PAYLOAD);
	assert_int_equal(try_parse(0x11, 0x10, 0, 0, &c), -EINVAL); /* pad 1 */
	assert_int_equal(c, RNIC_ROCE_DROP_PAYLOAD);
	/* pad larger than the payload; payload not 4-byte aligned */
	assert_int_equal(try_parse(0x04, 0x30, 0, 0, &c), -EINVAL);
	assert_int_equal(c, RNIC_ROCE_DROP_PAD);
	assert_int_equal(try_parse(0x04, 0x00, 5, 0, &c), -EINVAL);
	assert_int_equal(c, RNIC_ROCE_DROP_PAD);
	/* and the well-formed neighbours pass */
	assert_int_equal(try_parse(0x04, 0x30, 4, 0, NULL), 0);
	assert_int_equal(try_parse(0x04, 0x00, 0, 0, NULL), 0);
	assert_int_equal(try_parse(0x0c, 0x00, 0, 0, NULL), 0);
	assert_int_equal(try_parse(0x81, 0x00, 0, 0, NULL), 0);
	assert_int_equal(try_parse(0x81, 0x00, 4, 0, &c), -EINVAL);
}

static void
test_drop_names(void **state)
{
	(void)state;
	for (int i = 0; i < RNIC_ROCE_DROP_MAX; i++) {
		const char *n = rnic_roce_drop_name((enum rnic_roce_drop)i);

		assert_non_null(n);
		assert_true(strncmp(n, "roce_", 5) == 0);
		for (int j = 0; j < i; j++)
			assert_string_not_equal(n,
				rnic_roce_drop_name((enum rnic_roce_drop)j));
	}
	assert_string_equal(rnic_roce_drop_name(RNIC_ROCE_DROP_ICRC), "roce_icrc");
	assert_string_equal(rnic_roce_drop_name(RNIC_ROCE_DROP_MAX),
			    "roce_unknown");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bth_build),
		cmocka_unit_test(test_bth_parse),
		cmocka_unit_test(test_reth),
		cmocka_unit_test(test_pkey_match),
		cmocka_unit_test(test_aeth),
		cmocka_unit_test(test_atomic_headers),
		cmocka_unit_test(test_small_headers),
		cmocka_unit_test(test_grh_and_gid),
		cmocka_unit_test(test_grh_fill_ipv6),
		cmocka_unit_test(test_parse_all_vectors),
		cmocka_unit_test(test_parse_fields),
		cmocka_unit_test(test_parse_rejects),
		cmocka_unit_test(test_drop_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
