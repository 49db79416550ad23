/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Engine with EAL, against test doubles of lib/port and lib/net (stubs.c):
 * the EAL command line rnic builds, stack create/unwind, poller accounting,
 * TX buffering and its drops, redirect (and a full redirect ring),
 * rnic_worker_call/_sync inline and on launched lcores, distinct lcores for
 * two stacks, adaptive idle, the gratuitous ARP at start, the status line
 * and the /rnic/ telemetry endpoints read through the telemetry socket.
 */
#include <pthread.h>
#include <signal.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_pause.h>

#include "engine/engine_internal.h"
#include "engine/stack.h"
#include "engine/worker.h"
#include "engine/worker_internal.h"
#include "stubs.h"
#include "tel_client.h"

static struct rte_mempool *pool;
static char prefix[64];

static void sleep_ms(unsigned ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };
	nanosleep(&ts, NULL);
}

static struct rnic_config make_cfg(unsigned workers, unsigned ports,
				   enum rnic_poll_mode mode)
{
	struct rnic_config c;
	rnic_config_init(&c);
	c.workers = workers;
	c.poll_mode = mode;
	c.n_ports = ports;
	for (unsigned i = 0; i < ports; i++)
		rnic_port_cfg_init(&c.ports[i]);
	return c;
}

/* Index of @p s in the built argv, or -1. */
static int argv_find(const struct rnic_eal_args *a, const char *s)
{
	for (int i = 0; i < a->argc; i++)
		if (strcmp(a->argv[i], s) == 0)
			return i;
	return -1;
}

/* a file in @p dir, made for the sweep to remove */
static void touch(const char *dir, const char *name)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs("x", f);
	fclose(f);
}

static bool dir_exists(const char *base, const char *name)
{
	char path[512];
	struct stat sb;
	snprintf(path, sizeof(path), "%s/%s", base, name);
	return stat(path, &sb) == 0;
}

/* DPDK leaves runtime directories behind: the sweep removes the rnic-PID
 * ones of processes that are gone, and nothing else. */
static void runtime_dir_sweep(void **state)
{
	char base[] = "/tmp/rnic-sweep-XXXXXX", path[512], dead[32], alive[32], own[512];
	(void)state;

	assert_non_null(mkdtemp(base));
	pid_t child = fork();
	assert_true(child >= 0);
	if (child == 0)
		_exit(0);
	assert_int_equal(waitpid(child, NULL, 0), child);
	snprintf(dead, sizeof(dead), "rnic-%d", (int)child);          /* gone */
	snprintf(alive, sizeof(alive), "rnic-%d", (int)getppid());    /* running */
	const char *names[] = { dead, alive, "rnic-12ab", "other-1", "rnic-own" };
	for (unsigned i = 0; i < 5; i++) {
		snprintf(path, sizeof(path), "%s/%s", base, names[i]);
		assert_int_equal(mkdir(path, 0700), 0);
		touch(path, "config");
		touch(path, "fbarray_memseg-2048k-0-0");
	}
	snprintf(own, sizeof(own), "%s/rnic-own", base);
	assert_int_equal(rnic_eal_sweep_runtime_dirs(base, own), 1);
	assert_false(dir_exists(base, dead));
	for (unsigned i = 1; i < 5; i++)
		assert_true(dir_exists(base, names[i]));
	assert_int_equal(rnic_eal_sweep_runtime_dirs(base, own), 0);
	assert_int_equal(rnic_eal_sweep_runtime_dirs("/nonexistent-rnic-base", NULL), 0);
	for (unsigned i = 1; i < 5; i++) {
		snprintf(path, sizeof(path), "%s/%s/config", base, names[i]);
		unlink(path);
		snprintf(path, sizeof(path), "%s/%s/fbarray_memseg-2048k-0-0", base, names[i]);
		unlink(path);
		snprintf(path, sizeof(path), "%s/%s", base, names[i]);
		rmdir(path);
	}
	rmdir(base);
}

