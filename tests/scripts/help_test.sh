#!/usr/bin/env bash
# Every script's -h and --help only print its usage: exit 0 within seconds, print "Usage", no
# script lines, and create or start nothing. Runs copies of the scripts in a scratch tree (what a
# script writes beside itself or in its working directory shows up there), with apt, sudo, cmake,
# compilers, MPI, python, git and mktemp replaced by stubs that record any call.
#   help_test.sh <repository root> <weft-run as configured in a build tree>
set -euo pipefail
root=$1
weft_run=$2
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
tree=$scratch/tree work=$scratch/work stubs=$scratch/stubs calls=$scratch/calls
mkdir -p "$tree/bin" "$work" "$stubs"
cd "$root"
scripts=(scripts/*.sh bench/*.sh bench/*/run.sh)
cp --parents "${scripts[@]}" "$tree"
cp "$weft_run" "$tree/bin/weft-run"
scripts+=(bin/weft-run)
for cmd in apt-get sudo dpkg-query cmake ninja make gcc cc c++ g++ python3 pip mpiexec mpirun git mktemp nproc; do
  printf '#!/bin/sh\necho "%s $*" >>"%s"\nexit 1\n' "$cmd" "$calls" >"$stubs/$cmd"
  chmod +x "$stubs/$cmd"
done
timeout_bin=$(command -v timeout)
before=$(cd "$tree" && find . | sort)

failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }
for s in "${scripts[@]}"; do
  for flag in -h --help; do
    start=$(date +%s%N)
    rc=0
    out=$(cd "$work" && PATH="$stubs:$PATH" "$timeout_bin" -k 2 10 bash "$tree/$s" "$flag" 2>"$scratch/err") || rc=$?
    ms=$((($(date +%s%N) - start) / 1000000))
    [ $rc -eq 0 ] || fail "$s $flag: exit status $rc: $(cat "$scratch/err")"
    ((ms < 5000)) || fail "$s $flag: took $ms ms"
    grep -q '^Usage: ' <<<"$out" || fail "$s $flag: no 'Usage: ' line; it printed: $(head -c 300 <<<"$out")"
    if grep -E '^set -|=\$\(' <<<"$out"; then fail "$s $flag: prints script lines (above)"; fi
    if [ -s "$calls" ]; then fail "$s $flag: ran $(tr '\n' ';' <"$calls")"; : >"$calls"; fi
    [ -z "$(ls -A "$work")" ] || fail "$s $flag: created $(ls -A "$work") in the working directory"
    after=$(cd "$tree" && find . | sort)
    [ "$after" = "$before" ] || fail "$s $flag: created $(comm -13 <(echo "$before") <(echo "$after") | tr '\n' ' ')"
    before=$after
  done
done
((failures == 0)) || exit 1
echo "help test: ${#scripts[@]} scripts, -h and --help: usage only, nothing created or run"
