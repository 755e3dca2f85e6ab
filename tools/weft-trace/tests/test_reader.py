"""The reader: layout, task ids over recycled addresses, stacks, intervals, errors."""

import struct
import unittest

from weft_trace.reader import TraceError, parse_trace, read_trace

from . import scenarios
from .tracegen import NON_WORKER, TraceBuilder
from .util import TraceTestCase, parse_builder


class LayoutTest(TraceTestCase):
    def test_header_fields(self):
        trace, _ = self.scenario("fork_join")
        self.assertEqual(trace.workers, 2)
        self.assertEqual(trace.end_ns, 200)
        self.assertEqual(trace.pid, 4242)
        self.assertEqual(trace.start_ns, 123_456_789)
        self.assertEqual({k.name for k in trace.kinds.values()}, {"root", "leaf", "join"})
        self.assertEqual(trace.warnings, [])

    def test_every_scenario_reads_cleanly(self):
        for name in scenarios.ALL:
            with self.subTest(name):
                trace, expected = self.scenario(name)
                self.assertEqual(trace.warnings, [], name)
                if "tasks" in expected:
                    self.assertEqual(sum(1 for t in trace.tasks if not t.is_redirect), expected["tasks"])

    def test_utf8_kind_names(self):
        t = TraceBuilder(workers=1, end_ns=10)
        k = t.kind("réduction_µ")
        t.simple_task(0, 0x1, k, 0, 1, 5)
        trace = parse_builder(t)
        self.assertEqual(trace.task_kind(trace.task(1)), "réduction_µ")

    def test_empty_trace(self):
        trace = parse_builder(TraceBuilder(workers=3, end_ns=0))
        self.assertEqual(trace.tasks, [])
        self.assertEqual(len(trace.segments), 4)


