/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The IB CM under a REQ flood (issue 27): stack A's UD QP sends hand-built
 * REQs to stack B's QP1, as any host on the network can, while B's
 * application does not read its events.
 *
 *   backlog        64 distinct REQs at a listener with backlog 16: 16
 *                  connections held (CONNECT_REQUESTs queued), 48 REJs
 *                  (no resources) counted in cm_backlog_full without a
 *                  connection; a retransmitted REQ allocates nothing
 *                  (MRA); unknown REP/RTU/DREQ/DREP allocate nothing
 *   timeout        the 16 undecided REQs time out (REJ timeout,
 *                  cm_req_timeouts): their ids and events are freed
 *                  unseen, the connections after their timewait; a REQ
 *                  whose CONNECT_REQUEST the application did take gets
 *                  CONNECT_ERROR -ETIMEDOUT; then a real connect works
 *
 * Each case prints PASS or FAIL. Waits have hang guards only.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rte_common.h>
#include <rte_errno.h>

#include "rnic/rnic.h"
#include "rnic/rnic_cm.h"
#include "rnic/rnic_roce.h"
#include "rnic/rnic_verbs.h"
#include "roce/ibcm.h"
#include "roce/ibcm_wire.h"

#define A_IP 0xc0000a01u    /* 192.0.10.1 */
#define B_IP 0xc0000a02u
#define HANG_MS 20000
#define BACKLOG 16
#define FLOOD 64
#define PORT 7500

#define CHECK_FILE "test_roce_cm_flood.c"
#define GUARD 0xee
#include "../common/cases.h"
#include "gsi_ud.h"

static struct rnic_stack *st[2];
static struct ibv_context *ctx[2];

/* A: a UD QP sending from its registered buffer; B: a listener. */
static struct ibv_pd *pd_a, *pd_b;
static struct ibv_cq *cq_a, *cq_b;
static struct ibv_mr *mr_a;
static uint8_t *buf_a;
static struct ibv_qp *ud;
static struct ibv_ah *ah;
static struct rnic_cm_channel *ch_a, *ch_b;
static struct rnic_cm_id *listener;

static uint64_t counter(int i, const char *name)
{
	uint64_t v = 0;
	CHECK_RC(rnic_roce_counter(st[i], name, &v), 0);
	return v;
}

/* Wait (hang guard only) until counter @p name of B reaches @p want. */
static void wait_counter(const char *name, uint64_t want)
{
	double t0 = now_s();
	uint64_t v;
	while ((v = counter(1, name)) < want) {
		CHECK(now_s() - t0 < HANG_MS / 1000.0, "B: %s stays at %llu, expected %llu", name,
		      (unsigned long long)v, (unsigned long long)want);
		usleep(1000);
	}
	CHECK(v == want, "B: %s = %llu, expected %llu", name, (unsigned long long)v,
	      (unsigned long long)want);
}

static void wait_conns(unsigned want)
{
	double t0 = now_s();
	while (rnic_ibcm_conn_count(st[1]) != want) {
		CHECK(now_s() - t0 < HANG_MS / 1000.0, "B: %u CM connections, expected %u",
		      rnic_ibcm_conn_count(st[1]), want);
		usleep(1000);
	}
}

/* Send the 256 bytes at buf_a from A's UD QP to B's QP1. */
static void mad_out(void)
{
	struct ibv_sge sge = { (uintptr_t)buf_a, 256, mr_a->lkey };
	struct ibv_send_wr wr = { .wr_id = 9, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED }, *bad;
	wr.wr.ud.ah = ah;
	wr.wr.ud.remote_qpn = 1;
	wr.wr.ud.remote_qkey = 0x80010000;
	CHECK_RC(ibv_post_send(ud, &wr, &bad), 0);
	struct ibv_wc wc;
	double t0 = now_s();
	int k;
	while ((k = ibv_poll_cq(cq_a, 1, &wc)) == 0) {
		CHECK(now_s() - t0 < HANG_MS / 1000.0, "A: no send completion");
		usleep(20);
	}
	CHECK(k == 1 && wc.status == IBV_WC_SUCCESS, "A: send status %d", wc.status);
}

