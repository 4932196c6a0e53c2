"""SWE-bench grading through the official harness (SPEC I; LOCALIZATION §2).

Format source: the ``swebench`` package (MIT), ``swebench/harness/run_evaluation.py``,
``grading.py`` and ``reporting.py``:

- predictions JSONL: ``{instance_id, model_name_or_path, model_patch}`` one a line;
- the harness: ``python -m swebench.harness.run_evaluation --dataset_name D --predictions_path
  P --run_id R --max_workers N`` — it needs Docker;
- per-instance report ``logs/run_evaluation/<run_id>/<model>/<instance_id>/report.json``:
  ``{instance_id: {patch_is_None, patch_exists, patch_successfully_applied, resolved,
  tests_status: {FAIL_TO_PASS: {success: [test], failure: [test]}, PASS_TO_PASS: {…},
  FAIL_TO_FAIL: {…}, PASS_TO_FAIL: {…}}}}`` (several instances may be merged in one object);
- run-level summary ``<model>.<run_id>.json`` (``schema_version`` 2): ``total_instances,
  submitted_instances, completed_instances, resolved_instances, unresolved_instances,
  empty_patch_instances, error_instances, completed_ids, incomplete_ids, empty_patch_ids,
  submitted_ids, resolved_ids, unresolved_ids, error_ids``.

Resolved = every FAIL_TO_PASS and PASS_TO_PASS test passes — we take the report's own
``resolved`` flag (or its ``resolved_ids``) as the verdict, exactly as the report says, and keep
the test lists in the score's detail.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import orjson
from pydantic import JsonValue

from benchbook.errors import InvalidInput

Outcome = Literal["resolved", "unresolved", "error", "empty_patch"]
SUMMARY_LISTS: dict[str, Outcome] = {
    "resolved_ids": "resolved",
    "unresolved_ids": "unresolved",
    "error_ids": "error",
    "empty_patch_ids": "empty_patch",
}
TEST_GROUPS = ("FAIL_TO_PASS", "PASS_TO_PASS", "FAIL_TO_FAIL", "PASS_TO_FAIL")
HARNESS_MODULE = "swebench.harness.run_evaluation"


def prediction_row(instance_id: str, model_name_or_path: str, model_patch: str) -> dict[str, str]:
    """One official prediction row (module docstring)."""
    return {
        "instance_id": instance_id,
        "model_name_or_path": model_name_or_path,
        "model_patch": model_patch,
    }


@dataclass(frozen=True)
class InstanceVerdict:
    """One instance of a report: ``outcome`` and the detail a score keeps (test lists)."""

    instance_id: str
    outcome: Outcome
    detail: dict[str, JsonValue]


def parse_report(report: Any) -> dict[str, InstanceVerdict]:
    """The instances of a harness report: a run-level summary (``resolved_ids`` …) or
    per-instance reports (``{instance_id: {resolved, tests_status}}``), module docstring.

    Raises:
        InvalidInput: not a JSON object, neither shape, a field of the wrong type (named with
            its instance), or an instance listed twice in the summary.
    """
    if not isinstance(report, dict) or not report:
        raise InvalidInput("the SWE-bench report must be a non-empty JSON object", {})
    if any(key in report for key in SUMMARY_LISTS):
        return _summary(report)
    return {iid: _instance(iid, body) for iid, body in report.items()}


def _summary(report: Mapping[str, Any]) -> dict[str, InstanceVerdict]:
    out: dict[str, InstanceVerdict] = {}
    for key, outcome in SUMMARY_LISTS.items():
        ids = report.get(key, [])
        if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
            raise InvalidInput(
                f"report field {key!r} must be a list of instance ids", {"field": key}
            )
        for iid in ids:
            if iid in out:
                raise InvalidInput(
                    f"instance {iid!r} is listed under both {key} and {_list_of(out[iid].outcome)}",
                    {"instance_id": iid},
                )
            out[iid] = InstanceVerdict(iid, outcome, {"report": "summary", "outcome": outcome})
    return out


def _list_of(outcome: Outcome) -> str:
    return next(k for k, v in SUMMARY_LISTS.items() if v == outcome)


def _instance(iid: str, body: Any) -> InstanceVerdict:
    where = f"report instance {iid!r}"
    if not isinstance(body, dict) or not isinstance(body.get("resolved"), bool):
        raise InvalidInput(
            f"{where}: expected an object with a boolean 'resolved'", {"instance_id": iid}
        )
    status = body.get("tests_status", {})
    if not isinstance(status, dict):
        raise InvalidInput(f"{where}: tests_status must be an object", {"instance_id": iid})
    tests: dict[str, JsonValue] = {}
    for group in TEST_GROUPS:
        lists = status.get(group, {"success": [], "failure": []})
        if not isinstance(lists, dict) or not all(
            isinstance(lists.get(k, []), list) for k in ("success", "failure")
        ):
            raise InvalidInput(
                f"{where}: tests_status.{group} must be {{success: [...], failure: [...]}}",
                {"instance_id": iid, "field": f"tests_status.{group}"},
            )
        tests[group] = {k: [str(t) for t in lists.get(k, [])] for k in ("success", "failure")}
    if body.get("patch_exists") is False or body.get("patch_is_None") is True:
        outcome: Outcome = "empty_patch"
    else:
        outcome = "resolved" if body["resolved"] else "unresolved"
    detail: dict[str, JsonValue] = {
        "report": "instance",
        "outcome": outcome,
        "patch_successfully_applied": body.get("patch_successfully_applied"),
        "tests_status": tests,
    }
    return InstanceVerdict(iid, outcome, detail)


@dataclass(frozen=True)
class HarnessCheck:
    """Whether the official harness can run here: ``ok``, else ``message`` says what is
    missing (``Docker not found on PATH`` …)."""

    ok: bool
    message: str


def check_harness(python: str, timeout_s: float = 30.0) -> HarnessCheck:
    """Look for Docker (on ``PATH``, daemon answering ``docker info``) and for the
    ``swebench`` package in ``python``. Never raises."""
    docker = shutil.which("docker")
    if docker is None:
        return HarnessCheck(
            False,
            "Docker not found on PATH: the SWE-bench harness runs each instance in a Docker"
            " container; install Docker, or run the harness elsewhere and import its report",
        )
    for argv, missing in (
        ([docker, "info", "--format", "{{.ServerVersion}}"], "the Docker daemon does not answer"),
        (
            [python, "-c", f"import {HARNESS_MODULE}"],
            f"{python} cannot import {HARNESS_MODULE} (pip install swebench)",
        ),
    ):
        try:
            done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout_s)
        except (OSError, subprocess.TimeoutExpired) as exc:
            return HarnessCheck(False, f"{missing}: {exc}")
        if done.returncode != 0:
            return HarnessCheck(False, f"{missing}: {done.stderr.strip()[-500:]}")
    return HarnessCheck(True, "docker and swebench found")


def harness_argv(
    python: str, dataset_name: str, predictions: Path, run_id: str, workers: int
) -> list[str]:
    """The official harness command line (module docstring)."""
    return [
        python,
        "-m",
        HARNESS_MODULE,
        "--dataset_name",
        dataset_name,
        "--predictions_path",
        str(predictions),
        "--run_id",
        run_id,
        "--max_workers",
        str(workers),
    ]


def collect_reports(work: Path, run_id: str, model: str) -> dict[str, InstanceVerdict]:
    """The verdicts the harness left under ``work``: its run-level summary (every submitted
    instance, errors and empty patches included), refined by the per-instance reports (their
    test lists). ``{}`` when it wrote neither.

    Raises:
        InvalidInput: a report is not JSON or has neither shape (:func:`parse_report`).
    """
    name = model.replace("/", "__")
    verdicts: dict[str, InstanceVerdict] = {}
    summary = work / f"{name}.{run_id}.json"
    if summary.is_file():
        verdicts.update(parse_report(_json_file(summary)))
    for path in sorted((work / "logs" / "run_evaluation" / run_id / name).glob("*/report.json")):
        verdicts.update(parse_report(_json_file(path)))
    return verdicts


def _json_file(path: Path) -> Any:
    try:
        return orjson.loads(path.read_bytes())
    except orjson.JSONDecodeError as exc:
        raise InvalidInput(f"{path}: not JSON ({exc})", {"file": str(path)}) from exc
