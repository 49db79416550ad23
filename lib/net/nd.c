/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Neighbour discovery (RFC 4861): neighbour solicitations answered for our
 * addresses, advertisements taken into the cache with the rules of section
 * 7.2.5, the reachability states of section 7.3 (INCOMPLETE, REACHABLE,
 * STALE, DELAY, PROBE) with the protocol's timers, frames held while an
 * address resolves; duplicate address detection of our own addresses (RFC
 * 4862 5.4, optimistic, RFC 4429) and unsolicited advertisements when a
 * port starts or takes over another's addresses (failover).
 */
#include <errno.h>
#include <netinet/icmp6.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_ip.h>
#include <rte_malloc.h>
#include <rte_random.h>

#include "engine/stack.h"
#include "net/nd.h"
#include "net/net_internal.h"
#include "port/port.h"

#define CNT(t, f)  __atomic_fetch_add(&(t)->f, 1, __ATOMIC_RELAXED)
#define LOAD(t, f) __atomic_load_n(&(t)->f, __ATOMIC_RELAXED)

#define ND_HOPS 255              /* RFC 4861: every ND message, checked on receipt */
#define ND_OPT_SLLA 1
#define ND_OPT_TLLA 2
#define ND_OPT_NONCE 14          /* RFC 7527 */
#define NA_FLAG_ROUTER    0x80
#define NA_FLAG_SOLICITED 0x40
#define NA_FLAG_OVERRIDE  0x20

/* NS and NA share this layout: type, code, checksum, 4 bytes (NA flags in
 * the first), the target address; options follow. */
struct nd_msg {
	uint8_t type, code;
	rte_be16_t cksum;
	uint8_t flags, rsvd[3];
	uint8_t target[16];
} __attribute__((packed));

struct nd_lla_opt {
	uint8_t type, len;           /* len in units of 8 bytes: 1 */
	uint8_t mac[RTE_ETHER_ADDR_LEN];
};

static const uint8_t all_nodes[16] = { 0xff, 0x02, [15] = 0x01 };

static inline uint64_t us_to_tsc(uint64_t us)
{
	return us * (rte_get_tsc_hz() / 1000000);
}

/* --------------------------------------------------------------- the port */

/* Receive the groups of the port's addresses: all-nodes and each
 * solicited-node group (33:33:ff:..). A PMD without a multicast list gets
 * all-multicast; eth.c filters in software either way. */
static void nd_join_groups(struct rnic_port *p)
{
	struct rte_ether_addr mc[2 + RNIC_PORT_IP6_MAX];
	uint32_t n = 0;
	uint8_t sn[16];

	rnic_ip6_mcast_mac(all_nodes, &mc[n++]);
	for (unsigned i = 0; i < p->n_ip6; i++) {
		rnic_ip6_solicited_node(p->ip6[i], sn);
		rnic_ip6_mcast_mac(sn, &mc[n]);
		bool dup = false;
		for (uint32_t k = 0; k < n; k++)
			dup |= rte_is_same_ether_addr(&mc[k], &mc[n]);
		if (!dup)
			n++;
	}
	if (rte_eth_dev_set_mc_addr_list(p->port_id, mc, n) != 0)
		rte_eth_allmulticast_enable(p->port_id);
}

int rnic_nd_table_create(struct rnic_port *p)
{
	p->nd = rte_zmalloc("rnic_nd", sizeof(*p->nd), RTE_CACHE_LINE_SIZE);
	if (p->nd == NULL)
		return -ENOMEM;
	rte_rwlock_init(&p->nd->lock);
	p->nd->seed = (uint32_t)rte_rand();
	uint64_t nonce = rte_rand();
	memcpy(p->nd->dad_nonce, &nonce, sizeof(p->nd->dad_nonce));
	p->n_ip6 = 0;
	/* IPv6 is on where the configuration gives an IPv6 address; a port
	 * without one stays IPv4-only (no link-local address, no ND) */
	if (p->cfg.n_ip6 == 0)
		return 0;
	rnic_addr6_link_local(p->mac.addr_bytes, p->ip6[0]);
	p->ip6_prefix[0] = 64;
	p->ip6_state[0] = RNIC_IP6_OPTIMISTIC;
	for (unsigned i = 0; i < p->cfg.n_ip6 && i < RNIC_PORT_IP6_MAX; i++) {
		memcpy(p->ip6[1 + i], p->cfg.ip6[i].addr, 16);
		p->ip6_prefix[1 + i] = p->cfg.ip6[i].prefix_len;
		p->ip6_state[1 + i] = RNIC_IP6_OPTIMISTIC;
	}
	p->n_ip6 = 1 + p->cfg.n_ip6;
	nd_join_groups(p);
	return 0;
}

