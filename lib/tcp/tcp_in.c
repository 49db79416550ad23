/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * TCP input (RFC 9293 section 3.10.7 "SEGMENT ARRIVES"), with the SYN
 * stage of seed 004 in front of it: a SYN to a listener is answered with a
 * cookie and creates nothing; the TCB is made when the final ACK carries a
 * valid cookie. RFC 5961 checks for RST, SYN and ACK; RFC 7323 PAWS.
 */
#include <errno.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_ip.h>
#include <rte_malloc.h>
#include <rte_random.h>
#include <rte_tcp.h>

#include "net/net.h"
#include "port/port.h"
#include "tcp/tcp_internal.h"

#define DUPTHRESH 3
/* RFC 5961 section 7: challenge ACKs a worker sends in a second, on
 * average; each second's allowance is drawn at random from [half, 1.5 x)
 * (as Linux since CVE-2016-5696), so that a blind attacker cannot count
 * the ACKs another connection's challenges used up. */
#define CHALLENGE_ACK_PER_S 1000
/* Per connection, ACKs to out-of-window segments without payload and
 * challenge ACKs: TCP_OOW_ACK_BURST at once, then one per TCP_OOW_ACK_MS
 * (issue 27; Linux allows one per 500 ms, tcp_invalid_ratelimit). Two
 * endpoints that disagree on the state cannot ping-pong ACKs faster, nor
 * can a forged segment stream make us send more. */
#define TCP_OOW_ACK_MS    50
#define TCP_OOW_ACK_BURST 8

struct tcp_seg {
	const struct rte_tcp_hdr *th;
	struct tcp_opts o;
	uint32_t seq, ack, len;      /* len: payload bytes */
	uint8_t flags;
	uint32_t wnd;                /* unscaled window field */
};

unsigned tcp_owner(struct rnic_stack *st, struct rnic_port *p, struct rte_mbuf *m)
{
	(void)p;
	if (rte_pktmbuf_data_len(m) < m->l2_len + m->l3_len + 4)
		return UINT32_MAX;   /* the input path drops it */
	const rte_be16_t *ports = rte_pktmbuf_mtod_offset(m, const rte_be16_t *,
							  m->l2_len + m->l3_len);
	if (rnic_mbuf_is_ipv6(m)) {
		const struct rte_ipv6_hdr *ip6 = rte_pktmbuf_mtod_offset(m,
				const struct rte_ipv6_hdr *, m->l2_len);
		return rnic_flow_owner6(st, ip6->src_addr, ip6->dst_addr, ports[0], ports[1]);
	}
	const struct rte_ipv4_hdr *ip = rte_pktmbuf_mtod_offset(m,
			const struct rte_ipv4_hdr *, m->l2_len);
	return rnic_flow_owner(st, ip->src_addr, ip->dst_addr, ports[0], ports[1]);
}

void tcp_pmtu6(struct rnic_worker *w, const uint8_t local[16], const uint8_t remote[16],
	       const uint8_t *l4, uint32_t mtu)
{
	struct tcp_key k;
	memcpy(k.laddr, local, 16);
	memcpy(k.raddr, remote, 16);
	memcpy(&k.lport, l4, 2);       /* the quoted segment went from us */
	memcpy(&k.rport, l4 + 2, 2);
	struct rnic_tcp_conn *c = tcp_lookup(w, &k);
	if (c == NULL || c->state == TCP_LISTEN || c->state == TCP_CLOSED)
		return;
	/* RFC 5927 section 4.1: the quoted sequence number must be one in
	 * flight, or a blind attacker could shrink our segments */
	uint32_t seq;
	memcpy(&seq, l4 + 4, 4);
	seq = rte_be_to_cpu_32(seq);
	if (seq_lt(seq, c->snd_una) || seq_ge(seq, c->snd_max))
		return;
	c->busy++;
	tcp_pmtu_reduce(c, mtu);
	tcp_conn_put(c);
}

void tcp_key_of(const struct rte_mbuf *m, const struct rte_tcp_hdr *th, struct tcp_key *k)
{
	if (rnic_mbuf_is_ipv6(m)) {
		const struct rte_ipv6_hdr *ip6 = rte_pktmbuf_mtod_offset(m,
				const struct rte_ipv6_hdr *, m->l2_len);
		memcpy(k->laddr, ip6->dst_addr, 16);
		memcpy(k->raddr, ip6->src_addr, 16);
		k->lport = th->dst_port;
		k->rport = th->src_port;
		return;
	}
	const struct rte_ipv4_hdr *ip = rte_pktmbuf_mtod_offset(m,
			const struct rte_ipv4_hdr *, m->l2_len);
	tcp_key_set4(k, ip->dst_addr, ip->src_addr, th->dst_port, th->src_port);
}

/*
 * The per-connection limit (a GCRA on the 1 ms timestamp clock: oow_ack_tat
 * is when the next ACK would be due at the sustained rate). @return true
 * when an ACK may go now (and takes its place).
 */
static bool oow_ack_allowed(struct rnic_tcp_conn *c)
{
	uint32_t now = tcp_ts_clock(c->w);
	int32_t ahead = (int32_t)(c->oow_ack_tat - now);
	/* behind the clock, or further ahead than the limit ever puts it (a
	 * new TCB's 0, or a clock that wrapped): a full burst is allowed */
	if (ahead < 0 || ahead > TCP_OOW_ACK_BURST * TCP_OOW_ACK_MS) {
		c->oow_ack_tat = now;
		ahead = 0;
	}
	if (ahead > (TCP_OOW_ACK_BURST - 1) * TCP_OOW_ACK_MS)
		return false;
	c->oow_ack_tat += TCP_OOW_ACK_MS;
	return true;
}

/* An ACK for an unacceptable segment (RFC 9293 3.10.7.4 first check, PAWS):
 * a segment with payload always gets it (it answers a retransmission
 * whose ACK was lost, one for one, as Linux); one without, only within
 * the per-connection limit (oow_acks_limited). */
static void oow_ack(struct rnic_tcp_conn *c, const struct tcp_seg *s)
{
	if (s->len != 0 && !(s->flags & RTE_TCP_SYN_FLAG)) {
		tcp_send_ack(c);
		return;
	}
	if (!oow_ack_allowed(c)) {
		tcp_w(c->w)->st.oow_acks_limited++;
		return;
	}
	tcp_send_ack(c);
}

/* RFC 5961 section 7: a challenge ACK goes within both the connection's
 * limit and the worker's randomised allowance per second; suppressed ones
 * are counted (challenge_acks_limited). */
static void challenge_ack(struct rnic_tcp_conn *c)
{
	struct tcp_worker *tw = tcp_w(c->w);
	uint64_t now = c->w->now_tsc;
	if (now - tw->challenge_window_tsc > rte_get_tsc_hz()) {
		tw->challenge_window_tsc = now;
		tw->challenge_left = CHALLENGE_ACK_PER_S / 2 +
				     (unsigned)(rte_rand() % CHALLENGE_ACK_PER_S);
	}
	if (tw->challenge_left == 0 || !oow_ack_allowed(c)) {
		tw->st.challenge_acks_limited++;
		return;
	}
	tw->challenge_left--;
	tw->st.challenge_acks++;
	tcp_send_ack(c);
}

