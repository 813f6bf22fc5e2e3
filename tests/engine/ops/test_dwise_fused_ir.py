"""Issue 25's round 8 (branch dw26): the fused depthwise pass's 3x3 row and ring fill in LLVM
vector IR (engine/ops/kernels/dwise_fused_defs.py: ``row_3x3``, ``ring_cols``) give, byte for
byte, the windows' sums requantized by the flat path's ``dwise_requantize``: the whole output
memory (rows and columns around the computed ones, depth padding lanes), and the extremes,
with biases that wrap int32, every shift 0..31 and multipliers up to 2**31 - 1 (the
even/odd 64-bit products), strides 1 and 2, zapped and out-of-tensor columns, two batches."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from hexscope.engine.d32 import D32Geometry, D32Padding
from hexscope.engine.ops.conv.d32_input_reads import Zaps
from hexscope.engine.ops.kernels import dwise_fused
from hexscope.engine.ops.kernels.dwise_fused import (
    chunk_of,
    lane_terms,
    prepare_dwise_d32,
    window_lines,
)
from hexscope.engine.ops.kernels.dwise_requant import dwise_requantize
from hexscope.engine.tensor import Tensor
from support.d32_tensors import d32_with_random_padding


def _expected(x: Tensor, zaps: Zaps, rows: tuple[int, int], cols: tuple[int, int],
              w: np.ndarray, zf: int, steps: tuple[int, int], out: tuple[int, int],
              mem_shape: tuple[int, ...], before: tuple[int, int], bias: np.ndarray,
              recip: np.ndarray, shamt: int, zx: int, pad_code: int, fill: int
              ) -> tuple[np.ndarray, int, int]:
    """The output memory and extremes, gathered window by window in numpy."""
    base, zero = window_lines(x, zaps, rows, cols)        # (B, R, S), (B, R, S, C)
    raw = np.asarray(x.raw)
    nb, _, n_sl = base.shape
    (oh, ow), (sh, sw), (hb, wb) = out, steps, before
    d = w.shape[2]
    oy, ox = np.arange(oh), np.arange(ow)
    sums = np.zeros((nb, n_sl, oh, ow, 32), np.int64)
    wl = np.zeros((3, 3, n_sl * 32), np.int64)
    wl[:, :, :d] = w[:, :, :, 0].astype(np.int64) - zf
    lane = np.arange(32)
    for fy in range(3):
        for fx in range(3):
            r = oy * sh + fy                                           # (OH,)
            c = ox * sw + fx                                           # (OW,)
            at = (base[:, r, :].transpose(0, 2, 1)[:, :, :, None, None]
                  + c[None, None, None, :, None] * 32 + lane)          # (B, S, OH, OW, 32)
            vals = raw[at].astype(np.int64)
            zapped = zero[:, r][:, :, :, c].transpose(0, 2, 1, 3)      # (B, S, OH, OW)
            vals = np.where(zapped[..., None], zx, vals)
            sums += vals * wl[fy, fx].reshape(n_sl, 1, 1, 32)
    data = sums.transpose(0, 2, 3, 1, 4).reshape(-1, n_sl * 32)[:, :d].astype(np.int32)
    codes, lo, hi = dwise_requantize(data, bias.reshape(-1)[:d], recip.reshape(-1)[:d],
                                     shamt)
    memory = np.full(mem_shape, fill, np.uint8)
    lanes = np.full((nb * oh * ow, n_sl * 32), pad_code, np.uint8)
    lanes[:, :d] = codes
    memory[:, hb:hb + oh, :, wb:wb + ow, :] = lanes.reshape(nb, oh, ow, n_sl, 32) \
        .transpose(0, 1, 3, 2, 4)
    return memory, lo, hi


@settings(max_examples=40, deadline=None)
@given(nb=st.integers(1, 2), h=st.integers(1, 6), w=st.integers(1, 40), c=st.integers(1, 80),
       steps=st.tuples(st.integers(1, 2), st.integers(1, 2)),
       left=st.sampled_from([1, 3, 4, 5, 8]), more=st.integers(0, 1),
       reach=st.tuples(st.integers(0, 2), st.integers(0, 2), st.integers(0, 4),
                       st.integers(0, 4)),
       zaps=st.tuples(st.integers(0, 3), st.integers(0, 3), st.integers(0, 5),
                      st.integers(0, 5)),
       shamt=st.integers(0, 31), recip=st.sampled_from(["random", "top", "small", "zero"]),
       big=st.sampled_from([2**8, 2**20, 2**40]), out_left=st.sampled_from([0, 4]),
       seed=st.integers(0, 10**6))
@example(nb=1, h=3, w=9, c=40, steps=(1, 1), left=4, more=0, reach=(1, 1, 1, 1),
         zaps=(1, 1, 4, 1), shamt=31, recip="top", big=2**40, out_left=0, seed=1)
@example(nb=2, h=5, w=33, c=70, steps=(2, 2), left=5, more=1, reach=(1, 2, 1, 4),
         zaps=(0, 3, 2, 5), shamt=0, recip="random", big=2**20, out_left=4, seed=2)
def test_the_vector_row_and_ring_are_the_windows_sums_requantized(
        nb: int, h: int, w: int, c: int, steps: tuple[int, int], left: int, more: int,
        reach: tuple[int, int, int, int], zaps: tuple[int, int, int, int], shamt: int,
        recip: str, big: int, out_left: int, seed: int) -> None:
    if dwise_fused._kernel() is None:
        pytest.skip("numba does not load on this machine")
    rng = np.random.default_rng(seed)
    pad = D32Padding(4, 4, left, ((-(left + w)) & 3) + 4 * more, 0, (-c) & 31)
    x = d32_with_random_padding(rng, (nb, h, w, c), pad)
    top, bottom, lft, rgt = reach
    rows, cols = (-top, top + h + bottom), (-lft, lft + w + rgt)
    (sh, sw), oh, ow = steps, 0, 0
    oh, ow = (rows[1] - 3) // sh + 1, (cols[1] - 3) // sw + 1
    if oh < 1 or ow < 1:
        return
    out_pad = D32Padding(4, 4, out_left, (-(out_left + ow)) & 3, 0, (-c) & 31)
    mem_shape = D32Geometry((nb, oh, ow, c), out_pad).memory_shape
    filt = rng.integers(0, 256, (3, 3, c, 1), dtype=np.uint8)
    zf, zx = int(rng.integers(0, 256)), int(rng.integers(0, 256))
    run = prepare_dwise_d32(x, Zaps(*zaps), rows, cols, filt, zf, steps, (oh, ow), mem_shape,
                            (4, out_left))
    assert run is not None
    folded = rng.integers(-big, big, c)
    gemsumb = rng.integers(-2**20, 2**20, c)
    mult = {"random": rng.integers(0, 2**31, c), "top": np.full(c, 2**31 - 1),
            "small": rng.integers(0, 64, c), "zero": np.zeros(c, np.int64)}[recip]
    terms = lane_terms(folded, gemsumb, zx, mult, (c + 31) & ~31, chunk_of(ow))
    assert terms is not None
    pad_code, fill = int(rng.integers(0, 256)), int(rng.integers(0, 256))
    got, lo, hi = run(x.raw, *terms, shamt, zx, pad_code, fill)
    # the reference adds the bias buffer to the sums of x (w - zf), as the pass does
    bias = terms[0].reshape(terms[0].shape[0], -1, 32)[:, 0]
    rec = terms[1].reshape(terms[1].shape[0], -1, 32)[:, 0]
    want, want_lo, want_hi = _expected(x, Zaps(*zaps), rows, cols, filt, zf, steps, (oh, ow),
                                       mem_shape, (4, out_left), bias, rec, shamt, zx,
                                       pad_code, fill)
    assert np.array_equal(got, want)
    assert (lo, hi) == (want_lo, want_hi)