static void eal_command_line(void **state)
{
	struct rnic_config c = make_cfg(3, 1, RNIC_POLL_BUSY);
	struct rnic_eal_args a;
	cpu_set_t set;
	char pid_prefix[32];
	(void)state;

	CPU_ZERO(&set);
	CPU_SET(0, &set);
	CPU_SET(1, &set);
	assert_int_equal(rnic_eal_build_args(&a, "prog", &c, 3, 0, &set), 0);
	assert_string_equal(a.argv[0], "prog");
	int i = argv_find(&a, "--lcores");
	assert_true(i > 0);
	/* fewer CPUs than lcores: every lcore floats (pinned, a worker waited
	 * seconds for a busy CPU while the other was free: docs/roce.md) */
	assert_string_equal(a.argv[i + 1], "0@(0-1),1@(0-1),2@(0-1),3@(0-1)");
	i = argv_find(&a, "--file-prefix");
	snprintf(pid_prefix, sizeof(pid_prefix), "rnic-%d", (int)getpid());
	assert_true(i > 0);
	assert_string_equal(a.argv[i + 1], pid_prefix);
	assert_string_equal(a.prefix, pid_prefix);
	assert_true(argv_find(&a, "--no-pci") > 0);
	i = argv_find(&a, "--no-huge");
	assert_true(i > 0);
	assert_string_equal(a.argv[i + 1], "-m");
	assert_string_equal(a.argv[i + 2], "1024");
	assert_true(argv_find(&a, "--log-level=*:warning") > 0);
	assert_null(a.argv[a.argc]);

	/* hugepages free, a PCI port, user's prefix and log level */
	snprintf(c.ports[0].pci, sizeof(c.ports[0].pci), "0000:01:00.0");
	snprintf(c.eal_args[c.n_eal_args++], 128, "--file-prefix=mine");
	snprintf(c.eal_args[c.n_eal_args++], 128, "--log-level=*:debug");
	assert_int_equal(rnic_eal_build_args(&a, "prog", &c, 3, 12, &set), 0);
	assert_int_equal(argv_find(&a, "--no-pci"), -1);
	assert_int_equal(argv_find(&a, "--no-huge"), -1);
	assert_int_equal(argv_find(&a, "--file-prefix"), -1);
	assert_int_equal(argv_find(&a, "--log-level=*:warning"), -1);
	assert_string_equal(a.prefix, "mine");
	assert_string_equal(a.argv[a.argc - 1], "--log-level=*:debug"); /* user's last */

	/* --in-memory: no prefix; a sparse CPU set; user's -m keeps huge pages */
	c = make_cfg(2, 0, RNIC_POLL_BUSY);
	snprintf(c.eal_args[c.n_eal_args++], 128, "--in-memory");
	snprintf(c.eal_args[c.n_eal_args++], 128, "-m");
	snprintf(c.eal_args[c.n_eal_args++], 128, "512");
	CPU_ZERO(&set);
	CPU_SET(0, &set);
	CPU_SET(2, &set);
	CPU_SET(3, &set);
	assert_int_equal(rnic_eal_build_args(&a, "prog", &c, 2, 0, &set), 0);
	assert_int_equal(argv_find(&a, "--file-prefix"), -1);
	assert_string_equal(a.prefix, "");
	assert_int_equal(argv_find(&a, "--no-huge"), -1);
	i = argv_find(&a, "--lcores");
	assert_string_equal(a.argv[i + 1], "0@(0,2-3),1@0,2@2");   /* a CPU each: pinned */
	assert_true(argv_find(&a, "--in-memory") > 0);

	/* --in-memory without hugepages: EAL would refuse it with --no-huge */
	c = make_cfg(1, 0, RNIC_POLL_BUSY);
	snprintf(c.eal_args[c.n_eal_args++], 128, "--in-memory");
	assert_int_equal(rnic_eal_build_args(&a, "prog", &c, 1, 0, &set), 0);
	assert_true(a.in_memory_dropped);
	assert_int_equal(argv_find(&a, "--in-memory"), -1);
	assert_true(argv_find(&a, "--no-huge") > 0);
	assert_true(argv_find(&a, "--file-prefix") > 0);
	assert_int_equal(rnic_eal_build_args(&a, "prog", &c, 1, 4, &set), 0);
	assert_false(a.in_memory_dropped);
	assert_true(argv_find(&a, "--in-memory") > 0);
	assert_int_equal(argv_find(&a, "--file-prefix"), -1);
}

/* a zero-copy memif client: its memory is taken at start (DPDK's memif
 * closes the EAL's segment-list descriptors when it connects, so the heap
 * could not grow later), as one file per segment list */
static void eal_memif_zero_copy(void **state)
{
	struct rnic_config c = make_cfg(1, 1, RNIC_POLL_BUSY);
	struct rnic_eal_args a;
	cpu_set_t set;
	(void)state;

	CPU_ZERO(&set);
	CPU_SET(0, &set);
	snprintf(c.ports[0].vdev, sizeof(c.ports[0].vdev),
		 "net_memif0,role=client,socket=/tmp/s,zero-copy=yes");
	assert_int_equal(rnic_eal_build_args(&a, "prog", &c, 1, 1024, &set), 0);
	assert_true(argv_find(&a, "--single-file-segments") > 0);
	int i = argv_find(&a, "-m");
	assert_true(i > 0);
	assert_string_equal(a.argv[i + 1], "256");
	assert_null(a.argv[a.argc]);
	/* fewer hugepages free than the default: what there is */
	assert_int_equal(rnic_eal_build_args(&a, "prog", &c, 1, 100, &set), 0);
	assert_string_equal(a.argv[argv_find(&a, "-m") + 1], "100");
	/* no hugepages at all: refused (the caller says why) */
	assert_int_equal(rnic_eal_build_args(&a, "prog", &c, 1, 0, &set), -ENOMEM);
	/* the user's own size and flag are kept, not doubled */
	snprintf(c.eal_args[c.n_eal_args++], 128, "--socket-mem=64");
	snprintf(c.eal_args[c.n_eal_args++], 128, "--single-file-segments");
	assert_int_equal(rnic_eal_build_args(&a, "prog", &c, 1, 1024, &set), 0);
	assert_int_equal(argv_find(&a, "-m"), -1);
	i = argv_find(&a, "--single-file-segments");
	assert_int_equal(i, a.argc - 1);   /* only the user's, last */
	/* zero-copy=no, a value that only starts with yes, another PMD */
	const char *plain[] = {
		"net_memif0,role=client,zero-copy=no",
		"net_memif0,role=client,zero-copy=yesplease",
		"net_tap0,zero-copy=yes",
	};
	for (unsigned k = 0; k < 3; k++) {
		c = make_cfg(1, 1, RNIC_POLL_BUSY);
		snprintf(c.ports[0].vdev, sizeof(c.ports[0].vdev), "%s", plain[k]);
		assert_int_equal(rnic_eal_build_args(&a, "prog", &c, 1, 1024, &set), 0);
		assert_int_equal(argv_find(&a, "--single-file-segments"), -1);
		assert_int_equal(argv_find(&a, "-m"), -1);
	}
}

