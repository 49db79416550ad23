/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rnic-ping: the protocol of rdma-core's rping over rnic's iWARP, or with
 * --transport roce over RoCE QPs connected by the IB CM (cm_ping.c, which
 * uses the verbs objects and rnic_cm as rping uses libibverbs/librdmacm).
 *
 * Message sequence per ping (client C, server S), as rping does it:
 *   C: SEND {start_buf, rkey, size}        (RDMA_READ_ADV)
 *   S: RDMA READ of start_buf into its rdma_buf, then SEND (go ahead)
 *   C: SEND {rdma_buf, rkey, size}         (RDMA_WRITE_ADV)
 *   S: RDMA WRITE of its rdma_buf into the client's rdma_buf, then SEND
 *   C: compares rdma_buf with start_buf (-V), prints (-v), next ping
 * The info record is struct rping_rdma_info: buf (be64), rkey (be32),
 * size (be32). MPA IRD/ORD 1/1 as rping asks through rdma_cm.
 *
 *   rnic-ping -s [-a ADDR] [-p PORT] [-C N] [-S SIZE] [-v] [-V] [-P] PORT-OPTIONS
 *   rnic-ping -c -a ADDR [-p PORT] [-C N] [-S SIZE] [-v] [-V] PORT-OPTIONS
 * Exit status 0 when every ping completed (and validated with -V).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_byteorder.h>
#include <rte_errno.h>

#include "rnic/rnic.h"
#include "rnic/rnic_iwarp.h"

#include "cm_ping.h"

#define RPING_MSG_FMT "rdma-ping-%d: "
#define RPING_MIN_SIZE 32   /* room for the message prefix */

struct rping_rdma_info {
	uint64_t buf;
	uint32_t rkey;
	uint32_t size;
} __attribute__((packed));

enum ping_state { ST_IDLE, ST_READ_ADV, ST_READ_DONE, ST_WRITE_ADV, ST_WRITE_DONE };

struct cb {
	bool server, verbose, validate, persistent;
	bool crc;                      /* ask for MPA CRC32c (--no-crc: off) */
	uint32_t dst_ip;
	uint16_t port;
	unsigned count;                /* 0 = forever */
	uint32_t size;
	struct rnic_stack *st;
	struct rnic_iw_ep *ep;
	enum ping_state state;
	unsigned ping;
	uint8_t *rdma_buf, *start_buf;
	struct rping_rdma_info send_info, recv_info;
	struct rnic_iw_mr *rdma_mr, *start_mr, *send_mr, *recv_mr;
	uint32_t remote_rkey, remote_len;
	uint64_t remote_addr;
	volatile int done;
	volatile int failed;
	int err;
};

static struct cb g;

static void fail(const char *what, int err)
{
	fprintf(stderr, "rnic-ping: %s: %s\n", what, strerror(err < 0 ? -err : err));
	g.failed = 1;
	if (g.ep)
		rnic_iw_disconnect(g.ep);
}

static int post_recv(void)
{
	return rnic_iw_post_recv(g.ep, 1, &g.recv_info, sizeof(g.recv_info));
}

/* SEND our info for @p buf (rping_format_send). */
static int send_info(uint8_t *buf, struct rnic_iw_mr *mr)
{
	g.send_info.buf = rte_cpu_to_be_64((uint64_t)(uintptr_t)buf);
	g.send_info.rkey = rte_cpu_to_be_32(rnic_iw_mr_stag(mr));
	g.send_info.size = rte_cpu_to_be_32(g.size);
	struct ibv_sge sge = { (uint64_t)(uintptr_t)&g.send_info, sizeof(g.send_info),
			       rnic_iw_mr_stag(g.send_mr) };
	struct ibv_send_wr wr = { .wr_id = 2, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED };
	return rnic_iw_post_send(g.ep, &wr);
}

static int rdma_op(enum ibv_wr_opcode op)
{
	uint32_t len = g.remote_len < g.size ? g.remote_len : g.size;
	struct ibv_sge sge = { (uint64_t)(uintptr_t)g.rdma_buf, len, rnic_iw_mr_stag(g.rdma_mr) };
	struct ibv_send_wr wr = { .wr_id = 3, .sg_list = &sge, .num_sge = 1, .opcode = op,
				  .send_flags = IBV_SEND_SIGNALED };
	wr.wr.rdma.remote_addr = g.remote_addr;
	wr.wr.rdma.rkey = g.remote_rkey;
	return rnic_iw_post_send(g.ep, &wr);
}

