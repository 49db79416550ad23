/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Completion handlers (seed 003) and spread completions (seed 002):
 * - priorities and solicited-only arms, deterministically, on a stack
 *   whose worker the test drives itself (embedded, run-to-completion);
 * - 2 workers per stack and 2 application threads move 10^5 Sends over 64
 *   QPs while a third thread re-binds the CQs between handlers every 2 ms;
 *   every completion must arrive exactly once and in order per QP, and the
 *   callbacks must keep firing through the re-binds.
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "rnic/rnic.h"
#include "rnic/rnic_cm.h"
#include "rnic/rnic_verbs.h"
#include "verbs/verbs.h"

#define A_IP 0xc0000201u
#define B_IP 0xc0000202u

static struct rnic_stack *A, *B, *C;

/* --- priorities, arms (embedded worker) ---------------------------------------- */

static int order[8], n_order;
static void rec(struct ibv_cq *cq, void *arg)
{
	(void)cq;
	order[n_order++] = (int)(intptr_t)arg;
}

static void test_priorities_and_arms(void **state)
{
	(void)state;
	struct ibv_context *ctx = rnic_open_device(C);
	assert_non_null(ctx);
	assert_int_equal(rnic_query_handlers(ctx), 1);
	int hi = rnic_add_handler(ctx, 0, 10);
	assert_int_equal(hi, 1);
	assert_int_equal(rnic_query_handlers(ctx), 2);
	assert_int_equal(rnic_add_handler(ctx, 7, 0), -EINVAL);
	struct ibv_cq *lo_cq = rnic_create_cq(ctx, 16, NULL, NULL, 0);
	struct ibv_cq *hi_cq = rnic_create_cq(ctx, 16, NULL, NULL, hi);
	assert_non_null(lo_cq);
	assert_non_null(hi_cq);
	assert_int_equal(ibv_req_notify_cq(lo_cq, 0), EINVAL);   /* no channel, no callback */
	assert_int_equal(rnic_set_comp_handler(lo_cq, rec, (void *)0), 0);
	assert_int_equal(rnic_set_comp_handler(hi_cq, rec, (void *)1), 0);
	assert_int_equal(ibv_req_notify_cq(lo_cq, 0), 0);
	assert_int_equal(ibv_req_notify_cq(hi_cq, 0), 0);
	assert_int_equal(rnic_set_comp_handler(lo_cq, rec, (void *)0), -EBUSY);
	struct ibv_wc wc = { .wr_id = 1, .status = IBV_WC_SUCCESS, .opcode = IBV_WC_RECV };
	/* the low-priority event is due first, the high one is delivered first */
	assert_int_equal(rnic_cq_push(cq_of(lo_cq), &wc, false), 0);
	assert_int_equal(rnic_cq_push(cq_of(hi_cq), &wc, false), 0);
	assert_int_equal(rnic_cq_push(cq_of(hi_cq), &wc, false), 0);   /* disarmed: no 2nd event */
	for (int i = 0; i < 4; i++)
		rnic_worker_poll(C, 0);
	assert_int_equal(n_order, 2);
	assert_int_equal(order[0], 1);
	assert_int_equal(order[1], 0);
	/* solicited-only: an ordinary completion does not fire, a solicited
	 * one does, and so does an error */
	n_order = 0;
	assert_int_equal(ibv_req_notify_cq(lo_cq, 1), 0);
	assert_int_equal(rnic_cq_push(cq_of(lo_cq), &wc, false), 0);
	rnic_worker_poll(C, 0);
	assert_int_equal(n_order, 0);
	assert_int_equal(rnic_cq_push(cq_of(lo_cq), &wc, true), 0);
	rnic_worker_poll(C, 0);
	assert_int_equal(n_order, 1);
	assert_int_equal(ibv_req_notify_cq(lo_cq, 1), 0);
	wc.status = IBV_WC_REM_ACCESS_ERR;
	assert_int_equal(rnic_cq_push(cq_of(lo_cq), &wc, false), 0);
	rnic_worker_poll(C, 0);
	assert_int_equal(n_order, 2);
	/* a next-completion arm is not narrowed by a later solicited one */
	assert_int_equal(ibv_req_notify_cq(lo_cq, 0), 0);
	assert_int_equal(ibv_req_notify_cq(lo_cq, 1), 0);
	wc.status = IBV_WC_SUCCESS;
	assert_int_equal(rnic_cq_push(cq_of(lo_cq), &wc, false), 0);
	rnic_worker_poll(C, 0);
	assert_int_equal(n_order, 3);
	/* re-binding an armed CQ: its event is delivered once, by the new handler */
	assert_int_equal(ibv_req_notify_cq(lo_cq, 0), 0);
	assert_int_equal(rnic_cq_push(cq_of(lo_cq), &wc, false), 0);
	assert_int_equal(rnic_modify_cq_handler(lo_cq, hi), 0);
	assert_int_equal(rnic_modify_cq_handler(lo_cq, 9), -EINVAL);
	rnic_worker_poll(C, 0);
	rnic_worker_poll(C, 0);
	assert_int_equal(n_order, 4);
	struct rnic_cq_stats s;
	rnic_cq_stats(lo_cq, &s);
	assert_int_equal(s.rebinds, 1);
	assert_int_equal(s.handler, hi);
	assert_int_equal(s.events, 5);
	struct ibv_wc out[16];
	assert_int_equal(ibv_poll_cq(lo_cq, 16, out), 6);
	assert_int_equal(ibv_poll_cq(hi_cq, 16, out), 2);
	assert_int_equal(rnic_destroy_cq(lo_cq), 0);
	assert_int_equal(rnic_destroy_cq(hi_cq), 0);
	assert_int_equal(rnic_close_device(ctx), 0);
}

