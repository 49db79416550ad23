/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The protocol modules hooked into every stack, in initialisation order
 * (torn down in reverse). NULL-terminated. It names every module, so it
 * sits above them all, in librnic itself rather than in lib/engine; a unit
 * test links the engine with a table of its own.
 */
#include <stddef.h>

#include "engine/stack.h"

extern const struct rnic_proto_ops rnic_net_proto;
extern const struct rnic_proto_ops rnic_tcp_proto;
extern const struct rnic_proto_ops rnic_rdma_proto;
extern const struct rnic_proto_ops rnic_iwarp_proto;
extern const struct rnic_proto_ops rnic_roce_proto;
extern const struct rnic_proto_ops rnic_verbs_proto;

const struct rnic_proto_ops *const rnic_protocols[] = {
	&rnic_net_proto,       /* first: the engine's loop calls it (rnic_net_hooks) */
	&rnic_tcp_proto,
	&rnic_rdma_proto,      /* before the transports: they register with it */
	&rnic_iwarp_proto,
	&rnic_roce_proto,
	&rnic_verbs_proto,
	NULL
};
