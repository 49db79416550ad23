/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A minimal DPDK telemetry v2 client, as dpdk-telemetry.py talks to
 * /var/run/dpdk/<prefix>/dpdk_telemetry.v2: a SEQPACKET socket, a JSON
 * greeting on connect, then one JSON reply per command.
 */
#ifndef RNIC_TEST_TEL_CLIENT_H
#define RNIC_TEST_TEL_CLIENT_H

#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <rte_eal.h>

/* Send @p cmd and read the reply into @p out. @return reply length or -1. */
static inline int tel_query(const char *cmd, char *out, size_t len)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_SEQPACKET, 0);
	ssize_t n = -1;

	if (fd < 0)
		return -1;
	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s/dpdk_telemetry.v2",
		 rte_eal_get_runtime_dir());
	if (connect(fd, (struct sockaddr *)&sun, sizeof(sun)) == 0 &&
	    read(fd, out, len - 1) > 0 &&               /* greeting */
	    write(fd, cmd, strlen(cmd)) == (ssize_t)strlen(cmd))
		n = read(fd, out, len - 1);
	close(fd);
	if (n < 0)
		return -1;
	out[n] = '\0';
	return (int)n;
}

/* The number after "\"key\":" in @p json (first match), or -1. */
static inline long long tel_number(const char *json, const char *key)
{
	char pat[128];
	snprintf(pat, sizeof(pat), "\"%s\":", key);
	const char *p = strstr(json, pat);
	return p ? atoll(p + strlen(pat)) : -1;
}

#endif
