"""QuantizedTransposeConv2d_8x8p32to8 against nnlib's C: the golden cases of
tests/oracle/py/campaigns_tconv.py (every node of the prepared expansion run in nnlib's C:
QuantizedPad_8, Supernode_8x8p32to8_ref, DepthToSpace_8, QuantizedSlice_8), replayed through
Hexscope's prepare and executor without the C library."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest

from hexscope.engine import Session
from hexscope.engine.d32 import D32Padding
from hexscope.engine.dtypes import Layout
from hexscope.engine.ops.registry import REGISTRY, OpRegistry
from support.transpose_conv_graph import TC, transpose_conv_graph

GOLDEN = Path(__file__).resolve().parents[2] / "data" / "oracle" / \
    "quantized_transpose_conv2d_8x8p32to8.json"
CASES = json.loads(GOLDEN.read_text())["cases"]


def _flat_ref_registry() -> OpRegistry:
    """Hexscope's ops with the d32 Supernode forms prepare makes running the flat ``_ref``
    kernel re-laid as d32: the golden chain is nnlib's x86 C (Supernode_8x8p32to8_ref),
    while the d32 forms compute what the HVX op does (fixed-point requantization, the range
    moved so that 0 is a code: docs/oracle-hvx.md), which this golden file does not hold."""
    reg = OpRegistry()
    for spec in REGISTRY.specs():
        reg.register(spec)
    flat = REGISTRY.get("Supernode_8x8p32to8").kernel

    def kernel(ctx, x, *rest):
        y, lo, hi = flat(ctx, x.to_flat() if x.layout is Layout.D32 else x, *rest)
        w, d = y.shape[2], y.shape[3]
        return y.to_d32(D32Padding(4, 4, 4, (-w) & 3, 0, (-d) & 31), ctx.padding_fill), lo, hi

    for name in ("InputSupernode_8x8p32to8_outd32", "Supernode_8x8p32to8_d32"):
        reg.register(dataclasses.replace(REGISTRY.get(name), kernel=kernel), replace=True)
    return reg


_REF_REGISTRY = _flat_ref_registry()


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
        s = Session(g, registry=_REF_REGISTRY)
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
