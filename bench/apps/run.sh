#!/usr/bin/env bash
# Usage: bench/apps/run.sh [--quick | --demo] [-h | --help]
#
# Runs the application benchmarks (bench/apps) on every runtime, sweeping the grain (tile size or
# tasks per loop), 1 and 2 threads, side by side; then the distributed ones (MPI) over ranks x threads
# per rank; writes a CSV, a Markdown report and plots.
#
#   bench/apps/run.sh           full sizes, REPS processes per row (default 5)
#   bench/apps/run.sh --quick   tiny sizes, 1 process per row: proves the harness and the checks (CI)
#   bench/apps/run.sh --demo    the README demo: Cholesky and Gauss-Seidel heat at about a minute of
#                               work on 2 threads, one grain each, and the distributed Cholesky on
#                               2 ranks x 1 thread; REPS=1
#
# Environment:
#   BUILD_DIR    build tree (configured and built if needed)                 [<repo>/build-rel]
#   RESULTS_DIR  where apps-<date>.csv / .md / -<app>.png are written       [<repo>/bench/results]
#   REPS         processes per row                                           [5; --quick, --demo: 1]
#   TIMEOUT      seconds one process may take, then reported timeout         [600; --quick: 120]
#   THREADS      thread counts (shared-memory applications)                  ["1 2"; --demo: 2]
#   APPS         subset of: cholesky cholesky-8k heat-gs heat-jacobi cg matvec jacobi, and the MPI
#                ones cholesky-mpi heat-mpi-gs heat-mpi-jacobi cg-mpi matvec-mpi matmul-mpi jacobi-mpi
#                (the last three: paper 003's dense benchmarks, fork-join MPI + OpenMP, TAMPI-style
#                weft tasks and the distributed taskiter; bench/apps/dense_mpi.h)
#                                                   [all; --demo: cholesky heat-gs cholesky-mpi]
#   RUNTIMES     subset of: gomp llvm-omp weft native                        [all]
#                (native: the weft and StarPU programs, OpenBLAS's own threaded dpotrf, ScaLAPACK)
#   LIBOMP       path of LLVM's libomp.so.5                                  [found with dpkg/ldconfig]
#   STAMP        date stamp of the output files                              [now]
# MPI part (skipped with a message when the MPI programs were not built or there is no launcher):
#   MPI_CONFIGS        RxT: R ranks of T threads each     [every power-of-2 R x T with R*T <= cores;
#                                                          --quick, --demo: 2x1]
#   MPI_CHECK_CONFIGS  oversubscribed RxT, run once at small sizes with the checks on, for
#                      correctness only (phase=correctness)  [(2*cores)x1 (cores)x2; --quick, --demo: none]
#   MPI_POLICIES       WEFT_MPI_PRIORITY of the native Cholesky --mark-sends rows  [fifo ma1 ma2 sa fa]
#   HANG_TIMEOUT       seconds for the runs that may hang (blocking MPI inside tasks on libgomp or
#                      LLVM libomp, more than one rank): a hang is recorded as timeout, a result
#                                                                            [10; --quick: 5]
#   MPIEXEC            the launcher; Open MPI's gets --oversubscribe --bind-to none  [mpiexec]
# Every program checks its own result (residual, or equality with a serial run): a wrong result is
# status "wrong"; a variant the runtime cannot run (libomp's GOMP_task ignores detach) is
# "unsupported". Exit status: 0; 1 when
# a weft run failed, timed out or was wrong (a peer that does so is a result); 2 when the harness
# could not run.
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
bench=$(dirname "$here")
root=$(dirname "$bench")
mode=full
for arg in "$@"; do
  case "$arg" in
    --quick) mode=quick ;;
    --demo) mode=demo ;;
    -h | --help) awk 'NR > 1 && !/^#/ { exit } NR > 1' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "apps/run.sh: unknown argument '$arg' (try --help)" >&2; exit 2 ;;
  esac
