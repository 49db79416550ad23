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
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "rnic/rnic.h"
#include "rnic/rnic_cm.h"
#include "rnic/rnic_verbs.h"
#include "rnic/rnic_tcp.h"

#include <rte_byteorder.h>
#include <rte_mbuf.h>
#include <unistd.h>

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

static void end_init(struct end *e, struct ibv_context *ctx)
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

static void end_fini(struct end *e)
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

static void expect_event(struct rnic_cm_channel *ch, enum rnic_cm_event_type t,
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
static void connect_pair(void)
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

static void teardown_pair(void)
{
	assert_int_equal(rnic_cm_destroy_id(listener), 0);
	end_fini(&a);
	end_fini(&b);
}

/* Wait for @p n completions on @p e's CQ. */
static void wait_wc(struct end *e, struct ibv_wc *wc, int n)
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

static void post_recv(struct end *e, uint64_t id, uint32_t off, uint32_t len)
{
	struct ibv_sge s = { (uintptr_t)e->buf + off, len, e->mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = id, .sg_list = &s, .num_sge = 1 }, *bad;
	assert_int_equal(ibv_post_recv(e->qp, &wr, &bad), 0);
}

static int post1(struct end *e, enum ibv_wr_opcode op, uint64_t id, uint32_t off, uint32_t len,
		 uint64_t raddr, uint32_t rkey, unsigned flags)
{
	struct ibv_sge s = { (uintptr_t)e->buf + off, len, e->mr->lkey };
	struct ibv_send_wr wr = { .wr_id = id, .sg_list = &s, .num_sge = 1, .opcode = op,
				  .send_flags = flags }, *bad;
	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	return ibv_post_send(e->qp, &wr, &bad);
}

static void fill(uint8_t *p, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(i * 31 + seed + (i >> 8));
}

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
	assert_int_equal(rnic_query_port(ca, 9, &pa), EINVAL);
	union ibv_gid g;
	assert_int_equal(rnic_query_gid(ca, 1, 0, &g), 0);
	assert_int_equal(g.raw[0], 0xfe);   /* fe80:: link-local */
	assert_int_equal(g.raw[1], 0x80);
	assert_int_equal(rnic_query_gid(ca, 1, 1, &g), 0);
	assert_int_equal(g.raw[10], 0xff);  /* ::ffff:IPv4 */
	assert_int_equal(g.raw[15], 0x01);
	assert_int_equal(rnic_query_gid(ca, 1, 2, &g), EINVAL);
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
	assert_int_equal(rnic_dealloc_pd(pd), EBUSY);
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
	assert_int_equal(rnic_destroy_cq(cq), EBUSY);
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
	assert_int_equal(rnic_modify_qp(qp, &at, IBV_QP_STATE), EINVAL);
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

/* --- the Terminates A sends, read back from A's capture -------------------- */

static char pcap_path[64];   /* A's port writes every frame here (pcapng) */

/* Is @p g (24 bytes of a TCP payload) an FPDU that carries a Terminate:
 * untagged, last, DDP version 1, RDMAP version 1, opcode 7, QN 2? */
static bool is_terminate(const uint8_t *g)
{
	return (g[2] & 0xc3) == 0x41 && g[3] == 0x47 && g[8] == 0 && g[9] == 0 && g[10] == 0 &&
	       g[11] == 2;
}

/* The last Terminate FPDU that A sent, from A's capture: up to @p cap
 * bytes from its ULPDU_Length on. @return the bytes copied, 0 if none. */
static size_t last_terminate_from_a(uint8_t *out, size_t cap)
{
	FILE *f = fopen(pcap_path, "rb");
	assert_non_null(f);
	static uint8_t blk[65536 + 64];
	size_t got = 0;
	uint32_t h[2];
	while (fread(h, 4, 2, f) == 2) {
		uint32_t len = h[1];
		assert_true(len >= 12 && len - 8 <= sizeof(blk));
		assert_int_equal(fread(blk, 1, len - 8, f), len - 8);
		if (h[0] != 6)   /* Enhanced Packet Block only */
			continue;
		uint32_t caplen;
		memcpy(&caplen, blk + 12, 4);
		const uint8_t *fr = blk + 20;
		if (caplen < 14 + 20 + 20 || fr[12] != 0x08 || fr[13] != 0x00)
			continue;
		const uint8_t *ip = fr + 14;
		uint32_t ihl = (ip[0] & 0x0fu) * 4, src;
		memcpy(&src, ip + 12, 4);
		if (ip[9] != 6 || src != rte_cpu_to_be_32(A_IP))
			continue;
		const uint8_t *tcp = ip + ihl;
		uint32_t doff = (uint32_t)(tcp[12] >> 4) * 4;
		uint32_t iplen = (uint32_t)ip[2] << 8 | ip[3];
		const uint8_t *pay = tcp + doff;
		size_t plen = iplen - ihl - doff;
		for (size_t k = 0; k + 24 <= plen; k++)
			if (is_terminate(pay + k)) {
				got = plen - k < cap ? plen - k : cap;
				memcpy(out, pay + k, got);
			}
	}
	fclose(f);
	return got;
}

/* A Read Request whose source A refuses (past the end of A's region): A's
 * Terminate names RDMAP / Remote Protection / Base or Bounds and carries
 * the DDP Segment Length, the Read Request's DDP header (M, D) and its
 * 28-byte RDMA header (R), as RFC 5040 section 7.4 says for a Read
 * Request. rnic used to leave R and the RDMA header out (issue 19). */
static void test_read_terminate_quotes_request(void **state)
{
	(void)state;
	struct ibv_wc wc[4];
	connect_pair();
	uint64_t src = (uintptr_t)a.buf + BUF - 100;
	assert_int_equal(post1(&b, IBV_WR_RDMA_READ, 7, 256, 4096, src, a.mr->rkey,
			       IBV_SEND_SIGNALED), 0);
	struct rnic_cm_event ev;
	expect_event(a.cm, RNIC_CM_EVENT_DISCONNECTED, &ev);
	assert_int_equal(ev.status, -EPROTO);
	expect_event(b.cm, RNIC_CM_EVENT_DISCONNECTED, NULL);
	wait_wc(&b, wc, 1);
	assert_int_equal(wc[0].wr_id, 7);
	assert_int_not_equal(wc[0].status, IBV_WC_SUCCESS);

	uint8_t t[128];
	size_t n = last_terminate_from_a(t, sizeof(t));
	/* ULPDU_Length, DDP header 18, control 4, DDP segment length 2,
	 * quoted DDP header 18, Read Request header 28 (then the CRC) */
	assert_true(n >= 2 + 18 + 4 + 2 + 18 + 28);
	assert_int_equal((t[0] << 8) | t[1], 18 + 4 + 2 + 18 + 28);
	const uint8_t *c = t + 2 + 18;
	assert_int_equal(c[0], 0x01);          /* layer RDMAP 0, Remote Protection 1 */
	assert_int_equal(c[1], 0x01);          /* Base or Bounds violation */
	assert_int_equal(c[2] & 0xe0, 0xe0);   /* M, D and R */
	const uint8_t *q = c + 4;
	assert_int_equal((q[0] << 8) | q[1], 18 + 28);  /* the request's ULPDU_Length */
	const uint8_t *dh = q + 2, *rr = dh + 18;
	assert_int_equal(dh[1] & 0x0f, 1);     /* opcode Read Request */
	assert_int_equal(dh[9], 1);            /* QN 1 */
	uint32_t sink_stag, sz, src_stag;
	uint64_t sink_to, src_to;
	memcpy(&sink_stag, rr, 4);
	memcpy(&sink_to, rr + 4, 8);
	memcpy(&sz, rr + 12, 4);
	memcpy(&src_stag, rr + 16, 4);
	memcpy(&src_to, rr + 20, 8);
	assert_int_equal(rte_be_to_cpu_32(sz), 4096);
	assert_int_equal(rte_be_to_cpu_32(src_stag), a.mr->rkey);
	assert_true(rte_be_to_cpu_64(src_to) == src);
	assert_int_not_equal(rte_be_to_cpu_32(sink_stag), 0);
	(void)sink_to;
	teardown_pair();
}

/* A Send with Invalidate naming A's memory region (an MR is not
 * invalidated by a remote peer): RDMAP / Remote Protection / 0x09, as
 * Linux siw sends when the STag's rights or PD forbid it, and the receive
 * completes with REM_INV_REQ_ERR. rnic used to send Remote Operation
 * (issue 19). */
static void test_send_inv_protection(void **state)
{
	(void)state;
	struct ibv_wc wc[4];
	struct ibv_send_wr *bad;
	connect_pair();
	post_recv(&a, 70, 0, 64);
	struct ibv_sge s = { (uintptr_t)b.buf, 16, b.mr->lkey };
	struct ibv_send_wr sw = { .wr_id = 8, .sg_list = &s, .num_sge = 1,
				  .opcode = IBV_WR_SEND_WITH_INV, .send_flags = IBV_SEND_SIGNALED,
				  .invalidate_rkey = a.mr->rkey };
	assert_int_equal(ibv_post_send(b.qp, &sw, &bad), 0);
	wait_wc(&a, wc, 1);
	assert_int_equal(wc[0].wr_id, 70);
	assert_int_equal(wc[0].status, IBV_WC_REM_INV_REQ_ERR);
	struct rnic_cm_event ev;
	expect_event(a.cm, RNIC_CM_EVENT_DISCONNECTED, &ev);
	expect_event(b.cm, RNIC_CM_EVENT_DISCONNECTED, NULL);
	uint8_t t[64];
	size_t n = last_terminate_from_a(t, sizeof(t));
	assert_true(n >= 2 + 18 + 4);
	const uint8_t *c = t + 2 + 18;
	assert_int_equal(c[0], 0x01);   /* layer RDMAP 0, Remote Protection 1 */
	assert_int_equal(c[1], 0x09);   /* STag cannot be invalidated */
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
	assert_int_equal(rnic_dereg_mr(a.mr), EBUSY);   /* a window is bound to it */
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
	assert_int_equal(rnic_get_cq_event(a.ch, &cq, &cctx), EAGAIN);
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
	struct rnic_config c[2];
	rnic_config_init(&c[0]);
	snprintf(c[0].eal_args[c[0].n_eal_args++], 128, "--no-huge");
	snprintf(c[0].eal_args[c[0].n_eal_args++], 128, "-m");
	snprintf(c[0].eal_args[c[0].n_eal_args++], 128, "512");
	if (rnic_eal_init("test_verbs_api", &c[0], 2) != 0 || rnic_ring_pair("vb", 1) != 0)
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
	/* A's frames go to a capture the Terminate tests read back */
	snprintf(pcap_path, sizeof(pcap_path), "/tmp/rnic_verbs_api_%d.pcapng", (int)getpid());
	snprintf(c[0].ports[0].pcap, sizeof(c[0].ports[0].pcap), "%s", pcap_path);
	A = rnic_stack_create(&c[0]);
	B = rnic_stack_create(&c[1]);
	if (!A || !B || rnic_stack_start(A) != 0 || rnic_stack_start(B) != 0)
		return -1;
	ca = rnic_open_device(A);
	cb = rnic_open_device(B);
	return ca && cb ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	int rc = rnic_close_device(ca) | rnic_close_device(cb);
	rnic_stack_stop(B);
	rnic_stack_stop(A);
	rnic_stack_destroy(B);
	rnic_stack_destroy(A);
	unlink(pcap_path);
	return rc;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_objects),
		cmocka_unit_test(test_send_write_read),
		cmocka_unit_test(test_bad_rkey_terminates),
		cmocka_unit_test(test_read_terminate_quotes_request),
		cmocka_unit_test(test_send_inv_protection),
		cmocka_unit_test(test_mw_and_invalidate),
		cmocka_unit_test(test_channel_and_reject),
		cmocka_unit_test(test_stream_switch),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
