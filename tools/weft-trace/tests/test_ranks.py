"""Traces of an MPI run, one per rank: the header's rank fields, reading several files, and every
command on them (scenarios.mpi_run, worked out by hand in its docstring)."""

import json
import os
import struct
import subprocess
import unittest
import xml.etree.ElementTree as ET

from weft_trace.analysis import format_overlap_many, format_summary_many, overlap_many, summary_many
from weft_trace.export import write_perfetto, write_perfetto_many
from weft_trace.gantt import build_layout_many, write_gantt_many
from weft_trace.reader import TraceError, load_many, read_trace, time_offsets

from .test_outputs import HAVE_MATPLOTLIB, SVG, png_size
from .tracegen import TraceBuilder
from .util import PYTHON, TraceTestCase, cli_env, parse_builder, read_text


def with_rank(rank, ranks, **kw):
    t = TraceBuilder(workers=1, end_ns=10, rank=rank, ranks=ranks, **kw)
    t.simple_task(0, 0x1, t.kind("k"), 0, 1, 5)
    return t


class RankFieldsTest(TraceTestCase):
    def test_header_bytes(self):
        # Offsets 56 and 60 of the spec, independently of both structs.
        data = with_rank(3, 8).to_bytes()
        self.assertEqual(struct.unpack_from("<i", data, 56)[0], 3)
        self.assertEqual(struct.unpack_from("<I", data, 60)[0], 8)
        self.assertEqual(with_rank(-1, 0).to_bytes()[56:60], b"\xff\xff\xff\xff")

    def test_rank_of_ranks(self):
        trace = parse_builder(with_rank(2, 4))
        self.assertEqual((trace.rank, trace.ranks, trace.tag, trace.group_name), (2, 4, "r2", "rank 2"))
        self.assertEqual(trace.warnings, [])

    def test_no_rank(self):
        # -1, 0 outside MPI; 0, 0 in a trace written when the field was `u64 reserved = 0`.
        for rank in (-1, 0):
            with self.subTest(rank=rank):
                trace = parse_builder(with_rank(rank, 0))
                self.assertEqual((trace.rank, trace.ranks), (None, 0))
                self.assertEqual(trace.warnings, [])

    def test_rank_out_of_range_warns(self):
        trace = parse_builder(with_rank(5, 4))
        self.assertEqual(trace.rank, 5)
        self.assertIn("rank 5 of 4", trace.warnings[0])


class LoadManyTest(TraceTestCase):
    def write(self, name, builder):
        return builder.write(self.path(name))

    def test_sorted_by_rank(self):
        paths, _ = self.mpi_files()
        traces = load_many(paths)
        self.assertEqual([t.rank for t in traces], [0, 1, 2])
        self.assertEqual([os.path.basename(t.path) for t in traces], ["run.trace.0", "run.trace.1", "run.trace.2"])

    def test_without_ranks_file_order(self):
        paths = [self.write(n, with_rank(-1, 0, pid=p)) for n, p in (("b", 2), ("a", 1))]
        traces = load_many(paths)
        self.assertEqual([(t.pid, t.tag, t.group_name) for t in traces], [(2, "t0", "trace 0"), (1, "t1", "trace 1")])

    def test_one_trace(self):
        trace, = load_many([self.write("one", with_rank(1, 2))])
        self.assertEqual(trace.rank, 1)

    def test_mixed_ranked_and_not(self):
        a = self.write("a", with_rank(0, 2))
        b = self.write("b", with_rank(0, 0))  # an old trace: no rank
        with self.assertRaises(TraceError) as cm:
            load_many([a, b])
        self.assertIn(b, str(cm.exception))
        self.assertIn("no MPI rank", str(cm.exception))

    def test_rank_twice(self):
        a, b = self.write("a", with_rank(1, 2)), self.write("b", with_rank(1, 2))
        with self.assertRaises(TraceError) as cm:
            load_many([a, b])
        self.assertIn("rank 1", str(cm.exception))
        self.assertIn(a, str(cm.exception))

    def test_different_runs(self):
        a, b = self.write("a", with_rank(0, 2)), self.write("b", with_rank(1, 4))
        with self.assertRaises(TraceError) as cm:
            load_many([a, b])
        self.assertIn("different runs", str(cm.exception))


