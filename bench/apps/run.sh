#!/usr/bin/env bash
# Runs the application benchmarks (bench/apps) on every runtime, sweeping the grain (tile size or
# tasks per loop), 1 and 2 threads, side by side; writes a CSV, a Markdown report and plots.
#
#   bench/apps/run.sh           full sizes, REPS processes per row (default 5)
#   bench/apps/run.sh --quick   tiny sizes, 1 process per row: proves the harness and the checks (CI)
#   bench/apps/run.sh --demo    the README demo: Cholesky and Gauss-Seidel heat at about a minute of
#                               work on 2 threads, one grain each, REPS=1
#
# Environment:
#   BUILD_DIR    build tree (configured and built if needed)                 [<repo>/build]
#   RESULTS_DIR  where apps-<date>.csv / .md / -<app>.png are written       [<repo>/bench/results]
#   REPS         processes per row                                           [5; --quick, --demo: 1]
#   TIMEOUT      seconds one process may take, then reported timeout         [600; --quick: 120]
#   THREADS      thread counts                                               ["1 2"; --demo: 2]
#   APPS         subset of: cholesky cholesky-8k heat-gs heat-jacobi cg matvec jacobi
#                                                                            [all; --demo: cholesky heat-gs]
#   RUNTIMES     subset of: gomp llvm-omp weft native                        [all]
#                (native: the weft and StarPU programs, and OpenBLAS's own threaded dpotrf)
#   LIBOMP       path of LLVM's libomp.so.5                                  [found with dpkg/ldconfig]
#   STAMP        date stamp of the output files                              [now]
# Every program checks its own result (residual, or equality with a serial run): a wrong result is
# status "wrong". Exit status: 0; 1 when a weft run failed, timed out or was wrong (a peer that does
# so is a result); 2 when the harness could not run.
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
bench=$(dirname "$here")
root=$(dirname "$bench")
mode=full
for arg in "$@"; do
  case "$arg" in
    --quick) mode=quick ;;
    --demo) mode=demo ;;
    -h | --help) sed -n '2,24p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "apps/run.sh: unknown argument '$arg' (try --help)" >&2; exit 2 ;;
  esac
done

BUILD_DIR=${BUILD_DIR:-$root/build}
# shellcheck source=../lib.sh
. "$bench/lib.sh"
RESULTS_DIR=${RESULTS_DIR:-$bench/results}
case $mode in
  quick) REPS=${REPS:-1}; TIMEOUT=${TIMEOUT:-120}; THREADS=${THREADS:-1 2} ;;
  demo) REPS=${REPS:-1}; TIMEOUT=${TIMEOUT:-600}; THREADS=${THREADS:-2} ;;
  full) REPS=${REPS:-5}; TIMEOUT=${TIMEOUT:-600}; THREADS=${THREADS:-1 2} ;;
esac
if [ "$mode" = demo ]; then APPS=${APPS:-cholesky heat-gs}; else APPS=${APPS:-cholesky cholesky-8k heat-gs heat-jacobi cg matvec jacobi}; fi
RUNTIMES=${RUNTIMES:-gomp llvm-omp weft native}

