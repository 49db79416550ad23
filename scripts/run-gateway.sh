#!/usr/bin/env bash
# Everything needed to run rdma-gateway on a fresh Debian 12 machine (root):
# dependencies, hugepages (or --no-huge), build, then the gateway on the
# default config, or on the config given as $1 (further arguments are passed
# to rdma-gateway). Stop it with Ctrl-C.
set -eu
cd "$(dirname "$0")/.."
scripts/deps.sh
scripts/hugepages.sh
scripts/build.sh
config=${1:-config/rdma-gateway.ini}
[ $# -gt 0 ] && shift
exec build/apps/rdma-gateway/rdma-gateway --config "$config" "$@"