/* --- 10^5 Sends over 64 QPs with CQs re-bound every 2 ms ----------------------- */

#define NQP 64
#define NCQ 4
#define OPS 102400   /* 10^5 and a bit: 1600 per QP */
#define WIN 8
#define MSG 256

struct qpair {
	struct ibv_qp *a, *b;
	struct rnic_cm_id *aid, *bid;
	uint64_t sent, send_done, recv_done;
	uint8_t *abuf, *bbuf;
	struct ibv_mr *amr, *bmr;
};
static struct qpair qps[NQP];
static struct ibv_context *ca, *cb;
static struct ibv_pd *apd, *bpd;
static struct ibv_cq *acq[NCQ], *bcq[NCQ];
static volatile int stop_rebind;
static uint64_t dup_or_ooo, events_seen, rebinds;

static void cb_event(struct ibv_cq *cq, void *arg)
{
	(void)arg;
	__atomic_fetch_add(&events_seen, 1, __ATOMIC_RELAXED);
	ibv_req_notify_cq(cq, 0);   /* keep them coming */
}

static void post_recv(struct qpair *p, uint64_t seq)
{
	struct ibv_sge s = { (uintptr_t)p->abuf + (seq % WIN) * MSG, MSG, p->amr->lkey };
	struct ibv_recv_wr wr = { .wr_id = ((uint64_t)(p - qps) << 32) | seq, .sg_list = &s,
				  .num_sge = 1 }, *bad;
	assert_int_equal(ibv_post_recv(p->a, &wr, &bad), 0);
}

static void *app_thread(void *arg)
{
	unsigned t = (unsigned)(uintptr_t)arg;
	uint64_t target = OPS / NQP;   /* sends per QP */
	bool busy = true;
	while (busy) {
		busy = false;
		for (unsigned i = t; i < NQP; i += 2) {
			struct qpair *p = &qps[i];
			while (p->sent < target && p->sent - p->send_done < WIN &&
			       p->sent - p->recv_done < WIN) {
				struct ibv_sge s = { (uintptr_t)p->bbuf, MSG, p->bmr->lkey };
				struct ibv_send_wr wr = { .wr_id = ((uint64_t)i << 32) | p->sent,
					.sg_list = &s, .num_sge = 1, .opcode = IBV_WR_SEND,
					.send_flags = IBV_SEND_SIGNALED }, *bad;
				if (ibv_post_send(p->b, &wr, &bad) != 0)
					break;
				p->sent++;
			}
			if (p->recv_done < target || p->send_done < target)
				busy = true;
		}
		/* this thread's CQs: t and t + 2 (QP i uses CQ i % NCQ) */
		for (unsigned c = t; c < NCQ; c += 2) {
			struct ibv_wc wc[32];
			int n = ibv_poll_cq(bcq[c], 32, wc);
			for (int k = 0; k < n; k++) {
				struct qpair *p = &qps[wc[k].wr_id >> 32];
				if (wc[k].status != IBV_WC_SUCCESS ||
				    (wc[k].wr_id & 0xffffffff) != p->send_done)
					__atomic_fetch_add(&dup_or_ooo, 1, __ATOMIC_RELAXED);
				p->send_done++;
			}
			n = ibv_poll_cq(acq[c], 32, wc);
			for (int k = 0; k < n; k++) {
				struct qpair *p = &qps[wc[k].wr_id >> 32];
				if (wc[k].status != IBV_WC_SUCCESS || wc[k].byte_len != MSG ||
				    (wc[k].wr_id & 0xffffffff) != p->recv_done)
					__atomic_fetch_add(&dup_or_ooo, 1, __ATOMIC_RELAXED);
				p->recv_done++;
				post_recv(p, p->recv_done + WIN - 1);
			}
		}
	}
	return NULL;
}