# --- cases: app | program | variants | runtimes | arguments | grain option | grains | threads -------
# (threads, when given, replaces THREADS for that case)
# runtimes: gomp llvm-omp weft run the same gcc -fopenmp binary (weft preloaded); native runs the
# program as it is. Each process may print several RESULT lines (repetitions inside it): the last one
# is its sample (steady state; a persistent graph has recorded by then).
omp3="gomp llvm-omp weft"
case $mode in
  quick)
    cases=(
      "cholesky|cholesky_omp|omp-tasks|$omp3|-n 512 -r 2|-b|128"
      "cholesky|cholesky_omp|omp-persistent|weft|-n 512 -r 2|-b|128"
      "cholesky|cholesky_omp|openblas|native|-n 512 -r 2||"
      "cholesky|cholesky_weft|weft weft-persistent|native|-n 512 -r 2|-b|128"
      "cholesky|cholesky_starpu|starpu|native|-n 512 -r 2|-b|128"
      "heat-gs|heat_omp|parallel-for omp-tasks|$omp3|--method gauss-seidel -n 512 -s 4|-b|64"
      "heat-gs|heat_omp|omp-persistent omp-persistent-barrier|weft|--method gauss-seidel -n 512 -s 4|-b|64"
      "heat-gs|heat_weft|weft weft-persistent weft-persistent-barrier weft-taskiter|native|--method gauss-seidel -n 512 -s 4|-b|64"
      "heat-jacobi|heat_omp|parallel-for omp-tasks|$omp3|--method jacobi -n 512 -s 4|-b|64"
      "heat-jacobi|heat_omp|omp-persistent|weft|--method jacobi -n 512 -s 4|-b|64"
      "heat-jacobi|heat_weft|weft weft-persistent weft-taskiter|native|--method jacobi -n 512 -s 4|-b|64"
      "cg|cg_omp|parallel-for omp-tasks|$omp3|-n 24 -i 10|-t|8"
      "cg|cg_omp|omp-persistent|weft|-n 24 -i 10|-t|8"
      "cg|cg_weft|weft weft-persistent|native|-n 24 -i 10|-t|8"
      "matvec|matvec_omp|parallel-for omp-tasks|$omp3|--kernel matvec -n 512 -s 4|-t|8"
      "matvec|matvec_omp|omp-persistent|weft|--kernel matvec -n 512 -s 4|-t|8"
      "matvec|matvec_weft|weft weft-persistent weft-taskiter|native|--kernel matvec -n 512 -s 4|-t|8"
      "jacobi|matvec_omp|parallel-for omp-tasks|$omp3|--kernel jacobi -n 512 -s 4|-t|8"
      "jacobi|matvec_omp|omp-persistent|weft|--kernel jacobi -n 512 -s 4|-t|8"
      "jacobi|matvec_weft|weft weft-persistent weft-taskiter|native|--kernel jacobi -n 512 -s 4|-t|8"
    )
    ;;
  demo)
    # The issue's Cholesky size (n = 8192) once per runtime, and the heat sweep at its best grain.
    cases=(
      "cholesky|cholesky_omp|openblas|native|-n 8192||"
      "cholesky|cholesky_omp|omp-tasks|$omp3|-n 8192|-b|256"
      "cholesky|cholesky_weft|weft|native|-n 8192|-b|256"
      "cholesky|cholesky_starpu|starpu|native|-n 8192|-b|256"
      "heat-gs|heat_omp|parallel-for omp-tasks|$omp3|--method gauss-seidel -n 4096 -s 20|-b|128"
      "heat-gs|heat_omp|omp-persistent|weft|--method gauss-seidel -n 4096 -s 20|-b|128"
      "heat-gs|heat_weft|weft weft-persistent|native|--method gauss-seidel -n 4096 -s 20|-b|128"
    )
    ;;
  full)
    # Timing runs skip the self-check (it runs threaded BLAS or a serial sweep in the same process);
    # --quick and --demo keep it. cholesky-8k: the size of the issue's target, 2 threads only.
    nc=--no-check
    cases=(
      "cholesky|cholesky_omp|openblas|native|-n 4096 -r 3 $nc||"
      "cholesky|cholesky_omp|omp-tasks|$omp3|-n 4096 -r 3 $nc|-b|128 256 512"
      "cholesky|cholesky_omp|omp-persistent|weft|-n 4096 -r 3 $nc|-b|128 256 512"
      "cholesky|cholesky_weft|weft weft-persistent|native|-n 4096 -r 3 $nc|-b|128 256 512"
      "cholesky|cholesky_starpu|starpu|native|-n 4096 -r 3 $nc|-b|128 256 512"
      "cholesky-8k|cholesky_omp|openblas|native|-n 8192 -r 2 $nc|||2"
      "cholesky-8k|cholesky_omp|omp-tasks|$omp3|-n 8192 -r 2 $nc|-b|256 512|2"
      "cholesky-8k|cholesky_weft|weft|native|-n 8192 -r 2 $nc|-b|256 512|2"
      "cholesky-8k|cholesky_starpu|starpu|native|-n 8192 -r 2 $nc|-b|256 512|2"
      "heat-gs|heat_omp|parallel-for omp-tasks|$omp3|--method gauss-seidel -n 4096 -s 20 $nc|-b|128 256 512"
      "heat-gs|heat_omp|omp-persistent|weft|--method gauss-seidel -n 4096 -s 20 $nc|-b|128 256 512"
      "heat-gs|heat_weft|weft weft-persistent weft-persistent-barrier weft-taskiter|native|--method gauss-seidel -n 4096 -s 20 $nc|-b|128 256 512"
      "heat-jacobi|heat_omp|parallel-for omp-tasks|$omp3|--method jacobi -n 4096 -s 20 $nc|-b|128 256 512"
      "heat-jacobi|heat_weft|weft weft-persistent weft-taskiter|native|--method jacobi -n 4096 -s 20 $nc|-b|128 256 512"
      "cg|cg_omp|parallel-for omp-tasks|$omp3|-n 96 -i 50 $nc|-t|8 32 128 512"
      "cg|cg_omp|omp-persistent|weft|-n 96 -i 50 $nc|-t|8 32 128 512"
      "cg|cg_weft|weft weft-persistent|native|-n 96 -i 50 $nc|-t|8 32 128 512"
      "matvec|matvec_omp|parallel-for omp-tasks|$omp3|--kernel matvec -n 4096 -s 50 $nc|-t|8 32 128"
      "matvec|matvec_weft|weft weft-persistent weft-taskiter|native|--kernel matvec -n 4096 -s 50 $nc|-t|8 32 128"
      "jacobi|matvec_omp|parallel-for omp-tasks|$omp3|--kernel jacobi -n 4096 -s 50 $nc|-t|8 32 128"
      "jacobi|matvec_weft|weft weft-persistent weft-taskiter|native|--kernel jacobi -n 4096 -s 50 $nc|-t|8 32 128"
    )
    ;;
