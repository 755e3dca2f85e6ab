#!/usr/bin/env bash
# Usage: bench/dist.sh [--quick] [-h | --help]
#
# The distributed taskiter against the hand-written versions of the same MPI applications, on the
# emulated cluster network of bench/net (ranks in network namespaces, TCP between them, a one-way
# delay and a rate per link). Per application, three variants:
#   fork-join  MPI + OpenMP, bulk-synchronous (heat_mpi_omp --variant parallel-for, dense_mpi_omp)
#              on libgomp
#   tampi      weft tasks with MPI calls inside them, written by hand (heat_mpi_weft, dense_mpi_weft)
#   dist       the distributed taskiter (heat_dist, dense_dist), Immediate Successor
#   dist-ip    the same, Iteration Priority (WEFT_GRAPH_POLICY=iteration, dense_dist's dist-iteration)
# Exit status 1 when a weft run failed (a fork-join failure is a result, not an error).
# Rows interleave the variants (A B C A B C ...) so that the machine's drift hits them alike; each
# cell is the median of REPS runs with min and max, and the ratio of fork-join's median to it.
#
#   bench/dist.sh            REPS=5, the sizes below; the table also goes to bench/results/dist-<stamp>.md
#   bench/dist.sh --quick    tiny sizes, REPS=1: proves the harness (nothing written)
#
# Environment:
#   BUILD_DIR  build tree (configured and built if needed)                       [<repo>/build-rel]
#   REPS       runs per cell                                                     [5; --quick: 1]
#   RANKS      ranks (nodes of the emulated network)                             [4]
#   THREADS    workers / OpenMP threads per rank                                 [1]
#   NET        delay:rate of the links, or "shm" for no emulation (mpirun on    [5us:100gbit]
#              this host, shared memory)
#   APPS       subset of: heat-gs heat-jacobi matvec matmul jacobi                [all]
#   VARIANTS   subset of: fork-join tampi dist dist-ip                         [all]
#   HEAT       heat -n -b -s                                                     ["1024 32 40"]
#   DENSE      dense -n -b -s                                                    ["2048 256 20"]
#   MATMUL     matmul -n -b -s                                                   ["512 64 4"]
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(dirname "$here")
mode=full
for arg in "$@"; do
  case "$arg" in
    --quick) mode=quick ;;
    -h | --help) awk 'NR > 1 && !/^#/ { exit } NR > 1' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "dist.sh: unknown argument '$arg' (try --help)" >&2; exit 2 ;;
  esac
done
BUILD_DIR=${BUILD_DIR:-$root/build-rel}
# shellcheck source=lib.sh
. "$here/lib.sh"
REPS=${REPS:-5}
RANKS=${RANKS:-4}
THREADS=${THREADS:-1}
NET=${NET:-5us:100gbit}
APPS=${APPS:-heat-gs heat-jacobi matvec matmul jacobi}
HEAT=${HEAT:-1024 32 40}
DENSE=${DENSE:-2048 256 20}
MATMUL=${MATMUL:-512 64 4}
if [ "$mode" = quick ]; then
  REPS=1 HEAT="128 16 4" DENSE="256 32 3" MATMUL="64 16 2"
fi

bench_build heat_mpi_omp heat_mpi_weft heat_dist dense_mpi_omp dense_mpi_weft dense_dist

launch=()
if [ "$NET" = shm ]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  launch=(timeout -k 5 600 mpirun --oversubscribe --bind-to none -n "$RANKS")
else
  launch=(bash "$here/net/netrun.sh" --ranks "$RANKS" --delay "${NET%%:*}" --rate "${NET##*:}" --timeout 600 --)
fi
export OMP_NUM_THREADS=$THREADS WEFT_NUM_THREADS=$THREADS

