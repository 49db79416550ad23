/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rnic-perf: verbs objects, and the --loopback wiring.
 *
 * --loopback builds two stacks in this process, joined back to back by a
 * net_ring pair (as the integration tests do): stack A (192.0.2.1) holds
 * the responder ends, stack B (192.0.2.2) the requester ends. iWARP QPs
 * connect through the CM (B connects, A accepts); RoCE QPs are connected
 * out of band, since both ends live here: INIT, then RTR towards the peer's
 * GID 1 (::ffff:its IPv4) and QPN, then RTS.
 *
 * --ports 2 adds a second ring pair, port 1 of each stack (A 192.0.2.3,
 * B 192.0.2.4, the same /24): the QPs connect through port 0, and the
 * memory they write is registered on port 0. --fail-port 0 takes the first
 * pair down mid-run: each stack's port 1 takes over its port 0 address,
 * the connections move, and the first tagged segment through port 1 for a
 * port-0 STag migrates it (seed 000).
 */
#include <errno.h>
#include <inttypes.h>
#include <malloc.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_malloc.h>

#include "iwarp/iwarp.h"
#include "rnic/rnic_roce.h"

#include "perf.h"

#define LO_RING "perf"
#define LO_A_IP 0xc0000201u     /* 192.0.2.1: responders */
#define LO_B_IP 0xc0000202u     /* 192.0.2.2: requesters */
#define LO_RING1 "perf1"        /* --ports 2: the second pair */
#define LO_A1_IP 0xc0000203u
#define LO_B1_IP 0xc0000204u
#define LO_MBUFS 32767
/* A port's pool holds at most this many bytes of frames: the pool is
 * cycled through (the mempool's shared ring is FIFO: in the split layout
 * the other thread frees our frames into its own cache, and ours refills
 * from the ring), so every frame built touches lines last used a whole
 * pool ago. At MTU 9000 32767 mbufs are 300 MB (64 KiB Writes: 36.7
 * against 34.4 Gbit/s with 12000 mbufs); 128 MB (13,547 mbufs) still cost
 * RoCE a quarter of its 64 B rate: split layout, quiet machine, 128 MB
 * against 16 MB (the floor below, 4,098 mbufs, then applies): RoCE 64 B
 * 3.67/4.01 against 5.05/4.74 M/s, 64 KiB 34.0/34.8 against 47.1/45.0
 * Gbit/s; iWARP 64 B 7.20/7.61 against 7.41/7.53, 64 KiB 44.2/43.8
 * against 48.8/45.1. */
#define LO_POOL_BYTES (16u << 20)
#define LO_MBUF_EXTRA 448u      /* Ethernet, headroom and the mbuf header */

/* The ring ports' pool size at @p mtu: LO_POOL_BYTES of frames, at most
 * LO_MBUFS. */
static unsigned lo_mbufs(unsigned mtu, unsigned qps, unsigned workers)
{
	unsigned n = LO_POOL_BYTES / (mtu + LO_MBUF_EXTRA);
	n = n < LO_MBUFS ? n : LO_MBUFS;
	/* but never fewer than the connections can hold: an iWARP
	 * connection stages its FPDUs in one mbuf and TCP needs another to
	 * send it; with more connections than mbufs every one held a stage
	 * and none could send (30,000 pairs at MTU 9000 hung), nor fewer
	 * than the port's queues and worker caches take (the port refuses
	 * less: 5,888 for two workers) */
	unsigned per_conns = 2 * qps + 4096 * (workers ? workers : 1);
	return n > per_conns ? n : per_conns;
}

unsigned perf_rx_depth(const struct perf_opts *o)
{
	if (o->test == PERF_SEND_BW)
		return o->tx_depth < 512 ? 512 : o->tx_depth;
	return o->test == PERF_SEND_LAT ? 16 : 0;
}

/* Device, PD and (iWARP, or any remote run) the CM channel; no CQs yet.
 * @return 0 or -1. */
int perf_side_open(struct perf_side *s, struct rnic_stack *st, const struct perf_opts *o)
{
	s->st = st;
	s->ctx = rnic_open_device(st);
	if (s->ctx == NULL) {
		fprintf(stderr, "rnic-perf: cannot open the device: %s\n", strerror(errno));
		return -1;
	}
	s->pd = rnic_alloc_pd(s->ctx);
	if (s->pd == NULL) {
		fprintf(stderr, "rnic-perf: cannot allocate a PD: %s\n", strerror(errno));
		return -1;
	}
	/* iWARP QPs connect through the CM; remote RoCE runs its control
	 * connection there */
	if (o->transport == RNIC_TRANSPORT_IWARP || !o->loopback) {
		s->ch = rnic_cm_create_channel(s->ctx);
		if (s->ch == NULL) {
			fprintf(stderr, "rnic-perf: cannot create a CM channel: %s\n",
				strerror(errno));
			return -1;
		}
	}
	return 0;
}

