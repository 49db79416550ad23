/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Neighbour discovery (RFC 4861) for a port: the neighbour cache, with the
 * reachability states of section 7.3.2 and the frames held while an
 * address resolves; solicitations and advertisements; duplicate address
 * detection (RFC 4862 5.4, optimistic as RFC 4429: the address is used
 * while DAD runs). Shared by the port's workers under an rwlock, as the
 * ARP cache is (arp.h says why); laid out and replaced by the policy the
 * two share (neigh.h: sets of ways, who may make an entry, the bounds).
 */
#ifndef RNIC_NET_ND_H
#define RNIC_NET_ND_H

#include <stdint.h>

#include <rte_ether.h>
#include <rte_mbuf.h>
#include <rte_rwlock.h>

#include "net/ipv6.h"
#include "net/neigh.h"

#define RNIC_ND_ENTRIES (RNIC_NEIGH_SETS * RNIC_NEIGH_WAYS)   /* 256 per port */
#define RNIC_ND_PENDING 16      /* frames held per unresolved address */

/* RFC 4861 section 10 constants */
#define ND_REACHABLE_TIME_US    30000000u
#define ND_RETRANS_TIMER_US      1000000u
#define ND_DELAY_FIRST_PROBE_US  5000000u
#define ND_MAX_MULTICAST_SOLICIT 3u
#define ND_MAX_UNICAST_SOLICIT   3u
/* a STALE entry nobody uses is freed this long after it went stale */
#define ND_STALE_GC_US          60000000u

enum nd_state { ND_FREE = 0, ND_INCOMPLETE, ND_REACHABLE, ND_STALE, ND_DELAY, ND_PROBE };

struct nd_entry {
	uint8_t ip[16];
	enum nd_state state;
	struct rte_ether_addr mac;
	uint64_t state_tsc;          /* when it entered its state */
	uint64_t last_ns_tsc;        /* last solicitation for it */
	unsigned probes;             /* solicitations in INCOMPLETE/PROBE */
	bool learnt;                 /* made by a solicitation, not sent to since */
	unsigned n_pending;
	struct rte_mbuf *pending[RNIC_ND_PENDING];
};

struct rnic_nd_table {
	rte_rwlock_t lock;
	struct nd_entry e[RNIC_ND_ENTRIES];   /* RNIC_NEIGH_SETS sets of WAYS */
	uint32_t seed;               /* of the set hash (neigh.h) */
	unsigned n_held;             /* frames held over all entries (write lock) */
	struct rnic_neigh_limit answers;   /* advertisements answering solicitations */
	uint64_t dad_start_tsc;      /* DAD of the port's addresses began */
	bool dad_started;
	uint8_t dad_nonce[6];        /* of our DAD probes (RFC 7527) */
	/* relaxed atomics: several workers count */
	uint64_t ns_in, na_in, ns_out, na_out, unsolicited_na_out, dad_ns_out,
		 dad_conflicts, timeouts, probes_out, ptb_in;
	uint64_t create_refused;     /* a solicitation's sender not cached: no room */
};

/* Set up / free a port's IPv6 state: its addresses (link-local from the
 * MAC, then the configured ones), the neighbour cache, the multicast
 * groups it listens to. Called with the ARP table (arp.c). */
int rnic_nd_table_create(struct rnic_port *p);
void rnic_nd_table_free(struct rnic_port *p);

/* ICMPv6 neighbour solicitation / advertisement received (m->l2_len,
 * l3_len set; the ICMPv6 checksum checked). Consumes @p m. */
void rnic_nd_input(struct rnic_worker *w, struct rnic_port *p, struct rte_mbuf *m,
		   uint8_t type);

/* Fill the Ethernet destination of @p m (Ethernet header at data start)
 * for next hop @p ip and queue it, or hold it until @p ip resolves. */
void rnic_nd_resolve_and_send(struct rnic_worker *w, struct rnic_port *p,
			      struct rte_mbuf *m, const uint8_t ip[16]);

/* Age the cache, retransmit solicitations, end DAD. @return work done. */
unsigned rnic_nd_poll(struct rnic_worker *w, struct rnic_port *p);

/* Start DAD of the port's own addresses (first call) and send an
 * unsolicited advertisement for every address it answers for, taken-over
 * ones included (start, failover). */
void rnic_nd_announce(struct rnic_worker *w, struct rnic_port *p);

#endif
