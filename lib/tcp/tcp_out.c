/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * TCP output: a segment is a header mbuf (headroom for IPv4 and Ethernet)
 * with the queued payload unit lent to it: up to TCP_COPY_MAX bytes are
 * copied behind the header (one mbuf on the wire), a larger unit is chained
 * as a clone (no copy). The unit stays queued for retransmission either way.
 */
#include <errno.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_ip.h>
#include <rte_malloc.h>
#include <rte_tcp.h>

#include "net/net.h"
#include "port/port.h"
#include "tcp/tcp_internal.h"

#define TCP_HDR_MAX (20 + 40)
/* Payloads up to this size are copied behind the header instead of being
 * chained (an MSS on a 1500-byte MTU). */
#define TCP_COPY_MAX 1500u

uint64_t tcp_now_us(void)
{
	return rte_rdtsc() / (rte_get_tsc_hz() / 1000000);
}

/* Timestamp clock: 1 ms per tick (RFC 7323 section 5.4 recommends 1 ms to
 * 1 s), with a per-connection random offset. */
uint32_t tcp_ts_now(const struct rnic_tcp_conn *c)
{
	return tcp_ts_clock(c->w) + c->ts_offset;
}

/* The receive buffer left: out-of-order data counts by the memory its
 * mbufs hold (their true size), not by its bytes, so many small segments
 * shrink the window as the memory they take (issue 27). */
uint32_t tcp_rcv_window(const struct rnic_tcp_conn *c)
{
	uint32_t used = c->ooo_truesize + c->held_bytes;
	return c->rcvbuf > used ? c->rcvbuf - used : 0;
}

/* Drop @p n bytes from the front of a payload chain. */
struct rte_mbuf *tcp_chain_adj(struct rte_mbuf *m, uint32_t n)
{
	while (n >= m->data_len && m->next != NULL) {
		struct rte_mbuf *nx = m->next;
		n -= m->data_len;
		nx->nb_segs = (uint16_t)(m->nb_segs - 1);
		nx->pkt_len = m->pkt_len - m->data_len;
		m->next = NULL;
		rte_pktmbuf_free_seg(m);
		m = nx;
	}
	if (n)
		rte_pktmbuf_adj(m, (uint16_t)n);
	return m;
}

/* Keep the first @p keep bytes of a payload chain. */
void tcp_chain_trim(struct rte_mbuf *m, uint32_t keep)
{
	struct rte_mbuf *s = m;
	uint32_t acc = 0;
	while (s != NULL && acc + s->data_len < keep) {
		acc += s->data_len;
		s = s->next;
	}
	if (s == NULL)
		return;
	s->data_len = (uint16_t)(keep - acc);
	rte_pktmbuf_free(s->next);
	s->next = NULL;
	m->pkt_len = keep;
	uint16_t n = 0;
	for (struct rte_mbuf *x = m; x; x = x->next)
		n++;
	m->nb_segs = n;
}

/* TCP checksum over the pseudo header and the whole chain. */
static uint16_t tcp_cksum(const struct tcp_key *k, struct rte_mbuf *m, uint32_t len)
{
	/* chain-safe (payload pieces may have odd lengths, which DPDK
	 * 22.11's rte_raw_cksum_mbuf() gets wrong) and fast (tcp_csum.c) */
	return (uint16_t)~tcp_l4_sum_key(m, 0, len, k);
}

/* Build and send one segment: header fields from @p c or explicit values,
 * into @p h (a blank mbuf; NULL allocates one), with the payload of the
 * queued @p unit (lent, it stays queued for retransmission; NULL: none).
 * With @p l2_dst it goes straight to that Ethernet address (a stateless
 * reply) instead of being routed and resolved. */