static void *rebind_thread(void *arg)
{
	(void)arg;
	unsigned seed = 12345;
	while (!stop_rebind) {
		usleep(2000);
		seed = seed * 1103515245 + 12345;
		struct ibv_cq *cq = (seed >> 8) & 1 ? acq[(seed >> 12) % NCQ] : bcq[(seed >> 12) % NCQ];
		struct ibv_context *ctx = cq->context;
		if (rnic_modify_cq_handler(cq, (int)((seed >> 16) % (unsigned)ctx->num_comp_vectors)) == 0)
			rebinds++;
	}
	return NULL;
}

static void expect(struct rnic_cm_channel *ch, enum rnic_cm_event_type t, struct rnic_cm_event *ev)
{
	assert_int_equal(rnic_cm_get_event(ch, ev, 10000), 0);
	if (ev->type != t)
		fail_msg("event %s, expected %s", rnic_cm_event_str(ev->type), rnic_cm_event_str(t));
}

static void test_rebind_under_load(void **state)
{
	(void)state;
	ca = rnic_open_device(A);
	cb = rnic_open_device(B);
	assert_int_equal(ca->num_comp_vectors, 2);
	apd = rnic_alloc_pd(ca);
	bpd = rnic_alloc_pd(cb);
	for (int c = 0; c < NCQ; c++) {
		acq[c] = rnic_create_cq(ca, NQP * WIN * 2, NULL, NULL, c % 2);
		bcq[c] = rnic_create_cq(cb, NQP * WIN * 2, NULL, NULL, c % 2);
		assert_non_null(acq[c]);
		assert_non_null(bcq[c]);
		assert_int_equal(rnic_set_comp_handler(bcq[c], cb_event, NULL), 0);
		assert_int_equal(ibv_req_notify_cq(bcq[c], 0), 0);
	}
	struct rnic_cm_channel *ach = rnic_cm_create_channel(ca), *bch = rnic_cm_create_channel(cb);
	struct rnic_cm_id *l;
	assert_int_equal(rnic_cm_create_id(ach, NULL, &l), 0);
	assert_int_equal(rnic_cm_listen(l, 7600, 64), 0);
	for (int i = 0; i < NQP; i++) {
		struct qpair *p = &qps[i];
		struct ibv_qp_init_attr qa = { .qp_type = IBV_QPT_RC,
			.cap = { .max_send_wr = WIN, .max_recv_wr = WIN, .max_send_sge = 1,
				 .max_recv_sge = 1 } };
		qa.send_cq = qa.recv_cq = acq[i % NCQ];
		p->a = rnic_create_qp(apd, &qa);
		qa.send_cq = qa.recv_cq = bcq[i % NCQ];
		p->b = rnic_create_qp(bpd, &qa);
		assert_non_null(p->a);
		assert_non_null(p->b);
		p->abuf = calloc(WIN, MSG);
		p->bbuf = calloc(1, MSG);
		p->amr = rnic_reg_mr(apd, p->abuf, WIN * MSG, IBV_ACCESS_LOCAL_WRITE);
		p->bmr = rnic_reg_mr(bpd, p->bbuf, MSG, 0);
		assert_int_equal(rnic_cm_create_id(bch, p, &p->bid), 0);
		assert_int_equal(rnic_cm_connect(p->bid, p->b, A_IP, 7600, NULL), 0);
		struct rnic_cm_event ev;
		expect(ach, RNIC_CM_EVENT_CONNECT_REQUEST, &ev);
		p->aid = ev.id;
		struct ibv_qp_attr at = { .qp_state = IBV_QPS_INIT };
		assert_int_equal(rnic_modify_qp(p->a, &at, IBV_QP_STATE), 0);
		for (uint64_t s = 0; s < WIN; s++)
			post_recv(p, s);
		assert_int_equal(rnic_cm_accept(p->aid, p->a, NULL), 0);
		expect(ach, RNIC_CM_EVENT_ESTABLISHED, &ev);
		expect(bch, RNIC_CM_EVENT_ESTABLISHED, &ev);
	}
	pthread_t th[3];
	pthread_create(&th[2], NULL, rebind_thread, NULL);
	pthread_create(&th[0], NULL, app_thread, (void *)0);
	pthread_create(&th[1], NULL, app_thread, (void *)1);
	pthread_join(th[0], NULL);
	pthread_join(th[1], NULL);
	stop_rebind = 1;
	pthread_join(th[2], NULL);
	uint64_t sent = 0, done = 0;
	for (int i = 0; i < NQP; i++) {
		sent += qps[i].sent;
		done += qps[i].recv_done;
	}
	printf("{\"test\": \"rebind_under_load\", \"sends\": %lu, \"received\": %lu, "
	       "\"dup_or_out_of_order\": %lu, \"rebinds\": %lu, \"events\": %lu}\n",
	       (unsigned long)sent, (unsigned long)done, (unsigned long)dup_or_ooo,
	       (unsigned long)rebinds, (unsigned long)events_seen);
	assert_int_equal(sent, OPS);
	assert_int_equal(done, OPS);
	assert_int_equal(dup_or_ooo, 0);
	assert_true(rebinds > 0);
	assert_true(events_seen > 0);
	/* nothing extra arrives */
	struct ibv_wc wc;
	for (int c = 0; c < NCQ; c++) {
		assert_int_equal(ibv_poll_cq(bcq[c], 1, &wc), 0);
		assert_int_equal(ibv_poll_cq(acq[c], 1, &wc), 0);
	}
	/* teardown while the peers are connected: abortive */
	for (int i = 0; i < NQP; i++) {
		assert_int_equal(rnic_cm_destroy_id(qps[i].bid), 0);
		assert_int_equal(rnic_cm_destroy_id(qps[i].aid), 0);
		assert_int_equal(rnic_destroy_qp(qps[i].a), 0);
		assert_int_equal(rnic_destroy_qp(qps[i].b), 0);
		assert_int_equal(rnic_dereg_mr(qps[i].amr), 0);
		assert_int_equal(rnic_dereg_mr(qps[i].bmr), 0);
		free(qps[i].abuf);
		free(qps[i].bbuf);
	}
	assert_int_equal(rnic_cm_destroy_id(l), 0);
	for (int c = 0; c < NCQ; c++) {
		assert_int_equal(rnic_destroy_cq(acq[c]), 0);
		assert_int_equal(rnic_destroy_cq(bcq[c]), 0);
	}
	assert_int_equal(rnic_cm_destroy_channel(ach), 0);
	assert_int_equal(rnic_cm_destroy_channel(bch), 0);
	assert_int_equal(rnic_dealloc_pd(apd), 0);
	assert_int_equal(rnic_dealloc_pd(bpd), 0);
	assert_int_equal(rnic_close_device(ca), 0);
	assert_int_equal(rnic_close_device(cb), 0);
}

