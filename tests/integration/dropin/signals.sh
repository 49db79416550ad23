#!/bin/bash
# Signals through the drop-in as libibverbs and librdmacm have them:
# signal_check (an ordinary libibverbs + librdmacm program) signals its
# own threads blocked in ibv_get_cq_event and rdma_get_cm_event, and the
# process, and checks the EINTR returns (signal_check.c lists the cases).
# One rnic-run process over net_null: no root, no tap.
set -uo pipefail
build=${RNIC_BUILD_DIR:?}
run=$build/apps/rnic-run/rnic-run
check=$build/tests/integration/dropin/signal_check
if [ ! -x "$check" ]; then
	echo "SKIP: signal_check not built (libibverbs-dev, librdmacm-dev missing)"
	exit 77
fi
out=$(timeout 45 "$run" --vdev net_null0 --ip 10.9.$((RANDOM % 200)).1/24 -- "$check" 2>&1)
rc=$?
echo "$out" | sed 's/^/  /'
if [ $rc != 0 ]; then
	echo "FAIL: signal_check exit $rc"
	exit 1
fi
grep -q "^signal_check: [0-9]* checks, all ok" <<< "$out" || { echo "FAIL: no 'all ok'"; exit 1; }
