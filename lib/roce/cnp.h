/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * RoCEv2 congestion notification packets (IBTA annex A17.9.3) and the
 * notification point's pacing of them: pure, no EAL.
 *
 * A CNP is a BTH with opcode 0x81, P_Key 0xffff, the BECN bit set, DestQP
 * the QP whose packet arrived marked CE (the flow's sender), PSN 0, no
 * AckReq, then 16 reserved bytes of zero and the ICRC. It carries no
 * payload. rnic sends it with DSCP 48 and ECN Not-ECT (0xc0 in the IPv4
 * TOS byte), NVIDIA's default for CNPs (cnp_dscp 48): a CNP is not
 * ECN-capable, so a switch drops rather than marks it, and a CNP never
 * causes another CNP.
 */
#ifndef RNIC_ROCE_CNP_H
#define RNIC_ROCE_CNP_H

#include <stdbool.h>
#include <stdint.h>

#include "roce/opcode.h"

#define RNIC_ROCE_CNP_LEN  (RNIC_ROCE_BTH_LEN + RNIC_ROCE_CNP_RSVD_LEN)   /* 28 */
#define RNIC_ROCE_CNP_TOS  0xc0u      /* DSCP 48, ECN 00 */

/* IPv4 ECN codepoints (RFC 3168), the low two bits of the TOS byte. */
#define RNIC_ECN_MASK     0x03u
#define RNIC_ECN_NOT_ECT  0x00u
#define RNIC_ECN_ECT1     0x01u
#define RNIC_ECN_ECT0     0x02u
#define RNIC_ECN_CE       0x03u

/** Write the 28 transport bytes of a CNP to @p dqpn at @p b (BTH and the
 * reserved bytes; the ICRC follows them). */
void rnic_roce_cnp_fill(uint8_t b[RNIC_ROCE_CNP_LEN], uint32_t dqpn);

/** One QP's CNP pacing: at most one CNP per interval. */
struct rnic_cnp_limiter {
	uint64_t next_us;   /**< earliest time the next CNP may leave; 0: now */
};

/**
 * A CE-marked packet arrived at @p now_us: may a CNP go? It may when the
 * interval since the last one passed (or @p interval_us is 0, a CNP per
 * mark); then the next is pushed @p interval_us out.
 */
static inline bool rnic_cnp_allow(struct rnic_cnp_limiter *l, uint64_t now_us,
				  uint32_t interval_us)
{
	if (now_us < l->next_us)
		return false;
	l->next_us = now_us + interval_us;
	return true;
}

#endif
