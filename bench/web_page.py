"""Server time of the dataset page for a 100k-case dataset (issue 5: well under 300 ms).

``.venv/bin/python -m bench.web_page [--cases N] [--database-url URL]`` registers a GSM8K-like
dataset of N cases (default 100,000) into a fresh SQLite file (or the given database), then
requests the dashboard's pages in-process through the ASGI app (no network, no browser) and
prints the median and p95 of 20 requests each: the dataset page (first five cases, versions,
lineage, activity), its second keyset page of 50 cases, a page deep in the version with a
metadata column, the datasets list, and a list search that matches nothing (so it reads every
case body of the latest versions for case tags) beside the dataset page's case search that
matches nothing (the same full scan of one version's bodies).
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from fastapi.testclient import TestClient

from benchbook.app import create_app
from benchbook.contracts import Case, Dataset
from benchbook.contracts.dataset import PromptEnv
from benchbook.datasets.identity import case_body, dataset_meta, sha256_hex
from benchbook.services.context import local_admin_context
from benchbook.services.datasets import store_version
from benchbook.settings import Settings


def _rows(n: int) -> Iterator[tuple[str, bytes, str]]:
    for i in range(n):
        case = Case(
            id=f"q{i:06d}",
            env=PromptEnv(),
            task=f"Natalia sold clips to {i} of her friends in April. How many clips? " * 3,
            expected=str(i),
            metadata={"answer": f"She sold {i} clips.\n#### {i}"},
        )
        body = case_body(case)
        yield case.id, body, sha256_hex(body)


def _timed(client: TestClient, url: str, repeat: int = 20) -> tuple[float, float]:
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        response = client.get(url)
        samples.append((time.perf_counter() - start) * 1000)
        assert response.status_code == 200, (url, response.status_code)
    samples.sort()
    return statistics.median(samples), samples[int(len(samples) * 0.95) - 1]


def main() -> None:
    """Build the dataset, time the pages, print one line per page (ms)."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--cases", type=int, default=100_000)
    parser.add_argument("--database-url", default=None)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        settings = Settings(home=Path(tmp), database_url=args.database_url)
        app = create_app(settings)
        ctx = local_admin_context(app.state.engine, settings)
        meta = dataset_meta(Dataset(id="big", version="1.0.0", cases=[]))
        start = time.perf_counter()
        store_version(ctx, "big", "1.0.0", meta, _rows(args.cases))
        print(f"registered {args.cases:,} cases in {time.perf_counter() - start:.1f} s")
        with TestClient(app) as client:
            for label, url in (
                ("dataset page", "/datasets/big"),
                ("dataset page, second case page", "/datasets/big?after=5"),
                ("cases 90,001-90,050 + 1 column", "/datasets/big?after=90000&col=answer"),
                ("datasets list", "/datasets"),
                ("dataset page, case search (scan)", "/datasets/big?q=nomatch"),
                ("datasets list, case-tag search", "/datasets?q=nomatch"),
            ):
                median, p95 = _timed(client, url)
                print(f"{label:32} median {median:7.1f} ms   p95 {p95:7.1f} ms")
        app.state.engine.dispose()


if __name__ == "__main__":
    main()
