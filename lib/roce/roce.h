/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * RoCEv2 RC queue pairs (internal): the per-QP transport state behind
 * struct rnic_qp (qp->tp), and the contract between its three parts:
 *
 *   roce_req.c   requester: work requests -> request packets, PSNs,
 *                go-back-N retransmission, the retry and RNR timers
 *   roce_comp.c  completer: ACK/NAK, Read Responses and Atomic ACKs ->
 *                send-queue completions
 *   roce_resp.c  responder: request packets -> placement, receive
 *                completions, ACK/NAK, Read Responses, Atomic ACKs
 *   roce_qp.c    the verbs transport ops, the UDP 4791 handler that
 *                steers a packet to its QP's worker and to one of the
 *                three, packet building and transmit, counters
 *
 * Everything in a struct roce_qp is touched only by the QP's worker (the
 * worker of its send CQ's completion handler, fixed at RTR), except the
 * attributes written by modify_qp, which runs on that worker too.
 */
#ifndef RNIC_ROCE_ROCE_H
#define RNIC_ROCE_ROCE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/queue.h>

#include <infiniband/verbs.h>
#include <rte_mbuf.h>

#include "engine/timer.h"
#include "roce/cnp.h"
#include "roce/dcqcn.h"
#include "net/net.h"
#include "roce/roce_addr.h"
#include "roce/roce_wire.h"
#include "rdma/qp.h"
#include "rdma/rdma.h"
#include "rdma/stag.h"

struct rnic_port;
struct rnic_worker;

/* Requester: packets in flight at most (go-back-N window, far below the
 * 2^23 the IBA allows) and the AckReq period inside long messages. */
#define ROCE_TX_WINDOW     256u
#define ROCE_ACKREQ_EVERY  32u
/* Consecutive local ACK timeouts double the timer, up to this many times
 * the QP's timeout (the IBA's value is the least the requester waits). */
#define ROCE_BACKOFF_MAX   3u
/* Local ACK timeouts in a row that spend no retry because they prove
 * nothing about the responder: the probe of the previous timeout never
 * left (the port refused it, and it is retried every poll), or the worker
 * itself was off the CPU for longer than the timer's interval. Bounded, so
 * a port that never drains still ends the QP; restored by progress. */
#define ROCE_EXCUSED_MAX   8u
/* Responder: an ACK at least every this many request packets, AckReq or
 * not, so a long message keeps the requester's timer moving (rxe 6.1
 * arms its timer once and times out inside long messages otherwise). */
#define ROCE_ACK_EVERY     16u
/* A Read goes out as one Read Request per chunk of this many responses,
 * each counted against ORD: what a lost response costs (go-back-N) and
 * what the responder streams unasked are bounded by ORD chunks. */
#define ROCE_READ_CHUNK    64u
/* Packets one QP may emit per poll (fairness between QPs). */
#define ROCE_TX_BUDGET     64u
/* Packets all QPs of a worker may emit per poll: halved whenever the
 * port's transmit queue overflowed since the last poll, grown by one per
 * busy poll (a responder streaming Read Responses must not drown its own
 * ACKs, NAKs and ARP replies in tx_queue_full drops). */
#define ROCE_PACE_MIN      16u
#define ROCE_PACE_MAX      512u
/* Responder jobs (Read Responses, Atomic ACKs) queued per QP. */
#define ROCE_JOBS          128u
/* Atomic results kept for duplicate atomics (IBA 9.7.7.3.2). */
#define ROCE_ATOMIC_CACHE  RNIC_MAX_RD_ATOMIC
/* Reads remembered for duplicate Reads (IBA 9.7.5.1.6): a duplicate Read
 * runs again only inside one of the last this many Reads, for at most
 * what that Read had left from its PSN on (as rxe's read resources). */
#define ROCE_READ_CACHE    RNIC_MAX_RD_ATOMIC
#define ROCE_PARK          64   /* request packets kept during a migration query */

