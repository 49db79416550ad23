/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rnic-cp: copy a file into or out of an rdma-gateway target over RDMA.
 *
 *   rnic-cp [port options] put FILE rdma://ADDR[:PORT]/TARGET[?offset=N]
 *   rnic-cp [port options] get rdma://ADDR[:PORT]/TARGET[?offset=N] FILE --length N
 *
 * --transport iwarp|roce (default iwarp) picks the QP's transport: MPA over
 * rnic TCP, or RoCEv2 connected by the IB CM; the URL is the same for both
 * (PORT is the TCP port, or the port of the RDMA IP CM service ID).
 *
 * It connects through the CM naming the target (apps/common/rnic_gw.h),
 * learns the target's STag, address and length from the accept, and moves
 * the data one-sided: RDMA Writes for put, RDMA Reads for get, with
 * --depth chunks of --chunk bytes in flight. A put ends with an RDMA Read
 * of the last byte written: when it completes, every Write before it is in
 * the target (the gateway syncs file targets when it stops). Progress bar
 * on a terminal, one summary line at the end (--json: one JSON object).
 * Exit 0 on success, 1 on a failure (unreachable, rejected, target too
 * small, I/O), 2 on bad arguments.
 */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <rte_byteorder.h>

#include "rnic/rnic.h"
#include "rnic/rnic_cm.h"
#include "rnic_gw.h"
#include "rnic/rnic_verbs.h"

#define EXIT_FAIL 1
#define EXIT_USAGE 2

static struct {
	int put;
	const char *file;
	struct rnic_addr dst;   /* IPv4, or IPv6 (iWARP) */
	uint16_t port;
	char target[RNIC_GW_NAME_LEN];
	uint64_t offset, length;
	uint32_t chunk, depth;
	int json, have_length;
	enum rnic_transport transport;
} o = { .transport = RNIC_TRANSPORT_IWARP, .port = RNIC_GW_DEFAULT_PORT, .chunk = 1 << 20, .depth = 8 };

static void usage(FILE *f)
{
	fprintf(f, "usage: rnic-cp [options] put FILE rdma://ADDR[:PORT]/TARGET[?offset=N]\n"
		   "       rnic-cp [options] get rdma://ADDR[:PORT]/TARGET[?offset=N] FILE --length N\n"
		   "       (ADDR: A.B.C.D, or [X:X::X] for IPv6 over iWARP)\n"
		   "options: --chunk BYTES (default 1M)  --depth N (default 8)  --json\n"
		   "         --transport iwarp|roce (default iwarp)\n"
		   "         the port options below; the default PORT is %u\n\n%s",
		RNIC_GW_DEFAULT_PORT, rnic_config_usage());
}

