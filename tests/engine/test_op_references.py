"""Every op declares its float reference (or why it has none), and each reference is checked
against a float result worked out by hand (issue 12)."""

from __future__ import annotations

import numpy as np
import pytest

from hexscope.engine.dtypes import DType
from hexscope.engine.nodes import Node, Padding
from hexscope.engine.ops.reference import SELF, NoReference, describe
from hexscope.engine.ops.registry import REGISTRY
from hexscope.engine.tensor import Tensor

# Ranges in which a code is its own real value (step 1) and one centred on zero.
CODE = (0.0, 255.0)


def f(*values: float) -> Tensor:
    return Tensor.from_array(np.array(values, np.float32).reshape(1, 1, 1, -1))


def word(value: float) -> Tensor:
    return Tensor.scalar(np.float32(value))


def i32(value: int) -> Tensor:
    return Tensor.scalar(np.int32(value), DType.INT32)


def u8(codes: list, shape: tuple[int, ...] | None = None) -> Tensor:
    a = np.array(codes, np.uint8)
    return Tensor.from_array(a.reshape(shape or (1, 1, 1, -1)), DType.QUINT8)


def q(codes: list, shape: tuple[int, ...] | None = None, rng: tuple = CODE) -> list[Tensor]:
    return [u8(codes, shape), word(rng[0]), word(rng[1])]


def shape(*dims: int) -> Tensor:
    return Tensor.shape_only(dims)


def run(op: str, inputs: list[Tensor], padding: Padding = Padding.NA, n_out: int = 3) -> list:
    from hexscope.engine.analysis.float_run import call_reference
    from hexscope.engine.nodes import OutputDef

    node = Node(1, op, outputs=tuple(OutputDef() for _ in range(n_out)), padding=padding)
    return call_reference(REGISTRY.get(op), node, inputs)


def value(v: object) -> np.ndarray:
    return np.asarray(v.array if isinstance(v, Tensor) else v, np.float64).reshape(-1)


X22 = [1, 2, 3, 4]                     # a 2x2 image, codes = reals in CODE

