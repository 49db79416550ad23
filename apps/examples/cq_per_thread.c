/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Example: the recommended completion layout (seeds 002 and 003). Each
 * application thread owns one CQ, bound to its own completion handler, so
 * completion events are spread over the workers instead of funnelled
 * through one. Two rnic stacks in this process are wired by net_ring: the
 * server accepts, the client runs one thread per handler, each with its
 * own QP and CQ, and every thread sleeps on its CQ's completion channel.
 *
 * Build against an installed rnic:
 *   cc -o cq_per_thread cq_per_thread.c $(pkg-config --cflags --libs rnic)
 * Run (as root, for hugepages; --no-huge is used here):
 *   ./cq_per_thread [messages per thread]
 */
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rnic/rnic.h>
#include <rnic/rnic_cm.h>
#include <rnic/rnic_verbs.h>
#include <rte_eal.h>

#define SERVER_IP 0xc0000201u   /* 192.0.2.1 */
#define CLIENT_IP 0xc0000202u   /* 192.0.2.2 */
#define PORT 7900
#define THREADS 2
#define MSG 64

struct conn {
	struct ibv_cq *cq;
	struct ibv_comp_channel *ch;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	char buf[16][MSG];
	long done;
};

static long per_thread = 10000;
static struct conn client[THREADS], server[THREADS];

static int die(const char *what)
{
	fprintf(stderr, "cq_per_thread: %s failed\n", what);
	exit(1);
}

static void make_conn(struct conn *c, struct ibv_context *ctx, struct ibv_pd *pd, int handler)
{
	c->ch = rnic_create_comp_channel(ctx);
	c->cq = rnic_create_cq(ctx, 64, c, c->ch, handler);   /* this thread's handler */
	struct ibv_qp_init_attr a = { .send_cq = c->cq, .recv_cq = c->cq, .qp_type = IBV_QPT_RC,
				      .cap = { .max_send_wr = 16, .max_recv_wr = 16,
					       .max_send_sge = 1, .max_recv_sge = 1 } };
	c->qp = rnic_create_qp(pd, &a);
	c->mr = rnic_reg_mr(pd, c->buf, sizeof(c->buf), IBV_ACCESS_LOCAL_WRITE);
	if (!c->ch || !c->cq || !c->qp || !c->mr)
		die("creating a connection's objects");
}

static void free_conn(struct conn *c)
{
	if (rnic_destroy_qp(c->qp) || rnic_dereg_mr(c->mr) || rnic_destroy_cq(c->cq) ||
	    rnic_destroy_comp_channel(c->ch))
		die("freeing a connection's objects");
}

static void post_recv(struct conn *c, int slot)
{
	struct ibv_sge s = { (uintptr_t)c->buf[slot], MSG, c->mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = (uint64_t)slot, .sg_list = &s, .num_sge = 1 }, *bad;
	if (ibv_post_recv(c->qp, &wr, &bad))
		die("ibv_post_recv");
}

/* Wait on the CQ's channel, then drain it; @return completions taken. */
static int wait_and_poll(struct conn *c, struct ibv_wc *wc, int max)
{
	int n = ibv_poll_cq(c->cq, max, wc);
	if (n != 0)
		return n;
	ibv_req_notify_cq(c->cq, 0);
	n = ibv_poll_cq(c->cq, max, wc);   /* one may have come before the arm */
	if (n != 0)
		return n;
	struct ibv_cq *cq;
	void *ctx;
	if (rnic_get_cq_event(c->ch, &cq, &ctx) == 0)
		rnic_ack_cq_events(cq, 1);
	return ibv_poll_cq(c->cq, max, wc);
}

