#!/usr/bin/env bash
# Everything needed to run rnic's test suite on a fresh Debian 12 machine
# (root): dependencies, hugepages (or --no-huge), build, then the unit and
# integration suites. Tests that need root or a tap device skip with a
# reason when they cannot run.
set -eu
cd "$(dirname "$0")/.."
scripts/deps.sh
scripts/hugepages.sh
scripts/build.sh
rc=0
meson test -C build --suite unit --suite integration --print-errorlogs \
	--num-processes 2 || rc=$?
# one plain summary line from meson's log
python3 - build/meson-logs/testlog.json <<'PY' || true
import json, sys
res = [json.loads(l)["result"] for l in open(sys.argv[1]) if l.strip()]
ok = sum(r in ("OK", "EXPECTEDFAIL") for r in res)
skip = sum(r == "SKIP" for r in res)
print(f"{ok} passed, {len(res) - ok - skip} failed, {skip} skipped")
PY
exit $rc