/* A REQ for B's listener with comm ID @p lid, asking for a 4.3 s response
 * timeout and no retries: B's decide timeout is then its 4 s ceiling, so
 * none of the flood times out while the rest of it is still being sent
 * (with a 1 s timeout, an ASan build next to another test took longer
 * than that for the 64 REQs, and early ones freed their slots). */
static void req_out(uint32_t lid)
{
	struct rnic_ibcm_msg req = {
		.attr = RNIC_IBCM_REQ, .tid = 0x7700 + lid, .local_id = lid,
		.service_id = rnic_ibcm_service_id(PORT), .ca_guid = 0x0200c0fffe000a01ull,
		.qpn = 0xabc00 + (lid & 0xff), .psn = 77, .rres = 1, .idepth = 1,
		.remote_cm_timeout = 20, .local_cm_timeout = 20, .max_cm_retries = 0,
		.ts_type = RNIC_IBCM_TS_RC, .path_mtu = IBV_MTU_1024, .retry_cnt = 7,
		.rnr_retry = 7, .pdata_len = RNIC_IBCM_REQ_PDATA,
	};
	struct rnic_addr pa = rnic_addr_v4(A_IP), pb = rnic_addr_v4(B_IP);
	rnic_cma_hdr_set((struct rnic_cma_hdr *)req.pdata, &pa, &pb, (uint16_t)(0xc000 + lid));
	CHECK_RC(rnic_ibcm_encode(&req, buf_a), 0);
	/* one at a time: B has taken each REQ before the next is sent, so the
	 * counts below do not depend on how fast B's worker drains its ring
	 * when the machine is busy (a burst of 64 lost some under ASan next
	 * to another test) */
	uint64_t in = counter(1, "cm_mads_in");
	double t0 = now_s();
	mad_out();
	while (counter(1, "cm_mads_in") == in) {
		CHECK(now_s() - t0 < HANG_MS / 1000.0, "B: REQ %#x never reached its CM", lid);
		usleep(100);
	}
}

/* A message of @p attr for comm IDs nobody holds. */
static void stray_out(uint16_t attr)
{
	struct rnic_ibcm_msg m = { .attr = attr, .tid = 0x99, .local_id = 0x5eed,
				   .remote_id = 0xdead0000u | attr, .qpn = 0xabc01,
				   .ca_guid = 0x0200c0fffe000a01ull };
	CHECK_RC(rnic_ibcm_encode(&m, buf_a), 0);
	mad_out();
}

static void setup_once(void)
{
	pd_a = rnic_alloc_pd(ctx[0]);
	pd_b = rnic_alloc_pd(ctx[1]);
	cq_a = rnic_create_cq(ctx[0], 256, NULL, NULL, 0);
	cq_b = rnic_create_cq(ctx[1], 256, NULL, NULL, 0);
	buf_a = aligned_alloc(4096, 4096);
	CHECK(pd_a && pd_b && cq_a && cq_b && buf_a, "A/B: PD, CQ, buffer");
	mr_a = rnic_reg_mr(pd_a, buf_a, 4096, IBV_ACCESS_LOCAL_WRITE);
	CHECK(mr_a != NULL, "A: reg_mr: %s", strerror(errno));
	ah = gsi_ud_to(pd_a, cq_a, ctx[1], &ud);
	ch_a = rnic_cm_create_channel(ctx[0]);
	ch_b = rnic_cm_create_channel(ctx[1]);
	CHECK(ch_a && ch_b, "channels");
	CHECK_RC(rnic_cm_create_id(ch_b, NULL, &listener), 0);
	CHECK_RC(rnic_cm_listen(listener, PORT, BACKLOG), 0);
	/* timewait of 2 x 16 ms: the test need not wait seconds for it */
	rnic_cm_roce_timeouts(ctx[1], 12, 0);
}

