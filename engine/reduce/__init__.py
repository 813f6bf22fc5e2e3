"""Reduce a failing graph to its smallest failing part (issue 28).

:mod:`units` takes prepare's groups as the units, :mod:`cut` makes a candidate of some of
them (the rest frozen to the original run's values), :mod:`search` bisects and delta-debugs,
:mod:`checks` says whether a candidate still fails, :mod:`files` writes the result.
"""

from hexscope.engine.reduce.checks import (
    CommandCheck,
    CompareCheck,
    NodeFailureCheck,
    OriginalRun,
    run_original,
)
from hexscope.engine.reduce.cut import Candidate, Cut, cut_graph
from hexscope.engine.reduce.files import CFile, write_c, write_candidate, write_json
from hexscope.engine.reduce.search import (
    MODES,
    NotFailing,
    Progress,
    ReduceError,
    Reducer,
    ReduceResult,
    Verdict,
)
from hexscope.engine.reduce.units import Unit, units_of

__all__ = ["MODES", "CFile", "Candidate", "CommandCheck", "CompareCheck", "Cut", "NodeFailureCheck",
           "NotFailing", "OriginalRun", "Progress", "ReduceError", "ReduceResult", "Reducer",
           "Unit", "Verdict", "cut_graph", "run_original", "units_of", "write_c",
           "write_candidate", "write_json"]