class AlignmentTest(TraceTestCase):
    def test_one_machine(self):
        paths, expected = self.mpi_files()
        offsets, how = time_offsets(load_many(paths))
        self.assertEqual((offsets, how), (expected["offsets"], "clock"))

    def test_machines_apart(self):
        paths, expected = self.mpi_files(machines=3)
        traces = load_many(paths)
        self.assertEqual(time_offsets(traces), (expected["offsets"], "start"))
        # Forced: the clocks taken as one (5 s apart each).
        self.assertEqual(time_offsets(traces, "clock")[0], [0, 5_000_000_030, 10_000_000_010])
        self.assertEqual(time_offsets(load_many(self.mpi_files()[0]), "start")[0], [0, 0, 0])

    def test_spans_touching_at_one_instant_meet(self):
        a = TraceBuilder(workers=1, end_ns=100, start_ns=1000, rank=0, ranks=2)
        b = TraceBuilder(workers=1, end_ns=100, start_ns=1100, rank=1, ranks=2)
        traces = [parse_builder(a), parse_builder(b)]
        self.assertEqual(time_offsets(traces), ([0, 100], "clock"))


class OverlapManyTest(TraceTestCase):
    def test_hand_computed(self):
        paths, expected = self.mpi_files()
        m = overlap_many(load_many(paths))
        per_rank = [(o["total"]["requests"], o["total"]["communication_ns"], o["total"]["overlapped_work_ns"])
                    for o in m["traces"]]
        self.assertEqual(per_rank, expected["per_rank_total"])
        self.assertEqual([o["rank"] for o in m["traces"]], [0, 1, 2])
        self.assertAlmostEqual(m["traces"][1]["kinds"][0]["overlap_ratio"], 1.0)  # r1's Isend: 20 / (1 x 20)
        rows = {r["kind"]: r for r in m["all"]["kinds"]}
        self.assertEqual(set(rows), set(expected["overlap"]))
        for kind, (n, comm, work, capacity) in expected["overlap"].items():
            r = rows[kind]
            self.assertEqual((r["requests"], r["communication_ns"], r["overlapped_work_ns"],
                              r["workers_x_communication_ns"]), (n, comm, work, capacity))
            self.assertAlmostEqual(r["overlap_ratio"], work / capacity)
        t = m["all"]["total"]
        self.assertEqual((t["requests"], t["communication_ns"], t["overlapped_work_ns"],
                          t["workers_x_communication_ns"]), expected["total"])
        self.assertAlmostEqual(t["overlap_ratio"], 0.5)
        text = format_overlap_many(m)
        for part in ("rank 0 (", "rank 2 (", "all 3 traces", "MPI_Recv", "64.3%"):  # 90 / 140
            self.assertIn(part, text)


class SummaryManyTest(TraceTestCase):
    def test_wall_time_and_offsets(self):
        for machines in (1, 3):
            with self.subTest(machines=machines):
                paths, expected = self.mpi_files(machines)
                traces = load_many(paths)
                offsets, how = time_offsets(traces)
                m = summary_many(traces, offsets, how)
                self.assertEqual(m["wall_ns"], expected["wall"])
                self.assertEqual([s["offset_ns"] for s in m["traces"]], expected["offsets"])
                self.assertEqual([(s["rank"], s["ranks"], s["workers"]) for s in m["traces"]],
                                 [(0, 3, 2), (1, 3, 1), (2, 3, 2)])
                text = format_summary_many(m)
                self.assertIn("===== rank 1 =====", text)
                self.assertIn("trace " + paths[2] + " (rank 1 of 3)", text)
                self.assertIn(f"wall time (earliest start to latest end): {expected['wall']} ns", text)


