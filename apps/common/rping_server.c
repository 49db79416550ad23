/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rping's server over rnic's verbs and CM (rdma-core librdmacm/examples/
 * rping.c is the protocol's reference). Per ping, client C and server S:
 *   C: SEND {start_buf, rkey, size}        (RDMA_READ_ADV)
 *   S: RDMA READ of start_buf into its rdma_buf, then SEND (go ahead)
 *   C: SEND {rdma_buf, rkey, size}         (RDMA_WRITE_ADV)
 *   S: RDMA WRITE of its rdma_buf into the client's rdma_buf, then SEND
 * The info record is struct rping_info: buf (be64), rkey (be32), size
 * (be32). The connection asks for IRD/ORD 1/1, as rping's rdma_cm does.
 * One client at a time: requests while one is connected are rejected.
 * The listener hears both transports (rnic_cm); a request over one the
 * options allow gets a QP of its transport, nothing else here depends on
 * it. rnic-ping -s and rdma-gateway's [responder.ping] are this server.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_byteorder.h>

#include "rping_server.h"

struct rping_info {
	rte_be64_t buf;
	rte_be32_t rkey;
	rte_be32_t size;
} __attribute__((packed));
_Static_assert(sizeof(struct rping_info) == 16, "rping's info record is 16 bytes");

enum { WR_SEND = 1, WR_RDMA = 2, WR_RECV = 3 };

/* The server's objects: the buffers live as long as the server, a
 * client's CQ, QP and CM id as long as the client. */
struct rping_srv {
	const struct rping_server_opts *o;
	struct rping_server_stats *stats;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct rnic_cm_channel *ch;
	struct rnic_cm_id *listener;
	uint8_t *rdma_buf;
	struct rping_info send_info, recv_info;
	struct ibv_mr *rdma_mr, *send_mr, *recv_mr;
	/* the client */
	struct rnic_cm_id *id;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	enum rnic_transport transport; /* of the client's request */
	bool read_next;               /* the next advertisement is a READ_ADV */
	uint64_t remote_addr;
	uint32_t remote_rkey, remote_len;
};

static void count(uint64_t *c, uint64_t n)
{
	__atomic_fetch_add(c, n, __ATOMIC_RELAXED);
}

static int post_recv(struct rping_srv *s)
{
	struct ibv_sge sge = { (uintptr_t)&s->recv_info, sizeof(s->recv_info), s->recv_mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = WR_RECV, .sg_list = &sge, .num_sge = 1 }, *bad;

	return ibv_post_recv(s->qp, &wr, &bad);
}

/* SEND our rdma_buf's info: the go-ahead after a Read, the done after a
 * Write (rping's server sends the same record both times). */
static int send_info(struct rping_srv *s)
{
	s->send_info.buf = rte_cpu_to_be_64((uintptr_t)s->rdma_buf);
	s->send_info.rkey = rte_cpu_to_be_32(s->rdma_mr->rkey);
	s->send_info.size = rte_cpu_to_be_32(s->o->size);
	struct ibv_sge sge = { (uintptr_t)&s->send_info, sizeof(s->send_info), s->send_mr->lkey };
	struct ibv_send_wr wr = { .wr_id = WR_SEND, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED }, *bad;

	return ibv_post_send(s->qp, &wr, &bad);
}

/* READ the client's buffer into rdma_buf, or WRITE rdma_buf into it: as
 * many bytes as both buffers hold. */
static int rdma_op(struct rping_srv *s, enum ibv_wr_opcode op)
{
	uint32_t len = s->remote_len < s->o->size ? s->remote_len : s->o->size;
	struct ibv_sge sge = { (uintptr_t)s->rdma_buf, len, s->rdma_mr->lkey };
	struct ibv_send_wr wr = { .wr_id = WR_RDMA, .sg_list = &sge, .num_sge = 1, .opcode = op,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;

	wr.wr.rdma.remote_addr = s->remote_addr;
	wr.wr.rdma.rkey = s->remote_rkey;
	count(op == IBV_WR_RDMA_READ ? &s->stats->bytes_in : &s->stats->bytes_out, len);
	return ibv_post_send(s->qp, &wr, &bad);
}

/* One successful completion: the next step of the ping. @return 0 or an
 * errno from a post. */
static int on_wc(struct rping_srv *s, const struct ibv_wc *wc)
{
	int rc;

	switch (wc->opcode) {
	case IBV_WC_RECV:
		if (wc->byte_len < sizeof(s->recv_info))
			return EBADMSG;
		s->remote_addr = rte_be_to_cpu_64(s->recv_info.buf);
		s->remote_rkey = rte_be_to_cpu_32(s->recv_info.rkey);
		s->remote_len = rte_be_to_cpu_32(s->recv_info.size);
		if ((rc = post_recv(s)) != 0)
			return rc;
		rc = rdma_op(s, s->read_next ? IBV_WR_RDMA_READ : IBV_WR_RDMA_WRITE);
		s->read_next = !s->read_next;
		return rc;
	case IBV_WC_RDMA_READ:
		if (s->o->verbose) {
			/* the client's string: NUL-terminated within its size */
			uint32_t n = s->remote_len < s->o->size ? s->remote_len : s->o->size;
			fprintf(s->o->out ? s->o->out : stdout, "server ping data: %.*s\n",
				(int)strnlen((const char *)s->rdma_buf, n), s->rdma_buf);
		}
		return send_info(s);
	case IBV_WC_RDMA_WRITE:
		count(&s->stats->pings, 1);
		return send_info(s);
	default:
		return 0;   /* our Sends */
	}
}

/* The client's CQ, QP and id; the QP in INIT with its receive posted.
 * @return 0 or -errno. */
static int client_setup(struct rping_srv *s)
{
	s->cq = rnic_create_cq(s->ctx, 8, NULL, NULL, 0);
	if (s->cq == NULL)
		return -errno;
	struct ibv_qp_init_attr qa = {
		.send_cq = s->cq,
		.recv_cq = s->cq,
		.cap = { .max_send_wr = 4, .max_recv_wr = 2, .max_send_sge = 1,
			 .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC,
	};
	s->qp = rnic_create_qp_transport(s->pd, &qa, s->transport);
	if (s->qp == NULL)
		return -errno;
	struct ibv_qp_attr init = { .qp_state = IBV_QPS_INIT };
	int rc = rnic_modify_qp(s->qp, &init, IBV_QP_STATE);
	if (rc == 0)
		rc = -post_recv(s);   /* ibv_post_recv: a positive errno */
	s->read_next = true;
	return rc;
}

/* The client is gone (or never came): its objects go, in reverse. */
static void client_free(struct rping_srv *s)
{
	if (s->id != NULL)
		rnic_cm_destroy_id(s->id);
	if (s->qp != NULL)
		rnic_destroy_qp(s->qp);
	if (s->cq != NULL)
		rnic_destroy_cq(s->cq);
	s->id = NULL;
	s->qp = NULL;
	s->cq = NULL;
	__atomic_store_n(&s->stats->active, 0, __ATOMIC_RELAXED);
}

static void refuse(struct rping_srv *s, struct rnic_cm_id *id, const char *why)
{
	rnic_cm_reject(id, why, (uint16_t)(strlen(why) + 1));
	rnic_cm_destroy_id(id);
	count(&s->stats->refused, 1);
}

static void on_request(struct rping_srv *s, const struct rnic_cm_event *ev)
{
	if (s->id != NULL) {
		refuse(s, ev->id, "busy: one rping client at a time");
		return;
	}
	if (!(ev->transport == RNIC_TRANSPORT_ROCE ? s->o->roce : s->o->iwarp)) {
		refuse(s, ev->id, ev->transport == RNIC_TRANSPORT_ROCE ?
		       "rping over roce is not served here" : "rping over iwarp is not served here");
		return;
	}
	s->transport = ev->transport;
	int rc = client_setup(s);
	struct rnic_cm_conn_param p = { .responder_resources = 1, .initiator_depth = 1,
					.no_crc = !s->o->crc };
	if (rc == 0 && (rc = rnic_cm_accept(ev->id, s->qp, &p)) == 0) {
		s->id = ev->id;
		count(&s->stats->clients, 1);
		__atomic_store_n(&s->stats->active, 1, __ATOMIC_RELAXED);
		return;
	}
	fprintf(stderr, "rping server: cannot accept %u.%u.%u.%u: %s\n", ev->peer_ip >> 24,
		(ev->peer_ip >> 16) & 255, (ev->peer_ip >> 8) & 255, ev->peer_ip & 255,
		strerror(-rc));
	client_free(s);
	refuse(s, ev->id, "setup failed");
}

static int poll_client(struct rping_srv *s);

/* Connection events, waiting up to @p timeout_ms for the first. */
static void cm_events(struct rping_srv *s, int timeout_ms)
{
	struct pollfd pfd = { .fd = rnic_cm_channel_fd(s->ch), .events = POLLIN };
	struct rnic_cm_event ev;

	if (poll(&pfd, 1, timeout_ms) <= 0)
		return;
	/* a timeout of 1, not 0: with 0, rnic_cm_get_event() can block when
	 * the eventfd was readable but the list is empty (run.c) */
	while (rnic_cm_get_event(s->ch, &ev, 1) == 0) {
		if (ev.type == RNIC_CM_EVENT_CONNECT_REQUEST)
			on_request(s, &ev);
		else if (ev.id == s->id && s->id != NULL &&
			 ev.type != RNIC_CM_EVENT_ESTABLISHED) {
			if (ev.type != RNIC_CM_EVENT_DISCONNECTED ||
			    (ev.status != 0 && ev.status != -ECONNRESET))
				count(&s->stats->errors, 1);   /* not a clean goodbye */
			/* the ping in flight completes (or flushes) first */
			poll_client(s);
			client_free(s);   /* DISCONNECTED, or the accept failed */
			count(&s->stats->finished, 1);
		}
	}
}

/* The client's completions; a failure disconnects it. @return how many. */
static int poll_client(struct rping_srv *s)
{
	struct ibv_wc wc[8];
	int n = s->cq ? ibv_poll_cq(s->cq, 8, wc) : 0;

	for (int i = 0; i < n; i++) {
		int rc = 0;
		if (wc[i].status == IBV_WC_WR_FLUSH_ERR)
			continue;   /* the connection is closing */
		if (wc[i].status != IBV_WC_SUCCESS) {
			fprintf(stderr, "rping server: work request %lu: %s\n",
				(unsigned long)wc[i].wr_id, rnic_wc_status_str(wc[i].status));
			rc = EIO;
		} else {
			rc = on_wc(s, &wc[i]);
		}
		if (rc != 0) {
			count(&s->stats->errors, 1);
			rnic_cm_disconnect(s->id);
			return n;
		}
	}
	return n > 0 ? n : 0;
}

/* The long-lived objects. @return 0 or -errno (printed). */
static int server_open(struct rping_srv *s)
{
	s->pd = rnic_alloc_pd(s->ctx);
	s->rdma_buf = calloc(1, s->o->size);
	if (s->pd == NULL || s->rdma_buf == NULL)
		return -ENOMEM;
	s->rdma_mr = rnic_reg_mr(s->pd, s->rdma_buf, s->o->size, IBV_ACCESS_LOCAL_WRITE |
				 IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE);
	s->send_mr = rnic_reg_mr(s->pd, &s->send_info, sizeof(s->send_info), 0);
	s->recv_mr = rnic_reg_mr(s->pd, &s->recv_info, sizeof(s->recv_info),
				 IBV_ACCESS_LOCAL_WRITE);
	if (s->rdma_mr == NULL || s->send_mr == NULL || s->recv_mr == NULL)
		return errno ? -errno : -ENOMEM;
	s->ch = rnic_cm_create_channel(s->ctx);
	if (s->ch == NULL)
		return -errno;
	int rc = rnic_cm_create_id(s->ch, NULL, &s->listener);
	if (rc == 0)
		rc = rnic_cm_listen(s->listener, s->o->port, 8);
	return rc;
}

static void server_close(struct rping_srv *s)
{
	client_free(s);
	if (s->listener != NULL)
		rnic_cm_destroy_id(s->listener);
	if (s->ch != NULL)
		rnic_cm_destroy_channel(s->ch);
	if (s->rdma_mr != NULL)
		rnic_dereg_mr(s->rdma_mr);
	if (s->send_mr != NULL)
		rnic_dereg_mr(s->send_mr);
	if (s->recv_mr != NULL)
		rnic_dereg_mr(s->recv_mr);
	if (s->pd != NULL)
		rnic_dealloc_pd(s->pd);
	free(s->rdma_buf);
}

struct rping_srv *rping_server_open(struct ibv_context *ctx, const struct rping_server_opts *o,
				    struct rping_server_stats *stats)
{
	struct rping_srv *s = calloc(1, sizeof(*s));
	if (s == NULL)
		return NULL;
	s->o = o;
	s->stats = stats;
	s->ctx = ctx;
	int rc = server_open(s);
	if (rc != 0) {
		fprintf(stderr, "rping server: cannot listen on port %u: %s\n", o->port,
			strerror(-rc));
		rping_server_close(s);
		errno = -rc;
		return NULL;
	}
	return s;
}

void rping_server_run(struct rping_srv *s)
{
	/* a client's completions are polled, with a 1 ms nap when there were
	 * none (rping is no latency test, and the machine may be small);
	 * between clients the CM channel is waited on */
	while (!rnic_stop_requested() &&
	       !(s->o->once && __atomic_load_n(&s->stats->finished, __ATOMIC_RELAXED))) {
		int n = poll_client(s);
		cm_events(s, n > 0 ? 0 : s->id != NULL ? 1 : 100);
	}
}

void rping_server_close(struct rping_srv *s)
{
	if (s == NULL)
		return;
	server_close(s);
	free(s);
}
