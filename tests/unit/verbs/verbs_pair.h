/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Two stacks (A listens, B connects) over a ring pair, one worker each, for
 * the verbs unit tests: the ends' objects, a connected RC pair through the
 * CM, completion waits and posting helpers. A test file includes it once
 * and calls pair_setup() / pair_teardown() as its group setup / teardown.
 */
#ifndef RNIC_TESTS_UNIT_VERBS_PAIR_H
#define RNIC_TESTS_UNIT_VERBS_PAIR_H

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "rnic/rnic.h"
#include "rnic/rnic_cm.h"
#include "rnic/rnic_verbs.h"

#define A_IP 0xc0000201u
#define B_IP 0xc0000202u
#define PORT 7400
#define BUF (1u << 20)

static struct rnic_stack *A, *B;
static struct ibv_context *ca, *cb;

struct end {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_comp_channel *ch;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	uint8_t *buf;
	struct rnic_cm_channel *cm;
	struct rnic_cm_id *id;
};
static struct end a, b;
static struct rnic_cm_id *listener;
static uint16_t port_seq = PORT;

static inline void end_init(struct end *e, struct ibv_context *ctx)
{
	memset(e, 0, sizeof(*e));
	e->ctx = ctx;
	e->pd = rnic_alloc_pd(ctx);
	assert_non_null(e->pd);
	e->ch = rnic_create_comp_channel(ctx);
	assert_non_null(e->ch);
	e->cq = rnic_create_cq(ctx, 4096, e, e->ch, 0);
	assert_non_null(e->cq);
	struct ibv_qp_init_attr qa = { .send_cq = e->cq, .recv_cq = e->cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 1024, .max_recv_wr = 1024, .max_send_sge = RNIC_MAX_SGE,
			 .max_recv_sge = RNIC_MAX_SGE, .max_inline_data = 64 } };
	e->qp = rnic_create_qp(e->pd, &qa);
	assert_non_null(e->qp);
	e->buf = aligned_alloc(4096, BUF);
	assert_non_null(e->buf);
	e->mr = rnic_reg_mr(e->pd, e->buf, BUF, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			    IBV_ACCESS_REMOTE_READ | IBV_ACCESS_MW_BIND);
	assert_non_null(e->mr);
	e->cm = rnic_cm_create_channel(ctx);
	assert_non_null(e->cm);
}

static inline void end_fini(struct end *e)
{
	if (e->id)
		assert_int_equal(rnic_cm_destroy_id(e->id), 0);
	assert_int_equal(rnic_destroy_qp(e->qp), 0);
	assert_int_equal(rnic_dereg_mr(e->mr), 0);
	struct ibv_wc wc[64];
	while (ibv_poll_cq(e->cq, 64, wc) > 0)
		;
	assert_int_equal(rnic_destroy_cq(e->cq), 0);
	assert_int_equal(rnic_destroy_comp_channel(e->ch), 0);
	assert_int_equal(rnic_dealloc_pd(e->pd), 0);
	assert_int_equal(rnic_cm_destroy_channel(e->cm), 0);
	free(e->buf);
}

static inline void expect_event(struct rnic_cm_channel *ch, enum rnic_cm_event_type t,
			 struct rnic_cm_event *out)
{
	struct rnic_cm_event ev;
	int rc = rnic_cm_get_event(ch, &ev, 5000);
	assert_int_equal(rc, 0);
	if (ev.type != t)
		fail_msg("event %s (status %d), expected %s", rnic_cm_event_str(ev.type),
			 ev.status, rnic_cm_event_str(t));
	if (out)
		*out = ev;
}

/* Connect a.qp (on A, passive) and b.qp (on B, active). */
static inline void connect_pair(void)
{
	struct rnic_cm_event ev;
	uint16_t port = port_seq++;
	end_init(&a, ca);
	end_init(&b, cb);
	assert_int_equal(rnic_cm_create_id(a.cm, NULL, &listener), 0);
	assert_int_equal(rnic_cm_listen(listener, port, 16), 0);
	assert_int_equal(rnic_cm_create_id(b.cm, &b, &b.id), 0);
	const char hello[] = "hello from B";
	struct rnic_cm_conn_param p = { .private_data = hello, .private_data_len = sizeof(hello),
					.responder_resources = 16, .initiator_depth = 16 };
	assert_int_equal(rnic_cm_connect(b.id, b.qp, A_IP, port, &p), 0);
	expect_event(a.cm, RNIC_CM_EVENT_CONNECT_REQUEST, &ev);
	assert_ptr_equal(ev.listen_id, listener);
	assert_int_equal(ev.private_data_len, sizeof(hello));
	assert_memory_equal(ev.private_data, hello, sizeof(hello));
	assert_int_equal(ev.peer_ip, B_IP);
	a.id = ev.id;
	const char reply[] = "welcome";
	struct rnic_cm_conn_param r = { .private_data = reply, .private_data_len = sizeof(reply) };
	assert_int_equal(rnic_cm_accept(a.id, a.qp, &r), 0);
	expect_event(a.cm, RNIC_CM_EVENT_ESTABLISHED, NULL);
	expect_event(b.cm, RNIC_CM_EVENT_ESTABLISHED, &ev);
	assert_int_equal(ev.private_data_len, sizeof(reply));
	assert_string_equal((char *)ev.private_data, "welcome");
	assert_int_equal(a.qp->state, IBV_QPS_RTS);
	assert_int_equal(b.qp->state, IBV_QPS_RTS);
}

