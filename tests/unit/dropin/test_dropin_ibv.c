/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * librnic-verbs, linked in place of libibverbs (the second way to use it):
 * every libibverbs entry point it exports is called here, either working
 * on a stack over net_null or failing the documented way (EOPNOTSUPP, or
 * the errno rxe gives for a call in the wrong order). Nothing may crash.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <infiniband/verbs.h>

/* exported by libibverbs, declared by no installed header */
int ibv_dontfork_range(void *base, size_t size);
int ibv_dofork_range(void *base, size_t size);

static struct ibv_context *ctx_iw, *ctx_roce;
static struct ibv_device **list;

static int setup(void **state)
{
	(void)state;
	/* a stack of one net_null port; the library reads this on the first
	 * call, as rnic-run passes it */
	setenv("RNIC_ARGS", "--vdev net_null0 --ip 10.0.0.1/24 --ip 2001:db8::1/64", 1);
	setenv("RNIC_TRANSPORT", "roce", 1);
	int n = -1;
	list = ibv_get_device_list(&n);
	if (list == NULL || n != 2)
		return -1;
	ctx_roce = ibv_open_device(list[0]);
	ctx_iw = ibv_open_device(list[1]);
	return ctx_roce && ctx_iw ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	ibv_close_device(ctx_iw);
	ibv_close_device(ctx_roce);
	ibv_free_device_list(list);
	return 0;
}

/* A UD receive's 40 bytes of GRH as rnic (and rxe) lay them out. */
static void grh_ipv4(struct ibv_grh *g, const uint8_t src[4], const uint8_t dst[4], uint8_t tos)
{
	uint8_t *ip = (uint8_t *)g + 20;

	memset(g, 0, sizeof(*g));
	ip[0] = 0x45;
	ip[1] = tos;
	ip[8] = 64;
	ip[9] = 17;
	memcpy(ip + 12, src, 4);
	memcpy(ip + 16, dst, 4);
}

static void ah_from_wc(void **state)
{
	struct ibv_wc wc = { .wc_flags = IBV_WC_GRH };
	struct ibv_ah_attr a;
	struct ibv_grh g;
	const uint8_t peer4[4] = { 10, 0, 0, 2 }, us4[4] = { 10, 0, 0, 1 }, other4[4] = { 10, 0, 0, 9 };
	const uint8_t mapped_peer[16] = { [10] = 0xff, [11] = 0xff, 10, 0, 0, 2 };

	(void)state;
	/* IPv4: the peer's ::ffff: GID, our IPv4 entry (index 1), its TOS */
	grh_ipv4(&g, peer4, us4, 0x68);
	assert_int_equal(ibv_init_ah_from_wc(ctx_roce, 1, &wc, &g, &a), 0);
	assert_int_equal(a.is_global, 1);
	assert_memory_equal(a.grh.dgid.raw, mapped_peer, 16);
	assert_int_equal(a.grh.sgid_index, 1);
	assert_int_equal(a.grh.traffic_class, 0x68);

	/* IPv6: the source address as the GID, our 2001:db8::1 (index 2),
	 * traffic class and flow label from the header */
	memset(&g, 0, sizeof(g));
	g.version_tclass_flow = htobe32(6u << 28 | 0x20u << 20 | 0x12345);
	g.next_hdr = 17;
	g.hop_limit = 64;
	const uint8_t peer6[16] = { 0x20, 0x01, 0x0d, 0xb8, [15] = 2 };
	const uint8_t us6[16] = { 0x20, 0x01, 0x0d, 0xb8, [15] = 1 };
	memcpy(g.sgid.raw, peer6, 16);
	memcpy(g.dgid.raw, us6, 16);
	assert_int_equal(ibv_init_ah_from_wc(ctx_roce, 1, &wc, &g, &a), 0);
	assert_memory_equal(a.grh.dgid.raw, peer6, 16);
	assert_int_equal(a.grh.sgid_index, 2);
	assert_int_equal(a.grh.traffic_class, 0x20);
	assert_int_equal(a.grh.flow_label, 0x12345);

	/* the AH it makes works */
	struct ibv_pd *pd = ibv_alloc_pd(ctx_roce);
	assert_non_null(pd);
	struct ibv_ah *ah = ibv_create_ah_from_wc(pd, &wc, &g, 1);
	assert_non_null(ah);
	assert_int_equal(ibv_destroy_ah(ah), 0);

	/* sent to an address this port does not hold; no IP header at all */
	grh_ipv4(&g, peer4, other4, 0);
	errno = 0;
	assert_int_equal(ibv_init_ah_from_wc(ctx_roce, 1, &wc, &g, &a), -1);
	assert_int_equal(errno, ENOENT);
	memset(&g, 0, sizeof(g));
	errno = 0;
	assert_null(ibv_create_ah_from_wc(pd, &wc, &g, 1));
	assert_int_equal(errno, EINVAL);
	assert_int_equal(ibv_dealloc_pd(pd), 0);
}

