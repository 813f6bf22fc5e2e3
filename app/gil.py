"""The GUI thread's share of Python's GIL while other threads compute (issue 32).

A session's run, a comparison or an edit's prepare runs Python on its own thread. Each
time the GUI thread needs the GIL back (every call from Qt into Python: an item's paint,
a slot, a timer) it waits until the other thread lets go, which CPython forces only
after the switch interval, 5 ms by default. A repaint that calls Python for a few hundred
items then waited for the GIL a few hundred times: the window's gaps during a run were
2-3 times the GUI thread's own CPU time (bench/ui_latency.py, wall against CPU). A shorter
interval hands the GIL back sooner; the computing thread loses a little to the extra
switches only while the GUI thread wants the GIL.
"""

from __future__ import annotations

import sys

#: Seconds a thread may hold the GIL while another waits for it (CPython's default: 0.005).
GUI_SWITCH_INTERVAL_S = 0.001


def favour_the_gui_thread(interval: float = GUI_SWITCH_INTERVAL_S) -> None:
    """Set Python's switch interval for an app with a window (call once, at start)."""
    sys.setswitchinterval(interval)


__all__ = ["GUI_SWITCH_INTERVAL_S", "favour_the_gui_thread"]