static int bad(const char *fmt, const char *arg)
{
	fprintf(stderr, "rnic-cp: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, " (try --help)\n");
	return EXIT_USAGE;
}

static int parse_size(const char *s, uint64_t *v)
{
	char *end;
	errno = 0;
	unsigned long long n = strtoull(s, &end, 10);
	if (errno || end == s || s[0] == '-')
		return -1;
	uint64_t m = 1;
	if (*end == 'K' || *end == 'k')
		m = 1ull << 10;
	else if (*end == 'M' || *end == 'm')
		m = 1ull << 20;
	else if (*end == 'G' || *end == 'g')
		m = 1ull << 30;
	if (m != 1)
		end++;
	if (*end != '\0' || n > UINT64_MAX / m)
		return -1;
	*v = n * m;
	return 0;
}

/* rdma://ADDR[:PORT]/TARGET[?offset=N]; an IPv6 ADDR in brackets */
static int parse_url(const char *u)
{
	char host[64], rest[128];
	if (strncmp(u, "rdma://", 7) != 0)
		return -1;
	u += 7;
	const char *slash = strchr(u, '/');
	if (slash == NULL || (size_t)(slash - u) >= sizeof(host) || strlen(slash + 1) >= sizeof(rest))
		return -1;
	memcpy(host, u, (size_t)(slash - u));
	host[slash - u] = '\0';
	strcpy(rest, slash + 1);
	/* the port's colon: right after "]" for [IPv6], else the only one */
	char *colon = strchr(host, ':');
	if (host[0] == '[') {
		char *rb = strchr(host, ']');
		if (rb == NULL || (rb[1] != ':' && rb[1] != '\0'))
			return -1;
		colon = rb[1] == ':' ? rb + 1 : NULL;
	}
	if (colon) {
		*colon = '\0';
		char *end;
		long p = strtol(colon + 1, &end, 10);
		if (*end || p < 1 || p > 65535)
			return -1;
		o.port = (uint16_t)p;
	}
	/* an IPv6 address only in brackets (its colons would be the port's) */
	if (rnic_addr_parse(host, &o.dst, NULL) != 0 ||
	    (o.dst.family == RNIC_AF_INET6) != (host[0] == '['))
		return -1;
	char *q = strchr(rest, '?');
	if (q) {
		*q++ = '\0';
		if (strncmp(q, "offset=", 7) != 0 || parse_size(q + 7, &o.offset) != 0)
			return -1;
	}
	size_t n = strlen(rest);
	if (n == 0 || n >= RNIC_GW_NAME_LEN)
		return -1;
	memcpy(o.target, rest, n);
	return 0;
}

static int parse_transport(const char *s)
{
	if (!strcmp(s, "iwarp"))
		o.transport = RNIC_TRANSPORT_IWARP;
	else if (!strcmp(s, "roce"))
		o.transport = RNIC_TRANSPORT_ROCE;
	else
		return -1;
	return 0;
}

static const char *transport_name(void)
{
	return o.transport == RNIC_TRANSPORT_ROCE ? "roce" : "iwarp";
}

/* A reject: the gateway's reason when it is one, else what the CM knows. */
static void print_reject(const struct rnic_cm_event *ev)
{
	const struct rnic_gw_rep *rep = (const void *)ev->private_data;
	if (ev->private_data_len >= offsetof(struct rnic_gw_rep, reason) + 1 &&
	    !memcmp(rep->magic, RNIC_GW_MAGIC, 4))
		fprintf(stderr, "rnic-cp: rejected: %.64s\n", rep->reason);
	else if (o.transport == RNIC_TRANSPORT_ROCE)
		fprintf(stderr, "rnic-cp: rejected by the peer (IB CM REJ reason %u)\n",
			ev->rej_reason);
	else
		fprintf(stderr, "rnic-cp: rejected by the peer\n");
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void progress(uint64_t done, uint64_t total, double t0, int final)
{
	if (!isatty(STDERR_FILENO) || o.json)
		return;
	int w = 40, k = total ? (int)(done * w / total) : w;
	double s = now_s() - t0;
	fprintf(stderr, "\r[%.*s%*s] %3d%% %.1f MiB/s", k,
		"########################################", w - k, "",
		total ? (int)(done * 100 / total) : 100, s > 0 ? done / s / 1048576 : 0);
	if (final)
		fputc('\n', stderr);
}

int main(int argc, char **argv)
{
	struct rnic_config cfg;
	char err[RNIC_ERRLEN] = "";
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			usage(stdout);
			return 0;
		}
	rnic_config_init(&cfg);
	if (rnic_config_parse_args(&cfg, &argc, argv, err, sizeof(err)) != 0) {
		fprintf(stderr, "rnic-cp: %s\n", err);
		return EXIT_USAGE;
	}
	const char *pos[3];
	int npos = 0;
	for (int i = 1; i < argc; i++) {
		uint64_t v;
		if (!strcmp(argv[i], "--length") || !strcmp(argv[i], "--chunk") ||
		    !strcmp(argv[i], "--depth")) {
			if (i + 1 >= argc || parse_size(argv[i + 1], &v) != 0 || v == 0)
				return bad("%s needs a positive size", argv[i]);
			if (!strcmp(argv[i], "--length")) {
				o.length = v;
				o.have_length = 1;
			} else if (!strcmp(argv[i], "--chunk")) {
				if (v > (64u << 20))
					return bad("%s: at most 64M", argv[i]);
				o.chunk = (uint32_t)v;
			} else {
				if (v > 32)
					return bad("%s: at most 32", argv[i]);
				o.depth = (uint32_t)v;
			}
			i++;
		} else if (!strcmp(argv[i], "--transport")) {
			if (i + 1 >= argc || parse_transport(argv[i + 1]) != 0)
				return bad("%s needs iwarp or roce", argv[i]);
			i++;
		} else if (!strcmp(argv[i], "--json")) {
			o.json = 1;
		} else if (argv[i][0] == '-' && argv[i][1] == '-') {
			return bad("unknown option '%s'", argv[i]);
		} else if (npos < 3) {
			pos[npos++] = argv[i];
		} else {
			return bad("unexpected argument '%s'", argv[i]);
		}
	}
	if (npos != 3 || (strcmp(pos[0], "put") && strcmp(pos[0], "get")))
		return bad("%s", "need: put FILE URL, or get URL FILE --length N");
	o.put = !strcmp(pos[0], "put");
	o.file = o.put ? pos[1] : pos[2];
	if (parse_url(o.put ? pos[2] : pos[1]) != 0)
		return bad("bad URL '%s' (rdma://ADDR[:PORT]/TARGET[?offset=N])", o.put ? pos[2] : pos[1]);
	if (!o.put && !o.have_length)
		return bad("%s", "get needs --length N");
	if (cfg.n_ports == 0)
		return bad("%s", "no port: give --vdev SPEC --ip CIDR (or --config FILE)");

	/* the local file first: its errors need no network */
	int fd = o.put ? open(o.file, O_RDONLY) : open(o.file, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0) {
		fprintf(stderr, "rnic-cp: %s: %s\n", o.file, strerror(errno));
		return EXIT_FAIL;
	}
	if (o.put) {
		struct stat sb;
		if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
			fprintf(stderr, "rnic-cp: %s: not a regular file\n", o.file);
			return EXIT_FAIL;
		}
		o.length = (uint64_t)sb.st_size;
	}

	if (rnic_eal_init(argv[0], &cfg, cfg.workers) != 0)
		return EXIT_FAIL;
	struct rnic_stack *st = rnic_stack_create(&cfg);
	if (st == NULL || rnic_stack_start(st) != 0) {
		fprintf(stderr, "rnic-cp: cannot bring the port up\n");
		return EXIT_FAIL;
	}
	int rc = EXIT_FAIL;
	struct ibv_context *ctx = rnic_open_device(st);
	struct ibv_pd *pd = rnic_alloc_pd(ctx);
	struct ibv_cq *cq = rnic_create_cq(ctx, 64, NULL, NULL, 0);
	struct ibv_qp_init_attr qa = { .send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
				       .cap = { .max_send_wr = 64, .max_recv_wr = 1,
						.max_send_sge = 1, .max_recv_sge = 1 } };
	struct ibv_qp *qp = rnic_create_qp_transport(pd, &qa, o.transport);
	size_t bufsz = (size_t)o.chunk * o.depth;
	uint8_t *buf = aligned_alloc(4096, (bufsz + 4095) & ~(size_t)4095);
	struct ibv_mr *mr = buf ? rnic_reg_mr(pd, buf, bufsz, IBV_ACCESS_LOCAL_WRITE) : NULL;
	struct rnic_cm_channel *ch = rnic_cm_create_channel(ctx);
	struct rnic_cm_id *id = NULL;
	if (!qp || !mr || !ch || rnic_cm_create_id(ch, NULL, &id) != 0) {
		fprintf(stderr, "rnic-cp: out of resources (%s QP, buffers, CM)\n",
			transport_name());
		goto out;
	}
	struct rnic_gw_req req = { .version = RNIC_GW_VERSION,
				   .flags = o.put ? RNIC_GW_WANT_WRITE : 0 };
	memcpy(req.magic, RNIC_GW_MAGIC, 4);
	memcpy(req.target, o.target, strlen(o.target));
	struct rnic_cm_conn_param p = { .private_data = &req, .private_data_len = sizeof(req),
					.responder_resources = 1, .initiator_depth = 16 };
	struct rnic_cm_event ev;
	/* the first SYN (or REQ) may wait for ARP; allow a few retransmissions */
	char a[RNIC_ADDRSTRLEN];
	rnic_addr_str(&o.dst, a, sizeof(a));
	if (rnic_cm_connect_addr(id, qp, &o.dst, o.port, &p) != 0 ||
	    rnic_cm_get_event(ch, &ev, 30000) != 0) {
		fprintf(stderr, "rnic-cp: %s:%u: no answer over %s\n", a, o.port,
			transport_name());
		goto out;
	}
	const struct rnic_gw_rep *rep = (const void *)ev.private_data;
	if (ev.type == RNIC_CM_EVENT_REJECTED) {
		print_reject(&ev);
		goto out;
	}
	if (ev.type != RNIC_CM_EVENT_ESTABLISHED) {
		fprintf(stderr, "rnic-cp: %s:%u %s over %s (%s)\n", a, o.port,
			ev.type == RNIC_CM_EVENT_UNREACHABLE ? "unreachable" : "connection failed",
			transport_name(), strerror(-ev.status));
		goto out;
	}
	if (ev.private_data_len < offsetof(struct rnic_gw_rep, reason) ||
	    memcmp(rep->magic, RNIC_GW_MAGIC, 4) || rep->version != RNIC_GW_VERSION) {
		fprintf(stderr, "rnic-cp: the peer is not an rnic gateway (v1)\n");
		goto out;
	}
	uint32_t rkey = rte_be_to_cpu_32(rep->stag);
	uint64_t raddr = rte_be_to_cpu_64(rep->addr), rlen = rte_be_to_cpu_64(rep->length);
	if (o.offset > rlen || o.length > rlen - o.offset) {
		fprintf(stderr, "rnic-cp: target %s is too small: %lu bytes, need %lu at offset %lu\n",
			o.target, (unsigned long)rlen, (unsigned long)o.length,
			(unsigned long)o.offset);
		goto out;
	}

	/* the copy: chunks in flight, slot = chunk index % depth */
	double t0 = now_s();
	uint64_t nchunks = (o.length + o.chunk - 1) / o.chunk, posted = 0, done = 0;
	while (done < nchunks) {
		while (posted < nchunks && posted - done < o.depth) {
			uint64_t off = posted * o.chunk;
			uint32_t n = o.length - off < o.chunk ? (uint32_t)(o.length - off) : o.chunk;
			uint8_t *slot = buf + (posted % o.depth) * o.chunk;
			if (o.put && pread(fd, slot, n, (off_t)off) != (ssize_t)n) {
				fprintf(stderr, "rnic-cp: %s: read failed\n", o.file);
				goto out;
			}
			struct ibv_sge s = { (uintptr_t)slot, n, mr->lkey };
			struct ibv_send_wr wr = { .wr_id = posted, .sg_list = &s, .num_sge = 1,
				.opcode = o.put ? IBV_WR_RDMA_WRITE : IBV_WR_RDMA_READ,
				.send_flags = IBV_SEND_SIGNALED }, *badwr;
			wr.wr.rdma.remote_addr = raddr + o.offset + off;
			wr.wr.rdma.rkey = rkey;
			if (ibv_post_send(qp, &wr, &badwr) != 0) {
				fprintf(stderr, "rnic-cp: post failed\n");
				goto out;
			}
			posted++;
		}
		struct ibv_wc wc[16];
		int n = ibv_poll_cq(cq, 16, wc);
		for (int k = 0; k < n; k++) {
			if (wc[k].status != IBV_WC_SUCCESS) {
				fprintf(stderr, "rnic-cp: transfer failed (completion status %d)\n",
					wc[k].status);
				goto out;
			}
			if (!o.put) {
				uint64_t off = wc[k].wr_id * o.chunk;
				uint32_t len = wc[k].byte_len;
				if (pwrite(fd, buf + (wc[k].wr_id % o.depth) * o.chunk, len,
					   (off_t)off) != (ssize_t)len) {
					fprintf(stderr, "rnic-cp: %s: write failed\n", o.file);
					goto out;
				}
			}
			done++;
		}
		if (n > 0 && (done % 16 == 0 || done == nchunks))
			progress(done * o.chunk < o.length ? done * o.chunk : o.length, o.length, t0, 0);
	}
	if (o.put && o.length > 0) {
		/* durability point: a Read after the Writes (docs/user-guide.md) */
		struct ibv_sge s = { (uintptr_t)buf, 1, mr->lkey };
		struct ibv_send_wr wr = { .wr_id = UINT64_MAX, .sg_list = &s, .num_sge = 1,
					  .opcode = IBV_WR_RDMA_READ, .send_flags = IBV_SEND_SIGNALED },
				   *badwr;
		wr.wr.rdma.remote_addr = raddr + o.offset + o.length - 1;
		wr.wr.rdma.rkey = rkey;
		struct ibv_wc wc;
		int n = 0;
		if (ibv_post_send(qp, &wr, &badwr) == 0)
			while ((n = ibv_poll_cq(cq, 1, &wc)) == 0)
				;
		if (n != 1 || wc.status != IBV_WC_SUCCESS) {
			fprintf(stderr, "rnic-cp: the final read-back failed\n");
			goto out;
		}
	}
	if (!o.put && fsync(fd) != 0) {
		fprintf(stderr, "rnic-cp: %s: %s\n", o.file, strerror(errno));
		goto out;
	}
	double secs = now_s() - t0;
	progress(o.length, o.length, t0, 1);
	if (o.json)
		printf("{\"op\": \"%s\", \"target\": \"%s\", \"bytes\": %lu, \"seconds\": %.3f, "
		       "\"gbps\": %.3f}\n", o.put ? "put" : "get", o.target, (unsigned long)o.length,
		       secs, secs > 0 ? o.length * 8 / secs / 1e9 : 0);
	else
		printf("%s %lu bytes %s %s in %.3f s: %.1f MiB/s\n", o.put ? "put" : "got",
		       (unsigned long)o.length, o.put ? "into" : "from", o.target, secs,
		       secs > 0 ? o.length / secs / 1048576 : 0);
	rc = 0;
	rnic_cm_disconnect(id);
	rnic_cm_get_event(ch, &ev, 2000);
out:
	close(fd);
	if (id)
		rnic_cm_destroy_id(id);
	if (qp)
		rnic_destroy_qp(qp);
	if (mr)
		rnic_dereg_mr(mr);
	free(buf);
	if (cq)
		rnic_destroy_cq(cq);
	if (ch)
		rnic_cm_destroy_channel(ch);
	if (pd)
		rnic_dealloc_pd(pd);
	if (ctx)
		rnic_close_device(ctx);
	rnic_stack_stop(st);
	rnic_stack_destroy(st);
	return rc;
}
