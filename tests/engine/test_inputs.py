"""Graph input settings saved with the graph (engine/inputs.py): damaged settings and input
files give an InputError that names the input and the field, never a numpy exception."""

from __future__ import annotations

import numpy as np
import pytest

from hexscope.engine import Graph
from hexscope.engine.errors import InputError
from hexscope.engine.inputs import InputSource, input_sources, make_input, make_inputs
from hexscope.engine.nodes import OutputDef


def _graph(inputs: object = None) -> Graph:
    g = Graph()
    g.append_node(0x10, "INPUT", outputs=[OutputDef((1, 2, 2, 3), 4)])
    g.append_node(0x20, "OUTPUT", inputs=[(0x10, 0)])
    if inputs is not None:
        g.meta["inputs"] = inputs
    return g


@pytest.mark.parametrize(("entry", "field"), [
    ({"kind": "noise"}, "'kind'"), ({"dtype": "bogus"}, "'dtype'"),
    ({"dtype": "complex64"}, "'dtype'"), ({"shape": "abc"}, "'shape'"),
    ({"shape": [1, 2, 3, 4, 5]}, "'shape'"), ({"shape": [1, -2, 2, 3]}, "'shape'"),
    ({"seed": -1}, "'seed'"), ({"seed": 1.5}, "'seed'"), ({"low": "x"}, "'low'"),
    ({"value": float("nan")}, "'value'"), ({"path": 3}, "'path'")])
def test_damaged_saved_settings_name_the_input_and_the_field(entry, field):
    with pytest.raises(InputError, match=f"input 0: the saved {field}"):
        input_sources(_graph([entry]))


def test_settings_that_are_not_a_list_are_an_input_error():
    with pytest.raises(InputError, match="not a list.*found int"):
        input_sources(_graph(5))


def test_good_settings_still_load():
    (src,) = input_sources(_graph([{"kind": "constant", "value": 2, "shape": [2, 2, 3],
                                    "dtype": "uint8"}]))
    assert src == InputSource(kind="constant", value=2, shape=(1, 2, 2, 3), dtype="uint8")
    assert np.array_equal(make_inputs(_graph([{"kind": "constant", "value": 2}]))[0].array,
                          np.full((1, 2, 2, 3), 2, np.float32))


def test_shapes_a_tensor_cannot_have_are_refused():
    with pytest.raises(InputError, match="negative size"):
        make_input(InputSource(), (1, -16, 16, 8))
    with pytest.raises(InputError, match="more than 4 GiB"):
        make_input(InputSource(kind="constant"), (1000, 1000, 1000, 1000))


def test_a_damaged_npy_header_names_the_file(tmp_path):
    path = tmp_path / "x.npy"
    np.save(path, np.zeros((1, 2, 2, 3), np.float32))
    raw = bytearray(path.read_bytes())
    raw[8:10] = (43).to_bytes(2, "little")       # a header length that cuts the dict open
    path.write_bytes(bytes(raw))
    with pytest.raises(InputError, match="x.npy: the .npy header is damaged"):
        make_input(InputSource(kind="npy", path=str(path)), None)
