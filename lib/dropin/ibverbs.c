/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libibverbs' entry points over rnic (docs/dropin.md has the matrix).
 *
 * Defined without symbol versions, so a preloaded librnic-verbs takes the
 * program's references (ibv_open_device@IBVERBS_1.1 ...) from the real
 * libibverbs, which stays loaded for the providers it pulled in. Every
 * call that takes a verbs object must be ours: the real one would read an
 * rnic object as its own. Results follow libibverbs: int calls return 0 or
 * a positive errno, constructors NULL with errno set.
 */
#include <stdlib.h>
#include <string.h>

#include "dropin/dropin.h"
#include "dropin/pace.h"
#include "engine/stack.h"
#include "port/port.h"
#include "rdma/gid.h"
#include "rdma/qp.h"
#include "rdma/rdma.h"
#include "verbs/verbs.h"

#undef ibv_query_port
#undef ibv_reg_mr
#undef ibv_reg_mr_iova

/* A control call under the drive lock, its result as libibverbs gives it:
 * a constructor's pointer (errno kept across the unlock), or an int call's
 * 0 / positive errno. */
#define LOCKED_PTR(call) ({ rv_lock(); __typeof__(call) r_ = (call); int e_ = errno; \
			    rv_unlock(); errno = e_; r_; })
#define LOCKED_INT(call) ({ rv_lock(); int r_ = (call); rv_unlock(); rv_err(r_); })

/* An ibv_context of ours (every context a program holds came from us). */
bool rv_ctx_ours(const struct ibv_context *ctx)
{
	struct rv_proc *p = rv_proc_if_started();
	return p != NULL && ctx != NULL && (ctx == p->ctx[0] || ctx == p->ctx[1]);
}

static bool ours(const struct ibv_context *ctx)
{
	return rv_ctx_ours(ctx);
}

/* --- data path: progress for programs that poll ----------------------------- */

/* Whether a send queue of the send completions in @p wc still has work
 * in flight (then the program polls again, no linger: pace.h). */
static bool sends_in_flight(const struct ibv_wc *wc, int n)
{
	const struct rv_proc *p = rv_proc_if_started();
	uint32_t last = UINT32_MAX;

	for (int i = n - 1; i >= 0 && p != NULL; i--) {
		if ((wc[i].opcode & IBV_WC_RECV) || wc[i].qp_num == last)
			continue;
		last = wc[i].qp_num;
		const struct rnic_qp *q = rnic_qp_by_num(p->st, last);
		if (q != NULL && q->sq_prod != q->sq_retired)
			return true;
	}
	return false;
}

/* The thread's last post: the QP and the bytes placed on it by then. A
 * program that spins on memory after its completion waits for the peer's
 * answer on that QP (ib_write_lat), so the linger watches that QP's
 * placed bytes, not any frame: an ACK is a frame too, and the answer may
 * already have come in the burst that brought the completion. */
static __thread uint32_t post_qpn = UINT32_MAX;   /* by number: the QP may go */
static __thread uint64_t post_in;
/* The same QP's placed bytes at the thread's last reap, when that reap
 * took a send completion of that QP (rv_linger_posted: the program took
 * its own operation's completion and then waited for its peer; a server
 * that reaps a request and answers it while the next request comes in is
 * not that pattern); reap_qpn UINT32_MAX: nothing to compare. */
static __thread uint32_t reap_qpn = UINT32_MAX;
static __thread uint64_t reap_in;

static bool reaped_send_of(const struct ibv_wc *wc, int n, uint32_t qpn)
{
	for (int i = 0; i < n; i++)
		if (!(wc[i].opcode & IBV_WC_RECV) && wc[i].qp_num == qpn)
			return true;
	return false;
}