class TaskTest(TraceTestCase):
    def test_recycled_addresses_get_unique_ids(self):
        trace, expected = self.scenario("recycled")
        self.assertEqual(len(trace.tasks), expected["tasks"])
        self.assertEqual({t.addr for t in trace.tasks}, {0xA0, 0xB0})
        for tid, duration in expected["durations"].items():
            self.assertEqual(trace.task(tid).duration, duration, f"task {tid}")
        for tid, kind in expected["kinds"].items():
            self.assertEqual(trace.task_kind(trace.task(tid)), kind)
        self.assertEqual(trace.edges, expected["edges"])
        # X1 ended at 10 on w0 while X2 was created at 10 on w1: the end is X1's.
        self.assertEqual(trace.task(1).end_time, 10)
        self.assertEqual(trace.task(3).submit_time, 10)

    def test_nested_children_get_the_worker(self):
        trace, expected = self.scenario("fork_join")
        for tid, duration in expected["durations"].items():
            self.assertEqual(trace.task(tid).duration, duration, f"task {tid}")
        self.assertEqual(trace.task(2).parent, 1)
        # Segments of worker 0: P, C1, C4, P again after its resume.
        self.assertEqual(trace.segments[0], [(2, 13, 1), (13, 33, 2), (33, 63, 5), (91, 100, 1)])
        self.assertEqual(len(trace.steals), 1)
        self.assertEqual(trace.steals[0][2:], (0, 3))

    def test_suspended_on_one_worker_resumed_on_another(self):
        trace, expected = self.scenario("suspended_elsewhere")
        self.assertEqual(trace.task(1).duration, 20)
        (s,) = trace.suspensions
        self.assertEqual((s.worker, s.begin, s.end, s.resume_worker, s.wait), (0, 12, 30, 1, 3))
        self.assertEqual(trace.segments[0], [(2, 12, 1)])
        self.assertEqual(trace.segments[1], [(30, 40, 1)])

    def test_parent_context_moves_with_a_suspended_child(self):
        trace, expected = self.scenario("nested_suspend")
        for tid, duration in expected["durations"].items():
            self.assertEqual(trace.task(tid).duration, duration, f"task {tid}")
        self.assertEqual(trace.segments[1], [(30, 35, 2), (35, 45, 1)])

    def test_non_worker_buffer_is_sorted_and_intervals_pair(self):
        trace, expected = self.scenario("communication")
        self.assertEqual(len(trace.intervals), expected["intervals"])
        by = {(trace.kind_name(iv.kind), iv.begin): iv for iv in trace.intervals}
        iv = by[("MPI_Isend", 30)]
        self.assertEqual((iv.end, iv.begin_buffer, iv.end_buffer, iv.begin_value, iv.end_value), (60, 0, 2, 1, 99))
        self.assertEqual(by[("MPI_Isend", 5)].end, 25)
        self.assertEqual(by[("MPI_Iallreduce", 70)].end, 90)
        self.assertEqual(by[("MPI_Isend", 85)].end, 95)
        self.assertEqual(trace.marks, [(50, 0, 7, 5)])
        self.assertEqual(trace.polls[2], 1)

    def test_persistent_rounds_and_expanded_edges(self):
        trace, expected = self.scenario("persistent")
        self.assertEqual([t.round for t in trace.tasks], [0, 0, 1, 1, 2, 2])
        self.assertEqual([t.node for t in trace.tasks], [0, 1, 0, 1, 0, 1])
        self.assertEqual(trace.edges, [(1, 2)])
        self.assertEqual(sorted(trace.replay_edges), [(2, 3, 1), (3, 4, 0), (4, 5, 1), (5, 6, 0)])
        self.assertEqual(len(trace.recordings), 1)
        trace, expected = self.scenario("persistent_no_round0")
        self.assertEqual(sorted(trace.replay_edges), [(3, 4, 0), (4, 5, 1), (5, 6, 0)])

    @staticmethod
    def two_graphs(with_ids):
        # Graphs 1 and 2 (ids in graph_instance.d, as the recorder writes them), each a -> b in a
        # round and b -> a to the next, recorded and replayed interleaved on two workers.
        t = TraceBuilder(workers=2, end_ns=1000)
        k = t.kind("k")
        for g, w in ((1, 0), (2, 1)):
            for node in (0, 1):
                addr = 0x1000 * g + 0x10 * node
                t.simple_task(w, addr, k, 10 + node, 20 + 10 * node, 25 + 10 * node)
                t.graph_instance(w, 10 + node, addr, 0, node, graph=g if with_ids else 0)
            t.edge(w, 11, 0x1000 * g, 0x1000 * g + 0x10)
        for g, w in ((1, 0), (2, 1)):
            t.graph_edge(w, 50, g, 0, 1)
            t.graph_edge(w, 50, g, 1, 0, cyclic=True)
        for g, w in ((1, 0), (2, 1)):
            for node in (0, 1):
                addr = 0x1000 * g + 0x800 + 0x10 * node
                t.create(w, 60 + node, addr, 0, k, 4)
                t.graph_instance(w, 60 + node, addr, 1, node, graph=g if with_ids else 0)
                t.ready(w, 70 + 10 * node, addr)
                t.start(w, 70 + 10 * node, addr)
                t.end(w, 75 + 10 * node, addr)
        return parse_builder(t)

    def test_two_graphs_at_once_told_apart_by_their_ids(self):
        trace = self.two_graphs(with_ids=True)
        self.assertEqual(trace.warnings, [])
        self.assertEqual(len(trace.recordings), 2)
        name = {task.id: (task.addr >> 12, task.round, task.node) for task in trace.tasks}
        got = sorted((name[p], name[s], c) for p, s, c in trace.replay_edges)
        expected = sorted([((g, 0, 1), (g, 1, 0), 1) for g in (1, 2)] + [((g, 1, 0), (g, 1, 1), 0) for g in (1, 2)])
        self.assertEqual(got, expected)

    def test_two_graphs_at_once_without_ids_warn(self):
        # Per the spec (d = 0) the instances of two graphs replaying at once cannot be told apart.
        trace = self.two_graphs(with_ids=False)
        self.assertTrue(any("already seen" in w for w in trace.warnings), trace.warnings)

    def test_dropped_counts(self):
        trace, expected = self.scenario("dropped")
        self.assertEqual(trace.dropped, expected["dropped"])
        self.assertEqual(trace.buffer_dropped, {0: 5, 1: 2})

    def test_open_ends_run_to_the_end(self):
        t = TraceBuilder(workers=1, end_ns=50)
        k = t.kind("k")
        t.create(0, 0, 0x1, 0, k)
        t.submit(0, 0, 0x1)
        t.ready(0, 0, 0x1)
        t.start(0, 10, 0x1)
        trace = parse_builder(t)
        self.assertEqual(trace.segments[0], [(10, 50, 1)])
        self.assertTrue(any("still running" in w for w in trace.warnings))

    def test_inconsistent_events_warn_instead_of_failing(self):
        t = TraceBuilder(workers=1, end_ns=50)
        t.end(0, 5, 0x99)       # never created
        t.event(0, 6, 77)       # unknown type
        trace = parse_builder(t)
        text = " ".join(trace.warnings)
        self.assertIn("no task_create", text)
        self.assertIn("unknown type 77", text)


