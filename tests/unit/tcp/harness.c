/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The TCB harness (see harness.h) and the stubs that stand in for lib/net
 * and the engine: output capture, routing, flow ownership, registration.
 */
#include <errno.h>
#include <malloc.h>
#include <string.h>

#include <rte_ip.h>
#include <rte_malloc.h>
#include <rte_tcp.h>

#include "net/ipv6.h"
#include "net/net.h"
#include "harness.h"

struct h_node h_a, h_b;
uint64_t h_now;
struct rte_mempool *h_pool;

extern const struct rnic_proto_ops rnic_tcp_proto;

/* --- stubs -------------------------------------------------------------- */

static struct h_node *node_of(const struct rnic_worker *w)
{
	return w == &h_a.w ? &h_a : &h_b;
}

/* Capture instead of sending: prepend the IPv4 header lib/net would write. */
int rnic_net_output_ipv4(struct rnic_worker *w, struct rnic_port *p,
			 struct rte_mbuf *m, uint32_t dst_ip, uint8_t proto)
{
	struct h_node *n = node_of(w);
	uint32_t l4 = rte_pktmbuf_pkt_len(m);
	struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)rte_pktmbuf_prepend(m, sizeof(*ip));

	if (ip == NULL || n->n_out == H_OUT_MAX) {
		rte_pktmbuf_free(m);
		return -ENOBUFS;
	}
	memset(ip, 0, sizeof(*ip));
	ip->version_ihl = RTE_IPV4_VHL_DEF;
	ip->total_length = rte_cpu_to_be_16((uint16_t)(l4 + sizeof(*ip)));
	ip->time_to_live = 64;
	ip->next_proto_id = proto;
	ip->src_addr = rte_cpu_to_be_32(p->ip);
	ip->dst_addr = rte_cpu_to_be_32(dst_ip);
	ip->hdr_checksum = rte_ipv4_cksum(ip);
	m->l2_len = 0;
	m->l3_len = sizeof(*ip);
	m->ol_flags = 0;
	n->out[n->n_out++] = m;
	n->out_total++;
	return 0;
}

/* The stateless replies of the SYN stage: captured like every frame (the
 * harness has no Ethernet layer to answer to). */
int rnic_net_reply_ipv4(struct rnic_worker *w, struct rnic_port *p, struct rte_mbuf *m,
			uint32_t src_ip, uint32_t dst_ip, uint8_t proto,
			const struct rte_ether_addr *l2_dst)
{
	(void)src_ip;
	(void)l2_dst;
	return rnic_net_output_ipv4(w, p, m, dst_ip, proto);
}

struct rnic_port *rnic_net_route(struct rnic_stack *st, uint32_t dst_ip,
				 uint32_t *next_hop)
{
	*next_hop = dst_ip;
	return st->ports[0];
}

unsigned h_owner_mod;

/* One worker, or with h_owner_mod set, a steering that depends on the
 * local port only (enough to check how active opens choose it). */
unsigned rnic_flow_owner(const struct rnic_stack *st, uint32_t src_ip,
			 uint32_t dst_ip, uint16_t src_port, uint16_t dst_port)
{
	(void)st; (void)src_ip; (void)dst_ip; (void)src_port;
	return h_owner_mod ? rte_be_to_cpu_16(dst_port) % h_owner_mod : 0;
}

/* IPv6: the harness's nodes speak IPv4 (TCP over IPv6 runs end to end in
 * tests/integration/tcp/test_tcp_ipv6.c); these stand in for lib/net's. */
int rnic_net_output_ipv6(struct rnic_worker *w, struct rnic_port *p, struct rte_mbuf *m,
			 const uint8_t *src, const uint8_t dst[16], uint8_t proto,
			 uint8_t tclass)
{
	(void)w; (void)p; (void)src; (void)dst; (void)proto; (void)tclass;
	rte_pktmbuf_free(m);
	return -EHOSTUNREACH;
}

int rnic_net_reply_ipv6(struct rnic_worker *w, struct rnic_port *p, struct rte_mbuf *m,
			const uint8_t src[16], const uint8_t dst[16], uint8_t proto,
			const struct rte_ether_addr *l2_dst)
{
	(void)l2_dst;
	return rnic_net_output_ipv6(w, p, m, src, dst, proto, 0);
}

