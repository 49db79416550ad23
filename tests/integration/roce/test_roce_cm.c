/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The connection manager (rnic_cm.h) on RoCE RC QPs: the IB CM over QP1
 * MADs between two rnic stacks, A and B, wired by net_ring; only the public
 * API is used.
 *
 *   connect_pdata        REQ/REP private data both ways, IRD/ORD, data
 *                        moves (Send both ways, Write, Read), A disconnects:
 *                        DISCONNECTED on both, receives flushed
 *   disconnect_passive   the same, B disconnects
 *   reject_pdata         B rejects with private data: REJECTED, reason 28
 *   no_listener          nobody on the port: UNREACHABLE, reason 8
 *   both_transports      one listener takes an iWARP and a RoCE connection;
 *                        the CONNECT_REQUEST says which, data on both
 *   limits               private data beyond the IB CM's rooms: EINVAL
 *   slow_accept          B accepts after A's REQ retries would have run
 *                        out: B's MRA (sent on the duplicate REQ) keeps A
 *                        waiting, the connection is made
 *   bad_mads             malformed MADs, wrong class/version/method/
 *                        attribute, length, Q_Key, opcode, unknown comm
 *                        IDs, REQs without listener or CMA header, sent
 *                        from a UD QP to QP1: each counted under its
 *                        cause, answered (DREP, REJ) where the IBA says,
 *                        and the stacks still connect afterwards
 *   loss                 on a second pair dropping 25 % of frames each way:
 *                        20 connect/Send/disconnect rounds complete, and
 *                        lost REQs, REPs, RTUs and DREQs were retried, a
 *                        Send before the RTU moved B's QP to RTS (counters)
 *   vanished_peer        B's stack stops: A's disconnect ends after the
 *                        bounded DREQ retries, DISCONNECTED -ETIMEDOUT
 *
 * Each case prints PASS or FAIL (with the line and what was seen). Waits
 * have hang guards only; nothing is asserted on time.
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
#include "roce/ibcm_wire.h"

#define A_IP 0xc0000201u    /* 192.0.2.1 */
#define B_IP 0xc0000202u
#define L_A_IP 0xc6336401u  /* 198.51.100.1, the lossy pair */
#define L_B_IP 0xc6336402u
#define J_A_IP 0xcb007101u  /* 203.0.113.1, the pair with MTU 4170 */
#define J_B_IP 0xcb007102u
/* RNIC_TEST_IPV6=1: IPv6-only stacks (2001:db8:X::1/::2, X the IPv4
 * address's third byte): the IB CM with IPv6 GIDs and the CMA header with
 * IP version 6, the iWARP CM over TCP/IPv6. */
static bool ipv6;
#define BUF_LEN (1u << 20)
#define HANG_MS 20000

#define CHECK_FILE "test_roce_cm.c"
#define GUARD 0xee
#define CASE_AFTER case_after
#include "../common/cases.h"
#include "gsi_ud.h"

/* --- stacks and ends --------------------------------------------------------- */

struct pair {
	const char *ring;
	uint32_t ip[2];
	double drop;             /* percent, on both TX sides */
	uint16_t mtu;            /* the ports' MTU, 0 for the default */
	struct rnic_stack *st[2];
	struct ibv_context *ctx[2];
};

static struct pair clean = { .ring = "rcm", .ip = { A_IP, B_IP } };
static struct pair lossy = { .ring = "rcl", .ip = { L_A_IP, L_B_IP }, .drop = 25.0 };
/* room for a 4096-byte payload with IPv4's headers (RNIC_ROCE_OVERHEAD,
 * 64) but not with IPv6's 20 more */
static struct pair jumbo = { .ring = "rcj", .ip = { J_A_IP, J_B_IP }, .mtu = 4096 + 64 + 10 };

/* The address of stack @p i of @p n in the family under test. */
static struct rnic_addr addr_of(const struct pair *n, int i)
{
	if (!ipv6)
		return rnic_addr_v4(n->ip[i]);
	uint8_t a[16] = { 0x20, 0x01, 0x0d, 0xb8, 0, (uint8_t)(n->ip[i] >> 8) };
	a[15] = (uint8_t)n->ip[i];
	return rnic_addr_v6(a);
}

/* Connect @p id to stack B of @p n (rnic_cm_connect()'s contract). */
static int connect_b(struct rnic_cm_id *id, struct ibv_qp *qp, const struct pair *n,
		     uint16_t port, const struct rnic_cm_conn_param *cp)
{
	struct rnic_addr b = addr_of(n, 1);
	return rnic_cm_connect_addr(id, qp, &b, port, cp);
}

static int pair_up(struct pair *n)
{
	for (int i = 0; i < 2; i++) {
		struct rnic_config c;
		rnic_config_init(&c);
		c.n_ports = 1;
		rnic_port_cfg_init(&c.ports[0]);
		snprintf(c.ports[0].ring, sizeof(c.ports[0].ring), "%s.%c", n->ring, i ? 'b' : 'a');
		if (ipv6) {
			struct rnic_addr a6 = addr_of(n, i);
			memcpy(c.ports[0].ip6[0].addr, a6.v6, 16);
			c.ports[0].ip6[0].prefix_len = 64;
			c.ports[0].n_ip6 = 1;
		} else {
			c.ports[0].ip = n->ip[i];
			c.ports[0].prefix_len = 24;
		}
		if (n->mtu != 0)
			c.ports[0].mtu = n->mtu;
		c.ports[0].fault_seed = 0xc0ffee00u + (uint64_t)i;
		c.ports[0].tx_fault.drop = n->drop;
		n->st[i] = rnic_stack_create(&c);
		if (n->st[i] == NULL || rnic_stack_start(n->st[i]) != 0)
			return -1;
		n->ctx[i] = rnic_open_device(n->st[i]);
		if (n->ctx[i] == NULL)
			return -1;
	}
	return 0;
}

static void pair_down(struct pair *n)
{
	n_fail += check_pair_down(n->st, n->ctx, n->ring);
}

/* One end: PD, CQ, a registered buffer, a CM channel; up to 4 QPs and ids. */
struct end {
	const char *name;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	uint8_t *buf;
	struct rnic_cm_channel *ch;
	struct rnic_cm_id *id[4];
	struct ibv_qp *qp[4];
};
static struct end a, b;