# op -> (inputs, padding, expected output 0 as reals, worked by hand)
CASES: dict[str, tuple[list[Tensor], Padding, list[float]]] = {
    # relu of codes 0, 255 in [-1, 1]: reals -1, 1 -> 0, 1
    "QuantizedRelu_8": (q([0, 255], rng=(-1, 1)), Padding.NA, [0.0, 1.0]),
    "QuantizedReluX_8": (q([0, 255], rng=(-1, 1)) + [word(0.5)], Padding.NA, [0.0, 0.5]),
    # qint32 2**30 and -2**30 in [-2, 2]: step 4 / 2**32, so 1 and -1
    "QuantizeDownAndShrinkRange_32to8": (
        [Tensor.from_array(np.array([2 ** 30, -2 ** 30], np.int32).reshape(1, 1, 1, 2),
                           DType.QINT32), word(-2), word(2)], Padding.NA, [1.0, -1.0]),
    # 2x2 image [[1,2],[3,4]], 2x2 filter [[1,0],[0,1]], SAME: pads after only, so
    # y = [[1+4, 2], [3, 4]]
    "QuantizedConv2d_8x8to32": (
        [u8(X22, (1, 2, 2, 1)), u8([1, 0, 0, 1], (2, 2, 1, 1)), word(0), word(255),
         word(0), word(255), shape(1, 1, 1, 1)], Padding.SAME, [5, 2, 3, 4]),
    # the conv above plus a bias of 2, clamped to the output range [0, 5.5]:
    # [5+2, 2+2, 3+2, 4+2] -> [5.5, 4, 5, 5.5]
    "Supernode_8x8p8to8": (
        [u8(X22, (1, 2, 2, 1)), u8([1, 0, 0, 1], (2, 2, 1, 1)), word(0), word(255),
         word(0), word(255), shape(1, 1, 1, 1), u8([2], (1, 1, 1, 1)), word(0), word(255),
         word(0), word(5.5)], Padding.SAME, [5.5, 4, 5, 5.5]),
    # [1, 2] x [[3], [4]] = 11
    "QuantizedMatMul_8x8to32": (
        [u8([1, 2]), u8([3, 4], (1, 1, 2, 1)), word(0), word(255), word(0), word(255)],
        Padding.NA, [11.0]),
    "QuantizedBiasAdd_8p8to32": (
        [u8([1, 2]), u8([10, 20]), word(0), word(255), word(0), word(255)], Padding.NA,
        [11.0, 22.0]),
    "QuantizedMaxPool_8": (q(X22, (1, 2, 2, 1)) + [shape(1, 2, 2, 1), shape(1, 1, 1, 1)],
                           Padding.VALID, [4.0]),
    # SAME, 2x2 window, stride 1: windows clipped to the image, padding not counted
    "QuantizedAvgPool_8": (q(X22, (1, 2, 2, 1)) + [shape(1, 2, 2, 1), shape(1, 1, 1, 1)],
                           Padding.SAME, [2.5, 3.0, 3.5, 4.0]),
    # [10] in [0, 255] joined with code 255 in [0, 2] (real 2) along depth
    "QuantizedConcat_8": ([i32(3), u8([10]), u8([255]), word(0), word(0), word(255),
                           word(2)], Padding.NA, [10.0, 2.0]),
    "Quantize": ([f(-0.25, 0.5), word(-1), word(1)], Padding.NA, [-0.25, 0.5]),
    "AutoQuantize": ([f(-0.25, 0.5)], Padding.NA, [-0.25, 0.5]),
    "Dequantize": (q([0, 51, 255], rng=(-1, 4)), Padding.NA, [-1.0, 0.0, 4.0]),
    "QuantizedAdd_8p8to8": ([u8([1, 2]), u8([10, 20]), word(0), word(255), word(0),
                             word(255), word(0), word(50)], Padding.NA, [11.0, 22.0]),
    "QuantizedMul_8x8to8": ([u8([3]), u8([255]), word(0), word(255), word(0), word(-2)],
                            Padding.NA, [-6.0]),
    "Gather_8": ([Tensor.from_array(np.array([2, 0], np.int32)), u8([5, 6, 7], (1, 1, 3, 1)),
                  word(0), word(255)], Padding.NA, [7.0, 5.0]),
    "AutoQuantize_d32": ([f(0.5, -1.0)], Padding.NA, [0.5, -1.0]),
    "QuantizeForTest_d32": ([f(0.5, -1.0)], Padding.NA, [0.5, -1.0]),
}


def d32(codes: list, dims: tuple[int, ...]) -> Tensor:
    return u8(codes, dims).to_d32()


D32_ARITH = {"QuantizedAdd_8p8to8_d32": [11.0, 22.0], "QuantizedSub_8p8to8_d32": [-9.0, -18.0],
             "QuantizedMul_8x8to8_d32": [10.0, 40.0]}
for _op, _expected in D32_ARITH.items():
    CASES[_op] = ([d32([1, 2], (1, 1, 2, 1)), d32([10, 20], (1, 1, 2, 1)), word(0), word(255),
                   word(0), word(255), word(-50), word(50)][:6 if "Mul" in _op else 8],
                  Padding.NA, _expected)
CASES["QuantizedConcat_8_d32"] = ([i32(3), d32([10], (1, 1, 1, 1)), d32([255], (1, 1, 1, 1)),
                                   word(0), word(0), word(255), word(2)], Padding.NA,
                                  [10.0, 2.0])
# Supernode_8x8p32to8: the same with a 32-bit bias of 2 steps (range +-2**31: 1 per step)
CASES["Supernode_8x8p32to8"] = (
    [u8(X22, (1, 2, 2, 1)), u8([1, 0, 0, 1], (2, 2, 1, 1)), word(0), word(255), word(0),
     word(255), shape(1, 1, 1, 1), i32(2), word(-2.0**31), word(2.0**31), word(0),
     word(5.5)], Padding.SAME, [5.5, 4, 5, 5.5])