static inline void teardown_pair(void)
{
	assert_int_equal(rnic_cm_destroy_id(listener), 0);
	end_fini(&a);
	end_fini(&b);
}

/* Wait for @p n completions on @p e's CQ. */
static inline void wait_wc(struct end *e, struct ibv_wc *wc, int n)
{
	int got = 0;
	for (long spin = 0; got < n && spin < 400000000L; spin++) {
		int k = ibv_poll_cq(e->cq, n - got, wc + got);
		assert_true(k >= 0);
		got += k;
	}
	if (got != n)
		fail_msg("%d of %d completions", got, n);
}

static inline void post_recv(struct end *e, uint64_t id, uint32_t off, uint32_t len)
{
	struct ibv_sge s = { (uintptr_t)e->buf + off, len, e->mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = id, .sg_list = &s, .num_sge = 1 }, *bad;
	assert_int_equal(ibv_post_recv(e->qp, &wr, &bad), 0);
}

static inline int post1(struct end *e, enum ibv_wr_opcode op, uint64_t id, uint32_t off, uint32_t len,
		 uint64_t raddr, uint32_t rkey, unsigned flags)
{
	struct ibv_sge s = { (uintptr_t)e->buf + off, len, e->mr->lkey };
	struct ibv_send_wr wr = { .wr_id = id, .sg_list = &s, .num_sge = 1, .opcode = op,
				  .send_flags = flags }, *bad;
	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	return ibv_post_send(e->qp, &wr, &bad);
}

static inline void fill(uint8_t *p, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(i * 31 + seed + (i >> 8));
}

/* EAL for process @p prog, the ring pair and both stacks started, a device
 * on each. @p pcap_a: capture file of A's port, or NULL. @return 0 or -1. */
static inline int pair_setup(const char *prog, const char *pcap_a)
{
	struct rnic_config c[2];
	rnic_config_init(&c[0]);
	snprintf(c[0].eal_args[c[0].n_eal_args++], 128, "--no-huge");
	snprintf(c[0].eal_args[c[0].n_eal_args++], 128, "-m");
	snprintf(c[0].eal_args[c[0].n_eal_args++], 128, "512");
	if (rnic_eal_init(prog, &c[0], 2) != 0 || rnic_ring_pair("vb", 1) != 0)
		return -1;
	c[0].n_eal_args = 0;
	c[1] = c[0];
	for (int i = 0; i < 2; i++) {
		c[i].n_ports = 1;
		rnic_port_cfg_init(&c[i].ports[0]);
		snprintf(c[i].ports[0].ring, sizeof(c[i].ports[0].ring), "vb.%c", i ? 'b' : 'a');
		c[i].ports[0].ip = i ? B_IP : A_IP;
		c[i].ports[0].prefix_len = 24;
		c[i].ports[0].mbufs = 16383;
	}
	if (pcap_a != NULL)
		snprintf(c[0].ports[0].pcap, sizeof(c[0].ports[0].pcap), "%s", pcap_a);
	A = rnic_stack_create(&c[0]);
	B = rnic_stack_create(&c[1]);
	if (!A || !B || rnic_stack_start(A) != 0 || rnic_stack_start(B) != 0)
		return -1;
	ca = rnic_open_device(A);
	cb = rnic_open_device(B);
	return ca && cb ? 0 : -1;
}

static inline int pair_teardown(void)
{
	int rc = rnic_close_device(ca) | rnic_close_device(cb);
	rnic_stack_stop(B);
	rnic_stack_stop(A);
	rnic_stack_destroy(B);
	rnic_stack_destroy(A);
	return rc;
}

#endif
