"""Reads a weft trace file (docs/trace-format.md, version 1) into a `Trace`.

The reader walks the events of all buffers merged in time order, once, and keeps only what the
analyses need: tasks (with unique ids: descriptor addresses are recycled), the running segments of
every worker, idle and suspended intervals, edges, intervals, marks and the persistent-graph
records. Raw events are not kept, so a trace of millions of events fits in memory.
"""

from __future__ import annotations

import heapq
import struct
from collections import Counter, deque
from itertools import repeat
from operator import itemgetter

MAGIC = b"WEFTTRC\x01"
VERSION = 1
HEADER = struct.Struct("<8sIIIIQQQIIiI")  # 64 bytes; the last two: rank (-1: none), ranks (0: none)
STRING_HEAD = struct.Struct("<IHH")
BUFFER_HEAD = struct.Struct("<IIQQ")
EVENT = struct.Struct("<QQQIHH")  # time, a, b, c, type, d
NON_WORKER = 0xFFFFFFFF

# Event types.
TASK_CREATE, TASK_SUBMIT, TASK_READY, TASK_START, TASK_END = 1, 2, 3, 4, 5
TASK_SUSPEND, TASK_RESUME, EDGE, TASK_LABEL, IDLE_BEGIN, IDLE_END = 6, 7, 8, 9, 10, 11
STEAL, POLL, INTERVAL_BEGIN, INTERVAL_END, MARK = 12, 13, 14, 15, 16
GRAPH_INSTANCE, GRAPH_EDGE, COUNTER = 17, 18, 19

# task_create flags.
FLAG_UNDEFERRED, FLAG_REDIRECT, FLAG_REPLAY, FLAG_MEMBER = 1, 2, 4, 8

CATEGORY_TASK, CATEGORY_COMM, CATEGORY_GPU, CATEGORY_USER = 0, 1, 2, 3
CATEGORY_NAMES = {0: "task", 1: "communication", 2: "gpu", 3: "user"}
WAIT_KINDS = {0: "other", 1: "children", 2: "taskgroup", 3: "event", 4: "predecessors",
              5: "yield", 6: "throttle", 7: "barrier", 8: "graph"}


class TraceError(Exception):
    """A trace that cannot be read; the message names the file."""

    def __init__(self, path, message):
        super().__init__(f"{path}: {message}")
        self.path = path


class Kind:
    __slots__ = ("id", "category", "name")

    def __init__(self, kind_id, category, name):
        self.id, self.category, self.name = kind_id, category, name


class Task:
    """One task (one task_create). `id` is unique in the trace, numbered from 1 in creation order."""

    __slots__ = ("id", "addr", "parent", "kind", "label", "flags", "create_time", "create_buffer",
                 "submit_time", "accesses", "ready_time", "start_time", "end_time", "worker",
                 "duration", "suspensions", "round", "node", "counters")

    def __init__(self, tid, addr, parent, kind, flags, time, buffer):
        self.id = tid
        self.addr = addr
        self.parent = parent          # task id, 0 for the implicit task of a thread
        self.kind = kind              # kind id of the create
        self.label = 0                # kind id of a task_label, overrides `kind`
        self.flags = flags
        self.create_time = time
        self.create_buffer = buffer   # buffer index (workers for the non-worker buffer)
        self.submit_time = None
        self.accesses = 0
        self.ready_time = None
        self.start_time = None        # first task_start
        self.end_time = None
        self.worker = None            # buffer of the first task_start
        self.duration = 0             # body time: sum of the segments where it is the innermost task
        self.suspensions = 0
        self.round = 0                # persistent-graph round (graph_instance), 0 otherwise
        self.node = None              # node index in its graph (graph_instance)
        self.counters = None          # {counter index: value}

    @property
    def is_redirect(self):
        return bool(self.flags & FLAG_REDIRECT)

    @property
    def is_replay(self):
        return bool(self.flags & FLAG_REPLAY)

    @property
    def is_member(self):
        """A member's run of a gang-scheduled (nested) parallel region, not a task of the program."""
        return bool(self.flags & FLAG_MEMBER)

    @property
    def kind_id(self):
        return self.label or self.kind