/*
 * The MSS to use toward a peer whose SYN carried @p o (RFC 9293 3.7.1,
 * RFC 6691), options included: its MSS option, or the family's default
 * without one, no lower than the family's minimum (536, 1220) and no
 * higher than our own. A peer announcing 0 had an active open spin in
 * rnic_tcp_send() cutting segments of nothing, and 1..11 with timestamps
 * wrapped the payload to 65,530 (issue 27). Raising a peer's MSS to the
 * minimum is counted (mss_clamped); lowering one to ours is the ordinary
 * minimum of the two ends.
 */
static uint16_t tcp_peer_mss(struct rnic_worker *w, const struct rnic_port *p,
			     const struct tcp_key *k, const struct tcp_opts *o)
{
	uint16_t ours = tcp_mss_for(p, k);
	uint16_t floor = tcp_key_v4(k) ? TCP_MSS_MIN_V4 : TCP_MSS_MIN_V6;
	uint16_t mss = o->mss_ok ? o->mss : floor;
	if (mss < floor) {
		tcp_w(w)->st.mss_clamped++;
		mss = floor;
	}
	return mss < ours ? mss : ours;   /* ours is at least TCP_MSS_FLOOR */
}



/* The window of a cookie SYN-ACK (unscaled, RFC 7323): the TCB born from
 * the final ACK must know it without having seen it. */
static uint32_t cookie_syn_window(const struct tcp_stack *ts)
{
	return ts->params.rcvbuf < 65535 ? ts->params.rcvbuf : 65535;
}

/* SYN to a listener: answer with a cookie, keep nothing (seed 004). */
static void syn_stage_syn(struct rnic_worker *w, struct rnic_port *p,
			  const struct tcp_key *k, const struct tcp_seg *s, struct rte_mbuf *m)
{
	struct tcp_stack *ts = tcp_s(w->st);
	struct tcp_worker *tw = tcp_w(w);
	const struct tcp_flow *f = tcp_key_flow(k);
	uint16_t our_mss = tcp_mss_for(p, k);
	/* clamped before it is encoded: the cookie's table starts at 536 */
	uint16_t mss = tcp_cookie_mss_round(tcp_peer_mss(w, p, k, &s->o));

	tw->st.syns++;
	if (s->o.ws_clamped)
		tw->st.wscale_clamped++;
	uint32_t cookie = tcp_cookie_make(&ts->keys, f, s->seq, mss, tcp_cookie_epoch(w));
	struct tcp_opts o = {
		.mss_ok = true, .mss = our_mss,
		.sack_ok = s->o.sack_ok && ts->params.sack,
		.ts_ok = s->o.ts_ok && ts->params.timestamps,
		.ws_ok = s->o.ws_ok, .ws = ts->params.wscale,
	};
	if (o.ts_ok) {
		/* WS and SACK-permitted come back in the ACK's TSecr */
		o.tsval = tcp_cookie_ts_encode(tcp_ts_clock(w) +
					       tcp_ts_offset(&ts->keys, k),
					       s->o.ws_ok, s->o.ws, o.sack_ok);
		o.tsecr = s->o.tsval;
	} else {
		o.ws_ok = false;   /* cannot be remembered without timestamps */
		o.sack_ok = false;
	}
	tw->st.cookies_sent++;
	/* in the SYN's own buffer, back to the SYN's Ethernet source: a flood
	 * of spoofed sources costs no allocation, no ARP entry and no ARP
	 * request per SYN */
	tcp_reply_ctl(w, p, m, k, cookie, s->seq + 1, RTE_TCP_SYN_FLAG | RTE_TCP_ACK_FLAG,
		      &o, cookie_syn_window(ts));
}

/* Final ACK with a valid cookie: the TCB is born established. */
static struct rnic_tcp_conn *syn_stage_ack(struct rnic_worker *w, struct rnic_port *p,
					   const struct tcp_key *k,
					   const struct tcp_seg *s,
					   struct tcp_listener *l, bool *rst)
{
	*rst = false;
	struct tcp_stack *ts = tcp_s(w->st);
	struct tcp_worker *tw = tcp_w(w);
	uint16_t mss;

	if (!tcp_cookie_check(&ts->keys, tcp_key_flow(k), s->seq - 1, s->ack - 1, tcp_cookie_epoch(w),
			      &mss)) {
		tw->st.cookie_invalid++;
		*rst = true;
		return NULL;
	}
	tw->st.cookie_valid++;
	if (__atomic_load_n(&l->count, __ATOMIC_RELAXED) >= l->backlog) {
		tw->st.backlog_full++;   /* no state: the client's next segment retries */
		return NULL;
	}
	struct rnic_tcp_conn *c = tcp_conn_new(w, p, k);
	if (c == NULL)
		return NULL;
	c->iss = s->ack - 1;
	c->snd_una = c->snd_nxt = c->snd_max = s->ack;
	c->irs = s->seq - 1;
	c->rcv_nxt = s->seq;
	c->rcv_adv = s->seq + cookie_syn_window(ts);   /* what the SYN-ACK said */
	c->rcv_wedge = c->rcv_adv;
	c->ts_ok = s->o.ts_ok && ts->params.timestamps;
	bool ws_ok = false, sack = false;
	uint8_t ws = 0;
	if (c->ts_ok) {
		tcp_cookie_ts_decode(s->o.tsecr, &ws_ok, &ws, &sack);
		c->ts_recent = s->o.tsval;
	}
	c->sack_ok = sack;
	c->snd_wscale = ws_ok ? ws : 0;
	/* no RTT sample here: the cookie's timestamp sits up to 63 ticks
	 * below the clock, so its echo says little; the first ACK of data
	 * gives one */
	c->rcv_wscale = ws_ok ? ts->params.wscale : 0;
	/* the cookie's MSS is one of its table's (536 and up); not above
	 * ours, should the MTU have shrunk since the SYN-ACK */
	if (mss > tcp_mss_for(p, k))
		mss = tcp_mss_for(p, k);
	c->mss = tcp_data_mss(mss, c->ts_ok);
	c->snd_wnd = s->wnd << c->snd_wscale;
	c->max_snd_wnd = c->snd_wnd;
	c->snd_wl1 = s->seq;
	c->snd_wl2 = s->ack;
	c->listener = l;
	c->ops = l->ops;
	__atomic_fetch_add(&l->count, 1, __ATOMIC_RELAXED);
	if (tcp_conn_insert(c) != 0) {
		tcp_conn_done(c, -ENOMEM);
		return NULL;
	}
	tw->st.passive_opens++;
	tcp_set_state(c, TCP_ESTABLISHED);
	c->busy++;   /* accept() may abort it; the caller puts it */
	tcp_established(c);
	if (c->state != TCP_ESTABLISHED) {   /* refused by accept() */
		tcp_conn_put(c);
		return NULL;
	}
	return c;
}

/* Process the options and sequence numbers of a SYN we answer (active or
 * simultaneous open). */
static void take_syn(struct rnic_tcp_conn *c, const struct tcp_seg *s)
{
	struct tcp_stack *ts = tcp_s(c->w->st);
	c->irs = s->seq;
	c->rcv_nxt = s->seq + 1;
	/* our SYN advertised an unscaled window of at most 64 KiB */
	c->rcv_adv = c->rcv_nxt + (tcp_rcv_window(c) > 65535 ? 65535 : tcp_rcv_window(c));
	c->rcv_wedge = c->rcv_adv;
	c->ts_ok = s->o.ts_ok && ts->params.timestamps;
	c->sack_ok = s->o.sack_ok && ts->params.sack;
	if (s->o.ws_ok) {
		c->snd_wscale = s->o.ws;   /* at most 14: tcp_opts_parse() */
		if (s->o.ws_clamped)
			tcp_w(c->w)->st.wscale_clamped++;
	} else {
		c->snd_wscale = 0;
		c->rcv_wscale = 0;
	}
	if (c->ts_ok)
		c->ts_recent = s->o.tsval;
	c->mss = tcp_data_mss(tcp_peer_mss(c->w, c->port, &c->key, &s->o), c->ts_ok);
	c->snd_wnd = s->wnd;  /* RFC 7323: the SYN's window is never scaled */
	c->max_snd_wnd = c->snd_wnd;
	c->snd_wl1 = s->seq;
	c->cc_ops->init(&c->cc, c->mss);
}

