/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The stack instance (internal view), the protocol registry and flow
 * steering. One stack = ports + workers + per-protocol state.
 */
#ifndef RNIC_ENGINE_STACK_H
#define RNIC_ENGINE_STACK_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_mbuf.h>
#include <rte_spinlock.h>

#include "rnic/rnic.h"
#include "engine/worker.h"

struct rnic_port;

/*
 * An L4 handler (TCP, UDP port 4791, ...). owner() names the worker that
 * owns the frame's flow (m->l2_len/l3_len are set; return UINT32_MAX for
 * "any worker"); input() consumes the frame on that worker.
 */
struct rnic_l4_handler {
	unsigned (*owner)(struct rnic_stack *st, struct rnic_port *p,
			  struct rte_mbuf *m);
	void (*input)(struct rnic_worker *w, struct rnic_port *p,
		      struct rte_mbuf *m);
	/* optional: an ICMPv6 packet too big (RFC 8201) quoting a datagram
	 * of this protocol from our @p local to @p remote whose header
	 * starts at @p l4 (8 bytes at least: the ports first); @p mtu is the
	 * path's. Runs on the worker that owns the flow by its ports. */
	void (*pmtu6)(struct rnic_worker *w, const uint8_t local[16],
		      const uint8_t remote[16], const uint8_t *l4, uint32_t mtu);
};

#define RNIC_MAX_UDP_HANDLERS 8

/*
 * The network layer under the engine's loop (lib/net registers it from
 * its protocol module's stack_init; the engine names nothing in lib/net).
 * Without one, received frames are dropped (RNIC_DROP_ETH_TYPE: no layer
 * knows them) and the rest does nothing.
 */
struct rte_tel_data;

struct rnic_net_hooks {
	/* a frame from one of @p p's RX queues, on the queue's worker */
	void (*input)(struct rnic_worker *w, struct rnic_port *p, struct rte_mbuf *m);
	/* a frame another worker steered here: it resumes at L4 */
	void (*input_l4)(struct rnic_worker *w, struct rnic_port *p, struct rte_mbuf *m);
	/* announce @p p's addresses (gratuitous ARP): worker 0, at start and
	 * on a failover to @p p */
	void (*announce)(struct rnic_worker *w, struct rnic_port *p);
	/* every 100 ms on each worker: age @p p's neighbour entries and the
	 * frames waiting for one. @return work done */
	unsigned (*poll)(struct rnic_worker *w, struct rnic_port *p);
	/* neighbour resolution messages of the stack, in and out */
	void (*counts)(const struct rnic_stack *st, uint64_t *requests, uint64_t *replies);
	/* optional: the network layer's own counters into the stack's
	 * /rnic/stats dict @p d */
	void (*telemetry)(const struct rnic_stack *st, struct rte_tel_data *d);
};

struct rnic_udp_binding {
	uint16_t port;                   /* host order, 0 = free */
	struct rnic_l4_handler h;
};

/*
 * A protocol module's hooks into the stack's lifecycle. Listed in
 * lib/protocols.c (above every module: it names them all); each hook may
 * be NULL.
 */
struct rnic_proto_ops {
	const char *name;
	int (*stack_init)(struct rnic_stack *st);     /* after ports, workers */
	void (*stack_fini)(struct rnic_stack *st);
	int (*worker_init)(struct rnic_worker *w);    /* may add pollers */
	void (*worker_fini)(struct rnic_worker *w);
	/* established connections (status line, telemetry) */
	uint64_t (*connections)(const struct rnic_stack *st);
	/* port failover, on each worker: move what this worker owns on
	 * @p failed to @p survivor (which already answers for failed's
	 * addresses). @return connections moved. */
	unsigned (*failover)(struct rnic_worker *w, struct rnic_port *failed,
			     struct rnic_port *survivor);
};

#define RNIC_FAILOVER_SUBS 8