/* The run's CQs, CQ k on handler k % handlers, sized for @p o (a server
 * that takes its options from the client makes them per run).
 * @return 0 or -1. */
int perf_side_cqs(struct perf_side *s, const struct perf_opts *o)
{
	unsigned per_cq = (o->qps + o->cqs - 1) / o->cqs;
	/* what one QP can have completed and not yet polled: its signaled
	 * sends in flight (one in cq_mod of tx_depth, and a chain's last) and
	 * its receives */
	unsigned mod = perf_cq_mod(o);
	long cqe = (long)per_cq * ((o->tx_depth + mod - 1) / mod + 2 + perf_rx_depth(o));

	int handlers = rnic_query_handlers(s->ctx);
	if (handlers < 1)
		handlers = 1;
	if (cqe > RNIC_MAX_CQE) {
		fprintf(stderr, "rnic-perf: %u QPs a CQ need %ld CQ entries, more than %d: "
			"raise --cqs or lower --tx-depth\n", per_cq, cqe, RNIC_MAX_CQE);
		return -1;
	}
	for (s->ncq = 0; s->ncq < o->cqs; s->ncq++) {
		s->cq[s->ncq] = rnic_create_cq(s->ctx, (int)cqe, NULL, NULL,
					       (int)(s->ncq % (unsigned)handlers));
		if (s->cq[s->ncq] == NULL) {
			fprintf(stderr, "rnic-perf: cannot create CQ %u: %s\n", s->ncq,
				strerror(errno));
			return -1;
		}
	}
	return 0;
}

/* Undo perf_side_cqs() once the run's QPs are gone. @return 0 or -1. */
int perf_side_cqs_fini(struct perf_side *s)
{
	int bad = 0;

	for (unsigned k = 0; k < s->ncq; k++)
		bad |= rnic_destroy_cq(s->cq[k]);
	s->ncq = 0;
	free(s->arm);
	s->arm = NULL;
	return bad ? -1 : 0;
}

int perf_side_init(struct perf_side *s, struct rnic_stack *st, const struct perf_opts *o)
{
	return perf_side_open(s, st, o) != 0 ? -1 : perf_side_cqs(s, o);
}

/* Undo perf_side_init() (and the listener): every CQ, channel, the PD and
 * the device, after the ends are gone. Prints what refused (still in use)
 * and @return 0 or -1. */
int perf_side_fini(struct perf_side *s)
{
	int bad = 0;

	if (s->listener != NULL)
		bad |= rnic_cm_destroy_id(s->listener);
	for (unsigned k = 0; k < PERF_LO_LISTENERS; k++)
		if (s->lo_listener[k] != NULL)
			bad |= rnic_cm_destroy_id(s->lo_listener[k]);
	if (s->ch != NULL)
		bad |= rnic_cm_destroy_channel(s->ch);
	bad |= perf_side_cqs_fini(s);
	if (s->slab_mr != NULL)
		bad |= rnic_dereg_mr(s->slab_mr);
	free(s->slab);
	if (s->pd != NULL)
		bad |= rnic_dealloc_pd(s->pd);
	if (s->ctx != NULL)
		bad |= rnic_close_device(s->ctx);
	memset(s, 0, sizeof(*s));
	if (bad)
		fprintf(stderr, "rnic-perf: teardown: a CQ, PD or channel was still in use\n");
	return bad ? -1 : 0;
}

/* Undo perf_end_init() and the connection: the CM id (an abortive close
 * when still connected), QPs, MR, buffers. @return 0 or -1. */
int perf_end_fini(struct perf_end *e)
{
	int bad = 0;

	if (e->id != NULL)
		bad |= rnic_cm_destroy_id(e->id);
	if (e->qp != NULL)
		bad |= rnic_destroy_qp(e->qp);
	if (e->ctl_qp != NULL)
		bad |= rnic_destroy_qp(e->ctl_qp);
	if (e->mr != NULL && !e->shared_buf)
		bad |= rnic_dereg_mr(e->mr);
	if (!e->shared_buf)
		free(e->buf);
	free(e->sends.bits);
	free(e->recvs.bits);
	memset(e, 0, sizeof(*e));
	if (bad)
		fprintf(stderr, "rnic-perf: teardown: a QP or MR refused to go\n");
	return bad ? -1 : 0;
}

static int perf_access(const struct perf_opts *o)
{
	int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;

	if (o->test == PERF_ATOMIC_BW)
		access |= IBV_ACCESS_REMOTE_ATOMIC;
	return access;
}

/* Bytes of one end's buffer: two regions and the --verify slots. */
static size_t end_len(const struct perf_opts *o)
{
	return (2 + (size_t)perf_verify_slots(o)) * (((size_t)o->size + 63) & ~(size_t)63);
}

