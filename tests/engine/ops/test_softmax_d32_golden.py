"""Replay of the nnlib oracle's golden cases for QuantizedSoftmax_8_d32 and its _ref
(tests/data/oracle/<op>.json.gz, written by tests/oracle/py/campaigns_d32ops26.py from
op_softmax_d32.c's plain-C softmax_operate_ref_function): every byte of output 0's d32
buffer, padding included, its padding amounts and the range bytes, without the C library."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import numpy as np
import pytest

from hexscope.engine.d32 import D32Padding
from hexscope.engine.dtypes import DType
from hexscope.engine.errors import EngineError
from hexscope.engine.nodes import OutputDef
from hexscope.engine.ops import REGISTRY
from hexscope.engine.ops.context import KernelContext
from hexscope.engine.tensor import Tensor

DATA = Path(__file__).parents[2] / "data" / "oracle"
OPS = ("QuantizedSoftmax_8_d32_ref", "QuantizedSoftmax_8_d32")
_NP = {"u8": (np.uint8, DType.QUINT8), "f32": (np.float32, DType.FLOAT32)}


def _tensor(spec: dict) -> Tensor:
    np_type, dtype = _NP[spec["dtype"]]
    data = np.frombuffer(bytes.fromhex(spec["hex"]), np_type).reshape(spec["shape"]).copy()
    t = Tensor.from_array(data, dtype)
    return t.to_d32(D32Padding(*spec["d32"]), fill=spec["fill"]) if "d32" in spec else t


def _negative_beta(case: dict) -> bool:
    """Explained difference: a negative beta makes the C shift by a negative count or
    overflow its int sum (undefined; x86 masks the count); Hexscope fails the node."""
    ins = case["inputs"]
    return len(ins) > 3 and np.frombuffer(bytes.fromhex(ins[3]["hex"]), np.float32)[0] < 0


@pytest.mark.parametrize("op", OPS)
def test_golden_cases_match_nnlib_byte_for_byte(op: str) -> None:
    doc = json.loads(gzip.decompress((DATA / f"{op}.json.gz").read_bytes()))
    assert len(doc["cases"]) >= 200
    bad, explained = [], 0
    for i, case in enumerate(doc["cases"]):
        defs = tuple(OutputDef(tuple(d), 1 if k == 0 else 4)
                     for k, d in enumerate(case["def_max"]))
        ctx = KernelContext(0x2000, op, output_defs=defs)
        try:
            y, mn, mx = REGISTRY.get(op).kernel(ctx, *[_tensor(s) for s in case["inputs"]])
            if y.nbytes > defs[0].capacity(True, 0):
                raise EngineError("out too small: output 0")
        except EngineError as exc:
            if "error" not in case:
                explained += _negative_beta(case)
                if not _negative_beta(case):
                    bad.append(f"case {i} ({case['desc']}): Hexscope fails ({exc}), C does not")
            continue
        if "error" in case:
            bad.append(f"case {i} ({case['desc']}): C fails ({case['error']}), Hexscope not")
            continue
        want = case["memory"]
        if list(y.shape) != want["shape"] or list(y.padding) != want["d32"]:
            bad.append(f"case {i}: layout {y.shape} {tuple(y.padding)} != {want}")
        elif np.asarray(y.buffer).tobytes().hex() != want["hex"]:
            bad.append(f"case {i} ({case['desc']}): buffer bytes differ")
        ranges = [np.asarray(t.array, np.float32).tobytes().hex() for t in (mn, mx)]
        if ranges != case["ranges"]:
            bad.append(f"case {i}: ranges {ranges} != {case['ranges']}")
    assert not bad, "\n".join(bad[:10])
    assert explained <= 10
