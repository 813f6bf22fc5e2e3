"""The last differences traced between Hexscope's d32 Supernodes and nnlib's HVX code under
qemu-hexagon (docs/oracle-hvx.md, issue 25), on golden cases of
``tests/data/oracle/<op>.hvx.json.gz`` (run on nnlib's own op under QEMU, see
``tests/oracle/py/campaigns_trace25b.py``).
"""

from __future__ import annotations

import base64
import gzip
import json
from pathlib import Path

import numpy as np

from hexscope.engine.d32 import D32Padding
from hexscope.engine.dtypes import DType, Layout
from hexscope.engine.nodes import OutputDef, Padding
from hexscope.engine.ops import REGISTRY
from hexscope.engine.ops.context import KernelContext
from hexscope.engine.tensor import Tensor

DATA = Path(__file__).parents[2] / "data" / "oracle"
_DT = {"u8": DType.QUINT8, "i32": DType.INT32, "f32": DType.FLOAT32}


def _case(op: str, index: int) -> dict:
    cases = json.loads(gzip.decompress((DATA / f"{op}.hvx.json.gz").read_bytes()))["cases"]
    return cases[index]


def _tensor(spec: list) -> Tensor:
    dtype, shape, data = spec[:3]
    if dtype == "void":
        return Tensor.shape_only(tuple(shape))
    raw = np.frombuffer(base64.b64decode(data), np.uint8).copy()
    if len(spec) > 3:
        return Tensor(tuple(shape), _DT[dtype], raw, Layout.D32, D32Padding(*spec[3]))
    return Tensor(tuple(shape), _DT[dtype], raw)


def _run(op: str, case: dict, inputs: list[Tensor] | None = None
         ) -> tuple[KernelContext, tuple[Tensor, ...]]:
    defs = tuple(OutputDef(tuple(d), e) for d, e in zip(case["def_max"], case["elsizes"],
                                                      strict=True))
    ins = inputs if inputs is not None else [_tensor(t) for t in case["inputs"]]
    ctx = KernelContext(node_id=0x2000, op=op, padding=Padding.parse(case["padding"]),
                        output_defs=defs, input_refs=tuple((0x1000 + k, 0)
                                                           for k in range(len(ins))))
    return ctx, tuple(REGISTRY.get(op).kernel(ctx, *ins))


def _nnlib_bytes(case: dict, k: int) -> bytes:
    return base64.b64decode(case["outs"][k][2])


def test_input_wider_in_depth_than_the_filter_is_a_warning_naming_the_c_line():
    """Supernode_8x8p32to8_d32 golden case 23: an input of depth 5 with 59 lanes of depth
    padding (2 slices), a filter of depth 5 (packed for 32). nnlib's asm takes taps for the
    64 lanes and reads past its weights buffer (op_supernode_new.c:3056 against :4558); a
    scratch build handing it zero-code weights for lanes 32..63 gives Hexscope's bytes. The
    run says so; an input of one slice does not."""
    op = "Supernode_8x8p32to8_d32"
    case = _case(op, 23)
    ctx, _ = _run(op, case)
    assert any("op_supernode_new.c:3056" in w and "64 lanes" in w for w in ctx.warnings)
    plain = _case(op, 0)
    assert plain["inputs"][0][3][4:] == [0, (-plain["inputs"][0][1][3]) % 32]
    ctx, _ = _run(op, plain)
    assert not [w for w in ctx.warnings if "op_supernode_new.c:3056" in w]
