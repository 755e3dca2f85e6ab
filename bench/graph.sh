#!/usr/bin/env bash
# Usage: bench/graph.sh [--quick] [-h | --help]
#
# Persistent task graphs (weft_graph_*): replayed graphs against ordinary weft tasks and the peers,
# 1 and 2 workers. See bench/README.md, "Persistent task graphs".
#
#   bench/graph.sh            a correctness pass, then REPS processes per row (default 5), interleaved
#   bench/graph.sh --quick    small sizes, 1 process per row (< 60 s): proves the harness works (CI)
#
# Patterns (micro_graph unless said):
#   stencil    width-8 stencil of micro_weft, empty bodies: ns per task end to end. weft-plain,
#              weft-reexec, weft-taskiter; peers: tbb-rerun (graph_tbb: a prebuilt flow graph run
#              again), llvm-omp (micro_omp stencil on LLVM libomp: the tasks submitted every step)
#   discovery  the producer's creation time per iteration: recording, replay, non-persistent
#   metg       METG(50%) of the stencil (64 µs down to 31 ns by halves): the same variants and peers
#   heat       Gauss-Seidel 2-D, blocked: weft-reexec, weft-reexec-iter (policy
#              WEFT_GRAPH_ITERATION_PRIORITY), weft-barrier (options.barrier = 1), weft-plain,
#              weft-taskiter, serial, gomp-wavefront (graph_omp: parallel for over the
#              anti-diagonals, libgomp)
#   jacobi     Jacobi 2-D, two arrays swapped: weft-reexec (unroll 2), weft-reexec-iter, weft-plain,
#              weft-taskiter, serial
# Every process checks its result (stencil/metg/discovery stamps in the correctness pass with
# --verify; heat/jacobi always compare their grid bit for bit with a serial sweep); a wrong result
# is status `failed`.
#
# Environment:
#   BUILD_DIR    build tree (configured with -DWEFT_BUILD_BENCH=ON if new)   [<repo>/build-rel]
#   RESULTS_DIR  where graph-<date>.csv and graph-<date>.md are written     [<repo>/bench/results]
#   REPS         processes per row in the timed pass                        [5, --quick: 1]
#   TIMEOUT      seconds one process may take, then `timeout`; a row that    [30, --quick: 5]
#                times out twice runs no more (the longest process, metg at 1 worker, takes ~2 s)
#   THREADS      worker counts                                              ["1 2"]
#   PATTERNS     subset of: stencil discovery metg heat jacobi              [all]
#   VARIANTS     subset of the variants above                               [all]
#   VERIFY       0: skip the correctness pass                               [1]
#   JOBS         build parallelism                                          [2]
#   LIBOMP       path of LLVM's libomp.so.5                                 [found with dpkg/ldconfig]
#   STAMP        date stamp of the output files                             [now]
# Exit status: 0; 1 when a weft run failed (wrong result, crash) or timed out; 2 when the harness
# could not run.
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(dirname "$here")
quick=0
for arg in "$@"; do
  case "$arg" in
    --quick) quick=1 ;;
    -h | --help) awk 'NR > 1 && !/^#/ { exit } NR > 1' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "graph.sh: unknown argument '$arg' (try --help)" >&2; exit 2 ;;
  esac
done

BUILD_DIR=${BUILD_DIR:-$root/build-rel}
RESULTS_DIR=${RESULTS_DIR:-$here/results}
if ((quick)); then REPS=${REPS:-1}; TIMEOUT=${TIMEOUT:-5}; else REPS=${REPS:-5}; TIMEOUT=${TIMEOUT:-30}; fi
THREADS=${THREADS:-1 2}
ALL_PATTERNS="stencil discovery metg heat jacobi"
PATTERNS=${PATTERNS:-$ALL_PATTERNS}
ALL_VARIANTS="weft-reexec weft-reexec-iter weft-taskiter weft-barrier weft-plain serial tbb-rerun llvm-omp gomp-wavefront"
VARIANTS=${VARIANTS:-$ALL_VARIANTS}
VERIFY=${VERIFY:-1}
JOBS=${JOBS:-2}

# shellcheck source=lib.sh
. "$here/lib.sh"  # die, has_word, log, csv_field, bench_find_libomp
for p in $PATTERNS; do has_word "$ALL_PATTERNS" "$p" || die "unknown pattern '$p'"; done
for v in $VARIANTS; do has_word "$ALL_VARIANTS weft" "$v" || die "unknown variant '$v'"; done

