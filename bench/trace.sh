#!/usr/bin/env bash
# Usage: bench/trace.sh [--quick] [-h | --help]
#
# What tracing costs (WEFT_TRACE): the same runs with and without a trace, interleaved.
#
#   bench/trace.sh            REPS pairs of processes per row (default 5)
#   bench/trace.sh --quick    1 pair per row, small sizes (CI: proves the harness and the writer work)
#
# Rows (micro_weft):
#   metg-5us, metg-50us   the width-8 stencil with tasks that spin 5 µs / 50 µs (metg pattern with
#                         one duration): its efficiency (useful time / wall time x workers) with and
#                         without a trace; the overhead is eff_off / eff_on - 1 (the issue's targets:
#                         <= 15% at 5 µs, <= 5% at 50 µs)
#   stencil               empty tasks, ns per task: the worst case (every event, no work to hide it)
# Each traced run writes its file (checked to be non-empty) to a temporary directory.
#
# Environment: BUILD_DIR [<repo>/build-rel], RESULTS_DIR [<repo>/bench/results], REPS [5; --quick 1],
# THREADS ["1 2"], STAMP [now]. Exit status: 0; 1 when a run failed or wrote no trace.
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(dirname "$here")
quick=0
for arg in "$@"; do
  case "$arg" in
    --quick) quick=1 ;;
    -h | --help) awk 'NR > 1 && !/^#/ { exit } NR > 1' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "trace.sh: unknown argument '$arg' (try --help)" >&2; exit 2 ;;
  esac
done
BUILD_DIR=${BUILD_DIR:-$root/build-rel}
RESULTS_DIR=${RESULTS_DIR:-$here/results}
REPS=${REPS:-$((quick ? 1 : 5))}
THREADS=${THREADS:-1 2}
STAMP=${STAMP:-$(date +%Y%m%d-%H%M%S)}
bin=$BUILD_DIR/bench/micro_weft
[ -x "$bin" ] || { echo "trace.sh: $bin not built (configure with -DWEFT_BUILD_BENCH=ON)" >&2; exit 2; }
mkdir -p "$RESULTS_DIR"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
csv=$RESULTS_DIR/trace-$STAMP.csv
echo "row,threads,rep,traced,value,trace_bytes" > "$csv"

if ((quick)); then steps_5=200; steps_50=40; stencil_n=20000; else steps_5=4000; steps_50=600; stencil_n=400000; fi
status=0
run() {  # row threads rep traced -- command...
  local row=$1 p=$2 rep=$3 traced=$4; shift 5
  local file=$tmp/$row-$p-$rep.trace out value bytes=0
  rm -f "$file"
  if ((traced)); then out=$(WEFT_TRACE=$file "$@" 2>&1); else out=$("$@" 2>&1); fi || {
    echo "trace.sh: $row threads=$p traced=$traced failed: $out" >&2; status=1; return; }
  case $row in
    metg*) value=$(sed -n 's/.*eff=[0-9]*:\([0-9.]*\).*/\1/p' <<< "$out") ;;
    *) value=$(sed -n 's/.*ns_per_task=\([0-9.]*\).*/\1/p' <<< "$out") ;;
  esac
  if ((traced)); then
    bytes=$(stat -c %s "$file" 2>/dev/null || echo 0)
    ((bytes > 64)) || { echo "trace.sh: $row threads=$p wrote no trace" >&2; status=1; }
  fi
  echo "$row,$p,$rep,$traced,$value,$bytes" >> "$csv"
}

for rep in $(seq 1 "$REPS"); do
  for p in $THREADS; do
    for traced in 0 1; do
      run metg-5us "$p" "$rep" "$traced" -- "$bin" metg -p "$p" -w 8 -t "$steps_5" --min-ns 5000 --max-ns 5000
      run metg-50us "$p" "$rep" "$traced" -- "$bin" metg -p "$p" -w 8 -t "$steps_50" --min-ns 50000 --max-ns 50000
      run stencil "$p" "$rep" "$traced" -- "$bin" stencil -p "$p" -w 8 -n "$stencil_n"
    done
  done
done

python3 - "$csv" "$RESULTS_DIR/trace-$STAMP.md" <<'EOF'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
groups = {}
for r in rows:
    if r["value"]:
        groups.setdefault((r["row"], r["threads"], r["traced"]), []).append(float(r["value"]))
out = ["| row | workers | untraced (median [min, max]) | traced | overhead | trace MB |", "|---|---|---|---|---|---|"]
for (row, p) in sorted({(k[0], k[1]) for k in groups}):
    off, on = groups.get((row, p, "0"), []), groups.get((row, p, "1"), [])
    if not off or not on:
        continue
    fmt = lambda v: f"{statistics.median(v):.3f} [{min(v):.3f}, {max(v):.3f}]"
    # metg rows give efficiency (higher is better), stencil gives ns per task (lower is better).
    m_off, m_on = statistics.median(off), statistics.median(on)
    overhead = (m_off / m_on - 1) if row.startswith("metg") else (m_on / m_off - 1)
    mb = max(int(r["trace_bytes"]) for r in rows if r["row"] == row and r["threads"] == p) / 1e6
    unit = "eff" if row.startswith("metg") else "ns/task"
    out.append(f"| {row} ({unit}) | {p} | {fmt(off)} | {fmt(on)} | {overhead * 100:+.1f}% | {mb:.1f} |")
text = "\n".join(out)
open(sys.argv[2], "w").write(text + "\n")
print(text)
EOF
echo "trace.sh: $csv"
exit $status
