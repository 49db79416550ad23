/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Verbs API on two stacks (A listens, B connects) over a ring pair:
 * object lifetimes and argument checks, the CM handshake with private
 * data, every supported opcode through the inline libibverbs calls,
 * in-order completions, bad keys that must not reach the wire or must end
 * in a Terminate, memory windows and invalidation, completion channels,
 * and both close paths.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "rnic/rnic.h"
#include "rnic/rnic_cm.h"
#include "rnic/rnic_roce.h"
#include "rnic/rnic_verbs.h"
#include "rnic/rnic_tcp.h"

#include <rte_mbuf.h>
#include <unistd.h>

#include "engine/stack.h"
#include "iwarp/iw_int.h"
#include "verbs_pair.h"

/* --- tests -------------------------------------------------------------------- */

static void test_objects(void **state)
{
	(void)state;
	struct ibv_device_attr da;
	assert_int_equal(rnic_query_device(ca, &da), 0);
	assert_int_equal(da.max_sge, RNIC_MAX_SGE);
	assert_int_equal(ca->num_comp_vectors, 1);
	struct ibv_port_attr pa;
	assert_int_equal(rnic_query_port(ca, 1, &pa), 0);
	assert_int_equal(rnic_query_port(ca, 9, &pa), -EINVAL);
	union ibv_gid g;
	assert_int_equal(rnic_query_gid(ca, 1, 0, &g), 0);
	assert_int_equal(g.raw[0], 0xfe);   /* fe80:: link-local */
	assert_int_equal(g.raw[1], 0x80);
	assert_int_equal(rnic_query_gid(ca, 1, 1, &g), 0);
	assert_int_equal(g.raw[10], 0xff);  /* ::ffff:IPv4 */
	assert_int_equal(g.raw[15], 0x01);
	assert_int_equal(rnic_query_gid(ca, 1, 2, &g), -EINVAL);
	assert_string_equal(rnic_wc_status_str(IBV_WC_RETRY_EXC_ERR), "RETRY_EXC_ERR");
	assert_string_equal(rnic_wc_status_str(IBV_WC_SUCCESS), "SUCCESS");
	assert_string_equal(rnic_wc_status_str((enum ibv_wc_status)999), "unknown");

	struct ibv_pd *pd = rnic_alloc_pd(ca);
	uint8_t buf[64];
	/* remote write without local write is refused (IBA 10.6.3.1) */
	assert_null(rnic_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_REMOTE_WRITE));
	assert_int_equal(errno, EINVAL);
	struct ibv_mr *m1 = rnic_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE);
	struct ibv_mr *m2 = rnic_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE);
	assert_non_null(m1);
	assert_non_null(m2);
	assert_int_not_equal(m1->lkey, m2->lkey);
	assert_int_equal(m1->lkey, m1->rkey);
	assert_int_equal(rnic_dealloc_pd(pd), -EBUSY);
	/* a CQ bigger than the limit, a bad handler */
	assert_null(rnic_create_cq(ca, RNIC_MAX_CQE + 1, NULL, NULL, 0));
	assert_null(rnic_create_cq(ca, 16, NULL, NULL, 5));
	struct ibv_cq *cq = rnic_create_cq(ca, 16, NULL, NULL, 0);
	assert_non_null(cq);
	assert_true(cq->cqe >= 16);
	struct ibv_qp_init_attr qa = { .send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_UD,
				       .cap = { .max_send_wr = 4, .max_recv_wr = 4 } };
	assert_null(rnic_create_qp(pd, &qa));   /* UD: RoCE issue */
	qa.qp_type = IBV_QPT_RC;
	qa.cap.max_send_sge = RNIC_MAX_SGE + 1;
	assert_null(rnic_create_qp(pd, &qa));
	qa.cap.max_send_sge = 2;
	struct ibv_qp *qp = rnic_create_qp(pd, &qa);
	assert_non_null(qp);
	assert_int_equal(qp->state, IBV_QPS_RESET);
	assert_int_equal(rnic_destroy_cq(cq), -EBUSY);
	/* posting to an unconnected QP: refused, bad_wr set */
	struct ibv_sge s = { (uintptr_t)buf, 8, m1->lkey };
	struct ibv_send_wr wr = { .wr_id = 1, .sg_list = &s, .num_sge = 1,
				  .opcode = IBV_WR_SEND }, *bad = NULL;
	assert_int_equal(ibv_post_send(qp, &wr, &bad), EINVAL);
	assert_ptr_equal(bad, &wr);
	struct ibv_recv_wr rw = { .wr_id = 2, .sg_list = &s, .num_sge = 1 }, *rbad = NULL;
	assert_int_equal(ibv_post_recv(qp, &rw, &rbad), EINVAL);   /* RESET */
	struct ibv_qp_attr at = { .qp_state = IBV_QPS_INIT };
	assert_int_equal(rnic_modify_qp(qp, &at, IBV_QP_STATE), 0);
	assert_int_equal(ibv_post_recv(qp, &rw, &rbad), 0);
	s.lkey ^= 0x55;   /* wrong key */
	assert_int_equal(ibv_post_recv(qp, &rw, &rbad), EINVAL);
	assert_ptr_equal(rbad, &rw);
	s.lkey = m2->lkey;
	s.length = sizeof(buf) + 1;   /* past the region */
	assert_int_equal(ibv_post_recv(qp, &rw, &rbad), EINVAL);
	at.qp_state = IBV_QPS_RTS;    /* iWARP: only through the CM */
	assert_int_equal(rnic_modify_qp(qp, &at, IBV_QP_STATE), -EINVAL);
	at.qp_state = IBV_QPS_ERR;    /* flushes the receive posted above */
	assert_int_equal(rnic_modify_qp(qp, &at, IBV_QP_STATE), 0);
	struct ibv_wc wc;
	assert_int_equal(ibv_poll_cq(cq, 1, &wc), 1);
	assert_int_equal(wc.status, IBV_WC_WR_FLUSH_ERR);
	assert_int_equal(wc.wr_id, 2);
	assert_int_equal(rnic_destroy_qp(qp), 0);
	assert_int_equal(rnic_destroy_cq(cq), 0);
	assert_int_equal(rnic_dereg_mr(m1), 0);
	assert_int_equal(rnic_dereg_mr(m2), 0);
	assert_int_equal(rnic_dealloc_pd(pd), 0);
}

