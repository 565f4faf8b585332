"""Typed Python client for the Mexican Train HTTP API (safe retries, typed errors)."""

from service.client.client import JSON, Client, RetryPolicy, new_idempotency_key
from service.client.errors import (
    ApiError,
    BadRequest,
    ClientError,
    Conflict,
    Forbidden,
    NotFound,
    PayloadTooLarge,
    RateLimited,
    ServerError,
    StaleVersion,
    TransportError,
    Unauthorized,
    Unprocessable,
)
from service.client.stream import Media

__all__ = [
    "JSON",
    "ApiError",
    "BadRequest",
    "Client",
    "ClientError",
    "Conflict",
    "Forbidden",
    "Media",
    "NotFound",
    "PayloadTooLarge",
    "RateLimited",
    "RetryPolicy",
    "ServerError",
    "StaleVersion",
    "TransportError",
    "Unauthorized",
    "Unprocessable",
    "new_idempotency_key",
]
