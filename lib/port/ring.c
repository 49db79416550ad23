/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * In-process links: two ethdevs made with rte_eth_from_rings() whose rings
 * cross, so what "NAME.a" transmits on queue q, "NAME.b" receives on queue q.
 * Tests and rnic-perf --loopback wire two stacks with them.
 */
#include <errno.h>
#include <stdio.h>

#include <rte_errno.h>
#include <rte_eth_ring.h>
#include <rte_lcore.h>
#include <rte_ring.h>

#include "rnic/rnic.h"

#define RING_SIZE 4096

int rnic_ring_pair(const char *name, unsigned queues)
{
	struct rte_ring *ab[RNIC_MAX_WORKERS], *ba[RNIC_MAX_WORKERS];
	char rname[RTE_RING_NAMESIZE], dname[64];

	if (queues == 0 || queues > RNIC_MAX_WORKERS)
		return -EINVAL;
	for (unsigned q = 0; q < queues; q++) {
		snprintf(rname, sizeof(rname), "rp_%s_ab%u", name, q);
		ab[q] = rte_ring_create(rname, RING_SIZE, rte_socket_id(),
					RING_F_SP_ENQ | RING_F_SC_DEQ);
		snprintf(rname, sizeof(rname), "rp_%s_ba%u", name, q);
		ba[q] = rte_ring_create(rname, RING_SIZE, rte_socket_id(),
					RING_F_SP_ENQ | RING_F_SC_DEQ);
		if (ab[q] == NULL || ba[q] == NULL)
			return -rte_errno;
	}
	snprintf(dname, sizeof(dname), "%s.a", name);
	if (rte_eth_from_rings(dname, ba, queues, ab, queues, rte_socket_id()) < 0)
		return -rte_errno;
	snprintf(dname, sizeof(dname), "%s.b", name);
	if (rte_eth_from_rings(dname, ab, queues, ba, queues, rte_socket_id()) < 0)
		return -rte_errno;
	return 0;
}
