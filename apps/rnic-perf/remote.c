/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rnic-perf: --server and --client over real ports.
 *
 * One CM connection per QP pair carries the setup in its private data
 * (struct perf_wire, network order): the client's connect request names
 * the test, size, QP count and transport, and its buffer (address, rkey);
 * the server checks that they match its own options (an MPA reject with a
 * reason otherwise) and answers with its buffer in the accept.
 *   iWARP: the CM connection is the data QP's own.
 *   RoCE:  the CM connection is a control connection on a small iWARP QP
 *          over rnic's TCP (the kernel does not own rnic's addresses, so
 *          the exchange runs on the stack, as rnic-pingpong's does); the
 *          records add QPN, first PSN and GID 1 both ways, the server's
 *          RoCE QP goes to RTR/RTS before it accepts, the client's once
 *          ESTABLISHED arrives.
 * With --verify at both ends (write_bw, read_bw) the client accounts for
 * every completion and, for Writes, reads the server's slots back at the
 * end (verify.c); both must have the same --tx-depth (the slot count).
 * The client runs the test and then disconnects every connection; the
 * server answers (write_lat, send_lat), keeps receives posted (send_bw) or
 * only waits, until the client has closed them all.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_errno.h>

#include "perf.h"

#define WIRE_MAGIC 0x726e7066u   /* "rnpf" */
#define WIRE_VERSION 2     /* 2: flags, tx_depth */
#define WIRE_VERIFY 0x01   /* flags: --verify (write_bw: the peer lends its slots) */

/* The private data of a connect request and of its accept. */
struct perf_wire {
	rte_be32_t magic;
	uint8_t version;
	uint8_t test;             /* enum perf_test */
	uint8_t transport;        /* enum rnic_transport */
	uint8_t flags;            /* WIRE_VERIFY */
	rte_be32_t size;
	rte_be32_t qps;
	rte_be32_t qp_index;
	rte_be64_t addr;          /* the sender's second region */
	rte_be32_t rkey;
	rte_be32_t qpn;           /* RoCE */
	rte_be32_t psn;           /* RoCE: the first PSN the sender sends */
	uint8_t gid[16];          /* RoCE: the sender's GID 1 */
	rte_be32_t tx_depth;      /* --verify: the slots each end has */
} __attribute__((packed));

static void wire_fill(struct perf_wire *w, const struct perf_opts *o, const struct perf_end *e,
		      unsigned idx)
{
	union ibv_gid gid;

	memset(w, 0, sizeof(*w));
	w->magic = rte_cpu_to_be_32(WIRE_MAGIC);
	w->version = WIRE_VERSION;
	w->test = (uint8_t)o->test;
	w->transport = (uint8_t)o->transport;
	w->flags = o->verify ? WIRE_VERIFY : 0;
	w->tx_depth = rte_cpu_to_be_32(o->tx_depth);
	w->size = rte_cpu_to_be_32(o->size);
	w->qps = rte_cpu_to_be_32(o->qps);
	w->qp_index = rte_cpu_to_be_32(idx);
	w->addr = rte_cpu_to_be_64((uintptr_t)e->buf + e->region);
	w->rkey = rte_cpu_to_be_32(e->mr->rkey);
	w->qpn = rte_cpu_to_be_32(e->qp->qp_num);
	w->psn = rte_cpu_to_be_32(e->psn);
	if (rnic_query_gid(e->side->ctx, 1, 1, &gid) == 0)
		memcpy(w->gid, gid.raw, sizeof(w->gid));
}

/* Check a peer's record against our options. @return NULL when it fits,
 * or the reason it does not. */
static const char *wire_check(const struct perf_wire *w, uint16_t len, const struct perf_opts *o)
{
	if (len < sizeof(*w) || rte_be_to_cpu_32(w->magic) != WIRE_MAGIC ||
	    w->version != WIRE_VERSION)
		return "not an rnic-perf peer (or another version)";
	if (w->test != o->test)
		return "the test differs";
	if (w->transport != o->transport)
		return "the transport differs";
	if (rte_be_to_cpu_32(w->size) != o->size)
		return "the message size differs";
	if (rte_be_to_cpu_32(w->qps) != o->qps)
		return "the QP count differs";
	if (!!(w->flags & WIRE_VERIFY) != o->verify)
		return "--verify is given at one end only";
	if (o->verify && rte_be_to_cpu_32(w->tx_depth) != o->tx_depth)
		return "--tx-depth differs (--verify needs the same at both ends)";
	return NULL;
}