/* A module told of failovers (rnic_failover_subscribe). */
struct rnic_failover_sub {
	void (*cb)(struct rnic_worker *w, unsigned failed, unsigned survivor,
		   void *arg);
	void *arg;
};

struct fo_event;

/* Per-stack failover state (lib/engine/stack.c). */
struct rnic_failover {
	struct fo_event *events;         /* takeovers, freed once finished */
	bool nosurv_noted[RNIC_MAX_PORTS]; /* a no-survivor loss counted */
	rte_spinlock_t lock;             /* takeovers, subscriptions */
	struct rnic_cmd kick;            /* "look at the links" to worker 0 */
	volatile int kick_posted;
	bool dead;                       /* the stack is being torn down */
	unsigned n_subs;
	struct rnic_failover_sub subs[RNIC_FAILOVER_SUBS];
	/* counters (struct rnic_failover_stats) */
	volatile uint64_t failovers, completed, no_survivor, conns_moved;
	volatile uint64_t last_us, max_us;
	volatile unsigned last_failed, last_survivor;
	volatile unsigned in_flight;     /* failovers whose workers still move */
};

extern const struct rnic_proto_ops *const rnic_protocols[];

/** The network layer of @p st (from its stack_init). @return 0, -EINVAL or
 *  -EEXIST (another one is registered). */
int rnic_stack_set_net(struct rnic_stack *st, const struct rnic_net_hooks *h);

struct rnic_stack {
	struct rnic_config cfg;
	unsigned n_ports;
	struct rnic_port *ports[RNIC_MAX_PORTS];
	unsigned n_workers;
	struct rnic_worker *workers[RNIC_MAX_WORKERS];
	struct rnic_l4_handler ip_proto[256];        /* by IP protocol */
	struct rnic_udp_binding udp[RNIC_MAX_UDP_HANDLERS];
	const struct rnic_net_hooks *net;            /* the network layer */
	void *proto[RNIC_PROTO_MAX];                 /* per-protocol state */
	volatile bool running;
	bool abandoned;       /* a worker never left a stuck loop at stop:
			       * its memory is left to the process's exit */
	unsigned id;                                 /* process-wide index */
	struct rnic_failover fo;                     /* port failover */
};

/**
 * The worker that owns a flow with this 4-tuple (addresses and ports in
 * network byte order, as on the wire, from the receiver's point of view:
 * src = remote). Uses the Toeplitz hash with rnic's RSS key and the
 * indirection table rnic programs into RSS-capable ports, so hardware and
 * software steering agree.
 */
unsigned rnic_flow_owner(const struct rnic_stack *st, uint32_t src_ip,
			 uint32_t dst_ip, uint16_t src_port, uint16_t dst_port);

/** rnic_flow_owner() of an IPv6 flow (16-byte addresses, network order):
 *  the Toeplitz hash over the IPv6 four-tuple, as NICs hash TCP/IPv6. */
unsigned rnic_flow_owner6(const struct rnic_stack *st, const uint8_t src[16],
			  const uint8_t dst[16], uint16_t src_port, uint16_t dst_port);

/** Register an IP protocol handler. @return 0 or -EEXIST. */
int rnic_stack_register_ip_proto(struct rnic_stack *st, uint8_t proto,
				 const struct rnic_l4_handler *h);

/** Register a UDP port handler. @return 0, -EEXIST or -ENOSPC. */
int rnic_stack_register_udp(struct rnic_stack *st, uint16_t port,
			    const struct rnic_l4_handler *h);

/**
 * Look at every port of @p st: each whose link went down and whose address
 * nobody serves yet is taken over by a port that is up on the same subnet
 * (address takeover, then each worker moves its connections). Idempotent.
 * Called on worker 0 (link poll, and the command a link-down posts).
 */
void rnic_failover_check(struct rnic_stack *st);

/** Worker of the calling lcore in @p st, or NULL. */
struct rnic_worker *rnic_stack_current_worker(struct rnic_stack *st);

#endif
