/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The IB CM's connection tables (ibcm_hash.h): singly linked chains in a
 * power-of-two bucket array that doubles as the table fills.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "roce/ibcm_hash.h"

/* A 64-bit finaliser (the MurmurHash3 fmix64 constants): spreads
 * sequential comm IDs and GUIDs over the low bits the mask keeps. */
static uint64_t mix64(uint64_t k)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdull;
	k ^= k >> 33;
	k *= 0xc4ceb9fe1a85ec53ull;
	k ^= k >> 33;
	return k;
}

uint64_t ibcm_hash_lid(uint32_t lid)
{
	return mix64(lid);
}

uint64_t ibcm_hash_req(const struct rnic_addr *peer, uint32_t rid, uint64_t guid)
{
	uint64_t h = mix64(((uint64_t)peer->family << 32) | rid) ^ mix64(guid);
	if (peer->family == RNIC_AF_INET6) {
		uint64_t hi, lo;
		memcpy(&hi, peer->v6, 8);
		memcpy(&lo, peer->v6 + 8, 8);
		h = mix64(h ^ hi) ^ mix64(lo + 0x9e3779b97f4a7c15ull);
	} else {
		h = mix64(h ^ peer->v4);
	}
	return h;
}

int ibcm_hash_init(struct ibcm_hash *t, uint32_t buckets)
{
	uint32_t nb = 16;
	while (nb < buckets && nb < (1u << 30))
		nb <<= 1;
	t->b = calloc(nb, sizeof(*t->b));
	if (t->b == NULL)
		return -ENOMEM;
	t->mask = nb - 1;
	t->n = 0;
	return 0;
}

void ibcm_hash_fini(struct ibcm_hash *t)
{
	free(t->b);
	t->b = NULL;
	t->mask = 0;
	t->n = 0;
}

/* Double the buckets, moving every node; on no memory keep the old ones. */
static void hash_grow(struct ibcm_hash *t)
{
	uint32_t nb = (t->mask + 1) * 2;
	if (nb == 0 || nb > (1u << 30))
		return;
	struct ibcm_hnode **b = calloc(nb, sizeof(*b));
	if (b == NULL)
		return;
	for (uint32_t i = 0; i <= t->mask; i++) {
		struct ibcm_hnode *n = t->b[i], *nx;
		for (; n != NULL; n = nx) {
			nx = n->next;
			struct ibcm_hnode **head = &b[n->h & (nb - 1)];
			n->next = *head;
			*head = n;
		}
	}
	free(t->b);
	t->b = b;
	t->mask = nb - 1;
}

void ibcm_hash_add(struct ibcm_hash *t, struct ibcm_hnode *n, uint64_t h)
{
	if (t->n >= t->mask + 1)
		hash_grow(t);
	n->h = h;
	struct ibcm_hnode **head = &t->b[h & t->mask];
	n->next = *head;
	*head = n;
	t->n++;
}

void ibcm_hash_del(struct ibcm_hash *t, struct ibcm_hnode *n)
{
	for (struct ibcm_hnode **pp = &t->b[n->h & t->mask]; *pp != NULL; pp = &(*pp)->next)
		if (*pp == n) {
			*pp = n->next;
			n->next = NULL;
			t->n--;
			return;
		}
}

struct ibcm_hnode *ibcm_hash_first(const struct ibcm_hash *t, uint64_t h)
{
	struct ibcm_hnode *n = t->b[h & t->mask];
	while (n != NULL && n->h != h)
		n = n->next;
	return n;
}

struct ibcm_hnode *ibcm_hash_next(const struct ibcm_hnode *n)
{
	uint64_t h = n->h;
	for (n = n->next; n != NULL && n->h != h; n = n->next)
		;
	return (struct ibcm_hnode *)n;
}