class GanttManyTest(TraceTestCase):
    def layout(self, machines=1, **kw):
        traces = load_many(self.mpi_files(machines)[0])
        offsets, how = time_offsets(traces)
        return build_layout_many(traces, offsets, how, **kw)

    def test_row_groups(self):
        lay = self.layout()
        self.assertEqual(lay.rows, ["r0 w0", "r0 w1", "r1 w0", "r2 w0", "r2 w1"])
        self.assertEqual(lay.groups, [(0, 2, "rank 0"), (2, 1, "rank 1"), (3, 2, "rank 2")])
        self.assertIn("earliest trace start", lay.axis_label)

    def test_times_moved_by_the_offsets(self):
        lay = self.layout()
        scale = lay.plot[2] / 110  # the axis spans the run: 110 ns
        boxes = {row: (x0, x1) for row, x0, x1, _ in lay.tasks}
        # r1's task runs [0, 40] in its trace, which starts 30 ns after r0's.
        self.assertAlmostEqual(boxes[2][0], 30 * scale)
        self.assertAlmostEqual(boxes[2][1], 70 * scale)
        # r2 w1's task [10, 45], 10 ns later.
        self.assertAlmostEqual(boxes[4][0], 20 * scale)
        lay = self.layout(machines=3)
        self.assertAlmostEqual({row: x0 for row, x0, _, _ in lay.tasks}[2], 0)
        self.assertIn("start of each trace", lay.axis_label)

    def test_kinds_matched_by_name_across_traces(self):
        # Kind ids are numbered per file: "compute" is kind 1 in r0 and kind 2 in r1, whose kind 1
        # is "pack". One colour per name, one legend entry each.
        a = TraceBuilder(workers=1, end_ns=100, rank=0, ranks=2)
        a.simple_task(0, 0x1, a.kind("compute"), 0, 10, 90)
        b = TraceBuilder(workers=1, end_ns=100, rank=1, ranks=2)
        pack, compute = b.kind("pack"), b.kind("compute")
        b.simple_task(0, 0x1, pack, 0, 0, 10)
        b.simple_task(0, 0x2, compute, 0, 20, 60)
        lay = build_layout_many([parse_builder(a), parse_builder(b)], [0, 0], "clock")
        colour = {(row, round(x0)): c for row, x0, _, c in lay.tasks}
        self.assertEqual(len(colour), 3)
        scale = lay.plot[2] / 100
        self.assertEqual(colour[(0, round(10 * scale))], colour[(1, round(20 * scale))])  # both compute
        self.assertNotEqual(colour[(1, 0)], colour[(1, round(20 * scale))])
        self.assertEqual([label for label, _ in lay.legend][:2], ["compute", "pack"])

    def test_svg(self):
        traces = load_many(self.mpi_files()[0])
        offsets, how = time_offsets(traces)
        out = self.path("g.svg")
        write_gantt_many(traces, offsets, how, out, width=900, height=400)
        root = ET.parse(out).getroot()
        self.assertEqual((root.get("width"), root.get("height")), ("900", "400"))
        labels = {t.text for t in root.iter(f"{SVG}text")}
        self.assertTrue({"r0 w0", "r0 w1", "r1 w0", "r2 w0", "r2 w1"} <= labels)
        separators = [e for e in root.iter(f"{SVG}line") if e.get("class") == "group"]
        self.assertEqual(len(separators), 2)  # between r0 and r1, r1 and r2

    @unittest.skipUnless(HAVE_MATPLOTLIB, "matplotlib is not installed (apt install python3-matplotlib): "
                                          "PNG output not tested")
    def test_png(self):
        traces = load_many(self.mpi_files()[0])
        out = self.path("g.png")
        write_gantt_many(traces, [0, 30, 10], "clock", out, width=700, height=250)
        self.assertEqual(png_size(out), (700, 250))


class PerfettoManyTest(TraceTestCase):
    def events(self, paths, flows=False):
        traces = load_many(paths)
        out = self.path("p.json")
        count = write_perfetto_many(traces, time_offsets(traces)[0], out, flows)
        with open(out, encoding="utf-8") as f:
            events = json.load(f)["traceEvents"]
        self.assertEqual(len(events), count)
        return events

    def test_one_process_per_rank(self):
        events = self.events(self.mpi_files()[0], flows=True)
        names = {e["pid"]: e["args"]["name"] for e in events if e["name"] == "process_name"}
        self.assertEqual(names, {100: "rank 0", 101: "rank 1", 102: "rank 2"})
        self.assertEqual({e["pid"] for e in events}, {100, 101, 102})
        order = {e["pid"]: e["args"]["sort_index"] for e in events if e["name"] == "process_sort_index"}
        self.assertEqual(order, {100: 0, 101: 1, 102: 2})
        # r1's task starts at 0 in its trace, 30 ns after r0's start.
        task = [e for e in events if e["ph"] == "X" and e["cat"] == "task" and e["pid"] == 101][0]
        self.assertEqual((task["ts"], task["dur"]), (0.03, 0.04))
        # Async ids stay apart between processes (the trace-event format matches them globally).
        begins = [e["id"] for e in events if e["ph"] == "b"]
        self.assertEqual(len(begins), len(set(begins)))
        self.assertEqual(sum(1 for e in events if e["ph"] == "b" and e["cat"] == "communication"), 6)

    def test_pids_shared_across_machines(self):
        paths = [with_rank(r, 2, pid=77).write(self.path(f"t.{r}")) for r in (0, 1)]
        events = self.events(paths)
        names = {e["pid"]: e["args"]["name"] for e in events if e["name"] == "process_name"}
        self.assertEqual(names, {1: "rank 0", 2: "rank 1"})

    def test_single_trace_with_a_rank(self):
        trace = read_trace(with_rank(4, 8).write(self.path("t.4")))
        out = self.path("one.json")
        write_perfetto(trace, out)
        with open(out, encoding="utf-8") as f:
            events = json.load(f)["traceEvents"]
        self.assertEqual([e["args"]["name"] for e in events if e["name"] == "process_name"], ["rank 4"])


