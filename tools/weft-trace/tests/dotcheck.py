"""A small parser for the DOT language subset weft-trace writes, strict enough to catch broken
quoting: `digraph ID { stmt* }` where a statement is an attribute statement (graph/node/edge
[...]), a node (ID [attrs]) or an edge (ID -> ID [attrs]), each ending with ';'."""

import re

_TOKEN = re.compile(r'\s+|"(?:[^"\\]|\\.)*"|->|[{}\[\];,=]|[A-Za-z_0-9.]+', re.S)


class DotError(Exception):
    pass


def tokens(text):
    pos = 0
    out = []
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if not m:
            raise DotError(f"cannot read DOT at offset {pos}: {text[pos:pos + 20]!r}")
        tok = m.group(0)
        if not tok.isspace():
            out.append(tok)
        pos = m.end()
    return out


def _is_id(tok):
    return tok.startswith('"') or re.fullmatch(r"[A-Za-z_0-9.]+", tok) is not None


def _unquote(tok):
    if tok.startswith('"'):
        return re.sub(r"\\(.)", lambda m: m.group(1) if m.group(1) in '"\\' else "\\" + m.group(1), tok[1:-1])
    return tok


def parse(text):
    """Returns (nodes: {id: {attr: value}}, edges: [(a, b, attrs)])."""
    toks = tokens(text)
    i = 0

    def expect(value):
        nonlocal i
        if i >= len(toks) or toks[i] != value:
            raise DotError(f"expected {value!r} at token {i}, found {toks[i] if i < len(toks) else 'end'!r}")
        i += 1

    def attrs():
        nonlocal i
        out = {}
        if i < len(toks) and toks[i] == "[":
            i += 1
            while toks[i] != "]":
                key = toks[i]
                if not _is_id(key):
                    raise DotError(f"bad attribute name {key!r}")
                i += 1
                expect("=")
                if not _is_id(toks[i]):
                    raise DotError(f"bad attribute value {toks[i]!r}")
                out[_unquote(key)] = _unquote(toks[i])
                i += 1
                if toks[i] == ",":
                    i += 1
            i += 1
        return out

    expect("digraph")
    if toks[i] != "{":
        i += 1  # the graph's name
    expect("{")
    nodes, edges = {}, []
    while toks[i] != "}":
        if toks[i] in ("graph", "node", "edge"):
            i += 1
            attrs()
        else:
            a = toks[i]
            if not _is_id(a):
                raise DotError(f"expected a node id, found {a!r}")
            i += 1
            if toks[i] == "->":
                i += 1
                b = toks[i]
                if not _is_id(b):
                    raise DotError(f"expected a node id after ->, found {b!r}")
                i += 1
                edges.append((_unquote(a), _unquote(b), attrs()))
            else:
                nodes[_unquote(a)] = attrs()
        expect(";")
    expect("}")
    if i != len(toks):
        raise DotError("text after the closing brace")
    return nodes, edges