/* iWARP keeps its state per stack, in the engine's protocol table
 * (st->proto[RNIC_PROTO_IWARP]), created and freed with the stack: a
 * stack made later, even with the same process-wide index, starts clean
 * (a process-global table indexed by stack kept the old stack's MPA
 * timeout and listeners). */
static void test_iwarp_state_per_stack(void **state)
{
	(void)state;
	assert_non_null(A->proto[RNIC_PROTO_IWARP]);
	assert_ptr_not_equal(A->proto[RNIC_PROTO_IWARP], B->proto[RNIC_PROTO_IWARP]);
	struct rnic_config c;
	rnic_config_init(&c);   /* no ports: the stack is never started */
	struct rnic_stack *s = rnic_stack_create(&c);
	assert_non_null(s);
	unsigned id = s->id;
	struct iw_stack_state *is = iw_stack(s);
	assert_non_null(is);
	rnic_iw_set_mpa_timeout(s, 1234);
	assert_int_equal(is->mpa_timeout_ms, 1234);
	assert_int_equal(rnic_iw_listen(s, 4791, NULL, NULL, NULL), 0);
	assert_non_null(is->listeners);
	rnic_stack_destroy(s);   /* frees the listener with the state */
	s = rnic_stack_create(&c);
	assert_non_null(s);
	assert_int_equal(s->id, id);
	is = iw_stack(s);
	assert_non_null(is);
	assert_int_equal(is->mpa_timeout_ms, 0);
	assert_null(is->listeners);
	assert_int_equal(rnic_iw_unlisten(s, 4791), -ENOENT);
	rnic_stack_destroy(s);
}

/* rnic_qp_dump() through the transport interface: each transport prints
 * its own state (RoCE's was missing: rnic-soak reached into lib/roce). */
static void test_qp_dump(void **state)
{
	(void)state;
	struct ibv_pd *pd = rnic_alloc_pd(ca);
	struct ibv_cq *cq = rnic_create_cq(ca, 16, NULL, NULL, 0);
	assert_non_null(cq);
	struct ibv_qp_init_attr qa = { .send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
				       .cap = { .max_send_wr = 4, .max_recv_wr = 4 } };
	struct ibv_qp *iw = rnic_create_qp_transport(pd, &qa, RNIC_TRANSPORT_IWARP);
	struct ibv_qp *ro = rnic_create_qp_transport(pd, &qa, RNIC_TRANSPORT_ROCE);
	assert_non_null(iw);
	assert_non_null(ro);
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	assert_non_null(f);
	rnic_qp_dump(iw, f);
	rnic_qp_dump(ro, f);
	fclose(f);
	char want[64];
	snprintf(want, sizeof(want), "qp %u: transport iwarp", iw->qp_num);
	assert_non_null(strstr(text, want));
	assert_non_null(strstr(text, "(no endpoint)"));
	snprintf(want, sizeof(want), "qp %u: transport roce", ro->qp_num);
	assert_non_null(strstr(text, want));
	snprintf(want, sizeof(want), "roce qp %u: ", ro->qp_num);   /* RoCE's own state */
	assert_non_null(strstr(text, want));
	free(text);
	assert_int_equal(rnic_destroy_qp(iw), 0);
	assert_int_equal(rnic_destroy_qp(ro), 0);
	assert_int_equal(rnic_destroy_cq(cq), 0);
	assert_int_equal(rnic_dealloc_pd(pd), 0);
}

