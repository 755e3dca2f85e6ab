#!/usr/bin/env python3
"""Summarizes bench/apps/run.sh's CSV: best time per variant and runtime, weft's speedup over each
peer, Cholesky GFLOP/s as a fraction of OpenBLAS's threaded dpotrf, and time-versus-grain plots.

A sample is one process: the last RESULT line it printed (repetitions inside a process warm the
caches and let a persistent graph record first). Per row (app, variant, runtime, threads, grain)
the median of the samples is reported with their min and max; a row's "best" is its fastest grain.

The MPI applications (rows with ranks=): per row (app, program, variant, runtime, WEFT_MPI_PRIORITY
policy) one column per configuration (ranks x threads per rank), weft's best against each peer's
(libgomp, LLVM libomp, ScaLAPACK), the distributed Cholesky's GFLOP/s as a fraction of ScaLAPACK's
pdpotrf, the communication-aware policies against fifo, and the correctness runs (oversubscribed
configurations, phase=correctness) by status. A run that timed out is a hang (blocking MPI inside
tasks on a runtime that cannot suspend them): "hang (timeout)".
"""
import argparse
import csv
import statistics
import sys
from collections import defaultdict

PEERS = ("gomp", "llvm-omp", "starpu", "openblas")
MPI_PEERS = ("gomp", "llvm-omp", "scalapack")
MPI_APPS = "cholesky-mpi heat-mpi-gs heat-mpi-jacobi cg-mpi".split()
POLICIES = "fifo ma1 ma2 sa fa".split()


def is_mpi(r):
    return r.get("ranks") not in (None, "", "-")


def load(path):
    """The shared-memory rows (no ranks=); load_mpi reads the others."""
    last = {}  # (app, variant, runtime, threads, grain, rep) -> the process's last line
    failures = defaultdict(list)
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            if is_mpi(r):
                continue
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


def load_mpi(path):
    """The MPI rows: per phase (timing, correctness), row key (app, program, variant, runtime label,
    policy), configuration (ranks, threads) and grain, the samples (ok processes' last lines) and the
    statuses of the processes that gave none."""
    last = {}
    failures = defaultdict(list)
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            if not is_mpi(r):
                continue
            row = (r["app"], r["program"], r["variant"], mpi_label(r["program"], r["runtime"]), r.get("policy") or "")
            key = (r.get("phase") or "timing", row, (int(r["ranks"]), int(r["threads"])), r["grain"])
            if r["status"] != "ok":
                failures[key].append(r["status"])
                continue
            rk = key + (int(r["rep"]),)
            if rk not in last or int(r["line"]) > int(last[rk]["line"]):
                last[rk] = r
    rows = defaultdict(list)
    for key, r in last.items():
        rows[key[:4]].append(r)
    return rows, failures


def mpi_label(program, runtime):
    """gomp / llvm-omp run the _mpi_omp program; weft runs it preloaded (libweft + libweft-mpi), or
    is the native _mpi_weft program or the _dist one (libweft-dist); ScaLAPACK is the reference."""
    if runtime == "weft":
        return "weft (preloaded)"
    if runtime != "native":
        return runtime
    if program.endswith("_weft"):
        return "weft (native)"
    if program.endswith("_dist"):
        return "weft (distributed taskiter)"
    return "scalapack" if "scalapack" in program else program


def status_text(st):
    return "hang (timeout)" if st == "timeout" else st


def fmt_cfg(cfg):
    return f"{cfg[0]}x{cfg[1]}"


