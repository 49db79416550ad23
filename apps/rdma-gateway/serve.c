/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rdma-gateway: serving targets (issue 7). The main thread runs the CM
 * event loop; the workers do all the data movement (clients RDMA-Read and
 * -Write the registered target memory, one-sided, the gateway posts
 * nothing). See apps/common/rnic_gw.h for the protocol.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <rte_byteorder.h>
#include <rte_telemetry.h>

#include "rnic/rnic_cm.h"
#include "rnic/rnic_roce.h"
#include "rnic_gw.h"
#include "rnic/rnic_verbs.h"
#include "serve.h"

/* Clients connected or connecting at once, over all targets (beyond:
 * RNIC_GW_BUSY "too many clients"). Each costs a QP (about 10 KiB with
 * its transport's state) and this table's entry. */
#define GW_MAX_CLIENTS 65536

/* The protocol's messages fit the IB CM's rooms as well as MPA's, so every
 * target can be offered over RoCE (apps/common/rnic_gw.h). */
_Static_assert(sizeof(struct rnic_gw_req) <= RNIC_CM_ROCE_REQ_PDATA_MAX,
	       "the gateway request fits a RoCE REQ");
_Static_assert(offsetof(struct rnic_gw_rep, reason) <= RNIC_CM_ROCE_REP_PDATA_MAX,
	       "the gateway accept fits a RoCE REP");
_Static_assert(sizeof(struct rnic_gw_rep) <= RNIC_CM_ROCE_REJ_PDATA_MAX,
	       "the gateway reject fits a RoCE REJ");

struct served {
	struct gw_target *cfg;
	uint8_t *mem;
	int fd;
	struct ibv_mr *mr;
	uint64_t accepted, rejected, active;
	uint64_t accepted_roce;     /* of accepted: over RoCE */
	uint64_t wrong_transport;   /* of rejected: not offered on that one */
	uint64_t bytes_in, bytes_out, ops_in;   /* of clients gone */
	/* as of the last gw_serve_refresh(), clients gone and connected;
	 * atomics: the telemetry thread reads them */
	uint64_t tot_in, tot_out, tot_ops;
	uint64_t ops_per_s;
};

/* One client from its request to its end: the context of its CM id (so
 * an event finds it at once), on the list of all (for the refresh and the
 * stop). */
struct client {
	struct rnic_cm_id *id;
	struct ibv_qp *qp;
	struct served *t;
	int established;
	struct client *prev, *next;
};

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct rnic_cm_channel *ch;
static struct ibv_cq *cq;   /* every client QP's: the gateway posts nothing */
static struct served tg[GW_MAX_TARGETS];
static unsigned n_tg;
static struct rnic_cm_id *listeners[GW_MAX_TARGETS];
static unsigned n_listeners;
static struct client *clients;   /* the list of all */
static unsigned n_clients;
static int stopping;

/* A new client of @p t, on the list; NULL at GW_MAX_CLIENTS or without memory. */
static struct client *client_new(struct served *t)
{
	struct client *c = n_clients < GW_MAX_CLIENTS ? calloc(1, sizeof(*c)) : NULL;
	if (c == NULL)
		return NULL;
	c->t = t;
	c->next = clients;
	if (clients != NULL)
		clients->prev = c;
	clients = c;
	n_clients++;
	return c;
}

/* The client an event is about: its id's context (listeners, whose
 * context is their port, get no events but requests). */
static struct client *client_of(const struct rnic_cm_event *ev)
{
	return ev->type == RNIC_CM_EVENT_CONNECT_REQUEST ? NULL : rnic_cm_id_context(ev->id);
}

/* Its totals to the target, its id, QP and list entry gone. */
static void client_free(struct client *c)
{
	if (c->qp) {
		struct rnic_qp_stats s;
		rnic_qp_stats(c->qp, &s);
		c->t->bytes_in += s.bytes_in;
		c->t->bytes_out += s.bytes_out;
		c->t->ops_in += s.ops_in;
	}
	if (c->id)
		rnic_cm_destroy_id(c->id);
	if (c->qp)
		rnic_destroy_qp(c->qp);
	if (c->established && c->t->active)
		__atomic_fetch_sub(&c->t->active, 1, __ATOMIC_RELAXED);
	if (c->prev != NULL)
		c->prev->next = c->next;
	else
		clients = c->next;
	if (c->next != NULL)
		c->next->prev = c->prev;
	n_clients--;
	free(c);
}

