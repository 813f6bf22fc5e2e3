"""The graph log, with hexagon_nn's debug levels (graph spec §5)."""

from __future__ import annotations

from hexscope.engine.events import Emitter, LogLine

LEVEL_NAMES = {0: "error", 1: "info", 2: "progress", 3: "trace", 4: "trace"}


class Log:
    """Lines with a level and the node that wrote them; listeners see each line as written.

    A node's ``logmsg(L, ...)`` is written only when L <= ``debug_level``, as in the library;
    errors and check reports are level 0 and always written.
    """

    def __init__(self, debug_level: int = 0) -> None:
        self.debug_level = max(0, debug_level)
        self.lines: list[LogLine] = []
        self.written: Emitter[LogLine] = Emitter()

    def write(self, level: int, text: str, node_id: int | None = None,
              warning: bool = False) -> None:
        # hexagon_nn formats into a 1024-byte buffer, so one message holds at most 1023 chars.
        for part in text[:1023].splitlines() or [""]:
            line = LogLine(level, part, node_id, warning)
            self.lines.append(line)
            self.written.emit(line)

    def text(self, max_level: int | None = None, node_id: int | None = None) -> str:
        return "".join(f"{line.text}\n" for line in self.filtered(max_level, node_id))

    def filtered(self, max_level: int | None = None, node_id: int | None = None
                 ) -> list[LogLine]:
        return [line for line in self.lines
                if (max_level is None or line.level <= max_level)
                and (node_id is None or line.node_id == node_id)]

    def clear(self) -> None:
        self.lines.clear()
