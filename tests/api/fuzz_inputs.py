"""Malformed and edge-case requests for every operation of the committed OpenAPI document.

Each operation's strategy draws its path ids, query, headers and body from the document's own
parameters and schemas, each part either fit for it or broken in a way a client could break it:
wrong JSON types, missing and extra fields, numbers past every bound, NUL and lone surrogates in
strings, long strings, ids of the wrong shape, duplicated query parameters, headers a proxy
would pass on, tokens of another seat. ``tests/api/test_fuzz.py`` sends them to a real server.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parents[2]
SPEC: dict[str, Any] = json.loads((ROOT / "openapi" / "openapi.json").read_text())
METHODS = ("get", "post", "put", "delete")


@dataclass(frozen=True)
class Operation:
    method: str
    path: str
    parameters: tuple[dict[str, Any], ...]
    body_schema: dict[str, Any] | None
    statuses: frozenset[str]

    @property
    def name(self) -> str:
        return f"{self.method.upper()} {self.path}"

    @property
    def writes(self) -> bool:
        return self.method != "get"


def resolve(node: dict[str, Any]) -> dict[str, Any]:
    """The node a ``$ref`` names (the document's refs are all local)."""
    while "$ref" in node:
        found: Any = SPEC
        for part in node["$ref"].removeprefix("#/").split("/"):
            found = found[part]
        node = found
    return node


def operations() -> list[Operation]:
    found = []
    for path, item in SPEC["paths"].items():
        shared = [resolve(p) for p in item.get("parameters", [])]
        for method in METHODS:
            if method not in item:
                continue
            op = item[method]
            params = tuple(shared + [resolve(p) for p in op.get("parameters", [])])
            content = op.get("requestBody", {}).get("content", {})
            schema = resolve(content["application/json"]["schema"]) if content else None
            found.append(Operation(method, path, params, schema, frozenset(op["responses"])))
    return found


# Values of the wrong type or past every bound a field could have.
NASTY_NUMBERS = [0, -1, 1, 2**31, 2**63, 2**64, -(2**63) - 1, 10**30, 1.5, -0.0, 1e308]
NASTY_STRINGS = [
    "",
    " ",
    "\x00",
    "a\x00b",
    "\ud800",  # a lone surrogate: valid JSON text (\ud800), no valid UTF-8
    "é☃😀",
    "\u202e\ufeff",
    "x" * 5000,
    "0",
    "-1",
    "1e999",
    "NaN",
    "null",
    "../../etc/passwd",
    "%00",
    "<script>",
]
NASTY_VALUES: list[Any] = [None, True, False, [], {}, [[]], {"": None}, *NASTY_NUMBERS]
NASTY_VALUES += NASTY_STRINGS


def nasty() -> st.SearchStrategy[Any]:
    return st.sampled_from(NASTY_VALUES) | st.lists(st.sampled_from(NASTY_VALUES), max_size=4)


def fitting(schema: dict[str, Any], depth: int = 0) -> st.SearchStrategy[Any]:
    """A value the schema could take, roughly (its edges included): the fuzz's near misses
    come from mixing these with :func:`nasty` values field by field."""
    schema = resolve(schema)
    if "oneOf" in schema:
        return st.one_of([fitting(s, depth) for s in schema["oneOf"]])
    if "const" in schema:
        return st.just(schema["const"])
    if "enum" in schema:
        return st.sampled_from(schema["enum"])
    kind = schema.get("type")
    if isinstance(kind, list):
        return st.one_of([fitting({**schema, "type": k}, depth) for k in kind])
    if kind == "integer":
        low, high = schema.get("minimum", -5), schema.get("maximum", 100)
        return st.sampled_from(sorted({low, high, low - 1, high + 1})) | st.integers(low, high)
    if kind == "number":
        return st.floats(allow_nan=False, allow_infinity=False)
    if kind == "boolean":
        return st.booleans()
    if kind == "null":
        return st.none()
    if kind == "string":
        low, high = schema.get("minLength", 0), min(schema.get("maxLength", 12), 64)
        edges = [low - 1, schema["maxLength"] + 1] if "maxLength" in schema else [low - 1]
        near = ["a" * n for n in edges if n >= 0] or [""]
        return st.text(min_size=low, max_size=high) | st.sampled_from(near)
    if kind == "array":
        return st.lists(fitting(schema.get("items", {}), depth + 1), max_size=4)
    if kind == "object" or "properties" in schema:
        return body(schema, depth + 1) if depth < 3 else st.just({})
    return st.sampled_from(NASTY_VALUES)


def body(schema: dict[str, Any], depth: int = 0) -> st.SearchStrategy[Any]:
    """An object of the schema's fields: each present or not, fitting or nasty, with at times
    a field the schema does not have."""
    props = schema.get("properties", {})
    fields = {
        name: st.one_of(st.nothing() if depth else st.just(MISSING), fitting(sub, depth), nasty())
        for name, sub in props.items()
    }
    extras = st.dictionaries(st.sampled_from(["extra", "", "\x00", "players"]), nasty(), max_size=1)

    def build(drawn: tuple[dict[str, Any], dict[str, Any]]) -> dict[str, Any]:
        chosen, extra = drawn
        return {**extra, **{k: v for k, v in chosen.items() if v is not MISSING}}

    return st.tuples(st.fixed_dictionaries(fields), extras).map(build)


MISSING = object()


@dataclass
class Request:
    """One drawn request; ``seat`` names whose token it carries (a role the test maps to the
    real token) or holds a literal Authorization value."""

    method: str
    path: str
    query: list[tuple[str, str]] = field(default_factory=list)
    headers: dict[str, str] = field(default_factory=dict)
    auth: str = "none"
    data: bytes | None = None
    path_ids: dict[str, str] = field(default_factory=dict)


# Roles a test maps to real credentials of its game: the seat to move, another seat, the host,
# a durable player; any other value is sent as it is.
ROLES = ["turn", "other_seat", "host", "player"]
BAD_AUTH = [
    "Bearer ",
    "Bearer x",
    "Bearer " + "A" * 5000,
    "Basic YWxhZGRpbjpvcGVuc2VzYW1l",
    "bearer\tx",
    "Bearer \x7f",
    "Bearer é",
    "Token",
]
# Header values: what an HTTP client lets through (no CR, LF, leading or trailing blank).
HEADER_VALUES = [
    "",
    "*",
    '"0"',
    '"1"',
    'W/"1"',
    '"-1"',
    '"99999999999999999999999"',
    '"1", "2"',
    "1",
    '"',
    '""',
    "abc",
    "x" * 8000,
    '"' + "9" * 500 + '"',
    "é",
    "\x7f",
    "a\tb",
    "0123456789012345678901234567",
    '"0123456789012345678901234567"',
    '"a\\"b0123456789012345678901"',
    "-5",
    "1e9",
]
OPTIONAL_HEADERS = ["If-Match", "If-None-Match", "Idempotency-Key", "Last-Event-ID"]
CONTENT_TYPES = [
    "application/json",
    "application/json; charset=utf-8",
    "application/json; charset=latin-1",
    "application/problem+json",
    "text/plain",
    "application/x-www-form-urlencoded",
    "multipart/form-data; boundary=x",
    "application/json; charset",
    "",
    "*/*",
]
RAW_BODIES = [
    b"",
    b"{",
    b"null",
    b"[]",
    b'"x"',
    b"0",
    b"\xff\xfe\x00",
    b"{}" + b" " * 10,
    b'{"a":1,"a":2}',
    b"\xef\xbb\xbf{}",  # a byte-order mark
    b'{"tile": [1e400, 1], "train": "0"}',
    b'{"x": "\\ud800"}',
    b"[" * 5000 + b"]" * 5000,
    b"{} {}",
    b"tile=1&train=0",
]
ACCEPTS = ["application/json", "*/*", "application/problem+json", "text/html", "image/png", ""]


WRONG_IDS = ["0", "-1", "abc", "abcdefgh1234", "A" * 300, "é", "\x00", "/", "..", "null", "99999"]
WRONG_QUERY = ["", "x", "-1", "0", "1.5", "1e999", "NaN", "inf", "9" * 40, "\x00", "é", "true"]


class Break(StrEnum):
    """One way a drawn request is broken; each request has one to three of them, the rest of
    it fitting the document, so every refusal is reached from an otherwise good request."""

    PATH_ID = "path_id"
    CREDENTIALS = "credentials"
    HEADER = "header"
    QUERY = "query"
    BODY_FIELD = "body_field"
    BODY_BYTES = "body_bytes"
    CONTENT_TYPE = "content_type"
    ACCEPT = "accept"


def role_for(op: Operation) -> str:
    """The role a fitting request of ``op`` carries: the one its refusals of credentials are
    not about."""
    if op.path.startswith("/api/v1/players/{player_id}"):
        return "player"
    tail = op.path.rsplit("/", 1)[-1]
    if tail in {"deal", "position", "history", "rematch", "transfers", "{seat}"}:
        return "host"
    if op.path.startswith("/api/v1/games/{game_id}/") and tail not in {"join", "claim", "score"}:
        return "turn"
    return "none"


def as_query_text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value)


