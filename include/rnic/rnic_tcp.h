/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * rnic's userspace TCP: the stream API the iWARP layer runs on, open to
 * tools (rnic-tcp) and to applications that stream before switching a
 * connection to RDMA (rnic_cm_attach_stream()). Connections live on the
 * worker that owns their flow;
 * every function here must be called on that worker (from a callback, or
 * through rnic_worker_call_sync()), and every callback runs there.
 *
 * Data moves as mbuf chains without copies: rnic_tcp_send() takes an mbuf
 * chain (each segment no longer than the connection's MSS is sent as-is;
 * longer ones are split by reference), and recv() hands over in-order
 * payload as an mbuf chain the callee owns.
 *
 * Errors follow rnic.h: 0 or a negative errno.
 */
#ifndef RNIC_TCP_H
#define RNIC_TCP_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_mbuf.h>

#include "rnic/rnic.h"

#ifdef __cplusplus
extern "C" {
#endif

struct rnic_tcp_conn;

/** Congestion control algorithm. */
enum rnic_tcp_cc {
	RNIC_TCP_CC_NEWRENO = 0, /**< RFC 5681 + RFC 6582 */
	RNIC_TCP_CC_CUBIC = 1,   /**< RFC 9438 */
};

/** Callbacks of one connection (or of a listener, for accept). */
struct rnic_tcp_ops {
	/** Passive open completed on a listener. Return the new connection's
	 *  context, or NULL to refuse it (it is reset). */
	void *(*accept)(struct rnic_tcp_conn *c, void *listen_ctx);
	/** Active open completed. */
	void (*connected)(struct rnic_tcp_conn *c, void *ctx);
	/** In-order payload; the callee owns @p m (an mbuf chain). */
	void (*recv)(struct rnic_tcp_conn *c, void *ctx, struct rte_mbuf *m);
	/** Send-buffer space was freed by ACKs. */
	void (*sent)(struct rnic_tcp_conn *c, void *ctx);
	/** The peer closed its direction (FIN received, all data delivered). */
	void (*eof)(struct rnic_tcp_conn *c, void *ctx);
	/** The connection is gone: 0 after an orderly close, or -ECONNRESET,
	 *  -ECONNREFUSED, -ETIMEDOUT (the peer stopped answering: the user
	 *  timeout, keepalive or a retry limit; a synchronized connection
	 *  sends a RST as it goes).
	 *  Last callback; @p c is invalid after it. */
	void (*closed)(struct rnic_tcp_conn *c, void *ctx, int err);
};

/** Stack-wide TCP settings (rnic_tcp_config() before the stack starts). */
struct rnic_tcp_params {
	enum rnic_tcp_cc cc;     /**< default NewReno */
	uint32_t rcvbuf;         /**< receive window budget, bytes (default 4 MiB) */
	uint32_t sndbuf;         /**< send queue limit, bytes (default 2 MiB) */
	uint32_t rto_min_us;     /**< minimum RTO (default 5 ms) */
	uint32_t rto_init_us;    /**< initial RTO (default 200 ms) */
	uint32_t delack_us;      /**< delayed-ACK timeout (default 500 us) */
	uint32_t time_wait_ms;   /**< TIME_WAIT duration (default 2000 ms) */
	/** An active open may take over the 4-tuple of a connection of ours
	 *  in TIME_WAIT for at least this long, if that one used timestamps
	 *  (as Linux's tcp_tw_reuse and its 1 s delay): the new connection's
	 *  sequence numbers start past the old one's, and its timestamps are
	 *  newer than any the old one sent, so the peer's PAWS (RFC 7323)
	 *  tells an old duplicate from new data. Without it one address pair
	 *  and port open at most the ephemeral range (28,232) per TIME_WAIT.
	 *  Default 1000 ms; 0 = never. */
	uint32_t tw_reuse_ms;
	uint32_t keepalive_s;    /**< idle time before keepalive probes, 0 = off */
	/** User timeout (RFC 9293 section 3.8.3, RFC 5482, as Linux's
	 *  TCP_USER_TIMEOUT): how long a SYN, data, a FIN or a zero-window
	 *  probe may stay unanswered before the connection is aborted (RST,
	 *  closed(-ETIMEDOUT)); with keepalive on, how long the peer may stay
	 *  silent once a probe is out. A peer that answers window probes is
	 *  alive, however long its window stays closed. Default 30000 ms;
	 *  0 = none (only the retry limits, minutes). */
	uint32_t user_timeout_ms;
	bool nagle;              /**< default off */
	bool sack;               /**< default on */
	bool timestamps;         /**< default on */
	uint8_t wscale;          /**< our window scale (default 7) */
};

/** Fill @p p with the defaults. */
void rnic_tcp_params_default(struct rnic_tcp_params *p);

/** Set the stack's TCP parameters. @return 0 or -EINVAL. */
int rnic_tcp_config(struct rnic_stack *st, const struct rnic_tcp_params *p);

/**
 * Listen on @p port of every address of the stack. SYNs are answered
 * statelessly with SYN cookies; @p backlog bounds the connections
 * the listener holds at once. Any thread.
 * @return 0, -EINVAL (bad arguments), -EADDRINUSE (a listener is there),
 *   -ENOSPC (no listener slot left).
 */
int rnic_tcp_listen(struct rnic_stack *st, uint16_t port,
		    const struct rnic_tcp_ops *ops, void *ctx, unsigned backlog);

/** Stop listening on @p port. Any thread. @return 0, or -ENOENT (no
 *  listener there). */
int rnic_tcp_unlisten(struct rnic_stack *st, uint16_t port);

/**
 * Active open from the calling worker @p w to @p dst_ip:@p dst_port (host
 * order). The source port is chosen so that the replies land on @p w.
 * @return 0 and *out, or -EHOSTUNREACH (no route), -EADDRNOTAVAIL (no
 *   free source port), -ENOMEM.
 */
int rnic_tcp_connect(struct rnic_worker *w, uint32_t dst_ip, uint16_t dst_port,
		     const struct rnic_tcp_ops *ops, void *ctx,
		     struct rnic_tcp_conn **out);

/**
 * rnic_tcp_connect() to an address of either family (@p dst: IPv4 or
 * IPv6, the port by the on-link route, the source address chosen for the
 * destination). @return as rnic_tcp_connect(), and -EHOSTUNREACH for a
 * multicast or unspecified @p dst.
 */
int rnic_tcp_connect_addr(struct rnic_worker *w, const struct rnic_addr *dst,
			  uint16_t dst_port, const struct rnic_tcp_ops *ops, void *ctx,
			  struct rnic_tcp_conn **out);

/** The local and remote addresses and ports (host order) of @p c. */
void rnic_tcp_endpoints(const struct rnic_tcp_conn *c, struct rnic_addr *local,
			uint16_t *lport, struct rnic_addr *remote, uint16_t *rport);

/** Queue an mbuf chain for sending. @return 0, -EAGAIN (send buffer full:
 *  wait for sent()), -ENOBUFS (the port's mbuf pool is short: try again
 *  later; no sent() is promised, the connection may have nothing in
 *  flight), -ENOTCONN, -EPIPE (already closed for sending). On error the
 *  caller keeps @p m. */
int rnic_tcp_send(struct rnic_tcp_conn *c, struct rte_mbuf *m);

/**
 * Set the user timeout of one connection (see rnic_tcp_params.user_timeout_ms;
 * a connection starts with the stack's). A wait already under way is
 * measured against the new value from its start. 0 = none.
 */
void rnic_tcp_set_user_timeout(struct rnic_tcp_conn *c, uint32_t ms);

/** Bytes rnic_tcp_send() accepts now. */
uint32_t rnic_tcp_send_space(const struct rnic_tcp_conn *c);

/**
 * Record mode (iWARP's FPDU alignment, RFC 5044 §8): from now on each
 * rnic_tcp_send() of at most one MSS starts a segment of its own instead of
 * filling the room of a queued, unsent one, so the bytes of one call are
 * never split between two segments. Larger sends are cut at MSS boundaries
 * as before.
 */
void rnic_tcp_set_records(struct rnic_tcp_conn *c, bool on);

/** The maximum segment payload of the connection. */
uint16_t rnic_tcp_mss(const struct rnic_tcp_conn *c);

/** A pool to allocate payload mbufs from (the connection's port pool). */
struct rte_mempool *rnic_tcp_pool(const struct rnic_tcp_conn *c);

/** Orderly close of our direction (FIN after the queued data).
 *  @return 0, -EALREADY (closed before), -ENOTCONN (no connection to
 *  close in this state). */
int rnic_tcp_close(struct rnic_tcp_conn *c);

/** Abortive close: RST, closed(-ECONNRESET) is not called for the caller. */
void rnic_tcp_abort(struct rnic_tcp_conn *c);

/**
 * Hand-off (the streaming-to-RDMA switch): with @p hold true, received
 * bytes stay queued in order instead of going to recv(); rnic_tcp_set_ops()
 * then installs a new consumer, and releasing the hold delivers the queued
 * bytes to it first, in order (then eof() if the FIN came meanwhile).
 * rnic_tcp_set_ops(c, NULL, NULL) without a hold lets the connection go:
 * bytes that still arrive are dropped, no callback runs any more, and after
 * rnic_tcp_close() it ends by itself (FIN_WAIT_2 lasts at most 60 s).
 * Every callback may call rnic_tcp_close() or rnic_tcp_abort() on its own
 * connection.
 */
void rnic_tcp_hold(struct rnic_tcp_conn *c, bool hold);
/** Install @p ops and @p ctx as the connection's consumer (see above). */
void rnic_tcp_set_ops(struct rnic_tcp_conn *c, const struct rnic_tcp_ops *ops,
		      void *ctx);

/** Per-connection figures. */
struct rnic_tcp_info {
	uint32_t state, mss, cwnd, ssthresh, snd_wnd, rcv_wnd;
	uint32_t srtt_us, rto_us;
	uint64_t bytes_sent, bytes_acked, bytes_received, retransmits;
	uint16_t lport, rport;   /**< the connection's ports, host order */
};
/** Read the figures of @p c (on its worker). */
void rnic_tcp_info(const struct rnic_tcp_conn *c, struct rnic_tcp_info *i);

/** The worker that owns @p c. */
struct rnic_worker *rnic_tcp_worker(const struct rnic_tcp_conn *c);

/** Stack-wide TCP counters (summed over workers). */
struct rnic_tcp_stats {
	uint64_t syns, cookies_sent, cookie_valid, cookie_invalid;
	uint64_t established, active_opens, passive_opens, resets_in, resets_out;
	uint64_t tcbs, segs_in, segs_out, retransmits, fast_retransmits, rtos;
	uint64_t bad_csum, bad_hdr, bad_opts, out_of_window, paws_drops,
		 challenge_acks, no_listener, backlog_full, dup_segs;
	uint64_t spurious_rtos;  /**< RTOs undone by Eifel detection (RFC 3522) */
	uint64_t tail_probes;    /**< tail loss probes sent (RFC 8985 section 7) */
	uint64_t pool_short;     /**< sends refused with -ENOBUFS: the mbuf pool was short */
	uint64_t failover_moves; /**< connections moved to another port by a failover */
	uint64_t user_timeouts;  /**< aborted: the user timeout expired */
	uint64_t keepalive_timeouts; /**< aborted: keepalive probes went unanswered */
	uint64_t retry_timeouts; /**< aborted: SYN or RTO retries ran out first */
	uint64_t handshake_acks; /**< handshake ACKs repeated for a peer's repeated SYN-ACK */
	uint64_t tcbs_cached;    /**< freed TCBs kept for reuse (at most 256 per worker) */
	uint64_t tcb_reuses;     /**< TCBs taken from that cache instead of the heap */
	uint64_t sack_reneging;  /**< timeouts that found the first unacknowledged unit
				      SACKed and dropped the SACK marks (RFC 2018 section 8) */
	uint64_t pmtu_reductions;/**< MSS lowered by an ICMPv6 packet too big (RFC 8201) */
	uint64_t ooo_nomem;      /**< out-of-order segments dropped: no memory for the
				      connection's out-of-order queue (allocated on first use) */
	uint64_t undo_nomem;     /**< RTOs that could not be made undoable (Eifel,
				      RFC 3522): no memory for the undo state
				      (allocated by the first such RTO) */
	uint64_t tw_reused;      /**< active opens that took over a TIME_WAIT 4-tuple */
	/* hostile peers (issue 27, docs/tcp.md "Hostile peers") */
	uint64_t mss_clamped;    /**< peer MSS options below the family's minimum
				      (536, 1220), raised to it */
	uint64_t wscale_clamped; /**< window scale options above 14 used as 14 */
	uint64_t sack_bogus;     /**< SACK blocks ignored: empty, reversed, beyond
				      SND.MAX or starting below SND.UNA (D-SACK aside) */
	uint64_t ts_missing;     /**< segments dropped: no timestamp on a connection
				      that negotiated them (RFC 7323 section 3.2) */
	uint64_t challenge_acks_limited; /**< challenge ACKs not sent (rate limit) */
	uint64_t oow_acks_limited;       /**< ACKs to out-of-window segments not sent
					      (per-connection rate limit) */
	uint64_t ooo_refused;    /**< out-of-order segments dropped: the connection's
				      cap (mbufs, true size) or a short pool */
	uint64_t ooo_pruned;     /**< out-of-order mbufs dropped from queues to
				      relieve a short pool (highest sequence first) */
	uint64_t ooo_mbufs;      /**< mbufs held in out-of-order queues now */
	uint64_t syn_sent_bad_ack; /**< segments to SYN_SENT acking something we
					never sent (reset, state kept) */
	uint64_t hold_refused;   /**< in-order segments not taken while the stream is
				      held: 2,048 mbufs held, or a short pool */
};
/** Read the TCP counters of @p st (any thread, lock-free). */
void rnic_tcp_stats(const struct rnic_stack *st, struct rnic_tcp_stats *s);

/** Tests: make the next @p n lazy allocations of @p st's connections (the
 *  out-of-order queue, the Eifel undo state) fail as if the heap were out. */
void rnic_tcp_fail_allocs(struct rnic_stack *st, uint32_t n);

#ifdef __cplusplus
}
#endif
#endif
