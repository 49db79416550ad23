/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ARP (RFC 826): replies to requests for our address, a cache with timeouts,
 * bounded holding of frames while an address resolves, gratuitous ARP.
 */
#include <errno.h>
#include <string.h>

#include <rte_arp.h>
#include <rte_cycles.h>
#include <rte_malloc.h>
#include <rte_random.h>

#include "engine/stack.h"
#include "net/arp.h"
#include "net/nd.h"
#include "port/port.h"

#define ARP_RETRY_US     1000000u   /* re-ask at most once a second */
#define ARP_GIVE_UP_US   3000000u   /* pending frames wait at most 3 s */
/*
 * An expired entry stays usable while it is asked again (Linux's STALE,
 * DELAY and PROBE states): a flow in progress keeps sending to the known
 * address and never waits for its next hop to be re-resolved. A refresh
 * request goes out when the entry is used, and is repeated by the poller
 * every ARP_REFRESH_US; the entry fails only when ARP_PROBES of them went
 * unanswered over at least ARP_PROBE_WINDOW_US. Counting requests, not
 * only time, matters: a worker off the CPU for longer than the window (a
 * stalled host), or refresh replies lost in a full transmit queue, used to
 * expire an entry whose neighbour was never asked long enough, and every
 * frame then waited (and mostly dropped as arp_pending_full) for ARP.
 */
#define ARP_REFRESH_US      200000u
#define ARP_PROBES              10u
#define ARP_PROBE_WINDOW_US 5000000u
/* rnic_arp_ready() on a stale entry: ask the table again after this long
 * (its refresh, or its failure, will have moved it by then). */
#define ARP_READY_STALE_US   1000u
/* A stale entry nobody uses (never asked again) is freed this long after
 * it expired. */
#define ARP_STALE_GC_US    60000000u
/*
 * Override protection (issue 27; docs/design.md, "Neighbour caches under
 * attack"). An entry this host resolved or sends to, confirmed within its
 * TTL (arp_protected()), is not moved to another MAC by an ARP nobody
 * asked for: a gratuitous ARP, an unasked reply, a request whose sender
 * MAC differs. The claim is counted (override_refused) and kept aside,
 * and the current MAC is asked by unicast requests, one per
 * ARP_VERIFY_US; its answer ends the check. After ARP_VERIFY_PROBES
 * unanswered ones the claimed MAC is taken (a host that replaced its
 * NIC), as a stale entry whose refresh (broadcast requests) starts then. A stale or
 * unused entry follows RFC 826's merge at once, as Linux does.
 */
#define ARP_VERIFY_PROBES       3u
#define ARP_VERIFY_US     1000000u

_Static_assert(RNIC_ARP_ENTRIES == RNIC_NEIGH_SETS * RNIC_NEIGH_WAYS,
	       "the ARP table is neigh.h's sets of ways");

/* counters: several workers add, telemetry reads (relaxed is enough) */
#define CNT(t, f)  __atomic_fetch_add(&(t)->f, 1, __ATOMIC_RELAXED)
#define LOAD(t, f) __atomic_load_n(&(t)->f, __ATOMIC_RELAXED)

/* A change a struct rnic_arp_hint must see. Caller holds the write lock. */
static inline void arp_changed(struct rnic_arp_table *t)
{
	__atomic_store_n(&t->gen, t->gen + 1, __ATOMIC_RELEASE);
}

static inline uint64_t us_to_tsc(uint64_t us)
{
	return us * (rte_get_tsc_hz() / 1000000);
}

/* A stale entry whose refresh requests went unanswered: enough of them,
 * over long enough. */
static bool arp_probes_failed(const struct arp_entry *e, uint64_t now)
{
	return e->probes >= ARP_PROBES &&
	       now - e->probe_start_tsc >= us_to_tsc(ARP_PROBE_WINDOW_US);
}

/* Whether @p e may not be moved to another MAC by an ARP nobody asked
 * for: resolved, confirmed less than its TTL ago, and sent to by this
 * host (not only learnt from a peer's request). */
