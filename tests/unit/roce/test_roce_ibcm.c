/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * IB CM MADs (lib/roce/ibcm_wire.c): encode and decode of every message
 * against reference bytes (vectors/ibcm_vectors.h, packed from the IBTA
 * tables by scripts/gen_ibcm_vectors.py and read back field by field by
 * Wireshark's dissector), every refusal cause, the RDMA IP CM service ID and
 * librdmacm's CMA header.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "roce/ibcm_wire.h"
#include "vectors/ibcm_vectors.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* Every scalar field of struct rnic_ibcm_msg. */
#define MSG_SCALARS(X)                                                        \
	X(attr) X(tid) X(local_id) X(remote_id) X(service_id) X(ca_guid)      \
	X(qkey) X(qpn) X(psn) X(rres) X(idepth) X(remote_cm_timeout)          \
	X(local_cm_timeout) X(ts_type) X(e2e_flow) X(retry_cnt) X(rnr_retry)  \
	X(path_mtu) X(max_cm_retries) X(srq) X(pkey) X(local_lid)             \
	X(remote_lid) X(flow_label) X(rate) X(tclass) X(hop_limit) X(sl)       \
	X(ack_timeout) X(subnet_local) X(target_ack_delay) X(failover) X(msg) \
	X(reason) X(ari_len) X(service_timeout)

static void expect_msg(const struct rnic_ibcm_msg *got, const struct rnic_ibcm_msg *want,
		       const char *name)
{
#define CMP(f) if ((uint64_t)got->f != (uint64_t)want->f) \
	fail_msg("%s: field " #f " = %#llx, expected %#llx", name, \
		 (unsigned long long)got->f, (unsigned long long)want->f);
	MSG_SCALARS(CMP)
#undef CMP
	assert_memory_equal(got->local_gid, want->local_gid, 16);
	assert_memory_equal(got->remote_gid, want->remote_gid, 16);
	assert_memory_equal(got->ari, want->ari, RNIC_IBCM_ARI_MAX);
	/* decoded private data is the message's whole room */
	assert_int_equal(got->pdata_len, rnic_ibcm_pdata_room(want->attr));
	assert_memory_equal(got->pdata, want->pdata, want->pdata_len);
	for (unsigned i = want->pdata_len; i < got->pdata_len; i++)
		assert_int_equal(got->pdata[i], 0);
}

static void test_encode_vectors(void **state)
{
	(void)state;
	for (size_t i = 0; i < N(ibcm_vectors); i++) {
		uint8_t mad[RNIC_MAD_LEN];
		memset(mad, 0xa5, sizeof(mad));
		assert_int_equal(rnic_ibcm_encode(&ibcm_vectors[i].msg, mad), 0);
		for (unsigned k = 0; k < RNIC_MAD_LEN; k++)
			if (mad[k] != ibcm_vectors[i].mad[k])
				fail_msg("%s: byte %u = %#04x, expected %#04x", ibcm_vectors[i].name,
					 k, mad[k], ibcm_vectors[i].mad[k]);
	}
}

static void test_decode_vectors(void **state)
{
	(void)state;
	for (size_t i = 0; i < N(ibcm_vectors); i++) {
		struct rnic_ibcm_msg m;
		enum rnic_ibcm_bad why = RNIC_IBCM_BAD_MAX;
		assert_int_equal(rnic_ibcm_decode(&m, ibcm_vectors[i].mad, RNIC_MAD_LEN, &why), 0);
		assert_int_equal(why, RNIC_IBCM_OK);
		expect_msg(&m, &ibcm_vectors[i].msg, ibcm_vectors[i].name);
		/* and back: the decoded message (full-room pdata) encodes the same bytes */
		uint8_t mad[RNIC_MAD_LEN];
		assert_int_equal(rnic_ibcm_encode(&m, mad), 0);
		assert_memory_equal(mad, ibcm_vectors[i].mad, RNIC_MAD_LEN);
	}
	assert_string_equal(rnic_ibcm_attr_str(RNIC_IBCM_DREQ), "DREQ");
	assert_string_equal(rnic_ibcm_attr_str(0x0019), "?");
}

/* The private data room of each message, as IBTA tables 106-113 give it. */
static void test_pdata_rooms(void **state)
{
	static const struct { uint16_t attr, room; } t[] = {
		{ RNIC_IBCM_REQ, 92 }, { RNIC_IBCM_MRA, 222 }, { RNIC_IBCM_REJ, 148 },
		{ RNIC_IBCM_REP, 196 }, { RNIC_IBCM_RTU, 224 }, { RNIC_IBCM_DREQ, 220 },
		{ RNIC_IBCM_DREP, 224 }, { 0x0019, 0 },
	};
	(void)state;
	for (size_t i = 0; i < N(t); i++) {
		assert_int_equal(rnic_ibcm_pdata_room(t[i].attr), t[i].room);
		if (t[i].room == 0)
			continue;
		struct rnic_ibcm_msg m = { .attr = t[i].attr, .pdata_len = t[i].room };
		uint8_t mad[RNIC_MAD_LEN];
		memset(m.pdata, 0x5a, sizeof(m.pdata));
		assert_int_equal(rnic_ibcm_encode(&m, mad), 0);
		/* the room ends the MAD: its last byte is private data */
		assert_int_equal(mad[RNIC_MAD_LEN - 1], 0x5a);
		assert_int_equal(mad[RNIC_MAD_LEN - t[i].room - 1] == 0x5a, false);
		m.pdata_len++;
		assert_int_equal(rnic_ibcm_encode(&m, mad), -EINVAL);
	}
	struct rnic_ibcm_msg m = { .attr = 0x0019 };
	uint8_t mad[RNIC_MAD_LEN];
	assert_int_equal(rnic_ibcm_encode(&m, mad), -EINVAL);
}

/* Each refusal of a MAD without connection state, with its cause. */
static void test_decode_refusals(void **state)
{
	static const struct {
		unsigned off;            /* byte changed in the RTU vector */
		uint8_t val;
		int rc;
		enum rnic_ibcm_bad why;
	} t[] = {
		{ 0, 2, -EBADMSG, RNIC_IBCM_BAD_cm_base_version },
		{ 1, 0x04, -EBADMSG, RNIC_IBCM_BAD_cm_class },
		{ 2, 1, -EBADMSG, RNIC_IBCM_BAD_cm_class_version },
		{ 3, 0x83, -EBADMSG, RNIC_IBCM_BAD_cm_method },      /* a response */
		{ 3, 0x01, -EBADMSG, RNIC_IBCM_BAD_cm_method },      /* Get */
		{ 17, 0x19, -EOPNOTSUPP, RNIC_IBCM_BAD_cm_attr },    /* LAP */
		{ 17, 0x17, -EOPNOTSUPP, RNIC_IBCM_BAD_cm_attr },    /* SIDR_REQ */
		{ 17, 0x01, -EOPNOTSUPP, RNIC_IBCM_BAD_cm_attr },    /* ClassPortInfo */
		{ 16, 0x80, -EOPNOTSUPP, RNIC_IBCM_BAD_cm_attr },
	};
	(void)state;
	const struct ibcm_vector *rtu = NULL;
	for (size_t i = 0; i < N(ibcm_vectors); i++)
		if (ibcm_vectors[i].msg.attr == RNIC_IBCM_RTU)
			rtu = &ibcm_vectors[i];
	assert_non_null(rtu);
	for (size_t i = 0; i < N(t); i++) {
		uint8_t mad[RNIC_MAD_LEN];
		struct rnic_ibcm_msg m;
		enum rnic_ibcm_bad why;
		memcpy(mad, rtu->mad, sizeof(mad));
		mad[t[i].off] = t[i].val;
		assert_int_equal(rnic_ibcm_decode(&m, mad, sizeof(mad), &why), t[i].rc);
		assert_int_equal(why, t[i].why);
	}
	/* lengths other than 256 */
	struct rnic_ibcm_msg m;
	enum rnic_ibcm_bad why;
	assert_int_equal(rnic_ibcm_decode(&m, rtu->mad, 255, &why), -EBADMSG);
	assert_int_equal(why, RNIC_IBCM_BAD_cm_mad_len);
	assert_int_equal(rnic_ibcm_decode(&m, rtu->mad, 0, &why), -EBADMSG);
	assert_int_equal(rnic_ibcm_decode(&m, NULL, 256, NULL), -EBADMSG);
	assert_string_equal(rnic_ibcm_bad_str(RNIC_IBCM_BAD_cm_class), "cm_class");
	/* a reserved "message" code in REJ and MRA */
	for (size_t i = 0; i < N(ibcm_vectors); i++) {
		uint16_t a = ibcm_vectors[i].msg.attr;
		if (a != RNIC_IBCM_REJ && a != RNIC_IBCM_MRA)
			continue;
		uint8_t mad[RNIC_MAD_LEN];
		memcpy(mad, ibcm_vectors[i].mad, sizeof(mad));
		mad[RNIC_MAD_HDR_LEN + 8] |= 0xc0;   /* message 3 */
		assert_int_equal(rnic_ibcm_decode(&m, mad, sizeof(mad), &why), -EBADMSG);
		assert_int_equal(why, RNIC_IBCM_BAD_cm_field);
	}
}

/* Random bodies behind a valid header decode without reading or writing
 * outside the MAD (ASan/UBSan builds check), for every attribute. */
static void test_decode_random(void **state)
{
	(void)state;
	uint64_t x = 0x9e3779b97f4a7c15ull;
	for (unsigned it = 0; it < 20000; it++) {
		uint8_t mad[RNIC_MAD_LEN];
		for (unsigned k = 0; k < sizeof(mad); k++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			mad[k] = (uint8_t)x;
		}
		mad[0] = 1;
		mad[1] = RNIC_MAD_CLASS_CM;
		mad[2] = RNIC_MAD_CM_VERSION;
		mad[3] = RNIC_MAD_METHOD_SEND;
		mad[16] = 0;
		mad[17] = (uint8_t)(0x10 + it % 7);
		struct rnic_ibcm_msg m;
		enum rnic_ibcm_bad why;
		int rc = rnic_ibcm_decode(&m, mad, sizeof(mad), &why);
		assert_true(rc == 0 || (rc == -EBADMSG && why == RNIC_IBCM_BAD_cm_field));
		if (rc == 0)
			assert_true(m.pdata_len <= RNIC_IBCM_PDATA_MAX && m.ari_len <= 72);
	}
}

static void test_service_id(void **state)
{
	uint16_t port = 0;
	(void)state;
	assert_true(rnic_ibcm_service_id(7174) == 0x0000000001061c06ull);
	assert_true(rnic_ibcm_service_id(0) == 0x0000000001060000ull);
	assert_true(rnic_ibcm_service_port(0x000000000106ffffull, &port));
	assert_int_equal(port, 0xffff);
	/* other port spaces (RDMA_PS_IB 0x013f, UDP 0x0111) and non-IP IDs */
	assert_false(rnic_ibcm_service_port(0x00000000013f1c06ull, &port));
	assert_false(rnic_ibcm_service_port(0x0000000001111c06ull, &port));
	assert_false(rnic_ibcm_service_port(0x1000000001061c06ull, &port));
}

static void test_cma_hdr(void **state)
{
	/* librdmacm's header for 192.0.2.10:49443 -> 192.0.2.2, byte by byte */
	static const uint8_t want[RNIC_CMA_HDR_LEN] = {
		0x00, 0x40, 0xc1, 0x23,
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 192, 0, 2, 10,
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 192, 0, 2, 2,
	};
	struct rnic_cma_hdr h;
	struct rnic_addr s = { .family = RNIC_AF_INET, .v4 = 0xc000020a };
	struct rnic_addr d = { .family = RNIC_AF_INET, .v4 = 0xc0000202 };
	struct rnic_addr gs, gd;
	uint16_t p;
	(void)state;
	rnic_cma_hdr_set(&h, &s, &d, 0xc123);
	assert_memory_equal(&h, want, sizeof(want));
	assert_int_equal(rnic_cma_hdr_get(&h, &gs, &gd, &p), 0);
	assert_int_equal(gs.family, RNIC_AF_INET);
	assert_int_equal(gs.v4, 0xc000020a);
	assert_int_equal(gd.v4, 0xc0000202);
	assert_int_equal(p, 0xc123);
	/* the REQ vector carries the same header in front of its private data */
	assert_memory_equal(ibcm_vectors[0].msg.pdata, want, sizeof(want));
	h.ip_version = 0x50;
	assert_int_equal(rnic_cma_hdr_get(&h, &gs, &gd, &p), -EAFNOSUPPORT);
	h.ip_version = 0x40;
	h.version = 1;
	assert_int_equal(rnic_cma_hdr_get(&h, &gs, &gd, &p), -EPROTONOSUPPORT);
	assert_int_equal(RNIC_IBCM_REQ_USER_PDATA, 56);
}

/* IPv6: IP version nibble 6, the two addresses whole (Linux cma.c's
 * struct cma_hdr: a union of in6_addr and the padded IPv4 address). */
static void test_cma_hdr_ipv6(void **state)
{
	/* [2001:db8::10]:49443 -> [2001:db8::2] */
	static const uint8_t want[RNIC_CMA_HDR_LEN] = {
		0x00, 0x60, 0xc1, 0x23,
		0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x10,
		0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x02,
	};
	struct rnic_addr s = { .family = RNIC_AF_INET6 }, d = { .family = RNIC_AF_INET6 };
	memcpy(s.v6, want + 4, 16);
	memcpy(d.v6, want + 20, 16);
	struct rnic_cma_hdr h;
	struct rnic_addr gs, gd;
	uint16_t p;
	(void)state;
	rnic_cma_hdr_set(&h, &s, &d, 0xc123);
	assert_memory_equal(&h, want, sizeof(want));
	assert_int_equal(rnic_cma_hdr_get(&h, &gs, &gd, &p), 0);
	assert_int_equal(gs.family, RNIC_AF_INET6);
	assert_int_equal(gd.family, RNIC_AF_INET6);
	assert_memory_equal(gs.v6, s.v6, 16);
	assert_memory_equal(gd.v6, d.v6, 16);
	assert_int_equal(p, 0xc123);
	/* the low nibble is reserved: ignored as Linux's cma_get_ip_ver() does */
	h.ip_version = 0x6f;
	assert_int_equal(rnic_cma_hdr_get(&h, &gs, &gd, &p), 0);
	assert_int_equal(gs.family, RNIC_AF_INET6);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_encode_vectors),
		cmocka_unit_test(test_decode_vectors),
		cmocka_unit_test(test_pdata_rooms),
		cmocka_unit_test(test_decode_refusals),
		cmocka_unit_test(test_decode_random),
		cmocka_unit_test(test_cma_hdr_ipv6),
		cmocka_unit_test(test_service_id),
		cmocka_unit_test(test_cma_hdr),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
