"""QuantizedAvgPool_8_d32 on nnlib's Hexagon build (HVX, under qemu-hexagon): the cases of
campaigns_avgpool26.py that Hexscope simulates, half of them with windows reaching past the
input (global pools: the reduce-to-1x1 handler; the others: the HVX integral path, with its
edge padding), and ``QuantizedAvgPool_8_d32_ref`` on the
same build.

    PYTHONPATH=. python campaigns_avgpool26_hvx.py run QuantizedAvgPool_8_d32 -n 300
    PYTHONPATH=. python campaigns_avgpool26_hvx.py export QuantizedAvgPool_8_d32 300 OUT.json.gz

Same commands and options as campaigns_hvx.py (this module registers its generator there and
hands over to its ``main``).
"""
from __future__ import annotations

import campaigns
import campaigns_hvx
from campaigns_avgpool26 import _case

from hexscope.engine.nodes import Padding
from hexscope.engine.ops.pooling.avgpool_d32 import axis_plan, not_simulated


def _simulated(case) -> bool:
    x, win, stride = case.inputs[0], case.inputs[3], case.inputs[4]
    p = Padding.parse(case.padding)
    try:
        hp = axis_plan(x.shape[1], win.shape[1], stride.shape[1], p)
        wp = axis_plan(x.shape[2], win.shape[2], stride.shape[2], p)
    except Exception:       # noqa: BLE001 (an error case: both sides should fail)
        return True
    return not_simulated(hp, wp) is None


def _gen(rng, i):
    for _ in range(50):
        case = _case(rng, i, edge=i % 2 == 1)
        if _simulated(case):
            return case
    return None


campaigns.CAMPAIGNS["hvx:avgpool_d32"] = campaigns.Campaign(_gen)
for _op in ("QuantizedAvgPool_8_d32", "QuantizedAvgPool_8_d32_ref"):
    campaigns_hvx.HVX_CAMPAIGNS[_op] = campaigns_hvx.HvxCampaign(
        "hvx:avgpool_d32", {"compare_padding": True})

if __name__ == "__main__":
    campaigns_hvx.main()