static int tcp_xmit_in(struct rnic_worker *w, struct rnic_port *p,
		       const struct tcp_key *k, uint32_t seq, uint32_t ack,
		       uint8_t flags, const struct tcp_opts *o, bool syn_opts,
		       uint16_t wnd, struct rte_mbuf *unit, struct rte_mbuf *h,
		       const struct rte_ether_addr *l2_dst)
{
	if (h == NULL)
		h = rte_pktmbuf_alloc(p->pool);
	if (h == NULL) {
		w->drops[RNIC_DROP_NO_MBUF]++;
		return -ENOBUFS;
	}
	uint8_t optbuf[40];
	size_t olen = o ? tcp_opts_build(optbuf, o, syn_opts) : 0;
	struct rte_tcp_hdr *th = (struct rte_tcp_hdr *)rte_pktmbuf_append(h,
				(uint16_t)(sizeof(*th) + olen));
	th->src_port = k->lport;
	th->dst_port = k->rport;
	th->sent_seq = rte_cpu_to_be_32(seq);
	th->recv_ack = rte_cpu_to_be_32(ack);
	th->data_off = (uint8_t)(((sizeof(*th) + olen) / 4) << 4);
	th->tcp_flags = flags;
	th->rx_win = rte_cpu_to_be_16(wnd);
	th->cksum = 0;
	th->tcp_urp = 0;
	memcpy(th + 1, optbuf, olen);
	uint32_t len = (uint32_t)(sizeof(*th) + olen);
	uint32_t plen = unit != NULL ? rte_pktmbuf_pkt_len(unit) : 0;
	if (unit != NULL && plen <= TCP_COPY_MAX && plen <= rte_pktmbuf_tailroom(h)) {
		/* one mbuf on the wire: the payload copied behind the header
		 * (one allocation and one free fewer per segment, and no
		 * reference from the receiver's side to our queued unit) */
		uint8_t *d = (uint8_t *)rte_pktmbuf_append(h, (uint16_t)plen);
		for (const struct rte_mbuf *m = unit; m != NULL; m = m->next) {
			memcpy(d, rte_pktmbuf_mtod(m, const void *), m->data_len);
			d += m->data_len;
		}
		len += plen;
	} else if (unit != NULL) {
		len += plen;
		/* the wire gets a clone of the unit (indirect mbufs, no copy) */
		struct rte_mbuf *pl = rte_pktmbuf_clone(unit, p->pool);
		if (pl == NULL || rte_pktmbuf_chain(h, pl) != 0) {
			rte_pktmbuf_free(h);
			rte_pktmbuf_free(pl);
			w->drops[RNIC_DROP_NO_MBUF]++;
			return -ENOBUFS;
		}
	}
	/* an in-process ring: nothing can corrupt the frame on the way, so
	 * the checksum is left to the link (lib/port writes it when a
	 * capture or the fault injector needs it). h carries no stale TX
	 * flag: it is fresh, or a received frame, whose port cleared it. */
	if (p->csum_link)
		h->ol_flags |= RTE_MBUF_F_TX_TCP_CKSUM;
	else
		th->cksum = tcp_cksum(k, h, len);
	tcp_w(w)->st.segs_out++;
	if (!tcp_key_v4(k)) {
		if (l2_dst != NULL)
			return rnic_net_reply_ipv6(w, p, h, k->laddr, k->raddr, IPPROTO_TCP,
						   l2_dst);
		return rnic_net_output_ipv6(w, p, h, k->laddr, k->raddr, IPPROTO_TCP, 0);
	}
	if (l2_dst != NULL)
		return rnic_net_reply_ipv4(w, p, h, rte_be_to_cpu_32(tcp_key_l4(k)),
					   rte_be_to_cpu_32(tcp_key_r4(k)), IPPROTO_TCP, l2_dst);
	/* from the connection's address, which is not the port's own once
	 * the port took it over from a failed one (port failover) */
	w->tx_src_ip = rte_be_to_cpu_32(tcp_key_l4(k));
	int rc = rnic_net_output_ipv4(w, p, h, rte_be_to_cpu_32(tcp_key_r4(k)), IPPROTO_TCP);
	w->tx_src_ip = 0;
	return rc;
}

