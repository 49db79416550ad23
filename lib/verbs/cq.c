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

#include "engine/worker.h"
#include "verbs/verbs.h"

static unsigned ring_seq;

static void quiesce(struct rnic_worker *w, void *arg)
{
	(void)w;
	(void)arg;
}

/* The worker queue of the handler a CQ is bound to now. */
static struct rte_ring *handler_evq(const struct rnic_device *d, unsigned h)
{
	struct rnic_worker *w = d->st->workers[d->handlers[h].worker];
	return ((struct rnic_verbs_worker *)w->proto[RNIC_PROTO_VERBS])->evq;
}

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
	/* a semaphore: one count per queued event, so the fd is readable
	 * exactly while an event waits */
	ch->ch.fd = eventfd(0, EFD_CLOEXEC | EFD_SEMAPHORE);
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
		return -EBUSY;
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
	    (unsigned)comp_vector >= d->n_handlers) {
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
	uint32_t h = 0;
	for (uint32_t i = 1; i < RNIC_MAX_CQ; i++)
		if (d->cqs[i] == NULL) {
			h = i;
			break;
		}
	if (h == 0) {
		pthread_mutex_unlock(&d->lock);
		if (cq->chan != NULL)
			__atomic_fetch_sub(&cq->chan->users, 1, __ATOMIC_RELAXED);
		rte_ring_free(cq->ring);
		free(cq);
		errno = ENOSPC;
		return NULL;
	}
	cq->cq.handle = h;
	__atomic_store_n(&d->cqs[h], cq, __ATOMIC_RELEASE);
	d->n_cq++;
	pthread_mutex_unlock(&d->lock);
	return &cq->cq;
}

int rnic_destroy_cq(struct ibv_cq *icq)
{
	struct rnic_cq *cq = cq_of(icq);
	struct rnic_device *d = dev_of(icq->context);
	if (__atomic_load_n(&cq->users, __ATOMIC_ACQUIRE) != 0 ||
	    cq->events_acked != cq->events_got ||
	    __atomic_load_n(&cq->async_acked, __ATOMIC_ACQUIRE) != cq->async_got)
		return -EBUSY;
	pthread_mutex_lock(&d->lock);
	__atomic_store_n(&d->cqs[icq->handle], NULL, __ATOMIC_RELEASE);
	d->n_cq--;
	pthread_mutex_unlock(&d->lock);
	/* an event being delivered may still hold the pointer */
	if (d->st->running)
		for (unsigned i = 0; i < d->st->n_workers; i++)
			rnic_worker_call_sync(d->st->workers[i], quiesce, NULL);
	if (cq->chan != NULL)
		__atomic_fetch_sub(&cq->chan->users, 1, __ATOMIC_RELAXED);
	rnic_async_purge(d, icq);   /* its CQ_ERR, if still unread */
	rte_ring_free(cq->ring);
	pthread_cond_destroy(&icq->cond);
	pthread_mutex_destroy(&icq->mutex);
	free(cq);
	return 0;
}

int rnic_cq_push(struct rnic_cq *cq, const struct ibv_wc *wc, bool solicited)
{
	if (rte_ring_mp_enqueue_elem(cq->ring, (void *)(uintptr_t)wc, sizeof(*wc)) != 0) {
		rnic_cq_overrun(cq);
		return -ENOSPC;
	}
	__atomic_fetch_add(&cq->completions, 1, __ATOMIC_RELAXED);
	/* the other half of the fence in rnic_cq_req_notify(): the
	 * completion is visible before the arm is read, so a consumer that
	 * armed and then found the ring empty is seen armed here */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	int armed = __atomic_load_n(&cq->armed, __ATOMIC_ACQUIRE);
	/* next-completion arms fire on anything; solicited-only ones on
	 * solicited receives and on errors (IBA 11.4.2.2) */
	if (armed == 0 || (armed == 2 && !solicited && wc->status == IBV_WC_SUCCESS))
		return 0;
	if (__atomic_exchange_n(&cq->armed, 0, __ATOMIC_ACQ_REL) == 0)
		return 0;   /* another producer took the event */
	/* the event belongs to the CQ's completion handler (seed 003): its
	 * worker delivers it, in handler priority order */
	const struct rnic_device *d = dev_of(cq->cq.context);
	unsigned h = __atomic_load_n(&cq->handler, __ATOMIC_ACQUIRE);
	if (rte_ring_mp_enqueue(handler_evq(d, h), (void *)(uintptr_t)cq->cq.handle) != 0)
		__atomic_store_n(&cq->armed, 1, __ATOMIC_RELEASE);   /* cannot happen: sized */
	return 0;
}

