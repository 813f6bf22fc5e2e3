"""Elementwise ops on flat quantized tensors: arithmetic and activations."""
