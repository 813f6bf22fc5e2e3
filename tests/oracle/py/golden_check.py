"""the project's golden Supernode vectors (tests/data/oracle/supernode_8x8p8to8_ref.json)
re-run through this session's own build of nnlib's supernode_execute_ref."""
import json
import sys

import numpy as np
from common import NP, T
from oracle import Oracle

o = Oracle()
d = json.load(open(sys.argv[1]))
ok = bad = fails_ok = 0
for k, c in enumerate(d["cases"]):
    ins = []
    for t in c["inputs"]:
        if t["hex"] is None:
            ins.append(T.shape_only(tuple(t["shape"])))
        else:
            a = np.frombuffer(bytes.fromhex(t["hex"]), NP[t["dtype"]]).reshape(t["shape"])
            ins.append(T.of(a.copy(), t["dtype"]))
    x, f = ins[0].shape, ins[1].shape
    cap = 4 * (x[0] * (x[1] + 8) * (x[2] + 8) * f[3]) + 1024
    r = o.run("Supernode_8x8p8to8_ref", ins, [("u8", cap), ("f32", 128), ("f32", 128)], c["padding"])
    if "fails" in c:
        if r.ok:
            bad += 1; print("golden says fails, C ok:", k, c["desc"][:100])
        else:
            fails_ok += 1
        continue
    if not r.ok:
        bad += 1; print("golden has outputs, C fails:", k, r.kind, r.error[:100]); continue
    same = all(bytes(ro.raw[:len(bytes.fromhex(w["hex"]))]).hex() == w["hex"] and list(ro.shape) == w["shape"]
               for ro, w in zip(r.outs, c["outputs"]))
    if same:
        ok += 1
    else:
        bad += 1; print("differs:", k, c["desc"][:120])
print(f"golden cases {len(d['cases'])}: outputs equal {ok}, fails-as-golden {fails_ok}, different {bad}")
