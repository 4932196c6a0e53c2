"""Model endpoints are registered, and secrets are bound to hosts (issue 27 item 3), on SQLite and
PostgreSQL, against the local OpenAI-compatible server: a judge's or an ``openai`` harness's
``base_url`` outside the registered endpoints is refused (start, rescore, report), a secret is
sent only to a host it is bound to — checked when the run is planned and again right before the
call — and the server never sees the key otherwise."""

from __future__ import annotations

from typing import Any

import pytest

from benchbook.contracts.run import ReportRunRequest, StartRunRequest
from benchbook.errors import Forbidden, InvalidInput
from benchbook.runtime.egress import host_of
from benchbook.services import datasets as ds
from benchbook.services import (
    endpoints,
    harnesses,
    run_execution,
    run_reports,
    run_results,
    runs,
    scorecards,
)
from benchbook.services.context import Context
from benchbook.services.secrets import list_secrets, set_secret
from tests.eval.test_acceptance_judge import judge, judge_reply, judged_sums
from tests.eval.test_runs import python_harness, rctx  # noqa: F401 (fixture)
from tests.openaiserver import OpenAIServer
from tests.services.test_code_rules import member

KEY = "sk-judge-0123456789"


def authorizations(server: OpenAIServer) -> list[str]:
    return [h.get("authorization", "") for h in server.request_headers]


def request(server: OpenAIServer, harness: str, rubric: str | None = None) -> StartRunRequest:
    spec = judge(server.url, rubric) if rubric else judge(server.url)
    return StartRunRequest(dataset="judged", harness=harness, graders=[spec])


@pytest.fixture
def stage(rctx: Context, openai_server: OpenAIServer) -> tuple[Context, str]:  # noqa: F811
    """The judged dataset, the ``add`` harness, a member; the server wants ``KEY``."""
    openai_server.reply = judge_reply
    openai_server.api_key = KEY
    ds.register_dataset(rctx, judged_sums())
    return member(rctx), python_harness(rctx, "add")


def test_a_judge_on_an_unregistered_endpoint_is_refused_naming_the_url(
    rctx: Context,  # noqa: F811
    openai_server: OpenAIServer,
    stage: tuple[Context, str],
) -> None:
    mia, harness = stage
    set_secret(mia, "JUDGE_KEY", KEY, "user", hosts=[host_of(openai_server.url)])
    with pytest.raises(Forbidden) as caught:
        runs.start_run(mia, request(openai_server, harness))
    assert caught.value.details["path"] == "graders[0].config.base_url"
    assert openai_server.url in caught.value.message
    report = ReportRunRequest.model_validate(
        {
            "dataset": "judged",
            "harness": "ext@1.0.0",
            "graders": [judge(openai_server.url).model_dump()],
            "results": [{"case_id": "j0", "answer": "1"}],
        }
    )
    with pytest.raises(Forbidden, match="not a registered model endpoint"):
        run_reports.report_run(mia, report)
    assert openai_server.call_count == 0


def test_a_secret_bound_to_no_host_is_never_sent(
    rctx: Context,  # noqa: F811
    openai_server: OpenAIServer,
    stage: tuple[Context, str],
) -> None:
    mia, harness = stage
    endpoints.add_endpoint(rctx, "local", openai_server.url)
    set_secret(mia, "JUDGE_KEY", KEY, "user")  # as every secret stored before issue 27
    assert list_secrets(mia, "user")[0].hosts == []
    with pytest.raises(Forbidden) as caught:
        runs.start_run(mia, request(openai_server, harness))
    assert caught.value.details == {
        "path": "graders[0].config.api_key_secret",
        "secret": "JUDGE_KEY",
        "host": host_of(openai_server.url),
    }
    assert "bound to no host" in caught.value.message
    assert openai_server.call_count == 0


def test_a_bound_secret_reaches_its_host_and_is_checked_again_right_before_the_call(
    rctx: Context,  # noqa: F811
    openai_server: OpenAIServer,
    stage: tuple[Context, str],
) -> None:
    mia, harness = stage
    endpoints.add_endpoint(rctx, "local", openai_server.url)
    set_secret(mia, "JUDGE_KEY", KEY, "user", hosts=[host_of(openai_server.url)])
    run = run_execution.execute_run(mia, runs.start_run(mia, request(openai_server, harness)).id)
    assert run.counts.error == 0 and openai_server.call_count == 4
    assert set(authorizations(openai_server)) == {f"Bearer {KEY}"}

    # Rebound elsewhere after the run was planned: the executor refuses at the call (another
    # rubric, so no cached verdict stands in for the call).
    queued = runs.start_run(mia, request(openai_server, harness, "another rubric"))
    set_secret(mia, "JUDGE_KEY", KEY, "user", hosts=["api.example.org"])
    openai_server.reset()
    done = run_execution.execute_run(mia, queued.id)
    assert openai_server.call_count == 0 and authorizations(openai_server) == []
    errors = {
        s.detail["error"] for r in run_results.list_run_results(mia, done.id) for s in r.scores
    }
    assert errors == {
        f"secret JUDGE_KEY may not be sent to {host_of(openai_server.url)}"
        " (bound to api.example.org)"
    }
    with pytest.raises(Forbidden, match="JUDGE_KEY may not be sent"):
        scorecards.rescore_run(mia, run.id, [judge(openai_server.url)])


