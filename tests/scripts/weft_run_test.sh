#!/usr/bin/env bash
# weft-run, the launcher (scripts/weft-run.in), from a build tree: a gcc -fopenmp program runs on
# weft alone (GCC's libgomp not mapped, one OMP_DISPLAY_ENV block, no libgomp warning), arguments
# reach it unchanged, WEFT_DISPLAY_ENV=1 shows what was set, and bad arguments fail with a message
# naming them. (--mpi on MPI programs: tests/mpi, mpi.recv_before_send.2x1.weft-run.)
#   weft_run_test.sh <weft-run> <weft version> <ON|OFF: built with MPI>
set -euo pipefail
weft_run=$1
version=$2
have_mpi=$3
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
cat >"$scratch/omp.c" <<'C'
#include <omp.h>
#include <stdio.h>
#include <string.h>
/* Prints the libgomp file the process mapped, if any, then counts the team. */
int main(void) {
  FILE *maps = fopen("/proc/self/maps", "r");
  char line[4096];
  while (maps && fgets(line, sizeof line, maps))
    if (strstr(line, "libgomp") && strchr(line, '/')) printf("mapped: %s", strchr(line, '/'));
  if (maps) fclose(maps);
  int n = 0;
#pragma omp parallel reduction(+ : n)
  n += 1;
  printf("threads %d\n", n);
  return n == omp_get_max_threads() ? 0 : 1;
}
C
gcc -fopenmp "$scratch/omp.c" -o "$scratch/omp"
prog=$scratch/omp
out=
fail() { printf '%s\n' "$out"; echo "weft_run_test: $*" >&2; exit 1; }
has() { grep -q -e "$1" <<<"$out"; }

# One runtime: weft, with OMP_* read (and a bad value reported) once.
out=$(OMP_DISPLAY_ENV=true OMP_NUM_THREADS=2 OMP_SCHEDULE=bogus "$weft_run" "$prog" 2>&1) || fail "exit status $?"
blocks=$(grep -c "OPENMP DISPLAY ENVIRONMENT BEGIN" <<<"$out" || true)
[ "$blocks" = 1 ] || fail "$blocks OMP_DISPLAY_ENV blocks, expected 1"
has "^weft: runtime in use: weft" || fail "weft is not the runtime in use"
if has "^mapped: "; then fail "GCC's libgomp was loaded"; fi
if has "^libgomp:"; then fail "libgomp read the OMP_* variables too"; fi
has "^threads 2$" || fail "expected a team of 2"
if has "^weft-run:"; then fail "weft-run printed without WEFT_DISPLAY_ENV=1"; fi

# WEFT_DISPLAY_ENV=1: what weft-run set, then weft's own display.
out=$(WEFT_DISPLAY_ENV=1 OMP_NUM_THREADS=1 "$weft_run" "$prog" 2>&1) || fail "exit status $?"
has "^weft-run: LD_LIBRARY_PATH=/[^:]*/weft-omp" || fail "WEFT_DISPLAY_ENV=1: no LD_LIBRARY_PATH line"
has "^weft-run: running $prog$" || fail "WEFT_DISPLAY_ENV=1: no 'running' line"

# Arguments pass through unchanged, '--' ends weft-run's options, the exit status is the program's.
rc=0
out=$("$weft_run" -- sh -c 'printf "[%s]" "$@"; exit 3' sh "a b" --mpi "" 2>&1) || rc=$?
[ $rc -eq 3 ] || fail "exit status $rc, expected the program's 3"
[ "$out" = "[a b][--mpi][]" ] || fail "arguments changed on the way: $out"

# Usage, version, bad arguments.
out=$("$weft_run" --help) || fail "--help: exit status $?"
has "^Usage: weft-run \[--mpi\]" || fail "--help: no usage"
out=$("$weft_run" --version) || fail "--version: exit status $?"
[ "$out" = "weft-run (weft $version)" ] || fail "--version: expected weft $version"
expect_error() { # status, message, weft-run arguments...
  local status=$1 message=$2 rc=0
  shift 2
  out=$("$weft_run" "$@" 2>&1) || rc=$?
  [ $rc -eq "$status" ] || fail "weft-run $*: exit status $rc, expected $status"
  has "$message" || fail "weft-run $*: expected '$message'"
}
expect_error 2 "unknown option '--bogus'" --bogus "$prog"
expect_error 2 "no program to run" --mpi --
expect_error 127 "program '$scratch/absent' not found" "$scratch/absent"
if [ "$have_mpi" != ON ]; then expect_error 2 "built without MPI" --mpi "$prog"; fi
echo "weft_run test: a gcc -fopenmp program ran on weft alone; arguments, display, usage and errors as documented"
