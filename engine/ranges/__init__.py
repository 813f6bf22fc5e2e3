"""Ranges (issue 29): calibrate each node output's range over a data set (:mod:`.calibrate`),
read and write them as an AIMET encodings file (:mod:`.encodings`), write them into the graph
(:mod:`.apply`), and rank the nodes by what their quantization costs (:mod:`.sensitivity`)."""

from hexscope.engine.ranges.apply import Applied, Change, apply_ranges, runtime_range_nodes
from hexscope.engine.ranges.calibrate import Calibration, Method, calibrate
from hexscope.engine.ranges.encodings import Encoding, RangesFile, read_ranges, write_ranges
from hexscope.engine.ranges.sensitivity import NodeCost, Sensitivity, sensitivity

__all__ = ["Applied", "Calibration", "Change", "Encoding", "Method", "NodeCost", "RangesFile",
           "Sensitivity", "apply_ranges", "calibrate", "read_ranges", "runtime_range_nodes",
           "sensitivity", "write_ranges"]