static void reject(struct rnic_cm_id *id, struct served *t, enum rnic_gw_status st,
		   const char *reason)
{
	struct rnic_gw_rep rep = { .version = RNIC_GW_VERSION, .status = rte_cpu_to_be_16(st) };
	memcpy(rep.magic, RNIC_GW_MAGIC, 4);
	snprintf(rep.reason, sizeof(rep.reason), "%s", reason);
	rnic_cm_reject(id, &rep, sizeof(rep));
	rnic_cm_destroy_id(id);
	if (t)
		__atomic_fetch_add(&t->rejected, 1, __ATOMIC_RELAXED);
}

static const char *transport_name(enum rnic_transport tr)
{
	return tr == RNIC_TRANSPORT_ROCE ? "roce" : "iwarp";
}

/* Whether the target's `transport` list holds the request's. */
static bool offered(const struct gw_target *t, enum rnic_transport tr)
{
	return tr == RNIC_TRANSPORT_ROCE ? t->roce : tr == RNIC_TRANSPORT_IWARP && t->iwarp;
}

static void on_request(const struct rnic_cm_event *ev)
{
	uint16_t port = (uint16_t)(uintptr_t)rnic_cm_id_context(ev->listen_id);
	const struct rnic_gw_req *r = (const void *)ev->private_data;
	if (stopping) {
		reject(ev->id, NULL, RNIC_GW_STOPPING, "the gateway is stopping");
		return;
	}
	if (ev->private_data_len < sizeof(*r) || memcmp(r->magic, RNIC_GW_MAGIC, 4) != 0 ||
	    r->version != RNIC_GW_VERSION || memchr(r->target, 0, RNIC_GW_NAME_LEN) == NULL) {
		reject(ev->id, NULL, RNIC_GW_BAD_REQUEST, "not an rnic-gateway request (v1)");
		return;
	}
	struct served *t = NULL;
	for (unsigned i = 0; i < n_tg; i++)
		if (tg[i].cfg->listen == port && !strcmp(tg[i].cfg->name, r->target))
			t = &tg[i];
	char why[64];
	if (t == NULL) {
		snprintf(why, sizeof(why), "no target '%.32s' on port %u", r->target, port);
		reject(ev->id, NULL, RNIC_GW_NO_TARGET, why);
		return;
	}
	if (!offered(t->cfg, ev->transport)) {
		snprintf(why, sizeof(why), "target %.31s: not offered over %s",
			 r->target, transport_name(ev->transport));
		__atomic_fetch_add(&t->wrong_transport, 1, __ATOMIC_RELAXED);
		reject(ev->id, t, RNIC_GW_WRONG_TRANSPORT, why);
		return;
	}
	if (!gw_allowed(t->cfg, &ev->peer)) {
		char a[RNIC_ADDRSTRLEN];
		snprintf(why, sizeof(why), "%s is not allowed", rnic_addr_str(&ev->peer, a, sizeof(a)));
		reject(ev->id, t, RNIC_GW_NOT_ALLOWED, why);
		return;
	}
	if ((r->flags & RNIC_GW_WANT_WRITE) && t->cfg->read_only) {
		reject(ev->id, t, RNIC_GW_READ_ONLY, "target is read-only");
		return;
	}
	struct client *c = client_new(t);
	if (c == NULL) {
		reject(ev->id, t, RNIC_GW_BUSY, "too many clients");
		return;
	}
	struct ibv_qp_init_attr qa = { .send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
				       .cap = { .max_send_wr = 1, .max_recv_wr = 1,
						.max_send_sge = 1, .max_recv_sge = 1 } };
	/* the listener hears both transports: the QP must be the request's */
	c->qp = rnic_create_qp_transport(pd, &qa, ev->transport);
	if (c->qp == NULL) {
		client_free(c);
		reject(ev->id, t, RNIC_GW_BUSY, "out of QPs");
		return;
	}
	c->id = ev->id;
	rnic_cm_id_set_context(ev->id, c);
	struct rnic_gw_rep rep = { .version = RNIC_GW_VERSION,
				   .flags = t->cfg->read_only ? 0 : RNIC_GW_WRITABLE,
				   .stag = rte_cpu_to_be_32(t->mr->rkey),
				   .addr = rte_cpu_to_be_64((uintptr_t)t->mem),
				   .length = rte_cpu_to_be_64(t->cfg->size) };
	memcpy(rep.magic, RNIC_GW_MAGIC, 4);
	/* reads as deep as the client asks, up to the device limit */
	struct rnic_cm_conn_param p = { .private_data = &rep,
					.private_data_len = offsetof(struct rnic_gw_rep, reason),
					.responder_resources = ev->ord ? ev->ord : 16,
					.initiator_depth = 1 };
	int rc = rnic_cm_accept(ev->id, c->qp, &p);
	if (rc != 0) {
		static unsigned told;   /* the first few: a storm stays readable */
		if (told++ < 8)
			fprintf(stderr, "rdma-gateway: target %s: accept failed: %s\n",
				t->cfg->name, strerror(-rc));
		client_free(c);
		__atomic_fetch_add(&t->rejected, 1, __ATOMIC_RELAXED);
		return;
	}
	__atomic_fetch_add(&t->accepted, 1, __ATOMIC_RELAXED);
	if (ev->transport == RNIC_TRANSPORT_ROCE)
		__atomic_fetch_add(&t->accepted_roce, 1, __ATOMIC_RELAXED);
}

