"""Issue 25's ops (the delegate's FULLY_CONNECTED chain, Requantize_8to8, QuantizedMul_8x8to32,
SpaceToBatchND_8, BatchToSpaceND_8) replayed against golden vectors from nnlib's own C.

The files ``tests/data/oracle/<op>.json`` hold cases drawn by the nnlib host oracle
(``tests/oracle``, campaigns in ``py/campaigns_fc.py``, exported by ``py/export_fc.py``) with
the outputs the C wrote on x86 with Hexagon's float-to-int conversions emulated: only cases
where C and Hexscope agreed byte for byte, or where both refused the inputs, are kept. The
oracle table (cases, exact, differences explained) is in docs/oracle-fc.md.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path

import numpy as np
import pytest

from hexscope.engine.dtypes import DType
from hexscope.engine.errors import KernelError
from hexscope.engine.nodes import Padding
from hexscope.engine.ops import REGISTRY
from hexscope.engine.ops.context import KernelContext
from hexscope.engine.tensor import Tensor

DATA = Path(__file__).parents[2] / "data" / "oracle"
FILES = ("requantize_32to8", "requantize_8to8", "biasadd_32p32to32", "superfc_8x8p32to8_ref",
         "mul_8x8to32_ref", "space_to_batch_nd_8", "batch_to_space_nd_8")
_NP = {"u8": np.uint8, "i8": np.int8, "i32": np.int32, "f32": np.float32}
_DT = {"u8": DType.QUINT8, "i8": DType.QINT8, "i32": DType.INT32, "f32": DType.FLOAT32}


def _tensor(spec: dict) -> Tensor:
    shape = tuple(spec["shape"])
    if spec["b64"] is None:
        return Tensor.shape_only(shape)
    data = np.frombuffer(base64.b64decode(spec["b64"]), _NP[spec["dtype"]]).reshape(shape)
    dtype = DType.QINT32 if spec["qint32"] else _DT[spec["dtype"]]
    return Tensor.from_array(data.copy(), dtype)


def _cases() -> list[tuple[str, str, dict]]:
    out = []
    for stem in FILES:
        d = json.loads((DATA / f"{stem}.json").read_text())
        out += [(stem, d["op"], c) for c in d["cases"]]
    return out


CASES = _cases()


@pytest.mark.parametrize("stem, op, case", CASES,
                         ids=[f"{s}-{k}" for k, (s, _, _) in enumerate(CASES)])
def test_bit_exact_with_nnlib(stem, op, case):
    ctx = KernelContext(0x20, op, padding=Padding.parse(case["padding"]))
    inputs = [_tensor(t) for t in case["inputs"]]
    kernel = REGISTRY.get(op).kernel
    if "fails" in case:
        with pytest.raises(KernelError):
            kernel(ctx, *inputs)
        return
    outs = kernel(ctx, *inputs)
    for got, want in zip(outs, case["outputs"], strict=True):
        arr = got.array if isinstance(got, Tensor) else np.asarray(got)
        assert list(arr.shape) == want["shape"], case["desc"]
        assert np.ascontiguousarray(arr).tobytes() == base64.b64decode(want["b64"]), case["desc"]


@pytest.mark.parametrize("stem", FILES)
def test_each_golden_file_has_300_cases_and_refusals_where_the_c_refuses(stem):
    cases = [c for s, _, c in CASES if s == stem]
    assert len(cases) >= 300
    refusing = {"requantize_8to8", "superfc_8x8p32to8_ref", "mul_8x8to32_ref",
                "space_to_batch_nd_8", "batch_to_space_nd_8"}
    assert any("fails" in c for c in cases) == (stem in refusing)
