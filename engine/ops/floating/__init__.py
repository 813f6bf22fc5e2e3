"""Float ops (the _f family)."""
