/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Integration tests of the iWARP verbs layer: two rnic stacks (A passive,
 * B active) wired by net_ring, driven only through the public API
 * (rnic_verbs.h, rnic_cm.h and the inline calls of <infiniband/verbs.h>).
 * The verbs conformance suite (../verbs/conformance.h, the cases RoCE
 * passes the same way) runs here on iWARP next to the iWARP-only cases
 * (the CM and MPA, Terminate, close paths, the stream switch, ...).
 *
 *   test_verbs clean [FILTER]   a clean link
 *   test_verbs lossy [FILTER]   every case again through the fault injector
 *                               (drop, dup, reorder, corrupt on both ports'
 *                               transmit side, i.e. both directions)
 *
 * Each case runs on its own connection(s) and prints PASS, FAIL (with the
 * line and what was seen) or SKIP (with the missing feature). FILTER runs
 * only the cases whose name contains it (or one of its comma-separated
 * parts). RNIC_FAULT_SEED overrides the
 * injector's seed. The waits have generous hang guards only; nothing is
 * asserted on time.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
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
#include "rnic/rnic_cm.h"
#include "iwarp/iwarp.h"
#include "rnic/rnic_tcp.h"
#include "rnic/rnic_verbs.h"
#include "engine/stack.h"   /* a stack's id, for telemetry's parameter */
#include "iwarp/terminate.h"   /* Terminate causes, for their counters */
#include "rdma/stag.h"         /* whether an STag is still valid */
#include "../../unit/engine/tel_client.h"

#define A_IP 0xc0000201u
#define B_IP 0xc0000202u

/* RNIC_TEST_IPV6=1: the stacks have IPv6 addresses only (2001:db8::1 and
 * ::2, besides their link-local ones) and every connection goes over IPv6:
 * the whole suite over TCP/IPv6 and neighbour discovery. */
static bool ipv6;

/* Stack A's (@p b false) or B's address in the family under test. */
static struct rnic_addr addr_of(bool b)
{
	if (!ipv6)
		return rnic_addr_v4(b ? B_IP : A_IP);
	uint8_t a[16] = { 0x20, 0x01, 0x0d, 0xb8, [15] = 1 };
	a[15] = (uint8_t)(b ? 2 : 1);
	return rnic_addr_v6(a);
}

static int cm_connect_a(struct rnic_cm_id *id, struct ibv_qp *qp, uint16_t port,
			const struct rnic_cm_conn_param *p)
{
	struct rnic_addr a = addr_of(false);
	return rnic_cm_connect_addr(id, qp, &a, port, p);
}

static int tcp_connect_a(struct rnic_worker *w, uint16_t port, const struct rnic_tcp_ops *ops,
			 void *ctx, struct rnic_tcp_conn **out)
{
	struct rnic_addr a = addr_of(false);
	return rnic_tcp_connect_addr(w, &a, port, ops, ctx, out);
}

/* The event names stack A's (@p b false) or B's address as its peer. */
static bool ev_peer_is(const struct rnic_cm_event *ev, bool b)
{
	struct rnic_addr want = addr_of(b);
	return rnic_addr_eq(&ev->peer, &want) &&
	       ev->peer_ip == (ipv6 ? 0 : (b ? B_IP : A_IP));
}
#define KiB 1024u
#define MiB (1024u * 1024u)
#define BUF_LEN (16 * MiB + 512 * KiB)
#define HANG_S hang_s
#define ACC_ALL (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | \
		 IBV_ACCESS_REMOTE_ATOMIC | \
		 IBV_ACCESS_MW_BIND)
#define GUARD 0xee
#define MAXX 16

/* --- the harness ------------------------------------------------------------ */

static jmp_buf case_jmp;
static const char *case_name;
static bool strict;            /* RNIC_TEST_STRICT=1: known bugs fail */
static const char *known_bug;  /* set around checks that a known library bug breaks */
static int hang_s = 60;        /* hang guard of one wait, never an assertion on time */

/* Library bugs found by these tests (see the report in the commit log). A
 * check made while known_bug names one reports SKIP with the bug, not FAIL,
 * unless RNIC_TEST_STRICT=1; every other check of the case still runs. */
#define BUG_COOKIE_ACK "a TCP handshake whose last ACK is lost never completes on the " \
	"passive side when the active side sends nothing (SYN cookies keep no state to " \
	"retransmit the SYN-ACK from; issue 3)"

static int n_pass, n_fail, n_skip;
static char skipped[2048], failed[2048];
enum { R_PASS = 0, R_FAIL = 1, R_SKIP = 2 };

#define CHECK_KNOWN_BUG_FILE "test_verbs.c"

#include "../common/check.h"

/* --- the two ends ------------------------------------------------------------- */

static struct rnic_stack *SA, *SB;
static struct ibv_context *CA, *CB;
static uint8_t *bufA, *bufB;
static bool faults;
static uint16_t next_port = 9100;

struct end {
	const char *name;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_comp_channel *ch;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	uint8_t *buf;
	struct rnic_cm_channel *cm;
	struct rnic_cm_id *id;
	uint8_t ird, ord;                /* negotiated, from ESTABLISHED */
	unsigned unacked_events;         /* CQ events taken, not yet acked */
	/* extras some cases make; the cleanup frees whatever is set */
	struct ibv_qp *xqp[MAXX];
	struct rnic_cm_id *xid[MAXX];
	struct ibv_mr *xmr[4];
	struct ibv_mw *xmw[4];
	struct ibv_srq *srq;
};
static struct end a, b;
static struct rnic_cm_id *listener;

struct opts {
	uint32_t sq, rq;
	int access;
	int sig_all;
	uint8_t ird, ord;          /* B's connect; A accepts with the same */
	uint8_t a_ird, a_ord;      /* A's accept when set */
	bool no_crc, p2p;
	uint8_t rtr;               /* B's connect: RTR types offered (0: all) */
};
static const struct opts DEF = { .sq = 256, .rq = 256, .access = ACC_ALL, .ird = 16, .ord = 16 };

static struct ibv_qp *make_qp(struct end *e, const struct opts *o, struct ibv_srq *srq)
{
	struct ibv_qp_init_attr qa = {
		.send_cq = e->cq, .recv_cq = e->cq, .srq = srq, .qp_type = IBV_QPT_RC,
		.sq_sig_all = o->sig_all,
		.cap = { .max_send_wr = o->sq, .max_recv_wr = srq ? 0 : o->rq,
			 .max_send_sge = RNIC_MAX_SGE, .max_recv_sge = srq ? 0 : RNIC_MAX_SGE,
			 .max_inline_data = RNIC_MAX_INLINE } };
	struct ibv_qp *qp = rnic_create_qp(e->pd, &qa);
	CHECK(qp != NULL, "%s: rnic_create_qp: %s", e->name, strerror(errno));
	CHECK(qa.cap.max_send_wr >= o->sq && qa.cap.max_inline_data >= RNIC_MAX_INLINE,
	      "%s: cap written back smaller than asked (send_wr %u inline %u)", e->name,
	      qa.cap.max_send_wr, qa.cap.max_inline_data);
	CHECK(qp->state == IBV_QPS_RESET, "%s: new QP in state %d", e->name, qp->state);
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
	e->ch = rnic_create_comp_channel(ctx);
	CHECK(e->ch != NULL, "%s: create_comp_channel: %s", name, strerror(errno));
	e->cq = rnic_create_cq(ctx, 8192, e, e->ch, 0);
	CHECK(e->cq != NULL, "%s: create_cq: %s", name, strerror(errno));
	e->qp = make_qp(e, o, NULL);
	e->mr = rnic_reg_mr(e->pd, buf, BUF_LEN, o->access);
	CHECK(e->mr != NULL, "%s: reg_mr: %s", name, strerror(errno));
	CHECK(e->mr->lkey == e->mr->rkey, "%s: lkey %#x != rkey %#x", name, e->mr->lkey,
	      e->mr->rkey);
	e->cm = rnic_cm_create_channel(ctx);
	CHECK(e->cm != NULL, "%s: cm_create_channel: %s", name, strerror(errno));
}

static bool end_fini(struct end *e)
{
	bool ok = true;
	int rc;
#define FREE(call, what) do { if ((rc = (call)) != 0) { ok = false; \
	fprintf(stderr, "  cleanup %s: %s = %d\n", e->name, what, rc); } } while (0)
	for (int i = 0; i < MAXX; i++)
		if (e->xid[i])
			FREE(rnic_cm_destroy_id(e->xid[i]), "cm_destroy_id(extra)");
	if (e->id)
		FREE(rnic_cm_destroy_id(e->id), "cm_destroy_id");
	for (int i = 0; i < MAXX; i++)
		if (e->xqp[i])
			FREE(rnic_destroy_qp(e->xqp[i]), "destroy_qp(extra)");
	if (e->qp)
		FREE(rnic_destroy_qp(e->qp), "destroy_qp");
	if (e->srq)
		FREE(rnic_destroy_srq(e->srq), "destroy_srq");
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
		if (e->unacked_events)
			rnic_ack_cq_events(e->cq, e->unacked_events);
		FREE(rnic_destroy_cq(e->cq), "destroy_cq");
	}
	if (e->ch)
		FREE(rnic_destroy_comp_channel(e->ch), "destroy_comp_channel");
	if (e->pd)
		FREE(rnic_dealloc_pd(e->pd), "dealloc_pd");
	if (e->cm)
		FREE(rnic_cm_destroy_channel(e->cm), "cm_destroy_channel");
#undef FREE
	memset(e, 0, sizeof(*e));
	return ok;
}

/* --- CM helpers ------------------------------------------------------------------ */

/* A CM wait ran into its hang guard: say what each side's TCP and MPA
 * counters and the other channel show, so that a rare failure explains
 * itself. */
static void cm_hang_report(struct rnic_cm_channel *ch)
{
	const struct { const char *name; struct rnic_stack *st; struct rnic_cm_channel *cm; }
		side[2] = { { "A", SA, a.cm }, { "B", SB, b.cm } };
	for (int i = 0; i < 2; i++) {
		struct rnic_tcp_stats t;
		struct rnic_iw_stats w;
		rnic_tcp_stats(side[i].st, &t);
		rnic_iw_stats(side[i].st, &w);
		fprintf(stderr, "  %s: tcp syns %llu cookies %llu valid %llu invalid %llu "
			"established %llu rst in %llu out %llu rtos %llu retry_timeouts %llu "
			"user_timeouts %llu backlog_full %llu no_listener %llu tcbs %llu; mpa "
			"timeouts active %llu passive %llu\n", side[i].name,
			(unsigned long long)t.syns,
			(unsigned long long)t.cookies_sent, (unsigned long long)t.cookie_valid,
			(unsigned long long)t.cookie_invalid, (unsigned long long)t.established,
			(unsigned long long)t.resets_in, (unsigned long long)t.resets_out,
			(unsigned long long)t.rtos, (unsigned long long)t.retry_timeouts,
			(unsigned long long)t.user_timeouts, (unsigned long long)t.backlog_full, (unsigned long long)t.no_listener,
			(unsigned long long)t.tcbs, (unsigned long long)w.mpa_timeouts_active,
			(unsigned long long)w.mpa_timeouts_passive);
		struct rnic_cm_event ev;
		while (side[i].cm != NULL && side[i].cm != ch &&
		       rnic_cm_get_event(side[i].cm, &ev, 0) == 0)
			fprintf(stderr, "  %s: pending CM event %s (status %d)\n", side[i].name,
				rnic_cm_event_str(ev.type), ev.status);
	}
}

static void get_event(struct rnic_cm_channel *ch, struct rnic_cm_event *ev, const char *who)
{
	int rc = rnic_cm_get_event(ch, ev, HANG_S * 1000);
	if (rc != 0)
		cm_hang_report(ch);
	CHECK(rc == 0, "%s: no CM event in %d s (rc %d) (hang guard)", who, HANG_S, rc);
}

static void expect_event(struct rnic_cm_channel *ch, enum rnic_cm_event_type t,
			 struct rnic_cm_event *out, const char *who)
{
	struct rnic_cm_event ev;
	get_event(ch, &ev, who);
	CHECK(ev.type == t, "%s: CM event %s (status %d), expected %s", who,
	      rnic_cm_event_str(ev.type), ev.status, rnic_cm_event_str(t));
	if (out)
		*out = ev;
}

static void listen_new(uint16_t *port)
{
	*port = next_port++;
	CHECK_RC(rnic_cm_create_id(a.cm, &a, &listener), 0);
	CHECK_RC(rnic_cm_listen(listener, *port, 64), 0);
}

static void params(struct rnic_cm_conn_param *p, const struct opts *o, bool passive)
{
	memset(p, 0, sizeof(*p));
	p->responder_resources = passive && o->a_ird ? o->a_ird : o->ird;
	p->initiator_depth = passive && o->a_ord ? o->a_ord : o->ord;
	p->no_crc = o->no_crc;
	p->p2p = o->p2p;
	p->rtr_types = passive ? 0 : o->rtr;
}

/* B connects b.qp to A's listener on @p port; A accepts with a.qp. */
static void connect_ab(uint16_t port, const struct opts *o)
{
	struct rnic_cm_event ev;
	struct rnic_cm_conn_param p;
	params(&p, o, false);
	CHECK_RC(rnic_cm_create_id(b.cm, &b, &b.id), 0);
	int rc = cm_connect_a(b.id, b.qp, port, &p);
	CHECK(rc == 0, "rnic_cm_connect = %d", rc);
	get_event(a.cm, &ev, "A");
	CHECK(ev.type == RNIC_CM_EVENT_CONNECT_REQUEST, "A: %s (status %d), expected CONNECT_REQUEST",
	      rnic_cm_event_str(ev.type), ev.status);
	CHECK(ev.listen_id == listener, "CONNECT_REQUEST: listen_id %p, listener %p",
	      (void *)ev.listen_id, (void *)listener);
	a.id = ev.id;
	params(&p, o, true);
	rc = rnic_cm_accept(a.id, a.qp, &p);
	CHECK(rc == 0, "rnic_cm_accept = %d", rc);
	get_event(a.cm, &ev, "A");
	CHECK(ev.type == RNIC_CM_EVENT_ESTABLISHED, "A: %s (status %d), expected ESTABLISHED",
	      rnic_cm_event_str(ev.type), ev.status);
	a.ird = ev.ird;
	a.ord = ev.ord;
	get_event(b.cm, &ev, "B");
	CHECK(ev.type == RNIC_CM_EVENT_ESTABLISHED, "B: %s (status %d), expected ESTABLISHED",
	      rnic_cm_event_str(ev.type), ev.status);
	CHECK(ev.id == b.id, "B: ESTABLISHED for id %p, expected %p", (void *)ev.id, (void *)b.id);
	b.ird = ev.ird;
	b.ord = ev.ord;
	CHECK(a.qp->state == IBV_QPS_RTS && b.qp->state == IBV_QPS_RTS,
	      "QP states after ESTABLISHED: A %d B %d", a.qp->state, b.qp->state);
}

static void pair_up(const struct opts *o)
{
	uint16_t port;
	end_init(&a, "A", CA, bufA, o);
	end_init(&b, "B", CB, bufB, o);
	listen_new(&port);
	connect_ab(port, o);
}

#define BASE 4096u   /* data starts here in the buffers; guards below */

/* RFC 7306: a Send with Immediate is the Send, then an Immediate Data
 * message with a receive of its own; a Read names one sink (RFC 5040), so
 * it scatters into one SGE, as siw's. */
#define CONF_SEND_IMM_SPLIT 1
#define CONF_READ_MAX_SGE 1
#include "../verbs/conformance.h"

/* --- data-path helpers ------------------------------------------------------------ */

static void do_send(struct end *s, struct end *r, uint32_t n, uint32_t soff, uint32_t doff,
		    uint64_t tag)
{
	uint8_t *src = s->buf + BASE + soff, *dst = r->buf + BASE + doff;
	char what[64];
	snprintf(what, sizeof(what), "%s->%s send %u @%u/%u", s->name, r->name, n, soff, doff);
	fill(src, n, tag);
	memset(dst - 64, GUARD, (size_t)n + 128);
	recv1(r, tag, dst, n + 64);
	CHECK_RC(post1(s, IBV_WR_SEND, tag, src, n, 0, 0, IBV_SEND_SIGNALED), 0);
	expect_wc(s->cq, s->qp, tag, IBV_WC_SEND, IBV_WC_SUCCESS, ANY, what);
	expect_wc(r->cq, r->qp, tag, IBV_WC_RECV, IBV_WC_SUCCESS, n, what);
	CHECK_DATA(dst, src, n, what);
	CHECK_UNTOUCHED(dst - 64, 64, GUARD, what);
	CHECK_UNTOUCHED(dst + n, 64, GUARD, what);
}

static void do_write(struct end *s, struct end *r, uint32_t n, uint32_t soff, uint32_t doff,
		     uint64_t tag)
{
	uint8_t *src = s->buf + BASE + soff, *dst = r->buf + BASE + doff;
	char what[64];
	snprintf(what, sizeof(what), "%s->%s write %u @%u/%u", s->name, r->name, n, soff, doff);
	fill(src, n, tag);
	memset(dst - 64, GUARD, (size_t)n + 128);
	CHECK_RC(post1(s, IBV_WR_RDMA_WRITE, tag, src, n, (uintptr_t)dst, r->mr->rkey,
		       IBV_SEND_SIGNALED), 0);
	expect_wc(s->cq, s->qp, tag, IBV_WC_RDMA_WRITE, IBV_WC_SUCCESS, ANY, what);
	fence_send(s, r, tag + 1);
	CHECK_DATA(dst, src, n, what);
	CHECK_UNTOUCHED(dst - 64, 64, GUARD, what);
	CHECK_UNTOUCHED(dst + n, 64, GUARD, what);
}

/* @p q reads from @p r. */
static void do_read(struct end *q, struct end *r, uint32_t n, uint32_t soff, uint32_t doff,
		    uint64_t tag)
{
	uint8_t *src = r->buf + BASE + soff, *dst = q->buf + BASE + doff;
	char what[64];
	snprintf(what, sizeof(what), "%s<-%s read %u @%u/%u", q->name, r->name, n, soff, doff);
	fill(src, n, tag);
	memset(dst - 64, GUARD, (size_t)n + 128);
	CHECK_RC(post1(q, IBV_WR_RDMA_READ, tag, dst, n, (uintptr_t)src, r->mr->rkey,
		       IBV_SEND_SIGNALED), 0);
	expect_wc(q->cq, q->qp, tag, IBV_WC_RDMA_READ, IBV_WC_SUCCESS, n, what);
	CHECK_DATA(dst, src, n, what);
	CHECK_UNTOUCHED(dst - 64, 64, GUARD, what);
	CHECK_UNTOUCHED(dst + n, 64, GUARD, what);
}

static const uint32_t sizes[] = { 0, 1, 7, 4096, 65536, MiB, 16 * MiB };
static const uint32_t offs[][2] = { { 0, 0 }, { 3, 5 }, { 1, 6 } };

/* --- connection manager ------------------------------------------------------------- */

static void t_cm_connect(void)
{
	struct rnic_cm_event ev;
	uint8_t cpd[RNIC_CM_PDATA_MAX + 1], apd[300];
	uint16_t port;
	end_init(&a, "A", CA, bufA, &DEF);
	end_init(&b, "B", CB, bufB, &DEF);
	listen_new(&port);
	fill(cpd, sizeof(cpd), 1);
	fill(apd, sizeof(apd), 2);
	CHECK_RC(rnic_cm_create_id(b.cm, &b, &b.id), 0);
	CHECK(rnic_cm_id_context(b.id) == &b, "id context");
	struct rnic_cm_conn_param p = { .private_data = cpd, .private_data_len = RNIC_CM_PDATA_MAX + 1,
					.responder_resources = 16, .initiator_depth = 16 };
	CHECK_RC(cm_connect_a(b.id, b.qp, port, &p), -EINVAL);   /* 513 bytes */
	CHECK(b.qp->state != IBV_QPS_RTR && b.qp->state != IBV_QPS_RTS, "refused connect left "
	      "the QP in state %d", b.qp->state);
	p.private_data_len = 400;   /* RNIC_CM_PDATA_MAX itself: cm_pdata_max */
	CHECK_RC(cm_connect_a(b.id, b.qp, port, &p), 0);
	/* the channel's fd turns readable */
	struct pollfd pfd = { .fd = rnic_cm_channel_fd(a.cm), .events = POLLIN };
	CHECK(pfd.fd >= 0, "cm channel fd %d", pfd.fd);
	CHECK_RC(poll(&pfd, 1, HANG_S * 1000), 1);
	expect_event(a.cm, RNIC_CM_EVENT_CONNECT_REQUEST, &ev, "A");
	CHECK(ev.listen_id == listener, "listen_id");
	CHECK(ev.id != NULL && ev.id != listener, "new id");
	CHECK(ev_peer_is(&ev, true), "peer_ip %#x", ev.peer_ip);
	CHECK(ev.private_data_len == 400, "connect pdata len %u", ev.private_data_len);
	CHECK_DATA(ev.private_data, cpd, 400, "connect private data");
	a.id = ev.id;
	CHECK(rnic_cm_id_qp(a.id) == NULL, "QP before accept");
	struct rnic_cm_conn_param r = { .private_data = apd, .private_data_len = sizeof(apd),
					.responder_resources = 16, .initiator_depth = 16 };
	CHECK_RC(rnic_cm_accept(a.id, a.qp, &r), 0);
	expect_event(a.cm, RNIC_CM_EVENT_ESTABLISHED, &ev, "A");
	CHECK(ev.id == a.id, "A: ESTABLISHED on %p, expected %p", (void *)ev.id, (void *)a.id);
	CHECK_RC(ev.status, 0);
	pfd.fd = rnic_cm_channel_fd(b.cm);
	CHECK_RC(poll(&pfd, 1, HANG_S * 1000), 1);
	expect_event(b.cm, RNIC_CM_EVENT_ESTABLISHED, &ev, "B");
	CHECK(ev.id == b.id, "B: ESTABLISHED id");
	CHECK_RC(ev.status, 0);
	CHECK(ev_peer_is(&ev, false) && ev.peer_port == port, "B: peer %#x:%u", ev.peer_ip,
	      ev.peer_port);
	CHECK(ev.private_data_len == sizeof(apd), "accept pdata len %u", ev.private_data_len);
	CHECK_DATA(ev.private_data, apd, sizeof(apd), "accept private data");
	CHECK(ev.ord >= 1 && ev.ord <= 16 && ev.ird >= 1 && ev.ird <= 16, "B: ird %u ord %u",
	      ev.ird, ev.ord);
	CHECK(a.qp->state == IBV_QPS_RTS && b.qp->state == IBV_QPS_RTS, "states %d %d",
	      a.qp->state, b.qp->state);
	CHECK(rnic_cm_id_qp(a.id) == a.qp && rnic_cm_id_qp(b.id) == b.qp, "id QPs");
	CHECK_RC(rnic_destroy_qp(b.qp), -EBUSY);   /* held by the id */
	/* and it carries data both ways */
	do_send(&b, &a, 100, 0, 0, 10);
	do_send(&a, &b, 100, 0, 0, 20);
}

