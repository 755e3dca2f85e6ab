#!/usr/bin/env bash
# Usage: bench/nested.sh [--quick] [-h | --help]
#
# Nested parallel regions inside tasks (issue 26): the tiled Cholesky and LU of bench/omp/nested_la.c,
# whose panel tasks open `parallel num_threads(INNER)` with a barrier per column of the tile, as
# SLATE's do. The same gcc -fopenmp binary runs under each configuration:
#   gomp          GCC libgomp, OMP_MAX_ACTIVE_LEVELS=2 (nested on: threads beyond the cores)
#   gomp-flat     libgomp, OMP_MAX_ACTIVE_LEVELS=1 (only when named in CONFIGS)
#   llvm-nested   LLVM libomp (LD_PRELOAD), OMP_MAX_ACTIVE_LEVELS=2
#   llvm-flat     LLVM libomp, OMP_MAX_ACTIVE_LEVELS=1 (nested regions serialised, libomp's default)
#   weft-off      weft (LD_PRELOAD of BUILD_DIR's libweft.so), WEFT_GANG=off, OMP_MAX_ACTIVE_LEVELS=2
#   weft-nested   weft, WEFT_GANG=nested (nested teams as gang-scheduled fibers), OMP_MAX_ACTIVE_LEVELS=2
# REPS processes per cell, interleaved (every configuration once per round). The report gives the
# median (min-max) seconds of the factorisation, GFLOP/s, the peak thread count of the process
# (nested_la reads /proc/self/task in every panel once its team has met and in every update task)
# and the sizes the nested teams had, each weft row against the best peer (the fastest of the gomp
# and llvm rows: best peer median / this median, above 1 is faster) and weft-nested against
# weft-off (issue 26's targets on 2 cores: >= 1.2x weft-off, >= the best peer, no thread growth).
#
#   bench/nested.sh            N=2560, B=256, REPS=5 (about 1.5 minutes on 2 cores)
#   bench/nested.sh --quick    N=512, B=64, 1 run each (CI: proves the harness works, < 20 s)
#
# Environment:
#   BUILD_DIR    build tree (configured if new)                              [<repo>/build-rel]
#   RESULTS_DIR  where nested-<date>.{csv,md} are written (--quick: nested-quick-<date>.*)
#                                                                              [<repo>/bench/results]
#   REPS         processes per cell                                          [5, --quick: 1]
#   THREADS      OMP_NUM_THREADS values                                      [2]
#   INNER        threads of each panel's nested region                       [the row's OMP_NUM_THREADS]
#   N, B         matrix order and tile size (N a multiple of B)              [2560 256, --quick: 512 64]
#   ALGS         subset of: cholesky lu                                      [both]
#   CONFIGS      subset of the configurations above                          [all but gomp-flat]
#   TIMEOUT      seconds one run may take, then "timeout" (a cell that timed out
#                twice runs no more: "skipped")                             [120, --quick: 30]
#   LIBWEFT      the libweft.so to preload (e.g. another build's)             [BUILD_DIR's]
#   LIBOMP       LLVM's libomp.so.5                                          [found by lib.sh]
# Exit status 1 when a weft run failed (wrong residual, crash) or timed out.
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(dirname "$here")
mode=full
for arg in "$@"; do
  case "$arg" in
    --quick) mode=quick ;;
    -h | --help) awk 'NR > 1 && !/^#/ { exit } NR > 1' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "nested.sh: unknown argument '$arg' (try --help)" >&2; exit 2 ;;
  esac
done

BUILD_DIR=${BUILD_DIR:-$root/build-rel}
RESULTS_DIR=${RESULTS_DIR:-$here/results}
if [ "$mode" = quick ]; then
  REPS=${REPS:-1}; TIMEOUT=${TIMEOUT:-30}; N=${N:-512}; B=${B:-64}
else
  REPS=${REPS:-5}; TIMEOUT=${TIMEOUT:-120}; N=${N:-2560}; B=${B:-256}
fi
THREADS=${THREADS:-2}
INNER=${INNER:-}
ALGS=${ALGS:-cholesky lu}
CONFIGS=${CONFIGS:-gomp llvm-nested llvm-flat weft-off weft-nested}

# shellcheck source=lib.sh
. "$here/lib.sh"

