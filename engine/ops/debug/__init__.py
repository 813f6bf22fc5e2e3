"""Ops for testing and printing graphs: Check, the Close family, PPrint, and hexagon_nn's printf."""
