"""Normalising ops on flat quantized tensors: softmax and L2 normalisation."""
