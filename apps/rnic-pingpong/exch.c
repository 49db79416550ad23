/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ibv_rc_pingpong's address exchange on an rnic TCP connection (exch.h).
 *
 * The connection lives on a worker and every callback runs there; the
 * application thread only waits for flags the callbacks publish, and asks
 * the worker (rnic_worker_call_sync) when it has something to send. One
 * exchange per process: the state is static and outlives the connection, so
 * a late callback (the close after our FIN) never touches freed memory.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rte_mbuf.h>

#include "rnic/rnic_tcp.h"

#include "exch.h"

#define EXCH_TIMEOUT_S 30           /* for each step once a peer is there */
#define DONE_MSG "done"             /* the client's last word, NUL included */

struct exch {
	/* worker side: touched only by callbacks and worker calls */
	struct rnic_tcp_conn *c;    /* NULL before connecting and once closed */
	struct rnic_worker *w;      /* the connection's worker */
	bool server;
	char out[PP_REC_LEN];       /* our record */
	char in[PP_REC_LEN];        /* the peer's record */
	size_t in_len;
	size_t done_len;            /* bytes received after the record */
	/* published to the application thread (__atomic, release/acquire) */
	int accepted;               /* server: a client is connected */
	int have_rec;               /* in[] is complete */
	int got_done;               /* server: "done" arrived */
	int closed;                 /* the connection is gone */
	int err;                    /* its closed() status, or a send error */
};

static struct exch ex;

static void publish(int *flag)
{
	__atomic_store_n(flag, 1, __ATOMIC_RELEASE);
}

static bool seen(int *flag)
{
	return __atomic_load_n(flag, __ATOMIC_ACQUIRE) != 0;
}

void pp_dest_format(const struct pp_dest *d, char rec[PP_REC_LEN])
{
	int n = snprintf(rec, PP_REC_LEN, "%04x:%06x:%06x:", d->lid & 0xffff,
			 d->qpn & 0xffffff, d->psn & 0xffffff);
	for (int i = 0; i < 16; i++)
		n += snprintf(rec + n, PP_REC_LEN - (size_t)n, "%02x", d->gid.raw[i]);
}

/* @p n hex digits at @p s into @p v. */
static int hex_field(const char *s, int n, uint32_t *v)
{
	*v = 0;
	for (int i = 0; i < n; i++) {
		char c = s[i];
		int x = c >= '0' && c <= '9' ? c - '0' :
			c >= 'a' && c <= 'f' ? c - 'a' + 10 :
			c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
		if (x < 0)
			return -EINVAL;
		*v = *v << 4 | (uint32_t)x;
	}
	return 0;
}

int pp_dest_parse(const char *rec, size_t len, struct pp_dest *d)
{
	uint32_t b;

	if (len != PP_REC_LEN || rec[4] != ':' || rec[11] != ':' || rec[18] != ':' ||
	    rec[PP_REC_LEN - 1] != '\0')
		return -EINVAL;
	if (hex_field(rec, 4, &d->lid) || hex_field(rec + 5, 6, &d->qpn) ||
	    hex_field(rec + 12, 6, &d->psn))
		return -EINVAL;
	for (int i = 0; i < 16; i++) {
		if (hex_field(rec + 19 + 2 * i, 2, &b))
			return -EINVAL;
		d->gid.raw[i] = (uint8_t)b;
	}
	return 0;
}

/* --- worker side --------------------------------------------------------- */

/* Queue @p n bytes as one segment (records are far below any MSS). */
static int send_bytes(struct rnic_tcp_conn *c, const void *p, size_t n)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(rnic_tcp_pool(c));
	if (m == NULL)
		return -ENOMEM;
	char *d = rte_pktmbuf_append(m, (uint16_t)n);
	if (d == NULL) {
		rte_pktmbuf_free(m);
		return -ENOMEM;
	}
	memcpy(d, p, n);
	int rc = rnic_tcp_send(c, m);
	if (rc != 0)
		rte_pktmbuf_free(m);
	return rc;
}