static int dropin_poll_cq(struct ibv_cq *cq, int n, struct ibv_wc *wc)
{
	rv_app_call();
	int got = rnic_cq_poll(cq, n, wc);
	if (got == 0 && rv_progress() > 0)
		got = rnic_cq_poll(cq, n, wc);
	if (got > 0) {
		const struct rv_proc *p = rv_proc_if_started();
		const struct rnic_qp *q = p != NULL && post_qpn != UINT32_MAX
						  ? rnic_qp_by_num(p->st, post_qpn) : NULL;
		rv_reaped(sends_in_flight(wc, got), q != NULL ? &q->xfer.bytes_in : NULL, post_in);
		reap_qpn = UINT32_MAX;
		if (q != NULL && reaped_send_of(wc, got, post_qpn)) {
			reap_qpn = post_qpn;
			reap_in = __atomic_load_n(&q->xfer.bytes_in, __ATOMIC_RELAXED);
		}
	}
	return got;
}

/* A post into an idle send queue, from the thread that gets the drive
 * lock, runs to completion: the work goes out now, not at the next loop
 * of whoever drives. Behind work still in flight it rings the doorbell
 * (pace.h): the program's next ibv_poll_cq() sends all of it in bursts,
 * and every RV_POST_BURST unsent entries the post itself drives the stack
 * once (rv_post_burst) if the drive lock is free. */
static int dropin_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad)
{
	const struct rnic_qp *q = rnic_qp_of(qp);

	rv_app_call();
	post_qpn = qp->qp_num;
	post_in = __atomic_load_n(&q->xfer.bytes_in, __ATOMIC_RELAXED);
	if (reap_qpn == post_qpn && post_in != reap_in)
		rv_posted_after_placement();
	reap_qpn = UINT32_MAX;
	if (!rv_post_now(q->sq_prod - q->sq_retired)) {
		bool burst = rv_post_burst(q->sq_prod - q->sq_cons);
		int rc = rnic_qp_post_send(qp, wr, bad);   /* the doorbell */
		if (burst)
			rv_progress();
		return rc;
	}
	rv_lock();
	int rc = rnic_qp_post_send(qp, wr, bad);
	rv_unlock();
	return rc;
}

void rv_install_ops(struct ibv_context *ctx)
{
	ctx->ops.poll_cq = dropin_poll_cq;
	ctx->ops.post_send = dropin_post_send;
	rv_install_ex_ops(ctx);
}

/* --- devices ------------------------------------------------------------------ */

struct ibv_device **ibv_get_device_list(int *num_devices)
{
	struct rv_proc *p = rv_proc();
	int n = p != NULL ? 2 : 0;
	struct ibv_device **list = calloc((size_t)n + 1, sizeof(*list));

	if (list == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	for (int i = 0; i < n; i++)
		list[i] = p->dev[i];
	if (num_devices != NULL)
		*num_devices = n;
	return list;
}

void ibv_free_device_list(struct ibv_device **list)
{
	free(list);
}

const char *ibv_get_device_name(struct ibv_device *device)
{
	return device != NULL ? device->name : NULL;
}

int ibv_get_device_index(struct ibv_device *device)
{
	return rv_face_of_device(device);
}

/* The node GUID: EUI-64 of the first port's MAC (ibv_query_device's). */
__be64 ibv_get_device_guid(struct ibv_device *device)
{
	struct rv_proc *p = rv_proc_if_started();
	struct ibv_device_attr a;
	int face = rv_face_of_device(device);

	if (p == NULL || face < 0 || rnic_query_device(p->ctx[face], &a) != 0)
		return 0;
	return a.node_guid;
}

struct ibv_context *ibv_open_device(struct ibv_device *device)
{
	struct rv_proc *p = rv_proc();
	int face = rv_face_of_device(device);

	if (p == NULL || face < 0) {
		errno = p == NULL ? errno : ENODEV;
		return NULL;
	}
	return rnic_open_device_transport(p->st, face ? RNIC_TRANSPORT_ROCE : RNIC_TRANSPORT_IWARP);
}

int ibv_close_device(struct ibv_context *context)
{
	if (!ours(context))
		return EINVAL;
	return rv_err(rnic_close_device(context));
}

int ibv_query_device(struct ibv_context *context, struct ibv_device_attr *attr)
{
	if (!ours(context) || attr == NULL)
		return EINVAL;
	int rc = rnic_query_device(context, attr);
	if (rc == 0) {
		/* siw and rxe report their vendor part as 0; a version here
		 * tells a user which rnic answered */
		attr->vendor_part_id = 0;
		attr->hw_ver = 0;
		attr->max_pkeys = 1;
		/* address handles: RoCE UD; iWARP has no datagram service */
		attr->max_ah = context->device->transport_type == IBV_TRANSPORT_IB ? 65536 : 0;
	}
	return rv_err(rc);
}

int ibv_query_port(struct ibv_context *context, uint8_t port_num,
		   struct _compat_ibv_port_attr *port_attr)
{
	struct ibv_port_attr a;

