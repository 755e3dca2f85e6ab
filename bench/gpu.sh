#!/usr/bin/env bash
# Usage: bench/gpu.sh [--quick] [-h | --help]
#
# The paper's B5 microbenchmark (paper 002, §3.3, Listing 1.2) on one GPU: T triplets (copy
# y[t*n:n] to the device, the O(n^2) daxpy kernel of Listing 1.1, copy y[t*n:n] back), the three
# operations of a triplet ordered, the triplets independent (bench/gpu/, built when nvcc is found):
#   weft tasks3   b5_weft tasks3: three weft tasks per triplet, inout(y[t*n]), each queues its
#                 operation on its own weft_cuda_stream() and ends with weft_cuda_iwait
#   weft fused    b5_weft fused: one task per triplet queues all three on its stream, then iwait
#   streams S     b5_streams S: hand-written CUDA, triplet t on stream t % S of S, then
#                 cudaDeviceSynchronize: the floor
# In both weft variants the main program is the producer (worker 0 of WEFT_NUM_THREADS workers).
# Each process runs a warm-up rep and REPS timed reps of all T triplets and checks y against the
# host reference. The report gives, per n, the median (min-max) microseconds per triplet (the rep's
# seconds / T) and each row's median / the best stream count's median (1.00: as fast as the floor).
#
#   bench/gpu.sh            n = 2^9 .. 2^16, T = 64, WORKERS "1 4 16", REPS=5; the report also goes
#                           to bench/results/gpu-<date>.{csv,md}. n = 2^16 dominates: a rep's kernels
#                           are (nT)^2/2 = 8.8e12 multiply-adds there, a quarter of that at 2^15
#   bench/gpu.sh --quick    n = 2^9 and 2^12, T = 16, WORKERS "1", 1 rep: proves the harness works
#                           (nothing written)
# Without a usable GPU the first run exits 77: the script prints its SKIPPED line and exits 0, as
# it does when this build has no nvcc (the programs are not defined).
#
# Environment:
#   BUILD_DIR    build tree (configured with -DWEFT_BUILD_BENCH=ON if new)       [<repo>/build-rel]
#   RESULTS_DIR  where gpu-<date>.csv and gpu-<date>.md are written              [<repo>/bench/results]
#   REPS         timed reps per process (after one warm-up rep)                   [5, --quick: 1]
#   NS           values of n                                  [512 1024 ... 65536, --quick: 512 4096]
#   T            triplets                                                        [64, --quick: 16]
#   WORKERS      WEFT_NUM_THREADS values of the weft rows                         ["1 4 16", --quick: 1]
#   VARIANTS     weft variants, subset of: tasks3 fused                           [both]
#   STREAMS      stream counts of the streams rows                                ["1 8 32"]
#   TIMEOUT      seconds one process may take, then "timeout"                     [600, --quick: 60]
#   B5_BLOCK     threads per block of the kernel, passed through                  [128]
#   WEFT_CUDA_STREAMS  pooled streams per weft worker, passed through            [32]
#   CUDA_DEVICE_MAX_CONNECTIONS  CUDA's hardware queues (streams beyond them share one), passed
#                through to every program                                        [CUDA's: 8]
# Exit status: 0 (also when skipped); 1 when a run failed (crash, timeout, wrong result); 2 when
# the harness could not run.
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(dirname "$here")
quick=0
for arg in "$@"; do
  case "$arg" in
    --quick) quick=1 ;;
    -h | --help) awk 'NR > 1 && !/^#/ { exit } NR > 1' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "gpu.sh: unknown argument '$arg' (try --help)" >&2; exit 2 ;;
  esac
done

BUILD_DIR=${BUILD_DIR:-$root/build-rel}
RESULTS_DIR=${RESULTS_DIR:-$here/results}
if ((quick)); then
  REPS=${REPS:-1}; NS=${NS:-512 4096}; T=${T:-16}; WORKERS=${WORKERS:-1}; TIMEOUT=${TIMEOUT:-60}
else
  REPS=${REPS:-5}; NS=${NS:-512 1024 2048 4096 8192 16384 32768 65536}; T=${T:-64}
  WORKERS=${WORKERS:-1 4 16}; TIMEOUT=${TIMEOUT:-600}