done

BUILD_DIR=${BUILD_DIR:-$root/build-rel}
# shellcheck source=../lib.sh
. "$bench/lib.sh"
RESULTS_DIR=${RESULTS_DIR:-$bench/results}
case $mode in
  quick) REPS=${REPS:-1}; TIMEOUT=${TIMEOUT:-120}; THREADS=${THREADS:-1 2} ;;
  demo) REPS=${REPS:-1}; TIMEOUT=${TIMEOUT:-600}; THREADS=${THREADS:-2} ;;
  full) REPS=${REPS:-5}; TIMEOUT=${TIMEOUT:-600}; THREADS=${THREADS:-1 2} ;;
esac
all_apps="cholesky cholesky-8k heat-gs heat-jacobi cg matvec jacobi cholesky-mpi heat-mpi-gs heat-mpi-jacobi cg-mpi"
all_apps+=" matvec-mpi matmul-mpi jacobi-mpi"
if [ "$mode" = demo ]; then APPS=${APPS:-cholesky heat-gs cholesky-mpi}; else APPS=${APPS:-$all_apps}; fi
RUNTIMES=${RUNTIMES:-gomp llvm-omp weft native}
cores=$(nproc)
# Every R x T (powers of 2) with R * T <= cores.
default_mpi_configs() {
  local r t list=""
  for ((r = 1; r <= cores; r *= 2)); do
    for ((t = 1; r * t <= cores; t *= 2)); do list+="${r}x$t "; done
  done
  echo "${list% }"
}
case $mode in
  full) MPI_CONFIGS=${MPI_CONFIGS:-$(default_mpi_configs)}; MPI_CHECK_CONFIGS=${MPI_CHECK_CONFIGS-$((2 * cores))x1 ${cores}x2}
        HANG_TIMEOUT=${HANG_TIMEOUT:-10} ;;
  *) MPI_CONFIGS=${MPI_CONFIGS:-2x1}; MPI_CHECK_CONFIGS=${MPI_CHECK_CONFIGS-}; HANG_TIMEOUT=${HANG_TIMEOUT:-5} ;;
esac
MPI_POLICIES=${MPI_POLICIES:-fifo ma1 ma2 sa fa}
MPIEXEC=${MPIEXEC:-mpiexec}
for cfg in $MPI_CONFIGS $MPI_CHECK_CONFIGS; do
  [[ "$cfg" =~ ^[1-9][0-9]*x[1-9][0-9]*$ ]] || die "MPI configuration '$cfg' is not RxT (e.g. 2x1)"
done

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

