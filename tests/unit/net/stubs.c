/* SPDX-License-Identifier: BSD-3-Clause */
/* Engine test doubles for the lib/net unit test (see stubs.h). */
#include <errno.h>

#include "engine/stack.h"
#include "port/port.h"
#include "stubs.h"

struct stub_tx stub_tx[STUB_TX_MAX];
unsigned stub_n_tx;
struct rte_mbuf *stub_redirected;
unsigned stub_redirect_owner, stub_n_redirects;

void rnic_worker_tx(struct rnic_worker *w, struct rnic_port *p,
		    struct rte_mbuf *m)
{
	if (stub_n_tx == STUB_TX_MAX) {   /* a full TX queue drops, like the engine */
		rnic_worker_drop(w, RNIC_DROP_TX_FULL, m);
		return;
	}
	stub_tx[stub_n_tx++] = (struct stub_tx){ m, w->id, p->idx };
}

int rnic_worker_redirect(struct rnic_worker *w, unsigned owner,
			 struct rte_mbuf *m)
{
	stub_n_redirects++;
	stub_redirect_owner = owner;
	if (stub_redirected != NULL) {    /* keep one: the test resumes it */
		rnic_worker_drop(w, RNIC_DROP_REDIRECT_FULL, m);
		return -ENOBUFS;
	}
	stub_redirected = m;
	return 0;
}

int rnic_worker_call_sync(struct rnic_worker *w,
			  void (*fn)(struct rnic_worker *, void *), void *arg)
{
	fn(w, arg);
	return 0;
}

unsigned rnic_worker_poll(struct rnic_stack *st, unsigned idx)
{
	(void)st;
	(void)idx;
	return 0;
}

unsigned stub_flow_owner6;

/* IPv6 flow steering: the worker the test names. */
unsigned rnic_flow_owner6(const struct rnic_stack *st, const uint8_t src[16],
			  const uint8_t dst[16], uint16_t src_port, uint16_t dst_port)
{
	(void)st; (void)src; (void)dst; (void)src_port; (void)dst_port;
	return stub_flow_owner6;
}

void stub_reset(void)
{
	for (unsigned i = 0; i < stub_n_tx; i++)
		rte_pktmbuf_free(stub_tx[i].m);
	stub_n_tx = 0;
	rte_pktmbuf_free(stub_redirected);
	stub_redirected = NULL;
	stub_n_redirects = 0;
}