/* A segment without payload of a connection, routed. */
static int tcp_xmit(struct rnic_worker *w, struct rnic_port *p,
		    const struct tcp_key *k, uint32_t seq, uint32_t ack,
		    uint8_t flags, const struct tcp_opts *o, bool syn_opts, uint16_t wnd)
{
	return tcp_xmit_in(w, p, k, seq, ack, flags, o, syn_opts, wnd, NULL, NULL, NULL);
}

/* Options for a non-SYN segment of @p c (timestamps, SACK blocks). */
static void tcp_data_opts(struct rnic_tcp_conn *c, struct tcp_opts *o)
{
	memset(o, 0, sizeof(*o));
	if (c->ts_ok) {
		o->ts_ok = true;
		o->tsval = tcp_ts_now(c);
		o->tsecr = c->ts_recent;
	}
	if (!c->sack_ok)
		return;
	if (c->dsack) {
		/* RFC 2883: a duplicate arrived; its range goes first, once */
		o->sack[o->n_sack++] = (struct tcp_sack_block){ c->dsack_start, c->dsack_end };
		c->dsack = false;
	}
	/* RFC 2018 section 4: the range holding the most recently received
	 * segment next (so a sender learns of every range over successive
	 * ACKs), then the lowest others; ranges are merged entries */
	struct tcp_sack_block recent = { 0, 0 }, rest[TCP_MAX_SACK_BLOCKS];
	unsigned i = 0, n = 0;
	bool have_recent = false;
	while (i < c->n_ooo && !(have_recent && n == TCP_MAX_SACK_BLOCKS - 1)) {
		uint32_t s = c->ooo[i].seq, e = s + c->ooo[i].len;
		i++;
		while (i < c->n_ooo && seq_le(c->ooo[i].seq, e)) {
			e = seq_max(e, c->ooo[i].seq + c->ooo[i].len);
			i++;
		}
		if (!have_recent && seq_in(c->ooo_recent, s, e)) {
			recent = (struct tcp_sack_block){ s, e };
			have_recent = true;
		} else if (n < TCP_MAX_SACK_BLOCKS - 1) {
			rest[n++] = (struct tcp_sack_block){ s, e };
		}
	}
	if (have_recent)
		o->sack[o->n_sack++] = recent;
	for (unsigned k = 0; k < n && o->n_sack < TCP_MAX_SACK_BLOCKS; k++)
		o->sack[o->n_sack++] = rest[k];
}

/*
 * The window field to send, and the right edge it promises (rcv_adv).
 * The edge never moves left (RFC 9293 3.8.6.2.2) and moves right only by at
 * least min(rcvbuf / 2, MSS) (receiver SWS avoidance). A standing promise
 * is advertised rounded up to the scale unit, but rcv_adv keeps the exact
 * edge: re-rounding it at every ACK would ratchet the window past the
 * buffer (RFC 7323 appendix F).
 */
uint16_t tcp_wnd_field(struct rnic_tcp_conn *c)
{
	uint8_t ws = c->rcv_wscale;
	uint32_t wnd = tcp_rcv_window(c);
	if (wnd > (65535u << ws))
		wnd = 65535u << ws;
	wnd = wnd >> ws << ws;
	uint32_t edge = c->rcv_nxt + wnd;
	uint32_t step = c->rcvbuf / 2 < c->mss ? c->rcvbuf / 2 : c->mss;
	if (seq_lt(edge, c->rcv_adv + step)) {
		uint32_t promised = seq_gt(c->rcv_adv, c->rcv_nxt) ? c->rcv_adv - c->rcv_nxt : 0;
		uint32_t scaled = (promised + (1u << ws) - 1) >> ws;
		if (scaled > 65535)
			scaled = 65535;
		c->rcv_wedge = seq_max(c->rcv_wedge, c->rcv_nxt + (scaled << ws));
		return (uint16_t)scaled;
	}
	c->rcv_adv = edge;
	c->rcv_wedge = seq_max(c->rcv_wedge, edge);
	return (uint16_t)(wnd >> ws);
}

