/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The engine with the real lib/port and lib/net (links the whole library):
 * PMD plugins load (a net_null vdev probes), a two-worker stack on net_null
 * runs on its lcores with every worker receiving on its own queue, the
 * telemetry endpoints render real ports, and stop + destroy give every mbuf
 * back.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include <rte_dev.h>
#include <rte_ethdev.h>
#include <rte_errno.h>

#include "engine/stack.h"
#include "net/net.h"
#include "port/port.h"
#include "tel_client.h"

static void pmd_plugins_load(void **state)
{
	uint16_t before = rte_eth_dev_count_avail();
	(void)state;
	/* Debian's shared DPDK loads net_null from its plugin directory */
	assert_int_equal(rte_eal_hotplug_add("vdev", "net_null_probe", ""), 0);
	assert_int_equal(rte_eth_dev_count_avail(), before + 1);
	assert_int_equal(rte_eal_hotplug_remove("vdev", "net_null_probe"), 0);
	assert_int_equal(rte_eth_dev_count_avail(), before);
}

static void null_stack_on_lcores(void **state)
{
	static char out[16384];
	struct rnic_config c;
	struct rnic_stack_stats s;
	(void)state;

	rnic_config_init(&c);
	c.workers = 2;
	c.poll_mode = RNIC_POLL_ADAPTIVE;
	c.n_ports = 1;
	rnic_port_cfg_init(&c.ports[0]);
	snprintf(c.ports[0].vdev, sizeof(c.ports[0].vdev), "net_null1");
	assert_int_equal(rnic_parse_cidr("192.0.2.10/24", &c.ports[0].ip,
					 &c.ports[0].prefix_len), 0);
	struct rnic_stack *st = rnic_stack_create(&c);
	assert_non_null(st);
	assert_true(st->ports[0]->nb_rxq >= 2);
	assert_int_equal(rnic_stack_start(st), 0);
	struct timespec ts = { 0, 200 * 1000000L };
	nanosleep(&ts, NULL);

	/* net_null hands out frames on every queue: both workers see them */
	assert_true(st->workers[0]->stats.rx_pkts > 0);
	assert_true(st->workers[1]->stats.rx_pkts > 0);
	assert_true(tel_query("/rnic/ports", out, sizeof(out)) > 0);
	assert_non_null(strstr(out, "net_null1"));
	assert_true(tel_query("/rnic/workers", out, sizeof(out)) > 0);
	assert_true(tel_number(out, "rx_pkts") > 0);
	assert_true(tel_number(out, "lcore") > 0);

	rnic_stack_stop(st);
	rnic_stack_stats(st, &s);
	print_message("rx %lu drops %lu tx %lu mbufs in use %lu\n",
		      (unsigned long)s.rx_pkts, (unsigned long)s.drops,
		      (unsigned long)s.tx_pkts, (unsigned long)s.mbufs_in_use);
	assert_true(s.rx_pkts > 0);
	/* zero-filled frames: every one dropped or an echo of our own ARP */
	assert_true(s.drops + s.arp_requests >= s.rx_pkts);
	/* only frames waiting for ARP may still be out of the pool */
	assert_true(s.mbufs_in_use <= RNIC_ARP_PENDING);
	rnic_stack_destroy(st);
}

int main(int argc, char **argv)
{
	struct rnic_config c;
	(void)argc;

	rnic_config_init(&c);
	snprintf(c.eal_args[c.n_eal_args++], 128, "--no-huge");
	snprintf(c.eal_args[c.n_eal_args++], 128, "-m");
	snprintf(c.eal_args[c.n_eal_args++], 128, "256");
	snprintf(c.eal_args[c.n_eal_args++], 128, "--log-level=*:error");
	if (rnic_eal_init(argv[0], &c, 2) != 0)
		return 1;
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(pmd_plugins_load),
		cmocka_unit_test(null_stack_on_lcores),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	rte_eal_cleanup();
	return rc;
}
