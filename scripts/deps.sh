#!/usr/bin/env bash
# Install rnic's build and test dependencies from Debian 12's packages.
# Idempotent: does nothing when everything is already installed.
set -eu
pkgs="libdpdk-dev dpdk dpdk-dev meson ninja-build pkg-config gcc libcmocka-dev
      libibverbs-dev libisal-dev iproute2 iputils-ping python3 clang
      libclang-rt-14-dev"
missing=""
for p in $pkgs; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" ||
		missing="$missing $p"
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" != 0 ]; then
	echo "deps.sh: missing:$missing (run as root to install)" >&2
	exit 1
fi
echo "deps.sh: installing:$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends $missing >/dev/null