# The command of one variant of one application (empty when its program is missing).
command_of() {
  local app=$1 variant=$2 n b s prog=
  case $app in
    heat-gs | heat-jacobi)
      read -r n b s <<<"$HEAT"
      local method=gauss-seidel
      [ "$app" = heat-jacobi ] && method=jacobi
      case $variant in
        fork-join) prog=${binary[heat_mpi_omp]:-}; [ -n "$prog" ] && echo "$prog --variant parallel-for --method $method -n $n -b $b -s $s --no-check" ;;
        tampi) prog=${binary[heat_mpi_weft]:-}; [ -n "$prog" ] && echo "$prog --method $method -n $n -b $b -s $s --no-check" ;;
        dist) prog=${binary[heat_dist]:-}; [ -n "$prog" ] && echo "$prog --method $method -n $n -b $b -s $s --no-check" ;;
        dist-ip) prog=${binary[heat_dist]:-}; [ -n "$prog" ] && echo "env WEFT_GRAPH_POLICY=iteration $prog --method $method -n $n -b $b -s $s --no-check" ;;
      esac ;;
    matvec | jacobi | matmul)
      read -r n b s <<<"$DENSE"
      [ "$app" = matmul ] && read -r n b s <<<"$MATMUL"
      case $variant in
        fork-join) prog=${binary[dense_mpi_omp]:-} ;;
        tampi) prog=${binary[dense_mpi_weft]:-} ;;
        dist) prog=${binary[dense_dist]:-} ;;
        dist-ip) prog=${binary[dense_dist]:-}; [ -n "$prog" ] && prog="$prog --variant dist-iteration" ;;
      esac
      [ -n "$prog" ] && echo "$prog --app $app -n $n -b $b -s $s --no-check" ;;
  esac
}

read -r -a variants <<<"${VARIANTS:-fork-join tampi dist dist-ip}"
declare -A times startup
weft_failed=0
out=$(mktemp)
for app in $APPS; do
  for ((rep = 0; rep < REPS; ++rep)); do
    for variant in "${variants[@]}"; do
      cmd=$(command_of "$app" "$variant")
      [ -n "$cmd" ] || continue
      # shellcheck disable=SC2086
      if "${launch[@]}" $cmd >"$out" 2>&1 && line=$(grep -m1 '^RESULT' "$out"); then
        # The whole loop, start-up included (dense_dist's seconds= leaves it out: its wall= has it).
        t=$(sed -n 's/.* wall=\([0-9.e+-]*\).*/\1/p' <<<"$line")
        [ -n "$t" ] || t=$(sed -n 's/.* seconds=\([0-9.e+-]*\).*/\1/p' <<<"$line")
        up=$(sed -n 's/.* startup\(_s\)\{0,1\}=\([0-9.e+-]*\).*/\2/p' <<<"$line")
        times[$app.$variant]+="$t "
        [ -n "$up" ] && startup[$app.$variant]+="$up "
        log "$app $variant: ${t}s${up:+ (start-up ${up}s)}"
      else
        times[$app.$variant]+="fail "
        [ "$variant" = fork-join ] || weft_failed=1
        log "$app $variant failed:"; tail -n 5 "$out" >&2
      fi
    done
  done
done
rm -f "$out"

stats() {  # median min max of the numbers given ("fail" when any run failed)
  printf '%s\n' "$@" | grep -q fail && { echo "fail"; return; }
  printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { if (NR) printf "%.4f %.4f %.4f\n", (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2), v[1], v[NR] }'
}

stamp=$(date -u +%Y-%m-%dT%H%MZ)
{
  echo "# Distributed taskiter vs hand-written MPI ($stamp)"
  echo
  bench_meta
  echo "- network: $NET; $RANKS ranks x $THREADS thread(s); REPS=$REPS; heat -n -b -s = $HEAT; dense: $DENSE; matmul: $MATMUL"
  echo
  echo "| app | variant | median s | min | max | fork-join / this | start-up s (median) |"
  echo "| --- | --- | --- | --- | --- | --- | --- |"
  for app in $APPS; do
    # shellcheck disable=SC2086
    read -r base _ _ <<<"$(stats ${times[$app.fork-join]:-fail})"
    for variant in "${variants[@]}"; do
      [ -n "${times[$app.$variant]:-}" ] || continue
      # shellcheck disable=SC2086
      read -r med lo hi <<<"$(stats ${times[$app.$variant]})"
      ratio=-
      [[ $med != fail && $base != fail ]] && ratio=$(awk -v a="$base" -v b="$med" 'BEGIN { printf "%.2f", a / b }')
      up=-
      # shellcheck disable=SC2086
      [ -n "${startup[$app.$variant]:-}" ] && read -r up _ _ <<<"$(stats ${startup[$app.$variant]})"
      echo "| $app | $variant | $med | ${lo:--} | ${hi:--} | $ratio | $up |"
    done
  done
} | if [ "$mode" = quick ]; then cat; else tee "$root/bench/results/dist-$stamp.md"; fi
# A weft run (tampi, dist) that failed or gave no result fails the script (CI's quick pass).
exit "$weft_failed"
