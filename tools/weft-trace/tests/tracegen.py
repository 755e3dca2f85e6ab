"""Writes weft trace files for the tests, byte for byte as docs/trace-format.md describes them.

Deliberately independent of weft_trace.reader: its own struct layouts, taken from the spec, so a
misreading of the spec on one side shows up as a failing test instead of cancelling out.
"""

import struct

# docs/trace-format.md, "Header (64 bytes)": magic, version, event_size, workers, buffers,
# start_ns, end_ns, dropped, strings, pid, rank, ranks.
_HEADER = "<8s I I I I Q Q Q I I i I"
# String table entry: id, category, length (then the name).
_STRING = "<I H H"
# Buffer block: worker, reserved, count, dropped.
_BUFFER = "<I I Q Q"
# Event: time, a, b, c, type, d.
_EVENT = "<Q Q Q I H H"

NON_WORKER = None  # buffer argument naming the buffer of non-worker threads

CREATE, SUBMIT, READY, START, END, SUSPEND, RESUME, EDGE, LABEL = 1, 2, 3, 4, 5, 6, 7, 8, 9
IDLE_BEGIN, IDLE_END, STEAL, POLL, IV_BEGIN, IV_END, MARK = 10, 11, 12, 13, 14, 15, 16
GRAPH_INSTANCE, GRAPH_EDGE, COUNTER = 17, 18, 19

UNDEFERRED, REDIRECT, REPLAY, MEMBER = 1, 2, 4, 8


class TraceBuilder:
    def __init__(self, workers, end_ns, pid=4242, start_ns=123_456_789, rank=0, ranks=0):
        """rank and ranks default to 0, 0: a trace written before those fields (u64 reserved = 0);
        the recorder writes -1, 0 outside MPI."""
        assert struct.calcsize(_HEADER) == 64 and struct.calcsize(_EVENT) == 32
        self.workers = workers
        self.end_ns = end_ns
        self.pid = pid
        self.start_ns = start_ns
        self.rank, self.ranks = rank, ranks
        self.kinds = []           # (id, category, name)
        self.events = {w: [] for w in range(workers)}
        self.foreign = []         # kept in insertion order: the reader must sort them
        self.dropped = {}         # buffer (worker or NON_WORKER) -> count
        self.header_dropped = None

    def kind(self, name, category=0):
        kind_id = len(self.kinds) + 1
        self.kinds.append((kind_id, category, name))
        return kind_id

    def event(self, buf, time, typ, a=0, b=0, c=0, d=0):
        (self.foreign if buf is NON_WORKER else self.events[buf]).append((time, a, b, c, typ, d))

    # One method per event type (docs/trace-format.md, "Event" table).
    def create(self, buf, t, task, parent=0, kind=0, flags=0):
        self.event(buf, t, CREATE, task, parent, kind, flags)

    def submit(self, buf, t, task, accesses=0):
        self.event(buf, t, SUBMIT, task, 0, accesses)

    def ready(self, buf, t, task):
        self.event(buf, t, READY, task)

    def start(self, buf, t, task):
        self.event(buf, t, START, task)

    def end(self, buf, t, task):
        self.event(buf, t, END, task)

    def suspend(self, buf, t, task, wait=1):
        self.event(buf, t, SUSPEND, task, 0, wait)

    def resume(self, buf, t, task):
        self.event(buf, t, RESUME, task)

    def edge(self, buf, t, pred, succ):
        self.event(buf, t, EDGE, pred, succ)

    def label(self, buf, t, task, kind):
        self.event(buf, t, LABEL, task, 0, kind)

    def idle(self, buf, begin, end=None):
        self.event(buf, begin, IDLE_BEGIN)
        if end is not None:
            self.event(buf, end, IDLE_END)

    def steal(self, buf, t, victim, task):
        self.event(buf, t, STEAL, victim, task)

    def poll(self, buf, t, poller, items):
        self.event(buf, t, POLL, poller, items)

    def interval_begin(self, buf, t, iid, kind, value=0):
        self.event(buf, t, IV_BEGIN, iid, value, kind)

    def interval_end(self, buf, t, iid, kind, value=0):
        self.event(buf, t, IV_END, iid, value, kind)

    def mark(self, buf, t, kind, value=0):
        self.event(buf, t, MARK, value, 0, kind)

    def graph_instance(self, buf, t, task, rnd, node, graph=0):
        # The spec has d = 0; the recorder also writes the recording's id there (graph=...).
        self.event(buf, t, GRAPH_INSTANCE, task, rnd, node, graph)

    def graph_edge(self, buf, t, graph, pred, succ, cyclic=False):
        self.event(buf, t, GRAPH_EDGE, graph, (pred << 32) | succ, 1 if cyclic else 0)

    def counter(self, buf, t, task, index, value):
        self.event(buf, t, COUNTER, task, value, index)

    def simple_task(self, buf, task, kind, create, start, end, parent=0, ready=None, run_on=None, flags=0):
        """create + submit at `create`, ready at `ready` (default: at submit), body start..end."""
        run_on = buf if run_on is None else run_on
        self.create(buf, create, task, parent, kind, flags)
        self.submit(buf, create, task)
        self.ready(buf, create if ready is None else ready, task)
        self.start(run_on, start, task)
        self.end(run_on, end, task)

    def to_bytes(self):
        total_dropped = sum(self.dropped.values())
        header = struct.pack(_HEADER, b"WEFTTRC\x01", 1, 32, self.workers, self.workers + 1, self.start_ns,
                             self.end_ns, total_dropped if self.header_dropped is None else self.header_dropped,
                             len(self.kinds), self.pid, self.rank, self.ranks)
        parts = [header]
        for kind_id, category, name in self.kinds:
            raw = name.encode("utf-8")
            parts.append(struct.pack(_STRING, kind_id, category, len(raw)) + raw)

        def block(worker_field, events, dropped):
            parts.append(struct.pack(_BUFFER, worker_field, 0, len(events), dropped))
            parts.extend(struct.pack(_EVENT, *e) for e in events)

        for w in range(self.workers):
            # A worker records in time order; the stable sort lets the tests list events by task.
            block(w, sorted(self.events[w], key=lambda e: e[0]), self.dropped.get(w, 0))
        block(0xFFFFFFFF, self.foreign, self.dropped.get(NON_WORKER, 0))
        return b"".join(parts)

    def write(self, path):
        with open(path, "wb") as f:
            f.write(self.to_bytes())
        return path
