#!/usr/bin/env python3
"""Summarises the raw runs of bench/graph.sh into markdown tables (stdlib only).

Input: the CSV written by graph.sh, one row per process:
    phase,variant,pattern,case,threads,rep,status,seconds,result
phase is `verify` (the correctness pass) or `time`; result is the key=value line of the process.

Output:
- the correctness pass: one row per process (status, verified/check, graph counters);
- per timed pattern and case: per threads and variant the median, min and max of the pattern's
  metric over the ok processes, and `/ reexec` (`/ taskiter`) = this median / weft-reexec's
  (weft-taskiter's) median at the same threads: above 1, the persistent graph is faster;
- discovery: the producer's creation time per iteration, and `discovery x faster` = non-persistent
  creation time per iteration / replayed creation time per iteration (median, min, max over the
  processes, each itself a median over its graphs);
- heat and jacobi: whether every grid of a case has the same hash (the same bits).
"""
import argparse
import csv
import math
import os
import statistics
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from summarize import fmt, number, parse_result  # noqa: E402  (the helpers of run.sh's summary)

METRICS = {
    "stencil": ("ns_per_task", "ns/task"),
    "metg": ("metg_ns", "METG(50%) ns"),
    "heat": ("ms", "ms"),
    "jacobi": ("ms", "ms"),
}
PERSISTENT = ("weft-reexec", "weft-taskiter")