static void free_unit(struct tcp_unit *u)
{
	rte_pktmbuf_free(u->m);
	u->m = NULL;
}

/* The first sent unit that ends after @p seq (units are in sequence
 * order: a binary search, not a walk from SND.UNA per SACK block). */
static uint32_t unit_ending_after(const struct rnic_tcp_conn *c, uint32_t seq)
{
	uint32_t lo = c->u_head, n = c->u_next - c->u_head;
	while (n > 0) {
		uint32_t half = n / 2;
		const struct tcp_unit *u = &c->units[(lo + half) & (c->units_cap - 1)];
		if (seq_le(u->seq + u->len, seq)) {
			lo += half + 1;
			n -= half + 1;
		} else {
			n = half;
		}
	}
	return lo;
}

/*
 * Whether SACK block @p b (index @p idx) of an ACK may mark anything: it
 * must lie within [SND.UNA, SND.MAX] and not be empty or reversed (RFC
 * 2018; RFC 6675 section 5.1 on blocks that cannot be right). A first
 * block wholly below SND.UNA is a D-SACK (RFC 2883): not an error, but
 * nothing to mark. Others are counted (sack_bogus) and ignored, so no
 * block can mark data we never sent or the scoreboard say more than was
 * sent.
 */
static bool sack_block_ok(struct rnic_tcp_conn *c, const struct tcp_sack_block *b,
			  unsigned idx)
{
	if (idx == 0 && seq_lt(b->start, b->end) && seq_le(b->end, c->snd_una))
		return false;   /* D-SACK */
	if (!seq_lt(b->start, b->end) || seq_lt(b->start, c->snd_una) ||
	    seq_gt(b->end, c->snd_max)) {
		tcp_w(c->w)->st.sack_bogus++;
		return false;
	}
	return true;
}

/* Mark SACKed units; @return bytes newly SACKed. */
static uint32_t sack_update(struct rnic_tcp_conn *c, const struct tcp_seg *s)
{
	uint32_t newly = 0;
	for (unsigned b = 0; b < s->o.n_sack; b++) {
		uint32_t bs = s->o.sack[b].start, be = s->o.sack[b].end;
		if (!sack_block_ok(c, &s->o.sack[b], b))
			continue;
		for (uint32_t i = unit_ending_after(c, bs); i != c->u_next; i++) {
			struct tcp_unit *u = &c->units[i & (c->units_cap - 1)];
			if (seq_ge(u->seq, be))
				break;
			if (u->sacked || seq_lt(u->seq, bs) || seq_gt(u->seq + u->len, be))
				continue;
			u->sacked = true;
			c->sacked_bytes += u->len;
			newly += u->len;
			if (u->lost) {
				u->lost = false;
				c->lost_bytes -= u->len;
			}
			c->high_sacked = seq_max(c->high_sacked, u->seq + u->len);
			if (u->sent_tsc > c->rack_tsc)
				c->rack_tsc = u->sent_tsc;
		}
	}
	return newly;
}

/*
 * Which outstanding units are lost. RFC 6675 IsLost(): DupThresh segments'
 * worth of data above a unit was SACKed; units below HighRxt were resent in
 * this recovery already, and marking them again on every later SACK would
 * resend them over and over (NextSeg rule 1.a). Time order as in RACK
 * (RFC 8985): a unit sent more than a reordering window before one that was
 * delivered is lost; this also finds lost retransmissions, which the
 * sequence rule cannot, without waiting for the RTO. @return units newly
 * marked.
 */
static unsigned mark_lost(struct rnic_tcp_conn *c)
{
	uint32_t above = 0;
	unsigned n = 0;
	if (c->u_next == c->u_head)
		return 0;
	/* reordering window: a quarter of the smoothed RTT, at least 50 us */
	uint64_t reo_us = c->rtt.srtt_us / 4 > 50 ? c->rtt.srtt_us / 4 : 50;
	uint64_t reo = reo_us * (rte_get_tsc_hz() / 1000000);
	uint64_t horizon = c->rack_tsc > reo ? c->rack_tsc - reo : 0;
	for (uint32_t i = c->u_next; i != c->u_head;) {
		i--;
		struct tcp_unit *u = &c->units[i & (c->units_cap - 1)];
		if (u->sacked) {
			above += u->len;
			continue;
		}
		if (u->lost)
			continue;
		if ((above >= DUPTHRESH * (uint32_t)c->mss && seq_ge(u->seq, c->high_rxt)) ||
		    u->sent_tsc < horizon) {
			u->lost = true;
			c->lost_bytes += u->len;
			n++;
		}
	}
	return n;
}

static void enter_recovery(struct rnic_tcp_conn *c)
{
	uint32_t flight = c->snd_max - c->snd_una;
	c->in_recovery = true;
	c->recover = c->snd_max;
	c->high_rxt = c->snd_una;
	c->cc_ops->on_loss(&c->cc, c->mss, flight, tcp_now_us());
	tcp_w(c->w)->st.fast_retransmits++;
	/* the first unacknowledged unit is lost (RFC 6675 step 4 / RFC 5681) */
	struct tcp_unit *u = &c->units[c->u_head & (c->units_cap - 1)];
	if (c->u_head != c->u_next && !u->sacked && !u->lost) {
		u->lost = true;
		c->lost_bytes += u->len;
	}
	mark_lost(c);
	/* the fast retransmit itself goes now, whatever pipe says (RFC 6675
	 * step 4.3); further holes follow as cwnd - pipe allows */
	if (c->u_head != c->u_next && u->lost) {
		u->lost = false;
		c->lost_bytes -= u->len;
		tcp_retransmit_unit(c, u);
	}
}

/*
 * Eifel detection (RFC 3522): the first ACK of new data after an RTO echoes
 * a timestamp older than the retransmission, so the original transmission
 * arrived and the RTO was spurious (a stalled CPU, a delayed ACK): restore
 * the congestion state and forget the presumed losses, instead of resending
 * the whole window.
 */
static void eifel_check(struct rnic_tcp_conn *c, const struct tcp_seg *s)
{
	c->undo_armed = false;
	if (!s->o.ts_ok || !seq_lt(s->o.tsecr, c->undo->tsval))
		return;
	c->cc = c->undo->cc;
	for (uint32_t i = c->u_head; i != c->u_next; i++)
		c->units[i & (c->units_cap - 1)].lost = false;
	c->lost_bytes = 0;
	tcp_w(c->w)->st.spurious_rtos++;
}