/* The client's next ping: fill start_buf as rping does, advertise it. */
static void client_ping(void)
{
	static int start = 65;
	int cc = snprintf((char *)g.start_buf, g.size, RPING_MSG_FMT, (int)g.ping);
	int c = start;
	for (uint32_t i = (uint32_t)cc; i < g.size; i++) {
		g.start_buf[i] = (uint8_t)c;
		if (++c > 122)
			c = 65;
	}
	if (++start > 122)
		start = 65;
	g.start_buf[g.size - 1] = 0;
	g.state = ST_READ_ADV;
	int rc = send_info(g.start_buf, g.start_mr);
	if (rc)
		fail("post send", rc);
}

static void on_established(struct rnic_iw_ep *ep, void *ctx)
{
	(void)ctx;
	g.ep = ep;
	int rc = post_recv();
	if (rc) {
		fail("post recv", rc);
		return;
	}
	g.state = ST_IDLE;
	if (!g.server)
		client_ping();
}

static void *on_request(struct rnic_iw_ep *ep, void *lctx, const void *pd, uint16_t len)
{
	(void)lctx; (void)pd; (void)len;
	if (g.ep != NULL)
		return NULL;   /* one client at a time, as rping */
	g.ep = ep;
	return &g;
}

static void client_completion(const struct ibv_wc *wc)
{
	if (wc->opcode != IBV_WC_RECV)
		return;
	int rc = post_recv();
	if (rc) {
		fail("post recv", rc);
		return;
	}
	if (g.state == ST_READ_ADV) {   /* server has read start_buf */
		g.state = ST_WRITE_ADV;
		rc = send_info(g.rdma_buf, g.rdma_mr);
		if (rc)
			fail("post send", rc);
		return;
	}
	/* the server wrote rdma_buf */
	if (g.validate && memcmp(g.start_buf, g.rdma_buf, g.size)) {
		fprintf(stderr, "data mismatch!\n");
		fail("validate", EBADMSG);
		return;
	}
	if (g.verbose)
		printf("ping data: %s\n", g.rdma_buf);
	g.ping++;
	if (g.count && g.ping >= g.count) {
		rnic_iw_disconnect(g.ep);
		return;
	}
	client_ping();
}

static void server_completion(const struct ibv_wc *wc)
{
	int rc = 0;
	switch (wc->opcode) {
	case IBV_WC_RECV:
		g.remote_addr = rte_be_to_cpu_64(g.recv_info.buf);
		g.remote_rkey = rte_be_to_cpu_32(g.recv_info.rkey);
		g.remote_len = rte_be_to_cpu_32(g.recv_info.size);
		if ((rc = post_recv()) != 0)
			break;
		if (g.state == ST_IDLE || g.state == ST_WRITE_DONE) {
			g.state = ST_READ_ADV;
			rc = rdma_op(IBV_WR_RDMA_READ);
		} else {
			g.state = ST_WRITE_ADV;
			rc = rdma_op(IBV_WR_RDMA_WRITE);
		}
		break;
	case IBV_WC_RDMA_READ:
		if (g.verbose)
			printf("server ping data: %s\n", g.rdma_buf);
		g.state = ST_READ_DONE;
		rc = send_info(g.rdma_buf, g.rdma_mr);   /* go ahead */
		break;
	case IBV_WC_RDMA_WRITE:
		g.state = ST_WRITE_DONE;
		g.ping++;
		rc = send_info(g.rdma_buf, g.rdma_mr);   /* write complete */
		break;
	default:
		break;
	}
	if (rc)
		fail("post", rc);
}

