/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * One ibv_rc_pingpong session over rnic's RoCEv2, either role: the verbs
 * objects, the address exchange (exch.h), the ping-pong loop. rnic-pingpong
 * runs one; rdma-gateway's [responder.pingpong] runs them one after another
 * as a server. The sequence is in main.c's header.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "rnic/rnic.h"
#include "rnic/rnic_roce.h"
#include "rnic/rnic_verbs.h"

#include "session.h"

enum { PP_RECV_WRID = 1, PP_SEND_WRID = 2 };   /* also the pending-mask bits */

#define STALL_S 15          /* no completion for this long: give up */
#define LINGER_MS 250       /* keep answering the peer after the last completion */
#define SPIN_US 200         /* busy-poll this long after a completion */
#define IDLE_SLEEP_US 20    /* then sleep this long between polls */

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* --- verbs objects ------------------------------------------------------------ */

/* --- verbs objects ------------------------------------------------------------ */

/* Open the device and check -d and -i against it. */
static int ctx_open(struct pp_ctx *pp, struct ibv_port_attr *pa)
{
	pp->ctx = rnic_open_device(pp->st);
	if (pp->ctx == NULL) {
		fprintf(stderr, "rnic-pingpong: cannot open the device: %s\n", strerror(errno));
		return -1;
	}
	if (pp->o->dev != NULL && strcmp(pp->o->dev, pp->ctx->device->name) != 0) {
		fprintf(stderr, "rnic-pingpong: IB device %s not found (this one is %s)\n",
			pp->o->dev, pp->ctx->device->name);
		return -1;
	}
	if (rnic_query_port(pp->ctx, (uint8_t)pp->o->ib_port, pa) != 0) {
		fprintf(stderr, "rnic-pingpong: -i %u: no such port\n", pp->o->ib_port);
		return -1;
	}
	if (!pp->o->exchange_only && pp->o->mtu > pa->active_mtu) {
		fprintf(stderr, "rnic-pingpong: -m %d is more than port %u carries (%d: raise "
			"its --mtu)\n", 128 << pp->o->mtu, pp->o->ib_port, 128 << pa->active_mtu);
		return -1;
	}
	return 0;
}

/* The objects of rc_pingpong's pp_init_ctx, QP left in INIT. */
static int ctx_init(struct pp_ctx *pp)
{
	pp->buf = aligned_alloc((size_t)sysconf(_SC_PAGESIZE),
				(pp->o->size + 4095u) & ~4095u);
	if (pp->buf == NULL) {
		fprintf(stderr, "rnic-pingpong: Couldn't allocate work buf.\n");
		return -1;
	}
	memset(pp->buf, 0x7b, pp->o->size);
	if (pp->o->events) {
		pp->channel = rnic_create_comp_channel(pp->ctx);
		if (pp->channel == NULL) {
			fprintf(stderr, "rnic-pingpong: Couldn't create completion channel\n");
			return -1;
		}
	}
	pp->pd = rnic_alloc_pd(pp->ctx);
	if (pp->pd == NULL) {
		fprintf(stderr, "rnic-pingpong: Couldn't allocate PD\n");
		return -1;
	}
	pp->mr = rnic_reg_mr(pp->pd, pp->buf, pp->o->size, IBV_ACCESS_LOCAL_WRITE);
	if (pp->mr == NULL) {
		fprintf(stderr, "rnic-pingpong: Couldn't register MR: %s\n", strerror(errno));
		return -1;
	}
	pp->cq = rnic_create_cq(pp->ctx, (int)pp->o->rx_depth + 1, NULL, pp->channel, 0);
	if (pp->cq == NULL) {
		fprintf(stderr, "rnic-pingpong: Couldn't create CQ: %s\n", strerror(errno));
		return -1;
	}
	struct ibv_qp_init_attr ia = {
		.send_cq = pp->cq,
		.recv_cq = pp->cq,
		.cap = {
			.max_send_wr = 1,
			.max_recv_wr = pp->o->rx_depth,
			.max_send_sge = 1,
			.max_recv_sge = 1,
		},
		.qp_type = IBV_QPT_RC,
	};
	pp->qp = rnic_create_qp_transport(pp->pd, &ia, RNIC_TRANSPORT_ROCE);
	if (pp->qp == NULL) {
		fprintf(stderr, "rnic-pingpong: Couldn't create QP: %s%s\n", strerror(errno),
			errno == EOPNOTSUPP ? " (RoCE QPs are not available in this build)" : "");
		return -1;
	}
	struct ibv_qp_attr qa;
	pp->send_flags = IBV_SEND_SIGNALED;
	if (rnic_query_qp(pp->qp, &qa, IBV_QP_CAP, &ia) == 0 &&
	    ia.cap.max_inline_data >= pp->o->size)
		pp->send_flags |= IBV_SEND_INLINE;

	struct ibv_qp_attr init = {
		.qp_state = IBV_QPS_INIT,
		.pkey_index = 0,
		.port_num = (uint8_t)pp->o->ib_port,
		.qp_access_flags = 0,
	};
	int rc = rnic_modify_qp(pp->qp, &init,
				IBV_QP_STATE |
				IBV_QP_PKEY_INDEX |
				IBV_QP_PORT |
				IBV_QP_ACCESS_FLAGS);
	if (rc != 0) {
		fprintf(stderr, "rnic-pingpong: Failed to modify QP to INIT: %s\n", strerror(-rc));
		return -1;
	}
	return 0;
}