((N > 0 && B > 0 && N % B == 0)) || die "N ($N) must be a positive multiple of B ($B)"
mkdir -p "$RESULTS_DIR" || die "cannot create $RESULTS_DIR"
bench_build nested_la
bench_find_libomp
if [ -n "${LIBWEFT:-}" ]; then
  [ -f "$LIBWEFT" ] || die "LIBWEFT=$LIBWEFT: no such file"
  libweft=$LIBWEFT
  weft_door=0
  nm -D --defined-only "$libweft" 2>/dev/null | grep ' GOMP_task' >/dev/null && weft_door=1
  ((weft_door)) || notes+=("$libweft does not export the GOMP ABI: no weft rows")
else
  bench_find_libweft
fi
la=${binary[nested_la]:-}
[ -n "$la" ] || die "nested_la could not be built (needs gcc with -fopenmp)"
stamp=$(date +%Y%m%d-%H%M%S)
prefix=nested
[ "$mode" = quick ] && prefix=nested-quick

# The environment of configuration $1 (VAR=VALUE words for env); fails when its runtime is missing.
env_of() {
  case $1 in
    gomp) echo "OMP_MAX_ACTIVE_LEVELS=2" ;;
    gomp-flat) echo "OMP_MAX_ACTIVE_LEVELS=1" ;;
    llvm-nested) [ -n "$libomp" ] && echo "LD_PRELOAD=$libomp OMP_MAX_ACTIVE_LEVELS=2" ;;
    llvm-flat) [ -n "$libomp" ] && echo "LD_PRELOAD=$libomp OMP_MAX_ACTIVE_LEVELS=1" ;;
    weft-off) ((weft_door)) && echo "LD_PRELOAD=$libweft WEFT_GANG=off OMP_MAX_ACTIVE_LEVELS=2" ;;
    weft-nested) ((weft_door)) && echo "LD_PRELOAD=$libweft WEFT_GANG=nested OMP_MAX_ACTIVE_LEVELS=2" ;;
    *) die "unknown configuration '$1' (see --help)" ;;
  esac
}
for c in $CONFIGS; do
  env_of "$c" >/dev/null || notes+=("$c: its runtime is not available here, no rows")
done

# A field NAME=value of the result line in $line.
field() { echo "$line" | tr ' ' '\n' | sed -n "s/^$1=//p"; }

csv=$RESULTS_DIR/$prefix-$stamp.csv
report=$RESULTS_DIR/$prefix-$stamp.md
echo "alg,config,threads,inner,rep,status,seconds,gflops,threads_peak,team,residual" >"$csv"
failed=0
declare -A timeouts
for t in $THREADS; do
  inner=${INNER:-$t}
  for rep in $(seq 1 "$REPS"); do
    for alg in $ALGS; do
      for c in $CONFIGS; do  # interleaved: the configurations share each moment's drift
        if ! envs=$(env_of "$c"); then continue; fi
        cell="$alg:$c:$t"
        if ((${timeouts[$cell]:-0} >= 2)); then
          echo "$alg,$c,$t,$inner,$rep,skipped,,,,," >>"$csv"
          continue
        fi
        # Inherited OMP_*/WEFT_GANG settings would change what a row means: cleared first.
        # shellcheck disable=SC2086
        out=$(timeout "$TIMEOUT" env -u OMP_MAX_ACTIVE_LEVELS -u OMP_NESTED -u OMP_THREAD_LIMIT -u OMP_DYNAMIC \
              -u WEFT_GANG -u WEFT_NUM_THREADS OMP_NUM_THREADS="$t" $envs "$la" "$alg" "$N" "$B" "$inner" 2>&1)
        rc=$?
        line=$(echo "$out" | grep '^nested_la ' | tail -n 1)
        secs=$(field seconds) gf=$(field gflops) peak=$(field threads_peak) team=$(field team) res=$(field residual)
        if ((rc == 124)); then st=timeout; timeouts[$cell]=$((${timeouts[$cell]:-0} + 1))
        elif ((rc != 0)) || [ -z "$secs" ]; then st=failed
        else st=ok; fi
        if [ "$st" != ok ]; then
          secs="" gf="" peak="" team=""
          log "$(echo "$out" | tail -n 3)"
          [[ $c == weft* ]] && failed=1
        fi
        echo "$alg,$c,$t,$inner,$rep,$st,$secs,$gf,$peak,$team,$res" >>"$csv"
        log "$alg N=$N B=$B $c $t threads (inner $inner) rep $rep: $st ${secs:+$secs s, $gf GFLOP/s, $peak threads, teams of $team}"
      done
    done
  done
