"""Benchbook datasets as other frameworks' datasets (optional extras, imported on first use).

- :func:`to_inspect_dataset` → an Inspect AI ``MemoryDataset`` (extra ``inspect``):
  ``input`` = the task, ``target`` = ``expected`` as text, ``id`` = the case id, ``metadata`` =
  the non-gold metadata plus ``tags``. Gold (``expected``, milestones, graders, the
  ``gold_fields`` metadata keys) never reaches ``input`` or ``metadata``.
- :func:`to_hf_dataset` → a Hugging Face ``datasets.Dataset`` (extra ``hf``) of the flat rows of
  :mod:`benchbook.datasets.flat` (``id``, ``input``, ``target``, ``tags``, ``metadata`` as JSON
  text).

Both read the cases through :meth:`Client.cases` (a keyset page at a time) and raise
ImportError naming the extra when the framework is not installed.
"""

from __future__ import annotations

import importlib
from typing import Any

from benchbook.client.sync import Client
from benchbook.datasets.flat import COLUMNS, flat_row, target_text, visible_metadata


def _need(module: str, extra: str) -> Any:
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise ImportError(
            f"{module} is not installed: pip install 'benchbook[{extra}]' ({exc})"
        ) from exc


def to_inspect_dataset(ref: str, client: Client | None = None, name: str | None = None) -> Any:
    """An Inspect AI ``MemoryDataset`` of every case of ``ref`` (``id@version``).

    Args:
        client: the client to read with (default ``Client()`` from the environment).
        name: the dataset name (default ``id@version`` of the exact version read).

    Raises:
        ImportError: ``inspect_ai`` is missing (extra ``inspect``).
        NotFound: unknown dataset or version.
    """
    dataset_mod = _need("inspect_ai.dataset", "inspect")
    own = client is None
    c = client or Client()
    try:
        view = c.datasets.get(ref, None, 1)
        exact = f"{view.version.id}@{view.version.version}"
        samples = [
            dataset_mod.Sample(
                input=case.task,
                target=target_text(case.expected),
                id=case.id,
                metadata={**visible_metadata(case), "tags": list(case.tags)},
            )
            for case in c.cases(exact)
        ]
    finally:
        if own:
            c.close()
    return dataset_mod.MemoryDataset(samples, name=name or exact, location=f"{c.url}/{exact}")


def to_hf_dataset(ref: str, client: Client | None = None) -> Any:
    """A Hugging Face ``datasets.Dataset`` of the flat rows of every case of ``ref``.

    Raises:
        ImportError: ``datasets`` is missing (extra ``hf``).
        NotFound: unknown dataset or version.
    """
    hf = _need("datasets", "hf")
    columns: dict[str, list[Any]] = {k: [] for k in COLUMNS}
    own = client is None
    c = client or Client()
    try:
        for case in c.cases(ref):
            for key, value in flat_row(case).items():
                columns[key].append(value)
    finally:
        if own:
            c.close()
    features = hf.Features(
        {
            "id": hf.Value("string"),
            "input": hf.Value("string"),
            "target": hf.Value("string"),
            "tags": hf.List(hf.Value("string")),
            "metadata": hf.Value("string"),
        }
    )
    return hf.Dataset.from_dict(columns, features=features)
