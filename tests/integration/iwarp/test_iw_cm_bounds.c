/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The iWARP connection manager against a hostile TCP peer (issue 27).
 * Stack B runs the CM (rnic_cm.h); stack A hosts "raw" peers: plain rnic
 * TCP connections whose bytes the test writes and reads itself.
 *
 *   term_crc   B connects asking for CRC (C=1) and peer-to-peer mode with
 *              a Write RTR; the raw peer replies with C=0 and a Read RTR.
 *              B answers with a Terminate, which must carry the CRC: RFC
 *              5044 s7.1.2, CRC is used when either end set C (it went
 *              out without one)
 *   backlog    B listens with backlog 4: four peers send their MPA request
 *              (delivered, left undecided); six more are reset at once and
 *              counted (mpa_backlog_full). B rejects two (mpa_req_rejected);
 *              of the two peers that take their room one stalls 10 bytes
 *              into its request and is closed by the MPA timeout; once B
 *              rejects the rest, a real connection is made
 *   evict      backlog 4 again: two undecided, two stalled 10 bytes into
 *              their request (slowloris). A new connection resets the
 *              oldest stalled one, the next one the other (the backlog
 *              makes room by evicting embryonic connections, counted in
 *              mpa_embryonic_evicted), never an undecided one; once all
 *              four wait for B, more are reset (mpa_backlog_full)
 *   refused    MPA requests with a wrong key, revision 255 and PD_Length
 *              600 are reset and counted in mpa_req_bad; an enhanced
 *              request too short for its RFC 6581 header is refused and
 *              counted in mpa_req_unacceptable
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
#include <rte_mbuf.h>

#include "rnic/rnic.h"
#include "rnic/rnic_cm.h"
#include "rnic/rnic_tcp.h"
#include "rnic/rnic_verbs.h"
#include "iwarp/crc32c.h"
#include "iwarp/iwarp.h"

#define A_IP 0xc0000b01u    /* 192.0.11.1 */
#define B_IP 0xc0000b02u
#define HANG_S 20
#define N_RAW 10
#define BACKLOG 4
#define MPA_TMO_MS 500

#define CHECK_FILE "test_iw_cm_bounds.c"
#define GUARD 0xee
#include "../common/cases.h"

static struct rnic_stack *st[2];
static struct ibv_context *ctx[2];

/* --- raw peers on A ------------------------------------------------------------ */

struct raw {
	struct rnic_tcp_conn *c;
	int up, closed, err;          /* atomics */
	uint8_t in[4096];
	size_t in_len;                /* written by A's worker (release) */
};
static struct raw raw[N_RAW];

static void raw_say(struct raw *r, const void *p, size_t n)
{
	struct rte_mbuf *m = r->c != NULL ? rte_pktmbuf_alloc(rnic_tcp_pool(r->c)) : NULL;
	if (m == NULL)
		return;
	memcpy(rte_pktmbuf_append(m, (uint16_t)n), p, n);
	if (rnic_tcp_send(r->c, m) != 0)
		rte_pktmbuf_free(m);
}

static void *raw_accept(struct rnic_tcp_conn *c, void *lctx)
{
	struct raw *r = lctx;
	r->c = c;
	__atomic_store_n(&r->up, 1, __ATOMIC_RELEASE);
	return r;
}

static void raw_connected(struct rnic_tcp_conn *c, void *ctx_)
{
	(void)c;
	struct raw *r = ctx_;
	__atomic_store_n(&r->up, 1, __ATOMIC_RELEASE);
}

static void raw_recv(struct rnic_tcp_conn *c, void *ctx_, struct rte_mbuf *m)
{
	(void)c;
	struct raw *r = ctx_;
	size_t n = r->in_len;
	for (struct rte_mbuf *x = m; x != NULL; x = x->next) {
		size_t k = RTE_MIN((size_t)x->data_len, sizeof(r->in) - n);
		memcpy(r->in + n, rte_pktmbuf_mtod(x, const uint8_t *), k);
		n += k;
	}
	__atomic_store_n(&r->in_len, n, __ATOMIC_RELEASE);
	rte_pktmbuf_free(m);
}

static void raw_noop(struct rnic_tcp_conn *c, void *ctx_) { (void)c; (void)ctx_; }

static void raw_eof(struct rnic_tcp_conn *c, void *ctx_)
{
	(void)ctx_;
	rnic_tcp_close(c);
}