static bool arp_protected(const struct arp_entry *e, uint64_t now)
{
	return e->state == ARP_REACHABLE && !e->learnt && e->expire_tsc > now;
}

/* Count a refresh request of stale entry @p e sent at @p now. Caller holds
 * the write lock. */
static void arp_probe_sent(struct arp_entry *e, uint64_t now)
{
	if (e->probes == 0)
		e->probe_start_tsc = now;
	if (e->probes < UINT32_MAX)
		e->probes++;
	e->last_request_tsc = now;
}

int rnic_arp_table_create(struct rnic_port *p)
{
	p->arp = rte_zmalloc("rnic_arp", sizeof(*p->arp), RTE_CACHE_LINE_SIZE);
	if (p->arp == NULL)
		return -ENOMEM;
	rte_rwlock_init(&p->arp->lock);
	p->arp->seed = (uint32_t)rte_rand();
	/* IPv6's neighbour cache lives and dies with ARP's */
	int rc = rnic_nd_table_create(p);
	if (rc != 0) {
		rte_free(p->arp);
		p->arp = NULL;
	}
	return rc;
}

static void arp_entry_clear(struct arp_entry *e)
{
	for (unsigned i = 0; i < e->n_pending; i++)
		rte_pktmbuf_free(e->pending[i]);
	memset(e, 0, sizeof(*e));
}

void rnic_arp_table_free(struct rnic_port *p)
{
	rnic_nd_table_free(p);
	if (p->arp == NULL)
		return;
	for (unsigned i = 0; i < RNIC_ARP_ENTRIES; i++)
		arp_entry_clear(&p->arp->e[i]);
	rte_free(p->arp);
	p->arp = NULL;
}

/* Hand over the frames @p e holds (into @p out, RNIC_ARP_PENDING long).
 * Caller holds the write lock. @return how many. */
static unsigned arp_take_pending(struct rnic_arp_table *t, struct arp_entry *e,
				 struct rte_mbuf **out)
{
	unsigned n = e->n_pending;
	memcpy(out, e->pending, n * sizeof(out[0]));
	e->n_pending = 0;
	t->n_held -= n;
	return n;
}

/* Drop the frames @p e holds (they will never resolve), counted on @p w. */
static void arp_drop_pending(struct rnic_worker *w, struct rnic_arp_table *t,
			     struct arp_entry *e)
{
	struct rte_mbuf *m[RNIC_ARP_PENDING];
	unsigned n = arp_take_pending(t, e, m);
	for (unsigned i = 0; i < n; i++)
		rnic_worker_drop(w, RNIC_DROP_ARP_UNRESOLVED, m[i]);
}

/* The first entry of @p ip's set. */
static struct arp_entry *arp_set(struct rnic_arp_table *t, uint32_t ip)
{
	uint8_t key[4] = { (uint8_t)(ip >> 24), (uint8_t)(ip >> 16), (uint8_t)(ip >> 8),
			   (uint8_t)ip };
	return &t->e[rnic_neigh_set(rnic_neigh_hash(key, 4, t->seed)) * RNIC_NEIGH_WAYS];
}

/* Entry for @p ip, or NULL: a look at its set. Caller holds the lock. */
static struct arp_entry *arp_find(struct rnic_arp_table *t, uint32_t ip)
{
	struct arp_entry *set = arp_set(t, ip);
	for (unsigned i = 0; i < RNIC_NEIGH_WAYS; i++)
		if (set[i].state != ARP_FREE && set[i].ip == ip)
			return &set[i];
	return NULL;
}

/* What @p e is to the replacement policy (neigh.h); its age in *@p stamp. */
static enum rnic_neigh_class arp_class(const struct arp_entry *e, uint64_t *stamp)
{
	*stamp = e->state == ARP_INCOMPLETE ? e->first_tsc : e->expire_tsc;
	if (e->state == ARP_FREE)
		return RNIC_NEIGH_FREE;
	if (e->state == ARP_INCOMPLETE)
		return RNIC_NEIGH_RESOLVING;
	if (e->n_pending > 0 || e->probes > 0 || e->verifying)   /* in use */
		return RNIC_NEIGH_BUSY;
	return e->learnt ? RNIC_NEIGH_LEARNT : RNIC_NEIGH_IDLE;
}