/* Cumulative ACK of new data: free units, RTT, congestion window. */
static void ack_new_data(struct rnic_tcp_conn *c, const struct tcp_seg *s)
{
	struct tcp_stack *ts = tcp_s(c->w->st);
	uint32_t acked = s->ack - c->snd_una;
	uint64_t rtt_tsc = 0;
	bool hole_filled = false;
	/* the retransmission timer is overdue: this worker did not run, and
	 * ACKs waited in its own queue (a paused VM made a 36 s "RTT"). What
	 * was sent before now measures the stall, not the path: no sample
	 * from it, from this ACK or from the ones queued behind it (the
	 * timer is rearmed below, so they cannot tell by themselves) */
	if (tcp_stalled(tcp_rtx_late(c)))
		c->rtt_fence_tsc = c->w->now_tsc;

	if (c->fin_sent && s->ack == c->fin_seq + 1)
		acked--;   /* the FIN takes a sequence number, not a byte */
	c->stats.bytes_acked += acked;
	while (c->u_head != c->u_tail) {
		struct tcp_unit *u = &c->units[c->u_head & (c->units_cap - 1)];
		if (c->u_head == c->u_next)
			break;
		uint32_t end = u->seq + u->len;
		if (seq_le(end, s->ack)) {
			if (!u->retx) {
				/* Karn; and a unit the peer SACKed earlier is
				 * acknowledged cumulatively only once the hole
				 * before it is repaired: that delay is loss
				 * recovery, not the path's RTT. Nor a unit that
				 * was out when the RTO fired: the timeout says
				 * its ACK is late for a reason the RTT does not
				 * measure (a peer that stopped for seconds); the
				 * units sent after it measure the path again */
				if (!u->sacked && !hole_filled &&
				    u->sent_tsc >= c->rtt_fence_tsc)
					rtt_tsc = c->w->now_tsc - u->sent_tsc;
				if (u->sent_tsc > c->rack_tsc)
					c->rack_tsc = u->sent_tsc;
			} else {
				hole_filled = true;   /* what follows waited for it */
				rtt_tsc = 0;
			}
			if (u->sacked)
				c->sacked_bytes -= u->len;
			if (u->lost)
				c->lost_bytes -= u->len;
			c->queued_bytes -= u->len;
			free_unit(u);
			c->u_head++;
			continue;
		}
		if (seq_gt(s->ack, u->seq)) {   /* part of a unit */
			uint32_t cut = s->ack - u->seq;
			u->m = tcp_chain_adj(u->m, cut);   /* a unit may be a chain */
			u->seq += cut;
			u->len -= (uint16_t)cut;
			c->queued_bytes -= cut;
			if (u->lost)
				c->lost_bytes -= cut;
		}
		break;
	}
	c->snd_una = s->ack;
	c->tlp_out = false;
	if (seq_lt(c->snd_nxt, c->snd_una))
		c->snd_nxt = c->snd_una;
	if (rtt_tsc)
		tcp_rtt_sample(&c->rtt, (uint32_t)(rtt_tsc / (rte_get_tsc_hz() / 1000000)),
			       ts->params.rto_min_us);
	c->rto_retries = 0;
	c->wait_tsc = 0;   /* progress: a wait for what is still out starts now */
	c->rtt.backoff = 0;
	c->dupacks = 0;
	if (c->in_recovery) {
		if (seq_ge(s->ack, c->recover)) {
			c->in_recovery = false;      /* full ACK */
			c->cc.cwnd = c->cc.ssthresh;
		} else {
			/* partial ACK (RFC 6582 step 3): the next hole is lost
			 * too and goes now; a segment left the network, so
			 * this keeps the packet balance whatever pipe says
			 * (without SACK, pipe still counts everything above) */
			struct tcp_unit *u = &c->units[c->u_head & (c->units_cap - 1)];
			if (c->u_head != c->u_next && !u->sacked &&
			    (!c->sack_ok || !u->retx)) {   /* SACK may have sent it */
				if (u->lost) {
					u->lost = false;
					c->lost_bytes -= u->len;
				}
				tcp_retransmit_unit(c, u);
			}
		}
	} else {
		c->cc_ops->on_ack(&c->cc, c->mss, acked, tcp_now_us(), c->rtt.srtt_us);
	}
	if (c->snd_una == c->snd_max)
		rnic_timer_cancel(&c->w->timers, &c->rtx_timer);
	else
		tcp_arm_rto(c);
	if (acked && c->ops && c->ops->sent && c->queued_bytes < c->sndbuf)
		c->ops->sent(c, c->ctx);
}

static void enter_time_wait(struct rnic_tcp_conn *c);

/* RFC 9293 3.10.7.4, step "fifth, check the ACK field". @return false when
 * the segment must be dropped. */
static bool ack_field(struct rnic_tcp_conn *c, const struct tcp_seg *s)
{
	/* RFC 5961 5.2: an ACK of data never sent, or older than the
	 * largest window the peer offered, gets a (limited) challenge ACK */
	if (seq_gt(s->ack, c->snd_max) ||
	    seq_lt(s->ack, c->snd_una - c->max_snd_wnd)) {
		challenge_ack(c);
		return false;
	}
	/* nothing in flight, or a closed window: this answers our window
	 * probe (or a retransmission the closed window made one); however
	 * long the window stays closed, such a peer is alive (RFC 9293
	 * 3.8.6.1) and the user timeout must not end it */
	if (c->snd_una == c->snd_max || s->wnd == 0)
		c->wait_tsc = 0;
	/* the window before the ACK (RFC 9293 3.10.7.4): ack_new_data()'s
	 * sent() callback may queue and send at once, and must see this
	 * ACK's window, not the old one slid up to the new SND.UNA, which
	 * overruns a window that stopped moving */
	bool wnd_same = (s->wnd << c->snd_wscale) == c->snd_wnd;
	if (seq_lt(c->snd_wl1, s->seq) ||
	    (c->snd_wl1 == s->seq && seq_le(c->snd_wl2, s->ack))) {
		c->snd_wnd = s->wnd << c->snd_wscale;
		c->max_snd_wnd = c->snd_wnd > c->max_snd_wnd ? c->snd_wnd : c->max_snd_wnd;
		c->snd_wl1 = s->seq;
		c->snd_wl2 = s->ack;
	}
	uint32_t newly = c->sack_ok ? sack_update(c, s) : 0;
	if (seq_gt(s->ack, c->snd_una)) {
		if (c->undo_armed)
			eifel_check(c, s);
		ack_new_data(c, s);
		if (c->in_recovery && newly)
			mark_lost(c);
	} else if (s->ack == c->snd_una && s->len == 0 &&
		   !(s->flags & (RTE_TCP_SYN_FLAG | RTE_TCP_FIN_FLAG)) &&
		   c->snd_una != c->snd_max && wnd_same) {
		c->dupacks++;                          /* RFC 5681 duplicate ACK */
		if (!c->in_recovery &&
		    (c->dupacks >= DUPTHRESH ||
		     (c->sack_ok && mark_lost(c) > 0)))
			enter_recovery(c);
		else if (c->in_recovery && newly)
			mark_lost(c);
	}
	bool fin_acked = c->fin_sent && seq_ge(s->ack, c->fin_seq + 1);
	if (fin_acked) {
		enum tcp_state n = tcp_next_state(c->state, TCP_EV_ACK_OF_FIN);
		if (n != TCP_NSTATES) {
			tcp_set_state(c, n);
			if (n == TCP_CLOSED) {
				tcp_conn_done(c, 0);
				return false;
			}
			if (n == TCP_TIME_WAIT) {
				enter_time_wait(c);
				return true;
			}
			tcp_orphan_check(c);   /* FIN_WAIT_2 without a consumer */
		}
	}
	return true;
}