static void eal_once(void **state)
{
	struct rnic_config c = make_cfg(1, 0, RNIC_POLL_BUSY);
	(void)state;
	/* the process's EAL is up (main()); a second init is a no-op */
	assert_int_equal(rnic_eal_init("again", &c, 1), 0);
	assert_int_equal(rte_lcore_count(), 5);
}

static void create_unwinds(void **state)
{
	struct rnic_config c = make_cfg(2, 3, RNIC_POLL_BUSY);
	(void)state;
	memset(&stub, 0, sizeof(stub));
	stub.open_fail = true;
	assert_null(rnic_stack_create(&c));
	assert_int_equal(rte_errno, ENODEV);
	stub.open_fail = false;
	assert_int_equal(stub.opened, stub.closed);

	c.workers = 0;
	assert_null(rnic_stack_create(&c));
	assert_int_equal(rte_errno, EINVAL);
	c.workers = RNIC_MAX_WORKERS + 1;
	assert_null(rnic_stack_create(&c));
	assert_int_equal(rte_errno, EINVAL);
}

/* Protocol hooks run in table order, and unwind in reverse on failure. */
static void protocol_hooks(void **state)
{
	struct rnic_config c = make_cfg(2, 1, RNIC_POLL_BUSY);
	(void)state;
	memset(&stub, 0, sizeof(stub));
	struct rnic_stack *st = rnic_stack_create(&c);
	assert_non_null(st);
	assert_string_equal(stub.log, "AS- AW0 AW1 BS- BW0 BW1 ");
	struct rnic_stack_stats s;
	rnic_stack_stats(st, &s);
	assert_int_equal(s.connections, 5);
	stub.log_n = 0;
	rnic_stack_destroy(st);
	assert_string_equal(stub.log, "Bw1 Bw0 Bs- Aw1 Aw0 As- ");

	/* B's worker 1 fails: B and A torn down, ports closed, errno kept */
	memset(&stub, 0, sizeof(stub));
	stub.b_worker_fail = true;
	assert_null(rnic_stack_create(&c));
	assert_int_equal(rte_errno, ENOSPC);
	assert_string_equal(stub.log, "AS- AW0 AW1 BS- BW0 BW1 "
			    "Bw1 Bw0 Bs- Aw1 Aw0 As- ");
	assert_int_equal(stub.opened, stub.closed);

	/* B's stack_init fails: only A is torn down */
	memset(&stub, 0, sizeof(stub));
	stub.b_stack_fail = true;
	assert_null(rnic_stack_create(&c));
	assert_int_equal(rte_errno, EPROTO);
	assert_string_equal(stub.log, "AS- AW0 AW1 BS- Aw1 Aw0 As- ");
	assert_int_equal(stub.opened, stub.closed);
}

static unsigned test_poller_n;

/* A poller that does 3 units of work every other call. */
static unsigned test_poller(struct rnic_worker *w, void *arg)
{
	(void)w;
	assert_ptr_equal(arg, &test_poller_n);
	return (test_poller_n++ & 1) ? 3 : 0;
}

