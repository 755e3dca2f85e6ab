"""Tests of weft-trace (stdlib unittest). From the repository root:

    PYTHONPATH=tools/weft-trace python3 -m unittest discover -s tools/weft-trace/tests -t tools/weft-trace
"""
