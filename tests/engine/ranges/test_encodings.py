"""The ranges file: AIMET's encodings layout, round trip and files keyed by tensor name."""

from __future__ import annotations

import json

import pytest

from hexscope.engine.errors import InputError
from hexscope.engine.quant import QuantRange
from hexscope.engine.ranges import Encoding, Method, calibrate, read_ranges, write_ranges
from hexscope.engine.ranges.encodings import from_json, grid, to_json
from support.range_graphs import data_set, four_patterns


def test_grid_includes_zero_and_makes_it_an_exact_code():
    lo, hi = grid(0.3, 2.0)
    assert lo == 0.0 and hi == 2.0
    lo, hi = grid(-1.0, 1.0)                    # symmetric: zero point 127.5, nudged
    assert QuantRange(lo, hi).zero_exact and lo <= -1.0 + 1e-6 and hi >= 1.0 - 0.01


def test_encodings_file_round_trips_exactly(tmp_path):
    cal = calibrate(four_patterns(), data_set(2), Method.parse("per-run-percentile:99"))
    path = tmp_path / "r.json"
    write_ranges(cal.ranges, path)
    back = read_ranges(path)
    assert back.encodings == cal.ranges.encodings
    assert back.info["method"] == "per-run-percentile:99"
    write_ranges(back, tmp_path / "again.json")
    assert (tmp_path / "again.json").read_bytes() == path.read_bytes()


def test_the_file_is_aimet_shaped():
    cal = calibrate(four_patterns(), data_set(2), Method.parse("minmax"))
    doc = json.loads(json.dumps(to_json(cal.ranges)))
    entry = doc["activation_encodings"]["0x40:0"][0]
    assert set(entry) == {"bitwidth", "dtype", "is_symmetric", "max", "min", "offset", "scale"}
    assert entry["bitwidth"] == 8 and entry["is_symmetric"] == "False"
    assert entry["min"] == pytest.approx(entry["offset"] * entry["scale"], abs=1e-6)
    assert doc["hexscope"]["format"] == "hexscope-ranges"


def test_an_aimet_file_by_tensor_name_matches_node_labels():
    g = four_patterns()
    doc = {"activation_encodings": {
        "relu": [{"bitwidth": 8, "min": -1.0, "max": 3.0}],
        "conv3:0": [{"bitwidth": 8, "scale": 0.1, "offset": -10}],
        "not/a/node:0": [{"bitwidth": 8, "min": 0.0, "max": 1.0}]}}
    got = from_json(doc, g)
    assert got.encodings[(0x25, 0)] == Encoding(-1.0, 3.0)
    assert got.encodings[(0x40, 0)].min == pytest.approx(-1.0)
    assert got.encodings[(0x40, 0)].max == pytest.approx(24.5)
    assert got.unmatched == ["not/a/node:0"]


@pytest.mark.parametrize("doc, message", [
    ({"x": 1}, "not an encodings file"),
    ({"activation_encodings": {"a:0": []}}, "none of its 1 tensor names"),
    ({"activation_encodings": {"relu": [{"bitwidth": 16, "min": 0, "max": 1}]}}, "bitwidth 16"),
    ({"activation_encodings": {"relu": [{"min": 2, "max": 1}]}}, "min <= max"),
    ({"activation_encodings": {"relu": [{"min": "a", "max": 1}]}}, "expected numbers"),
])
def test_bad_encodings_files_are_refused_with_one_clear_message(doc, message):
    with pytest.raises(InputError, match=message):
        from_json(doc, four_patterns(), "r.json")


def test_an_unreadable_file_names_itself(tmp_path):
    (tmp_path / "r.json").write_text("{", encoding="utf-8")
    with pytest.raises(InputError, match="r.json"):
        read_ranges(tmp_path / "r.json")
