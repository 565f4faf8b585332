"""Versions as entity tags: the ``ETag`` a game response carries, ``If-Match`` (act only on the
version the client saw) and ``If-None-Match`` (304 when nothing changed). The one home of ETag
handling: formatting, parsing, the precondition checks, 304, the 412 problem and their docs.

A game's ETag is its version, quoted and strong: ``"7"``. Every representation of one version
(public view, a seat's view, score) shares that tag, which is why responses vary on
``Authorization``.
"""

from __future__ import annotations

import re
from typing import Any

from flask import Response, request

from .codes import Problem
from .problems import ApiError

# Policy (RFC 9110 section 13.1): If-Match compares strongly (a weak tag never matches, since
# acting on "roughly this version" is not safe); If-None-Match compares weakly (a cache may hold
# any representation of the version). ``*`` matches any existing game in both.
IF_MATCH_WEAK_MATCHES = False
IF_NONE_MATCH_WEAK_MATCHES = True
# Only reads answer 304; a mutating request ignores If-None-Match.
METHODS_CHECKING_NOT_MODIFIED = frozenset({"GET", "HEAD"})
# If-Match is optional: without it a request acts on whatever version it finds (a lost race is
# still caught by the store's compare-and-set, as a 409).
IF_MATCH_REQUIRED = False

ETAG = "ETag"
IF_MATCH = "If-Match"
IF_NONE_MATCH = "If-None-Match"

# One entity tag of a list: optional W/ prefix, then a quoted opaque string.
_ETAG_RE = re.compile(r'\s*(W/)?"([\x21\x23-\x7e]*)"\s*')
# The opaque part of a tag this service makes: a version as ``format_etag`` writes it. Tags
# compare as strings, so ``"07"`` names no version; and a number past 19 digits is none either
# (``int`` of thousands of digits raises).
_VERSION_TAG_RE = re.compile(r"0|[1-9][0-9]{0,18}")

# OpenAPI documentation of the headers above.
ETAG_HEADER: dict[str, Any] = {
    ETAG: {"description": 'The game version, e.g. `"7"`', "schema": {"type": "string"}}
}
PARAMETERS: dict[str, dict[str, Any]] = {
    "IfMatch": {
        "name": IF_MATCH,
        "in": "header",
        "required": IF_MATCH_REQUIRED,
        "description": 'Act only if the game is still at this version, e.g. `"7"`; else 412.',
        "schema": {"type": "string"},
    },
    "IfNoneMatch": {
        "name": IF_NONE_MATCH,
        "in": "header",
        "required": False,
        "description": "Answer 304 Not Modified if the game is still at this version.",
        "schema": {"type": "string"},
    },
}


def format_etag(version: int) -> str:
    return f'"{version}"'


def parse_etags(header: str) -> list[tuple[bool, str]] | None:
    """``If-Match``/``If-None-Match`` as (weak, opaque) pairs; ``None`` for ``*``; 400 when
    malformed."""
    if header.strip() == "*":
        return None
    tags: list[tuple[bool, str]] = []
    for part in header.split(","):
        m = _ETAG_RE.fullmatch(part)
        if not m:
            raise ApiError(
                Problem.MALFORMED_PRECONDITION, 'Entity tags look like "12" (the game version).'
            )
        tags.append((m.group(1) is not None, m.group(2)))
    return tags


def _matches(header: str, version: int, weak_matches: bool) -> bool:
    tags = parse_etags(header)
    tag = str(version)
    return tags is None or any(
        opaque == tag and (weak_matches or not weak) for weak, opaque in tags
    )


def if_match_ok(version: int) -> bool | None:
    """None when no If-Match was sent; else whether it names ``version``."""
    header = request.headers.get(IF_MATCH)
    if header is None:
        return None
    return _matches(header, version, IF_MATCH_WEAK_MATCHES)


def if_match_version() -> int | None:
    """The one version ``If-Match`` names as a single strong tag, else None (no header, ``*``,
    several tags, a weak or malformed one: for those the full check decides)."""
    header = request.headers.get(IF_MATCH)
    if header is None:
        return None
    try:
        tags = parse_etags(header)
    except ApiError:
        return None
    if tags is None or len(tags) != 1 or tags[0][0] or not _VERSION_TAG_RE.fullmatch(tags[0][1]):
        return None
    return int(tags[0][1])


def check_if_match(version: int) -> bool:
    """Refuse (412) a request whose If-Match names another version; True when one was sent
    (a lost race then also answers 412, since the client asked for that version)."""
    match = if_match_ok(version)
    if match is False:
        raise stale(version)
    return match is True


def if_none_match_hit(version: int) -> bool:
    """True when ``If-None-Match`` names this version."""
    header = request.headers.get(IF_NONE_MATCH)
    if header is None:
        return False
    return _matches(header, version, IF_NONE_MATCH_WEAK_MATCHES)


def not_modified(version: int) -> Response | None:
    """The 304 answer when the client already holds ``version``, else None."""
    if request.method in METHODS_CHECKING_NOT_MODIFIED and if_none_match_hit(version):
        return Response(status=304, headers={ETAG: format_etag(version)})
    return None


def stale(version: int) -> ApiError:
    """The 412 problem: the game is no longer at the version the client named."""
    return ApiError(
        Problem.STALE_VERSION,
        f"The game is at version {version}; reload it and try again.",
        headers={ETAG: format_etag(version)},
        extra={"version": version},
    )


def set_etag(response: Response, version: int) -> None:
    response.headers[ETAG] = format_etag(version)
