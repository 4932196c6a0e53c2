"""Guidance for the localization bridge tools (SPEC I)."""

from __future__ import annotations

from benchbook.mcp.guide import ToolGuide
from benchbook.mcp.runs import RUN_ID

SAMPLE = "Which repeat to use (0 unless the run has repeats); one row per instance."

GUIDES: dict[str, ToolGuide] = {
    "export_localization_run": ToolGuide(
        advice=(
            "Write 'gold' and 'predictions' one JSON object a line to two files (the prediction"
            " file's name must not end in output.jsonl) and pass them to the upstream"
            " ContextBench scorer's --gold and --pred. repo_url is a repository on the server"
            " made from its local mirror, which the scorer uses in place (no clone)."
        ),
        parameters={"run_id": RUN_ID, "sample": SAMPLE},
        read_only=True,
    ),
    "score_localization_upstream": ToolGuide(
        advice=(
            "Runs the scorer configured on the server (BENCHBOOK_CONTEXTBENCH_SCORER_CMD);"
            " scorer_cmd is accepted from installation admins only. Read 'differing' and each"
            " instance's 'differences' ({metric, ours, upstream}); 'error' means the scorer"
            " itself failed (see stderr_tail)."
        ),
        parameters={
            "run_id": RUN_ID,
            "scorer_cmd": "e.g. 'python -m contextbench.evaluate' (installation admins only).",
            "sample": SAMPLE,
            "timeout_s": "The scorer's wall-time limit in seconds.",
        },
        read_only=True,
    ),
    "derive_gold_locations": ToolGuide(
        advice=(
            "Give a case (dataset and case_id) or a unified diff (patch), not both. 'spans' is"
            " what the localization grader scores against (start_line 0 = file level); 'files'"
            " the per-file removed/added/inserted/enclosing lines and changed definitions."
        ),
        parameters={
            "dataset": "The case's dataset: id or id@version (latest when bare).",
            "case_id": "The case id.",
            "patch": "A unified diff (git or plain) to read instead of a case.",
        },
        read_only=True,
    ),
    "export_swebench_predictions": ToolGuide(
        parameters={
            "run_id": RUN_ID,
            "model_name_or_path": "The model name in the rows (default: the harness id@version).",
            "sample": SAMPLE,
        },
        read_only=True,
    ),
    "import_swebench_report": ToolGuide(
        advice=(
            "Pass the harness's run summary (<model>.<run_id>.json) or its per-instance"
            " report.json objects merged into one. Creates a new scorecard; the run's own is"
            " unchanged."
        ),
        parameters={"run_id": RUN_ID, "sample": SAMPLE},
    ),
    "evaluate_swebench_run": ToolGuide(
        advice=(
            "Needs Docker and the swebench package on the server; otherwise status is"
            " 'unavailable' and message says what is missing. Can take hours."
        ),
        parameters={
            "run_id": RUN_ID,
            "dataset_name": "The harness's --dataset_name, e.g. princeton-nlp/SWE-bench_Lite.",
        },
    ),
}
"""Operation name → guide, for ``services/localization.py`` and ``services/swebench.py``."""
