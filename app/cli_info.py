"""``hexscope info``: a summary of a graph in the spirit of hexagon_nn's snpprint (§2.7)."""

from __future__ import annotations

from hexscope.engine.graph import Graph
from hexscope.engine.nodes import Node
from hexscope.engine.ops.op_ids import OP_IDS
from hexscope.engine.ops.registry import REGISTRY


def _node_line(node: Node) -> str:
    op_id = OP_IDS.get(REGISTRY.canonical(node.op))
    kind = f"0x{op_id:x}" if op_id is not None else "user"
    title = node.title
    head = (f"node {title}: type={kind}({node.op}) n_inputs={len(node.inputs)} "
            f"n_outputs={len(node.outputs)} padding=0x{node.padding.value:x}"
            f"({node.padding.name})")
    if node.is_const and node.const is not None:
        const = node.const
        if const.has_data:
            head += f" const {const.describe()} ({const.nbytes} bytes)"
        else:
            head += f" shape-only {'x'.join(map(str, const.shape))}"
    return head


def _detail_lines(node: Node) -> list[str]:
    lines = [f"    input {k}: 0x{src:x}:{idx}" for k, (src, idx) in enumerate(node.inputs)]
    if node.is_const:
        return lines
    for k, out in enumerate(node.outputs):
        if out.max_sizes:
            sizes = "x".join(map(str, out.max_sizes))
            lines.append(f"    output {k}: {sizes} x{out.elementsize} bytes "
                         f"(max {out.capacity()} bytes)")
        else:
            lines.append(f"    output {k}: no declared size")
    return lines


def info_lines(graph: Graph, name: str, prepared: bool = False) -> list[str]:
    """The summary; with ``prepared`` the node list prepare leaves (raises GraphError for
    an invalid graph)."""
    nodes = list(graph)
    rewrites: list[str] = []
    if prepared:
        from hexscope.engine.errors import GraphError
        from hexscope.engine.prepare import prepare
        from hexscope.engine.validate import errors, validate

        problems = errors(validate(graph))
        if problems:
            raise GraphError(f"the graph has {len(problems)} problem(s)", problems)
        result = prepare(graph)
        nodes = [result.nodes[i] for i in result.order]
        rewrites = [f"prepare: 0x{r.node_id:x} {r.kind}: {r.reason}" for r in result.rewrites]
    consts = sum(n.is_const for n in nodes)
    data_bytes = sum(n.const.nbytes for n in nodes
                     if n.is_const and n.const is not None and n.const.has_data)
    lines = [f"graph {name}: {len(nodes)} nodes ({consts} Const, {data_bytes} bytes of const "
             f"data)" + (" after prepare" if prepared else "")]
    for node in nodes:
        lines.append(_node_line(node))
        lines.extend(_detail_lines(node))
    lines.extend(rewrites)
    lines.extend(_tflite_lines(graph))
    lines.append(f"{len(nodes)} nodes total.")
    return lines


def _tflite_lines(graph: Graph) -> list[str]:
    """For a TFLite import: the delegated operators and the refused ones with their reason."""
    meta = graph.meta.get("tflite")
    if not isinstance(meta, dict):
        return []
    ops = meta.get("partition", [])
    lines = [f"tflite {meta.get('model')}: delegated operators {ops}, inputs "
             f"{meta.get('inputs')}"]
    for index, code, reason in meta.get("refused", []):
        lines.append(f"tflite refused: operator {index} {code}: {reason}")
    for index, code, reason in meta.get("device_refused", []):
        lines.append(f"tflite the DSP cannot run: operator {index} {code}: {reason}")
    return lines
