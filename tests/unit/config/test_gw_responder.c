/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rdma-gateway's [responder.KIND] sections (apps/rdma-gateway/responder.c):
 * the defaults of each kind, the keys each takes, every error text exactly,
 * and the listen-port check against the other responders and the targets.
 * No EAL: rte_cfgfile works without it.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "responder.h"
#include "target.h"
#include "tmp_ini.h"

/* Load @p text into @p r. @return gw_responders_load()'s result. */
static int load(const char *text, struct gw_responder r[GW_RESP_KINDS], char *err, size_t len)
{
	memset(r, 0, sizeof(*r) * GW_RESP_KINDS);
	err[0] = '\0';
	return gw_responders_load(tmp_ini_write(text), r, err, len);
}

static void defaults(void **state)
{
	struct gw_responder r[GW_RESP_KINDS];
	char err[256];
	(void)state;

	assert_int_equal(load("[responder.perf]\n[responder.ping]\n[responder.pingpong]\n",
			      r, err, sizeof(err)), 0);
	assert_true(r[GW_RESP_PERF].on && r[GW_RESP_PING].on && r[GW_RESP_PINGPONG].on);
	assert_int_equal(r[GW_RESP_PERF].listen, 18520);
	assert_true(r[GW_RESP_PERF].iwarp && r[GW_RESP_PERF].roce);
	assert_int_equal(r[GW_RESP_PING].listen, 7174);
	assert_true(r[GW_RESP_PING].iwarp && r[GW_RESP_PING].roce);
	assert_int_equal(r[GW_RESP_PING].size, 65536);
	assert_int_equal(r[GW_RESP_PINGPONG].listen, 18515);
	assert_true(!r[GW_RESP_PINGPONG].iwarp && r[GW_RESP_PINGPONG].roce);
	assert_int_equal(r[GW_RESP_PINGPONG].size, 4096);
	assert_int_equal(r[GW_RESP_PINGPONG].iters, 1000);
	assert_int_equal(r[GW_RESP_PERF].idle_s, 30);
	/* nothing configured, nothing on */
	assert_int_equal(load("[gateway]\nstatus_ms = 0\n", r, err, sizeof(err)), 0);
	assert_false(r[GW_RESP_PERF].on || r[GW_RESP_PING].on || r[GW_RESP_PINGPONG].on);
}

static void keys(void **state)
{
	struct gw_responder r[GW_RESP_KINDS];
	char err[256];
	(void)state;

	assert_int_equal(load("[responder.perf]\nlisten = 9000\ntransport = roce\nidle_s = 5\n"
			      "[responder.ping]\nsize = 1M\ntransport = iwarp\n"
			      "[responder.pingpong]\nsize = 64\niters = 20\nlisten = 9001\n",
			      r, err, sizeof(err)), 0);
	assert_int_equal(r[GW_RESP_PERF].listen, 9000);
	assert_int_equal(r[GW_RESP_PERF].idle_s, 5);
	assert_true(!r[GW_RESP_PERF].iwarp && r[GW_RESP_PERF].roce);
	assert_int_equal(r[GW_RESP_PING].size, 1u << 20);
	assert_int_equal(r[GW_RESP_PINGPONG].size, 64);
	assert_int_equal(r[GW_RESP_PINGPONG].iters, 20);
	assert_int_equal(r[GW_RESP_PINGPONG].listen, 9001);
	assert_int_equal(load("[responder.perf]\ntransport = roce, iwarp\n", r, err,
			      sizeof(err)), 0);
	assert_true(r[GW_RESP_PERF].iwarp && r[GW_RESP_PERF].roce);
}

