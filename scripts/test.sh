#!/usr/bin/env bash
# Usage: scripts/test.sh [ctest arguments...]     e.g. scripts/test.sh -R '^mpi\.' -j2
#        scripts/test.sh -h | --help
#
# The test command of the README: installs what is missing (scripts/setup.sh), builds build/
# (RelWithDebInfo, warnings as errors) and runs every test with CTest, or those the arguments
# select. BUILD_DIR overrides the build folder. The demo and the benchmarks build Release in
# build-rel/, so switching between them rebuilds nothing.
set -euo pipefail
for arg in "$@"; do
  case $arg in
    -h | --help) awk 'NR > 1 && !/^#/ { exit } NR > 1' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
  esac
done
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}
bash "$root/scripts/setup.sh"
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DWEFT_WERROR=ON
cmake --build "$build" -j"$(nproc)"
ctest --test-dir "$build" --output-on-failure -j1 "$@"
