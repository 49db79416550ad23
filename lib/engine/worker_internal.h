/* SPDX-License-Identifier: BSD-3-Clause */
/* Worker lifecycle, used by stack.c only. */
#ifndef RNIC_ENGINE_WORKER_INTERNAL_H
#define RNIC_ENGINE_WORKER_INTERNAL_H

#include "engine/worker.h"

struct rnic_worker *rnic_worker_create(struct rnic_stack *st, unsigned id);
int rnic_worker_finish_pollers(struct rnic_worker *w);
int rnic_worker_main(void *arg);
bool rnic_worker_idle(struct rnic_worker *w, enum rnic_poll_mode mode, unsigned work);
void rnic_worker_drain(struct rnic_worker *w);
void rnic_worker_free(struct rnic_worker *w);

#endif
