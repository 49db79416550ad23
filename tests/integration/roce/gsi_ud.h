/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Hand-built MADs for the IB CM tests (test_roce_cm.c, test_roce_cm_flood.c):
 * a UD QP that sends to the peer's QP1 from its own address, as a host's CM
 * would. The includer has included check.h (CHECK, CHECK_RC).
 */
#ifndef RNIC_TESTS_INTEGRATION_ROCE_GSI_UD_H
#define RNIC_TESTS_INTEGRATION_ROCE_GSI_UD_H

#include <errno.h>
#include <string.h>

#include "rnic/rnic_roce.h"
#include "rnic/rnic_verbs.h"

/*
 * A UD QP on @p pd, both queues on @p cq, in RTS, stored in @p *qp as soon
 * as it exists (the caller frees it however the case ends); its own Q_Key
 * is the GSI's, 0x80010000: a Q_Key with the high bit set in a work request
 * means "the QP's" (IBA 10.2.5). @return an AH on @p pd to GID 1 of
 * @p peer, whose QP1 then takes the QP's MADs.
 */
static inline struct ibv_ah *gsi_ud_to(struct ibv_pd *pd, struct ibv_cq *cq,
				       struct ibv_context *peer, struct ibv_qp **qp)
{
	struct ibv_qp_init_attr qa = { .send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_UD,
				       .cap = { .max_send_wr = 16, .max_recv_wr = 16,
						.max_send_sge = 1, .max_recv_sge = 1 } };
	struct ibv_qp *ud = *qp = rnic_create_qp_transport(pd, &qa, RNIC_TRANSPORT_ROCE);
	CHECK(ud != NULL, "A: UD QP: %s", strerror(errno));
	struct ibv_qp_attr at = { .qp_state = IBV_QPS_INIT, .port_num = 1, .qkey = 0x80010000 };
	CHECK_RC(rnic_modify_qp(ud, &at, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
				IBV_QP_QKEY), 0);
	at = (struct ibv_qp_attr){ .qp_state = IBV_QPS_RTR };
	CHECK_RC(rnic_modify_qp(ud, &at, IBV_QP_STATE), 0);
	at = (struct ibv_qp_attr){ .qp_state = IBV_QPS_RTS, .sq_psn = 1 };
	CHECK_RC(rnic_modify_qp(ud, &at, IBV_QP_STATE | IBV_QP_SQ_PSN), 0);
	union ibv_gid gid;
	CHECK_RC(rnic_query_gid(peer, 1, 1, &gid), 0);
	struct ibv_ah_attr aha = { .is_global = 1, .port_num = 1,
				   .grh = { .dgid = gid, .sgid_index = 1, .hop_limit = 64 } };
	struct ibv_ah *ah = rnic_create_ah(pd, &aha);
	CHECK(ah != NULL, "create_ah: %s", strerror(errno));
	return ah;
}

#endif
