#!/usr/bin/env bash
# Usage: bench/omp/run.sh [--quick] [-h | --help]
#
# EPCC-style OpenMP construct overheads (bench/omp/epcc.c) on GCC libgomp, LLVM libomp and weft's
# OpenMP door, 1 and 2 threads, one process per construct per run, side by side.
#
#   bench/omp/run.sh            REPS processes per construct x runtime x threads (default 5)
#   bench/omp/run.sh --quick    1 process each, short blocks: proves the harness works (CI)
#
# Environment:
#   BUILD_DIR    build tree holding epcc_omp and libweft.so (configured if new) [<repo>/build-rel]
#   RESULTS_DIR  where epcc-<date>.csv and epcc-<date>.md are written     [<repo>/bench/results]
#   REPS         processes per construct x runtime x threads             [5, --quick: 1]
#   TIMEOUT      seconds one process may take, then reported timeout     [30, --quick: 10]
#   THREADS      OMP_NUM_THREADS values                                   ["1 2"]
#   RUNTIMES     subset of: gomp llvm-omp weft                            [all]
#   CONSTRUCTS   subset of epcc_omp --list                                [all]
#   EPCC_ARGS    extra epcc_omp options (e.g. "--delay-ns 0")             [none]
#   LIBOMP       path of LLVM's libomp.so.5                               [found with dpkg/ldconfig]
#   STAMP        date stamp of the output files                          [now]
#   STRICT=1     exit 1 when a weft run is not ok (failed, timeout, mixed, wrong-*)
# Statuses: ok; timeout; failed (crash, non-zero exit, or a wrong result caught by the checks);
# mixed (an entry point the construct uses resolved outside the runtime under test: a door missing
# a GOMP symbol falls through to libgomp, which the binary still links; the number is kept in the CSV,
# not in the table); wrong-runtime (the parallel regions were not run by the runtime named, e.g. a
# preload that did not take); wrong-threads (team size != OMP_NUM_THREADS); unavailable (the
# runtime cannot run here: libweft.so without GOMP_parallel, no libomp.so.5). Exit status: 0; 1 with
# STRICT=1 (see above); 2 when the harness could not run.
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
bench=$(dirname "$here")
root=$(dirname "$bench")
quick=0
for arg in "$@"; do
  case "$arg" in
    --quick) quick=1 ;;
    -h | --help) awk 'NR > 1 && !/^#/ { exit } NR > 1' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "omp/run.sh: unknown argument '$arg' (try --help)" >&2; exit 2 ;;
  esac
done

BUILD_DIR=${BUILD_DIR:-$root/build-rel}
RESULTS_DIR=${RESULTS_DIR:-$bench/results}
if ((quick)); then REPS=${REPS:-1}; TIMEOUT=${TIMEOUT:-10}; else REPS=${REPS:-5}; TIMEOUT=${TIMEOUT:-30}; fi
THREADS=${THREADS:-1 2}
RUNTIMES=${RUNTIMES:-gomp llvm-omp weft}
EPCC_ARGS=${EPCC_ARGS:-}
STRICT=${STRICT:-0}
# --quick: short blocks (200 us), 5 of them, 2 ms of warm-up; full: epcc_omp's defaults (1 ms, 20, 20 ms)
mode_args=()
((quick)) && mode_args=(--target-us 200 --outer 5 --warmup-ms 2)
# --quick: a runtime that times out twice at one thread count is not run on its other constructs
max_timeouts=0
((quick)) && max_timeouts=2

# shellcheck source=lib.sh
. "$bench/lib.sh"  # die, has_word, log, csv_field, bench_find_libomp

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
  log "omp/run.sh: configuring $BUILD_DIR"
  cmake -S "$root" -B "$BUILD_DIR" "${new_tree[@]}" -DWEFT_BUILD_BENCH=ON >"$build_log" 2>&1 ||
    { cat "$build_log" >&2; die "cmake configure failed"; }
fi
cmake --build "$BUILD_DIR" --target epcc_omp >"$build_log" 2>&1 ||
  { tail -n 20 "$build_log" >&2; die "epcc_omp could not be built (it needs gcc with OpenMP)"; }
