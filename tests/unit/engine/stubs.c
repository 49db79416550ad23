/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Test doubles for lib/port and lib/net, so the engine's worker, stack,
 * EAL and telemetry code can be tested on its own. A "port" here is a plain
 * struct: RX hands out frames queued by the test, TX accepts up to
 * stub_tx_accept frames per call and frees them, like a PMD would.
 */
#include <errno.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_malloc.h>
#include <rte_telemetry.h>

#include "engine/stack.h"
#include "engine/worker.h"
#include "net/ipv6.h"
#include "net/net.h"
#include "port/port.h"
#include "stubs.h"

struct stub_state stub;

struct rnic_port *rnic_port_open(struct rnic_stack *st, unsigned idx,
				 const struct rnic_port_cfg *cfg,
				 unsigned nb_workers)
{
	if (stub.open_fail) {
		rte_errno = ENODEV;
		return NULL;
	}
	struct rnic_port *p = rte_zmalloc("stub_port", sizeof(*p), 0);
	if (p == NULL)
		return NULL;
	p->st = st;
	p->idx = idx;
	p->cfg = *cfg;
	p->nb_rxq = p->nb_txq = (uint16_t)nb_workers;
	snprintf(p->name, sizeof(p->name), "stub%u", idx);
	stub.opened++;
	return p;
}

void rnic_port_close(struct rnic_port *p)
{
	stub.closed++;
	rte_free(p);
}

uint16_t rnic_port_rx(struct rnic_port *p, uint16_t q,
		      struct rte_mbuf **pkts, uint16_t n)
{
	(void)p;
	uint16_t k = 0;
	while (k < n && stub.rx_n[q] > 0)
		pkts[k++] = stub.rx_q[q][--stub.rx_n[q]];
	return k;
}

uint16_t rnic_port_tx(struct rnic_port *p, uint16_t q,
		      struct rte_mbuf **pkts, uint16_t n)
{
	(void)p;
	(void)q;
	uint16_t k = n < stub.tx_accept ? n : (uint16_t)stub.tx_accept;
	for (uint16_t i = 0; i < k; i++)
		rte_pktmbuf_free(pkts[i]);
	stub.tx_calls++;
	stub.tx_taken += k;
	return k;
}

unsigned rnic_port_fault_poll(struct rnic_port *p, uint16_t q)
{
	(void)p;
	(void)q;
	stub.fault_polls++;
	return 0;
}

void rnic_port_poll_link(struct rnic_port *p)
{
	(void)p;
	stub.link_polls++;
}

unsigned rnic_port_mbufs_in_use(const struct rnic_port *p)
{
	(void)p;
	return 7;
}

void rnic_port_telemetry(const struct rnic_port *p, struct rte_tel_data *d)
{
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_string(d, "name", p->name);
	rte_tel_data_add_dict_u64(d, "stub", 1);
}

void rnic_port_fault_set_ce(struct rnic_port *p, double rx_pct, double tx_pct)
{
	(void)p;
	(void)rx_pct;
	(void)tx_pct;
}

void rnic_port_fault_stats(const struct rnic_port *p, struct rnic_fault_stats *s)
{
	(void)p;
	memset(s, 0, sizeof(*s));
	s->dropped = 3;
}

void rnic_net_input(struct rnic_worker *w, struct rnic_port *p,
		    struct rte_mbuf *m)
{
	(void)w;
	(void)p;
	stub.net_input++;
	rte_pktmbuf_free(m);
}

void rnic_net_input_l4(struct rnic_worker *w, struct rnic_port *p,
		       struct rte_mbuf *m)
{
	(void)p;
	stub.l4_input[w->id]++;
	rte_pktmbuf_free(m);
}

unsigned rnic_arp_poll(struct rnic_worker *w, struct rnic_port *p)
{
	(void)w;
	(void)p;
	return 0;
}

void rnic_arp_announce(struct rnic_worker *w, struct rnic_port *p)
{
	(void)p;
	stub.announces++;
	stub.announce_lcore = rte_lcore_id();
	stub.announce_worker = w->id;
}

void rnic_arp_stats(const struct rnic_stack *st, struct rnic_arp_stats *s)
{
	(void)st;
	memset(s, 0, sizeof(*s));
	s->requests_in = 2;
	s->replies_out = 2;
}

void rnic_nd_stats(const struct rnic_stack *st, struct rnic_nd_stats *s)
{
	(void)st;
	memset(s, 0, sizeof(*s));
}

/*
 * The test's own protocol table (lib/engine/protocols.c is not linked):
 * two modules that log their hooks, so ordering and unwinding are visible,
 * and can be told to fail.
 */
static void hook(char mod, char what, int id)
{
	if (stub.log_n + 4 < sizeof(stub.log)) {
		stub.log[stub.log_n++] = mod;
		stub.log[stub.log_n++] = what;
		stub.log[stub.log_n++] = id < 0 ? '-' : (char)('0' + id);
		stub.log[stub.log_n++] = ' ';
		stub.log[stub.log_n] = '\0';
	}
}

static int a_stack_init(struct rnic_stack *st) { (void)st; hook('A', 'S', -1); return 0; }
static void a_stack_fini(struct rnic_stack *st) { (void)st; hook('A', 's', -1); }
static int a_worker_init(struct rnic_worker *w) { hook('A', 'W', (int)w->id); return 0; }
static void a_worker_fini(struct rnic_worker *w) { hook('A', 'w', (int)w->id); }
static uint64_t a_conns(const struct rnic_stack *st) { (void)st; return 2; }

static int b_stack_init(struct rnic_stack *st)
{
	(void)st;
	hook('B', 'S', -1);
	return stub.b_stack_fail ? -EPROTO : 0;
}
static void b_stack_fini(struct rnic_stack *st) { (void)st; hook('B', 's', -1); }
static int b_worker_init(struct rnic_worker *w)
{
	hook('B', 'W', (int)w->id);
	return stub.b_worker_fail && w->id == 1 ? -ENOSPC : 0;
}
static void b_worker_fini(struct rnic_worker *w) { hook('B', 'w', (int)w->id); }
static uint64_t b_conns(const struct rnic_stack *st) { (void)st; return 3; }

static const struct rnic_proto_ops proto_a = {
	.name = "a", .stack_init = a_stack_init, .stack_fini = a_stack_fini,
	.worker_init = a_worker_init, .worker_fini = a_worker_fini,
	.connections = a_conns,
};
static const struct rnic_proto_ops proto_b = {
	.name = "b", .stack_init = b_stack_init, .stack_fini = b_stack_fini,
	.worker_init = b_worker_init, .worker_fini = b_worker_fini,
	.connections = b_conns,
};

const struct rnic_proto_ops *const rnic_protocols[] = { &proto_a, &proto_b, NULL };
