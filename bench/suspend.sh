#!/usr/bin/env bash
# Usage: bench/suspend.sh [--quick] [-h | --help]
#
# Task suspension micro-benchmarks (issue 4): native weft (micro_suspend) and the same patterns as
# OpenMP tasks (suspend_omp) on GCC libgomp, LLVM libomp and weft's OpenMP door, 1 and 2 threads.
#
#   bench/suspend.sh            REPS processes per case x runtime x threads (default 5): a measurement
#   bench/suspend.sh --quick    small sizes, 1 process each (< 1 minute): proves the harness works (CI)
#
# Environment:
#   BUILD_DIR    build tree (configured with -DWEFT_BUILD_BENCH=ON if new)       [<repo>/build-rel]
#   RESULTS_DIR  where suspend-<date>.csv and suspend-<date>.md are written     [<repo>/bench/results]
#   REPS         processes per case x runtime x threads                         [5, --quick: 1]
#   TIMEOUT      seconds one process may take, then reported timeout            [60, --quick: 20]
#   THREADS      worker / OMP_NUM_THREADS counts                                 ["1 2"]
#   RUNTIMES     subset of: weft gomp llvm-omp weft-omp llvm-omp-kmpc             [all]
#                weft: micro_suspend (weft.h); the others: suspend_omp under libgomp, LD_PRELOAD=
#                libomp.so.5, LD_PRELOAD=libweft.so; llvm-omp-kmpc: suspend_omp built by clang on
#                libomp's own ABI (libomp 14's GOMP layer ignores detach)
#   PATTERNS     subset of: pingpong yield poller bind handoff taskwait_deep fcontext detach [all]
#   LIBOMP       path of LLVM's libomp.so.5                                      [found with dpkg/ldconfig]
#   STAMP        date stamp of the output files                                  [now]
#   STRICT=1     exit 1 when a weft or weft-omp run is not ok
# Statuses: ok; unsupported (the runtime cannot express the pattern: exit 3 with status=unsupported);
# mixed (an OpenMP entry point resolved outside the runtime under test); wrong-runtime (the preload
# did not take); wrong-threads; timeout (the row's remaining runs are skipped); failed (crash,
# non-zero exit). Exit status: 0; 1 with STRICT=1 (see above); 2 when the harness could not run.
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(dirname "$here")
quick=0
for arg in "$@"; do
  case "$arg" in
    --quick) quick=1 ;;
    -h | --help) awk 'NR > 1 && !/^#/ { exit } NR > 1' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "suspend.sh: unknown argument '$arg' (try --help)" >&2; exit 2 ;;
  esac
done

BUILD_DIR=${BUILD_DIR:-$root/build-rel}
RESULTS_DIR=${RESULTS_DIR:-$here/results}
if ((quick)); then REPS=${REPS:-1}; TIMEOUT=${TIMEOUT:-20}; else REPS=${REPS:-5}; TIMEOUT=${TIMEOUT:-60}; fi
THREADS=${THREADS:-1 2}
RUNTIMES=${RUNTIMES:-weft gomp llvm-omp weft-omp llvm-omp-kmpc}
PATTERNS=${PATTERNS:-pingpong yield poller bind handoff taskwait_deep fcontext detach}
STRICT=${STRICT:-0}

# shellcheck source=lib.sh
. "$here/lib.sh"  # die, has_word, log, csv_field, bench_find_libomp

for r in $RUNTIMES; do
  case "$r" in weft | gomp | llvm-omp | weft-omp | llvm-omp-kmpc) ;; *) die "unknown runtime '$r'" ;; esac
done

# --- cases: program | pattern | arguments | flags ------------------------------------------------
# program: native (micro_suspend, runtime weft) or omp (suspend_omp, the OpenMP runtimes).
# flags: 'once' = run at the first thread count only (it does not depend on the workers).
# The OpenMP detach/handoff batches (taskwait every 32 tasks / 16 rounds) keep libgomp from running a
# detached task undeferred (it does so past 64 x threads queued tasks, then waits for an event that
# only a later task fulfils); the native bind runs both unbatched and with the same batch.
if ((quick)); then
  cases=(
    "native|pingpong|-n 2000|"
    "native|yield|-n 2000 -k 2|"
    "native|poller|-m 5000 -n 20000|"
    "native|bind|-n 5000|"
    "native|bind|-n 5000 -b 32|"
    "native|handoff|-n 2000 -b 16|"
    "native|taskwait_deep|-d 2000|"
    "native|fcontext|-n 20000|once"
    "omp|yield|-n 2000 -k 2|"
    "omp|detach|-n 5000 -b 32|"
    "omp|handoff|-n 2000 -b 16|"
    "omp|taskwait_deep|-d 2000|"
  )
