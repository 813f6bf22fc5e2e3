"""The integer GEMM kernel (engine/ops/kernels/igemm.py): int16 x int16 into wrapping int32.

The convolution's and matmul's sums are int32 and wrap modulo 2**32 (quantized-ops spec
§1.3, §2, §3). The reference here is numpy's int64 product, wrapped: an independent
computation. ``vpmaddwd`` is exact modulo 2**32 for every pair of int16, so the property
tests draw from the whole int16 range, not only from the codes a convolution makes.
"""

from __future__ import annotations

import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hexscope.engine.ops.kernels import gemm, igemm

pytestmark = pytest.mark.skipif(not igemm.available(),
                                reason="the integer GEMM kernel does not run on this machine")



def wrapped(values: np.ndarray) -> np.ndarray:
    return ((values.astype(np.int64) + 2**31) % 2**32 - 2**31).astype(np.int32)


def reference(lhs: np.ndarray, rhs: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    return wrapped(lhs.astype(np.int64) @ rhs.astype(np.int64) + offsets)


def run(lhs: np.ndarray, rhs: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """The kernel's result; its (min, max) must be the result's own."""
    out = np.full((lhs.shape[0], rhs.shape[1]), 0x5A5A5A5A, np.int32)   # never read
    bounds = igemm.gemm_into(out, lhs, igemm.PackedRhs.pack(rhs), offsets)
    assert bounds == ((int(out.min()), int(out.max())) if out.size else None)
    return out


@settings(max_examples=150, deadline=None)
@given(m=st.integers(0, 20), k=st.integers(0, 70), n=st.integers(0, 40),
       seed=st.integers(0, 2**32 - 1), lo=st.sampled_from([-128, -32768]))
def test_equals_the_int64_product_for_every_shape(m, k, n, seed, lo) -> None:
    """Row counts around the 6-row tile, odd and even K (0 included), N around the 16-column
    block: every remainder path."""
    rng = np.random.default_rng(seed)
    lhs = rng.integers(lo, -lo, (m, k), endpoint=True).astype(np.int16)
    rhs = rng.integers(lo, -lo, (k, n), endpoint=True).astype(np.int16)
    offsets = rng.integers(-2**31, 2**31, n).astype(np.int32)
    assert np.array_equal(run(lhs, rhs, offsets), reference(lhs, rhs, offsets))


def test_hand_vector_with_an_odd_k() -> None:
    """[1 2 3] . [[1 -1] [10 -10] [100 -100]] = [321 -321], plus offsets [5 -5]."""
    lhs = np.array([[1, 2, 3]], np.int16)
    rhs = np.array([[1, -1], [10, -10], [100, -100]], np.int16)
    assert run(lhs, rhs, np.array([5, -5], np.int32)).tolist() == [[326, -326]]


@pytest.mark.parametrize(("x", "w"), [(-128, -255), (-128, 255), (127, 255), (-32768, -32768)])
def test_the_largest_sums_wrap_as_the_device_accumulator(x, w) -> None:
    """K = 70001 (odd) with every product at its extreme: the true sums pass 2**31 (and
    -2**31), and the result is the sum modulo 2**32 (§1.3)."""
    k = 70001
    lhs = np.full((7, k), x, np.int16)
    rhs = np.full((k, 17), w, np.int16)
    exact = k * x * w
    assert abs(exact) > 2**31
    got = run(lhs, rhs, np.zeros(17, np.int32))
    assert (got == wrapped(np.array(exact))).all()


def test_row_chunks_and_strided_operands(monkeypatch) -> None:
    """Chunks of 6 rows (the smallest), a left-hand side and an output that are views with
    row strides of their own: the result lands in the view and nowhere else."""
    monkeypatch.setattr(igemm, "CHUNK_BYTES", 1)
    rng = np.random.default_rng(4)
    base = rng.integers(-128, 128, (31, 51)).astype(np.int16)
    lhs = base[::2, 3:40]                             # (16, 37), an odd row stride: 102 B
    rhs = rng.integers(-255, 256, (37, 35)).astype(np.int16)
    offsets = rng.integers(-1000, 1000, 70).astype(np.int32)[::2]      # strided too
    big = np.zeros((16, 50), np.int32)
    bounds = igemm.gemm_into(big[:, 7:42], lhs, igemm.PackedRhs.pack(rhs), offsets)
    expect = reference(lhs, rhs, offsets)
    assert np.array_equal(big[:, 7:42], expect)
    assert bounds == (expect.min(), expect.max())
    assert not big[:, :7].any() and not big[:, 42:].any()


def test_a_column_strided_output_is_written_through_a_copy() -> None:
    rng = np.random.default_rng(5)
    lhs = rng.integers(-128, 128, (9, 20)).astype(np.int16)
    rhs = rng.integers(-255, 256, (20, 8)).astype(np.int16)
    big = np.zeros((9, 16), np.int32)
    igemm.gemm_into(big[:, ::2], lhs, igemm.PackedRhs.pack(rhs), np.zeros(8, np.int32))
    assert np.array_equal(big[:, ::2], reference(lhs, rhs, np.zeros(8, np.int64)))
    assert not big[:, 1::2].any()


def test_bounds_skip_the_padding_columns_of_a_partial_block() -> None:
    """N = 17: the last block's 15 padding columns compute 0, which lies outside the real
    results (all >= 1000 here), so it must not reach the min."""
    lhs = np.ones((7, 3), np.int16)
    rhs = np.ones((3, 17), np.int16)
    got = run(lhs, rhs, np.full(17, 1000, np.int32))
    assert (got == 1003).all()


def test_mismatched_operands_are_refused() -> None:
    packed = igemm.PackedRhs.pack(np.zeros((4, 3), np.int16))
    with pytest.raises(ValueError, match="shapes differ"):
        igemm.gemm_into(np.empty((2, 3), np.int32), np.zeros((2, 5), np.int16), packed,
                         np.zeros(3, np.int32))
    with pytest.raises(ValueError, match="operands must be"):
        igemm.gemm_into(np.empty((2, 3), np.int32), np.zeros((2, 4), np.float32), packed,
                         np.zeros(3, np.int32))


def test_packing_holds_pairs_of_k_in_blocks_of_16_columns() -> None:
    """Block j, pair p, column c, half h holds rhs[2p + h, 16j + c]; zero beyond K and N."""
    rhs = np.arange(5 * 20, dtype=np.int16).reshape(5, 20)
    blocks = igemm.PackedRhs.pack(rhs).blocks
    assert blocks.shape == (2, 3, 16, 2)
    assert blocks[1, 2, 3, 0] == rhs[4, 19] and blocks[1, 2, 3, 1] == 0
    assert blocks[0, 1, 5, 1] == rhs[3, 5]
    assert not blocks[1, :, 4:].any()


def test_the_environment_switches_the_engine_to_float32(monkeypatch) -> None:
    """``HEXSCOPE_GEMM=float`` turns the kernel off: the patches are float32 again;
    ``int16`` keeps the AVX2 kernel where VNNI would run."""
    assert gemm.patch_dtype() is (np.int8 if igemm.available8() else np.int16)
    monkeypatch.setenv("HEXSCOPE_GEMM", "int16")
    assert gemm.patch_dtype() is np.int16 and not igemm.available8()
    monkeypatch.setenv("HEXSCOPE_GEMM", "float")
    assert not igemm.available()
    assert gemm.patch_dtype() is np.float32
    assert gemm.center(np.array([0, 255], np.uint8)).dtype == np.float32


@pytest.mark.parametrize("layout", ["reversed", "fortran", "broadcast"])
def test_any_numpy_layout_of_the_operands(layout) -> None:
    """Rows read backwards (a negative stride), column-major operands and a broadcast row
    (stride 0): the kernel takes the strides it can and a copy of the rest."""
    rng = np.random.default_rng(6)
    base = rng.integers(-32768, 32768, (13, 21)).astype(np.int16)
    lhs = {"reversed": base[::-1], "fortran": np.asfortranarray(base),
           "broadcast": np.broadcast_to(base[:1], base.shape)}[layout]
    rhs = rng.integers(-32768, 32768, (21, 19)).astype(np.int16)
    offsets = rng.integers(-2**31, 2**31, 19).astype(np.int32)
    out = np.zeros((13, 19), np.int32, order="F")[::-1]
    igemm.gemm_into(out, lhs, igemm.PackedRhs.pack(rhs), offsets)
    assert np.array_equal(out, reference(lhs, rhs, offsets))


def test_without_llvmlite_the_engine_falls_back_to_float32(monkeypatch) -> None:
    """An llvmlite that cannot be imported (sys.modules entry None): no kernel, float32
    patches, and a convolution through the engine still gives the integer sums."""
    from hexscope.engine.nodes import Padding
    from hexscope.engine.ops.context import KernelContext
    from hexscope.engine.ops.conv.conv2d import quantized_conv2d_8x8to32
    from hexscope.engine.tensor import Tensor
    from support.ref_conv import ref_conv, ref_zero

    monkeypatch.setitem(sys.modules, "llvmlite.binding", None)
    igemm._kernel.cache_clear()
    try:
        assert not igemm.available()
        assert gemm.patch_dtype() is np.float32
        with pytest.raises(RuntimeError, match="not available"):
            igemm.gemm_into(np.empty((1, 1), np.int32), np.zeros((1, 1), np.int16),
                             igemm.PackedRhs.pack(np.zeros((1, 1), np.int16)),
                             np.zeros(1, np.int32))
        rng = np.random.default_rng(2)
        x = rng.integers(0, 256, (1, 6, 5, 3), dtype=np.uint8)
        w = rng.integers(0, 256, (3, 3, 3, 4), dtype=np.uint8)
        ctx = KernelContext(0x10, "QuantizedConv2d_8x8to32", padding=Padding.SAME)
        y, _, _ = quantized_conv2d_8x8to32(
            ctx, Tensor.from_array(x), Tensor.from_array(w), Tensor.scalar(-1.0),
            Tensor.scalar(3.0), Tensor.scalar(-1.0), Tensor.scalar(1.0078740),
            Tensor.shape_only((1, 1, 1, 1)))
        expect = ref_conv(x, w, ref_zero(-1.0, 3.0), ref_zero(-1.0, 1.0078740), 1, 1,
                          Padding.SAME)
        assert np.array_equal(y.array, expect)
    finally:
        monkeypatch.undo()
        igemm._kernel.cache_clear()
    assert igemm.available()




@pytest.mark.parametrize("n", [32, 35])
def test_a_read_only_output_is_refused_and_left_untouched(n) -> None:
    """The kernel writes by address: a read-only ``out`` (a frozen tensor, whose noted span
    and readers trust it never changes) must be refused before any write, with whole blocks
    only (32) or a partial one too (35)."""
    rng = np.random.default_rng(7)
    lhs = rng.integers(-128, 128, (7, 5)).astype(np.int16)
    packed = igemm.PackedRhs.pack(rng.integers(-255, 256, (5, n)).astype(np.int16))
    out = np.zeros((7, n), np.int32)
    out.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        igemm.gemm_into(out, lhs, packed, np.ones(n, np.int32))
    assert not out.any()


@pytest.mark.parametrize("operand", ["offsets", "lhs"])
def test_an_output_overlapping_an_operand_gets_the_product_of_the_operands(operand) -> None:
    """``out = lhs @ rhs + offsets`` with the operands as they were before the call, even
    when ``out`` shares their memory (the kernel's pointers are declared noalias, and it
    stores row tiles while later ones still read the operands)."""
    rng = np.random.default_rng(8)
    m, k, n = 13, 7, 35
    rhs = rng.integers(-255, 256, (k, n)).astype(np.int16)
    buf = np.zeros(m * n, np.int32)
    out = buf.reshape(m, n)
    if operand == "offsets":
        out[0] = rng.integers(-1000, 1000, n)
        lhs, offsets = rng.integers(-128, 128, (m, k)).astype(np.int16), out[0]
    else:
        lhs = buf.view(np.int16)[:m * k].reshape(m, k)
        lhs[...] = rng.integers(-128, 128, (m, k))
        offsets = rng.integers(-1000, 1000, n).astype(np.int32)
    expect = reference(lhs.copy(), rhs, offsets.copy())
    bounds = igemm.gemm_into(out, lhs, igemm.PackedRhs.pack(rhs), offsets)
    assert np.array_equal(out, expect)
    assert bounds == (expect.min(), expect.max())


@pytest.mark.parametrize("bad", ["k", "n", "strided", "dtype"])
def test_packed_blocks_that_do_not_match_k_and_n_are_refused(bad) -> None:
    """The kernel reads ceil(K/2) pairs of every block by address: blocks of another shape,
    layout or type would be read out of bounds, so PackedRhs refuses them."""
    blocks = igemm.PackedRhs.pack(np.ones((6, 20), np.int16)).blocks     # (2, 3, 16, 2)
    k, n = {"k": (100, 20), "n": (6, 40)}.get(bad, (6, 20))
    if bad == "strided":
        blocks = np.zeros((2, 6, 16, 2), np.int16)[:, ::2]
    elif bad == "dtype":
        blocks = blocks.astype(np.int32)
    with pytest.raises(ValueError, match="packed blocks"):
        igemm.PackedRhs(blocks, k, n)


def test_concurrent_first_calls_compile_the_kernel_once(monkeypatch, tmp_path) -> None:
    """Two sessions may run at once (the GUI's worker threads): when they ask for the kernel
    together, one compiles it and the others wait for that one, not compile their own."""
    import threading
    import time

    real, compiled = igemm._ir_module, []

    def slow_ir(triple, *rest):
        compiled.append(triple)
        time.sleep(0.05)                # widen the window in which the others ask too
        return real(triple, *rest)

    monkeypatch.setattr(igemm, "_ir_module", slow_ir)
    monkeypatch.setenv("HEXSCOPE_CACHE_DIR", str(tmp_path))     # nothing cached: compiled
    igemm._kernel.cache_clear()
    barrier, got = threading.Barrier(4), []

    def ask() -> None:
        barrier.wait()
        got.append(igemm._kernel())

    try:
        threads = [threading.Thread(target=ask) for _ in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        monkeypatch.undo()
    assert len(compiled) == 1
    assert len(got) == 4 and all(kernel is got[0] for kernel in got) and got[0] is not None
    assert igemm._kernel() is got[0]


def test_the_integer_path_makes_none_of_the_float32_forms_of_a_filter() -> None:
    """Memory and prepare time: a filter run by the integer kernel keeps only its packed
    form (int16, or the codes for VNNI); the float32 copy and the float path's K chunks are
    never made."""
    rhs = gemm.Rhs.from_codes(np.full((300, 20), 255, np.uint8), 0)
    x = gemm.center(np.zeros((5, 300), np.uint8))
    got = gemm.offset_gemm(x, rhs, gemm.CENTER, 0)
    assert (got == 0).all()
    assert ("packed8" if igemm.available8() else "packed") in rhs.__dict__
    assert "mat" not in rhs.__dict__ and "edges" not in rhs.__dict__


vnni = pytest.mark.skipif(not igemm.available8(),
                          reason="the VNNI kernel does not run on this machine")


@vnni
@settings(max_examples=150, deadline=None)
@given(m=st.integers(0, 20), k=st.integers(0, 70), n=st.integers(0, 40),
       seed=st.integers(0, 2**32 - 1), term=st.booleans())
def test_vnni_equals_the_int64_product_for_every_shape(m, k, n, seed, term) -> None:
    """int8 by uint8 (vpdpbusd: unsigned filter codes, signed centred data), rows around
    the 6-row tile, K around the 4-code word (the tail of 1 to 3 codes read one by one),
    N around the 16-column block, with and without the per-row term, wrapping as §1.3's
    accumulator does."""
    rng = np.random.default_rng(seed)
    lhs = rng.integers(-128, 128, (m, k)).astype(np.int8)
    rhs = rng.integers(0, 256, (k, n)).astype(np.uint8)
    offsets = rng.integers(-2**31, 2**31, n).astype(np.int32)
    rows = rng.integers(-2**31, 2**31, m).astype(np.int32) if term else None
    out = np.full((m, n), 0x5A5A5A5A, np.int32)
    bounds = igemm.gemm_into(out, lhs, igemm.PackedRhs.pack8(rhs), offsets, rows)
    want = lhs.astype(np.int64) @ rhs.astype(np.int64) + offsets
    if term:
        want += rows[:, None]
    assert np.array_equal(out, wrapped(want))
    assert bounds == ((int(out.min()), int(out.max())) if out.size else None)


@vnni
def test_vnni_and_int16_give_the_same_convolution_sums(monkeypatch) -> None:
    """offset_gemm by both kernels, the zero codes anywhere in 0..255: the VNNI path's row
    term (b - zero) * rowsum replaces the int16 path's centred filter, to the same bits."""
    rng = np.random.default_rng(11)
    for zero, a, b in ((0, 128, -7), (255, -3, 0), (128, 0, 0), (37, 91, 200)):
        codes = rng.integers(0, 256, (77, 45)).astype(np.uint8)
        rhs = gemm.Rhs.from_codes(codes, zero)
        x = rng.integers(0, 256, (31, 77)).astype(np.uint8)
        got = gemm.offset_gemm(gemm.center(x, np.int8), rhs, a, b)
        ref = gemm.offset_gemm(gemm.center(x, np.int16), rhs, a, b)
        want = wrapped((x.astype(np.int64) - 128 + a) @ (codes.astype(np.int64) - zero + b))
        assert np.array_equal(got, want) and np.array_equal(ref, want)


@vnni
def test_vnni_sums_the_last_one_to_three_codes_of_a_row(monkeypatch) -> None:
    """K = 4q + 1..3: the last word of a row is built from its 1 to 3 codes (read one by
    one, so nothing past the row is read) and zeros."""
    rng = np.random.default_rng(12)
    for k in (1, 2, 3, 5, 6, 7, 37):
        lhs = rng.integers(-128, 128, (9, k)).astype(np.int8)
        rhs = rng.integers(0, 256, (k, 16)).astype(np.uint8)
        offsets = np.zeros(16, np.int32)
        out = np.empty((9, 16), np.int32)
        igemm.gemm_into(out, lhs, igemm.PackedRhs.pack8(rhs), offsets)
        assert np.array_equal(out, wrapped(lhs.astype(np.int64) @ rhs.astype(np.int64)))