/* The MPA limit itself: 512 bytes in the request, the reply and a reject. */
static void t_cm_pdata_max(void)
{
	struct rnic_cm_event ev;
	uint8_t pd[RNIC_CM_PDATA_MAX];
	uint16_t port;
	end_init(&a, "A", CA, bufA, &DEF);
	end_init(&b, "B", CB, bufB, &DEF);
	listen_new(&port);
	for (int round = 0; round < 2; round++) {
		fill(pd, sizeof(pd), 10 + round);
		struct rnic_cm_conn_param p = { .private_data = pd, .private_data_len = sizeof(pd),
						.responder_resources = 4, .initiator_depth = 4 };
		CHECK_RC(rnic_cm_create_id(b.cm, &b, &b.id), 0);
		CHECK_RC(cm_connect_a(b.id, b.qp, port, &p), 0);
		expect_event(a.cm, RNIC_CM_EVENT_CONNECT_REQUEST, &ev, "A");
		CHECK(ev.private_data_len == sizeof(pd), "request pdata len %u", ev.private_data_len);
		CHECK_DATA(ev.private_data, pd, sizeof(pd), "request private data");
		fill(pd, sizeof(pd), 20 + round);
		if (round == 0) {   /* rejected with 512 bytes */
			CHECK_RC(rnic_cm_reject(ev.id, pd, sizeof(pd)), 0);
			CHECK_RC(rnic_cm_destroy_id(ev.id), 0);
			expect_event(b.cm, RNIC_CM_EVENT_REJECTED, &ev, "B");
			CHECK(ev.private_data_len == sizeof(pd), "reject pdata len %u",
			      ev.private_data_len);
			CHECK_DATA(ev.private_data, pd, sizeof(pd), "reject private data");
			CHECK_RC(rnic_cm_destroy_id(b.id), 0);
			b.id = NULL;
			struct ibv_qp_attr at = { .qp_state = IBV_QPS_RESET };
			CHECK_RC(rnic_modify_qp(b.qp, &at, IBV_QP_STATE), 0);
			continue;
		}
		a.id = ev.id;
		CHECK_RC(rnic_cm_accept(a.id, a.qp, &p), 0);
		expect_event(a.cm, RNIC_CM_EVENT_ESTABLISHED, NULL, "A");
		expect_event(b.cm, RNIC_CM_EVENT_ESTABLISHED, &ev, "B");
		CHECK(ev.private_data_len == sizeof(pd), "reply pdata len %u", ev.private_data_len);
		CHECK_DATA(ev.private_data, pd, sizeof(pd), "reply private data");
	}
}

static void t_cm_reject(void)
{
	struct rnic_cm_event ev;
	uint16_t port;
	uint8_t rpd[200];
	end_init(&a, "A", CA, bufA, &DEF);
	end_init(&b, "B", CB, bufB, &DEF);
	listen_new(&port);
	fill(rpd, sizeof(rpd), 3);
	CHECK_RC(rnic_cm_create_id(b.cm, &b, &b.id), 0);
	CHECK_RC(cm_connect_a(b.id, b.qp, port, NULL), 0);
	expect_event(a.cm, RNIC_CM_EVENT_CONNECT_REQUEST, &ev, "A");
	CHECK_RC(rnic_cm_reject(ev.id, rpd, sizeof(rpd)), 0);
	CHECK_RC(rnic_cm_destroy_id(ev.id), 0);
	expect_event(b.cm, RNIC_CM_EVENT_REJECTED, &ev, "B");
	CHECK(ev.id == b.id, "REJECTED id");
	CHECK(ev.private_data_len == sizeof(rpd), "reject pdata len %u", ev.private_data_len);
	CHECK_DATA(ev.private_data, rpd, sizeof(rpd), "reject private data");
	CHECK(b.qp->state != IBV_QPS_RTS, "B's QP in RTS after a reject");
	/* the QP can be reset and connected again, this time accepted */
	CHECK_RC(rnic_cm_destroy_id(b.id), 0);
	b.id = NULL;
	struct ibv_qp_attr at = { .qp_state = IBV_QPS_RESET };
	CHECK_RC(rnic_modify_qp(b.qp, &at, IBV_QP_STATE), 0);
	connect_ab(port, &DEF);
	do_send(&b, &a, 64, 0, 0, 30);
}

static void t_cm_unreachable(void)
{
	struct rnic_cm_event ev;
	end_init(&a, "A", CA, bufA, &DEF);
	end_init(&b, "B", CB, bufB, &DEF);
	CHECK_RC(rnic_cm_create_id(b.cm, &b, &b.id), 0);
	CHECK_RC(cm_connect_a(b.id, b.qp, next_port++, NULL), 0);
	get_event(b.cm, &ev, "B");
	CHECK(ev.type == RNIC_CM_EVENT_UNREACHABLE || ev.type == RNIC_CM_EVENT_CONNECT_ERROR,
	      "B: %s (status %d), expected UNREACHABLE", rnic_cm_event_str(ev.type), ev.status);
	CHECK(ev.type == RNIC_CM_EVENT_UNREACHABLE, "B: CONNECT_ERROR where the port has no "
	      "listener (status %d), expected UNREACHABLE", ev.status);
	CHECK(ev.status < 0, "UNREACHABLE with status %d", ev.status);
	CHECK(b.qp->state != IBV_QPS_RTS, "QP in RTS");
	/* nothing shows up at A */
	CHECK_RC(rnic_cm_get_event(a.cm, &ev, 0), -EAGAIN);
}

/* Eight connections to one listener at once, each Send lands on its own QP. */
static void t_cm_many(void)
{
	enum { N = 8 };
	struct rnic_cm_event ev;
	uint16_t port;
	end_init(&a, "A", CA, bufA, &DEF);
	end_init(&b, "B", CB, bufB, &DEF);
	listen_new(&port);
	for (int i = 0; i < N; i++) {
		a.xqp[i] = make_qp(&a, &DEF, NULL);
		b.xqp[i] = make_qp(&b, &DEF, NULL);
	}
	for (int i = 0; i < N; i++) {
		uint8_t pd[4] = { 'c', (uint8_t)i, 0, 0 };
		struct rnic_cm_conn_param p = { .private_data = pd, .private_data_len = 4,
						.responder_resources = 4, .initiator_depth = 4 };
		CHECK_RC(rnic_cm_create_id(b.cm, (void *)(uintptr_t)(i + 1), &b.xid[i]), 0);
		CHECK_RC(cm_connect_a(b.xid[i], b.xqp[i], port, &p), 0);
	}
	int est_a = 0, est_b = 0, req = 0;
	while (req < N || est_a < N) {
		get_event(a.cm, &ev, "A");
		if (ev.type == RNIC_CM_EVENT_CONNECT_REQUEST) {
			CHECK(ev.private_data_len == 4 && ev.private_data[0] == 'c' &&
			      ev.private_data[1] < N, "request pdata");
			int i = ev.private_data[1];
			CHECK(a.xid[i] == NULL, "two requests for connection %d", i);
			a.xid[i] = ev.id;
			rnic_cm_id_set_context(ev.id, (void *)(uintptr_t)(i + 1));
			CHECK_RC(rnic_cm_accept(ev.id, a.xqp[i], NULL), 0);
			req++;
		} else {
			CHECK(ev.type == RNIC_CM_EVENT_ESTABLISHED, "A: %s (status %d)",
			      rnic_cm_event_str(ev.type), ev.status);
			CHECK(rnic_cm_id_context(ev.id) != NULL, "A: ESTABLISHED on an unknown id");
			est_a++;
		}
	}
	while (est_b < N) {
		expect_event(b.cm, RNIC_CM_EVENT_ESTABLISHED, &ev, "B");
		est_b++;
	}
	for (int i = 0; i < N; i++)
		recv_on(a.xqp[i], a.mr, 100 + i, a.buf + BASE + i * 64, 64);
	for (int i = 0; i < N; i++) {
		uint8_t *m = b.buf + BASE + i * 64;
		snprintf((char *)m, 64, "connection %d", i);
		struct ibv_sge s = { (uintptr_t)m, 32, b.mr->lkey };
		CHECK_RC(post_wr(b.xqp[i], IBV_WR_SEND, 200 + i, &s, 1, 0, 0, 0), 0);
	}
	struct ibv_wc wc[N];
	wait_wc(a.cq, wc, N, "A recvs");
	for (int k = 0; k < N; k++) {
		int i = (int)wc[k].wr_id - 100;
		CHECK(i >= 0 && i < N && wc[k].status == IBV_WC_SUCCESS && wc[k].byte_len == 32,
		      "recv wr_id %llu status %d len %u", (unsigned long long)wc[k].wr_id,
		      wc[k].status, wc[k].byte_len);
		CHECK(wc[k].qp_num == a.xqp[i]->qp_num, "recv %d on QP %u, expected %u", i,
		      wc[k].qp_num, a.xqp[i]->qp_num);
		char want[64];
		snprintf(want, sizeof(want), "connection %d", i);
		CHECK(strcmp((char *)a.buf + BASE + i * 64, want) == 0, "connection %d got '%.32s'",
		      i, (char *)a.buf + BASE + i * 64);
	}
}

static void t_ird_ord(void)
{
	/* B asks ORD 32; A accepts with IRD 4: B must never have more than 4
	 * Reads at A (A would terminate), and the QP queues the rest */
	struct opts o = DEF;
	o.ord = 32;
	o.ird = 8;
	o.a_ird = 4;
	o.a_ord = 2;
	pair_up(&o);
	printf("    negotiated: A ird %u ord %u, B ird %u ord %u\n", a.ird, a.ord, b.ird, b.ord);
	CHECK(b.ord <= 4, "B's ORD %u above A's IRD 4", b.ord);
	CHECK(a.ord <= b.ird, "A's ORD %u above B's IRD %u", a.ord, b.ird);
	fill(a.buf + BASE, 64 * 4096, 5);
	for (int i = 0; i < 64; i++)
		CHECK_RC(post1(&b, IBV_WR_RDMA_READ, i, b.buf + BASE + i * 4096, 4096,
			       (uintptr_t)a.buf + BASE + i * 4096, a.mr->rkey, IBV_SEND_SIGNALED), 0);
	for (int i = 0; i < 64; i++)
		expect_wc(b.cq, b.qp, i, IBV_WC_RDMA_READ, IBV_WC_SUCCESS, 4096, "read");
	CHECK_DATA(b.buf + BASE, a.buf + BASE, 64 * 4096, "reads");
	/* and A's reads are held to B's IRD too */
	for (int i = 0; i < 16; i++)
		CHECK_RC(post1(&a, IBV_WR_RDMA_READ, i, a.buf + BASE + i * 4096, 4096,
			       (uintptr_t)b.buf + BASE + i * 4096, b.mr->rkey, IBV_SEND_SIGNALED), 0);
	for (int i = 0; i < 16; i++)
		expect_wc(a.cq, a.qp, i, IBV_WC_RDMA_READ, IBV_WC_SUCCESS, 4096, "read");
}

static void t_no_crc(void)
{
	struct opts o = DEF;
	o.no_crc = true;
	pair_up(&o);
	do_send(&b, &a, MiB, 3, 5, 1);
	do_write(&b, &a, MiB, 1, 2, 3);
	do_read(&b, &a, MiB, 7, 1, 5);
}

static void t_p2p(void)
{
	struct opts o = DEF;
	o.p2p = true;
	pair_up(&o);
	do_send(&b, &a, 4096, 0, 0, 1);
	do_send(&a, &b, 4096, 0, 0, 2);
}

/* --- opcodes, sizes, offsets --------------------------------------------------------- */

static void t_send_sizes(void)
{
	pair_up(&DEF);
	uint64_t tag = 1000;
	for (unsigned s = 0; s < RTE_DIM(sizes); s++)
		for (unsigned o = 0; o < 2; o++) {
			do_send(&b, &a, sizes[s], offs[o][0], offs[o][1], tag += 2);
			do_send(&a, &b, sizes[s], offs[o + 1][0], offs[o + 1][1], tag += 2);
		}
}

static void t_write_sizes(void)
{
	pair_up(&DEF);
	uint64_t tag = 2000;
	for (unsigned s = 0; s < RTE_DIM(sizes); s++)
		for (unsigned o = 0; o < 2; o++) {
			do_write(&b, &a, sizes[s], offs[o][0], offs[o][1], tag += 2);
			do_write(&a, &b, sizes[s], offs[o + 1][0], offs[o + 1][1], tag += 2);
		}
}

static void t_read_sizes(void)
{
	pair_up(&DEF);
	uint64_t tag = 3000;
	for (unsigned s = 0; s < RTE_DIM(sizes); s++)
		for (unsigned o = 0; o < 2; o++) {
			do_read(&b, &a, sizes[s], offs[o][0], offs[o][1], tag += 2);
			do_read(&a, &b, sizes[s], offs[o + 1][0], offs[o + 1][1], tag += 2);
		}
}

/* Sends and receives with no SGE at all (num_sge 0). */
static void t_zero_sge(void)
{
	pair_up(&DEF);
	struct ibv_recv_wr rw = { .wr_id = 7, .num_sge = 0 }, *rbad;
	CHECK_RC(ibv_post_recv(a.qp, &rw, &rbad), 0);
	CHECK_RC(post_wr(b.qp, IBV_WR_SEND, 8, NULL, 0, 0, 0, IBV_SEND_SIGNALED), 0);
	expect_wc(b.cq, b.qp, 8, IBV_WC_SEND, IBV_WC_SUCCESS, ANY, "send");
	expect_wc(a.cq, a.qp, 7, IBV_WC_RECV, IBV_WC_SUCCESS, 0, "recv");
	CHECK_RC(post_wr(b.qp, IBV_WR_RDMA_WRITE, 9, NULL, 0, (uintptr_t)a.buf, a.mr->rkey,
			 IBV_SEND_SIGNALED), 0);
	expect_wc(b.cq, b.qp, 9, IBV_WC_RDMA_WRITE, IBV_WC_SUCCESS, ANY, "write");
	do_send(&b, &a, 10, 0, 0, 10);
}


static void t_sig_all(void)
{
	struct opts o = DEF;
	o.sig_all = 1;
	pair_up(&o);
	fill(b.buf + BASE, 4096, 12);
	for (int i = 0; i < 10; i++)
		CHECK_RC(post1(&b, IBV_WR_RDMA_WRITE, i, b.buf + BASE, 4096,
			       (uintptr_t)a.buf + BASE, a.mr->rkey, 0), 0);
	for (int i = 0; i < 10; i++)
		expect_wc(b.cq, b.qp, i, IBV_WC_RDMA_WRITE, IBV_WC_SUCCESS, ANY, "sq_sig_all write");
	fence_send(&b, &a, 100);
}

/* 100 small Writes and 20 small Sends posted as one chain: their FPDUs
 * share TCP segments (several to a segment, each whole, each segment
 * starting with one), every byte lands where it belongs, and the chain's
 * last (signaled) Write completes after all of them. */
static void t_small_packed(void)
{
	enum { NW = 100, NS = 20, N = NW + NS, SZ = 48 };
	_Static_assert((N - 1) % 6 == 5, "the last of the chain is a Send (signaled)");
	pair_up(&DEF);
	uint8_t *bs = b.buf + BASE, *as = a.buf + BASE;
	fill(bs, N * SZ, 7);
	memset(as, GUARD, 2 * N * SZ);
	for (int i = 0; i < NS; i++)
		recv1(&a, 100 + (uint64_t)i, as + N * SZ + (uint32_t)i * SZ, SZ);
	struct rnic_qp_stats before;
	rnic_qp_stats(b.qp, &before);
	static struct ibv_send_wr wr[N];
	static struct ibv_sge sg[N];
	struct ibv_send_wr *bad = NULL;
	for (int i = 0; i < N; i++) {
		bool send = i % 6 == 5;   /* 20 Sends among the Writes */
		sg[i] = (struct ibv_sge){ (uintptr_t)bs + (uint32_t)i * SZ, SZ, b.mr->lkey };
		wr[i] = (struct ibv_send_wr){ .wr_id = (uint64_t)i + 1, .next = i + 1 < N ? &wr[i + 1] : NULL,
					      .sg_list = &sg[i], .num_sge = 1,
					      .opcode = send ? IBV_WR_SEND : IBV_WR_RDMA_WRITE,
					      .send_flags = i + 1 == N ? IBV_SEND_SIGNALED : 0 };
		wr[i].wr.rdma.remote_addr = (uintptr_t)as + (uint32_t)i * SZ;
		wr[i].wr.rdma.rkey = a.mr->rkey;
	}
	CHECK_RC(ibv_post_send(b.qp, wr, &bad), 0);
	expect_wc(b.cq, b.qp, N, IBV_WC_SEND, IBV_WC_SUCCESS, SZ, "last of the chain");
	/* the requester's completion says TCP has it; the receives (the last
	 * one behind every Write) say it is placed */
	for (int k = 0; k < NS; k++)
		expect_wc(a.cq, a.qp, 100 + (uint64_t)k, IBV_WC_RECV, IBV_WC_SUCCESS, SZ,
			  "packed send");
	for (int k = 0, i = 0; i < N; i++) {
		if (i % 6 != 5) {
			/* Writes land in place; Send slots stay guarded */
			CHECK_DATA(as + (uint32_t)i * SZ, bs + (uint32_t)i * SZ, SZ, "packed write");
			continue;
		}
		CHECK_DATA(as + N * SZ + (uint32_t)k * SZ, bs + (uint32_t)i * SZ, SZ, "packed send");
		CHECK_UNTOUCHED(as + (uint32_t)i * SZ, SZ, GUARD, "send slot");
		k++;
	}
	struct rnic_qp_stats after;
	rnic_qp_stats(b.qp, &after);
	/* about 1400 / (20 + 48 + 6) FPDUs to a segment: most share one */
	CHECK(after.fpdus_packed - before.fpdus_packed >= N / 2,
	      "only %lu of %d small FPDUs shared a segment",
	      (unsigned long)(after.fpdus_packed - before.fpdus_packed), N);
}

/* --- bad input ----------------------------------------------------------------------- */

/*
 * iWARP's part of the conformance suite's refused remote access: A refuses
 * with a Terminate and both QPs end in ERR; both CM ids see DISCONNECTED
 * with -EPROTO (B may hear only A's reset when the injector lost the
 * Terminate). An iWARP Write or Send completes at B once TCP has it, so
 * the refused one and those behind it may complete either way; a refused
 * Read never succeeds.
 */
static void conf_refused(enum rfault k, const struct ibv_wc *req, const struct ibv_wc *arecv)
{
	struct rnic_cm_event ev;
	expect_event(a.cm, RNIC_CM_EVENT_DISCONNECTED, &ev, "A");
	CHECK(ev.status == -EPROTO, "A (sent the Terminate): DISCONNECTED status %d, expected "
	      "-EPROTO", ev.status);
	expect_event(b.cm, RNIC_CM_EVENT_DISCONNECTED, &ev, "B");
	CHECK(ev.status == -EPROTO || (faults && ev.status == -ECONNRESET),
	      "B (received the Terminate): DISCONNECTED status %d, expected -EPROTO (docs/verbs.md: "
	      "-EPROTO after a Terminate either way)", ev.status);
	bool term_lost = ev.status == -ECONNRESET;
	if (k == R_RKEY || k == R_OOB || k == R_RIGHT)
		CHECK(req[0].status != IBV_WC_SUCCESS, "a refused Read completed successfully");
	(void)arecv;   /* flushed or failed, as the suite checked: either is right */
	CHECK(a.qp->state == IBV_QPS_ERR, "A's QP in state %d, expected ERR", a.qp->state);
	struct rnic_qp_stats qa, qb;
	rnic_qp_stats(a.qp, &qa);
	rnic_qp_stats(b.qp, &qb);
	CHECK(qa.terminates_out == 1 && qb.terminates_in == (term_lost ? 0u : 1u),
	      "Terminates: A out %llu, B in %llu",
	      (unsigned long long)qa.terminates_out, (unsigned long long)qb.terminates_in);
}

/* iWARP's part of bad_post: a new QP, not connected, takes no Send. */
static void conf_bad_post_states(void)
{
	struct ibv_qp *q = b.xqp[0] = make_qp(&b, &DEF, NULL);
	struct ibv_sge s0 = { (uintptr_t)b.buf + BASE, 8, b.mr->lkey };
	struct ibv_send_wr w0 = { .wr_id = 1, .sg_list = &s0, .num_sge = 1, .opcode = IBV_WR_SEND };
	struct ibv_send_wr *bad = NULL;
	CHECK(ibv_post_send(q, &w0, &bad) != 0 && bad == &w0, "send accepted in RESET");
	CHECK_RC(rnic_destroy_qp(q), 0);
	b.xqp[0] = NULL;
}

/* A Send that finds no receive posted (RoCE would wait: RNR). */
static void t_send_no_recv(void) { remote_fault(S_NORECV); }

/* --- close paths ---------------------------------------------------------------------- */

static void expect_flushed_recvs(struct end *e, uint64_t first, int n)
{
	for (int i = 0; i < n; i++)
		expect_wc(e->cq, e->qp, first + (uint64_t)i, ANY, IBV_WC_WR_FLUSH_ERR, ANY,
			  "flushed receive");
}

static void after_close_checks(void)
{
	struct ibv_wc wc;
	CHECK(a.qp->state == IBV_QPS_ERR && b.qp->state == IBV_QPS_ERR, "states A %d B %d",
	      a.qp->state, b.qp->state);
	/* a send posted now is refused or flushed */
	int rc = post1(&b, IBV_WR_SEND, 556, b.buf, 16, 0, 0, IBV_SEND_SIGNALED);
	if (rc == 0)
		expect_wc(b.cq, b.qp, 556, ANY, IBV_WC_WR_FLUSH_ERR, ANY, "send after close");
	CHECK(ibv_poll_cq(a.cq, 1, &wc) == 0 && ibv_poll_cq(b.cq, 1, &wc) == 0,
	      "stray completion wr_id %llu status %d", (unsigned long long)wc.wr_id, wc.status);
	/* a receive posted now is flushed (IBA 10.8.3.1) */
	recv1(&a, 555, a.buf, 16);
	expect_wc(a.cq, a.qp, 555, ANY, IBV_WC_WR_FLUSH_ERR, ANY, "receive posted after close");
}

static void graceful(bool from_active)
{
	pair_up(&DEF);
	do_send(&b, &a, 1000, 0, 0, 1);
	for (int i = 0; i < 3; i++)
		recv1(&a, 10 + i, a.buf + i * 64, 64);
	for (int i = 0; i < 2; i++)
		recv1(&b, 20 + i, b.buf + i * 64, 64);
	struct end *x = from_active ? &b : &a, *y = from_active ? &a : &b;
	CHECK_RC(rnic_cm_disconnect(x->id), 0);
	struct rnic_cm_event ev;
	expect_event(x->cm, RNIC_CM_EVENT_DISCONNECTED, &ev, x->name);
	CHECK(ev.status == 0, "%s (closing): DISCONNECTED status %d, expected 0", x->name, ev.status);
	expect_event(y->cm, RNIC_CM_EVENT_DISCONNECTED, &ev, y->name);
	CHECK(ev.status == 0, "%s (peer): DISCONNECTED status %d, expected 0 (graceful)", y->name,
	      ev.status);
	expect_flushed_recvs(&a, 10, 3);
	expect_flushed_recvs(&b, 20, 2);
	int rc = rnic_cm_disconnect(x->id);
	CHECK(rc == 0 || rc == -ENOTCONN, "second disconnect = %d", rc);
	after_close_checks();
}

static void t_close_graceful_active(void) { graceful(true); }
static void t_close_graceful_passive(void) { graceful(false); }

/* Disconnect right behind 16 MiB of Writes and a Send: every request
 * completes once, in order, successfully or flushed; what B saw leave
 * reaches A complete (the FIN follows it). */
