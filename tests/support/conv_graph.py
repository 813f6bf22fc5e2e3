"""Range and stride consts shared by the convolution graphs of the tests."""

from __future__ import annotations

import numpy as np

from hexscope.engine import Graph


def append_conv_consts(g: Graph) -> None:
    """Consts 0x11 = -1.0 and 0x12 = 1.0 (a data range with zero code 128), 0x13 = 0.0
    (a filter range 0x13..0x12 with zero code 0) and 0x14, a 1x1 stride shape."""
    g.append_const_node(0x11, np.array([-1.0], np.float32))
    g.append_const_node(0x12, np.array([1.0], np.float32))
    g.append_const_node(0x13, np.array([0.0], np.float32))
    g.append_const_node(0x14, shape=(1, 1, 1, 1))
