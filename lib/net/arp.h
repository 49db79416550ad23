/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A port's ARP cache. Shared by the port's workers: any worker may receive
 * an ARP frame and any may transmit. It is control-plane data (a lookup per
 * transmitted frame is a read-locked probe of a small table; writes happen a
 * few times a minute), so an rte_rwlock is cheaper than replicating the
 * cache per worker and keeps one truth for pending frames.
 */
#ifndef RNIC_NET_ARP_H
#define RNIC_NET_ARP_H

#include <stdint.h>

#include <rte_ether.h>
#include <rte_mbuf.h>
#include <rte_rwlock.h>

#include "net/neigh.h"
#include "net/net.h"

enum arp_state { ARP_FREE = 0, ARP_INCOMPLETE, ARP_REACHABLE };

struct arp_entry {
	uint32_t ip;                 /* host order */
	enum arp_state state;
	struct rte_ether_addr mac;
	uint64_t expire_tsc;         /* REACHABLE: valid until */
	uint64_t first_tsc;          /* INCOMPLETE: when the first frame waited */
	uint64_t last_request_tsc;
	/* REACHABLE past expire_tsc (stale): refresh requests sent since the
	 * entry was last confirmed, and when the first of them went out */
	unsigned probes;
	uint64_t probe_start_tsc;
	bool learnt;                 /* made by a request's sender, not sent to since */
	/* A different MAC claimed, unasked, for this entry while it was
	 * protected (arp.c, arp_protected()): the claim is kept aside and the
	 * current MAC asked by unicast requests, verify_probes of them so far,
	 * the last at verify_tsc. An answer from the current MAC ends the
	 * check (claim dropped); ARP_VERIFY_PROBES unanswered ones hand the
	 * entry to the claimed MAC. */
	bool verifying;
	uint8_t verify_probes;
	struct rte_ether_addr claimed;
	uint64_t verify_tsc;
	unsigned n_pending;
	struct rte_mbuf *pending[RNIC_ARP_PENDING];
};

struct rnic_arp_table {
	rte_rwlock_t lock;
	struct arp_entry e[RNIC_ARP_ENTRIES];   /* RNIC_NEIGH_SETS sets of WAYS */
	uint32_t seed;               /* of the set hash (neigh.h) */
	unsigned n_held;             /* frames held over all entries (write lock) */
	struct rnic_neigh_limit answers;   /* replies to requests */
	uint64_t create_refused;     /* senders not cached: gratuitous, unsolicited
				      * reply, or no slot neigh.h's policy allows */
	uint64_t gratuitous_in;      /* gratuitous ARPs (sender = target address) */
	uint64_t override_refused;   /* unasked claims of another MAC for a
				      * protected entry: not taken, verified */
	uint64_t override_taken;     /* such claims taken: the current MAC left
				      * ARP_VERIFY_PROBES probes unanswered */
	uint64_t verify_probes_out;  /* unicast requests verifying an entry */
	/* relaxed atomics: several workers count */
	uint64_t requests_in, replies_in, requests_out, replies_out,
		 gratuitous_out, timeouts;
	uint64_t evicted_frames;     /* held frames dropped to make room */
	uint64_t refreshes_out;      /* requests refreshing a stale entry */
	/* bumped (under the write lock, read without it) on every change a
	 * struct rnic_arp_hint must not outlive: an entry added or freed, its
	 * MAC changed, a reachable entry turned incomplete */
	uint32_t gen;
};

/** Handle a received ARP frame (Ethernet header at data start). */
void rnic_arp_input(struct rnic_worker *w, struct rnic_port *p,
		    struct rte_mbuf *m);

/**
 * Fill the Ethernet destination of @p m (Ethernet header at data start) for
 * next hop @p ip and queue it, or hold it until the reply.
 */
void rnic_arp_resolve_and_send(struct rnic_worker *w, struct rnic_port *p,
			       struct rte_mbuf *m, uint32_t ip);

/**
 * rnic_arp_resolve_and_send() with the sender's next-hop memory @p h (NULL:
 * none): a valid hint (same port and next hop, the table's generation, the
 * worker's clock before the entry's expiry) gives the MAC without the lock
 * and the probe; a frame sent from a fresh entry refills it.
 */
void rnic_arp_resolve_hint(struct rnic_worker *w, struct rnic_port *p,
			   struct rte_mbuf *m, uint32_t ip, struct rnic_arp_hint *h);

/**
 * Whether a frame to next hop @p ip would leave port @p p at once, sending
 * nothing: 0 when its entry is reachable (or stale and still usable while
 * it is refreshed), with *@p until_tsc the TSC up to which that answer may
 * be reused without asking again (the entry's expiry; 1 ms ahead for a
 * stale entry); -EAGAIN when rnic_arp_resolve_and_send() would hold the
 * frame for ARP (or drop it once RNIC_ARP_PENDING frames wait).
 */
int rnic_arp_ready(struct rnic_port *p, uint32_t ip, uint64_t *until_tsc);

#endif
