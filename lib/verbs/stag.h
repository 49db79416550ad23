/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The STag table of a stack: memory regions and memory windows in one
 * space of 24-bit indices with an 8-bit key each (lkey = rkey = STag).
 * Registration is control path (a mutex); lookup is the data path of every
 * transport (lock-free: an acquire load of the slot, then checks). A freed
 * slot's index comes back with a new key, so an old STag never names new
 * memory. Entries are freed only after every worker has passed a quiescent
 * point (rnic_stag_remove waits for them).
 */
#ifndef RNIC_VERBS_STAG_H
#define RNIC_VERBS_STAG_H

#include <stdbool.h>
#include <stdint.h>

struct rnic_stack;

enum rnic_mem_kind { RNIC_MEM_MR, RNIC_MEM_MW };

struct rnic_mem {
	uint32_t stag;            /* index << 8 | key */
	uint8_t kind;             /* enum rnic_mem_kind */
	uint8_t mw_type;          /* 1 or 2 for windows */
	volatile uint8_t valid;   /* 0: invalidated (or an unbound window) */
	const void *pd;           /* owner; NULL for rnic_iw_reg_mr() users */
	uint32_t qpn;             /* type 2 window: the QP it is bound to */
	int access;               /* IBV_ACCESS_* */
	uint64_t va, len;         /* the tagged range */
	uint8_t *addr;            /* host address of va */
	struct rnic_mem *parent;  /* window: the MR it is bound to */
	uint32_t binds;           /* MR: windows bound to it (atomic) */
	void *owner;              /* the verbs object that embeds this entry */
};

/* What an STag lookup found wrong; each transport maps it to its own error
 * (iWARP: rnic_term_tagged_fault() and rnic_term_read_src_fault()). The
 * order of the faults is fixed (fuzz corpora hold raw values). */
enum rnic_stag_fault {
	RNIC_STAG_INVALID,        /* no such STag, wrong key, or invalidated */
	RNIC_STAG_BOUNDS,         /* TO + length outside the range */
	RNIC_STAG_ACCESS,         /* rights missing */
	RNIC_STAG_PD,             /* another PD (or QP, for type 2 windows) */
	RNIC_STAG_TO_WRAP,        /* TO + length wraps 2^64 */
	RNIC_STAG_OK,
};

int rnic_stag_table_create(struct rnic_stack *st);
void rnic_stag_table_free(struct rnic_stack *st);

/* Enter @p m (its fields set, stag ignored): gives it an STag. Any thread.
 * @return 0 or -ENOSPC. */
int rnic_stag_insert(struct rnic_stack *st, struct rnic_mem *m);

/* Take @p m out of the table and wait until no worker can still be using
 * it (a worker calling this skips waiting for itself). Any thread. */
void rnic_stag_remove(struct rnic_stack *st, struct rnic_mem *m);

/* The entry an STag names (key checked), or NULL. Data path. */
struct rnic_mem *rnic_stag_find(const struct rnic_stack *st, uint32_t stag);

/*
 * Check that [@p to, @p to + @p len) under @p stag is valid for @p pd (and
 * QP @p qpn, for type 2 windows) with all of @p access. @return the host
 * address of @p to, or NULL with *err set. len 0 passes the bounds check at
 * any @p to inside or at the end of the range. Data path.
 */
uint8_t *rnic_stag_check(const struct rnic_stack *st, uint32_t stag,
			 const void *pd, uint32_t qpn, uint64_t to, uint64_t len,
			 int access, enum rnic_stag_fault *err);

/* Invalidate @p stag for @p pd (local or remote invalidation). MRs and
 * windows both. @return RNIC_STAG_OK or the reason it cannot be. */
enum rnic_stag_fault rnic_stag_invalidate(const struct rnic_stack *st,
					uint32_t stag, const void *pd);

#endif
