"""Headless batch runs: the runner (:mod:`.runner`), the per-output statistics and the ranges
over all runs (:mod:`.stats`), and the JSON and JUnit reports (:mod:`.report`)."""
