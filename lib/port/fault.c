/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Seeded fault injector (see fault.h). Decisions come from one xorshift64*
 * stream per injector, so a given seed and frame sequence always produce the
 * same drops, duplicates, reorders, bit flips and delays.
 */
#include <string.h>

#include <rte_cycles.h>
#include <rte_mbuf.h>

#include "port/fault.h"

#define REORDER_MAX_HOLD_US 1000 /* a reordered frame waits at most 1 ms */

static uint64_t fault_rand(struct rnic_fault *f)
{
	uint64_t x = f->rng;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	f->rng = x;
	return x * 0x2545F4914F6CDD1DULL;
}

/* Percent (0..100) to a threshold out of 2^32. */
static uint32_t pct_to_threshold(double pct)
{
	if (!(pct > 0))
		return 0;
	if (pct >= 100)
		return UINT32_MAX;
	return (uint32_t)(pct / 100.0 * 4294967296.0);
}

static bool fault_hit(struct rnic_fault *f, uint32_t threshold)
{
	return threshold != 0 && (uint32_t)(fault_rand(f) >> 32) < threshold;
}

void rnic_fault_init(struct rnic_fault *f, const struct rnic_fault_cfg *cfg,
		     uint64_t seed)
{
	memset(f, 0, sizeof(*f));
	f->cfg = *cfg;
	f->rng = seed ? seed : 0x9E3779B97F4A7C15ULL;
	f->p_drop = pct_to_threshold(cfg->drop);
	f->p_dup = pct_to_threshold(cfg->dup);
	f->p_reorder = pct_to_threshold(cfg->reorder);
	f->p_corrupt = pct_to_threshold(cfg->corrupt);
	f->p_delay = cfg->delay_us ? pct_to_threshold(cfg->delay) : 0;
	f->enabled = f->p_drop || f->p_dup || f->p_reorder || f->p_corrupt ||
		     f->p_delay;
}

/* Hold @p m until @p release; the hold FIFO is kept in release order. */
static bool fault_hold(struct rnic_fault *f, struct rte_mbuf *m,
		       uint64_t release)
{
	if (f->count == RNIC_FAULT_HOLD)
		return false;
	/* insertion from the tail keeps the FIFO sorted by release time */
	unsigned pos = f->count;
	while (pos > 0) {
		unsigned prev = (f->head + pos - 1) % RNIC_FAULT_HOLD;
		if (f->release_tsc[prev] <= release)
			break;
		unsigned cur = (f->head + pos) % RNIC_FAULT_HOLD;
		f->held[cur] = f->held[prev];
		f->release_tsc[cur] = f->release_tsc[prev];
		pos--;
	}
	unsigned slot = (f->head + pos) % RNIC_FAULT_HOLD;
	f->held[slot] = m;
	f->release_tsc[slot] = release;
	f->count++;
	return true;
}

/* Flip one random bit of the frame; copy it first if it is shared. */
static struct rte_mbuf *fault_corrupt(struct rnic_fault *f, struct rte_mbuf *m)
{
	if (rte_mbuf_refcnt_read(m) > 1 || RTE_MBUF_CLONED(m)) {
		struct rte_mbuf *c = rte_pktmbuf_copy(m, m->pool, 0, UINT32_MAX);
		if (c == NULL)
			return m;
		rte_pktmbuf_free(m);
		m = c;
	}
	uint32_t len = rte_pktmbuf_data_len(m);
	if (len == 0)
		return m;
	uint64_t r = fault_rand(f);
	uint8_t *p = rte_pktmbuf_mtod_offset(m, uint8_t *, (r >> 3) % len);
	*p ^= (uint8_t)(1u << (r & 7));
	f->stats.corrupted++;
	return m;
}

unsigned rnic_fault_release(struct rnic_fault *f, struct rte_mbuf **out,
			    unsigned max_out, uint64_t now_tsc)
{
	unsigned n = 0;

	if (f->reorder != NULL && n < max_out &&
	    f->reorder_deadline <= now_tsc) {
		out[n++] = f->reorder;
		f->reorder = NULL;
	}
	while (f->count > 0 && n < max_out &&
	       f->release_tsc[f->head] <= now_tsc) {
		out[n++] = f->held[f->head];
		f->head = (f->head + 1) % RNIC_FAULT_HOLD;
		f->count--;
	}
	return n;
}

unsigned rnic_fault_apply(struct rnic_fault *f, struct rte_mbuf **in,
			  unsigned n, struct rte_mbuf **out, unsigned max_out,
			  uint64_t now_tsc)
{
	uint64_t us = rte_get_tsc_hz() / 1000000;
	unsigned k = 0;

	for (unsigned i = 0; i < n; i++) {
		struct rte_mbuf *m = in[i];

		f->stats.seen++;
		if (fault_hit(f, f->p_drop)) {
			f->stats.dropped++;
			rte_pktmbuf_free(m);
			continue;
		}
		if (fault_hit(f, f->p_corrupt))
			m = fault_corrupt(f, m);
		if (fault_hit(f, f->p_dup) && k + 1 < max_out) {
			struct rte_mbuf *d = rte_pktmbuf_copy(m, m->pool, 0,
							      UINT32_MAX);
			if (d != NULL) {
				f->stats.duplicated++;
				out[k++] = d;
			}
		}
		if (fault_hit(f, f->p_delay) &&
		    fault_hold(f, m, now_tsc + f->cfg.delay_us * us)) {
			f->stats.delayed++;
			continue;
		}
		if (f->reorder == NULL && fault_hit(f, f->p_reorder)) {
			f->reorder = m;
			f->reorder_deadline = now_tsc + REORDER_MAX_HOLD_US * us;
			f->stats.reordered++;
			continue;
		}
		if (k < max_out) {
			out[k++] = m;
		} else {
			f->stats.dropped++;
			rte_pktmbuf_free(m);
		}
		/* a frame passed: the reordered one now follows it */
		if (f->reorder != NULL && k < max_out) {
			out[k++] = f->reorder;
			f->reorder = NULL;
		}
	}
	return k;
}

void rnic_fault_flush(struct rnic_fault *f)
{
	rte_pktmbuf_free(f->reorder);
	f->reorder = NULL;
	while (f->count > 0) {
		rte_pktmbuf_free(f->held[f->head]);
		f->head = (f->head + 1) % RNIC_FAULT_HOLD;
		f->count--;
	}
}