static void errors(void **state)
{
	static const struct { const char *ini, *want; } cases[] = {
		{ "[responder.echo]\n", "[responder.echo]: unknown responder (perf, ping or pingpong)" },
		{ "[responder.perf]\nsize = 4K\n", "[responder.perf] size: unknown key" },
		{ "[responder.ping]\niters = 5\n", "[responder.ping] iters: unknown key" },
		{ "[responder.ping]\ntransport = udp\n",
		  "[responder.ping] transport: 'udp' is not a list of iwarp and roce" },
		{ "[responder.pingpong]\ntransport = iwarp\n",
		  "[responder.pingpong] transport: 'iwarp' is not roce" },
		{ "[responder.perf]\ntransport = tcp\n",
		  "[responder.perf] transport: 'tcp' is not a list of iwarp and roce" },
		{ "[responder.perf]\nlisten = 0\n",
		  "[responder.perf] listen: '0' is not a port 1..65535" },
		{ "[responder.ping]\nsize = 16\n",
		  "[responder.ping] size: '16' is not a size 32..67108864 (K, M allowed)" },
		{ "[responder.perf]\nidle_s = 0\n",
		  "[responder.perf] idle_s: '0' is not a number 1..3600" },
		{ "[responder.perf]\nidle_s = 3601\n",
		  "[responder.perf] idle_s: '3601' is not a number 1..3600" },
		{ "[responder.ping]\nidle_s = 5\n", "[responder.ping] idle_s: unknown key" },
		{ "[responder.pingpong]\niters = 0\n",
		  "[responder.pingpong] iters: '0' is not a number 1..1073741824" },
		{ "[responder.pingpong]\niters = 10\niters = 20\n",
		  "[responder.pingpong] iters: given twice" },
	};
	struct gw_responder r[GW_RESP_KINDS];
	char err[256], want[512];
	(void)state;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_int_equal(load(cases[i].ini, r, err, sizeof(err)), -EINVAL);
		snprintf(want, sizeof(want), "%s: %s", tmp_ini_path(), cases[i].want);
		assert_string_equal(err, want);
	}
}

static void ports(void **state)
{
	struct gw_responder r[GW_RESP_KINDS];
	struct gw_target t = { .name = "scratch", .listen = 4791 };
	char err[256];
	(void)state;

	assert_int_equal(load("[responder.perf]\n[responder.ping]\n[responder.pingpong]\n",
			      r, err, sizeof(err)), 0);
	assert_int_equal(gw_responders_check(r, &t, 1, err, sizeof(err)), 0);
	assert_int_equal(load("[responder.perf]\n[responder.ping]\nlisten = 18520\n",
			      r, err, sizeof(err)), 0);
	assert_int_equal(gw_responders_check(r, &t, 1, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "[responder.ping] listen: port 18520 is also [responder.perf]'s");
	assert_int_equal(load("[responder.pingpong]\nlisten = 4791\n", r, err, sizeof(err)), 0);
	assert_int_equal(gw_responders_check(r, &t, 1, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "[responder.pingpong] listen: port 4791 is also [target.scratch]'s");
}

/* [target.NAME] allow with both families: an address matches networks of
 * its own family only; bare addresses are one host; host bits refused. */
static void allow_ipv6(void **state)
{
	struct gw_target t[2];
	char err[256];
	(void)state;

	const char *p = tmp_ini_write("[target.a]\nsize = 4K\n"
				      "allow = 10.0.0.0/8, 2001:db8:1::/48, fd00::7\n");
	assert_int_equal(gw_targets_load(p, t, 2, err, sizeof(err)), 1);
	assert_int_equal(t[0].n_allow, 3);
	static const struct { const char *a; bool ok; } cases[] = {
		{ "10.1.2.3", true }, { "11.0.0.1", false },
		{ "2001:db8:1:ffff::9", true }, { "2001:db8:2::9", false },
		{ "fd00::7", true }, { "fd00::8", false },
		{ "::ffff:10.1.2.3", false },   /* IPv6, not the IPv4 network */
		{ "::", false },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct rnic_addr a;
		assert_int_equal(rnic_addr_parse(cases[i].a, &a, NULL), 0);
		if (gw_allowed(&t[0], &a) != cases[i].ok)
			fail_msg("%s: allowed %d", cases[i].a, !cases[i].ok);
	}
	/* 0.0.0.0/0 admits every IPv4 client and no IPv6 one */
	p = tmp_ini_write("[target.a]\nsize = 4K\nallow = 0.0.0.0/0\n");
	assert_int_equal(gw_targets_load(p, t, 2, err, sizeof(err)), 1);
	struct rnic_addr v6;
	assert_int_equal(rnic_addr_parse("2001:db8::1", &v6, NULL), 0);
	assert_false(gw_allowed(&t[0], &v6));
	p = tmp_ini_write("[target.a]\nsize = 4K\nallow = 2001:db8::1/32\n");
	assert_true(gw_targets_load(p, t, 2, err, sizeof(err)) < 0);
	assert_non_null(strstr(err, "[target.a] allow: '2001:db8::1/32' has host bits set under /32"));
	p = tmp_ini_write("[target.a]\nsize = 4K\nallow = [2001:db8::1]\n");
	assert_true(gw_targets_load(p, t, 2, err, sizeof(err)) < 0);
	assert_non_null(strstr(err, "is not an IPv4 or IPv6 address/prefix"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(defaults),
		cmocka_unit_test(keys),
		cmocka_unit_test(errors),
		cmocka_unit_test(ports),
		cmocka_unit_test(allow_ipv6),
	};
	return cmocka_run_group_tests(tests, tmp_ini_setup, tmp_ini_teardown);
}
