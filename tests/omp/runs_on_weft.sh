#!/bin/bash
# Proves that gcc -fopenmp programs really run on weft.
#   runs_on_weft.sh display preload LIBWEFT PROGRAM
#       under LD_PRELOAD=LIBWEFT: WEFT_DISPLAY_ENV=1 prints "weft: runtime in use"; with
#       OMP_DISPLAY_ENV=true both "OPENMP DISPLAY ENVIRONMENT BEGIN" and that line appear.
#       (Precondition, checked first: plain libgomp prints no such line.)
#   runs_on_weft.sh display libpath SHIMDIR PROGRAM
#       the same with LD_LIBRARY_PATH=SHIMDIR, where SHIMDIR/libgomp.so.1 is weft; also checks
#       that the dynamic loader resolves libgomp.so.1 into SHIMDIR, and that weft's
#       OMP_DISPLAY_ENV=true block is libgomp's, line for line.
#   runs_on_weft.sh bindings LIBWEFT PROGRAM...
#       with LD_PRELOAD, LD_BIND_NOW and LD_DEBUG=bindings, no GOMP_*/omp_* reference of any
#       program may be bound to the real libgomp.so.1.
set -u
here=$(cd "$(dirname "$0")" && pwd)
run="$here/run.sh"
marker='weft: runtime in use'
fail() { echo "FAIL: $*"; exit 1; }

mode=$1
case $mode in
display)
  how=$2 where=$3 prog=$4
  if [ "$how" = preload ]; then
    [ -f "$where" ] || fail "$where does not exist"
    envset=("LD_PRELOAD=$where")
  else
    [ -f "$where/libgomp.so.1" ] || fail "$where/libgomp.so.1 does not exist"
    envset=("LD_LIBRARY_PATH=$where${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}")
    resolved=$("$run" "${envset[@]}" -- env LD_TRACE_LOADED_OBJECTS=1 "$prog" 2>&1 | awk '$1=="libgomp.so.1"{print $3}')
    echo "libgomp.so.1 resolves to: $resolved"
    case $resolved in "$where"/*|"${where%/}"/*) ;; *) fail "libgomp.so.1 did not resolve into $where" ;; esac
  fi
  out=$("$run" OMP_NUM_THREADS=2 WEFT_DISPLAY_ENV=1 -- "$prog" 2>&1)
  if grep -qF "$marker" <<<"$out"; then
    fail "the marker line appears even without weft (test precondition)"
  fi
  out=$("$run" OMP_NUM_THREADS=2 WEFT_DISPLAY_ENV=1 "${envset[@]}" -- "$prog" 2>&1)
  rc=$?
  echo "--- WEFT_DISPLAY_ENV=1 (exit $rc):"
  echo "$out" | head -40
  [ $rc -eq 0 ] || fail "program exited with $rc"
  grep -qF "$marker" <<<"$out" || fail "no '$marker' line with WEFT_DISPLAY_ENV=1"
  out=$("$run" OMP_NUM_THREADS=2 OMP_DISPLAY_ENV=true "${envset[@]}" -- "$prog" 2>&1)
  rc=$?
  echo "--- OMP_DISPLAY_ENV=true (exit $rc):"
  echo "$out" | head -60
  [ $rc -eq 0 ] || fail "program exited with $rc"
  grep -qF 'OPENMP DISPLAY ENVIRONMENT BEGIN' <<<"$out" || fail "no 'OPENMP DISPLAY ENVIRONMENT BEGIN' with OMP_DISPLAY_ENV=true"
  grep -qF "$marker" <<<"$out" || fail "no '$marker' line with OMP_DISPLAY_ENV=true"
  if [ "$how" = libpath ]; then
    # weft alone prints the block: line for line what libgomp prints, for a few settings.
    for settings in "" "OMP_MAX_ACTIVE_LEVELS=2 OMP_THREAD_LIMIT=7 OMP_TARGET_OFFLOAD=disabled OMP_NUM_TEAMS=3"; do
      # shellcheck disable=SC2086
      gomp_block=$("$run" OMP_NUM_THREADS=2 OMP_DISPLAY_ENV=true $settings -- "$prog" 2>&1 | sed -n '/DISPLAY ENVIRONMENT BEGIN/,/DISPLAY ENVIRONMENT END/p')
      # shellcheck disable=SC2086
      weft_block=$("$run" OMP_NUM_THREADS=2 OMP_DISPLAY_ENV=true $settings "${envset[@]}" -- "$prog" 2>&1 | sed -n '/DISPLAY ENVIRONMENT BEGIN/,/DISPLAY ENVIRONMENT END/p')
      if [ "$gomp_block" != "$weft_block" ]; then
        diff <(echo "$gomp_block") <(echo "$weft_block")
        fail "OMP_DISPLAY_ENV=true ${settings:-(defaults)}: weft's block differs from libgomp's (above: < libgomp, > weft)"
      fi
    done
  fi
  echo "PASS"
  ;;
bindings)
  lib=$2
  shift 2
  [ -f "$lib" ] || fail "$lib does not exist"
  status=0
  for prog in "$@"; do
    log=$("$run" OMP_NUM_THREADS=1 OMPTEST_EXIT_AT_START=1 LD_PRELOAD="$lib" LD_BIND_NOW=1 LD_DEBUG=bindings -- "$prog" 2>&1 >/dev/null)
    bad=$(grep -F "binding file $prog " <<<"$log" | grep -E "symbol \`(GOMP_|omp_)" | grep -F 'libgomp.so' | sed -E 's/.*symbol `([^'"'"']*)'"'"' \[([^]]*)\].*/\1@\2/')
    total=$(grep -F "binding file $prog " <<<"$log" | grep -cE "symbol \`(GOMP_|omp_)")
    if [ -n "$bad" ]; then
      echo "FAIL: $(basename "$prog"): bound to libgomp instead of weft: $(echo $bad)"
      status=1
    elif [ "$total" -eq 0 ]; then
      echo "FAIL: $(basename "$prog"): no GOMP_*/omp_* bindings seen (LD_DEBUG unsupported?)"
      status=1
    else
      echo "ok: $(basename "$prog"): $total GOMP_*/omp_* bindings, none to libgomp"
    fi
  done
  exit $status
  ;;
*)
  fail "unknown mode $mode"
  ;;
esac
