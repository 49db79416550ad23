/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * STag table (see stag.h). Slots are pointers; the index is the slot, the
 * key is bumped every time a slot is reused, and index 0 is never handed
 * out (an all-zero STag is never valid).
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

#include <rte_random.h>

#include "engine/stack.h"
#include "engine/worker.h"
#include "verbs/stag.h"
#include "verbs/verbs.h"

#define STAG_SLOTS (1u << 16)

struct rnic_stag_table {
	pthread_mutex_t lock;
	struct rnic_mem *slot[STAG_SLOTS];
	uint8_t key[STAG_SLOTS];
	uint32_t free[STAG_SLOTS];
	uint32_t n_free;
};

static struct rnic_stag_table *table(const struct rnic_stack *st)
{
	const struct rnic_verbs_stack *vs = verbs_st(st);
	return vs ? vs->stags : NULL;
}

int rnic_stag_table_create(struct rnic_stack *st)
{
	struct rnic_stag_table *t = calloc(1, sizeof(*t));
	if (t == NULL)
		return -ENOMEM;
	pthread_mutex_init(&t->lock, NULL);
	/* hand out low indices first; keys start random */
	for (uint32_t i = STAG_SLOTS - 1; i >= 1; i--)
		t->free[t->n_free++] = i;
	for (uint32_t i = 0; i < STAG_SLOTS; i++)
		t->key[i] = (uint8_t)rte_rand();
	verbs_st(st)->stags = t;
	return 0;
}

void rnic_stag_table_free(struct rnic_stack *st)
{
	struct rnic_stag_table *t = table(st);
	if (t == NULL)
		return;
	pthread_mutex_destroy(&t->lock);
	free(t);
	verbs_st(st)->stags = NULL;
}

int rnic_stag_insert(struct rnic_stack *st, struct rnic_mem *m)
{
	struct rnic_stag_table *t = table(st);
	pthread_mutex_lock(&t->lock);
	if (t->n_free == 0) {
		pthread_mutex_unlock(&t->lock);
		return -ENOSPC;
	}
	uint32_t idx = t->free[--t->n_free];
	m->stag = idx << 8 | t->key[idx];
	__atomic_store_n(&t->slot[idx], m, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&t->lock);
	return 0;
}

static void quiesce(struct rnic_worker *w, void *arg)
{
	(void)w;
	(void)arg;
}

void rnic_stag_remove(struct rnic_stack *st, struct rnic_mem *m)
{
	struct rnic_stag_table *t = table(st);
	uint32_t idx = m->stag >> 8;
	m->valid = 0;
	pthread_mutex_lock(&t->lock);
	if (idx < STAG_SLOTS && t->slot[idx] == m) {
		__atomic_store_n(&t->slot[idx], NULL, __ATOMIC_RELEASE);
		t->key[idx]++;
		t->free[t->n_free++] = idx;
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
	const struct rnic_stag_table *t = table(st);
	uint32_t idx = stag >> 8;
	if (t == NULL || idx >= STAG_SLOTS)
		return NULL;
	struct rnic_mem *m = __atomic_load_n(&t->slot[idx], __ATOMIC_ACQUIRE);
	if (m == NULL || m->stag != stag)
		return NULL;
	return m;
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
	if (m->pd != pd || (m->kind == RNIC_MEM_MW && m->mw_type == 2 && m->qpn != qpn)) {
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

enum rnic_stag_fault rnic_stag_invalidate(const struct rnic_stack *st,
					uint32_t stag, const void *pd)
{
	struct rnic_mem *m = rnic_stag_find(st, stag);
	if (m == NULL || !m->valid)
		return RNIC_STAG_INVALID;
	if (m->pd != pd)
		return RNIC_STAG_PD;
	/* an MR from reg_mr is not invalidated by STag (IBA 10.6.6; RFC 5040
	 * 6.1: "Cannot Invalidate"): only windows are */
	if (m->kind == RNIC_MEM_MR)
		return RNIC_STAG_ACCESS;
	m->valid = 0;
	if (m->kind == RNIC_MEM_MW && m->parent != NULL) {
		__atomic_fetch_sub(&m->parent->binds, 1, __ATOMIC_RELAXED);
		m->parent = NULL;
	}
	return RNIC_STAG_OK;
}
