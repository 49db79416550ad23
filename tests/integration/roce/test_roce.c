/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Integration tests of RoCEv2 RC queue pairs, driven only through the
 * public verbs API (rnic_verbs.h and the inline calls of
 * <infiniband/verbs.h>): two rnic stacks, A and B, wired by net_ring. The
 * verbs conformance suite (../verbs/conformance.h, the cases iWARP passes
 * the same way) runs here on RoCE next to the RoCE-only cases (path MTU
 * sweeps, atomics, RNR, NAKs, UD, modify and query).
 *
 *   test_roce clean [FILTER]   every case on a clean link
 *   test_roce lossy [FILTER]   the data cases again through the fault
 *                              injector (drop, dup, reorder, corrupt on
 *                              both ports' transmit side: both directions)
 *
 * There is no connection manager here: both ends live in this process, so
 * a case creates its QPs with rnic_create_qp_transport(..., ROCE) and
 * connects them out of band, as rc_pingpong does over its socket:
 *
 *   A, B: RESET -> INIT   (pkey 0, port 1, qp_access_flags)
 *   A, B: INIT -> RTR     (GRH to the peer's GID 1 = ::ffff:its IPv4,
 *                          path_mtu, dest QPN, rq_psn = the peer's sq_psn,
 *                          max_dest_rd_atomic, min_rnr_timer)
 *   A, B: RTR -> RTS      (timeout, retry_cnt, rnr_retry, sq_psn,
 *                          max_rd_atomic)
 *
 * Start PSNs sit just below the 24-bit wrap, so most transfers cross it.
 * Every completion is checked for wr_id, status, opcode, byte_len and
 * immediate data, and must come exactly once (each case ends by checking
 * that both CQs stay empty). path_mtu 4096 runs on a second pair of stacks
 * with a 9000-byte port MTU, made when first needed.
 *
 * Each case prints PASS, FAIL (with the line and what was seen) or SKIP
 * (with the reason). When the library cannot create RoCE QPs at all
 * (EOPNOTSUPP) the program exits 77, meson's "skipped". FILTER runs only
 * the cases whose name contains it, or one of its comma-separated
 * parts (to replay a sequence of cases); RNIC_FAULT_SEED overrides the
 * injector's seed. Waits have hang guards only; nothing is asserted on time.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <arpa/inet.h>

#include <rte_common.h>
#include <rte_errno.h>

#include "rnic/rnic.h"
#include "rnic/rnic_roce.h"
#include "rnic/rnic_verbs.h"
#include "engine/stack.h"   /* a stack's id, for telemetry's parameter */
#include "../../unit/engine/tel_client.h"

#define A_IP 0xc0000201u    /* 192.0.2.1, the 1500-byte pair */
#define B_IP 0xc0000202u
#define C_IP 0xc6336401u    /* 198.51.100.1, the 9000-byte pair */
#define D_IP 0xc6336402u
/* RNIC_TEST_IPV6=1: IPv6-only stacks (2001:db8::1/::2 and 2001:db8:9::1/::2
 * for the jumbo pair); GID 1 is then each port's global IPv6 address
 * (rdma/gid.h: no IPv4, so the first global follows the link-local GID),
 * and every packet is RoCEv2 over UDP/IPv6. */
static bool ipv6;
#define KiB 1024u
#define MiB (1024u * 1024u)
#define BUF_LEN (16 * MiB + 512 * KiB)
#define BASE 4096u          /* transfers start here; guard bytes below */
#define GUARD 0xee
#define MAXX 8
#define PSN_MASK 0xffffffu
/* rights of the case MRs and of the QPs */
#define MR_ACC (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | \
		IBV_ACCESS_REMOTE_ATOMIC | IBV_ACCESS_MW_BIND)
#define QP_ACC (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC)

/* --- the harness ------------------------------------------------------------ */

static jmp_buf case_jmp;
static const char *case_name;
static int hang_s;            /* hang guard of one wait, never an assertion on time */
static bool faults;
static int n_pass, n_fail, n_skip;
static char skipped[4096], failed[4096];
enum { R_PASS = 0, R_FAIL = 1, R_SKIP = 2 };

#define CHECK_FILE "test_roce.c"

#include "../common/check.h"

/* --- the stacks ---------------------------------------------------------------- */

/* A pair of stacks on one ring pair. */
struct net {
	const char *ring;
	uint32_t ip[2];
	uint16_t mtu;
	uint32_t mbufs;
	struct rnic_stack *st[2];
	struct ibv_context *ctx[2];
	bool tried;          /* creation attempted (made once, on first use) */
	char why[256];       /* why it could not be made */
};

static struct net net_std = { .ring = "rcv", .ip = { A_IP, B_IP }, .mtu = 1500, .mbufs = 32767 };
static struct net net_jumbo = { .ring = "rcj", .ip = { C_IP, D_IP }, .mtu = 9000, .mbufs = 8191 };
static struct net *cur = &net_std;    /* the pair the running case uses */
static uint64_t fault_seed = 0x5eed0005;
static uint8_t *bufA, *bufB;

static void net_down(struct net *n)
{
	n_fail += check_pair_down(n->st, n->ctx, n->ring);
}

/* Create, start and open both stacks of @p n (with faults in the faults
 * run). @return 0, or -1 with the reason in n->why. */
static int net_up(struct net *n)
{
	n->tried = true;
	for (int i = 0; i < 2; i++) {
		struct rnic_config c;
		rnic_config_init(&c);
		struct rnic_port_cfg *p = &c.ports[0];
		c.n_ports = 1;
		rnic_port_cfg_init(p);
		snprintf(p->ring, sizeof(p->ring), "%s.%c", n->ring, i ? 'b' : 'a');
		if (ipv6) {
			/* 2001:db8:X::1/::2, X the pair's IPv4 third byte (distinct) */
			uint8_t a6[16] = { 0x20, 0x01, 0x0d, 0xb8, 0, (uint8_t)(n->ip[i] >> 8) };
			a6[15] = (uint8_t)n->ip[i];
			memcpy(p->ip6[0].addr, a6, 16);
			p->ip6[0].prefix_len = 64;
			p->n_ip6 = 1;
		} else {
			p->ip = n->ip[i];
			p->prefix_len = 24;
		}
		p->mtu = n->mtu;
		p->mbufs = n->mbufs;
		if (faults) {
			p->fault_seed = fault_seed + (uint64_t)i;
			p->tx_fault = (struct rnic_fault_cfg){ .drop = 2.0, .dup = 1.0,
							       .reorder = 2.0, .corrupt = 0.5 };
		}
		n->st[i] = rnic_stack_create(&c);
		if (n->st[i] == NULL) {
			snprintf(n->why, sizeof(n->why), "rnic_stack_create with a %u-byte MTU on "
				 "net_ring: %s", n->mtu, rte_strerror(rte_errno));
			net_down(n);
			return -1;
		}
	}
	for (int i = 0; i < 2; i++) {
		int rc = rnic_stack_start(n->st[i]);
		n->ctx[i] = rc == 0 ? rnic_open_device(n->st[i]) : NULL;
		if (n->ctx[i] == NULL) {
			snprintf(n->why, sizeof(n->why), "stack start/open_device: %d", rc);
			net_down(n);
			return -1;
		}
	}
	return 0;
}

/* Run the rest of the case on the 9000-byte pair (path_mtu 4096), or skip. */
static void use_jumbo(void)
{
	if (!net_jumbo.tried && net_up(&net_jumbo) != 0)
		fprintf(stderr, "  (%s)\n", net_jumbo.why);
	if (net_jumbo.ctx[0] == NULL)
		skip_case("path_mtu 4096 needs a 9000-byte port MTU, and the port layer refused "
			  "it: %s", net_jumbo.why);
	struct ibv_port_attr pa;
	CHECK_RC(rnic_query_port(net_jumbo.ctx[0], 1, &pa), 0);
	if (pa.active_mtu < IBV_MTU_4096)
		skip_case("a 9000-byte port reports active_mtu %d, less than IBV_MTU_4096",
			  pa.active_mtu);
	cur = &net_jumbo;
}

/* --- the two ends ------------------------------------------------------------------ */

struct end {
	const char *name;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	uint8_t *buf;
	/* extras some cases make; the cleanup frees whatever is set */
	struct ibv_qp *xqp[MAXX];
	struct ibv_mr *xmr[4];
	struct ibv_mw *xmw[4];
};
static struct end a, b;

/* QP attributes of a case (both ends alike). */
struct opts {
	uint32_t sq, rq;          /* queue depths */
	enum ibv_mtu mtu;         /* path_mtu */
	int access;               /* qp_access_flags */
	int sig_all;
	uint8_t rd_atomic;        /* max_rd_atomic and max_dest_rd_atomic */
	uint8_t timeout;          /* local ACK timeout: 4.096 us << timeout */
	uint8_t retry_cnt, rnr_retry, min_rnr_timer;
};

static const struct opts DEF = {
	.sq = 256, .rq = 256, .mtu = IBV_MTU_1024, .access = QP_ACC, .rd_atomic = 16,
	.timeout = 14,          /* 67 ms: 8 expiries = 0.5 s of a starved worker */
	.retry_cnt = 7, .rnr_retry = 7,
	.min_rnr_timer = 12,    /* 0.64 ms */
};

static uint32_t mtu_bytes(enum ibv_mtu m)
{
	return 128u << m;   /* IBV_MTU_256 = 1 ... IBV_MTU_4096 = 5 */
}

