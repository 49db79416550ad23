#!/bin/bash
# librdmacm semantics through the drop-in, checked by cm_check (an
# ordinary librdmacm program, cm_check.c) in two rnic-run processes on
# bridged taps, over iWARP and RoCE: private data both ways, accept,
# reject (status and private data as rdma_cm reports them), a peer that
# exits without disconnecting, a disconnect after the peer's, an
# O_NONBLOCK channel, unsupported calls (EOPNOTSUPP); destroying many ids
# on one channel.
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

# many ids on one channel (one process, net_null): destroying an id looks
# at its own queued events only: none for ids whose events were all taken,
# even with other ids' events waiting, and one each for ids destroyed with
# their ADDR_RESOLVED queued (a walk of the channel's queue per destroy
# looked at 62,500 and 125,000 events here); no event of a destroyed id is
# delivered, also when the id had moved to another channel since
for mode in ids ids-queued ids-moved; do
	out=$(RNIC_VERBS_STATS=1 timeout 120 "$run" --vdev net_null0 --ip 10.9.0.1/24 -- \
		"$check" "$mode" 500 10.9.0.2 2>&1)
	want=$([ "$mode" = ids ] && echo 0 || echo 500)
	if ! grep -q "^ids: 500 made and destroyed, ok" <<< "$out"; then
		bad "cm_check $mode: $(grep -m1 FAIL <<< "$out")"
	elif ! grep -q "rdma_cm: $want queued events looked at" <<< "$out"; then
		bad "cm_check $mode: want $want events looked at: $(grep rdma_cm: <<< "$out")"
	else
		ok
	fi
done

echo "rdmacm_semantics: $pass passed, $fails failed"
[ "$fails" = 0 ]