	if (!ours(context) || port_attr == NULL)
		return EINVAL;
	int rc = rnic_query_port(context, port_num, &a);
	if (rc != 0)
		return rv_err(rc);
	/* the layout every caller has (the old one ends after link_layer's
	 * byte and a reserved one) */
	memcpy(port_attr, &a, offsetof(struct ibv_port_attr, flags) + 1);
	return 0;
}

int ibv_query_gid(struct ibv_context *context, uint8_t port_num, int index, union ibv_gid *gid)
{
	if (!ours(context) || gid == NULL)
		return EINVAL;
	/* libibverbs returns -1 for a missing entry */
	return rnic_query_gid(context, port_num, index, gid) == 0 ? 0 : -1;
}

int _ibv_query_gid_ex(struct ibv_context *context, uint32_t port_num, uint32_t gid_index,
		      struct ibv_gid_entry *entry, uint32_t flags, size_t entry_size)
{
	struct ibv_gid_entry e = { .gid_index = gid_index, .port_num = port_num };

	if (!ours(context) || entry == NULL || flags != 0 || port_num > 255 ||
	    entry_size < sizeof(e) || gid_index > 255)
		return EINVAL;
	if (rnic_query_gid(context, (uint8_t)port_num, (int)gid_index, &e.gid) != 0)
		return ENODATA;
	/* RoCEv2 GIDs as rxe lists them; an iWARP device's GID is its MAC */
	e.gid_type = context->device->transport_type == IBV_TRANSPORT_IWARP ? IBV_GID_TYPE_IB
									     : IBV_GID_TYPE_ROCE_V2;
	memcpy(entry, &e, sizeof(e));
	return 0;
}

ssize_t _ibv_query_gid_table(struct ibv_context *context, struct ibv_gid_entry *entries,
			     size_t max_entries, uint32_t flags, size_t entry_size)
{
	struct ibv_device_attr a;
	size_t n = 0;

	if (!ours(context) || flags != 0 || entry_size < sizeof(*entries) ||
	    rnic_query_device(context, &a) != 0)
		return -EINVAL;
	for (uint32_t port = 1; port <= a.phys_port_cnt; port++) {
		struct ibv_port_attr pa;
		if (rnic_query_port(context, (uint8_t)port, &pa) != 0)
			continue;
		for (uint32_t i = 0; i < (uint32_t)pa.gid_tbl_len; i++) {
			if (n == max_entries)
				return -EINVAL;
			struct ibv_gid_entry *e = (void *)((char *)entries + n * entry_size);
			if (_ibv_query_gid_ex(context, port, i, e, 0, entry_size) == 0)
				n++;
		}
	}
	return (ssize_t)n;
}

int ibv_query_pkey(struct ibv_context *context, uint8_t port_num, int index, __be16 *pkey)
{
	struct ibv_device_attr a;

	if (!ours(context) || pkey == NULL || rnic_query_device(context, &a) != 0 ||
	    port_num < 1 || port_num > a.phys_port_cnt || index != 0)
		return -1;
	*pkey = htobe16(0xffff);   /* the default P_Key, full member */
	return 0;
}

int ibv_get_pkey_index(struct ibv_context *context, uint8_t port_num, __be16 pkey)
{
	__be16 k;

	if (ibv_query_pkey(context, port_num, 0, &k) != 0)
		return -EINVAL;
	return (be16toh(pkey) & 0x7fff) == 0x7fff ? 0 : -ENOENT;
}

/* --- protection domains, memory ------------------------------------------------ */

struct ibv_pd *ibv_alloc_pd(struct ibv_context *context)
{
	if (!ours(context)) {
		errno = EINVAL;
		return NULL;
	}
	return LOCKED_PTR(rnic_alloc_pd(context));
}

int ibv_dealloc_pd(struct ibv_pd *pd)
{
	if (pd == NULL || !ours(pd->context))
		return EINVAL;
	return LOCKED_INT(rnic_dealloc_pd(pd));
}

/* Access flags rnic takes: relaxed ordering is a hint (IBV_ACCESS_OPTIONAL
 * range) that a device may ignore, and rnic orders everything. */
static int mr_access(unsigned int access)
{
	return (int)(access & ~(unsigned)IBV_ACCESS_OPTIONAL_RANGE);
}

struct ibv_mr *ibv_reg_mr_iova2(struct ibv_pd *pd, void *addr, size_t length, uint64_t iova,
				unsigned int access)
{
	if (pd == NULL || !ours(pd->context)) {
		errno = EINVAL;
		return NULL;
	}
	return LOCKED_PTR(rnic_reg_mr_iova(pd, addr, length, iova, mr_access(access)));
}

struct ibv_mr *ibv_reg_mr(struct ibv_pd *pd, void *addr, size_t length, int access)
{
	return ibv_reg_mr_iova2(pd, addr, length, (uintptr_t)addr, (unsigned)access);
}

struct ibv_mr *ibv_reg_mr_iova(struct ibv_pd *pd, void *addr, size_t length, uint64_t iova,
			       int access)
{
	return ibv_reg_mr_iova2(pd, addr, length, iova, (unsigned)access);
}

int ibv_dereg_mr(struct ibv_mr *mr)
{
	if (mr == NULL || !ours(mr->context))
		return EINVAL;
	return LOCKED_INT(rnic_dereg_mr(mr));
}

/* --- completion queues and channels ------------------------------------------ */

struct ibv_comp_channel *ibv_create_comp_channel(struct ibv_context *context)
{
	if (!ours(context)) {
		errno = EINVAL;
		return NULL;
	}
	return rnic_create_comp_channel(context);
}

int ibv_destroy_comp_channel(struct ibv_comp_channel *channel)
{
	if (channel == NULL || !ours(channel->context))
		return EINVAL;
	return rv_err(rnic_destroy_comp_channel(channel));
}

struct ibv_cq *ibv_create_cq(struct ibv_context *context, int cqe, void *cq_context,
			     struct ibv_comp_channel *channel, int comp_vector)
{
	if (!ours(context)) {
		errno = EINVAL;
		return NULL;
	}
	return LOCKED_PTR(rnic_create_cq(context, cqe, cq_context, channel, comp_vector));
}

int ibv_destroy_cq(struct ibv_cq *cq)
{
	if (cq == NULL || !ours(cq->context))
		return EINVAL;
	return LOCKED_INT(rnic_destroy_cq(cq));
}

int ibv_get_cq_event(struct ibv_comp_channel *channel, struct ibv_cq **cq, void **cq_context)
{
	if (channel == NULL || !ours(channel->context)) {
		errno = EINVAL;
		return -1;
	}
	rv_block_begin();
	int rc = rnic_get_cq_event(channel, cq, cq_context);
	rv_block_end();
	if (rc != 0) {
		errno = rv_err(rc);
		return -1;
	}
	return 0;
}

void ibv_ack_cq_events(struct ibv_cq *cq, unsigned int nevents)
{
	if (cq != NULL && ours(cq->context))
		rnic_ack_cq_events(cq, nevents);
}

/* --- asynchronous events ------------------------------------------------------- */

int ibv_get_async_event(struct ibv_context *context, struct ibv_async_event *event)
{
	if (!ours(context) || event == NULL) {
		errno = EINVAL;
		return -1;
	}
	int rc = rnic_get_async_event(context, event);
	if (rc != 0) {
		errno = rv_err(rc);
		return -1;
	}
	return 0;
}

void ibv_ack_async_event(struct ibv_async_event *event)
{
	if (event != NULL)
		rnic_ack_async_event(event);
}

/* --- shared receive queues ------------------------------------------------------ */

struct ibv_srq *ibv_create_srq(struct ibv_pd *pd, struct ibv_srq_init_attr *srq_init_attr)
{
	if (pd == NULL || !ours(pd->context)) {
		errno = EINVAL;
		return NULL;
	}
	return LOCKED_PTR(rnic_create_srq(pd, srq_init_attr));
}

int ibv_destroy_srq(struct ibv_srq *srq)
{
	if (srq == NULL || !ours(srq->context))
		return EINVAL;
	return LOCKED_INT(rnic_destroy_srq(srq));
}

/* --- queue pairs --------------------------------------------------------------- */

struct ibv_qp *ibv_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *qp_init_attr)
{
	if (pd == NULL || !ours(pd->context)) {
		errno = EINVAL;
		return NULL;
	}
	return LOCKED_PTR(rnic_create_qp(pd, qp_init_attr));
}

