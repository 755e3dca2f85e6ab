"""weft-trace: analysis of the binary trace files written by weft (WEFT_TRACE=<path>)."""

__version__ = "1.0.0"
