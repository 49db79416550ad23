/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rnic-perf: --server and --client over real ports (not written yet).
 */
#include <stdio.h>

#include "perf.h"

int perf_remote(const struct perf_opts *o, struct rnic_config *cfg, struct perf_result *r)
{
	(void)o; (void)cfg; (void)r;
	fprintf(stderr, "rnic-perf: --server/--client are not implemented yet\n");
	return PERF_EXIT_FAIL;
}