# depthwise, multiplier 2: pixel 0 sees both taps, pixel 1 only the first (SAME, 1x2 filter)
CASES["QuantizedDepthwiseConv2d_8x8to32"] = (
    [u8([1, 2, 3, 4], (1, 1, 2, 2)), u8([1, 10, 3, 30, 2, 20, 4, 40], (1, 2, 2, 2)), word(0),
     word(255), word(0), word(255), shape(1, 1, 1, 1)], Padding.SAME,
    [7, 70, 22, 220, 3, 30, 12, 120])
# the same depthwise filter at multiplier 1 ([1, 3 | 2, 4]: pixel sums 7, 22, 3, 12), scaled
# per channel by [0.5, 1], plus a 32-bit bias [2, 3] (range +-2**31: one per step), clamped
# to [0, 20]: [3.5+2, 22+3 -> 20, 1.5+2, 12+3]
CASES["DepthwiseSupernode_8x8p32to8"] = (
    [u8([1, 2, 3, 4], (1, 1, 2, 2)), u8([1, 3, 2, 4], (1, 2, 2, 1)), word(0), word(255),
     word(0), word(255), shape(1, 1, 1, 1),
     Tensor.from_array(np.array([2, 3], np.int32).reshape(1, 1, 1, 2), DType.INT32),
     word(-2.0**31), word(2.0**31), word(0), word(20), f(0.5, 1.0)], Padding.SAME,
    [5.5, 20, 3.5, 15])
# 8-bit bias codes [130, 128] in [-128, 127] (step 1, zero code 128): [2, 0]
CASES["DepthwiseSupernode_8x8p8to8"] = (
    [u8([1, 2, 3, 4], (1, 1, 2, 2)), u8([1, 3, 2, 4], (1, 2, 2, 1)), word(0), word(255),
     word(0), word(255), shape(1, 1, 1, 1), u8([130, 128], (1, 1, 1, 2)), word(-128),
     word(127), word(-np.inf), word(np.inf)], Padding.SAME, [9, 22, 5, 12])
