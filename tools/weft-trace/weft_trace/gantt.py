"""Gantt chart of a trace: one row per worker, task bodies coloured by kind or by persistent-graph
round, recorded idle time in light grey, time with no task in flight (serial code) in sand, the
producer's task creation as a dark strip along the top of its row, suspended tasks as a hatched bar.

A layout in pixels is computed once and drawn by two back ends: hand-written SVG (no dependency)
and PNG through matplotlib's Agg canvas (imported only when a PNG is asked for).
"""

from __future__ import annotations

import colorsys
import zlib
from collections import defaultdict
from xml.sax.saxutils import escape

from .analysis import serial_intervals

# Twelve distinguishable colours (Tableau-like), then the colour of everything else.
PALETTE = ["#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948",
           "#b07aa1", "#ff9da7", "#9c755f", "#17becf", "#bcbd22", "#7f3c8d"]
OTHER = "#6b6b6b"
IDLE = "#dcdcdc"
SERIAL = "#efdfb0"
CREATING = "#262626"
SUSPENDED = "#555555"
GOLDEN = 0.38196601125  # 1 - 1/phi of a turn: the golden angle, 137.5 degrees
TOP_KINDS = 12
OUTLINE_PX = 4      # task boxes at least this wide end with a thin gap...
SEPARATOR_PX = 0.7  # ...this wide


class GanttError(Exception):
    pass


class Layout:
    """Everything to draw, in pixels (origin at the top left)."""

    def __init__(self, width, height):
        self.width, self.height = width, height
        self.title = ""
        self.plot = (0, 0, 0, 0)    # x, y, w, h of the plotting area
        self.rows = []              # row labels, top to bottom
        self.idle = []              # (row, x0, x1)
        self.serial = []            # (row, x0, x1): no task in flight
        self.creating = []          # (row, x0, x1): task_create to task_submit on the creating worker
        self.tasks = []             # (row, x0, x1, colour)
        self.suspended = []         # (row, x0, x1)
        self.ticks = []             # (x, label)
        self.axis_label = ""
        self.legend = []            # (label, colour); colour None for the hatched swatch, "" for none
        self.legend_x = 0
        self.groups = []            # (first row, rows, name) per trace when there are several


def kind_colours(names):
    """The palette colour of each kind named in the legend, from the names alone: the slot a CRC-32
    of the name picks, or the next free one when a kind before it in name order holds that slot.
    The same kinds get the same colours in every run, whatever time they took and whatever order
    they appeared in (Python's own str hash changes from process to process)."""
    assert len(names) <= len(PALETTE)
    taken, out = set(), {}
    for name in sorted(names):
        slot = zlib.crc32(name.encode("utf-8")) % len(PALETTE)
        while slot in taken:
            slot = (slot + 1) % len(PALETTE)
        taken.add(slot)
        out[name] = PALETTE[slot]
    return out


def round_colour(r):
    """Round r's colour. Hues a golden angle apart never repeat, and put successive rounds far
    apart on the colour wheel; lightness cycles through three levels, so that two rounds whose hues
    come close usually differ in lightness. Saturation and lightness stay where a box reads against
    the white background and the greys of idle time and of "other"."""
    hue = (0.6 + r * GOLDEN) % 1.0
    rgb = colorsys.hls_to_rgb(hue, (0.45, 0.60, 0.35)[r % 3], 0.65)
    return "#" + "".join(f"{round(255 * c):02x}" for c in rgb)


def _nice_step(span, count):
    """A tick step of 1, 2 or 5 times a power of ten giving about `count` ticks over `span` ns."""
    raw = max(span / max(count, 1), 1)
    power = 1
    while power * 10 <= raw:
        power *= 10
    for m in (1, 2, 5, 10):
        if m * power >= raw:
            return m * power
    return 10 * power