epcc=$(find "$BUILD_DIR" -name epcc_omp -type f -perm -u+x -print -quit)
[ -n "$epcc" ] || die "epcc_omp not found in $BUILD_DIR"
notes=()

# LLVM libomp, preloaded under the gcc-built binary.
bench_find_libomp

# weft's OpenMP door: libweft.so, built here, exporting the GOMP ABI.
libweft=
why_no_weft=
if has_word "$RUNTIMES" weft; then
  if ! cmake --build "$BUILD_DIR" --target weft >"$build_log" 2>&1; then
    tail -n 20 "$build_log" >&2
    why_no_weft="libweft.so could not be built"
  else
    libweft=$(find "$BUILD_DIR" -name 'libweft.so' \( -type f -o -type l \) -print -quit 2>/dev/null)
    if [ -z "$libweft" ]; then
      why_no_weft="no libweft.so in $BUILD_DIR"
    elif ! nm -D --defined-only "$libweft" 2>/dev/null | grep -E ' GOMP_parallel(@@?[A-Z_0-9.]+)?$' >/dev/null; then
      why_no_weft="$libweft does not export GOMP_parallel"
      libweft=
    fi
  fi
  [ -n "$why_no_weft" ] && { notes+=("weft: $why_no_weft"); log "omp/run.sh: weft unavailable: $why_no_weft"; }
fi
[ -n "$libomp" ] || { has_word "$RUNTIMES" llvm-omp && notes+=("llvm-omp: LLVM libomp (libomp.so.5) not found"); }

# Prints "expected-library|env assignments" for runtime r at t threads, or nothing if it cannot run.
runtime_setup() {
  local r=$1 t=$2
  case "$r" in
    gomp) echo "libgomp.so.1|OMP_NUM_THREADS=$t" ;;
    llvm-omp) [ -n "$libomp" ] && echo "$(basename "$libomp")|OMP_NUM_THREADS=$t LD_PRELOAD=$libomp" ;;
    weft) [ -n "$libweft" ] && echo "$(basename "$libweft")|OMP_NUM_THREADS=$t WEFT_NUM_THREADS=$t LD_PRELOAD=$libweft" ;;
  esac
  return 0
}

all_constructs=$("$epcc" --list | tr '\n' ' ') || die "$epcc --list failed"
CONSTRUCTS=${CONSTRUCTS:-$all_constructs}
for c in $CONSTRUCTS; do has_word "$all_constructs" "$c" || die "unknown construct '$c' (have: $all_constructs)"; done

# --- run --------------------------------------------------------------------------------------------
stamp=${STAMP:-$(date +%Y%m%d-%H%M%S)}
name=epcc-$stamp
((quick)) && name=epcc-quick-$stamp
csv=$RESULTS_DIR/$name.csv
md=$RESULTS_DIR/$name.md
echo "runtime,construct,threads,rep,status,overhead_ns,team,seconds,detail" >"$csv"
row() { # runtime construct threads rep status overhead team seconds detail
  printf '%s,%s,%s,%s,%s,%s,%s,%s,%s\n' "$1" "$2" "$3" "$4" "$5" "$6" "$7" "$8" "$(csv_field "$9")" >>"$csv"
}
weft_bad=0
runs=0
start=$(date +%s)
load_start=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null)
declare -A timeouts

# Interleaved: each rep runs every construct on every runtime before the next rep starts, so a slow
# spell of the machine (seconds to minutes on a shared one) falls on every runtime alike.
for r in $RUNTIMES; do
  case "$r" in gomp | llvm-omp | weft) ;; *) die "unknown runtime '$r' (gomp llvm-omp weft)" ;; esac