static void end_init(struct end *e, const char *name, struct ibv_context *ctx)
{
	e->name = name;
	e->ctx = ctx;
	e->buf = aligned_alloc(4096, BUF_LEN);
	CHECK(e->buf != NULL, "%s: buffer", name);
	memset(e->buf, 0, BUF_LEN);
	e->pd = rnic_alloc_pd(ctx);
	CHECK(e->pd != NULL, "%s: alloc_pd: %s", name, strerror(errno));
	e->cq = rnic_create_cq(ctx, 1024, e, NULL, 0);
	CHECK(e->cq != NULL, "%s: create_cq: %s", name, strerror(errno));
	e->mr = rnic_reg_mr(e->pd, e->buf, BUF_LEN, IBV_ACCESS_LOCAL_WRITE |
			    IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
	CHECK(e->mr != NULL, "%s: reg_mr: %s", name, strerror(errno));
	e->ch = rnic_cm_create_channel(ctx);
	CHECK(e->ch != NULL, "%s: create_channel: %s", name, strerror(errno));
}

static bool end_fini(struct end *e)
{
	bool ok = true;
	for (int i = 0; i < 4; i++)
		if (e->id[i] != NULL)
			ok &= rnic_cm_destroy_id(e->id[i]) == 0;
	for (int i = 0; i < 4; i++)
		if (e->qp[i] != NULL)
			ok &= rnic_destroy_qp(e->qp[i]) == 0;
	if (e->ch != NULL) {
		struct rnic_cm_event ev;
		while (rnic_cm_get_event(e->ch, &ev, 0) == 0)
			;
		ok &= rnic_cm_destroy_channel(e->ch) == 0;
	}
	if (e->mr != NULL)
		ok &= rnic_dereg_mr(e->mr) == 0;
	if (e->cq != NULL) {
		struct ibv_wc wc[16];
		while (ibv_poll_cq(e->cq, 16, wc) > 0)
			;
		ok &= rnic_destroy_cq(e->cq) == 0;
	}
	if (e->pd != NULL)
		ok &= rnic_dealloc_pd(e->pd) == 0;
	free(e->buf);
	memset(e, 0, sizeof(*e));
	return ok;
}

static struct ibv_qp *make_qp(struct end *e, int slot, enum rnic_transport t)
{
	struct ibv_qp_init_attr qa = {
		.send_cq = e->cq, .recv_cq = e->cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 64, .max_recv_wr = 64, .max_send_sge = 1,
			 .max_recv_sge = 1 } };
	e->qp[slot] = rnic_create_qp_transport(e->pd, &qa, t);
	CHECK(e->qp[slot] != NULL, "%s: create_qp(%d): %s", e->name, t, strerror(errno));
	{
		/* as rdma_create_qp() leaves it: INIT, so receives can be posted
		 * before the connection (connect/accept keep an INIT QP's port
		 * and rights) */
		struct ibv_qp_attr at = { .qp_state = IBV_QPS_INIT, .port_num = 1,
					  .qp_access_flags = IBV_ACCESS_REMOTE_WRITE |
							     IBV_ACCESS_REMOTE_READ };
		CHECK_RC(rnic_modify_qp(e->qp[slot], &at, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
					IBV_QP_PORT | IBV_QP_ACCESS_FLAGS), 0);
	}
	return e->qp[slot];
}

/* The next event on @p e's channel, which must be of type @p t. */
static struct rnic_cm_event get_ev(struct end *e, enum rnic_cm_event_type t)
{
	struct rnic_cm_event ev;
	int rc = rnic_cm_get_event(e->ch, &ev, HANG_MS);
	CHECK(rc == 0, "%s: no event within %d ms (waiting for %s)", e->name, HANG_MS,
	      rnic_cm_event_str(t));
	CHECK(ev.type == t, "%s: event %s (status %d, reason %u), expected %s", e->name,
	      rnic_cm_event_str(ev.type), ev.status, ev.rej_reason, rnic_cm_event_str(t));
	return ev;
}

static void post_recv(struct ibv_qp *qp, struct end *e, uint32_t off, uint32_t len, uint64_t id)
{
	struct ibv_sge sge = { (uintptr_t)(e->buf + off), len, e->mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = id, .sg_list = &sge, .num_sge = 1 }, *bad;
	CHECK_RC(ibv_post_recv(qp, &wr, &bad), 0);
}

