/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Stack lifecycle: ports, workers, protocol hooks; start/stop on lcores;
 * statistics and the status line.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_malloc.h>

#include "engine/engine_internal.h"
#include "engine/stack.h"
#include "engine/worker_internal.h"
#include "net/net.h"
#include "port/port.h"

static volatile bool stop_flag;

void rnic_request_stop(void)
{
	stop_flag = true;
}

bool rnic_stop_requested(void)
{
	return stop_flag;
}

int rnic_stack_register_ip_proto(struct rnic_stack *st, uint8_t proto,
				 const struct rnic_l4_handler *h)
{
	if (st->ip_proto[proto].input != NULL)
		return -EEXIST;
	st->ip_proto[proto] = *h;
	return 0;
}

int rnic_stack_register_udp(struct rnic_stack *st, uint16_t port,
			    const struct rnic_l4_handler *h)
{
	struct rnic_udp_binding *free_slot = NULL;

	for (unsigned i = 0; i < RNIC_MAX_UDP_HANDLERS; i++) {
		if (st->udp[i].port == port)
			return -EEXIST;
		if (st->udp[i].port == 0 && free_slot == NULL)
			free_slot = &st->udp[i];
	}
	if (free_slot == NULL)
		return -ENOSPC;
	free_slot->h = *h;
	free_slot->port = port;
	return 0;
}

struct rnic_worker *rnic_stack_current_worker(struct rnic_stack *st)
{
	unsigned lc = rte_lcore_id();
	for (unsigned i = 0; i < st->n_workers; i++)
		if (st->workers[i]->lcore == lc)
			return st->workers[i];
	return NULL;
}

uint64_t rnic_stack_connections(const struct rnic_stack *st)
{
	uint64_t n = 0;
	for (unsigned i = 0; rnic_protocols[i] != NULL; i++)
		if (rnic_protocols[i]->connections)
			n += rnic_protocols[i]->connections(st);
	return n;
}

struct rnic_worker *rnic_stack_worker(struct rnic_stack *st, unsigned idx)
{
	return idx < st->n_workers ? st->workers[idx] : NULL;
}

unsigned rnic_stack_workers(const struct rnic_stack *st)
{
	return st->n_workers;
}

/* Previous sample of each stack's status line, for the rates. */
static struct {
	uint64_t tsc, rx, tx;
} status_prev[RNIC_MAX_STACKS];

/*
 * Undo rnic_stack_create() from whatever point it reached, in reverse:
 * hide the stack from telemetry, protocol hooks (last module first), then
 * every mbuf the workers still hold (while the pools exist), the workers,
 * and finally the ports with their pools.
 */
static void stack_teardown(struct rnic_stack *st, unsigned protos_done)
{
	rnic_registry_remove(st);
	while (protos_done-- > 0) {
		const struct rnic_proto_ops *ops = rnic_protocols[protos_done];
		for (unsigned i = st->n_workers; i-- > 0; )
			if (ops->worker_fini)
				ops->worker_fini(st->workers[i]);
		if (ops->stack_fini)
			ops->stack_fini(st);
	}
	for (unsigned i = 0; i < st->n_workers; i++)
		rnic_worker_drain(st->workers[i]);
	for (unsigned i = st->n_workers; i-- > 0; )
		rnic_worker_free(st->workers[i]);
	for (unsigned i = st->n_ports; i-- > 0; )
		rnic_port_close(st->ports[i]);
	rte_free(st);
}

/* Open every configured port; each gets one RX/TX queue per worker. */
static int stack_open_ports(struct rnic_stack *st)
{
	const struct rnic_config *cfg = &st->cfg;

	for (unsigned i = 0; i < cfg->n_ports; i++) {
		st->ports[i] = rnic_port_open(st, i, &cfg->ports[i], cfg->workers);
		if (st->ports[i] == NULL)
			return rte_errno ? -rte_errno : -ENODEV;
		st->n_ports++;
		if (st->ports[i]->nb_txq < cfg->workers) {
			fprintf(stderr, "rnic: port %u (%s) has %u TX queues for %u "
				"workers\n", i, st->ports[i]->name,
				st->ports[i]->nb_txq, cfg->workers);
			return -ENOTSUP;
		}
	}
	return 0;
}

/* Run every module's stack_init and worker_init; *done counts the modules
 * whose hooks ran (at least partly), for the unwind. */
static int stack_init_protocols(struct rnic_stack *st, unsigned *done)
{
	int rc;

	for (*done = 0; rnic_protocols[*done] != NULL; ) {
		const struct rnic_proto_ops *ops = rnic_protocols[*done];
		if (ops->stack_init && (rc = ops->stack_init(st)) != 0)
			return rc;
		(*done)++;
		for (unsigned i = 0; i < st->n_workers; i++)
			if (ops->worker_init &&
			    (rc = ops->worker_init(st->workers[i])) != 0)
				return rc;
	}
	return 0;
}

struct rnic_stack *rnic_stack_create(const struct rnic_config *cfg)
{
	struct rnic_stack *st;
	unsigned protos = 0;
	int rc = 0;

