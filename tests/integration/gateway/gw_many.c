/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gw_many: many rdma-gateway clients in one process (gateway_many.sh).
 *
 *   gw_many --vdev SPEC --ip CIDR --server A.B.C.D --target NAME
 *           --conns N --release FILE [--window W] [--transport iwarp|roce]
 *
 * Connects N QPs to the target, at most W (64) connecting at once, each
 * with the gateway's request (apps/common/rnic_gw.h) and checking its
 * accept; prints "held N" once all N are ESTABLISHED, then holds them
 * (any end meanwhile is a failure) until FILE exists; disconnects them all,
 * waits for every DISCONNECTED, prints "closed N", frees everything and
 * exits 0. Any reject, failure or a wait of 60 s without progress: one
 * line on stderr, exit 1.
 */
#include <errno.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rte_byteorder.h>

#include "rnic/rnic.h"
#include "rnic/rnic_cm.h"
#include "rnic/rnic_verbs.h"
#include "rnic_gw.h"

#define STALL_S 60

struct end {
	struct ibv_qp *qp;
	struct rnic_cm_id *id;
	int up, down;
};

static struct ibv_pd *pd;
static struct ibv_cq *cq;
static struct rnic_cm_channel *ch;
static struct end *ends;
static struct {
	struct rnic_addr server;
	const char *target, *release;
	unsigned conns, window;
	enum rnic_transport tr;
} o = { .window = 64, .tr = RNIC_TRANSPORT_IWARP };

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static int die(const char *what, int err)
{
	fprintf(stderr, "gw_many: %s%s%s\n", what, err ? ": " : "", err ? strerror(err) : "");
	return 1;
}

/* Start connection @p i: its QP, its id (context: the end), the connect. */
static int start(unsigned i)
{
	struct end *e = &ends[i];
	struct ibv_qp_init_attr qa = { .send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
				       .cap = { .max_send_wr = 1, .max_recv_wr = 1,
						.max_send_sge = 1, .max_recv_sge = 1 } };
	e->qp = rnic_create_qp_transport(pd, &qa, o.tr);
	if (e->qp == NULL)
		return die("create_qp", errno);
	int rc = rnic_cm_create_id(ch, e, &e->id);
	if (rc != 0)
		return die("create_id", -rc);
	struct rnic_gw_req req = { .version = RNIC_GW_VERSION };
	memcpy(req.magic, RNIC_GW_MAGIC, 4);
	snprintf(req.target, sizeof(req.target), "%s", o.target);
	struct rnic_cm_conn_param p = { .private_data = &req, .private_data_len = sizeof(req),
					.responder_resources = 1, .initiator_depth = 1 };
	rc = rnic_cm_connect_addr(e->id, e->qp, &o.server, RNIC_GW_DEFAULT_PORT, &p);
	return rc == 0 ? 0 : die("connect", -rc);
}

/* Take the events there are (waiting up to @p ms for the first). */
static int events(int ms, unsigned *up, unsigned *down)
{
	struct rnic_cm_event ev;
	while (rnic_cm_get_event(ch, &ev, ms) == 0) {
		ms = 0;
		struct end *e = rnic_cm_id_context(ev.id);
		if (ev.type == RNIC_CM_EVENT_ESTABLISHED && !e->up) {
			const struct rnic_gw_rep *rep = (const void *)ev.private_data;
			if (ev.private_data_len < 8 || memcmp(rep->magic, RNIC_GW_MAGIC, 4) ||
			    rep->status != 0)
				return die("an accept that is not the gateway's", 0);
			e->up = 1;
			(*up)++;
		} else if (ev.type == RNIC_CM_EVENT_DISCONNECTED && e->up && !e->down) {
			e->down = 1;
			(*down)++;
		} else {
			const struct rnic_gw_rep *rep = (const void *)ev.private_data;
			fprintf(stderr, "gw_many: connection %ld: %s (status %d)%s%.64s\n",
				(long)(e - ends), rnic_cm_event_str(ev.type), ev.status,
				ev.type == RNIC_CM_EVENT_REJECTED ? ": " : "",
				ev.type == RNIC_CM_EVENT_REJECTED ? rep->reason : "");
			return 1;
		}
	}
	return 0;
}

