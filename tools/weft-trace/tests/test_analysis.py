"""Metrics against hand-computed values, and the sweeps against brute force on random traces."""

import random
import time
import unittest

from weft_trace import analysis
from weft_trace.analysis import (BREAKDOWN_KEYS, breakdown, critical_path, discovery, overlap, serial_intervals,
                                  summary, task_graph)
from weft_trace.reader import parse_trace

from . import scenarios
from .tracegen import TraceBuilder
from .util import TraceTestCase, parse_builder


class BreakdownTest(TraceTestCase):
    def test_known_breakdowns(self):
        for name in scenarios.ALL:
            trace, expected = self.scenario(name)
            if "breakdown" not in expected:
                continue
            with self.subTest(name):
                rows = breakdown(trace)["per_worker"]
                got = [tuple(r[key] for key in BREAKDOWN_KEYS) for r in rows]
                self.assertEqual(got, expected["breakdown"])

    def test_parts_sum_to_wall_time_on_every_worker(self):
        for name in scenarios.ALL:
            trace, _ = self.scenario(name)
            with self.subTest(name):
                for r in breakdown(trace)["per_worker"]:
                    parts = tuple(r[key] for key in BREAKDOWN_KEYS)
                    self.assertTrue(all(isinstance(p, int) and p >= 0 for p in parts), parts)
                    self.assertEqual(sum(parts), trace.end_ns)

    def test_average(self):
        trace, _ = self.scenario("fork_join")
        avg = breakdown(trace)["average"]
        self.assertEqual(tuple(avg[key] for key in BREAKDOWN_KEYS), (73.0, 6.0, 21.0, 100.0))

    def test_serial_code_is_not_idle(self):
        # Before the first task, between the phases and after the last one, no task is in flight:
        # serial time on every worker, even where a worker recorded that it waited for work.
        trace, expected = self.scenario("serial_phases")
        self.assertEqual(serial_intervals(trace), expected["serial"])
        s = summary(trace)
        self.assertEqual(s["breakdown"]["average"]["serial_ns"], 67.0)
        text = analysis.format_summary(s)
        self.assertIn("outside tasks / serial", text)
        self.assertRegex(text, r"worker 0 .* 23 ns  23\.0% +67 ns  67\.0%")

    def test_unfinished_tasks_are_in_flight_to_the_end(self):
        # A trace cut short (a killed run): the submitted task that never ended is in flight to the
        # end, a task never submitted (discarded) only at its creation.
        t = TraceBuilder(workers=1, end_ns=100)
        k = t.kind("k")
        t.create(0, 10, 0x1, 0, k)
        t.create(0, 20, 0x2, 0, k)
        t.submit(0, 21, 0x2)
        t.ready(0, 21, 0x2)
        t.start(0, 30, 0x2)
        self.assertEqual(serial_intervals(parse_builder(t)), [(0, 20)])

    def test_discovery(self):
        for name in ("chain", "fork_join"):
            trace, expected = self.scenario(name)
            rows = discovery(trace)["per_thread"]
            self.assertEqual({r["worker"]: r["discovery_ns"] for r in rows}, expected["discovery"])


