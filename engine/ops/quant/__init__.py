"""Quantize, dequantize and requantize ops."""