static struct ibv_qp *make_qp(struct end *e, const struct opts *o)
{
	struct ibv_qp_init_attr qa = {
		.send_cq = e->cq, .recv_cq = e->cq, .qp_type = IBV_QPT_RC,
		.sq_sig_all = o->sig_all,
		.cap = { .max_send_wr = o->sq, .max_recv_wr = o->rq,
			 .max_send_sge = RNIC_MAX_SGE, .max_recv_sge = RNIC_MAX_SGE,
			 .max_inline_data = RNIC_MAX_INLINE } };
	struct ibv_qp *qp = rnic_create_qp_transport(e->pd, &qa, RNIC_TRANSPORT_ROCE);
	CHECK(qp != NULL, "%s: rnic_create_qp_transport(ROCE): %s", e->name, strerror(errno));
	CHECK(qa.cap.max_send_wr >= o->sq && qa.cap.max_recv_wr >= o->rq &&
	      qa.cap.max_inline_data >= RNIC_MAX_INLINE, "%s: cap written back smaller than "
	      "asked (send_wr %u recv_wr %u inline %u)", e->name, qa.cap.max_send_wr,
	      qa.cap.max_recv_wr, qa.cap.max_inline_data);
	CHECK(qp->state == IBV_QPS_RESET, "%s: new QP in state %d", e->name, qp->state);
	CHECK(rnic_qp_transport(qp) == RNIC_TRANSPORT_ROCE, "%s: transport %d", e->name,
	      rnic_qp_transport(qp));
	return qp;
}

static void end_init(struct end *e, const char *name, struct ibv_context *ctx, uint8_t *buf,
		     const struct opts *o)
{
	e->name = name;
	e->ctx = ctx;
	e->buf = buf;
	e->pd = rnic_alloc_pd(ctx);
	CHECK(e->pd != NULL, "%s: alloc_pd: %s", name, strerror(errno));
	e->cq = rnic_create_cq(ctx, 8192, e, NULL, 0);
	CHECK(e->cq != NULL, "%s: create_cq: %s", name, strerror(errno));
	e->mr = rnic_reg_mr(e->pd, buf, BUF_LEN, MR_ACC);
	CHECK(e->mr != NULL, "%s: reg_mr: %s", name, strerror(errno));
	e->qp = make_qp(e, o);
}

static bool end_fini(struct end *e)
{
	bool ok = true;
	int rc;
#define FREE(call, what) do { if ((rc = (call)) != 0) { ok = false; \
	fprintf(stderr, "  cleanup %s: %s = %d\n", e->name, what, rc); } } while (0)
	for (int i = 0; i < MAXX; i++)
		if (e->xqp[i])
			FREE(rnic_destroy_qp(e->xqp[i]), "destroy_qp(extra)");
	if (e->qp)
		FREE(rnic_destroy_qp(e->qp), "destroy_qp");
	for (int i = 0; i < 4; i++)
		if (e->xmw[i])
			FREE(ibv_dealloc_mw(e->xmw[i]), "dealloc_mw");
	for (int i = 0; i < 4; i++)
		if (e->xmr[i])
			FREE(rnic_dereg_mr(e->xmr[i]), "dereg_mr(extra)");
	if (e->mr)
		FREE(rnic_dereg_mr(e->mr), "dereg_mr");
	if (e->cq) {
		struct ibv_wc wc[64];
		while (ibv_poll_cq(e->cq, 64, wc) > 0)
			;
		FREE(rnic_destroy_cq(e->cq), "destroy_cq");
	}
	if (e->pd)
		FREE(rnic_dealloc_pd(e->pd), "dealloc_pd");
#undef FREE
	memset(e, 0, sizeof(*e));
	return ok;
}

/* --- connecting two QPs out of band ------------------------------------------------ */

static void qp_init(struct ibv_qp *qp, const struct opts *o)
{
	struct ibv_qp_attr at = {
		.qp_state = IBV_QPS_INIT,
		.pkey_index = 0,
		.port_num = 1,
		.qp_access_flags = (unsigned)o->access,
	};
	CHECK_RC(rnic_modify_qp(qp, &at,
				IBV_QP_STATE |
				IBV_QP_PKEY_INDEX |
				IBV_QP_PORT |
				IBV_QP_ACCESS_FLAGS), 0);
	CHECK(qp->state == IBV_QPS_INIT, "QP %u in state %d after INIT", qp->qp_num, qp->state);
}

/* The RTR attributes towards @p peer_qpn on the device @p peer. */
static void rtr_attr(struct ibv_qp_attr *at, struct ibv_context *peer, uint32_t peer_qpn,
		     uint32_t rq_psn, const struct opts *o)
{
	union ibv_gid gid;
	CHECK_RC(rnic_query_gid(peer, 1, 1, &gid), 0);
	static const uint8_t v4mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
	static const uint8_t doc6[4] = { 0x20, 0x01, 0x0d, 0xb8 };
	CHECK(ipv6 ? memcmp(gid.raw, doc6, 4) == 0 : memcmp(gid.raw, v4mapped, 12) == 0,
	      "GID 1 is not %s (%02x%02x:%02x%02x:...)", ipv6 ? "2001:db8::/32" : "IPv4-mapped",
	      gid.raw[0], gid.raw[1], gid.raw[2], gid.raw[3]);
	*at = (struct ibv_qp_attr){
		.qp_state = IBV_QPS_RTR,
		.path_mtu = o->mtu,
		.dest_qp_num = peer_qpn,
		.rq_psn = rq_psn,
		.max_dest_rd_atomic = o->rd_atomic,
		.min_rnr_timer = o->min_rnr_timer,
		.ah_attr = {
			.is_global = 1,
			.port_num = 1,
			.grh = { .dgid = gid, .sgid_index = 1, .hop_limit = 64 },
		},
	};
}

#define RTR_MASK RNIC_QP_RTR_MASK
#define RTS_MASK RNIC_QP_RTS_MASK

static void rts_attr(struct ibv_qp_attr *at, uint32_t sq_psn, const struct opts *o)
{
	*at = (struct ibv_qp_attr){
		.qp_state = IBV_QPS_RTS,
		.timeout = o->timeout,
		.retry_cnt = o->retry_cnt,
		.rnr_retry = o->rnr_retry,
		.sq_psn = sq_psn,
		.max_rd_atomic = o->rd_atomic,
	};
}

/* First PSNs of the next connection: just below the wrap (most transfers
 * cross it), and a spread one for the other direction. */
static void next_psns(uint32_t *x, uint32_t *y)
{
	static uint32_t k;
	k++;
	*x = (PSN_MASK - 3 - 37 * (k % 50)) & PSN_MASK;
	*y = (k * 0x9e3779u) & PSN_MASK;
}

/* Connect @p qx (on @p cx) and @p qy (on @p cy) to each other: both to
 * INIT, both to RTR, both to RTS. */
static void link_qps(struct ibv_qp *qx, struct ibv_context *cx, struct ibv_qp *qy,
		     struct ibv_context *cy, const struct opts *o)
{
	struct ibv_qp_attr at;
	uint32_t px, py;
	next_psns(&px, &py);
	qp_init(qx, o);
	qp_init(qy, o);
	rtr_attr(&at, cy, qy->qp_num, py, o);
	CHECK_RC(rnic_modify_qp(qx, &at, RTR_MASK), 0);
	rtr_attr(&at, cx, qx->qp_num, px, o);
	CHECK_RC(rnic_modify_qp(qy, &at, RTR_MASK), 0);
	CHECK(qx->state == IBV_QPS_RTR && qy->state == IBV_QPS_RTR, "states after RTR: %d %d",
	      qx->state, qy->state);
	rts_attr(&at, px, o);
	CHECK_RC(rnic_modify_qp(qx, &at, RTS_MASK), 0);
	rts_attr(&at, py, o);
	CHECK_RC(rnic_modify_qp(qy, &at, RTS_MASK), 0);
	CHECK(qx->state == IBV_QPS_RTS && qy->state == IBV_QPS_RTS, "states after RTS: %d %d",
	      qx->state, qy->state);
}

static void pair_up(const struct opts *o)
{
	end_init(&a, "A", cur->ctx[0], bufA, o);
	end_init(&b, "B", cur->ctx[1], bufB, o);
	link_qps(a.qp, a.ctx, b.qp, b.ctx, o);
}

/* IBTA: a Send with Immediate is one message and one receive; a Read
 * scatters into as many SGEs as a Send gathers. */
#define CONF_SEND_IMM_SPLIT 0
#define CONF_READ_MAX_SGE RNIC_MAX_SGE
#include "../verbs/conformance.h"

/* --- one transfer of each kind ------------------------------------------------------------ */

enum kind { K_SEND, K_SEND_IMM, K_WRITE, K_WRITE_IMM, K_READ };
static const char *const kind_name[] = { "send", "send_imm", "write", "write_imm", "read" };
static const enum ibv_wr_opcode kind_wr[] = { IBV_WR_SEND, IBV_WR_SEND_WITH_IMM,
	IBV_WR_RDMA_WRITE, IBV_WR_RDMA_WRITE_WITH_IMM, IBV_WR_RDMA_READ };
static const enum ibv_wc_opcode kind_wc[] = { IBV_WC_SEND, IBV_WC_SEND, IBV_WC_RDMA_WRITE,
	IBV_WC_RDMA_WRITE, IBV_WC_RDMA_READ };

/*
 * One message of @p n bytes of kind @p k, requested by @p q from @p r:
 * data from q's buffer at BASE + qoff to r's at BASE + roff (the other
 * way for a Read). Checks the requester's completion, the responder's
 * receive completion where the kind consumes one, every byte, and the
 * guard bytes on both sides of the destination.
 */
