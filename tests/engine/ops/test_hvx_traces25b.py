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


def test_dwise_3x3_stride2_first_group_matches_nnlib_byte_for_byte():
    """DepthwiseSupernode_8x8p32to8_d32 golden case 20 (3x3 filter, stride 2, VALID, input
    left padding 5, an output range without 0): dwconv2dbbb_s2_3x3_asm's first group reads
    its third filter row from the once-shuffled vector (x2 and x2_ba98 are one register,
    dwconv2dbbb_s2_3x3_h.S), so the padded width's first column takes other bytes: nnlib's
    first run's maximum is 29676 (25330 from the window's codes), its final range [-5.6569,
    0.42963], and the leftmost padding column 156 where the window gives 128."""
    op = "DepthwiseSupernode_8x8p32to8_d32"
    case = _case(op, 20)
    assert "known" not in case
    _, got = _run(op, case)
    for k in range(3):
        assert np.asarray(got[k].raw).tobytes()[:len(_nnlib_bytes(case, k))] \
            == _nnlib_bytes(case, k)
    assert np.float32(np.asarray(got[2].raw).view(np.float32)[0]) == np.float32(0.42963457)


def _first_group_input(left: int, zx: int) -> Tensor:
    """A d32 input of 3 rows, 1 column of 32 channels, ``left`` columns of left padding and
    right ones to a multiple of 4; row 2's memory bytes numbered j = column x 32 + lane
    (mod 256), the others 7."""
    right = (-(left + 1)) % 4
    wt = left + 1 + right
    mem = np.full((1, 3, 1, wt, 32), 7, np.uint8)
    mem[0, 2, 0] = (np.arange(wt * 32) % 256).reshape(wt, 32)
    return Tensor((1, 3, 1, 32), DType.QUINT8, mem.reshape(-1), Layout.D32,
                  D32Padding(0, 0, left, right, 0, 0))


def test_first_group_bytes_by_hand():
    """Lane l's third-row word is memory bytes 2l, 2l + 64, 2l + 1, 2l + 65 of the row's
    first 4 columns (one vshuff) where the window reads l, 32 + l, 64 + l, 96 + l; with a
    left skip of 1 output 0 takes bytes 1..3, output 1 byte 3 as its first tap. Column 0
    is zapped to zx = 0 (a left zap of 5 covers 1 column: padzap_part)."""
    from hexscope.engine.ops.conv.d32_input_reads import Zaps
    from hexscope.engine.ops.conv.dwise_s2_3x3 import first_group_delta
    from hexscope.engine.ops.kernels.gemm import Window
    w = np.zeros((3, 3, 32, 1), np.uint8)
    w[2, :, :, 0] = np.array([1, 10, 100], np.uint8)[:, None]
    rows = Window(3, 3, 2, 1, 0)
    delta = first_group_delta(_first_group_input(5, 0), w, 0, 0, Zaps(0, 0, 5, 2), rows, 1)
    assert delta is not None and delta.shape == (1, 1, 2, 32)
    # lane 0: read [0, 64, 0, 65] for [0, 32, 64, 96]; lane 20: [40, 104, 41, 105] for
    # [0 (zapped), 52, 84, 116]
    assert delta[0, 0, 0, 0] == (64 - 32) * 1 + (0 - 64) * 10 + (65 - 96) * 100
    assert delta[0, 0, 1, 0] == (65 - 96) * 1
    assert delta[0, 0, 0, 20] == (104 - 52) * 1 + (41 - 84) * 10 + (105 - 116) * 100
    assert delta[0, 0, 1, 20] == (105 - 116) * 1
    # skip 0: output 0 bytes 0..2, output 1 bytes 2 and 3 for its first two taps
    delta = first_group_delta(_first_group_input(5, 0), w, 0, 0, Zaps(0, 0, 5, 2), rows, 0)
    assert delta is not None
    assert delta[0, 0, 0, 0] == 0 * 1 + (64 - 32) * 10 + (0 - 64) * 100
    assert delta[0, 0, 1, 0] == (0 - 64) * 1 + (65 - 96) * 10


