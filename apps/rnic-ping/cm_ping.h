/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rnic-ping's client over verbs and the connection manager (cm_ping.c):
 * rping's protocol on a QP of either transport, connected by rnic_cm. The
 * server is apps/common/rping_server.c.
 */
#ifndef RNIC_APPS_PING_CM_PING_H
#define RNIC_APPS_PING_CM_PING_H

#include <stdbool.h>
#include <stdint.h>

#include "rnic/rnic_verbs.h"

struct rnic_stack;

struct cm_ping_opts {
	bool server, verbose, validate, persistent;
	bool crc;                        /* ask for MPA CRC32c (iWARP) */
	enum rnic_transport transport;   /* the client's QP */
	struct rnic_addr dst;            /* IPv4 or IPv6 (iWARP only) */
	uint16_t port;
	unsigned count;                  /* 0 = for ever */
	uint32_t size;
};

/** Run the client on the started stack @p st.
 *  @return the exit status (0: every ping completed). */
int cm_ping_run(struct rnic_stack *st, const struct cm_ping_opts *o);

#endif