static void do_op(enum kind k, struct end *q, struct end *r, uint32_t n, uint32_t qoff,
		  uint32_t roff, uint64_t tag)
{
	bool rd = k == K_READ;
	uint8_t *src = rd ? r->buf + BASE + roff : q->buf + BASE + qoff;
	uint8_t *dst = rd ? q->buf + BASE + qoff : r->buf + BASE + roff;
	uint8_t *rslot = r->buf + 1024;   /* receive of a Write with Immediate */
	char what[96];
	snprintf(what, sizeof(what), "%s %s by %s, %u B @%u/%u", kind_name[k],
		 rd ? "from" : "to", q->name, n, qoff, roff);
	fill(src, n, tag);
	memset(dst - 64, GUARD, (size_t)n + 128);
	if (k == K_SEND || k == K_SEND_IMM)
		recv1(r, tag, dst, n + 64);
	if (k == K_WRITE_IMM) {
		memset(rslot, GUARD, 64);
		recv1(r, tag, rslot, 64);
	}
	struct ibv_sge s = { (uintptr_t)(rd ? dst : src), n, q->mr->lkey };
	struct ibv_send_wr w = { .wr_id = tag, .sg_list = &s, .num_sge = 1, .opcode = kind_wr[k],
				 .send_flags = IBV_SEND_SIGNALED, .imm_data = imm_of(tag) }, *bad;
	w.wr.rdma.remote_addr = (uintptr_t)(rd ? src : dst);
	w.wr.rdma.rkey = r->mr->rkey;
	CHECK_RC(ibv_post_send(q->qp, &w, &bad), 0);
	expect_wc(q->cq, q->qp, tag, kind_wc[k], IBV_WC_SUCCESS, rd ? (long long)n : ANY, what);
	if (k == K_SEND || k == K_SEND_IMM)
		expect_recv(r, r->qp, tag, IBV_WC_RECV, n, k == K_SEND ? NO_IMM : imm_of(tag), what);
	if (k == K_WRITE_IMM)
		expect_recv(r, r->qp, tag, IBV_WC_RECV_RDMA_WITH_IMM, n, imm_of(tag), what);
	CHECK_DATA(dst, src, n, what);
	CHECK_UNTOUCHED(dst - 64, 64, GUARD, what);
	CHECK_UNTOUCHED(dst + n, 64, GUARD, what);
	if (k == K_WRITE_IMM)
		CHECK_UNTOUCHED(rslot, 64, GUARD, "the receive buffer of a Write with Immediate");
	no_stray(q, what);
	no_stray(r, what);
}

static const uint32_t sizes[] = { 0, 1, 255, 256, 257, 4095, 4096, 4097, 65536, MiB };
static const uint32_t offs[][2] = { { 0, 0 }, { 3, 5 }, { 1, 6 }, { 4093, 7 } };

/* Every size both ways with unaligned offsets at one path MTU, plus the
 * sizes around the MTU; 16 MiB once for Writes and Reads (4 MiB at MTU 256
 * through loss). */
static void sweep(enum kind k, enum ibv_mtu mtu)
{
	struct opts o = DEF;
	o.mtu = mtu;
	if (mtu == IBV_MTU_4096)
		use_jumbo();
	pair_up(&o);
	uint32_t m = mtu_bytes(mtu);
	uint32_t list[RTE_DIM(sizes) + 6];
	unsigned n = 0;
	for (unsigned i = 0; i < RTE_DIM(sizes); i++)
		list[n++] = sizes[i];
	list[n++] = m - 1;
	list[n++] = m + 1;
	list[n++] = 2 * m;
	list[n++] = 2 * m + 1;
	list[n++] = 3 * m - 1;
	list[n++] = 17 * m + 3;
	uint64_t tag = 1000 * (uint64_t)(k + 1);
	for (unsigned i = 0; i < n; i++) {
		const uint32_t *o1 = offs[i % RTE_DIM(offs)], *o2 = offs[(i + 1) % RTE_DIM(offs)];
		do_op(k, &b, &a, list[i], o1[0], o1[1], ++tag);
		do_op(k, &a, &b, list[i], o2[0], o2[1], ++tag);
	}
	/* RNIC_TEST_BIG=0 (the sanitizer pass, where 16 MiB through the
	 * injector takes minutes) leaves the 16 MiB transfer out */
	const char *big = getenv("RNIC_TEST_BIG");
	if ((k == K_WRITE || k == K_READ) && !(big != NULL && strcmp(big, "0") == 0)) {
		/* 16 MiB (4 MiB at path MTU 256 through the injector: 65,536
		 * frames with 2.5 % lost took 8 s as Writes and 12.5 s as
		 * Reads, most of the lossy run: go-back-N resent each frame
		 * 8.6 and 28 times, and 95 and 146 losses at a burst's tail
		 * waited the 67 ms local ACK timeout; 16,384 frames still meet
		 * hundreds of losses), and the frames carrying it are at most
		 * path_mtu long */
		uint32_t len = faults && mtu == IBV_MTU_256 ? 4 * MiB : 16 * MiB;
		struct rnic_stack_stats s0, s1;
		struct rnic_stack *data_st = cur->st[k == K_READ ? 0 : 1];
		rnic_stack_stats(data_st, &s0);
		do_op(k, &b, &a, len, 1, 6, ++tag);
		rnic_stack_stats(data_st, &s1);
		uint64_t pkts = s1.tx_pkts - s0.tx_pkts, need = len / m;
		CHECK(pkts >= need, "%u MiB went out in %llu frames: fewer than the %llu that "
		      "path_mtu %u needs", len / MiB, (unsigned long long)pkts,
		      (unsigned long long)need, m);
	}
	check_quiet();
}

#define SWEEP(k, m) static void t_##k##_##m(void) { sweep(k, IBV_MTU_##m); }
SWEEP(K_SEND, 256)
SWEEP(K_SEND, 1024)
SWEEP(K_SEND, 4096)
SWEEP(K_SEND_IMM, 256)
SWEEP(K_SEND_IMM, 1024)
SWEEP(K_SEND_IMM, 4096)
SWEEP(K_WRITE, 256)
SWEEP(K_WRITE, 1024)
SWEEP(K_WRITE, 4096)
SWEEP(K_WRITE_IMM, 256)
SWEEP(K_WRITE_IMM, 1024)
SWEEP(K_WRITE_IMM, 4096)
SWEEP(K_READ, 256)
SWEEP(K_READ, 1024)
SWEEP(K_READ, 4096)

/* --- atomics ----------------------------------------------------------------------------- */

/*
 * Compare-and-swap (a hit and a miss) and fetch-and-add (with a carry
 * across 32 bits and a 64-bit wrap) on an 8-byte word of A's; the word is
 * in host order, as rxe and siw keep it, and so is the returned value.
 */
static void t_atomic_ops(void)
{
	pair_up(&DEF);
	uint64_t *t = (uint64_t *)(void *)(a.buf + BASE + 8 * 37);
	uint64_t *res = (uint64_t *)(void *)(b.buf + BASE + 64);
	memset(a.buf + BASE, GUARD, 1024);
	static const struct {
		bool cas;
		uint64_t before, cmp_add, swap, after;
	} step[] = {
		{ true, 1000, 1000, 77, 77 },                          /* hit */
		{ true, 77, 1000, 5, 77 },                             /* miss */
		{ false, 77, 0xffffffffull, 0, 0x10000004cull },       /* carry */
		{ false, 0x10000004cull, 0xfffffffefffffff4ull, 0, 0x40ull },  /* wrap */
		{ true, 0x40, 0x40, 0x8877665544332211ull, 0x8877665544332211ull },
		{ false, 0x8877665544332211ull, 0, 0, 0x8877665544332211ull },  /* read */
	};
	*t = 1000;
	for (unsigned i = 0; i < RTE_DIM(step); i++) {
		char what[48];
		snprintf(what, sizeof(what), "atomic step %u (%s)", i, step[i].cas ? "cmp-swap" :
			 "fetch-add");
		res[0] = 0x0123012301230123ull;
		res[1] = 0x5555555555555555ull;
		CHECK(*t == step[i].before, "%s: target %#llx before, expected %#llx", what,
		      (unsigned long long)*t, (unsigned long long)step[i].before);
		CHECK_RC(post_atomic(b.qp, b.mr->lkey, 10 + i, res, 8, (uintptr_t)t, a.mr->rkey,
				     step[i].cas, step[i].cmp_add, step[i].swap), 0);
		expect_wc(b.cq, b.qp, 10 + i, step[i].cas ? IBV_WC_COMP_SWAP : IBV_WC_FETCH_ADD,
			  IBV_WC_SUCCESS, 8, what);
		CHECK(res[0] == step[i].before, "%s returned %#llx, expected the old value %#llx",
		      what, (unsigned long long)res[0], (unsigned long long)step[i].before);
		CHECK(res[1] == 0x5555555555555555ull, "%s wrote past its 8-byte result", what);
		CHECK(*t == step[i].after, "%s: target %#llx after, expected %#llx", what,
		      (unsigned long long)*t, (unsigned long long)step[i].after);
	}
	CHECK_UNTOUCHED(a.buf + BASE, 8 * 37, GUARD, "below the atomic target");
	CHECK_UNTOUCHED(a.buf + BASE + 8 * 38, 1024 - 8 * 38, GUARD, "above the atomic target");
	check_quiet();
}

/*
 * Four QPs of B hit one 8-byte word of A's at once: two with windows of
 * fetch-and-add +1, two with compare-and-swap loops (old -> old + 1). Every
 * operation that took effect returned a distinct value, so their returns
 * together are exactly start .. final-1; the final value is the start plus
 * the adds plus the successful swaps; a failed swap saw a value other than
 * its compare; each QP sees the word only grow.
 */