def test_first_group_changes_nothing_over_a_zapped_left_padding_of_4():
    """A left padding of 4 (every graph Hexscope builds) is zapped whole: the shuffle of 128
    equal bytes is the same vector."""
    from hexscope.engine.ops.conv.d32_input_reads import Zaps
    from hexscope.engine.ops.conv.dwise_s2_3x3 import first_group_delta
    from hexscope.engine.ops.kernels.gemm import Window
    w = np.full((3, 3, 32, 1), 9, np.uint8)
    rows = Window(3, 3, 2, 1, 0)
    assert first_group_delta(_first_group_input(4, 3), w, 2, 3, Zaps(0, 0, 4, 3), rows, 0) \
        is None


def test_dwise_5xn_stride2_last_column_shifted_twice_matches_nnlib():
    """DepthwiseSupernode_8x8p32to8_d32 golden case 123 (5x5 filter, stride 2, an output of
    width 1, a range without 0): dwconv2dbbb_s2_5xN_asm copies the group's first sum into
    its second column after shifting it and shifts that column again, so the column past
    the data holds s << 2 x shift and counts in the range: nnlib's first run's maximum is
    4 s = 359648 (not 2 s), its final range [0, 92681.9], every byte equal."""
    op = "DepthwiseSupernode_8x8p32to8_d32"
    case = _case(op, 123)
    assert "known" not in case
    _, got = _run(op, case)
    for k in range(3):
        assert np.asarray(got[k].raw).tobytes()[:len(_nnlib_bytes(case, k))] \
            == _nnlib_bytes(case, k)
    assert np.asarray(got[2].raw).view(np.float32)[0] == np.float32(92681.8984375)


def test_vector_shift_count_is_six_bits_signed():
    """``vasl(Vu.w, Vv.w)`` under qemu-hexagon, 0x40001 shifted by counts 0..127 (a scratch
    build's log): 0..31 left wrapping, 32..63 right by 64 - count, period 64."""
    from hexscope.engine.ops.conv.dwise_shifts import vasl_words
    one = np.array([0x40001], np.int64)
    seen = {0: 262145, 1: 524290, 13: -2147475456, 14: 16384, 31: -2147483648, 32: 0,
            45: 0, 46: 1, 63: 131072, 64: 262145, 77: -2147475456, 99: 0, 110: 1,
            127: 131072, 129: 524290}
    for count, want in seen.items():
        assert int(vasl_words(one, count)[0]) == want, count
    assert int(vasl_words(np.array([-5], np.int64), 99)[0]) == -1     # arithmetic


def test_dwise_mxn_kernels_tiny_ranges_and_twice_shifted_column_match_nnlib():
    """Seed-1 campaign cases nnlib's MxN kernels ran under QEMU (campaigns_trace25b.py
    --export): fixed output ranges [0, 1e-30] and [0, 1e-6], whose shamt 99 the kernels'
    vector shift takes as a right shift by 29 (the model shifted left by 99 & 31 = 3:
    codes 255 against 0), and 5xN stride-2 outputs whose last group's second column is
    shifted twice. Every output byte, d32 padding included."""
    op = "DepthwiseSupernode_8x8p32to8_d32"
    path = DATA / f"{op}.vshift.hvx.json.gz"
    cases = json.loads(gzip.decompress(path.read_bytes()))["cases"]
    assert len(cases) == 5
    for case in cases:
        assert case["ok"]
        _, got = _run(op, case)
        for k in range(3):
            want = _nnlib_bytes(case, k)
            assert np.asarray(got[k].raw).tobytes()[:len(want)] == want, case["desc"]


def test_dwise_3x3_stride2_first_group_over_data_and_padding_columns():
    """Golden case 20's 3x3 stride-2 node over random data with input left paddings 1..7
    (campaigns_trace25b.py dwise_3x3_s2: 24 of 24 exact under QEMU, 0 of 24 without the
    first-group model): with 1..3 the first group's shuffled word holds data columns, so
    real output columns change, not only the padding's."""
    op = "DepthwiseSupernode_8x8p32to8_d32"
    path = DATA / f"{op}.s2_3x3.hvx.json.gz"
    cases = json.loads(gzip.decompress(path.read_bytes()))["cases"]
    assert sorted(c["inputs"][0][3][2] for c in cases) == [1, 2, 3, 5, 6, 7]
    for case in cases:
        _, got = _run(op, case)
        for k in range(3):
            want = _nnlib_bytes(case, k)
            assert np.asarray(got[k].raw).tobytes()[:len(want)] == want, case["desc"]
