/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Checks shared by the integration tests that run named cases in one
 * process (tests/integration/iwarp/test_verbs.c, roce/test_roce.c).
 *
 * The includer defines, before including this file:
 *   static jmp_buf case_jmp;            where a failed or skipped case goes
 *   static const char *case_name;       the case running
 *   enum { R_PASS, R_FAIL, R_SKIP };    the outcomes
 *   fail_at(int line, const char *fmt, ...)   reports and longjmps
 */
#ifndef RNIC_TESTS_INTEGRATION_CHECK_H
#define RNIC_TESTS_INTEGRATION_CHECK_H

#include <setjmp.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

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

#define CHECK(c, ...) do { if (!(c)) fail_at(__LINE__, __VA_ARGS__); } while (0)
#define CHECK_RC(expr, want) do { long long r_ = (long long)(expr), w_ = (long long)(want); \
	if (r_ != w_) fail_at(__LINE__, "%s = %lld, expected %lld", #expr, r_, w_); } while (0)

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

#endif
