"""Pooling ops."""