# --- cases: pattern | micro_graph arguments | variants ----------------------------------------------
# The arguments are micro_graph's; graph_tbb takes the same -w/-t and metg options, micro_omp gets
# -n (= w x t) for the stencil, graph_omp the same -n/-b/-s.
st_variants="weft-reexec weft-taskiter weft-plain tbb-rerun llvm-omp"
heat_variants="weft-reexec weft-reexec-iter weft-barrier weft-taskiter weft-plain gomp-wavefront serial"
jac_variants="weft-reexec weft-reexec-iter weft-taskiter weft-plain serial"
if ((quick)); then
  cases=(
    "stencil|-w 8 -t 1250|$st_variants"
    "discovery|-w 8 -i 16 -r 20|weft"
    "metg|-w 8 -t 100 --max-ns 16000 --min-ns 62.5|$st_variants"
    "heat|-n 256 -b 32 -s 10|$heat_variants"
    "jacobi|-n 256 -b 32 -s 10|$jac_variants"
  )
else
  cases=(
    # 2M tasks, ~40-250 ms a weft run: shorter runs time the start as much as the tasks
    "stencil|-w 8 -t 250000|$st_variants"
    "discovery|-w 8 -i 16 -r 1000|weft"
    "metg|-w 8 -t 1000 --max-ns 64000 --min-ns 31.25|$st_variants"
    # coarse blocks (64 x 64 cells: ~6 us a Gauss-Seidel task, ~2 us a Jacobi one) and fine ones
    # (32 x 32: ~1.5 us, ~0.5 us); 50-150 ms a run serially
    "heat|-n 1024 -b 64 -s 100|$heat_variants"
    "heat|-n 1024 -b 32 -s 50|$heat_variants"
    "jacobi|-n 1024 -b 64 -s 100|$jac_variants"
    "jacobi|-n 1024 -b 32 -s 100|$jac_variants"
  )
fi
# The correctness pass: small sizes, --verify where the pattern has it, every variant and a few
# options the timed pass does not use (policies, lookahead 1, unroll 1 = re-recorded every iteration).
verify_cases=(
  "stencil|-w 8 -t 2000|$st_variants weft-barrier"
  "stencil|-w 8 -t 2000 --policy iteration|weft-reexec weft-taskiter"
  "stencil|-w 8 -t 2000 --policy immediate --lookahead 1|weft-reexec"
  "stencil|-w 8 -t 200 --unroll 1|weft-reexec"
  "stencil|-w 3 -t 1001|weft-reexec weft-taskiter weft-plain"
  "discovery|-w 8 -i 16 -r 10|weft"
  "heat|-n 256 -b 32 -s 7|$heat_variants"
  "heat|-n 192 -b 64 -s 5 --policy iteration|weft-reexec weft-taskiter"
  "jacobi|-n 256 -b 32 -s 7|$jac_variants"
  "jacobi|-n 256 -b 32 -s 6 --unroll 1|weft-reexec"
)

# --- build ------------------------------------------------------------------------------------------
command -v cmake >/dev/null || die "cmake not found"
mkdir -p "$RESULTS_DIR" || die "cannot create $RESULTS_DIR"
build_log=$(mktemp)
out=$(mktemp)
err=$(mktemp)
trap 'rm -f "$build_log" "$out" "$err"' EXIT
if ! grep -q '^WEFT_BUILD_BENCH:BOOL=ON' "$BUILD_DIR/CMakeCache.txt" 2>/dev/null; then
  new_tree=()
  # A new tree is configured Release, as the results are measured (Ninja when there is one);
  # an existing one keeps its build type.
  if [ ! -f "$BUILD_DIR/CMakeCache.txt" ]; then
    new_tree=(-DCMAKE_BUILD_TYPE=Release)
    if command -v ninja >/dev/null; then new_tree+=(-G Ninja); fi
  fi
  log "graph.sh: configuring $BUILD_DIR"
  cmake -S "$root" -B "$BUILD_DIR" "${new_tree[@]}" -DWEFT_BUILD_BENCH=ON >"$build_log" 2>&1 ||
    { cat "$build_log" >&2; die "cmake configure failed"; }
fi
notes=()
declare -A exe
find_exe() { find "$BUILD_DIR" -name "$1" -type f -perm -u+x -print -quit 2>/dev/null; }
for target in micro_graph graph_tbb micro_omp graph_omp; do
  if cmake --build "$BUILD_DIR" --target "$target" -j "$JOBS" >"$build_log" 2>&1; then
    exe[$target]=$(find_exe "$target")
  else
    tail -n 20 "$build_log" >&2
    notes+=("$target could not be built: its rows are missing")
    log "graph.sh: $target not built (see above); its rows are skipped"
  fi
done
[ -n "${exe[micro_graph]:-}" ] || die "micro_graph could not be built"
# The library the weft rows ran on: a rebuild during the run (a shared build tree) is reported.
libweft=$(ldd "${exe[micro_graph]}" 2>/dev/null | awk '/libweft/ {print $3; exit}')
lib_sum() { [ -n "$libweft" ] && md5sum <"$libweft" 2>/dev/null | cut -c1-12; }
lib_before=$(lib_sum)

