/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * The CM channel's event queue (lib/verbs/cm.c): events wait in arrival
 * order on the channel and are also linked to the id they are about and to
 * the listener they name, so an id's destroy forgets its own events in
 * time proportional to their number, not to the channel's queue (a
 * teardown of 200,000 ids with their events queued was O(N^2)).
 * Control path only; the queue's mutex guards all three lists.
 */
#ifndef RNIC_VERBS_CM_EVQ_H
#define RNIC_VERBS_CM_EVQ_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/queue.h>

#include "rnic/rnic_cm.h"

struct cm_evq_owner;

/** One queued event. */
struct cm_evq_node {
	struct rnic_cm_event ev;
	TAILQ_ENTRY(cm_evq_node) q;           /**< on the channel, in order */
	TAILQ_ENTRY(cm_evq_node) by_id;       /**< on the owner of ev.id */
	TAILQ_ENTRY(cm_evq_node) by_listener; /**< on the owner of ev.listen_id */
	struct cm_evq_owner *id_owner;        /**< never NULL while queued */
	struct cm_evq_owner *l_owner;         /**< NULL: names no listener */
};

TAILQ_HEAD(cm_evq_list, cm_evq_node);

/** The events an id (embedded in struct rnic_cm_id) is named in. */
struct cm_evq_owner {
	struct cm_evq_list as_id;       /**< events about this id */
	struct cm_evq_list as_listener; /**< events naming it as listen_id */
};

/** A channel's queue. */
struct cm_evq {
	pthread_mutex_t lock;
	struct cm_evq_list all;
	uint64_t forget_visits; /**< nodes cm_evq_forget() touched (tests) */
};

void cm_evq_init(struct cm_evq *q);
/** Free every queued event and the lock. */
void cm_evq_fini(struct cm_evq *q);
void cm_evq_owner_init(struct cm_evq_owner *o);

/**
 * Queue @p n (any thread): about @p id_owner, naming @p l_owner (NULL:
 * none) as its listener. The queue owns @p n until popped or forgotten.
 */
void cm_evq_push(struct cm_evq *q, struct cm_evq_node *n, struct cm_evq_owner *id_owner,
		 struct cm_evq_owner *l_owner);

/** The oldest event, unlinked (the caller frees it), or NULL. */
struct cm_evq_node *cm_evq_pop(struct cm_evq *q);

/**
 * An id is going: free the events about @p o and clear the listen_id of
 * those naming it as their listener. O(those events).
 * @return the number of events freed.
 */
unsigned cm_evq_forget(struct cm_evq *q, struct cm_evq_owner *o);

/**
 * A request ended before the application took it: when the oldest queued
 * event about @p o is its CONNECT_REQUEST (not popped yet), free every
 * event about @p o and @return true (nobody will see the id); else change
 * nothing and @return false. O(those events).
 */
bool cm_evq_withdraw(struct cm_evq *q, struct cm_evq_owner *o);

#endif