static void nd_entry_clear(struct nd_entry *e)
{
	for (unsigned i = 0; i < e->n_pending; i++)
		rte_pktmbuf_free(e->pending[i]);
	memset(e, 0, sizeof(*e));
}

void rnic_nd_table_free(struct rnic_port *p)
{
	if (p->nd == NULL)
		return;
	for (unsigned i = 0; i < RNIC_ND_ENTRIES; i++)
		nd_entry_clear(&p->nd->e[i]);
	rte_free(p->nd);
	p->nd = NULL;
}

/* ------------------------------------------------------------- the cache */

/* The first entry of @p ip's set. */
static struct nd_entry *nd_set(struct rnic_nd_table *t, const uint8_t ip[16])
{
	return &t->e[rnic_neigh_set(rnic_neigh_hash(ip, 16, t->seed)) * RNIC_NEIGH_WAYS];
}

/* Entry for @p ip, or NULL: a look at its set. Caller holds the lock. */
static struct nd_entry *nd_find(struct rnic_nd_table *t, const uint8_t ip[16])
{
	struct nd_entry *set = nd_set(t, ip);
	for (unsigned i = 0; i < RNIC_NEIGH_WAYS; i++)
		if (set[i].state != ND_FREE && !memcmp(set[i].ip, ip, 16))
			return &set[i];
	return NULL;
}

/* Hand over the frames @p e holds (into @p out, RNIC_ND_PENDING long).
 * Caller holds the write lock. @return how many. */
static unsigned nd_take_pending(struct rnic_nd_table *t, struct nd_entry *e,
				struct rte_mbuf **out)
{
	unsigned n = e->n_pending;
	memcpy(out, e->pending, n * sizeof(out[0]));
	e->n_pending = 0;
	t->n_held -= n;
	return n;
}

static void nd_drop_pending(struct rnic_worker *w, struct rnic_nd_table *t, struct nd_entry *e)
{
	struct rte_mbuf *m[RNIC_ND_PENDING];
	unsigned n = nd_take_pending(t, e, m);
	for (unsigned i = 0; i < n; i++)
		rnic_worker_drop(w, RNIC_DROP_ND_UNRESOLVED, m[i]);
}

/* What @p e is to the replacement policy (neigh.h). */
static enum rnic_neigh_class nd_class(const struct nd_entry *e)
{
	switch (e->state) {
	case ND_FREE:
		return RNIC_NEIGH_FREE;
	case ND_INCOMPLETE:   /* learnt: a resolution a peer's message asked for */
		return e->learnt ? RNIC_NEIGH_LEARNT : RNIC_NEIGH_RESOLVING;
	case ND_REACHABLE:
	case ND_STALE:
		return e->learnt ? RNIC_NEIGH_LEARNT : RNIC_NEIGH_IDLE;
	default:   /* DELAY, PROBE: in use */
		return RNIC_NEIGH_BUSY;
	}
}

/* A slot for a new entry for @p ip wanted for @p cause, by neigh.h's
 * policy: its frames dropped, cleared, the address set. NULL: none may be
 * taken. Caller holds the write lock. */
static struct nd_entry *nd_slot(struct rnic_worker *w, struct rnic_nd_table *t,
				const uint8_t ip[16], enum rnic_neigh_cause cause)
{
	struct nd_entry *set = nd_set(t, ip);
	enum rnic_neigh_class cls[RNIC_NEIGH_WAYS];
	uint64_t stamp[RNIC_NEIGH_WAYS];
	for (unsigned i = 0; i < RNIC_NEIGH_WAYS; i++) {
		cls[i] = nd_class(&set[i]);
		stamp[i] = set[i].state_tsc;
	}
	int k = rnic_neigh_pick(cls, stamp, RNIC_NEIGH_WAYS, cause);
	if (k < 0)
		return NULL;
	struct nd_entry *v = &set[k];
	nd_drop_pending(w, t, v);
	memset(v, 0, sizeof(*v));
	memcpy(v->ip, ip, 16);
	return v;
}

/* -------------------------------------------------------------- messages */

/* An NS or NA for @p target with a link-layer address option of @p opt
 * (0: none), in a new mbuf with headroom for IPv6 and Ethernet. */
static struct rte_mbuf *nd_build(struct rnic_port *p, uint8_t type, uint8_t flags,
				 const uint8_t target[16], uint8_t opt)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(p->pool);
	if (m == NULL)
		return NULL;
	uint16_t len = (uint16_t)(sizeof(struct nd_msg) + (opt ? sizeof(struct nd_lla_opt) : 0));
	struct nd_msg *nm = (struct nd_msg *)rte_pktmbuf_append(m, len);
	if (nm == NULL) {
		rte_pktmbuf_free(m);
		return NULL;
	}
	memset(nm, 0, len);
	nm->type = type;
	nm->flags = flags;
	memcpy(nm->target, target, 16);
	if (opt) {
		struct nd_lla_opt *o = (struct nd_lla_opt *)(nm + 1);
		o->type = opt;
		o->len = 1;
		memcpy(o->mac, p->mac.addr_bytes, RTE_ETHER_ADDR_LEN);
	}
	return m;
}

