/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * signal_check: an ordinary libibverbs + librdmacm program, run under
 * rnic-run (signals.sh), that checks what a signal does to a thread
 * blocked in a verbs wait, as libibverbs and librdmacm have it: the
 * blocking read() of the channel ends with -1/EINTR when the signal's
 * handler was installed without SA_RESTART, and goes on waiting with it.
 *
 *   1. ibv_get_cq_event(), the waiting thread signalled (pthread_kill),
 *      handler without SA_RESTART: -1, errno EINTR
 *   2. the same with SA_RESTART: still waiting after the signal; the CQ
 *      event of a flushed receive then ends the wait (0, that CQ)
 *   3. ibv_get_cq_event(), the signal sent to the process (kill()) while
 *      every other program thread blocks it: the handler runs on the
 *      waiting thread (the stack's and DPDK's threads block it too) and
 *      the wait ends with EINTR
 *   4. rdma_get_cm_event(), the waiting thread signalled: -1, EINTR
 *   5. rdma_get_cm_event(), the signal sent to the process: EINTR
 *
 * A wait that does not end within 3 s is a failure (the thread is left
 * blocked; the process exits). Prints "ok: ..." per check and
 * "signal_check: N checks, all ok" (exit 0), or "FAIL: ..." (exit 1).
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

static int checks, fails;

#define CHECK(cond, ...)                                                                  \
	do {                                                                              \
		checks++;                                                                 \
		printf("%s", (cond) ? "ok: " : (fails++, "FAIL: "));                      \
		printf(__VA_ARGS__);                                                      \
		putchar('\n');                                                            \
	} while (0)

static volatile pid_t handled_on;   /* the thread the last handler ran on */

static void on_signal(int sig)
{
	(void)sig;
	handled_on = (pid_t)syscall(SYS_gettid);
}

static void handle(int flags)
{
	struct sigaction sa = { .sa_handler = on_signal, .sa_flags = flags };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, NULL);
}

/* One blocked wait on another thread. */
struct waiter {
	pthread_t tid;
	volatile pid_t tid_k;      /* its kernel thread id */
	struct ibv_comp_channel *cq_ch;
	struct rdma_event_channel *cm_ch;
	volatile bool done;
	int rc, err;
	struct ibv_cq *cq;
};

static void *wait_main(void *arg)
{
	struct waiter *w = arg;
	void *cq_ctx;
	struct rdma_cm_event *ev;

	w->tid_k = (pid_t)syscall(SYS_gettid);
	errno = 0;
	if (w->cq_ch != NULL)
		w->rc = ibv_get_cq_event(w->cq_ch, &w->cq, &cq_ctx);
	else
		w->rc = rdma_get_cm_event(w->cm_ch, &ev);
	w->err = errno;
	__atomic_store_n(&w->done, true, __ATOMIC_RELEASE);
	return NULL;
}

static void sleep_ms(unsigned ms)
{
	const struct timespec t = { ms / 1000, (long)(ms % 1000) * 1000000 };
	nanosleep(&t, NULL);
}

/* Whether @p w finished within @p ms. */
static bool finished(struct waiter *w, unsigned ms)
{
	for (unsigned i = 0; i < ms / 10; i++) {
		if (__atomic_load_n(&w->done, __ATOMIC_ACQUIRE))
			return true;
		sleep_ms(10);
	}
	return __atomic_load_n(&w->done, __ATOMIC_ACQUIRE);
}

/* Start the wait; @p process: the signal goes to the process, every
 * other program thread (this one) blocking it. @return whether it ended
 * with -1/EINTR, the handler on the waiting thread. */
static bool interrupted(struct waiter *w, bool process)
{
	sigset_t usr1, old;

	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	w->done = false;
	handled_on = 0;
	pthread_create(&w->tid, NULL, wait_main, w);
	sleep_ms(300);   /* it is blocked in the wait by now */
	if (process) {
		pthread_sigmask(SIG_BLOCK, &usr1, &old);
		kill(getpid(), SIGUSR1);
	} else {
		pthread_kill(w->tid, SIGUSR1);
	}
	bool ended = finished(w, 3000);
	if (process)
		pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (ended)
		pthread_join(w->tid, NULL);
	return ended && w->rc == -1 && w->err == EINTR && handled_on == w->tid_k;
}

/*
 * "signal_check poll SECONDS": the program's own waits while frames come
 * in (signals.sh pings the port over net_tap meanwhile): poll() with no
 * fds, 50 ms at a time, for SECONDS; none may fail with EINTR (net_tap's
 * receive trigger signal is the stack's business, not the program's).
 */