/*
 * A slot for a new entry for @p ip wanted for @p cause, by neigh.h's
 * policy (a flood of requests from spoofed senders can take only free
 * slots and the entries such requests made; never a neighbour this host
 * resolved or uses): its frames dropped, cleared. NULL: none may be taken.
 * Caller holds the write lock.
 */
static struct arp_entry *arp_slot(struct rnic_worker *w, struct rnic_arp_table *t,
				  uint32_t ip, enum rnic_neigh_cause cause)
{
	struct arp_entry *set = arp_set(t, ip);
	enum rnic_neigh_class cls[RNIC_NEIGH_WAYS];
	uint64_t stamp[RNIC_NEIGH_WAYS];
	for (unsigned i = 0; i < RNIC_NEIGH_WAYS; i++)
		cls[i] = arp_class(&set[i], &stamp[i]);
	int k = rnic_neigh_pick(cls, stamp, RNIC_NEIGH_WAYS, cause);
	if (k < 0)
		return NULL;
	struct arp_entry *victim = &set[k];
	if (victim->state != ARP_FREE) {
		if (victim->n_pending)
			__atomic_fetch_add(&t->evicted_frames, victim->n_pending,
					   __ATOMIC_RELAXED);
		arp_drop_pending(w, t, victim);
		memset(victim, 0, sizeof(*victim));
		arp_changed(t);
	}
	return victim;
}

/* Build an ARP frame in a new mbuf, from sender address @p sip. */
static struct rte_mbuf *arp_build(struct rnic_port *p, uint16_t op,
				  const struct rte_ether_addr *eth_dst,
				  const struct rte_ether_addr *tha, uint32_t sip,
				  uint32_t tip)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(p->pool);
	if (m == NULL)
		return NULL;
	struct rte_ether_hdr *eh = (struct rte_ether_hdr *)rte_pktmbuf_append(m,
				sizeof(*eh) + sizeof(struct rte_arp_hdr));
	struct rte_arp_hdr *ah = (struct rte_arp_hdr *)(eh + 1);
	eh->dst_addr = *eth_dst;
	eh->src_addr = p->mac;
	eh->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_ARP);
	ah->arp_hardware = rte_cpu_to_be_16(RTE_ARP_HRD_ETHER);
	ah->arp_protocol = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
	ah->arp_hlen = RTE_ETHER_ADDR_LEN;
	ah->arp_plen = 4;
	ah->arp_opcode = rte_cpu_to_be_16(op);
	ah->arp_data.arp_sha = p->mac;
	ah->arp_data.arp_sip = rte_cpu_to_be_32(sip);
	ah->arp_data.arp_tha = *tha;
	ah->arp_data.arp_tip = rte_cpu_to_be_32(tip);
	return m;
}

static const struct rte_ether_addr bcast = {{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}};
static const struct rte_ether_addr zero_mac;

static void arp_send_request(struct rnic_worker *w, struct rnic_port *p,
			     uint32_t ip)
{
	struct rte_mbuf *m = arp_build(p, RTE_ARP_OP_REQUEST, &bcast, &zero_mac,
				       p->ip, ip);
	if (m == NULL) {
		w->drops[RNIC_DROP_NO_MBUF]++;
		return;
	}
	CNT(p->arp, requests_out);
	rnic_worker_tx(w, p, m);
}

/* A unicast request for @p ip to the MAC its entry has, @p mac: is it
 * still there? (The override check; Linux's unicast probe.) */