static void on_completion(struct rnic_iw_ep *ep, void *ctx, const struct ibv_wc *wc)
{
	(void)ep; (void)ctx;
	if (wc->status != IBV_WC_SUCCESS) {
		if (wc->status != IBV_WC_WR_FLUSH_ERR) {
			/* ibv_wc_status_str() is libibverbs code: rnic uses its headers only */
			fprintf(stderr, "rnic-ping: wr %lu completed with status %d\n",
				(unsigned long)wc->wr_id, wc->status);
			g.failed = 1;
		}
		return;
	}
	if (g.server)
		server_completion(wc);
	else
		client_completion(wc);
}

static void on_disconnected(struct rnic_iw_ep *ep, void *ctx, int err)
{
	(void)ep; (void)ctx;
	g.err = err;
	g.ep = NULL;
	if (!g.server && g.count && g.ping < g.count)
		g.failed = 1;
	if (!g.persistent)
		g.done = 1;
	g.state = ST_IDLE;
	if (err && err != -ECONNRESET)
		fprintf(stderr, "rnic-ping: disconnected: %s\n", strerror(-err));
}

static const struct rnic_iw_ops ops = {
	.request = on_request, .established = on_established,
	.completion = on_completion, .disconnected = on_disconnected,
};

struct conn_req { int rc; };

static void do_connect(struct rnic_worker *w, void *arg)
{
	struct conn_req *r = arg;
	struct rnic_iw_params p;
	struct rnic_iw_ep *ep;
	rnic_iw_params_default(&p);
	p.ird = p.ord = 1;
	p.crc = g.crc;
	r->rc = rnic_iw_connect(w, g.dst_ip, g.port, &ops, &g, &p, NULL, 0, &ep);
}

static void on_signal(int sig)
{
	(void)sig;
	rnic_request_stop();
}

static void usage(FILE *f)
{
	fprintf(f, "usage: rnic-ping -s [-a ADDR] [-p PORT] [-C N] [-S SIZE] [-v] [-V] [-P]\n"
		   "       rnic-ping -c -a ADDR [-p PORT] [-C N] [-S SIZE] [-v] [-V]\n"
		   "  -p PORT  TCP port (default 7174, as rping)\n"
		   "  -C N     pings (default: forever)   -S SIZE  ping size (default 64)\n"
		   "  -v       print the data   -V  validate it   -P  persistent server\n"
		   "  --no-crc do not ask for MPA CRC32c (a peer that asks still gets it)\n"
		   "  --transport iwarp|roce  the client's QP (default iwarp); a roce server\n"
		   "           takes both (one listener: TCP port and IB CM service ID)\n\n%s",
		rnic_config_usage());
}