/* Counters, one set per worker, summed for telemetry (/rnic/roce). */
#define ROCE_COUNTERS(X)                                                     \
	X(rx_pkts)          X(tx_pkts)          X(rx_bad_icrc)                   \
	X(rx_parse_errors)  X(rx_unknown_qp)    X(rx_bad_state)                  \
	X(rx_wrong_source)  X(rx_cnp)           X(rx_not_rc)                     \
	X(req_pkts_out)     X(retransmits)      X(timeouts)                      \
	X(retry_exceeded)   X(rnr_retry_exceeded)                                \
	X(acks_in)          X(naks_in)          X(rnr_naks_in)                   \
	X(stale_responses)  X(read_resp_gaps)                                    \
	X(resp_pkts_in)     X(duplicates)       X(dup_reads)                     \
	X(dup_atomics)      X(out_of_window)    X(acks_out)                      \
	X(naks_seq_out)     X(naks_inv_out)     X(naks_access_out)               \
	X(naks_op_out)      X(rnr_naks_out)     X(read_resps_out)                \
	X(atomic_acks_out)  X(no_mbuf)          X(rx_wrong_service)              \
	X(ud_pkts_in)       X(ud_pkts_out)      X(ud_bad_qkey)                   \
	X(ud_no_recv)       X(ud_too_long)      X(mig_queries)                   \
	X(mig_parked)       X(mig_park_drops)   X(mig_rejects)                   \
	X(tx_paced)         X(probe_refused)    X(timeouts_excused)              \
	X(acked_skipped)                                                         \
	X(rx_ce_marked)     X(ce_no_qp)         X(tx_cnp)                        \
	X(cnp_suppressed)   X(cnp_ignored)      X(cc_rate_cuts)                  \
	X(cc_rate_increases) X(cc_pace_waits)   X(tx_held_back)                  \
	/* IB CM on QP1 (roce_cm.c, worker 0) */                                 \
	X(cm_mads_in)       X(cm_mads_out)      X(cm_req_resent)                 \
	X(cm_rep_resent)    X(cm_dreq_resent)   X(cm_dup_req)                    \
	X(cm_dup_rep)       X(cm_dup_dreq)      X(cm_dups)                       \
	X(cm_stale)         X(cm_unknown_comm_id)                                \
	X(cm_no_listener)   X(cm_rej_out)       X(cm_mra_in)                     \
	X(cm_mra_out)       X(cm_bad_opcode)    X(cm_bad_pkey)                   \
	X(cm_bad_qkey)      X(cm_bad_req)       X(cm_qp_errors)                  \
	X(cm_mad_len)       X(cm_base_version)  X(cm_class)                      \
	X(cm_class_version) X(cm_method)        X(cm_attr)                       \
	X(cm_field)         X(cm_comm_est)                                   \
	/* IBA checks (issue 19): BTH P_Key, AETH syndrome type */               \
	X(rx_bad_pkey)      X(bad_syndromes)                                    \
	/* requests held while ARP resolves the next hop (roce_req_pump) */    \
	X(arp_waits)                                                             \
	/* per-QP memory taken on first use (roce_resp.c): none to be had */     \
	X(resp_no_mem)                                                           \
	/* issue 27: responses that do not match their request (wrong opcode  \
	 * position or length: the QP fails, BAD_RESP_ERR), NAKs with a        \
	 * reserved code, duplicate Reads outside any remembered Read, RETH    \
	 * DMA lengths over 2^31 */                                            \
	X(bad_resps)        X(bad_nak_codes)    X(dup_read_rejects)              \
	X(bad_dma_len)                                                           \
	/* issue 27, IB CM bounds (roce_cm.c): REQs refused past the listener's \
	 * backlog or the port's unaccepted ones, REQs left undecided */        \
	X(cm_backlog_full)  X(cm_port_limit)    X(cm_req_timeouts)              \
	/* accepted REQs never confirmed (no RTU) pushed out of a full backlog \
	 * by a newer REQ */                                                    \
	X(cm_half_open_evicted)                                                 \
	/* Send with Invalidate of an R_Key that may not be (an MR, a type 1  \
	 * window, another QP's type 2 window): NAK invalid request */         \
	X(inv_refused)