struct rnic_port *rnic_net_route6(struct rnic_stack *st, const uint8_t dst[16])
{
	(void)st; (void)dst;
	return NULL;
}

int rnic_port_ip6_src(const struct rnic_port *p, const uint8_t dst[16], uint8_t src[16])
{
	(void)p; (void)dst; (void)src;
	return -EADDRNOTAVAIL;
}

unsigned rnic_flow_owner6(const struct rnic_stack *st, const uint8_t src[16],
			  const uint8_t dst[16], uint16_t src_port, uint16_t dst_port)
{
	(void)st; (void)src; (void)dst; (void)src_port; (void)dst_port;
	return 0;
}

int rnic_stack_register_ip_proto(struct rnic_stack *st, uint8_t proto,
				 const struct rnic_l4_handler *h)
{
	st->ip_proto[proto] = *h;
	return 0;
}

void tcp_telemetry_init(void)
{
}

/* lib/tcp's rte_free() and free() go through here (-Wl,--wrap=rte_free,
 * --wrap=free; TCBs come from the C heap, common/objalloc.h): freed
 * memory is poisoned, so a use after free reads nonsense and fails
 * loudly. */
void __real_rte_free(void *p);
void __wrap_rte_free(void *p);
void __wrap_rte_free(void *p)
{
	size_t sz;
	if (p != NULL && rte_malloc_validate(p, &sz) == 0)
		memset(p, 0xa5, sz);
	__real_rte_free(p);
}

void __real_free(void *p);
void __wrap_free(void *p);
void __wrap_free(void *p)
{
	if (p != NULL)
		memset(p, 0xa5, malloc_usable_size(p));
	__real_free(p);
}

/* --- nodes ---------------------------------------------------------------- */

int h_global_init(void)
{
	h_pool = rte_pktmbuf_pool_create("h_pool", 16383, 256, 0,
					 RTE_MBUF_DEFAULT_BUF_SIZE, SOCKET_ID_ANY);
	return h_pool ? 0 : -ENOMEM;
}

static int node_init(struct h_node *n, unsigned id, uint32_t ip)
{
	memset(n, 0, sizeof(*n));
	n->st.id = id;
	n->st.n_workers = 1;
	n->st.workers[0] = &n->w;
	n->st.n_ports = 1;
	n->st.ports[0] = &n->port;
	n->w.st = &n->st;
	n->w.now_tsc = h_now;
	rnic_timer_wheel_init(&n->w.timers, h_now);
	n->port.st = &n->st;
	n->port.ip = ip;
	n->port.netmask = 0xffffff00u;
	n->port.mtu = 1500;
	n->port.pool = h_pool;
	if (rnic_tcp_proto.stack_init(&n->st) != 0)
		return -1;
	return rnic_tcp_proto.worker_init(&n->w);
}

static unsigned in_use_before;

int h_setup(void **state)
{
	(void)state;
	in_use_before = rte_mempool_in_use_count(h_pool);
	h_owner_mod = 0;
	h_now = rte_get_tsc_cycles();
	if (node_init(&h_a, 100, H_IP_A) != 0 || node_init(&h_b, 101, H_IP_B) != 0)
		return -1;
	return 0;
}

static struct rte_mbuf **dbg_all;
static unsigned dbg_n;
static void dbg_collect(struct rte_mempool *mp, void *opaque, void *obj, unsigned idx)
{
	(void)mp; (void)opaque; (void)idx;
	dbg_all[dbg_n++] = obj;
}
/* Debug aid: show mbufs still out of the pool. */
static void dump_leaks(void)
{
	unsigned size = h_pool->size;
	dbg_all = calloc(size, sizeof(*dbg_all));
	dbg_n = 0;
	rte_mempool_obj_iter(h_pool, dbg_collect, NULL);
	struct rte_mbuf **got = calloc(size, sizeof(*got));
	unsigned ng = 0;
	struct rte_mbuf *x;
	while ((x = rte_pktmbuf_alloc(h_pool)) != NULL)
		got[ng++] = x;
	for (unsigned i = 0; i < dbg_n; i++) {
		bool found = false;
		for (unsigned j = 0; j < ng && !found; j++)
			found = got[j] == dbg_all[i];
		if (!found) {
			struct rte_mbuf *m = dbg_all[i];
			fprintf(stderr, "leaked %p refcnt %u indirect %d data_off %u data_len %u pkt_len %u nb_segs %u next %p\n",
				(void *)m, rte_mbuf_refcnt_read(m), RTE_MBUF_CLONED(m) ? 1 : 0, m->data_off, m->data_len, m->pkt_len, m->nb_segs, (void *)m->next);
			rte_pktmbuf_dump(stderr, m, 64);
		}
	}
	for (unsigned j = 0; j < ng; j++)
		rte_pktmbuf_free(got[j]);
	free(got);
	free(dbg_all);
}

