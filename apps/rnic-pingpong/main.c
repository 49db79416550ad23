/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rnic-pingpong: rdma-core's ibv_rc_pingpong over rnic's RoCEv2, in either
 * role, so it runs against the real tool (rxe, hardware) or against itself.
 *
 * Sequence (the client is the side given the server's address):
 *   both: RC QP to INIT, RX_DEPTH receives of SIZE bytes posted
 *   both: LID:QPN:PSN:GID exchange over rnic TCP (exch.h), QP to RTR, RTS
 *   C:    SEND of SIZE bytes
 *   S:    its receive completes, SEND back;  C: receive completes, SEND ...
 * A side posts its next Send once its previous Send and a receive have both
 * completed (rc_pingpong's pending mask), until ITERS of each completed;
 * then it prints rc_pingpong's two result lines.
 *
 *   rnic-pingpong [-p PORT] [-d DEV] [-i IBPORT] [-s SIZE] [-m MTU] [-r RX_DEPTH]
 *                 [-n ITERS] [-l SL] [-e] [-g GIDIDX] PORT-OPTIONS [SERVER]
 * Exit 0 when every iteration completed, 1 on a failure, 2 on bad arguments.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rte_errno.h>

#include "rnic/rnic.h"
#include "rnic/rnic_verbs.h"

#include "exch.h"

#define EXIT_FAIL 1
#define EXIT_USAGE 2

enum { PP_RECV_WRID = 1, PP_SEND_WRID = 2 };   /* also the pending-mask bits */

#define STALL_S 15          /* no completion for this long: give up */
#define LINGER_MS 250       /* keep answering the peer after the last completion */
#define SPIN_US 200         /* busy-poll this long after a completion */
#define IDLE_SLEEP_US 20    /* then sleep this long between polls */

/* What the command line asked for (rc_pingpong's defaults). */
static struct {
	uint16_t tcp_port;      /* -p: the exchange's TCP port */
	const char *dev;        /* -d: must name this device when given */
	unsigned ib_port;       /* -i: 1-based rnic port */
	unsigned size;          /* -s: bytes per message */
	enum ibv_mtu mtu;       /* -m: path MTU */
	unsigned rx_depth;      /* -r: receives kept posted */
	unsigned iters;         /* -n: exchanges */
	unsigned sl;            /* -l: service level */
	bool events;            /* -e: sleep on CQ events instead of polling */
	int gidx;               /* -g: GID index, -1 = send a zero GID */
	bool exchange_only;     /* --exchange-only: no QP, stop after the exchange */
	uint32_t server_ip;     /* client: the server (host order); 0: we serve */
} o = { .tcp_port = 18515, .ib_port = 1, .size = 4096, .mtu = IBV_MTU_1024,
	.rx_depth = 500, .iters = 1000, .gidx = -1 };

/* One run's verbs objects and counters (rc_pingpong's pingpong_context). */
struct pp_ctx {
	struct rnic_stack *st;
	struct ibv_context *ctx;
	struct ibv_comp_channel *channel;   /* -e only */
	struct ibv_pd *pd;
	struct ibv_mr *mr;                  /* covers buf, local write */
	struct ibv_cq *cq;                  /* send and receive completions */
	struct ibv_qp *qp;
	void *buf;                          /* sent from and received into */
	int send_flags;                     /* SIGNALED, INLINE when it fits */
	uint32_t my_psn;                    /* our first PSN, as advertised */
	int pending;                        /* PP_*_WRID not completed yet */
	unsigned routs;                     /* receives posted, not completed */
	unsigned scnt, rcnt;                /* sends and receives completed */
	unsigned events;                    /* CQ events taken (-e) */
};



static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* --- arguments -------------------------------------------------------------- */

static void usage(FILE *f)
{
	fprintf(f,
		"usage: rnic-pingpong [options] PORT-OPTIONS            start a server and wait\n"
		"       rnic-pingpong [options] PORT-OPTIONS A.B.C.D    connect to the server\n"
		"ibv_rc_pingpong's protocol over rnic's RoCEv2; the address exchange uses\n"
		"rnic's own TCP on the port's address.\n"
		"  -p, --port=PORT       TCP port of the exchange (default 18515)\n"
		"  -d, --ib-dev=DEV      the device's name (rnic0); checked, nothing to choose\n"
		"  -i, --ib-port=N       rnic port, 1-based (default 1)\n"
		"  -s, --size=SIZE       bytes per message (default 4096)\n"
		"  -m MTU                path MTU: 256, 512, 1024, 2048, 4096 (default 1024);\n"
		"                        --mtu is the port's IP MTU (a port option)\n"
		"  -r, --rx-depth=N      receives kept posted (default 500)\n"
		"  -n, --iters=N         exchanges (default 1000)\n"
		"  -l, --sl=SL           service level (default 0)\n"
		"  -e, --events          sleep on CQ events (default: poll)\n"
		"  -g, --gid-idx=IDX     local GID index; RoCE peers need it (-g 1: ::ffff:IPv4)\n"
		"  --exchange-only       exchange addresses and stop, without a QP (checks the\n"
		"                        TCP path to a peer; the peer then fails)\n\n%s",
		rnic_config_usage());
}

/* A number of rc_pingpong's (strtoul base 0) in lo..hi, or a one-line error. */
static int num_arg(const char *opt, const char *s, unsigned long lo, unsigned long hi,
		   unsigned long *v)
{
	char *end;
	errno = 0;
	*v = strtoul(s, &end, 0);
	if (*s == '\0' || *end != '\0' || *s == '-' || errno || *v < lo || *v > hi) {
		fprintf(stderr, "rnic-pingpong: %s: '%s' is not a number %lu..%lu\n",
			opt, s, lo, hi);
		return -EINVAL;
	}
	return 0;
}

static int mtu_arg(const char *s)
{
	unsigned long v;
	char *end;
	errno = 0;
	v = strtoul(s, &end, 0);
	for (int m = IBV_MTU_256; m <= IBV_MTU_4096; m++)
		if (*s != '\0' && *end == '\0' && errno == 0 && v == 128ul << m) {
			o.mtu = (enum ibv_mtu)m;
			return 0;
		}
	fprintf(stderr, "rnic-pingpong: -m: '%s' is not 256, 512, 1024, 2048 or 4096\n", s);
	return -EINVAL;
}

/* rc_pingpong's options after rnic's port options are gone. @return 0,
 * 1 (help printed) or -EINVAL (message printed). */
static int parse_opts(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "port", required_argument, NULL, 'p' },
		{ "ib-dev", required_argument, NULL, 'd' },
		{ "ib-port", required_argument, NULL, 'i' },
		{ "size", required_argument, NULL, 's' },
		{ "rx-depth", required_argument, NULL, 'r' },
		{ "iters", required_argument, NULL, 'n' },
		{ "sl", required_argument, NULL, 'l' },
		{ "events", no_argument, NULL, 'e' },
		{ "gid-idx", required_argument, NULL, 'g' },
		{ "odp", no_argument, NULL, 'o' },
		{ "ts", no_argument, NULL, 't' },
		{ "exchange-only", no_argument, NULL, 'X' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	unsigned long v;
	int c, rc = 0;

	opterr = 0;
	while (rc == 0 && (c = getopt_long(argc, argv, ":p:d:i:s:m:r:n:l:eg:oth", lo, NULL)) != -1) {
		switch (c) {
		case 'p': rc = num_arg("-p", optarg, 1, 65535, &v); o.tcp_port = (uint16_t)v; break;
		case 'd': o.dev = optarg; break;
		case 'i': rc = num_arg("-i", optarg, 1, RNIC_MAX_PORTS, &v); o.ib_port = (unsigned)v; break;
		case 's': rc = num_arg("-s", optarg, 1, 1u << 30, &v); o.size = (unsigned)v; break;
		case 'm': rc = mtu_arg(optarg); break;
		case 'r': rc = num_arg("-r", optarg, 1, RNIC_MAX_QP_WR, &v); o.rx_depth = (unsigned)v; break;
		case 'n': rc = num_arg("-n", optarg, 1, 1u << 30, &v); o.iters = (unsigned)v; break;
		case 'l': rc = num_arg("-l", optarg, 0, 15, &v); o.sl = (unsigned)v; break;
		case 'e': o.events = true; break;
		case 'g': rc = num_arg("-g", optarg, 0, 255, &v); o.gidx = (int)v; break;
		case 'X': o.exchange_only = true; break;
		case 'o': case 't':
			fprintf(stderr, "rnic-pingpong: -%c (%s) is not supported\n", c,
				c == 'o' ? "on-demand paging" : "completion timestamps");
			return -EINVAL;
		case 'h': usage(stdout); return 1;
		case ':':
			fprintf(stderr, "rnic-pingpong: %s needs a value\n", argv[optind - 1]);
			return -EINVAL;
		default:
			if (optopt != 0)
				fprintf(stderr, "rnic-pingpong: unknown option -%c (try --help)\n",
					optopt);
			else
				fprintf(stderr, "rnic-pingpong: unknown argument '%s' (try --help)\n",
					argv[optind - 1]);
			return -EINVAL;
		}
	}
	if (rc != 0)
		return rc;
	if (optind < argc - 1) {
		fprintf(stderr, "rnic-pingpong: one server address at most: '%s' '%s'\n",
			argv[optind], argv[optind + 1]);
		return -EINVAL;
	}
	if (optind == argc - 1) {
		uint8_t plen;
		if (rnic_parse_cidr(argv[optind], &o.server_ip, &plen) != 0 ||
		    strchr(argv[optind], '/') != NULL) {
			fprintf(stderr, "rnic-pingpong: '%s' is not an IPv4 address (A.B.C.D; "
				"names are not resolved)\n", argv[optind]);
			return -EINVAL;
		}
	}
	return 0;
}

/* --- verbs objects ------------------------------------------------------------ */

/* Open the device and check -d and -i against it. */
static int ctx_open(struct pp_ctx *pp, struct ibv_port_attr *pa)
{
	pp->ctx = rnic_open_device(pp->st);
	if (pp->ctx == NULL) {
		fprintf(stderr, "rnic-pingpong: cannot open the device: %s\n", strerror(errno));
		return -1;
	}
	if (o.dev != NULL && strcmp(o.dev, pp->ctx->device->name) != 0) {
		fprintf(stderr, "rnic-pingpong: IB device %s not found (this one is %s)\n",
			o.dev, pp->ctx->device->name);
		return -1;
	}
	if (rnic_query_port(pp->ctx, (uint8_t)o.ib_port, pa) != 0) {
		fprintf(stderr, "rnic-pingpong: -i %u: no such port\n", o.ib_port);
		return -1;
	}
	if (!o.exchange_only && o.mtu > pa->active_mtu) {
		fprintf(stderr, "rnic-pingpong: -m %d is more than port %u carries (%d: raise "
			"its --mtu)\n", 128 << o.mtu, o.ib_port, 128 << pa->active_mtu);
		return -1;
	}
	return 0;
}

/* The objects of rc_pingpong's pp_init_ctx, QP left in INIT. */
static int ctx_init(struct pp_ctx *pp)
{
	pp->buf = aligned_alloc((size_t)sysconf(_SC_PAGESIZE),
				(o.size + 4095u) & ~4095u);
	if (pp->buf == NULL) {
		fprintf(stderr, "rnic-pingpong: Couldn't allocate work buf.\n");
		return -1;
	}
	memset(pp->buf, 0x7b, o.size);
	if (o.events) {
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
	pp->mr = rnic_reg_mr(pp->pd, pp->buf, o.size, IBV_ACCESS_LOCAL_WRITE);
	if (pp->mr == NULL) {
		fprintf(stderr, "rnic-pingpong: Couldn't register MR: %s\n", strerror(errno));
		return -1;
	}
	pp->cq = rnic_create_cq(pp->ctx, (int)o.rx_depth + 1, NULL, pp->channel, 0);
	if (pp->cq == NULL) {
		fprintf(stderr, "rnic-pingpong: Couldn't create CQ: %s\n", strerror(errno));
		return -1;
	}
	struct ibv_qp_init_attr ia = {
		.send_cq = pp->cq,
		.recv_cq = pp->cq,
		.cap = {
			.max_send_wr = 1,
			.max_recv_wr = o.rx_depth,
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
	    ia.cap.max_inline_data >= o.size)
		pp->send_flags |= IBV_SEND_INLINE;

	struct ibv_qp_attr init = {
		.qp_state = IBV_QPS_INIT,
		.pkey_index = 0,
		.port_num = (uint8_t)o.ib_port,
		.qp_access_flags = 0,
	};
	int rc = rnic_modify_qp(pp->qp, &init,
				IBV_QP_STATE |
				IBV_QP_PKEY_INDEX |
				IBV_QP_PORT |
				IBV_QP_ACCESS_FLAGS);
	if (rc != 0) {
		fprintf(stderr, "rnic-pingpong: Failed to modify QP to INIT: %s\n", strerror(rc));
		return -1;
	}
	return 0;
}

/* Free in the reverse order of ctx_open and ctx_init; what exists. */
static void ctx_close(struct pp_ctx *pp)
{
	int rc;
	if (pp->qp && (rc = rnic_destroy_qp(pp->qp)) != 0)
		fprintf(stderr, "rnic-pingpong: Couldn't destroy QP: %s\n", strerror(rc));
	if (pp->cq) {
		if (pp->events)
			rnic_ack_cq_events(pp->cq, pp->events);
		if ((rc = rnic_destroy_cq(pp->cq)) != 0)
			fprintf(stderr, "rnic-pingpong: Couldn't destroy CQ: %s\n", strerror(rc));
	}
	if (pp->mr && (rc = rnic_dereg_mr(pp->mr)) != 0)
		fprintf(stderr, "rnic-pingpong: Couldn't deregister MR: %s\n", strerror(rc));
	if (pp->pd && (rc = rnic_dealloc_pd(pp->pd)) != 0)
		fprintf(stderr, "rnic-pingpong: Couldn't deallocate PD: %s\n", strerror(rc));
	if (pp->channel && (rc = rnic_destroy_comp_channel(pp->channel)) != 0)
		fprintf(stderr, "rnic-pingpong: Couldn't destroy completion channel: %s\n",
			strerror(rc));
	if (pp->ctx && (rc = rnic_close_device(pp->ctx)) != 0)
		fprintf(stderr, "rnic-pingpong: Couldn't release context: %s\n", strerror(rc));
	free(pp->buf);
}

/* --- connection --------------------------------------------------------------- */

/* RTR then RTS towards @p rem, with rc_pingpong's attributes. RoCE always
 * needs the GRH: the peer's GID is its IP address. */
static int qp_connect(const struct pp_dest *rem, void *arg)
{
	struct pp_ctx *pp = arg;
	static const uint8_t zero[8];

	if (o.exchange_only)
		return 0;
	if (memcmp(&rem->gid.raw[8], zero, sizeof(zero)) == 0) {
		fprintf(stderr, "rnic-pingpong: the peer sent no GID: RoCE needs it "
			"(run the peer with -g 1)\n");
		return -1;
	}
	struct ibv_qp_attr attr = {
		.qp_state = IBV_QPS_RTR,
		.path_mtu = o.mtu,
		.dest_qp_num = rem->qpn,
		.rq_psn = rem->psn,
		.max_dest_rd_atomic = 1,
		.min_rnr_timer = 12,
		.ah_attr = {
			.is_global = 1,
			.grh = {
				.dgid = rem->gid,
				.sgid_index = (uint8_t)(o.gidx >= 0 ? o.gidx : 1),
				.hop_limit = 1,
			},
			.dlid = (uint16_t)rem->lid,
			.sl = (uint8_t)o.sl,
			.src_path_bits = 0,
			.port_num = (uint8_t)o.ib_port,
		},
	};
	int rc = rnic_modify_qp(pp->qp, &attr,
				RNIC_QP_RTR_MASK);
	if (rc != 0) {
		fprintf(stderr, "rnic-pingpong: Failed to modify QP to RTR: %s\n", strerror(rc));
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
		fprintf(stderr, "rnic-pingpong: Failed to modify QP to RTS: %s\n", strerror(rc));
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
		.length = o.size,
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
		.length = o.size,
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
			pp->routs += post_recv(pp, o.rx_depth - pp->routs);
			if (pp->routs < o.rx_depth) {
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
	if (pp->scnt < o.iters && pp->pending == 0) {
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

	while (pp->rcnt < o.iters || pp->scnt < o.iters) {
		if (o.events && wait_event(pp) != 0)
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
				"%u of %u receives completed\n", STALL_S, pp->scnt, o.iters,
				pp->rcnt, o.iters);
			return -1;
		}
		if (!o.events && t - last > SPIN_US * 1e-6)
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

static void on_signal(int sig)
{
	(void)sig;
	rnic_request_stop();
}

/* Everything between a started stack and its teardown. @return exit status. */
static int pingpong(struct pp_ctx *pp)
{
	struct ibv_port_attr pa;
	struct pp_dest mine = { 0 }, rem;
	char err[RNIC_ERRLEN];

	if (ctx_open(pp, &pa) != 0)
		return EXIT_FAIL;
	if (!o.exchange_only) {
		if (ctx_init(pp) != 0)
			return EXIT_FAIL;
		pp->routs = post_recv(pp, o.rx_depth);
		if (pp->routs < o.rx_depth) {
			fprintf(stderr, "rnic-pingpong: Couldn't post receive (%u)\n", pp->routs);
			return EXIT_FAIL;
		}
		if (o.events && ibv_req_notify_cq(pp->cq, 0) != 0) {
			fprintf(stderr, "rnic-pingpong: Couldn't request CQ notification\n");
			return EXIT_FAIL;
		}
		mine.qpn = pp->qp->qp_num;
	}
	mine.lid = pa.lid;
	if (o.gidx >= 0 && rnic_query_gid(pp->ctx, (uint8_t)o.ib_port, o.gidx, &mine.gid) != 0) {
		fprintf(stderr, "rnic-pingpong: can't read sgid of index %d\n", o.gidx);
		return EXIT_FAIL;
	}
	mine.psn = (uint32_t)lrand48() & 0xffffff;
	pp->my_psn = mine.psn;
	print_dest("local address: ", &mine);

	int rc = o.server_ip != 0 ?
		pp_exch_client(pp->st, o.server_ip, o.tcp_port, &mine, &rem, err, sizeof(err)) :
		pp_exch_server(pp->st, o.tcp_port, &mine, &rem, qp_connect, pp, err, sizeof(err));
	if (rc != 0) {
		fprintf(stderr, "rnic-pingpong: %s\n", err);
		return EXIT_FAIL;
	}
	print_dest("remote address:", &rem);
	if (o.exchange_only)
		return 0;
	if (o.server_ip != 0 && qp_connect(&rem, pp) != 0)
		return EXIT_FAIL;

	pp->pending = PP_RECV_WRID;
	if (o.server_ip != 0) {
		if (post_send(pp) != 0)
			return EXIT_FAIL;
		pp->pending |= PP_SEND_WRID;
	}
	double t0 = now_s();
	if (run(pp) != 0) {
		dump_counters(pp);
		return EXIT_FAIL;
	}
	double usec = (now_s() - t0) * 1e6;
	long long bytes = (long long)o.size * o.iters * 2;
	printf("%lld bytes in %.2f seconds = %.2f Mbit/sec\n", bytes, usec / 1e6,
	       (double)bytes * 8. / usec);
	printf("%u iters in %.2f seconds = %.2f usec/iter\n", o.iters, usec / 1e6,
	       usec / o.iters);
	fflush(stdout);
	/* the peer's last Send may still wait for our ACK (or its retry) */
	usleep(LINGER_MS * 1000);
	return 0;
}

int main(int argc, char **argv)
{
	struct rnic_config cfg;
	struct pp_ctx pp = { 0 };
	char err[RNIC_ERRLEN];

	rnic_config_init(&cfg);
	if (rnic_config_parse_args(&cfg, &argc, argv, err, sizeof(err)) != 0) {
		fprintf(stderr, "rnic-pingpong: %s\n", err);
		return EXIT_USAGE;
	}
	int rc = parse_opts(argc, argv);
	if (rc != 0)
		return rc > 0 ? 0 : EXIT_USAGE;
	if (cfg.n_ports == 0) {
		fprintf(stderr, "rnic-pingpong: no port: give --vdev SPEC --ip A.B.C.D/LEN "
			"(or --config FILE; try --help)\n");
		return EXIT_USAGE;
	}
	if (o.ib_port > cfg.n_ports) {
		fprintf(stderr, "rnic-pingpong: -i %u: there are %u port(s)\n", o.ib_port,
			cfg.n_ports);
		return EXIT_USAGE;
	}
	srand48((long)getpid() * (long)time(NULL));
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	if (rnic_eal_init(argv[0], &cfg, cfg.workers) != 0)
		return EXIT_FAIL;
	pp.st = rnic_stack_create(&cfg);
	if (pp.st == NULL) {
		fprintf(stderr, "rnic-pingpong: stack: %s\n", rte_strerror(rte_errno));
		return EXIT_FAIL;
	}
	if (rnic_stack_start(pp.st) != 0) {
		rnic_stack_destroy(pp.st);
		return EXIT_FAIL;
	}
	rc = pingpong(&pp);
	ctx_close(&pp);
	rnic_stack_stop(pp.st);
	rnic_stack_destroy(pp.st);
	return rc;
}
