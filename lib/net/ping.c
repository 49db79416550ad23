/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rnic_ping(): ICMP echo requests from a stack's worker 0, and the matching
 * of echo replies (called by icmp.c). Used by tests and tools to prove L2/L3
 * reachability through the fault injector.
 */
#include <errno.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>

#include <rte_icmp.h>
#include <rte_ip.h>
#include <rte_mbuf.h>

#include "engine/stack.h"
#include "net/net.h"
#include "port/port.h"

#define PING_MAX_STACKS 64
#define PING_IDENT_BASE 0x7200
#define PING_PAYLOAD    56

/* Per stack: the sequence window of the current run and replies seen. */
static struct {
	_Atomic uint64_t replies;
	_Atomic uint32_t seq_lo, seq_hi; /* [lo, hi) accepted */
	uint8_t seen[1u << 16 >> 3];     /* one bit per sequence number */
} ping_state[PING_MAX_STACKS];

struct ping_req {
	struct rnic_stack *st;
	uint32_t dst;
	uint16_t seq;
	int rc;
};

/* Build and send one echo request on the calling worker. */
static void ping_send(struct rnic_worker *w, void *arg)
{
	struct ping_req *r = arg;
	uint32_t nh;
	struct rnic_port *p = rnic_net_route(r->st, r->dst, &nh);

	r->rc = -EHOSTUNREACH;
	if (p == NULL)
		return;
	struct rte_mbuf *m = rte_pktmbuf_alloc(p->pool);
	r->rc = -ENOBUFS;
	if (m == NULL)
		return;
	struct rte_icmp_hdr *ic = (struct rte_icmp_hdr *)rte_pktmbuf_append(m,
				sizeof(*ic) + PING_PAYLOAD);
	ic->icmp_type = RTE_IP_ICMP_ECHO_REQUEST;
	ic->icmp_code = 0;
	ic->icmp_ident = rte_cpu_to_be_16(PING_IDENT_BASE + r->st->id);
	ic->icmp_seq_nb = rte_cpu_to_be_16(r->seq);
	for (unsigned i = 0; i < PING_PAYLOAD; i++)
		((uint8_t *)(ic + 1))[i] = (uint8_t)i;
	ic->icmp_cksum = 0;
	ic->icmp_cksum = ~rte_raw_cksum(ic, sizeof(*ic) + PING_PAYLOAD);
	r->rc = rnic_net_output_ipv4(w, p, m, r->dst, IPPROTO_ICMP);
}

void rnic_ping_reply_in(struct rnic_stack *st, uint16_t ident, uint16_t seq)
{
	if (st->id >= PING_MAX_STACKS || ident != PING_IDENT_BASE + st->id)
		return;
	uint32_t lo = atomic_load(&ping_state[st->id].seq_lo);
	uint32_t hi = atomic_load(&ping_state[st->id].seq_hi);
	if ((uint16_t)(seq - lo) >= (uint16_t)(hi - lo))
		return;
	uint8_t *b = &ping_state[st->id].seen[seq >> 3];
	uint8_t bit = 1u << (seq & 7);
	/* duplicates (the injector duplicates frames) count once */
	if (__atomic_fetch_or(b, bit, __ATOMIC_RELAXED) & bit)
		return;
	atomic_fetch_add(&ping_state[st->id].replies, 1);
}

static uint64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Wait @p ms, driving worker 0 when nobody else does. */
static void ping_wait(struct rnic_stack *st, unsigned ms)
{
	uint64_t end = now_ms() + ms;
	do {
		if (!st->running)
			rnic_worker_poll(st, 0);
		else {
			struct timespec ts = { 0, 200000 };
			nanosleep(&ts, NULL);
		}
	} while (now_ms() < end);
}

int rnic_ping(struct rnic_stack *st, uint32_t dst, unsigned count,
	      unsigned interval_ms, unsigned timeout_ms)
{
	static uint16_t next_seq[PING_MAX_STACKS];

	if (st == NULL || st->id >= PING_MAX_STACKS || count == 0 ||
	    count > 30000)
		return -EINVAL;
	typeof(ping_state[0]) *ps = &ping_state[st->id];
	uint16_t base = next_seq[st->id];
	next_seq[st->id] = base + count;
	for (unsigned i = 0; i < count; i++)
		ps->seen[(uint16_t)(base + i) >> 3] &= ~(1u << ((base + i) & 7));
	atomic_store(&ps->replies, 0);
	atomic_store(&ps->seq_lo, base);
	atomic_store(&ps->seq_hi, (uint16_t)(base + count));

	for (unsigned i = 0; i < count; i++) {
		struct ping_req r = { .st = st, .dst = dst, .seq = base + i };
		int rc = rnic_worker_call_sync(st->workers[0], ping_send, &r);
		if (rc == 0)
			rc = r.rc;
		if (rc < 0 && rc != -EHOSTUNREACH && rc != -ENOBUFS)
			return rc;
		if (interval_ms)
			ping_wait(st, interval_ms);
	}
	uint64_t end = now_ms() + timeout_ms;
	while (atomic_load(&ps->replies) < count && now_ms() < end)
		ping_wait(st, 1);
	return (int)atomic_load(&ps->replies);
}