static void node_fini(struct h_node *n)
{
	h_flush(n);
	rnic_tcp_proto.worker_fini(&n->w);
	rnic_tcp_proto.stack_fini(&n->st);
}

int h_teardown(void **state)
{
	(void)state;
	node_fini(&h_a);
	node_fini(&h_b);
	/* every mbuf lib/tcp took or made is back in the pool */
	unsigned in_use = rte_mempool_in_use_count(h_pool);
	if (in_use != in_use_before) {
		fprintf(stderr, "LEAK: %u mbufs in use after teardown, %u before\n",
			in_use, in_use_before);
		if (getenv("TCB_DUMP_LEAKS"))
			dump_leaks();
		return -1;
	}
	return 0;
}

struct rnic_tcp_stats h_stats(struct h_node *n)
{
	struct rnic_tcp_stats s;
	rnic_tcp_stats(&n->st, &s);
	return s;
}

/* --- segments ------------------------------------------------------------- */

void h_parse(const struct rte_mbuf *m, struct h_seg *s)
{
	uint8_t hdr[20 + 60];
	const struct rte_ipv4_hdr *ip = rte_pktmbuf_read(m, 0, 20, hdr);
	uint32_t tot = rte_be_to_cpu_16(ip->total_length);
	const struct rte_tcp_hdr *th = rte_pktmbuf_read(m, 20, 20, hdr + 20);
	uint32_t hl = (th->data_off >> 4) * 4u;

	memset(s, 0, sizeof(*s));
	s->flags = th->tcp_flags;
	s->seq = rte_be_to_cpu_32(th->sent_seq);
	s->ack = rte_be_to_cpu_32(th->recv_ack);
	s->wnd = rte_be_to_cpu_16(th->rx_win);
	s->sport = rte_be_to_cpu_16(th->src_port);
	s->dport = rte_be_to_cpu_16(th->dst_port);
	s->len = tot - 20 - hl;
	const uint8_t *o = rte_pktmbuf_read(m, 40, hl - 20, hdr + 40);
	s->opts_rc = tcp_opts_parse(o, hl - 20, s->flags & RTE_TCP_SYN_FLAG, &s->o);
}

struct rte_mbuf *h_take(struct h_node *n)
{
	if (n->n_out == 0)
		return NULL;
	struct rte_mbuf *m = n->out[0];
	memmove(&n->out[0], &n->out[1], (n->n_out - 1) * sizeof(n->out[0]));
	n->n_out--;
	return m;
}

unsigned h_flush(struct h_node *n)
{
	unsigned k = n->n_out;
	for (unsigned i = 0; i < k; i++)
		rte_pktmbuf_free(n->out[i]);
	n->n_out = 0;
	return k;
}

void h_input(struct h_node *n, struct rte_mbuf *m)
{
	n->w.now_tsc = h_now;
	tcp_input(&n->w, &n->port, m);
}

void h_advance(uint64_t us)
{
	h_now += us * (rte_get_tsc_hz() / 1000000);
	h_a.w.now_tsc = h_now;
	h_b.w.now_tsc = h_now;
	rnic_timer_run(&h_a.w.timers, h_now);
	rnic_timer_run(&h_b.w.timers, h_now);
}