int ibv_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask)
{
	if (qp == NULL || !ours(qp->context) || attr == NULL)
		return EINVAL;
	return LOCKED_INT(rnic_modify_qp(qp, attr, attr_mask));
}

int ibv_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask,
		 struct ibv_qp_init_attr *init_attr)
{
	if (qp == NULL || !ours(qp->context) || attr == NULL || init_attr == NULL)
		return EINVAL;
	return LOCKED_INT(rnic_query_qp(qp, attr, attr_mask, init_attr));
}

int ibv_destroy_qp(struct ibv_qp *qp)
{
	if (qp == NULL || !ours(qp->context))
		return EINVAL;
	rv_cm_release_qp(qp);   /* an rdma_cm_id may still hold it */
	return LOCKED_INT(rnic_destroy_qp(qp));
}

/* rnic places in order: what a Write or Send moves lands in address order
 * and is visible in order (the whole message before the completion). */
int ibv_query_qp_data_in_order(struct ibv_qp *qp, enum ibv_wr_opcode op, uint32_t flags)
{
	(void)op;
	(void)flags;
	return qp != NULL && ours(qp->context) ? 1 : 0;
}

/* --- address handles ------------------------------------------------------------ */

struct ibv_ah *ibv_create_ah(struct ibv_pd *pd, struct ibv_ah_attr *attr)
{
	if (pd == NULL || !ours(pd->context)) {
		errno = EINVAL;
		return NULL;
	}
	return LOCKED_PTR(rnic_create_ah(pd, attr));
}