static void post_send(struct ibv_qp *qp, struct end *e, enum ibv_wr_opcode op, uint32_t off,
		      uint32_t len, uint64_t raddr, uint32_t rkey, uint64_t id)
{
	struct ibv_sge sge = { (uintptr_t)(e->buf + off), len, e->mr->lkey };
	struct ibv_send_wr wr = { .wr_id = id, .sg_list = &sge, .num_sge = 1, .opcode = op,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	CHECK_RC(ibv_post_send(qp, &wr, &bad), 0);
}

/* The next completion of @p e: wr_id @p id, status @p st. */
static struct ibv_wc wait_wc(struct end *e, uint64_t id, enum ibv_wc_status st)
{
	struct ibv_wc wc;
	double t0 = now_s();
	int k;
	while ((k = ibv_poll_cq(e->cq, 1, &wc)) == 0) {
		CHECK(now_s() - t0 < HANG_MS / 1000.0, "%s: no completion (wr %llu)", e->name,
		      (unsigned long long)id);
		usleep(50);
	}
	CHECK(k == 1, "%s: poll_cq = %d", e->name, k);
	CHECK(wc.wr_id == id && wc.status == st, "%s: completion wr %llu status %d, expected "
	      "wr %llu status %d", e->name, (unsigned long long)wc.wr_id, wc.status,
	      (unsigned long long)id, st);
	return wc;
}

static enum ibv_qp_state qp_state(struct ibv_qp *qp)
{
	struct ibv_qp_attr at;
	struct ibv_qp_init_attr ia;
	CHECK_RC(rnic_query_qp(qp, &at, IBV_QP_STATE, &ia), 0);
	return at.qp_state;
}

static uint64_t counter(struct rnic_stack *st, const char *name)
{
	uint64_t v = 0;
	CHECK_RC(rnic_roce_counter(st, name, &v), 0);
	return v;
}

/* --- a connection -------------------------------------------------------------- */

static const char PD_A[] = "request private data from A";
static const char PD_B[] = "accept private data from B, longer than the request's";

/* A (slot 0) connects a QP of transport @p t to B's listener on @p port;
 * B accepts the request (into its slot @p bslot) with a QP of the
 * transport the event names. Private data and IRD/ORD are checked. */
static void connect_pair_x(struct pair *n, uint16_t port, int aslot, int bslot,
			   enum rnic_transport t, bool wait_b);

static void connect_pair(struct pair *n, uint16_t port, int aslot, int bslot,
			 enum rnic_transport t)
{
	connect_pair_x(n, port, aslot, bslot, t, true);
}

/* ... and with @p wait_b false, return once A is ESTABLISHED (B's event
 * is the caller's to take). */
static void connect_pair_x(struct pair *n, uint16_t port, int aslot, int bslot,
			   enum rnic_transport t, bool wait_b)
{
	struct ibv_qp *qa = make_qp(&a, aslot, t);
	CHECK_RC(rnic_cm_create_id(a.ch, NULL, &a.id[aslot]), 0);
	struct rnic_cm_conn_param cp = { .private_data = PD_A, .private_data_len = sizeof(PD_A),
					 .responder_resources = 4, .initiator_depth = 2 };
	CHECK_RC(connect_b(a.id[aslot], qa, n, port, &cp), 0);
	CHECK(rnic_cm_id_transport(a.id[aslot]) == t, "A: id transport %d",
	      rnic_cm_id_transport(a.id[aslot]));

	struct rnic_cm_event ev = get_ev(&b, RNIC_CM_EVENT_CONNECT_REQUEST);
	CHECK(ev.transport == t, "B: CONNECT_REQUEST transport %d, expected %d", ev.transport, t);
	struct rnic_addr pa = addr_of(n, 0);
	char ps[RNIC_ADDRSTRLEN];
	CHECK(rnic_addr_eq(&ev.peer, &pa), "B: peer %s", rnic_addr_str(&ev.peer, ps, sizeof(ps)));
	CHECK(ev.private_data_len >= sizeof(PD_A) &&
	      memcmp(ev.private_data, PD_A, sizeof(PD_A)) == 0,
	      "B: request private data (%u bytes) differs", ev.private_data_len);
	if (t == RNIC_TRANSPORT_ROCE) {
		/* the IB CM has no length: the room less the CMA header, zero-padded */
		CHECK(ev.private_data_len == RNIC_CM_ROCE_REQ_PDATA_MAX, "B: pdata len %u",
		      ev.private_data_len);
		for (unsigned i = sizeof(PD_A); i < ev.private_data_len; i++)
			CHECK(ev.private_data[i] == 0, "B: request pdata byte %u not 0", i);
		CHECK(ev.ird == 2 && ev.ord == 4, "B: asked ird %u ord %u (A's ORD 2, IRD 4)",
		      ev.ird, ev.ord);
		CHECK(ev.peer_port >= 0xc000, "B: CMA source port %u", ev.peer_port);
	}
	b.id[bslot] = ev.id;
	struct ibv_qp *qb = make_qp(&b, bslot, ev.transport);
	post_recv(qb, &b, 0, 4096, 100);
	struct rnic_cm_conn_param ap = { .private_data = PD_B, .private_data_len = sizeof(PD_B),
					 .responder_resources = 1, .initiator_depth = 1 };
	CHECK_RC(rnic_cm_accept(ev.id, qb, &ap), 0);

	ev = get_ev(&a, RNIC_CM_EVENT_ESTABLISHED);
	CHECK(ev.id == a.id[aslot], "A: ESTABLISHED for another id");
	CHECK(ev.private_data_len >= sizeof(PD_B) &&
	      memcmp(ev.private_data, PD_B, sizeof(PD_B)) == 0,
	      "A: accept private data (%u bytes) differs", ev.private_data_len);
	if (t == RNIC_TRANSPORT_ROCE)
		CHECK(ev.private_data_len == RNIC_CM_ROCE_REP_PDATA_MAX && ev.ord == 1 &&
		      ev.ird == 1, "A: pdata len %u ird %u ord %u", ev.private_data_len,
		      ev.ird, ev.ord);
	if (!wait_b)
		return;
	ev = get_ev(&b, RNIC_CM_EVENT_ESTABLISHED);
	CHECK(ev.id == b.id[bslot], "B: ESTABLISHED for another id");
	CHECK(qp_state(qa) == IBV_QPS_RTS && qp_state(qb) == IBV_QPS_RTS,
	      "QP states %d/%d after ESTABLISHED", qp_state(qa), qp_state(qb));
}

/* Data both ways on the connected QPs of slots @p as/@p bs: A Sends (into
 * B's posted receive), B Writes into A, A Reads from B, B Sends. */
static void move_data(int as, int bs, uint64_t seed)
{
	struct ibv_qp *qa = a.qp[as], *qb = b.qp[bs];
	fill(a.buf + 8192, 4096, seed);
	post_send(qa, &a, IBV_WR_SEND, 8192, 4096, 0, 0, 1);
	wait_wc(&a, 1, IBV_WC_SUCCESS);
	struct ibv_wc wc = wait_wc(&b, 100, IBV_WC_SUCCESS);
	CHECK(wc.byte_len == 4096, "B: received %u bytes", wc.byte_len);
	CHECK_DATA(b.buf, a.buf + 8192, 4096, "Send A->B");
	fill(b.buf + 65536, 3000, seed + 1);
	post_send(qb, &b, IBV_WR_RDMA_WRITE, 65536, 3000, (uintptr_t)(a.buf + 131072),
		  a.mr->rkey, 2);
	wait_wc(&b, 2, IBV_WC_SUCCESS);
	fill(b.buf + 200000, 5000, seed + 2);
	post_send(qa, &a, IBV_WR_RDMA_READ, 300000, 5000, (uintptr_t)(b.buf + 200000),
		  b.mr->rkey, 3);
	wait_wc(&a, 3, IBV_WC_SUCCESS);
	CHECK_DATA(a.buf + 300000, b.buf + 200000, 5000, "Read A<-B");
	/* the Read completed after the Write was sent: on one QP, in order */
	CHECK_DATA(a.buf + 131072, b.buf + 65536, 3000, "Write B->A");
	post_recv(qa, &a, 400000, 4096, 101);
	fill(b.buf + 70000, 100, seed + 3);
	post_send(qb, &b, IBV_WR_SEND, 70000, 100, 0, 0, 4);
	wait_wc(&b, 4, IBV_WC_SUCCESS);
	wait_wc(&a, 101, IBV_WC_SUCCESS);
	CHECK_DATA(a.buf + 400000, b.buf + 70000, 100, "Send B->A");
}

/* @p x disconnects slot @p xs; both ends see DISCONNECTED (status 0), both
 * QPs are in ERR and a receive posted on the other side is flushed. */
static void disconnect_pair(struct end *x, int xs, struct end *y, int ys)
{
	post_recv(y->qp[ys], y, 500000, 64, 200);
	CHECK_RC(rnic_cm_disconnect(x->id[xs]), 0);
	struct rnic_cm_event ev = get_ev(y, RNIC_CM_EVENT_DISCONNECTED);
	CHECK(ev.id == y->id[ys] && ev.status == 0, "%s: DISCONNECTED status %d", y->name,
	      ev.status);
	ev = get_ev(x, RNIC_CM_EVENT_DISCONNECTED);
	CHECK(ev.id == x->id[xs] && ev.status == 0, "%s: DISCONNECTED status %d", x->name,
	      ev.status);
	wait_wc(y, 200, IBV_WC_WR_FLUSH_ERR);
	CHECK(qp_state(x->qp[xs]) == IBV_QPS_ERR && qp_state(y->qp[ys]) == IBV_QPS_ERR,
	      "QP states %d/%d after DISCONNECTED", qp_state(x->qp[xs]), qp_state(y->qp[ys]));
	CHECK_RC(rnic_cm_disconnect(x->id[xs]), -ENOTCONN);
}

static void listen_b(uint16_t port)
{
	CHECK_RC(rnic_cm_create_id(b.ch, NULL, &b.id[3]), 0);
	CHECK_RC(rnic_cm_listen(b.id[3], port, 8), 0);
}

static void ends(struct pair *n)
{
	end_init(&a, "A", n->ctx[0]);
	end_init(&b, "B", n->ctx[1]);
}

/* --- cases ------------------------------------------------------------------------ */

static void t_connect_pdata(void)
{
	ends(&clean);
	listen_b(7001);
	uint64_t mads = counter(clean.st[0], "cm_mads_out");
	uint64_t dups = counter(clean.st[1], "cm_dup_req");
	connect_pair(&clean, 7001, 0, 0, RNIC_TRANSPORT_ROCE);
	/* one REQ and one RTU on a clean link: no REQ twice (B answers a
	 * second one with an MRA) */
	CHECK(counter(clean.st[0], "cm_mads_out") - mads == 2, "A: %llu MADs for a connect",
	      (unsigned long long)(counter(clean.st[0], "cm_mads_out") - mads));
	CHECK(counter(clean.st[1], "cm_dup_req") == dups, "B: a duplicate REQ");
	move_data(0, 0, 11);
	disconnect_pair(&a, 0, &b, 0);
}

static void t_disconnect_passive(void)
{
	ends(&clean);
	listen_b(7002);
	connect_pair(&clean, 7002, 0, 0, RNIC_TRANSPORT_ROCE);
	move_data(0, 0, 21);
	disconnect_pair(&b, 0, &a, 0);
}

static void t_reject_pdata(void)
{
	static const char no[] = "rejected: B has no room";
	ends(&clean);
	listen_b(7003);
	struct ibv_qp *qa = make_qp(&a, 0, RNIC_TRANSPORT_ROCE);
	CHECK_RC(rnic_cm_create_id(a.ch, NULL, &a.id[0]), 0);
	CHECK_RC(connect_b(a.id[0], qa, &clean, 7003, NULL), 0);
	struct rnic_cm_event ev = get_ev(&b, RNIC_CM_EVENT_CONNECT_REQUEST);
	b.id[0] = ev.id;
	CHECK_RC(rnic_cm_reject(ev.id, no, sizeof(no)), 0);
	ev = get_ev(&a, RNIC_CM_EVENT_REJECTED);
	CHECK(ev.status == -ECONNREFUSED && ev.rej_reason == 28, "A: REJECTED status %d "
	      "reason %u", ev.status, ev.rej_reason);
	CHECK(ev.private_data_len == RNIC_CM_ROCE_REJ_PDATA_MAX &&
	      memcmp(ev.private_data, no, sizeof(no)) == 0, "A: reject private data differs");
	CHECK(qp_state(qa) == IBV_QPS_ERR, "A: QP state %d after REJECTED", qp_state(qa));
	CHECK_RC(rnic_cm_accept(b.id[0], make_qp(&b, 0, RNIC_TRANSPORT_ROCE), NULL), -EINVAL);
}

static void t_no_listener(void)
{
	ends(&clean);
	struct ibv_qp *qa = make_qp(&a, 0, RNIC_TRANSPORT_ROCE);
	CHECK_RC(rnic_cm_create_id(a.ch, NULL, &a.id[0]), 0);
	uint64_t before = counter(clean.st[1], "cm_no_listener");
	CHECK_RC(connect_b(a.id[0], qa, &clean, 7999, NULL), 0);
	struct rnic_cm_event ev = get_ev(&a, RNIC_CM_EVENT_UNREACHABLE);
	CHECK(ev.status == -ECONNREFUSED && ev.rej_reason == 8, "A: UNREACHABLE status %d "
	      "reason %u", ev.status, ev.rej_reason);
	CHECK(counter(clean.st[1], "cm_no_listener") == before + 1, "B: cm_no_listener");
}

static void t_both_transports(void)
{
	ends(&clean);
	listen_b(7004);
	connect_pair(&clean, 7004, 0, 0, RNIC_TRANSPORT_IWARP);
	connect_pair(&clean, 7004, 1, 1, RNIC_TRANSPORT_ROCE);
	CHECK(rnic_qp_transport(b.qp[0]) == RNIC_TRANSPORT_IWARP &&
	      rnic_qp_transport(b.qp[1]) == RNIC_TRANSPORT_ROCE, "B: QP transports");
	move_data(1, 1, 31);
	move_data(0, 0, 41);   /* B's iWARP QP got its receive before the accept */
	disconnect_pair(&a, 1, &b, 1);
	disconnect_pair(&a, 0, &b, 0);
}

static void t_limits(void)
{
	static uint8_t big[RNIC_CM_PDATA_MAX];
	ends(&clean);
	listen_b(7005);
	struct ibv_qp *qa = make_qp(&a, 0, RNIC_TRANSPORT_ROCE);
	CHECK_RC(rnic_cm_create_id(a.ch, NULL, &a.id[0]), 0);
	struct rnic_cm_conn_param cp = { .private_data = big,
					 .private_data_len = RNIC_CM_ROCE_REQ_PDATA_MAX + 1 };
	CHECK_RC(connect_b(a.id[0], qa, &clean, 7005, &cp), -EINVAL);
	cp.private_data_len = RNIC_CM_ROCE_REQ_PDATA_MAX;
	CHECK_RC(connect_b(a.id[0], qa, &clean, 7005, &cp), 0);
	struct rnic_cm_event ev = get_ev(&b, RNIC_CM_EVENT_CONNECT_REQUEST);
	b.id[0] = ev.id;
	struct ibv_qp *qb = make_qp(&b, 0, RNIC_TRANSPORT_ROCE);
	cp.private_data_len = RNIC_CM_ROCE_REP_PDATA_MAX + 1;
	CHECK_RC(rnic_cm_accept(ev.id, qb, &cp), -EINVAL);
	CHECK_RC(rnic_cm_reject(ev.id, big, RNIC_CM_ROCE_REJ_PDATA_MAX + 1), -EINVAL);
	/* an iWARP QP cannot take a RoCE request */
	struct ibv_qp *qi = make_qp(&b, 1, RNIC_TRANSPORT_IWARP);
	CHECK_RC(rnic_cm_accept(ev.id, qi, NULL), -EBUSY);
	cp.private_data_len = RNIC_CM_ROCE_REP_PDATA_MAX;
	CHECK_RC(rnic_cm_accept(ev.id, qb, &cp), 0);
	get_ev(&a, RNIC_CM_EVENT_ESTABLISHED);
	get_ev(&b, RNIC_CM_EVENT_ESTABLISHED);
}

static void t_loss(void)
{
	/* required: with 25 % loss, 20 rounds lose each message at least once
	 * but with probability 0.75^20 = 0.3 %; the seeds are fixed */
	static const char *const resent[][2] = {
		{ "A", "cm_req_resent" },     /* REQ (or the REP) lost */
		{ "B", "cm_dup_req" },        /* REP lost: the REQ again, answered */
		{ "A", "cm_dreq_resent" },    /* DREQ (or the DREP) lost */
		{ "B", "cm_comm_est" },       /* RTU lost, A's Send made B's QP RTS */
	};
	/* printed only: which of them recovers a lost RTU depends on timing
	 * (B's REP timer against A's Send) */
	static const char *const shown[][2] = {
		{ "B", "cm_rep_resent" }, { "A", "cm_dup_rep" }, { "B", "cm_dup_dreq" },
	};
	if (lossy.st[0] == NULL && pair_up(&lossy) != 0)
		CHECK(0, "lossy pair: %s", rte_strerror(rte_errno));
	for (int i = 0; i < 2; i++)
		rnic_cm_roce_timeouts(lossy.ctx[i], 16, 15);   /* 268 ms (ARP retries need time), 15 retries */
	ends(&lossy);
	listen_b(7100);
	for (unsigned r = 0; r < 20; r++) {
		/* A sends as soon as it is ESTABLISHED, as rping does: with the
		 * RTU lost, the Send itself moves B's QP to RTS */
		connect_pair_x(&lossy, 7100, 0, 0, RNIC_TRANSPORT_ROCE, false);
		fill(a.buf + 8192, 1000, r);
		post_send(a.qp[0], &a, IBV_WR_SEND, 8192, 1000, 0, 0, 1);
		wait_wc(&a, 1, IBV_WC_SUCCESS);
		wait_wc(&b, 100, IBV_WC_SUCCESS);
		CHECK(qp_state(b.qp[0]) == IBV_QPS_RTS, "B: QP state %d after a receive",
		      qp_state(b.qp[0]));
		struct rnic_cm_event ev = get_ev(&b, RNIC_CM_EVENT_ESTABLISHED);
		CHECK(ev.id == b.id[0], "B: ESTABLISHED for another id");
		CHECK_DATA(b.buf, a.buf + 8192, 1000, "Send A->B");
		disconnect_pair(&a, 0, &b, 0);
		CHECK_RC(rnic_cm_destroy_id(a.id[0]), 0);
		CHECK_RC(rnic_cm_destroy_id(b.id[0]), 0);
		CHECK_RC(rnic_destroy_qp(a.qp[0]), 0);
		CHECK_RC(rnic_destroy_qp(b.qp[0]), 0);
		a.id[0] = b.id[0] = NULL;
		a.qp[0] = b.qp[0] = NULL;
	}
	for (unsigned i = 0; i < RTE_DIM(shown); i++) {
		struct rnic_stack *st = shown[i][0][0] == 'A' ? lossy.st[0] : lossy.st[1];
		printf("    %s %s %llu\n", shown[i][0], shown[i][1],
		       (unsigned long long)counter(st, shown[i][1]));
	}
	for (unsigned i = 0; i < RTE_DIM(resent); i++) {
		struct rnic_stack *st = resent[i][0][0] == 'A' ? lossy.st[0] : lossy.st[1];
		uint64_t v = counter(st, resent[i][1]);
		printf("    %s %s %llu\n", resent[i][0], resent[i][1], (unsigned long long)v);
		CHECK(v > 0, "%s: %s is 0: no such loss was recovered", resent[i][0],
		      resent[i][1]);
	}
}

static void t_vanished_peer(void)
{
	if (lossy.st[0] == NULL && pair_up(&lossy) != 0)
		CHECK(0, "lossy pair: %s", rte_strerror(rte_errno));
	for (int i = 0; i < 2; i++)
		rnic_cm_roce_timeouts(lossy.ctx[i], 16, 15);   /* connecting over the loss */
	ends(&lossy);
	listen_b(7101);
	connect_pair(&lossy, 7101, 0, 0, RNIC_TRANSPORT_ROCE);
	/* the DREQ's retries start with the disconnect: 17 ms, 4 of them. The
	 * frames A sends meanwhile stay in B's receive ring (the port reports
	 * them at close as mbufs still in use). */
	rnic_cm_roce_timeouts(lossy.ctx[0], 12, 4);
	rnic_stack_stop(lossy.st[1]);
	uint64_t before = counter(lossy.st[0], "cm_dreq_resent");
	CHECK_RC(rnic_cm_disconnect(a.id[0]), 0);
	struct rnic_cm_event ev = get_ev(&a, RNIC_CM_EVENT_DISCONNECTED);
	CHECK(ev.status == -ETIMEDOUT, "A: DISCONNECTED status %d", ev.status);
	CHECK(counter(lossy.st[0], "cm_dreq_resent") == before + 4, "A: %llu DREQ retries",
	      (unsigned long long)(counter(lossy.st[0], "cm_dreq_resent") - before));
	CHECK(qp_state(a.qp[0]) == IBV_QPS_ERR, "A: QP state %d", qp_state(a.qp[0]));
}

/* A's REQ retry budget (3 tries of 17 ms) is far shorter than B's 400 ms to
 * accept: B answers the duplicate REQs with an MRA, A waits the MRA's
 * service timeout instead of giving up, and the connection is made. */
static void t_slow_accept(void)
{
	struct rnic_stack *sa = clean.st[0], *sb = clean.st[1];
	ends(&clean);
	listen_b(7007);
	uint64_t mra_out = counter(sb, "cm_mra_out"), mra_in = counter(sa, "cm_mra_in");
	uint64_t dup = counter(sb, "cm_dup_req");
	rnic_cm_roce_timeouts(clean.ctx[0], 12, 2);
	struct ibv_qp *qa = make_qp(&a, 0, RNIC_TRANSPORT_ROCE);
	CHECK_RC(rnic_cm_create_id(a.ch, NULL, &a.id[0]), 0);
	int rc = connect_b(a.id[0], qa, &clean, 7007, NULL);
	rnic_cm_roce_timeouts(clean.ctx[0], 18, 8);   /* the defaults, for later cases */
	CHECK_RC(rc, 0);
	struct rnic_cm_event ev = get_ev(&b, RNIC_CM_EVENT_CONNECT_REQUEST);
	b.id[0] = ev.id;
	usleep(400 * 1000);
	CHECK(counter(sb, "cm_mra_out") > mra_out && counter(sa, "cm_mra_in") > mra_in &&
	      counter(sb, "cm_dup_req") > dup, "no MRA exchanged (mra_out %llu, mra_in %llu)",
	      (unsigned long long)(counter(sb, "cm_mra_out") - mra_out),
	      (unsigned long long)(counter(sa, "cm_mra_in") - mra_in));
	struct rnic_cm_event none;
	CHECK(rnic_cm_get_event(a.ch, &none, 0) == -EAGAIN, "A: %s while B has not accepted",
	      rnic_cm_event_str(none.type));
	CHECK_RC(rnic_cm_accept(ev.id, make_qp(&b, 0, RNIC_TRANSPORT_ROCE), NULL), 0);
	get_ev(&a, RNIC_CM_EVENT_ESTABLISHED);
	get_ev(&b, RNIC_CM_EVENT_ESTABLISHED);
	disconnect_pair(&a, 0, &b, 0);
}

/* --- bad input on QP1 ---------------------------------------------------------- */

/* A 256-byte CM MAD by hand (IBTA 13.4.2 header, then the message). */
static void mad_hdr(uint8_t *m, uint16_t attr)
{
	memset(m, 0, 256);
	m[0] = 1;          /* base version */
	m[1] = 0x07;       /* CM class */
	m[2] = 2;          /* class version */
	m[3] = 0x03;       /* Send */
	m[15] = 0x42;      /* TID */
	m[16] = (uint8_t)(attr >> 8);
	m[17] = (uint8_t)attr;
}

static void be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

/* Send @p len bytes at a.buf + 8192 from A's UD QP to B's QP1. */
static void ud_to_qp1(struct ibv_qp *ud, struct ibv_ah *ah, uint32_t len, uint32_t qkey,
		      bool imm)
{
	struct ibv_sge sge = { (uintptr_t)(a.buf + 8192), len, a.mr->lkey };
	struct ibv_send_wr wr = { .wr_id = 9, .sg_list = &sge, .num_sge = 1,
				  .opcode = imm ? IBV_WR_SEND_WITH_IMM : IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	wr.wr.ud.ah = ah;
	wr.wr.ud.remote_qpn = 1;
	wr.wr.ud.remote_qkey = qkey;
	CHECK_RC(ibv_post_send(ud, &wr, &bad), 0);
	wait_wc(&a, 9, IBV_WC_SUCCESS);
}

/* Wait (hang guard only) until counter @p name of @p st reaches @p want. */
static void wait_counter(struct rnic_stack *st, const char *name, uint64_t want)
{
	double t0 = now_s();
	uint64_t v;
	while ((v = counter(st, name)) < want) {
		CHECK(now_s() - t0 < HANG_MS / 1000.0, "%s stays at %llu, expected %llu", name,
		      (unsigned long long)v, (unsigned long long)want);
		usleep(1000);
	}
	CHECK(v == want, "%s = %llu, expected %llu", name, (unsigned long long)v,
	      (unsigned long long)want);
}

/* A UD QP on A (slot 0) sending to B's QP1 (gsi_ud.h): hand-built MADs go
 * from A's address as its CM's would. */
static struct ibv_ah *ud_to_b(struct ibv_qp **out)
{
	struct ibv_ah *ah = gsi_ud_to(a.pd, a.cq, b.ctx, &a.qp[0]);
	*out = a.qp[0];
	return ah;
}

static void t_bad_mads(void)
{
	struct rnic_stack *sa = clean.st[0], *sb = clean.st[1];
	ends(&clean);
	listen_b(7006);
	struct ibv_qp *ud;
	struct ibv_ah *ah = ud_to_b(&ud);
	uint8_t *m = a.buf + 8192;
	static const struct { unsigned off; uint8_t val; const char *ctr; } hdr_bad[] = {
		{ 0, 2, "cm_base_version" }, { 1, 0x04, "cm_class" },
		{ 2, 1, "cm_class_version" }, { 3, 0x83, "cm_method" },
		{ 17, 0x19, "cm_attr" },   /* LAP */
	};
	for (unsigned i = 0; i < RTE_DIM(hdr_bad); i++) {
		uint64_t before = counter(sb, hdr_bad[i].ctr);
		mad_hdr(m, 0x0014);
		m[hdr_bad[i].off] = hdr_bad[i].val;
		ud_to_qp1(ud, ah, 256, 0x80010000, false);
		wait_counter(sb, hdr_bad[i].ctr, before + 1);
	}
	static const struct { uint32_t len, qkey; bool imm; const char *ctr; } pkt_bad[] = {
		{ 255, 0x80010000, false, "cm_mad_len" },
		{ 0, 0x80010000, false, "cm_mad_len" },
		{ 256, 0x12345678, false, "cm_bad_qkey" },
		{ 256, 0x80010000, true, "cm_bad_opcode" },   /* Send with Immediate */
	};
	for (unsigned i = 0; i < RTE_DIM(pkt_bad); i++) {
		uint64_t before = counter(sb, pkt_bad[i].ctr);
		mad_hdr(m, 0x0014);
		ud_to_qp1(ud, ah, pkt_bad[i].len, pkt_bad[i].qkey, pkt_bad[i].imm);
		wait_counter(sb, pkt_bad[i].ctr, before + 1);
	}
	/* an RTU for no connection: counted, dropped */
	uint64_t unk = counter(sb, "cm_unknown_comm_id");
	mad_hdr(m, 0x0014);
	be32(m + 24, 0x1234);
	be32(m + 28, 0x5678);
	ud_to_qp1(ud, ah, 256, 0x80010000, false);
	wait_counter(sb, "cm_unknown_comm_id", unk + 1);
	/* a DREQ for no connection: B answers with a DREP (IBA 12.9.6), which A's
	 * CM takes for none of its own */
	uint64_t a_unk = counter(sa, "cm_unknown_comm_id");
	mad_hdr(m, 0x0015);
	be32(m + 24, 0x1234);
	be32(m + 28, 0x5678);
	ud_to_qp1(ud, ah, 256, 0x80010000, false);
	wait_counter(sb, "cm_unknown_comm_id", unk + 2);
	wait_counter(sa, "cm_unknown_comm_id", a_unk + 1);
	/* REQs: for a port nobody listens on (REJ 8), and for the listener but
	 * with no CMA header (REJ): B answers, A's CM knows no such REQ */
	uint64_t nol = counter(sb, "cm_no_listener"), breq = counter(sb, "cm_bad_req");
	uint64_t rej = counter(sb, "cm_rej_out");
	for (int k = 0; k < 2; k++) {
		mad_hdr(m, 0x0010);
		be32(m + 24, 0x777 + (uint32_t)k);
		be32(m + 36, 0x01060000u);   /* service ID, low word */
		m[38] = (uint8_t)((k ? 7006 : 7998) >> 8);
		m[39] = (uint8_t)(k ? 7006 : 7998);
		be32(m + 56, 0x000abc01);    /* QPN, responder resources */
		m[74] = 3 << 4;              /* path MTU 1024 */
		ud_to_qp1(ud, ah, 256, 0x80010000, false);
	}
	wait_counter(sb, "cm_no_listener", nol + 1);
	wait_counter(sb, "cm_bad_req", breq + 1);
	wait_counter(sb, "cm_rej_out", rej + 2);
	wait_counter(sa, "cm_unknown_comm_id", a_unk + 3);
	CHECK_RC(rnic_destroy_ah(ah), 0);
	/* and the stacks still connect */
	connect_pair(&clean, 7006, 1, 0, RNIC_TRANSPORT_ROCE);
	move_data(1, 0, 51);
	disconnect_pair(&a, 1, &b, 0);
}

/* Many connections behind B's CM, most of them in TIMEWAIT: every MAD
 * still finds its own (the CM looks connections up in hash tables by comm
 * ID and by REQ identity, no longer by a walk of them all), and a REQ's
 * duplicates are answered as before: an MRA while B decides, the REJ it
 * got once B has rejected it. */
#define MANY_CONNS 64
static void t_many_timewait(void)
{
	struct rnic_stack *sb = clean.st[1];
	ends(&clean);
	listen_b(7300);
	uint64_t unk = counter(sb, "cm_unknown_comm_id"), stale = counter(sb, "cm_stale");
	uint64_t dup = counter(sb, "cm_dup_req");
	for (int i = 0; i < MANY_CONNS; i++) {
		connect_pair(&clean, 7300, 0, 0, RNIC_TRANSPORT_ROCE);
		CHECK_RC(rnic_cm_disconnect(i % 2 ? a.id[0] : b.id[0]), 0);
		get_ev(&a, RNIC_CM_EVENT_DISCONNECTED);
		get_ev(&b, RNIC_CM_EVENT_DISCONNECTED);
		struct end *e[2] = { &a, &b };
		for (int k = 0; k < 2; k++) {
			struct ibv_wc wc[8];
			while (ibv_poll_cq(e[k]->cq, 8, wc) > 0)
				;   /* B's receive, flushed */
			CHECK_RC(rnic_cm_destroy_id(e[k]->id[0]), 0);
			CHECK_RC(rnic_destroy_qp(e[k]->qp[0]), 0);
			e[k]->id[0] = NULL;
			e[k]->qp[0] = NULL;
		}
	}
	/* each DREQ, DREP, REP and RTU found its connection */
	CHECK(counter(sb, "cm_unknown_comm_id") == unk && counter(sb, "cm_stale") == stale &&
	      counter(sb, "cm_dup_req") == dup, "B: unknown comm ID %llu, stale %llu, dup REQ "
	      "%llu after %d connections", (unsigned long long)(counter(sb, "cm_unknown_comm_id") -
	      unk), (unsigned long long)(counter(sb, "cm_stale") - stale),
	      (unsigned long long)(counter(sb, "cm_dup_req") - dup), MANY_CONNS);

	/* a REQ by hand, from A's address, three times over */
	struct ibv_qp *ud;
	struct ibv_ah *ah = ud_to_b(&ud);
	struct rnic_ibcm_msg req = {
		.attr = RNIC_IBCM_REQ, .tid = 0x5151, .local_id = 0x0badc0de,
		.service_id = rnic_ibcm_service_id(7300), .ca_guid = 0x0200c0fffe000201ull,
		.qpn = 0xabc01, .psn = 77, .rres = 1, .idepth = 1, .ts_type = RNIC_IBCM_TS_RC,
		.path_mtu = IBV_MTU_1024, .retry_cnt = 7, .rnr_retry = 7,
		.pdata_len = RNIC_IBCM_REQ_PDATA,
	};
	struct rnic_addr pa = addr_of(&clean, 0), pb = addr_of(&clean, 1);
	rnic_cma_hdr_set((struct rnic_cma_hdr *)req.pdata, &pa, &pb, 0xc123);
	CHECK_RC(rnic_ibcm_encode(&req, a.buf + 8192), 0);
	uint64_t mra = counter(sb, "cm_mra_out"), rej = counter(sb, "cm_rej_out");
	ud_to_qp1(ud, ah, 256, 0x80010000, false);
	struct rnic_cm_event ev = get_ev(&b, RNIC_CM_EVENT_CONNECT_REQUEST);
	b.id[1] = ev.id;
	/* the same REQ while B decides: an MRA, no second request */
	ud_to_qp1(ud, ah, 256, 0x80010000, false);
	wait_counter(sb, "cm_dup_req", dup + 1);
	wait_counter(sb, "cm_mra_out", mra + 1);
	CHECK_RC(rnic_cm_reject(b.id[1], NULL, 0), 0);
	wait_counter(sb, "cm_rej_out", rej + 1);
	/* and once rejected (the connection in TIMEWAIT): the REJ it sent,
	 * again (one more MAD out, not a new stale-connection REJ, which
	 * cm_rej_out would count) */
	uint64_t mads = counter(sb, "cm_mads_out");
	ud_to_qp1(ud, ah, 256, 0x80010000, false);
	wait_counter(sb, "cm_dup_req", dup + 2);
	wait_counter(sb, "cm_mads_out", mads + 1);
	CHECK(counter(sb, "cm_rej_out") == rej + 1, "B: a new REJ for a duplicate REQ");
	struct rnic_cm_event none;
	CHECK(rnic_cm_get_event(b.ch, &none, 100) == -EAGAIN, "B: event %s after duplicates",
	      rnic_cm_event_str(none.type));
	CHECK_RC(rnic_destroy_ah(ah), 0);
	/* and a new connection still connects and carries data */
	connect_pair(&clean, 7300, 2, 0, RNIC_TRANSPORT_ROCE);
	move_data(2, 0, 71);
	disconnect_pair(&a, 2, &b, 0);
}

/* The path MTU both ends agree on fits the family's headers: MTU 4170
 * takes 4096-byte packets over IPv4 and 2048-byte ones over IPv6 (the CM
 * once offered 4096 over IPv6 too, and the QP refused it at RTR) */
static void t_path_mtu(void)
{
	if (jumbo.st[0] == NULL && pair_up(&jumbo) != 0)
		CHECK(0, "MTU 4170 pair: %s", rte_strerror(rte_errno));
	ends(&jumbo);
	listen_b(7200);
	connect_pair(&jumbo, 7200, 0, 0, RNIC_TRANSPORT_ROCE);
	enum ibv_mtu want = ipv6 ? IBV_MTU_2048 : IBV_MTU_4096;
	struct ibv_qp_attr at;
	struct ibv_qp_init_attr ia;
	CHECK_RC(rnic_query_qp(a.qp[0], &at, IBV_QP_PATH_MTU, &ia), 0);
	CHECK(at.path_mtu == want, "A: path MTU %d, want %d", at.path_mtu, want);
	CHECK_RC(rnic_query_qp(b.qp[0], &at, IBV_QP_PATH_MTU, &ia), 0);
	CHECK(at.path_mtu == want, "B: path MTU %d, want %d", at.path_mtu, want);
	move_data(0, 0, 61);
	disconnect_pair(&a, 0, &b, 0);
}

static const struct {
	const char *name;
	void (*fn)(void);
} cases[] = {
	{ "path_mtu", t_path_mtu },
	{ "connect_pdata", t_connect_pdata },
	{ "disconnect_passive", t_disconnect_passive },
	{ "reject_pdata", t_reject_pdata },
	{ "no_listener", t_no_listener },
	{ "both_transports", t_both_transports },
	{ "limits", t_limits },
	{ "slow_accept", t_slow_accept },
	{ "bad_mads", t_bad_mads },
	{ "many_timewait", t_many_timewait },
	{ "loss", t_loss },
	{ "vanished_peer", t_vanished_peer },   /* last: stops B of the lossy pair */
};

/* After each case (run_case, cases.h): free both ends; a case that left
 * objects that cannot be freed fails. */
static int case_after(const char *name, int r)
{
	bool ok = true;
	if (b.name)
		ok &= end_fini(&b);
	if (a.name)
		ok &= end_fini(&a);
	if (r == R_PASS && !ok) {
		fprintf(stderr, "  FAIL %s: objects could not be freed\n", name);
		r = R_FAIL;
	}
	return r;
}

int main(int argc, char **argv)
{
	const char *filter = argc > 1 ? argv[1] : NULL;
	struct rnic_config c;
	setvbuf(stdout, NULL, _IOLBF, 0);
	ipv6 = getenv("RNIC_TEST_IPV6") && strcmp(getenv("RNIC_TEST_IPV6"), "0") != 0;
	if (ipv6)
		printf("IPv6 only: 2001:db8:2::1/::2, lossy pair 2001:db8:64::1/::2\n");
	if (check_eal_init(argv[0], &c, 6) != 0)   /* three pairs of stacks */
		return 1;
	if (rnic_ring_pair(clean.ring, 1) != 0 || rnic_ring_pair(lossy.ring, 1) != 0 ||
	    rnic_ring_pair(jumbo.ring, 1) != 0) {
		fprintf(stderr, "ring pairs failed\n");
		return 1;
	}
	if (pair_up(&clean) != 0) {
		fprintf(stderr, "stacks: %s\n", rte_strerror(rte_errno));
		return 1;
	}
	for (unsigned i = 0; i < RTE_DIM(cases); i++)
		if (filter == NULL || (filter[0] == '-' ? strstr(cases[i].name, filter + 1) == NULL
							: strstr(cases[i].name, filter) != NULL))
			run_case(cases[i].name, cases[i].fn);
	if (jumbo.st[0] != NULL)
		pair_down(&jumbo);
	pair_down(&lossy);
	pair_down(&clean);
	printf("%d passed, %d failed\n", n_pass, n_fail);
	return n_fail ? 1 : 0;
}
