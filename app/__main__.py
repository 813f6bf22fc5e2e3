"""``hexscope`` / ``python -m hexscope.app``: the command line (see hexscope.app.cli)."""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Sequence

INTERRUPTED = "hexscope: interrupted"


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``hexscope`` script; returns the exit code."""
    if _import_cli_or_interrupted():
        print(INTERRUPTED, file=sys.stderr)
        return 130
    from hexscope.app.cli import main as cli_main

    try:
        return cli_main(argv)
    except KeyboardInterrupt:
        print(INTERRUPTED, file=sys.stderr)
        return 130
    except BrokenPipeError:
        # The reader went away (`hexscope info g | head`): stop quietly, as Unix tools do.
        # Python would report the error again when it flushes stdout at exit.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


def _import_cli_or_interrupted() -> bool:
    """Import the command line (numpy and the rest) with Ctrl+C only noted, not raised: a C
    extension's import turns a KeyboardInterrupt into its own ImportError (numpy does), a
    traceback instead of one line. True when Ctrl+C came meanwhile."""
    pressed: list[int] = []
    try:
        previous = signal.signal(signal.SIGINT, lambda number, frame: pressed.append(number))
    except ValueError:          # not the main thread (tests): import as it is
        import hexscope.app.cli  # noqa: F401
        return False
    try:
        import hexscope.app.cli  # noqa: F401
    finally:
        signal.signal(signal.SIGINT, previous)
    return bool(pressed)


if __name__ == "__main__":
    sys.exit(main())