/* Move what @p from captured (as of now) to @p to. */
static unsigned move(struct h_node *from, struct h_node *to, h_drop_fn drop,
		     void *arg, unsigned *idx)
{
	unsigned k = from->n_out, moved = 0;
	struct rte_mbuf *batch[H_OUT_MAX];

	memcpy(batch, from->out, k * sizeof(batch[0]));
	from->n_out = 0;
	for (unsigned i = 0; i < k; i++) {
		struct h_seg s;
		h_parse(batch[i], &s);
		if (drop && drop(&s, (*idx)++, arg)) {
			rte_pktmbuf_free(batch[i]);
			continue;
		}
		h_input(to, batch[i]);
		moved++;
	}
	return moved;
}

unsigned h_pump(h_drop_fn a2b, h_drop_fn b2a, void *arg, unsigned max_rounds)
{
	unsigned total = 0, quiet = 0, ia = 0, ib = 0;

	for (unsigned r = 0; r < max_rounds && quiet < 3; r++) {
		unsigned k = move(&h_a, &h_b, a2b, arg, &ia);
		k += move(&h_b, &h_a, b2a, arg, &ib);
		total += k;
		if (h_a.n_out || h_b.n_out) {
			quiet = 0;
			h_advance(20);
			continue;
		}
		/* nothing in flight: let the delayed-ACK timers run */
		h_advance(1000);
		quiet = (h_a.n_out || h_b.n_out) ? 0 : quiet + 1;
	}
	return total;
}

struct rte_mbuf *h_craft(uint32_t saddr, uint32_t daddr, uint16_t sport,
			 uint16_t dport, uint32_t seq, uint32_t ack, uint8_t flags,
			 uint16_t wnd, const uint8_t *opts, size_t olen,
			 const void *data, size_t dlen)
{
	size_t opad = (olen + 3) & ~(size_t)3;
	struct rte_mbuf *m = rte_pktmbuf_alloc(h_pool);
	if (m == NULL)
		return NULL;
	uint8_t *p = (uint8_t *)rte_pktmbuf_append(m, (uint16_t)(40 + opad + dlen));
	if (p == NULL) {
		rte_pktmbuf_free(m);
		return NULL;
	}
	struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)p;
	struct rte_tcp_hdr *th = (struct rte_tcp_hdr *)(p + 20);
	memset(p, 0, 40 + opad);
	ip->version_ihl = RTE_IPV4_VHL_DEF;
	ip->total_length = rte_cpu_to_be_16((uint16_t)(40 + opad + dlen));
	ip->time_to_live = 64;
	ip->next_proto_id = IPPROTO_TCP;
	ip->src_addr = rte_cpu_to_be_32(saddr);
	ip->dst_addr = rte_cpu_to_be_32(daddr);
	th->src_port = rte_cpu_to_be_16(sport);
	th->dst_port = rte_cpu_to_be_16(dport);
	th->sent_seq = rte_cpu_to_be_32(seq);
	th->recv_ack = rte_cpu_to_be_32(ack);
	th->data_off = (uint8_t)(((20 + opad) / 4) << 4);
	th->tcp_flags = flags;
	th->rx_win = rte_cpu_to_be_16(wnd);
	if (olen)
		memcpy(th + 1, opts, olen);
	if (dlen)
		memcpy(p + 40 + opad, data, dlen);
	th->cksum = rte_ipv4_udptcp_cksum(ip, th);
	m->l2_len = 0;
	m->l3_len = 20;
	return m;
}

struct rte_mbuf *h_craft_to(const struct rnic_tcp_conn *c, uint32_t seq, uint32_t ack,
			    uint8_t flags, const struct tcp_opts *o,
			    const void *data, size_t dlen)
{
	uint8_t ob[40];
	size_t olen = o ? tcp_opts_build(ob, o, flags & RTE_TCP_SYN_FLAG) : 0;
	return h_craft(rte_be_to_cpu_32(tcp_key_r4(&c->key)), rte_be_to_cpu_32(tcp_key_l4(&c->key)),
		       rte_be_to_cpu_16(c->key.rport), rte_be_to_cpu_16(c->key.lport),
		       seq, ack, flags, 65535, ob, olen, data, dlen);
}

/* --- application ---------------------------------------------------------- */

static void *app_accept(struct rnic_tcp_conn *c, void *listen_ctx)
{
	struct h_app *a = listen_ctx;
	if (a->refuse)
		return NULL;
	a->c = c;
	a->accepts++;
	if (a->hold_on_accept)
		rnic_tcp_hold(c, true);
	if (a->abort_in_accept) {
		rnic_tcp_abort(c);
		a->c = NULL;
	}
	return a;
}