/* Remember a duplicate range for the next ACK (RFC 2883 D-SACK), so the
 * sender can tell a needless retransmission and undo its reaction. */
static void dsack_note(struct rnic_tcp_conn *c, uint32_t start, uint32_t end)
{
	if (!c->sack_ok || !seq_lt(start, end))
		return;
	c->dsack = true;
	c->dsack_start = start;
	c->dsack_end = end;
}

/* Append chain @p m (@p len bytes) to entry @p o when the chain stays
 * bounded. @return false when it would not. */
static bool ooo_append(struct tcp_ooo *o, struct rte_mbuf *m, uint32_t len)
{
	if (o->m->nb_segs + m->nb_segs > TCP_CHAIN_MAX)
		return false;
	o->tail->next = m;
	o->tail = rte_pktmbuf_lastseg(m);
	o->m->nb_segs = (uint16_t)(o->m->nb_segs + m->nb_segs);
	o->m->pkt_len += m->pkt_len;
	o->len += len;
	return true;
}

/*
 * Copy the @p len bytes of single mbuf @p m into the room behind the last
 * mbuf of entry @p o, when that buffer is ours alone (Linux's
 * tcp_try_coalesce()): a stream of small segments then fills a few
 * buffers instead of holding one each. A full-sized segment does not fit
 * behind another and is chained as before, uncopied. @return true when
 * done (@p m is freed).
 */
static bool ooo_coalesce(struct tcp_ooo *o, struct rte_mbuf *m, uint32_t len)
{
	struct rte_mbuf *t = o->tail;
	if (m->next != NULL || m->data_len != len || !RTE_MBUF_DIRECT(t) ||
	    rte_mbuf_refcnt_read(t) != 1 || rte_pktmbuf_tailroom(t) < len)
		return false;
	memcpy(rte_pktmbuf_mtod_offset(t, uint8_t *, t->data_len),
	       rte_pktmbuf_mtod(m, const void *), len);
	t->data_len = (uint16_t)(t->data_len + len);
	o->m->pkt_len += len;
	o->len += len;
	rte_pktmbuf_free(m);
	return true;
}

/* The mbufs of chain @p m and their true size. */
static void chain_cost(const struct rte_mbuf *m, uint32_t *n, uint32_t *truesize)
{
	*n = 0;
	*truesize = 0;
	for (; m != NULL; m = m->next) {
		(*n)++;
		*truesize += tcp_mbuf_truesize(m);
	}
}

/* Chain @p m joins the queue of @p c: count its mbufs and memory, and
 * remember the worker's biggest holder. */
static void ooo_charge(struct rnic_tcp_conn *c, const struct rte_mbuf *m)
{
	struct tcp_worker *tw = tcp_w(c->w);
	uint32_t n, ts;
	chain_cost(m, &n, &ts);
	c->ooo_mbufs += n;
	c->ooo_truesize += ts;
	tw->st.ooo_mbufs += n;
	if (tw->ooo_hog == NULL || c->ooo_mbufs > tw->ooo_hog->ooo_mbufs)
		tw->ooo_hog = c;
}

/* Entry chain @p m leaves the queue of @p c (before it is freed or
 * delivered). */
static void ooo_uncharge(struct rnic_tcp_conn *c, const struct rte_mbuf *m)
{
	struct tcp_worker *tw = tcp_w(c->w);
	uint32_t n, ts;
	chain_cost(m, &n, &ts);
	c->ooo_mbufs -= n;
	c->ooo_truesize -= ts;
	tw->st.ooo_mbufs -= n;
	if (c->ooo_mbufs == 0 && tw->ooo_hog == c)
		tw->ooo_hog = NULL;
}

/* Whether chain @p m fits the connection's out-of-order caps: at most
 * TCP_OOO_MBUFS_MAX mbufs, and at most rcvbuf of their true size. */
static bool ooo_fits(const struct rnic_tcp_conn *c, const struct rte_mbuf *m)
{
	uint32_t n, ts;
	chain_cost(m, &n, &ts);
	return c->ooo_mbufs + n <= TCP_OOO_MBUFS_MAX && c->ooo_truesize + ts <= c->rcvbuf;
}

static void ooo_remove(struct rnic_tcp_conn *c, unsigned i)
{
	memmove(&c->ooo[i], &c->ooo[i + 1], (c->n_ooo - i - 1) * sizeof(c->ooo[0]));
	c->n_ooo--;
}

/* Free entry @p i of the queue of @p c. */
static void ooo_drop(struct rnic_tcp_conn *c, unsigned i)
{
	ooo_uncharge(c, c->ooo[i].m);
	c->ooo_bytes -= c->ooo[i].len;
	rte_pktmbuf_free(c->ooo[i].m);
	ooo_remove(c, i);
}

/* Give back the out-of-order entries of @p c from the highest sequence
 * down while its port's pool is short (as Linux's tcp_prune_ofo_queue()
 * keeps what is next in line). RFC 2018 allows it: SACKed data may be
 * dropped, the sender resends it after its timeout (sack_reneging). */
static void ooo_prune(struct rnic_tcp_conn *c)
{
	struct tcp_worker *tw = tcp_w(c->w);
	while (c->n_ooo > 0 && rnic_port_pool_short(c->port)) {
		tw->st.ooo_pruned += c->ooo[c->n_ooo - 1].m->nb_segs;
		ooo_drop(c, c->n_ooo - 1);
	}
}

/* The pool of @p c's port is short: the worker's biggest holder of
 * out-of-order mbufs gives back first, then @p c, so that one flow's
 * queue cannot starve every flow's receive. */
static void ooo_relieve(struct rnic_tcp_conn *c)
{
	struct rnic_tcp_conn *hog = tcp_w(c->w)->ooo_hog;
	if (hog != NULL && hog != c && hog->port == c->port && hog->busy == 0)
		ooo_prune(hog);
	ooo_prune(c);
}

/* Refuse out-of-order payload @p m (counted). @return -ENOBUFS. */
static int ooo_refuse(struct rnic_tcp_conn *c, struct rte_mbuf *m)
{
	tcp_w(c->w)->st.ooo_refused++;
	rte_pktmbuf_free(m);
	return -ENOBUFS;
}

/*
 * Keep out-of-order payload. Entries stay sorted, disjoint and merged: the
 * new bytes are trimmed against their neighbours (what is already held
 * wins), entries they cover go, and a range that touches a neighbour is
 * chained onto it, or copied into its last buffer when the bytes fit
 * there. Arrivals in order behind a hole, the common case, are an O(1)
 * append to the last entry. The queue holds at most TCP_OOO_MAX ranges,
 * TCP_OOO_MBUFS_MAX mbufs and rcvbuf of true size; nothing joins it while
 * the port's pool is short (queues are pruned instead). @return 0 when
 * kept, -EEXIST when nothing was new, -ENOBUFS when refused, -ENOMEM when
 * there is no memory for the queue (each counted but -EEXIST).
 */
