"""A seek's answer: the same fields whether it made the table or sat at one, and a retry with
its Idempotency-Key answered as the first was, headers included (docs/api.md §4)."""

from __future__ import annotations

import uuid

import pytest
from flask.testing import FlaskClient

from service.api.lobby import seek

SEEK = "/api/v1/lobby/seek"
REPLAYED = ("ETag", "Location")


def test_every_seek_answer_carries_the_version_of_its_etag(client: FlaskClient) -> None:
    made = client.post(SEEK, json={"name": "ann", "players": 3})
    sat = client.post(SEEK, json={"name": "bo", "players": 3})
    assert made.status_code == sat.status_code == 201, (made.json, sat.json)
    assert made.json is not None and sat.json is not None
    assert "table_token" in made.json and "table_token" not in sat.json
    for answer in (made, sat):
        assert answer.json is not None
        assert answer.headers["ETag"] == f'"{answer.json["version"]}"', answer.json


def test_a_retried_seek_gets_the_first_answers_headers(client: FlaskClient) -> None:
    for name in ("ann", "bo"):  # the seek that makes the table, then one that sits at it
        key = {"Idempotency-Key": str(uuid.uuid4())}
        body = {"name": name, "players": 3}
        first = client.post(SEEK, json=body, headers=key)
        again = client.post(SEEK, json=body, headers=key)
        assert first.status_code == again.status_code == 201, (first.json, again.json)
        assert again.headers["Idempotent-Replayed"] == "true"
        assert again.get_data() == first.get_data()
        for header in REPLAYED:
            assert again.headers.get(header) == first.headers.get(header), (name, header)
        assert again.headers["ETag"] is not None


def test_a_seek_whose_every_seat_went_elsewhere_answers_seat_taken(
    client: FlaskClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every seat its claims gave was taken meanwhile (a bot fill, another seeker): the seek
    gives up with the service's own code for that, never the web framework's `conflict`."""
    monkeypatch.setattr(seek, "_sit_or_forget", lambda *_: None)
    r = client.post(SEEK, json={"name": "ann", "players": 3})
    assert r.status_code == 409, r.json
    assert r.json is not None and r.json["code"] == "seat_taken", r.json
