"""Every mismatch of an op must be: out0 bytes equal, and each differing float output NaN on
both sides (only the NaN's bits differ). Prints the bit patterns seen."""
import collections
import sys

import campaigns
import hs
import numpy as np
from common import compare
from oracle import Oracle

name, n, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
camp = campaigns.CAMPAIGNS[name]; o = Oracle(); rng = np.random.default_rng(seed)
pat = collections.Counter(); bad = []; mism = 0
for i in range(n):
    case = camp.gen(rng, i)
    c = o.run(camp.c_op or name, case.inputs, case.outs, case.padding, def_max=case.def_max)
    if not c.ok and c.kind in ("stub", "crash", "ctor"):
        continue
    h = hs.run(camp.hs_op or name, case.inputs, len(case.outs), case.padding, def_max=case.def_max, elsizes=case.elsizes())
    d = compare(c, h, **camp.compare_kw)
    if not d:
        continue
    mism += 1
    ok = c.ok and h.ok and c.outs[0].logical().tobytes() == h.outs[0].logical().tobytes()
    for k in (1, 2):
        if not ok: break
        cv = c.outs[k].logical().ravel().view(np.uint32)[0]; hv = h.outs[k].logical().ravel().view(np.uint32)[0]
        if cv != hv:
            cf, hf = np.uint32(cv).view(np.float32), np.uint32(hv).view(np.float32)
            if np.isnan(cf) and np.isnan(hf):
                pat[(hex(cv), hex(hv))] += 1
            else:
                ok = False
    if not ok:
        bad.append((i, case.desc, d[:3]))
print(f"{name} seed {seed} n {n}: {mism} mismatches; NaN-bits-only {mism - len(bad)}; other {len(bad)}")
print("  (C bits, Hexscope bits):", dict(pat))
for b in bad[:5]:
    print("  OTHER", b)
