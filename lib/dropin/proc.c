/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The drop-in's process state: the stack built on first use from the
 * environment, the drive lock, the progress thread, exit and fork.
 */
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <dirent.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <sys/syscall.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_spinlock.h>

#include "dropin/dropin.h"
#include "dropin/pace.h"
#include "engine/stack.h"
#include "engine/worker.h"
#include "verbs/verbs.h"

#define RV_MAX_ARGS 64

static pthread_once_t once = PTHREAD_ONCE_INIT;
static struct rv_proc proc;
static bool started;             /* proc is usable */
static int start_errno;          /* why not, when !started */
static bool forked_child;        /* this process is a fork() child */

/* The drive lock: a spinlock, since it is taken on every empty poll of
 * the program's polling thread and the progress thread's loop (a pthread
 * mutex's lock and unlock were 11 % of a perftest client's samples); its
 * holders run one worker loop or a control call, never a blocking wait. */
static uint32_t drive;   /* 1: held */

/* The drive lock's two operations: one locked exchange to take it, a
 * release store to give it back (DPDK's rte_spinlock_unlock is an
 * exchange too on x86: a second locked operation per drive). */
static inline bool drive_trylock(void)
{
	return __atomic_load_n(&drive, __ATOMIC_RELAXED) == 0 &&
	       __atomic_exchange_n(&drive, 1, __ATOMIC_ACQUIRE) == 0;
}

static inline void drive_unlock(void)
{
	__atomic_store_n(&drive, 0, __ATOMIC_RELEASE);
}
static pthread_t progress_tid;
static volatile bool progress_stop;
static uint64_t app_drove_tsc;   /* when a program thread last drove */
static unsigned app_calls;       /* the program's data path calls (a count) */
static int app_blocked;          /* program threads in a verbs wait */
static uint32_t nap_word;        /* the progress thread naps on it (futex) */
static rte_spinlock_t linger_lock = RTE_SPINLOCK_INITIALIZER;
static struct rv_linger linger;  /* pace.h */
static uint64_t progress_app_naps;   /* naps because the program drove */
static uint64_t progress_takeovers;  /* it found the program away (pace.h) */
static uint64_t progress_served;     /* its loops that found work */

