/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * rnic public API: configuration, the stack instance and its lifecycle.
 *
 * A process calls rnic_eal_init() once, then creates one or more stacks
 * (an rdma-gateway has one; rnic-perf --loopback has two wired by net_ring).
 * A stack owns its ports and its workers; each worker is a poll-mode loop on
 * its own lcore, or driven by the application (rnic_worker_poll()).
 *
 * Installed headers: rnic.h (this one), rnic_tcp.h (the userspace TCP),
 * rnic_verbs.h (libibverbs-shaped verbs), rnic_cm.h (the connection
 * manager) and rnic_roce.h (RoCEv2-only calls).
 *
 * Error convention, for every public rnic_* function of these headers:
 * - a function returning int returns 0 (or a documented non-negative
 *   value, such as a count or an id) on success and a negative errno
 *   value (-EINVAL, -EBUSY, ...) on failure;
 * - a function returning a pointer returns NULL on failure and sets errno
 *   (those that also set rte_errno say so, with the same value);
 * - a function that cannot fail returns void (or the value it reads); an
 *   accessor documented to return NULL for "none" (rnic_cm_id_qp()) does
 *   not fail and leaves errno alone.
 * The one exception is the data path that libibverbs' inline functions
 * reach through ibv_context.ops (ibv_post_send(), ibv_poll_cq(), ...): it
 * keeps libibverbs' convention (rnic_verbs.h). Failures that happen later,
 * on a connection, arrive as callbacks or events carrying a negative errno.
 */
#ifndef RNIC_H
#define RNIC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

#define RNIC_MAX_PORTS    8  /**< ports in one stack */
#define RNIC_MAX_WORKERS 16  /**< workers in one stack */
#define RNIC_MAX_EAL_ARGS 32 /**< extra EAL arguments from [eal] */
#define RNIC_ERRLEN      256 /**< size of an error-message buffer */
#define RNIC_PORT_IP6_MAX  4 /**< IPv6 addresses per port (besides the link-local) */
#define RNIC_ADDRSTRLEN   46 /**< room for any address rnic_addr_str() prints */

/**
 * An IP address of either family, as every rnic layer that may hold either
 * keeps it (the port's IPv6 addresses, the neighbour cache, the TCP
 * four-tuple, the connection manager's endpoints).
 */
struct rnic_addr {
	uint8_t family;          /**< RNIC_AF_INET or RNIC_AF_INET6, 0 = none */
	union {
		uint32_t v4;     /**< IPv4, host byte order (as the rest of the API) */
		uint8_t v6[16];  /**< IPv6, network byte order (as on the wire) */
	};
};
#define RNIC_AF_INET  4  /**< rnic_addr.family of an IPv4 address */
#define RNIC_AF_INET6 6  /**< rnic_addr.family of an IPv6 address */

/** An IPv6 address of a port with its prefix length. */
struct rnic_addr6_cfg {
	uint8_t addr[16];        /**< network byte order */
	uint8_t prefix_len;      /**< on-link prefix, 1..128 */
};

/** Fault injection on one direction of one port; probabilities in percent. */
struct rnic_fault_cfg {
	double drop;      /**< drop the packet */
	double dup;       /**< send or deliver it twice */
	double reorder;   /**< hold it back behind the next one */
	double corrupt;   /**< flip one random bit in the frame */
	double delay;     /**< delay it by delay_us */
	double ce;        /**< mark an ECN-capable IPv4 or IPv6 frame CE (as a congested switch) */
	uint32_t delay_us;/**< delay applied to delayed packets */
};

/** One port: where it comes from, its address, sizes, faults. */
struct rnic_port_cfg {
	char vdev[256];         /**< DPDK vdev spec (net_tap0,iface=x) or "" */
	char pci[64];           /**< PCI address, or "" */
	char ring[48];          /**< in-process ring pair end, "NAME.a" or "NAME.b" */
	uint32_t ip;            /**< IPv4 address, host byte order */
	uint8_t prefix_len;     /**< subnet prefix length */
	/** IPv6 addresses (global or unique-local); the link-local one comes
	 *  from the MAC (EUI-64) and is not listed here */
	struct rnic_addr6_cfg ip6[RNIC_PORT_IP6_MAX];
	unsigned n_ip6;         /**< entries in ip6 */
	uint32_t gateway;       /**< default gateway, host order, 0 = none */
	uint16_t mtu;           /**< IP MTU, 68..9000 */
	uint32_t mbufs;         /**< mbufs in this port's pool */
	uint16_t rx_desc;       /**< RX descriptors per queue */
	uint16_t tx_desc;       /**< TX descriptors per queue */
	uint64_t fault_seed;    /**< seed of the fault injector */
	struct rnic_fault_cfg rx_fault; /**< faults on received frames */
	struct rnic_fault_cfg tx_fault; /**< faults on transmitted frames */
	char pcap[256];         /**< pcapng capture file, or "" */
	bool sw_csum;           /**< ring ports: TCP checksums in software
				     anyway (by default the in-memory link
				     carries frames that need none, as Linux's
				     lo does) */
};

