/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rnic-ping's client over the verbs objects and the connection manager
 * (rnic_cm.h), as rping itself is written over libibverbs and librdmacm:
 * iWARP (MPA over rnic's TCP) or RoCE (the IB CM over QP1, which Linux
 * rping over rxe speaks). The message sequence is rping's:
 *
 *   C: SEND {start_buf, rkey, size}        (RDMA_READ_ADV)
 *   S: RDMA READ of start_buf into its rdma_buf, then SEND (go ahead)
 *   C: SEND {rdma_buf, rkey, size}         (RDMA_WRITE_ADV)
 *   S: RDMA WRITE of its rdma_buf into the client's rdma_buf, then SEND
 *   C: compares rdma_buf with start_buf (-V), prints (-v), next ping
 *
 * The client connects a QP of cm_ping_run()'s transport (the server is
 * apps/common/rping_server.c). IRD/ORD 1/1, as rping asks. One application
 * thread drives everything: it polls the CQ and the CM channel in turn.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_byteorder.h>

#include "cm_ping.h"
#include "rnic/rnic.h"
#include "rnic/rnic_cm.h"
#include "rnic/rnic_verbs.h"

#define RPING_MSG_FMT "rdma-ping-%d: "
#define RECV_WRID 1
#define SEND_WRID 2
#define RDMA_WRID 3

struct rping_rdma_info {
	uint64_t buf;
	uint32_t rkey;
	uint32_t size;
} __attribute__((packed));

enum ping_state { ST_IDLE, ST_READ_ADV, ST_WRITE_ADV };

/* The control block: verbs objects (made once), the connection (per
 * client), the rping state. */
struct cm_cb {
	const struct cm_ping_opts *o;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct rnic_cm_channel *ch;
	uint8_t *rdma_buf, *start_buf;
	struct rping_rdma_info send_info, recv_info;
	struct ibv_mr *rdma_mr, *start_mr, *send_mr, *recv_mr;
	struct rnic_cm_id *id;
	struct ibv_qp *qp;
	enum ping_state state;
	unsigned ping;
	bool connected, failed;
};

static int post_recv(struct cm_cb *cb)
{
	struct ibv_sge sge = { (uintptr_t)&cb->recv_info, sizeof(cb->recv_info),
			       cb->recv_mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = RECV_WRID, .sg_list = &sge, .num_sge = 1 }, *bad;
	return ibv_post_recv(cb->qp, &wr, &bad);
}

/* SEND our info for @p buf (rping_format_send). */
static int send_info(struct cm_cb *cb, uint8_t *buf, const struct ibv_mr *mr)
{
	cb->send_info.buf = rte_cpu_to_be_64((uint64_t)(uintptr_t)buf);
	cb->send_info.rkey = rte_cpu_to_be_32(mr->rkey);
	cb->send_info.size = rte_cpu_to_be_32(cb->o->size);
	struct ibv_sge sge = { (uintptr_t)&cb->send_info, sizeof(cb->send_info),
			       cb->send_mr->lkey };
	struct ibv_send_wr wr = { .wr_id = SEND_WRID, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED }, *bad;
	return ibv_post_send(cb->qp, &wr, &bad);
}

static void fail(struct cm_cb *cb, const char *what, int err)
{
	fprintf(stderr, "rnic-ping: %s: %s\n", what, strerror(err < 0 ? -err : err));
	cb->failed = true;
	if (cb->id != NULL && cb->connected)
		rnic_cm_disconnect(cb->id);
}

/* The client's next ping: start_buf filled as rping does, advertised. */
static void client_ping(struct cm_cb *cb)
{
	static int start = 65;
	uint32_t size = cb->o->size;
	int cc = snprintf((char *)cb->start_buf, size, RPING_MSG_FMT, (int)cb->ping);
	int c = start;
	for (uint32_t i = (uint32_t)cc; i < size; i++) {
		cb->start_buf[i] = (uint8_t)c;
		if (++c > 122)
			c = 65;
	}
	if (++start > 122)
		start = 65;
	cb->start_buf[size - 1] = 0;
	cb->state = ST_READ_ADV;
	int rc = send_info(cb, cb->start_buf, cb->start_mr);
	if (rc)
		fail(cb, "post send", rc);
}