/* One buffer and one MR for @p n ends of @p s (perf_end_bufs() carves
 * them). @return 0 or -1. */
static int perf_side_slab(struct perf_side *s, const struct perf_opts *o, unsigned n)
{
	size_t len = (size_t)n * end_len(o);

	s->slab = aligned_alloc(4096, (len + 4095) & ~(size_t)4095);
	if (s->slab == NULL) {
		fprintf(stderr, "rnic-perf: out of memory for %zu bytes of buffers\n", len);
		return -1;
	}
	memset(s->slab, 0, len);
	s->slab_len = len;
	s->slab_used = 0;
	s->slab_mr = rnic_reg_mr(s->pd, s->slab, len, perf_access(o));
	if (s->slab_mr == NULL) {
		fprintf(stderr, "rnic-perf: cannot register %zu bytes: %s\n", len,
			strerror(errno));
		return -1;
	}
	return 0;
}

/* Buffer and MR of one end (its own, or a share of the side's slab).
 * @return 0 or -1. */
static int perf_end_bufs(struct perf_end *e, struct perf_side *s, unsigned idx,
			 bool requester, const struct perf_opts *o)
{
	e->side = s;
	e->idx = idx;
	e->requester = requester;
	e->cq = s->cq[(idx / (o->loopback ? 2 : 1)) % s->ncq];
	e->region = ((size_t)o->size + 63) & ~(size_t)63;
	size_t len = end_len(o);
	if (s->slab != NULL && s->slab_used + len <= s->slab_len) {
		e->buf = s->slab + s->slab_used;
		s->slab_used += len;
		e->mr = s->slab_mr;
		e->shared_buf = true;
		return perf_verify_init(e, o);
	}
	e->buf = aligned_alloc(4096, (len + 4095) & ~(size_t)4095);
	if (e->buf == NULL) {
		fprintf(stderr, "rnic-perf: out of memory for %zu-byte buffers\n", e->region);
		return -1;
	}
	memset(e->buf, 0, len);
	if (perf_verify_init(e, o) != 0)
		return -1;
	e->mr = rnic_reg_mr(s->pd, e->buf, len, perf_access(o));
	if (e->mr == NULL) {
		fprintf(stderr, "rnic-perf: cannot register %zu bytes: %s\n", len,
			strerror(errno));
		return -1;
	}
	return 0;
}

static struct ibv_qp *end_qp(struct perf_side *s, struct ibv_cq *cq, const struct perf_opts *o,
			     unsigned send_wr, unsigned recv_wr, struct ibv_qp_init_attr *qa_out);

/* The QP of an end whose buffers are set; a RoCE QP is left in INIT, an
 * iWARP one in RESET (the CM moves it). @return 0 or -1. */
static int perf_end_qp(struct perf_end *e, const struct perf_opts *o)
{
	struct perf_side *s = e->side;
	int access = perf_access(o);
	struct ibv_qp_init_attr qa;

	e->qp = end_qp(s, e->cq, o, o->tx_depth, perf_rx_depth(o) ? perf_rx_depth(o) : 1, &qa);
	if (e->qp == NULL)
		return -1;
	e->inline_ok = o->size <= qa.cap.max_inline_data &&
		       (o->test == PERF_WRITE_BW || o->test == PERF_WRITE_LAT ||
			o->test == PERF_SEND_BW || o->test == PERF_SEND_LAT);
	e->psn = (uint32_t)lrand48() & 0xffffff;
	if (o->transport != RNIC_TRANSPORT_ROCE)
		return 0;
	struct ibv_qp_attr init = {
		.qp_state = IBV_QPS_INIT,
		.pkey_index = 0,
		.port_num = 1,
		.qp_access_flags = access & ~IBV_ACCESS_LOCAL_WRITE,
	};
	int rc = rnic_modify_qp(e->qp, &init,
				IBV_QP_STATE |
				IBV_QP_PKEY_INDEX |
				IBV_QP_PORT |
				IBV_QP_ACCESS_FLAGS);
	if (rc != 0) {
		fprintf(stderr, "rnic-perf: RoCE QP to INIT: %s\n", strerror(-rc));
		return -1;
	}
	return 0;
}

/* Buffer, MR and QP of one end; a RoCE QP is left in INIT, an iWARP one in
 * RESET (the CM moves it). @return 0 or -1. */
int perf_end_init(struct perf_end *e, struct perf_side *s, unsigned idx, bool requester,
		  const struct perf_opts *o)
{
	return perf_end_bufs(e, s, idx, requester, o) != 0 ? -1 : perf_end_qp(e, o);
}

/* An RC QP of @p o's transport on @p cq with these depths; @p qa_out gets
 * its capabilities. @return the QP or NULL (printed). */
