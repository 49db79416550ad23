/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What tcp_handshake and tcp_syn_cookies share: two busy-polling stacks,
 * A (192.0.2.1) and B (192.0.2.2), over one net_ring pair, B run from the
 * main thread (and A too with --one), and A's busy time from its pollers'
 * cycle counters (worker.c charges cycles only to calls that did work).
 * Each tool defines FAIL(...) (print, exit 1) before including this.
 */
#ifndef RNIC_BENCH_PAIR_H
#define RNIC_BENCH_PAIR_H

#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include "engine/stack.h"
#include "engine/worker.h"
#include "rnic/rnic.h"

#define A_IP 0xc0000201u
#define B_IP 0xc0000202u

static inline double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Run B's worker loop (and @p also's, when not NULL) for @p seconds. */
static inline void bench_drive(struct rnic_stack *B, struct rnic_stack *also, double seconds)
{
	double end = now_s() + seconds;
	do {
		for (unsigned k = 0; k < 64; k++) {
			rnic_stack_poll(B);
			rnic_stack_poll(also);
		}
	} while (now_s() < end);
}

/* TSC cycles @p w's pollers spent in calls that did work. */
static inline uint64_t bench_busy_cycles(const struct rnic_worker *w)
{
	uint64_t c = 0;
	for (unsigned i = 0; i < w->n_pollers; i++)
		c += w->pollers[i].cycles;
	return c;
}

/*
 * EAL (no hugepages, 1 GiB), the ring pair @p ring and the configs of A
 * and B on it: one worker each, busy polling, @p mbufs per port (0: the
 * default).
 */
static inline void bench_pair_configs(const char *prog, const char *ring, uint32_t mbufs,
				      struct rnic_config *ca, struct rnic_config *cb)
{
	rnic_config_init(ca);
	snprintf(ca->eal_args[ca->n_eal_args++], 128, "--no-huge");
	snprintf(ca->eal_args[ca->n_eal_args++], 128, "-m");
	snprintf(ca->eal_args[ca->n_eal_args++], 128, "1024");
	if (rnic_eal_init(prog, ca, 2) != 0)
		FAIL("EAL init failed");
	if (rnic_ring_pair(ring, 1) != 0)
		FAIL("ring pair");
	ca->n_eal_args = 0;
	*cb = *ca;
	ca->poll_mode = cb->poll_mode = RNIC_POLL_BUSY;
	for (int i = 0; i < 2; i++) {
		struct rnic_config *c = i ? cb : ca;
		c->n_ports = 1;
		rnic_port_cfg_init(&c->ports[0]);
		snprintf(c->ports[0].ring, sizeof(c->ports[0].ring), "%s.%c", ring, i ? 'b' : 'a');
		c->ports[0].ip = i ? B_IP : A_IP;
		c->ports[0].prefix_len = 24;
		if (mbufs != 0)
			c->ports[0].mbufs = mbufs;
	}
}

#endif
