"""Each rule the OpenAPI document states is the rule the API enforces (issue 9 item 11): a
request the document calls valid is not refused for a reason it does not state, and one it
calls invalid is a 400 naming the field. Found by schemathesis (``test_schemathesis.py``);
each test here was red before its fix."""

from __future__ import annotations

import random
import re
from typing import Any

import orjson
import pytest
from fastapi.testclient import TestClient
from jsonschema import Draft202012Validator

from benchbook.contracts.dataset import GRADER_IDS
from benchbook.contracts.harness import HARNESS_TEMPLATE_PATTERN
from benchbook.contracts.recipe import ROW_TEMPLATE_PATTERN
from benchbook.datasets.templates import compile_template
from benchbook.errors import InvalidInput
from benchbook.eval.graders import GRADERS
from benchbook.runtime.templates import compile_harness_template
from tests.api.conftest import dataset_body


def document_says_valid(client: TestClient, schema: dict[str, Any], body: Any) -> bool:
    """Whether ``body`` is valid under ``schema`` (which may ``$ref`` the document's components)."""
    document = client.get("/api/openapi.json").json()
    validator = Draft202012Validator({**schema, "components": document["components"]})
    return validator.is_valid(body)


def body_schema(client: TestClient, path: str, content: str = "application/json") -> Any:
    """The documented request body schema of ``POST path``."""
    document = client.get("/api/openapi.json").json()
    return document["paths"][path]["post"]["requestBody"]["content"][content]["schema"]


def ref(name: str) -> dict[str, Any]:
    return {"$ref": f"#/components/schemas/{name}"}


def assert_400_naming(response: Any, field: str) -> None:
    assert response.status_code == 400, response.text
    assert field in response.text, response.text


@pytest.mark.parametrize(
    ("path", "body", "field"),
    [
        (
            "/api/datasets",
            dataset_body(n=1)
            | {"cases": [dataset_body(n=1)["cases"][0] | {"resources": {"gpu": False}}]},
            "resources.gpu",
        ),
        (
            "/api/datasets",
            dataset_body(n=1)
            | {"cases": [{"id": "a", "env": {"kind": "prompt"}, "task": "t", "timeout_s": "60"}]},
            "timeout_s",
        ),
        (
            "/api/harnesses",
            {
                "id": "h",
                "version": "1.0.0",
                "kind": "openai",
                "config": {"base_url": "http://x", "model": "m", "max_retries": False},
            },
            "max_retries",
        ),
        (
            "/api/harnesses",
            {
                "id": "h",
                "version": "1.0.0",
                "kind": "openai",
                "config": {"base_url": "http://x", "model": "m", "temperature": True},
            },
            "temperature",
        ),
        (
            "/api/recipes",
            {"id": "r", "source": {"kind": "file", "gated": 1}, "mapping": {"task_field": "q"}},
            "gated",
        ),
    ],
)
def test_json_booleans_and_integers_are_not_coerced(
    client: TestClient, path: str, body: dict[str, Any], field: str
) -> None:
    """``false`` is no integer, ``1`` no boolean and ``"60"`` no number: 400 naming the field,
    nothing stored (pydantic's lax mode used to take them as 0, True and 60)."""
    assert_400_naming(client.post(path, json=body), field)
    stored = client.get(path).json()
    assert (stored["items"] if isinstance(stored, dict) else stored) == []


def test_an_integral_number_is_still_an_integer(client: TestClient) -> None:
    """JSON Schema counts 60.0 as an integer, so the API does too."""
    case = {"id": "a", "env": {"kind": "prompt"}, "task": "t", "timeout_s": 60.0}
    response = client.post("/api/datasets", json=dataset_body(n=1) | {"cases": [case]})
    assert response.status_code == 201, response.text
    stored = client.get("/api/datasets/arith/versions/1.0.0/cases/a").json()
    assert stored["timeout_s"] == 60