done
declare -A done_row # runtime|construct|threads -> why its remaining reps are not run
for t in $THREADS; do
  for r in $RUNTIMES; do # a runtime that cannot run here: one row per construct says so
    [ -n "$(runtime_setup "$r" "$t")" ] && continue
    for c in $CONSTRUCTS; do
      row "$r" "$c" "$t" 1 unavailable "" "" 0 "${why_no_weft:-libomp.so.5 not found}"
      done_row[$r|$c|$t]=unavailable
    done
  done
  for ((rep = 1; rep <= REPS; ++rep)); do
    for c in $CONSTRUCTS; do
      for r in $RUNTIMES; do
        [ -n "${done_row[$r|$c|$t]:-}" ] && continue
        if ((max_timeouts > 0)) && ((${timeouts[$r|$t]:-0} >= max_timeouts)); then
          row "$r" "$c" "$t" "$rep" timeout "" "" 0 "not run: $r timed out $max_timeouts times at $t threads"
          log "epcc $c t=$t $r: timeout (not run: timed out $max_timeouts times already)"
          done_row[$r|$c|$t]=timeout
          continue
        fi
        setup=$(runtime_setup "$r" "$t")
        expected=${setup%%|*}
        assignments=${setup#*|}
        t0=$(date +%s.%N)
        # shellcheck disable=SC2086 # assignments and EPCC_ARGS are word lists by construction
        env $assignments timeout -k 5 "$TIMEOUT" "$epcc" --construct "$c" "${mode_args[@]}" $EPCC_ARGS \
          >"$out" 2>"$err"
        rc=$?
        t1=$(date +%s.%N)
        seconds=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')
        line=$(grep "^$c," "$out" | tail -n 1)
        team=$(cut -d, -f2 <<<"$line")
        overhead=$(cut -d, -f3 <<<"$line")
        answered=$(sed -n 's/^# epcc: runtime=\([^ ]*\).*/\1/p' "$err" | head -n 1)
        detail=$(grep "^# $c: " "$err" | sed "s/^# $c: //" | tr '\n' ' ')
        if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
          status=timeout
          timeouts[$r|$t]=$((${timeouts[$r|$t]:-0} + 1))
        elif [ -n "$answered" ] && [ "$answered" != "$expected" ]; then
          status=wrong-runtime
          detail="parallel regions run by $answered, not $expected; $detail"
        elif [ "$rc" -eq 3 ] && [ -n "$line" ]; then
          status=mixed
        elif [ "$rc" -eq 0 ] && [ -n "$line" ]; then
          if [ "$team" = "$t" ]; then status=ok; else status=wrong-threads; fi
        else
          status=failed
          detail="rc=$rc $(grep -v '^# .*: threads=' "$err" | tail -n 3 | tr '\n' ' ')$detail"
        fi
        runs=$((runs + 1))
        [ "$r" = weft ] && [ "$status" != ok ] && weft_bad=1
        row "$r" "$c" "$t" "$rep" "$status" "$overhead" "$team" "$seconds" "$detail"
        log "[$(($(date +%s) - start))s] epcc $c t=$t $r #$rep: $status ${overhead:+$overhead ns} (${seconds}s)"
        # a timeout would repeat, and a run on the wrong runtime measures nothing: reported once
        if [ "$status" = timeout ] || [ "$status" = wrong-runtime ]; then done_row[$r|$c|$t]=$status; fi
      done
    done
  done
done

# --- summary ----------------------------------------------------------------------------------------
meta=(
  "date: $(date -Iseconds)"
  "machine: $(uname -srm), $(nproc) cores, $(LC_ALL=C lscpu 2>/dev/null | sed -n 's/^Model name: *//p' | head -n 1)"
  "compiler: $(gcc --version 2>/dev/null | head -n 1)"
  "weft: $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo 'no commit')$(git -C "$root" diff --quiet HEAD 2>/dev/null || echo ' (working tree modified)')"
  "libomp: ${libomp:-none}; libweft: ${libweft:-none}"
  "runs: REPS=$REPS processes, TIMEOUT=${TIMEOUT}s, THREADS=$THREADS, epcc_omp ${mode_args[*]:-(defaults)} ${EPCC_ARGS}$( ((quick)) && echo ' (--quick: short blocks, not a measurement)')"
  "load average at start / end: $load_start / $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null)"
  "raw runs: $(basename "$csv")"
)
summary_args=()
for m in "${meta[@]}"; do summary_args+=(--meta "$m"); done
for n in "${notes[@]}"; do summary_args+=(--note "$n"); done
python3 "$here/summarize.py" "$csv" --md "$md" --title "OpenMP construct overheads, EPCC method ($stamp)" \
  "${summary_args[@]}" || die "summarize.py failed"
log "omp/run.sh: wrote $csv and $md ($runs runs) in $(($(date +%s) - start))s"
((STRICT && weft_bad)) && exit 1
exit 0
