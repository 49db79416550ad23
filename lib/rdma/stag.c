/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * STag tables (see stag.h). Per port: slots for the STags the port
 * generates (the index is the slot, the key is bumped every time a slot is
 * reused, index 0 is never handed out), and chains of imports hashed by the
 * index of the STag they copy (at most one import per owner port and
 * index, so a chain is never longer than the number of ports).
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <rte_random.h>

#include "engine/stack.h"
#include "engine/worker.h"
#include "rdma/stag.h"
#include "rdma/stag_table.h"
#include "rdma/rdma.h"

struct rnic_stag_table *rnic_stag_table_of(const struct rnic_stack *st)
{
	const struct rnic_rdma_stack *rs = rnic_rdma_st(st);
	return rs ? rs->stags : NULL;
}

static struct stag_port *port_of(const struct rnic_stag_table *t, unsigned port)
{
	return t != NULL && port < t->n_ports ? t->ports[port] : NULL;
}

int rnic_stag_table_create(struct rnic_stack *st)
{
	struct rnic_stag_table *t = calloc(1, sizeof(*t));
	if (t == NULL)
		return -ENOMEM;
	pthread_mutex_init(&t->lock, NULL);
	t->st = st;
	t->n_ports = st->n_ports ? st->n_ports : 1;
	for (unsigned p = 0; p < t->n_ports; p++) {
		struct stag_port *sp = calloc(1, sizeof(*sp));
		if (sp == NULL) {
			rnic_rdma_st(st)->stags = t;
			rnic_stag_table_free(st);
			return -ENOMEM;
		}
		/* hand out low indices first; keys start random */
		for (uint32_t i = STAG_SLOTS - 1; i >= 1; i--)
			sp->free[sp->n_free++] = i;
		for (uint32_t i = 0; i < STAG_SLOTS; i++)
			sp->key[i] = (uint8_t)rte_rand();
		t->ports[p] = sp;
	}
	int rc = rnic_stag_mig_init(st, t);
	rnic_rdma_st(st)->stags = t;
	if (rc != 0)
		rnic_stag_table_free(st);
	return rc;
}

void rnic_stag_table_free(struct rnic_stack *st)
{
	struct rnic_stag_table *t = rnic_stag_table_of(st);
	if (t == NULL)
		return;
	rnic_stag_mig_fini(t);
	for (unsigned p = 0; p < t->n_ports; p++) {
		struct stag_port *sp = t->ports[p];
		if (sp == NULL)
			continue;
		for (uint32_t i = 0; i < STAG_SLOTS; i++)
			for (struct rnic_mem *e = sp->imp[i], *n; e != NULL; e = n) {
				n = e->next;
				free(e);
			}
		free(sp);
	}
	stag_reclaim(t, true);
	pthread_mutex_destroy(&t->lock);
	free(t);
	rnic_rdma_st(st)->stags = NULL;
}

int rnic_stag_insert(struct rnic_stack *st, struct rnic_mem *m)
{
	struct rnic_stag_table *t = rnic_stag_table_of(st);
	struct stag_port *sp = port_of(t, m->port);
	if (sp == NULL)
		return -EINVAL;
	pthread_mutex_lock(&t->lock);
	if (sp->n_free == 0) {
		pthread_mutex_unlock(&t->lock);
		return -ENOSPC;
	}
	uint32_t idx = sp->free[--sp->n_free];
	m->stag = (uint32_t)m->port << RNIC_STAG_PORT_SHIFT | idx << 8 | sp->key[idx];
	m->imported_by = 0;
	__atomic_store_n(&sp->slot[idx], m, __ATOMIC_RELEASE);
	sp->stats.generated++;
	pthread_mutex_unlock(&t->lock);
	return 0;
}

/* Unlink every import of @p m under @p stag, clear its invalid bit and put
 * it on the reclaim list. Under t->lock. */