struct roce_counters {
#define ROCE_CTR_FIELD(n) uint64_t n;
	ROCE_COUNTERS(ROCE_CTR_FIELD)
#undef ROCE_CTR_FIELD
};

struct roce_qp;
TAILQ_HEAD(roce_qp_list, roce_qp);

/* Congestion control of a stack (roce_cc.c), copied to each worker from
 * rnic_config's roce_cc: read-only after worker init. */
struct roce_cc_conf {
	bool ecn;                 /* send RC packets ECT(0) */
	bool dcqcn;               /* reaction point on: pace QPs */
	uint32_t cnp_interval_us; /* notification point: CNPs of a QP at most this often */
	struct rnic_dcqcn_params p;
};

/* Per-worker RoCE state: w->proto[RNIC_PROTO_ROCE]. */
struct roce_worker {
	struct roce_cc_conf cc;
	struct roce_qp_list active;     /* QPs with packets to emit */
	struct roce_counters c;
	uint32_t pace;                  /* packets per poll, ROCE_PACE_MIN..MAX */
	uint64_t tx_full_seen;          /* the worker's tx_queue_full drops at the last poll */
	/* RNIC_ROCE_DEBUG: the longest gaps between two polls (worker stalls) */
	uint64_t last_poll_tsc, gap_max_us, gap_at_us, gaps_over_20ms;
};

/* A send work request in the requester's hands. */
struct roce_wqe {
	struct ibv_send_wr wr;    /* wr_id: the verbs SQ ordinal; sg_list stays valid */
	uint32_t first_psn;       /* first PSN the message uses */
	uint32_t npkts;           /* PSNs it uses (a Read: its responses) */
	uint32_t len;             /* message length */
	uint32_t resp_next;       /* Read: next response index expected */
	bool rd_atomic;           /* Read or atomic: counts against ORD */
	bool issued;              /* atomic: sent once (counted in rd_out) */
	uint32_t issued_pkts;     /* Read: responses asked for so far (chunks in rd_out) */
	bool restarted;           /* Read: asked again from inside a chunk (a rewind):
				   * a response message may start there too */
};

enum roce_job_kind { JOB_READ, JOB_ATOMIC_ACK, JOB_NAK };

/* A responder job: Read Responses to stream, an Atomic ACK to send, or the
 * NAK of a fatal error found while earlier responses still wait (they go
 * first: responses leave in PSN order). */
struct roce_job {
	uint8_t kind;             /* enum roce_job_kind */
	bool dup;                 /* answers a duplicate request */
	uint32_t psn;             /* PSN of its first response */
	uint32_t msn;
	const uint8_t *src;       /* Read: source bytes (checked STag range) */
	uint32_t rkey;            /* Read: the R_Key it came with */
	uint32_t root;            /* Read: the registration checked per response */
	uint8_t code;             /* NAK: enum rnic_roce_nak_code */
	uint64_t va;
	uint32_t len, off;        /* Read: length, bytes sent so far */
	uint64_t orig;            /* Atomic: the original value */
};

/* A remembered atomic (duplicate atomics get the same answer). */
struct roce_atomic_rec {
	uint32_t psn;
	bool valid;
	uint64_t orig;
};

/* A remembered Read (duplicate Reads must fall inside one). */
struct roce_read_rec {
	uint32_t psn, npkts;      /* its PSN range; npkts 0: an empty slot */
	uint64_t va;              /* its RETH */
	uint32_t rkey, len;
};

/* RNIC_ROCE_DEBUG: the last events of a QP's recovery, printed when it
 * fails (roce_qp_fatal()). */
