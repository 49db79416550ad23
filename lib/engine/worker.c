/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Worker loop: bounded pollers, TX buffering, redirect and command rings.
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <rte_cycles.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_pause.h>

#include "engine/stack.h"
#include "engine/worker_internal.h"
#include "port/port.h"

#define REDIRECT_RING_SIZE 4096
#define CMD_RING_SIZE      1024
#define IDLE_LOOPS_BEFORE_SLEEP 256
#define LINK_POLL_US       100000
#define ARP_POLL_US        100000

static uint64_t stuck_tsc(void);
static void loop_was_stuck(struct rnic_worker *w, const struct rnic_poller *p,
			   uint64_t cycles);

int rnic_worker_add_poller(struct rnic_worker *w, const char *name,
			   rnic_poll_fn fn, void *arg)
{
	if (w->n_pollers == RNIC_MAX_POLLERS)
		return -ENOSPC;
	struct rnic_poller *p = &w->pollers[w->n_pollers++];
	memset(p, 0, sizeof(*p));
	p->name = name;
	p->fn = fn;
	p->arg = arg;
	return 0;
}

/* Poller: RX bursts from every port's queue of this worker. */
static unsigned poll_rx(struct rnic_worker *w, void *arg)
{
	struct rte_mbuf *pkts[RNIC_BURST];
	const struct rnic_net_hooks *net = w->st->net;
	unsigned work = 0;
	(void)arg;

	w->rx_backlog = false;
	for (unsigned i = 0; i < w->st->n_ports; i++) {
		struct rnic_port *p = w->st->ports[i];
		uint16_t n = rnic_port_rx(p, (uint16_t)w->id, pkts, RNIC_BURST);
		w->rx_backlog |= n == RNIC_BURST;
		for (uint16_t k = 0; k < n; k++) {
			if (k + 1 < n)
				rte_prefetch0(rte_pktmbuf_mtod(pkts[k + 1], void *));
			w->stats.rx_bytes += rte_pktmbuf_pkt_len(pkts[k]);
			if (likely(net != NULL))
				net->input(w, p, pkts[k]);
			else
				rnic_worker_drop(w, RNIC_DROP_ETH_TYPE, pkts[k]);
		}
		w->stats.rx_pkts += n;
		work += n;
	}
	return work;
}

/* Poller: frames other workers steered to us; they resume at L4. */
static unsigned poll_redirect(struct rnic_worker *w, void *arg)
{
	struct rte_mbuf *pkts[RNIC_BURST];
	(void)arg;

	unsigned n = rte_ring_dequeue_burst(w->redirect, (void **)pkts,
					    RNIC_BURST, NULL);
	for (unsigned k = 0; k < n; k++) {
		struct rte_mbuf *m = pkts[k];
		struct rnic_port *p = m->port < w->st->n_ports ?
			w->st->ports[m->port] : NULL;
		if (p == NULL || w->st->net == NULL) {
			rnic_worker_drop(w, RNIC_DROP_IP_NO_ROUTE, m);
			continue;
		}
		w->st->net->input_l4(w, p, m);
	}
	w->stats.redirected_in += n;
	return n;
}

/* Poller: application commands. */
static unsigned poll_cmd(struct rnic_worker *w, void *arg)
{
	struct rnic_cmd *cmds[16];
	(void)arg;

	unsigned n = rte_ring_dequeue_burst(w->cmd, (void **)cmds, 16, NULL);
	for (unsigned k = 0; k < n; k++) {
		struct rnic_cmd *c = cmds[k];
		c->fn(w, c->arg);
		__atomic_store_n(&c->done, 1, __ATOMIC_RELEASE);
	}
	w->stats.cmds += n;
	return n;
}

/*
 * Poller: expired timers. A worker that comes back from a stall (a
 * preempted or oversubscribed core) finds its RX queues full: the ACKs that
 * would stop a retransmission timer may be waiting there. While a poll
 * still fills whole bursts the timers wait, for at most
 * TIMER_DEFER_LOOPS loops, so input is read before a timeout is declared.
 */
#define TIMER_DEFER_LOOPS 64

static unsigned poll_timers(struct rnic_worker *w, void *arg)
{
	(void)arg;
	if (w->rx_backlog && w->timers_deferred < TIMER_DEFER_LOOPS) {
		w->timers_deferred++;
		w->stats.timers_deferred++;
		return 0;
	}
	w->timers_deferred = 0;
	return rnic_timer_run(&w->timers, w->now_tsc);
}

static unsigned poll_faults(struct rnic_worker *w, void *arg)
{
	unsigned work = 0;
	(void)arg;
	for (unsigned i = 0; i < w->st->n_ports; i++)
		work += rnic_port_fault_poll(w->st->ports[i], (uint16_t)w->id);
	return work;
}

