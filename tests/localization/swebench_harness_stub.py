"""A stand-in for ``python -m swebench.harness.run_evaluation`` (which needs Docker and the
images): it reads ``--predictions_path`` and writes, as the harness does, one
``logs/run_evaluation/<run_id>/<model>/<instance_id>/report.json`` per non-empty patch and the
run summary ``<model>.<run_id>.json`` in its working directory. Instances in ``RESOLVED``
are resolved; the others fail one FAIL_TO_PASS test. Called as ``stub -c CODE`` it exits 0
(the import check)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

RESOLVED = {"pydata__xarray-4075"}


def main(argv: list[str]) -> int:
    if argv[:1] == ["-c"]:
        return 0
    args = dict(zip(argv[2::2], argv[3::2], strict=False))
    rows = [json.loads(line) for line in Path(args["--predictions_path"]).read_text().splitlines()]
    run_id = args["--run_id"]
    ids: dict[str, list[str]] = {"resolved": [], "unresolved": [], "empty": []}
    model = rows[0]["model_name_or_path"].replace("/", "__")
    for row in rows:
        iid = row["instance_id"]
        if not row["model_patch"]:
            ids["empty"].append(iid)
            continue
        resolved = iid in RESOLVED
        ids["resolved" if resolved else "unresolved"].append(iid)
        folder = Path("logs/run_evaluation") / run_id / model / iid
        folder.mkdir(parents=True)
        status = {
            "FAIL_TO_PASS": {
                "success": [] if not resolved else ["t1"],
                "failure": [] if resolved else ["t1"],
            },
            "PASS_TO_PASS": {"success": ["t2"], "failure": []},
        }
        report = {
            iid: {
                "patch_is_None": False,
                "patch_exists": True,
                "patch_successfully_applied": True,
                "resolved": resolved,
                "tests_status": status,
            }
        }
        (folder / "report.json").write_text(json.dumps(report))
    summary = {
        "resolved_ids": sorted(ids["resolved"]),
        "unresolved_ids": sorted(ids["unresolved"]),
        "empty_patch_ids": sorted(ids["empty"]),
        "error_ids": [],
        "schema_version": 2,
    }
    Path(f"{model}.{run_id}.json").write_text(json.dumps(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
