/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * The rdma-gateway target protocol, version 1: what a client puts in the
 * CM connect private data to name a target, and what the gateway answers
 * in the accept or reject private data. All integers are big endian.
 *
 *   client -> gateway (connect):  struct rnic_gw_req
 *   gateway -> client (accept):   struct rnic_gw_rep, status 0
 *   gateway -> client (reject):   struct rnic_gw_rep, status != 0, reason text
 *
 * After ESTABLISHED the client RDMA-Reads and -Writes [addr, addr + length)
 * under stag at once; the gateway posts nothing. Durability: a Write is in
 * the target's memory once an RDMA Read issued after it on the same
 * connection completes (iWARP places in stream order); file targets are
 * msync'd when the gateway stops (SIGTERM), so no acknowledged write is
 * lost across a graceful restart. Over RoCE the same holds: an RC
 * responder executes a Read after the Writes before it on the QP.
 *
 * Transports: the same messages go over iWARP (MPA private data, up to
 * 504 bytes each way) and RoCE (IB CM private data, fixed rooms, see
 * include/rnic/rnic_cm.h). Both fit the smaller RoCE rooms: the request is
 * 40 bytes of the REQ's 56, the accept 28 of the REP's 196, the reject 92
 * of the REJ's 148. RoCE rooms arrive zero-padded to their full size, so
 * a receiver checks "at least" the length, never "exactly". A target that
 * is not offered on the request's transport is refused with
 * RNIC_GW_WRONG_TRANSPORT.
 */
#ifndef RNIC_GW_H
#define RNIC_GW_H

#include <stdint.h>

#define RNIC_GW_MAGIC        "RGW1"
#define RNIC_GW_VERSION      1
#define RNIC_GW_DEFAULT_PORT 4791   /**< [target] listen default = rnic-cp's */
#define RNIC_GW_NAME_LEN     32

#define RNIC_GW_WANT_WRITE   0x01   /**< req flags: the client will write */
#define RNIC_GW_WRITABLE     0x01   /**< rep flags: the target takes writes */

enum rnic_gw_status {
	RNIC_GW_OK = 0,
	RNIC_GW_NO_TARGET = 1,      /**< no such target on this port */
	RNIC_GW_NOT_ALLOWED = 2,    /**< the client's address is not in allow */
	RNIC_GW_READ_ONLY = 3,      /**< a write asked of an ro target */
	RNIC_GW_BAD_REQUEST = 4,    /**< bad magic, version or name */
	RNIC_GW_BUSY = 5,           /**< out of resources, try again */
	RNIC_GW_STOPPING = 6,       /**< the gateway is shutting down */
	RNIC_GW_WRONG_TRANSPORT = 7, /**< the target is not offered on the
					  request's transport (iWARP/RoCE) */
};

struct rnic_gw_req {
	char magic[4];                  /**< RNIC_GW_MAGIC */
	uint8_t version;                /**< RNIC_GW_VERSION */
	uint8_t flags;                  /**< RNIC_GW_WANT_WRITE */
	uint16_t reserved;
	char target[RNIC_GW_NAME_LEN];  /**< NUL-padded */
} __attribute__((packed));

struct rnic_gw_rep {
	char magic[4];
	uint8_t version;
	uint8_t flags;                  /**< RNIC_GW_WRITABLE */
	uint16_t status;                /**< enum rnic_gw_status */
	uint32_t stag;                  /**< accept: the target's STag */
	uint64_t addr;                  /**< accept: its first tagged offset */
	uint64_t length;                /**< accept: its size in bytes */
	char reason[64];                /**< reject: one line, NUL-terminated */
} __attribute__((packed));

#endif