/** Idle behaviour of a worker. */
enum rnic_poll_mode {
	RNIC_POLL_BUSY = 0,     /**< spin: lowest latency */
	RNIC_POLL_ADAPTIVE = 1, /**< sleep briefly after a run of empty loops */
};

/**
 * RoCEv2 congestion control, the [roce] section (docs/user-guide.md).
 * The notification point (a CNP for a CE-marked packet) is always on; ECN
 * marking of rnic's own packets and the DCQCN reaction point are off by
 * default.
 */
struct rnic_roce_cc_cfg {
	bool ecn;                 /**< send RC packets ECT(0), so switches may mark them */
	uint32_t cnp_interval_us; /**< least time between two CNPs of one QP (50) */
	bool dcqcn;               /**< pace each RC QP to its DCQCN rate */
	uint32_t max_rate_mbps;   /**< line rate: where a QP starts and its ceiling */
	uint32_t min_rate_mbps;   /**< floor of the rate */
	uint32_t ai_rate_mbps;    /**< additive increase step (Rai) */
	uint32_t hai_rate_mbps;   /**< hyper increase step (Rhai) */
	uint32_t alpha_us;        /**< alpha update period */
	uint32_t rate_us;         /**< rate increase timer */
	uint32_t byte_reset;      /**< bytes per byte-counter increase event */
	uint32_t f;               /**< fast recovery stages */
	uint32_t g_shift;         /**< alpha gain g = 2^-g_shift */
};

/** A whole stack's configuration, from an INI file and/or the CLI. */
struct rnic_config {
	char path[256];                      /**< file it came from, or "" */
	unsigned n_eal_args;                 /**< entries in eal_args */
	char eal_args[RNIC_MAX_EAL_ARGS][128]; /**< extra EAL arguments */
	unsigned n_ports;                    /**< entries in ports */
	struct rnic_port_cfg ports[RNIC_MAX_PORTS]; /**< the ports */
	uint8_t port_num[RNIC_MAX_PORTS];    /**< N of [port.N], per entry */
	unsigned workers;                    /**< worker count */
	enum rnic_poll_mode poll_mode;       /**< worker idle policy */
	unsigned status_interval_ms;         /**< gateway status line, 0 = off */
	unsigned listen_backlog;             /**< gateway listeners' backlog */
	struct rnic_roce_cc_cfg roce_cc;     /**< RoCEv2 ECN, CNPs and DCQCN */
};

/**
 * Fill @p cfg with defaults: no ports, one worker, adaptive polling, RoCE
 * congestion control as documented in docs/user-guide.md ([roce]).
 */
void rnic_config_init(struct rnic_config *cfg);

/**
 * Fill in a port's defaults (MTU 1500, pool sizes, no faults).
 */
void rnic_port_cfg_init(struct rnic_port_cfg *pc);

/**
 * Load an INI file into @p cfg (on top of what it holds).
 *
 * Sections: [eal] args = ...; [port.N] vdev|pci|ring, ip (one IPv4 and up
 * to RNIC_PORT_IP6_MAX IPv6 addresses, separated by commas), gateway, mtu, mbufs,
 * rx_desc, tx_desc, fault_seed, {rx,tx}_{drop,dup,reorder,corrupt,delay},
 * {rx,tx}_delay_us, {rx,tx}_ce, pcap; [workers] count, poll; [gateway]
 * status_ms, backlog; [roce] ecn, cnp_interval_us, dcqcn and the dcqcn_* keys.
 * Other sections (target.*, ...) are accepted when @p extra_section says so.
 *
 * @param err
 *   On failure, one line "FILE: [section] key: what is wrong".
 * @return
 *   0, or -ENOENT (missing file), -EINVAL (bad content).
 */
