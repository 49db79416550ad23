/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The out-of-band address exchange of ibv_rc_pingpong, over rnic's own TCP.
 *
 * Each side sends one fixed-size record, "LID:QPN:PSN:GID" as
 * "%04x:%06x:%06x:" followed by the GID's 16 bytes as 32 hex digits in wire
 * order, NUL-terminated: 52 bytes, always written whole. Sequence (client C
 * connects to server S, TCP port 18515 by default):
 *   C: record        S: reads it, moves its QP to RTR and RTS
 *   S: record        C: reads it, replies "done\0" and closes
 *   S: reads "done", closes            then C moves its QP to RTR and RTS
 * The kernel does not own rnic's addresses, so the exchange cannot use
 * kernel sockets: it runs on a connection of the stack's userspace TCP.
 */
#ifndef RNIC_PINGPONG_EXCH_H
#define RNIC_PINGPONG_EXCH_H

#include <stdint.h>

#include <infiniband/verbs.h>

#include "rnic/rnic.h"

/** Bytes of one record, its NUL included (sizeof of rc_pingpong's template). */
#define PP_REC_LEN sizeof("0000:000000:000000:00000000000000000000000000000000")

/** What one side tells the other. */
struct pp_dest {
	uint32_t lid;        /**< 0 on Ethernet ports */
	uint32_t qpn;        /**< 24 bits */
	uint32_t psn;        /**< 24 bits: the first PSN it sends */
	union ibv_gid gid;   /**< all zero when rc_pingpong runs without -g */
};

/** Write @p d as a record into @p rec (PP_REC_LEN bytes). */
void pp_dest_format(const struct pp_dest *d, char rec[PP_REC_LEN]);

/** Parse a record. @return 0, or -EINVAL when it is not one. */
int pp_dest_parse(const char *rec, size_t len, struct pp_dest *d);

/** Called by the server between reading the client's record and sending its
 *  own: move the QP to RTS. @return 0, or non-zero to give up. */
typedef int (*pp_connect_fn)(const struct pp_dest *rem, void *arg);

/**
 * Client side: connect to @p ip:@p port (host order), send @p mine, read the
 * server's record into @p rem, send "done" and close.
 * @return 0, or -errno with a one-line reason in @p err.
 */
int pp_exch_client(struct rnic_stack *st, const struct rnic_addr *ip, uint16_t port,
		   const struct pp_dest *mine, struct pp_dest *rem,
		   char *err, size_t errlen);

/**
 * Server side: listen on @p port, take the first connection, read the
 * client's record into @p rem, call @p connect, send @p mine, wait for the
 * client's "done" (or its close) and close. Waits for a client until
 * rnic_request_stop(). @return 0, or -errno with a reason in @p err.
 */
int pp_exch_server(struct rnic_stack *st, uint16_t port,
		   const struct pp_dest *mine, struct pp_dest *rem,
		   pp_connect_fn connect, void *arg, char *err, size_t errlen);

#endif
