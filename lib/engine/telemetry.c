/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * DPDK telemetry endpoints: /rnic/ports, /rnic/workers, /rnic/drops,
 * /rnic/stats, /rnic/pollers. Each answers a dict keyed by stack
 * ("stack0", ...; the optional parameter N selects stack N only).
 * /rnic/mem is per process: every mempool, the rte_malloc heap and the C
 * heap (what the hostile-peer tests compare before and after an attack).
 * Counters are read without locks (64-bit loads); the registry lock keeps
 * the stack itself alive while it is read.
 */
#include <ctype.h>
#include <errno.h>
#include <malloc.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_mempool.h>
#include <rte_telemetry.h>

#include "engine/engine_internal.h"
#include "port/port.h"

typedef void (*stack_fill_fn)(const struct rnic_stack *st, struct rte_tel_data *d);

struct tel_walk {
	stack_fill_fn fill;
	struct rte_tel_data *d;
	int only;            /* stack id asked for, or -1 for every stack */
	int rc;
};

/* Registry callback: add one stack's container under "stackN". */
static void tel_add_stack(struct rnic_stack *st, void *arg)
{
	struct tel_walk *tw = arg;
	char key[32];

	if (tw->rc != 0 || (tw->only >= 0 && (unsigned)tw->only != st->id))
		return;
	struct rte_tel_data *c = rte_tel_data_alloc();
	if (c == NULL) {
		tw->rc = -ENOMEM;
		return;
	}
	tw->fill(st, c);
	snprintf(key, sizeof(key), "stack%u", st->id);
	if (rte_tel_data_add_dict_container(tw->d, key, c, 0) != 0)
		rte_tel_data_free(c);
}

/*
 * Answer a dict {"stack0": {...}, ...} with @p fill run on every live stack,
 * or only on stack N when the command has the parameter N (the output of
 * one command is limited to 16 KiB, which many workers can exceed).
 */
static int tel_per_stack(const char *params, struct rte_tel_data *d,
			 stack_fill_fn fill)
{
	struct tel_walk tw = { .fill = fill, .d = d, .only = -1, .rc = 0 };

	if (params != NULL && *params != '\0') {
		char *end;
		unsigned long id = strtoul(params, &end, 10);
		if (*end != '\0' || id >= RNIC_MAX_STACKS)
			return -EINVAL;
		tw.only = (int)id;
	}
	rte_tel_data_start_dict(d);
	rnic_registry_foreach(tel_add_stack, &tw);
	return tw.rc;
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
		if (rte_tel_data_add_dict_container(d, key, c, 0) != 0)
			rte_tel_data_free(c);
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
		/* -1: not launched (polled by the application, or stopped) */
		rte_tel_data_add_dict_int(c, "lcore",
					  w->lcore < RTE_MAX_LCORE ? (int)w->lcore : -1);
		rte_tel_data_add_dict_u64(c, "loops", w->stats.loops);
		rte_tel_data_add_dict_u64(c, "busy_loops", w->stats.busy_loops);
		rte_tel_data_add_dict_u64(c, "idle_sleeps", w->stats.idle_sleeps);
		rte_tel_data_add_dict_u64(c, "rx_pkts", w->stats.rx_pkts);
		rte_tel_data_add_dict_u64(c, "tx_pkts", w->stats.tx_pkts);
		rte_tel_data_add_dict_u64(c, "tx_flushes", w->stats.tx_flushes);
		rte_tel_data_add_dict_u64(c, "rx_bytes", w->stats.rx_bytes);
		rte_tel_data_add_dict_u64(c, "tx_bytes", w->stats.tx_bytes);
		rte_tel_data_add_dict_u64(c, "redirected_out", w->stats.redirected_out);
		rte_tel_data_add_dict_u64(c, "redirected_in", w->stats.redirected_in);
		rte_tel_data_add_dict_u64(c, "cmds", w->stats.cmds);
		rte_tel_data_add_dict_u64(c, "icmp_echo_replies", w->stats.icmp_echo_replies);
		rte_tel_data_add_dict_u64(c, "timers_deferred", w->stats.timers_deferred);
		rte_tel_data_add_dict_u64(c, "timers_armed", w->timers.armed);
		rte_tel_data_add_dict_u64(c, "timers_fired", w->timers.fired);
		/* a loop stuck right now counts at once, not when it ends */
		const char *in_poller;
		uint64_t age = rnic_worker_loop_age_ms(w, &in_poller);
		bool stuck_now = age >= RNIC_STUCK_LOOP_MS;
		rte_tel_data_add_dict_u64(c, "stuck_loops", w->stats.stuck_loops + stuck_now);
		rte_tel_data_add_dict_u64(c, "loop_ms", age);
		const char *sp = stuck_now ? in_poller : w->stuck_poller;
		rte_tel_data_add_dict_string(c, "stuck_poller", sp != NULL ? sp : "");
		snprintf(key, sizeof(key), "worker%u", i);
		if (rte_tel_data_add_dict_container(d, key, c, 0) != 0)
			rte_tel_data_free(c);
	}
}