#define ROCE_TRACE 48u
enum roce_trace_kind {
	TR_TIMEOUT,       /* local ACK timeout: retry spent, rewind */
	TR_NAK_SEQ,       /* sequence NAK acted on: retry spent, rewind */
	TR_NAK_COPY,      /* sequence NAK ignored (a copy) */
	TR_READ_GAP,      /* Read Response gap: rewind */
	TR_ACK_GAP,       /* ACK past an unanswered Read/atomic: rewind */
	TR_RESTORE,       /* progress restored a spent retry budget */
	TR_RNR,           /* RNR NAK */
	TR_RESP_NAK,      /* responder: sequence NAK sent */
	TR_RESP_SILENT,   /* responder: out of sequence, NAK already sent */
	TR_RESP_DUP,      /* responder: duplicate request */
	TR_EXCUSED,       /* local ACK timeout that spent no retry */
	TR_KINDS
};
struct roce_trace_ev {
	uint64_t us;              /* worker time */
	uint8_t kind;             /* enum roce_trace_kind */
	uint8_t retry_left;
	uint32_t psn;             /* the event's PSN */
	uint32_t a, b, c, d;      /* req: acked, next PSN, head first_psn, head resp_next;
				   * resp: epsn, -, -, - */
};
struct roce_trace {
	struct roce_trace_ev ev[ROCE_TRACE];
	uint32_t n;               /* free-running */
};

/* Requester state. */
struct roce_req {
	struct roce_wqe *wq;      /* ring of qp->sq_size entries */
	uint32_t head;            /* oldest not completed */
	uint32_t next;            /* next to transmit (head <= next <= tail) */
	uint32_t tail;            /* next free */
	uint32_t next_pkt;        /* packets of wq[next] already sent */
	uint32_t psn;             /* PSN for the next new message */
	uint32_t sent_end;        /* one past the highest PSN ever transmitted */
	uint32_t acked;           /* last PSN acknowledged (cumulative) */
	uint32_t rd_out;          /* Read chunks and atomics issued, not answered */
	uint32_t since_ackreq;    /* packets since the last AckReq */
	uint32_t gap_retry_psn;   /* a Read Response gap already retried */
	bool gap_retried;
	uint32_t nak_psn;         /* the last sequence NAK acted on */
	bool nak_seen;            /* ... and no progress since */
	uint8_t retry_left, rnr_left;
	uint8_t backoff;          /* timeouts since the last progress (timer doubling) */
	bool probing;             /* after a timeout: one packet until progress */
	bool probe_sent;
	bool rnr_wait;            /* the timer is an RNR wait: send nothing */
	uint32_t sent_since_timeout;   /* packets that left since the last timeout */
	bool hop_wait_sent;       /* a packet went to an unresolved next hop */
	uint8_t excused_left;     /* timeouts that may still spend no retry */
	uint64_t timer_armed_tsc; /* when the retransmission timer was armed, */
	uint64_t timer_us;        /* ... for how long */
	struct rnic_timer timer;  /* retransmission or RNR wait */
};

/* Responder state. */
struct roce_resp {
	uint32_t epsn;            /* next PSN expected */
	uint32_t msn;             /* messages completed (AETH MSN) */
	uint16_t prev_op;         /* enum rnic_roce_opcode, for the sequence check */
	bool nak_sent;            /* a sequence NAK went out for epsn */
	bool ack_due;             /* an ACK of epsn - 1 is owed */
	uint32_t since_ack;       /* request packets since the last ACK */
	bool have_rwqe;           /* rwqe holds the receive of a Send in progress */
	struct rnic_rwqe rwqe;
	uint32_t recv_off;        /* bytes of the Send placed so far */
	uint64_t wr_va;           /* Write in progress: VA of the next byte */
	uint32_t wr_rkey;         /* its R_Key (checked again every packet) */
	uint32_t wr_left;         /* its bytes still to come */
	uint32_t wr_len;          /* its DMA length */
	/* ROCE_JOBS jobs, the ROCE_ATOMIC_CACHE atomic results and the
	 * ROCE_READ_CACHE Reads, in one
	 * block allocated by the first Read or atomic (roce_resp_res()):
	 * 7.4 KiB that a QP which is only written to or sent to never needs;
	 * kept from then on, across roce_resp_init() */
	struct roce_job *jobs;
	uint32_t job_head, job_tail;   /* free-running */
	uint32_t jobs_new;        /* queued jobs of new requests (IRD) */
	struct roce_atomic_rec *atomics;
	uint32_t atomic_next;
	struct roce_read_rec *reads;   /* ROCE_READ_CACHE, same block */
	uint32_t read_next;
	bool err_pending;         /* a fatal NAK waits behind the jobs: drop requests */
};