/* A responder that serves whatever its clients run (rdma-gateway's) takes
 * the test, size and QP count of the client's first request, and its
 * transport when o->any_transport. @return NULL, or why the request cannot
 * be served. */
static const char *wire_adopt(const struct perf_wire *w, uint16_t len, struct perf_opts *o)
{
	if (len < sizeof(*w) || rte_be_to_cpu_32(w->magic) != WIRE_MAGIC ||
	    w->version != WIRE_VERSION)
		return "not an rnic-perf peer (or another version)";
	uint32_t size = rte_be_to_cpu_32(w->size), qps = rte_be_to_cpu_32(w->qps);
	if (w->test >= PERF_NTESTS)
		return "unknown test";
	if (w->transport != o->transport &&
	    !(o->any_transport && (w->transport == RNIC_TRANSPORT_IWARP ||
				   w->transport == RNIC_TRANSPORT_ROCE)))
		return "the transport differs";
	if (size == 0 || size > PERF_SERVE_MAX_SIZE)
		return "the message size is out of range";
	if (qps == 0 || qps > PERF_MAX_QPS || (uint64_t)qps * size > PERF_SERVE_MAX_BYTES)
		return "the QP count is out of range";
	if (rte_be_to_cpu_32(w->qp_index) != 0)
		return "a run starts with QP 0";
	if (w->flags & WIRE_VERIFY)
		return "this server does not take --verify (rnic-perf --server --verify does)";
	o->test = (enum perf_test)w->test;
	o->transport = (enum rnic_transport)w->transport;
	o->size = size;
	o->qps = qps;
	o->cqs = 1;
	o->iters = 0;          /* answer until the client closes */
	o->duration = 0;
	return NULL;
}

/* Take the peer's buffer, and for RoCE connect our QP to its. */
static int wire_apply(struct perf_end *e, const struct perf_wire *w, const struct perf_opts *o)
{
	e->raddr = rte_be_to_cpu_64(w->addr);
	e->rkey = rte_be_to_cpu_32(w->rkey);
	if (o->transport != RNIC_TRANSPORT_ROCE)
		return 0;
	union ibv_gid gid;
	memcpy(gid.raw, w->gid, sizeof(gid.raw));
	return perf_roce_connect(e, &gid, rte_be_to_cpu_32(w->qpn), rte_be_to_cpu_32(w->psn));
}

/* The QP the CM connection runs on: the data QP (iWARP) or a control QP
 * (RoCE). Both are in INIT with the receives posted. @return 0 or -1. */
