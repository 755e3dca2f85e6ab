"""weft-trace: analysis of the binary trace files written by weft (WEFT_TRACE=<path>)."""

# weft's version: CMakeLists.txt project(VERSION) is the source, its configure checks this copy.
__version__ = "0.1.0"
