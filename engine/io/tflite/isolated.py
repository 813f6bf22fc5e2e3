"""Each TFLite operator of the delegated graph on TFLite's own inputs: the simulator steps the
graph node by node, and after each node that computes a TFLite tensor, that node's output is
replaced by TFLite's codes for the nodes after it (on the node's own grid, its d32 padding
kept). Every operator then reads what TFLite's kernel read, so its row says what the op
itself does differently, not what the ops before it did (``compare --reference tflite
--analysis isolated``; docs/tflite.md, *How close is close*).

After the run the replacements are dropped: each node's outputs are its own again, computed
from TFLite's inputs.
"""

from __future__ import annotations

import numpy as np

from hexscope.engine.dtypes import Layout
from hexscope.engine.errors import NodeError
from hexscope.engine.events import NodeFailed
from hexscope.engine.io.tflite.model import TfModel, TfTensor
from hexscope.engine.session import Session
from hexscope.engine.tensor import Tensor


def tflite_codes_for(session: Session, node_id: int, k: int, tensor: TfTensor,
                     tflite: np.ndarray, scale: float, offset: float | None) -> Tensor:
    """The node's output ``k`` with TFLite's values of ``tensor`` in its place, as the node's
    own codes: read with (``scale``, ``offset``) as :func:`reference.hexscope_reading` gives
    them (``offset`` None: on the tensor's grid, about its zero code)."""
    assert tensor.quant is not None
    from hexscope.engine.io.tflite.reference import zero_code

    out = session.output(node_id, k)
    lsb, zp = float(tensor.quant.scale[0]), float(tensor.quant.zero_point[0])
    real = (tflite.astype(np.float64) - zp) * lsb
    if offset is None:
        codes = np.round(real / scale + zero_code(session, node_id, k, tensor))
    else:
        codes = np.round((real - offset) / scale)
    info = np.iinfo(out.array.dtype)
    codes = np.clip(codes, info.min, info.max).astype(out.array.dtype).reshape(out.shape)
    new = out.copy()
    if new.layout is Layout.D32:
        p, g = new.padding, new.geometry
        b, h, w, d = new.shape
        padded = new.padded_array()
        padded[:, p.h_before:p.h_before + h, p.w_before:p.w_before + w,
               p.d_before:p.d_before + d] = codes
        new.memory[...] = padded.reshape(b, g.h_total, g.w_total, g.n_slices, 32) \
            .transpose(0, 1, 3, 2, 4)
    else:
        new.memory[...] = codes.reshape(new.memory.shape)
    return new.readonly()


def execute_isolated(session: Session, feeds: list[Tensor], model: TfModel,
                     tensor_of_output: dict[str, object], reference: dict[int, np.ndarray]
                     ) -> NodeError | None:
    """Run the session on ``feeds``, each node after a TFLite tensor's node reading TFLite's
    value of that tensor; the node that failed, or None. The replacements are dropped at the
    end (the session's outputs are the nodes' own)."""
    from hexscope.engine.io.tflite.reference import hexscope_reading

    session.set_inputs(feeds)
    forced: list[tuple[int, int]] = []
    failure = None
    try:
        while (node_id := session.next_node) is not None:
            event = session.step()
            if isinstance(event, NodeFailed):
                failure = NodeError(node_id, event.op, event.message)
                break
            node = session.prepared.nodes[node_id]
            for k in range(len(node.outputs)):
                t = tensor_of_output.get(f"0x{node_id:x}:{k}")
                if t is None or int(t) not in reference:
                    continue
                tensor = model.tensor(int(t))
                if tensor.quant is None:
                    continue        # ARG_MAX's indices: nothing reads them after
                scale, offset = hexscope_reading(session, node_id, k, tensor)
                session.executor.store[(node_id, k)] = tflite_codes_for(
                    session, node_id, k, tensor, reference[int(t)], scale, offset)
                forced.append((node_id, k))
    finally:
        for key in forced:
            session.executor.store.pop(key, None)
    return failure


__all__ = ["execute_isolated", "tflite_codes_for"]
