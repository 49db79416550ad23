#!/usr/bin/env bash
# Reserve 2 MiB hugepages for DPDK where the machine allows it, and mount
# hugetlbfs if it is not mounted. Never fails: without free hugepages rnic
# falls back to --no-huge by itself (rnic_eal_init reads HugePages_Free).
# RNIC_HUGEPAGES overrides the 512 pages (1 GiB) asked for.
want=${RNIC_HUGEPAGES:-512}
knob=/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages
fallback() { echo "hugepages.sh: $*; rnic will fall back to --no-huge"; exit 0; }

[ "$(id -u)" = 0 ] || fallback "not root, cannot reserve hugepages"
[ -w "$knob" ] || fallback "no 2 MiB hugepage support here"
have=$(cat "$knob" 2>/dev/null || echo 0)
if [ "${have:-0}" -lt "$want" ]; then
	# the kernel reserves what it can; fewer pages is not an error
	echo "$want" >"$knob" 2>/dev/null || true
fi
if ! grep -qs ' hugetlbfs ' /proc/mounts; then
	mkdir -p /dev/hugepages 2>/dev/null
	mount -t hugetlbfs -o pagesize=2M nodev /dev/hugepages 2>/dev/null ||
		fallback "cannot mount hugetlbfs (in a container?)"
fi
free=$(awk '/HugePages_Free/ {print $2}' /proc/meminfo)
[ "${free:-0}" -gt 0 ] || fallback "no hugepage could be reserved"
echo "hugepages.sh: $(cat "$knob") hugepages of 2 MiB reserved, $free free"
exit 0
