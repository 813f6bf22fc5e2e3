"""The graph canvas: nodes with ports, edges, folded consts, layered layout."""

from hexscope.widgets.graph_canvas.layout import layered_layout, node_size
from hexscope.widgets.graph_canvas.node_item import NodeItem, NodeLook
from hexscope.widgets.graph_canvas.scene import GraphScene
from hexscope.widgets.graph_canvas.view import OP_MIME, GraphCanvas

__all__ = ["OP_MIME", "GraphCanvas", "GraphScene", "NodeItem", "NodeLook", "layered_layout",
           "node_size"]
