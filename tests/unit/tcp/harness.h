/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A TCB test harness without a network: two rnic TCP instances (A and B),
 * each a fake stack with one worker and one port, built from lib/tcp and the
 * engine's timer wheel only. rnic_net_output_ipv4() is stubbed to capture
 * every segment lib/tcp emits (with an IPv4 header in front, as the wire
 * would carry it); the test moves captured segments to the other instance,
 * drops, reorders or inspects them, injects hand-made segments, and drives
 * the clock of both workers by hand.
 */
#ifndef RNIC_TEST_TCP_HARNESS_H
#define RNIC_TEST_TCP_HARNESS_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_mbuf.h>

#include "engine/stack.h"
#include "engine/worker.h"
#include "port/port.h"
#include "tcp/tcp_internal.h"

#define H_OUT_MAX 4096

struct h_node {
	struct rnic_stack st;
	struct rnic_worker w;
	struct rnic_port port;
	struct rte_mbuf *out[H_OUT_MAX];   /* captured, oldest first */
	unsigned n_out;
	unsigned out_total;
};

/* Summary of one captured or crafted segment. */
struct h_seg {
	uint8_t flags;
	uint32_t seq, ack, len;
	uint16_t wnd, sport, dport;
	struct tcp_opts o;
	int opts_rc;
};

extern struct h_node h_a, h_b;
extern uint64_t h_now;                 /* TSC of both workers */
extern struct rte_mempool *h_pool;
extern unsigned h_owner_mod;           /* see rnic_flow_owner() in harness.c */

#define H_IP_A 0x0a000001u             /* 10.0.0.1, host order */
#define H_IP_B 0x0a000002u

/* Called once from main() after rte_eal_init(). */
int h_global_init(void);

/* Fresh A and B (cmocka setup/teardown); teardown checks no mbuf leaked. */
int h_setup(void **state);
int h_teardown(void **state);

/* Parse captured segment @p i of @p n. */
void h_parse(const struct rte_mbuf *m, struct h_seg *s);
/* Remove and return the oldest captured segment of @p n (NULL if none). */
struct rte_mbuf *h_take(struct h_node *n);
/* Drop every captured segment of @p n; @return how many. */
unsigned h_flush(struct h_node *n);

/* Filter for h_pump: return true to drop the segment. */
typedef bool (*h_drop_fn)(const struct h_seg *s, unsigned idx, void *arg);

/*
 * Move captured segments A->B and B->A until both are quiet, advancing the
 * clock by @p step_us per round and running timers; @return segments moved.
 * Stops after @p max_rounds.
 */
unsigned h_pump(h_drop_fn a2b, h_drop_fn b2a, void *arg, unsigned max_rounds);
/* Advance the clock by @p us and fire due timers of both workers. */
void h_advance(uint64_t us);
/* Deliver one frame (IPv4 + TCP) to @p n's tcp_input. */
void h_input(struct h_node *n, struct rte_mbuf *m);

/* Build an IPv4+TCP frame; @p opts raw (olen rounded up with EOL bytes). */
struct rte_mbuf *h_craft(uint32_t saddr, uint32_t daddr, uint16_t sport,
			 uint16_t dport, uint32_t seq, uint32_t ack, uint8_t flags,
			 uint16_t wnd, const uint8_t *opts, size_t olen,
			 const void *data, size_t dlen);
/* Craft a segment from the peer of connection @p c (as if sent to it). */
struct rte_mbuf *h_craft_to(const struct rnic_tcp_conn *c, uint32_t seq, uint32_t ack,
			    uint8_t flags, const struct tcp_opts *o,
			    const void *data, size_t dlen);

/* A recording application. */
struct h_app {
	struct rnic_tcp_conn *c;
	uint8_t *buf;
	size_t cap, got;
	unsigned recv_calls, sent_calls, eofs, closes, connects, accepts;
	int closed_err;
	bool refuse;           /* accept() returns NULL */
	bool hold_on_accept;   /* rnic_tcp_hold() right away */
	bool abort_in_recv, close_in_recv, abort_in_sent, abort_in_accept;
	bool closed_once;
	size_t refill, refill_off;   /* sent(): queue refill more bytes from refill_off */
};
extern const struct rnic_tcp_ops h_app_ops;
void h_app_init(struct h_app *a, size_t cap);
void h_app_fini(struct h_app *a);

/* Fill @p len bytes of the test pattern starting at stream offset @p off. */
void h_pattern(uint8_t *p, size_t off, size_t len);
bool h_pattern_ok(const uint8_t *p, size_t off, size_t len);
/* Queue @p len pattern bytes (from offset @p off) on @p c in mbufs. */
int h_send(struct rnic_tcp_conn *c, size_t off, size_t len);

/* A connection A -> B:port, fully established through h_pump. */
struct rnic_tcp_conn *h_connect(struct h_app *ca, struct h_app *sb, uint16_t port);

struct rnic_tcp_stats h_stats(struct h_node *n);

#endif
