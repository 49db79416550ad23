/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The harness of the integration programs that put two stacks, A and B,
 * on net_ring in one process (attack, migration, exhaust, roce_recovery,
 * and the verbs conformance suite's runner): the EAL, the pair of stacks
 * (wired directly, or each to its own ring pair so that the test carries
 * the frames between them: a tap), connecting two QPs over RoCE (out of
 * band) or iWARP (through the CM), and running named cases.
 *
 * The includer has included check.h (CHECK_FILE or CHECK_KNOWN_BUG_FILE)
 * and defines, before including this file:
 *   static int n_pass, n_fail, n_skip;   the outcomes so far
 *   static char failed[N], skipped[N];   their names
 */
#ifndef RNIC_TESTS_INTEGRATION_PAIR_H
#define RNIC_TESTS_INTEGRATION_PAIR_H

#include <rte_common.h>
#include <rte_errno.h>
#include <rte_ring.h>

#include "rnic/rnic_cm.h"

/* --- two stacks over net_ring --------------------------------------------------------- */

/*
 * A pair of stacks: the caller fills the first part, tpair_up() the rest.
 * Wired directly, port i of A is ring[i].a and port i of B ring[i].b.
 * Tapped (one port each), A is ring[0].a and B ring[1].b: what A sends
 * waits on a_tx, what A receives is put on a_rx, likewise b_tx and b_rx,
 * and the test's tap moves frames from one to the other.
 */
struct tpair {
	const char *ring[2];     /* the ring pairs: one per port, or the tap's two */
	uint32_t ip[2][2];       /* [stack][port] */
	unsigned n_ports;        /* 1 (0 too) or 2; 1 when tapped */
	bool tapped;
	unsigned workers;        /* per stack; 0: the configuration's default */
	uint32_t mbufs;          /* per port; 0: the default */
	uint16_t desc;           /* RX/TX descriptors; 0: the default */
	bool inline_drive;       /* not started: the test polls the workers */
	struct rnic_stack *st[2];
	struct ibv_context *ctx[2];
	struct rte_ring *a_tx, *a_rx, *b_tx, *b_rx;
	char why[192];           /* why tpair_up() failed */
};

/* The EAL for two stacks (check_eal_init, with @p lcores worker lcores)
 * and the ring pairs of @p p; @p base is then the common configuration.
 * @return 0, or -1 with a message. */
static inline int tpair_init(const char *prog, struct rnic_config *base, unsigned lcores,
			     struct tpair *const *p, unsigned n)
{
	if (check_eal_init(prog, base, lcores) != 0)
		return -1;
	for (unsigned i = 0; i < n; i++)
		for (unsigned r = 0; r < (p[i]->tapped || p[i]->n_ports == 2 ? 2u : 1u); r++)
			if (rnic_ring_pair(p[i]->ring[r], 1) != 0) {
				fprintf(stderr, "ring pair %s failed\n", p[i]->ring[r]);
				return -1;
			}
	return 0;
}

/* Make (and unless inline_drive start) both stacks of @p p from the
 * configuration @p base, and open their devices. @return 0, or -1 with
 * the reason in p->why (what was made is freed). */
static inline int tpair_up(struct tpair *p, const struct rnic_config *base)
{
	unsigned np = p->tapped || p->n_ports == 0 ? 1 : p->n_ports;
	if (p->tapped) {
		char n[4][64];
		snprintf(n[0], sizeof(n[0]), "%s.a", p->ring[0]);
		snprintf(n[1], sizeof(n[1]), "%s.b", p->ring[0]);
		snprintf(n[2], sizeof(n[2]), "%s.b", p->ring[1]);
		snprintf(n[3], sizeof(n[3]), "%s.a", p->ring[1]);
		p->a_tx = rnic_ring_pair_tx(n[0], 0);   /* A transmits */
		p->a_rx = rnic_ring_pair_tx(n[1], 0);   /* A receives what .b "sends" */
		p->b_tx = rnic_ring_pair_tx(n[2], 0);
		p->b_rx = rnic_ring_pair_tx(n[3], 0);
		if (!p->a_tx || !p->a_rx || !p->b_tx || !p->b_rx) {
			snprintf(p->why, sizeof(p->why), "the tap's rings of %s/%s not found",
				 p->ring[0], p->ring[1]);
			return -1;
		}
	}
	for (int s = 0; s < 2; s++) {
		struct rnic_config c = *base;
		c.n_eal_args = 0;
		c.n_ports = np;
		if (p->workers)
			c.workers = p->workers;
		for (unsigned i = 0; i < np; i++) {
			struct rnic_port_cfg *pc = &c.ports[i];
			rnic_port_cfg_init(pc);
			snprintf(pc->ring, sizeof(pc->ring), "%s.%c",
				 p->ring[p->tapped ? (unsigned)s : i], s ? 'b' : 'a');
			pc->ip = p->ip[s][i];
			pc->prefix_len = 24;
			if (p->mbufs)
				pc->mbufs = p->mbufs;
			if (p->desc)
				pc->rx_desc = pc->tx_desc = p->desc;
		}
		p->st[s] = rnic_stack_create(&c);
		if (p->st[s] == NULL) {
			snprintf(p->why, sizeof(p->why), "%s: rnic_stack_create: %s", p->ring[0],
				 rte_strerror(rte_errno));
			check_pair_down(p->st, p->ctx, p->ring[0]);
			return -1;
		}
	}
	for (int s = 0; s < 2; s++) {
		int rc = p->inline_drive ? 0 : rnic_stack_start(p->st[s]);
		p->ctx[s] = rc == 0 ? rnic_open_device(p->st[s]) : NULL;
		if (p->ctx[s] == NULL) {
			snprintf(p->why, sizeof(p->why), "%s: stack start (%d) or open_device failed",
				 p->ring[0], rc);
			check_pair_down(p->st, p->ctx, p->ring[0]);
			return -1;
		}
	}
	return 0;
}

/* Close both devices, stop and destroy both stacks of @p p; a device that
 * still holds objects counts as a failure of the program. */
static inline void tpair_down(struct tpair *p)
{
	n_fail += (int)check_pair_down(p->st, p->ctx, p->ring[0]);
}

/* --- connecting two QPs ----------------------------------------------------------------- */

/* RoCE, out of band: @p q[0] (on device @p c[0]) and @p q[1] to each other
 * through port @p port_num: INIT (from RESET) with @p access, RTR towards
 * the peer with its first PSN, RTS from @p psn[i] with the local ACK
 * @p timeout and @p retry_cnt (see check_roce_rtr_rts_opt). */
static inline void tpair_roce_connect(struct ibv_qp *const q[2], struct ibv_context *const c[2],
				      const uint32_t psn[2], uint8_t port_num, int access,
				      uint8_t timeout, uint8_t retry_cnt)
{
	for (int i = 0; i < 2; i++) {
		if (q[i]->state != IBV_QPS_RESET)
			continue;
		struct ibv_qp_attr at = { .qp_state = IBV_QPS_INIT, .port_num = port_num,
					  .qp_access_flags = (unsigned)access };
		CHECK_RC(rnic_modify_qp(q[i], &at, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
					IBV_QP_ACCESS_FLAGS), 0);
	}
	check_roce_rtr_rts_opt(q, c, psn, port_num, timeout, retry_cnt);
	CHECK(q[0]->state == IBV_QPS_RTS && q[1]->state == IBV_QPS_RTS, "states after RTS: %d %d",
	      q[0]->state, q[1]->state);
}

/* The next event on @p ch within @p ms is of type @p t (copied to @p out
 * when given); @p who names the side in a failure. */
static inline void tpair_cm_expect(struct rnic_cm_channel *ch, enum rnic_cm_event_type t,
				   struct rnic_cm_event *out, int ms, const char *who)
{
	struct rnic_cm_event ev;
	int rc = rnic_cm_get_event(ch, &ev, ms);
	CHECK(rc == 0, "%s: no CM event in %d ms (rc %d) (hang guard)", who, ms, rc);
	CHECK(ev.type == t, "%s: CM event %s (status %d), expected %s", who,
	      rnic_cm_event_str(ev.type), ev.status, rnic_cm_event_str(t));
	if (out)
		*out = ev;
}

/* iWARP, through the CM: the active side's @p qc (id made on channel @p ccm,
 * returned in @p idc) connects to @p ip : @p port, where a listener on
 * channel @p lcm listens; the passive side accepts with @p ql (its id in
 * @p idl); both see ESTABLISHED and both QPs are in RTS. @p cp is both
 * sides' parameters; @p ms bounds each wait (a hang guard); the
 * CONNECT_REQUEST is copied to @p req when given. */
static inline void tpair_iw_connect(struct rnic_cm_channel *lcm, struct ibv_qp *ql,
				    struct rnic_cm_id **idl, struct rnic_cm_channel *ccm,
				    struct ibv_qp *qc, struct rnic_cm_id **idc, uint32_t ip,
				    uint16_t port, const struct rnic_cm_conn_param *cp, int ms,
				    struct rnic_cm_event *req)
{
	struct rnic_cm_event ev;
	CHECK_RC(rnic_cm_create_id(ccm, NULL, idc), 0);
	CHECK_RC(rnic_cm_connect(*idc, qc, ip, port, cp), 0);
	tpair_cm_expect(lcm, RNIC_CM_EVENT_CONNECT_REQUEST, &ev, ms, "passive side");
	if (req)
		*req = ev;
	*idl = ev.id;
	CHECK_RC(rnic_cm_accept(ev.id, ql, cp), 0);
	tpair_cm_expect(lcm, RNIC_CM_EVENT_ESTABLISHED, NULL, ms, "passive side");
	tpair_cm_expect(ccm, RNIC_CM_EVENT_ESTABLISHED, NULL, ms, "active side");
	CHECK(ql->state == IBV_QPS_RTS && qc->state == IBV_QPS_RTS,
	      "QP states after ESTABLISHED: passive %d active %d", ql->state, qc->state);
}

/* --- running named cases ----------------------------------------------------------------- */

/* Is @p name selected by @p filter? NULL: all. Else its comma-separated
 * parts: "-PART" leaves out every name holding PART; a plain part
 * selects the names holding it; with no plain part, all that are not
 * left out. */
static inline bool case_selected(const char *name, const char *filter)
{
	bool any_plain = false, chosen = false;
	if (filter == NULL)
		return true;
	for (const char *p = filter; *p != '\0'; ) {
		size_t n = strcspn(p, ",");
		bool out = *p == '-';
		char part[64];
		snprintf(part, sizeof(part), "%.*s", (int)RTE_MIN(n - out, sizeof(part) - 1), p + out);
		if (part[0] != '\0' && strstr(name, part) != NULL) {
			if (out)
				return false;
			chosen = true;
		}
		any_plain |= !out && n > 0;
		p += n + (p[n] == ',');
	}
	return chosen || !any_plain;
}

/* Count and print the outcome @p r of case @p name (@p dt seconds). */
static inline void case_report(const char *name, int r, double dt)
{
	char *list = r == R_FAIL ? failed : skipped;
	switch (r) {
	case R_PASS:
		n_pass++;
		printf("PASS %s (%.2f s)\n", name, dt);
		break;
	case R_SKIP:
		n_skip++;
		printf("SKIP %s\n", name);
		break;
	default:
		n_fail++;
		printf("FAIL %s (%.2f s)\n", name, dt);
		break;
	}
	if (r != R_PASS && strlen(list) + strlen(name) + 2 < sizeof(failed))
		strcat(strcat(list, " "), name);
	fflush(stdout);
	fflush(stderr);
}

/* Run case @p name (@p fn), then @p cleanup (false: something the case
 * made could not be freed, which fails a case that passed), and report. */
static inline void case_run(const char *name, void (*fn)(void), bool (*cleanup)(void))
{
	volatile int r;
	double t0 = now_s();
	case_name = name;
	r = setjmp(case_jmp);
	if (r == 0)
		fn();
	bool ok = cleanup();
	if (r == R_PASS && !ok) {
		fprintf(stderr, "  FAIL %s: objects could not be freed\n", name);
		r = R_FAIL;
	}
	case_report(name, r, now_s() - t0);
}

/* The last lines of a run of @p what (@p secs seconds); @return the exit
 * status. */
static inline int case_summary(const char *what, double secs)
{
	printf("%s: %.1f s\n", what, secs);
	if (n_skip)
		printf("skipped:%s\n", skipped);
	if (n_fail)
		printf("failed:%s\n", failed);
	printf("%d passed, %d failed, %d skipped\n", n_pass, n_fail, n_skip);
	return n_fail ? 1 : 0;
}

#endif
