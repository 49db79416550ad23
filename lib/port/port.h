/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lib/port: one DPDK ethdev configured from a struct rnic_port_cfg, with one
 * RX and one TX queue per worker where the PMD allows it (otherwise queue 0
 * only, and the engine steers in software), its own mempool, link-status
 * tracking, xstats, optional pcapng capture, and a seeded fault injector on
 * each direction of each queue.
 *
 * Threading: queue q is used only by worker q. Everything else (link state,
 * stats reads) is safe from any thread.
 */
#ifndef RNIC_PORT_H
#define RNIC_PORT_H

#include <stdbool.h>
#include <string.h>
#include <stdint.h>

#include <rte_ethdev.h>
#include <rte_ether.h>
#include <rte_mbuf.h>
#include <rte_spinlock.h>

#include "rnic/rnic.h"
#include "port/fault.h"

struct rnic_stack;
struct rnic_arp_table;
struct rnic_nd_table;
struct rte_pcapng;

/* a net_tap port's descriptors: one per queue, one more for the probe */
#define RNIC_TAP_MAX_FDS (RNIC_MAX_WORKERS + 1)

/* States of a port's IPv6 address (struct rnic_port.ip6_state). An address
 * is usable while its duplicate address detection runs (optimistic, RFC
 * 4429), and is withdrawn when DAD finds another node using it. */
enum rnic_ip6_state {
	RNIC_IP6_NONE = 0,
	RNIC_IP6_OPTIMISTIC,     /* DAD under way */
	RNIC_IP6_PREFERRED,      /* DAD passed */
	RNIC_IP6_DUPLICATE,      /* DAD failed: not used, not answered for */
};

struct rnic_port {
	/* read-only after rnic_port_open() */
	struct rnic_stack *st;        /* owning stack (opaque here) */
	unsigned stack_id;            /* its process-wide index (names) */
	unsigned idx;                 /* index in st->ports */
	uint16_t port_id;             /* DPDK ethdev id */
	char name[RTE_ETH_NAME_MAX_LEN];
	struct rnic_port_cfg cfg;     /* copy of the configuration */
	struct rte_ether_addr mac;
	uint32_t ip;                  /* host byte order */
	uint32_t netmask;             /* host byte order */
	uint16_t mtu;                 /* IP MTU in use */
	uint16_t nb_rxq, nb_txq;      /* queues set up */
	bool rss;                     /* hardware RSS spreads flows over queues */
	/* fewer TX queues than workers: worker w sends on w % nb_txq under
	 * tx_lock[w % nb_txq] (rnic_port_tx()) */
	bool tx_shared;
	/* the PMD sends single-segment frames only: chains are copied whole
	 * first (net_af_xdp) */
	bool tx_linearize;
	rte_spinlock_t tx_lock[RNIC_MAX_WORKERS];
	struct rte_mempool *pool;
	unsigned tx_reserve;          /* free mbufs kept from send queues (0: none) */
	/* An in-process ring link (net_ring): frames cross in memory, so TCP
	 * leaves its checksum to the link (RTE_MBUF_F_TX_TCP_CKSUM, the field
	 * zero) and the receiving port marks such frames good, as Linux's lo
	 * does. The port writes the real checksum into a frame before a
	 * capture or the fault injector sees it. */
	bool csum_link;
	/* stop and close on the EAL interrupt thread (net_memif: see
	 * rnic_port_close()) */
	bool close_on_intr_thread;

	/* per-queue fault injectors; queue q touched by worker q only */
	struct rnic_fault rx_fault[RNIC_MAX_WORKERS];
	struct rnic_fault tx_fault[RNIC_MAX_WORKERS];

	/* ARP cache and pending packets (lib/net owns the contents) */
	struct rnic_arp_table *arp;

	/* IPv6 (lib/net/nd.c fills it as the port opens): ip6[0] is the
	 * link-local address from the MAC, then cfg.ip6[]; ip6_state[] an
	 * enum rnic_ip6_state (written by DAD, read lock-free); nd the
	 * neighbour cache */
	uint8_t ip6[1 + RNIC_PORT_IP6_MAX][16];
	uint8_t ip6_prefix[1 + RNIC_PORT_IP6_MAX];
	volatile uint8_t ip6_state[1 + RNIC_PORT_IP6_MAX];
	unsigned n_ip6;
	struct rnic_nd_table *nd;

	/* net_tap (lib/port/tap_link.c): the kernel interface's name as it
	 * was born in rnic's namespace, and the process's /dev/net/tun
	 * descriptors attached to it; tap_if is empty for other PMDs */
	char tap_if[16];
	int tap_fds[RNIC_TAP_MAX_FDS];
	unsigned tap_n_fds;
	/* the tap's kernel side is in another namespace (link from tap_fds) */
	volatile bool link_away;

