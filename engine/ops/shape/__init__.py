"""Ops that move data without arithmetic: flatten, concat, gather."""