/* rnic.h's error convention on the verbs, CM and RoCE calls: 0 or a
 * negative errno, NULL and errno for pointers (the libibverbs data-path
 * calls keep their positive errno: test_objects). */
static void test_negative_errno(void **state)
{
	(void)state;
	struct ibv_pd *pd = rnic_alloc_pd(ca);
	assert_non_null(pd);
	assert_int_equal(rnic_close_device(ca), -EBUSY);   /* a PD lives */
	struct ibv_comp_channel *ch = rnic_create_comp_channel(ca);
	assert_non_null(ch);
	struct ibv_cq *cq = rnic_create_cq(ca, 16, NULL, ch, 0);
	assert_non_null(cq);
	assert_int_equal(rnic_destroy_comp_channel(ch), -EBUSY);
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 4, .max_sge = 1 } };
	struct ibv_srq *srq = rnic_create_srq(pd, &sa);
	assert_non_null(srq);
	struct ibv_qp_init_attr qa = { .send_cq = cq, .recv_cq = cq, .srq = srq,
				       .qp_type = IBV_QPT_RC,
				       .cap = { .max_send_wr = 4, .max_send_sge = 1 } };
	struct ibv_qp *qp = rnic_create_qp(pd, &qa);
	assert_non_null(qp);
	assert_int_equal(rnic_destroy_srq(srq), -EBUSY);
	assert_int_equal(rnic_modify_cq_handler(cq, 7), -EINVAL);
	assert_int_equal(rnic_set_handler_priority(ca, -1, 0), -EINVAL);
	struct ibv_qp_attr at = { .qp_state = IBV_QPS_RTR };
	assert_int_equal(rnic_modify_qp(qp, &at, IBV_QP_STATE), -EINVAL);   /* RESET -> RTR */
	assert_int_equal(rnic_modify_qp(qp, &at, IBV_QP_STATE | IBV_QP_CAP), -EINVAL);
	struct ibv_async_event ae;
	assert_int_equal(rnic_get_async_event_timeout(ca, &ae, 0), -EAGAIN);
	assert_int_equal(rnic_get_async_event_timeout(NULL, &ae, 0), -EINVAL);
	struct rnic_roce_cc_info cc;
	assert_int_equal(rnic_roce_qp_cc(qp, &cc), -EINVAL);   /* an iWARP QP */
	uint64_t v;
	assert_int_equal(rnic_roce_counter(A, "no_such_counter", &v), -ENOENT);
	errno = 0;
	assert_null(rnic_stack_worker(A, 99));
	assert_int_equal(errno, ENOENT);

	struct rnic_cm_channel *cm = rnic_cm_create_channel(ca);
	assert_non_null(cm);
	struct rnic_cm_id *id;
	assert_int_equal(rnic_cm_create_id(NULL, NULL, &id), -EINVAL);
	assert_int_equal(rnic_cm_create_id(cm, NULL, &id), 0);
	assert_int_equal(rnic_cm_destroy_channel(cm), -EBUSY);
	struct rnic_cm_event ev;
	assert_int_equal(rnic_cm_get_event(cm, &ev, 0), -EAGAIN);
	assert_int_equal(rnic_cm_get_event(cm, &ev, 10), -EAGAIN);
	assert_int_equal(rnic_cm_listen(id, 0, 1), -EINVAL);
	assert_int_equal(rnic_cm_disconnect(id), -ENOTCONN);
	assert_int_equal(rnic_cm_reject(id, NULL, 0), -EINVAL);   /* not a request */
	assert_int_equal(rnic_cm_accept(id, qp, NULL), -EINVAL);
	struct rnic_cm_conn_param p = { .private_data_len = RNIC_CM_PDATA_MAX + 1 };
	assert_int_equal(rnic_cm_connect(id, qp, B_IP, PORT, &p), -EINVAL);
	at.qp_state = IBV_QPS_ERR;
	assert_int_equal(rnic_modify_qp(qp, &at, IBV_QP_STATE), 0);
	assert_int_equal(rnic_cm_connect(id, qp, B_IP, PORT, NULL), -EBUSY);   /* not RESET/INIT */
	assert_int_equal(rnic_cm_destroy_id(NULL), -EINVAL);

	assert_int_equal(rnic_cm_destroy_id(id), 0);
	assert_int_equal(rnic_cm_destroy_channel(cm), 0);
	assert_int_equal(rnic_destroy_qp(qp), 0);
	assert_int_equal(rnic_destroy_srq(srq), 0);
	assert_int_equal(rnic_destroy_cq(cq), 0);
	assert_int_equal(rnic_destroy_comp_channel(ch), 0);
	assert_int_equal(rnic_dealloc_pd(pd), 0);
}