def mpi_report(path):
    """The Markdown lines of the MPI part (none when the CSV has no MPI row)."""
    rows, failures = load_mpi(path)
    if not rows and not failures:
        return []
    table = {k: stats(v) for k, v in rows.items()}
    out = []
    timing = {k[1:]: v for k, v in table.items() if k[0] == "timing"}
    tfail = {k[1:]: v for k, v in failures.items() if k[0] == "timing"}
    order = lambda a: (MPI_APPS + [a]).index(a)
    apps = sorted({k[0][0] for k in set(timing) | set(tfail)}, key=order)
    pol_order = lambda p: (POLICIES + [p]).index(p) if p else -1
    speedups, policy_lines = [], []
    if apps:
        out.append("## Distributed applications (MPI)")
        out.append("")
        out.append("Columns: R x T = R ranks of T threads each (mpiexec -n R, -p T); median of the processes (min..max), "
                   "seconds (Cholesky: per factorisation), the slowest rank's time; the best grain of each row. "
                   "\"hang (timeout)\": blocking MPI calls inside tasks held every thread of a rank (the runtime cannot "
                   "suspend a task), recorded after HANG_TIMEOUT; [+N ...]: processes of that cell that gave no sample.")
        out.append("")
    for app in apps:
        cfgs = sorted({k[1] for k in set(timing) | set(tfail) if k[0][0] == app})
        best, bad = {}, defaultdict(list)  # (row, cfg) -> (median, grain, stats); statuses
        for (row, cfg, g), st in timing.items():
            if row[0] == app and ((row, cfg) not in best or st["median"] < best[(row, cfg)][0]):
                best[(row, cfg)] = (st["median"], g, st)
        for (row, cfg, g), sts in tfail.items():
            if row[0] == app:
                bad[(row, cfg)] += sts
        out.append(f"### {app}")
        out.append("")
        out.append("| program | variant | runtime | WEFT_MPI_PRIORITY | "
                   + " | ".join(f"{fmt_cfg(c)}: best (grain) | GFLOP/s" for c in cfgs) + " |")
        out.append("|" + "---|" * (4 + 2 * len(cfgs)))
        keys = sorted({k[0] for k in set(best) | set(bad)}, key=lambda r: (r[1], r[2], r[3], pol_order(r[4])))
        for row in keys:
            cells = []
            for c in cfgs:
                b = best.get((row, c))
                sts = bad.get((row, c), [])
                if not b:
                    cells += [", ".join(sorted({status_text(x) for x in sts})) or "-", "-"]
                    continue
                m, g, st = b
                grain = "" if g in ("-", "") else f" ({g})"
                extra = "".join(f" [+{sts.count(x)} {status_text(x)}]" for x in sorted(set(sts)))
                cells.append(f"{fmt_s(m)} ({fmt_s(st['min'])}..{fmt_s(st['max'])}){grain}{extra}")
                cells.append(f"{st['gflops']:.2f}" if st["gflops"] else "-")
            out.append(f"| {row[1]} | {row[2]} | {row[3]} | {row[4] or '-'} | " + " | ".join(cells) + " |")
        out.append("")
        for c in cfgs:
            here = {row: b for (row, cc), b in best.items() if cc == c}
            weft = [(b[0], f"{row[1]} {row[2]}" + (f" {row[4]}" if row[4] else "")) for row, b in here.items()
                    if row[3].startswith("weft")]
            if weft:
                wbest, wv = min(weft)
                for peer in MPI_PEERS:
                    p = [(b[0], row[2]) for row, b in here.items() if row[3] == peer]
                    if p:
                        pbest, pv = min(p)
                        speedups.append((app, c, wv, wbest, peer, pv, pbest))
            ref = [b for row, b in here.items() if row[3] == "scalapack" and b[2]["gflops"]]
            if app == "cholesky-mpi" and ref:
                rg = ref[0][2]["gflops"]
                fr = [f"{row[2]} on {row[3]}{' ' + row[4] if row[4] else ''} {b[2]['gflops'] / rg:.0%}"
                      for row, b in sorted(here.items()) if b[2]["gflops"] and row[3] != "scalapack"]
                out.append(f"- {fmt_cfg(c)}: GFLOP/s as a fraction of ScaLAPACK's pdpotrf ({rg:.2f}): " + "; ".join(fr))
        if app == "cholesky-mpi" and any(row[3] == "scalapack" for row, _ in best):
            out.append("")
        # communication-aware policies: the native program with --mark-sends, per configuration and grain
        pol = {(row[4], cfg, g): st for (row, cfg, g), st in timing.items()
               if row[0] == app and row[3] == "weft (native)" and row[2].endswith("+mark-sends") and row[4]}
        pfail = defaultdict(list)
        for (row, cfg, g), sts in tfail.items():
            if row[0] == app and row[3] == "weft (native)" and row[2].endswith("+mark-sends") and row[4]:
                pfail[(row[4], cfg, g)] += sts
        if pol or pfail:
            names = sorted({k[0] for k in set(pol) | set(pfail)}, key=pol_order)
            for cfg, g in sorted({k[1:] for k in set(pol) | set(pfail)}, key=lambda x: (x[0], int(x[1]) if x[1].isdigit() else 0)):
                fifo = pol.get(("fifo", cfg, g))
                cells = []
                for n in names:
                    st = pol.get((n, cfg, g))
                    if not st:
                        cells.append(", ".join(sorted({status_text(x) for x in pfail.get((n, cfg, g), [])})) or "-")
                    elif fifo:
                        cells.append(f"{fmt_s(st['median'])} ({st['median'] / fifo['median']:.2f}x)")
                    else:
                        cells.append(fmt_s(st["median"]))
                policy_lines.append((app, cfg, g, names, cells))
    if speedups:
        out.append("### MPI: weft against each peer, ScaLAPACK included (best weft row / best peer row, each at its best grain)")
        out.append("")
        out.append("| app | R x T | weft (program variant policy) | peer (variant) | peer time / weft time |")
        out.append("|---|---|---|---|---|")
        for app, c, wv, wb, peer, pv, pb in speedups:
            label = "ScaLAPACK" if peer == "scalapack" else peer
            pv = "pdpotrf" if peer == "scalapack" else pv
            out.append(f"| {app} | {fmt_cfg(c)} | {fmt_s(wb)} ({wv}) | {label} {fmt_s(pb)} ({pv}) | {pb / wb:.2f}x |")
        out.append("")
    if policy_lines:
        out.append("### Communication-aware policies (native weft, --mark-sends, WEFT_MPI_PRIORITY)")
        out.append("")
        out.append("Median seconds per policy and, in parentheses, its time / fifo's time (below 1: faster than fifo).")
        out.append("")
        heads = policy_lines[0][3]
        for app, cfg, g, names, cells in policy_lines:
            if names != heads:
                heads = None
        if heads:
            out.append("| app | R x T | grain | " + " | ".join(heads) + " |")
            out.append("|" + "---|" * (3 + len(heads)))
            for app, cfg, g, names, cells in policy_lines:
                out.append(f"| {app} | {fmt_cfg(cfg)} | {g} | " + " | ".join(cells) + " |")
        else:
            out.append("| app | R x T | grain | policy: time (/ fifo) |")
            out.append("|---|---|---|---|")
            for app, cfg, g, names, cells in policy_lines:
                out.append(f"| {app} | {fmt_cfg(cfg)} | {g} | " + "; ".join(f"{n}: {c}" for n, c in zip(names, cells)) + " |")
        out.append("")
    # correctness: the oversubscribed configurations, one process per row, checks on
    corr = defaultdict(list)
    for (ph, row, cfg, g), sts in failures.items():
        if ph == "correctness":
            corr[(row, cfg)] += [status_text(x) for x in sts]
    for (ph, row, cfg, g), v in rows.items():
        if ph == "correctness":
            corr[(row, cfg)] += ["ok"] * len(v)
    if corr:
        ccfgs = sorted({k[1] for k in corr})
        out.append("### MPI correctness runs (oversubscribed: one process per row, the checks on)")
        out.append("")
        out.append("| app | program | variant | runtime | WEFT_MPI_PRIORITY | " + " | ".join(fmt_cfg(c) for c in ccfgs) + " |")
        out.append("|" + "---|" * (5 + len(ccfgs)))
        for row in sorted({k[0] for k in corr}, key=lambda r: ((MPI_APPS + [r[0]]).index(r[0]), r[1], r[2], r[3], pol_order(r[4]))):
            cells = [", ".join(sorted(set(corr.get((row, c), [])))) or "-" for c in ccfgs]
            out.append(f"| {row[0]} | {row[1]} | {row[2]} | {row[3]} | {row[4] or '-'} | " + " | ".join(cells) + " |")
        out.append("")
    bad = sorted((k, v) for k, v in failures.items() if k[0] == "timing")
    if bad:
        out.append("### MPI runs that did not give a sample")
        out.append("")
        for (ph, row, cfg, g), sts in bad:
            pol = f" WEFT_MPI_PRIORITY={row[4]}" if row[4] else ""
            out.append(f"- {row[0]} {row[1]} {row[2]} on {row[3]}{pol}, {fmt_cfg(cfg)}, grain {g}: "
                       + ", ".join(status_text(x) for x in sts))
        out.append("")
    return out


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
    if table or failures:
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
    out += mpi_report(a.csv)
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