static void t_backlog(void)
{
	setup_once();
	unsigned base = rnic_ibcm_conn_count(st[1]);
	uint64_t full = counter(1, "cm_backlog_full"), rej = counter(1, "cm_rej_out");
	uint64_t dup = counter(1, "cm_dup_req"), mra = counter(1, "cm_mra_out");
	for (uint32_t k = 0; k < FLOOD; k++)
		req_out(0x100 + k);
	wait_counter("cm_backlog_full", full + FLOOD - BACKLOG);
	wait_counter("cm_rej_out", rej + FLOOD - BACKLOG);
	CHECK(rnic_ibcm_conn_count(st[1]) == base + BACKLOG, "B: %u CM connections after %d "
	      "REQs, backlog %d", rnic_ibcm_conn_count(st[1]) - base, FLOOD, BACKLOG);
	/* the first REQ again: a duplicate, answered with an MRA, no new state */
	req_out(0x100);
	wait_counter("cm_dup_req", dup + 1);
	wait_counter("cm_mra_out", mra + 1);
	CHECK(rnic_ibcm_conn_count(st[1]) == base + BACKLOG, "B: a duplicate REQ allocated");
	/* messages for connections nobody holds: counted, nothing kept */
	uint64_t unk = counter(1, "cm_unknown_comm_id");
	static const uint16_t stray[] = { RNIC_IBCM_REP, RNIC_IBCM_RTU, RNIC_IBCM_DREQ,
					  RNIC_IBCM_DREP };
	for (unsigned i = 0; i < RTE_DIM(stray); i++)
		stray_out(stray[i]);
	wait_counter("cm_unknown_comm_id", unk + RTE_DIM(stray));
	CHECK(rnic_ibcm_conn_count(st[1]) == base + BACKLOG, "B: stray messages allocated");
}

static void t_timeout(void)
{
	CHECK(listener != NULL, "needs the backlog case first");
	uint64_t tmo = counter(1, "cm_req_timeouts");
	/* the backlog's 16 (still undecided) time out within their 4 s
	 * ceiling; their ids, never taken, go with their events */
	wait_counter("cm_req_timeouts", tmo + BACKLOG);
	wait_conns(0);
	struct rnic_cm_event ev;
	CHECK(rnic_cm_get_event(ch_b, &ev, 0) == -EAGAIN, "B: event %s of a timed-out request",
	      rnic_cm_event_str(ev.type));
	/* a request the application took but never decided on: CONNECT_ERROR */
	req_out(0x900);
	CHECK_RC(rnic_cm_get_event(ch_b, &ev, HANG_MS), 0);
	CHECK(ev.type == RNIC_CM_EVENT_CONNECT_REQUEST, "B: %s", rnic_cm_event_str(ev.type));
	struct rnic_cm_id *taken = ev.id;
	CHECK_RC(rnic_cm_get_event(ch_b, &ev, HANG_MS), 0);
	CHECK(ev.type == RNIC_CM_EVENT_CONNECT_ERROR && ev.id == taken &&
	      ev.status == -ETIMEDOUT, "B: %s status %d, expected CONNECT_ERROR -ETIMEDOUT",
	      rnic_cm_event_str(ev.type), ev.status);
	CHECK_RC(rnic_cm_accept(taken, NULL, NULL), -EINVAL);
	CHECK_RC(rnic_cm_destroy_id(taken), 0);
	wait_conns(0);
	/* and a real connection is made */
	struct ibv_qp_init_attr qa = { .send_cq = cq_a, .recv_cq = cq_a, .qp_type = IBV_QPT_RC,
				       .cap = { .max_send_wr = 4, .max_recv_wr = 4,
						.max_send_sge = 1, .max_recv_sge = 1 } };
	struct ibv_qp *qp_a = rnic_create_qp_transport(pd_a, &qa, RNIC_TRANSPORT_ROCE);
	qa.send_cq = qa.recv_cq = cq_b;
	struct ibv_qp *qp_b = rnic_create_qp_transport(pd_b, &qa, RNIC_TRANSPORT_ROCE);
	CHECK(qp_a && qp_b, "RC QPs: %s", strerror(errno));
	struct rnic_cm_id *id_a;
	CHECK_RC(rnic_cm_create_id(ch_a, NULL, &id_a), 0);
	struct rnic_addr b = rnic_addr_v4(B_IP);
	CHECK_RC(rnic_cm_connect_addr(id_a, qp_a, &b, PORT, NULL), 0);
	CHECK_RC(rnic_cm_get_event(ch_b, &ev, HANG_MS), 0);
	CHECK(ev.type == RNIC_CM_EVENT_CONNECT_REQUEST, "B: %s", rnic_cm_event_str(ev.type));
	struct rnic_cm_id *id_b = ev.id;
	CHECK_RC(rnic_cm_accept(id_b, qp_b, NULL), 0);
	CHECK_RC(rnic_cm_get_event(ch_a, &ev, HANG_MS), 0);
	CHECK(ev.type == RNIC_CM_EVENT_ESTABLISHED, "A: %s", rnic_cm_event_str(ev.type));
	CHECK_RC(rnic_cm_get_event(ch_b, &ev, HANG_MS), 0);
	CHECK(ev.type == RNIC_CM_EVENT_ESTABLISHED, "B: %s", rnic_cm_event_str(ev.type));
	CHECK_RC(rnic_cm_disconnect(id_a), 0);
	CHECK_RC(rnic_cm_get_event(ch_b, &ev, HANG_MS), 0);
	CHECK(ev.type == RNIC_CM_EVENT_DISCONNECTED, "B: %s", rnic_cm_event_str(ev.type));
	CHECK_RC(rnic_cm_get_event(ch_a, &ev, HANG_MS), 0);
	CHECK(ev.type == RNIC_CM_EVENT_DISCONNECTED, "A: %s", rnic_cm_event_str(ev.type));
	CHECK_RC(rnic_cm_destroy_id(id_a), 0);
	CHECK_RC(rnic_cm_destroy_id(id_b), 0);
	CHECK_RC(rnic_destroy_qp(qp_a), 0);
	CHECK_RC(rnic_destroy_qp(qp_b), 0);
}