static int setup(void **state)
{
	(void)state;
	struct rnic_config c[3];
	rnic_config_init(&c[0]);
	snprintf(c[0].eal_args[c[0].n_eal_args++], 128, "--no-huge");
	snprintf(c[0].eal_args[c[0].n_eal_args++], 128, "-m");
	snprintf(c[0].eal_args[c[0].n_eal_args++], 128, "1024");
	if (rnic_eal_init("test_handlers", &c[0], 5) != 0 || rnic_ring_pair("hq", 2) != 0 ||
	    rnic_ring_pair("hc", 1) != 0)
		return -1;
	c[0].n_eal_args = 0;
	c[1] = c[2] = c[0];
	for (int i = 0; i < 3; i++) {
		c[i].n_ports = 1;
		c[i].workers = i < 2 ? 2 : 1;
		rnic_port_cfg_init(&c[i].ports[0]);
		snprintf(c[i].ports[0].ring, sizeof(c[i].ports[0].ring), i == 2 ? "hc.a" :
			 i ? "hq.b" : "hq.a");
		c[i].ports[0].ip = i == 1 ? B_IP : A_IP;
		c[i].ports[0].prefix_len = 24;
		c[i].ports[0].mbufs = 32767;
	}
	A = rnic_stack_create(&c[0]);
	B = rnic_stack_create(&c[1]);
	C = rnic_stack_create(&c[2]);
	if (!A || !B || !C || rnic_stack_start(A) != 0 || rnic_stack_start(B) != 0)
		return -1;
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	rnic_stack_stop(B);
	rnic_stack_stop(A);
	rnic_stack_destroy(C);
	rnic_stack_destroy(B);
	rnic_stack_destroy(A);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_priorities_and_arms),
		cmocka_unit_test(test_rebind_under_load),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