# --- MPI cases: app | program | variants | runtimes | arguments | grain option | grains | policies |
# configurations | phase ----------------------------------------------------------------------------
# Each row runs on R ranks (mpiexec -n R) of T threads (-p T) for every RxT of its configurations.
# policies: a WEFT_MPI_PRIORITY per row (native weft Cholesky with --mark-sends: the variant is
# recorded as <variant>+mark-sends). phase: timing (REPS processes) or correctness (one process, the
# checks on: the oversubscribed configurations). The _omp programs run on libgomp, on LLVM libomp and
# on weft (libweft.so and libweft-mpi.so preloaded), the _weft ones and ScaLAPACK as they are.
mpi_cases=()
case $mode in
  quick)
    mpi_cases=(
      "cholesky-mpi|cholesky_mpi_omp|blocking detach blocking-serial|weft|-n 512|-b|128||$MPI_CONFIGS|timing"
      "cholesky-mpi|cholesky_mpi_omp|blocking|gomp|-n 512|-b|128||$MPI_CONFIGS|timing"
      "cholesky-mpi|cholesky_mpi_weft|blocking iwait|native|-n 512|-b|128||$MPI_CONFIGS|timing"
      "cholesky-mpi|cholesky_mpi_weft|blocking|native|-n 512 --mark-sends|-b|128|$MPI_POLICIES|$MPI_CONFIGS|timing"
      "cholesky-mpi|cholesky_scalapack|scalapack|native|-n 512|-b|128||$MPI_CONFIGS|timing"
      "heat-mpi-gs|heat_mpi_omp|parallel-for tasks|weft|--method gauss-seidel -n 256 -s 4|-b|32||$MPI_CONFIGS|timing"
      "heat-mpi-gs|heat_mpi_weft|weft|native|--method gauss-seidel -n 256 -s 4|-b|32||$MPI_CONFIGS|timing"
      "heat-mpi-gs|heat_dist|dist|native|--method gauss-seidel -n 256 -s 4|-b|32||$MPI_CONFIGS|timing"
      "cg-mpi|cg_mpi_omp|parallel-for tasks|weft|-n 16 -i 10|-t|4||$MPI_CONFIGS|timing"
      "cg-mpi|cg_mpi_weft|weft|native|-n 16 -i 10|-t|4||$MPI_CONFIGS|timing"
    )
    # The dense benchmarks (dense_mpi.h): fork-join MPI + OpenMP, TAMPI-style, distributed taskiter.
    for d in "matvec|-n 256 -s 4|32" "matmul|-n 64 -s 2|16" "jacobi|-n 256 -s 5|32"; do
      IFS='|' read -r a da db <<<"$d"
      mpi_cases+=(
        "$a-mpi|dense_mpi_omp|fork-join|gomp weft|--app $a $da|-b|$db||$MPI_CONFIGS|timing"
        "$a-mpi|dense_mpi_weft|tampi|native|--app $a $da|-b|$db||$MPI_CONFIGS|timing"
        "$a-mpi|dense_dist|dist|native|--app $a $da|-b|$db||$MPI_CONFIGS|timing"
      )
    done
    ;;
  demo)
    # The distributed Cholesky once per runtime, each on a variant it finishes: libgomp deadlocks on
    # blocking calls in tasks (detach), LLVM libomp 14 ignores detach (blocking-serial).
    mpi_cases=(
      "cholesky-mpi|cholesky_mpi_omp|detach|gomp|-n 4096|-b|256||$MPI_CONFIGS|timing"
      "cholesky-mpi|cholesky_mpi_omp|blocking-serial|llvm-omp|-n 4096|-b|256||$MPI_CONFIGS|timing"
      "cholesky-mpi|cholesky_mpi_omp|blocking|weft|-n 4096|-b|256||$MPI_CONFIGS|timing"
      "cholesky-mpi|cholesky_mpi_weft|blocking iwait|native|-n 4096|-b|256||$MPI_CONFIGS|timing"
      "cholesky-mpi|cholesky_scalapack|scalapack|native|-n 4096|-b|256||$MPI_CONFIGS|timing"
    )
    ;;
  full)
    # Cholesky: the paper's n = 4096 with b = 256 and 512, 2 factorisations per process (the last is
    # the sample); heat: Gauss-Seidel 4096^2, 20 sweeps; CG: 96^3, 50 iterations, 16 chunks per rank.
    # Then the oversubscribed configurations at small sizes with the checks on.
    c="--no-check"
    hs="--method gauss-seidel -n 4096 -s 20 $c"
    for ph in timing correctness; do
      # The dense benchmarks (dense_mpi.h), each app "arguments|grains": matvec and jacobi at the
      # paper's O(N^2) per step, matmul's tiles O(B^3) each.
      if [ $ph = timing ]; then
        cfgs=$MPI_CONFIGS ch="-n 4096 -r 2 $c" cb="256 512" hg="$hs" hb=128 cgs="-n 96 -i 50 $c" cgt=16
        dense=("matvec|-n 8192 -s 50 $c|128 256 512 1024" "matmul|-n 1024 -s 3 $c|64 128 256"
               "jacobi|-n 8192 -s 50 $c|128 256 512 1024")
      else
        [ -n "$MPI_CHECK_CONFIGS" ] || continue
        cfgs=$MPI_CHECK_CONFIGS ch="-n 1024" cb=128 hg="--method gauss-seidel -n 512 -s 6" hb=16 cgs="-n 32 -i 20" cgt=4
        dense=("matvec|-n 512 -s 6|32" "matmul|-n 128 -s 2|16" "jacobi|-n 512 -s 7|32")
      fi
      for d in "${dense[@]}"; do
        IFS='|' read -r a da db <<<"$d"
        mpi_cases+=(
          "$a-mpi|dense_mpi_omp|fork-join|$omp3|--app $a $da|-b|$db||$cfgs|$ph"
          "$a-mpi|dense_mpi_weft|tampi|native|--app $a $da|-b|$db||$cfgs|$ph"
          "$a-mpi|dense_dist|dist dist-iteration|native|--app $a $da|-b|$db||$cfgs|$ph"
        )
      done
      mpi_cases+=(
        "cholesky-mpi|cholesky_mpi_omp|blocking detach blocking-serial|$omp3|$ch|-b|$cb||$cfgs|$ph"
        "cholesky-mpi|cholesky_mpi_weft|blocking iwait|native|$ch|-b|$cb||$cfgs|$ph"
        "cholesky-mpi|cholesky_mpi_weft|blocking|native|$ch --mark-sends|-b|$cb|$MPI_POLICIES|$cfgs|$ph"
        "cholesky-mpi|cholesky_scalapack|scalapack|native|$ch|-b|$cb||$cfgs|$ph"
        "heat-mpi-gs|heat_mpi_omp|parallel-for tasks|$omp3|$hg|-b|$hb||$cfgs|$ph"
        "heat-mpi-gs|heat_mpi_weft|weft|native|$hg|-b|$hb||$cfgs|$ph"
        "heat-mpi-gs|heat_dist|dist|native|$hg|-b|$hb||$cfgs|$ph"
        "cg-mpi|cg_mpi_omp|parallel-for tasks|$omp3|$cgs|-t|$cgt||$cfgs|$ph"
        "cg-mpi|cg_mpi_weft|weft|native|$cgs|-t|$cgt||$cfgs|$ph"
      )
      if [ $ph = correctness ]; then
        mpi_cases+=(
          "heat-mpi-jacobi|heat_mpi_omp|parallel-for tasks|$omp3|--method jacobi -n 512 -s 6|-b|16||$cfgs|$ph"
          "heat-mpi-jacobi|heat_mpi_weft|weft|native|--method jacobi -n 512 -s 5|-b|16||$cfgs|$ph"
          "heat-mpi-jacobi|heat_dist|dist|native|--method jacobi -n 512 -s 5|-b|16||$cfgs|$ph"
        )
      fi
    done
    ;;