static void arp_send_verify(struct rnic_worker *w, struct rnic_port *p, uint32_t ip,
			    const struct rte_ether_addr *mac)
{
	struct rte_mbuf *m = arp_build(p, RTE_ARP_OP_REQUEST, mac, &zero_mac, p->ip, ip);
	if (m == NULL) {
		w->drops[RNIC_DROP_NO_MBUF]++;
		return;
	}
	CNT(p->arp, requests_out);
	CNT(p->arp, verify_probes_out);
	rnic_worker_tx(w, p, m);
}

void rnic_arp_announce_ip(struct rnic_worker *w, struct rnic_port *p, uint32_t ip)
{
	struct rte_mbuf *m = arp_build(p, RTE_ARP_OP_REQUEST, &bcast, &zero_mac,
				       ip, ip);
	if (m == NULL) {
		w->drops[RNIC_DROP_NO_MBUF]++;
		return;
	}
	CNT(p->arp, gratuitous_out);
	rnic_worker_tx(w, p, m);
}

void rnic_arp_announce(struct rnic_worker *w, struct rnic_port *p)
{
	rnic_nd_announce(w, p);   /* IPv6: DAD, unsolicited advertisements */
	if (p->ip != 0)
		rnic_arp_announce_ip(w, p, p->ip);
	for (unsigned i = 0, n = p->n_taken; i < n && i < RNIC_MAX_PORTS; i++)
		if (p->taken_ip[i] != 0)
			rnic_arp_announce_ip(w, p, p->taken_ip[i]);
}

/* What a received ARP may do for its sender with no entry. */
enum arp_learn_mode {
	ARP_UPDATE_ONLY,     /* not for us: refresh a known sender, nothing more */
	ARP_NO_CREATE,       /* for us but not a request (a reply we did not
			      * ask for, gratuitous): refresh; a new one refused */
	ARP_CREATE,          /* a request for us (RFC 826): may add the sender,
			      * where neigh.h's policy finds a slot */
};

/* Learn or refresh ip -> mac; send frames that waited for it. Takes the
 * write lock. Refused creations count as create_refused (as Linux with
 * arp_accept=0, no entry is made from a reply or a gratuitous ARP). A
 * different MAC for a protected entry is not taken but verified
 * (override_refused; ARP_VERIFY_PROBES above). The same MAC confirms the
 * entry and ends a verification. */
static void arp_learn(struct rnic_worker *w, struct rnic_port *p, uint32_t ip,
		      const struct rte_ether_addr *mac, enum arp_learn_mode mode)
{
	struct rnic_arp_table *t = p->arp;
	struct rte_mbuf *send[RNIC_ARP_PENDING];
	unsigned n = 0;
	uint64_t now = rte_rdtsc();

	rte_rwlock_write_lock(&t->lock);
	struct arp_entry *e = arp_find(t, ip);
	if (e != NULL && !rte_is_same_ether_addr(&e->mac, mac) && arp_protected(e, now)) {
		struct rte_ether_addr cur = e->mac;
		bool ask = !e->verifying;
		CNT(t, override_refused);
		e->claimed = *mac;   /* the latest claim is the one taken */
		if (ask) {
			e->verifying = true;
			e->verify_probes = 1;
			e->verify_tsc = now;
		}
		rte_rwlock_write_unlock(&t->lock);
		if (ask)
			arp_send_verify(w, p, ip, &cur);
		return;
	}
	if (e == NULL && mode == ARP_CREATE) {
		e = arp_slot(w, t, ip, RNIC_NEIGH_UNSOLICITED);
		if (e != NULL) {
			e->ip = ip;
			e->learnt = true;
		}
	}
	if (e == NULL && mode != ARP_UPDATE_ONLY)
		CNT(t, create_refused);
	if (e != NULL) {
		if (e->state != ARP_REACHABLE || !rte_is_same_ether_addr(&e->mac, mac))
			arp_changed(t);
		e->mac = *mac;
		e->state = ARP_REACHABLE;
		e->expire_tsc = now + us_to_tsc(RNIC_ARP_TTL_US);
		e->probes = 0;
		e->verifying = false;
		e->verify_probes = 0;
		n = arp_take_pending(t, e, send);
	}
	rte_rwlock_write_unlock(&t->lock);
	for (unsigned i = 0; i < n; i++) {
		struct rte_ether_hdr *eh = rte_pktmbuf_mtod(send[i], struct rte_ether_hdr *);
		eh->dst_addr = *mac;
		rnic_worker_tx(w, p, send[i]);
	}
}

