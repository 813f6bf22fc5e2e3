"""Reductions over one or more axes of flat quantized tensors: mean, argmax, argmin."""