void tcp_send_ack_seq(struct rnic_tcp_conn *c, uint32_t seq)
{
	struct tcp_opts o;
	tcp_data_opts(c, &o);
	c->unacked_segs = 0;
	c->ack_now = false;
	rnic_timer_cancel(&c->w->timers, &c->dack_timer);
	tcp_xmit(c->w, c->port, &c->key, seq, c->rcv_nxt, RTE_TCP_ACK_FLAG,
		 &o, false, tcp_wnd_field(c));
}

void tcp_send_ack(struct rnic_tcp_conn *c)
{
	tcp_send_ack_seq(c, c->snd_nxt);
}

void tcp_send_bare(struct rnic_tcp_conn *c, uint32_t seq, uint8_t flags)
{
	struct tcp_opts o;
	tcp_data_opts(c, &o);
	tcp_xmit(c->w, c->port, &c->key, seq, c->rcv_nxt, flags, &o, false,
		 tcp_wnd_field(c));
}

void tcp_send_syn(struct rnic_tcp_conn *c, bool ack)
{
	struct tcp_stack *ts = tcp_s(c->w->st);
	struct tcp_opts o = {
		.mss_ok = true, .mss = tcp_mss_for(c->port, &c->key),
		.sack_ok = ts->params.sack, .ts_ok = ts->params.timestamps,
		.ws_ok = true, .ws = c->rcv_wscale,
		.tsval = tcp_ts_now(c), .tsecr = c->ts_recent,
	};
	if (ack) {   /* SYN-ACK: only what the peer offered */
		o.sack_ok = c->sack_ok;
		o.ts_ok = c->ts_ok;
		o.ws_ok = c->rcv_wscale != 0;
	}
	uint32_t wnd = tcp_rcv_window(c);
	if (c->syn_retries == 0)
		c->syn_tsc = c->w->now_tsc;
	tcp_xmit(c->w, c->port, &c->key, c->iss, ack ? c->rcv_nxt : 0,
		 RTE_TCP_SYN_FLAG | (ack ? RTE_TCP_ACK_FLAG : 0), &o, true,
		 (uint16_t)(wnd > 65535 ? 65535 : wnd));
	c->snd_nxt = c->iss + 1;
	c->snd_max = seq_max(c->snd_max, c->snd_nxt);
}

/* A control segment (SYN and options, RST, bare ACK) of the window @p wnd,
 * clamped to the unscaled field. */
static void ctl_xmit(struct rnic_worker *w, struct rnic_port *p, const struct tcp_key *k,
		     uint32_t seq, uint32_t ack, uint8_t flags, const struct tcp_opts *o,
		     uint32_t wnd, struct rte_mbuf *h, const struct rte_ether_addr *l2_dst)
{
	tcp_xmit_in(w, p, k, seq, ack, flags, o, flags & RTE_TCP_SYN_FLAG,
		    (uint16_t)(wnd > 65535 ? 65535 : wnd), NULL, h, l2_dst);
}

void tcp_send_ctl(struct rnic_worker *w, struct rnic_port *p,
		  const struct tcp_key *k, uint32_t seq, uint32_t ack,
		  uint8_t flags, const struct tcp_opts *o, uint32_t wnd)
{
	ctl_xmit(w, p, k, seq, ack, flags, o, wnd, NULL, NULL);
}

void tcp_reply_ctl(struct rnic_worker *w, struct rnic_port *p, struct rte_mbuf *in,
		   const struct tcp_key *k, uint32_t seq, uint32_t ack, uint8_t flags,
		   const struct tcp_opts *o, uint32_t wnd)
{
	struct rte_ether_addr to;
	bool l2 = in->l2_len >= sizeof(struct rte_ether_hdr);
	if (l2)
		to = rte_pktmbuf_mtod(in, const struct rte_ether_hdr *)->src_addr;
	struct rte_mbuf *h = NULL;
	/* the segment's own buffer carries the answer when nobody else holds
	 * it and it has room for the headers: no allocation and no free per
	 * reply */
	if (RTE_MBUF_DIRECT(in) && in->nb_segs == 1 && rte_mbuf_refcnt_read(in) == 1 &&
	    in->buf_len >= RTE_PKTMBUF_HEADROOM + 128) {
		rte_pktmbuf_reset(in);
		h = in;
	} else {
		rte_pktmbuf_free(in);
	}
	ctl_xmit(w, p, k, seq, ack, flags, o, wnd, h, l2 ? &to : NULL);
}

