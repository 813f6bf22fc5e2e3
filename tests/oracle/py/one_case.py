import sys
import time

import campaigns
import hs_exec
import numpy as np
from oracle import Oracle

name, seed, idx, side = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
camp = campaigns.CAMPAIGNS[name]; rng = np.random.default_rng(seed)
for i in range(idx + 1):
    case = camp.gen(rng, i)
print(case.desc, flush=True)
for k, t in enumerate(case.inputs):
    if t.data is not None and t.data.size <= 4:
        print(f"  in{k}: {t.dtype} {t.data.ravel().tolist()}")
    else:
        print(f"  in{k}: {t.dtype} shape {t.shape}" + (f" data {t.data.ravel()[:24].tolist()}" if t.data is not None else ""))
t0 = time.time()
if side == "C":
    o = Oracle()
    c = o.run(camp.c_op or name, case.inputs, case.outs, case.padding, def_max=case.def_max, debug=int(sys.argv[5]) if len(sys.argv) > 5 else 0)
    print("C:", c.ok, c.kind, c.error[:300], [ (x.logical().ravel()[:12].tolist()) for x in c.outs] if c.ok else "")
    print(o.log()[-3000:])
else:
    h = hs_exec.run(camp.hs_op or name, case.inputs, len(case.outs), case.padding, def_max=case.def_max, elsizes=case.elsizes(), outs=case.outs)
    print("H:", h.ok, h.kind, h.error[:300], [ (x.logical().ravel()[:12].tolist()) for x in h.outs] if h.ok else "")
print(f"{time.time()-t0:.2f}s")