static void t_atomic_4qp(void)
{
	enum { NQ = 4, PER = 300, WIN = 4 };
	struct opts o = DEF;
	o.timeout = 12;
	pair_up(&o);
	struct ibv_qp *bq[NQ] = { b.qp }, *aq[NQ] = { a.qp };
	for (int i = 1; i < NQ; i++) {
		a.xqp[i] = aq[i] = make_qp(&a, &o);
		b.xqp[i] = bq[i] = make_qp(&b, &o);
		link_qps(aq[i], a.ctx, bq[i], b.ctx, &o);
	}
	const uint64_t start = 0x7ffffffffffffe00ull;   /* crosses bit 63 */
	uint64_t *t = (uint64_t *)(void *)(a.buf + BASE + 4096 - 8);
	*t = start;
	uint64_t *res = (uint64_t *)(void *)(b.buf + BASE);   /* [qp][seq] */
	static uint64_t took[NQ * PER];   /* returns of operations that took effect */
	int ntook = 0, posted[NQ] = { 0 }, done[NQ] = { 0 }, cas_ok = 0, faa = 0;
	uint64_t guess[NQ], last[NQ];
	for (int i = 0; i < NQ; i++)
		guess[i] = last[i] = start;
	double t0 = now_s();
	while (done[0] + done[1] + done[2] + done[3] < NQ * PER) {
		for (int i = 0; i < NQ; i++) {
			bool cas = i >= 2;
			int win = cas ? 1 : WIN;
			while (posted[i] < PER && posted[i] - done[i] < win) {
				uint64_t *r = &res[i * PER + posted[i]];
				*r = 0;
				CHECK_RC(post_atomic(bq[i], b.mr->lkey,
						     (uint64_t)i << 32 | (uint64_t)posted[i], r, 8,
						     (uintptr_t)t, a.mr->rkey, cas, cas ? guess[i] : 1,
						     guess[i] + 1), 0);
				posted[i]++;
			}
		}
		struct ibv_wc wc[16];
		int k = ibv_poll_cq(b.cq, 16, wc);
		CHECK(k >= 0, "poll_cq %d", k);
		for (int j = 0; j < k; j++) {
			int i = (int)(wc[j].wr_id >> 32), seq = (int)(uint32_t)wc[j].wr_id;
			bool cas = i >= 2;
			CHECK(i < NQ && wc[j].qp_num == bq[i]->qp_num && seq == done[i] &&
			      wc[j].status == IBV_WC_SUCCESS && wc[j].byte_len == 8 &&
			      (int)wc[j].opcode == (cas ? IBV_WC_COMP_SWAP : IBV_WC_FETCH_ADD),
			      "atomic completion wr_id %#llx qp %u status %d (%s) opcode %d len %u; "
			      "expected QP %d op %d", (unsigned long long)wc[j].wr_id, wc[j].qp_num,
			      wc[j].status, rnic_wc_status_str(wc[j].status), wc[j].opcode,
			      wc[j].byte_len, i, done[i]);
			uint64_t v = res[i * PER + seq];
			CHECK(v - start < (uint64_t)NQ * PER && v >= last[i],
			      "QP %d op %d saw %#llx: outside [start, start + %d) or below the %#llx "
			      "it saw before", i, seq, (unsigned long long)v, NQ * PER,
			      (unsigned long long)last[i]);
			last[i] = v;
			if (!cas || v == guess[i]) {
				took[ntook++] = v;
				last[i] = v + 1;
				if (cas)
					cas_ok++;
				else
					faa++;
			}
			if (cas)
				guess[i] = v == guess[i] ? v + 1 : v;
			done[i]++;
		}
		if (k > 0)
			t0 = now_s();
		else
			CHECK(now_s() - t0 < hang_s, "no atomic completed for %d s (hang guard)",
			      hang_s);
	}
	uint64_t fin = *t;
	printf("    %d fetch-adds, %d of %d compare-swaps took effect; final %#llx\n", faa,
	       cas_ok, 2 * PER, (unsigned long long)fin);
	CHECK(fin == start + (uint64_t)faa + (uint64_t)cas_ok, "final value %#llx, expected "
	      "start + %d adds + %d swaps = %#llx", (unsigned long long)fin, faa, cas_ok,
	      (unsigned long long)(start + (uint64_t)faa + (uint64_t)cas_ok));
	/* the values returned by effective operations: start .. fin-1, once each */
	static bool seen[NQ * PER];
	memset(seen, 0, sizeof(seen));
	for (int j = 0; j < ntook; j++) {
		uint64_t d = took[j] - start;
		CHECK(d < (uint64_t)ntook && !seen[d], "value %#llx returned to two operations "
		      "that both took effect (or out of range)", (unsigned long long)took[j]);
		seen[d] = true;
	}
	check_quiet();
}

/* --- memory windows and Send with Invalidate ------------------------------------------------ */

/*
 * B writes and reads through a type 2 window of A's, then invalidates it
 * with a Send with Invalidate: A's receive reports the rkey; a Write
 * through the dead window then fails at B with IBV_WC_REM_ACCESS_ERR (in
 * the faults run a lost NAK to a responder already in ERR may turn it into
 * IBV_WC_RETRY_EXC_ERR), the Send behind it is flushed and the window's
 * memory is untouched.
 */
static void t_send_with_inv(void)
{
	pair_up(&DEF);
	struct ibv_mw *mw = ibv_alloc_mw(a.pd, IBV_MW_TYPE_2);
	if (mw == NULL && (errno == EOPNOTSUPP || errno == ENOSYS))
		skip_case("ibv_alloc_mw(type 2): %s", strerror(errno));
	CHECK(mw != NULL, "ibv_alloc_mw(type 2): %s", strerror(errno));
	a.xmw[0] = mw;
	uint8_t *win = a.buf + BASE + 8192;
	memset(win - 4096, 0x11, 3 * 4096);
	uint32_t rkey = bind2(mw, win, 4096, IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ, 1);
	CHECK(rkey != a.mr->rkey, "window rkey equals the MR's");
	fill(b.buf + BASE, 4096, 9);
	CHECK_RC(post1(&b, IBV_WR_RDMA_WRITE, 2, b.buf + BASE + 1, 4095, (uintptr_t)win + 1, rkey,
		       0), 0);
	CHECK_RC(post1(&b, IBV_WR_RDMA_READ, 3, b.buf + BASE + 8192, 4096, (uintptr_t)win, rkey,
		       IBV_SEND_SIGNALED), 0);
	expect_wc(b.cq, b.qp, 3, IBV_WC_RDMA_READ, IBV_WC_SUCCESS, 4096, "read via window");
	CHECK_DATA(win + 1, b.buf + BASE + 1, 4095, "write via window");
	CHECK_DATA(b.buf + BASE + 8192, win, 4096, "read via window");
	CHECK_UNTOUCHED(win - 4096, 4096, 0x11, "below the window");
	CHECK_UNTOUCHED(win + 4096, 4096, 0x11, "above the window");
	recv1(&a, 4, a.buf, 16);
	fill(b.buf, 4, 4);
	struct ibv_sge s = { (uintptr_t)b.buf, 4, b.mr->lkey };
	struct ibv_send_wr sw = { .wr_id = 5, .sg_list = &s, .num_sge = 1,
				  .opcode = IBV_WR_SEND_WITH_INV, .send_flags = IBV_SEND_SIGNALED,
				  .invalidate_rkey = rkey }, *bad;
	CHECK_RC(ibv_post_send(b.qp, &sw, &bad), 0);
	expect_wc(b.cq, b.qp, 5, IBV_WC_SEND, IBV_WC_SUCCESS, ANY, "send with invalidate");
	struct ibv_wc wc = expect_recv(&a, a.qp, 4, IBV_WC_RECV, 4, NO_IMM, "recv");
	CHECK((wc.wc_flags & IBV_WC_WITH_INV) && wc.invalidated_rkey == rkey,
	      "recv wc_flags %#x invalidated_rkey %#x, expected WITH_INV %#x", wc.wc_flags,
	      wc.invalidated_rkey, rkey);
	CHECK_DATA(a.buf, b.buf, 4, "send with invalidate");
	/* the window is dead */
	memset(win, 0, 4096);
	recv1(&b, 900, b.buf + 64, 64);
	CHECK_RC(post1(&b, IBV_WR_RDMA_WRITE, 6, b.buf + BASE, 64, (uintptr_t)win, rkey,
		       IBV_SEND_SIGNALED), 0);
	CHECK_RC(post1(&b, IBV_WR_SEND, 7, b.buf + BASE, 8, 0, 0, IBV_SEND_SIGNALED), 0);
	struct ibv_wc w[3];
	wait_wc(b.cq, w, 3, "B after the write through the dead window");
	qsort(w, 3, sizeof(w[0]), cmp_wc);
	bool ok6 = w[0].status == IBV_WC_REM_ACCESS_ERR ||
		   (faults && w[0].status == IBV_WC_RETRY_EXC_ERR);
	CHECK(w[0].wr_id == 6 && ok6, "write through the invalidated window: wr_id %llu status "
	      "%d (%s), expected IBV_WC_REM_ACCESS_ERR", (unsigned long long)w[0].wr_id,
	      w[0].status, rnic_wc_status_str(w[0].status));
	if (w[0].status != IBV_WC_REM_ACCESS_ERR)
		printf("    (the NAK was lost: the write ended with %s)\n",
		       rnic_wc_status_str(w[0].status));
	CHECK(w[1].wr_id == 7 && w[1].status == IBV_WC_WR_FLUSH_ERR, "the send behind it: "
	      "wr_id %llu status %d (%s), expected flushed", (unsigned long long)w[1].wr_id,
	      w[1].status, rnic_wc_status_str(w[1].status));
	CHECK(w[2].wr_id == 900 && w[2].status == IBV_WC_WR_FLUSH_ERR, "B's receive: wr_id %llu "
	      "status %d (%s), expected flushed", (unsigned long long)w[2].wr_id, w[2].status,
	      rnic_wc_status_str(w[2].status));
	CHECK(b.qp->state == IBV_QPS_ERR, "B's QP in state %d, expected ERR", b.qp->state);
	CHECK_UNTOUCHED(win, 4096, 0, "the invalidated window");
	CHECK_UNTOUCHED(win + 4096, 4096, 0x11, "above the window");
	usleep(20000);
	no_stray(&b, "after the flush");
}