def test_a_huggingface_source_needs_a_dataset_in_the_document_and_the_api(
    client: TestClient,
) -> None:
    recipe = {"id": "r", "source": {"kind": "huggingface"}, "mapping": {"task_field": "q"}}
    assert not document_says_valid(client, ref("Recipe"), recipe)
    assert_400_naming(client.post("/api/recipes", json=recipe), "dataset")
    recipe["source"]["dataset"] = "owner/name"
    assert document_says_valid(client, ref("Recipe"), recipe)


def test_an_inline_file_source_needs_its_text_in_the_document_and_the_api(
    client: TestClient,
) -> None:
    spec = {
        "id": "r",
        "source": {"kind": "file", "format": "jsonl"},
        "mapping": {"task_field": "q"},
    }
    for path in ("/api/benchmarks/import", "/api/benchmarks/preview", "/api/imports"):
        schema = body_schema(client, path)
        assert not document_says_valid(client, schema, {"spec": spec})
        assert document_says_valid(client, schema, {"spec": spec, "text": '{"q": "1+1"}\n'})
    assert client.post("/api/benchmarks/import", json={"spec": spec}).status_code == 400
    response = client.post("/api/benchmarks/import", json={"spec": spec, "text": '{"q": "1+1"}\n'})
    assert response.status_code == 201, response.text


@pytest.mark.parametrize(("field", "value"), [("ray_address", "auto"), ("ray_num_cpus", 0.5)])
def test_a_ray_field_without_the_ray_executor_is_invalid_in_the_document_too(
    client: TestClient, field: str, value: object
) -> None:
    settings = {"executor": "local", field: value}
    assert not document_says_valid(client, ref("RunSettings"), settings)
    assert not document_says_valid(client, ref("RunSettings"), {field: value})
    assert document_says_valid(client, ref("RunSettings"), {"executor": "ray", field: value})
    body = {"dataset": "d", "harness": "h", "settings": settings}
    assert_400_naming(client.post("/api/runs", json=body), field)


def test_a_subset_selecting_no_case_is_a_409_keeping_its_message(client: TestClient) -> None:
    """The request is well formed; the stored cases are what it contradicts (was 400)."""
    assert client.post("/api/datasets", json=dataset_body()).status_code == 201
    harness = {"id": "h", "version": "1.0.0", "kind": "command", "config": {"argv": ["echo"]}}
    assert client.post("/api/harnesses", json=harness).status_code == 201
    body = {"dataset": "arith", "harness": "h", "settings": {"tags": ["none-such"]}}
    response = client.post("/api/runs", json=body)
    assert response.status_code == 409, response.text
    assert response.json()["code"] == "conflict"
    assert "the subset selects no case" in response.json()["message"]
    assert client.get("/api/runs").json() == []


def test_the_harness_template_pattern_accepts_exactly_what_registration_accepts() -> None:
    """The document's pattern and ``compile_harness_template`` agree on 50,000 strings built
    from braces, field names, ``?`` and the whitespace Python and ECMA-262 disagree on."""
    pattern = re.compile(HARNESS_TEMPLATE_PATTERN)
    pieces = [
        "{",
        "}",
        "{{",
        "}}",
        "task",
        "case_id",
        "sample",
        "workdir",
        "sample.x",
        "?",
        " ",
        "\u00a0",
        "\x1c",
        "\ufeff",
        "\n",
        "x",
        "answer",
    ]
    assert_agree(pattern, pieces, lambda text: compile_harness_template(text, "argv[0]"))


def assert_agree(
    pattern: re.Pattern[str], pieces: list[str], compile_: Any, seed: int = 1, most: int = 7
) -> None:
    """``pattern`` matches exactly the texts ``compile_`` takes without InvalidInput, over
    50,000 strings of up to ``most`` ``pieces``."""
    rng = random.Random(seed)
    for _ in range(50_000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, most)))
        try:
            compile_(text)
            accepted = True
        except InvalidInput:
            accepted = False
        assert accepted == bool(pattern.search(text)), repr(text)


def test_a_harness_template_with_a_single_brace_is_invalid_in_the_document_too(
    client: TestClient,
) -> None:
    harness = {"id": "h", "version": "1.0.0", "kind": "command", "config": {"argv": ["a}b"]}}
    assert not document_says_valid(client, ref("CommandHarness"), harness)
    assert_400_naming(client.post("/api/harnesses", json=harness), "config.argv[0]")
    harness["config"]["argv"] = ["echo", "{{literal}}", "{ task }", "{sample?}"]
    assert document_says_valid(client, ref("CommandHarness"), harness)
    assert client.post("/api/harnesses", json=harness).status_code == 201