class Interval:
    """A matched interval_begin/interval_end pair (end is None when the trace ended first)."""

    __slots__ = ("kind", "id", "begin", "end", "begin_buffer", "end_buffer", "begin_value", "end_value")

    def __init__(self, kind, iid, begin, end, begin_buffer, end_buffer, begin_value, end_value):
        self.kind, self.id = kind, iid
        self.begin, self.end = begin, end
        self.begin_buffer, self.end_buffer = begin_buffer, end_buffer
        self.begin_value, self.end_value = begin_value, end_value


class Suspension:
    """A task set aside from `begin` (on `worker`) to `end` (None: never resumed)."""

    __slots__ = ("task", "worker", "begin", "end", "wait", "resume_worker")

    def __init__(self, task, worker, begin, wait):
        self.task, self.worker, self.begin, self.wait = task, worker, begin, wait
        self.end = None
        self.resume_worker = None


class Recording:
    """One persistent graph as built: its graph_edge events and the instances attributed to it."""

    __slots__ = ("graph", "time", "edges", "instances", "replayed")

    def __init__(self, graph, time):
        self.graph = graph
        self.time = time
        self.edges = []        # (pred node, succ node, cyclic)
        self.instances = {}    # (round, node) -> task id
        self.replayed = False  # an instance of round >= 1 was attributed to it


class Trace:
    """Everything the analyses use. Buffer index i < workers is worker i; index `workers` is the
    buffer of the threads that are not workers."""

    def __init__(self, path):
        self.path = path
        self.version = VERSION
        self.workers = 0
        self.start_ns = 0
        self.end_ns = 0
        self.dropped = 0
        self.buffer_dropped = {}
        self.pid = 0
        self.rank = None             # MPI rank (None: not part of an MPI run, or an older trace)
        self.ranks = 0               # ranks of that run (0: none)
        self.index = 0               # place in the command line's file list (load_many)
        self.kinds = {}
        self.tasks = []              # index = task id - 1
        self.segments = []           # per buffer: (start, end, task id), innermost task only
        self.idle = []               # per buffer: (begin, end) of idle_begin/idle_end
        self.suspensions = []
        self.edges = []              # (pred id, succ id) as recorded
        self.replay_edges = []       # (pred id, succ id, cyclic) expanded from graph_edge events
        self.recordings = []
        self.graph_edge_events = 0
        self.intervals = []
        self.unended_intervals = []  # interval_begin never ended (end is None)
        self.open_intervals = 0
        self.unmatched_interval_ends = 0
        self.marks = []              # (time, buffer, value, kind)
        self.steals = []             # (time, buffer, victim worker, task id)
        self.polls = Counter()       # buffer -> poll events
        self.event_count = 0
        self.event_types = Counter()
        self.warnings = []
        self.cache = {}              # results the analyses share (analysis.busy_intervals)

    @property
    def tag(self):
        """Short name of the trace among several: r<rank>, or t<file order> without a rank."""
        return f"r{self.rank}" if self.rank is not None else f"t{self.index}"

    @property
    def group_name(self):
        return f"rank {self.rank}" if self.rank is not None else f"trace {self.index}"

    @property
    def non_worker(self):
        return self.workers

    def buffer_name(self, buf):
        return f"worker {buf}" if buf < self.workers else "non-worker threads"

    def task(self, tid):
        return self.tasks[tid - 1]

    def kind_name(self, kind_id):
        if kind_id == 0:
            return "(no kind)"
        k = self.kinds.get(kind_id)
        return k.name if k else f"kind {kind_id}"

    def kind_category(self, kind_id):
        k = self.kinds.get(kind_id)
        return k.category if k else None

    def task_kind(self, task):
        return self.kind_name(task.kind_id)

    def warn(self, message):
        self.warnings.append(message)


