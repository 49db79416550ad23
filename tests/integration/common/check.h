/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Checks shared by the integration tests that run named cases in one
 * process (tests/integration/iwarp/test_verbs.c, roce/test_roce.c).
 *
 * The includer defines, before including this file:
 *   static jmp_buf case_jmp;            where a failed or skipped case goes
 *   static const char *case_name;       the case running
 *   enum { R_PASS, R_FAIL, R_SKIP };    the outcomes
 *   fail_at(const char *file, int line, const char *fmt, ...)
 *                                     reports and longjmps, or
 *   #define CHECK_FILE                for the plain one below, or
 *   #define CHECK_KNOWN_BUG_FILE      for the one that turns a failure
 *                                     under `known_bug` into SKIP
 * A failure names the file and line of the check (a case written in a
 * shared header, tests/integration/verbs/conformance.h, names that).
 *   #define GUARD                     the byte guard zones are filled with
 */
#ifndef RNIC_TESTS_INTEGRATION_CHECK_H
#define RNIC_TESTS_INTEGRATION_CHECK_H

#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <infiniband/verbs.h>

#include "rnic/rnic.h"
#include "rnic/rnic_roce.h"
#include "rnic/rnic_verbs.h"

/* The last part of a path: what a failure prints as its file. */
static inline const char *check_base(const char *path)
{
	const char *s = strrchr(path, '/');
	return s != NULL ? s + 1 : path;
}

#ifdef CHECK_KNOWN_BUG_FILE
/* fail_at for tests that name known library bugs: with the includer's
 * `known_bug` set (and `strict` false: RNIC_TEST_STRICT unset) a failed
 * check reports SKIP with the bug's description, otherwise FAIL. */
static void __attribute__((noreturn, format(printf, 3, 4)))
fail_at(const char *file, int line, const char *fmt, ...)
{
	va_list ap;
	bool bug = known_bug != NULL && !strict;
	FILE *f = bug ? stdout : stderr;
	if (bug)
		fprintf(f, "  SKIP %s: known library bug: %s\n    seen (%s:%d): ", case_name,
			known_bug, check_base(file), line);
	else
		fprintf(f, "  FAIL %s (%s:%d): ", case_name, check_base(file), line);
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	fputc('\n', f);
	if (known_bug && strict)
		fprintf(f, "    (known library bug: %s)\n", known_bug);
	longjmp(case_jmp, bug ? R_SKIP : R_FAIL);
}
#endif

#ifdef CHECK_FILE
/* The plain fail_at: "  FAIL case (file:line): message" on stderr, and the
 * case ends. */
static void __attribute__((noreturn, format(printf, 3, 4)))
fail_at(const char *file, int line, const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "  FAIL %s (%s:%d): ", case_name, check_base(file), line);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	longjmp(case_jmp, R_FAIL);
}
#endif

/* EAL for a two-stack test process: no hugepages, 1 GiB, quiet DPDK logs,
 * @p lcores worker lcores; @p c is then the common config of both stacks
 * (its EAL arguments cleared). @return 0, or -1 with a message. */
static inline int check_eal_init(const char *prog, struct rnic_config *c, unsigned lcores)
{
	rnic_config_init(c);
	snprintf(c->eal_args[c->n_eal_args++], 128, "--no-huge");
	snprintf(c->eal_args[c->n_eal_args++], 128, "-m");
	snprintf(c->eal_args[c->n_eal_args++], 128, "1024");
	snprintf(c->eal_args[c->n_eal_args++], 128, "--log-level=lib.*:warning");
	if (rnic_eal_init(prog, c, lcores) != 0) {
		fprintf(stderr, "EAL init failed\n");
		return -1;
	}
	c->n_eal_args = 0;
	return 0;
}

static void __attribute__((noreturn, format(printf, 1, 2))) skip_case(const char *fmt, ...)
{
	va_list ap;
	char why[512];
	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	printf("  SKIP %s: %s\n", case_name, why);
	longjmp(case_jmp, R_SKIP);
}