void rnic_arp_input(struct rnic_worker *w, struct rnic_port *p,
		    struct rte_mbuf *m)
{
	if (rte_pktmbuf_data_len(m) < sizeof(struct rte_ether_hdr) +
				      sizeof(struct rte_arp_hdr)) {
		rnic_worker_drop(w, RNIC_DROP_ARP_MALFORMED, m);
		return;
	}
	struct rte_ether_hdr *eh = rte_pktmbuf_mtod(m, struct rte_ether_hdr *);
	struct rte_arp_hdr *ah = (struct rte_arp_hdr *)(eh + 1);
	uint16_t op = rte_be_to_cpu_16(ah->arp_opcode);
	uint32_t sip = rte_be_to_cpu_32(ah->arp_data.arp_sip);
	uint32_t tip = rte_be_to_cpu_32(ah->arp_data.arp_tip);

	if (ah->arp_hardware != rte_cpu_to_be_16(RTE_ARP_HRD_ETHER) ||
	    ah->arp_protocol != rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4) ||
	    ah->arp_hlen != RTE_ETHER_ADDR_LEN || ah->arp_plen != 4 ||
	    (op != RTE_ARP_OP_REQUEST && op != RTE_ARP_OP_REPLY) ||
	    !rte_is_unicast_ether_addr(&ah->arp_data.arp_sha) ||
	    (op == RTE_ARP_OP_REPLY && (sip == 0 || sip == UINT32_MAX))) {
		rnic_worker_drop(w, RNIC_DROP_ARP_MALFORMED, m);
		return;
	}
	/*
	 * The sender's hardware address must be the frame's source. A host
	 * that answers for itself always sends from that address, and the
	 * check keeps one flipped bit (a frame the link's FCS would have
	 * caught, which the fault injector makes on purpose) or a careless
	 * spoofer from pointing a whole neighbour entry at a MAC nobody has:
	 * every frame to that neighbour would vanish until the entry expired.
	 */
	if (!rte_is_same_ether_addr(&ah->arp_data.arp_sha, &eh->src_addr)) {
		rnic_worker_drop(w, RNIC_DROP_ARP_SHA_MISMATCH, m);
		return;
	}
	if (op == RTE_ARP_OP_REQUEST)
		CNT(p->arp, requests_in);
	else
		CNT(p->arp, replies_in);
	/* ours: the port's address, or one it took over (failover) */
	bool for_us = rnic_port_has_ip(p, tip);
	bool gratuitous = sip == tip;
	if (gratuitous)
		CNT(p->arp, gratuitous_in);
	/* RFC 826 merge: refresh a known sender; add it when the frame is a
	 * request for us (not a reply nobody asked for, not a gratuitous ARP) */
	enum arp_learn_mode mode = !for_us && !gratuitous ? ARP_UPDATE_ONLY :
				   for_us && !gratuitous && op == RTE_ARP_OP_REQUEST ?
				   ARP_CREATE : ARP_NO_CREATE;
	if (sip != 0 && !rnic_port_has_ip(p, sip) && rnic_port_on_link(p, sip))
		arp_learn(w, p, sip, &ah->arp_data.arp_sha, mode);
	if (!for_us || sip == tip) {  /* not ours, or someone's gratuitous ARP */
		if (!for_us)
			rnic_worker_drop(w, RNIC_DROP_ARP_NOT_FOR_US, m);
		else
			rte_pktmbuf_free(m);
		return;
	}
	if (op == RTE_ARP_OP_REQUEST) {
		/* answers are budgeted: a request flood is not a reflector */
		if (!rnic_neigh_answer_ok(&p->arp->answers, rte_rdtsc(),
					  us_to_tsc(RNIC_NEIGH_WINDOW_US))) {
			rnic_worker_drop(w, RNIC_DROP_ARP_RATE_LIMITED, m);
			return;
		}
		/* turn the request around in place */
		ah->arp_opcode = rte_cpu_to_be_16(RTE_ARP_OP_REPLY);
		ah->arp_data.arp_tha = ah->arp_data.arp_sha;
		ah->arp_data.arp_tip = ah->arp_data.arp_sip;
		ah->arp_data.arp_sha = p->mac;
		ah->arp_data.arp_sip = rte_cpu_to_be_32(tip);
		eh->dst_addr = ah->arp_data.arp_tha;
		eh->src_addr = p->mac;
		CNT(p->arp, replies_out);
		rnic_worker_tx(w, p, m);
		return;
	}
	rte_pktmbuf_free(m);
}