class GraphTest(TraceTestCase):
    def test_counts_and_critical_paths(self):
        for name in scenarios.ALL:
            trace, expected = self.scenario(name)
            with self.subTest(name):
                s = summary(trace)
                if "tasks" in expected:
                    self.assertEqual(s["tasks"], expected["tasks"])
                if isinstance(expected.get("edges"), int):
                    self.assertEqual(s["edges"]["recorded"], expected["edges"])
                if "collapsed" in expected:
                    self.assertEqual(s["edges"]["collapsed"], expected["collapsed"])
                if "replayed" in expected:
                    self.assertEqual(s["edges"]["replayed"], expected["replayed"])
                if "critical_path" in expected:
                    self.assertEqual(s["critical_path"]["length_ns"], expected["critical_path"])

    def test_redirect_nodes_collapse(self):
        trace, expected = self.scenario("diamond_redirect")
        s = summary(trace)
        self.assertEqual(s["redirect_nodes"], 1)
        self.assertEqual(set(task_graph(trace).edges), {(1, 2), (1, 3), (2, 4), (3, 4)})
        self.assertEqual(len(task_graph(trace, collapse=False).edges), 5)
        self.assertEqual(critical_path(trace)["tasks"], [1, 2, 5, 4])

    def test_chained_redirects_collapse(self):
        t = TraceBuilder(workers=1, end_ns=100)
        k = t.kind("k")
        for n, addr in enumerate((0x1, 0x2, 0x3, 0x4)):
            t.create(0, n, addr, 0, k, 2 if addr in (0x2, 0x3) else 0)
        t.edge(0, 5, 0x1, 0x2)
        t.edge(0, 5, 0x2, 0x3)
        t.edge(0, 5, 0x3, 0x4)
        t.edge(0, 5, 0x1, 0x4)
        trace = parse_builder(t)
        self.assertEqual(task_graph(trace).edges, {(1, 4): "recorded"})

    def test_persistent_rounds(self):
        trace, expected = self.scenario("persistent")
        s = summary(trace)
        (g,) = s["persistent_graphs"]
        self.assertEqual((g["graph"], g["nodes"], g["edges"], g["cyclic_edges"], g["rounds"]),
                         ("0xfeed", 2, 1, 1, expected["rounds"]))
        self.assertEqual(critical_path(trace)["tasks"], [1, 2, 3, 4, 5, 6])
        trace, expected = self.scenario("persistent_no_round0")
        (g,) = summary(trace)["persistent_graphs"]
        self.assertEqual(g["rounds"], 2)
        self.assertIn("round 0", g["note"])

    def test_cycle_is_reported_not_fatal(self):
        t = TraceBuilder(workers=1, end_ns=100)
        k = t.kind("k")
        t.simple_task(0, 0x1, k, 0, 10, 20)
        t.simple_task(0, 0x2, k, 1, 20, 30)
        t.edge(0, 2, 0x1, 0x2)
        t.edge(0, 2, 0x2, 0x1)
        cp = critical_path(parse_builder(t))
        self.assertEqual(cp["cycle_tasks"], 2)


class KindsAndCountsTest(TraceTestCase):
    def test_kind_table(self):
        trace, _ = self.scenario("fork_join")
        rows = {r["kind"]: r for r in summary(trace)["kinds"]}
        leaf = rows["leaf"]
        self.assertEqual((leaf["count"], leaf["total_ns"], leaf["mean_ns"], leaf["min_ns"], leaf["max_ns"]),
                         (4, 110, 27.5, 20, 40))
        self.assertEqual(rows["root"]["total_ns"], 20)

    def test_label_overrides_kind(self):
        trace, _ = self.scenario("recycled")
        kinds = {r["kind"] for r in summary(trace)["kinds"]}
        self.assertEqual(kinds, {"first", "second", "relabelled", "y"})

    def test_gang_members(self):
        """Members of a nested region are work of the region's kind, not tasks of the program."""
        trace, expected = self.scenario("gang_members")
        self.assertEqual({t.id: t.duration for t in trace.tasks}, expected["durations"])
        s = summary(trace)
        self.assertEqual((s["tasks"], s["member_runs"], s["redirect_nodes"]), (1, 2, 0))
        rows = {r["kind"]: r for r in s["kinds"]}
        self.assertEqual((rows["region"]["count"], rows["region"]["total_ns"]), (2, 33))
        self.assertEqual(s["suspensions"], {"total": 2, "by_wait_kind": {"barrier": 2}})
        self.assertEqual(s["critical_path"]["length_ns"], expected["critical_path"])
        self.assertEqual(s["discovery"]["total_ns"], 1)
        self.assertIn("2 member runs", analysis.format_summary(s))
        self.assertEqual(s["warnings"], [])

    def test_wait_kind_numbers(self):
        """The runtime's fiber::wait_kind numbers (src/fiber/context.hpp asserts them)."""
        from weft_trace.reader import WAIT_KINDS
        self.assertEqual([WAIT_KINDS[k] for k in range(9)],
                         ["other", "children", "taskgroup", "event", "predecessors", "yield", "throttle",
                          "barrier", "graph"])

    def test_steals_suspensions_dropped(self):
        s = summary(self.scenario("fork_join")[0])
        self.assertEqual(s["steals"], 1)
        self.assertEqual(s["suspensions"], {"total": 1, "by_wait_kind": {"children": 1}})
        s = summary(self.scenario("dropped")[0])
        self.assertEqual(s["dropped"]["total"], 7)
        self.assertIn("DROPPED", analysis.format_summary(s))

    def test_parallelism(self):
        trace, _ = self.scenario("fork_join")
        p = analysis.parallelism(trace, 20)
        self.assertAlmostEqual(p["average"], 146 / 200)
        self.assertEqual(len(p["profile"]), 20)
        # 20 <= t < 30: both workers busy.
        self.assertEqual(p["profile"][2]["running"], 2.0)
        self.assertEqual(sum(d["time_ns"] for d in p["distribution"]), 200)
        self.assertEqual(sum(d["running"] * d["time_ns"] for d in p["distribution"]), 146)