/* Checksum and send an ND message from @p src to @p dst (to @p l2_dst, or
 * the group of multicast @p dst). */
static void nd_send(struct rnic_worker *w, struct rnic_port *p, struct rte_mbuf *m,
		    const uint8_t src[16], const uint8_t dst[16],
		    const struct rte_ether_addr *l2_dst)
{
	struct nd_msg *nm = rte_pktmbuf_mtod(m, struct nd_msg *);
	nm->cksum = 0;
	nm->cksum = (uint16_t)~rnic_net_l4_cksum6(m, 0, src, dst, IPPROTO_ICMPV6,
						  rte_pktmbuf_pkt_len(m));
	rnic_ipv6_xmit(w, p, m, src, dst, IPPROTO_ICMPV6, ND_HOPS, l2_dst);
}

static uint8_t nd_override(const struct rnic_port *p, const uint8_t target[16]);

/* A solicitation for @p target: multicast to its solicited-node group
 * (@p l2_dst NULL) or unicast to the cached address (reachability probe).
 * From an optimistic address it carries no source link-layer address
 * option (RFC 4429 2.2 and 3.3: it would overwrite the cache entry of the
 * node that may own the address); the target then resolves us itself. */
static void nd_send_ns(struct rnic_worker *w, struct rnic_port *p, const uint8_t target[16],
		       const struct rte_ether_addr *l2_dst)
{
	uint8_t src[16], dst[16];
	if (rnic_port_ip6_src(p, target, src) != 0)
		return;
	uint8_t opt = nd_override(p, src) == 0 ? 0 : ND_OPT_SLLA;
	struct rte_mbuf *m = nd_build(p, ND_NEIGHBOR_SOLICIT, 0, target, opt);
	if (m == NULL) {
		w->drops[RNIC_DROP_NO_MBUF]++;
		return;
	}
	if (l2_dst != NULL)
		memcpy(dst, target, 16);
	else
		rnic_ip6_solicited_node(target, dst);
	CNT(p->nd, ns_out);
	nd_send(w, p, m, src, dst, l2_dst);
}

/* An advertisement of @p target (ours) to @p dst. */
static void nd_send_na(struct rnic_worker *w, struct rnic_port *p, const uint8_t target[16],
		       const uint8_t dst[16], uint8_t flags, const struct rte_ether_addr *l2_dst)
{
	struct rte_mbuf *m = nd_build(p, ND_NEIGHBOR_ADVERT, flags, target, ND_OPT_TLLA);
	if (m == NULL) {
		w->drops[RNIC_DROP_NO_MBUF]++;
		return;
	}
	CNT(p->nd, na_out);
	nd_send(w, p, m, target, dst, l2_dst);
}

static void nd_resolve(struct rnic_worker *w, struct rnic_port *p, struct rte_mbuf *m,
		       const uint8_t ip[16], enum rnic_neigh_cause cause);

/* A solicited advertisement of @p target to @p dst whose link-layer address
 * we do not know (a unicast solicitation without the source option): RFC
 * 4861 7.2.4 has the node resolve it first, so the advertisement is held
 * while a multicast solicitation asks; the entry is made as unsolicited
 * traffic's are (neigh.h), so such solicitations cannot flush the cache. */
static void nd_send_na_resolve(struct rnic_worker *w, struct rnic_port *p,
			       const uint8_t target[16], const uint8_t dst[16], uint8_t flags)
{
	struct rte_mbuf *m = nd_build(p, ND_NEIGHBOR_ADVERT, flags, target, ND_OPT_TLLA);
	if (m == NULL) {
		w->drops[RNIC_DROP_NO_MBUF]++;
		return;
	}
	struct nd_msg *nm = rte_pktmbuf_mtod(m, struct nd_msg *);
	nm->cksum = (uint16_t)~rnic_net_l4_cksum6(m, 0, target, dst, IPPROTO_ICMPV6,
						  rte_pktmbuf_pkt_len(m));
	if (rnic_ipv6_prepend(p, m, target, dst, IPPROTO_ICMPV6, ND_HOPS) == NULL) {
		rnic_worker_drop(w, RNIC_DROP_NO_MBUF, m);
		return;
	}
	CNT(p->nd, na_out);
	nd_resolve(w, p, m, dst, RNIC_NEIGH_UNSOLICITED);
}

/* The override flag for an advertisement of @p target: clear while the
 * address is optimistic (RFC 4429 section 3.3: it must not displace a
 * cached entry of the node that may own it), set otherwise. */
