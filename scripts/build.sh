#!/usr/bin/env bash
# Configure (once) and build rnic in build/, warnings as errors.
set -eu
cd "$(dirname "$0")/.."
if [ ! -f build/build.ninja ]; then
	meson setup build --buildtype=debugoptimized -Dwerror=true
fi
ninja -C build
