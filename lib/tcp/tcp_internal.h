/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lib/tcp internals: the TCB, the per-worker and per-stack state.
 * A TCB is touched only by the worker that owns its flow.
 */
#ifndef RNIC_TCP_INTERNAL_H
#define RNIC_TCP_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include <string.h>

#include <rte_hash.h>
#include <rte_mbuf.h>
#include <rte_tcp.h>

#include "engine/stack.h"
#include "engine/timer.h"
#include "engine/worker.h"
#include "net/ipv6.h"
#include "port/port.h"
#include "rnic/rnic_tcp.h"
#include "tcp/cookie.h"
#include "tcp/seq.h"
#include "tcp/tcp_opts.h"

/* RFC 9293 states */
enum tcp_state {
	TCP_CLOSED, TCP_LISTEN, TCP_SYN_SENT, TCP_SYN_RECEIVED, TCP_ESTABLISHED,
	TCP_FIN_WAIT_1, TCP_FIN_WAIT_2, TCP_CLOSE_WAIT, TCP_CLOSING,
	TCP_LAST_ACK, TCP_TIME_WAIT, TCP_NSTATES
};

/* events of the connection state machine (tcp_state.c) */
enum tcp_event {
	TCP_EV_SYN,          /* SYN without ACK */
	TCP_EV_SYN_ACK,      /* SYN+ACK that acks our SYN */
	TCP_EV_ACK_OF_SYN,   /* ACK of our SYN (SYN_RECEIVED) */
	TCP_EV_FIN,          /* in-order FIN */
	TCP_EV_ACK_OF_FIN,   /* ACK covering our FIN */
	TCP_EV_CLOSE,        /* application close */
	TCP_EV_RST,          /* acceptable RST */
	TCP_EV_TIMEOUT,      /* TIME_WAIT or retry timer expired */
	TCP_NEVENTS
};

/** Next state, or TCP_NSTATES when the event is not valid in @p s. */
enum tcp_state tcp_next_state(enum tcp_state s, enum tcp_event ev);
const char *tcp_state_name(enum tcp_state s);

/* congestion control (tcp_cc.c) */
struct tcp_cc_state {
	uint32_t cwnd, ssthresh;     /* bytes */
	/* CUBIC (RFC 9438) */
	double w_max, k;             /* segments, seconds */
	uint64_t epoch_us;           /* start of the current avoidance epoch */
	double w_est;                /* Reno-friendly estimate, segments */
	uint32_t acked_accum;        /* NewReno avoidance byte counter */
};
struct tcp_cc_ops {
	const char *name;
	void (*init)(struct tcp_cc_state *s, uint32_t mss);
	void (*on_ack)(struct tcp_cc_state *s, uint32_t mss, uint32_t acked,
		       uint64_t now_us, uint32_t srtt_us);
	void (*on_loss)(struct tcp_cc_state *s, uint32_t mss, uint32_t flight,
			uint64_t now_us);   /* fast retransmit */
	void (*on_rto)(struct tcp_cc_state *s, uint32_t mss, uint32_t flight);
};
extern const struct tcp_cc_ops tcp_cc_newreno, tcp_cc_cubic;

/* RTO estimator, RFC 6298 (tcp_rtt.c) */
struct tcp_rtt {
	uint32_t srtt_us, rttvar_us, rto_us;
	bool have_sample;
	uint8_t backoff;
};
void tcp_rtt_init(struct tcp_rtt *r, uint32_t rto_init_us);
void tcp_rtt_sample(struct tcp_rtt *r, uint32_t rtt_us, uint32_t rto_min_us);
void tcp_rtt_backoff(struct tcp_rtt *r);
uint32_t tcp_rtt_rto(const struct tcp_rtt *r, uint32_t rto_min_us);

/* One queued send unit = one segment's payload (<= MSS). */
struct tcp_unit {
	struct rte_mbuf *m;          /* payload, one segment (direct or indirect) */
	uint32_t seq;
	uint16_t len;
	bool sacked, lost, retx;     /* SACK scoreboard (RFC 6675) */
	uint64_t sent_tsc;           /* last transmission */
};

#define TCP_UNITS     8192       /* most units queued; power of two */
#define TCP_UNITS_MIN 4          /* a new TCB's ring (128 B: an idle connection
				  * holds at most its last segment or two);
				  * doubles on demand (issue 21) */
