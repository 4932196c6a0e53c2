"""Case rows built in a second process (``datasets/row_worker.py``, issue 15 item 2) are the rows,
source numbers, progress calls and errors of the in-process ``case_rows``."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest

from benchbook.contracts import Recipe
from benchbook.datasets.mapping import CaseBuilder, case_rows
from benchbook.datasets.row_worker import (
    CHUNK_ROWS,
    PIPE_BYTES,
    READ_AHEAD_BYTES,
    WORKER_MIN_BYTES,
    CaseRowWorker,
    WorkerDied,
    worker_fits,
)
from benchbook.datasets.sources.files import FileSource
from benchbook.errors import InvalidInput

PAD = "x" * 420  # ~500 bytes a line: 2,500 lines pass WORKER_MIN_BYTES


def _builder() -> CaseBuilder:
    recipe = Recipe.model_validate(
        {"id": "rows", "source": {"kind": "file"}, "mapping": {"task_field": "q", "id_field": "id"}}
    )
    return CaseBuilder(recipe.mapping, "rows", recipe.grader_templates)


def _write(path: Path, lines: list[bytes]) -> Path:
    path.write_bytes(b"".join(line + b"\n" for line in lines))
    return path


def _line(i: int, **extra: Any) -> bytes:
    return orjson.dumps({"id": f"c{i}", "q": f"question {i} {PAD}", **extra})


def _in_process(path: Path, limit: int | None = None) -> dict[str, Any]:
    calls: list[tuple[int, int]] = []
    numbers: list[int] = []
    out: dict[str, Any] = {"rows": [], "calls": calls, "numbers": numbers, "error": None}
    source = FileSource(path)
    try:
        for row in case_rows(source.rows(), _builder(), limit, _call_log(calls), numbers):
            out["rows"].append(row)
    except InvalidInput as exc:
        out["error"] = (type(exc), exc.message, exc.details)
    return out


def _in_worker(path: Path, limit: int | None = None) -> dict[str, Any]:
    calls: list[tuple[int, int]] = []
    numbers: list[int] = []
    out: dict[str, Any] = {"rows": [], "calls": calls, "numbers": numbers, "error": None}
    with CaseRowWorker(FileSource(path), _builder(), limit) as worker:
        try:
            for row in worker.rows(_call_log(calls), numbers):
                out["rows"].append(row)
        except InvalidInput as exc:
            out["error"] = (type(exc), exc.message, exc.details)
    return out


def _call_log(calls: list[tuple[int, int]]) -> Any:
    return lambda read, built: calls.append((read, built))


def _reported(calls: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The calls that can report (``ImportCounter`` reports at multiples of 100) and the last."""
    marked = [c for c in calls if c[0] % 100 == 0]
    return marked + [c for c in calls[-1:] if c not in marked[-1:]]


def test_a_large_local_file_in_a_single_threaded_process_is_built_by_the_worker(
    tmp_path: Path,
) -> None:
    big = _write(tmp_path / "big.jsonl", [_line(i) for i in range(2500)])
    small = _write(tmp_path / "small.jsonl", [_line(i) for i in range(10)])
    assert big.stat().st_size >= WORKER_MIN_BYTES > small.stat().st_size
    alone = threading.active_count() == 1  # a test before may have left a thread running
    assert worker_fits(FileSource(big)) is (alone and len(os.sched_getaffinity(0)) >= 2)
    assert not worker_fits(FileSource(small))
    stop = threading.Event()
    other = threading.Thread(target=stop.wait)
    other.start()
    try:  # a process with other threads (a server) never forks
        assert not worker_fits(FileSource(big))
    finally:
        stop.set()
        other.join()


@pytest.mark.parametrize("limit", [None, 2 * CHUNK_ROWS + 34])
def test_the_worker_yields_the_rows_numbers_and_progress_of_case_rows(
    no_child_left: Callable[[], bool], tmp_path: Path, limit: int | None
) -> None:
    lines = [_line(i) for i in range(5 * CHUNK_ROWS + 777)]
    lines[5:5] = [b"", b"   "]  # blank lines: numbers are physical lines
    path = _write(tmp_path / "rows.jsonl", lines)
    here, there = _in_process(path, limit), _in_worker(path, limit)
    assert there["error"] is None
    assert there["rows"] == here["rows"] and len(here["rows"]) == (limit or 5 * CHUNK_ROWS + 777)
    assert there["numbers"] == here["numbers"] and here["numbers"][5] == 8
    assert there["calls"] == _reported(here["calls"])
    assert no_child_left()


