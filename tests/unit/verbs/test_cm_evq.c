/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The CM channel's event queue (lib/verbs/cm_evq.c): events come out in
 * arrival order; forgetting an id frees its own events and clears the
 * listener it is named as, touching only those events. The work is
 * counted (forget_visits), not timed: with 10,000 ids and their events
 * queued, destroying every id visits each event once (the channel walk it
 * replaces visited the whole queue per id, about 10,000^2 / 2).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "verbs/cm_evq.h"

/* Stand-ins for ids: only their addresses and owners matter here. */
struct fake_id {
	struct cm_evq_owner o;
};

static void push(struct cm_evq *q, struct fake_id *id, struct fake_id *l,
		 enum rnic_cm_event_type t)
{
	struct cm_evq_node *n = calloc(1, sizeof(*n));
	assert_non_null(n);
	n->ev.type = t;
	n->ev.id = (struct rnic_cm_id *)id;
	n->ev.listen_id = (struct rnic_cm_id *)l;
	cm_evq_push(q, n, &id->o, l ? &l->o : NULL);
}

static void test_order_and_forget(void **state)
{
	(void)state;
	struct cm_evq q;
	struct fake_id a, b, l;
	cm_evq_init(&q);
	cm_evq_owner_init(&a.o);
	cm_evq_owner_init(&b.o);
	cm_evq_owner_init(&l.o);
	push(&q, &a, &l, RNIC_CM_EVENT_CONNECT_REQUEST);
	push(&q, &b, &l, RNIC_CM_EVENT_CONNECT_REQUEST);
	push(&q, &a, NULL, RNIC_CM_EVENT_DISCONNECTED);
	push(&q, &b, NULL, RNIC_CM_EVENT_ESTABLISHED);
	/* a goes: its two events go, b's stay in order */
	assert_int_equal(cm_evq_forget(&q, &a.o), 2);
	assert_int_equal(q.forget_visits, 2);
	/* the listener goes: b's request no longer names it */
	assert_int_equal(cm_evq_forget(&q, &l.o), 0);
	assert_int_equal(q.forget_visits, 3);
	struct cm_evq_node *n = cm_evq_pop(&q);
	assert_non_null(n);
	assert_ptr_equal(n->ev.id, &b);
	assert_int_equal(n->ev.type, RNIC_CM_EVENT_CONNECT_REQUEST);
	assert_null(n->ev.listen_id);
	free(n);
	n = cm_evq_pop(&q);
	assert_non_null(n);
	assert_int_equal(n->ev.type, RNIC_CM_EVENT_ESTABLISHED);
	free(n);
	assert_null(cm_evq_pop(&q));
	/* popped events left b's and l's lists empty */
	assert_int_equal(cm_evq_forget(&q, &b.o), 0);
	assert_int_equal(q.forget_visits, 3);
	cm_evq_fini(&q);
}

#define N_IDS 10000u

/* 10,000 ids, two events each, interleaved on one channel (a listener's
 * requests, then every id's DISCONNECTED): destroying them all visits
 * 3 * N events (2 N freed, N listener marks), not O(N^2). */
static void test_forget_is_linear(void **state)
{
	(void)state;
	struct cm_evq q;
	struct fake_id l;
	struct fake_id *ids = calloc(N_IDS, sizeof(*ids));
	assert_non_null(ids);
	cm_evq_init(&q);
	cm_evq_owner_init(&l.o);
	for (unsigned i = 0; i < N_IDS; i++) {
		cm_evq_owner_init(&ids[i].o);
		push(&q, &ids[i], &l, RNIC_CM_EVENT_CONNECT_REQUEST);
	}
	for (unsigned i = 0; i < N_IDS; i++)
		push(&q, &ids[i], NULL, RNIC_CM_EVENT_DISCONNECTED);
	/* the listener first (its N requests lose their listen_id), then the
	 * ids from the newest, the order a teardown takes */
	assert_int_equal(cm_evq_forget(&q, &l.o), 0);
	unsigned freed = 0;
	for (unsigned i = N_IDS; i-- > 0;)
		freed += cm_evq_forget(&q, &ids[i].o);
	assert_int_equal(freed, 2 * N_IDS);
	assert_int_equal(q.forget_visits, 3 * N_IDS);
	assert_null(cm_evq_pop(&q));
	cm_evq_fini(&q);
	free(ids);
}

/* The channel's end frees what nobody took. */
static void test_fini_frees(void **state)
{
	(void)state;
	struct cm_evq q;
	struct fake_id a;
	cm_evq_init(&q);
	cm_evq_owner_init(&a.o);
	push(&q, &a, NULL, RNIC_CM_EVENT_ESTABLISHED);
	push(&q, &a, NULL, RNIC_CM_EVENT_DISCONNECTED);
	cm_evq_fini(&q);   /* LeakSanitizer (ASan builds) checks the frees */
}

/* A request that ends before the application took it is withdrawn with
 * every event about its id; once its CONNECT_REQUEST was popped, nothing
 * is withdrawn (the application owns the id and gets the next event). */
static void test_withdraw(void **state)
{
	(void)state;
	struct cm_evq q;
	struct fake_id a, b, l;
	cm_evq_init(&q);
	cm_evq_owner_init(&a.o);
	cm_evq_owner_init(&b.o);
	cm_evq_owner_init(&l.o);
	push(&q, &a, &l, RNIC_CM_EVENT_CONNECT_REQUEST);
	push(&q, &b, &l, RNIC_CM_EVENT_CONNECT_REQUEST);
	push(&q, &a, NULL, RNIC_CM_EVENT_DISCONNECTED);
	/* a: never taken, both its events go; b's stays */
	assert_true(cm_evq_withdraw(&q, &a.o));
	assert_int_equal(q.forget_visits, 2);
	/* the listener names only b's request now */
	assert_int_equal(cm_evq_forget(&q, &l.o), 0);
	assert_int_equal(q.forget_visits, 3);
	struct cm_evq_node *n = cm_evq_pop(&q);
	assert_non_null(n);
	assert_ptr_equal(n->ev.id, &b);
	free(n);
	/* b's request was taken: a later event of b is not withdrawn */
	push(&q, &b, NULL, RNIC_CM_EVENT_CONNECT_ERROR);
	assert_false(cm_evq_withdraw(&q, &b.o));
	n = cm_evq_pop(&q);
	assert_non_null(n);
	assert_int_equal(n->ev.type, RNIC_CM_EVENT_CONNECT_ERROR);
	free(n);
	/* nothing queued about an id: nothing to withdraw */
	assert_false(cm_evq_withdraw(&q, &a.o));
	assert_null(cm_evq_pop(&q));
	cm_evq_fini(&q);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_order_and_forget),
		cmocka_unit_test(test_forget_is_linear),
		cmocka_unit_test(test_fini_frees),
		cmocka_unit_test(test_withdraw),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