def read_trace(path):
    """Reads and parses the file at `path`; raises TraceError with a message naming it."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise TraceError(path, f"cannot read the trace: {e.strerror or e}") from None
    return parse_trace(data, str(path))


def load_many(paths):
    """Reads the traces of one run (one file per MPI rank, or a single file): sorted by rank, or
    kept in file order when none has a rank. Traces that cannot belong to one run (some with a
    rank and some without, a rank twice, different numbers of ranks) raise TraceError."""
    traces = [read_trace(p) for p in paths]
    for n, trace in enumerate(traces):
        trace.index = n
    if len(traces) < 2:
        return traces
    ranked = [t for t in traces if t.rank is not None]
    if ranked and len(ranked) < len(traces):
        bare = next(t for t in traces if t.rank is None)
        raise TraceError(bare.path, f"has no MPI rank, but {ranked[0].path} is rank {ranked[0].rank}: "
                                    f"give the per-rank traces of one MPI run, or a single trace")
    seen = {}
    for t in ranked:
        if t.rank in seen:
            raise TraceError(t.path, f"is rank {t.rank}, like {seen[t.rank].path}: each rank's trace once, please")
        seen[t.rank] = t
        if t.ranks != ranked[0].ranks:
            raise TraceError(t.path, f"is rank {t.rank} of {t.ranks}, but {ranked[0].path} is rank "
                                     f"{ranked[0].rank} of {ranked[0].ranks}: traces of different runs")
    return sorted(traces, key=lambda t: t.rank) if ranked else traces


ALIGN_CLOCK, ALIGN_START = "clock", "start"


def time_offsets(traces, align="auto"):
    """Where each trace's time 0 lies on a common time axis (ns after the earliest start), and the
    alignment used.

    start_ns is CLOCK_MONOTONIC, shared by the processes of one machine ('clock'). The clocks of
    different machines are unrelated (time since each one booted): the traces are then laid from
    a common origin, each one's own start ('start'). 'auto' takes the clock when the traced spans
    have a moment in common, which the ranks of one run always have (they all live between
    MPI_Init and MPI_Finalize); spans that do not meet cannot be one run on one clock."""
    if align == "auto":
        latest_start = max(t.start_ns for t in traces)
        earliest_end = min(t.start_ns + t.end_ns for t in traces)
        align = ALIGN_CLOCK if latest_start <= earliest_end else ALIGN_START
    if align == ALIGN_START:
        return [0] * len(traces), align
    origin = min(t.start_ns for t in traces)
    return [t.start_ns - origin for t in traces], align


def parse_trace(data, path="<trace>"):
    trace = Trace(path)
    buffers = _parse_layout(trace, memoryview(data))
    _read_events(trace, buffers)
    _expand_graph_edges(trace)
    return trace


def _parse_layout(trace, data):
    """Header, string table and buffer blocks; returns [(buffer index, events view)]."""
    path = trace.path
    if len(data) < HEADER.size:
        if bytes(data[:7]) != MAGIC[:7]:
            raise TraceError(path, "not a weft trace (wrong magic; expected 'WEFTTRC\\x01')")
        raise TraceError(path, f"truncated: the header needs {HEADER.size} bytes, the file has {len(data)}")
    (magic, version, event_size, workers, nbuffers, start_ns, end_ns, dropped, nstrings, pid,
     rank, ranks) = HEADER.unpack_from(data, 0)
    if magic != MAGIC:
        if magic[:7] == MAGIC[:7]:
            raise TraceError(path, f"unsupported trace magic byte {magic[7]:#04x} (this reader knows 0x01)")
        raise TraceError(path, f"not a weft trace (wrong magic {magic!r}; expected 'WEFTTRC\\x01')")
    if version != VERSION:
        raise TraceError(path, f"trace format version {version} is not supported (this reader knows {VERSION})")
    if event_size != EVENT.size:
        raise TraceError(path, f"event size {event_size} in the header, version 1 has {EVENT.size}")
    trace.workers, trace.start_ns, trace.end_ns = workers, start_ns, end_ns
    trace.dropped, trace.pid = dropped, pid
    # ranks = 0 is "no rank": -1 from a process outside MPI, 0 from traces older than the field.
    if ranks:
        trace.ranks = ranks
        trace.rank = rank if rank >= 0 else None
        if not 0 <= rank < ranks:
            trace.warn(f"the header says rank {rank} of {ranks} ranks")
    if nbuffers != workers + 1:
        trace.warn(f"the header says {nbuffers} buffers for {workers} workers (expected {workers + 1})")

    pos = HEADER.size
    for n in range(nstrings):
        if pos + STRING_HEAD.size > len(data):
            raise TraceError(path, f"truncated in the string table (entry {n} of {nstrings})")
        kind_id, category, length = STRING_HEAD.unpack_from(data, pos)
        pos += STRING_HEAD.size
        if pos + length > len(data):
            raise TraceError(path, f"truncated in the string table (name of entry {n} of {nstrings})")
        name = bytes(data[pos:pos + length]).decode("utf-8", errors="replace")
        pos += length
        if kind_id in trace.kinds:
            trace.warn(f"string table: kind id {kind_id} appears twice; the last name is used")
        trace.kinds[kind_id] = Kind(kind_id, category, name)

    trace.segments = [[] for _ in range(workers + 1)]
    trace.idle = [[] for _ in range(workers + 1)]
    seen = set()
    out = []
    for n in range(nbuffers):
        if pos + BUFFER_HEAD.size > len(data):
            raise TraceError(path, f"truncated: buffer block {n} of {nbuffers} is missing")
        worker, _reserved, count, buf_dropped = BUFFER_HEAD.unpack_from(data, pos)
        pos += BUFFER_HEAD.size
        if worker == NON_WORKER:
            index = workers
        elif worker < workers:
            index = worker
        else:
            raise TraceError(path, f"buffer block {n} names worker {worker}, but the trace has {workers} workers")
        if index in seen:
            raise TraceError(path, f"buffer block {n} repeats the buffer of {trace.buffer_name(index)}")
        seen.add(index)
        size = count * EVENT.size
        if pos + size > len(data):
            raise TraceError(path, f"truncated: buffer block {n} ({trace.buffer_name(index)}) declares {count} "
                                   f"events ({size} bytes) but only {len(data) - pos} bytes remain")
        trace.buffer_dropped[index] = buf_dropped
        out.append((index, data[pos:pos + size]))
        pos += size
    if pos != len(data):
        trace.warn(f"{len(data) - pos} bytes after the last buffer were ignored")
    if sum(trace.buffer_dropped.values()) != dropped:
        trace.warn(f"the header counts {dropped} dropped events, the buffers {sum(trace.buffer_dropped.values())}")
    return out


def _read_events(trace, buffers):
    """The single pass over all events, merged by (time, type) across buffers."""
    workers = trace.workers
    nbuf = workers + 1
    streams = []
    for index, view in buffers:
        events = EVENT.iter_unpack(view)
        if index == workers:
            # Several threads fill this buffer through one counter: slot order is not time order.
            # The sort is stable, so events of equal time keep their slot order.
            events = sorted(events, key=itemgetter(0))
        # Each event becomes (time, a, b, c, type, d, buffer); C-level map, no Python call per event.
        streams.append(map(tuple.__add__, events, repeat((index,))))
    # heapq.merge keeps each buffer's own order and takes the lowest (time, type) head first, so at
    # equal times a create comes before events that may name it, a suspend before its resume.
    merged = heapq.merge(*streams, key=itemgetter(0, 4))

    tasks = trace.tasks
    segments = trace.segments
    live = {}                         # address -> (task id, create time, create buffer, previous id)
    stacks = [[] for _ in range(nbuf)]  # running tasks per buffer, innermost last
    seg_start = [0] * nbuf            # when the innermost task of each stack got the thread
    saved = {}                        # suspended task id -> the stack frames set aside with it
    open_susp = {}                    # task id -> Suspension
    idle_open = [None] * nbuf
    last_time = [0] * nbuf
    open_iv = {}                      # (kind, id) -> deque of (time, buffer, value)
    # Persistent graphs. The spec's graph_instance has d = 0 and no graph id: an instance then
    # belongs to the latest recording (round 0: to the next one, built after its round ran). A
    # nonzero d is taken as the recording's id, the low 16 bits of graph_edge's a (what the
    # recorder writes), which keeps several graphs at once apart.
    pending_round0 = []               # (task id, node) of round 0 with d = 0, awaiting a recording
    by_id = {}                        # graph id & 0xFFFF -> its latest recording
    latest = None                     # the latest recording of any graph

    def new_recording(graph, t):
        nonlocal latest
        rec = latest = Recording(graph, t)
        trace.recordings.append(rec)
        by_id[graph & 0xFFFF] = rec
        return rec

    problems = Counter()
    types = trace.event_types

    def resolve(addr, t, buf):
        # The task of the latest create at or before t. At equal times, a create on another
        # buffer is taken to come after the event: the old task's last events can share the
        # nanosecond of the recycling create, while the new task cannot be named elsewhere yet.
        entry = live.get(addr)
        if entry is None:
            problems["events naming a task address with no task_create before them (ignored)"] += 1
            return 0
        if entry[1] == t and entry[2] != buf and entry[3]:
            return entry[3]
        return entry[0]

    def close_top(buf, t):
        stack = stacks[buf]
        if stack:
            tid = stack[-1]
            start = seg_start[buf]
            if t > start:
                segments[buf].append((start, t, tid))
                tasks[tid - 1].duration += t - start

    for t, a, b, c, typ, d, buf in merged:
        types[typ] += 1
        if t < last_time[buf] and buf != workers:
            problems["events whose time goes back within a worker buffer"] += 1
        last_time[buf] = t

        if typ == TASK_START or typ == TASK_END:
            tid = resolve(a, t, buf)
            if not tid:
                continue
            task = tasks[tid - 1]
            stack = stacks[buf]
            if typ == TASK_START:
                close_top(buf, t)     # a parent running a child in its wait gives it the thread
                stack.append(tid)
                seg_start[buf] = t
                if task.start_time is None:
                    task.start_time, task.worker = t, buf
            else:
                if stack and stack[-1] == tid:
                    close_top(buf, t)
                    stack.pop()
                    seg_start[buf] = t    # the task below (if any) gets the thread back
                elif tid in stack:
                    problems["task_end of a task that is not the innermost running one"] += 1
                    close_top(buf, t)
                    stack.remove(tid)
                    seg_start[buf] = t
                else:
                    problems["task_end of a task not running on that thread"] += 1
                task.end_time = t
        elif typ == TASK_READY:
            tid = resolve(a, t, buf)
            if tid and tasks[tid - 1].ready_time is None:
                tasks[tid - 1].ready_time = t
        elif typ == TASK_CREATE:
            tid = len(tasks) + 1
            parent = resolve(b, t, buf) if b else 0
            tasks.append(Task(tid, a, parent, c, d, t, buf))
            prev = live.get(a)
            live[a] = (tid, t, buf, prev[0] if prev else 0)
        elif typ == TASK_SUBMIT:
            tid = resolve(a, t, buf)
            if tid:
                tasks[tid - 1].submit_time = t
                tasks[tid - 1].accesses = c
        elif typ == EDGE:
            pred, succ = resolve(a, t, buf), resolve(b, t, buf)
            if pred and succ:
                trace.edges.append((pred, succ))
        elif typ == TASK_SUSPEND:
            tid = resolve(a, t, buf)
            if not tid:
                continue
            stack = stacks[buf]
            if tid in stack:
                close_top(buf, t)
                # The whole stack is set aside: a parent below the task shares its context.
                saved[tid] = stack[:]
                stack.clear()
            else:
                problems["task_suspend of a task not running on that thread"] += 1
            susp = Suspension(tid, buf, t, c)
            trace.suspensions.append(susp)
            open_susp[tid] = susp
            tasks[tid - 1].suspensions += 1
        elif typ == TASK_RESUME:
            tid = resolve(a, t, buf)
            if not tid:
                continue
            close_top(buf, t)
            stacks[buf].extend(saved.pop(tid, [tid]))
            seg_start[buf] = t
            susp = open_susp.pop(tid, None)
            if susp is None:
                problems["task_resume without a task_suspend"] += 1
            else:
                susp.end, susp.resume_worker = t, buf
        elif typ == IDLE_BEGIN:
            if idle_open[buf] is None:
                idle_open[buf] = t
            else:
                problems["idle_begin while already idle"] += 1
        elif typ == IDLE_END:
            if idle_open[buf] is None:
                problems["idle_end without idle_begin"] += 1
            else:
                trace.idle[buf].append((idle_open[buf], t))
                idle_open[buf] = None
        elif typ == TASK_LABEL:
            tid = resolve(a, t, buf)
            if tid:
                tasks[tid - 1].label = c
        elif typ == INTERVAL_BEGIN:
            open_iv.setdefault((c, a), deque()).append((t, buf, b))
        elif typ == INTERVAL_END:
            waiting = open_iv.get((c, a))
            if waiting:
                bt, bbuf, bval = waiting.popleft()
                trace.intervals.append(Interval(c, a, bt, t, bbuf, buf, bval, b))
            else:
                trace.unmatched_interval_ends += 1
        elif typ == MARK:
            trace.marks.append((t, buf, a, c))
        elif typ == STEAL:
            trace.steals.append((t, buf, a, resolve(b, t, buf) if b else 0))
        elif typ == POLL:
            trace.polls[buf] += 1
        elif typ == GRAPH_INSTANCE:
            tid = resolve(a, t, buf)
            if not tid:
                continue
            task = tasks[tid - 1]
            task.round, task.node = b, c
            if d:
                rec = by_id.get(d)
                if rec is None or (b == 0 and rec.replayed):
                    rec = new_recording(d, t)  # its round 0 runs before its edges are recorded
            elif b == 0:
                pending_round0.append((tid, c))  # the recorded round: its graph is built later
                continue
            else:
                rec = latest
                if rec is None:
                    problems["graph_instance with no graph_edge before it (its edges are not expanded)"] += 1
                    continue
            _attribute(rec, b, c, tid, problems)
            if b:
                rec.replayed = True
        elif typ == GRAPH_EDGE:
            trace.graph_edge_events += 1
            rec = by_id.get(a & 0xFFFF)
            if rec is None or rec.replayed or (rec.edges and rec.graph != a):
                # A new recording (a graph recorded again after replaying is a new one too).
                rec = new_recording(a, t)
                for tid, node in pending_round0:
                    _attribute(rec, 0, node, tid, problems)
                pending_round0.clear()
            rec.graph = a  # a recording opened by its instances knew 16 bits of the id
            rec.edges.append((b >> 32, b & 0xFFFFFFFF, c))
        elif typ == COUNTER:
            tid = resolve(a, t, buf)
            if tid:
                task = tasks[tid - 1]
                if task.counters is None:
                    task.counters = {}
                task.counters[c] = b
        else:
            problems[f"events of unknown type {typ} (ignored)"] += 1
    trace.event_count = sum(types.values())

    # What is still open when the trace ends runs to its end.
    end = max(trace.end_ns, max(last_time))
    for buf in range(nbuf):
        if stacks[buf]:
            problems["tasks still running when the trace ended"] += len(stacks[buf])
            close_top(buf, end)
        if idle_open[buf] is not None:
            trace.idle[buf].append((idle_open[buf], end))
    if open_susp:
        problems["tasks still suspended when the trace ended"] += len(open_susp)
    for (kind, iid), waiting in open_iv.items():
        for bt, bbuf, bval in waiting:
            trace.unended_intervals.append(Interval(kind, iid, bt, None, bbuf, None, bval, None))
    trace.open_intervals = len(trace.unended_intervals)
    if pending_round0 and latest is not None:
        # Round-0 instances recorded after their graph was built belong to the latest one.
        for tid, node in pending_round0:
            _attribute(latest, 0, node, tid, problems)
    for message, count in sorted(problems.items()):
        trace.warn(f"{count} {message}")
    if max(last_time) > trace.end_ns:
        trace.warn(f"events up to {max(last_time)} ns, after end_ns ({trace.end_ns} ns); the analyses clip at end_ns")


def _attribute(recording, rnd, node, tid, problems):
    key = (rnd, node)
    if key in recording.instances:
        # graph_instance carries no graph id: two graphs replaying at once cannot be told apart.
        problems["graph_instance events for a (round, node) already seen in the same graph "
                 "(several persistent graphs at once?); the latest is used"] += 1
    recording.instances[key] = tid


def _expand_graph_edges(trace):
    """graph_edge events -> edges between the instances of each round (and of r to r+1)."""
    recorded = set(trace.edges)
    out = trace.replay_edges
    for rec in trace.recordings:
        by_round = {}
        for (rnd, node), tid in rec.instances.items():
            by_round.setdefault(rnd, {})[node] = tid
        for rnd, nodes in by_round.items():
            nxt = by_round.get(rnd + 1, {})
            for pred, succ, cyclic in rec.edges:
                p = nodes.get(pred)
                s = (nxt if cyclic else nodes).get(succ)
                # Round 0's own edges were recorded as edge events: not counted twice.
                if p and s and (p, s) not in recorded:
                    out.append((p, s, cyclic))