static int cm_qp(struct perf_end *e, const struct perf_opts *o, struct ibv_qp **qp)
{
	struct ibv_qp_attr init = { .qp_state = IBV_QPS_INIT };

	if (o->transport == RNIC_TRANSPORT_IWARP) {
		int rc = rnic_modify_qp(e->qp, &init, IBV_QP_STATE);
		if (rc != 0) {
			fprintf(stderr, "rnic-perf: iWARP QP to INIT: %s\n", strerror(-rc));
			return -1;
		}
		*qp = e->qp;
		return perf_post_recvs(e, perf_rx_depth(o));
	}
	struct ibv_qp_init_attr qa = {
		.send_cq = e->cq,
		.recv_cq = e->cq,
		.cap = { .max_send_wr = 1, .max_recv_wr = 1, .max_send_sge = 1,
			 .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC,
	};
	e->ctl_qp = rnic_create_qp_transport(e->side->pd, &qa, RNIC_TRANSPORT_IWARP);
	if (e->ctl_qp == NULL) {
		fprintf(stderr, "rnic-perf: cannot create the control QP: %s\n", strerror(errno));
		return -1;
	}
	*qp = e->ctl_qp;
	return perf_post_recvs(e, perf_rx_depth(o));
}

/* The port's stack, started, and its side objects. @return 0 or -1. */
static int remote_side(struct perf_side *s, struct rnic_config *cfg, const struct perf_opts *o)
{
	if (rnic_eal_init("rnic-perf", cfg, cfg->workers) != 0)
		return -1;
	struct rnic_stack *st = rnic_stack_create(cfg);
	if (st == NULL) {
		fprintf(stderr, "rnic-perf: stack: %s\n", rte_strerror(rte_errno));
		return -1;
	}
	s->st = st;   /* perf_remote() destroys it, whatever happens next */
	if (rnic_stack_start(st) != 0) {
		fprintf(stderr, "rnic-perf: cannot start the stack\n");
		return -1;
	}
	return perf_side_open(s, st, o);
}

/* Wait for the next connect request, until a signal or, when @p limit_ms
 * is not 0, that long (a client that connected its first QP pair and then
 * vanished must not hold the server). @return 0 or -1. */
static int wait_request(struct perf_side *s, struct rnic_cm_event *ev, unsigned limit_ms)
{
	double until = perf_now() + limit_ms / 1e3;

	while (!rnic_stop_requested()) {
		if (limit_ms != 0 && perf_now() > until) {
			fprintf(stderr, "rnic-perf: the client's next connection did not come "
				"within %u ms\n", limit_ms);
			return -1;
		}
		if (rnic_cm_get_event(s->ch, ev, 500) != 0)
			continue;
		if (ev->type == RNIC_CM_EVENT_CONNECT_REQUEST)
			return 0;
		fprintf(stderr, "rnic-perf: unexpected %s while waiting for a client\n",
			rnic_cm_event_str(ev->type));
	}
	return -1;
}

/* Accept QP pair @p i from the client's request @p ev, whose record was
 * checked. @return 0 or -1. */
static int server_accept(struct perf_side *s, struct perf_end *e, unsigned i,
			 const struct perf_opts *o, const struct rnic_cm_event *req)
{
	struct rnic_cm_event ev;
	struct perf_wire mine, peer;
	struct ibv_qp *qp;

	memcpy(&peer, req->private_data, sizeof(peer));
	if (perf_end_init(e, s, i, false, o) != 0 || cm_qp(e, o, &qp) != 0 ||
	    wire_apply(e, &peer, o) != 0) {
		rnic_cm_reject(req->id, "setup failed", sizeof("setup failed"));
		rnic_cm_destroy_id(req->id);
		return -1;
	}
	e->id = req->id;
	wire_fill(&mine, o, e, i);
	struct rnic_cm_conn_param cp = {
		.private_data = &mine,
		.private_data_len = sizeof(mine),
		.responder_resources = PERF_RD_ATOMIC,
		.initiator_depth = PERF_RD_ATOMIC,
	};
	if (rnic_cm_accept(e->id, qp, &cp) != 0) {
		fprintf(stderr, "rnic-perf: CM accept failed\n");
		return -1;
	}
	if (perf_cm_expect(s->ch, RNIC_CM_EVENT_ESTABLISHED, &ev) != 0)
		return -1;
	__atomic_fetch_add(&s->conns, 1, __ATOMIC_RELAXED);   /* read by rdma-gateway */
	return 0;
}

/* Refuse request @p ev with @p why (also printed). */
static void server_refuse(const struct rnic_cm_event *ev, const char *why)
{
	fprintf(stderr, "rnic-perf: refusing a client: %s\n", why);
	rnic_cm_reject(ev->id, why, (uint16_t)(strlen(why) + 1));
	rnic_cm_destroy_id(ev->id);
}

/*
 * The run itself. With --drive one the process runs to completion: its
 * stack's workers leave their lcores for the run and this thread runs
 * their loops between its verbs calls, so one busy thread per process
 * both moves the frames and posts and polls (as --drive split does for
 * each stack in one process). Otherwise the workers keep their lcores.
 */
static int remote_run(const struct perf_opts *o, struct perf_side *s,
		      struct perf_end *ends, struct perf_result *r)
{
	bool own = o->drive == PERF_DRIVE_ONE;
	struct rnic_stack_stats ss;
	int rc;

	rnic_stack_stats(s->st, &ss);
	r->redirected_in_run = ss.redirected;
	if (own) {
		rnic_stack_stop(s->st);
		perf_set_inline(s->st, NULL);
	}
	rc = perf_run(o, s, 1, ends, o->qps, r);
	rnic_stack_stats(s->st, &ss);
	r->redirected_in_run = ss.redirected - r->redirected_in_run;
	if (own) {
		perf_set_inline(NULL, NULL);
		if (rnic_stack_start(s->st) != 0) {
			fprintf(stderr, "rnic-perf: cannot restart the stack's workers\n");
			rc = PERF_EXIT_FAIL;
		}
	}
	return rc;
}

/* The QPs' counters, summed into @p r before the ends go. */
static void serve_counters(struct perf_result *r, const struct perf_end *ends, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		struct rnic_qp_stats qs;
		if (ends[i].qp == NULL)
			continue;
		rnic_qp_stats(ends[i].qp, &qs);
		r->bytes_in += qs.bytes_in;
		r->bytes_out += qs.bytes_out;
		r->ops_in += qs.ops_in;
	}
}

