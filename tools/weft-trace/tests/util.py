"""Shared helpers: scenario traces written to a temporary directory and read back."""

import os
import sys
import tempfile
import unittest

from weft_trace.reader import parse_trace, read_trace

from . import scenarios

TOOL_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class TraceTestCase(unittest.TestCase):
    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory(prefix="weft-trace-test-")
        self.tmp = self._tmp.name

    def tearDown(self):
        self._tmp.cleanup()

    def path(self, name):
        return os.path.join(self.tmp, name)

    def scenario(self, name):
        """(trace read from a file written by tracegen, expected values)."""
        builder, expected = scenarios.ALL[name]()
        path = builder.write(self.path(f"{name}.wtrace"))
        return read_trace(path), expected

    def scenario_file(self, name):
        builder, expected = scenarios.ALL[name]()
        return builder.write(self.path(f"{name}.wtrace")), expected


    def mpi_files(self, machines=1):
        """The traces of scenarios.mpi_run, written as run.trace.<rank> (in its out-of-order list)."""
        builders, expected = scenarios.mpi_run(machines)
        return [b.write(self.path(f"run.trace.{b.rank}")) for b in builders], expected


def parse_builder(builder):
    return parse_trace(builder.to_bytes(), "<test>")


def cli_env():
    """Environment for `python3 -m weft_trace` from the repository, without installing it."""
    env = dict(os.environ)
    env["PYTHONPATH"] = TOOL_DIR + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


PYTHON = sys.executable


def read_text(path):
    with open(path, encoding="utf-8") as f:
        return f.read()
