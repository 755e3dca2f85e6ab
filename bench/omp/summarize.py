#!/usr/bin/env python3
"""Summarises the raw runs of bench/omp/run.sh into a markdown table (stdlib only).

Input: the CSV written by omp/run.sh, one row per epcc_omp process:
    runtime,construct,threads,rep,status,overhead_ns,team,seconds,detail
status is ok | timeout | failed | mixed | wrong-runtime | wrong-threads | unavailable; overhead_ns
is the process's own median over its timed blocks.

Output: one table row per (construct, threads), one column per runtime: the median over the ok
processes with [min, max], and weft's median over the best (lowest) peer median. Lower is better.
"""
import argparse
import csv
import statistics
import sys

REFERENCE = "weft"
RUNTIME_ORDER = ["gomp", "llvm-omp", "weft"]
# below this, a peer's overhead is noise around zero: a ratio to it means nothing
RATIO_FLOOR_NS = 1.0


def number(text):
    try:
        return float(text)
    except (TypeError, ValueError):
        return None


def fmt(v):
    if v is None:
        return ""
    if abs(v) >= 100:
        return f"{v:.0f}"
    return f"{v:.1f}"


def load(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def summarise(rows):
    """Returns (constructs in order, threads in order, runtimes in order, {(c, t, r): group})."""
    constructs, threads, runtimes, groups = [], [], [], {}
    for row in rows:
        c, t, r = row["construct"], row["threads"], row["runtime"]
        for seq, item in ((constructs, c), (threads, t), (runtimes, r)):
            if item not in seq:
                seq.append(item)
        g = groups.setdefault((c, t, r), {"values": [], "statuses": {}, "runs": 0})
        g["runs"] += 1
        g["statuses"][row["status"]] = g["statuses"].get(row["status"], 0) + 1
        v = number(row["overhead_ns"])
        if row["status"] == "ok" and v is not None:
            g["values"].append(v)
    for g in groups.values():
        vals = g["values"]
        g["median"] = statistics.median(vals) if vals else None
        g["min"] = min(vals) if vals else None
        g["max"] = max(vals) if vals else None
    threads.sort(key=lambda t: int(t) if t.isdigit() else 0)
    runtimes.sort(key=lambda r: RUNTIME_ORDER.index(r) if r in RUNTIME_ORDER else len(RUNTIME_ORDER))
    return constructs, threads, runtimes, groups


def cell(g):
    if g is None:
        return ""
    others = [f"{n} {s}" for s, n in sorted(g["statuses"].items()) if s != "ok"]
    if not g["values"]:  # nothing to show: say why
        if len(g["statuses"]) == 1:
            return next(iter(g["statuses"]))
        return ", ".join(others)
    text = f"{fmt(g['median'])} [{fmt(g['min'])}, {fmt(g['max'])}]"
    if others:
        text += f" ({len(g['values'])}/{g['runs']} ok; {', '.join(others)})"
    return text


def ratio(groups, c, t, runtimes):
    ref = groups.get((c, t, REFERENCE))
    if ref is None or ref["median"] is None:
        return ""
    peers = [(groups[(c, t, r)]["median"], r) for r in runtimes
             if r != REFERENCE and (c, t, r) in groups and groups[(c, t, r)]["median"] is not None]
    if not peers:
        return ""
    best, who = min(peers)
    if best < RATIO_FLOOR_NS:
        return f"n/a ({who} {fmt(best)} ns)"
    return f"{ref['median'] / best:.2f}x ({who})"


def markdown(rows, title, meta, notes):
    constructs, threads, runtimes, groups = summarise(rows)
    lines = [f"# {title}", ""]
    lines += [f"- {m}" for m in meta]
    if meta:
        lines.append("")
    lines += [
        "Overhead per instance of the construct in ns, (t_block - t_reference) / inner, EPCC "
        "method (bench/README.md): median over the ok processes of each process's median, "
        "[min, max] over the processes. Lower is better; around 0 = the construct costs no more "
        "than its reference (noise makes small values negative). `weft / best peer` = weft's "
        "median over the lowest peer median (above 1: weft is slower); `n/a` when that peer is "
        f"below {RATIO_FLOOR_NS:g} ns. A cell without numbers says what its runs did.",
        "",
    ]
    header = ["construct", "threads"] + runtimes
    if REFERENCE in runtimes:
        header.append(f"{REFERENCE} / best peer")
    lines.append("| " + " | ".join(header) + " |")
    lines.append("|---|---:|" + "---:|" * (len(header) - 2))
    for t in threads:
        for c in constructs:
            cells = [c, t] + [cell(groups.get((c, t, r))) for r in runtimes]
            if REFERENCE in runtimes:
                cells.append(ratio(groups, c, t, runtimes))
            lines.append("| " + " | ".join(cells) + " |")

    # What did not run cleanly, with the first detail line of each kind.
    problems = []
    for row in rows:
        if row["status"] not in ("ok",):
            key = (row["runtime"], row["construct"], row["threads"], row["status"])
            detail = (row.get("detail") or "").strip()
            problems.append((key, detail))
    seen = set()
    problem_lines = []
    for (r, c, t, s), detail in problems:
        if (r, c, t, s) in seen:
            continue
        seen.add((r, c, t, s))
        if s == "unavailable":
            continue  # said once in the notes
        problem_lines.append(f"- {r} {c} t={t}: {s}" + (f": {detail[:300]}" if detail else ""))
    if notes or problem_lines:
        lines += ["", "Notes:", ""]
        lines += [f"- {n}" for n in notes]
        lines += problem_lines
    return "\n".join(lines) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("csv", help="raw runs written by bench/omp/run.sh")
    ap.add_argument("--md", help="write the markdown table here (also printed)")
    ap.add_argument("--title", default="OpenMP construct overheads, EPCC method")
    ap.add_argument("--meta", action="append", default=[], help="a line about the machine or build")
    ap.add_argument("--note", action="append", default=[], help="a line for the notes section")
    args = ap.parse_args(argv)

    text = markdown(load(args.csv), args.title, args.meta, args.note)
    if args.md:
        with open(args.md, "w") as f:
            f.write(text)
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
