"""Resize ops: nearest neighbour and bilinear."""
