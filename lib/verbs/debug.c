/* SPDX-License-Identifier: BSD-3-Clause */
/* rnic_qp_dump(): a QP's transport state as text, for hang reports. */
#include <stdio.h>

#include "engine/worker.h"
#include "iwarp/iw_ep.h"
#include "verbs/verbs.h"

struct dump_arg {
	struct rnic_qp *qp;
	FILE *f;
};

static void dump_on_worker(struct rnic_worker *w, void *arg)
{
	(void)w;
	struct dump_arg *a = arg;
	if (a->qp->ep != NULL)
		rnic_iw_dump(a->qp->ep, a->f);
	else
		fprintf(a->f, "  (no endpoint: conn %d, in_error %d)\n", a->qp->conn,
			a->qp->in_error);
}

void rnic_qp_dump(struct ibv_qp *iqp, FILE *f)
{
	struct rnic_qp *qp = qp_of(iqp);
	struct dump_arg a = { qp, f };
	fprintf(f, "  qp %u: transport %d state %d sq %u/%u/%u (prod/cons/retired)\n",
		iqp->qp_num, (int)qp->transport, (int)iqp->state, qp->sq_prod, qp->sq_cons,
		qp->sq_retired);
	if (qp->transport == RNIC_TRANSPORT_IWARP && qp->w != NULL)
		rnic_worker_call_sync(qp->w, dump_on_worker, &a);
}