def test_an_openai_harness_needs_a_registered_endpoint_and_a_bound_key(
    rctx: Context,  # noqa: F811
    openai_server: OpenAIServer,
    stage: tuple[Context, str],
) -> None:
    mia, _ = stage
    body: dict[str, Any] = {
        "id": "chat",
        "version": "1.0.0",
        "kind": "openai",
        "config": {"base_url": openai_server.url, "model": "m", "api_key_secret": "JUDGE_KEY"},
    }
    harnesses.register_harness(rctx, harnesses.parse_harness(body))
    set_secret(mia, "JUDGE_KEY", KEY, "user", hosts=["api.example.org"])
    plain = StartRunRequest(dataset="judged", harness="chat@1.0.0")
    with pytest.raises(Forbidden) as caught:
        runs.start_run(mia, plain)
    assert caught.value.details["path"] == "harness.config.base_url"
    endpoints.add_endpoint(rctx, "local", openai_server.url)
    with pytest.raises(Forbidden) as caught:
        runs.start_run(mia, plain)
    assert caught.value.details["path"] == "harness.config.api_key_secret"
    set_secret(mia, "JUDGE_KEY", KEY, "user", hosts=[host_of(openai_server.url)])
    queued = runs.start_run(mia, plain)
    set_secret(mia, "JUDGE_KEY", KEY, "user")  # unbound between planning and the call
    done = run_execution.execute_run(mia, queued.id)
    assert openai_server.call_count == 0 and done.counts.error == 4
    assert done.top_errors[0].error.startswith("secret JUDGE_KEY is bound to no host")


def test_an_endpoint_covers_the_urls_below_it_only() -> None:
    from benchbook.runtime.egress import endpoint_matches

    assert endpoint_matches("http://127.0.0.1:8000/v1", "http://127.0.0.1:8000/v1/")
    assert endpoint_matches("https://api.example.org", "https://API.example.org:443/v1")
    assert not endpoint_matches("http://127.0.0.1:8000/v1", "http://127.0.0.1:8001/v1")
    assert not endpoint_matches("http://127.0.0.1:8000/v1", "http://127.0.0.1:8000/v10")
    assert not endpoint_matches("https://api.example.org", "https://api.example.org.evil.test")
    assert not endpoint_matches("https://api.example.org", "http://api.example.org")


def test_an_endpoint_is_an_http_url_with_a_host(rctx: Context) -> None:  # noqa: F811
    from benchbook.errors import InvalidInput

    for url in ("file:///etc/passwd", "http://", "http://u:p@example.org/v1", "x"):
        with pytest.raises(InvalidInput):
            endpoints.add_endpoint(rctx, "bad", url)
    added = endpoints.add_endpoint(rctx, "ok", "HTTPS://Api.Example.org:443/v1/", shared=True)
    assert (added.url, added.workspace, added.shared) == (
        "https://api.example.org/v1",
        "_shared",
        True,
    )
    assert [e.name for e in endpoints.list_endpoints(rctx)] == ["ok"]
    endpoints.remove_endpoint(rctx, "ok", shared=True)
    assert endpoints.list_endpoints(rctx) == []


DOTTED = [
    "/../internal/admin",
    "/./../internal",
    "/%2e%2e/internal/admin",
    "/%2E%2E/internal",
    "/..%2finternal",
    "/..\\internal",
    "/.",
]


@pytest.mark.parametrize("suffix", DOTTED)
def test_a_base_url_with_dot_segments_is_refused_naming_the_field_and_never_called(
    rctx: Context,  # noqa: F811
    openai_server: OpenAIServer,
    stage: tuple[Context, str],
    suffix: str,
) -> None:
    mia, harness = stage
    endpoints.add_endpoint(rctx, "local", openai_server.url)
    set_secret(mia, "JUDGE_KEY", KEY, "user", hosts=[host_of(openai_server.url)])
    escaping = StartRunRequest(
        dataset="judged", harness=harness, graders=[judge(openai_server.url + suffix)]
    )
    with pytest.raises(InvalidInput) as caught:
        runs.start_run(mia, escaping)
    assert caught.value.details["errors"][0]["path"] == "graders[0].config.base_url"
    assert caught.value.message.startswith("graders[0].config.base_url: ")
    assert openai_server.call_count == 0


def test_a_rescore_with_a_dotted_judge_url_is_refused(
    rctx: Context,  # noqa: F811
    openai_server: OpenAIServer,
    stage: tuple[Context, str],
) -> None:
    mia, harness = stage
    endpoints.add_endpoint(rctx, "local", openai_server.url)
    set_secret(mia, "JUDGE_KEY", KEY, "user", hosts=[host_of(openai_server.url)])
    run = run_execution.execute_run(mia, runs.start_run(mia, request(openai_server, harness)).id)
    openai_server.reset()
    with pytest.raises(InvalidInput, match=r"'\.\.' segments"):
        scorecards.rescore_run(mia, run.id, [judge(openai_server.url + "/../internal/admin")])
    assert openai_server.call_count == 0


def test_an_endpoint_does_not_cover_a_path_that_walks_out_of_it() -> None:
    from benchbook.runtime.egress import (
        BoundSecrets,
        SecretHostRefused,
        endpoint_matches,
        normalize_endpoint,
        secret_for,
    )

    for suffix in DOTTED:
        assert not endpoint_matches("http://127.0.0.1:8733/v1", "http://127.0.0.1:8733/v1" + suffix)
        with pytest.raises(ValueError):
            normalize_endpoint("http://127.0.0.1:8733/v1" + suffix)
    bound = BoundSecrets({"K": ("sk-0123456789", ["127.0.0.1:8733"])})
    assert secret_for(bound, "K", "http://127.0.0.1:8733/v1/chat") == "sk-0123456789"
    with pytest.raises(SecretHostRefused):
        secret_for(bound, "K", "http://127.0.0.1:8733/v1/../internal/admin")
    assert endpoint_matches("http://127.0.0.1:8733/v1", "http://127.0.0.1:8733/v1/a.b/..c")