/* Free in the reverse order of ctx_open and ctx_init; what exists. */
void pp_ctx_close(struct pp_ctx *pp)
{
	int rc;
	if (pp->qp && (rc = rnic_destroy_qp(pp->qp)) != 0)
		fprintf(stderr, "rnic-pingpong: Couldn't destroy QP: %s\n", strerror(-rc));
	if (pp->cq) {
		if (pp->events)
			rnic_ack_cq_events(pp->cq, pp->events);
		if ((rc = rnic_destroy_cq(pp->cq)) != 0)
			fprintf(stderr, "rnic-pingpong: Couldn't destroy CQ: %s\n", strerror(-rc));
	}
	if (pp->mr && (rc = rnic_dereg_mr(pp->mr)) != 0)
		fprintf(stderr, "rnic-pingpong: Couldn't deregister MR: %s\n", strerror(-rc));
	if (pp->pd && (rc = rnic_dealloc_pd(pp->pd)) != 0)
		fprintf(stderr, "rnic-pingpong: Couldn't deallocate PD: %s\n", strerror(-rc));
	if (pp->channel && (rc = rnic_destroy_comp_channel(pp->channel)) != 0)
		fprintf(stderr, "rnic-pingpong: Couldn't destroy completion channel: %s\n",
			strerror(-rc));
	if (pp->ctx && (rc = rnic_close_device(pp->ctx)) != 0)
		fprintf(stderr, "rnic-pingpong: Couldn't release context: %s\n", strerror(-rc));
	free(pp->buf);
}

/* --- connection --------------------------------------------------------------- */

/* RTR then RTS towards @p rem, with rc_pingpong's attributes. RoCE always
 * needs the GRH: the peer's GID is its IP address. */