bench_find_libomp
[ -n "$libomp" ] || notes+=("LLVM libomp (libomp.so.5) not found: no llvm-omp rows")
taskflow=0
for d in /usr/include/taskflow /usr/local/include/taskflow; do [ -d "$d" ] && taskflow=1; done
((taskflow)) || notes+=("Taskflow is not installed here (no /usr/include/taskflow): no Taskflow rows")
((taskflow)) && notes+=("Taskflow headers found but no Taskflow variant is written yet")

# The value of option $2 in the argument list $1 (empty when absent).
arg_of() { local prev= a; for a in $1; do [ "$prev" = "$2" ] && { echo "$a"; return; }; prev=$a; done; }

# Prints the command (env assignments and arguments) of variant v at t workers for pattern p with
# micro_graph arguments args, or nothing when the variant cannot run here or has no such pattern.
variant_command() {
  local v=$1 p=$2 args=$3 t=$4 verify=$5 w steps watchdog=
  # correctness pass: a weft process that stalls says on stderr what its pending tasks wait for
  [ -n "$verify" ] && watchdog="WEFT_WATCHDOG=2 "
  case "$v" in
    weft-reexec-iter) # re-execute with the iteration-priority policy (ready tasks in readiness order)
      echo "env WEFT_NUM_THREADS=$t $watchdog${exe[micro_graph]} $p $args --variant reexec --policy iteration -p $t $verify" ;;
    weft-*)
      echo "env WEFT_NUM_THREADS=$t $watchdog${exe[micro_graph]} $p $args --variant ${v#weft-} -p $t $verify" ;;
    weft) # discovery: both loops in one process
      echo "env WEFT_NUM_THREADS=$t $watchdog${exe[micro_graph]} $p $args -p $t $verify" ;;
    serial) echo "env WEFT_NUM_THREADS=1 ${exe[micro_graph]} $p $args --variant serial -p 1" ;;
    tbb-rerun)
      [ -n "${exe[graph_tbb]:-}" ] || return 0
      echo "${exe[graph_tbb]} $p $args -p $t $verify" ;;
    llvm-omp)
      [ -n "${exe[micro_omp]:-}" ] && [ -n "$libomp" ] || return 0
      w=$(arg_of "$args" -w)
      steps=$(arg_of "$args" -t)
      if [ "$p" = stencil ]; then
        echo "env OMP_NUM_THREADS=$t LD_PRELOAD=$libomp ${exe[micro_omp]} stencil -n $((w * steps)) -w $w -p $t $verify"
      else
        echo "env OMP_NUM_THREADS=$t LD_PRELOAD=$libomp ${exe[micro_omp]} $p $args -p $t"
      fi ;;
    gomp-wavefront)
      [ -n "${exe[graph_omp]:-}" ] || return 0
      echo "env OMP_NUM_THREADS=$t ${exe[graph_omp]} $p $(sed 's/--policy [a-z]*//' <<<"$args") --variant wavefront -p $t" ;;
  esac
  return 0
}

# --- run --------------------------------------------------------------------------------------------
stamp=${STAMP:-$(date +%Y%m%d-%H%M%S)}
name=graph-$stamp
((quick)) && name=graph-quick-$stamp
csv=$RESULTS_DIR/$name.csv
md=$RESULTS_DIR/$name.md
echo "phase,variant,pattern,case,threads,rep,status,seconds,result" >"$csv"
weft_failed=0
runs=0
start=$(date +%s)
declare -A skip_row timeouts

