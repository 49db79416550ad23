/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A port's GID table (lib/rdma/gid.c) on hand-built ports: the order Linux
 * gives rxe (0 fe80:: from the MAC, 1 the IPv4-mapped address when there
 * is IPv4, then the global IPv6 addresses), the lookup back from an
 * address, and the GID <-> address mapping of both families.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "port/port.h"
#include "rdma/gid.h"

static const uint8_t mac[6] = { 0x02, 0x00, 0xc0, 0x00, 0x02, 0x0e };
static const uint8_t ll[16] = { 0xfe, 0x80, 0, 0, 0, 0, 0, 0,
				0x00, 0x00, 0xc0, 0xff, 0xfe, 0x00, 0x02, 0x0e };
static const uint8_t g1[16] = { 0x20, 0x01, 0x0d, 0xb8, [15] = 0x10 };
static const uint8_t g2[16] = { 0xfd, 0x00, [15] = 0x10 };

/* A port with @p ip (0: none) and @p n global IPv6 addresses (g1, g2). */
static void port_with(struct rnic_port *p, uint32_t ip, unsigned n)
{
	memset(p, 0, sizeof(*p));
	memcpy(p->mac.addr_bytes, mac, 6);
	p->ip = ip;
	if (n > 0) {   /* as nd.c fills it: the link-local first */
		memcpy(p->ip6[0], ll, 16);
		memcpy(p->ip6[1], g1, 16);
		if (n > 1)
			memcpy(p->ip6[2], g2, 16);
		p->n_ip6 = 1 + n;
	}
}

static void dual_stack(void **state)
{
	static struct rnic_port p;
	uint8_t g[16];
	static const uint8_t v4[16] = { [10] = 0xff, [11] = 0xff, 192, 0, 2, 10 };
	(void)state;
	port_with(&p, 0xc000020a, 2);
	assert_int_equal(rnic_gid_count(&p), 4);
	assert_int_equal(rnic_gid_get(&p, 0, g), 0);
	assert_memory_equal(g, ll, 16);
	assert_int_equal(rnic_gid_get(&p, 1, g), 0);
	assert_memory_equal(g, v4, 16);
	assert_int_equal(rnic_gid_get(&p, 2, g), 0);
	assert_memory_equal(g, g1, 16);
	assert_int_equal(rnic_gid_get(&p, 3, g), 0);
	assert_memory_equal(g, g2, 16);
	assert_int_equal(rnic_gid_get(&p, 4, g), -EINVAL);
	assert_int_equal(rnic_gid_get(&p, -1, g), -EINVAL);
	struct rnic_addr a = rnic_addr_v6(g2);
	assert_int_equal(rnic_gid_find(&p, &a), 3);
	a = rnic_addr_v4(0xc000020a);
	assert_int_equal(rnic_gid_find(&p, &a), 1);
	a = rnic_addr_v4(0xc000020b);
	assert_int_equal(rnic_gid_find(&p, &a), -1);
}

static void single_family(void **state)
{
	static struct rnic_port p;
	uint8_t g[16];
	(void)state;
	/* IPv6 only: the first global follows the link-local GID, as on Linux */
	port_with(&p, 0, 1);
	assert_int_equal(rnic_gid_count(&p), 2);
	assert_int_equal(rnic_gid_get(&p, 1, g), 0);
	assert_memory_equal(g, g1, 16);
	/* IPv4 only: fe80:: (from the MAC, though the port runs no IPv6) and
	 * the IPv4-mapped address, the two entries rnic always had */
	port_with(&p, 0xc000020a, 0);
	assert_int_equal(rnic_gid_count(&p), 2);
	assert_int_equal(rnic_gid_get(&p, 0, g), 0);
	assert_memory_equal(g, ll, 16);
	assert_int_equal(rnic_gid_get(&p, 1, g), 0);
	assert_int_equal(g[10], 0xff);
	assert_int_equal(g[15], 10);
}

static void gid_addr_mapping(void **state)
{
	uint8_t g[16];
	(void)state;
	struct rnic_addr a = rnic_addr_v4(0xc0000202), b;
	rnic_addr_gid(&a, g);
	b = rnic_gid_addr(g);
	assert_true(rnic_addr_eq(&a, &b));
	a = rnic_addr_v6(g1);
	rnic_addr_gid(&a, g);
	assert_memory_equal(g, g1, 16);
	b = rnic_gid_addr(g);
	assert_int_equal(b.family, RNIC_AF_INET6);
	assert_true(rnic_addr_eq(&a, &b));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(dual_stack),
		cmocka_unit_test(single_family),
		cmocka_unit_test(gid_addr_mapping),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
