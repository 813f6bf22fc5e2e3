"""The ranges file: AIMET's encodings layout, read and written.

Written by ``hexscope calibrate``::

    {"version": "0.6.1",
     "activation_encodings": {"0x1001b:0": [{"bitwidth": 8, "dtype": "int",
                                             "is_symmetric": "False", "min": -0.5,
                                             "max": 6.0, "offset": -20, "scale": 0.0254}]},
     "param_encodings": {},
     "hexscope": {"format": "hexscope-ranges", "method": "minmax", "data_set": "...",
                  "tensors": {"0x1001b:0": {"op": ..., "label": ..., "observed": [lo, hi]}}}}

Keys are ``0xID:IDX`` (node id, output index). Each min/max is the calibrated range with 0
included, nudged as R1 (``quantize_adjust_range``) so that 0.0 is an exact code: the grid
the device will use, with AIMET's scale and offset (offset = -zero code). What the data
showed before that nudge is kept in the ``hexscope`` block, which AIMET and QNN ignore.

An AIMET or QNN encodings file keyed by tensor names is read too: a name that is a node's
label stands for its output 0, ``LABEL:IDX`` for output IDX.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from hexscope.engine.errors import InputError
from hexscope.engine.graph import Graph
from hexscope.engine.quant import QuantRange, adjust_range

Key = tuple[int, int]
AIMET_VERSION = "0.6.1"
FORMAT = "hexscope-ranges"


@dataclass(frozen=True, slots=True)
class Encoding:
    """One tensor's range: the grid min and max (0 exact), and what the data showed."""

    min: float
    max: float
    observed: tuple[float, float] | None = None

    @property
    def scale(self) -> float:
        return QuantRange(self.min, self.max).stepsize

    @property
    def offset(self) -> int:
        return -QuantRange(self.min, self.max).zero_code


@dataclass
class RangesFile:
    """Encodings by (node id, output index), with the calibration's description."""

    encodings: dict[Key, Encoding] = field(default_factory=dict)
    info: dict[str, object] = field(default_factory=dict)     # method, data set, ...
    tensors: dict[Key, dict[str, object]] = field(default_factory=dict)
    unmatched: list[str] = field(default_factory=list)        # names no node carries


def grid(lo: float, hi: float) -> tuple[float, float]:
    """A calibrated [lo, hi] as the grid an 8-bit asymmetric op uses: 0 included, R1."""
    return adjust_range(min(0.0, lo), max(0.0, hi))


def key_text(key: Key) -> str:
    return f"0x{key[0]:x}:{key[1]}"


def to_json(ranges: RangesFile) -> dict[str, object]:
    """The file's JSON document (keys in node order as given, stable for diffs)."""
    acts = {key_text(k): [{"bitwidth": 8, "dtype": "int", "is_symmetric": "False",
                           "max": e.max, "min": e.min, "offset": e.offset,
                           "scale": e.scale}]
            for k, e in ranges.encodings.items()}
    tensors = {key_text(k): {**ranges.tensors.get(k, {}),
                             **({"observed": list(e.observed)} if e.observed else {})}
               for k, e in ranges.encodings.items()}
    return {"version": AIMET_VERSION, "activation_encodings": acts, "param_encodings": {},
            "hexscope": {"format": FORMAT, **ranges.info, "tensors": tensors}}


def write_ranges(ranges: RangesFile, path: str | Path) -> None:
    """Write the file (callers that replace a file use ``engine.io.atomic``)."""
    Path(path).write_text(json.dumps(to_json(ranges), indent=1) + "\n", encoding="utf-8")


def read_ranges(path: str | Path, graph: Graph | None = None) -> RangesFile:
    """Read a ranges file (ours, or AIMET/QNN's by tensor name when ``graph`` is given).

    Raises
    ------
    InputError
        The file cannot be read, is not an encodings file, an entry is malformed, or no
        entry names a node of ``graph``.
    """
    try:
        doc = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise InputError(f"{path}: cannot read the ranges file: {exc}") from None
    return from_json(doc, graph, str(path))


def from_json(doc: object, graph: Graph | None = None, name: str = "ranges file"
              ) -> RangesFile:
    """The ranges of an encodings document (see :func:`read_ranges`)."""
    if not isinstance(doc, Mapping) or not isinstance(doc.get("activation_encodings"),
                                                      Mapping):
        raise InputError(f"{name}: not an encodings file (expected an "
                         "'activation_encodings' object, as AIMET and hexscope calibrate "
                         "write)")
    block = doc.get("hexscope") if isinstance(doc.get("hexscope"), Mapping) else {}
    extra = block.get("tensors", {}) if isinstance(block.get("tensors"), Mapping) else {}
    labels = _labels(graph) if graph is not None else {}
    out = RangesFile(info={k: v for k, v in block.items() if k not in ("format", "tensors")})
    for text, entry in doc["activation_encodings"].items():
        key = _key(str(text), labels)
        if key is None:
            out.unmatched.append(str(text))
            continue
        lo, hi = _min_max(entry, f"{name}: {text}")
        more = extra.get(text, {}) if isinstance(extra.get(text, {}), Mapping) else {}
        seen = more.get("observed")
        observed = (float(seen[0]), float(seen[1])) if isinstance(seen, list) and \
            len(seen) == 2 else None
        out.encodings[key] = Encoding(lo, hi, observed)
        out.tensors[key] = {k: v for k, v in more.items() if k != "observed"}
    if graph is not None and not out.encodings and out.unmatched:
        raise InputError(f"{name}: none of its {len(out.unmatched)} tensor names is a node "
                         f"id (0xID:IDX) or a node label of the graph (first: "
                         f"{out.unmatched[0]!r})")
    return out


def _labels(graph: Graph) -> dict[str, int]:
    seen: dict[str, int] = {}
    for node in graph:
        if node.label:
            # a label two nodes share names neither
            seen[node.label] = -1 if node.label in seen else node.node_id
    return {k: v for k, v in seen.items() if v != -1}


def _key(text: str, labels: Mapping[str, int]) -> Key | None:
    if text in labels:
        return labels[text], 0
    head, sep, tail = text.rpartition(":")
    if sep and tail.isdigit():
        if head in labels:
            return labels[head], int(tail)
        try:
            return int(head, 0), int(tail)
        except ValueError:
            return None
    return None


def _min_max(entry: object, where: str) -> tuple[float, float]:
    item = entry[0] if isinstance(entry, list) and entry else entry
    if not isinstance(item, Mapping):
        raise InputError(f"{where}: expected a list of one encoding object")
    bitwidth = item.get("bitwidth", 8)
    if bitwidth != 8:
        raise InputError(f"{where}: bitwidth {bitwidth}; hexagon_nn's quantized ops are 8-bit")
    try:
        if "min" in item and "max" in item:
            lo, hi = float(item["min"]), float(item["max"])
        else:               # QNN may give only scale and offset: min = offset * scale
            scale, offset = float(item["scale"]), float(item["offset"])
            lo = offset * scale
            hi = lo + 255 * scale
    except (KeyError, TypeError, ValueError):
        raise InputError(f"{where}: expected numbers 'min' and 'max' (or 'scale' and "
                         "'offset')") from None
    if not (math.isfinite(lo) and math.isfinite(hi)) or hi < lo:
        raise InputError(f"{where}: the range [{lo}, {hi}] is not a finite range with "
                         "min <= max")
    return lo, hi


__all__ = ["Encoding", "RangesFile", "from_json", "grid", "key_text", "read_ranges",
           "to_json", "write_ranges"]