/* RFC 9293 3.10.7.1: the reset for a segment that has no connection, sent
 * back the way it came (a stateless reply). Consumes @p m. */
void tcp_send_rst_for(struct rnic_worker *w, struct rnic_port *p, struct rte_mbuf *m)
{
	const struct rte_tcp_hdr *th = rte_pktmbuf_mtod_offset(m, const struct rte_tcp_hdr *,
							       m->l2_len + m->l3_len);
	if (th->tcp_flags & RTE_TCP_RST_FLAG) {
		rte_pktmbuf_free(m);   /* never answer a reset */
		return;
	}
	struct tcp_key k;
	tcp_key_of(m, th, &k);
	uint32_t hl = (th->data_off >> 4) * 4u;
	uint32_t len = tcp_seg_len(m) - hl;
	len += (th->tcp_flags & RTE_TCP_SYN_FLAG) ? 1 : 0;
	len += (th->tcp_flags & RTE_TCP_FIN_FLAG) ? 1 : 0;
	tcp_w(w)->st.resets_out++;
	if (th->tcp_flags & RTE_TCP_ACK_FLAG)
		tcp_reply_ctl(w, p, m, &k, rte_be_to_cpu_32(th->recv_ack), 0,
			      RTE_TCP_RST_FLAG, NULL, 0);
	else
		tcp_reply_ctl(w, p, m, &k, 0, rte_be_to_cpu_32(th->sent_seq) + len,
			      RTE_TCP_RST_FLAG | RTE_TCP_ACK_FLAG, NULL, 0);
}

/* Send unit @p u (NULL: a bare FIN), with FIN and PSH as asked. */
static int tcp_send_unit(struct rnic_tcp_conn *c, struct tcp_unit *u, bool fin,
			 bool push)
{
	struct tcp_opts o;

	if (u != NULL)
		u->sent_tsc = c->w->now_tsc;
	tcp_data_opts(c, &o);
	if (u != NULL && o.n_sack > 0) {
		/* the MSS leaves no room for options beyond timestamps in a full
		 * segment: SACK blocks that do not fit beside the payload are left
		 * off (they are advisory; pure ACKs carry them), or the frame
		 * would exceed the MTU and be dropped */
		int room = (int)c->mss + (c->ts_ok ? 12 : 0) - (int)u->len -
			   (o.ts_ok ? 12 : 0) - 4;   /* NOP, NOP, kind, length */
		unsigned fit = room >= 8 ? (unsigned)room / 8 : 0;
		if (o.n_sack > fit)
			o.n_sack = fit;
	}
	uint8_t flags = RTE_TCP_ACK_FLAG | (fin ? RTE_TCP_FIN_FLAG : 0);
	if (push)
		flags |= RTE_TCP_PSH_FLAG;
	c->unacked_segs = 0;
	c->ack_now = false;
	rnic_timer_cancel(&c->w->timers, &c->dack_timer);
	return tcp_xmit_in(c->w, c->port, &c->key, u ? u->seq : c->fin_seq, c->rcv_nxt,
			   flags, &o, false, tcp_wnd_field(c), u ? u->m : NULL, NULL, NULL);
}

int tcp_retransmit_unit(struct rnic_tcp_conn *c, struct tcp_unit *u)
{
	u->retx = true;
	c->high_rxt = seq_max(c->high_rxt, u->seq + u->len);
	c->stats.retransmits++;
	tcp_w(c->w)->st.retransmits++;
	return tcp_send_unit(c, u, false, false);
}