static int qp_connect(const struct pp_dest *rem, void *arg)
{
	struct pp_ctx *pp = arg;
	static const uint8_t zero[8];

	if (pp->o->exchange_only)
		return 0;
	if (memcmp(&rem->gid.raw[8], zero, sizeof(zero)) == 0) {
		fprintf(stderr, "rnic-pingpong: the peer sent no GID: RoCE needs it "
			"(run the peer with -g IDX, e.g. -g 1)\n");
		return -1;
	}
	struct ibv_qp_attr attr = {
		.qp_state = IBV_QPS_RTR,
		.path_mtu = pp->o->mtu,
		.dest_qp_num = rem->qpn,
		.rq_psn = rem->psn,
		.max_dest_rd_atomic = 1,
		.min_rnr_timer = 12,
		.ah_attr = {
			.is_global = 1,
			.grh = {
				.dgid = rem->gid,
				.sgid_index = (uint8_t)(pp->o->gidx >= 0 ? pp->o->gidx : 1),
				.hop_limit = 1,
			},
			.dlid = (uint16_t)rem->lid,
			.sl = (uint8_t)pp->o->sl,
			.src_path_bits = 0,
			.port_num = (uint8_t)pp->o->ib_port,
		},
	};
	int rc = rnic_modify_qp(pp->qp, &attr,
				RNIC_QP_RTR_MASK);
	if (rc != 0) {
		fprintf(stderr, "rnic-pingpong: Failed to modify QP to RTR: %s\n", strerror(-rc));
		return -1;
	}
	attr.qp_state = IBV_QPS_RTS;
	attr.timeout = 14;
	attr.retry_cnt = 7;
	attr.rnr_retry = 7;
	attr.sq_psn = pp->my_psn;
	attr.max_rd_atomic = 1;
	rc = rnic_modify_qp(pp->qp, &attr,
			    RNIC_QP_RTS_MASK);
	if (rc != 0) {
		fprintf(stderr, "rnic-pingpong: Failed to modify QP to RTS: %s\n", strerror(-rc));
		return -1;
	}
	return 0;
}

static void print_dest(const char *what, const struct pp_dest *d)
{
	char gid[INET6_ADDRSTRLEN];
	inet_ntop(AF_INET6, d->gid.raw, gid, sizeof(gid));
	printf("  %s LID 0x%04x, QPN 0x%06x, PSN 0x%06x, GID %s\n", what, d->lid, d->qpn,
	       d->psn, gid);
	fflush(stdout);
}

/* --- data path ------------------------------------------------------------------ */

/* Post up to @p n receives of the whole buffer. @return how many went. */
static unsigned post_recv(struct pp_ctx *pp, unsigned n)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)pp->buf,
		.length = pp->o->size,
		.lkey = pp->mr->lkey,
	};
	struct ibv_recv_wr wr = {
		.wr_id = PP_RECV_WRID,
		.sg_list = &sge,
		.num_sge = 1,
	};
	struct ibv_recv_wr *bad;
	unsigned i;
	for (i = 0; i < n; i++)
		if (ibv_post_recv(pp->qp, &wr, &bad) != 0)
			break;
	return i;
}

static int post_send(struct pp_ctx *pp)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)pp->buf,
		.length = pp->o->size,
		.lkey = pp->mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = PP_SEND_WRID,
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = IBV_WR_SEND,
		.send_flags = (unsigned)pp->send_flags,
	};
	struct ibv_send_wr *bad;
	int rc = ibv_post_send(pp->qp, &wr, &bad);
	if (rc != 0)
		fprintf(stderr, "rnic-pingpong: Couldn't post send: %s\n", strerror(rc));
	return rc;
}

/* One completion: count it, keep the receives topped up, and send the next
 * message once both halves of the last exchange are done. @return 0 or -1. */
static int handle_wc(struct pp_ctx *pp, const struct ibv_wc *wc)
{
	if (wc->status != IBV_WC_SUCCESS) {
		fprintf(stderr, "rnic-pingpong: Failed status %s (%d) for wr_id %d\n",
			rnic_wc_status_str(wc->status), wc->status, (int)wc->wr_id);
		return -1;
	}
	switch (wc->wr_id) {
	case PP_SEND_WRID:
		pp->scnt++;
		break;
	case PP_RECV_WRID:
		if (--pp->routs <= 1) {
			pp->routs += post_recv(pp, pp->o->rx_depth - pp->routs);
			if (pp->routs < pp->o->rx_depth) {
				fprintf(stderr, "rnic-pingpong: Couldn't post receive (%u)\n",
					pp->routs);
				return -1;
			}
		}
		pp->rcnt++;
		break;
	default:
		fprintf(stderr, "rnic-pingpong: Completion for unknown wr_id %d\n",
			(int)wc->wr_id);
		return -1;
	}
	pp->pending &= ~(int)wc->wr_id;
	if (pp->scnt < pp->o->iters && pp->pending == 0) {
		if (post_send(pp) != 0)
			return -1;
		pp->pending = PP_RECV_WRID | PP_SEND_WRID;
	}
	return 0;
}