static void teardown(void)
{
	struct rnic_cm_event ev;
	if (listener != NULL)
		rnic_cm_destroy_id(listener);
	/* ids of requests still queued (the old code's): destroy them */
	while (ch_b != NULL && rnic_cm_get_event(ch_b, &ev, 0) == 0)
		if (ev.type == RNIC_CM_EVENT_CONNECT_REQUEST)
			rnic_cm_destroy_id(ev.id);
	if (ch_b != NULL && rnic_cm_destroy_channel(ch_b) != 0)
		n_fail++;
	if (ch_a != NULL)
		rnic_cm_destroy_channel(ch_a);
	if (ah != NULL)
		rnic_destroy_ah(ah);
	if (ud != NULL)
		rnic_destroy_qp(ud);
	if (mr_a != NULL)
		rnic_dereg_mr(mr_a);
	struct ibv_wc wc[16];
	for (int i = 0; i < 2; i++) {
		struct ibv_cq *cq = i ? cq_b : cq_a;
		if (cq != NULL) {
			while (ibv_poll_cq(cq, 16, wc) > 0)
				;
			rnic_destroy_cq(cq);
		}
	}
	if (pd_a != NULL)
		rnic_dealloc_pd(pd_a);
	if (pd_b != NULL)
		rnic_dealloc_pd(pd_b);
	free(buf_a);
}

int main(int argc, char **argv)
{
	(void)argc;
	struct rnic_config c;
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (check_eal_init(argv[0], &c, 2) != 0)
		return 1;
	if (cases_stacks_up("rcf", A_IP, B_IP, st, ctx) != 0)
		return 1;
	run_case("backlog", t_backlog);
	run_case("timeout", t_timeout);
	teardown();
	n_fail += check_pair_down(st, ctx, "rcf");
	printf("%d passed, %d failed\n", n_pass, n_fail);
	return n_fail ? 1 : 0;
}
