"""Where a node of a graph imported from TFLite comes from (read from ``graph.meta["tflite"]``,
which the importer writes and the .hexgraph file keeps)."""

from __future__ import annotations

from hexscope.engine.graph import Graph


def tflite_origin(graph: Graph, node_id: int) -> str | None:
    """Where a node of an imported model comes from: "TFLite operator 3 (CONV_2D), tensor 7
    'name'", or None for a node no operator made (INPUT, OUTPUT, shared consts)."""
    meta = graph.meta.get("tflite")
    if not isinstance(meta, dict):
        return None
    key = f"0x{node_id:x}"
    index = meta.get("op_index", {}).get(key)
    tensor = meta.get("tensor_of_output", {}).get(f"{key}:0")
    parts = []
    if index is not None:
        codes = meta.get("operators", [])
        code = codes[index] if isinstance(index, int) and index < len(codes) else "?"
        parts.append(f"TFLite operator {index} ({code})")
    if tensor is not None:
        name = meta.get("tensor_names", {}).get(str(tensor), "")
        parts.append(f"tensor {tensor} '{name}'")
    return ", ".join(parts) or None


__all__ = ["tflite_origin"]
