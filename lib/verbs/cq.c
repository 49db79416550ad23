/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Completion queues and completion channels.
 *
 * A CQ is a lock-free ring of struct ibv_wc: workers enqueue (several may,
 * when QPs on different workers share a CQ; each QP's completions come from
 * its one worker, in order), application threads dequeue. Arming is an
 * atomic word: the worker that pushes a completion matching the arm takes
 * it (exchange to 0) and queues the CQ on its channel, whose eventfd wakes
 * the waiter. The CQ's completion handler (comp_vector) names the worker
 * that owns its events (seed 003); re-binding is issue 6's.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <rte_common.h>
#include <rte_lcore.h>

#include "verbs/verbs.h"

static unsigned ring_seq;

struct ibv_comp_channel *rnic_create_comp_channel(struct ibv_context *ctx)
{
	struct rnic_device *d = dev_of(ctx);
	char name[RTE_RING_NAMESIZE];
	struct rnic_comp_channel *ch = calloc(1, sizeof(*ch));
	if (ch == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	ch->ch.context = ctx;
	ch->ch.fd = eventfd(0, EFD_CLOEXEC);
	snprintf(name, sizeof(name), "rnic_ch%u", __atomic_fetch_add(&ring_seq, 1, __ATOMIC_RELAXED));
	/* a CQ is queued at most once per arm: as many as CQs can exist */
	ch->events = rte_ring_create(name, 65536, rte_socket_id(), 0);
	if (ch->ch.fd < 0 || ch->events == NULL) {
		if (ch->ch.fd >= 0)
			close(ch->ch.fd);
		rte_ring_free(ch->events);
		free(ch);
		errno = ENOMEM;
		return NULL;
	}
	pthread_mutex_lock(&d->lock);
	d->n_chan++;
	pthread_mutex_unlock(&d->lock);
	return &ch->ch;
}

int rnic_destroy_comp_channel(struct ibv_comp_channel *ich)
{
	struct rnic_comp_channel *ch = (struct rnic_comp_channel *)ich;
	struct rnic_device *d = dev_of(ich->context);
	if (__atomic_load_n(&ch->users, __ATOMIC_ACQUIRE) != 0)
		return EBUSY;
	close(ich->fd);
	rte_ring_free(ch->events);
	pthread_mutex_lock(&d->lock);
	d->n_chan--;
	pthread_mutex_unlock(&d->lock);
	free(ch);
	return 0;
}

struct ibv_cq *rnic_create_cq(struct ibv_context *ctx, int cqe, void *cq_context,
			      struct ibv_comp_channel *channel, int comp_vector)
{
	struct rnic_device *d = dev_of(ctx);
	char name[RTE_RING_NAMESIZE];
	if (cqe < 1 || cqe > RNIC_MAX_CQE || comp_vector < 0 ||
	    comp_vector >= ctx->num_comp_vectors) {
		errno = EINVAL;
		return NULL;
	}
	struct rnic_cq *cq = calloc(1, sizeof(*cq));
	if (cq == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	snprintf(name, sizeof(name), "rnic_cq%u", __atomic_fetch_add(&ring_seq, 1, __ATOMIC_RELAXED));
	/* a ring of N holds N-1 */
	cq->ring = rte_ring_create_elem(name, sizeof(struct ibv_wc),
					rte_align32pow2((uint32_t)cqe + 1), rte_socket_id(), 0);
	if (cq->ring == NULL) {
		free(cq);
		errno = ENOMEM;
		return NULL;
	}
	cq->cq.context = ctx;
	cq->cq.channel = channel;
	cq->cq.cq_context = cq_context;
	cq->cq.cqe = (int)rte_ring_get_capacity(cq->ring);
	pthread_mutex_init(&cq->cq.mutex, NULL);
	pthread_cond_init(&cq->cq.cond, NULL);
	cq->handler = (unsigned)comp_vector;
	if (channel != NULL) {
		cq->chan = (struct rnic_comp_channel *)channel;
		__atomic_fetch_add(&cq->chan->users, 1, __ATOMIC_RELAXED);
	}
	pthread_mutex_lock(&d->lock);
	d->n_cq++;
	cq->cq.handle = d->n_cq;
	pthread_mutex_unlock(&d->lock);
	return &cq->cq;
}

int rnic_destroy_cq(struct ibv_cq *icq)
{
	struct rnic_cq *cq = cq_of(icq);
	struct rnic_device *d = dev_of(icq->context);
	if (__atomic_load_n(&cq->users, __ATOMIC_ACQUIRE) != 0 ||
	    cq->events_acked != cq->events_got)
		return EBUSY;
	if (cq->chan != NULL)
		__atomic_fetch_sub(&cq->chan->users, 1, __ATOMIC_RELAXED);
	rte_ring_free(cq->ring);
	pthread_cond_destroy(&icq->cond);
	pthread_mutex_destroy(&icq->mutex);
	pthread_mutex_lock(&d->lock);
	d->n_cq--;
	pthread_mutex_unlock(&d->lock);
	free(cq);
	return 0;
}

int rnic_cq_push(struct rnic_cq *cq, const struct ibv_wc *wc, bool solicited)
{
	if (rte_ring_mp_enqueue_elem(cq->ring, (void *)(uintptr_t)wc, sizeof(*wc)) != 0) {
		__atomic_fetch_add(&cq->overruns, 1, __ATOMIC_RELAXED);
		return -ENOSPC;
	}
	__atomic_fetch_add(&cq->completions, 1, __ATOMIC_RELAXED);
	int armed = __atomic_load_n(&cq->armed, __ATOMIC_ACQUIRE);
	/* next-completion arms fire on anything; solicited-only ones on
	 * solicited receives and on errors (IBA 11.4.2.2) */
	if (armed == 0 || (armed == 2 && !solicited && wc->status == IBV_WC_SUCCESS))
		return 0;
	if (__atomic_exchange_n(&cq->armed, 0, __ATOMIC_ACQ_REL) == 0)
		return 0;   /* another producer took the event */
	if (cq->chan != NULL) {
		__atomic_fetch_add(&cq->events, 1, __ATOMIC_RELAXED);
		if (rte_ring_mp_enqueue(cq->chan->events, cq) == 0) {
			uint64_t one = 1;
			ssize_t n = write(cq->chan->ch.fd, &one, sizeof(one));
			(void)n;
		}
	}
	return 0;
}

int rnic_cq_poll(struct ibv_cq *icq, int n, struct ibv_wc *wc)
{
	if (n <= 0)
		return n < 0 ? -EINVAL : 0;
	return (int)rte_ring_mc_dequeue_burst_elem(cq_of(icq)->ring, wc, sizeof(*wc),
						   (unsigned)n, NULL);
}

int rnic_cq_req_notify(struct ibv_cq *icq, int solicited_only)
{
	struct rnic_cq *cq = cq_of(icq);
	if (cq->chan == NULL)
		return EINVAL;
	int want = solicited_only ? 2 : 1;
	/* a next-completion arm is not weakened by a later solicited one */
	int cur = __atomic_load_n(&cq->armed, __ATOMIC_ACQUIRE);
	if (cur != 1)
		__atomic_store_n(&cq->armed, want, __ATOMIC_RELEASE);
	return 0;
}

int rnic_get_cq_event(struct ibv_comp_channel *ich, struct ibv_cq **out, void **cq_context)
{
	struct rnic_comp_channel *ch = (struct rnic_comp_channel *)ich;
	for (;;) {
		void *p;
		if (rte_ring_mc_dequeue(ch->events, &p) == 0) {
			struct rnic_cq *cq = p;
			*out = &cq->cq;
			*cq_context = cq->cq.cq_context;
			__atomic_fetch_add(&cq->events_got, 1, __ATOMIC_RELAXED);
			return 0;
		}
		uint64_t v;
		ssize_t n = read(ich->fd, &v, sizeof(v));
		if (n < 0 && errno == EAGAIN)
			return EAGAIN;
		if (n < 0 && errno != EINTR)
			return errno;
	}
}

void rnic_ack_cq_events(struct ibv_cq *icq, unsigned int nevents)
{
	__atomic_fetch_add(&cq_of(icq)->events_acked, nevents, __ATOMIC_RELAXED);
}

void rnic_cq_stats(struct ibv_cq *icq, struct rnic_cq_stats *s)
{
	struct rnic_cq *cq = cq_of(icq);
	s->completions = __atomic_load_n(&cq->completions, __ATOMIC_RELAXED);
	s->events = __atomic_load_n(&cq->events, __ATOMIC_RELAXED);
	s->overruns = __atomic_load_n(&cq->overruns, __ATOMIC_RELAXED);
}