static void t_close_graceful_inflight(void)
{
	pair_up(&DEF);
	fill(b.buf + BASE, 16 * MiB, 8);
	memset(a.buf + BASE, 0, 16 * MiB);
	recv1(&a, 30, a.buf, 16);
	recv1(&a, 31, a.buf, 16);
	for (int i = 0; i < 16; i++)
		CHECK_RC(post1(&b, IBV_WR_RDMA_WRITE, i, b.buf + BASE + i * MiB, MiB,
			       (uintptr_t)a.buf + BASE + i * MiB, a.mr->rkey, IBV_SEND_SIGNALED), 0);
	CHECK_RC(post1(&b, IBV_WR_SEND, 16, b.buf, 8, 0, 0, IBV_SEND_SIGNALED), 0);
	CHECK_RC(rnic_cm_disconnect(b.id), 0);
	struct rnic_cm_event ev;
	expect_event(b.cm, RNIC_CM_EVENT_DISCONNECTED, &ev, "B");
	expect_event(a.cm, RNIC_CM_EVENT_DISCONNECTED, &ev, "A");
	int ok = 0, general = 0;
	bool flushed = false;
	for (int i = 0; i <= 16; i++) {
		struct ibv_wc wc = expect_wc(b.cq, b.qp, (uint64_t)i, ANY, ANY, ANY, "B request");
		if (wc.status == IBV_WC_GENERAL_ERR)
			general++;   /* a flush reported as GENERAL_ERR: checked below, after the rest */
		else
			CHECK(wc.status == IBV_WC_SUCCESS || wc.status == IBV_WC_WR_FLUSH_ERR,
			      "request %d: status %d", i, wc.status);
		CHECK(!(flushed && wc.status == IBV_WC_SUCCESS), "request %d succeeded after a "
		      "flushed one", i);
		flushed |= wc.status != IBV_WC_SUCCESS;
		ok += wc.status == IBV_WC_SUCCESS;
	}
	struct ibv_wc r = expect_wc(a.cq, a.qp, 30, ANY, ANY, ANY, "A recv");
	expect_wc(a.cq, a.qp, 31, ANY, IBV_WC_WR_FLUSH_ERR, ANY, "A second recv");
	printf("    %d of 17 requests completed before the close; A's receive: status %d\n", ok,
	       r.status);
	if (ok == 17)
		CHECK(r.status == IBV_WC_SUCCESS, "B's Send completed but A's receive was flushed "
		      "(status %d): a graceful close lost a transmitted message", r.status);
	if (r.status == IBV_WC_SUCCESS) {
		CHECK(ok == 17, "A received the Send but B flushed it");
		CHECK_DATA(a.buf + BASE, b.buf + BASE, 16 * MiB, "writes before the Send");
	} else {
		for (int i = 0; i < ok; i++)
			CHECK_DATA(a.buf + BASE + i * MiB, b.buf + BASE + i * MiB, MiB,
				   "a completed write");
	}
	CHECK(general == 0, "%d of 17 requests completed with IBV_WC_GENERAL_ERR (%d), expected "
	      "IBV_WC_WR_FLUSH_ERR for those not transmitted", general, IBV_WC_GENERAL_ERR);
}

/* On a lossy link the RST of an abort can be lost, and an idle peer then
 * never hears of it (TCP: only its next segment draws another RST). The
 * lossy run lets the peer send once, as an application would. @return
 * whether a completion for @p id will come. */
static bool poke(struct end *e, uint64_t id)
{
	if (!faults)
		return false;
	return post1(e, IBV_WR_SEND, id, e->buf, 0, 0, 0, IBV_SEND_SIGNALED) == 0;
}

/* @p n flushed receives from @p first on, in order, plus, anywhere between
 * them, the poke's completion (any status) when @p poked. */
static void expect_flushed_and_poke(struct end *e, uint64_t first, int n, bool poked,
				    uint64_t poke_id)
{
	struct ibv_wc wc[16];
	int k = n + (poked ? 1 : 0), r = 0;
	wait_wc(e->cq, wc, k, "flushes");
	for (int i = 0; i < k; i++) {
		if (poked && wc[i].wr_id == poke_id) {
			poked = false;
			continue;
		}
		CHECK(wc[i].wr_id == first + (uint64_t)r && wc[i].status == IBV_WC_WR_FLUSH_ERR,
		      "%s: completion wr_id %llu status %d, expected the flush of %llu", e->name,
		      (unsigned long long)wc[i].wr_id, wc[i].status,
		      (unsigned long long)(first + (uint64_t)r));
		r++;
	}
}

static void t_close_abort_modify(void)
{
	pair_up(&DEF);
	do_send(&b, &a, 100, 0, 0, 1);
	for (int i = 0; i < 3; i++)
		recv1(&a, 10 + i, a.buf + i * 64, 64);
	for (int i = 0; i < 2; i++)
		recv1(&b, 20 + i, b.buf + i * 64, 64);
	struct ibv_qp_attr at = { .qp_state = IBV_QPS_ERR };
	CHECK_RC(rnic_modify_qp(a.qp, &at, IBV_QP_STATE), 0);
	CHECK(a.qp->state == IBV_QPS_ERR, "A's state %d after modify to ERR", a.qp->state);
	expect_flushed_recvs(&a, 10, 3);
	bool poked = poke(&b, 99);
	struct rnic_cm_event ev;
	expect_event(b.cm, RNIC_CM_EVENT_DISCONNECTED, &ev, "B");
	CHECK(ev.status == -ECONNRESET || ev.status == -EPROTO, "B: DISCONNECTED status %d, "
	      "expected -ECONNRESET (abortive)", ev.status);
	expect_event(a.cm, RNIC_CM_EVENT_DISCONNECTED, &ev, "A");
	expect_flushed_and_poke(&b, 20, 2, poked, 99);
	after_close_checks();
}

static void t_close_abort_destroy(void)
{
	pair_up(&DEF);
	do_send(&b, &a, 100, 0, 0, 1);
	for (int i = 0; i < 3; i++)
		recv1(&a, 10 + i, a.buf + i * 64, 64);
	recv1(&b, 20, b.buf, 64);
	CHECK_RC(rnic_cm_destroy_id(b.id), 0);
	b.id = NULL;
	CHECK_RC(rnic_destroy_qp(b.qp), 0);
	b.qp = NULL;
	bool poked = poke(&a, 99);
	struct rnic_cm_event ev;
	expect_event(a.cm, RNIC_CM_EVENT_DISCONNECTED, &ev, "A");
	CHECK(ev.status == -ECONNRESET, "A: DISCONNECTED status %d, expected -ECONNRESET", ev.status);
	expect_flushed_and_poke(&a, 10, 3, poked, 99);
	CHECK(a.qp->state == IBV_QPS_ERR, "A's state %d", a.qp->state);
	struct ibv_wc wc;
	CHECK(ibv_poll_cq(a.cq, 1, &wc) == 0, "stray completion %llu",
	      (unsigned long long)wc.wr_id);
}

/* Abort under load: 16 MiB of Writes and Reads in flight when A goes to
 * ERR. Every request of B completes exactly once and in order. */
static void t_close_abort_inflight(void)
{
	pair_up(&DEF);
	fill(a.buf + BASE, 8 * MiB, 3);
	for (int i = 0; i < 16; i++)
		CHECK_RC(post1(&b, i & 1 ? IBV_WR_RDMA_READ : IBV_WR_RDMA_WRITE, i,
			       b.buf + BASE + i * MiB, MiB, (uintptr_t)a.buf + BASE + (i / 2) * MiB,
			       a.mr->rkey, IBV_SEND_SIGNALED), 0);
	recv1(&a, 100, a.buf, 16);
	struct ibv_qp_attr at = { .qp_state = IBV_QPS_ERR };
	CHECK_RC(rnic_modify_qp(a.qp, &at, IBV_QP_STATE), 0);
	struct rnic_cm_event ev;
	expect_event(b.cm, RNIC_CM_EVENT_DISCONNECTED, &ev, "B");
	expect_event(a.cm, RNIC_CM_EVENT_DISCONNECTED, &ev, "A");
	for (int i = 0; i < 16; i++) {
		struct ibv_wc wc = expect_wc(b.cq, b.qp, (uint64_t)i, ANY, ANY, ANY, "B request");
		if ((i & 1) && wc.status == IBV_WC_SUCCESS)
			CHECK_DATA(b.buf + BASE + i * MiB, a.buf + BASE + (i / 2) * MiB, MiB,
				   "a Read that completed");
	}
	expect_wc(a.cq, a.qp, 100, ANY, IBV_WC_WR_FLUSH_ERR, ANY, "A's receive");
	struct ibv_wc wc;
	CHECK(ibv_poll_cq(b.cq, 1, &wc) == 0, "stray completion %llu", (unsigned long long)wc.wr_id);
}

/* --- completion channel --------------------------------------------------------------- */

static int stale_wakeups;   /* the channel fd readable with no event to take */

static void take_cq_event(struct end *e)
{
	struct pollfd pfd = { .fd = e->ch->fd, .events = POLLIN };
	struct ibv_cq *cq = NULL;
	void *ctx = NULL;
	double t0 = now_s();
	for (;;) {
		CHECK(poll(&pfd, 1, HANG_S * 1000) == 1, "%s: channel fd not readable in %d s "
		      "(hang guard)", e->name, HANG_S);
		int rc = rnic_get_cq_event(e->ch, &cq, &ctx);
		if (rc == 0)
			break;
		CHECK(rc == -EAGAIN, "rnic_get_cq_event = %d", rc);
		stale_wakeups++;   /* readable with nothing to take */
		CHECK(now_s() - t0 < HANG_S, "%s: no CQ event in %d s (hang guard)", e->name, HANG_S);
		usleep(100);
	}
	e->unacked_events++;
	CHECK(cq == e->cq && ctx == e, "%s: event for CQ %p ctx %p, expected %p %p", e->name,
	      (void *)cq, ctx, (void *)e->cq, (void *)e);
}

static void no_cq_event(struct end *e)
{
	struct pollfd pfd = { .fd = e->ch->fd, .events = POLLIN };
	struct ibv_cq *cq;
	void *ctx;
	int readable = poll(&pfd, 1, 0);
	CHECK_RC(rnic_get_cq_event(e->ch, &cq, &ctx), -EAGAIN);
	stale_wakeups += readable == 1;
}

static void check_stale_wakeups(void)
{
	CHECK(stale_wakeups == 0, "%d times the channel fd was readable with no event to take",
	      stale_wakeups);
}

static void t_cq_channel(void)
{
	stale_wakeups = 0;
	pair_up(&DEF);
	CHECK(fcntl(a.ch->fd, F_SETFL, O_NONBLOCK) == 0 &&
	      fcntl(b.ch->fd, F_SETFL, O_NONBLOCK) == 0, "O_NONBLOCK");
	no_cq_event(&a);
	for (int round = 0; round < 3; round++) {
		CHECK_RC(ibv_req_notify_cq(a.cq, 0), 0);
		CHECK_RC(ibv_req_notify_cq(b.cq, 0), 0);
		recv1(&a, 10 + round, a.buf + BASE, 64);
		CHECK_RC(post1(&b, IBV_WR_SEND, 20 + round, b.buf + BASE, 64, 0, 0,
			       IBV_SEND_SIGNALED), 0);
		take_cq_event(&a);   /* the receive */
		take_cq_event(&b);   /* the signaled Send */
		expect_wc(a.cq, a.qp, 10 + round, IBV_WC_RECV, IBV_WC_SUCCESS, 64, "recv");
		expect_wc(b.cq, b.qp, 20 + round, IBV_WC_SEND, IBV_WC_SUCCESS, ANY, "send");
		rnic_ack_cq_events(a.cq, a.unacked_events);
		rnic_ack_cq_events(b.cq, b.unacked_events);
		a.unacked_events = b.unacked_events = 0;
	}
	/* not armed: a completion makes no event */
	recv1(&a, 30, a.buf + BASE, 64);
	CHECK_RC(post1(&b, IBV_WR_SEND, 31, b.buf + BASE, 64, 0, 0, IBV_SEND_SIGNALED), 0);
	expect_wc(a.cq, a.qp, 30, IBV_WC_RECV, IBV_WC_SUCCESS, 64, "recv");
	expect_wc(b.cq, b.qp, 31, IBV_WC_SEND, IBV_WC_SUCCESS, ANY, "send");
	no_cq_event(&a);
	/* blocking get_cq_event from the fd's owner */
	CHECK(fcntl(a.ch->fd, F_SETFL, 0) == 0, "blocking");
	CHECK_RC(ibv_req_notify_cq(a.cq, 0), 0);
	recv1(&a, 32, a.buf + BASE, 64);
	CHECK_RC(post1(&b, IBV_WR_SEND, 33, b.buf + BASE, 64, 0, 0, 0), 0);
	struct ibv_cq *cq;
	void *ctx;
	CHECK_RC(rnic_get_cq_event(a.ch, &cq, &ctx), 0);
	CHECK(cq == a.cq, "blocking event CQ");
	rnic_ack_cq_events(cq, 1);
	expect_wc(a.cq, a.qp, 32, IBV_WC_RECV, IBV_WC_SUCCESS, 64, "recv");
	check_stale_wakeups();
}

static void t_cq_solicited(void)
{
	stale_wakeups = 0;
	pair_up(&DEF);
	CHECK(fcntl(a.ch->fd, F_SETFL, O_NONBLOCK) == 0, "O_NONBLOCK");
	CHECK_RC(ibv_req_notify_cq(a.cq, 1), 0);
	recv1(&a, 1, a.buf + BASE, 64);
	recv1(&a, 2, a.buf + BASE, 64);
	CHECK_RC(post1(&b, IBV_WR_SEND, 1, b.buf + BASE, 8, 0, 0, 0), 0);
	expect_wc(a.cq, a.qp, 1, IBV_WC_RECV, IBV_WC_SUCCESS, 8, "unsolicited recv");
	no_cq_event(&a);
	CHECK_RC(post1(&b, IBV_WR_SEND, 2, b.buf + BASE, 8, 0, 0, IBV_SEND_SOLICITED), 0);
	take_cq_event(&a);
	expect_wc(a.cq, a.qp, 2, IBV_WC_RECV, IBV_WC_SUCCESS, 8, "solicited recv");
	check_stale_wakeups();
}

/* --- memory windows -------------------------------------------------------------------- */

static struct ibv_mw *alloc_mw_or_skip(struct end *e, enum ibv_mw_type t, int slot)
{
	struct ibv_mw *mw = ibv_alloc_mw(e->pd, t);
	if (mw == NULL && (errno == EOPNOTSUPP || errno == ENOSYS))
		skip_case("ibv_alloc_mw(type %d): %s", t, strerror(errno));
	CHECK(mw != NULL, "ibv_alloc_mw(type %d): %s", t, strerror(errno));
	e->xmw[slot] = mw;
	return mw;
}

/* After a refused tagged access by B: A terminated, the window untouched. */
static void expect_terminated(uint8_t *win, uint32_t len, uint8_t v)
{
	struct rnic_cm_event ev;
	expect_event(a.cm, RNIC_CM_EVENT_DISCONNECTED, &ev, "A");
	CHECK(ev.status == -EPROTO, "A: DISCONNECTED status %d, expected -EPROTO", ev.status);
	expect_event(b.cm, RNIC_CM_EVENT_DISCONNECTED, &ev, "B");
	CHECK_UNTOUCHED(win, len, v, "window after the refused access");
}

static void t_mw_type2_send_inv(void)
{
	pair_up(&DEF);
	struct ibv_mw *mw = alloc_mw_or_skip(&a, IBV_MW_TYPE_2, 0);
	uint8_t *win = a.buf + BASE + 8192;
	memset(win - 4096, 0x11, 3 * 4096);
	uint32_t rkey = bind2(mw, win, 4096, IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ, 1);
	CHECK(rkey != a.mr->rkey, "window rkey equals the MR's");
	CHECK_RC(rnic_dereg_mr(a.mr), -EBUSY);   /* a window is bound to it */
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
	/* Send with Invalidate */
	recv1(&a, 4, a.buf, 16);
	struct ibv_sge s = { (uintptr_t)b.buf, 4, b.mr->lkey };
	struct ibv_send_wr sw = { .wr_id = 5, .sg_list = &s, .num_sge = 1,
				  .opcode = IBV_WR_SEND_WITH_INV, .send_flags = IBV_SEND_SIGNALED,
				  .invalidate_rkey = rkey }, *bad;
	int rc = ibv_post_send(b.qp, &sw, &bad);
	if (rc == EOPNOTSUPP)
		skip_case("IBV_WR_SEND_WITH_INV: post_send returns EOPNOTSUPP");
	CHECK_RC(rc, 0);
	expect_wc(b.cq, b.qp, 5, IBV_WC_SEND, IBV_WC_SUCCESS, ANY, "send with invalidate");
	struct ibv_wc wc = expect_wc(a.cq, a.qp, 4, IBV_WC_RECV, IBV_WC_SUCCESS, 4, "recv");
	CHECK((wc.wc_flags & IBV_WC_WITH_INV) && wc.invalidated_rkey == rkey,
	      "recv wc_flags %#x invalidated_rkey %#x, expected WITH_INV %#x", wc.wc_flags,
	      wc.invalidated_rkey, rkey);
	/* the window is dead: a Write through it is refused */
	memset(win, 0, 4096);
	CHECK_RC(post1(&b, IBV_WR_RDMA_WRITE, 6, b.buf + BASE, 64, (uintptr_t)win, rkey, 0), 0);
	expect_terminated(win, 4096, 0);
}

static void t_mw_local_inv(void)
{
	pair_up(&DEF);
	struct ibv_mw *mw = alloc_mw_or_skip(&a, IBV_MW_TYPE_2, 0);
	uint8_t *win = a.buf + BASE;
	fill(win, 4096, 4);
	uint32_t rkey = bind2(mw, win, 4096, IBV_ACCESS_REMOTE_READ, 1);
	do_read(&b, &a, 0, 0, 0, 2);   /* warm */
	CHECK_RC(post1(&b, IBV_WR_RDMA_READ, 3, b.buf + BASE, 4096, (uintptr_t)win, rkey,
		       IBV_SEND_SIGNALED), 0);
	expect_wc(b.cq, b.qp, 3, IBV_WC_RDMA_READ, IBV_WC_SUCCESS, 4096, "read via window");
	CHECK_DATA(b.buf + BASE, win, 4096, "read via window");
	/* a Write through a read-only window is refused later; first invalidate */
	struct ibv_send_wr li = { .wr_id = 4, .opcode = IBV_WR_LOCAL_INV,
				  .send_flags = IBV_SEND_SIGNALED, .invalidate_rkey = rkey }, *bad;
	int rc = ibv_post_send(a.qp, &li, &bad);
	if (rc == EOPNOTSUPP)
		skip_case("IBV_WR_LOCAL_INV: post_send returns EOPNOTSUPP");
	CHECK_RC(rc, 0);
	expect_wc(a.cq, a.qp, 4, IBV_WC_LOCAL_INV, IBV_WC_SUCCESS, ANY, "local invalidate");
	/* invalidating it again fails locally */
	li.wr_id = 5;
	CHECK_RC(ibv_post_send(a.qp, &li, &bad), 0);
	struct ibv_wc wc = expect_wc(a.cq, a.qp, 5, ANY, ANY, ANY, "second local invalidate");
	CHECK(wc.status != IBV_WC_SUCCESS, "invalidating an invalid window succeeded");
	memset(b.buf + BASE, 0x44, 4096);
	CHECK_RC(post1(&b, IBV_WR_RDMA_READ, 6, b.buf + BASE, 4096, (uintptr_t)win, rkey,
		       IBV_SEND_SIGNALED), 0);
	expect_terminated(b.buf + BASE, 4096, 0x44);
	wc = expect_wc(b.cq, b.qp, 6, ANY, ANY, ANY, "read via invalidated window");
	CHECK(wc.status != IBV_WC_SUCCESS, "Read via an invalidated window succeeded");
}

static void t_mw_type1(void)
{
	pair_up(&DEF);
	struct ibv_mw *mw = alloc_mw_or_skip(&a, IBV_MW_TYPE_1, 0);
	uint8_t *win = a.buf + BASE + 3 * 4096 + 3;
	memset(win - 4096, 0x22, 3 * 4096);
	struct ibv_mw_bind mb = { .wr_id = 1, .send_flags = IBV_SEND_SIGNALED };
	mb.bind_info = (struct ibv_mw_bind_info){ .mr = a.mr, .addr = (uintptr_t)win,
						  .length = 1000,
						  .mw_access_flags = IBV_ACCESS_REMOTE_WRITE };
	uint32_t old = mw->rkey;
	int rc = ibv_bind_mw(a.qp, mw, &mb);
	if (rc == EOPNOTSUPP || rc == ENOSYS)
		skip_case("ibv_bind_mw: %d", rc);
	CHECK_RC(rc, 0);
	expect_wc(a.cq, a.qp, 1, IBV_WC_BIND_MW, IBV_WC_SUCCESS, ANY, "type 1 bind");
	CHECK(mw->rkey != old, "bind kept the rkey %#x", old);
	fill(b.buf + BASE, 1000, 5);
	CHECK_RC(post1(&b, IBV_WR_RDMA_WRITE, 2, b.buf + BASE, 1000, (uintptr_t)win, mw->rkey, 0), 0);
	fence_send(&b, &a, 3);
	CHECK_DATA(win, b.buf + BASE, 1000, "write via type 1 window");
	CHECK_UNTOUCHED(win + 1000, 4096, 0x22, "above the window");
	/* inside the MR but past the window: refused */
	CHECK_RC(post1(&b, IBV_WR_RDMA_WRITE, 4, b.buf + BASE, 100, (uintptr_t)win + 950, mw->rkey,
		       0), 0);
	expect_terminated(win + 1000, 4096, 0x22);
	CHECK_DATA(win, b.buf + BASE, 950, "window before the refused write");
}

/* --- shared receive queue ---------------------------------------------------------------- */

static void t_srq(void)
{
	enum { N = 2, M = 8 };
	struct rnic_cm_event ev;
	uint16_t port;
	end_init(&a, "A", CA, bufA, &DEF);
	end_init(&b, "B", CB, bufB, &DEF);
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 64, .max_sge = RNIC_MAX_SGE } };
	a.srq = rnic_create_srq(a.pd, &sa);
	if (a.srq == NULL && (errno == EOPNOTSUPP || errno == ENOSYS))
		skip_case("rnic_create_srq: %s", strerror(errno));
	CHECK(a.srq != NULL, "create_srq: %s", strerror(errno));
	listen_new(&port);
	for (int i = 0; i < N; i++) {
		a.xqp[i] = make_qp(&a, &DEF, a.srq);
		b.xqp[i] = make_qp(&b, &DEF, NULL);
		CHECK_RC(rnic_cm_create_id(b.cm, NULL, &b.xid[i]), 0);
		CHECK_RC(cm_connect_a(b.xid[i], b.xqp[i], port, NULL), 0);
		expect_event(a.cm, RNIC_CM_EVENT_CONNECT_REQUEST, &ev, "A");
		a.xid[i] = ev.id;
		CHECK_RC(rnic_cm_accept(ev.id, a.xqp[i], NULL), 0);
		expect_event(a.cm, RNIC_CM_EVENT_ESTABLISHED, NULL, "A");
		expect_event(b.cm, RNIC_CM_EVENT_ESTABLISHED, NULL, "B");
	}
	/* receives on a QP with an SRQ are refused */
	struct ibv_sge s0 = { (uintptr_t)a.buf, 8, a.mr->lkey };
	struct ibv_recv_wr r0 = { .wr_id = 1, .sg_list = &s0, .num_sge = 1 }, *rbad = NULL;
	CHECK(ibv_post_recv(a.xqp[0], &r0, &rbad) != 0 && rbad == &r0,
	      "post_recv on a QP with an SRQ accepted");
	for (int i = 0; i < N * M; i++) {
		struct ibv_sge s = { (uintptr_t)a.buf + BASE + i * 256, 256, a.mr->lkey };
		struct ibv_recv_wr r = { .wr_id = 1000 + i, .sg_list = &s, .num_sge = 1 };
		CHECK_RC(ibv_post_srq_recv(a.srq, &r, &rbad), 0);
	}
	for (int m = 0; m < M; m++)
		for (int i = 0; i < N; i++) {
			uint8_t *p = b.buf + BASE + (i * M + m) * 256;
			p[0] = (uint8_t)i;
			p[1] = (uint8_t)m;
			fill(p + 2, 100, (uint64_t)(i * M + m));
			struct ibv_sge s = { (uintptr_t)p, 102, b.mr->lkey };
			CHECK_RC(post_wr(b.xqp[i], IBV_WR_SEND, (uint64_t)m, &s, 1, 0, 0, 0), 0);
		}
	struct ibv_wc wc[N * M];
	wait_wc(a.cq, wc, N * M, "SRQ receives");
	int next[N] = { 0 };
	bool used[N * M] = { false };
	for (int k = 0; k < N * M; k++) {
		int slot = (int)wc[k].wr_id - 1000;
		CHECK(wc[k].status == IBV_WC_SUCCESS && wc[k].byte_len == 102 && slot >= 0 &&
		      slot < N * M && !used[slot], "SRQ wc %d: wr_id %llu status %d len %u", k,
		      (unsigned long long)wc[k].wr_id, wc[k].status, wc[k].byte_len);
		used[slot] = true;
		uint8_t *p = a.buf + BASE + slot * 256;
		int i = p[0], m = p[1];
		CHECK(i < N && wc[k].qp_num == a.xqp[i]->qp_num, "message of connection %d on QP %u", i,
		      wc[k].qp_num);
		CHECK(m == next[i], "connection %d: message %d arrived when %d was due", i, m, next[i]);
		next[i]++;
		uint8_t want[100];
		fill(want, 100, (uint64_t)(i * M + m));
		CHECK_DATA(p + 2, want, 100, "SRQ message");
	}
}

