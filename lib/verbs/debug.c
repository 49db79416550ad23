/* SPDX-License-Identifier: BSD-3-Clause */
/* rnic_qp_dump(): a QP's transport state as text, for hang reports. */
#include <stdio.h>

#include "engine/worker.h"
#include "verbs/verbs.h"

struct dump_arg {
	struct rnic_qp *qp;
	FILE *f;
};

static void dump_on_worker(struct rnic_worker *w, void *arg)
{
	(void)w;
	struct dump_arg *a = arg;
	a->qp->tops->dump(a->qp, a->f);
}

void rnic_qp_dump(struct ibv_qp *iqp, FILE *f)
{
	struct rnic_qp *qp = qp_of(iqp);
	struct dump_arg a = { qp, f };
	fprintf(f, "  qp %u: transport %s state %d conn %d in_error %d sq %u/%u/%u "
		"(prod/cons/retired)\n", iqp->qp_num, qp->tops->name, (int)iqp->state,
		qp->conn, qp->in_error, qp->sq_prod, qp->sq_cons, qp->sq_retired);
	struct rnic_worker *w = __atomic_load_n(&qp->w, __ATOMIC_ACQUIRE);
	if (qp->tops->dump == NULL)
		return;
	if (w != NULL)
		rnic_worker_call_sync(w, dump_on_worker, &a);
	else
		qp->tops->dump(qp, f);   /* no worker owns it: nothing runs it */
}
