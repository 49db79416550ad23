#!/usr/bin/env bash
# Build the libFuzzer harnesses (tests/fuzz) with clang in build-fuzz and
# run each for a bounded time: scripts/run-fuzz.sh [SECONDS] [HARNESS...]
# (SECONDS: RNIC_FUZZ_SECONDS or 15; harnesses: all). scripts/run-tests.sh
# calls it after the unit suite, which has replayed the committed corpora.
#
# Each run starts from tests/fuzz/corpus/<name> and crashes/<name> (read
# only: new inputs go to a scratch directory, so the tree stays clean). A
# finding (crash, sanitizer report, leak, timeout, out of memory) makes the
# script exit 1 after the other harnesses ran, naming the harness and the
# input libFuzzer saved; copy that input to tests/fuzz/crashes/<name>/ with
# the fix. Findings and logs stay in build-fuzz/findings/ (not committed).
set -u
cd "$(dirname "$0")/.."
secs=${1:-${RNIC_FUZZ_SECONDS:-15}}
shift $(( $# > 0 ? 1 : 0 ))
all="mpa fpdu ddp roce ibcm tcp config net conv_iwarp conv_roce"
names=${*:-$all}

if [ ! -f build-fuzz/build.ninja ]; then
	CC=clang meson setup build-fuzz -Dfuzz=true -Dtests=false >/dev/null ||
		{ echo "run-fuzz: meson setup of build-fuzz failed (clang and libclang-rt-14-dev installed?)"; exit 1; }
fi
targets=""
for n in $names; do targets="$targets tests/fuzz/fuzz_$n"; done
ninja -C build-fuzz $targets > build-fuzz/ninja.log 2>&1 ||
	{ echo "run-fuzz: build failed:"; grep -E "error|warning" build-fuzz/ninja.log | head -20; exit 1; }

out=build-fuzz/findings
mkdir -p "$out"
rc=0
for n in $names; do
	scratch=$(mktemp -d)
	dirs="tests/fuzz/corpus/$n"
	[ -d "tests/fuzz/crashes/$n" ] && dirs="$dirs tests/fuzz/crashes/$n"
	log="$out/fuzz_$n.log"
	rm -f "$out/fuzz_$n-"*
	# -timeout: one input running 10 s is a finding (a hang), not a wait;
	# the first directory is where libFuzzer adds inputs: the scratch one
	build-fuzz/tests/fuzz/fuzz_$n -max_total_time="$secs" -timeout=10 \
		-rss_limit_mb=2048 -print_final_stats=1 \
		-artifact_prefix="$out/fuzz_$n-" "$scratch" $dirs > "$log" 2>&1
	st=$?
	rm -rf "$scratch"
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
	if [ "$st" != 0 ]; then
		found=$(ls "$out/fuzz_$n-"* 2>/dev/null | head -1)
		echo "run-fuzz: FINDING in fuzz_$n (exit $st), input: ${found:-none saved}, log: $log"
		grep -E "ERROR|runtime error|FUZZ_CHECK|SUMMARY|Assertion|==[0-9]+==" "$log" | head -8
		rc=1
	else
		echo "run-fuzz: fuzz_$n ${secs} s, ${execs:-?} executions, no finding"
	fi
done
exit $rc
