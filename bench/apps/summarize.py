#!/usr/bin/env python3
"""Summarizes bench/apps/run.sh's CSV: best time per variant and runtime, weft's speedup over each
peer, Cholesky GFLOP/s as a fraction of OpenBLAS's threaded dpotrf, and time-versus-grain plots.

A sample is one process: the last RESULT line it printed (repetitions inside a process warm the
caches and let a persistent graph record first). Per row (app, variant, runtime, threads, grain)
the median of the samples is reported with their min and max; a row's "best" is its fastest grain.
"""
import argparse
import csv
import statistics
import sys
from collections import defaultdict

PEERS = ("gomp", "llvm-omp", "starpu", "openblas")


def load(path):
    last = {}  # (app, variant, runtime, threads, grain, rep) -> the process's last line
    failures = defaultdict(list)
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            key = (r["app"], r["variant"], r["runtime"], int(r["threads"]), r["grain"], int(r["rep"]))
            if r["status"] != "ok":
                failures[key[:5]].append(r["status"])
                continue
            if key not in last or int(r["line"]) > int(last[key]["line"]):
                last[key] = r
    rows = defaultdict(list)
    for key, r in last.items():
        rows[key[:5]].append(r)
    return rows, failures


def runtime_label(variant, runtime):
    """The runtime a row measures: native programs name themselves (weft, starpu, openblas)."""
    if runtime != "native":
        return runtime
    if variant.startswith("weft"):
        return "weft"
    return variant  # starpu, openblas


def seconds(r):
    """Cholesky: per factorisation (a persistent run prints one line for its iters repetitions);
    the other apps: the whole solve, whose iters (sweeps, CG iterations) every variant shares."""
    s = float(r["seconds"])
    if r["app"].startswith("cholesky") and r.get("iters") not in (None, "", "-"):
        s /= max(1, int(r["iters"]))
    return s


def stats(samples):
    secs = sorted(seconds(r) for r in samples)
    gf = [float(r["gflops"]) for r in samples if r["gflops"] not in ("", "-")]
    return {
        "median": statistics.median(secs),
        "min": secs[0],
        "max": secs[-1],
        "n": len(secs),
        "gflops": statistics.median(gf) if gf else None,
    }