int perf_serve(struct perf_side *s, struct perf_opts *o, bool adopt, struct perf_result *r)
{
	struct rnic_cm_event ev;
	struct perf_wire peer;
	int rc = PERF_EXIT_FAIL;

	if (wait_request(s, &ev, 0) != 0)
		return PERF_EXIT_FAIL;
	memcpy(&peer, ev.private_data, sizeof(peer));
	const char *why = adopt ? wire_adopt(&peer, ev.private_data_len, o)
				: wire_check(&peer, ev.private_data_len, o);
	if (why != NULL) {
		server_refuse(&ev, why);
		return PERF_EXIT_FAIL;
	}
	struct perf_end *ends = calloc(o->qps, sizeof(*ends));
	if (ends == NULL || perf_side_cqs(s, o) != 0) {
		server_refuse(&ev, "out of resources");
		goto out;
	}
	__atomic_store_n(&s->conns, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&s->closed, 0, __ATOMIC_RELAXED);
	s->peer_gone = false;
	s->watch = false;
	for (unsigned i = 0; i < o->qps; i++) {
		if (i > 0) {
			if (wait_request(s, &ev, PERF_CM_WAIT_MS) != 0)
				goto out;
			memcpy(&peer, ev.private_data, sizeof(peer));
			why = wire_check(&peer, ev.private_data_len, o);
			if (why == NULL && rte_be_to_cpu_32(peer.qp_index) != i)
				why = "QP pairs out of order";
			if (why != NULL) {
				server_refuse(&ev, why);
				goto out;
			}
		}
		if (server_accept(s, &ends[i], i, o, &ev) != 0)
			goto out;
	}
	s->watch = true;
	rc = remote_run(o, s, ends, r);
	serve_counters(r, ends, o->qps);
out:
	for (unsigned i = 0; ends != NULL && i < o->qps; i++)
		if (perf_end_fini(&ends[i]) != 0 && rc == 0)
			rc = PERF_EXIT_FAIL;
	free(ends);
	if (perf_side_cqs_fini(s) != 0 && rc == 0)
		rc = PERF_EXIT_FAIL;
	s->watch = false;
	__atomic_store_n(&s->conns, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&s->closed, 0, __ATOMIC_RELAXED);
	return rc;
}