#define TCP_OOO_MAX   256        /* out-of-order ranges held */
/* Out-of-order mbufs a connection may hold (as well as at most rcvbuf of
 * their true size, tcp_mbuf_truesize()): a peer sending one-byte segments
 * above a hole must not take the port's pool (issue 27, docs/tcp.md
 * "Hostile peers"). */
#define TCP_OOO_MBUFS_MAX 1024
/* PAWS accepts a TSval this many ticks below TS.Recent (Linux's
 * TCP_PAWS_WINDOW): segments sent across a clock tick may arrive swapped */
#define TCP_PAWS_WINDOW 1

/* One out-of-order range: contiguous arrivals are chained into one entry,
 * so entries count holes, not segments, and never overlap. */
struct tcp_ooo {
	uint32_t seq, len;
	struct rte_mbuf *m;          /* payload only */
	struct rte_mbuf *tail;       /* last segment of m: O(1) append */
};

#define TCP_CHAIN_MAX 4096       /* mbufs per receive chain (ooo entry, hold) */

/* The memory an mbuf of a receive queue holds, whatever bytes it carries:
 * its header and its whole buffer (Linux's truesize). */
static inline uint32_t tcp_mbuf_truesize(const struct rte_mbuf *m)
{
	return (uint32_t)sizeof(struct rte_mbuf) + m->buf_len;
}

/* A connection's four-tuple, network order: IPv6 addresses, or IPv4 ones
 * IPv4-mapped (::ffff:a.b.c.d), so that one table and one code path serve
 * both families. The layout is struct tcp_flow's (the SYN stage's). */
struct tcp_key {
	uint8_t laddr[16], raddr[16];
	uint16_t lport, rport;
};
_Static_assert(sizeof(struct tcp_key) == 36 && sizeof(struct tcp_flow) == 36,
	       "a tcp_key is a tcp_flow, without padding (hashed as bytes)");

static inline bool tcp_key_v4(const struct tcp_key *k)
{
	return rnic_ip6_is_v4mapped(k->laddr);
}

/* The IPv4 addresses of an IPv4 key (network order). */
static inline uint32_t tcp_key_l4(const struct tcp_key *k)
{
	uint32_t a;
	memcpy(&a, k->laddr + 12, 4);
	return a;
}
static inline uint32_t tcp_key_r4(const struct tcp_key *k)
{
	uint32_t a;
	memcpy(&a, k->raddr + 12, 4);
	return a;
}

static inline void tcp_key_set4(struct tcp_key *k, uint32_t l_be, uint32_t r_be,
				uint16_t lport, uint16_t rport)
{
	rnic_ip6_v4mapped(l_be, k->laddr);
	rnic_ip6_v4mapped(r_be, k->raddr);
	k->lport = lport;
	k->rport = rport;
}

static inline const struct tcp_flow *tcp_key_flow(const struct tcp_key *k)
{
	return (const struct tcp_flow *)(const void *)k;
}

/* The TCP bytes of a received segment by its IP header's length field
 * (IPv4 total length, IPv6 payload length), less the IP headers. */
static inline uint32_t tcp_seg_len(const struct rte_mbuf *m)
{
	const uint8_t *ip = rte_pktmbuf_mtod_offset(m, const uint8_t *, m->l2_len);
	if ((ip[0] >> 4) == 6)
		return (uint32_t)(ip[4] << 8 | ip[5]) + 40u - m->l3_len;
	return (uint32_t)(ip[2] << 8 | ip[3]) - m->l3_len;
}

/* The key of a received segment (m->l2_len, l3_len set; TCP header @p th). */
void tcp_key_of(const struct rte_mbuf *m, const struct rte_tcp_hdr *th, struct tcp_key *k);

/* The smallest MSS we take from a peer (RFC 9293 3.7.1, RFC 6691): IPv4's
 * 576-byte datagram less 40, and IPv6's 1280-byte minimum link MTU (RFC
 * 8200 section 5) less 60; also the MSS a SYN without the option implies. */
#define TCP_MSS_MIN_V4 536
#define TCP_MSS_MIN_V6 1220
/* Our own MSS never goes below this, whatever MTU a port is given: with
 * timestamps (12 bytes) taken off, a segment still carries bytes, so no
 * segmenting loop can be asked to cut pieces of 0 bytes. */
#define TCP_MSS_FLOOR 64

/* The segment payload the link of @p p carries for a flow of key @p k:
 * the MTU less the IPv4 or IPv6 header and the TCP header. */
static inline uint16_t tcp_mss_for(const struct rnic_port *p, const struct tcp_key *k)
{
	uint32_t hdr = tcp_key_v4(k) ? 40 : 60;
	return (uint16_t)(p->mtu > hdr + TCP_MSS_FLOOR ? p->mtu - hdr : TCP_MSS_FLOOR);
}

