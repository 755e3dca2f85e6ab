#!/usr/bin/env bash
# The demo of the README: installs what is missing, builds, runs the micro-benchmark comparison of
# weft against GCC libgomp, LLVM libomp and oneTBB (bench/run.sh), printing the table; then traces
# one weft run (a persistent-graph heat sweep on 2 workers) and prints its summary and writes its
# Gantt chart (tools/weft-trace).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}
bash "$root/scripts/setup.sh"
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release
cmake --build "$build" -j"$(nproc)"
BUILD_DIR=$build bash "$root/bench/run.sh" "$@"

out=$root/bench/results/demo-trace
mkdir -p "$out"
echo
echo "=== a traced weft run: Gauss-Seidel heat sweep, persistent graph, 2 workers"
WEFT_TRACE=$out/heat.trace "$build/bench/micro_graph" heat -p 2 --variant reexec -n 512 -b 64 -s 20
"$root/.venv/bin/weft-trace" summary "$out/heat.trace" | tee "$out/heat.summary.txt"
"$root/.venv/bin/weft-trace" gantt "$out/heat.trace" -o "$out/heat.png" --color iteration
"$root/.venv/bin/weft-trace" perfetto "$out/heat.trace" -o "$out/heat.json"
echo "demo: trace, summary, Gantt chart and Perfetto file in $out"
