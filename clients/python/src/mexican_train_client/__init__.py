"""Typed Python client for the Mexican Train HTTP API (safe retries, typed errors, streams).

Its own distribution (``mexican-train-client``, in ``clients/python`` of the service's
repository), depending on ``requests`` alone: a bot needs nothing of the service to use it."""

from mexican_train_client.client import JSON, Client, RetryPolicy, new_idempotency_key
from mexican_train_client.errors import (
    ApiError,
    BadRequest,
    ClientError,
    Conflict,
    Forbidden,
    LogRewound,
    NotFound,
    PayloadTooLarge,
    RateLimited,
    ServerError,
    StaleVersion,
    TransportError,
    Unauthorized,
    Unprocessable,
)
from mexican_train_client.stream import Media

__all__ = [
    "JSON",
    "ApiError",
    "BadRequest",
    "Client",
    "ClientError",
    "Conflict",
    "Forbidden",
    "LogRewound",
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