/* Take what the CQ holds. @return completions handled, or -1. */
static int drain_cq(struct pp_ctx *pp)
{
	struct ibv_wc wc[16];
	int total = 0, n;
	do {
		n = ibv_poll_cq(pp->cq, 16, wc);
		if (n < 0) {
			fprintf(stderr, "rnic-pingpong: poll CQ failed %d\n", n);
			return -1;
		}
		for (int i = 0; i < n; i++)
			if (handle_wc(pp, &wc[i]) != 0)
				return -1;
		total += n;
	} while (n == 16);
	return total;
}

/* -e: wait up to 100 ms for the CQ's event, re-arm. @return 0 or -1. */
static int wait_event(struct pp_ctx *pp)
{
	struct pollfd pfd = { .fd = pp->channel->fd, .events = POLLIN };
	struct ibv_cq *cq;
	void *cq_ctx;

	if (poll(&pfd, 1, 100) <= 0)
		return 0;
	if (rnic_get_cq_event(pp->channel, &cq, &cq_ctx) != 0) {
		fprintf(stderr, "rnic-pingpong: Failed to get cq_event\n");
		return -1;
	}
	pp->events++;
	if (cq != pp->cq) {
		fprintf(stderr, "rnic-pingpong: CQ event for unknown CQ %p\n", (void *)cq);
		return -1;
	}
	if (ibv_req_notify_cq(pp->cq, 0) != 0) {
		fprintf(stderr, "rnic-pingpong: Couldn't request CQ notification\n");
		return -1;
	}
	return 0;
}

/*
 * Until ITERS sends and receives completed. Polling spins for SPIN_US after
 * the last completion, which covers a fast peer's round trip, and then
 * sleeps between polls: on a small machine the peer (a qemu guest) and the
 * workers need the CPU a spinning poller would take. @return 0 or -1.
 */
static int run(struct pp_ctx *pp)
{
	double last = now_s();

	while (pp->rcnt < pp->o->iters || pp->scnt < pp->o->iters) {
		if (pp->o->events && wait_event(pp) != 0)
			return -1;
		int n = drain_cq(pp);
		if (n < 0)
			return -1;
		double t = now_s();
		if (n > 0) {
			last = t;
			continue;
		}
		if (rnic_stop_requested()) {
			fprintf(stderr, "rnic-pingpong: interrupted\n");
			return -1;
		}
		if (t - last > STALL_S) {
			fprintf(stderr, "rnic-pingpong: no completion for %d s: %u of %u sends, "
				"%u of %u receives completed\n", STALL_S, pp->scnt, pp->o->iters,
				pp->rcnt, pp->o->iters);
			return -1;
		}
		if (!pp->o->events && t - last > SPIN_US * 1e-6)
			usleep(IDLE_SLEEP_US);
	}
	return 0;
}

/* After a failed run: what the stack and the RoCE layer saw, for the report
 * (the counters are /rnic/stats and /rnic/roce in telemetry). */
static void dump_counters(struct pp_ctx *pp)
{
	static const char *const names[] = {
		"rx_pkts", "tx_pkts", "acks_in", "naks_in", "rnr_naks_in", "acks_out",
		"naks_seq_out", "rnr_naks_out", "duplicates", "out_of_window",
		"retransmits", "timeouts", "retry_exceeded", "rx_bad_icrc",
		"rx_parse_errors", "rx_unknown_qp", "rx_bad_state", "rx_wrong_source",
		"no_mbuf",
	};
	struct rnic_stack_stats ss;
	uint64_t v;

	rnic_stack_stats(pp->st, &ss);
	fprintf(stderr, "rnic-pingpong: stack: rx %" PRIu64 " tx %" PRIu64 " drops %" PRIu64
		" mbufs in use %" PRIu64 "\nrnic-pingpong: roce:", ss.rx_pkts, ss.tx_pkts,
		ss.drops, ss.mbufs_in_use);
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (rnic_roce_counter(pp->st, names[i], &v) == 0 && (v != 0 || i < 2))
			fprintf(stderr, " %s %" PRIu64, names[i], v);
	fprintf(stderr, "\n");
}

