/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rnic-perf conn_rate: connection setup rate (conn_rate.c).
 */
#ifndef RNIC_PERF_CONN_RATE_H
#define RNIC_PERF_CONN_RATE_H

#include "rnic/rnic.h"

/* Run "rnic-perf conn_rate ...": @p argv[0] is "conn_rate", @p cfg the
 * command line's stack options. @return the exit status. */
int perf_conn_rate_main(int argc, char **argv, struct rnic_config *cfg);

#endif
