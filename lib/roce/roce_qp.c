/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * RoCEv2 RC queue pairs behind the verbs objects (struct rnic_qp_tops).
 * Not implemented yet: creating a RoCE QP fails with EOPNOTSUPP, so no
 * application can believe it has one.
 */
#include <errno.h>

#include "verbs/verbs.h"

static int roce_create(struct rnic_qp *qp)
{
	(void)qp;
	return -EOPNOTSUPP;
}

const struct rnic_qp_tops rnic_roce_tops = {
	.create = roce_create,
};