enum roce_qp_state { ROCE_RESET, ROCE_RTR, ROCE_RTS, ROCE_ERR };

/* Per-QP transport state (qp->tp). */
struct roce_qp {
	struct rnic_qp *qp;
	struct rnic_worker *w;
	struct roce_worker *rw;
	struct rnic_port *port;
	uint8_t state;            /* enum roce_qp_state */
	bool active;              /* on rw->active */
	TAILQ_ENTRY(roce_qp) link;

	/* attributes (modify_qp) */
	int access;               /* qp_access_flags */
	uint8_t port_num;
	uint32_t dest_qpn;
	struct rnic_addr src;     /* the source GID's address (IPv4 0: the port's) */
	struct rnic_addr dst;     /* the GRH's DGID's address */
	uint8_t tos;              /* traffic class */
	uint8_t hop_limit;        /* the AV's hop limit: IPv6 hop limit / IPv4 TTL (0: 64) */
	uint32_t flow_label;      /* the AV's IPv6 flow label (0: the QP pair's) */
	uint16_t sport;           /* UDP source port: per-QP entropy */
	uint32_t pmtu;            /* path MTU in bytes */
	uint8_t timeout;          /* local ACK timeout exponent (0: none) */
	uint8_t retry_cnt, rnr_retry;
	uint8_t min_rnr_timer;
	uint32_t max_rd_atomic;   /* ORD */
	uint32_t max_dest_rd_atomic;   /* IRD */
	uint32_t qkey;            /* UD */
	uint32_t ud_psn;          /* UD: PSN of the next datagram */
	uint64_t hop_until;       /* the next hop known resolved until (TSC) */
	struct rnic_arp_hint arp_hint;   /* its MAC, while ARP's table holds */

	/* IB CM, passive side (roce_cm.c): the RTS attributes the QP takes
	 * on its first request packet in RTR when that comes before the RTU
	 * (IBA 12.9.7: traffic on the QP establishes communication) */
	bool comm_est_armed;
	int comm_est_mask;        /* within ROCE_COMM_EST_MASK */
	struct {                  /* what of ibv_qp_attr that mask can name */
		uint32_t sq_psn;
		uint8_t timeout, retry_cnt, rnr_retry, max_rd_atomic;
	} comm_est;

	struct roce_req req;
	struct roce_resp resp;

	/* congestion control (roce_cc.c) */
	struct rnic_cnp_limiter cnp;   /* notification point: CNPs we send */
	struct rnic_dcqcn dcqcn;       /* reaction point (rw->cc.dcqcn) */
	int64_t tokens;                /* pacing bucket, bytes (may dip below 0) */
	uint64_t tokens_tsc;           /* when it was last filled */
	struct rnic_timer pace_timer;  /* wakes the requester when tokens return */
	struct roce_trace *trace; /* RNIC_ROCE_DEBUG only: by the first event */

	/* STag migration (seed 000): a request whose R_Key another port
	 * generated waits for the control component; it and every request
	 * packet behind it are parked, then run again in order */
	struct rnic_stag_mig mig;
	volatile bool mig_wait;
	bool mig_answered;
	uint16_t park_n;
	struct roce_parked {
		struct rte_mbuf *m;
		uint32_t bth_off, pay_off;
		uint8_t port;
	} *park;                  /* ROCE_PARK entries, by the first parked packet */
};

static inline struct roce_qp *rq_of(struct rnic_qp *qp) { return qp->tp; }

/* roce_qp.c: packets ----------------------------------------------------- */

/*
 * A new packet for @p rq: BTH filled (opcode, @p psn, AckReq, SE, pad for
 * @p paylen), extended headers zeroed and at *@p hdr, payload room of
 * @p paylen bytes at *@p pay, the ICRC room at the end. @return NULL when
 * no mbuf is free (counted).
 */
struct rte_mbuf *roce_pkt_new(struct roce_qp *rq, uint8_t opcode, uint32_t psn,
			      bool ackreq, bool se, uint32_t paylen, uint8_t **hdr,
			      uint8_t **pay);