class OverlapTest(TraceTestCase):
    def test_hand_computed(self):
        trace, expected = self.scenario("communication")
        o = overlap(trace)
        rows = {r["kind"]: r for r in o["kinds"]}
        self.assertEqual(set(rows), set(expected["overlap"]))
        for kind, (n, comm, work) in expected["overlap"].items():
            r = rows[kind]
            self.assertEqual((r["requests"], r["communication_ns"], r["overlapped_work_ns"]), (n, comm, work))
            self.assertAlmostEqual(r["overlap_ratio"], work / (2 * comm))
        t = o["total"]
        self.assertEqual((t["requests"], t["communication_ns"], t["overlapped_work_ns"]), expected["total"])
        self.assertAlmostEqual(t["overlap_ratio"], 0.5)

    def test_no_communication(self):
        trace, _ = self.scenario("chain")
        o = overlap(trace)
        self.assertEqual(o["kinds"], [])
        self.assertIsNone(o["total"]["overlap_ratio"])
        self.assertIn("no communication intervals", analysis.format_overlap(o))


def random_trace(seed, workers=3, tasks=40, nest=True):
    """A random but well-formed trace: tasks created by worker 0, run where a worker is free,
    sometimes with a child nested inside (the parent's taskwait)."""
    rng = random.Random(seed)
    t = TraceBuilder(workers=workers, end_ns=0)
    kinds = [t.kind(f"k{i}") for i in range(4)]
    free = [0] * workers
    clock = 0
    addr = 0x1000
    for _ in range(tasks):
        clock += rng.randint(0, 6)
        addr += 0x40
        t.create(0, clock, addr, 0, rng.choice(kinds))
        t.submit(0, clock + 1, addr)
        ready = clock + 1 + rng.randint(0, 10)
        t.ready(0, ready, addr)
        w = min(range(workers), key=lambda i: free[i])
        start = max(free[w], ready) + rng.randint(0, 4)
        t.start(w, start, addr)
        end = start + rng.randint(1, 30)
        if nest and rng.random() < 0.3:
            # A child created and run inside the parent's body, on the same worker.
            child = addr + 0x20
            c0 = start + 1
            t.create(w, c0, child, addr, kinds[0])
            t.submit(w, c0, child)
            t.ready(w, c0, child)
            t.start(w, c0 + 1, child)
            t.end(w, c0 + 1 + rng.randint(1, 10), child)
            end = max(end, c0 + 12)
        t.end(w, end, addr)
        free[w] = end + rng.randint(0, 5)
    t.end_ns = max(free) + rng.randint(0, 20)
    return t


