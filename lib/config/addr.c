/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * struct rnic_addr: parsing and printing addresses of either family
 * (inet_pton/inet_ntop do the text forms), and the IPv6 link-local address
 * a port derives from its MAC.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "rnic/rnic.h"

/* "/LEN" at @p s (or nothing) into *len, at most @p max. */
static int addr_prefix(const char *s, unsigned max, uint8_t *len)
{
	unsigned v = 0;

	if (*s == '\0')
		return 0;
	if (*s++ != '/' || *s == '\0')
		return -EINVAL;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return -EINVAL;
		v = v * 10 + (unsigned)(*s - '0');
		if (v > max)
			return -EINVAL;
	}
	*len = (uint8_t)v;
	return 0;
}

int rnic_addr_parse(const char *s, struct rnic_addr *a, uint8_t *prefix_len)
{
	char buf[INET6_ADDRSTRLEN + 2];
	const char *rest;
	uint8_t plen;

	if (s == NULL || a == NULL)
		return -EINVAL;
	bool bracket = s[0] == '[';
	if (bracket) {
		const char *end = strchr(s, ']');
		if (end == NULL || (size_t)(end - s - 1) >= sizeof(buf))
			return -EINVAL;
		memcpy(buf, s + 1, (size_t)(end - s - 1));
		buf[end - s - 1] = '\0';
		rest = end + 1;
	} else {
		size_t n = strcspn(s, "/");
		if (n >= sizeof(buf))
			return -EINVAL;
		memcpy(buf, s, n);
		buf[n] = '\0';
		rest = s + n;
	}
	if (*rest != '\0' && prefix_len == NULL)
		return -EINVAL;
	struct rnic_addr out = { 0 };
	struct in_addr a4;
	if (!bracket && inet_pton(AF_INET, buf, &a4) == 1) {
		out.family = RNIC_AF_INET;
		out.v4 = ntohl(a4.s_addr);
		plen = 24;
		if (addr_prefix(rest, 32, &plen) != 0)
			return -EINVAL;
	} else if (inet_pton(AF_INET6, buf, out.v6) == 1) {
		out.family = RNIC_AF_INET6;
		plen = 64;
		if (addr_prefix(rest, 128, &plen) != 0)
			return -EINVAL;
	} else {
		return -EINVAL;
	}
	*a = out;
	if (prefix_len != NULL)
		*prefix_len = plen;
	return 0;
}

const char *rnic_addr_str(const struct rnic_addr *a, char *buf, size_t len)
{
	if (buf == NULL || len == 0)
		return buf;
	if (a != NULL && a->family == RNIC_AF_INET) {
		struct in_addr a4 = { .s_addr = htonl(a->v4) };
		if (inet_ntop(AF_INET, &a4, buf, (socklen_t)len) != NULL)
			return buf;
	} else if (a != NULL && a->family == RNIC_AF_INET6) {
		if (inet_ntop(AF_INET6, a->v6, buf, (socklen_t)len) != NULL)
			return buf;
	}
	snprintf(buf, len, "-");
	return buf;
}

bool rnic_addr_eq(const struct rnic_addr *a, const struct rnic_addr *b)
{
	if (a->family != b->family)
		return false;
	if (a->family == RNIC_AF_INET)
		return a->v4 == b->v4;
	if (a->family == RNIC_AF_INET6)
		return memcmp(a->v6, b->v6, 16) == 0;
	return true;
}

struct rnic_addr rnic_addr_v4(uint32_t ip)
{
	struct rnic_addr a = { .family = RNIC_AF_INET };
	a.v4 = ip;
	return a;
}

struct rnic_addr rnic_addr_v6(const uint8_t v6[16])
{
	struct rnic_addr a = { .family = RNIC_AF_INET6 };
	memcpy(a.v6, v6, 16);
	return a;
}

void rnic_addr6_link_local(const uint8_t mac[6], uint8_t out[16])
{
	memset(out, 0, 16);
	out[0] = 0xfe;
	out[1] = 0x80;
	out[8] = mac[0] ^ 0x02;   /* the universal/local bit, inverted */
	out[9] = mac[1];
	out[10] = mac[2];
	out[11] = 0xff;
	out[12] = 0xfe;
	out[13] = mac[3];
	out[14] = mac[4];
	out[15] = mac[5];
}