static int ooo_insert(struct rnic_tcp_conn *c, uint32_t seq, uint32_t len,
		      struct rte_mbuf *m)
{
	if (c->ooo == NULL) {
		c->ooo = tcp_alloc_fails(c) ? NULL :
			 rte_malloc("rnic_tcb_ooo", TCP_OOO_MAX * sizeof(c->ooo[0]), 0);
		if (c->ooo == NULL) {
			tcp_w(c->w)->st.ooo_nomem++;
			rte_pktmbuf_free(m);
			return -ENOMEM;
		}
	}
	if (rnic_port_pool_short(c->port)) {
		ooo_relieve(c);
		return ooo_refuse(c, m);
	}
	unsigned i = c->n_ooo;
	/* i: the first entry that starts after seq */
	if (i > 0 && seq_gt(c->ooo[i - 1].seq, seq)) {
		unsigned lo = 0, hi = i - 1;
		while (lo < hi) {
			unsigned mid = (lo + hi) / 2;
			if (seq_gt(c->ooo[mid].seq, seq))
				hi = mid;
			else
				lo = mid + 1;
		}
		i = lo;
	}
	if (i > 0) {   /* the previous entry already holds the front? */
		uint32_t pend = c->ooo[i - 1].seq + c->ooo[i - 1].len;
		if (seq_ge(pend, seq + len)) {
			rte_pktmbuf_free(m);
			return -EEXIST;
		}
		if (seq_gt(pend, seq)) {
			m = tcp_chain_adj(m, pend - seq);
			len -= pend - seq;
			seq = pend;
		}
	}
	while (i < c->n_ooo && seq_ge(seq + len, c->ooo[i].seq + c->ooo[i].len))
		ooo_drop(c, i);                  /* covered by the new bytes */
	if (i < c->n_ooo && seq_gt(seq + len, c->ooo[i].seq)) {
		len = c->ooo[i].seq - seq;       /* the next entry keeps its bytes */
		tcp_chain_trim(m, len);
	}
	if (i > 0 && c->ooo[i - 1].seq + c->ooo[i - 1].len == seq) {
		struct tcp_ooo *prev = &c->ooo[i - 1];
		bool copied = ooo_coalesce(prev, m, len);
		if (!copied && !ooo_fits(c, m))
			return ooo_refuse(c, m);
		if (copied || ooo_append(prev, m, len)) {
			if (!copied)
				ooo_charge(c, m);
			c->ooo_bytes += len;
			/* the new bytes may close the gap to the next entry */
			if (i < c->n_ooo && seq + len == c->ooo[i].seq &&
			    ooo_append(prev, c->ooo[i].m, c->ooo[i].len))
				ooo_remove(c, i);
			return 0;
		}
	}
	if (c->n_ooo == TCP_OOO_MAX || !ooo_fits(c, m))
		return ooo_refuse(c, m);
	memmove(&c->ooo[i + 1], &c->ooo[i], (c->n_ooo - i) * sizeof(c->ooo[0]));
	c->ooo[i] = (struct tcp_ooo){ seq, len, m, rte_pktmbuf_lastseg(m) };
	c->n_ooo++;
	c->ooo_bytes += len;
	ooo_charge(c, m);
	if (i + 1 < c->n_ooo && seq + len == c->ooo[i + 1].seq &&
	    ooo_append(&c->ooo[i], c->ooo[i + 1].m, c->ooo[i + 1].len))
		ooo_remove(c, i + 1);
	return 0;
}

/* Deliver queued out-of-order data that rcv_nxt has reached. */
void tcp_ooo_pull(struct rnic_tcp_conn *c)
{
	while (c->n_ooo && seq_le(c->ooo[0].seq, c->rcv_nxt) &&
	       !tcp_hold_full(c, c->ooo[0].m->nb_segs)) {
		struct tcp_ooo o = c->ooo[0];
		ooo_uncharge(c, o.m);
		memmove(&c->ooo[0], &c->ooo[1], (c->n_ooo - 1) * sizeof(c->ooo[0]));
		c->n_ooo--;
		c->ooo_bytes -= o.len;
		uint32_t end = o.seq + o.len;
		if (seq_le(end, c->rcv_nxt)) {
			rte_pktmbuf_free(o.m);
			continue;
		}
		uint32_t skip = c->rcv_nxt - o.seq;
		o.m = tcp_chain_adj(o.m, skip);
		c->rcv_nxt = end;
		tcp_deliver(c, o.m, o.len - skip);
		if (c->state == TCP_CLOSED)
			return;
	}
}

void tcp_ooo_purge(struct rnic_tcp_conn *c)
{
	while (c->n_ooo > 0)
		ooo_drop(c, c->n_ooo - 1);
	struct tcp_worker *tw = tcp_w(c->w);
	if (tw->ooo_hog == c)
		tw->ooo_hog = NULL;
}
static void process_fin(struct rnic_tcp_conn *c)
{
	if (!c->fin_rcvd || c->fin_rcvd_seq != c->rcv_nxt)
		return;
	c->fin_rcvd = false;
	c->rcv_nxt++;
	c->ack_now = true;
	enum tcp_state n = tcp_next_state(c->state, TCP_EV_FIN);
	if (n == TCP_NSTATES)
		return;
	tcp_set_state(c, n);
	if (!c->eof_sent && c->ops && c->ops->eof && !c->hold) {
		c->eof_sent = true;
		c->ops->eof(c, c->ctx);
	}
}

/* Payload and FIN of an acceptable segment (steps six to eight). */
static void data_and_fin(struct rnic_tcp_conn *c, const struct tcp_seg *s,
			 struct rte_mbuf *m)
{
	struct tcp_stack *ts = tcp_s(c->w->st);
	uint32_t seq = s->seq, len = s->len;
	bool can_rx = c->state == TCP_ESTABLISHED || c->state == TCP_FIN_WAIT_1 ||
		      c->state == TCP_FIN_WAIT_2;

	if (len && can_rx) {
		if (seq_lt(seq, c->rcv_nxt)) {   /* drop what we already have */
			uint32_t cut = c->rcv_nxt - seq;
			dsack_note(c, seq, c->rcv_nxt);
			m = tcp_chain_adj(m, cut);
			seq += cut;
			len -= cut;
		}
		/* the buffer's space, or the edge the peer was told if further */
		uint32_t wnd_end = seq_max(c->rcv_nxt + tcp_rcv_window(c), c->rcv_wedge);
		if (seq_gt(seq + len, wnd_end) && seq_lt(seq, wnd_end)) {
			len = wnd_end - seq;              /* beyond the window */
			tcp_chain_trim(m, len);
		}
		c->stats.bytes_received += len;
		if (seq == c->rcv_nxt && seq_lt(seq, wnd_end) &&
		    !tcp_hold_full(c, m->nb_segs)) {
			c->rcv_nxt += len;
			tcp_deliver(c, m, len);
			m = NULL;
			if (c->state == TCP_CLOSED)
				return;
			tcp_ooo_pull(c);
			if (c->state == TCP_CLOSED)
				return;
			c->unacked_segs++;
			if (c->n_ooo || c->quickacks || c->unacked_segs >= 2)
				c->ack_now = true;
			if (c->quickacks)
				c->quickacks--;
		} else if (seq_gt(seq, c->rcv_nxt) && seq_lt(seq, wnd_end)) {
			/* refusals and a lack of memory are counted there */
			if (ooo_insert(c, seq, len, m) == -EEXIST) {
				tcp_w(c->w)->st.dup_segs++;
				dsack_note(c, seq, seq + len);
			}
			c->ooo_recent = seq;
			m = NULL;
			c->ack_now = true;   /* duplicate ACK carrying SACK */
		} else if (seq == c->rcv_nxt && seq_lt(seq, wnd_end)) {
			tcp_w(c->w)->st.hold_refused++;   /* tcp_hold_full() */
			c->ack_now = true;
		} else {
			tcp_w(c->w)->st.dup_segs++;
			c->ack_now = true;
		}
	}
	rte_pktmbuf_free(m);
	if (s->flags & RTE_TCP_FIN_FLAG) {
		if (c->state == TCP_TIME_WAIT) {   /* retransmitted FIN: re-ACK */
			c->ack_now = true;
			rnic_timer_arm(&c->w->timers, &c->misc_timer, c->w->now_tsc,
				       (uint64_t)ts->params.time_wait_ms * 1000);
		} else if (can_rx || c->state == TCP_SYN_RECEIVED) {
			c->fin_rcvd = true;
			c->fin_rcvd_seq = s->seq + s->len;
		}
	}
	process_fin(c);
	enter_time_wait(c);
}