static void devices(void **state)
{
	(void)state;
	/* RNIC_TRANSPORT=roce puts the RoCE face first */
	assert_string_equal(ibv_get_device_name(list[0]), "rnic0_roce");
	assert_string_equal(ibv_get_device_name(list[1]), "rnic0");
	assert_int_equal(list[0]->transport_type, IBV_TRANSPORT_IB);
	assert_int_equal(list[0]->node_type, IBV_NODE_CA);
	assert_int_equal(list[1]->transport_type, IBV_TRANSPORT_IWARP);
	assert_int_equal(list[1]->node_type, IBV_NODE_RNIC);
	assert_int_equal(ibv_get_device_index(list[0]), 1);
	assert_int_equal(ibv_get_device_index(list[1]), 0);
	assert_true(ibv_get_device_guid(list[0]) != 0);
	assert_int_equal(ibv_get_device_guid(list[0]), ibv_get_device_guid(list[1]));
	struct ibv_device bogus = { 0 };
	errno = 0;
	assert_null(ibv_open_device(&bogus));
	assert_int_equal(errno, ENODEV);
}

static void queries(void **state)
{
	struct ibv_device_attr da;
	struct ibv_port_attr pa;
	union ibv_gid gid;
	struct ibv_gid_entry ge[4];
	__be16 pkey;

	(void)state;
	assert_int_equal(ibv_query_device(ctx_roce, &da), 0);
	assert_int_equal(da.phys_port_cnt, 1);
	assert_int_equal(da.max_pkeys, 1);
	assert_true(da.max_ah > 0);
	assert_int_equal(ibv_query_device(ctx_iw, &da), 0);
	assert_int_equal(da.max_ah, 0);   /* no datagrams on iWARP */
	assert_int_equal(ibv_query_device(NULL, &da), EINVAL);

	assert_int_equal(ibv_query_port(ctx_roce, 1, &pa), 0);
	assert_int_equal(pa.state, IBV_PORT_ACTIVE);
	assert_int_equal(pa.link_layer, IBV_LINK_LAYER_ETHERNET);
	assert_int_equal(pa.gid_tbl_len, 3);   /* fe80::, ::ffff:10.0.0.1, 2001:db8::1 */
	assert_int_equal(ibv_query_port(ctx_roce, 2, &pa), EINVAL);

	/* index 1: the IPv4-mapped GID (-g 1 as on rxe) */
	assert_int_equal(ibv_query_gid(ctx_roce, 1, 1, &gid), 0);
	const uint8_t mapped[16] = { [10] = 0xff, [11] = 0xff, 10, 0, 0, 1 };
	assert_memory_equal(gid.raw, mapped, 16);
	assert_int_equal(ibv_query_gid(ctx_roce, 1, 3, &gid), -1);
	assert_int_equal(ibv_query_gid_ex(ctx_roce, 1, 1, &ge[0], 0), 0);
	assert_int_equal(ge[0].gid_type, IBV_GID_TYPE_ROCE_V2);
	assert_int_equal(ibv_query_gid_ex(ctx_roce, 1, 1, &ge[0], 1), EINVAL);
	assert_int_equal(ibv_query_gid_table(ctx_roce, ge, 4, 0), 3);
	assert_int_equal(ibv_query_gid_table(ctx_roce, ge, 1, 0), -EINVAL);

	assert_int_equal(ibv_query_pkey(ctx_roce, 1, 0, &pkey), 0);
	assert_int_equal(pkey, htobe16(0xffff));
	assert_int_equal(ibv_query_pkey(ctx_roce, 1, 1, &pkey), -1);
	assert_int_equal(ibv_get_pkey_index(ctx_roce, 1, htobe16(0xffff)), 0);
	assert_int_equal(ibv_get_pkey_index(ctx_roce, 1, htobe16(0x1234)), -ENOENT);
}