def test_bad_rows_deep_in_the_file_raise_the_same_error_with_their_lines(
    no_child_left: Callable[[], bool], tmp_path: Path
) -> None:
    lines = [_line(i) for i in range(3000)]
    lines[2499] = orjson.dumps({"id": "c2499", "q": ""})  # line 2500: empty task
    lines[2800] = orjson.dumps({"id": "c2800", "nothing": PAD})  # line 2801: no task field
    path = _write(tmp_path / "rows.jsonl", lines)
    here, there = _in_process(path), _in_worker(path)
    assert here["error"] is not None and there["error"] == here["error"]
    assert [e["row"] for e in there["error"][2]["errors"]] == [2500, 2801]
    assert there["calls"] == _reported(here["calls"])  # rows after the first failure still count
    assert no_child_left()


def test_a_malformed_line_raises_the_source_error_naming_it(tmp_path: Path) -> None:
    lines = [_line(i) for i in range(2600)]
    lines[2555] = b'{"id": "c", "q": "x", "q": "y"}'
    path = _write(tmp_path / "rows.jsonl", lines)
    here, there = _in_process(path), _in_worker(path)
    assert there["error"] == here["error"]
    assert "line 2556" in there["error"][1] and "duplicate key 'q'" in there["error"][1]
    assert len(there["rows"]) == len(here["rows"]) == 2555


def test_leaving_the_stream_early_stops_and_reaps_the_child(
    no_child_left: Callable[[], bool], tmp_path: Path
) -> None:
    path = _write(tmp_path / "rows.jsonl", [_line(i) for i in range(3 * CHUNK_ROWS)])
    with CaseRowWorker(FileSource(path), _builder(), None) as worker:
        stream = worker.rows()
        first = next(stream)
    assert first[0] == "c0"
    assert no_child_left()
    with pytest.raises(RuntimeError, match="outside its with-block"):
        next(worker.rows())


def test_a_child_that_dies_is_an_error_not_a_short_stream(
    no_child_left: Callable[[], bool], tmp_path: Path
) -> None:
    path = _write(tmp_path / "rows.jsonl", [_line(i) for i in range(3 * CHUNK_ROWS)])
    with CaseRowWorker(FileSource(path), _builder(), None) as worker:
        assert worker._pid is not None
        os.kill(worker._pid, 9)
        with pytest.raises(WorkerDied):
            list(worker.rows())
    assert no_child_left()


def test_the_child_keeps_building_while_the_parent_is_busy_elsewhere(
    no_child_left: Callable[[], bool], tmp_path: Path
) -> None:
    """The parent's reading thread drains the pipe while the parent does other work (waits on
    its database), so the child finishes a file whose rows do not fit in the pipe before the
    parent has consumed more than the first row. Red when the parent read the pipe only as it
    consumed rows: the child waited on the full pipe."""
    chunks = 12
    path = _write(tmp_path / "rows.jsonl", [_line(i) for i in range(chunks * CHUNK_ROWS)])
    assert 2 * PIPE_BYTES < path.stat().st_size < READ_AHEAD_BYTES // 2
    with CaseRowWorker(FileSource(path), _builder(), None) as worker:
        stream = worker.rows()
        assert next(stream)[0] == "c0"
        pid = worker._pid
        assert pid is not None
        deadline = time.monotonic() + 20
        exited = None  # WNOWAIT: looked at, left for close() to reap
        while exited is None and time.monotonic() < deadline:
            exited = os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
            time.sleep(0.02)
        assert exited is not None, "the child was still building: nothing drained the pipe"
        assert exited.si_status == 0
        rest = list(stream)
    assert len(rest) == chunks * CHUNK_ROWS - 1
    assert rest[-1][0] == f"c{chunks * CHUNK_ROWS - 1}"
    assert no_child_left()


def test_what_the_parent_reads_ahead_is_bounded_in_bytes_not_in_chunks(
    no_child_left: Callable[[], bool], tmp_path: Path
) -> None:
    """Chunks of 500 large rows (~20 MB each) are held one at a time beyond the byte bound: the
    reader takes one chunk whatever its size, then waits, so the child waits too. Red when the
    read-ahead was counted in chunks (40): the parent took the whole ~80 MB file in."""
    big = "y" * 40_000
    path = _write(tmp_path / "big.jsonl", [_line(i, pad=big) for i in range(4 * CHUNK_ROWS)])
    with CaseRowWorker(FileSource(path), _builder(), None) as worker:
        stream = worker.rows()
        assert next(stream)[0] == "c0"
        pid = worker._pid
        assert pid is not None
        time.sleep(3)  # ample for the child to build all of it, were it not waiting
        exited = os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
        assert exited is None, "the child finished: the parent had taken every chunk in"
        assert 0 < worker._held <= READ_AHEAD_BYTES + 2 * CHUNK_ROWS * len(big)
        rest = sum(1 for _ in stream)
    assert rest == 4 * CHUNK_ROWS - 1
    assert no_child_left()