# issue 26's shape ops (codes = reals in CODE): the moved reals, worked by hand
I2 = Tensor.from_array(np.array([[1, 0]], np.int32))    # paddings: depth 1 before
CASES.update({
    "QuantizedPad_8": (q([1, 2], (1, 1, 2, 1)) + [I2], Padding.NA, [0, 1, 0, 2]),
    "MirrorPad_8": ([u8([1, 2, 3]), Tensor.from_array(np.array([[0, 0]] * 3 + [[1, 1]],
                     np.int32)), word(0), word(255)], Padding.MIRROR_REFLECT, [2, 1, 2, 3, 2]),
    "Transpose_8": ([u8(X22, (1, 1, 2, 2)), Tensor.from_array(np.array([1, 0], np.int32)),
                     word(0), word(255)], Padding.NA, [1, 3, 2, 4]),
    "QuantizedSplit_8": ([i32(3)] + q(X22), Padding.NA, [1, 2, 3, 4]),   # one part
    "QuantizedSlice_8": ([u8(X22), i32(1), i32(2), word(0), word(255)], Padding.NA, [2, 3]),
    "QuantizedStridedSlice_8": ([u8(X22), i32(0), i32(4), i32(2), i32(0), i32(0), i32(0),
                                 word(0), word(255)], Padding.NA, [1, 3]),
    "QuantizedPack_8": ([i32(0), u8([1, 2]), u8([3, 4]), word(0), word(0), word(255),
                         word(255)], Padding.NA, [1, 2, 3, 4]),
    "SpaceToDepth_8": (q(X22, (1, 2, 2, 1))[:1] + [i32(2), word(0), word(255)], Padding.NA,
                       [1, 2, 3, 4]),
    "DepthToSpace_8": (q(X22)[:1] + [i32(2), word(0), word(255)], Padding.NA, [1, 2, 3, 4]),
    # 2 columns to 4: source column trunc(i * 2/4) = 0, 0, 1, 1
    "ResizeNearestNeighbor_8": ([u8([1, 2], (1, 1, 2, 1)),
                                 Tensor.from_array(np.array([1, 4], np.int32)), word(0),
                                 word(255)], Padding.NA, [1, 1, 2, 2]),
    # positions 0, 0.5, 1, 1.5 between columns 0 and 100 (the last capped at column 1)
    "QuantizedResizeBilinear_8": ([u8([0, 100], (1, 1, 2, 1)),
                                   Tensor.from_array(np.array([1, 4], np.int32)), word(0),
                                   word(255)], Padding.NA, [0, 50, 100, 100]),
    "QuantizedPad_8_d32": ([d32([1, 2], (1, 1, 2, 1)), word(0), word(255),
                            Tensor.from_array(np.array([[1, 0], [0, 0]], np.int32))],
                           Padding.NA, [0, 1, 2]),
    "MirrorPad_8_d32": ([d32([1, 2, 3], (1, 1, 3, 1)),
                         Tensor.from_array(np.array([[0, 0], [0, 0], [1, 1], [0, 0]], np.int32)),
                         word(0), word(255)], Padding.MIRROR_REFLECT, [2, 1, 2, 3, 2]),
    "QuantizedSplit_8_d32": ([i32(3), d32(X22, (1, 1, 1, 4)), word(CODE[0]), word(CODE[1])],
                             Padding.NA, [1, 2, 3, 4]),                  # one part
    # one pixel of 128 codes spread over a 2x2 block of 32 channels each (NHWC order kept)
    "DepthToSpace_8_d32": ([d32(list(range(1, 129)), (1, 1, 1, 128)), i32(2), word(CODE[0]),
                           word(CODE[1])], Padding.NA,
                          list(range(1, 129))),
    # as the flat op's case, in fixed point: columns 0, 0.5, 1, 1 -> 0, 50, 100, 100
    "QuantizedResizeBilinear_8_d32": ([d32([0, 100], (1, 1, 2, 1)),
                                       Tensor.from_array(np.array([1, 4], np.int32)), word(0),
                                       word(255)], Padding.NA, [0, 50, 100, 100]),
    # as the flat op's case: e^0 and e^ln 3 share 1 into 1/4 and 3/4
    "QuantizedSoftmax_8_d32": ([d32([0, 255], (1, 1, 1, 2)), word(0), word(float(np.log(3)))],
                               Padding.NA, [0.25, 0.75]),
})
# issue 26 (ops26a): unary, activation, normalisation and reduction ops
CASES.update({
    "QuantizedNeg_8": (q([0, 255], rng=(-1, 3)), Padding.NA, [1.0, -3.0]),
    "QuantizedSqrt_8": (q([0, 255], rng=(0, 4)), Padding.NA, [0.0, 2.0]),
    "QuantizedTanh_8": (q([0, 255]), Padding.NA, [0.0, 1.0]),          # tanh(255) is 1 in f32
    "QuantizedSigmoid_8": (q([0, 255]), Padding.NA, [0.5, 1.0]),
    "ArgMax_8_d32": ([d32([1, 9, 9, 4], (1, 1, 1, 4)), i32(3), word(0), word(1)], Padding.NA,
                     [1.0]),
    "ArgMin_8_d32": ([d32([4, 1, 9, 1], (1, 1, 1, 4)), i32(-1), word(0), word(1)], Padding.NA,
                     [1.0]),
    "QuantizedNeg_8_d32": ([d32([0, 255], (1, 1, 2, 1)), word(-1), word(3)], Padding.NA,
                           [1.0, -3.0]),
    "QuantizedTanh_8_d32": ([d32([0, 255], (1, 1, 2, 1)), word(0), word(255)], Padding.NA,
                            [0.0, 1.0]),
    "QuantizedSigmoid_8_d32": ([d32([0, 255], (1, 1, 2, 1)), word(0), word(255)], Padding.NA,
                               [0.5, 1.0]),
    # reals [0, ln 3]: e^0 / (1 + 3) and 3 / 4
    "QuantizedSoftmax_8": (q([0, 255], rng=(0, float(np.log(3)))), Padding.NA, [0.25, 0.75]),
    "L2Normalize_8": (q([0, 255], rng=(-3, 4)), Padding.NA, [-0.6, 0.8]),
    "QuantizedMean_8": (q([1, 2, 3, 6]) + [i32(3)], Padding.NA, [3.0]),
    "ArgMax_8toInt32": ([u8([1, 9, 9, 4]), i32(3), word(0), word(1)], Padding.NA, [1.0]),
    "QuantizedMinimum_8": ([u8([10, 200]), u8([20, 100]), word(0), word(255), word(0),
                            word(255)], Padding.NA, [10.0, 100.0]),
    "QuantizedMaximum_8": ([u8([10, 200]), u8([20, 100]), word(0), word(255), word(0),
                            word(255)], Padding.NA, [20.0, 200.0]),
    "QuantizedSub_8p8to8": ([u8([10, 200]), u8([20, 100]), word(0), word(255), word(0),
                             word(255)], Padding.NA, [-10.0, 100.0]),
    "ArgMin_8": ([u8([4, 1, 9, 1]), i32(-1), word(0), word(1)], Padding.NA, [1.0]),
    # a float value [1..6] reshaped to 3x2 keeps its values (the default output's declared
    # size is one byte: the reference is not held to it)
    "Reshape": ([f(1, 2, 3, 4, 5, 6), Tensor.from_array(np.array([3, 2], np.int32).reshape(
        1, 1, 1, 2), DType.INT32)], Padding.NA, [1, 2, 3, 4, 5, 6]),
})
SHARED = {"QuantizedConv2d_8x8to32_ref": "QuantizedConv2d_8x8to32",
          "QuantizedDepthwiseConv2d_8x8to32_ref": "QuantizedDepthwiseConv2d_8x8to32",
          "Supernode_8x8p32to8_ref": "Supernode_8x8p32to8",
          "Supernode_8x8p8to8_ref": "Supernode_8x8p8to8",
          "QuantizedMatMul_8x8to32_ref": "QuantizedMatMul_8x8to32",
          "QuantizedBiasAdd_8p8to32_ref": "QuantizedBiasAdd_8p8to32",
          "Dequantize_ref": "Dequantize", "AutoQuantize_d32_ref": "AutoQuantize_d32"}
