/* SPDX-License-Identifier: BSD-3-Clause */
/* What the lib/port and lib/net test doubles saw (see stubs.c). */
#ifndef RNIC_TEST_ENGINE_STUBS_H
#define RNIC_TEST_ENGINE_STUBS_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_mbuf.h>

#include "rnic/rnic.h"

struct stub_state {
	bool open_fail;
	unsigned opened, closed;
	struct rte_mbuf *rx_q[RNIC_MAX_WORKERS][256];
	unsigned rx_n[RNIC_MAX_WORKERS];
	unsigned tx_accept;            /* frames rnic_port_tx takes per call */
	uint64_t tx_calls, tx_taken;
	uint64_t fault_polls, link_polls;
	uint64_t net_input;
	uint64_t l4_input[RNIC_MAX_WORKERS];
	volatile uint64_t announces;
	volatile unsigned announce_lcore, announce_worker;
	bool b_stack_fail, b_worker_fail;  /* make module B's hooks fail */
	char log[256];                     /* hooks run: "AS- AW0 ..." */
	unsigned log_n;
};

extern struct stub_state stub;

#endif
