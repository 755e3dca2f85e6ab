"""Exports: Chrome trace-event JSON for ui.perfetto.dev, and the task graph as DOT or GraphML."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from collections import deque

from .analysis import fmt_ns, task_graph
from .reader import CATEGORY_NAMES, WAIT_KINDS


class ExportError(Exception):
    pass


# ----- Perfetto / Chrome trace events ------------------------------------------------------------

def _us(ns):
    # Trace-event timestamps are microseconds; a float keeps the nanoseconds (3 decimals).
    return ns / 1000


def perfetto_events(trace, flows=False, pid=None, offset=0, ids=""):
    """Yields the trace events (dicts), threads' metadata first. Several traces go in one file as
    several processes: `pid` apart, times moved by `offset` ns, async and flow ids prefixed by `ids`
    (ids are global in the trace-event format)."""
    pid = trace.pid if pid is None else pid
    name = f"rank {trace.rank}" if trace.rank is not None else f"weft (pid {trace.pid})"
    yield {"ph": "M", "pid": pid, "tid": 0, "name": "process_name", "args": {"name": name}}
    if trace.rank is not None:
        yield {"ph": "M", "pid": pid, "tid": 0, "name": "process_sort_index", "args": {"sort_index": trace.rank}}

    def ts(ns):
        return _us(ns + offset)

    for buf in range(trace.workers + 1):
        yield {"ph": "M", "pid": pid, "tid": buf, "name": "thread_name", "args": {"name": trace.buffer_name(buf)}}
        yield {"ph": "M", "pid": pid, "tid": buf, "name": "thread_sort_index", "args": {"sort_index": buf}}

    for buf in range(trace.workers + 1):
        for b, e, tid in trace.segments[buf]:
            task = trace.task(tid)
            args = {"task": tid, "parent": task.parent, "round": task.round}
            if task.node is not None:
                args["node"] = task.node
            if task.counters:
                args["counters"] = {str(k): v for k, v in sorted(task.counters.items())}
            yield {"ph": "X", "pid": pid, "tid": buf, "ts": ts(b), "dur": _us(e - b),
                   "name": trace.task_kind(task), "cat": "task", "args": args}
        for b, e in trace.idle[buf]:
            yield {"ph": "X", "pid": pid, "tid": buf, "ts": ts(b), "dur": _us(e - b), "name": "idle", "cat": "idle"}

    # A suspended task is not on any thread: an async slice, so thread slices still nest.
    for n, s in enumerate(trace.suspensions):
        task = trace.task(s.task)
        name = f"suspended: {trace.task_kind(task)}"
        end = s.end if s.end is not None else trace.end_ns
        common = {"pid": pid, "tid": s.worker, "cat": "suspended", "name": name, "id": f"{ids}s{n}"}
        yield dict(common, ph="b", ts=ts(s.begin),
                   args={"task": s.task, "wait": WAIT_KINDS.get(s.wait, str(s.wait))})
        yield dict(common, ph="e", ts=ts(end))

    # Intervals that never ended are drawn to the end of the trace.
    for n, iv in enumerate(trace.intervals + trace.unended_intervals):
        cat = CATEGORY_NAMES.get(trace.kind_category(iv.kind), "user")
        common = {"pid": pid, "tid": iv.begin_buffer, "cat": cat, "name": trace.kind_name(iv.kind), "id": f"{ids}i{n}"}
        yield dict(common, ph="b", ts=ts(iv.begin), args={"id": iv.id, "value": iv.begin_value})
        if iv.end is None:
            yield dict(common, ph="e", ts=ts(max(trace.end_ns, iv.begin)), args={"unfinished": True})
        else:
            yield dict(common, ph="e", ts=ts(iv.end), args={"value": iv.end_value})

    for t, buf, value, kind in trace.marks:
        yield {"ph": "i", "s": "t", "pid": pid, "tid": buf, "ts": ts(t), "name": trace.kind_name(kind),
               "cat": "mark", "args": {"value": value}}
    for t, buf, victim, tid in trace.steals:
        yield {"ph": "i", "s": "t", "pid": pid, "tid": buf, "ts": ts(t), "name": "steal", "cat": "steal",
               "args": {"victim": victim, "task": tid}}

    if flows:
        # An arrow from the end of the predecessor's last slice to the start of the successor's first.
        last = {}
        first = {}
        for buf in range(trace.workers + 1):
            for b, e, tid in trace.segments[buf]:
                if tid not in first or b < first[tid][0]:
                    first[tid] = (b, buf)
                if tid not in last or e > last[tid][0]:
                    last[tid] = (e, buf)
        graph = task_graph(trace, collapse=True)
        for n, (p, s) in enumerate(graph.edges):
            if p in last and s in first:
                # Half a nanosecond before the end, so the start binds inside the slice.
                yield {"ph": "s", "pid": pid, "tid": last[p][1], "ts": ts(last[p][0]) - 0.0005,
                       "name": "edge", "cat": "edge", "id": f"{ids}{n}" if ids else n}
                yield {"ph": "f", "bp": "e", "pid": pid, "tid": first[s][1], "ts": ts(first[s][0]),
                       "name": "edge", "cat": "edge", "id": f"{ids}{n}" if ids else n}


def _write_events(path, events):
    """Streams the JSON: a trace of millions of events does not need a list of dicts in memory."""
    count = 0
    with open(path, "w", encoding="utf-8") as f:
        f.write('{"displayTimeUnit": "ns", "traceEvents": [\n')
        for event in events:
            f.write(("" if count == 0 else ",\n") + json.dumps(event, separators=(",", ":")))
            count += 1
        f.write("\n]}\n")
    return count


def write_perfetto(trace, path, flows=False):
    return _write_events(path, perfetto_events(trace, flows))


def write_perfetto_many(traces, offsets, path, flows=False):
    """One process per trace (rank), on the common time axis of reader.time_offsets. The processes'
    pids are the traced programs' own, unless two traces share one (different machines): then
    1, 2, ... in the traces' order."""
    pids = [t.pid for t in traces]
    if len(set(pids)) < len(pids):
        pids = list(range(1, len(traces) + 1))

    def events():
        for trace, pid, offset in zip(traces, pids, offsets):
            yield from perfetto_events(trace, flows, pid, offset, ids=f"{trace.tag}.")

    return _write_events(path, events())