static uint8_t nd_override(const struct rnic_port *p, const uint8_t target[16])
{
	for (unsigned i = 0; i < p->n_ip6; i++)
		if (!memcmp(p->ip6[i], target, 16))
			return p->ip6_state[i] == RNIC_IP6_OPTIMISTIC ? 0 : NA_FLAG_OVERRIDE;
	/* another port's: a taken-over address, with its own port's state */
	for (unsigned k = 0; p->st != NULL && k < p->st->n_ports; k++) {
		const struct rnic_port *q = p->st->ports[k];
		for (unsigned i = 0; q != NULL && q != p && i < q->n_ip6; i++)
			if (!memcmp(q->ip6[i], target, 16))
				return q->ip6_state[i] == RNIC_IP6_OPTIMISTIC ? 0 : NA_FLAG_OVERRIDE;
	}
	return NA_FLAG_OVERRIDE;
}

/* DAD probe (RFC 4862 5.4.2): from the unspecified address, no link-layer
 * option; the port's nonce option (RFC 7527) tells our own probe, looped
 * back to us, from another node's. */
static void nd_send_dad(struct rnic_worker *w, struct rnic_port *p, const uint8_t target[16])
{
	static const uint8_t unspec[16];
	uint8_t dst[16];
	struct rte_mbuf *m = nd_build(p, ND_NEIGHBOR_SOLICIT, 0, target, 0);
	uint8_t *o = m != NULL ? (uint8_t *)rte_pktmbuf_append(m, 8) : NULL;
	if (o == NULL) {
		rte_pktmbuf_free(m);
		w->drops[RNIC_DROP_NO_MBUF]++;
		return;
	}
	o[0] = ND_OPT_NONCE;
	o[1] = 1;
	memcpy(o + 2, p->nd->dad_nonce, 6);
	rnic_ip6_solicited_node(target, dst);
	CNT(p->nd, dad_ns_out);
	nd_send(w, p, m, unspec, dst, NULL);
}

void rnic_nd_announce(struct rnic_worker *w, struct rnic_port *p)
{
	struct rnic_nd_table *t = p->nd;
	if (t == NULL || p->n_ip6 == 0)
		return;
	if (!t->dad_started) {
		t->dad_started = true;
		t->dad_start_tsc = rte_rdtsc();
		for (unsigned i = 0; i < p->n_ip6; i++)
			nd_send_dad(w, p, p->ip6[i]);
	}
	/* unsolicited advertisements (RFC 4861 7.2.6), override set but for
	 * optimistic addresses */
	for (unsigned i = 1; i < p->n_ip6; i++)
		if (rnic_port_has_ip6(p, p->ip6[i])) {
			CNT(t, unsolicited_na_out);
			nd_send_na(w, p, p->ip6[i], all_nodes, nd_override(p, p->ip6[i]), NULL);
		}
	for (unsigned k = 0; p->st != NULL && k < p->st->n_ports; k++) {
		struct rnic_port *q = p->st->ports[k];
		if (q == p || q == NULL)
			continue;
		for (unsigned i = 1; i < q->n_ip6; i++)
			if (rnic_port_has_ip6(p, q->ip6[i])) {
				CNT(t, unsolicited_na_out);
				nd_send_na(w, p, q->ip6[i], all_nodes, nd_override(p, q->ip6[i]),
					   NULL);
			}
	}
}

/* One of our addresses found in use by another node (DAD, RFC 4862 5.4.5). */
static void nd_dad_conflict(struct rnic_port *p, const uint8_t target[16])
{
	for (unsigned i = 0; i < p->n_ip6; i++) {
		if (memcmp(p->ip6[i], target, 16) != 0 ||
		    p->ip6_state[i] != RNIC_IP6_OPTIMISTIC)
			continue;
		__atomic_store_n(&p->ip6_state[i], RNIC_IP6_DUPLICATE, __ATOMIC_RELEASE);
		CNT(p->nd, dad_conflicts);
		char buf[RNIC_ADDRSTRLEN];
		struct rnic_addr a = rnic_addr_v6(target);
		fprintf(stderr, "rnic: port %u: %s is in use by another node "
			"(duplicate address detection): not used\n", p->idx,
			rnic_addr_str(&a, buf, sizeof(buf)));
	}
}

/* ---------------------------------------------------------------- receive */

/* The options of an NS or NA that rnic reads. */
struct nd_opts {
	const struct rte_ether_addr *lla;   /* source (NS) or target (NA) link-layer */
	const uint8_t *nonce;               /* a 6-byte nonce (RFC 7527), NS only */
};

/*
 * Validity checks of RFC 4861 7.1.1 / 7.1.2 and the options; @p want_opt is
 * the link-layer option the message may carry. @return 0 with the options
 * in *@p opts (NULL fields when absent), or -1 (malformed).
 */
