"""A stand-in for the upstream ContextBench scorer (``python -m contextbench.evaluate``) that
implements its command-line contract (LOCALIZATION §5) for real, for the bridge's tests.

``--gold GOLD --pred PRED --cache DIR --out OUT.jsonl``; ``CONTEXTBENCH_TMP_ROOT`` must be set
(its worktrees go there). Each prediction's ``repo_url`` is fetched into a bare cache repository
under ``--cache`` (reused across calls), then checked out at ``commit`` into a worktree under
the temp root. Metrics come from Benchbook's pure functions on that worktree — except for the
instances named by ``--end-exclusive ID``, whose gold ``end_line`` is read as exclusive (the
0- vs 1-based defect of LOCALIZATION §3), a deliberately different rule so the tests see a
difference. Rows: the upstream ``--out`` shape or ``{instance_id, error}``; aggregates on
stderr. ``--fail`` exits 3 after writing nothing; ``--garble`` writes one non-JSON line.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson

from benchbook.eval.checkout import Checkout
from benchbook.eval.localization import LEVELS, Prediction, score_instance


def _git(*args: str, cwd: Path | None = None) -> bool:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True).returncode == 0


def checkout(repo_url: str, commit: str, cache: Path, root: Path, name: str) -> Path | None:
    """The worktree of ``commit``, fetched through the cache; None when that fails."""
    bare = cache / (hashlib.sha1(repo_url.encode()).hexdigest()[:16] + ".git")
    if not bare.exists() and not _git("init", "-q", "--bare", str(bare)):
        return None
    have = _git("-C", str(bare), "cat-file", "-e", f"{commit}^{{commit}}")
    if not have and not _git("-C", str(bare), "fetch", "-q", "--depth", "1", repo_url, commit):
        return None
    tree = root / name
    ok = _git("init", "-q", str(tree)) and _git(
        "-C", str(tree), "fetch", "-q", "--depth", "1", str(bare), commit
    )
    return tree if ok and _git("-C", str(tree), "checkout", "-q", "FETCH_HEAD") else None


def upstream_row(iid: str, result: dict[str, Any]) -> dict[str, Any]:
    """Benchbook's instance result in the upstream ``--out`` shape (no F1, no ranked)."""
    if "error" in result:  # upstream's error row, e.g. no_context_extracted
        return {"instance_id": iid, "error": result["error"]}
    final = {lv: {k: v for k, v in result["final"][lv].items() if k != "f1"} for lv in LEVELS}
    editloc = result["editloc"] or {
        "recall": 0.0,
        "precision": 0.0,
        "intersection": 0,
        "gold_size": 0,
        "pred_size": 0,
    }
    return {
        "instance_id": iid,
        "num_steps": result["num_steps"],
        "final": final,
        "trajectory": result["trajectory"],
        "editloc": editloc,
    }


def score(
    gold: dict[str, Any], pred: dict[str, Any], tree: Path, exclusive: bool
) -> dict[str, Any]:
    spans = [
        {
            **s,
            "end_line": s["end_line"] - 1
            if exclusive and s["end_line"] > s["start_line"]
            else s["end_line"],
        }
        for s in gold["gold_ctx"]
    ]
    traj = pred["traj_data"]
    prediction = Prediction(
        files=traj["pred_files"],
        spans=traj["pred_spans"],
        symbols=traj["pred_symbols"],
        steps=traj["pred_steps"],
        model_patch=pred["model_patch"],
    )
    return upstream_row(
        pred["instance_id"], score_instance(spans, prediction, Checkout.from_dir(tree))
    )


def main() -> int:
    parser = argparse.ArgumentParser()
    for flag in ("--gold", "--pred", "--cache", "--out"):
        parser.add_argument(flag, required=True)
    parser.add_argument("--end-exclusive", action="append", default=[])
    parser.add_argument("--fail", action="store_true")
    parser.add_argument("--garble", action="store_true")
    args = parser.parse_args()
    if args.fail:
        print("scorer: simulated crash", file=sys.stderr)
        return 3
    if args.pred.endswith("output.jsonl"):
        print("prediction files must not end in output.jsonl", file=sys.stderr)
        return 2
    root = Path(os.environ["CONTEXTBENCH_TMP_ROOT"])
    cache = Path(args.cache)
    cache.mkdir(parents=True, exist_ok=True)
    gold: dict[str, dict[str, Any]] = {}
    for line in Path(args.gold).read_bytes().splitlines():
        row = orjson.loads(line)
        gold[row["inst_id"]] = gold[row["original_inst_id"]] = row
    rows = []
    for line in Path(args.pred).read_bytes().splitlines():
        pred = orjson.loads(line)
        iid = pred["instance_id"]
        g = gold.get(iid)
        if g is None or not g["gold_ctx"]:
            rows.append({"instance_id": iid, "error": "missing_gold"})
            continue
        tree = checkout(pred["repo_url"], pred["commit"], cache, root, iid)
        if tree is None:
            rows.append({"instance_id": iid, "error": "checkout_failed"})
            continue
        rows.append(score(g, pred, tree, iid in args.end_exclusive))
    with open(args.out, "wb") as out:
        for row in rows:
            out.write(orjson.dumps(row) + b"\n")
        if args.garble:
            out.write(b"{not json\n")
    scored = [r for r in rows if "error" not in r]
    print(f"instances: {len(rows)}, scored: {len(scored)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
