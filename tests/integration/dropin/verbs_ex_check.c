/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * verbs_ex_check: an ordinary program built against rdma-core's
 * libibverbs, libefa and libmlx5, run under rnic-run (verbs_ex.sh). On
 * each device of the list it checks the extended verbs of
 * <infiniband/verbs.h> that go through the context's struct
 * verbs_context, and the provider-specific calls that libfabric's
 * providers make on every device they see:
 *
 *   1. verbs_get_ctx(): the context is an extended one (sz covers the ops)
 *   2. efadv_query_device(), mlx5dv_query_device(), mlx5dv_is_supported():
 *      an error (EOPNOTSUPP), not a crash, on a device that is not theirs
 *   3. ibv_query_device_ex(): the plain answer plus phys_port_cnt_ex;
 *      ibv_query_port() through the _ex path equals the exported call
 *   4. ibv_create_cq_ex(): the standard wc flags; a timestamp refused
 *   5. ibv_create_qp_ex() with more than a PD (the _ex op); send_ops_flags
 *      and a missing PD refused
 *   6. the ibv_cq_ex poll API: three receives flushed by a move to ERR
 *      come out of start_poll/next_poll in order, then ENOENT
 *   7. extended calls rnic has not (ibv_alloc_td, ibv_open_xrcd,
 *      ibv_alloc_dm, ibv_query_rt_values_ex): EOPNOTSUPP
 *
 * Prints "ok: ..." per check and "verbs_ex_check: N checks, all ok" (exit
 * 0), or "FAIL: ..." lines (exit 1).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/efadv.h>
#include <infiniband/mlx5dv.h>
#include <infiniband/verbs.h>

static int checks, fails;

#define CHECK(cond, ...)                                                                  \
	do {                                                                              \
		checks++;                                                                 \
		if (cond) {                                                               \
			printf("ok: ");                                                   \
		} else {                                                                  \
			fails++;                                                          \
			printf("FAIL: ");                                                 \
		}                                                                         \
		printf(__VA_ARGS__);                                                      \
		putchar('\n');                                                            \
	} while (0)

static const char *name;   /* the device under test */

/* 1, 2: the context's ABI and the providers' own queries */
static void check_abi_and_providers(struct ibv_context *ctx)
{
	struct verbs_context *v = verbs_get_ctx(ctx);
	CHECK(v != NULL && v->sz >= sizeof(*v) - offsetof(struct verbs_context, query_port),
	      "%s: verbs_get_ctx() finds an extended context (sz %zu)", name,
	      v != NULL ? v->sz : 0);

	struct efadv_device_attr ea;
	int rc = efadv_query_device(ctx, &ea, sizeof(ea));
	CHECK(rc == EOPNOTSUPP, "%s: efadv_query_device() = %d (EOPNOTSUPP %d)", name, rc,
	      EOPNOTSUPP);
	struct mlx5dv_context ma = { .comp_mask = 0 };
	rc = mlx5dv_query_device(ctx, &ma);
	CHECK(rc == EOPNOTSUPP, "%s: mlx5dv_query_device() = %d", name, rc);
	CHECK(!mlx5dv_is_supported(ctx->device), "%s: mlx5dv_is_supported() is false", name);
}

/* 3: device and port through the extended path */
static void check_query(struct ibv_context *ctx)
{
	struct ibv_device_attr plain;
	struct ibv_device_attr_ex ex;

	memset(&ex, 0xa5, sizeof(ex));
	int rc = ibv_query_device_ex(ctx, NULL, &ex);
	CHECK(rc == 0 && ibv_query_device(ctx, &plain) == 0, "%s: ibv_query_device_ex() = %d",
	      name, rc);
	CHECK(ex.orig_attr.max_qp == plain.max_qp && ex.orig_attr.max_cqe == plain.max_cqe &&
	      ex.orig_attr.node_guid == plain.node_guid && ex.orig_attr.max_qp > 0 &&
	      ex.orig_attr.phys_port_cnt == plain.phys_port_cnt && plain.phys_port_cnt >= 1,
	      "%s: query_device_ex's orig_attr is ibv_query_device's (max_qp %d, ports %u)",
	      name, ex.orig_attr.max_qp, plain.phys_port_cnt);
	CHECK(ex.phys_port_cnt_ex == plain.phys_port_cnt && ex.comp_mask == 0 &&
	      ex.odp_caps.general_caps == 0 && ex.completion_timestamp_mask == 0 &&
	      ex.device_cap_flags_ex == plain.device_cap_flags,
	      "%s: the extended part: phys_port_cnt_ex %u, no ODP, no timestamps", name,
	      ex.phys_port_cnt_ex);
	struct ibv_query_device_ex_input in = { .comp_mask = 1 };
	CHECK(ibv_query_device_ex(ctx, &in, &ex) == EINVAL,
	      "%s: query_device_ex with an unknown input comp_mask: EINVAL", name);

	struct ibv_port_attr pa, pp;
	memset(&pa, 0xa5, sizeof(pa));
	rc = ibv_query_port(ctx, 1, &pa);   /* verbs.h: the _ex op */
	memset(&pp, 0, sizeof(pp));
	int rc2 = (ibv_query_port)(ctx, 1, (struct _compat_ibv_port_attr *)&pp);
	CHECK(rc == 0 && rc2 == 0 && pa.link_layer == IBV_LINK_LAYER_ETHERNET &&
	      pa.gid_tbl_len == pp.gid_tbl_len && pa.gid_tbl_len > 0 &&
	      pa.active_mtu == pp.active_mtu && pa.state == pp.state && pa.flags == 0,
	      "%s: ibv_query_port() through query_port = %d: Ethernet, %d GIDs, MTU %d", name,
	      rc, pa.gid_tbl_len, pa.active_mtu);
	CHECK(ibv_query_port(ctx, 9, &pa) == EINVAL, "%s: query_port on port 9: EINVAL", name);
}