static void test_send_write_read(void **state)
{
	(void)state;
	struct ibv_wc wc[16];
	connect_pair();
	/* Send with multi-SGE gather into a multi-SGE receive */
	fill(b.buf, 8192, 1);
	memset(a.buf, 0, 8192);
	struct ibv_sge rs[3] = { { (uintptr_t)a.buf + 1, 100, a.mr->lkey },
				 { (uintptr_t)a.buf + 4000, 3000, a.mr->lkey },
				 { (uintptr_t)a.buf + 7001, 1000, a.mr->lkey } };
	struct ibv_recv_wr rw = { .wr_id = 77, .sg_list = rs, .num_sge = 3 }, *rbad;
	assert_int_equal(ibv_post_recv(a.qp, &rw, &rbad), 0);
	struct ibv_sge ss[2] = { { (uintptr_t)b.buf + 3, 2000, b.mr->lkey },
				 { (uintptr_t)b.buf + 5000, 2100, b.mr->lkey } };
	struct ibv_send_wr sw = { .wr_id = 5, .sg_list = ss, .num_sge = 2, .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED }, *sbad;
	assert_int_equal(ibv_post_send(b.qp, &sw, &sbad), 0);
	wait_wc(&b, wc, 1);
	assert_int_equal(wc[0].status, IBV_WC_SUCCESS);
	assert_int_equal(wc[0].opcode, IBV_WC_SEND);
	assert_int_equal(wc[0].wr_id, 5);
	wait_wc(&a, wc, 1);
	assert_int_equal(wc[0].status, IBV_WC_SUCCESS);
	assert_int_equal(wc[0].opcode, IBV_WC_RECV);
	assert_int_equal(wc[0].byte_len, 4100);
	assert_int_equal(wc[0].wr_id, 77);
	assert_int_equal(wc[0].qp_num, a.qp->qp_num);
	uint8_t expect[4100];
	memcpy(expect, b.buf + 3, 2000);
	memcpy(expect + 2000, b.buf + 5000, 2100);
	assert_memory_equal(a.buf + 1, expect, 100);
	assert_memory_equal(a.buf + 4000, expect + 100, 3000);
	assert_memory_equal(a.buf + 7001, expect + 3100, 1000);

	/* 1 MiB - 3 Write at an unaligned offset, unsignaled, then a
	 * signaled zero-length Write: one completion, in order */
	fill(b.buf, BUF, 7);
	assert_int_equal(post1(&b, IBV_WR_RDMA_WRITE, 10, 1, BUF - 3,
			       (uintptr_t)a.buf + 2, a.mr->rkey, 0), 0);
	assert_int_equal(post1(&b, IBV_WR_RDMA_WRITE, 11, 0, 0,
			       (uintptr_t)a.buf, a.mr->rkey, IBV_SEND_SIGNALED), 0);
	wait_wc(&b, wc, 1);
	assert_int_equal(wc[0].wr_id, 11);
	assert_int_equal(wc[0].status, IBV_WC_SUCCESS);
	/* the Write's data is in A before B's later Send arrives */
	post_recv(&a, 78, 0, 16);
	assert_int_equal(post1(&b, IBV_WR_SEND, 12, 0, 0, 0, 0, IBV_SEND_SIGNALED), 0);
	wait_wc(&b, wc, 1);
	wait_wc(&a, wc, 1);
	assert_int_equal(wc[0].byte_len, 0);
	assert_memory_equal(a.buf + 2, b.buf + 1, BUF - 3);

	/* 64 Reads outstanding (more than ORD 16: the QP queues them),
	 * then a Send: completions strictly in posting order */
	fill(a.buf, BUF, 9);
	memset(b.buf, 0, BUF);
	for (unsigned i = 0; i < 64; i++)
		assert_int_equal(post1(&b, IBV_WR_RDMA_READ, 100 + i, i * 16384 + 1, 16000,
				       (uintptr_t)a.buf + i * 16384, a.mr->rkey,
				       IBV_SEND_SIGNALED), 0);
	post_recv(&a, 79, BUF - 64, 16);   /* clear of the read sources */
	assert_int_equal(post1(&b, IBV_WR_SEND, 200, BUF - 64, 8, 0, 0, IBV_SEND_SIGNALED), 0);
	for (unsigned i = 0; i < 65; i++) {
		wait_wc(&b, wc, 1);
		assert_int_equal(wc[0].status, IBV_WC_SUCCESS);
		assert_int_equal(wc[0].wr_id, i < 64 ? 100 + i : 200);
		if (i < 64) {
			assert_int_equal(wc[0].opcode, IBV_WC_RDMA_READ);
			assert_int_equal(wc[0].byte_len, 16000);
		}
	}
	for (unsigned i = 0; i < 64; i++)
		assert_memory_equal(b.buf + i * 16384 + 1, a.buf + i * 16384, 16000);
	wait_wc(&a, wc, 1);

	/* inline: the buffer may change right after posting */
	post_recv(&a, 80, 0, 64);
	char msg[40] = "inline data, no lkey needed";
	struct ibv_sge is = { (uintptr_t)msg, sizeof(msg), 0 };
	struct ibv_send_wr iw = { .wr_id = 13, .sg_list = &is, .num_sge = 1, .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_INLINE | IBV_SEND_SIGNALED };
	assert_int_equal(ibv_post_send(b.qp, &iw, &sbad), 0);
	memset(msg, 'x', sizeof(msg));
	wait_wc(&b, wc, 1);
	wait_wc(&a, wc, 1);
	assert_string_equal((char *)a.buf, "inline data, no lkey needed");

	/* bad local key or too many SGEs: refused at post, nothing sent */
	struct ibv_sge bs = { (uintptr_t)b.buf, 8, b.mr->lkey + 1 };
	struct ibv_send_wr bw = { .wr_id = 14, .sg_list = &bs, .num_sge = 1, .opcode = IBV_WR_SEND };
	assert_int_equal(ibv_post_send(b.qp, &bw, &sbad), EINVAL);
	assert_ptr_equal(sbad, &bw);
	bw.num_sge = RNIC_MAX_SGE + 1;
	assert_int_equal(ibv_post_send(b.qp, &bw, &sbad), EINVAL);
	bw.num_sge = 1;
	/* an atomic (RFC 7306 on iWARP) is checked the same way: bad lkey */
	bw.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
	assert_int_equal(ibv_post_send(b.qp, &bw, &sbad), EINVAL);
	assert_ptr_equal(sbad, &bw);

	/* graceful close from B: A's posted receives flush, both see
	 * DISCONNECTED */
	post_recv(&a, 81, 0, 16);
	post_recv(&a, 82, 0, 16);
	assert_int_equal(rnic_cm_disconnect(b.id), 0);
	expect_event(b.cm, RNIC_CM_EVENT_DISCONNECTED, NULL);
	expect_event(a.cm, RNIC_CM_EVENT_DISCONNECTED, NULL);
	wait_wc(&a, wc, 2);
	assert_int_equal(wc[0].status, IBV_WC_WR_FLUSH_ERR);
	assert_int_equal(wc[0].wr_id, 81);
	assert_int_equal(wc[1].wr_id, 82);
	assert_int_equal(a.qp->state, IBV_QPS_ERR);
	teardown_pair();
}

