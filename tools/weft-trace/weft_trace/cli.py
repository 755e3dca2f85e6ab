"""Command line: weft-trace {summary,gantt,perfetto,graph,overlap} TRACE... ...

Every command takes one trace or the traces of an MPI run, one file per rank (run.trace.*):
summary, gantt, perfetto and overlap show them all, graph shows one of them (--rank)."""

from __future__ import annotations

import argparse
import json
import os
import sys

from . import __version__
from .analysis import (format_overlap, format_overlap_many, format_summary, format_summary_many, overlap,
                       overlap_many, summary, summary_many)
from .export import ExportError, write_graph, write_perfetto, write_perfetto_many
from .gantt import GanttError, write_gantt, write_gantt_many
from .reader import TraceError, load_many, time_offsets

TRACES_HELP = "trace file(s): one, or one per MPI rank of a run (run.trace.*)"
ALIGN_HELP = ("several traces: put them on one time axis by their clock (start_ns; one machine), by "
              "their own starts (several machines), or auto: the clock when their spans meet (auto)")


def _parser():
    p = argparse.ArgumentParser(
        prog="weft-trace",
        description="Analyse a weft trace file (written by a run with WEFT_TRACE=<path>).")
    p.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")

    s = sub.add_parser("summary", help="tasks, edges, discovery, work/overhead/idle, kinds, parallelism, "
                                       "critical path, steals, suspensions")
    s.add_argument("traces", nargs="+", metavar="TRACE", help=TRACES_HELP)
    s.add_argument("--json", action="store_true", help="print JSON instead of text")
    s.add_argument("--buckets", type=int, default=20, help="time slices of the parallelism profile (20)")
    s.add_argument("--align", choices=("auto", "clock", "start"), default="auto", help=ALIGN_HELP)

    g = sub.add_parser("gantt", help="Gantt chart, one row per worker (and rank) (PNG or SVG)")
    g.add_argument("traces", nargs="+", metavar="TRACE", help=TRACES_HELP)
    g.add_argument("-o", "--output", required=True, help="out.png (needs matplotlib) or out.svg")
    g.add_argument("--width", type=int, default=1600, help="pixels (1600)")
    g.add_argument("--height", type=int, default=600, help="pixels (600)")
    g.add_argument("--color", choices=("kind", "iteration"), default="kind",
                   help="colour tasks by kind (default) or by persistent-graph round")
    g.add_argument("--from", dest="t_from", type=int, metavar="NS",
                   help="window start, ns since the trace start (the earliest start of several)")
    g.add_argument("--to", dest="t_to", type=int, metavar="NS", help="window end, ns on the same axis")
    g.add_argument("--align", choices=("auto", "clock", "start"), default="auto", help=ALIGN_HELP)

    f = sub.add_parser("perfetto", help="Chrome trace-event JSON for ui.perfetto.dev")
    f.add_argument("traces", nargs="+", metavar="TRACE", help=TRACES_HELP + "; a process per rank")
    f.add_argument("-o", "--output", required=True, help="out.json")
    f.add_argument("--flows", action="store_true", help="also draw the edges as flow arrows")
    f.add_argument("--align", choices=("auto", "clock", "start"), default="auto", help=ALIGN_HELP)

    d = sub.add_parser("graph", help="the task graph as DOT or GraphML")
    d.add_argument("traces", nargs="+", metavar="TRACE", help=TRACES_HELP + "; several need --rank")
    d.add_argument("--rank", type=int, metavar="N", help="among the traces of several ranks, the one of rank N")
    d.add_argument("-o", "--output", required=True, help="out.dot or out.graphml")
    d.add_argument("--iteration", type=int, metavar="K", help="only the tasks of persistent-graph round K")
    d.add_argument("--around", type=int, metavar="TASK_ID", help="only the tasks near this task id")
    d.add_argument("--radius", type=int, default=1, metavar="R", help="edges away from --around (1)")
    d.add_argument("--keep-redirects", action="store_true", help="keep redirect nodes instead of collapsing them")

    o = sub.add_parser("overlap", help="communication time and the work overlapping it")
    o.add_argument("traces", nargs="+", metavar="TRACE", help=TRACES_HELP + "; per rank and in total")
    o.add_argument("--json", action="store_true", help="print JSON instead of text")
    return p


def _warn(trace, json_mode):
    """Reader warnings on stderr; dropped events loudly, since every figure misses them."""
    if trace.dropped:
        print(f"weft-trace: WARNING: {trace.path}: {trace.dropped} events were dropped because a trace "
              f"buffer was full; the analysis is incomplete (raise WEFT_TRACE_BUFFER)", file=sys.stderr)
    if json_mode:
        return  # the JSON carries them; text output prints them itself
    for w in trace.warnings:
        print(f"weft-trace: warning: {trace.path}: {w}", file=sys.stderr)