void rnic_arp_resolve_and_send(struct rnic_worker *w, struct rnic_port *p,
			       struct rte_mbuf *m, uint32_t ip)
{
	rnic_arp_resolve_hint(w, p, m, ip, NULL);
}

void rnic_arp_resolve_hint(struct rnic_worker *w, struct rnic_port *p,
			   struct rte_mbuf *m, uint32_t ip, struct rnic_arp_hint *h)
{
	struct rnic_arp_table *t = p->arp;
	struct rte_ether_hdr *eh = rte_pktmbuf_mtod(m, struct rte_ether_hdr *);

	if (h != NULL && likely(h->port == p && h->ip == ip && w->now_tsc < h->until_tsc &&
				h->gen == __atomic_load_n(&t->gen, __ATOMIC_ACQUIRE))) {
		eh->dst_addr = h->mac;
		rnic_worker_tx(w, p, m);
		return;
	}

	uint64_t now = rte_rdtsc();

	if (ip == UINT32_MAX || ip == (p->ip | ~p->netmask)) {
		eh->dst_addr = bcast;
		rnic_worker_tx(w, p, m);
		return;
	}
	rte_rwlock_read_lock(&t->lock);
	struct arp_entry *e = arp_find(t, ip);
	if (e != NULL && e->state == ARP_REACHABLE && e->expire_tsc > now) {
		eh->dst_addr = e->mac;
		if (unlikely(__atomic_load_n(&e->learnt, __ATOMIC_RELAXED)))
			__atomic_store_n(&e->learnt, false, __ATOMIC_RELAXED);   /* in use */
		if (h != NULL)
			*h = (struct rnic_arp_hint){ .port = p, .ip = ip, .gen = t->gen,
						     .until_tsc = e->expire_tsc, .mac = e->mac };
		rte_rwlock_read_unlock(&t->lock);
		rnic_worker_tx(w, p, m);
		return;
	}
	rte_rwlock_read_unlock(&t->lock);

