/* SPDX-License-Identifier: BSD-3-Clause */
/* A port's GID table (gid.h). */
#include <errno.h>
#include <string.h>

#include <rte_byteorder.h>

#include "port/port.h"
#include "rdma/gid.h"

static const uint8_t v4mapped_prefix[12] = { [10] = 0xff, [11] = 0xff };

int rnic_gid_count(const struct rnic_port *p)
{
	/* p->ip6[0] is the link-local address, the default GID itself */
	int globals = p->n_ip6 > 1 ? (int)p->n_ip6 - 1 : 0;
	return 1 + (p->ip != 0) + globals;
}

int rnic_gid_get(const struct rnic_port *p, int index, uint8_t gid[16])
{
	if (index < 0 || index >= rnic_gid_count(p))
		return -EINVAL;
	if (index == 0) {
		rnic_addr6_link_local(p->mac.addr_bytes, gid);
		return 0;
	}
	if (p->ip != 0 && index == 1) {
		struct rnic_addr a = rnic_addr_v4(p->ip);
		rnic_addr_gid(&a, gid);
		return 0;
	}
	memcpy(gid, p->ip6[index - (p->ip != 0)], 16);
	return 0;
}

int rnic_gid_find(const struct rnic_port *p, const struct rnic_addr *a)
{
	uint8_t want[16], g[16];
	rnic_addr_gid(a, want);
	for (int i = 0; i < rnic_gid_count(p); i++)
		if (rnic_gid_get(p, i, g) == 0 && memcmp(g, want, 16) == 0)
			return i;
	return -1;
}

struct rnic_addr rnic_gid_addr(const uint8_t gid[16])
{
	if (memcmp(gid, v4mapped_prefix, sizeof(v4mapped_prefix)) == 0) {
		rte_be32_t v4;
		memcpy(&v4, gid + 12, 4);
		return rnic_addr_v4(rte_be_to_cpu_32(v4));
	}
	return rnic_addr_v6(gid);
}

void rnic_addr_gid(const struct rnic_addr *a, uint8_t gid[16])
{
	if (a->family == RNIC_AF_INET6) {
		memcpy(gid, a->v6, 16);
		return;
	}
	rte_be32_t v4 = rte_cpu_to_be_32(a->v4);
	memcpy(gid, v4mapped_prefix, sizeof(v4mapped_prefix));
	memcpy(gid + 12, &v4, 4);
}