void gw_serve_poll(int timeout_ms)
{
	struct rnic_cm_event ev;
	if (ch == NULL) {
		usleep((useconds_t)timeout_ms * 1000);
		return;
	}
	while (rnic_cm_get_event(ch, &ev, timeout_ms) == 0) {
		timeout_ms = 0;
		struct client *c = client_of(&ev);
		switch (ev.type) {
		case RNIC_CM_EVENT_CONNECT_REQUEST:
			on_request(&ev);
			break;
		case RNIC_CM_EVENT_ESTABLISHED:
			if (c) {
				c->established = 1;
				__atomic_fetch_add(&c->t->active, 1, __ATOMIC_RELAXED);
			}
			break;
		default:   /* DISCONNECTED and failures: the client is gone */
			if (c)
				client_free(c);
			break;
		}
	}
}

void gw_serve_refresh(uint64_t now_ms)
{
	static uint64_t last_ms;
	uint64_t dt = now_ms - last_ms;

	uint64_t in[GW_MAX_TARGETS], out[GW_MAX_TARGETS], ops[GW_MAX_TARGETS];
	for (unsigned i = 0; i < n_tg; i++) {
		in[i] = tg[i].bytes_in;
		out[i] = tg[i].bytes_out;
		ops[i] = tg[i].ops_in;
	}
	/* one pass over the clients, each adding to its target */
	for (const struct client *c = clients; c != NULL; c = c->next)
		if (c->qp) {
			struct rnic_qp_stats s;
			unsigned i = (unsigned)(c->t - tg);
			rnic_qp_stats(c->qp, &s);
			in[i] += s.bytes_in;
			out[i] += s.bytes_out;
			ops[i] += s.ops_in;
		}
	for (unsigned i = 0; i < n_tg; i++) {
		/* the first refresh has nothing to compare with */
		uint64_t rate = last_ms != 0 && dt > 0 && ops[i] >= tg[i].tot_ops ?
				(ops[i] - tg[i].tot_ops) * 1000 / dt : 0;
		__atomic_store_n(&tg[i].ops_per_s, rate, __ATOMIC_RELAXED);
		__atomic_store_n(&tg[i].tot_in, in[i], __ATOMIC_RELAXED);
		__atomic_store_n(&tg[i].tot_out, out[i], __ATOMIC_RELAXED);
		__atomic_store_n(&tg[i].tot_ops, ops[i], __ATOMIC_RELAXED);
	}
	last_ms = now_ms;
}

