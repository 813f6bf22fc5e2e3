"""Golden vectors from nnlib's HVX and assembly code, replayed without QEMU.

``tests/data/oracle/<op>.hvx.json.gz`` holds cases drawn by ``tests/oracle/py/campaigns_hvx.py``
and run on nnlib's own op built for Hexagon v66 with its HVX intrinsics and assembly kernels,
under qemu-hexagon (``tests/oracle/hvx``): the op's status and, where it succeeded, every
output (shape, type, bytes; a d32 output as its whole memory, padding included, and its
padding amounts). Each case runs through Hexscope's kernel and the executor's capacity check
with the same declared output sizes and must give the same bytes, or fail where nnlib failed.
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
#: per op, how many golden cases Hexscope matches byte for byte (status, every output byte,
#: d32 padding included); the others carry "known", a difference docs/oracle-hvx.md
#: explains. A model that regresses fails test_bit_exact_with_nnlib_hvx; one that improves
#: fails test_exact_counts until the golden file is exported again and the count raised.
EXACT = {
    "QuantizedSplit_8_d32": 300,
    "DepthToSpace_8_d32": 300,
    "QuantizedResizeBilinear_8_d32": 300,
    # the softmaxes: every case, edge cases included (the HVX arithmetic lane by lane)
    "QuantizedSoftmax_8_d32": 348,
    "QuantizedSoftmax_8_d32_ref": 348,
    "QuantizedSoftmax_8": 344,
    # the d32 Supernodes (issue 25): inputs deeper than the filter is packed for (the asm
    # reads weights past its buffer), reads past the input tensor's memory; the
    # depthwise: 'Final too big' (nnlib runs it), short left padding (docs/oracle-hvx.md)
    "Supernode_8x8p32to8_d32": 297,
    "Supernode_8x8p8to8_d32": 298,
    "InputSupernode_8x8p32to8_outd32": 301,
    "DepthwiseSupernode_8x8p32to8_d32": 292,
    # avgpool26: global pools (reduce-to-1x1, its own range), the HVX integral path, the
    # 2x2 and 3x3 stride-1 handlers; 7 cases whose whole vectors or extra row read past the
    # end of their input buffer (output padding only)
    "QuantizedAvgPool_8_d32": 313,
    # d32req25: every case, padding included (docs/oracle-requantize-d32.md)
    "Requantize_8to8_d32": 335,
}
OPS = list(EXACT)
_DT = {"u8": DType.QUINT8, "i32": DType.INT32, "f32": DType.FLOAT32}
_NP = {"u8": np.uint8, "i32": np.int32, "f32": np.float32}


def _tensor(spec: list) -> Tensor:
    dtype, shape, data = spec[:3]
    if dtype == "void":     # a shape-only input (the Supernodes' stride)
        return Tensor.shape_only(tuple(shape))
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
    return json.loads(gzip.decompress((DATA / f"{op}.hvx.json.gz").read_bytes()))["cases"]


def _same(want: list, t: Tensor) -> bool:
    dtype, shape, data = want[:3]
    raw = base64.b64decode(data)
    if tuple(shape) != t.shape:
        return False
    if len(want) > 3:       # d32: every byte of the memory, padding included
        return (t.layout is Layout.D32 and tuple(t.padding) == tuple(want[3])
                and np.asarray(t.raw).tobytes()[:len(raw)] == raw)
    return np.ascontiguousarray(t.array, _NP[dtype]).tobytes() == raw


@pytest.mark.parametrize("op", OPS)
def test_golden_file_has_300_cases_of_both_kinds(op):
    cases = _cases(op)
    assert len(cases) >= 300
    assert any(c["ok"] for c in cases) and any(not c["ok"] for c in cases)


@pytest.mark.parametrize("op", OPS)
def test_bit_exact_with_nnlib_hvx(op):
    bad = []
    cases = _cases(op)
    # "known": a difference explained in docs/oracle-hvx.md (and the op's doc)
    assert sum("known" not in c for c in cases) >= EXACT[op]
    for i, case in enumerate(cases):
        if "known" in case:
            continue
        try:
            got = _run(op, case)
        except EngineError as exc:
            if case["ok"]:
                bad.append(f"case {i} ({case['desc']}): Hexscope fails: {exc}")
            continue
        if not case["ok"]:
            bad.append(f"case {i} ({case['desc']}): nnlib fails ({case['error']}), Hexscope runs")
            continue
        bad += [f"case {i} ({case['desc']}): output {k} differs"
                for k, (want, t) in enumerate(zip(case["outs"], got, strict=False))
                if not _same(want, t)]
    assert not bad, "\n".join(bad[:10])


@pytest.mark.parametrize("op", OPS)
def test_exact_counts(op):
    """The golden file's exact cases are the count the model reached (docs/oracle-hvx.md)."""
    assert sum("known" not in c for c in _cases(op)) == EXACT[op]