void rnic_cq_overrun(struct rnic_cq *cq)
{
	__atomic_fetch_add(&cq->overruns, 1, __ATOMIC_RELAXED);
	/* the CQ is in error from now on (IBA 11.6.2: a CQ overrun is an
	 * affiliated asynchronous error); the event is raised once */
	if (__atomic_exchange_n(&cq->err, 1, __ATOMIC_ACQ_REL) != 0)
		return;
	struct ibv_async_event ev = { .event_type = IBV_EVENT_CQ_ERR };
	ev.element.cq = &cq->cq;
	rnic_async_raise(dev_of(cq->cq.context), &ev);
}

/* Deliver one CQ event: the callback, else the channel. */
static void deliver(struct rnic_cq *cq)
{
	__atomic_fetch_add(&cq->events, 1, __ATOMIC_RELAXED);
	if (cq->cb != NULL) {
		cq->cb(&cq->cq, cq->cb_arg);
	} else if (cq->chan != NULL && rte_ring_mp_enqueue(cq->chan->events, cq) == 0) {
		uint64_t one = 1;
		ssize_t n = write(cq->chan->ch.fd, &one, sizeof(one));
		(void)n;
	}
}

unsigned rnic_cq_events_poll(struct rnic_worker *w, void *arg)
{
	struct rnic_verbs_worker *vw = arg;
	const struct rnic_device *d = verbs_st(w->st)->dev;
	void *q[32];
	struct rnic_cq *due[32];
	unsigned n = rte_ring_sc_dequeue_burst(vw->evq, q, RTE_DIM(q), NULL), k = 0;
	if (n == 0 || d == NULL)
		return 0;
	for (unsigned i = 0; i < n; i++) {
		uint32_t hd = (uint32_t)(uintptr_t)q[i];
		struct rnic_cq *cq = hd < RNIC_MAX_CQ ?
			__atomic_load_n(&d->cqs[hd], __ATOMIC_ACQUIRE) : NULL;
		if (cq == NULL)
			continue;   /* destroyed meanwhile */
		unsigned h = __atomic_load_n(&cq->handler, __ATOMIC_ACQUIRE);
		if (d->handlers[h].worker != w->id) {
			/* re-bound while the event was on its way: pass it on,
			 * exactly once, to the handler it belongs to now */
			rte_ring_mp_enqueue(handler_evq(d, h), q[i]);
			vw->forwarded++;
			continue;
		}
		/* insertion by priority, stable: higher first */
		unsigned j = k++;
		while (j > 0 && d->handlers[due[j - 1]->handler].prio < d->handlers[h].prio) {
			due[j] = due[j - 1];
			j--;
		}
		due[j] = cq;
	}
	for (unsigned i = 0; i < k; i++)
		deliver(due[i]);
	vw->events += k;
	return n;
}

int rnic_modify_cq_handler(struct ibv_cq *icq, int handler)
{
	struct rnic_cq *cq = cq_of(icq);
	struct rnic_device *d = dev_of(icq->context);
	if (handler < 0 || (unsigned)handler >= d->n_handlers)
		return -EINVAL;
	__atomic_store_n(&cq->handler, (unsigned)handler, __ATOMIC_RELEASE);
	__atomic_fetch_add(&cq->rebinds, 1, __ATOMIC_RELAXED);
	return 0;
}

int rnic_set_comp_handler(struct ibv_cq *icq, void (*fn)(struct ibv_cq *, void *), void *arg)
{
	struct rnic_cq *cq = cq_of(icq);
	if (__atomic_load_n(&cq->armed, __ATOMIC_ACQUIRE) != 0)
		return -EBUSY;   /* set it before arming */
	cq->cb_arg = arg;
	__atomic_store_n(&cq->cb, fn, __ATOMIC_RELEASE);
	return 0;
}

int rnic_query_handlers(struct ibv_context *ctx)
{
	return (int)dev_of(ctx)->n_handlers;
}

int rnic_add_handler(struct ibv_context *ctx, unsigned worker, int prio)
{
	struct rnic_device *d = dev_of(ctx);
	if (worker >= d->st->n_workers)
		return -EINVAL;
	pthread_mutex_lock(&d->lock);
	if (d->n_handlers >= RNIC_MAX_HANDLERS) {
		pthread_mutex_unlock(&d->lock);
		return -ENOSPC;
	}
	unsigned h = d->n_handlers;
	d->handlers[h] = (struct rnic_handler){ .worker = worker, .prio = prio };
	__atomic_store_n(&d->n_handlers, h + 1, __ATOMIC_RELEASE);
	ctx->num_comp_vectors = (int)(h + 1);
	pthread_mutex_unlock(&d->lock);
	return (int)h;
}

