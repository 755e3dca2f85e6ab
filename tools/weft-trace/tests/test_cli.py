"""The command line end to end: `python3 -m weft_trace ...` in a child process."""

import json
import os
import subprocess
import unittest
import xml.etree.ElementTree as ET

from .test_outputs import HAVE_MATPLOTLIB, png_size
from .util import PYTHON, TraceTestCase, cli_env, read_text


class CliTest(TraceTestCase):
    def run_cli(self, *args, expect=0):
        proc = subprocess.run([PYTHON, "-m", "weft_trace", *args], capture_output=True, text=True,
                              env=cli_env(), timeout=120)
        self.assertEqual(proc.returncode, expect, f"stdout:\n{proc.stdout}\nstderr:\n{proc.stderr}")
        self.assertNotIn("Traceback", proc.stderr)
        return proc

    def test_help(self):
        out = self.run_cli("--help").stdout
        for command in ("summary", "gantt", "perfetto", "graph", "overlap"):
            self.assertIn(command, out)

    def test_summary_text_and_json(self):
        path, expected = self.scenario_file("fork_join")
        text = self.run_cli("summary", path).stdout
        self.assertIn("tasks: 6", text)
        self.assertIn("critical path: 56 ns", text)
        self.assertIn("steals: 1", text)
        doc = json.loads(self.run_cli("summary", path, "--json").stdout)
        self.assertEqual(doc["tasks"], 6)
        self.assertEqual(doc["critical_path"]["length_ns"], 56)
        rows = doc["breakdown"]["per_worker"]
        self.assertEqual([(r["work_ns"], r["overhead_ns"], r["idle_ns"], r["serial_ns"]) for r in rows],
                         expected["breakdown"])

    def test_summary_warns_about_dropped_events(self):
        path, _ = self.scenario_file("dropped")
        proc = self.run_cli("summary", path)
        self.assertIn("WARNING", proc.stderr)
        self.assertIn("7 events were dropped", proc.stderr)
        self.assertIn("DROPPED", proc.stdout)

    def test_overlap(self):
        path, _ = self.scenario_file("communication")
        out = self.run_cli("overlap", path).stdout
        self.assertIn("MPI_Isend", out)
        self.assertIn("50.0%", out)
        doc = json.loads(self.run_cli("overlap", path, "--json").stdout)
        self.assertEqual(doc["total"]["overlapped_work_ns"], 80)
        path, _ = self.scenario_file("chain")
        self.assertIn("no communication intervals", self.run_cli("overlap", path).stdout)
        doc = json.loads(self.run_cli("overlap", path, "--json").stdout)
        self.assertEqual(doc["kinds"], [])

    def test_gantt_svg(self):
        path, _ = self.scenario_file("fork_join")
        out = self.path("g.svg")
        self.run_cli("gantt", path, "-o", out, "--width", "800", "--height", "300", "--from", "10", "--to", "120")
        root = ET.parse(out).getroot()
        self.assertEqual((root.get("width"), root.get("height")), ("800", "300"))

    @unittest.skipUnless(HAVE_MATPLOTLIB, "matplotlib is not installed (apt install python3-matplotlib): "
                                          "PNG output not tested")
    def test_gantt_png(self):
        path, _ = self.scenario_file("persistent")
        out = self.path("g.png")
        self.run_cli("gantt", path, "-o", out, "--color", "iteration")
        self.assertEqual(png_size(out), (1600, 600))

    def test_perfetto(self):
        path, expected = self.scenario_file("fork_join")
        out = self.path("p.json")
        self.run_cli("perfetto", path, "-o", out, "--flows")
        with open(out, encoding="utf-8") as f:
            events = json.load(f)["traceEvents"]
        self.assertEqual(sum(1 for e in events if e["ph"] == "X"), 11)

    def test_graph(self):
        path, _ = self.scenario_file("persistent")
        out = self.path("g.graphml")
        stdout = self.run_cli("graph", path, "-o", out, "--iteration", "2").stdout
        self.assertIn("2 tasks, 1 edges", stdout)
        out = self.path("g.dot")
        self.run_cli("graph", path, "-o", out, "--around", "3", "--radius", "1")
        from . import dotcheck
        nodes, edges = dotcheck.parse(read_text(out))
        self.assertEqual((sorted(nodes), len(edges)), (["2", "3", "4"], 2))

    def test_errors_name_the_file(self):
        good, _ = self.scenario_file("chain")
        with open(good, "rb") as f:
            data = f.read()
        cases = {"truncated.wtrace": data[:-17], "magic.wtrace": b"GARBAGE!" + data[8:], "empty.wtrace": b""}
        for name, content in cases.items():
            path = self.path(name)
            with open(path, "wb") as f:
                f.write(content)
            for command in (["summary", path], ["overlap", path], ["gantt", path, "-o", self.path("x.svg")]):
                with self.subTest(name=name, command=command[0]):
                    proc = self.run_cli(*command, expect=2)
                    self.assertIn(path, proc.stderr)
                    self.assertIn("error", proc.stderr)
        proc = self.run_cli("summary", self.path("missing.wtrace"), expect=2)
        self.assertIn("missing.wtrace", proc.stderr)

    def test_bad_options(self):
        path, _ = self.scenario_file("chain")
        proc = self.run_cli("gantt", path, "-o", self.path("x.bmp"), expect=2)
        self.assertIn(".png or .svg", proc.stderr)
        proc = self.run_cli("graph", path, "-o", self.path("x.dot"), "--around", "42", expect=2)
        self.assertIn("task 42", proc.stderr)
        proc = self.run_cli("gantt", path, "-o", self.path("x.svg"), "--from", "90", "--to", "10", expect=2)
        self.assertIn("empty time window", proc.stderr)
        self.run_cli("graph", path, expect=2)  # -o is required: argparse's usage error
        self.assertIn("--buckets", self.run_cli("summary", path, "--buckets", "0", expect=2).stderr)
        self.assertIn("--radius", self.run_cli("graph", path, "-o", self.path("x.dot"), "--radius", "-1",
                                               expect=2).stderr)
        proc = self.run_cli("perfetto", path, "-o", os.path.join(self.path("no-such-dir"), "p.json"), expect=2)
        self.assertIn("cannot write", proc.stderr)


if __name__ == "__main__":
    unittest.main()
