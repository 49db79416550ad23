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

# The libFuzzer harnesses, each for RNIC_FUZZ_SECONDS (default 10; 0 skips)
# after the unit suite replayed their corpora (replay_*): a finding fails
# the run, naming the harness and the saved input (scripts/run-fuzz.sh).
fuzz_s=${RNIC_FUZZ_SECONDS:-10}
if [ "$fuzz_s" != 0 ]; then
	fuzz_t0=$(date +%s)
	scripts/run-fuzz.sh "$fuzz_s" || { rc=1; echo "run-tests: fuzzing found a problem (above)"; }
	echo "run-tests: fuzzing took $(( $(date +%s) - fuzz_t0 )) s"
fi

# The same suites under AddressSanitizer + UndefinedBehaviorSanitizer, with
# LeakSanitizer on (RNIC_NO_SANITIZE=1 skips it; transfers are smaller).
# The qemu interop tests (suite interop) run once, in the plain pass: a
# guest boot under TCG is minutes, and what they check is wire agreement.
# So do the suite `slow` ones (gateway_responders, gateway_roce: separate
# processes on taps, serialised), to keep CI within its 20 minutes; both
# were run clean under ASan+UBSan+LSan by hand when they were written.
# The suite `hostile` (scapy attackers against rnic processes on taps)
# runs in the plain pass only: its heap checks read glibc's allocator,
# which ASan replaces, and its 7 tests gave the same results under
# ASan+UBSan with no report when they were written (tests/hostile/README.md).
# The suite `dropin` (unmodified verbs programs over librnic-verbs) runs
# in the plain pass only: an ASan build of the library cannot be preloaded
# into programs built without ASan:
#   meson test -C build-asan --suite slow
if [ "${RNIC_NO_SANITIZE:-0}" != 1 ]; then
	if [ ! -f build-asan/build.ninja ]; then
		meson setup build-asan --buildtype=debug -Dwerror=true \
			-Db_sanitize=address,undefined -Db_lundef=false >/dev/null
	fi
	ninja -C build-asan > build-asan.log 2>&1 ||
		{ echo "ASan build failed:"; grep -E "error|warning" build-asan.log | head -20; exit 1; }
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
	LSAN_OPTIONS=suppressions=$PWD/tests/lsan.supp \
	UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
	RNIC_TCP_BYTES=64M RNIC_TCP_INTEROP_BYTES=16777216 RNIC_TEST_BIG=0 \
	RNIC_ATTACK_TIME_S=6 RNIC_SOAK_OPS=2000 \
	meson test -C build-asan --suite unit --suite integration --no-suite interop --no-suite slow --no-suite dropin --no-suite procs --no-suite hostile \
		--print-errorlogs --num-processes 2 --logbase asan || rc=$?
fi
# one plain summary line from meson's log
python3 - build/meson-logs/testlog.json build-asan/meson-logs/asan.json <<'PY' || true
import json, os, sys
res = [json.loads(l)["result"] for f in sys.argv[1:] if os.path.exists(f)
       for l in open(f) if l.strip()]
ok = sum(r in ("OK", "EXPECTEDFAIL") for r in res)
skip = sum(r == "SKIP" for r in res)
print(f"{ok} passed, {len(res) - ok - skip} failed, {skip} skipped")
PY
exit $rc