/* Client thread t: send per_thread messages, one at a time, each echoed. */
static void *client_thread(void *arg)
{
	struct conn *c = arg, *s = &server[c - client];
	struct ibv_wc wc[16];
	for (long i = 0; i < per_thread; i++) {
		struct ibv_sge sg = { (uintptr_t)c->buf[0], MSG, c->mr->lkey };
		struct ibv_send_wr wr = { .wr_id = (uint64_t)i, .sg_list = &sg, .num_sge = 1,
					  .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED }, *bad;
		snprintf(c->buf[0], MSG, "thread %ld message %ld", (long)(c - client), i);
		if (ibv_post_send(c->qp, &wr, &bad))
			die("ibv_post_send");
		int got = 0;
		while (got < 1) {
			int n = wait_and_poll(c, wc, 16);
			for (int k = 0; k < n; k++)
				if (wc[k].status != IBV_WC_SUCCESS || wc[k].wr_id != (uint64_t)i)
					die("a send completion");
			got += n;
		}
		/* the server side is polled by this thread too: its CQ is
		 * bound to the same handler as ours */
		got = 0;
		while (got < 1) {
			int n = wait_and_poll(s, wc, 16);
			for (int k = 0; k < n; k++) {
				if (wc[k].status != IBV_WC_SUCCESS)
					die("a receive completion");
				post_recv(s, (int)wc[k].wr_id);
			}
			got += n;
		}
		c->done++;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc > 1)
		per_thread = atol(argv[1]);
	struct rnic_config cfg[2];
	rnic_config_init(&cfg[0]);
	snprintf(cfg[0].eal_args[cfg[0].n_eal_args++], 128, "--no-huge");
	snprintf(cfg[0].eal_args[cfg[0].n_eal_args++], 128, "-m");
	snprintf(cfg[0].eal_args[cfg[0].n_eal_args++], 128, "512");
	if (rnic_eal_init(argv[0], &cfg[0], 2 * THREADS) != 0 || rnic_ring_pair("ex", THREADS) != 0)
		die("EAL");
	cfg[0].n_eal_args = 0;
	cfg[1] = cfg[0];
	for (int i = 0; i < 2; i++) {
		cfg[i].workers = THREADS;
		cfg[i].n_ports = 1;
		rnic_port_cfg_init(&cfg[i].ports[0]);
		snprintf(cfg[i].ports[0].ring, sizeof(cfg[i].ports[0].ring), "ex.%c", i ? 'b' : 'a');
		cfg[i].ports[0].ip = i ? CLIENT_IP : SERVER_IP;
		cfg[i].ports[0].prefix_len = 24;
	}
	struct rnic_stack *ss = rnic_stack_create(&cfg[0]), *cs = rnic_stack_create(&cfg[1]);
	if (!ss || !cs || rnic_stack_start(ss) || rnic_stack_start(cs))
		die("stacks");
	struct ibv_context *sctx = rnic_open_device(ss), *cctx = rnic_open_device(cs);
	printf("completion handlers: server %d, client %d\n", rnic_query_handlers(sctx),
	       rnic_query_handlers(cctx));
	struct ibv_pd *spd = rnic_alloc_pd(sctx), *cpd = rnic_alloc_pd(cctx);
	struct rnic_cm_channel *sch = rnic_cm_create_channel(sctx), *cch = rnic_cm_create_channel(cctx);
	struct rnic_cm_id *listener, *cid[THREADS], *sid[THREADS];
	struct rnic_cm_event ev;
	if (rnic_cm_create_id(sch, NULL, &listener) || rnic_cm_listen(listener, PORT, 8))
		die("listen");
	for (int t = 0; t < THREADS; t++) {
		make_conn(&client[t], cctx, cpd, t % cctx->num_comp_vectors);
		make_conn(&server[t], sctx, spd, t % sctx->num_comp_vectors);
		if (rnic_cm_create_id(cch, NULL, &cid[t]) ||
		    rnic_cm_connect(cid[t], client[t].qp, SERVER_IP, PORT, NULL))
			die("connect");
		if (rnic_cm_get_event(sch, &ev, 5000) || ev.type != RNIC_CM_EVENT_CONNECT_REQUEST)
			die("connect request");
		struct ibv_qp_attr init = { .qp_state = IBV_QPS_INIT };
		rnic_modify_qp(server[t].qp, &init, IBV_QP_STATE);
		for (int k = 0; k < 16; k++)
			post_recv(&server[t], k);
		sid[t] = ev.id;
		if (rnic_cm_accept(ev.id, server[t].qp, NULL))
			die("accept");
		if (rnic_cm_get_event(sch, &ev, 5000) || ev.type != RNIC_CM_EVENT_ESTABLISHED ||
		    rnic_cm_get_event(cch, &ev, 5000) || ev.type != RNIC_CM_EVENT_ESTABLISHED)
			die("established");
	}
	pthread_t th[THREADS];
	for (int t = 0; t < THREADS; t++)
		pthread_create(&th[t], NULL, client_thread, &client[t]);
	long total = 0;
	for (int t = 0; t < THREADS; t++) {
		pthread_join(th[t], NULL);
		struct rnic_cq_stats st;
		rnic_cq_stats(client[t].cq, &st);
		printf("thread %d: %ld messages, CQ on handler %u, %lu events\n", t, client[t].done,
		       st.handler, (unsigned long)st.events);
		total += client[t].done;
	}
	printf("%ld messages in all\n", total);

	/* Tear down in reverse: a graceful close of every connection (both
	 * ends see DISCONNECTED), then each object before what it hangs on. */
	for (int t = 0; t < THREADS; t++) {
		if (rnic_cm_disconnect(cid[t]))
			die("disconnect");
		if (rnic_cm_get_event(cch, &ev, 5000) || ev.type != RNIC_CM_EVENT_DISCONNECTED ||
		    rnic_cm_get_event(sch, &ev, 5000) || ev.type != RNIC_CM_EVENT_DISCONNECTED)
			die("disconnected");
		if (rnic_cm_destroy_id(cid[t]) || rnic_cm_destroy_id(sid[t]))
			die("destroy_id");
		free_conn(&client[t]);
		free_conn(&server[t]);
	}
	if (rnic_cm_destroy_id(listener) || rnic_cm_destroy_channel(sch) ||
	    rnic_cm_destroy_channel(cch) || rnic_dealloc_pd(spd) || rnic_dealloc_pd(cpd) ||
	    rnic_close_device(sctx) || rnic_close_device(cctx))
		die("teardown");
	rnic_stack_destroy(ss);
	rnic_stack_destroy(cs);
	rte_eal_cleanup();
	return total == per_thread * THREADS ? 0 : 1;
}