/* Send @p m (from roce_pkt_new) to the QP's peer; the ICRC is computed
 * once the IPv4 header is final. */
void roce_pkt_send(struct roce_qp *rq, struct rte_mbuf *m);
/* Send @p m at once (the worker's transmit buffers are flushed) and tell
 * whether it left: -EAGAIN when the port refused it (tail-dropped at a
 * full transmit queue, or no room to wait for ARP), 0 otherwise. */
int roce_pkt_send_now(struct roce_qp *rq, struct rte_mbuf *m);
/* Whether the QP's packets would leave at once: their next hop resolved
 * (IPv4: ARP; IPv6 is not asked, its frames wait in ND's queue). Asks the
 * ARP table only when the last answer has expired. */
bool roce_next_hop_ready(struct roce_qp *rq);
/* Have the worker's poller call roce_qp_pump() for @p rq. */
void roce_qp_activate(struct roce_qp *rq);
/* A fatal error on the worker: QP to ERR, the requester's work completes
 * with @p status first (the oldest WQE, IBV_WC_SUCCESS for none) and the
 * rest with IBV_WC_WR_FLUSH_ERR, receives flushed. */
void roce_qp_fatal(struct roce_qp *rq, enum ibv_wc_status status);

/* IB CM (any thread): let the first request packet that reaches @p qp in
 * RTR move it to RTS with @p a / @p mask (RTS attributes; those outside
 * ROCE_COMM_EST_MASK are not kept) before the responder sees it. A later
 * modify_qp to RTS disarms it. */
#define ROCE_COMM_EST_MASK (IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | \
			    IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC)
void roce_qp_arm_comm_est(struct rnic_qp *qp, const struct ibv_qp_attr *a, int mask);

/* roce_ud.c: rnic_qp_tops.ah_resolve */
int roce_ah_resolve(const struct rnic_stack *st, const struct ibv_ah_attr *attr,
		    struct rnic_ah *ah);

/* Copy between an SGE list and a flat buffer at @p off. */
void roce_sgl_copy_out(const struct ibv_sge *sge, uint32_t nsge, uint32_t off,
		       uint8_t *dst, uint32_t len);
void roce_sgl_copy_in(const struct ibv_sge *sge, uint32_t nsge, uint32_t off,
		      const struct rte_mbuf *m, uint32_t moff, uint32_t len);
/* Copy @p len bytes from offset @p moff of an mbuf chain to @p dst. */
void roce_mbuf_copy(const struct rte_mbuf *m, uint32_t moff, uint8_t *dst, uint32_t len);

/* Send @p m (from roce_pkt_new) to @p dst from @p src (NULL: the QP's
 * source), TOS / traffic class @p tos. */
void roce_pkt_send_to(struct roce_qp *rq, struct rte_mbuf *m, const struct rnic_addr *src,
		      const struct rnic_addr *dst, uint8_t tos);
/* roce_pkt_send_to() with an address vector's IPv6 flow label @p flow (0:
 * the QP pair's) and hop limit / IPv4 TTL @p hops (0: 64): a UD AH's. */
void roce_pkt_send_av(struct roce_qp *rq, struct rte_mbuf *m, const struct rnic_addr *src,
		      const struct rnic_addr *dst, uint8_t tos, uint32_t flow, uint8_t hops);

/* roce_cc.c: ECN, CNPs, DCQCN ---------------------------------------------------- */
/* Copy the stack's congestion-control configuration into @p rw. */
void roce_cc_worker_init(struct roce_worker *rw, const struct rnic_roce_cc_cfg *cfg);
/* On the QP's worker at RTR: CNP pacing and, with DCQCN, the rate and
 * the bucket start over. */
void roce_cc_qp_init(struct roce_qp *rq);
/* Stop the pacing timer (QP stopping). */
void roce_cc_qp_stop(struct roce_qp *rq);
/* An RC packet for @p rq arrived marked CE: send the peer a CNP unless
 * one left less than cnp_interval_us ago. */
