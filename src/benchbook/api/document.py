"""Rules every route shares, written into the OpenAPI document once so that new routes
inherit them (issue 9: "the OpenAPI document tells the truth"; schemathesis checks it both ways:
a schema-valid request must not be refused, a schema-invalid one must not be accepted).

- **No NUL in text**: every string (parameter, body field, map key) without its own
  ``pattern``, ``enum``, ``const`` or ``format`` gets ``pattern: ^[^\\x00]*$``: the app-wide
  ``request_text`` check refuses NUL everywhere (PostgreSQL cannot store it).
- **Literal segments win**: a path parameter that a sibling path spells as a literal
  (``/api/benchmarks/{benchmark}`` beside ``/api/benchmarks/import``) gets
  ``not: {enum: [import, …]}``; :func:`literal_wins` (an app-wide dependency) answers 405 for
  a method the literal path does not list (``GET /api/benchmarks/import``), and its ``Allow``
  names exactly the literal path's methods, as the document does.
"""

from __future__ import annotations

from typing import Any

from fastapi import Request
from starlette.exceptions import HTTPException

from benchbook.contracts.common import NO_NUL_PATTERN
from benchbook.transports.methods import literal_siblings

#: Keywords that already bound a string's characters more tightly than "no NUL".
_OWN_RULE = ("pattern", "enum", "const", "format", "contentMediaType")
#: Keywords that make a schema more than "any JSON value".
_SHAPE = ("type", "$ref", "anyOf", "oneOf", "allOf", "not", "enum", "const", "properties", "items")
JSON_VALUE = "NulFreeJson"
_JSON_REF = f"#/components/schemas/{JSON_VALUE}"
#: Any JSON value without NUL in a string or key: what "any value" means in a request here.
NUL_FREE_JSON: dict[str, Any] = {
    "description": "Any JSON value; no string or key holds NUL (U+0000).",
    "anyOf": [
        {"type": "null"},
        {"type": "boolean"},
        {"type": "number"},
        {"type": "string", "pattern": NO_NUL_PATTERN},
        {"type": "array", "items": {"$ref": _JSON_REF}},
        {
            "type": "object",
            "propertyNames": {"pattern": NO_NUL_PATTERN},
            "additionalProperties": {"$ref": _JSON_REF},
        },
    ],
}


def _is_string(node: dict[str, Any]) -> bool:
    kind = node.get("type")
    return kind == "string" or (isinstance(kind, list) and "string" in kind)


def _no_nul(node: Any) -> None:
    """Add the NUL rule to every schema under ``node`` (in place): strings get the pattern,
    objects ``propertyNames`` (and NUL-free extra members), "any value" the NUL-free value."""
    if isinstance(node, list):
        for item in node:
            _no_nul(item)
        return
    if not isinstance(node, dict):
        return
    if not any(k in node for k in _SHAPE):
        node["$ref"] = _JSON_REF
        return
    if _is_string(node) and not any(k in node for k in _OWN_RULE):
        node["pattern"] = NO_NUL_PATTERN
    if node.get("type") == "object" or "properties" in node:
        node.setdefault("propertyNames", {"pattern": NO_NUL_PATTERN})
        node.setdefault("additionalProperties", {"$ref": _JSON_REF})
    for key, value in node.items():
        if key in ("properties", "patternProperties", "$defs") and isinstance(value, dict):
            _no_nul(list(value.values()))
        elif key in ("items", "additionalProperties", "anyOf", "oneOf", "allOf", "prefixItems"):
            _no_nul(value)


def _refs(node: Any, found: set[str]) -> None:
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/components/schemas/"):
            found.add(ref.rsplit("/", 1)[1])
        for value in node.values():
            _refs(value, found)
    elif isinstance(node, list):
        for item in node:
            _refs(item, found)