/* --- receiver not ready ------------------------------------------------------------------- */

/* A Send posted before the receive: RNR NAKs (rnr_retry 7 = forever) until
 * A posts it 200 ms later, then it lands once. */
static void t_rnr_wait(void)
{
	struct opts o = DEF;
	o.min_rnr_timer = 14;   /* 1.28 ms */
	pair_up(&o);
	fill(b.buf + BASE, 1000, 3);
	memset(a.buf + BASE, GUARD, 1100);
	CHECK_RC(post1(&b, IBV_WR_SEND, 1, b.buf + BASE, 1000, 0, 0, IBV_SEND_SIGNALED), 0);
	usleep(200000);
	no_stray(&b, "before the receive is posted");
	no_stray(&a, "before the receive is posted");
	CHECK(b.qp->state == IBV_QPS_RTS, "B's QP in state %d while waiting", b.qp->state);
	recv1(&a, 2, a.buf + BASE, 1050);
	expect_wc(b.cq, b.qp, 1, IBV_WC_SEND, IBV_WC_SUCCESS, ANY, "send after RNR");
	expect_recv(&a, a.qp, 2, IBV_WC_RECV, 1000, NO_IMM, "late receive");
	CHECK_DATA(a.buf + BASE, b.buf + BASE, 1000, "send after RNR");
	CHECK_UNTOUCHED(a.buf + BASE + 1000, 100, GUARD, "past the send");
	do_op(K_SEND, &b, &a, 77, 1, 2, 3);   /* the QPs go on */
	check_quiet();
}

/* rnr_retry 0: the first RNR NAK ends the Send with
 * IBV_WC_RNR_RETRY_EXC_ERR; the next one is flushed; nothing reaches A. */
static void t_rnr_exceeded(void)
{
	struct opts o = DEF;
	o.rnr_retry = 0;
	pair_up(&o);
	CHECK_RC(post1(&b, IBV_WR_SEND, 1, b.buf + BASE, 100, 0, 0, IBV_SEND_SIGNALED), 0);
	CHECK_RC(post1(&b, IBV_WR_SEND, 2, b.buf + BASE, 100, 0, 0, IBV_SEND_SIGNALED), 0);
	expect_wc(b.cq, b.qp, 1, ANY, IBV_WC_RNR_RETRY_EXC_ERR, ANY, "send with rnr_retry 0");
	expect_wc(b.cq, b.qp, 2, ANY, IBV_WC_WR_FLUSH_ERR, ANY, "send behind it");
	CHECK(b.qp->state == IBV_QPS_ERR, "B's QP in state %d, expected ERR", b.qp->state);
	memset(a.buf + BASE, GUARD, 256);
	recv1(&a, 3, a.buf + BASE, 256);
	usleep(50000);
	no_stray(&a, "after the RNR error");
	no_stray(&b, "after the RNR error");
	CHECK_UNTOUCHED(a.buf + BASE, 256, GUARD, "A's late receive buffer");
}

/* --- remote errors ------------------------------------------------------------------------ */

/*
 * RoCE's part of the conformance suite's refused remote access: A answers
 * with a NAK (Remote Access Error; Invalid Request for a Send longer than
 * the receive), B's refused request completes with that error and the two
 * behind it are flushed. A's second receive is flushed, or fails with a
 * local length error when the Send too long took it.
 */
static void conf_refused(enum rfault k, const struct ibv_wc *req, const struct ibv_wc *arecv)
{
	int want = k == S_LONG ? IBV_WC_REM_INV_REQ_ERR : IBV_WC_REM_ACCESS_ERR;
	CHECK((int)req[0].status == want, "B's refused request: status %d (%s), expected %s",
	      req[0].status, rnic_wc_status_str(req[0].status),
	      rnic_wc_status_str((enum ibv_wc_status)want));
	for (int i = 1; i < 3; i++)
		CHECK(req[i].status == IBV_WC_WR_FLUSH_ERR, "B's request %d behind the refused "
		      "one: status %d (%s), expected flushed", i, req[i].status,
		      rnic_wc_status_str(req[i].status));
	want = k == S_LONG ? IBV_WC_LOC_LEN_ERR : IBV_WC_WR_FLUSH_ERR;
	CHECK(arecv != NULL && (int)arecv->status == want, "A's second receive: expected %s",
	      rnic_wc_status_str((enum ibv_wc_status)want));
	printf("    A's QP is in state %d after the NAK\n", a.qp->state);
}

static void t_atomic_no_right(void) { remote_fault(A_RIGHT); }
static void t_atomic_oob(void) { remote_fault(A_OOB); }


/* The peer QP is destroyed: with timeout 10 (4.2 ms) and retry_cnt 2 the
 * next Send ends with IBV_WC_RETRY_EXC_ERR, the one behind it flushed. */
static void t_peer_destroyed(void)
{
	struct opts o = DEF;
	o.timeout = 10;
	o.retry_cnt = 2;
	pair_up(&o);
	do_op(K_SEND, &b, &a, 100, 0, 0, 1);
	CHECK_RC(rnic_destroy_qp(a.qp), 0);
	a.qp = NULL;
	double t0 = now_s();
	CHECK_RC(post1(&b, IBV_WR_SEND, 2, b.buf + BASE, 100, 0, 0, IBV_SEND_SIGNALED), 0);
	CHECK_RC(post1(&b, IBV_WR_RDMA_WRITE, 3, b.buf + BASE, 100, (uintptr_t)a.buf + BASE,
		       a.mr->rkey, IBV_SEND_SIGNALED), 0);
	expect_wc(b.cq, b.qp, 2, ANY, IBV_WC_RETRY_EXC_ERR, ANY, "send to a destroyed QP");
	printf("    retry exceeded after %.1f ms\n", (now_s() - t0) * 1e3);
	expect_wc(b.cq, b.qp, 3, ANY, IBV_WC_WR_FLUSH_ERR, ANY, "the write behind it");
	CHECK(b.qp->state == IBV_QPS_ERR, "B's QP in state %d, expected ERR", b.qp->state);
	usleep(20000);
	no_stray(&b, "after the error");
}

/* Destroying a QP and a CQ while the other side is busy: B streams 64
 * Writes of 64 KiB and 64 Reads at A; A destroys its QP in the middle. B's
 * work completes exactly once, in order: successes, then one
 * RETRY_EXC_ERR, then flushes; A's CQ refuses destruction while a QP uses
 * it and is destroyed with completions still queued once it does not. */
static void t_destroy_busy(void)
{
	enum { N = 128, LEN = 64 * 1024 };
	struct opts o = DEF;
	o.timeout = 10;
	o.retry_cnt = 2;
	o.sq = 256;
	pair_up(&o);
	fill(b.buf + BASE, LEN, 9);
	for (int i = 0; i < N; i++) {
		bool rd = i & 1;
		CHECK_RC(post1(&b, rd ? IBV_WR_RDMA_READ : IBV_WR_RDMA_WRITE, 1000 + (uint64_t)i,
			       b.buf + BASE + (rd ? LEN : 0), LEN, (uintptr_t)a.buf + BASE,
			       a.mr->rkey, IBV_SEND_SIGNALED), 0);
	}
	/* A's QP goes while B's stream is in flight, after its first 8 */
	struct ibv_wc wc;
	int ok = 0, stage = 0;   /* 0 successes, 1 the error seen, flushes after */
	for (; ok < 8; ok++) {
		wait_wc(b.cq, &wc, 1, "B's stream");
		CHECK(wc.wr_id == 1000 + (uint64_t)ok && wc.status == IBV_WC_SUCCESS,
		      "completion %d: wr_id %llu status %d", ok, (unsigned long long)wc.wr_id,
		      wc.status);
	}
	recv1(&a, 1, a.buf + BASE + 2 * LEN, 64);
	CHECK_RC(rnic_destroy_cq(a.cq), -EBUSY);
	CHECK_RC(rnic_destroy_qp(a.qp), 0);
	a.qp = NULL;
	for (int i = ok; i < N; i++) {
		wait_wc(b.cq, &wc, 1, "B's stream");
		CHECK(wc.wr_id == 1000 + (uint64_t)i, "completion %d: wr_id %llu", i,
		      (unsigned long long)wc.wr_id);
		if (stage == 0 && wc.status == IBV_WC_SUCCESS) {
			ok++;
			continue;
		}
		if (stage == 0) {
			CHECK(wc.status == IBV_WC_RETRY_EXC_ERR, "completion %d: status %d, "
			      "expected SUCCESS or RETRY_EXC_ERR", i, wc.status);
			stage = 1;
			continue;
		}
		CHECK(wc.status == IBV_WC_WR_FLUSH_ERR, "completion %d after the error: status %d",
		      i, wc.status);
	}
	printf("    %d of %d completed before the QP went, then the error and %d flushes\n",
	       ok, N, stage ? N - ok - 1 : 0);
	CHECK(stage == 1 || ok == N, "no error and not all successful");
	CHECK_RC(rnic_destroy_cq(a.cq), 0);   /* the flushed receive still queued in it */
	a.cq = NULL;
	usleep(20000);
	no_stray(&b, "after the error");
}

