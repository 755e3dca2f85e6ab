#!/usr/bin/env bash
# Usage: bench/run.sh [--quick] [-h | --help]
#
# Runs every micro-benchmark pattern on every runtime, 1 and 2 workers, side by side.
#
#   bench/run.sh            full sizes, REPS runs of each (default 5)
#   bench/run.sh --quick    tiny sizes, 1 run of each: proves the harness works (CI)
#
# Environment:
#   BUILD_DIR    build tree to configure/build the micro_* targets in   [<repo>/build-rel]
#   RESULTS_DIR  where micro-<date>.csv and micro-<date>.md are written [<repo>/bench/results]
#   REPS         runs per row                                          [5, --quick: 1]
#   TIMEOUT      seconds one run may take before it is reported timeout [60, --quick: 20]
#   THREADS      worker counts                                         ["1 2"]
#   VARIANTS     subset of: weft gomp llvm-omp weft-omp tbb starpu      [all]
#   PATTERNS     subset of: indep chain stencil inoutset metg pending epcc [all]
#                (epcc: OpenMP construct overheads, bench/omp/run.sh, on gomp llvm-omp weft-omp)
#   EPCC_TIMEOUT seconds one epcc process may take                      [omp/run.sh's: 30, --quick: 10]
#   LIBOMP       path of LLVM's libomp.so.5                             [found with dpkg/ldconfig]
#   VERIFY=1     task bodies check the dependence order (slower; a wrong order fails the run)
# A run that exceeds TIMEOUT is reported "timeout" and the row's remaining runs are skipped; one that
# crashes or exits non-zero is "failed". Exit status: 0, or 1 when a native weft run failed or timed
# out (a peer that does so is a result, weft is expected to finish), 2 when the harness could not run.
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(dirname "$here")
quick=0
for arg in "$@"; do
  case "$arg" in
    --quick) quick=1 ;;
    -h | --help) awk 'NR > 1 && !/^#/ { exit } NR > 1' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "run.sh: unknown argument '$arg' (try --help)" >&2; exit 2 ;;
  esac
done

BUILD_DIR=${BUILD_DIR:-$root/build-rel}
RESULTS_DIR=${RESULTS_DIR:-$here/results}
if ((quick)); then REPS=${REPS:-1}; TIMEOUT=${TIMEOUT:-20}; else REPS=${REPS:-5}; TIMEOUT=${TIMEOUT:-60}; fi
THREADS=${THREADS:-1 2}
VARIANTS=${VARIANTS:-weft gomp llvm-omp weft-omp tbb starpu}
PATTERNS=${PATTERNS:-indep chain stencil inoutset metg pending epcc}
VERIFY=${VERIFY:-0}

# shellcheck source=lib.sh
. "$here/lib.sh"  # die, has_word, log, csv_field, bench_find_libomp

# --- cases: pattern | arguments ({T} = workers, {4T} = 4 x workers) | variants | extra env | ladder --
# variants: '*' every variant, a list ('weft tbb') only those, '-starpu' every variant but those.
# ladder: 'ladder' marks growing sizes of one pattern: once a variant times out on one, the larger
# ones are reported as timeouts without being run (a minute each saved).
if ((quick)); then
  cases=(
    "indep|-n 20000|*|"
    "chain|-n 20000|*|"
    "stencil|-n 2000 -w 8|*|"
    "inoutset|-r 200 -m 4 -k 4|*|"
    "metg|-w {T} -t 50 --max-ns 25600 --min-ns 800|*|"
    "metg|-w {4T} -t 50 --max-ns 25600 --min-ns 800|*|"
    "pending|-n 10000 --gate-ms 500|*|WEFT_MAX_TASKS=100000000"
    "pending|-n 10000 --gate-ms 500|weft|"
  )
else
  cases=(
    "indep|-n 1000000|*|"
    "chain|-n 1000000|*|"
    # libgomp's stencil time grows with the square of the pending tasks: 10k is the size it finishes
    "stencil|-n 10000 -w 8|*||ladder"
    "stencil|-n 100000 -w 8|*||ladder"
    "stencil|-n 1000000 -w 8|*||ladder"
    "inoutset|-r 20000 -m 8 -k 8|*|"
    "metg|-w {T} -t 1000|*|"
    "metg|-w {4T} -t 1000|*|"
    # unthrottled weft (the bytes of a pending task), then weft's default bound (memory stays flat)
    "pending|-n 1000000|-starpu|WEFT_MAX_TASKS=100000000"
    "pending|-n 1000000|weft|"
    # StarPU spends ~4 KB per registered cell besides the task: fewer cells
    "pending|-n 100000|starpu|"
  )
fi