	/* miss: hold the frame, ask (at most once a second) */
	bool ask = false;
	rte_rwlock_write_lock(&t->lock);
	e = arp_find(t, ip);
	if (e != NULL && e->state == ARP_REACHABLE && !arp_probes_failed(e, now)) {
		/* answered meanwhile, or stale: send, and refresh a stale one */
		eh->dst_addr = e->mac;
		e->learnt = false;
		if (e->expire_tsc <= now && now - e->last_request_tsc >= us_to_tsc(ARP_REFRESH_US)) {
			arp_probe_sent(e, now);
			ask = true;
		}
		rte_rwlock_write_unlock(&t->lock);
		rnic_worker_tx(w, p, m);
		if (ask) {
			CNT(t, refreshes_out);
			arp_send_request(w, p, ip);
		}
		return;
	}
	if (e == NULL && (e = arp_slot(w, t, ip, RNIC_NEIGH_OWN)) != NULL) {
		e->ip = ip;
		e->state = ARP_INCOMPLETE;
	}
	/* lazy ageing: frames that waited too long go before a new one joins */
	if (e != NULL && e->n_pending > 0 &&
	    now - e->first_tsc >= us_to_tsc(ARP_GIVE_UP_US)) {
		arp_drop_pending(w, t, e);
		__atomic_fetch_add(&t->timeouts, 1, __ATOMIC_RELAXED);
	}
	/* held: at most RNIC_ARP_PENDING per address, RNIC_NEIGH_HELD_MAX in all
	 * (a new entry that cannot hold its frame still asks) */
	if (e == NULL || e->n_pending == RNIC_ARP_PENDING || t->n_held >= RNIC_NEIGH_HELD_MAX) {
		if (e != NULL && e->state == ARP_INCOMPLETE &&
		    now - e->last_request_tsc >= us_to_tsc(ARP_RETRY_US)) {
			e->last_request_tsc = now;
			ask = true;
		}
		rte_rwlock_write_unlock(&t->lock);
		if (ask)
			arp_send_request(w, p, ip);
		rnic_worker_drop(w, RNIC_DROP_ARP_PENDING_FULL, m);
		return;
	}
	if (e->state == ARP_REACHABLE) {  /* its refreshes failed: resolve again */
		e->state = ARP_INCOMPLETE;
		e->probes = 0;
		e->verifying = false;
		arp_changed(t);
	}
	if (e->n_pending == 0)
		e->first_tsc = now;
	e->pending[e->n_pending++] = m;
	t->n_held++;
	if (now - e->last_request_tsc >= us_to_tsc(ARP_RETRY_US)) {
		e->last_request_tsc = now;
		ask = true;
	}
	rte_rwlock_write_unlock(&t->lock);
	if (ask)
		arp_send_request(w, p, ip);
}

int rnic_arp_ready(struct rnic_port *p, uint32_t ip, uint64_t *until_tsc)
{
	struct rnic_arp_table *t = p->arp;
	uint64_t now = rte_rdtsc();
	int rc = -EAGAIN;

	if (ip == UINT32_MAX || ip == (p->ip | ~p->netmask)) {
		*until_tsc = UINT64_MAX;   /* broadcast: never asked */
		return 0;
	}
	rte_rwlock_read_lock(&t->lock);
	const struct arp_entry *e = arp_find(t, ip);
	/* what rnic_arp_resolve_and_send() sends at once: reachable, or
	 * stale while its refreshes are still being answered */
	if (e != NULL && e->state == ARP_REACHABLE && !arp_probes_failed(e, now)) {
		*until_tsc = e->expire_tsc > now ? e->expire_tsc : now + us_to_tsc(ARP_READY_STALE_US);
		rc = 0;
	}
	rte_rwlock_read_unlock(&t->lock);
	return rc;
}