/* Timer: link state on worker 0, for PMDs without LSC interrupts. */
static void link_timer_cb(struct rnic_timer *t, void *arg)
{
	struct rnic_worker *w = arg;
	for (unsigned i = 0; i < w->st->n_ports; i++)
		rnic_port_poll_link(w->st->ports[i]);
	/* a lost link nobody could take over yet: maybe a survivor now */
	rnic_failover_check(w->st);
	rnic_timer_arm(&w->timers, t, w->now_tsc, LINK_POLL_US);
}

/*
 * Worker 0's link timer fires first as this one-shot: when the worker
 * starts (on its lcore, or on the first rnic_worker_poll()) it announces
 * every port with a gratuitous ARP, then becomes the link poller.
 */
static void announce_timer_cb(struct rnic_timer *t, void *arg)
{
	struct rnic_worker *w = arg;
	for (unsigned i = 0; i < w->st->n_ports; i++) {
		rnic_port_poll_link(w->st->ports[i]);
		if (w->st->net != NULL)
			w->st->net->announce(w, w->st->ports[i]);
	}
	rnic_timer_init(t, link_timer_cb, w);
	rnic_timer_arm(&w->timers, t, w->now_tsc, LINK_POLL_US);
}

/* Timer: the network layer ages ARP entries and pending frames of every
 * port. */
static void arp_timer_cb(struct rnic_timer *t, void *arg)
{
	struct rnic_worker *w = arg;
	for (unsigned i = 0; w->st->net != NULL && i < w->st->n_ports; i++)
		w->st->net->poll(w, w->st->ports[i]);
	rnic_timer_arm(&w->timers, t, w->now_tsc, ARP_POLL_US);
}

static unsigned poll_flush(struct rnic_worker *w, void *arg)
{
	(void)arg;
	return rnic_worker_flush(w);
}

void rnic_worker_tx(struct rnic_worker *w, struct rnic_port *p,
		    struct rte_mbuf *m)
{
	struct rnic_txbuf *b = &w->txb[p->idx];

	b->pkts[b->n++] = m;
	if (b->n == RNIC_TXBUF)
		rnic_worker_flush(w);
}

unsigned rnic_worker_flush(struct rnic_worker *w)
{
	unsigned sent_total = 0;

	for (unsigned i = 0; i < w->st->n_ports; i++) {
		struct rnic_txbuf *b = &w->txb[i];
		if (b->n == 0)
			continue;
		struct rnic_port *p = w->st->ports[i];
		uint16_t sent = 0;
		uint64_t bytes = 0;
		/* count before sending: a sent frame belongs to the PMD */
		for (uint16_t k = 0; k < b->n; k++)
			bytes += rte_pktmbuf_pkt_len(b->pkts[k]);
		/* a few retries: a ring or NIC queue may be momentarily full */
		for (int tries = 0; tries < 4 && sent < b->n; tries++)
			sent += rnic_port_tx(p, (uint16_t)(w->id % p->nb_txq),
					     b->pkts + sent, b->n - sent);
		for (uint16_t k = sent; k < b->n; k++) {
			bytes -= rte_pktmbuf_pkt_len(b->pkts[k]);
			rnic_worker_drop(w, RNIC_DROP_TX_FULL, b->pkts[k]);
		}
		w->stats.tx_pkts += sent;
		w->stats.tx_bytes += bytes;
		w->stats.tx_flushes++;
		sent_total += sent;
		b->n = 0;
	}
	return sent_total;
}

int rnic_worker_redirect(struct rnic_worker *w, unsigned owner,
			 struct rte_mbuf *m)
{
	if (owner >= w->st->n_workers ||
	    rte_ring_enqueue(w->st->workers[owner]->redirect, m) != 0) {
		rnic_worker_drop(w, RNIC_DROP_REDIRECT_FULL, m);
		return -ENOBUFS;
	}
	w->stats.redirected_out++;
	return 0;
}

int rnic_worker_call(struct rnic_worker *w, struct rnic_cmd *c)
{
	if (c == NULL || c->fn == NULL)
		return -EINVAL;
	c->done = 0;
	return rte_ring_enqueue(w->cmd, c) == 0 ? 0 : -ENOBUFS;
}

/*
 * Post and spin until the worker has run it: the release store of c->done
 * in poll_cmd() pairs with the acquire load here, so whatever fn wrote is
 * visible to the caller afterwards. After CALL_SPINS pauses (a few µs: a
 * running worker has answered by then) the caller yields its CPU between
 * looks: on a machine with more runnable threads than CPUs the worker may
 * be waiting for the very CPU this thread spins on (rdma-gateway's accepts
 * ran at a few a second with 512 requests queued at load 25, and iWARP's
 * passive MPA timer closed the ones that waited 10 s).
 */