/* 4, 5, 6: an extended CQ and QP, and the CQ's poll API */
static void check_cq_qp(struct ibv_context *ctx)
{
	struct ibv_cq_init_attr_ex ca = {
		.cqe = 16,
		.wc_flags = IBV_WC_STANDARD_FLAGS,
		.comp_mask = IBV_CQ_INIT_ATTR_MASK_FLAGS,
		.flags = IBV_CREATE_CQ_ATTR_SINGLE_THREADED,
	};
	struct ibv_cq_init_attr_ex bad_ca = { .cqe = 16,
					      .wc_flags = IBV_WC_EX_WITH_COMPLETION_TIMESTAMP };
	errno = 0;
	CHECK(ibv_create_cq_ex(ctx, &bad_ca) == NULL && errno == EOPNOTSUPP,
	      "%s: create_cq_ex with completion timestamps: EOPNOTSUPP (errno %d)", name, errno);
	struct ibv_cq_ex *cq = ibv_create_cq_ex(ctx, &ca);
	CHECK(cq != NULL && cq->start_poll != NULL && cq->read_qp_num != NULL &&
	      ibv_cq_ex_to_cq(cq)->context == ctx && ibv_cq_ex_to_cq(cq)->cqe >= 16,
	      "%s: ibv_create_cq_ex() with the standard wc flags (errno %d)", name,
	      cq ? 0 : errno);
	if (cq == NULL)
		return;
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	static char buf[3][64];
	struct ibv_mr *mr = pd ? ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE) : NULL;
	CHECK(pd != NULL && mr != NULL, "%s: a PD and an MR", name);

	struct ibv_qp_init_attr_ex qa = {
		.send_cq = ibv_cq_ex_to_cq(cq),
		.recv_cq = ibv_cq_ex_to_cq(cq),
		.cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC,
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.pd = pd,
		.send_ops_flags = IBV_QP_EX_WITH_RDMA_WRITE,
	};
	errno = 0;
	CHECK(ibv_create_qp_ex(ctx, &qa) == NULL && errno == EOPNOTSUPP,
	      "%s: create_qp_ex with send_ops_flags: EOPNOTSUPP (errno %d)", name, errno);
	qa.comp_mask = IBV_QP_INIT_ATTR_CREATE_FLAGS;
	errno = 0;
	CHECK(ibv_create_qp_ex(ctx, &qa) == NULL && errno == EINVAL,
	      "%s: create_qp_ex without a PD: EINVAL (errno %d)", name, errno);
	qa.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_CREATE_FLAGS;
	qa.create_flags = 0;
	struct ibv_qp *qp = pd && mr ? ibv_create_qp_ex(ctx, &qa) : NULL;
	CHECK(qp != NULL && qp->qp_type == IBV_QPT_RC && qp->context == ctx && qp->pd == pd &&
	      qp->send_cq == ibv_cq_ex_to_cq(cq),
	      "%s: ibv_create_qp_ex() with PD and create flags: QP %u (errno %d)", name,
	      qp ? qp->qp_num : 0, qp ? 0 : errno);

	if (qp != NULL) {
		struct ibv_qp_attr init = {
			.qp_state = IBV_QPS_INIT,
			.pkey_index = 0,
			.port_num = 1,
			.qp_access_flags = IBV_ACCESS_LOCAL_WRITE,
		};
		int rc = ibv_modify_qp(qp, &init, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
						      IBV_QP_ACCESS_FLAGS);
		for (int i = 0; i < 3 && rc == 0; i++) {
			struct ibv_sge sge = { .addr = (uintptr_t)buf[i], .length = sizeof(buf[i]),
					       .lkey = mr->lkey };
			struct ibv_recv_wr wr = { .wr_id = 100 + (uint64_t)i, .sg_list = &sge,
						  .num_sge = 1 }, *bad;
			rc = ibv_post_recv(qp, &wr, &bad);
		}
		struct ibv_qp_attr err = { .qp_state = IBV_QPS_ERR };
		rc = rc ? rc : ibv_modify_qp(qp, &err, IBV_QP_STATE);
		CHECK(rc == 0, "%s: three receives posted, the QP moved to ERR (%d)", name, rc);

		/* the flushed receives through the poll API */
		struct ibv_poll_cq_attr pa = { .comp_mask = 0 };
		uint64_t ids[4] = { 0 };
		int n = 0;
		rc = ENOENT;
		for (int tries = 0; tries < 1000 && rc == ENOENT; tries++)
			rc = ibv_start_poll(cq, &pa);
		bool fields_ok = true;
		while (rc == 0 && n < 4) {
			ids[n++] = cq->wr_id;
			fields_ok &= cq->status == IBV_WC_WR_FLUSH_ERR &&
				     ibv_wc_read_qp_num(cq) == qp->qp_num;
			rc = ibv_next_poll(cq);
		}
		if (n > 0)
			ibv_end_poll(cq);
		CHECK(n == 3 && ids[0] == 100 && ids[1] == 101 && ids[2] == 102 && rc == ENOENT &&
		      fields_ok,
		      "%s: start_poll/next_poll: %d flushed receives (wr_id %lu %lu %lu, "
		      "FLUSH_ERR, qp_num), then ENOENT (%d)", name, n, (unsigned long)ids[0],
		      (unsigned long)ids[1], (unsigned long)ids[2], rc);
		CHECK(ibv_start_poll(cq, &pa) == ENOENT, "%s: an empty CQ: start_poll ENOENT", name);
		struct ibv_poll_cq_attr bad_pa = { .comp_mask = 1 };
		CHECK(ibv_start_poll(cq, &bad_pa) == EINVAL,
		      "%s: start_poll with a comp_mask: EINVAL", name);
		CHECK(ibv_destroy_qp(qp) == 0, "%s: ibv_destroy_qp", name);
	}
	if (mr != NULL)
		ibv_dereg_mr(mr);
	if (pd != NULL)
		ibv_dealloc_pd(pd);
	CHECK(ibv_destroy_cq(ibv_cq_ex_to_cq(cq)) == 0, "%s: ibv_destroy_cq of the cq_ex", name);
}