def broken_body(draw: st.DrawFn, op: Operation) -> Any:
    """A fitting body with one field missing, of the wrong kind or added."""
    value = draw(fitting(op.body_schema)) if op.body_schema else {}
    if not isinstance(value, dict):
        return draw(nasty())
    how = draw(st.sampled_from(["replace", "drop", "add", "whole"]))
    names = sorted(value) or ["extra"]
    name = draw(st.sampled_from(names))
    if how == "drop":
        value.pop(name, None)
    elif how == "add":
        value[draw(st.sampled_from(["extra", "", "\x00", "é" * 50]))] = draw(nasty())
    elif how == "replace":
        value[name] = draw(nasty())
    else:
        return draw(nasty())
    return value


@st.composite
def requests_for(draw: st.DrawFn, op: Operation) -> Request:
    breaks = draw(st.sets(st.sampled_from(list(Break)), min_size=1, max_size=3))
    request = Request(op.method.upper(), op.path, auth=role_for(op))
    for param in op.parameters:
        where, name = param["in"], param["name"]
        if where == "path":
            wrong = Break.PATH_ID in breaks and draw(st.booleans())
            request.path_ids[name] = draw(st.sampled_from(WRONG_IDS)) if wrong else "{real}"
        elif where == "query" and Break.QUERY in breaks:
            fits = fitting(resolve(param.get("schema", {}))).map(as_query_text)
            values = draw(st.lists(fits | st.sampled_from(WRONG_QUERY), min_size=1, max_size=2))
            request.query += [(name, value) for value in values]
    if Break.QUERY in breaks:
        request.query.append((draw(st.sampled_from(["zzz", "after", "limit", "n"])), "1"))
    if Break.PATH_ID in breaks and not any(v != "{real}" for v in request.path_ids.values()):
        request.path_ids = {name: draw(st.sampled_from(WRONG_IDS)) for name in request.path_ids}
    if Break.HEADER in breaks:
        for name in draw(st.sets(st.sampled_from(OPTIONAL_HEADERS), min_size=1, max_size=2)):
            request.headers[name] = draw(st.sampled_from(HEADER_VALUES))
    request.headers["Accept"] = (
        draw(st.sampled_from(ACCEPTS)) if Break.ACCEPT in breaks else "application/json"
    )
    if Break.CREDENTIALS in breaks:
        others = [role for role in ROLES if role != request.auth]
        request.auth = draw(st.sampled_from([*others, "none", *BAD_AUTH]))
    if op.method in {"get", "delete"} and not breaks & {Break.BODY_FIELD, Break.BODY_BYTES}:
        return request
    if Break.BODY_BYTES in breaks:
        request.data = draw(st.sampled_from(RAW_BODIES))
    elif Break.BODY_FIELD in breaks:
        request.data = json.dumps(broken_body(draw, op)).encode()
    else:
        good = draw(fitting(op.body_schema)) if op.body_schema else {}
        request.data = json.dumps(good).encode()
    request.headers["Content-Type"] = (
        draw(st.sampled_from(CONTENT_TYPES)) if Break.CONTENT_TYPE in breaks else "application/json"
    )
    return request
