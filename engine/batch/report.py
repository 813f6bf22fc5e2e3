"""Reports of batch runs: a JSON document (schema: resources/schemas/report.schema.json) and a
JUnit XML file for CI servers (one test suite per run, one test case per Check/Close node)."""

from __future__ import annotations

import json
import time
import xml.etree.ElementTree as ET
from os import PathLike
from pathlib import Path

from hexscope.engine.batch.records import BatchResult, NodeRecord, RunRecord

FORMAT = "hexscope-report"
VERSION = 2   # 2: percentiles from a sketch, with their error bound ("sampled" gone)


def hex_id(node_id: int | None) -> str | None:
    return None if node_id is None else f"0x{node_id:x}"


def report_document(result: BatchResult, graph_path: str = "") -> dict[str, object]:
    """The JSON report: summary, prepare's rewrites, validation notes, every run with every
    node, and the ranges over all runs."""
    checks = [c for r in result.runs for c in r.checks]
    return {
        "format": FORMAT, "version": VERSION,
        "tool": {"name": "hexscope", "version": _version()},
        "graph": {"name": result.graph_name, "path": graph_path, "nodes": result.node_count},
        "backend": result.backend,
        "device": result.device,
        "started": time.strftime("%Y-%m-%dT%H:%M:%S%z", time.localtime(result.started)),
        "seconds": result.seconds,
        "outcome": result.outcome.value, "exit_code": result.exit_code,
        "message": result.message,
        "summary": {
            "runs": len(result.runs),
            "passed": sum(r.outcome.value == "passed" for r in result.runs),
            "failed": sum(r.outcome.value != "passed" for r in result.runs),
            "checks": len(checks),
            "checks_failed": sum(c.status in ("failed", "error") for c in checks),
            "warnings": sum(len(r.warnings) for r in result.runs),
        },
        "issues": list(result.issues),
        "rewrites": [{**r, "node": hex_id(r["node"])} for r in result.rewrites],  # type: ignore
        "runs": [_run(r) for r in result.runs],
        "ranges": [{**r, "node": hex_id(r["node"])} for r in result.ranges],  # type: ignore
    }


def _run(run: RunRecord) -> dict[str, object]:
    return {
        "name": run.name, "sources": run.sources, "outcome": run.outcome.value,
        "exit_code": run.outcome.exit_code, "seconds": run.seconds, "message": run.message,
        "failed_node": hex_id(run.failed_node),
        "nodes": [_node(n) for n in run.nodes],
        "checks": [{"node": hex_id(c.node_id), "op": c.op, "label": c.label,
                    "status": c.status, "message": c.message, "log": c.log}
                   for c in run.checks],
    }


def _node(node: NodeRecord) -> dict[str, object]:
    return {"node": hex_id(node.node_id), "op": node.op, "label": node.label,
            "status": node.status, "seconds": node.seconds, "outputs": node.outputs,
            "warnings": node.warnings, "message": node.message,
            "device_counter": node.device_counter}


def write_json(result: BatchResult, path: str | PathLike[str], graph_path: str = "") -> None:
    text = json.dumps(report_document(result, graph_path), indent=1, allow_nan=False)
    Path(path).write_text(text + "\n", encoding="utf-8")


def junit_tree(result: BatchResult) -> ET.ElementTree:
    """One <testsuite> per run. Its cases: one per Check/Close node (failure when the check
    failed, error when it broke, skipped when it never ran), plus a "run" case that carries
    any failure outside the checks, so a graph without checks still reports."""
    root = ET.Element("testsuites", name=f"hexscope {result.graph_name}")
    totals = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    if not result.runs and result.outcome.value != "passed":
        suite = _suite(root, f"{result.graph_name}", 0.0)
        case = ET.SubElement(suite, "testcase", classname=result.graph_name, name="prepare")
        ET.SubElement(case, "error", message=result.message, type=result.outcome.value).text = (
            "\n".join([result.message, *result.issues]))
        _count(suite, totals)
    for run in result.runs:
        suite = _suite(root, f"{result.graph_name}[{run.name}]", run.seconds)
        classname = f"{result.graph_name}.{run.name}"
        case = ET.SubElement(suite, "testcase", classname=classname, name="run",
                             time=f"{run.seconds:.6f}")
        if run.outcome.value in ("invalid", "backend-error"):
            ET.SubElement(case, "error", message=run.message,
                          type=run.outcome.value).text = run.message
        warnings = [f"0x{n:x}: {w}" for n, w in run.warnings]
        if warnings:
            ET.SubElement(case, "system-out").text = "\n".join(warnings)
        for check in run.checks:
            name = f"0x{check.node_id:x} {check.op}" + (f" '{check.label}'" if check.label
                                                        else "")
            case = ET.SubElement(suite, "testcase", classname=classname, name=name)
            detail = "\n".join([check.message, *check.log]).strip()
            if check.status == "failed":
                ET.SubElement(case, "failure", message=check.message,
                              type="CheckFailed").text = detail
            elif check.status == "error":
                ET.SubElement(case, "error", message=check.message, type="NodeError").text = detail
            elif check.status == "not-run":
                ET.SubElement(case, "skipped", message="not run: an earlier node failed")
            if check.log and check.status == "passed":
                ET.SubElement(case, "system-out").text = "\n".join(check.log)
        _count(suite, totals)
    for key, value in totals.items():
        root.set(key, str(value))
    root.set("time", f"{result.seconds:.6f}")
    return ET.ElementTree(root)


def _suite(root: ET.Element, name: str, seconds: float) -> ET.Element:
    return ET.SubElement(root, "testsuite", name=name, time=f"{seconds:.6f}")


def _count(suite: ET.Element, totals: dict[str, int]) -> None:
    cases = suite.findall("testcase")
    counts = {"tests": len(cases),
              "failures": sum(c.find("failure") is not None for c in cases),
              "errors": sum(c.find("error") is not None for c in cases),
              "skipped": sum(c.find("skipped") is not None for c in cases)}
    for key, value in counts.items():
        suite.set(key, str(value))
        totals[key] += value


def write_junit(result: BatchResult, path: str | PathLike[str]) -> None:
    tree = junit_tree(result)
    ET.indent(tree)
    tree.write(path, encoding="utf-8", xml_declaration=True)


def _version() -> str:
    try:
        from importlib.metadata import version

        return version("hexscope")
    except Exception:  # noqa: BLE001 - running from a source tree without metadata
        return "0+unknown"