/* The payload of a data segment for a connection whose MSS (the clamped
 * minimum of the peer's and ours, at least TCP_MSS_FLOOR) is @p mss: less
 * the timestamp option when in use. Never 0, as the floor shows. */
static inline uint16_t tcp_data_mss(uint16_t mss, bool ts)
{
	return (uint16_t)(mss - (ts ? 12 : 0));
}
_Static_assert(TCP_MSS_FLOOR > 12, "a data segment always carries bytes");

/* Eifel (RFC 3522): what undoing an RTO needs, allocated by the first RTO
 * that can be undone (a connection with timestamps) and kept with the TCB
 * (issue 21: 56 B that a connection without timeouts never needs). */
struct tcp_undo {
	struct tcp_cc_state cc;      /* congestion state before the RTO */
	uint32_t tsval;              /* our timestamp when the RTO fired */
};

/* The per-connection counters rnic_tcp_info() reports (the rest of its
 * figures it reads from the TCB's state). */
struct tcp_conn_counters {
	uint64_t bytes_sent, bytes_acked, bytes_received, retransmits;
};

/*
 * The TCB. Members are grouped by use and ordered so that the compiler
 * leaves no holes (pahole shows none; issue 21 counts every byte of an
 * idle connection): the bools and small counters of a group fill the
 * room its 32-bit members leave before the next 64-bit one.
 */
struct rnic_tcp_conn {
	/* identity (read-mostly) */
	struct tcp_key key;
	enum tcp_state state;
	struct rnic_worker *w;
	struct rnic_port *port;
	const struct rnic_tcp_ops *ops;
	union {
		void *ctx;
		/* a dead TCB in the worker's TCB cache (tcb_put) has no
		 * consumer: its link takes the room */
		struct rnic_tcp_conn *cache_next;
	};
	struct tcp_listener *listener;   /* passive opens: counted in backlog */
	const struct tcp_cc_ops *cc_ops;

	/* send sequence space (RFC 9293 3.3.1) */
	uint32_t iss, snd_una, snd_nxt, snd_max, snd_wl1, snd_wl2;
	uint32_t snd_wnd;            /* peer window, scaled */
	uint32_t max_snd_wnd;
	uint8_t snd_wscale, rcv_wscale;
	uint16_t mss;                /* payload per segment (options excluded) */
	uint32_t fin_seq;
	bool fin_queued, fin_sent;
	bool fin_rcvd;               /* a FIN arrived (maybe out of order) */
	/* options in use */
	bool ts_ok, sack_ok;
	bool tlp_armed;              /* rtx_timer is the probe timeout */
	bool tlp_out;                /* a probe is out, no ACK of new data since */
	bool in_recovery;

	/* receive sequence space */
	uint32_t irs, rcv_nxt;
	uint32_t rcv_adv;            /* right edge promised (exact) */
	uint32_t rcv_wedge;          /* right edge the peer was told (rounded up) */
	uint32_t fin_rcvd_seq;
	uint32_t rcvbuf;
	uint32_t ts_recent, ts_offset;
	/* out-of-window and challenge ACKs: the theoretical time of the next
	 * one (ms, timestamp clock; GCRA, tcp_in.c oow_ack_allowed) */
	uint32_t oow_ack_tat;

	/* send queue: units in [head, tail) of the ring; una..nxt are sent */
	uint32_t units_cap;
	struct tcp_unit *units;      /* ring of units_cap (power of two): units0
				      * or, grown, its own allocation */
	uint32_t u_head, u_tail, u_next;  /* u_next: first unit not yet sent */
	uint32_t queued_bytes;
	uint32_t write_seq;          /* sequence number of the next queued byte */
	uint32_t sndbuf;
	uint32_t sacked_bytes, lost_bytes;
	uint32_t high_sacked;        /* highest SACKed sequence */
	uint32_t recover;            /* NewReno/RFC 6675 recovery point */
	uint32_t high_rxt;           /* RFC 6675 HighRxt: end of the highest retransmission */
	uint32_t dupacks;
	uint64_t rack_tsc;           /* RFC 8985: newest send time of delivered data */

