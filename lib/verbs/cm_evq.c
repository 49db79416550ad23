/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The CM channel's event queue (cm_evq.h): one list in arrival order for
 * rnic_cm_get_event(), two per id (events about it, events naming it as
 * the listener) for its destroy.
 */
#include <stdlib.h>

#include "verbs/cm_evq.h"

void cm_evq_init(struct cm_evq *q)
{
	pthread_mutex_init(&q->lock, NULL);
	TAILQ_INIT(&q->all);
	q->forget_visits = 0;
}

void cm_evq_fini(struct cm_evq *q)
{
	struct cm_evq_node *n;
	while ((n = TAILQ_FIRST(&q->all)) != NULL) {
		TAILQ_REMOVE(&q->all, n, q);
		free(n);
	}
	pthread_mutex_destroy(&q->lock);
}

void cm_evq_owner_init(struct cm_evq_owner *o)
{
	TAILQ_INIT(&o->as_id);
	TAILQ_INIT(&o->as_listener);
}

void cm_evq_push(struct cm_evq *q, struct cm_evq_node *n, struct cm_evq_owner *id_owner,
		 struct cm_evq_owner *l_owner)
{
	n->id_owner = id_owner;
	n->l_owner = l_owner;
	pthread_mutex_lock(&q->lock);
	TAILQ_INSERT_TAIL(&q->all, n, q);
	TAILQ_INSERT_TAIL(&id_owner->as_id, n, by_id);
	if (l_owner != NULL)
		TAILQ_INSERT_TAIL(&l_owner->as_listener, n, by_listener);
	pthread_mutex_unlock(&q->lock);
}

/* Take @p n off every list it is on (lock held). */
static void evq_unlink(struct cm_evq *q, struct cm_evq_node *n)
{
	TAILQ_REMOVE(&q->all, n, q);
	TAILQ_REMOVE(&n->id_owner->as_id, n, by_id);
	if (n->l_owner != NULL)
		TAILQ_REMOVE(&n->l_owner->as_listener, n, by_listener);
}

struct cm_evq_node *cm_evq_pop(struct cm_evq *q)
{
	pthread_mutex_lock(&q->lock);
	struct cm_evq_node *n = TAILQ_FIRST(&q->all);
	if (n != NULL)
		evq_unlink(q, n);
	pthread_mutex_unlock(&q->lock);
	return n;
}

unsigned cm_evq_forget(struct cm_evq *q, struct cm_evq_owner *o)
{
	unsigned freed = 0;
	struct cm_evq_node *n;
	pthread_mutex_lock(&q->lock);
	while ((n = TAILQ_FIRST(&o->as_id)) != NULL) {
		evq_unlink(q, n);
		free(n);
		freed++;
		q->forget_visits++;
	}
	while ((n = TAILQ_FIRST(&o->as_listener)) != NULL) {
		TAILQ_REMOVE(&o->as_listener, n, by_listener);
		n->l_owner = NULL;
		n->ev.listen_id = NULL;
		q->forget_visits++;
	}
	pthread_mutex_unlock(&q->lock);
	return freed;
}

bool cm_evq_withdraw(struct cm_evq *q, struct cm_evq_owner *o)
{
	pthread_mutex_lock(&q->lock);
	struct cm_evq_node *n = TAILQ_FIRST(&o->as_id);
	bool unseen = n != NULL && n->ev.type == RNIC_CM_EVENT_CONNECT_REQUEST;
	while (unseen && (n = TAILQ_FIRST(&o->as_id)) != NULL) {
		evq_unlink(q, n);
		free(n);
		q->forget_visits++;
	}
	pthread_mutex_unlock(&q->lock);
	return unseen;
}
