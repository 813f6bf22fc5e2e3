"""Parse the device's per-node cycle profiles (issue 30).

Two texts are read:

* ``graph_app --perfdump`` (nnlib's ``test/graphmain.c`` ``graph_perfdump``): a line
  ``node,0x<id>,<name>,<op>,executions,<n>,cycles,<c>,<share> %,cum_cycles,<cc>,<share> %``
  per node, sorted by cycles, after ``Total <n> nodes.`` and ``Total <c> cycles.``;
* the TFLite Hexagon delegate's op profiling (``print_graph_profile``), as TFLite's
  benchmark tool prints it: the stats table whose rows are tab-separated
  ``<node type> <start> <first> <avg ms> <%>% <cdf%>% <mem KB> <times called> <name>``,
  with ``<name>`` ending in ``:<TFLite node index>``. The delegate hands each hexagon_nn
  node's cycle counter to TFLite's profiler as if it were microseconds, so a row's
  ``avg ms`` times 1000 is cycles (never time), averaged over the hexagon_nn nodes of one
  TFLite operator, and ``times called`` is how many such nodes ran per invoke.

Ids are the device's, after its prepare: a fused chain reports under the surviving node's id
(nnlib's ``docs/faq.txt``: the Relu's).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

__all__ = ["DelegateRow", "PerfRow", "ProfileText", "parse_profile"]

_TOTAL_CYCLES = re.compile(r"Total (\d+) cycles\.")
_TOTAL_NODES = re.compile(r"Total (\d+) nodes\.")
_NAME_INDEX = re.compile(r"(.*):(\d+)")


@dataclass(frozen=True, slots=True)
class PerfRow:
    """One ``--perfdump`` line."""

    node_id: int
    name: str                   # the graph's name for the node ("?" when it has none)
    op: str
    executions: int
    cycles: int


@dataclass(frozen=True, slots=True)
class DelegateRow:
    """One row of the delegate's op-profiling table: one TFLite operator."""

    tflite_index: int
    op: str                     # the first hexagon_nn node's op ("/..." description dropped)
    name: str                   # the operator's output tensors, as TFLite prints them
    cycles: int                 # per invoke: the mean of its nodes times their count
    calls: int                  # hexagon_nn nodes of this operator that ran per invoke


@dataclass
class ProfileText:
    kind: str = ""              # "perfdump" or "tflite-delegate"
    perf: list[PerfRow] = field(default_factory=list)
    delegate: list[DelegateRow] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def parse_profile(text: str, source: str = "profile") -> ProfileText:
    """Either format (the first that has rows); problems name ``source`` and the line."""
    out = ProfileText()
    total: int | None = None
    nodes: int | None = None
    seen_delegate: set[int] = set()
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if m := _TOTAL_CYCLES.fullmatch(line):
            total = int(m.group(1))
        elif m := _TOTAL_NODES.fullmatch(line):
            nodes = int(m.group(1))
        elif line.startswith("node,"):
            row = _perf_row(line)
            if row is None:
                out.problems.append(f"{source} line {number}: not a --perfdump node line: "
                                    f"{line[:80]!r}")
            else:
                out.perf.append(row)
        elif "\t" in raw and raw.count("\t") >= 8:
            row_d = _delegate_row(raw)
            if row_d is not None and row_d.tflite_index not in seen_delegate:
                seen_delegate.add(row_d.tflite_index)      # the same rows sorted again
                out.delegate.append(row_d)
    if out.perf:
        out.kind = "perfdump"
        if nodes is not None and nodes != len(out.perf):
            out.problems.append(f"{source}: 'Total {nodes} nodes.' but {len(out.perf)} node "
                                "lines (the output is cut?)")
        summed = sum(r.cycles for r in out.perf)
        if total is not None and total != summed:
            out.problems.append(f"{source}: 'Total {total} cycles.' but the node lines add "
                                f"up to {summed}")
    elif out.delegate:
        out.kind = "tflite-delegate"
    else:
        out.problems.append(f"{source}: neither --perfdump lines (node,0x...) nor the TFLite "
                            "delegate's op-profiling table")
    return out


def _perf_row(line: str) -> PerfRow | None:
    parts = line.split(",")
    # the tail is fixed; the name may hold commas, the op never does
    if len(parts) < 12 or parts[-8] != "executions" or parts[-6] != "cycles" \
            or parts[-3] != "cum_cycles":
        return None
    try:
        node_id = int(parts[1], 16)
        executions, cycles = int(parts[-7]), int(parts[-5])
    except ValueError:
        return None
    middle = parts[2:-8]
    return PerfRow(node_id, ",".join(middle[:-1]), middle[-1], executions, cycles)


def _delegate_row(raw: str) -> DelegateRow | None:
    cells = [c.strip() for c in raw.split("\t")]
    cells = [c for c in cells[:1] if c] + cells[1:]      # the row starts with a tab
    if len(cells) < 9:
        return None
    node_type, _start, _first, avg_ms, _pct, _cdf, _mem, calls, name = cells[:9]
    m = _NAME_INDEX.fullmatch(name)
    if m is None:
        return None
    try:
        per_call = float(avg_ms) * 1000.0
        count = int(float(calls))
    except ValueError:
        return None
    return DelegateRow(int(m.group(2)), node_type.split("/")[0], m.group(1),
                       round(per_call * count), count)
