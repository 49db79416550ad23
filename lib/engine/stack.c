/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Stack lifecycle: ports, workers, protocol hooks; start/stop on lcores;
 * statistics and the status line.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>

#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_pause.h>

#include "engine/engine_internal.h"
#include "engine/stack.h"
#include "engine/worker_internal.h"
#include "port/port.h"

static volatile bool stop_flag;

/* port failover (end of this file) */
static void fo_attach(struct rnic_stack *st);
static void fo_detach(struct rnic_stack *st);
static void fo_gc(struct rnic_stack *st, bool all);

void rnic_request_stop(void)
{
	stop_flag = true;
}

static volatile sig_atomic_t stop_sig;   /* the first stop signal, 0: none */

/* Let the first stop signal do what it would have done without a handler. */
static void stop_hard(int sig)
{
	(void)sig;
	signal(stop_sig, SIG_DFL);
	raise(stop_sig);
}

/*
 * The first SIGINT or SIGTERM asks every rnic loop to stop; a second
 * one, or the grace running out (SIGALRM from a one-shot timer), ends the
 * process as the signal would have without a handler. Async-signal-safe:
 * a flag, signal(), setitimer(), raise().
 */
static unsigned stop_grace_ms;

static void on_stop_signal(int sig)
{
	if (stop_sig != 0) {
		stop_hard(sig);
		return;
	}
	stop_sig = sig;
	rnic_request_stop();
	signal(SIGALRM, stop_hard);
	struct itimerval it = {
		.it_value = { .tv_sec = stop_grace_ms / 1000,
			      .tv_usec = (stop_grace_ms % 1000) * 1000 },
	};
	setitimer(ITIMER_REAL, &it, NULL);
}

int rnic_stop_on_signals(unsigned grace_ms)
{
	struct sigaction sa = { .sa_handler = on_stop_signal };

	if (grace_ms == 0)
		return -EINVAL;
	stop_grace_ms = grace_ms;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGINT, &sa, NULL) != 0 || sigaction(SIGTERM, &sa, NULL) != 0)
		return -errno;
	return 0;
}

bool rnic_stop_requested(void)
{
	return stop_flag;
}

int rnic_stack_set_net(struct rnic_stack *st, const struct rnic_net_hooks *h)
{
	if (st == NULL || h == NULL || h->input == NULL || h->input_l4 == NULL ||
	    h->announce == NULL || h->poll == NULL || h->counts == NULL)
		return -EINVAL;
	if (st->net != NULL && st->net != h)
		return -EEXIST;
	st->net = h;
	return 0;
}

int rnic_stack_set_link(struct rnic_stack *st, unsigned port, bool up)
{
	if (st == NULL || port >= st->n_ports)
		return -EINVAL;
	return rnic_port_set_link(st->ports[port], up);
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
	if (idx >= st->n_workers) {
		errno = ENOENT;
		return NULL;
	}
	return st->workers[idx];
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
	fo_detach(st);
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
	fo_gc(st, true);
	for (unsigned i = st->n_workers; i-- > 0; )
		rnic_worker_free(st->workers[i]);
	for (unsigned i = st->n_ports; i-- > 0; )
		rnic_port_close(st->ports[i]);
	rte_free(st);
}

/* Open every configured port; each gets one RX/TX queue per worker where
 * the PMD has that many. */