	/* receive: out-of-order queue sorted by seq (ooo[], the last member);
	 * held in-order data */
	unsigned n_ooo;
	uint32_t ooo_bytes;
	uint32_t ooo_mbufs;          /* mbufs in the queue (<= TCP_OOO_MBUFS_MAX) */
	uint32_t ooo_truesize;       /* their true size (<= rcvbuf) */
	uint32_t ooo_recent;         /* seq of the latest out-of-order arrival */
	uint32_t dsack_start, dsack_end;
	uint32_t held_bytes;
	struct rte_mbuf *held;       /* hand-off: in-order bytes kept */
	struct rte_mbuf *held_tail;
	bool dsack;                  /* report [dsack_start, dsack_end) (RFC 2883) */
	bool hold;

	/* ACK policy */
	bool ack_now;
	/* Eifel (RFC 3522): undo an RTO whose original transmission arrived
	 * (the state before it in *undo) */
	bool undo_armed;
	unsigned unacked_segs;       /* received, not yet acknowledged */
	unsigned quickacks;          /* immediate ACKs left (start-up) */
	unsigned probes;             /* keepalive probes unanswered */
	struct tcp_rtt rtt;
	struct tcp_cc_state cc;
	uint8_t syn_retries, rto_retries;  /* at most SYN_RETRIES, RTO_RETRIES + 1 */
	bool in_table, app_closed, notified_closed, eof_sent;
	bool records;          /* each send of <= 1 MSS is a segment (rnic_tcp_set_records) */
	bool tw_armed;               /* misc_timer now counts TIME_WAIT */
	unsigned busy;               /* lib/tcp frames using it across callbacks */
	bool free_pending;           /* closed meanwhile: the last put frees */
	uint64_t syn_tsc;            /* our first SYN: the handshake RTT sample */
	uint64_t rtt_fence_tsc;      /* units sent before give no RTT sample:
				      * the last RTO or local stall */

	struct rnic_timer rtx_timer; /* RTO, SYN retry, persist */
	struct rnic_timer dack_timer;
	struct rnic_timer misc_timer;/* keepalive, TIME_WAIT */
	uint64_t last_rx_tsc;
	/* user timeout (RFC 9293 3.8.3): since when the peer owes an answer
	 * (our SYN, data or FIN unacknowledged since the last progress, or a
	 * window probe unanswered), 0 when it owes none; the limit in TSC
	 * ticks, 0 = none */
	uint64_t wait_tsc;
	uint64_t user_timeout_tsc;

	struct tcp_conn_counters stats;
	/* the unit ring while it has TCP_UNITS_MIN entries: a ring of its
	 * own only once it grows (tcp_units_reserve), so an idle connection
	 * is one allocation, without a second allocator header (issue 21) */
	struct tcp_unit units0[TCP_UNITS_MIN];

	/* Last, and not cleared when a cached TCB is reused: the out-of-order
	 * queue, TCP_OOO_MAX entries allocated by the first segment out of
	 * order (6 KiB that a connection without loss never needs); only
	 * entries below n_ooo are ever read. The Eifel undo state, allocated
	 * by the first RTO that arms it (tcp_undo_state), valid while
	 * undo_armed. */
	struct tcp_ooo *ooo;
	struct tcp_undo *undo;
};

/* Freed TCBs a worker keeps for reuse: a handshake then costs no heap
 * allocation and clears under 1 KiB instead of 6 (tcp.c). Bounded, so a burst
 * of connections leaves at most this much behind. */
#define TCP_TCB_CACHE 256

struct tcp_listener {
	uint16_t port;               /* host order, 0 = free */
	const struct rnic_tcp_ops *ops;
	void *ctx;
	unsigned backlog;
	unsigned count;              /* atomically updated: connections not yet
				      * closed to the application */
};

#define TCP_MAX_LISTENERS 64

struct tcp_worker {
	struct rte_hash *tcbs;
	struct rnic_tcp_conn *tcb_cache;  /* freed TCBs, linked by cache_next */
	uint16_t next_port;
	uint64_t challenge_window_tsc;
	unsigned challenge_left;          /* challenge ACKs left in this second */
	/* the connection holding the most out-of-order mbufs, pruned first
	 * when the pool runs short (NULL: none known) */
	struct rnic_tcp_conn *ooo_hog;
	struct rnic_tcp_stats st;
};

struct tcp_stack {
	struct rnic_tcp_params params;
	struct tcp_listener listeners[TCP_MAX_LISTENERS];
	struct tcp_cookie_keys keys;
	uint64_t tsc_per_epoch;           /* cookie epoch length in TSC ticks */
	struct rnic_timer rotate_timer;   /* on worker 0 */
	uint32_t fail_allocs;             /* tests: lazy allocations to fail */
};

