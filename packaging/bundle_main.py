"""The bundle's entry point (PyInstaller runs this file as ``hexscope``)."""

import multiprocessing
import sys

from hexscope.app.__main__ import main

if __name__ == "__main__":
    # hexscope run --jobs starts spawn workers: in a frozen app they re-enter here.
    multiprocessing.freeze_support()
    sys.exit(main())
