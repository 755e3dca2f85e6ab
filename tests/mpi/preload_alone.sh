#!/usr/bin/env bash
# Half the MPI layer: libweft-mpi preloaded without libweft. libweft then loads after the program's
# libgomp, which runs the tasks; their blocking MPI calls hold the core and the run hangs. MPI_Init
# must stop the run at once, saying what to preload (issue 23).
#   preload_alone.sh <mpicc -fopenmp program that blocks in MPI inside tasks (recv_before_send)>
# Environment from CTest: WEFT_MPIEXEC, WEFT_LIBWEFT_MPI.
set -uo pipefail
launcher=${WEFT_MPIEXEC:-mpiexec}
flags=()
# As in run.sh: Open MPI refuses more ranks than cores, and root, unless told.
if "$launcher" --version 2>&1 | grep -q -E "Open MPI|OpenRTE|open-mpi"; then
  flags+=(--oversubscribe --bind-to none)
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
out=$(timeout -k 5 30 "$launcher" "${flags[@]}" -n 2 env OMP_NUM_THREADS=1 LD_PRELOAD="$WEFT_LIBWEFT_MPI" "$@" 2>&1)
rc=$?
fail() { printf '%s\n' "$out"; echo "preload_alone: $*" >&2; exit 1; }
if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then fail "libweft-mpi preloaded alone: the run hung for 30 s"; fi
[ $rc -ne 0 ] || fail "libweft-mpi preloaded alone: the run succeeded, expected MPI_Init to stop it"
grep -q "^weft-mpi: MPI_Init.*not on weft" <<<"$out" || fail "no diagnosis from MPI_Init"
grep -q "Preload both libraries: LD_PRELOAD=\".*libweft-mpi.* .*libweft.so" <<<"$out" || fail "no LD_PRELOAD to use"
grep -q "weft-run --mpi" <<<"$out" || fail "no mention of weft-run --mpi"
[ "$(grep -c "^weft-mpi: " <<<"$out")" = 1 ] || fail "expected the diagnosis once (rank 0)"
echo "as expected: stopped at MPI_Init: $(grep "^weft-mpi: " <<<"$out")"
