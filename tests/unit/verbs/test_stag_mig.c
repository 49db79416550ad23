/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Cross-port STag migration (seed 000), the control component on its own:
 * one stack with two ports (ring-pair ends with nobody on the other side,
 * no traffic), one worker, a device and a PD. The tests call the table and
 * the control component directly (verbs/stag.h):
 *
 *   - the owner port of an STag is its top byte, the owner's lookup works
 *   - rnic_stag_check_at() on the other port says RNIC_STAG_MIGRATE
 *   - a query through the control component installs an import (same
 *     address, the owner's bounds, rights and PD), counted on the asker
 *   - refusals: a wrong key, an index never handed out, an STag naming a
 *     port the stack does not have, a window whose invalid bit is clear
 *   - invalidation and deregistration revoke an installed import
 *   - the hold knob keeps a query unanswered until released, and the
 *     answer runs on the asker's worker
 *
 * Counters are cumulative over the tests: every check uses deltas.
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "rnic/rnic.h"
#include "rnic/rnic_verbs.h"
#include "rdma/stag.h"
#include "rdma/stag_table.h"

#define P0_IP 0xc0000201u    /* 192.0.2.1/24 */
#define P1_IP 0xc6336401u    /* 198.51.100.1/24 */
#define BUF_LEN (256u * 1024u)
#define RW (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ)

static struct rnic_stack *st;
static struct ibv_context *ctx;
static struct ibv_pd *pd, *pd2;
static uint8_t *buf;

/* --- helpers ------------------------------------------------------------------ */

static struct rnic_stag_port_stats stats(unsigned port_idx)
{
	struct rnic_stag_port_stats s;
	assert_int_equal(rnic_query_stag_stats(ctx, (uint8_t)(port_idx + 1), &s), 0);
	return s;
}

/* A query through the control component, asked on worker 0. */
struct ask {
	struct rnic_stag_mig q;
	volatile int done;
	pthread_t asker, answerer;
	bool inline_answer;
};

static void ask_done(struct rnic_stag_mig *q)
{
	struct ask *a = (struct ask *)((char *)q - offsetof(struct ask, q));
	a->answerer = pthread_self();
	__atomic_store_n(&a->done, 1, __ATOMIC_RELEASE);
}

static void ask_on_worker(struct rnic_worker *w, void *arg)
{
	(void)w;
	struct ask *a = arg;
	a->asker = pthread_self();
	rnic_stag_migrate(&a->q);
	/* never answered from inside the call */
	a->inline_answer = __atomic_load_n(&a->done, __ATOMIC_ACQUIRE);
}

static void ask(struct ask *a, unsigned port, uint32_t stag)
{
	memset(a, 0, sizeof(*a));
	a->q.st = st;
	a->q.w = rnic_stack_worker(st, 0);
	a->q.stag = stag;
	a->q.port = (uint8_t)port;
	a->q.done = ask_done;
	assert_non_null(a->q.w);
	assert_int_equal(rnic_worker_call_sync(a->q.w, ask_on_worker, a), 0);
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Wait (hang guard 5 s) for the answer; checks it ran on the asker's worker. */
static void ask_wait(struct ask *a)
{
	double t0 = now_s();
	while (!__atomic_load_n(&a->done, __ATOMIC_ACQUIRE) && now_s() - t0 < 5.0)
		usleep(100);
	if (!a->done)
		fail_msg("query for STag %#x from port %u: no answer in 5 s", a->q.stag, a->q.port);
	assert_false(a->inline_answer);
	assert_true(a->q.resolved);
	assert_true(pthread_equal(a->asker, a->answerer));
}

/* Ask and wait: the answer (RNIC_STAG_OK or RNIC_STAG_INVALID). */
static enum rnic_stag_fault query(unsigned port, uint32_t stag)
{
	struct ask a;
	ask(&a, port, stag);
	ask_wait(&a);
	return a.q.fault;
}

static uint8_t *check_at(unsigned port, uint32_t stag, const void *p, uint64_t to,
			 uint64_t len, int acc, enum rnic_stag_fault *err)
{
	*err = (enum rnic_stag_fault)-1;
	return rnic_stag_check_at(st, port, stag, p, 0, to, len, acc, err);
}

static struct ibv_mr *reg(size_t off, size_t len, int acc, uint8_t port_num)
{
	struct ibv_mr *mr = rnic_reg_mr_port(pd, buf + off, len, acc, port_num);
	assert_non_null(mr);
	return mr;
}

#define VA(off) ((uint64_t)(uintptr_t)(buf + (off)))

/* --- tests -------------------------------------------------------------------- */

/* The owner port is the STag's top byte; the owner's table finds it. */
static void test_owner_lookup(void **state)
{
	(void)state;
	enum rnic_stag_fault err;
	struct rnic_stag_port_stats s0 = stats(0), s1 = stats(1);
	struct ibv_mr *m0 = reg(0, 4096, RW, 1);
	struct ibv_mr *m1 = reg(4096, 4096, RW, 2);
	assert_int_equal(rnic_stag_port(m0->rkey), 0);
	assert_int_equal(rnic_stag_port(m1->rkey), 1);
	assert_int_equal(m0->lkey, m0->rkey);
	assert_int_not_equal(stag_index(m0->rkey), 0);
	assert_int_equal(stats(0).generated, s0.generated + 1);
	assert_int_equal(stats(1).generated, s1.generated + 1);
	/* the owner's own port: no migration */
	assert_ptr_equal(check_at(0, m0->rkey, pd, VA(100), 64, IBV_ACCESS_REMOTE_WRITE, &err),
			 buf + 100);
	assert_int_equal(err, RNIC_STAG_OK);
	assert_ptr_equal(check_at(1, m1->rkey, pd, VA(4096 + 8), 8, IBV_ACCESS_REMOTE_READ, &err),
			 buf + 4096 + 8);
	assert_int_equal(err, RNIC_STAG_OK);
	/* local access (lkeys) goes to the owner from anywhere */
	assert_ptr_equal(rnic_stag_check(st, m1->lkey, pd, 0, VA(4096), 4096,
					 IBV_ACCESS_LOCAL_WRITE, &err), buf + 4096);
	assert_ptr_equal(rnic_stag_find(st, m0->rkey)->owner, m0);
	/* the owner's checks: bounds, rights, PD */
	assert_null(check_at(0, m0->rkey, pd, VA(4000), 200, IBV_ACCESS_REMOTE_WRITE, &err));
	assert_int_equal(err, RNIC_STAG_BOUNDS);
	assert_null(check_at(0, m0->rkey, pd2, VA(0), 8, IBV_ACCESS_REMOTE_WRITE, &err));
	assert_int_equal(err, RNIC_STAG_PD);
	/* no port 3 on this stack, no port 0 in the 1-based API */
	assert_null(rnic_reg_mr_port(pd, buf, 64, RW, 3));
	assert_int_equal(errno, EINVAL);
	assert_null(rnic_reg_mr_port(pd, buf, 64, RW, 0));
	assert_int_equal(errno, EINVAL);
	struct rnic_stag_port_stats s;
	assert_int_equal(rnic_query_stag_stats(ctx, 3, &s), -EINVAL);
	assert_int_equal(rnic_query_stag_stats(ctx, 0, &s), -EINVAL);
	assert_int_equal(rnic_dereg_mr(m0), 0);
	assert_int_equal(rnic_dereg_mr(m1), 0);
}

/* Another port's STag, not imported: MIGRATE, and nothing is counted. */
static void test_other_port_migrate(void **state)
{
	(void)state;
	enum rnic_stag_fault err;
	struct ibv_mr *m0 = reg(0, 4096, RW, 1);
	struct ibv_mr *m1 = reg(4096, 4096, RW, 2);
	struct rnic_stag_port_stats s0 = stats(0), s1 = stats(1);
	assert_null(check_at(1, m0->rkey, pd, VA(0), 64, IBV_ACCESS_REMOTE_WRITE, &err));
	assert_int_equal(err, RNIC_STAG_MIGRATE);
	assert_null(check_at(0, m1->rkey, pd, VA(4096), 64, IBV_ACCESS_REMOTE_WRITE, &err));
	assert_int_equal(err, RNIC_STAG_MIGRATE);
	/* even a range or rights the owner would refuse: the port cannot know */
	assert_null(check_at(1, m0->rkey, pd, VA(0), 1 << 20, IBV_ACCESS_REMOTE_WRITE, &err));
	assert_int_equal(err, RNIC_STAG_MIGRATE);
	assert_int_equal(stats(1).queries, s1.queries);
	assert_int_equal(stats(0).queries, s0.queries);
	assert_int_equal(stats(1).imported, s1.imported);
	assert_int_equal(rnic_dereg_mr(m0), 0);
	assert_int_equal(rnic_dereg_mr(m1), 0);
}

/* The control component installs an import: same address, the owner's
 * checks; counted on the asking port only. */
static void test_resolve_installs(void **state)
{
	(void)state;
	enum rnic_stag_fault err;
	struct ibv_mr *m0 = reg(8192, 16384, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE, 1);
	struct rnic_stag_port_stats s0 = stats(0), s1 = stats(1);
	assert_null(check_at(1, m0->rkey, pd, VA(8192 + 4), 100, IBV_ACCESS_REMOTE_WRITE, &err));
	assert_int_equal(err, RNIC_STAG_MIGRATE);
	assert_int_equal(query(1, m0->rkey), RNIC_STAG_OK);
	struct rnic_stag_port_stats a1 = stats(1), a0 = stats(0);
	printf("    install: query answered, query_us_max %llu us\n",
	       (unsigned long long)a1.query_us_max);
	assert_int_equal(a1.queries, s1.queries + 1);
	assert_int_equal(a1.imported, s1.imported + 1);
	assert_int_equal(a1.imports_live, s1.imports_live + 1);
	assert_int_equal(a1.rejects_unknown + a1.rejects_invalid + a1.rejects_bad_port,
			 s1.rejects_unknown + s1.rejects_invalid + s1.rejects_bad_port);
	assert_int_equal(a0.queries, s0.queries);
	assert_int_equal(a0.imported, s0.imported);
	/* the fault is gone: the same address as at the owner */
	uint8_t *own = check_at(0, m0->rkey, pd, VA(8192 + 4), 100, IBV_ACCESS_REMOTE_WRITE, &err);
	assert_ptr_equal(own, buf + 8192 + 4);
	assert_ptr_equal(check_at(1, m0->rkey, pd, VA(8192 + 4), 100, IBV_ACCESS_REMOTE_WRITE,
				  &err), own);
	assert_int_equal(err, RNIC_STAG_OK);
	/* the import carries the owner's bounds, rights and PD */
	assert_null(check_at(1, m0->rkey, pd, VA(8192 + 16384 - 10), 11, IBV_ACCESS_REMOTE_WRITE,
			     &err));
	assert_int_equal(err, RNIC_STAG_BOUNDS);
	assert_null(check_at(1, m0->rkey, pd, VA(8192), 8, IBV_ACCESS_REMOTE_READ, &err));
	assert_int_equal(err, RNIC_STAG_ACCESS);
	assert_null(check_at(1, m0->rkey, pd2, VA(8192), 8, IBV_ACCESS_REMOTE_WRITE, &err));
	assert_int_equal(err, RNIC_STAG_PD);
	assert_null(check_at(1, m0->rkey, pd, UINT64_MAX - 2, 8, IBV_ACCESS_REMOTE_WRITE, &err));
	assert_int_equal(err, RNIC_STAG_TO_WRAP);
	/* a second query for it (another QP asked too): OK, no second copy */
	assert_int_equal(query(1, m0->rkey), RNIC_STAG_OK);
	assert_int_equal(stats(1).queries, s1.queries + 2);
	assert_int_equal(stats(1).imported, s1.imported + 1);
	assert_int_equal(stats(1).imports_live, s1.imports_live + 1);
	/* the step on its own (rnic_stag_mig_resolve), the other direction */
	struct ibv_mr *m1 = reg(32768, 4096, RW, 2);
	struct rnic_stag_mig q = { .st = st, .stag = m1->rkey, .port = 0 };
	s0 = stats(0);
	rnic_stag_mig_resolve(st, &q);
	assert_true(q.resolved);
	assert_int_equal(q.fault, RNIC_STAG_OK);
	assert_int_equal(stats(0).imported, s0.imported + 1);
	assert_ptr_equal(check_at(0, m1->rkey, pd, VA(32768 + 1), 1, IBV_ACCESS_REMOTE_READ, &err),
			 buf + 32768 + 1);
	/* the owner's entry knows who holds copies */
	assert_int_equal(rnic_stag_find(st, m0->rkey)->imported_by, 1u << 1);
	assert_int_equal(rnic_stag_find(st, m1->rkey)->imported_by, 1u << 0);
	s0 = stats(0);
	s1 = stats(1);
	assert_int_equal(rnic_dereg_mr(m0), 0);
	assert_int_equal(rnic_dereg_mr(m1), 0);
	assert_int_equal(stats(1).imports_live, s1.imports_live - 1);
	assert_int_equal(stats(0).imports_live, s0.imports_live - 1);
}

/* The owner has no such STag: a wrong key, an index never handed out. */
static void test_unknown_refused(void **state)
{
	(void)state;
	enum rnic_stag_fault err;
	struct ibv_mr *m0 = reg(0, 4096, RW, 1);
	uint32_t bad = (m0->rkey & ~0xffu) | ((m0->rkey + 0x5b) & 0xffu);
	struct rnic_stag_port_stats s1 = stats(1);
	assert_int_equal(query(1, bad), RNIC_STAG_INVALID);
	struct rnic_stag_port_stats a1 = stats(1);
	assert_int_equal(a1.queries, s1.queries + 1);
	assert_int_equal(a1.rejects_unknown, s1.rejects_unknown + 1);
	assert_int_equal(a1.imported, s1.imported);
	assert_int_equal(a1.imports_live, s1.imports_live);
	/* nothing installed: the port still does not know it */
	assert_null(check_at(1, bad, pd, VA(0), 64, IBV_ACCESS_REMOTE_WRITE, &err));
	assert_int_equal(err, RNIC_STAG_MIGRATE);
	/* the right STag is still fine, and a wrong key next to its import
	 * is not taken for it */
	assert_int_equal(query(1, m0->rkey), RNIC_STAG_OK);
	assert_non_null(check_at(1, m0->rkey, pd, VA(0), 64, IBV_ACCESS_REMOTE_WRITE, &err));
	assert_null(check_at(1, bad, pd, VA(0), 64, IBV_ACCESS_REMOTE_WRITE, &err));
	assert_int_not_equal(err, RNIC_STAG_OK);
	/* an index port 0 never handed out */
	uint32_t never = 0u << RNIC_STAG_PORT_SHIFT | 0xfffeu << 8 | 0x42u;
	assert_int_equal(query(1, never), RNIC_STAG_INVALID);
	assert_int_equal(stats(1).rejects_unknown, s1.rejects_unknown + 2);
	assert_int_equal(stats(1).imported, s1.imported + 1);
	assert_int_equal(rnic_dereg_mr(m0), 0);
}

/* An STag naming port 7 of a 2-port stack. */
static void test_bad_port_refused(void **state)
{
	(void)state;
	enum rnic_stag_fault err;
	struct ibv_mr *m0 = reg(0, 4096, RW, 1);
	uint32_t p7 = 7u << RNIC_STAG_PORT_SHIFT | (m0->rkey & 0xffffffu);
	assert_int_equal(rnic_stag_port(p7), 7);
	struct rnic_stag_port_stats s0 = stats(0), s1 = stats(1);
	assert_int_equal(query(1, p7), RNIC_STAG_INVALID);
	struct rnic_stag_port_stats a1 = stats(1);
	assert_int_equal(a1.queries, s1.queries + 1);
	assert_int_equal(a1.rejects_bad_port, s1.rejects_bad_port + 1);
	assert_int_equal(a1.rejects_unknown, s1.rejects_unknown);
	assert_int_equal(a1.imported, s1.imported);
	/* nor is port 0's entry with the same index and key touched */
	assert_int_equal(stats(0).imported, s0.imported);
	assert_int_equal(rnic_stag_find(st, m0->rkey)->imported_by, 0);
	/* no port holds it, and the lookup on any port fails without asking */
	assert_null(check_at(1, p7, pd, VA(0), 64, IBV_ACCESS_REMOTE_WRITE, &err));
	assert_int_equal(err, RNIC_STAG_INVALID);
	assert_null(check_at(0, p7, pd, VA(0), 64, IBV_ACCESS_REMOTE_WRITE, &err));
	assert_int_equal(err, RNIC_STAG_INVALID);
	assert_null(rnic_stag_find(st, p7));
	/* the direct step too */
	struct rnic_stag_mig q = { .st = st, .stag = p7, .port = 0 };
	rnic_stag_mig_resolve(st, &q);
	assert_true(q.resolved);
	assert_int_equal(q.fault, RNIC_STAG_INVALID);
	assert_int_equal(stats(0).rejects_bad_port, s0.rejects_bad_port + 1);
	assert_int_equal(rnic_dereg_mr(m0), 0);
}

/* What a worker saw of an import while the owner entry was invalidated or
 * freed (on worker 0: the control component cannot reclaim the copy while
 * this runs, so reading it after the revoke is safe). */
struct revoke_probe {
	uint32_t stag;
	struct rnic_mem *owner;   /* invalidate this (a window) ... */
	struct ibv_mr *mr;        /* ... or deregister this */
	/* results */
	bool had_import;
	uint8_t valid_before, valid_after;
	bool origin_cleared;
	enum rnic_stag_fault inv_rc, err_after;
	uint8_t *addr_after;
	int dereg_rc;
};

static void revoke_on_worker(struct rnic_worker *w, void *arg)
{
	(void)w;
	struct revoke_probe *p = arg;
	struct rnic_stag_table *t = rnic_stag_table_of(st);
	struct rnic_mem *e = stag_import_find(t->ports[1], p->stag);
	p->had_import = e != NULL;
	if (e == NULL)
		return;
	p->valid_before = e->valid;
	if (p->owner != NULL)
		p->inv_rc = rnic_stag_invalidate(st, p->stag, pd);
	else
		p->dereg_rc = rnic_dereg_mr(p->mr);
	p->valid_after = __atomic_load_n(&e->valid, __ATOMIC_ACQUIRE);
	p->origin_cleared = e->origin == NULL;
	p->addr_after = rnic_stag_check_at(st, 1, p->stag, pd, 0, VA(0), 8,
					   IBV_ACCESS_REMOTE_WRITE, &p->err_after);
}

/* The invalid bit: an unbound window is refused; a bound one is imported,
 * then invalidated: the copy's bit is clear before the call returns, and
 * the next query is refused as invalid. */
static void test_invalid_bit(void **state)
{
	(void)state;
	enum rnic_stag_fault err;
	/* a real type 2 window, allocated but never bound: invalid bit clear */
	struct ibv_mw *mw = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
	assert_non_null(mw);
	assert_int_equal(rnic_stag_port(mw->rkey), 0);
	struct rnic_stag_port_stats s1 = stats(1);
	assert_int_equal(query(1, mw->rkey), RNIC_STAG_INVALID);
	assert_int_equal(stats(1).rejects_invalid, s1.rejects_invalid + 1);
	assert_int_equal(stats(1).rejects_unknown, s1.rejects_unknown);
	assert_int_equal(stats(1).imported, s1.imported);
	assert_int_equal(ibv_dealloc_mw(mw), 0);

	/* a bound window on port 0 (the table entry as a bind leaves it) */
	struct rnic_mem win = {
		.kind = RNIC_MEM_MW, .mw_type = 2, .port = 0, .pd = pd,   /* type 2: invalidated below */
		.access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE,
		.va = VA(65536), .len = 8192, .addr = buf + 65536,
	};
	assert_int_equal(rnic_stag_insert(st, &win), 0);
	__atomic_store_n(&win.valid, 1, __ATOMIC_RELEASE);
	assert_int_equal(rnic_stag_port(win.stag), 0);
	s1 = stats(1);
	assert_int_equal(query(1, win.stag), RNIC_STAG_OK);
	assert_ptr_equal(check_at(1, win.stag, pd, VA(65536 + 8), 8, IBV_ACCESS_REMOTE_WRITE, &err),
			 buf + 65536 + 8);
	assert_int_equal(stats(1).imports_live, s1.imports_live + 1);
	/* an MR cannot be invalidated by STag; its copies stay */
	struct ibv_mr *m0 = reg(0, 4096, RW, 1);
	assert_int_equal(query(1, m0->rkey), RNIC_STAG_OK);
	assert_int_equal(rnic_stag_invalidate(st, m0->rkey, pd), RNIC_STAG_ACCESS);
	assert_non_null(check_at(1, m0->rkey, pd, VA(0), 8, IBV_ACCESS_REMOTE_WRITE, &err));
	/* nor by another PD */
	assert_int_equal(rnic_stag_invalidate(st, win.stag, pd2), RNIC_STAG_PD);
	assert_non_null(check_at(1, win.stag, pd, VA(65536), 8, IBV_ACCESS_REMOTE_WRITE, &err));
	/* invalidate the window */
	s1 = stats(1);
	struct revoke_probe p = { .stag = win.stag, .owner = &win };
	assert_int_equal(rnic_worker_call_sync(rnic_stack_worker(st, 0), revoke_on_worker, &p), 0);
	assert_true(p.had_import);
	assert_int_equal(p.valid_before, 1);
	assert_int_equal(p.inv_rc, RNIC_STAG_OK);
	assert_int_equal(p.valid_after, 0);            /* the copy's invalid bit */
	assert_true(p.origin_cleared);
	assert_null(p.addr_after);
	printf("    invalidated window: lookup on the importing port now says %d "
	       "(INVALID=%d, MIGRATE=%d)\n", p.err_after, RNIC_STAG_INVALID, RNIC_STAG_MIGRATE);
	assert_true(p.err_after == RNIC_STAG_INVALID || p.err_after == RNIC_STAG_MIGRATE);
	assert_int_equal(win.valid, 0);
	assert_int_equal(win.imported_by, 0);
	struct rnic_stag_port_stats a1 = stats(1);
	assert_int_equal(a1.revoked, s1.revoked + 1);
	assert_int_equal(a1.imports_live, s1.imports_live - 1);
	/* asking again: refused, the invalid bit */
	assert_int_equal(query(1, win.stag), RNIC_STAG_INVALID);
	assert_int_equal(stats(1).rejects_invalid, s1.rejects_invalid + 1);
	assert_int_equal(stats(1).imported, s1.imported);
	assert_null(check_at(1, win.stag, pd, VA(65536), 8, IBV_ACCESS_REMOTE_WRITE, &err));
	/* invalidating twice: the owner says invalid */
	assert_int_equal(rnic_stag_invalidate(st, win.stag, pd), RNIC_STAG_INVALID);
	rnic_stag_remove(st, &win);
	assert_null(rnic_stag_find(st, win.stag));
	assert_int_equal(rnic_dereg_mr(m0), 0);
}

/* Deregistering an MR revokes its imports on every port. */
static void test_revoke_on_dereg(void **state)
{
	(void)state;
	enum rnic_stag_fault err;
	struct ibv_mr *m0 = reg(0, 4096, RW, 1);
	uint32_t stag = m0->rkey;
	assert_int_equal(query(1, stag), RNIC_STAG_OK);
	assert_non_null(check_at(1, stag, pd, VA(0), 8, IBV_ACCESS_REMOTE_WRITE, &err));
	struct rnic_stag_port_stats s1 = stats(1);
	struct revoke_probe p = { .stag = stag, .mr = m0 };
	assert_int_equal(rnic_worker_call_sync(rnic_stack_worker(st, 0), revoke_on_worker, &p), 0);
	assert_true(p.had_import);
	assert_int_equal(p.dereg_rc, 0);
	assert_int_equal(p.valid_before, 1);
	assert_int_equal(p.valid_after, 0);
	assert_true(p.origin_cleared);
	assert_null(p.addr_after);
	assert_int_not_equal(p.err_after, RNIC_STAG_OK);
	struct rnic_stag_port_stats a1 = stats(1);
	assert_int_equal(a1.revoked, s1.revoked + 1);
	assert_int_equal(a1.imports_live, s1.imports_live - 1);
	/* the owner forgot it: asking again is refused as unknown */
	assert_int_equal(query(1, stag), RNIC_STAG_INVALID);
	assert_int_equal(stats(1).rejects_unknown, s1.rejects_unknown + 1);
	assert_null(check_at(1, stag, pd, VA(0), 8, IBV_ACCESS_REMOTE_WRITE, &err));
	assert_null(check_at(0, stag, pd, VA(0), 8, IBV_ACCESS_REMOTE_WRITE, &err));
	assert_int_equal(err, RNIC_STAG_INVALID);
	/* the slot comes back under a new key: the old STag names nothing */
	struct ibv_mr *again = reg(0, 4096, RW, 1);
	assert_int_not_equal(again->rkey, stag);
	assert_int_equal(query(1, stag), RNIC_STAG_INVALID);
	assert_int_equal(rnic_dereg_mr(again), 0);
}

/* The hold knob: a query stays in the control component until released;
 * the answer then comes (on the asker's worker) and installs the import. */
static void test_hold(void **state)
{
	(void)state;
	enum rnic_stag_fault err;
	struct ibv_mr *m0 = reg(0, 4096, RW, 1);
	struct ibv_mr *m0b = reg(4096, 4096, RW, 1);
	assert_int_equal(rnic_migration_hold(NULL, 1), -EINVAL);
	assert_int_equal(rnic_stag_mig_waiting(st), 0);
	assert_int_equal(rnic_migration_hold(ctx, 1), 0);
	struct rnic_stag_port_stats s1 = stats(1);
	struct ask a, b;
	ask(&a, 1, m0->rkey);
	ask(&b, 1, m0b->rkey ^ 0x33u);   /* a refusal waits just the same */
	usleep(150 * 1000);
	assert_int_equal(__atomic_load_n(&a.done, __ATOMIC_ACQUIRE), 0);
	assert_int_equal(__atomic_load_n(&b.done, __ATOMIC_ACQUIRE), 0);
	assert_int_equal(rnic_stag_mig_waiting(st), 2);
	assert_int_equal(stats(1).queries, s1.queries + 2);
	assert_int_equal(stats(1).imported, s1.imported);
	assert_int_equal(stats(1).rejects_unknown, s1.rejects_unknown);
	assert_null(check_at(1, m0->rkey, pd, VA(0), 8, IBV_ACCESS_REMOTE_WRITE, &err));
	assert_int_equal(err, RNIC_STAG_MIGRATE);
	double t0 = now_s();
	assert_int_equal(rnic_migration_hold(ctx, 0), 0);
	ask_wait(&a);
	ask_wait(&b);
	double dt = now_s() - t0;
	assert_int_equal(a.q.fault, RNIC_STAG_OK);
	assert_int_equal(b.q.fault, RNIC_STAG_INVALID);
	assert_int_equal(rnic_stag_mig_waiting(st), 0);
	struct rnic_stag_port_stats a1 = stats(1);
	printf("    held 150 ms: answered %.3f ms after release, query_us_max %llu us\n",
	       dt * 1e3, (unsigned long long)a1.query_us_max);
	assert_int_equal(a1.imported, s1.imported + 1);
	assert_int_equal(a1.rejects_unknown, s1.rejects_unknown + 1);
	/* held: neither query was answered before the release (checked above
	 * by state, not by the time query_us_max reports, printed only) */
	assert_ptr_equal(check_at(1, m0->rkey, pd, VA(8), 8, IBV_ACCESS_REMOTE_WRITE, &err),
			 buf + 8);
	/* released: the next query is answered at once */
	t0 = now_s();
	assert_int_equal(query(1, m0b->rkey), RNIC_STAG_OK);
	printf("    unheld query: %.3f ms\n", (now_s() - t0) * 1e3);
	assert_int_equal(rnic_dereg_mr(m0), 0);
	assert_int_equal(rnic_dereg_mr(m0b), 0);
}

/* --- setup -------------------------------------------------------------------- */

static int setup(void **state)
{
	(void)state;
	struct rnic_config c;
	rnic_config_init(&c);
	snprintf(c.eal_args[c.n_eal_args++], 128, "--no-huge");
	snprintf(c.eal_args[c.n_eal_args++], 128, "-m");
	snprintf(c.eal_args[c.n_eal_args++], 128, "256");
	snprintf(c.eal_args[c.n_eal_args++], 128, "--log-level=lib.*:warning");
	if (rnic_eal_init("test_stag_mig", &c, 1) != 0 || rnic_ring_pair("sm0", 1) != 0 ||
	    rnic_ring_pair("sm1", 1) != 0)
		return -1;
	c.n_eal_args = 0;
	c.n_ports = 2;
	c.workers = 1;
	for (int i = 0; i < 2; i++) {
		rnic_port_cfg_init(&c.ports[i]);
		snprintf(c.ports[i].ring, sizeof(c.ports[i].ring), "sm%d.a", i);
		c.ports[i].ip = i ? P1_IP : P0_IP;
		c.ports[i].prefix_len = 24;
		c.ports[i].mbufs = 4095;
	}
	st = rnic_stack_create(&c);
	if (st == NULL || rnic_stack_start(st) != 0)
		return -1;
	ctx = rnic_open_device(st);
	if (ctx == NULL)
		return -1;
	pd = rnic_alloc_pd(ctx);
	pd2 = rnic_alloc_pd(ctx);
	buf = aligned_alloc(4096, BUF_LEN);
	return pd && pd2 && buf ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	int rc = rnic_dealloc_pd(pd) | rnic_dealloc_pd(pd2);
	rc |= rnic_close_device(ctx);
	rnic_stack_stop(st);
	rnic_stack_destroy(st);
	free(buf);
	return rc;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_owner_lookup),
		cmocka_unit_test(test_other_port_migrate),
		cmocka_unit_test(test_resolve_installs),
		cmocka_unit_test(test_unknown_refused),
		cmocka_unit_test(test_bad_port_refused),
		cmocka_unit_test(test_invalid_bit),
		cmocka_unit_test(test_revoke_on_dereg),
		cmocka_unit_test(test_hold),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
