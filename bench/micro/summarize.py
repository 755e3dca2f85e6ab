#!/usr/bin/env python3
"""Summarises the raw runs of bench/run.sh into a markdown table (stdlib only).

Input: the raw CSV written by run.sh, one row per run:
    variant,pattern,case,threads,rep,status,seconds,result
status is ok | timeout | failed | unsupported; result is the benchmark's key=value line (or, for
a failed run, what it printed last).

Output: one table row per (pattern, case, threads, variant): the median of the pattern's metric
with min and max over the ok runs, how many runs were ok, the ratio to weft's median in the same
(pattern, case, threads), and the median peak RSS. Every metric is lower-is-better.
"""
import argparse
import csv
import math
import statistics
import sys

# The number each pattern is judged by, and how to print it.
METRICS = {
    "indep": ("ns_per_task", "ns/task"),
    "chain": ("ns_per_task", "ns/task"),
    "stencil": ("ns_per_task", "ns/task"),
    "inoutset": ("ns_per_task", "ns/task"),
    "metg": ("metg_ns", "METG(50%) ns"),
    "pending": ("bytes_per_task", "bytes/task"),
}
REFERENCE = "weft"


def parse_result(line):
    """key=value tokens of a result line into a dict (later keys win)."""
    fields = {}
    for token in (line or "").split():
        key, sep, value = token.partition("=")
        if sep:
            fields[key] = value
    return fields


def number(text):
    """A metric value: 'none' (METG above the sweep) is infinity; junk is None."""
    if text is None:
        return None
    if text == "none":
        return math.inf
    try:
        return float(text)
    except ValueError:
        return None


def fmt(value):
    if value is None:
        return ""
    if math.isinf(value):
        return "none"
    if value >= 100:
        return f"{value:.0f}"
    if value >= 10:
        return f"{value:.1f}"
    return f"{value:.2f}"


def ratio(value, reference):
    if value is None or reference is None:
        return ""
    if math.isinf(value) and math.isinf(reference):
        return ""
    if math.isinf(value):
        return "inf"
    if math.isinf(reference) or reference <= 0:
        return ""
    return f"{value / reference:.2f}x"


def load(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def summarise(rows):
    """Groups rows in order of first appearance; returns a list of group dicts."""
    groups = {}
    order = []
    for row in rows:
        key = (row["pattern"], row["case"], row["threads"], row["variant"])
        if key not in groups:
            groups[key] = []
            order.append(key)
        groups[key].append(row)

    # Sort by (first appearance of the pattern+case, threads, first appearance of the variant).
    case_rank, variant_rank = {}, {}
    for pattern, case, _, variant in order:
        case_rank.setdefault((pattern, case), len(case_rank))
        variant_rank.setdefault(variant, len(variant_rank))
    order.sort(key=lambda k: (case_rank[(k[0], k[1])], int(k[2]) if k[2].isdigit() else 0,
                              variant_rank[k[3]]))

    out = []
    for key in order:
        pattern, case, threads, variant = key
        metric, unit = METRICS.get(pattern, ("ns_per_task", "ns/task"))
        values, rss, statuses, params, not_held = [], [], {}, set(), 0
        for row in groups[key]:
            statuses[row["status"]] = statuses.get(row["status"], 0) + 1
            if row["status"] != "ok":
                continue
            fields = parse_result(row["result"])
            v = number(fields.get(metric))
            if v is not None:
                values.append(v)
            r = number(fields.get("rss_kb"))
            if r is not None:
                rss.append(r)
            if "param" in fields:
                params.add(fields["param"])
            if fields.get("held") == "0":  # pending: the gate opened before creation ended
                not_held += 1
        total = len(groups[key])
        g = {
            "pattern": pattern, "case": case, "threads": threads, "variant": variant,
            "unit": unit, "runs": total, "ok": len(values), "statuses": statuses,
            "median": statistics.median(values) if values else None,
            "min": min(values) if values else None,
            "max": max(values) if values else None,
            "rss_mb": statistics.median(rss) / 1024 if rss else None,
            "param": ",".join(sorted(params)),
            "not_held": not_held,
        }
        out.append(g)

    # A pending row whose gate did not hold is no size of a pending task: no ratio to or from it.
    reference = {(g["pattern"], g["case"], g["threads"]): g["median"]
                 for g in out if g["variant"] == REFERENCE and not g["not_held"]}
    for g in out:
        g["ref"] = None if g["not_held"] else reference.get((g["pattern"], g["case"], g["threads"]))
    return out


def status_text(g):
    text = f"{g['ok']}/{g['runs']}"
    others = [f"{n} {s}" for s, n in sorted(g["statuses"].items()) if s != "ok"]
    if g["not_held"]:
        others.append(f"{g['not_held']} not held")
    return f"{text} ({', '.join(others)})" if others else text


def markdown(groups, title, meta, notes):
    lines = [f"# {title}", ""]
    for m in meta:
        lines.append(f"- {m}")
    if meta:
        lines.append("")
    lines += [
        "Median over the ok runs, with min and max. `vs weft` = this row's median / weft's median "
        "in the same pattern, case and threads (above 1: weft is faster or smaller). Every metric "
        "is lower-is-better; `none` = no swept duration reached 50% efficiency. pending: `not held` "
        "= the gate task opened before the producer finished (the runtime ran it on the producer, "
        "or it gave up after --gate-ms): those tasks were not all pending at once, so bytes/task "
        "understates a held task's size; peak RSS is then the figure to read.",
        "",
        "| pattern | case | threads | variant | metric | median | min | max | ok runs | vs weft | peak RSS MB |",
        "|---|---|---:|---|---|---:|---:|---:|---|---:|---:|",
    ]
    for g in groups:
        if g["ok"]:
            median, lo, hi = fmt(g["median"]), fmt(g["min"]), fmt(g["max"])
        else:  # nothing to show: say why
            median, lo, hi = max(g["statuses"], key=g["statuses"].get), "", ""
        vs = "" if g["variant"] == REFERENCE else ratio(g["median"], g["ref"])
        rss = f"{g['rss_mb']:.1f}" if g["rss_mb"] is not None else ""
        lines.append(
            f"| {g['pattern']} | `{g['case']}` | {g['threads']} | {g['variant']} | {g['unit']} "
            f"| {median} | {lo} | {hi} | {status_text(g)} | {vs} | {rss} |")
    if notes:
        lines += ["", "Notes:", ""]
        lines += [f"- {n}" for n in notes]
    return "\n".join(lines) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("csv", help="raw runs written by bench/run.sh")
    ap.add_argument("--md", help="write the markdown table here (also printed)")
    ap.add_argument("--title", default="weft micro-benchmarks")
    ap.add_argument("--meta", action="append", default=[], help="a line about the machine or build")
    ap.add_argument("--note", action="append", default=[], help="a line for the notes section")
    args = ap.parse_args(argv)

    groups = summarise(load(args.csv))
    text = markdown(groups, args.title, args.meta, args.note)
    if args.md:
        with open(args.md, "w") as f:
            f.write(text)
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
