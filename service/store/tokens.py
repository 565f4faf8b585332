"""Secret tokens: random, stored only as SHA-256 digests, compared in constant time."""

from __future__ import annotations

import hashlib
import hmac
import secrets


def new_token() -> str:
    """A fresh bearer token (256 bits of randomness)."""
    return secrets.token_urlsafe(32)


#: What an id may not start with: a command line reads an argument led by it as an option.
OPTION_LEAD = "-"


def new_id() -> str:
    """A public id (a game's, a player's): 72 random bits, URL-safe, short enough to type in a
    curl command, and never led by ``OPTION_LEAD`` (drawn again: uniform over the rest)."""
    while True:
        made = secrets.token_urlsafe(9)
        if not made.startswith(OPTION_LEAD):
            return made


def new_game_id() -> str:
    return new_id()


def hash_token(token: str) -> bytes:
    """The stored form of a token. A fast hash suffices: tokens are random, not passwords."""
    return hashlib.sha256(token.encode()).digest()


def token_matches(token_hash: bytes, stored: bytes) -> bool:
    return hmac.compare_digest(token_hash, stored)


def new_invite() -> str:
    """An open seat's invite code: 144 random bits, short enough for a link."""
    return secrets.token_urlsafe(18)


def invite_digest(invite: str) -> str:
    """The stored form of an invite (hex, kept in the table's JSON)."""
    return hashlib.sha256(b"invite\n" + invite.encode()).hexdigest()