def brute_force_breakdown(trace):
    """Nanosecond by nanosecond: who runs, is a task ready, is a task in flight."""
    wall = trace.end_ns
    busy = [[False] * wall for _ in range(trace.workers)]
    for w in range(trace.workers):
        for b, e, _ in trace.segments[w]:
            for x in range(b, min(e, wall)):
                busy[w][x] = True
    ready = [False] * wall
    for task in trace.tasks:
        if task.ready_time is not None:
            end = task.start_time if task.start_time is not None else wall
            for x in range(task.ready_time, min(end, wall)):
                ready[x] = True
    in_flight = [False] * wall
    for task in trace.tasks:
        end = task.end_time if task.end_time is not None else wall
        for x in range(task.create_time, min(end, wall)):
            in_flight[x] = True
    out = []
    for w in range(trace.workers):
        work = sum(busy[w])
        overhead = sum(1 for x in range(wall) if not busy[w][x] and ready[x])
        serial = sum(1 for x in range(wall) if not in_flight[x])
        out.append((work, overhead, wall - work - overhead - serial, serial))
    return out


class RandomTest(unittest.TestCase):
    def test_sweeps_match_brute_force(self):
        for seed in range(25):
            trace = parse_builder(random_trace(seed))
            with self.subTest(seed=seed):
                self.assertEqual(trace.warnings, [])
                rows = breakdown(trace)["per_worker"]
                self.assertEqual([tuple(r[key] for key in BREAKDOWN_KEYS) for r in rows],
                                 brute_force_breakdown(trace))
                # Each task's body time is counted once: the workers' work is the sum of durations.
                self.assertEqual(sum(r["work_ns"] for r in rows), sum(t.duration for t in trace.tasks))

    def test_overlap_matches_brute_force(self):
        for seed in range(10):
            builder = random_trace(seed, nest=False)
            rng = random.Random(seed)
            comm = builder.kind("MPI_Isend", 1)
            spans = []
            for i in range(8):
                b = rng.randint(0, builder.end_ns - 1)
                e = rng.randint(b, builder.end_ns)
                spans.append((b, e))
                builder.interval_begin(rng.randrange(builder.workers), b, i, comm)
                builder.interval_end(None, e, i, comm)
            trace = parse_builder(builder)
            busy = [set() for _ in range(trace.workers)]
            for w in range(trace.workers):
                for b, e, _ in trace.segments[w]:
                    busy[w].update(range(b, e))
            work = sum(sum(1 for w in range(trace.workers) for x in range(b, e) if x in busy[w]) for b, e in spans)
            total = overlap(trace)["total"]
            self.assertEqual(total["communication_ns"], sum(e - b for b, e in spans))
            self.assertEqual(total["overlapped_work_ns"], work)

    def test_a_million_events_in_reasonable_time(self):
        # About 1.2 million events: 150k tasks, 8 events each, on 8 workers.
        rng = random.Random(1)
        t = TraceBuilder(workers=8, end_ns=0)
        k = [t.kind(f"k{i}") for i in range(20)]
        clock = [0] * 8
        for n in range(150_000):
            w = n % 8
            addr = 0x10000 + (n % 4096) * 64  # addresses recycled many times
            c = clock[w]
            t.create(w, c, addr, 0, k[n % 20])
            t.submit(w, c + 1, addr)
            t.ready(w, c + 2, addr)
            t.start(w, c + 3, addr)
            t.end(w, c + 3 + rng.randint(1, 50), addr)
            t.idle(w, c + 60, c + 61)
            t.edge(w, c + 1, addr, addr)  # a self edge: ignored by the graph
            clock[w] = c + 62
        t.end_ns = max(clock)
        data = t.to_bytes()
        began = time.perf_counter()
        trace = parse_trace(data, "<big>")
        s = summary(trace)
        elapsed = time.perf_counter() - began
        self.assertEqual(s["tasks"], 150_000)
        self.assertEqual(len({task.id for task in trace.tasks}), 150_000)
        for r in s["breakdown"]["per_worker"]:
            self.assertEqual(sum(r[key] for key in BREAKDOWN_KEYS), trace.end_ns)
        self.assertLess(elapsed, 60, f"reading and summarising took {elapsed:.1f} s")


if __name__ == "__main__":
    unittest.main()
