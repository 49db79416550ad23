/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Per-QP telemetry (issue 21: usable at 100,000 QPs): one QP by number,
 * and a bounded, paged list of QP numbers. Nothing dumps every QP.
 *
 *   /rnic/qp,QPN[,STACK]             the QP numbered QPN of every stack
 *                                    (or of stack STACK): state, queue
 *                                    depths and positions, counters,
 *                                    PSNs (RoCE) or MSNs and TCP
 *                                    sequence numbers (iWARP)
 *   /rnic/qps[,START[,COUNT[,STACK]]] per stack: how many QPs there are,
 *                                    and the numbers and states of at
 *                                    most COUNT (default 32, at most 256)
 *                                    from QPN START on; "next" is the
 *                                    START of the next page, 0 at the end
 *
 * The generic part is read under the device lock, which QP destruction
 * takes; the transport's part is read on the QP's worker (a destroyed
 * QP is freed only after every worker passed a quiescent point, and the
 * QP is looked up again there), and only while the stack's workers run
 * on their lcores: for a stack its application drives (rnic_stack_poll)
 * the call would run on this thread, beside the loop that owns the
 * state, so it is skipped ("transport_read": 0).
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_telemetry.h>

#include "engine/engine_internal.h"
#include "engine/worker.h"
#include "rdma/rdma.h"
#include "verbs/verbs.h"

#define TEL_QPS_DEFAULT 32
#define TEL_QPS_MAX     256   /* two arrays of 256 fit the 16 KiB reply */

static const char *const conn_names[] = {
	[QP_IDLE] = "idle", [QP_CONNECTING] = "connecting",
	[QP_CONNECTED] = "connected", [QP_CLOSED] = "closed",
};

/* Parse up to @p max comma-separated unsigned numbers of @p params into
 * @p v. @return how many, or -EINVAL (not a number list, too many). */
static int tel_params(const char *params, unsigned long *v, int max)
{
	int n = 0;
	const char *p = params;
	if (p == NULL || *p == '\0')
		return 0;
	for (;;) {
		char *end;
		if (n == max || *p < '0' || *p > '9')
			return -EINVAL;
		v[n++] = strtoul(p, &end, 10);
		if (*end == '\0')
			return n;
		if (*end != ',')
			return -EINVAL;
		p = end + 1;
	}
}

/* --- /rnic/qp ------------------------------------------------------------------ */

struct tel_qp_call {
	uint32_t qpn;
	struct rte_tel_data *d;
};

/* On the QP's worker: the transport's part (the QP looked up again: it
 * may have been destroyed since, and cannot be freed while this runs). */
static void tel_qp_transport(struct rnic_worker *w, void *arg)
{
	struct tel_qp_call *c = arg;
	struct rnic_qp *qp = rnic_qp_by_num(w->st, c->qpn);
	if (qp != NULL && qp->w == w && qp->tops->telemetry != NULL)
		qp->tops->telemetry(qp, c->d);
}