static void client_completion(struct cm_cb *cb, const struct ibv_wc *wc)
{
	if (wc->opcode != IBV_WC_RECV)
		return;
	int rc = post_recv(cb);
	if (rc) {
		fail(cb, "post recv", rc);
		return;
	}
	if (cb->state == ST_READ_ADV) {   /* the server read start_buf */
		cb->state = ST_WRITE_ADV;
		if ((rc = send_info(cb, cb->rdma_buf, cb->rdma_mr)) != 0)
			fail(cb, "post send", rc);
		return;
	}
	/* the server wrote rdma_buf */
	if (cb->o->validate && memcmp(cb->start_buf, cb->rdma_buf, cb->o->size)) {
		fprintf(stderr, "data mismatch!\n");
		fail(cb, "validate", EBADMSG);
		return;
	}
	if (cb->o->verbose)
		printf("ping data: %s\n", cb->rdma_buf);
	cb->ping++;
	if (cb->o->count && cb->ping >= cb->o->count) {
		rnic_cm_disconnect(cb->id);
		return;
	}
	client_ping(cb);
}

/* Completions until the CQ is empty. */
static unsigned poll_cq(struct cm_cb *cb)
{
	struct ibv_wc wc;
	unsigned n = 0;
	while (ibv_poll_cq(cb->cq, 1, &wc) == 1) {
		n++;
		if (wc.status != IBV_WC_SUCCESS) {
			if (wc.status != IBV_WC_WR_FLUSH_ERR) {
				fprintf(stderr, "rnic-ping: wr %llu completed with %s\n",
					(unsigned long long)wc.wr_id, rnic_wc_status_str(wc.status));
				fail(cb, "completion", EIO);   /* disconnect: the loop ends */
			}
			continue;
		}
		client_completion(cb, &wc);
	}
	return n;
}

/* A new QP of transport @p t in INIT (as rdma_create_qp leaves it), with
 * its first receive posted. @return 0 or -errno. */
static int make_qp(struct cm_cb *cb, enum rnic_transport t)
{
	struct ibv_qp_init_attr qa = {
		.send_cq = cb->cq, .recv_cq = cb->cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 8, .max_recv_wr = 4, .max_send_sge = 1,
			 .max_recv_sge = 1 },
	};
	cb->qp = rnic_create_qp_transport(cb->pd, &qa, t);
	if (cb->qp == NULL)
		return -errno;
	struct ibv_qp_attr at = { .qp_state = IBV_QPS_INIT, .port_num = 1,
				  .qp_access_flags = IBV_ACCESS_REMOTE_READ |
						     IBV_ACCESS_REMOTE_WRITE };
	int rc = rnic_modify_qp(cb->qp, &at, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
				IBV_QP_ACCESS_FLAGS);
	return rc ? rc : -post_recv(cb);   /* ibv_post_recv: a positive errno */
}

static void drop_conn(struct cm_cb *cb)
{
	if (cb->id != NULL)
		rnic_cm_destroy_id(cb->id);
	if (cb->qp != NULL)
		rnic_destroy_qp(cb->qp);
	struct ibv_wc wc;
	while (ibv_poll_cq(cb->cq, 1, &wc) == 1)
		;
	cb->id = NULL;
	cb->qp = NULL;
	cb->connected = false;
	cb->state = ST_IDLE;
}

/* One CM event, if any. @return true when the connection is over. */
static bool handle_event(struct cm_cb *cb, const struct rnic_cm_event *ev)
{
	switch (ev->type) {
	case RNIC_CM_EVENT_ESTABLISHED:
		cb->connected = true;
		client_ping(cb);
		return false;
	case RNIC_CM_EVENT_DISCONNECTED:
		if (ev->status != 0 && ev->status != -ECONNRESET)
			fprintf(stderr, "rnic-ping: disconnected: %s\n", strerror(-ev->status));
		return true;
	default:
		fprintf(stderr, "rnic-ping: %s (%s%s%u)\n", rnic_cm_event_str(ev->type),
			strerror(ev->status < 0 ? -ev->status : ev->status),
			ev->rej_reason ? ", REJ reason " : "", ev->rej_reason);
		cb->failed = true;
		return true;
	}
}

