"""Prepare as hexagon_nn prepares (graph spec §2.5): the rewrites users can observe.

:mod:`passes` runs them in the library's order; :mod:`supernode` is the convolution-chain
fusion, :mod:`consumers` the consumer test those fusions share.
"""

from hexscope.engine.prepare.passes import Prepared, Rewrite, prepare

__all__ = ["Prepared", "Rewrite", "prepare"]