	/* link status, updated from the LSC callback or by polling */
	volatile bool link_up;
	volatile uint64_t link_changes;
	volatile uint64_t link_down_tsc;  /* when the link last went down */
	/* told of every link change (the engine's failover trigger); any
	 * thread: the LSC interrupt thread, worker 0's poll, the caller of
	 * rnic_port_set_link() */
	void (*on_link)(struct rnic_port *p, bool up);

	/* Port failover (lib/engine/stack.c writes, under the stack's
	 * failover lock; workers read without locks). taken_ip[] holds the
	 * addresses this port answers for besides its own (0 = free slot),
	 * n_taken how many slots may be used. taken_by is 0, or 1 + the index
	 * of the port now serving this port's own address. */
	volatile uint32_t taken_ip[RNIC_MAX_PORTS];
	volatile unsigned n_taken;
	volatile uint8_t taken_by;
	volatile bool fo_needed;       /* link went down, takeover not done */

	/* frames dropped because the link is down, per queue (writer:
	 * worker q), both directions */
	uint64_t link_down_drops[RNIC_MAX_WORKERS];
	/* frames the PMD refused behind the TX fault injector (held or
	 * dropped there): congestion the worker's own TX_FULL drops do not
	 * show, per queue (only its worker writes it) */
	uint64_t tx_refused[RNIC_MAX_WORKERS];
	/* chains that could not be made one segment for such a PMD (no mbuf
	 * to copy into), freed, per queue */
	uint64_t tx_unsendable[RNIC_MAX_WORKERS];

	/* pcapng capture (optional); the lock serialises writers */
	struct rte_pcapng *pcap;
	struct rte_mempool *pcap_pool; /* copies for rte_pcapng */
	int pcap_fd;
	rte_spinlock_t pcap_lock;
};

/**
 * The pool is short: fewer than p->tx_reserve mbufs are free. Senders of
 * new data (rnic_tcp_send) back off then, so that what is already queued
 * can still be sent, retransmitted and, above all, acknowledged: ACKs need
 * free mbufs to be received. Any thread; cheap while the pool is not short.
 */
static inline bool rnic_port_pool_short(const struct rnic_port *p)
{
	if (p->tx_reserve == 0)
		return false;
	/* the common pool's own count first: O(1), where the exact count
	 * visits every lcore's cache. It is the body of
	 * rte_mempool_ops_get_count(), which DPDK 22.11 does not export. */
	struct rte_mempool *mp = p->pool;
	unsigned common = rte_mempool_get_ops(mp->ops_index)->get_count(mp);
	if (common >= p->tx_reserve)
		return false;
	/* what this lcore can still take: the common pool and its own cache
	 * (another lcore's cache of this pool is out of its reach) */
	const struct rte_mempool_cache *c = rte_mempool_default_cache(mp, rte_lcore_id());
	return common + (c != NULL ? c->len : 0) < p->tx_reserve;
}

/**
 * Open and start the port described by @p cfg for @p nb_workers workers.
 * Creates the vdev (rte_dev_probe) or uses the PCI device, sizes the pool
 * from cfg->mbufs, sets the MTU, RSS when supported, registers the LSC
 * callback. @p stack_id: the owning stack's process-wide index (names of
 * its pools). Returns NULL and sets rte_errno on failure (message on
 * stderr).
 */
struct rnic_port *rnic_port_open(struct rnic_stack *st, unsigned stack_id, unsigned idx,
				 const struct rnic_port_cfg *cfg,
				 unsigned nb_workers);

/** Worker (queue) of RSS indirection entry @p entry: entry % n_workers.
 *  The port programs RSS tables with it, the engine's rnic_flow_owner()
 *  computes with it. */
static inline unsigned rnic_reta_entry_worker(unsigned entry, unsigned n_workers)
{
	return n_workers ? entry % n_workers : 0;
}

/** rnic's 40-byte RSS key (rss.c; programmed into every RSS-capable port). */
extern const uint8_t rnic_rss_key[40];

/** Stop and close the port, free the pool (all mbufs must be back). */
void rnic_port_close(struct rnic_port *p);

/**
 * Receive up to @p n frames on queue @p q, through the RX fault injector
 * and the pcapng capture. While the link is down, whatever the PMD still
 * hands over is discarded (counted in link_down_drops) and 0 returned.
 * @return frames placed in @p pkts.
 */
uint16_t rnic_port_rx(struct rnic_port *p, uint16_t q,
		      struct rte_mbuf **pkts, uint16_t n);

/**
 * Transmit up to @p n frames on queue @p q through the TX fault injector.
 * Frames the injector drops count as sent. While the link is down every
 * frame is freed and counted in link_down_drops (consumed, not sent).
 * @return frames consumed; the caller still owns pkts[ret..n-1].
 */
uint16_t rnic_port_tx(struct rnic_port *p, uint16_t q,
		      struct rte_mbuf **pkts, uint16_t n);

/** Release frames the fault injector holds back whose time has come
 *  (delay/reorder) on queue @p q, in both directions. @return work done. */
unsigned rnic_port_fault_poll(struct rnic_port *p, uint16_t q);