/* Give up on the connection from the worker: abort() runs no closed(). */
static void exch_abort(struct exch *e, int err)
{
	rnic_tcp_abort(e->c);
	e->c = NULL;
	e->err = err;
	publish(&e->closed);
}

static void *on_accept(struct rnic_tcp_conn *c, void *lctx)
{
	struct exch *e = lctx;
	if (seen(&e->accepted))
		return NULL;   /* one client, as rc_pingpong: later ones are reset */
	e->c = c;
	e->w = rnic_tcp_worker(c);
	publish(&e->accepted);
	return e;
}

static void on_connected(struct rnic_tcp_conn *c, void *ctx)
{
	struct exch *e = ctx;
	e->c = c;
	int rc = send_bytes(c, e->out, PP_REC_LEN);
	if (rc != 0)
		exch_abort(e, rc);
}

static void on_recv(struct rnic_tcp_conn *c, void *ctx, struct rte_mbuf *m)
{
	struct exch *e = ctx;
	bool rec_done = false;

	for (struct rte_mbuf *s = m; s != NULL; s = s->next) {
		const char *p = rte_pktmbuf_mtod(s, const char *);
		size_t n = s->data_len;
		size_t take = RTE_MIN(n, PP_REC_LEN - e->in_len);
		memcpy(e->in + e->in_len, p, take);
		e->in_len += take;
		e->done_len += n - take;
		if (take > 0 && e->in_len == PP_REC_LEN)
			rec_done = true;
	}
	rte_pktmbuf_free(m);
	if (rec_done)
		publish(&e->have_rec);
	if (!e->server && rec_done) {
		int rc = send_bytes(c, DONE_MSG, sizeof(DONE_MSG));
		if (rc != 0) {
			exch_abort(e, rc);
			return;
		}
		rnic_tcp_close(c);
	}
	if (e->server && e->done_len >= sizeof(DONE_MSG) && !seen(&e->got_done)) {
		publish(&e->got_done);
		rnic_tcp_close(c);
	}
}

static void on_eof(struct rnic_tcp_conn *c, void *ctx)
{
	(void)ctx;
	rnic_tcp_close(c);
}

static void on_closed(struct rnic_tcp_conn *c, void *ctx, int err)
{
	struct exch *e = ctx;
	(void)c;
	e->c = NULL;
	e->err = err;
	publish(&e->closed);
}

static const struct rnic_tcp_ops exch_ops = {
	.accept = on_accept, .connected = on_connected, .recv = on_recv,
	.eof = on_eof, .closed = on_closed,
};

struct connect_req {
	struct rnic_addr ip;
	uint16_t port;
	int rc;
};

static void do_connect(struct rnic_worker *w, void *arg)
{
	struct connect_req *r = arg;
	ex.w = w;
	r->rc = rnic_tcp_connect_addr(w, &r->ip, r->port, &exch_ops, &ex, &ex.c);
}

/* Server: send our record if the client is still there. */
static void do_send_rec(struct rnic_worker *w, void *arg)
{
	struct exch *e = arg;
	(void)w;
	if (e->c == NULL)
		return;
	int rc = send_bytes(e->c, e->out, PP_REC_LEN);
	if (rc != 0)
		exch_abort(e, rc);
}

/* Server: drop the client when our QP cannot be connected (rc_pingpong
 * closes without answering). */
static void do_abort(struct rnic_worker *w, void *arg)
{
	struct exch *e = arg;
	(void)w;
	if (e->c != NULL)
		exch_abort(e, -ECONNABORTED);
}

/* --- application side ---------------------------------------------------- */

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/*
 * Wait until @p flag is published, the connection closes, a stop is
 * requested or @p timeout_s passes (0: no limit).
 * @return 0 when the flag came, -EPIPE closed, -EINTR stop, -ETIMEDOUT.
 */
