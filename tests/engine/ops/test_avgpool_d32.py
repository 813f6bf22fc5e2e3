"""QuantizedAvgPool_8_d32 and its ``_ref`` (nnlib op_avgpool_d32.c, plan
integral_buffer.c ``setup_integral_buffer_plan``): the reciprocal table of the C's comment,
the plan's trimming, the reduce-to-1x1 handler by hand, the errors, a property against the
float mean, and the replay of the host oracle's golden cases
(tests/data/oracle/QuantizedAvgPool_8_d32_ref.json.gz, tests/oracle/py/campaigns_avgpool26.py).
"""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hexscope.engine.d32 import D32Padding
from hexscope.engine.dtypes import DType
from hexscope.engine.errors import EngineError, KernelError
from hexscope.engine.nodes import OutputDef, Padding
from hexscope.engine.ops.context import KernelContext
from hexscope.engine.ops.pooling.avgpool_d32 import (
    axis_plan,
    quantized_avg_pool_8_d32,
    quantized_avg_pool_8_d32_ref,
    recip_parms,
)
from hexscope.engine.ops.pooling.pool import quantized_avg_pool_8
from hexscope.engine.tensor import Tensor

DATA = Path(__file__).parents[2] / "data" / "oracle"
FILL = 0x5A


def _w(v: float) -> Tensor:
    return Tensor.scalar(np.float32(v))


def _shape(h: int, w: int) -> Tensor:
    return Tensor.from_array(np.zeros((1, h, w, 1), np.uint8), DType.QUINT8)


def _ctx(padding: str = "VALID", defs: tuple[OutputDef, ...] | None = None) -> KernelContext:
    return KernelContext(0x20, "QuantizedAvgPool_8_d32", padding=Padding.parse(padding),
                         padding_fill=FILL, output_defs=defs or (OutputDef(()),) * 3)


def _pool(x, lo, hi, win, stride=(1, 1), padding="VALID", kernel=quantized_avg_pool_8_d32,
          pad=None):
    t = Tensor.from_array(np.asarray(x, np.uint8), DType.QUINT8).to_d32(pad, fill=7)
    return kernel(_ctx(padding), t, _w(lo), _w(hi), _shape(*win), _shape(*stride))


def test_reciprocals_match_the_table_in_the_c_comment():
    # op_avgpool_d32.c's header: window -> (>> by, mantissa); its 5x5 row says 20927, a
    # typo for the code's (16384 << 6) / 25 = 41943, (41943 + 1) >> 1 = 20972 (2**19 / 25)
    table = {(3, 3): (5, 29127), (5, 5): (6, 20972), (19, 19): (10, 23237),
             (63, 63): (13, 16908), (1, 3): (3, 21845), (1, 2): (2, 16384), (1, 1): (1, 16384)}
    for (h, w), (rsh, mant) in table.items():
        assert recip_parms(h * w) == (mant, rsh)


def test_plan_trims_the_input_and_takes_a_single_output_as_the_whole_window():
    # VALID 7 wide, window 5, stride 3: one output; the input is trimmed to 5 and the window
    # is those 5 (the example in setup_integral_buffer_plan)
    p = axis_plan(7, 5, 3, Padding.VALID)
    assert (p.out, p.n, p.win, p.stride, p.before, p.after) == (1, 5, 5, 1, 0, 0)
    # SAME with a window larger than the input and one output: the whole input, no padding
    p = axis_plan(4, 9, 4, Padding.SAME)
    assert (p.out, p.n, p.win, p.before, p.after) == (1, 4, 4, 0, 0)
    with pytest.raises(KernelError, match="input too small for filter"):
        axis_plan(3, 4, 1, Padding.VALID)


def test_global_pool_past_16_bits_by_hand():
    # 16x16 codes of 200 on [0, 255]: S = 51200 per lane (the flat op's 16-bit lane reads
    # it as -14336 and gives 0). rdiff = 255 / (255 * 256) = 1/256, z = 0; the range is
    # [0, 51200 / 256] = [0, 200]; scale 1.275 / 256 = 0.6375 * 2**-7: r = 7,
    # s = round(1.275 * 2**14) = 20890; ((2 * 51200 * 20890 * 2 + 0x8000) >> 16) >> 7 = 510,
    # (510 + 1) >> 1 = 255: code 255 of [0, 200], the exact mean 200
    x = np.full((1, 16, 16, 8), 200, np.uint8)
    y, lo, hi = _pool(x, 0.0, 255.0, (16, 16))
    assert float(lo.array.item()) == 0.0 and float(hi.array.item()) == 200.0
    np.testing.assert_array_equal(y.array, 255)
    assert y.shape == (1, 1, 1, 8) and y.padding == D32Padding(1, 1, 2, 1, 0, 24)
    flat = quantized_avg_pool_8(_ctx(), Tensor.from_array(x, DType.QUINT8), _w(0.0),
                                _w(255.0), _shape(16, 16), _shape(1, 1))
    np.testing.assert_array_equal(np.asarray(flat[0]), 0)      # the 16-bit wrap