#define CALL_SPINS 4096
int rnic_worker_call_sync(struct rnic_worker *w,
			  void (*fn)(struct rnic_worker *, void *), void *arg)
{
	if (fn == NULL)
		return -EINVAL;
	if (!w->st->running || rte_lcore_id() == w->lcore) {
		fn(w, arg);
		return 0;
	}
	struct rnic_cmd c = { .fn = fn, .arg = arg };
	while (rnic_worker_call(w, &c) == -ENOBUFS)
		rte_pause();
	for (unsigned spins = 0; !__atomic_load_n(&c.done, __ATOMIC_ACQUIRE); spins++) {
		/* the stack stopped after we looked: its worker may have left
		 * (its last drain of commands before ours came in), and nobody
		 * would run the command; the callers run what is left */
		if (!__atomic_load_n(&w->st->running, __ATOMIC_ACQUIRE)) {
			rte_spinlock_lock(&w->orphan_lock);
			poll_cmd(w, NULL);
			rte_spinlock_unlock(&w->orphan_lock);
		} else if (spins < CALL_SPINS) {
			rte_pause();
		} else {
			sched_yield();
		}
	}
	return 0;
}

static __thread char thread_token;

const void *rnic_thread_token(void)
{
	return &thread_token;
}

bool rnic_worker_driven_here(const struct rnic_worker *w)
{
	return !w->st->running && !w->in_loop && w->driver == &thread_token;
}

/*
 * One loop iteration. now_tsc is sampled once, for timers and protocols.
 * The clock is read again only after a poller that did work, and that
 * poller is charged the cycles since the last reading: its own call plus
 * the idle pollers just before it (a few ns each). Reading it after every
 * poller cost more than the pollers themselves where rdtsc is slow (about
 * 17 ns in the VMs we run on, times some 15 pollers a loop), and an idle
 * loop needs no timing at all. busy_cycles / work stays a poller's cost
 * per item, slightly high by the empty calls before it.
 */
unsigned rnic_worker_run_once(struct rnic_worker *w)
{
	unsigned total = 0;
	uint64_t t0, t1;

	w->now_tsc = t0 = rte_rdtsc();
	__atomic_store_n(&w->in_loop, true, __ATOMIC_RELEASE);
	for (unsigned i = 0; i < w->n_pollers; i++) {
		struct rnic_poller *p = &w->pollers[i];
		__atomic_store_n(&w->cur_poller, i, __ATOMIC_RELAXED);
		unsigned work = p->fn(w, p->arg);
		p->calls++;
		if (work) {
			t1 = rte_rdtsc();
			p->work += work;
			p->cycles += t1 - t0;
			if (unlikely(t1 - t0 >= stuck_tsc()))
				loop_was_stuck(w, p, t1 - t0);
			t0 = t1;
			total += work;
		}
	}
	__atomic_store_n(&w->in_loop, false, __ATOMIC_RELEASE);
	w->stats.loops++;
	if (total)
		w->stats.busy_loops++;
	return total;
}

static uint64_t stuck_tsc(void)
{
	static uint64_t tsc;
	if (tsc == 0)
		tsc = rte_get_tsc_hz() / 1000 * RNIC_STUCK_LOOP_MS;
	return tsc;
}

/* Cold: count the stuck loop and name the poller that held it (a poller
 * that did no work returned at once, so the one that worked is the one:
 * its cycles include at most the empty calls just before it). */
static void __rte_noinline __rte_cold loop_was_stuck(struct rnic_worker *w,
						     const struct rnic_poller *p,
						     uint64_t cycles)
{
	w->stats.stuck_loops++;
	w->stuck_poller = p->name;
	RTE_LOG(WARNING, USER1, "rnic: worker %u: poller %s held its loop %lu ms\n",
		w->id, p->name, (unsigned long)(cycles * 1000 / rte_get_tsc_hz()));
}

uint64_t rnic_worker_loop_age_ms(const struct rnic_worker *w, const char **poller)
{
	*poller = NULL;
	if (!__atomic_load_n(&w->in_loop, __ATOMIC_ACQUIRE))
		return 0;
	uint64_t start = __atomic_load_n(&w->now_tsc, __ATOMIC_RELAXED);
	uint64_t now = rte_rdtsc();
	unsigned i = __atomic_load_n(&w->cur_poller, __ATOMIC_RELAXED);
	if (now <= start || i >= w->n_pollers)
		return 0;
	*poller = w->pollers[i].name;
	return (now - start) * 1000 / rte_get_tsc_hz();
}

