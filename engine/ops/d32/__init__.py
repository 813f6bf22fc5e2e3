"""Ops on d32 tensors: conversions, arithmetic, concat, FillPadding."""
