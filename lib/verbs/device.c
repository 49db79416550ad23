/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The verbs device of a stack: context, protection domains, memory
 * regions, and the verbs protocol module (per-worker doorbell ring and
 * poller; the STag table is the RDMA core's, lib/rdma).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include <rte_ethdev.h>
#include <rte_malloc.h>
#include <rte_random.h>

#include "engine/stack.h"
#include "engine/worker.h"
#include "port/port.h"
#include "rdma/gid.h"
#include "rnic/rnic_roce.h"
#include "verbs/verbs.h"

/* --- protocol module --------------------------------------------------------- */

static int verbs_stack_init(struct rnic_stack *st)
{
	struct rnic_verbs_stack *vs = calloc(1, sizeof(*vs));
	if (vs == NULL)
		return -ENOMEM;
	pthread_mutex_init(&vs->lock, NULL);
	st->proto[RNIC_PROTO_VERBS] = vs;
	rnic_verbs_telemetry_init();   /* /rnic/qp, /rnic/qps (telemetry.c) */
	return 0;
}

static void verbs_stack_fini(struct rnic_stack *st)
{
	struct rnic_verbs_stack *vs = verbs_st(st);
	if (vs == NULL)
		return;
	pthread_mutex_destroy(&vs->lock);
	free(vs);
	st->proto[RNIC_PROTO_VERBS] = NULL;
}

static int verbs_worker_init(struct rnic_worker *w)
{
	char name[RTE_RING_NAMESIZE];
	struct rnic_verbs_worker *vw = rte_zmalloc("rnic_verbs_w", sizeof(*vw), 0);
	if (vw == NULL)
		return -ENOMEM;
	snprintf(name, sizeof(name), "rnic_db%u_%u", w->st->id, w->id);
	/* one entry per QP at most (db_pending): as deep as the QP limit */
	vw->db = rte_ring_create(name, RNIC_MAX_QP * 2, rte_socket_id(), RING_F_SC_DEQ);
	snprintf(name, sizeof(name), "rnic_ev%u_%u", w->st->id, w->id);
	/* one entry per armed CQ at most (the arm is taken once) */
	vw->evq = rte_ring_create(name, RNIC_MAX_CQ * 2, rte_socket_id(), RING_F_SC_DEQ);
	if (vw->db == NULL || vw->evq == NULL) {
		rte_ring_free(vw->db);
		rte_ring_free(vw->evq);
		rte_free(vw);
		return -ENOMEM;
	}
	w->proto[RNIC_PROTO_VERBS] = vw;
	int rc = rnic_worker_add_poller(w, "verbs", rnic_verbs_poll, vw);
	return rc ? rc : rnic_worker_add_poller(w, "cq_events", rnic_cq_events_poll, vw);
}

static void verbs_worker_fini(struct rnic_worker *w)
{
	struct rnic_verbs_worker *vw = w->proto[RNIC_PROTO_VERBS];
	if (vw == NULL)
		return;
	rte_ring_free(vw->db);
	rte_ring_free(vw->evq);
	rte_free(vw);
	w->proto[RNIC_PROTO_VERBS] = NULL;
}

/* Connections for the status line and telemetry: QPs that are connected
 * (RTS or SQD), iWARP and RoCE alike. A QP is one connection for as long
 * as its user has it, unlike a TCB, which lingers in TIME_WAIT after the
 * QP's close (and a RoCE QP has none). Control plane, any thread: the QP
 * table is read under the device lock, which QP destruction takes. */
static uint64_t verbs_connections(const struct rnic_stack *st)
{
	struct rnic_verbs_stack *vs = verbs_st(st);
	uint64_t n = 0;

	if (vs == NULL)
		return 0;
	pthread_mutex_lock(&vs->lock);
	struct rnic_device *d = vs->dev;
	if (d != NULL) {
		pthread_mutex_lock(&d->lock);
		for (unsigned i = 0; i < RNIC_MAX_QP && d->n_qp > 0; i++) {
			const struct rnic_qp *qp = rnic_qp_by_num(st, i);
			enum ibv_qp_state s = qp ? __atomic_load_n(&qp->qp.state,
								   __ATOMIC_ACQUIRE) : IBV_QPS_RESET;
			n += s == IBV_QPS_RTS || s == IBV_QPS_SQD;
		}
		pthread_mutex_unlock(&d->lock);
	}
	pthread_mutex_unlock(&vs->lock);
	return n;
}

const struct rnic_proto_ops rnic_verbs_proto = {
	.name = "verbs",
	.stack_init = verbs_stack_init,
	.stack_fini = verbs_stack_fini,
	.worker_init = verbs_worker_init,
	.worker_fini = verbs_worker_fini,
	.connections = verbs_connections,
};

/* --- device ------------------------------------------------------------------- */

/* Fill view @p t of a new device: the ibv_context a program sees. */
static void view_init(struct rnic_device *d, enum rnic_transport t, int async_fd)
{
	struct rnic_device_view *v = &d->view[t == RNIC_TRANSPORT_ROCE];
	const bool roce = t == RNIC_TRANSPORT_ROCE;

	v->d = d;
	v->transport = t;
	/* siw is an RNIC on the iWARP transport, rxe a CA on InfiniBand's */
	snprintf(v->dev.name, sizeof(v->dev.name), "rnic%u%s", d->st->id, roce ? "_roce" : "");
	snprintf(v->dev.dev_name, sizeof(v->dev.dev_name), "rnic%u%s", d->st->id,
		 roce ? "_roce" : "");
	v->dev.node_type = roce ? IBV_NODE_CA : IBV_NODE_RNIC;
	v->dev.transport_type = roce ? IBV_TRANSPORT_IB : IBV_TRANSPORT_IWARP;
	/* an extended context (rdma-core's verbs_get_ctx() contract) */
	v->vctx.sz = sizeof(v->vctx);
	v->vctx.context.abi_compat = __VERBS_ABI_IS_EXTENDED;
	v->vctx.context.device = &v->dev;
	v->vctx.context.cmd_fd = -1;
	v->vctx.context.async_fd = async_fd;   /* one event queue for both views */
	v->vctx.context.num_comp_vectors = (int)d->n_handlers;
	pthread_mutex_init(&v->vctx.context.mutex, NULL);
	v->vctx.context.ops.poll_cq = rnic_cq_poll;
	v->vctx.context.ops.req_notify_cq = rnic_cq_req_notify;
	v->vctx.context.ops.post_send = rnic_qp_post_send;
	v->vctx.context.ops.post_recv = rnic_qp_post_recv;
	v->vctx.context.ops.post_srq_recv = rnic_srq_post_recv;
	v->vctx.context.ops.alloc_mw = rnic_alloc_mw;
	v->vctx.context.ops.dealloc_mw = rnic_dealloc_mw;
	v->vctx.context.ops.bind_mw = rnic_bind_mw;
}

/* Create the stack's device (under vs->lock). NULL and errno on failure. */
static struct rnic_device *device_create(struct rnic_stack *st)
{
	struct rnic_device *d = calloc(1, sizeof(*d));
	if (d == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	/* readable while an async event waits (rnic_get_async_event) */
	int afd = eventfd(0, EFD_CLOEXEC);
	if (afd < 0) {
		int e = errno;
		free(d);
		errno = e;
		return NULL;
	}
	d->st = st;
	/* 0 and 1 are the IB special QPs; the first number is random, as a
	 * NIC's after a reset, so a peer still retransmitting to a QP of an
	 * earlier process does not hit this one's first QP */
	d->next_qpn = 2 + (uint32_t)(rte_rand() % (RNIC_MAX_QP - 2));
	pthread_mutex_init(&d->lock, NULL);
	pthread_mutex_init(&d->alock, NULL);
	/* one completion handler per worker (seed 003), equal priorities */
	d->n_handlers = st->n_workers;
	for (unsigned h = 0; h < d->n_handlers; h++)
		d->handlers[h] = (struct rnic_handler){ .worker = h, .prio = 0 };
	view_init(d, RNIC_TRANSPORT_IWARP, afd);
	view_init(d, RNIC_TRANSPORT_ROCE, afd);
	return d;
}

struct ibv_context *rnic_open_device_transport(struct rnic_stack *st, enum rnic_transport t)
{
	struct rnic_verbs_stack *vs = st ? verbs_st(st) : NULL;
	if (vs == NULL || t > RNIC_TRANSPORT_ROCE) {
		errno = EINVAL;
		return NULL;
	}
	pthread_mutex_lock(&vs->lock);
	struct rnic_device *d = vs->dev;
	if (d == NULL)
		d = device_create(st);
	if (d != NULL) {
		d->refs++;
		vs->dev = d;
	}
	pthread_mutex_unlock(&vs->lock);
	return d ? &d->view[t == RNIC_TRANSPORT_ROCE].vctx.context : NULL;
}

struct ibv_context *rnic_open_device(struct rnic_stack *st)
{
	return rnic_open_device_transport(st, RNIC_TRANSPORT_IWARP);
}

int rnic_close_device(struct ibv_context *ctx)
{
	struct rnic_device *d = dev_of(ctx);
	struct rnic_verbs_stack *vs = verbs_st(d->st);
	pthread_mutex_lock(&vs->lock);
	if (d->refs > 1) {
		d->refs--;
		pthread_mutex_unlock(&vs->lock);
		return 0;
	}
	if (d->n_pd || d->n_cq || d->n_qp || d->n_srq || d->n_chan) {
		pthread_mutex_unlock(&vs->lock);
		return -EBUSY;
	}
	vs->dev = NULL;
	pthread_mutex_unlock(&vs->lock);
	close(d->view[0].vctx.context.async_fd);
	pthread_mutex_destroy(&d->alock);
	for (unsigned i = 0; i < 2; i++)
		pthread_mutex_destroy(&d->view[i].vctx.context.mutex);
	pthread_mutex_destroy(&d->lock);
	free(d);
	return 0;
}

struct rnic_stack *rnic_device_stack(struct ibv_context *ctx)
{
	return dev_of(ctx)->st;
}

enum rnic_transport rnic_device_transport(struct ibv_context *ctx)
{
	return view_of(ctx)->transport;
}

int rnic_query_device(struct ibv_context *ctx, struct ibv_device_attr *a)
{
	struct rnic_device *d = dev_of(ctx);
	memset(a, 0, sizeof(*a));
	snprintf(a->fw_ver, sizeof(a->fw_ver), "rnic-1");
	if (d->st->n_ports > 0) {
		const uint8_t *mac = d->st->ports[0]->mac.addr_bytes;
		/* EUI-64 from the MAC, as NICs derive their GUIDs */
		uint8_t g[8] = { mac[0] ^ 2, mac[1], mac[2], 0xff, 0xfe, mac[3], mac[4], mac[5] };
		memcpy(&a->node_guid, g, 8);
		memcpy(&a->sys_image_guid, g, 8);
	}
	a->max_mr_size = RNIC_MAX_MR_SIZE;
	a->page_size_cap = 4096;
	a->vendor_id = 0x626d74;   /* the siw/rxe convention: no real OUI */
	a->max_qp = RNIC_MAX_QP;
	a->max_qp_wr = RNIC_MAX_QP_WR;
	a->device_cap_flags = IBV_DEVICE_MEM_WINDOW | IBV_DEVICE_MEM_WINDOW_TYPE_2B |
			      IBV_DEVICE_SRQ_RESIZE | IBV_DEVICE_MEM_MGT_EXTENSIONS;
	a->max_sge = RNIC_MAX_SGE;
	a->max_sge_rd = 1;
	a->max_cq = 65536;
	a->max_cqe = RNIC_MAX_CQE;
	a->max_mr = 65535;
	a->max_pd = 65536;
	a->max_qp_rd_atom = RNIC_MAX_RD_ATOMIC;
	a->max_qp_init_rd_atom = RNIC_MAX_RD_ATOMIC;
	a->max_res_rd_atom = RNIC_MAX_RD_ATOMIC * RNIC_MAX_QP;
	/* RoCE QPs do atomics (one address is atomic across QPs and workers);
	 * iWARP's RFC 7306 atomics are not done yet */
	a->atomic_cap = IBV_ATOMIC_HCA;   /* RoCE, and iWARP through RFC 7306 */
	a->max_mw = 65535;
	a->max_srq = 4096;
	a->max_srq_wr = RNIC_MAX_QP_WR;
	a->max_srq_sge = RNIC_MAX_SGE;
	a->phys_port_cnt = (uint8_t)d->st->n_ports;
	return 0;
}

static enum ibv_mtu mtu_enum(unsigned mtu)
{
	if (mtu >= 4096)
		return IBV_MTU_4096;
	if (mtu >= 2048)
		return IBV_MTU_2048;
	if (mtu >= 1024)
		return IBV_MTU_1024;
	if (mtu >= 512)
		return IBV_MTU_512;
	return IBV_MTU_256;
}

int rnic_query_port(struct ibv_context *ctx, uint8_t port_num, struct ibv_port_attr *a)
{
	struct rnic_device *d = dev_of(ctx);
	if (port_num < 1 || port_num > d->st->n_ports)
		return -EINVAL;
	struct rnic_port *p = d->st->ports[port_num - 1];
	memset(a, 0, sizeof(*a));
	a->state = p->link_up ? IBV_PORT_ACTIVE : IBV_PORT_DOWN;
	a->phys_state = p->link_up ? 5 : 3;   /* LinkUp, Disabled */
	a->max_mtu = IBV_MTU_4096;
	/* the IBA MTU that fits in an Ethernet MTU with the RoCEv2 headers */
	a->active_mtu = mtu_enum(p->mtu > RNIC_ROCE_OVERHEAD ? p->mtu - RNIC_ROCE_OVERHEAD : 256);
	a->gid_tbl_len = rnic_gid_count(p);
	a->max_msg_sz = 1u << 31;
	a->pkey_tbl_len = 1;
	a->link_layer = IBV_LINK_LAYER_ETHERNET;
	a->active_width = 1;
	a->active_speed = 1;
	return 0;
}

int rnic_query_gid(struct ibv_context *ctx, uint8_t port_num, int index, union ibv_gid *gid)
{
	struct rnic_device *d = dev_of(ctx);
	if (port_num < 1 || port_num > d->st->n_ports)
		return -EINVAL;
	/* the table as Linux lists a RoCE device's (rdma/gid.h) */
	memset(gid, 0, sizeof(*gid));
	return rnic_gid_get(d->st->ports[port_num - 1], index, gid->raw);
}

/* --- asynchronous events ------------------------------------------------------ */

/* The eventfd holds 1 exactly while the queue is not empty; both
 * transitions happen under alock, so a read never blocks and a waiter
 * that saw the fd readable finds the event (or another thread took it,
 * and it waits again). */
static void afd_set(struct rnic_device *d, bool on)
{
	uint64_t v = 1;
	ssize_t n = on ? write(d->view[0].vctx.context.async_fd, &v, sizeof(v))
		       : read(d->view[0].vctx.context.async_fd, &v, sizeof(v));
	(void)n;
}

static bool ev_is_cq(enum ibv_event_type t)
{
	return t == IBV_EVENT_CQ_ERR;
}

static bool ev_is_qp(enum ibv_event_type t)
{
	return t == IBV_EVENT_QP_FATAL || t == IBV_EVENT_QP_REQ_ERR ||
	       t == IBV_EVENT_QP_ACCESS_ERR || t == IBV_EVENT_COMM_EST ||
	       t == IBV_EVENT_SQ_DRAINED || t == IBV_EVENT_PATH_MIG ||
	       t == IBV_EVENT_PATH_MIG_ERR || t == IBV_EVENT_QP_LAST_WQE_REACHED;
}

void rnic_async_raise(struct rnic_device *d, const struct ibv_async_event *ev)
{
	pthread_mutex_lock(&d->alock);
	d->astats.raised++;
	if (ev->event_type == IBV_EVENT_CQ_ERR)
		d->astats.cq_err++;
	else if (ev->event_type == IBV_EVENT_QP_FATAL)
		d->astats.qp_fatal++;
	if (d->aq_count == RNIC_ASYNC_DEPTH) {
		d->astats.lost++;
	} else {
		d->aq[(d->aq_head + d->aq_count) % RNIC_ASYNC_DEPTH] = *ev;
		if (d->aq_count++ == 0)
			afd_set(d, true);
	}
	pthread_mutex_unlock(&d->alock);
}

void rnic_async_purge(struct rnic_device *d, const void *obj)
{
	pthread_mutex_lock(&d->alock);
	unsigned keep = 0;
	for (unsigned i = 0; i < d->aq_count; i++) {
		const struct ibv_async_event *e = &d->aq[(d->aq_head + i) % RNIC_ASYNC_DEPTH];
		if ((ev_is_cq(e->event_type) && (const void *)e->element.cq == obj) ||
		    (ev_is_qp(e->event_type) && (const void *)e->element.qp == obj)) {
			d->astats.purged++;
			continue;
		}
		d->aq[(d->aq_head + keep++) % RNIC_ASYNC_DEPTH] = *e;
	}
	if (d->aq_count > 0 && keep == 0)
		afd_set(d, false);
	d->aq_count = keep;
	pthread_mutex_unlock(&d->alock);
}

int rnic_get_async_event_timeout(struct ibv_context *ctx, struct ibv_async_event *ev,
				 int timeout_ms)
{
	if (ctx == NULL || ev == NULL)
		return -EINVAL;
	struct rnic_device *d = dev_of(ctx);
	struct timespec t0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		pthread_mutex_lock(&d->alock);
		if (d->aq_count > 0) {
			*ev = d->aq[d->aq_head];
			d->aq_head = (d->aq_head + 1) % RNIC_ASYNC_DEPTH;
			if (--d->aq_count == 0)
				afd_set(d, false);
			d->astats.delivered++;
			if (ev_is_cq(ev->event_type))
				cq_of(ev->element.cq)->async_got++;
			else if (ev_is_qp(ev->event_type))
				qp_of(ev->element.qp)->async_got++;
			pthread_mutex_unlock(&d->alock);
			return 0;
		}
		pthread_mutex_unlock(&d->alock);
		int wait = timeout_ms;
		if (timeout_ms > 0) {
			struct timespec t;
			clock_gettime(CLOCK_MONOTONIC, &t);
			long el = (t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000;
			if (el >= timeout_ms)
				return -EAGAIN;
			wait = timeout_ms - (int)el;
		} else if (timeout_ms == 0) {
			return -EAGAIN;
		}
		struct pollfd pfd = { .fd = ctx->async_fd, .events = POLLIN };
		if (poll(&pfd, 1, wait) < 0 && errno != EINTR)
			return -errno;
	}
}

int rnic_get_async_event(struct ibv_context *ctx, struct ibv_async_event *ev)
{
	if (ctx == NULL)
		return -EINVAL;
	int fl = fcntl(ctx->async_fd, F_GETFL);
	/* libibverbs: an application that made async_fd O_NONBLOCK gets
	 * EAGAIN instead of waiting (our own reads never block: the count is
	 * known to be there, under alock) */
	return rnic_get_async_event_timeout(ctx, ev, fl >= 0 && (fl & O_NONBLOCK) ? 0 : -1);
}

void rnic_ack_async_event(struct ibv_async_event *ev)
{
	struct rnic_device *d = NULL;
	if (ev_is_cq(ev->event_type) && ev->element.cq != NULL) {
		d = dev_of(ev->element.cq->context);
		__atomic_fetch_add(&cq_of(ev->element.cq)->async_acked, 1, __ATOMIC_RELEASE);
	} else if (ev_is_qp(ev->event_type) && ev->element.qp != NULL) {
		d = dev_of(ev->element.qp->context);
		__atomic_fetch_add(&qp_of(ev->element.qp)->async_acked, 1, __ATOMIC_RELEASE);
	}
	if (d != NULL) {
		pthread_mutex_lock(&d->alock);
		d->astats.acked++;
		pthread_mutex_unlock(&d->alock);
	}
}

void rnic_async_stats(struct ibv_context *ctx, struct rnic_async_stats *s)
{
	struct rnic_device *d = dev_of(ctx);
	pthread_mutex_lock(&d->alock);
	*s = d->astats;
	s->queued = d->aq_count;
	pthread_mutex_unlock(&d->alock);
}

#define EV_NAME(t) [IBV_EVENT_##t] = #t
static const char *const ev_names[] = {
	EV_NAME(CQ_ERR), EV_NAME(QP_FATAL), EV_NAME(QP_REQ_ERR), EV_NAME(QP_ACCESS_ERR),
	EV_NAME(COMM_EST), EV_NAME(SQ_DRAINED), EV_NAME(PATH_MIG), EV_NAME(PATH_MIG_ERR),
	EV_NAME(DEVICE_FATAL), EV_NAME(PORT_ACTIVE), EV_NAME(PORT_ERR), EV_NAME(LID_CHANGE),
	EV_NAME(PKEY_CHANGE), EV_NAME(SM_CHANGE), EV_NAME(SRQ_ERR), EV_NAME(SRQ_LIMIT_REACHED),
	EV_NAME(QP_LAST_WQE_REACHED), EV_NAME(CLIENT_REREGISTER), EV_NAME(GID_CHANGE),
	EV_NAME(WQ_FATAL),
};
#undef EV_NAME

const char *rnic_event_type_str(enum ibv_event_type t)
{
	return (unsigned)t < sizeof(ev_names) / sizeof(ev_names[0]) && ev_names[t] != NULL
		? ev_names[t] : "unknown";
}

/* --- protection domains -------------------------------------------------------- */

struct ibv_pd *rnic_alloc_pd(struct ibv_context *ctx)
{
	struct rnic_device *d = dev_of(ctx);
	struct rnic_pd *pd = calloc(1, sizeof(*pd));
	if (pd == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	pd->pd.context = ctx;
	pthread_mutex_lock(&d->lock);
	pd->pd.handle = ++d->n_pd;
	pthread_mutex_unlock(&d->lock);
	return &pd->pd;
}

int rnic_dealloc_pd(struct ibv_pd *ipd)
{
	struct rnic_pd *pd = pd_of(ipd);
	struct rnic_device *d = dev_of(ipd->context);
	if (__atomic_load_n(&pd->users, __ATOMIC_ACQUIRE) != 0)
		return -EBUSY;
	pthread_mutex_lock(&d->lock);
	d->n_pd--;
	pthread_mutex_unlock(&d->lock);
	free(pd);
	return 0;
}

/* --- memory regions ------------------------------------------------------------ */

#define ACCESS_ALL (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
		    IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC | \
		    IBV_ACCESS_MW_BIND | IBV_ACCESS_ZERO_BASED)

struct ibv_mr *rnic_reg_mr(struct ibv_pd *ipd, void *addr, size_t length, int access)
{
	return rnic_reg_mr_port(ipd, addr, length, access, 1);
}

/* Register [addr, addr + length) as the tagged range at @p iova, STag of
 * port @p port_num. */
static struct ibv_mr *reg_mr_at(struct ibv_pd *ipd, void *addr, size_t length, uint64_t iova,
				int access, uint8_t port_num)
{
	if (ipd == NULL || port_num == 0 || (addr == NULL && length) || length > RNIC_MAX_MR_SIZE ||
	    (access & ~ACCESS_ALL) || (access & IBV_ACCESS_ZERO_BASED) ||
	    /* IBA 10.6.3.1: remote write/atomic need local write */
	    ((access & (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC)) &&
	     !(access & IBV_ACCESS_LOCAL_WRITE))) {
		errno = EINVAL;
		return NULL;
	}
	struct rnic_device *d = dev_of(ipd->context);
	struct rnic_mr *mr = calloc(1, sizeof(*mr));
	if (mr == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	int rc = rnic_mr_register(d->st, &mr->m, addr, length, iova, access, port_num - 1u,
				  ipd, mr);
	if (rc != 0) {
		free(mr);
		errno = rc == -EINVAL ? EINVAL : ENOMEM;
		return NULL;
	}
	mr->mr.context = ipd->context;
	mr->mr.pd = ipd;
	mr->mr.addr = addr;
	mr->mr.length = length;
	mr->mr.handle = mr->m.stag;
	mr->mr.lkey = mr->mr.rkey = mr->m.stag;
	__atomic_fetch_add(&pd_of(ipd)->users, 1, __ATOMIC_RELAXED);
	return &mr->mr;
}

struct ibv_mr *rnic_reg_mr_port(struct ibv_pd *ipd, void *addr, size_t length, int access,
				uint8_t port_num)
{
	return reg_mr_at(ipd, addr, length, (uint64_t)(uintptr_t)addr, access, port_num);
}

struct ibv_mr *rnic_reg_mr_iova(struct ibv_pd *ipd, void *addr, size_t length, uint64_t iova,
				int access)
{
	return reg_mr_at(ipd, addr, length, iova, access, 1);
}

int rnic_query_stag_stats(struct ibv_context *ctx, uint8_t port_num,
			  struct rnic_stag_port_stats *s)
{
	if (ctx == NULL || s == NULL || port_num == 0)
		return -EINVAL;
	return rnic_stag_port_stats(dev_of(ctx)->st, port_num - 1u, s) == 0 ? 0 : -EINVAL;
}

int rnic_migration_hold(struct ibv_context *ctx, int hold)
{
	if (ctx == NULL)
		return -EINVAL;
	return rnic_stag_mig_hold(dev_of(ctx)->st, hold != 0) == 0 ? 0 : -EINVAL;
}

int rnic_dereg_mr(struct ibv_mr *imr)
{
	struct rnic_mr *mr = (struct rnic_mr *)imr;
	if (__atomic_load_n(&mr->m.binds, __ATOMIC_ACQUIRE) != 0)
		return -EBUSY;
	rnic_mr_deregister(dev_of(imr->context)->st, &mr->m);
	__atomic_fetch_sub(&pd_of(imr->pd)->users, 1, __ATOMIC_RELAXED);
	free(mr);
	return 0;
}

int rnic_sge_check(struct rnic_device *d, struct ibv_pd *pd, const struct ibv_sge *sge,
		   int n, int access, uint32_t *total)
{
	uint64_t sum = 0;
	for (int i = 0; i < n; i++) {
		enum rnic_stag_fault e;
		sum += sge[i].length;
		if (sge[i].length == 0)
			continue;
		if (rnic_stag_check(d->st, sge[i].lkey, pd, 0, sge[i].addr, sge[i].length,
				    access, &e) == NULL)
			return e == RNIC_STAG_ACCESS ? EACCES : EINVAL;
	}
	if (sum > (1ull << 31))
		return EINVAL;
	*total = (uint32_t)sum;
	return 0;
}
