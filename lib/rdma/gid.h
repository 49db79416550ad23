/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A port's GID table, as RoCE lists it (ibv_query_gid, the source GID
 * index of an address vector). The order is Linux's for a RoCE device
 * (rxe: roce_gid_mgmt adds the default GID, then the netdev's IPv4
 * addresses, then its IPv6 ones, skipping an address already listed):
 *
 *   0      fe80::/64 with the EUI-64 of the MAC (the default GID; also the
 *          port's IPv6 link-local address)
 *   1      ::ffff:a.b.c.d, the port's IPv4 address (when it has one)
 *   next   the port's global IPv6 addresses, in configured order
 *
 * Every entry is of type RoCE v2. An IPv6-only port has its first global
 * address at index 1, as on Linux. The table is fixed once the port is
 * open (addresses are configured, not added at run time).
 */
#ifndef RNIC_RDMA_GID_H
#define RNIC_RDMA_GID_H

#include <stdint.h>

#include "rnic/rnic.h"

struct rnic_port;

/* Entries at most: link-local, IPv4, the configured IPv6 addresses. */
#define RNIC_GID_MAX (2 + RNIC_PORT_IP6_MAX)

/* Entries in @p p's GID table. */
int rnic_gid_count(const struct rnic_port *p);

/* GID @p index of @p p into @p gid. @return 0 or -EINVAL (no such entry). */
int rnic_gid_get(const struct rnic_port *p, int index, uint8_t gid[16]);

/* The index of the GID of address @p a in @p p's table, or -1. */
int rnic_gid_find(const struct rnic_port *p, const struct rnic_addr *a);

/* The IP address a GID stands for: IPv4 when IPv4-mapped, else IPv6. */
struct rnic_addr rnic_gid_addr(const uint8_t gid[16]);

/* The GID of an address (IPv4: IPv4-mapped, ::ffff:a.b.c.d). */
void rnic_addr_gid(const struct rnic_addr *a, uint8_t gid[16]);

#endif