static struct ibv_qp *end_qp(struct perf_side *s, struct ibv_cq *cq, const struct perf_opts *o,
			     unsigned send_wr, unsigned recv_wr, struct ibv_qp_init_attr *qa_out)
{
	struct ibv_qp_init_attr qa = {
		.send_cq = cq,
		.recv_cq = cq,
		.cap = {
			.max_send_wr = send_wr,
			.max_recv_wr = recv_wr,
			.max_send_sge = 1,
			.max_recv_sge = 1,
		},
		.qp_type = IBV_QPT_RC,
		.sq_sig_all = 0,
	};
	struct ibv_qp *qp = rnic_create_qp_transport(s->pd, &qa, o->transport);
	if (qp == NULL)
		fprintf(stderr, "rnic-perf: cannot create a %s QP: %s\n",
			o->transport == RNIC_TRANSPORT_ROCE ? "RoCE" : "iWARP", strerror(errno));
	*qa_out = qa;
	return qp;
}

/* Post @p n receives into the end's first region (--verify: each into its
 * slot). @return 0 or -1. */
int perf_post_recvs(struct perf_end *e, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		struct ibv_sge sge = {
			.addr = (uintptr_t)perf_recv_buf(e, e->recv_posted),
			.length = (uint32_t)e->region,
			.lkey = e->mr->lkey,
		};
		struct ibv_recv_wr wr = {
			.wr_id = ((uint64_t)e->idx << 40) | (1ull << 39) | e->recv_posted,
			.sg_list = &sge,
			.num_sge = 1,
		};
		struct ibv_recv_wr *bad;
		int rc = ibv_post_recv(e->qp, &wr, &bad);
		if (rc != 0) {
			fprintf(stderr, "rnic-perf: post receive: %s\n", strerror(rc));
			return -1;
		}
		e->recv_posted++;
	}
	return 0;
}

/* RoCE: RTR towards @p dgid / @p dqpn expecting @p rq_psn, then RTS
 * sending from e->psn. The path MTU is the largest that fits the port.
 * @return 0 or -1. */
int perf_roce_connect(struct perf_end *e, const union ibv_gid *dgid, uint32_t dqpn,
		      uint32_t rq_psn)
{
	struct ibv_port_attr pa;
	enum ibv_mtu mtu = IBV_MTU_1024;

	if (rnic_query_port(e->side->ctx, 1, &pa) == 0)
		mtu = pa.active_mtu;
	struct ibv_qp_attr rtr = {
		.qp_state = IBV_QPS_RTR,
		.path_mtu = mtu,
		.dest_qp_num = dqpn,
		.rq_psn = rq_psn,
		.max_dest_rd_atomic = PERF_RD_ATOMIC,
		.min_rnr_timer = 12,            /* 0.64 ms */
		.ah_attr = {
			.is_global = 1,
			.port_num = 1,
			.grh = { .dgid = *dgid, .sgid_index = 1, .hop_limit = 64 },
		},
	};
	int rc = rnic_modify_qp(e->qp, &rtr,
				RNIC_QP_RTR_MASK);
	if (rc != 0) {
		fprintf(stderr, "rnic-perf: RoCE QP to RTR: %s\n", strerror(-rc));
		return -1;
	}
	struct ibv_qp_attr rts = {
		.qp_state = IBV_QPS_RTS,
		/* 268 ms: eight expiries are 2 s of a starved worker, which a
		 * shared 2-core machine does produce (14, 67 ms, failed reads
		 * with RETRY_EXC_ERR there) */
		.timeout = 16,
		.retry_cnt = 7,
		.rnr_retry = 7,                 /* for ever */
		.sq_psn = e->psn,
		.max_rd_atomic = PERF_RD_ATOMIC,
	};
	rc = rnic_modify_qp(e->qp, &rts,
			    RNIC_QP_RTS_MASK);
	if (rc != 0) {
		fprintf(stderr, "rnic-perf: RoCE QP to RTS: %s\n", strerror(-rc));
		return -1;
	}
	return 0;
}

/* The next CM event, which must be @p t. @return 0 or -1. */
int perf_cm_expect(struct rnic_cm_channel *ch, enum rnic_cm_event_type t,
		   struct rnic_cm_event *ev)
{
	int rc = rnic_cm_get_event(ch, ev, PERF_CM_WAIT_MS);
	if (rc != 0) {
		fprintf(stderr, "rnic-perf: no %s within %d ms\n", rnic_cm_event_str(t),
			PERF_CM_WAIT_MS);
		return -1;
	}
	if (ev->type != t) {
		fprintf(stderr, "rnic-perf: expected %s, got %s (status %d)\n",
			rnic_cm_event_str(t), rnic_cm_event_str(ev->type), ev->status);
		return -1;
	}
	return 0;
}

