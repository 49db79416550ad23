/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The protocol modules hooked into every stack, in initialisation order
 * (torn down in reverse). NULL-terminated.
 */
#include <stddef.h>

#include "engine/engine_internal.h"
#include "engine/stack.h"

extern const struct rnic_proto_ops rnic_tcp_proto;

const struct rnic_proto_ops *const rnic_protocols[] = {
	&rnic_tcp_proto,
	NULL
};

uint64_t rnic_stack_connections(const struct rnic_stack *st)
{
	uint64_t n = 0;
	for (unsigned i = 0; rnic_protocols[i] != NULL; i++)
		if (rnic_protocols[i]->connections)
			n += rnic_protocols[i]->connections(st);
	return n;
}