/* Lazy allocations of a TCB (tcp.c). */
bool tcp_alloc_fails(const struct rnic_tcp_conn *c);
struct tcp_undo *tcp_undo_state(struct rnic_tcp_conn *c);

/* The timestamp clock (RFC 7323): 1 ms ticks of the worker's loop clock,
 * the same for the stateless SYN-ACK and the TCB, and cheaper than a TSC
 * read per segment. */
static inline uint32_t tcp_ts_clock(const struct rnic_worker *w)
{
	return (uint32_t)(w->now_tsc / (rte_get_tsc_hz() / 1000));
}

/*
 * A local stall: how long ago the retransmission timer should have run
 * (TSC ticks; 0 when it is idle or not late). A timer fires within a tick
 * of its deadline while the worker loops; one overdue by more than
 * TCP_STALL_US shows that this worker did not run (a descheduled thread,
 * a paused VM): whatever arrived meanwhile waited in our own queue.
 */
#define TCP_STALL_US 10000u
static inline uint64_t tcp_rtx_late(const struct rnic_tcp_conn *c)
{
	const struct rnic_timer_wheel *tw = &c->w->timers;
	uint64_t due = c->rtx_timer.expire_tick * tw->tsc_per_tick;
	if (!rnic_timer_pending(&c->rtx_timer) || c->w->now_tsc <= due)
		return 0;
	return c->w->now_tsc - due;
}

/* True when @p late_tsc (ticks past a deadline) is a local stall. */
static inline bool tcp_stalled(uint64_t late_tsc)
{
	return late_tsc > TCP_STALL_US * (rte_get_tsc_hz() / 1000000);
}

static inline struct tcp_worker *tcp_w(struct rnic_worker *w)
{
	return w->proto[RNIC_PROTO_TCP];
}
static inline struct tcp_stack *tcp_s(const struct rnic_stack *st)
{
	return st->proto[RNIC_PROTO_TCP];
}

/* The cookie epoch on the worker's loop clock (no TSC read per SYN). */
static inline uint32_t tcp_cookie_epoch(const struct rnic_worker *w)
{
	return (uint32_t)(w->now_tsc / tcp_s(w->st)->tsc_per_epoch);
}

/* tcp_csum.c: folded, not inverted, sum of @p len TCP bytes at @p off and
 * the IPv4 pseudo header (addresses as on the wire); 0xffff = valid. */
uint16_t tcp_l4_sum(const struct rte_mbuf *m, uint32_t off, uint32_t len,
		    uint32_t src_be, uint32_t dst_be);
/* The same over the pseudo header of @p k's family (IPv4 or IPv6: RFC 8200
 * 8.1; the sum is symmetric, so the key of either direction serves). */
uint16_t tcp_l4_sum_key(const struct rte_mbuf *m, uint32_t off, uint32_t len,
			const struct tcp_key *k);
/* The sum's variants (tcp_csum.c picks the best the CPU has); tests pin
 * one with tcp_csum_set_impl(): 0, -EINVAL, or -ENOTSUP on this CPU. */
enum { TCP_CSUM_BEST = -1, TCP_CSUM_SCALAR, TCP_CSUM_SSE2, TCP_CSUM_AVX2 };
int tcp_csum_set_impl(int impl);

/* tcp_out.c */
int tcp_units_reserve(struct rnic_tcp_conn *c, uint32_t more);
struct rte_mbuf *tcp_chain_adj(struct rte_mbuf *m, uint32_t n);
void tcp_chain_trim(struct rte_mbuf *m, uint32_t keep);
int tcp_split_unit(struct rnic_tcp_conn *c, uint32_t idx, uint16_t first);
void tcp_persist(struct rnic_tcp_conn *c);
void tcp_output(struct rnic_tcp_conn *c);
void tcp_send_ack(struct rnic_tcp_conn *c);
/* A bare segment of a connection (@p flags, from @p seq) with its
 * timestamps: keepalive and window probes, a lone FIN again. A peer that
 * negotiated timestamps drops a segment without them (RFC 7323 3.2). */
void tcp_send_bare(struct rnic_tcp_conn *c, uint32_t seq, uint8_t flags);
/* An ACK from sequence number @p seq rather than snd_nxt (a repeat of the
 * handshake's ACK: tcp_in.c, handshake_ack_lost()). */
