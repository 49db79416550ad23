/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Congestion control: NewReno (RFC 5681, RFC 6582) and CUBIC (RFC 9438),
 * behind one small ops table. Windows are in bytes.
 */
#include <math.h>

#include "tcp/tcp_internal.h"

#define IW_SEGS 10   /* RFC 6928 initial window */

static void reno_init(struct tcp_cc_state *s, uint32_t mss)
{
	s->cwnd = IW_SEGS * mss;
	s->ssthresh = UINT32_MAX;
	s->acked_accum = 0;
}

/* Slow start, then one MSS per cwnd of acknowledged bytes. */
static void reno_on_ack(struct tcp_cc_state *s, uint32_t mss, uint32_t acked,
			uint64_t now_us, uint32_t srtt_us)
{
	(void)now_us;
	(void)srtt_us;
	if (s->cwnd < s->ssthresh) {
		/* RFC 5681 3.1: increase by at most SMSS per ACK (ABC, L = 2) */
		s->cwnd += acked < 2 * mss ? acked : 2 * mss;
		return;
	}
	s->acked_accum += acked;
	if (s->acked_accum >= s->cwnd) {
		s->acked_accum -= s->cwnd;
		s->cwnd += mss;
	}
}

static void reno_on_loss(struct tcp_cc_state *s, uint32_t mss, uint32_t flight,
			 uint64_t now_us)
{
	(void)now_us;
	uint32_t half = flight / 2;
	s->ssthresh = half > 2 * mss ? half : 2 * mss;
	s->cwnd = s->ssthresh;
	s->acked_accum = 0;
}

static void reno_on_rto(struct tcp_cc_state *s, uint32_t mss, uint32_t flight)
{
	uint32_t half = flight / 2;
	s->ssthresh = half > 2 * mss ? half : 2 * mss;
	s->cwnd = mss;   /* RFC 5681 3.1: loss window */
	s->acked_accum = 0;
}

const struct tcp_cc_ops tcp_cc_newreno = {
	.name = "newreno", .init = reno_init, .on_ack = reno_on_ack,
	.on_loss = reno_on_loss, .on_rto = reno_on_rto,
};

/* RFC 9438 constants */
#define CUBIC_C    0.4
#define CUBIC_BETA 0.7

static void cubic_init(struct tcp_cc_state *s, uint32_t mss)
{
	reno_init(s, mss);
	s->w_max = 0;
	s->k = 0;
	s->epoch_us = 0;
	s->w_est = 0;
}

static void cubic_on_ack(struct tcp_cc_state *s, uint32_t mss, uint32_t acked,
			 uint64_t now_us, uint32_t srtt_us)
{
	if (s->cwnd < s->ssthresh) {
		s->cwnd += acked < 2 * mss ? acked : 2 * mss;
		return;
	}
	double cwnd = (double)s->cwnd / mss;
	if (s->epoch_us == 0) {   /* first ACK of the avoidance epoch */
		s->epoch_us = now_us;
		if (s->w_max < cwnd) {
			s->w_max = cwnd;
			s->k = 0;
		} else {
			s->k = cbrt((s->w_max - cwnd) / CUBIC_C);   /* eq. 2 */
		}
		s->w_est = cwnd;
	}
	double t = (double)(now_us - s->epoch_us + srtt_us) / 1e6;
	double target = CUBIC_C * pow(t - s->k, 3) + s->w_max;   /* eq. 1 */
	/* Reno-friendly region, eq. 4 with alpha = 3(1-beta)/(1+beta) */
	s->w_est += 3.0 * (1 - CUBIC_BETA) / (1 + CUBIC_BETA) * ((double)acked / mss) / cwnd;
	if (s->w_est > target)
		target = s->w_est;
	if (target > 1.5 * cwnd)
		target = 1.5 * cwnd;
	if (target > cwnd) {
		/* (target - cwnd) / cwnd segments per acked segment */
		double inc = (target - cwnd) / cwnd * ((double)acked / mss);
		s->acked_accum += (uint32_t)(inc * mss);
		if (s->acked_accum >= mss / 4) {
			s->cwnd += s->acked_accum;
			s->acked_accum = 0;
		}
	}
}

static void cubic_on_loss(struct tcp_cc_state *s, uint32_t mss, uint32_t flight,
			  uint64_t now_us)
{
	(void)now_us;
	(void)flight;
	double cwnd = (double)s->cwnd / mss;
	/* fast convergence (RFC 9438 4.7) */
	s->w_max = cwnd < s->w_max ? cwnd * (1 + CUBIC_BETA) / 2 : cwnd;
	uint32_t w = (uint32_t)(cwnd * CUBIC_BETA * mss);
	s->ssthresh = w > 2 * mss ? w : 2 * mss;
	s->cwnd = s->ssthresh;
	s->epoch_us = 0;
	s->acked_accum = 0;
}

static void cubic_on_rto(struct tcp_cc_state *s, uint32_t mss, uint32_t flight)
{
	cubic_on_loss(s, mss, flight, 0);
	s->cwnd = mss;
}

const struct tcp_cc_ops tcp_cc_cubic = {
	.name = "cubic", .init = cubic_init, .on_ack = cubic_on_ack,
	.on_loss = cubic_on_loss, .on_rto = cubic_on_rto,
};
