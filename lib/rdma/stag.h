/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * STag tables (seed 000): every bound port of a stack generates its own
 * STags and keeps its own table. An STag is
 *
 *     port (8 bits) | index (16 bits) | key (8 bits)       lkey = rkey = STag
 *
 * so the port that generated an STag is in its top byte. A port also holds
 * *imports*: entries for STags other ports generated, installed by the
 * migration control component (lib/rdma/migrate.c) the first time a tagged
 * segment for one arrives on that port. An import records what the owner's
 * entry said (address, length, rights, PD, key) and points back at it.
 *
 * Registration and migration are control path (a mutex); lookup is the data
 * path of every transport (lock-free: acquire loads, then checks). A freed
 * slot's index comes back with a new key, so an old STag never names new
 * memory. Entries are freed only after every worker has passed a quiescent
 * point. Invalidating, re-binding or freeing an owner's entry revokes its
 * imports first (the invalid bit of every copy is cleared before the call
 * returns), so no port places through a stale copy.
 */
#ifndef RNIC_RDMA_STAG_H
#define RNIC_RDMA_STAG_H

#include <stdbool.h>
#include <stdint.h>

#include "engine/worker.h"
#include "rnic/rnic_verbs.h"

struct rnic_stack;

enum rnic_mem_kind { RNIC_MEM_MR, RNIC_MEM_MW, RNIC_MEM_IMPORT };

#define RNIC_STAG_PORT_SHIFT 24

/* The port (index in st->ports) that generated @p stag. */
static inline unsigned rnic_stag_port(uint32_t stag)
{
	return stag >> RNIC_STAG_PORT_SHIFT;
}

struct rnic_mem {
	uint32_t stag;            /* port << 24 | index << 8 | key */
	uint8_t kind;             /* enum rnic_mem_kind */
	uint8_t mw_type;          /* 1 or 2 for windows */
	volatile uint8_t valid;   /* the invalid bit: 0 = invalidated, revoked,
				   * or an unbound window */
	uint8_t port;             /* owner: the generating port; import: the
				   * port holding the copy */
	const void *pd;           /* owner (the verbs PD); NULL: any PD */
	uint32_t qpn;             /* type 2 window: the QP it is bound to */
	int access;               /* IBV_ACCESS_* */
	uint64_t va, len;         /* the tagged range */
	uint8_t *addr;            /* host address of va */
	struct rnic_mem *parent;  /* window: the MR it is bound to */
	uint32_t binds;           /* MR: windows bound to it (atomic) */
	void *owner;              /* the verbs object that embeds this entry */
	/* migration */
	volatile uint32_t imported_by;   /* owner: bit p = port p holds a copy */
	struct rnic_mem *origin;  /* import: the owner's entry */
	struct rnic_mem *next;    /* import: next in its port's chain */
	uint64_t retired[RNIC_MAX_WORKERS];  /* import: workers' loops at revoke */
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
	RNIC_STAG_MIGRATE,        /* another port's STag, not imported here yet */
};


int rnic_stag_table_create(struct rnic_stack *st);
void rnic_stag_table_free(struct rnic_stack *st);

/* Enter @p m (its fields set, m->port = the generating port, stag ignored):
 * gives it an STag of that port. Any thread. @return 0, -EINVAL (no such
 * port) or -ENOSPC. */
int rnic_stag_insert(struct rnic_stack *st, struct rnic_mem *m);

/* Take @p m out of the table (and its imports out of every port) and wait
 * until no worker can still be using them (a worker calling this skips
 * waiting for itself). Any thread. */
void rnic_stag_remove(struct rnic_stack *st, struct rnic_mem *m);

/* The owner's entry an STag names (key checked), or NULL. Data path. */
struct rnic_mem *rnic_stag_find(const struct rnic_stack *st, uint32_t stag);

/*
 * Check that [@p to, @p to + @p len) under @p stag is valid for @p pd (and
 * QP @p qpn, for type 2 windows) with all of @p access, at the owner's
 * table (local access: lkeys, binds). @return the host address of @p to,
 * or NULL with *err set. len 0 passes the bounds check at any @p to inside
 * or at the end of the range. Data path.
 */
uint8_t *rnic_stag_check(const struct rnic_stack *st, uint32_t stag,
			 const void *pd, uint32_t qpn, uint64_t to, uint64_t len,
			 int access, enum rnic_stag_fault *err);