static int nd_parse(const struct rte_mbuf *m, const struct rte_ipv6_hdr *ip, uint32_t off,
		    uint32_t len, uint8_t want_opt, struct nd_opts *opts)
{
	if (ip->hop_limits != ND_HOPS || len < sizeof(struct nd_msg) ||
	    rte_pktmbuf_data_len(m) < off + len)
		return -1;
	const struct nd_msg *nm = rte_pktmbuf_mtod_offset(m, const struct nd_msg *, off);
	if (nm->code != 0 || rnic_ip6_is_multicast(nm->target))
		return -1;
	const uint8_t *o = (const uint8_t *)(nm + 1);
	uint32_t left = len - (uint32_t)sizeof(*nm);
	opts->lla = NULL;
	opts->nonce = NULL;
	while (left > 0) {
		if (left < 2 || o[1] == 0 || o[1] * 8u > left)
			return -1;
		if (o[0] == want_opt) {
			if (o[1] != 1)
				return -1;
			opts->lla = (const struct rte_ether_addr *)(o + 2);
		} else if (o[0] == ND_OPT_NONCE && o[1] == 1 && want_opt == ND_OPT_SLLA) {
			opts->nonce = o + 2;   /* longer nonces are never ours */
		}
		left -= o[1] * 8u;
		o += o[1] * 8u;
	}
	return 0;
}

/* Send @p n frames that waited for @p mac. */
static void nd_release(struct rnic_worker *w, struct rnic_port *p, struct rte_mbuf **send,
		       unsigned n, const struct rte_ether_addr *mac)
{
	for (unsigned i = 0; i < n; i++) {
		rte_pktmbuf_mtod(send[i], struct rte_ether_hdr *)->dst_addr = *mac;
		rnic_worker_tx(w, p, send[i]);
	}
}

/* Learn @p mac for @p ip as RFC 4861 7.2.3 says for a solicitation's
 * source: a changed address makes a known entry STALE; frames waiting for
 * it go now. A new entry is made only where neigh.h's policy lets
 * unsolicited traffic make one (else counted as create_refused). One look
 * at the set under the read lock settles the common case, a neighbour
 * already known with that address. */
static void nd_learn_stale(struct rnic_worker *w, struct rnic_port *p, const uint8_t ip[16],
			   const struct rte_ether_addr *mac)
{
	struct rnic_nd_table *t = p->nd;
	struct rte_mbuf *send[RNIC_ND_PENDING];
	unsigned n = 0;
	uint64_t now = rte_rdtsc();

	rte_rwlock_read_lock(&t->lock);
	struct nd_entry *e = nd_find(t, ip);
	bool known = e != NULL && e->state != ND_INCOMPLETE &&
		     rte_is_same_ether_addr(&e->mac, mac);
	rte_rwlock_read_unlock(&t->lock);
	if (known)
		return;

	rte_rwlock_write_lock(&t->lock);
	e = nd_find(t, ip);
	if (e == NULL) {
		e = nd_slot(w, t, ip, RNIC_NEIGH_UNSOLICITED);
		if (e == NULL) {
			rte_rwlock_write_unlock(&t->lock);
			CNT(t, create_refused);
			return;
		}
		e->learnt = true;
	}
	if (e->state == ND_FREE || e->state == ND_INCOMPLETE ||
	    !rte_is_same_ether_addr(&e->mac, mac)) {
		e->mac = *mac;
		e->state = ND_STALE;
		e->state_tsc = now;
		e->probes = 0;
	}
	n = nd_take_pending(t, e, send);
	rte_rwlock_write_unlock(&t->lock);
	nd_release(w, p, send, n, mac);
}

/* Is the DAD probe in @p m our own, looped back (RFC 7527 nonce)? */
static bool nd_own_probe(const struct rnic_port *p, const struct nd_opts *o)
{
	return o->nonce != NULL && !memcmp(o->nonce, p->nd->dad_nonce, 6);
}

