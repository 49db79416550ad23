/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The verbs conformance suite: the cases every transport must pass the
 * same way, written once and run by the iWARP program
 * (tests/integration/iwarp/test_verbs.c) and the RoCE one
 * (tests/integration/roce/test_roce.c), each on a clean link and through
 * the fault injector (meson: verbs_conformance_{iwarp,roce}_{clean,lossy}).
 * What only one transport has (MPA, Terminate details, PSNs, NAKs, UD, the
 * CM) stays in that transport's program.
 *
 * Both ends live in one process on two stacks over net_ring; a case gets
 * two connected RC QPs from the transport (pair_up) and speaks only the
 * public verbs API. Where the transports legitimately differ, a case asks
 * the transport through a hook (conf_refused, conf_bad_post_states) and
 * the rest of the case stays common.
 *
 * The includer has included ../common/check.h and defines, before
 * including this file:
 *   KiB, MiB, BUF_LEN, BASE        sizes; data starts at BASE in the buffers
 *   struct end                     name, ctx, pd, cq, qp, mr, buf, xmr[4]
 *   struct opts, DEF               QP options with at least `sq`, the defaults
 *   static struct end a, b;        the two ends of the running case
 *   static bool faults;            the lossy run
 *   static int hang_s;             hang guard of one wait (never an assertion)
 *   static int n_pass, n_fail, n_skip; static char skipped[], failed[];
 *   pair_up(const struct opts *)   a.qp and b.qp connected, both in RTS
 *   CONF_SEND_IMM_SPLIT            1 where a Send with Immediate arrives as
 *                                  two messages (iWARP, RFC 7306: the Send,
 *                                  then an Immediate Data message that takes
 *                                  a receive of its own), 0 where it is one
 *                                  (RoCE)
 *   CONF_READ_MAX_SGE              the SGEs a Read may scatter into (iWARP:
 *                                  1, as siw; RoCE: RNIC_MAX_SGE)
 * and later the hooks declared below.
 *
 * Everything here waits with hang guards only: no case asserts on time.
 */
#ifndef RNIC_TESTS_INTEGRATION_VERBS_CONFORMANCE_H
#define RNIC_TESTS_INTEGRATION_VERBS_CONFORMANCE_H

#include <arpa/inet.h>
#include <stdlib.h>
#include <unistd.h>

#include <rte_common.h>

#include "../common/pair.h"

/* --- the data-path helpers ------------------------------------------------------------ */

/* Exactly @p n completions (hang guard only). */
static void wait_wc(struct ibv_cq *cq, struct ibv_wc *wc, int n, const char *what)
{
	int got = 0;
	unsigned idle = 0;
	double t0 = now_s();
	while (got < n) {
		int k = ibv_poll_cq(cq, n - got, wc + got);
		CHECK(k >= 0, "%s: ibv_poll_cq = %d", what, k);
		if (k > 0) {
			got += k;
			idle = 0;
			continue;
		}
		if (++idle < 2000)
			continue;
		usleep(20);
		if ((idle & 255) == 0 && now_s() - t0 > hang_s)
			break;
	}
	CHECK(got == n, "%s: %d of %d completions in %d s (hang guard)", what, got, n, hang_s);
}

#define ANY (-1)
static const char *st_str(int s)
{
	return s == ANY ? "any" : rnic_wc_status_str((enum ibv_wc_status)s);
}

/* The next completion on @p cq is for @p wr_id on @p qp, with @p opcode,
 * @p status and @p len (ANY or -1: whatever). */
static struct ibv_wc expect_wc(struct ibv_cq *cq, const struct ibv_qp *qp, uint64_t wr_id,
			       int opcode, int status, long long len, const char *what)
{
	struct ibv_wc wc;
	wait_wc(cq, &wc, 1, what);
	CHECK(wc.wr_id == wr_id && (status == ANY || (int)wc.status == status) &&
	      (opcode == ANY || (int)wc.opcode == opcode) &&
	      (len < 0 || wc.byte_len == (unsigned long long)len) && wc.qp_num == qp->qp_num,
	      "%s: completion wr_id %llu status %d (%s) opcode %d byte_len %u qp %u; expected "
	      "wr_id %llu status %d (%s) opcode %d byte_len %lld qp %u", what,
	      (unsigned long long)wc.wr_id, wc.status, rnic_wc_status_str(wc.status), wc.opcode,
	      wc.byte_len, wc.qp_num, (unsigned long long)wr_id, status, st_str(status), opcode,
	      len, qp->qp_num);
	return wc;
}

#define NO_IMM (1ull << 32)
/* A successful receive completion; @p imm is the immediate data (network
 * order, as in the WR) or NO_IMM, and the flag must say the same. */
static struct ibv_wc expect_recv(struct end *e, const struct ibv_qp *qp, uint64_t wr_id,
				 int opcode, long long len, uint64_t imm, const char *what)
{
	struct ibv_wc wc = expect_wc(e->cq, qp, wr_id, opcode, IBV_WC_SUCCESS, len, what);
	if (imm == NO_IMM)
		CHECK(!(wc.wc_flags & IBV_WC_WITH_IMM), "%s: receive with IBV_WC_WITH_IMM "
		      "(imm %#x) for a message without", what, ntohl(wc.imm_data));
	else
		CHECK((wc.wc_flags & IBV_WC_WITH_IMM) && wc.imm_data == (uint32_t)imm,
		      "%s: wc_flags %#x imm_data %#x (host order), expected WITH_IMM %#x", what,
		      wc.wc_flags, ntohl(wc.imm_data), ntohl((uint32_t)imm));
	return wc;
}

/* Nothing more on @p e's CQ right now. */
static void no_stray(struct end *e, const char *what)
{
	struct ibv_wc wc;
	int k = ibv_poll_cq(e->cq, 1, &wc);
	CHECK(k == 0, "%s: stray completion on %s: wr_id %llu status %d (%s) opcode %d qp %u",
	      what, e->name, (unsigned long long)wc.wr_id, wc.status,
	      rnic_wc_status_str(wc.status), wc.opcode, wc.qp_num);
}

/* The end of a case: no late or duplicated completion shows up on
 * either side (retransmissions still under way would bring them). */
static void check_quiet(void)
{
	usleep(faults ? 100000 : 20000);
	no_stray(&a, "after the case");
	no_stray(&b, "after the case");
}

static int post_wr(struct ibv_qp *qp, enum ibv_wr_opcode op, uint64_t id, struct ibv_sge *sg,
		   int nsge, uint64_t raddr, uint32_t rkey, unsigned flags)
{
	struct ibv_send_wr wr = { .wr_id = id, .sg_list = sg, .num_sge = nsge, .opcode = op,
				  .send_flags = flags }, *bad = NULL;
	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	int rc = ibv_post_send(qp, &wr, &bad);
	CHECK(rc == 0 || bad == &wr, "post_send = %d but bad_wr %p is not the WR %p", rc,
	      (void *)bad, (void *)&wr);
	return rc;
}

static int post1(struct end *e, enum ibv_wr_opcode op, uint64_t id, const uint8_t *laddr,
		 uint32_t len, uint64_t raddr, uint32_t rkey, unsigned flags)
{
	struct ibv_sge s = { (uintptr_t)laddr, len, e->mr->lkey };
	return post_wr(e->qp, op, id, &s, 1, raddr, rkey, flags);
}

