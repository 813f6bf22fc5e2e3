"""Analyses over a graph and its results: which nodes read d32 padding
(:mod:`.padding_check`), a d32 tensor's memory by region (:mod:`.padding_regions`), and the
quantization range of every node (:mod:`.ranges`)."""