# Byte movers: the logical tensor itself, codes unchanged.
MOVERS = {"Convert_to_d32": lambda: [u8([7, 9], (1, 1, 2, 1))],
          "Convert_from_d32": lambda: [d32([7, 9], (1, 1, 2, 1))],
          "FillPadding_8_d32": lambda: [d32([7, 9], (1, 1, 2, 1)), i32(1), i32(1)]}


def q32(codes: list) -> Tensor:
    return Tensor.from_array(np.array(codes, np.int32).reshape(1, 1, 1, -1), DType.QINT32)


def i32s(values: list, dims: tuple[int, ...]) -> Tensor:
    return Tensor.from_array(np.array(values, np.int32).reshape(dims), DType.INT32)


# issue 25 (fc25): qint32 2**30 in [-2, 2] is 1.0, 2**29 is 0.5
CASES.update({
    "QuantizedBiasAdd_32p32to32": ([q32([2**30]), q32([2**29]), word(-2), word(2), word(-2),
                                    word(2)], Padding.NA, [1.5]),
    "Requantize_32to8": ([q32([2**30]), word(-2), word(2), word(0), word(0.5)], Padding.NA,
                         [0.5]),          # clamped to the requested range
    # RequantizationRange_32 (issue 29): codes -2**29 and 2**30 in [-2, 2]: 0 is in range
    "RequantizationRange_32": ([q32([-2**29, 2**30]), word(-2), word(2)], Padding.NA, [-0.5]),
    "Requantize_8to8": (q([0, 255], rng=(-1, 1)) + [word(-0.5), word(0.5)], Padding.NA,
                        [-0.5, 0.5]),
    # [1, 2] x [[3], [4]] + 0 = 11
    "SuperFC_8x8p32to8": ([u8([1, 2]), u8([3, 4], (1, 1, 2, 1)), word(0), word(255), word(0),
                           word(255), q32([0]), word(-1), word(1), word(0), word(255)],
                          Padding.NA, [11.0]),
    "QuantizedMul_8x8to32": ([u8([3]), u8([255]), word(0), word(255), word(0), word(-2)],
                             Padding.NA, [-6.0]),
    "SpaceToBatchND_8": (q([1, 2, 3, 4], (1, 2, 2, 1))[:1] + [i32s([2, 2], (1, 1, 1, 2)),
                         i32s([0, 0, 0, 0], (1, 1, 2, 2)), word(0), word(255)], Padding.NA,
                         [1.0, 2.0, 3.0, 4.0]),
    "BatchToSpaceND_8": ([u8([1, 2, 3, 4], (4, 1, 1, 1)), i32s([2, 2], (1, 1, 1, 2)),
                          i32s([0, 0, 0, 0], (1, 1, 2, 2)), word(0), word(255)], Padding.NA,
                         [1.0, 2.0, 3.0, 4.0]),
    "Quantized_CastInt8ToUInt8": ([Tensor.from_array(np.array([-128, 127], np.int8).reshape(
        1, 1, 1, 2), DType.QINT8), word(-1), word(1)], Padding.NA, [-1.0, 1.0]),
    "Quantized_CastUInt8ToInt8": (q([0, 255], rng=(-1, 1)), Padding.NA, [-1.0, 1.0]),
    # reals -3 and 3: hard swish 0 and 3, inside the output range [-1, 4]
    "QuantizedHardSwish_8": (q([0, 255], rng=(-3, 3)) + [word(-1), word(4)], Padding.NA,
                             [0.0, 3.0]),
})
SHARED.update({"QuantizedSoftmax_8_d32_ref": "QuantizedSoftmax_8_d32",
               "QuantizedSoftmax_8_ref": "QuantizedSoftmax_8",
               "QuantizedBiasAdd_32p32to32_ref": "QuantizedBiasAdd_32p32to32",
               "Requantize_32to8_ref": "Requantize_32to8",
               "RequantizationRange_32_ref": "RequantizationRange_32",
               "SuperFC_8x8p32to8_ref": "SuperFC_8x8p32to8",
               "QuantizedMul_8x8to32_ref": "QuantizedMul_8x8to32"})
