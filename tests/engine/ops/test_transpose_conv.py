"""QuantizedTransposeConv2d_8x8p32to8 against nnlib's C: the golden cases of
tests/oracle/py/campaigns_tconv.py (every node of the prepared expansion run in nnlib's C:
QuantizedPad_8, Supernode_8x8p32to8_ref, DepthToSpace_8, QuantizedSlice_8), replayed through
Hexscope's prepare and executor without the C library."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from hexscope.engine import Session
from support.transpose_conv_graph import TC, transpose_conv_graph

GOLDEN = Path(__file__).resolve().parents[2] / "data" / "oracle" / \
    "quantized_transpose_conv2d_8x8p32to8.json"
CASES = json.loads(GOLDEN.read_text())["cases"]


def _bits(a: np.ndarray) -> int:
    return int(np.asarray(a, np.float32).reshape(-1).view(np.uint32)[0])


@pytest.mark.parametrize("chunk", range(4))
def test_byte_exact_with_nnlibs_c_on_the_golden_cases(chunk):
    assert len(CASES) >= 300
    for i, case in enumerate(CASES[chunk::4]):
        x = np.array(case["x"], np.uint8)
        g = transpose_conv_graph(
            x.shape, np.array(case["w"], np.uint8), tuple(case["stride"]),
            tuple(case["pads"]), tuple(case["out_hw"]), bias=np.array(case["bias"], np.int32),
            x_range=tuple(case["x_range"]), w_range=tuple(case["w_range"]),
            bias_range=tuple(case["bias_range"]), out_range=tuple(case["out_range"]))
        c = case["c"]
        s = Session(g)
        if not c["ok"]:
            with pytest.raises(Exception):      # noqa: B017 (C's wording is the op's own)
                s.execute([x])
            continue
        s.execute([x])
        y, lo, hi = (s.output(TC, k).array for k in range(3))
        where = f"case {chunk + 4 * i}: {case['stride']} {case['out_range']}"
        assert list(y.shape) == c["shape"], where
        assert y.reshape(-1).tolist() == c["y"], where
        assert (_bits(lo), _bits(hi)) == (c["min_bits"], c["max_bits"]), where
