/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * RTO computation per RFC 6298: SRTT/RTTVAR with alpha 1/8, beta 1/4,
 * RTO = SRTT + max(G, 4 RTTVAR), exponential backoff, a configurable floor
 * (rnic's default 5 ms is far below the RFC's 1 s SHOULD: rnic targets
 * short-RTT links, as datacenter TCP stacks do) and a 60 s ceiling.
 */
#include "tcp/tcp_internal.h"

#define RTO_MAX_US (60u * 1000 * 1000)
#define CLOCK_G_US 16u   /* timer granularity: one wheel tick */

void tcp_rtt_init(struct tcp_rtt *r, uint32_t rto_init_us)
{
	r->srtt_us = 0;
	r->rttvar_us = 0;
	r->rto_us = rto_init_us;
	r->have_sample = false;
	r->backoff = 0;
}

void tcp_rtt_sample(struct tcp_rtt *r, uint32_t rtt_us, uint32_t rto_min_us)
{
	if (rtt_us == 0)
		rtt_us = 1;
	if (!r->have_sample) {               /* (2.2) */
		r->srtt_us = rtt_us;
		r->rttvar_us = rtt_us / 2;
		r->have_sample = true;
	} else {                             /* (2.3) */
		uint32_t err = r->srtt_us > rtt_us ? r->srtt_us - rtt_us :
						     rtt_us - r->srtt_us;
		r->rttvar_us = r->rttvar_us - r->rttvar_us / 4 + err / 4;
		r->srtt_us = r->srtt_us - r->srtt_us / 8 + rtt_us / 8;
	}
	uint32_t var = 4 * r->rttvar_us > CLOCK_G_US ? 4 * r->rttvar_us : CLOCK_G_US;
	r->rto_us = r->srtt_us + var;
	if (r->rto_us < rto_min_us)          /* (2.4) */
		r->rto_us = rto_min_us;
	if (r->rto_us > RTO_MAX_US)          /* (2.5) */
		r->rto_us = RTO_MAX_US;
	r->backoff = 0;                      /* a new sample ends backoff */
}

void tcp_rtt_backoff(struct tcp_rtt *r)
{
	if (r->backoff < 16)
		r->backoff++;
}

uint32_t tcp_rtt_rto(const struct tcp_rtt *r, uint32_t rto_min_us)
{
	uint64_t rto = r->rto_us < rto_min_us ? rto_min_us : r->rto_us;
	rto <<= r->backoff;                  /* (5.5) */
	return rto > RTO_MAX_US ? RTO_MAX_US : (uint32_t)rto;
}
