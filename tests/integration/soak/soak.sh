#!/bin/bash
# CI-sized soak (issue 8): 5,000 (RNIC_SOAK_OPS) mixed Sends, Writes and
# Reads of 1 B..1 MiB over 4 QPs through 2% drop, 1% dup, 2% reorder, 0.5% corrupt, both ways,
# with a fresh seed each run (printed, to replay a failure), once over iWARP
# and once over RoCEv2. Every byte and every completion is checked by
# rnic-soak itself, which runs the requester's stack on its main thread
# (two busy threads; docs/user-guide.md, rnic-soak).
set -uo pipefail
soak=${RNIC_BUILD_DIR:?}/apps/rnic-soak/rnic-soak
seed=${SOAK_SEED:-$(( (RANDOM << 15 | RANDOM) + 1 ))}
pass=0 fails=0
for tr in iwarp roce; do
	out=$("$soak" --transport "$tr" --ops "${RNIC_SOAK_OPS:-5000}" --drop 2 --dup 1 \
		--reorder 2 --corrupt 0.5 --seed "$seed" --json 2>&1)
	rc=$?
	line=$(echo "$out" | grep '^{' | tail -1)
	echo "$tr seed $seed: $line"
	if [ "$rc" = 0 ] && echo "$line" | grep -q '"verified": true' &&
	   echo "$line" | grep -q '"wrong_bytes": 0, "lost": 0, "dup_completions": 0'; then
		pass=$((pass + 1))
	else
		echo "$out" | tail -5
		echo "FAIL: $tr soak (replay with SOAK_SEED=$seed)"
		fails=$((fails + 1))
	fi
done
echo "$pass passed, $fails failed"
[ "$fails" = 0 ]