/* The generic part of @p qp into @p d; device lock held. */
static void tel_qp_generic(struct rnic_qp *qp, struct rte_tel_data *d)
{
	struct ibv_qp_attr at;
	struct ibv_qp_init_attr init;
	struct rnic_qp_stats s;
	int conn = qp->conn;

	rnic_query_qp(&qp->qp, &at, 0, &init);
	rnic_qp_stats(&qp->qp, &s);
	rte_tel_data_add_dict_u64(d, "qpn", qp->qp.qp_num);
	rte_tel_data_add_dict_string(d, "transport", qp->tops->name);
	rte_tel_data_add_dict_string(d, "type", qp->qp.qp_type == IBV_QPT_UD ? "UD" : "RC");
	rte_tel_data_add_dict_int(d, "state", at.qp_state);
	rte_tel_data_add_dict_string(d, "conn", conn >= QP_IDLE && conn <= QP_CLOSED ?
				     conn_names[conn] : "?");
	rte_tel_data_add_dict_int(d, "worker", qp->w != NULL ? (int)qp->w->id : -1);
	rte_tel_data_add_dict_int(d, "in_error", qp->in_error);
	/* queue depths and positions (free-running counters) */
	rte_tel_data_add_dict_u64(d, "sq_size", qp->sq_size);
	rte_tel_data_add_dict_u64(d, "sq_posted", qp->sq_prod - qp->sq_retired);
	rte_tel_data_add_dict_u64(d, "sq_prod", qp->sq_prod);
	rte_tel_data_add_dict_u64(d, "sq_cons", qp->sq_cons);
	rte_tel_data_add_dict_u64(d, "sq_retired", qp->sq_retired);
	rte_tel_data_add_dict_int(d, "srq", qp->rqp != &qp->rq);
	rte_tel_data_add_dict_u64(d, "rq_size", qp->rqp->size);
	rte_tel_data_add_dict_u64(d, "rq_posted", qp->rqp->prod - qp->rqp->cons);
	/* RoCE: PSNs and the peer (zero for iWARP, which has MSNs below) */
	rte_tel_data_add_dict_u64(d, "sq_psn", at.sq_psn);
	rte_tel_data_add_dict_u64(d, "rq_psn", at.rq_psn);
	rte_tel_data_add_dict_u64(d, "dest_qp_num", at.dest_qp_num);
	rte_tel_data_add_dict_u64(d, "max_rd_atomic", at.max_rd_atomic);
	rte_tel_data_add_dict_u64(d, "max_dest_rd_atomic", at.max_dest_rd_atomic);
#define TEL_QS(f) rte_tel_data_add_dict_u64(d, #f, s.f)
	TEL_QS(send_wrs); TEL_QS(recv_wrs); TEL_QS(completions); TEL_QS(flushed);
	TEL_QS(bytes_in); TEL_QS(bytes_out); TEL_QS(ops_in); TEL_QS(ops_out);
	TEL_QS(sq_full); TEL_QS(rq_full); TEL_QS(terminates_in); TEL_QS(terminates_out);
	TEL_QS(fpdus_packed);
#undef TEL_QS
	rte_tel_data_add_dict_int(d, "fatal", s.fatal);
}

/* One stack's QP @p qpn into a new container under "stackN" of @p d
 * (nothing when the stack has no such QP). */
static int tel_qp_of_stack(struct rnic_stack *st, uint32_t qpn, struct rte_tel_data *d)
{
	struct rnic_verbs_stack *vs = verbs_st(st);
	struct rnic_worker *w = NULL;
	struct rte_tel_data *c = NULL;
	char key[32];

	if (vs == NULL)
		return 0;
	pthread_mutex_lock(&vs->lock);
	struct rnic_device *dev = vs->dev;
	if (dev != NULL) {
		pthread_mutex_lock(&dev->lock);
		struct rnic_qp *qp = rnic_qp_by_num(st, qpn);
		if (qp != NULL && (c = rte_tel_data_alloc()) != NULL) {
			rte_tel_data_start_dict(c);
			tel_qp_generic(qp, c);
			w = qp->w;
		}
		pthread_mutex_unlock(&dev->lock);
	}
	pthread_mutex_unlock(&vs->lock);
	if (c == NULL)
		return 0;
	bool read = w != NULL && st->running;
	if (read) {
		struct tel_qp_call call = { .qpn = qpn, .d = c };
		rnic_worker_call_sync(w, tel_qp_transport, &call);
	}
	rte_tel_data_add_dict_int(c, "transport_read", read);
	snprintf(key, sizeof(key), "stack%u", st->id);
	if (rte_tel_data_add_dict_container(d, key, c, 0) != 0) {
		rte_tel_data_free(c);
		return -ENOSPC;
	}
	return 0;
}

struct tel_walk {
	unsigned long v[3];
	int n;
	struct rte_tel_data *d;
	int rc;
};

static void tel_qp_walk(struct rnic_stack *st, void *arg)
{
	struct tel_walk *tw = arg;
	if (tw->rc == 0 && (tw->n < 2 || tw->v[1] == st->id))
		tw->rc = tel_qp_of_stack(st, (uint32_t)tw->v[0], tw->d);
}

static int tel_qp(const char *cmd, const char *params, struct rte_tel_data *d)
{
	(void)cmd;
	struct tel_walk tw = { .d = d };
	tw.n = tel_params(params, tw.v, 2);
	if (tw.n < 1 || tw.v[0] >= RNIC_MAX_QP || (tw.n == 2 && tw.v[1] >= RNIC_MAX_STACKS))
		return -EINVAL;
	rte_tel_data_start_dict(d);
	rnic_registry_foreach(tel_qp_walk, &tw);
	return tw.rc;
}