/* modify_qp to ERR flushes the posted receives and what is posted after. */
static void t_modify_err_flush(void)
{
	pair_up(&DEF);
	for (int i = 0; i < 5; i++)
		recv1(&a, 10 + (uint64_t)i, a.buf + BASE + i * 64, 64);
	struct ibv_qp_attr at = { .qp_state = IBV_QPS_ERR };
	CHECK_RC(rnic_modify_qp(a.qp, &at, IBV_QP_STATE), 0);
	CHECK(a.qp->state == IBV_QPS_ERR, "state %d after modify to ERR", a.qp->state);
	for (int i = 0; i < 5; i++)
		expect_wc(a.cq, a.qp, 10 + (uint64_t)i, ANY, IBV_WC_WR_FLUSH_ERR, ANY,
			  "flushed receive");
	int rc = post1(&a, IBV_WR_SEND, 20, a.buf, 8, 0, 0, IBV_SEND_SIGNALED);
	if (rc == 0)
		expect_wc(a.cq, a.qp, 20, ANY, IBV_WC_WR_FLUSH_ERR, ANY, "send posted in ERR");
	struct ibv_recv_wr *rbad;
	struct ibv_sge s = { (uintptr_t)a.buf, 8, a.mr->lkey };
	struct ibv_recv_wr rw = { .wr_id = 21, .sg_list = &s, .num_sge = 1 };
	if (ibv_post_recv(a.qp, &rw, &rbad) == 0)
		expect_wc(a.cq, a.qp, 21, ANY, IBV_WC_WR_FLUSH_ERR, ANY, "receive posted in ERR");
	/* back to RESET and INIT is allowed */
	at.qp_state = IBV_QPS_RESET;
	CHECK_RC(rnic_modify_qp(a.qp, &at, IBV_QP_STATE), 0);
	struct opts o = DEF;
	qp_init(a.qp, &o);
	usleep(20000);
	no_stray(&a, "after the flush");
}

/* --- bad input ----------------------------------------------------------------------------- */

/* RoCE's part of bad_post: a new QP takes no Send before RTS and no
 * receive in RESET. */
static void conf_bad_post_states(void)
{
	struct ibv_send_wr *bad;
	struct ibv_recv_wr *rbad;
	uint8_t *m = b.buf + BASE;
	struct ibv_qp *q = b.xqp[0] = make_qp(&b, &DEF);
	struct ibv_sge s0 = { (uintptr_t)m, 8, b.mr->lkey };
	struct ibv_send_wr w0 = { .wr_id = 1, .sg_list = &s0, .num_sge = 1, .opcode = IBV_WR_SEND };
	struct ibv_recv_wr r0 = { .wr_id = 1, .sg_list = &s0, .num_sge = 1 };
	bad = NULL;
	CHECK(ibv_post_send(q, &w0, &bad) != 0 && bad == &w0, "send accepted in RESET");
	rbad = NULL;
	CHECK(ibv_post_recv(q, &r0, &rbad) != 0 && rbad == &r0, "receive accepted in RESET");
	qp_init(q, &DEF);
	bad = NULL;
	CHECK(ibv_post_send(q, &w0, &bad) != 0 && bad == &w0, "send accepted in INIT");
	struct ibv_qp_attr at;
	rtr_attr(&at, a.ctx, a.qp->qp_num, 0, &DEF);
	CHECK_RC(rnic_modify_qp(q, &at, RTR_MASK), 0);
	bad = NULL;
	CHECK(ibv_post_send(q, &w0, &bad) != 0 && bad == &w0, "send accepted in RTR");
	CHECK_RC(rnic_destroy_qp(q), 0);
	b.xqp[0] = NULL;
}

/*
 * Atomics that libibverbs does not allow: a remote address not 8-byte
 * aligned, a local SGE of 4 or 16 bytes, no SGE. Each is refused at post
 * time (EINVAL, bad_wr set) or completes with an error status; either
 * way the target word is untouched. Each runs on a fresh pair of QPs, as
 * an error completion leaves the QP in ERR.
 */
static void t_bad_atomic(void)
{
	static const struct {
		const char *what;
		uint32_t off, len;
		int nsge;
	} v[] = {
		{ "remote address 4 bytes off", 4, 8, 1 },
		{ "remote address 1 byte off", 1, 8, 1 },
		{ "local SGE of 4 bytes", 0, 4, 1 },
		{ "local SGE of 16 bytes", 0, 16, 1 },
		{ "no SGE", 0, 8, 0 },
	};
	for (unsigned i = 0; i < RTE_DIM(v); i++) {
		pair_up(&DEF);
		uint8_t *tw = a.buf + BASE + 64;
		memset(tw - 64, 0x5a, 192);
		uint64_t *res = (uint64_t *)(void *)(b.buf + BASE);
		memset(res, 0x33, 32);
		struct ibv_sge s = { (uintptr_t)res, v[i].len, b.mr->lkey };
		struct ibv_send_wr w = { .wr_id = 1, .sg_list = &s, .num_sge = v[i].nsge,
					 .opcode = i % 2 ? IBV_WR_ATOMIC_CMP_AND_SWP :
							   IBV_WR_ATOMIC_FETCH_AND_ADD,
					 .send_flags = IBV_SEND_SIGNALED }, *bad = NULL;
		w.wr.atomic.remote_addr = (uintptr_t)tw + v[i].off;
		w.wr.atomic.rkey = a.mr->rkey;
		w.wr.atomic.compare_add = 0x5a5a5a5a5a5a5a5aull;
		w.wr.atomic.swap = 1;
		int rc = ibv_post_send(b.qp, &w, &bad);
		if (rc != 0) {
			CHECK(rc == EINVAL && bad == &w, "%s: post_send = %d, bad_wr %p; expected "
			      "EINVAL naming the WR", v[i].what, rc, (void *)bad);
			printf("    %s: refused with EINVAL\n", v[i].what);
		} else {
			struct ibv_wc wc = expect_wc(b.cq, b.qp, 1, ANY, ANY, ANY, v[i].what);
			CHECK(wc.status != IBV_WC_SUCCESS, "%s: the atomic completed successfully",
			      v[i].what);
			printf("    %s: completed with %s\n", v[i].what, rnic_wc_status_str(wc.status));
		}
		CHECK_UNTOUCHED(tw - 64, 192, 0x5a, v[i].what);
		CHECK_UNTOUCHED((uint8_t *)res + 8, 24, 0x33, v[i].what);
		usleep(10000);
		no_stray(&b, v[i].what);
		no_stray(&a, v[i].what);
		CHECK(end_fini(&b) && end_fini(&a), "%s: objects could not be freed", v[i].what);
	}
}

/* Transitions libibverbs refuses (EINVAL, the QP's state unchanged), then
 * the right ones still work. */
static void t_bad_modify(void)
{
	end_init(&a, "A", cur->ctx[0], bufA, &DEF);
	end_init(&b, "B", cur->ctx[1], bufB, &DEF);
	struct ibv_qp_attr at;
	rtr_attr(&at, a.ctx, a.qp->qp_num, 0x10, &DEF);
	CHECK_RC(rnic_modify_qp(b.qp, &at, RTR_MASK), -EINVAL);     /* RESET -> RTR */
	CHECK(b.qp->state == IBV_QPS_RESET, "state %d after a refused RESET->RTR", b.qp->state);
	qp_init(b.qp, &DEF);
	qp_init(a.qp, &DEF);
	CHECK_RC(rnic_modify_qp(b.qp, &at, RTR_MASK & ~IBV_QP_AV), -EINVAL);
	CHECK_RC(rnic_modify_qp(b.qp, &at, RTR_MASK & ~IBV_QP_DEST_QPN), -EINVAL);
	CHECK_RC(rnic_modify_qp(b.qp, &at, RTR_MASK & ~IBV_QP_PATH_MTU), -EINVAL);
	at.path_mtu = (enum ibv_mtu)7;
	CHECK_RC(rnic_modify_qp(b.qp, &at, RTR_MASK), -EINVAL);
	/* a path MTU whose packets would not fit the 1500-byte port */
	at.path_mtu = IBV_MTU_2048;
	CHECK_RC(rnic_modify_qp(b.qp, &at, RTR_MASK), -EINVAL);
	at.path_mtu = IBV_MTU_4096;
	CHECK_RC(rnic_modify_qp(b.qp, &at, RTR_MASK), -EINVAL);
	at.path_mtu = DEF.mtu;
	at.ah_attr.grh.sgid_index = 9;
	CHECK_RC(rnic_modify_qp(b.qp, &at, RTR_MASK), -EINVAL);
	at.ah_attr.grh.sgid_index = 1;
	at.ah_attr.port_num = 2;
	CHECK_RC(rnic_modify_qp(b.qp, &at, RTR_MASK), -EINVAL);
	at.ah_attr.port_num = 1;
	CHECK(b.qp->state == IBV_QPS_INIT, "state %d after refused INIT->RTR", b.qp->state);
	struct ibv_qp_attr rts;
	rts_attr(&rts, 0x20, &DEF);
	CHECK_RC(rnic_modify_qp(b.qp, &rts, RTS_MASK), -EINVAL);    /* INIT -> RTS */
	CHECK_RC(rnic_modify_qp(b.qp, &at, RTR_MASK), 0);
	CHECK_RC(rnic_modify_qp(b.qp, &rts, RTS_MASK & ~IBV_QP_SQ_PSN), -EINVAL);
	CHECK(b.qp->state == IBV_QPS_RTR, "state %d after a refused RTR->RTS", b.qp->state);
	CHECK_RC(rnic_modify_qp(b.qp, &rts, RTS_MASK), 0);
	/* A by the book, with the PSNs B uses */
	rtr_attr(&at, b.ctx, b.qp->qp_num, 0x20, &DEF);
	CHECK_RC(rnic_modify_qp(a.qp, &at, RTR_MASK), 0);
	rts_attr(&rts, 0x10, &DEF);
	CHECK_RC(rnic_modify_qp(a.qp, &rts, RTS_MASK), 0);
	do_op(K_SEND, &b, &a, 3000, 0, 0, 1);
	do_op(K_READ, &a, &b, 3000, 0, 0, 2);
	check_quiet();
}

