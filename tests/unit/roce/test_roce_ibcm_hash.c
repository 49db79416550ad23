/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The IB CM's connection tables (lib/roce/ibcm_hash.c): among 100,000
 * connections (a third of them "in TIMEWAIT": still in the tables, as the
 * CM keeps them), lookup by local comm ID and by a REQ's identity finds
 * the one connection that matches, IPv4 and IPv6 peers alike; removed
 * ones are not found; colliding keys (same hash) are told apart by the
 * caller's key compare along the chain; the table grows as it fills.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <rte_common.h>

#include "roce/ibcm_hash.h"

enum fake_state { F_ESTABLISHED, F_TIMEWAIT };

struct fake_conn {
	struct ibcm_hnode lid_node, req_node;
	uint32_t lid, rid;
	uint64_t guid;
	struct rnic_addr peer;
	enum fake_state state;
};

#define N_CONNS 100000u

static struct fake_conn *by_lid(const struct ibcm_hash *t, uint32_t lid)
{
	uint64_t h = ibcm_hash_lid(lid);
	for (struct ibcm_hnode *n = ibcm_hash_first(t, h); n; n = ibcm_hash_next(n)) {
		struct fake_conn *c = container_of(n, struct fake_conn, lid_node);
		if (c->lid == lid)
			return c;
	}
	return NULL;
}

static struct fake_conn *by_req(const struct ibcm_hash *t, const struct rnic_addr *peer,
				uint32_t rid, uint64_t guid)
{
	uint64_t h = ibcm_hash_req(peer, rid, guid);
	for (struct ibcm_hnode *n = ibcm_hash_first(t, h); n; n = ibcm_hash_next(n)) {
		struct fake_conn *c = container_of(n, struct fake_conn, req_node);
		if (c->rid == rid && c->guid == guid && c->peer.family == peer->family &&
		    (peer->family == RNIC_AF_INET ? c->peer.v4 == peer->v4
						  : memcmp(c->peer.v6, peer->v6, 16) == 0))
			return c;
	}
	return NULL;
}

/* Connection i: lids sequential from a random-looking start (as the CM's),
 * peers from a few addresses of both families whose comm IDs repeat
 * across peers (each peer numbers its own). */
static void fill(struct fake_conn *c, unsigned i)
{
	memset(c, 0, sizeof(*c));
	c->lid = 0xfffff000u + i;   /* wraps through 0 */
	c->rid = 1000 + i / 8;
	c->guid = 0x0200c0fffe000000ull + (i % 8);
	if (i % 2) {
		c->peer.family = RNIC_AF_INET;
		c->peer.v4 = 0xc0000200u + (i % 8);
	} else {
		c->peer.family = RNIC_AF_INET6;
		c->peer.v6[0] = 0xfd;
		c->peer.v6[15] = (uint8_t)(i % 8);
	}
	c->state = i % 3 == 0 ? F_TIMEWAIT : F_ESTABLISHED;
}

static void test_many(void **state)
{
	(void)state;
	struct ibcm_hash lids, reqs;
	struct fake_conn *cs = calloc(N_CONNS, sizeof(*cs));
	assert_non_null(cs);
	assert_int_equal(ibcm_hash_init(&lids, 16), 0);
	assert_int_equal(ibcm_hash_init(&reqs, 16), 0);
	for (unsigned i = 0; i < N_CONNS; i++) {
		fill(&cs[i], i);
		ibcm_hash_add(&lids, &cs[i].lid_node, ibcm_hash_lid(cs[i].lid));
		ibcm_hash_add(&reqs, &cs[i].req_node,
			      ibcm_hash_req(&cs[i].peer, cs[i].rid, cs[i].guid));
	}
	assert_int_equal(lids.n, N_CONNS);
	assert_true(lids.mask + 1 >= N_CONNS);   /* grown from 16 buckets */
	for (unsigned i = 0; i < N_CONNS; i++) {
		assert_ptr_equal(by_lid(&lids, cs[i].lid), &cs[i]);
		assert_ptr_equal(by_req(&reqs, &cs[i].peer, cs[i].rid, cs[i].guid), &cs[i]);
	}
	/* a REQ from a peer with a known comm ID but another GUID, or the same
	 * IDs from an address of the other family: no connection */
	struct rnic_addr v4 = { .family = RNIC_AF_INET, .v4 = 0xc0000201u };
	assert_ptr_equal(by_req(&reqs, &v4, cs[1].rid, cs[1].guid), &cs[1]);
	assert_null(by_req(&reqs, &v4, cs[1].rid, cs[1].guid + 1));
	struct rnic_addr v6 = { .family = RNIC_AF_INET6 };
	v6.v6[15] = 1;
	assert_null(by_req(&reqs, &v6, cs[1].rid, cs[1].guid));
	assert_null(by_lid(&lids, 0xfffff000u + N_CONNS));
	/* the TIMEWAIT ones end (the CM drops them at CM_DONE): gone from both
	 * tables, the others still found */
	for (unsigned i = 0; i < N_CONNS; i++)
		if (cs[i].state == F_TIMEWAIT) {
			ibcm_hash_del(&lids, &cs[i].lid_node);
			ibcm_hash_del(&reqs, &cs[i].req_node);
		}
	for (unsigned i = 0; i < N_CONNS; i++) {
		struct fake_conn *want = cs[i].state == F_TIMEWAIT ? NULL : &cs[i];
		assert_ptr_equal(by_lid(&lids, cs[i].lid), want);
		assert_ptr_equal(by_req(&reqs, &cs[i].peer, cs[i].rid, cs[i].guid), want);
	}
	assert_int_equal(lids.n, N_CONNS - (N_CONNS + 2) / 3);
	ibcm_hash_fini(&lids);
	ibcm_hash_fini(&reqs);
	free(cs);
}

/* Two nodes under one hash (a collision, forced): the chain holds both,
 * the key compare picks, and removing one leaves the other. */
static void test_collision(void **state)
{
	(void)state;
	struct ibcm_hash t;
	struct fake_conn x = { .lid = 1 }, y = { .lid = 2 };
	assert_int_equal(ibcm_hash_init(&t, 16), 0);
	ibcm_hash_add(&t, &x.lid_node, 77);
	ibcm_hash_add(&t, &y.lid_node, 77);
	struct ibcm_hnode *n = ibcm_hash_first(&t, 77);
	assert_non_null(n);
	struct ibcm_hnode *m = ibcm_hash_next(n);
	assert_non_null(m);
	assert_null(ibcm_hash_next(m));
	assert_true((n == &x.lid_node && m == &y.lid_node) ||
		    (n == &y.lid_node && m == &x.lid_node));
	assert_null(ibcm_hash_first(&t, 77 + 16));   /* same bucket, other hash */
	ibcm_hash_del(&t, &y.lid_node);
	assert_ptr_equal(ibcm_hash_first(&t, 77), &x.lid_node);
	assert_null(ibcm_hash_next(&x.lid_node));
	ibcm_hash_del(&t, &x.lid_node);
	assert_null(ibcm_hash_first(&t, 77));
	assert_int_equal(t.n, 0);
	ibcm_hash_fini(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_many),
		cmocka_unit_test(test_collision),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