unsigned rnic_arp_poll(struct rnic_worker *w, struct rnic_port *p)
{
	struct rnic_arp_table *t = p->arp;
	uint64_t now = rte_rdtsc();
	unsigned work = 0;
	uint32_t ask[8];
	unsigned n_ask = 0;
	struct { uint32_t ip; struct rte_ether_addr mac; } verify[8];
	unsigned n_verify = 0;

	rte_rwlock_write_lock(&t->lock);
	for (unsigned i = 0; i < RNIC_ARP_ENTRIES; i++) {
		struct arp_entry *e = &t->e[i];
		if (unlikely(e->verifying) && e->state != ARP_REACHABLE) {
			e->verifying = false;
		} else if (unlikely(e->verifying) &&
			   now - e->verify_tsc >= us_to_tsc(ARP_VERIFY_US)) {
			if (e->verify_probes < ARP_VERIFY_PROBES) {
				if (n_verify < RTE_DIM(verify)) {   /* else the next poll */
					e->verify_probes++;
					e->verify_tsc = now;
					verify[n_verify].ip = e->ip;
					verify[n_verify++].mac = e->mac;
				}
			} else {
				/* the current MAC is gone: take the claim, as a
				 * stale entry whose refresh starts now (a
				 * broadcast request; it is used meanwhile) */
				e->mac = e->claimed;
				e->verifying = false;
				e->verify_probes = 0;
				e->probes = 0;
				e->expire_tsc = now;
				arp_changed(t);
				__atomic_fetch_add(&t->override_taken, 1, __ATOMIC_RELAXED);
				if (n_ask < RTE_DIM(ask)) {   /* else its next use asks */
					arp_probe_sent(e, now);
					__atomic_fetch_add(&t->refreshes_out, 1, __ATOMIC_RELAXED);
					ask[n_ask++] = e->ip;
				}
				work++;
				continue;
			}
		}
		bool stale = e->state == ARP_REACHABLE && e->expire_tsc <= now;
		if (stale && e->n_pending == 0 &&
		    (arp_probes_failed(e, now) ||
		     (e->probes == 0 && now - e->expire_tsc >= us_to_tsc(ARP_STALE_GC_US)))) {
			/* unanswered, or unused since it expired */
			memset(e, 0, sizeof(*e));
			arp_changed(t);
			__atomic_fetch_add(&t->timeouts, 1, __ATOMIC_RELAXED);
			work++;
		} else if (stale && e->probes > 0 && n_ask < RTE_DIM(ask) &&
			   now - e->last_request_tsc >= us_to_tsc(ARP_REFRESH_US)) {
			/* a refresh in progress: ask again, traffic or not */
			arp_probe_sent(e, now);
			__atomic_fetch_add(&t->refreshes_out, 1, __ATOMIC_RELAXED);
			ask[n_ask++] = e->ip;
		} else if (e->n_pending > 0 &&
			   now - e->first_tsc >= us_to_tsc(ARP_GIVE_UP_US)) {
			arp_drop_pending(w, t, e);
			memset(e, 0, sizeof(*e));
			arp_changed(t);
			__atomic_fetch_add(&t->timeouts, 1, __ATOMIC_RELAXED);
			work++;
		} else if (e->n_pending > 0 && n_ask < RTE_DIM(ask) &&
			   now - e->last_request_tsc >= us_to_tsc(ARP_RETRY_US)) {
			e->last_request_tsc = now;
			ask[n_ask++] = e->ip;
		} else if (e->state == ARP_INCOMPLETE && e->n_pending == 0 &&
			   now - e->last_request_tsc >= us_to_tsc(ARP_GIVE_UP_US)) {
			/* asked for a frame the held-frame cap refused, then
			 * never answered */
			memset(e, 0, sizeof(*e));
			arp_changed(t);
			__atomic_fetch_add(&t->timeouts, 1, __ATOMIC_RELAXED);
			work++;
		}
	}
	rte_rwlock_write_unlock(&t->lock);
	for (unsigned i = 0; i < n_ask; i++)
		arp_send_request(w, p, ask[i]);
	for (unsigned i = 0; i < n_verify; i++)
		arp_send_verify(w, p, verify[i].ip, &verify[i].mac);
	return work + n_ask + n_verify + rnic_nd_poll(w, p);   /* IPv6 neighbours too */
}

void rnic_arp_stats(const struct rnic_stack *st, struct rnic_arp_stats *s)
{
	memset(s, 0, sizeof(*s));
	for (unsigned i = 0; i < st->n_ports; i++) {
		const struct rnic_arp_table *t = st->ports[i]->arp;
		if (t == NULL)
			continue;
		s->requests_in += LOAD(t, requests_in);
		s->replies_in += LOAD(t, replies_in);
		s->requests_out += LOAD(t, requests_out);
		s->replies_out += LOAD(t, replies_out);
		s->gratuitous_out += LOAD(t, gratuitous_out);
		s->timeouts += LOAD(t, timeouts);
		s->refreshes += LOAD(t, refreshes_out);
		s->create_refused += LOAD(t, create_refused);
		s->gratuitous_in += LOAD(t, gratuitous_in);
		s->override_refused += LOAD(t, override_refused);
		s->override_taken += LOAD(t, override_taken);
		/* a racy snapshot is fine for a gauge read by telemetry */
		for (unsigned k = 0; k < RNIC_ARP_ENTRIES; k++)
			s->entries += t->e[k].state == ARP_REACHABLE;
	}
}