/*
 * The same check for a tagged segment that arrived on port @p port (remote
 * access): the owner's table when @p port generated the STag, otherwise the
 * port's import. *err = RNIC_STAG_MIGRATE when the port holds no import yet:
 * ask the control component (rnic_stag_migrate()) and try again when it
 * answers. Data path.
 */
uint8_t *rnic_stag_check_at(const struct rnic_stack *st, unsigned port, uint32_t stag,
			    const void *pd, uint32_t qpn, uint64_t to, uint64_t len,
			    int access, enum rnic_stag_fault *err);

/* The STag of the registration behind @p stag: the MR itself, or the MR
 * a window is bound to; 0 when @p stag names nothing valid. A transport
 * that accepted a request keeps it, and checks that registration (not the
 * window, which a later request may invalidate) while it serves the
 * request: the memory stays registered as long as it does. */
uint32_t rnic_stag_root(const struct rnic_stack *st, uint32_t stag);

/* Invalidate @p stag for @p pd (local or remote invalidation): type 2
 * windows only (an MR or a type 1 window: RNIC_STAG_ACCESS, nothing
 * changed); every port's copy is revoked. @return RNIC_STAG_OK or the
 * reason it cannot be. */
enum rnic_stag_fault rnic_stag_invalidate(const struct rnic_stack *st,
					uint32_t stag, const void *pd);

/* Invalidate @p stag for a peer's Send with Invalidate that arrived on QP
 * @p qpn of @p pd: rnic_stag_invalidate()'s checks (MRs and type 1
 * windows refused with RNIC_STAG_ACCESS), and a type 2 window must be
 * bound to that QP (RNIC_STAG_PD otherwise). Data path. */
enum rnic_stag_fault rnic_stag_invalidate_remote(const struct rnic_stack *st, uint32_t stag,
						const void *pd, uint32_t qpn);

/* Revoke the imports of owner entry @p m made under its STag @p stag
 * (before a window is re-bound under a new key, or unbound). Any thread. */
void rnic_stag_revoke(const struct rnic_stack *st, struct rnic_mem *m, uint32_t stag);

/* --- migration (lib/rdma/migrate.c): the control component --------------- */

/*
 * A migration query: "port @p port received @p stag, which it does not
 * know". Embedded in the asking QP; it stays alive until done() runs.
 */
struct rnic_stag_mig {
	struct rnic_cmd cmd;          /* the answer, run on the asker's worker */
	struct rnic_stack *st;
	struct rnic_worker *w;        /* the asker's worker */
	uint32_t stag;
	uint8_t port;
	enum rnic_stag_fault fault;   /* the answer: OK (installed) or INVALID */
	bool resolved;
	uint64_t t0;                  /* TSC when asked */
	void (*done)(struct rnic_stag_mig *q);   /* on w, after the answer */
	struct rnic_stag_mig *held;   /* next in the hold list (tests) */
};

/* Ask the control component (on the asker's worker @p q->w). The answer
 * comes later, through q->done on the same worker, never from inside this
 * call. */
void rnic_stag_migrate(struct rnic_stag_mig *q);

/* Worker poller (worker 0): the control component. Serves queries: looks
 * the STag up at its owner, installs the import, answers; frees revoked
 * imports once every worker has moved on. */
unsigned rnic_stag_mig_poll(struct rnic_worker *w, void *arg);

/* Resolve @p q now, on the calling thread (the control component's step). */
void rnic_stag_mig_resolve(struct rnic_stack *st, struct rnic_stag_mig *q);

/* Tests: with @p hold, queries wait in the control component until it is
 * released (segments behind them pile up in order). @return 0 or -EINVAL. */
int rnic_stag_mig_hold(struct rnic_stack *st, bool hold);
/* Queries the control component has not answered yet. */
unsigned rnic_stag_mig_waiting(struct rnic_stack *st);

/* Counters of port @p port. @return 0 or -EINVAL. */
int rnic_stag_port_stats(const struct rnic_stack *st, unsigned port,
			 struct rnic_stag_port_stats *s);

/* Internal to stag.c and migrate.c. */
struct rnic_stag_table;
struct rnic_stag_table *rnic_stag_table_of(const struct rnic_stack *st);

#endif