/* rnic_query_qp reports what modify_qp set. */
static void t_query_qp(void)
{
	struct opts o = DEF;
	o.mtu = IBV_MTU_256;
	o.timeout = 15;
	o.retry_cnt = 5;
	o.rnr_retry = 6;
	o.rd_atomic = 8;
	o.min_rnr_timer = 9;
	o.access = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
	pair_up(&o);
	struct ibv_qp_attr at;
	struct ibv_qp_init_attr ia;
	CHECK_RC(rnic_query_qp(b.qp, &at, RTR_MASK | RTS_MASK | IBV_QP_ACCESS_FLAGS, &ia), 0);
	union ibv_gid gid;
	CHECK_RC(rnic_query_gid(a.ctx, 1, 1, &gid), 0);
	CHECK(at.qp_state == IBV_QPS_RTS, "qp_state %d", at.qp_state);
	CHECK(at.path_mtu == IBV_MTU_256, "path_mtu %d, set IBV_MTU_256", at.path_mtu);
	CHECK(at.dest_qp_num == a.qp->qp_num, "dest_qp_num %u, set %u", at.dest_qp_num,
	      a.qp->qp_num);
	CHECK(at.timeout == 15 && at.retry_cnt == 5 && at.rnr_retry == 6,
	      "timeout %u retry_cnt %u rnr_retry %u, set 15 5 6", at.timeout, at.retry_cnt,
	      at.rnr_retry);
	CHECK(at.max_rd_atomic == 8 && at.max_dest_rd_atomic == 8 && at.min_rnr_timer == 9,
	      "max_rd_atomic %u max_dest_rd_atomic %u min_rnr_timer %u, set 8 8 9",
	      at.max_rd_atomic, at.max_dest_rd_atomic, at.min_rnr_timer);
	CHECK(at.qp_access_flags == (unsigned)o.access, "qp_access_flags %#x, set %#x",
	      at.qp_access_flags, o.access);
	CHECK(at.ah_attr.is_global && memcmp(at.ah_attr.grh.dgid.raw, gid.raw, 16) == 0,
	      "ah_attr: is_global %u, dgid not the peer's", at.ah_attr.is_global);
	CHECK(ia.qp_type == IBV_QPT_RC && ia.send_cq == b.cq, "init attr");
	do_op(K_WRITE, &b, &a, 1000, 0, 0, 1);
}

/* Telemetry by query (issue 21): /rnic/qp,QPN,STACK gives the QP's
 * PSNs as rnic_query_qp() has them, its peer, queues and counters. */
static void t_telemetry_qp(void)
{
	char out[16384], cmd[64];
	pair_up(&DEF);
	do_op(K_WRITE, &b, &a, 1000, 0, 0, 1);
	struct ibv_qp_attr at;
	struct ibv_qp_init_attr ia;
	CHECK_RC(rnic_query_qp(b.qp, &at, RTR_MASK | RTS_MASK, &ia), 0);
	char key[32];
	unsigned sb = cur->st[1]->id;
	snprintf(cmd, sizeof(cmd), "/rnic/qp,%u,%u", b.qp->qp_num, sb);
	snprintf(key, sizeof(key), "\"stack%u\":{", sb);
	CHECK(tel_query(cmd, out, sizeof(out)) > 0, "%s: no reply", cmd);
	CHECK(strstr(out, key) != NULL && strstr(out, "},\"stack") == NULL, "%s: %s", cmd, out);
	CHECK(tel_number(out, "qpn") == b.qp->qp_num && tel_number(out, "state") == IBV_QPS_RTS,
	      "%s: %s", cmd, out);
	CHECK(strstr(out, "\"transport\":\"roce\"") != NULL, "%s: %s", cmd, out);
	CHECK(tel_number(out, "sq_psn") == at.sq_psn && tel_number(out, "rq_psn") == at.rq_psn,
	      "%s: PSNs %u/%u by rnic_query_qp: %s", cmd, at.sq_psn, at.rq_psn, out);
	CHECK(tel_number(out, "dest_qp_num") == a.qp->qp_num, "%s: %s", cmd, out);
	CHECK(tel_number(out, "ops_out") >= 1 && tel_number(out, "sq_posted") == 0, "%s: %s",
	      cmd, out);
	snprintf(cmd, sizeof(cmd), "/rnic/qps,0,1,%u", sb);
	CHECK(tel_query(cmd, out, sizeof(out)) > 0, "%s: no reply", cmd);
	CHECK(tel_number(out, "count") == 1 && tel_number(out, "total") >= 1 &&
	      strstr(out, key) != NULL && strstr(out, "},\"stack") == NULL, "%s: %s", cmd, out);
}

/* --- the fault injector did something -------------------------------------------------- */

/* The lossy run: the injector did inject every kind of fault. */
static void t_faults_seen(void) { conf_faults_seen(net_std.st[0], net_std.st[1]); }

/* --- the runner ---------------------------------------------------------------------------- */

/* UD: datagrams with an address handle; the receive starts with the GRH
 * (20 zero bytes and the sender's IPv4 header); a wrong Q_Key is dropped
 * and counted, nothing completes at the receiver. */
static struct ibv_qp *make_ud(struct end *e, uint32_t qkey)
{
	struct ibv_qp_init_attr qa = {
		.send_cq = e->cq, .recv_cq = e->cq, .qp_type = IBV_QPT_UD,
		.cap = { .max_send_wr = 64, .max_recv_wr = 64, .max_send_sge = 1,
			 .max_recv_sge = 2 } };
	struct ibv_qp *qp = rnic_create_qp_transport(e->pd, &qa, RNIC_TRANSPORT_ROCE);
	CHECK(qp != NULL, "%s: UD QP: %s", e->name, strerror(errno));
	struct ibv_qp_attr at = { .qp_state = IBV_QPS_INIT, .pkey_index = 0, .port_num = 1,
				  .qkey = qkey };
	CHECK_RC(rnic_modify_qp(qp, &at, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
				IBV_QP_QKEY), 0);
	at = (struct ibv_qp_attr){ .qp_state = IBV_QPS_RTR };
	CHECK_RC(rnic_modify_qp(qp, &at, IBV_QP_STATE), 0);
	at = (struct ibv_qp_attr){ .qp_state = IBV_QPS_RTS, .sq_psn = 0x123 };
	CHECK_RC(rnic_modify_qp(qp, &at, IBV_QP_STATE | IBV_QP_SQ_PSN), 0);
	return qp;
}