int rnic_config_load(struct rnic_config *cfg, const char *path,
		     bool (*extra_section)(const char *name),
		     char *err, size_t errlen);

/**
 * Parse the common options every rnic program takes and remove them from
 * argv: --config FILE, --vdev SPEC / --ring NAME / --pci ADDR, --ip CIDR
 * (an IPv4 one per port, IPv6 ones repeatable; each applies to the last
 * port), --mtu N, --workers N, --busy-poll,
 * --fault-drop P etc. (applied to the last port), --pcap FILE.
 *
 * @return
 *   0, or -EINVAL with a message in @p err. argc/argv keep what is left,
 *   argv[0] first.
 */
int rnic_config_parse_args(struct rnic_config *cfg, int *argc, char **argv,
			   char *err, size_t errlen);

/** One-paragraph help text for the common options. */
const char *rnic_config_usage(void);

/**
 * Parse "A.B.C.D/len" (len optional, default 24).
 * @return 0 or -EINVAL.
 */
int rnic_parse_cidr(const char *s, uint32_t *ip, uint8_t *prefix_len);

/**
 * Parse an address of either family: "A.B.C.D" or an IPv6 address in any
 * form inet_pton(3) takes ("2001:db8::10"), optionally in brackets
 * ("[2001:db8::10]"), and, when @p prefix_len is not NULL, an optional
 * "/LEN" (default 24 for IPv4, 64 for IPv6; without @p prefix_len a "/" is
 * an error).
 * @return 0, or -EINVAL (not an address, or a prefix out of range).
 */
int rnic_addr_parse(const char *s, struct rnic_addr *a, uint8_t *prefix_len);

/** Print @p a into @p buf (inet_ntop(3) forms; "-" for none). @return buf. */
const char *rnic_addr_str(const struct rnic_addr *a, char *buf, size_t len);

/** Same family and same address. */
bool rnic_addr_eq(const struct rnic_addr *a, const struct rnic_addr *b);

/** An IPv4 address (host order) as an rnic_addr. */
struct rnic_addr rnic_addr_v4(uint32_t ip);

/** An IPv6 address (16 bytes, network order) as an rnic_addr. */
struct rnic_addr rnic_addr_v6(const uint8_t v6[16]);

/**
 * The IPv6 link-local address of an interface with MAC @p mac, as Linux
 * forms it (RFC 4291 appendix A, modified EUI-64): fe80::/64 with the MAC's
 * universal/local bit flipped and ff:fe in its middle.
 */
void rnic_addr6_link_local(const uint8_t mac[6], uint8_t out[16]);

/**
 * Initialise DPDK's EAL once for the process.
 *
 * Adds what every rnic program needs: a unique --file-prefix (rnic-PID)
 * unless one is given, --no-pci unless a PCI port is configured, --no-huge
 * when no hugepages are free, and an lcore map with one lcore per worker
 * (oversubscribed onto the available CPUs when needed).
 *
 * @param n_workers total workers of every stack this process will create
 * @return 0 or -errno (message on stderr).
 */
int rnic_eal_init(const char *prog, const struct rnic_config *cfg,
		  unsigned n_workers);

/** Bytes of free hugepages (/proc/meminfo), 0 when there are none: what
 * rnic_eal_init() decides --no-huge by, for a program that needs more than
 * "some" (rnic-perf --loopback sizes its pools against it). */
uint64_t rnic_hugepages_free_bytes(void);

struct rnic_stack;
struct rnic_worker;
struct rte_ring;

/**
 * Build a stack from @p cfg: ports configured and started, workers created
 * but not launched.
 * @return the stack, or NULL with errno and rte_errno set: EINVAL (no
 *   workers, too many workers or ports), ENOMEM, ENOSPC (too many stacks),
 *   or what a port or protocol failed with.
 */
struct rnic_stack *rnic_stack_create(const struct rnic_config *cfg);

/** Launch every worker on its lcore. @return 0 or -errno. */
int rnic_stack_start(struct rnic_stack *st);

/** Stop the workers and wait for them; safe to call twice. */
void rnic_stack_stop(struct rnic_stack *st);

/** Stop, free every resource; every mbuf returned to its pool. */
void rnic_stack_destroy(struct rnic_stack *st);

