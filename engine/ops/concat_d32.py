"""(family module: kernels land here)."""