/* --- RFC 7306 --------------------------------------------------------------------------- */

/* RFC 7306 on iWARP (docs/iwarp.md): Write with Immediate is a Write and
 * an Immediate Data message, which takes a receive at the data sink and
 * completes it as IBV_WC_RECV_RDMA_WITH_IMM with the Write's length; Send
 * with Immediate is a Send and an Immediate Data message: two receives, the
 * second one (0 bytes) carries the immediate data. */
static void t_write_imm(void)
{
	static const uint32_t n_[] = { 0, 1, 64 * KiB, MiB };
	pair_up(&DEF);
	for (unsigned k = 0; k < RTE_DIM(n_); k++) {
		uint32_t n = n_[k], imm = 0xabcd1200u + k;
		uint8_t *src = b.buf + BASE, *dst = a.buf + BASE + 3;
		char what[64];
		snprintf(what, sizeof(what), "write with imm %u", n);
		fill(src, n, 40 + k);
		memset(dst - 64, GUARD, (size_t)n + 128);
		recv1(&a, 10 + k, a.buf, 16);
		struct ibv_sge s = { (uintptr_t)src, n, b.mr->lkey };
		struct ibv_send_wr w = { .wr_id = 20 + k, .sg_list = &s, .num_sge = 1,
					 .opcode = IBV_WR_RDMA_WRITE_WITH_IMM,
					 .send_flags = IBV_SEND_SIGNALED, .imm_data = htonl(imm) }, *bad;
		w.wr.rdma.remote_addr = (uintptr_t)dst;
		w.wr.rdma.rkey = a.mr->rkey;
		CHECK_RC(ibv_post_send(b.qp, &w, &bad), 0);
		expect_wc(b.cq, b.qp, 20 + k, IBV_WC_RDMA_WRITE, IBV_WC_SUCCESS, ANY, what);
		struct ibv_wc wc = expect_wc(a.cq, a.qp, 10 + k, IBV_WC_RECV_RDMA_WITH_IMM,
					     IBV_WC_SUCCESS, n, what);
		CHECK((wc.wc_flags & IBV_WC_WITH_IMM) && wc.imm_data == htonl(imm), "%s: imm %#x "
		      "flags %#x", what, ntohl(wc.imm_data), wc.wc_flags);
		CHECK_DATA(dst, src, n, what);
		CHECK_UNTOUCHED(dst - 64, 64, GUARD, what);
		CHECK_UNTOUCHED(dst + n, 64, GUARD, what);
	}
	/* a plain Write, then a Send: no immediate data anywhere */
	do_write(&b, &a, 100, 0, 0, 60);
}

static void t_send_imm(void)
{
	pair_up(&DEF);
	fill(b.buf + BASE, 100, 1);
	memset(a.buf + BASE, GUARD, 256);
	recv1(&a, 1, a.buf + BASE, 128);
	recv1(&a, 2, a.buf + BASE + 128, 16);
	struct ibv_sge s = { (uintptr_t)b.buf + BASE, 100, b.mr->lkey };
	struct ibv_send_wr w = { .wr_id = 3, .sg_list = &s, .num_sge = 1,
				 .opcode = IBV_WR_SEND_WITH_IMM,
				 .send_flags = IBV_SEND_SIGNALED | IBV_SEND_SOLICITED,
				 .imm_data = htonl(0x01020304) }, *bad;
	CHECK_RC(ibv_post_send(b.qp, &w, &bad), 0);
	expect_wc(b.cq, b.qp, 3, IBV_WC_SEND, IBV_WC_SUCCESS, ANY, "send with imm");
	struct ibv_wc wc = expect_wc(a.cq, a.qp, 1, IBV_WC_RECV, IBV_WC_SUCCESS, 100,
				     "recv of the Send");
	CHECK(!(wc.wc_flags & IBV_WC_WITH_IMM), "the Send's receive has flags %#x", wc.wc_flags);
	wc = expect_wc(a.cq, a.qp, 2, IBV_WC_RECV, IBV_WC_SUCCESS, 0, "recv of the Immediate Data");
	CHECK((wc.wc_flags & IBV_WC_WITH_IMM) && wc.imm_data == htonl(0x01020304), "imm %#x",
	      ntohl(wc.imm_data));
	CHECK_DATA(a.buf + BASE, b.buf + BASE, 100, "send with imm");
	CHECK_UNTOUCHED(a.buf + BASE + 100, 156, GUARD, "behind the Send, the second receive");
	/* the streams go on: a Send after it */
	do_send(&b, &a, 33, 0, 0, 70);
}

/* An MR on A for atomics and the word in it (value @p v). */
static uint64_t *atomic_target(struct ibv_mr **mr, int acc, uint64_t v)
{
	*mr = rnic_reg_mr(a.pd, a.buf + 8 * MiB, 4096, acc);
	CHECK(*mr != NULL, "reg_mr (atomic): %s", strerror(errno));
	a.xmr[0] = *mr;
	uint64_t *t = (uint64_t *)(void *)(a.buf + 8 * MiB + 64);
	memset(a.buf + 8 * MiB, 0x5a, 4096);
	*t = v;
	return t;
}

static void t_atomic_cas(void)
{
	pair_up(&DEF);
	struct ibv_mr *am;
	uint64_t *t = atomic_target(&am, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_ATOMIC, 1000);
	uint64_t *res = (uint64_t *)(void *)(b.buf + BASE);
	*res = 0;
	/* success: 1000 == 1000, swapped to 77 */
	CHECK_RC(post_atomic(b.qp, b.mr->lkey, 1, res, 8, (uintptr_t)t, am->rkey, true, 1000, 77), 0);
	expect_wc(b.cq, b.qp, 1, IBV_WC_COMP_SWAP, IBV_WC_SUCCESS, 8, "cmp&swap");
	CHECK(*res == 1000, "cmp&swap returned %llu, expected 1000", (unsigned long long)*res);
	CHECK(*t == 77, "target %llu after a successful cmp&swap", (unsigned long long)*t);
	/* failure: 77 != 1000, the word stays, the original comes back */
	CHECK_RC(post_atomic(b.qp, b.mr->lkey, 2, res, 8, (uintptr_t)t, am->rkey, true, 1000, 5), 0);
	expect_wc(b.cq, b.qp, 2, IBV_WC_COMP_SWAP, IBV_WC_SUCCESS, 8, "failing cmp&swap");
	CHECK(*res == 77, "failing cmp&swap returned %llu, expected 77", (unsigned long long)*res);
	CHECK(*t == 77, "target %llu after a failed cmp&swap", (unsigned long long)*t);
	CHECK_UNTOUCHED(a.buf + 8 * MiB, 64, 0x5a, "below the word");
	CHECK_UNTOUCHED(a.buf + 8 * MiB + 72, 4096 - 72, 0x5a, "above the word");
	/* full 64-bit compare and swap */
	*t = 0x8000000000000001ull;
	CHECK_RC(post_atomic(b.qp, b.mr->lkey, 3, res, 8, (uintptr_t)t, am->rkey, true,
			     0x8000000000000001ull, 0xfedcba9876543210ull), 0);
	expect_wc(b.cq, b.qp, 3, IBV_WC_COMP_SWAP, IBV_WC_SUCCESS, 8, "64-bit cmp&swap");
	CHECK(*res == 0x8000000000000001ull && *t == 0xfedcba9876543210ull,
	      "64-bit cmp&swap: returned %#llx, word %#llx", (unsigned long long)*res,
	      (unsigned long long)*t);
}

static void t_atomic_faa(void)
{
	pair_up(&DEF);
	struct ibv_mr *am;
	uint64_t *t = atomic_target(&am, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_ATOMIC,
				    0xffffffffull);
	uint64_t *res = (uint64_t *)(void *)(b.buf + BASE);
	CHECK_RC(post_atomic(b.qp, b.mr->lkey, 1, res, 8, (uintptr_t)t, am->rkey, false, 1, 0), 0);
	expect_wc(b.cq, b.qp, 1, IBV_WC_FETCH_ADD, IBV_WC_SUCCESS, 8, "fetch&add");
	CHECK(*res == 0xffffffffull && *t == 0x100000000ull, "fetch&add: returned %#llx, word "
	      "%#llx (the carry crosses 32 bits)", (unsigned long long)*res, (unsigned long long)*t);
	/* wraps at 64 bits */
	CHECK_RC(post_atomic(b.qp, b.mr->lkey, 2, res, 8, (uintptr_t)t, am->rkey, false,
			     UINT64_MAX - 0xffffffffull, 0), 0);
	expect_wc(b.cq, b.qp, 2, IBV_WC_FETCH_ADD, IBV_WC_SUCCESS, 8, "fetch&add wrap");
	CHECK(*res == 0x100000000ull && *t == 0, "fetch&add wrap: returned %#llx, word %#llx",
	      (unsigned long long)*res, (unsigned long long)*t);
}

/* Several connections add to one word; A's host sees the sum. */
static void t_atomic_faa_many_qps(void)
{
	enum { N = 4, K = 200 };
	struct rnic_cm_event ev;
	uint16_t port;
	end_init(&a, "A", CA, bufA, &DEF);
	end_init(&b, "B", CB, bufB, &DEF);
	struct ibv_mr *am;
	uint64_t *t = atomic_target(&am, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_ATOMIC, 0);
	listen_new(&port);
	for (int i = 0; i < N; i++) {
		a.xqp[i] = make_qp(&a, &DEF, NULL);
		b.xqp[i] = make_qp(&b, &DEF, NULL);
	}
	for (int i = 0; i < N; i++) {
		uint8_t pd[2] = { 'f', (uint8_t)i };
		struct rnic_cm_conn_param p = { .private_data = pd, .private_data_len = 2,
						.responder_resources = 8, .initiator_depth = 8 };
		CHECK_RC(rnic_cm_create_id(b.cm, (void *)(uintptr_t)(i + 1), &b.xid[i]), 0);
		CHECK_RC(cm_connect_a(b.xid[i], b.xqp[i], port, &p), 0);
	}
	for (int req = 0, est = 0; req < N || est < N;) {
		get_event(a.cm, &ev, "A");
		if (ev.type == RNIC_CM_EVENT_CONNECT_REQUEST) {
			int i = ev.private_data[1];
			CHECK(i < N && a.xid[i] == NULL, "request %d", i);
			a.xid[i] = ev.id;
			struct rnic_cm_conn_param p = { .responder_resources = 8, .initiator_depth = 8 };
			CHECK_RC(rnic_cm_accept(ev.id, a.xqp[i], &p), 0);
			req++;
		} else {
			CHECK(ev.type == RNIC_CM_EVENT_ESTABLISHED, "A: %s (status %d)",
			      rnic_cm_event_str(ev.type), ev.status);
			est++;
		}
	}
	for (int i = 0; i < N; i++)
		expect_event(b.cm, RNIC_CM_EVENT_ESTABLISHED, &ev, "B");
	/* interleave the posts over the QPs: they run on the workers at once */
	uint64_t *res = (uint64_t *)(void *)(b.buf + BASE);
	for (int k = 0; k < K; k++)
		for (int i = 0; i < N; i++)
			CHECK_RC(post_atomic(b.xqp[i], b.mr->lkey, (uint64_t)(i * K + k),
					     &res[i * K + k], 8, (uintptr_t)t, am->rkey, false,
					     (uint64_t)i + 1, 0), 0);
	static struct ibv_wc wc[N * K];
	wait_wc(b.cq, wc, N * K, "fetch&adds");
	uint64_t seen_sum = 0;
	for (int k = 0; k < N * K; k++) {
		CHECK(wc[k].status == IBV_WC_SUCCESS && wc[k].opcode == IBV_WC_FETCH_ADD &&
		      wc[k].byte_len == 8, "fetch&add %llu: status %d opcode %d len %u",
		      (unsigned long long)wc[k].wr_id, wc[k].status, wc[k].opcode, wc[k].byte_len);
		seen_sum += res[wc[k].wr_id];
	}
	uint64_t want = (uint64_t)K * (N * (N + 1) / 2);
	CHECK(*t == want, "the word is %llu after %d fetch&adds, expected the sum %llu",
	      (unsigned long long)*t, N * K, (unsigned long long)want);
	/* every add saw a different prior value: they are all distinct */
	for (int i = 0; i < N; i++)
		for (int k = 1; k < K; k++)
			CHECK(res[i * K + k] > res[i * K + k - 1], "QP %d: add %d saw %llu after %llu",
			      i, k, (unsigned long long)res[i * K + k],
			      (unsigned long long)res[i * K + k - 1]);
	(void)seen_sum;
}

/* More atomics than ORD, and Reads mixed in: the QP holds what ORD does
 * not allow, the responses come back in order. */
static void t_atomic_ord(void)
{
	enum { K = 200 };   /* with the Reads, within the SQ's 256 */
	struct opts o = DEF;
	o.ird = o.ord = 4;
	pair_up(&o);
	struct ibv_mr *am;
	uint64_t *t = atomic_target(&am, ACC_ALL | IBV_ACCESS_REMOTE_ATOMIC, 0);
	CHECK(b.ord <= 4, "B's ORD %u", b.ord);
	uint64_t *res = (uint64_t *)(void *)(b.buf + BASE);
	fill(a.buf + 8 * MiB + 1024, 64, 9);
	for (int k = 0; k < K; k++) {
		if (k % 10 == 5)
			CHECK_RC(post1(&b, IBV_WR_RDMA_READ, 100000 + (uint64_t)k,
				       b.buf + 2 * MiB + (size_t)k * 64, 64,
				       (uintptr_t)a.buf + 8 * MiB + 1024, am->rkey, IBV_SEND_SIGNALED), 0);
		CHECK_RC(post_atomic(b.qp, b.mr->lkey, (uint64_t)k, &res[k], 8, (uintptr_t)t,
				     am->rkey, false, 1, 0), 0);
	}
	for (int k = 0; k < K; k++) {
		if (k % 10 == 5) {
			expect_wc(b.cq, b.qp, 100000 + (uint64_t)k, IBV_WC_RDMA_READ, IBV_WC_SUCCESS,
				  64, "read between atomics");
			CHECK_DATA(b.buf + 2 * MiB + (size_t)k * 64, a.buf + 8 * MiB + 1024, 64,
				   "read between atomics");
		}
		expect_wc(b.cq, b.qp, (uint64_t)k, IBV_WC_FETCH_ADD, IBV_WC_SUCCESS, 8, "fetch&add");
		CHECK(res[k] == (uint64_t)k, "fetch&add %d saw %llu", k, (unsigned long long)res[k]);
	}
	CHECK(*t == K, "the word is %llu", (unsigned long long)*t);
}

/* An atomic A must refuse: a Terminate, both ends disconnect, the word
 * stays, B's atomic completes with an error. */
static void atomic_fault(bool misaligned)
{
	pair_up(&DEF);
	struct ibv_mr *am;
	int acc = misaligned ? IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_ATOMIC :
			       IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
	uint64_t *t = atomic_target(&am, acc, 1000);
	uint64_t *res = (uint64_t *)(void *)(b.buf + BASE);
	*res = 0x33;
	uintptr_t raddr = (uintptr_t)t + (misaligned ? 4 : 0);
	CHECK_RC(post_atomic(b.qp, b.mr->lkey, 1, res, 8, raddr, am->rkey, !misaligned, 1000, 5), 0);
	struct rnic_cm_event ev;
	expect_event(a.cm, RNIC_CM_EVENT_DISCONNECTED, &ev, "A");
	CHECK(ev.status == -EPROTO, "A (sent the Terminate): DISCONNECTED status %d", ev.status);
	expect_event(b.cm, RNIC_CM_EVENT_DISCONNECTED, &ev, "B");
	CHECK(ev.status == -EPROTO || (faults && ev.status == -ECONNRESET),
	      "B: DISCONNECTED status %d", ev.status);
	bool term_lost = ev.status == -ECONNRESET;
	struct ibv_wc wc = expect_wc(b.cq, b.qp, 1, ANY, ANY, ANY, "refused atomic");
	CHECK(wc.status != IBV_WC_SUCCESS, "a refused atomic completed successfully");
	CHECK(*t == 1000 && *res == 0x33, "word %llu result %#llx after a refused atomic",
	      (unsigned long long)*t, (unsigned long long)*res);
	CHECK_UNTOUCHED(a.buf + 8 * MiB, 64, 0x5a, "below the word");
	struct rnic_qp_stats qa, qb;
	rnic_qp_stats(a.qp, &qa);
	rnic_qp_stats(b.qp, &qb);
	CHECK(qa.terminates_out == 1 && qb.terminates_in == (term_lost ? 0u : 1u),
	      "Terminates: A out %llu, B in %llu", (unsigned long long)qa.terminates_out,
	      (unsigned long long)qb.terminates_in);
}

static void t_atomic_misaligned(void) { atomic_fault(true); }
static void t_atomic_no_right(void) { atomic_fault(false); }

/* --- seed 002: a byte stream switches to RDMA mode with data in flight ------------------- */

#define STREAM_LEN (4 * MiB)   /* more than the window: still in flight at the switch */
static const char stream_marker[] = "--- now RDMA ---";
#define MARK_LEN (sizeof(stream_marker) - 1)

static struct {
	struct rnic_tcp_conn *ac, *bc;
	volatile int accepted, connected, attach_a, attach_b, a_closed;
	volatile int rc_a, rc_b;
	uint64_t got, bad, sent;
	uint8_t mark[MARK_LEN];
	uint8_t early[4096];
	size_t early_len;
} ss;
static uint16_t stream_port;   /* TCP listener to remove in the cleanup */

static uint8_t stream_byte(uint64_t i) { return (uint8_t)(i * 13 + (i >> 11)); }

static void *ss_accept(struct rnic_tcp_conn *c, void *ctx)
{
	(void)ctx;
	ss.ac = c;
	__atomic_store_n(&ss.accepted, 1, __ATOMIC_RELEASE);
	return &ss;
}

/* A, on its worker: check the stream; at the marker hand the rest to MPA. */
static void ss_recv(struct rnic_tcp_conn *c, void *ctx, struct rte_mbuf *m)
{
	(void)ctx;
	for (struct rte_mbuf *x = m; x != NULL; x = x->next) {
		const uint8_t *p = rte_pktmbuf_mtod(x, const uint8_t *);
		for (uint16_t i = 0; i < x->data_len; i++, ss.got++) {
			if (ss.got < STREAM_LEN)
				ss.bad += p[i] != stream_byte(ss.got);
			else if (ss.got < STREAM_LEN + MARK_LEN)
				ss.mark[ss.got - STREAM_LEN] = p[i];
			else if (ss.early_len < sizeof(ss.early))
				ss.early[ss.early_len++] = p[i];
		}
	}
	rte_pktmbuf_free(m);
	if (ss.attach_a || ss.got < STREAM_LEN + MARK_LEN)
		return;
	ss.attach_a = 1;
	if (memcmp(ss.mark, stream_marker, MARK_LEN) != 0) {
		ss.rc_a = -EBADMSG;
		return;
	}
	ss.rc_a = rnic_cm_attach_stream(a.id, c, false, NULL, NULL, ss.early, ss.early_len);
}

static void ss_connected(struct rnic_tcp_conn *c, void *ctx)
{
	(void)c;
	(void)ctx;
	__atomic_store_n(&ss.connected, 1, __ATOMIC_RELEASE);
}
static void ss_noop(struct rnic_tcp_conn *c, void *ctx) { (void)c; (void)ctx; }
static void ss_closed(struct rnic_tcp_conn *c, void *ctx, int e)
{
	(void)c;
	(void)ctx;
	(void)e;
	if (c == ss.ac)
		ss.a_closed = 1;
}
static const struct rnic_tcp_ops ss_a_ops = { .accept = ss_accept, .recv = ss_recv,
					      .eof = ss_noop, .closed = ss_closed };
static const struct rnic_tcp_ops ss_b_ops = { .connected = ss_connected, .sent = ss_noop,
					      .eof = ss_noop, .closed = ss_closed };

static void ss_connect(struct rnic_worker *w, void *arg)
{
	(void)arg;
	ss.rc_b = tcp_connect_a(w, stream_port, &ss_b_ops, NULL, &ss.bc);
}

/* B, on its worker: queue what the send buffer takes; after the marker,
 * switch in the same step, so the MPA request follows it at once. */
static void ss_pump(struct rnic_worker *w, void *arg)
{
	(void)w;
	(void)arg;
	uint64_t total = STREAM_LEN + MARK_LEN;
	uint16_t mss = rnic_tcp_mss(ss.bc);
	while (ss.sent < total) {
		uint32_t n = (uint32_t)(total - ss.sent < mss ? total - ss.sent : mss);
		if (ss.sent < STREAM_LEN && ss.sent + n > STREAM_LEN)
			n = (uint32_t)(STREAM_LEN - ss.sent);   /* the marker in its own segment */
		if (rnic_tcp_send_space(ss.bc) < n)
			return;
		struct rte_mbuf *m = rte_pktmbuf_alloc(rnic_tcp_pool(ss.bc));
		if (m == NULL)
			return;
		uint8_t *p = (uint8_t *)rte_pktmbuf_append(m, (uint16_t)n);
		for (uint32_t i = 0; i < n; i++)
			p[i] = ss.sent + i < STREAM_LEN ? stream_byte(ss.sent + i) :
			       (uint8_t)stream_marker[ss.sent + i - STREAM_LEN];
		if (rnic_tcp_send(ss.bc, m) != 0) {
			rte_pktmbuf_free(m);
			return;
		}
		ss.sent += n;
	}
	const char pd[] = "switching";
	struct rnic_cm_conn_param p = { .private_data = pd, .private_data_len = sizeof(pd),
					.responder_resources = 16, .initiator_depth = 16 };
	ss.rc_b = rnic_cm_attach_stream(b.id, ss.bc, true, b.qp, &p, NULL, 0);
	ss.attach_b = 1;
}