static void pollers_and_rx(void **state)
{
	struct rnic_config c = make_cfg(2, 1, RNIC_POLL_BUSY);
	(void)state;
	memset(&stub, 0, sizeof(stub));
	struct rnic_stack *st = rnic_stack_create(&c);
	assert_non_null(st);
	assert_int_equal(rnic_stack_workers(st), 2);
	struct rnic_worker *w = st->workers[0];
	static const char *const order[] = { "rx", "redirect", "cmd", "timers",
					     "faults", "tx_flush" };
	assert_int_equal(w->n_pollers, 6);
	for (unsigned i = 0; i < 6; i++)
		assert_string_equal(w->pollers[i].name, order[i]);
	assert_int_equal(rnic_worker_add_poller(w, "test", test_poller,
						&test_poller_n), 0);

	/* the gratuitous ARP goes out from worker 0 once it runs */
	for (int i = 0; i < 100000 && stub.announces == 0; i++)
		rnic_worker_poll(st, 0);
	assert_int_equal(stub.announces, 1);
	assert_int_equal(stub.announce_worker, 0);

	uint64_t loops0 = w->stats.loops, busy0 = w->stats.busy_loops;
	struct rnic_poller *tp = &w->pollers[6];
	uint64_t calls0 = tp->calls, work0 = tp->work;
	test_poller_n = 0;
	for (int i = 0; i < 10; i++)
		rnic_worker_poll(st, 0);
	assert_int_equal(w->stats.loops - loops0, 10);
	assert_int_equal(tp->calls - calls0, 10);
	assert_int_equal(tp->work - work0, 15);
	assert_true(tp->cycles > 0);
	assert_true(w->stats.busy_loops - busy0 >= 5);

	/* frames from the port reach lib/net on the queue's worker */
	for (unsigned i = 0; i < 40; i++) {
		stub.rx_q[1][i] = rte_pktmbuf_alloc(pool);
		assert_non_null(stub.rx_q[1][i]);
		rte_pktmbuf_append(stub.rx_q[1][i], 60);
	}
	stub.rx_n[1] = 40;
	rnic_worker_poll(st, 0);                                 /* queue 0: empty */
	assert_int_equal(stub.net_input, 0);
	assert_int_equal(rnic_worker_poll(st, 1), RNIC_BURST);   /* one burst */
	rnic_worker_poll(st, 1);
	assert_int_equal(stub.net_input, 40);
	assert_int_equal(st->workers[1]->stats.rx_pkts, 40);
	assert_int_equal(st->workers[1]->stats.rx_bytes, 40 * 60);
	assert_int_equal(st->workers[1]->pollers[0].work, 40);
	assert_true(stub.fault_polls > 0);
	assert_int_equal(rnic_worker_poll(st, 2), 0);            /* no such worker */
	rnic_stack_destroy(st);
	assert_int_equal(stub.opened, stub.closed);
	assert_int_equal(rte_mempool_in_use_count(pool), 0);
}

static void tx_buffer_drops(void **state)
{
	struct rnic_config c = make_cfg(1, 1, RNIC_POLL_BUSY);
	(void)state;
	memset(&stub, 0, sizeof(stub));
	struct rnic_stack *st = rnic_stack_create(&c);
	assert_non_null(st);
	struct rnic_worker *w = st->workers[0];
	struct rnic_port *p = st->ports[0];

	/* a port that takes 10 per call: 4 tries per flush, the rest dropped */
	stub.tx_accept = 10;
	for (unsigned i = 0; i < RNIC_TXBUF; i++) {
		struct rte_mbuf *m = rte_pktmbuf_alloc(pool);
		rte_pktmbuf_append(m, 100);
		rnic_worker_tx(w, p, m);
	}
	assert_int_equal(w->txb[0].n, 0);         /* flushed when full */
	assert_int_equal(stub.tx_taken, 40);
	assert_int_equal(w->stats.tx_pkts, 40);
	assert_int_equal(w->stats.tx_bytes, 4000);
	assert_int_equal(w->drops[RNIC_DROP_TX_FULL], RNIC_TXBUF - 40);
	assert_int_equal(rte_mempool_in_use_count(pool), 0);

	/* a few frames wait for the loop's flush poller */
	stub.tx_accept = 64;
	for (unsigned i = 0; i < 5; i++)
		rnic_worker_tx(w, p, rte_pktmbuf_alloc(pool));
	assert_int_equal(w->txb[0].n, 5);
	rnic_worker_poll(st, 0);
	assert_int_equal(w->txb[0].n, 0);
	assert_int_equal(w->stats.tx_pkts, 45);

	/* frames still buffered at destroy go back to the pool */
	for (unsigned i = 0; i < 5; i++)
		rnic_worker_tx(w, p, rte_pktmbuf_alloc(pool));
	rnic_stack_destroy(st);
	assert_int_equal(rte_mempool_in_use_count(pool), 0);
}

static void redirect(void **state)
{
	struct rnic_config c = make_cfg(2, 1, RNIC_POLL_BUSY);
	(void)state;
	memset(&stub, 0, sizeof(stub));
	struct rnic_stack *st = rnic_stack_create(&c);
	assert_non_null(st);
	struct rnic_worker *w0 = st->workers[0], *w1 = st->workers[1];

	for (unsigned i = 0; i < 10; i++) {
		struct rte_mbuf *m = rte_pktmbuf_alloc(pool);
		m->port = 0;
		assert_int_equal(rnic_worker_redirect(w0, 1, m), 0);
	}
	assert_int_equal(w0->stats.redirected_out, 10);
	rnic_worker_poll(st, 1);
	assert_int_equal(stub.l4_input[1], 10);
	assert_int_equal(w1->stats.redirected_in, 10);

	/* a bad owner and a full ring: dropped, counted, freed */
	struct rte_mbuf *m = rte_pktmbuf_alloc(pool);
	assert_int_equal(rnic_worker_redirect(w0, 5, m), -ENOBUFS);
	unsigned ok = 0, full = 0;
	for (unsigned i = 0; i < 4200; i++) {
		m = rte_pktmbuf_alloc(pool);
		assert_non_null(m);
		m->port = 0;
		if (rnic_worker_redirect(w0, 1, m) == 0)
			ok++;
		else
			full++;
	}
	assert_int_equal(ok, 4095);      /* an rte_ring of 4096 holds 4095 */
	assert_int_equal(full, 4200 - 4095);
	assert_int_equal(w0->drops[RNIC_DROP_REDIRECT_FULL], full + 1);
	assert_int_equal(rte_mempool_in_use_count(pool), 4095);
	rnic_stack_destroy(st);          /* drains the ring */
	assert_int_equal(rte_mempool_in_use_count(pool), 0);
}