static int own_waits(int seconds)
{
	struct ibv_device **list = ibv_get_device_list(NULL);   /* starts the stack */
	unsigned calls = 0, eintr = 0;
	struct timespec t0, t;

	CHECK(list != NULL && list[0] != NULL, "the stack started");
	printf("ready\n");
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		calls++;
		if (poll(NULL, 0, 50) < 0 && errno == EINTR)
			eintr++;
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while (t.tv_sec - t0.tv_sec < seconds);
	CHECK(eintr == 0, "poll() in the program: %u calls, %u failed with EINTR", calls, eintr);
	if (list != NULL)
		ibv_free_device_list(list);
	return fails ? 1 : 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 3 && strcmp(argv[1], "poll") == 0)
		return own_waits(atoi(argv[2]));
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *ctx = list != NULL && list[0] != NULL ? ibv_open_device(list[0]) : NULL;
	struct ibv_comp_channel *ch = ctx ? ibv_create_comp_channel(ctx) : NULL;
	struct ibv_cq *cq = ch ? ibv_create_cq(ctx, 8, NULL, ch, 0) : NULL;
	struct ibv_pd *pd = cq ? ibv_alloc_pd(ctx) : NULL;
	CHECK(pd != NULL, "a device, a channel, a CQ on it, a PD");
	if (pd == NULL)
		return 1;

	/* 1 */
	struct waiter w = { .cq_ch = ch };
	handle(0);
	CHECK(interrupted(&w, false), "ibv_get_cq_event, thread signalled, no SA_RESTART: "
	      "%s rc %d errno %d", w.done ? "returned" : "still waiting after 3 s", w.rc, w.err);

	/* 2: a QP with a receive to flush into the armed CQ */
	struct ibv_qp_init_attr qa = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 1, .max_recv_wr = 1, .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp *qp = ibv_create_qp(pd, &qa);
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1,
				 .qp_access_flags = IBV_ACCESS_LOCAL_WRITE };
	struct ibv_recv_wr rwr = { .wr_id = 1 }, *bad;
	int rc = qp ? ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
						    IBV_QP_ACCESS_FLAGS) : -1;
	rc = rc ? rc : ibv_post_recv(qp, &rwr, &bad);
	rc = rc ? rc : ibv_req_notify_cq(cq, 0);
	CHECK(rc == 0, "an RC QP in INIT with a receive, the CQ armed (%d)", rc);
	if (w.done) {   /* (else test 1 left a thread in the wait) */
		handle(SA_RESTART);
		w.done = false;
		handled_on = 0;
		pthread_create(&w.tid, NULL, wait_main, &w);
		sleep_ms(300);
		pthread_kill(w.tid, SIGUSR1);
		bool early = finished(&w, 500);
		CHECK(!early && handled_on == w.tid_k,
		      "ibv_get_cq_event, thread signalled, SA_RESTART: the handler ran, still "
		      "waiting (%s)", early ? "returned" : "waiting");
		a.qp_state = IBV_QPS_ERR;
		rc = ibv_modify_qp(qp, &a, IBV_QP_STATE);
		bool ended = finished(&w, 3000);
		if (ended)
			pthread_join(w.tid, NULL);
		CHECK(rc == 0 && ended && w.rc == 0 && w.cq == cq,
		      "... then the flushed receive's CQ event ends it (rc %d, %s)", w.rc,
		      ended ? "returned" : "still waiting after 3 s");
		if (ended && w.rc == 0)
			ibv_ack_cq_events(cq, 1);
	}

	/* 3 */
	if (w.done) {
		handle(0);
		CHECK(interrupted(&w, true), "ibv_get_cq_event, process signalled, no SA_RESTART: "
		      "%s rc %d errno %d, handler on the waiting thread: %s",
		      w.done ? "returned" : "still waiting after 3 s", w.rc, w.err,
		      handled_on == w.tid_k ? "yes" : "no");
	}

	/* 4, 5 */
	struct rdma_event_channel *cm = rdma_create_event_channel();
	CHECK(cm != NULL, "an rdma_cm event channel");
	struct waiter c1 = { .cm_ch = cm }, c2 = { .cm_ch = cm };
	handle(0);
	CHECK(cm != NULL && interrupted(&c1, false),
	      "rdma_get_cm_event, thread signalled: %s rc %d errno %d",
	      c1.done ? "returned" : "still waiting after 3 s", c1.rc, c1.err);
	if (c1.done)
		CHECK(cm != NULL && interrupted(&c2, true),
		      "rdma_get_cm_event, process signalled: %s rc %d errno %d, handler on the "
		      "waiting thread: %s", c2.done ? "returned" : "still waiting after 3 s",
		      c2.rc, c2.err, handled_on == c2.tid_k ? "yes" : "no");

	if (fails != 0) {
		/* threads may be left blocked in a wait: no teardown */
		printf("signal_check: %d of %d checks failed\n", fails, checks);
		fflush(stdout);
		_exit(1);
	}
	rdma_destroy_event_channel(cm);
	ibv_destroy_qp(qp);
	ibv_dealloc_pd(pd);
	ibv_destroy_cq(cq);
	ibv_destroy_comp_channel(ch);
	ibv_close_device(ctx);
	ibv_free_device_list(list);
	printf("signal_check: %d checks, all ok\n", checks);
	return 0;
}
