#!/usr/bin/env bash
# The demo of the README: installs what is missing, builds, and runs the micro-benchmark comparison
# of weft against GCC libgomp, LLVM libomp and oneTBB (bench/run.sh), printing the table.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}
bash "$root/scripts/setup.sh"
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release
cmake --build "$build" -j"$(nproc)"
BUILD_DIR=$build exec bash "$root/bench/run.sh" "$@"