# ----- task graph --------------------------------------------------------------------------------

def select_graph(trace, keep_redirects=False, iteration=None, around=None, radius=1):
    """The task graph to export: redirect nodes collapsed unless kept, then restricted to one
    persistent round, then to the tasks within `radius` edges (either direction) of `around`."""
    graph = task_graph(trace, collapse=not keep_redirects)
    nodes = set(graph.nodes)
    if iteration is not None:
        nodes = {n for n in nodes if trace.task(n).round == iteration}
    if around is not None:
        if around not in nodes:
            why = "" if 1 <= around <= len(trace.tasks) else f" (task ids run from 1 to {len(trace.tasks)})"
            raise ExportError(f"task {around} is not in the graph{why}")
        neighbours = {}
        for p, s in graph.edges:
            if p in nodes and s in nodes:
                neighbours.setdefault(p, []).append(s)
                neighbours.setdefault(s, []).append(p)
        distance = {around: 0}
        todo = deque([around])
        while todo:  # breadth-first: each task is reached at its shortest distance
            n = todo.popleft()
            if distance[n] == radius:
                continue
            for m in neighbours.get(n, ()):
                if m not in distance:
                    distance[m] = distance[n] + 1
                    todo.append(m)
        nodes = set(distance)
    edges = {(p, s): how for (p, s), how in graph.edges.items() if p in nodes and s in nodes}
    return sorted(nodes), edges


def _dot_string(text):
    """A DOT double-quoted string: backslash and quote escaped, no raw newlines."""
    text = text.replace("\\", "\\\\").replace('"', '\\"')
    return '"' + text.replace("\r", " ").replace("\n", " ") + '"'


