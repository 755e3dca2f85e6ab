#!/usr/bin/env bash
# Usage: scripts/demo.sh [--quick] [-h | --help]
#
# The demo of the README: installs what is missing, builds, then runs the application benchmarks a
# user judges a runtime on — tiled Cholesky (OpenBLAS kernels in tasks) and a Gauss-Seidel heat
# sweep — under GCC libgomp, LLVM libomp, weft (the same gcc -fopenmp binary), native weft, StarPU
# and OpenBLAS's own threaded dpotrf, on 2 threads, and prints them side by side
# (bench/apps/run.sh --demo). Then it traces the weft Cholesky and heat runs and prints their
# weft-trace summaries and writes Gantt charts (tools/weft-trace; the traced runs skip the self-check,
# which the table's runs did). --quick: every application on tiny sizes, in seconds.
# It builds Release in build-rel/ (BUILD_DIR overrides), apart from the tests' build/.
set -euo pipefail
demo_args=()
for arg in "$@"; do
  case $arg in
    --quick) demo_args+=(--quick) ;;
    -h | --help) awk 'NR > 1 && !/^#/ { exit } NR > 1' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "demo.sh: unknown argument '$arg' (try --help)" >&2; exit 2 ;;
  esac
done
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build-rel}
bash "$root/scripts/setup.sh"
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release
cmake --build "$build" -j"$(nproc)"
BUILD_DIR=$build bash "$root/bench/apps/run.sh" --demo "${demo_args[@]}"

out=$root/bench/results/demo-trace
mkdir -p "$out"
trace_tool=$root/.venv/bin/weft-trace
echo
echo "=== a traced weft run: tiled Cholesky, n=4096, tiles of 256, 2 workers"
WEFT_TRACE=$out/cholesky.trace "$build/bench/apps/cholesky_weft" --variant weft -n 4096 -b 256 -p 2 --no-check
"$trace_tool" summary "$out/cholesky.trace" | tee "$out/cholesky.summary.txt"
"$trace_tool" gantt "$out/cholesky.trace" -o "$out/cholesky.png" --color kind
echo
echo "=== a traced weft run: Gauss-Seidel heat sweep, persistent graph (no barrier), 2 workers"
WEFT_TRACE=$out/heat.trace "$build/bench/apps/heat_weft" --method gauss-seidel --variant weft-persistent \
  -n 2048 -b 128 -s 20 -p 2 --no-check
"$trace_tool" summary "$out/heat.trace" | tee "$out/heat.summary.txt"
"$trace_tool" gantt "$out/heat.trace" -o "$out/heat.png" --color iteration
"$trace_tool" perfetto "$out/heat.trace" -o "$out/heat.json"
echo "demo: traces, summaries, Gantt charts (cholesky.png, heat.png) and a Perfetto file in $out"