/* Calls in the wrong order get the errno rxe gives; nothing is freed
 * under a user. */
static void wrong_order(void **state)
{
	static char buf[4096];
	(void)state;
	struct ibv_pd *pd = ibv_alloc_pd(ctx_roce);
	assert_non_null(pd);
	/* relaxed ordering (perftest's default) is an optional flag: taken */
	struct ibv_mr *mr = ibv_reg_mr(pd, buf, sizeof(buf),
				       IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
				       IBV_ACCESS_RELAXED_ORDERING);
	assert_non_null(mr);
	/* remote write without local write: EINVAL (IBA 10.6.3.1) */
	errno = 0;
	assert_null(ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_REMOTE_WRITE));
	assert_int_equal(errno, EINVAL);
	/* a PD with a live MR */
	assert_int_equal(ibv_dealloc_pd(pd), EBUSY);

	/* a CQ too small or too large */
	errno = 0;
	assert_null(ibv_create_cq(ctx_roce, 0, NULL, NULL, 0));
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_null(ibv_create_cq(ctx_roce, 1 << 30, NULL, NULL, 0));
	assert_int_equal(errno, EINVAL);
	struct ibv_comp_channel *ch = ibv_create_comp_channel(ctx_roce);
	assert_non_null(ch);
	struct ibv_cq *cq = ibv_create_cq(ctx_roce, 16, NULL, ch, 0);   /* NULL channel is fine too */
	assert_non_null(cq);
	assert_int_equal(ibv_destroy_comp_channel(ch), EBUSY);

	struct ibv_qp_init_attr qa = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp *qp = ibv_create_qp(pd, &qa);
	assert_non_null(qp);
	assert_int_equal(qp->state, IBV_QPS_RESET);
	assert_int_equal(ibv_destroy_cq(cq), EBUSY);

	/* RESET -> RTS is not a transition */
	struct ibv_qp_attr at = { .qp_state = IBV_QPS_RTS };
	assert_int_equal(ibv_modify_qp(qp, &at, IBV_QP_STATE), EINVAL);
	assert_int_equal(ibv_modify_qp(NULL, &at, IBV_QP_STATE), EINVAL);
	/* a post on a QP in RESET never reaches the wire */
	struct ibv_sge sge = { .addr = (uintptr_t)buf, .length = 8, .lkey = mr->lkey };
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED }, *bad = NULL;
	assert_int_equal(ibv_post_send(qp, &wr, &bad), EINVAL);
	assert_ptr_equal(bad, &wr);
	struct ibv_wc wc;
	assert_int_equal(ibv_poll_cq(cq, 1, &wc), 0);

	struct ibv_qp_attr qat;
	struct ibv_qp_init_attr qia;
	assert_int_equal(ibv_query_qp(qp, &qat, IBV_QP_STATE, &qia), 0);
	assert_int_equal(qat.qp_state, IBV_QPS_RESET);
	assert_int_equal(ibv_query_qp_data_in_order(qp, IBV_WR_RDMA_WRITE, 0), 1);

	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 8, .max_sge = 1 } };
	struct ibv_srq *srq = ibv_create_srq(pd, &sa);
	assert_non_null(srq);
	assert_int_equal(ibv_destroy_srq(srq), 0);

	/* an AH on the RoCE face (UD) */
	struct ibv_ah_attr aa = { .is_global = 1, .port_num = 1,
				  .grh = { .dgid = { .raw = { [10] = 0xff, [11] = 0xff, 10, 0, 0, 2 } },
					   .sgid_index = 1, .hop_limit = 64 } };
	struct ibv_ah *ah = ibv_create_ah(pd, &aa);
	assert_non_null(ah);
	assert_int_equal(ibv_destroy_ah(ah), 0);
	struct ibv_wc uwc = { .wc_flags = 0 };
	errno = 0;
	assert_null(ibv_create_ah_from_wc(pd, &uwc, NULL, 1));   /* no GRH */
	assert_int_equal(errno, EINVAL);

	/* in the right order, everything goes */
	assert_int_equal(ibv_destroy_qp(qp), 0);
	assert_int_equal(ibv_destroy_cq(cq), 0);
	assert_int_equal(ibv_destroy_comp_channel(ch), 0);
	assert_int_equal(ibv_dereg_mr(mr), 0);
	assert_int_equal(ibv_dealloc_pd(pd), 0);
	assert_int_equal(ibv_dealloc_pd(NULL), EINVAL);
	assert_int_equal(ibv_dereg_mr(NULL), EINVAL);
}

