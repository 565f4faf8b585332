"""Mexican Train dominoes game service: engine (rules), Redis store, HTTP API, bots."""
