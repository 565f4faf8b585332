"""The app's GameStore (one per process, built by create_app; holds no game state)."""

from __future__ import annotations

from flask import current_app

from service.store import GameStore

STORE_EXTENSION = "mexican_train_store"


def store() -> GameStore:
    gs: GameStore = current_app.extensions[STORE_EXTENSION]
    return gs
