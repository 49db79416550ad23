/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The server side of rdma-core's rping protocol on rnic's verbs and
 * connection manager, one client at a time, as long as asked: rdma-gateway's
 * [responder.ping]. The message sequence is in rping_server.c.
 */
#ifndef RNIC_RPING_SERVER_H
#define RNIC_RPING_SERVER_H

#include <stdbool.h>
#include <stdint.h>

#include <infiniband/verbs.h>

#include "rnic/rnic.h"
#include "rnic/rnic_cm.h"

#define RPING_DEFAULT_PORT 7174          /**< rping's -p */
#define RPING_SERVER_MIN_SIZE 32         /**< rping's smallest -S */
#define RPING_SERVER_MAX_SIZE (64u << 20)

/** What the server is told. */
struct rping_server_opts {
	uint16_t port;                   /**< TCP port (iWARP) and service ID (RoCE) */
	uint32_t size;                   /**< its buffer: at least the clients' -S */
	bool iwarp, roce;                /**< transports it accepts a client over (the
					      QP is of the request's transport) */
	bool crc;                        /**< ask for MPA CRC32c (a peer that asks gets it) */
	bool verbose;                    /**< print each ping's data, as rping -v */
	bool once;                       /**< serve one client, then return (rping
					      without -P) */
	FILE *out;                       /**< where -v prints (NULL: stdout) */
};

/** What it has done; read by other threads with __atomic loads. */
struct rping_server_stats {
	uint64_t clients;                /**< accepted */
	uint64_t refused;                /**< rejected: busy, or setup failed */
	uint64_t pings;                  /**< Read, Write and both Sends done */
	uint64_t bytes_in, bytes_out;    /**< read from and written to clients */
	uint64_t active;                 /**< 1 while a client is connected */
	uint64_t errors;                 /**< failed completions and posts */
	uint64_t finished;               /**< clients that came and went */
};

struct rping_srv;

/**
 * Listen on @p o->port of @p ctx's stack. @p o and @p stats must outlive
 * the server. @return the server, or NULL with errno set (a line on stderr).
 */
struct rping_srv *rping_server_open(struct ibv_context *ctx, const struct rping_server_opts *o,
				    struct rping_server_stats *stats);

/**
 * Serve rping clients one at a time until rnic_stop_requested() (or, with
 * @c once, until the first client is gone). A client's failed completion
 * ends that client (counted in @c errors), not the server.
 */
void rping_server_run(struct rping_srv *s);

/** Close the client, if any, stop listening and free. */
void rping_server_close(struct rping_srv *s);

#endif