static int stack_open_ports(struct rnic_stack *st)
{
	const struct rnic_config *cfg = &st->cfg;

	for (unsigned i = 0; i < cfg->n_ports; i++) {
		st->ports[i] = rnic_port_open(st, st->id, i, &cfg->ports[i], cfg->workers);
		if (st->ports[i] == NULL)
			return rte_errno ? -rte_errno : -ENODEV;
		/* fewer queues than workers: RX steered in software, TX
		 * queues shared under a lock (lib/port) */
		st->n_ports++;
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
		errno = rte_errno = EINVAL;
		return NULL;
	}
	rnic_telemetry_init();
	st = rte_zmalloc("rnic_stack", sizeof(*st), RTE_CACHE_LINE_SIZE);
	if (st == NULL) {
		errno = rte_errno = ENOMEM;
		return NULL;
	}
	st->cfg = *cfg;
	/* the id names the workers' rings, so take it first */
	if (rnic_registry_add(st) != 0) {
		rte_free(st);
		errno = rte_errno = ENOSPC;
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
		errno = rte_errno = -rc;
		return NULL;
	}
	fo_attach(st);
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
		w->driver = NULL;   /* its lcore drives it now */
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

/*
 * Wait until @p w's lcore has returned, at most until @p deadline (TSC).
 * @return false when it is still running then: a poller that never
 * returns (a spin on a peer's input, say) would otherwise hold the stop,
 * and with it the program's exit, for ever.
 */
static bool wait_worker(const struct rnic_worker *w, uint64_t deadline)
{
	while (rte_eal_get_lcore_state(w->lcore) == RUNNING) {
		if (rte_rdtsc() >= deadline)
			return false;
		rte_delay_us_sleep(1000);
	}
	rte_eal_wait_lcore(w->lcore);
	return true;
}

void rnic_stack_stop(struct rnic_stack *st)
{
	if (!st->running)
		return;
	for (unsigned i = 0; i < st->n_workers; i++)
		__atomic_store_n(&st->workers[i]->stop, true, __ATOMIC_RELEASE);
	uint64_t deadline = rte_rdtsc() + rte_get_tsc_hz() / 1000 * RNIC_STOP_WAIT_MS;
	st->abandoned = false;   /* a stop after an abandoned one looks again */
	for (unsigned i = 0; i < st->n_workers; i++) {
		struct rnic_worker *w = st->workers[i];
		if (w->lcore == RTE_MAX_LCORE)
			continue;
		if (!wait_worker(w, deadline)) {
			const char *poller;
			uint64_t ms = rnic_worker_loop_age_ms(w, &poller);
			fprintf(stderr, "rnic: worker %u did not stop within %u ms "
				"(in a loop for %lu ms, poller %s): left running, its "
				"stack is not freed\n", i, RNIC_STOP_WAIT_MS,
				(unsigned long)ms, poller != NULL ? poller : "?");
			st->abandoned = true;
			continue;
		}
		rnic_lcore_release(w->lcore);
		w->lcore = RTE_MAX_LCORE;
	}
	st->running = st->abandoned;
}

void rnic_stack_destroy(struct rnic_stack *st)
{
	unsigned protos = 0;

	if (st == NULL)
		return;
	rnic_stack_stop(st);
	if (st->abandoned)
		return;   /* a worker still runs on this memory */
	while (rnic_protocols[protos] != NULL)
		protos++;
	stack_teardown(st, protos);
}

unsigned rnic_worker_poll(struct rnic_stack *st, unsigned idx)
{
	if (st->running || idx >= st->n_workers)
		return 0;
	st->workers[idx]->driver = rnic_thread_token();
	return rnic_worker_run_once(st->workers[idx]);
}

unsigned rnic_stack_poll(struct rnic_stack *st)
{
	unsigned work = 0;
	for (unsigned i = 0; st != NULL && i < st->n_workers; i++)
		work += rnic_worker_poll(st, i);
	return work;
}

int rnic_stack_fault_set_ce(struct rnic_stack *st, unsigned port, double rx_pct,
			    double tx_pct)
{
	if (st == NULL || port >= st->n_ports || !(rx_pct >= 0 && rx_pct <= 100) ||
	    !(tx_pct >= 0 && tx_pct <= 100))
		return -EINVAL;
	rnic_port_fault_set_ce(st->ports[port], rx_pct, tx_pct);
	return 0;
}

void rnic_stack_drops_each(const struct rnic_stack *st,
			   void (*fn)(const char *cause, uint64_t n, void *arg), void *arg)
{
	for (unsigned c = 0; c < RNIC_DROP_MAX; c++) {
		uint64_t n = 0;
		for (unsigned i = 0; i < st->n_workers; i++)
			n += st->workers[i]->drops[c];
		if (n != 0)
			fn(rnic_drop_name((enum rnic_drop_cause)c), n, arg);
	}
}

void rnic_stack_stats(const struct rnic_stack *st, struct rnic_stack_stats *s)
{
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
		s->fault_ce_marked += fs.ce_marked;
		s->fault_delayed += fs.delayed;
		s->mbufs_in_use += rnic_port_mbufs_in_use(st->ports[i]);
		s->drops += rnic_port_link_down_drops(st->ports[i]);
	}
	if (st->net != NULL)
		st->net->counts(st, &s->arp_requests, &s->arp_replies);
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

/* --- port failover --------------------------------------------------------
 *
 * Address takeover, as Linux bonding's active-backup mode does it between
 * hosts: when a port's link goes down, another port of the stack that is up
 * on the same subnet (the survivor) starts answering for the failed port's
 * address (ARP, IPv4, ICMP), announces it with a gratuitous ARP, and every
 * worker moves the connections it owns from the failed port to the
 * survivor. Frames of those flows keep their source address; lost data is
 * recovered by the transports' own retransmission.
 *
 * Control plane only: the takeover decision runs under fo.lock (any thread:
 * worker 0's link poll and kick command, rnic_port_failover()); the address
 * lists are written there and read by the workers without locks; each
 * worker moves its own TCBs from a command on its ring.
 */

/* One takeover: a command per worker. Freed once every command's done flag
 * is set (poll_cmd writes it after the function returns), so the memory is
 * reclaimed lazily: at the next takeover, and when the stack goes. */
struct fo_event {
	struct fo_event *next;
	struct rnic_stack *st;
	unsigned failed, survivor;
	uint64_t down_tsc;
	unsigned n_cmds;
	volatile unsigned workers_done;
	struct rnic_cmd cmd[RNIC_MAX_WORKERS];
};

static bool fo_event_finished(const struct fo_event *ev)
{
	for (unsigned i = 0; i < ev->n_cmds; i++)
		if (!__atomic_load_n(&ev->cmd[i].done, __ATOMIC_ACQUIRE))
			return false;
	return true;
}

/* Free finished events (all of them when @p all). Caller holds fo.lock. */
static void fo_gc(struct rnic_stack *st, bool all)
{
	struct fo_event **pp = (struct fo_event **)&st->fo.events;
	while (*pp != NULL) {
		struct fo_event *ev = *pp;
		if (all || fo_event_finished(ev)) {
			*pp = ev->next;
			rte_free(ev);
		} else {
			pp = &ev->next;
		}
	}
}

/* On each worker: worker 0 announces the survivor's addresses, then every
 * protocol moves its connections, then the subscribers run. The last
 * worker to finish times the failover. */
static void fo_worker_move(struct rnic_worker *w, void *arg)
{
	struct fo_event *ev = arg;
	struct rnic_stack *st = ev->st;
	uint64_t moved = 0;

	if (!__atomic_load_n(&st->fo.dead, __ATOMIC_ACQUIRE)) {
		struct rnic_port *fp = st->ports[ev->failed];
		struct rnic_port *sp = st->ports[ev->survivor];
		if (w->id == 0 && st->net != NULL)
			st->net->announce(w, sp);
		for (unsigned i = 0; rnic_protocols[i] != NULL; i++)
			if (rnic_protocols[i]->failover != NULL)
				moved += rnic_protocols[i]->failover(w, fp, sp);
		unsigned n = __atomic_load_n(&st->fo.n_subs, __ATOMIC_ACQUIRE);
		for (unsigned i = 0; i < n; i++)
			st->fo.subs[i].cb(w, ev->failed, ev->survivor, st->fo.subs[i].arg);
	}
	__atomic_fetch_add(&st->fo.conns_moved, moved, __ATOMIC_RELAXED);
	if (__atomic_add_fetch(&ev->workers_done, 1, __ATOMIC_ACQ_REL) == ev->n_cmds) {
		uint64_t now = rte_rdtsc();
		uint64_t us = now > ev->down_tsc ? rnic_tsc_to_us(now - ev->down_tsc) : 0;
		st->fo.last_us = us;
		if (us > st->fo.max_us)
			st->fo.max_us = us;
		__atomic_fetch_add(&st->fo.completed, 1, __ATOMIC_RELEASE);
	}
}

/* Give address @p ip, whose own port is @p home, to port @p to. Caller
 * holds fo.lock. Readers see it in to's list before it leaves any other. */
static void fo_give_addr(struct rnic_stack *st, uint32_t ip, struct rnic_port *home,
			 struct rnic_port *to)
{
	(void)st;
	if (home == to) {             /* back home: its own port serves it again */
		__atomic_store_n(&home->taken_by, 0, __ATOMIC_RELEASE);
		return;
	}
	for (unsigned i = 0; i < RNIC_MAX_PORTS; i++) {
		if (to->taken_ip[i] == ip)
			break;
		if (to->taken_ip[i] == 0) {
			__atomic_store_n(&to->taken_ip[i], ip, __ATOMIC_RELEASE);
			if (to->n_taken < i + 1)
				__atomic_store_n(&to->n_taken, i + 1, __ATOMIC_RELEASE);
			break;
		}
	}
	if (home != NULL)
		__atomic_store_n(&home->taken_by, (uint8_t)(to->idx + 1), __ATOMIC_RELEASE);
}

/* A port up on one of @p f's subnets (IPv4 or IPv6) with an MTU at least f's (the connections
 * keep their segment size), preferring one that serves its own address:
 * a port whose address was taken over and whose link came back is only
 * second choice (taking over gives it its own address back). NULL if none. */
static struct rnic_port *fo_pick_survivor(struct rnic_stack *st, struct rnic_port *f)
{
	struct rnic_port *second = NULL;
	for (unsigned i = 0; i < st->n_ports; i++) {
		struct rnic_port *s = st->ports[i];
		if (s == f || !s->link_up || !rnic_port_shares_subnet(s, f) || s->mtu < f->mtu)
			continue;
		if (s->taken_by == 0)
			return s;
		if (second == NULL)
			second = s;
	}
	return second;
}

/* The port whose own address is @p ip, or NULL. */
static struct rnic_port *fo_home(struct rnic_stack *st, uint32_t ip)
{
	for (unsigned i = 0; i < st->n_ports; i++)
		if (st->ports[i]->ip == ip)
			return st->ports[i];
	return NULL;
}

/*
 * Move every address @p f answers for to @p s and make the event that
 * moves the connections. Caller holds fo.lock. @return the event (posted
 * by the caller), or NULL when memory ran out (the addresses moved anyway;
 * the connections follow on their next output, lib/net sends through the
 * serving port).
 */
static struct fo_event *fo_takeover(struct rnic_stack *st, struct rnic_port *f,
				    struct rnic_port *s)
{
	if (f->taken_by == 0)
		fo_give_addr(st, f->ip, f, s);
	for (unsigned i = 0; i < RNIC_MAX_PORTS; i++) {
		uint32_t ip = f->taken_ip[i];
		if (ip == 0)
			continue;
		fo_give_addr(st, ip, fo_home(st, ip), s);
		__atomic_store_n(&f->taken_ip[i], 0, __ATOMIC_RELEASE);
	}
	__atomic_store_n(&f->n_taken, 0, __ATOMIC_RELEASE);
	f->fo_needed = false;
	st->fo.last_failed = f->idx;
	st->fo.last_survivor = s->idx;
	__atomic_fetch_add(&st->fo.failovers, 1, __ATOMIC_RELEASE);

	fo_gc(st, false);
	struct fo_event *ev = rte_zmalloc("rnic_failover", sizeof(*ev), 0);
	if (ev == NULL)
		return NULL;
	ev->st = st;
	ev->failed = f->idx;
	ev->survivor = s->idx;
	ev->down_tsc = !f->link_up && f->link_down_tsc ? f->link_down_tsc : rte_rdtsc();
	ev->n_cmds = st->n_workers;
	for (unsigned i = 0; i < ev->n_cmds; i++) {
		ev->cmd[i].fn = fo_worker_move;
		ev->cmd[i].arg = ev;
	}
	ev->next = st->fo.events;
	st->fo.events = ev;
	return ev;
}

/* Run the event's command on every worker: inline when the stack is not
 * started (the caller drives it), else through the command rings; with
 * @p wait, until every worker has run it. */
static void fo_post(struct rnic_stack *st, struct fo_event *ev, bool wait)
{
	if (!st->running) {
		for (unsigned i = 0; i < ev->n_cmds; i++) {
			ev->cmd[i].fn(st->workers[i], ev);
			__atomic_store_n(&ev->cmd[i].done, 1, __ATOMIC_RELEASE);
		}
		return;
	}
	for (unsigned i = 0; i < ev->n_cmds; i++)
		while (rnic_worker_call(st->workers[i], &ev->cmd[i]) == -ENOBUFS)
			rte_pause();
	if (wait)
		while (!fo_event_finished(ev))
			rte_pause();
}

void rnic_failover_check(struct rnic_stack *st)
{
	struct fo_event *evs[RNIC_MAX_PORTS];
	unsigned n = 0;
	bool any = false;

	for (unsigned i = 0; i < st->n_ports; i++)
		any |= st->ports[i]->fo_needed;
	if (!any || __atomic_load_n(&st->fo.dead, __ATOMIC_ACQUIRE))
		return;
	rte_spinlock_lock(&st->fo.lock);
	for (unsigned i = 0; i < st->n_ports; i++) {
		struct rnic_port *f = st->ports[i];
		if (!f->fo_needed)
			continue;
		if (f->link_up) {          /* back before anyone took over */
			f->fo_needed = false;
			continue;
		}
		if (f->taken_by != 0 && f->n_taken == 0) {
			f->fo_needed = false;  /* nothing of its own left to move */
			continue;
		}
		struct rnic_port *s = fo_pick_survivor(st, f);
		if (s == NULL) {
			/* counted once per link loss; the link poll retries */
			if (!st->fo.nosurv_noted[i]) {
				st->fo.nosurv_noted[i] = true;
				__atomic_fetch_add(&st->fo.no_survivor, 1, __ATOMIC_RELAXED);
			}
			continue;
		}
		struct fo_event *ev = fo_takeover(st, f, s);
		if (ev != NULL)
			evs[n++] = ev;
	}
	rte_spinlock_unlock(&st->fo.lock);
	for (unsigned i = 0; i < n; i++)
		fo_post(st, evs[i], false);
}

/* Worker 0's command: look at the links now rather than at the next poll. */
static void fo_kick_fn(struct rnic_worker *w, void *arg)
{
	(void)arg;
	__atomic_store_n(&w->st->fo.kick_posted, 0, __ATOMIC_RELEASE);
	rnic_failover_check(w->st);
}

/* p->on_link of every port of a stack (any thread). */
static void fo_on_link(struct rnic_port *p, bool up)
{
	struct rnic_stack *st = p->st;

	if (st == NULL || __atomic_load_n(&st->fo.dead, __ATOMIC_ACQUIRE))
		return;
	if (up) {
		/* no failback: a port that returns serves again only what
		 * nobody took over (documented in docs/design.md) */
		p->fo_needed = false;
		return;
	}
	st->fo.nosurv_noted[p->idx] = false;
	p->fo_needed = true;
	if (st->n_workers == 0 ||
	    __atomic_exchange_n(&st->fo.kick_posted, 1, __ATOMIC_ACQ_REL))
		return;
	if (rnic_worker_call(st->workers[0], &st->fo.kick) != 0)
		__atomic_store_n(&st->fo.kick_posted, 0, __ATOMIC_RELEASE); /* the poll retries */
}

static void fo_attach(struct rnic_stack *st)
{
	rte_spinlock_init(&st->fo.lock);
	st->fo.kick.fn = fo_kick_fn;
	st->fo.kick.arg = NULL;
	for (unsigned i = 0; i < st->n_ports; i++)
		st->ports[i]->on_link = fo_on_link;
}

/* First step of the teardown: no takeover starts, no hook runs any more. */
static void fo_detach(struct rnic_stack *st)
{
	__atomic_store_n(&st->fo.dead, true, __ATOMIC_RELEASE);
	for (unsigned i = 0; i < st->n_ports; i++)
		st->ports[i]->on_link = NULL;
}

int rnic_port_failover(struct rnic_stack *st, unsigned failed_port)
{
	if (st == NULL || failed_port >= st->n_ports)
		return -EINVAL;
	struct rnic_port *f = st->ports[failed_port];
	rte_spinlock_lock(&st->fo.lock);
	if (f->taken_by != 0 && f->n_taken == 0) {
		rte_spinlock_unlock(&st->fo.lock);
		return -EALREADY;
	}
	struct rnic_port *s = fo_pick_survivor(st, f);
	if (s == NULL) {
		__atomic_fetch_add(&st->fo.no_survivor, 1, __ATOMIC_RELAXED);
		rte_spinlock_unlock(&st->fo.lock);
		return -ENODEV;
	}
	struct fo_event *ev = fo_takeover(st, f, s);
	rte_spinlock_unlock(&st->fo.lock);
	if (ev != NULL)
		/* a worker of this stack must not wait for the others (they
		 * may be waiting for it) */
		fo_post(st, ev, rnic_stack_current_worker(st) == NULL);
	return 0;
}

struct rnic_port *rnic_port_serving(const struct rnic_stack *st, uint32_t ip)
{
	if (st == NULL || ip == 0) {
		errno = EINVAL;
		return NULL;
	}
	for (unsigned i = 0; i < st->n_ports; i++) {
		const struct rnic_port *p = st->ports[i];
		uint8_t by = __atomic_load_n(&p->taken_by, __ATOMIC_ACQUIRE);
		if (p->ip == ip)
			return by != 0 && by <= st->n_ports ? st->ports[by - 1] : st->ports[i];
	}
	for (unsigned i = 0; i < st->n_ports; i++)
		if (st->ports[i]->ip != ip && rnic_port_has_ip(st->ports[i], ip))
			return st->ports[i];
	errno = ENOENT;
	return NULL;
}

int rnic_failover_subscribe(struct rnic_stack *st,
			    void (*cb)(struct rnic_worker *w, unsigned failed,
				       unsigned survivor, void *arg),
			    void *arg)
{
	int rc = 0;
	if (st == NULL || cb == NULL)
		return -EINVAL;
	rte_spinlock_lock(&st->fo.lock);
	if (st->fo.n_subs == RNIC_FAILOVER_SUBS) {
		rc = -ENOSPC;
	} else {
		st->fo.subs[st->fo.n_subs].cb = cb;
		st->fo.subs[st->fo.n_subs].arg = arg;
		/* publish the entry before the count the workers read */
		__atomic_store_n(&st->fo.n_subs, st->fo.n_subs + 1, __ATOMIC_RELEASE);
	}
	rte_spinlock_unlock(&st->fo.lock);
	return rc;
}

void rnic_failover_stats(const struct rnic_stack *st, struct rnic_failover_stats *s)
{
	memset(s, 0, sizeof(*s));
	s->failovers = __atomic_load_n(&st->fo.failovers, __ATOMIC_ACQUIRE);
	s->completed = __atomic_load_n(&st->fo.completed, __ATOMIC_ACQUIRE);
	s->no_survivor = st->fo.no_survivor;
	s->conns_moved = st->fo.conns_moved;
	s->last_us = st->fo.last_us;
	s->max_us = st->fo.max_us;
	s->last_failed = s->failovers ? (int)st->fo.last_failed : -1;
	s->last_survivor = s->failovers ? (int)st->fo.last_survivor : -1;
	for (unsigned i = 0; i < st->n_ports && i < RNIC_MAX_PORTS; i++) {
		const struct rnic_port *p = st->ports[i];
		unsigned n = 0;
		/* the ports whose addresses it serves, of either family (an
		 * IPv6-only port has no entry in taken_ip) */
		for (unsigned k = 0; k < st->n_ports; k++)
			n += k != i && st->ports[k]->taken_by == i + 1;
		s->taken[i] = n;
		s->served_by[i] = p->taken_by ? p->taken_by - 1 : (int)i;
	}
}