void gw_serve_status(FILE *f)
{
	for (unsigned i = 0; i < n_tg; i++)
		fprintf(f, " | %s: %lu conn, in %lu B, out %lu B, %lu ops (%lu/s), %lu rejected",
			tg[i].cfg->name, (unsigned long)tg[i].active, (unsigned long)tg[i].tot_in,
			(unsigned long)tg[i].tot_out, (unsigned long)tg[i].tot_ops,
			(unsigned long)tg[i].ops_per_s, (unsigned long)tg[i].rejected);
}

/* A counter the main thread writes, read atomically. */
static void tel_u64(struct rte_tel_data *t, const char *name, const uint64_t *v)
{
	rte_tel_data_add_dict_u64(t, name, __atomic_load_n(v, __ATOMIC_RELAXED));
}

static int tel_targets(const char *cmd, const char *params, struct rte_tel_data *d)
{
	(void)cmd;
	(void)params;
	rte_tel_data_start_dict(d);
	for (unsigned i = 0; i < n_tg; i++) {
		struct rte_tel_data *t = rte_tel_data_alloc();
		if (t == NULL)
			return -ENOMEM;
		rte_tel_data_start_dict(t);
		rte_tel_data_add_dict_u64(t, "size", tg[i].cfg->size);
		tel_u64(t, "connections", &tg[i].active);
		tel_u64(t, "accepted", &tg[i].accepted);
		tel_u64(t, "accepted_roce", &tg[i].accepted_roce);
		tel_u64(t, "rejected", &tg[i].rejected);
		tel_u64(t, "rejected_transport", &tg[i].wrong_transport);
		/* all clients', as of the last refresh (status line, or 1 s) */
		tel_u64(t, "bytes_in", &tg[i].tot_in);
		tel_u64(t, "bytes_out", &tg[i].tot_out);
		tel_u64(t, "ops", &tg[i].tot_ops);
		tel_u64(t, "ops_per_s", &tg[i].ops_per_s);
		rte_tel_data_add_dict_u64(t, "bytes_in_closed", tg[i].bytes_in);
		rte_tel_data_add_dict_u64(t, "bytes_out_closed", tg[i].bytes_out);
		rte_tel_data_add_dict_container(d, tg[i].cfg->name, t, 0);
	}
	return 0;
}

