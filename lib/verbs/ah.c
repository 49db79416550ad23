/* SPDX-License-Identifier: BSD-3-Clause */
/* Address handles (UD QPs): the address comes from a datagram transport
 * (rnic_qp_tops.ah_resolve: RoCE's IPv4-mapped GIDs). */
#include <errno.h>
#include <stdlib.h>

#include "rdma/qp.h"
#include "rdma/rdma.h"
#include "verbs/verbs.h"

struct ibv_ah *rnic_create_ah(struct ibv_pd *pd, struct ibv_ah_attr *attr)
{
	struct rnic_device *d = pd ? dev_of(pd->context) : NULL;
	if (d == NULL || attr == NULL) {
		errno = EINVAL;
		return NULL;
	}
	const struct rnic_qp_tops *tp = NULL;
	for (int t = RNIC_TRANSPORT_IWARP; t < RNIC_TRANSPORT_COUNT && tp == NULL; t++) {
		tp = rnic_transport(d->st, t);
		tp = tp != NULL && tp->ah_resolve != NULL ? tp : NULL;
	}
	struct rnic_ah *a = calloc(1, sizeof(*a));
	if (a == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	if (tp == NULL || tp->ah_resolve(d->st, attr, a) != 0) {
		free(a);
		errno = EINVAL;
		return NULL;
	}
	a->ah.context = pd->context;
	a->ah.pd = pd;
	return &a->ah;
}

int rnic_destroy_ah(struct ibv_ah *ah)
{
	free(ah);
	return 0;
}