static void revoke_locked(struct rnic_stag_table *t, const struct rnic_stack *st,
			  struct rnic_mem *m, uint32_t stag)
{
	uint32_t mask = __atomic_exchange_n(&m->imported_by, 0, __ATOMIC_ACQ_REL);
	uint32_t idx = stag_index(stag);
	for (unsigned p = 0; mask != 0 && p < t->n_ports; p++) {
		if (!(mask & (1u << p)))
			continue;
		mask &= ~(1u << p);
		struct stag_port *sp = t->ports[p];
		for (struct rnic_mem **pp = &sp->imp[idx]; *pp != NULL;) {
			struct rnic_mem *e = *pp;
			if (e->origin != m) {
				pp = &e->next;
				continue;
			}
			__atomic_store_n(&e->valid, 0, __ATOMIC_RELEASE);
			/* readers walking the chain keep going through e->next,
			 * which stays as it is until e is freed */
			__atomic_store_n(pp, e->next, __ATOMIC_RELEASE);
			for (unsigned i = 0; i < st->n_workers && i < RNIC_MAX_WORKERS; i++)
				e->retired[i] = __atomic_load_n(&st->workers[i]->stats.loops,
								__ATOMIC_RELAXED);
			e->origin = NULL;
			e->next = t->retired;
			t->retired = e;
			sp->stats.imports_live--;
			sp->stats.revoked++;
		}
	}
}

void rnic_stag_revoke(const struct rnic_stack *st, struct rnic_mem *m, uint32_t stag)
{
	struct rnic_stag_table *t = rnic_stag_table_of(st);
	if (t == NULL || __atomic_load_n(&m->imported_by, __ATOMIC_ACQUIRE) == 0)
		return;
	pthread_mutex_lock(&t->lock);
	revoke_locked(t, st, m, stag);
	pthread_mutex_unlock(&t->lock);
}

static void quiesce(struct rnic_worker *w, void *arg)
{
	(void)w;
	(void)arg;
}

void rnic_stag_remove(struct rnic_stack *st, struct rnic_mem *m)
{
	struct rnic_stag_table *t = rnic_stag_table_of(st);
	struct stag_port *sp = port_of(t, rnic_stag_port(m->stag));
	uint32_t idx = stag_index(m->stag);
	m->valid = 0;
	pthread_mutex_lock(&t->lock);
	revoke_locked(t, st, m, m->stag);
	if (sp != NULL && sp->slot[idx] == m) {
		__atomic_store_n(&sp->slot[idx], NULL, __ATOMIC_RELEASE);
		sp->key[idx]++;
		sp->free[sp->n_free++] = idx;
	}
	pthread_mutex_unlock(&t->lock);
	/* a worker that loaded the slot before the store may still be placing:
	 * one pass of every worker's loop ends that */
	if (st->running)
		for (unsigned i = 0; i < st->n_workers; i++)
			rnic_worker_call_sync(st->workers[i], quiesce, NULL);
}

struct rnic_mem *rnic_stag_find(const struct rnic_stack *st, uint32_t stag)
{
	const struct stag_port *sp = port_of(rnic_stag_table_of(st), rnic_stag_port(stag));
	if (sp == NULL)
		return NULL;
	struct rnic_mem *m = __atomic_load_n(&sp->slot[stag_index(stag)], __ATOMIC_ACQUIRE);
	if (m == NULL || m->stag != stag)
		return NULL;
	return m;
}

/* The checks common to an owner's entry and an import. */
static uint8_t *check_entry(const struct rnic_mem *m, const void *pd, uint32_t qpn,
			    uint64_t to, uint64_t len, int access, enum rnic_stag_fault *err)
{
	if (m->pd != pd || (m->mw_type == 2 && m->qpn != qpn)) {
		*err = RNIC_STAG_PD;
		return NULL;
	}
	if ((m->access & access) != access) {
		*err = RNIC_STAG_ACCESS;
		return NULL;
	}
	if (to + len < to) {
		*err = RNIC_STAG_TO_WRAP;
		return NULL;
	}
	if (to < m->va || to + len > m->va + m->len) {
		*err = RNIC_STAG_BOUNDS;
		return NULL;
	}
	*err = RNIC_STAG_OK;
	return m->addr + (to - m->va);
}

uint8_t *rnic_stag_check(const struct rnic_stack *st, uint32_t stag,
			 const void *pd, uint32_t qpn, uint64_t to, uint64_t len,
			 int access, enum rnic_stag_fault *err)
{
	struct rnic_mem *m = rnic_stag_find(st, stag);
	if (m == NULL || !m->valid) {
		*err = RNIC_STAG_INVALID;
		return NULL;
	}
	return check_entry(m, pd, qpn, to, len, access, err);
}