static void raw_closed(struct rnic_tcp_conn *c, void *ctx_, int err)
{
	(void)c;
	struct raw *r = ctx_;
	r->c = NULL;
	r->err = err;
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
	struct rnic_addr b = rnic_addr_v4(B_IP);
	a->rc = rnic_tcp_connect_addr(w, &b, a->port, &raw_ops, a->r, &a->r->c);
}

static void raw_send_on(struct rnic_worker *w, void *arg)
{
	(void)w;
	struct raw_call *a = arg;
	a->rc = a->r->c != NULL ? 0 : -ENOTCONN;
	raw_say(a->r, a->p, a->n);
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

static struct rnic_worker *wa(void)
{
	return rnic_stack_worker(st[0], 0);
}

static void raw_connect(struct raw *r, uint16_t port)
{
	struct raw_call a = { .r = r, .port = port };
	CHECK_RC(rnic_worker_call_sync(wa(), raw_connect_on, &a), 0);
	CHECK_RC(a.rc, 0);
}

static void raw_send(struct raw *r, const void *p, size_t n)
{
	struct raw_call a = { .r = r, .p = p, .n = n };
	CHECK_RC(rnic_worker_call_sync(wa(), raw_send_on, &a), 0);
	CHECK_RC(a.rc, 0);
}

static void wait_until(int *flag, const char *what)
{
	double t0 = now_s();
	while (!__atomic_load_n(flag, __ATOMIC_ACQUIRE)) {
		CHECK(now_s() - t0 < HANG_S, "%s (hang guard)", what);
		usleep(1000);
	}
}

static void raw_wait_bytes(struct raw *r, size_t n, const char *what)
{
	double t0 = now_s();
	while (__atomic_load_n(&r->in_len, __ATOMIC_ACQUIRE) < n) {
		CHECK(now_s() - t0 < HANG_S, "%s: %zu of %zu bytes (hang guard)", what,
		      r->in_len, n);
		usleep(1000);
	}
}

static void raw_reset_all(void)
{
	for (int i = 0; i < N_RAW; i++) {
		rnic_worker_call_sync(wa(), raw_abort_on, &raw[i]);
		memset(&raw[i], 0, sizeof(raw[i]));
	}
}

/* --- B's CM --------------------------------------------------------------------- */

static struct ibv_pd *pd[2];
static struct ibv_cq *cq[2];
static struct rnic_cm_channel *ch[2];

static struct ibv_qp *rc_qp(int i)
{
	struct ibv_qp_init_attr qa = { .send_cq = cq[i], .recv_cq = cq[i], .qp_type = IBV_QPT_RC,
				       .cap = { .max_send_wr = 4, .max_recv_wr = 4,
						.max_send_sge = 1, .max_recv_sge = 1 } };
	struct ibv_qp *q = rnic_create_qp_transport(pd[i], &qa, RNIC_TRANSPORT_IWARP);
	CHECK(q != NULL, "create_qp: %s", strerror(errno));
	return q;
}

static struct rnic_cm_event get_ev(int i, enum rnic_cm_event_type t)
{
	struct rnic_cm_event ev;
	CHECK_RC(rnic_cm_get_event(ch[i], &ev, HANG_S * 1000), 0);
	CHECK(ev.type == t, "%c: event %s (status %d), expected %s", 'A' + i,
	      rnic_cm_event_str(ev.type), ev.status, rnic_cm_event_str(t));
	return ev;
}

static struct rnic_iw_stats stats(void)
{
	struct rnic_iw_stats s;
	rnic_iw_stats(st[1], &s);
	return s;
}

/* An MPA request (RFC 6581 header, IRD/ORD 4, no P2P) or reply. */
static size_t mpa_frame(uint8_t *f, bool reply, uint8_t flags, uint8_t ird_hi, uint8_t ord_hi)
{
	memcpy(f, reply ? "MPA ID Rep Frame" : "MPA ID Req Frame", 16);
	f[16] = flags;
	f[17] = 2;
	f[18] = 0;
	f[19] = 4;
	f[20] = ird_hi;
	f[21] = 4;
	f[22] = ord_hi;
	f[23] = 4;
	return 24;
}

static uint16_t next_port = 7600;

static void t_term_crc(void)
{
	uint16_t port = next_port++;
	CHECK_RC(rnic_tcp_listen(st[0], port, &raw_ops, &raw[0], 4), 0);
	struct ibv_qp *qp = rc_qp(1);
	struct rnic_cm_id *id;
	CHECK_RC(rnic_cm_create_id(ch[1], NULL, &id), 0);
	struct rnic_cm_conn_param p = { .responder_resources = 4, .initiator_depth = 4,
					.p2p = true, .rtr_types = RNIC_CM_RTR_WRITE };
	struct rnic_addr a = rnic_addr_v4(A_IP);
	CHECK_RC(rnic_cm_connect_addr(id, qp, &a, port, &p), 0);
	raw_wait_bytes(&raw[0], 24, "B's MPA request");
	CHECK((raw[0].in[16] & 0x40) != 0, "B's request without C (flags %#x)", raw[0].in[16]);
	/* reply: no CRC (C=0), P2P with a Read RTR B did not offer */
	uint8_t rep[24];
	raw_send(&raw[0], rep, mpa_frame(rep, true, 0x10, 0x80, 0x40));
	/* the Terminate: MPA length, DDP/RDMAP header (18), Terminate control
	 * (4), no pad (24 is a multiple of 4), CRC32c (4) */
	raw_wait_bytes(&raw[0], 24 + 24, "Terminate");
	usleep(200 * 1000);   /* and nothing short of its CRC */
	const uint8_t *t = raw[0].in + 24;
	size_t got = __atomic_load_n(&raw[0].in_len, __ATOMIC_ACQUIRE) - 24;
	CHECK(t[0] == 0 && t[1] == 22 && t[3] == 0x47 && t[20] == 0x20 && t[21] == 0x07,
	      "not a Terminate 'no matching RTR': len %u, RDMAP %#x, control %#x %#x",
	      t[0] << 8 | t[1], t[3], t[20], t[21]);
	CHECK(got >= 28, "Terminate FPDU of %zu bytes: sent without its CRC", got);
	uint32_t want = rnic_crc32c(0, t, 24), have = rnic_crc32c_get(t + 24);
	CHECK(want == have, "Terminate CRC %#x, expected %#x", have, want);
	get_ev(1, RNIC_CM_EVENT_CONNECT_ERROR);
	CHECK_RC(rnic_cm_destroy_id(id), 0);
	CHECK_RC(rnic_destroy_qp(qp), 0);
	rnic_tcp_unlisten(st[0], port);
	raw_reset_all();
}

/* Connect raw peer @p i to @p port and wait until it is up. */
static void raw_up(int i, uint16_t port)
{
	memset(&raw[i], 0, sizeof(raw[i]));
	raw_connect(&raw[i], port);
	wait_until(&raw[i].up, "raw peer up");
}

static void wait_startup_live(uint64_t n)
{
	double t0 = now_s();
	while (stats().startup_live != n) {
		CHECK(now_s() - t0 < HANG_S, "B: %llu endpoints in MPA startup, expected %llu",
		      (unsigned long long)stats().startup_live, (unsigned long long)n);
		usleep(1000);
	}
}

/* B accepts a connection from A's CM on @p port, and both ends close. */
static void real_connection(uint16_t port)
{
	struct ibv_qp *qa = rc_qp(0), *qb = rc_qp(1);
	struct rnic_cm_id *ida;
	CHECK_RC(rnic_cm_create_id(ch[0], NULL, &ida), 0);
	struct rnic_addr b = rnic_addr_v4(B_IP);
	CHECK_RC(rnic_cm_connect_addr(ida, qa, &b, port, NULL), 0);
	struct rnic_cm_id *idb = get_ev(1, RNIC_CM_EVENT_CONNECT_REQUEST).id;
	CHECK_RC(rnic_cm_accept(idb, qb, NULL), 0);
	get_ev(0, RNIC_CM_EVENT_ESTABLISHED);
	get_ev(1, RNIC_CM_EVENT_ESTABLISHED);
	CHECK_RC(rnic_cm_disconnect(ida), 0);
	get_ev(0, RNIC_CM_EVENT_DISCONNECTED);
	get_ev(1, RNIC_CM_EVENT_DISCONNECTED);
	CHECK_RC(rnic_cm_destroy_id(ida), 0);
	CHECK_RC(rnic_cm_destroy_id(idb), 0);
	CHECK_RC(rnic_destroy_qp(qa), 0);
	CHECK_RC(rnic_destroy_qp(qb), 0);
}

static void t_backlog(void)
{
	uint16_t port = next_port++;
	struct rnic_cm_id *l;
	CHECK_RC(rnic_cm_create_id(ch[1], NULL, &l), 0);
	CHECK_RC(rnic_cm_listen(l, port, BACKLOG), 0);
	rnic_iw_set_mpa_timeout(st[1], MPA_TMO_MS);
	struct rnic_iw_stats s0 = stats();
	uint8_t req[24];
	mpa_frame(req, false, 0x50, 0, 0);
	/* four whole requests: delivered, B does not decide */
	struct rnic_cm_id *undecided[4];
	int who[4] = { 0, 1, 2, 3 };
	for (int i = 0; i < 4; i++) {
		raw_up(i, port);
		raw_send(&raw[i], req, sizeof(req));
		undecided[i] = get_ev(1, RNIC_CM_EVENT_CONNECT_REQUEST).id;
	}
	wait_startup_live(s0.startup_live + 4);
	/* the backlog is full, nothing embryonic in it: six more are reset */
	for (int i = 4; i < N_RAW; i++) {
		memset(&raw[i], 0, sizeof(raw[i]));
		raw_connect(&raw[i], port);
	}
	for (int i = 4; i < N_RAW; i++)
		wait_until(&raw[i].closed, "a connection past the backlog still open");
	struct rnic_iw_stats s1 = stats();
	CHECK(s1.mpa_backlog_full == s0.mpa_backlog_full + 6, "B: mpa_backlog_full +%llu, "
	      "expected +6", (unsigned long long)(s1.mpa_backlog_full - s0.mpa_backlog_full));
	CHECK(s1.mpa_embryonic_evicted == s0.mpa_embryonic_evicted,
	      "B: an undecided connection evicted");
	CHECK(s1.startup_live == s0.startup_live + 4, "B: %llu endpoints in startup, expected %llu",
	      (unsigned long long)s1.startup_live, (unsigned long long)s0.startup_live + 4);
	for (int i = 0; i < 4; i++)
		CHECK(!__atomic_load_n(&raw[i].closed, __ATOMIC_ACQUIRE), "raw %d closed", i);
	/* B rejects two: counted, and room for two again */
	for (int i = 0; i < 2; i++) {
		CHECK_RC(rnic_cm_reject(undecided[i], NULL, 0), 0);
		wait_until(&raw[i].closed, "rejected connection still open");
		CHECK_RC(rnic_cm_destroy_id(undecided[i]), 0);
	}
	CHECK(stats().mpa_req_rejected == s0.mpa_req_rejected + 2 &&
	      stats().mpa_req_refused == s0.mpa_req_refused + 2,
	      "B: mpa_req_rejected +%llu, mpa_req_refused +%llu, expected +2",
	      (unsigned long long)(stats().mpa_req_rejected - s0.mpa_req_rejected),
	      (unsigned long long)(stats().mpa_req_refused - s0.mpa_req_refused));
	/* one stalls 10 bytes into its request and times out, one is
	 * undecided */
	raw_up(4, port);
	raw_send(&raw[4], req, 10);
	raw_up(5, port);
	raw_send(&raw[5], req, sizeof(req));
	undecided[0] = get_ev(1, RNIC_CM_EVENT_CONNECT_REQUEST).id;
	who[0] = 5;
	CHECK(stats().mpa_backlog_full == s1.mpa_backlog_full,
	      "B: a connection refused with room in the backlog");
	wait_until(&raw[4].closed, "a stalled MPA request still open");
	CHECK(stats().mpa_timeouts_passive == s0.mpa_timeouts_passive + 1,
	      "B: %llu passive MPA timeouts, expected 1",
	      (unsigned long long)(stats().mpa_timeouts_passive - s0.mpa_timeouts_passive));
	for (int i = 0; i < 3; i++) {
		int k = i == 0 ? 0 : i + 1;   /* undecided[0], [2], [3] */
		CHECK(!__atomic_load_n(&raw[who[k]].closed, __ATOMIC_ACQUIRE),
		      "undecided raw %d closed", who[k]);
		CHECK_RC(rnic_cm_reject(undecided[k], NULL, 0), 0);
		wait_until(&raw[who[k]].closed, "rejected connection still open");
		CHECK_RC(rnic_cm_destroy_id(undecided[k]), 0);
	}
	real_connection(port);
	CHECK_RC(rnic_cm_destroy_id(l), 0);
	raw_reset_all();
}

static void t_evict(void)
{
	uint16_t port = next_port++;
	struct rnic_cm_id *l;
	CHECK_RC(rnic_cm_create_id(ch[1], NULL, &l), 0);
	CHECK_RC(rnic_cm_listen(l, port, BACKLOG), 0);
	/* no MPA timeout during the case: only evictions close */
	rnic_iw_set_mpa_timeout(st[1], HANG_S * 1000);
	struct rnic_iw_stats s0 = stats();
	uint8_t req[24];
	mpa_frame(req, false, 0x50, 0, 0);
	struct rnic_cm_id *undecided[4];
	for (int i = 0; i < 2; i++) {
		raw_up(i, port);
		raw_send(&raw[i], req, sizeof(req));
		undecided[i] = get_ev(1, RNIC_CM_EVENT_CONNECT_REQUEST).id;
	}
	for (int i = 2; i < 4; i++) {   /* slowloris */
		raw_up(i, port);
		raw_send(&raw[i], req, 10);
	}
	wait_startup_live(s0.startup_live + 4);
	/* full: a new connection resets the oldest stalled one, and stays */
	raw_up(4, port);
	wait_until(&raw[2].closed, "the oldest embryonic connection not evicted");
	CHECK(raw[2].err == -ECONNRESET, "raw 2 closed with %d, not reset", raw[2].err);
	CHECK(!__atomic_load_n(&raw[3].closed, __ATOMIC_ACQUIRE),
	      "a younger embryonic connection evicted first");
	raw_up(5, port);
	wait_until(&raw[3].closed, "the second embryonic connection not evicted");
	struct rnic_iw_stats s1 = stats();
	CHECK(s1.mpa_embryonic_evicted == s0.mpa_embryonic_evicted + 2 &&
	      s1.mpa_backlog_full == s0.mpa_backlog_full,
	      "B: mpa_embryonic_evicted +%llu (expected +2), mpa_backlog_full +%llu (expected 0)",
	      (unsigned long long)(s1.mpa_embryonic_evicted - s0.mpa_embryonic_evicted),
	      (unsigned long long)(s1.mpa_backlog_full - s0.mpa_backlog_full));
	/* the newcomers' requests are served, the undecided untouched */
	for (int i = 4; i < 6; i++) {
		CHECK(!__atomic_load_n(&raw[i].closed, __ATOMIC_ACQUIRE), "raw %d closed", i);
		raw_send(&raw[i], req, sizeof(req));
		undecided[i - 2] = get_ev(1, RNIC_CM_EVENT_CONNECT_REQUEST).id;
	}
	for (int i = 0; i < 2; i++)
		CHECK(!__atomic_load_n(&raw[i].closed, __ATOMIC_ACQUIRE), "undecided raw %d closed", i);
	/* all four wait for B: nothing to evict, more are reset */
	for (int i = 6; i < N_RAW; i++) {
		memset(&raw[i], 0, sizeof(raw[i]));
		raw_connect(&raw[i], port);
	}
	for (int i = 6; i < N_RAW; i++)
		wait_until(&raw[i].closed, "a connection past a backlog of undecided ones open");
	struct rnic_iw_stats s2 = stats();
	CHECK(s2.mpa_backlog_full == s0.mpa_backlog_full + 4 &&
	      s2.mpa_embryonic_evicted == s1.mpa_embryonic_evicted,
	      "B: mpa_backlog_full +%llu (expected +4), evicted +%llu (expected 0)",
	      (unsigned long long)(s2.mpa_backlog_full - s0.mpa_backlog_full),
	      (unsigned long long)(s2.mpa_embryonic_evicted - s1.mpa_embryonic_evicted));
	for (int k = 0; k < 4; k++) {
		int i = k < 2 ? k : k + 2;
		CHECK(!__atomic_load_n(&raw[i].closed, __ATOMIC_ACQUIRE), "undecided raw %d closed", i);
		CHECK_RC(rnic_cm_reject(undecided[k], NULL, 0), 0);
		wait_until(&raw[i].closed, "rejected connection still open");
		CHECK_RC(rnic_cm_destroy_id(undecided[k]), 0);
	}
	real_connection(port);
	CHECK_RC(rnic_cm_destroy_id(l), 0);
	rnic_iw_set_mpa_timeout(st[1], MPA_TMO_MS);
	raw_reset_all();
}

static void t_refused(void)
{
	uint16_t port = next_port++;
	struct rnic_cm_id *l;
	CHECK_RC(rnic_cm_create_id(ch[1], NULL, &l), 0);
	CHECK_RC(rnic_cm_listen(l, port, BACKLOG), 0);
	struct rnic_iw_stats s0 = stats();
	uint8_t bad[3][24];
	mpa_frame(bad[0], false, 0x50, 0, 0);
	memcpy(bad[0], "MPA ID Bad Frame", 16);
	mpa_frame(bad[1], false, 0x50, 0, 0);
	bad[1][17] = 255;
	mpa_frame(bad[2], false, 0x50, 0, 0);
	bad[2][18] = 600 >> 8;
	bad[2][19] = 600 & 0xff;
	for (int i = 0; i < 3; i++) {
		raw_up(i, port);
		raw_send(&raw[i], bad[i], sizeof(bad[i]));
		wait_until(&raw[i].closed, "a malformed MPA request not refused");
	}
	/* enhanced (rev 2, the flag set) with PD_Length 0: too short for
	 * the RFC 6581 header it announces */
	uint8_t v2[24];
	mpa_frame(v2, false, 0x50, 0, 0);
	v2[19] = 0;
	raw_up(3, port);
	raw_send(&raw[3], v2, 20);
	wait_until(&raw[3].closed, "an unacceptable MPA request not refused");
	struct rnic_iw_stats s1 = stats();
	CHECK(s1.mpa_req_bad == s0.mpa_req_bad + 3, "B: mpa_req_bad +%llu, expected +3",
	      (unsigned long long)(s1.mpa_req_bad - s0.mpa_req_bad));
	CHECK(s1.mpa_req_unacceptable == s0.mpa_req_unacceptable + 1,
	      "B: mpa_req_unacceptable +%llu, expected +1",
	      (unsigned long long)(s1.mpa_req_unacceptable - s0.mpa_req_unacceptable));
	CHECK(s1.mpa_req_refused == s0.mpa_req_refused + 4, "B: mpa_req_refused +%llu, expected +4",
	      (unsigned long long)(s1.mpa_req_refused - s0.mpa_req_refused));
	CHECK_RC(rnic_cm_destroy_id(l), 0);
	raw_reset_all();
}

int main(int argc, char **argv)
{
	struct rnic_config c;
	const char *filter = argc > 1 ? argv[1] : NULL;
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (check_eal_init(argv[0], &c, 2) != 0)
		return 1;
	if (cases_stacks_up("icb", A_IP, B_IP, st, ctx) != 0)
		return 1;
	for (int i = 0; i < 2; i++) {
		pd[i] = rnic_alloc_pd(ctx[i]);
		cq[i] = rnic_create_cq(ctx[i], 64, NULL, NULL, 0);
		ch[i] = rnic_cm_create_channel(ctx[i]);
		if (pd[i] == NULL || cq[i] == NULL || ch[i] == NULL) {
			fprintf(stderr, "PD, CQ or channel: %s\n", strerror(errno));
			return 1;
		}
	}
	static const struct { const char *name; void (*fn)(void); } cases[] = {
		{ "term_crc", t_term_crc },
		{ "backlog", t_backlog },
		{ "evict", t_evict },
		{ "refused", t_refused },
	};
	for (unsigned i = 0; i < RTE_DIM(cases); i++)
		if (filter == NULL || strstr(cases[i].name, filter) != NULL)
			run_case(cases[i].name, cases[i].fn);
	for (int i = 0; i < 2; i++) {
		struct rnic_cm_event ev;
		while (rnic_cm_get_event(ch[i], &ev, 0) == 0)
			;
		rnic_cm_destroy_channel(ch[i]);
		struct ibv_wc wc[8];
		while (ibv_poll_cq(cq[i], 8, wc) > 0)
			;
		rnic_destroy_cq(cq[i]);
		rnic_dealloc_pd(pd[i]);
	}
	n_fail += check_pair_down(st, ctx, "icb");
	printf("%d passed, %d failed\n", n_pass, n_fail);
	return n_fail ? 1 : 0;
}