static void t_stream_switch(void)
{
	struct rnic_cm_event ev;
	memset(&ss, 0, sizeof(ss));
	end_init(&a, "A", CA, bufA, &DEF);
	end_init(&b, "B", CB, bufB, &DEF);
	uint16_t port = next_port++;
	CHECK_RC(rnic_tcp_listen(SA, port, &ss_a_ops, NULL, 4), 0);
	stream_port = port;
	CHECK_RC(rnic_cm_create_id(a.cm, &a, &a.id), 0);
	CHECK_RC(rnic_cm_create_id(b.cm, &b, &b.id), 0);
	CHECK_RC(rnic_worker_call_sync(rnic_stack_worker(SB, 0), ss_connect, NULL), 0);
	CHECK_RC(ss.rc_b, 0);
	double t0 = now_s();
	/* through the injector the handshake's last ACK may be lost; with SYN
	 * cookies A then has no connection, and B, waiting for A, sends
	 * nothing that would carry the cookie again (issue 3) */
	if (faults)
		known_bug = BUG_COOKIE_ACK;
	while (!__atomic_load_n(&ss.connected, __ATOMIC_ACQUIRE) ||
	       !__atomic_load_n(&ss.accepted, __ATOMIC_ACQUIRE)) {
		CHECK(now_s() - t0 < HANG_S, "TCP connection not up in %d s (hang guard)", HANG_S);
		usleep(1000);
	}
	known_bug = NULL;
	t0 = now_s();
	while (!ss.attach_b) {
		CHECK_RC(rnic_worker_call_sync(rnic_stack_worker(SB, 0), ss_pump, NULL), 0);
		CHECK(now_s() - t0 < HANG_S, "stream not queued in %d s (hang guard)", HANG_S);
		if (!ss.attach_b)
			usleep(200);
	}
	CHECK(ss.rc_b == 0, "active rnic_cm_attach_stream = %d", ss.rc_b);
	expect_event(a.cm, RNIC_CM_EVENT_CONNECT_REQUEST, &ev, "A");
	CHECK(ss.attach_a && ss.rc_a == 0, "passive attach: done %d rc %d", ss.attach_a, ss.rc_a);
	printf("    A switched after %llu stream bytes with %zu early bytes\n",
	       (unsigned long long)ss.got - ss.early_len, ss.early_len);
	CHECK(ss.got == STREAM_LEN + MARK_LEN + ss.early_len, "A read %llu bytes",
	      (unsigned long long)ss.got);
	CHECK(ss.bad == 0, "%llu stream bytes wrong", (unsigned long long)ss.bad);
	CHECK(ev.id == a.id, "CONNECT_REQUEST on id %p, expected %p", (void *)ev.id, (void *)a.id);
	CHECK(ev.private_data_len == 10 && strcmp((char *)ev.private_data, "switching") == 0,
	      "private data '%.*s'", ev.private_data_len, (char *)ev.private_data);
	struct rnic_cm_conn_param p = { .responder_resources = 16, .initiator_depth = 16 };
	CHECK_RC(rnic_cm_accept(a.id, a.qp, &p), 0);
	expect_event(a.cm, RNIC_CM_EVENT_ESTABLISHED, NULL, "A");
	expect_event(b.cm, RNIC_CM_EVENT_ESTABLISHED, NULL, "B");
	/* RDMA mode on the former stream, both ways */
	do_send(&b, &a, MiB, 1, 3, 1);
	do_send(&a, &b, 4096, 0, 0, 3);
	do_write(&b, &a, 4 * MiB, 5, 7, 5);
	do_read(&b, &a, MiB, 2, 0, 7);
	do_read(&a, &b, 65536, 0, 1, 9);
	CHECK_RC(rnic_cm_disconnect(a.id), 0);
	expect_event(a.cm, RNIC_CM_EVENT_DISCONNECTED, &ev, "A");
	expect_event(b.cm, RNIC_CM_EVENT_DISCONNECTED, &ev, "B");
	CHECK(ev.status == 0, "B: DISCONNECTED status %d after a graceful close", ev.status);
}

/* --- raw TCP peers: mute, half-talking or scripted MPA ends --------------------------------- */

/*
 * A peer the case plays itself on rnic's TCP API, to be what no rnic end
 * would be: one that never answers, stops in the middle of a frame, or
 * writes MPA frames and FPDUs by hand. Its callbacks run on its worker;
 * the case reads what it received (in[], in_len) and sends through
 * raw_send().
 */
struct raw {
	struct rnic_tcp_conn *c;
	volatile int up, closed, err;
	const uint8_t *say;            /* sent as soon as the connection is up */
	size_t say_len;
	uint8_t in[8192];
	size_t in_len;                 /* written by the worker (release) */
	uint8_t tail[128];             /* the last bytes received, of total */
	size_t total;
	double closed_at;
	/* keep: hold what arrives instead of freeing it (a receiver that
	 * does not drain); kept_len: its bytes (release) */
	int keep;
	struct rte_mbuf *kept[256];
	unsigned n_kept;
	size_t kept_len;
};
static struct raw raw[2];
static uint16_t raw_port;          /* TCP listener of a raw peer, for the cleanup */

static void raw_say(struct raw *r, const void *p, size_t n)
{
	if (n == 0 || r->c == NULL)
		return;
	struct rte_mbuf *m = rte_pktmbuf_alloc(rnic_tcp_pool(r->c));
	if (m == NULL)
		return;
	memcpy(rte_pktmbuf_append(m, (uint16_t)n), p, n);
	if (rnic_tcp_send(r->c, m) != 0)
		rte_pktmbuf_free(m);
}

static void raw_up(struct raw *r)
{
	__atomic_store_n(&r->up, 1, __ATOMIC_RELEASE);
	raw_say(r, r->say, r->say_len);
}

static void *raw_accept(struct rnic_tcp_conn *c, void *lctx)
{
	struct raw *r = lctx;
	r->c = c;
	raw_up(r);
	return r;
}

static void raw_connected(struct rnic_tcp_conn *c, void *ctx)
{
	(void)c;
	raw_up(ctx);
}

static void raw_recv(struct rnic_tcp_conn *c, void *ctx, struct rte_mbuf *m)
{
	(void)c;
	struct raw *r = ctx;
	size_t n = __atomic_load_n(&r->in_len, __ATOMIC_RELAXED);
	for (struct rte_mbuf *x = m; x != NULL; x = x->next) {
		size_t k = x->data_len;
		if (k > sizeof(r->in) - n)
			k = sizeof(r->in) - n;
		memcpy(r->in + n, rte_pktmbuf_mtod(x, const uint8_t *), k);
		n += k;
		for (uint16_t i = 0; i < x->data_len; i++)
			r->tail[r->total++ % sizeof(r->tail)] =
				rte_pktmbuf_mtod(x, const uint8_t *)[i];
	}
	__atomic_store_n(&r->in_len, n, __ATOMIC_RELEASE);
	if (__atomic_load_n(&r->keep, __ATOMIC_ACQUIRE) && r->n_kept < RTE_DIM(r->kept)) {
		r->kept[r->n_kept++] = m;
		__atomic_store_n(&r->kept_len, r->kept_len + rte_pktmbuf_pkt_len(m),
				 __ATOMIC_RELEASE);
		return;
	}
	rte_pktmbuf_free(m);
}

static void raw_noop(struct rnic_tcp_conn *c, void *ctx) { (void)c; (void)ctx; }

/* The other end closed: close ours too, as a well-behaved peer would. */
static void raw_eof(struct rnic_tcp_conn *c, void *ctx)
{
	(void)ctx;
	rnic_tcp_close(c);
}

static void raw_closed(struct rnic_tcp_conn *c, void *ctx, int err)
{
	(void)c;
	struct raw *r = ctx;
	r->c = NULL;
	r->err = err;
	r->closed_at = now_s();
	__atomic_store_n(&r->closed, 1, __ATOMIC_RELEASE);
}

static const struct rnic_tcp_ops raw_ops = {
	.accept = raw_accept, .connected = raw_connected, .recv = raw_recv,
	.sent = raw_noop, .eof = raw_eof, .closed = raw_closed,
};

struct raw_call {
	struct raw *r;
	uint16_t port;
	const void *p;
	size_t n;
	int rc;
};

static void raw_connect_on(struct rnic_worker *w, void *arg)
{
	struct raw_call *a = arg;
	a->rc = tcp_connect_a(w, a->port, &raw_ops, a->r, &a->r->c);
}

/* @p r connects from B to A's @p port. */
static void raw_connect(struct raw *r, uint16_t port)
{
	struct raw_call a = { .r = r, .port = port };
	CHECK_RC(rnic_worker_call_sync(rnic_stack_worker(SB, 0), raw_connect_on, &a), 0);
	CHECK_RC(a.rc, 0);
}

/* A raw peer listens on A (it takes one connection). */
static uint16_t raw_listen(struct raw *r)
{
	uint16_t port = next_port++;
	CHECK_RC(rnic_tcp_listen(SA, port, &raw_ops, r, 4), 0);
	raw_port = port;
	return port;
}

static void raw_send_on(struct rnic_worker *w, void *arg)
{
	(void)w;
	struct raw_call *a = arg;
	a->rc = a->r->c != NULL ? 0 : -ENOTCONN;
	raw_say(a->r, a->p, a->n);
}

static void raw_send(struct raw *r, const void *p, size_t n)
{
	struct raw_call a = { .r = r, .p = p, .n = n };
	CHECK(r->c != NULL, "raw peer: no connection to send on");
	CHECK_RC(rnic_worker_call_sync(rnic_tcp_worker(r->c), raw_send_on, &a), 0);
	CHECK_RC(a.rc, 0);
}

/* Wait until @p r holds @p n bytes (hang guard). */
static void raw_wait_bytes(struct raw *r, size_t n, const char *what)
{
	double t0 = now_s();
	while (__atomic_load_n(&r->in_len, __ATOMIC_ACQUIRE) < n) {
		CHECK(now_s() - t0 < HANG_S, "%s: %zu of %zu bytes in %d s (hang guard)", what,
		      r->in_len, n, HANG_S);
		usleep(1000);
	}
}

/* Wait until @p r is closed (hang guard). A reset is sent once and never
 * retransmitted: when the injector drops it, the peer learns of it only by
 * sending, as a real one would, so with faults on and @p on set (the stack
 * of the raw peer) it sends a byte a second once @p quiet_s passed; the
 * other end, which has no connection any more, answers with another
 * reset. */
static void raw_wait_closed(struct raw *r, struct rnic_stack *on, double quiet_s,
			   const char *what)
{
	double t0 = now_s(), poked = t0;
	while (!__atomic_load_n(&r->closed, __ATOMIC_ACQUIRE)) {
		CHECK(now_s() - t0 < HANG_S, "%s: still open after %d s (hang guard)", what, HANG_S);
		if (faults && on != NULL && now_s() - t0 > quiet_s && now_s() - poked > 1.0) {
			static const uint8_t poke = 'x';
			struct raw_call a = { .r = r, .p = &poke, .n = 1 };
			/* the one worker of stack @p on owns the raw peer;
			 * raw_send_on looks at r->c there, where it cannot go
			 * away meanwhile */
			rnic_worker_call_sync(rnic_stack_worker(on, 0), raw_send_on, &a);
			poked = now_s();
		}
		usleep(1000);
	}
}

static void raw_abort_on(struct rnic_worker *w, void *arg)
{
	(void)w;
	struct raw *r = arg;
	if (r->c != NULL && !r->closed) {
		rnic_tcp_abort(r->c);
		r->c = NULL;
	}
}

/* Free what a keeping raw peer holds (on its worker). */
static void raw_release_on(struct rnic_worker *w, void *arg)
{
	(void)w;
	struct raw *r = arg;
	__atomic_store_n(&r->keep, 0, __ATOMIC_RELEASE);
	for (unsigned i = 0; i < r->n_kept; i++)
		rte_pktmbuf_free(r->kept[i]);
	r->n_kept = 0;
}

/* Cleanup: reset raw peers a case left open, forget them. */
static void raw_reset(void)
{
	for (unsigned i = 0; i < RTE_DIM(raw); i++) {
		raw_release_on(NULL, &raw[i]);
		if (raw[i].c != NULL && !raw[i].closed)
			rnic_worker_call_sync(rnic_tcp_worker(raw[i].c), raw_abort_on, &raw[i]);
		memset(&raw[i], 0, sizeof(raw[i]));
	}
}

/* --- MPA startup timeout -------------------------------------------------------------------- */

#define MPA_TMO_MS 300

/* A peer that accepts TCP and never answers the MPA request: B's connect
 * ends in UNREACHABLE/-ETIMEDOUT after the configured time, the QP is in
 * ERR, the connection reset, the stack's active timeout counter +1. */
static void t_mpa_timeout_active(void)
{
	struct rnic_cm_event ev;
	struct rnic_iw_stats s0, s1;
	end_init(&b, "B", CB, bufB, &DEF);
	uint16_t port = raw_listen(&raw[0]);
	rnic_iw_stats(SB, &s0);
	struct rnic_cm_conn_param p = { .responder_resources = 4, .initiator_depth = 4,
					.mpa_timeout_ms = MPA_TMO_MS };
	CHECK_RC(rnic_cm_create_id(b.cm, &b, &b.id), 0);
	double t0 = now_s();
	CHECK_RC(cm_connect_a(b.id, b.qp, port, &p), 0);
	expect_event(b.cm, RNIC_CM_EVENT_UNREACHABLE, &ev, "B");
	double dt = now_s() - t0;
	CHECK(ev.status == -ETIMEDOUT, "B: UNREACHABLE status %d, expected -ETIMEDOUT", ev.status);
	/* what fired is the MPA timer: the status, the counter below and the
	 * request the mute peer got say so; how long it took is only printed */
	printf("    UNREACHABLE %.3f s after the connect (MPA timeout %d ms)\n", dt, MPA_TMO_MS);
	CHECK(b.qp->state == IBV_QPS_ERR, "B: QP state %d after the timeout", b.qp->state);
	CHECK(raw[0].up, "the mute peer never saw the connection");
	raw_wait_closed(&raw[0], SA, 2.0, "mute peer");
	CHECK(raw[0].err == -ECONNRESET, "mute peer: closed with %d, expected a reset",
	      raw[0].err);
	/* it did get the request: 20 bytes of header at least */
	CHECK(raw[0].in_len >= 20 && memcmp(raw[0].in, "MPA ID Req Frame", 16) == 0,
	      "mute peer got %zu bytes, not an MPA request", raw[0].in_len);
	rnic_iw_stats(SB, &s1);
	CHECK(s1.mpa_timeouts_active == s0.mpa_timeouts_active + 1,
	      "mpa_timeouts_active %llu -> %llu", (unsigned long long)s0.mpa_timeouts_active,
	      (unsigned long long)s1.mpa_timeouts_active);
}

/* A listener's side: a client that connects and says nothing, and one that
 * stops in the middle of its request, are both reset after the stack's
 * timeout, counted, and never reach the application. */
static void t_mpa_timeout_passive(void)
{
	static const char partial[] = "MPA ID Req";   /* 10 of the 20 header bytes */
	struct rnic_cm_event ev;
	struct rnic_iw_stats s0, s1;
	uint16_t port;
	end_init(&a, "A", CA, bufA, &DEF);
	rnic_iw_set_mpa_timeout(SA, MPA_TMO_MS);
	listen_new(&port);
	rnic_iw_stats(SA, &s0);
	raw[1].say = (const uint8_t *)partial;
	raw[1].say_len = sizeof(partial) - 1;
	double t0 = now_s();
	raw_connect(&raw[0], port);
	raw_connect(&raw[1], port);
	/* a mute client's handshake may lose its last ACK in the injector:
	 * A then has no connection to time out (issue 3) */
	if (faults)
		known_bug = BUG_COOKIE_ACK;
	raw_wait_closed(&raw[0], NULL, 0, "mute client");
	known_bug = NULL;
	raw_wait_closed(&raw[1], SB, MPA_TMO_MS / 1000.0 + 2, "half-request client");
	CHECK(raw[0].err == -ECONNRESET && raw[1].err == -ECONNRESET,
	      "clients closed with %d and %d, expected resets", raw[0].err, raw[1].err);
	double d0 = raw[0].closed_at - t0, d1 = raw[1].closed_at - t0;
	CHECK(d0 >= MPA_TMO_MS / 1000.0 * 0.9 && d1 >= MPA_TMO_MS / 1000.0 * 0.9 &&
	      d0 < MPA_TMO_MS / 1000.0 + 5 && d1 < MPA_TMO_MS / 1000.0 + 5,
	      "reset after %.3f and %.3f s, timeout %d ms", d0, d1, MPA_TMO_MS);
	CHECK(raw[0].in_len == 0 && raw[1].in_len == 0, "A sent %zu/%zu bytes", raw[0].in_len,
	      raw[1].in_len);
	rnic_iw_stats(SA, &s1);
	CHECK(s1.mpa_timeouts_passive == s0.mpa_timeouts_passive + 2,
	      "mpa_timeouts_passive %llu -> %llu", (unsigned long long)s0.mpa_timeouts_passive,
	      (unsigned long long)s1.mpa_timeouts_passive);
	int rc = rnic_cm_get_event(a.cm, &ev, 100);
	CHECK(rc == -EAGAIN, "A: CM event %s for a client that never finished its request",
	      rc == 0 ? rnic_cm_event_str(ev.type) : "?");
}

/* --- lazily allocated endpoint state (issue 21) ----------------------------------------- */

/* Wait (hang guard only) until @p st holds @p want endpoints with MPA
 * startup state: the worker frees it right after the ESTABLISHED event. */
static void wait_startup_live(struct rnic_stack *st, uint64_t want, const char *who)
{
	struct rnic_iw_stats s;
	for (int i = 0; i < HANG_S * 1000; i++) {
		rnic_iw_stats(st, &s);
		if (s.startup_live == want)
			return;
		usleep(1000);
	}
	CHECK(s.startup_live == want, "%s: %llu endpoints hold MPA startup state, expected %llu "
	      "(hang guard)", who, (unsigned long long)s.startup_live, (unsigned long long)want);
}

/*
 * An idle connected QP keeps no MPA startup state: both ends free it once
 * in RDMA mode (plain, and peer-to-peer with a Read RTR, whose responder
 * enters RDMA mode only when the RTR is in); the ORD table a Read needs
 * comes with the first Read, and the connection works throughout.
 */
static void startup_freed_case(bool p2p)
{
	struct rnic_iw_stats a0, b0, a1, b1;
	struct opts o = DEF;
	uint16_t port;
	o.p2p = p2p;
	o.rtr = p2p ? RNIC_CM_RTR_READ : 0;
	rnic_iw_stats(SA, &a0);
	rnic_iw_stats(SB, &b0);
	end_init(&a, "A", CA, bufA, &o);
	end_init(&b, "B", CB, bufB, &o);
	listen_new(&port);
	connect_ab(port, &o);
	wait_startup_live(SA, a0.startup_live, "A");
	wait_startup_live(SB, b0.startup_live, "B");
	rnic_iw_stats(SA, &a1);
	rnic_iw_stats(SB, &b1);
	CHECK(a1.alloc_failures == a0.alloc_failures && b1.alloc_failures == b0.alloc_failures,
	      "allocation failures A %llu -> %llu, B %llu -> %llu",
	      (unsigned long long)a0.alloc_failures, (unsigned long long)a1.alloc_failures,
	      (unsigned long long)b0.alloc_failures, (unsigned long long)b1.alloc_failures);
	do_read(&b, &a, 4096, 0, 0, 10);
	do_write(&a, &b, 65536, 1, 3, 20);
	do_send(&b, &a, 100, 0, 0, 30);
	do_read(&a, &b, 65536, 0, 0, 40);
}

static void t_startup_freed(void) { startup_freed_case(false); }
static void t_startup_freed_p2p(void) { startup_freed_case(true); }

/*
 * Lazy allocations that find no memory (rnic_iw_fail_allocs) end the
 * operation that wanted it with a clear error and a counter, never a
 * crash or a hang: the active side's startup state (connect fails with
 * -ENOMEM), the passive side's (the TCP connection is refused with a
 * reset: B's connect ends in an error event), the ORD table of the first
 * Read (that Read completes with IBV_WC_GENERAL_ERR, the next one works),
 * the buffer of the first Terminate (the stream ends with a reset, no
 * Terminate sent, the error -EPROTO all the same), the receive state of
 * the first Send received (a reset, -ENOMEM, the receive flushed).
 */
/* B's next work request (@p op, wr_id @p id) finds the allocation it
 * makes on first use failing: it completes in error, counted once. */
static void b_first_use_fails(struct end *b, enum ibv_wr_opcode op, uint64_t id,
			      enum ibv_wc_opcode wop, uint8_t *dst, uint8_t *src, uint32_t rkey,
			      const char *what)
{
	struct rnic_iw_stats s0, s1;

	rnic_iw_stats(SB, &s0);
	rnic_iw_fail_allocs(SB, 1);
	CHECK_RC(post1(b, op, id, dst, 64, (uintptr_t)src, rkey, IBV_SEND_SIGNALED), 0);
	expect_wc(b->cq, b->qp, id, wop, IBV_WC_GENERAL_ERR, ANY, what);
	rnic_iw_stats(SB, &s1);
	CHECK(s1.alloc_failures == s0.alloc_failures + 1, "B: alloc_failures %llu -> %llu",
	      (unsigned long long)s0.alloc_failures, (unsigned long long)s1.alloc_failures);
}

/* New QPs on both ends, connected again; the old ones' completions and
 * events dropped. */
static void reconnect(uint16_t port)
{
	struct rnic_cm_event ev;
	struct ibv_wc wc;
	for (struct end *e = &a; e != NULL; e = e == &a ? &b : NULL) {
		CHECK_RC(rnic_cm_destroy_id(e->id), 0);
		e->id = NULL;
		CHECK_RC(rnic_destroy_qp(e->qp), 0);
		e->qp = make_qp(e, &DEF, NULL);
	}
	while (ibv_poll_cq(a.cq, 1, &wc) > 0 || ibv_poll_cq(b.cq, 1, &wc) > 0)
		;
	while (rnic_cm_get_event(a.cm, &ev, 0) == 0 || rnic_cm_get_event(b.cm, &ev, 0) == 0)
		;
	connect_ab(port, &DEF);
}

/* A's first received Send finds no memory for the receive it takes: the
 * stream ends with a reset (-ENOMEM at A), the receive is flushed. */
static void lazy_recv_fails(uint16_t port)
{
	struct rnic_iw_stats a0, a1;
	struct rnic_cm_event ev;
	reconnect(port);
	rnic_iw_stats(SA, &a0);
	recv1(&a, 60, a.buf + BASE, 256);
	rnic_iw_fail_allocs(SA, 1);
	CHECK_RC(post1(&b, IBV_WR_SEND, 61, b.buf + BASE, 64, 0, 0, IBV_SEND_SIGNALED), 0);
	expect_event(a.cm, RNIC_CM_EVENT_DISCONNECTED, &ev, "A");
	CHECK(ev.status == -ENOMEM, "A (no memory for the receive): DISCONNECTED status %d, "
	      "expected -ENOMEM", ev.status);
	expect_event(b.cm, RNIC_CM_EVENT_DISCONNECTED, &ev, "B");
	expect_wc(a.cq, a.qp, 60, ANY, IBV_WC_WR_FLUSH_ERR, ANY, "A's receive");
	rnic_iw_stats(SA, &a1);
	CHECK(a1.alloc_failures == a0.alloc_failures + 1, "A: alloc_failures %llu -> %llu",
	      (unsigned long long)a0.alloc_failures, (unsigned long long)a1.alloc_failures);
	CHECK(a.qp->state == IBV_QPS_ERR, "A's QP in state %d, expected ERR", a.qp->state);
}

/* A new connection: B's Write with a bad rkey makes A refuse it, and
 * A's Terminate buffer (its first) finds no memory. */
static void lazy_term_fails(uint16_t port)
{
	struct rnic_iw_stats a0, a1;
	struct rnic_cm_event ev;
	reconnect(port);
	do_write(&a, &b, 4096, 0, 0, 50);   /* A's job ring is there */
	rnic_iw_stats(SA, &a0);
	rnic_iw_fail_allocs(SA, 1);
	CHECK_RC(post1(&b, IBV_WR_RDMA_WRITE, 6, b.buf + BASE, 64, (uintptr_t)(a.buf + BASE),
		       a.mr->rkey ^ 0xffu, IBV_SEND_SIGNALED), 0);
	expect_event(a.cm, RNIC_CM_EVENT_DISCONNECTED, &ev, "A");
	CHECK(ev.status == -EPROTO, "A (no Terminate buffer): DISCONNECTED status %d, expected "
	      "-EPROTO", ev.status);
	expect_event(b.cm, RNIC_CM_EVENT_DISCONNECTED, &ev, "B");
	rnic_iw_stats(SA, &a1);
	CHECK(a1.alloc_failures == a0.alloc_failures + 1, "A: alloc_failures %llu -> %llu",
	      (unsigned long long)a0.alloc_failures, (unsigned long long)a1.alloc_failures);
	struct rnic_qp_stats qa;
	rnic_qp_stats(a.qp, &qa);
	CHECK(qa.terminates_out == 0, "A sent %llu Terminates without a buffer",
	      (unsigned long long)qa.terminates_out);
	CHECK(a.qp->state == IBV_QPS_ERR, "A's QP in state %d, expected ERR", a.qp->state);
}