EDGE_STYLE = {"recorded": "", "replay": ' [color="#1f77b4"]', "cyclic": ' [style=dashed, color="#d62728"]',
              "collapsed": ' [color="#7f7f7f"]'}


def write_dot(trace, nodes, edges, path):
    lines = ["digraph weft {", '  node [shape=box, fontname="sans-serif", fontsize=10];']
    for n in nodes:
        task = trace.task(n)
        # Two lines: the kind, then the body time (and the round of a replayed task). The DOT
        # escape \\n is added after quoting the kind, which may itself hold backslashes.
        second = fmt_ns(task.duration) + (f", round {task.round}" if task.round else "")
        label = _dot_string(trace.task_kind(task))[:-1] + "\\n" + second + '"'
        extra = ", shape=diamond" if task.is_redirect else ""
        lines.append(f'  "{n}" [label={label}{extra}, tooltip="task {n}"];')
    for (p, s), how in sorted(edges.items()):
        lines.append(f'  "{p}" -> "{s}"{EDGE_STYLE.get(how, "")};')
    lines.append("}")
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")


GRAPHML_NS = "http://graphml.graphdrawing.org/xmlns"
XSI_NS = "http://www.w3.org/2001/XMLSchema-instance"


def _xml_text(text):
    # XML 1.0 cannot carry most control characters, whatever the escaping.
    return "".join(c if c in "\t\n\r" or ord(c) >= 0x20 else " " for c in text)


def write_graphml(trace, nodes, edges, path):
    ET.register_namespace("", GRAPHML_NS)
    ET.register_namespace("xsi", XSI_NS)

    def q(tag):  # a tag name in the GraphML namespace
        return f"{{{GRAPHML_NS}}}{tag}"

    root = ET.Element(q("graphml"), {f"{{{XSI_NS}}}schemaLocation": f"{GRAPHML_NS} {GRAPHML_NS}/1.0/graphml.xsd"})
    keys = [("label", "node", "string"), ("kind", "node", "string"), ("duration_ns", "node", "long"),
            ("round", "node", "int"), ("node", "node", "int"), ("worker", "node", "int"),
            ("redirect", "node", "boolean"), ("edge_kind", "edge", "string")]
    for name, domain, typ in keys:
        ET.SubElement(root, q("key"), {"id": name, "for": domain, "attr.name": name, "attr.type": typ})
    graph = ET.SubElement(root, q("graph"), {"id": "weft", "edgedefault": "directed"})

    def data(parent, key, value):
        ET.SubElement(parent, q("data"), {"key": key}).text = _xml_text(str(value))

    for n in nodes:
        task = trace.task(n)
        node = ET.SubElement(graph, q("node"), {"id": f"t{n}"})
        data(node, "label", f"{trace.task_kind(task)} ({fmt_ns(task.duration)})")
        data(node, "kind", trace.task_kind(task))
        data(node, "duration_ns", task.duration)
        data(node, "round", task.round)
        if task.node is not None:
            data(node, "node", task.node)
        if task.worker is not None:
            data(node, "worker", task.worker)
        data(node, "redirect", "true" if task.is_redirect else "false")
    for (p, s), how in sorted(edges.items()):
        edge = ET.SubElement(graph, q("edge"), {"source": f"t{p}", "target": f"t{s}"})
        data(edge, "edge_kind", how)
    ET.indent(root)
    ET.ElementTree(root).write(path, encoding="utf-8", xml_declaration=True)


def write_graph(trace, path, keep_redirects=False, iteration=None, around=None, radius=1):
    suffix = str(path).lower().rsplit(".", 1)[-1] if "." in str(path) else ""
    if suffix not in ("dot", "gv", "graphml"):
        raise ExportError(f"cannot tell the graph format of {path}: name it .dot or .graphml")
    nodes, edges = select_graph(trace, keep_redirects, iteration, around, radius)
    if suffix == "graphml":
        write_graphml(trace, nodes, edges, path)
    else:
        write_dot(trace, nodes, edges, path)
    return nodes, edges
