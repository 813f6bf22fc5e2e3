"""Hexscope's side as the executor runs it: the kernel (hs.run), then the executor's
final output check (executor._check_outputs): an output of more bytes than its declared
capacity (OutputDef.capacity(spec.d32_output, k)) fails the node with capacity_error."""
from __future__ import annotations

import hs
from common import SIZE, Result

from hexscope.engine.nodes import OutputDef
from hexscope.engine.ops import REGISTRY
from hexscope.engine.ops.context import capacity_error


def run(op, inputs, n_out, padding="NA", state=None, def_max=None, elsizes=None, outs=None):
    r = hs.run(op, inputs, n_out, padding, state, def_max=def_max, elsizes=elsizes)
    if not r.ok:
        return r
    spec = REGISTRY.get(op)
    for k, o in enumerate(r.outs):
        if def_max:
            dm = tuple(def_max[k]); es = elsizes[k] if elsizes else 1
        elif outs:
            dt, cap = outs[k]; es = SIZE.get(dt, 1); dm = (1, 1, 1, max(1, cap // es))
        else:
            continue
        cap = OutputDef(dm, es).capacity(spec.d32_output, k)
        nbytes = o.raw.nbytes     # raw may be a typed (int32, float) array
        if nbytes > cap:
            return Result(False, error="[executor] " + str(capacity_error(k, nbytes, str(o.shape), cap)),
                          kind="error", warnings=r.warnings)
    return r
