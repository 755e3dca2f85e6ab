#!/usr/bin/env python3
"""Summarises the raw runs of bench/suspend.sh into a markdown table (stdlib only).

Input: the CSV written by suspend.sh, one row per result line (a run prints several, one per
measurement) or, for a run that printed none, one row saying why:
    runtime,pattern,case,threads,rep,status,seconds,param,ns_per_op,unit,line

Output: one table row per (pattern, measurement, case, threads, runtime): the median of ns_per_op over
the ok runs with min and max, how many runs were ok, and for the issue-4 targets (native weft only)
whether the median meets them. Derived measurements (computed from other lines of the same process)
are marked with *.
"""
import argparse
import csv
import statistics
import sys

RUNTIME_ORDER = ["weft", "weft-omp", "gomp", "llvm-omp", "llvm-omp-kmpc"]

# Issue 4's targets, in ns, for native weft: (pattern, measurement) -> (bound, how to read it).
TARGETS = {
    ("pingpong", "untied"): (150, "suspend+resume round trip"),
    ("pingpong", "tied"): (150, "suspend+resume round trip"),
    ("yield", "switch-est"): (30, "one context switch"),
    ("pingpong", "switch-upper"): (30, "upper bound: above the target says nothing"),
    ("poller", "pass-per-call"): (20, "empty poller pass"),
}


def load(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def number(text):
    try:
        return float(text)
    except (TypeError, ValueError):
        return None


def fmt(value):
    if value is None:
        return ""
    if abs(value) >= 100:
        return f"{value:.0f}"
    if abs(value) >= 10:
        return f"{value:.1f}"
    return f"{value:.2f}"


def summarise(rows):
    # Runs per (pattern, case, threads, runtime): rep -> status (a run's lines share its status).
    runs = {}
    for row in rows:
        runs.setdefault((row["pattern"], row["case"], row["threads"], row["runtime"]), {})[row["rep"]] = row["status"]

    groups, order = {}, []
    param_rank, case_rank, pattern_rank = {}, {}, {}
    for row in rows:
        pattern, param = row["pattern"], row["param"] or "-"
        pattern_rank.setdefault(pattern, len(pattern_rank))
        param_rank.setdefault((pattern, param), len(param_rank))
        case_rank.setdefault((pattern, row["case"]), len(case_rank))
        if row["status"] != "ok" and param == "-":
            continue  # a run with no lines: counted in `runs`, shown below if nothing else is
        key = (pattern, param, row["case"], row["threads"], row["runtime"])
        if key not in groups:
            groups[key] = []
            order.append(key)
        groups[key].append(row)
    # Runtimes with no line at all for a case: one row saying why.
    shown = {(k[0], k[2], k[3], k[4]) for k in order}
    for run_key, reps in runs.items():
        if run_key not in shown:
            pattern, case, threads, runtime = run_key
            key = (pattern, "-", case, threads, runtime)
            param_rank.setdefault((pattern, "-"), len(param_rank))
            groups[key] = []
            order.append(key)

    def rank(runtime):
        return RUNTIME_ORDER.index(runtime) if runtime in RUNTIME_ORDER else len(RUNTIME_ORDER)

    order.sort(key=lambda k: (pattern_rank[k[0]], param_rank[(k[0], k[1])], case_rank[(k[0], k[2])],
                              int(k[3]) if k[3].isdigit() else 0, rank(k[4])))
    out = []
    for key in order:
        pattern, param, case, threads, runtime = key
        values, units, derived = [], set(), False
        for row in groups[key]:
            if row["status"] != "ok":
                continue
            v = number(row["ns_per_op"])
            if v is not None:
                values.append(v)
            if row["unit"]:
                units.add(row["unit"])
            if " derived=1" in row["line"]:
                derived = True
        statuses = {}
        for status in runs.get((pattern, case, threads, runtime), {}).values():
            statuses[status] = statuses.get(status, 0) + 1
        out.append({
            "pattern": pattern, "param": param, "case": case, "threads": threads, "runtime": runtime,
            "unit": ",".join(sorted(units)), "derived": derived, "values": values,
            "runs": sum(statuses.values()), "statuses": statuses,
            "median": statistics.median(values) if values else None,
            "min": min(values) if values else None, "max": max(values) if values else None,
        })
    return out


def status_text(g):
    text = f"{len(g['values'])}/{g['runs']}"
    others = [f"{n} {s}" for s, n in sorted(g["statuses"].items()) if s != "ok"]
    return f"{text} ({', '.join(others)})" if others else text


def target_text(g):
    target = TARGETS.get((g["pattern"], g["param"]))
    if not target or g["runtime"] != "weft" or g["median"] is None:
        return ""
    bound, _ = target
    if g["median"] <= bound:
        return f"<= {bound}: met"
    return f"<= {bound}: " + ("bound only" if g["param"] == "switch-upper" else "missed")


def markdown(groups, title, meta, notes):
    lines = [f"# {title}", ""]
    lines += [f"- {m}" for m in meta]
    if meta:
        lines.append("")
    lines += [
        "ns per op: median over the ok runs (one process each), with min and max; lower is better. "
        "`unit` says what one op is. * = derived from other lines of the same process (a difference or "
        "a half), not timed itself; a derived value that cannot be computed (e.g. no switch happened) "
        "is blank. `target`: issue 4's bound, native weft only. weft = micro_suspend (weft.h); "
        "gomp / llvm-omp / weft-omp = suspend_omp (gcc) on libgomp / preloaded libomp / preloaded "
        "libweft; llvm-omp-kmpc = suspend_omp built by clang on libomp's own ABI.",
        "",
        "| pattern | measurement | case | threads | runtime | unit | median ns | min | max | ok runs | target |",
        "|---|---|---|---:|---|---|---:|---:|---:|---|---|",
    ]
    for g in groups:
        if g["values"]:
            median, lo, hi = fmt(g["median"]), fmt(g["min"]), fmt(g["max"])
        elif g["statuses"] and "ok" not in g["statuses"]:
            median, lo, hi = max(g["statuses"], key=g["statuses"].get), "", ""
        else:
            median, lo, hi = "", "", ""
        name = g["param"] + ("*" if g["derived"] else "")
        lines.append(f"| {g['pattern']} | {name} | `{g['case']}` | {g['threads']} | {g['runtime']} | {g['unit']} "
                     f"| {median} | {lo} | {hi} | {status_text(g)} | {target_text(g)} |")
    if notes:
        lines += ["", "Notes:", ""]
        lines += [f"- {n}" for n in notes]
    return "\n".join(lines) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("csv", help="raw runs written by bench/suspend.sh")
    ap.add_argument("--md", help="write the markdown table here (also printed)")
    ap.add_argument("--title", default="weft task suspension")
    ap.add_argument("--meta", action="append", default=[], help="a line about the machine or build")
    ap.add_argument("--note", action="append", default=[], help="a line for the notes section")
    args = ap.parse_args(argv)
    text = markdown(summarise(load(args.csv)), args.title, args.meta, args.note)
    if args.md:
        with open(args.md, "w") as f:
            f.write(text)
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
