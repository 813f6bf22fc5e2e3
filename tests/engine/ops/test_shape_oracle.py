"""Golden vectors of issue 26's shape and resize ops, replayed without the C library.

``tests/data/oracle/<op>.json`` holds cases drawn by ``tests/oracle/py/campaigns_ops26b.py``
and run on nnlib's own op compiled as C (``tests/oracle``, ``golden_ops26b.py``): the C's
status and, where it succeeded, its outputs (shape, type, bytes; for a d32 output every
byte of its memory, padding included, and the padding amounts). Each case runs through the
op's kernel and the executor's capacity check with the same declared output sizes, and must
give the same bytes, or fail where C failed.
"""

from __future__ import annotations

import base64
import gzip
import json
from pathlib import Path

import numpy as np
import pytest

from hexscope.engine.d32 import D32Padding
from hexscope.engine.dtypes import DType, Layout
from hexscope.engine.errors import EngineError
from hexscope.engine.nodes import OutputDef, Padding
from hexscope.engine.ops import REGISTRY
from hexscope.engine.ops.context import KernelContext
from hexscope.engine.tensor import Tensor

DATA = Path(__file__).parents[2] / "data" / "oracle"
OPS = ["QuantizedPad_8", "MirrorPad_8", "Reshape", "Transpose_8", "QuantizedSplit_8",
       "QuantizedSlice_8", "QuantizedStridedSlice_8", "QuantizedPack_8", "SpaceToDepth_8",
       "DepthToSpace_8", "ResizeNearestNeighbor_8", "QuantizedResizeBilinear_8",
       "QuantizedPad_8_d32", "MirrorPad_8_d32"]
_DT = {"u8": DType.QUINT8, "i32": DType.INT32, "f32": DType.FLOAT32}
_NP = {"u8": np.uint8, "i32": np.int32, "f32": np.float32}


def _tensor(spec: list) -> Tensor:
    dtype, shape, data = spec[:3]
    raw = np.frombuffer(base64.b64decode(data), np.uint8).copy()
    if len(spec) > 3:       # d32: the memory and its padding
        return Tensor(tuple(shape), _DT[dtype], raw, Layout.D32, D32Padding(*spec[3]))
    return Tensor(tuple(shape), _DT[dtype], raw)


def _run(op: str, case: dict) -> tuple[Tensor, ...]:
    spec = REGISTRY.get(op)
    defs = tuple(OutputDef(tuple(d), e) for d, e in zip(case["def_max"], case["elsizes"],
                                                      strict=True))
    n_in = len(case["inputs"])
    ctx = KernelContext(node_id=0x2000, op=op, padding=Padding.parse(case["padding"]),
                        output_defs=defs, input_refs=tuple((0x1000 + k, 0) for k in range(n_in)))
    outs = spec.kernel(ctx, *[_tensor(t) for t in case["inputs"]])
    tensors = tuple(o if isinstance(o, Tensor) else Tensor.from_array(np.asarray(o))
                    for o in outs)
    for k, t in enumerate(tensors):     # the executor's final check (executor._check_outputs)
        if t.nbytes > defs[k].capacity(spec.d32_output, k):
            raise EngineError(f"output {k} too large")
    return tensors


def _cases(op: str) -> list[dict]:
    path = DATA / f"{op}.json"
    if op.endswith("_d32"):     # d32 memories are mostly padding: kept gzipped
        return json.loads(gzip.decompress((DATA / f"{op}.json.gz").read_bytes()))["cases"]
    return json.loads(path.read_text())["cases"]


@pytest.mark.parametrize("op", OPS)
def test_golden_file_has_300_cases_of_both_kinds(op):
    cases = _cases(op)
    assert len(cases) >= 300
    assert any(c["ok"] for c in cases) and any(not c["ok"] for c in cases)


@pytest.mark.parametrize("op", OPS)
def test_bit_exact_with_nnlib(op):
    bad = []
    for i, case in enumerate(_cases(op)):
        try:
            got = _run(op, case)
        except EngineError as exc:
            if case["ok"]:
                bad.append(f"case {i} ({case['desc']}): Hexscope fails: {exc}")
            continue
        if not case["ok"]:
            bad.append(f"case {i} ({case['desc']}): C fails ({case['error']}), Hexscope runs")
            continue
        for k, (want, t) in enumerate(zip(case["outs"], got, strict=False)):
            dtype, shape, data = want[:3]
            if len(want) > 3:   # d32: every byte of the memory, padding included
                same = (t.layout is Layout.D32 and tuple(t.padding) == tuple(want[3])
                        and np.asarray(t.raw).tobytes()[:len(base64.b64decode(data))]
                        == base64.b64decode(data))
            else:
                same = np.ascontiguousarray(t.array, _NP[dtype]).tobytes() == \
                    base64.b64decode(data)
            if tuple(shape) != t.shape or not same:
                bad.append(f"case {i} ({case['desc']}): output {k} differs")
    assert not bad, "\n".join(bad[:10])