int main(int argc, char **argv)
{
	struct rnic_config cfg;
	char err[RNIC_ERRLEN];
	bool c = false, s = false;
	int o;

	g.port = 7174;
	g.size = 64;
	g.crc = true;
	enum rnic_transport transport = RNIC_TRANSPORT_IWARP;
	for (int i = 1; i < argc; i++) {   /* rnic's own flags; not rping ones */
		int take = 0;
		if (!strcmp(argv[i], "--no-crc")) {
			g.crc = false;
			take = 1;
		} else if (!strcmp(argv[i], "--transport") && i + 1 < argc) {
			if (!strcmp(argv[i + 1], "roce"))
				transport = RNIC_TRANSPORT_ROCE;
			else if (strcmp(argv[i + 1], "iwarp") != 0)
				goto bad;
			take = 2;
		}
		if (take) {
			memmove(&argv[i], &argv[i + take], (size_t)(argc - i - take + 1) *
				sizeof(char *));
			argc -= take;
			i--;
		}
	}
	rnic_config_init(&cfg);
	if (rnic_config_parse_args(&cfg, &argc, argv, err, sizeof(err)) != 0) {
		fprintf(stderr, "rnic-ping: %s\n", err);
		return 2;
	}
	while ((o = getopt(argc, argv, "sca:p:C:S:vVPdqI:h")) != -1) {
		char *end;
		switch (o) {
		case 's': s = true; break;
		case 'c': c = true; break;
		case 'a': {
			uint8_t plen;
			if (rnic_parse_cidr(optarg, &g.dst_ip, &plen) || strchr(optarg, '/')) {
				fprintf(stderr, "rnic-ping: -a: '%s' is not an IPv4 address\n", optarg);
				return 2;
			}
			break;
		}
		case 'p': g.port = (uint16_t)strtoul(optarg, &end, 10);
			if (*end || !g.port) goto bad;
			break;
		case 'C': g.count = (unsigned)strtoul(optarg, &end, 10);
			if (*end) goto bad;
			break;
		case 'S': g.size = (uint32_t)strtoul(optarg, &end, 10);
			if (*end || g.size < RPING_MIN_SIZE || g.size > (64u << 20)) goto bad;
			break;
		case 'v': g.verbose = true; break;
		case 'V': g.validate = true; break;
		case 'P': g.persistent = true; break;
		case 'd': case 'q': case 'I': break;   /* rping flags without effect here */
		case 'h': usage(stdout); return 0;
		default: goto bad;
		}
	}
	if (s == c || (c && g.dst_ip == 0) || cfg.n_ports == 0 || optind < argc)
		goto bad;
	g.server = s;

	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	if (rnic_eal_init(argv[0], &cfg, cfg.workers) != 0)
		return 1;
	g.st = rnic_stack_create(&cfg);
	if (g.st == NULL) {
		fprintf(stderr, "rnic-ping: stack: %s\n", rte_strerror(rte_errno));
		return 1;
	}
	if (transport == RNIC_TRANSPORT_ROCE) {
		struct cm_ping_opts o = { .server = g.server, .verbose = g.verbose,
					  .validate = g.validate, .persistent = g.persistent,
					  .transport = transport, .dst_ip = g.dst_ip,
					  .port = g.port, .count = g.count, .size = g.size };
		if (rnic_stack_start(g.st) != 0)
			return 1;
		int rc = cm_ping_run(g.st, &o);
		rnic_stack_stop(g.st);
		rnic_stack_destroy(g.st);
		return rc;
	}
	g.rdma_buf = calloc(1, g.size);
	g.start_buf = calloc(1, g.size);
	int acc = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE;
	g.rdma_mr = rnic_iw_reg_mr(g.st, g.rdma_buf, g.size, acc);
	g.start_mr = rnic_iw_reg_mr(g.st, g.start_buf, g.size,
				    IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ);
	g.send_mr = rnic_iw_reg_mr(g.st, &g.send_info, sizeof(g.send_info), 0);
	g.recv_mr = rnic_iw_reg_mr(g.st, &g.recv_info, sizeof(g.recv_info),
				   IBV_ACCESS_LOCAL_WRITE);
	if (!g.rdma_buf || !g.start_buf || !g.rdma_mr || !g.start_mr || !g.send_mr || !g.recv_mr) {
		fprintf(stderr, "rnic-ping: cannot register buffers\n");
		return 1;
	}
	if (rnic_stack_start(g.st) != 0)
		return 1;
	if (g.server) {
		struct rnic_iw_params p;
		rnic_iw_params_default(&p);
		p.ird = p.ord = 1;
		p.crc = g.crc;
		int rc = rnic_iw_listen(g.st, g.port, &ops, &g, &p);
		if (rc) {
			fprintf(stderr, "rnic-ping: listen: %s\n", strerror(-rc));
			return 1;
		}
	} else {
		struct conn_req r = { 0 };
		rnic_worker_call_sync(rnic_stack_worker(g.st, 0), do_connect, &r);
		if (r.rc) {
			fprintf(stderr, "rnic-ping: connect: %s\n", strerror(-r.rc));
			return 1;
		}
	}
	while (!g.done && !rnic_stop_requested())
		usleep(1000);
	rnic_stack_stop(g.st);
	if (g.server)
		rnic_iw_unlisten(g.st, g.port);
	/* MRs live in the stack's STag table: free them before the stack */
	rnic_iw_dereg_mr(g.rdma_mr);
	rnic_iw_dereg_mr(g.start_mr);
	rnic_iw_dereg_mr(g.send_mr);
	rnic_iw_dereg_mr(g.recv_mr);
	rnic_stack_destroy(g.st);
	free(g.rdma_buf);
	free(g.start_buf);
	if (g.failed || (!g.server && g.err && g.err != -ECONNRESET))
		return 1;
	if (!g.server && g.count && g.ping < g.count)
		return 1;
	return 0;
bad:
	usage(stderr);
	return 2;
}
