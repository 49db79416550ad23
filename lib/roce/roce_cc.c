/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * RoCEv2 congestion control on the QP's worker (docs/roce.md, "Congestion
 * control"):
 *
 *   notification point   an RC packet arriving with ECN = CE makes the QP
 *                        send its peer a CNP (cnp.h), at most one per
 *                        cnp_interval_us; always on
 *   ECN marking          with [roce] ecn = on the QP's RC packets leave
 *                        ECT(0), so a congested switch may mark them
 *   reaction point       with [roce] dcqcn = on each RC QP keeps a DCQCN
 *                        rate (dcqcn.h): a CNP cuts it, its timers and
 *                        byte counter raise it, and the requester's
 *                        packets (first transmissions and go-back-N
 *                        resends alike) are paced to it by a token bucket
 *
 * The bucket is checked before each requester packet: when it is empty
 * the pacing timer is armed for the moment it holds a packet again and
 * the requester stops; the timer activates the QP (no busy waiting).
 * Responses (ACKs, Read Responses, Atomic ACKs) and CNPs are not paced.
 */
#include <errno.h>

#include <rte_cycles.h>

#include "engine/worker.h"
#include "roce/roce.h"
#include "rnic/rnic_roce.h"
#include "rnic/rnic_verbs.h"

/* The bucket holds what the current rate sends in this long, and at
 * least two full packets (a paced QP still sends back to back pairs). */
#define CC_BURST_US 20u
#define CC_HDR_BYTES 78u   /* Ethernet 14, IPv4 20, UDP 8, BTH 12, RETH 16, ImmDt 4, ICRC 4 */

static uint64_t cc_now_us(const struct roce_qp *rq)
{
	return rnic_tsc_to_us(rq->w->now_tsc);
}

void roce_cc_worker_init(struct roce_worker *rw, const struct rnic_roce_cc_cfg *cfg)
{
	rw->cc = (struct roce_cc_conf){
		.ecn = cfg->ecn,
		.dcqcn = cfg->dcqcn,
		.cnp_interval_us = cfg->cnp_interval_us,
		.p = {
			.max_kbps = (uint64_t)cfg->max_rate_mbps * 1000,
			.min_kbps = (uint64_t)cfg->min_rate_mbps * 1000,
			.ai_kbps = (uint64_t)cfg->ai_rate_mbps * 1000,
			.hai_kbps = (uint64_t)cfg->hai_rate_mbps * 1000,
			.alpha_us = cfg->alpha_us,
			.rate_us = cfg->rate_us,
			.byte_reset = cfg->byte_reset,
			.f = cfg->f,
			.g_shift = cfg->g_shift,
		},
	};
	/* a configuration that slipped past the INI checks (a program
	 * filling struct rnic_config itself) must not divide by zero */
	if (rw->cc.dcqcn && !rnic_dcqcn_params_ok(&rw->cc.p))
		rw->cc.dcqcn = false;
}

static void pace_timer_cb(struct rnic_timer *t, void *arg)
{
	(void)t;
	struct roce_qp *rq = arg;
	if (rq->state == ROCE_RTS)
		roce_qp_activate(rq);
}

void roce_cc_qp_init(struct roce_qp *rq)
{
	rq->cnp = (struct rnic_cnp_limiter){ 0 };
	rnic_timer_init(&rq->pace_timer, pace_timer_cb, rq);
	if (!rq->rw->cc.dcqcn)
		return;
	rnic_dcqcn_init(&rq->dcqcn, &rq->rw->cc.p, cc_now_us(rq));
	rq->tokens = 0;
	rq->tokens_tsc = rq->w->now_tsc;
}

void roce_cc_qp_stop(struct roce_qp *rq)
{
	if (rq->w != NULL)
		rnic_timer_cancel(&rq->w->timers, &rq->pace_timer);
}

void roce_cc_ce(struct roce_qp *rq)
{
	struct roce_counters *c = &rq->rw->c;
	if (rq->state != ROCE_RTR && rq->state != ROCE_RTS)
		return;
	if (!rnic_cnp_allow(&rq->cnp, cc_now_us(rq), rq->rw->cc.cnp_interval_us)) {
		c->cnp_suppressed++;
		return;
	}
	uint8_t *hdr, *pay;
	struct rte_mbuf *m = roce_pkt_new(rq, RNIC_ROCE_OP_CNP, 0, false, false, 0, &hdr, &pay);
	if (m == NULL)
		return;   /* counted as no_mbuf; the next mark may try again */
	rnic_roce_cnp_fill(rte_pktmbuf_mtod(m, uint8_t *), rq->dest_qpn);
	roce_pkt_send_to(rq, m, NULL, &rq->dst, RNIC_ROCE_CNP_TOS);
	c->tx_cnp++;
}

/* Bytes the bucket may hold at the current rate. */
static int64_t bucket_depth(const struct roce_qp *rq)
{
	uint64_t burst = rq->dcqcn.rc_kbps * CC_BURST_US / 8000u;
	uint64_t two = 2u * (rq->pmtu + CC_HDR_BYTES);
	return (int64_t)(burst > two ? burst : two);
}

