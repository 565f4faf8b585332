"""Example bots written against the HTTP API."""
