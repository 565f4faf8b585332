"""Print the OpenAPI document (``make spec`` writes it to ``openapi/openapi.json``).

Building the app needs no Redis connection (redis-py connects lazily), so this runs anywhere.
"""

from __future__ import annotations

import sys

from service.frameworks.smorest import api_of

from .app import create_app, spec_json


def main() -> None:
    app = create_app({"REDIS_URL": "redis://127.0.0.1:1/0"})
    sys.stdout.buffer.write(spec_json(api_of(app)))
    sys.stdout.buffer.write(b"\n")


if __name__ == "__main__":
    main()
