"""HTTP plumbing shared by the views: JSON responses, ETags, tokens, Idempotency-Key."""

from __future__ import annotations

import hashlib
import re
from typing import Any

import orjson
from flask import Response, request

from .problems import ApiError

JSON_MIMETYPE = "application/json"

# RFC 8941 sf-string: printable ASCII between quotes, with only \" and \\ escaped.
_SF_STRING = re.compile(r'"((?:[\x20\x21\x23-\x5b\x5d-\x7e]|\\["\\])*)"')
# RFC 8941 sf-token, accepted bare for clients that do not quote.
_SF_TOKEN = re.compile(r"[A-Za-z*][!#$%&'*+\-.^_`|~:/0-9A-Za-z]*")
_ETAG = re.compile(r'\s*(W/)?"([\x21\x23-\x7e]*)"\s*')
MAX_IDEMPOTENCY_KEY = 255


def etag(version: int) -> str:
    return f'"{version}"'


def json_response(
    body: Any,
    status: int = 200,
    *,
    version: int | None = None,
    headers: dict[str, str] | None = None,
) -> Response:
    """orjson-encoded response (bytes pass through); a strong ETag from the game version."""
    data = body if isinstance(body, bytes) else orjson.dumps(body)
    resp = Response(data, status=status, mimetype=JSON_MIMETYPE)
    if version is not None:
        resp.headers["ETag"] = etag(version)
    for name, value in (headers or {}).items():
        resp.headers[name] = value
    return resp


def bearer_token() -> str | None:
    """The token of ``Authorization: Bearer <token>``; another scheme is a 401."""
    header = request.headers.get("Authorization")
    if header is None:
        return None
    scheme, _, token = header.strip().partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not token or len(token) > 512:
        raise ApiError(
            401,
            "invalid_token",
            "Send the token as 'Authorization: Bearer <token>'.",
            headers={"WWW-Authenticate": 'Bearer realm="mexican-train"'},
        )
    return token


def idempotency_key() -> str | None:
    """``Idempotency-Key`` as an RFC 8941 sf-string (``"abc"``) or a bare token; else 400."""
    raw = request.headers.get("Idempotency-Key")
    if raw is None:
        return None
    raw = raw.strip()
    m = _SF_STRING.fullmatch(raw)
    if m:
        key = m.group(1).replace('\\"', '"').replace("\\\\", "\\")
    elif _SF_TOKEN.fullmatch(raw):
        key = raw
    else:
        key = ""
    if not key or len(key) > MAX_IDEMPOTENCY_KEY:
        raise ApiError(
            400,
            "malformed_idempotency_key",
            'Idempotency-Key must be a quoted string such as "f3a9c0" (1 to 255 characters).',
        )
    return key


def request_idempotency_key() -> str | None:
    """The Idempotency-Key bound to this request (its path and body, JSON key order aside).

    A key names one request: the same key on another endpoint or with another body (a client
    reusing one key for every deal, or someone guessing another's key) is a new request, never
    a replay of a different answer."""
    key = idempotency_key()
    if key is None:
        return None
    data = request.get_data(cache=True)
    try:
        canonical = orjson.dumps(orjson.loads(data), option=orjson.OPT_SORT_KEYS)
    except orjson.JSONDecodeError:
        canonical = data  # empty or not JSON: the bytes themselves name the request
    digest = hashlib.sha256(request.path.encode() + b"\n" + canonical).hexdigest()
    return f"{key}\n{digest}"


def parse_etags(header: str) -> list[tuple[bool, str]] | None:
    """``If-Match``/``If-None-Match`` as (weak, opaque) pairs; ``None`` for ``*``."""
    if header.strip() == "*":
        return None
    tags: list[tuple[bool, str]] = []
    for part in header.split(","):
        m = _ETAG.fullmatch(part)
        if not m:
            raise ApiError(
                400, "malformed_precondition", 'Entity tags look like "12" (the game version).'
            )
        tags.append((m.group(1) is not None, m.group(2)))
    return tags


def if_match_ok(version: int) -> bool | None:
    """None when no If-Match was sent; else whether it matches (strong comparison)."""
    header = request.headers.get("If-Match")
    if header is None:
        return None
    tags = parse_etags(header)
    return tags is None or any(not weak and tag == str(version) for weak, tag in tags)


def if_none_match_hit(version: int) -> bool:
    """True when ``If-None-Match`` names this version (weak comparison, as RFC 9110 says)."""
    header = request.headers.get("If-None-Match")
    if header is None:
        return False
    tags = parse_etags(header)
    return tags is None or any(tag == str(version) for _, tag in tags)
