"""Source rows → cases (SPEC E.3): the hot path of every import.

:class:`CaseBuilder` turns one row into a case dict, :func:`case_rows` streams
``(case_id, canonical body, sha256)`` rows for ``services.datasets.store_version`` without
keeping rows or cases alive. Rules:

- **id**: the ``id_field`` value as text; without an id field, ``<dataset id>-<row index>``
  (0-based over the rows read).
- **task**: ``task_template`` rendered, else the ``task_field`` value as text. Empty or
  whitespace-only text is a row error: a blank task is not a case.
- **expected**: the ``answer_field`` value as it is, with its JSON type (string, number,
  boolean, null, list, object); with ``answer_pattern`` (a regex) the first group of its first
  match in the value's text form (the whole match when it has no group). No match is a row error.
- **env** (``env: auto``): a git field, repo path or files template → ``repo``; a start-url field
  or constant → ``browser``; an answer field → ``prompt``; otherwise ``browser``. A git value
  written ``owner/name`` means ``https://github.com/owner/name.git``.
- **metadata**: ``"*"`` = every column except the id, task and answer columns and the fields a
  ``task_template`` uses; or the listed columns that the row has. ``gold_fields`` are always kept
  and must be present; ``flag_fields`` are parsed into booleans (``"0.0"`` → false, ``""`` → null).
- **graders**: the recipe's grader templates rendered per row, then ``extra_graders``, then a
  ``command`` grader from ``test_cmd_field``.

The per-value rules (:class:`RowError`, :func:`resolve_env`, :func:`parse_flag`,
:func:`git_url`, :func:`missing_field`) live in :mod:`benchbook.datasets.mapping_rules` and are
re-exported here.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, MutableSequence
from hashlib import sha256
from typing import Any

from pydantic import ValidationError

from benchbook.contracts.recipe import GraderTemplate, Mapping
from benchbook.datasets.case_bodies import CaseCanonicalizer
from benchbook.datasets.mapping_rules import (
    RowError,
    answer_pattern,
    git_url,
    missing_field,
    parse_flag,
    resolve_env,
)
from benchbook.datasets.sources.base import Row
from benchbook.datasets.templates import (
    MissingField,
    Template,
    compile_template,
    is_missing,
    lookup,
    value_text,
)
from benchbook.errors import InvalidInput
from benchbook.user_patterns import PatternTimeout

CaseRow = tuple[str, bytes, str]
CaseHook = Callable[[dict[str, Any], Row], None]
MAX_FAILURES = 10
MAX_ID_CHARS = 512


def _compile_config(value: Any, where: str) -> Any:
    if isinstance(value, str):
        return compile_template(value, where)
    if isinstance(value, dict):
        return {k: _compile_config(v, f"{where}.{k}") for k, v in value.items()}
    if isinstance(value, list):
        return [_compile_config(v, f"{where}.{i}") for i, v in enumerate(value)]
    return value


def _has_template(value: Any) -> bool:
    if isinstance(value, Template):
        return bool(value.fields)
    if isinstance(value, dict):
        return any(_has_template(v) for v in value.values())
    if isinstance(value, list):
        return any(_has_template(v) for v in value)
    return False


def _render_config(value: Any, row: Row) -> Any:
    if isinstance(value, Template):
        return value.render(row)
    if isinstance(value, dict):
        return {k: _render_config(v, row) for k, v in value.items()}
    if isinstance(value, list):
        return [_render_config(v, row) for v in value]
    return value


class CaseBuilder:
    """Builds case dicts from rows with one mapping; templates are compiled once here.

    Args:
        mapping: the SPEC E.3 mapping.
        dataset_id: used for positional ids ``<dataset id>-<index>``.
        grader_templates: the recipe's per-row grader templates.
        hook: an optional catalog hook ``hook(case_dict, row)`` that edits the case in place.

    Raises:
        InvalidInput: a template or ``answer_pattern`` does not compile (naming the mapping key).
    """

    def __init__(
        self,
        mapping: Mapping,
        dataset_id: str,
        grader_templates: Iterable[GraderTemplate] = (),
        hook: CaseHook | None = None,
    ) -> None:
        self.mapping = mapping
        self.dataset_id = dataset_id
        self.env_kind = resolve_env(mapping)
        self.hook = hook
        m = mapping
        self.task = (
            compile_template(m.task_template, "mapping.task_template") if m.task_template else None
        )
        self.image = compile_template(m.image, "mapping.image") if m.image else None
        self.files = {
            path: compile_template(t, f"mapping.files_template.{path}")
            for path, t in (m.files_template or {}).items()
        }
        self.pattern = answer_pattern(m.answer_pattern)
        self.canon = CaseCanonicalizer()
        self.graders: list[Any] = []
        for i, g in enumerate(grader_templates):
            config = _compile_config(g.config, f"grader_templates.{i}.config")
            if _has_template(config):
                self.graders.append((g.id, config))
            else:
                self.graders.append(self.canon.constant({"id": g.id, "config": g.config}, "grader"))
        self.graders.extend(
            self.canon.constant(g.model_dump(mode="json"), "grader") for g in m.extra_graders
        )
        self.placement = (
            self.canon.constant(m.placement.model_dump(mode="json"), "placement")
            if m.placement
            else None
        )
        self.fixed_env = self._fixed_env()
        mapped = {
            m.id_field,
            m.task_field,
            m.answer_field,
            *(self.task.fields if self.task else []),
        }
        self.skip_in_metadata = {f for f in mapped if f}
        self._hot = _HotFields(self)

    def build(self, index: int, row: Row) -> dict[str, Any]:
        """The case dict for the row at 0-based ``index``. Raises RowError.

        Without a hook the dict is canonical (``Case`` defaults filled, values checked), which
        lets :func:`case_row` skip re-validation; a hook gets a plain dict to edit.
        """
        hot = self._hot
        case: dict[str, Any] = hot.base.copy() if self.hook is None else {}
        try:
            case["id"] = f"{self.dataset_id}-{index}" if hot.positional else self._id(index, row)
            case["env"] = self.fixed_env if self.fixed_env is not None else self._env(row)
            task = row.get(hot.task_field) if hot.task_field else None
            task = task if type(task) is str else self._task(row)
            if not task or task.isspace():  # a blank task is not a case (issue 8)
                raise RowError(f"task is empty ({self._task_source()} gives blank text)")
            case["task"] = task
            if hot.answer_field:
                case["expected"] = self._expected(row)
            self._extras(case, row)
        except MissingField as exc:
            raise missing_field(exc.field, row) from exc
        if self.hook is not None:
            self.hook(case, row)
        return case

    def _task_source(self) -> str:
        m = self.mapping
        return (
            f"task_template {m.task_template!r}" if m.task_template else f"field {m.task_field!r}"
        )

    def _task(self, row: Row) -> str:
        return self.task.render(row) if self.task else self._required(row, self.mapping.task_field)

    def _required(self, row: Row, field: str | None) -> str:
        value = row.get(field) if field else None
        if type(value) is str:
            return value
        value = lookup(row, field or "")
        if is_missing(value) or value is None:
            raise missing_field(field, row)
        return value_text(value)

    def _id(self, index: int, row: Row) -> str:
        if not self.mapping.id_field:
            return f"{self.dataset_id}-{index}"
        text = self._required(row, self.mapping.id_field)
        if not 0 < len(text) <= MAX_ID_CHARS:
            raise RowError(f"id field {self.mapping.id_field!r} must hold 1-512 characters")
        return text

    def _expected(self, row: Row) -> Any:
        if self.pattern is None:
            # The answer keeps its JSON type (SPEC A): 0, "0", false and null differ.
            value = lookup(row, self.mapping.answer_field or "")
            if is_missing(value):
                raise missing_field(self.mapping.answer_field, row)
            return value
        text = self._required(row, self.mapping.answer_field)
        try:
            match = self.pattern.search(text)
        except PatternTimeout as exc:
            raise RowError(
                f"answer_pattern {self.pattern.pattern!r} took longer than {exc.timeout_s:g} s "
                f"on field {self.mapping.answer_field!r}"
            ) from exc
        if match is None:
            raise RowError(
                f"answer_pattern {self.pattern.pattern!r} does not match "
                f"field {self.mapping.answer_field!r}"
            )
        return (match.group(1 if self.pattern.groups else 0) or "").strip()

    def _fixed_env(self) -> dict[str, Any] | None:
        """The env shared by every row (prompt, os-use, a constant URL or repo path), canonical."""
        m = self.mapping
        kind = self.env_kind
        if kind in ("prompt", "os-use"):
            return self.canon.constant({"kind": kind}, "env")
        if kind == "browser" and not m.start_url_field:
            return self.canon.constant({"kind": kind, "start_url": m.start_url}, "env")
        if kind == "repo" and not (m.git_field or self.files) and m.repo_path:
            return self.canon.constant({"kind": kind, "source": {"path": m.repo_path}}, "env")
        return None

    def _env(self, row: Row) -> dict[str, Any]:
        if self.fixed_env is not None:
            return self.fixed_env
        m = self.mapping
        kind = self.env_kind
        if kind == "browser":
            url = self._required(row, m.start_url_field) if m.start_url_field else m.start_url
            return {"kind": "browser", "start_url": self._url(url) if url else None}
        if kind == "repo":
            if m.git_field:
                git = self._url(git_url(self._required(row, m.git_field)))
                ref = self._required(row, m.ref_field) if m.ref_field else "HEAD"
                if not ref:
                    raise RowError(f"field {m.ref_field!r} is empty")
                source: dict[str, Any] = {"git": git, "ref": ref}
            elif self.files:
                source = {"files": {p: t.render(row) for p, t in self.files.items()}}
            elif m.repo_path:
                source = {"path": m.repo_path}
            else:
                raise RowError("a repo env needs git_field, files_template or repo_path")
            return {"kind": "repo", "source": source, "setup": []}
        return {"kind": kind}

    def _url(self, value: str) -> str:
        if self.hook is not None:  # the hook may still fix it; the case is validated after
            return value
        try:
            return self.canon.url(value)
        except ValueError as exc:
            raise RowError(f"url {exc}") from exc

    def _extras(self, case: dict[str, Any], row: Row) -> None:
        hot = self._hot
        if hot.plain_extras:  # only metadata varies; the constants are in ``hot.base``
            case["metadata"] = self._metadata(row)
            return
        m = self.mapping
        if m.tag_fields:
            tags = self._tags(row)
            if tags:
                try:
                    case["tags"] = self.canon.tags(tags)
                except ValueError as exc:
                    raise RowError(str(exc)) from exc
        if m.image_field:
            case["image"] = self._required(row, m.image_field)
        elif self.image is not None:
            case["image"] = self.image.render(row)
        if self.placement is not None:
            case["placement"] = self.placement
        case["metadata"] = self._metadata(row)
        if m.gold_fields:
            case["gold_fields"] = list(m.gold_fields)
        if self.graders or m.test_cmd_field:
            graders = [
                g if isinstance(g, dict) else _rendered(g[0], _render_config(g[1], row))
                for g in self.graders
            ]
            if m.test_cmd_field:
                graders.append(_rendered("command", {"cmd": self._required(row, m.test_cmd_field)}))
            case["graders"] = graders

    def _tags(self, row: Row) -> list[str]:
        tags: list[str] = []
        for field in self.mapping.tag_fields:
            value = lookup(row, field)
            values = value if isinstance(value, list) else [value]
            tags.extend(value_text(v) for v in values if not is_missing(v) and v not in (None, ""))
        return tags

    def _metadata(self, row: Row) -> dict[str, Any]:
        m = self.mapping
        if self._hot.all_metadata:
            skip = self.skip_in_metadata
            meta = {k: v for k, v in row.items() if k not in skip}
        else:
            meta = {k: row[k] for k in m.metadata_fields if k in row}
        for field in m.gold_fields:
            if field in row:  # the common case: a top-level column
                meta[field] = row[field]
                continue
            value = lookup(row, field)
            if is_missing(value):
                raise RowError(f"gold field {field!r} is missing")
            meta[field] = value
        for field in m.flag_fields:
            value = lookup(row, field)
            if is_missing(value):
                continue
            try:
                meta[field] = parse_flag(value)
            except ValueError as exc:
                raise RowError(f"flag field {field!r} is not a flag: {value!r}") from exc
        return meta


class _HotFields:
    """What :meth:`CaseBuilder.build` reads per row, resolved once per import.

    ``base`` is the ``Case`` defaults plus every per-import constant (placement, gold fields,
    constant graders): without a hook, a row's case starts as a shallow copy of it and only the
    varying fields are set. ``plain_extras`` is True when metadata is the only varying extra.
    """

    def __init__(self, builder: CaseBuilder) -> None:
        m = builder.mapping
        self.positional = not m.id_field
        self.task_field = m.task_field if builder.task is None else None
        self.answer_field = m.answer_field
        self.all_metadata = m.metadata_fields == "*"
        const_graders = all(isinstance(g, dict) for g in builder.graders)
        self.plain_extras = (
            builder.hook is None
            and not m.tag_fields
            and not m.image_field
            and builder.image is None
            and not m.test_cmd_field
            and const_graders
        )
        self.base: dict[str, Any] = builder.canon.defaults.copy()
        if self.plain_extras:
            if builder.placement is not None:
                self.base["placement"] = builder.placement
            if m.gold_fields:
                self.base["gold_fields"] = list(m.gold_fields)
            if builder.graders:
                self.base["graders"] = list(builder.graders)


def _rendered(grader_id: str, config: dict[str, Any]) -> dict[str, Any]:
    return {"id": grader_id, "config": config, "direction": None}


def case_row(builder: CaseBuilder, case: dict[str, Any]) -> CaseRow:
    """Validate a built case; return ``(id, canonical body, sha256)``.

    The body equals ``case_body(Case.model_validate(case))`` (see ``datasets/case_bodies.py``).

    Raises:
        RowError: the case is invalid, naming the first field path.
    """
    try:
        body = builder.canon.body(case, trusted=builder.hook is None)
    except ValidationError as exc:
        first = exc.errors(include_url=False)[0]
        path = ".".join(str(p) for p in first["loc"]) or "case"
        raise RowError(f"{path}: {str(first['msg']).removeprefix('Value error, ')}") from exc
    return case["id"], body, sha256(body).hexdigest()  # = identity.sha256_hex


def case_rows(
    rows: Iterable[tuple[int, Row]],
    builder: CaseBuilder,
    limit: int | None = None,
    on_row: Callable[[int, int], None] | None = None,
    numbers: MutableSequence[int] | None = None,
) -> Iterator[CaseRow]:
    """Stream ``(case_id, body, sha256)`` for each source row, in order.

    ``on_row(rows_read, cases_built)`` is called after each row. After the first failing row nothing
    more is yielded; rows are still checked until :data:`MAX_FAILURES` failures or the end, then
    InvalidInput lists them (``details.errors``: ``{row, path, message}``). The caller's
    transaction must roll back, so a bad row stores nothing. ``numbers`` receives the source's
    row number of each yielded case, in order (for errors that name file lines).
    """
    failures: list[dict[str, Any]] = []
    for index, (number, row) in enumerate(rows):
        if limit is not None and index >= limit:
            break
        try:
            out = case_row(builder, builder.build(index, row))
        except (RowError, ValueError) as exc:
            failures.append({"row": number, "path": f"row {number}", "message": str(exc)})
            if len(failures) >= MAX_FAILURES:
                break
            continue
        if on_row is not None:
            on_row(index + 1, index + 1 - len(failures))
        if not failures:
            if numbers is not None:
                numbers.append(number)
            yield out
    if failures:
        first = failures[0]
        more = f" (and {len(failures) - 1} more failing rows)" if len(failures) > 1 else ""
        raise InvalidInput(
            f"row {first['row']}: {first['message']}{more}; nothing was imported",
            {"errors": failures},
        )


__all__ = [
    "MAX_FAILURES",
    "MAX_ID_CHARS",
    "CaseBuilder",
    "CaseHook",
    "CaseRow",
    "RowError",
    "case_row",
    "case_rows",
    "git_url",
    "missing_field",
    "parse_flag",
    "resolve_env",
]