class CliManyTest(TraceTestCase):
    def run_cli(self, *args, expect=0):
        proc = subprocess.run([PYTHON, "-m", "weft_trace", *args], capture_output=True, text=True,
                              env=cli_env(), timeout=120)
        self.assertEqual(proc.returncode, expect, f"stdout:\n{proc.stdout}\nstderr:\n{proc.stderr}")
        self.assertNotIn("Traceback", proc.stderr)
        return proc

    def test_summary(self):
        paths, _ = self.mpi_files()
        text = self.run_cli("summary", *paths).stdout
        self.assertEqual(text.count("===== rank "), 3)
        self.assertIn("wall time (earliest start to latest end): 110 ns", text)
        doc = json.loads(self.run_cli("summary", *paths, "--json", "--align", "start").stdout)
        self.assertEqual((doc["alignment"], doc["wall_ns"], doc["ranks"]), ("start", 100, 3))
        self.assertEqual([s["rank"] for s in doc["traces"]], [0, 1, 2])

    def test_overlap(self):
        paths, expected = self.mpi_files()
        text = self.run_cli("overlap", *paths).stdout
        self.assertIn("all 3 traces", text)
        doc = json.loads(self.run_cli("overlap", *paths, "--json").stdout)
        t = doc["all"]["total"]
        self.assertEqual((t["requests"], t["communication_ns"], t["overlapped_work_ns"],
                          t["workers_x_communication_ns"]), expected["total"])
        self.assertEqual(len(doc["traces"]), 3)

    def test_gantt_and_perfetto(self):
        paths, _ = self.mpi_files()
        out = self.path("g.svg")
        stdout = self.run_cli("gantt", *paths, "-o", out, "--from", "20", "--to", "90").stdout
        self.assertIn("3 traces, 5 workers", stdout)
        self.assertIn("r2 w1", read_text(out))
        out = self.path("p.json")
        self.run_cli("perfetto", *paths, "-o", out)
        with open(out, encoding="utf-8") as f:
            pids = {e["pid"] for e in json.load(f)["traceEvents"]}
        self.assertEqual(len(pids), 3)

    def test_graph_needs_one_trace(self):
        paths, _ = self.mpi_files()
        out = self.path("g.dot")
        proc = self.run_cli("graph", *paths, "-o", out, expect=2)
        self.assertIn("--rank", proc.stderr)
        self.assertFalse(os.path.exists(out))
        self.assertIn("2 tasks", self.run_cli("graph", *paths, "-o", out, "--rank", "0").stdout)
        proc = self.run_cli("graph", *paths, "-o", out, "--rank", "7", expect=2)
        self.assertIn("their ranks: 0, 1, 2", proc.stderr)

    def test_traces_of_different_runs(self):
        paths, _ = self.mpi_files()
        old = TraceBuilder(workers=1, end_ns=10).write(self.path("old.wtrace"))  # rank 0 of 0: none
        again = with_rank(1, 3).write(self.path("again.trace"))
        for extra, message in ((old, "no MPI rank"), (again, "is rank 1, like")):
            for command in (["summary"], ["overlap"], ["gantt", "-o", self.path("x.svg")],
                            ["perfetto", "-o", self.path("x.json")]):
                with self.subTest(extra=extra, command=command[0]):
                    proc = self.run_cli(command[0], *paths, extra, *command[1:], expect=2)
                    self.assertIn(message, proc.stderr)
                    self.assertIn("error", proc.stderr)


if __name__ == "__main__":
    unittest.main()
