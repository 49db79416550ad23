/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Test-only preload for perftest_interop.sh: delays every rdma_connect()
 * by CONNECT_DELAY_MS (default 500) before handing it to the next
 * definition in line (librnic-verbs).
 *
 * Why: perftest -R connects its data QP right after its handshake with
 * the server, while the server is still creating its data listener. The
 * server here runs in an emulated guest, tens of times slower than the
 * hardware it stands in for, so rnic's client usually arrives first and is
 * refused, and Debian's perftest 4.5-0.17 then crashes on its own retry
 * path (fixed upstream in perftest 3d9d8d0). The delay lets the test check
 * the interop of the connection and the traffic, not that race.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>
#include <time.h>

struct rdma_cm_id;
struct rdma_conn_param;

int rdma_connect(struct rdma_cm_id *id, struct rdma_conn_param *param);

int rdma_connect(struct rdma_cm_id *id, struct rdma_conn_param *param)
{
	int (*next)(struct rdma_cm_id *, struct rdma_conn_param *) =
		(int (*)(struct rdma_cm_id *, struct rdma_conn_param *))dlsym(RTLD_NEXT, "rdma_connect");
	const char *env = getenv("CONNECT_DELAY_MS");
	long ms = env != NULL ? strtol(env, NULL, 10) : 500;
	struct timespec d = { ms / 1000, (ms % 1000) * 1000000L };

	if (next == NULL) {
		errno = ENOSYS;
		return -1;
	}
	if (ms > 0)
		nanosleep(&d, NULL);
	return next(id, param);
}