static int wait_for(int *flag, double timeout_s)
{
	double t_end = now_s() + timeout_s;
	for (;;) {
		if (seen(flag))
			return 0;
		if (seen(&ex.closed))
			return -EPIPE;
		if (rnic_stop_requested())
			return -EINTR;
		if (timeout_s > 0 && now_s() > t_end)
			return -ETIMEDOUT;
		usleep(1000);
	}
}

/* The reason a wait failed, for messages. */
static const char *why(int rc)
{
	if (rc == -EPIPE)
		return strerror(ex.err ? -ex.err : ECONNRESET);
	return strerror(-rc);
}

static int parse_peer(struct pp_dest *rem, char *err, size_t errlen)
{
	if (pp_dest_parse(ex.in, PP_REC_LEN, rem) != 0) {
		char shown[PP_REC_LEN];
		for (size_t i = 0; i < PP_REC_LEN - 1; i++)
			shown[i] = ex.in[i] >= 0x20 && ex.in[i] < 0x7f ? ex.in[i] : '?';
		shown[PP_REC_LEN - 1] = '\0';
		snprintf(err, errlen, "the peer's address record is not LID:QPN:PSN:GID: '%s'",
			 shown);
		return -EPROTO;
	}
	return 0;
}

int pp_exch_client(struct rnic_stack *st, const struct rnic_addr *ip, uint16_t port,
		   const struct pp_dest *mine, struct pp_dest *rem,
		   char *err, size_t errlen)
{
	struct connect_req r = { .ip = *ip, .port = port };

	memset(&ex, 0, sizeof(ex));
	pp_dest_format(mine, ex.out);
	int rc = rnic_worker_call_sync(rnic_stack_worker(st, 0), do_connect, &r);
	if (rc == 0)
		rc = r.rc;
	if (rc == 0)
		rc = wait_for(&ex.have_rec, EXCH_TIMEOUT_S);
	if (rc != 0) {
		char a[RNIC_ADDRSTRLEN];
		rnic_addr_str(ip, a, sizeof(a));
		snprintf(err, errlen, ip->family == RNIC_AF_INET6 ? "Couldn't connect to [%s]:%u: %s"
								 : "Couldn't connect to %s:%u: %s",
			 a, port, why(rc));
		return rc;
	}
	return parse_peer(rem, err, errlen);
}

int pp_exch_server(struct rnic_stack *st, uint16_t port,
		   const struct pp_dest *mine, struct pp_dest *rem,
		   pp_connect_fn connect, void *arg, char *err, size_t errlen)
{
	memset(&ex, 0, sizeof(ex));
	ex.server = true;
	pp_dest_format(mine, ex.out);
	int rc = rnic_tcp_listen(st, port, &exch_ops, &ex, 1);
	if (rc != 0) {
		snprintf(err, errlen, "Couldn't listen to port %u: %s", port, strerror(-rc));
		return rc;
	}
	rc = wait_for(&ex.accepted, 0);
	rnic_tcp_unlisten(st, port);
	if (rc == 0)
		rc = wait_for(&ex.have_rec, EXCH_TIMEOUT_S);
	if (rc != 0) {
		snprintf(err, errlen, "Couldn't read remote address: %s", why(rc));
		return rc;
	}
	rc = parse_peer(rem, err, errlen);
	if (rc != 0)
		return rc;
	if (connect(rem, arg) != 0) {
		snprintf(err, errlen, "Couldn't connect to remote QP");
		rnic_worker_call_sync(ex.w, do_abort, &ex);
		return -EPROTO;
	}
	rnic_worker_call_sync(ex.w, do_send_rec, &ex);
	rc = wait_for(&ex.got_done, EXCH_TIMEOUT_S);
	if (rc != 0) {
		snprintf(err, errlen, "Couldn't send/recv local address: %s", why(rc));
		return rc;
	}
	return 0;
}