/*
 * After a loop that did @p work: in adaptive mode a run of
 * IDLE_LOOPS_BEFORE_SLEEP empty loops makes every further empty loop
 * sleep ~50 us (yielding a shared CPU); any work resets the count. Busy
 * mode never sleeps. @return whether it slept (counted in idle_sleeps).
 */
bool rnic_worker_idle(struct rnic_worker *w, enum rnic_poll_mode mode, unsigned work)
{
	if (work) {
		w->idle_loops = 0;
		return false;
	}
	if (mode != RNIC_POLL_ADAPTIVE || ++w->idle_loops <= IDLE_LOOPS_BEFORE_SLEEP)
		return false;
	struct timespec ts = { 0, 50000 };
	nanosleep(&ts, NULL);
	w->stats.idle_sleeps++;
	return true;
}

/* The lcore entry point: loop until told to stop, idling as above. */
int rnic_worker_main(void *arg)
{
	struct rnic_worker *w = arg;
	enum rnic_poll_mode mode = w->st->cfg.poll_mode;

	while (!__atomic_load_n(&w->stop, __ATOMIC_RELAXED))
		rnic_worker_idle(w, mode, rnic_worker_run_once(w));
	/* commands posted before the stop still run: their callers wait */
	while (poll_cmd(w, NULL) != 0)
		;
	rnic_worker_flush(w);
	return 0;
}

struct rnic_worker *rnic_worker_create(struct rnic_stack *st, unsigned id)
{
	char name[RTE_RING_NAMESIZE];
	struct rnic_worker *w = rte_zmalloc("rnic_worker", sizeof(*w),
					    RTE_CACHE_LINE_SIZE);
	if (w == NULL)
		return NULL;
	w->id = id;
	w->st = st;
	w->lcore = RTE_MAX_LCORE;
	snprintf(name, sizeof(name), "rnic_rd_%u_%u", st->id, id);
	w->redirect = rte_ring_create(name, REDIRECT_RING_SIZE, SOCKET_ID_ANY,
				      RING_F_SC_DEQ);
	snprintf(name, sizeof(name), "rnic_cmd_%u_%u", st->id, id);
	w->cmd = rte_ring_create(name, CMD_RING_SIZE, SOCKET_ID_ANY, RING_F_SC_DEQ);
	if (w->redirect == NULL || w->cmd == NULL) {
		rnic_worker_free(w);
		return NULL;
	}
	w->now_tsc = rte_rdtsc();
	rnic_timer_wheel_init(&w->timers, w->now_tsc);
	rnic_worker_add_poller(w, "rx", poll_rx, NULL);
	rnic_worker_add_poller(w, "redirect", poll_redirect, NULL);
	rnic_worker_add_poller(w, "cmd", poll_cmd, NULL);
	rnic_worker_add_poller(w, "timers", poll_timers, NULL);
	rnic_worker_add_poller(w, "faults", poll_faults, NULL);
	rnic_timer_init(&w->arp_timer, arp_timer_cb, w);
	rnic_timer_arm(&w->timers, &w->arp_timer, w->now_tsc, ARP_POLL_US);
	if (id == 0) {
		rnic_timer_init(&w->link_timer, announce_timer_cb, w);
		rnic_timer_arm(&w->timers, &w->link_timer, w->now_tsc, 0);
	}
	return w;
}

/* Protocols add their pollers after creation; flush must run last. */
int rnic_worker_finish_pollers(struct rnic_worker *w)
{
	return rnic_worker_add_poller(w, "tx_flush", poll_flush, NULL);
}

void rnic_worker_drain(struct rnic_worker *w)
{
	struct rte_mbuf *m;
	struct rnic_cmd *c;

	while (rte_ring_dequeue(w->redirect, (void **)&m) == 0)
		rte_pktmbuf_free(m);
	while (rte_ring_dequeue(w->cmd, (void **)&c) == 0) {
		c->fn(w, c->arg);
		__atomic_store_n(&c->done, 1, __ATOMIC_RELEASE);
	}
	for (unsigned i = 0; i < RNIC_MAX_PORTS; i++) {
		for (uint16_t k = 0; k < w->txb[i].n; k++)
			rte_pktmbuf_free(w->txb[i].pkts[k]);
		w->txb[i].n = 0;
	}
}

void rnic_worker_free(struct rnic_worker *w)
{
	if (w == NULL)
		return;
	rte_ring_free(w->redirect);
	rte_ring_free(w->cmd);
	rte_free(w);
}