static void mr_iova(void **state)
{
	static char buf[256];
	(void)state;
	struct ibv_pd *pd = ibv_alloc_pd(ctx_iw);
	assert_non_null(pd);
	struct ibv_mr *mr = ibv_reg_mr_iova(pd, buf, sizeof(buf), 0x10000, IBV_ACCESS_LOCAL_WRITE);
	assert_non_null(mr);
	assert_ptr_equal(mr->addr, buf);
	assert_int_equal(ibv_dereg_mr(mr), 0);
	mr = ibv_reg_mr_iova2(pd, buf, sizeof(buf), (uintptr_t)buf, IBV_ACCESS_LOCAL_WRITE);
	assert_non_null(mr);
	assert_int_equal(ibv_dereg_mr(mr), 0);
	assert_int_equal(ibv_dealloc_pd(pd), 0);
}

static void events_nonblocking(void **state)
{
	struct ibv_async_event ev;
	(void)state;
	/* an application that made async_fd non-blocking gets EAGAIN */
	int fl = fcntl(ctx_roce->async_fd, F_GETFL);
	assert_int_equal(fcntl(ctx_roce->async_fd, F_SETFL, fl | O_NONBLOCK), 0);
	errno = 0;
	assert_int_equal(ibv_get_async_event(ctx_roce, &ev), -1);
	assert_int_equal(errno, EAGAIN);
	fcntl(ctx_roce->async_fd, F_SETFL, fl);
	errno = 0;
	assert_int_equal(ibv_get_async_event(NULL, &ev), -1);
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_int_equal(ibv_get_cq_event(NULL, NULL, NULL), -1);
	assert_int_equal(errno, EINVAL);
	ibv_ack_cq_events(NULL, 1);
	ibv_ack_async_event(NULL);
}

/* Every entry point rnic does not support: EOPNOTSUPP, no crash, and the
 * objects passed in are left alone. */