static int setup(struct cm_cb *cb, struct rnic_stack *st)
{
	uint32_t size = cb->o->size;
	cb->ctx = rnic_open_device(st);
	cb->pd = cb->ctx ? rnic_alloc_pd(cb->ctx) : NULL;
	cb->cq = cb->ctx ? rnic_create_cq(cb->ctx, 32, cb, NULL, 0) : NULL;
	cb->ch = cb->ctx ? rnic_cm_create_channel(cb->ctx) : NULL;
	cb->rdma_buf = calloc(1, size);
	cb->start_buf = calloc(1, size);
	if (!cb->pd || !cb->cq || !cb->ch || !cb->rdma_buf || !cb->start_buf)
		return -1;
	cb->rdma_mr = rnic_reg_mr(cb->pd, cb->rdma_buf, size, IBV_ACCESS_LOCAL_WRITE |
				  IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE);
	cb->start_mr = rnic_reg_mr(cb->pd, cb->start_buf, size,
				   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ);
	cb->send_mr = rnic_reg_mr(cb->pd, &cb->send_info, sizeof(cb->send_info), 0);
	cb->recv_mr = rnic_reg_mr(cb->pd, &cb->recv_info, sizeof(cb->recv_info),
				  IBV_ACCESS_LOCAL_WRITE);
	return cb->rdma_mr && cb->start_mr && cb->send_mr && cb->recv_mr ? 0 : -1;
}

/* Teardown, the reverse of setup(). */
static void cleanup(struct cm_cb *cb)
{
	drop_conn(cb);
	struct ibv_mr *mrs[] = { cb->recv_mr, cb->send_mr, cb->start_mr, cb->rdma_mr };
	for (unsigned i = 0; i < 4; i++)
		if (mrs[i])
			rnic_dereg_mr(mrs[i]);
	free(cb->start_buf);
	free(cb->rdma_buf);
	if (cb->ch)
		rnic_cm_destroy_channel(cb->ch);
	if (cb->cq)
		rnic_destroy_cq(cb->cq);
	if (cb->pd)
		rnic_dealloc_pd(cb->pd);
	if (cb->ctx)
		rnic_close_device(cb->ctx);
}

int cm_ping_run(struct rnic_stack *st, const struct cm_ping_opts *o)
{
	struct cm_cb cb = { .o = o };
	int rc = 0;
	if (setup(&cb, st) != 0) {
		fprintf(stderr, "rnic-ping: cannot set up the verbs objects\n");
		cleanup(&cb);
		return 1;
	}
	const struct rnic_cm_conn_param cp = { .responder_resources = 1, .initiator_depth = 1,
					       .no_crc = !o->crc };
	rc = rnic_cm_create_id(cb.ch, NULL, &cb.id);
	if (rc == 0)
		rc = make_qp(&cb, o->transport);
	if (rc == 0)
		rc = rnic_cm_connect_addr(cb.id, cb.qp, &o->dst, o->port, &cp);
	if (rc != 0) {
		fprintf(stderr, "rnic-ping: connect: %s\n", strerror(-rc));
		cleanup(&cb);
		return 1;
	}
	bool done = false;
	while (!done && !rnic_stop_requested()) {
		struct rnic_cm_event ev;
		unsigned n = poll_cq(&cb);
		if (rnic_cm_get_event(cb.ch, &ev, 0) == 0 && handle_event(&cb, &ev)) {
			poll_cq(&cb);
			if (o->count && cb.ping < o->count)
				cb.failed = true;
			drop_conn(&cb);
			done = true;
		} else if (n == 0) {
			usleep(50);
		}
	}
	bool short_run = o->count && cb.ping < o->count;
	cleanup(&cb);
	return cb.failed || short_run ? 1 : 0;
}