void rv_log(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("rnic-verbs: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

/* --- the drive lock -------------------------------------------------------- */

/* The thread that holds the drive lock is the driver of every worker, so
 * a post it makes runs to completion (rnic_worker_driven_here()); nobody
 * is, once it lets go. */
static void drivers_set(const void *token)
{
	for (unsigned i = 0; i < proc.st->n_workers; i++)
		proc.st->workers[i]->driver = token;
}

void rv_lock(void)
{
	if (!started || !proc.inline_drive)
		return;
	while (!drive_trylock())
		sched_yield();   /* a worker loop or a control call: short */
	drivers_set(rnic_thread_token());
}

/* The frames a control call queued (a DREQ of rdma_disconnect(), the
 * aborts of the exit handler) leave before the lock goes, not at the next
 * worker loop: a program that disconnects and exits at once left its DREQ
 * in the transmit buffer for the progress thread, whose nap may outlast
 * the program (rping -q over RoCE: the client exited 0 on its own QP's
 * release, the server waited for ever for its DISCONNECTED, once in
 * about five CI runs). Nothing queued: a look at each port's count. */
void rv_unlock(void)
{
	if (!started || !proc.inline_drive)
		return;
	for (unsigned i = 0; i < proc.st->n_workers; i++)
		rnic_worker_flush(proc.st->workers[i]);
	drivers_set(NULL);
	drive_unlock();
}

/* One loop of every worker, under the drive lock. */
static unsigned drive_once(void)
{
	drivers_set(rnic_thread_token());
	unsigned work = rnic_stack_poll(proc.st);
	drivers_set(NULL);
	return work;
}

unsigned rv_progress(void)
{
	unsigned work;

	if (!started || !proc.inline_drive || !drive_trylock())
		return 0;
	work = drive_once();
	drive_unlock();
	/* the loop's own clock, sampled as it started: no rdtsc of ours */
	__atomic_store_n(&app_drove_tsc, proc.st->workers[0]->now_tsc, __ATOMIC_RELAXED);
	return work;
}

/* Frames received so far by every worker (read while another thread may
 * drive: a counter that only grows, compared for change). */
static uint64_t rx_frames(void)
{
	uint64_t n = 0;
	for (unsigned i = 0; i < proc.st->n_workers; i++)
		n += __atomic_load_n(&proc.st->workers[i]->stats.rx_pkts, __ATOMIC_RELAXED);
	return n;
}

void rv_app_call(void)
{
	/* a hint, not an exact count: no atomic increment on the data path */
	__atomic_store_n(&app_calls, __atomic_load_n(&app_calls, __ATOMIC_RELAXED) + 1,
			 __ATOMIC_RELAXED);
}

/* Wake the progress thread from its nap. */
static void progress_kick(void)
{
	if (__atomic_exchange_n(&nap_word, 1, __ATOMIC_ACQ_REL) == 0)
		syscall(SYS_futex, &nap_word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

/* Keep driving until what the program waits for arrives, at most the
 * linger time (pace.h): bytes placed on @p watch's QP beyond @p since, or
 * without @p watch any frame. @return whether it came. */
static bool linger_drive(uint64_t cycles, const uint64_t *watch, uint64_t since)
{
	uint64_t rx0 = rx_frames();
	uint64_t now = rte_rdtsc(), end = now + cycles;

	while (now < end) {
		if (drive_trylock()) {
			drive_once();
			drive_unlock();
			now = proc.st->workers[0]->now_tsc;   /* the loop's clock */
		} else {
			now = rte_rdtsc();
		}
		__atomic_store_n(&app_drove_tsc, now, __ATOMIC_RELAXED);
		if (watch != NULL ? __atomic_load_n(watch, __ATOMIC_RELAXED) != since
				  : rx_frames() != rx0)
			return true;
	}
	return false;
}

void rv_reaped(bool sends_in_flight, const uint64_t *watch, uint64_t since)
{
	if (!started || !proc.inline_drive)
		return;
	/* No lock on the way of the common case, a linger that got its
	 * frame: each locked instruction here stands between the peer's
	 * answer and the program's next post, and the first one after a
	 * drive waits for the drive's stores into the shared memif ring
	 * (the answer's ACK): 150-230 ns for this tail with its two lock
	 * pairs against about 10 without, ib_write_lat's p50 1.38-1.41 µs
	 * against 1.30-1.38. The flags read without the lock are a hint; the
	 * lock is taken only for a decision (a linger that ran out, or one
	 * that clears a strike), and a reap without a linger takes none. */
	bool want = rv_linger_wanted(&linger, sends_in_flight);
	uint64_t cycles = linger.cycles;
	/* the answer came already (in the burst with the completion) */
	if (want && watch != NULL && __atomic_load_n(watch, __ATOMIC_RELAXED) != since)
		want = false;
	bool got = want && linger_drive(cycles, watch, since);
	if (got && __atomic_load_n(&linger.strikes, __ATOMIC_RELAXED) == 0) {
		rv_linger_hit(&linger);
	} else if (want) {
		rte_spinlock_lock(&linger_lock);
		rv_linger_done(&linger, got);
		rte_spinlock_unlock(&linger_lock);
	}
	rv_linger_reaped(&linger, __atomic_load_n(&app_calls, __ATOMIC_RELAXED),
			 __atomic_load_n(&proc.st->workers[0]->now_tsc, __ATOMIC_RELAXED));
	if (want && !got) {
		/* nothing came: the program goes back to spinning (or to its own
		 * work) and stops driving, so the progress thread, which may be
		 * in its longest nap after the linger's driving, takes over now */
		__atomic_store_n(&app_drove_tsc, 0, __ATOMIC_RELAXED);
		progress_kick();
	}
}

void rv_posted_after_placement(void)
{
	if (!started || !proc.inline_drive || __atomic_load_n(&linger.on, __ATOMIC_RELAXED))
		return;
	rte_spinlock_lock(&linger_lock);
	rv_linger_posted(&linger, __atomic_load_n(&app_calls, __ATOMIC_RELAXED), true, rte_rdtsc());
	rte_spinlock_unlock(&linger_lock);
}

static void progress_nap(uint64_t ns)
{
	const struct timespec t = { (time_t)(ns / 1000000000u), (long)(ns % 1000000000u) };

	__atomic_store_n(&nap_word, 0, __ATOMIC_RELEASE);
	syscall(SYS_futex, &nap_word, FUTEX_WAIT_PRIVATE, 0, &t, NULL, 0);
}

void rv_block_begin(void)
{
	if (!started || !proc.inline_drive)
		return;
	__atomic_add_fetch(&app_blocked, 1, __ATOMIC_ACQ_REL);
	progress_kick();   /* it may nap long while the program drove */
}

void rv_block_end(void)
{
	if (!started || !proc.inline_drive)
		return;
	__atomic_sub_fetch(&app_blocked, 1, __ATOMIC_ACQ_REL);
}

/*
 * The progress thread keeps the stack going while no program thread
 * drives it: connection setup, timers, and the traffic of a program that
 * waits in ibv_get_cq_event(), rdma_get_cm_event() or a socket (perftest's
 * passive side sits in read() for a whole bandwidth test). While traffic
 * flows it polls like a NIC's poll-mode driver (yielding the CPU at each
 * loop once idle for IDLE_BEFORE_YIELD_US); it naps only after the
 * stack has been idle for IDLE_BEFORE_NAP_US, so a burst that arrives
 * after a short gap is not left in the ring for a whole nap. It stays out
 * of the way of a program that polls (one busy thread per process is
 * enough): while the program drove less than RV_APP_POLLING_NS ago, it
 * naps, longer each time the program still drives (pace.h), until a program
 * thread enters a verbs wait (rv_block_begin() wakes it). The frames it
 * receives tell whether the program waits for them spinning on memory
 * (the linger of pace.h).
 */
#define IDLE_BEFORE_YIELD_US 50
#define IDLE_BEFORE_NAP_US 1000

static void *progress_main(void *arg)
{
	const uint64_t us = rte_get_tsc_hz() / 1000000;
	const uint64_t app_window = RV_APP_POLLING_NS * us / 1000;   /* cycles */
	uint64_t last_work = rte_rdtsc();
	uint64_t nap_ns = 0;

	(void)arg;
	rte_thread_register();
	uint64_t now = rte_rdtsc();
	while (!__atomic_load_n(&progress_stop, __ATOMIC_ACQUIRE)) {
		/* signed: the program may have driven after this loop's clock */
		int64_t since_app = (int64_t)(now - __atomic_load_n(&app_drove_tsc, __ATOMIC_RELAXED));
		bool blocked = __atomic_load_n(&app_blocked, __ATOMIC_ACQUIRE) != 0;
		if (rv_app_drives(since_app, app_window, blocked)) {
			nap_ns = rv_nap_next(nap_ns, true);
			progress_nap(nap_ns);
			progress_app_naps++;
			now = rte_rdtsc();
			continue;
		}
		if (nap_ns != 0)
			progress_takeovers++;
		nap_ns = 0;
		bool drove = drive_trylock();
		if (drove) {
			/* the pattern needs a reap within the window: a program
			 * that never reaps (perftest's passive side) costs no
			 * frame count and no lock per loop (a racy read: the
			 * lock decides) */
			uint64_t reap = __atomic_load_n(&linger.reap_tsc, __ATOMIC_RELAXED);
			bool watch = reap != 0 && now - reap < linger.window;
			uint64_t rx0 = watch ? rx_frames() : 0;
			if (drive_once() != 0) {
				last_work = now;
				progress_served++;
			}
			if (watch && rx_frames() != rx0) {
				rte_spinlock_lock(&linger_lock);
				rv_linger_progress_rx(&linger,
						      __atomic_load_n(&app_calls, __ATOMIC_RELAXED),
						      __atomic_load_n(&app_blocked, __ATOMIC_ACQUIRE) != 0,
						      now);
				rte_spinlock_unlock(&linger_lock);
			}
			drive_unlock();
		}
		if (now - last_work > IDLE_BEFORE_NAP_US * us) {
			progress_nap(RV_NAP_MIN_NS);
			drove = false;
		} else if (now - last_work > IDLE_BEFORE_YIELD_US * us) {
			sched_yield();
			drove = false;
		}
		/* the next loop's clock: the one the worker loop just read (no
		 * rdtsc of ours: about 22 ns on these VMs), unless this thread
		 * did not drive or then napped or yielded */
		now = drove ? proc.st->workers[0]->now_tsc : rte_rdtsc();
	}
	rte_thread_unregister();
	return NULL;
}

/* --- start, exit, fork ------------------------------------------------------- */

/* Split RNIC_ARGS at white space into argv[1..]; argv[0] is the program. */
static int split_args(char *s, char **argv, int max)
{
	int n = 0;

	argv[n++] = "rnic-verbs";
	for (char *t = strtok(s, " \t\n"); t != NULL; t = strtok(NULL, " \t\n")) {
		if (n == max - 1)
			return -E2BIG;
		argv[n++] = t;
	}
	argv[n] = NULL;
	return n;
}

/* The stack's configuration from RNIC_CONFIG and RNIC_ARGS. */
static int config_from_env(struct rnic_config *cfg)
{
	char err[RNIC_ERRLEN] = "";
	const char *file = getenv("RNIC_CONFIG");
	const char *args = getenv("RNIC_ARGS");

	rnic_config_init(cfg);
	if ((file == NULL || *file == '\0') && (args == NULL || *args == '\0')) {
		rv_log("no rnic port configured: run the program with rnic-run, or set "
		       "RNIC_CONFIG (an INI file) or RNIC_ARGS (\"--vdev SPEC --ip CIDR\")");
		return -ENODEV;
	}
	if (file != NULL && *file != '\0' &&
	    rnic_config_load(cfg, file, NULL, err, sizeof(err)) != 0) {
		rv_log("%s", err);
		return -EINVAL;
	}
	if (args != NULL && *args != '\0') {
		static char buf[4096];
		static char *argv[RV_MAX_ARGS];
		snprintf(buf, sizeof(buf), "%s", args);
		int argc = split_args(buf, argv, RV_MAX_ARGS);
		if (argc < 0 || rnic_config_parse_args(cfg, &argc, argv, err, sizeof(err)) != 0) {
			rv_log("RNIC_ARGS: %s", argc < 0 ? "too many words" : err);
			return -EINVAL;
		}
		if (argc > 1) {
			rv_log("RNIC_ARGS: unknown option '%s' (%s)", argv[1],
			       rnic_config_usage());
			return -EINVAL;
		}
	}
	if (cfg->n_ports == 0) {
		rv_log("the configuration has no port");
		return -ENODEV;
	}
	return 0;
}

static int transport_from_env(enum rnic_transport *t)
{
	const char *s = getenv("RNIC_TRANSPORT");

	*t = RNIC_TRANSPORT_IWARP;
	if (s == NULL || *s == '\0' || strcmp(s, "iwarp") == 0)
		return 0;
	if (strcmp(s, "roce") == 0) {
		*t = RNIC_TRANSPORT_ROCE;
		return 0;
	}
	rv_log("RNIC_TRANSPORT=%s: expected iwarp or roce", s);
	return -EINVAL;
}

/* RNIC_POLL_LINGER_US: the linger time of pace.h (default 200 us, 0 off). */
static int linger_from_env(void)
{
	const char *s = getenv("RNIC_POLL_LINGER_US");
	unsigned long v = 200;
	char *end;

	if (s != NULL && *s != '\0') {
		v = strtoul(s, &end, 10);
		if (*end != '\0' || v > 1000000) {
			rv_log("RNIC_POLL_LINGER_US=%s: expected microseconds (0 to 1000000)", s);
			return -EINVAL;
		}
	}
	uint64_t us = rte_get_tsc_hz() / 1000000;
	uint64_t window = 2 * RV_NAP_MAX_NS / 1000;   /* µs: two of the longest naps */
	rv_linger_init(&linger, v * us, (v > window ? v : window) * us);
	return 0;
}

static int drive_from_env(bool *inline_drive)
{
	const char *s = getenv("RNIC_DRIVE");

	*inline_drive = true;
	if (s == NULL || *s == '\0' || strcmp(s, "inline") == 0)
		return 0;
	if (strcmp(s, "lcores") == 0) {
		*inline_drive = false;
		return 0;
	}
	rv_log("RNIC_DRIVE=%s: expected inline or lcores", s);
	return -EINVAL;
}

static void at_exit(void)
{
	if (!started || forked_child)
		return;
	const char *say = getenv("RNIC_VERBS_STATS");
	bool stats = say != NULL && *say != '\0' && strcmp(say, "0") != 0;
	if (stats) {
		rv_log("rdma_cm: %lu queued events looked at by id destroys",
		       (unsigned long)rv_cm_forget_walked());
		/* read while the progress thread may still drive: a snapshot */
		for (unsigned i = 0; i < proc.st->n_workers; i++) {
			const struct rnic_worker_stats *ws = &proc.st->workers[i]->stats;
			rv_log("worker %u: %lu loops (%lu busy), %lu frames in, %lu out in %lu "
			       "bursts", i, (unsigned long)ws->loops,
			       (unsigned long)ws->busy_loops, (unsigned long)ws->rx_pkts,
			       (unsigned long)ws->tx_pkts, (unsigned long)ws->tx_flushes);
		}
	}
	if (proc.inline_drive) {
		__atomic_store_n(&progress_stop, true, __ATOMIC_RELEASE);
		progress_kick();
		/* bounded: a progress thread stuck inside a poller must not
		 * hold the program's exit (the stack's own stop waits as long) */
		struct timespec until;
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_sec += RNIC_STOP_WAIT_MS / 1000;
		if (pthread_timedjoin_np(progress_tid, NULL, &until) != 0) {
			rv_log("the progress thread did not stop within %u ms: "
			       "exiting without freeing the stack", RNIC_STOP_WAIT_MS);
			started = false;
			return;
		}
		if (stats)
			rv_log("pacing: %lu progress naps while the program drove, %lu "
			       "takeovers when it was away, %lu progress loops with work, %lu "
			       "lingers in ibv_poll_cq (%lu ran out)",
			       (unsigned long)progress_app_naps, (unsigned long)progress_takeovers,
			       (unsigned long)progress_served, (unsigned long)linger.lingers,
			       (unsigned long)linger.timeouts);
	} else {
		rnic_stack_stop(proc.st);
	}
	/* The program may exit with its verbs objects alive; the stack is
	 * freed only when it closed them all (our two references remain),
	 * else the process's exit reclaims it.
	 * No rte_eal_cleanup(): in DPDK 22.11 it unmaps the EAL's memory while
	 * the EAL interrupt thread keeps running, and that thread then reads
	 * an interrupt handle that lived there (SIGSEGV in rte_intr_fd_get(),
	 * seen in about half of the perftest runs over net_memif, after the
	 * program had printed its report). The ports are closed above; what
	 * is left is memory that the exit gives back anyway. */
	struct rnic_device *d = dev_of(proc.ctx[0]);
	if (d->refs == 2 && d->n_pd == 0 && d->n_cq == 0 && d->n_qp == 0 &&
	    d->n_srq == 0 && d->n_chan == 0) {
		rnic_close_device(proc.ctx[1]);
		rnic_close_device(proc.ctx[0]);
		rnic_stack_destroy(proc.st);
	}
	started = false;
}

static void at_fork_child(void)
{
	forked_child = true;
}

/* A program queries its port right after opening the device and gives up
 * on one that is down (perftest does): wait for the links to come up, as
 * a NIC's would have long before, up to RNIC_LINK_WAIT_MS (default 3 s; a
 * memif server's link is up only once its client is there). */
static void wait_links(void)
{
	const struct timespec tick = { 0, 1000 * 1000 };
	const char *env = getenv("RNIC_LINK_WAIT_MS");
	unsigned limit = env != NULL && *env != '\0' ? (unsigned)strtoul(env, NULL, 10) : 3000;
	struct ibv_port_attr a;

	for (unsigned ms = 0; ms <= limit; ms++) {
		bool up = true;
		for (unsigned port = 1; port <= proc.st->n_ports; port++)
			up &= rnic_query_port(proc.ctx[0], (uint8_t)port, &a) == 0 &&
			      a.state == IBV_PORT_ACTIVE;
		if (up) {
			/* a link that came up with its peer (memif): a
			 * program about to meet that peer over another
			 * channel may give it RNIC_LINK_SETTLE_MS to get
			 * there first */
			const char *settle = getenv("RNIC_LINK_SETTLE_MS");
			if (settle != NULL)
				usleep((useconds_t)strtoul(settle, NULL, 10) * 1000);
			return;
		}
		nanosleep(&tick, NULL);
	}
	rv_log("a port's link is still down after %u ms (RNIC_LINK_WAIT_MS)", limit);
}

/*
 * The signals the threads of the stack (DPDK's interrupt, telemetry and
 * control threads, lcores, the progress thread) block, so that a signal
 * sent to the process goes to one of the program's threads, as it would
 * without rnic: a program whose thread waits in ibv_get_cq_event() or
 * rdma_get_cm_event() for alarm() or kill() to interrupt it gets its
 * EINTR. Threads inherit the mask of the thread that creates them: the
 * start blocks these around the stack's creation, then restores the
 * program's mask. Left unblocked: the faults a thread raises itself, and
 * the real-time signals, one of which DPDK's net_tap takes for its receive
 * trigger (its handler must run somewhere).
 */
static void stack_sigmask(sigset_t *set)
{
	static const int sync_sigs[] = { SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGSYS };

	sigfillset(set);
	for (size_t i = 0; i < sizeof(sync_sigs) / sizeof(sync_sigs[0]); i++)
		sigdelset(set, sync_sigs[i]);
	for (int sig = SIGRTMIN; sig <= SIGRTMAX; sig++)
		sigdelset(set, sig);
}

/* The kernel id of the process's thread named @p comm, or 0. */
static pid_t thread_named(const char *comm)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	pid_t tid = 0;

	while (d != NULL && tid == 0 && (e = readdir(d)) != NULL) {
		char path[300], name[32] = "";
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/comm", e->d_name);
		FILE *f = fopen(path, "r");
		if (f == NULL)
			continue;
		if (fgets(name, sizeof(name), f) != NULL && strncmp(name, comm, strlen(comm)) == 0 &&
		    name[strlen(comm)] == '\n')
			tid = (pid_t)atoi(e->d_name);
		fclose(f);
	}
	if (d != NULL)
		closedir(d);
	return tid;
}

/*
 * DPDK 22.11's net_tap raises a real-time signal per received frame: each
 * queue's tun fd is O_ASYNC, owned by the process (F_SETOWN getpid()), so
 * the kernel gives the signal to a thread that does not block it, the
 * program's main thread first, and the program's own poll(), select() and
 * epoll_wait() fail with EINTR (185 of 198 50 ms polls in a ping flood).
 * Point those fds at the EAL's interrupt thread instead (F_SETOWN_EX,
 * F_OWNER_TID): it runs the tap's handler (the receive trigger) and retries
 * its epoll_wait() on EINTR. Called once the ports are up. @return the fds
 * redirected.
 */
static unsigned tap_signals_to_stack(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	unsigned n = 0;
	pid_t tid = thread_named("eal-intr-thread");

	while (d != NULL && tid != 0 && (e = readdir(d)) != NULL) {
		char path[300], link[32];
		int fd = atoi(e->d_name);
		struct f_owner_ex own;
		if (e->d_name[0] == '.' || fd == dirfd(d))
			continue;
		snprintf(path, sizeof(path), "/proc/self/fd/%s", e->d_name);
		ssize_t len = readlink(path, link, sizeof(link) - 1);
		if (len <= 0)
			continue;
		link[len] = '\0';
		int fl = fcntl(fd, F_GETFL);
		if (strcmp(link, "/dev/net/tun") != 0 || fl < 0 || !(fl & O_ASYNC) ||
		    fcntl(fd, F_GETOWN_EX, &own) != 0 || own.type != F_OWNER_PID ||
		    own.pid != getpid())
			continue;
		own = (struct f_owner_ex){ .type = F_OWNER_TID, .pid = tid };
		n += fcntl(fd, F_SETOWN_EX, &own) == 0;
	}
	if (d != NULL)
		closedir(d);
	return n;
}

int rv_thread_create(pthread_t *tid, void *(*fn)(void *), void *arg)
{
	sigset_t block, prog;

	stack_sigmask(&block);
	pthread_sigmask(SIG_BLOCK, &block, &prog);
	int rc = pthread_create(tid, NULL, fn, arg);
	pthread_sigmask(SIG_SETMASK, &prog, NULL);
	return rc;
}

static int start_stack(void);

static int start(void)
{
	sigset_t block, prog;

	stack_sigmask(&block);
	pthread_sigmask(SIG_BLOCK, &block, &prog);
	int rc = start_stack();
	pthread_sigmask(SIG_SETMASK, &prog, NULL);
	return rc;
}

static int start_stack(void)
{
	struct rnic_config cfg;
	cpu_set_t cpus;
	int rc;

	rc = config_from_env(&cfg);
	rc = rc ? rc : transport_from_env(&proc.transport);
	rc = rc ? rc : drive_from_env(&proc.inline_drive);
	if (rc != 0)
		return rc;
	/* EAL sets the calling thread's affinity to its main lcore's CPUs:
	 * this thread is the program's, which keeps what it had */
	bool have_cpus = sched_getaffinity(0, sizeof(cpus), &cpus) == 0;
	rc = rnic_eal_init("rnic-verbs", &cfg, cfg.workers);
	if (have_cpus)
		sched_setaffinity(0, sizeof(cpus), &cpus);
	rc = rc ? rc : linger_from_env();
	if (rc != 0)
		return rc;
	proc.st = rnic_stack_create(&cfg);
	if (proc.st == NULL) {
		rv_log("stack: %s", rte_strerror(rte_errno));
		return -rte_errno;
	}
	tap_signals_to_stack();
	proc.ctx[0] = rnic_open_device_transport(proc.st, RNIC_TRANSPORT_IWARP);
	proc.ctx[1] = rnic_open_device_transport(proc.st, RNIC_TRANSPORT_ROCE);
	if (proc.ctx[0] == NULL || proc.ctx[1] == NULL)
		return -ENOMEM;
	/* the default transport's face first: the device a program that
	 * takes the first one gets */
	bool roce_first = proc.transport == RNIC_TRANSPORT_ROCE;
	proc.dev[0] = proc.ctx[roce_first]->device;
	proc.dev[1] = proc.ctx[!roce_first]->device;
	proc.dev[2] = NULL;
	rv_install_ops(proc.ctx[0]);
	rv_install_ops(proc.ctx[1]);
	if (proc.inline_drive) {
		rc = pthread_create(&progress_tid, NULL, progress_main, NULL);
		if (rc != 0)
			return -rc;
		pthread_setname_np(progress_tid, "rnic-progress");
	} else {
		rc = rnic_stack_start(proc.st);
		if (rc != 0)
			return rc;
	}
	pthread_atfork(NULL, NULL, at_fork_child);
	atexit(at_exit);
	wait_links();
	return 0;
}

static void start_once(void)
{
	int rc = start();

	started = rc == 0;
	start_errno = rc < 0 ? -rc : rc;
	if (rc != 0)
		rv_log("the rnic stack did not start (%s): no devices", strerror(start_errno));
}

struct rv_proc *rv_proc(void)
{
	if (forked_child) {
		static bool said;
		if (!__atomic_exchange_n(&said, true, __ATOMIC_RELAXED))
			rv_log("verbs calls in a fork() child are not supported: the "
			       "stack belongs to the parent");
		errno = EOPNOTSUPP;
		return NULL;
	}
	pthread_once(&once, start_once);
	if (!started) {
		errno = start_errno ? start_errno : ENODEV;
		return NULL;
	}
	return &proc;
}

struct rv_proc *rv_proc_if_started(void)
{
	return started && !forked_child ? &proc : NULL;
}

int rv_face_of_device(const struct ibv_device *dev)
{
	if (!started || dev == NULL)
		return -1;
	for (int i = 0; i < 2; i++)
		if (proc.ctx[i]->device == dev)
			return i;
	return -1;
}

/* --- unsupported entry points ------------------------------------------------ */

void rv_unsupported(const char *fn)
{
	static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	static const char *said[256];
	static unsigned n_said;
	bool first = true;

	pthread_mutex_lock(&lock);
	for (unsigned i = 0; i < n_said; i++)
		first &= said[i] != fn;
	if (first && n_said < 256)
		said[n_said++] = fn;
	pthread_mutex_unlock(&lock);
	if (first)
		rv_log("%s is not supported by rnic (EOPNOTSUPP)", fn);
	errno = EOPNOTSUPP;
}