def test_global_pool_fills_the_row_vector_and_leaves_the_rest_unwritten():
    x = np.arange(2 * 3 * 4 * 5, dtype=np.uint8).reshape(2, 3, 4, 5)
    y, _, _ = _pool(x, -1.0, 1.0, (3, 4))
    mem = y.padded_array()                   # [B, 3 rows, 4 columns, 32 lanes]
    assert (mem[:, 0] == FILL).all() and (mem[:, 2] == FILL).all()
    for col in range(4):                     # the 2 columns before and 1 after: same codes
        np.testing.assert_array_equal(mem[:, 1, col], mem[:, 1, 2])
    # the _ref op keeps the range and runs the integral path (4 columns before, no copies)
    r, lo, hi = _pool(x, -1.0, 1.0, (3, 4), kernel=quantized_avg_pool_8_d32_ref)
    assert float(lo.array.item()) == -1.0 and float(hi.array.item()) == 1.0
    assert r.padding.w_before == 4
    np.testing.assert_array_equal(r.array[..., 0], [[[round(x[0, :, :, 0].mean())]],
                                                   [[round(x[1, :, :, 0].mean())]]])


def test_not_simulated_cases_and_errors_name_the_reason():
    x = np.zeros((1, 6, 6, 3), np.uint8)
    # the 3x3 stride-1 handler: (sum of 9 + zapped edges) * 3641, rounded >> 15
    y, _, _ = _pool(np.full((1, 4, 4, 3), 90, np.uint8), 0.0, 1.0, (3, 3), (1, 1), "SAME")
    np.testing.assert_array_equal(y.array, (810 * 3641 + 0x4000) >> 15)     # 90
    z, _, _ = _pool(np.arange(16, dtype=np.uint8).reshape(1, 4, 4, 1) * 10, 0.0, 1.0,
                    (3, 3))
    # VALID windows: rows 0-2 cols 0-2 sum 10 * (0+1+2+4+5+6+8+9+10) = 450 -> 50
    assert z.array[0, 0, 0, 0] == (450 * 3641 + 0x4000) >> 15 == 50
    _pool(x, 0.0, 1.0, (3, 3), kernel=quantized_avg_pool_8_d32_ref)     # the C path runs
    t = Tensor.from_array(x, DType.QUINT8).to_d32()
    bad = Tensor.from_array(np.zeros((2, 3, 3, 1), np.uint8), DType.QUINT8)
    with pytest.raises(KernelError, match="bad window shape"):
        quantized_avg_pool_8_d32(_ctx(), t, _w(0.0), _w(1.0), bad, _shape(1, 1))
    with pytest.raises(KernelError, match="bad stride shape"):
        quantized_avg_pool_8_d32(_ctx(), t, _w(0.0), _w(1.0), _shape(1, 1), bad)
    with pytest.raises(KernelError, match="input too small for filter"):
        _pool(x, 0.0, 1.0, (7, 2))


def test_the_2x2_handler_rounds_half_up_and_copies_edges_by_hand():
    # HVX 2x2 stride 2, SAME on 3x3: one padding row and column after. Output (0,0) =
    # (1 + 2 + 4 + 5 + 2) >> 2 = 3; (0,1) takes column 2 twice: (3 + 3 + 6 + 6 + 2) >> 2 = 5;
    # (1,0) row 2 twice: (7 + 8 + 7 + 8 + 2) >> 2 = 8; (1,1): (9 * 4 + 2) >> 2 = 9
    x = np.arange(1, 10, dtype=np.uint8).reshape(1, 3, 3, 1)
    y, lo, hi = _pool(x, 0.0, 1.0, (2, 2), (2, 2), "SAME")
    np.testing.assert_array_equal(y.array.reshape(2, 2), [[3, 5], [8, 9]])
    assert (float(lo.array.item()), float(hi.array.item())) == (0.0, 1.0)
    # the C path's integral image gives the valid cells' mean: (3 + 6) / 2 = 4.5 -> 5,
    # (7 + 8) / 2 -> 8 (7.5 within its 15-bit scales)
    r, _, _ = _pool(x, 0.0, 1.0, (2, 2), (2, 2), "SAME", kernel=quantized_avg_pool_8_d32_ref)
    assert abs(int(r.array.reshape(2, 2)[0, 1]) - 4.5) <= 1