else
  cases=(
    "native|pingpong|-n 100000|"
    "native|yield|-n 100000 -k 2|"
    "native|poller|-m 200000 -n 1000000|"
    "native|bind|-n 200000|"
    "native|bind|-n 200000 -b 32|"
    "native|handoff|-n 100000 -b 16|"
    "native|taskwait_deep|-d 10000|"
    "native|taskwait_deep|-d 100000|"
    "native|fcontext|-n 1000000|once"
    "omp|yield|-n 100000 -k 2|"
    "omp|detach|-n 200000 -b 32|"
    "omp|handoff|-n 100000 -b 16|"
    # libgomp and libomp run each child on the waiting task's stack: 10000 levels fit in 8 MiB
    "omp|taskwait_deep|-d 10000|"
  )
fi

# --- build ----------------------------------------------------------------------------------------
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
  log "suspend.sh: configuring $BUILD_DIR"
  cmake -S "$root" -B "$BUILD_DIR" "${new_tree[@]}" -DWEFT_BUILD_BENCH=ON >"$build_log" 2>&1 ||
    { cat "$build_log" >&2; die "cmake configure failed"; }
fi
notes=()
build() { # target -> 0 when built
  cmake --build "$BUILD_DIR" --target "$1" >"$build_log" 2>&1 && return 0
  tail -n 20 "$build_log" >&2
  return 1
}
find_exe() { find "$BUILD_DIR" -name "$1" -type f -perm -u+x -print -quit 2>/dev/null; }
native=
omp=
kmpc=
if has_word "$RUNTIMES" weft; then
  if build micro_suspend; then native=$(find_exe micro_suspend); else notes+=("micro_suspend could not be built: no weft rows"); fi
fi
if has_word "$RUNTIMES" gomp || has_word "$RUNTIMES" llvm-omp || has_word "$RUNTIMES" weft-omp; then
  if build suspend_omp; then omp=$(find_exe suspend_omp); else notes+=("suspend_omp could not be built (needs gcc with OpenMP)"); fi
fi
if has_word "$RUNTIMES" llvm-omp-kmpc; then
  if build suspend_omp_clang; then
    kmpc=$(find_exe suspend_omp_kmpc)
  else
    notes+=("suspend_omp_kmpc (clang -fopenmp) could not be built: no llvm-omp-kmpc rows")
  fi
fi

# LLVM libomp, preloaded under the gcc-built binary.
bench_find_libomp
has_word "$RUNTIMES" llvm-omp && [ -z "$libomp" ] && notes+=("llvm-omp: LLVM libomp (libomp.so.5) not found")

# weft's OpenMP door: libweft.so from the build, when it exports the GOMP task ABI.
libweft=
if has_word "$RUNTIMES" weft-omp; then
  if build weft; then
    libweft=$(find "$BUILD_DIR" -name 'libweft.so' \( -type f -o -type l \) -print -quit 2>/dev/null)
    # grep without -q: an early exit would fail nm with SIGPIPE, and pipefail with it
    if [ -n "$libweft" ] && ! nm -D --defined-only "$libweft" 2>/dev/null | grep ' GOMP_taskyield' >/dev/null; then
      notes+=("weft-omp: $libweft does not export GOMP_taskyield")
      libweft=
    fi
  fi
  [ -n "$libweft" ] || [ "${notes[*]}" != "${notes[*]%weft-omp:*}" ] || notes+=("weft-omp: libweft.so could not be built")
fi

# Prints "env assignments|executable" for runtime r at t threads on program p, or nothing.
runtime_setup() {
  local r=$1 t=$2 p=$3
  case "$p|$r" in
    native\|weft) [ -n "$native" ] && echo "WEFT_NUM_THREADS=$t|$native" ;;
    omp\|gomp) [ -n "$omp" ] && echo "OMP_NUM_THREADS=$t|$omp" ;;
    omp\|llvm-omp) [ -n "$omp" ] && [ -n "$libomp" ] && echo "OMP_NUM_THREADS=$t LD_PRELOAD=$libomp|$omp" ;;
    omp\|weft-omp) [ -n "$omp" ] && [ -n "$libweft" ] &&
      echo "OMP_NUM_THREADS=$t WEFT_NUM_THREADS=$t LD_PRELOAD=$libweft|$omp" ;;
    omp\|llvm-omp-kmpc) [ -n "$kmpc" ] && echo "OMP_NUM_THREADS=$t|$kmpc" ;;
  esac
  return 0
}

# --- run ------------------------------------------------------------------------------------------
stamp=${STAMP:-$(date +%Y%m%d-%H%M%S)}
name=suspend-$stamp
((quick)) && name=suspend-quick-$stamp
csv=$RESULTS_DIR/$name.csv
md=$RESULTS_DIR/$name.md
echo "runtime,pattern,case,threads,rep,status,seconds,param,ns_per_op,unit,line" >"$csv"
field() { grep -o "\(^\| \)$1=[^ ]*" <<<"$2" | head -n 1 | sed 's/^ *[^=]*=//'; }
row() { # runtime pattern case threads rep status seconds param ns unit line
  printf '%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s\n' "$1" "$2" "$(csv_field "$3")" "$4" "$5" "$6" "$7" "$8" "$9" \
    "${10}" "$(csv_field "${11}")" >>"$csv"
}
weft_bad=0
runs=0
start=$(date +%s)
load_start=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null)
declare -A done_row # runtime|pattern|case|threads -> why its remaining reps are not run
first_t=${THREADS%% *}