/* iWARP: connect every requester ends[2i] to responder ends[2i + 1]
 * through the CM, up to LO_CONNECT_WINDOW at once: the active side waits
 * rts_delay_us (50 ms, for siw) before RTS, which one connection after the
 * other makes 20 a second. The connect's private data is the pair's index,
 * so the listener's side knows which responder accepts. @return 0 or -1. */
#define LO_CONNECT_WINDOW 1024
static int lo_connect_iwarp_all(struct perf_end *ends, unsigned qps, const struct perf_opts *o)
{
	struct perf_side *a = ends[1].side, *b = ends[0].side;
	unsigned next = 0, up_a = 0, up_b = 0;
	double idle_since = perf_now();

	while (up_a < qps || up_b < qps) {
		while (next < qps && next - up_b < LO_CONNECT_WINDOW) {
			struct perf_end *q = &ends[2 * next], *r = &ends[2 * next + 1];
			uint32_t idx = next;
			struct rnic_cm_conn_param cp = {
				.private_data = &idx,
				.private_data_len = sizeof(idx),
				.responder_resources = PERF_RD_ATOMIC,
				.initiator_depth = PERF_RD_ATOMIC,
			};
			struct ibv_qp_attr init = { .qp_state = IBV_QPS_INIT };
			int rc = rnic_modify_qp(q->qp, &init, IBV_QP_STATE);
			if (rc == 0)
				rc = rnic_modify_qp(r->qp, &init, IBV_QP_STATE);
			if (rc != 0) {
				fprintf(stderr, "rnic-perf: iWARP QP to INIT: %s\n", strerror(-rc));
				return -1;
			}
			if (perf_post_recvs(q, perf_rx_depth(o)) != 0 ||
			    perf_post_recvs(r, perf_rx_depth(o)) != 0)
				return -1;
			if (rnic_cm_create_id(b->ch, q, &q->id) != 0 ||
			    rnic_cm_connect(q->id, q->qp, LO_A_IP,
					    (uint16_t)(o->tcp_port + next / PERF_LO_PORT_CONNS),
					    &cp) != 0) {
				fprintf(stderr, "rnic-perf: CM connect %u failed\n", next);
				return -1;
			}
			next++;
		}
		struct rnic_cm_event ev;
		bool got = false;
		if (rnic_cm_get_event(a->ch, &ev, 0) == 0) {
			got = true;
			uint32_t idx;
			if (ev.type == RNIC_CM_EVENT_CONNECT_REQUEST &&
			    ev.private_data_len >= sizeof(idx)) {
				memcpy(&idx, ev.private_data, sizeof(idx));
				struct perf_end *r = idx < next ? &ends[2 * idx + 1] : NULL;
				struct rnic_cm_conn_param cp = {
					.responder_resources = PERF_RD_ATOMIC,
					.initiator_depth = PERF_RD_ATOMIC,
				};
				if (r == NULL || r->id != NULL) {
					fprintf(stderr, "rnic-perf: a connect request for pair %u\n",
						idx);
					return -1;
				}
				r->id = ev.id;
				if (rnic_cm_accept(r->id, r->qp, &cp) != 0) {
					fprintf(stderr, "rnic-perf: CM accept failed\n");
					return -1;
				}
			} else if (ev.type == RNIC_CM_EVENT_ESTABLISHED) {
				up_a++;
			} else {
				fprintf(stderr, "rnic-perf: listener side: %s (status %d)\n",
					rnic_cm_event_str(ev.type), ev.status);
				return -1;
			}
		}
		if (rnic_cm_get_event(b->ch, &ev, 0) == 0) {
			got = true;
			if (ev.type != RNIC_CM_EVENT_ESTABLISHED) {
				fprintf(stderr, "rnic-perf: connecting side: %s (status %d)\n",
					rnic_cm_event_str(ev.type), ev.status);
				return -1;
			}
			up_b++;
		}
		if (got) {
			idle_since = perf_now();
			continue;
		}
		if (perf_now() - idle_since > PERF_CM_WAIT_MS / 1e3) {
			fprintf(stderr, "rnic-perf: no CM event within %d ms (%u of %u connected)\n",
				PERF_CM_WAIT_MS, up_b, qps);
			return -1;
		}
		struct pollfd p[2] = {
			{ .fd = rnic_cm_channel_fd(a->ch), .events = POLLIN },
			{ .fd = rnic_cm_channel_fd(b->ch), .events = POLLIN },
		};
		(void)poll(p, 2, 10);
	}
	return 0;
}