esac

# The runs that may hang: blocking MPI calls inside tasks on libgomp or LLVM libomp, with a peer to
# wait for. A thread blocked in MPI is lost to the team; with too few threads left every rank can wait
# in a receive whose send is queued behind it (cholesky_mpi_omp.c, heat_mpi_omp.c, cg_mpi_omp.c say
# when). They run under HANG_TIMEOUT; a timeout is their result.
may_hang() {
  local program=$1 variant=$2 runtime=$3 ranks=$4
  ((ranks > 1)) || return 1
  [[ "$runtime" == gomp || "$runtime" == llvm-omp ]] || return 1
  case $program/$variant in
    cholesky_mpi_omp/blocking | heat_mpi_omp/tasks | cg_mpi_omp/tasks) return 0 ;;
  esac
  return 1
}

# --- build ------------------------------------------------------------------------------------------
mkdir -p "$RESULTS_DIR" || die "cannot create $RESULTS_DIR"
programs=()
mpi_programs=()
for c in "${cases[@]}" "${mpi_cases[@]}"; do
  IFS='|' read -r app program _ <<<"$c"
  has_word "$APPS" "$app" && ! has_word "${programs[*]:-}" "$program" && programs+=("$program")
done
for c in "${mpi_cases[@]}"; do
  IFS='|' read -r app program _ <<<"$c"
  has_word "$APPS" "$app" && ! has_word "${mpi_programs[*]:-}" "$program" && mpi_programs+=("$program")
