#!/usr/bin/env bash
# Install rnic's build and test dependencies from Debian 12's packages.
# Idempotent: when every package is already installed (dpkg-query), apt-get
# is not run at all. Set RNIC_APT_UPDATED=1 when the package lists are
# already fresh (.ci/run does) to skip "apt-get update".
set -eu
# build: DPDK 22.11, meson/ninja, a C compiler, cmocka, ibverbs and rdmacm
#        headers, ISA-L
# ports: the PMDs rnic's tests use (libdpdk-dev pulls them in today; named
#        so that they stay): net_tap, net_af_packet, net_af_xdp (with
#        libbpf/libxdp), net_memif
# tests: iproute2/ping (net_tap in a namespace), ethtool (a veth peer's TX
#        checksum offload off), python3 (storms, telemetry,
#        dpdk-telemetry.py from the dpdk package), clang + libclang-rt (fuzz),
#        the unmodified verbs programs the drop-in runs (ibverbs-utils,
#        rdmacm-utils, perftest, libfabric-bin: fi_info), python3-scapy
#        (the attackers of tests/hostile)
required="libdpdk-dev dpdk dpdk-dev meson ninja-build pkg-config gcc
	  librte-net-tap23 librte-net-af-packet23 librte-net-af-xdp23
	  librte-net-memif23
	  libcmocka-dev libibverbs-dev librdmacm-dev libisal-dev iproute2 iputils-ping
	  ethtool python3 clang libclang-rt-14-dev ibverbs-utils rdmacm-utils perftest
	  libfabric-bin python3-scapy"
# optional: tshark decodes the pcapng captures; nothing fails without it
optional="tshark"

missing() {
	local p out=""
	for p in "$@"; do
		dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q "ok installed" ||
			out="$out $p"
	done
	echo "$out"
}

need=$(missing $required)
want=$(missing $optional)
[ -z "$need$want" ] && exit 0
if [ "$(id -u)" != 0 ]; then
	[ -z "$need" ] && exit 0
	echo "deps.sh: missing:$need; run as root (sudo) to install them" >&2
	exit 1
fi
export DEBIAN_FRONTEND=noninteractive
if [ "${RNIC_APT_UPDATED:-0}" != 1 ]; then
	apt-get update -qq
fi
if [ -n "$need" ]; then
	echo "deps.sh: installing:$need"
	apt-get install -y -qq --no-install-recommends $need >/dev/null
fi
if [ -n "$want" ]; then
	echo "deps.sh: installing (optional):$want"
	apt-get install -y -qq --no-install-recommends $want >/dev/null ||
		echo "deps.sh: could not install$want (optional, continuing)"
fi
exit 0