def _request_schemas(document: dict[str, Any]) -> list[dict[str, Any]]:
    """Every schema a request carries: parameters' and bodies' (inline or the components they
    reference, transitively)."""
    inline: list[dict[str, Any]] = []
    for item in document.get("paths", {}).values():
        for operation in item.values():
            if not isinstance(operation, dict):
                continue
            inline += [p["schema"] for p in operation.get("parameters", []) if "schema" in p]
            content = operation.get("requestBody", {}).get("content", {})
            inline += [media["schema"] for media in content.values() if "schema" in media]
    components = document.get("components", {}).get("schemas", {})
    names: set[str] = set()
    _refs(inline, names)
    pending = set(names)
    while pending:
        more: set[str] = set()
        _refs(components.get(pending.pop(), {}), more)
        pending |= more - names
        names |= more
    return inline + [components[n] for n in sorted(names) if n in components]


def _shadowed_parameters(document: dict[str, Any]) -> None:
    paths: dict[str, Any] = document.get("paths", {})
    for (template, name), literals in literal_siblings(list(paths)).items():
        for operation in paths[template].values():
            for parameter in operation.get("parameters", []):
                if parameter.get("in") == "path" and parameter.get("name") == name:
                    parameter.setdefault("schema", {})["not"] = {"enum": literals}
            operation.setdefault("responses", {}).setdefault(
                "405",
                {
                    "description": f"method_not_allowed: {name} is one of {', '.join(literals)}",
                    "content": {
                        "application/json": {"schema": {"$ref": "#/components/schemas/ErrorBody"}}
                    },
                },
            )


_BOUNDS = ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum")


def _integral_bounds(node: Any) -> None:
    """FastAPI's document models hold numeric bounds as floats (``1.0``, ``9.2e18``); a bound
    that is a whole number is written as the integer it is (exact for powers of two)."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key in _BOUNDS and isinstance(value, float) and value.is_integer():
                node[key] = int(value)
            else:
                _integral_bounds(value)
    elif isinstance(node, list):
        for item in node:
            _integral_bounds(item)


def _discriminators_required(document: dict[str, Any]) -> None:
    """A discriminated union needs its tag even where the variant gives it a default:
    pydantic picks the variant by the tag before any default applies."""
    components = document.get("components", {}).get("schemas", {})

    def visit(node: Any) -> None:
        if isinstance(node, dict):
            tag = node.get("discriminator", {}).get("propertyName")
            if tag:
                for ref in node["discriminator"].get("mapping", {}).values():
                    variant = components.get(str(ref).rsplit("/", 1)[1], {})
                    required = variant.setdefault("required", [])
                    if tag not in required:
                        required.append(tag)
            for value in node.values():
                visit(value)
        elif isinstance(node, list):
            for item in node:
                visit(item)

    visit(document)


def add_shared_rules(document: dict[str, Any]) -> None:
    """Write the rules above into ``document`` (a generated OpenAPI document, in place). The
    NUL rule goes on request schemas only: an error answer may quote the offending text."""
    _shadowed_parameters(document)
    _integral_bounds(document)
    _discriminators_required(document)
    targets = _request_schemas(document)
    _no_nul(targets)
    document.setdefault("components", {}).setdefault("schemas", {})[JSON_VALUE] = NUL_FREE_JSON


def literal_methods(routes: list[tuple[str, set[str] | None]]) -> dict[str, str]:
    """``{literal path: "POST, …"}`` for every literal path among ``routes`` (``(path,
    methods)``) that a parameterized sibling would also match. ``install_api`` keeps it in
    ``app.state.literal_methods``, where ``transports.methods.allowed_methods`` reads the
    ``Allow`` of a 405."""
    methods: dict[str, list[str]] = {}
    for path, verbs in routes:
        methods.setdefault(path, []).extend(sorted(verbs or ()))
    found: dict[str, str] = {}
    for (template, name), literals in literal_siblings(list(methods)).items():
        for literal in literals:
            path = template.replace("{" + name + "}", literal, 1)
            found[path] = ", ".join(methods[path])
    return found


def literal_wins(request: Request) -> None:
    """App-wide dependency: 405 when a literal path (``/api/benchmarks/import``) is asked with
    a method it does not serve, instead of reaching the parameterized sibling
    (``GET /api/benchmarks/{benchmark}`` with ``benchmark = "import"``)."""
    allowed = getattr(request.app.state, "literal_methods", {}).get(request.url.path)
    if allowed is not None and request.method not in allowed.split(", "):
        raise HTTPException(405, "Method Not Allowed", headers={"Allow": allowed})
