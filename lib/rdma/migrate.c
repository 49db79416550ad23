/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Cross-port STag migration (seed 000): the control component.
 *
 * A port that receives a tagged segment (or a RoCE RETH) for an STag
 * another port generated, and holds no import of it, asks here: the query
 * goes into the control component's inbox and the asking QP parks what it
 * received (later bytes of its stream wait behind it; other QPs go on).
 * The control component runs on worker 0. It looks the STag up in the
 * owner port's table: when the owner has it and its invalid bit is clear,
 * it installs an import on the asking port (address, length, rights, PD,
 * key, a link back to the owner's entry) and answers OK; otherwise it
 * installs nothing and answers INVALID, and the asker discards the data and
 * sends its Terminate or NAK. The answer runs on the asker's worker, which
 * resumes its QP from the parked segment, in order.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_ring.h>
#include <rte_telemetry.h>

#include "engine/engine_internal.h"
#include "engine/stack.h"
#include "engine/worker.h"
#include "rdma/stag.h"
#include "rdma/stag_table.h"
#include "rdma/rdma.h"

#define MIGQ_SIZE 1024
#define MIG_BURST 32

/* /rnic/stags: per stack, per port, the STags generated and imported,
 * migration queries and refusals by cause (one level of containers, as
 * DPDK telemetry allows: keys are "port<i>_<counter>"). */
static void tel_one(struct rnic_stack *st, void *arg)
{
	struct rte_tel_data *d = arg;
	struct rnic_stag_table *t = rnic_stag_table_of(st);
	char key[48];
	if (t == NULL)
		return;
	struct rte_tel_data *c = rte_tel_data_alloc();
	if (c == NULL)
		return;
	rte_tel_data_start_dict(c);
	for (unsigned p = 0; p < t->n_ports; p++) {
		struct rnic_stag_port_stats s;
		if (rnic_stag_port_stats(st, p, &s) != 0)
			continue;
#define TEL_STAT(f) do { snprintf(key, sizeof(key), "port%u_%s", p, #f); \
		rte_tel_data_add_dict_u64(c, key, s.f); } while (0)
		TEL_STAT(generated);
		TEL_STAT(imported);
		TEL_STAT(imports_live);
		TEL_STAT(queries);
		TEL_STAT(rejects_unknown);
		TEL_STAT(rejects_invalid);
		TEL_STAT(rejects_bad_port);
		TEL_STAT(revoked);
		TEL_STAT(query_us_max);
#undef TEL_STAT
	}
	snprintf(key, sizeof(key), "stack%u", st->id);
	rte_tel_data_add_dict_container(d, key, c, 0);
}

static int tel_stags(const char *cmd, const char *params, struct rte_tel_data *d)
{
	(void)cmd;
	(void)params;
	rte_tel_data_start_dict(d);
	rnic_registry_foreach(tel_one, d);
	return 0;
}

int rnic_stag_mig_init(struct rnic_stack *st, struct rnic_stag_table *t)
{
	static bool tel_done;
	if (!tel_done) {
		tel_done = true;
		rte_telemetry_register_cmd("/rnic/stags", tel_stags,
			"STags per port: generated, imported (migrated), queries, refusals by cause");
	}
	char name[RTE_RING_NAMESIZE];
	snprintf(name, sizeof(name), "stagmig%u", st->id);
	t->backlog_tail = &t->backlog;
	t->migq = rte_ring_create(name, MIGQ_SIZE, SOCKET_ID_ANY, RING_F_SC_DEQ);
	return t->migq != NULL ? 0 : -ENOMEM;
}

void rnic_stag_mig_fini(struct rnic_stag_table *t)
{
	rte_ring_free(t->migq);
	t->migq = NULL;
}

static void backlog_push(struct rnic_stag_table *t, struct rnic_stag_mig *q)
{
	pthread_mutex_lock(&t->lock);
	q->held = NULL;
	*t->backlog_tail = q;
	t->backlog_tail = &q->held;
	t->has_backlog = true;
	pthread_mutex_unlock(&t->lock);
}

/* The answer, on the asker's worker. */
static void answer(struct rnic_worker *w, void *arg)
{
	(void)w;
	struct rnic_stag_mig *q = arg;
	q->done(q);
}

void rnic_stag_migrate(struct rnic_stag_mig *q)
{
	struct rnic_stag_table *t = rnic_stag_table_of(q->st);
	q->t0 = rte_rdtsc();
	q->fault = RNIC_STAG_INVALID;
	q->resolved = false;
	q->cmd.fn = answer;
	q->cmd.arg = q;
	q->cmd.done = 0;
	if (q->port < t->n_ports)
		__atomic_fetch_add(&t->ports[q->port]->stats.queries, 1, __ATOMIC_RELAXED);
	if (rte_ring_mp_enqueue(t->migq, q) == 0)
		return;
	/* the inbox is full: the backlog keeps it (never answered inline,
	 * the asker is in the middle of its receive path) */
	backlog_push(t, q);
}

