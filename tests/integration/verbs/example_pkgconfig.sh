#!/bin/bash
# Install rnic into a scratch DESTDIR, build apps/examples/cq_per_thread.c
# there with nothing but `pkg-config --cflags --libs rnic`, and run it:
# one CQ per application thread, each on its own completion handler.
set -euo pipefail
build=${RNIC_BUILD_DIR:?}
src=${RNIC_SOURCE_DIR:?}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
meson install -C "$build" --destdir "$work/root" --quiet >/dev/null 2>&1 ||
	meson install -C "$build" --destdir "$work/root" >"$work/install.log" 2>&1 ||
	{ cat "$work/install.log"; echo "FAIL: meson install"; exit 1; }
pc=$(find "$work/root" -name rnic.pc | head -1)
[ -n "$pc" ] || { echo "FAIL: rnic.pc not installed"; exit 1; }
# a copy of rnic.pc whose prefix points into the DESTDIR tree; libdpdk.pc
# comes from the system as it would for a real install
mkdir -p "$work/pc"
sed "s|^prefix=|prefix=$work/root|" "$pc" > "$work/pc/rnic.pc"
export PKG_CONFIG_PATH="$work/pc"
flags=$(pkg-config --cflags --libs rnic)
# a sanitized build's library needs the application built the same way (the
# ASan runtime must come first); a user's build would match its library too
san=$(meson introspect --buildoptions "$build" 2>/dev/null |
      python3 -c 'import json,sys; print(next((o["value"] for o in json.load(sys.stdin) if o["name"] == "b_sanitize"), "none"))' 2>/dev/null)
[ -n "$san" ] && [ "$san" != none ] && flags="-fsanitize=$san $flags"
cc -O2 -Wall -Wextra -Werror -o "$work/cq_per_thread" "$src/apps/examples/cq_per_thread.c" \
	$flags -lpthread
libdir=$(dirname "$(find "$work/root" -name 'librnic.so*' | head -1)")
out=$(LD_LIBRARY_PATH="$libdir" timeout 120 "$work/cq_per_thread" 2000 2>&1) || {
	echo "$out"; echo "FAIL: the example failed"; exit 1; }
echo "$out"
echo "$out" | grep -q "CQ on handler 0" && echo "$out" | grep -q "CQ on handler 1" ||
	{ echo "FAIL: the threads' CQs were not on different handlers"; exit 1; }
echo "$out" | grep -q "^4000 messages in all" || { echo "FAIL: messages missing"; exit 1; }
echo "1 passed, 0 failed"
