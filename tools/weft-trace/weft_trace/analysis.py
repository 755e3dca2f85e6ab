"""Metrics computed from a `Trace`: time breakdown, discovery, kinds, parallelism, task graph,
critical path and communication overlap.

Times are integer nanoseconds relative to the start of the trace, and the trace spans
[0, end_ns]. Interval sets are kept as sorted lists of disjoint (begin, end) pairs and combined by
sweeps, so every metric is linear (or n log n) in the size of the trace.
"""

from __future__ import annotations

from bisect import bisect_right
from collections import defaultdict

from .reader import CATEGORY_COMM, CATEGORY_NAMES, WAIT_KINDS


# ----- interval sets -----------------------------------------------------------------------------

def union(intervals, lo=None, hi=None):
    """Sorted disjoint union of (begin, end) pairs, clipped to [lo, hi] when given."""
    out = []
    for b, e in sorted(intervals):
        if lo is not None and b < lo:
            b = lo
        if hi is not None and e > hi:
            e = hi
        if e <= b:
            continue
        if out and b <= out[-1][1]:
            if e > out[-1][1]:
                out[-1][1] = e
        else:
            out.append([b, e])
    return [(b, e) for b, e in out]


def measure(intervals):
    return sum(e - b for b, e in intervals)


def intersection_measure(xs, ys):
    """Total length of the intersection of two sorted disjoint interval lists."""
    total = i = j = 0
    while i < len(xs) and j < len(ys):
        b = max(xs[i][0], ys[j][0])
        e = min(xs[i][1], ys[j][1])
        if e > b:
            total += e - b
        if xs[i][1] < ys[j][1]:
            i += 1
        else:
            j += 1
    return total


# ----- per-worker time -------------------------------------------------------------------------

def busy_intervals(trace, worker):
    """When `worker` runs a task body (segments are already innermost-only, so never overlap).
    Kept on the trace: breakdown, parallelism and overlap all sweep over them."""
    key = ("busy", worker)
    if key not in trace.cache:
        trace.cache[key] = union(((s, e) for s, e, _ in trace.segments[worker]), 0, trace.end_ns)
    return trace.cache[key]


def ready_intervals(trace):
    """When at least one task is ready: from task_ready to its first task_start (or the end),
    over all workers. Redirect nodes are not work and are left out."""
    spans = []
    for task in trace.tasks:
        if task.ready_time is None or task.is_redirect:
            continue
        end = task.start_time if task.start_time is not None else trace.end_ns
        spans.append((task.ready_time, end))
    return union(spans, 0, trace.end_ns)


def serial_intervals(trace):
    """When no task is in flight, on any worker: the program's serial code before, between and
    after its parallel work (and the runtime's start and end). A task is in flight from its
    task_create to its last task_end, or to the end of the trace when it was submitted and never
    ended; a task never submitted (discarded) only at its creation. Redirect nodes live inside
    their tasks' lives and are left out. Ready and running time counts as in flight whatever the
    events say, so that serial time never overlaps work or overhead."""
    key = "serial"
    if key not in trace.cache:
        spans = []
        for task in trace.tasks:
            if task.is_redirect:
                continue
            if task.end_time is not None:
                spans.append((task.create_time, task.end_time))
            elif task.submit_time is not None:
                spans.append((task.create_time, trace.end_ns))
        spans.extend(ready_intervals(trace))
        for w in range(trace.workers):
            spans.extend(busy_intervals(trace, w))
        serial, last = [], 0
        for b, e in union(spans, 0, trace.end_ns):
            if b > last:
                serial.append((last, b))
            last = e
        if trace.end_ns > last:
            serial.append((last, trace.end_ns))
        trace.cache[key] = serial
    return trace.cache[key]


BREAKDOWN_KEYS = ("work_ns", "overhead_ns", "idle_ns", "serial_ns")


