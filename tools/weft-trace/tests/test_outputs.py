"""Files written by gantt, perfetto and graph: they parse, with the expected sizes and counts."""

import colorsys
import importlib.util
import json
import struct
import sys
import unittest
import unittest.mock
import xml.etree.ElementTree as ET

from weft_trace.export import ExportError, select_graph, write_graph, write_perfetto
from weft_trace.gantt import CREATING, SERIAL, GanttError, build_layout, kind_colours, round_colour, write_gantt

from . import dotcheck
from .util import TraceTestCase, read_text

HAVE_MATPLOTLIB = importlib.util.find_spec("matplotlib") is not None
SVG = "{http://www.w3.org/2000/svg}"
GRAPHML = "{http://graphml.graphdrawing.org/xmlns}"


def png_size(path):
    """Width and height from the IHDR chunk, the first one after the 8-byte signature."""
    with open(path, "rb") as f:
        head = f.read(24)
    assert head[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    assert head[12:16] == b"IHDR"
    return struct.unpack(">II", head[16:24])


class GanttTest(TraceTestCase):
    def test_svg_parses_with_the_asked_size(self):
        for name, (w, h) in (("fork_join", (1600, 600)), ("nested_suspend", (901, 333))):
            trace, _ = self.scenario(name)
            out = self.path(f"{name}.svg")
            write_gantt(trace, out, width=w, height=h)
            root = ET.parse(out).getroot()
            self.assertEqual(root.tag, f"{SVG}svg")
            self.assertEqual((root.get("width"), root.get("height")), (str(w), str(h)))

    def test_svg_content(self):
        trace, _ = self.scenario("fork_join")
        out = self.path("g.svg")
        lay = write_gantt(trace, out)
        text = read_text(out)
        # Seven task segments, all wider than a pixel at this scale, in three kind colours.
        self.assertEqual(len(lay.tasks), 7)
        self.assertEqual(len({c for *_, c in lay.tasks}), 3)
        self.assertEqual(len(lay.idle), 4)
        self.assertEqual(len(lay.suspended), 1)  # P, suspended from 63 to 91 on worker 0
        for label in ("worker 0", "worker 1", "leaf", "root", "join", "suspended"):
            self.assertIn(label, text)

    def test_suspension_bar(self):
        trace, _ = self.scenario("suspended_elsewhere")
        lay = build_layout(trace)
        self.assertEqual(len(lay.suspended), 1)
        row, x0, x1 = lay.suspended[0]
        self.assertEqual(row, 0)
        scale = lay.plot[2] / trace.end_ns
        self.assertAlmostEqual(x0, 12 * scale)
        self.assertAlmostEqual(x1, 30 * scale)

    def test_zoom_window(self):
        trace, _ = self.scenario("fork_join")
        lay = build_layout(trace, t_from=20, t_to=40)
        # Running in [20, 40]: C1 then C4 on w0, C2 on w1.
        self.assertEqual(len(lay.tasks), 3)
        self.assertTrue(all(0 <= x0 < x1 <= lay.plot[2] + 1e-9 for _, x0, x1, _ in lay.tasks))
        with self.assertRaises(GanttError):
            build_layout(trace, t_from=50, t_to=40)

    def test_iteration_colours(self):
        trace, _ = self.scenario("persistent")
        lay = build_layout(trace, color="iteration")
        self.assertEqual([label for label, _ in lay.legend[:3]], ["round 0", "round 1", "round 2"])
        self.assertEqual(len({c for *_, c in lay.tasks}), 3)

    def test_serial_time_is_drawn(self):
        trace, expected = self.scenario("serial_phases")
        out = self.path("serial.svg")
        lay = write_gantt(trace, out)
        scale = lay.plot[2] / trace.end_ns
        for row in (0, 1):  # on every row, over the recorded idle time of worker 1
            spans = [(round(x0 / scale), round(x1 / scale)) for r, x0, x1 in lay.serial if r == row]
            self.assertEqual(spans, expected["serial"])
        self.assertIn(("outside tasks / serial", SERIAL), lay.legend)
        self.assertIn(f'fill="{SERIAL}"', read_text(out))

    def test_task_creation_is_drawn(self):
        # Only the producer (worker 0) created tasks: a strip over each task_create..task_submit.
        trace, expected = self.scenario("serial_phases")
        out = self.path("creating.svg")
        lay = write_gantt(trace, out)
        scale = lay.plot[2] / trace.end_ns
        self.assertEqual([(r, round(x0 / scale), round(x1 / scale)) for r, x0, x1 in lay.creating],
                         [(0, b, e) for b, e in expected["creating"]])
        self.assertIn(("creating tasks", CREATING), lay.legend)
        self.assertIn(f'fill="{CREATING}"', read_text(out))

    def test_kind_colours_do_not_depend_on_time_or_order(self):
        # Two runs of one program: the same kinds, which took different times and appeared in
        # another order. Each kind keeps its colour, and the kinds shown have distinct colours.
        from .tracegen import TraceBuilder
        from .util import parse_builder
        names = ["potrf", "trsm", "syrk", "gemm", "main._omp_fn.3", "[lambda() #1]"]
        legends = []
        for run in range(2):
            order = names if run == 0 else names[::-1]
            t = TraceBuilder(workers=1, end_ns=10_000)
            for n, name in enumerate(order):
                k = t.kind(name)
                t.simple_task(0, 0x100 + n, k, 0, 10 + 1000 * n, 10 + 1000 * n + 100 * (n + 1))
            lay = build_layout(parse_builder(t))
            legends.append({label: c for label, c in lay.legend if label in names})
        self.assertEqual(legends[0], legends[1])
        self.assertEqual(len(set(legends[0].values())), len(names))
        self.assertEqual(kind_colours(names), legends[0])

    def test_iteration_colours_do_not_repeat(self):
        # 40 rounds of one replayed task each: 40 colours, and a legend that says how many rounds.
        from .tracegen import REPLAY, TraceBuilder
        from .util import parse_builder
        t = TraceBuilder(workers=1, end_ns=4000)
        k = t.kind("step")
        for r in range(40):
            t.simple_task(0, 0x100, k, 100 * r, 100 * r + 10, 100 * r + 90, flags=REPLAY if r else 0)
            t.graph_instance(0, 100 * r, 0x100, r, 0, graph=1)
        lay = build_layout(parse_builder(t), color="iteration")
        self.assertEqual(len({c for *_, c in lay.tasks}), 40)
        labels = [label for label, _ in lay.legend]
        self.assertEqual(labels[:10], [f"round {r}" for r in range(10)])
        self.assertEqual(labels[10:12], ["... 29 more rounds ...", "round 39"])
        colours = [round_colour(r) for r in range(500)]
        self.assertEqual(len(set(colours)), 500)
        for r in range(499):  # successive rounds are far apart on the colour wheel
            h0 = colorsys.rgb_to_hls(*(int(colours[r][i:i + 2], 16) / 255 for i in (1, 3, 5)))[0]
            h1 = colorsys.rgb_to_hls(*(int(colours[r + 1][i:i + 2], 16) / 255 for i in (1, 3, 5)))[0]
            self.assertGreater(min(abs(h0 - h1), 1 - abs(h0 - h1)), 0.3)

    def test_many_small_tasks_are_pooled(self):
        from .test_analysis import random_trace
        from .util import parse_builder
        trace = parse_builder(random_trace(3, tasks=3000))
        lay = build_layout(trace, width=400, height=200)
        plot_w = lay.plot[2]
        for w in range(trace.workers):
            self.assertLessEqual(sum(1 for r in lay.tasks if r[0] == w), 2 * plot_w)

    def test_other_kinds_beyond_twelve(self):
        from .tracegen import TraceBuilder
        from .util import parse_builder
        t = TraceBuilder(workers=1, end_ns=1000)
        for n in range(15):
            k = t.kind(f"kind{n:02d}")
            t.simple_task(0, 0x100 + n, k, 0, 10 + 60 * n, 10 + 60 * n + 50 - n)
        lay = build_layout(parse_builder(t))
        labels = [label for label, _ in lay.legend]
        self.assertEqual(labels[:12], [f"kind{n:02d}" for n in range(12)])
        self.assertEqual(labels[12], "other (3 kinds)")

    def test_bad_suffix(self):
        trace, _ = self.scenario("chain")
        with self.assertRaises(GanttError):
            write_gantt(trace, self.path("chart.jpg"))

    def test_png_without_matplotlib_says_so(self):
        trace, _ = self.scenario("chain")
        # None in sys.modules makes `import matplotlib...` fail, as on a machine without it.
        blocked = {name: None for name in ("matplotlib", "matplotlib.figure", "matplotlib.patches",
                                           "matplotlib.backends", "matplotlib.backends.backend_agg")}
        with unittest.mock.patch.dict(sys.modules, blocked):
            with self.assertRaises(GanttError) as ctx:
                write_gantt(trace, self.path("chart.png"))
        self.assertIn("matplotlib", str(ctx.exception))
        self.assertIn(".svg", str(ctx.exception))

    @unittest.skipUnless(HAVE_MATPLOTLIB, "matplotlib is not installed (apt install python3-matplotlib): "
                                          "PNG output not tested")
    def test_png_exact_size(self):
        for name, (w, h) in (("fork_join", (1600, 600)), ("persistent", (1234, 457)), ("chain", (640, 240))):
            trace, _ = self.scenario(name)
            out = self.path(f"{name}.png")
            write_gantt(trace, out, width=w, height=h, color="iteration" if name == "persistent" else "kind")
            self.assertEqual(png_size(out), (w, h))


class PerfettoTest(TraceTestCase):
    def load(self, name, flows=False):
        trace, expected = self.scenario(name)
        out = self.path(f"{name}.json")
        count = write_perfetto(trace, out, flows)
        with open(out, encoding="utf-8") as f:
            doc = json.load(f)
        self.assertEqual(doc["displayTimeUnit"], "ns")
        self.assertEqual(len(doc["traceEvents"]), count)
        return trace, expected, doc["traceEvents"]

    def test_complete_events(self):
        trace, expected, events = self.load("fork_join")
        tasks = [e for e in events if e["ph"] == "X" and e["cat"] == "task"]
        idle = [e for e in events if e["ph"] == "X" and e["cat"] == "idle"]
        self.assertEqual(len(tasks), expected["segments"])
        self.assertEqual(len(idle), expected["idle_intervals"])
        self.assertEqual(sum(1 for e in events if e["ph"] == "X"), 11)
        c2 = [e for e in tasks if e["args"]["task"] == 3][0]
        self.assertEqual((c2["tid"], c2["ts"], c2["dur"], c2["name"], c2["args"]["parent"]),
                         (1, 0.014, 0.04, "leaf", 1))
        names = {e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "thread_name"}
        self.assertEqual(names, {"worker 0", "worker 1", "non-worker threads"})

    def test_async_intervals_and_marks(self):
        trace, expected, events = self.load("communication")
        begins = [e for e in events if e["ph"] == "b" and e["cat"] in ("communication", "gpu", "user")]
        ends = [e for e in events if e["ph"] == "e" and e["cat"] in ("communication", "gpu", "user")]
        self.assertEqual(len(begins), expected["intervals"])
        self.assertEqual(sorted(e["id"] for e in begins), sorted(e["id"] for e in ends))
        self.assertEqual({e["cat"] for e in begins}, {"communication", "gpu"})
        marks = [e for e in events if e["ph"] == "i" and e["cat"] == "mark"]
        self.assertEqual([(m["name"], m["args"]["value"]) for m in marks], [("phase", 7)])

    def test_unended_interval_runs_to_the_end(self):
        from .tracegen import TraceBuilder
        t = TraceBuilder(workers=1, end_ns=500)
        gpu = t.kind("cudaMemcpyAsync", 2)
        t.interval_begin(0, 100, 0x9, gpu)
        path = t.write(self.path("open.wtrace"))
        from weft_trace.reader import read_trace
        trace = read_trace(path)
        self.assertEqual(trace.open_intervals, 1)
        out = self.path("open.json")
        write_perfetto(trace, out)
        with open(out, encoding="utf-8") as f:
            events = [e for e in json.load(f)["traceEvents"] if e.get("cat") == "gpu"]
        self.assertEqual([(e["ph"], e["ts"]) for e in events], [("b", 0.1), ("e", 0.5)])

    def test_rounds_and_suspensions(self):
        _, _, events = self.load("persistent")
        rounds = sorted(e["args"]["round"] for e in events if e["ph"] == "X" and e["cat"] == "task")
        self.assertEqual(rounds, [0, 0, 1, 1, 2, 2])
        _, _, events = self.load("suspended_elsewhere")
        self.assertEqual(sum(1 for e in events if e.get("cat") == "suspended"), 2)

    def test_flows(self):
        _, _, events = self.load("fork_join", flows=True)
        self.assertEqual(sum(1 for e in events if e["ph"] == "s"), 4)
        self.assertEqual(sum(1 for e in events if e["ph"] == "f"), 4)


class GraphExportTest(TraceTestCase):
    def dot(self, name, **kw):
        trace, _ = self.scenario(name)
        out = self.path(f"{name}.dot")
        write_graph(trace, out, **kw)
        with open(out, encoding="utf-8") as f:
            return dotcheck.parse(f.read())

    def graphml(self, name, **kw):
        trace, _ = self.scenario(name)
        out = self.path(f"{name}.graphml")
        write_graph(trace, out, **kw)
        root = ET.parse(out).getroot()
        self.assertEqual(root.tag, f"{GRAPHML}graphml")
        self.assertTrue(root.findall(f"{GRAPHML}key"))
        (graph,) = root.findall(f"{GRAPHML}graph")
        self.assertEqual(graph.get("edgedefault"), "directed")
        nodes = graph.findall(f"{GRAPHML}node")
        edges = graph.findall(f"{GRAPHML}edge")
        ids = {n.get("id") for n in nodes}
        for e in edges:
            self.assertIn(e.get("source"), ids)
            self.assertIn(e.get("target"), ids)
        return nodes, edges

    def test_dot_counts(self):
        nodes, edges = self.dot("diamond_redirect")
        self.assertEqual((len(nodes), len(edges)), (4, 4))
        self.assertEqual(nodes["1"]["label"], "node\\n10 ns")
        nodes, edges = self.dot("diamond_redirect", keep_redirects=True)
        self.assertEqual((len(nodes), len(edges)), (5, 5))
        self.assertEqual(nodes["5"]["shape"], "diamond")

    def test_dot_quoting(self):
        from .tracegen import TraceBuilder
        t = TraceBuilder(workers=1, end_ns=100)
        k = t.kind('void f<"x">(a\\b) {weird}; -> "')
        t.simple_task(0, 0x1, k, 0, 1, 5)
        t.simple_task(0, 0x2, k, 1, 6, 9)
        t.edge(0, 1, 0x1, 0x2)
        path = self.path("q.wtrace")
        t.write(path)
        from weft_trace.reader import read_trace
        out = self.path("q.dot")
        write_graph(read_trace(path), out)
        nodes, edges = dotcheck.parse(read_text(out))
        self.assertEqual(len(nodes), 2)
        self.assertEqual(edges[0][:2], ("1", "2"))
        self.assertTrue(nodes["1"]["label"].startswith('void f<"x">(a\\b) {weird}; -> "'))
        # The GraphML of the same names parses too.
        out = self.path("q.graphml")
        write_graph(read_trace(path), out)
        ET.parse(out)

    def test_graphml_counts(self):
        nodes, edges = self.graphml("fork_join")
        self.assertEqual((len(nodes), len(edges)), (6, 4))
        nodes, edges = self.graphml("persistent")
        self.assertEqual((len(nodes), len(edges)), (6, 5))
        kinds = sorted(d.text for e in edges for d in e if d.get("key") == "edge_kind")
        self.assertEqual(kinds, ["cyclic", "cyclic", "recorded", "replay", "replay"])

    def test_iteration_filter(self):
        nodes, edges = self.dot("persistent", iteration=1)
        self.assertEqual((sorted(nodes), [e[:2] for e in edges]), (["3", "4"], [("3", "4")]))
        nodes, edges = self.graphml("persistent", iteration=0)
        self.assertEqual((len(nodes), len(edges)), (2, 1))

    def test_around(self):
        trace, _ = self.scenario("diamond_redirect")
        nodes, edges = select_graph(trace, around=1, radius=1)
        self.assertEqual((nodes, sorted(edges)), ([1, 2, 3], [(1, 2), (1, 3)]))
        nodes, edges = select_graph(trace, around=1, radius=2)
        self.assertEqual(len(nodes), 4)
        nodes, edges = select_graph(trace, around=4, radius=0)
        self.assertEqual((nodes, edges), ([4], {}))
        with self.assertRaises(ExportError):
            select_graph(trace, around=99)
        with self.assertRaises(ExportError):
            select_graph(trace, around=5)  # the redirect node, collapsed away

    def test_bad_suffix(self):
        trace, _ = self.scenario("chain")
        with self.assertRaises(ExportError):
            write_graph(trace, self.path("g.png"))


if __name__ == "__main__":
    unittest.main()