/* --- /rnic/qps ----------------------------------------------------------------- */

/* One stack's page: {"total", "start", "count", "next", "qpn": [], "state": []}. */
static void tel_qps_of_stack(struct rnic_stack *st, void *arg)
{
	struct tel_walk *tw = arg;
	struct rnic_verbs_stack *vs = verbs_st(st);
	unsigned long start = tw->n >= 1 ? tw->v[0] : 0;
	unsigned long want = tw->n >= 2 ? tw->v[1] : TEL_QPS_DEFAULT;
	char key[32];

	if (tw->rc != 0 || vs == NULL || (tw->n == 3 && tw->v[2] != st->id))
		return;
	struct rte_tel_data *c = rte_tel_data_alloc(), *qpns = rte_tel_data_alloc(),
			    *states = rte_tel_data_alloc();
	if (c == NULL || qpns == NULL || states == NULL) {
		rte_tel_data_free(c);
		rte_tel_data_free(qpns);
		rte_tel_data_free(states);
		tw->rc = -ENOMEM;
		return;
	}
	rte_tel_data_start_dict(c);
	rte_tel_data_start_array(qpns, RTE_TEL_U64_VAL);
	rte_tel_data_start_array(states, RTE_TEL_INT_VAL);
	unsigned total = 0, count = 0;
	uint32_t next = 0;
	pthread_mutex_lock(&vs->lock);
	struct rnic_device *dev = vs->dev;
	if (dev != NULL) {
		pthread_mutex_lock(&dev->lock);
		total = dev->n_qp;
		/* the walk stops after the page: at most one table's length */
		for (uint32_t q = (uint32_t)start; q < RNIC_MAX_QP && total > 0; q++) {
			struct rnic_qp *qp = rnic_qp_by_num(st, q);
			if (qp == NULL)
				continue;
			if (count == want) {
				next = q;
				break;
			}
			rte_tel_data_add_array_u64(qpns, q);
			rte_tel_data_add_array_int(states,
						   __atomic_load_n(&qp->qp.state, __ATOMIC_ACQUIRE));
			count++;
		}
		pthread_mutex_unlock(&dev->lock);
	}
	pthread_mutex_unlock(&vs->lock);
	rte_tel_data_add_dict_u64(c, "total", total);
	rte_tel_data_add_dict_u64(c, "start", start);
	rte_tel_data_add_dict_u64(c, "count", count);
	rte_tel_data_add_dict_u64(c, "next", next);
	if (rte_tel_data_add_dict_container(c, "qpn", qpns, 0) != 0)
		rte_tel_data_free(qpns);
	if (rte_tel_data_add_dict_container(c, "state", states, 0) != 0)
		rte_tel_data_free(states);
	snprintf(key, sizeof(key), "stack%u", st->id);
	if (rte_tel_data_add_dict_container(tw->d, key, c, 0) != 0)
		rte_tel_data_free(c);
}

static int tel_qps(const char *cmd, const char *params, struct rte_tel_data *d)
{
	(void)cmd;
	struct tel_walk tw = { .d = d };
	tw.n = tel_params(params, tw.v, 3);
	if (tw.n < 0 || (tw.n >= 1 && tw.v[0] >= RNIC_MAX_QP) ||
	    (tw.n >= 2 && (tw.v[1] == 0 || tw.v[1] > TEL_QPS_MAX)) ||
	    (tw.n == 3 && tw.v[2] >= RNIC_MAX_STACKS))
		return -EINVAL;
	rte_tel_data_start_dict(d);
	rnic_registry_foreach(tel_qps_of_stack, &tw);
	return tw.rc;
}

void rnic_verbs_telemetry_init(void)
{
	static bool done;

	if (__atomic_exchange_n(&done, true, __ATOMIC_ACQ_REL))
		return;
	rte_telemetry_register_cmd("/rnic/qp", tel_qp,
		"One QP: state, queues, counters, PSNs (RoCE) or MSNs and TCP sequence numbers (iWARP); params: QPN[,stack]");
	rte_telemetry_register_cmd("/rnic/qps", tel_qps,
		"QP numbers and states, a page per stack: total, next; params: [start[,count (1..256, default 32)[,stack]]]");
}