def breakdown(trace):
    """Work, overhead, idle and serial time of each worker; they sum to end_ns exactly.

    Work and overhead are the paper's (section 2.3.1). The paper's idle time is split in two: idle,
    outside task bodies while no task is ready but some are in flight (waiting on dependences,
    children or events), and serial, while no task is in flight at all (serial_intervals), the
    same for every worker: the program's serial code is not the runtime failing to find work."""
    wall = trace.end_ns
    ready = ready_intervals(trace)
    ready_total = measure(ready)
    serial = measure(serial_intervals(trace))
    rows = []
    for w in range(trace.workers):
        busy = busy_intervals(trace, w)
        work = measure(busy)
        overhead = ready_total - intersection_measure(ready, busy)
        rows.append({"worker": w, "work_ns": work, "overhead_ns": overhead,
                     "idle_ns": wall - work - overhead - serial, "serial_ns": serial})
    n = max(trace.workers, 1)
    average = {key: sum(r[key] for r in rows) / n for key in BREAKDOWN_KEYS}
    return {"wall_ns": wall, "ready_ns": ready_total, "per_worker": rows, "average": average}


def discovery(trace):
    """Per creating thread: sum of task_submit - task_create (redirect nodes are made inside
    another task's submit, so counting them would count that time twice; members of nested
    regions are not discovered)."""
    per = defaultdict(lambda: [0, 0])
    for task in trace.tasks:
        if task.submit_time is None or task.is_redirect or task.is_member:
            continue
        entry = per[task.create_buffer]
        entry[0] += task.submit_time - task.create_time
        entry[1] += 1
    rows = [{"buffer": trace.buffer_name(buf), "worker": buf if buf < trace.workers else None,
             "discovery_ns": ns, "tasks": count} for buf, (ns, count) in sorted(per.items())]
    return {"per_thread": rows, "total_ns": sum(r["discovery_ns"] for r in rows)}


def kind_stats(trace):
    """Body durations per kind (label if any), over the tasks that started; most time first."""
    per = defaultdict(list)
    for task in trace.tasks:
        if task.start_time is not None and not task.is_redirect:
            per[trace.task_kind(task)].append(task.duration)
    rows = []
    for name, durations in per.items():
        total = sum(durations)
        rows.append({"kind": name, "count": len(durations), "total_ns": total,
                     "mean_ns": total / len(durations), "min_ns": min(durations), "max_ns": max(durations)})
    rows.sort(key=lambda r: (-r["total_ns"], r["kind"]))
    return rows