/* TIME_WAIT: the application is done; the TCB stays for 2 MSL. */
static void enter_time_wait(struct rnic_tcp_conn *c)
{
	struct tcp_stack *ts = tcp_s(c->w->st);
	/* once: the misc timer may be running as the keepalive timer */
	if (c->state == TCP_TIME_WAIT && !c->tw_armed) {
		c->tw_armed = true;
		rnic_timer_cancel(&c->w->timers, &c->rtx_timer);
		rnic_timer_cancel(&c->w->timers, &c->dack_timer);
		rnic_timer_arm(&c->w->timers, &c->misc_timer, c->w->now_tsc,
			       (uint64_t)ts->params.time_wait_ms * 1000);
		if (!c->notified_closed)
			tcp_conn_done(c, 0);
	}
}

/* RFC 9293 acceptability test against the window we advertised. */
static bool seg_acceptable(const struct rnic_tcp_conn *c, const struct tcp_seg *s)
{
	uint32_t seglen = s->len + ((s->flags & RTE_TCP_SYN_FLAG) ? 1 : 0) +
			  ((s->flags & RTE_TCP_FIN_FLAG) ? 1 : 0);
	uint32_t wnd = c->rcv_wedge - c->rcv_nxt;
	if (seq_lt(c->rcv_wedge, c->rcv_nxt))
		wnd = 0;
	if (seglen == 0)
		return wnd == 0 ? s->seq == c->rcv_nxt :
		       seq_in(s->seq, c->rcv_nxt, c->rcv_nxt + wnd);
	if (wnd == 0)
		return false;
	return seq_in(s->seq, c->rcv_nxt, c->rcv_nxt + wnd) ||
	       seq_in(s->seq + seglen - 1, c->rcv_nxt, c->rcv_nxt + wnd);
}

static void syn_sent_input(struct rnic_tcp_conn *c, const struct tcp_seg *s,
			   struct rte_mbuf *m)
{
	bool ack = s->flags & RTE_TCP_ACK_FLAG;
	rte_pktmbuf_free(m);
	if (ack && (seq_le(s->ack, c->iss) || seq_gt(s->ack, c->snd_max))) {
		/* RFC 9293 3.10.7.3: reset the sender, keep our state (a
		 * flood of forged SYN-ACKs changes nothing, holds nothing) */
		tcp_w(c->w)->st.syn_sent_bad_ack++;
		if (!(s->flags & RTE_TCP_RST_FLAG))
			tcp_send_ctl(c->w, c->port, &c->key, s->ack, 0,
				     RTE_TCP_RST_FLAG, NULL, 0);
		return;
	}
	if (s->flags & RTE_TCP_RST_FLAG) {
		if (ack) {
			tcp_w(c->w)->st.resets_in++;
			tcp_conn_done(c, -ECONNREFUSED);
		}
		return;
	}
	if (!(s->flags & RTE_TCP_SYN_FLAG))
		return;
	take_syn(c, s);
	if (ack && c->syn_retries == 0 &&   /* Karn: only an unrepeated SYN */
	    !tcp_stalled(tcp_rtx_late(c))) {
		struct tcp_stack *ts = tcp_s(c->w->st);
		tcp_rtt_sample(&c->rtt, (uint32_t)rnic_tsc_to_us(c->w->now_tsc - c->syn_tsc),
			       ts->params.rto_min_us);
	}
	if (ack) {
		c->snd_una = s->ack;
		c->snd_wl2 = s->ack;
		rnic_timer_cancel(&c->w->timers, &c->rtx_timer);
		tcp_set_state(c, TCP_ESTABLISHED);
		tcp_send_ack(c);
		tcp_established(c);
	} else {   /* simultaneous open */
		tcp_set_state(c, TCP_SYN_RECEIVED);
		tcp_send_syn(c, true);
	}
}

/*
 * The peer repeats its SYN-ACK after our handshake completed, and has
 * acknowledged nothing of ours beyond the SYN: it never got our final
 * ACK. A listener with SYN cookies (rnic's, or Linux's under a flood) then
 * holds no state and recovers our ISN from the sequence number of the ACK
 * it gets (seq - 1), so the answer must repeat the handshake's ACK from
 * ISN + 1, not come from snd_nxt: with data of ours sent (and lost, or
 * still on its way) an ACK from snd_nxt fails the cookie check, and the
 * listener resets the connection.
 */
static bool handshake_ack_lost(const struct rnic_tcp_conn *c, const struct tcp_seg *s)
{
	return (s->flags & (RTE_TCP_SYN_FLAG | RTE_TCP_ACK_FLAG | RTE_TCP_RST_FLAG)) ==
	       (RTE_TCP_SYN_FLAG | RTE_TCP_ACK_FLAG) &&
	       s->seq == c->irs && s->ack == c->iss + 1 && c->snd_una == c->iss + 1;
}

/* A segment for an existing connection. Consumes @p m (payload only). */
static void tcp_segment(struct rnic_tcp_conn *c, const struct tcp_seg *s,
			struct rte_mbuf *m)
{
	struct tcp_worker *tw = tcp_w(c->w);