class ErrorTest(TraceTestCase):
    def good_bytes(self):
        builder, _ = scenarios.fork_join()
        return builder.to_bytes()

    def assertTraceError(self, data, *fragments):
        path = self.path("bad.wtrace")
        with open(path, "wb") as f:
            f.write(data)
        with self.assertRaises(TraceError) as ctx:
            read_trace(path)
        message = str(ctx.exception)
        self.assertIn(path, message)
        for fragment in fragments:
            self.assertIn(fragment, message)

    def test_wrong_magic(self):
        data = bytearray(self.good_bytes())
        data[0:8] = b"NOTWEFT!"
        self.assertTraceError(bytes(data), "not a weft trace")

    def test_wrong_version(self):
        data = bytearray(self.good_bytes())
        struct.pack_into("<I", data, 8, 2)
        self.assertTraceError(bytes(data), "version 2")

    def test_truncated_in_events(self):
        self.assertTraceError(self.good_bytes()[:-40], "truncated", "declares")

    def test_truncated_header(self):
        self.assertTraceError(self.good_bytes()[:30], "truncated", "header")

    def test_truncated_string_table(self):
        self.assertTraceError(self.good_bytes()[:70], "truncated", "string table")

    def test_empty_file(self):
        self.assertTraceError(b"", "not a weft trace")

    def test_bad_worker_field(self):
        data = bytearray(self.good_bytes())
        # First buffer block right after the header and the string table.
        builder, _ = scenarios.fork_join()
        offset = 64 + sum(8 + len(name.encode()) for _, _, name in builder.kinds)
        struct.pack_into("<I", data, offset, 7)
        self.assertTraceError(bytes(data), "names worker 7")

    def test_missing_file(self):
        with self.assertRaises(TraceError) as ctx:
            read_trace(self.path("absent.wtrace"))
        self.assertIn("absent.wtrace", str(ctx.exception))

    def test_trailing_bytes_warn(self):
        trace = parse_trace(self.good_bytes() + b"xx", "t")
        self.assertTrue(any("2 bytes after" in w for w in trace.warnings))


class NonWorkerTest(unittest.TestCase):
    def test_sort_keeps_slot_order_of_equal_times(self):
        t = TraceBuilder(workers=1, end_ns=100)
        comm = t.kind("MPI_Isend", 1)
        # Same id, begin/end/begin/end at one nanosecond, listed in slot order.
        t.interval_begin(NON_WORKER, 20, 1, comm)
        t.interval_end(NON_WORKER, 20, 1, comm)
        t.interval_begin(NON_WORKER, 10, 2, comm)
        t.interval_end(NON_WORKER, 30, 2, comm)
        trace = parse_builder(t)
        self.assertEqual(sorted((iv.id, iv.begin, iv.end) for iv in trace.intervals), [(1, 20, 20), (2, 10, 30)])
        self.assertEqual(trace.unmatched_interval_ends, 0)


if __name__ == "__main__":
    unittest.main()