/* An 8-byte atomic on @p qp, its result to @p res (@p reslen bytes). */
static int post_atomic(struct ibv_qp *qp, uint32_t lkey, uint64_t id, uint64_t *res,
		       uint32_t reslen, uint64_t raddr, uint32_t rkey, bool cas, uint64_t cmp_add,
		       uint64_t swap)
{
	struct ibv_sge s = { (uintptr_t)res, reslen, lkey };
	struct ibv_send_wr wr = { .wr_id = id, .sg_list = &s, .num_sge = 1,
				  .opcode = cas ? IBV_WR_ATOMIC_CMP_AND_SWP :
						  IBV_WR_ATOMIC_FETCH_AND_ADD,
				  .send_flags = IBV_SEND_SIGNALED }, *bad = NULL;
	wr.wr.atomic.remote_addr = raddr;
	wr.wr.atomic.rkey = rkey;
	wr.wr.atomic.compare_add = cmp_add;
	wr.wr.atomic.swap = swap;
	int rc = ibv_post_send(qp, &wr, &bad);
	CHECK(rc == 0 || bad == &wr, "post_send(atomic) = %d but bad_wr %p is not the WR", rc,
	      (void *)bad);
	return rc;
}

static void recv_on(struct ibv_qp *qp, struct ibv_mr *mr, uint64_t id, const uint8_t *addr,
		    uint32_t len)
{
	struct ibv_sge s = { (uintptr_t)addr, len, mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = id, .sg_list = &s, .num_sge = 1 }, *bad = NULL;
	CHECK_RC(ibv_post_recv(qp, &wr, &bad), 0);
}

static void recv1(struct end *e, uint64_t id, const uint8_t *addr, uint32_t len)
{
	recv_on(e->qp, e->mr, id, addr, len);
}

/* A zero-length Send from @p s to @p r: once it is received, everything
 * @p s posted before it has been placed in @p r's memory (an iWARP Write
 * completes when TCP has it, before the peer placed it). */
static void fence_send(struct end *s, struct end *r, uint64_t id)
{
	recv1(r, id, r->buf, 16);
	CHECK_RC(post1(s, IBV_WR_SEND, id, s->buf, 0, 0, 0, IBV_SEND_SIGNALED), 0);
	expect_wc(s->cq, s->qp, id, IBV_WC_SEND, IBV_WC_SUCCESS, ANY, "fence send");
	expect_recv(r, r->qp, id, IBV_WC_RECV, 0, NO_IMM, "fence recv");
}

/* The wr_id of the receive that takes the Immediate Data message of a
 * split Send with Immediate whose data went to receive @p id. */
#define IMM_RECV(id) ((id) | (1ull << 40))

/* The receives a Send with Immediate of up to @p len bytes needs at @p e:
 * receive @p id for the data at @p addr and, where the transport splits
 * it, receive IMM_RECV(@p id) right behind it for the Immediate Data. */
static void recv_send_imm(struct end *e, uint64_t id, const uint8_t *addr, uint32_t len)
{
	recv1(e, id, addr, len);
	if (CONF_SEND_IMM_SPLIT)
		recv1(e, IMM_RECV(id), e->buf, 16);
}

/* The receive completions of a Send with Immediate (@p len bytes,
 * immediate @p imm) posted with recv_send_imm(): one with the data and the
 * immediate, or, split, the data's without and a zero-length one with. */
static void expect_send_imm(struct end *e, uint64_t id, long long len, uint32_t imm,
			    const char *what)
{
	expect_recv(e, e->qp, id, IBV_WC_RECV, len, CONF_SEND_IMM_SPLIT ? NO_IMM : imm, what);
	if (CONF_SEND_IMM_SPLIT)
		expect_recv(e, e->qp, IMM_RECV(id), IBV_WC_RECV, 0, imm, what);
}

/* The immediate data of the message tagged @p tag (network order). */
static uint32_t imm_of(uint64_t tag)
{
	return htonl((uint32_t)(tag * 0x9e3779b1u) ^ 0xa5000000u);
}

/* Sort the completions of one end by wr_id (SQ and RQ may interleave). */
static int cmp_wc(const void *x, const void *y)
{
	const struct ibv_wc *p = x, *q = y;
	return p->wr_id < q->wr_id ? -1 : p->wr_id > q->wr_id;
}

static size_t sg_total(const uint32_t *len, unsigned n)
{
	size_t t = 0;
	for (unsigned i = 0; i < n; i++)
		t += len[i];
	return t;
}