def parallelism(trace, buckets=20):
    """Tasks running at once: the average, its profile over `buckets` equal time slices, and the
    time spent with exactly k tasks running."""
    wall = trace.end_ns
    buckets = max(1, min(buckets, wall)) if wall else 1
    edges = [i * wall // buckets for i in range(buckets + 1)]
    per_bucket = [0] * buckets
    steps = []
    total = 0
    for w in range(trace.workers):
        for b, e in busy_intervals(trace, w):
            total += e - b
            steps.append((b, 1))
            steps.append((e, -1))
            # Spread the interval over the slices it crosses.
            i = max(bisect_right(edges, b) - 1, 0)
            while i < buckets and edges[i] < e:
                overlap = min(e, edges[i + 1]) - max(b, edges[i])
                if overlap > 0:
                    per_bucket[i] += overlap
                i += 1
    profile = []
    for i in range(buckets):
        width = edges[i + 1] - edges[i]
        profile.append({"begin_ns": edges[i], "end_ns": edges[i + 1],
                        "running": per_bucket[i] / width if width else 0.0})
    # Time with exactly k running: sweep over the +1/-1 steps.
    at = [0] * (trace.workers + 1)
    steps.sort()
    running, last = 0, 0
    for t, delta in steps:
        at[running] += t - last
        running += delta
        last = t
    at[running] += wall - last
    return {"average": total / wall if wall else 0.0, "profile": profile,
            "distribution": [{"running": k, "time_ns": ns} for k, ns in enumerate(at)]}


# ----- task graph --------------------------------------------------------------------------------

class TaskGraph:
    """Nodes are task ids; `edges` maps (pred, succ) -> how it was found: 'recorded', 'replay'
    (graph_edge in a round), 'cyclic' (graph_edge from round r to r+1), 'collapsed' (through
    redirect nodes)."""

    def __init__(self, nodes, edges):
        self.nodes = nodes
        self.edges = edges


def task_graph(trace, collapse=True):
    """All tasks with the recorded and the expanded persistent-graph edges; with `collapse`,
    redirect nodes are removed and pred -> redirect -> ... -> succ becomes pred -> succ."""
    edges = {}
    for p, s in trace.edges:
        if p != s:
            edges.setdefault((p, s), "recorded")
    for p, s, cyclic in trace.replay_edges:
        edges.setdefault((p, s), "cyclic" if cyclic else "replay")
    nodes = [t.id for t in trace.tasks]
    redirect = {t.id for t in trace.tasks if t.is_redirect}
    if not collapse or not redirect:
        return TaskGraph(nodes, edges)

    succ = defaultdict(list)
    for p, s in edges:
        succ[p].append(s)
    reach = {}  # redirect node -> the user tasks reached from it through redirect nodes only

    def through(r):
        # Iterative depth-first walk: chains of redirect nodes can be long.
        if r in reach:
            return reach[r]
        found, seen, todo = set(), {r}, [r]
        while todo:
            x = todo.pop()
            for y in succ.get(x, ()):
                if y not in redirect:
                    found.add(y)
                elif y in reach:
                    found |= reach[y]
                elif y not in seen:
                    seen.add(y)
                    todo.append(y)
        reach[r] = found
        return found

    # Direct edges first, so an edge both recorded and implied through a redirect node says
    # 'recorded'.
    out = {(p, s): how for (p, s), how in edges.items() if p not in redirect and s not in redirect}
    for (p, s) in edges:
        if p not in redirect and s in redirect:
            for x in through(s):
                if x != p:
                    out.setdefault((p, x), "collapsed")
    return TaskGraph([n for n in nodes if n not in redirect], out)


def critical_path(trace):
    """Longest path through the task graph (recorded and replayed edges), a task weighing its body
    duration. Redirect nodes weigh their (nil) duration, so the graph need not be collapsed, and
    duplicate edges do not change a longest path, so the edge lists are used as they are."""
    n_tasks = len(trace.tasks)
    succ = [[] for _ in range(n_tasks + 1)]  # indexed by task id
    indegree = [0] * (n_tasks + 1)
    for edges in (trace.edges, trace.replay_edges):
        for edge in edges:
            p, s = edge[0], edge[1]
            if p != s:
                succ[p].append(s)
                indegree[s] += 1
    weight = [0] + [t.duration for t in trace.tasks]
    # A task that opens a gang-scheduled region runs its master member on its own context: the
    # master's time is the task's (the other members run beside it, as its children would).
    for t in trace.tasks:
        if t.is_member and t.parent and not trace.tasks[t.parent - 1].is_member:
            weight[t.parent] += t.duration
    best = {}   # task id -> (longest path ending at it, predecessor on that path)
    order = [n for n in range(1, n_tasks + 1) if indegree[n] == 0]
    for n in order:
        best[n] = (weight[n], 0)
    i = 0
    while i < len(order):  # Kahn's topological order; `order` grows as nodes become free
        n = order[i]
        i += 1
        length = best[n][0]
        for s in succ[n]:
            candidate = length + weight[s]
            if s not in best or candidate > best[s][0]:
                best[s] = (candidate, n)
            indegree[s] -= 1
            if indegree[s] == 0:
                order.append(s)
    cyclic = n_tasks - len(order)
    if not order:
        return {"length_ns": 0, "tasks": [], "cycle_tasks": cyclic}
    end = max(order, key=lambda n: best[n][0])
    path = []
    n = end
    while n:
        path.append(n)
        n = best[n][1]
    path.reverse()
    return {"length_ns": best[end][0], "tasks": path, "cycle_tasks": cyclic}


# ----- communication overlap ---------------------------------------------------------------------

class WorkCurve:
    """Cumulative work of all workers: at(t) is the task-body time of all workers in [0, t]."""

    def __init__(self, trace):
        steps = defaultdict(int)
        for w in range(trace.workers):
            for b, e in busy_intervals(trace, w):
                steps[b] += 1
                steps[e] -= 1
        self.times, self.values, self.slopes = [], [], []
        value = slope = 0
        last = 0
        for t in sorted(steps):
            value += slope * (t - last)
            slope += steps[t]
            self.times.append(t)
            self.values.append(value)
            self.slopes.append(slope)
            last = t

    def at(self, t):
        i = bisect_right(self.times, t) - 1
        if i < 0:
            return 0
        return self.values[i] + self.slopes[i] * (t - self.times[i])


def overlap(trace):
    """Paper, section 4.1: per request r, c(r) = its duration and ov(r) = the work done on all
    workers during it; C = sum c, W = sum ov, ratio = W / (workers * C)."""
    curve = WorkCurve(trace)
    wall = trace.end_ns
    per = defaultdict(lambda: [0, 0, 0])  # kind -> [requests, C, W]
    for iv in trace.intervals:
        if trace.kind_category(iv.kind) != CATEGORY_COMM:
            continue
        b, e = max(iv.begin, 0), min(iv.end, wall)
        entry = per[trace.kind_name(iv.kind)]
        entry[0] += 1
        entry[1] += max(iv.end - iv.begin, 0)
        if e > b:
            entry[2] += curve.at(e) - curve.at(b)
    workers = trace.workers

    def row(name, requests, comm, work):
        ratio = work / (workers * comm) if comm and workers else None
        return {"kind": name, "requests": requests, "communication_ns": comm,
                "overlapped_work_ns": work, "overlap_ratio": ratio}

    rows = [row(name, *vals) for name, vals in per.items()]
    rows.sort(key=lambda r: (-r["communication_ns"], r["kind"]))
    total = row("total", sum(r["requests"] for r in rows), sum(r["communication_ns"] for r in rows),
                sum(r["overlapped_work_ns"] for r in rows))
    return {"workers": workers, "kinds": rows, "total": total,
            "open_intervals": trace.open_intervals,
            "unmatched_ends": trace.unmatched_interval_ends}


def overlap_many(traces):
    """overlap() of each trace (rank), and over all of them, per kind and in total: requests, C
    and W add up, and the ratio is sum W / sum (workers_r x C_r), the work overlapping the
    requests over the worker time they lasted, whatever the rank's number of workers (the one-trace
    ratio when all ranks have as many workers)."""
    per_trace = []
    per_kind = defaultdict(lambda: [0, 0, 0, 0])  # kind -> [requests, C, W, sum of workers x C]
    for trace in traces:
        o = overlap(trace)
        per_trace.append(dict(o, trace=trace.path, rank=trace.rank, name=trace.group_name))
        for r in o["kinds"]:
            entry = per_kind[r["kind"]]
            entry[0] += r["requests"]
            entry[1] += r["communication_ns"]
            entry[2] += r["overlapped_work_ns"]
            entry[3] += trace.workers * r["communication_ns"]

    def row(name, requests, comm, work, capacity):
        return {"kind": name, "requests": requests, "communication_ns": comm, "overlapped_work_ns": work,
                "workers_x_communication_ns": capacity, "overlap_ratio": work / capacity if capacity else None}

    rows = [row(name, *vals) for name, vals in per_kind.items()]
    rows.sort(key=lambda r: (-r["communication_ns"], r["kind"]))
    total = row("total", *(sum(r[key] for r in rows) for key in
                           ("requests", "communication_ns", "overlapped_work_ns", "workers_x_communication_ns")))
    return {"traces": per_trace, "all": {"kinds": rows, "total": total}}


# ----- summary -----------------------------------------------------------------------------------

def graph_summary(trace):
    out = []
    for rec in trace.recordings:
        rounds = sorted({r for r, _ in rec.instances})
        nodes = {p for p, _, _ in rec.edges} | {s for _, s, _ in rec.edges} | {n for _, n in rec.instances}
        per_round = defaultdict(int)
        for r, _ in rec.instances:
            per_round[r] += 1
        note = None
        if any(c for _, _, c in rec.edges) and 0 not in per_round and 1 in per_round:
            note = ("no graph_instance for round 0: edges from round 0 to round 1 are not expanded")
        out.append({"graph": f"{rec.graph:#x}", "first_event_ns": rec.time, "nodes": len(nodes),
                    "edges": sum(1 for e in rec.edges if not e[2]),
                    "cyclic_edges": sum(1 for e in rec.edges if e[2]),
                    "rounds": len(rounds), "first_round": rounds[0] if rounds else None,
                    "last_round": rounds[-1] if rounds else None,
                    "instances_per_round": {str(r): per_round[r] for r in rounds}, "note": note})
    return out


def summary(trace, buckets=20):
    tasks = [t for t in trace.tasks if not t.is_redirect and not t.is_member]
    collapsed = task_graph(trace, collapse=True)
    cp = critical_path(trace)
    brk = breakdown(trace)
    total_work = sum(r["work_ns"] for r in brk["per_worker"])
    by_wait = defaultdict(int)
    for s in trace.suspensions:
        by_wait[WAIT_KINDS.get(s.wait, f"wait kind {s.wait}")] += 1
    intervals = defaultdict(int)
    for iv in trace.intervals:
        intervals[CATEGORY_NAMES.get(trace.kind_category(iv.kind), "unknown")] += 1
    return {
        "trace": trace.path,
        "pid": trace.pid,
        "rank": trace.rank,
        "ranks": trace.ranks,
        "version": trace.version,
        "workers": trace.workers,
        "wall_ns": trace.end_ns,
        "events": trace.event_count,
        "tasks": len(tasks),
        "redirect_nodes": sum(1 for t in trace.tasks if t.is_redirect),
        "member_runs": sum(1 for t in trace.tasks if t.is_member),
        "replay_instances": sum(1 for t in tasks if t.is_replay),
        "edges": {"recorded": len(trace.edges), "graph_edge_events": trace.graph_edge_events,
                  "replayed": len(trace.replay_edges),
                  "total": len(trace.edges) + len(trace.replay_edges),
                  "collapsed": len(collapsed.edges)},
        "discovery": discovery(trace),
        "breakdown": brk,
        "kinds": kind_stats(trace),
        "parallelism": parallelism(trace, buckets),
        "critical_path": {"length_ns": cp["length_ns"], "task_count": len(cp["tasks"]),
                          "tasks": cp["tasks"][:100], "cycle_tasks": cp["cycle_tasks"],
                          "work_over_critical_path": total_work / cp["length_ns"] if cp["length_ns"] else None},
        "steals": len(trace.steals),
        "suspensions": {"total": len(trace.suspensions), "by_wait_kind": dict(sorted(by_wait.items()))},
        "polls": sum(trace.polls.values()),
        "marks": len(trace.marks),
        "intervals": dict(sorted(intervals.items())),
        "dropped": {"total": trace.dropped,
                    "per_buffer": {trace.buffer_name(b): n for b, n in sorted(trace.buffer_dropped.items()) if n}},
        "persistent_graphs": graph_summary(trace),
        "warnings": list(trace.warnings),
    }


# ----- text --------------------------------------------------------------------------------------

def fmt_ns(ns):
    """A duration for people: ns, us, ms or s (ASCII 'us', terminals may not do UTF-8)."""
    if ns is None:
        return "-"
    a = abs(ns)
    if a < 1_000:
        return f"{ns:.0f} ns"
    if a < 1_000_000:
        return f"{ns / 1e3:.3f} us"
    if a < 1_000_000_000:
        return f"{ns / 1e6:.3f} ms"
    return f"{ns / 1e9:.3f} s"


def _pct(part, whole):
    return f"{100.0 * part / whole:5.1f}%" if whole else "    -"


def format_summary(s):
    lines = []
    add = lines.append
    wall = s["wall_ns"]
    rank = f" (rank {s['rank']} of {s['ranks']})" if s.get("rank") is not None else ""
    add(f"trace {s['trace']}{rank}: pid {s['pid']}, {s['workers']} workers, {fmt_ns(wall)} traced, "
        f"{s['events']} events")
    if s["dropped"]["total"]:
        add(f"WARNING: {s['dropped']['total']} events were DROPPED (a buffer was full): every figure below "
            f"misses them; raise WEFT_TRACE_BUFFER")
        for name, n in s["dropped"]["per_buffer"].items():
            add(f"  {name}: {n} dropped")
    else:
        add("dropped events: 0")
    add(f"tasks: {s['tasks']} (plus {s['redirect_nodes']} redirect nodes, not counted; "
        f"{s['replay_instances']} persistent-graph replay instances included)")
    if s.get("member_runs"):
        add(f"nested parallel regions: {s['member_runs']} member runs of gang-scheduled teams, traced as "
            f"tasks of the region's function (work, in the kinds below)")
    e = s["edges"]
    add(f"edges: {e['recorded']} recorded, {e['replayed']} from {e['graph_edge_events']} graph_edge events, "
        f"{e['collapsed']} between tasks with redirect nodes collapsed")

    add("")
    add("discovery time (task_create to task_submit):")
    for row in s["discovery"]["per_thread"]:
        add(f"  {row['buffer']:<20} {fmt_ns(row['discovery_ns']):>14}  ({row['tasks']} tasks)")
    add(f"  {'total':<20} {fmt_ns(s['discovery']['total_ns']):>14}")

    add("")
    add("time breakdown (work: in task bodies; overhead: outside them while a task is ready; idle: outside")
    add("them while none is ready but some are in flight; outside tasks / serial: no task in flight, the")
    add("program's serial code)")
    add(f"  {'':<10} {'work':>14} {'':>6} {'overhead':>14} {'':>6} {'idle':>14} {'':>6} "
        f"{'outside tasks / serial':>22}")
    b = s["breakdown"]

    def cells(row):
        return " ".join(f"{fmt_ns(row[key]):>{22 if key == 'serial_ns' else 14}} {_pct(row[key], wall)}"
                        for key in BREAKDOWN_KEYS)

    for row in b["per_worker"]:
        add(f"  worker {row['worker']:<3} {cells(row)}")
    add(f"  {'average':<10} {cells(b['average'])}")

    add("")
    add("time per task kind (body durations):")
    if s["kinds"]:
        width = min(max(len(r["kind"]) for r in s["kinds"]), 48)
        add(f"  {'kind':<{width}} {'count':>8} {'total':>14} {'mean':>14} {'min':>14} {'max':>14}")
        for r in s["kinds"]:
            name = r["kind"] if len(r["kind"]) <= width else r["kind"][:width - 3] + "..."
            add(f"  {name:<{width}} {r['count']:>8} {fmt_ns(r['total_ns']):>14} {fmt_ns(r['mean_ns']):>14} "
                f"{fmt_ns(r['min_ns']):>14} {fmt_ns(r['max_ns']):>14}")
    else:
        add("  (no task ran)")

    add("")
    p = s["parallelism"]
    add(f"parallelism: {p['average']:.2f} tasks running on average; over time:")
    workers = max(s["workers"], 1)
    for row in p["profile"]:
        bar = "#" * round(20 * row["running"] / workers)
        add(f"  {fmt_ns(row['begin_ns']):>12} - {fmt_ns(row['end_ns']):>12}  {row['running']:6.2f}  {bar}")
    add("  time with k tasks running: " +
        ", ".join(f"{d['running']}: {_pct(d['time_ns'], wall).strip()}" for d in p["distribution"]))

    add("")
    cp = s["critical_path"]
    ratio = f"{cp['work_over_critical_path']:.2f}" if cp["work_over_critical_path"] else "-"
    add(f"critical path: {fmt_ns(cp['length_ns'])} through {cp['task_count']} tasks "
        f"(total work / critical path = {ratio})")
    if cp["cycle_tasks"]:
        add(f"  WARNING: {cp['cycle_tasks']} tasks are on cycles of the edge graph and were left out")
    add(f"steals: {s['steals']}")
    susp = s["suspensions"]
    detail = ", ".join(f"{k} {n}" for k, n in susp["by_wait_kind"].items())
    add(f"suspensions: {susp['total']}" + (f" ({detail})" if detail else ""))
    if s["intervals"]:
        add("intervals: " + ", ".join(f"{k} {n}" for k, n in s["intervals"].items()))
    if s["marks"] or s["polls"]:
        add(f"marks: {s['marks']}, polls: {s['polls']}")
    if s["persistent_graphs"]:
        add("persistent graphs:")
        for g in s["persistent_graphs"]:
            rounds = (f"rounds {g['first_round']}..{g['last_round']} ({g['rounds']})" if g["rounds"]
                      else "no instances")
            add(f"  graph {g['graph']}: {g['nodes']} nodes, {g['edges']} edges, {g['cyclic_edges']} cyclic, {rounds}")
            if g["note"]:
                add(f"    note: {g['note']}")
    for w in s["warnings"]:
        add(f"warning: {w}")
    return "\n".join(lines)


def _overlap_rows(rows):
    lines = [f"  {'kind':<28} {'requests':>9} {'C (comm. time)':>16} {'W (overlapped)':>16} {'ratio':>8}"]
    for r in rows:
        ratio = f"{100 * r['overlap_ratio']:.1f}%" if r["overlap_ratio"] is not None else "-"
        lines.append(f"  {r['kind']:<28} {r['requests']:>9} {fmt_ns(r['communication_ns']):>16} "
                     f"{fmt_ns(r['overlapped_work_ns']):>16} {ratio:>8}")
    return lines


def format_overlap(o):
    if not o["kinds"]:
        lines = ["no communication intervals (category 1) in this trace: nothing to measure"]
    else:
        lines = [f"communication overlap ({o['workers']} workers; ratio = W / (workers x C))"]
        lines += _overlap_rows(o["kinds"] + [o["total"]])
    if o["open_intervals"]:
        lines.append(f"note: {o['open_intervals']} intervals never ended (left out)")
    if o["unmatched_ends"]:
        lines.append(f"note: {o['unmatched_ends']} interval_end events had no interval_begin (left out)")
    return "\n".join(lines)


def format_overlap_many(m):
    lines = []
    for o in m["traces"]:
        lines.append(f"{o['name']} ({o['trace']}):")
        lines.extend("  " + line for line in format_overlap(o).splitlines())
        lines.append("")
    a = m["all"]
    if not a["kinds"]:
        lines.append("no communication intervals (category 1) in any trace: nothing to measure")
    else:
        lines.append(f"all {len(m['traces'])} traces (ratio = sum W / sum (workers x C) over the traces)")
        lines += _overlap_rows(a["kinds"] + [a["total"]])
    return "\n".join(lines)


def summary_many(traces, offsets, align, buckets=20):
    """summary() of each trace, placed on the common time axis (reader.time_offsets), and the
    run's wall time: from the earliest start to the latest end."""
    out = []
    for trace, offset in zip(traces, offsets):
        out.append(dict(summary(trace, buckets), offset_ns=offset, name=trace.group_name))
    return {"alignment": align, "ranks": traces[0].ranks,
            "wall_ns": max(offset + trace.end_ns for trace, offset in zip(traces, offsets)), "traces": out}


def format_summary_many(m):
    lines = []
    for s in m["traces"]:
        lines.append(f"===== {s['name']} =====")
        lines.append(format_summary(s))
        lines.append("")
    how = ("one clock: each trace placed by its start_ns" if m["alignment"] == "clock" else
           "each trace's own start (the traced spans never meet: clocks of different machines)")
    ranks = f" (of {m['ranks']} ranks)" if m["ranks"] else ""
    lines.append(f"===== all {len(m['traces'])} traces{ranks} =====")
    lines.append(f"aligned on {how}")
    lines.append(f"wall time (earliest start to latest end): {fmt_ns(m['wall_ns'])}")
    lines.append(f"  {'':<10} {'starts at':>14} {'traced':>14} {'workers':>8} {'tasks':>8} {'work':>7} "
                 f"{'overhead':>9} {'idle':>7} {'serial':>7}")
    for s in m["traces"]:
        wall, avg = s["wall_ns"], s["breakdown"]["average"]
        lines.append(f"  {s['name']:<10} {fmt_ns(s['offset_ns']):>14} {fmt_ns(wall):>14} {s['workers']:>8} "
                     f"{s['tasks']:>8} {_pct(avg['work_ns'], wall):>7} {_pct(avg['overhead_ns'], wall):>9} "
                     f"{_pct(avg['idle_ns'], wall):>7} {_pct(avg['serial_ns'], wall):>7}")
    return "\n".join(lines)