def test_a_stored_case_naming_an_unknown_grader_is_a_409_at_run_start(client: TestClient) -> None:
    """Cases may name any grader id; the run that would grade them with their own graders is
    refused with 409 naming the case (was 400: no schema can state what a dataset holds)."""
    cases = [{"id": "a", "env": {"kind": "prompt"}, "task": "t", "graders": [{"id": "nope"}]}]
    assert (
        client.post("/api/datasets", json=dataset_body(n=0) | {"cases": cases}).status_code == 201
    )
    harness = {"id": "h", "version": "1.0.0", "kind": "command", "config": {"argv": ["echo"]}}
    assert client.post("/api/harnesses", json=harness).status_code == 201
    response = client.post("/api/runs", json={"dataset": "arith", "harness": "h"})
    assert response.status_code == 409, response.text
    assert response.json()["message"].startswith("case 'a': unknown grader ids: nope (known:")
    graded = {"dataset": "arith", "harness": "h", "graders": [{"id": "answer-match"}]}
    assert client.post("/api/runs", json=graded).status_code == 202


def test_a_body_contradicting_itself_is_a_409_naming_the_case(client: TestClient) -> None:
    """``gold_fields`` must name metadata keys, a rule across fields JSON Schema cannot state:
    409 ``conflict`` naming the case and the keys (was 400); with a shape error beside it the
    answer stays 400. Nothing is stored either way."""
    case = {"id": "a", "env": {"kind": "prompt"}, "task": "t", "gold_fields": ["answer"]}
    response = client.post("/api/datasets", json=dataset_body(n=0) | {"cases": [case]})
    assert response.status_code == 409, response.text
    assert response.json()["code"] == "conflict"
    assert response.json()["details"]["errors"] == [
        {"path": "cases.0", "message": "gold_fields name keys absent from metadata: answer"}
    ]
    shape_too = dataset_body(n=0) | {"cases": [case, {"id": "b", "task": "t"}]}
    assert client.post("/api/datasets", json=shape_too).status_code == 400
    assert client.get("/api/datasets").json()["items"] == []
    case["metadata"] = {"answer": "42"}
    assert (
        client.post("/api/datasets", json=dataset_body(n=0) | {"cases": [case]}).status_code == 201
    )


def test_allowed_hosts_without_an_allowlist_is_invalid_in_the_document_too(
    client: TestClient,
) -> None:
    assert not document_says_valid(client, ref("Network"), {"allowed_hosts": ["a.example"]})
    assert document_says_valid(
        client, ref("Network"), {"mode": "allowlist", "allowed_hosts": ["a.example"]}
    )
    assert document_says_valid(client, ref("Network"), {"mode": "none", "allowed_hosts": []})


def test_the_search_text_pattern_refuses_exactly_what_strip_empties(client: TestClient) -> None:
    """``q`` of only ``\\x1e`` matched the document's ``\\S`` (ECMA-262 has no such space) yet
    was refused as empty (found by schemathesis at 100 examples): the pattern now spells out
    Python's whitespace, so both regex dialects read it alike."""
    document = client.get("/api/openapi.json").json()
    operation = document["paths"]["/api/datasets/{dataset_id}/versions/{ref}/search"]["get"]
    (q,) = [p for p in operation["parameters"] if p["name"] == "q"]
    source = q["schema"]["pattern"]
    assert "\\s" not in source.lower(), source
    pattern = re.compile(source)
    for code in range(1, 0x3100):
        char = chr(code)
        assert bool(pattern.search(char)) == bool(char.strip()), hex(code)
    assert pattern.search("  gsm8k ") and not pattern.search(" \x1e\u3000")