def _ticks(t0, t1, scale, count):
    """(x, label) of the time axis's ticks, and the unit of the labels."""
    step = _nice_step(t1 - t0, count)
    if step >= 1_000_000_000:
        unit, div = "s", 1e9
    elif step >= 1_000_000:
        unit, div = "ms", 1e6
    else:
        unit, div = "\u00b5s", 1e3  # steps below a microsecond get decimals
    decimals = 0
    while decimals < 6 and abs(round(step / div, decimals) - step / div) > 1e-9:
        decimals += 1
    first = -(-t0 // step) * step
    out = []
    t = first
    while t <= t1:
        out.append(((t - t0) * scale, f"{t / div:.{decimals}f}"))
        t += step
    return out, unit


def _pixel_rects(items, t0, t1, scale):
    """(begin, end, colour) sorted by begin -> (x0, x1, colour) relative to the plot's left edge.

    Rectangles of a pixel or more are kept as they are (they cannot outnumber the pixels of a row);
    shorter ones are pooled per pixel column, drawn in the colour that covers most of the column.
    This bounds the output by the image width, whatever the number of tasks."""
    out = []
    columns = defaultdict(lambda: defaultdict(float))
    for b, e, colour in items:
        if e <= t0 or b >= t1:
            continue
        x0 = (max(b, t0) - t0) * scale
        x1 = (min(e, t1) - t0) * scale
        if x1 - x0 >= 1.0:
            out.append([x0, x1, colour])
        elif x1 > x0:
            columns[int(x0)][colour] += x1 - x0
    pooled = []
    for col in sorted(columns):
        shares = columns[col]
        colour = max(shares, key=shares.get)
        width = max(0.3, min(1.0, sum(shares.values())))
        if pooled and pooled[-1][2] == colour and abs(pooled[-1][1] - col) < 1e-9 and width == 1.0:
            pooled[-1][1] = col + 1.0
        else:
            pooled.append([float(col), col + width, colour])
    return [tuple(r) for r in out + pooled]


def build_layout(trace, width=1600, height=600, color="kind", t_from=None, t_to=None):
    """One trace: a row per worker, time since the start of the trace."""
    rows = [(f"worker {w}", trace, w, 0) for w in range(trace.workers)]
    lay = _layout(rows, trace.end_ns, width, height, color, t_from, t_to, "start of the trace")
    lay.title = f"{trace.path}: {trace.workers} workers, pid {trace.pid}"
    return lay


def build_layout_many(traces, offsets, align, width=1600, height=600, color="kind", t_from=None, t_to=None):
    """Several traces (one per MPI rank): a group of rows per trace ("r1 w0", ...), each trace's
    times moved by its offset on the common axis (reader.time_offsets)."""
    rows = [(f"{t.tag} w{w}", t, w, off) for t, off in zip(traces, offsets) for w in range(t.workers)]
    end = max(off + t.end_ns for t, off in zip(traces, offsets))
    origin = "earliest trace start" if align == "clock" else "start of each trace"
    lay = _layout(rows, end, width, height, color, t_from, t_to, origin)
    how = "one clock" if align == "clock" else "each trace's start (clocks not comparable)"
    lay.groups = []
    first = 0
    for t in traces:
        lay.groups.append((first, t.workers, t.group_name))
        first += t.workers
    ranks = f" of {traces[0].ranks}" if traces[0].ranks else ""
    lay.title = (f"{len(traces)} traces ({', '.join(t.tag for t in traces)}{ranks}), "
                 f"{len(rows)} workers, aligned on {how}")
    return lay


def _layout(rows, end_ns, width, height, color, t_from, t_to, origin):
    """rows: (label, trace, worker, offset); the rows' times are trace time + offset."""
    if width < 200 or height < 120:
        raise GanttError(f"the image must be at least 200 x 120 pixels (asked {width} x {height})")
    t0 = 0 if t_from is None else t_from
    t1 = end_ns if t_to is None else t_to
    if t1 <= t0:
        raise GanttError(f"empty time window: --from {t0} ns is not before --to {t1} ns")
    if color not in ("kind", "iteration"):
        raise GanttError(f"unknown colouring {color!r} (kind or iteration)")
    if not rows:
        raise GanttError("the trace has no workers")

    lay = Layout(width, height)
    legend_w = max(120, min(260, width // 5))
    left, top, bottom = 90, 28, 44
    plot_w = width - left - legend_w - 10
    plot_h = height - top - bottom
    lay.plot = (left, top, plot_w, plot_h)
    lay.legend_x = left + plot_w + 12
    scale = plot_w / (t1 - t0)
    lay.rows = [label for label, *_ in rows]

    # Colour keys: kinds by time spent in the window (top 12 named), or rounds. Kinds are keyed
    # by name: kind ids are numbered per trace file. Colours depend on the names only (kind_colours).
    def in_window(b, e):
        return max(0, min(e, t1) - max(b, t0))

    if color == "kind":
        per_kind = defaultdict(int)
        for _, trace, w, off in rows:
            for b, e, tid in trace.segments[w]:
                per_kind[trace.task_kind(trace.task(tid))] += in_window(b + off, e + off)
        ranked = sorted((k for k in per_kind if per_kind[k] > 0), key=lambda k: (-per_kind[k], k))
        colours = kind_colours(ranked[:TOP_KINDS])

        def colour_of(trace, task):
            return colours.get(trace.task_kind(task), OTHER)

        lay.legend = [(k, colours[k]) for k in ranked[:TOP_KINDS]]
        if len(ranked) > TOP_KINDS:
            lay.legend.append((f"other ({len(ranked) - TOP_KINDS} kinds)", OTHER))
    else:
        rounds = sorted({trace.task(tid).round for _, trace, w, off in rows for b, e, tid in trace.segments[w]
                         if in_window(b + off, e + off) > 0})

        def colour_of(trace, task):
            return round_colour(task.round)

        shown = rounds if len(rounds) <= TOP_KINDS else rounds[:TOP_KINDS - 2]
        lay.legend = [(f"round {r}", round_colour(r)) for r in shown]
        if len(rounds) > TOP_KINDS:
            lay.legend.append((f"... {len(rounds) - len(shown) - 1} more rounds ...", ""))
            lay.legend.append((f"round {rounds[-1]}", round_colour(rounds[-1])))
    lay.legend.append(("idle (waiting for work)", IDLE))
    lay.legend.append(("outside tasks / serial", SERIAL))
    lay.legend.append(("creating tasks", CREATING))
    lay.legend.append(("suspended", None))
    # Long symbols (C++ closures) are cut to what the legend column holds, at ~6 px a character.
    fit = max(8, (legend_w - 24) // 6)
    lay.legend = [(label if len(label) <= fit else label[:fit - 3] + "...", c) for label, c in lay.legend]

    traces = {id(trace): (trace, off) for _, trace, _, off in rows}  # each trace once, with its offset
    row_of = {(id(trace), w): row for row, (_, trace, w, _) in enumerate(rows)}
    for row, (_, trace, w, off) in enumerate(rows):
        idle = _pixel_rects(((b + off, e + off, IDLE) for b, e in trace.idle[w]), t0, t1, scale)
        lay.idle.extend((row, x0, x1) for x0, x1, _ in idle)
        serial = _pixel_rects(((b + off, e + off, SERIAL) for b, e in serial_intervals(trace)), t0, t1, scale)
        lay.serial.extend((row, x0, x1) for x0, x1, _ in serial)
        # The worker's own creations, in creation order (so by time); redirect nodes are made
        # inside another task's submit.
        made = ((task.create_time + off, task.submit_time + off, CREATING) for task in trace.tasks
                if task.create_buffer == w and task.submit_time is not None and not task.is_redirect)
        lay.creating.extend((row, x0, x1) for x0, x1, _ in _pixel_rects(made, t0, t1, scale))
        items = ((b + off, e + off, colour_of(trace, trace.task(tid))) for b, e, tid in trace.segments[w])
        lay.tasks.extend((row, x0, x1, c) for x0, x1, c in _pixel_rects(items, t0, t1, scale))
    # A suspension is drawn on the row of the worker that suspended the task.
    per_row = defaultdict(list)
    for trace, off in traces.values():
        for s in trace.suspensions:
            row = row_of.get((id(trace), s.worker))
            if row is not None:
                end = s.end if s.end is not None else trace.end_ns
                per_row[row].append((s.begin + off, end + off, SUSPENDED))
    for row, items in per_row.items():
        lay.suspended.extend((row, x0, x1) for x0, x1, _ in _pixel_rects(sorted(items), t0, t1, scale))
    lay.ticks, unit = _ticks(t0, t1, scale, max(2, plot_w // 110))
    lay.axis_label = f"time since the {origin} ({unit})"
    return lay


# ----- SVG ----------------------------------------------------------------------------------------

def _separated(x0, x1):
    """The right edge of a task box, pulled in on wide boxes so consecutive tasks of one kind stay
    apart (an outline would eat into the height and make narrow boxes look taller)."""
    return x1 - SEPARATOR_PX if x1 - x0 >= OUTLINE_PX else x1


def _row_band(lay, row):
    x, y, w, h = lay.plot
    rh = h / len(lay.rows)
    return y + row * rh, rh


def render_svg(lay):
    x, y, w, h = lay.plot
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{lay.width}" height="{lay.height}" '
           f'viewBox="0 0 {lay.width} {lay.height}" font-family="sans-serif" font-size="11">',
           '<defs><pattern id="hatch" width="6" height="6" patternUnits="userSpaceOnUse" '
           'patternTransform="rotate(45)"><rect width="6" height="6" fill="#ffffff"/>'
           f'<line x1="0" y1="0" x2="0" y2="6" stroke="{SUSPENDED}" stroke-width="2.5"/></pattern></defs>',
           f'<rect width="{lay.width}" height="{lay.height}" fill="#ffffff"/>',
           f'<text x="{x}" y="{y - 10}" font-size="12">{escape(lay.title)}</text>']
    for row, label in enumerate(lay.rows):
        ry, rh = _row_band(lay, row)
        out.append(f'<text x="{x - 8}" y="{ry + rh / 2 + 4:.2f}" text-anchor="end">{escape(label)}</text>')
        out.append(f'<line x1="{x}" y1="{ry + rh:.2f}" x2="{x + w}" y2="{ry + rh:.2f}" stroke="#eeeeee"/>')
    for first, _, name in lay.groups[1:]:
        # Between the row groups of two traces (ranks): a dark rule across the plot and the margin.
        ry, _ = _row_band(lay, first)
        out.append(f'<line class="group" x1="4" y1="{ry:.2f}" x2="{x + w}" y2="{ry:.2f}" '
                   f'stroke="#444444" stroke-width="1.5"><title>{escape(name)}</title></line>')

    def rect(row, x0, x1, fill, top_frac, height_frac):
        ry, rh = _row_band(lay, row)
        return (f'<rect x="{x + x0:.2f}" y="{ry + rh * top_frac:.2f}" width="{x1 - x0:.2f}" '
                f'height="{rh * height_frac:.2f}" fill="{fill}"/>')

    out.append("<g>")
    out.extend(rect(r, x0, x1, IDLE, 0.1, 0.8) for r, x0, x1 in lay.idle)
    out.extend(rect(r, x0, x1, SERIAL, 0.1, 0.8) for r, x0, x1 in lay.serial)
    out.extend(rect(r, x0, _separated(x0, x1), c, 0.1, 0.8) for r, x0, x1, c in lay.tasks)
    out.extend(rect(r, x0, x1, CREATING, 0.04, 0.16) for r, x0, x1 in lay.creating)
    out.extend(rect(r, x0, x1, "url(#hatch)", 0.78, 0.18) for r, x0, x1 in lay.suspended)
    out.append("</g>")
    out.append(f'<rect x="{x}" y="{y}" width="{w}" height="{h}" fill="none" stroke="#444444"/>')
    for tx, label in lay.ticks:
        out.append(f'<line x1="{x + tx:.2f}" y1="{y + h}" x2="{x + tx:.2f}" y2="{y + h + 5}" stroke="#444444"/>')
        out.append(f'<text x="{x + tx:.2f}" y="{y + h + 17}" text-anchor="middle">{escape(label)}</text>')
    out.append(f'<text x="{x + w / 2:.2f}" y="{lay.height - 6}" text-anchor="middle">{escape(lay.axis_label)}</text>')
    ly = y
    for label, colour in lay.legend:
        if colour != "":
            fill = colour if colour else "url(#hatch)"
            out.append(f'<rect x="{lay.legend_x}" y="{ly}" width="12" height="12" fill="{fill}" stroke="#888888"/>')
        out.append(f'<text x="{lay.legend_x + 17}" y="{ly + 10}">{escape(label)}</text>')
        ly += 17
    out.append("</svg>")
    return "\n".join(out) + "\n"


# ----- PNG ----------------------------------------------------------------------------------------

def render_png(lay, path):
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
        from matplotlib.patches import Patch
    except ImportError:
        raise GanttError("PNG output needs matplotlib (apt install python3-matplotlib); "
                         "write an .svg instead") from None
    W, H = lay.width, lay.height
    fig = Figure(figsize=(W / 100, H / 100), dpi=100)
    FigureCanvasAgg(fig)  # the Agg canvas, without pyplot's global state
    x, y, w, h = lay.plot
    ax = fig.add_axes([x / W, (H - y - h) / H, w / W, h / H])
    rows = len(lay.rows)
    ax.set_xlim(0, w)     # one data unit per pixel: the layout is already in pixels
    ax.set_ylim(rows, 0)  # row 0 on top

    def bars(items, top_frac, height_frac, separate=False, **style):
        groups = defaultdict(list)
        for item in items:
            row, x0, x1 = item[0], item[1], item[2]
            if separate:
                x1 = _separated(x0, x1)
            colour = item[3] if len(item) > 3 else None
            groups[(row, colour)].append((x0, x1 - x0))
        for (row, colour), spans in groups.items():
            kw = dict(style)
            if colour:
                kw["facecolors"] = colour
            ax.broken_barh(spans, (row + top_frac, height_frac), linewidth=0, **kw)

    bars(lay.idle, 0.1, 0.8, facecolors=IDLE)
    bars(lay.serial, 0.1, 0.8, facecolors=SERIAL)
    bars(lay.tasks, 0.1, 0.8, separate=True)
    bars(lay.creating, 0.04, 0.16, facecolors=CREATING)
    bars(lay.suspended, 0.78, 0.18, facecolors="white", edgecolor=SUSPENDED, hatch="////")
    for first, _, _ in lay.groups[1:]:
        ax.axhline(first, color="#444444", linewidth=1.5)  # between the row groups of two traces
    ax.set_yticks([r + 0.5 for r in range(rows)])
    ax.set_yticklabels(lay.rows, fontsize=8)
    ax.set_xticks([tx for tx, _ in lay.ticks])
    ax.set_xticklabels([label for _, label in lay.ticks], fontsize=8)
    ax.set_xlabel(lay.axis_label, fontsize=9)
    ax.set_title(lay.title, fontsize=9, loc="left")
    handles = [Patch(facecolor=c, edgecolor="#888888", label=label) if c else
               Patch(facecolor="none", edgecolor="none", label=label) if c == "" else
               Patch(facecolor="white", edgecolor=SUSPENDED, hatch="////", label=label)
               for label, c in lay.legend]
    fig.legend(handles=handles, loc="upper left", bbox_to_anchor=(lay.legend_x / W, 1 - y / H),
               fontsize=7, frameon=False, handlelength=1.2, borderaxespad=0)
    # No bbox_inches="tight": the image must be exactly width x height pixels.
    fig.savefig(path, dpi=100, format="png")


def _check_suffix(path):
    suffix = str(path).lower().rsplit(".", 1)[-1] if "." in str(path) else ""
    if suffix not in ("png", "svg"):
        raise GanttError(f"cannot tell the image format of {path}: name it .png or .svg")
    return suffix


def _render(lay, path, suffix):
    if suffix == "svg":
        with open(path, "w", encoding="utf-8") as f:
            f.write(render_svg(lay))
    else:
        render_png(lay, path)
    return lay


def write_gantt(trace, path, width=1600, height=600, color="kind", t_from=None, t_to=None):
    suffix = _check_suffix(path)
    return _render(build_layout(trace, width, height, color, t_from, t_to), path, suffix)


def write_gantt_many(traces, offsets, align, path, width=1600, height=600, color="kind", t_from=None, t_to=None):
    """The traces of several ranks in one chart (build_layout_many)."""
    suffix = _check_suffix(path)
    return _render(build_layout_many(traces, offsets, align, width, height, color, t_from, t_to), path, suffix)