static int parse(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (v == NULL)
			return die("an option without its value", EINVAL);
		if (!strcmp(a, "--server")) {
			if (rnic_addr_parse(v, &o.server, NULL) != 0)
				return die("--server: not an address", EINVAL);
		} else if (!strcmp(a, "--release")) {
			o.release = v;
		} else if (!strcmp(a, "--target")) {
			o.target = v;
		} else if (!strcmp(a, "--conns")) {
			o.conns = (unsigned)strtoul(v, NULL, 10);
		} else if (!strcmp(a, "--window")) {
			o.window = (unsigned)strtoul(v, NULL, 10);
		} else if (!strcmp(a, "--transport")) {
			o.tr = strcmp(v, "roce") ? RNIC_TRANSPORT_IWARP : RNIC_TRANSPORT_ROCE;
		} else {
			return die("unknown option", EINVAL);
		}
		i++;
	}
	return o.target && o.release && o.conns && o.window && o.server.family ? 0
		: die("need --server, --target, --conns, --release", EINVAL);
}

int main(int argc, char **argv)
{
	struct rnic_config cfg;
	char err[RNIC_ERRLEN] = "";
	rnic_config_init(&cfg);
	if (rnic_config_parse_args(&cfg, &argc, argv, err, sizeof(err)) != 0)
		return die(err, 0);
	if (parse(argc, argv) != 0)
		return 2;
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (rnic_eal_init(argv[0], &cfg, cfg.workers) != 0)
		return 1;
	struct rnic_stack *st = rnic_stack_create(&cfg);
	if (st == NULL || rnic_stack_start(st) != 0)
		return die("the stack", errno);
	struct ibv_context *ctx = rnic_open_device(st);
	pd = rnic_alloc_pd(ctx);
	cq = rnic_create_cq(ctx, 64, NULL, NULL, 0);
	ch = rnic_cm_create_channel(ctx);
	ends = calloc(o.conns, sizeof(*ends));
	if (!pd || !cq || !ch || !ends)
		return die("verbs objects", ENOMEM);
	unsigned started = 0, up = 0, down = 0, last = 0;
	double seen = now_s(), t0 = seen;
	while (up < o.conns) {
		while (started < o.conns && started - up < o.window)
			if (start(started++) != 0)
				return 1;
		if (events(10, &up, &down) != 0 || down != 0)
			return down ? die("a connection ended while connecting the others", 0) : 1;
		if (up != last) {
			last = up;
			seen = now_s();
		} else if (now_s() - seen > STALL_S) {
			fprintf(stderr, "gw_many: %u of %u connected, none for %d s\n", up, o.conns,
				STALL_S);
			return 1;
		}
	}
	printf("held %u (%.1f s)\n", up, now_s() - t0);
	while (access(o.release, F_OK) != 0)
		if (events(50, &up, &down) != 0 || down != 0)
			return die("a connection ended while held", 0);
	for (unsigned i = 0; i < o.conns; i++) {
		int rc = rnic_cm_disconnect(ends[i].id);
		if (rc != 0)
			return die("disconnect", -rc);
	}
	seen = now_s();
	while (down < o.conns) {
		last = down;
		if (events(50, &up, &down) != 0)
			return 1;
		if (down != last)
			seen = now_s();
		else if (now_s() - seen > STALL_S)
			return die("DISCONNECTED events stopped coming", ETIMEDOUT);
	}
	printf("closed %u\n", down);
	int bad = 0;
	for (unsigned i = 0; i < o.conns; i++)
		bad |= rnic_cm_destroy_id(ends[i].id) | rnic_destroy_qp(ends[i].qp);
	free(ends);
	bad |= rnic_cm_destroy_channel(ch) | rnic_destroy_cq(cq) | rnic_dealloc_pd(pd);
	bad |= rnic_close_device(ctx);
	rnic_stack_stop(st);
	rnic_stack_destroy(st);
	return bad ? die("teardown: an object refused to go", 0) : 0;
}
