#!/bin/bash
# The drop-in's contexts are rdma-core verbs_contexts (docs/dropin.md,
# "Extended verbs"): verbs_ex_check (an ordinary program built against
# libibverbs, libefa and libmlx5) checks the extended verbs and the
# provider queries on both devices, and libfabric's fi_info -p verbs, whose
# efa provider calls efadv_query_device() on every device it is given
# (a SIGSEGV in libefa while the context was not a verbs_context), must
# exit 0 and list rnic's devices. One rnic-run process over net_null: no
# root, no tap.
set -uo pipefail
build=${RNIC_BUILD_DIR:?}
run=$build/apps/rnic-run/rnic-run
check=$build/tests/integration/dropin/verbs_ex_check
pass=0 fails=0
bad() { echo "FAIL: $*"; fails=$((fails + 1)); }
ok() { pass=$((pass + 1)); }
if [ ! -x "$check" ]; then
	echo "SKIP: verbs_ex_check not built (libibverbs-dev with libefa/libmlx5 missing)"
	exit 77
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
ip=10.9.$((RANDOM % 200)).1/24

timeout 60 "$run" --vdev net_null0 --ip "$ip" -- "$check" > "$work/check" 2>&1
rc=$?
sed 's/^/  /' "$work/check"
if [ $rc != 0 ]; then
	bad "verbs_ex_check exit $rc$([ $rc -ge 128 ] && echo " (signal $((rc - 128)))")"
elif ! grep -q "^verbs_ex_check: [0-9]* checks, all ok" "$work/check"; then
	bad "verbs_ex_check: no 'all ok' line"
else
	ok
fi

if ! command -v fi_info > /dev/null; then
	echo "fi_info is not installed (libfabric-bin; scripts/deps.sh)"
	echo "verbs_ex: $pass passed, $fails failed, fi_info skipped"
	[ "$fails" = 0 ] || exit 1
	exit 77
fi
for tr in iwarp roce; do
	# (a crashed fi_info hung in libfabric's SIGSEGV handler: timeout)
	timeout 30 "$run" --vdev net_null0 --ip "$ip" --transport $tr -- fi_info -p verbs \
		> "$work/fi_info.$tr" 2>&1
	rc=$?
	sed 's/^/  /' "$work/fi_info.$tr"
	if [ $rc != 0 ]; then
		bad "fi_info -p verbs ($tr) exit $rc$([ $rc -ge 128 ] && echo " (signal $((rc - 128)))")" \
		    "$(grep -m1 -o 'terminated with signal [0-9]*' "$work/fi_info.$tr")"
	elif ! grep -Eq "domain: rnic0(_roce)?(-xrc|-dgram)?$" "$work/fi_info.$tr"; then
		bad "fi_info -p verbs ($tr) does not list rnic's devices"
	else
		ok
	fi
done
echo "verbs_ex: $pass passed, $fails failed"
[ "$fails" = 0 ]
