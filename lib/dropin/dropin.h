/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * librnic-verbs: the libibverbs + librdmacm drop-in (docs/dropin.md).
 *
 * One rnic stack per process, built on the program's first verbs or
 * rdma_cm call from the configuration rnic-run passes in the environment
 * (RNIC_CONFIG, RNIC_ARGS, RNIC_TRANSPORT, RNIC_DRIVE). By default the
 * stack's workers run on no lcore of their own: they are driven under one
 * process-wide lock ("the drive lock") by whichever thread gets there
 * first, the program's polling thread (ibv_poll_cq, ibv_post_send) or a
 * progress thread that steps in while the program is blocked or busy
 * elsewhere. Control calls (create, modify, destroy, connect, ...) run
 * under the drive lock too, since rnic runs them inline on the calling
 * thread when the workers are not on lcores.
 */
#ifndef RNIC_DROPIN_H
#define RNIC_DROPIN_H

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>

#include <infiniband/verbs.h>

#include "rnic/rnic_verbs.h"

/* The process's stack and its two device faces. */
struct rv_proc {
	struct rnic_stack *st;
	struct ibv_context *ctx[2];      /* [0] iWARP face, [1] RoCE face */
	struct ibv_device *dev[3];       /* the two faces' devices, NULL-ended */
	enum rnic_transport transport;   /* RNIC_TRANSPORT: the default face */
	bool inline_drive;               /* workers driven by the program's threads */
};

/* Build the stack on first use. @return the process state, or NULL with
 * errno set (the reason was logged once). */
struct rv_proc *rv_proc(void);

/* The stack if it was started, else NULL (no start). */
struct rv_proc *rv_proc_if_started(void);

/* Take and release the drive lock around a control call (nothing when the
 * workers run on lcores). Blocking waits must not hold it. */
void rv_lock(void);
void rv_unlock(void);

/* Drive the stack once if the drive lock is free (a program's polling
 * call). @return the work done. */
unsigned rv_progress(void);

/* A data path call of the program (ibv_post_send, ibv_poll_cq): counted,
 * for the linger of pace.h. */
void rv_app_call(void);

/* ibv_poll_cq() returns completions: linger first when the program waits
 * for its peer spinning on memory (pace.h); never while @p sends_in_flight
 * (a send queue of those completions still has work outstanding). With
 * @p watch (the bytes placed on the QP of the thread's last post, @p since
 * then), the linger is skipped when they moved already and ends when they
 * move; without, it ends at the next frame received. */
void rv_reaped(bool sends_in_flight, const uint64_t *watch, uint64_t since);

/* A post that follows the thread's last reap with no call between, after
 * bytes were placed on the QP of its previous post since that reap: the
 * program waited for them spinning on memory (pace.h, rv_linger_posted). */
void rv_posted_after_placement(void);

/* Around a program's blocking verbs wait (ibv_get_cq_event,
 * rdma_get_cm_event): the progress thread takes over at once. */
void rv_block_begin(void);
void rv_block_end(void);

/* pthread_create() for a thread of the drop-in's own: it blocks the
 * signals that belong to the program's threads (proc.c, stack_sigmask). */
int rv_thread_create(pthread_t *tid, void *(*fn)(void *), void *arg);

/* The face (0 iWARP, 1 RoCE) of a device of ours, or -1. */
int rv_face_of_device(const struct ibv_device *dev);

/* One log line naming an entry point that rnic does not support (once per
 * entry point and process), and errno EOPNOTSUPP. */
void rv_unsupported(const char *fn);

/* Log on stderr, prefixed "rnic-verbs: ". */
void rv_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* An rnic result (0 or an errno of either sign) as libibverbs reports it:
 * 0 or a positive errno. */
static inline int rv_err(int rc)
{
	return rc < 0 ? -rc : rc;
}

/* Set errno from an rnic result and return -1 (librdmacm's convention). */
static inline int rv_fail(int rc)
{
	errno = rv_err(rc);
	return errno ? -1 : 0;
}

/* Install the drop-in's data-path ops on a context of ours (progress on
 * poll and post). */
void rv_install_ops(struct ibv_context *ctx);

/* Fill the extended ops of a context of ours (verbs_ex.c): query_device_ex,
 * query_port, create_qp_ex, create_cq_ex; every other op stays NULL. */
void rv_install_ex_ops(struct ibv_context *ctx);

/* Whether @p ctx is one of the drop-in's two contexts. */
bool rv_ctx_ours(const struct ibv_context *ctx);

/* ibv_destroy_qp() calls this first, without the drive lock: an
 * rdma_cm_id that still holds @p qp lets go of it (rdmacm.c). */
void rv_cm_release_qp(struct ibv_qp *qp);

/* Queued events that destroying ids looked at (RNIC_VERBS_STATS): 0 while
 * every destroyed id had its events taken. */
uint64_t rv_cm_forget_walked(void);

#endif
