#!/usr/bin/env bash
# Runs one tests/mpi program on N ranks under one runtime, with a timeout.
#   run.sh <np> <gomp|libomp|weft|linked> <threads> <pass|hang> <timeout s> <program> [args...]
# gomp: the program as built (gcc -fopenmp); libomp: LLVM libomp preloaded; weft: libweft-mpi and
# libweft preloaded (an unmodified MPI + OpenMP program made task-aware); linked: the program is
# linked to weft itself (native programs, sanitizer builds).
# expect=hang: the run must time out (the peers' loss of the core, recorded), not complete.
# Environment from CTest: WEFT_MPIEXEC, WEFT_LIBWEFT, WEFT_LIBWEFT_MPI, WEFT_LIBOMP.
set -uo pipefail
np=$1 flavour=$2 threads=$3 expect=$4 limit=$5
shift 5
launcher=${WEFT_MPIEXEC:-mpiexec}
flags=()
# Open MPI refuses more ranks than cores, and root, unless told; MPICH's hydra needs neither.
if "$launcher" --version 2>&1 | grep -q -E "Open MPI|OpenRTE|open-mpi"; then
  flags+=(--oversubscribe)
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  # One rank per core would pin every worker thread of a rank to one core.
  flags+=(--bind-to none)
fi
envs=(OMP_NUM_THREADS="$threads" WEFT_NUM_THREADS="$threads")
# Sanitizer builds: MPI itself is not instrumented (tsan.supp says why).
export TSAN_OPTIONS="${TSAN_OPTIONS:-} history_size=7 suppressions=$(cd "$(dirname "$0")" && pwd)/tsan.supp"
# Open MPI keeps memory at exit in components it has already unloaded (dlclose), which no leak
# suppression can name: leaks are checked by the unit tests, not here.
export ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0"
case "$flavour" in
  gomp|linked) ;;
  libomp)
    [ -n "${WEFT_LIBOMP:-}" ] && [ -e "$WEFT_LIBOMP" ] || { echo "SKIP: no LLVM libomp"; exit 0; }
    envs+=(LD_PRELOAD="$WEFT_LIBOMP") ;;
  weft) envs+=(LD_PRELOAD="$WEFT_LIBWEFT_MPI $WEFT_LIBWEFT") ;;
  *) echo "run.sh: unknown flavour '$flavour'" >&2; exit 2 ;;
esac
timeout -k 5 "$limit" "$launcher" "${flags[@]}" -n "$np" env "${envs[@]}" "$@"
rc=$?
if [ "$expect" = hang ]; then
  if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
    echo "as expected: $(basename "$1") on $flavour, $np ranks x $threads thread(s), did not finish in $limit s (a blocking MPI call held the core)"
    exit 0
  fi
  echo "expected $(basename "$1") to hang on $flavour ($np ranks x $threads thread(s)), but it ended with status $rc" >&2
  exit 1
fi
[ $rc -eq 124 ] && echo "$(basename "$1") on $flavour timed out after $limit s" >&2
exit $rc
