/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * CNP header bytes (see cnp.h), through the BTH accessors so every field
 * lands where the rest of lib/roce reads it.
 */
#include <string.h>

#include "roce/cnp.h"
#include "roce/roce_wire.h"

void rnic_roce_cnp_fill(uint8_t b[RNIC_ROCE_CNP_LEN], uint32_t dqpn)
{
	struct rnic_roce_bth *bth = (struct rnic_roce_bth *)b;
	memset(b, 0, RNIC_ROCE_CNP_LEN);
	rnic_roce_bth_set_opcode(bth, RNIC_ROCE_OP_CNP);
	rnic_roce_bth_set_tver(bth, RNIC_ROCE_TVER);
	rnic_roce_bth_set_pkey(bth, RNIC_ROCE_PKEY_DEFAULT);
	rnic_roce_bth_set_dqpn(bth, dqpn);
	/* BECN: "this packet is a congestion notification" (A17.9.3) */
	rnic_roce_bth_set_becn(bth, true);
	rnic_roce_bth_set_psn(bth, 0);
}