#define CHECK(c, ...) do { if (!(c)) fail_at(__FILE__, __LINE__, __VA_ARGS__); } while (0)
#define CHECK_RC(expr, want) do { long long r_ = (long long)(expr), w_ = (long long)(want); \
	if (r_ != w_) fail_at(__FILE__, __LINE__, "%s = %lld, expected %lld", #expr, r_, w_); } while (0)

/* RoCE RC QPs @p q[0] and @p q[1] (in INIT) connected to each other out of
 * band through port @p port_num: RTR towards the peer's GID 1 (::ffff:IPv4)
 * and QPN with the peer's first PSN, then RTS from @p psn[i]; path MTU
 * 1024, local ACK timeout @p timeout, @p retry_cnt retries, RNR retry for
 * ever, 16 Reads/atomics. */
static inline void check_roce_rtr_rts_opt(struct ibv_qp *const q[2],
					  struct ibv_context *const c[2], const uint32_t psn[2],
					  uint8_t port_num, uint8_t timeout, uint8_t retry_cnt)
{
	for (int i = 0; i < 2; i++) {
		union ibv_gid gid;
		CHECK_RC(rnic_query_gid(c[1 - i], port_num, 1, &gid), 0);
		struct ibv_qp_attr at = {
			.qp_state = IBV_QPS_RTR, .path_mtu = IBV_MTU_1024,
			.dest_qp_num = q[1 - i]->qp_num, .rq_psn = psn[1 - i],
			.max_dest_rd_atomic = 16, .min_rnr_timer = 12,
			.ah_attr = { .is_global = 1, .port_num = port_num,
				     .grh = { .dgid = gid, .sgid_index = 1, .hop_limit = 64 } },
		};
		CHECK_RC(rnic_modify_qp(q[i], &at, RNIC_QP_RTR_MASK), 0);
	}
	for (int i = 0; i < 2; i++) {
		struct ibv_qp_attr at = { .qp_state = IBV_QPS_RTS, .timeout = timeout,
					  .retry_cnt = retry_cnt, .rnr_retry = 7, .sq_psn = psn[i],
					  .max_rd_atomic = 16 };
		CHECK_RC(rnic_modify_qp(q[i], &at, RNIC_QP_RTS_MASK), 0);
	}
}

/* The same with timeout 14 (67 ms) and 7 retries. */
static inline void check_roce_rtr_rts(struct ibv_qp *const q[2], struct ibv_context *const c[2],
				      const uint32_t psn[2], uint8_t port_num)
{
	check_roce_rtr_rts_opt(q, c, psn, port_num, 14, 7);
}

/* Tear down a pair of stacks: close both devices (a device that still
 * holds objects is reported under @p name), then stop both stacks and
 * destroy them, B before A, and clear the pointers. @return the number of
 * devices that refused to close (0 when everything was freed). */
static inline unsigned check_pair_down(struct rnic_stack *st[2], struct ibv_context *ctx[2],
				       const char *name)
{
	unsigned left = 0;
	for (int i = 0; i < 2; i++)
		if (ctx[i] != NULL && rnic_close_device(ctx[i]) != 0) {
			fprintf(stderr, "%s: rnic_close_device: objects left\n", name);
			left++;
		}
	for (int i = 1; i >= 0; i--)
		if (st[i] != NULL)
			rnic_stack_stop(st[i]);
	for (int i = 1; i >= 0; i--)
		if (st[i] != NULL)
			rnic_stack_destroy(st[i]);
	memset(st, 0, 2 * sizeof(st[0]));
	memset(ctx, 0, 2 * sizeof(ctx[0]));
	return left;
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Deterministic bytes: xorshift64 from a seed. */
static void fill(uint8_t *p, size_t n, uint64_t seed)
{
	uint64_t x = seed * 0x9e3779b97f4a7c15ull + 0x2545f491ull;
	size_t i = 0;
	for (; i + 8 <= n; i += 8) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		memcpy(p + i, &x, 8);
	}
	for (; i < n; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		p[i] = (uint8_t)x;
	}
}

/* Index of the first byte that differs, or -1. */
static long first_diff(const uint8_t *x, const uint8_t *y, size_t n)
{
	if (memcmp(x, y, n) == 0)
		return -1;
	for (size_t i = 0; i < n; i++)
		if (x[i] != y[i])
			return (long)i;
	return -1;
}

static long first_not(const uint8_t *p, size_t n, uint8_t v)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != v)
			return (long)i;
	return -1;
}

