/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * In-process links: two ethdevs made with rte_eth_from_rings() whose rings
 * cross, so what "NAME.a" transmits on queue q, "NAME.b" receives on queue q
 * and the other way round. Tests and rnic-perf --loopback wire two stacks
 * with them. rte_eth_from_rings() names the ethdevs "net_ring_NAME.a" and
 * "net_ring_NAME.b"; a port whose config says ring = NAME.a finds it so.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_eth_ring.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_ring.h>

#include "rnic/rnic.h"

/* Entries per ring. Deeper than a NIC queue: a ring link has no wire to
 * pace the sender, and a TCP window of frames arrives in one burst. */
#define RING_SIZE 4096

/* Pairs made so far: ring names come from it, so that long link names can
 * never be truncated into a clash. */
static unsigned ring_pair_seq;

/* Names of the pairs made, by sequence number, for rnic_ring_pair_tx(). */
#define RING_PAIRS_KEPT 64
static char ring_pair_names[RING_PAIRS_KEPT][RTE_ETH_NAME_MAX_LEN];

static void ring_free_all(struct rte_ring **r, unsigned n)
{
	for (unsigned q = 0; q < n; q++)
		rte_ring_free(r[q]);
}

/* Create @p n single-producer single-consumer rings for one direction. */
static int ring_create_dir(unsigned seq, char dir, struct rte_ring **r,
			   unsigned n)
{
	char rname[RTE_RING_NAMESIZE];

	for (unsigned q = 0; q < n; q++) {
		snprintf(rname, sizeof(rname), "rnic_rp%u_%c%u", seq, dir, q);
		r[q] = rte_ring_create(rname, RING_SIZE, rte_socket_id(),
				       RING_F_SP_ENQ | RING_F_SC_DEQ);
		if (r[q] == NULL) {
			int rc = -rte_errno;
			ring_free_all(r, q);
			return rc;
		}
	}
	return 0;
}

int rnic_ring_pair(const char *name, unsigned queues)
{
	struct rte_ring *ab[RNIC_MAX_WORKERS], *ba[RNIC_MAX_WORKERS];
	char dname[RTE_ETH_NAME_MAX_LEN];
	unsigned seq = __atomic_fetch_add(&ring_pair_seq, 1, __ATOMIC_RELAXED);
	uint16_t pid;
	int rc;

	if (name == NULL || name[0] == '\0' || queues == 0 ||
	    queues > RNIC_MAX_WORKERS)
		return -EINVAL;
	/* the ethdev name must fit: "net_ring_" NAME ".a" */
	if (strlen("net_ring_") + strlen(name) + 2 >= RTE_ETH_NAME_MAX_LEN)
		return -ENAMETOOLONG;
	rc = ring_create_dir(seq, 'a', ab, queues);
	if (rc != 0)
		return rc;
	rc = ring_create_dir(seq, 'b', ba, queues);
	if (rc != 0) {
		ring_free_all(ab, queues);
		return rc;
	}
	/* .a transmits into ab and receives from ba; .b the mirror image */
	snprintf(dname, sizeof(dname), "%s.a", name);
	if (rte_eth_from_rings(dname, ba, queues, ab, queues, rte_socket_id()) < 0) {
		rc = -rte_errno;
		goto fail;
	}
	snprintf(dname, sizeof(dname), "%s.b", name);
	if (rte_eth_from_rings(dname, ab, queues, ba, queues, rte_socket_id()) < 0) {
		rc = -rte_errno;
		snprintf(dname, sizeof(dname), "net_ring_%s.a", name);
		if (rte_eth_dev_get_port_by_name(dname, &pid) == 0)
			rte_eth_dev_close(pid);
		goto fail;
	}
	if (seq < RING_PAIRS_KEPT)
		snprintf(ring_pair_names[seq], sizeof(ring_pair_names[seq]), "%s", name);
	return 0;

fail:
	ring_free_all(ab, queues);
	ring_free_all(ba, queues);
	return rc ? rc : -EIO;
}

struct rte_ring *rnic_ring_pair_tx(const char *end, unsigned q)
{
	char rname[RTE_RING_NAMESIZE];
	size_t n = end ? strlen(end) : 0;

	if (n < 3 || end[n - 2] != '.' || (end[n - 1] != 'a' && end[n - 1] != 'b')) {
		errno = EINVAL;
		return NULL;
	}
	for (unsigned seq = 0; seq < RING_PAIRS_KEPT; seq++) {
		if (strlen(ring_pair_names[seq]) != n - 2 ||
		    strncmp(ring_pair_names[seq], end, n - 2) != 0)
			continue;
		/* ".a" transmits into the 'a' rings, ".b" into the 'b' ones */
		snprintf(rname, sizeof(rname), "rnic_rp%u_%c%u", seq, end[n - 1], q);
		struct rte_ring *r = rte_ring_lookup(rname);
		if (r == NULL)
			errno = ENOENT;   /* no such queue */
		return r;
	}
	errno = ENOENT;
	return NULL;
}
