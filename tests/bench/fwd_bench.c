/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Forwarding rate of one rnic worker on net_null, printed as JSON.
 *
 *   io_fwd_mpps    rnic_port_rx -> rnic_port_tx on queue 0: rnic's port layer
 *                  (fault-injector hooks, capture hooks) doing what
 *                  testpmd's io forwarding does, for comparison with it;
 *   stack_rx_mpps  the full worker loop (rnic_worker_poll): RX, Ethernet and
 *                  IPv4 validation, drop accounting, timers, TX flush.
 *
 * Usage: fwd_bench [seconds]   (run tests/bench/run-fwd.sh for both figures)
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_errno.h>

#include "rnic/rnic.h"
#include "engine/stack.h"
#include "port/port.h"

static double io_forward(struct rnic_port *p, double secs)
{
	struct rte_mbuf *pkts[RNIC_BURST];
	uint64_t hz = rte_get_tsc_hz(), end, start, fwd = 0;

	start = rte_rdtsc();
	end = start + (uint64_t)(secs * hz);
	while (rte_rdtsc() < end) {
		for (int i = 0; i < 256; i++) {
			uint16_t n = rnic_port_rx(p, 0, pkts, RNIC_BURST);
			uint16_t s = rnic_port_tx(p, 0, pkts, n);
			fwd += s;
			if (s < n)
				rte_pktmbuf_free_bulk(&pkts[s], n - s);
		}
	}
	return fwd / ((double)(rte_rdtsc() - start) / hz) / 1e6;
}

static double stack_rx(struct rnic_stack *st, double secs)
{
	struct rnic_stack_stats a, b;
	uint64_t hz = rte_get_tsc_hz(), end, start;

	rnic_stack_stats(st, &a);
	start = rte_rdtsc();
	end = start + (uint64_t)(secs * hz);
	while (rte_rdtsc() < end)
		for (int i = 0; i < 256; i++)
			rnic_worker_poll(st, 0);
	rnic_stack_stats(st, &b);
	return (b.rx_pkts - a.rx_pkts) /
		((double)(rte_rdtsc() - start) / hz) / 1e6;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 3.0;
	struct rnic_config c;

	rnic_config_init(&c);
	c.poll_mode = RNIC_POLL_BUSY;
	c.n_ports = 1;
	rnic_port_cfg_init(&c.ports[0]);
	snprintf(c.ports[0].vdev, sizeof(c.ports[0].vdev), "net_null0");
	rnic_parse_cidr("192.0.2.10/24", &c.ports[0].ip, &c.ports[0].prefix_len);
	if (rnic_eal_init(argv[0], &c, 1) < 0)
		return 1;
	struct rnic_stack *st = rnic_stack_create(&c);
	if (st == NULL) {
		fprintf(stderr, "fwd_bench: %s\n", rte_strerror(rte_errno));
		return 1;
	}
	double io = io_forward(st->ports[0], secs);
	double rx = stack_rx(st, secs);
	printf("{\"bench\": \"fwd\", \"pmd\": \"net_null\", \"workers\": 1, "
	       "\"seconds\": %.1f, \"io_fwd_mpps\": %.2f, \"stack_rx_mpps\": %.2f}\n",
	       secs, io, rx);
	rnic_stack_destroy(st);
	return 0;
}
