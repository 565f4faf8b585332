"""Sealing a kept response that holds secrets (the tokens of a created game).

``POST /games`` answers with every token in clear, and tokens are never stored in clear. To
replay that answer for an ``Idempotency-Key`` anyway, it is kept encrypted (AES-256-GCM) under a
key derived from the Idempotency-Key itself, which only the client knows. The record is found
by a different digest of the same key, so the lookup name gives nothing away. A guessable
Idempotency-Key would make the tokens guessable too: clients should send a random one (UUID).
"""

from __future__ import annotations

import hashlib
import os

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

NONCE_BYTES = 12


def _key(idempotency_key: str) -> bytes:
    return hashlib.sha256(b"mexican-train seal\n" + idempotency_key.encode()).digest()


def seal(idempotency_key: str, data: bytes) -> bytes:
    nonce = os.urandom(NONCE_BYTES)
    return nonce + AESGCM(_key(idempotency_key)).encrypt(nonce, data, None)


def unseal(idempotency_key: str, blob: bytes) -> bytes | None:
    """The data, or None when the blob was not sealed with this key (or was altered)."""
    try:
        return AESGCM(_key(idempotency_key)).decrypt(blob[:NONCE_BYTES], blob[NONCE_BYTES:], None)
    except (InvalidTag, ValueError):
        return None