static void nd_input_ns(struct rnic_worker *w, struct rnic_port *p, struct rte_mbuf *m,
			const struct rte_ipv6_hdr *ip, const struct nd_msg *nm,
			const struct nd_opts *opts)
{
	const struct rte_ether_addr *slla = opts->lla;
	bool unspec = rnic_ip6_is_unspecified(ip->src_addr);
	uint8_t target[16], peer[16];

	memcpy(target, nm->target, 16);
	memcpy(peer, ip->src_addr, 16);
	CNT(p->nd, ns_in);
	if (unspec) {
		/* a DAD probe: only to the solicited-node group, no option */
		uint8_t sn[16];
		rnic_ip6_solicited_node(target, sn);
		if (slla != NULL || memcmp(ip->dst_addr, sn, 16) != 0) {
			rnic_worker_drop(w, RNIC_DROP_ND_MALFORMED, m);
			return;
		}
		if (nd_own_probe(p, opts)) {
			rnic_worker_drop(w, RNIC_DROP_ND_LOOPED, m);
			return;
		}
		/* someone else probes an address we are still probing */
		nd_dad_conflict(p, target);
	}
	if (!rnic_port_has_ip6(p, target)) {
		rnic_worker_drop(w, RNIC_DROP_ND_NOT_FOR_US, m);
		return;
	}
	/* the sender is learnt whether or not it gets an answer now */
	if (slla != NULL)
		nd_learn_stale(w, p, peer, slla);
	if (!rnic_neigh_answer_ok(&p->nd->answers, rte_rdtsc(),
				  us_to_tsc(RNIC_NEIGH_WINDOW_US))) {
		rnic_worker_drop(w, RNIC_DROP_ND_RATE_LIMITED, m);
		return;
	}
	rte_pktmbuf_free(m);
	uint8_t flags = nd_override(p, target);
	if (unspec) {   /* answer a prober to all-nodes (RFC 4861 7.2.4) */
		nd_send_na(w, p, target, all_nodes, flags, NULL);
		return;
	}
	flags |= NA_FLAG_SOLICITED;
	if (slla != NULL) {
		struct rte_ether_addr mac = *slla;
		nd_send_na(w, p, target, peer, flags, &mac);
		return;
	}
	/* a unicast probe without the option: to the cached address, or
	 * resolved first (RFC 4861 7.2.4, last paragraph) */
	struct rte_ether_addr mac;
	bool known = false;
	rte_rwlock_read_lock(&p->nd->lock);
	struct nd_entry *e = nd_find(p->nd, peer);
	if (e != NULL && e->state != ND_INCOMPLETE) {
		mac = e->mac;
		known = true;
	}
	rte_rwlock_read_unlock(&p->nd->lock);
	if (known)
		nd_send_na(w, p, target, peer, flags, &mac);
	else
		nd_send_na_resolve(w, p, target, peer, flags);
}

static void nd_input_na(struct rnic_worker *w, struct rnic_port *p, struct rte_mbuf *m,
			const struct rte_ipv6_hdr *ip, const struct nd_msg *nm,
			const struct rte_ether_addr *tlla)
{
	struct rnic_nd_table *t = p->nd;
	bool solicited = nm->flags & NA_FLAG_SOLICITED;
	bool override = nm->flags & NA_FLAG_OVERRIDE;
	struct rte_mbuf *send[RNIC_ND_PENDING];
	unsigned n = 0;
	uint64_t now = rte_rdtsc();

	CNT(t, na_in);
	if (rnic_ip6_is_multicast(ip->dst_addr) && solicited) {
		rnic_worker_drop(w, RNIC_DROP_ND_MALFORMED, m);
		return;
	}
	/* an advertisement of one of our own addresses: a duplicate */
	for (unsigned i = 0; i < p->n_ip6; i++)
		if (!memcmp(p->ip6[i], nm->target, 16)) {
			nd_dad_conflict(p, nm->target);
			rte_pktmbuf_free(m);
			return;
		}
	struct rte_ether_addr mac;
	rte_rwlock_write_lock(&t->lock);
	struct nd_entry *e = nd_find(t, nm->target);
	if (e == NULL) {
		/* unsolicited for an unknown neighbour: nothing to update */
	} else if (e->state == ND_INCOMPLETE) {
		if (tlla != NULL) {
			e->mac = *tlla;
			e->state = solicited ? ND_REACHABLE : ND_STALE;
			e->state_tsc = now;
			e->probes = 0;
			n = nd_take_pending(t, e, send);
		}
	} else {
		bool changed = tlla != NULL && !rte_is_same_ether_addr(tlla, &e->mac);
		if (!override && changed) {
			if (e->state == ND_REACHABLE) {
				e->state = ND_STALE;
				e->state_tsc = now;
			}
		} else {
			if (tlla != NULL)
				e->mac = *tlla;
			if (solicited) {
				e->state = ND_REACHABLE;
				e->state_tsc = now;
				e->probes = 0;
			} else if (changed) {
				e->state = ND_STALE;
				e->state_tsc = now;
			}
		}
	}
	if (e != NULL)
		mac = e->mac;
	rte_rwlock_write_unlock(&t->lock);
	rte_pktmbuf_free(m);
	nd_release(w, p, send, n, &mac);
}