	if (cfg == NULL || cfg->workers == 0 || cfg->workers > RNIC_MAX_WORKERS ||
	    cfg->n_ports > RNIC_MAX_PORTS) {
		rte_errno = EINVAL;
		return NULL;
	}
	rnic_telemetry_init();
	st = rte_zmalloc("rnic_stack", sizeof(*st), RTE_CACHE_LINE_SIZE);
	if (st == NULL) {
		rte_errno = ENOMEM;
		return NULL;
	}
	st->cfg = *cfg;
	/* the id names the workers' rings, so take it first */
	if (rnic_registry_add(st) != 0) {
		rte_free(st);
		rte_errno = ENOSPC;
		return NULL;
	}
	memset(&status_prev[st->id], 0, sizeof(status_prev[st->id]));
	rc = stack_open_ports(st);
	for (unsigned i = 0; rc == 0 && i < cfg->workers; i++) {
		st->workers[i] = rnic_worker_create(st, i);
		if (st->workers[i] == NULL)
			rc = rte_errno ? -rte_errno : -ENOMEM;
		else
			st->n_workers++;
	}
	if (rc == 0)
		rc = stack_init_protocols(st, &protos);
	for (unsigned i = 0; rc == 0 && i < st->n_workers; i++)
		rc = rnic_worker_finish_pollers(st->workers[i]);
	if (rc != 0) {
		stack_teardown(st, protos);
		rte_errno = -rc;
		return NULL;
	}
	rnic_registry_publish(st);
	return st;
}

int rnic_stack_start(struct rnic_stack *st)
{
	if (st->running)
		return -EALREADY;
	for (unsigned i = 0; i < st->n_workers; i++) {
		unsigned lc = rnic_lcore_alloc();
		if (lc == RTE_MAX_LCORE) {
			fprintf(stderr, "rnic: no free lcore for worker %u: give "
				"rnic_eal_init() the total worker count\n", i);
			rnic_stack_stop(st);
			return -EBUSY;
		}
		struct rnic_worker *w = st->workers[i];
		w->lcore = lc;
		w->stop = false;
		st->running = true;
		int rc = rte_eal_remote_launch(rnic_worker_main, w, lc);
		if (rc != 0) {
			rnic_lcore_release(lc);
			w->lcore = RTE_MAX_LCORE;
			rnic_stack_stop(st);
			return rc;
		}
	}
	return 0;
}

void rnic_stack_stop(struct rnic_stack *st)
{
	if (!st->running)
		return;
	for (unsigned i = 0; i < st->n_workers; i++)
		__atomic_store_n(&st->workers[i]->stop, true, __ATOMIC_RELEASE);
	for (unsigned i = 0; i < st->n_workers; i++) {
		struct rnic_worker *w = st->workers[i];
		if (w->lcore == RTE_MAX_LCORE)
			continue;
		rte_eal_wait_lcore(w->lcore);
		rnic_lcore_release(w->lcore);
		w->lcore = RTE_MAX_LCORE;
	}
	st->running = false;
}

void rnic_stack_destroy(struct rnic_stack *st)
{
	unsigned protos = 0;

	if (st == NULL)
		return;
	rnic_stack_stop(st);
	while (rnic_protocols[protos] != NULL)
		protos++;
	stack_teardown(st, protos);
}

unsigned rnic_worker_poll(struct rnic_stack *st, unsigned idx)
{
	if (st->running || idx >= st->n_workers)
		return 0;
	return rnic_worker_run_once(st->workers[idx]);
}

void rnic_stack_stats(const struct rnic_stack *st, struct rnic_stack_stats *s)
{
	struct rnic_arp_stats as;

	memset(s, 0, sizeof(*s));
	for (unsigned i = 0; i < st->n_workers; i++) {
		const struct rnic_worker *w = st->workers[i];
		s->rx_pkts += w->stats.rx_pkts;
		s->tx_pkts += w->stats.tx_pkts;
		s->rx_bytes += w->stats.rx_bytes;
		s->tx_bytes += w->stats.tx_bytes;
		s->redirected += w->stats.redirected_out;
		s->icmp_echo += w->stats.icmp_echo_replies;
		for (unsigned c = 0; c < RNIC_DROP_MAX; c++)
			s->drops += w->drops[c];
	}
	for (unsigned i = 0; i < st->n_ports; i++) {
		struct rnic_fault_stats fs;
		rnic_port_fault_stats(st->ports[i], &fs);
		s->fault_dropped += fs.dropped;
		s->fault_duplicated += fs.duplicated;
		s->fault_reordered += fs.reordered;
		s->fault_corrupted += fs.corrupted;
		s->fault_delayed += fs.delayed;
		s->mbufs_in_use += rnic_port_mbufs_in_use(st->ports[i]);
	}
	rnic_arp_stats(st, &as);
	s->arp_requests = as.requests_in + as.requests_out;
	s->arp_replies = as.replies_in + as.replies_out;
	s->connections = rnic_stack_connections(st);
}

void rnic_stack_status_line(const struct rnic_stack *st, FILE *f)
{
	struct rnic_stack_stats s;
	uint64_t now = rte_rdtsc();
	double dt, rx_rate = 0, tx_rate = 0;
	unsigned id = st->id < RNIC_MAX_STACKS ? st->id : 0;

	rnic_stack_stats(st, &s);
	if (status_prev[id].tsc != 0 && now > status_prev[id].tsc) {
		dt = (double)(now - status_prev[id].tsc) / (double)rte_get_tsc_hz();
		rx_rate = (double)(s.rx_pkts - status_prev[id].rx) / dt;
		tx_rate = (double)(s.tx_pkts - status_prev[id].tx) / dt;
	}
	fprintf(f, "rx %lu (%.0f/s) tx %lu (%.0f/s) drops %lu arp %lu/%lu "
		"icmp %lu conns %lu mbufs %lu",
		(unsigned long)s.rx_pkts, rx_rate, (unsigned long)s.tx_pkts,
		tx_rate, (unsigned long)s.drops, (unsigned long)s.arp_requests,
		(unsigned long)s.arp_replies, (unsigned long)s.icmp_echo,
		(unsigned long)s.connections, (unsigned long)s.mbufs_in_use);
	status_prev[id].tsc = now;
	status_prev[id].rx = s.rx_pkts;
	status_prev[id].tx = s.tx_pkts;
}
