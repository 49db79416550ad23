/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * RoCEv2 unreliable datagrams (IBTA 9.8, annex A17): address handles, UD
 * SEND ONLY (with Immediate) packets carrying a DETH, and receives that
 * start with the 40-byte GRH.
 *
 * A datagram is one packet of at most the QP's path MTU (the largest the
 * port carries). Sending completes when the packet is handed to the port:
 * nothing acknowledges a datagram. A receive gets the GRH (for IPv6 the
 * 40-byte IPv6 header; for IPv4, 20 zero bytes and the IPv4 header, as
 * rxe lays them out) and then the
 * payload; its completion carries the source QP and IBV_WC_GRH. A Q_Key
 * that does not match, a missing receive or one too small drop the
 * datagram, counted (IBA 9.8.3: no error reaches either side).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "net/ipv6.h"
#include "roce/psn.h"
#include "roce/roce.h"

/* The addresses of a RoCEv2 address handle: a source GID of a port of
 * @p st and a DGID of the same family (roce_addr.h). */
int roce_ah_resolve(const struct rnic_stack *st, const struct ibv_ah_attr *attr,
		    struct rnic_ah *ah)
{
	if (!attr->is_global || attr->port_num < 1 || attr->port_num > st->n_ports ||
	    rnic_roce_path(st->ports[attr->port_num - 1], attr->grh.sgid_index,
			   attr->grh.dgid.raw, &ah->src, &ah->dst) != 0)
		return -EINVAL;
	ah->tos = attr->grh.traffic_class;
	ah->port_num = attr->port_num;
	ah->hop_limit = attr->grh.hop_limit;
	ah->flow_label = attr->grh.flow_label & RNIC_IP6_FLOW_MASK;
	return 0;
}

int roce_ud_post(struct roce_qp *rq, const struct ibv_send_wr *wr)
{
	const struct rnic_ah *ah = (const struct rnic_ah *)wr->wr.ud.ah;
	uint64_t len = 0;
	for (int i = 0; i < wr->num_sge; i++)
		len += wr->sg_list[i].length;
	struct ibv_wc wc = { .wr_id = wr->wr_id, .status = IBV_WC_SUCCESS,
			     .byte_len = (uint32_t)len };
	bool imm = wr->opcode == IBV_WR_SEND_WITH_IMM;
	uint8_t op = imm ? RNIC_ROCE_OP_UD_SEND_ONLY_IMM : RNIC_ROCE_OP_UD_SEND_ONLY;
	uint8_t *hdr, *pay;
	struct rte_mbuf *m = NULL;
	if (len > rq->pmtu) {
		wc.status = IBV_WC_LOC_LEN_ERR;   /* a datagram is one packet */
	} else {
		m = roce_pkt_new(rq, op, rq->ud_psn, false,
				 (wr->send_flags & IBV_SEND_SOLICITED) != 0, (uint32_t)len, &hdr, &pay);
		if (m == NULL)
			return -ENOMEM;   /* no mbuf: the verbs layer retries it */
	}
	if (m != NULL) {
		struct rnic_roce_pkt p = { .bth = rte_pktmbuf_mtod(m, uint8_t *), .opcode = op };
		rnic_roce_bth_set_dqpn(rnic_roce_pkt_bth(&p), wr->wr.ud.remote_qpn);
		struct rnic_roce_deth *deth = rnic_roce_pkt_deth(&p);
		/* a Q_Key with the high bit set means "use the QP's" (IBA 10.2.5) */
		uint32_t qkey = (wr->wr.ud.remote_qkey & RNIC_ROCE_QKEY_CONTROLLED) ? rq->qkey
										    : wr->wr.ud.remote_qkey;
		rnic_roce_deth_set_qkey(deth, qkey);
		rnic_roce_deth_set_sqp(deth, rq->qp->qp.qp_num);
		if (imm)
			rnic_roce_immdt_set_imm(rnic_roce_pkt_immdt(&p), wr->imm_data);
		roce_sgl_copy_out(wr->sg_list, (uint32_t)wr->num_sge, 0, pay, (uint32_t)len);
		rq->ud_psn = rnic_psn_next(rq->ud_psn);
		rq->rw->c.ud_pkts_out++;
		__atomic_store_n(&rq->qp->xfer.bytes_out, rq->qp->xfer.bytes_out + len,
				 __ATOMIC_RELAXED);
		roce_pkt_send_av(rq, m, &ah->src, &ah->dst, ah->tos, ah->flow_label,
				 ah->hop_limit);
	}
	rnic_qp_complete(rq->qp, &wc, false);
	return 0;
}

void roce_ud_input(struct roce_qp *rq, const struct rnic_roce_pkt *pkt,
		   const struct rte_mbuf *m, uint32_t pay_off, const struct roce_l3 *l3)
{
	const struct rnic_roce_deth *deth = rnic_roce_pkt_deth(pkt);
	struct rnic_rwqe r;
	if (rnic_roce_deth_qkey(deth) != rq->qkey) {
		rq->rw->c.ud_bad_qkey++;
		return;
	}
	if (pkt->paylen > rq->pmtu) {
		rq->rw->c.ud_too_long++;
		return;
	}
	if (!rnic_rq_take(rq->qp->rqp, &r)) {
		rq->rw->c.ud_no_recv++;
		return;
	}
	uint32_t need = RNIC_ROCE_GRH_LEN + pkt->paylen;
	struct ibv_wc wc = { .wr_id = r.wr_id, .opcode = IBV_WC_RECV, .byte_len = need,
			     .src_qp = rnic_roce_deth_sqp(deth), .wc_flags = IBV_WC_GRH };
	if (r.total < need) {
		wc.status = IBV_WC_LOC_LEN_ERR;   /* the receive is used up, nothing placed */
		wc.byte_len = 0;
		rq->rw->c.ud_too_long++;
	} else {
		/* IPv6: the header itself is the GRH; IPv4: rxe's layout */
		uint8_t g[RNIC_ROCE_GRH_LEN];
		rnic_roce_grh_fill(g, l3->hdr);
		const struct ibv_sge *sge = r.sge;
		/* the GRH, then the payload, through the scatter list */
		uint32_t off = 0;
		for (uint32_t i = 0; i < r.num_sge && off < sizeof(g); i++) {
			uint32_t take = RTE_MIN(sge[i].length, (uint32_t)sizeof(g) - off);
			memcpy((void *)(uintptr_t)sge[i].addr, g + off, take);
			off += take;
		}
		roce_sgl_copy_in(sge, r.num_sge, sizeof(g), m, pay_off, pkt->paylen);
		if (pkt->flags & RNIC_ROCE_OPF_IMMDT) {
			wc.wc_flags |= IBV_WC_WITH_IMM;
			wc.imm_data = rnic_roce_immdt_imm(rnic_roce_pkt_immdt(pkt));
		}
		__atomic_store_n(&rq->qp->xfer.bytes_in, rq->qp->xfer.bytes_in + pkt->paylen,
				 __ATOMIC_RELAXED);
	}
	rq->rw->c.ud_pkts_in++;
	rnic_qp_complete(rq->qp, &wc, rnic_roce_pkt_se(pkt));
}
