/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rnic-perf: the test names and the options' defaults, shared by the
 * command line (main.c) and by responders that run inside other programs
 * (rdma-gateway's [responder.perf]).
 */
#include <string.h>

#include "perf.h"

const char *const perf_test_names[PERF_NTESTS] = {
	[PERF_WRITE_BW] = "write_bw",
	[PERF_WRITE_LAT] = "write_lat",
	[PERF_READ_BW] = "read_bw",
	[PERF_READ_LAT] = "read_lat",
	[PERF_SEND_BW] = "send_bw",
	[PERF_SEND_LAT] = "send_lat",
	[PERF_ATOMIC_BW] = "atomic_bw",
};

const char *const perf_drive_names[] = {
	[PERF_DRIVE_INLINE] = "inline",
	[PERF_DRIVE_ONE] = "one",
	[PERF_DRIVE_THREADED] = "threaded",
	[PERF_DRIVE_SPLIT] = "split",
};

void perf_opts_default(struct perf_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->test = PERF_WRITE_BW;
	o->transport = RNIC_TRANSPORT_IWARP;
	o->qps = 1;
	o->tx_depth = 128;
	o->post_list = PERF_POST_LIST_MAX;
	o->cqs = 1;
	o->tcp_port = PERF_DEFAULT_PORT;
	o->ports = 1;
	o->fail_port = -1;
	o->fail_at = 50;
}