#define TLP_MIN_US 200

/*
 * RACK-TLP (RFC 8985 section 7): with two or more segments in flight and
 * nothing known lost, the retransmission timer first runs as a probe
 * timeout of two RTTs, so a lost tail is found through SACK within a few
 * RTTs rather than after the RTO. @return the PTO, or 0 for "use the RTO".
 */
static uint32_t tlp_timeout(const struct rnic_tcp_conn *c, uint32_t rto)
{
	if (!c->sack_ok || !c->rtt.have_sample || c->in_recovery || c->tlp_out ||
	    c->rto_retries || c->lost_bytes ||
	    (c->state != TCP_ESTABLISHED && c->state != TCP_CLOSE_WAIT) ||
	    c->snd_una == c->snd_max || c->u_next - c->u_head < 2)
		return 0;   /* one segment: the peer may be delaying its ACK */
	uint32_t pto = 2 * c->rtt.srtt_us;
	if (pto < TLP_MIN_US)
		pto = TLP_MIN_US;
	return pto < rto ? pto : 0;
}

/* The user timeout has run out: the peer has owed an answer for longer. */
bool tcp_user_timed_out(const struct rnic_tcp_conn *c)
{
	return c->user_timeout_tsc != 0 && c->wait_tsc != 0 &&
	       c->w->now_tsc - c->wait_tsc >= c->user_timeout_tsc;
}

/*
 * Arm the retransmission timer (RTO, probe timeout, SYN retry or persist;
 * every use waits for an answer from the peer, so the wait starts here if
 * it is not running yet). The timer never runs past the user timeout, so
 * a backed-off RTO cannot carry the connection beyond it (as Linux clamps
 * its RTO to TCP_USER_TIMEOUT).
 */
void tcp_arm_rto(struct rnic_tcp_conn *c)
{
	struct tcp_stack *ts = tcp_s(c->w->st);
	uint32_t rto = tcp_rtt_rto(&c->rtt, ts->params.rto_min_us);
	uint32_t pto = tlp_timeout(c, rto);
	uint64_t us = pto ? pto : rto;
	uint64_t now = c->w->now_tsc;

	c->tlp_armed = pto != 0;
	if (c->wait_tsc == 0)
		c->wait_tsc = now ? now : 1;
	if (c->user_timeout_tsc) {
		uint64_t end = c->wait_tsc + c->user_timeout_tsc;
		uint64_t left = end > now ? rnic_tsc_to_us(end - now) + 1 : 1;
		if (left < us) {
			us = left;
			c->tlp_armed = false;   /* the deadline, not a probe */
		}
	}
	rnic_timer_arm(&c->w->timers, &c->rtx_timer, now, us);
}

/* The probe timeout fired: resend the last unit sent. Its ACK carries SACK
 * for it, and the time order (mark_lost) then names what else is missing. */
void tcp_tail_probe(struct rnic_tcp_conn *c)
{
	c->tlp_armed = false;
	c->tlp_out = true;
	tcp_w(c->w)->st.tail_probes++;
	tcp_retransmit_unit(c, &c->units[(c->u_next - 1) & (c->units_cap - 1)]);
	tcp_arm_rto(c);
}

/*
 * Make room in the unit ring for @p more units beyond those queued,
 * doubling it up to TCP_UNITS: a TCB starts small (most connections never
 * queue much) and grows with its send queue. Indexes are free-running, so
 * entries keep their index under the new mask. @return 0 or -ENOMEM.
 */
int tcp_units_reserve(struct rnic_tcp_conn *c, uint32_t more)
{
	uint32_t used = c->u_tail - c->u_head, cap = c->units_cap;
	if (used + more <= cap)
		return 0;
	while (cap < used + more && cap < TCP_UNITS)
		cap *= 2;
	if (used + more > cap)
		return -ENOMEM;
	struct tcp_unit *n = rte_malloc("rnic_tcb_units", cap * sizeof(*n), RTE_CACHE_LINE_SIZE);
	if (n == NULL)
		return -ENOMEM;
	for (uint32_t i = c->u_head; i != c->u_tail; i++)
		n[i & (cap - 1)] = c->units[i & (c->units_cap - 1)];
	if (c->units != c->units0)
		rte_free(c->units);
	c->units = n;
	c->units_cap = cap;
	return 0;
}