done
((${#programs[@]})) || die "APPS selects nothing (known: $all_apps)"
extra_targets=()
((${#mpi_programs[@]})) && extra_targets+=(weft_mpi)
bench_build weft "${extra_targets[@]}" "${programs[@]}"
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

# --- MPI launcher -----------------------------------------------------------------------------------
# mpi_launch R: the command prefix that starts R ranks. Open MPI (mpiexec --version says Open MPI or
# OpenRTE) refuses more ranks than cores and root unless told, and binds each rank to one core, which
# would pin every thread of a rank there: --oversubscribe --bind-to none, and the two root variables.
# Environment reaches the ranks as "mpiexec -n R env VAR=... program" (Open MPI and MPICH alike).
mpi_flags=""
mpi_ok=0
mpi_version=""
libweft_mpi=""
if ((${#mpi_programs[@]})); then
  if ! command -v "${MPIEXEC%% *}" >/dev/null; then
    notes+=("no MPI launcher ($MPIEXEC): the MPI applications were not run")
    log "apps/run.sh: $MPIEXEC not found: the MPI part is skipped"
  else
    built=0
    for p in "${mpi_programs[@]}"; do [ -n "${binary[$p]:-}" ] && built=1; done
    if ((built)); then
      mpi_ok=1
      mpi_version=$($MPIEXEC --version 2>&1 | head -n 1)
      if $MPIEXEC --version 2>&1 | grep -q -E 'Open MPI|OpenRTE'; then
        mpi_flags="--oversubscribe --bind-to none"
        export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
      fi
      libweft_mpi=$(find "$BUILD_DIR" -name 'libweft-mpi.so' \( -type f -o -type l \) -print -quit 2>/dev/null)
      [ -n "$libweft_mpi" ] || notes+=("libweft-mpi.so not found: no weft rows for the MPI + OpenMP programs")
    else
      notes+=("no MPI program was built (MPI not found at configure time?): the MPI applications were not run")
      log "apps/run.sh: no MPI program built: the MPI part is skipped"
    fi
  fi
fi
mpi_launch() { echo "$MPIEXEC${mpi_flags:+ $mpi_flags} -n $1"; }

# The environment of an MPI row's ranks at t threads each, or nothing when it cannot run here.
# weft keeps its default binding: under --bind-to none the ranks share the machine's mask, and weft
# starts rank r of n at core r*cores/n (the launcher's local rank), so their workers do not overlap.
mpi_runtime_env() {
  local rt=$1 t=$2
  case $rt in
    gomp) echo "OMP_NUM_THREADS=$t" ;;
    llvm-omp) [ -n "$libomp" ] && echo "OMP_NUM_THREADS=$t LD_PRELOAD=$libomp" ;;
    weft) ((weft_door)) && [ -n "$libweft_mpi" ] &&
      echo "OMP_NUM_THREADS=$t WEFT_NUM_THREADS=$t LD_PRELOAD=$libweft:$libweft_mpi" ;;
    native) echo "WEFT_NUM_THREADS=$t" ;;
  esac
  return 0
}

# --- run --------------------------------------------------------------------------------------------
stamp=${STAMP:-$(date +%Y%m%d-%H%M%S)}
name=apps-$stamp
[ "$mode" = full ] || name=apps-$mode-$stamp
csv=$RESULTS_DIR/$name.csv
md=$RESULTS_DIR/$name.md
echo "app,program,variant,runtime,threads,grain,rep,line,status,seconds,iters,gflops,tasks,edges,check,error,ranks,policy,phase,command" >"$csv"
out=$(mktemp)
err=$(mktemp)
trap 'rm -f "$out" "$err"' EXIT
weft_failed=0
runs=0
start=$(date +%s)
field() { sed -n "s/.* $1=\([^ ]*\).*/\1/p" <<<" $2"; }

# run_row APP PROGRAM VARIANT RUNTIME THREADS GRAIN RANKS POLICY PHASE WEFT_RUN LIMIT REPS LABEL COMMAND
# Up to REPS processes of COMMAND (a word list), each under LIMIT seconds; one CSV line per RESULT
# line, or one for a process that printed none. The row stops at a timeout or an unsupported run.
run_row() {
  local app=$1 program=$2 v=$3 rt=$4 t=$5 g=$6 ranks=$7 policy=$8 phase=$9 weft_run=${10} limit=${11} reps=${12}
  local label=${13} command=${14}
  local rep rc status k line s last lines msg
  for ((rep = 1; rep <= reps; ++rep)); do
    # shellcheck disable=SC2086 # command is a word list by construction
    timeout -k 5 "$limit" $command >"$out" 2>"$err"
    rc=$?
    runs=$((runs + 1))
    mapfile -t lines < <(grep '^RESULT ' "$out")
    if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then status=timeout
    elif [ "$rc" -eq 0 ] && ((${#lines[@]})); then status=ok
    elif [ "$rc" -eq 1 ] && grep -q 'check=FAIL' "$out"; then status=wrong
    elif grep -q 'is unsupported on this OpenMP runtime' "$err"; then status=unsupported
    else status=failed; fi
    if [ "$status" != ok ] && [ "$status" != unsupported ] && ((weft_run)); then weft_failed=1; fi
    if [ "$status" != ok ] && [ "$status" != wrong ]; then
      # the program's last words, not the launcher's epilogue (Open MPI's starts with a line of dashes)
      msg=$(sed '/^-----/,$d' "$err" | awk '!seen[$0]++' | tail -n 3 | tr '\n' ' ')
      [ -n "$msg" ] && log "   $msg"
      printf '%s,%s,%s,%s,%s,%s,%s,0,%s,,,,,,,,%s,%s,%s,%s\n' "$app" "$program" "$v" "$rt" "$t" "$g" "$rep" "$status" \
        "$ranks" "$policy" "$phase" "$(csv_field "$command")" >>"$csv"
    fi
    k=0
    for line in "${lines[@]}"; do
      k=$((k + 1))
      s=$status
      [ "$(field check "$line")" = FAIL ] && s=wrong
      printf '%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s\n' "$app" "$program" "$v" "$rt" "$t" "$g" "$rep" "$k" "$s" \
        "$(field seconds "$line")" "$(field iters "$line")" "$(field gflops "$line")" "$(field tasks "$line")" "$(field edges "$line")" \
        "$(field check "$line")" "$(field error "$line")" "$ranks" "$policy" "$phase" "$(csv_field "$command")" >>"$csv"
    done
    if ((${#lines[@]})); then
      last=${lines[${#lines[@]}-1]}
      log "[$(($(date +%s) - start))s] $label #$rep: $status $(field seconds "$last")s gflops=$(field gflops "$last") $(field check "$last")"
    else
      log "[$(($(date +%s) - start))s] $label #$rep: $status$([ "$status" = timeout ] && echo " (no end in ${limit}s)")"
    fi
    [ "$status" = timeout ] || [ "$status" = unsupported ] && break
  done
  return 0
}

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
          run_row "$app" "$program" "$v" "$rt" "$t" "$g" "" "" timing "$weft_run" "$TIMEOUT" "$REPS" \
            "$app $v $rt t=$t ${grain_option:-}${g/-/}" "$prefix $exe --variant $v $args ${grain_args[*]} -p $t"
        done
      done
    done
  done
done

# The MPI rows: per configuration R x T, grain, variant, runtime and policy.
mpi_start=$(date +%s)
mpi_runs=$runs
if ((mpi_ok)); then
  for c in "${mpi_cases[@]}"; do
    IFS='|' read -r app program variants runtimes args grain_option grains policies configs phase <<<"$c"
    has_word "$APPS" "$app" || continue
    exe=${binary[$program]:-}
    [ -n "$exe" ] || continue
    row_variant_suffix=""
    has_word "$args" --mark-sends && row_variant_suffix=+mark-sends
    reps=$REPS
    [ "$phase" = correctness ] && reps=1
    for cfg in $configs; do
      r=${cfg%x*} t=${cfg#*x}
      for g in $grains; do
        for v in $variants; do
          for rt in $runtimes; do
            has_word "$RUNTIMES" "$rt" || continue
            envs=$(mpi_runtime_env "$rt" "$t")
            [ -n "$envs" ] || continue
            weft_run=0
            [[ "$rt" == weft || "$program" == *_weft || "$program" == *_dist ]] && weft_run=1
            limit=$TIMEOUT
            may_hang "$program" "$v" "$rt" "$r" && limit=$HANG_TIMEOUT
            for pol in ${policies:--}; do
              penv="" plabel=""
              [ "$pol" != - ] && penv=" WEFT_MPI_PRIORITY=$pol" plabel=" policy=$pol"
              plabel+=$([ "$phase" = correctness ] && echo " (correctness)")
              run_row "$app" "$program" "$v$row_variant_suffix" "$rt" "$t" "$g" "$r" "${pol/#-/}" "$phase" "$weft_run" \
                "$limit" "$reps" "$app $v$row_variant_suffix $rt ${r}x$t $grain_option$g$plabel" \
                "$(mpi_launch "$r") env $envs$penv $exe --variant $v $args $grain_option $g -p $t"
            done
          done
        done
      done
    done
  done
  log "apps/run.sh: MPI part: $((runs - mpi_runs)) processes in $(($(date +%s) - mpi_start))s"
fi
((runs > 0)) || die "no run was possible (nothing built?)"

# --- report -----------------------------------------------------------------------------------------
summary_args=()
while IFS= read -r m; do summary_args+=(--meta "$m"); done < <(bench_meta)
summary_args+=(--meta "libomp: ${libomp:-none}; StarPU $(pkg-config --modversion starpu-1.3 2>/dev/null || echo '?'); OpenBLAS $(dpkg-query -W -f='${Version}' libopenblas0-pthread 2>/dev/null || echo '?')")
summary_args+=(--meta "runs: mode=$mode, REPS=$REPS, TIMEOUT=${TIMEOUT}s, THREADS=$THREADS$([ "$mode" = quick ] && echo ' (tiny sizes: not a measurement)')")
if ((mpi_ok)); then
  summary_args+=(--meta "MPI: $mpi_version ($(mpi_launch R)); ScaLAPACK $(dpkg-query -W -f='${Version}' libscalapack-openmpi2.2 2>/dev/null || echo '?'); configurations (ranks x threads per rank): $MPI_CONFIGS${MPI_CHECK_CONFIGS:+, correctness only: $MPI_CHECK_CONFIGS}; HANG_TIMEOUT=${HANG_TIMEOUT}s; weft bound per local rank (its default), the peers unbound")
fi
summary_args+=(--meta "raw runs: $(basename "$csv")")
for n in "${notes[@]}"; do summary_args+=(--note "$n"); done
plots=(--plots "$RESULTS_DIR/$name")
[ "$mode" = full ] || plots=()
"$(bench_python)" "$here/summarize.py" "$csv" --md "$md" --title "weft application benchmarks ($stamp)" \
  "${plots[@]}" "${summary_args[@]}" || die "summarize.py failed"
log "apps/run.sh: wrote $csv and $md in $(($(date +%s) - start))s"
exit $((weft_failed ? 1 : 0))
