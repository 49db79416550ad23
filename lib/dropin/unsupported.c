/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The libibverbs entry points rnic does not support. Each fails the way
 * libibverbs reports failure (NULL or an error return, errno EOPNOTSUPP)
 * and names itself in one log line (once per process). None of them may
 * fall through to the real libibverbs: it would read rnic's objects as its
 * own. docs/dropin.md lists them.
 */
#include <stddef.h>
#include <stdint.h>

#include "dropin/dropin.h"

#define UNSUP_PTR(name)  do { rv_unsupported(name); return NULL; } while (0)
#define UNSUP_INT(name)  do { rv_unsupported(name); return EOPNOTSUPP; } while (0)

/* multicast: rnic has no multicast groups */
int ibv_attach_mcast(struct ibv_qp *qp, const union ibv_gid *gid, uint16_t lid)
{
	(void)qp; (void)gid; (void)lid;
	UNSUP_INT("ibv_attach_mcast");
}

int ibv_detach_mcast(struct ibv_qp *qp, const union ibv_gid *gid, uint16_t lid)
{
	(void)qp; (void)gid; (void)lid;
	UNSUP_INT("ibv_detach_mcast");
}

/* sharing objects between processes through a kernel command fd */
struct ibv_context *ibv_import_device(int cmd_fd)
{
	(void)cmd_fd;
	UNSUP_PTR("ibv_import_device");
}

struct ibv_pd *ibv_import_pd(struct ibv_context *context, uint32_t pd_handle)
{
	(void)context; (void)pd_handle;
	UNSUP_PTR("ibv_import_pd");
}

struct ibv_mr *ibv_import_mr(struct ibv_pd *pd, uint32_t mr_handle)
{
	(void)pd; (void)mr_handle;
	UNSUP_PTR("ibv_import_mr");
}

struct ibv_dm *ibv_import_dm(struct ibv_context *context, uint32_t dm_handle)
{
	(void)context; (void)dm_handle;
	UNSUP_PTR("ibv_import_dm");
}

void ibv_unimport_pd(struct ibv_pd *pd)
{
	(void)pd;
	rv_unsupported("ibv_unimport_pd");
}

void ibv_unimport_mr(struct ibv_mr *mr)
{
	(void)mr;
	rv_unsupported("ibv_unimport_mr");
}

void ibv_unimport_dm(struct ibv_dm *dm)
{
	(void)dm;
	rv_unsupported("ibv_unimport_dm");
}

/* memory: dma-buf needs a kernel; re-registration in place is not done */
struct ibv_mr *ibv_reg_dmabuf_mr(struct ibv_pd *pd, uint64_t offset, size_t length,
				 uint64_t iova, int fd, int access)
{
	(void)pd; (void)offset; (void)length; (void)iova; (void)fd; (void)access;
	UNSUP_PTR("ibv_reg_dmabuf_mr");
}

int ibv_rereg_mr(struct ibv_mr *mr, int flags, struct ibv_pd *pd, void *addr, size_t length,
		 int access)
{
	(void)mr; (void)flags; (void)pd; (void)addr; (void)length; (void)access;
	rv_unsupported("ibv_rereg_mr");
	return IBV_REREG_MR_ERR_INPUT;   /* the old MR stays valid */
}

/* queues: no resizing; the extended QP interface (ibv_wr_*) is not there */
int ibv_resize_cq(struct ibv_cq *cq, int cqe)
{
	(void)cq; (void)cqe;
	UNSUP_INT("ibv_resize_cq");
}

int ibv_modify_srq(struct ibv_srq *srq, struct ibv_srq_attr *srq_attr, int srq_attr_mask)
{
	(void)srq; (void)srq_attr; (void)srq_attr_mask;
	UNSUP_INT("ibv_modify_srq");
}

int ibv_query_srq(struct ibv_srq *srq, struct ibv_srq_attr *srq_attr)
{
	(void)srq; (void)srq_attr;
	UNSUP_INT("ibv_query_srq");
}

struct ibv_qp_ex *ibv_qp_to_qp_ex(struct ibv_qp *qp)
{
	(void)qp;
	UNSUP_PTR("ibv_qp_to_qp_ex");
}

/* enhanced connection establishment: a vendor option */
int ibv_set_ece(struct ibv_qp *qp, struct ibv_ece *ece)
{
	(void)qp; (void)ece;
	UNSUP_INT("ibv_set_ece");
}

int ibv_query_ece(struct ibv_qp *qp, struct ibv_ece *ece)
{
	(void)qp; (void)ece;
	UNSUP_INT("ibv_query_ece");
}

/* Layer 2 from a GID is the kernel's neighbour table; rnic resolves
 * addresses inside the stack, when a QP or an AH is used. */
int ibv_resolve_eth_l2_from_gid(struct ibv_context *context, struct ibv_ah_attr *attr,
				uint8_t eth_mac[ETHERNET_LL_SIZE], uint16_t *vid)
{
	(void)context; (void)attr; (void)eth_mac; (void)vid;
	UNSUP_INT("ibv_resolve_eth_l2_from_gid");
}

/*
 * Kernel ABI helpers and sysfs readers: rdma-core exports them for its own
 * providers and librdmacm, and no installed header declares them. rnic has
 * no kernel structures to convert and no sysfs. The prototypes here take
 * the pointers as opaque; the calling convention is the same.
 */
void ibv_copy_qp_attr_from_kern(void *dst, const void *src);
void ibv_copy_ah_attr_from_kern(void *dst, const void *src);
void ibv_copy_path_rec_from_kern(void *dst, const void *src);
void ibv_copy_path_rec_to_kern(void *dst, const void *src);
const char *ibv_get_sysfs_path(void);
int ibv_read_sysfs_file(const char *dir, const char *file, char *buf, size_t size);

void ibv_copy_qp_attr_from_kern(void *dst, const void *src)
{
	(void)dst; (void)src;
	rv_unsupported("ibv_copy_qp_attr_from_kern");
}

void ibv_copy_ah_attr_from_kern(void *dst, const void *src)
{
	(void)dst; (void)src;
	rv_unsupported("ibv_copy_ah_attr_from_kern");
}

void ibv_copy_path_rec_from_kern(void *dst, const void *src)
{
	(void)dst; (void)src;
	rv_unsupported("ibv_copy_path_rec_from_kern");
}

void ibv_copy_path_rec_to_kern(void *dst, const void *src)
{
	(void)dst; (void)src;
	rv_unsupported("ibv_copy_path_rec_to_kern");
}

const char *ibv_get_sysfs_path(void)
{
	UNSUP_PTR("ibv_get_sysfs_path");
}

int ibv_read_sysfs_file(const char *dir, const char *file, char *buf, size_t size)
{
	(void)dir; (void)file; (void)buf; (void)size;
	rv_unsupported("ibv_read_sysfs_file");
	return -1;
}