# Interleaved: each rep runs every case on every runtime before the next rep, so a slow spell of a
# shared machine falls on every runtime alike.
for t in $THREADS; do
  for ((rep = 1; rep <= REPS; ++rep)); do
    for c in "${cases[@]}"; do
      IFS='|' read -r program pattern args flags <<<"$c"
      has_word "$PATTERNS" "$pattern" || continue
      [ "$flags" = once ] && [ "$t" != "$first_t" ] && continue
      for r in $RUNTIMES; do
        if [ "$program" = native ]; then [ "$r" = weft ] || continue; else [ "$r" = weft ] && continue; fi
        key="$r|$pattern|$args|$t"
        [ -n "${done_row[$key]:-}" ] && continue
        setup=$(runtime_setup "$r" "$t" "$program")
        if [ -z "$setup" ]; then
          row "$r" "$pattern" "$args" "$t" "$rep" unavailable 0 - "" "" "not built or not found (see notes)"
          done_row[$key]=unavailable
          continue
        fi
        assignments=${setup%%|*}
        exe=${setup#*|}
        t0=$(date +%s.%N)
        # shellcheck disable=SC2086 # assignments and args are word lists by construction
        env $assignments timeout -k 5 "$TIMEOUT" "$exe" "$pattern" $args >"$out" 2>"$err"
        rc=$?
        t1=$(date +%s.%N)
        seconds=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')
        runs=$((runs + 1))
        lines=$(grep '^pattern=' "$out")
        if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
          status=timeout
        elif [ "$rc" -eq 3 ] && grep -q 'status=unsupported' <<<"$lines"; then
          status=unsupported
        elif [ "$rc" -eq 3 ] && grep -q 'libs=mixed' <<<"$lines"; then
          status=mixed
        elif [ "$rc" -eq 0 ] && [ -n "$lines" ]; then
          status=ok
        else
          status=failed
        fi
        if [ "$status" = ok ]; then
          got=$(field runtime "$(head -n 1 <<<"$lines")")
          team=$(field threads "$(head -n 1 <<<"$lines")")
          if [ "$got" != "$r" ]; then status=wrong-runtime; elif [ "$team" != "$t" ]; then status=wrong-threads; fi
        fi
        if [ "$status" = ok ] || [ "$status" = mixed ] || [ "$status" = wrong-threads ]; then
          while IFS= read -r line; do
            row "$r" "$pattern" "$args" "$t" "$rep" "$status" "$seconds" "$(field param "$line")" \
              "$(field ns_per_op "$line")" "$(field unit "$line")" "$line"
          done <<<"$lines"
        else
          detail="rc=$rc $(grep -v '^# ' "$err" | tail -n 3 | tr '\n' ' ')$(head -n 1 <<<"$lines")"
          row "$r" "$pattern" "$args" "$t" "$rep" "$status" "$seconds" - "" "" "$detail"
        fi
        [ "$status" != ok ] && { [ "$r" = weft ] || [ "$r" = weft-omp ]; } && weft_bad=1
        brief=$(grep -o 'param=[^ ]* ns_per_op=[^ ]*' <<<"$lines" | sed 's/param=//; s/ ns_per_op=/=/' | tr '\n' ' ')
        log "[$(($(date +%s) - start))s] $pattern $args t=$t $r #$rep: $status ${seconds}s $brief"
        # a timeout would repeat; unsupported and a wrong runtime need no repetition
        case "$status" in timeout | unsupported | wrong-runtime) done_row[$key]=$status ;; esac
      done
    done
  done
done
((runs > 0)) || die "no run was possible (nothing built?)"

# --- summary --------------------------------------------------------------------------------------
meta=(
  "date: $(date -Iseconds)"
  "machine: $(uname -srm), $(nproc) cores, $(LC_ALL=C lscpu 2>/dev/null | sed -n 's/^Model name: *//p' | head -n 1)"
  "compiler: $(gcc --version 2>/dev/null | head -n 1)"
  "weft: $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo 'no commit')$(git -C "$root" diff --quiet HEAD 2>/dev/null || echo ' (working tree modified)')"
  "libomp: ${libomp:-none}; libweft: ${libweft:-none}"
  "runs: REPS=$REPS processes, TIMEOUT=${TIMEOUT}s, THREADS=$THREADS$( ((quick)) && echo ', --quick (small sizes: not a measurement)')"
  "load average at start / end: $load_start / $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null)"
  "raw runs: $(basename "$csv")"
)
trip=$(bench_line_trip)
[ -n "$trip" ] && meta+=("$trip (at the end of the run)")
summary_args=()
for m in "${meta[@]}"; do summary_args+=(--meta "$m"); done
for n in "${notes[@]}"; do summary_args+=(--note "$n"); done
python3 "$here/micro/suspend_summarize.py" "$csv" --md "$md" --title "weft task suspension ($stamp)" \
  "${summary_args[@]}" || die "suspend_summarize.py failed"
log "suspend.sh: wrote $csv and $md ($runs runs) in $(($(date +%s) - start))s"
((STRICT && weft_bad)) && exit 1
exit 0