void rnic_nd_input(struct rnic_worker *w, struct rnic_port *p, struct rte_mbuf *m,
		   uint8_t type)
{
	uint32_t off = m->l2_len + m->l3_len;
	uint32_t len = rte_pktmbuf_pkt_len(m) - off;
	const struct rte_ipv6_hdr *ip = rte_pktmbuf_mtod_offset(m, const struct rte_ipv6_hdr *,
							        m->l2_len);
	const struct rte_ether_hdr *eh = rte_pktmbuf_mtod(m, const struct rte_ether_hdr *);
	struct nd_opts opts;
	bool ns = type == ND_NEIGHBOR_SOLICIT;

	if (p->nd == NULL || p->n_ip6 == 0 ||
	    nd_parse(m, ip, off, len, ns ? ND_OPT_SLLA : ND_OPT_TLLA, &opts) != 0 ||
	    (opts.lla != NULL && !rte_is_unicast_ether_addr(opts.lla))) {
		rnic_worker_drop(w, RNIC_DROP_ND_MALFORMED, m);
		return;
	}
	/* RFC 6980 5: no neighbour discovery in fragments, atomic ones too */
	if (rnic_ip6_in_fragment(m)) {
		rnic_worker_drop(w, RNIC_DROP_ND_FRAGMENT, m);
		return;
	}
	/* our own message, looped back by the link (it would read as a
	 * duplicate of our address). A port without a MAC of its own (a
	 * net_ring link: every end is 00:00:00:00:00:00) cannot tell its
	 * frames by their source; its DAD probes still carry the nonce. */
	if (!rte_is_zero_ether_addr(&p->mac) &&
	    rte_is_same_ether_addr(&eh->src_addr, &p->mac)) {
		rnic_worker_drop(w, RNIC_DROP_ND_LOOPED, m);
		return;
	}
	const struct nd_msg *nm = rte_pktmbuf_mtod_offset(m, const struct nd_msg *, off);
	if (ns)
		nd_input_ns(w, p, m, ip, nm, &opts);
	else
		nd_input_na(w, p, m, ip, nm, opts.lla);
}

/* ------------------------------------------------------------------- send */

/* rnic_nd_resolve_and_send() for a frame sent for @p cause: a frame a
 * peer's message made us send (RNIC_NEIGH_UNSOLICITED) resolves in an
 * entry neigh.h's policy lets unsolicited traffic take, marked learnt (a
 * later flood may recycle it, never our own resolutions). */
static void nd_resolve(struct rnic_worker *w, struct rnic_port *p, struct rte_mbuf *m,
		       const uint8_t ip[16], enum rnic_neigh_cause cause)
{
	struct rnic_nd_table *t = p->nd;
	struct rte_ether_hdr *eh = rte_pktmbuf_mtod(m, struct rte_ether_hdr *);
	uint64_t now = rte_rdtsc();

	rte_rwlock_read_lock(&t->lock);
	struct nd_entry *e = nd_find(t, ip);
	if (e != NULL && ((e->state == ND_REACHABLE &&
			   now - e->state_tsc < us_to_tsc(ND_REACHABLE_TIME_US)) ||
			  e->state == ND_DELAY || e->state == ND_PROBE)) {
		eh->dst_addr = e->mac;
		if (unlikely(__atomic_load_n(&e->learnt, __ATOMIC_RELAXED)))
			__atomic_store_n(&e->learnt, false, __ATOMIC_RELAXED);   /* in use */
		rte_rwlock_read_unlock(&t->lock);
		rnic_worker_tx(w, p, m);
		return;
	}
	rte_rwlock_read_unlock(&t->lock);

	bool ask = false;
	rte_rwlock_write_lock(&t->lock);
	e = nd_find(t, ip);
	if (e != NULL && e->state != ND_INCOMPLETE) {
		/* REACHABLE past its time is STALE; a STALE entry in use waits
		 * in DELAY for an upper-layer hint, then is probed (7.3.3) */
		if (e->state == ND_REACHABLE || e->state == ND_STALE) {
			e->state = ND_DELAY;
			e->state_tsc = now;
		}
		if (cause == RNIC_NEIGH_OWN)
			e->learnt = false;   /* in use: ours now */
		eh->dst_addr = e->mac;
		rte_rwlock_write_unlock(&t->lock);
		rnic_worker_tx(w, p, m);
		return;
	}
	if (e == NULL) {
		e = nd_slot(w, t, ip, cause);
		if (e == NULL) {   /* no way of its set may be taken */
			rte_rwlock_write_unlock(&t->lock);
			if (cause != RNIC_NEIGH_OWN)
				CNT(t, create_refused);
			rnic_worker_drop(w, RNIC_DROP_ND_PENDING_FULL, m);
			return;
		}
		e->learnt = cause != RNIC_NEIGH_OWN;
		e->state = ND_INCOMPLETE;
		e->state_tsc = now;
		e->probes = 1;
		e->last_ns_tsc = now;
		ask = true;
	} else if (cause == RNIC_NEIGH_OWN) {
		e->learnt = false;   /* our own frame waits for it too */
	}
	/* held: at most RNIC_ND_PENDING per address, RNIC_NEIGH_HELD_MAX in all */
	if (e->n_pending == RNIC_ND_PENDING || t->n_held >= RNIC_NEIGH_HELD_MAX) {
		rte_rwlock_write_unlock(&t->lock);
		if (ask)
			nd_send_ns(w, p, ip, NULL);
		rnic_worker_drop(w, RNIC_DROP_ND_PENDING_FULL, m);
		return;
	}
	e->pending[e->n_pending++] = m;
	t->n_held++;
	rte_rwlock_write_unlock(&t->lock);
	if (ask)
		nd_send_ns(w, p, ip, NULL);
}