/*
 * Split unsent unit @p idx after @p first bytes; both parts stay units (the
 * later ones move up a slot). Rare: only to use a window smaller than a
 * unit. @return 0, -ENOSPC (ring full), -ENOBUFS, -EINVAL.
 */
int tcp_split_unit(struct rnic_tcp_conn *c, uint32_t idx, uint16_t first)
{
	if (first == 0 || first >= c->units[idx & (c->units_cap - 1)].len)
		return -EINVAL;
	if (tcp_units_reserve(c, 1) != 0)
		return -ENOSPC;
	struct tcp_unit *u = &c->units[idx & (c->units_cap - 1)];
	struct rte_mbuf *rest = rte_pktmbuf_clone(u->m, c->port->pool);
	if (rest == NULL)
		return -ENOBUFS;
	rest = tcp_chain_adj(rest, first);
	tcp_chain_trim(u->m, first);
	for (uint32_t i = c->u_tail; i != idx + 1; i--)
		c->units[i & (c->units_cap - 1)] = c->units[(i - 1) & (c->units_cap - 1)];
	c->u_tail++;
	c->units[(idx + 1) & (c->units_cap - 1)] = (struct tcp_unit){
		.m = rest, .seq = u->seq + first, .len = (uint16_t)(u->len - first),
	};
	u->len = first;
	return 0;
}

void tcp_pmtu_reduce(struct rnic_tcp_conn *c, uint32_t mtu)
{
	uint32_t hdr = (tcp_key_v4(&c->key) ? 40u : 60u) + (c->ts_ok ? 12u : 0u);
	/* IPv6's minimum link MTU is 1280 (RFC 8200 section 5); a smaller
	 * figure is no reason to go below it */
	if (mtu < 1280)
		mtu = 1280;
	if (mtu <= hdr || mtu - hdr >= c->mss)
		return;
	c->mss = (uint16_t)(mtu - hdr);
	tcp_w(c->w)->st.pmtu_reductions++;
	/* split every queued unit above the new MSS, sent ones included: the
	 * retransmissions must fit too. A split sent unit keeps its marks. */
	for (uint32_t i = c->u_head; i != c->u_tail; i++) {
		struct tcp_unit was = c->units[i & (c->units_cap - 1)];
		if (was.len <= c->mss)
			continue;
		bool sent = i - c->u_head < c->u_next - c->u_head;
		if (tcp_split_unit(c, i, c->mss) != 0)
			break;   /* no room: the rest waits for a later packet too big */
		struct tcp_unit *n = &c->units[(i + 1) & (c->units_cap - 1)];
		n->sacked = was.sacked;
		n->lost = was.lost;
		n->retx = was.retx;
		n->sent_tsc = was.sent_tsc;
		if (sent)
			c->u_next++;
	}
	/* the quoted segment was dropped on the way: send it again now */
	if (c->snd_una != c->snd_max && c->u_head != c->u_next)
		tcp_retransmit_unit(c, &c->units[c->u_head & (c->units_cap - 1)]);
}

/*
 * The persist timer fired: data waits and nothing is in flight. A closed
 * window gets a probe (RFC 9293 3.8.6.1); an open one too small for the
 * next unit is used anyway (the override of sender SWS avoidance,
 * 3.8.6.2.1), so a peer with a window below one MSS never stalls us.
 */