esac

# --- build ------------------------------------------------------------------------------------------
mkdir -p "$RESULTS_DIR" || die "cannot create $RESULTS_DIR"
programs=()
for c in "${cases[@]}"; do
  IFS='|' read -r app program _ <<<"$c"
  has_word "$APPS" "$app" && ! has_word "${programs[*]:-}" "$program" && programs+=("$program")
done
((${#programs[@]})) || die "APPS selects nothing (known: cholesky cholesky-8k heat-gs heat-jacobi cg matvec jacobi)"
bench_build weft "${programs[@]}"
bench_find_libomp
[ -n "$libomp" ] || notes+=("LLVM libomp (libomp.so.5) not found: its rows are missing")
bench_find_libweft

# Prints the command prefix of a runtime at t threads, or nothing when it cannot run here.
runtime_prefix() {
  local rt=$1 t=$2
  case $rt in
    gomp) echo "env OMP_NUM_THREADS=$t" ;;
    llvm-omp) [ -n "$libomp" ] && echo "env OMP_NUM_THREADS=$t LD_PRELOAD=$libomp" ;;
    weft) ((weft_door)) && echo "env OMP_NUM_THREADS=$t WEFT_NUM_THREADS=$t LD_PRELOAD=$libweft" ;;
    native) echo "env WEFT_NUM_THREADS=$t STARPU_NCPU=$t STARPU_SILENT=1" ;;
  esac
  return 0
}

# --- run --------------------------------------------------------------------------------------------
stamp=${STAMP:-$(date +%Y%m%d-%H%M%S)}
name=apps-$stamp
[ "$mode" = full ] || name=apps-$mode-$stamp
csv=$RESULTS_DIR/$name.csv
md=$RESULTS_DIR/$name.md
echo "app,program,variant,runtime,threads,grain,rep,line,status,seconds,iters,gflops,tasks,edges,check,error,command" >"$csv"
out=$(mktemp)
err=$(mktemp)
trap 'rm -f "$out" "$err"' EXIT
weft_failed=0
runs=0
start=$(date +%s)
field() { sed -n "s/.* $1=\([^ ]*\).*/\1/p" <<<" $2"; }

