"""Canonical case bodies for imports without a full pydantic round trip per row.

``case_body(Case.model_validate(d))`` costs ~25 µs per row (validate + dump), more than parsing,
hashing and storing together, so a 1M-row import would spend most of its time there. Imported
cases have a handful of known shapes, so :class:`CaseCanonicalizer` produces the same canonical
dict directly: the ``Case`` defaults (taken from the model itself), the built fields, and the
varying leaves checked with the contract's own validators (``HttpUrl``, ``ContentTags``).

Anything it does not recognise (a hook that adds milestones, an env it cannot check cheaply)
goes through the full pydantic path, and so do the first row and one row in
:data:`CROSS_CHECK_EVERY`: when the two disagree, the canonicalizer switches itself off and every
later row takes the pydantic path, so a contract change can slow imports down but never change a
stored body.
"""

from __future__ import annotations

import math
import re
from typing import Any

import orjson
from pydantic import TypeAdapter, ValidationError

from benchbook.contracts import Case
from benchbook.contracts.common import ContentTags, HttpUrl
from benchbook.datasets.identity import case_body

CROSS_CHECK_EVERY = 997
_SORTED = orjson.OPT_SORT_KEYS  # the canonical form of ``identity.canonical_json``
_URL: TypeAdapter[str] = TypeAdapter(HttpUrl)
_TAGS: TypeAdapter[list[str]] = TypeAdapter(ContentTags)
_URL_CACHE_MAX = 4096
_STR_FIELDS = ("id", "task")
_OPTIONAL_STR = ("image",)


def _defaults() -> dict[str, Any]:
    return Case.model_validate({"id": "x", "env": {"kind": "prompt"}, "task": ""}).model_dump(
        mode="json"
    )


#: Unicode category Cc, which the contract refuses in case ids.
_CONTROL_CHARS = re.compile(r"[\x00-\x1f\x7f-\x9f]")


#: JSON leaf types that can never be non-finite (checked without a call per value).
_LEAVES = frozenset((str, int, bool, type(None)))


def _finite(value: Any) -> bool:
    """False when a JSON value holds NaN or ±inf (orjson would silently write them as null)."""
    kind = type(value)
    if kind is float:
        return math.isfinite(value)
    if kind is dict:
        values = value.values()
    elif kind is list:
        values = value
    else:
        return True
    for v in values:  # noqa: SIM110 (a loop, not all(<genexpr>): runs for every row)
        if type(v) not in _LEAVES and not _finite(v):
            return False
    return True


def _plain(case: dict[str, Any]) -> bool:
    """False for what the contract rejects but the fast path would store: a case id with a
    control character, metadata with a non-finite number. Such rows take the pydantic path."""
    case_id = case.get("id")
    # printable ASCII (0x20-0x7e) has no control character; anything else is checked fully
    if (
        type(case_id) is str
        and not (case_id.isascii() and case_id.isprintable())
        and _CONTROL_CHARS.search(case_id)
    ):
        return False
    return _finite(case.get("metadata")) and _finite(case.get("expected"))


def _rendered_grader(value: Any) -> bool:
    """A grader rendered from a template: ``{id, config, direction: None}`` with a text id."""
    return (
        type(value) is dict
        and value.keys() == {"id", "config", "direction"}
        and type(value["id"]) is str
        and bool(value["id"])
        and type(value["config"]) is dict
        and value["direction"] is None
    )


class Unrecognised(Exception):
    """The case has a shape the fast path does not check; use pydantic."""