/* RoCE: both QPs are in INIT; receives, then RTR/RTS both ways. */
static int lo_connect_roce(struct perf_end *q, struct perf_end *r, const struct perf_opts *o)
{
	union ibv_gid qgid, rgid;

	if (rnic_query_gid(q->side->ctx, 1, 1, &qgid) != 0 ||
	    rnic_query_gid(r->side->ctx, 1, 1, &rgid) != 0) {
		fprintf(stderr, "rnic-perf: cannot read GID 1 of the ports\n");
		return -1;
	}
	if (perf_post_recvs(q, perf_rx_depth(o)) != 0 ||
	    perf_post_recvs(r, perf_rx_depth(o)) != 0)
		return -1;
	if (perf_roce_connect(r, &qgid, q->qp->qp_num, q->psn) != 0 ||
	    perf_roce_connect(q, &rgid, r->qp->qp_num, r->psn) != 0)
		return -1;
	return 0;
}

/*
 * Two stacks over one net_ring pair; the common options give the workers
 * per stack and the poll mode. Memory: hugepages when enough are free for
 * the ports' pools (4 KiB pages cost a TLB miss every few frames once the
 * pools span hundreds of MB: at MTU 9000, 34.6 against 29.2 Gbit/s of 64
 * KiB Writes), else as much ordinary memory (at least 1 GiB). @return 0 or -1.
 */
static int lo_stacks(const struct perf_opts *o, const struct rnic_config *common,
		     struct rnic_stack *st[2], bool *huge)
{
	struct rnic_config c[2];
	unsigned mtu = o->lo_mtu ? o->lo_mtu : PERF_LO_MTU;
	/* every port's pool, and room for the rest (rings, tables, queues),
	 * and the QPs: measured (docs/benchmarks.md) a little under 16 KiB
	 * (RoCE) or 176 KiB (iWARP, its endpoint's job ring) and 1 KiB a send
	 * queue entry, two QPs a pair */
	uint64_t qp = (o->transport == RNIC_TRANSPORT_IWARP ? 176ull << 10 : 16ull << 10) +
		      (1024ull * o->tx_depth);
	uint64_t need = 2ull * o->ports * lo_mbufs(mtu, o->qps, common->workers) * (mtu + LO_MBUF_EXTRA) + (256ull << 20) +
			2ull * o->qps * qp;

	c[0] = *common;
	*huge = rnic_hugepages_free_bytes() >= need;
	if (!*huge) {
		snprintf(c[0].eal_args[c[0].n_eal_args++], 128, "--no-huge");
		snprintf(c[0].eal_args[c[0].n_eal_args++], 128, "-m");
		snprintf(c[0].eal_args[c[0].n_eal_args++], 128, "%" PRIu64,
			 RTE_MAX(need >> 20, (uint64_t)1024));
	}
	/* iWARP zero copy lends memory by its virtual address: IOVA as VA
	 * (the ring ports do no DMA, so the mode costs nothing here) */
	if (o->transport == RNIC_TRANSPORT_IWARP && rnic_iw_zero_copy_tx())
		snprintf(c[0].eal_args[c[0].n_eal_args++], 128, "--iova-mode=va");
	if (rnic_eal_init("rnic-perf", &c[0], 2 * c[0].workers) != 0)
		return -1;
	if (rnic_ring_pair(LO_RING, c[0].workers) != 0 ||
	    (o->ports > 1 && rnic_ring_pair(LO_RING1, c[0].workers) != 0)) {
		fprintf(stderr, "rnic-perf: cannot make the net_ring pair\n");
		return -1;
	}
	c[0].n_eal_args = 0;
	c[1] = c[0];
	for (int i = 0; i < 2; i++) {
		c[i].n_ports = o->ports;
		for (unsigned k = 0; k < o->ports; k++) {
			struct rnic_port_cfg *pc = &c[i].ports[k];
			rnic_port_cfg_init(pc);
			snprintf(pc->ring, sizeof(pc->ring), "%s.%c", k ? LO_RING1 : LO_RING,
				 i ? 'b' : 'a');
			pc->ip = k ? (i ? LO_B1_IP : LO_A1_IP) : (i ? LO_B_IP : LO_A_IP);
			pc->prefix_len = 24;
			pc->mtu = (uint16_t)mtu;
			pc->mbufs = lo_mbufs(mtu, o->qps, common->workers);
			pc->sw_csum = o->lo_sw_csum;
		}
	}
	for (int i = 0; i < 2; i++) {
		st[i] = rnic_stack_create(&c[i]);
		if (st[i] == NULL) {
			fprintf(stderr, "rnic-perf: stack %c: %s\n", 'A' + i,
				rte_strerror(rte_errno));
			return -1;
		}
	}
	for (int i = 0; i < 2; i++)
		if (rnic_stack_start(st[i]) != 0) {
			fprintf(stderr, "rnic-perf: cannot start stack %c\n", 'A' + i);
			return -1;
		}
	return 0;
}

/* Bytes allocated now: every socket's rte_malloc heap (memzones, what
 * still comes from rte_malloc) and the C heap (QPs, queues, TCBs, CM ids:
 * the chunks in use and, for the big ones glibc maps on their own, such
 * as a probe QP's 1024-entry queue, the mapped bytes). Only differences
 * mean anything. */
