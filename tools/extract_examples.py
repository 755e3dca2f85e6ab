#!/usr/bin/env python3
"""Writes every fenced code block tagged `c example` or `cpp example` of a Markdown file to
OUT_DIR/<stem>_<n>.<ext>, so that the documentation's examples are compiled and run as tests."""
import pathlib
import re
import sys


def main() -> int:
    if len(sys.argv) != 3:
        print("usage: extract_examples.py DOC.md OUT_DIR", file=sys.stderr)
        return 2
    doc = pathlib.Path(sys.argv[1])
    out = pathlib.Path(sys.argv[2])
    out.mkdir(parents=True, exist_ok=True)
    blocks = re.findall(r"^```(c|cpp) example\n(.*?)^```", doc.read_text(), flags=re.S | re.M)
    for n, (lang, code) in enumerate(blocks):
        path = out / f"{doc.stem}_{n}.{lang}"
        if not path.exists() or path.read_text() != code:
            path.write_text(code)
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