static void app_connected(struct rnic_tcp_conn *c, void *ctx)
{
	struct h_app *a = ctx;
	a->c = c;
	a->connects++;
}

static void app_recv(struct rnic_tcp_conn *c, void *ctx, struct rte_mbuf *m)
{
	struct h_app *a = ctx;
	a->recv_calls++;
	for (struct rte_mbuf *s = m; s; s = s->next) {
		size_t n = s->data_len;
		if (a->got + n <= a->cap)
			memcpy(a->buf + a->got, rte_pktmbuf_mtod(s, void *), n);
		a->got += n;
	}
	rte_pktmbuf_free(m);
	if (a->abort_in_recv)
		rnic_tcp_abort(c);
	else if (a->close_in_recv && !a->closed_once) {
		a->closed_once = true;
		rnic_tcp_close(c);
	}
}

static void app_sent(struct rnic_tcp_conn *c, void *ctx)
{
	struct h_app *a = ctx;
	a->sent_calls++;
	if (a->abort_in_sent)
		rnic_tcp_abort(c);
	else if (a->refill && rnic_tcp_send_space(c) >= a->refill &&
		 h_send(c, a->refill_off, a->refill) == 0)
		a->refill_off += a->refill;
}

static void app_eof(struct rnic_tcp_conn *c, void *ctx)
{
	(void)c;
	((struct h_app *)ctx)->eofs++;
}

static void app_closed(struct rnic_tcp_conn *c, void *ctx, int err)
{
	(void)c;
	struct h_app *a = ctx;
	a->closes++;
	a->closed_err = err;
	a->c = NULL;
}

const struct rnic_tcp_ops h_app_ops = {
	.accept = app_accept, .connected = app_connected, .recv = app_recv,
	.sent = app_sent, .eof = app_eof, .closed = app_closed,
};

void h_app_init(struct h_app *a, size_t cap)
{
	memset(a, 0, sizeof(*a));
	a->cap = cap;
	a->buf = cap ? malloc(cap) : NULL;
	a->closed_err = 1;
}

void h_app_fini(struct h_app *a)
{
	free(a->buf);
	a->buf = NULL;
}

void h_pattern(uint8_t *p, size_t off, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		size_t x = off + i;
		p[i] = (uint8_t)(x ^ (x >> 8) ^ (x >> 16) * 31);
	}
}

bool h_pattern_ok(const uint8_t *p, size_t off, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		size_t x = off + i;
		if (p[i] != (uint8_t)(x ^ (x >> 8) ^ (x >> 16) * 31))
			return false;
	}
	return true;
}

int h_send(struct rnic_tcp_conn *c, size_t off, size_t len)
{
	struct rte_mbuf *head = NULL, *tail = NULL;
	size_t done = 0;

	while (done < len) {
		struct rte_mbuf *m = rte_pktmbuf_alloc(h_pool);
		if (m == NULL) {
			rte_pktmbuf_free(head);
			return -ENOMEM;
		}
		uint16_t n = (uint16_t)RTE_MIN(len - done, (size_t)2048);
		h_pattern((uint8_t *)rte_pktmbuf_append(m, n), off + done, n);
		done += n;
		if (head == NULL) {
			head = tail = m;
		} else {
			tail->next = m;
			tail = m;
			head->nb_segs++;
			head->pkt_len += n;
		}
	}
	int rc = rnic_tcp_send(c, head);
	if (rc != 0)
		rte_pktmbuf_free(head);
	return rc;
}

struct rnic_tcp_conn *h_connect(struct h_app *ca, struct h_app *sb, uint16_t port)
{
	struct rnic_tcp_conn *c;
	if (rnic_tcp_listen(&h_b.st, port, &h_app_ops, sb, 16) != 0)
		return NULL;
	if (rnic_tcp_connect(&h_a.w, H_IP_B, port, &h_app_ops, ca, &c) != 0)
		return NULL;
	h_pump(NULL, NULL, NULL, 100);
	return c->state == TCP_ESTABLISHED && sb->c ? c : NULL;
}
