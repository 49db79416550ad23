/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rdma-gateway's [responder.perf], [responder.ping] and
 * [responder.pingpong] sections (responder.c), and the responders they
 * start in-process (respond.c): rnic-perf's --server, the rping server and
 * ibv_rc_pingpong's server, each on a thread of its own.
 *
 *   [responder.perf]      listen = 18520   transport = iwarp,roce
 *                         idle_s = 30
 *   [responder.ping]      listen = 7174    transport = iwarp   size = 64K
 *   [responder.pingpong]  listen = 18515   transport = roce    size = 4096
 *                         iters = 1000
 */
#ifndef GW_RESPONDER_H
#define GW_RESPONDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "rnic/rnic.h"
#include "rnic/rnic_verbs.h"
#include "target.h"

enum gw_resp_kind {
	GW_RESP_PERF,
	GW_RESP_PING,
	GW_RESP_PINGPONG,
	GW_RESP_KINDS,
};

/** One [responder.KIND] section. */
struct gw_responder {
	bool on;                         /**< the section is there */
	uint16_t listen;                 /**< TCP port: CM listener or exchange */
	bool iwarp, roce;                /**< the transports of the QPs it serves */
	uint32_t size;                   /**< ping: buffer bytes; pingpong: message bytes */
	uint32_t iters;                  /**< pingpong: exchanges per client */
	uint32_t idle_s;                 /**< perf: a run that moves nothing this
					      long is ended (a vanished client) */
};

/** True for a section name responder.c parses ("responder.KIND"). */
bool gw_responder_section(const char *name);

/** Name of @p kind as in its section ("perf", "ping", "pingpong"). */
const char *gw_responder_name(enum gw_resp_kind kind);

/**
 * Read the [responder.*] sections of @p path (already syntax-checked by
 * rnic_config_load()) into @p r, indexed by kind; a kind given again (in
 * another file) replaces the earlier one.
 * @return 0, or -EINVAL with one line in @p err
 *   ("FILE: [responder.ping] transport: 'roce' is not iwarp").
 */
int gw_responders_load(const char *path, struct gw_responder r[GW_RESP_KINDS],
		       char *err, size_t errlen);

/**
 * Every listen port must be one service's: responders differ from each
 * other and from the targets' ports. @return 0 or -EINVAL with one line in
 * @p err.
 */
int gw_responders_check(const struct gw_responder r[GW_RESP_KINDS],
			const struct gw_target *t, unsigned nt, char *err, size_t errlen);

/**
 * Start the configured responders on @p st: each listens before this
 * returns, then serves on its own thread until rnic_request_stop().
 * @return 0, or -1 with one line in @p err (nothing left running).
 */
int gw_responders_start(struct rnic_stack *st, const struct gw_responder r[GW_RESP_KINDS],
			char *err, size_t errlen);

/** Each running responder's figures for the status line. */
void gw_responders_status(FILE *f);

/** Once rnic_request_stop() was called: wait for the threads, free all. */
void gw_responders_stop(void);

#endif
