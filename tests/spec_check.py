"""Every answer the test suite receives, checked against the committed OpenAPI document.

A typed client generated from ``openapi/openapi.json`` can read only the fields the document
declares, so every field the server sends must be declared: each JSON body (and each log entry
of a stream) is validated against the schema of its operation, status and media type, with
every object that declares ``properties`` taken as closed (``additionalProperties: false``).
Maps (objects declared without ``properties``, such as a position's ``trains``) stay open.

:class:`Checker` does the checking; ``tests/conftest.py`` hooks it into ``requests`` and
Flask's test client so it sees every answer of the suite, and fails the test that got one that
does not fit.
"""

from __future__ import annotations

import copy
import json
import re
import threading
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import jsonschema_rs

ROOT = Path(__file__).resolve().parent.parent
SPEC_PATH = ROOT / "openapi" / "openapi.json"
SSE, NDJSON = "text/event-stream", "application/x-ndjson"
#: Headers an answer may carry only where the document declares them.
CHECKED_HEADERS = (
    "ETag",
    "RateLimit",
    "RateLimit-Policy",
    "Retry-After",
    "Idempotent-Replayed",
    "Location",
    "WWW-Authenticate",
    "Deprecation",
    "Link",
)
#: Where the document says what one message of a stream holds (OpenAPI 3.2's ``itemSchema``).
ITEM_SCHEMA = "x-itemSchema"


