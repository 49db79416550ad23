/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rdma-gateway's responders: the servers of rnic-perf (apps/rnic-perf's
 * perf_serve()), rping (apps/common/rping_server.c) and ibv_rc_pingpong
 * (apps/rnic-pingpong's pp_session()), the same code the apps run, each on
 * a thread of its own so that a run in progress holds neither the targets'
 * connection events nor the other responders. Each thread serves until
 * rnic_request_stop(); its figures are atomics the status line and the
 * telemetry read.
 *
 * The transports are per responder (struct gw_responder.iwarp, .roce),
 * handed to the server it starts: perf serves both on one port (its setup
 * record names the run's transport), ping both (the QP is of the client's
 * request's transport) and pingpong RoCE (rc_pingpong's protocol).
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_telemetry.h>

#include "perf.h"
#include "responder.h"
#include "rping_server.h"
#include "session.h"

/* Figures of one responder (atomics: its thread writes, others read). */
struct resp_stats {
	uint64_t runs;        /* perf: runs served; pingpong: sessions done */
	uint64_t failed;      /* runs or sessions that failed or were refused */
	uint64_t bytes_in, bytes_out, ops;
};

struct resp {
	enum gw_resp_kind kind;
	struct gw_responder cfg;
	struct rnic_stack *st;
	pthread_t thread;
	bool running;
	struct resp_stats s;
	/* perf */
	struct perf_side side;
	struct perf_opts po;
	/* ping */
	struct ibv_context *ctx;
	struct rping_server_opts ro;
	struct rping_server_stats rs;
	struct rping_srv *srv;
	/* pingpong */
	struct pp_opts pp;
};

static struct resp resps[GW_RESP_KINDS];

static void add(uint64_t *c, uint64_t n)
{
	__atomic_fetch_add(c, n, __ATOMIC_RELAXED);
}

static uint64_t get(const uint64_t *c)
{
	return __atomic_load_n(c, __ATOMIC_RELAXED);
}

/* --- perf ---------------------------------------------------------------------- */

/* The side and its listener, before the thread. @return 0 or -1. */
static int perf_open(struct resp *R)
{
	perf_opts_default(&R->po);
	R->po.server = true;
	R->po.transport = R->cfg.iwarp ? RNIC_TRANSPORT_IWARP : RNIC_TRANSPORT_ROCE;
	R->po.any_transport = R->cfg.iwarp && R->cfg.roce;
	R->po.idle_s = R->cfg.idle_s;   /* a vanished client frees the responder */
	R->po.tcp_port = R->cfg.listen;
	if (perf_side_open(&R->side, R->st, &R->po) != 0)
		return -1;
	if (rnic_cm_create_id(R->side.ch, NULL, &R->side.listener) != 0 ||
	    rnic_cm_listen(R->side.listener, R->cfg.listen, PERF_MAX_QPS) != 0)
		return -1;
	return 0;
}

/* One client's run after another, its options its own. */
static void *perf_thread(void *arg)
{
	struct resp *R = arg;

	while (!rnic_stop_requested()) {
		struct perf_opts o = R->po;
		struct perf_result r = { 0 };
		int rc = perf_serve(&R->side, &o, true, &r);
		free(r.lat_us);
		if (rnic_stop_requested() && rc != 0)
			break;   /* interrupted, not failed */
		add(rc == 0 ? &R->s.runs : &R->s.failed, 1);
		add(&R->s.bytes_in, r.bytes_in);
		add(&R->s.bytes_out, r.bytes_out);
		add(&R->s.ops, r.ops_in);
	}
	return NULL;
}

static void perf_close(struct resp *R)
{
	struct rnic_stack *st = R->side.st;

	if (st != NULL)
		perf_side_fini(&R->side);
}

/* Connections of the run under way. */
static uint64_t perf_conns(const struct resp *R)
{
	unsigned c = __atomic_load_n(&R->side.conns, __ATOMIC_RELAXED);
	unsigned d = __atomic_load_n(&R->side.closed, __ATOMIC_RELAXED);
	return c > d ? c - d : 0;
}

/* --- ping ---------------------------------------------------------------------- */

static int ping_open(struct resp *R)
{
	R->ctx = rnic_open_device(R->st);
	R->ro = (struct rping_server_opts){ .port = R->cfg.listen, .size = R->cfg.size,
					    .iwarp = R->cfg.iwarp, .roce = R->cfg.roce, .crc = true };
	if (R->ctx == NULL)
		return -1;
	R->srv = rping_server_open(R->ctx, &R->ro, &R->rs);
	return R->srv != NULL ? 0 : -1;
}

static void *ping_thread(void *arg)
{
	struct resp *R = arg;

	rping_server_run(R->srv);
	return NULL;
}

static void ping_close(struct resp *R)
{
	rping_server_close(R->srv);
	R->srv = NULL;
	if (R->ctx != NULL)
		rnic_close_device(R->ctx);
	R->ctx = NULL;
}

/* --- pingpong ------------------------------------------------------------------ */

static int pingpong_open(struct resp *R)
{
	pp_opts_default(&R->pp);
	R->pp.tcp_port = R->cfg.listen;
	R->pp.size = R->cfg.size;
	R->pp.iters = R->cfg.iters;
	R->pp.gidx = 1;      /* RoCE peers need the GID: ::ffff:IPv4 */
	R->pp.quiet = true;
	return 0;
}

/* One rc_pingpong client after another, each with fresh objects. */
static void *pingpong_thread(void *arg)
{
	struct resp *R = arg;

	while (!rnic_stop_requested()) {
		struct pp_ctx pp = { .o = &R->pp, .st = R->st };
		int rc = pp_session(&pp);
		bool done = rc == 0 && pp.scnt == R->pp.iters;
		if (rc != 0 && rnic_stop_requested()) {
			pp_ctx_close(&pp);
			break;
		}
		add(done ? &R->s.runs : &R->s.failed, 1);
		add(&R->s.bytes_in, (uint64_t)pp.rcnt * R->pp.size);
		add(&R->s.bytes_out, (uint64_t)pp.scnt * R->pp.size);
		add(&R->s.ops, pp.rcnt);
		pp_ctx_close(&pp);
	}
	return NULL;
}

static const char *transport_names(const struct gw_responder *r)
{
	return r->iwarp && r->roce ? "iwarp,roce" : r->iwarp ? "iwarp" : "roce";
}

/* --- the table ----------------------------------------------------------------- */

struct resp_ops {
	int (*open)(struct resp *R);       /* listen, before the thread */
	void *(*thread)(void *R);
	void (*close)(struct resp *R);     /* after the thread, or a failed open */
};

static void no_close(struct resp *R)
{
	(void)R;
}

static const struct resp_ops ops[GW_RESP_KINDS] = {
	[GW_RESP_PERF] = { perf_open, perf_thread, perf_close },
	[GW_RESP_PING] = { ping_open, ping_thread, ping_close },
	[GW_RESP_PINGPONG] = { pingpong_open, pingpong_thread, no_close },
};

/* Live connections of a responder. */
static uint64_t resp_conns(const struct resp *R)
{
	switch (R->kind) {
	case GW_RESP_PERF:
		return perf_conns(R);
	case GW_RESP_PING:
		return get(&R->rs.active);
	default:
		return 0;   /* the session's objects are its thread's */
	}
}

/* Done (runs, pings, sessions) and failed, whatever the kind counts. */
static void resp_figures(const struct resp *R, uint64_t *done, uint64_t *failed,
			 uint64_t *in, uint64_t *out, uint64_t *ops_n)
{
	if (R->kind == GW_RESP_PING) {
		*done = get(&R->rs.pings);
		*failed = get(&R->rs.errors) + get(&R->rs.refused) + get(&R->s.failed);
		*in = get(&R->rs.bytes_in);
		*out = get(&R->rs.bytes_out);
		*ops_n = get(&R->rs.pings);
		return;
	}
	*done = get(&R->s.runs);
	*failed = get(&R->s.failed);
	*in = get(&R->s.bytes_in);
	*out = get(&R->s.bytes_out);
	*ops_n = get(&R->s.ops);
}

static const char *const done_unit[GW_RESP_KINDS] = {
	[GW_RESP_PERF] = "runs", [GW_RESP_PING] = "pings", [GW_RESP_PINGPONG] = "sessions",
};

void gw_responders_status(FILE *f)
{
	for (int k = 0; k < GW_RESP_KINDS; k++) {
		const struct resp *R = &resps[k];
		uint64_t done, failed, in, out, n;
		if (!R->running)
			continue;
		resp_figures(R, &done, &failed, &in, &out, &n);
		fprintf(f, " | %s: %lu conn, %lu %s, %lu failed, in %lu B, out %lu B",
			gw_responder_name(R->kind), (unsigned long)resp_conns(R),
			(unsigned long)done, done_unit[k], (unsigned long)failed,
			(unsigned long)in, (unsigned long)out);
	}
}

static int tel_responders(const char *cmd, const char *params, struct rte_tel_data *d)
{
	(void)cmd;
	(void)params;
	rte_tel_data_start_dict(d);
	for (int k = 0; k < GW_RESP_KINDS; k++) {
		const struct resp *R = &resps[k];
		uint64_t done, failed, in, out, n;
		if (!R->running)
			continue;
		struct rte_tel_data *t = rte_tel_data_alloc();
		if (t == NULL)
			return -ENOMEM;
		resp_figures(R, &done, &failed, &in, &out, &n);
		rte_tel_data_start_dict(t);
		rte_tel_data_add_dict_u64(t, "listen", R->cfg.listen);
		rte_tel_data_add_dict_string(t, "transport", transport_names(&R->cfg));
		rte_tel_data_add_dict_u64(t, "connections", resp_conns(R));
		rte_tel_data_add_dict_u64(t, done_unit[k], done);
		rte_tel_data_add_dict_u64(t, "failed", failed);
		rte_tel_data_add_dict_u64(t, "bytes_in", in);
		rte_tel_data_add_dict_u64(t, "bytes_out", out);
		rte_tel_data_add_dict_u64(t, "ops", n);
		rte_tel_data_add_dict_container(d, gw_responder_name(R->kind), t, 0);
	}
	return 0;
}

int gw_responders_start(struct rnic_stack *st, const struct gw_responder r[GW_RESP_KINDS],
			char *err, size_t errlen)
{
	bool any = false;

	for (int k = 0; k < GW_RESP_KINDS; k++) {
		struct resp *R = &resps[k];
		if (!r[k].on)
			continue;
		memset(R, 0, sizeof(*R));
		R->kind = (enum gw_resp_kind)k;
		R->cfg = r[k];
		R->st = st;
		if (ops[k].open(R) != 0) {
			snprintf(err, errlen, "responder %s: cannot listen on port %u: %s",
				 gw_responder_name(R->kind), r[k].listen, strerror(errno));
			ops[k].close(R);
			rnic_request_stop();
			gw_responders_stop();
			return -1;
		}
		int rc = pthread_create(&R->thread, NULL, ops[k].thread, R);
		if (rc != 0) {
			snprintf(err, errlen, "responder %s: no thread: %s",
				 gw_responder_name(R->kind), strerror(rc));
			ops[k].close(R);
			rnic_request_stop();
			gw_responders_stop();
			return -1;
		}
		R->running = true;
		any = true;
		printf("responder %s: %s port %u\n", gw_responder_name(R->kind),
		       transport_names(&r[k]), r[k].listen);
	}
	if (any)
		rte_telemetry_register_cmd("/rnic/gateway/responders", tel_responders,
					   "Per-responder counters of rdma-gateway");
	return 0;
}

void gw_responders_stop(void)
{
	for (int k = 0; k < GW_RESP_KINDS; k++) {
		struct resp *R = &resps[k];
		if (!R->running)
			continue;
		pthread_join(R->thread, NULL);
		ops[k].close(R);
		R->running = false;
	}
}
