/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rnic-perf: shared declarations of the benchmark's parts.
 *
 *   main.c    command line, the run's report (text or JSON)
 *   setup.c   verbs objects of one side; --loopback's two stacks and how
 *             their QPs are connected (iWARP through the CM, RoCE out of band)
 *   remote.c  --server / --client over real ports
 *   run.c     the test loops: bandwidth, latency, CQ polling
 *   verify.c  --verify: every completion's sequence, each Send's payload
 *   rebind.c  the thread that re-binds CQs to other completion handlers
 *
 * A run is a set of QP ends. The requester end of a QP pair issues the
 * test's operations; the responder end answers where the test needs it
 * (write_lat, send_lat) or only keeps receives posted (send_bw). --loopback
 * drives both ends of every pair from the main thread; --server and
 * --client drive one end each.
 *
 * --loopback runs to completion by default: once the QPs are connected,
 * stack B (the requesters') stops its worker lcores and the main thread
 * runs B's worker loop between its verbs calls, while stack A's workers
 * keep their own lcores. Two threads then share the machine instead of
 * three, which on a 2-CPU machine is the difference between a worker that
 * runs when it has work and one that waits for the scheduler (docs/
 * benchmarks.md). --drive threaded keeps every worker on its own lcore;
 * --drive one runs both stacks on the main thread (one CPU: the cost of a
 * message on both sides, with no cross-CPU traffic and little sensitivity
 * to other load on the machine).
 */
#ifndef RNIC_PERF_H
#define RNIC_PERF_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include <infiniband/verbs.h>

#include "rnic/rnic.h"
#include "rnic/rnic_cm.h"
#include "rnic/rnic_verbs.h"

#define PERF_MAX_QPS 100000
/* --loopback above this many QPs: the ends of a side carve their buffers
 * out of one allocation under one MR (a port has 65536 STags, and a page
 * per end would be most of the memory measured) */
#define PERF_SLAB_QPS 256
#define PERF_MAX_CQS 64
#define PERF_STALL_S 30          /* no completion for this long: give up */
#define PERF_RD_ATOMIC 16        /* IRD/ORD: Reads and atomics in flight */
#define PERF_CM_WAIT_MS 30000    /* connection setup steps (10 s was short on a loaded 2-CPU machine) */
#define PERF_DEFAULT_PORT 18520  /* --tcp-port, and rdma-gateway's [responder.perf] */
/* --loopback: the ring ports' MTU unless --lo-mtu says otherwise. The
 * largest a port takes: the link is memory, like Linux's lo (MTU 65536). */
#define PERF_LO_MTU 9000
/* perf_serve() with adopted options: what one client's run may ask for */
#define PERF_SERVE_MAX_SIZE (64u << 20)
#define PERF_SERVE_MAX_BYTES (256ull << 20)   /* QPs x size */

/* Exit statuses. */
#define PERF_EXIT_FAIL 1         /* a setup step or a completion failed */
#define PERF_EXIT_USAGE 2        /* bad command line */
#define PERF_EXIT_UNSUPPORTED 3  /* the transport refuses the test's operation */

enum perf_test {
	PERF_WRITE_BW,
	PERF_WRITE_LAT,
	PERF_READ_BW,
	PERF_READ_LAT,
	PERF_SEND_BW,
	PERF_SEND_LAT,
	PERF_ATOMIC_BW,
	PERF_NTESTS,
};

/* --loopback: who runs the stacks' worker loops once the QPs are up. */
enum perf_drive {
	PERF_DRIVE_INLINE,               /* the main thread runs B's, A's have lcores */
	PERF_DRIVE_ONE,                  /* the main thread runs both stacks' */
	PERF_DRIVE_THREADED,             /* every worker on its own lcore */
	PERF_DRIVE_SPLIT,                /* a thread per stack: its worker and its ends */
};

extern const char *const perf_drive_names[];

/* What the command line asked for. */
struct perf_opts {
	enum perf_test test;
	enum rnic_transport transport;   /* IWARP or ROCE */
	bool any_transport;              /* perf_serve() adopting: the client's */
	unsigned idle_s;                 /* a server: end the run when its QPs moved
					    nothing for this long (0: wait) */
	uint32_t size;                   /* bytes per message */
	uint64_t iters;                  /* operations per QP (0 with --duration) */
/* Without -n a bandwidth test runs PERF_BW_ITERS operations a QP; above
 * PERF_BW_SPLIT_QPS QPs, PERF_BW_ITERS * PERF_BW_SPLIT_QPS in all, split
 * evenly (at least one a QP): 100,000 QPs run 5 each, not 5000. */
#define PERF_BW_ITERS 5000u
#define PERF_BW_SPLIT_QPS 100u
/* Work requests per ibv_post_send of a bandwidth test, at most (the
 * default; --post-list, as perftest's, lowers it: perftest posts one). */
#define PERF_POST_LIST_MAX 32u
	double duration;                 /* seconds, 0 with -n */
	unsigned qps;
	unsigned tx_depth;               /* send queue entries in flight per QP */
	bool tx_depth_set;               /* --tx-depth given (else capped by -n) */
	unsigned cq_mod;                 /* --cq-mod: one signaled in N (0: derived) */
	unsigned post_list;              /* --post-list: WRs per ibv_post_send */
	unsigned cqs;                    /* CQs per side, QP i on CQ i % cqs */
	unsigned rebind_ms;              /* 0: no re-binding */
	bool json;
	bool verify;                     /* count every completion, check payloads */
	bool loopback;
	bool server;                     /* --server; neither: --client */
	struct rnic_addr server_addr;    /* --client ADDR: IPv4, or IPv6 (iWARP) */
	uint16_t tcp_port;               /* CM listener / RoCE exchange */
	unsigned ports;                  /* --loopback: ring pairs (1 or 2) */
	int fail_port;                   /* port taken down mid-run, -1: none */
	uint16_t lo_mtu;                 /* --loopback: the ring ports' MTU (0: PERF_LO_MTU) */
	bool lo_sw_csum;                 /* --loopback: TCP checksums in software */
	unsigned fail_at;                /* ... when this percent of the ops completed */
	enum perf_drive drive;           /* --loopback: which workers the main thread runs */
};

/* One stack's device and the objects its QP ends share. */
struct perf_side {
	struct rnic_stack *st;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq[PERF_MAX_CQS];
	unsigned ncq;
	struct rnic_cm_channel *ch;      /* iWARP only */
	struct rnic_cm_id *listener;     /* server only */
	/* --loopback, iWARP: listeners on tcp_port + k, each for
	 * PERF_LO_PORT_CONNS pairs (one source address has 28,232
	 * ephemeral ports towards one destination port) */
#define PERF_LO_PORT_CONNS 25000u
#define PERF_LO_LISTENERS ((PERF_MAX_QPS + PERF_LO_PORT_CONNS - 1) / PERF_LO_PORT_CONNS)
	struct rnic_cm_id *lo_listener[PERF_LO_LISTENERS];
	bool watch;                      /* server: watch ch for the client's close */
	unsigned conns, closed;          /* server: connections, DISCONNECTED seen
					    (atomics: rdma-gateway's status reads them) */
	bool peer_gone;                  /* server: the client closed them all */
	struct perf_arm *arm;            /* --verify: one per CQ, NULL otherwise */
	uint8_t *slab;                   /* --loopback, many QPs: every end's buffer */
	size_t slab_len, slab_used;
	struct ibv_mr *slab_mr;          /* ... and its one MR */
};

/* --verify keeps every CQ armed, so that re-binds move live events: the
 * handler (on a worker) counts the event and asks the main thread to arm
 * the CQ again. */
struct perf_arm {
	uint64_t events;                 /* written by the handler's worker */
	int pending;                     /* 1 while armed; the handler clears it */
};

/* --verify: which sequence numbers of one queue have completed. */
struct perf_seqlog {
	uint8_t *bits;                   /* one bit per sequence number */
	uint64_t cap;                    /* bits allocated */
	uint64_t next;                   /* highest sequence seen + 1 */
	uint64_t unique;                 /* distinct sequences seen */
};

/* One end of a QP pair. Its buffer holds two regions of the message size:
 * [0, size) is what it sends or reads into, [size, 2 size) what the peer
 * writes into or reads from. */
struct perf_end {
	struct perf_side *side;
	unsigned idx;                    /* position in the run's end list */
	bool requester;
	struct ibv_qp *qp;
	struct ibv_cq *cq;
	struct rnic_cm_id *id;           /* iWARP, and RoCE's control connection */
	struct ibv_qp *ctl_qp;           /* RoCE remote: the control connection's */
	uint8_t *buf;
	size_t region;                   /* bytes in each of the two regions */
	struct ibv_mr *mr;
	bool shared_buf;                 /* buf and mr are the side's slab's */
	uint64_t raddr;                  /* the peer's second region */
	uint32_t rkey;
	uint32_t psn;                    /* RoCE: first PSN we send */
	bool inline_ok;                  /* size fits max_inline_data */
	/* --verify: a Send's payload must stay put until it completes and a
	 * receive's until it is checked, so each in-flight one has its slot */
	uint8_t *send_slots, *recv_slots;
	unsigned nsend_slots, nrecv_slots;
	struct perf_seqlog sends, recvs;
	struct perf_end *peer;           /* --loopback: the other end */

	uint64_t total;                  /* operations to issue (bw: may shrink) */
	uint64_t posted, completed;      /* send queue, by sequence */
	uint64_t recv_posted, recv_done;
	uint64_t iter;                   /* latency: exchanges done */
	bool waiting;                    /* latency: an exchange is under way */
	bool ready;                      /* on the sparse run's list to step */
	double t_post;                   /* latency: when it started */
};

/* The figures of a run. */
struct perf_result {
	uint64_t ops;                    /* operations completed, all QPs */
	double seconds;
	double *lat_us;                  /* latency samples, one per exchange */
	uint64_t nlat, lat_cap;
	uint64_t rebinds;                /* done by the re-bind thread */
	double rebind_us_sum, rebind_us_max;   /* rnic_modify_cq_handler() calls */
	bool unsupported;                /* the transport refused the operation */
	/* --verify */
	uint64_t completions;            /* every completion polled, duplicates too */
	uint64_t expected;               /* what the posted work should produce */
	uint64_t duplicates, missing, out_of_order, bad_payload;
	uint64_t events;                 /* CQ events delivered to the handlers */
	bool hugepages;                  /* --loopback: the pools are on hugepages */
	uint64_t zc_fpdus;               /* --loopback iWARP: data FPDUs sent zero-copy */
	bool stalled;                    /* the run ended on the stall timeout */
	/* --ports 2, --fail-port */
	uint64_t migrated_stags;         /* imports installed, every port of both stacks */
	uint64_t mig_queries;            /* migration queries asked */
	uint64_t mig_query_us_max;       /* the slowest, asked to answered */
	double failover_ms;              /* link down -> first completion after, -1: none */
	uint64_t written_checked;        /* write_bw --verify: target slots compared */
	/* perf_serve(): the served QPs' counters (rnic_qp_stats) at the end */
	uint64_t bytes_in, bytes_out, ops_in;
	/* --server/--client: frames the stack's workers redirected to the
	 * worker that owns their flow or QP (rnic_stack_stats) */
	uint64_t redirected;
	uint64_t redirected_in_run;      /* ... of them, while the test ran (after
					    the connections, and ARP, were up) */
	/* --loopback: memory of the QPs (both stacks' rte_malloc heaps and the
	 * C heap, after minus before), per QP (2 x --qps of them) */
	bool mem_valid;
	double qp_create_bytes;          /* creating it (object, queues, transport state) */
	double qp_connect_bytes;         /* connecting it (iWARP: TCB, endpoint, CM id) */
	double qp_queue_bytes;           /* of which its queue entries (probe QPs) */
	double setup_s;                  /* creating and connecting every QP */
	/* --loopback: one empty loop of the requesting stack's workers, ns,
	 * with every QP connected and idle (0: not measured) */
	double idle_loop_ns;
	double idle_loop_min_ns;         /* of the fastest batch of 256 loops */
};

/* The payload of a Send under --verify. */
struct perf_stamp {
	uint32_t end;                    /* the sending end's index */
	uint32_t pad;
	uint64_t seq;                    /* its send sequence number */
};

/* The re-bind thread's state. */
struct perf_rebinder {
	pthread_t thread;
	struct perf_side *sides;
	unsigned nsides;
	unsigned ms;                     /* period */
	uint64_t rng;
	int stop;                        /* set by the main thread */
	int err;                         /* an errno from rnic_modify_cq_handler */
	uint64_t count;
	double us_sum, us_max;
};

extern const char *const perf_test_names[PERF_NTESTS];

static inline bool perf_is_lat(enum perf_test t)
{
	return t == PERF_WRITE_LAT || t == PERF_READ_LAT || t == PERF_SEND_LAT;
}

/* Receives each end keeps posted (the Send tests only). */
unsigned perf_rx_depth(const struct perf_opts *o);

double perf_now(void);

/* verify.c: write_bw --verify writes a pattern of (end, seq) into slot
 * seq % tx_depth of the peer; the last write of every slot is compared at
 * the end. */
void perf_write_pattern(uint8_t *p, uint32_t size, unsigned end, uint64_t seq);
uint8_t *perf_write_target(struct perf_end *e, uint64_t seq);
/* Between processes: the address at the peer Write @p seq of @p e lands in
 * (the peer's slot area, which follows its second region at e->raddr). */
uint64_t perf_write_remote_target(const struct perf_end *e, uint64_t seq);
void perf_verify_writes(struct perf_result *r, const struct perf_opts *o,
			const struct perf_end *ends, unsigned nends);

/* run.c: the stacks of the run (--fail-port takes a port of each down). */
void perf_set_stacks(struct rnic_stack *a, struct rnic_stack *b);

/* run.c: one send WR in this many is signaled. */
unsigned perf_cq_mod(const struct perf_opts *o);

/* setup.c */
int perf_side_open(struct perf_side *s, struct rnic_stack *st, const struct perf_opts *o);
int perf_side_cqs(struct perf_side *s, const struct perf_opts *o);
int perf_side_cqs_fini(struct perf_side *s);
int perf_side_init(struct perf_side *s, struct rnic_stack *st, const struct perf_opts *o);
int perf_end_init(struct perf_end *e, struct perf_side *s, unsigned idx, bool requester,
		  const struct perf_opts *o);
int perf_side_fini(struct perf_side *s);
int perf_end_fini(struct perf_end *e);
int perf_post_recvs(struct perf_end *e, unsigned n);
int perf_cm_expect(struct rnic_cm_channel *ch, enum rnic_cm_event_type t,
		   struct rnic_cm_event *ev);
int perf_roce_connect(struct perf_end *e, const union ibv_gid *dgid, uint32_t dqpn,
		      uint32_t rq_psn);
/* --loopback run to completion: perf_run() drives the workers of @p a and
 * @p b itself (NULL: none). */
void perf_set_inline(struct rnic_stack *a, struct rnic_stack *b);

/* One pass of the inline stack's workers. @return false when there is
 * none (the workers run on their lcores). */
bool perf_drive(void);

int perf_loopback(const struct perf_opts *o, const struct rnic_config *common,
		  struct perf_result *r);

/* remote.c */
int perf_remote(const struct perf_opts *o, struct rnic_config *cfg, struct perf_result *r);

/*
 * Serve one client's run on @p s: a side opened with perf_side_open() whose
 * listener (s->listener, on s->ch) is listening. Waits for the first
 * request (until rnic_request_stop()), accepts the client's QP pairs, makes
 * the run's CQs, answers until the client closes them all, and frees the
 * run's QPs and CQs again; the side stays open for the next run. With
 * @p adopt the test, size and QP count come from the client's request
 * (written into @p o, whose transport must match the client's unless
 * o->any_transport, which takes the client's too); otherwise
 * they must equal @p o's. Requests that come during the run are refused
 * ("busy"). @return 0, or PERF_EXIT_FAIL (the reason printed).
 */
int perf_serve(struct perf_side *s, struct perf_opts *o, bool adopt, struct perf_result *r);

/* opts.c: the command line's defaults (write_bw over iWARP, one QP, 128
 * deep, PERF_DEFAULT_PORT). */
void perf_opts_default(struct perf_opts *o);

/* verify.c */
unsigned perf_verify_slots(const struct perf_opts *o);
int perf_verify_init(struct perf_end *e, const struct perf_opts *o);
int perf_verify_send(struct perf_result *r, struct perf_end *e, uint64_t seq);
int perf_verify_recv(struct perf_result *r, struct perf_end *e, uint64_t seq,
		     const struct ibv_wc *wc, uint32_t size);
void perf_stamp(struct perf_end *e, uint64_t seq);
uint8_t *perf_send_buf(struct perf_end *e, uint64_t seq);
uint8_t *perf_recv_buf(struct perf_end *e, uint64_t seq);
void perf_verify_finish(struct perf_result *r, const struct perf_opts *o,
			const struct perf_end *ends, unsigned nends);
bool perf_verified(const struct perf_result *r);

/* rebind.c */
int perf_rebind_start(struct perf_rebinder *rb, struct perf_side *sides, unsigned nsides,
		      unsigned ms);
void perf_rebind_stop(struct perf_rebinder *rb, struct perf_result *r);

/* run.c */
int perf_run(const struct perf_opts *o, struct perf_side *sides, unsigned nsides,
	     struct perf_end *ends, unsigned nends, struct perf_result *r);

/*
 * --drive split: like two hosts, each stack with its application on a CPU
 * of its own. The main thread runs stack @p b's worker loop and the ends
 * of sides[1] (the requesters); an lcore of its own runs stack @p a's and
 * the ends of sides[0]. Both stacks must be stopped (rnic_stack_stop()).
 * @return as perf_run().
 */
int perf_run_split(const struct perf_opts *o, struct perf_side sides[2],
		   struct perf_end *ends, unsigned nends, struct perf_result *r,
		   struct rnic_stack *a, struct rnic_stack *b);

#endif