def closed(schema: Any) -> Any:
    """``schema`` with every object that names its properties closed to any other, and each
    discriminated ``oneOf`` checked by its discriminator (so an error names the field at fault
    in the one schema the value claims, not "valid under none of the given schemas")."""
    if isinstance(schema, list):
        return [closed(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    if "mapping" in schema.get("discriminator", {}):
        return by_discriminator(schema["discriminator"])
    out = {key: closed(value) for key, value in schema.items()}
    if isinstance(schema.get("properties"), dict) and not isinstance(
        schema.get("additionalProperties"), dict
    ):
        out["additionalProperties"] = False
    return out


def by_discriminator(discriminator: dict[str, Any]) -> dict[str, Any]:
    name, mapping = discriminator["propertyName"], discriminator["mapping"]
    return {
        "type": "object",
        "required": [name],
        "allOf": [
            {"properties": {name: {"enum": list(mapping)}}},
            *(
                {"if": {"properties": {name: {"const": value}}}, "then": {"$ref": ref}}
                for value, ref in mapping.items()
            ),
        ],
    }


def media_of(content_type: str | None) -> str:
    return (content_type or "").split(";", 1)[0].strip().lower()


def is_json(media: str) -> bool:
    return media == "application/json" or media.endswith("+json")


class Checker:
    """Checks answers against one OpenAPI document (the committed one by default)."""

    def __init__(self, spec: dict[str, Any] | None = None) -> None:
        self.spec = spec if spec is not None else json.loads(SPEC_PATH.read_text())
        self.components = closed(self.spec.get("components", {}))
        self.paths = [
            (re.compile("^" + re.sub(r"\\\{[^/]+?\\\}", "[^/]+", re.escape(path)) + "$"), item)
            for path, item in self.spec["paths"].items()
        ]
        self._validators: dict[str, jsonschema_rs.Draft202012Validator] = {}
        self._lock = threading.Lock()

    def validator(self, schema: dict[str, Any]) -> jsonschema_rs.Draft202012Validator:
        key = json.dumps(schema, sort_keys=True)
        with self._lock:
            found = self._validators.get(key)
            if found is None:
                whole = {**closed(schema), "components": self.components}
                found = self._validators[key] = jsonschema_rs.Draft202012Validator(whole)
            return found

    def errors(self, schema: dict[str, Any], value: Any, where: str) -> list[str]:
        return [
            f"{where}: {error.instance_path}: {error.message}"
            for error in self.validator(schema).iter_errors(value)
        ][:5]

    def operation(self, method: str, url: str) -> dict[str, Any] | None:
        path = urlsplit(url).path
        for pattern, item in self.paths:
            if pattern.match(path):
                found: dict[str, Any] | None = item.get(method.lower())
                return found
        return None

    def response(self, op: dict[str, Any], status: int) -> dict[str, Any] | None:
        response = op["responses"].get(str(status)) or op["responses"].get("default")
        if response is not None and "$ref" in response:
            response = self.spec["components"]["responses"][response["$ref"].rsplit("/", 1)[1]]
        return response

    def media(self, method: str, url: str, status: int, content_type: str | None) -> Any:
        """What the document says of this answer: None when it documents nothing to check
        (no such operation, or a body that is not JSON and not a documented stream), a list of
        problems when the answer cannot be one of the documented ones, else the media object
        (``{}`` for an answer documented without a body)."""
        op = self.operation(method, url)
        if op is None or method.upper() in ("HEAD", "OPTIONS"):
            return None
        where = f"{method.upper()} {urlsplit(url).path} {status}"
        response = self.response(op, status)
        if response is None:
            return [f"{where}: status not documented"]
        media, content = media_of(content_type), response.get("content") or {}
        if media in content:
            return content[media]
        if not content:
            return {}
        if is_json(media):
            return [f"{where}: {media} not documented (only {', '.join(content)})"]
        return None

    def check_headers(
        self, method: str, url: str, status: int, headers: Mapping[str, str]
    ) -> list[str]:
        """Problems of an answer's headers: each of :data:`CHECKED_HEADERS` it carries must be
        declared on its response (a generated client reads only what is declared)."""
        op = self.operation(method, url)
        response = None if op is None else self.response(op, status)
        if response is None or method.upper() in ("HEAD", "OPTIONS"):
            return []
        declared = {name.lower() for name in response.get("headers", {})}
        where = f"{method.upper()} {urlsplit(url).path} {status}"
        return [
            f"{where}: header {name} not declared"
            for name in CHECKED_HEADERS
            if name in headers and name.lower() not in declared
        ]

    def check_body(
        self, method: str, url: str, status: int, content_type: str | None, body: bytes
    ) -> list[str]:
        """Problems of a whole answer."""
        found = self.media(method, url, status, content_type)
        where = f"{method.upper()} {urlsplit(url).path} {status}"
        if found is None or isinstance(found, list):
            return found or []
        if not found:
            return [f"{where}: a body where none is documented"] if body.strip() else []
        media = media_of(content_type)
        if media in (SSE, NDJSON):
            stream = StreamCheck(self, found, media, where)
            stream.feed(body)
            return stream.problems
        if not is_json(media):
            return []
        try:
            value = json.loads(body)
        except ValueError:
            return [f"{where}: the body is not JSON: {body[:80]!r}"]
        return self.errors(found.get("schema", {}), value, where)


class StreamCheck:
    """Checks a stream's messages as they arrive against the document's item schema: SSE, each
    message by the branch its ``event`` names (``data`` against that branch's content schema,
    and an entry's ``id`` is its version); NDJSON, each line against the item schema."""

    def __init__(self, checker: Checker, media_object: dict[str, Any], media: str, where: str):
        self.checker, self.media, self.where = checker, media, where
        item = media_object.get(ITEM_SCHEMA)
        self.problems: list[str] = [] if item else [f"{where}: {media} has no {ITEM_SCHEMA}"]
        self.item: dict[str, Any] = item or {}
        self.branches = {
            event: branch
            for branch in self.item.get("oneOf", [self.item])
            for event in branch.get("properties", {}).get("event", {}).get("enum", [])
        }
        self.pending = b""

    def feed(self, chunk: bytes) -> None:
        self.pending += chunk
        separator = b"\n\n" if self.media == SSE else b"\n"
        *whole, self.pending = self.pending.replace(b"\r\n", b"\n").split(separator)
        for part in whole:
            if self.media == SSE:
                self._message(part)
            elif part.strip():
                self._line(part)

    def _line(self, raw: bytes) -> None:
        """An NDJSON line, checked against the branch it claims: by its ``type`` (entries have
        none), so an error names the field at fault rather than every branch."""
        try:
            kind = json.loads(raw).get("type")
        except (ValueError, AttributeError):
            kind = None
        for branch in self.item.get("oneOf", [self.item]):
            named = branch.get("properties", {}).get("type", {}).get("enum")
            if (named is None and kind is None) or (named and kind in named):
                self._json(raw, branch)
                return
        self._json(raw, self.item)

    def _message(self, raw: bytes) -> None:
        fields: dict[str, list[str]] = {}
        for line in raw.decode().split("\n"):
            if line and not line.startswith(":"):
                name, _, value = line.partition(":")
                fields.setdefault(name, []).append(value.removeprefix(" "))
        if "data" not in fields:
            return  # a keep-alive or the retry field: no message
        message = {name: "\n".join(values) for name, values in fields.items()}
        branch = self.branches.get(message.get("event", "message"))
        if branch is None:
            self.problems.append(f"{self.where}: an SSE event the document lacks: {message}")
            return
        self.problems += self.checker.errors(branch, message, self.where + " message")
        content = branch["properties"]["data"].get("contentSchema", {})
        value = self._json(message["data"].encode(), content)
        entry = "id" in branch.get("required", []) and isinstance(value, dict)
        if entry and message.get("id") != str(value.get("version")):
            self.problems.append(f"{self.where}: id {message.get('id')} is not the version")

    def _json(self, data: bytes, schema: dict[str, Any]) -> Any:
        try:
            value = json.loads(data)
        except ValueError:
            self.problems.append(f"{self.where}: a message that is not JSON: {data[:80]!r}")
            return None
        self.problems += self.checker.errors(schema, value, self.where + " message")
        return value


class Collector:
    """Problems found in the answers received since the last :meth:`take` (any thread)."""

    def __init__(self) -> None:
        self._found: list[str] = []
        self._lock = threading.Lock()
        self.checker: Checker | None = None

    def get_checker(self) -> Checker:
        if self.checker is None:
            self.checker = Checker()
        return self.checker

    def add(self, problems: list[str]) -> None:
        if problems:
            with self._lock:
                self._found.extend(problems)

    def take(self) -> list[str]:
        with self._lock:
            found, self._found = self._found, []
        return found


COLLECTED = Collector()


def watch_chunks(
    chunks: Callable[..., Iterator[bytes]],
    stream: StreamCheck | None,
    whole: Callable[[bytes], None],
) -> Callable[..., Iterator[bytes]]:
    """``iter_content`` of a streamed answer, checking what passes through it: a stream's
    messages as they come, any other body once it was read to its end."""

    def iterate(*args: Any, **kwargs: Any) -> Iterator[bytes]:
        body = b""
        for chunk in chunks(*args, **kwargs):
            if isinstance(chunk, str):
                yield chunk
                continue
            if stream is not None:
                stream.feed(chunk)
                COLLECTED.add(stream.problems)
                stream.problems = []
            else:
                body += chunk
            yield chunk
        if stream is None:
            whole(body)

    return iterate


def spec_without(spec: dict[str, Any], schema: str, field: str) -> dict[str, Any]:
    """A copy of ``spec`` whose component ``schema`` no longer declares ``field``."""
    changed = copy.deepcopy(spec)
    target = changed["components"]["schemas"][schema]
    del target["properties"][field]
    if field in target.get("required", []):
        target["required"].remove(field)
    return changed
