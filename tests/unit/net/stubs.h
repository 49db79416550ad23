/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Test doubles of the engine calls lib/net makes: rnic_worker_tx() captures
 * frames, rnic_worker_redirect() holds the redirected frame for the test.
 */
#ifndef TEST_NET_STUBS_H
#define TEST_NET_STUBS_H

#include <rte_mbuf.h>

#define STUB_TX_MAX 4096

struct stub_tx {
	struct rte_mbuf *m;
	unsigned worker;
	unsigned port;
};

extern struct stub_tx stub_tx[STUB_TX_MAX];
extern unsigned stub_n_tx;          /* frames in stub_tx */
extern struct rte_mbuf *stub_redirected;
extern unsigned stub_redirect_owner, stub_n_redirects;
extern unsigned stub_flow_owner6;   /* what rnic_flow_owner6() answers */

/** Free every captured and redirected frame. */
void stub_reset(void);

#endif
