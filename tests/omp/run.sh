#!/bin/sh
# Runs one OpenMP test program in a controlled environment:
#   run.sh [VAR=VALUE ...] -- program [args...]
# Every OMP_* and GOMP_* variable inherited from the caller is removed first (a developer's
# OMP_SCHEDULE or OMP_NUM_THREADS must not change what a test checks; OMPTEST_ALARM, the
# programs' hang watchdog in seconds, and WEFT_* pass through), then the given
# assignments are exported (later ones win, so a test's own OMP_NUM_THREADS=4,2 overrides the
# harness's thread count), then the program is exec'd.
for v in $(env | sed -n 's/^\(G\{0,1\}OMP_[A-Za-z0-9_]*\)=.*/\1/p'); do
  unset "$v"
done
while [ $# -gt 0 ] && [ "$1" != "--" ]; do
  export "$1"
  shift
done
if [ $# -lt 2 ]; then
  echo "usage: run.sh [VAR=VALUE ...] -- program [args...]" >&2
  exit 2
fi
shift
exec "$@"
