/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * DPDK telemetry endpoints: /rnic/ports, /rnic/workers, /rnic/drops,
 * /rnic/stats, /rnic/pollers. Each answers a dict keyed by stack
 * ("stack0", ...); counters are read without locks (64-bit loads).
 */
#include <stdio.h>
#include <string.h>

#include <rte_telemetry.h>

#include "engine/engine_internal.h"
#include "port/port.h"

typedef void (*stack_fill_fn)(const struct rnic_stack *st, struct rte_tel_data *d);

/* Run @p fill for every live stack into a dict of containers. */
static int tel_per_stack(struct rte_tel_data *d, stack_fill_fn fill)
{
	struct rnic_stack *sts[RNIC_MAX_STACKS];
	unsigned n = rnic_registry_list(sts, RNIC_MAX_STACKS);
	char key[32];

	rte_tel_data_start_dict(d);
	for (unsigned i = 0; i < n; i++) {
		struct rte_tel_data *c = rte_tel_data_alloc();
		if (c == NULL)
			return -ENOMEM;
		fill(sts[i], c);
		snprintf(key, sizeof(key), "stack%u", sts[i]->id);
		rte_tel_data_add_dict_container(d, key, c, 0);
	}
	return 0;
}

static void fill_ports(const struct rnic_stack *st, struct rte_tel_data *d)
{
	char key[32];
	rte_tel_data_start_dict(d);
	for (unsigned i = 0; i < st->n_ports; i++) {
		struct rte_tel_data *c = rte_tel_data_alloc();
		if (c == NULL)
			return;
		rnic_port_telemetry(st->ports[i], c);
		snprintf(key, sizeof(key), "port%u", i);
		rte_tel_data_add_dict_container(d, key, c, 0);
	}
}

static void fill_workers(const struct rnic_stack *st, struct rte_tel_data *d)
{
	char key[32];
	rte_tel_data_start_dict(d);
	for (unsigned i = 0; i < st->n_workers; i++) {
		const struct rnic_worker *w = st->workers[i];
		struct rte_tel_data *c = rte_tel_data_alloc();
		if (c == NULL)
			return;
		rte_tel_data_start_dict(c);
		rte_tel_data_add_dict_int(c, "lcore", (int)w->lcore);
		rte_tel_data_add_dict_u64(c, "loops", w->stats.loops);
		rte_tel_data_add_dict_u64(c, "busy_loops", w->stats.busy_loops);
		rte_tel_data_add_dict_u64(c, "rx_pkts", w->stats.rx_pkts);
		rte_tel_data_add_dict_u64(c, "tx_pkts", w->stats.tx_pkts);
		rte_tel_data_add_dict_u64(c, "rx_bytes", w->stats.rx_bytes);
		rte_tel_data_add_dict_u64(c, "tx_bytes", w->stats.tx_bytes);
		rte_tel_data_add_dict_u64(c, "redirected_out", w->stats.redirected_out);
		rte_tel_data_add_dict_u64(c, "redirected_in", w->stats.redirected_in);
		rte_tel_data_add_dict_u64(c, "cmds", w->stats.cmds);
		rte_tel_data_add_dict_u64(c, "icmp_echo_replies", w->stats.icmp_echo_replies);
		rte_tel_data_add_dict_u64(c, "timers_armed", w->timers.armed);
		rte_tel_data_add_dict_u64(c, "timers_fired", w->timers.fired);
		snprintf(key, sizeof(key), "worker%u", i);
		rte_tel_data_add_dict_container(d, key, c, 0);
	}
}

static void fill_drops(const struct rnic_stack *st, struct rte_tel_data *d)
{
	rte_tel_data_start_dict(d);
	for (unsigned c = 0; c < RNIC_DROP_MAX; c++) {
		uint64_t n = 0;
		for (unsigned i = 0; i < st->n_workers; i++)
			n += st->workers[i]->drops[c];
		rte_tel_data_add_dict_u64(d, rnic_drop_name(c), n);
	}
}

static void fill_stats(const struct rnic_stack *st, struct rte_tel_data *d)
{
	struct rnic_stack_stats s;
	rnic_stack_stats(st, &s);
	rte_tel_data_start_dict(d);
#define TEL_STAT(f) rte_tel_data_add_dict_u64(d, #f, s.f)
	TEL_STAT(rx_pkts); TEL_STAT(tx_pkts); TEL_STAT(rx_bytes); TEL_STAT(tx_bytes);
	TEL_STAT(drops); TEL_STAT(arp_requests); TEL_STAT(arp_replies);
	TEL_STAT(icmp_echo); TEL_STAT(redirected); TEL_STAT(connections);
	TEL_STAT(mbufs_in_use); TEL_STAT(fault_dropped); TEL_STAT(fault_duplicated);
	TEL_STAT(fault_reordered); TEL_STAT(fault_corrupted); TEL_STAT(fault_delayed);
#undef TEL_STAT
}

static void fill_pollers(const struct rnic_stack *st, struct rte_tel_data *d)
{
	char key[64];
	rte_tel_data_start_dict(d);
	for (unsigned i = 0; i < st->n_workers; i++) {
		const struct rnic_worker *w = st->workers[i];
		for (unsigned k = 0; k < w->n_pollers; k++) {
			const struct rnic_poller *p = &w->pollers[k];
			struct rte_tel_data *c = rte_tel_data_alloc();
			if (c == NULL)
				return;
			rte_tel_data_start_dict(c);
			rte_tel_data_add_dict_u64(c, "calls", p->calls);
			rte_tel_data_add_dict_u64(c, "work", p->work);
			rte_tel_data_add_dict_u64(c, "busy_cycles", p->cycles);
			snprintf(key, sizeof(key), "w%u.%s", i, p->name);
			rte_tel_data_add_dict_container(d, key, c, 0);
		}
	}
}

#define TEL_HANDLER(name) \
	static int tel_##name(const char *cmd, const char *params, \
			      struct rte_tel_data *d) \
	{ (void)cmd; (void)params; return tel_per_stack(d, fill_##name); }
TEL_HANDLER(ports)
TEL_HANDLER(workers)
TEL_HANDLER(drops)
TEL_HANDLER(stats)
TEL_HANDLER(pollers)

void rnic_telemetry_init(void)
{
	rte_telemetry_register_cmd("/rnic/ports", tel_ports,
				   "Ports of every rnic stack: identity, link, stats, xstats, faults");
	rte_telemetry_register_cmd("/rnic/workers", tel_workers,
				   "Workers of every rnic stack: loops, packets, redirects");
	rte_telemetry_register_cmd("/rnic/drops", tel_drops,
				   "Drop counters by cause");
	rte_telemetry_register_cmd("/rnic/stats", tel_stats,
				   "Stack totals");
	rte_telemetry_register_cmd("/rnic/pollers", tel_pollers,
				   "Per-poller calls, work and busy cycles");
}