int ibv_destroy_ah(struct ibv_ah *ah)
{
	if (ah == NULL || !ours(ah->context))
		return EINVAL;
	return LOCKED_INT(rnic_destroy_ah(ah));
}

/* The address of a UD sender from its completion and the GRH in front of
 * the received data (IBA 11.2.5.1; RoCEv2 carries the IP header's
 * addresses there as GIDs, IPv4-mapped). */
/* The GID index of @p gid on @p port_num, or -1 (the port's GID table). */
static int gid_index_of(uint8_t port_num, const union ibv_gid *gid)
{
	const struct rv_proc *p = rv_proc_if_started();
	if (p == NULL || port_num < 1 || port_num > p->st->n_ports)
		return -1;
	struct rnic_addr a = rnic_gid_addr(gid->raw);
	return rnic_gid_find(p->st->ports[port_num - 1], &a);
}

/*
 * An address vector back to the sender of a received datagram, as
 * rdma-core makes it for RoCE v2. The 40 bytes before a UD receive are the
 * IPv6 header, or for IPv4 20 zero bytes then the IPv4 header (rxe's
 * layout): the peer's GID is the IPv6 source or ::ffff:IPv4 source, and
 * the source GID index is the entry of our own address the datagram came
 * to (not a fixed index: an IPv6 datagram came to an IPv6 GID).
 */
int ibv_init_ah_from_wc(struct ibv_context *context, uint8_t port_num, struct ibv_wc *wc,
			struct ibv_grh *grh, struct ibv_ah_attr *ah_attr)
{
	const uint8_t *h = (const uint8_t *)grh;
	union ibv_gid peer, local;
	uint8_t tclass;
	uint32_t flow = 0;