static void test_bad_rkey_terminates(void **state)
{
	(void)state;
	struct ibv_wc wc[4];
	connect_pair();
	memset(a.buf, 0xab, 4096);
	/* a Write past A's region: A sends a Terminate, nothing is placed */
	assert_int_equal(post1(&b, IBV_WR_RDMA_WRITE, 1, 0, 4096,
			       (uintptr_t)a.buf + BUF - 100, a.mr->rkey, IBV_SEND_SIGNALED), 0);
	struct rnic_cm_event ev;
	expect_event(a.cm, RNIC_CM_EVENT_DISCONNECTED, &ev);
	assert_int_equal(ev.status, -EPROTO);
	expect_event(b.cm, RNIC_CM_EVENT_DISCONNECTED, &ev);
	struct rnic_qp_stats qs;
	rnic_qp_stats(a.qp, &qs);
	assert_int_equal(qs.terminates_out, 1);
	rnic_qp_stats(b.qp, &qs);
	assert_int_equal(qs.terminates_in, 1);
	for (unsigned i = 0; i < 4096; i++)
		assert_int_equal(a.buf[i], 0xab);
	/* B's write completed when it left (iWARP) or was flushed */
	wait_wc(&b, wc, 1);
	assert_int_equal(wc[0].wr_id, 1);
	teardown_pair();
}

