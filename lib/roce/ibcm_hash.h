/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * An intrusive chained hash for the IB CM's connections (roce_cm.c): one
 * table by local communication ID (every message after the REQ names it),
 * one by the REQ's identity (peer address, remote comm ID, CA GUID) for
 * duplicate REQs. The CM walked its list of every connection, TIMEWAIT
 * ones included, for each MAD.
 *
 * The table holds nodes and their 64-bit hashes; the caller compares its
 * own keys along a chain (ibcm_hash_first / ibcm_hash_next). The bucket
 * array doubles when the table holds more nodes than buckets; if that
 * allocation fails the chains just grow longer. Control path, one thread
 * (worker 0).
 */
#ifndef RNIC_ROCE_IBCM_HASH_H
#define RNIC_ROCE_IBCM_HASH_H

#include <stdint.h>

#include "rnic/rnic.h"

struct ibcm_hnode {
	struct ibcm_hnode *next;
	uint64_t h;
};

struct ibcm_hash {
	struct ibcm_hnode **b;
	uint32_t mask;   /**< buckets - 1 (a power of two) */
	uint32_t n;      /**< nodes held */
};

/** @return 0 or -ENOMEM. */
int ibcm_hash_init(struct ibcm_hash *t, uint32_t buckets);
/** Free the buckets (the nodes are the caller's). */
void ibcm_hash_fini(struct ibcm_hash *t);
/** Add @p n under hash @p h. */
void ibcm_hash_add(struct ibcm_hash *t, struct ibcm_hnode *n, uint64_t h);
/** Remove @p n (added before). */
void ibcm_hash_del(struct ibcm_hash *t, struct ibcm_hnode *n);
/** The first node with hash @p h, or NULL. */
struct ibcm_hnode *ibcm_hash_first(const struct ibcm_hash *t, uint64_t h);
/** The next node after @p n with the same hash, or NULL. */
struct ibcm_hnode *ibcm_hash_next(const struct ibcm_hnode *n);

/** Hash of a local communication ID. */
uint64_t ibcm_hash_lid(uint32_t lid);
/** Hash of a REQ's identity: the peer's address, its comm ID and CA GUID. */
uint64_t ibcm_hash_req(const struct rnic_addr *peer, uint32_t rid, uint64_t guid);

#endif