struct call_rec {
	unsigned lcore;
	struct rnic_worker *w, *current;
	int n;
};

static void record_call(struct rnic_worker *w, void *arg)
{
	struct call_rec *r = arg;
	r->lcore = rte_lcore_id();
	r->w = w;
	r->current = rnic_stack_current_worker(w->st);
	r->n++;
}

static void call_inline_and_on_lcores(void **state)
{
	struct rnic_config c = make_cfg(2, 1, RNIC_POLL_BUSY);
	struct rnic_config c1 = make_cfg(1, 0, RNIC_POLL_ADAPTIVE);
	struct call_rec r = { 0 };
	(void)state;
	memset(&stub, 0, sizeof(stub));
	struct rnic_stack *st = rnic_stack_create(&c);
	struct rnic_stack *st1 = rnic_stack_create(&c1);
	assert_non_null(st);
	assert_non_null(st1);
	assert_int_not_equal(st->id, st1->id);

	/* not started: runs inline on the caller */
	assert_int_equal(rnic_worker_call_sync(st->workers[1], record_call, &r), 0);
	assert_int_equal(r.lcore, rte_lcore_id());
	assert_ptr_equal(r.w, st->workers[1]);
	assert_int_equal(rnic_worker_call_sync(st->workers[1], NULL, &r), -EINVAL);

	assert_int_equal(rnic_stack_start(st), 0);
	assert_int_equal(rnic_stack_start(st), -EALREADY);
	assert_int_equal(rnic_stack_start(st1), 0);
	unsigned lc[3] = { st->workers[0]->lcore, st->workers[1]->lcore,
			   st1->workers[0]->lcore };
	for (int i = 0; i < 3; i++) {
		assert_true(lc[i] != rte_get_main_lcore() && lc[i] < RTE_MAX_LCORE);
		for (int k = 0; k < i; k++)
			assert_int_not_equal(lc[i], lc[k]);
	}
	assert_null(rnic_stack_current_worker(st));
	for (unsigned i = 0; i < 2; i++) {
		memset(&r, 0, sizeof(r));
		assert_int_equal(rnic_worker_call_sync(st->workers[i], record_call, &r), 0);
		assert_int_equal(r.n, 1);
		assert_int_equal(r.lcore, st->workers[i]->lcore);
		assert_ptr_equal(r.current, st->workers[i]);
	}
	/* asynchronous call: done is published after fn ran */
	struct call_rec ra = { 0 };
	struct rnic_cmd cmd = { .fn = record_call, .arg = &ra };
	assert_int_equal(rnic_worker_call(st1->workers[0], &cmd), 0);
	for (int i = 0; i < 5000 && !__atomic_load_n(&cmd.done, __ATOMIC_ACQUIRE); i++)
		sleep_ms(1);
	assert_int_equal(cmd.done, 1);
	assert_int_equal(ra.lcore, lc[2]);
	/* the gratuitous ARP was sent from worker 0's own lcore */
	for (int i = 0; i < 1000 && stub.announces == 0; i++)
		sleep_ms(1);
	assert_int_equal(stub.announces, 1);
	assert_int_equal(stub.announce_lcore, lc[0]);
	/* no driving a started worker from outside */
	assert_int_equal(rnic_worker_poll(st, 0), 0);

	rnic_stack_stop(st);
	rnic_stack_stop(st);                 /* twice is fine */
	assert_int_equal(st->workers[0]->lcore, RTE_MAX_LCORE);
	/* lcores come back: st restarts while st1 still runs */
	assert_int_equal(rnic_stack_start(st), 0);
	assert_int_not_equal(st->workers[0]->lcore, lc[2]);
	assert_int_not_equal(st->workers[1]->lcore, lc[2]);
	rnic_stack_destroy(st);
	rnic_stack_destroy(st1);
	assert_int_equal(stub.opened, stub.closed);
}

struct late_call {
	struct rnic_worker *w;
	struct call_rec r;
	int rc;
	int finished;
};