static void test_mw_and_invalidate(void **state)
{
	(void)state;
	struct ibv_wc wc[4];
	struct ibv_send_wr *bad;
	connect_pair();
	/* A binds a type 2 window over 4 KiB of its buffer, remote write */
	struct ibv_mw *mw = ibv_alloc_mw(a.pd, IBV_MW_TYPE_2);
	assert_non_null(mw);
	struct ibv_send_wr bw = { .wr_id = 50, .opcode = IBV_WR_BIND_MW,
				  .send_flags = IBV_SEND_SIGNALED };
	bw.bind_mw.mw = mw;
	bw.bind_mw.rkey = ibv_inc_rkey(mw->rkey);
	bw.bind_mw.bind_info = (struct ibv_mw_bind_info){ .mr = a.mr,
		.addr = (uintptr_t)a.buf + 8192, .length = 4096,
		.mw_access_flags = IBV_ACCESS_REMOTE_WRITE };
	assert_int_equal(ibv_post_send(a.qp, &bw, &bad), 0);
	wait_wc(&a, wc, 1);
	assert_int_equal(wc[0].status, IBV_WC_SUCCESS);
	assert_int_equal(wc[0].opcode, IBV_WC_BIND_MW);
	uint32_t rkey = bw.bind_mw.rkey;
	assert_int_equal(rnic_dereg_mr(a.mr), -EBUSY);   /* a window is bound to it */
	/* B writes through the window */
	fill(b.buf, 4096, 3);
	assert_int_equal(post1(&b, IBV_WR_RDMA_WRITE, 1, 0, 4096, (uintptr_t)a.buf + 8192,
			       rkey, 0), 0);
	/* then invalidates it with its Send */
	post_recv(&a, 60, 0, 16);
	struct ibv_sge s = { (uintptr_t)b.buf, 4, b.mr->lkey };
	struct ibv_send_wr sw = { .wr_id = 2, .sg_list = &s, .num_sge = 1,
				  .opcode = IBV_WR_SEND_WITH_INV, .send_flags = IBV_SEND_SIGNALED,
				  .invalidate_rkey = rkey };
	assert_int_equal(ibv_post_send(b.qp, &sw, &bad), 0);
	wait_wc(&b, wc, 1);
	assert_int_equal(wc[0].wr_id, 2);
	wait_wc(&a, wc, 1);
	assert_int_equal(wc[0].status, IBV_WC_SUCCESS);
	assert_true(wc[0].wc_flags & IBV_WC_WITH_INV);
	assert_int_equal(wc[0].invalidated_rkey, rkey);
	assert_memory_equal(a.buf + 8192, b.buf, 4096);
	/* a Write through the invalidated window: Terminate, not placed */
	memset(a.buf + 8192, 0, 4096);
	assert_int_equal(post1(&b, IBV_WR_RDMA_WRITE, 3, 0, 64, (uintptr_t)a.buf + 8192,
			       rkey, 0), 0);
	struct rnic_cm_event ev;
	expect_event(a.cm, RNIC_CM_EVENT_DISCONNECTED, &ev);
	assert_int_equal(ev.status, -EPROTO);
	expect_event(b.cm, RNIC_CM_EVENT_DISCONNECTED, NULL);
	for (unsigned i = 0; i < 4096; i++)
		assert_int_equal(a.buf[8192 + i], 0);
	assert_int_equal(ibv_dealloc_mw(mw), 0);
	teardown_pair();
}

