"""hexagon_nn's own artifacts read and written: its graph and tensor dumps, its per-node
cycle profiles, and Chrome trace-event timelines (issue 30)."""