# issue 25 (conv25): the d32 Supernodes have their flat forms' meaning (the reference reads
# the logical values, whatever the layout)
SHARED.update({f"{f}_d32": f for f in ("Supernode_8x8p8to8", "Supernode_8x8p32to8",
                                        "DepthwiseSupernode_8x8p8to8",
                                        "DepthwiseSupernode_8x8p32to8")})
SHARED.update({f"Input{f}_outd32": f for f in ("Supernode_8x8p8to8", "Supernode_8x8p32to8")})
SHARED["Requantize_8to8_d32"] = "Requantize_8to8"        # d32req25


@pytest.mark.parametrize("spec", REGISTRY.specs(), ids=lambda s: s.name)
def test_every_op_declares_a_reference_or_why_not(spec):
    ref = spec.reference
    assert ref is not None, f"{spec.name}: declare reference=... or NoReference('why')"
    if isinstance(ref, NoReference):
        assert len(ref.reason) > 10
    elif ref is SELF:
        assert spec.category.name in ("FLOAT", "IO", "PLUMBING", "LOOKUP") or \
            spec.name in ("Flatten", "QuantizedFlatten"), spec.name
    else:
        assert spec.name in CASES or spec.name in SHARED or spec.name in MOVERS, \
            f"{spec.name}: add a hand-computed case"
    assert describe(ref).startswith("Float reference")