static void t_ud(void)
{
	enum { N = 6, SLOT = 2048 };
	static const uint32_t len[N] = { 0, 1, 100, 1000, 1023, 1024 };
	pair_up(&DEF);
	struct ibv_qp *ua = a.xqp[1] = make_ud(&a, 0x11111111);
	struct ibv_qp *ub = b.xqp[1] = make_ud(&b, 0x11111111);
	union ibv_gid ga;
	CHECK_RC(rnic_query_gid(a.ctx, 1, 1, &ga), 0);
	struct ibv_ah_attr aha = { .is_global = 1, .port_num = 1,
				   .grh = { .dgid = ga, .sgid_index = 1, .hop_limit = 64 } };
	struct ibv_ah *ah = rnic_create_ah(b.pd, &aha);
	CHECK(ah != NULL, "create_ah: %s", strerror(errno));
	aha.grh.sgid_index = 0;   /* fe80:: has no RoCEv2 path */
	CHECK(rnic_create_ah(b.pd, &aha) == NULL && errno == EINVAL, "AH on GID 0 accepted");
	uint64_t bad0 = 0, bad1 = 0;
	struct rnic_stack *sa = rnic_device_stack(a.ctx);
	CHECK_RC(rnic_roce_counter(sa, "ud_bad_qkey", &bad0), 0);
	/* a Q_Key that does not match: dropped, counted, nothing completes */
	struct ibv_sge s0 = { (uintptr_t)b.buf + BASE, 8, b.mr->lkey };
	struct ibv_recv_wr rw0 = { .wr_id = 500, .sg_list = &(struct ibv_sge){
		(uintptr_t)a.buf + BASE, SLOT, a.mr->lkey }, .num_sge = 1 }, *badr;
	CHECK_RC(ibv_post_recv(ua, &rw0, &badr), 0);
	struct ibv_send_wr w0 = { .wr_id = 600, .sg_list = &s0, .num_sge = 1,
				  .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
				  .wr.ud = { .ah = ah, .remote_qpn = ua->qp_num,
					     .remote_qkey = 0x22222222 } }, *bads;
	CHECK_RC(ibv_post_send(ub, &w0, &bads), 0);
	expect_wc(b.cq, ub, 600, IBV_WC_SEND, IBV_WC_SUCCESS, ANY, "UD send, wrong Q_Key");
	double t0 = now_s();
	while (bad1 == bad0 && now_s() - t0 < hang_s)
		CHECK_RC(rnic_roce_counter(sa, "ud_bad_qkey", &bad1), 0);
	CHECK(bad1 == bad0 + 1, "ud_bad_qkey %llu -> %llu", (unsigned long long)bad0,
	      (unsigned long long)bad1);
	/* the receive posted above takes the first good datagram */
	for (int i = 1; i < N; i++) {
		struct ibv_recv_wr rw = { .wr_id = 500 + (uint64_t)i, .sg_list = &(struct ibv_sge){
			(uintptr_t)a.buf + BASE + (uint64_t)i * SLOT, SLOT, a.mr->lkey }, .num_sge = 1 };
		CHECK_RC(ibv_post_recv(ua, &rw, &badr), 0);
	}
	for (int i = 0; i < N; i++) {
		fill(b.buf + BASE + (uint64_t)i * SLOT, len[i], 70 + (uint64_t)i);
		struct ibv_sge s = { (uintptr_t)b.buf + BASE + (uint64_t)i * SLOT, len[i], b.mr->lkey };
		struct ibv_send_wr w = { .wr_id = 600 + (uint64_t)i, .sg_list = &s, .num_sge = 1,
					 .opcode = i & 1 ? IBV_WR_SEND_WITH_IMM : IBV_WR_SEND,
					 .imm_data = htonl(0xab00 + (uint32_t)i),
					 .send_flags = IBV_SEND_SIGNALED,
					 .wr.ud = { .ah = ah, .remote_qpn = ua->qp_num,
						    .remote_qkey = 0x11111111 } };
		CHECK_RC(ibv_post_send(ub, &w, &bads), 0);
		expect_wc(b.cq, ub, 600 + (uint64_t)i, IBV_WC_SEND, IBV_WC_SUCCESS, ANY, "UD send");
		struct ibv_wc wc = expect_wc(a.cq, ua, 500 + (uint64_t)i, IBV_WC_RECV, IBV_WC_SUCCESS,
					     (int)(40 + len[i]), "UD receive");
		CHECK(wc.src_qp == ub->qp_num && (wc.wc_flags & IBV_WC_GRH),
		      "UD receive: src_qp %u (want %u), wc_flags %#x", wc.src_qp, ub->qp_num,
		      wc.wc_flags);
		CHECK(!(i & 1) || ((wc.wc_flags & IBV_WC_WITH_IMM) &&
				   wc.imm_data == htonl(0xab00 + (uint32_t)i)), "UD immediate data");
		const uint8_t *g = a.buf + BASE + (uint64_t)i * SLOT;
		if (ipv6) {
			/* the GRH is the IPv6 header: version 6, next header UDP,
			 * SGID B's address, DGID A's */
			union ibv_gid gb;
			CHECK_RC(rnic_query_gid(b.ctx, 1, 1, &gb), 0);
			CHECK((g[0] >> 4) == 6 && g[6] == 17 && memcmp(g + 8, gb.raw, 16) == 0 &&
			      memcmp(g + 24, ga.raw, 16) == 0,
			      "UD receive: the GRH is not B's IPv6 header to A");
		} else {
			static const uint8_t zero[20];
			uint32_t src;
			memcpy(&src, g + 20 + 12, 4);
			CHECK(memcmp(g, zero, 20) == 0 && g[20] == 0x45 && ntohl(src) == B_IP,
			      "UD receive: the GRH is not 20 zero bytes and B's IPv4 header");
		}
		CHECK_DATA(g + 40, b.buf + BASE + (uint64_t)i * SLOT, len[i], "UD payload");
	}
	rnic_destroy_ah(ah);
	check_quiet();
}

static const struct tcase cases[] = {
	{ "ud", t_ud, false },
	{ "destroy_busy", t_destroy_busy, false },
	{ "send_mtu256", t_K_SEND_256, true },
	{ "send_mtu1024", t_K_SEND_1024, true },
	{ "send_mtu4096", t_K_SEND_4096, true },
	{ "send_imm_mtu256", t_K_SEND_IMM_256, true },
	{ "send_imm_mtu1024", t_K_SEND_IMM_1024, true },
	{ "send_imm_mtu4096", t_K_SEND_IMM_4096, true },
	{ "write_mtu256", t_K_WRITE_256, true },
	{ "write_mtu1024", t_K_WRITE_1024, true },
	{ "write_mtu4096", t_K_WRITE_4096, true },
	{ "write_imm_mtu256", t_K_WRITE_IMM_256, true },
	{ "write_imm_mtu1024", t_K_WRITE_IMM_1024, true },
	{ "write_imm_mtu4096", t_K_WRITE_IMM_4096, true },
	{ "read_mtu256", t_K_READ_256, true },
	{ "read_mtu1024", t_K_READ_1024, true },
	{ "read_mtu4096", t_K_READ_4096, true },
	CONFORMANCE_CASES(false),
	{ "atomic_ops", t_atomic_ops, true },
	{ "atomic_4qp", t_atomic_4qp, true },
	{ "send_with_inv", t_send_with_inv, true },
	{ "rnr_wait", t_rnr_wait, true },
	{ "rnr_retry_exceeded", t_rnr_exceeded, false },
	{ "remote_atomic_no_right", t_atomic_no_right, false },
	{ "remote_atomic_out_of_bounds", t_atomic_oob, false },
	{ "peer_destroyed", t_peer_destroyed, false },
	{ "modify_err_flush", t_modify_err_flush, false },
	{ "bad_atomic", t_bad_atomic, false },
	{ "bad_modify", t_bad_modify, false },
	{ "query_qp", t_query_qp, false },
	{ "telemetry_qp", t_telemetry_qp, false },
};

static void conf_case_begin(void)
{
	cur = &net_std;
	hang_s = faults ? 30 : 20;
}

static bool conf_case_end(void)
{
	bool ok = true;
	if (b.name)
		ok &= end_fini(&b);
	if (a.name)
		ok &= end_fini(&a);
	return ok;
}

/* Can this library make a RoCE QP at all? false only for EOPNOTSUPP. */
static bool roce_supported(struct ibv_context *ctx, char *why, size_t len)
{
	struct ibv_pd *pd = rnic_alloc_pd(ctx);
	struct ibv_cq *cq = rnic_create_cq(ctx, 16, NULL, NULL, 0);
	struct ibv_qp_init_attr qa = { .send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
				       .cap = { .max_send_wr = 1, .max_recv_wr = 1,
						.max_send_sge = 1, .max_recv_sge = 1 } };
	struct ibv_qp *qp = pd && cq ? rnic_create_qp_transport(pd, &qa, RNIC_TRANSPORT_ROCE) :
			    NULL;
	int err = qp ? 0 : errno;
	if (qp)
		rnic_destroy_qp(qp);
	if (cq)
		rnic_destroy_cq(cq);
	if (pd)
		rnic_dealloc_pd(pd);
	snprintf(why, len, "rnic_create_qp_transport(pd, &attr, RNIC_TRANSPORT_ROCE) fails with "
		 "%s: RoCEv2 RC QPs are not implemented yet (issue 5)", strerror(err));
	return err != EOPNOTSUPP;
}

int main(int argc, char **argv)
{
	int link = conf_link(argc, argv);
	const char *filter = argc > 2 ? argv[2] : NULL;
	if (link < 0)
		return 2;
	faults = link == 1;
	ipv6 = getenv("RNIC_TEST_IPV6") && strcmp(getenv("RNIC_TEST_IPV6"), "0") != 0;
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (ipv6)
		printf("IPv6 only: 2001:db8:2::1/::2 (1500), 2001:db8:64::1/::2 (9000)\n");
	if (getenv("RNIC_FAULT_SEED"))
		fault_seed = strtoull(getenv("RNIC_FAULT_SEED"), NULL, 0);
	struct rnic_config c;
	rnic_config_init(&c);
	snprintf(c.eal_args[c.n_eal_args++], 128, "--no-huge");
	snprintf(c.eal_args[c.n_eal_args++], 128, "-m");
	snprintf(c.eal_args[c.n_eal_args++], 128, "1024");
	snprintf(c.eal_args[c.n_eal_args++], 128, "--log-level=lib.*:warning");
	if (rnic_eal_init(argv[0], &c, 4) != 0) {
		fprintf(stderr, "EAL init failed\n");
		return 1;
	}
	if (rnic_ring_pair(net_std.ring, 1) != 0 || rnic_ring_pair(net_jumbo.ring, 1) != 0) {
		fprintf(stderr, "ring pairs failed\n");
		return 1;
	}
	if (net_up(&net_std) != 0) {
		fprintf(stderr, "stacks: %s\n", net_std.why);
		return 1;
	}
	char why[256];
	if (!roce_supported(net_std.ctx[0], why, sizeof(why))) {
		printf("SKIP roce verbs: %s\n", why);
		net_down(&net_std);
		return 77;
	}
	if (faults)
		printf("faults on both ports' TX: drop 2%% dup 1%% reorder 2%% corrupt 0.5%%, "
		       "seeds %#llx/%#llx\n", (unsigned long long)fault_seed,
		       (unsigned long long)fault_seed + 1);
	bufA = aligned_alloc(4096, BUF_LEN);
	bufB = aligned_alloc(4096, BUF_LEN);
	if (!bufA || !bufB) {
		fprintf(stderr, "buffers\n");
		return 1;
	}
	double t0 = now_s();
	for (unsigned i = 0; i < RTE_DIM(cases); i++)
		if (case_selected(cases[i].name, filter) && (cases[i].lossy || !faults))
			conf_run_case(cases[i].name, cases[i].fn);
	if (faults && filter == NULL)
		conf_run_case("faults_injected", t_faults_seen);
	net_down(&net_jumbo);
	net_down(&net_std);
	free(bufA);
	free(bufB);
	return conf_summary("roce verbs", faults, now_s() - t0);
}
