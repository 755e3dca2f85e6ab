"""Command line: weft-trace {summary,gantt,perfetto,graph,overlap} TRACE ..."""

from __future__ import annotations

import argparse
import json
import os
import sys

from . import __version__
from .analysis import format_overlap, format_summary, overlap, summary
from .export import ExportError, write_graph, write_perfetto
from .gantt import GanttError, write_gantt
from .reader import TraceError, read_trace


def _parser():
    p = argparse.ArgumentParser(
        prog="weft-trace",
        description="Analyse a weft trace file (written by a run with WEFT_TRACE=<path>).")
    p.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")

    s = sub.add_parser("summary", help="tasks, edges, discovery, work/overhead/idle, kinds, parallelism, "
                                       "critical path, steals, suspensions")
    s.add_argument("trace", metavar="TRACE")
    s.add_argument("--json", action="store_true", help="print JSON instead of text")
    s.add_argument("--buckets", type=int, default=20, help="time slices of the parallelism profile (20)")

    g = sub.add_parser("gantt", help="Gantt chart, one row per worker (PNG or SVG)")
    g.add_argument("trace", metavar="TRACE")
    g.add_argument("-o", "--output", required=True, help="out.png (needs matplotlib) or out.svg")
    g.add_argument("--width", type=int, default=1600, help="pixels (1600)")
    g.add_argument("--height", type=int, default=600, help="pixels (600)")
    g.add_argument("--color", choices=("kind", "iteration"), default="kind",
                   help="colour tasks by kind (default) or by persistent-graph round")
    g.add_argument("--from", dest="t_from", type=int, metavar="NS", help="window start, ns since the trace start")
    g.add_argument("--to", dest="t_to", type=int, metavar="NS", help="window end, ns since the trace start")

    f = sub.add_parser("perfetto", help="Chrome trace-event JSON for ui.perfetto.dev")
    f.add_argument("trace", metavar="TRACE")
    f.add_argument("-o", "--output", required=True, help="out.json")
    f.add_argument("--flows", action="store_true", help="also draw the edges as flow arrows")

    d = sub.add_parser("graph", help="the task graph as DOT or GraphML")
    d.add_argument("trace", metavar="TRACE")
    d.add_argument("-o", "--output", required=True, help="out.dot or out.graphml")
    d.add_argument("--iteration", type=int, metavar="K", help="only the tasks of persistent-graph round K")
    d.add_argument("--around", type=int, metavar="TASK_ID", help="only the tasks near this task id")
    d.add_argument("--radius", type=int, default=1, metavar="R", help="edges away from --around (1)")
    d.add_argument("--keep-redirects", action="store_true", help="keep redirect nodes instead of collapsing them")

    o = sub.add_parser("overlap", help="communication time and the work overlapping it")
    o.add_argument("trace", metavar="TRACE")
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


def run(args):
    trace = read_trace(args.trace)
    if args.command == "summary":
        _warn(trace, True)
        s = summary(trace, args.buckets)
        print(json.dumps(s, indent=2) if args.json else format_summary(s))
    elif args.command == "overlap":
        _warn(trace, args.json)
        o = overlap(trace)
        print(json.dumps(o, indent=2) if args.json else format_overlap(o))
    elif args.command == "gantt":
        _warn(trace, False)
        lay = write_gantt(trace, args.output, args.width, args.height, args.color, args.t_from, args.t_to)
        print(f"{args.output}: {lay.width} x {lay.height} Gantt chart of {trace.workers} workers, "
              f"{len(lay.tasks)} task rectangles")
    elif args.command == "perfetto":
        _warn(trace, False)
        n = write_perfetto(trace, args.output, args.flows)
        print(f"{args.output}: {n} trace events (open it in https://ui.perfetto.dev)")
    elif args.command == "graph":
        _warn(trace, False)
        nodes, edges = write_graph(trace, args.output, args.keep_redirects, args.iteration, args.around,
                                   args.radius)
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
        print(f"weft-trace: error: {args.trace}: {e}", file=sys.stderr)
    except BrokenPipeError:
        # `weft-trace summary t | head`: not an error; stdout goes nowhere so exit's flush is quiet.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except OSError as e:
        # Output files: the reader turns its own OSErrors into TraceError.
        target = e.filename or getattr(args, "output", "the output")
        print(f"weft-trace: error: cannot write {target}: {e.strerror or e}", file=sys.stderr)
    return 2
