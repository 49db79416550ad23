#!/usr/bin/env bash
# Reserve 2 MiB hugepages for DPDK when possible. Never fails: without them
# rnic falls back to --no-huge by itself (rnic_eal_init checks
# HugePages_Free).
want=${RNIC_HUGEPAGES:-512}
if [ "$(id -u)" != 0 ]; then
	echo "hugepages.sh: not root, rnic will run with --no-huge"
	exit 0
fi
have=$(cat /proc/sys/vm/nr_hugepages 2>/dev/null || echo 0)
if [ "$have" -lt "$want" ]; then
	echo "$want" > /proc/sys/vm/nr_hugepages 2>/dev/null || true
fi
if ! grep -q hugetlbfs /proc/mounts; then
	mkdir -p /dev/hugepages
	mount -t hugetlbfs nodev /dev/hugepages 2>/dev/null || true
fi
free=$(awk '/HugePages_Free/ {print $2}' /proc/meminfo)
if [ "${free:-0}" -gt 0 ] && grep -q hugetlbfs /proc/mounts; then
	echo "hugepages.sh: $free hugepages free"
else
	echo "hugepages.sh: no hugepages, rnic will run with --no-huge"
fi
exit 0