done

{
  echo "# Nested parallel regions inside tasks: tiled Cholesky and LU with nested panels (issue 26)"
  echo
  bench_meta
  flag=""
  [ "$mode" = quick ] && flag=" --quick"
  echo "libweft: $libweft${LIBWEFT:+ (LIBWEFT)}; libomp: ${libomp:-none}"
  echo "command: bench/nested.sh$flag (N=$N, B=$B, REPS=$REPS, THREADS=\"$THREADS\", INNER=\"${INNER:-threads}\", CONFIGS=\"$CONFIGS\")"
  echo
  "$(bench_python)" - "$csv" <<'EOF'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
cells = {}
for r in rows:
    cells.setdefault((r["alg"], int(r["threads"]), r["config"]), []).append(r)
algs = list(dict.fromkeys(r["alg"] for r in rows))
configs = list(dict.fromkeys(r["config"] for r in rows))
threads = sorted({int(r["threads"]) for r in rows})
peers = [c for c in configs if not c.startswith("weft")]

def ok(a, t, c):
    return [r for r in cells.get((a, t, c), []) if r["status"] == "ok"]

def med(a, t, c):
    s = [float(r["seconds"]) for r in ok(a, t, c)]
    return (statistics.median(s), min(s), max(s)) if s else None

print("Seconds of the factorisation: median (min-max) of the runs. Peak threads: the most the process")
print("had (max over the runs). Teams: the sizes of the panels' nested teams (1: serialised).")
print("vs best peer: the fastest peer's median / this median (above 1: faster than every peer).")
summary = []
for a in algs:
    for t in threads:
        inner = {r["inner"] for c in configs for r in cells.get((a, t, c), [])}
        print()
        print(f"## {a}, OMP_NUM_THREADS={t}, inner threads {'/'.join(sorted(inner))}")
        print()
        print("| configuration | seconds | GFLOP/s | peak threads | teams | ok runs | vs best peer |")
        print("|---|---|---|---|---|---|---|")
        best = None
        for c in peers:
            m = med(a, t, c)
            if m and (best is None or m[0] < best[1][0]):
                best = (c, m)
        for c in configs:
            m = med(a, t, c)
            runs = cells.get((a, t, c), [])
            good = ok(a, t, c)
            if not m:
                st = "/".join(sorted({r["status"] for r in runs})) or "-"
                print(f"| {c} | {st} | | | | 0/{len(runs)} | |")
                continue
            gf = statistics.median(float(r["gflops"]) for r in good)
            peak = max(int(r["threads_peak"]) for r in good)
            teams = "/".join(sorted({r["team"] for r in good}))
            vs = f"{best[1][0] / m[0]:.2f} ({best[0]})" if best else "-"
            print(f"| {c} | {m[0]:.3f} ({m[1]:.3f}-{m[2]:.3f}) | {gf:.2f} | {peak} | {teams} | {len(good)}/{len(runs)} | {vs} |")
        on, off = med(a, t, "weft-nested"), med(a, t, "weft-off")
        parts = []
        if on and off:
            parts.append(f"weft-nested / weft-off: {off[0] / on[0]:.2f}x (target >= 1.2)")
        if on and best:
            parts.append(f"weft-nested vs best peer ({best[0]}): {best[1][0] / on[0]:.2f}x (target >= 1.0)")
        if on:
            peak = max(int(r["threads_peak"]) for r in ok(a, t, "weft-nested"))
            parts.append(f"weft-nested peak threads {peak} at {t} workers")
        if parts:
            summary.append(f"- {a}, {t} threads: " + "; ".join(parts))
if summary:
    print()
    print("## Against issue 26's targets")
    print()
    print("\n".join(summary))
EOF
  for n in "${notes[@]}"; do echo "- $n"; done
} >"$report"
cat "$report"
exit $failed