/** Totals over ports and workers, for status lines and tests. */
struct rnic_stack_stats {
	uint64_t rx_pkts, tx_pkts;       /**< frames through the ports */
	uint64_t rx_bytes, tx_bytes;     /**< bytes through the ports */
	uint64_t drops;                  /**< every drop, all causes */
	uint64_t arp_requests, arp_replies; /**< ARP frames seen */
	uint64_t icmp_echo;              /**< echo requests answered */
	uint64_t redirected;             /**< packets moved to their owner */
	uint64_t connections;            /**< connected QPs (RTS or SQD), iWARP and
					      RoCE; TCBs count in /rnic/tcp */
	uint64_t mbufs_in_use;           /**< mbufs out of every port pool */
	uint64_t fault_dropped, fault_duplicated, fault_reordered,
		 fault_corrupted, fault_delayed,
		 fault_ce_marked;                /**< fault-injector actions */
};

/**
 * Mark @p rx_pct percent of the ECN-capable IPv4 and IPv6 frames port @p port (its
 * index in the config) receives, and @p tx_pct of those it sends, CE (the
 * `ce` fault), from now on; 0 stops it. Safe while the stack runs.
 * @return 0 or -EINVAL.
 */
int rnic_stack_fault_set_ce(struct rnic_stack *st, unsigned port, double rx_pct,
			    double tx_pct);

/** Read the stack's counters (lock-free, approximately coherent). */
void rnic_stack_stats(const struct rnic_stack *st, struct rnic_stack_stats *s);

/**
 * The stack's drops by cause, summed over its workers: @p fn is called with
 * each cause's name (as in telemetry's /rnic/drops) and count, for the
 * causes counted at least once. Lock-free, approximately coherent.
 */
void rnic_stack_drops_each(const struct rnic_stack *st,
			   void (*fn)(const char *cause, uint64_t n, void *arg), void *arg);

/** Print the one-line status (rdma-gateway's) to @p f. */
void rnic_stack_status_line(const struct rnic_stack *st, FILE *f);

/** Number of workers in the stack. */
unsigned rnic_stack_workers(const struct rnic_stack *st);

/** Worker @p idx of the stack, or NULL with errno ENOENT. */
struct rnic_worker *rnic_stack_worker(struct rnic_stack *st, unsigned idx);

/**
 * Run @p fn(w, arg) on worker @p w and wait for it (inline when called on
 * w's lcore or while the stack is not started). Connection and endpoint
 * calls are made this way from application threads. @return 0 or -errno.
 */
int rnic_worker_call_sync(struct rnic_worker *w,
			  void (*fn)(struct rnic_worker *, void *), void *arg);

/**
 * Make two in-process ethdevs wired back to back with rte_eth_from_rings():
 * a port configured with ring = "NAME.a" uses one end, "NAME.b" the other.
 * Call before rnic_stack_create(). @return 0 or -errno.
 */
int rnic_ring_pair(const char *name, unsigned queues);

/**
 * The ring that ring-pair end @p end ("NAME.a" or "NAME.b") transmits into on
 * queue @p q, for tests that pace a sender by the link's fill level.
 * @return the ring, or NULL with errno EINVAL (not a "NAME.a"/"NAME.b" end)
 *   or ENOENT (no such pair or queue, or a pair of the 65th and later).
 */
struct rte_ring *rnic_ring_pair_tx(const char *end, unsigned q);

/**
 * Run one iteration of worker @p idx's loop from the calling thread
 * (run-to-completion mode; only when the stack was not started).
 * @return the work done (packets, events), 0 when idle.
 */
unsigned rnic_worker_poll(struct rnic_stack *st, unsigned idx);

/**
 * One iteration of every worker loop of @p st (run-to-completion mode, as
 * rnic_worker_poll()): what the loopback tools run between their verbs
 * calls once the stack's lcores are stopped. NULL is an empty stack.
 * @return the work done, 0 when idle.
 */
unsigned rnic_stack_poll(struct rnic_stack *st);

/**
 * Send @p count ICMP echo requests to @p dst (host byte order) from worker 0,
 * one every @p interval_ms, then wait up to @p timeout_ms for the replies.
 * When the stack is not started, drives worker 0 itself while it waits.
 * @return echo replies received for these requests, or -errno.
 */
int rnic_ping(struct rnic_stack *st, uint32_t dst, unsigned count,
	      unsigned interval_ms, unsigned timeout_ms);

