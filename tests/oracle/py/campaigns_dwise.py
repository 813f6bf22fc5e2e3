"""The depthwise Supernode's integer arithmetic against nnlib's C model of its HVX kernels
(``dwconv2dbbb_MxN_cn``, hexagon/asm_ref/dwconv2dbbb_c.c, called directly with ctypes).

    PYTHONPATH=. python campaigns_dwise.py run -n 300 --seed 1
    PYTHONPATH=. python campaigns_dwise.py export OUT.json -n 300 --seed 1

For each case: a d32 input buffer padded with the data's zero code (as the op's zap does), the
filter rearranged as ``dwise_rearrange_weights`` does (width rounded to 4 with zeros, padded
channels at the filter's zero code), a bias buffer, one multiplier and shift; the C model's
codes and its min/max against Hexscope's (QuantizedDepthwiseConv2d_8x8to32's sums, plus
zx x gemsumb, through kernels/dwise_requant.py). The float set-up is not in the C model.
"""
from __future__ import annotations

import argparse
import ctypes as C
import json
import os
import sys

import numpy as np

from hexscope.engine.nodes import Padding
from hexscope.engine.ops.conv.conv2d import output_window
from hexscope.engine.ops.kernels.depthwise import depthwise_sums
from hexscope.engine.ops.kernels.dwise_requant import dwise_requantize

_P = C.c_void_p
_I = C.c_int


def _lib() -> C.CDLL:
    path = os.environ.get("ORACLE_LIB", os.path.join(os.environ.get(
        "ORACLE_BUILD", os.path.expanduser("~/.cache/nnlib-oracle")), "liboracle.so"))
    lib = C.CDLL(path)
    lib.dwconv2dbbb_MxN_cn.argtypes = [_P, _P, _P] + [_I] * 10 + [_P, _P] + [_I] * 4
    lib.dwconv2dbbb_MxN_cn.restype = None
    return lib


def make_case(rng: np.random.Generator, i: int) -> dict:
    """Random and edge cases: depths 1..35 (not multiples of 32 too), widths 3/5/7, heights
    2..7, strides 1-3 x 1-2, SAME and VALID, zero codes 0..255 and the edges, multipliers
    near 2**31 and tiny, shifts 0..3, biases small to large."""
    c = int(rng.choice([1, 3, 32, 33, 35]) if i % 5 == 0 else rng.integers(1, 9))
    fw = int(rng.choice([3, 5, 7]))
    fh = int(rng.integers(2, 8)) if i % 4 == 0 else int(rng.choice([2, 3, 3, 5]))
    sh, sw = int(rng.integers(1, 4)), int(rng.integers(1, 3))
    h, w = int(rng.integers(fh, fh + 4)), int(rng.integers(fw, fw + 4))
    padding = "SAME" if i % 2 else "VALID"
    zx = int(rng.choice([0, 255, 128, int(rng.integers(0, 256))]))
    zf = int(rng.choice([0, 255, 127, int(rng.integers(0, 256))]))
    shamt = int(rng.choice([0, 0, 1, 2, 3]))
    recip = int(rng.choice([0x7FFFFFFF, 2**30, int(rng.integers(1, 2**31)),
                            int(rng.integers(1, 2**20))]))
    scale = [2**8, 2**16, 2**22][i % 3]
    x = rng.integers(0, 256, (1, h, w, c), dtype=np.uint8)
    if i % 7 == 0:
        x[...] = zx if i % 2 else 255
    case = {"x": x, "w": rng.integers(0, 256, (fh, fw, c, 1), dtype=np.uint8),
            "bias": rng.integers(-scale, scale, c).astype(np.int32),
            "zx": zx, "zf": zf, "recip": recip, "shamt": shamt, "stride": [sh, sw],
            "padding": padding}
    if i % 4 != 3:     # most cases as the op sets them up: outputs spread over the codes
        t = _totals(case)
        if i % 2 and t.min() < 0:
            case["bias"] = (case["bias"] - t.min()).astype(np.int32)
            t = _totals(case)
        top = max(int(np.abs(t).max()), 1) << shamt
        rec = 2**31 * 255 / top * float(rng.uniform(0.3, 1.3))
        case["recip"] = int(min(max(rec, 1), 2**31 - 1))
    return case


def _totals(case: dict) -> np.ndarray:
    """sums + bias + zx x gemsumb (int64): the value the multiplier scales."""
    x, w, zx, zf = case["x"], case["w"], case["zx"], case["zf"]
    (_, h, wd, c), (fh, fw) = x.shape, w.shape[:2]
    sh, sw = case["stride"]
    pad = Padding[case["padding"]]
    rows, cols = output_window(h, fh, sh, pad), output_window(wd, fw, sw, pad)
    sums = depthwise_sums(x, w, zx, zf, sh, sw, rows.before, cols.before, rows.out, cols.out)
    return sums.astype(np.int64) + np.asarray(case["bias"], np.int64)