class CaseCanonicalizer:
    """Turns built case dicts into canonical JSON bytes, equal to ``case_body(Case(...))``.

    Raises (from :meth:`body`): ``ValidationError`` / ``ValueError`` for an invalid case, exactly
    as ``Case.model_validate`` would.
    """

    def __init__(self) -> None:
        self.defaults = _defaults()
        self.enabled = True
        self.count = 0
        self._urls: dict[str, str] = {}
        self._constants: dict[int, Any] = {}

    def constant(self, value: dict[str, Any], kind: str) -> dict[str, Any]:
        """Canonicalize a constant sub-object (env, grader, placement) once; returns it and
        remembers its identity so later rows reuse it without checks."""
        if kind == "env":
            canon = Case.model_validate({"id": "x", "env": value, "task": ""}).env.model_dump(
                mode="json"
            )
        elif kind == "grader":
            case = Case.model_validate({"id": "x", "env": {"kind": "prompt"}, "task": ""})
            case = Case.model_validate({**case.model_dump(), "graders": [value]})
            canon = case.graders[0].model_dump(mode="json")
        else:
            case = Case.model_validate(
                {"id": "x", "env": {"kind": "prompt"}, "task": "", kind: value}
            )
            canon = case.model_dump(mode="json")[kind]
        self._constants[id(canon)] = canon
        return canon

    def body(self, case: dict[str, Any], trusted: bool = False) -> bytes:
        """Canonical JSON bytes of ``case`` (see the module docstring).

        ``trusted`` means the caller built ``case`` from :attr:`defaults` with canonical, checked
        values (``CaseBuilder`` without a hook), so only the sampled cross-check runs.
        """
        self.count += 1
        check = self.count == 1 or self.count % CROSS_CHECK_EVERY == 0
        if not self.enabled:
            return case_body(Case.model_validate(case))
        try:
            if not _plain(case):
                raise Unrecognised("id or metadata")
            fast = orjson.dumps(case if trusted else self._canonical(case), option=_SORTED)
        except (Unrecognised, orjson.JSONEncodeError):  # the latter: an int beyond 64 bits
            return case_body(Case.model_validate(case))
        if check:
            slow = case_body(Case.model_validate(case))
            if slow != fast:
                self.enabled = False
                return slow
        return fast

    def _canonical(self, case: dict[str, Any]) -> dict[str, Any]:
        out = dict(self.defaults)
        for key, value in case.items():
            if key not in out:
                raise Unrecognised(key)
            out[key] = value
        for key in _STR_FIELDS:
            if type(out[key]) is not str:
                raise Unrecognised(key)
        if not 0 < len(out["id"]) <= 512:
            raise Unrecognised("id")
        for key in _OPTIONAL_STR:
            if out[key] is not None and type(out[key]) is not str:
                raise Unrecognised(key)
        out["env"] = self._env(out["env"])
        for key in ("graders", "placement"):
            value = out[key]
            if value and not self._known(value):
                raise Unrecognised(key)
        if out["tags"]:
            out["tags"] = _TAGS.validate_python(out["tags"])
        if type(out["metadata"]) is not dict or type(out["gold_fields"]) is not list:
            raise Unrecognised("metadata")
        meta = out["metadata"]
        if any(k not in meta for k in out["gold_fields"]):
            raise Unrecognised("gold_fields")
        for key in ("milestones", "resources", "network"):
            if out[key] is not None:
                raise Unrecognised(key)
        if out["timeout_s"] != self.defaults["timeout_s"]:
            raise Unrecognised("timeout_s")
        return out

    def _known(self, value: Any) -> bool:
        if isinstance(value, list):
            return all(id(v) in self._constants or _rendered_grader(v) for v in value)
        return id(value) in self._constants

    def _env(self, env: dict[str, Any]) -> dict[str, Any]:
        if id(env) in self._constants:
            return env
        kind = env.get("kind")
        if kind == "browser" and env.keys() == {"kind", "start_url"}:
            url = env["start_url"]
            return {"kind": "browser", "start_url": None if url is None else self._url(url)}
        if kind == "repo" and env.keys() == {"kind", "source"}:
            source = env["source"]
            if source.keys() == {"git", "ref"} and type(source["ref"]) is str and source["ref"]:
                git = {"git": self._url(source["git"]), "ref": source["ref"]}
                return {"kind": "repo", "source": git, "setup": []}
        raise Unrecognised("env")

    def _url(self, value: Any) -> str:
        if type(value) is not str:
            raise Unrecognised("url")
        try:
            return self.url(value)
        except ValueError as exc:
            raise Unrecognised("url") from exc

    def url(self, value: str) -> str:
        """The canonical form of an http(s) URL (cached). Raises ValueError when it is not one."""
        cached = self._urls.get(value)
        if cached is None:
            try:
                cached = _URL.validate_python(value)
            except ValidationError as exc:
                message = exc.errors(include_url=False)[0]["msg"].removeprefix("Value error, ")
                raise ValueError(f"{value[:80]!r} {message}") from None
            if len(self._urls) < _URL_CACHE_MAX:
                self._urls[value] = cached
        return cached

    @staticmethod
    def tags(values: list[str]) -> list[str]:
        """Content tags cleaned as the contract does. Raises ValueError."""
        try:
            return _TAGS.validate_python(values)
        except ValidationError as exc:
            message = exc.errors(include_url=False)[0]["msg"].removeprefix("Value error, ")
            raise ValueError(f"tags: {message}") from None