# --- build ------------------------------------------------------------------------------------------
mkdir -p "$RESULTS_DIR" || die "cannot create $RESULTS_DIR"
bench_build micro_weft micro_omp micro_tbb micro_starpu

# LLVM libomp, preloaded under the gcc-built binary.
bench_find_libomp
[ -n "$libomp" ] || notes+=("LLVM libomp (libomp.so.5) not found: llvm-omp rows are missing")

# weft's OpenMP door: only when libweft.so carries the GOMP ABI.
libweft=$(find "$BUILD_DIR" -name 'libweft.so' \( -type f -o -type l \) -print -quit 2>/dev/null)
weft_door=0
if [ -n "$libweft" ] && nm -D --defined-only "$libweft" 2>/dev/null | grep ' GOMP_task' >/dev/null; then
  weft_door=1
elif has_word "$VARIANTS" weft-omp; then
  notes+=("weft-omp skipped: ${libweft:-libweft.so} does not export GOMP_task")
  log "run.sh: weft-omp skipped: libweft.so does not export GOMP_task"
fi

# Prints the command line of a variant at t workers, or nothing when it cannot run here.
variant_command() {
  local v=$1 t=$2
  case "$v" in
    weft) [ -n "${binary[micro_weft]:-}" ] && echo "env WEFT_NUM_THREADS=$t ${binary[micro_weft]}" ;;
    gomp) [ -n "${binary[micro_omp]:-}" ] && echo "env OMP_NUM_THREADS=$t ${binary[micro_omp]}" ;;
    llvm-omp) [ -n "${binary[micro_omp]:-}" ] && [ -n "$libomp" ] &&
      echo "env OMP_NUM_THREADS=$t LD_PRELOAD=$libomp ${binary[micro_omp]}" ;;
    weft-omp) [ -n "${binary[micro_omp]:-}" ] && ((weft_door)) &&
      echo "env OMP_NUM_THREADS=$t WEFT_NUM_THREADS=$t LD_PRELOAD=$libweft ${binary[micro_omp]}" ;;
    tbb) [ -n "${binary[micro_tbb]:-}" ] && echo "${binary[micro_tbb]}" ;;
    starpu) [ -n "${binary[micro_starpu]:-}" ] && echo "env STARPU_NCPU=$t STARPU_SILENT=1 ${binary[micro_starpu]}" ;;
  esac
  return 0
}

selected() { # does the case's variant list take v?
  local list=$1 v=$2
  [ "$list" = "*" ] && return 0
  if [[ "$list" == -* ]]; then ! has_word "${list//-/ }" "$v"; return; fi
  has_word "$list" "$v"
}

# --- run --------------------------------------------------------------------------------------------
stamp=$(date +%Y%m%d-%H%M%S)
name=micro-$stamp
((quick)) && name=micro-quick-$stamp
csv=$RESULTS_DIR/$name.csv
md=$RESULTS_DIR/$name.md
echo "variant,pattern,case,threads,rep,status,seconds,result" >"$csv"
out=$(mktemp)
err=$(mktemp)
trap 'rm -f "$out" "$err"' EXIT
verify_args=()
((VERIFY)) && verify_args=(--verify)
weft_failed=0
runs=0
declare -A ladder_timeout
start=$(date +%s)