void tcp_send_ack_seq(struct rnic_tcp_conn *c, uint32_t seq);
void tcp_send_syn(struct rnic_tcp_conn *c, bool ack);
/* The reset for a segment without a connection; consumes @p m. */
void tcp_send_rst_for(struct rnic_worker *w, struct rnic_port *p, struct rte_mbuf *m);
/* A stateless answer to the received frame @p in (consumed; its buffer is
 * reused when it can be), sent to its Ethernet source without a route
 * lookup or ARP (rnic_net_reply_ipv4). */
void tcp_reply_ctl(struct rnic_worker *w, struct rnic_port *p, struct rte_mbuf *in,
		   const struct tcp_key *k, uint32_t seq, uint32_t ack, uint8_t flags,
		   const struct tcp_opts *o, uint32_t wnd);
void tcp_send_ctl(struct rnic_worker *w, struct rnic_port *p,
		  const struct tcp_key *k, uint32_t seq, uint32_t ack,
		  uint8_t flags, const struct tcp_opts *o, uint32_t wnd);
int tcp_retransmit_unit(struct rnic_tcp_conn *c, struct tcp_unit *u);
uint32_t tcp_rcv_window(const struct rnic_tcp_conn *c);
uint16_t tcp_wnd_field(struct rnic_tcp_conn *c);
uint32_t tcp_ts_now(const struct rnic_tcp_conn *c);
void tcp_arm_rto(struct rnic_tcp_conn *c);
bool tcp_user_timed_out(const struct rnic_tcp_conn *c);
void tcp_tail_probe(struct rnic_tcp_conn *c);

/* A packet too big for the path to the peer of @p c: lower the MSS to
 * @p mtu's, split what is queued (sent or not) to fit, and send the first
 * unacknowledged segment again (RFC 8201 section 4). */
void tcp_pmtu_reduce(struct rnic_tcp_conn *c, uint32_t mtu);

/* tcp_in.c */
void tcp_input(struct rnic_worker *w, struct rnic_port *p, struct rte_mbuf *m);
/* The rnic_l4_handler.pmtu6 hook: find the connection, tcp_pmtu_reduce(). */
void tcp_pmtu6(struct rnic_worker *w, const uint8_t local[16], const uint8_t remote[16],
	       const uint8_t *l4, uint32_t mtu);
unsigned tcp_owner(struct rnic_stack *st, struct rnic_port *p, struct rte_mbuf *m);

/* tcp.c */
struct rnic_tcp_conn *tcp_conn_new(struct rnic_worker *w, struct rnic_port *p,
				   const struct tcp_key *k);
int tcp_conn_insert(struct rnic_tcp_conn *c);
struct rnic_tcp_conn *tcp_lookup(struct rnic_worker *w, const struct tcp_key *k);
void tcp_set_state(struct rnic_tcp_conn *c, enum tcp_state s);
void tcp_conn_done(struct rnic_tcp_conn *c, int err);
void tcp_conn_put(struct rnic_tcp_conn *c);
void tcp_orphan_check(struct rnic_tcp_conn *c);
void tcp_ooo_pull(struct rnic_tcp_conn *c);
/* Free the whole out-of-order queue of @p c (the TCB goes). */
void tcp_ooo_purge(struct rnic_tcp_conn *c);

/* Mbufs in the held chain. It was 60,000 (nb_segs is 16 bits): a peer
 * sending one-byte segments to a held connection (an iWARP endpoint whose
 * application defers its accept) could take the port's whole pool. Small
 * segments are now copied into the chain's last buffer (tcp_deliver), so
 * this many mbufs hold at least about 1 MiB whatever the segment sizes. */
#define TCP_HOLD_SEGS_MAX 2048

/* Held bytes go into one chain; refuse bytes that would overflow it, or
 * any while the port's pool is short (the peer retransmits them once the
 * hold is released; counted in hold_refused by the caller). */
static inline bool tcp_hold_full(const struct rnic_tcp_conn *c, unsigned nsegs)
{
	bool holding = c->hold || c->ops == NULL || c->ops->recv == NULL;
	return holding && ((c->held != NULL && c->held->nb_segs + nsegs > TCP_HOLD_SEGS_MAX) ||
			   rnic_port_pool_short(c->port));
}
void tcp_deliver(struct rnic_tcp_conn *c, struct rte_mbuf *m, uint32_t len);
struct tcp_listener *tcp_find_listener(struct rnic_stack *st, uint16_t port);
void tcp_established(struct rnic_tcp_conn *c);
uint64_t tcp_now_us(void);
void tcp_telemetry_init(void);
uint32_t tcp_ts_offset(const struct tcp_cookie_keys *k, const struct tcp_key *key);

#endif