/* 7: extended calls rnic has no op for */
static void check_unsupported(struct ibv_context *ctx)
{
	struct ibv_td_init_attr ta = { .comp_mask = 0 };
	struct ibv_xrcd_init_attr xa = { .comp_mask = 0 };
	struct ibv_alloc_dm_attr da = { .length = 64 };
	struct ibv_values_ex vals = { .comp_mask = IBV_VALUES_MASK_RAW_CLOCK };

	errno = 0;
	CHECK(ibv_alloc_td(ctx, &ta) == NULL && errno == EOPNOTSUPP, "%s: ibv_alloc_td: EOPNOTSUPP",
	      name);
	errno = 0;
	CHECK(ibv_open_xrcd(ctx, &xa) == NULL && errno == EOPNOTSUPP,
	      "%s: ibv_open_xrcd: EOPNOTSUPP", name);
	errno = 0;
	CHECK(ibv_alloc_dm(ctx, &da) == NULL && errno == EOPNOTSUPP, "%s: ibv_alloc_dm: EOPNOTSUPP",
	      name);
	CHECK(ibv_query_rt_values_ex(ctx, &vals) == EOPNOTSUPP,
	      "%s: ibv_query_rt_values_ex: EOPNOTSUPP", name);
}

int main(void)
{
	int n = 0;

	setvbuf(stdout, NULL, _IOLBF, 0);   /* the lines before a crash show */
	struct ibv_device **list = ibv_get_device_list(&n);

	CHECK(list != NULL && n == 2, "ibv_get_device_list: %d devices", n);
	for (int i = 0; list != NULL && i < n; i++) {
		name = ibv_get_device_name(list[i]);
		struct ibv_context *ctx = ibv_open_device(list[i]);
		CHECK(ctx != NULL, "%s: ibv_open_device", name);
		if (ctx == NULL)
			continue;
		check_abi_and_providers(ctx);
		check_query(ctx);
		check_cq_qp(ctx);
		check_unsupported(ctx);
		CHECK(ibv_close_device(ctx) == 0, "%s: ibv_close_device", name);
	}
	if (list != NULL)
		ibv_free_device_list(list);
	if (fails != 0) {
		printf("verbs_ex_check: %d of %d checks failed\n", fails, checks);
		return 1;
	}
	printf("verbs_ex_check: %d checks, all ok\n", checks);
	return 0;
}