static void test_channel_and_reject(void **state)
{
	(void)state;
	struct ibv_wc wc[2];
	connect_pair();
	/* solicited-only arm: an ordinary Send does not wake, a solicited does */
	fcntl(a.ch->fd, F_SETFL, O_NONBLOCK);
	assert_int_equal(ibv_req_notify_cq(a.cq, 1), 0);
	post_recv(&a, 1, 0, 16);
	post_recv(&a, 2, 0, 16);
	assert_int_equal(post1(&b, IBV_WR_SEND, 1, 0, 4, 0, 0, 0), 0);
	wait_wc(&a, wc, 1);
	struct ibv_cq *cq;
	void *cctx;
	assert_int_equal(rnic_get_cq_event(a.ch, &cq, &cctx), -EAGAIN);
	assert_int_equal(post1(&b, IBV_WR_SEND, 2, 0, 4, 0, 0, IBV_SEND_SOLICITED), 0);
	struct pollfd pfd = { .fd = a.ch->fd, .events = POLLIN };
	assert_int_equal(poll(&pfd, 1, 5000), 1);
	assert_int_equal(rnic_get_cq_event(a.ch, &cq, &cctx), 0);
	assert_ptr_equal(cq, a.cq);
	assert_ptr_equal(cctx, &a);
	rnic_ack_cq_events(cq, 1);
	wait_wc(&a, wc, 1);
	assert_int_equal(wc[0].wr_id, 2);
	/* abortive close: QP to ERR on A */
	struct ibv_qp_attr at = { .qp_state = IBV_QPS_ERR };
	assert_int_equal(rnic_modify_qp(a.qp, &at, IBV_QP_STATE), 0);
	expect_event(b.cm, RNIC_CM_EVENT_DISCONNECTED, NULL);
	expect_event(a.cm, RNIC_CM_EVENT_DISCONNECTED, NULL);
	teardown_pair();

	/* reject with private data; connect to a port nobody listens on */
	end_init(&a, ca);
	end_init(&b, cb);
	uint16_t port = port_seq++;
	assert_int_equal(rnic_cm_create_id(a.cm, NULL, &listener), 0);
	assert_int_equal(rnic_cm_listen(listener, port, 4), 0);
	assert_int_equal(rnic_cm_create_id(b.cm, NULL, &b.id), 0);
	assert_int_equal(rnic_cm_connect(b.id, b.qp, A_IP, port, NULL), 0);
	struct rnic_cm_event ev;
	expect_event(a.cm, RNIC_CM_EVENT_CONNECT_REQUEST, &ev);
	assert_int_equal(rnic_cm_reject(ev.id, "no", 3), 0);
	assert_int_equal(rnic_cm_destroy_id(ev.id), 0);
	expect_event(b.cm, RNIC_CM_EVENT_REJECTED, &ev);
	assert_int_equal(ev.private_data_len, 3);
	assert_string_equal((char *)ev.private_data, "no");
	assert_int_equal(rnic_cm_destroy_id(b.id), 0);
	b.id = NULL;
	struct ibv_qp_attr rs = { .qp_state = IBV_QPS_RESET };
	assert_int_equal(rnic_modify_qp(b.qp, &rs, IBV_QP_STATE), 0);
	assert_int_equal(rnic_cm_create_id(b.cm, NULL, &b.id), 0);
	assert_int_equal(rnic_cm_connect(b.id, b.qp, A_IP, port + 1000, NULL), 0);
	expect_event(b.cm, RNIC_CM_EVENT_UNREACHABLE, NULL);
	teardown_pair();
}

/* --- seed 002: a byte stream switches to RDMA mode ------------------------------ */

#define STREAM_BYTES 300000
static const char marker[] = "SWITCH-TO-RDMA\n";
static struct {
	uint8_t buf[STREAM_BYTES + 4096];
	size_t got;
	int switched, rc;
	struct rnic_tcp_conn *ac, *bc;
} sw;

static void *s_accept(struct rnic_tcp_conn *c, void *ctx) { (void)ctx; sw.ac = c; return &sw; }
static void s_recv(struct rnic_tcp_conn *c, void *ctx, struct rte_mbuf *m)
{
	(void)ctx;
	for (struct rte_mbuf *x = m; x; x = x->next) {
		size_t n = x->data_len;
		if (sw.got + n > sizeof(sw.buf))
			n = sizeof(sw.buf) - sw.got;
		memcpy(sw.buf + sw.got, rte_pktmbuf_mtod(x, void *), n);
		sw.got += n;
	}
	rte_pktmbuf_free(m);
	if (sw.switched || sw.got < STREAM_BYTES + sizeof(marker) - 1)
		return;
	/* the last streaming message: hand the rest of the stream to MPA */
	sw.switched = 1;
	size_t end = STREAM_BYTES + sizeof(marker) - 1;
	if (memcmp(sw.buf + STREAM_BYTES, marker, sizeof(marker) - 1) != 0) {
		sw.rc = -EBADMSG;
		return;
	}
	sw.rc = rnic_cm_attach_stream(a.id, c, false, NULL, NULL, sw.buf + end, sw.got - end);
}
static void s_noop(struct rnic_tcp_conn *c, void *ctx) { (void)c; (void)ctx; }
static void s_closed(struct rnic_tcp_conn *c, void *ctx, int e) { (void)c; (void)ctx; (void)e; }
static const struct rnic_tcp_ops s_ops = { .accept = s_accept, .recv = s_recv, .eof = s_noop,
					   .closed = s_closed };
static const struct rnic_tcp_ops c_ops = { .connected = s_noop, .recv = s_recv, .eof = s_noop,
					   .closed = s_closed };
static uint16_t s_port;

static void b_connect(struct rnic_worker *w, void *arg)
{
	(void)arg;
	sw.rc = rnic_tcp_connect(w, A_IP, s_port, &c_ops, NULL, &sw.bc);
}

/* On B's worker: stream the bytes and the marker, then switch at once so
 * the MPA request follows the marker in the same burst of segments. */
