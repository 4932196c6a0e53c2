"""Talking to Hugging Face: endpoints, token, bounded retries and the error mapping (SPEC E.2).

Both services are reached over HTTP with ``httpx`` (the viewer's JSON routes, the Hub's repo info
and search); file downloads and tree listings go through ``huggingface_hub`` with ``endpoint=`` so
the same code works against any Hub (``HF_ENDPOINT``). Response shapes and status codes follow
``huggingface/dataset-viewer`` (``libapi``) and ``huggingface_hub`` (``hf_raise_for_status``); see
``docs/huggingface.md``.

Error mapping (every failure is a ``BenchbookError``):

- no connection / timeout → ``UpstreamError("cannot reach Hugging Face (…)")``;
- 401/403 on a gated repo, or 401/403 with a token → ``UpstreamError`` saying the dataset may be
  gated, where to accept its terms and where to set ``HF_TOKEN``;
- 401 ``RepoNotFound`` without a token, and 404 → ``NotFound``;
- viewer 501 ``DatasetWithScriptNotSupportedError`` → ``InvalidInput`` (loading script);
- other viewer 5xx answers that are not transient → ``ViewerUnavailable`` (the caller falls
  back to the raw files);
- 429 and transient 5xx are retried with exponential backoff, at most ``max_attempts`` times.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import quote

import httpx

from benchbook.errors import InvalidInput, NotFound, UpstreamError
from benchbook.settings import Settings

T = TypeVar("T")
RETRY_STATUSES = {429, 500, 502, 503, 504}
# 500s carrying one of these codes are about the dataset itself: retrying cannot help.
PERMANENT_CODES = {
    "EmptyDatasetError",
    "DatasetGenerationError",
    "ConfigNamesError",
    "StreamingRowsError",
    "TooBigContentError",
    "FeaturesError",
    "InfoError",
}
SCRIPT_CODE = "DatasetWithScriptNotSupportedError"


class ViewerUnavailable(UpstreamError):
    """The dataset viewer does not serve this dataset (disabled, too big, failed conversion)."""


@dataclass(frozen=True)
class HfHub:
    """Where and as whom to reach Hugging Face.

    Attributes:
        endpoint: Hub base URL (``Settings.hf_endpoint``, e.g. ``https://huggingface.co``).
        viewer_endpoint: dataset-viewer base URL (``Settings.hf_viewer_endpoint``).
        token: sent as ``Authorization: Bearer`` when set (resolved by the caller from secrets).
        cache_dir: ``huggingface_hub`` download cache; its default cache when None.
        timeout_s: per-request timeout in seconds.
        max_attempts: tries per request on 429 / transient 5xx / network errors (≥ 1).
        backoff_s: first retry delay in seconds, doubled each time up to ``backoff_max_s``;
            a ``Retry-After`` header (seconds) is honoured within that cap.
    """

    endpoint: str = "https://huggingface.co"
    viewer_endpoint: str = "https://datasets-server.huggingface.co"
    token: str | None = None
    cache_dir: Path | None = None
    timeout_s: float = 30.0
    max_attempts: int = 5
    backoff_s: float = 0.5
    backoff_max_s: float = 8.0

    @classmethod
    def from_settings(
        cls, settings: Settings, token: str | None = None, cache_dir: Path | None = None
    ) -> HfHub:
        """Endpoints from ``settings``; downloads cached under ``<home>/cache/huggingface``."""
        return cls(
            endpoint=settings.hf_endpoint.rstrip("/"),
            viewer_endpoint=settings.hf_viewer_endpoint.rstrip("/"),
            token=token,
            cache_dir=cache_dir or Path(settings.home) / "cache" / "huggingface",
        )

    def client(self) -> httpx.Client:
        """An ``httpx.Client`` carrying the token; close it (use ``with``)."""
        headers = {"Authorization": f"Bearer {self.token}"} if self.token else {}
        return httpx.Client(headers=headers, timeout=self.timeout_s, follow_redirects=True)

    def dataset_page(self, dataset: str) -> str:
        """The dataset's page on the Hub, where its terms are accepted."""
        return f"{self.endpoint.rstrip('/')}/datasets/{dataset}"

    def get_json(
        self,
        client: httpx.Client,
        url: str,
        dataset: str,
        params: dict[str, Any] | None = None,
        gated: bool = False,
    ) -> tuple[Any, httpx.Headers]:
        """GET ``url`` and parse JSON, retrying 429 / transient 5xx / network errors.

        Args:
            dataset: the repo id, for error messages.
            gated: the repo is known to be gated (the viewer answers 404 to a token without
                access, which then means "not granted" rather than "missing").

        Returns:
            ``(body, headers)``.

        Raises:
            UpstreamError, NotFound, InvalidInput, ViewerUnavailable: see the module docstring.
        """
        for attempt in range(1, self.max_attempts + 1):
            try:
                response = client.get(url, params=params)
            except httpx.InvalidURL as exc:  # e.g. control characters in a dataset id
                raise InvalidInput(
                    f"dataset {dataset[:80]!r} does not make a valid Hugging Face URL: {exc}",
                    {"errors": [{"path": "dataset", "message": str(exc)}]},
                ) from exc
            except httpx.TransportError as exc:
                if attempt == self.max_attempts:
                    raise UpstreamError(
                        f"cannot reach Hugging Face ({url}: {type(exc).__name__}: {exc})",
                        {"url": url, "attempts": attempt},
                    ) from exc
                self._sleep(attempt, None)
                continue
            if response.is_success:
                return response.json(), response.headers
            code = response.headers.get("X-Error-Code", "")
            transient = response.status_code in RETRY_STATUSES and code not in PERMANENT_CODES
            if not transient or attempt == self.max_attempts:
                raise self.failure(response, dataset, gated, attempt)
            self._sleep(attempt, response.headers.get("Retry-After"))
        raise AssertionError("unreachable")  # pragma: no cover

    def _sleep(self, attempt: int, retry_after: str | None) -> None:
        delay = min(self.backoff_s * 2 ** (attempt - 1), self.backoff_max_s)
        if retry_after is not None and retry_after.strip().isdigit():
            delay = min(max(delay, float(retry_after)), self.backoff_max_s)
        time.sleep(delay)

    def failure(
        self, response: httpx.Response, dataset: str, gated: bool, attempts: int = 1
    ) -> Exception:
        """The ``BenchbookError`` for a failed Hub or viewer response."""
        status = response.status_code
        code = response.headers.get("X-Error-Code", "")
        message = _error_text(response)
        details = {"dataset": dataset, "status": status, "error_code": code, "error": message}
        if code == SCRIPT_CODE:
            return script_error(dataset)
        if code == "GatedRepo" or status == 403 or (status == 401 and code != "RepoNotFound"):
            return self.gated_error(dataset, status)
        if status == 401 or (status == 404 and code in ("RepoNotFound", "")):
            return self.not_found(dataset)
        if status == 404 and code == "ExternalAuthenticatedError":
            return self.gated_error(dataset, status) if gated else self.not_found(dataset)
        if status == 404:
            return NotFound(f"Hugging Face: {message} ({dataset}, {code or status})", details)
        if status == 501 or (status == 500 and code in PERMANENT_CODES):
            return ViewerUnavailable(
                f"the dataset viewer does not serve {dataset}: {message} ({code})", details
            )
        return UpstreamError(
            f"Hugging Face answered HTTP {status} for {dataset} after {attempts} attempt(s): "
            f"{message}",
            details,
        )

    def not_found(self, dataset: str) -> NotFound:
        """The dataset does not exist (or is private and the token cannot see it)."""
        hint = "" if self.token else " (if it is private, set an HF_TOKEN secret that can read it)"
        return NotFound(f"Hugging Face dataset {dataset} not found{hint}", {"dataset": dataset})

    def gated_error(self, dataset: str, status: int) -> UpstreamError:
        """The actionable refusal: accept the terms, then set ``HF_TOKEN`` (and where)."""
        sent = "with the token given" if self.token else "without a token"
        return UpstreamError(
            f"Hugging Face refused access to {dataset} (HTTP {status}, {sent}): the dataset may "
            f"be gated. Accept its terms on its Hub page {self.dataset_page(dataset)} while "
            "signed in, then set an HF_TOKEN secret holding a token of that account: your own "
            "(set_secret with scope 'user', PUT /api/secrets/user/HF_TOKEN — any member) or "
            "the workspace's (scope 'workspace', a workspace admin). Your secret is used before "
            "the workspace's; the server's HF_TOKEN environment variable is the last fallback.",
            {
                "dataset": dataset,
                "status": status,
                "token_sent": bool(self.token),
                "page": self.dataset_page(dataset),
                "secret": "HF_TOKEN",
            },
        )

    def call_hub(self, dataset: str, action: Callable[[], T], gated: bool = False) -> T:
        """Run a ``huggingface_hub`` call, translating its errors (see the module docstring)."""
        from huggingface_hub import errors as hf_errors

        try:
            return action()
        except hf_errors.HfHubHTTPError as exc:
            response = getattr(exc, "response", None)
            if response is None:
                raise UpstreamError(f"cannot reach Hugging Face ({exc})") from exc
            status = int(response.status_code)
            if isinstance(exc, hf_errors.GatedRepoError):
                raise self.gated_error(dataset, status) from exc
            if isinstance(exc, hf_errors.RevisionNotFoundError | hf_errors.EntryNotFoundError):
                raise NotFound(f"Hugging Face: {exc}".split("\n")[0] + f" ({dataset})") from exc
            fake = httpx.Response(status, headers=dict(response.headers), content=b"")
            raise self.failure(fake, dataset, gated) from exc
        except (hf_errors.LocalEntryNotFoundError, ConnectionError, TimeoutError) as exc:
            raise UpstreamError(f"cannot reach Hugging Face ({type(exc).__name__}: {exc})") from exc
        except Exception as exc:
            if type(exc).__module__.startswith(("httpx", "httpcore")):
                raise UpstreamError(f"cannot reach Hugging Face ({exc!r})") from exc
            raise

    def download(self, dataset: str, filename: str, revision: str, gated: bool = False) -> Path:
        """Download one repo file (cached) with ``hf_hub_download``; the local path."""
        from huggingface_hub import hf_hub_download

        def fetch() -> str:
            return hf_hub_download(
                dataset,
                filename,
                repo_type="dataset",
                revision=revision,
                endpoint=self.endpoint,
                token=self.token or False,
                cache_dir=self.cache_dir,
                etag_timeout=self.timeout_s,
            )

        return Path(self.call_hub(dataset, fetch, gated))


def _error_text(response: httpx.Response) -> str:
    try:
        body = response.json()
    except ValueError:
        return str(response.headers.get("X-Error-Message", response.reason_phrase))
    if isinstance(body, dict) and isinstance(body.get("error"), str):
        return str(body["error"])
    return response.reason_phrase


def script_error(dataset: str) -> InvalidInput:
    """A dataset that needs a loading script cannot be imported."""
    message = (
        f"{dataset} needs a Python loading script, which Benchbook does not run (nor does the "
        "Hugging Face viewer). Import a data-only copy instead: convert it with the `datasets` "
        "CLI `convert_to_parquet`, or name one of its data files (source.file)."
    )
    return InvalidInput(message, {"errors": [{"path": "source.dataset", "message": message}]})


@dataclass(frozen=True)
class RepoInfo:
    """Hub repo info: the resolved commit ``sha``, ``gated`` (False/"auto"/"manual"), file paths."""

    dataset: str
    sha: str
    gated: bool | str
    files: tuple[str, ...]


def repo_info(hub: HfHub, client: httpx.Client, dataset: str, revision: str = "main") -> RepoInfo:
    """``GET /api/datasets/{id}/revision/{rev}`` → the commit sha the revision resolves to.

    Raises:
        NotFound: unknown dataset or revision. UpstreamError: unreachable / refused.
    """
    url = f"{hub.endpoint}/api/datasets/{dataset}/revision/{quote(revision, safe='')}"
    body, _ = hub.get_json(client, url, dataset)
    sha = body.get("sha") if isinstance(body, dict) else None
    if not isinstance(sha, str) or not sha:
        raise UpstreamError(f"Hugging Face repo info for {dataset} has no commit sha")
    files = tuple(str(s.get("rfilename")) for s in body.get("siblings") or [])
    return RepoInfo(dataset, sha, body.get("gated") or False, files)
