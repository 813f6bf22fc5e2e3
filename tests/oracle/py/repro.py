"""hand-made reproducers, both sides, outputs printed."""
import sys

import hs
import hs_exec
import numpy as np
from campaigns import d32_capacity
from common import T
from oracle import Oracle

o = Oracle()
def show(tag, r):
    print(f"  {tag}: ok={r.ok} kind={r.kind} err={r.error[:300]!r}")
    if getattr(r, "guard", (0, 0)) != (0, 0):
        print(f"     guard zone hits (bytes written outside the buffer): before={r.guard[0]} after={r.guard[1]}")
    for k, out in enumerate(r.outs if r.ok else []):
        lg = out.logical()
        if lg.dtype == np.float32 and lg.size == 1:
            print(f"     out{k}: {lg.ravel()[0]!r} bits 0x{int(lg.ravel().view(np.uint32)[0]):08x}")
        else:
            print(f"     out{k}: shape {out.shape} d32 {out.d32} dtype {out.dtype} data {lg.ravel()[:16].tolist()}{'...' if lg.size > 16 else ''}")
    return r

def case(name, op, ins, outs, padding="NA", def_max=None, hs_op=None, exec_cap=False):
    print(f"== {name}")
    c = show("C (nnlib)", o.run(op, ins, outs, padding, def_max=def_max))
    run = hs_exec.run if exec_cap else (lambda *a, outs=None, **k: hs.run(*a, **k))
    h = show("Hexscope ", run(hs_op or op, ins, len(outs), padding, def_max=def_max,
                            elsizes=[4 if d == "f32" or d == "i32" else 1 for d, _ in outs], outs=outs))
    return c, h

if __name__ == "__main__":
    which = sys.argv[1:]
    F = T.f
    if "fillpad" in which or not which:
        x = T((1, 1, 1, 4), "u8", np.array([10, 20, 30, 40], np.uint8).reshape(1, 1, 1, 4), d32=(0, 0, 0, 3, 15, 45), d32_fill=0)
        dm = (1, 1, 1, 4)
        case("FillPadding_8_d32: x=[10,20,30,40] d32 pad (h 0/0, w 0/3, d 15/45), no fill inputs",
             "FillPadding_8_d32", [x], [("u8", d32_capacity(dm))], def_max=[dm])
    if "mul" in which or not which:
        a = T.of(np.array([7], np.uint8).reshape(1, 1, 1, 1), "u8")
        b = T.of(np.arange(6, dtype=np.uint8).reshape(1, 1, 1, 6), "u8")
        case("QuantizedMul_8x8to8: a=[7] range [-2e38, 3e38], b=[0..5] range [-1,1]",
             "QuantizedMul_8x8to8", [a, b, F(-2e38), F(3e38), F(-1.0), F(1.0)],
             [("u8", 256), ("f32", 4), ("f32", 4)])
    if "sn_na" in which:
        x = T.of(np.array([1, 2], np.uint8).reshape(1, 2, 1, 1), "u8")
        w = T.of(np.array([1, 2, 3, 4, 5], np.uint8).reshape(5, 1, 1, 1), "u8")
        bias = T.of(np.array([0], np.uint8).reshape(1, 1, 1, 1), "u8")
        ins = [x, w, F(0.0), F(255.0), F(0.0), F(255.0), T.shape_only((1, 2, 1, 1)), bias, F(0.0), F(255.0), F(0.0), F(10.0)]
        case("Supernode_8x8p8to8 NA, stride 2x1: x=[1,2] (2x1x1), filter [1..5] (5x1x1x1), codes = reals, bias 0, out range [0,10]",
             "Supernode_8x8p8to8_ref", ins, [("u8", 128), ("f32", 128), ("f32", 128)], padding="NA",
             def_max=[(1, 1, 1, 1), (1, 1, 1, 1), (1, 1, 1, 1)], hs_op="Supernode_8x8p8to8", exec_cap=True)
        case("QuantizedConv2d_8x8to32 (same inputs, for reference)", "QuantizedConv2d_8x8to32_ref", ins[:7],
             [("i32", 128), ("f32", 128), ("f32", 128)], padding="NA", hs_op="QuantizedConv2d_8x8to32")
    if "sn_plain" in which:
        rng = np.random.default_rng(7)
        x = T.of(rng.integers(0, 256, (2, 6, 6, 3), dtype=np.uint8), "u8")
        w = T.of(rng.integers(100, 156, (3, 3, 3, 4), dtype=np.uint8), "u8")
        bias = T.of(np.array([128, 140, 100, 128], np.uint8).reshape(1, 1, 1, 4), "u8")
        ins = [x, w, F(0.0), F(6.0), F(-1.0), F(1.0), T.shape_only((1, 1, 1, 1)), bias, F(-2.0), F(2.0), F(0.0), F(float("inf"))]
        dm = [(2, 6, 6, 4), (1, 1, 1, 1), (1, 1, 1, 1)]
        case("Supernode_8x8p8to8 as the device's op (supernode_execute_hvx prologue): batch 2, 3x3x3 filter (K=27), SAME",
             "Supernode_8x8p8to8", ins, [("u8", 384), ("f32", 128), ("f32", 128)], padding="SAME", def_max=dm, exec_cap=True)
        case("same inputs, C Supernode_8x8p8to8_ref", "Supernode_8x8p8to8_ref", ins, [("u8", 384), ("f32", 128), ("f32", 128)],
             padding="SAME", def_max=dm, hs_op="Supernode_8x8p8to8", exec_cap=True)
    if "expand" in which:
        a = T.of(np.arange(30, dtype=np.uint8).reshape(1, 1, 3, 10) * 8, "u8")
        b = T.of(np.full((1, 1, 1, 10), 200, np.uint8), "u8")
        case("QuantizedAdd_8p8to8 broadcast: a (1,1,3,10) range [0,1], b (1,1,1,10)=200 range [-100,100] (b wider: copied)",
             "QuantizedAdd_8p8to8", [a, b, F(0.0), F(1.0), F(-100.0), F(100.0)], [("u8", 158), ("f32", 4), ("f32", 4)])
