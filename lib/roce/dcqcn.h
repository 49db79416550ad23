/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * DCQCN reaction point (Zhu et al., "Congestion Control for Large-Scale
 * RDMA Deployments", SIGCOMM 2015): the per-QP rate arithmetic alone, with
 * time passed in explicitly (microseconds), so unit tests drive it without
 * EAL, workers or packets.
 *
 *   CNP            target Rt = Rc; Rc = Rc * (1 - alpha / 2);
 *                  alpha = (1 - g) * alpha + g; both increase counters
 *                  and the byte count reset, both timers restart
 *   alpha timer    every alpha_us without a CNP: alpha = (1 - g) * alpha
 *   rate timer     every rate_us: one increase event (T stage + 1)
 *   byte counter   every byte_reset bytes sent: one increase event (BC + 1)
 *   increase       max(T, BC) <= F: fast recovery   Rc = (Rt + Rc) / 2
 *                  min(T, BC) > F:  hyper increase  Rt += (min - F) * Rhai,
 *                                                   Rc = (Rt + Rc) / 2
 *                  otherwise:       additive        Rt += Rai,
 *                                                   Rc = (Rt + Rc) / 2
 *   clamps         min_rate <= Rc, Rt <= max_rate
 *
 * Rates are in kb/s (1 Mb/s = 1000), alpha in units of 2^-24 (each decay
 * step rounds to nearest, so 1000 steps stay within 0.2 % of the real
 * value). Nothing here
 * allocates or fails; the caller serialises calls (one worker per QP).
 */
#ifndef RNIC_ROCE_DCQCN_H
#define RNIC_ROCE_DCQCN_H

#include <stdbool.h>
#include <stdint.h>

#define RNIC_DCQCN_ALPHA_ONE (1u << 24)   /* alpha = 1.0 */
/* Increase events one advance may apply for a long idle gap: enough to
 * climb from the minimum to any line rate, bounded so a call stays cheap. */
#define RNIC_DCQCN_MAX_EVENTS 4096u
/* Alpha updates one advance may apply: with g = 1/256 alpha reaches 0 in
 * about 3000; a smaller g after a long gap leaves alpha higher than it
 * would be (it decays on from there). */
#define RNIC_DCQCN_MAX_TICKS 65536u

/** Parameters (rnic_config's roce_cc in the units used here). */
struct rnic_dcqcn_params {
	uint64_t max_kbps;        /**< line rate: the start and the ceiling (< 2^39) */
	uint64_t min_kbps;        /**< floor of Rc and Rt */
	uint64_t ai_kbps;         /**< Rai, additive increase step */
	uint64_t hai_kbps;        /**< Rhai, hyper increase step */
	uint32_t alpha_us;        /**< alpha update period (paper: 55 us) */
	uint32_t rate_us;         /**< rate increase timer */
	uint64_t byte_reset;      /**< bytes per byte-counter event */
	uint32_t f;               /**< fast recovery stages (paper: 5) */
	uint32_t g_shift;         /**< g = 2^-g_shift (paper: 1/256, 8); 1..20 */
};

/** One QP's reaction point. */
struct rnic_dcqcn {
	uint64_t rc_kbps;         /**< current rate: what transmit is paced to */
	uint64_t rt_kbps;         /**< target rate */
	uint32_t alpha;           /**< congestion estimate, RNIC_DCQCN_ALPHA_ONE = 1 */
	uint32_t t_stage;         /**< rate-timer events since the last cut */
	uint32_t bc_stage;        /**< byte-counter events since the last cut */
	uint64_t bytes;           /**< bytes sent towards the next byte event */
	uint64_t alpha_due;       /**< next alpha update (us) */
	uint64_t rate_due;        /**< next rate-timer event (us) */
	uint64_t cuts;            /**< rate cuts (CNPs acted on) */
	uint64_t increases;       /**< increase events that raised Rc or Rt */
};

/** Start at the line rate with alpha = 1 (as the paper and mlx5), timers
 * running from @p now_us. */
void rnic_dcqcn_init(struct rnic_dcqcn *d, const struct rnic_dcqcn_params *p,
		     uint64_t now_us);

/** Run the alpha and rate timers due by @p now_us, in time order.
 * @return increase events applied. */
unsigned rnic_dcqcn_advance(struct rnic_dcqcn *d, const struct rnic_dcqcn_params *p,
			    uint64_t now_us);

/** A CNP arrived at @p now_us: timers due before it first, then the cut. */
void rnic_dcqcn_cnp(struct rnic_dcqcn *d, const struct rnic_dcqcn_params *p,
		    uint64_t now_us);

/** @p bytes were sent at @p now_us (byte counter). @return increase
 * events applied. */
unsigned rnic_dcqcn_sent(struct rnic_dcqcn *d, const struct rnic_dcqcn_params *p,
			 uint64_t bytes, uint64_t now_us);

/** True when the parameters make sense (all periods and steps non-zero,
 * min <= max, g_shift 1..20). */
bool rnic_dcqcn_params_ok(const struct rnic_dcqcn_params *p);

#endif