def test_the_documented_grader_ids_are_the_graders_this_installation_runs() -> None:
    assert set(GRADER_IDS) == set(GRADERS)


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/api/runs", {"dataset": "arith", "harness": "h"}),
        (
            "/api/runs/report",
            {"dataset": "arith", "harness": "h@1.0.0", "results": [{"case_id": "q0"}]},
        ),
        ("/api/runs/{run_id}/rescore", {}),
    ],
)
def test_a_run_request_names_only_known_graders_in_the_document_too(
    client: TestClient, path: str, body: dict[str, Any]
) -> None:
    """A run's own graders must be ones this installation runs: the document lists them (an
    unknown id was schema-valid yet refused with 400; found by schemathesis)."""
    schema = body_schema(client, path)
    unknown = body | {"graders": [{"id": "nope"}]}
    assert not document_says_valid(client, schema, unknown)
    assert document_says_valid(client, schema, body | {"graders": [{"id": "numeric"}]})
    assert client.post("/api/datasets", json=dataset_body()).status_code == 201
    harness = {"id": "h", "version": "1.0.0", "kind": "command", "config": {"argv": ["echo"]}}
    assert client.post("/api/harnesses", json=harness).status_code == 201
    report = {"dataset": "arith", "harness": "ext@1.0.0", "results": [{"case_id": "q0"}]}
    reported = client.post("/api/runs/report", json=report)
    assert reported.status_code == 201, reported.text
    real = path.replace("{run_id}", reported.json()["id"])
    assert_400_naming(client.post(real, json=unknown), "unknown grader ids: nope (known:")
    # a case's own graders may name any id: the dataset schema lists none
    case = dataset_body(n=1)["cases"][0] | {"graders": [{"id": "nope"}]}
    assert document_says_valid(client, ref("Case"), case)


@pytest.mark.parametrize("ref_text", ["@1.0.0", "arith@", "arith@1.0.0@", "@"])
def test_a_dataset_ref_is_id_or_id_at_ref_in_the_document_too(
    client: TestClient, ref_text: str
) -> None:
    """``dataset`` (and a run's ``harness``) is ``id`` or ``id@ref``: an empty id or ref was
    schema-valid yet refused with 400 (found by schemathesis); a ref naming nothing is 404."""
    for path, body in (
        ("/api/runs", {"dataset": ref_text, "harness": "h"}),
        ("/api/runs", {"dataset": "arith", "harness": ref_text}),
        ("/api/runs/report", {"dataset": ref_text, "harness": "h@1.0.0", "results": []}),
    ):
        assert not document_says_valid(client, body_schema(client, path), body), body
    response = client.post("/api/runs", json={"dataset": ref_text, "harness": "h"})
    assert_400_naming(response, "dataset must be 'id' or 'id@version'")
    schema = body_schema(client, "/api/runs")
    for fine in ("arith", "arith@1.0.0", "arith@latest", "arith@a tag", "arith@@x"):
        assert document_says_valid(client, schema, {"dataset": fine, "harness": "h"}), fine
        assert client.post("/api/runs", json={"dataset": fine, "harness": "h"}).status_code == 404


def multipart_schema(client: TestClient, path: str) -> Any:
    return body_schema(client, path, "multipart/form-data")


@pytest.mark.parametrize(
    "path", ["/api/benchmarks/import", "/api/benchmarks/preview", "/api/imports"]
)
def test_a_multipart_import_sends_its_rows_as_the_file_part_in_the_document_and_the_api(
    client: TestClient, path: str
) -> None:
    """A multipart form needs its ``file`` part and no ``text`` in its ``request`` part: rules
    of single parts the document states (a form without the file used to import ``text``, and
    the file part's ``format: binary`` let schemathesis send bodies breaking ImportRequest's own
    ``oneOf``: OpenAPI 3.1 spells a binary part with ``contentMediaType``)."""
    schema = multipart_schema(client, path)
    file_part = schema["properties"]["file"]
    assert file_part["contentMediaType"] == "application/octet-stream"
    assert "format" not in file_part
    rows = '{"question": "1+1?", "answer": "#### 2"}\n'
    request = {"benchmark": "gsm8k", "format": "jsonl"}
    assert not document_says_valid(client, schema, {"request": request | {"text": rows}})
    both_body = {"request": request | {"text": rows}, "file": rows}
    assert not document_says_valid(client, schema, both_body)
    assert document_says_valid(client, schema, {"request": request, "file": rows})
    text_only = {"request": (None, orjson.dumps(request | {"text": rows}), "application/json")}
    assert_400_naming(client.post(path, files=text_only), "needs a 'file' part")
    both = text_only | {"file": ("rows.jsonl", rows.encode(), "application/octet-stream")}
    assert_400_naming(client.post(path, files=both), "not as 'text'")
    assert client.get("/api/datasets").json()["items"] == []
    fine = {"request": (None, orjson.dumps(request), "application/json")} | {
        "file": ("rows.jsonl", rows.encode(), "application/octet-stream")
    }
    assert client.post(path, files=fine).status_code in (200, 201, 202)


