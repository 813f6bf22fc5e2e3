"""``hexscope`` / ``python -m hexscope.app``: the command line (see hexscope.app.cli)."""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``hexscope`` script; returns the exit code."""
    try:
        from hexscope.app.cli import main as cli_main

        return cli_main(argv)
    except KeyboardInterrupt:
        # Ctrl+C while Python still imports numpy and the rest: the same one line as later
        print("hexscope: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # The reader went away (`hexscope info g | head`): stop quietly, as Unix tools do.
        # Python would report the error again when it flushes stdout at exit.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


if __name__ == "__main__":
    sys.exit(main())
