/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The extended verbs of rdma-core's <infiniband/verbs.h> over rnic.
 *
 * Every context the drop-in hands out is a struct verbs_context
 * (lib/verbs/verbs.h, struct rnic_device_view): abi_compat holds
 * __VERBS_ABI_IS_EXTENDED, sz the size of the whole struct, so
 * verbs_get_ctx() finds it and the inline wrappers of verbs.h call
 * through its ops. The ops filled here are the ones rnic can answer
 * honestly: query_device_ex, query_port (the _ex path of ibv_query_port),
 * create_qp_ex and create_cq_ex with the ibv_cq_ex poll API. Every other
 * op stays NULL, so its inline wrapper answers EOPNOTSUPP (or falls back
 * to the plain call, as verbs.h makes ibv_query_device_ex do), and a
 * provider library that checks a context for its own (libefa's
 * efadv_query_device(), libmlx5's mlx5dv_*) finds a verbs_context to log
 * against and a device that is not its own: EOPNOTSUPP, not a crash.
 */
#include <pthread.h>
#include <string.h>

#include "dropin/dropin.h"
#include "verbs/verbs.h"

#undef ibv_query_port

/* --- device and port --------------------------------------------------------- */

/*
 * query_device_ex: ibv_query_device()'s answer plus the extended part,
 * where rnic has none of the optional features (no ODP, timestamps, TSO,
 * RSS, packet pacing, tag matching, device memory). @p attr_size is the
 * caller's struct size: a smaller (older) one gets its prefix, a larger
 * (newer) one zeros after ours. @return 0 or a positive errno.
 */
static int ex_query_device(struct ibv_context *ctx, const struct ibv_query_device_ex_input *in,
			   struct ibv_device_attr_ex *attr, size_t attr_size)
{
	struct ibv_device_attr_ex a;

	if (!rv_ctx_ours(ctx) || attr == NULL || attr_size < sizeof(a.orig_attr) ||
	    (in != NULL && in->comp_mask != 0))
		return EINVAL;
	memset(&a, 0, sizeof(a));
	int rc = ibv_query_device(ctx, &a.orig_attr);
	if (rc != 0)
		return rc;
	a.device_cap_flags_ex = a.orig_attr.device_cap_flags;
	a.phys_port_cnt_ex = a.orig_attr.phys_port_cnt;
	memcpy(attr, &a, attr_size < sizeof(a) ? attr_size : sizeof(a));
	if (attr_size > sizeof(a))
		memset((char *)attr + sizeof(a), 0, attr_size - sizeof(a));
	return 0;
}

/* query_port: the _ex path of ibv_query_port() (a program built with
 * rdma-core's headers calls this, not the exported ibv_query_port). Fills
 * @p len bytes of the caller's struct. @return 0 or a positive errno. */
static int ex_query_port(struct ibv_context *ctx, uint8_t port_num, struct ibv_port_attr *attr,
			 size_t len)
{
	struct ibv_port_attr a;

	if (!rv_ctx_ours(ctx) || attr == NULL)
		return EINVAL;
	int rc = rnic_query_port(ctx, port_num, &a);
	if (rc != 0)
		return rv_err(rc);
	memset(attr, 0, len);
	memcpy(attr, &a, len < sizeof(a) ? len : sizeof(a));
	return 0;
}

/* --- queue pairs ---------------------------------------------------------------- */

/*
 * create_qp_ex: a PD is required (rnic's QPs belong to one); create flags
 * may be given as 0. XRC domains, RSS (indirection tables, hash), TSO and
 * the ibv_wr_* interface (send_ops_flags) are not rnic's: EOPNOTSUPP. The
 * QP is ibv_create_qp()'s: its face (transport) is the PD's context's, as
 * for a plain create (the two faces' objects mix). NULL with errno on
 * failure.
 */
static struct ibv_qp *ex_create_qp(struct ibv_context *ctx, struct ibv_qp_init_attr_ex *attr)
{
	const uint32_t known = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_CREATE_FLAGS;

	if (!rv_ctx_ours(ctx) || attr == NULL) {
		errno = EINVAL;
		return NULL;
	}
	if ((attr->comp_mask & ~known) ||
	    ((attr->comp_mask & IBV_QP_INIT_ATTR_CREATE_FLAGS) && attr->create_flags != 0)) {
		rv_unsupported("ibv_create_qp_ex with XRC, RSS, TSO, create flags or send_ops_flags");
		return NULL;
	}
	if (!(attr->comp_mask & IBV_QP_INIT_ATTR_PD) || attr->pd == NULL) {
		errno = EINVAL;
		return NULL;
	}
	/* the head of ibv_qp_init_attr_ex is an ibv_qp_init_attr (verbs.h's
	 * own ibv_create_qp_ex() passes it so) */
	return ibv_create_qp(attr->pd, (struct ibv_qp_init_attr *)attr);
}

/* --- completion queues: ibv_cq_ex ------------------------------------------------- */

static inline struct rnic_cq *ex_cq(struct ibv_cq_ex *cq)
{
	return cq_of(ibv_cq_ex_to_cq(cq));
}

/* The next completion into the CQ's current entry, through the context's
 * poll op (the drop-in's: it drives the stack when the CQ is empty).
 * @return 0 or ENOENT. */
static int ex_take(struct ibv_cq_ex *cq)
{
	struct rnic_cq *c = ex_cq(cq);
	struct ibv_cq *icq = ibv_cq_ex_to_cq(cq);

	if (icq->context->ops.poll_cq(icq, 1, &c->ex_wc) != 1)
		return ENOENT;
	cq->status = c->ex_wc.status;
	cq->wr_id = c->ex_wc.wr_id;
	return 0;
}

/* A CQ is polled under its mutex from start_poll to end_poll (the
 * current entry is the CQ's, not the thread's), as rdma-core's providers
 * hold their CQ lock; rnic itself never takes ibv_cq.mutex. A CQ created
 * IBV_CREATE_CQ_ATTR_SINGLE_THREADED is locked too: that flag is a hint. */
static int ex_start_poll(struct ibv_cq_ex *cq, struct ibv_poll_cq_attr *attr)
{
	if (attr != NULL && attr->comp_mask != 0)
		return EINVAL;
	pthread_mutex_lock(&cq->mutex);
	int rc = ex_take(cq);
	if (rc != 0)
		pthread_mutex_unlock(&cq->mutex);   /* no end_poll follows (verbs.h) */
	return rc;
}

static int ex_next_poll(struct ibv_cq_ex *cq)
{
	return ex_take(cq);
}

static void ex_end_poll(struct ibv_cq_ex *cq)
{
	pthread_mutex_unlock(&cq->mutex);
}

/* The read_* calls of the poll API: each returns one field of the
 * completion ex_take() copied (imm_data is also the invalidated rkey: one
 * field in ibv_wc). */
#define EX_READ(name, type, field)                      \
	static type ex_read_##name(struct ibv_cq_ex *cq) \
	{                                                \
		return ex_cq(cq)->ex_wc.field;           \
	}
EX_READ(opcode, enum ibv_wc_opcode, opcode)
EX_READ(vendor_err, uint32_t, vendor_err)
EX_READ(byte_len, uint32_t, byte_len)
EX_READ(imm_data, __be32, imm_data)
EX_READ(qp_num, uint32_t, qp_num)
EX_READ(src_qp, uint32_t, src_qp)
EX_READ(wc_flags, unsigned int, wc_flags)
EX_READ(slid, uint32_t, slid)
EX_READ(sl, uint8_t, sl)
EX_READ(dlid_path_bits, uint8_t, dlid_path_bits)
#undef EX_READ

/*
 * create_cq_ex: an ordinary rnic CQ (ibv_create_cq()) whose ibv_cq_ex
 * head gets the poll API. The standard fields of ibv_wc can be read
 * (IBV_WC_STANDARD_FLAGS); timestamps, CVLAN, flow tags and tag matching
 * are not there (EOPNOTSUPP), nor parent domains and ignored overruns.
 * The CQ is also an ordinary ibv_cq (ibv_cq_ex_to_cq(): ibv_poll_cq,
 * ibv_req_notify_cq, ibv_destroy_cq). NULL with errno on failure.
 */
static struct ibv_cq_ex *ex_create_cq(struct ibv_context *ctx, struct ibv_cq_init_attr_ex *attr)
{
	if (!rv_ctx_ours(ctx) || attr == NULL) {
		errno = EINVAL;
		return NULL;
	}
	if ((attr->comp_mask & ~(uint32_t)IBV_CQ_INIT_ATTR_MASK_FLAGS) ||
	    (attr->wc_flags & ~(uint64_t)IBV_WC_STANDARD_FLAGS) ||
	    ((attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_FLAGS) &&
	     (attr->flags & ~(uint32_t)IBV_CREATE_CQ_ATTR_SINGLE_THREADED))) {
		rv_unsupported("ibv_create_cq_ex with timestamps, CVLAN, flow tag, tag matching, "
			       "a parent domain or IGNORE_OVERRUN");
		return NULL;
	}
	if (attr->cqe > INT32_MAX) {
		errno = EINVAL;
		return NULL;
	}
	struct ibv_cq *icq = ibv_create_cq(ctx, (int)attr->cqe, attr->cq_context, attr->channel,
					   (int)attr->comp_vector);
	if (icq == NULL)
		return NULL;   /* errno set */
	struct ibv_cq_ex *cq = &cq_of(icq)->cq_ex;
	cq->start_poll = ex_start_poll;
	cq->next_poll = ex_next_poll;
	cq->end_poll = ex_end_poll;
	cq->read_opcode = ex_read_opcode;
	cq->read_vendor_err = ex_read_vendor_err;
	cq->read_byte_len = ex_read_byte_len;
	cq->read_imm_data = ex_read_imm_data;
	cq->read_qp_num = ex_read_qp_num;
	cq->read_src_qp = ex_read_src_qp;
	cq->read_wc_flags = ex_read_wc_flags;
	cq->read_slid = ex_read_slid;
	cq->read_sl = ex_read_sl;
	cq->read_dlid_path_bits = ex_read_dlid_path_bits;
	return cq;
}

void rv_install_ex_ops(struct ibv_context *ctx)
{
	struct verbs_context *v = verbs_get_ctx(ctx);

	v->query_device_ex = ex_query_device;
	v->query_port = ex_query_port;
	v->create_qp_ex = ex_create_qp;
	v->create_cq_ex = ex_create_cq;
}
