"""replay graphinit_med.c's fused Supernode through nnlib's C supernode_execute_ref,
with the inputs Hexscope's run dumped (the AutoQuantize output and its range) and the graph's
Consts; compare with Hexscope's dumped Supernode outputs."""
import sys

import numpy as np
from common import T
from oracle import Oracle

from hexscope.engine.io.c_import import import_c

graph, dump = sys.argv[1], sys.argv[2]
g = import_c(graph)
def const(nid):
    t = g.node(nid).const
    return t
def TT(t):
    a = np.asarray(t.array)
    name = {"QUINT8": "u8", "FLOAT32": "f32", "INT32": "i32"}[t.dtype.name]
    return T.of(a.copy(), name)
x = np.load(f"{dump}/0x1024e_0.npy"); xmn = np.load(f"{dump}/0x1024e_1.npy"); xmx = np.load(f"{dump}/0x1024e_2.npy")
ins = [T.of(x, "u8"), TT(const(0x1000b)), T.of(xmn, "f32"), T.of(xmx, "f32"), TT(const(0x1000c)), TT(const(0x1000d)),
       T.shape_only(const(0x10250).shape), TT(const(0x10010)), TT(const(0x10011)), TT(const(0x10012)),
       T.f(0.0), T.f(float("inf"))]
print("filter codes unique:", np.unique(np.asarray(const(0x1000b).array))[:10], "bias codes:", np.asarray(const(0x10010).array).ravel()[:8])
cap = 710528
r = Oracle().run("Supernode_8x8p8to8_ref", ins, [("u8", cap), ("f32", 128), ("f32", 128)], "VALID")
print("C:", r.ok, r.kind, r.error[:200], "hexconv", r.hexconv, "ub", r.ub)
hy = np.load(f"{dump}/0x10254_0.npy"); hmn = np.load(f"{dump}/0x10254_1.npy"); hmx = np.load(f"{dump}/0x10254_2.npy")
if r.ok:
    cy = r.outs[0].logical(); cmn = r.outs[1].logical(); cmx = r.outs[2].logical()
    print("shape C", cy.shape, "H", hy.shape)
    print("data equal:", cy.tobytes() == np.ascontiguousarray(hy).tobytes(), "differ:", int(np.count_nonzero(cy.reshape(-1) != hy.reshape(-1))))
    print("min C/H", cmn.ravel().view(np.uint32), np.asarray(hmn, np.float32).ravel().view(np.uint32), "max C/H", cmx.ravel(), hmx.ravel())
    print("C out code histogram", np.bincount(cy.ravel(), minlength=256).nonzero()[0][:10])