@pytest.mark.parametrize("name", sorted(CASES) + sorted(SHARED))
def test_reference_matches_hand_computed_floats(name):
    inputs, padding, expected = CASES[SHARED.get(name, name)]
    out = run(name, inputs, padding, n_out=4 if name == "QuantizeForTest_d32" else 3)
    np.testing.assert_allclose(value(out[0]), expected, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("name", sorted(MOVERS))
def test_byte_movers_keep_the_logical_codes(name):
    inputs = MOVERS[name]()
    (y,) = run(name, inputs, n_out=1)
    assert isinstance(y, Tensor)
    np.testing.assert_array_equal(y.array.reshape(-1), [7, 9])


@pytest.mark.parametrize("name", ["Check", "Close_f", "Close_d32", "PPrint_8", "Variable",
                                  "Assign"])
def test_ops_without_float_meaning_say_why(name):
    from hexscope.engine.analysis.float_run import NoValue

    with pytest.raises(NoValue, match="no float meaning"):
        run(name, [])


def test_reshape_reference_ignores_the_declared_size_of_the_codes():
    """A Reshape's output is declared for its uint8 codes (64 bytes, 128 with the device's
    rounding); its float value has 4 bytes per element (256), which the kernel's "out too
    small" check refused (found on the wake word's first RESHAPE, 480 bytes against 128)."""
    from hexscope.engine.analysis.float_run import call_reference
    from hexscope.engine.nodes import OutputDef

    node = Node(1, "Reshape", outputs=(OutputDef(max_sizes=(1, 1, 8, 8)),))
    new_shape = Tensor.from_array(np.array([8, 8], np.int32).reshape(1, 1, 1, 2), DType.INT32)
    (y,) = call_reference(REGISTRY.get("Reshape"), node, [f(*range(64)), new_shape])
    assert y.shape == (1, 1, 8, 8) and y.dtype is DType.FLOAT32
    np.testing.assert_array_equal(value(y), np.arange(64))


def test_float_ops_are_their_own_reference():
    (y,) = run("Tanh_f", [f(0.0, 1.0)], n_out=1)
    np.testing.assert_allclose(value(y), [0.0, np.tanh(1.0)], rtol=1e-6)


def test_quantized_ranges_of_a_reference_are_its_own_values():
    y, mn, mx = run("QuantizedRelu_8", q([0, 128, 255], rng=(-1, 1)))
    assert float(mn.reshape(-1)[0]) == 0.0 and float(mx.reshape(-1)[0]) == 1.0



@pytest.mark.parametrize("op, bound", [("QuantizedMaxPool_8", 0.0), ("QuantizedAvgPool_8", 0.5)])
@pytest.mark.parametrize("padding", [Padding.SAME, Padding.VALID])
@pytest.mark.parametrize("geometry", [(3, 3, 1, 1), (3, 3, 2, 2), (2, 3, 2, 1)])
def test_pool_references_agree_with_the_kernels_on_codes(op, bound, padding, geometry):
    # In a step-1 range codes are reals: the max is exact, the mean only rounds (<= 0.5)
    from hexscope.engine.ops.context import KernelContext

    fh, fw, sh, sw = geometry
    x = np.random.default_rng(sum(geometry)).integers(0, 256, (1, 9, 8, 5)).astype(np.uint8)
    inputs = q(list(x.reshape(-1)), x.shape) + [shape(1, fh, fw, 1), shape(1, sh, sw, 1)]
    ref = value(run(op, inputs, padding)[0])
    got = REGISTRY.get(op).kernel(KernelContext(1, op, padding=padding), *inputs)[0]
    got = value(got)
    assert ref.shape == got.shape and ref.size > 0
    assert np.abs(ref - got).max() <= bound
# avgpool26: the d32 average pools mean what the flat one means (the reference reads the
# logical values, whatever the layout)
SHARED.update({"QuantizedAvgPool_8_d32": "QuantizedAvgPool_8",
               "QuantizedAvgPool_8_d32_ref": "QuantizedAvgPool_8"})
