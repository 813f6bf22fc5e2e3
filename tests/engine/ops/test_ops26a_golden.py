"""Replay of the nnlib oracle's golden cases for issue 26's unary, activation, normalisation
and reduction ops (tests/data/oracle/<op>.json, written by tests/oracle/py/campaigns_ops26a.py
from nnlib's C compiled on the host: its outputs, or the error it raised).

Each case runs the op's kernel as the executor does (the kernel, then the output-capacity
check against the declared sizes) without the C library, and must give the same bytes
(data, and the float bits of the ranges) or fail where the C failed.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from hexscope.engine.d32 import D32Padding
from hexscope.engine.dtypes import DType
from hexscope.engine.errors import EngineError
from hexscope.engine.nodes import OutputDef, Padding
from hexscope.engine.ops import REGISTRY
from hexscope.engine.ops.context import KernelContext
from hexscope.engine.tensor import Tensor

DATA = Path(__file__).parents[2] / "data" / "oracle"
OPS = ("QuantizedTanh_8", "QuantizedSigmoid_8", "QuantizedTanh_8_d32", "QuantizedSigmoid_8_d32",
       "QuantizedNeg_8_d32", "ArgMax_8_d32", "ArgMin_8_d32",
       "QuantizedSqrt_8", "QuantizedSoftmax_8_ref",
       "L2Normalize_8", "QuantizedMean_8", "ArgMax_8toInt32", "ArgMin_8",
       "QuantizedMinimum_8", "QuantizedMaximum_8", "QuantizedSub_8p8to8")
HVX_ONLY = ("ArgMin_8", "QuantizedMean_8")
_NP = {"u8": (np.uint8, DType.QUINT8), "f32": (np.float32, DType.FLOAT32),
       "i32": (np.int32, DType.INT32)}
_SIZE = {"u8": 1, "f32": 4, "i32": 4}


def _tensor(spec: dict) -> Tensor:
    shape = tuple(spec["shape"])
    if spec["hex"] is None:
        return Tensor.shape_only(shape)
    np_type, dtype = _NP[spec["dtype"]]
    data = np.frombuffer(bytes.fromhex(spec["hex"]), np_type).reshape(shape).copy()
    if "d32" in spec:       # the logical data in d32 layout, its padding holding the fill byte
        return Tensor.from_array(data, dtype).to_d32(D32Padding(*spec["d32"]), fill=spec["fill"])
    return Tensor.from_array(np.frombuffer(bytes.fromhex(spec["hex"]), np_type)
                             .reshape(shape).copy(), dtype)


def _run(op: str, case: dict) -> list[Tensor]:
    sizes = [tuple(d) for d in case["def_max"]] if case.get("def_max") else \
        [(1, 1, 1, max(1, cap // _SIZE[dt])) for dt, cap in case["outs"]]
    defs = tuple(OutputDef(dm, _SIZE[dt]) for dm, (dt, _) in zip(sizes, case["outs"],
                                                                  strict=True))
    ctx = KernelContext(0x2000, op, padding=Padding.parse(case["padding"]), output_defs=defs)
    outs = REGISTRY.get(op).kernel(ctx, *[_tensor(s) for s in case["inputs"]])
    tensors = [o if isinstance(o, Tensor) else Tensor.from_array(np.asarray(o)) for o in outs]
    d32 = REGISTRY.get(op).d32_output
    for k, (t, d) in enumerate(zip(tensors, defs, strict=True)):
        # the executor's final check (executor._check_outputs)
        if t.has_data and t.nbytes > d.capacity(d32, k):
            raise EngineError(f"out too small: output {k}")
    return tensors


def _files() -> list[Path]:
    return [DATA / f"{op}.json" for op in OPS if (DATA / f"{op}.json").exists()]


@pytest.mark.parametrize("path", _files(), ids=lambda p: p.stem)
def test_golden_cases_match_nnlib(path: Path) -> None:
    doc = json.loads(path.read_text())
    # every case the C could run; HVX-only ops keep their error cases only (see their docs)
    assert len(doc["cases"]) >= (60 if doc["op"] in HVX_ONLY else 290)
    bad = []
    for i, case in enumerate(doc["cases"]):
        try:
            got = _run(doc["op"], case)
        except EngineError as exc:
            if "error" not in case:
                bad.append(f"case {i} ({case['desc']}): Hexscope fails ({exc}), C does not")
            continue
        if "error" in case:
            bad.append(f"case {i} ({case['desc']}): C fails ({case['error']}), Hexscope not")
            continue
        if "layout" in case:        # the C decided the layout, then reached HVX code
            for k, (t, want) in enumerate(zip(got, case["layout"], strict=False)):
                if list(t.shape) != want["shape"] or (want["d32"] is not None and
                                                     list(t.padding) != want["d32"]):
                    bad.append(f"case {i} out{k}: layout {t.shape} {t.padding} != {want}")
            continue
        for k, (t, want) in enumerate(zip(got, case["outputs"], strict=True)):
            np_type, _ = _NP[want["dtype"]]
            if list(t.shape) != want["shape"]:
                bad.append(f"case {i} out{k}: shape {t.shape} != {want['shape']}")
            elif "d32" in want and list(t.padding) != want["d32"]:
                bad.append(f"case {i} out{k}: d32 padding {tuple(t.padding)} != {want['d32']}")
            elif np.ascontiguousarray(t.array).astype(np_type).tobytes().hex() != want["hex"]:
                bad.append(f"case {i} ({case['desc']}) out{k}: bytes differ")
    assert not bad, "\n".join(bad[:10])