/* Run the DCQCN timers to @p now_us, counting the increases they made. */
static void cc_advance(struct roce_qp *rq, uint64_t now_us)
{
	uint64_t before = rq->dcqcn.increases;
	rnic_dcqcn_advance(&rq->dcqcn, &rq->rw->cc.p, now_us);
	rq->rw->c.cc_rate_increases += rq->dcqcn.increases - before;
}

void roce_cc_cnp_in(struct roce_qp *rq)
{
	if (!rq->rw->cc.dcqcn || rq->state != ROCE_RTS) {
		rq->rw->c.cnp_ignored++;
		return;
	}
	cc_advance(rq, cc_now_us(rq));
	rnic_dcqcn_cnp(&rq->dcqcn, &rq->rw->cc.p, cc_now_us(rq));
	rq->rw->c.cc_rate_cuts++;
	int64_t depth = bucket_depth(rq);
	if (rq->tokens > depth)
		rq->tokens = depth;
}

/* Add what the rate earned since the last fill, up to the depth. */
static void bucket_fill(struct roce_qp *rq)
{
	uint64_t now = rq->w->now_tsc, hz = rte_get_tsc_hz();
	uint64_t dt = now > rq->tokens_tsc ? now - rq->tokens_tsc : 0;
	int64_t depth = bucket_depth(rq);
	rq->tokens_tsc = now;
	/* past 10 ms any rate of interest has filled the bucket (and the
	 * product below stays far from overflowing) */
	if (dt > hz / 100) {
		rq->tokens = depth;
		return;
	}
	uint64_t earned = dt * (rq->dcqcn.rc_kbps * 125u) / hz;
	rq->tokens = rq->tokens + (int64_t)earned > depth ? depth : rq->tokens + (int64_t)earned;
}

bool roce_cc_tx_wait(struct roce_qp *rq, uint32_t bytes)
{
	(void)bytes;
	cc_advance(rq, cc_now_us(rq));
	bucket_fill(rq);
	if (rq->tokens > 0)
		return false;   /* a packet may overdraw: the debt delays the next */
	/* microseconds until the bucket is positive again, at least one */
	uint64_t need = (uint64_t)(-rq->tokens) + 1;
	uint64_t us = need * 8000u / rq->dcqcn.rc_kbps + 1;
	if (!rnic_timer_pending(&rq->pace_timer))
		rnic_timer_arm(&rq->w->timers, &rq->pace_timer, rq->w->now_tsc, us);
	rq->rw->c.cc_pace_waits++;
	return true;
}

void roce_cc_tx_sent(struct roce_qp *rq, uint32_t bytes)
{
	uint64_t before = rq->dcqcn.increases;
	rq->tokens -= bytes;
	rnic_dcqcn_sent(&rq->dcqcn, &rq->rw->cc.p, bytes, cc_now_us(rq));
	rq->rw->c.cc_rate_increases += rq->dcqcn.increases - before;
}

/* --- the debug accessor ------------------------------------------------------ */

struct cc_query {
	struct roce_qp *rq;
	struct rnic_roce_cc_info *info;
};

static void cc_query_on_worker(struct rnic_worker *w, void *arg)
{
	(void)w;
	struct cc_query *q = arg;
	struct roce_qp *rq = q->rq;
	const struct roce_cc_conf *cc = &rq->rw->cc;
	*q->info = (struct rnic_roce_cc_info){ .dcqcn = cc->dcqcn, .ecn = cc->ecn };
	if (!cc->dcqcn) {
		q->info->rate_kbps = q->info->target_kbps = cc->p.max_kbps;
		return;
	}
	/* the timers run lazily (on transmit and CNPs): bring them to now,
	 * as an idle QP's rate would have moved */
	cc_advance(rq, rnic_tsc_to_us(rte_rdtsc()));
	q->info->rate_kbps = rq->dcqcn.rc_kbps;
	q->info->target_kbps = rq->dcqcn.rt_kbps;
	q->info->alpha = rq->dcqcn.alpha;
	q->info->cuts = rq->dcqcn.cuts;
	q->info->increases = rq->dcqcn.increases;
}

int rnic_roce_qp_cc(struct ibv_qp *ibqp, struct rnic_roce_cc_info *info)
{
	if (ibqp == NULL || info == NULL)
		return -EINVAL;
	struct rnic_qp *qp = rnic_qp_of(ibqp);
	if (qp->transport != RNIC_TRANSPORT_ROCE || ibqp->qp_type != IBV_QPT_RC || qp->tp == NULL)
		return -EINVAL;
	struct roce_qp *rq = rq_of(qp);
	enum ibv_qp_state s = __atomic_load_n(&ibqp->state, __ATOMIC_ACQUIRE);
	if ((s != IBV_QPS_RTR && s != IBV_QPS_RTS) || rq->w == NULL)
		return -ENOTCONN;
	struct cc_query q = { rq, info };
	return rnic_worker_call_sync(rq->w, cc_query_on_worker, &q);
}