static void unsupported(void **state)
{
	(void)state;
	struct ibv_pd *pd = ibv_alloc_pd(ctx_roce);
	struct ibv_cq *cq = ibv_create_cq(ctx_roce, 4, NULL, NULL, 0);
	struct ibv_qp_init_attr qa = { .send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
				       .cap = { .max_send_wr = 1, .max_recv_wr = 1,
						.max_send_sge = 1, .max_recv_sge = 1 } };
	struct ibv_qp *qp = ibv_create_qp(pd, &qa);
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 2, .max_sge = 1 } };
	struct ibv_srq *srq = ibv_create_srq(pd, &sa);
	static char buf[64];
	struct ibv_mr *mr = ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE);
	union ibv_gid gid = { 0 };
	struct ibv_srq_attr sat;
	struct ibv_ece ece;
	struct ibv_ah_attr aa = { 0 };
	uint8_t mac[6];
	uint16_t vid;

	assert_non_null(qp);
	assert_non_null(srq);
	assert_non_null(mr);
#define EXPECT_INT(call) do { errno = 0; assert_int_equal((call), EOPNOTSUPP); \
			      assert_int_equal(errno, EOPNOTSUPP); } while (0)
#define EXPECT_NULL(call) do { errno = 0; assert_null(call); \
			       assert_int_equal(errno, EOPNOTSUPP); } while (0)
	EXPECT_INT(ibv_attach_mcast(qp, &gid, 0));
	EXPECT_INT(ibv_detach_mcast(qp, &gid, 0));
	EXPECT_NULL(ibv_import_device(3));
	EXPECT_NULL(ibv_import_pd(ctx_roce, 1));
	EXPECT_NULL(ibv_import_mr(pd, 1));
	EXPECT_NULL(ibv_import_dm(ctx_roce, 1));
	EXPECT_NULL(ibv_reg_dmabuf_mr(pd, 0, 64, 0, 3, IBV_ACCESS_LOCAL_WRITE));
	EXPECT_INT(ibv_resize_cq(cq, 8));
	EXPECT_INT(ibv_modify_srq(srq, &sat, IBV_SRQ_LIMIT));
	EXPECT_INT(ibv_query_srq(srq, &sat));
	EXPECT_NULL(ibv_qp_to_qp_ex(qp));
	EXPECT_INT(ibv_set_ece(qp, &ece));
	EXPECT_INT(ibv_query_ece(qp, &ece));
	EXPECT_INT(ibv_resolve_eth_l2_from_gid(ctx_roce, &aa, mac, &vid));
	errno = 0;
	assert_int_equal(ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, pd, buf, 64, 0),
			 IBV_REREG_MR_ERR_INPUT);
	assert_int_equal(errno, EOPNOTSUPP);
	errno = 0;
	ibv_unimport_pd(pd);
	assert_int_equal(errno, EOPNOTSUPP);
	errno = 0;
	ibv_unimport_mr(mr);
	assert_int_equal(errno, EOPNOTSUPP);
	errno = 0;
	ibv_unimport_dm(NULL);
	assert_int_equal(errno, EOPNOTSUPP);
	/* extended calls inline in verbs.h whose op rnic leaves NULL, and
	 * the parts of the filled ones that rnic has not */
	struct ibv_cq_init_attr_ex cqa = { .cqe = 4,
					   .wc_flags = IBV_WC_EX_WITH_COMPLETION_TIMESTAMP };
	EXPECT_NULL(ibv_create_cq_ex(ctx_roce, &cqa));
	cqa = (struct ibv_cq_init_attr_ex){ .cqe = 4, .comp_mask = IBV_CQ_INIT_ATTR_MASK_PD };
	EXPECT_NULL(ibv_create_cq_ex(ctx_roce, &cqa));
	struct ibv_td_init_attr tda = { .comp_mask = 0 };
	EXPECT_NULL(ibv_alloc_td(ctx_roce, &tda));
	struct ibv_xrcd_init_attr xa = { .comp_mask = 0 };
	EXPECT_NULL(ibv_open_xrcd(ctx_iw, &xa));
	struct ibv_alloc_dm_attr dma = { .length = 64 };
	EXPECT_NULL(ibv_alloc_dm(ctx_roce, &dma));
	EXPECT_NULL(ibv_alloc_null_mr(pd));
	struct ibv_values_ex vals = { .comp_mask = IBV_VALUES_MASK_RAW_CLOCK };
	assert_int_equal(ibv_query_rt_values_ex(ctx_roce, &vals), EOPNOTSUPP);
	struct ibv_srq_init_attr_ex sxa = { .comp_mask = 0 };
	EXPECT_NULL(ibv_create_srq_ex(ctx_roce, &sxa));

	/* the objects are intact: they still tear down in order */
	assert_int_equal(ibv_dereg_mr(mr), 0);
	assert_int_equal(ibv_destroy_srq(srq), 0);
	assert_int_equal(ibv_destroy_qp(qp), 0);
	assert_int_equal(ibv_destroy_cq(cq), 0);
	assert_int_equal(ibv_dealloc_pd(pd), 0);
}

