/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lib/port: the link of a net_tap port whose kernel side left rnic's network
 * namespace.
 *
 * DPDK 22.11's net_tap reads its link from the kernel interface's flags
 * (SIOCGIFFLAGS by name: IFF_UP and IFF_RUNNING) on a socket of the
 * process's namespace. Once the interface is moved into another namespace
 * (`ip link set rnictap0 netns peer`, the user guide's ping recipe) that
 * ioctl fails with ENODEV and the PMD reports the link down for good, while
 * the tap's file descriptors stay attached and frames flow both ways. That
 * is not a cable pull, and taking it for one drops every frame.
 *
 * A tap's carrier, as the kernel sees it, is "a file descriptor is attached"
 * (IFF_RUNNING of a tap). rnic cannot read the flags of an interface in a
 * namespace it does not know, but it can read its own descriptors: the
 * kernel prints the attached interface of a /dev/net/tun descriptor in
 * /proc/self/fdinfo/FD ("iff:\tNAME", empty once the interface is deleted).
 * So when the PMD says down and the interface is absent from rnic's
 * namespace, the link is up while one of the port's descriptors is
 * attached, and down once none is. In rnic's own namespace the PMD's answer
 * stands (the kernel side set down is a real loss, and port failover sees
 * it).
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <net/if.h>

#include "port/port.h"

_Static_assert(sizeof(((struct rnic_port *)0)->tap_if) == IF_NAMESIZE,
	       "tap_if holds an interface name");

/* The interface a /dev/net/tun descriptor is attached to: its name in
 * @name (empty when detached); -1 when @fd is not such a descriptor. */
static int tap_fd_iface(int fd, char name[IF_NAMESIZE])
{
	char path[64], line[128];
	FILE *f;
	int rc = -1;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "r");
	if (f == NULL)
		return -1;
	while (fgets(line, sizeof(line), f) != NULL) {
		if (strncmp(line, "iff:", 4) != 0)
			continue;
		char *v = line + 4;
		v += strspn(v, " \t");
		v[strcspn(v, "\n")] = '\0';
		snprintf(name, IF_NAMESIZE, "%s", v);
		rc = 0;
		break;
	}
	fclose(f);
	return rc;
}

void rnic_tap_link_init(struct rnic_port *p, const struct rte_eth_dev_info *di)
{
	char link[64], path[64], ifname[IF_NAMESIZE];
	struct dirent *e;
	DIR *d;

	p->tap_n_fds = 0;
	p->tap_if[0] = '\0';
	if (strcmp(di->driver_name, "net_tap") != 0 || di->if_index == 0 ||
	    if_indextoname(di->if_index, p->tap_if) == NULL) {
		p->tap_if[0] = '\0';
		return;
	}
	d = opendir("/proc/self/fd");
	if (d == NULL)
		return;
	while ((e = readdir(d)) != NULL && p->tap_n_fds < RNIC_TAP_MAX_FDS) {
		int fd = atoi(e->d_name);
		ssize_t n;

		if (e->d_name[0] < '0' || e->d_name[0] > '9' || fd == dirfd(d))
			continue;
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		n = readlink(path, link, sizeof(link) - 1);
		if (n <= 0)
			continue;
		link[n] = '\0';
		if (strcmp(link, "/dev/net/tun") == 0 && tap_fd_iface(fd, ifname) == 0 &&
		    strcmp(ifname, p->tap_if) == 0)
			p->tap_fds[p->tap_n_fds++] = fd;
	}
	closedir(d);
}

bool rnic_tap_link_away(struct rnic_port *p, bool *attached)
{
	char ifname[IF_NAMESIZE];

	if (p->tap_if[0] == '\0' || p->tap_n_fds == 0 ||
	    if_nametoindex(p->tap_if) != 0)
		return false;
	*attached = false;
	for (unsigned i = 0; i < p->tap_n_fds; i++)
		if (tap_fd_iface(p->tap_fds[i], ifname) == 0 && ifname[0] != '\0') {
			*attached = true;
			break;
		}
	return true;
}