static void *late_caller(void *arg)
{
	struct late_call *lc = arg;
	lc->rc = rnic_worker_call_sync(lc->w, record_call, &lc->r);
	__atomic_store_n(&lc->finished, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* A command posted after the worker's last drain, just before its stack
 * stopped: the worker thread has left, and the caller used to spin for
 * ever. Here the worker is stopped by hand (its lcore waited for) with the
 * stack still marked running, a thread calls, then the stack stops: the
 * call returns with the command run once. */
static void call_after_worker_left(void **state)
{
	(void)state;
	struct rnic_config c = make_cfg(1, 1, RNIC_POLL_BUSY);
	memset(&stub, 0, sizeof(stub));
	struct rnic_stack *st = rnic_stack_create(&c);
	assert_non_null(st);
	assert_int_equal(rnic_stack_start(st), 0);
	struct rnic_worker *w = st->workers[0];
	__atomic_store_n(&w->stop, true, __ATOMIC_RELEASE);
	rte_eal_wait_lcore(w->lcore);          /* gone; st->running still true */

	struct late_call lc = { .w = w };
	pthread_t t;
	assert_int_equal(pthread_create(&t, NULL, late_caller, &lc), 0);
	sleep_ms(50);
	assert_int_equal(__atomic_load_n(&lc.finished, __ATOMIC_ACQUIRE), 0);   /* waiting */
	rnic_stack_stop(st);
	for (int i = 0; i < 2000 && !__atomic_load_n(&lc.finished, __ATOMIC_ACQUIRE); i++)
		sleep_ms(1);
	if (!__atomic_load_n(&lc.finished, __ATOMIC_ACQUIRE))
		fail_msg("rnic_worker_call_sync still waits 2 s after its stack stopped");
	pthread_join(t, NULL);
	assert_int_equal(lc.rc, 0);
	assert_int_equal(lc.r.n, 1);
	assert_ptr_equal(lc.r.w, w);
	rnic_stack_destroy(st);
	assert_int_equal(stub.opened, stub.closed);
}

/* The adaptive idle rule, step by step on a worker that is not started
 * (no clock involved): the first IDLE_LOOPS_BEFORE_SLEEP (256) empty loops
 * in a row spin, every further one sleeps and is counted; work resets the
 * run; busy mode never sleeps. */
static void adaptive_idle(void **state)
{
	(void)state;
	struct rnic_config c = make_cfg(1, 0, RNIC_POLL_ADAPTIVE);
	struct rnic_stack *st = rnic_stack_create(&c);
	assert_non_null(st);
	struct rnic_worker *w = st->workers[0];
	uint64_t sleeps0 = w->stats.idle_sleeps;

	for (int round = 0; round < 2; round++) {
		for (unsigned i = 0; i < 256; i++)
			assert_false(rnic_worker_idle(w, RNIC_POLL_ADAPTIVE, 0));
		assert_true(rnic_worker_idle(w, RNIC_POLL_ADAPTIVE, 0));
		assert_true(rnic_worker_idle(w, RNIC_POLL_ADAPTIVE, 0));
		/* a loop with work starts the run again */
		assert_false(rnic_worker_idle(w, RNIC_POLL_ADAPTIVE, 3));
	}
	assert_int_equal(w->stats.idle_sleeps - sleeps0, 4);
	for (unsigned i = 0; i < 1000; i++)
		assert_false(rnic_worker_idle(w, RNIC_POLL_BUSY, 0));
	assert_int_equal(w->stats.idle_sleeps - sleeps0, 4);
	rnic_stack_destroy(st);
}

/* The lcore loop uses that rule: an idle adaptive worker comes to sleep,
 * a busy one never does. Waits on loop counts (with a hang guard), never
 * on elapsed time. */
static void idle_loop_sleeps(enum rnic_poll_mode mode)
{
	struct rnic_config c = make_cfg(1, 0, mode);
	struct rnic_stack *st = rnic_stack_create(&c);
	assert_non_null(st);
	struct rnic_worker *w = st->workers[0];
	assert_int_equal(rnic_stack_start(st), 0);
	for (unsigned waited = 0; __atomic_load_n(&w->stats.loops, __ATOMIC_RELAXED) < 2000;
	     waited++) {
		assert_true(waited < 60000);   /* hang guard: 60 s */
		sleep_ms(1);
	}
	rnic_stack_stop(st);
	uint64_t loops = w->stats.loops, sleeps = w->stats.idle_sleeps;
	print_message("%s: %lu loops, %lu idle sleeps\n",
		      mode == RNIC_POLL_ADAPTIVE ? "adaptive" : "busy",
		      (unsigned long)loops, (unsigned long)sleeps);
	if (mode == RNIC_POLL_ADAPTIVE)
		assert_true(sleeps > 0 && sleeps <= loops - 256);
	else
		assert_int_equal(sleeps, 0);
	rnic_stack_destroy(st);
}

static void idle_loop(void **state)
{
	(void)state;
	idle_loop_sleeps(RNIC_POLL_ADAPTIVE);
	idle_loop_sleeps(RNIC_POLL_BUSY);
}

static void status_line(void **state)
{
	struct rnic_config c = make_cfg(2, 2, RNIC_POLL_BUSY);
	char *buf = NULL;
	size_t len = 0;
	(void)state;
	struct rnic_stack *st = rnic_stack_create(&c);
	assert_non_null(st);
	st->workers[0]->stats.rx_pkts = 5;
	st->workers[1]->stats.rx_pkts = 6;
	st->workers[1]->drops[RNIC_DROP_IP_CHECKSUM] = 4;

	struct rnic_stack_stats s;
	rnic_stack_stats(st, &s);
	assert_int_equal(s.rx_pkts, 11);
	assert_int_equal(s.drops, 4);
	assert_int_equal(s.mbufs_in_use, 14);   /* 7 per stub port */
	assert_int_equal(s.fault_dropped, 6);
	assert_int_equal(s.arp_requests, 2);

	FILE *f = open_memstream(&buf, &len);
	rnic_stack_status_line(st, f);
	fflush(f);
	assert_non_null(strstr(buf, "rx 11 (0/s) "));  /* no rate yet */
	assert_non_null(strstr(buf, "drops 4 "));
	assert_non_null(strstr(buf, "arp 2/2 "));
	assert_non_null(strstr(buf, "conns 5 "));
	assert_non_null(strstr(buf, "mbufs 14"));
	assert_null(strchr(buf, '\n'));
	fclose(f);
	free(buf);
	/* the second line has a rate since the first */
	st->workers[0]->stats.rx_pkts += 100000;
	sleep_ms(10);
	buf = NULL;
	f = open_memstream(&buf, &len);
	rnic_stack_status_line(st, f);
	fflush(f);
	assert_non_null(strstr(buf, "rx 100011 ("));
	assert_null(strstr(buf, "rx 100011 (0/s)"));
	fclose(f);
	free(buf);
	rnic_stack_destroy(st);
}

static void telemetry(void **state)
{
	static char out[16384];
	struct rnic_config c = make_cfg(2, 1, RNIC_POLL_BUSY);
	char key[32];
	(void)state;
	memset(&stub, 0, sizeof(stub));
	struct rnic_stack *st = rnic_stack_create(&c);
	assert_non_null(st);
	snprintf(key, sizeof(key), "stack%u", st->id);
	st->workers[0]->drops[RNIC_DROP_UDP_LEN] = 3;
	st->workers[1]->drops[RNIC_DROP_UDP_LEN] = 4;
	for (int i = 0; i < 7; i++)
		rnic_worker_poll(st, 1);

	assert_true(tel_query("/rnic/drops", out, sizeof(out)) > 0);
	assert_non_null(strstr(out, key));
	assert_int_equal(tel_number(out, "udp_len"), 7);
	for (unsigned i = 0; i < RNIC_DROP_MAX; i++)
		assert_non_null(strstr(out, rnic_drop_name(i)));

	assert_true(tel_query("/rnic/workers", out, sizeof(out)) > 0);
	assert_non_null(strstr(out, "\"worker1\":{"));
	assert_int_equal(tel_number(out, "loops"), 0);     /* worker0 first */
	assert_int_equal(tel_number(out, "lcore"), -1);    /* not launched */

	assert_true(tel_query("/rnic/pollers", out, sizeof(out)) > 0);
	assert_int_equal(tel_number(out, "worker1\":{\"rx\":{\"calls"), 7);
	assert_non_null(strstr(out, "\"tx_flush\":{\"calls\":"));

	assert_true(tel_query("/rnic/stats", out, sizeof(out)) > 0);
	assert_int_equal(tel_number(out, "drops"), 7);
	assert_int_equal(tel_number(out, "mbufs_in_use"), 7);

	assert_true(tel_query("/rnic/ports", out, sizeof(out)) > 0);
	assert_non_null(strstr(out, "\"name\":\"stub0\""));

	/* one stack by index; a bad index is refused */
	snprintf(key, sizeof(key), "/rnic/drops,%u", st->id);
	assert_true(tel_query(key, out, sizeof(out)) > 0);
	assert_int_equal(tel_number(out, "udp_len"), 7);
	assert_true(tel_query("/rnic/drops,x", out, sizeof(out)) > 0);
	assert_null(strstr(out, "udp_len"));

	rnic_stack_destroy(st);
	assert_true(tel_query("/rnic/drops", out, sizeof(out)) > 0);
	assert_null(strstr(out, "udp_len"));                /* gone */
}

/* A command that spins until released: a poller that never returns, as
 * rnic-tcp's source did inside rnic_tcp_send() on a peer's MSS 0. */
static void spin_cmd(struct rnic_worker *w, void *arg)
{
	(void)w;
	while (!__atomic_load_n((int *)arg, __ATOMIC_ACQUIRE))
		rte_pause();
}

/* A worker stuck in a poller is visible in /rnic/workers while it is stuck
 * (stuck_loops, loop_ms, the poller's name) and counted when its loop ends;
 * rnic_stack_stop() returns after RNIC_STOP_WAIT_MS instead of waiting for
 * ever (on 4cbba57 it waited on the lcore: this test hung), leaves the
 * stack marked abandoned, and a later stop once the loop ended frees it. */
static void stuck_worker(void **state)
{
	static char out[16384];
	(void)state;
	struct rnic_config c = make_cfg(1, 1, RNIC_POLL_BUSY);
	memset(&stub, 0, sizeof(stub));
	struct rnic_stack *st = rnic_stack_create(&c);
	assert_non_null(st);
	assert_int_equal(rnic_stack_start(st), 0);
	int release = 0;
	struct rnic_cmd cmd = { .fn = spin_cmd, .arg = &release };
	assert_int_equal(rnic_worker_call(st->workers[0], &cmd), 0);
	sleep_ms(RNIC_STUCK_LOOP_MS + 150);

	assert_true(tel_query("/rnic/workers", out, sizeof(out)) > 0);
	assert_int_equal(tel_number(out, "stuck_loops"), 1);
	assert_true(tel_number(out, "loop_ms") >= RNIC_STUCK_LOOP_MS);
	assert_non_null(strstr(out, "\"stuck_poller\":\"cmd\""));

	rnic_stack_stop(st);                     /* returns: the worker is left */
	assert_true(st->abandoned);
	assert_true(st->running);
	rnic_stack_destroy(st);                  /* frees nothing while it runs */

	__atomic_store_n(&release, 1, __ATOMIC_RELEASE);
	rnic_stack_stop(st);
	assert_false(st->abandoned);
	assert_false(st->running);
	assert_int_equal(st->workers[0]->stats.stuck_loops, 1);
	assert_string_equal(st->workers[0]->stuck_poller, "cmd");
	assert_true(tel_query("/rnic/workers", out, sizeof(out)) > 0);
	assert_int_equal(tel_number(out, "stuck_loops"), 1);   /* not 2 */
	assert_int_equal(tel_number(out, "loop_ms"), 0);
	rnic_stack_destroy(st);
	assert_int_equal(stub.opened, stub.closed);
}

/* Fork a child that installs rnic_stop_on_signals(@p grace_ms), then
 * either waits for rnic_stop_requested() and exits 0 (@p obey) or spins
 * for ever; send it @p sig @p times. @return its wait status (-1: still
 * alive after 10 s, then killed). */
static int signal_child(unsigned grace_ms, bool obey, int sig, int times)
{
	int ready[2];
	assert_int_equal(pipe(ready), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		if (rnic_stop_on_signals(grace_ms) != 0)
			_exit(3);
		if (write(ready[1], "r", 1) != 1)
			_exit(4);
		while (!obey || !rnic_stop_requested())
			;   /* a program stuck in a loop that never looks */
		_exit(0);
	}
	char b;
	assert_int_equal(read(ready[0], &b, 1), 1);
	close(ready[0]);
	close(ready[1]);
	for (int i = 0; i < times; i++) {
		kill(pid, sig);
		sleep_ms(20);
	}
	int status;
	for (int i = 0; i < 10000; i++) {
		if (waitpid(pid, &status, WNOHANG) == pid)
			return status;
		sleep_ms(1);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	return -1;
}

/* SIGINT/SIGTERM: a program that looks at the stop flag exits as it
 * likes; one that never looks is ended by its grace running out, or at
 * once by a second signal, as the signal would without a handler. */
static void stop_on_signals(void **state)
{
	(void)state;
	assert_int_equal(rnic_stop_on_signals(0), -EINVAL);
	int st = signal_child(60000, true, SIGTERM, 1);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	st = signal_child(200, false, SIGTERM, 1);
	assert_true(st != -1 && WIFSIGNALED(st));
	assert_int_equal(WTERMSIG(st), SIGTERM);
	st = signal_child(60000, false, SIGINT, 2);
	assert_true(st != -1 && WIFSIGNALED(st));
	assert_int_equal(WTERMSIG(st), SIGINT);
}

static void stop_flag(void **state)
{
	(void)state;
	assert_false(rnic_stop_requested());
	rnic_request_stop();
	assert_true(rnic_stop_requested());
}

int main(int argc, char **argv)
{
	struct rnic_config c;
	(void)argc;

	rnic_config_init(&c);
	snprintf(c.eal_args[c.n_eal_args++], 128, "--no-huge");
	snprintf(c.eal_args[c.n_eal_args++], 128, "-m");
	snprintf(c.eal_args[c.n_eal_args++], 128, "128");
	snprintf(prefix, sizeof(prefix), "rnic-test-worker-%d", (int)getpid());
	snprintf(c.eal_args[c.n_eal_args++], 128, "--file-prefix=%s", prefix);
	snprintf(c.eal_args[c.n_eal_args++], 128, "--log-level=*:error");
	/* 4 worker lcores: tests run two stacks (2 + 1 workers) at once */
	if (rnic_eal_init(argv[0], &c, 4) != 0)
		return 1;
	pool = rte_pktmbuf_pool_create("engine_test", 8191, 0, 0,
				       RTE_MBUF_DEFAULT_BUF_SIZE, SOCKET_ID_ANY);
	if (pool == NULL)
		return 1;
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(eal_command_line),
		cmocka_unit_test(runtime_dir_sweep),
		cmocka_unit_test(eal_once),
		cmocka_unit_test(create_unwinds),
		cmocka_unit_test(protocol_hooks),
		cmocka_unit_test(pollers_and_rx),
		cmocka_unit_test(tx_buffer_drops),
		cmocka_unit_test(redirect),
		cmocka_unit_test(call_inline_and_on_lcores),
		cmocka_unit_test(call_after_worker_left),
		cmocka_unit_test(adaptive_idle),
		cmocka_unit_test(idle_loop),
		cmocka_unit_test(status_line),
		cmocka_unit_test(telemetry),
		cmocka_unit_test(stuck_worker),
		cmocka_unit_test(stop_on_signals),
		cmocka_unit_test(stop_flag),
		cmocka_unit_test(eal_memif_zero_copy),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	rte_mempool_free(pool);
	rte_eal_cleanup();
	return rc;
}