@pytest.mark.parametrize("path", ["/api/benchmarks/import", "/api/benchmarks/preview"])
def test_rows_that_do_not_fit_are_a_409_the_document_declares(
    client: TestClient, path: str
) -> None:
    """What a file holds no schema states: rows that do not parse or map, or none, are 409
    ``conflict`` naming the row (was 400, which a schema-valid request must not get)."""
    document = client.get("/api/openapi.json").json()
    assert "409" in document["paths"][path]["post"]["responses"]
    spec = {
        "id": "r",
        "source": {"kind": "file", "format": "jsonl"},
        "mapping": {"task_field": "q"},
    }
    unmapped = ('{"x": 1}\n',) if path.endswith("import") else ()  # preview: a warning
    for text in ("0", "", *unmapped):
        body = {"spec": spec, "text": text}
        assert document_says_valid(client, body_schema(client, path), body)
        response = client.post(path, json=body)
        assert response.status_code == 409, response.text
        assert response.json()["code"] == "conflict"
    png = {
        "request": (None, orjson.dumps({"spec": spec}), "application/json"),
        "file": ("file.png", b"\x89PNG\r\n\x1a\n\x00", "application/octet-stream"),
    }
    response = client.post(path, files=png)
    assert response.status_code == 409, response.text
    assert response.json()["message"].startswith("file.png line 1: not UTF-8 text")
    assert client.get("/api/datasets").json()["items"] == []


def test_the_row_template_pattern_accepts_exactly_what_the_compiler_accepts() -> None:
    """The document's row-template pattern and ``compile_template`` agree on 50,000 strings of
    braces, names, ``?`` and the whitespace Python and ECMA-262 disagree on."""
    pattern = re.compile(ROW_TEMPLATE_PATTERN)
    pieces = ["{", "}", "{{", "}}", "a", "x.y", "?", " ", "\u00a0", "\x1c", "\ufeff", "\n"]
    assert_agree(pattern, pieces, compile_template, seed=2, most=8)


@pytest.mark.parametrize("field", ["task_template", "image", "files_template"])
def test_a_row_template_with_a_single_brace_is_invalid_in_the_document_too(
    client: TestClient, field: str
) -> None:
    """Found by schemathesis at 100 examples: ``task_template: "a}b"`` was schema-valid yet
    refused with 400 when the import compiled it."""
    value: Any = {"a.txt": "a}b"} if field == "files_template" else "a}b"
    spec = {
        "id": "r",
        "source": {"kind": "file", "format": "jsonl"},
        "mapping": {"task_field": "q", field: value},
    }
    body = {"spec": spec, "text": '{"q": "1+1"}\n'}
    schema = body_schema(client, "/api/benchmarks/import")
    assert not document_says_valid(client, schema, body)
    assert_400_naming(client.post("/api/benchmarks/import", json=body), f"mapping.{field}")
    # registering the recipe refuses it too (it was stored, to fail at each import)
    assert not document_says_valid(client, ref("Recipe"), spec)
    assert_400_naming(client.post("/api/recipes", json=spec), f"mapping.{field}")
    assert client.get("/api/recipes").json() == []
    fine = {"a.txt": "{q} {{x}} {q?}"} if field == "files_template" else "{q} {{x}} {q?}"
    spec["mapping"][field] = fine
    assert document_says_valid(client, schema, body)