/*
 * Port failover (address takeover between the ports of one stack).
 *
 * When a port's link goes down, a port of the same stack that is up on the
 * same subnet takes over its IPv4 address (answers ARP for it, accepts its
 * frames, announces it with a gratuitous ARP) and every worker moves its
 * connections there; they keep their addresses and stay established, and
 * what was lost while the link was down is retransmitted. This happens by
 * itself on a link-down (rnic_port_set_link() or the PMD's report); when
 * the link returns nothing moves back (no failback). docs/design.md,
 * "Port failover".
 */
struct rnic_port;

/** Failover counters of a stack (rnic_failover_stats()). */
struct rnic_failover_stats {
	uint64_t failovers;     /**< takeovers started */
	uint64_t completed;     /**< takeovers every worker has carried out */
	uint64_t no_survivor;   /**< link losses (or requests) no port could take over */
	uint64_t conns_moved;   /**< transport connections moved to a survivor */
	uint64_t last_us;       /**< latest: link down -> every worker moved, microseconds */
	uint64_t max_us;        /**< largest last_us seen */
	int last_failed;        /**< port index of the latest failover, -1: none yet */
	int last_survivor;      /**< the port that took over then, -1: none yet */
	unsigned taken[RNIC_MAX_PORTS];  /**< other ports whose addresses port i serves */
	int served_by[RNIC_MAX_PORTS];   /**< port serving port i's own address */
};

/** Read the failover counters of @p st (lock-free). */
void rnic_failover_stats(const struct rnic_stack *st, struct rnic_failover_stats *s);

/**
 * Move port @p failed_port's addresses and connections to another port of
 * @p st that is up on the same subnet, now, whatever the link state (an
 * administrative failover). Waits until every worker has moved its
 * connections, unless called from a worker of @p st.
 * @return 0, -ENODEV (no survivor: no other port up on the subnet),
 *   -EALREADY (its address is already served by another port), -EINVAL.
 */
int rnic_port_failover(struct rnic_stack *st, unsigned failed_port);

/**
 * The port currently answering for local address @p ip (host order): its
 * own port, or the port that took it over.
 * @return the port, or NULL with errno ENOENT (no port has it) or EINVAL
 *   (no stack, address 0).
 */
struct rnic_port *rnic_port_serving(const struct rnic_stack *st, uint32_t ip);

/**
 * Be told of every failover of @p st: @p cb runs on each worker, after that
 * worker's TCP connections moved, with the indexes of the failed port and
 * of the survivor (which already answers for the failed port's addresses).
 * At most 8 subscribers; there is no unsubscribe (subscribe for the life
 * of the stack). @return 0, -ENOSPC, -EINVAL.
 */
int rnic_failover_subscribe(struct rnic_stack *st,
			    void (*cb)(struct rnic_worker *w, unsigned failed,
				       unsigned survivor, void *arg),
			    void *arg);

/**
 * Force the link of port @p port of @p st up or down (tests and benchmarks
 * "pull the cable"): a down port neither sends nor receives, and a failover
 * follows when another port can take over. @return 0 or -EINVAL.
 */
int rnic_stack_set_link(struct rnic_stack *st, unsigned port, bool up);

/** Ask every process-wide rnic loop to stop (used by signal handlers). */
void rnic_request_stop(void);

/** True once rnic_request_stop() was called. */
bool rnic_stop_requested(void);

/** Default grace of rnic_stop_on_signals() in rnic's programs, ms. */
#define RNIC_STOP_GRACE_MS 1500

/** How long rnic_stack_stop() waits for a worker to leave its loop, ms;
 *  a worker still inside a poller then is reported on stderr and left
 *  running (its stack is not freed by rnic_stack_destroy()). */
#define RNIC_STOP_WAIT_MS 1000

/**
 * Make SIGINT and SIGTERM stop the process in bounded time: the first one
 * calls rnic_request_stop() (loops that look at rnic_stop_requested() end
 * and the program winds down); a second signal, or @p grace_ms passing
 * without the process having exited, ends the process as the signal does
 * without a handler (status 128 + signal number in a shell). Uses SIGALRM
 * and ITIMER_REAL once a stop signal came. @return 0, -EINVAL (grace 0)
 * or -errno from sigaction().
 */
int rnic_stop_on_signals(unsigned grace_ms);

#ifdef __cplusplus
}
#endif
#endif /* RNIC_H */
