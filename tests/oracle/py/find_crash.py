import sys

import campaigns
import hs_exec
import numpy as np
from oracle import Oracle

name, n, seed, start = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
camp = campaigns.CAMPAIGNS[name]; o = Oracle(); rng = np.random.default_rng(seed)
for i in range(n):
    case = camp.gen(rng, i)
    if i < start: continue
    print("C", i, case.desc, file=sys.stderr, flush=True)
    c = o.run(camp.c_op or name, case.inputs, case.outs, case.padding, def_max=case.def_max)
    print("H", i, c.kind, file=sys.stderr, flush=True)
    h = hs_exec.run(camp.hs_op or name, case.inputs, len(case.outs), case.padding, def_max=case.def_max, elsizes=case.elsizes(), outs=case.outs)
print("done", file=sys.stderr)