	if (!ours(context) || wc == NULL || ah_attr == NULL ||
	    !(wc->wc_flags & IBV_WC_GRH) || grh == NULL) {
		errno = EINVAL;
		return -1;
	}
	if ((h[0] >> 4) == 6) {
		uint32_t vtf = be32toh(grh->version_tclass_flow);
		peer = grh->sgid;
		local = grh->dgid;
		tclass = (uint8_t)(vtf >> 20);
		flow = vtf & 0xfffff;
	} else if ((h[20] >> 4) == 4) {
		const uint8_t *ip = h + 20;   /* the IPv4 header */
		memset(&peer, 0, sizeof(peer));
		memset(&local, 0, sizeof(local));
		peer.raw[10] = peer.raw[11] = local.raw[10] = local.raw[11] = 0xff;
		memcpy(&peer.raw[12], ip + 12, 4);    /* source address */
		memcpy(&local.raw[12], ip + 16, 4);   /* destination address */
		tclass = ip[1];
	} else {
		errno = EINVAL;   /* neither header: not a RoCE v2 datagram */
		return -1;
	}
	int idx = gid_index_of(port_num, &local);
	if (idx < 0) {
		errno = ENOENT;   /* it came to an address this port does not hold */
		return -1;
	}
	memset(ah_attr, 0, sizeof(*ah_attr));
	ah_attr->is_global = 1;
	ah_attr->port_num = port_num;
	ah_attr->sl = wc->sl;
	ah_attr->src_path_bits = wc->dlid_path_bits;
	ah_attr->grh.dgid = peer;
	ah_attr->grh.sgid_index = (uint8_t)idx;
	ah_attr->grh.hop_limit = 0xff;
	ah_attr->grh.traffic_class = tclass;
	ah_attr->grh.flow_label = flow;
	return 0;
}

struct ibv_ah *ibv_create_ah_from_wc(struct ibv_pd *pd, struct ibv_wc *wc, struct ibv_grh *grh,
				     uint8_t port_num)
{
	struct ibv_ah_attr a;

	if (pd == NULL) {
		errno = EINVAL;
		return NULL;
	}
	if (ibv_init_ah_from_wc(pd->context, port_num, wc, grh, &a) != 0)
		return NULL;   /* errno set */
	return ibv_create_ah(pd, &a);
}

/* --- fork -------------------------------------------------------------------------- */

/* rnic pins no pages in a kernel: nothing to protect across fork(). A
 * child still cannot use the parent's stack (docs/dropin.md). */
int ibv_fork_init(void)
{
	return 0;
}

enum ibv_fork_status ibv_is_fork_initialized(void)
{
	return IBV_FORK_UNNEEDED;
}

/* exported by libibverbs, declared by no installed header */
int ibv_dontfork_range(void *base, size_t size);
int ibv_dofork_range(void *base, size_t size);

int ibv_dontfork_range(void *base, size_t size)
{
	(void)base;
	(void)size;
	return 0;
}

int ibv_dofork_range(void *base, size_t size)
{
	(void)base;
	(void)size;
	return 0;
}

/* --- rdma-core private symbols that its own tools call ------------------------- */

/* ibv_devinfo asks each GID's type through this rdma-core private call
 * (IBVERBS_PRIVATE); its types: 0 IB or RoCE v1, 1 RoCE v2. */
enum rv_gid_type_sysfs { RV_GID_TYPE_SYSFS_IB_ROCE_V1, RV_GID_TYPE_SYSFS_ROCE_V2 };
int ibv_query_gid_type(struct ibv_context *context, uint8_t port_num, unsigned int index,
		       enum rv_gid_type_sysfs *type);

int ibv_query_gid_type(struct ibv_context *context, uint8_t port_num, unsigned int index,
		       enum rv_gid_type_sysfs *type)
{
	struct ibv_gid_entry e;

	if (type == NULL || _ibv_query_gid_ex(context, port_num, index, &e, 0, sizeof(e)) != 0) {
		errno = EINVAL;
		return -1;
	}
	*type = e.gid_type == IBV_GID_TYPE_ROCE_V2 ? RV_GID_TYPE_SYSFS_ROCE_V2
						   : RV_GID_TYPE_SYSFS_IB_ROCE_V1;
	return 0;
}