def _check_options(parser, args):
    """Option values that argparse cannot check alone: refused before the trace is read."""
    if args.command == "summary" and args.buckets < 1:
        parser.error("--buckets must be at least 1")
    if args.command == "graph" and args.radius < 0:
        parser.error("--radius must be 0 or more")
    if args.command == "gantt" and (args.width < 200 or args.height < 120):
        parser.error("--width must be at least 200 and --height at least 120")
    if args.command == "graph" and len(args.traces) > 1 and args.rank is None:
        # One task graph per process: the ranks' graphs are unrelated (their edges never cross).
        parser.error(f"graph draws the task graph of one trace and {len(args.traces)} were given: "
                     f"choose one with --rank N (or give one file)")


def run(args):
    traces = load_many(args.traces)
    if args.command == "graph":
        return _graph(args, traces)
    # The summary's text prints the reader's warnings itself, like JSON outputs carry them.
    quiet = args.command == "summary" or (args.command == "overlap" and args.json)
    for trace in traces:
        _warn(trace, quiet)
    if len(traces) > 1:
        return _run_many(args, traces)
    trace = traces[0]
    if args.command == "summary":
        s = summary(trace, args.buckets)
        print(json.dumps(s, indent=2) if args.json else format_summary(s))
    elif args.command == "overlap":
        o = overlap(trace)
        print(json.dumps(o, indent=2) if args.json else format_overlap(o))
    elif args.command == "gantt":
        lay = write_gantt(trace, args.output, args.width, args.height, args.color, args.t_from, args.t_to)
        print(f"{args.output}: {lay.width} x {lay.height} Gantt chart of {trace.workers} workers, "
              f"{len(lay.tasks)} task rectangles")
    elif args.command == "perfetto":
        n = write_perfetto(trace, args.output, args.flows)
        print(f"{args.output}: {n} trace events (open it in https://ui.perfetto.dev)")
    return 0


_ALIGNED = {"clock": "their clock", "start": "their starts"}


def _run_many(args, traces):
    """Several traces (the ranks of one MPI run): each one shown, then the run as a whole."""
    if args.command == "overlap":
        o = overlap_many(traces)
        print(json.dumps(o, indent=2) if args.json else format_overlap_many(o))
        return 0
    offsets, align = time_offsets(traces, args.align)
    if args.command == "summary":
        s = summary_many(traces, offsets, align, args.buckets)
        print(json.dumps(s, indent=2) if args.json else format_summary_many(s))
    elif args.command == "gantt":
        lay = write_gantt_many(traces, offsets, align, args.output, args.width, args.height, args.color,
                               args.t_from, args.t_to)
        print(f"{args.output}: {lay.width} x {lay.height} Gantt chart of {len(traces)} traces, "
              f"{len(lay.rows)} workers, {len(lay.tasks)} task rectangles (aligned on {_ALIGNED[align]})")
    elif args.command == "perfetto":
        n = write_perfetto_many(traces, offsets, args.output, args.flows)
        print(f"{args.output}: {n} trace events, a process per trace (aligned on {_ALIGNED[align]}; "
              f"open it in https://ui.perfetto.dev)")
    return 0


def _graph(args, traces):
    trace = traces[0]
    if args.rank is not None:
        chosen = [t for t in traces if t.rank == args.rank]
        if not chosen:
            ranks = ", ".join(str(t.rank) for t in traces if t.rank is not None) or "none"
            raise ExportError(f"--rank {args.rank}: no trace of that rank among the files given "
                              f"(their ranks: {ranks})")
        trace = chosen[0]
    _warn(trace, False)
    nodes, edges = write_graph(trace, args.output, args.keep_redirects, args.iteration, args.around, args.radius)
    print(f"{args.output}: {len(nodes)} tasks, {len(edges)} edges")
    return 0


def main(argv=None):
    parser = _parser()
    args = parser.parse_args(argv)
    _check_options(parser, args)
    try:
        return run(args)
    except TraceError as e:
        print(f"weft-trace: error: {e}", file=sys.stderr)
    except (GanttError, ExportError) as e:
        where = f"{args.traces[0]}: " if len(args.traces) == 1 else ""
        print(f"weft-trace: error: {where}{e}", file=sys.stderr)
    except BrokenPipeError:
        # `weft-trace summary t | head`: not an error; stdout goes nowhere so exit's flush is quiet.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except OSError as e:
        # Output files: the reader turns its own OSErrors into TraceError.
        target = e.filename or getattr(args, "output", "the output")
        print(f"weft-trace: error: cannot write {target}: {e.strerror or e}", file=sys.stderr)
    return 2