void rnic_nd_resolve_and_send(struct rnic_worker *w, struct rnic_port *p,
			      struct rte_mbuf *m, const uint8_t ip[16])
{
	nd_resolve(w, p, m, ip, RNIC_NEIGH_OWN);
}

unsigned rnic_nd_poll(struct rnic_worker *w, struct rnic_port *p)
{
	struct rnic_nd_table *t = p->nd;
	uint64_t now = rte_rdtsc();
	unsigned work = 0, n_ask = 0;
	struct { uint8_t ip[16]; struct rte_ether_addr mac; bool unicast; } ask[8];

	if (t == NULL || p->n_ip6 == 0)
		return 0;
	if (t->dad_started && now - t->dad_start_tsc >= us_to_tsc(ND_RETRANS_TIMER_US))
		for (unsigned i = 0; i < p->n_ip6; i++)
			if (p->ip6_state[i] == RNIC_IP6_OPTIMISTIC)
				__atomic_store_n(&p->ip6_state[i], RNIC_IP6_PREFERRED,
						 __ATOMIC_RELEASE);
	rte_rwlock_write_lock(&t->lock);
	for (unsigned i = 0; i < RNIC_ND_ENTRIES; i++) {
		struct nd_entry *e = &t->e[i];
		uint64_t age = now - e->state_tsc;
		bool retrans = now - e->last_ns_tsc >= us_to_tsc(ND_RETRANS_TIMER_US);
		switch (e->state) {
		case ND_REACHABLE:
			if (age >= us_to_tsc(ND_REACHABLE_TIME_US)) {
				e->state = ND_STALE;
				e->state_tsc = now;
			}
			break;
		case ND_STALE:
			if (age >= us_to_tsc(ND_STALE_GC_US)) {
				memset(e, 0, sizeof(*e));
				work++;
			}
			break;
		case ND_DELAY:
			if (age < us_to_tsc(ND_DELAY_FIRST_PROBE_US) || n_ask == RTE_DIM(ask))
				break;
			e->state = ND_PROBE;
			e->state_tsc = now;
			e->probes = 0;
			retrans = true;
			/* fallthrough */
		case ND_PROBE:
		case ND_INCOMPLETE: {
			bool uni = e->state == ND_PROBE;
			if (!retrans || n_ask == RTE_DIM(ask))
				break;
			if (e->probes >= (uni ? ND_MAX_UNICAST_SOLICIT : ND_MAX_MULTICAST_SOLICIT)) {
				nd_drop_pending(w, t, e);
				memset(e, 0, sizeof(*e));
				CNT(t, timeouts);
				work++;
				break;
			}
			e->probes++;
			e->last_ns_tsc = now;
			memcpy(ask[n_ask].ip, e->ip, 16);
			ask[n_ask].mac = e->mac;
			ask[n_ask].unicast = uni;
			n_ask++;
			break;
		}
		default:
			break;
		}
	}
	rte_rwlock_write_unlock(&t->lock);
	for (unsigned i = 0; i < n_ask; i++) {
		if (ask[i].unicast)
			CNT(t, probes_out);
		nd_send_ns(w, p, ask[i].ip, ask[i].unicast ? &ask[i].mac : NULL);
	}
	return work + n_ask;
}

void rnic_nd_stats(const struct rnic_stack *st, struct rnic_nd_stats *s)
{
	memset(s, 0, sizeof(*s));
	for (unsigned i = 0; i < st->n_ports; i++) {
		const struct rnic_nd_table *t = st->ports[i]->nd;
		if (t == NULL)
			continue;
		s->ns_in += LOAD(t, ns_in);
		s->na_in += LOAD(t, na_in);
		s->ns_out += LOAD(t, ns_out);
		s->na_out += LOAD(t, na_out);
		s->unsolicited_na_out += LOAD(t, unsolicited_na_out);
		s->dad_ns_out += LOAD(t, dad_ns_out);
		s->dad_conflicts += LOAD(t, dad_conflicts);
		s->timeouts += LOAD(t, timeouts);
		s->probes_out += LOAD(t, probes_out);
		s->ptb_in += LOAD(t, ptb_in);
		s->create_refused += LOAD(t, create_refused);
		for (unsigned k = 0; k < RNIC_ND_ENTRIES; k++)
			s->entries += t->e[k].state != ND_FREE &&
				      t->e[k].state != ND_INCOMPLETE;
	}
}
