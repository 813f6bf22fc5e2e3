import sys

import campaigns
import hs
import numpy as np
from common import compare
from oracle import Oracle

o = Oracle(); camp = campaigns.CAMPAIGNS["FillPadding_8_d32_dafter32"]
rng = np.random.default_rng(int(sys.argv[2])); n = int(sys.argv[1])
stats = dict(both_ok=0, data_overwritten=0, exact=0, exact_overwritten=0, c_before=0, h_fail_named=0, both_fail=0, other=0)
for i in range(n):
    case = camp.gen(rng, i)
    c = o.run("FillPadding_8_d32", case.inputs, case.outs, def_max=case.def_max)
    h = hs.run("FillPadding_8_d32", case.inputs, 1, def_max=case.def_max, elsizes=[1])
    d = compare(c, h, **camp.compare_kw)
    if c.guard[0] or c.guard[1]:
        stats["c_before"] += 1
        stats["h_fail_named"] += (not h.ok and "outside the output buffer" in h.error)
        continue
    if c.ok and h.ok:
        stats["both_ok"] += 1
        over = not np.array_equal(c.outs[0].logical(), case.inputs[0].data)
        stats["data_overwritten"] += over
        if not d:
            stats["exact"] += 1; stats["exact_overwritten"] += over
    elif not c.ok and not h.ok:
        stats["both_fail"] += 1
    else:
        stats["other"] += 1; print("other", i, d[:1])
print(stats)