static void fill_drops(const struct rnic_stack *st, struct rte_tel_data *d)
{
	rte_tel_data_start_dict(d);
	for (unsigned c = 0; c < RNIC_DROP_MAX; c++) {
		uint64_t n = 0;
		for (unsigned i = 0; i < st->n_workers; i++)
			n += st->workers[i]->drops[c];
		/* lib/port counts what a down link swallowed per queue */
		if (c == RNIC_DROP_LINK_DOWN)
			for (unsigned i = 0; i < st->n_ports; i++)
				n += rnic_port_link_down_drops(st->ports[i]);
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
	TEL_STAT(fault_ce_marked);
#undef TEL_STAT
	struct rnic_failover_stats fs;
	rnic_failover_stats(st, &fs);
#define TEL_FO(f) rte_tel_data_add_dict_u64(d, "failover_" #f, fs.f)
	TEL_FO(failovers); TEL_FO(completed); TEL_FO(no_survivor); TEL_FO(conns_moved);
	TEL_FO(last_us); TEL_FO(max_us);
#undef TEL_FO
	if (st->net != NULL && st->net->telemetry != NULL)
		st->net->telemetry(st, d);   /* nd_*: IPv6 neighbour discovery */
	rte_tel_data_add_dict_int(d, "failover_last_failed", fs.last_failed);
	rte_tel_data_add_dict_int(d, "failover_last_survivor", fs.last_survivor);
}

/* Copy @p name into @p key with the characters telemetry accepts in a
 * dict key (letters, digits, '_'); others become '_'. */
static void tel_key(char *key, size_t len, const char *name)
{
	size_t i = 0;
	for (; name[i] != '\0' && i + 1 < len; i++)
		key[i] = isalnum((unsigned char)name[i]) ? name[i] : '_';
	key[i] = '\0';
}

/* {"worker0": {"rx": {"calls", "work", "busy_cycles"}, ...}, ...} */
static void fill_pollers(const struct rnic_stack *st, struct rte_tel_data *d)
{
	char key[64];
	rte_tel_data_start_dict(d);
	for (unsigned i = 0; i < st->n_workers; i++) {
		const struct rnic_worker *w = st->workers[i];
		struct rte_tel_data *wd = rte_tel_data_alloc();
		if (wd == NULL)
			return;
		rte_tel_data_start_dict(wd);
		for (unsigned k = 0; k < w->n_pollers; k++) {
			const struct rnic_poller *p = &w->pollers[k];
			struct rte_tel_data *c = rte_tel_data_alloc();
			if (c == NULL)
				break;
			rte_tel_data_start_dict(c);
			rte_tel_data_add_dict_u64(c, "calls", p->calls);
			rte_tel_data_add_dict_u64(c, "work", p->work);
			rte_tel_data_add_dict_u64(c, "busy_cycles", p->cycles);
			tel_key(key, sizeof(key), p->name);
			if (rte_tel_data_add_dict_container(wd, key, c, 0) != 0)
				rte_tel_data_free(c);
		}
		snprintf(key, sizeof(key), "worker%u", i);
		if (rte_tel_data_add_dict_container(d, key, wd, 0) != 0)
			rte_tel_data_free(wd);
	}
}

/* rte_mempool_walk callback: one pool's {"size", "in_use", "avail"} under
 * its (sanitised) name, and its in-use count added to the total. */
struct tel_mem_walk {
	struct rte_tel_data *pools;
	uint64_t in_use;
	unsigned n;
};

static void tel_mem_pool(struct rte_mempool *mp, void *arg)
{
	struct tel_mem_walk *mw = arg;
	char key[RTE_MEMPOOL_NAMESIZE];
	unsigned in_use = rte_mempool_in_use_count(mp);

	mw->in_use += in_use;
	mw->n++;
	struct rte_tel_data *c = rte_tel_data_alloc();
	if (c == NULL)
		return;
	rte_tel_data_start_dict(c);
	rte_tel_data_add_dict_u64(c, "size", mp->size);
	rte_tel_data_add_dict_u64(c, "in_use", in_use);
	rte_tel_data_add_dict_u64(c, "avail", rte_mempool_avail_count(mp));
	tel_key(key, sizeof(key), mp->name);
	if (rte_tel_data_add_dict_container(mw->pools, key, c, 0) != 0)
		rte_tel_data_free(c);   /* past the dict's entry limit: total only */
}

/*
 * /rnic/mem: {"pools": {NAME: {"size", "in_use", "avail"}, ...},
 * "pool_count", "objs_in_use" (summed over the pools), "rte_heap_bytes"
 * (rte_malloc's allocated bytes over every socket), "c_heap_bytes"
 * (mallinfo2's uordblks: the C heap's bytes in use)}. Per process, not per
 * stack: the pools and heaps are the process's. The counts are read without
 * locks; a pool's per-lcore caches count as available.
 */
static int tel_mem(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct tel_mem_walk mw = { .pools = rte_tel_data_alloc() };
	uint64_t rte_heap = 0;

	(void)cmd;
	(void)params;
	if (mw.pools == NULL)
		return -ENOMEM;
	rte_tel_data_start_dict(d);
	rte_tel_data_start_dict(mw.pools);
	rte_mempool_walk(tel_mem_pool, &mw);
	if (rte_tel_data_add_dict_container(d, "pools", mw.pools, 0) != 0)
		rte_tel_data_free(mw.pools);
	for (unsigned i = 0; i < rte_socket_count(); i++) {
		struct rte_malloc_socket_stats ms;
		if (rte_malloc_get_socket_stats(rte_socket_id_by_idx(i), &ms) == 0)
			rte_heap += ms.heap_allocsz_bytes;
	}
	struct mallinfo2 mi = mallinfo2();
	rte_tel_data_add_dict_u64(d, "pool_count", mw.n);
	rte_tel_data_add_dict_u64(d, "objs_in_use", mw.in_use);
	rte_tel_data_add_dict_u64(d, "rte_heap_bytes", rte_heap);
	rte_tel_data_add_dict_u64(d, "c_heap_bytes", mi.uordblks);
	return 0;
}

#define TEL_HANDLER(name) \
	static int tel_##name(const char *cmd, const char *params, \
			      struct rte_tel_data *d) \
	{ (void)cmd; return tel_per_stack(params, d, fill_##name); }
TEL_HANDLER(ports)
TEL_HANDLER(workers)
TEL_HANDLER(drops)
TEL_HANDLER(stats)
TEL_HANDLER(pollers)

/* Register the commands once per process (EAL init and stack creation
 * both call this; a second registration would fail with -EINVAL anyway). */
void rnic_telemetry_init(void)
{
	static bool done;

	if (__atomic_exchange_n(&done, true, __ATOMIC_ACQ_REL))
		return;
	rte_telemetry_register_cmd("/rnic/ports", tel_ports,
				   "Ports of every rnic stack: identity, link, stats, xstats, faults; param: stack index (optional)");
	rte_telemetry_register_cmd("/rnic/workers", tel_workers,
				   "Workers of every rnic stack: loops, packets, redirects; param: stack index (optional)");
	rte_telemetry_register_cmd("/rnic/drops", tel_drops,
				   "Drop counters by cause; param: stack index (optional)");
	rte_telemetry_register_cmd("/rnic/stats", tel_stats,
				   "Stack totals; param: stack index (optional)");
	rte_telemetry_register_cmd("/rnic/pollers", tel_pollers,
				   "Per-poller calls, work and busy cycles; param: stack index (optional)");
	rte_telemetry_register_cmd("/rnic/mem", tel_mem,
				   "Memory of the process: every mempool (size, in_use, avail), rte_malloc and C heap bytes in use");
}