#define CHECK_DATA(dst, src, n, what) do { long d_ = first_diff((dst), (src), (n)); \
	CHECK(d_ < 0, "%s: byte %ld of %zu wrong (0x%02x, expected 0x%02x)", (what), d_, \
	      (size_t)(n), (dst)[d_ < 0 ? 0 : d_], (src)[d_ < 0 ? 0 : d_]); } while (0)
#define CHECK_UNTOUCHED(p, n, v, what) do { long d_ = first_not((p), (n), (v)); \
	CHECK(d_ < 0, "%s: byte %ld of %zu changed to 0x%02x (was 0x%02x)", (what), d_, \
	      (size_t)(n), (p)[d_ < 0 ? 0 : d_], (unsigned)(v)); } while (0)

/* --- scatter/gather lists ------------------------------------------------------- */

static const uint32_t sg_send[RNIC_MAX_SGE] = { 1, 7, 4096, 3, 65536, 13, 1000, 70000 };
static const uint32_t sg_recv[RNIC_MAX_SGE] = { 5, 100, 65536, 1, 9, 8192, 70000, 200000 };

/* @p n gather pieces of @p len[] bytes in @p base (registered, @p lkey),
 * @p stride apart plus a growing @p skew, filled from @p seed; their
 * concatenation is copied to @p expect when given. */
static void gather_sges(uint8_t *base, uint32_t lkey, struct ibv_sge *sg, const uint32_t *len,
			unsigned n, uint32_t stride, uint32_t skew, uint8_t *expect, uint64_t seed)
{
	size_t off = 0;
	for (unsigned i = 0; i < n; i++) {
		uint8_t *p = base + i * stride + i * skew + 1;
		fill(p, len[i], seed + i);
		sg[i] = (struct ibv_sge){ (uintptr_t)p, len[i], lkey };
		if (expect)
			memcpy(expect + off, p, len[i]);
		off += len[i];
	}
}

/* @p n scatter pieces likewise, in guard bytes (GUARD) that must stay. */
static void scatter_sges(uint8_t *base, uint32_t lkey, struct ibv_sge *sg, const uint32_t *len,
			 unsigned n, uint32_t stride, uint32_t skew)
{
	memset(base - 64, GUARD, (size_t)n * stride + n * skew + 64);
	for (unsigned i = 0; i < n; i++) {
		uint8_t *p = base + i * stride + i * skew + 2;
		sg[i] = (struct ibv_sge){ (uintptr_t)p, len[i], lkey };
	}
}

/* A scatter list holds @p expect (@p total bytes) and nothing past it. */
static void check_scatter(const struct ibv_sge *sg, unsigned n, const uint8_t *expect,
			  size_t total, const char *what)
{
	size_t off = 0;
	for (unsigned i = 0; i < n; i++) {
		uint8_t *p = (uint8_t *)(uintptr_t)sg[i].addr;
		size_t take = total - off < sg[i].length ? total - off : sg[i].length;
		CHECK_DATA(p, expect + off, take, what);
		CHECK_UNTOUCHED(p + take, sg[i].length - take, GUARD, what);
		CHECK_UNTOUCHED(p - 1, 1, GUARD, what);
		CHECK_UNTOUCHED(p + sg[i].length, 1, GUARD, what);
		off += take;
	}
}

#endif