/** Force the link state (tests, failover); real ports report their own.
 *  A change is passed to p->on_link (taking the link down is how a test
 *  pulls the cable: the stack's failover starts from there). */
int rnic_port_set_link(struct rnic_port *p, bool up);

/**
 * net_tap: record the interface's name and the process's tap descriptors
 * attached to it (after the port started). Nothing for other PMDs.
 */
void rnic_tap_link_init(struct rnic_port *p, const struct rte_eth_dev_info *di);

/**
 * net_tap: is the kernel side absent from rnic's namespace (moved away,
 * renamed or deleted)? Then true, with *attached telling whether a tap
 * descriptor is still attached to it (the tap's carrier). False for other
 * PMDs and while the interface is in rnic's namespace (the PMD's link
 * state stands). Any thread; a few system calls.
 */
bool rnic_tap_link_away(struct rnic_port *p, bool *attached);

/** Refresh p->link_up from the PMD (for PMDs without LSC interrupts). */
void rnic_port_poll_link(struct rnic_port *p);

/** Mbufs of this port's pool currently allocated. */
unsigned rnic_port_mbufs_in_use(const struct rnic_port *p);

struct rte_tel_data;
/** Fill a telemetry dict with the port's identity, link, basic stats,
 *  xstats and fault-injector counters. */
void rnic_port_telemetry(const struct rnic_port *p, struct rte_tel_data *d);

/** Sum of the fault-injector counters of every queue, both directions. */
/* Change the CE-marking percentage of every queue's RX and TX injector
 * of a running port (rnic_fault_set_ce()). */
void rnic_port_fault_set_ce(struct rnic_port *p, double rx_pct, double tx_pct);

void rnic_port_fault_stats(const struct rnic_port *p,
			   struct rnic_fault_stats *s);

/**
 * Is @p ip (host order) one of the local addresses this port answers for:
 * its own, or one taken over from a failed port? Lock-free (workers).
 */
static inline bool rnic_port_has_ip(const struct rnic_port *p, uint32_t ip)
{
	if (ip == 0)   /* an IPv6-only port has IPv4 address 0 */
		return false;
	if (ip == p->ip)
		return true;
	unsigned n = p->n_taken;
	for (unsigned i = 0; i < n && i < RNIC_MAX_PORTS; i++)
		if (p->taken_ip[i] == ip && ip != 0)
			return true;
	return false;
}

/** Frames dropped on the port because its link was down (all queues). */
/** Frames queue @p q's PMD refused behind the TX fault injector. */
static inline uint64_t rnic_port_tx_refused(const struct rnic_port *p, uint16_t q)
{
	return q < RNIC_MAX_WORKERS ? p->tx_refused[q] : 0;
}

static inline uint64_t rnic_port_link_down_drops(const struct rnic_port *p)
{
	uint64_t n = 0;
	for (unsigned q = 0; q < RNIC_MAX_WORKERS; q++)
		n += p->link_down_drops[q];
	return n;
}

/** True when @p ip (host order) is in this port's subnet. */
static inline bool rnic_port_on_link(const struct rnic_port *p, uint32_t ip)
{
	return p->ip != 0 && ((ip ^ p->ip) & p->netmask) == 0;
}

/** True for an IPv6 link-local address, fe80::/10 (RFC 4291 2.5.6). */
static inline bool rnic_ip6_is_link_local(const uint8_t a[16])
{
	return a[0] == 0xfe && (a[1] & 0xc0) == 0x80;
}

/** True when the first @p bits of IPv6 addresses @p a and @p b are equal. */
static inline bool rnic_ip6_prefix_equal(const uint8_t a[16], const uint8_t b[16],
					 unsigned bits)
{
	unsigned n = bits > 128 ? 16 : bits / 8;
	if (memcmp(a, b, n) != 0)
		return false;
	if (n == 16 || bits % 8 == 0)
		return true;
	uint8_t mask = (uint8_t)(0xff << (8 - bits % 8));
	return ((a[n] ^ b[n]) & mask) == 0;
}

/**
 * True when port @p s is on a subnet of port @p f: f's IPv4 address in s's
 * IPv4 subnet, or one of f's configured IPv6 addresses in the prefix of one
 * of s's (link-local ones say nothing: every link has fe80::/64). What
 * failover asks of a survivor, for IPv4-only, dual-stack and IPv6-only
 * ports alike.
 */
static inline bool rnic_port_shares_subnet(const struct rnic_port *s,
					   const struct rnic_port *f)
{
	if (f->ip != 0 && rnic_port_on_link(s, f->ip))
		return true;
	for (unsigned i = 0; i < f->cfg.n_ip6; i++)
		for (unsigned j = 0; j < s->cfg.n_ip6; j++)
			if (s->cfg.ip6[j].prefix_len == f->cfg.ip6[i].prefix_len &&
			    rnic_ip6_prefix_equal(f->cfg.ip6[i].addr, s->cfg.ip6[j].addr,
						  s->cfg.ip6[j].prefix_len))
				return true;
	return false;
}

#endif
