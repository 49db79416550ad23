/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rdma-gateway serving its [target.NAME] sections over iWARP and RoCE (the
 * target's `transport`): memory or mmap'd files registered once, one CM
 * listener per listen port (it hears both transports), a small QP of the
 * request's transport per client, the target protocol of
 * apps/common/rnic_gw.h.
 */
#ifndef GW_SERVE_H
#define GW_SERVE_H

#include <stdio.h>

#include "rnic/rnic.h"
#include "target.h"

/* Map and register every target, listen on their ports with @p backlog
 * ([gateway] backlog). @return 0 or -1 with one line in @p err. */
int gw_serve_start(struct rnic_stack *st, struct gw_target *t, unsigned n,
		   unsigned backlog, char *err, size_t errlen);

/* Handle connection events for up to @p timeout_ms. */
void gw_serve_poll(int timeout_ms);

/* Take every target's totals (clients gone and connected) and its ops/s
 * since the previous call, for the status line and telemetry. */
void gw_serve_refresh(uint64_t now_ms);

/* Per-target figures for the status line, as of the last refresh. */
void gw_serve_status(FILE *f);

/* Stop accepting, disconnect every client gracefully, msync and unmap.
 * @return 0, or -1 when a file target could not be synced. */
int gw_serve_stop(void);

#endif