/* --- the session -------------------------------------------------------------- */

int pp_session(struct pp_ctx *pp)
{
	struct ibv_port_attr pa;
	struct pp_dest mine = { 0 }, rem;
	char err[RNIC_ERRLEN];

	if (ctx_open(pp, &pa) != 0)
		return PP_EXIT_FAIL;
	if (!pp->o->exchange_only) {
		if (ctx_init(pp) != 0)
			return PP_EXIT_FAIL;
		pp->routs = post_recv(pp, pp->o->rx_depth);
		if (pp->routs < pp->o->rx_depth) {
			fprintf(stderr, "rnic-pingpong: Couldn't post receive (%u)\n", pp->routs);
			return PP_EXIT_FAIL;
		}
		if (pp->o->events && ibv_req_notify_cq(pp->cq, 0) != 0) {
			fprintf(stderr, "rnic-pingpong: Couldn't request CQ notification\n");
			return PP_EXIT_FAIL;
		}
		mine.qpn = pp->qp->qp_num;
	}
	mine.lid = pa.lid;
	if (pp->o->gidx >= 0 && rnic_query_gid(pp->ctx, (uint8_t)pp->o->ib_port, pp->o->gidx, &mine.gid) != 0) {
		fprintf(stderr, "rnic-pingpong: can't read sgid of index %d\n", pp->o->gidx);
		return PP_EXIT_FAIL;
	}
	mine.psn = (uint32_t)lrand48() & 0xffffff;
	pp->my_psn = mine.psn;
	if (!pp->o->quiet)
		print_dest("local address: ", &mine);

	int rc = pp->o->server.family != 0 ?
		pp_exch_client(pp->st, &pp->o->server, pp->o->tcp_port, &mine, &rem, err, sizeof(err)) :
		pp_exch_server(pp->st, pp->o->tcp_port, &mine, &rem, qp_connect, pp, err, sizeof(err));
	if (rc != 0) {
		fprintf(stderr, "rnic-pingpong: %s\n", err);
		return PP_EXIT_FAIL;
	}
	if (!pp->o->quiet)
		print_dest("remote address:", &rem);
	if (pp->o->exchange_only)
		return 0;
	if (pp->o->server.family != 0 && qp_connect(&rem, pp) != 0)
		return PP_EXIT_FAIL;

	pp->pending = PP_RECV_WRID;
	if (pp->o->server.family != 0) {
		if (post_send(pp) != 0)
			return PP_EXIT_FAIL;
		pp->pending |= PP_SEND_WRID;
	}
	double t0 = now_s();
	if (run(pp) != 0) {
		dump_counters(pp);
		return PP_EXIT_FAIL;
	}
	double usec = (now_s() - t0) * 1e6;
	long long bytes = (long long)pp->o->size * pp->o->iters * 2;
	pp->usec = usec;
	if (pp->o->quiet) {
		usleep(LINGER_MS * 1000);
		return 0;
	}
	printf("%lld bytes in %.2f seconds = %.2f Mbit/sec\n", bytes, usec / 1e6,
	       (double)bytes * 8. / usec);
	printf("%u iters in %.2f seconds = %.2f usec/iter\n", pp->o->iters, usec / 1e6,
	       usec / pp->o->iters);
	fflush(stdout);
	/* the peer's last Send may still wait for our ACK (or its retry) */
	usleep(LINGER_MS * 1000);
	return 0;
}

void pp_opts_default(struct pp_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->tcp_port = PP_DEFAULT_PORT;
	o->ib_port = 1;
	o->size = 4096;
	o->mtu = IBV_MTU_1024;
	o->rx_depth = 500;
	o->iters = 1000;
	o->gidx = -1;
}