	c->last_rx_tsc = c->w->now_tsc;
	c->probes = 0;
	if (c->state == TCP_SYN_SENT) {
		syn_sent_input(c, s, m);
		return;
	}
	if (c->state == TCP_SYN_RECEIVED &&
	    (s->flags & (RTE_TCP_SYN_FLAG | RTE_TCP_ACK_FLAG | RTE_TCP_RST_FLAG)) ==
	    (RTE_TCP_SYN_FLAG | RTE_TCP_ACK_FLAG) &&
	    s->seq + 1 == c->rcv_nxt && s->ack == c->snd_max && s->len == 0) {
		/* simultaneous open (RFC 9293 figure 8, line 6): the peer's
		 * SYN-ACK repeats its SYN and acknowledges ours. Its SYN is old
		 * news, so the acceptability test would drop it and leave us in
		 * SYN_RECEIVED until a retransmission; take it as the ACK. */
		struct tcp_seg a = *s;
		a.flags &= (uint8_t)~RTE_TCP_SYN_FLAG;
		a.seq = c->rcv_nxt;
		a.wnd = s->wnd >> c->snd_wscale;   /* a SYN's window is unscaled */
		tcp_segment(c, &a, m);
		return;
	}
	/* RFC 7323 3.2: once timestamps are in use, every segment but a RST
	 * carries one; one without is dropped silently (ts_missing), before
	 * it can move any state */
	if (c->ts_ok && !s->o.ts_ok && !(s->flags & RTE_TCP_RST_FLAG)) {
		tw->st.ts_missing++;
		rte_pktmbuf_free(m);
		return;
	}
	/* PAWS (RFC 7323 5.3), tolerating a TSval TCP_PAWS_WINDOW below
	 * TS.Recent as Linux does: a peer whose clock ticks between two
	 * segments it sends back to back, or a reordered pair, is no
	 * wrapped-sequence threat */
	if (c->ts_ok && s->o.ts_ok && !(s->flags & RTE_TCP_RST_FLAG) &&
	    (int32_t)(c->ts_recent - s->o.tsval) > TCP_PAWS_WINDOW) {
		tw->st.paws_drops++;
		rte_pktmbuf_free(m);
		oow_ack(c, s);
		return;
	}
	if (!seg_acceptable(c, s)) {
		tw->st.out_of_window++;
		if (s->len && seq_le(s->seq + s->len, c->rcv_nxt) &&
		    !(s->flags & RTE_TCP_RST_FLAG))
			dsack_note(c, s->seq, s->seq + s->len);   /* all old */
		rte_pktmbuf_free(m);
		if (handshake_ack_lost(c, s)) {
			if (oow_ack_allowed(c)) {
				tw->st.handshake_acks++;
				tcp_send_ack_seq(c, c->iss + 1);
			} else {
				tw->st.oow_acks_limited++;
			}
		} else if (!(s->flags & RTE_TCP_RST_FLAG)) {
			oow_ack(c, s);
		}
		return;
	}
	if (s->flags & RTE_TCP_RST_FLAG) {   /* RFC 5961 section 3 */
		rte_pktmbuf_free(m);
		if (s->seq == c->rcv_nxt) {
			tw->st.resets_in++;
			tcp_conn_done(c, -ECONNRESET);
		} else {
			challenge_ack(c);
		}
		return;
	}
	if (s->flags & RTE_TCP_SYN_FLAG) {   /* RFC 5961 section 4 */
		rte_pktmbuf_free(m);
		challenge_ack(c);
		return;
	}
	if (!(s->flags & RTE_TCP_ACK_FLAG)) {
		rte_pktmbuf_free(m);
		return;
	}
	/* timestamps: remember the peer's (RFC 7323 4.3) */
	if (c->ts_ok && s->o.ts_ok && seq_le(s->seq, c->rcv_nxt) &&
	    seq_ge(s->o.tsval, c->ts_recent))   /* never back (PAWS window) */
		c->ts_recent = s->o.tsval;
	if (c->state == TCP_SYN_RECEIVED) {
		if (!seq_in(s->ack, c->snd_una + 1, c->snd_max + 1)) {
			rte_pktmbuf_free(m);
			tcp_send_ctl(c->w, c->port, &c->key, s->ack, 0,
				     RTE_TCP_RST_FLAG, NULL, 0);
			return;
		}
		c->snd_una = s->ack;
		c->snd_wnd = s->wnd << c->snd_wscale;
		c->snd_wl1 = s->seq;
		c->snd_wl2 = s->ack;
		rnic_timer_cancel(&c->w->timers, &c->rtx_timer);
		tcp_set_state(c, TCP_ESTABLISHED);
		tcp_established(c);
		if (c->state == TCP_CLOSED) {
			rte_pktmbuf_free(m);
			return;
		}
	}
	if (!ack_field(c, s)) {
		rte_pktmbuf_free(m);
		return;
	}
	data_and_fin(c, s, m);
	if (c->state == TCP_CLOSED)
		return;
	tcp_output(c);
	if (c->ack_now)
		tcp_send_ack(c);
	else if (c->unacked_segs && !rnic_timer_pending(&c->dack_timer))
		rnic_timer_arm(&c->w->timers, &c->dack_timer, c->w->now_tsc,
			       tcp_s(c->w->st)->params.delack_us);
}

/* The L4 handler: validate, find the connection or the listener. */
void tcp_input(struct rnic_worker *w, struct rnic_port *p, struct rte_mbuf *m)
{
	struct tcp_worker *tw = tcp_w(w);
	const uint8_t *ip = rte_pktmbuf_mtod_offset(m, const uint8_t *, m->l2_len);
	uint32_t l4len = tcp_seg_len(m);
	struct tcp_seg s;
	struct tcp_key k;

	tw->st.segs_in++;
	if (l4len < sizeof(struct rte_tcp_hdr) ||
	    rte_pktmbuf_pkt_len(m) < m->l2_len + m->l3_len + l4len ||
	    rte_pktmbuf_data_len(m) < m->l2_len + m->l3_len + sizeof(struct rte_tcp_hdr)) {
		tw->st.bad_hdr++;
		rte_pktmbuf_free(m);
		return;
	}
	const struct rte_tcp_hdr *th = (const struct rte_tcp_hdr *)(ip + m->l3_len);
	uint32_t hl = (th->data_off >> 4) * 4u;
	/* the header must be contiguous; the payload may be a chain */
	if (hl < sizeof(*th) || hl > l4len ||
	    rte_pktmbuf_data_len(m) < m->l2_len + m->l3_len + hl) {
		tw->st.bad_hdr++;
		rte_pktmbuf_free(m);
		return;
	}
	tcp_key_of(m, th, &k);
	if ((m->ol_flags & RTE_MBUF_F_RX_L4_CKSUM_MASK) != RTE_MBUF_F_RX_L4_CKSUM_GOOD &&
	    tcp_l4_sum_key(m, m->l2_len + m->l3_len, l4len, &k) != 0xffff) {
		tw->st.bad_csum++;
		rte_pktmbuf_free(m);
		return;
	}
	s.th = th;
	s.flags = th->tcp_flags;
	if (tcp_opts_parse((const uint8_t *)(th + 1), hl - sizeof(*th),
			   s.flags & RTE_TCP_SYN_FLAG, &s.o) != 0) {
		tw->st.bad_opts++;
		rte_pktmbuf_free(m);
		return;
	}
	s.seq = rte_be_to_cpu_32(th->sent_seq);
	s.ack = rte_be_to_cpu_32(th->recv_ack);
	s.wnd = rte_be_to_cpu_16(th->rx_win);
	s.len = l4len - hl;

	struct rnic_tcp_conn *c = tcp_lookup(w, &k);
	if (c == NULL) {
		struct tcp_listener *l = tcp_find_listener(w->st, rte_be_to_cpu_16(k.lport));
		uint8_t f = s.flags & (RTE_TCP_SYN_FLAG | RTE_TCP_ACK_FLAG | RTE_TCP_RST_FLAG);
		if (l != NULL && f == RTE_TCP_SYN_FLAG) {
			syn_stage_syn(w, p, &k, &s, m);
			return;
		}
		if (l != NULL && f == RTE_TCP_ACK_FLAG) {
			bool rst;
			c = syn_stage_ack(w, p, &k, &s, l, &rst);
			if (c == NULL) {
				/* not a valid cookie: RFC 9293 says reset */
				if (rst)
					tcp_send_rst_for(w, p, m);
				else
					rte_pktmbuf_free(m);
				return;
			}
			/* the ACK may carry data: process it as established
			 * (syn_stage_ack took the reference put below) */
			m = tcp_chain_adj(m, m->l2_len + m->l3_len + hl);
			tcp_segment(c, &s, m);
			tcp_conn_put(c);
			return;
		} else {
			if (l == NULL)
				tw->st.no_listener++;
			tcp_send_rst_for(w, p, m);
			return;
		}
	}
	m = tcp_chain_adj(m, m->l2_len + m->l3_len + hl);
	c->busy++;   /* callbacks may close or abort it under our feet */
	tcp_segment(c, &s, m);
	tcp_conn_put(c);
}