static void t_lazy_alloc_fail(void)
{
	struct rnic_iw_stats a0, b0, a1, b1;
	struct rnic_cm_event ev;
	uint16_t port;
	rnic_iw_stats(SA, &a0);
	rnic_iw_stats(SB, &b0);
	end_init(&a, "A", CA, bufA, &DEF);
	end_init(&b, "B", CB, bufB, &DEF);
	listen_new(&port);
	/* B's endpoint at connect */
	rnic_iw_fail_allocs(SB, 1);
	CHECK_RC(rnic_cm_create_id(b.cm, &b, &b.id), 0);
	CHECK_RC(cm_connect_a(b.id, b.qp, port, NULL), -ENOMEM);
	rnic_iw_stats(SB, &b1);
	CHECK(b1.alloc_failures == b0.alloc_failures + 1, "B: alloc_failures %llu -> %llu",
	      (unsigned long long)b0.alloc_failures, (unsigned long long)b1.alloc_failures);
	CHECK_RC(rnic_cm_destroy_id(b.id), 0);
	b.id = NULL;
	CHECK_RC(rnic_destroy_qp(b.qp), 0);
	b.qp = make_qp(&b, &DEF, NULL);
	/* the endpoint's other two allocations at connect: its startup
	 * state, its own counters (freed when the QP is bound); the
	 * endpoint made before is freed again */
	for (uint32_t skip = 1; skip <= 2; skip++) {
		struct rnic_iw_stats s0, s1;
		rnic_iw_stats(SB, &s0);
		rnic_iw_fail_allocs_after(SB, skip, 1);
		CHECK_RC(rnic_cm_create_id(b.cm, &b, &b.id), 0);
		CHECK_RC(cm_connect_a(b.id, b.qp, port, NULL), -ENOMEM);
		rnic_iw_stats(SB, &s1);
		CHECK(s1.alloc_failures == s0.alloc_failures + 1,
		      "B (allocation %u fails): alloc_failures %llu -> %llu", skip + 1,
		      (unsigned long long)s0.alloc_failures, (unsigned long long)s1.alloc_failures);
		CHECK(s1.startup_live == s0.startup_live, "B (allocation %u fails): startup_live "
		      "%llu -> %llu", skip + 1, (unsigned long long)s0.startup_live,
		      (unsigned long long)s1.startup_live);
		CHECK_RC(rnic_cm_destroy_id(b.id), 0);
		b.id = NULL;
		CHECK_RC(rnic_destroy_qp(b.qp), 0);
		b.qp = make_qp(&b, &DEF, NULL);
	}
	rnic_iw_fail_allocs(SB, 0);
	/* A's endpoint at accept: the TCP connection is refused */
	rnic_iw_fail_allocs(SA, 1);
	CHECK_RC(rnic_cm_create_id(b.cm, &b, &b.id), 0);
	CHECK_RC(cm_connect_a(b.id, b.qp, port, NULL), 0);
	get_event(b.cm, &ev, "B");
	CHECK(ev.type == RNIC_CM_EVENT_CONNECT_ERROR || ev.type == RNIC_CM_EVENT_UNREACHABLE ||
	      ev.type == RNIC_CM_EVENT_REJECTED, "B: %s (status %d) after A ran out of memory",
	      rnic_cm_event_str(ev.type), ev.status);
	rnic_iw_stats(SA, &a1);
	CHECK(a1.alloc_failures == a0.alloc_failures + 1, "A: alloc_failures %llu -> %llu",
	      (unsigned long long)a0.alloc_failures, (unsigned long long)a1.alloc_failures);
	/* B's MPA request, sent right behind its final ACK, can arrive
	 * after A's reset, pass the SYN cookie check again and bring a
	 * request to A for a connection B has closed (seen here): refuse it */
	while (rnic_cm_get_event(a.cm, &ev, 100) == 0) {
		CHECK(ev.type == RNIC_CM_EVENT_CONNECT_REQUEST, "A: CM event %s (status %d)",
		      rnic_cm_event_str(ev.type), ev.status);
		/* its rc is not checked: B's reset may have closed it already */
		(void)rnic_cm_reject(ev.id, NULL, 0);
		CHECK_RC(rnic_cm_destroy_id(ev.id), 0);
	}
	CHECK_RC(rnic_cm_destroy_id(b.id), 0);
	b.id = NULL;
	CHECK_RC(rnic_destroy_qp(b.qp), 0);
	b.qp = make_qp(&b, &DEF, NULL);
	/* connected: B's first Write finds no job ring. The Write fails,
	 * and with it the QP (an error completion puts it in ERR) */
	uint8_t *src = a.buf + BASE, *dst = b.buf + BASE;
	connect_ab(port, &DEF);
	wait_startup_live(SB, b0.startup_live, "B");
	b_first_use_fails(&b, IBV_WR_RDMA_WRITE, 4, IBV_WC_RDMA_WRITE, dst, src, a.mr->rkey,
			  "Write without a job ring");
	/* a new connection: B's first Read finds no ORD table */
	reconnect(port);
	do_write(&b, &a, 4096, 0, 0, 10);
	b_first_use_fails(&b, IBV_WR_RDMA_READ, 5, IBV_WC_RDMA_READ, dst, src, a.mr->rkey,
			  "Read without an ORD table");
	lazy_term_fails(port);
	lazy_recv_fails(port);
}

/*
 * Telemetry by query (issue 21): /rnic/qp,QPN gives one QP's state,
 * queues, counters and, on its worker, the endpoint's MSNs and TCP
 * sequence numbers; /rnic/qps pages through QP numbers, at most COUNT a
 * stack; bad parameters are refused.
 */
static void t_telemetry_qp(void)
{
	char out[16384], cmd[64];
	pair_up(&DEF);
	do_write(&b, &a, 4096, 0, 0, 10);
	snprintf(cmd, sizeof(cmd), "/rnic/qp,%u,%u", b.qp->qp_num, SB->id);
	CHECK(tel_query(cmd, out, sizeof(out)) > 0, "%s: no reply", cmd);
	CHECK(tel_number(out, "qpn") == b.qp->qp_num, "%s: %s", cmd, out);
	CHECK(tel_number(out, "state") == IBV_QPS_RTS, "%s: %s", cmd, out);
	CHECK(strstr(out, "\"ep_state\":\"rts\"") != NULL, "%s: %s", cmd, out);
	CHECK(tel_number(out, "mpa_startup_held") == 0 && tel_number(out, "transport_read") == 1,
	      "%s: %s", cmd, out);
	CHECK(tel_number(out, "tcp_snd_nxt") > 0 && tel_number(out, "tcp_rcv_nxt") > 0,
	      "%s: %s", cmd, out);
	CHECK(tel_number(out, "sq_size") >= DEF.sq && tel_number(out, "ops_out") >= 1,
	      "%s: %s", cmd, out);
	CHECK(tel_number(out, "msn_send") >= 2, "%s: %s", cmd, out);   /* the fence Send */
	/* a page of one QP number per stack; the next page starts behind it */
	CHECK(tel_query("/rnic/qps,0,1", out, sizeof(out)) > 0, "/rnic/qps: no reply");
	CHECK(tel_number(out, "total") >= 1 && tel_number(out, "count") == 1, "/rnic/qps,0,1: %s",
	      out);
	CHECK(strstr(out, "\"qpn\":[") != NULL, "/rnic/qps,0,1: %s", out);
	/* refused: a count over 256, a QPN out of range, not a number */
	static const char *const bad[] = { "/rnic/qps,0,257", "/rnic/qps,0,0", "/rnic/qp,4294967296",
					   "/rnic/qp", "/rnic/qp,x", "/rnic/qp,1,2,3" };
	for (unsigned i = 0; i < RTE_DIM(bad); i++) {
		CHECK(tel_query(bad[i], out, sizeof(out)) > 0, "%s: no reply", bad[i]);
		CHECK(strstr(out, "null") != NULL, "%s: %s", bad[i], out);
	}
}

/* --- peer-to-peer mode: the RTR (RFC 6581) ---------------------------------------------------- */

/*
 * B offers one RTR type; A's listener takes any, so the reply picks that
 * one. B sends the RTR first, A consumes it silently: no completion at
 * either end, no receive taken (A posted one before accepting: the first
 * Send lands in it), the MSNs stay in step, and the counters show one RTR
 * sent by B and received by A.
 */
static void p2p_case(uint8_t rtr)
{
	struct rnic_iw_stats a0, b0, a1, b1;
	struct ibv_wc wc[4];
	struct opts o = DEF;
	uint16_t port;
	o.p2p = true;
	o.rtr = rtr;
	rnic_iw_stats(SA, &a0);
	rnic_iw_stats(SB, &b0);
	end_init(&a, "A", CA, bufA, &o);
	end_init(&b, "B", CB, bufB, &o);
	struct ibv_qp_attr at = { .qp_state = IBV_QPS_INIT };
	CHECK_RC(rnic_modify_qp(a.qp, &at, IBV_QP_STATE), 0);
	recv1(&a, 777, a.buf + BASE, 4096);   /* before the RTR can arrive */
	listen_new(&port);
	connect_ab(port, &o);
	usleep(50 * 1000);   /* a Read RTR's response is back by now */
	rnic_iw_stats(SA, &a1);
	rnic_iw_stats(SB, &b1);
	CHECK(b1.rtr_sent == b0.rtr_sent + 1 && a1.rtr_received == a0.rtr_received + 1,
	      "RTR sent by B %llu -> %llu, received by A %llu -> %llu",
	      (unsigned long long)b0.rtr_sent, (unsigned long long)b1.rtr_sent,
	      (unsigned long long)a0.rtr_received, (unsigned long long)a1.rtr_received);
	CHECK(a1.rtr_sent == a0.rtr_sent && b1.rtr_received == b0.rtr_received,
	      "the responder sent an RTR");
	int na = ibv_poll_cq(a.cq, 4, wc), nb = ibv_poll_cq(b.cq, 4, wc);
	CHECK(na == 0 && nb == 0, "completions after connecting: A %d B %d (first wr_id %llu "
	      "opcode %d byte_len %u)", na, nb, (unsigned long long)wc[0].wr_id, wc[0].opcode,
	      wc[0].byte_len);
	/* the receive posted before the RTR takes the first Send */
	fill(b.buf + BASE, 100, 5);
	CHECK_RC(post1(&b, IBV_WR_SEND, 1, b.buf + BASE, 100, 0, 0, IBV_SEND_SIGNALED), 0);
	expect_wc(b.cq, b.qp, 1, IBV_WC_SEND, IBV_WC_SUCCESS, ANY, "first send");
	expect_wc(a.cq, a.qp, 777, IBV_WC_RECV, IBV_WC_SUCCESS, 100, "first send's receive");
	CHECK_DATA(a.buf + BASE, b.buf + BASE, 100, "first send");
	do_send(&b, &a, 4096, 0, 0, 10);
	do_send(&a, &b, 4096, 1, 3, 20);
	do_write(&b, &a, 65536, 3, 5, 30);
	do_read(&b, &a, 65536, 1, 2, 40);
	do_read(&a, &b, 4096, 0, 0, 50);
}

static void t_p2p_rtr_send(void) { p2p_case(RNIC_CM_RTR_SEND); }
static void t_p2p_rtr_write(void) { p2p_case(RNIC_CM_RTR_WRITE); }
static void t_p2p_rtr_read(void) { p2p_case(RNIC_CM_RTR_READ); }

/* CRC32c (Castagnoli, reflected), as MPA puts it on the wire LSB first. */
static uint32_t crc32c(const uint8_t *p, size_t n)
{
	uint32_t c = 0xffffffffu;
	while (n--) {
		c ^= *p++;
		for (int k = 0; k < 8; k++)
			c = (c >> 1) ^ (0x82f63b78u & (0u - (c & 1)));
	}
	return ~c;
}

/* An MPA rev 2 request from a raw initiator: CRC, the RFC 6581 header with
 * IRD = ORD = 4, P2P and the RTR bits of @p rtr; no private data. */
static size_t mpa_req_p2p(uint8_t *f, uint8_t rtr)
{
	memcpy(f, "MPA ID Req Frame", 16);
	f[16] = 0x40 | 0x10;   /* C, and the RFC 6581 header follows */
	f[17] = 2;             /* Rev */
	f[18] = 0;
	f[19] = 4;             /* PD_Length: the RFC 6581 header alone */
	f[20] = 0x80 | ((rtr & RNIC_CM_RTR_SEND) ? 0x40 : 0);   /* P2P, Z (Send RTR) | IRD */
	f[21] = 4;
	f[22] = ((rtr & RNIC_CM_RTR_WRITE) ? 0x80 : 0) | ((rtr & RNIC_CM_RTR_READ) ? 0x40 : 0);
	f[23] = 4;             /* W (Write RTR), R (Read RTR) | ORD */
	return 24;
}

/* A zero-length FPDU with CRC: an RDMA Write to STag 1 (@p write) or a
 * Send with MSN 1. @return its length. */
static size_t rtr_fpdu(uint8_t *f, bool write)
{
	size_t n;
	memset(f, 0, 32);
	if (write) {
		f[1] = 14;              /* ULPDU_Length: the tagged DDP header */
		f[2] = 0xc1;            /* DDP: T, L, DV 1 */
		f[3] = 0x40;            /* RDMAP: RV 1, RDMA Write */
		f[7] = 1;               /* STag 1, TO 0 */
		n = 16;
	} else {
		f[1] = 18;              /* the untagged DDP header */
		f[2] = 0x41;            /* DDP: L, DV 1 */
		f[3] = 0x43;            /* RDMAP: RV 1, Send */
		f[15] = 1;              /* QN 0, MSN 1, MO 0 */
		n = 20;
	}
	uint32_t c = crc32c(f, n);
	for (int i = 0; i < 4; i++)
		f[n + (size_t)i] = (uint8_t)(c >> (8 * i));
	return n + 4;
}

/* A raw initiator asks A for peer-to-peer mode with the Write RTR; A
 * accepts and its MPA reply is in raw[0].in. @p req: the request's buffer
 * (raw[0] sends from it). */
static void p2p_raw_accepted(uint8_t *req)
{
	struct rnic_cm_event ev;
	uint16_t port;
	end_init(&a, "A", CA, bufA, &DEF);
	listen_new(&port);
	raw[0].say = req;
	raw[0].say_len = mpa_req_p2p(req, RNIC_CM_RTR_WRITE);
	raw_connect(&raw[0], port);
	expect_event(a.cm, RNIC_CM_EVENT_CONNECT_REQUEST, &ev, "A");
	a.id = ev.id;
	struct rnic_cm_conn_param p = { .responder_resources = 4, .initiator_depth = 4 };
	CHECK_RC(rnic_cm_accept(a.id, a.qp, &p), 0);
	raw_wait_bytes(&raw[0], 24, "MPA reply");
}

/* The responder side seen from the wire: after its reply (which echoes
 * P2P with exactly the one RTR type offered) A sends nothing and reports
 * nothing until the RTR is in; then ESTABLISHED, and A's first FPDU. */
static void t_p2p_responder_waits(void)
{
	struct rnic_cm_event ev;
	uint8_t req[64], fpdu[32];
	p2p_raw_accepted(req);
	const uint8_t *r = raw[0].in;
	CHECK(memcmp(r, "MPA ID Rep Frame", 16) == 0 && (r[16] & 0x20) == 0 && r[17] == 2 &&
	      r[19] == 4, "not an accepting rev 2 reply: flags %#x rev %u pd_len %u", r[16], r[17],
	      r[19]);
	/* s9.2: P2P echoed, exactly the one RTR type (Write) */
	CHECK((r[20] & 0xc0) == 0x80 && (r[22] & 0xc0) == 0x80,
	      "reply IRD/ORD control bits %#x %#x, expected P2P and W only", r[20], r[22]);
	usleep(300 * 1000);
	CHECK(__atomic_load_n(&raw[0].in_len, __ATOMIC_ACQUIRE) == 24,
	      "A sent %zu bytes after its reply before the RTR", raw[0].in_len - 24);
	int rc = rnic_cm_get_event(a.cm, &ev, 0);
	CHECK(rc == -EAGAIN, "A: %s before the RTR", rc == 0 ? rnic_cm_event_str(ev.type) : "?");
	CHECK(a.qp->state != IBV_QPS_RTS, "A's QP in RTS before the RTR");
	raw_send(&raw[0], fpdu, rtr_fpdu(fpdu, true));
	expect_event(a.cm, RNIC_CM_EVENT_ESTABLISHED, &ev, "A");
	CHECK(a.qp->state == IBV_QPS_RTS, "A's QP state %d after the RTR", a.qp->state);
	/* A talks now: its first Send is message 1 of queue 0 */
	CHECK_RC(post1(&a, IBV_WR_SEND, 1, a.buf, 4, 0, 0, IBV_SEND_SIGNALED), 0);
	expect_wc(a.cq, a.qp, 1, IBV_WC_SEND, IBV_WC_SUCCESS, ANY, "A's send");
	raw_wait_bytes(&raw[0], 24 + 2 + 18 + 4, "A's first FPDU");
	r = raw[0].in + 24;
	CHECK(r[3] == 0x43 && r[15] == 1, "A's first FPDU: RDMAP %#x MSN byte %u", r[3], r[15]);
}

/* A wrong RTR (a Send where the reply chose Write) ends the connection
 * with a Terminate "no matching RTR option" (LLP/MPA, code 7). */
static void t_p2p_wrong_rtr(void)
{
	struct rnic_cm_event ev;
	uint8_t req[64], fpdu[32];
	p2p_raw_accepted(req);
	raw_send(&raw[0], fpdu, rtr_fpdu(fpdu, false));
	raw_wait_bytes(&raw[0], 24 + 2 + 18 + 4, "Terminate");
	const uint8_t *t = raw[0].in + 24;
	CHECK(t[3] == 0x47 && t[20] == 0x20 && t[21] == 0x07,
	      "A's answer: RDMAP %#x, Terminate control %#x %#x (expected 0x47, 0x20 0x07)", t[3],
	      t[20], t[21]);
	expect_event(a.cm, RNIC_CM_EVENT_DISCONNECTED, &ev, "A");
	CHECK(ev.status == -EPROTO, "A: DISCONNECTED status %d", ev.status);
}

/* The initiator's side: a reply that picks an RTR type B did not offer
 * (Read for Write) gets a Terminate "no matching RTR option", and B's
 * connect ends in CONNECT_ERROR/-EPROTO. */
static void t_p2p_reply_mismatch(void)
{
	struct rnic_cm_event ev;
	uint8_t rep[32];
	end_init(&b, "B", CB, bufB, &DEF);
	uint16_t port = raw_listen(&raw[0]);
	struct rnic_cm_conn_param p = { .responder_resources = 4, .initiator_depth = 4,
					.p2p = true, .rtr_types = RNIC_CM_RTR_WRITE };
	CHECK_RC(rnic_cm_create_id(b.cm, &b, &b.id), 0);
	CHECK_RC(cm_connect_a(b.id, b.qp, port, &p), 0);
	raw_wait_bytes(&raw[0], 24, "MPA request");
	const uint8_t *q = raw[0].in;
	CHECK((q[20] & 0xc0) == 0x80 && (q[22] & 0xc0) == 0x80,
	      "request IRD/ORD control bits %#x %#x, expected P2P and W", q[20], q[22]);
	mpa_req_p2p(rep, RNIC_CM_RTR_READ);
	memcpy(rep, "MPA ID Rep Frame", 16);
	raw_send(&raw[0], rep, 24);
	raw_wait_bytes(&raw[0], 24 + 2 + 18 + 4, "Terminate");
	const uint8_t *t = raw[0].in + 24;
	CHECK(t[3] == 0x47 && t[20] == 0x20 && t[21] == 0x07,
	      "B's answer: RDMAP %#x, Terminate control %#x %#x (expected 0x47, 0x20 0x07)", t[3],
	      t[20], t[21]);
	expect_event(b.cm, RNIC_CM_EVENT_CONNECT_ERROR, &ev, "B");
	CHECK(ev.status == -EPROTO, "B: CONNECT_ERROR status %d", ev.status);
	CHECK(b.qp->state == IBV_QPS_ERR, "B: QP state %d", b.qp->state);
}

/* --- hostile peers: Read Responses, Immediate Data, Send with Invalidate (issue 27) ------ */

/*
 * A raw peer answers A's Read with Read Responses it shapes itself. A
 * response must continue the oldest outstanding Read: its sink STag, the
 * next TO (no hole, no overlap), within the length, the last segment
 * ending exactly there (RFC 5040 sections 5.2, 6.4). Anything else: nothing
 * placed, a Terminate (RFC 5041 7.2: DDP tagged, Invalid STag 0x00 or Base
 * or Bounds 0x01), the Read completes in error, counted in rresp_refused.
 */
enum rresp { RR_GOOD, RR_STAG, RR_HOLE, RR_OVERLAP, RR_SHORT, RR_LONG, RR_UNASKED };

#define RR_SEG 1000u            /* payload per response FPDU */
#define RR_LEN (3 * RR_SEG)     /* the Read */
#define RR_REQ_LEN 52u          /* A's Read Request FPDU: 2 + 18 + 28 + 4 */

static void put_be32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (24 - 8 * i));
}

static void put_be64(uint8_t *p, uint64_t v)
{
	put_be32(p, (uint32_t)(v >> 32));
	put_be32(p + 4, (uint32_t)v);
}

static uint32_t get_be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* A Read Response FPDU with CRC: @p n bytes of @p data for @p stag at
 * @p to, DDP L when @p last. @return its length. */
static size_t rresp_fpdu(uint8_t *f, uint32_t stag, uint64_t to, const uint8_t *data,
			 uint32_t n, bool last)
{
	uint32_t ulpdu = 14 + n;
	size_t len = 2 + ulpdu;
	f[0] = (uint8_t)(ulpdu >> 8);
	f[1] = (uint8_t)ulpdu;
	f[2] = (uint8_t)(0x80 | (last ? 0x40 : 0) | 0x01);   /* T, L, DV 1 */
	f[3] = 0x42;                                          /* RV 1, Read Response */
	put_be32(f + 4, stag);
	put_be64(f + 8, to);
	memcpy(f + 16, data, n);
	while (len % 4 != 0)
		f[len++] = 0;
	uint32_t c = crc32c(f, len);
	for (int i = 0; i < 4; i++)
		f[len + (size_t)i] = (uint8_t)(c >> (8 * i));
	return len + 4;
}

/* The Terminate A sent, at @p at of what the raw peer got: RDMAP
 * Terminate, Layer/EType @p lt and Error Code @p code. */
static void expect_term_bytes(size_t at, uint8_t lt, uint8_t code, const char *what)
{
	raw_wait_bytes(&raw[0], at + 2 + 18 + 4, what);
	const uint8_t *t = raw[0].in + at;
	CHECK(t[3] == 0x47 && t[20] == lt && t[21] == code,
	      "%s: A's answer: RDMAP %#x, Terminate control %#x %#x (expected 0x47, %#x %#x)",
	      what, t[3], t[20], t[21], lt, code);
}