fi
VARIANTS=${VARIANTS:-tasks3 fused}
STREAMS=${STREAMS:-1 8 32}

# shellcheck source=lib.sh
. "$here/lib.sh"  # die, has_word, log, bench_build, bench_meta, bench_python

for v in $VARIANTS; do
  case "$v" in tasks3 | fused) ;; *) die "unknown weft variant '$v' (tasks3 fused)" ;; esac
done
for x in $NS $T $WORKERS $STREAMS $REPS; do
  [[ $x =~ ^[1-9][0-9]*$ ]] || die "'$x' is not a positive integer (NS, T, WORKERS, STREAMS, REPS)"
done

# --- build ----------------------------------------------------------------------------------------
bench_build b5_weft b5_streams
weft=${binary[b5_weft]:-}
streams=${binary[b5_streams]:-}
if [ -z "$weft" ] || [ -z "$streams" ]; then
  # Not defined in this tree (no nvcc: bench/gpu is left out) is a skip; defined but failing is not.
  probe_log=$(mktemp)
  cmake --build "$BUILD_DIR" --target b5_weft b5_streams >"$probe_log" 2>&1
  if grep -q "unknown target\|No rule to make target" "$probe_log"; then
    rm -f "$probe_log"
    echo "SKIPPED: b5_weft and b5_streams are not built in $BUILD_DIR (no CUDA toolkit or nvcc)"
    exit 0
  fi
  tail -n 20 "$probe_log" >&2
  rm -f "$probe_log"
  die "b5_weft / b5_streams failed to build"
fi

out=$(mktemp)
err=$(mktemp)
csv=$(mktemp)
report=$(mktemp)
trap 'rm -f "$out" "$err" "$csv" "$report"' EXIT

# --- the first run: is there a GPU? ---------------------------------------------------------------
timeout -k 5 "$TIMEOUT" "$streams" 1 512 1 1 >"$out" 2>"$err"
rc=$?
if [ "$rc" -eq 77 ]; then
  line=$(grep -m1 '^SKIPPED' "$out")
  echo "${line:-SKIPPED: no usable CUDA device}"
  exit 0
fi
if [ "$rc" -ne 0 ] || ! grep -q '^check ok' "$out"; then
  cat "$out" "$err" >&2
  die "the first run (b5_streams 1 512 1 1) failed: rc=$rc"
fi
device=$(sed -n 's/^# b5 streams [^,]*, block=[0-9]*, //p' "$err" | head -n 1)

# --- runs -----------------------------------------------------------------------------------------
echo "impl,variant,workers,n,T,rep,status,seconds" >"$csv"
failed=0
runs=0
start=$(date +%s)
load_start=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null)
# one process: impl variant workers n
run() {
  local impl=$1 variant=$2 workers=$3 n=$4 rc status rep=0 s cmd
  if [ "$impl" = weft ]; then
    cmd=(env WEFT_NUM_THREADS="$workers" "$weft" "$variant" "$n" "$T" "$REPS")
  else
    cmd=("$streams" "$variant" "$n" "$T" "$REPS")
  fi
  timeout -k 5 "$TIMEOUT" "${cmd[@]}" >"$out" 2>"$err"
  rc=$?
  runs=$((runs + 1))
  if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
    status=timeout
  elif [ "$rc" -eq 0 ] && grep -q '^check ok' "$out"; then
    status=ok
  else
    status=failed
  fi
  while read -r s; do
    rep=$((rep + 1))
    echo "$impl,$variant,$workers,$n,$T,$rep,$status,$s" >>"$csv"
  done < <(sed -n 's/^b5 .* seconds=\([0-9.e+-]*\)$/\1/p' "$out")
  ((rep > 0)) || echo "$impl,$variant,$workers,$n,$T,0,$status," >>"$csv"
  if [ "$status" != ok ]; then
    failed=1
    log "$impl $variant workers=$workers n=$n: $status (rc=$rc)"
    cat "$out" "$err" | grep -v '^b5 ' | tail -n 5 >&2
  else
    log "[$(($(date +%s) - start))s] $impl $variant workers=$workers n=$n: $(sed -n 's/^b5 .*seconds=//p' "$out" | tr '\n' ' ')s"
  fi
}