static double mem_now(void)
{
	struct mallinfo2 mi = mallinfo2();
	double n = (double)mi.uordblks + (double)mi.hblkhd;

	for (unsigned i = 0; i < rte_socket_count(); i++) {
		struct rte_malloc_socket_stats ms;
		if (rte_malloc_get_socket_stats(rte_socket_id_by_idx(i), &ms) == 0)
			n += (double)ms.heap_allocsz_bytes;
	}
	return n;
}

/* The bytes of queue entries in one of this run's QPs, from three probe
 * QPs on @p s: one with a single send and receive entry, one with 1024
 * send entries, one with 1024 receive entries (what the others add is what
 * 1023 entries cost). @return the bytes, or -1 (a probe failed). */
static double queue_bytes(struct perf_side *s, const struct perf_opts *o)
{
	static const unsigned depth[3][2] = { { 1, 1 }, { 1024, 1 }, { 1, 1024 } };
	struct ibv_qp *qp[3] = { NULL, NULL, NULL };
	struct ibv_qp_init_attr qa;
	double d[3], m = mem_now();
	double bytes = -1;

	for (int i = 0; i < 3; i++) {
		qp[i] = end_qp(s, s->cq[0], o, depth[i][0], depth[i][1], &qa);
		if (qp[i] == NULL)
			goto out;
		double m1 = mem_now();
		d[i] = m1 - m;
		m = m1;
	}
	/* the queues are powers of two */
	double per_send = (d[1] - d[0]) / 1023, per_recv = (d[2] - d[0]) / 1023;
	unsigned rx = perf_rx_depth(o) ? perf_rx_depth(o) : 1;
	bytes = per_send * rte_align32pow2(o->tx_depth) + per_recv * rte_align32pow2(rx);
out:
	for (int i = 0; i < 3; i++)
		if (qp[i] != NULL && rnic_destroy_qp(qp[i]) != 0)
			bytes = -1;
	return bytes;
}

/* What one loop of @p st's workers costs with every QP connected and
 * nothing to do (issue 21: the same for 1 QP as for 100,000): loops run
 * for PERF_IDLE_LOOP_S (RNIC_PERF_IDLE_S in the environment: longer, to
 * profile them) by this thread, which drives the stopped stack, in
 * batches of 256. Stray work (a late ACK) is counted in, it is rare.
 * @return ns a loop on average; *@p min_ns: of the fastest batch (a batch
 * the thread was preempted in costs more, whatever the QP count). */
#define PERF_IDLE_LOOP_S 0.1
static double idle_loop_ns(struct rnic_stack *st, double *min_ns)
{
	const char *env = getenv("RNIC_PERF_IDLE_S");
	double span = env != NULL && atof(env) > 0 ? atof(env) : PERF_IDLE_LOOP_S;
	uint64_t loops = 0;
	double t0 = perf_now(), t = t0, best = 1e30;
	while (t - t0 < span) {
		double b0 = t;
		for (int i = 0; i < 256; i++)
			rnic_stack_poll(st);
		loops += 256;
		t = perf_now();
		if (t - b0 < best)
			best = t - b0;
	}
	*min_ns = best * 1e9 / 256;
	return (t - t0) * 1e9 / (double)loops;
}

int perf_loopback(const struct perf_opts *o, const struct rnic_config *common,
		  struct perf_result *r)
{
	static struct perf_side sides[2];   /* [0] A: responders, [1] B: requesters */
	struct rnic_stack *st[2] = { NULL, NULL };
	struct perf_end *ends = calloc(2 * (size_t)o->qps, sizeof(*ends));
	int rc = PERF_EXIT_FAIL;