/* Connect QP pair @p i to the server. @return 0 or -1. */
static int client_connect(struct perf_side *s, struct perf_end *e, unsigned i,
			  const struct perf_opts *o)
{
	struct rnic_cm_event ev;
	struct perf_wire mine, peer;
	struct ibv_qp *qp;

	if (perf_end_init(e, s, i, true, o) != 0 || cm_qp(e, o, &qp) != 0)
		return -1;
	wire_fill(&mine, o, e, i);
	struct rnic_cm_conn_param cp = {
		.private_data = &mine,
		.private_data_len = sizeof(mine),
		.responder_resources = PERF_RD_ATOMIC,
		.initiator_depth = PERF_RD_ATOMIC,
	};
	if (rnic_cm_create_id(s->ch, e, &e->id) != 0 ||
	    rnic_cm_connect_addr(e->id, qp, &o->server_addr, o->tcp_port, &cp) != 0) {
		fprintf(stderr, "rnic-perf: CM connect failed\n");
		return -1;
	}
	if (rnic_cm_get_event(s->ch, &ev, PERF_CM_WAIT_MS) != 0) {
		fprintf(stderr, "rnic-perf: no answer from the server within %d ms\n",
			PERF_CM_WAIT_MS);
		return -1;
	}
	if (ev.type == RNIC_CM_EVENT_REJECTED) {
		ev.private_data[sizeof(ev.private_data) - 1] = '\0';
		fprintf(stderr, "rnic-perf: the server refused: %s\n",
			ev.private_data_len ? (const char *)ev.private_data : "(no reason)");
		return -1;
	}
	if (ev.type != RNIC_CM_EVENT_ESTABLISHED) {
		fprintf(stderr, "rnic-perf: connecting to the server: %s (status %d)\n",
			rnic_cm_event_str(ev.type), ev.status);
		return -1;
	}
	memcpy(&peer, ev.private_data, sizeof(peer));
	const char *why = wire_check(&peer, ev.private_data_len, o);
	if (why != NULL) {
		fprintf(stderr, "rnic-perf: the server's answer: %s\n", why);
		return -1;
	}
	return wire_apply(e, &peer, o);
}

/* Close every connection and wait (a while) for the closes to complete,
 * so the server sees them before this process is gone. */
static void client_close(struct perf_side *s, struct perf_end *ends, unsigned n)
{
	struct rnic_cm_event ev;
	unsigned closed = 0;
	double until = perf_now() + PERF_CM_WAIT_MS / 1e3;

	for (unsigned i = 0; i < n; i++)
		if (rnic_cm_disconnect(ends[i].id) != 0)
			closed++;
	while (closed < n && perf_now() < until)
		if (rnic_cm_get_event(s->ch, &ev, 100) == 0 &&
		    ev.type == RNIC_CM_EVENT_DISCONNECTED)
			closed++;
	if (closed < n)
		fprintf(stderr, "rnic-perf: %u of %u connections did not close within %d ms\n",
			n - closed, n, PERF_CM_WAIT_MS);
}

int perf_remote(const struct perf_opts *o, struct rnic_config *cfg, struct perf_result *r)
{
	static struct perf_side side;
	struct perf_end *ends = NULL;
	struct perf_opts run = *o;
	int rc = PERF_EXIT_FAIL;

	if (remote_side(&side, cfg, o) != 0)
		goto out;
	if (o->server) {
		if (rnic_cm_create_id(side.ch, NULL, &side.listener) != 0 ||
		    rnic_cm_listen(side.listener, o->tcp_port, (int)o->qps) != 0) {
			fprintf(stderr, "rnic-perf: cannot listen on TCP port %u\n", o->tcp_port);
			goto out;
		}
		fprintf(stderr, "rnic-perf: waiting for a client on TCP port %u\n", o->tcp_port);
		rc = perf_serve(&side, &run, false, r);
		goto out;
	}
	ends = calloc(o->qps, sizeof(*ends));
	if (ends == NULL || perf_side_cqs(&side, o) != 0)
		goto out;
	for (unsigned i = 0; i < o->qps; i++)
		if (client_connect(&side, &ends[i], i, o) != 0)
			goto out;
	rc = remote_run(o, &side, ends, r);
	client_close(&side, ends, o->qps);
out:
	for (unsigned i = 0; ends != NULL && i < o->qps; i++)
		if (perf_end_fini(&ends[i]) != 0 && rc == 0)
			rc = PERF_EXIT_FAIL;
	free(ends);
	struct rnic_stack *st = side.st;
	if (st != NULL) {
		struct rnic_stack_stats ss;
		rnic_stack_stats(st, &ss);
		r->redirected = ss.redirected;
	}
	if (perf_side_fini(&side) != 0 && rc == 0)
		rc = PERF_EXIT_FAIL;
	rnic_stack_destroy(st);
	return rc;
}