# run_one phase variant pattern args threads rep verify-flag
run_one() {
  local phase=$1 v=$2 p=$3 args=$4 t=$5 rep=$6 verify=$7 cmd rc t0 t1 seconds result status brief
  cmd=$(variant_command "$v" "$p" "$args" "$t" "$verify")
  [ -n "$cmd" ] || return 0
  local key="$phase|$v|$p|$args|$t"
  if [ -n "${skip_row[$key]:-}" ]; then return 0; fi
  t0=$(date +%s.%N)
  # shellcheck disable=SC2086 # cmd is a word list by construction
  timeout -k 5 "$TIMEOUT" $cmd >"$out" 2>"$err"
  rc=$?
  t1=$(date +%s.%N)
  seconds=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')
  result=$(grep '^pattern=' "$out" | tail -n 1)
  if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
    status=timeout
    timeouts[$key]=$((${timeouts[$key]:-0} + 1))
    ((${timeouts[$key]} >= 2)) && skip_row[$key]=1
    # what the watchdog (correctness pass) said about the stall, then a result line printed before it
    result="$(grep -v '^pattern=' "$err" | head -n 4 | tr '\n' ' ' | cut -c1-400) $result"
  elif [ "$rc" -eq 3 ] && [[ "$result" == *status=unsupported* ]]; then
    status=unsupported
    skip_row[$key]=1
  elif [ "$rc" -eq 0 ] && [ -n "$result" ]; then
    status=ok
  else
    status=failed
    result="rc=$rc $(tail -n 3 "$err" | tr '\n' ' ') $result"
  fi
  if [ "$status" = timeout ] || [ "$status" = failed ]; then
    [[ "$v" == weft* ]] && weft_failed=1
    log "graph.sh: reproduce with: $cmd"
  fi
  runs=$((runs + 1))
  printf '%s,%s,%s,%s,%s,%s,%s,%s,%s\n' "$phase" "$v" "$p" "$(csv_field "$args")" "$t" "$rep" "$status" \
    "$seconds" "$(csv_field "$result")" >>"$csv"
  brief=$(grep -o ' ns_per_task=[^ ]*\|metg_ns=[^ ]*\|ms=[^ ]*\|disc_speedup=[^ ]*\|verified=[^ ]*\|check=[^ ]*\|replay=[^ ]*' \
    <<<"$result" | tr '\n' ' ')
  log "[$(($(date +%s) - start))s] $phase $p $args t=$t $v #$rep: $status ${seconds}s $brief"
}

other_builds() { pgrep -f 'cc1plus|ninja|cc1 ' 2>/dev/null | grep -v "^$$\$" | head -n 1; }

if ((VERIFY)); then
  log "graph.sh: correctness pass"
  for c in "${verify_cases[@]}"; do
    IFS='|' read -r pattern args variants <<<"$c"
    has_word "$PATTERNS" "$pattern" || continue
    for t in $THREADS; do
      for v in $variants; do
        has_word "$VARIANTS" "$v" || [ "$v" = weft ] || continue
        run_one verify "$v" "$pattern" "$args" "$t" 1 --verify
      done
    done
  done
fi

[ -n "$(other_builds)" ] && notes+=("a compiler was running on this machine when the timed pass began: timings may be noisy")
log "graph.sh: timed pass, REPS=$REPS, interleaved"
for ((rep = 1; rep <= REPS; ++rep)); do
  for c in "${cases[@]}"; do
    IFS='|' read -r pattern args variants <<<"$c"
    has_word "$PATTERNS" "$pattern" || continue
    for t in $THREADS; do
      for v in $variants; do
        has_word "$VARIANTS" "$v" || [ "$v" = weft ] || continue
        run_one time "$v" "$pattern" "$args" "$t" "$rep" ""
      done
    done
  done
done
((runs > 0)) || die "no run was possible"

lib_after=$(lib_sum)
[ "$lib_before" = "$lib_after" ] ||
  notes+=("**$libweft changed during the run** (md5 $lib_before -> $lib_after: rebuilt in a shared build tree): rows mix two libraries")

# --- summary ----------------------------------------------------------------------------------------
meta=(
  "date: $(date -Iseconds)"
  "machine: $(uname -srm), $(nproc) cores, $(LC_ALL=C lscpu 2>/dev/null | sed -n 's/^Model name: *//p' | head -n 1)"
  "compiler: $(gcc --version 2>/dev/null | head -n 1)"
  "weft: $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo 'no commit')$(git -C "$root" diff --quiet HEAD -- src include 2>/dev/null || echo ' (src/include modified in the working tree)'); ${libweft:-libweft.so} md5 ${lib_before:-?}"
  "peers: libomp ${libomp:-none}; oneTBB $(pkg-config --modversion tbb 2>/dev/null || echo '?'); libgomp of $(gcc -dumpfullversion 2>/dev/null)"
  "runs: REPS=$REPS interleaved (each rep runs every row once), TIMEOUT=${TIMEOUT}s, THREADS=$THREADS$(((quick)) && echo ', --quick (small sizes: not a measurement)')"
  "raw runs: $(basename "$csv")"
)
trip=$(bench_line_trip)
[ -n "$trip" ] && meta+=("$trip (at the end of the run)")
summary_args=()
for m in "${meta[@]}"; do summary_args+=(--meta "$m"); done
for n in "${notes[@]}"; do summary_args+=(--note "$n"); done
python3 "$here/micro/graph_summarize.py" "$csv" --md "$md" --title "weft persistent task graphs ($stamp)" \
  "${summary_args[@]}" || die "graph_summarize.py failed"
log "graph.sh: wrote $csv and $md in $(($(date +%s) - start))s"
exit $((weft_failed ? 1 : 0))