static void rresp_case(enum rresp k)
{
	static uint8_t req[64], fpdu[RR_SEG + 64], data[RR_LEN + 64];
	struct rnic_cm_event ev;
	struct rnic_iw_stats s0, s1;
	hang_s = 15;   /* the old code never answered some of these */
	p2p_raw_accepted(req);
	raw_send(&raw[0], fpdu, rtr_fpdu(fpdu, true));
	expect_event(a.cm, RNIC_CM_EVENT_ESTABLISHED, &ev, "A");
	/* the sink, and a second local-write MR the peer may aim at */
	uint8_t *sink = a.buf + BASE + 4096, *other = a.buf + BASE + 65536;
	memset(sink - 64, GUARD, RR_LEN + 128);
	memset(other - 64, GUARD, RR_LEN + 128);
	a.xmr[0] = rnic_reg_mr(a.pd, other - 64, RR_LEN + 128, IBV_ACCESS_LOCAL_WRITE);
	CHECK(a.xmr[0] != NULL, "reg_mr: %s", strerror(errno));
	fill(data, sizeof(data), 31);
	rnic_iw_stats(SA, &s0);
	uint64_t t0[RNIC_TERM_MAX];
	for (unsigned c = 0; c < RNIC_TERM_MAX; c++)
		t0[c] = rnic_iw_terms_out(SA, c);
	size_t term_at = 24;   /* A's FPDUs follow its 24-byte MPA reply */
	uint32_t stag = 0;
	uint64_t to = 0;
	if (k != RR_UNASKED) {
		CHECK_RC(post1(&a, IBV_WR_RDMA_READ, 7, sink, RR_LEN, 0x10000, 0x1234,
			       IBV_SEND_SIGNALED), 0);
		raw_wait_bytes(&raw[0], 24 + RR_REQ_LEN, "Read Request");
		const uint8_t *r = raw[0].in + 24;
		CHECK(r[3] == 0x41 && get_be32(r + 32) == RR_LEN,
		      "A's Read Request: RDMAP %#x size %u", r[3], get_be32(r + 32));
		stag = get_be32(r + 20);
		to = (uint64_t)get_be32(r + 24) << 32 | get_be32(r + 28);
		CHECK(to == (uintptr_t)sink, "sink TO %#llx, expected %p", (unsigned long long)to,
		      (void *)sink);
		term_at += RR_REQ_LEN;
	}
	size_t n;
	switch (k) {
	case RR_GOOD:
		/* three segments; the middle one split over two TCP segments */
		raw_send(&raw[0], fpdu, rresp_fpdu(fpdu, stag, to, data, RR_SEG, false));
		n = rresp_fpdu(fpdu, stag, to + RR_SEG, data + RR_SEG, RR_SEG, false);
		raw_send(&raw[0], fpdu, 100);
		raw_send(&raw[0], fpdu + 100, n - 100);
		raw_send(&raw[0], fpdu, rresp_fpdu(fpdu, stag, to + 2 * RR_SEG, data + 2 * RR_SEG,
						   RR_SEG, true));
		expect_wc(a.cq, a.qp, 7, IBV_WC_RDMA_READ, IBV_WC_SUCCESS, RR_LEN, "read");
		CHECK_DATA(sink, data, RR_LEN, "read");
		CHECK_UNTOUCHED(sink + RR_LEN, 64, GUARD, "above the sink");
		rnic_iw_stats(SA, &s1);
		CHECK(s1.rresp_refused == s0.rresp_refused, "rresp_refused went up");
		return;
	case RR_STAG:   /* the whole response into another MR of the PD */
		raw_send(&raw[0], fpdu, rresp_fpdu(fpdu, a.xmr[0]->lkey, (uintptr_t)other, data,
						   RR_SEG, true));
		break;
	case RR_HOLE:   /* the second segment skips 8 bytes, in its second TCP segment */
	case RR_OVERLAP:
		raw_send(&raw[0], fpdu, rresp_fpdu(fpdu, stag, to, data, RR_SEG, false));
		n = rresp_fpdu(fpdu, stag, to + RR_SEG + (k == RR_HOLE ? 8 : -8), data + RR_SEG,
			       RR_SEG, false);
		raw_send(&raw[0], fpdu, 7);
		raw_send(&raw[0], fpdu + 7, n - 7);
		break;
	case RR_SHORT:   /* the last segment ends 8 bytes early */
		raw_send(&raw[0], fpdu, rresp_fpdu(fpdu, stag, to, data, RR_SEG, false));
		raw_send(&raw[0], fpdu, rresp_fpdu(fpdu, stag, to + RR_SEG, data + RR_SEG, RR_SEG,
						   false));
		raw_send(&raw[0], fpdu, rresp_fpdu(fpdu, stag, to + 2 * RR_SEG, data + 2 * RR_SEG,
						   RR_SEG - 8, true));
		break;
	case RR_LONG:   /* the last segment runs 8 bytes past the sink */
		raw_send(&raw[0], fpdu, rresp_fpdu(fpdu, stag, to, data, RR_SEG, false));
		raw_send(&raw[0], fpdu, rresp_fpdu(fpdu, stag, to + RR_SEG, data + RR_SEG, RR_SEG,
						   false));
		raw_send(&raw[0], fpdu, rresp_fpdu(fpdu, stag, to + 2 * RR_SEG, data + 2 * RR_SEG,
						   RR_SEG + 8, true));
		break;
	case RR_UNASKED:   /* a response with no Read outstanding */
		raw_send(&raw[0], fpdu, rresp_fpdu(fpdu, a.mr->lkey, (uintptr_t)sink, data, RR_SEG,
						   true));
		break;
	}
	/* RFC 5041 7.2 / RFC 5040 7: the layer, type and code of each */
	static const struct { uint8_t lt, code; unsigned cause; const char *name; } want[] = {
		[RR_STAG] = { 0x11, 0x00, RNIC_TERM_DDP_T_INVALID_STAG, "another STag" },
		[RR_HOLE] = { 0x11, 0x01, RNIC_TERM_DDP_T_BASE_BOUNDS, "a hole" },
		[RR_OVERLAP] = { 0x11, 0x01, RNIC_TERM_DDP_T_BASE_BOUNDS, "an overlap" },
		[RR_SHORT] = { 0x11, 0x01, RNIC_TERM_DDP_T_BASE_BOUNDS, "short" },
		[RR_LONG] = { 0x11, 0x01, RNIC_TERM_DDP_T_BASE_BOUNDS, "too long" },
		[RR_UNASKED] = { 0x02, 0x06, RNIC_TERM_RDMAP_OPCODE, "unasked" },
	};
	expect_term_bytes(term_at, want[k].lt, want[k].code, want[k].name);
	expect_event(a.cm, RNIC_CM_EVENT_DISCONNECTED, &ev, "A");
	CHECK(ev.status == -EPROTO, "A: DISCONNECTED status %d, expected -EPROTO", ev.status);
	CHECK(a.qp->state == IBV_QPS_ERR, "A: QP state %d, expected ERR", a.qp->state);
	if (k != RR_UNASKED) {
		struct ibv_wc wc = expect_wc(a.cq, a.qp, 7, ANY, ANY, ANY, "refused read");
		CHECK(wc.status == IBV_WC_BAD_RESP_ERR, "the Read completed with %s, expected %s",
		      rnic_wc_status_str(wc.status), rnic_wc_status_str(IBV_WC_BAD_RESP_ERR));
	}
	/* what was placed: the segments before the refused one, nothing else */
	uint32_t good = k == RR_HOLE || k == RR_OVERLAP ? RR_SEG :
			k == RR_SHORT || k == RR_LONG ? 2 * RR_SEG : 0;
	CHECK_DATA(sink, data, good, "segments before the refused one");
	CHECK_UNTOUCHED(sink + good, RR_LEN - good + 64, GUARD, "the sink past them");
	CHECK_UNTOUCHED(sink - 64, 64, GUARD, "below the sink");
	CHECK_UNTOUCHED(other - 64, RR_LEN + 128, GUARD, "the other MR");
	rnic_iw_stats(SA, &s1);
	CHECK(s1.rresp_refused - s0.rresp_refused == 1, "rresp_refused +%llu, expected +1",
	      (unsigned long long)(s1.rresp_refused - s0.rresp_refused));
	CHECK(rnic_iw_terms_out(SA, want[k].cause) - t0[want[k].cause] == 1,
	      "Terminates for %s: +%llu, expected +1", want[k].name,
	      (unsigned long long)(rnic_iw_terms_out(SA, want[k].cause) - t0[want[k].cause]));
	/* and in telemetry, in A's dict of /rnic/iwarp */
	static char out[16384];
	char key[32], cause[80];
	CHECK(tel_query("/rnic/iwarp", out, sizeof(out)) > 0, "/rnic/iwarp: no reply");
	snprintf(key, sizeof(key), "\"stack%u\":{", SA->id);
	const char *mine = strstr(out, key);
	CHECK(mine != NULL, "/rnic/iwarp: no %s in %s", key, out);
	snprintf(cause, sizeof(cause), "term_%s", rnic_term_name(want[k].cause));
	CHECK(tel_number(mine, "rresp_refused") == (long long)s1.rresp_refused &&
	      tel_number(mine, cause) == (long long)rnic_iw_terms_out(SA, want[k].cause),
	      "/rnic/iwarp: rresp_refused %lld, %s %lld in %s", tel_number(mine, "rresp_refused"),
	      cause, tel_number(mine, cause), mine);
}

static void t_rresp_good(void) { rresp_case(RR_GOOD); }
static void t_rresp_stag(void) { rresp_case(RR_STAG); }
static void t_rresp_hole(void) { rresp_case(RR_HOLE); }
static void t_rresp_overlap(void) { rresp_case(RR_OVERLAP); }
static void t_rresp_short(void) { rresp_case(RR_SHORT); }
static void t_rresp_long(void) { rresp_case(RR_LONG); }
static void t_rresp_unasked(void) { rresp_case(RR_UNASKED); }

/* An Immediate Data message in the middle of a Send (same queue, same
 * MSN) would take a second receive and lose the first: A refuses it
 * (RDMAP, unexpected opcode) and both receives complete, flushed. */
static void t_imm_inside_send(void)
{
	static uint8_t req[64], f[256];
	struct rnic_cm_event ev;
	hang_s = 15;
	p2p_raw_accepted(req);
	raw_send(&raw[0], f, rtr_fpdu(f, true));
	expect_event(a.cm, RNIC_CM_EVENT_ESTABLISHED, &ev, "A");
	recv1(&a, 1, a.buf + BASE, 4096);
	recv1(&a, 2, a.buf + BASE + 4096, 4096);
	/* a Send's first segment: QN 0, MSN 1, MO 0, no L, 16 bytes */
	memset(f, 0, sizeof(f));
	f[1] = 18 + 16;
	f[2] = 0x01;
	f[3] = 0x43;
	f[15] = 1;
	size_t n = 2 + 18 + 16;
	uint32_t c = crc32c(f, n);
	for (int i = 0; i < 4; i++)
		f[n + (size_t)i] = (uint8_t)(c >> (8 * i));
	raw_send(&raw[0], f, n + 4);
	/* Immediate Data, MSN 1 as well: L, 8 bytes of immediate data */
	memset(f, 0, sizeof(f));
	f[1] = 18 + 8;
	f[2] = 0x41;
	f[3] = 0x48;
	f[15] = 1;
	memset(f + 20, 0x5a, 8);
	n = 2 + 18 + 8;
	n += (4 - n % 4) % 4;
	c = crc32c(f, n);
	for (int i = 0; i < 4; i++)
		f[n + (size_t)i] = (uint8_t)(c >> (8 * i));
	raw_send(&raw[0], f, n + 4);
	expect_term_bytes(24, 0x02, 0x06, "Immediate Data inside a Send");
	expect_event(a.cm, RNIC_CM_EVENT_DISCONNECTED, &ev, "A");
	expect_wc(a.cq, a.qp, 1, ANY, IBV_WC_WR_FLUSH_ERR, ANY, "the Send's receive");
	expect_wc(a.cq, a.qp, 2, ANY, IBV_WC_WR_FLUSH_ERR, ANY, "the next receive");
}

/* A storm of Terminates in one segment: the first closes A's endpoint
 * (reset, DISCONNECTED -EPROTO), nothing behind it is parsed or answered
 * (terms_in +1, no Terminate back), nothing is allocated for them. */
static void t_term_storm(void)
{
	enum { N = 50 };   /* one TCP segment of them */
	static uint8_t req[64], f[N * 28];
	struct rnic_cm_event ev;
	struct rnic_iw_stats s0, s1;
	hang_s = 15;
	p2p_raw_accepted(req);
	raw_send(&raw[0], f, rtr_fpdu(f, true));
	expect_event(a.cm, RNIC_CM_EVENT_ESTABLISHED, &ev, "A");
	rnic_iw_stats(SA, &s0);
	memset(f, 0, sizeof(f));
	for (int i = 0; i < N; i++) {
		uint8_t *t = f + i * 28;
		t[1] = 18 + 4;
		t[2] = 0x41;                 /* L, DV 1 */
		t[3] = 0x47;                 /* RV 1, Terminate */
		t[11] = 2;                   /* QN 2 */
		put_be32(t + 12, (uint32_t)i + 1);   /* MSN */
		t[20] = 0x02;                /* RDMAP, Remote Operation */
		t[21] = 0xff;
		uint32_t c = crc32c(t, 24);
		for (int j = 0; j < 4; j++)
			t[24 + j] = (uint8_t)(c >> (8 * j));
	}
	raw_send(&raw[0], f, sizeof(f));
	expect_event(a.cm, RNIC_CM_EVENT_DISCONNECTED, &ev, "A");
	CHECK(ev.status == -EPROTO, "A: DISCONNECTED status %d, expected -EPROTO", ev.status);
	raw_wait_closed(&raw[0], SB, 1.0, "the Terminating peer");
	rnic_iw_stats(SA, &s1);
	CHECK(s1.terms_in - s0.terms_in == 1 && s1.terms_out == s0.terms_out,
	      "Terminates in +%llu (expected 1), out +%llu (expected 0)",
	      (unsigned long long)(s1.terms_in - s0.terms_in),
	      (unsigned long long)(s1.terms_out - s0.terms_out));
	CHECK(raw[0].in_len == 24, "A sent %zu bytes after its MPA reply", raw[0].in_len - 24);
	CHECK(s1.alloc_failures == s0.alloc_failures, "allocations failed meanwhile");
}

/* Read Requests beyond the IRD A granted (4): a hand-written peer asks for
 * five Reads of 4 MiB in one TCP segment; four are served (the first
 * fills TCP's 2 MiB send buffer, so none is done yet), the fifth gets a
 * Terminate (RDMAP Remote Operation 0x07), not a queued response, and A
 * closes once the four are out (RFC 5040 section 6.8). */
static void t_read_req_beyond_ird(void)
{
	enum { N = 5 };
	static uint8_t req[64], f[N * 52];
	struct rnic_cm_event ev;
	hang_s = 30;
	p2p_raw_accepted(req);
	raw_send(&raw[0], f, rtr_fpdu(f, true));
	expect_event(a.cm, RNIC_CM_EVENT_ESTABLISHED, &ev, "A");
	CHECK(ev.ird == 4, "A's IRD %u, expected 4", ev.ird);
	uint64_t t0 = rnic_iw_terms_out(SA, RNIC_TERM_RDMAP_CATASTROPHIC_STREAM);
	memset(f, 0, sizeof(f));
	for (int i = 0; i < N; i++) {
		uint8_t *r = f + i * 52;
		r[1] = 18 + 28;
		r[2] = 0x41;                                 /* L, DV 1 */
		r[3] = 0x41;                                 /* RV 1, Read Request */
		r[11] = 1;                                   /* QN 1 */
		put_be32(r + 12, (uint32_t)i + 1);           /* MSN */
		put_be32(r + 20, 0x99);                      /* sink STag, TO 0 */
		put_be32(r + 32, 4 * MiB);                   /* RDMA Read size */
		put_be32(r + 36, a.mr->rkey);
		put_be64(r + 40, (uintptr_t)a.buf + BASE);
		uint32_t c = crc32c(r, 48);
		for (int j = 0; j < 4; j++)
			r[48 + j] = (uint8_t)(c >> (8 * j));
	}
	raw_send(&raw[0], f, sizeof(f));
	double start = now_s();
	while (rnic_iw_terms_out(SA, RNIC_TERM_RDMAP_CATASTROPHIC_STREAM) == t0) {
		CHECK(now_s() - start < HANG_S, "no Terminate for the fifth Read in %d s", HANG_S);
		usleep(1000);
	}
	CHECK(rnic_iw_terms_out(SA, RNIC_TERM_RDMAP_CATASTROPHIC_STREAM) - t0 == 1,
	      "%llu Terminates, expected 1", (unsigned long long)
	      (rnic_iw_terms_out(SA, RNIC_TERM_RDMAP_CATASTROPHIC_STREAM) - t0));
	expect_event(a.cm, RNIC_CM_EVENT_DISCONNECTED, &ev, "A");
	CHECK(ev.status == -EPROTO, "A: DISCONNECTED status %d, expected -EPROTO", ev.status);
	/* the four in service were served whole, then came the Terminate (76
	 * bytes: it quotes the DDP and Read Request headers), the FIN last */
	struct rnic_qp_stats qs;
	rnic_qp_stats(a.qp, &qs);
	CHECK(qs.bytes_out == 16 * MiB, "A sent %llu bytes of Read Responses, expected 16 MiB",
	      (unsigned long long)qs.bytes_out);
	raw_wait_closed(&raw[0], SB, 1.0, "the peer");
	uint8_t t[76];
	size_t total = raw[0].total;
	CHECK(total > 16 * MiB + 76, "the peer got %zu bytes", total);
	for (size_t i = 0; i < sizeof(t); i++)
		t[i] = raw[0].tail[(total - sizeof(t) + i) % sizeof(raw[0].tail)];
	CHECK(t[1] == 70 && t[3] == 0x47 && t[20] == 0x02 && t[21] == 0x07,
	      "the stream's last FPDU: ULPDU_Length %u RDMAP %#x control %#x %#x, expected a "
	      "Terminate 0x02 0x07", t[1], t[3], t[20], t[21]);
}

/* A peer's Send with Invalidate naming a type 1 window (IBA o10-37.2.26:
 * only type 2 windows may be invalidated remotely): refused with a
 * Terminate, the receive in error, counted; the window stays valid. */
static void t_mw_type1_send_inv(void)
{
	pair_up(&DEF);
	struct ibv_mw *mw = alloc_mw_or_skip(&a, IBV_MW_TYPE_1, 0);
	uint8_t *win = a.buf + BASE + 8192;
	struct ibv_mw_bind mb = { .wr_id = 1, .send_flags = IBV_SEND_SIGNALED };
	mb.bind_info = (struct ibv_mw_bind_info){ .mr = a.mr, .addr = (uintptr_t)win,
						  .length = 4096,
						  .mw_access_flags = IBV_ACCESS_REMOTE_WRITE };
	CHECK_RC(ibv_bind_mw(a.qp, mw, &mb), 0);
	expect_wc(a.cq, a.qp, 1, IBV_WC_BIND_MW, IBV_WC_SUCCESS, ANY, "type 1 bind");
	struct rnic_iw_stats s0, s1;
	rnic_iw_stats(SA, &s0);
	recv1(&a, 4, a.buf, 16);
	struct ibv_sge s = { (uintptr_t)b.buf, 4, b.mr->lkey };
	struct ibv_send_wr sw = { .wr_id = 5, .sg_list = &s, .num_sge = 1,
				  .opcode = IBV_WR_SEND_WITH_INV, .send_flags = IBV_SEND_SIGNALED,
				  .invalidate_rkey = mw->rkey }, *bad;
	CHECK_RC(ibv_post_send(b.qp, &sw, &bad), 0);
	struct ibv_wc wc = expect_wc(a.cq, a.qp, 4, ANY, ANY, ANY, "recv");
	CHECK(wc.status == IBV_WC_REM_INV_REQ_ERR && !(wc.wc_flags & IBV_WC_WITH_INV),
	      "recv status %s flags %#x, expected REM_INV_REQ_ERR without WITH_INV",
	      rnic_wc_status_str(wc.status), wc.wc_flags);
	expect_terminated(win, 0, 0);
	rnic_iw_stats(SA, &s1);
	CHECK(s1.inv_refused - s0.inv_refused == 1, "inv_refused +%llu, expected +1",
	      (unsigned long long)(s1.inv_refused - s0.inv_refused));
	/* still valid: the window names its memory for a remote write */
	enum rnic_stag_fault f;
	CHECK(rnic_stag_check(SA, mw->rkey, a.pd, 0, (uintptr_t)win, 4096,
			      IBV_ACCESS_REMOTE_WRITE, &f) == win,
	      "the type 1 window was invalidated (fault %d)", f);
}

/* A type 2 window answers to the QP it is bound to (IBA 10.6.7.2.2): a
 * Send with Invalidate naming it on another connection of the same PD is
 * refused there (Terminate, the receive in error, inv_refused +1) and the
 * window stays valid: a Write through it on its own connection lands. */
static void t_mw_type2_other_qp(void)
{
	struct rnic_cm_event ev;
	uint16_t port;
	hang_s = 15;
	end_init(&a, "A", CA, bufA, &DEF);
	end_init(&b, "B", CB, bufB, &DEF);
	listen_new(&port);
	connect_ab(port, &DEF);
	a.xqp[0] = make_qp(&a, &DEF, NULL);
	b.xqp[0] = make_qp(&b, &DEF, NULL);
	struct rnic_cm_conn_param p = { .responder_resources = 4, .initiator_depth = 4 };
	CHECK_RC(rnic_cm_create_id(b.cm, NULL, &b.xid[0]), 0);
	CHECK_RC(cm_connect_a(b.xid[0], b.xqp[0], port, &p), 0);
	expect_event(a.cm, RNIC_CM_EVENT_CONNECT_REQUEST, &ev, "A");
	a.xid[0] = ev.id;
	CHECK_RC(rnic_cm_accept(ev.id, a.xqp[0], &p), 0);
	expect_event(a.cm, RNIC_CM_EVENT_ESTABLISHED, NULL, "A");
	expect_event(b.cm, RNIC_CM_EVENT_ESTABLISHED, NULL, "B");
	struct ibv_mw *mw = alloc_mw_or_skip(&a, IBV_MW_TYPE_2, 0);
	uint8_t *win = a.buf + BASE + 8192;
	uint32_t rkey = bind2(mw, win, 4096, IBV_ACCESS_REMOTE_WRITE, 1);
	struct rnic_iw_stats s0, s1;
	rnic_iw_stats(SA, &s0);
	recv_on(a.xqp[0], a.mr, 4, a.buf, 16);
	struct ibv_sge s = { (uintptr_t)b.buf, 4, b.mr->lkey };
	struct ibv_send_wr sw = { .wr_id = 5, .sg_list = &s, .num_sge = 1,
				  .opcode = IBV_WR_SEND_WITH_INV, .send_flags = IBV_SEND_SIGNALED,
				  .invalidate_rkey = rkey }, *bad;
	CHECK_RC(ibv_post_send(b.xqp[0], &sw, &bad), 0);
	struct ibv_wc wc = expect_wc(a.cq, a.xqp[0], 4, ANY, ANY, ANY, "recv on the other QP");
	CHECK(wc.status == IBV_WC_REM_INV_REQ_ERR && !(wc.wc_flags & IBV_WC_WITH_INV),
	      "recv status %s flags %#x, expected REM_INV_REQ_ERR without WITH_INV",
	      rnic_wc_status_str(wc.status), wc.wc_flags);
	expect_event(a.cm, RNIC_CM_EVENT_DISCONNECTED, &ev, "A");
	CHECK(ev.id == a.xid[0] && ev.status == -EPROTO,
	      "A: DISCONNECTED on %p status %d, expected the other connection's with -EPROTO",
	      (void *)ev.id, ev.status);
	expect_wc(b.cq, b.xqp[0], 5, ANY, ANY, ANY, "B's Send with Invalidate");
	rnic_iw_stats(SA, &s1);
	CHECK(s1.inv_refused - s0.inv_refused == 1, "inv_refused +%llu, expected +1",
	      (unsigned long long)(s1.inv_refused - s0.inv_refused));
	fill(b.buf + BASE, 64, 3);
	CHECK_RC(post1(&b, IBV_WR_RDMA_WRITE, 6, b.buf + BASE, 64, (uintptr_t)win, rkey, 0), 0);
	fence_send(&b, &a, 7);
	CHECK_DATA(win, b.buf + BASE, 64, "write via the window after the refused invalidation");
}

/* --- zero-copy transmit ------------------------------------------------------------------ */

static uint16_t test_mtu;   /* RNIC_TEST_MTU, 0: the port default */

/* The zero-copy cases need RNIC_IW_ZERO_COPY_TX=1 and RNIC_TEST_MTU=9000
 * (verbs_conformance_iwarp_zc_*): at the default MTU no FPDU carries the
 * 4 KiB of payload that zero copy starts at. */
static void zc_need(void)
{
	if (!rnic_iw_zero_copy_tx() || test_mtu < 9000)
		skip_case("zero copy is off or the MTU is under 9000 (run with "
			  "RNIC_IW_ZERO_COPY_TX=1 RNIC_TEST_MTU=9000)");
}

/* A in RTS with a raw peer that keeps every mbuf it receives, and a
 * signaled 16 KiB Write of A's that went to it zero-copy (two FPDUs).
 * @return the live zero-copy count before the Write. */