/*
 * The contexts are rdma-core verbs_contexts (verbs.h: verbs_get_ctx(),
 * the ops the inline extended calls go through): device and port through
 * the _ex ops, an extended CQ whose poll API returns flushed receives in
 * order, an extended QP. On a plain ibv_context (4cbba57) verbs_get_ctx()
 * is NULL and query_device_ex falls back without phys_port_cnt_ex.
 */
static void extended_context(void **state)
{
	(void)state;
	for (int f = 0; f < 2; f++) {
		struct ibv_context *ctx = f ? ctx_iw : ctx_roce;
		struct verbs_context *v = verbs_get_ctx(ctx);
		assert_non_null(v);
		assert_int_equal(v->sz, sizeof(*v));
		assert_ptr_equal(&v->context, ctx);

		struct ibv_device_attr_ex dax;
		memset(&dax, 0xa5, sizeof(dax));
		assert_int_equal(ibv_query_device_ex(ctx, NULL, &dax), 0);
		assert_int_equal(dax.orig_attr.phys_port_cnt, 1);
		assert_int_equal(dax.phys_port_cnt_ex, 1);
		assert_int_equal(dax.comp_mask, 0);
		assert_int_equal(dax.odp_caps.general_caps, 0);
		/* an older caller's smaller struct gets its prefix only */
		struct { struct ibv_device_attr a; uint32_t guard; } old;
		old.guard = 0x5a5a5a5a;
		struct verbs_context *vq = verbs_get_ctx_op(ctx, query_device_ex);
		assert_non_null(vq);
		assert_int_equal(vq->query_device_ex(ctx, NULL, (struct ibv_device_attr_ex *)&old,
						     sizeof(old.a)), 0);
		assert_int_equal(old.guard, 0x5a5a5a5a);
		assert_int_equal(vq->query_device_ex(ctx, NULL, &dax, 8), EINVAL);

		struct ibv_port_attr pa;
		memset(&pa, 0xa5, sizeof(pa));
		assert_int_equal(ibv_query_port(ctx, 1, &pa), 0);   /* the query_port op */
		assert_int_equal(pa.link_layer, IBV_LINK_LAYER_ETHERNET);
		assert_int_equal(pa.flags, 0);
		assert_int_equal(pa.port_cap_flags2, 0);
		assert_int_equal(ibv_query_port(ctx, 2, &pa), EINVAL);

		struct ibv_cq_init_attr_ex cqa = { .cqe = 8, .wc_flags = IBV_WC_STANDARD_FLAGS };
		struct ibv_cq_ex *cq = ibv_create_cq_ex(ctx, &cqa);
		assert_non_null(cq);
		struct ibv_pd *pd = ibv_alloc_pd(ctx);
		assert_non_null(pd);
		struct ibv_qp_init_attr_ex qa = {
			.send_cq = ibv_cq_ex_to_cq(cq),
			.recv_cq = ibv_cq_ex_to_cq(cq),
			.cap = { .max_send_wr = 2, .max_recv_wr = 4, .max_send_sge = 1,
				 .max_recv_sge = 1 },
			.qp_type = IBV_QPT_RC,
			.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_CREATE_FLAGS,
			.pd = pd,
		};
		struct ibv_qp *qp = ibv_create_qp_ex(ctx, &qa);
		assert_non_null(qp);
		qa.comp_mask |= IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
		errno = 0;
		assert_null(ibv_create_qp_ex(ctx, &qa));
		assert_int_equal(errno, EOPNOTSUPP);

		struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1,
					 .qp_access_flags = IBV_ACCESS_LOCAL_WRITE };
		assert_int_equal(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
						       IBV_QP_PORT | IBV_QP_ACCESS_FLAGS), 0);
		for (uint64_t i = 0; i < 2; i++) {
			struct ibv_recv_wr wr = { .wr_id = 7 + i }, *bad;
			assert_int_equal(ibv_post_recv(qp, &wr, &bad), 0);
		}
		a.qp_state = IBV_QPS_ERR;
		assert_int_equal(ibv_modify_qp(qp, &a, IBV_QP_STATE), 0);
		struct ibv_poll_cq_attr pca = { .comp_mask = 0 };
		int rc = ENOENT;
		for (int t = 0; t < 1000 && rc == ENOENT; t++)
			rc = ibv_start_poll(cq, &pca);
		assert_int_equal(rc, 0);
		assert_int_equal(cq->wr_id, 7);
		assert_int_equal(cq->status, IBV_WC_WR_FLUSH_ERR);
		assert_int_equal(ibv_wc_read_qp_num(cq), qp->qp_num);
		assert_int_equal(ibv_next_poll(cq), 0);
		assert_int_equal(cq->wr_id, 8);
		assert_int_equal(ibv_next_poll(cq), ENOENT);
		ibv_end_poll(cq);
		assert_int_equal(ibv_start_poll(cq, &pca), ENOENT);

		assert_int_equal(ibv_destroy_qp(qp), 0);
		assert_int_equal(ibv_destroy_cq(ibv_cq_ex_to_cq(cq)), 0);
		assert_int_equal(ibv_dealloc_pd(pd), 0);
	}
}