/* A binds a type 2 window on its QP (IBV_WR_BIND_MW); returns its rkey. */
static uint32_t bind2(struct ibv_mw *mw, uint8_t *addr, uint32_t len, int acc, uint64_t id)
{
	struct ibv_send_wr bw = { .wr_id = id, .opcode = IBV_WR_BIND_MW,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	bw.bind_mw.mw = mw;
	bw.bind_mw.rkey = ibv_inc_rkey(mw->rkey);
	bw.bind_mw.bind_info = (struct ibv_mw_bind_info){ .mr = a.mr, .addr = (uintptr_t)addr,
							  .length = len, .mw_access_flags = acc };
	int rc = ibv_post_send(a.qp, &bw, &bad);
	if (rc == EOPNOTSUPP)
		skip_case("IBV_WR_BIND_MW: post_send returns EOPNOTSUPP");
	CHECK_RC(rc, 0);
	expect_wc(a.cq, a.qp, id, IBV_WC_BIND_MW, IBV_WC_SUCCESS, ANY, "bind");
	return bw.bind_mw.rkey;
}

/* --- what the transport says ---------------------------------------------------------- */

/* The refused remote accesses of remote_fault(). */
enum rfault {
	W_RKEY, W_OOB, W_RIGHT,   /* a Write: wrong key, past the MR, no remote write */
	R_RKEY, R_OOB, R_RIGHT,   /* a Read likewise */
	A_RIGHT, A_OOB,           /* a fetch-and-add: no remote atomic, past the MR */
	S_LONG,                   /* a Send longer than the receive */
	S_NORECV,                 /* a Send with no receive posted */
};

/*
 * The transport's part of remote_fault(k): B's refused request (wr_id 3)
 * and the two posted behind it (4, 5) completed as @p req[0..2] show, and
 * A's second receive (902) as @p arecv shows (not successfully; NULL for
 * S_NORECV, which has none); check their statuses, A's QP and the
 * connection.
 */
static void conf_refused(enum rfault k, const struct ibv_wc *req, const struct ibv_wc *arecv);

/* The transport's part of bad_post: posts on @p b's side that the QP's
 * state refuses before the connection is up. */
static void conf_bad_post_states(void);

/* --- scatter/gather ----------------------------------------------------------------------- */

/* 8 SGEs gathered into 8 differently cut receive SGEs, into the same cut,
 * and the other way round into a list with room to spare. */
static void c_multi_sge_send(void)
{
	pair_up(&DEF);
	struct ibv_sge ss[RNIC_MAX_SGE], rs[RNIC_MAX_SGE];
	size_t total = sg_total(sg_send, RNIC_MAX_SGE);
	uint8_t *expect = malloc(total);
	CHECK(expect != NULL, "malloc");
	for (int round = 0; round < 3; round++) {
		/* round 0: 8 gathered into 8 differently cut; 1: into exactly the
		 * same cut; 2: A to B, into a list cut otherwise with room to spare */
		struct end *s = round == 2 ? &a : &b, *r = round == 2 ? &b : &a;
		gather_sges(s->buf + BASE, s->mr->lkey,
			    ss, sg_send, RNIC_MAX_SGE, 128 * KiB, 3, expect, 40 + round);
		scatter_sges(r->buf + BASE, r->mr->lkey,
			    rs, round == 1 ? sg_send : sg_recv, RNIC_MAX_SGE, 256 * KiB, 5);
		struct ibv_recv_wr rw = { .wr_id = 50 + round, .sg_list = rs,
					  .num_sge = RNIC_MAX_SGE }, *rbad;
		CHECK_RC(ibv_post_recv(r->qp, &rw, &rbad), 0);
		CHECK_RC(post_wr(s->qp, IBV_WR_SEND, 60 + round, ss, RNIC_MAX_SGE, 0, 0,
				 IBV_SEND_SIGNALED), 0);
		expect_wc(s->cq, s->qp, 60 + round, IBV_WC_SEND, IBV_WC_SUCCESS, ANY, "send");
		expect_recv(r, r->qp, 50 + round, IBV_WC_RECV, (long long)total, NO_IMM, "recv");
		check_scatter(rs, RNIC_MAX_SGE, expect, total, "multi-SGE send");
	}
	free(expect);
	check_quiet();
}

/* Writes gathered from 2 and from 8 SGEs land contiguously. */
static void c_multi_sge_write(void)
{
	pair_up(&DEF);
	struct ibv_sge ss[RNIC_MAX_SGE];
	uint8_t *expect = malloc(sg_total(sg_send, RNIC_MAX_SGE));
	CHECK(expect != NULL, "malloc");
	for (int nsge = 2; nsge <= RNIC_MAX_SGE; nsge += RNIC_MAX_SGE - 2) {
		size_t t = sg_total(sg_send, (unsigned)nsge);
		gather_sges(b.buf + BASE, b.mr->lkey,
			    ss, sg_send, (unsigned)nsge, 128 * KiB, 7, expect, 70 + nsge);
		uint8_t *dst = a.buf + BASE + 3;
		memset(dst - 64, GUARD, t + 128);
		CHECK_RC(post_wr(b.qp, IBV_WR_RDMA_WRITE, 80 + nsge, ss, nsge, (uintptr_t)dst,
				 a.mr->rkey, IBV_SEND_SIGNALED), 0);
		expect_wc(b.cq, b.qp, 80 + nsge, IBV_WC_RDMA_WRITE, IBV_WC_SUCCESS, ANY, "write");
		fence_send(&b, &a, 90 + nsge);
		CHECK_DATA(dst, expect, t, "gathered write");
		CHECK_UNTOUCHED(dst - 64, 64, GUARD, "before the write");
		CHECK_UNTOUCHED(dst + t, 64, GUARD, "after the write");
	}
	free(expect);
	check_quiet();
}

/* A Read scattered into as many SGEs as the transport allows (RoCE: 8, as
 * libibverbs allows max_send_sge for Reads; iWARP: 1, and more are refused
 * at post, as siw does). */
static void c_multi_sge_read(void)
{
	pair_up(&DEF);
	struct ibv_sge rs[RNIC_MAX_SGE];
	size_t total = sg_total(sg_send, RNIC_MAX_SGE);
	uint8_t *src = a.buf + BASE + 1;
	fill(src, total, 99);
	scatter_sges(b.buf + BASE, b.mr->lkey, rs, sg_send, RNIC_MAX_SGE, 128 * KiB, 3);
	int rc = post_wr(b.qp, IBV_WR_RDMA_READ, 1, rs, RNIC_MAX_SGE, (uintptr_t)src, a.mr->rkey,
			 IBV_SEND_SIGNALED);
	if (CONF_READ_MAX_SGE < RNIC_MAX_SGE) {
		CHECK(rc == EINVAL, "RDMA_READ with %d SGEs: %d, expected EINVAL (at most %d)",
		      RNIC_MAX_SGE, rc, CONF_READ_MAX_SGE);
		const uint32_t one[1] = { (uint32_t)total };
		scatter_sges(b.buf + BASE, b.mr->lkey, rs, one, CONF_READ_MAX_SGE, 4 * MiB, 3);
		rc = post_wr(b.qp, IBV_WR_RDMA_READ, 1, rs, CONF_READ_MAX_SGE, (uintptr_t)src,
			     a.mr->rkey, IBV_SEND_SIGNALED);
	}
	CHECK(rc == 0, "RDMA_READ with %d SGEs refused with %d", CONF_READ_MAX_SGE, rc);
	expect_wc(b.cq, b.qp, 1, IBV_WC_RDMA_READ, IBV_WC_SUCCESS, (long long)total, "read");
	check_scatter(rs, CONF_READ_MAX_SGE, src, total, "scattered read");
	check_quiet();
}

/* --- inline, chains, unsignaled, a deep Read pipeline ------------------------------------- */

/* Inline Sends (with and without immediate data) from unregistered memory
 * with a meaningless lkey, up to the limit; a gathered inline Write; one
 * byte over the limit is refused at post and queues nothing. */
static void c_inline(void)
{
	pair_up(&DEF);
	static const uint32_t isz[] = { 0, 1, 7, 64, RNIC_MAX_INLINE };
	uint8_t tmp[RNIC_MAX_INLINE + 8], want[RNIC_MAX_INLINE + 8];
	struct ibv_send_wr *bad;
	for (unsigned i = 0; i < 2 * RTE_DIM(isz); i++) {
		uint32_t n = isz[i % RTE_DIM(isz)];
		bool imm = i >= RTE_DIM(isz);
		fill(tmp, n, 200 + i);
		memcpy(want, tmp, n);
		uint8_t *dst = a.buf + BASE + 1;
		memset(dst - 8, GUARD, n + 80);
		if (imm)
			recv_send_imm(&a, i, dst, n + 64);
		else
			recv1(&a, i, dst, n + 64);
		struct ibv_sge s = { (uintptr_t)tmp, n, 0xdeadbe };
		struct ibv_send_wr wr = { .wr_id = i, .sg_list = &s, .num_sge = 1,
					  .opcode = imm ? IBV_WR_SEND_WITH_IMM : IBV_WR_SEND,
					  .send_flags = IBV_SEND_INLINE | IBV_SEND_SIGNALED,
					  .imm_data = imm_of(i) };
		CHECK_RC(ibv_post_send(b.qp, &wr, &bad), 0);
		memset(tmp, 0, sizeof(tmp));   /* the WR owns a copy */
		expect_wc(b.cq, b.qp, i, IBV_WC_SEND, IBV_WC_SUCCESS, ANY, "inline send");
		if (imm)
			expect_send_imm(&a, i, n, imm_of(i), "inline recv");
		else
			expect_recv(&a, a.qp, i, IBV_WC_RECV, n, NO_IMM, "inline recv");
		CHECK_DATA(dst, want, n, "inline send");
		CHECK_UNTOUCHED(dst + n, 64, GUARD, "past the inline send");
	}
	uint8_t p1[10], p2[50], p3[68];
	fill(p1, sizeof(p1), 1);
	fill(p2, sizeof(p2), 2);
	fill(p3, sizeof(p3), 3);
	memcpy(want, p1, 10);
	memcpy(want + 10, p2, 50);
	memcpy(want + 60, p3, 68);
	struct ibv_sge s3[3] = { { (uintptr_t)p1, 10, 0 }, { (uintptr_t)p2, 50, 0 },
				 { (uintptr_t)p3, 68, 0 } };
	uint8_t *dst = a.buf + BASE + 4096 + 3;
	memset(dst - 8, GUARD, 128 + 16);
	struct ibv_send_wr wr = { .wr_id = 40, .sg_list = s3, .num_sge = 3,
				  .opcode = IBV_WR_RDMA_WRITE,
				  .send_flags = IBV_SEND_INLINE | IBV_SEND_SIGNALED };
	wr.wr.rdma.remote_addr = (uintptr_t)dst;
	wr.wr.rdma.rkey = a.mr->rkey;
	CHECK_RC(ibv_post_send(b.qp, &wr, &bad), 0);
	memset(p2, 0, sizeof(p2));
	expect_wc(b.cq, b.qp, 40, IBV_WC_RDMA_WRITE, IBV_WC_SUCCESS, ANY, "inline write");
	fence_send(&b, &a, 41);
	CHECK_DATA(dst, want, 128, "inline write");
	CHECK_UNTOUCHED(dst - 8, 8, GUARD, "before the inline write");
	CHECK_UNTOUCHED(dst + 128, 8, GUARD, "past the inline write");
	uint8_t big[RNIC_MAX_INLINE + 1] = { 0 };
	struct ibv_sge sb = { (uintptr_t)big, sizeof(big), 0 };
	struct ibv_send_wr w2 = { .wr_id = 42, .sg_list = &sb, .num_sge = 1, .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_INLINE | IBV_SEND_SIGNALED };
	bad = NULL;
	int rc = ibv_post_send(b.qp, &w2, &bad);
	CHECK(rc != 0 && bad == &w2, "inline of %u bytes: rc %d bad_wr %p", RNIC_MAX_INLINE + 1,
	      rc, (void *)bad);
	fence_send(&b, &a, 43);   /* and nothing was queued by it */
	check_quiet();
}

/* Every opcode in one chained post: requester completions in posting order
 * (an unsignaled one silent), the responder's receives in order. */
static void c_wr_chain(void)
{
	enum { N = 10 };
	pair_up(&DEF);
	uint8_t *bs = b.buf + BASE, *as = a.buf + BASE;
	fill(bs, 64 * KiB, 1);
	fill(as + 32 * KiB, 8 * KiB, 2);
	memset(as, GUARD, 16 * KiB);
	memset(bs + 64 * KiB, GUARD, 16 * KiB);
	uint64_t *ctr = (uint64_t *)(void *)(as + 48 * KiB);
	*ctr = 500;
	uint64_t *res = (uint64_t *)(void *)(bs + 80 * KiB);
	res[0] = res[1] = 0;
	recv1(&a, 102, as + 4096, 200);
	recv1(&a, 105, as + 8192, 16);
	recv_send_imm(&a, 108, as + 12288, 64);
	recv1(&a, 109, as + 12288 + 64, 16);
	struct ibv_sge sg[N] = {
		{ (uintptr_t)bs, 1000, b.mr->lkey },              /* write -> as */
		{ (uintptr_t)bs + 2000, 100, b.mr->lkey },        /* send */
		{ (uintptr_t)bs + 64 * KiB, 5000, b.mr->lkey },   /* read <- as+32K */
		{ (uintptr_t)bs + 3000, 77, b.mr->lkey },         /* write -> as+2000, unsignaled */
		{ (uintptr_t)bs, 0, b.mr->lkey },                 /* send, empty */
		{ (uintptr_t)bs + 72 * KiB + 1, 1, b.mr->lkey },  /* read 1 byte */
		{ (uintptr_t)&res[0], 8, b.mr->lkey },            /* fetch-add */
		{ (uintptr_t)bs + 4000, 33, b.mr->lkey },         /* send with imm */
		{ (uintptr_t)bs + 5000, 300, b.mr->lkey },        /* write with imm -> as+3000 */
		{ (uintptr_t)&res[1], 8, b.mr->lkey },            /* cmp-swap */
	};
	static const enum ibv_wr_opcode op[N] = { IBV_WR_RDMA_WRITE, IBV_WR_SEND,
		IBV_WR_RDMA_READ, IBV_WR_RDMA_WRITE, IBV_WR_SEND, IBV_WR_RDMA_READ,
		IBV_WR_ATOMIC_FETCH_AND_ADD, IBV_WR_SEND_WITH_IMM, IBV_WR_RDMA_WRITE_WITH_IMM,
		IBV_WR_ATOMIC_CMP_AND_SWP };
	uint64_t raddr[N] = { (uintptr_t)as, 0, (uintptr_t)as + 32 * KiB, (uintptr_t)as + 2000, 0,
			      (uintptr_t)as + 40 * KiB - 1, (uintptr_t)ctr, 0,
			      (uintptr_t)as + 3000, (uintptr_t)ctr };
	struct ibv_send_wr wr[N], *bad = NULL;
	for (int i = 0; i < N; i++) {
		wr[i] = (struct ibv_send_wr){ .wr_id = 101 + (uint64_t)i,
					      .next = i < N - 1 ? &wr[i + 1] : NULL,
					      .sg_list = &sg[i], .num_sge = 1, .opcode = op[i],
					      .send_flags = i == 3 ? 0 : IBV_SEND_SIGNALED,
					      .imm_data = imm_of(101 + (uint64_t)i) };
		if (op[i] == IBV_WR_ATOMIC_FETCH_AND_ADD || op[i] == IBV_WR_ATOMIC_CMP_AND_SWP) {
			wr[i].wr.atomic.remote_addr = raddr[i];
			wr[i].wr.atomic.rkey = a.mr->rkey;
			wr[i].wr.atomic.compare_add = op[i] == IBV_WR_ATOMIC_CMP_AND_SWP ? 507 : 7;
			wr[i].wr.atomic.swap = 9000;
		} else {
			wr[i].wr.rdma.remote_addr = raddr[i];
			wr[i].wr.rdma.rkey = a.mr->rkey;
		}
	}
	CHECK_RC(ibv_post_send(b.qp, wr, &bad), 0);
	static const int wco[N] = { IBV_WC_RDMA_WRITE, IBV_WC_SEND, IBV_WC_RDMA_READ, 0,
				    IBV_WC_SEND, IBV_WC_RDMA_READ, IBV_WC_FETCH_ADD, IBV_WC_SEND,
				    IBV_WC_RDMA_WRITE, IBV_WC_COMP_SWAP };
	static const int wcl[N] = { ANY, ANY, 5000, 0, ANY, 1, 8, ANY, ANY, 8 };
	for (int i = 0; i < N; i++)
		if (i != 3)
			expect_wc(b.cq, b.qp, 101 + (uint64_t)i, wco[i], IBV_WC_SUCCESS, wcl[i],
				  "chained WR");
	expect_recv(&a, a.qp, 102, IBV_WC_RECV, 100, NO_IMM, "recv 1");
	expect_recv(&a, a.qp, 105, IBV_WC_RECV, 0, NO_IMM, "recv 2");
	expect_send_imm(&a, 108, 33, imm_of(108), "recv 3 (send with imm)");
	expect_recv(&a, a.qp, 109, IBV_WC_RECV_RDMA_WITH_IMM, 300, imm_of(109),
		    "recv 4 (write with imm)");
	CHECK_DATA(as, bs, 1000, "chained write");
	CHECK_DATA(as + 4096, bs + 2000, 100, "chained send");
	CHECK_DATA(bs + 64 * KiB, as + 32 * KiB, 5000, "chained read");
	CHECK_DATA(as + 2000, bs + 3000, 77, "chained unsignaled write");
	CHECK_DATA(bs + 72 * KiB + 1, as + 40 * KiB - 1, 1, "chained 1-byte read");
	CHECK_DATA(as + 12288, bs + 4000, 33, "chained send with imm");
	CHECK_DATA(as + 3000, bs + 5000, 300, "chained write with imm");
	CHECK(res[0] == 500 && res[1] == 507, "atomics returned %llu and %llu, expected 500 "
	      "and 507", (unsigned long long)res[0], (unsigned long long)res[1]);
	CHECK(*ctr == 9000, "counter %llu, expected 9000", (unsigned long long)*ctr);
	check_quiet();
}

/* 1000 small Writes, every 100th signaled, through an SQ of 64: exactly 10
 * completions, then the next one is the next signaled request. */
static void c_unsignaled(void)
{
	struct opts o = DEF;
	o.sq = 64;
	pair_up(&o);
	fill(b.buf + BASE, 1000 * 64, 11);
	memset(a.buf + BASE, 0, 1000 * 64);
	int done = 0;
	for (int i = 0; i < 1000; i++) {
		unsigned f = i % 100 == 99 ? IBV_SEND_SIGNALED : 0;
		double t0 = now_s();
		int rc;
		while ((rc = post1(&b, IBV_WR_RDMA_WRITE, i, b.buf + BASE + i * 64, 64,
				   (uintptr_t)a.buf + BASE + i * 64, a.mr->rkey, f)) == ENOMEM) {
			struct ibv_wc wc;
			int k = ibv_poll_cq(b.cq, 1, &wc);
			if (k == 1) {
				CHECK(wc.wr_id == (uint64_t)(done * 100 + 99) &&
				      wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_RDMA_WRITE,
				      "completion wr_id %llu status %d, expected %d",
				      (unsigned long long)wc.wr_id, wc.status, done * 100 + 99);
				done++;
			}
			CHECK(now_s() - t0 < hang_s, "SQ full for %d s (hang guard)", hang_s);
			usleep(10);
		}
		CHECK_RC(rc, 0);
	}
	for (; done < 10; done++)
		expect_wc(b.cq, b.qp, (uint64_t)done * 100 + 99, IBV_WC_RDMA_WRITE, IBV_WC_SUCCESS,
			  ANY, "signaled write");
	fence_send(&b, &a, 5000);   /* the next completion on B is this Send */
	CHECK_DATA(a.buf + BASE, b.buf + BASE, 1000 * 64, "unsignaled writes");
	check_quiet();
}

/* 1000 Reads of 1 B..16 KiB, each into its own slot, posted as chains that
 * keep a window of 128 outstanding (far above ORD), completing in posting
 * order with the right bytes and nothing past them. */
static void c_reads_1000(void)
{
	enum { NREAD = 1000, DEPTH = 128, CHAIN = 32, SLOT = 16 * KiB };
	struct opts o = DEF;
	o.sq = DEPTH;
	pair_up(&o);
	uint8_t *src = a.buf + BASE;
	fill(src, 8 * MiB, 77);
	memset(b.buf + BASE, GUARD, (size_t)NREAD * SLOT);
	static uint32_t len[NREAD];
	static uint64_t soff[NREAD];
	static struct ibv_sge sg[NREAD];
	static struct ibv_send_wr wr[NREAD];
	for (int i = 0; i < NREAD; i++) {
		len[i] = 1 + (uint32_t)(i * 2654435761u % (SLOT - 1));
		soff[i] = (uint64_t)i * 8191 % (8 * MiB - SLOT);
		sg[i] = (struct ibv_sge){ (uintptr_t)b.buf + BASE + (size_t)i * SLOT, len[i],
					  b.mr->lkey };
		wr[i] = (struct ibv_send_wr){ .wr_id = (uint64_t)i, .sg_list = &sg[i], .num_sge = 1,
					      .opcode = IBV_WR_RDMA_READ,
					      .send_flags = IBV_SEND_SIGNALED };
		wr[i].wr.rdma.remote_addr = (uintptr_t)src + soff[i];
		wr[i].wr.rdma.rkey = a.mr->rkey;
	}
	struct ibv_wc wc[32];
	int posted = 0, done = 0;
	double t0 = now_s();
	while (done < NREAD) {
		/* refill the window with chains of up to CHAIN Reads */
		while (posted < NREAD && posted - done + CHAIN <= DEPTH) {
			int n = RTE_MIN(CHAIN, NREAD - posted);
			for (int i = 0; i < n; i++)
				wr[posted + i].next = i < n - 1 ? &wr[posted + i + 1] : NULL;
			struct ibv_send_wr *bad = NULL;
			CHECK_RC(ibv_post_send(b.qp, &wr[posted], &bad), 0);
			posted += n;
		}
		int k = ibv_poll_cq(b.cq, 32, wc);
		CHECK(k >= 0, "poll_cq %d", k);
		for (int j = 0; j < k; j++, done++) {
			CHECK(wc[j].wr_id == (uint64_t)done && wc[j].status == IBV_WC_SUCCESS &&
			      wc[j].opcode == IBV_WC_RDMA_READ && wc[j].byte_len == len[done] &&
			      wc[j].qp_num == b.qp->qp_num,
			      "read completion %d: wr_id %llu status %d (%s) opcode %d len %u "
			      "(want %u)", done, (unsigned long long)wc[j].wr_id, wc[j].status,
			      rnic_wc_status_str(wc[j].status), wc[j].opcode, wc[j].byte_len,
			      len[done]);
			uint8_t *dst = b.buf + BASE + (size_t)done * SLOT;
			CHECK_DATA(dst, src + soff[done], len[done], "read data");
			CHECK_UNTOUCHED(dst + len[done], SLOT - len[done], GUARD, "past the read");
		}
		if (k > 0)
			t0 = now_s();
		else
			CHECK(now_s() - t0 < hang_s, "no read completed for %d s, %d of %d done "
			      "(hang guard)", hang_s, done, NREAD);
	}
	check_quiet();
}

/* --- bad input ------------------------------------------------------------------------- */

/* Posts refused at post time (bad_wr names the WR) queue nothing and put
 * nothing on the wire; the QP stays usable. */
static void c_bad_post(void)
{
	pair_up(&DEF);
	struct rnic_qp_stats s0, s1;
	struct ibv_send_wr *bad;
	struct ibv_recv_wr *rbad;
	uint8_t *m = b.buf + BASE;
	fill(m, 256, 5);
	conf_bad_post_states();
	rnic_qp_stats(b.qp, &s0);
	struct ibv_sge sg[RNIC_MAX_SGE + 1];
	for (int i = 0; i <= RNIC_MAX_SGE; i++)
		sg[i] = (struct ibv_sge){ (uintptr_t)m + i, 1, b.mr->lkey };
	struct ibv_send_wr w = { .wr_id = 66, .sg_list = sg, .num_sge = 1, .opcode = IBV_WR_SEND,
				 .send_flags = IBV_SEND_SIGNALED };
	/* a bad lkey (wrong key byte; unknown index) */
	sg[0].lkey = (b.mr->lkey & ~0xffu) | ((b.mr->lkey + 1) & 0xffu);
	bad = NULL;
	CHECK(ibv_post_send(b.qp, &w, &bad) != 0 && bad == &w, "bad lkey key accepted");
	sg[0].lkey = b.mr->lkey ^ 0x00ff0000u;
	bad = NULL;
	CHECK(ibv_post_send(b.qp, &w, &bad) != 0 && bad == &w, "bad lkey index accepted");
	/* an lkey of the peer's PD/device: A's key means nothing on B */
	sg[0].lkey = a.mr->lkey;
	if (a.mr->lkey != b.mr->lkey) {
		bad = NULL;
		CHECK(ibv_post_send(b.qp, &w, &bad) != 0 && bad == &w, "foreign lkey accepted");
	}
	/* an SGE past the end of its region */
	sg[0] = (struct ibv_sge){ (uintptr_t)b.buf + BUF_LEN - 10, 11, b.mr->lkey };
	bad = NULL;
	CHECK(ibv_post_send(b.qp, &w, &bad) != 0 && bad == &w, "SGE past the region accepted");
	sg[0] = (struct ibv_sge){ (uintptr_t)m, 1, b.mr->lkey };
	/* too many SGEs, a negative count */
	w.num_sge = RNIC_MAX_SGE + 1;
	bad = NULL;
	CHECK(ibv_post_send(b.qp, &w, &bad) != 0 && bad == &w, "%d SGEs accepted",
	      RNIC_MAX_SGE + 1);
	w.num_sge = -1;
	bad = NULL;
	CHECK(ibv_post_send(b.qp, &w, &bad) != 0 && bad == &w, "num_sge -1 accepted");
	w.num_sge = 1;
	/* unknown opcodes */
	w.opcode = (enum ibv_wr_opcode)0x55;
	bad = NULL;
	CHECK(ibv_post_send(b.qp, &w, &bad) != 0 && bad == &w, "opcode 0x55 accepted");
	w.opcode = (enum ibv_wr_opcode)-1;
	bad = NULL;
	CHECK(ibv_post_send(b.qp, &w, &bad) != 0 && bad == &w, "opcode -1 accepted");
	w.opcode = IBV_WR_SEND;
	/* a Read into memory without local write; a Read marked inline */
	struct ibv_mr *ro = rnic_reg_mr(b.pd, b.buf + 8 * MiB, 4096, IBV_ACCESS_REMOTE_READ);
	CHECK(ro != NULL, "reg_mr read-only: %s", strerror(errno));
	b.xmr[0] = ro;
	struct ibv_sge rs = { (uintptr_t)b.buf + 8 * MiB, 64, ro->lkey };
	struct ibv_send_wr rd = { .wr_id = 67, .sg_list = &rs, .num_sge = 1,
				  .opcode = IBV_WR_RDMA_READ, .send_flags = IBV_SEND_SIGNALED };
	rd.wr.rdma.remote_addr = (uintptr_t)a.buf;
	rd.wr.rdma.rkey = a.mr->rkey;
	bad = NULL;
	CHECK(ibv_post_send(b.qp, &rd, &bad) != 0 && bad == &rd,
	      "Read into memory without local write accepted");
	rs.lkey = b.mr->lkey;
	rd.send_flags |= IBV_SEND_INLINE;
	bad = NULL;
	CHECK(ibv_post_send(b.qp, &rd, &bad) != 0 && bad == &rd, "inline Read accepted");
	/* an atomic whose result goes to memory without local write */
	struct ibv_sge as = { (uintptr_t)b.buf + 8 * MiB, 8, ro->lkey };
	struct ibv_send_wr aw = { .wr_id = 68, .sg_list = &as, .num_sge = 1,
				  .opcode = IBV_WR_ATOMIC_FETCH_AND_ADD,
				  .send_flags = IBV_SEND_SIGNALED };
	aw.wr.atomic.remote_addr = (uintptr_t)a.buf + BASE;
	aw.wr.atomic.rkey = a.mr->rkey;
	bad = NULL;
	CHECK(ibv_post_send(b.qp, &aw, &bad) != 0 && bad == &aw,
	      "atomic into memory without local write accepted");
	/* a chain good, bad, good: the first goes, bad_wr names the second,
	 * the third is not posted */
	recv1(&a, 1, a.buf + BASE, 64);
	recv1(&a, 2, a.buf + BASE + 64, 64);
	struct ibv_sge g1 = { (uintptr_t)m, 16, b.mr->lkey }, g2 = { (uintptr_t)m, 16, 0x7fffff00u },
		       g3 = { (uintptr_t)m + 32, 16, b.mr->lkey };
	struct ibv_send_wr c3 = { .wr_id = 73, .sg_list = &g3, .num_sge = 1, .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED };
	struct ibv_send_wr c2 = { .wr_id = 72, .next = &c3, .sg_list = &g2, .num_sge = 1,
				  .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED };
	struct ibv_send_wr c1 = { .wr_id = 71, .next = &c2, .sg_list = &g1, .num_sge = 1,
				  .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED };
	bad = NULL;
	CHECK(ibv_post_send(b.qp, &c1, &bad) != 0 && bad == &c2,
	      "chain with a bad second WR: bad_wr %p, expected %p", (void *)bad, (void *)&c2);
	expect_wc(b.cq, b.qp, 71, IBV_WC_SEND, IBV_WC_SUCCESS, ANY, "first of the chain");
	expect_recv(&a, a.qp, 1, IBV_WC_RECV, 16, NO_IMM, "first of the chain");
	CHECK_DATA(a.buf + BASE, m, 16, "first of the chain");
	/* the QP is still fine: the next Send is the next message at A */
	CHECK_RC(post1(&b, IBV_WR_SEND, 74, m + 100, 20, 0, 0, IBV_SEND_SIGNALED), 0);
	expect_wc(b.cq, b.qp, 74, IBV_WC_SEND, IBV_WC_SUCCESS, ANY, "send after");
	expect_recv(&a, a.qp, 2, IBV_WC_RECV, 20, NO_IMM, "send after");
	CHECK_DATA(a.buf + BASE + 64, m + 100, 20, "send after");
	rnic_qp_stats(b.qp, &s1);
	CHECK(s1.send_wrs - s0.send_wrs == 2, "send_wrs grew by %llu, 2 were accepted",
	      (unsigned long long)(s1.send_wrs - s0.send_wrs));
	CHECK(s1.ops_out - s0.ops_out == 2, "ops_out grew by %llu, 2 messages were valid",
	      (unsigned long long)(s1.ops_out - s0.ops_out));
	CHECK(a.qp->state == IBV_QPS_RTS && b.qp->state == IBV_QPS_RTS, "states %d %d",
	      a.qp->state, b.qp->state);
	/* receive side: bad lkey, too many SGEs, not writable */
	struct ibv_sge r1 = { (uintptr_t)a.buf, 16, a.mr->lkey ^ 0x1u };
	struct ibv_recv_wr rw = { .wr_id = 80, .sg_list = &r1, .num_sge = 1 };
	rbad = NULL;
	CHECK(ibv_post_recv(a.qp, &rw, &rbad) != 0 && rbad == &rw, "recv with a bad lkey accepted");
	struct ibv_sge r9[RNIC_MAX_SGE + 1];
	for (int i = 0; i <= RNIC_MAX_SGE; i++)
		r9[i] = (struct ibv_sge){ (uintptr_t)a.buf + i * 8, 8, a.mr->lkey };
	rw.sg_list = r9;
	rw.num_sge = RNIC_MAX_SGE + 1;
	rbad = NULL;
	CHECK(ibv_post_recv(a.qp, &rw, &rbad) != 0 && rbad == &rw, "recv with %d SGEs accepted",
	      RNIC_MAX_SGE + 1);
	struct ibv_mr *aro = rnic_reg_mr(a.pd, a.buf + 8 * MiB, 4096, IBV_ACCESS_REMOTE_READ);
	CHECK(aro != NULL, "reg_mr: %s", strerror(errno));
	a.xmr[0] = aro;
	struct ibv_sge r2 = { (uintptr_t)a.buf + 8 * MiB, 16, aro->lkey };
	rw.sg_list = &r2;
	rw.num_sge = 1;
	rbad = NULL;
	CHECK(ibv_post_recv(a.qp, &rw, &rbad) != 0 && rbad == &rw,
	      "recv into memory without local write accepted");
	CHECK(a.qp->state == IBV_QPS_RTS && b.qp->state == IBV_QPS_RTS, "states %d %d",
	      a.qp->state, b.qp->state);
	/* nothing queued by the refused receives: the next Send uses this one */
	recv1(&a, 90, a.buf + BASE + 128, 64);
	CHECK_RC(post1(&b, IBV_WR_SEND, 90, m + 200, 32, 0, 0, IBV_SEND_SIGNALED), 0);
	expect_wc(b.cq, b.qp, 90, IBV_WC_SEND, IBV_WC_SUCCESS, ANY, "send after the receives");
	expect_recv(&a, a.qp, 90, IBV_WC_RECV, 32, NO_IMM, "send after the receives");
	CHECK_DATA(a.buf + BASE + 128, m + 200, 32, "send after the receives");
	check_quiet();
}

/* --- refused remote access --------------------------------------------------------------- */

/*
 * A remote access A must refuse (@p k): B posts a good Write and a good
 * Send, the faulty request (wr_id 3), then a Send and a Write behind it.
 * Common to both transports: the two good requests complete and arrive
 * (A's receive 901 takes the Send), every request completes exactly once,
 * B's receive is flushed and B's QP ends in ERR, A's second receive (902)
 * completes with an error (flushed, or taken by the Send too long), and
 * nothing of the
 * refused request lands anywhere: not in A's memory (inside or around the
 * MR, past A's receive 902) nor in B's read/atomic sink. How the refused
 * request and those behind it complete, and what A and the connection do,
 * is the transport's (conf_refused).
 */
static void remote_fault(enum rfault k)
{
	enum { G = 64 * KiB, T = 64 * KiB };
	pair_up(&DEF);
	uint8_t *tgt = a.buf + G;
	memset(a.buf, 0x5a, 5 * G);
	const int all = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
	int acc = k == W_RIGHT ? all & ~IBV_ACCESS_REMOTE_WRITE :
		  k == R_RIGHT ? all & ~IBV_ACCESS_REMOTE_READ :
		  k == A_RIGHT ? all & ~IBV_ACCESS_REMOTE_ATOMIC : all;
	struct ibv_mr *mr = rnic_reg_mr(a.pd, tgt, T, acc);
	CHECK(mr != NULL, "reg_mr: %s", strerror(errno));
	a.xmr[0] = mr;
	uint32_t rkey = mr->rkey, len = 4096;
	uint64_t raddr = (uintptr_t)tgt + 104;
	if (k == W_RKEY || k == R_RKEY)
		rkey = (rkey & ~0xffu) | ((rkey + 0x11) & 0xffu);   /* right index, wrong key */
	if (k == W_OOB || k == R_OOB)
		raddr = (uintptr_t)tgt + T - 96;   /* 4000 bytes past the end */
	if (k == A_OOB)
		raddr = (uintptr_t)tgt + T;        /* the first word past it */
	uint8_t *src = b.buf + MiB, *sink = b.buf + 2 * MiB;
	uint8_t *rbuf = a.buf + 3 * G, *rbuf2 = a.buf + 4 * G, *okdst = a.buf + 5 * G;
	fill(src, 64 * KiB, 7);
	memset(sink, 0x33, 64 * KiB);
	recv1(&b, 900, b.buf, 64);
	recv1(&a, 901, rbuf, 64);
	if (k != S_NORECV)
		recv1(&a, 902, rbuf2, 64);   /* a 4 KiB Send will not fit */
	CHECK_RC(post1(&b, IBV_WR_RDMA_WRITE, 1, src, 512, (uintptr_t)okdst, a.mr->rkey,
		       IBV_SEND_SIGNALED), 0);
	CHECK_RC(post1(&b, IBV_WR_SEND, 2, src, 32, 0, 0, IBV_SEND_SIGNALED), 0);
	int rc;
	if (k == A_RIGHT || k == A_OOB)
		rc = post_atomic(b.qp, b.mr->lkey, 3, (uint64_t *)(void *)sink, 8, raddr, rkey,
				 false, 1, 0);
	else if (k == S_LONG || k == S_NORECV)
		rc = post1(&b, IBV_WR_SEND, 3, src, len, 0, 0, IBV_SEND_SIGNALED);
	else if (k <= W_RIGHT)
		rc = post1(&b, IBV_WR_RDMA_WRITE, 3, src, len, raddr, rkey, IBV_SEND_SIGNALED);
	else
		rc = post1(&b, IBV_WR_RDMA_READ, 3, sink, len, raddr, rkey, IBV_SEND_SIGNALED);
	CHECK_RC(rc, 0);
	CHECK_RC(post1(&b, IBV_WR_SEND, 4, src, 16, 0, 0, IBV_SEND_SIGNALED), 0);
	CHECK_RC(post1(&b, IBV_WR_RDMA_WRITE, 5, src, 16, (uintptr_t)okdst, a.mr->rkey,
		       IBV_SEND_SIGNALED), 0);
	struct ibv_wc wc[6];
	wait_wc(b.cq, wc, 6, "B's completions");
	qsort(wc, 6, sizeof(wc[0]), cmp_wc);
	for (int i = 0; i < 5; i++)
		CHECK(wc[i].wr_id == (uint64_t)i + 1 && wc[i].qp_num == b.qp->qp_num,
		      "B's completion %d: wr_id %llu qp %u", i, (unsigned long long)wc[i].wr_id,
		      wc[i].qp_num);
	for (int i = 0; i < 2; i++)
		CHECK(wc[i].status == IBV_WC_SUCCESS, "B's good request %d: status %d (%s)", i + 1,
		      wc[i].status, rnic_wc_status_str(wc[i].status));
	CHECK(wc[0].opcode == IBV_WC_RDMA_WRITE && wc[1].opcode == IBV_WC_SEND,
	      "opcodes of the good requests: %d %d", wc[0].opcode, wc[1].opcode);
	printf("    B's refused request completed with %s\n", rnic_wc_status_str(wc[2].status));
	CHECK(wc[5].wr_id == 900 && wc[5].status == IBV_WC_WR_FLUSH_ERR, "B's receive: wr_id "
	      "%llu status %d (%s), expected flushed", (unsigned long long)wc[5].wr_id,
	      wc[5].status, rnic_wc_status_str(wc[5].status));
	CHECK(b.qp->state == IBV_QPS_ERR, "B's QP in state %d, expected ERR", b.qp->state);
	expect_recv(&a, a.qp, 901, IBV_WC_RECV, 32, NO_IMM, "A's receive of the good Send");
	CHECK_DATA(rbuf, src, 32, "the good Send");
	struct ibv_wc arecv;
	if (k != S_NORECV) {
		wait_wc(a.cq, &arecv, 1, "A's second receive");
		CHECK(arecv.wr_id == 902 && arecv.status != IBV_WC_SUCCESS, "A's second receive: "
		      "wr_id %llu status %d (%s)", (unsigned long long)arecv.wr_id, arecv.status,
		      rnic_wc_status_str(arecv.status));
		printf("    A's second receive completed with %s\n",
		       rnic_wc_status_str(arecv.status));
	}
	conf_refused(k, &wc[2], k != S_NORECV ? &arecv : NULL);
	/* memory: nothing of the refused request anywhere; the Write behind
	 * it may only have written what the good Write wrote */
	CHECK_DATA(okdst, src, 512, "the good Write");
	CHECK_UNTOUCHED(a.buf, G, 0x5a, "A below the MR");
	CHECK_UNTOUCHED(tgt, T, 0x5a, "A's MR");
	CHECK_UNTOUCHED(a.buf + G + T, G, 0x5a, "A above the MR");
	CHECK_UNTOUCHED(rbuf + 32, G - 32, 0x5a, "A past the good Send");
	if (k == S_LONG)
		CHECK_UNTOUCHED(rbuf2 + 64, G - 64, 0x5a, "A past the receive too small");
	else
		CHECK_UNTOUCHED(rbuf2, G, 0x5a, "A's second receive buffer");
	CHECK_UNTOUCHED(sink, 64 * KiB, 0x33, "B's read/atomic sink");
	usleep(20000);
	no_stray(&b, "after the flush");
}

static void c_write_bad_rkey(void) { remote_fault(W_RKEY); }
static void c_write_oob(void) { remote_fault(W_OOB); }
static void c_write_no_right(void) { remote_fault(W_RIGHT); }
static void c_read_bad_rkey(void) { remote_fault(R_RKEY); }
static void c_read_oob(void) { remote_fault(R_OOB); }
static void c_read_no_right(void) { remote_fault(R_RIGHT); }
static void c_send_too_long(void) { remote_fault(S_LONG); }

/* --- the lossy link did its part ---------------------------------------------------------- */

/* Every kind of fault was injected on both stacks' transmit side. */
static void conf_faults_seen(struct rnic_stack *st_a, struct rnic_stack *st_b)
{
	struct rnic_stack_stats sa, sb;
	rnic_stack_stats(st_a, &sa);
	rnic_stack_stats(st_b, &sb);
	printf("    A: dropped %llu dup %llu reordered %llu corrupted %llu; "
	       "B: dropped %llu dup %llu reordered %llu corrupted %llu\n",
	       (unsigned long long)sa.fault_dropped, (unsigned long long)sa.fault_duplicated,
	       (unsigned long long)sa.fault_reordered, (unsigned long long)sa.fault_corrupted,
	       (unsigned long long)sb.fault_dropped, (unsigned long long)sb.fault_duplicated,
	       (unsigned long long)sb.fault_reordered, (unsigned long long)sb.fault_corrupted);
	CHECK(sa.fault_dropped && sa.fault_duplicated && sa.fault_reordered && sa.fault_corrupted &&
	      sb.fault_dropped && sb.fault_duplicated && sb.fault_reordered && sb.fault_corrupted,
	      "a fault kind was never injected: the lossy run tested nothing");
}

/* --- the runner ------------------------------------------------------------------------------ */

struct tcase {
	const char *name;
	void (*fn)(void);
	bool lossy;   /* also in the lossy run */
};

/* The conformance cases, for the includer's table. @p refusals_lossy: the
 * refused-access cases also run on the lossy link. */
#define CONFORMANCE_CASES(refusals_lossy) \
	{ "multi_sge_send", c_multi_sge_send, true }, \
	{ "multi_sge_write", c_multi_sge_write, true }, \
	{ "multi_sge_read", c_multi_sge_read, true }, \
	{ "inline", c_inline, true }, \
	{ "wr_chain", c_wr_chain, true }, \
	{ "unsignaled", c_unsignaled, true }, \
	{ "reads_1000", c_reads_1000, true }, \
	{ "bad_post", c_bad_post, refusals_lossy }, \
	{ "remote_write_bad_rkey", c_write_bad_rkey, refusals_lossy }, \
	{ "remote_write_out_of_bounds", c_write_oob, refusals_lossy }, \
	{ "remote_write_no_right", c_write_no_right, refusals_lossy }, \
	{ "remote_read_bad_rkey", c_read_bad_rkey, refusals_lossy }, \
	{ "remote_read_out_of_bounds", c_read_oob, refusals_lossy }, \
	{ "remote_read_no_right", c_read_no_right, refusals_lossy }, \
	{ "remote_send_too_long", c_send_too_long, refusals_lossy }

/* The link of this run from argv[1]: "clean" (the default) or "lossy"
 * ("faults", the old name, is taken too). @return 0 clean, 1 lossy, -1
 * with the usage printed. */
static int conf_link(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "clean";
	if (strcmp(mode, "clean") == 0)
		return 0;
	if (strcmp(mode, "lossy") == 0 || strcmp(mode, "faults") == 0)
		return 1;
	fprintf(stderr, "usage: %s clean|lossy [FILTER]\n", argv[0]);
	return -1;
}

/* The transport's part of running a case: reset its state before the
 * case, and free whatever the case left after it (@return false when
 * something could not be freed). */
static void conf_case_begin(void);
static bool conf_case_end(void);

/* Run case @p name (@p fn) between the transport's begin and end. */
static void conf_run_case(const char *name, void (*fn)(void))
{
	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	conf_case_begin();
	case_run(name, fn, conf_case_end);
}

/* The last lines of a run; @return the exit status. */
static int conf_summary(const char *what, bool lossy, double secs)
{
	char w[64];
	snprintf(w, sizeof(w), "%s (%s)", what, lossy ? "lossy" : "clean");
	return case_summary(w, secs);
}

#endif