def fmt_s(x):
    return f"{x:.3f}" if x >= 0.1 else f"{x * 1000:.1f} ms"


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("csv")
    ap.add_argument("--md", required=True)
    ap.add_argument("--title", default="weft application benchmarks")
    ap.add_argument("--meta", action="append", default=[])
    ap.add_argument("--note", action="append", default=[])
    ap.add_argument("--plots", help="prefix of the PNG plots (time versus grain, one per app)")
    a = ap.parse_args()

    rows, failures = load(a.csv)
    table = {k: stats(v) for k, v in rows.items()}
    out = [f"# {a.title}", ""]
    out += [f"- {m}" for m in a.meta]
    out += [f"- note: {n}" for n in a.note]
    out.append("")
    out.append("Median of the processes (min..max): seconds for the whole solve (Cholesky: per factorisation); the best grain of each row.")
    out.append("")

    apps = sorted({k[0] for k in set(table) | set(failures)}, key=lambda s: ("cholesky cholesky-8k heat-gs heat-jacobi cg matvec jacobi".split() + [s]).index(s))
    threads_all = sorted({k[3] for k in table})
    speedups = []
    for app in apps:
        out.append(f"## {app}")
        out.append("")
        head = "| variant | runtime | " + " | ".join(f"{t} thr: best (grain) | GFLOP/s" for t in threads_all) + " |"
        out.append(head)
        out.append("|" + "---|" * (2 + 2 * len(threads_all)))
        best = {}  # (variant, label, threads) -> (median, grain, stats)
        for (ap_, v, rt, t, g), s in table.items():
            if ap_ != app:
                continue
            key = (v, runtime_label(v, rt), t)
            if key not in best or s["median"] < best[key][0]:
                best[key] = (s["median"], g, s)
        for v, lab in sorted({(k[0], k[1]) for k in best}):
            cells = []
            for t in threads_all:
                b = best.get((v, lab, t))
                if not b:
                    bad = [st for (ap_, vv, rt, tt, g), st in failures.items() if ap_ == app and vv == v and runtime_label(v, rt) == lab and tt == t]
                    cells += [", ".join(sorted({x for lst in bad for x in lst})) or "-", "-"]
                    continue
                m, g, s = b
                grain = "" if g == "-" else f" ({g})"
                cells.append(f"{fmt_s(m)} ({fmt_s(s['min'])}..{fmt_s(s['max'])}){grain}")
                cells.append(f"{s['gflops']:.2f}" if s["gflops"] else "-")
            out.append(f"| {v} | {lab} | " + " | ".join(cells) + " |")
        out.append("")
        # weft's best (any weft variant) against each peer's best, per thread count
        for t in threads_all:
            weft = [(b[0], v) for (v, lab, tt), b in best.items() if lab == "weft" and tt == t]
            if not weft:
                continue
            wbest, wv = min(weft)
            for peer in PEERS:
                p = [(b[0], v) for (v, lab, tt), b in best.items() if lab == peer and tt == t]
                if p:
                    pbest, pv = min(p)
                    speedups.append((app, t, wv, wbest, peer, pv, pbest))
        if app.startswith("cholesky"):
            for t in threads_all:
                ref = [b for (v, lab, tt), b in best.items() if lab == "openblas" and tt == t]
                if not ref or not ref[0][2]["gflops"]:
                    continue
                rg = ref[0][2]["gflops"]
                fr = [f"{v} on {lab} {b[2]['gflops'] / rg:.0%}" for (v, lab, tt), b in sorted(best.items()) if tt == t and b[2]["gflops"] and lab != "openblas"]
                out.append(f"- {t} thread(s): GFLOP/s as a fraction of OpenBLAS's threaded dpotrf ({rg:.2f}): " + "; ".join(fr))
            out.append("")
    if speedups:
        out.append("## weft against each peer (best weft variant / best peer variant, each at its best grain)")
        out.append("")
        out.append("| app | threads | weft (variant) | peer (variant) | peer time / weft time |")
        out.append("|---|---|---|---|---|")
        for app, t, wv, wb, peer, pv, pb in speedups:
            out.append(f"| {app} | {t} | {fmt_s(wb)} ({wv}) | {peer} {fmt_s(pb)} ({pv}) | {pb / wb:.2f}x |")
        out.append("")
    if failures:
        out.append("## runs that did not give a sample")
        out.append("")
        for (app, v, rt, t, g), st in sorted(failures.items()):
            out.append(f"- {app} {v} on {rt}, {t} thread(s), grain {g}: {', '.join(st)}")
        out.append("")
    text = "\n".join(out)
    with open(a.md, "w") as f:
        f.write(text)
    print(text)

    if a.plots:
        try:
            import matplotlib

            matplotlib.use("Agg")
            import matplotlib.pyplot as plt
        except ImportError:
            print("summarize.py: matplotlib missing, no plots", file=sys.stderr)
            return 0
        for app in apps:
            fig, axes = plt.subplots(1, len(threads_all), figsize=(6 * len(threads_all), 4.2), squeeze=False)
            for ax, t in zip(axes[0], threads_all):
                series = defaultdict(list)
                for (ap_, v, rt, tt, g), s in table.items():
                    if ap_ == app and tt == t and g != "-":
                        series[f"{v} / {runtime_label(v, rt)}"].append((int(g), s["median"]))
                for name, pts in sorted(series.items()):
                    pts.sort()
                    ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=name)
                for (ap_, v, rt, tt, g), s in table.items():
                    if ap_ == app and tt == t and g == "-":
                        ax.axhline(s["median"], linestyle="--", color="gray", label=f"{v} (no grain)")
                ax.set_xscale("log", base=2)
                ax.set_xlabel("grain (tile size or tasks per loop)")
                ax.set_ylabel("seconds (median)")
                ax.set_title(f"{app}, {t} thread(s)")
                ax.grid(True, alpha=0.3)
                ax.legend(fontsize=7)
            fig.tight_layout()
            fig.savefig(f"{a.plots}-{app}.png", dpi=110)
            plt.close(fig)
            print(f"summarize.py: wrote {a.plots}-{app}.png", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
