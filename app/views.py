"""Placeholder until the views land: install_views(window) adds the tensor/padding/range docks."""

from __future__ import annotations


def install_views(window: object) -> None:
    """TODO(issue #5): add the tensor inspector, d32 padding view and range docks."""