void roce_cc_ce(struct roce_qp *rq);
/* A CNP for @p rq: cut its rate (DCQCN on) or count it ignored. */
void roce_cc_cnp_in(struct roce_qp *rq);
/* TOS of the QP's RC packets: its traffic class, ECT(0) with ECN on. */
static inline uint8_t roce_cc_tos(const struct roce_qp *rq)
{
	return rq->rw->cc.ecn ? (uint8_t)((rq->tos & ~RNIC_ECN_MASK) | RNIC_ECN_ECT0) : rq->tos;
}
/*
 * DCQCN on: may the requester send a packet of @p bytes now? When the
 * bucket is empty the pacing timer is armed for when it refills (the QP
 * is activated then) and false returned.
 */
bool roce_cc_tx_wait(struct roce_qp *rq, uint32_t bytes);
/* DCQCN on: a packet of @p bytes left (bucket and byte counter). */
void roce_cc_tx_sent(struct roce_qp *rq, uint32_t bytes);

/* roce_ud.c: unreliable datagrams --------------------------------------------- */
/* Send one datagram now and complete it. @return 0 or -errno. */
int roce_ud_post(struct roce_qp *rq, const struct ibv_send_wr *wr);
/* A UD Send for this QP: Q_Key check, a receive with the GRH, completion. */
void roce_ud_input(struct roce_qp *rq, const struct rnic_roce_pkt *pkt,
		   const struct rte_mbuf *m, uint32_t pay_off, const struct roce_l3 *l3);

/* roce_req.c ----------------------------------------------------------------- */
/* Record an event in the QP's trace (RNIC_ROCE_DEBUG), and print it. */
void roce_trace(struct roce_qp *rq, enum roce_trace_kind kind, uint32_t psn);
void roce_trace_print(const struct roce_qp *rq, FILE *f);
void roce_req_init(struct roce_qp *rq, uint32_t sq_psn);
bool roce_req_has_room(struct roce_qp *rq);
int roce_req_post(struct roce_qp *rq, const struct ibv_send_wr *wr);
/* Emit up to @p budget packets. @return packets emitted. */
unsigned roce_req_pump(struct roce_qp *rq, unsigned budget);
/* Go back to @p psn and resend from there. */
void roce_req_rewind(struct roce_qp *rq, uint32_t psn);
/* (Re)arm or stop the retransmission timer after progress. */
void roce_req_timer_update(struct roce_qp *rq);
/* After a port failover: send again from the first unacknowledged PSN. */
void roce_req_resend_now(struct roce_qp *rq);
/* Wait the RNR timer of @p code, then resend from @p psn. */
void roce_req_rnr_wait(struct roce_qp *rq, uint32_t psn, unsigned code);
/* Complete every WQE with @p status (the first) and FLUSH_ERR (the rest). */
void roce_req_flush(struct roce_qp *rq, enum ibv_wc_status first);
/* Microseconds of an RNR timer code (IBTA 9.7.5.2.8, table 45). */
uint32_t roce_rnr_us(unsigned code);

/* roce_comp.c ---------------------------------------------------------------- */
void roce_comp_input(struct roce_qp *rq, const struct rnic_roce_pkt *pkt,
		     const struct rte_mbuf *m, uint32_t pay_off);

/* roce_resp.c ---------------------------------------------------------------- */
void roce_resp_init(struct roce_qp *rq, uint32_t rq_psn);
/* @p port: the port the packet arrived on (its R_Key is looked up there). */
void roce_resp_input(struct roce_qp *rq, unsigned port, const struct rnic_roce_pkt *pkt,
		     const struct rte_mbuf *m, uint32_t pay_off);
/* Emit owed ACKs and queued responses, up to @p budget packets. */
unsigned roce_resp_pump(struct roce_qp *rq, unsigned budget);
/* Flush the receive in progress (QP going to ERR). */
void roce_resp_flush(struct roce_qp *rq);
/* Free the packets parked for a migration query (destroy). */
void roce_resp_unpark(struct roce_qp *rq);
/* Free what the responder allocated on first use (destroy). */
void roce_resp_fini(struct roce_qp *rq);

#endif