static int map_target(struct served *s, char *err, size_t errlen)
{
	const struct gw_target *t = s->cfg;
	s->fd = -1;
	if (t->file[0]) {
		s->fd = open(t->file, (t->read_only ? O_RDONLY : O_RDWR) | O_CREAT, 0644);
		struct stat sb;
		if (s->fd < 0 || fstat(s->fd, &sb) != 0) {
			snprintf(err, errlen, "target %s: %s: %s", t->name, t->file, strerror(errno));
			return -1;
		}
		if ((uint64_t)sb.st_size < t->size && (t->read_only ||
						      ftruncate(s->fd, (off_t)t->size) != 0)) {
			snprintf(err, errlen, "target %s: %s is smaller than %lu bytes", t->name,
				 t->file, (unsigned long)t->size);
			return -1;
		}
		s->mem = mmap(NULL, t->size, PROT_READ | (t->read_only ? 0 : PROT_WRITE),
			      MAP_SHARED, s->fd, 0);
	} else {
		s->mem = mmap(NULL, t->size, PROT_READ | PROT_WRITE,
			      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	}
	if (s->mem == MAP_FAILED) {
		s->mem = NULL;
		snprintf(err, errlen, "target %s: cannot map %lu bytes: %s", t->name,
			 (unsigned long)t->size, strerror(errno));
		return -1;
	}
	int acc = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ |
		  (t->read_only ? 0 : IBV_ACCESS_REMOTE_WRITE);
	/* an ro file mapping is not writable: register it without local write */
	if (t->read_only && t->file[0])
		acc = IBV_ACCESS_REMOTE_READ;
	s->mr = rnic_reg_mr(pd, s->mem, t->size, acc);
	if (s->mr == NULL) {
		snprintf(err, errlen, "target %s: cannot register: %s", t->name, strerror(errno));
		return -1;
	}
	return 0;
}

int gw_serve_start(struct rnic_stack *st, struct gw_target *t, unsigned n,
		   unsigned backlog, char *err, size_t errlen)
{
	if (n == 0)
		return 0;
	ctx = rnic_open_device(st);
	pd = ctx ? rnic_alloc_pd(ctx) : NULL;
	ch = pd ? rnic_cm_create_channel(ctx) : NULL;
	cq = ch ? rnic_create_cq(ctx, 64, NULL, NULL, 0) : NULL;
	if (cq == NULL) {
		snprintf(err, errlen, "cannot open the verbs device: %s", strerror(errno));
		return -1;
	}
	for (unsigned i = 0; i < n; i++) {
		tg[n_tg].cfg = &t[i];
		if (map_target(&tg[n_tg++], err, errlen) != 0)
			return -1;
		bool have = false;
		for (unsigned k = 0; k < n_listeners; k++)
			have |= (uint16_t)(uintptr_t)rnic_cm_id_context(listeners[k]) == t[i].listen;
		if (!have) {
			struct rnic_cm_id *l;
			int rc = rnic_cm_create_id(ch, (void *)(uintptr_t)t[i].listen, &l);
			if (rc == 0 && (rc = rnic_cm_listen(l, t[i].listen, (int)backlog)) != 0)
				rnic_cm_destroy_id(l);
			if (rc != 0) {
				snprintf(err, errlen, "target %s: cannot listen on port %u: %s",
					 t[i].name, t[i].listen, strerror(-rc));
				return -1;
			}
			listeners[n_listeners++] = l;
		}
		/* one listener takes both transports; the request's is checked */
		printf("target %s: %lu bytes%s%s, %s, %s port %u, stag 0x%08x\n", t[i].name,
		       (unsigned long)t[i].size, t[i].file[0] ? " in " : " of memory",
		       t[i].file, t[i].read_only ? "ro" : "rw",
		       t[i].iwarp && t[i].roce ? "iwarp,roce" : t[i].iwarp ? "iwarp" : "roce",
		       t[i].listen, tg[n_tg - 1].mr->rkey);
	}
	rte_telemetry_register_cmd("/rnic/gateway/targets", tel_targets,
				   "Per-target counters of rdma-gateway");
	return 0;
}

int gw_serve_stop(void)
{
	int rc = 0;
	stopping = 1;
	for (unsigned k = 0; k < n_listeners; k++)
		rnic_cm_destroy_id(listeners[k]);
	n_listeners = 0;
	/* graceful: work in flight is flushed, then FIN; wait for the ends,
	 * at most 0.8 s so that the whole stop fits the 1.5 s a stop signal
	 * allows (RNIC_STOP_GRACE_MS): a peer that never answers its
	 * disconnect is then closed abortively below */
	for (struct client *c = clients; c != NULL; c = c->next)
		rnic_cm_disconnect(c->id);
	for (int waited = 0; n_clients > 0 && waited < 8; waited++)
		gw_serve_poll(100);
	while (clients != NULL)
		client_free(clients);
	for (unsigned i = 0; i < n_tg; i++) {
		if (tg[i].mr)
			rnic_dereg_mr(tg[i].mr);
		if (tg[i].fd >= 0 && tg[i].mem && !tg[i].cfg->read_only &&
		    msync(tg[i].mem, tg[i].cfg->size, MS_SYNC) != 0) {
			fprintf(stderr, "rdma-gateway: msync %s: %s\n", tg[i].cfg->file,
				strerror(errno));
			rc = -1;
		}
		if (tg[i].mem)
			munmap(tg[i].mem, tg[i].cfg->size);
		if (tg[i].fd >= 0)
			close(tg[i].fd);
	}
	n_tg = 0;
	if (ch)
		rnic_cm_destroy_channel(ch);
	if (cq)
		rnic_destroy_cq(cq);
	if (pd)
		rnic_dealloc_pd(pd);
	if (ctx)
		rnic_close_device(ctx);
	ch = NULL;
	cq = NULL;
	pd = NULL;
	ctx = NULL;
	return rc;
}
