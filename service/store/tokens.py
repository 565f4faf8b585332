"""Secret tokens: random, stored only as SHA-256 digests, compared in constant time."""

from __future__ import annotations

import hashlib
import hmac
import secrets


def new_token() -> str:
    """A fresh bearer token (256 bits of randomness)."""
    return secrets.token_urlsafe(32)


def new_game_id() -> str:
    """A game id: 72 random bits, URL-safe, short enough to type in a curl command."""
    return secrets.token_urlsafe(9)


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
