#!/bin/bash
# librdmacm semantics through the drop-in, checked by cm_check (an
# ordinary librdmacm program, cm_check.c) in two rnic-run processes on
# bridged taps, over iWARP and RoCE: private data both ways, accept,
# reject (status and private data as rdma_cm reports them), a peer that
# exits without disconnecting, a disconnect after the peer's, an
# O_NONBLOCK channel, unsupported calls (EOPNOTSUPP).
set -uo pipefail
check=${RNIC_BUILD_DIR:?}/tests/integration/dropin/cm_check
if [ ! -x "$check" ]; then
	echo "SKIP: cm_check not built (librdmacm-dev missing: scripts/deps.sh)"
	exit 77
fi
# shellcheck source=netns.sh
. "$(dirname "$0")/netns.sh"   # build, run, work, ok, bad, pair

for tr in iwarp roce; do
	for mode in accept reject exit; do
		port=$((7000 + RANDOM % 1000))
		pair "$mode-$tr" "$tr" "$check server $port $mode" \
			"$check client 192.0.2.1 $port $mode" "^listening" &&
			grep -q "^client $mode: ok" "$work/$mode-$tr.c" && ok ||
			bad "$mode over $tr"
	done
	grep -q "request on rnic0$([ "$tr" = roce ] && echo _roce) " "$work/accept-$tr.s" && ok ||
		bad "the request over $tr did not come on the $tr device"
done

echo "rdmacm_semantics: $pass passed, $fails failed"
[ "$fails" = 0 ]
