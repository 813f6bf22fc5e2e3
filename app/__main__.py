"""``hexscope`` / ``python -m hexscope.app``: the command line (see hexscope.app.cli)."""

from __future__ import annotations

import sys
from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``hexscope`` script; returns the exit code."""
    from hexscope.app.cli import main as cli_main

    return cli_main(argv)


if __name__ == "__main__":
    sys.exit(main())