static void b_stream_and_switch(struct rnic_worker *w, void *arg)
{
	(void)w;
	(void)arg;
	uint8_t pat[1400];
	size_t sent = 0;
	while (sent < STREAM_BYTES + sizeof(marker) - 1) {
		size_t n = sizeof(pat);
		if (sent < STREAM_BYTES) {
			n = STREAM_BYTES - sent < n ? STREAM_BYTES - sent : n;
			for (size_t i = 0; i < n; i++)
				pat[i] = (uint8_t)((sent + i) * 13);
		} else {
			n = sizeof(marker) - 1;
			memcpy(pat, marker, n);
		}
		if (rnic_tcp_send_space(sw.bc) < n) {
			sw.rc = -ENOBUFS;   /* the window is large enough here */
			return;
		}
		struct rte_mbuf *m = rte_pktmbuf_alloc(rnic_tcp_pool(sw.bc));
		memcpy(rte_pktmbuf_append(m, (uint16_t)n), pat, n);
		if (rnic_tcp_send(sw.bc, m) != 0) {
			sw.rc = -EIO;
			return;
		}
		sent += n;
	}
	const char pd[] = "rdma now";
	struct rnic_cm_conn_param p = { .private_data = pd, .private_data_len = sizeof(pd) };
	sw.rc = rnic_cm_attach_stream(b.id, sw.bc, true, b.qp, &p, NULL, 0);
}

static void test_stream_switch(void **state)
{
	(void)state;
	struct ibv_wc wc[2];
	struct rnic_cm_event ev;
	memset(&sw, 0, sizeof(sw));
	end_init(&a, ca);
	end_init(&b, cb);
	s_port = port_seq++;
	assert_int_equal(rnic_tcp_listen(A, s_port, &s_ops, NULL, 4), 0);
	assert_int_equal(rnic_cm_create_id(a.cm, NULL, &a.id), 0);
	assert_int_equal(rnic_cm_create_id(b.cm, NULL, &b.id), 0);
	assert_int_equal(rnic_worker_call_sync(rnic_stack_worker(B, 0), b_connect, NULL), 0);
	assert_int_equal(sw.rc, 0);
	for (int i = 0; i < 5000 && sw.ac == NULL; i++)
		usleep(1000);
	assert_non_null(sw.ac);
	usleep(20000);   /* B's connected() has run */
	assert_int_equal(rnic_worker_call_sync(rnic_stack_worker(B, 0), b_stream_and_switch, NULL), 0);
	assert_int_equal(sw.rc, 0);
	expect_event(a.cm, RNIC_CM_EVENT_CONNECT_REQUEST, &ev);
	assert_int_equal(sw.rc, 0);
	assert_ptr_equal(ev.id, a.id);
	assert_string_equal((char *)ev.private_data, "rdma now");
	for (size_t i = 0; i < STREAM_BYTES; i++)
		if (sw.buf[i] != (uint8_t)(i * 13))
			fail_msg("stream byte %zu wrong", i);
	assert_int_equal(rnic_cm_accept(a.id, a.qp, NULL), 0);
	expect_event(a.cm, RNIC_CM_EVENT_ESTABLISHED, NULL);
	expect_event(b.cm, RNIC_CM_EVENT_ESTABLISHED, NULL);
	/* RDMA mode: a Send and a Write on the former stream */
	post_recv(&a, 1, 0, 64);
	fill(b.buf, 8192, 4);
	assert_int_equal(post1(&b, IBV_WR_RDMA_WRITE, 1, 0, 8192, (uintptr_t)a.buf + 4096,
			       a.mr->rkey, 0), 0);
	assert_int_equal(post1(&b, IBV_WR_SEND, 2, 0, 64, 0, 0, IBV_SEND_SIGNALED), 0);
	wait_wc(&b, wc, 1);
	wait_wc(&a, wc, 1);
	assert_int_equal(wc[0].status, IBV_WC_SUCCESS);
	assert_memory_equal(a.buf, b.buf, 64);
	assert_memory_equal(a.buf + 4096, b.buf, 8192);
	assert_int_equal(rnic_cm_disconnect(a.id), 0);
	expect_event(a.cm, RNIC_CM_EVENT_DISCONNECTED, NULL);
	expect_event(b.cm, RNIC_CM_EVENT_DISCONNECTED, NULL);
	end_fini(&a);
	end_fini(&b);
	assert_int_equal(rnic_tcp_unlisten(A, s_port), 0);
}

static int setup(void **state)
{
	(void)state;
	return pair_setup("test_verbs_api", NULL);
}

static int teardown(void **state)
{
	(void)state;
	return pair_teardown();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_objects),
		cmocka_unit_test(test_qp_dump),
		cmocka_unit_test(test_iwarp_state_per_stack),
		cmocka_unit_test(test_negative_errno),
		cmocka_unit_test(test_send_write_read),
		cmocka_unit_test(test_bad_rkey_terminates),
		cmocka_unit_test(test_mw_and_invalidate),
		cmocka_unit_test(test_channel_and_reject),
		cmocka_unit_test(test_stream_switch),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