void tcp_persist(struct rnic_tcp_conn *c)
{
	struct tcp_unit *u = &c->units[c->u_next & (c->units_cap - 1)];
	uint32_t usable = c->snd_una + c->snd_wnd - u->seq;

	if (c->snd_wnd > 0 && seq_gt(c->snd_una + c->snd_wnd, u->seq)) {
		if (usable < u->len && tcp_split_unit(c, c->u_next, (uint16_t)usable) != 0) {
			tcp_arm_rto(c);
			return;
		}
		tcp_output(c);
		return;
	}
	tcp_send_bare(c, c->snd_una - 1, RTE_TCP_ACK_FLAG);
	tcp_rtt_backoff(&c->rtt);
	tcp_arm_rto(c);
}

/* Bytes in flight as RFC 6675 "pipe" estimates them. */
static uint32_t tcp_pipe(const struct rnic_tcp_conn *c)
{
	uint32_t out = c->snd_max - c->snd_una;
	uint32_t gone = c->sacked_bytes + c->lost_bytes;
	return out > gone ? out - gone : 0;
}

/*
 * Send what the windows allow: first units marked lost (retransmissions
 * during recovery), then new units, then the FIN.
 */
void tcp_output(struct rnic_tcp_conn *c)
{
	if (c->state != TCP_ESTABLISHED && c->state != TCP_CLOSE_WAIT &&
	    c->state != TCP_FIN_WAIT_1 && c->state != TCP_CLOSING &&
	    c->state != TCP_LAST_ACK)
		return;
	uint32_t cwnd = c->cc.cwnd;
	bool sent_any = false;

	/* retransmit lost, un-SACKed units first (RFC 6675 NextSeg rule 1) */
	if (c->lost_bytes) {
		for (uint32_t i = c->u_head; i != c->u_next && tcp_pipe(c) < cwnd; i++) {
			struct tcp_unit *u = &c->units[i & (c->units_cap - 1)];
			if (!u->lost || u->sacked)
				continue;
			u->lost = false;
			c->lost_bytes -= u->len;
			if (tcp_retransmit_unit(c, u) != 0)
				break;
			sent_any = true;
		}
	}
	/* new data within cwnd and the peer's window */
	while (c->u_next != c->u_tail) {
		struct tcp_unit *u = &c->units[c->u_next & (c->units_cap - 1)];
		uint32_t end = u->seq + u->len;
		if (seq_gt(end, c->snd_una + c->snd_wnd)) {
			/* sender SWS avoidance (RFC 9293 3.8.6.2.1): a part of
			 * the unit goes only when nothing is in flight and the
			 * window is at least half the largest offered; else the
			 * persist timer decides */
			uint32_t usable = seq_gt(c->snd_una + c->snd_wnd, u->seq) ?
					  c->snd_una + c->snd_wnd - u->seq : 0;
			if (usable == 0 || c->snd_una != c->snd_max ||
			    usable < c->max_snd_wnd / 2 ||
			    tcp_split_unit(c, c->u_next, (uint16_t)usable) != 0)
				break;
			continue;
		}
		if (tcp_pipe(c) + u->len > cwnd && tcp_pipe(c) > 0)
			break;
		if (tcp_send_unit(c, u, false, c->u_next + 1 == c->u_tail) != 0)
			break;
		c->u_next++;
		c->snd_nxt = end;
		c->snd_max = seq_max(c->snd_max, end);
		c->stats.bytes_sent += u->len;
		sent_any = true;
	}
	if (c->fin_queued && !c->fin_sent && c->u_next == c->u_tail) {
		c->fin_seq = c->snd_nxt;
		tcp_send_unit(c, NULL, true, true);
		c->fin_sent = true;
		c->snd_nxt++;
		c->snd_max = seq_max(c->snd_max, c->snd_nxt);
		sent_any = true;
	}
	if (sent_any && !rnic_timer_pending(&c->rtx_timer))
		tcp_arm_rto(c);
	/* data waits for a window that is closed or too small, nothing is in
	 * flight to bring an update: the persist timer (tcp_persist) */
	if (c->u_next != c->u_tail && c->snd_una == c->snd_max &&
	    !rnic_timer_pending(&c->rtx_timer))
		tcp_arm_rto(c);
}
