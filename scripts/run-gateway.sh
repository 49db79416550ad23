#!/usr/bin/env bash
# Everything needed to run rdma-gateway on a fresh Debian 12 machine (root):
# dependencies, hugepages (or --no-huge), build, then the gateway on the
# default config (or the config given as $1).
set -eu
cd "$(dirname "$0")/.."
scripts/deps.sh
scripts/hugepages.sh
scripts/build.sh
exec build/apps/rdma-gateway/rdma-gateway --config "${1:-config/rdma-gateway.ini}"