for c in "${cases[@]}"; do
  IFS='|' read -r app program variants runtimes args grain_option grains case_threads <<<"$c"
  has_word "$APPS" "$app" || continue
  exe=${binary[$program]:-}
  [ -n "$exe" ] || continue
  [ -n "$grains" ] || grains=-
  for t in ${case_threads:-$THREADS}; do
    for g in $grains; do
      grain_args=()
      [ "$g" != - ] && grain_args=("$grain_option" "$g")
      for v in $variants; do
        for rt in $runtimes; do
          has_word "$RUNTIMES" "$rt" || continue
          prefix=$(runtime_prefix "$rt" "$t")
          [ -n "$prefix" ] || continue
          weft_run=0
          [[ "$rt" == weft || "$v" == weft* ]] && weft_run=1
          for ((rep = 1; rep <= REPS; ++rep)); do
            # shellcheck disable=SC2086 # prefix and args are word lists by construction
            command="$prefix $exe --variant $v $args ${grain_args[*]} -p $t"
            timeout -k 5 "$TIMEOUT" $command >"$out" 2>"$err"
            rc=$?
            runs=$((runs + 1))
            mapfile -t lines < <(grep '^RESULT ' "$out")
            if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then status=timeout
            elif [ "$rc" -eq 0 ] && ((${#lines[@]})); then status=ok
            elif [ "$rc" -eq 1 ] && grep -q 'check=FAIL' "$out"; then status=wrong
            else status=failed; fi
            if [ "$status" != ok ] && ((weft_run)); then weft_failed=1; fi
            if [ "$status" != ok ] && [ "$status" != wrong ]; then
              log "   $(tail -n 3 "$err" | tr '\n' ' ')"
              printf '%s,%s,%s,%s,%s,%s,%s,0,%s,,,,,,,,%s\n' "$app" "$program" "$v" "$rt" "$t" "$g" "$rep" "$status" \
                "$(csv_field "$command")" >>"$csv"
            fi
            k=0
            for line in "${lines[@]}"; do
              k=$((k + 1))
              s=$status
              [ "$(field check "$line")" = FAIL ] && s=wrong
              printf '%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s\n' "$app" "$program" "$v" "$rt" "$t" "$g" "$rep" "$k" "$s" \
                "$(field seconds "$line")" "$(field iters "$line")" "$(field gflops "$line")" "$(field tasks "$line")" "$(field edges "$line")" \
                "$(field check "$line")" "$(field error "$line")" "$(csv_field "$command")" >>"$csv"
            done
            last=${lines[${#lines[@]}-1]:-}
            log "[$(($(date +%s) - start))s] $app $v $rt t=$t ${grain_option:-}${g/-/} #$rep: $status $(field seconds "$last")s gflops=$(field gflops "$last") $(field check "$last")"
            [ "$status" = timeout ] && break
          done
        done
      done
    done
  done
done
((runs > 0)) || die "no run was possible (nothing built?)"

# --- report -----------------------------------------------------------------------------------------
summary_args=()
while IFS= read -r m; do summary_args+=(--meta "$m"); done < <(bench_meta)
summary_args+=(--meta "libomp: ${libomp:-none}; StarPU $(pkg-config --modversion starpu-1.3 2>/dev/null || echo '?'); OpenBLAS $(dpkg-query -W -f='${Version}' libopenblas0-pthread 2>/dev/null || echo '?')")
summary_args+=(--meta "runs: mode=$mode, REPS=$REPS, TIMEOUT=${TIMEOUT}s, THREADS=$THREADS$([ "$mode" = quick ] && echo ' (tiny sizes: not a measurement)')")
summary_args+=(--meta "raw runs: $(basename "$csv")")
for n in "${notes[@]}"; do summary_args+=(--note "$n"); done
plots=(--plots "$RESULTS_DIR/$name")
[ "$mode" = full ] || plots=()
"$(bench_python)" "$here/summarize.py" "$csv" --md "$md" --title "weft application benchmarks ($stamp)" \
  "${plots[@]}" "${summary_args[@]}" || die "summarize.py failed"
log "apps/run.sh: wrote $csv and $md in $(($(date +%s) - start))s"
exit $((weft_failed ? 1 : 0))