void rnic_stag_mig_resolve(struct rnic_stack *st, struct rnic_stag_mig *q)
{
	struct rnic_stag_table *t = rnic_stag_table_of(st);
	unsigned owner = rnic_stag_port(q->stag);
	q->fault = RNIC_STAG_INVALID;
	q->resolved = true;
	if (q->port >= t->n_ports)
		return;
	struct stag_port *b = t->ports[q->port];
	uint32_t idx = stag_index(q->stag);
	pthread_mutex_lock(&t->lock);
	if (owner >= t->n_ports) {
		b->stats.rejects_bad_port++;
		goto out;
	}
	/* the owner's list of the STags it generated */
	struct rnic_mem *m = t->ports[owner]->slot[idx];
	if (m == NULL || m->stag != q->stag) {
		b->stats.rejects_unknown++;
		goto out;
	}
	if (!m->valid) {
		b->stats.rejects_invalid++;
		goto out;
	}
	if (stag_import_find(b, q->stag) != NULL) {   /* another QP asked first */
		q->fault = RNIC_STAG_OK;
		goto out;
	}
	struct rnic_mem *e = calloc(1, sizeof(*e));
	if (e == NULL) {
		b->stats.rejects_unknown++;
		goto out;
	}
	/* the mapping as the owner has it: STag, range, address, rights, PD */
	*e = *m;
	e->kind = RNIC_MEM_IMPORT;
	e->mw_type = m->kind == RNIC_MEM_MW ? m->mw_type : 0;
	e->port = q->port;
	e->parent = NULL;
	e->binds = 0;
	e->imported_by = 0;
	memset(e->retired, 0, sizeof(e->retired));
	e->origin = m;
	e->valid = 1;
	e->next = b->imp[idx];
	__atomic_store_n(&b->imp[idx], e, __ATOMIC_RELEASE);
	__atomic_fetch_or(&m->imported_by, 1u << q->port, __ATOMIC_ACQ_REL);
	b->stats.imported++;
	b->stats.imports_live++;
	q->fault = RNIC_STAG_OK;
out:
	pthread_mutex_unlock(&t->lock);
}

static bool deliver(struct rnic_stag_table *t, struct rnic_stag_mig *q)
{
	if (q->port < t->n_ports) {
		uint64_t us = rnic_tsc_to_us(rte_rdtsc() - q->t0);
		struct rnic_stag_port_stats *s = &t->ports[q->port]->stats;
		if (us > s->query_us_max)
			s->query_us_max = us;
	}
	return rnic_worker_call(q->w, &q->cmd) == 0;
}

void stag_reclaim(struct rnic_stag_table *t, bool all)
{
	struct rnic_stack *st = t->st;
	for (struct rnic_mem **pp = &t->retired; *pp != NULL;) {
		struct rnic_mem *e = *pp;
		bool safe = true;
		for (unsigned i = 0; !all && i < st->n_workers && i < RNIC_MAX_WORKERS; i++)
			/* a loop that started after the revoke has ended */
			if (__atomic_load_n(&st->workers[i]->stats.loops, __ATOMIC_RELAXED) <
			    e->retired[i] + 2)
				safe = false;
		if (!safe) {
			pp = &e->next;
			continue;
		}
		*pp = e->next;
		free(e);
	}
}

unsigned rnic_stag_mig_poll(struct rnic_worker *w, void *arg)
{
	(void)arg;
	struct rnic_stag_table *t = rnic_stag_table_of(w->st);
	if (t == NULL || w->id != 0)
		return 0;
	unsigned work = 0;
	struct rnic_stag_mig *qs[MIG_BURST];
	if (t->has_backlog && !t->hold) {
		pthread_mutex_lock(&t->lock);
		struct rnic_stag_mig *l = t->backlog;
		t->backlog = NULL;
		t->backlog_tail = &t->backlog;
		t->has_backlog = false;
		pthread_mutex_unlock(&t->lock);
		while (l != NULL) {
			struct rnic_stag_mig *q = l;
			l = l->held;
			if (!q->resolved)
				rnic_stag_mig_resolve(w->st, q);
			if (!deliver(t, q))
				backlog_push(t, q);
			work++;
		}
	}
	unsigned n = rte_ring_sc_dequeue_burst(t->migq, (void **)qs, MIG_BURST, NULL);
	for (unsigned i = 0; i < n; i++) {
		struct rnic_stag_mig *q = qs[i];
		if (!t->hold)
			rnic_stag_mig_resolve(w->st, q);
		if (t->hold || !deliver(t, q))
			backlog_push(t, q);
	}
	work += n;
	if (t->retired != NULL) {
		pthread_mutex_lock(&t->lock);
		stag_reclaim(t, false);
		pthread_mutex_unlock(&t->lock);
	}
	return work;
}

int rnic_stag_mig_hold(struct rnic_stack *st, bool hold)
{
	struct rnic_stag_table *t = rnic_stag_table_of(st);
	if (t == NULL)
		return -EINVAL;
	t->hold = hold;
	return 0;
}

unsigned rnic_stag_mig_waiting(struct rnic_stack *st)
{
	struct rnic_stag_table *t = rnic_stag_table_of(st);
	if (t == NULL)
		return 0;
	unsigned n = rte_ring_count(t->migq);
	pthread_mutex_lock(&t->lock);
	for (struct rnic_stag_mig *q = t->backlog; q != NULL; q = q->held)
		n++;
	pthread_mutex_unlock(&t->lock);
	return n;
}