static uint64_t zc_write_held(uint8_t *req)
{
	struct rnic_cm_event ev;
	uint8_t fpdu[32];
	struct rnic_iw_stats s0, s1;
	p2p_raw_accepted(req);
	raw_send(&raw[0], fpdu, rtr_fpdu(fpdu, true));
	expect_event(a.cm, RNIC_CM_EVENT_ESTABLISHED, &ev, "A");
	__atomic_store_n(&raw[0].keep, 1, __ATOMIC_RELEASE);
	uint64_t live0 = rnic_iw_zc_live();
	rnic_iw_stats(SA, &s0);
	fill(a.buf, 16384, 77);
	CHECK_RC(post1(&a, IBV_WR_RDMA_WRITE, 1, a.buf, 16384, 0, 1, IBV_SEND_SIGNALED), 0);
	double t0 = now_s();
	while (__atomic_load_n(&raw[0].kept_len, __ATOMIC_ACQUIRE) < 16384) {
		CHECK(now_s() - t0 < HANG_S, "the peer got %zu of 16384 bytes (hang guard)",
		      raw[0].kept_len);
		usleep(1000);
	}
	rnic_iw_stats(SA, &s1);
	CHECK(s1.zc_fpdus_out - s0.zc_fpdus_out == 2, "%llu FPDUs went zero-copy, expected 2",
	      (unsigned long long)(s1.zc_fpdus_out - s0.zc_fpdus_out));
	return live0;
}

/* The Write completes only once the receiver frees the last mbuf that
 * refers to A's memory: TCP has its ACK long before (the peer's stack
 * acknowledges what it hands up), the completion waits for the release. */
static void t_zc_completion_waits(void)
{
	uint8_t req[64];
	struct ibv_wc wc;
	zc_need();
	uint64_t live0 = zc_write_held(req);
	usleep(300 * 1000);   /* time for the ACKs: not a timing assertion */
	CHECK(ibv_poll_cq(a.cq, 1, &wc) == 0, "Write %llu completed while the receiver holds "
	      "its memory", (unsigned long long)wc.wr_id);
	CHECK(rnic_iw_zc_live() == live0 + 1, "zero-copy jobs live %llu, expected %llu",
	      (unsigned long long)rnic_iw_zc_live(), (unsigned long long)live0 + 1);
	CHECK_RC(rnic_worker_call_sync(rnic_tcp_worker(raw[0].c), raw_release_on, &raw[0]), 0);
	expect_wc(a.cq, a.qp, 1, IBV_WC_RDMA_WRITE, IBV_WC_SUCCESS, ANY, "A's Write");
	CHECK(rnic_iw_zc_live() == live0, "zero-copy jobs live %llu after the completion, "
	      "expected %llu", (unsigned long long)rnic_iw_zc_live(), (unsigned long long)live0);
}

/* An abort while the receiver holds the memory: the Write is flushed, its
 * zero-copy state outlives the endpoint and goes with the last mbuf. */
static void t_zc_abort(void)
{
	uint8_t req[64];
	zc_need();
	uint64_t live0 = zc_write_held(req);
	struct ibv_qp_attr at = { .qp_state = IBV_QPS_ERR };
	CHECK_RC(rnic_modify_qp(a.qp, &at, IBV_QP_STATE), 0);
	expect_wc(a.cq, a.qp, 1, IBV_WC_RDMA_WRITE, IBV_WC_WR_FLUSH_ERR, ANY, "A's Write");
	CHECK(rnic_iw_zc_live() == live0 + 1, "zero-copy jobs live %llu while the peer holds "
	      "the mbufs, expected %llu", (unsigned long long)rnic_iw_zc_live(),
	      (unsigned long long)live0 + 1);
	struct rnic_worker *w = rnic_stack_worker(SB, 0);
	CHECK_RC(rnic_worker_call_sync(w, raw_release_on, &raw[0]), 0);
	CHECK(rnic_iw_zc_live() == live0, "zero-copy jobs live %llu after the release, "
	      "expected %llu", (unsigned long long)rnic_iw_zc_live(), (unsigned long long)live0);
}

/* Writes, Sends and Read Responses of 64 KiB go zero-copy and arrive. */
static void t_zc_used(void)
{
	struct rnic_iw_stats sa, sb;
	zc_need();
	pair_up(&DEF);
	do_write(&a, &b, 65536, 0, 0, 1);
	do_send(&b, &a, 65536, 0, 0, 2);
	do_read(&a, &b, 65536, 0, 0, 3);
	rnic_iw_stats(SA, &sa);
	rnic_iw_stats(SB, &sb);
	CHECK(sa.zc_fpdus_out + sb.zc_fpdus_out > 0, "no FPDU went zero-copy");
	printf("  zero-copy FPDUs: A %llu, B %llu\n", (unsigned long long)sa.zc_fpdus_out,
	       (unsigned long long)sb.zc_fpdus_out);
}

/* @p n work requests of @p op (a Write from A to B or a Read of B by
 * A) and @p len bytes each, in one list, the i-th at BASE + i * len on
 * both sides, all signaled and posted on A's QP; the source filled with
 * pattern @p seed, the sink cleared. */
static void post_chain(unsigned n, uint32_t len, enum ibv_wr_opcode op, unsigned seed)
{
	static struct ibv_sge sge[128];
	static struct ibv_send_wr wr[128];
	struct ibv_send_wr *bad = NULL;
	CHECK(n <= RTE_DIM(wr), "a chain of %u", n);
	bool rd = op == IBV_WR_RDMA_READ;
	fill((rd ? b.buf : a.buf) + BASE, (size_t)n * len, seed);
	memset((rd ? a.buf : b.buf) + BASE, 0, (size_t)n * len);
	for (unsigned i = 0; i < n; i++) {
		sge[i] = (struct ibv_sge){ (uintptr_t)(a.buf + BASE + i * len), len, a.mr->lkey };
		wr[i] = (struct ibv_send_wr){ .wr_id = i, .next = i + 1 < n ? &wr[i + 1] : NULL,
					     .sg_list = &sge[i], .num_sge = 1, .opcode = op,
					     .send_flags = IBV_SEND_SIGNALED };
		wr[i].wr.rdma.remote_addr = (uintptr_t)(b.buf + BASE + i * len);
		wr[i].wr.rdma.rkey = b.mr->rkey;
	}
	CHECK_RC(ibv_post_send(a.qp, wr, &bad), 0);
}

/*
 * Half the job ring of zero-copy Writes that wait for their memory back:
 * 128 Writes of 8 KiB (one zero-copy FPDU each at MTU 9000) posted in one
 * list on a QP of 128 entries (a ring of 256), 1 MiB in all, within TCP's
 * send buffer. iw_pump() told the verbs layer "room" after every pump
 * although no job had left the ring; the verbs layer's drain loop posted
 * nothing, kicked and was told again, forever, on the worker that would
 * take the ACKs that free the memory (rnic-perf write_bw --size 4096 hung
 * when 4 KiB still went zero-copy). A worker caught in that loop cannot be
 * cleaned up after: the case then reports and ends the process.
 */
static void t_zc_ring_half_full(void)
{
	enum { N = 128, LEN = 8192 };
	struct ibv_wc wc[N];
	struct opts o = DEF;
	struct rnic_iw_stats s0, s1;
	zc_need();
	hang_s = 15;   /* a hang shows in seconds, and 1 MiB takes far less */
	o.sq = N;
	pair_up(&o);
	rnic_iw_stats(SA, &s0);
	post_chain(N, LEN, IBV_WR_RDMA_WRITE, 41);
	int got = 0;
	double t0 = now_s();
	while (got < N && now_s() - t0 < HANG_S) {
		int k = ibv_poll_cq(a.cq, N - got, wc + got);
		CHECK(k >= 0, "ibv_poll_cq = %d", k);
		got += k;
		if (k == 0)
			usleep(100);
	}
	if (got < N) {   /* the worker may be stuck: no cleanup is possible */
		fprintf(stderr, "  FAIL %s: %d of %d Writes completed in %d s (hang guard); "
			"ending the process\n", case_name, got, N, HANG_S);
		fflush(NULL);
		_exit(1);
	}
	for (int i = 0; i < N; i++)
		CHECK(wc[i].wr_id == (uint64_t)i && wc[i].status == IBV_WC_SUCCESS,
		      "completion %d: wr_id %llu status %s", i, (unsigned long long)wc[i].wr_id,
		      rnic_wc_status_str(wc[i].status));
	rnic_iw_stats(SA, &s1);
	CHECK(s1.zc_fpdus_out - s0.zc_fpdus_out == N, "%llu of the %d Writes went zero-copy",
	      (unsigned long long)(s1.zc_fpdus_out - s0.zc_fpdus_out), N);
	fence_send(&a, &b, N);
	CHECK_DATA(b.buf + BASE, a.buf + BASE, N * LEN, "the 128 Writes");
}

/*
 * 64 Reads of 16 KiB in one list at IRD = ORD = 1: B's Read Responses go
 * zero-copy (two FPDUs each), and A asks again as soon as each answer is
 * in. B's IRD slot is free once TCP has the whole response; holding it
 * until A's stack freed the mbufs made the next request exceed IRD (a
 * Terminate).
 */
static void t_zc_reads(void)
{
	enum { N = 64, LEN = 16384 };
	struct ibv_wc wc;
	struct rnic_iw_stats s0, s1;
	struct opts o = DEF;
	zc_need();
	o.ird = o.ord = 1;
	pair_up(&o);
	rnic_iw_stats(SB, &s0);
	post_chain(N, LEN, IBV_WR_RDMA_READ, 43);
	for (unsigned i = 0; i < N; i++)
		expect_wc(a.cq, a.qp, i, IBV_WC_RDMA_READ, IBV_WC_SUCCESS, LEN, "A's Read");
	rnic_iw_stats(SB, &s1);
	CHECK_DATA(a.buf + BASE, b.buf + BASE, N * LEN, "the 64 Reads");
	CHECK(s1.zc_fpdus_out - s0.zc_fpdus_out >= 2 * N, "B sent %llu FPDUs zero-copy, "
	      "expected at least %u (its Read Responses)",
	      (unsigned long long)(s1.zc_fpdus_out - s0.zc_fpdus_out), 2 * N);
	CHECK(ibv_poll_cq(b.cq, 1, &wc) == 0, "B: a completion (wr_id %llu status %s) for "
	      "serving Reads", (unsigned long long)wc.wr_id, rnic_wc_status_str(wc.status));
}

/* A Read Request FPDU with CRC (MSN @p msn): @p len bytes of A's memory
 * at @p src, to a sink STag the raw peer never checks. @return its length. */
static size_t read_req_fpdu(uint8_t *f, uint32_t msn, const uint8_t *src, uint32_t len,
			    uint32_t src_stag)
{
	uint64_t to = (uintptr_t)src;
	memset(f, 0, 52);
	f[1] = 46;                 /* ULPDU_Length: 18 + 28, no pad */
	f[2] = 0x41;               /* DDP: L, DV 1 */
	f[3] = 0x41;               /* RDMAP: RV 1, Read Request */
	f[11] = 1;                 /* QN 1 */
	for (int i = 0; i < 4; i++) {
		f[12 + i] = (uint8_t)(msn >> (24 - 8 * i));
		f[20 + i] = (uint8_t)(0x1234u >> (24 - 8 * i));   /* sink STag; TO 0 */
		f[32 + i] = (uint8_t)(len >> (24 - 8 * i));
		f[36 + i] = (uint8_t)(src_stag >> (24 - 8 * i));
	}
	for (int i = 0; i < 8; i++)
		f[40 + i] = (uint8_t)(to >> (56 - 8 * i));
	uint32_t c = crc32c(f, 48);
	for (int i = 0; i < 4; i++)
		f[48 + i] = (uint8_t)(c >> (8 * i));
	return 52;
}

/*
 * A's IRD slot is free once TCP has the whole Read Response, not when the
 * requester let go of the mbufs: a raw requester that keeps every mbuf
 * (so A's zero-copy responses stay lent) asks for IRD Reads of 16 KiB,
 * takes their data, and asks once more. Holding the slot until the
 * release answered the last request with a Terminate.
 */
static void t_zc_read_ird(void)
{
	enum { LEN = 16384 };
	struct rnic_cm_event ev;
	struct rnic_iw_stats s0, s1;
	uint8_t req[64], fpdu[52];
	zc_need();
	p2p_raw_accepted(req);
	raw_send(&raw[0], fpdu, rtr_fpdu(fpdu, true));
	expect_event(a.cm, RNIC_CM_EVENT_ESTABLISHED, &ev, "A");
	__atomic_store_n(&raw[0].keep, 1, __ATOMIC_RELEASE);
	fill(a.buf + BASE, LEN * 8, 47);
	rnic_iw_stats(SA, &s0);
	uint32_t ird = ev.ird;
	CHECK(ird >= 1 && ird <= 4, "A's IRD %u, expected 1 to 4", ird);
	for (uint32_t m = 1; m <= ird + 1; m++) {
		if (m == ird + 1) {   /* all answered: every slot must be free */
			double t0 = now_s();
			while (__atomic_load_n(&raw[0].kept_len, __ATOMIC_ACQUIRE) < ird * LEN) {
				CHECK(now_s() - t0 < HANG_S, "the peer got %zu of %u bytes "
				      "(hang guard)", raw[0].kept_len, ird * LEN);
				usleep(1000);
			}
		}
		raw_send(&raw[0], fpdu, read_req_fpdu(fpdu, m, a.buf + BASE + (m - 1) * LEN, LEN,
						      a.mr->rkey));
	}
	double t0 = now_s();
	while (__atomic_load_n(&raw[0].kept_len, __ATOMIC_ACQUIRE) < (ird + 1) * LEN) {
		CHECK(!__atomic_load_n(&raw[0].closed, __ATOMIC_ACQUIRE), "A closed the "
		      "connection after %zu bytes (a Terminate for IRD?)", raw[0].kept_len);
		CHECK(now_s() - t0 < HANG_S, "the peer got %zu of %u bytes (hang guard)",
		      raw[0].kept_len, (ird + 1) * LEN);
		usleep(1000);
	}
	rnic_iw_stats(SA, &s1);
	CHECK(s1.zc_fpdus_out - s0.zc_fpdus_out >= 2 * (ird + 1), "A sent %llu FPDUs "
	      "zero-copy, expected at least %u", (unsigned long long)(s1.zc_fpdus_out -
	      s0.zc_fpdus_out), 2 * (ird + 1));
}

/* --- the fault injector did something -------------------------------------------------- */

/* The lossy run: the injector did inject every kind of fault. */
static void t_faults_seen(void) { conf_faults_seen(SA, SB); }

/* --- the runner ---------------------------------------------------------------------------- */

static const struct tcase cases[] = {
	{ "cm_connect", t_cm_connect, true },
	{ "cm_pdata_max", t_cm_pdata_max, true },
	{ "cm_reject", t_cm_reject, true },
	{ "cm_unreachable", t_cm_unreachable, true },
	{ "cm_many", t_cm_many, true },
	{ "cm_ird_ord", t_ird_ord, true },
	{ "cm_no_crc", t_no_crc, true },
	{ "cm_p2p", t_p2p, true },
	{ "p2p_rtr_send", t_p2p_rtr_send, true },
	{ "p2p_rtr_write", t_p2p_rtr_write, true },
	{ "p2p_rtr_read", t_p2p_rtr_read, true },
	{ "p2p_responder_waits", t_p2p_responder_waits, true },
	{ "p2p_wrong_rtr", t_p2p_wrong_rtr, true },
	{ "p2p_reply_mismatch", t_p2p_reply_mismatch, true },
	{ "rresp_good", t_rresp_good, true },
	{ "rresp_other_stag", t_rresp_stag, true },
	{ "rresp_hole", t_rresp_hole, true },
	{ "rresp_overlap", t_rresp_overlap, true },
	{ "rresp_short", t_rresp_short, true },
	{ "rresp_long", t_rresp_long, true },
	{ "rresp_unasked", t_rresp_unasked, true },
	{ "imm_inside_send", t_imm_inside_send, true },
	{ "terminate_storm", t_term_storm, true },
	{ "read_req_beyond_ird", t_read_req_beyond_ird, true },
	{ "mpa_timeout_active", t_mpa_timeout_active, true },
	{ "mpa_timeout_passive", t_mpa_timeout_passive, true },
	{ "startup_freed", t_startup_freed, true },
	{ "startup_freed_p2p", t_startup_freed_p2p, true },
	{ "lazy_alloc_fail", t_lazy_alloc_fail, true },
	{ "telemetry_qp", t_telemetry_qp, true },
	{ "send_sizes", t_send_sizes, true },
	{ "write_sizes", t_write_sizes, true },
	{ "read_sizes", t_read_sizes, true },
	{ "zero_sge", t_zero_sge, true },
	{ "sq_sig_all", t_sig_all, true },
	{ "small_packed", t_small_packed, true },
	CONFORMANCE_CASES(true),
	{ "remote_send_no_recv", t_send_no_recv, true },
	{ "close_graceful_active", t_close_graceful_active, true },
	{ "close_graceful_passive", t_close_graceful_passive, true },
	{ "close_graceful_inflight", t_close_graceful_inflight, true },
	{ "close_abort_modify_err", t_close_abort_modify, true },
	{ "close_abort_destroy", t_close_abort_destroy, true },
	{ "close_abort_inflight", t_close_abort_inflight, true },
	{ "cq_channel", t_cq_channel, true },
	{ "cq_channel_solicited", t_cq_solicited, true },
	{ "mw_type2_send_with_inv", t_mw_type2_send_inv, true },
	{ "mw_local_inv", t_mw_local_inv, true },
	{ "mw_type1_bind", t_mw_type1, true },
	{ "mw_type1_send_with_inv", t_mw_type1_send_inv, true },
	{ "mw_type2_other_qp", t_mw_type2_other_qp, true },
	{ "srq", t_srq, true },
	{ "stream_switch", t_stream_switch, true },
	{ "write_with_imm", t_write_imm, true },
	{ "send_with_imm", t_send_imm, true },
	{ "atomic_cmp_swap", t_atomic_cas, true },
	{ "atomic_fetch_add", t_atomic_faa, true },
	{ "atomic_fetch_add_many_qps", t_atomic_faa_many_qps, true },
	{ "atomic_within_ord", t_atomic_ord, true },
	{ "atomic_misaligned", t_atomic_misaligned, true },
	{ "atomic_no_right", t_atomic_no_right, true },
	{ "zc_completion_waits", t_zc_completion_waits, false },
	{ "zc_abort", t_zc_abort, false },
	{ "zc_used", t_zc_used, true },
	{ "zc_ring_half_full", t_zc_ring_half_full, true },
	{ "zc_reads", t_zc_reads, true },
	{ "zc_read_ird", t_zc_read_ird, false },
};

static void conf_case_begin(void)
{
	listener = NULL;
	known_bug = NULL;
	hang_s = 60;
}

/* Clean up whatever the case made, passed or not. */
static bool conf_case_end(void)
{
	bool ok = true;
	if (b.name)
		ok &= end_fini(&b);
	if (listener) {
		int rc = rnic_cm_destroy_id(listener);
		if (rc)
			fprintf(stderr, "  cleanup: destroy listener = %d\n", rc);
		ok &= rc == 0;
		listener = NULL;
	}
	if (a.name)
		ok &= end_fini(&a);
	if (stream_port) {
		ok &= rnic_tcp_unlisten(SA, stream_port) == 0;
		stream_port = 0;
	}
	if (raw_port) {
		ok &= rnic_tcp_unlisten(SA, raw_port) == 0;
		raw_port = 0;
	}
	raw_reset();
	rnic_iw_set_mpa_timeout(SA, 0);
	rnic_iw_set_mpa_timeout(SB, 0);
	known_bug = NULL;
	return ok;
}

int main(int argc, char **argv)
{
	int link = conf_link(argc, argv);
	const char *filter = argc > 2 ? argv[2] : NULL;
	if (link < 0)
		return 2;
	faults = link == 1;
	ipv6 = getenv("RNIC_TEST_IPV6") && strcmp(getenv("RNIC_TEST_IPV6"), "0") != 0;
	strict = getenv("RNIC_TEST_STRICT") && strcmp(getenv("RNIC_TEST_STRICT"), "0") != 0;
	if (getenv("RNIC_TEST_MTU"))
		test_mtu = (uint16_t)atoi(getenv("RNIC_TEST_MTU"));
	setvbuf(stdout, NULL, _IOLBF, 0);
	struct rnic_config c[2];
	if (check_eal_init(argv[0], &c[0], 2) != 0)
		return 1;
	if (rnic_ring_pair("iwv", 1) != 0) {
		fprintf(stderr, "ring pair failed\n");
		return 1;
	}
	uint64_t seed = 0x5eed0001;
	if (getenv("RNIC_FAULT_SEED"))
		seed = strtoull(getenv("RNIC_FAULT_SEED"), NULL, 0);
	c[0].n_eal_args = 0;
	c[1] = c[0];
	for (int i = 0; i < 2; i++) {
		struct rnic_port_cfg *p = &c[i].ports[0];
		c[i].n_ports = 1;
		rnic_port_cfg_init(p);
		snprintf(p->ring, sizeof(p->ring), "iwv.%c", i ? 'b' : 'a');
		if (ipv6) {
			struct rnic_addr a6 = addr_of(i != 0);
			memcpy(p->ip6[0].addr, a6.v6, 16);
			p->ip6[0].prefix_len = 64;
			p->n_ip6 = 1;
		} else {
			p->ip = i ? B_IP : A_IP;
			p->prefix_len = 24;
		}
		p->mbufs = 32767;
		if (test_mtu != 0)
			p->mtu = test_mtu;
		/* RNIC_TEST_PCAP=PREFIX: each port writes PREFIX.a/b.pcapng */
		if (getenv("RNIC_TEST_PCAP"))
			snprintf(p->pcap, sizeof(p->pcap), "%s.%c.pcapng", getenv("RNIC_TEST_PCAP"),
				 i ? 'b' : 'a');
		if (faults) {
			p->fault_seed = seed + (uint64_t)i;
			p->tx_fault = (struct rnic_fault_cfg){ .drop = 2.0, .dup = 1.0,
							       .reorder = 2.0, .corrupt = 0.5 };
		}
	}
	if (ipv6)
		printf("IPv6 only: A 2001:db8::1, B 2001:db8::2\n");
	if (faults)
		printf("faults on both ports' TX: drop 2%% dup 1%% reorder 2%% corrupt 0.5%%, "
		       "seeds %#llx/%#llx\n", (unsigned long long)seed,
		       (unsigned long long)seed + 1);
	SA = rnic_stack_create(&c[0]);
	SB = rnic_stack_create(&c[1]);
	if (!SA || !SB || rnic_stack_start(SA) != 0 || rnic_stack_start(SB) != 0) {
		fprintf(stderr, "stacks: %s\n", rte_strerror(rte_errno));
		return 1;
	}
	CA = rnic_open_device(SA);
	CB = rnic_open_device(SB);
	bufA = aligned_alloc(4096, BUF_LEN);
	bufB = aligned_alloc(4096, BUF_LEN);
	if (!CA || !CB || !bufA || !bufB) {
		fprintf(stderr, "devices/buffers\n");
		return 1;
	}
	double t0 = now_s();
	for (unsigned i = 0; i < RTE_DIM(cases); i++)
		if (case_selected(cases[i].name, filter) && (cases[i].lossy || !faults))
			conf_run_case(cases[i].name, cases[i].fn);
	if (faults && filter == NULL)
		conf_run_case("faults_injected", t_faults_seen);
	int rc1 = rnic_close_device(CA), rc2 = rnic_close_device(CB);
	if (rc1 || rc2) {
		fprintf(stderr, "close_device: %d %d\n", rc1, rc2);
		n_fail++;
	}
	rnic_stack_stop(SB);
	rnic_stack_stop(SA);
	rnic_stack_destroy(SB);
	rnic_stack_destroy(SA);
	if (rnic_iw_zc_live() != 0) {   /* everything freed, aborts included */
		fprintf(stderr, "zero-copy jobs still live at the end: %llu\n",
			(unsigned long long)rnic_iw_zc_live());
		n_fail++;
	}
	free(bufA);
	free(bufB);
	return conf_summary("iwarp verbs", faults, now_s() - t0);
}
