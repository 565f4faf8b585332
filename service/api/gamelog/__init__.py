"""The log read live: ``GET /events`` (JSON with long-poll, SSE, NDJSON) and ``GET /history``."""
