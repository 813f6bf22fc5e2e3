"""Compiled and vectorised kernels that the op declarations call (GEMM, Winograd, numba
passes). They declare no op."""