for c in "${cases[@]}"; do
  IFS='|' read -r pattern args variants extra_env ladder <<<"$c"
  has_word "$PATTERNS" "$pattern" || continue
  for t in $THREADS; do
    case_args=${args//\{4T\}/$((4 * t))}
    case_args=${case_args//\{T\}/$t}
    label="$case_args${extra_env:+ $extra_env}"
    for v in $VARIANTS; do
      selected "$variants" "$v" || continue
      cmd=$(variant_command "$v" "$t")
      [ -n "$cmd" ] || continue
      rung="$pattern|$v|$t"
      if [ -n "$ladder" ] && [ -n "${ladder_timeout[$rung]:-}" ]; then
        printf '%s,%s,%s,%s,1,timeout,0,%s\n' "$v" "$pattern" "$(csv_field "$label")" "$t" \
          "$(csv_field "not run: timed out at ${ladder_timeout[$rung]}")" >>"$csv"
        log "$pattern $label t=$t $v: timeout (not run: timed out at ${ladder_timeout[$rung]})"
        continue
      fi
      for ((rep = 1; rep <= REPS; ++rep)); do
        t0=$(date +%s.%N)
        # shellcheck disable=SC2086 # cmd and case_args are word lists by construction
        env $extra_env timeout -k 5 "$TIMEOUT" $cmd "$pattern" $case_args -p "$t" "${verify_args[@]}" \
          >"$out" 2>"$err"
        rc=$?
        t1=$(date +%s.%N)
        seconds=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')
        result=$(grep '^pattern=' "$out" | tail -n 1)
        if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
          status=timeout # a result line printed before a hang at exit is kept in the CSV, not counted
          [ "$v" = weft ] && weft_failed=1
        elif [ "$rc" -eq 3 ] && [[ "$result" == *status=unsupported* ]]; then
          status=unsupported
        elif [ "$rc" -eq 0 ] && [ -n "$result" ]; then
          status=ok
        else
          status=failed
          result="rc=$rc $(tail -n 3 "$err" | tr '\n' ' ') $result"
          [ "$v" = weft ] && weft_failed=1
        fi
        runs=$((runs + 1))
        printf '%s,%s,%s,%s,%s,%s,%s,%s\n' "$v" "$pattern" "$(csv_field "$label")" "$t" "$rep" \
          "$status" "$seconds" "$(csv_field "$result")" >>"$csv"
        brief=$(grep -o 'ns_per_task=[^ ]*\|metg_ns=[^ ]*\|bytes_per_task=[^ ]*\|verified=[^ ]*' <<<"$result" | tr '\n' ' ')
        log "[$(($(date +%s) - start))s] $pattern $label t=$t $v #$rep: $status ${seconds}s $brief"
        [ "$status" = timeout ] && [ -n "$ladder" ] && ladder_timeout[$rung]=$case_args
        # a timeout would repeat: the row is reported once; unsupported needs no repetition
        [ "$status" = timeout ] || [ "$status" = unsupported ] && break
      done
    done
  done
done

# --- OpenMP construct overheads: bench/omp/run.sh, same build, stamp, reps and threads -------------
epcc_ran=0
if has_word "$PATTERNS" epcc; then
  epcc_runtimes=()
  has_word "$VARIANTS" gomp && epcc_runtimes+=(gomp)
  has_word "$VARIANTS" llvm-omp && epcc_runtimes+=(llvm-omp)
  has_word "$VARIANTS" weft-omp && epcc_runtimes+=(weft)
  if ((${#epcc_runtimes[@]})); then
    log "run.sh: OpenMP construct overheads (bench/omp/run.sh)"
    epcc_args=()
    ((quick)) && epcc_args=(--quick)
    env BUILD_DIR="$BUILD_DIR" RESULTS_DIR="$RESULTS_DIR" REPS="$REPS" THREADS="$THREADS" \
      RUNTIMES="${epcc_runtimes[*]}" LIBOMP="$libomp" STAMP="$stamp" TIMEOUT="${EPCC_TIMEOUT:-}" \
      bash "$here/omp/run.sh" "${epcc_args[@]}"
    epcc_rc=$?
    epcc_name=epcc-$stamp
    ((quick)) && epcc_name=epcc-quick-$stamp
    if ((epcc_rc == 0)); then
      epcc_ran=1
      notes+=("OpenMP construct overheads (EPCC method): $epcc_name.md")
    else
      notes+=("OpenMP construct overheads (bench/omp/run.sh) did not run (exit status $epcc_rc)")
    fi
  fi
fi

((runs > 0 || epcc_ran)) || die "no run was possible (nothing built?)"
if ((runs == 0)); then # epcc only: its table is printed and written already
  rm -f "$csv"
  exit 0
fi

# --- summary ----------------------------------------------------------------------------------------
meta=(
  "date: $(date -Iseconds)"
  "machine: $(uname -srm), $(nproc) cores, $(LC_ALL=C lscpu 2>/dev/null | sed -n 's/^Model name: *//p' | head -n 1)"
  "compiler: $(gcc --version 2>/dev/null | head -n 1)"
  "weft: $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo 'no commit')$(git -C "$root" diff --quiet HEAD 2>/dev/null || echo ' (working tree modified)')"
  "libomp: ${libomp:-none}; oneTBB $(pkg-config --modversion tbb 2>/dev/null || echo '?'); StarPU $(pkg-config --modversion starpu-1.3 2>/dev/null || echo '?')"
  "runs: REPS=$REPS, TIMEOUT=${TIMEOUT}s, THREADS=$THREADS$(((quick)) && echo ', --quick (tiny sizes: not a measurement)')$(((VERIFY)) && echo ', VERIFY=1')"
  "raw runs: $(basename "$csv")"
)
trip=$(bench_line_trip)
[ -n "$trip" ] && meta+=("$trip (at the end of the run)")
summary_args=()
for m in "${meta[@]}"; do summary_args+=(--meta "$m"); done
for n in "${notes[@]}"; do summary_args+=(--note "$n"); done
python3 "$here/micro/summarize.py" "$csv" --md "$md" --title "weft micro-benchmarks ($stamp)" \
  "${summary_args[@]}" || die "summarize.py failed"
log "run.sh: wrote $csv and $md in $(($(date +%s) - start))s"
exit $((weft_failed ? 1 : 0))