def c_model(lib: C.CDLL, case: dict) -> tuple[np.ndarray, int, int]:
    x, w, zx, zf = case["x"], case["w"], case["zx"], case["zf"]
    (_, h, wd, c), (fh, fw) = x.shape, w.shape[:2]
    sh, sw = case["stride"]
    pad = Padding[case["padding"]]
    rows, cols = output_window(h, fh, sh, pad), output_window(wd, fw, sw, pad)
    dd, ofw, owp = (c + 31) // 32 * 32, (fw + 3) // 4 * 4, (cols.out + 3) // 4 * 4
    nr = max((rows.out - 1) * sh + fh, rows.before + h)
    nc = max((owp - 1) * sw + ofw + 4 * sw, cols.before + wd)
    buf = np.full((nr, dd // 32, nc, 32), zx, np.uint8)
    img = np.full((h, wd, dd), zx, np.uint8)
    img[..., :c] = x[0]
    buf[rows.before:rows.before + h, :, cols.before:cols.before + wd, :] = \
        img.reshape(h, wd, dd // 32, 32).transpose(0, 2, 1, 3)
    filt = np.zeros((dd // 32, fh, ofw // 4, 32, 4), np.uint8)
    wp = np.full((fh, ofw, dd), 0, np.uint8)
    wp[:, :fw, :] = zf
    wp[:, :fw, :c] = w[..., 0]
    filt[...] = wp.reshape(fh, ofw // 4, 4, dd // 32, 32).transpose(3, 0, 1, 4, 2)
    bias = np.zeros(dd, np.int32)
    bias[:c] = case["bias"]
    out = np.zeros((rows.out, dd // 32, owp, 32), np.uint8)
    mm = np.zeros(64, np.int32)
    mm[:32], mm[32:] = -(2**31), 2**31 - 1
    lib.dwconv2dbbb_MxN_cn(buf.ctypes.data, filt.ctypes.data, out.ctypes.data, nc * dd, owp * dd,
                           nc * 32, owp * 32, dd, cols.out, rows.out, fw, fh, zf,
                           bias.ctypes.data, mm.ctypes.data, case["recip"], case["shamt"], sw, sh)
    codes = out.transpose(0, 2, 1, 3).reshape(rows.out, owp, dd)[None, :, :cols.out, :c]
    return codes, int(mm[32:].min()), int(mm[:32].max())


def hexscope_side(case: dict) -> tuple[np.ndarray, int, int]:
    """The op's integer path; padded channels (sum 0, bias 0) join the min/max as on the
    device, where the C model computes them too."""
    x, w, zx, zf = case["x"], case["w"], case["zx"], case["zf"]
    (_, h, wd, c), (fh, fw) = x.shape, w.shape[:2]
    sh, sw = case["stride"]
    pad = Padding[case["padding"]]
    rows, cols = output_window(h, fh, sh, pad), output_window(wd, fw, sw, pad)
    sums = depthwise_sums(x, w, zx, zf, sh, sw, rows.before, cols.before, rows.out, cols.out)
    gemsumb = w.reshape(-1, c).astype(np.int64).sum(0) - zf * fh * fw
    dd = (c + 31) // 32 * 32
    full = np.zeros(sums.shape[:3] + (dd,), np.int32)
    full[..., :c] = sums
    bias = np.zeros(dd, np.int64)
    bias[:c] = np.asarray(case["bias"], np.int64) + gemsumb * zx
    recip = np.full(dd, case["recip"], np.int64)
    codes, lo, hi = dwise_requantize(full, bias, recip, case["shamt"])
    return codes[..., :c], lo, hi


def _plain(case: dict) -> dict:
    """JSON-ready: arrays as hex bytes with their shape."""
    out = {k: v for k, v in case.items() if not isinstance(v, np.ndarray)}
    for k in ("x", "w"):
        out[k] = {"shape": list(case[k].shape), "hex": case[k].tobytes().hex()}
    out["bias"] = np.asarray(case["bias"], np.int32).tolist()
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("what", choices=["run", "export"])
    ap.add_argument("out", nargs="?")
    ap.add_argument("-n", type=int, default=300)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    lib, rng = _lib(), np.random.default_rng(a.seed)
    cases, bad = [], 0
    for i in range(a.n):
        case = make_case(rng, i)
        codes, lo, hi = c_model(lib, case)
        mine, mlo, mhi = hexscope_side(case)
        ok = np.array_equal(codes, mine) and (lo, hi) == (mlo, mhi)
        bad += not ok
        if not ok:
            print(f"case {i}: DIFF codes {int((codes != mine).sum())} min/max C {lo},{hi} "
                  f"hs {mlo},{mhi}", {k: case[k] for k in ("zx", "zf", "recip", "shamt",
                                                           "stride", "padding")})
        cases.append(_plain(case) | {"codes": codes.tobytes().hex(), "min": lo, "max": hi})
    print(f"dwconv2dbbb_MxN_cn: {a.n - bad}/{a.n} exact")
    if a.what == "export" and a.out:
        with open(a.out, "w") as f:
            json.dump({"source": "nnlib host oracle (tests/oracle): dwconv2dbbb_MxN_cn, "
                       "exported by campaigns_dwise.py", "cases": cases}, f,
                      separators=(",", ":"))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
