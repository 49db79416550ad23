/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What test_roce_recovery.c and test_roce_hostile.c share: two stacks that
 * are never started (tpair .tapped, .inline_drive), this thread running
 * one loop of each worker in turn with the test's tap moving the frames
 * between their rings, and the verbs objects of a case (two RC QPs over
 * RoCE, one on each stack, each with its PD, CQ and registered buffer).
 *
 * This header defines what check.h and pair.h ask of their includer
 * (case_jmp, case_name, the outcomes and their names) and includes both;
 * the includer includes nothing of them itself and defines, after this
 * header, the pair (tapped, inline_drive; A is R.st[0], B R.st[1]):
 *   static struct tpair R = { ... };
 * and the tap:
 *   static unsigned tap_move(struct rte_ring *from, struct rte_ring *to, bool from_a);
 *     moves (or drops) every frame from @p from to @p to; @p from_a: A sent
 *     them. @return the frames taken from @p from.
 */
#ifndef RNIC_TESTS_INTEGRATION_ROCE_TAP_H
#define RNIC_TESTS_INTEGRATION_ROCE_TAP_H

#include <errno.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_mbuf.h>
#include <rte_ring.h>

#include "rnic/rnic.h"
#include "rnic/rnic_roce.h"
#include "rnic/rnic_verbs.h"

#define HANG_S 30               /* hang guard of a wait, not a time check */
#define BTH_OFF (14 + 20 + 8)   /* Ethernet, IPv4 without options, UDP */

static jmp_buf case_jmp;
static const char *case_name;
static int n_pass, n_fail, n_skip;
static char failed[512], skipped[256];
enum { R_PASS = 0, R_FAIL = 1, R_SKIP = 2 };

#define CHECK_FILE
#define GUARD 0xee

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#include "../common/check.h"
#pragma GCC diagnostic pop
#include "../common/pair.h"

static struct tpair R;   /* defined, with its initializer, by the includer */
static unsigned tap_move(struct rte_ring *from, struct rte_ring *to, bool from_a);

/* The BTH opcode of a RoCEv2 frame over IPv4, or -1 for anything else
 * (ARP). */
static inline int roce_opcode(const struct rte_mbuf *m)
{
	const uint8_t *f = rte_pktmbuf_mtod(m, const uint8_t *);
	if (rte_pktmbuf_data_len(m) < BTH_OFF + 12 || f[12] != 0x08 || f[13] != 0x00 ||
	    f[14] != 0x45 || f[23] != 17)
		return -1;
	if (((unsigned)f[36] << 8 | f[37]) != RNIC_ROCE_UDP_PORT)
		return -1;
	return f[BTH_OFF];
}

/* One step of the world: A's loop, the tap, B's loop, the tap. */
static inline void step(void)
{
	rnic_worker_poll(R.st[0], 0);
	tap_move(R.a_tx, R.b_rx, true);
	rnic_worker_poll(R.st[1], 0);
	tap_move(R.b_tx, R.a_rx, false);
}

static inline void steps(unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		step();
}

/* Drive both stacks until @p cq holds @p n completions (into @p wc), at
 * most HANG_S seconds. @return the completions taken. */
static inline int wait_wc(struct ibv_cq *cq, struct ibv_wc *wc, int n)
{
	int got = 0;
	double t0 = now_s();
	while (got < n && now_s() - t0 < HANG_S) {
		step();
		int k = ibv_poll_cq(cq, n - got, wc + got);
		if (k > 0)
			got += k;
	}
	return got;
}

/* The objects of the case, [0] on A and [1] on B, freed by objs_free()
 * however the case ended. */
static struct {
	struct ibv_pd *pd[2];
	struct ibv_cq *cq[2];
	uint8_t *buf[2];
	struct ibv_mr *mr[2];
	struct ibv_qp *qp[2];
} O;

/* On each stack a PD, a CQ of @p cqe, a buffer of @p len bytes (not
 * cleared) registered with @p access, and an RC QP over RoCE (@p send_wr
 * send and 16 receive work requests, one SGE each), not connected. */
static inline void objs_make(int cqe, size_t len, int access, uint32_t send_wr)
{
	for (int i = 0; i < 2; i++) {
		O.pd[i] = rnic_alloc_pd(R.ctx[i]);
		O.cq[i] = rnic_create_cq(R.ctx[i], cqe, NULL, NULL, 0);
		O.buf[i] = aligned_alloc(4096, len);
		CHECK(O.pd[i] && O.cq[i] && O.buf[i], "setup failed");
		O.mr[i] = rnic_reg_mr(O.pd[i], O.buf[i], len, access);
		struct ibv_qp_init_attr qa = { .qp_type = IBV_QPT_RC, .send_cq = O.cq[i],
			.recv_cq = O.cq[i], .cap = { .max_send_wr = send_wr, .max_recv_wr = 16,
						     .max_send_sge = 1, .max_recv_sge = 1 } };
		O.qp[i] = rnic_create_qp_transport(O.pd[i], &qa, RNIC_TRANSPORT_ROCE);
		CHECK(O.mr[i] && O.qp[i], "MRs or QPs not made: %s", strerror(errno));
	}
}

/* Free what O holds and clear it. @return false when something could not
 * be freed. */
static inline bool objs_free(void)
{
	bool ok = true;
	for (int i = 0; i < 2; i++) {
		if (O.qp[i])
			ok &= rnic_destroy_qp(O.qp[i]) == 0;
		if (O.mr[i])
			ok &= rnic_dereg_mr(O.mr[i]) == 0;
		if (O.cq[i])
			ok &= rnic_destroy_cq(O.cq[i]) == 0;
		if (O.pd[i])
			ok &= rnic_dealloc_pd(O.pd[i]) == 0;
		free(O.buf[i]);
	}
	memset(&O, 0, sizeof(O));
	return ok;
}

#endif