int rnic_set_handler_priority(struct ibv_context *ctx, int handler, int prio)
{
	struct rnic_device *d = dev_of(ctx);
	if (handler < 0 || (unsigned)handler >= d->n_handlers)
		return -EINVAL;
	__atomic_store_n(&d->handlers[handler].prio, prio, __ATOMIC_RELEASE);
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
	if (cq->chan == NULL && cq->cb == NULL)
		return EINVAL;
	int want = solicited_only ? 2 : 1;
	/* a next-completion arm is not weakened by a later solicited one */
	int cur = __atomic_load_n(&cq->armed, __ATOMIC_ACQUIRE);
	if (cur != 1)
		__atomic_store_n(&cq->armed, want, __ATOMIC_RELEASE);
	/*
	 * The caller polls next, and sleeps if the ring is empty. Store (arm)
	 * then load (ring) on this side, store (ring) then load (arm) on the
	 * producer's (rnic_cq_push): without a full fence on both sides the
	 * CPU may satisfy each load before the other side's store is visible
	 * (x86 reorders a store after a later load), so the poll misses the
	 * completion and the producer misses the arm: no event, for ever.
	 */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	return 0;
}

int rnic_get_cq_event(struct ibv_comp_channel *ich, struct ibv_cq **out, void **cq_context)
{
	struct rnic_comp_channel *ch = (struct rnic_comp_channel *)ich;
	uint64_t v;
	/* take one count (blocks unless the fd is O_NONBLOCK); the event was
	 * queued before its count was added. A signal whose handler has no
	 * SA_RESTART ends the wait with -EINTR, as libibverbs' read() of its
	 * channel does (with SA_RESTART the kernel restarts the read). */
	for (;;) {
		ssize_t n = read(ich->fd, &v, sizeof(v));
		if (n == (ssize_t)sizeof(v))
			break;
		if (n < 0 && errno == EAGAIN)
			return -EAGAIN;
		if (n < 0)
			return -errno;
	}
	void *p;
	if (rte_ring_mc_dequeue(ch->events, &p) != 0)
		return -EAGAIN;   /* cannot happen: a count means an event */
	struct rnic_cq *cq = p;
	*out = &cq->cq;
	*cq_context = cq->cq.cq_context;
	__atomic_fetch_add(&cq->events_got, 1, __ATOMIC_RELAXED);
	return 0;
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
	s->rebinds = __atomic_load_n(&cq->rebinds, __ATOMIC_RELAXED);
	s->handler = __atomic_load_n(&cq->handler, __ATOMIC_RELAXED);
}

/* The names of the completion statuses, generated from the enum's symbols:
 * ibv_wc_status_str() is libibverbs code, which rnic does not link. */
#define WC_NAME(st) [IBV_WC_##st] = #st
static const char *const wc_names[] = {
	WC_NAME(SUCCESS), WC_NAME(LOC_LEN_ERR), WC_NAME(LOC_QP_OP_ERR),
	WC_NAME(LOC_EEC_OP_ERR), WC_NAME(LOC_PROT_ERR), WC_NAME(WR_FLUSH_ERR),
	WC_NAME(MW_BIND_ERR), WC_NAME(BAD_RESP_ERR), WC_NAME(LOC_ACCESS_ERR),
	WC_NAME(REM_INV_REQ_ERR), WC_NAME(REM_ACCESS_ERR), WC_NAME(REM_OP_ERR),
	WC_NAME(RETRY_EXC_ERR), WC_NAME(RNR_RETRY_EXC_ERR), WC_NAME(LOC_RDD_VIOL_ERR),
	WC_NAME(REM_INV_RD_REQ_ERR), WC_NAME(REM_ABORT_ERR), WC_NAME(INV_EECN_ERR),
	WC_NAME(INV_EEC_STATE_ERR), WC_NAME(FATAL_ERR), WC_NAME(RESP_TIMEOUT_ERR),
	WC_NAME(GENERAL_ERR),
};
#undef WC_NAME

const char *rnic_wc_status_str(enum ibv_wc_status s)
{
	return (unsigned)s < sizeof(wc_names) / sizeof(wc_names[0]) && wc_names[s] != NULL
		? wc_names[s] : "unknown";
}