	if (ends == NULL || lo_stacks(o, common, st, &r->hugepages) != 0)
		goto out;
	for (int i = 0; i < 2; i++)
		if (perf_side_init(&sides[i], st[i], o) != 0)
			goto out;
	for (unsigned k = 0; o->transport == RNIC_TRANSPORT_IWARP &&
			     k * PERF_LO_PORT_CONNS < o->qps; k++) {
		struct rnic_cm_id **l = &sides[0].lo_listener[k];
		if (rnic_cm_create_id(sides[0].ch, NULL, l) != 0 ||
		    rnic_cm_listen(*l, (uint16_t)(o->tcp_port + k), (int)o->qps) != 0) {
			fprintf(stderr, "rnic-perf: cannot listen on TCP port %u\n",
				o->tcp_port + k);
			goto out;
		}
	}
	for (int i = 0; o->qps > PERF_SLAB_QPS && i < 2; i++)
		if (perf_side_slab(&sides[i], o, o->qps) != 0)
			goto out;
	double qbytes = queue_bytes(&sides[1], o);
	for (unsigned i = 0; i < o->qps; i++)
		if (perf_end_bufs(&ends[2 * i], &sides[1], 2 * i, true, o) != 0 ||
		    perf_end_bufs(&ends[2 * i + 1], &sides[0], 2 * i + 1, false, o) != 0)
			goto out;
	/* the QPs, then their connections, each measured */
	double t0 = perf_now(), m0 = mem_now();
	for (unsigned i = 0; i < 2 * o->qps; i++)
		if (perf_end_qp(&ends[i], o) != 0)
			goto out;
	double m1 = mem_now();
	for (unsigned i = 0; i < o->qps; i++) {
		struct perf_end *q = &ends[2 * i], *p = &ends[2 * i + 1];
		q->peer = p;
		p->peer = q;
		q->raddr = (uintptr_t)p->buf + p->region;
		q->rkey = p->mr->rkey;
		p->raddr = (uintptr_t)q->buf + q->region;
		p->rkey = q->mr->rkey;
		if (o->transport == RNIC_TRANSPORT_ROCE && lo_connect_roce(q, p, o) != 0)
			goto out;
	}
	if (o->transport == RNIC_TRANSPORT_IWARP && lo_connect_iwarp_all(ends, o->qps, o) != 0)
		goto out;
	r->setup_s = perf_now() - t0;
	r->qp_create_bytes = (m1 - m0) / (2.0 * o->qps);
	r->qp_connect_bytes = (mem_now() - m1) / (2.0 * o->qps);
	r->qp_queue_bytes = qbytes;
	r->mem_valid = qbytes >= 0;
	perf_set_stacks(st[0], st[1]);
	/* from here on the main thread drives stack B's worker loop (and A's
	 * with --drive one; with split an lcore of its own drives A's) */
	bool split = o->drive == PERF_DRIVE_SPLIT;
	bool own_a = o->drive == PERF_DRIVE_ONE || split;
	bool own_b = o->drive != PERF_DRIVE_THREADED;
	if (own_a)
		rnic_stack_stop(st[0]);
	if (own_b) {
		rnic_stack_stop(st[1]);
		r->idle_loop_ns = idle_loop_ns(st[1], &r->idle_loop_min_ns);
	}
	if (split) {
		rc = perf_run_split(o, sides, ends, 2 * o->qps, r, st[0], st[1]);
	} else {
		perf_set_inline(own_a ? st[0] : NULL, own_b ? st[1] : NULL);
		rc = perf_run(o, sides, 2, ends, 2 * o->qps, r);
		perf_set_inline(NULL, NULL);
	}
	for (int i = 0; i < 2 && o->transport == RNIC_TRANSPORT_IWARP; i++) {
		struct rnic_iw_stats is;
		rnic_iw_stats(st[i], &is);
		r->zc_fpdus += is.zc_fpdus_out;
	}
	for (int i = 0; i < 2; i++)
		if ((i ? own_b : own_a) && rnic_stack_start(st[i]) != 0) {
			fprintf(stderr, "rnic-perf: cannot restart stack %c\n", 'A' + i);
			rc = PERF_EXIT_FAIL;
		}
	for (int i = 0; i < 2; i++)
		for (unsigned k = 1; k <= o->ports; k++) {
			struct rnic_stag_port_stats ss;
			if (rnic_query_stag_stats(sides[i].ctx, (uint8_t)k, &ss) == 0) {
				r->migrated_stags += ss.imported;
				r->mig_queries += ss.queries;
				if (ss.query_us_max > r->mig_query_us_max)
					r->mig_query_us_max = ss.query_us_max;
			}
		}
	/* each Fetch and Add added one to the responder's counter */
	for (unsigned i = 0; rc == 0 && o->test == PERF_ATOMIC_BW && i < o->qps; i++) {
		const struct perf_end *p = &ends[2 * i + 1];
		uint64_t v;
		memcpy(&v, p->buf + p->region, sizeof(v));
		if (v != ends[2 * i].completed) {
			fprintf(stderr, "rnic-perf: atomic_bw: QP %u's counter is %lu after %lu "
				"Fetch and Adds of 1\n", p->qp->qp_num, (unsigned long)v,
				(unsigned long)ends[2 * i].completed);
			rc = PERF_EXIT_FAIL;
		}
	}
out:
	/* everything back, in reverse; a refusal is a failed run */
	for (unsigned i = 0; ends != NULL && i < 2 * o->qps; i++)
		if (perf_end_fini(&ends[i]) != 0 && rc == 0)
			rc = PERF_EXIT_FAIL;
	free(ends);
	for (int i = 0; i < 2; i++) {
		if (perf_side_fini(&sides[i]) != 0 && rc == 0)
			rc = PERF_EXIT_FAIL;
		rnic_stack_destroy(st[i]);
	}
	return rc;
}