def test_edge_windows_extrapolate_the_valid_cells_by_hand():
    # 1x3 codes [10, 20, 30], window 1x3, stride 1, SAME: one padding column each side.
    # The integral row (x256) is 0, 2560, 7680, 15360 at columns 0..3. The edge scale for
    # p = 1, w = 3: -((round(2**31 / 2) * 1 + 0x8000) >> 16) = -16384 (-1/2). Left column
    # -1: I[w-p] = I[2] = 7680, (7680 * -16384 + 0x4000) >> 15 = -3840. Right column 4:
    # I[3] - ((I[3] - I[1]) * -16384 + 0x4000 >> 15) = 15360 + 6400 = 21760. Windows:
    # [-1, 2) 7680 + 3840 = 11520 (3 x 15 x 256: the mean of 10 and 20), [0, 3) 15360,
    # [1, 4) 21760 - 2560 = 19200 (3 x 25 x 256). Scaling (r = 3, m = 21845):
    # a = 11520 >> 3 = 1440, (1440 * 21845 + 0x8000) >> 15 = 960, (960 + 32) >> 6 = 15; then
    # 20 and 25
    y, _, _ = _pool([[[[10], [20], [30]]]], 0.0, 1.0, (1, 3), (1, 1), "SAME",
                    kernel=quantized_avg_pool_8_d32_ref)
    np.testing.assert_array_equal(y.array.reshape(-1), [15, 20, 25])


@settings(max_examples=40, deadline=None)
@given(h=st.integers(1, 9), w=st.integers(1, 9), fh=st.integers(1, 4), fw=st.integers(1, 4),
       s=st.integers(1, 3), seed=st.integers(0, 2**16))
def test_integral_path_is_the_rounded_mean(h, w, fh, fw, s, seed):
    # VALID keeps every window inside the input: the _ref op's code is the window mean
    # rounded, within 1 (its reciprocal is 15 bits)
    if fh > h or fw > w:
        return
    x = np.random.default_rng(seed).integers(0, 256, (1, h, w, 3), dtype=np.uint8)
    y, _, _ = _pool(x, 0.0, 1.0, (fh, fw), (s, s), kernel=quantized_avg_pool_8_d32_ref)
    win = np.lib.stride_tricks.sliding_window_view(x[0], (fh, fw), axis=(0, 1))
    mean = win.mean(axis=(-2, -1))[::s, ::s]
    assert np.abs(y.array[0].astype(float) - mean).max() <= 0.5 + 1e-9 + 1


def _tensor(spec: dict) -> Tensor:
    if spec["hex"] is None:                  # window and stride: shape only
        return Tensor.from_array(np.zeros(spec["shape"], np.uint8), DType.QUINT8)
    np_type, dtype = {"u8": (np.uint8, DType.QUINT8), "f32": (np.float32, DType.FLOAT32)}[
        spec["dtype"]]
    data = np.frombuffer(bytes.fromhex(spec["hex"]), np_type).reshape(spec["shape"]).copy()
    t = Tensor.from_array(data, dtype)
    return t.to_d32(D32Padding(*spec["d32"]), fill=spec["fill"]) if "d32" in spec else t


def test_golden_cases_match_nnlib_byte_for_byte():
    doc = json.loads(gzip.decompress(
        (DATA / "QuantizedAvgPool_8_d32_ref.json.gz").read_bytes()))
    assert len(doc["cases"]) >= 300
    bad = []
    for i, case in enumerate(doc["cases"]):
        # the padding mode is the word the campaign writes in each description
        mode = re.search(r"\b(SAME_CAFFE|SAME|VALID)\b", case["desc"]).group(1)
        defs = tuple(OutputDef(tuple(d), 1 if k == 0 else 4)
                     for k, d in enumerate(case["def_max"]))
        ctx = KernelContext(0x20, "QuantizedAvgPool_8_d32_ref", padding=Padding.parse(mode),
                            output_defs=defs)
        try:
            y, lo, hi = quantized_avg_pool_8_d32_ref(ctx, *[_tensor(s) for s in case["inputs"]])
        except EngineError as exc:
            if "error" not in case:
                bad.append(f"case {i} ({case['desc']}): Hexscope fails ({exc}), C does not")
            continue
        if "error" in case:
            bad.append(f"case {i} ({case['desc']}): C fails ({case['error']}), Hexscope not")
            continue
        want = case["memory"]
        if [list(y.shape), list(y.padding)] != [want["shape"], want["d32"]] or \
                np.asarray(y.buffer).tobytes().hex() != want["hex"]:
            bad.append(f"case {i} ({case['desc']}): buffer differs")
        ranges = [np.asarray(t.array, np.float32).tobytes().hex() for t in (lo, hi)]
        if ranges != case["ranges"]:
            bad.append(f"case {i}: ranges {ranges} != {case['ranges']}")
    assert not bad, "\n".join(bad[:10])
