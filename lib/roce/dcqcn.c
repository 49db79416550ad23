/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * DCQCN reaction point arithmetic (see dcqcn.h). Pure: no EAL, no clock of
 * its own; every entry point takes the time.
 */
#include "roce/dcqcn.h"

static uint64_t clamp_rate(const struct rnic_dcqcn_params *p, uint64_t r)
{
	return r < p->min_kbps ? p->min_kbps : r > p->max_kbps ? p->max_kbps : r;
}

bool rnic_dcqcn_params_ok(const struct rnic_dcqcn_params *p)
{
	return p->max_kbps > 0 && p->min_kbps > 0 && p->min_kbps <= p->max_kbps &&
	       p->ai_kbps > 0 && p->hai_kbps > 0 && p->alpha_us > 0 && p->rate_us > 0 &&
	       p->byte_reset > 0 && p->f > 0 && p->g_shift >= 1 && p->g_shift <= 20;
}

void rnic_dcqcn_init(struct rnic_dcqcn *d, const struct rnic_dcqcn_params *p,
		     uint64_t now_us)
{
	*d = (struct rnic_dcqcn){
		.rc_kbps = p->max_kbps,
		.rt_kbps = p->max_kbps,
		.alpha = RNIC_DCQCN_ALPHA_ONE,
		.alpha_due = now_us + p->alpha_us,
		.rate_due = now_us + p->rate_us,
	};
}

/* One rate-increase event (the timer's or the byte counter's stage has
 * just grown): the stage pair picks fast recovery, additive or hyper. */
static void increase(struct rnic_dcqcn *d, const struct rnic_dcqcn_params *p)
{
	uint32_t hi = d->t_stage > d->bc_stage ? d->t_stage : d->bc_stage;
	uint32_t lo = d->t_stage < d->bc_stage ? d->t_stage : d->bc_stage;
	uint64_t rc = d->rc_kbps, rt = d->rt_kbps;
	if (lo > p->f)
		rt += (uint64_t)(lo - p->f) * p->hai_kbps;
	else if (hi > p->f)
		rt += p->ai_kbps;
	/* fast recovery (the first F events of both) keeps Rt: Rc closes
	 * half the gap */
	rt = clamp_rate(p, rt);
	rc = clamp_rate(p, (rt + rc) / 2);
	/* (rt + rc) / 2 rounds down: one step short of Rt, take it */
	if (rt - rc <= 1)
		rc = rt;
	if (rc != d->rc_kbps || rt != d->rt_kbps)
		d->increases++;
	d->rc_kbps = rc;
	d->rt_kbps = rt;
}

/* Stages saturate: a QP left at line rate for days must not wrap them
 * back into fast recovery. */
static uint32_t stage_inc(uint32_t s)
{
	return s == UINT32_MAX ? s : s + 1;
}

/* alpha * g, rounded to nearest. */
static uint32_t alpha_g(uint32_t alpha, const struct rnic_dcqcn_params *p)
{
	return (alpha + (1u << (p->g_shift - 1))) >> p->g_shift;
}

/* The alpha update due at d->alpha_due: a whole period without a CNP
 * (a CNP restarts the period). Once alpha * g rounds to 0 the fixed point
 * cannot decay further: alpha is 0 then. */
static void alpha_tick(struct rnic_dcqcn *d, const struct rnic_dcqcn_params *p)
{
	uint32_t dec = alpha_g(d->alpha, p);
	d->alpha = dec == 0 ? 0 : d->alpha - dec;
	d->alpha_due += p->alpha_us;
}

/* Periods of @p period due at or before @p now, from @p due (<= now). */
static uint64_t periods_due(uint64_t due, uint64_t now, uint32_t period)
{
	return (now - due) / period + 1;
}

unsigned rnic_dcqcn_advance(struct rnic_dcqcn *d, const struct rnic_dcqcn_params *p,
			    uint64_t now_us)
{
	unsigned events = 0, ticks = 0;
	/* both timers, earliest first, so alpha and the stages move as they
	 * would have had each fired on time */
	while (d->alpha_due <= now_us || d->rate_due <= now_us) {
		if (d->alpha_due <= d->rate_due) {
			/* alpha 0 has nothing left to decay; past the tick bound
			 * (a long idle gap with a tiny g) the rest is skipped */
			if (d->alpha == 0 || ++ticks > RNIC_DCQCN_MAX_TICKS)
				d->alpha_due += periods_due(d->alpha_due, now_us, p->alpha_us) *
						p->alpha_us;
			else
				alpha_tick(d, p);
			continue;
		}
		if (events == RNIC_DCQCN_MAX_EVENTS ||
		    (d->rc_kbps == p->max_kbps && d->rt_kbps == p->max_kbps)) {
			/* at the ceiling, or enough increases for one call
			 * (a long idle gap): the remaining periods only count */
			uint64_t n = periods_due(d->rate_due, now_us, p->rate_us);
			uint64_t t = d->t_stage + n;
			d->rate_due += n * p->rate_us;
			d->t_stage = t > UINT32_MAX ? UINT32_MAX : (uint32_t)t;
			continue;
		}
		d->rate_due += p->rate_us;
		d->t_stage = stage_inc(d->t_stage);
		increase(d, p);
		events++;
	}
	return events;
}

void rnic_dcqcn_cnp(struct rnic_dcqcn *d, const struct rnic_dcqcn_params *p,
		    uint64_t now_us)
{
	rnic_dcqcn_advance(d, p, now_us);
	d->rt_kbps = d->rc_kbps;
	/* Rc * (1 - alpha / 2); rates below 2^39 kb/s keep the product in
	 * 64 bits */
	uint64_t cut = (d->rc_kbps * d->alpha) / (2ull * RNIC_DCQCN_ALPHA_ONE);
	d->rc_kbps = clamp_rate(p, d->rc_kbps - cut);
	d->alpha = d->alpha - alpha_g(d->alpha, p) + (RNIC_DCQCN_ALPHA_ONE >> p->g_shift);
	if (d->alpha > RNIC_DCQCN_ALPHA_ONE)
		d->alpha = RNIC_DCQCN_ALPHA_ONE;
	d->t_stage = 0;
	d->bc_stage = 0;
	d->bytes = 0;
	d->alpha_due = now_us + p->alpha_us;
	d->rate_due = now_us + p->rate_us;
	d->cuts++;
}

unsigned rnic_dcqcn_sent(struct rnic_dcqcn *d, const struct rnic_dcqcn_params *p,
			 uint64_t bytes, uint64_t now_us)
{
	unsigned events = rnic_dcqcn_advance(d, p, now_us);
	d->bytes += bytes;
	while (d->bytes >= p->byte_reset) {
		d->bytes -= p->byte_reset;
		d->bc_stage = stage_inc(d->bc_stage);
		increase(d, p);
		events++;
	}
	return events;
}
