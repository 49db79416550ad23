/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Seeded fault injector (see fault.h). Decisions come from one xorshift64*
 * stream per injector, so a given seed and frame sequence always produce the
 * same drops, duplicates, reorders, bit flips and delays.
 */
#include <string.h>

#include <rte_byteorder.h>
#include <rte_cycles.h>
#include <rte_ether.h>
#include <rte_ip.h>
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

static bool fault_seg_shared(const struct rte_mbuf *seg);

/* Thresholds from percentages; a zero seed picks a fixed one (the state of
 * xorshift must never be 0). */
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
	f->p_ce = pct_to_threshold(cfg->ce);
	f->enabled = f->p_drop || f->p_dup || f->p_reorder || f->p_corrupt ||
		     f->p_delay || f->p_ce;
}

void rnic_fault_set_ce(struct rnic_fault *f, double pct)
{
	uint32_t t = pct_to_threshold(pct);
	__atomic_store_n(&f->p_ce, t, __ATOMIC_RELAXED);
	/* never turned off here: frames held by other faults must still
	 * come out through rnic_port_fault_poll() */
	if (t != 0)
		__atomic_store_n(&f->enabled, true, __ATOMIC_RELEASE);
}

bool rnic_fault_mark_ce(struct rte_mbuf *m)
{
	uint32_t off = sizeof(struct rte_ether_hdr);
	if (fault_seg_shared(m) || rte_pktmbuf_data_len(m) < off)
		return false;
	const struct rte_ether_hdr *eth = rte_pktmbuf_mtod(m, const struct rte_ether_hdr *);
	uint16_t type = rte_be_to_cpu_16(eth->ether_type);
	if (type == RTE_ETHER_TYPE_VLAN) {
		if (rte_pktmbuf_data_len(m) < off + sizeof(struct rte_vlan_hdr))
			return false;
		const struct rte_vlan_hdr *vh = rte_pktmbuf_mtod_offset(m,
						const struct rte_vlan_hdr *, off);
		type = rte_be_to_cpu_16(vh->eth_proto);
		off += sizeof(struct rte_vlan_hdr);
	}
	if (type == RTE_ETHER_TYPE_IPV6) {
		/* ECN (RFC 3168 §5) is the low two bits of the Traffic Class,
		 * bits 20-21 of the first word (version, traffic class, flow
		 * label; RFC 8200 §3). IPv6 has no header checksum, and TCP's
		 * pseudo header and RoCE's ICRC leave the traffic class out */
		if (rte_pktmbuf_data_len(m) < off + sizeof(struct rte_ipv6_hdr))
			return false;
		struct rte_ipv6_hdr *ip6 = rte_pktmbuf_mtod_offset(m, struct rte_ipv6_hdr *, off);
		uint32_t vtc = rte_be_to_cpu_32(ip6->vtc_flow);
		uint32_t ecn6 = (vtc >> 20) & 3;
		if ((vtc >> 28) != 6 || ecn6 == 0 || ecn6 == 3)
			return false;   /* not IPv6, Not-ECT, or CE already */
		ip6->vtc_flow = rte_cpu_to_be_32(vtc | 3u << 20);
		return true;
	}
	if (type != RTE_ETHER_TYPE_IPV4 ||
	    rte_pktmbuf_data_len(m) < off + sizeof(struct rte_ipv4_hdr))
		return false;
	struct rte_ipv4_hdr *ip = rte_pktmbuf_mtod_offset(m, struct rte_ipv4_hdr *, off);
	uint8_t ecn = ip->type_of_service & 3;
	if ((ip->version_ihl >> 4) != 4 || ecn == 0 || ecn == 3)
		return false;   /* not IPv4, Not-ECT (never marked), or CE already */
	/* RFC 1624 eqn. 3: HC' = ~(~HC + ~m + m'), over the 16-bit word
	 * holding version/IHL and TOS */
	uint16_t old_w = rte_be_to_cpu_16(*(const rte_be16_t *)ip);
	ip->type_of_service |= 3;
	uint16_t new_w = rte_be_to_cpu_16(*(const rte_be16_t *)ip);
	uint32_t sum = (uint16_t)~rte_be_to_cpu_16(ip->hdr_checksum) +
		       (uint32_t)(uint16_t)~old_w + new_w;
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	ip->hdr_checksum = rte_cpu_to_be_16((uint16_t)~sum);
	return true;
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

/* A segment whose bytes someone else also sees: the mbuf is shared, or its
 * data is an indirect (cloned) or external buffer, e.g. a TCP segment
 * still in its retransmission queue or registered memory. */
static bool fault_seg_shared(const struct rte_mbuf *seg)
{
	return rte_mbuf_refcnt_read(seg) > 1 || RTE_MBUF_CLONED(seg) ||
	       RTE_MBUF_HAS_EXTBUF(seg);
}

/*
 * Flip one random bit anywhere in the frame (any segment). When the bytes
 * are shared, flip it in a private copy instead, so the sender's
 * retransmission queue or memory region never changes. If no copy can be
 * made the frame goes through unharmed and is not counted.
 */
static struct rte_mbuf *fault_corrupt(struct rnic_fault *f, struct rte_mbuf *m)
{
	uint64_t r = fault_rand(f);
	uint32_t len = rte_pktmbuf_pkt_len(m);
	uint32_t off;
	struct rte_mbuf *seg;

	if (len == 0)
		return m;
	off = (uint32_t)((r >> 3) % len);
	seg = m;
	while (seg != NULL && off >= seg->data_len) {
		off -= seg->data_len;
		seg = seg->next;
	}
	if (seg == NULL)
		return m; /* chain shorter than pkt_len: leave it alone */
	if (fault_seg_shared(m) || fault_seg_shared(seg)) {
		struct rte_mbuf *c = rte_pktmbuf_copy(m, m->pool, 0, UINT32_MAX);
		if (c == NULL)
			return m;
		rte_pktmbuf_free(m);
		m = c;
		off = (uint32_t)((r >> 3) % len);
		seg = m;
		while (off >= seg->data_len) {
			off -= seg->data_len;
			seg = seg->next;
		}
	}
	uint8_t *p = rte_pktmbuf_mtod_offset(seg, uint8_t *, off);
	*p ^= (uint8_t)(1u << (r & 7));
	f->stats.corrupted++;
	return m;
}

/* Move due frames to @p out in release-time order: the reordered frame
 * (past its 1 ms deadline) takes its place among the delayed ones. */
unsigned rnic_fault_release(struct rnic_fault *f, struct rte_mbuf **out,
			    unsigned max_out, uint64_t now_tsc)
{
	unsigned n = 0;

	while (n < max_out) {
		bool held_due = f->count > 0 && f->release_tsc[f->head] <= now_tsc;
		bool reorder_due = f->reorder != NULL &&
				   f->reorder_deadline <= now_tsc;

		if (reorder_due && (!held_due ||
				    f->reorder_deadline <= f->release_tsc[f->head])) {
			out[n++] = f->reorder;
			f->reorder = NULL;
		} else if (held_due) {
			out[n++] = f->held[f->head];
			f->head = (f->head + 1) % RNIC_FAULT_HOLD;
			f->count--;
		} else {
			break;
		}
	}
	return n;
}

/* Put back frames the PMD refused, due at once: they leave first on the
 * next release. @return frames taken (the rest stay the caller's). */
unsigned rnic_fault_requeue(struct rnic_fault *f, struct rte_mbuf **m,
			    unsigned n, uint64_t now_tsc)
{
	unsigned i;

	for (i = 0; i < n; i++)
		if (!fault_hold(f, m[i], now_tsc))
			break;
	return i;
}

/*
 * Decide, frame by frame: drop (freed), corrupt, duplicate (copy emitted
 * first), delay (held until now + delay_us) or reorder (held until the next
 * frame passes). Every decision draws from the seeded stream in the same
 * order, so a seed replays the same faults.
 */
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
		if (fault_hit(f, __atomic_load_n(&f->p_ce, __ATOMIC_RELAXED)) &&
		    rnic_fault_mark_ce(m))
			f->stats.ce_marked++;
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
