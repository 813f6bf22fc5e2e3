"""What DepthwiseSupernode_8x8p32to8_d32 does with a filter of width 1 (TFLite's wake-word
model, docs/tflite.md "The wake word's run then stops at node 0x31"), run on nnlib's HVX
build under qemu-hexagon (tests/oracle/hvx/build.sh). nnlib's
``dwise_supernode_recalculate_strategy`` logs "filter width currently only 3,5,7" without
returning; this runs such nodes (and the same node with a filter of width 3, for contrast)
and prints what comes out.

Finding (nnlib commit of the mirror, QEMU 7.2, v66): a filter of width 1 (or 2) never
returns an error and never computes: ``info->dwfunc`` stays NULL (``info`` is nn_calloc'd in
the op's check, and only the width 3/5/7 branches set it), ``dwise_supernode_execute_hvx_work``
then does ``callr r6`` with r6 = memw(info + 220) = ``dwfunc`` (offset checked with clang's
offsetof), and the process dies with SIGSEGV (a jump to address 0). On the DSP this is a
fatal exception of the graph's process, not a value Hexscope could model: refusing the node
(as Hexscope does) is the faithful outcome.

    cd tests/oracle/py && PYTHONPATH=. ORACLE_HVX=.../oracle-hvx python ../hvx/repro_dwise_width1.py
"""
from __future__ import annotations

import sys

import numpy as np

sys.path.insert(0, ".")
from common import T  # noqa: E402
from oracle_hvx import HvxOracle  # noqa: E402


def f32(v: float) -> T:
    return T.f(float(np.float32(v)))


def case(shape, fh, fw, stride=(1, 1), seed=0, fill=0x5A, pad=None):
    rng = np.random.default_rng(seed)
    b, h, w, c = shape
    x = rng.integers(0, 256, shape).astype(np.uint8)
    filt = rng.integers(0, 256, (fh, fw, c, 1)).astype(np.uint8)
    bias = rng.integers(-2000, 2000, c).astype(np.int32)
    pad = pad or (4, 4, 4, (-w) % 4 + 4, 0, (-c) % 32)
    xin = T(shape, "u8", x, d32=pad, d32_fill=fill)
    ins = [xin, T.of(filt, "u8"), f32(-1.0), f32(1.0), f32(-0.5), f32(0.5),
           T.shape_only((1, *stride, 1)), T.of(bias.reshape(1, 1, 1, c), "i32"),
           f32(-(2.0**31) * (2 / 255) * (1 / 255)), f32(2.0**31 * (2 / 255) * (1 / 255)),
           f32(-4.0), f32(4.0)]
    oh = (h + stride[0] - 1) // stride[0]
    ow = (w + stride[1] - 1) // stride[1]
    dm = (b, oh, ow, c)
    cap = b * (oh + 8) * ((ow + 11) & ~3) * ((c + 31) & ~31)
    return ins, [("u8", cap), ("f32", 128), ("f32", 128)], [dm, (1, 1, 1, 1), (1, 1, 1, 1)]


def main() -> None:
    o = HvxOracle()
    shapes = [((1, 8, 4, 32), 5, 1), ((1, 49, 1, 64), 5, 1), ((1, 8, 4, 32), 3, 1),
              ((1, 8, 4, 32), 5, 3), ((1, 8, 4, 32), 5, 2)]
    runs = []
    for shape, fh, fw in shapes:
        ins, outs, dm = case(shape, fh, fw)
        runs.append(("DepthwiseSupernode_8x8p32to8_d32", ins, outs, "SAME", dm, 3))
    res = o.run_many(runs)
    for (shape, fh, fw), r, log in zip(shapes, res, o.logs):
        print(f"x{shape} filter {fh}x{fw}: ok={r.ok} kind={r.kind!r} error={r.error[:160]!r}")
        for line in log.splitlines():
            if "filter width" in line or "sorry" in line:
                print("   log:", line.strip())
        if r.ok:
            y = r.outs[0]
            v = y.logical()
            print(f"   out {y.shape} pad {y.d32} range [{r.outs[1].logical().ravel()[0]}, "
                  f"{r.outs[2].logical().ravel()[0]}]; first row {v[0, 0, :, :4].tolist()}")


if __name__ == "__main__":
    main()