struct rnic_mem *stag_import_find(const struct stag_port *sp, uint32_t stag)
{
	for (struct rnic_mem *e = __atomic_load_n(&sp->imp[stag_index(stag)], __ATOMIC_ACQUIRE);
	     e != NULL; e = __atomic_load_n(&e->next, __ATOMIC_ACQUIRE))
		if (e->stag == stag)
			return e;
	return NULL;
}

uint8_t *rnic_stag_check_at(const struct rnic_stack *st, unsigned port, uint32_t stag,
			    const void *pd, uint32_t qpn, uint64_t to, uint64_t len,
			    int access, enum rnic_stag_fault *err)
{
	const struct rnic_stag_table *t = rnic_stag_table_of(st);
	unsigned owner = rnic_stag_port(stag);
	const struct stag_port *sp = port_of(t, port);
	if (owner == port || sp == NULL || owner >= t->n_ports)
		return rnic_stag_check(st, stag, pd, qpn, to, len, access, err);
	const struct rnic_mem *e = stag_import_find(sp, stag);
	if (e == NULL) {
		*err = RNIC_STAG_MIGRATE;
		return NULL;
	}
	/* the copy's own invalid bit, and the owner's: an invalidation on the
	 * owner clears both, but a window re-bound under a new key changes
	 * the owner's STag before its copies are revoked */
	const struct rnic_mem *o = __atomic_load_n(&e->origin, __ATOMIC_ACQUIRE);
	if (!__atomic_load_n(&e->valid, __ATOMIC_ACQUIRE) || o == NULL || !o->valid ||
	    o->stag != stag) {
		*err = RNIC_STAG_INVALID;
		return NULL;
	}
	return check_entry(e, pd, qpn, to, len, access, err);
}

uint32_t rnic_stag_root(const struct rnic_stack *st, uint32_t stag)
{
	const struct rnic_mem *m = rnic_stag_find(st, stag);
	if (m == NULL || !m->valid)
		return 0;
	if (m->kind == RNIC_MEM_MW)
		return m->parent != NULL ? m->parent->stag : 0;
	return m->stag;
}

enum rnic_stag_fault rnic_stag_invalidate(const struct rnic_stack *st,
					uint32_t stag, const void *pd)
{
	struct rnic_mem *m = rnic_stag_find(st, stag);
	if (m == NULL || !m->valid)
		return RNIC_STAG_INVALID;
	if (m->pd != pd)
		return RNIC_STAG_PD;
	/* an MR from reg_mr is not invalidated by STag (IBA 10.6.6; RFC 5040
	 * 6.1: "Cannot Invalidate"): only windows are, and of those only
	 * type 2 (IBA o10-37.2.26: a type 1 window is unbound by binding it
	 * again with length 0, never invalidated, locally or remotely) */
	if (m->kind == RNIC_MEM_MR || (m->kind == RNIC_MEM_MW && m->mw_type != 2))
		return RNIC_STAG_ACCESS;
	m->valid = 0;
	/* every port's copy goes before the invalidation completes */
	rnic_stag_revoke(st, m, stag);
	if (m->kind == RNIC_MEM_MW && m->parent != NULL) {
		__atomic_fetch_sub(&m->parent->binds, 1, __ATOMIC_RELAXED);
		m->parent = NULL;
	}
	return RNIC_STAG_OK;
}

enum rnic_stag_fault rnic_stag_invalidate_remote(const struct rnic_stack *st, uint32_t stag,
						const void *pd, uint32_t qpn)
{
	const struct rnic_mem *m = rnic_stag_find(st, stag);
	/* a type 2 window answers only to the QP it is bound to (IBA
	 * 10.6.7.2.2): a Send with Invalidate from another QP of the PD
	 * may not kill it */
	if (m != NULL && m->valid && m->pd == pd && m->kind == RNIC_MEM_MW &&
	    m->mw_type == 2 && m->qpn != qpn)
		return RNIC_STAG_PD;
	return rnic_stag_invalidate(st, stag, pd);
}

int rnic_stag_port_stats(const struct rnic_stack *st, unsigned port,
			 struct rnic_stag_port_stats *s)
{
	struct rnic_stag_table *t = rnic_stag_table_of(st);
	const struct stag_port *sp = port_of(t, port);
	if (sp == NULL)
		return -EINVAL;
	pthread_mutex_lock(&t->lock);
	*s = sp->stats;
	pthread_mutex_unlock(&t->lock);
	return 0;
}
