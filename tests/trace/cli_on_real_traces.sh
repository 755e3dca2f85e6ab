#!/usr/bin/env bash
# tools/weft-trace on real traces: a native program (tests/support/trace_program.cpp: labels,
# dependences, suspension, communication intervals, a persistent graph), an unmodified
# gcc -fopenmp program preloaded with weft, one whose tasks open nested regions run as
# gang-scheduled members (WEFT_GANG=nested), and a run ended by SIGTERM while a task ran
# (tests/trace/helper.cpp). Every subcommand runs and every output is checked: JSON parses, DOT and
# GraphML parse, the PNG has the size asked for, the SVG is XML and draws serial time and task
# creation, and the summary's per-worker work + overhead + idle + serial equals the traced wall time.
#   cli_on_real_traces.sh <trace_program> <libweft.so> <omp program> <repo root> <trace helper>
#                         <nested omp program>
set -euo pipefail
program=$1 libweft=$2 omp_program=$3 root=$4 helper=$5 nested_program=$6
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export PYTHONPATH=$root/tools/weft-trace${PYTHONPATH:+:$PYTHONPATH}
python=python3
[ -x "$root/.venv/bin/python" ] && python=$root/.venv/bin/python
cli() { "$python" -m weft_trace "$@"; }

WEFT_NUM_THREADS=2 WEFT_TRACE=$tmp/native.trace "$program"
env -u OMP_NUM_THREADS OMP_NUM_THREADS=2 LD_PRELOAD=$libweft WEFT_TRACE=$tmp/omp.trace "$omp_program" > /dev/null
env -u OMP_NUM_THREADS OMP_NUM_THREADS=2 OMP_MAX_ACTIVE_LEVELS=4 WEFT_GANG=nested LD_PRELOAD=$libweft \
  WEFT_TRACE=$tmp/nested.trace "$nested_program" > /dev/null
status=0
WEFT_NUM_THREADS=2 WEFT_TRACE=$tmp/killed.trace "$helper" sigterm-in-task > /dev/null 2>&1 || status=$?
if [ "$status" -ne 143 ]; then
  echo "cli_on_real_traces: the helper should end by SIGTERM (status 143), not $status" >&2
  exit 1
fi

for t in native omp nested killed; do
  cli summary "$tmp/$t.trace" > "$tmp/$t.summary.txt"
  cli summary --json "$tmp/$t.trace" > "$tmp/$t.summary.json"
  cli perfetto "$tmp/$t.trace" -o "$tmp/$t.json"
  cli graph "$tmp/$t.trace" -o "$tmp/$t.dot"
  cli graph "$tmp/$t.trace" -o "$tmp/$t.graphml"
  cli gantt "$tmp/$t.trace" -o "$tmp/$t.svg" --width 900 --height 300
  if "$python" -c "import matplotlib" 2> /dev/null; then
    cli gantt "$tmp/$t.trace" -o "$tmp/$t.png" --width 1000 --height 400
  fi
  cli overlap "$tmp/$t.trace" > "$tmp/$t.overlap.txt"
done
cli graph "$tmp/native.trace" -o "$tmp/native.round2.dot" --iteration 2
cli gantt "$tmp/native.trace" -o "$tmp/native.iter.svg" --color iteration --width 900 --height 300
cli overlap --json "$tmp/native.trace" > "$tmp/native.overlap.json"

"$python" - "$tmp" <<'PY'
import json, struct, sys, xml.etree.ElementTree as ET, os
tmp = sys.argv[1]
def check(cond, what):
    if not cond:
        sys.exit(f"cli_on_real_traces: {what}")
for t in ("native", "omp", "nested", "killed"):
    s = json.load(open(f"{tmp}/{t}.summary.json"))
    text = json.dumps(s)
    check(s.get("tasks", 0) > 0, f"{t}: no tasks in the summary: {text[:400]}")
    check(len(s["breakdown"]["per_worker"]) == s["workers"] == 2, f"{t}: expected 2 workers")
    for w in s["breakdown"]["per_worker"]:
        total = w["work_ns"] + w["overhead_ns"] + w["idle_ns"] + w["serial_ns"]
        check(total == s["wall_ns"], f"{t}: worker {w['worker']}: work+overhead+idle+serial {total} != wall {s['wall_ns']}")
        # weft_init ran before the first task was created: serial time, not idle.
        check(w["serial_ns"] > 0, f"{t}: worker {w['worker']}: no serial time")
    check(s["edges"]["recorded"] > 0 or t == "nested", f"{t}: no edges")
    check(s["dropped"]["total"] == 0, f"{t}: events dropped")
    json.load(open(f"{tmp}/{t}.json"))
    dot = open(f"{tmp}/{t}.dot").read()
    check(dot.lstrip().startswith("digraph") and dot.count("{") == dot.count("}"), f"{t}: DOT malformed")
    ET.parse(f"{tmp}/{t}.graphml")
    svg = ET.parse(f"{tmp}/{t}.svg").getroot()
    check(svg.get("width", "").startswith("900") and svg.get("height", "").startswith("300"), f"{t}: SVG size")
    fills = {e.get("fill") for e in svg.iter("{http://www.w3.org/2000/svg}rect")}
    check({"#efdfb0", "#262626"} <= fills, f"{t}: the SVG draws no serial time or no task creation")
    png = f"{tmp}/{t}.png"
    if os.path.exists(png):
        head = open(png, "rb").read(24)
        check(head[:8] == b"\x89PNG\r\n\x1a\n", f"{t}: not a PNG")
        w, h = struct.unpack(">II", head[16:24])
        check((w, h) == (1000, 400), f"{t}: PNG is {w}x{h}, asked 1000x400")
    else:
        print("cli_on_real_traces: matplotlib missing, PNG not checked")
omp = json.load(open(f"{tmp}/omp.summary.json"))
check("_omp_fn" in json.dumps(omp), "omp: the outlined functions' names are not in the summary")
native = json.load(open(f"{tmp}/native.summary.json"))
text = json.dumps(native)
for label in ("post", "compute", "child", "parent", "sweep"):
    check(label in text, f"native: kind {label} missing from the summary")
# Members of gang-scheduled regions are traced as runs of the region's function, and their
# parkings at barriers as suspensions of wait kind barrier; every event names a known task.
nested = json.load(open(f"{tmp}/nested.summary.json"))
check(nested["member_runs"] > 0, f"nested: no member runs: {json.dumps(nested)[:400]}")
check(nested["suspensions"]["by_wait_kind"].get("barrier", 0) > 0,
      f"nested: no suspension at a barrier: {nested['suspensions']}")
check(not nested["warnings"], f"nested: the reader warned: {nested['warnings']}")
killed = json.load(open(f"{tmp}/killed.summary.json"))
check("signalling" in json.dumps(killed["kinds"]), "killed: the task running at the signal is not in the trace")
ov = json.load(open(f"{tmp}/native.overlap.json"))
check("MPI_Isend" in json.dumps(ov) and "MPI_Irecv" in json.dumps(ov), "overlap: request kinds missing")
print("cli_on_real_traces: all outputs checked")
PY
