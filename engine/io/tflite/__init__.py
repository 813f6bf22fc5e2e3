"""TFLite models in: parse (model), the delegate's support rules and partitions (support),
and the graph its builders make (builders, build)."""

from __future__ import annotations