def load(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def ordered(values):
    """Distinct values in order of first appearance."""
    seen, out = set(), []
    for v in values:
        if v not in seen:
            seen.add(v)
            out.append(v)
    return out


def stats(values):
    values = [v for v in values if v is not None]
    if not values:
        return None
    return {"median": statistics.median(values), "min": min(values), "max": max(values), "n": len(values)}


def ratio(value, reference):
    if value is None or reference is None or reference <= 0 or math.isinf(reference):
        return ""
    if math.isinf(value):
        return "inf"
    return f"{value / reference:.2f}x"


def int_or(text, default=0):
    try:
        return int(text)
    except (TypeError, ValueError):
        return default


def replay_text(fields):
    """graph counters of a persistent run: recordings, replayed tasks / tasks of the run."""
    if "graph_replayed" not in fields or not fields.get("runtime", "").startswith("weft-") or \
            fields.get("runtime") in ("weft-plain", "weft-serial"):
        return ""
    n = int_or(fields.get("n"))
    return f"rec {fields.get('graph_recordings', '?')}, replayed {fields.get('graph_replayed')}/{n}"


def verify_table(rows):
    rows = [r for r in rows if r["phase"] == "verify"]
    if not rows:
        return []
    bad = [r for r in rows if r["status"] != "ok"]
    lines = ["## Correctness pass", "",
             f"{len(rows) - len(bad)} of {len(rows)} processes ok. stencil/discovery: `--verify` (each body "
             "checks the stamps of the cells it reads and writes; the count of bodies and the last stamps "
             "are checked at the end); heat/jacobi: the grid equals a serial sweep bit for bit; "
             "`rec`/`replayed` = weft_get_stats' graph_recordings / graph_replayed over the run's tasks.", "",
             "| pattern | case | threads | variant | status | check | graph | seconds |",
             "|---|---|---:|---|---|---|---|---:|"]
    for r in rows:
        f = parse_result(r["result"])
        check = f.get("verified") or f.get("check") or ""
        if f.get("replay") == "none":
            check += " (replay=none)"
        if r["status"] != "ok":
            check = (check + " " + r["result"][:160]).strip()
        lines.append(f"| {r['pattern']} | `{r['case']}` | {r['threads']} | {r['variant']} | {r['status']} "
                     f"| {check} | {replay_text(f)} | {r['seconds']} |")
    return lines + [""]


def pattern_tables(rows):
    rows = [r for r in rows if r["phase"] == "time"]
    out = []
    for pattern in ordered(r["pattern"] for r in rows):
        if pattern == "discovery":
            out += discovery_table([r for r in rows if r["pattern"] == pattern])
            continue
        metric, unit = METRICS.get(pattern, ("ns_per_task", "ns/task"))
        prows = [r for r in rows if r["pattern"] == pattern]
        for case in ordered(r["case"] for r in prows):
            crows = [r for r in prows if r["case"] == case]
            out += [f"## {pattern} `{case}`", ""]
            grid = pattern in ("heat", "jacobi")
            header = f"| threads | variant | {unit} median | min | max | ok runs | / reexec | / taskiter |"
            sep = "|---:|---|---:|---:|---:|---|---:|---:|"
            if grid:
                header += " vs serial | µs/sweep |"
                sep += "---:|---:|"
            else:
                header += " graph (last run) |"
                sep += "---|"
            if pattern == "metg":
                header += " ns/task, 0 ns bodies |"
                sep += "---:|"
            out += [header, sep]
            hashes = {}
            for threads in ordered(r["threads"] for r in crows):
                trows = [r for r in crows if r["threads"] == threads]
                by_variant = {}
                for v in ordered(r["variant"] for r in trows):
                    vr = [r for r in trows if r["variant"] == v]
                    ok = [r for r in vr if r["status"] == "ok"]
                    fields = [parse_result(r["result"]) for r in ok]
                    for f in fields:
                        if "hash" in f:
                            hashes.setdefault(f["hash"], set()).add(f"{v}@{threads}")
                    by_variant[v] = {
                        "rows": vr, "ok": ok, "fields": fields,
                        "stat": stats([number(f.get(metric)) for f in fields]),
                        "sweep": stats([number(f.get("us_per_sweep")) for f in fields]),
                        "empty": stats([number(f.get("ns_per_task")) for f in fields]),
                    }
                refs = {p: (by_variant[p]["stat"] or {}).get("median") if p in by_variant else None
                        for p in PERSISTENT}
                serial = (by_variant.get("serial", {}).get("stat") or {}).get("median")
                for v, g in by_variant.items():
                    s = g["stat"]
                    statuses = {}
                    for r in g["rows"]:
                        statuses[r["status"]] = statuses.get(r["status"], 0) + 1
                    okt = f"{len(g['ok'])}/{len(g['rows'])}"
                    others = [f"{n} {st}" for st, n in sorted(statuses.items()) if st != "ok"]
                    if others:
                        okt += f" ({', '.join(others)})"
                    if s:
                        med, lo, hi = fmt(s["median"]), fmt(s["min"]), fmt(s["max"])
                    else:
                        med, lo, hi = (max(statuses, key=statuses.get) if statuses else ""), "", ""
                    m = s["median"] if s else None
                    r1 = "" if v == "weft-reexec" else ratio(m, refs["weft-reexec"])
                    r2 = "" if v == "weft-taskiter" else ratio(m, refs["weft-taskiter"])
                    line = f"| {threads} | {v} | {med} | {lo} | {hi} | {okt} | {r1} | {r2} |"
                    if grid:
                        sp = "" if (m is None or serial is None or m <= 0) else f"{serial / m:.2f}x"
                        line += f" {sp} | {fmt(g['sweep']['median']) if g['sweep'] else ''} |"
                    else:
                        line += f" {replay_text(g['fields'][-1]) if g['fields'] else ''} |"
                    if pattern == "metg":
                        line += f" {fmt(g['empty']['median']) if g['empty'] else ''} |"
                    out.append(line)
            out.append("")
            if grid and hashes:
                if len(hashes) == 1:
                    out.append(f"Grid hash: every ok run of this case has the same bits ({next(iter(hashes))}).")
                else:
                    out.append("Grid hash: **the runs disagree**: " +
                               "; ".join(f"{h}: {', '.join(sorted(w))}" for h, w in hashes.items()))
                out.append("")
    return out


def discovery_table(rows):
    lines = ["## discovery: the producer's creation time per iteration", "",
             "Per process: R non-persistent loops and R persistent graphs (re-execute, unroll 2) of I "
             "iterations, alternated; per graph the mean creation time of the recorded iterations "
             "(round 0) and of the replayed ones, per loop of all its iterations; the process reports "
             "medians over its R graphs. `create` = from the return of weft_graph_iteration() to the "
             "last submit of the iteration; `iter` = from the call of weft_graph_iteration() (its own "
             "work and waits included). Figures: median [min, max] over the processes.", "",
             "| case | threads | non-persistent create ns/iter | recording: iteration 0 | recording: round 0 "
             "ns/iter | replay create ns/iter | **discovery x faster** (create) | x faster (iter) "
             "| recording / non-persistent | ok runs |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|"]

    def cell(fields, key, suffix=""):
        s = stats([number(f.get(key)) for f in fields])
        if not s:
            return ""
        return f"{fmt(s['median'])}{suffix} [{fmt(s['min'])}, {fmt(s['max'])}]"

    for case in ordered(r["case"] for r in rows):
        for threads in ordered(r["threads"] for r in rows if r["case"] == case):
            tr = [r for r in rows if r["case"] == case and r["threads"] == threads]
            ok = [r for r in tr if r["status"] == "ok"]
            fields = [parse_result(r["result"]) for r in ok]
            lines.append(
                f"| `{case}` | {threads} | {cell(fields, 'plain_create_ns')} | {cell(fields, 'record_first_ns')} "
                f"| {cell(fields, 'record_create_ns')} "
                f"| {cell(fields, 'replay_create_ns')} | **{cell(fields, 'disc_speedup', 'x')}** "
                f"| {cell(fields, 'disc_speedup_iter', 'x')} | {cell(fields, 'record_vs_plain', 'x')} "
                f"| {len(ok)}/{len(tr)} |")
    return lines + [""]


def markdown(rows, title, meta, notes):
    lines = [f"# {title}", ""]
    lines += [f"- {m}" for m in meta]
    if meta:
        lines.append("")
    lines += [
        "Timed pass: median over the ok processes, with min and max; every metric but discovery's "
        "is lower-is-better. `/ reexec` = this row's median / weft-reexec's at the same threads "
        "(above 1: the persistent graph is faster than this row), `/ taskiter` likewise. Variants: "
        "weft-plain = the same loop as ordinary weft tasks (one taskwait at the end); weft-reexec = "
        "persistent graph, re-execute mode (default policy: immediate successor); weft-reexec-iter = the same with policy WEFT_GRAPH_ITERATION_PRIORITY; weft-taskiter = taskiter mode (the body runs for the "
        "recorded round only); weft-barrier = reexec with options.barrier = 1; tbb-rerun = oneTBB "
        "flow graph of the whole run, built once, timed on its second run; llvm-omp = micro_omp's "
        "stencil on LLVM libomp (tasks submitted every step); gomp-wavefront = OpenMP parallel for "
        "over the anti-diagonals of blocks, libgomp; serial = the kernel in a loop.", ""]
    lines += verify_table(rows)
    lines += pattern_tables(rows)
    if notes:
        lines += ["Notes:", ""]
        lines += [f"- {n}" for n in notes]
    return "\n".join(lines) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("csv", help="raw runs written by bench/graph.sh")
    ap.add_argument("--md", help="write the markdown here (also printed)")
    ap.add_argument("--title", default="weft persistent task graphs")
    ap.add_argument("--meta", action="append", default=[])
    ap.add_argument("--note", action="append", default=[])
    args = ap.parse_args(argv)
    text = markdown(load(args.csv), args.title, args.meta, args.note)
    if args.md:
        with open(args.md, "w") as f:
            f.write(text)
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