static void helpers(void **state)
{
	(void)state;
	assert_string_equal(ibv_wc_status_str(IBV_WC_RETRY_EXC_ERR), "RETRY_EXC_ERR");
	assert_non_null(ibv_event_type_str(IBV_EVENT_QP_FATAL));
	assert_string_equal(ibv_node_type_str(IBV_NODE_RNIC), "iWARP NIC");
	assert_string_equal(ibv_port_state_str(IBV_PORT_ACTIVE), "PORT_ACTIVE");
	assert_int_equal(ibv_rate_to_mult(IBV_RATE_40_GBPS), 16);
	assert_int_equal(mult_to_ibv_rate(16), IBV_RATE_40_GBPS);
	assert_int_equal(ibv_rate_to_mult(IBV_RATE_14_GBPS), -1);
	assert_int_equal(ibv_rate_to_mbps(IBV_RATE_100_GBPS), 103125);
	assert_int_equal(mbps_to_ibv_rate(2500), IBV_RATE_2_5_GBPS);
	assert_int_equal(mbps_to_ibv_rate(1), IBV_RATE_MAX);
	assert_int_equal(ibv_fork_init(), 0);
	assert_int_equal(ibv_is_fork_initialized(), IBV_FORK_UNNEEDED);
	assert_int_equal(ibv_dontfork_range(NULL, 0), 0);
	assert_int_equal(ibv_dofork_range(NULL, 0), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(devices),
		cmocka_unit_test(queries),
		cmocka_unit_test(ah_from_wc),
		cmocka_unit_test(wrong_order),
		cmocka_unit_test(mr_iova),
		cmocka_unit_test(events_nonblocking),
		cmocka_unit_test(unsupported),
		cmocka_unit_test(extended_context),
		cmocka_unit_test(helpers),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