for n in $NS; do
  for s in $STREAMS; do run streams "$s" - "$n"; done
  for w in $WORKERS; do
    for v in $VARIANTS; do run weft "$v" "$w" "$n"; done
  done
done

# --- report ---------------------------------------------------------------------------------------
stamp=$(date +%Y%m%d-%H%M%S)
{
  echo "# B5 on one GPU: weft tasks against hand-written CUDA streams ($stamp)"
  echo
  bench_meta
  echo "gpu: ${device:-?}; driver: $(nvidia-smi --query-gpu=driver_version --format=csv,noheader 2>/dev/null | head -n 1 | grep . || echo "?")"
  echo "runs: $runs processes, T=$T, REPS=$REPS timed reps each after a warm-up, WORKERS=\"$WORKERS\", STREAMS=\"$STREAMS\", B5_BLOCK=${B5_BLOCK:-128}, WEFT_CUDA_STREAMS=${WEFT_CUDA_STREAMS:-32}, CUDA_DEVICE_MAX_CONNECTIONS=${CUDA_DEVICE_MAX_CONNECTIONS:-8}$( ((quick)) && echo ', --quick (small sizes: not a measurement)')"
  echo "load average at start / end: $load_start / $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null); $(($(date +%s) - start)) s"
  echo
  "$(bench_python)" - "$csv" <<'EOF'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
cells = {}
for r in rows:
    cells.setdefault((int(r["n"]), r["impl"], r["variant"], r["workers"]), []).append(r)
ns = sorted({k[0] for k in cells})
keys = list(dict.fromkeys((k[1], k[2], k[3]) for k in cells))  # run order: streams first

def us(n, key):  # median, min, max of microseconds per triplet, None when not all ok
    rs = cells.get((n,) + key, [])
    if not rs or any(r["status"] != "ok" or not r["seconds"] for r in rs):
        return None
    v = [float(r["seconds"]) * 1e6 / int(r["T"]) for r in rs]
    return statistics.median(v), min(v), max(v)

def name(key):
    impl, variant, workers = key
    return f"streams S={variant}" if impl == "streams" else f"weft {variant} w={workers}"

def status(n, key):
    return "/".join(sorted({r["status"] for r in cells.get((n,) + key, [])})) or "-"

best = {}
for n in ns:
    s = [(us(n, k)[0], k[1]) for k in keys if k[0] == "streams" and us(n, k)]
    best[n] = min(s) if s else None

print("Microseconds per triplet (a rep's seconds / T): median (min-max) of the reps. / best streams:")
print("this median / the fastest stream count's median at that n (1.00: the floor; above: slower).")
print()
print("| n | row | µs per triplet | / best streams |")
print("|---|---|---|---|")
for n in ns:
    for k in keys:
        if (n,) + k not in cells:
            continue
        m = us(n, k)
        if not m:
            print(f"| {n} | {name(k)} | {status(n, k)} | |")
            continue
        ratio = f"{m[0] / best[n][0]:.2f}" if best[n] else "-"
        print(f"| {n} | {name(k)} | {m[0]:.1f} ({m[1]:.1f}-{m[2]:.1f}) | {ratio} |")
weft_keys = [k for k in keys if k[0] == "weft"]
if weft_keys:
    print()
    print("Median µs per triplet of the best stream count, and each weft row's median / it:")
    print()
    print("| n | best streams | " + " | ".join(name(k) for k in weft_keys) + " |")
    print("|---|---|" + "---|" * len(weft_keys))
    for n in ns:
        b = f"{best[n][0]:.1f} (S={best[n][1]})" if best[n] else "-"
        cols = []
        for k in weft_keys:
            m = us(n, k)
            cols.append(f"{m[0] / best[n][0]:.2f}" if m and best[n] else status(n, k) if not m else "-")
        print(f"| {n} | {b} | " + " | ".join(cols) + " |")
EOF
  for note in "${notes[@]}"; do echo "- $note"; done
} >"$report"
cat "$report"
if ((!quick)); then
  mkdir -p "$RESULTS_DIR" || die "cannot create $RESULTS_DIR"
  cp "$csv" "$RESULTS_DIR/gpu-$stamp.csv"
  cp "$report" "$RESULTS_DIR/gpu-$stamp.md"
  log "gpu.sh: wrote $RESULTS_DIR/gpu-$stamp.csv and .md"
fi
exit "$failed"
