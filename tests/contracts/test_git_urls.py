"""Issue 27: a ``repo`` case whose git URL had the host ``..`` made the mirror cache write a lock
file (and directories) into the data directory above it. The URL is now refused where a case is
validated (naming the field) and again where the mirror path is joined, writing nothing."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from pydantic import ValidationError

from benchbook.contracts import Dataset
from benchbook.runtime.environments.repo import RepoError, ensure_commit, mirror_path

BAD = [
    "https://../o/r.git",
    "https://./o/r.git",
    "https://a..b/o/r.git",
    "https://%2e%2e/o/r.git",
    "https://x/o//r.git",
    "https://x/o/..%2f/r.git",
    "https://x/.hidden/r.git",
    "https://x/o/.git",
    "https://x/",
    "https://x/a/b.git?ref=main",
    "https://user@x/a/b.git",
]
GOOD = ["https://github.com/acme/widget.git", "http://127.0.0.1:8443/a/b", " https://x/a/b/ "]


def _repo_case(url: str) -> dict[str, object]:
    source = {"git": url, "ref": "main"}
    return {"id": "c1", "env": {"kind": "repo", "source": source}, "task": "fix it"}


@pytest.mark.parametrize("url", BAD)
def test_a_repo_case_naming_a_bad_host_or_path_is_refused_naming_the_field(url: str) -> None:
    with pytest.raises(ValidationError) as caught:
        Dataset.model_validate({"id": "d", "version": "1.0.0", "cases": [_repo_case(url)]})
    (error,) = [e for e in caught.value.errors() if e["loc"][-2:] == ("GitSource", "git")]
    assert "host" in error["msg"] or "path" in error["msg"], error


@pytest.mark.parametrize("url", GOOD)
def test_ordinary_repository_urls_are_accepted(url: str, tmp_path: Path) -> None:
    Dataset.model_validate({"id": "d", "version": "1.0.0", "cases": [_repo_case(url)]})
    assert mirror_path(tmp_path, url.strip()).is_relative_to(tmp_path)


@pytest.mark.parametrize("url", BAD)
def test_the_mirror_path_of_a_bad_url_is_refused_and_nothing_is_written(
    url: str, tmp_path: Path
) -> None:
    mirrors = tmp_path / "home" / "mirrors"
    mirrors.mkdir(parents=True)
    with pytest.raises(RepoError, match="cannot mirror"):
        asyncio.run(ensure_commit(mirror_path(mirrors, url), url, "main"))
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["home", "mirrors"]
